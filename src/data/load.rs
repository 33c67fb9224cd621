//! Loading runs: every file named (directories searched for runs files) read in the
//! format the import registry detects, into one table.

use super::import::{self, common::Probe, ImportOptions};
use super::table_io::{extension, UTF8_BOM};
use super::RunsTable;
use crate::error::{input_name, Error, Input, Result};
use polars::prelude::*;
use std::path::{Path, PathBuf};

/// Read every runs table named by `paths` (files, or directories searched
/// recursively for runs files) into one table.
pub fn load(paths: &[PathBuf]) -> Result<RunsTable> {
    load_with(paths, &ImportOptions::default())
}

/// [`load`] with the options a file in a tool's own format is imported with (e.g. the
/// GPU of an Nsight Compute export that does not name it).
pub fn load_with(paths: &[PathBuf], opts: &ImportOptions) -> Result<RunsTable> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let found = runs_files_in(p)?;
            if found.is_empty() {
                return Err(Error::io(
                    p.display(),
                    format!("no runs files (CSV or Parquet with 'gpu', 'kernel' and 'time_ms' columns, or Kernel Tuner caches) in this directory: {}", no_runs_files_why(p)),
                ));
            }
            files.extend(found);
        } else if p.exists() {
            files.push(p.clone());
        } else if std::fs::symlink_metadata(p).is_ok() {
            return Err(Error::io(
                p.display(),
                "a symbolic link that leads to no file (a loop, or a missing target)",
            ));
        } else {
            return Err(Error::io(p.display(), "no such file or directory"));
        }
    }
    load_files_with(&files, opts)
}

/// Read the given files and concatenate them.
pub fn load_files(files: &[PathBuf]) -> Result<RunsTable> {
    load_files_with(files, &ImportOptions::default())
}

fn load_files_with(files: &[PathBuf], opts: &ImportOptions) -> Result<RunsTable> {
    let mut out = RunsTable::default();
    let mut extras = Vec::new();
    for f in files {
        let t = read_file_with(f, opts)?;
        extras.push((t.runs.len(), t.extra));
        if out.runs.is_empty() {
            // Moved, not copied: copying a million runs into a growing vector was a
            // third of loading them (page faults and memcpy; 400 MB more at the peak).
            out.runs = t.runs;
        } else {
            out.runs.extend(t.runs);
        }
        out.files.extend(t.files);
        out.gpu_fields.extend(t.gpu_fields);
        super::add_counts(&mut out.not_imported, &t.not_imported);
    }
    if out.runs.is_empty() {
        return Err(super::no_runs_error(files, &out.not_imported));
    }
    out.extra = concat_extras(extras)?;
    Ok(out)
}

/// Pass-through columns of several files, concatenated diagonally (a column one file
/// lacks is null there); a file with none gets an all-null placeholder of its height.
fn concat_extras(extras: Vec<(usize, DataFrame)>) -> Result<DataFrame> {
    if extras.iter().all(|(_, d)| d.width() == 0) {
        return Ok(DataFrame::empty());
    }
    if extras.len() == 1 {
        return Ok(extras
            .into_iter()
            .next()
            .map(|(_, d)| d)
            .unwrap_or_default());
    }
    const PAD: &str = "__gpucast_pad";
    let frames = extras
        .into_iter()
        .map(|(n, d)| {
            if d.width() > 0 {
                Ok(d)
            } else {
                DataFrame::new(
                    n,
                    vec![Column::full_null(PAD.into(), n, &DataType::Boolean)],
                )
            }
        })
        .collect::<PolarsResult<Vec<_>>>()
        .map_err(|e| Error::data("combining extra columns", e))?;
    let mut df = polars::functions::concat_df_diagonal(&frames)
        .map_err(|e| Error::data("combining extra columns", e))?;
    let _ = df.drop_in_place(PAD);
    Ok(df)
}

