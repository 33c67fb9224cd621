//! PyTorch profiler traces: the Chrome-trace JSON `torch.profiler` writes
//! (`export_chrome_trace`, Kineto), gzip'd or not.
//!
//! Each GPU kernel event (`cat` "kernel") becomes a run: its duration (µs, converted
//! to ms), grid, block, registers per thread and shared memory. Its work comes from
//! the operator that launched it: the runtime call (`cuda_runtime` / `cuda_driver`)
//! with the kernel's `correlation` id, and the innermost `cpu_op` on the same thread
//! that encloses that call. That operator's `flops` argument (`with_flops=True`) gives
//! the FLOPs where present; else its input shapes (`record_shapes=True`) give FLOPs
//! and bytes for mm, bmm, addmm, linear, convolution, elementwise operators, softmax
//! and layer norm by the NeuSight corpus's derivations ([`super::neusight`]), walking
//! out to an enclosing operator when the innermost has no rule. An operator that
//! launches several kernels shares its work among them in proportion to their
//! measured times. A kernel without a derivation is kept with its time (flops and
//! dram_bytes 0), counted and said in the report.
//!
//! The GPU is the device the kernel ran on (`deviceProperties`), named as the catalog
//! names it: a name the catalog does not know exactly (a data-centre variant's
//! "NVIDIA A100-PG509-200", ROCm's "AMD Radeon Graphics") is refused with the catalog
//! GPUs its device properties fit (SM count, compute capability, memory), and
//! `--gpu` says which it is.
//!
//! The document is read as a stream, twice: `traceEvents` one event at a time into
//! the fields used (a 1 GB trace is not held as a JSON tree), first the kernels and
//! runtime calls, then only the operators that enclose a kernel's launch, so memory
//! follows the kernels rather than the file; nesting is bounded by the JSON reader's
//! recursion limit.

use super::common::{FileReport, ImportOptions, Imported, Importer, Missing, Probe};
use super::neusight::{self, Op, Work};
use crate::data::{Name, Origin, Run};
use crate::error::{input_name, Error, Input, Position, Result};
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// The format's name for `--from`.
pub const FORMAT: &str = "torch-trace";

/// PyTorch profiler traces (`--from torch-trace`).
pub struct TorchTrace;

impl Importer for TorchTrace {
    fn name(&self) -> &'static str {
        FORMAT
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["torch_trace", "pytorch-trace", "kineto"]
    }
    fn describe(&self) -> &'static str {
        "a PyTorch profiler (Kineto) Chrome-trace JSON with 'traceEvents', gzip'd or not"
    }
    fn detect(&self, probe: &Probe) -> bool {
        probe.is_json() && probe.has_json_key("traceEvents")
    }
    fn takes_file_name(&self, name: &str) -> bool {
        name.ends_with(".json") || name.ends_with(".json.gz")
    }
    fn read(&self, path: &Path, opts: &ImportOptions) -> Result<Imported> {
        let trace = read_trace(path, opts)?;
        trace.into_imported()
    }
}

/// One kernel of a trace as the step prediction needs it: the run it became, where
/// it ran on the GPU's timeline and the operator that launched it.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceKernel {
    /// Its launching operator's name ("(no operator)" when none encloses the launch).
    pub operator: String,
    pub start_us: f64,
    pub dur_us: f64,
    pub device: i64,
    pub stream: i64,
    /// Where its work comes from: `flops_arg`, `shapes:<op>` or None.
    pub work_from: Option<String>,
}

/// A trace read into runs, one per kernel event, in the order of their start.
#[derive(Debug, Clone)]
pub struct Trace {
    pub file: String,
    pub runs: Vec<Run>,
    /// Row-aligned with `runs`.
    pub kernels: Vec<TraceKernel>,
    pub report: FileReport,
}

