//! Import of the reference study's runs format (`runs_*.csv` of "GPU Performance
//! Data Collection"): detected by its columns, converted to the canonical table.
//!
//! Mapping: gpu <- gpu_device_name, time_ms <- mean_ms, time_std_ms <- std_ms,
//! flops <- FLOPs, dram_bytes <- BYTES (the study's accounting), block_threads <- block,
//! regs_per_thread <- regs, smem_per_block <- shmem, category <- mem_pattern,
//! config <- [`study_config_key`] of N/rows/cols/block/iters. grid_blocks and
//! working_set_bytes mean the same in both formats. Every original column is kept;
//! the study's `shared_bytes` (shared memory per block, not traffic as in the canonical
//! format) is kept as `study_shared_bytes`.

use crate::error::{Error, Result};
use polars::prelude::*;
use std::path::Path;

use crate::data::table_io::{text_cells, RowLines};

/// Columns that identify the study's format.
const SIGNATURE: [&str; 5] = ["kernel", "mean_ms", "gpu_device_name", "FLOPs", "BYTES"];

pub fn is_study_format(df: &DataFrame) -> bool {
    SIGNATURE.iter().all(|c| df.column(c).is_ok()) && df.column("time_ms").is_err()
}

/// The study's configuration key: the canonical key ([`gpucast_runs::config_key`])
/// of the parameters that apply (present and non-zero). gpucast-bench builds the
/// same key, so new measurements pair with the reference rows.
pub fn study_config_key(params: &[(&str, Option<f64>)]) -> String {
    gpucast_runs::config_key(
        params
            .iter()
            .filter_map(|&(k, v)| v.filter(|&x| x != 0.0).map(|x| (k, x))),
    )
}

/// Convert a study-format frame into a canonical one (original columns kept).
pub(crate) fn study_to_canonical(
    df: &DataFrame,
    file: &str,
    lines: &RowLines,
) -> Result<DataFrame> {
    let n = df.height();
    let cells = |name: &str| text_cells(df, name).unwrap_or_else(|| vec![None; n]);
    let param = |name: &str| -> Result<Vec<Option<f64>>> {
        cells(name)
            .into_iter()
            .enumerate()
            .map(|(i, c)| match c {
                None => Ok(None),
                Some(s) => s.parse::<f64>().map(Some).map_err(|_| {
                    Error::parse(
                        file,
                        lines.at(i),
                        Some(name),
                        format!("expected a number, found '{s}'"),
                    )
                }),
            })
            .collect()
    };
    let keys = ["N", "rows", "cols", "block", "iters"];
    let values: Vec<Vec<Option<f64>>> = keys.iter().map(|k| param(k)).collect::<Result<_>>()?;
    let config: Vec<String> = (0..n)
        .map(|i| {
            let params: Vec<(&str, Option<f64>)> =
                keys.iter().zip(&values).map(|(k, v)| (*k, v[i])).collect();
            study_config_key(&params)
        })
        .collect();

    let mut out = df.clone();
    if out.column("shared_bytes").is_ok() {
        out.rename("shared_bytes", "study_shared_bytes".into())
            .map_err(|e| Error::data(file.to_string(), e))?;
    }
    let renamed_copy = |src: &str, dst: &str| -> Option<Column> {
        df.column(src).ok().map(|c| c.clone().with_name(dst.into()))
    };
    let mut add: Vec<Column> = vec![
        Column::new("config".into(), config),
        Column::new("precision".into(), vec!["fp32"; n]),
        Column::new("suite".into(), vec!["reference-16"; n]),
        Column::new(
            "source".into(),
            vec![format!("reference study import of {file}"); n],
        ),
    ];
    for (src, dst) in [
        ("gpu_device_name", "gpu"),
        ("mean_ms", "time_ms"),
        ("std_ms", "time_std_ms"),
        ("FLOPs", "flops"),
        ("BYTES", "dram_bytes"),
        ("block", "block_threads"),
        ("regs", "regs_per_thread"),
        ("shmem", "smem_per_block"),
        ("mem_pattern", "category"),
    ] {
        if let Some(c) = renamed_copy(src, dst) {
            add.push(c);
        }
    }
    for c in add {
        out.with_column(c)
            .map_err(|e| Error::data(file.to_string(), e))?;
    }
    Ok(out)
}

/// The reference study's runs files (`--from study`).
pub struct Study;

impl super::common::Importer for Study {
    fn name(&self) -> &'static str {
        "study"
    }
    fn describe(&self) -> &'static str {
        "the reference study's runs files: kernel, mean_ms, gpu_device_name, FLOPs, BYTES"
    }
    fn detect(&self, probe: &super::common::Probe) -> bool {
        probe.has_columns(&SIGNATURE) && !probe.has_columns(&["time_ms"])
    }
    fn takes_file_name(&self, name: &str) -> bool {
        name.ends_with(".csv") || name.ends_with(".parquet")
    }
    fn read(
        &self,
        path: &Path,
        opts: &super::common::ImportOptions,
    ) -> Result<super::common::Imported> {
        let file = path.display().to_string();
        super::canonical::refuse_json(path)?;
        let (df, lines) = crate::data::table_io::read_frame(path)?;
        if !is_study_format(&df) {
            return Err(Error::parse_file(
                &file,
                format!(
                    "not the reference study's runs format (needs columns kernel, mean_ms, gpu_device_name, FLOPs, BYTES); another format is read with {} NAME, or auto",
                    crate::error::input_name(crate::error::Input::ImportFormat)
                ),
            ));
        }
        let df = study_to_canonical(&df, &file, &lines)?;
        let table = crate::data::table_io::from_frame(df, file.as_str().into(), lines)?;
        Ok(super::canonical::imported_table(file, "study", table, opts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn study_key_is_canonical_and_skips_zero() {
        let k = study_config_key(&[
            ("iters", Some(50.0)),
            ("block", Some(256.0)),
            ("N", Some(262144.0)),
            ("rows", Some(0.0)),
            ("cols", None),
        ]);
        assert_eq!(k, "N=262144,block=256,iters=50");
        let k = study_config_key(&[
            ("rows", Some(512.0)),
            ("cols", Some(512.0)),
            ("block", Some(256.0)),
        ]);
        assert_eq!(k, "block=256,cols=512,rows=512");
        assert_eq!(gpucast_runs::canonical_config(&k).unwrap(), k);
    }
}
