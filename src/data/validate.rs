//! Validation: hard errors (one line naming file, line, column; the load fails) and
//! verdicts on rows that are kept: [`Run::exclusion`] (left out of fitting and
//! scoring, see [`is_excluded`]) and [`Run::warnings`]. Validation sets them once;
//! the `flags` column is their serialized form.
//!
//! Errors beyond a cell's own value: a `precision` with no peak; a file whose times
//! are far from the roofline by a unit's factor (see `check_time_unit`); a launch
//! its GPU cannot make; a duplicate (GPU, kernel, config, source).
//!
//! Exclusions (physically impossible measurements, or not of the whole GPU), each
//! rule's count in [`ValidationReport::excluded_by_rule`]:
//! - SM partition: the row ran on fewer SMs than the GPU has (`sm_count`, a CUDA
//!   green context); such rows are a partition-scaling table, not the GPU's own, and
//!   are neither duplicates of the whole-GPU row nor checked against its roofs;
//! - above peak bandwidth ([`peak`]): the bytes of the working set that do not fit in
//!   the GPU's caches (L2, and an AMD Infinity Cache) need more than 1.05 x the peak
//!   DRAM bandwidth in the row's time (a repeated run finds the rest cached);
//! - above peak FLOP/s ([`peak`]): above the peak for the run's precision at the
//!   highest clock a board boosts to ([`peak::MAX_BOOST_OVER_RATED`]), times 1.05,
//!   unless the kernel is a convolution credited with more FLOPs than it executes
//!   (within its filter's taps: a flag, below);
//! - flat time (`flat`): within one (GPU, source, kernel), rows whose work differs
//!   by >= 16x took nearly the same time (the larger grew by less than (work
//!   ratio)^0.25, 2x for 16x the work), and most rows that far apart in work
//!   disagree with this one the same way, and so do most rows >= 4x apart (so one
//!   mistyped row is flagged alone, not the good rows around it). Work is the time
//!   the row's FLOPs and bytes need at the GPU's roofs (see `roof_seconds`). Two
//!   things make a flat time honest and are not counted: a row on the launch floor
//!   (below 10 us, launch-bound on its harness's floor as the models define it, up to
//!   4x a floor of up to 50 us, or within 2x of its kernel's fastest run up to 20 us:
//!   see `flat::floor_bound`) is in no flat pair, and only a throughput-bound row can be the larger of one (its grid
//!   spans more than one wave of the GPU, or, geometry unknown, it reaches a quarter
//!   of a roof: a partly filled GPU runs more blocks in parallel, not longer). E.g.
//!   the reference study's TITAN X rows: conv2d flat at 67 us over 64x the work, 1 to
//!   85 waves, where the same harness timed a kernel in 1.4 us.
//!
//! Warnings (rows kept), each one's count in [`ValidationReport::flagged_by_rule`]:
//! algorithmic FLOPs (a Winograd or FFT convolution above the FLOP/s bound by its
//! direct FLOPs), flat time over >= 4x (caches and partial waves can do it), below
//! launch floor (under 1 us, faster than any back-to-back launch measured on NVIDIA
//! GPUs), single GPU (the (kernel, config) was measured on one GPU only: no
//! source->target pair).
//!
//! Cost: O(n log n) (a sort, then one sweep per (GPU, kernel) with a Fenwick tree).

mod flat;
pub mod peak;
mod rows;

pub use peak::convolution_taps;

use super::{Exclusion, Run, RunsTable, Warning};
use crate::catalog::{Catalog, Gpu, PrecisionClass};
use crate::error::{Error, GpuHint, Position, Result};
use gpucast_runs::VALIDATION_FLAGS;
pub use rows::LAUNCH_FLOOR_MS;
use rows::{roof_seconds, RowIds, Verdict, PEAK_SLACK};
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;