impl Trace {
    /// The trace as an import: its runs with the pass-through columns `operator`,
    /// `work_from`, `start_us`, `stream`.
    pub fn into_imported(self) -> Result<Imported> {
        let rows: Vec<usize> = (0..self.runs.len()).collect();
        let k = &self.kernels;
        let pass = vec![
            (
                "operator",
                k.iter().map(|x| Some(x.operator.clone())).collect(),
            ),
            ("work_from", k.iter().map(|x| x.work_from.clone()).collect()),
            (
                "start_us",
                k.iter().map(|x| Some(format!("{}", x.start_us))).collect(),
            ),
            (
                "stream",
                k.iter().map(|x| Some(x.stream.to_string())).collect(),
            ),
        ];
        super::common::one_table_import(
            self.runs,
            pass,
            &rows,
            &self.file,
            "deviceProperties name",
            self.report,
            &[],
        )
    }
}

// ---- the events read, compact ----

#[derive(Debug, Clone, Deserialize)]
struct DeviceProps {
    id: Option<i64>,
    name: Option<String>,
    #[serde(rename = "totalGlobalMem")]
    total_mem: Option<f64>,
    #[serde(rename = "computeMajor")]
    major: Option<i64>,
    #[serde(rename = "computeMinor")]
    minor: Option<i64>,
    #[serde(rename = "numSms")]
    sms: Option<f64>,
}

/// An event as the file writes it: only the fields used are kept.
#[derive(Deserialize)]
struct RawEvent {
    cat: Option<String>,
    name: Option<String>,
    pid: Option<Value>,
    tid: Option<Value>,
    ts: Option<Value>,
    dur: Option<Value>,
    args: Option<RawArgs>,
}

#[derive(Deserialize, Default)]
struct RawArgs {
    correlation: Option<Value>,
    device: Option<Value>,
    stream: Option<Value>,
    grid: Option<Value>,
    block: Option<Value>,
    #[serde(rename = "registers per thread")]
    regs: Option<Value>,
    #[serde(rename = "shared memory")]
    smem: Option<Value>,
    flops: Option<Value>,
    #[serde(rename = "Input Dims")]
    dims: Option<Value>,
    #[serde(rename = "Input type")]
    types: Option<Value>,
    #[serde(rename = "Concrete Inputs")]
    concrete: Option<Value>,
}

struct Kernel {
    name: Arc<str>,
    ts: f64,
    dur: Option<f64>,
    correlation: Option<i64>,
    device: i64,
    stream: i64,
    grid: Option<[f64; 3]>,
    block: Option<[f64; 3]>,
    regs: Option<f64>,
    smem: Option<f64>,
}

struct Launch {
    thread: u32,
    ts: f64,
}

struct CpuOp {
    name: Arc<str>,
    ts: f64,
    end: f64,
    flops: Option<f64>,
    /// The input shapes, for the operators a rule derives work for.
    dims: Vec<Vec<f64>>,
    /// Bytes per element of the first input (4 when unknown).
    elem_bytes: f64,
    concrete: Vec<String>,
}

#[derive(Default)]
struct Events {
    devices: Vec<DeviceProps>,
    kernels: Vec<Kernel>,
    launches: HashMap<i64, Launch>,
    ops: HashMap<u32, Vec<CpuOp>>,
    /// (pid, tid) of each thread, numbered.
    threads: HashMap<(String, String), u32>,
    /// The second pass: operators only, those that enclose a launch of a kernel
    /// (the times of those launches per thread, sorted).
    ops_pass: Option<HashMap<u32, Vec<f64>>>,
    /// Operator and kernel names, each held once (a trace repeats a few).
    names: HashMap<String, Arc<str>>,
    /// Events that are GPU counters (CUPTI range profiling) rather than kernels.
    counters: usize,
    events: usize,
}

