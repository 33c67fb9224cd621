//! The run record's companions: where a row came from, and the typed verdicts
//! validation attaches to it (the `flags` column is their serialized form).

use crate::{Run, RunDetails};
use std::fmt;
use std::sync::Arc;

/// Where a row came from, for one-line messages.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Origin {
    pub file: Arc<str>,
    /// 1-based data row (the header is not a row).
    pub row: usize,
    /// The line an editor shows for the row's first line (header = line 1), when the
    /// file is text; `None` for Parquet.
    pub line: Option<usize>,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}", self.file),
            None => write!(f, "{}: row {}", self.file, self.row),
        }
    }
}

/// Why a row is left out of fitting and scoring: its measurement is physically
/// implausible, or it measured part of the GPU.
#[derive(Debug, Clone, PartialEq)]
pub enum Exclusion {
    /// The kernel ran on a partition of the GPU's SMs (a CUDA green context): a
    /// measurement of a smaller device, which the whole-GPU models must not mix with
    /// the GPU's own rows. Partition scaling is its own table.
    SmPartition {
        /// SMs the kernel ran on.
        sm_count: u32,
        /// SMs of the whole GPU.
        gpu_sms: u32,
    },
    /// Within one (GPU, kernel), the row and rows whose work differs from it by
    /// `work_ratio` (>= 16) times took nearly the same time, and most rows that far
    /// apart in work disagree with this one the same way.
    FlatTime {
        /// Work (the time its FLOPs and bytes need at the GPU's roofs) of the
        /// larger row over the smaller one of the most extreme pair.
        work_ratio: f64,
        /// Time of the larger row over the smaller one of that pair.
        time_ratio: f64,
        /// Rows far enough apart in work that disagree with this one.
        disagreeing: usize,
        /// Rows far enough apart in work to compare with this one.
        comparable: usize,
    },
    /// DRAM bytes over time above the GPU's peak bandwidth while the working set
    /// does not fit in L2 (no cache can explain it).
    AbovePeakBandwidth {
        achieved_gbs: f64,
        peak_gbs: f64,
        working_set_bytes: f64,
        l2_bytes: f64,
    },
    /// FLOPs over time above the GPU's peak for the run's precision.
    AbovePeakFlops {
        achieved_gflops: f64,
        peak_gflops: f64,
        precision: String,
    },
}

/// Something unusual about a row that is kept.
#[derive(Debug, Clone, PartialEq)]
pub enum Warning {
    /// Like [`Exclusion::FlatTime`] over a smaller growth of work (>= 4x): honest
    /// data can do this (caches, partial waves), so the row is kept.
    FlatTime {
        work_ratio: f64,
        time_ratio: f64,
        disagreeing: usize,
        comparable: usize,
    },
    /// Faster than any back-to-back launch rate measured on NVIDIA GPUs.
    BelowLaunchFloor { time_ms: f64 },
    /// The (kernel, config) was measured on this GPU only: no source->target pair.
    SingleGpu,
    /// FLOPs over time above the GPU's peak for the run's precision, from a kernel
    /// credited with more FLOPs than it executes: a convolution whose `flops` count
    /// the direct algorithm's multiply-adds runs Winograd or FFT with fewer. Within
    /// what such an algorithm saves (`max_saving`, at most the filter's taps) the time
    /// is real and the row is kept.
    AlgorithmicFlops {
        achieved_gflops: f64,
        peak_gflops: f64,
        precision: String,
        /// Most the kernel's algorithm can save over the FLOPs it is credited with.
        max_saving: f64,
    },
    /// A second reason for exclusion (the first is [`Run::exclusion`]).
    AlsoImplausible(Exclusion),
}

/// Flag names validation writes (the part before any ':').
pub const VALIDATION_FLAGS: [&str; 7] = [
    "sm_partition",
    "flat_time",
    "below_launch_floor",
    "above_peak_bandwidth",
    "above_peak_flops",
    "single_gpu",
    "algorithmic_flops",
];

impl Exclusion {
    /// The token of the `flags` column (e.g. `flat_time:64x`).
    pub fn flag(&self) -> String {
        match self {
            Exclusion::SmPartition { sm_count, gpu_sms } => {
                format!("sm_partition:{sm_count}of{gpu_sms}")
            }
            Exclusion::FlatTime { work_ratio, .. } => flat_flag(*work_ratio),
            Exclusion::AbovePeakBandwidth { .. } => "above_peak_bandwidth".into(),
            Exclusion::AbovePeakFlops { .. } => "above_peak_flops".into(),
        }
    }
    /// The reason's name without values (for counting).
    pub fn name(&self) -> &'static str {
        match self {
            Exclusion::SmPartition { .. } => "sm_partition",
            Exclusion::FlatTime { .. } => "flat_time",
            Exclusion::AbovePeakBandwidth { .. } => "above_peak_bandwidth",
            Exclusion::AbovePeakFlops { .. } => "above_peak_flops",
        }
    }
}

