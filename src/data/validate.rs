//! Validation: hard errors (one line naming file, row, column; the load fails) and
//! warnings (rows kept, the `flags` column says why).
//!
//! Warnings and the exclusion rule (see [`is_excluded`]):
//! - `flat_time:<F>x` — within one (gpu, kernel) another row has F >= 4 times the work
//!   (max of FLOPs and DRAM bytes) but less than F^0.25 times the time (e.g. the TITAN X
//!   conv2d rows). Over 4x this can be honest (a launch floor, an L2-resident working
//!   set); over F >= 16x it is not, and such rows are excluded.
//! - `below_launch_floor` — time below 1 µs, faster than any back-to-back launch rate
//!   measured on NVIDIA GPUs (the reference study's floor is 1.3-5.5 µs). Kept.
//! - `above_peak_bandwidth` — DRAM bytes / time above 1.05 x the GPU's peak bandwidth
//!   while the working set does not fit in L2 (so no cache can explain it). Excluded.
//! - `above_peak_flops` — FLOP/s above 1.05 x the peak for the run's precision. Excluded.
//! - `single_gpu` — the (kernel, config) was measured on one GPU only: it cannot be
//!   used as a source->target pair. Kept.

use super::{Run, RunsTable};
use crate::catalog::Catalog;
use crate::error::{Error, Result};
use crate::features::roofline::peak_gflops;
use std::collections::{BTreeMap, HashMap};

/// Flag prefixes this module writes (recomputed on every validation).
const OWN_FLAGS: [&str; 5] = [
    "flat_time",
    "below_launch_floor",
    "above_peak_bandwidth",
    "above_peak_flops",
    "single_gpu",
];
/// "Does not grow": the time grows by less than (work growth)^0.25 (2x for 16x the work),
/// far less than any roof or latency model allows outside a launch floor.
const FLAT_GROWTH_EXPONENT: f64 = 0.25;
/// Work growth at which a flat time is flagged / excluded.
const FLAT_FLAG_FACTOR: f64 = 4.0;
const FLAT_EXCLUDE_FACTOR: f64 = 16.0;
/// Plausible launch floor in milliseconds (1 µs).
pub const LAUNCH_FLOOR_MS: f64 = 1e-3;
const PEAK_SLACK: f64 = 1.05;

