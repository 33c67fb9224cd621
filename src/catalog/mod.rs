//! The GPU catalog: vendor facts about GPUs (`datasets/gpus.toml`) and the
//! per-compute-capability occupancy limits (`datasets/compute_capabilities.toml`),
//! both built in, plus a user's `--gpus` file merged on top.
//!
//! - [`load`]: reading, validating and merging catalog files (every GPU's compute
//!   capability must be in the table: no limits are made up).
//! - [`names`]: finding a GPU by the names people and drivers use ([`Catalog::resolve`]).
//! - [`limits`]: the occupancy limits of a GPU ([`Catalog::limits`]).
//!
//! This file holds the types, the compute-capability label, and the one mapping from
//! a precision label to a peak rate ([`Gpu::peak_gflops`]).

pub mod distance;
pub mod glyphs;
pub mod limits;
pub mod load;
pub mod names;

pub use distance::{
    gpu_distances, ln_ratio, GPU_DISTANCES, GPU_DISTANCE_NAMES, OTHER_INSTRUCTION_SET,
};
pub use names::normalize_name;

/// How far above a peak a measured figure may be before it is a typo or a broken
/// benchmark rather than a board boosting past its rated clock (the catalog's measured
/// figures, the study's `gpu_metrics.json`).
pub const MEASURED_ABOVE_PEAK_SLACK: f64 = 1.05;

use serde::{Deserialize, Serialize};

/// One GPU: vendor facts, per-SM limits and (optionally) measured figures.
///
/// An AMD GPU is described in the same terms: an SM is a compute unit (CU),
/// `compute_capability` its LLVM target ("gfx90a", [`gfx_version`]), `warp_size` its
/// wavefront size (64 on CDNA, 32 on RDNA), `regs_per_sm` the CU's vector register
/// file in 32-bit registers, `smem_per_sm` its local data share (LDS).
///
/// Peak rates are dense (no structured sparsity), at the boost clock, in GFLOP/s
/// (10^9 operations per second; integer rates in GOP/s).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Gpu {
    pub name: String,
    pub vendor: String,
    pub arch: String,
    /// "major.minor", e.g. "8.9".
    pub compute_capability: String,
    pub sm_count: u32,
    pub boost_clock_mhz: f64,
    /// Peak FP32 (FMA = 2 FLOP) at the boost clock: sm_count x cores_per_sm x 2 x boost.
    pub fp32_gflops: f64,
    /// Peak DRAM bandwidth, GB/s (10^9 bytes/s).
    pub mem_bandwidth_gbs: f64,
    pub l2_bytes: u64,
    /// A last-level cache between the L2 and DRAM, bytes: AMD's Infinity Cache /
    /// MALL (the "L3" of ROCm's tables for Instinct GPUs). Absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llc_bytes: Option<u64>,
    pub regs_per_sm: u32,
    pub max_threads_per_sm: u32,
    pub max_blocks_per_sm: u32,
    /// Maximum configurable shared memory per SM, bytes.
    pub smem_per_sm: u32,
    pub warp_size: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores_per_sm: Option<u32>,
    /// Peak FP64 on the FP64 units (not the tensor cores).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp64_gflops: Option<f64>,
    /// Peak FP16 on the CUDA cores (not the tensor cores).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp16_gflops: Option<f64>,
    /// Peak FP64 on the tensor cores (A100, H100, B200, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor_fp64_gflops: Option<f64>,
    /// Peak TF32 on the tensor cores, dense.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor_tf32_gflops: Option<f64>,
    /// Peak FP16 on the tensor cores with FP32 accumulate, dense.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor_fp16_gflops: Option<f64>,
    /// Peak BF16 on the tensor cores with FP32 accumulate, dense (from Ampere on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor_bf16_gflops: Option<f64>,
    /// Peak FP8 on the tensor cores, dense (Ada, Hopper, Blackwell).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor_fp8_gflops: Option<f64>,
    /// Peak FP4 (NVFP4 / MXFP4) on the tensor cores, dense (Blackwell).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor_fp4_gflops: Option<f64>,
    /// Peak INT8 on the tensor cores, dense, GOP/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor_int8_gops: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_gb: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_type: Option<String>,
    /// Unified L1 / shared memory capacity per SM, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l1_bytes_per_sm: Option<u32>,
    /// Opt-in maximum shared memory per block, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_smem_per_block: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reg_alloc_unit: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smem_alloc_unit: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_year: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tdp_w: Option<f64>,
    /// The vendor document(s) the figures come from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Measured sustained DRAM bandwidth (e.g. a STREAM-like copy), GB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sustained_bandwidth_gbs: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sustained_fp32_gflops: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l2_bandwidth_gbs: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_overhead_us: Option<f64>,
    /// Where the measured figures come from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_source: Option<String>,
    /// Other measured figures (e.g. `gpucast-bench calibrate`'s copy, triad, shared
    /// memory bandwidths and atomic rates), kept for reference: `[gpu.measured]`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub measured: std::collections::BTreeMap<String, f64>,
    /// For a partition ([`Gpu::partition`]): the SMs of the whole GPU it is part of.
    /// Not read from or written to catalog files.
    #[serde(skip)]
    pub partition_of_sms: Option<u32>,
}

fn default_warp_size() -> u32 {
    32
}
fn default_reg_alloc_granularity() -> String {
    "warp".to_string()
}

