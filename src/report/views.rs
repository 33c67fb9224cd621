//! Tables and text for what the commands show: validation summaries, runs, the
//! catalog, and every term of one analytical projection.

use super::Table;
use crate::catalog::Gpu;
use crate::data::import::ImportReport;
use crate::data::{Query, Run, ValidationReport};
use crate::features::RunFeatures;
use crate::models::analytical::Projection;
use crate::models::Prediction;

/// One row per flagged run: where it is, what it is, whether models leave it out, and
/// every reason (`data validate --list`).
pub fn flagged_rows_table(rep: &ValidationReport) -> Table {
    let mut t = Table::new(&["place", "gpu", "kernel", "config", "verdict", "reasons"]);
    for f in &rep.flagged_rows {
        t.push(vec![
            f.place.clone(),
            f.gpu.clone(),
            f.kernel.clone(),
            f.config.clone(),
            if f.excluded { "excluded" } else { "kept" }.into(),
            f.reasons.join("; "),
        ]);
    }
    t
}

/// One row per GPU: rows, kernels, flagged and excluded rows with the reasons.
pub fn validation_table(rep: &ValidationReport) -> Table {
    let mut t = Table::new(&[
        "gpu", "rows", "kernels", "configs", "flagged", "excluded", "reasons",
    ]);
    for g in &rep.per_gpu {
        let reasons = g
            .reasons
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        t.push(vec![
            g.gpu.clone(),
            g.rows.to_string(),
            g.kernels.to_string(),
            g.configs.to_string(),
            g.flagged.to_string(),
            g.excluded.to_string(),
            reasons,
        ]);
    }
    t
}

/// Runs with their 1-based row numbers (as `explain --row` takes them): times to the
/// nanosecond and counts to 5 digits, for reading, or, `exact`, every number as stored
/// (CSV for a program; [`RunView`] is the same row for JSON).
pub fn runs_table<'a>(rows: impl IntoIterator<Item = (usize, &'a Run)>, exact: bool) -> Table {
    let mut t = Table::new(&[
        "row",
        "gpu",
        "kernel",
        "config",
        "time_ms",
        "flops",
        "dram_bytes",
        "flags",
    ]);
    for (i, r) in rows {
        let v = RunView::of(i, r);
        let numbers = if exact {
            [v.time_ms, v.flops, v.dram_bytes].map(|x| x.to_string())
        } else {
            [
                format!("{:.6}", v.time_ms),
                format!("{:.4e}", v.flops),
                format!("{:.4e}", v.dram_bytes),
            ]
        };
        let [time_ms, flops, dram_bytes] = numbers;
        t.push(vec![
            v.row.to_string(),
            v.gpu.into(),
            v.kernel.into(),
            v.config.into(),
            time_ms,
            flops,
            dram_bytes,
            v.flags,
        ]);
    }
    t
}

/// One run as `data show` shows it: its 1-based row, work, time and flags.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunView<'a> {
    pub row: usize,
    pub gpu: &'a str,
    pub kernel: &'a str,
    pub config: &'a str,
    pub time_ms: f64,
    pub flops: f64,
    pub dram_bytes: f64,
    /// The `flags` column (`;`-separated).
    pub flags: String,
}

