//! The co-run study (`experiments/corun/own_corun.toml`): the co-run model
//! ([`crate::models::corun`]) on the measured co-run sets of each GPU, leave one set
//! out and across GPUs, beside two baselines; `reproduce` prints and writes its table
//! and `reproduce --check` holds it to its gates.

use super::gate::{Bound, Breach, Check, Kind};
use crate::catalog::Catalog;
use crate::data::Run;
use crate::error::{Error, Result};
use crate::models::corun::{
    predicted_alone_ms, read_sets, CorunParams, CorunSet, FittedCorun, Roofs,
};
use crate::report::Table;
use std::path::{Path, PathBuf};

/// The study file, built into the binary like [`super::BUILTIN`]; its data paths are
/// relative to `experiments/corun/`.
pub const STUDY: (&str, &str) = (
    "corun/own_corun.toml",
    include_str!("../../experiments/corun/own_corun.toml"),
);

/// The model's name in tables and gates.
pub const MODEL: &str = "corun";

/// A co-run study: the GPUs' data directories and the gates.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Study {
    pub name: String,
    pub title: String,
    /// Per GPU a directory with `corun.csv`, `runs.csv`, `runs_partitions.csv`,
    /// `ncu/*.csv` and `calibration.toml`.
    pub gpus: Vec<PathBuf>,
    #[serde(default)]
    pub gate: StudyGate,
}

/// Bounds on each target's figure over all kernel counts, per protocol.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudyGate {
    /// Leave one set out: MAE of the together-time, %.
    pub loso_mae_max: Option<f64>,
    /// Across GPUs, alone times measured: MAE, %.
    pub across_measured_mae_max: Option<f64>,
    /// Across GPUs, alone times predicted: MAE, %.
    pub across_predicted_mae_max: Option<f64>,
    /// Coverage of the 90 % interval, %, with the target's alone times measured
    /// (leave one set out, across GPUs).
    pub coverage: Option<[f64; 2]>,
    /// Coverage of the 90 % interval, %, with the alone times predicted (the interval
    /// holds the co-run model's errors, not those of the alone times).
    pub across_predicted_coverage: Option<[f64; 2]>,
}

impl Study {
    /// The built-in study with its data under `data_dir`.
    pub fn builtin(data_dir: &Path) -> Result<Study> {
        let (file, text) = STUDY;
        let mut s: Study = toml::from_str(text).map_err(|e| {
            Error::file(
                format!("experiments/{file} (built in)"),
                crate::error::toml_message(&e),
            )
        })?;
        let dir = data_dir.join("experiments").join("corun");
        s.gpus = s
            .gpus
            .iter()
            .map(|p| super::join_lexically(&dir, p))
            .collect();
        Ok(s)
    }
}

/// One GPU's co-run sets, roofs and runs.
pub struct GpuData {
    pub gpu: String,
    pub roofs: Roofs,
    pub sets: Vec<CorunSet>,
    /// Its runs on the whole GPU and on partitions, and its profiles: what bytes come
    /// from, and the timed runs what another GPU's alone times are predicted from.
    pub runs: Vec<Run>,
}

/// Load one GPU's directory: its calibration merged over `catalog`, its runs and
/// profiles validated against that, its co-run sets.
pub fn load_gpu(dir: &Path, catalog: &Catalog) -> Result<GpuData> {
    let mut cat = catalog.clone();
    cat.merge_file(&dir.join("calibration.toml"))?;
    let mut files = vec![dir.join("runs.csv"), dir.join("runs_partitions.csv")];
    let mut profiles = crate::files::walk(&dir.join("ncu"))?;
    profiles.retain(|p| p.extension().is_some_and(|e| e == "csv"));
    files.extend(profiles);
    let (table, _) = crate::data::load_validated(&files, &cat)?;
    let runs = table.runs;
    let sets = read_sets(&dir.join("corun.csv"), &runs, &|name| {
        cat.resolve(name)
            .map(|g| (g.name.clone(), g.sm_count))
            .ok_or_else(|| cat.unresolved_hint(name).to_string())
    })?;
    let gpu = sets
        .first()
        .map(|s| s.gpu.clone())
        .ok_or_else(|| Error::file(dir.join("corun.csv").display(), "no co-run sets"))?;
    let roofs = Roofs::of(cat.resolve(&gpu).expect("resolved when read"));
    Ok(GpuData {
        gpu,
        roofs,
        sets,
        runs,
    })
}

