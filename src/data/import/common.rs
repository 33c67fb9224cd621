//! What every importer shares: the [`Importer`] trait a format implements, the
//! [`Probe`] its detector looks at, the options an import takes, the report of what
//! it did, and the table helpers the formats read with. Nothing here knows a format:
//! the formats build on this module, the registry (`import/mod.rs`) on them.

use crate::data::workload::Workloads;
use crate::data::{Run, RunsTable};
use crate::error::{input_name, Error, Input, Result};
use polars::prelude::*;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// A time above this (ms) is not a measurement: Kernel Tuner versions have written
/// huge sentinels for failed runs, and no benchmark run lasts 1000 s.
pub const ABSURD_TIME_MS: f64 = 1e6;

/// One input format of `gpucast data import --from`: a name, a detector and a reader.
/// Adding a format is one file implementing this trait and one line in the registry
/// (`import/mod.rs`, `REGISTRY`).
pub trait Importer: Sync {
    /// Its name for `--from` (lowercase, with dashes).
    fn name(&self) -> &'static str;
    /// Other names `--from` takes for it.
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }
    /// What it reads, in a few words (for help and for "formats: ..." in messages).
    fn describe(&self) -> &'static str;
    /// Whether a file is in this format, from its name and first bytes. Detectors of
    /// different formats must not both accept one file (the registry refuses such a
    /// file as ambiguous).
    fn detect(&self, probe: &Probe) -> bool;
    /// Whether a file found in a directory may be in this format, by its name
    /// (lowercase), for `--from NAME DIR`.
    fn takes_file_name(&self, name: &str) -> bool;
    /// The files under `dir` (recursively, sorted) that `--from NAME DIR` reads.
    fn files_in(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        let takes = |p: &PathBuf| self.takes_file_name(&file_name(p));
        Ok(crate::files::walk(dir)?.into_iter().filter(takes).collect())
    }
    /// Read one file: its runs (the file and source named on each, where they come
    /// from) and the report of what was imported and what was not, and why.
    fn read(&self, path: &Path, opts: &ImportOptions) -> Result<Imported>;
}

/// A path's file name, lowercase.
pub fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default()
}

/// What a detector looks at: a file's name and its first bytes, gunzipped when the
/// file is gzip'd, read once for all the detectors.
pub struct Probe<'a> {
    pub path: &'a Path,
    /// The file name, lowercase.
    pub name: String,
    /// The first bytes as stored.
    pub raw: Vec<u8>,
    /// The first [`Probe::HEAD`] bytes of the content (gunzipped; a byte-order mark
    /// dropped).
    pub head: Vec<u8>,
    columns: std::cell::OnceCell<Option<Vec<String>>>,
}

impl<'a> Probe<'a> {
    /// How much of a file detectors see.
    pub const HEAD: usize = 64 * 1024;

