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