/// The exclusion rule: a row is left out of fitting and scoring when validation
/// found its measurement physically implausible ([`Run::exclusion`]).
pub fn is_excluded(run: &Run) -> bool {
    run.exclusion.is_some()
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct GpuSummary {
    pub gpu: String,
    pub rows: usize,
    pub kernels: usize,
    pub configs: usize,
    pub flagged: usize,
    pub excluded: usize,
    /// reason name (flag without its value) -> rows
    pub reasons: BTreeMap<String, usize>,
}

/// One row validation excluded or warned about (for a `--list` output).
#[derive(Debug, Clone, serde::Serialize)]
pub struct FlaggedRow {
    /// Index into the table's runs.
    pub index: usize,
    /// `FILE:LINE` (or `FILE: row N` for Parquet).
    pub place: String,
    pub gpu: String,
    pub kernel: String,
    pub config: String,
    pub excluded: bool,
    /// The exclusion first, then the warnings, each one printable line.
    pub reasons: Vec<String>,
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ValidationReport {
    pub files: Vec<String>,
    pub rows: usize,
    pub flagged: usize,
    pub excluded: usize,
    pub skipped_error_rows: usize,
    /// [`super::RunsTable::not_imported`]: entries of the files not read as runs, by
    /// reason.
    pub not_imported: BTreeMap<String, usize>,
    pub per_gpu: Vec<GpuSummary>,
    /// Excluded rows by the rule that excluded each ([`Exclusion::name`]).
    pub excluded_by_rule: RuleCounts,
    /// Kept rows with a flag, by flag ([`Warning::name`]; a row with two flags counts
    /// under each).
    pub flagged_by_rule: RuleCounts,
    /// Every excluded or warned row with its reasons (not in JSON: it can be as
    /// long as the table).
    #[serde(skip)]
    pub flagged_rows: Vec<FlaggedRow>,
}

/// Rows per validation rule ([`Exclusion::name`] or [`Warning::name`]), in name
/// order; printed as "3 (flat_time 2, sm_partition 1)", or "0".
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(transparent)]
pub struct RuleCounts(pub BTreeMap<&'static str, usize>);

impl RuleCounts {
    /// The excluded rows of `runs`, by the rule that excluded each.
    pub fn excluded<'r>(runs: impl IntoIterator<Item = &'r Run>) -> RuleCounts {
        let mut c = RuleCounts::default();
        for r in runs {
            c.count(r);
        }
        c
    }
    /// Count `run` under its exclusion's rule, if it has one; whether it has.
    pub fn count(&mut self, run: &Run) -> bool {
        if let Some(e) = &run.exclusion {
            *self.0.entry(e.name()).or_insert(0) += 1;
        }
        run.exclusion.is_some()
    }
    /// Rows counted under every rule.
    pub fn total(&self) -> usize {
        self.0.values().sum()
    }
}

impl std::fmt::Display for RuleCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.total())?;
        if !self.0.is_empty() {
            let each: Vec<String> = self.0.iter().map(|(k, n)| format!("{k} {n}")).collect();
            write!(f, " ({})", each.join(", "))?;
        }
        Ok(())
    }
}

/// Check a loaded table against the catalog: resolve GPU names (rows then carry the
/// catalog's canonical name), reject duplicates, and set each row's verdicts.
pub fn validate(table: &mut RunsTable, catalog: &Catalog) -> Result<ValidationReport> {
    // GPU names as written -> the GPU's number (in order of first appearance); the
    // catalog is asked once per distinct name.
    let mut resolved: HashMap<String, u32> = HashMap::default();
    let mut gpus: Vec<&Gpu> = Vec::new();
    // (each GPU's canonical name, shared by its rows)
    let mut names: Vec<super::Name> = Vec::new();
    let mut gpu_of: Vec<u32> = Vec::with_capacity(table.runs.len());
    for run in &mut table.runs {
        let id = match resolved.get(run.gpu.as_str()) {
            Some(&id) => id,
            None => {
                let Some(gpu) = catalog.resolve(&run.gpu) else {
                    return Err(unknown_gpu(&table.gpu_fields, run, catalog));
                };
                // two spellings of one GPU are one GPU
                let id = match gpus.iter().position(|g| g.name == gpu.name) {
                    Some(i) => i as u32,
                    None => {
                        gpus.push(gpu);
                        names.push(gpu.name.as_str().into());
                        gpus.len() as u32 - 1
                    }
                };
                resolved.insert(run.gpu.to_string(), id);
                id
            }
        };
        gpu_of.push(id);
        run.gpu = names[id as usize].clone();
        run.flags.retain(|f| !is_validation_flag(f));
        run.exclusion = None;
        run.warnings.clear();
    }
    let ids = RowIds::of(&table.runs, gpus, gpu_of);
    let partitions: Vec<Option<u32>> = table
        .runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            check_launch(r, ids.gpu(i), catalog)?;
            check_precision(r)?;
            partition_sms(r, ids.gpu(i))
        })
        .collect::<Result<_>>()?;
    check_duplicates(&table.runs, &ids, &partitions)?;
    check_time_unit(&table.runs, &ids, &partitions)?;
    let mut verdicts: Vec<Verdict> = table
        .runs
        .iter()
        .zip(&partitions)
        .enumerate()
        .map(|(i, (r, part))| {
            let gpu = ids.gpu(i);
            match part {
                // a partition's time says nothing about the whole GPU's roofs
                Some(n) => Verdict {
                    exclusions: vec![Exclusion::SmPartition {
                        sm_count: *n,
                        gpu_sms: gpu.sm_count,
                    }],
                    warnings: vec![],
                },
                None => peak::peak_verdict(r, gpu),
            }
        })
        .collect();
    flat::flat_time(&table.runs, &ids, &partitions, &mut verdicts);
    single_gpu(&ids, &mut verdicts);

    for (run, v) in table.runs.iter_mut().zip(verdicts) {
        let mut exclusions = v.exclusions.into_iter();
        run.exclusion = exclusions.next();
        run.warnings = exclusions
            .map(Warning::AlsoImplausible)
            .chain(v.warnings)
            .collect();
        let own = run
            .exclusion
            .iter()
            .map(|e| e.flag())
            .chain(run.warnings.iter().map(|w| w.flag()));
        run.flags.extend(own);
    }
    Ok(summarize(table, &ids))
}