    /// The probe of `path`; an empty or unreadable file is an error.
    pub fn new(path: &'a Path) -> Result<Probe<'a>> {
        let raw = read_head(path)?;
        let mut head = if raw.starts_with(&[0x1f, 0x8b]) {
            let mut out = Vec::new();
            // (a head cut mid-stream decompresses as far as it goes: enough to look at)
            let _ = flate2::read::MultiGzDecoder::new(raw.as_slice())
                .take(Self::HEAD as u64)
                .read_to_end(&mut out);
            out
        } else {
            raw.clone()
        };
        if head.starts_with(b"\xef\xbb\xbf") {
            head.drain(..3);
        }
        Ok(Probe {
            path,
            name: file_name(path),
            raw,
            head,
            columns: Default::default(),
        })
    }
    /// Whether the file is gzip'd.
    pub fn is_gzip(&self) -> bool {
        self.raw.starts_with(&[0x1f, 0x8b])
    }
    /// Whether the content is a JSON document (its first character `{` or `[`), or a
    /// gzip stream that does not decompress (the JSON readers say why).
    pub fn is_json(&self) -> bool {
        if self.is_gzip() && self.head.is_empty() {
            return true;
        }
        let first = self.head.iter().find(|b| !b.is_ascii_whitespace()).copied();
        first == Some(b'{') || first == Some(b'[')
    }
    /// Whether the file is Parquet.
    pub fn is_parquet(&self) -> bool {
        self.raw.starts_with(b"PAR1")
    }
    /// The head as text (invalid UTF-8 replaced).
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.head)
    }
    /// Whether the JSON head names `key` as a key (`"key"` followed by `:`).
    pub fn has_json_key(&self, key: &str) -> bool {
        let text = self.text();
        let quoted = format!("\"{key}\"");
        text.match_indices(&quoted)
            .any(|(i, _)| text[i + quoted.len()..].trim_start().starts_with(':'))
    }
    /// The column names of a table (a CSV's header line, a Parquet file's columns);
    /// None for JSON or a file that is not a readable table.
    pub fn columns(&self) -> Option<&[String]> {
        self.columns
            .get_or_init(|| {
                if self.is_json() {
                    return None;
                }
                if self.is_parquet() {
                    return parquet_columns(self.path);
                }
                let text = self.text();
                let line = text.lines().next()?;
                Some(csv_header(line))
            })
            .as_deref()
    }
    /// Whether the table has every one of `cols`.
    pub fn has_columns(&self, cols: &[&str]) -> bool {
        self.columns()
            .is_some_and(|have| cols.iter().all(|c| have.iter().any(|h| h == c)))
    }
}

/// A Parquet file's column names, from its footer (the rows are not read); None
/// when the footer does not read (the reader then says why).
fn parquet_columns(path: &Path) -> Option<Vec<String>> {
    let name = path.display().to_string();
    crate::error::contain_panic(&name, || {
        let f = crate::files::open(path).map_err(|e| Error::io(&name, e))?;
        let schema = ParquetReader::new(f)
            .schema()
            .map_err(|e| Error::data(name.as_str(), e))?;
        Ok(schema.iter().map(|(n, _)| n.to_string()).collect())
    })
    .ok()
}

/// A CSV header line's names (quotes and spaces around them dropped).
pub fn csv_header(line: &str) -> Vec<String> {
    line.trim_end_matches('\r')
        .split(',')
        .map(|c| c.trim().trim_matches('"').to_string())
        .collect()
}

/// Do two GPU names mean the same GPU: equal but for case, or the same GPU of the
/// built-in catalog (an export's "NVIDIA H200" and a given "H200 SXM"), read into
/// `builtin` the first time it is needed?
pub(crate) fn same_gpu(a: &str, b: &str, builtin: &mut Option<crate::catalog::Catalog>) -> bool {
    if a.eq_ignore_ascii_case(b) {
        return true;
    }
    let catalog = builtin.get_or_insert_with(crate::catalog::Catalog::builtin);
    match (catalog.resolve(a), catalog.resolve(b)) {
        (Some(x), Some(y)) => std::ptr::eq(x, y),
        _ => false,
    }
}

/// What an import needs besides the files.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// Workload descriptions for Kernel Tuner caches and nvbench results.
    pub workloads: Workloads,
    /// The `source` column (where the data comes from); None: a per-format default
    /// (`aiconfigurator` for GEMM tables, `kernel-tuner:<file name>` for caches).
    pub source: Option<String>,
    /// The GPU of a file that does not name its device (Nsight Compute exports, a
    /// Kernel Tuner cache with an empty `device_name`), or that names it in words the
    /// catalog does not know (a profiler trace's "NVIDIA A100-PG509-200").
    pub gpu: Option<String>,
    /// The catalog that GPU names of files are matched in (None: the built-in one).
    pub catalog: Option<crate::catalog::Catalog>,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            workloads: Workloads::builtin(),
            source: None,
            gpu: None,
            catalog: None,
        }
    }
}

impl ImportOptions {
    /// The catalog GPU names are matched in: the given one, else the built-in one.
    pub fn catalog(&self) -> std::borrow::Cow<'_, crate::catalog::Catalog> {
        match &self.catalog {
            Some(c) => std::borrow::Cow::Borrowed(c),
            None => std::borrow::Cow::Owned(crate::catalog::Catalog::builtin()),
        }
    }
}