impl Warning {
    /// The token of the `flags` column.
    pub fn flag(&self) -> String {
        match self {
            Warning::FlatTime { work_ratio, .. } => flat_flag(*work_ratio),
            Warning::BelowLaunchFloor { .. } => "below_launch_floor".into(),
            Warning::SingleGpu => "single_gpu".into(),
            Warning::AlgorithmicFlops { .. } => "algorithmic_flops".into(),
            Warning::AlsoImplausible(e) => e.flag(),
        }
    }
    /// The warning's name without values (for counting).
    pub fn name(&self) -> &'static str {
        match self {
            Warning::FlatTime { .. } => "flat_time",
            Warning::BelowLaunchFloor { .. } => "below_launch_floor",
            Warning::SingleGpu => "single_gpu",
            Warning::AlgorithmicFlops { .. } => "algorithmic_flops",
            Warning::AlsoImplausible(e) => e.name(),
        }
    }
}

fn flat_flag(work_ratio: f64) -> String {
    format!("flat_time:{}x", work_ratio.round())
}

fn flat_text(
    f: &mut fmt::Formatter<'_>,
    work_ratio: f64,
    time_ratio: f64,
    disagreeing: usize,
    comparable: usize,
    verdict: &str,
) -> fmt::Result {
    write!(
        f,
        "flat time: {:.0}x the work in {:.1}x the time ({verdict}; {disagreeing} of {comparable} rows that far apart in work disagree)",
        work_ratio, time_ratio
    )
}

impl fmt::Display for Exclusion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Exclusion::SmPartition { sm_count, gpu_sms } => write!(
                f,
                "SM partition: ran on {sm_count} of the GPU's {gpu_sms} SMs, not the whole GPU"
            ),
            Exclusion::FlatTime {
                work_ratio,
                time_ratio,
                disagreeing,
                comparable,
            } => flat_text(
                f,
                *work_ratio,
                *time_ratio,
                *disagreeing,
                *comparable,
                "implausible",
            ),
            Exclusion::AbovePeakBandwidth {
                achieved_gbs,
                peak_gbs,
                working_set_bytes,
                l2_bytes,
            } => write!(
                f,
                "above peak bandwidth: {achieved_gbs:.0} GB/s > {peak_gbs:.0} GB/s peak with a {:.1} MB working set (L2 {:.1} MB): implausible",
                working_set_bytes / 1e6,
                l2_bytes / 1e6
            ),
            Exclusion::AbovePeakFlops {
                achieved_gflops,
                peak_gflops,
                precision,
            } => write!(
                f,
                "above peak FLOP/s: {achieved_gflops:.0} GFLOP/s > {peak_gflops:.0} GFLOP/s {precision} peak: implausible"
            ),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::FlatTime {
                work_ratio,
                time_ratio,
                disagreeing,
                comparable,
            } => flat_text(
                f,
                *work_ratio,
                *time_ratio,
                *disagreeing,
                *comparable,
                "kept: can be a cache or a partial wave",
            ),
            Warning::BelowLaunchFloor { time_ms } => write!(
                f,
                "below launch floor: {:.2} us is faster than any measured back-to-back launch",
                time_ms * 1e3
            ),
            Warning::SingleGpu => write!(
                f,
                "single GPU: this (kernel, config) was measured on one GPU only"
            ),
            Warning::AlgorithmicFlops {
                achieved_gflops,
                peak_gflops,
                precision,
                max_saving,
            } => write!(
                f,
                "algorithmic FLOPs: {achieved_gflops:.0} GFLOP/s > {peak_gflops:.0} GFLOP/s {precision} peak, {:.2}x (kept: a Winograd or FFT convolution executes fewer FLOPs than the direct one it is credited with, up to {max_saving:.0}x fewer)",
                achieved_gflops / peak_gflops
            ),
            Warning::AlsoImplausible(e) => write!(f, "also {e}"),
        }
    }
}