fn is_validation_flag(flag: &str) -> bool {
    let name = flag.split(':').next().unwrap_or(flag);
    VALIDATION_FLAGS.contains(&name)
}

/// An error in `column` of run `r`. A run without a line of its own (a Kernel Tuner
/// cache's entry, a Parquet row) is also named by its kernel and configuration: its
/// row number among the imported runs is hard to find in the file.
fn run_error(r: &Run, column: &str, message: String) -> Error {
    let message = match r.origin.line {
        Some(_) => message,
        None => format!("{message} (kernel '{}', config '{}')", r.kernel, r.config),
    };
    Error::validation(
        &*r.origin.file,
        Position::of(&r.origin),
        Some(column),
        message,
    )
}

/// The error for a run whose GPU name `catalog` does not resolve, placed where its
/// file writes the name.
fn unknown_gpu(fields: &[super::GpuField], run: &Run, catalog: &Catalog) -> Error {
    let written = fields.iter().find(|g| *g.file == *run.origin.file);
    Error::unknown_gpu(
        run.gpu.to_string(),
        &*run.origin.file,
        written
            .and_then(|g| g.at)
            .unwrap_or_else(|| Position::of(&run.origin)),
        written.map_or("column 'gpu'", |g| g.field.as_str()),
        catalog.unresolved_hint(&run.gpu),
    )
}

/// Refuse a GPU name that can name no GPU of any catalog: one that matches several of
/// `catalog`'s ("A100") or is brand words only. A name the catalog does not know is
/// kept (a GPU a user's `--gpus` file may add later). What `data import` checks
/// without `--validate`.
pub fn refuse_ambiguous_gpus(table: &RunsTable, catalog: &Catalog) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    for run in &table.runs {
        if !seen.insert(run.gpu.as_str()) || catalog.resolve(&run.gpu).is_some() {
            continue;
        }
        if !matches!(
            catalog.unresolved_hint(&run.gpu),
            GpuHint::NotInCatalog { .. }
        ) {
            return Err(unknown_gpu(&table.gpu_fields, run, catalog));
        }
    }
    Ok(())
}

/// SMs of the partition a run was restricted to, when fewer than the whole GPU's; an
/// `sm_count` that no partition of the GPU can have is an error.
fn partition_sms(r: &Run, gpu: &Gpu) -> Result<Option<u32>> {
    let Some(n) = r.details().sm_count else {
        return Ok(None);
    };
    if !(n >= 1.0 && n.fract() == 0.0 && n <= gpu.sm_count as f64) {
        return Err(run_error(
            r,
            "sm_count",
            format!(
                "{n} SMs: a run uses a whole number of SMs from 1 to the {} of {}",
                gpu.sm_count, gpu.name
            ),
        ));
    }
    Ok((n < gpu.sm_count as f64).then_some(n as u32))
}

/// Most blocks one launch can have: a grid of 2^31 - 1 x 65,535 x 65,535 (every
/// compute capability from 3.0 on).
const MAX_GRID_BLOCKS: f64 = 2_147_483_647.0 * 65_535.0 * 65_535.0;

