//! Importing the formats users already have into runs tables: Kernel Tuner caches,
//! GEMM latency tables, the reference study's runs files and canonical runs tables,
//! chosen by name or detected from each file's content, with a report of what was
//! imported, what was not and why.

use super::workload::Workloads;
use super::{gemm_table, import as study, kernel_tuner, neusight, Run, RunsTable};
use crate::error::{input_name, Error, Input, Result};
use polars::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Input formats of `gpucast data import --from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Kernel Tuner cache (`.json` / `.json.gz`).
    KernelTuner,
    /// GEMM latency table (device, gemm_dtype or dtype, m, n, k, latency in ms).
    GemmTable,
    /// The reference study's `runs_*.csv`.
    Study,
    /// A canonical runs table (gpu, kernel, config, time_ms, flops, dram_bytes).
    Canonical,
    /// An Nsight Compute CSV export (`ncu --csv --page raw` or `--page details`).
    Ncu,
    /// NeuSight's PyTorch-operator timings (CSV, gzip'd or not: OPName, Latency, Device, ...).
    NeuSight,
    /// Detect per file from its content.
    Auto,
}

/// The formats, for messages.
pub const FORMATS: &str = "kernel-tuner (JSON with a 'cache' object), gemm-table (columns device, gemm_dtype or dtype, m, n, k, latency), study (kernel, mean_ms, gpu_device_name, FLOPs, BYTES), canonical (gpu, kernel, config, time_ms, flops, dram_bytes), ncu (an Nsight Compute CSV export, --page raw or details), neusight (CSV or .csv.gz starting OPName, Latency, Device)";

impl Format {
    pub fn parse(s: &str) -> Result<Format> {
        match s.trim().to_ascii_lowercase().as_str() {
            "kernel-tuner" | "kernel_tuner" | "kerneltuner" => Ok(Format::KernelTuner),
            "gemm-table" | "gemm_table" | "gemm" => Ok(Format::GemmTable),
            "study" => Ok(Format::Study),
            "canonical" | "runs" => Ok(Format::Canonical),
            "ncu" | "nsight-compute" => Ok(Format::Ncu),
            "neusight" => Ok(Format::NeuSight),
            "auto" => Ok(Format::Auto),
            other => Err(Error::invalid(
                format!("unknown import format '{other}'"),
                "use kernel-tuner, gemm-table, study, canonical, ncu, neusight or auto",
            )),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Format::KernelTuner => kernel_tuner::FORMAT,
            Format::GemmTable => gemm_table::FORMAT,
            Format::Study => "study",
            Format::Canonical => "canonical",
            Format::Ncu => "ncu",
            Format::NeuSight => neusight::FORMAT,
            Format::Auto => "auto",
        }
    }
}

/// What an import needs besides the files.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// Workload descriptions for Kernel Tuner caches.
    pub workloads: Workloads,
    /// The `source` column (where the data comes from); None: a per-format default
    /// (`aiconfigurator` for GEMM tables, `kernel-tuner:<file name>` for caches).
    pub source: Option<String>,
    /// The GPU of a file that does not name its device (Nsight Compute exports, a
    /// Kernel Tuner cache with an empty `device_name`).
    pub gpu: Option<String>,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            workloads: Workloads::builtin(),
            source: None,
            gpu: None,
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
        super::add_counts(&mut out, m);
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

/// Import every file named by `paths` (directories are searched recursively) in
/// `format`, or detecting each file's format with [`Format::Auto`].
pub fn import_paths(paths: &[PathBuf], format: Format, opts: &ImportOptions) -> Result<Imported> {
    let mut files: Vec<(PathBuf, bool)> = Vec::new();
    for p in paths {
        if p.is_dir() {
            let found = files_in(p, format)?;
            if found.is_empty() {
                return Err(Error::file(
                    p.display(),
                    format!(
                        "no input files for format {} in this directory",
                        format.name()
                    ),
                ));
            }
            files.extend(found.into_iter().map(|f| (f, true)));
        } else if p.exists() {
            files.push((p.clone(), false));
        } else if std::fs::symlink_metadata(p).is_ok() {
            return Err(Error::file(
                p.display(),
                "a symbolic link that leads to no file (a loop, or a missing target)",
            ));
        } else {
            return Err(Error::file(p.display(), "no such file or directory"));
        }
    }
    let mut tables = Vec::new();
    let mut report = ImportReport::default();
    let mut read = Vec::new();
    for (f, from_dir) in files {
        let fmt = match format {
            Format::Auto => match detect(&f) {
                Ok(fmt) => fmt,
                // Inside a directory, files of no known format are skipped (and said).
                Err(_) if from_dir => {
                    report.skipped.push(f.display().to_string());
                    continue;
                }
                Err(e) => return Err(e),
            },
            other => other,
        };
        let one = import_file(&f, fmt, opts)?;
        tables.push(one.table);
        report.files.extend(one.report.files);
        read.push(f);
    }
    let table = concat_tables(tables)?;
    check_no_repeats(&table)?;
    if table.runs.is_empty() && !read.is_empty() {
        // (the report, not the tables: a canonical table's failed rows are in both)
        return Err(super::no_runs_error(&read, &report.not_read()));
    }
    Ok(Imported { table, report })
}

/// Import one file in a given format (auto: the one [`detect`] finds). A GPU given
/// in `opts` names the device of a file that names none; a file that names another
/// is refused, not read as the given one.
pub fn import_file(path: &Path, format: Format, opts: &ImportOptions) -> Result<Imported> {
    let imported = import_format(path, format, opts)?;
    check_given_gpu(path, &imported.table.runs, opts)?;
    Ok(imported)
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
        .find(|r| !super::ncu::same_gpu(&r.gpu, given, &mut builtin))
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

/// Whether a file (its first bytes `head`) is JSON, gzip'd or not: a Kernel Tuner
/// cache. A gzip'd file is looked into, the start of it only (its first 512
/// decompressed bytes): a gzip'd CSV is a table; a gzip stream that does not
/// decompress is left to the cache reader, which says why.
pub(crate) fn is_json(head: &[u8]) -> bool {
    if !head.starts_with(&[0x1f, 0x8b]) {
        return is_json_or_gzip(head);
    }
    let mut start = Vec::new();
    // (a head cut mid-stream decompresses as far as it goes: enough to look at)
    let _ = std::io::Read::read_to_end(
        &mut std::io::Read::take(flate2::read::MultiGzDecoder::new(head), 512),
        &mut start,
    );
    // (nothing decompresses: the cache reader says why)
    start.is_empty() || (!start.starts_with(&[0x1f, 0x8b]) && is_json_or_gzip(&start))
}

fn import_format(path: &Path, format: Format, opts: &ImportOptions) -> Result<Imported> {
    let file = path.display().to_string();
    match format {
        Format::KernelTuner => {
            let source = opts.source.clone().unwrap_or_else(|| {
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                format!("kernel-tuner:{name}")
            });
            kernel_tuner::import(path, &opts.workloads, &source, opts.gpu.as_deref())
        }
        Format::GemmTable => {
            let source = opts.source.as_deref().unwrap_or(gemm_table::DEFAULT_SOURCE);
            gemm_table::import(path, source)
        }
        Format::Study | Format::Canonical => {
            if is_json(&read_head(path)?) {
                return Err(Error::file(
                    &file,
                    format!(
                        "a JSON file, not a CSV or Parquet table: a Kernel Tuner cache is read with {} kernel-tuner (or auto)",
                        input_name(Input::ImportFormat)
                    ),
                ));
            }
            let df = read_frame(path)?;
            let is_study = study::is_study_format(&df);
            if format == Format::Study && !is_study {
                return Err(Error::file(
                    &file,
                    format!("not the reference study's runs format (needs columns kernel, mean_ms, gpu_device_name, FLOPs, BYTES); formats: {FORMATS}"),
                ));
            }
            let table = super::read_file(path)?;
            // (a canonical table's only entries not read: rows a runner marked failed)
            let failed = table.not_imported.clone();
            let format = if is_study { "study" } else { "canonical" };
            Ok(one_file(file, format, table, opts, |r| FileReport {
                failed,
                ..r
            }))
        }
        Format::NeuSight => {
            let source = opts.source.as_deref().unwrap_or(neusight::DEFAULT_SOURCE);
            neusight::import(path, source)
        }
        Format::Ncu => {
            let imp = super::ncu::import(path, opts.gpu.as_deref())?;
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
            Ok(one_file(file, "ncu", imp.runs, opts, |r| FileReport {
                missing,
                notes,
                left_out,
                ..r
            }))
        }
        Format::Auto => {
            let fmt = detect(path)?;
            import_format(path, fmt, opts)
        }
    }
}

/// No two rows of an import measure the same work on the same GPU (as written) and
/// SMs from the same source: `data validate` refuses such a table, so the import
/// says so first, at the second row (a file given twice was written out doubled).
/// Kernel Tuner caches count their repeated configurations instead (duplicate_config).
fn check_no_repeats(table: &RunsTable) -> Result<()> {
    type Key<'a> = (&'a str, &'a str, &'a str, Option<&'a str>, Option<u64>);
    let mut seen: rustc_hash::FxHashMap<Key, &super::Run> = Default::default();
    seen.reserve(table.runs.len());
    for run in &table.runs {
        let sms = run.details().sm_count;
        let key = (
            run.gpu.as_str(),
            run.kernel.as_str(),
            run.config.as_str(),
            run.source.as_deref(),
            sms.map(f64::to_bits),
        );
        if let Some(first) = seen.insert(key, run) {
            return Err(super::validate::duplicate_error(
                run,
                first,
                sms.map(|n| n as u32),
            ));
        }
    }
    Ok(())
}

/// One imported file's rows (with `opts.source` as their source) and report: GPUs,
/// kernels and rows filled in, the rest by `complete`.
fn one_file(
    file: String,
    format: &str,
    mut table: RunsTable,
    opts: &ImportOptions,
    complete: impl FnOnce(FileReport) -> FileReport,
) -> Imported {
    if let Some(s) = &opts.source {
        let source = super::Name::from(s);
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

/// The format of one file, from its content: a first line starting `OPName,Latency,
/// Device` (gzip'd or not) is NeuSight's; JSON with a `cache` key is a Kernel
/// Tuner cache; a table with m, n, k and latency a GEMM table; the study's columns the
/// study's format; gpu, kernel, config and time_ms a canonical runs table.
pub fn detect(path: &Path) -> Result<Format> {
    let file = path.display().to_string();
    // (before the JSON test: NeuSight's files are gzip'd CSV)
    if neusight::looks_like_neusight(path) {
        return Ok(Format::NeuSight);
    }
    if is_json(&read_head(path)?) {
        let text = kernel_tuner::read_text(path)?;
        let doc: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            Error::file(
                &file,
                format!("line {}, column {}: not a recognised format (unreadable JSON); formats: {FORMATS}", e.line(), e.column()),
            )
        })?;
        // (a 'cache' that is not an object too: the importer says what is wrong with it)
        if doc.get("cache").is_some() {
            return Ok(Format::KernelTuner);
        }
        return Err(Error::file(
            &file,
            format!("line 1, column 1: not a recognised format: JSON without a top-level 'cache' object; formats: {FORMATS}"),
        ));
    }
    if super::ncu::looks_like_ncu(path) {
        return Ok(Format::Ncu);
    }
    let df = read_frame(path)?;
    let gemm = gemm_table::is_gemm_table(&df);
    let study = study::is_study_format(&df);
    let canonical = ["gpu", "kernel", "config", "time_ms"]
        .iter()
        .all(|c| df.column(c).is_ok());
    match (gemm, study, canonical) {
        (true, false, false) => Ok(Format::GemmTable),
        (false, true, _) => Ok(Format::Study),
        (false, false, true) => Ok(Format::Canonical),
        (false, false, false) => {
            let cols = column_list(&df, 12);
            Err(Error::file(
                &file,
                format!(
                    "not a recognised format (columns: {}); formats: {FORMATS}",
                    cols
                ),
            ))
        }
        _ => Err(Error::file(
            &file,
            format!(
                "ambiguous: the columns fit more than one format; pick one with {} ({FORMATS})",
                input_name(Input::ImportFormat)
            ),
        )),
    }
}

