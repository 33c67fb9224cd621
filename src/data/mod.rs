//! Runs tables: the canonical data every stage reads (data-formats §1).
//!
//! A [`RunsTable`] is a typed list of [`Run`]s plus the columns we do not know,
//! kept row-aligned in a polars `DataFrame` so they pass through untouched.

pub mod gemm_table;
pub mod import;
pub mod importers;
pub mod kernel_tuner;
pub mod ncu;
mod table_io;
pub mod validate;
pub mod workload;

use polars::prelude::DataFrame;
use std::sync::Arc;

pub use table_io::{
    load, load_files, read_file, runs_files_in, to_frame as table_frame, write, write_frame,
};
pub use validate::{validate, ValidationReport};

/// Load runs files (or directories of them) and validate them against the catalog:
/// errors stop here with one line; warnings flag rows.
pub fn load_validated(
    paths: &[std::path::PathBuf],
    catalog: &crate::catalog::Catalog,
) -> crate::error::Result<(RunsTable, ValidationReport)> {
    let mut table = load(paths)?;
    let report = validate(&mut table, catalog)?;
    Ok((table, report))
}

/// Required columns, in the contract's order.
pub const REQUIRED: [&str; 6] = ["gpu", "kernel", "config", "time_ms", "flops", "dram_bytes"];

/// Where a row came from, for one-line error messages (row is 1-based, header excluded).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Origin {
    pub file: Arc<str>,
    pub row: usize,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: row {}", self.file, self.row)
    }
}

/// Declares the optional columns once: the struct fields, the column-name lists and
/// name-based accessors all come from this list.
macro_rules! runs_columns {
    (numeric: [$($num:ident),* $(,)?], text: [$($txt:ident),* $(,)?] $(,)?) => {
        /// One kernel configuration measured on one GPU.
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct Run {
            /// GPU name; after validation, the catalog's canonical name.
            pub gpu: String,
            pub kernel: String,
            pub config: String,
            pub time_ms: f64,
            pub flops: f64,
            pub dram_bytes: f64,
            $(pub $num: Option<f64>,)*
            $(pub $txt: Option<String>,)*
            /// Validation warnings (the `flags` column), e.g. `flat_time`.
            pub flags: Vec<String>,
            pub origin: Origin,
        }

        /// Optional numeric columns of the contract (plus our own extensions).
        pub const OPTIONAL_NUMERIC: &[&str] = &[$(stringify!($num)),*];
        /// Optional text columns of the contract.
        pub const OPTIONAL_TEXT: &[&str] = &[$(stringify!($txt)),*];

        impl Run {
            pub fn numeric(&self, column: &str) -> Option<f64> {
                match column {
                    "time_ms" => Some(self.time_ms),
                    "flops" => Some(self.flops),
                    "dram_bytes" => Some(self.dram_bytes),
                    $(stringify!($num) => self.$num,)*
                    _ => None,
                }
            }
            pub(crate) fn numeric_mut(&mut self, column: &str) -> Option<&mut Option<f64>> {
                match column {
                    $(stringify!($num) => Some(&mut self.$num),)*
                    _ => None,
                }
            }
            pub fn text(&self, column: &str) -> Option<&str> {
                match column {
                    "gpu" => Some(&self.gpu),
                    "kernel" => Some(&self.kernel),
                    "config" => Some(&self.config),
                    $(stringify!($txt) => self.$txt.as_deref(),)*
                    _ => None,
                }
            }
            pub(crate) fn text_mut(&mut self, column: &str) -> Option<&mut Option<String>> {
                match column {
                    $(stringify!($txt) => Some(&mut self.$txt),)*
                    _ => None,
                }
            }
        }
    };
}

runs_columns! {
    numeric: [
        time_std_ms, trials, block_threads, grid_blocks, regs_per_thread, smem_per_block,
        blocks_per_sm, warps_per_sm, working_set_bytes, l2_bytes, l1_bytes, shared_bytes,
        inst_warp, inst_thread, flops_fma, flops_add, flops_mul, flops_special,
        // extensions written by gpucast-bench
        time_min_ms, time_median_ms, time_cv, dram_bytes_model, sm_count,
    ],
    text: [precision, suite, category, source],
}

impl Run {
    /// Floating-point precision of the run; fp32 when the column is absent.
    pub fn precision(&self) -> &str {
        self.precision.as_deref().unwrap_or("fp32")
    }
    /// Proxy for "how much work": the larger of FLOPs and DRAM bytes.
    pub fn work(&self) -> f64 {
        self.flops.max(self.dram_bytes)
    }
    /// Identity of the work, independent of the GPU.
    pub fn work_key(&self) -> (&str, &str) {
        (&self.kernel, &self.config)
    }
    pub fn has_flag(&self, prefix: &str) -> bool {
        self.flags.iter().any(|f| f.starts_with(prefix))
    }
}

/// The query a model sees: the run without its measurement (time NaN, no spread).
pub fn query_of(run: &Run) -> Run {
    Run {
        time_ms: f64::NAN,
        time_std_ms: None,
        time_min_ms: None,
        time_median_ms: None,
        time_cv: None,
        ..run.clone()
    }
}

/// A runs table: typed rows plus pass-through columns.
#[derive(Debug, Clone, Default)]
pub struct RunsTable {
    pub runs: Vec<Run>,
    /// Columns the contract does not name, row-aligned with `runs`.
    pub extra: DataFrame,
    /// Files the rows came from.
    pub files: Vec<String>,
    /// Rows skipped on load because a runner marked them failed (`status` != ok).
    pub skipped_error_rows: usize,
}

impl RunsTable {
    pub fn len(&self) -> usize {
        self.runs.len()
    }
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }
    /// GPU names in first-seen order.
    pub fn gpus(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in &self.runs {
            if !out.contains(&r.gpu) {
                out.push(r.gpu.clone());
            }
        }
        out
    }
    /// Keep the rows for which `keep` is true (pass-through columns follow).
    pub fn retain(&mut self, mut keep: impl FnMut(&Run) -> bool) {
        let mask: Vec<bool> = self.runs.iter().map(&mut keep).collect();
        if self.extra.width() > 0 {
            use polars::prelude::NewChunkedArray;
            let m = polars::prelude::BooleanChunked::from_slice("mask".into(), &mask);
            self.extra = self.extra.filter(&m).unwrap_or_default();
        }
        let mut it = mask.iter();
        self.runs.retain(|_| *it.next().unwrap_or(&false));
    }
}
