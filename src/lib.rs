//! gpucast: predict how fast a CUDA kernel runs on a GPU you do not have, from
//! measurements on GPUs you do have.
//!
//! The library reads like the pipeline: [`data`] (runs tables, import, validation) ->
//! [`catalog`] (GPU facts) -> [`features`] (roofline, occupancy, efficiency) ->
//! [`models`] (analytical, learned, hybrid; parameters that [`models::Fit`] into
//! fitted models that [`models::Predict`]) -> [`evaluation`] (protocols, metrics) ->
//! [`report`] (tables, plots). [`predict`] and [`experiments`] put the stages together
//! for the `gpucast` binary, a thin CLI over this library; [`mod@bench`] times them.
//!
//! Load runs, fit the hybrid on them and predict every kernel on a GPU none of them
//! was measured on:
//!
//! ```
//! use gpucast::catalog::Catalog;
//! use gpucast::features::Calibration;
//! use gpucast::models::{Context, Fit, ModelSpec};
//! use gpucast::predict::predict_table;
//!
//! # fn main() -> gpucast::Result<()> {
//! # let dir = tempfile::tempdir().unwrap();
//! # let runs_csv = dir.path().join("runs.csv");
//! // SYNTHETIC runs of one kernel on two GPUs (a doc example, not measurements).
//! std::fs::write(&runs_csv, "gpu,kernel,config,time_ms,flops,dram_bytes\n\
//!     NVIDIA TITAN V,saxpy,N=16777216,0.25,33554432,201326592\n\
//!     NVIDIA GeForce RTX 2080 Ti,saxpy,N=16777216,0.36,33554432,201326592\n")?;
//! let catalog = Catalog::builtin();
//! let (runs, _report) = gpucast::data::load_validated(&[runs_csv], &catalog)?;
//! let ctx = Context::new(&catalog, &Calibration::Spec, None);
//! let train: Vec<&gpucast::data::Run> = runs.runs.iter().collect();
//! let hybrid = ModelSpec::parse("hybrid", 42)?.fit(&train, &ctx)?;
//! let target = catalog.resolve_or_err("H100 SXM5 80GB")?.name.clone();
//! let predictions = predict_table(&runs, hybrid.as_ref(), &target, None, &ctx)?;
//! let p = predictions.predictions[0].expect("a source measured this work");
//! assert!(p.lo_ms <= p.pred_ms && p.pred_ms <= p.hi_ms);
//! # Ok(())
//! # }
//! ```

pub mod bench;
pub mod catalog;
pub mod data;
pub mod error;
pub mod evaluation;
pub mod experiments;
pub mod features;
pub mod files;
pub mod models;
pub mod occupancy;
pub mod parallel;
pub mod pipeline;
pub mod predict;
pub mod rank;
pub mod report;
pub mod trace;

pub use error::{Error, Result};