fn num(v: &Option<Value>) -> Option<f64> {
    match v.as_ref()? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn id_text(v: &Option<Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

fn triple(v: &Option<Value>) -> Option<[f64; 3]> {
    let a = v.as_ref()?.as_array()?;
    let g = |i: usize| a.get(i).and_then(Value::as_f64).unwrap_or(1.0);
    (!a.is_empty()).then(|| [g(0), g(1), g(2)])
}

/// Whether a rule derives work for an operator of this name (its shapes are kept).
fn has_rule(name: &str) -> bool {
    rule_of(name).is_some()
}

impl Events {
    fn name(&mut self, name: String) -> Arc<str> {
        match self.names.get(&name) {
            Some(n) => n.clone(),
            None => {
                let n: Arc<str> = Arc::from(name.as_str());
                self.names.insert(name, n.clone());
                n
            }
        }
    }

    fn thread(&mut self, pid: &Option<Value>, tid: &Option<Value>) -> u32 {
        let key = (id_text(pid), id_text(tid));
        let next = self.threads.len() as u32;
        *self.threads.entry(key).or_insert(next)
    }

    fn take(&mut self, e: RawEvent) {
        let cat = e.cat.as_deref().unwrap_or("").to_ascii_lowercase();
        if let Some(points) = &self.ops_pass {
            if cat != "cpu_op" {
                return;
            }
            let (Some(ts), Some(dur)) = (num(&e.ts), num(&e.dur)) else {
                return;
            };
            let Some(thread) = self.threads.get(&(id_text(&e.pid), id_text(&e.tid))) else {
                return;
            };
            let launches = points.get(thread).map_or(&[][..], Vec::as_slice);
            let first = launches.partition_point(|&t| t < ts);
            if launches.get(first).is_none_or(|&t| t > ts + dur) {
                return;
            }
        } else {
            self.events += 1;
        }
        let args = e.args.unwrap_or_default();
        match cat.as_str() {
            "kernel" => {
                let Some(ts) = num(&e.ts) else { return };
                let name = self.name(e.name.unwrap_or_default());
                self.kernels.push(Kernel {
                    name,
                    ts,
                    dur: num(&e.dur),
                    correlation: num(&args.correlation).map(|c| c as i64),
                    device: num(&args.device).map_or(0, |d| d as i64),
                    stream: num(&args.stream).map_or(0, |d| d as i64),
                    grid: triple(&args.grid),
                    block: triple(&args.block),
                    regs: num(&args.regs),
                    smem: num(&args.smem),
                });
            }
            "cuda_runtime" | "cuda_driver" => {
                if let (Some(c), Some(ts)) = (num(&args.correlation), num(&e.ts)) {
                    let thread = self.thread(&e.pid, &e.tid);
                    self.launches.insert(c as i64, Launch { thread, ts });
                }
            }
            "cpu_op" if self.ops_pass.is_some() => {
                let (Some(ts), Some(dur)) = (num(&e.ts), num(&e.dur)) else {
                    return;
                };
                let name = self.name(e.name.unwrap_or_default());
                let ruled = has_rule(&name);
                let dims = if ruled {
                    shapes(&args.dims)
                } else {
                    Vec::new()
                };
                let concrete = match (&args.concrete, ruled) {
                    (Some(Value::Array(a)), true) => a
                        .iter()
                        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                        .collect(),
                    _ => Vec::new(),
                };
                let elem_bytes = args
                    .types
                    .as_ref()
                    .and_then(Value::as_array)
                    .and_then(|t| t.first())
                    .and_then(Value::as_str)
                    .map_or(4.0, elem_bytes);
                let thread = self.thread(&e.pid, &e.tid);
                self.ops.entry(thread).or_default().push(CpuOp {
                    name,
                    ts,
                    end: ts + dur,
                    flops: num(&args.flops).filter(|f| f.is_finite() && *f > 0.0),
                    dims,
                    elem_bytes,
                    concrete,
                });
            }
            c if c.contains("counter") || c == "cuda_profiler_range" => self.counters += 1,
            _ => {}
        }
    }
}

/// The shapes of `Input Dims`: one list of sizes per input (a scalar's is empty).
fn shapes(v: &Option<Value>) -> Vec<Vec<f64>> {
    let Some(Value::Array(inputs)) = v else {
        return Vec::new();
    };
    inputs
        .iter()
        .map(|d| {
            d.as_array()
                .map(|a| a.iter().filter_map(Value::as_f64).collect())
                .unwrap_or_default()
        })
        .collect()
}

/// Bytes per element of a profiler's type name.
fn elem_bytes(t: &str) -> f64 {
    match t {
        "double" | "long int" | "int64_t" | "c10::complex<float>" => 8.0,
        "c10::Half" | "c10::BFloat16" | "short int" => 2.0,
        "signed char" | "unsigned char" | "bool" | "c10::Float8_e4m3fn" | "c10::Float8_e5m2" => 1.0,
        _ => 4.0,
    }
}

// ---- streaming the document ----

struct Root<'a>(&'a mut Events);

impl<'de> Visitor<'de> for Root<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a trace object with 'traceEvents'")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        let mut saw_events = false;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "traceEvents" => {
                    saw_events = true;
                    map.next_value_seed(EventSeq(&mut *self.0))?;
                }
                "deviceProperties" => self.0.devices = map.next_value()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if !saw_events {
            return Err(serde::de::Error::custom("no 'traceEvents' list"));
        }
        Ok(())
    }
}

