//! `gpucast bench`: how fast the pipeline's stages run on real measured data, and how
//! much memory they take. A benchmark command rather than a timed test: timings depend
//! on the machine, so they are reported (minimum of several repeats), never asserted.
//!
//! The data is a deterministic subset of a runs table: the GPUs with the most rows and,
//! among the work (kernel, config) measured on them, a fixed-hash sample large enough
//! for the asked row count — the same work is kept on every chosen GPU, so LOGO has
//! source -> target pairs exactly as on the whole table. A subset is timed as a table
//! of its own, its rows side by side in the whole table's order, as loading a file of
//! just those rows lays them out ([`Layout`]).

use crate::catalog::Catalog;
use crate::data::{Run, RunsTable};
use crate::error::{Error, Result};
use crate::evaluation::{evaluate, Protocol, Selection};
use crate::models::{Context, Evidence, Fit, ModelSpec};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

/// A stage `gpucast bench` times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Loading and validating the whole --data table, as every command does first (rows
    /// per second; each repeat reads the files again)
    Load,
    /// Analytical predictions of every row's work on another GPU (rows per second)
    AnalyticalPredict,
    /// Leave-one-GPU-out evaluation of the analytical model (fit + predict per fold)
    LogoAnalytical,
    /// Leave-one-GPU-out evaluation of the hybrid (residual fitted per fold)
    LogoHybrid,
}

impl Stage {
    pub fn name(self) -> &'static str {
        match self {
            Stage::Load => "load",
            Stage::AnalyticalPredict => "analytical-predict",
            Stage::LogoAnalytical => "logo-analytical",
            Stage::LogoHybrid => "logo-hybrid",
        }
    }
}

/// One stage's timing.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Timing {
    pub stage: &'static str,
    pub rows: usize,
    pub gpus: usize,
    /// Threads the stage ran on: predictions run on one; LOGO fits and scores its
    /// folds (one per GPU) on up to `--threads`.
    pub threads: usize,
    /// Wall time of each repeat, seconds.
    pub seconds: Vec<f64>,
    /// The fastest repeat (what is compared across versions).
    pub min_seconds: f64,
    /// Rows predicted (loaded and validated, for `load`) per second in the fastest
    /// repeat.
    pub rows_per_second: f64,
    /// Peak resident memory of the process so far, bytes (None off Linux).
    pub peak_rss_bytes: Option<u64>,
    /// Where the subset's rows lay (None for [`Stage::Load`], which reads whole files).
    pub layout: Option<Layout>,
}

/// Is a `rows`-row subset on `gpus` GPUs one a stage can time? At least one row, and
/// two GPUs (every stage predicts a GPU from another): an empty benchmark would print
/// a row of zeros.
pub fn check_size(rows: usize, gpus: usize) -> Result<()> {
    if rows == 0 {
        return Err(Error::usage("--rows must be at least 1"));
    }
    if gpus < 2 {
        return Err(Error::usage(format!(
            "--gpu-count {gpus}: every stage predicts a GPU from another, so at least 2"
        )));
    }
    Ok(())
}

/// Where a subset's rows lie in memory while a stage runs on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// In a table of their own, in the whole table's order: what loading a file of just
    /// those rows gives, and what `predict` and `evaluate` read
    Table,
    /// Where they lie in the whole --data table, scattered among the rows left out:
    /// each row a cache miss away from the last (the layout of measurements made
    /// before this option; 30 % fewer analytical predictions per second at 100k of
    /// the GEMM corpus's 980k rows)
    InPlace,
}

impl Layout {
    pub fn name(self) -> &'static str {
        match self {
            Layout::Table => "table",
            Layout::InPlace => "in-place",
        }
    }
}

/// The `rows`-row subset of `runs` on its `gpus` GPUs with the most rows (see the
/// module doc), borrowed in the table's order. Excluded rows are left out first.
pub fn subset(table: &[Run], rows: usize, gpus: usize) -> Result<Vec<&Run>> {
    Ok(subset_rows(table, rows, gpus)?
        .into_iter()
        .map(|i| &table[i])
        .collect())
}

