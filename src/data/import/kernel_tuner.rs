//! Import of Kernel Tuner caches (`.json` or `.json.gz`): one row per configuration
//! that ran, with the work it did taken from a workload description.
//!
//! A cache holds `device_name`, `kernel_name`, `tune_params_keys`, sometimes
//! `problem_size`, and `cache`: one entry per configuration, keyed by the parameter
//! values joined with commas in `tune_params_keys` order. Newer entries repeat the
//! parameter values; older ones hold only `time` (and `times`): their values come from
//! the key. Mapping:
//! - `gpu` = `device_name` as written (the GPU the caller names when it is empty); `source` = the name the caller gives (the
//!   repository the cache comes from), so one GPU measured by two sources stays two
//!   measurements.
//! - `config` = the canonical key of the parameter names and values (sorted by name,
//!   `name=value` joined by `,`), so the same configuration keyed in another parameter
//!   order in another file is the same work.
//! - `time_ms` = `time` (the mean, CUDA events); `time_std_ms` = sample standard
//!   deviation of `times`, `trials` = their count.
//! - `kernel`, `flops`, `dram_bytes`, launch geometry, `suite`, `category`,
//!   `precision`: from the workload file that matches the cache (see
//!   [`crate::data::workload`]).
//!
//! Failed configurations are counted per reason and never imported: a `time` that is a
//! string (`InvalidConfig`, `CompilationFailedConfig`, `RuntimeFailedConfig`, ...), any
//! other non-number, a missing `time`, or an absurd time (not finite, <= 0, or
//! > 1e6 ms).
//!
//! A cache no workload file describes still imports, with the work the cache itself
//! records: `kernel` = its `kernel_name`, `flops` = `GFLOP/s` x time, `dram_bytes` =
//! `GB/s` x time (a tuning script's own byte count, which may be logical rather than
//! DRAM bytes). When only one of the two is recorded the other is 0 and the report
//! lists it as a missing feature; a row with neither is left out and counted
//! (`no_work_measure`). The pass-through column `work_from` says, per row, where its
//! work came from. The config then also carries the cache's problem size, so two
//! unknown problems never share a key.

use super::common::{FileReport, Imported, Missing};
use crate::data::workload::{Env, Matched, Workload, Workloads};
use crate::data::{Name, Origin, Run};
use crate::error::{input_name, line_col, Error, Input, Result};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashSet};
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

pub use super::common::ABSURD_TIME_MS;

/// The top-level field of a cache of predicted times (`gpucast tune --write-cache`):
/// who predicted them. Such a cache is never imported as runs.
pub const PREDICTED_BY: &str = "predicted_by";

/// Format name used by reports and the CLI.
pub const FORMAT: &str = "kernel-tuner";

/// A tuning-parameter value.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    Number(f64),
    Text(String),
}

impl ParamValue {
    /// A value as the key string of an older cache writes it: a number when it
    /// parses as one, else trimmed text.
    fn from_key_field(s: &str) -> ParamValue {
        let t = s.trim();
        if is_inexact_integer(t) {
            return ParamValue::Text(t.to_string());
        }
        match t.parse::<f64>() {
            Ok(v) if v.is_finite() => ParamValue::Number(v),
            _ => ParamValue::Text(t.to_string()),
        }
    }
}

/// Is `t` an integer literal that f64 cannot hold exactly (beyond 2^53)? Such a
/// value stays text, so a key and a message print the digits the file has.
fn is_inexact_integer(t: &str) -> bool {
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    !digits.is_empty()
        && digits.bytes().all(|c| c.is_ascii_digit())
        && t.parse::<f64>()
            .is_ok_and(|v| v.abs() >= 9_007_199_254_740_992.0)
}

/// The canonical configuration key of the parameters (the contract's rule:
/// [`gpucast_runs::config_key`]).
pub(crate) fn canonical_key(params: &[(String, ParamValue)]) -> String {
    gpucast_runs::config_key(params.iter().map(|(name, value)| {
        (
            name.as_str(),
            match value {
                ParamValue::Number(x) => gpucast_runs::ParamValue::key_text(x),
                ParamValue::Text(t) => t.trim().to_string(),
            },
        )
    }))
}

