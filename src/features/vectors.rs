//! Feature vectors for the learned models, built from [`RunFeatures`] so each
//! quantity is computed once.
//!
//! - [`workload_hardware`]: the study's ML setup — the run's workload and its GPU's
//!   hardware, to predict log time directly.
//! - [`pair`]: GPU-agnostic features of a source -> target projection for the hybrid's
//!   residual: ratios of target to source figures, occupancies, intensity, bound, waves,
//!   working set relative to L2, precision and the data's kernel category.

use super::{Bound, RunFeatures};
use crate::catalog::{ln_ratio, Gpu};
use crate::data::{Query, Run};

fn ln1(x: f64) -> f64 {
    (x.max(0.0) + 1.0).ln()
}

fn precision_onehot(run: &Run) -> [f64; 3] {
    crate::catalog::PrecisionClass::onehot(run.precision())
}

/// One-hot of the binding roof; the on-chip levels (L2, L1) share a slot, and so do
/// compute and instruction issue (both the SMs' throughput), so runs without profiled
/// L1 traffic or instruction counts (every corpus so far) keep the same columns.
fn bound_onehot(b: Bound) -> [f64; 5] {
    let mut v = [0.0; 5];
    let b = match b {
        Bound::L1 => Bound::L2,
        Bound::Issue => Bound::Compute,
        b => b,
    };
    v[b.index()] = 1.0;
    v
}

/// Names of [`workload_hardware`]'s columns.
pub const WORKLOAD_HARDWARE_NAMES: &[&str] = &[
    "ln_flops",
    "ln_dram_bytes",
    "ln_intensity",
    "ln_working_set",
    "block_threads",
    "ln_grid_blocks",
    "regs_per_thread",
    "smem_per_block",
    "occupancy",
    "ln_waves",
    "ln_sm_count",
    "ln_clock_mhz",
    "ln_bandwidth",
    "ln_fp32_gflops",
    "ln_l2_bytes",
    "compute_capability",
    "ln_roof_ms",
    "fp32",
    "fp64",
    "fp16",
];

/// Workload + hardware features of a run on its GPU.
pub fn workload_hardware(run: &Run, gpu: &Gpu, f: &RunFeatures) -> Vec<f64> {
    let mut v = vec![
        ln1(run.flops),
        ln1(run.dram_bytes),
        ln1(f.intensity.min(1e6)),
        ln1(f.working_set_bytes),
        run.block_threads.unwrap_or(0.0),
        ln1(run.grid_blocks.unwrap_or(0.0)),
        run.regs_per_thread.unwrap_or(0.0),
        run.smem_per_block.unwrap_or(0.0),
        f.occupancy.map(|o| o.occupancy).unwrap_or(0.0),
        ln1(f.waves.unwrap_or(0.0)),
        (gpu.sm_count as f64).ln(),
        gpu.boost_clock_mhz.ln(),
        gpu.mem_bandwidth_gbs.ln(),
        gpu.fp32_gflops.ln(),
        (gpu.l2_bytes as f64).ln(),
        gpu.cc_number(),
        (f.roof_ms.max(1e-6)).ln(),
    ];
    v.extend(precision_onehot(run));
    v
}

/// Names of [`pair`]'s columns (before the category one-hot).
pub const PAIR_NAMES: &[&str] = &[
    "ln_bw_ratio",
    "ln_compute_ratio",
    "ln_sm_ratio",
    "ln_l2_ratio",
    "ln_clock_ratio",
    "cc_delta",
    "async_mma_delta",
    "occ_source",
    "occ_target",
    "ln_intensity",
    "ln_waves_target",
    "ln_ws_over_l2_source",
    "ln_ws_over_l2_target",
    "ln_busy_fraction_source",
    "ln_roof_over_floor_target",
    "bound_dram",
    "bound_l2",
    "bound_compute",
    "bound_atomic",
    "bound_launch",
    "source_bound_same",
    "ln_work_ratio",
    "fp32",
    "fp64",
    "fp16",
];

/// GPU-agnostic features of projecting `src` (on `gs`) onto `query`'s work on `gt`. `categories` is the
/// category vocabulary learned at fit time; the run's category becomes a one-hot.
pub fn pair(
    src: &Run,
    query: &Query,
    gs: &Gpu,
    gt: &Gpu,
    fs: &RunFeatures,
    ft: &RunFeatures,
    categories: &[String],
) -> Vec<f64> {
    let cc = |g: &Gpu| g.cc_number();
    let mma = |g: &Gpu| if g.async_tensor_mma() { 1.0 } else { 0.0 };
    let occ = |f: &RunFeatures| f.occupancy.map(|o| o.occupancy).unwrap_or(0.0);
    let busy_fraction = ((src.time_ms - fs.launch_floor_ms) / src.time_ms).clamp(0.01, 1.0);
    let mut v = vec![
        ln_ratio(gt.mem_bandwidth_gbs, gs.mem_bandwidth_gbs),
        ln_ratio(gt.fp32_gflops, gs.fp32_gflops),
        ln_ratio(gt.sm_count as f64, gs.sm_count as f64),
        ln_ratio(gt.l2_bytes as f64, gs.l2_bytes as f64),
        ln_ratio(gt.boost_clock_mhz, gs.boost_clock_mhz),
        cc(gt) - cc(gs),
        mma(gt) - mma(gs),
        occ(fs),
        occ(ft),
        ln1(ft.intensity.min(1e6)),
        ln1(ft.waves.unwrap_or(0.0)),
        ln_ratio(fs.working_set_bytes.max(1.0), gs.l2_bytes as f64),
        ln_ratio(ft.working_set_bytes.max(1.0), gt.l2_bytes as f64),
        busy_fraction.ln(),
        ln_ratio(ft.roof_ms.max(1e-9), ft.launch_floor_ms),
    ];
    v.extend(bound_onehot(ft.bound));
    v.push(if fs.bound == ft.bound { 1.0 } else { 0.0 });
    v.push(ln_ratio(query.work().max(1.0), src.work().max(1.0)));
    v.extend(precision_onehot(src));
    let cat = src.category.as_deref().unwrap_or("");
    v.extend(categories.iter().map(|c| if c == cat { 1.0 } else { 0.0 }));
    v
}
