//! `gpucast predict --trace`: a PyTorch profiler trace's step on another GPU
//! ([`gpucast::trace::predict_trace`]), printed.

use super::PredictArgs;
use gpucast::catalog::Catalog;
use gpucast::error::{Input, Result};
use gpucast::pipeline::Target;
use gpucast::report::{Format, Table};
use gpucast::trace::StepPrediction;
use std::io::Write;
use std::path::PathBuf;

/// How many kernels the step's printout lists.
const TOP_KERNELS: usize = 10;

impl PredictArgs {
    /// The runs these arguments predict: the trace, or `--runs`.
    pub(super) fn runs_or_trace(&self) -> Vec<PathBuf> {
        match &self.trace {
            Some(t) => vec![t.clone()],
            None => self.runs.clone(),
        }
    }
    /// The model asked for; by default `analytical`, and for a trace `pretrained`
    /// (from one source GPU only a trained model has a calibrated interval).
    pub(super) fn model_name(&self) -> String {
        match (&self.model, &self.trace) {
            (Some(m), _) => m.clone(),
            (None, Some(_)) => gpucast::predict::PRETRAINED_NAME.to_string(),
            (None, None) => "analytical".to_string(),
        }
    }
}

/// `predict`: of a trace's step with `--trace`, else of the runs.
pub(super) fn predict(a: PredictArgs, catalog: &Catalog) -> Result<()> {
    let Some(trace) = a.trace.clone() else {
        return super::commands::predict(a, catalog);
    };
    if let Some(path) = &a.out {
        gpucast::files::check_output(path, &a.options().inputs())?;
    }
    let target = Target::resolve(catalog, Input::Target, &a.target)?;
    let step = gpucast::trace::predict_trace(&trace, &a.options(), &target, catalog)?;
    for note in &step.notes {
        eprintln!("note: {note}");
    }
    let format = match a
        .out
        .as_ref()
        .and_then(|p| p.extension())
        .and_then(|e| e.to_str())
    {
        Some("json") => Format::Json,
        Some("csv") => Format::Csv,
        _ => a.format.into(),
    };
    let text = match format {
        Format::Json => serde_json::to_string_pretty(&step)? + "\n",
        Format::Csv => kernels_table(&step).to_csv(),
        Format::Table => step_text(&step),
    };
    match &a.out {
        Some(path) => {
            gpucast::files::write_atomic(path, &text)?;
            eprintln!(
                "wrote the step of {} kernels on {} to {}",
                step.kernels.len(),
                step.target,
                path.display()
            );
            Ok(())
        }
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())?;
            out.flush()?;
            Ok(())
        }
    }
}

fn ms(v: f64) -> String {
    format!("{v:.4}")
}

/// Every kernel: operator, kernel, measured and predicted times.
fn kernels_table(step: &StepPrediction) -> Table {
    let mut t = Table::new(&[
        "operator",
        "kernel",
        "measured_ms",
        "pred_ms",
        "pred_lo_ms",
        "pred_hi_ms",
        "predicted",
    ]);
    for k in &step.kernels {
        t.push(vec![
            k.operator.clone(),
            k.kernel.clone(),
            ms(k.measured_ms),
            ms(k.predicted_ms),
            ms(k.lo_ms),
            ms(k.hi_ms),
            k.predicted.to_string(),
        ]);
    }
    t
}

/// The step's total and its parts, the per-operator sums and the kernels that
/// matter most.
fn step_text(step: &StepPrediction) -> String {
    let mut s = format!(
        "{} on {} (trace of {} on {}):\n\
         step: {} ms predicted ({} interval {}..{} ms); measured {} ms\n\
         \x20 = kernels {} ms predicted ({} kernels, {} kept at their measured time)\n\
         \x20 + idle time between kernels {} ms (as measured)\n\n",
        step.model,
        step.target,
        step.trace,
        step.source_gpu,
        ms(step.total_ms),
        step.interval,
        ms(step.lo_ms),
        ms(step.hi_ms),
        ms(step.measured_ms),
        ms(step.kernel_ms()),
        step.kernels.len(),
        step.unpredicted,
        ms(step.gaps_ms),
    );
    let mut ops = Table::new(&["operator", "kernels", "measured_ms", "pred_ms"]);
    for o in step.by_operator() {
        ops.push(vec![
            o.operator,
            o.kernels.to_string(),
            ms(o.measured_ms),
            ms(o.predicted_ms),
        ]);
    }
    s += "per operator:\n";
    s += &ops.to_text();
    let mut top = Table::new(&[
        "kernel",
        "operator",
        "measured_ms",
        "pred_ms",
        "interval_ms",
    ]);
    for k in step.top_kernels(TOP_KERNELS) {
        top.push(vec![
            k.kernel.clone(),
            k.operator.clone(),
            ms(k.measured_ms),
            ms(k.predicted_ms),
            format!("{}..{}", ms(k.lo_ms), ms(k.hi_ms)),
        ]);
    }
    s += &format!(
        "\nthe {} kernels that matter most:\n",
        TOP_KERNELS.min(step.kernels.len())
    );
    s += &top.to_text();
    s
}
