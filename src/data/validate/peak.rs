//! The peak rules of validation (see the parent module): a row's bytes and FLOPs
//! against what its board can move and compute in its time, and the convolutions
//! whose FLOP counts credit them with more work than they execute.

use super::rows::{Verdict, LAUNCH_FLOOR_MS, PEAK_SLACK};
use crate::catalog::Gpu;
use crate::data::{Exclusion, Run, Warning};

/// How far above its rated boost clock (the catalog's `boost_clock_mhz`, at which its
/// peaks are given) a board may run: GPU Boost raises the clock while power and
/// temperature allow. The reference study's `gpu_metrics.json` reads each board's
/// highest SM clock from the driver: the GTX TITAN X 1215.5 MHz over its rated 1075
/// (1.13x), the RTX 2080 Ti 1635 over 1545 (1.06x), the RTX 4070 2505 over 2475; a GTX
/// 1080 Ti runs a GEMM at 12.1 TFLOP/s over its rated 11.3. 1.15 covers the largest.
/// DRAM does not boost: bandwidth keeps `PEAK_SLACK` alone.
pub const MAX_BOOST_OVER_RATED: f64 = 1.15;

/// The most FLOP/s a run of `gpu` can reach at `precision`'s peak: the boost headroom
/// and the measurement slack over the rated figure.
pub fn flops_bound(gpu: &Gpu, precision: &str) -> f64 {
    gpu.peak_gflops(precision) * MAX_BOOST_OVER_RATED * PEAK_SLACK
}

pub(super) fn peak_verdict(r: &Run, gpu: &Gpu) -> Verdict {
    let mut v = Verdict::default();
    let secs = r.time_ms * 1e-3;
    let working_set = r.working_set_bytes.unwrap_or(r.dram_bytes);
    // A repeated run finds up to its caches' capacity of its working set there: only
    // the rest must cross DRAM in its time.
    let caches = gpu.l2_bytes as f64 + gpu.llc_bytes.unwrap_or(0) as f64;
    let must_move = (working_set - caches).min(r.dram_bytes);
    let bw_gbs = r.dram_bytes / secs / 1e9;
    if must_move / secs / 1e9 > PEAK_SLACK * gpu.mem_bandwidth_gbs {
        v.exclusions.push(Exclusion::AbovePeakBandwidth {
            achieved_gbs: bw_gbs,
            peak_gbs: gpu.mem_bandwidth_gbs,
            working_set_bytes: working_set,
            l2_bytes: gpu.l2_bytes as f64,
        });
    }
    let gflops = r.flops / secs / 1e9;
    let bound = flops_bound(gpu, r.precision());
    if gflops > bound {
        let peak = gpu.peak_gflops(r.precision());
        let precision = r.precision().to_string();
        match convolution_taps(r) {
            Some(taps) if gflops <= taps * bound => v.warnings.push(Warning::AlgorithmicFlops {
                achieved_gflops: gflops,
                peak_gflops: peak,
                precision,
                max_saving: taps,
            }),
            _ => v.exclusions.push(Exclusion::AbovePeakFlops {
                achieved_gflops: gflops,
                peak_gflops: peak,
                precision,
            }),
        }
    }
    if r.time_ms < LAUNCH_FLOOR_MS {
        v.warnings
            .push(Warning::BelowLaunchFloor { time_ms: r.time_ms });
    }
    v
}

/// The filter taps of a convolution whose filter is larger than one tap: the most a
/// fast algorithm can save over the direct FLOPs the run is credited with. Every
/// algorithm still multiplies each input channel into each output at least once,
/// where the direct one does so once per tap (Winograd F(4x4, 3x3) does 4x fewer
/// multiplies than a 3x3 filter's 9; FFT's pointwise products are fewer than the taps
/// only for large filters). None for a run that is no convolution (by its kernel name
/// or category: a `conv`, `convolution`, `conv2d` or `winograd` word) or does not say
/// its filter (its config's `kernel_size`, `filter_width` and `filter_height`,
/// `kernel_h` and `kernel_w`, or an `RxS` word of the kernel name such as
/// `conv2d_3x3`).
pub fn convolution_taps(r: &Run) -> Option<f64> {
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_ascii_alphanumeric())
            .map(str::to_ascii_lowercase)
            .collect()
    };
    let mut names = words(&r.kernel);
    names.extend(r.category.as_deref().map(words).unwrap_or_default());
    let is_conv = |w: &str| {
        matches!(w, "conv" | "convolution" | "winograd")
            || matches!(w.strip_prefix("conv"), Some("1d" | "2d" | "3d"))
    };
    if !names.iter().any(|w| is_conv(w)) {
        return None;
    }
    let param = |key: &str| -> Option<f64> {
        r.config.split(',').find_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            (k.trim() == key).then(|| v.trim().parse::<f64>().ok())?
        })
    };
    let size = |w: &str| -> Option<f64> {
        let (a, b) = w.split_once('x')?;
        Some(a.parse::<f64>().ok()? * b.parse::<f64>().ok()?)
    };
    let taps = param("kernel_size")
        .map(|k| k * k)
        .or_else(|| Some(param("filter_width")? * param("filter_height")?))
        .or_else(|| Some(param("kernel_w")? * param("kernel_h")?))
        .or_else(|| names.iter().find_map(|w| size(w)))?;
    (taps.is_finite() && taps > 1.0).then_some(taps)
}