/// The documented, generic exclusion rule: a row is left out of fitting and scoring
/// when its measurement is physically implausible (above a peak that no cache explains)
/// or sits on a plateau over >= 16x growth of work.
pub fn is_excluded(run: &Run) -> bool {
    run.flags.iter().any(|f| {
        f == "above_peak_bandwidth"
            || f == "above_peak_flops"
            || f.strip_prefix("flat_time:")
                .and_then(|x| x.trim_end_matches('x').parse::<f64>().ok())
                .is_some_and(|factor| factor >= FLAT_EXCLUDE_FACTOR)
    })
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct GpuSummary {
    pub gpu: String,
    pub rows: usize,
    pub kernels: usize,
    pub configs: usize,
    pub flagged: usize,
    pub excluded: usize,
    /// flag name (without its value) -> rows
    pub reasons: BTreeMap<String, usize>,
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ValidationReport {
    pub files: Vec<String>,
    pub rows: usize,
    pub flagged: usize,
    pub excluded: usize,
    pub skipped_error_rows: usize,
    pub per_gpu: Vec<GpuSummary>,
}

/// Check a loaded table against the catalog: resolve GPU names (rows then carry the
/// catalog's canonical name), reject duplicates, and set the warning flags.
pub fn validate(table: &mut RunsTable, catalog: &Catalog) -> Result<ValidationReport> {
    for run in &mut table.runs {
        let gpu = catalog.resolve(&run.gpu).ok_or_else(|| {
            Error::cell(
                &*run.origin.file,
                run.origin.row,
                "gpu",
                format!(
                    "unknown GPU '{}': not in the catalog (add it with --gpus FILE)",
                    run.gpu
                ),
            )
        })?;
        run.gpu = gpu.name.clone();
        run.flags
            .retain(|f| !OWN_FLAGS.iter().any(|o| f.starts_with(o)));
    }

    let mut seen: HashMap<(&str, &str, &str), &Run> = HashMap::new();
    for run in &table.runs {
        if let Some(first) = seen.insert((&run.gpu, &run.kernel, &run.config), run) {
            return Err(Error::cell(
                &*run.origin.file,
                run.origin.row,
                "config",
                format!(
                    "duplicate (gpu, kernel, config) = ({}, {}, {}): also at {}",
                    run.gpu, run.kernel, run.config, first.origin
                ),
            ));
        }
    }

    flag_flat_time(&mut table.runs);
    flag_peaks(&mut table.runs, catalog);
    flag_single_gpu(&mut table.runs);
    Ok(summarize(table))
}

fn flag_flat_time(runs: &mut [Run]) {
    let mut groups: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    for (i, r) in runs.iter().enumerate() {
        if r.work() > 0.0 {
            groups
                .entry((r.gpu.clone(), r.kernel.clone()))
                .or_default()
                .push(i);
        }
    }
    // The largest work growth over which each row's time failed to grow.
    let mut growth = vec![0.0f64; runs.len()];
    for idx in groups.values() {
        for &a in idx {
            for &b in idx {
                let g = runs[b].work() / runs[a].work();
                if g >= FLAT_FLAG_FACTOR
                    && runs[b].time_ms / runs[a].time_ms < g.powf(FLAT_GROWTH_EXPONENT)
                {
                    growth[a] = growth[a].max(g);
                    growth[b] = growth[b].max(g);
                }
            }
        }
    }
    for (r, g) in runs.iter_mut().zip(growth) {
        if g > 0.0 {
            r.flags.push(format!("flat_time:{}x", g.round()));
        }
    }
}

fn flag_peaks(runs: &mut [Run], catalog: &Catalog) {
    for r in runs.iter_mut() {
        let Some(gpu) = catalog.resolve(&r.gpu) else {
            continue;
        };
        let secs = r.time_ms * 1e-3;
        if r.time_ms < LAUNCH_FLOOR_MS {
            r.flags.push("below_launch_floor".into());
        }
        let working_set = r.working_set_bytes.unwrap_or(r.dram_bytes);
        let bw_gbs = r.dram_bytes / secs / 1e9;
        if bw_gbs > PEAK_SLACK * gpu.mem_bandwidth_gbs && working_set > gpu.l2_bytes as f64 {
            r.flags.push("above_peak_bandwidth".into());
        }
        let gflops = r.flops / secs / 1e9;
        if gflops > PEAK_SLACK * peak_gflops(gpu, r.precision()) {
            r.flags.push("above_peak_flops".into());
        }
    }
}

fn flag_single_gpu(runs: &mut [Run]) {
    let mut gpus_per_work: HashMap<(String, String), Vec<String>> = HashMap::new();
    for r in runs.iter() {
        let e = gpus_per_work
            .entry((r.kernel.clone(), r.config.clone()))
            .or_default();
        if !e.contains(&r.gpu) {
            e.push(r.gpu.clone());
        }
    }
    let n_gpus = {
        let mut g: Vec<&str> = runs.iter().map(|r| r.gpu.as_str()).collect();
        g.sort();
        g.dedup();
        g.len()
    };
    if n_gpus < 2 {
        return;
    }
    for r in runs.iter_mut() {
        if gpus_per_work[&(r.kernel.clone(), r.config.clone())].len() == 1 {
            r.flags.push("single_gpu".into());
        }
    }
}

fn summarize(table: &RunsTable) -> ValidationReport {
    let mut per_gpu: Vec<GpuSummary> = Vec::new();
    for gpu in table.gpus() {
        let rows: Vec<&Run> = table.runs.iter().filter(|r| r.gpu == gpu).collect();
        let mut kernels: Vec<&str> = rows.iter().map(|r| r.kernel.as_str()).collect();
        kernels.sort();
        kernels.dedup();
        let mut reasons = BTreeMap::new();
        for r in &rows {
            for f in &r.flags {
                let name = f.split(':').next().unwrap_or(f).to_string();
                *reasons.entry(name).or_insert(0) += 1;
            }
        }
        per_gpu.push(GpuSummary {
            gpu,
            rows: rows.len(),
            kernels: kernels.len(),
            configs: rows.len(),
            flagged: rows.iter().filter(|r| !r.flags.is_empty()).count(),
            excluded: rows.iter().filter(|r| is_excluded(r)).count(),
            reasons,
        });
    }
    ValidationReport {
        files: table.files.clone(),
        rows: table.runs.len(),
        flagged: per_gpu.iter().map(|g| g.flagged).sum(),
        excluded: per_gpu.iter().map(|g| g.excluded).sum(),
        skipped_error_rows: table.skipped_error_rows,
        per_gpu,
    }
}