struct EventSeq<'a>(&'a mut Events);

impl<'de> serde::de::DeserializeSeed<'de> for EventSeq<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for EventSeq<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of trace events")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        while let Some(e) = seq.next_element::<RawEvent>()? {
            self.0.take(e);
        }
        Ok(())
    }
}

/// Stream the trace's events into `events` (in its pass: see [`Events::ops_pass`]).
fn read_events(path: &Path, file: &str, events: &mut Events) -> Result<()> {
    let f = crate::files::open(path).map_err(|e| Error::io_error(file, "cannot read", e))?;
    let gz = Probe::new(path)?.is_gzip();
    let reader: Box<dyn std::io::Read> = if gz {
        Box::new(flate2::read::MultiGzDecoder::new(std::io::BufReader::new(
            f,
        )))
    } else {
        Box::new(std::io::BufReader::new(f))
    };
    let mut de = serde_json::Deserializer::from_reader(reader);
    de.deserialize_map(Root(events))
        .and_then(|()| de.end())
        .map_err(|e| {
            let what = e.to_string();
            let what = what.split(" at line ").next().unwrap_or(&what).to_string();
            let what = if e.is_eof() {
                format!("the trace ends early (truncated?): {what}")
            } else {
                format!("not a readable PyTorch profiler trace: {what}")
            };
            Error::parse(file, Position::LineColumn(e.line(), e.column()), None, what)
        })
}

// ---- work of an operator ----

/// The work rule of an operator name (namespace and in-place `_` dropped).
fn rule_of(name: &str) -> Option<&'static str> {
    let base = name.strip_prefix("aten::").unwrap_or(name);
    let base = base.trim_end_matches('_');
    Some(match base {
        "mm" => "mm",
        "bmm" => "bmm",
        "addmm" => "addmm",
        "linear" => "linear",
        "convolution" | "_convolution" | "conv2d" => "conv",
        "cudnn_convolution" => "cudnn_conv",
        "add" | "sub" | "mul" | "div" | "pow" => "binary",
        "relu" | "tanh" | "sigmoid" | "clamp_min" | "threshold_backward" => "act1",
        "gelu" => "gelu",
        "softmax" | "_softmax" => "softmax",
        "layer_norm" | "native_layer_norm" => "layer_norm",
        _ => return None,
    })
}

fn numel(shape: &[f64]) -> f64 {
    shape.iter().product()
}

/// A `[a, b]` concrete input's first number.
fn first_number(s: &str) -> Option<f64> {
    s.trim_matches(|c| c == '[' || c == ']')
        .split(',')
        .next()?
        .trim()
        .parse()
        .ok()
}

/// The square pair of a `[a, b]` concrete input (conv_work is for square strides).
fn square(s: &str) -> Option<f64> {
    let v: Vec<f64> = s
        .trim_matches(|c| c == '[' || c == ']')
        .split(',')
        .filter_map(|x| x.trim().parse().ok())
        .collect();
    match v.as_slice() {
        [a] => Some(*a),
        [a, b] if a == b => Some(*a),
        _ => None,
    }
}

