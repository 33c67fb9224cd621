//! Import of Nsight Compute CSV exports (`ncu --csv --page raw` and `--page details`)
//! into a runs table.
//!
//! One output row per (GPU, kernel, launch configuration); several launches of the
//! same give `time_ms` = their mean, `time_std_ms` (sample) and `trials`. Counters are
//! averaged over the launches that have them. Mapping (first metric found wins; the
//! full lists are in `measure.rs`):
//!
//! - `time_ms` <- `gpu__time_duration.sum` (legacy `gpu__time_duration`, details
//!   "Duration"); without a duration, the NERSC roofline timing
//!   `sm__cycles_elapsed.avg / sm__cycles_elapsed.avg.per_second` (extra column
//!   `time_source` says which).
//! - `dram_bytes` <- `dram__bytes.sum`, else read + write (`dram__bytes_{read,write}.sum`,
//!   legacy `dram__{read,write}_bytes`, sectors x 32). `l2_bytes` <- `lts__t_bytes.sum`
//!   (or sectors x 32), `l1_bytes` <- `l1tex__t_bytes.sum`, `shared_bytes` <-
//!   `smsp__sass_data_bytes_mem_shared.sum`. Where a run has them, each level is a
//!   roof of its own (the hierarchical roofline of `features::run_features`).
//! - `l2_slice_imbalance` <- `lts__t_bytes.max` / `lts__t_bytes.avg`: the busiest L2
//!   slice's bytes over the mean slice's (1 when the traffic is spread evenly); empty
//!   when the export lacks either or the kernel moved no L2 bytes. The co-run model
//!   weights a kernel's L2 demand by it (`models::corun`).
//! - `achieved_occupancy` (0..1) <- `sm__warps_active.avg.pct_of_peak_sustained_active`
//!   / 100: it replaces the computed occupancy on the profiled GPU
//!   (`features::run_occupancy`).
//! - `flops` by the NERSC roofline method: fp64/fp32/fp16 add + mul + 2 x fma
//!   thread-level instructions (`sass_thread_inst_executed_op_*_pred_on.sum`, or the
//!   roofline section's per-cycle rates x elapsed cycles), plus tensor-core work:
//!   `sm__ops_path_tensor_src_*` ops (counted as FLOPs, as ncu's tensor roofline does) or,
//!   on Volta only, 512 x tensor-pipe instructions. `flops_fma` = 2 x FMA instructions,
//!   `flops_add`, `flops_mul`: the CUDA-core part. Note: half-precision packed (HFMA2)
//!   instructions count once per thread, as NERSC does; ncu's own half roofline counts
//!   them twice, so fp16 FLOPs may be up to 2x low for half2 code.
//! - `precision` = the label with the most FLOPs (fp64, fp32, fp16, tensor_fp16 for
//!   fp16/bf16 tensor work, tf32, tensor_fp8, ...).
//! - Unknown FLOPs or DRAM bytes (the file has no such counter): the runs table needs
//!   a number, so the rule is `flops` = 0 with `precision` = "unknown", and
//!   `dram_bytes` = 0; extra columns `flops_source` / `dram_bytes_source` are "none"
//!   and the report lists them as missing. Tensor-only counters that read zero also
//!   give precision "unknown" (CUDA-core FLOPs were not collected).
//! - `block_threads` / `grid_blocks` = products of the launch dimensions;
//!   `regs_per_thread`; `smem_per_block` = static + dynamic; `inst_warp` <-
//!   `smsp__inst_executed.sum`; `inst_thread` <- `smsp__thread_inst_executed.sum`;
//!   `sm_count` <- `device__attribute_multiprocessor_count`.
//! - The instruction roofline's counts (`features::instruction`): 32-byte transactions
//!   per level, `l1_sectors` <- `l1tex__t_sectors_pipe_lsu_mem_global_op_{ld,st}.sum`
//!   (else every L1TEX tag-stage sector, `l1tex__t_sectors.sum` or
//!   `l1tex__t_bytes.sum` / 32), `shared_wavefronts` <-
//!   `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum` (else
//!   `..._mem_shared.sum`), `l2_sectors` <- `lts__t_sectors.sum` (else
//!   `lts__t_bytes.sum` / 32), `dram_sectors` <- `dram__sectors_{read,write}.sum` (else
//!   the DRAM byte counters / 32); the instruction mix, `inst_thread_{fp32,fp64,int,ldst}`
//!   <- `smsp__sass_thread_inst_executed_op_{fp32,fp64,integer,memory}_pred_on.sum`
//!   and `inst_warp_tensor` <- `smsp__inst_executed_pipe_tensor.sum`. A count the
//!   export lacks stays empty.
//! - `config` = canonical key `block=<threads>,grid=<blocks>`, plus `block_dims` /
//!   `grid_dims` (`32x32x1`) when a launch is not one-dimensional, plus `variant=<k>`
//!   when launches of one kernel and geometry did different work (FLOP or instruction
//!   counters differ by more than 0.1 %; k counts the variants in order of appearance).
//! - `gpu` <- `device__attribute_display_name` (raw page only; the `Device` column is an
//!   index), else the caller's name; neither is an error, never a guess.
//! - Extra columns: `ncu_ids`, `time_source`,
//!   `flops_source`, `dram_bytes_source`, `tensor_flops`, `compute_capability`.

