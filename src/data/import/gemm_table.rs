//! Import of GEMM latency tables (Parquet or CSV): one row per (device, dtype, m, n,
//! k) with the latency of one library GEMM call in ms, as aiconfigurator's
//! `gemm_perf` tables publish them.
//!
//! Required columns: `device` (as the driver reports it), `gemm_dtype` or `dtype`,
//! `m`, `n`, `k`, `latency` (or `latency_ms`). Mapping:
//! - `gpu` = device as written; `kernel` = `gemm_<dtype>`; `config` = the canonical key
//!   of m, n, k; `time_ms` = latency; `flops` = 2mnk.
//! - `dram_bytes`: MODEL, a lower bound: the activations A (m x k), the weights B
//!   (k x n) and the output C (m x n) each moved once, at the element size of the data
//!   the timed call reads or writes (see [`dtype_facts`]): weights at their stored size
//!   (bf16 2, fp8 1, int8 1, int4 0.5, nvfp4 0.5 plus one 1-byte scale per 16 values,
//!   fp8 with 128 x 128 block scales 1 plus 4 bytes per block), activations and output
//!   as the call receives and returns them (bf16 or fp16, 2 bytes; 1 byte for
//!   SmoothQuant, whose GEMM takes int8 activations).
//! - `precision` = the arithmetic the GEMM runs in: bf16, fp16, fp8, fp4 or int8
//!   (weight-only int8/int4 GEMMs dequantize to fp16 and multiply in fp16).
//! - `source` = the caller's name for the data (default `aiconfigurator`); the
//!   columns `framework`, `version` (as `library_version`) and `kernel_source` pass
//!   through when present.
//!
//! Rows whose latency is missing, not a number, not finite, <= 0 or > 1e6 ms are
//! counted per reason and not imported; a dtype without known element sizes is left
//! out and counted (`unknown_dtype:<dtype>`).

use super::common::{FileReport, Imported};
use super::kernel_tuner::{canonical_key, ParamValue};
use crate::data::table_io::text_cells;
use crate::data::{Origin, Run};
use crate::error::{Error, Position, Result};
use polars::prelude::DataFrame;
use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

/// Format name used by reports and the CLI.
pub const FORMAT: &str = "gemm-table";
/// Default `source` of imported rows.
pub const DEFAULT_SOURCE: &str = "aiconfigurator";

/// What a GEMM dtype means for the work model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DtypeFacts {
    /// The `precision` column: the arithmetic the GEMM runs in.
    pub precision: &'static str,
    /// Bytes per activation element (A, m x k) as the timed call reads it.
    pub a_bytes: f64,
    /// Bytes per weight element (B, k x n) including per-block scale factors.
    pub b_bytes: f64,
    /// Bytes per output element (C, m x n).
    pub c_bytes: f64,
}

/// Element sizes and arithmetic of the dtypes aiconfigurator's tables use (and their
/// plain names). The collectors feed bf16 activations to the torch-flow GEMMs and
/// quantize them inside the timed call (fp8, fp8_block, nvfp4), and fp16 activations
/// to the TensorRT-flow ones (A100: int8_wo, int4_wo, sq).
pub fn dtype_facts(dtype: &str) -> Option<DtypeFacts> {
    let f = |precision, a_bytes, b_bytes, c_bytes| {
        Some(DtypeFacts {
            precision,
            a_bytes,
            b_bytes,
            c_bytes,
        })
    };
    match dtype.trim().to_ascii_lowercase().as_str() {
        "bfloat16" | "bf16" => f("bf16", 2.0, 2.0, 2.0),
        "float16" | "fp16" | "half" => f("fp16", 2.0, 2.0, 2.0),
        "float32" | "fp32" => f("fp32", 4.0, 4.0, 4.0),
        "fp8" => f("fp8", 2.0, 1.0, 2.0),
        // One fp32 scale per 128 x 128 block of weights.
        "fp8_block" => f("fp8", 2.0, 1.0 + 4.0 / (128.0 * 128.0), 2.0),
        // 4-bit values plus one 1-byte (fp8) scale per 16 values.
        "nvfp4" => f("fp4", 2.0, 0.5 + 1.0 / 16.0, 2.0),
        "int8_wo" => f("fp16", 2.0, 1.0, 2.0),
        "int4_wo" => f("fp16", 2.0, 0.5, 2.0),
        // SmoothQuant W8A8: int8 activations and weights, fp16 output.
        "sq" | "int8" => f("int8", 1.0, 1.0, 2.0),
        _ => None,
    }
}

/// 2mnk: one multiply and one add per (i, j, l) term.
pub fn gemm_flops(m: f64, n: f64, k: f64) -> f64 {
    2.0 * m * n * k
}

/// Lower-bound DRAM bytes: A, B and C each moved once at their element sizes.
pub fn gemm_dram_bytes(m: f64, n: f64, k: f64, d: &DtypeFacts) -> f64 {
    m * k * d.a_bytes + k * n * d.b_bytes + m * n * d.c_bytes
}