/// Occupancy limits of one compute capability (see compute_capabilities.toml).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ComputeCapability {
    pub cc: String,
    pub max_threads_per_block: u32,
    pub max_threads_per_sm: u32,
    pub max_warps_per_sm: u32,
    pub max_blocks_per_sm: u32,
    pub regs_per_sm: u32,
    pub max_regs_per_block: u32,
    pub max_regs_per_thread: u32,
    /// Registers are allocated to a warp in multiples of this.
    pub reg_alloc_unit: u32,
    /// Register-file sub-partitions per SM (cuda_occupancy.h
    /// `cudaOccSubPartitionsPerMultiprocessor`): the number of warps the
    /// register file can hold is a multiple of it.
    pub warp_alloc_granularity: u32,
    /// Maximum configurable shared memory per SM, bytes.
    pub smem_per_sm: u32,
    /// Opt-in maximum shared memory per block, bytes (without the reserved part).
    pub max_smem_per_block: u32,
    pub smem_alloc_unit: u32,
    /// Shared memory the driver reserves per block (1 KB from sm_80 on).
    pub reserved_smem_per_block: u32,
    /// Configurable shared memory sizes per SM, KB, ascending.
    pub smem_carveout_kb: Vec<u32>,
    #[serde(default = "default_warp_size")]
    pub warp_size: u32,
    /// "warp": registers are allocated per warp.
    #[serde(default = "default_reg_alloc_granularity")]
    pub reg_alloc_granularity: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arch: Option<String>,
    /// Whether a block of one warp is bounded by warps alone, not by
    /// `max_blocks_per_sm`: on AMD GPUs the workgroups per CU are bounded by their
    /// barriers, which a one-wavefront workgroup does not hold (LLVM
    /// `AMDGPU::IsaInfo::getMaxWorkGroupsPerCU`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub one_warp_blocks_unbounded: bool,
    /// The machine instruction set (SASS) its code compiles to, as NVIDIA's CUDA
    /// Binary Utilities group them ("Maxwell and Pascal", "Ampere and Ada"); absent:
    /// one of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instruction_set: Option<String>,
    /// Lanes per SM that execute 32-bit integer instructions (the CUDA C++ Programming
    /// Guide's throughput of 32-bit integer add per clock per SM); absent: unknown, and
    /// the instruction mix has no ALU roof on such a GPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub int32_lanes_per_sm: Option<u32>,
    /// Whether the INT32 lanes are some of the FP32 lanes (GA10x, AD10x: 64 of the 128
    /// FP32 lanes execute INT32), so FP32 and INT32 instructions share the FP32 lanes'
    /// rate; otherwise INT32 has lanes of its own beside them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub int32_shares_fp32_lanes: bool,
}

impl ComputeCapability {
    /// [`Self::instruction_set`], or the compute capability itself when none is given.
    pub fn instruction_set(&self) -> &str {
        self.instruction_set.as_deref().unwrap_or(&self.cc)
    }
    /// (major, minor) of an NVIDIA `cc`; (0, 0) for an AMD target or one that does
    /// not parse (load-time validation rejects that for table entries).
    pub fn major_minor(&self) -> (u32, u32) {
        parse_cc(&self.cc).unwrap_or((0, 0))
    }
    /// "sm_89" for 8.9 (see [`sm_label`]); an AMD target as it is ("gfx90a").
    pub fn sm_label(&self) -> String {
        arch_label(&self.cc)
    }
    /// The configurable shared-memory sizes per SM in bytes, ascending.
    pub fn carveouts_bytes(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self.smem_carveout_kb.iter().map(|k| k * 1024).collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

impl Gpu {
    /// (major, minor) of an NVIDIA compute capability; (0, 0) for an AMD target or
    /// one that does not parse (load-time validation rejects that for catalog GPUs).
    pub fn cc_major_minor(&self) -> (u32, u32) {
        parse_cc(&self.compute_capability).unwrap_or((0, 0))
    }
    /// The compute capability as a number: 8.9 for "8.9", 10.0 for "10.0"; for an
    /// AMD target its GFX IP version ([`gfx_version`]: 9.0 for gfx90a).
    pub fn cc_number(&self) -> f64 {
        cc_number(gfx_version(&self.compute_capability).unwrap_or(self.cc_major_minor()))
    }
    /// Whether `self` and `other` have one compute capability (NVIDIA) or one LLVM
    /// target (AMD); never across vendors' labels.
    pub fn same_compute_capability(&self, other: &Gpu) -> bool {
        cc_key(&self.compute_capability).is_some()
            && cc_key(&self.compute_capability) == cc_key(&other.compute_capability)
    }
    /// Whether its tensor cores take asynchronous, shared-memory-fed matrix
    /// instructions: warpgroup MMA (`wgmma`, compute capability 9.0) or `tcgen05`
    /// (10.x, 11.x). Earlier GPUs and the consumer / workstation Blackwell parts
    /// (12.x) issue only per-warp `mma.sync`, which keeps a GEMM further from the
    /// tensor peak (CUTLASS builds separate kernels for these families).
    pub fn async_tensor_mma(&self) -> bool {
        matches!(self.cc_major_minor(), (9, 0) | (10, _) | (11, _))
    }
    /// "sm_89" for compute capability 8.9, "sm_100" for 10.0; an AMD target as it
    /// is ("gfx90a").
    pub fn sm_arch(&self) -> String {
        arch_label(&self.compute_capability)
    }
    /// The share of the memory system this GPU's SMs are: 1 for a whole GPU, the SM
    /// share for a partition. The catalog's bandwidth stays the physical peak; the
    /// models' DRAM roof for a partition is at least this share of the whole GPU's
    /// (each SM holds a bounded number of requests in flight, and a slice's few SMs
    /// draw more than their share: `features::figures::SM_DRAM_BYTES_PER_CLOCK`).
    pub fn memory_share(&self) -> f64 {
        self.partition_of_sms
            .map_or(1.0, |whole| (self.sm_count as f64 / whole as f64).min(1.0))
    }

    /// FP32 cores across the GPU, when cores_per_sm is known.
    pub fn cuda_cores(&self) -> Option<u32> {
        self.cores_per_sm.map(|c| c * self.sm_count)
    }

    /// This GPU restricted to `sms` of its SMs (a CUDA green context or a similar
    /// slice), as a catalog entry named [`partition_name`]: the figures that come from
    /// the SMs (every compute peak, the L2 bandwidth the SMs draw) scaled by
    /// `sms / sm_count` (the L2 bandwidth, once the measured figure is dropped, follows
    /// from the SM count); the memory system's peak, the L2's size and the per-SM
    /// limits those of the whole GPU, of which the models give the partition what its
    /// SMs draw ([`Gpu::memory_share`]). Of the figures measured on the whole GPU only
    /// the sustained DRAM bandwidth stays (a figure of the memory system the partition
    /// shares, with its source); the others are dropped.
    pub fn partition(&self, sms: u32) -> Gpu {
        let f = sms as f64 / self.sm_count as f64;
        let scaled = |v: Option<f64>| v.map(|x| x * f);
        Gpu {
            name: partition_name(&self.name, sms),
            // (so "H100 SXM5 [16 SMs]" names it as "H100 SXM5" names the GPU)
            aliases: self.aliases.iter().map(|a| partition_name(a, sms)).collect(),
            sm_count: sms,
            fp32_gflops: self.fp32_gflops * f,
            fp64_gflops: scaled(self.fp64_gflops),
            fp16_gflops: scaled(self.fp16_gflops),
            tensor_fp64_gflops: scaled(self.tensor_fp64_gflops),
            tensor_tf32_gflops: scaled(self.tensor_tf32_gflops),
            tensor_fp16_gflops: scaled(self.tensor_fp16_gflops),
            tensor_bf16_gflops: scaled(self.tensor_bf16_gflops),
            tensor_fp8_gflops: scaled(self.tensor_fp8_gflops),
            tensor_fp4_gflops: scaled(self.tensor_fp4_gflops),
            tensor_int8_gops: scaled(self.tensor_int8_gops),
            sustained_fp32_gflops: None,
            l2_bandwidth_gbs: None,
            launch_overhead_us: None,
            measured_source: self
                .sustained_bandwidth_gbs
                .and(self.measured_source.clone()),
            measured: Default::default(),
            partition_of_sms: Some(self.partition_of_sms.unwrap_or(self.sm_count)),
            source: Some(format!(
                "derived: {} restricted to {sms} of its {} SMs; SM peaks scaled by {sms}/{}; memory peak and L2 size of the whole GPU, of which the models' DRAM roof takes what its SMs draw, at least their share",
                self.name, self.sm_count, self.sm_count
            )),
            ..self.clone()
        }
    }

    /// Peak rate in GFLOP/s (GOP/s for int8) for a precision label of the runs
    /// table: the highest dense rate this GPU has for that data type, tensor cores
    /// included, because the figure serves as the compute roof (an upper bound) and a
    /// GEMM in that type runs on the tensor cores where they exist.
    ///
    /// | label | peak | when the GPU has no such figure |
    /// |---|---|---|
    /// | fp64 | max(fp64, tensor fp64) | fp32 (no GPU runs fp64 faster than fp32) |
    /// | fp32, int, unknown labels | fp32 | - |
    /// | tf32 | tensor tf32 | fp32 (without tensor cores tf32 runs as fp32) |
    /// | fp16 | max(tensor fp16, fp16) | fp32 |
    /// | bf16 | max(tensor bf16, fp16) | fp32 |
    /// | tensor_fp16, tensor, mma_fp16 | tensor fp16 | fp16, then fp32 |
    /// | fp8 | tensor fp8 | the fp16 peak (fp8 data is then computed in fp16) |
    /// | fp4 | tensor fp4 | the fp8 peak |
    /// | int8 | tensor int8 | fp32 |
    ///
    /// Labels are case-insensitive; [`PrecisionClass::from_label`] lists the spellings.
    pub fn peak_gflops(&self, precision: &str) -> f64 {
        self.peak_gflops_for(PrecisionClass::from_label(precision))
    }

    /// [`Gpu::peak_gflops`] of a label already interpreted.
    pub fn peak_gflops_for(&self, class: PrecisionClass) -> f64 {
        let max = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(x), Some(y)) => Some(x.max(y)),
            (x, y) => x.or(y),
        };
        let fp16 = || max(self.tensor_fp16_gflops, self.fp16_gflops);
        let fp8 = || self.tensor_fp8_gflops.or_else(fp16);
        let peak = match class {
            PrecisionClass::Fp64 => max(self.fp64_gflops, self.tensor_fp64_gflops),
            PrecisionClass::Fp32 | PrecisionClass::Int | PrecisionClass::Other => None,
            PrecisionClass::Tf32 => self.tensor_tf32_gflops,
            PrecisionClass::Fp16 => fp16(),
            PrecisionClass::Bf16 => max(self.tensor_bf16_gflops, self.fp16_gflops),
            PrecisionClass::TensorFp16 => self.tensor_fp16_gflops.or(self.fp16_gflops),
            PrecisionClass::Fp8 => fp8(),
            PrecisionClass::Fp4 => self.tensor_fp4_gflops.or_else(fp8),
            PrecisionClass::Int8 => self.tensor_int8_gops,
        };
        peak.unwrap_or(self.fp32_gflops)
    }
}