/// Runs files under `dir`, recursively, sorted by path. A file is a runs file when it
/// is Parquet, or CSV whose header has `kernel` with `gpu` and `time_ms` (canonical) or
/// `gpu_device_name` and `mean_ms` (the reference study's format), or a Kernel Tuner
/// cache (`.json` or gzipped, naming `tune_params_keys` near its start); other CSVs
/// (trial dumps, profiler exports: a campaign's Nsight Compute exports profile the
/// runs its runs.csv times) and other JSON are skipped.
/// A file that cannot be read is an error, not a file skipped: its rows would be
/// missing without a word.
pub fn runs_files_in(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for p in crate::files::walk(dir)? {
        if let Err(e) = std::fs::File::open(&p) {
            return Err(Error::io(
                p.display(),
                format!("cannot read a file of the input directory: {e}"),
            ));
        }
        if is_runs_file(&p) || import::kernel_tuner::looks_like_cache(&p) {
            found.push(p);
        }
    }
    Ok(found)
}

/// Why a directory holds no runs file: what its files are instead.
fn no_runs_files_why(dir: &Path) -> String {
    let files = crate::files::walk(dir).unwrap_or_default();
    if files.is_empty() {
        return "no files in this directory".into();
    }
    let profiles = files
        .iter()
        .filter(|p| import::ncu::looks_like_ncu(p))
        .count();
    let csv = files
        .iter()
        .filter(|p| extension(p).as_deref() == Some("csv"))
        .count()
        - profiles;
    let json = files
        .iter()
        .filter(|p| {
            let n = p.to_string_lossy().to_ascii_lowercase();
            n.ends_with(".json") || n.ends_with(".json.gz")
        })
        .count();
    let other = files.len() - profiles - csv - json;
    let mut parts = Vec::new();
    if profiles > 0 {
        parts.push(format!(
            "{profiles} Nsight Compute export(s) (name them as files, with {} when they do not name the GPU, or import them: `data import {} ncu`)",
            input_name(Input::Gpu),
            input_name(Input::ImportFormat)
        ));
    }
    if csv > 0 {
        parts.push(format!(
            "{csv} CSV file(s) without the 'gpu', 'kernel' and 'time_ms' columns"
        ));
    }
    if json > 0 {
        parts.push(format!(
            "{json} JSON file(s) that are not Kernel Tuner caches"
        ));
    }
    if other > 0 {
        parts.push(format!("{other} other file(s)"));
    }
    format!("its {} file(s) are {}", files.len(), parts.join(", "))
}

fn is_runs_file(p: &Path) -> bool {
    match extension(p).as_deref() {
        Some("csv") => {
            let Ok(text) = crate::files::read_head(p, 64 * 1024) else {
                return false;
            };
            let text = text.strip_prefix(UTF8_BOM).unwrap_or(&text);
            let end = text.iter().position(|&b| b == b'\n').unwrap_or(text.len());
            let header = String::from_utf8_lossy(&text[..end]);
            let cols: Vec<&str> = header
                .split(',')
                .map(|c| c.trim().trim_matches('"'))
                .collect();
            let has = |c: &str| cols.contains(&c);
            has("kernel")
                && ((has("gpu") && has("time_ms")) || (has("gpu_device_name") && has("mean_ms")))
        }
        Some("parquet") => true,
        _ => false,
    }
}

/// Read one file in any format the registry detects ([`super::import::detect`]): a
/// canonical runs table or the reference study's format, or a file in a tool's own
/// format (a Kernel Tuner cache, a GEMM latency table, an Nsight Compute export,
/// NeuSight's operator timings, nvbench results, a PyTorch profiler trace) imported on
/// the fly with the default import options, so `predict --runs profile.csv` needs no
/// `data import` first. A table no format recognises is read as a runs table, whose
/// reader names the columns it lacks.
pub fn read_file(path: &Path) -> Result<RunsTable> {
    read_file_with(path, &ImportOptions::default())
}

/// [`read_file`], importing a tool's own format with `opts`.
pub fn read_file_with(path: &Path, opts: &ImportOptions) -> Result<RunsTable> {
    let probe = Probe::new(path).map_err(|e| match e {
        // (an empty file is malformed content, not an unreadable file)
        Error::Io { message, .. } if message == "empty file" => {
            Error::parse_file(path.display().to_string(), "empty file")
        }
        other => other,
    })?;
    let importer = match import::detect_probe(&probe) {
        Ok(i) => i,
        Err(_) if !probe.is_json() => &import::canonical::Canonical,
        Err(e) => return Err(e),
    };
    let imported = import::import_file(path, import::Format::One(importer), opts)?;
    // (what the importer did not read as runs stays with the table, to be reported)
    let mut table = imported.table;
    table.not_imported = imported.report.not_read();
    Ok(table)
}