/// A feature some imported rows lack, and why.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Missing {
    pub feature: String,
    pub rows: usize,
    pub why: String,
}

/// What happened to one input file.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct FileReport {
    pub file: String,
    pub format: String,
    pub gpus: Vec<String>,
    pub kernels: Vec<String>,
    /// The workload file used (Kernel Tuner caches).
    pub workload: Option<String>,
    /// Rows imported.
    pub rows: usize,
    /// Failed configurations (never imported), by reason: the marker the source wrote
    /// (e.g. `RuntimeFailedConfig`), `non_number_time`, `no_time` or `absurd_time`.
    pub failed: BTreeMap<String, usize>,
    /// Measured rows the importer could not use, by reason (e.g. `duplicate_config`,
    /// `no_work_measure`, `unknown_dtype:xyz`).
    pub left_out: BTreeMap<String, usize>,
    /// Features imported rows lack.
    pub missing: Vec<Missing>,
    pub notes: Vec<String>,
}

/// What an import did, per file.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct ImportReport {
    pub files: Vec<FileReport>,
    /// Files found in input directories that are in no known format (not read).
    pub skipped: Vec<String>,
}

impl ImportReport {
    pub fn rows(&self) -> usize {
        self.files.iter().map(|f| f.rows).sum()
    }
    /// Failed configurations by reason, over all files.
    pub fn failed(&self) -> BTreeMap<String, usize> {
        sum_maps(self.files.iter().map(|f| &f.failed))
    }
    pub fn failed_total(&self) -> usize {
        self.files.iter().flat_map(|f| f.failed.values()).sum()
    }
    /// Rows whose time was absurd (also counted in [`Self::failed`]).
    pub fn absurd_times(&self) -> usize {
        self.failed().get("absurd_time").copied().unwrap_or(0)
    }
    pub fn left_out(&self) -> BTreeMap<String, usize> {
        sum_maps(self.files.iter().map(|f| &f.left_out))
    }
    /// Every entry not read as a run, by reason: [`Self::failed`] and
    /// [`Self::left_out`] together (what a table's `not_imported` holds).
    pub fn not_read(&self) -> BTreeMap<String, usize> {
        sum_maps(self.files.iter().flat_map(|f| [&f.failed, &f.left_out]))
    }
    /// Missing features over all files: feature -> (rows, reasons).
    pub fn missing(&self) -> BTreeMap<String, (usize, Vec<String>)> {
        let mut out: BTreeMap<String, (usize, Vec<String>)> = BTreeMap::new();
        for m in self.files.iter().flat_map(|f| &f.missing) {
            let e = out.entry(m.feature.clone()).or_default();
            e.0 += m.rows;
            if !e.1.contains(&m.why) {
                e.1.push(m.why.clone());
            }
        }
        out
    }
}

fn sum_maps<'a>(
    maps: impl Iterator<Item = &'a BTreeMap<String, usize>>,
) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for m in maps {
        crate::data::add_counts(&mut out, m);
    }
    out
}

/// Rows plus the report of how they were obtained.
#[derive(Debug, Clone, Default)]
pub struct Imported {
    pub table: RunsTable,
    pub report: ImportReport,
}

impl Imported {
    /// Append another import (rows, pass-through columns and report).
    pub fn append(&mut self, other: Imported) -> Result<()> {
        let a = std::mem::take(&mut self.table);
        self.table = concat_tables(vec![a, other.table])?;
        self.report.files.extend(other.report.files);
        self.report.skipped.extend(other.report.skipped);
        Ok(())
    }
}