mod launch;
mod measure;
mod records;
mod units;

pub use launch::NcuLayout;

use crate::data::{Name, Origin, Run, RunDetails, RunsTable};
use crate::error::{input_name, Error, Input, Result};
use measure::Measured;
use polars::prelude::{Column, DataFrame};
use std::path::Path;
use std::sync::Arc;

/// An imported export: the runs and what the import found.
#[derive(Debug)]
pub struct NcuImport {
    pub runs: RunsTable,
    pub report: NcuReport,
}

/// What an import found, for the user and for tests.
#[derive(Debug, Clone)]
pub struct NcuReport {
    pub layout: NcuLayout,
    /// Profiled launches read (before grouping).
    pub launches: usize,
    /// Distinct kernel names.
    pub kernels: usize,
    /// Output rows (one per GPU, kernel and configuration).
    pub rows: usize,
    /// Metric names the values came from, sorted.
    pub metrics_found: Vec<String>,
    /// Runs-table quantities no launch had, with the rule applied.
    pub missing: Vec<String>,
    /// Lines outside the table (profiler messages, program output).
    pub skipped_lines: usize,
    /// `==ERROR==` / `==WARNING==` lines of the profiler.
    pub profiler_messages: Vec<String>,
    /// Launches left out, with why (no duration metric).
    pub skipped_launches: Vec<String>,
    /// The GPU name came from the file (not from the caller).
    pub device_from_file: bool,
    /// Other facts worth knowing (e.g. tensor instructions not converted to FLOPs).
    pub notes: Vec<String>,
}

impl std::fmt::Display for NcuReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "Nsight Compute {} export: {} launches, {} kernels -> {} rows; {} lines skipped",
            self.layout, self.launches, self.kernels, self.rows, self.skipped_lines
        )?;
        writeln!(f, "metrics used: {}", self.metrics_found.join(", "))?;
        for m in &self.missing {
            writeln!(f, "missing: {m}")?;
        }
        for m in self
            .profiler_messages
            .iter()
            .chain(&self.skipped_launches)
            .chain(&self.notes)
        {
            writeln!(f, "note: {m}")?;
        }
        Ok(())
    }
}

/// Whether `path` looks like an ncu CSV export (a header with "ID" and "Kernel Name"
/// among its first lines), for auto-detection.
pub fn looks_like_ncu(path: &Path) -> bool {
    // Profiler and program output may precede the header; 1 MiB is plenty.
    let Ok(head) = crate::files::read_head(path, 1 << 20) else {
        return false;
    };
    let text = String::from_utf8_lossy(&head);
    text.lines().take(2000).any(|line| {
        let l = line.trim_start();
        l.starts_with("\"ID\",") && l.contains("\"Kernel Name\"")
    })
}