/// Whether a file's first bytes are gzip's magic number or a JSON document's opening.
pub(crate) fn is_json_or_gzip(head: &[u8]) -> bool {
    let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    let first = head.iter().find(|b| !b.is_ascii_whitespace()).copied();
    head.starts_with(&[0x1f, 0x8b]) || first == Some(b'{') || first == Some(b'[')
}

fn read_head(path: &Path) -> Result<Vec<u8>> {
    let buf = crate::files::read_head(path, 512)
        .map_err(|e| Error::file(path.display(), e.to_string()))?;
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
    let bytes = crate::files::read(path).map_err(|e| Error::file(&name, e.to_string()))?;
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
        let df = super::table_io::read_parquet(bytes, name)?;
        Ok((df, false))
    } else {
        // Text cells: each value is parsed (and its errors located) by the importer.
        let df = CsvReadOptions::default()
            .with_has_header(true)
            .with_infer_schema_length(Some(0))
            .into_reader_with_file_handle(std::io::Cursor::new(bytes))
            .finish()
            .map_err(bad)?;
        Ok((df, true))
    }
}

/// A table's latency cell as a run's time (ms), or why it is not one: the failure
/// reason a report counts (no_time, non_number_time, absurd_time).
pub(crate) fn latency_ms(cell: Option<&str>) -> std::result::Result<f64, &'static str> {
    match cell.map(str::parse::<f64>) {
        None => Err("no_time"),
        Some(Err(_)) => Err("non_number_time"),
        Some(Ok(t)) if !t.is_finite() || t <= 0.0 || t > super::kernel_tuner::ABSURD_TIME_MS => {
            Err("absurd_time")
        }
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

/// Files under `dir` (recursively, sorted) that `format` may read.
fn files_in(dir: &Path, format: Format) -> Result<Vec<PathBuf>> {
    if matches!(format, Format::Study | Format::Canonical) {
        return super::runs_files_in(dir);
    }
    let takes = |p: &PathBuf| {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        let json = name.ends_with(".json") || name.ends_with(".json.gz");
        let table = name.ends_with(".csv") || name.ends_with(".parquet");
        let csv_gz = name.ends_with(".csv.gz");
        match format {
            Format::KernelTuner => json,
            Format::GemmTable => table,
            Format::Ncu => name.ends_with(".csv"),
            Format::NeuSight => name.ends_with(".csv") || csv_gz,
            Format::Auto => json || table || csv_gz,
            Format::Study | Format::Canonical => false,
        }
    };
    Ok(crate::files::walk(dir)?.into_iter().filter(takes).collect())
}

/// The import of one table of `file`, its GPUs named in `gpu_column`: the kept rows
/// (`kept_rows` of each pass-through column go with them), the report's rows, GPUs and
/// kernels filled in from them, and each (feature, why) of `missing` noted for every
/// row (when there are rows).
pub(crate) fn one_table_import(
    runs: Vec<super::Run>,
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
    table.gpu_fields.push(super::GpuField {
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
    runs: Vec<super::Run>,
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
        super::add_counts(&mut out.not_imported, &t.not_imported);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_parse_by_name() {
        assert_eq!(Format::parse("kernel-tuner").unwrap(), Format::KernelTuner);
        assert_eq!(Format::parse(" Gemm-Table ").unwrap(), Format::GemmTable);
        assert_eq!(Format::parse("auto").unwrap(), Format::Auto);
        let e = Format::parse("csv").unwrap_err().to_string();
        assert!(e.contains("unknown import format 'csv'"), "{e}");
    }

    #[test]
    fn report_sums_over_files() {
        let f = |rows, failed: &[(&str, usize)]| FileReport {
            rows,
            failed: failed.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            ..FileReport::default()
        };
        let r = ImportReport {
            files: vec![
                f(3, &[("absurd_time", 1), ("InvalidConfig", 2)]),
                f(4, &[("absurd_time", 5)]),
            ],
            skipped: vec![],
        };
        assert_eq!(r.rows(), 7);
        assert_eq!(r.absurd_times(), 6);
        assert_eq!(r.failed_total(), 8);
        assert_eq!(r.failed()["InvalidConfig"], 2);
    }
}