/// Read a file as text, gunzipping it when it starts with the gzip magic bytes.
pub(crate) fn read_text(path: &Path) -> Result<String> {
    let name = path.display().to_string();
    let name = name.as_str();
    let bytes = crate::files::read(path).map_err(|e| Error::file(name, e.to_string()))?;
    let mut bytes = crate::data::table_io::gunzip_if_gzip(bytes, name)?;
    // A byte-order mark (some editors write one) is not part of the JSON.
    if bytes.starts_with(b"\xef\xbb\xbf") {
        bytes.drain(..3);
    }
    String::from_utf8(bytes).map_err(|e| {
        Error::file(
            name,
            format!(
                "not UTF-8 text (byte {}): not a JSON file",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

/// Does the file look like a Kernel Tuner cache without parsing it: JSON (gzipped or
/// not) whose first 64 KiB name `tune_params_keys`, which Kernel Tuner writes before
/// the cache itself. For picking caches out of a directory, where other JSON (a
/// study's gpu_metrics.json, a saved model) must be passed over; a file given by name
/// is parsed and judged by [`is_cache`].
pub(crate) fn looks_like_cache(path: &Path) -> bool {
    const HEAD_BYTES: u64 = 64 * 1024;
    let Ok(raw) = crate::files::read_head(path, HEAD_BYTES as usize) else {
        return false;
    };
    let head = if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        // (a truncated stream reads up to where it stops: enough for a head)
        let _ = flate2::read::MultiGzDecoder::new(raw.as_slice())
            .take(HEAD_BYTES)
            .read_to_end(&mut out);
        out
    } else {
        raw
    };
    let text = String::from_utf8_lossy(&head);
    text.trim_start().starts_with('{') && text.contains("\"tune_params_keys\"")
}

/// Does this parsed JSON look like a Kernel Tuner cache?
pub fn is_cache(doc: &Value) -> bool {
    doc.get("cache").is_some_and(Value::is_object)
}

/// Import one cache. `source` names where it comes from (e.g. the repository);
/// `gpu` names the GPU of a cache whose `device_name` is empty (some HIP versions
/// wrote none).
pub fn import(
    path: &Path,
    workloads: &Workloads,
    source: &str,
    gpu: Option<&str>,
) -> Result<Imported> {
    let text = read_text(path)?;
    import_text(&text, &path.display().to_string(), workloads, source, gpu)
}

/// Import a cache from its (decompressed) text; `file` names it in messages. An
/// empty `device_name` takes `gpu`, and is an error without it.
pub fn import_text(
    text: &str,
    file: &str,
    workloads: &Workloads,
    source: &str,
    gpu: Option<&str>,
) -> Result<Imported> {
    let (doc, notes) = parse_cache(text, file)?;
    if let Some(by) = doc.get(PREDICTED_BY) {
        let (line, col) = key_position(text, PREDICTED_BY, 0);
        return Err(Error::file(
            file,
            format!(
                "line {line}, column {col}: a cache of times predicted by {} ('{PREDICTED_BY}'), not measurements: runs are measured",
                by.as_str().unwrap_or("gpucast")
            ),
        ));
    }
    let mut header = CacheHeader::read(&doc, text, file)?;
    if header.device.trim().is_empty() {
        header.device = gpu.map(str::trim).filter(|g| !g.is_empty()).ok_or_else(|| {
            let (line, col) = key_position(text, "device_name", 0);
            Error::file(
                file,
                format!("line {line}, column {col}: 'device_name' is empty: name the GPU with --gpu"),
            )
        })?;
    }
    let matched = workloads.find(
        header.kernel_name,
        &header.keys,
        header.problem_size.as_deref(),
    )?;
    let workload = match &matched {
        Matched::Found(w) => Some(checked_workload(w, &header.keys, file)?),
        Matched::NotFound(_) => None,
    };
    let mut report = FileReport {
        file: file.to_string(),
        format: FORMAT.to_string(),
        workload: workload.map(|w| w.origin.clone()),
        notes,
        ..FileReport::default()
    };
    if let Matched::NotFound(why) = &matched {
        report.notes.push(format!(
            "no workload applies ({why}): work taken from the cache's own metrics"
        ));
    }
    let cx = EntryContext {
        text,
        file,
        file_arc: Arc::from(file),
        source,
        header: &header,
        workload,
    };
    let (runs, work_from, tally) = cache_runs(&cx, &mut report)?;
    imported(&cx, report, runs, work_from, &tally)
}

/// Parse the cache's JSON (no text at all is an empty file), closing a cache left open
/// by an interrupted run (with a note) and refusing a key repeated in one object.
fn parse_cache(text: &str, file: &str) -> Result<(Value, Vec<String>)> {
    let mut notes = Vec::new();
    let doc: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(_) if text.trim().is_empty() => return Err(Error::parse_file(file, "empty file")),
        Err(e) if e.is_eof() => {
            // Kernel Tuner appends entries while tuning and closes the object at the
            // end: a cache of an interrupted run lacks its closing braces.
            let repaired = format!("{}}}}}", text.trim_end().trim_end_matches(','));
            let v = serde_json::from_str(&repaired).map_err(|_| json_error(file, &e))?;
            notes.push("the cache was not closed (tuning interrupted?): read up to its last complete entry".to_string());
            v
        }
        Err(e) => return Err(json_error(file, &e)),
    };
    if let Some((at, first, key)) = repeated_key(text) {
        let (line, col) = line_col(text, at);
        let (first_line, first_col) = line_col(text, first);
        return Err(Error::file(
            file,
            format!(
                "line {line}, column {col}: key {key} appears twice in one object (first at line {first_line}, column {first_col}): a JSON reader keeps only one of them"
            ),
        ));
    }
    Ok((doc, notes))
}

/// The top-level fields of a cache, which all its entries share.
struct CacheHeader<'a> {
    device: &'a str,
    kernel_name: &'a str,
    keys: Vec<String>,
    problem_size: Option<Vec<f64>>,
    cache: &'a Map<String, Value>,
    /// Byte offset of the "cache" key in the text (0 when not found).
    cache_at: usize,
}

impl<'a> CacheHeader<'a> {
    /// Read the top-level fields of `doc`, an error at the field's position in
    /// `text` when one is missing or of the wrong kind.
    fn read(doc: &'a Value, text: &str, file: &str) -> Result<Self> {
        if let Some(cache) = doc.get("cache").filter(|c| !c.is_object()) {
            let (line, col) = key_position(text, "cache", 0);
            return Err(Error::file(
                file,
                format!(
                    "line {line}, column {col}: not a Kernel Tuner cache: 'cache' is {}, not an object of configurations",
                    kind_of(cache)
                ),
            ));
        }
        let top = doc
            .as_object()
            .filter(|_| is_cache(doc))
            .ok_or_else(|| not_a_cache(doc, file))?;
        let field_error = |key: &str, what: &str| {
            let (line, col) = key_position(text, key, 0);
            Error::file(file, format!("line {line}, column {col}: '{key}' {what}"))
        };
        let device = top
            .get("device_name")
            .and_then(Value::as_str)
            .ok_or_else(|| field_error("device_name", "is missing or not a string"))?;
        let kernel_name = top
            .get("kernel_name")
            .and_then(Value::as_str)
            .ok_or_else(|| field_error("kernel_name", "is missing or not a string"))?;
        let keys: Vec<String> = match top.get("tune_params_keys") {
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| v.as_str().map(|s| s.trim().to_string()))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| field_error("tune_params_keys", "must be a list of names"))?,
            _ => return Err(field_error("tune_params_keys", "is missing or not a list")),
        };
        let problem_size = top.get("problem_size").and_then(problem_size_of);
        let cache = top
            .get("cache")
            .and_then(Value::as_object)
            .ok_or_else(|| field_error("cache", "is not an object"))?;
        let cache_at = text.find("\"cache\"").unwrap_or(0);
        Ok(CacheHeader {
            device,
            kernel_name,
            keys,
            problem_size,
            cache,
            cache_at,
        })
    }
}