fn has(df: &DataFrame, c: &str) -> bool {
    df.column(c).is_ok()
}

/// Does this frame have a GEMM table's columns?
pub fn is_gemm_table(df: &DataFrame) -> bool {
    ["device", "m", "n", "k"].iter().all(|c| has(df, c))
        && (has(df, "gemm_dtype") || has(df, "dtype"))
        && (has(df, "latency") || has(df, "latency_ms"))
}

/// Whether a frame has a GEMM table's device and shape columns (whether or not it
/// has the rest: [`is_gemm_table`]).
pub fn has_gemm_shape(df: &DataFrame) -> bool {
    ["device", "m", "n", "k"].iter().all(|c| has(df, c))
}

/// Import one GEMM table (Parquet or CSV).
pub fn import(path: &Path, source: &str) -> Result<Imported> {
    let (df, is_text) = super::common::read_frame_and_kind(path)?;
    import_frame(&df, &path.display().to_string(), source, is_text)
}

/// Import a GEMM table already read into a frame; `file` names it in messages, by
/// line when it `is_text` (CSV: data row r is line r + 1), else by row (Parquet).
pub fn import_frame(df: &DataFrame, file: &str, source: &str, is_text: bool) -> Result<Imported> {
    let at = |row: usize| Position::of_row(row, is_text);
    if !is_gemm_table(df) {
        let cols = super::common::column_list(df, usize::MAX);
        return Err(Error::file(
            file,
            format!(
                "not a GEMM table: needs columns device, gemm_dtype or dtype, m, n, k, latency (found {})",
                cols
            ),
        ));
    }
    let n_rows = df.height();
    let col = |name: &str| text_cells(df, name).unwrap_or_else(|| vec![None; n_rows]);
    let dtype_col = if has(df, "gemm_dtype") {
        "gemm_dtype"
    } else {
        "dtype"
    };
    let latency_col = if has(df, "latency") {
        "latency"
    } else {
        "latency_ms"
    };
    let device = col("device");
    let dtype = col(dtype_col);
    let dims = [col("m"), col("n"), col("k")];
    let latency = col(latency_col);
    let pass: Vec<(&str, Vec<Option<String>>)> = [
        ("framework", "framework"),
        ("version", "library_version"),
        ("kernel_source", "kernel_source"),
    ]
    .iter()
    .filter(|(src, _)| has(df, src))
    .map(|(src, dst)| (*dst, col(src)))
    .collect();

    let file_arc: Arc<str> = Arc::from(file);
    let mut report = FileReport {
        file: file.to_string(),
        format: FORMAT.to_string(),
        ..FileReport::default()
    };
    let mut runs = Vec::new();
    let mut kept_rows = Vec::new();
    let mut seen: HashSet<(String, String, String)> = HashSet::new();
    let mut names = crate::data::SharedNames::default();
    for i in 0..n_rows {
        let row = i + 1;
        let text = |v: &Option<String>, name: &str| -> Result<String> {
            v.clone()
                .ok_or_else(|| Error::parse(file, at(row), Some(name), "missing value"))
        };
        let gpu = text(&device[i], "device")?;
        let dt = text(&dtype[i], dtype_col)?;
        let mut mnk = [0.0; 3];
        for (slot, (name, cells)) in mnk.iter_mut().zip(["m", "n", "k"].iter().zip(&dims)) {
            let cell = text(&cells[i], name)?;
            *slot = match cell.parse::<f64>() {
                Ok(v) if v >= 1.0 && v.fract() == 0.0 && v < 9.0e15 => v,
                _ => {
                    return Err(Error::parse(
                        file,
                        at(row),
                        Some(*name),
                        format!("expected a positive whole number, found '{cell}'"),
                    ))
                }
            };
        }
        let time_ms = match super::common::latency_ms(latency[i].as_deref()) {
            Ok(t) => t,
            Err(reason) => {
                *report.failed.entry(reason.to_string()).or_default() += 1;
                continue;
            }
        };
        let Some(facts) = dtype_facts(&dt) else {
            *report
                .left_out
                .entry(format!("unknown_dtype:{dt}"))
                .or_default() += 1;
            continue;
        };
        let [m, n, k] = mnk;
        let config = canonical_key(&[
            ("m".to_string(), ParamValue::Number(m)),
            ("n".to_string(), ParamValue::Number(n)),
            ("k".to_string(), ParamValue::Number(k)),
        ]);
        let kernel = format!("gemm_{dt}");
        if !seen.insert((gpu.clone(), kernel.clone(), config.clone())) {
            *report
                .left_out
                .entry("duplicate_config".into())
                .or_default() += 1;
            continue;
        }
        runs.push(Run {
            gpu: names.get(&gpu),
            kernel: names.get(&kernel),
            config: names.get(&config),
            time_ms,
            flops: gemm_flops(m, n, k),
            dram_bytes: gemm_dram_bytes(m, n, k, &facts),
            working_set_bytes: Some(gemm_dram_bytes(m, n, k, &facts)),
            precision: Some(names.get(facts.precision)),
            suite: Some(names.get("library-gemm")),
            category: Some(names.get("matmul_library")),
            source: Some(names.get(source)),
            origin: Origin {
                file: file_arc.clone(),
                row,
                line: is_text.then_some(row + 1),
            },
            ..Run::default()
        });
        kept_rows.push(i);
    }

    const LIBRARY: &str =
        "a library GEMM: the table does not record the kernel the library launched";
    super::common::one_table_import(
        runs,
        pass,
        &kept_rows,
        file,
        "device",
        report,
        &[
            ("grid_blocks", LIBRARY),
            ("block_threads", LIBRARY),
            ("smem_per_block", LIBRARY),
            ("regs_per_thread", LIBRARY),
            ("time_std_ms", "the table records one latency per shape"),
        ],
    )
}