/// A run's launch as its GPU allows one: whole numbers, a block of 1 to the
/// compute capability's most threads, registers and shared memory per block within
/// its limits, at least one block. The projection drops a launch it cannot place
/// (occupancy unknown), so an impossible value would otherwise change predictions
/// silently.
fn check_launch(r: &Run, gpu: &Gpu, catalog: &Catalog) -> Result<()> {
    let Some(limits) = catalog.limits_ref(gpu) else {
        return Ok(());
    };
    let checks = [
        (
            "block_threads",
            r.block_threads,
            1,
            f64::from(limits.max_threads_per_block),
        ),
        ("grid_blocks", r.grid_blocks, 1, MAX_GRID_BLOCKS),
        (
            "regs_per_thread",
            r.regs_per_thread,
            0,
            f64::from(limits.max_regs_per_thread),
        ),
        (
            "smem_per_block",
            r.smem_per_block,
            0,
            f64::from(limits.max_smem_per_block),
        ),
    ];
    for (column, value, min, max) in checks {
        let Some(v) = value else { continue };
        let in_range = v >= f64::from(min) && v <= max;
        if !(v.fract() == 0.0 && in_range) {
            let shown = if v.fract() == 0.0 && v.abs() < 1e15 {
                format!("{v:.0}")
            } else {
                format!("{v:?}")
            };
            let range = if max == MAX_GRID_BLOCKS {
                format!("from {min} to (2^31 - 1) x 65535 x 65535")
            } else {
                format!("from {min} to {max:.0}")
            };
            return Err(run_error(
                r,
                column,
                format!(
                    "{shown} is not what {} (compute capability {}) can launch: a whole number {range}",
                    gpu.name, gpu.compute_capability
                ),
            ));
        }
    }
    Ok(())
}

/// A `precision` the catalog has no peak for is an error, not a run priced at the
/// fp32 peak (see [`PrecisionClass::is_known`]).
fn check_precision(r: &Run) -> Result<()> {
    match &r.precision {
        Some(p) if !PrecisionClass::is_known(p) => Err(run_error(
            r,
            "precision",
            format!(
                "unknown precision '{p}' (known: {})",
                PrecisionClass::KNOWN_LABELS
            ),
        )),
        _ => Ok(()),
    }
}

/// Same GPU, kernel, config, SM partition and source twice is an error; two sources
/// measuring the same work is allowed, and so is one source measuring it on the
/// whole GPU and on partitions of it.
fn check_duplicates(runs: &[Run], ids: &RowIds, partitions: &[Option<u32>]) -> Result<()> {
    /// (GPU, work, SMs of a partition, source)
    type Key<'a> = (u32, u32, Option<u32>, Option<&'a str>);
    // Sized up front: growing it to a million keys rehashed them at every doubling
    // (the 980k-row GEMM corpus validated 5 % faster).
    let mut seen: HashMap<Key, &Run> =
        HashMap::with_capacity_and_hasher(runs.len(), Default::default());
    for (i, (run, part)) in runs.iter().zip(partitions).enumerate() {
        let key = (ids.gpu[i], ids.work[i], *part, run.source.as_deref());
        if let Some(first) = seen.insert(key, run) {
            return Err(duplicate_error(run, first, *part));
        }
    }
    Ok(())
}

/// The error for `run`, which measures what `first` measured (on `partition` SMs).
pub(crate) fn duplicate_error(run: &Run, first: &Run, partition: Option<u32>) -> Error {
    let source = match &run.source {
        Some(s) => format!(" from source '{s}'"),
        None => String::new(),
    };
    Error::validation(
        &*run.origin.file,
        Position::of(&run.origin),
        Some("config"),
        format!(
            "duplicate (gpu, kernel, config) = ({}, {}, {}){}{source}: also at {}",
            run.gpu,
            run.kernel,
            run.config,
            partition
                .map(|n| format!(" on {n} SMs"))
                .unwrap_or_default(),
            first.origin
        ),
    )
}