/// How a protocol obtained the target's alone times.
pub const LOSO: &str = "leave-one-set-out";
pub const ACROSS_MEASURED: &str = "across GPUs, alone measured";
pub const ACROSS_PREDICTED: &str = "across GPUs, alone predicted";

/// One scored kernel: how many kernels ran together, its measured together-time, and
/// the model's and the baselines' predictions.
#[derive(Debug, Clone, Copy)]
struct Scored {
    kernels: usize,
    measured_ms: f64,
    model_ms: f64,
    low_ms: f64,
    high_ms: f64,
    alone_ms: f64,
    fixed_ms: f64,
}

/// Score the sets `test` with `fitted` on `roofs`.
fn score(fitted: &FittedCorun, test: &[CorunSet], roofs: &Roofs, out: &mut Vec<Scored>) {
    for s in test {
        for (p, t) in fitted
            .predict(&s.kernels, roofs)
            .iter()
            .zip(&s.time_together_ms)
        {
            out.push(Scored {
                kernels: s.kernels.len(),
                measured_ms: *t,
                model_ms: p.time_together_ms,
                low_ms: p.low_ms,
                high_ms: p.high_ms,
                alone_ms: p.time_alone_ms,
                fixed_ms: p.time_alone_ms * fitted.training_slowdown,
            });
        }
    }
}

/// The figures of one protocol, target and kernel count (None: all).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Row {
    pub protocol: String,
    pub source: String,
    pub target: String,
    pub kernels: Option<usize>,
    pub n: usize,
    /// Mean absolute error of the together-time, %.
    pub model_mae: f64,
    pub no_interference_mae: f64,
    pub fixed_slowdown_mae: f64,
    /// Share of measured together-times inside the 90 % interval, %.
    pub coverage: f64,
}

fn rows_of(protocol: &str, source: &str, target: &str, scored: &[Scored], out: &mut Vec<Row>) {
    let mae = |v: &[&Scored], f: fn(&Scored) -> f64| {
        100.0
            * v.iter()
                .map(|s| (f(s) / s.measured_ms - 1.0).abs())
                .sum::<f64>()
            / v.len() as f64
    };
    for k in (2..=6).map(Some).chain([None]) {
        let v: Vec<&Scored> = scored
            .iter()
            .filter(|s| k.is_none_or(|k| s.kernels == k))
            .collect();
        if v.is_empty() {
            continue;
        }
        out.push(Row {
            protocol: protocol.to_string(),
            source: source.to_string(),
            target: target.to_string(),
            kernels: k,
            n: v.len(),
            model_mae: mae(&v, |s| s.model_ms),
            no_interference_mae: mae(&v, |s| s.alone_ms),
            fixed_slowdown_mae: mae(&v, |s| s.fixed_ms),
            coverage: 100.0
                * v.iter()
                    .filter(|s| (s.low_ms..=s.high_ms).contains(&s.measured_ms))
                    .count() as f64
                / v.len() as f64,
        });
    }
}

/// The target's sets with each kernel's alone time predicted from `source`'s
/// whole-GPU runs on the target's partitions, and its bytes from `source`'s runs and
/// profiles. A kernel no source run measured is an error.
fn with_predicted_alone(
    source: &GpuData,
    target: &GpuData,
    catalog: &Catalog,
) -> Result<Vec<CorunSet>> {
    let mut sets = target.sets.clone();
    for s in &mut sets {
        let works: Vec<(&str, &str, u32)> = s
            .kernels
            .iter()
            .map(|k| (k.kernel.as_str(), k.config.as_str(), k.sm_count))
            .collect();
        let alone = predicted_alone_ms(&source.runs, catalog, &target.gpu, &works)?;
        let bytes: Vec<_> = works
            .iter()
            .map(|(k, c, _)| crate::models::corun::launch_bytes(&source.runs, &source.gpu, k, c))
            .collect();
        for ((k, a), b) in s.kernels.iter_mut().zip(alone).zip(bytes) {
            let missing = || {
                Error::model(format!(
                    "{} ({}) is not measured on {}",
                    k.kernel, k.config, source.gpu
                ))
            };
            k.time_alone_ms = a.ok_or_else(missing)?;
            let b = b.ok_or_else(missing)?;
            k.dram_bytes = b.dram_bytes;
            k.l2_bytes = b.l2_bytes;
            k.l2_slice_imbalance = b.l2_slice_imbalance;
        }
    }
    Ok(sets)
}

