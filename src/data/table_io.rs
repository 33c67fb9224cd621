//! Reading and writing runs tables (CSV and Parquet) with polars.

use super::{import, Origin, Run, RunsTable, OPTIONAL_NUMERIC, OPTIONAL_TEXT, REQUIRED};
use crate::error::{Error, Result};
use polars::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Read every runs table named by `paths` (files, or directories searched
/// recursively for runs files) into one table.
pub fn load(paths: &[PathBuf]) -> Result<RunsTable> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let found = runs_files_in(p)?;
            if found.is_empty() {
                return Err(Error::file(
                    p.display(),
                    "no runs files (CSV or Parquet with 'gpu', 'kernel' and 'time_ms' columns) in this directory",
                ));
            }
            files.extend(found);
        } else if p.exists() {
            files.push(p.clone());
        } else {
            return Err(Error::file(p.display(), "no such file or directory"));
        }
    }
    load_files(&files)
}

/// Read the given files and concatenate them.
pub fn load_files(files: &[PathBuf]) -> Result<RunsTable> {
    let mut out = RunsTable::default();
    let mut extras = Vec::new();
    for f in files {
        let t = read_file(f)?;
        extras.push((t.runs.len(), t.extra));
        out.runs.extend(t.runs);
        out.files.extend(t.files);
        out.skipped_error_rows += t.skipped_error_rows;
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
        .map_err(|e| Error::msg(format!("combining extra columns: {e}")))?;
    let mut df = polars::functions::concat_df_diagonal(&frames)
        .map_err(|e| Error::msg(format!("combining extra columns: {e}")))?;
    let _ = df.drop_in_place(PAD);
    Ok(df)
}

/// Runs files under `dir`, recursively, sorted by path. A file is a runs file when it
/// is Parquet, or CSV whose header has `kernel` with `gpu` and `time_ms` (canonical) or
/// `gpu_device_name` and `mean_ms` (the reference study's format); other CSVs (trial
/// dumps, profiler exports) are skipped.
pub fn runs_files_in(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| Error::file(d.display(), e.to_string()))?;
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if is_runs_file(&p) {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

fn is_runs_file(p: &Path) -> bool {
    match extension(p).as_deref() {
        Some("csv") => {
            let Ok(text) = std::fs::read(p) else {
                return false;
            };
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

fn extension(p: &Path) -> Option<String> {
    p.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
}

fn read_frame(path: &Path) -> Result<DataFrame> {
    let name = &path.display().to_string();
    let bad =
        |e: PolarsError| Error::file(name, format!("cannot read: {}", first_line(&e.to_string())));
    match extension(path).as_deref() {
        Some("parquet") => {
            let f = std::fs::File::open(path).map_err(|e| Error::file(name, e.to_string()))?;
            ParquetReader::new(f).finish().map_err(bad)
        }
        Some("csv") | Some("tsv") | Some("txt") | None => {
            let bytes = std::fs::read(path).map_err(|e| Error::file(name, e.to_string()))?;
            if bytes.is_empty() {
                return Err(Error::file(name, "empty file"));
            }
            // Read every column as text: we type-check cell by cell so that a bad
            // value gets an error naming its row instead of a whole-file failure.
            CsvReadOptions::default()
                .with_has_header(true)
                .with_infer_schema_length(Some(0))
                .into_reader_with_file_handle(std::io::Cursor::new(bytes))
                .finish()
                .map_err(bad)
        }
        Some(other) => Err(Error::file(
            name,
            format!("unknown file type '.{other}' (expected .csv or .parquet)"),
        )),
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
}

/// Read one file (canonical or the reference study's format, detected by its columns).
pub fn read_file(path: &Path) -> Result<RunsTable> {
    let df = read_frame(path)?;
    let file: Arc<str> = Arc::from(path.display().to_string());
    if import::is_study_format(&df) {
        let df = import::study_to_canonical(&df, &file)?;
        return from_frame(df, file);
    }
    from_frame(df, file)
}

/// Column `name` as text cells (None = null or empty).
pub(crate) fn text_cells(df: &DataFrame, name: &str) -> Option<Vec<Option<String>>> {
    let col = df.column(name).ok()?;
    let s = col.as_materialized_series().cast(&DataType::String).ok()?;
    let ca = s.str().ok()?.clone();
    Some(
        ca.iter()
            .map(|v| v.map(|x| x.trim().to_string()).filter(|x| !x.is_empty()))
            .collect(),
    )
}

/// Parse a numeric cell; NaN and infinities are rejected here, once, for every column.
fn parse_number(file: &str, row: usize, column: &str, cell: &str) -> Result<f64> {
    let v: f64 = cell.parse().map_err(|_| {
        Error::cell(
            file,
            row,
            column,
            format!("expected a number, found '{cell}'"),
        )
    })?;
    if !v.is_finite() {
        return Err(Error::cell(
            file,
            row,
            column,
            format!("value is {cell}: must be a finite number"),
        ));
    }
    Ok(v)
}

/// Convert a canonical frame (all columns, any dtype) into typed runs.
pub(crate) fn from_frame(df: DataFrame, file: Arc<str>) -> Result<RunsTable> {
    let n = df.height();
    for req in REQUIRED {
        if df.column(req).is_err() {
            return Err(Error::file(
                &*file,
                format!("missing required column '{req}'"),
            ));
        }
    }
    let mut runs: Vec<Run> = (0..n)
        .map(|i| Run {
            origin: Origin {
                file: file.clone(),
                row: i + 1,
            },
            ..Run::default()
        })
        .collect();

    // Rows a runner marked as failed carry no time: skip them (and count them).
    let status = text_cells(&df, "status");
    let keep: Vec<bool> = (0..n)
        .map(|i| match &status {
            Some(s) => s[i]
                .as_deref()
                .map(|v| v.eq_ignore_ascii_case("ok"))
                .unwrap_or(true),
            None => true,
        })
        .collect();

    let mut known: Vec<&str> = Vec::new();
    for name in df.get_column_names() {
        let name = name.as_str();
        let Some(cells) = text_cells(&df, name) else {
            continue;
        };
        let required = REQUIRED.contains(&name);
        let is_num =
            matches!(name, "time_ms" | "flops" | "dram_bytes") || OPTIONAL_NUMERIC.contains(&name);
        let is_text = matches!(name, "gpu" | "kernel" | "config") || OPTIONAL_TEXT.contains(&name);
        if name == "flags" {
            known.push("flags");
            for (run, c) in runs.iter_mut().zip(&cells) {
                if let Some(c) = c {
                    run.flags = c
                        .split(';')
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect();
                }
            }
            continue;
        }
        if !is_num && !is_text {
            continue;
        }
        known.push(name);
        for (i, (run, cell)) in runs.iter_mut().zip(cells).enumerate() {
            if !keep[i] {
                continue;
            }
            let row = i + 1;
            let Some(cell) = cell else {
                if required {
                    return Err(Error::cell(&*file, row, name, "missing value"));
                }
                continue;
            };
            if is_num {
                let v = parse_number(&file, row, name, &cell)?;
                match name {
                    "time_ms" if v <= 0.0 => {
                        return Err(Error::cell(
                            &*file,
                            row,
                            name,
                            format!("time must be > 0, found {cell}"),
                        ))
                    }
                    "flops" | "dram_bytes" if v < 0.0 => {
                        return Err(Error::cell(
                            &*file,
                            row,
                            name,
                            format!("must be >= 0, found {cell}"),
                        ))
                    }
                    "time_ms" => run.time_ms = v,
                    "flops" => run.flops = v,
                    "dram_bytes" => run.dram_bytes = v,
                    _ => {
                        if v < 0.0 {
                            return Err(Error::cell(
                                &*file,
                                row,
                                name,
                                format!("must be >= 0, found {cell}"),
                            ));
                        }
                        if let Some(slot) = run.numeric_mut(name) {
                            *slot = Some(v);
                        }
                    }
                }
            } else {
                match name {
                    "gpu" => run.gpu = cell,
                    "kernel" => run.kernel = cell,
                    "config" => run.config = cell,
                    _ => {
                        if let Some(slot) = run.text_mut(name) {
                            *slot = Some(cell);
                        }
                    }
                }
            }
        }
    }

    let extra_cols: Vec<Column> = df
        .columns()
        .iter()
        .filter(|c| !known.contains(&c.name().as_str()))
        .cloned()
        .collect();
    let mut extra =
        DataFrame::new(n, extra_cols).map_err(|e| Error::file(&*file, e.to_string()))?;
    let skipped = keep.iter().filter(|k| !**k).count();
    if skipped > 0 {
        let mask = BooleanChunked::from_slice("keep".into(), &keep);
        extra = extra
            .filter(&mask)
            .map_err(|e| Error::file(&*file, e.to_string()))?;
        let mut it = keep.iter();
        runs.retain(|_| *it.next().unwrap_or(&true));
    }
    Ok(RunsTable {
        runs,
        extra,
        files: vec![file.to_string()],
        skipped_error_rows: skipped,
    })
}

/// Build the output frame: required columns, the optional ones any row has, flags,
/// then the pass-through columns.
pub fn to_frame(table: &RunsTable) -> Result<DataFrame> {
    let n = table.runs.len();
    let mut cols: Vec<Column> = Vec::new();
    let text = |name: &str| -> Column {
        let v: Vec<Option<&str>> = table.runs.iter().map(|r| r.text(name)).collect();
        Column::new(name.into(), v)
    };
    let num = |name: &str| -> Column {
        let v: Vec<Option<f64>> = table.runs.iter().map(|r| r.numeric(name)).collect();
        Column::new(name.into(), v)
    };
    for name in ["gpu", "kernel", "config"] {
        cols.push(text(name));
    }
    for name in ["time_ms", "flops", "dram_bytes"] {
        cols.push(num(name));
    }
    for name in OPTIONAL_NUMERIC {
        if table.runs.iter().any(|r| r.numeric(name).is_some()) {
            cols.push(num(name));
        }
    }
    for name in OPTIONAL_TEXT {
        if table.runs.iter().any(|r| r.text(name).is_some()) {
            cols.push(text(name));
        }
    }
    if table.runs.iter().any(|r| !r.flags.is_empty()) {
        let v: Vec<String> = table.runs.iter().map(|r| r.flags.join(";")).collect();
        cols.push(Column::new("flags".into(), v));
    }
    if table.extra.height() == n {
        for c in table.extra.columns() {
            if !cols.iter().any(|k| k.name() == c.name()) {
                cols.push(c.clone());
            }
        }
    }
    DataFrame::new(n, cols).map_err(|e| Error::msg(format!("building output table: {e}")))
}

/// Write `df` to `path` (CSV or Parquet by extension), atomically, so an interrupted
/// write never leaves half a file.
pub fn write_frame(df: &mut DataFrame, path: &Path) -> Result<()> {
    let name = &path.display().to_string();
    let parquet = match extension(path).as_deref() {
        Some("parquet") => true,
        Some("csv") => false,
        _ => return Err(Error::file(name, "output must end in .csv or .parquet")),
    };
    crate::output::write_atomic_with(path, |file| {
        let res = if parquet {
            ParquetWriter::new(file)
                .with_compression(ParquetCompression::Zstd(None))
                .finish(df)
                .map(|_| ())
        } else {
            CsvWriter::new(file).include_header(true).finish(df)
        };
        res.map_err(|e| Error::file(name, format!("cannot write: {e}")))
    })
}

/// Write a runs table to CSV or Parquet (atomically).
pub fn write(table: &RunsTable, path: &Path) -> Result<()> {
    let mut df = to_frame(table)?;
    write_frame(&mut df, path)
}
