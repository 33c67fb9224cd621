//! Importing the formats users already have into runs tables: one file per format
//! (each an [`Importer`]: a name for `--from`, a detector, a reader), and here the
//! registry that lists them, detects a file's format (the one detection rule every
//! command uses) and imports files and directories with a report of what was
//! imported, what was not and why.
//!
//! Adding a format: one file in this folder implementing [`Importer`], and one line in
//! [`REGISTRY`] (docs/data.md, "Adding a format").

pub mod canonical;
pub mod common;
pub mod gemm_table;
pub mod kernel_tuner;
pub mod ncu;
pub mod neusight;
pub mod nvbench;
pub mod study;
pub mod torch_trace;

pub use common::{
    FileReport, ImportOptions, ImportReport, Imported, Importer, Missing, Probe, ABSURD_TIME_MS,
};

use crate::data::RunsTable;
use crate::error::{input_name, Error, Input, Result};
use std::path::{Path, PathBuf};

/// Every input format, in the order `--from` lists them. One line per format.
pub static REGISTRY: &[&dyn Importer] = &[
    &kernel_tuner::KernelTuner,
    &gemm_table::GemmTable,
    &study::Study,
    &canonical::Canonical,
    &ncu::Ncu,
    &neusight::NeuSight,
    &nvbench::Nvbench,
    &torch_trace::TorchTrace,
];

/// The value of `--from` that detects each file's format.
pub const AUTO: &str = "auto";

/// The names `--from` takes, the registry's in its order, then `auto` (what the
/// command line's value list is made of).
pub fn names() -> Vec<&'static str> {
    REGISTRY
        .iter()
        .map(|i| i.name())
        .chain(std::iter::once(AUTO))
        .collect()
}

/// The formats and what each reads, for messages: "name (what), ...".
pub fn formats_text() -> String {
    REGISTRY
        .iter()
        .map(|i| format!("{} ({})", i.name(), i.describe()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// An input format of an import: one importer, or detection per file.
#[derive(Clone, Copy)]
pub enum Format {
    /// Detect per file from its content ([`detect`]).
    Auto,
    One(&'static dyn Importer),
}

impl std::fmt::Debug for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Format({})", self.name())
    }
}

impl PartialEq for Format {
    fn eq(&self, other: &Format) -> bool {
        self.name() == other.name()
    }
}

impl Format {
    /// The format `--from` names (its name or an alias, any case), or `auto`.
    pub fn parse(s: &str) -> Result<Format> {
        let want = s.trim().to_ascii_lowercase();
        if want == AUTO {
            return Ok(Format::Auto);
        }
        REGISTRY
            .iter()
            .find(|i| i.name() == want || i.aliases().contains(&want.as_str()))
            .map(|i| Format::One(*i))
            .ok_or_else(|| {
                Error::invalid(
                    format!("unknown import format '{want}'"),
                    format!("use {}", names().join(", ")),
                )
            })
    }
    pub fn name(self) -> &'static str {
        match self {
            Format::Auto => AUTO,
            Format::One(i) => i.name(),
        }
    }
}

/// The format of one file, from its name and first bytes: the one importer whose
/// detector accepts it. None accepting it, or several, is an error that lists the
/// formats (a JSON document is read through for its syntax errors first, so that a
/// broken file says where it breaks).
pub fn detect(path: &Path) -> Result<&'static dyn Importer> {
    detect_probe(&Probe::new(path)?)
}

/// [`detect`] of a file already probed.
pub fn detect_probe(probe: &Probe) -> Result<&'static dyn Importer> {
    let path = probe.path;
    let found: Vec<&'static dyn Importer> = REGISTRY
        .iter()
        .copied()
        .filter(|i| i.detect(probe))
        .collect();
    let file = path.display().to_string();
    match found.as_slice() {
        [one] => Ok(*one),
        [] if probe.is_json() => Err(unrecognised_json(path, &file)),
        [] => {
            // (a Parquet file that does not read says why, not "no columns")
            if probe.is_parquet() {
                common::read_frame(path)?;
            }
            let cols = probe
                .columns()
                .map(|c| c.iter().take(12).cloned().collect::<Vec<_>>().join(", "))
                .unwrap_or_default();
            Err(Error::parse_file(
                file,
                format!(
                    "not a recognised format (columns: {cols}); formats: {}",
                    formats_text()
                ),
            ))
        }
        many => Err(Error::parse_file(
            file,
            format!(
                "ambiguous: the content fits more than one format ({}); pick one with {}",
                many.iter().map(|i| i.name()).collect::<Vec<_>>().join(", "),
                input_name(Input::ImportFormat)
            ),
        )),
    }
}