/// The error for a document without a top-level 'cache' object, naming what it
/// holds instead and the other import formats.
fn not_a_cache(doc: &Value, file: &str) -> Error {
    let found = match doc {
        Value::Object(m) if m.is_empty() => "an empty object".to_string(),
        Value::Object(m) => format!(
            "top-level keys {}",
            m.keys().take(6).cloned().collect::<Vec<_>>().join(", ")
        ),
        Value::Array(_) => "an array".to_string(),
        _ => "a single value".to_string(),
    };
    Error::file(
        file,
        format!(
            "line 1, column 1: not a Kernel Tuner cache: no top-level 'cache' object (found {found}); \
             formats: kernel-tuner (JSON with 'cache'), gemm-table, study, canonical (pick one with {})",
            input_name(Input::ImportFormat)
        ),
    )
}

/// The matched workload, an error when it uses variables that neither the
/// cache's `keys` nor its own constants define.
fn checked_workload<'w>(w: &'w Workload, keys: &[String], file: &str) -> Result<&'w Workload> {
    let unknown = w.unknown_variables(keys);
    if !unknown.is_empty() {
        return Err(Error::file(
            file,
            format!(
                "workload {} uses {} which this cache's tune_params_keys ({}) and the workload's constants lack",
                w.origin,
                unknown.join(", "),
                keys.join(", ")
            ),
        ));
    }
    Ok(w)
}