/// The work an operator's shapes give by the NeuSight derivations, bytes scaled from
/// their 4-byte elements to the operator's own.
fn shape_work(op: &CpuOp) -> Option<Work> {
    let rule = rule_of(&op.name)?;
    let d = &op.dims;
    let w = match rule {
        "mm" => {
            let (a, b) = (d.first()?, d.get(1)?);
            (a.len() == 2 && b.len() == 2).then(|| neusight::bmm_work(1.0, a[0], a[1], b[1]))?
        }
        "bmm" => {
            let (a, b) = (d.first()?, d.get(1)?);
            (a.len() == 3 && b.len() == 3).then(|| neusight::bmm_work(a[0], a[1], a[2], b[2]))?
        }
        "addmm" => {
            let (x, w) = (d.get(1)?, d.get(2)?);
            (x.len() == 2 && w.len() == 2).then(|| neusight::linear_work(1.0, x[0], x[1], w[1]))?
        }
        "linear" => {
            let (x, w) = (d.first()?, d.get(1)?);
            let (rows, inner) = (numel(&x[..x.len().checked_sub(1)?]), *x.last()?);
            (w.len() == 2).then(|| neusight::linear_work(1.0, rows, inner, w[0]))?
        }
        "conv" | "cudnn_conv" => {
            let (x, w) = (d.first()?, d.get(1)?);
            let (stride_at, pad_at) = if rule == "conv" { (3, 4) } else { (3, 2) };
            let stride = square(op.concrete.get(stride_at)?)?;
            let pad = square(op.concrete.get(pad_at)?)?;
            let groups_at = if rule == "conv" { 8 } else { 5 };
            if op
                .concrete
                .get(groups_at)
                .and_then(|g| first_number(g))
                .is_some_and(|g| g != 1.0)
            {
                return None;
            }
            (x.len() == 4 && w.len() == 4 && x[2] == x[3] && w[2] == w[3] && x[1] == w[1])
                .then(|| neusight::conv_work(x[0], x[1], w[0], w[2], x[2], stride, pad))??
        }
        "binary" => {
            let a = d.first()?;
            match d.get(1) {
                Some(b) if !b.is_empty() => neusight::binary_work(1.0, numel(a).max(numel(b))),
                _ => neusight::scalar_work(1.0, numel(a)),
            }
        }
        "act1" => Op::Activation(1.0).work(&[1.0, numel(d.first()?)])?,
        "gelu" => Op::Activation(5.0).work(&[1.0, numel(d.first()?)])?,
        "softmax" => Op::Softmax.work(&[1.0, numel(d.first()?)])?,
        "layer_norm" => {
            let x = d.first()?;
            let h = *x.last()?;
            (h > 0.0).then(|| neusight::layernorm_work(numel(x) / h, h))?
        }
        _ => return None,
    };
    let scale = op.elem_bytes / 4.0;
    (w.flops.is_finite() && w.dram_bytes.is_finite()).then_some(Work {
        flops: w.flops,
        dram_bytes: w.dram_bytes * scale,
    })
}

// ---- the GPU ----

/// The GPU a device of the trace is: its name when the catalog knows it exactly, the
/// GPU `--gpu` names, or an error listing the GPUs its properties fit.
fn device_gpu(
    props: Option<&DeviceProps>,
    device: i64,
    opts: &ImportOptions,
    file: &str,
) -> Result<String> {
    let catalog = opts.catalog();
    let name = props.and_then(|p| p.name.clone()).unwrap_or_default();
    if let Some(given) = &opts.gpu {
        // (a name the catalog knows and another given: import_file refuses the pair)
        if !name.is_empty() && catalog.resolve(&name).is_some() {
            return Ok(name);
        }
        return Ok(given.clone());
    }
    if name.is_empty() {
        return Err(Error::parse(
            file,
            Position::File,
            None,
            format!(
                "device {device} has no name in 'deviceProperties': say which GPU the trace ran on with {}",
                input_name(Input::Gpu)
            ),
        ));
    }
    if catalog.resolve(&name).is_some() {
        return Ok(name);
    }
    let fits = props.map(|p| fitting_gpus(p, &catalog)).unwrap_or_default();
    let facts = props.map(describe_props).unwrap_or_default();
    let hint = if fits.is_empty() {
        format!(
            "no GPU of the catalog has its device properties ({facts}): add it with {} FILE",
            input_name(Input::GpuCatalog)
        )
    } else {
        format!(
            "its device properties ({facts}) fit {}: say which with {}",
            fits.iter()
                .map(|g| format!("'{g}'"))
                .collect::<Vec<_>>()
                .join(", "),
            input_name(Input::Gpu)
        )
    };
    Err(Error::unknown_gpu(
        name,
        file,
        Position::File,
        "deviceProperties",
        crate::error::GpuHint::Text(format!("not a name of the catalog; {hint}")),
    ))
}