/// Every protocol on `gpus`: leave one set out on each, and across each ordered pair.
pub fn evaluate(gpus: &[GpuData], catalog: &Catalog, params: &CorunParams) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    for g in gpus {
        let mut scored = Vec::new();
        for i in 0..g.sets.len() {
            let train: Vec<_> = g.sets[..i]
                .iter()
                .chain(&g.sets[i + 1..])
                .map(|s| (s, &g.roofs))
                .collect();
            let fitted = params.fit(&train)?;
            score(&fitted, &g.sets[i..=i], &g.roofs, &mut scored);
        }
        rows_of(LOSO, &g.gpu, &g.gpu, &scored, &mut rows);
    }
    for src in gpus {
        let train: Vec<_> = src.sets.iter().map(|s| (s, &src.roofs)).collect();
        let fitted = params.fit(&train)?;
        for dst in gpus.iter().filter(|d| d.gpu != src.gpu) {
            let mut scored = Vec::new();
            score(&fitted, &dst.sets, &dst.roofs, &mut scored);
            rows_of(ACROSS_MEASURED, &src.gpu, &dst.gpu, &scored, &mut rows);
            let predicted = with_predicted_alone(src, dst, catalog)?;
            let mut scored = Vec::new();
            score(&fitted, &predicted, &dst.roofs, &mut scored);
            rows_of(ACROSS_PREDICTED, &src.gpu, &dst.gpu, &scored, &mut rows);
        }
    }
    Ok(rows)
}

/// The rows as a table.
pub fn table(rows: &[Row]) -> Table {
    let mut t = Table::new(&[
        "protocol",
        "source",
        "target",
        "kernels",
        "n",
        "corun_mae_pct",
        "no_interference_mae_pct",
        "fixed_slowdown_mae_pct",
        "coverage90_pct",
    ]);
    for r in rows {
        t.push(vec![
            r.protocol.clone(),
            r.source.clone(),
            r.target.clone(),
            r.kernels.map_or("all".into(), |k| k.to_string()),
            r.n.to_string(),
            format!("{:.2}", r.model_mae),
            format!("{:.2}", r.no_interference_mae),
            format!("{:.2}", r.fixed_slowdown_mae),
            format!("{:.1}", r.coverage),
        ]);
    }
    t
}

/// The study's outcome.
pub struct Outcome {
    pub study: Study,
    pub rows: Vec<Row>,
}

/// Run the study.
pub fn run(study: Study, catalog: &Catalog) -> Result<Outcome> {
    let gpus = study
        .gpus
        .iter()
        .map(|d| load_gpu(d, catalog))
        .collect::<Result<Vec<_>>>()?;
    let rows = evaluate(&gpus, catalog, &CorunParams::default())?;
    Ok(Outcome { study, rows })
}

/// The study's gates: each target's all-counts figure per protocol.
pub fn check(o: &Outcome) -> Vec<Check> {
    let g = &o.study.gate;
    let mut out = Vec::new();
    let mut gate = |protocol: &str, kind: Kind, bound: Bound, value: fn(&Row) -> f64| {
        let rows: Vec<&Row> = o
            .rows
            .iter()
            .filter(|r| r.protocol == protocol && r.kernels.is_none())
            .collect();
        let worst = rows.iter().copied().max_by(|a, b| {
            let miss = |r: &Row| u8::from(!bound.holds(value(r)));
            miss(a).cmp(&miss(b)).then(value(a).total_cmp(&value(b)))
        });
        out.push(Check {
            experiment: format!("{} ({protocol})", o.study.name),
            model: MODEL.into(),
            kind,
            bound,
            vs: None,
            min_rows: None,
            value: worst.map_or(f64::NAN, value),
            at: worst.map(|r| r.target.clone()),
            breaches: rows
                .iter()
                .filter(|r| !bound.holds(value(r)))
                .map(|r| Breach {
                    at: Some(r.target.clone()),
                    value: value(r),
                    note: None,
                })
                .collect(),
        });
    };
    for (protocol, max, coverage) in [
        (LOSO, g.loso_mae_max, g.coverage),
        (ACROSS_MEASURED, g.across_measured_mae_max, g.coverage),
        (
            ACROSS_PREDICTED,
            g.across_predicted_mae_max,
            g.across_predicted_coverage,
        ),
    ] {
        if let Some(m) = max {
            gate(protocol, Kind::WorstTargetMape, Bound::AtMost(m), |r| {
                r.model_mae
            });
        }
        if let Some([lo, hi]) = coverage {
            gate(protocol, Kind::Coverage, Bound::Within(lo, hi), |r| {
                r.coverage
            });
        }
    }
    out
}