/// What every entry of one cache shares while it becomes a row.
struct EntryContext<'a> {
    text: &'a str,
    file: &'a str,
    file_arc: Arc<str>,
    source: &'a str,
    header: &'a CacheHeader<'a>,
    workload: Option<&'a Workload>,
}

/// Why a cache entry gives no row: a failed measurement, or a row left out.
enum Skip {
    Failed(String),
    LeftOut(String),
}

/// The rows of the cache's entries, with where each row's work comes from;
/// entries that give no row are counted in `report`.
fn cache_runs(
    cx: &EntryContext,
    report: &mut FileReport,
) -> Result<(Vec<Run>, Vec<Option<String>>, Tally)> {
    let mut runs: Vec<Run> = Vec::new();
    let mut work_from: Vec<Option<String>> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut names = crate::data::SharedNames::default();
    let mut tally = Tally::default();
    for (key, entry) in cx.header.cache {
        let row = runs.len() + 1;
        match entry_run(cx, key, entry, row, &mut seen, &mut names, &mut tally)? {
            Ok((run, from)) => {
                runs.push(run);
                work_from.push(Some(from));
            }
            Err(Skip::Failed(reason)) => *report.failed.entry(reason).or_default() += 1,
            Err(Skip::LeftOut(reason)) => *report.left_out.entry(reason).or_default() += 1,
        }
    }
    Ok((runs, work_from, tally))
}

/// A cache entry as an object, its parameters and its configuration key.
type EntryConfig<'e> = (&'e Map<String, Value>, Vec<(String, ParamValue)>, String);

/// One cache entry as an object, its parameters and its configuration key (the
/// canonical key of the parameters, with the problem size where no workload describes
/// the cache); an error when the entry is malformed.
fn entry_config<'e>(cx: &EntryContext, key: &str, entry: &'e Value) -> Result<EntryConfig<'e>> {
    let (text, file, cache_at) = (cx.text, cx.file, cx.header.cache_at);
    let entry = entry.as_object().ok_or_else(|| {
        let (line, col) = key_position(text, key, cache_at);
        Error::file(
            file,
            format!("line {line}, column {col}: cache entry '{key}' is not an object"),
        )
    })?;
    let params = entry_params(entry, key, &cx.header.keys, |name| {
        let from = key_offset(text, key, cache_at).unwrap_or(cache_at);
        raw_value(text, name, from)
    })
    .map_err(|msg| {
        let (line, col) = key_position(text, key, cache_at);
        Error::file(
            file,
            format!("line {line}, column {col}: cache entry '{key}': {msg}"),
        )
    })?;
    let mut all_params = params.clone();
    if cx.workload.is_none() {
        if let Some(size) = &cx.header.problem_size {
            let text: Vec<String> = size
                .iter()
                .map(gpucast_runs::ParamValue::key_text)
                .collect();
            all_params.push(("problem_size".to_string(), ParamValue::Text(text.join("x"))));
        }
    }
    let config = canonical_key(&all_params);
    Ok((entry, params, config))
}

/// A cache as written, with the configuration key the import gives each entry: what
/// a cache of predictions is written from ([`crate::data::kernel_tuner_write`]).
pub struct CacheEntries {
    /// The whole document.
    pub doc: Value,
    /// `device_name` and `tune_params_keys` as written.
    pub device: String,
    pub keys: Vec<String>,
    /// Each entry's key in the cache and its configuration key, in the cache's order.
    pub entries: Vec<(String, String)>,
}