fn describe_props(p: &DeviceProps) -> String {
    let mut parts = Vec::new();
    if let Some(n) = p.sms {
        parts.push(format!("{n} SMs"));
    }
    if let (Some(a), Some(b)) = (p.major, p.minor) {
        parts.push(format!("compute capability {a}.{b}"));
    }
    if let Some(m) = p.total_mem {
        parts.push(format!("{:.1} GiB", m / (1u64 << 30) as f64));
    }
    parts.join(", ")
}

/// The catalog GPUs a device's properties fit: the same SM count, the same compute
/// capability (where the catalog writes one as major.minor), memory within 10 % (in
/// GB or GiB), and the vendor its name starts with.
fn fitting_gpus(p: &DeviceProps, catalog: &crate::catalog::Catalog) -> Vec<String> {
    let name = p.name.as_deref().unwrap_or("").to_ascii_lowercase();
    let vendor = ["nvidia", "amd", "intel"]
        .into_iter()
        .find(|v| name.starts_with(v));
    catalog
        .gpus()
        .iter()
        .filter(|g| vendor.is_none_or(|v| g.vendor.eq_ignore_ascii_case(v)))
        .filter(|g| p.sms.is_some_and(|n| n == f64::from(g.sm_count)))
        .filter(
            |g| match (p.major, p.minor, g.compute_capability.split_once('.')) {
                (Some(a), Some(b), Some((ga, gb))) if ga.parse::<i64>().is_ok() => {
                    ga.parse::<i64>() == Ok(a) && gb.parse::<i64>() == Ok(b)
                }
                _ => true,
            },
        )
        .filter(|g| match (p.total_mem, g.mem_gb) {
            (Some(bytes), Some(gb)) if gb > 0.0 => {
                let near = |x: f64| (x - gb).abs() / gb <= 0.1;
                near(bytes / 1e9) || near(bytes / (1u64 << 30) as f64)
            }
            _ => true,
        })
        .map(|g| g.name.clone())
        .collect()
}

// ---- the trace ----