impl<'a> RunView<'a> {
    /// Run `r` at 0-based position `i`.
    pub fn of(i: usize, r: &'a Run) -> RunView<'a> {
        RunView {
            row: i + 1,
            gpu: &r.gpu,
            kernel: &r.kernel,
            config: &r.config,
            time_ms: r.time_ms,
            flops: r.flops,
            dram_bytes: r.dram_bytes,
            flags: r.flags.join(";"),
        }
    }
}

/// `gpucast bench`'s timings for reading: seconds to the centisecond, memory in MiB
/// (its JSON is the [`Timing`](crate::bench::Timing)s themselves, unrounded).
pub fn timings_table(timings: &[crate::bench::Timing]) -> Table {
    let mut t = Table::new(&[
        "stage",
        "rows",
        "gpus",
        "threads",
        "min s",
        "repeats s",
        "rows/s",
        "peak RSS MB",
    ]);
    for timing in timings {
        t.push(vec![
            timing.stage.to_string(),
            timing.rows.to_string(),
            timing.gpus.to_string(),
            timing.threads.to_string(),
            format!("{:.2}", timing.min_seconds),
            timing
                .seconds
                .iter()
                .map(|s| format!("{s:.2}"))
                .collect::<Vec<_>>()
                .join(" "),
            format!("{:.0}", timing.rows_per_second),
            timing
                .peak_rss_bytes
                .map(|b| format!("{:.0}", b as f64 / 1048576.0))
                .unwrap_or_else(|| "-".into()),
        ]);
    }
    t
}

/// One line per GPU.
pub fn gpus_table(gpus: &[&Gpu]) -> Table {
    let mut t = Table::new(&[
        "name",
        "arch",
        "cc",
        "SMs",
        "boost MHz",
        "FP32 GFLOP/s",
        "DRAM GB/s",
        "L2 MiB",
    ]);
    for g in gpus {
        t.push(vec![
            g.name.clone(),
            g.arch.clone(),
            g.compute_capability.clone(),
            g.sm_count.to_string(),
            format!("{:.0}", g.boost_clock_mhz),
            format!("{:.0}", g.fp32_gflops),
            format!("{:.0}", g.mem_bandwidth_gbs),
            format!("{:.1}", g.l2_bytes as f64 / 1048576.0),
        ]);
    }
    t
}

/// A GPU's DRAM and L2 roofs of the spec calibration and where each comes from: a
/// measured figure (with its source) or the vendor figure and the default share.
fn roofs_line(gpu: &crate::catalog::Gpu) -> String {
    use crate::features::figures::{Figures, L2_BYTES_PER_CLOCK_PER_SM, SUSTAINED_DRAM_FRACTION};
    let f = Figures::spec(gpu);
    let measured = gpu.measured_source.as_deref().unwrap_or("source not given");
    let dram = match gpu.sustained_bandwidth_gbs {
        Some(_) => format!("measured: {measured}"),
        None => format!(
            "{:.0} % of the vendor's {:.0}",
            100.0 * SUSTAINED_DRAM_FRACTION,
            gpu.mem_bandwidth_gbs
        ),
    };
    let l2 = match gpu.l2_bandwidth_gbs {
        Some(_) => "measured".to_string(),
        None => format!("{L2_BYTES_PER_CLOCK_PER_SM} B per SM clock"),
    };
    format!(
        "{}: DRAM {:.0} ({dram}); L2 {:.0} ({l2})",
        gpu.name, f.dram_gbs, f.l2_gbs
    )
}

fn features_line(x: &RunFeatures) -> String {
    let limiting = x.limiting();
    let bound = if limiting == x.bound {
        limiting.to_string()
    } else {
        // the roofs' largest term is not what limits: say both
        format!(
            "{limiting} (largest roof {} is under half the launch floor)",
            x.bound
        )
    };
    let l1 = if x.hierarchical {
        format!(", l1+shared {:.6}", x.l1_ms)
    } else {
        String::new()
    };
    format!(
        "bound {:<7} roof {:.6} ms (dram {:.6}, l2 {:.6}{l1}, compute {:.6}, atomic {:.6}) occupancy {} waves {} floor {:.4} ms{}",
        bound,
        x.roof_ms,
        x.dram_ms,
        x.l2_ms,
        x.compute_ms,
        x.atomic_ms,
        x.occupancy
            .map(|o| format!("{:.3} ({} blocks/SM, {})", o.occupancy, o.blocks_per_sm, o.limiter))
            .unwrap_or_else(|| "unknown".into()),
        x.waves
            .map(|w| format!("{w:.2} (tail {:.2})", x.tail_efficiency.unwrap_or(1.0)))
            .unwrap_or_else(|| "unknown".into()),
        x.launch_floor_ms,
        if x.hierarchical {
            ", hierarchical roofline from profiled traffic"
        } else if x.fits_l2 {
            ", working set fits L2"
        } else {
            ""
        }
    )
}

/// Whether `run`'s FLOPs are FP32 on the CUDA cores (the FLOP roof the issue share
/// scales).
fn is_fp32(run: &Run) -> bool {
    matches!(
        crate::catalog::PrecisionClass::from_label(run.precision()),
        crate::catalog::PrecisionClass::Fp32 | crate::catalog::PrecisionClass::Other
    )
}

/// Every term of the projections of one query (made as `fitted` makes them: its
/// sources weighted by their similarity to its power, the target on its sources'
/// launch floors where it chose that) and their combination, with what its calibrated
/// interval comes from (the training GPUs' held-out errors pooled, or weighted by
/// their similarity to the target).
#[allow(clippy::too_many_arguments)]
pub fn explain_text(
    query: &Query,
    target: &str,
    calibration: &str,
    projections: &[(&Run, Projection)],
    fitted: &crate::models::analytical::FittedAnalytical,
    combined: Option<&Prediction>,
    roofs_of: &[&crate::catalog::Gpu],
    catalog: &crate::catalog::Catalog,
) -> String {
    let similarity_power = fitted.similarity_power;
    let local_interval_power = fitted.interval.local.as_ref().map(|l| l.similarity_power);
    let mut s = format!(
        "{} {} -> {target}  (calibration: {calibration})\n",
        query.kernel, query.config
    );
    if !roofs_of.is_empty() {
        s += "\nroofs (GB/s):\n";
        for gpu in roofs_of {
            s += &format!("  {}\n", roofs_line(gpu));
        }
    }
    let weight_sum: f64 = projections.iter().map(|(_, p)| p.weight).sum();
    for (source, p) in projections {
        s += &format!("\nsource {}: measured {:.6} ms\n", source.gpu, p.source_ms);
        s += &format!("  source  {}\n", features_line(&p.source));
        s += &format!("  target  {}\n", features_line(&p.target));
        if let Some(line) = instruction_line(source, target, catalog) {
            s += &line;
        }
        for (side, gpu) in [
            ("source", catalog.resolve(&source.gpu)),
            ("target", catalog.resolve(target)),
        ] {
            let share = gpu.map_or(1.0, crate::features::instruction::fp32_issue_fraction);
            if share < 1.0
                && !crate::features::instruction::InstructionCounts::carried(source)
                && is_fp32(source)
            {
                s += &format!(
                    "  {side} FP32 roof x{share:.2}: its FP32 lanes are fed by four single-issue schedulers, {:.0} % of the instructions FFMA (no instruction counts)\n",
                    100.0 * crate::features::instruction::DEFAULT_FFMA_SHARE
                );
            }
        }
        s += &format!("  busy (measured - floor)  {:.6} ms\n", p.busy_source_ms);
        let efficiency = if p.source.occupancy.is_some() {
            format!("{:.3}", p.efficiency)
        } else {
            "unknown (occupancy unknown: no block size or registers)".into()
        };
        s += &format!("  efficiency (roof / (occupancy x measured))  {efficiency}\n");
        s += &format!(
            "  roof share (eta) {:.3}: time ratio = roof ratio {:.4}^eta x latency ratio {:.4}^(1-eta) x wave ratio {:.4}  (the study's occupancy ratio: {:.4})\n",
            p.roof_share, p.roof_ratio, p.latency_ratio, p.wave_ratio, p.occupancy_ratio
        );
        if crate::models::analytical::roof_basis(&p.source)
            == crate::models::analytical::RoofBasis::RoofOnly
        {
            s += "  compute-bound without launch geometry: the time scales with the compute roof alone (eta = 1)\n";
        }
        s += &format!(
            "  projection {:.6} ms  (with DRAM roof {:.6}, with L2 roof {:.6})\n",
            p.pred_ms, p.pred_dram_ms, p.pred_l2_ms
        );
        // (the analytical model counts a source of the target's architecture e times as
        // similar: `analytical::SAME_ARCH_SIMILARITY`)
        let same_arch = if p.same_arch {
            " x e: the target's compute capability"
        } else {
            ""
        };
        s += &format!(
            "  weight {:.4}: {:.1} % of the combination (similarity {:.3}{same_arch}, to the power {similarity_power})\n",
            p.weight,
            100.0 * p.weight / weight_sum.max(f64::MIN_POSITIVE),
            p.similarity
        );
    }
    if fitted.launch_floors == crate::models::LaunchFloors::Sources {
        s += "\nlaunch floor: the target's is each source's (its GPU's fastest run), as the fit chose on the training GPUs\n";
    }
    if let Some(c) = combined {
        s += &format!("\n{}", prediction_line("combined", c));
        if let crate::models::Interval::Calibrated(_) = c.interval {
            s += &match local_interval_power {
                Some(k) => format!("interval: the training GPUs' held-out errors, each GPU's weighted by its similarity to the target to the power {k}, and never narrower than the sources' spread\n"),
                None => "interval: the training GPUs' held-out errors, pooled, and never narrower than the sources' spread\n".to_string(),
            };
        }
    }
    s
}

/// What each of a hybrid's fitted stages did to one prediction (`explain --model`):
/// its sources' projections combined with its own weights, each stage's factor in the
/// order they apply, and the prediction with its interval. `label` names the model,
/// `fit` is what its fit chose (`Predict::fit_summary`).
pub fn hybrid_stages_text(
    label: &str,
    fit: Option<&str>,
    similarity_power: i32,
    trace: &crate::models::stages::StageTrace,
    prediction: Option<&Prediction>,
) -> String {
    let Some(p) = prediction else {
        return format!("\nhybrid ({label}): no source to predict from\n");
    };
    let mut s = format!(
        "\nhybrid ({label}): its sources' projections combined {:.6} ms (weighted by their similarity to the power {similarity_power})\n",
        trace.combined_ms
    );
    if let Some(fit) = fit {
        s += &format!("  (its fit: {fit})\n");
    }
    let width = trace
        .effects
        .iter()
        .map(|e| e.stage.len())
        .max()
        .unwrap_or(0);
    for e in &trace.effects {
        let did = if e.factor == 1.0 {
            "  (does nothing for this prediction)"
        } else {
            ""
        };
        s += &format!("  {:<width$}  x{:.4}{did}\n", e.stage, e.factor);
    }
    s + &prediction_line("hybrid", p)
}

/// `explain`'s line for a prediction: its time, interval (and what kind) and bound.
fn prediction_line(name: &str, p: &Prediction) -> String {
    format!(
        "{name}: {:.6} ms  interval [{:.6}, {:.6}] ({})  bound {}\n",
        p.pred_ms,
        p.lo_ms,
        p.hi_ms,
        p.interval.label(),
        p.bound
    )
}

/// `explain`'s line on a source's instruction roofs (issue and ALU lanes, part of the
/// compute roof: [`crate::features::instruction::InstructionCounts::roofs`]) on its
/// GPU and on the target; None when the source carries no instruction counts.
fn instruction_line(
    source: &Run,
    target: &str,
    catalog: &crate::catalog::Catalog,
) -> Option<String> {
    use crate::features::instruction::{self, InstructionCounts};
    let counts = InstructionCounts::of(source, catalog);
    if !counts.any() {
        return None;
    }
    let gs = catalog.resolve(&source.gpu)?;
    let gt = catalog.resolve(target)?;
    let (rs, rt) = (counts.roofs(gs, catalog), counts.roofs(gt, catalog));
    let ms = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.6}"));
    let mut line = format!(
        "  instruction roofs (in compute): issue {} -> {} ms",
        ms(rs.issue_ms),
        ms(rt.issue_ms)
    );
    if let Some((n, _)) = counts.warp {
        line += &format!(
            " ({n:.0} warp instructions at {:.1} -> {:.1} GIPS)",
            instruction::peak_gips(gs),
            instruction::peak_gips(gt)
        );
    }
    if counts.fp32_int_thread.is_some() {
        line += &format!(
            ", FP32/INT32 lanes {} -> {} ms",
            ms(rs.alu_ms),
            ms(rt.alu_ms)
        );
    }
    Some(line + "\n")
}