/// [`subset`]'s rows by position in `table`, ascending.
pub fn subset_rows(table: &[Run], rows: usize, gpus: usize) -> Result<Vec<usize>> {
    check_size(rows, gpus)?;
    let runs: Vec<(usize, &Run)> = table
        .iter()
        .enumerate()
        .filter(|(_, r)| !crate::data::validate::is_excluded(r))
        .collect();
    let mut per_gpu: HashMap<&str, usize> = HashMap::default();
    for (_, r) in &runs {
        *per_gpu.entry(r.gpu.as_str()).or_default() += 1;
    }
    let mut ranked: Vec<(&str, usize)> = per_gpu.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    if ranked.len() < gpus {
        return Err(Error::usage(format!(
            "the data has {} GPUs, --gpu-count asks for {gpus}",
            ranked.len()
        )));
    }
    let chosen: HashSet<&str> = ranked.iter().take(gpus).map(|(g, _)| *g).collect();
    // Work keys in a fixed hash order, each with its rows on the chosen GPUs.
    let mut by_work: BTreeMap<(u64, &str, &str), Vec<usize>> = BTreeMap::new();
    for (i, r) in runs.iter().filter(|(_, r)| chosen.contains(r.gpu.as_str())) {
        by_work
            .entry((
                crate::data::work_hash(r),
                r.kernel.as_str(),
                r.config.as_str(),
            ))
            .or_default()
            .push(*i);
    }
    let mut picked = Vec::with_capacity(rows);
    for group in by_work.values() {
        if picked.len() >= rows {
            break;
        }
        picked.extend(group.iter().copied());
    }
    // The table's order, as the stages see a whole table (the work-grouped order
    // would put each work's rows side by side in memory, flattering the lookups).
    picked.sort_unstable();
    if picked.len() < rows {
        return Err(Error::usage(format!(
            "the data has {} usable rows on its {gpus} largest GPUs, --rows asks for {rows}",
            picked.len()
        )));
    }
    Ok(picked)
}

/// Keep only the rows of `table` at the ascending positions `picked`, in order and in
/// place (see [`lay_out`]).
pub fn keep_rows(table: &mut Vec<Run>, picked: &[usize]) {
    let mut keep = vec![false; table.len()];
    for &i in picked {
        keep[i] = true;
    }
    let mut at = 0;
    table.retain(|_| {
        at += 1;
        keep[at - 1]
    });
    table.shrink_to_fit();
}

/// A subset's rows laid out for timing ([`lay_out`]).
pub enum LaidOut<'t> {
    /// Where they lie in the whole table.
    InPlace(Vec<&'t Run>),
    /// Copied into a table of their own.
    Copied(Vec<Run>),
    /// The whole table, cut down to them.
    Cut(&'t [Run]),
}

impl LaidOut<'_> {
    /// The rows, in the whole table's order.
    pub fn runs(&self) -> Vec<&Run> {
        match self {
            LaidOut::InPlace(runs) => runs.clone(),
            LaidOut::Copied(runs) => runs.iter().collect(),
            LaidOut::Cut(runs) => runs.iter().collect(),
        }
    }
}

/// The rows of `table` at the ascending positions `picked` ([`subset_rows`]) laid out
/// as `layout` says. A table of its own is a copy, except for the `last` subset timed:
/// the whole table is cut down to it in place, so no second copy of its rows is in the
/// peak memory (a copy of 1M rows is ~480 MB; `bench`'s load stage reads the files
/// again).
pub fn lay_out<'t>(
    table: &'t mut Vec<Run>,
    picked: &[usize],
    layout: Layout,
    last: bool,
) -> LaidOut<'t> {
    match layout {
        Layout::InPlace => LaidOut::InPlace(picked.iter().map(|&i| &table[i]).collect()),
        Layout::Table if last => {
            keep_rows(table, picked);
            LaidOut::Cut(table)
        }
        Layout::Table => LaidOut::Copied(picked.iter().map(|&i| table[i].clone()).collect()),
    }
}

/// Peak resident set size of this process (`VmHWM`), bytes; None where /proc is not.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Load and validate the runs tables `paths` once: the table and the seconds it took.
pub fn time_load(paths: &[PathBuf], catalog: &Catalog) -> Result<(RunsTable, f64)> {
    let t0 = Instant::now();
    let (table, _) = crate::data::load_validated(paths, catalog)?;
    Ok((table, t0.elapsed().as_secs_f64()))
}

/// The [`Stage::Load`] timing of a table of `rows` rows on `gpus` GPUs, loaded and
/// validated in each of `seconds` ([`time_load`]).
pub fn load_timing(rows: usize, gpus: usize, seconds: Vec<f64>) -> Timing {
    Timing::of(Stage::Load, rows, gpus, 1, seconds, rows)
}