/// Read the cache at `path` ([`CacheEntries`]), its work matched in `workloads` as
/// the import matches it.
pub fn read_entries(path: &Path, workloads: &Workloads) -> Result<CacheEntries> {
    let text = read_text(path)?;
    let file = path.display().to_string();
    let (doc, _) = parse_cache(&text, &file)?;
    let (device, keys, entries) = {
        let header = CacheHeader::read(&doc, &text, &file)?;
        let workload = match &workloads.find(
            header.kernel_name,
            &header.keys,
            header.problem_size.as_deref(),
        )? {
            Matched::Found(w) => Some(checked_workload(w, &header.keys, &file)?),
            Matched::NotFound(_) => None,
        };
        let cx = EntryContext {
            text: &text,
            file: &file,
            file_arc: Arc::from(file.as_str()),
            source: "",
            header: &header,
            workload,
        };
        let entries = header
            .cache
            .iter()
            .map(|(key, entry)| entry_config(&cx, key, entry).map(|(_, _, c)| (key.clone(), c)))
            .collect::<Result<Vec<_>>>()?;
        (header.device.to_string(), header.keys.clone(), entries)
    };
    Ok(CacheEntries {
        doc,
        device,
        keys,
        entries,
    })
}

/// The row of one cache entry (row number `row`) and where its work comes from,
/// or why it gives none; an error when the entry is malformed.
fn entry_run(
    cx: &EntryContext,
    key: &str,
    entry: &Value,
    row: usize,
    seen: &mut HashSet<String>,
    names: &mut crate::data::SharedNames,
    tally: &mut Tally,
) -> Result<std::result::Result<(Run, String), Skip>> {
    let (entry, params, config) = entry_config(cx, key, entry)?;
    let time_ms = match time_of(entry) {
        Ok(t) => t,
        Err(reason) => return Ok(Err(Skip::Failed(reason))),
    };
    if !seen.insert(config.clone()) {
        return Ok(Err(Skip::LeftOut("duplicate_config".into())));
    }
    let mut run = Run {
        gpu: names.get(cx.header.device),
        config: config.into(),
        time_ms,
        source: Some(names.get(cx.source)),
        origin: Origin {
            file: cx.file_arc.clone(),
            row,
            line: None,
        },
        ..Run::default()
    };
    if let Some(times) = entry.get("times").and_then(Value::as_array) {
        let t: Vec<f64> = times.iter().filter_map(Value::as_f64).collect();
        if t.len() == times.len() && !t.is_empty() {
            run.trials = Some(t.len() as f64);
            run.time_std_ms = sample_std(&t);
        }
    }
    let from = match cx.workload {
        Some(w) => {
            if let Err(reason) = apply_workload(&mut run, w, &params, tally) {
                return Ok(Err(Skip::LeftOut(reason)));
            }
            format!("workload:{}", w.name)
        }
        None => {
            run.kernel = names.get(cx.header.kernel_name);
            run.suite = Some(names.get("kernel-tuner"));
            match work_from_metrics(&mut run, entry, tally) {
                Some(from) => from,
                None => return Ok(Err(Skip::LeftOut("no_work_measure".into()))),
            }
        }
    };
    Ok(Ok((run, from)))
}

/// The imported table of the cache's rows and its import report.
fn imported(
    cx: &EntryContext,
    mut report: FileReport,
    runs: Vec<Run>,
    work_from: Vec<Option<String>>,
    tally: &Tally,
) -> Result<Imported> {
    let (file, workload) = (cx.file, cx.workload);
    report.rows = runs.len();
    report.gpus = vec![cx.header.device.to_string()];
    report.kernels =
        vec![workload.map_or(cx.header.kernel_name.to_string(), |w| w.name.to_string())];
    report.missing = tally.missing(workload, &runs);
    let extra = vec![("work_from", work_from)];
    let mut table = super::common::table_from(runs, extra, file)?;
    let (line, col) = key_position(cx.text, "device_name", 0);
    table.gpu_fields.push(crate::data::GpuField {
        file: file.to_string(),
        field: "'device_name'".to_string(),
        at: Some(crate::error::Position::LineColumn(line, col)),
    });
    Ok(Imported {
        table,
        report: super::common::ImportReport {
            files: vec![report],
            skipped: vec![],
        },
    })
}

/// Counts of per-row feature failures, for the report.
#[derive(Default)]
struct Tally {
    /// column -> (rows whose formula failed, first error)
    formula_failed: BTreeMap<String, (usize, String)>,
    no_flops: usize,
    no_bytes: usize,
}