/// Counts by reason as `reason=n reason=n`.
/// The lines below `data validate`'s table: the totals, the rows each rule excluded
/// and what was not read as runs; the rows each rule excluded and the kept rows each
/// flag marks ([`ValidationReport::excluded_by_rule`],
/// [`ValidationReport::flagged_by_rule`]).
pub fn validation_footer(rep: &ValidationReport) -> String {
    let share = 100.0 * rep.excluded as f64 / rep.rows.max(1) as f64;
    let per = |c: &crate::data::validate::RuleCounts| {
        let each: Vec<String> = c.0.iter().map(|(k, n)| format!("{k} {n}")).collect();
        if each.is_empty() {
            "none".to_string()
        } else {
            each.join(", ")
        }
    };
    format!(
        "{} rows in {} file(s): {} flagged, {} excluded from models ({share:.2} %; the rules in `data::validate`: physically impossible, or run on an SM partition){}\nexcluded, rows per rule: {}\nkept with a flag, rows per flag: {}",
        rep.rows,
        rep.files.len(),
        rep.flagged,
        rep.excluded,
        not_imported_text(rep)
            .map(|t| format!("; {t}"))
            .unwrap_or_default(),
        per(&rep.excluded_by_rule),
        per(&rep.flagged_by_rule),
    )
}