/// The error for JSON no detector recognised: where its syntax breaks when it does
/// (read through without being kept: a large file costs no memory), else what it
/// lacks.
fn unrecognised_json(path: &Path, file: &str) -> Error {
    let syntax = crate::files::open(path)
        .map_err(|e| e.to_string())
        .and_then(|f| {
            let reader: Box<dyn std::io::Read> = if Probe::new(path).is_ok_and(|p| p.is_gzip()) {
                Box::new(flate2::read::MultiGzDecoder::new(std::io::BufReader::new(
                    f,
                )))
            } else {
                Box::new(std::io::BufReader::new(f))
            };
            let mut de = serde_json::Deserializer::from_reader(reader);
            use serde::Deserialize;
            let read = serde::de::IgnoredAny::deserialize(&mut de).and_then(|_| de.end());
            read.map_err(|e| {
                format!(
                    "line {}, column {}: not a recognised format (unreadable JSON: {})",
                    e.line(),
                    e.column(),
                    first_clause(&e.to_string())
                )
            })
        });
    let message = match syntax {
        Err(m) => m,
        Ok(()) => "line 1, column 1: not a recognised format: JSON without a top-level 'cache' object (Kernel Tuner), 'benchmarks' (nvbench) or 'traceEvents' (PyTorch profiler)".into(),
    };
    Error::parse_file(file, format!("{message}; formats: {}", formats_text()))
}

/// A serde_json message without its " at line L column C" (the place is said first).
fn first_clause(msg: &str) -> &str {
    msg.split(" at line ").next().unwrap_or(msg)
}

/// Import every file named by `paths` (directories are searched recursively) in
/// `format`, or detecting each file's format with [`Format::Auto`].
pub fn import_paths(paths: &[PathBuf], format: Format, opts: &ImportOptions) -> Result<Imported> {
    let mut files: Vec<(PathBuf, bool)> = Vec::new();
    for p in paths {
        if p.is_dir() {
            let found = files_in(p, format)?;
            if found.is_empty() {
                return Err(Error::io(
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
            return Err(Error::io(
                p.display(),
                "a symbolic link that leads to no file (a loop, or a missing target)",
            ));
        } else {
            return Err(Error::io(p.display(), "no such file or directory"));
        }
    }
    let mut tables = Vec::new();
    let mut report = ImportReport::default();
    let mut read = Vec::new();
    for (f, from_dir) in files {
        let importer = match format {
            Format::Auto => match detect(&f) {
                Ok(i) => i,
                // Inside a directory, files of no known format are skipped (and said).
                Err(_) if from_dir => {
                    report.skipped.push(f.display().to_string());
                    continue;
                }
                Err(e) => return Err(e),
            },
            Format::One(i) => i,
        };
        let one = import_file(&f, Format::One(importer), opts)?;
        tables.push(one.table);
        report.files.extend(one.report.files);
        read.push(f);
    }
    let table = common::concat_tables(tables)?;
    check_no_repeats(&table)?;
    if table.runs.is_empty() && !read.is_empty() {
        // (the report, not the tables: a canonical table's failed rows are in both)
        return Err(crate::data::no_runs_error(&read, &report.not_read()));
    }
    Ok(Imported { table, report })
}

/// Import one file in a given format (auto: the one [`detect`] finds). A GPU given
/// in `opts` names the device of a file that names none; a file that names another
/// is refused, not read as the given one.
pub fn import_file(path: &Path, format: Format, opts: &ImportOptions) -> Result<Imported> {
    let importer = match format {
        Format::Auto => detect(path)?,
        Format::One(i) => i,
    };
    let imported = importer.read(path, opts)?;
    common::check_given_gpu(path, &imported.table.runs, opts)?;
    Ok(imported)
}

/// No two rows of an import measure the same work on the same GPU (as written) and
/// SMs from the same source: `data validate` refuses such a table, so the import
/// says so first, at the second row (a file given twice was written out doubled).
/// Kernel Tuner caches count their repeated configurations instead (duplicate_config).
fn check_no_repeats(table: &RunsTable) -> Result<()> {
    type Key<'a> = (&'a str, &'a str, &'a str, Option<&'a str>, Option<u64>);
    let mut seen: rustc_hash::FxHashMap<Key, &crate::data::Run> = Default::default();
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
            return Err(crate::data::validate::duplicate_error(
                run,
                first,
                sms.map(|n| n as u32),
            ));
        }
    }
    Ok(())
}

/// Files under `dir` (recursively, sorted) that `format` may read: auto takes a file
/// any format may be in.
fn files_in(dir: &Path, format: Format) -> Result<Vec<PathBuf>> {
    match format {
        Format::One(i) => i.files_in(dir),
        Format::Auto => {
            let takes = |p: &PathBuf| {
                let name = common::file_name(p);
                REGISTRY.iter().any(|i| i.takes_file_name(&name))
            };
            Ok(crate::files::walk(dir)?.into_iter().filter(takes).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_parse_by_name() {
        assert_eq!(
            Format::parse("kernel-tuner").unwrap().name(),
            "kernel-tuner"
        );
        assert_eq!(Format::parse(" Gemm-Table ").unwrap().name(), "gemm-table");
        assert_eq!(
            Format::parse("kernel_tuner").unwrap().name(),
            "kernel-tuner"
        );
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
