//! Canonical runs tables (data-formats §1: gpu, kernel, config, time_ms, ...), CSV or
//! Parquet, as an import format: read as they are, with the rows a runner marked
//! failed counted as not imported.

use super::common::{one_file, FileReport, ImportOptions, Imported, Importer, Probe};
use crate::data::RunsTable;
use crate::error::{input_name, Error, Input, Result};
use std::path::Path;

/// Canonical runs tables (`--from canonical`).
pub struct Canonical;

impl Importer for Canonical {
    fn name(&self) -> &'static str {
        "canonical"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["runs"]
    }
    fn describe(&self) -> &'static str {
        "a runs table, CSV or Parquet: gpu, kernel, config, time_ms, flops, dram_bytes"
    }
    fn detect(&self, probe: &Probe) -> bool {
        probe.has_columns(&["gpu", "kernel", "time_ms"])
    }
    fn takes_file_name(&self, name: &str) -> bool {
        name.ends_with(".csv") || name.ends_with(".parquet")
    }
    fn read(&self, path: &Path, opts: &ImportOptions) -> Result<Imported> {
        refuse_json(path)?;
        let file = path.display().to_string();
        let (df, lines) = crate::data::table_io::read_frame(path)?;
        let table = crate::data::table_io::from_frame(df, file.as_str().into(), lines)?;
        Ok(imported_table(file, "canonical", table, opts))
    }
}

/// A table format's reader given JSON: it says which importer reads JSON.
pub(crate) fn refuse_json(path: &Path) -> Result<()> {
    if Probe::new(path)?.is_json() {
        return Err(Error::parse_file(
            path.display(),
            format!(
                "a JSON file, not a CSV or Parquet table: a Kernel Tuner cache is read with {} kernel-tuner, an nvbench --json file with nvbench, a PyTorch profiler trace with torch-trace (or auto)",
                input_name(Input::ImportFormat)
            ),
        ));
    }
    Ok(())
}

/// The import of a runs table read in `format`: its only entries not read are the
/// rows a runner marked failed.
pub(crate) fn imported_table(
    file: String,
    format: &str,
    table: RunsTable,
    opts: &ImportOptions,
) -> Imported {
    let failed = table.not_imported.clone();
    one_file(file, format, table, opts, |r| FileReport { failed, ..r })
}