/// The GEMM latency table format (`--from gemm-table`).
pub struct GemmTable;

impl super::common::Importer for GemmTable {
    fn name(&self) -> &'static str {
        FORMAT
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["gemm_table", "gemm"]
    }
    fn describe(&self) -> &'static str {
        "GEMM latency table: columns device, gemm_dtype or dtype, m, n, k, latency"
    }
    /// A table with a GEMM table's device and shape columns and no `time_ms` (a
    /// canonical table that carries m, n, k stays canonical; one lacking a latency
    /// column is this importer's to name).
    fn detect(&self, probe: &super::common::Probe) -> bool {
        probe.has_columns(&["device", "m", "n", "k"]) && !probe.has_columns(&["time_ms"])
    }
    fn takes_file_name(&self, name: &str) -> bool {
        name.ends_with(".csv") || name.ends_with(".parquet")
    }
    fn read(&self, path: &Path, opts: &super::common::ImportOptions) -> Result<Imported> {
        import(path, opts.source.as_deref().unwrap_or(DEFAULT_SOURCE))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use polars::prelude::*;

    #[test]
    fn bytes_model_per_dtype() {
        let bf16 = dtype_facts("bfloat16").unwrap();
        // 2 x (4 + 8 + 2) for m = 1, n = 2, k = 4.
        assert_eq!(gemm_dram_bytes(1.0, 2.0, 4.0, &bf16), 28.0);
        let fp4 = dtype_facts("nvfp4").unwrap();
        assert_eq!(fp4.precision, "fp4");
        // Weights: 0.5 + 1/16 bytes per value.
        assert_eq!(
            gemm_dram_bytes(1.0, 16.0, 16.0, &fp4),
            32.0 + 256.0 * 0.5625 + 32.0
        );
        assert_eq!(dtype_facts("int4_wo").unwrap().precision, "fp16");
        assert_eq!(dtype_facts(" SQ ").unwrap().a_bytes, 1.0);
        assert!(dtype_facts("fp6").is_none());
        assert_eq!(gemm_flops(2.0, 3.0, 4.0), 48.0);
    }

    /// SYNTHETIC table (made-up values) exercising failure counting and errors.
    #[test]
    fn rows_are_counted_left_out_or_rejected() {
        let df = df! {
            "device" => ["G", "G", "G", "G", "G"],
            "gemm_dtype" => ["bfloat16", "fp6", "bfloat16", "bfloat16", "bfloat16"],
            "m" => ["1", "1", "2", "3", "1"],
            "n" => ["8", "8", "8", "8", "8"],
            "k" => ["4", "4", "4", "4", "4"],
            "latency" => ["0.01", "0.01", "-1", "x", "0.02"],
        }
        .unwrap();
        let imp = import_frame(&df, "t.csv", "test", true).unwrap();
        let r = &imp.report.files[0];
        assert_eq!(r.rows, 1);
        assert_eq!(r.left_out.get("unknown_dtype:fp6"), Some(&1));
        assert_eq!(r.left_out.get("duplicate_config"), Some(&1));
        assert_eq!(r.failed.get("absurd_time"), Some(&1));
        assert_eq!(r.failed.get("non_number_time"), Some(&1));
        assert_eq!(imp.table.runs[0].config, "k=4,m=1,n=8");
        assert_eq!(imp.table.runs[0].kernel, "gemm_bfloat16");

        let bad = df! {
            "device" => ["G"], "dtype" => ["bf16"], "m" => ["1.5"], "n" => ["8"], "k" => ["4"], "latency" => ["1"],
        }
        .unwrap();
        let e = import_frame(&bad, "t.csv", "test", true)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "t.csv:2: column 'm': expected a positive whole number, found '1.5'"
        );
        // a Parquet table has rows, not lines
        let e = import_frame(&bad, "t.parquet", "test", false)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "t.parquet: row 1: column 'm': expected a positive whole number, found '1.5'"
        );
        // a CSV row's run knows its line (an unknown GPU is reported there)
        assert_eq!(imp.table.runs[0].origin.line, Some(2));
        let parquet = import_frame(&df, "t.parquet", "test", false).unwrap();
        assert_eq!(parquet.table.runs[0].origin.line, None);
    }
}