/// The precision classes of the runs table's `precision` column: the one list that
/// maps labels to peaks ([`Gpu::peak_gflops`]) and to feature columns
/// ([`PrecisionClass::feature_column`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrecisionClass {
    Fp64,
    Fp32,
    Tf32,
    Fp16,
    Bf16,
    /// FP16 on the tensor cores, named explicitly (legacy labels).
    TensorFp16,
    Fp8,
    Fp4,
    Int8,
    /// Integer arithmetic on the CUDA cores.
    Int,
    /// A label not listed here (treated as fp32).
    Other,
}

impl PrecisionClass {
    /// The class of a label, case-insensitive: fp64/double, fp32/float/single, tf32,
    /// fp16/half, bf16/bfloat16, tensor_fp16/tensor/mma_fp16, fp8 (any e4m3/e5m2/
    /// block-scaled variant, e.g. fp8_block), fp4/nvfp4/mxfp4, int8, int/int32.
    pub fn from_label(label: &str) -> PrecisionClass {
        // Called per projection: compared in place, not lowercased into a new String.
        const NAMES: &[(&[&str], PrecisionClass)] = &[
            (&["fp64", "double", "f64"], PrecisionClass::Fp64),
            (&["fp32", "float", "single", "f32"], PrecisionClass::Fp32),
            (&["tf32"], PrecisionClass::Tf32),
            (&["fp16", "half", "f16"], PrecisionClass::Fp16),
            (&["bf16", "bfloat16"], PrecisionClass::Bf16),
            (
                &["tensor_fp16", "tensor", "mma_fp16"],
                PrecisionClass::TensorFp16,
            ),
            (&["fp4", "nvfp4", "mxfp4"], PrecisionClass::Fp4),
            (&["int8", "i8"], PrecisionClass::Int8),
            (&["int", "int32", "i32"], PrecisionClass::Int),
        ];
        let l = label.trim();
        if let Some((_, class)) = NAMES
            .iter()
            .find(|(names, _)| names.iter().any(|n| n.eq_ignore_ascii_case(l)))
        {
            return *class;
        }
        if l.get(..3).is_some_and(|p| p.eq_ignore_ascii_case("fp8")) {
            PrecisionClass::Fp8
        } else {
            PrecisionClass::Other
        }
    }