/// A file's runs are all on the GPU `opts` gives, where it gives one: that GPU names
/// the device of a file that names none, and a file that names another is refused
/// rather than read as either.
pub(crate) fn check_given_gpu(path: &Path, runs: &[Run], opts: &ImportOptions) -> Result<()> {
    let Some(given) = opts.gpu.as_deref() else {
        return Ok(());
    };
    let mut builtin = None;
    match runs
        .iter()
        .find(|r| !same_gpu(&r.gpu, given, &mut builtin))
    {
        Some(other) => Err(Error::file(
            path.display(),
            format!(
                "the file names the GPU '{}' but {gpu} '{given}' was given: omit {gpu} (it names the GPU of a file that names none) or correct it",
                other.gpu,
                gpu = input_name(Input::Gpu)
            ),
        )),
        None => Ok(()),
    }
}

/// One imported file's rows (with `opts.source` as their source) and report: GPUs,
/// kernels and rows filled in, the rest by `complete`.
pub(crate) fn one_file(
    file: String,
    format: &str,
    mut table: RunsTable,
    opts: &ImportOptions,
    complete: impl FnOnce(FileReport) -> FileReport,
) -> Imported {
    if let Some(s) = &opts.source {
        let source = crate::data::Name::from(s);
        for r in &mut table.runs {
            r.source = Some(source.clone());
        }
    }
    let mut gpus = table.gpus();
    gpus.sort();
    let mut kernels: Vec<String> = table.runs.iter().map(|r| r.kernel.to_string()).collect();
    kernels.sort();
    kernels.dedup();
    let report = complete(FileReport {
        file,
        format: format.into(),
        gpus,
        kernels,
        rows: table.len(),
        ..FileReport::default()
    });
    Imported {
        table,
        report: ImportReport {
            files: vec![report],
            skipped: vec![],
        },
    }
}

/// A file's first [`Probe::HEAD`] bytes; an empty file is an error.
pub(crate) fn read_head(path: &Path) -> Result<Vec<u8>> {
    let buf = crate::files::read_head(path, Probe::HEAD)
        .map_err(|e| Error::io_error(path.display(), "", e))?;
    if buf.is_empty() {
        return Err(Error::file(path.display(), "empty file"));
    }
    Ok(buf)
}

/// A CSV (every cell as text) or Parquet file as a frame.
pub(crate) fn read_frame(path: &Path) -> Result<DataFrame> {
    read_frame_and_kind(path).map(|(df, _)| df)
}

/// [`read_frame`], and whether the file was text (CSV: data row r is line r + 1)
/// rather than Parquet.
pub(crate) fn read_frame_and_kind(path: &Path) -> Result<(DataFrame, bool)> {
    let name = path.display().to_string();
    let bytes = crate::files::read(path).map_err(|e| Error::io_error(&name, "", e))?;
    frame_from_bytes(bytes, &name)
}

/// [`read_frame_and_kind`] of a file's content, `name` naming it in messages.
pub(crate) fn frame_from_bytes(bytes: Vec<u8>, name: &str) -> Result<(DataFrame, bool)> {
    let bad = |e: PolarsError| {
        let msg = e.to_string();
        Error::file(
            name,
            format!("cannot read: {}", msg.lines().next().unwrap_or(&msg)),
        )
    };
    if bytes.is_empty() {
        return Err(Error::file(name, "empty file"));
    }
    if bytes.starts_with(b"PAR1") {
        let df = crate::data::table_io::read_parquet(bytes, name)?;
        Ok((df, false))
    } else {
        // Text cells: each value is parsed (and its errors located) by the importer.
        let df = crate::data::table_io::text_frame(bytes).map_err(bad)?;
        Ok((df, true))
    }
}

/// A table's latency cell as a run's time (ms), or why it is not one: the failure
/// reason a report counts (no_time, non_number_time, absurd_time).
pub(crate) fn latency_ms(cell: Option<&str>) -> std::result::Result<f64, &'static str> {
    match cell.map(str::parse::<f64>) {
        None => Err("no_time"),
        Some(Err(_)) => Err("non_number_time"),
        Some(Ok(t)) if !t.is_finite() || t <= 0.0 || t > ABSURD_TIME_MS => Err("absurd_time"),
        Some(Ok(t)) => Ok(t),
    }
}