pub(crate) use super::common::same_gpu;

/// An export without a GPU name but with a compute capability (the details page's
/// `CC`, the raw page's `device__attribute_compute_capability_major/minor`) must
/// agree with the GPU `--gpu` names: a profile of another GPU would be priced at the
/// wrong roofs. A name the built-in catalog does not know is left to validation.
fn check_cc(
    cc: Option<&str>,
    gpu: &str,
    line: usize,
    file: &str,
    builtin: &mut Option<crate::catalog::Catalog>,
) -> Result<()> {
    let Some(cc) = cc.map(str::trim) else {
        return Ok(());
    };
    let catalog = builtin.get_or_insert_with(crate::catalog::Catalog::builtin);
    let Some(g) = catalog.resolve(gpu) else {
        return Ok(());
    };
    let parse = |c: &str| {
        let (a, b) = c.split_once('.')?;
        Some((a.trim().parse::<f64>().ok()?, b.trim().parse::<f64>().ok()?))
    };
    match (parse(cc), parse(&g.compute_capability)) {
        (Some(a), Some(b)) if a == b => Ok(()),
        _ => Err(Error::file(
            file,
            format!(
                "line {line}: the export's compute capability is {cc}, but {} '{gpu}' is {} of compute capability {}{}",
                input_name(Input::Gpu),
                g.name,
                g.compute_capability,
                gpus_of_cc(cc)
            ),
        )),
    }
}

/// For an export without a GPU name: the built-in catalog's GPUs of its compute
/// capability, as a hint after "--gpu NAME" (empty when it has none).
fn gpus_of_cc(cc: &str) -> String {
    const SHOWN: usize = 6;
    let catalog = crate::catalog::Catalog::builtin();
    let names: Vec<&str> = catalog
        .gpus()
        .iter()
        .filter(|g| g.compute_capability == cc.trim())
        .map(|g| g.name.as_str())
        .collect();
    match names.len() {
        0 => String::new(),
        n if n <= SHOWN => format!(" (the catalog's GPUs of compute capability {cc}: {})", names.join(", ")),
        n => format!(
            " (the catalog's GPUs of compute capability {cc}: {}, and {} more: `gpucast gpus list`)",
            names[..SHOWN].join(", "),
            n - SHOWN
        ),
    }
}

/// Import an ncu CSV export. `gpu` names the GPU when the file does not (details
/// pages never do); when both do, they must agree.
pub fn import(path: &Path, gpu: Option<&str>) -> Result<NcuImport> {
    let file = path.display().to_string();
    let bytes = crate::files::read(path).map_err(|e| Error::file(&file, e.to_string()))?;
    import_str(&String::from_utf8_lossy(&bytes), &file, gpu)
}

