//! Models: small traits in the spirit of linfa (`fit`, then `predict`).
//!
//! A model is fitted on training runs (in LOGO never a row of the target GPU) and
//! predicts a query run (its `gpu` is the target; its time is unknown to the model)
//! from the [`Evidence`]: the runs it may look at — the training runs, plus, in the
//! new-kernel protocol, the query kernel's runs on other GPUs.

pub mod analytical;
pub mod hybrid;
pub mod learned;
pub mod regressors;

use crate::catalog::{Catalog, Gpu};
use crate::data::validate::is_excluded;
use crate::data::Run;
use crate::error::{Error, Result};
use crate::features::{Bound, Calibration, Figures};
use std::collections::HashMap;

/// What a model needs besides data: the GPU catalog and where figures come from.
pub struct Context<'a> {
    pub catalog: &'a Catalog,
    pub calibration: &'a Calibration,
    /// Per-architecture kernel resources (from `gpucast-bench inspect`), when supplied.
    pub resources: Option<&'a crate::features::KernelResources>,
}

impl Context<'_> {
    pub fn gpu(&self, name: &str) -> Result<&Gpu> {
        self.catalog.resolve_or_err(name)
    }
    pub fn figures(&self, gpu: &Gpu) -> Result<Figures> {
        self.calibration.figures(gpu)
    }
}

/// One prediction with its interval and the roof that limits it.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Prediction {
    pub pred_ms: f64,
    pub lo_ms: f64,
    pub hi_ms: f64,
    pub bound: Bound,
}

/// Runs a model may consult, indexed by work and by (gpu, kernel).
#[derive(Debug, Default)]
pub struct Evidence<'a> {
    by_work: HashMap<(&'a str, &'a str), Vec<&'a Run>>,
    by_kernel: HashMap<(&'a str, &'a str), Vec<&'a Run>>,
    fastest: HashMap<&'a str, f64>,
}

impl<'a> Evidence<'a> {
    /// Index `runs`, leaving out rows excluded by the validation rule.
    pub fn new(runs: impl IntoIterator<Item = &'a Run>) -> Self {
        let mut e = Evidence::default();
        for r in runs {
            if is_excluded(r) {
                continue;
            }
            e.by_work
                .entry((r.kernel.as_str(), r.config.as_str()))
                .or_default()
                .push(r);
            e.by_kernel
                .entry((r.gpu.as_str(), r.kernel.as_str()))
                .or_default()
                .push(r);
            let f = e.fastest.entry(r.gpu.as_str()).or_insert(f64::INFINITY);
            *f = f.min(r.time_ms);
        }
        e
    }
    /// The fastest run measured on `gpu`: an upper bound of its launch floor, used as
    /// that (source) GPU's floor. Never asked for the target.
    pub fn floor_ms(&self, gpu: &str) -> Option<f64> {
        self.fastest.get(gpu).copied()
    }
    /// The same work measured on GPUs other than `target`.
    pub fn same_work(&self, query: &Run, target: &str) -> Vec<&'a Run> {
        self.by_work
            .get(&(query.kernel.as_str(), query.config.as_str()))
            .map(|v| v.iter().copied().filter(|r| r.gpu != target).collect())
            .unwrap_or_default()
    }
    /// The other configuration of the same kernel on `gpu` closest in (log) work to
    /// `query`'s: the source of a size projection.
    pub fn nearest_size(&self, gpu: &str, query: &Run) -> Option<&'a Run> {
        let w = query.work().max(1.0).ln();
        let distance = |r: &Run| (r.work().max(1.0).ln() - w).abs();
        self.by_kernel
            .get(&(gpu, query.kernel.as_str()))?
            .iter()
            .copied()
            .filter(|r| r.config != query.config)
            .min_by(|a, b| distance(a).total_cmp(&distance(b)))
    }
}

/// A fitted-or-not predictor of kernel time.
pub trait Model: Send + Sync {
    fn name(&self) -> String;
    /// Learn from training runs (a no-op for purely analytical models).
    fn fit(&mut self, train: &[Run], ctx: &Context) -> Result<()>;
    /// One line on what fitting decided that a reader of the results should know
    /// (e.g. the hybrid's residual share); None when there is nothing to say.
    fn fit_summary(&self) -> Option<String> {
        None
    }
    /// Predict `query` on `query.gpu`; None when the model has nothing to go on
    /// (e.g. no source GPU measured that work).
    fn predict(
        &self,
        query: &Run,
        evidence: &Evidence,
        ctx: &Context,
    ) -> Result<Option<Prediction>>;
}

/// Names accepted by `--model`.
pub const MODEL_NAMES: &[&str] = &[
    "analytical",
    "analytical-study",
    "hybrid",
    "linear",
    "ridge",
    "lasso",
    "tree",
    "forest",
    "svr",
    "knn",
    "gbm",
];

/// Build a model by name (`seed` makes learned models deterministic).
pub fn by_name(name: &str, seed: u64) -> Result<Box<dyn Model>> {
    use regressors::RegressorKind;
    match name {
        "analytical" => Ok(Box::new(analytical::Analytical)),
        "analytical-study" => Ok(Box::new(analytical::AnalyticalStudy)),
        h if h == "hybrid" || h.starts_with("hybrid-") || h.starts_with("hybrid@") => {
            Ok(Box::new(hybrid_by_name(h, seed)?))
        }
        other => match RegressorKind::parse(other) {
            Some(kind) => Ok(Box::new(learned::Learned::new(kind, seed))),
            None => Err(Error::msg(format!(
                "unknown model '{other}' (known: {})",
                MODEL_NAMES.join(", ")
            ))),
        },
    }
}

/// `hybrid[-REGRESSOR][@SHARE]`: the residual regressor (default gbm) and, as a
/// diagnostic, a fixed share of the correction instead of the one chosen by
/// leave-one-GPU-out inside the training GPUs.
fn hybrid_by_name(name: &str, seed: u64) -> Result<hybrid::Hybrid> {
    use regressors::RegressorKind;
    let (base, share) = match name.split_once('@') {
        Some((b, s)) => (
            b,
            Some(s.parse::<f64>().map_err(|_| {
                Error::msg(format!(
                    "'{name}': the residual share after '@' must be a number in 0..1 (e.g. hybrid@0.5)"
                ))
            })?),
        ),
        None => (name, None),
    };
    let h = match base.strip_prefix("hybrid-") {
        None => hybrid::Hybrid::new(seed),
        Some(r) => match RegressorKind::parse(r) {
            Some(kind) => hybrid::Hybrid::with_regressor(kind, seed),
            None => {
                return Err(Error::msg(format!(
                    "unknown residual regressor in '{name}' (e.g. hybrid-forest)"
                )))
            }
        },
    };
    match share {
        Some(s) => h.with_fixed_share(s),
        None => Ok(h),
    }
}