/// The first `max` column names of a frame, comma-separated (for "found ..." in a
/// message about a table that is not what it should be).
pub(crate) fn column_list(df: &DataFrame, max: usize) -> String {
    df.get_column_names()
        .iter()
        .take(max)
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The import of one table of `file`, its GPUs named in `gpu_column`: the kept rows
/// (`kept_rows` of each pass-through column go with them), the report's rows, GPUs and
/// kernels filled in from them, and each (feature, why) of `missing` noted for every
/// row (when there are rows).
pub(crate) fn one_table_import(
    runs: Vec<Run>,
    pass: Vec<(&str, Vec<Option<String>>)>,
    kept_rows: &[usize],
    file: &str,
    gpu_column: &str,
    mut report: FileReport,
    missing: &[(&str, &str)],
) -> Result<Imported> {
    let extra: Vec<(&str, Vec<Option<String>>)> = pass
        .into_iter()
        .map(|(name, cells)| (name, kept_rows.iter().map(|&i| cells[i].clone()).collect()))
        .collect();
    let sorted = |names: Vec<String>| {
        let mut v = names;
        v.sort();
        v.dedup();
        v
    };
    report.rows = runs.len();
    report.gpus = sorted(runs.iter().map(|r| r.gpu.to_string()).collect());
    report.kernels = sorted(runs.iter().map(|r| r.kernel.to_string()).collect());
    if !runs.is_empty() {
        for (feature, why) in missing {
            report.missing.push(Missing {
                feature: feature.to_string(),
                rows: runs.len(),
                why: why.to_string(),
            });
        }
    }
    let mut table = table_from(runs, extra, file)?;
    table.gpu_fields.push(crate::data::GpuField {
        file: file.to_string(),
        field: format!("column '{gpu_column}'"),
        at: None,
    });
    Ok(Imported {
        table,
        report: ImportReport {
            files: vec![report],
            skipped: vec![],
        },
    })
}

/// A runs table from typed rows and text pass-through columns (row-aligned).
pub(crate) fn table_from(
    runs: Vec<Run>,
    extra: Vec<(&str, Vec<Option<String>>)>,
    file: &str,
) -> Result<RunsTable> {
    let n = runs.len();
    let cols: Vec<Column> = extra
        .into_iter()
        .map(|(name, v)| Column::new(name.into(), v))
        .collect();
    let extra = DataFrame::new(n, cols).map_err(|e| Error::data(file, e))?;
    Ok(RunsTable {
        runs,
        extra,
        files: vec![file.to_string()],
        not_imported: Default::default(),
        gpu_fields: Vec::new(),
    })
}

/// Concatenate tables; pass-through columns one table lacks are null there.
pub(crate) fn concat_tables(tables: Vec<RunsTable>) -> Result<RunsTable> {
    let mut out = RunsTable::default();
    let mut frames = Vec::new();
    const PAD: &str = "__gpucast_pad";
    for t in tables {
        let n = t.runs.len();
        let df = if t.extra.width() > 0 && t.extra.height() == n {
            t.extra
        } else {
            DataFrame::new(
                n,
                vec![Column::full_null(PAD.into(), n, &DataType::Boolean)],
            )
            .map_err(|e| Error::data("combining tables", e))?
        };
        frames.push(df);
        out.runs.extend(t.runs);
        out.files.extend(t.files);
        out.gpu_fields.extend(t.gpu_fields);
        crate::data::add_counts(&mut out.not_imported, &t.not_imported);
    }
    if frames
        .iter()
        .all(|f| f.get_column_names().iter().all(|c| c.as_str() == PAD))
    {
        return Ok(out);
    }
    let mut df = if frames.len() == 1 {
        frames.pop().unwrap_or_default()
    } else {
        polars::functions::concat_df_diagonal(&frames)
            .map_err(|e| Error::data("combining tables", e))?
    };
    let _ = df.drop_in_place(PAD);
    out.extra = df;
    Ok(out)
}

impl std::fmt::Debug for dyn Importer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Importer({})", self.name())
    }
}