/// Read a trace into one run per GPU kernel (see the module's documentation).
pub fn read_trace(path: &Path, opts: &ImportOptions) -> Result<Trace> {
    let file = path.display().to_string();
    // Two passes over the stream, so that memory follows the kernels, not the file:
    // the kernels and runtime calls first, then only the operators that enclose the
    // launch of a kernel.
    let mut ev = Events::default();
    read_events(path, &file, &mut ev)?;
    if ev.kernels.is_empty() {
        let why = if ev.counters > 0 {
            format!("{} GPU counter events and no kernel events (a CUPTI counter trace, not a timing one)", ev.counters)
        } else if ev.events == 0 {
            "no events at all".to_string()
        } else {
            format!("{} events, none a GPU kernel (a CPU-only run, or one profiled without ProfilerActivity.CUDA)", ev.events)
        };
        return Err(Error::parse(
            file,
            Position::File,
            None,
            format!("no GPU kernels in 'traceEvents': {why}"),
        ));
    }
    let kernel_calls: std::collections::HashSet<i64> =
        ev.kernels.iter().filter_map(|k| k.correlation).collect();
    ev.launches.retain(|c, _| kernel_calls.contains(c));
    let mut points: HashMap<u32, Vec<f64>> = HashMap::new();
    for l in ev.launches.values() {
        points.entry(l.thread).or_default().push(l.ts);
    }
    for p in points.values_mut() {
        p.sort_by(f64::total_cmp);
    }
    ev.ops_pass = Some(points);
    read_events(path, &file, &mut ev)?;
    for ops in ev.ops.values_mut() {
        ops.sort_by(|a, b| a.ts.total_cmp(&b.ts).then(b.end.total_cmp(&a.end)));
    }
    ev.kernels.sort_by(|a, b| a.ts.total_cmp(&b.ts));
    let mut gpus: HashMap<i64, String> = HashMap::new();
    let mut report = FileReport {
        file: file.clone(),
        format: FORMAT.into(),
        ..FileReport::default()
    };
    // Each kernel's launching operator (thread, index of its innermost op) and the
    // work found for it.
    struct Found<'e> {
        kernel: &'e Kernel,
        op: Option<(u32, usize)>,
        work: Option<(Work, String, (u32, usize))>,
    }
    let mut found: Vec<Found> = Vec::new();
    for k in &ev.kernels {
        let Some(dur) = k.dur else {
            *report.failed.entry("no_time".into()).or_default() += 1;
            continue;
        };
        let ms = dur / 1e3;
        if !ms.is_finite() || ms <= 0.0 || ms > super::common::ABSURD_TIME_MS {
            *report.failed.entry("absurd_time".into()).or_default() += 1;
            continue;
        }
        let launch = k.correlation.and_then(|c| ev.launches.get(&c));
        let mut op = None;
        let mut work = None;
        if let Some(l) = launch {
            if let Some(ops) = ev.ops.get(&l.thread) {
                let thread = l.thread;
                // The enclosing ops, innermost first: those starting at or before the
                // launch and ending at or after it, latest start first.
                let upto = ops.partition_point(|o| o.ts <= l.ts);
                let enclosing = (0..upto).rev().filter(|&i| ops[i].end >= l.ts);
                for (depth, i) in enclosing.take(64).enumerate() {
                    if depth == 0 {
                        op = Some((thread, i));
                    }
                    let o = &ops[i];
                    if let Some(f) = o.flops {
                        let bytes = shape_work(o).map_or(0.0, |w| w.dram_bytes);
                        work = Some((
                            Work {
                                flops: f,
                                dram_bytes: bytes,
                            },
                            "flops_arg".to_string(),
                            (thread, i),
                        ));
                        break;
                    }
                    if let Some(w) = shape_work(o) {
                        work = Some((w, format!("shapes:{}", o.name), (thread, i)));
                        break;
                    }
                }
            }
        }
        found.push(Found {
            kernel: k,
            op,
            work,
        });
    }
    // An operator's work shared among its kernels by their times.
    let mut op_time: HashMap<(u32, usize), f64> = HashMap::new();
    for f in &found {
        if let Some((_, _, at)) = &f.work {
            *op_time.entry(*at).or_default() += f.kernel.dur.unwrap_or(0.0);
        }
    }
    let file_arc: Arc<str> = Arc::from(file.as_str());
    let source = opts.source.clone().unwrap_or_else(|| {
        format!(
            "torch-trace:{}",
            path.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        )
    });
    let mut names = crate::data::SharedNames::default();
    let mut runs = Vec::with_capacity(found.len());
    let mut kernels = Vec::with_capacity(found.len());
    let mut underived = 0;
    for (call, f) in found.iter().enumerate() {
        let k = f.kernel;
        let gpu = match gpus.get(&k.device) {
            Some(g) => g.clone(),
            None => {
                let props = ev.devices.iter().find(|d| d.id == Some(k.device));
                let g = device_gpu(props, k.device, opts, &file)?;
                gpus.insert(k.device, g.clone());
                g
            }
        };
        let dur = k.dur.unwrap_or(0.0);
        let dims3 = |t: Option<[f64; 3]>| t.map(|[x, y, z]| format!("{x}x{y}x{z}"));
        let mut params = vec![(
            "call".to_string(),
            super::kernel_tuner::ParamValue::Number(call as f64),
        )];
        if let Some(g) = dims3(k.grid) {
            params.push(("grid".into(), super::kernel_tuner::ParamValue::Text(g)));
        }
        if let Some(b) = dims3(k.block) {
            params.push(("block".into(), super::kernel_tuner::ParamValue::Text(b)));
        }
        let mut run = Run {
            gpu: names.get(&gpu),
            kernel: names.get(&k.name),
            config: super::kernel_tuner::canonical_key(&params).into(),
            time_ms: dur / 1e3,
            grid_blocks: k.grid.map(|g| g.iter().product()),
            block_threads: k.block.map(|b| b.iter().product()),
            regs_per_thread: k.regs.filter(|r| *r > 0.0),
            smem_per_block: k.smem.filter(|s| *s >= 0.0),
            source: Some(names.get(&source)),
            origin: Origin {
                file: file_arc.clone(),
                row: call + 1,
                line: None,
            },
            ..Run::default()
        };
        let operator =
            f.op.map(|(t, i)| ev.ops[&t][i].name.to_string())
                .unwrap_or_else(|| "(no operator)".to_string());
        let work_from = match &f.work {
            Some((w, from, at)) => {
                let share = dur
                    / op_time
                        .get(at)
                        .copied()
                        .filter(|t| *t > 0.0)
                        .unwrap_or(dur.max(1e-12));
                run.flops = w.flops * share;
                run.dram_bytes = w.dram_bytes * share;
                if let Some(rule) = rule_of(&ev.ops[&at.0][at.1].name) {
                    run.category = Some(Name::from(category_of(rule)));
                }
                Some(from.clone())
            }
            None => {
                underived += 1;
                None
            }
        };
        kernels.push(TraceKernel {
            operator,
            start_us: k.ts,
            dur_us: dur,
            device: k.device,
            stream: k.stream,
            work_from,
        });
        runs.push(run);
    }
    if underived > 0 {
        let why = "its launching operator has no 'flops' argument and no shape rule (record_shapes=True and with_flops=True give them): kept with its time, work 0";
        for feature in ["flops", "dram_bytes"] {
            report.missing.push(Missing {
                feature: feature.into(),
                rows: underived,
                why: why.into(),
            });
        }
        report.notes.push(format!(
            "{underived} of {} kernels have no work derivation (kept with their time)",
            runs.len()
        ));
    }
    Ok(Trace {
        file,
        runs,
        kernels,
        report,
    })
}

