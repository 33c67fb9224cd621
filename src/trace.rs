//! A profiled step on another GPU: every kernel of a PyTorch profiler trace
//! ([`crate::data::torch_trace`]) predicted on the target, then the step as the sum
//! of its parts: the predicted kernel times plus the GPU's idle time between kernels
//! (host-side work, copies, synchronisation), kept as measured because no GPU model
//! predicts the host. Kernels the model has no prediction for, and kernels without a
//! work derivation, are kept at their measured time and counted.
//!
//! The interval of the step sums the kernels' interval bounds: exact when the
//! kernels' errors move together (one model, one pair of GPUs: mostly they do), wider
//! than needed when they are independent.

use crate::catalog::Catalog;
use crate::data::torch_trace::{self, TraceKernel};
use crate::error::{Error, Result};
use crate::models::Interval;
use crate::pipeline::{self, PickCheck, PredictOptions, Target};
use std::collections::HashMap;
use std::path::Path;

/// One kernel of the step, measured and predicted.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StepKernel {
    pub kernel: String,
    pub operator: String,
    pub measured_ms: f64,
    /// The prediction on the target; the measured time where there is none.
    pub predicted_ms: f64,
    pub lo_ms: f64,
    pub hi_ms: f64,
    /// Whether the model predicted it (false: kept at its measured time).
    pub predicted: bool,
}

/// An operator's kernels of the step, summed.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct OperatorSum {
    pub operator: String,
    pub kernels: usize,
    pub measured_ms: f64,
    pub predicted_ms: f64,
}

/// A trace's step predicted on a target GPU.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StepPrediction {
    pub trace: String,
    /// The GPU the trace was taken on (the catalog's name).
    pub source_gpu: String,
    pub target: String,
    pub model: String,
    /// In the order the kernels started.
    pub kernels: Vec<StepKernel>,
    /// The GPU's idle time between kernels over the step, kept as measured.
    pub gaps_ms: f64,
    /// The step as measured: the kernels' times plus the gaps.
    pub measured_ms: f64,
    /// The step predicted: [`StepPrediction::kernel_ms`] + `gaps_ms`.
    pub total_ms: f64,
    pub lo_ms: f64,
    pub hi_ms: f64,
    /// What `lo_ms..hi_ms` is: "90%" (calibrated), "spread" or "none".
    pub interval: String,
    /// Kernels without a prediction (kept at their measured time).
    pub unpredicted: usize,
    /// What the import and the model said on the way (for standard error).
    pub notes: Vec<String>,
}

impl StepPrediction {
    /// The kernels' predicted time, summed.
    pub fn kernel_ms(&self) -> f64 {
        self.kernels.iter().map(|k| k.predicted_ms).sum()
    }
    /// The kernels summed by launching operator, the largest predicted time first.
    pub fn by_operator(&self) -> Vec<OperatorSum> {
        let mut sums: Vec<OperatorSum> = Vec::new();
        let mut at: HashMap<&str, usize> = HashMap::new();
        for k in &self.kernels {
            let i = *at.entry(k.operator.as_str()).or_insert_with(|| {
                sums.push(OperatorSum {
                    operator: k.operator.clone(),
                    kernels: 0,
                    measured_ms: 0.0,
                    predicted_ms: 0.0,
                });
                sums.len() - 1
            });
            sums[i].kernels += 1;
            sums[i].measured_ms += k.measured_ms;
            sums[i].predicted_ms += k.predicted_ms;
        }
        sums.sort_by(|a, b| b.predicted_ms.total_cmp(&a.predicted_ms));
        sums
    }
    /// The `n` kernels that matter most: the largest predicted times.
    pub fn top_kernels(&self, n: usize) -> Vec<&StepKernel> {
        let mut v: Vec<&StepKernel> = self.kernels.iter().collect();
        v.sort_by(|a, b| b.predicted_ms.total_cmp(&a.predicted_ms));
        v.truncate(n);
        v
    }
}

/// The idle time of a GPU between kernels from the first kernel's start to the last
/// one's end: the span not covered by any kernel (kernels on several streams that
/// overlap cover their union once).
pub fn idle_between(kernels: &[TraceKernel]) -> f64 {
    let mut spans: Vec<(f64, f64)> = kernels
        .iter()
        .map(|k| (k.start_us, k.start_us + k.dur_us))
        .collect();
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut idle_us = 0.0;
    let mut end = f64::NEG_INFINITY;
    for (s, e) in spans {
        if end.is_finite() && s > end {
            idle_us += s - end;
        }
        end = end.max(e);
    }
    idle_us / 1e3
}