impl Timing {
    /// `stage`'s timing on `rows` rows of `gpus` GPUs over `threads`, from each
    /// repeat's `seconds` and the rows each repeat processed (`done`), with the
    /// process's peak memory so far.
    fn of(
        stage: Stage,
        rows: usize,
        gpus: usize,
        threads: usize,
        seconds: Vec<f64>,
        done: usize,
    ) -> Timing {
        let min_seconds = seconds.iter().copied().fold(f64::INFINITY, f64::min);
        Timing {
            stage: stage.name(),
            rows,
            gpus,
            threads,
            seconds,
            min_seconds,
            rows_per_second: done as f64 / min_seconds.max(1e-9),
            peak_rss_bytes: peak_rss_bytes(),
            layout: None,
        }
    }
}

/// Time `stage` on `runs`, laid out as `layout` says, `repeats` times ([`Stage::Load`]
/// times whole files: see [`time_load`]).
pub fn time_stage(
    stage: Stage,
    runs: &[&Run],
    layout: Layout,
    repeats: usize,
    ctx: &Context,
) -> Result<Timing> {
    if stage == Stage::Load {
        return Err(Error::usage(
            "the load stage times whole files (bench::time_load), not a subset of runs",
        ));
    }
    let gpus = runs
        .iter()
        .map(|r| r.gpu.as_str())
        .collect::<HashSet<_>>()
        .len();
    let queries = match stage {
        Stage::AnalyticalPredict => next_gpu_queries(runs),
        Stage::Load | Stage::LogoAnalytical | Stage::LogoHybrid => Vec::new(),
    };
    let mut seconds = Vec::new();
    let mut predicted = 0;
    for _ in 0..repeats.max(1) {
        let t0 = Instant::now();
        predicted = match stage {
            Stage::Load => 0, // (refused above)
            Stage::AnalyticalPredict => analytical_predict(runs, &queries, ctx)?,
            Stage::LogoAnalytical | Stage::LogoHybrid => {
                let name = if stage == Stage::LogoHybrid {
                    "hybrid"
                } else {
                    "analytical"
                };
                let spec = ModelSpec::parse(name, 42)?;
                let e = evaluate(
                    runs.iter().copied(),
                    &Protocol::Logo,
                    &Selection::default(),
                    &[&spec as &dyn Fit],
                    ctx,
                    &|| {},
                )?;
                e.records.len()
            }
        };
        seconds.push(t0.elapsed().as_secs_f64());
    }
    let threads = match stage {
        Stage::Load | Stage::AnalyticalPredict => 1,
        Stage::LogoAnalytical | Stage::LogoHybrid => crate::parallel::threads().min(gpus),
    };
    Ok(Timing {
        layout: Some(layout),
        ..Timing::of(stage, runs.len(), gpus, threads, seconds, predicted)
    })
}

/// Each row with the GPU its work is predicted on: the next GPU in name order. The
/// harness's part, made before the clock starts: looking each row's GPU up in a map
/// inside the timed loop, which no prediction pays, lowered the measured rate by
/// 7-11 % at 100k rows x 8 GPUs and 17 % at 2 GPUs (alternating runs of both builds).
fn next_gpu_queries<'r>(runs: &[&'r Run]) -> Vec<(&'r Run, &'r str)> {
    let mut gpus: Vec<&str> = runs
        .iter()
        .map(|r| r.gpu.as_str())
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    gpus.sort_unstable();
    let next: HashMap<&str, &str> = gpus
        .iter()
        .enumerate()
        .map(|(i, g)| (*g, gpus[(i + 1) % gpus.len()]))
        .collect();
    runs.iter().map(|r| (*r, next[r.gpu.as_str()])).collect()
}

