//! The gpucast runs-table contract, shared by the gpucast library (which reads,
//! validates and models runs) and gpucast-bench (which writes them): one list of
//! columns, one configuration key, one run record, and the expression evaluator
//! for workload formulas. No dependencies, so the lean runner stays lean.

mod columns;
pub mod expr;
mod key;
mod name;
mod run;

pub use columns::{
    column, upper_bound, ColumnKind, ColumnSpec, Run, RunDetails, COLUMNS, OPTIONAL_NUMERIC,
    OPTIONAL_TEXT, REQUIRED, RUNNER, RUNNER_HEADER,
};
pub use key::{canonical_config, config_key, KeyError, ParamValue};
pub use name::Name;
pub use run::{Exclusion, Origin, Warning, VALIDATION_FLAGS};

/// The columns of a co-run table (`corun.csv`: one row per kernel of a set of
/// kernels run together on disjoint SM partitions), which gpucast-bench writes and
/// the co-run model reads.
pub const CORUN_COLUMNS: [&str; 11] = [
    "gpu",
    "kernel",
    "config",
    "sm_count",
    "corun_with",
    "reps",
    "time_alone_ms",
    "time_together_ms",
    "slowdown",
    "date",
    "commit",
];