impl Run {
    /// The run's [`RunDetails`] (every number None when it has none).
    pub fn details(&self) -> &RunDetails {
        self.details.as_deref().unwrap_or(&RunDetails::NONE)
    }
    /// The run's details to write into, made empty when it has none.
    pub fn details_mut(&mut self) -> &mut RunDetails {
        self.details.get_or_insert_with(Default::default)
    }
    /// Floating-point precision of the run; fp32 when the column is absent.
    pub fn precision(&self) -> &str {
        self.precision.as_deref().unwrap_or("fp32")
    }
    /// Proxy for "how much work": the larger of FLOPs and DRAM bytes.
    pub fn work(&self) -> f64 {
        self.flops.max(self.dram_bytes)
    }
    /// The family the kernel belongs to: its `category` when the data gives one, else
    /// the kernel itself (what the new-family protocol holds out, and what tells a
    /// fitted model whether it has seen a kernel's kind).
    pub fn family(&self) -> &str {
        self.category.as_deref().unwrap_or(&self.kernel)
    }
    /// Identity of the work, independent of the GPU.
    pub fn work_key(&self) -> (&str, &str) {
        (&self.kernel, &self.config)
    }
    /// Does the `flags` column hold a flag starting with `prefix`?
    pub fn has_flag(&self, prefix: &str) -> bool {
        self.flags.iter().any(|f| f.starts_with(prefix))
    }
    /// Left out of fitting and scoring (set by validation).
    pub fn is_excluded(&self) -> bool {
        self.exclusion.is_some()
    }
    /// Every reason validation gave: the exclusion first, then the warnings.
    pub fn reasons(&self) -> Vec<String> {
        self.exclusion
            .iter()
            .map(|e| e.to_string())
            .chain(self.warnings.iter().map(|w| w.to_string()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_print_and_serialize() {
        let e = Exclusion::FlatTime {
            work_ratio: 64.0,
            time_ratio: 1.07,
            disagreeing: 2,
            comparable: 2,
        };
        assert_eq!(
            e.to_string(),
            "flat time: 64x the work in 1.1x the time (implausible; 2 of 2 rows that far apart in work disagree)"
        );
        assert_eq!(e.flag(), "flat_time:64x");
        let b = Exclusion::AbovePeakBandwidth {
            achieved_gbs: 1280.0,
            peak_gbs: 652.8,
            working_set_bytes: 64e6,
            l2_bytes: 4.5e6,
        };
        assert_eq!(
            b.to_string(),
            "above peak bandwidth: 1280 GB/s > 653 GB/s peak with a 64.0 MB working set (L2 4.5 MB): implausible"
        );
        assert_eq!(Warning::AlsoImplausible(b).flag(), "above_peak_bandwidth");
        assert_eq!(Warning::SingleGpu.flag(), "single_gpu");
        assert_eq!(
            Warning::BelowLaunchFloor { time_ms: 0.0005 }.to_string(),
            "below launch floor: 0.50 us is faster than any measured back-to-back launch"
        );
        let a = Warning::AlgorithmicFlops {
            achieved_gflops: 21157.0,
            peak_gflops: 14131.2,
            precision: "fp32".into(),
            max_saving: 9.0,
        };
        assert_eq!(a.flag(), "algorithmic_flops");
        assert_eq!(
            a.to_string(),
            "algorithmic FLOPs: 21157 GFLOP/s > 14131 GFLOP/s fp32 peak, 1.50x (kept: a Winograd or FFT convolution executes fewer FLOPs than the direct one it is credited with, up to 9x fewer)"
        );
        for w in [
            Warning::SingleGpu,
            Warning::BelowLaunchFloor { time_ms: 1e-4 },
            a,
        ] {
            assert!(VALIDATION_FLAGS.contains(&w.name()));
        }
        let p = Exclusion::SmPartition {
            sm_count: 16,
            gpu_sms: 132,
        };
        assert_eq!(p.flag(), "sm_partition:16of132");
        assert!(VALIDATION_FLAGS.contains(&p.name()));
        assert_eq!(
            p.to_string(),
            "SM partition: ran on 16 of the GPU's 132 SMs, not the whole GPU"
        );
    }

    #[test]
    fn origin_prints_line_or_row() {
        let o = Origin {
            file: "a.csv".into(),
            row: 1,
            line: Some(2),
        };
        assert_eq!(o.to_string(), "a.csv:2");
        let o = Origin {
            file: "a.parquet".into(),
            row: 7,
            line: None,
        };
        assert_eq!(o.to_string(), "a.parquet: row 7");
    }
}