/// Work of at least this much roofline time (ms) says what unit a time is in: below
/// it, launch overhead (5-20 us) holds honest times 10-1000x above the roofline.
const UNIT_MIN_ROOF_MS: f64 = 0.05;
/// Fewest such rows of one file and GPU for a verdict on its unit.
const UNIT_MIN_ROWS: usize = 8;
/// A median measured / roofline time above this says microseconds: honest kernels
/// with that much work run within a few times their roofline, and a serial or
/// contended one is a row, not a file's median.
const UNIT_SLOW_MEDIAN: f64 = 300.0;
/// A median below this says seconds: no kernel runs 300x faster than its roofline
/// (such rows are above the peak already).
const UNIT_FAST_MEDIAN: f64 = 1.0 / 300.0;
/// Share of rows that the 1000x rescale may put above the peak: more and the rescale
/// does not make the file plausible, so it is not the explanation.
const UNIT_MAX_IMPLAUSIBLE_SHARE: f64 = 0.1;

/// Times in the wrong unit: per file and GPU, over the rows with enough work (see
/// [`UNIT_MIN_ROOF_MS`]), the median of measured time over roofline time. Far above
/// 1 (microseconds written as milliseconds) or far below (seconds), and plausible
/// once rescaled by 1000, is an error naming the file, the GPU and the likely unit;
/// one row's slip stays a row's verdict (above peak, flat time).
fn check_time_unit(runs: &[Run], ids: &RowIds, partitions: &[Option<u32>]) -> Result<()> {
    // (file, GPU) -> measured / roofline time of each row with enough work
    let mut ratios: BTreeMap<(&str, u32), Vec<f64>> = BTreeMap::new();
    for (i, r) in runs.iter().enumerate() {
        let roof_ms = roof_seconds(r, ids.gpu(i)) * 1e3;
        if partitions[i].is_none() && roof_ms >= UNIT_MIN_ROOF_MS {
            ratios
                .entry((&*r.origin.file, ids.gpu[i]))
                .or_default()
                .push(r.time_ms / roof_ms);
        }
    }
    for ((file, gpu), mut v) in ratios {
        if v.len() < UNIT_MIN_ROWS {
            continue;
        }
        v.sort_by(f64::total_cmp);
        let median = v[v.len() / 2];
        let (scale, unit) = if median > UNIT_SLOW_MEDIAN {
            (1e-3, "microseconds")
        } else if median < UNIT_FAST_MEDIAN {
            (1e3, "seconds")
        } else {
            continue;
        };
        let above_peak = v.iter().filter(|x| *x * scale < 1.0 / PEAK_SLACK).count();
        if above_peak as f64 > UNIT_MAX_IMPLAUSIBLE_SHARE * v.len() as f64 {
            continue;
        }
        let times = if median >= 1.0 {
            format!("a median {median:.0}x the roofline time")
        } else {
            format!("a median 1/{:.0} of the roofline time", 1.0 / median)
        };
        return Err(Error::validation(
            file,
            Position::File,
            Some("time_ms"),
            format!(
                "times are {times} of their work on {} ({} rows with at least {} us of it): they look like {unit}, not milliseconds",
                ids.gpus[gpu as usize].name,
                v.len(),
                UNIT_MIN_ROOF_MS * 1e3
            ),
        ));
    }
    Ok(())
}

fn single_gpu(ids: &RowIds, verdicts: &mut [Verdict]) {
    if ids.gpus.len() < 2 {
        return;
    }
    // each work's first GPU, and whether every row of it is on that GPU
    let mut first_gpu: Vec<Option<(u32, bool)>> = vec![None; ids.works];
    for (&w, &g) in ids.work.iter().zip(&ids.gpu) {
        let e = first_gpu[w as usize].get_or_insert((g, true));
        if e.0 != g {
            e.1 = false;
        }
    }
    for (&w, v) in ids.work.iter().zip(verdicts) {
        if first_gpu[w as usize].is_some_and(|(_, only)| only) {
            v.warnings.push(Warning::SingleGpu);
        }
    }
}

/// (GPU, how many distinct values of `of` its rows have), for each GPU with rows.
fn distinct_per_gpu(gpu: &[u32], of: &[u32]) -> Vec<(usize, usize)> {
    let mut pairs: Vec<u64> = gpu
        .iter()
        .zip(of)
        .map(|(&g, &v)| (g as u64) << 32 | v as u64)
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    pairs
        .chunk_by(|a, b| a >> 32 == b >> 32)
        .map(|c| ((c[0] >> 32) as usize, c.len()))
        .collect()
}

