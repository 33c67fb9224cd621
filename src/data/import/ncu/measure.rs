//! From one launch's metrics to the runs table's quantities. Each quantity has an
//! ordered list of metric names (newest spelling first, then legacy and derived
//! ones); the first the launch has wins and its name is recorded.

use super::launch::{CellError, Launch};
use super::units::{Kind, SECTOR_BYTES};

/// Kernel duration. Section metric "Duration" is the details page's copy of
/// `gpu__time_duration.sum`.
const TIME: [&str; 3] = [
    "gpu__time_duration.sum",
    "gpu__time_duration", // Pascal-era name
    "GPU Speed Of Light Throughput/Duration",
];
/// NERSC roofline timing when no duration was collected: elapsed cycles / clock.
const CYCLES_AND_CLOCK: [(&str, &str); 2] = [
    (
        "sm__cycles_elapsed.avg",
        "sm__cycles_elapsed.avg.per_second",
    ),
    (
        "smsp__cycles_elapsed.avg",
        "smsp__cycles_elapsed.avg.per_second",
    ),
];
const DRAM_TOTAL: [&str; 2] = ["dram__bytes.sum", "dram__bytes"];
const DRAM_READ_WRITE: [(&str, &str); 3] = [
    ("dram__bytes_read.sum", "dram__bytes_write.sum"),
    ("dram__read_bytes", "dram__write_bytes"), // Pascal-era names
    ("dram__sectors_read.sum", "dram__sectors_write.sum"),
];
const L2_BYTES: [&str; 3] = ["lts__t_bytes.sum", "lts__t_bytes", "lts__t_sectors.sum"];
/// L2 bytes of the busiest slice and of the mean slice (ncu's max and avg over the
/// `lts` units): their ratio is the slice imbalance.
const L2_SLICE_MAX_MEAN: (&str, &str) = ("lts__t_bytes.max", "lts__t_bytes.avg");
const L1_BYTES: [&str; 3] = [
    "l1tex__t_bytes.sum",
    "l1tex__t_bytes",
    "l1tex__t_sectors.sum",
];
const SHARED_BYTES: [&str; 2] = [
    "smsp__sass_data_bytes_mem_shared.sum",
    "sm__sass_data_bytes_mem_shared.sum",
];
const BLOCK_SIZE: [&str; 2] = ["launch__block_size", "Launch Statistics/Block Size"];
const GRID_SIZE: [&str; 2] = ["launch__grid_size", "Launch Statistics/Grid Size"];
const BLOCK_DIMS: [&str; 3] = [
    "launch__block_dim_x",
    "launch__block_dim_y",
    "launch__block_dim_z",
];
const GRID_DIMS: [&str; 3] = [
    "launch__grid_dim_x",
    "launch__grid_dim_y",
    "launch__grid_dim_z",
];
const REGS: [&str; 2] = [
    "launch__registers_per_thread",
    "Launch Statistics/Registers Per Thread",
];
const SMEM_STATIC: [&str; 2] = [
    "launch__shared_mem_per_block_static",
    "Launch Statistics/Static Shared Memory Per Block",
];
const SMEM_DYNAMIC: [&str; 2] = [
    "launch__shared_mem_per_block_dynamic",
    "Launch Statistics/Dynamic Shared Memory Per Block",
];
const INST_WARP: [&str; 4] = [
    "smsp__inst_executed.sum",
    "sm__inst_executed.sum",
    "smsp__inst_executed_sum", // Pascal-era name
    "inst_executed",           // source-counters total (a list per instruction in old versions)
];
const INST_THREAD: [&str; 3] = [
    "smsp__thread_inst_executed.sum",
    "sm__thread_inst_executed.sum",
    "thread_inst_executed",
];
/// 32-byte transactions per memory level for the instruction roofline. Each level's
/// pairs are summed (loads + stores, reads + writes); the first spelling the launch has
/// wins. Byte counters that ncu defines as sectors x 32 (`lts__t_bytes`,
/// `l1tex__t_bytes`, `dram__bytes_*`) give sectors / 32: the same counter in
/// another unit, not an estimate.
const L1_SECTOR_PAIRS: [(&str, &str); 1] = [(
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
)];
/// Without the global load/store split: every L1TEX tag-stage sector (global, local
/// and texture accesses; shared memory does not pass the tag stage).
const L1_SECTORS: [&str; 2] = ["l1tex__t_sectors.sum", "l1tex__t_sectors"];
const L1_SECTOR_BYTES: [&str; 2] = ["l1tex__t_bytes.sum", "l1tex__t_bytes"];
const SHARED_WAVEFRONT_PAIRS: [(&str, &str); 1] = [(
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
)];
const SHARED_WAVEFRONTS: [&str; 1] = ["l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"];
const L2_SECTORS: [&str; 2] = ["lts__t_sectors.sum", "lts__t_sectors"];
const L2_SECTOR_BYTES: [&str; 2] = ["lts__t_bytes.sum", "lts__t_bytes"];
const DRAM_SECTOR_PAIRS: [(&str, &str); 2] = [
    ("dram__sectors_read.sum", "dram__sectors_write.sum"),
    ("dram__read_sectors", "dram__write_sectors"), // Pascal-era names
];
const DRAM_SECTOR_BYTE_PAIRS: [(&str, &str); 1] =
    [("dram__bytes_read.sum", "dram__bytes_write.sum")];