/// Predict the step a PyTorch profiler trace recorded (`trace`, gzip'd or not) on
/// `target` with the model and figures of `opts` (its `runs` and `source` are not
/// used: the trace is the runs). `opts.gpu` names the GPU the trace ran on where its
/// device name is not one of the catalog's.
pub fn predict_trace(
    trace: &Path,
    opts: &PredictOptions,
    target: &Target,
    catalog: &Catalog,
) -> Result<StepPrediction> {
    let opts = PredictOptions {
        runs: vec![trace.to_path_buf()],
        source: None,
        ..opts.clone()
    };
    let import = pipeline::import_options(opts.gpu.as_deref(), target.catalog(catalog))?;
    let read = torch_trace::read_trace(trace, &import)?;
    let devices: std::collections::BTreeSet<i64> = read.kernels.iter().map(|k| k.device).collect();
    if devices.len() > 1 {
        return Err(Error::parse_file(
            trace.display(),
            format!(
                "kernels on {} GPUs (devices {}): a step is predicted for one GPU's trace",
                devices.len(),
                devices
                    .iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    let predicted = pipeline::predictions(&opts, target, catalog, PickCheck::No, &|_| {})?;
    let preds = predicted.predictions;
    let mut notes = read.report.notes.clone();
    notes.extend(predicted.notes);
    let by_config: HashMap<&str, usize> = preds
        .rows
        .runs
        .iter()
        .enumerate()
        .map(|(i, r)| (r.config.as_str(), i))
        .collect();
    let mut kernels = Vec::with_capacity(read.runs.len());
    let mut levels: Vec<Interval> = Vec::new();
    let mut unpredicted = 0;
    for (run, k) in read.runs.iter().zip(&read.kernels) {
        let measured = run.time_ms;
        // (a kernel without a work derivation has nothing a model could scale: it
        // keeps its measured time, as the import said)
        let p = by_config
            .get(run.config.as_str())
            .filter(|_| k.work_from.is_some())
            .and_then(|&i| preds.predictions[i].as_ref());
        let (pred, lo, hi) = match p {
            Some(p) => {
                levels.push(p.interval);
                (p.pred_ms, p.lo_ms, p.hi_ms)
            }
            None => {
                unpredicted += 1;
                (measured, measured, measured)
            }
        };
        kernels.push(StepKernel {
            kernel: run.kernel.to_string(),
            operator: k.operator.clone(),
            measured_ms: measured,
            predicted_ms: pred,
            lo_ms: lo,
            hi_ms: hi,
            predicted: p.is_some(),
        });
    }
    if unpredicted > 0 {
        notes.push(format!(
            "{unpredicted} of {} kernels have no prediction (no work derivation, or validation excluded them): kept at their measured time",
            kernels.len()
        ));
    }
    let gaps_ms = idle_between(&read.kernels);
    let sum = |f: fn(&StepKernel) -> f64| kernels.iter().map(f).sum::<f64>();
    let interval = match levels.first() {
        None => "none".to_string(),
        Some(first) if levels.iter().all(|l| l == first) => first.label(),
        Some(_) => "mixed".to_string(),
    };
    let source_gpu = read
        .runs
        .first()
        .and_then(|r| target.catalog(catalog).resolve(&r.gpu))
        .map(|g| g.name.clone())
        .or_else(|| read.runs.first().map(|r| r.gpu.to_string()))
        .unwrap_or_default();
    Ok(StepPrediction {
        trace: trace.display().to_string(),
        source_gpu,
        target: preds.target.clone(),
        model: preds.model.clone(),
        measured_ms: sum(|k| k.measured_ms) + gaps_ms,
        total_ms: sum(|k| k.predicted_ms) + gaps_ms,
        lo_ms: sum(|k| k.lo_ms) + gaps_ms,
        hi_ms: sum(|k| k.hi_ms) + gaps_ms,
        kernels,
        gaps_ms,
        interval,
        unpredicted,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(start: f64, dur: f64) -> TraceKernel {
        TraceKernel {
            operator: "op".into(),
            start_us: start,
            dur_us: dur,
            device: 0,
            stream: 7,
            work_from: None,
        }
    }

    #[test]
    fn idle_time_is_the_span_no_kernel_covers() {
        // 0..10, gap 5, 15..20 overlapping 18..30, gap 10, 40..41
        let ks = [k(0.0, 10.0), k(15.0, 5.0), k(18.0, 12.0), k(40.0, 1.0)];
        assert_eq!(idle_between(&ks), 15.0 / 1e3);
        assert_eq!(idle_between(&[]), 0.0);
    }
}