fn summarize(table: &RunsTable, ids: &RowIds) -> ValidationReport {
    let mut per_gpu: Vec<GpuSummary> = ids
        .gpus
        .iter()
        .map(|g| GpuSummary {
            gpu: g.name.clone(),
            ..GpuSummary::default()
        })
        .collect();
    // distinct kernels and (kernel, config) per GPU: a configuration measured on the
    // whole GPU and on SM partitions is one configuration
    for (gpu, kernels) in distinct_per_gpu(&ids.gpu, &ids.kernel) {
        per_gpu[gpu].kernels = kernels;
    }
    for (gpu, configs) in distinct_per_gpu(&ids.gpu, &ids.work) {
        per_gpu[gpu].configs = configs;
    }
    let mut flagged_rows = Vec::new();
    let (mut excluded_by_rule, mut flagged_by_rule) =
        (RuleCounts::default(), RuleCounts::default());
    for (index, r) in table.runs.iter().enumerate() {
        if !excluded_by_rule.count(r) {
            for w in &r.warnings {
                *flagged_by_rule.0.entry(w.name()).or_insert(0) += 1;
            }
        }
        let g = &mut per_gpu[ids.gpu[index] as usize];
        g.rows += 1;
        let names = r
            .exclusion
            .iter()
            .map(|e| e.name())
            .chain(r.warnings.iter().map(|w| w.name()));
        for name in names {
            *g.reasons.entry(name.to_string()).or_insert(0) += 1;
        }
        let flagged = r.exclusion.is_some() || !r.warnings.is_empty();
        if flagged {
            g.flagged += 1;
            flagged_rows.push(FlaggedRow {
                index,
                place: r.origin.to_string(),
                gpu: r.gpu.to_string(),
                kernel: r.kernel.to_string(),
                config: r.config.to_string(),
                excluded: is_excluded(r),
                reasons: r.reasons(),
            });
        }
        if is_excluded(r) {
            g.excluded += 1;
        }
    }
    ValidationReport {
        files: table.files.clone(),
        rows: table.runs.len(),
        flagged: per_gpu.iter().map(|g| g.flagged).sum(),
        excluded: per_gpu.iter().map(|g| g.excluded).sum(),
        skipped_error_rows: table.skipped_error_rows(),
        not_imported: table.not_imported.clone(),
        per_gpu,
        excluded_by_rule,
        flagged_by_rule,
        flagged_rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 14,899 GFLOP/s fp32, 652.8 GB/s, a 4.5 MiB L2.
    const TV: &str = "NVIDIA TITAN V";
    const TV_GFLOPS: f64 = 14_899.2;

    /// A SYNTHETIC run of one harness on the TITAN V.
    fn run(kernel: &str, config: &str, time_ms: f64, flops: f64, dram_bytes: f64) -> Run {
        Run {
            gpu: TV.into(),
            kernel: kernel.into(),
            config: config.into(),
            time_ms,
            flops,
            dram_bytes,
            source: Some("synthetic".into()),
            ..Run::default()
        }
    }

    fn validated(runs: Vec<Run>) -> (Vec<Run>, ValidationReport) {
        let mut t = RunsTable {
            runs,
            ..RunsTable::default()
        };
        let rep = validate(&mut t, &Catalog::builtin()).unwrap();
        (t.runs, rep)
    }

    /// SYNTHETIC: a kernel whose time stays at `plateau_ms` while its bytes grow 64x
    /// (0.25 to 16 MB: at most 460 GB/s, under the peak); the 16 MB row needs 25 us at
    /// the peak, so its time should have grown.
    fn plateau(kernel: &str, plateau_ms: f64) -> Vec<Run> {
        [0.25e6, 1e6, 4e6, 16e6]
            .iter()
            .map(|&b| run(kernel, &format!("bytes={b}"), plateau_ms, 0.0, b))
            .collect()
    }

    #[test]
    fn a_plateau_on_its_harness_floor_is_kept_and_one_above_any_launch_floor_is_not() {
        // A harness whose fastest run is 35 us (a PyTorch operator's host dispatch):
        // its plateau is its launch floor, kept.
        let (runs, rep) = validated(plateau("relu", 0.035));
        assert_eq!(rep.excluded, 0, "{:?}", runs[0].exclusion);
        // A kernel flat at 55 us in a harness that timed another kernel at 27 us:
        // launch-bound on that floor (under 4 x 27 us), kept.
        let mut rows = plateau("softmax", 0.055);
        rows.extend((0..3).map(|i| run("gelu", &format!("n={i}"), 0.027, 0.0, 1e3)));
        let (_, rep) = validated(rows);
        assert_eq!(rep.excluded, 0);
        // 60 us is longer than any launch floor (50 us, models::MAX_LAUNCH_FLOOR_MS):
        // with no faster run in the harness the plateau is no floor, and the rows 16x
        // or more apart in work are excluded (the 4 MB row has no partner that far).
        let (runs, rep) = validated(plateau("relu", 0.060));
        assert_eq!(rep.excluded, 3);
        assert!(runs[2].exclusion.is_none());
        assert_eq!(rep.excluded_by_rule.0, BTreeMap::from([("flat_time", 3)]));
        assert_eq!(rep.excluded_by_rule.to_string(), "3 (flat_time 3)");
    }

    /// SYNTHETIC: a run of `ratio` times the TITAN V's fp32 peak in 1 ms.
    fn at_peak(kernel: &str, config: &str, ratio: f64) -> Run {
        run(kernel, config, 1.0, ratio * TV_GFLOPS * 1e6, 1e3)
    }

    #[test]
    fn above_the_rated_peak_is_kept_within_boost_headroom_and_for_fast_convolutions() {
        let (runs, rep) = validated(vec![
            // 1.1x the rated peak: a board boosting above its rated clock
            at_peak("gemm", "n=1", 1.1),
            // 1.5x the direct FLOPs of a 3x3 filter: Winograd
            at_peak("conv", "kernel_size=3,stride=1", 1.5),
            at_peak("conv2d_3x3", "n=1", 1.5),
            // impossible: a GEMM at 1.5x; a 1x1 convolution (no fast algorithm) at
            // 1.5x; a 3x3 one beyond its 9 taps x the boost bound
            at_peak("gemm_fast", "n=1", 1.5),
            at_peak("conv", "kernel_size=1,stride=1", 1.5),
            at_peak("conv2d", "kernel_size=3,stride=2", 12.0),
        ]);
        let kept: Vec<bool> = runs.iter().map(|r| r.exclusion.is_none()).collect();
        assert_eq!(kept, [true, true, true, false, false, false]);
        assert!(runs[0].flags.is_empty(), "{:?}", runs[0].flags);
        for r in &runs[1..3] {
            assert_eq!(r.flags, ["algorithmic_flops"]);
            assert!(matches!(
                r.warnings[0],
                Warning::AlgorithmicFlops { max_saving, .. } if max_saving == 9.0
            ));
        }
        assert_eq!(
            rep.excluded_by_rule.0,
            BTreeMap::from([("above_peak_flops", 3)])
        );
        assert_eq!(
            rep.flagged_by_rule.0,
            BTreeMap::from([("algorithmic_flops", 2)])
        );
    }

    #[test]
    fn bandwidth_counts_the_bytes_the_caches_cannot_hold() {
        // SYNTHETIC: 2x the peak bandwidth by its bytes. A 5 MB working set on a 4.7 MB
        // L2 must move 0.3 MB from DRAM (kept); a 64 MB one cannot (excluded).
        let bytes_at = |b: f64| run("copy", &format!("bytes={b}"), b / (2.0 * 652.8e6), 0.0, b);
        let (runs, rep) = validated(vec![bytes_at(5e6), bytes_at(64e6)]);
        assert!(runs[0].exclusion.is_none());
        assert!(matches!(
            runs[1].exclusion,
            Some(Exclusion::AbovePeakBandwidth { .. })
        ));
        assert_eq!(rep.excluded, 1);
    }

    #[test]
    fn convolutions_say_their_filter() {
        let taps =
            |kernel: &str, config: &str| convolution_taps(&run(kernel, config, 1.0, 0.0, 0.0));
        assert_eq!(taps("conv", "B=8,kernel_size=3,stride=1"), Some(9.0));
        assert_eq!(
            taps("convolution", "filter_height=15,filter_width=7"),
            Some(105.0)
        );
        assert_eq!(taps("conv2d_7x7", "rows=256"), Some(49.0));
        assert_eq!(taps("conv", "kernel_size=1"), None, "1x1: nothing to save");
        assert_eq!(taps("conv", "B=8"), None, "filter not said");
        assert_eq!(
            taps("convert_fp8", "kernel_size=3"),
            None,
            "not a convolution"
        );
        assert_eq!(taps("gemm", "kernel_size=3"), None);
    }
}