const DRAM_SECTOR_BYTES: [&str; 1] = ["dram__bytes.sum"];
/// The instruction mix: thread-level SASS instructions by type, predicate on (the
/// stems of `{smsp,sm}__<stem>.sum`, read as the FLOP counters are).
const MIX_FP32: &str = "sass_thread_inst_executed_op_fp32_pred_on";
const MIX_FP64: &str = "sass_thread_inst_executed_op_fp64_pred_on";
const MIX_INT: &str = "sass_thread_inst_executed_op_integer_pred_on";
const MIX_LDST: &str = "sass_thread_inst_executed_op_memory_pred_on";
const OCCUPANCY_PCT: [&str; 2] = [
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "Occupancy/Achieved Occupancy",
];
const SM_COUNT: [&str; 1] = ["device__attribute_multiprocessor_count"];
const TENSOR_INST: [&str; 4] = [
    "sm__inst_executed_pipe_tensor.sum",
    "smsp__inst_executed_pipe_tensor.sum",
    "sm__inst_executed_pipe_tensor_op_hmma.sum",
    "smsp__inst_executed_pipe_tensor_op_hmma.sum",
];
/// FLOPs per tensor-pipe warp instruction on Volta (HMMA.884: a warp's 16x16x16 MMA
/// of 8192 FLOPs takes 16 of them). Checked on the V100 export in ../shared: 512 x
/// 33,554,432,000 instructions = 2 x 20480^3, the GEMM the program reported running.
/// Other architectures have several MMA shapes per counter, so no factor is applied.
const VOLTA_FLOPS_PER_TENSOR_INST: f64 = 512.0;

/// FLOPs and where they came from.
#[derive(Debug, Clone, Default)]
pub(super) struct Flops {
    /// Thread-level CUDA-core counters were present (fp add/mul/fma).
    pub cuda_core: bool,
    /// FLOPs from FMA instructions (2 per instruction), adds, multiplies.
    pub fma: f64,
    pub add: f64,
    pub mul: f64,
    /// FLOPs by precision label (fp64, fp32, fp16, tensor_fp16, tf32, ...).
    pub by_precision: Vec<(String, f64)>,
    /// Tensor-core FLOPs, when counted.
    pub tensor: Option<f64>,
    /// Tensor-pipe warp instructions, whether or not converted.
    pub tensor_inst: Option<f64>,
    /// What was summed, e.g. "sass thread instructions + tensor ops".
    pub source: String,
}

impl Flops {
    pub fn total(&self) -> f64 {
        self.fma + self.add + self.mul + self.tensor.unwrap_or(0.0)
    }
    pub fn counted(&self) -> bool {
        self.cuda_core || self.tensor.is_some()
    }
}