    /// The labels [`PrecisionClass::from_label`] knows, for messages: each class's
    /// first spelling, then the two importer labels [`PrecisionClass::is_known`]
    /// also takes.
    pub const KNOWN_LABELS: &'static str =
        "fp64, fp32, tf32, fp16, bf16, tensor_fp16, fp8 (and fp8_*), fp4, int8, int, tensor_<any of these>, unknown";

    /// Whether a `precision` cell names a precision: a label of
    /// [`PrecisionClass::from_label`], `tensor_` before one (Nsight Compute's
    /// tensor-pipe labels), or `unknown` (the Nsight Compute import's label for work
    /// it could not attribute). Anything else is a typo that would silently be
    /// priced at the fp32 peak.
    pub fn is_known(label: &str) -> bool {
        let l = label.trim();
        if l.eq_ignore_ascii_case("unknown")
            || PrecisionClass::from_label(l) != PrecisionClass::Other
        {
            return true;
        }
        l.get(..7)
            .filter(|p| p.eq_ignore_ascii_case("tensor_"))
            .is_some_and(|_| PrecisionClass::from_label(&l[7..]) != PrecisionClass::Other)
    }

    /// The column of the 3-wide precision one-hot feature: 0 = fp32-like (fp32, tf32,
    /// integer, unknown), 1 = fp64, 2 = 16 bits or narrower (fp16, bf16, tensor fp16,
    /// fp8, fp4, int8).
    pub fn feature_column(self) -> usize {
        match self {
            PrecisionClass::Fp64 => 1,
            PrecisionClass::Fp16
            | PrecisionClass::Bf16
            | PrecisionClass::TensorFp16
            | PrecisionClass::Fp8
            | PrecisionClass::Fp4
            | PrecisionClass::Int8 => 2,
            PrecisionClass::Fp32
            | PrecisionClass::Tf32
            | PrecisionClass::Int
            | PrecisionClass::Other => 0,
        }
    }

    /// The 3-wide one-hot of [`PrecisionClass::feature_column`] for a label.
    pub fn onehot(label: &str) -> [f64; 3] {
        let mut v = [0.0; 3];
        v[PrecisionClass::from_label(label).feature_column()] = 1.0;
        v
    }
}

/// Parses "8.9" into (8, 9).
/// The catalog name of `base` restricted to `sms` SMs: "NVIDIA H100 SXM5 80GB [16 SMs]".
pub fn partition_name(base: &str, sms: u32) -> String {
    format!("{base} [{sms} SMs]")
}

/// A name of the form [`partition_name`] writes, as (GPU name, SMs).
pub fn parse_partition_name(name: &str) -> Option<(&str, u32)> {
    let (base, rest) = name.trim().rsplit_once(" [")?;
    let sms = rest.strip_suffix(" SMs]")?.trim().parse().ok()?;
    Some((base.trim(), sms))
}

pub fn parse_cc(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.trim().split_once('.')?;
    let ma = a.parse::<u32>().ok()?;
    let mi = b.parse::<u32>().ok()?;
    Some((ma, mi))
}

/// A compute-capability label as a key: NVIDIA's (major, minor) or an AMD LLVM
/// target, lower case. None when it is neither.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CcKey {
    Nvidia(u32, u32),
    Amd(String),
}

/// The key of a compute-capability label: "8.9" or an AMD LLVM target ("gfx90a",
/// "gfx1100"; [`gfx_version`] must read it).
pub fn cc_key(s: &str) -> Option<CcKey> {
    if let Some((ma, mi)) = parse_cc(s) {
        return Some(CcKey::Nvidia(ma, mi));
    }
    gfx_version(s).map(|_| CcKey::Amd(s.trim().to_ascii_lowercase()))
}

/// The GFX IP version (major, minor) of an AMD LLVM target, as ROCm reports it
/// (`gcnArchName` / "GFXIP major, minor" in ROCm's GPU specification tables): the
/// target is `gfx` + major + one minor digit + one stepping digit (hexadecimal), so
/// gfx90a is 9.0, gfx942 9.4, gfx1030 10.3, gfx1100 11.0. None for anything else.
pub fn gfx_version(s: &str) -> Option<(u32, u32)> {
    let t = s.trim();
    let digits = t
        .get(..3)
        .filter(|p| p.eq_ignore_ascii_case("gfx"))
        .map(|_| &t[3..])?;
    if !(3..=4).contains(&digits.len()) || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let n = digits.len();
    let major = digits[..n - 2].parse::<u32>().ok()?;
    let minor = digits[n - 2..n - 1].parse::<u32>().ok()?;
    Some((major, minor))
}

/// The architecture label of a compute-capability label: "sm_89" for "8.9", an AMD
/// target lower case.
fn arch_label(cc: &str) -> String {
    match cc_key(cc) {
        Some(CcKey::Amd(t)) => t,
        _ => sm_label(parse_cc(cc).unwrap_or((0, 0))),
    }
}

/// The label nvcc and ptxas use for a compute capability: "sm_89" for (8, 9),
/// "sm_100" for (10, 0).
pub fn sm_label((major, minor): (u32, u32)) -> String {
    format!("sm_{major}{minor}")
}

/// A compute capability as a number: 8.9 for (8, 9).
pub fn cc_number((major, minor): (u32, u32)) -> f64 {
    f64::from(major) + f64::from(minor) / 10.0
}