/// [`import`] of text already read; `file` names it in messages and provenance.
pub fn import_str(text: &str, file: &str, gpu: Option<&str>) -> Result<NcuImport> {
    let at = |line: usize, column: &str, msg: &str| {
        Error::file(file, format!("line {line}, column '{column}': {msg}"))
    };
    let table = records::find_table(text)
        .map_err(|(line, col, msg)| Error::file(file, format!("line {line}, column {col}: {msg}")))?
        .ok_or_else(|| {
            Error::file(
                file,
                "not an Nsight Compute CSV export: no header line with \"ID\" and \"Kernel Name\" \
                 (expected the output of `ncu --csv --page raw` or `--page details`)",
            )
        })?;
    let layout = launch::layout_of(&table.header);
    let launches = launch::launches(&table, layout).map_err(|(l, c, m)| at(l, &c, &m))?;
    if launches.is_empty() {
        return Err(Error::file(
            file,
            format!(
                "the Nsight Compute table (header at line {}) has no launches",
                table.header.line
            ),
        ));
    }
    let gpu = gpu.map(str::trim).filter(|g| !g.is_empty());

    let mut measured: Vec<(launch::Launch, Measured)> = Vec::new();
    let mut skipped_launches = Vec::new();
    for l in launches {
        let m = measure::measure(&l).map_err(|(line, c, msg)| at(line, &c, &msg))?;
        if m.time_ms.is_some_and(|t| t > 0.0) {
            measured.push((l, m));
        } else {
            skipped_launches.push(format!(
                "launch ID {} ({}, line {}): no positive kernel duration",
                l.id,
                short(&l.kernel),
                l.line
            ));
        }
    }
    let n_launches = measured.len() + skipped_launches.len();
    if measured.is_empty() {
        return Err(Error::file(
            file,
            "no launch has a kernel duration (gpu__time_duration.sum, gpu__time_duration, \
             the details page's Duration, or sm__cycles_elapsed.avg with its .per_second)",
        ));
    }

    // GPU of each launch.
    let mut device_from_file = true;
    let mut gpus = Vec::with_capacity(measured.len());
    // (read only where the two names differ in text)
    let mut builtin: Option<crate::catalog::Catalog> = None;
    for (l, m) in &measured {
        let name = match (m.device.as_deref(), gpu) {
            (Some(d), Some(g)) if !same_gpu(d, g, &mut builtin) => {
                return Err(Error::file(
                    file,
                    format!(
                        "line {}: the file names the GPU '{d}' but '{g}' was given; \
                         omit the GPU name or correct it",
                        l.line
                    ),
                ))
            }
            (Some(d), _) => d.to_string(),
            (None, Some(g)) => {
                device_from_file = false;
                check_cc(
                    m.compute_capability.as_deref(),
                    g,
                    l.line,
                    file,
                    &mut builtin,
                )?;
                g.to_string()
            }
            (None, None) => {
                let cc = m.compute_capability.as_deref();
                let cc_text = cc
                    .map(|c| format!(", compute capability {c}"))
                    .unwrap_or_default();
                let candidates = cc.map(gpus_of_cc).unwrap_or_default();
                return Err(Error::file(
                    file,
                    format!(
                        "no GPU name in this Nsight Compute export (no device__attribute_display_name; \
                         the 'Device' column is only an index{cc_text}); pass it with {gpu} NAME, or name \
                         it once: `gpucast data import {file} {gpu} NAME --out runs.csv`{candidates}",
                        gpu = input_name(Input::Gpu)
                    ),
                ));
            }
        };
        gpus.push(name);
    }

    let (runs, extra) = group(&measured, &gpus, file)?;
    let report = report(
        layout,
        n_launches,
        &measured,
        &runs,
        &table,
        skipped_launches,
        device_from_file,
    );
    Ok(NcuImport {
        runs: RunsTable {
            runs,
            extra,
            files: vec![file.to_string()],
            not_imported: Default::default(),
            gpu_fields: device_from_file
                .then(|| crate::data::GpuField {
                    file: file.to_string(),
                    field: "column 'device__attribute_display_name'".to_string(),
                    at: None,
                })
                .into_iter()
                .collect(),
        },
        report,
    })
}

/// The first 60 characters of a kernel name, for messages.
fn short(kernel: &str) -> String {
    match kernel.char_indices().nth(60) {
        Some((i, _)) => format!("{}...", &kernel[..i]),
        None => kernel.to_string(),
    }
}

/// The canonical configuration key (the contract's rule).
fn canonical_key(params: &mut [(&str, String)]) -> String {
    gpucast_runs::config_key(params.iter().map(|(k, v)| (*k, v.as_str())))
}