/// The runs-table quantities of one launch.
#[derive(Debug, Clone, Default)]
pub(super) struct Measured {
    pub time_ms: Option<f64>,
    pub time_source: String,
    pub dram_bytes: Option<f64>,
    pub dram_source: String,
    pub l2_bytes: Option<f64>,
    /// L2 bytes of the busiest slice over the mean slice's (1: even traffic).
    pub l2_slice_imbalance: Option<f64>,
    pub l1_bytes: Option<f64>,
    pub shared_bytes: Option<f64>,
    pub block_dims: Option<Vec<f64>>,
    pub grid_dims: Option<Vec<f64>>,
    pub regs_per_thread: Option<f64>,
    pub smem_per_block: Option<f64>,
    pub inst_warp: Option<f64>,
    pub inst_thread: Option<f64>,
    /// Thread instructions by type: FP32, FP64, integer, load/store.
    pub inst_thread_fp32: Option<f64>,
    pub inst_thread_fp64: Option<f64>,
    pub inst_thread_int: Option<f64>,
    pub inst_thread_ldst: Option<f64>,
    /// 32-byte transactions per level: L1 (global loads + stores), shared-memory
    /// wavefronts, L2, DRAM.
    pub l1_sectors: Option<f64>,
    pub shared_wavefronts: Option<f64>,
    pub l2_sectors: Option<f64>,
    pub dram_sectors: Option<f64>,
    pub achieved_occupancy: Option<f64>,
    pub sm_count: Option<f64>,
    pub flops: Flops,
    pub device: Option<String>,
    pub compute_capability: Option<String>,
    /// Metric names the values came from.
    pub used: Vec<String>,
}