fn category_of(rule: &str) -> &'static str {
    match rule {
        "mm" | "bmm" => Op::Bmm.category(),
        "addmm" | "linear" => Op::Linear.category(),
        "conv" | "cudnn_conv" => Op::Conv.category(),
        "softmax" => Op::Softmax.category(),
        "layer_norm" => Op::LayerNorm.category(),
        _ => Op::Binary.category(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(name: &str, dims: Vec<Vec<f64>>, concrete: &[&str]) -> CpuOp {
        CpuOp {
            name: Arc::from(name),
            ts: 0.0,
            end: 1.0,
            flops: None,
            dims,
            elem_bytes: 4.0,
            concrete: concrete.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn shapes_give_the_neusight_work() {
        let w = shape_work(&op(
            "aten::mm",
            vec![vec![128.0, 5.0], vec![5.0, 128.0]],
            &[],
        ))
        .unwrap();
        assert_eq!(w, neusight::bmm_work(1.0, 128.0, 5.0, 128.0));
        assert_eq!(w.flops, 2.0 * 128.0 * 5.0 * 128.0);
        // addmm(bias, x[M, K], w[K, N]) is a linear layer with its bias
        let w = shape_work(&op(
            "aten::addmm",
            vec![vec![128.0], vec![5.0, 128.0], vec![128.0, 128.0]],
            &[],
        ))
        .unwrap();
        assert_eq!(w, neusight::linear_work(1.0, 5.0, 128.0, 128.0));
        let w = shape_work(&op(
            "aten::add_",
            vec![vec![128.0, 128.0], vec![128.0, 128.0], vec![]],
            &[],
        ))
        .unwrap();
        assert_eq!(w, neusight::binary_work(1.0, 128.0 * 128.0));
        let conv = op(
            "aten::convolution",
            vec![
                vec![8.0, 3.0, 32.0, 32.0],
                vec![16.0, 3.0, 3.0, 3.0],
                vec![16.0],
            ],
            &[
                "", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1",
            ],
        );
        assert_eq!(
            shape_work(&conv),
            neusight::conv_work(8.0, 3.0, 16.0, 3.0, 32.0, 1.0, 1.0)
        );
        assert!(shape_work(&op("aten::empty", vec![vec![4.0]], &[])).is_none());
        // half precision: the same FLOPs, half the bytes
        let mut half = op("aten::mm", vec![vec![64.0, 64.0], vec![64.0, 64.0]], &[]);
        half.elem_bytes = 2.0;
        let full = shape_work(&op(
            "aten::mm",
            vec![vec![64.0, 64.0], vec![64.0, 64.0]],
            &[],
        ))
        .unwrap();
        assert_eq!(shape_work(&half).unwrap().dram_bytes * 2.0, full.dram_bytes);
    }
}