fn number_text(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

fn config_of(m: &Measured) -> String {
    let mut params: Vec<(&str, String)> = Vec::new();
    for (total, shape, dims) in [
        ("block", "block_dims", &m.block_dims),
        ("grid", "grid_dims", &m.grid_dims),
    ] {
        if let Some(d) = dims {
            params.push((total, number_text(d.iter().product())));
            if d.iter().skip(1).any(|&x| x != 1.0) {
                let s: Vec<String> = d.iter().map(|&x| number_text(x)).collect();
                params.push((shape, s.join("x")));
            }
        }
    }
    canonical_key(&mut params)
}

/// Whether two launches did the same work: their FLOP and instruction counters, where
/// both have them, agree within 0.1 % (counters derived from printed rates carry
/// rounding; DRAM traffic is left out, it varies with cache state).
fn same_work(a: &Measured, b: &Measured) -> bool {
    let close = |x: Option<f64>, y: Option<f64>| match (x, y) {
        (Some(x), Some(y)) => (x - y).abs() <= 1e-3 * x.abs().max(y.abs()),
        _ => true,
    };
    let flops = |m: &Measured| m.flops.counted().then(|| m.flops.total());
    close(flops(a), flops(b))
        && close(a.inst_warp, b.inst_warp)
        && close(a.inst_thread, b.inst_thread)
}

/// Mean of the values present, `None` when none is.
fn mean_of(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let (mut sum, mut n) = (0.0, 0usize);
    for v in values.flatten() {
        sum += v;
        n += 1;
    }
    (n > 0).then(|| sum / n as f64)
}

/// Distinct texts in first-seen order, joined by "; ".
fn distinct(texts: impl Iterator<Item = String>) -> String {
    let mut out: Vec<String> = Vec::new();
    for t in texts {
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out.join("; ")
}

/// Group launches by (GPU, kernel, config) in first-seen order and build the rows and
/// the row-aligned extra columns.
fn group(
    measured: &[(launch::Launch, Measured)],
    gpus: &[String],
    file: &str,
) -> Result<(Vec<Run>, DataFrame)> {
    let mut keys: Vec<(String, String, String)> = Vec::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    for (i, (l, m)) in measured.iter().enumerate() {
        let key = (gpus[i].clone(), l.kernel.clone(), config_of(m));
        let same = keys
            .iter()
            .zip(&members)
            .position(|(k, idx)| *k == key && same_work(&measured[idx[0]].1, m));
        match same {
            Some(at) => members[at].push(i),
            None => {
                keys.push(key);
                members.push(vec![i]);
            }
        }
    }
    // The same kernel and geometry doing different work (e.g. a GEMM with another K)
    // is another configuration: number the variants in order of appearance.
    let mut variant_of = vec![0usize; keys.len()];
    for i in 0..keys.len() {
        let same_key: Vec<usize> = (0..keys.len()).filter(|&j| keys[j] == keys[i]).collect();
        if same_key.len() > 1 {
            variant_of[i] = same_key.iter().position(|&j| j == i).unwrap_or(0) + 1;
        }
    }
    for (key, v) in keys.iter_mut().zip(&variant_of) {
        if *v > 0 {
            let mut params: Vec<(&str, String)> = key
                .2
                .split(',')
                .filter_map(|p| p.split_once('='))
                .map(|(k, v)| (k, v.to_string()))
                .collect();
            params.push(("variant", v.to_string()));
            key.2 = canonical_key(&mut params);
        }
    }
    let file_arc: Arc<str> = Arc::from(file);
    let source: Name = format!(
        "nsight-compute import of {}",
        Path::new(file)
            .file_name()
            .map_or_else(|| file.to_string(), |n| n.to_string_lossy().into_owned())
    )
    .into();
    let mut runs = Vec::with_capacity(keys.len());
    let n = keys.len();
    let mut ids = Vec::with_capacity(n);
    let mut time_source = Vec::with_capacity(n);
    let mut flops_source = Vec::with_capacity(n);
    let mut dram_source = Vec::with_capacity(n);
    let mut tensor_flops = Vec::with_capacity(n);
    let mut cc = Vec::with_capacity(n);
    for (row, ((gpu, kernel, config), idx)) in keys.into_iter().zip(&members).enumerate() {
        let ms: Vec<&Measured> = idx.iter().map(|&i| &measured[i].1).collect();
        let mean = |f: &dyn Fn(&Measured) -> Option<f64>| mean_of(ms.iter().map(|m| f(m)));
        let times: Vec<f64> = ms.iter().filter_map(|m| m.time_ms).collect();
        let count = times.len() as f64;
        let time_ms = times.iter().sum::<f64>() / count;
        let time_std_ms = (times.len() >= 2).then(|| {
            (times.iter().map(|t| (t - time_ms).powi(2)).sum::<f64>() / (count - 1.0)).sqrt()
        });
        let flops_counted = ms.iter().any(|m| m.flops.counted());
        let cuda_core = ms.iter().any(|m| m.flops.cuda_core);
        let flops = mean(&|m| m.flops.counted().then(|| m.flops.total())).unwrap_or(0.0);
        let precision = precision_of(&ms, flops_counted, cuda_core);
        let first = ms[0];
        runs.push(Run {
            gpu: gpu.into(),
            kernel: kernel.into(),
            config: config.into(),
            time_ms,
            flops,
            dram_bytes: mean(&|m| m.dram_bytes).unwrap_or(0.0),
            time_std_ms,
            trials: Some(count),
            block_threads: mean(&|m| m.block_dims.as_ref().map(|d| d.iter().product())),
            grid_blocks: mean(&|m| m.grid_dims.as_ref().map(|d| d.iter().product())),
            regs_per_thread: mean(&|m| m.regs_per_thread),
            smem_per_block: mean(&|m| m.smem_per_block),
            l2_bytes: mean(&|m| m.l2_bytes),
            l1_bytes: mean(&|m| m.l1_bytes),
            shared_bytes: mean(&|m| m.shared_bytes),
            details: RunDetails {
                inst_warp: mean(&|m| m.inst_warp),
                inst_thread: mean(&|m| m.inst_thread),
                inst_thread_fp32: mean(&|m| m.inst_thread_fp32),
                inst_thread_fp64: mean(&|m| m.inst_thread_fp64),
                inst_thread_int: mean(&|m| m.inst_thread_int),
                inst_thread_ldst: mean(&|m| m.inst_thread_ldst),
                inst_warp_tensor: mean(&|m| m.flops.tensor_inst),
                l1_sectors: mean(&|m| m.l1_sectors),
                shared_wavefronts: mean(&|m| m.shared_wavefronts),
                l2_sectors: mean(&|m| m.l2_sectors),
                l2_slice_imbalance: mean(&|m| m.l2_slice_imbalance),
                dram_sectors: mean(&|m| m.dram_sectors),
                flops_fma: mean(&|m| m.flops.cuda_core.then_some(m.flops.fma)),
                flops_add: mean(&|m| m.flops.cuda_core.then_some(m.flops.add)),
                flops_mul: mean(&|m| m.flops.cuda_core.then_some(m.flops.mul)),
                sm_count: mean(&|m| m.sm_count),
                ..RunDetails::default()
            }
            .boxed(),
            achieved_occupancy: mean(&|m| m.achieved_occupancy),
            precision: precision.map(Into::into),
            source: Some(source.clone()),
            origin: Origin {
                file: file_arc.clone(),
                row: row + 1,
                line: None,
            },
            ..Run::default()
        });
        ids.push(
            idx.iter()
                .map(|&i| measured[i].0.id.clone())
                .collect::<Vec<_>>()
                .join(";"),
        );
        time_source.push(distinct(ms.iter().map(|m| m.time_source.clone())));
        flops_source.push(distinct(ms.iter().map(|m| m.flops.source.clone())));
        dram_source.push(distinct(ms.iter().map(|m| {
            if m.dram_source.is_empty() {
                "none".to_string()
            } else {
                m.dram_source.clone()
            }
        })));
        tensor_flops.push(mean(&|m| m.flops.tensor));
        cc.push(first.compute_capability.clone());
    }
    let columns = vec![
        Column::new("ncu_ids".into(), ids),
        Column::new("time_source".into(), time_source),
        Column::new("flops_source".into(), flops_source),
        Column::new("dram_bytes_source".into(), dram_source),
        Column::new("tensor_flops".into(), tensor_flops),
        Column::new("compute_capability".into(), cc),
    ];
    let extra = DataFrame::new(n, columns).map_err(|e| Error::data(file, e))?;
    Ok((runs, extra))
}

/// The precision label with the most FLOPs over a group; see the module docs for
/// "unknown" and `None` (no floating-point work counted at all).
fn precision_of(ms: &[&Measured], counted: bool, cuda_core: bool) -> Option<String> {
    if !counted {
        return Some("unknown".into());
    }
    let mut sums: Vec<(String, f64)> = Vec::new();
    for m in ms {
        for (label, v) in &m.flops.by_precision {
            match sums.iter_mut().find(|(l, _)| l == label) {
                Some((_, s)) => *s += v,
                None => sums.push((label.clone(), *v)),
            }
        }
    }
    // On a tie the earlier label wins (fp64, fp32, fp16, then tensor labels).
    let mut best: Option<(String, f64)> = None;
    for (label, v) in sums {
        if v > 0.0 && best.as_ref().is_none_or(|(_, b)| v > *b) {
            best = Some((label, v));
        }
    }
    match best {
        Some((label, _)) => Some(label),
        None if cuda_core => None,
        None => Some("unknown".into()),
    }
}

fn report(
    layout: NcuLayout,
    launches: usize,
    measured: &[(launch::Launch, Measured)],
    runs: &[Run],
    table: &records::Table,
    skipped_launches: Vec<String>,
    device_from_file: bool,
) -> NcuReport {
    let mut metrics_found: Vec<String> =
        measured.iter().flat_map(|(_, m)| m.used.clone()).collect();
    metrics_found.sort();
    metrics_found.dedup();
    let mut kernels: Vec<&str> = measured.iter().map(|(l, _)| l.kernel.as_str()).collect();
    kernels.sort();
    kernels.dedup();

    let none = |f: &dyn Fn(&Run) -> Option<f64>| runs.iter().all(|r| f(r).is_none());
    let mut missing = Vec::new();
    if !measured.iter().any(|(_, m)| m.flops.counted()) {
        missing.push(
            "flops: no FLOP counters in the file (rule: flops = 0, precision = \"unknown\")"
                .to_string(),
        );
    } else if !measured.iter().any(|(_, m)| m.flops.cuda_core) {
        missing.push("flops_fma/flops_add/flops_mul: no CUDA-core FLOP counters; flops count tensor ops only".to_string());
    }
    if !measured.iter().any(|(_, m)| m.dram_bytes.is_some()) {
        missing.push("dram_bytes: no DRAM byte counters in the file (rule: dram_bytes = 0, dram_bytes_source = \"none\")".to_string());
    }
    for (name, absent) in [
        ("l2_bytes", none(&|r| r.l2_bytes)),
        ("l1_bytes", none(&|r| r.l1_bytes)),
        ("shared_bytes", none(&|r| r.shared_bytes)),
        ("block_threads", none(&|r| r.block_threads)),
        ("grid_blocks", none(&|r| r.grid_blocks)),
        ("regs_per_thread", none(&|r| r.regs_per_thread)),
        ("smem_per_block", none(&|r| r.smem_per_block)),
        ("inst_warp", none(&|r| r.details().inst_warp)),
        ("inst_thread", none(&|r| r.details().inst_thread)),
        ("l1_sectors", none(&|r| r.details().l1_sectors)),
        (
            "shared_wavefronts",
            none(&|r| r.details().shared_wavefronts),
        ),
        ("l2_sectors", none(&|r| r.details().l2_sectors)),
        (
            "l2_slice_imbalance",
            none(&|r| r.details().l2_slice_imbalance),
        ),
        ("dram_sectors", none(&|r| r.details().dram_sectors)),
        (
            "instruction mix (inst_thread_fp32/fp64/int/ldst)",
            runs.iter().all(|r| {
                let d = r.details();
                [
                    d.inst_thread_fp32,
                    d.inst_thread_fp64,
                    d.inst_thread_int,
                    d.inst_thread_ldst,
                ]
                .iter()
                .all(Option::is_none)
            }),
        ),
        ("sm_count", none(&|r| r.details().sm_count)),
        (
            "achieved_occupancy",
            measured.iter().all(|(_, m)| m.achieved_occupancy.is_none()),
        ),
    ] {
        if absent {
            missing.push(name.to_string());
        }
    }

    let mut notes = Vec::new();
    let unconverted = measured
        .iter()
        .filter(|(_, m)| m.flops.tensor.is_none() && m.flops.tensor_inst.is_some_and(|n| n > 0.0))
        .count();
    if unconverted > 0 {
        notes.push(format!(
            "{unconverted} launches executed tensor-pipe instructions that are not in flops \
             (FLOPs per instruction depend on the MMA shape; only Volta's 512 is applied): see column inst_warp_tensor"
        ));
    }
    if measured
        .iter()
        .any(|(_, m)| !m.time_source.starts_with("gpu__") && !m.time_source.ends_with("/Duration"))
    {
        notes.push("kernel time from elapsed cycles / clock rate (NERSC roofline timing; no duration metric in the file)".to_string());
    }
    let variants = runs
        .iter()
        .filter(|r| r.config.contains("variant="))
        .count();
    if variants > 0 {
        notes.push(format!(
            "{variants} rows carry variant=k: one kernel with one launch geometry did different work \
             (FLOP or instruction counters differ)"
        ));
    }
    NcuReport {
        layout,
        launches,
        kernels: kernels.len(),
        rows: runs.len(),
        metrics_found,
        missing,
        skipped_lines: table.skipped_lines,
        profiler_messages: table.profiler_messages.clone(),
        skipped_launches,
        device_from_file,
        notes,
    }
}

/// Nsight Compute CSV exports (`--from ncu`).
pub struct Ncu;

impl super::common::Importer for Ncu {
    fn name(&self) -> &'static str {
        "ncu"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["nsight-compute"]
    }
    fn describe(&self) -> &'static str {
        "an Nsight Compute CSV export, --page raw or details"
    }
    fn detect(&self, probe: &super::common::Probe) -> bool {
        !probe.is_json() && !probe.is_parquet() && !probe.is_gzip() && looks_like_ncu(probe.path)
    }
    fn takes_file_name(&self, name: &str) -> bool {
        name.ends_with(".csv")
    }
    fn read(
        &self,
        path: &Path,
        opts: &super::common::ImportOptions,
    ) -> Result<super::common::Imported> {
        use super::common::{one_file, FileReport, Missing};
        let imp = import(path, opts.gpu.as_deref())?;
        let rows = imp.runs.len();
        let missing = imp
            .report
            .missing
            .iter()
            .map(|m| Missing {
                feature: m.clone(),
                rows,
                why: "the profile has no counter for it".into(),
            })
            .collect();
        let notes = imp.report.to_string().lines().map(String::from).collect();
        // (counted, so that every command that reads the file says so)
        let skipped = imp.report.skipped_launches.len();
        let left_out = (skipped > 0)
            .then(|| ("no_kernel_duration".to_string(), skipped))
            .into_iter()
            .collect();
        let file = path.display().to_string();
        Ok(one_file(file, "ncu", imp.runs, opts, |r| FileReport {
            missing,
            notes,
            left_out,
            ..r
        }))
    }
}
