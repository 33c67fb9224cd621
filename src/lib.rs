//! gpucast: predict how fast a CUDA kernel runs on a GPU you do not have, from
//! measurements on GPUs you do have.
//!
//! The library reads like the pipeline: [`data`] (runs tables, import, validation) ->
//! [`catalog`] (GPU facts) -> [`features`] (roofline, occupancy, efficiency) ->
//! [`models`] (analytical, learned, hybrid) -> [`evaluation`] (protocols, metrics) ->
//! [`report`] (tables, plots). The `gpucast` binary is a thin CLI over it.

pub mod catalog;
pub mod data;
pub mod error;
pub mod evaluation;
pub mod experiments;
pub mod features;
pub mod models;
pub mod occupancy;
pub mod output;
pub mod report;

pub use error::{Error, Result};