/// What loading the data did not read as runs ([`ValidationReport::not_imported`]:
/// failed runner rows, failed configurations and rows an importer could not use), in
/// a line; None when it read everything.
pub fn not_imported_text(rep: &ValidationReport) -> Option<String> {
    let n: usize = rep.not_imported.values().sum();
    (n > 0).then(|| {
        format!(
            "{n} entr{} of the data not read as runs ({}; `gpucast data import FILE -o runs.csv` counts them per file)",
            if n == 1 { "y" } else { "ies" },
            crate::data::counts_text(&rep.not_imported)
        )
    })
}

/// Per imported file: rows, failed configurations and left-out rows by reason; and
/// the lines below it: totals, the features imported rows lack and why, notes.
pub fn import_report(rep: &ImportReport) -> (Table, String) {
    let mut t = Table::new(&[
        "file", "format", "gpu", "kernel", "rows", "failed", "left_out",
    ]);
    for f in &rep.files {
        t.push(vec![
            f.file.clone(),
            f.format.clone(),
            f.gpus.join("; "),
            if f.kernels.len() > 4 {
                format!("{} kernels", f.kernels.len())
            } else {
                f.kernels.join("; ")
            },
            f.rows.to_string(),
            crate::data::counts_text(&f.failed),
            crate::data::counts_text(&f.left_out),
        ]);
    }
    let mut lines = vec![format!(
        "{} rows imported; {} failed configurations not imported ({} absurd times)",
        rep.rows(),
        rep.failed_total(),
        rep.absurd_times()
    )];
    for (feature, (rows, why)) in rep.missing() {
        lines.push(format!(
            "missing {feature} in {rows} rows: {}",
            why.join("; ")
        ));
    }
    if let Some(first) = rep.skipped.first() {
        lines.push(format!(
            "skipped {} file(s) of no recognised format in the input directories (first: {first})",
            rep.skipped.len()
        ));
    }
    for f in &rep.files {
        for n in &f.notes {
            lines.push(format!("note: {}: {n}", f.file));
        }
    }
    (t, lines.join("\n"))
}

