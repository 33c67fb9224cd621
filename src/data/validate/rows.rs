//! What the validation rules share: each row's ids, its verdict, the roofs' work and
//! the thresholds (a module of their own so that the rules, `flat` and `peak`, and
//! the module that runs them read them without importing one another).

use crate::catalog::Gpu;
use crate::data::{Exclusion, Run, Warning};
use rustc_hash::FxHashMap as HashMap;

/// Faster than any back-to-back launch measured on NVIDIA GPUs (1 us; the reference
/// study's floor is 1.3-5.5 us).
pub const LAUNCH_FLOOR_MS: f64 = 1e-3;
/// A measured figure may be this far above a peak (timing noise; see
/// [`crate::catalog::MEASURED_ABOVE_PEAK_SLACK`]).
pub(super) const PEAK_SLACK: f64 = crate::catalog::MEASURED_ABOVE_PEAK_SLACK;

/// Each row's GPU, harness (GPU, source), kernel and work (kernel, config) as
/// numbers, found once: the checks group and count rows by them. With the names
/// hashed again in each check, validating the 980k-row GEMM corpus took 1.3 s; with
/// these, 0.92 s.
pub(super) struct RowIds<'c> {
    /// The GPUs by number, in order of first appearance.
    pub(super) gpus: Vec<&'c Gpu>,
    pub(super) gpu: Vec<u32>,
    /// What timed the row on its GPU: its (GPU, source).
    pub(super) harness: Vec<u32>,
    pub(super) harnesses: usize,
    pub(super) kernel: Vec<u32>,
    pub(super) kernels: usize,
    pub(super) work: Vec<u32>,
    pub(super) works: usize,
}

impl<'c> RowIds<'c> {
    pub(super) fn of(runs: &[Run], gpus: Vec<&'c Gpu>, gpu: Vec<u32>) -> RowIds<'c> {
        let mut kernel_ids: HashMap<&str, u32> = HashMap::default();
        let mut work_ids: HashMap<(u32, &str), u32> = HashMap::default();
        let mut harness_ids: HashMap<(u32, Option<&str>), u32> = HashMap::default();
        let (mut kernel, mut work) = (
            Vec::with_capacity(runs.len()),
            Vec::with_capacity(runs.len()),
        );
        let mut harness = Vec::with_capacity(runs.len());
        for (r, &g) in runs.iter().zip(&gpu) {
            let next = harness_ids.len() as u32;
            harness.push(*harness_ids.entry((g, r.source.as_deref())).or_insert(next));
            let next = kernel_ids.len() as u32;
            let k = *kernel_ids.entry(r.kernel.as_str()).or_insert(next);
            let next = work_ids.len() as u32;
            work.push(*work_ids.entry((k, r.config.as_str())).or_insert(next));
            kernel.push(k);
        }
        RowIds {
            gpus,
            gpu,
            harness,
            harnesses: harness_ids.len(),
            kernel,
            kernels: kernel_ids.len(),
            work,
            works: work_ids.len(),
        }
    }

    /// Row `i`'s GPU.
    pub(super) fn gpu(&self, i: usize) -> &'c Gpu {
        self.gpus[self.gpu[i] as usize]
    }
}

/// What validation found about one row, in order of discovery.
#[derive(Default)]
pub(super) struct Verdict {
    pub(super) exclusions: Vec<Exclusion>,
    pub(super) warnings: Vec<Warning>,
}

/// The work of a run in seconds at the GPU's roofs: the larger of FLOPs over the
/// peak for its precision and DRAM bytes over the peak bandwidth. Raw FLOPs and bytes
/// do not add up: a GEMM whose FLOPs grow 64x with its batch while its weights
/// (bytes) stay the same is honestly flat while memory-bound.
pub(super) fn roof_seconds(r: &Run, gpu: &Gpu) -> f64 {
    let flops_s = r.flops / (gpu.peak_gflops(r.precision()) * 1e9);
    let bytes_s = r.dram_bytes / (gpu.mem_bandwidth_gbs * 1e9);
    let s = flops_s.max(bytes_s);
    if s.is_finite() {
        s
    } else {
        0.0
    }
}