impl Tally {
    fn missing(&self, workload: Option<&Workload>, runs: &[Run]) -> Vec<Missing> {
        let mut out = Vec::new();
        for (column, (n, err)) in &self.formula_failed {
            out.push(Missing {
                feature: column.clone(),
                rows: *n,
                why: format!("formula failed: {err}"),
            });
        }
        if self.no_flops > 0 {
            out.push(Missing {
                feature: "flops".into(),
                rows: self.no_flops,
                why: "no workload file and no GFLOP/s in the cache: set to 0".into(),
            });
        }
        if self.no_bytes > 0 {
            out.push(Missing {
                feature: "dram_bytes".into(),
                rows: self.no_bytes,
                why: "no workload file and no GB/s in the cache: set to 0".into(),
            });
        }
        for column in ["grid_blocks", "block_threads", "smem_per_block"] {
            let absent = runs.iter().filter(|r| r.numeric(column).is_none()).count();
            if absent == 0 || self.formula_failed.contains_key(column) {
                continue;
            }
            let why = match workload {
                Some(w) => format!("{} has no formula for it", w.origin),
                None => "no workload file describes this cache".to_string(),
            };
            out.push(Missing {
                feature: column.into(),
                rows: absent,
                why,
            });
        }
        // (a workload file may give them as a formula of the tuning parameters)
        let no_regs = runs.iter().filter(|r| r.regs_per_thread.is_none()).count();
        if no_regs > 0 && !self.formula_failed.contains_key("regs_per_thread") {
            out.push(Missing {
                feature: "regs_per_thread".into(),
                rows: no_regs,
                why: "Kernel Tuner caches do not record registers".into(),
            });
        }
        let no_std = runs.iter().filter(|r| r.time_std_ms.is_none()).count();
        if no_std > 0 {
            out.push(Missing {
                feature: "time_std_ms".into(),
                rows: no_std,
                why: "the entry has no 'times' list with at least two numbers".into(),
            });
        }
        out
    }
}

/// Fill the work and launch columns of `run` from the workload's formulas; Err(reason)
/// when FLOPs or DRAM bytes cannot be computed (the row is left out).
fn apply_workload(
    run: &mut Run,
    w: &Workload,
    params: &[(String, ParamValue)],
    tally: &mut Tally,
) -> std::result::Result<(), String> {
    let env: Env = params
        .iter()
        .filter_map(|(k, v)| match v {
            ParamValue::Number(x) => Some((k.clone(), *x)),
            ParamValue::Text(_) => None,
        })
        .collect();
    run.kernel = Name::from(w.name.clone());
    run.suite = w.suite.clone().map(Name::from);
    run.category = w.category.clone().map(Name::from);
    run.precision = w.precision.clone().map(Name::from);
    for (column, value) in w.evaluate(&env) {
        match (column.as_str(), value) {
            ("flops", Ok(v)) if v >= 0.0 => run.flops = v,
            ("dram_bytes", Ok(v)) if v >= 0.0 => run.dram_bytes = v,
            ("flops" | "dram_bytes", Ok(v)) => return Err(format!("negative_{column}: {v}")),
            ("flops" | "dram_bytes", Err(e)) => {
                return Err(format!("{column}_formula_failed: {e}"))
            }
            (_, Ok(v)) if v >= 0.0 => {
                if let Some(slot) = run.numeric_mut(&column) {
                    *slot = Some(v);
                }
            }
            (_, result) => {
                let err = match result {
                    Ok(v) => format!("negative value {v}"),
                    Err(e) => e,
                };
                let slot = tally
                    .formula_failed
                    .entry(column.clone())
                    .or_insert((0, err));
                slot.0 += 1;
            }
        }
    }
    Ok(())
}

/// Work from the cache's own metrics (no workload file): which metric was used, or
/// None when the entry records neither FLOP/s nor bytes/s.
fn work_from_metrics(
    run: &mut Run,
    entry: &Map<String, Value>,
    tally: &mut Tally,
) -> Option<String> {
    // rate x time: G/s x ms = 1e9 x 1e-3 = 1e6 per unit.
    let amount = |metric: &str| {
        entry
            .get(metric)
            .and_then(Value::as_f64)
            .filter(|v| v.is_finite() && *v >= 0.0)
            .map(|rate| rate * run.time_ms * 1e6)
    };
    let flops = amount("GFLOP/s");
    let bytes = amount("GB/s");
    if flops.is_none() && bytes.is_none() {
        return None;
    }
    let mut from = Vec::new();
    match flops {
        Some(v) => {
            run.flops = v;
            from.push("GFLOP/s");
        }
        None => tally.no_flops += 1,
    }
    match bytes {
        Some(v) => {
            run.dram_bytes = v;
            from.push("GB/s");
        }
        None => tally.no_bytes += 1,
    }
    Some(format!("cache:{}", from.join("+")))
}

