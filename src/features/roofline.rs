//! Roofline: peaks, roofs and the bound that limits a run. Each formula lives here once.

use crate::catalog::Gpu;

/// Peak GFLOP/s of `gpu` for a precision label of the runs table: the catalog's
/// [`Gpu::peak_gflops`] (the one place a label maps to a peak; its doc says how a
/// precision without a figure falls back).
pub fn peak_gflops(gpu: &Gpu, precision: &str) -> f64 {
    gpu.peak_gflops(precision)
}

/// The roof (resource) that limits a run.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    /// Device-memory bandwidth.
    Dram,
    /// L2 bandwidth (the working set fits in L2, or profiled L2 traffic binds).
    L2,
    /// L1 / shared-memory bandwidth (profiled L1 and shared traffic binds).
    L1,
    /// Arithmetic throughput (FLOPs at peak, or instructions at their lanes' rate).
    Compute,
    /// Instruction issue: the run's warp instructions at the SMs' peak issue rate.
    Issue,
    /// Throughput of atomics on contended addresses.
    Atomic,
    /// Nothing but the launch floor (no FLOPs, no bytes).
    Launch,
}

impl Bound {
    pub fn as_str(self) -> &'static str {
        match self {
            Bound::Dram => "dram",
            Bound::L2 => "l2",
            Bound::L1 => "l1",
            Bound::Compute => "compute",
            Bound::Issue => "issue",
            Bound::Atomic => "atomic",
            Bound::Launch => "launch",
        }
    }
    pub const ALL: [Bound; 7] = [
        Bound::Dram,
        Bound::L2,
        Bound::Compute,
        Bound::Atomic,
        Bound::Launch,
        Bound::L1,
        Bound::Issue,
    ];
    pub fn index(self) -> usize {
        Bound::ALL.iter().position(|b| *b == self).unwrap_or(0)
    }
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Time in ms to move `bytes` at `gbs` GB/s.
pub fn memory_time_ms(bytes: f64, gbs: f64) -> f64 {
    if bytes <= 0.0 || gbs <= 0.0 {
        0.0
    } else {
        bytes / (gbs * 1e9) * 1e3
    }
}

/// Time in ms to execute `flops` at `gflops` GFLOP/s.
pub fn compute_time_ms(flops: f64, gflops: f64) -> f64 {
    if flops <= 0.0 || gflops <= 0.0 {
        0.0
    } else {
        flops / (gflops * 1e9) * 1e3
    }
}

/// Arithmetic intensity, FLOP per DRAM byte (infinite when no bytes move).
pub fn arithmetic_intensity(flops: f64, bytes: f64) -> f64 {
    if bytes > 0.0 {
        flops / bytes
    } else if flops > 0.0 {
        f64::INFINITY
    } else {
        0.0
    }
}

/// Attainable GFLOP/s under the classic roofline: min(peak, AI x bandwidth).
pub fn attainable_gflops(intensity: f64, peak_gflops: f64, bandwidth_gbs: f64) -> f64 {
    (intensity * bandwidth_gbs).min(peak_gflops)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roof_times() {
        // 1 GB at 500 GB/s = 2 ms; 1 TFLOP at 10 TFLOP/s = 100 ms.
        assert!((memory_time_ms(1e9, 500.0) - 2.0).abs() < 1e-12);
        assert!((compute_time_ms(1e12, 10_000.0) - 100.0).abs() < 1e-9);
        assert_eq!(memory_time_ms(0.0, 500.0), 0.0);
        assert_eq!(arithmetic_intensity(10.0, 0.0), f64::INFINITY);
        assert_eq!(arithmetic_intensity(0.0, 0.0), 0.0);
        assert!((arithmetic_intensity(2.0, 8.0) - 0.25).abs() < 1e-12);
        // ridge: AI 10 at 500 GB/s = 5000 GFLOP/s < peak 14000
        assert!((attainable_gflops(10.0, 14_000.0, 500.0) - 5000.0).abs() < 1e-9);
        assert!((attainable_gflops(100.0, 14_000.0, 500.0) - 14_000.0).abs() < 1e-9);
    }
}