/// Index `runs` as evidence and predict each query's work on its GPU (`queries`, from
/// [`next_gpu_queries`]) with the analytical model fitted on nothing (no interval
/// calibration: the projection alone); returns the number of predictions made.
fn analytical_predict(runs: &[&Run], queries: &[(&Run, &str)], ctx: &Context) -> Result<usize> {
    let model = crate::models::analytical::Analytical.fit(&[], ctx)?;
    let evidence = Evidence::new(runs.iter().copied());
    let mut n = 0;
    let mut q = crate::data::Query::default();
    for &(r, target) in queries {
        if model
            .predict_work(r, target, &mut q, &evidence, ctx)?
            .is_some()
        {
            n += 1;
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SYNTHETIC runs: `works` configurations of one kernel on each named GPU.
    fn runs(gpus: &[&str], works: usize) -> Vec<Run> {
        gpus.iter()
            .flat_map(|g| {
                (0..works).map(move |i| Run {
                    gpu: (*g).into(),
                    kernel: "k".into(),
                    config: format!("n={i}").into(),
                    time_ms: 1.0,
                    ..Run::default()
                })
            })
            .collect()
    }

    /// Every row's work is predicted once on the next GPU, each repeat is timed, and
    /// the rate is predictions over the fastest repeat.
    #[test]
    fn analytical_predict_predicts_every_row_on_the_next_gpu() {
        let mut all = runs(&["NVIDIA TITAN V", "NVIDIA GeForce RTX 2080 Ti"], 50);
        for (i, r) in all.iter_mut().enumerate() {
            r.flops = 1e6 * (1 + i % 50) as f64;
            r.dram_bytes = 4e6 * (1 + i % 50) as f64;
        }
        let refs: Vec<&Run> = all.iter().collect();
        let queries = next_gpu_queries(&refs);
        assert!(queries.iter().all(|(r, target)| r.gpu != *target));
        let catalog = crate::catalog::Catalog::builtin();
        let ctx = Context::new(&catalog, &crate::features::Calibration::Spec, None);
        let t = time_stage(Stage::AnalyticalPredict, &refs, Layout::Table, 2, &ctx).unwrap();
        assert_eq!((t.rows, t.gpus, t.threads, t.seconds.len()), (100, 2, 1, 2));
        assert_eq!((t.rows_per_second * t.min_seconds).round(), 100.0);
        // loading is timed on whole files, never on a subset of runs
        let err = time_stage(Stage::Load, &refs, Layout::Table, 1, &ctx).unwrap_err();
        assert!(err.to_string().contains("times whole files"), "{err}");
    }

    /// A subset is laid out as asked, its rows in the whole table's order each way: in
    /// place, copied, or (the last one timed) the whole table cut down to them.
    #[test]
    fn a_subset_is_laid_out_as_asked() {
        let mut all = runs(&["a", "b"], 5);
        let picked = [1, 3, 6, 9];
        let want: Vec<Run> = picked.iter().map(|&i| all[i].clone()).collect();
        let whole = all.as_ptr_range();
        let in_table = |r: &Run| whole.contains(&(r as *const Run));
        {
            let laid_out = lay_out(&mut all, &picked, Layout::InPlace, true);
            let runs = laid_out.runs();
            assert!(runs.iter().all(|r| in_table(r)));
            assert!(runs.iter().copied().eq(want.iter()));
        }
        {
            let laid_out = lay_out(&mut all, &picked, Layout::Table, false);
            let runs = laid_out.runs();
            assert!(runs.iter().all(|r| !in_table(r)));
            assert!(runs.iter().copied().eq(want.iter()));
        }
        assert_eq!(all.len(), 10, "a copy leaves the whole table");
        {
            let laid_out = lay_out(&mut all, &picked, Layout::Table, true);
            assert!(laid_out.runs().iter().copied().eq(want.iter()));
        }
        assert_eq!(all, want, "the last subset cuts the table down to its rows");
        // positions of the subset, ascending, as subset borrows them
        let all = runs(&["a", "b", "c"], 100);
        let at = subset_rows(&all, 60, 2).unwrap();
        assert!(at.windows(2).all(|w| w[0] < w[1]));
        let borrowed = subset(&all, 60, 2).unwrap();
        assert!(at
            .iter()
            .zip(&borrowed)
            .all(|(&i, r)| std::ptr::eq(&all[i], *r)));
    }

    #[test]
    fn subset_keeps_whole_work_groups_on_the_largest_gpus() {
        let mut all = runs(&["a", "b", "c"], 100);
        all.truncate(250); // "c" has 50 rows: the two largest are a and b
        let s = subset(&all, 60, 2).unwrap();
        assert!(s.iter().all(|r| r.gpu != "c"));
        // every chosen work is on both GPUs: pairs survive
        let count = |g: &str| s.iter().filter(|r| r.gpu == g).count();
        assert_eq!(count("a"), count("b"));
        assert_eq!(s.len(), 60);
        // deterministic
        let again = subset(&all, 60, 2).unwrap();
        assert!(s
            .iter()
            .zip(&again)
            .all(|(x, y)| x.config == y.config && x.gpu == y.gpu));
        assert!(subset(&all, 60, 4)
            .unwrap_err()
            .to_string()
            .contains("3 GPUs"));
        assert!(subset(&all, 1000, 2)
            .unwrap_err()
            .to_string()
            .contains("200 usable rows"));
        // an empty or single-GPU benchmark is a usage error, not a row of zeros
        assert!(subset(&all, 0, 2)
            .unwrap_err()
            .to_string()
            .contains("--rows must be at least 1"));
        assert!(subset(&all, 60, 1)
            .unwrap_err()
            .to_string()
            .contains("at least 2"));
    }
}