/// The entry's time in ms, or the reason it is a failed configuration.
fn time_of(entry: &Map<String, Value>) -> std::result::Result<f64, String> {
    match entry.get("time") {
        None | Some(Value::Null) => Err("no_time".into()),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(t) if t.is_finite() && t > 0.0 && t <= ABSURD_TIME_MS => Ok(t),
            _ => Err("absurd_time".into()),
        },
        Some(Value::String(s)) => {
            let s = s.trim();
            // Kernel Tuner's markers are identifiers such as "RuntimeFailedConfig".
            if !s.is_empty()
                && s.len() <= 64
                && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                Err(s.to_string())
            } else {
                Err("non_number_time".into())
            }
        }
        Some(_) => Err("non_number_time".into()),
    }
}

/// Parameter values of one entry, in `tune_params_keys` order: the entry's own values
/// (newer caches) or the fields of its key (older caches). Where both are there they
/// must agree: a key that says one configuration and fields that say another is a
/// hand edit or a merge gone wrong, and either reading would be a guess. `raw(name)`
/// is the entry's value of `name` as the file writes it, for the message.
fn entry_params(
    entry: &Map<String, Value>,
    key: &str,
    names: &[String],
    raw: impl Fn(&str) -> Option<String>,
) -> std::result::Result<Vec<(String, ParamValue)>, String> {
    let fields: Vec<&str> = key.split(',').collect();
    let keyed = fields.len() == names.len();
    let mut out = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let value = match entry.get(name) {
            Some(Value::Number(n)) if is_inexact_integer(&n.to_string()) => {
                ParamValue::Text(n.to_string())
            }
            Some(Value::Number(n)) => ParamValue::Number(
                n.as_f64().ok_or_else(|| format!("parameter '{name}' is not a finite number"))?,
            ),
            Some(Value::String(s)) => ParamValue::from_key_field(s),
            Some(Value::Bool(b)) => ParamValue::Text(b.to_string()),
            Some(other) => {
                return Err(format!("parameter '{name}' is {}, not a number or a string", kind_of(other)))
            }
            None if keyed => ParamValue::from_key_field(fields[i]),
            None => {
                return Err(format!(
                    "no value for parameter '{name}': the entry lacks it and the key has {} fields for {} tune_params_keys",
                    fields.len(),
                    names.len()
                ))
            }
        };
        if keyed && entry.contains_key(name) && !same_param(&value, fields[i]) {
            let written = raw(name).unwrap_or_else(|| match entry.get(name) {
                Some(v) => v.to_string(),
                None => String::new(),
            });
            return Err(format!(
                "the key says {name}={} (field {} of the key) but the entry's '{name}' is {written}",
                fields[i].trim(),
                i + 1
            ));
        }
        out.push((name.clone(), value));
    }
    Ok(out)
}

/// Does a key field name the entry's value: the same number, or the same text
/// (Python writes booleans as True / False in keys)?
fn same_param(value: &ParamValue, field: &str) -> bool {
    match (value, ParamValue::from_key_field(field)) {
        (ParamValue::Number(a), ParamValue::Number(b)) => *a == b,
        (ParamValue::Text(a), ParamValue::Text(b)) => a.eq_ignore_ascii_case(&b),
        _ => false,
    }
}

/// The first key an object of `text` (valid JSON) repeats: the byte offsets of its
/// second and first occurrence and the key as written (quoted). serde_json keeps the
/// last of two equal keys without a word, so a cache whose entry is written twice
/// would silently lose one. One pass, each object's keys in a set while it is open.
fn repeated_key(text: &str) -> Option<(usize, usize, String)> {
    use std::borrow::Cow;
    use std::collections::HashMap;
    let b = text.as_bytes();
    // One set per open object; None for an open array.
    let mut open: Vec<Option<HashMap<Cow<str>, usize>>> = Vec::new();
    let mut expect_key = false;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let start = i;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                let end = (i + 1).min(b.len());
                if expect_key {
                    let raw = &text[start..end];
                    let key: Cow<str> = if raw.contains('\\') {
                        Cow::Owned(
                            serde_json::from_str::<String>(raw).unwrap_or_else(|_| raw.to_string()),
                        )
                    } else {
                        Cow::Borrowed(&raw[1..raw.len().saturating_sub(1).max(1)])
                    };
                    if let Some(Some(keys)) = open.last_mut() {
                        if let Some(&first) = keys.get(&key) {
                            return Some((start, first, raw.to_string()));
                        }
                        keys.insert(key, start);
                    }
                    expect_key = false;
                }
            }
            b'{' => {
                open.push(Some(HashMap::new()));
                expect_key = true;
            }
            b'[' => {
                open.push(None);
                expect_key = false;
            }
            b'}' | b']' => {
                open.pop();
                expect_key = false;
            }
            b',' => expect_key = matches!(open.last(), Some(Some(_))),
            _ => {}
        }
        i += 1;
    }
    None
}