/// Where one GPU was measured by two sources: over the configurations both measured,
/// the mean absolute difference of the second source's times from the first's (%),
/// the median time ratio (second / first) and the Spearman rank correlation — the
/// realistic noise floor of any prediction for that GPU.
pub fn cross_source_table(runs: &[Run]) -> Table {
    use std::collections::{BTreeMap, BTreeSet, HashMap};
    let mut t = Table::new(&[
        "gpu",
        "kernel",
        "source a",
        "source b",
        "common configs",
        "mean |b/a - 1| %",
        "median b/a",
        "Spearman",
    ]);
    let mut sources: BTreeMap<(&str, &str), BTreeSet<&str>> = BTreeMap::new();
    for r in runs {
        if let Some(s) = r.source.as_deref() {
            sources.entry((&r.gpu, &r.kernel)).or_default().insert(s);
        }
    }
    for ((gpu, kernel), srcs) in sources.into_iter().filter(|(_, s)| s.len() >= 2) {
        let srcs: Vec<&str> = srcs.into_iter().collect();
        let times = |src: &str| -> HashMap<&str, f64> {
            runs.iter()
                .filter(|r| r.gpu == gpu && r.kernel == kernel && r.source.as_deref() == Some(src))
                .map(|r| (r.config.as_str(), r.time_ms))
                .collect()
        };
        for (i, a) in srcs.iter().enumerate() {
            for b in &srcs[i + 1..] {
                let (ta, tb) = (times(a), times(b));
                let pairs: Vec<(f64, f64)> = ta
                    .iter()
                    .filter_map(|(c, x)| tb.get(c).map(|y| (*x, *y)))
                    .collect();
                if pairs.is_empty() {
                    continue;
                }
                let m = crate::evaluation::Metrics::from_pairs(pairs.iter().map(|(x, y)| (*y, *x)));
                let (xa, xb): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
                t.push(vec![
                    gpu.to_string(),
                    kernel.to_string(),
                    a.to_string(),
                    b.to_string(),
                    pairs.len().to_string(),
                    super::pct(m.mape),
                    super::fixed3(m.median_ratio),
                    super::fixed3(crate::evaluation::spearman(&xa, &xb)),
                ]);
            }
        }
    }
    t
}