impl Measured {
    fn take(&mut self, found: Option<(f64, &'static str)>) -> Option<f64> {
        found.map(|(v, name)| {
            self.used.push(name.to_string());
            v
        })
    }

    /// The sum of the first pair of `pairs` the launch has both of (recorded as used).
    fn take_pair(
        &mut self,
        l: &Launch,
        pairs: &[(&'static str, &'static str)],
        kind: Kind,
    ) -> Result<Option<f64>, CellError> {
        for (a, b) in pairs {
            if let (Some(x), Some(y)) = (l.get(a, kind)?, l.get(b, kind)?) {
                self.used.extend([a.to_string(), b.to_string()]);
                return Ok(Some(x + y));
            }
        }
        Ok(None)
    }

    /// A thread-instruction count of the mix (`stem` as [`thread_inst`] reads it).
    fn take_mix(&mut self, l: &Launch, stem: &str) -> Result<Option<f64>, CellError> {
        thread_inst(l, stem, &mut self.used, &mut false)
    }
}

/// A level's transactions: the summed pairs of sector counters, else a total sector
/// counter, else byte counters (pairs, then totals) / 32.
fn sectors(
    l: &Launch,
    m: &mut Measured,
    (pairs, totals): (&[(&'static str, &'static str)], &[&'static str]),
    (byte_pairs, byte_totals): (&[(&'static str, &'static str)], &[&'static str]),
) -> Result<Option<f64>, CellError> {
    if let Some(v) = m.take_pair(l, pairs, Kind::Count)? {
        return Ok(Some(v));
    }
    if let Some(v) = m.take(l.first(totals, Kind::Count)?) {
        return Ok(Some(v));
    }
    if let Some(v) = m.take_pair(l, byte_pairs, Kind::Bytes)? {
        return Ok(Some(v / SECTOR_BYTES));
    }
    Ok(m.take(l.first(byte_totals, Kind::Bytes)?)
        .map(|b| b / SECTOR_BYTES))
}

pub(super) fn measure(l: &Launch) -> Result<Measured, CellError> {
    let mut m = Measured::default();

    // Time.
    if let Some((v, name)) = l.first(&TIME, Kind::TimeMs)? {
        m.used.push(name.into());
        m.time_ms = Some(v);
        m.time_source = name.into();
    } else {
        for (cycles, clock) in CYCLES_AND_CLOCK {
            if let (Some(c), Some(hz)) =
                (l.get(cycles, Kind::Count)?, l.get(clock, Kind::PerSecond)?)
            {
                if hz > 0.0 {
                    m.time_ms = Some(c / hz * 1e3);
                    m.time_source = format!("{cycles} / {clock}");
                    m.used.extend([cycles.to_string(), clock.to_string()]);
                    break;
                }
            }
        }
    }

    // DRAM traffic: total, else read + write.
    if let Some((v, name)) = l.first(&DRAM_TOTAL, Kind::Bytes)? {
        m.dram_bytes = Some(v);
        m.dram_source = name.into();
        m.used.push(name.into());
    } else {
        for (r, w) in DRAM_READ_WRITE {
            if let (Some(rv), Some(wv)) = (l.get(r, Kind::Bytes)?, l.get(w, Kind::Bytes)?) {
                m.dram_bytes = Some(rv + wv);
                m.dram_source = format!("{r} + {w}");
                m.used.extend([r.to_string(), w.to_string()]);
                break;
            }
        }
    }
    m.l2_bytes = m.take(l.first(&L2_BYTES, Kind::Bytes)?);
    let (max, mean) = L2_SLICE_MAX_MEAN;
    if let (Some(hi), Some(avg)) = (l.get(max, Kind::Bytes)?, l.get(mean, Kind::Bytes)?) {
        if avg > 0.0 {
            m.l2_slice_imbalance = Some(hi / avg);
            m.used.extend([max.to_string(), mean.to_string()]);
        }
    }
    m.l1_bytes = m.take(l.first(&L1_BYTES, Kind::Bytes)?);
    m.shared_bytes = m.take(l.first(&SHARED_BYTES, Kind::Bytes)?);

    // Geometry: the "(x, y, z)" columns, else per-dimension metrics, else totals.
    m.block_dims = dims(l, "Block Size", &BLOCK_DIMS, &BLOCK_SIZE, &mut m.used)?;
    m.grid_dims = dims(l, "Grid Size", &GRID_DIMS, &GRID_SIZE, &mut m.used)?;
    m.regs_per_thread = m.take(l.first(&REGS, Kind::Count)?);
    let smem_static = l.first(&SMEM_STATIC, Kind::Bytes)?;
    let smem_dynamic = l.first(&SMEM_DYNAMIC, Kind::Bytes)?;
    if let (Some(_), Some(_)) = (smem_static, smem_dynamic) {
        m.smem_per_block =
            Some(m.take(smem_static).unwrap_or(0.0) + m.take(smem_dynamic).unwrap_or(0.0));
    }

    m.inst_warp = m.take(l.first(&INST_WARP, Kind::Count)?);
    m.inst_thread = m.take(l.first(&INST_THREAD, Kind::Count)?);
    m.inst_thread_fp32 = m.take_mix(l, MIX_FP32)?;
    m.inst_thread_fp64 = m.take_mix(l, MIX_FP64)?;
    m.inst_thread_int = m.take_mix(l, MIX_INT)?;
    m.inst_thread_ldst = m.take_mix(l, MIX_LDST)?;
    m.l1_sectors = sectors(
        l,
        &mut m,
        (&L1_SECTOR_PAIRS, &L1_SECTORS),
        (&[], &L1_SECTOR_BYTES),
    )?;
    m.shared_wavefronts = sectors(
        l,
        &mut m,
        (&SHARED_WAVEFRONT_PAIRS, &SHARED_WAVEFRONTS),
        (&[], &[]),
    )?;
    m.l2_sectors = sectors(l, &mut m, (&[], &L2_SECTORS), (&[], &L2_SECTOR_BYTES))?;
    m.dram_sectors = sectors(
        l,
        &mut m,
        (&DRAM_SECTOR_PAIRS, &[]),
        (&DRAM_SECTOR_BYTE_PAIRS, &DRAM_SECTOR_BYTES),
    )?;
    m.achieved_occupancy = m
        .take(l.first(&OCCUPANCY_PCT, Kind::Percent)?)
        .map(|p| p / 100.0);
    m.sm_count = m.take(l.first(&SM_COUNT, Kind::Count)?);

    m.device = l.text("device__attribute_display_name").map(str::to_string);
    m.compute_capability = l.text("CC").map(str::to_string).or_else(|| {
        match (
            l.get("device__attribute_compute_capability_major", Kind::Count),
            l.get("device__attribute_compute_capability_minor", Kind::Count),
        ) {
            (Ok(Some(a)), Ok(Some(b))) => Some(format!("{a}.{b}")),
            _ => None,
        }
    });
    m.flops = flops(l, m.compute_capability.as_deref(), &mut m.used)?;
    Ok(m)
}

/// Block or grid dimensions; a single total when the file gives no dimensions.
fn dims(
    l: &Launch,
    column: &str,
    per_dim: &[&'static str; 3],
    totals: &[&'static str],
    used: &mut Vec<String>,
) -> Result<Option<Vec<f64>>, CellError> {
    if let Some(d) = l.dims(column)? {
        used.push(column.into());
        return Ok(Some(d));
    }
    let mut d = Vec::new();
    for name in per_dim {
        match l.get(name, Kind::Count)? {
            Some(v) => d.push(v),
            None => break,
        }
    }
    if d.len() == 3 {
        used.extend(per_dim.iter().map(|s| s.to_string()));
        return Ok(Some(d));
    }
    Ok(l.first(totals, Kind::Count)?.map(|(v, name)| {
        used.push(name.into());
        vec![v]
    }))
}

/// FLOPs by the NERSC roofline method: fp64/fp32/fp16 add + mul + 2 x fma
/// thread-level instructions (`sass_thread_inst_executed_op_{d,f,h}{add,mul,fma}_pred_on`),
/// plus tensor-core work where counted (see [`tensor_ops`]).
fn flops(l: &Launch, cc: Option<&str>, used: &mut Vec<String>) -> Result<Flops, CellError> {
    let mut f = Flops::default();
    let mut from_rates = false;
    for (p, label) in [("d", "fp64"), ("f", "fp32"), ("h", "fp16")] {
        let mut precision_flops = 0.0;
        for op in ["add", "mul", "fma"] {
            let Some(n) = thread_inst(
                l,
                &format!("sass_thread_inst_executed_op_{p}{op}_pred_on"),
                used,
                &mut from_rates,
            )?
            else {
                continue;
            };
            f.cuda_core = true;
            let flops = if op == "fma" { 2.0 * n } else { n };
            match op {
                "add" => f.add += flops,
                "mul" => f.mul += flops,
                _ => f.fma += flops,
            }
            precision_flops += flops;
        }
        if f.cuda_core {
            f.by_precision.push((label.into(), precision_flops));
        }
    }
    let mut sources = Vec::new();
    if f.cuda_core {
        sources.push(if from_rates {
            "sass thread instructions (from per-cycle rates x elapsed cycles)"
        } else {
            "sass thread instructions"
        });
    }
    f.tensor_inst = l.first(&TENSOR_INST, Kind::Count)?.map(|(v, name)| {
        used.push(name.into());
        v
    });
    if let Some(by_src) = tensor_ops(l, used)? {
        let total: f64 = by_src.iter().map(|(_, v)| v).sum();
        f.tensor = Some(total);
        for (label, v) in by_src {
            f.by_precision.push((label, v));
        }
        sources.push("tensor ops (sm__ops_path_tensor_src_*)");
    } else if let (Some(n), Some("7.0")) = (f.tensor_inst, cc) {
        let v = n * VOLTA_FLOPS_PER_TENSOR_INST;
        f.tensor = Some(v);
        f.by_precision.push(("tensor_fp16".into(), v));
        sources.push("tensor-pipe instructions x 512 (Volta)");
    }
    f.source = if sources.is_empty() {
        "none".into()
    } else {
        sources.join(" + ")
    };
    Ok(f)
}

/// A thread-level instruction count: the `.sum` counter (sm or smsp), else the
/// roofline section's `.sum.per_cycle_elapsed` rate times the unit's elapsed cycles
/// (rounded: counts are whole; the rate's printed digits limit the precision).
fn thread_inst(
    l: &Launch,
    stem: &str,
    used: &mut Vec<String>,
    from_rates: &mut bool,
) -> Result<Option<f64>, CellError> {
    for unit in ["smsp", "sm"] {
        for suffix in [".sum", ""] {
            let name = format!("{unit}__{stem}{suffix}");
            if let Some(v) = l.get(&name, Kind::Count)? {
                used.push(name);
                return Ok(Some(v));
            }
        }
    }
    for unit in ["smsp", "sm"] {
        let rate = format!("{unit}__{stem}.sum.per_cycle_elapsed");
        let cycles = format!("{unit}__cycles_elapsed.avg");
        if let (Some(r), Some(c)) = (l.get(&rate, Kind::Count)?, l.get(&cycles, Kind::Count)?) {
            used.extend([rate, cycles]);
            *from_rates = true;
            return Ok(Some((r * c).round()));
        }
    }
    Ok(None)
}

/// Tensor-core FLOPs by precision label from `sm__ops_path_tensor_src_<src>[_dst_<dst>][_sparsity_{on,off}].sum`
/// ("math ops in the tensor path"; Nsight Compute's tensor roofline counts them as
/// FLOPs). Per source type the coarsest breakdown present is used so nothing is
/// counted twice: the plain counter, else the sum over destinations, each plain or
/// else summed over sparsity. Integer sources are not FLOPs and are left out.
/// `None` when the launch has no such counter with a value.
fn tensor_ops(l: &Launch, used: &mut Vec<String>) -> Result<Option<Vec<(String, f64)>>, CellError> {
    const PREFIX: &str = "sm__ops_path_tensor_src_";
    // (src, dst, sparsity, metric name)
    let mut found: Vec<(String, String, String, String)> = Vec::new();
    for name in l.cells.keys() {
        let Some(mid) = name
            .strip_prefix(PREFIX)
            .and_then(|m| m.strip_suffix(".sum"))
        else {
            continue;
        };
        let (mid, sparsity) = match mid.rsplit_once("_sparsity_") {
            Some((m, s)) => (m, s.to_string()),
            None => (mid, String::new()),
        };
        let (src, dst) = match mid.split_once("_dst_") {
            Some((s, d)) => (s.to_string(), d.to_string()),
            None => (mid.to_string(), String::new()),
        };
        let floating = src.starts_with("fp") || src == "bf16" || src == "tf32";
        if floating {
            found.push((src, dst, sparsity, name.clone()));
        }
    }
    found.sort();
    let mut out: Vec<(String, f64)> = Vec::new();
    let mut any = false;
    let mut srcs: Vec<&str> = found.iter().map(|f| f.0.as_str()).collect();
    srcs.dedup();
    for src in srcs {
        let of_src: Vec<&(String, String, String, String)> =
            found.iter().filter(|f| f.0 == src).collect();
        let dst_less = of_src.iter().any(|f| f.1.is_empty());
        let mut dsts: Vec<&str> = of_src
            .iter()
            .filter(|f| f.1.is_empty() == dst_less)
            .map(|f| f.1.as_str())
            .collect();
        dsts.dedup();
        let mut total = None;
        for dst in dsts {
            let entries: Vec<_> = of_src.iter().filter(|f| f.1 == dst).collect();
            let plain = entries.iter().find(|f| f.2.is_empty());
            let chosen: Vec<_> = match plain {
                Some(p) => vec![*p],
                None => entries,
            };
            for e in chosen {
                if let Some(v) = l.get(&e.3, Kind::Count)? {
                    *total.get_or_insert(0.0) += v;
                    used.push(e.3.clone());
                }
            }
        }
        if let Some(v) = total {
            any = true;
            out.push((tensor_label(src), v));
        }
    }
    Ok(any.then_some(out))
}

/// Precision label of tensor-core work. bf16 shares fp16's tensor rate on every GPU
/// that has it, so both map to the catalog's `tensor_fp16` peak.
fn tensor_label(src: &str) -> String {
    match src {
        "fp16" | "bf16" => "tensor_fp16".into(),
        "tf32" => "tf32".into(),
        "fp64" => "fp64".into(),
        other => format!("tensor_{other}"),
    }
}
