//! Kernel Tuner caches of predicted times: `gpucast tune --write-cache`. The written
//! cache has the measured cache's `kernel_name`, `problem_size`, `tune_params_keys`,
//! `tune_params`, `objective` and entry keys, so that Kernel Tuner's simulation mode
//! (`tune_kernel(..., simulation_mode=True, cache=FILE)`) replays it as if it had
//! tuned on the target:
//! - `device_name` is the target's catalog name; `predicted_by` (gpucast and its
//!   version), `predicted_from` (the measured cache's device) and `prediction_model`
//!   say what it is, so that no reader takes it for measurements (the import refuses
//!   it: [`super::kernel_tuner::PREDICTED_BY`]).
//! - Each entry holds its parameters as the measured one writes them, `time` the
//!   predicted time (ms, as Kernel Tuner stores it), `time_lo` / `time_hi` its
//!   interval and `interval` what that interval is ("90%", "spread", "none").
//! - `objective` is "time" whatever the measured cache tuned for: the entries hold
//!   predicted times, and a cache that says "GFLOP/s" (or any other objective) would
//!   have Kernel Tuner rank configurations by a field no entry holds, or read a time
//!   as that objective. [`PredictedCache::objective_was`] says when it changed.
//!   Nothing measured on the source (its `times`, compile or benchmark times, GFLOP/s)
//!   is copied.
//! - A configuration that failed on the source keeps its marker
//!   (`CompilationFailedConfig`, ...): the prediction cannot say it runs on the
//!   target. One with no prediction is written `InvalidConfig` (what Kernel Tuner's
//!   strategies skip) with the reason in `no_prediction`.

use super::kernel_tuner::{read_entries, PREDICTED_BY};
use super::workload::Workloads;
use crate::error::{Error, Result};
use crate::models::Prediction;
use crate::predict::Predictions;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

/// The header fields copied from the measured cache, in the order written.
const HEADER: [&str; 5] = [
    "kernel_name",
    "problem_size",
    "tune_params_keys",
    "tune_params",
    "objective",
];

/// A written cache's text and what its entries hold.
#[derive(Debug, Clone)]
pub struct PredictedCache {
    pub text: String,
    /// Entries with a predicted time.
    pub predicted: usize,
    /// Entries that failed on the source (kept as they were marked).
    pub failed: usize,
    /// Entries without a prediction (written `InvalidConfig`), and the first reason.
    pub not_predicted: usize,
    pub first_reason: Option<String>,
    /// The measured cache's objective when it is not "time" (the written one is).
    pub objective_was: Option<String>,
}

/// The cache at `measured` with every configuration's time predicted on `target` by
/// `preds` (the predictions of that cache's runs, matched by configuration key).
pub fn predicted_cache(
    measured: &Path,
    workloads: &Workloads,
    target: &str,
    preds: &Predictions,
) -> Result<PredictedCache> {
    let cache = read_entries(measured, workloads)?;
    let by_config: HashMap<&str, (Option<&Prediction>, Option<&str>)> = preds
        .rows
        .runs
        .iter()
        .zip(&preds.predictions)
        .zip(&preds.reasons)
        .map(|((r, p), why)| (r.config.as_str(), (p.as_ref(), why.as_deref())))
        .collect();
    let field = |v: &Value| serde_json::to_string(v).map_err(Error::from);
    let mut text = String::from("{\n");
    text += &format!("\"device_name\": {},\n", field(&Value::from(target))?);
    let mut objective_was = None;
    for key in HEADER {
        let Some(v) = cache.doc.get(key) else {
            continue;
        };
        if key == "objective" && v.as_str() != Some("time") {
            objective_was = Some(match v.as_str() {
                Some(s) => s.to_string(),
                None => v.to_string(),
            });
            text += "\"objective\": \"time\",\n";
            continue;
        }
        text += &format!("\"{key}\": {},\n", field(v)?);
    }
    text += &format!(
        "\"{PREDICTED_BY}\": {},\n\"predicted_from\": {},\n\"prediction_model\": {},\n\"cache\": {{\n",
        field(&Value::from(format!("gpucast {}", env!("CARGO_PKG_VERSION"))))?,
        field(&Value::from(cache.device.as_str()))?,
        field(&Value::from(preds.model.as_str()))?,
    );
    let mut out = PredictedCache {
        text: String::new(),
        predicted: 0,
        failed: 0,
        not_predicted: 0,
        first_reason: None,
        objective_was,
    };
    let entries = cache.doc.get("cache").and_then(Value::as_object);
    for (i, (key, config)) in cache.entries.iter().enumerate() {
        let entry = entries
            .and_then(|c| c.get(key))
            .and_then(Value::as_object)
            .ok_or_else(|| {
                Error::file(
                    measured.display(),
                    format!("cache entry '{key}' is not an object"),
                )
            })?;
        let mut fields: Vec<(String, Value)> = cache
            .keys
            .iter()
            .filter_map(|k| entry.get(k).map(|v| (k.clone(), v.clone())))
            .collect();
        let time = entry.get("time");
        let measured_ok = time.and_then(Value::as_f64).is_some();
        match by_config.get(config.as_str()) {
            _ if !measured_ok => {
                out.failed += 1;
                fields.push(("time".into(), time.cloned().unwrap_or(Value::Null)));
            }
            Some((Some(p), _)) => {
                out.predicted += 1;
                fields.push(("time".into(), Value::from(p.pred_ms)));
                fields.push(("time_lo".into(), Value::from(p.lo_ms)));
                fields.push(("time_hi".into(), Value::from(p.hi_ms)));
                fields.push(("interval".into(), Value::from(p.interval.label())));
            }
            other => {
                let why = other
                    .and_then(|(_, why)| *why)
                    .unwrap_or("the measured row was not imported")
                    .to_string();
                out.not_predicted += 1;
                out.first_reason.get_or_insert_with(|| why.clone());
                fields.push(("time".into(), Value::from("InvalidConfig")));
                fields.push(("no_prediction".into(), Value::from(why)));
            }
        }
        let body = fields
            .iter()
            .map(|(k, v)| {
                Ok(format!(
                    "{}: {}",
                    field(&Value::from(k.as_str()))?,
                    field(v)?
                ))
            })
            .collect::<Result<Vec<_>>>()?
            .join(", ");
        let comma = if i + 1 < cache.entries.len() { "," } else { "" };
        text += &format!(
            "{}: {{{body}}}{comma}\n",
            field(&Value::from(key.as_str()))?
        );
    }
    text += "}\n}\n";
    out.text = text;
    Ok(out)
}