/// The set of known GPUs and compute capabilities.
///
/// Invariant: every GPU's compute capability is in `ccs` (checked when a catalog is
/// built or merged), so [`Catalog::limits`] never has to make limits up.
#[derive(Debug, Clone)]
pub struct Catalog {
    gpus: Vec<Gpu>,
    ccs: Vec<ComputeCapability>,
    /// Index of each GPU by its canonical name, and its occupancy limits: models look
    /// a GPU and its limits up for every projection (a linear scan with string
    /// compares and a limits clone each time: with the index `gpucast bench`'s LOGO hybrid
    /// on 100k rows x 8 GPUs went 32.2 -> 27.6 s).
    by_name: rustc_hash::FxHashMap<String, usize>,
    /// Index of each GPU by its canonical name and its aliases (a canonical name
    /// before any alias, else the first GPU listing the alias): data files name GPUs by
    /// marketing names, and resolving them (mostly a scan over every GPU's aliases)
    /// took 8 % of `gpucast bench`'s analytical predictions.
    by_spelling: rustc_hash::FxHashMap<String, usize>,
    limits: Vec<Option<ComputeCapability>>,
    /// [`distance::gpu_distances`] of every pair of GPUs, row-major; filled on first use.
    distances: std::sync::OnceLock<Vec<[f64; distance::GPU_DISTANCES]>>,
}

impl Catalog {
    /// This catalog plus [`Gpu::partition`] entries for each (GPU name, SMs) given
    /// (entries already present are kept). Unknown GPU names are an error.
    pub fn with_partitions(&self, parts: &[(String, u32)]) -> crate::error::Result<Catalog> {
        let mut gpus = self.gpus.clone();
        for (base, sms) in parts {
            let gpu = self.resolve_or_err(base)?;
            let name = partition_name(&gpu.name, *sms);
            if !gpus.iter().any(|g| g.name == name) {
                gpus.push(gpu.partition(*sms));
            }
        }
        Ok(Catalog::new(gpus, self.ccs.clone()))
    }

    /// This catalog with the partition `name` names ("H100 SXM5 [16 SMs]", see
    /// [`parse_partition_name`]) added, so that commands can target a slice of a GPU;
    /// `None` when `name` is not a partition name or the catalog knows it already. A
    /// partition of an unknown GPU, or of as many SMs as the GPU has or more, is an
    /// error, and so is a name with a bracket that is not a partition name ("H100
    /// SXM5 []"): name resolution ignores brackets, so it would silently mean the
    /// whole GPU. A GPU whose own name or alias has brackets is still found by it.
    pub fn for_partition_name(&self, name: &str) -> crate::error::Result<Option<Catalog>> {
        let Some((base, sms)) = parse_partition_name(name) else {
            if name.contains(['[', ']']) && self.spelled(name).is_empty() {
                return Err(crate::error::Error::usage(format!(
                    "'{name}': a GPU partition is written NAME [N SMs], e.g. \"H100 SXM5 [16 SMs]\""
                )));
            }
            return Ok(None);
        };
        if self.resolve(name).is_some() {
            return Ok(None);
        }
        let gpu = self.resolve(base).ok_or_else(|| {
            crate::error::Error::usage(format!(
                "'{name}': unknown GPU '{base}': {}",
                self.unresolved_hint(base)
            ))
        })?;
        if sms == 0 || sms >= gpu.sm_count {
            return Err(crate::error::Error::usage(format!(
                "'{name}': {} has {} SMs; a partition has 1 to {}",
                gpu.name,
                gpu.sm_count,
                gpu.sm_count - 1
            )));
        }
        self.with_partitions(&[(gpu.name.clone(), sms)]).map(Some)
    }

    /// A catalog of these GPUs and compute capabilities, indexed.
    fn new(gpus: Vec<Gpu>, ccs: Vec<ComputeCapability>) -> Catalog {
        let mut c = Catalog {
            by_name: gpus
                .iter()
                .enumerate()
                .map(|(i, g)| (g.name.clone(), i))
                .collect(),
            by_spelling: rustc_hash::FxHashMap::default(),
            gpus,
            ccs,
            limits: Vec::new(),
            distances: std::sync::OnceLock::new(),
        };
        c.by_spelling = c.by_name.clone();
        for (i, g) in c.gpus.iter().enumerate() {
            for a in &g.aliases {
                c.by_spelling.entry(a.clone()).or_insert(i);
            }
        }
        c.limits = c.gpus.iter().map(|g| c.limits(g).ok()).collect();
        c
    }

    /// The GPU of this exact canonical name (no alias or fuzzy matching).
    pub fn by_name(&self, name: &str) -> Option<&Gpu> {
        self.by_name.get(name).map(|&i| &self.gpus[i])
    }

    /// The GPU of this exact canonical name or, failing that, the first (in catalog
    /// order) with this exact alias.
    pub fn by_name_or_alias(&self, name: &str) -> Option<&Gpu> {
        self.by_spelling.get(name).map(|&i| &self.gpus[i])
    }

    /// The occupancy limits of a GPU of this catalog without recomputing them; None
    /// for a GPU that is not one of this catalog's own entries.
    pub fn limits_ref(&self, gpu: &Gpu) -> Option<&ComputeCapability> {
        self.limits[self.index_of(gpu)?].as_ref()
    }

    /// The position of `gpu` in this catalog when it is one of its own entries (found
    /// from its address: no name lookup), else None.
    pub(crate) fn index_of(&self, gpu: &Gpu) -> Option<usize> {
        let offset = (gpu as *const Gpu as usize).checked_sub(self.gpus.as_ptr() as usize)?;
        let i = offset / std::mem::size_of::<Gpu>();
        self.gpus
            .get(i)
            .filter(|g| std::ptr::eq(*g, gpu))
            .map(|_| i)
    }

    pub fn gpus(&self) -> &[Gpu] {
        &self.gpus
    }

    /// The GPUs whose `vendor` is `vendor` (case-insensitive), in catalog order.
    pub fn gpus_of_vendor(&self, vendor: &str) -> Vec<&Gpu> {
        let v = vendor.trim();
        self.gpus
            .iter()
            .filter(|g| g.vendor.eq_ignore_ascii_case(v))
            .collect()
    }

