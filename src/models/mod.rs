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

/// Validated hyperparameters of a model (linfa's "params"): fitting returns a fitted
/// model, which alone predicts.
pub trait Fit: Send + Sync {
    fn name(&self) -> String;
    /// Learn from training runs (in LOGO never a row of the target GPU).
    fn fit(&self, train: &[Run], ctx: &Context) -> Result<Box<dyn Predict>>;
}

/// A fitted model.
pub trait Predict: Send + Sync {
    fn name(&self) -> String;
    /// One line on what fitting decided that a reader of the results should know
    /// (e.g. the hybrid's correction share); None when there is nothing to say.
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

/// Names accepted by `--model` (and `models = [...]` in experiment files), with what
/// each is. `hybrid-REGRESSOR` and `hybrid@SHARE` variants are parsed from these.
pub const MODEL_NAMES: &[(&str, &str)] = &[
    (
        "analytical",
        "our analytical projection (roofline + occupancy ratios)",
    ),
    ("analytical-study", "the reference study's Algorithm 1"),
    (
        "hybrid",
        "analytical x exp(learned residual), 90 % interval",
    ),
    ("linear", "learned baseline: least squares on log time"),
    ("ridge", "learned baseline: ridge regression"),
    ("lasso", "learned baseline: lasso regression"),
    ("tree", "learned baseline: regression tree"),
    ("forest", "learned baseline: random forest"),
    ("svr", "learned baseline: support vector regression"),
    ("knn", "learned baseline: k nearest neighbours"),
    ("gbm", "learned baseline: gradient-boosted trees"),
];

/// A model chosen by name: the one registry of model names. Parsing validates every
/// hyperparameter the name carries (`hybrid@1.5` is an error, not a clamp).
#[derive(Debug, Clone, PartialEq)]
pub enum ModelSpec {
    Analytical,
    AnalyticalStudy,
    Learned(learned::LearnedParams),
    Hybrid(hybrid::HybridParams),
}

impl ModelSpec {
    /// Parse `analytical`, `analytical-study`, a learned baseline (`forest`, ...) or
    /// `hybrid[-REGRESSOR][@SHARE]`; `seed` makes learned models deterministic.
    pub fn parse(name: &str, seed: u64) -> Result<ModelSpec> {
        use regressors::RegressorKind;
        let name = name.trim();
        match name {
            "analytical" => Ok(ModelSpec::Analytical),
            "analytical-study" => Ok(ModelSpec::AnalyticalStudy),
            h if h == "hybrid" || h.starts_with("hybrid-") || h.starts_with("hybrid@") => {
                Ok(ModelSpec::Hybrid(hybrid::HybridParams::parse(h, seed)?))
            }
            other => match RegressorKind::parse(other) {
                Some(kind) => Ok(ModelSpec::Learned(learned::LearnedParams { kind, seed })),
                None => Err(Error::usage(format!(
                    "unknown model '{other}' (known: {}; hybrid-REGRESSOR and hybrid@SHARE vary the hybrid)",
                    MODEL_NAMES
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", ")
                ))),
            },
        }
    }

    /// Whether this is the study's algorithm (which uses the study's own figures).
    pub fn is_study(&self) -> bool {
        matches!(self, ModelSpec::AnalyticalStudy)
    }

    fn params(&self) -> &dyn Fit {
        match self {
            ModelSpec::Analytical => &analytical::Analytical,
            ModelSpec::AnalyticalStudy => &analytical::AnalyticalStudy,
            ModelSpec::Learned(p) => p,
            ModelSpec::Hybrid(p) => p,
        }
    }
}

impl Fit for ModelSpec {
    fn name(&self) -> String {
        self.params().name()
    }
    fn fit(&self, train: &[Run], ctx: &Context) -> Result<Box<dyn Predict>> {
        self.params().fit(train, ctx)
    }
}