/// The value of the first `"name":` at or after byte `from`, as written (up to the
/// next `,`, `}` or line end; a string whole).
fn raw_value(text: &str, name: &str, from: usize) -> Option<String> {
    let at = key_offset(text, name, from)?;
    let rest = text[at..].split_once(':')?.1.trim_start();
    if rest.starts_with('"') {
        let s: String = serde_json::Deserializer::from_str(rest)
            .into_iter::<String>()
            .next()?
            .ok()?;
        return serde_json::to_string(&s).ok();
    }
    let end = rest.find([',', '}', ']', '\n']).unwrap_or(rest.len());
    Some(rest[..end].trim().to_string())
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// `problem_size` as numbers (a number or a list of numbers); None otherwise.
fn problem_size_of(v: &Value) -> Option<Vec<f64>> {
    match v {
        Value::Number(n) => n.as_f64().map(|x| vec![x]),
        Value::Array(a) => a.iter().map(Value::as_f64).collect(),
        _ => None,
    }
}

/// Sample standard deviation (n - 1); None for fewer than two values.
fn sample_std(v: &[f64]) -> Option<f64> {
    if v.len() < 2 {
        return None;
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let ss: f64 = v.iter().map(|x| (x - mean).powi(2)).sum();
    Some((ss / (n - 1.0)).sqrt())
}

fn json_error(file: &str, e: &serde_json::Error) -> Error {
    let msg = e.to_string();
    // serde_json appends " at line L column C"; say it our way instead.
    let msg = msg.split(" at line ").next().unwrap_or(&msg);
    Error::file(
        file,
        format!(
            "line {}, column {}: not valid JSON: {msg}",
            e.line(),
            e.column()
        ),
    )
}

/// Line and column of the first `"key":` at or after byte `from` (1, 1 if absent).
fn key_position(text: &str, key: &str, from: usize) -> (usize, usize) {
    key_offset(text, key, from).map_or((1, 1), |at| line_col(text, at))
}

/// Byte offset of the first `"key":` at or after byte `from`.
fn key_offset(text: &str, key: &str, from: usize) -> Option<usize> {
    let quoted = serde_json::to_string(key).unwrap_or_else(|_| format!("\"{key}\""));
    let mut start = from.min(text.len());
    while let Some(p) = text[start..].find(&quoted) {
        let at = start + p;
        let after = text[at + quoted.len()..].trim_start();
        if after.starts_with(':') {
            return Some(at);
        }
        start = at + quoted.len();
    }
    None
}

/// The Kernel Tuner cache format (`--from kernel-tuner`).
pub struct KernelTuner;

impl super::common::Importer for KernelTuner {
    fn name(&self) -> &'static str {
        FORMAT
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["kernel_tuner", "kerneltuner"]
    }
    fn describe(&self) -> &'static str {
        "Kernel Tuner cache: JSON with a 'cache' object, gzip'd or not"
    }
    fn detect(&self, probe: &super::common::Probe) -> bool {
        // (a gzip stream that does not decompress: the cache reader says why)
        (probe.is_gzip() && probe.head.is_empty())
            || (probe.is_json()
                && (probe.has_json_key("cache") || probe.has_json_key("tune_params_keys")))
    }
    fn takes_file_name(&self, name: &str) -> bool {
        name.ends_with(".json") || name.ends_with(".json.gz")
    }
    fn read(&self, path: &Path, opts: &super::common::ImportOptions) -> Result<Imported> {
        let source = opts.source.clone().unwrap_or_else(|| {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            format!("kernel-tuner:{name}")
        });
        import(path, &opts.workloads, &source, opts.gpu.as_deref())
    }
}

#[cfg(test)]
#[path = "kernel_tuner_tests.rs"]
mod tests;