    /// The vendors of the catalog's GPUs, sorted, each once.
    pub fn vendors(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.gpus.iter().map(|g| g.vendor.as_str()).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    pub fn compute_capabilities(&self) -> &[ComputeCapability] {
        &self.ccs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cat() -> Catalog {
        Catalog::builtin()
    }

    #[test]
    fn every_name_and_alias_is_indexed_to_its_gpu() {
        let c = cat();
        let mut aliases = 0;
        for g in c.gpus() {
            for n in std::iter::once(&g.name).chain(&g.aliases) {
                assert_eq!(c.by_name_or_alias(n).map(|x| &x.name), Some(&g.name), "{n}");
                assert_eq!(c.resolve_exact(n).map(|x| &x.name), Some(&g.name), "{n}");
            }
            aliases += g.aliases.len();
        }
        assert!(aliases > 20, "{aliases}");
        // a partition added later is indexed too
        let p = c.with_partitions(&[("NVIDIA TITAN V".into(), 40)]).unwrap();
        let name = partition_name("NVIDIA TITAN V", 40);
        assert_eq!(p.by_name_or_alias(&name).map(|g| g.sm_count), Some(40));
    }

    fn gpu(name: &str) -> Gpu {
        cat().resolve(name).unwrap().clone()
    }

    #[test]
    fn a_partition_scales_the_sm_figures_and_keeps_the_memory_system() {
        let h100 = gpu("H100 SXM5");
        let p = h100.partition(33);
        assert_eq!(p.name, "NVIDIA H100 SXM5 80GB [33 SMs]");
        assert_eq!(p.sm_count, 33);
        assert_eq!(p.fp32_gflops, h100.fp32_gflops * 0.25);
        assert_eq!(p.fp64_gflops, h100.fp64_gflops.map(|x| x * 0.25));
        assert_eq!(
            p.tensor_bf16_gflops,
            h100.tensor_bf16_gflops.map(|x| x * 0.25)
        );
        assert_eq!(p.peak_gflops("fp16"), h100.peak_gflops("fp16") * 0.25);
        assert_eq!(
            (p.mem_bandwidth_gbs, p.l2_bytes, p.max_threads_per_sm),
            (
                h100.mem_bandwidth_gbs,
                h100.l2_bytes,
                h100.max_threads_per_sm
            )
        );
        assert!(p.aliases.contains(&"H100 SXM5 [33 SMs]".to_string()) && p.measured.is_empty());
        assert_eq!((p.memory_share(), h100.memory_share()), (0.25, 1.0));
        assert_eq!(
            p.partition(66).memory_share(),
            0.5,
            "a partition of the whole GPU"
        );
        assert_eq!(p.launch_overhead_us, None);

        let c = cat()
            .with_partitions(&[("H100 SXM5".into(), 33), ("H100 SXM5".into(), 33)])
            .unwrap();
        assert_eq!(c.gpus().len(), cat().gpus().len() + 1);
        assert_eq!(c.resolve(&p.name).unwrap().sm_count, 33);
        assert!(c.limits(c.resolve(&p.name).unwrap()).is_ok());
        assert!(cat().with_partitions(&[("No Such GPU".into(), 8)]).is_err());

        assert_eq!(
            parse_partition_name("H100 SXM5 [16 SMs]"),
            Some(("H100 SXM5", 16))
        );
        assert_eq!(parse_partition_name("H100 SXM5"), None);
        let c = cat()
            .for_partition_name("h100 sxm5 [16 SMs]")
            .unwrap()
            .unwrap();
        assert_eq!(
            c.resolve("NVIDIA H100 SXM5 80GB [16 SMs]")
                .unwrap()
                .sm_count,
            16
        );
        assert!(cat().for_partition_name("H100 SXM5").unwrap().is_none());
        // A bracket that is not a well-formed "[N SMs]" suffix is a usage error, not
        // the whole GPU (brackets are ignored when resolving names).
        for bad in [
            "H100 SXM5 [",
            "H100 SXM5 []",
            "H100 SXM5 [ ]",
            "H100 SXM5 ]",
            "H100 SXM5 [16 SMs",
            "H100 SXM5 [16]",
            "H100 SXM5[16 SMs]",
            "H100 SXM5 [-4 SMs]",
            "H100 SXM5 [16 SMs] x",
        ] {
            assert_eq!(parse_partition_name(bad), None, "{bad}");
            let e = cat().for_partition_name(bad).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad}");
            assert_eq!(
                e.to_string(),
                format!(
                    "'{bad}': a GPU partition is written NAME [N SMs], e.g. \"H100 SXM5 [16 SMs]\""
                ),
            );
        }
        // A GPU named with brackets is found by its own name (or alias).
        let mut odd = cat().by_name("NVIDIA H100 SXM5 80GB").unwrap().clone();
        odd.name = "Lab GPU [rev 2]".into();
        odd.aliases = vec!["lab [2]".into()];
        let c = Catalog::new(vec![odd], cat().ccs.clone());
        assert!(c.for_partition_name("lab gpu [REV 2]").unwrap().is_none());
        assert!(c.for_partition_name("LAB [2]").unwrap().is_none());
        assert!(c.for_partition_name("Lab GPU [rev 3]").is_err());
        let e = cat()
            .for_partition_name("H100 SXM5 [132 SMs]")
            .unwrap_err()
            .to_string();
        assert!(e.contains("has 132 SMs; a partition has 1 to 131"), "{e}");
    }

    #[test]
    fn precision_labels_map_to_classes() {
        use PrecisionClass as P;
        for (label, class) in [
            ("fp64", P::Fp64),
            ("FP32", P::Fp32),
            ("tf32", P::Tf32),
            ("fp16", P::Fp16),
            ("bf16", P::Bf16),
            ("bfloat16", P::Bf16),
            ("tensor_fp16", P::TensorFp16),
            ("tensor", P::TensorFp16),
            ("mma_fp16", P::TensorFp16),
            ("fp8", P::Fp8),
            ("fp8_block", P::Fp8),
            ("nvfp4", P::Fp4),
            ("fp4", P::Fp4),
            ("int8", P::Int8),
            ("int", P::Int),
            ("weird", P::Other),
        ] {
            assert_eq!(P::from_label(label), class, "{label}");
        }
        // The one-hot agrees for every legacy fp16 spelling (it used to miss mma_fp16).
        for l in [
            "fp16",
            "bf16",
            "tensor_fp16",
            "mma_fp16",
            "tensor",
            "fp8",
            "fp4",
        ] {
            assert_eq!(P::onehot(l), [0.0, 0.0, 1.0], "{l}");
        }
        assert_eq!(P::onehot("fp64"), [0.0, 1.0, 0.0]);
        assert_eq!(P::onehot("fp32"), [1.0, 0.0, 0.0]);
        assert_eq!(P::onehot("tf32"), [1.0, 0.0, 0.0]);
        assert_eq!(P::onehot("int"), [1.0, 0.0, 0.0]);
    }

    #[test]
    fn peaks_per_precision_from_datasheets() {
        // NVIDIA H100 datasheet (SXM5), dense: BF16/FP16 989.4 (1979 with sparsity),
        // TF32 494.7, FP8 1978.9, INT8 1978.9 TOPS, FP64 34, FP64 tensor 67, FP32 67.
        let h = gpu("NVIDIA H100 80GB HBM3");
        let close = |a: f64, b: f64| (a - b).abs() <= 0.001 * b;
        assert!(
            close(h.peak_gflops("bf16"), 989_400.0),
            "{}",
            h.peak_gflops("bf16")
        );
        assert!(close(h.peak_gflops("fp16"), 989_400.0));
        assert!(close(h.peak_gflops("tensor_fp16"), 989_400.0));
        assert!(close(h.peak_gflops("mma_fp16"), 989_400.0));
        assert!(close(h.peak_gflops("tf32"), 494_700.0));
        assert!(close(h.peak_gflops("fp8"), 1_978_900.0));
        assert!(close(h.peak_gflops("int8"), 1_978_900.0));
        assert!(
            close(h.peak_gflops("fp64"), 66_900.0),
            "{}",
            h.peak_gflops("fp64")
        );
        assert!(close(h.peak_gflops("fp32"), h.fp32_gflops));
        // No FP4 tensor cores on Hopper: fp4 falls back to the fp8 peak.
        assert!(close(h.peak_gflops("fp4"), 1_978_900.0));

        // A100 datasheet: FP64 9.7, FP64 tensor 19.5, TF32 156, BF16 312, INT8 624.
        let a = gpu("NVIDIA A100-SXM4-80GB");
        assert!(close(a.peak_gflops("fp64"), 19_500.0));
        assert!(close(a.peak_gflops("tf32"), 156_000.0));
        assert!(close(a.peak_gflops("bf16"), 312_000.0));
        assert!(close(a.peak_gflops("int8"), 624_000.0));
        // No FP8 on Ampere: the fp16 tensor peak.
        assert!(close(a.peak_gflops("fp8"), 312_000.0));

        // B200 (DGX B200, per GPU, dense): FP4 9 PF, FP8 4.5 PF, BF16 2.25 PF, FP64 37 TF.
        let b = gpu("NVIDIA B200");
        assert!(close(b.peak_gflops("fp4"), 9_000_000.0));
        assert!(close(b.peak_gflops("fp8"), 4_500_000.0));
        assert!(close(b.peak_gflops("bf16"), 2_250_000.0));
        assert!(close(b.peak_gflops("fp64"), 37_000.0));

        // A Maxwell card has none of these: everything but fp32 falls back to fp32,
        // except a stated fp64 figure.
        let m = gpu("NVIDIA GeForce GTX TITAN X");
        for p in ["tf32", "fp16", "bf16", "fp8", "fp4", "int8", "int", "what"] {
            assert_eq!(m.peak_gflops(p), m.fp32_gflops, "{p}");
        }
        // Unknown GPU-level figures never exceed what the GPU states elsewhere.
        for g in cat().gpus() {
            for p in ["fp64", "tf32"] {
                assert!(g.peak_gflops(p) <= g.peak_gflops("fp16").max(g.fp32_gflops));
            }
        }
    }

    #[test]
    fn labels_and_numbers_of_compute_capabilities() {
        assert_eq!(sm_label((8, 9)), "sm_89");
        assert_eq!(sm_label((10, 3)), "sm_103");
        assert_eq!(sm_label((3, 5)), "sm_35");
        assert_eq!(cc_number((8, 9)), 8.9);
        assert_eq!(cc_number((12, 0)), 12.0);
        assert_eq!(gpu("NVIDIA TITAN V").sm_arch(), "sm_70");
        assert_eq!(gpu("NVIDIA B200").sm_arch(), "sm_100");
        assert_eq!(gpu("NVIDIA GeForce RTX 5090").cc_major_minor(), (12, 0));
        assert_eq!(gpu("Tesla K20m").cc_number(), 3.5);
        let c = cat();
        assert_eq!(c.compute_capability("3.7").unwrap().sm_label(), "sm_37");
        assert_eq!(parse_cc("8.9"), Some((8, 9)));
        assert_eq!(parse_cc("89"), None);
    }

    #[test]
    fn amd_targets_are_their_own_compute_capabilities() {
        assert_eq!(gfx_version("gfx90a"), Some((9, 0)));
        assert_eq!(gfx_version("gfx942"), Some((9, 4)));
        assert_eq!(gfx_version("GFX1032"), Some((10, 3)));
        assert_eq!(gfx_version("gfx1100"), Some((11, 0)));
        for bad in ["gfx", "gfx9", "gfx90g", "gfx12345", "sm_90", "9.0"] {
            assert_eq!(gfx_version(bad), None, "{bad}");
        }
        assert_eq!(cc_key("gfx90a"), Some(CcKey::Amd("gfx90a".into())));
        assert_eq!(cc_key("9.0"), Some(CcKey::Nvidia(9, 0)));
        let mi250x = &gpu("AMD Instinct MI250X");
        let h100 = &gpu("H100 SXM5");
        assert_eq!(
            (mi250x.sm_arch(), mi250x.cc_number()),
            ("gfx90a".into(), 9.0)
        );
        // gfx90a is GFX IP 9.0 and the H100 compute capability 9.0: not one.
        assert!(!mi250x.same_compute_capability(h100));
        assert!(mi250x.same_compute_capability(&gpu("MI210")));
        assert!(!mi250x.same_compute_capability(&gpu("MI300X")));
        assert!(!mi250x.async_tensor_mma());
        let c = cat();
        assert_eq!(c.distances(mi250x, h100)[0], 1.0);
        assert_eq!(c.distances(mi250x, &gpu("MI210"))[0], 0.0);
        assert!(!c.same_instruction_set(&gpu("W6600"), h100));
        assert!(c.same_instruction_set(&gpu("W6600"), &gpu("W6800")));
    }

    #[test]
    fn gpus_of_a_vendor() {
        let c = cat();
        let amd = c.gpus_of_vendor("amd");
        assert_eq!(amd.len(), 15);
        assert!(amd.iter().all(|g| g.vendor == "AMD"));
        assert_eq!(c.gpus_of_vendor("NVIDIA").len() + amd.len(), c.gpus().len());
        assert!(c.gpus_of_vendor("Intel").is_empty());
        assert_eq!(c.vendors(), vec!["AMD", "NVIDIA"]);
    }

    #[test]
    fn amd_names_as_hip_reports_them_resolve() {
        let c = cat();
        for (name, want) in [
            ("AMD Instinct MI250X", "AMD Instinct MI250X"),
            ("MI250X", "AMD Instinct MI250X"),
            ("MI250X module", "AMD Instinct MI250X module"),
            ("AMD Radeon PRO W6600", "AMD Radeon PRO W6600"),
            ("AMD Radeon Pro W7800", "AMD Radeon PRO W7800"),
            ("Radeon RX 7900 XTX", "AMD Radeon RX 7900 XTX"),
        ] {
            assert_eq!(
                c.resolve(name).map(|g| g.name.as_str()),
                Some(want),
                "{name}"
            );
        }
        // A board the catalog lacks is not taken for its neighbour.
        assert!(c.resolve("AMD Radeon Pro W7800 48GB").is_none());
        assert!(c.resolve("W7700").is_none());
    }

    #[test]
    fn asynchronous_tensor_mma_only_on_hopper_and_datacenter_blackwell() {
        for (name, async_mma) in [
            ("NVIDIA H100 SXM5 80GB", true),
            ("NVIDIA B200", true),
            ("NVIDIA B300 SXM6 AC", true),
            ("NVIDIA A100 SXM4 80GB", false),
            ("NVIDIA L40S", false),
            ("NVIDIA RTX PRO 6000 Blackwell Server Edition", false),
            ("NVIDIA GeForce RTX 5090", false),
        ] {
            assert_eq!(gpu(name).async_tensor_mma(), async_mma, "{name}");
        }
    }

    #[test]
    fn fp32_matches_cores_and_boost_clock() {
        for g in cat().gpus() {
            let cores = g.cores_per_sm.expect("built-in GPUs state cores_per_sm");
            let peak = g.sm_count as f64 * cores as f64 * 2.0 * g.boost_clock_mhz / 1000.0;
            let rel = (g.fp32_gflops - peak).abs() / peak;
            assert!(
                rel <= 0.001,
                "{}: fp32 {} vs {peak} from cores x clock",
                g.name,
                g.fp32_gflops
            );
            // Dense tensor rates never fall below the CUDA-core rate of the same type,
            // and narrower types are never slower.
            let order = [
                g.tensor_tf32_gflops,
                g.tensor_fp16_gflops,
                g.tensor_fp8_gflops,
                g.tensor_fp4_gflops,
            ];
            let known: Vec<f64> = order.iter().flatten().copied().collect();
            assert!(
                known.windows(2).all(|w| w[0] <= w[1]),
                "{}: {known:?}",
                g.name
            );
            if let (Some(a), Some(b)) = (g.tensor_fp16_gflops, g.tensor_bf16_gflops) {
                // Equal on NVIDIA; the MI100's BF16 matrix rate is half its FP16 one.
                if g.vendor == "NVIDIA" {
                    assert_eq!(a, b, "{}", g.name);
                } else {
                    assert!(b <= a, "{}", g.name);
                }
            }
            if let Some(f) = g.fp64_gflops {
                assert!(f <= g.fp32_gflops * 1.001, "{}", g.name);
            }
        }
    }

    #[test]
    fn spot_check_vendor_figures() {
        let g = gpu;
        assert_eq!(g("NVIDIA TITAN V").l2_bytes, 4718592);
        assert_eq!(g("NVIDIA GeForce RTX 2080 Ti").l2_bytes, 5767168);
        assert_eq!(g("NVIDIA GeForce RTX 4070").l2_bytes, 37748736);
        assert_eq!(g("NVIDIA GeForce GTX TITAN X").l2_bytes, 3145728);
        assert_eq!(g("NVIDIA H100 80GB HBM3").l2_bytes, 52428800);
        // The driver reports 60 MB on the H200 (six HBM stacks; the H100 SXM5 has five).
        assert_eq!(g("NVIDIA H200").l2_bytes, 62914560);
        assert_eq!(g("NVIDIA H100 80GB HBM3").sm_count, 132);
        assert_eq!(g("NVIDIA A100-SXM4-40GB").sm_count, 108);
        assert_eq!(g("Tesla K20m").sm_count, 13);
        assert_eq!(g("Tesla K20m").cores_per_sm, Some(192));
        assert_eq!(g("Tesla P100-PCIE-12GB").mem_bandwidth_gbs, 549.0);
        assert_eq!(
            g("NVIDIA RTX PRO 6000 Blackwell Server Edition").sm_count,
            188
        );
        assert_eq!(
            g("NVIDIA RTX PRO 6000 Blackwell Server Edition").l2_bytes,
            134217728
        );
        assert_eq!(g("NVIDIA B300 SXM6 AC").compute_capability, "10.3");
        assert_eq!(g("NVIDIA GB300").compute_capability, "10.3");
    }

    /// NVIDIA material: 7.7 TB/s, FP64 37 TFLOP/s, 1965 MHz maximum SM clock, 148 SMs.
    #[test]
    fn b200_figures() {
        let b = gpu("NVIDIA B200");
        assert_eq!(b.sm_count, 148);
        assert_eq!(b.boost_clock_mhz, 1965.0);
        assert_eq!(b.mem_bandwidth_gbs, 7700.0);
        assert_eq!(b.fp64_gflops, Some(37000.0));
        assert_eq!(b.tensor_fp64_gflops, Some(37000.0));
        assert!((b.fp32_gflops - 148.0 * 256.0 * 1.965).abs() < 0.1);
        assert_eq!(b.l2_bytes, 132644864);
        assert_eq!(b.compute_capability, "10.0");
    }

    #[test]
    fn gpu_round_trips_through_toml() {
        let g = gpu("rtx 4090");
        let s = toml::to_string(&g).unwrap();
        let back: Gpu = toml::from_str(&s).unwrap();
        assert_eq!(g, back);
        assert!(!s.contains("sustained_bandwidth_gbs"));
    }
}
