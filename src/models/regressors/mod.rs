//! Tabular regressors (linear, ridge, lasso, tree, forest, SVR, kNN, gradient boosting),
//! in the shape linfa uses: a params value per algorithm that checks itself, whose
//! `fit(&self, x, y)` returns a fitted model; only fitted models predict, and every fitted
//! model serializes (one [`FittedRegressor`] enum), so a saved model file can hold it.
//!
//! | kind     | params           | backend                                                        |
//! |----------|------------------|----------------------------------------------------------------|
//! | `linear` | [`LinearParams`] | `linfa-linear` OLS on z-scored features; rank-deficient or      |
//! |          |                  | under-determined systems fall back to a vanishing-ridge solve  |
//! | `ridge`  | [`RidgeParams`]  | closed form here (Cholesky), alpha 1.0, z-scored features      |
//! | `lasso`  | [`LassoParams`]  | `linfa-elasticnet` (l1 ratio 1), alpha 0.01, z-scored features |
//! | `tree`   | [`TreeParams`]   | `smartcore` `DecisionTreeRegressor` (unbounded depth, leaf 1)  |
//! | `forest` | [`ForestParams`] | hand-written histogram random forest, 100 trees (see forest.rs)|
//! | `svr`    | [`SvrParams`]    | `linfa-svm` epsilon-SVR, RBF, C 10, eps 0.1, gamma 1/p         |
//! | `knn`    | [`KnnParams`]    | `linfa-nn` exact k-d tree, k = 5, inverse-distance weights     |
//! | `gbm`    | [`GbmParams`]    | `forust-ml`, squared loss, 200 rounds, depth 3, lr 0.05        |
//!
//! Each file's module doc gives the measured reason (benches/regressors.rs) for whatever in
//! it is still written here rather than taken from a library.
//!
//! Every fit validates its input (non-empty, matching shapes, all finite), turns a panic
//! inside a library into an `Err`, and no fitted model returns a non-finite prediction.

mod forest;
mod gbm;
mod knn;
mod linear;
mod svr;
mod tree;

pub use forest::{FittedForest, ForestParams};
pub use gbm::{FittedGbm, GbmParams};
pub use knn::{FittedKnn, KnnParams, NeighbourSearch};
pub use linear::{LassoParams, LinearModel, LinearParams, RidgeParams};
pub use svr::{FittedSvr, SvrParams};
pub use tree::{FittedTree, TreeParams};

use crate::error::{Error, Result};
use ndarray::{Array1, Array2, Axis};
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The regressors this module provides, by name. The serde names are stable: saved model
/// files name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RegressorKind {
    Linear,
    Ridge,
    Lasso,
    Tree,
    Forest,
    Svr,
    Knn,
    Gbm,
}

impl RegressorKind {
    pub const ALL: [RegressorKind; 8] = [
        RegressorKind::Linear,
        RegressorKind::Ridge,
        RegressorKind::Lasso,
        RegressorKind::Tree,
        RegressorKind::Forest,
        RegressorKind::Svr,
        RegressorKind::Knn,
        RegressorKind::Gbm,
    ];

    /// The canonical (command-line / config) name.
    pub fn name(self) -> &'static str {
        match self {
            RegressorKind::Linear => "linear",
            RegressorKind::Ridge => "ridge",
            RegressorKind::Lasso => "lasso",
            RegressorKind::Tree => "tree",
            RegressorKind::Forest => "forest",
            RegressorKind::Svr => "svr",
            RegressorKind::Knn => "knn",
            RegressorKind::Gbm => "gbm",
        }
    }

    /// Parses a canonical name or an alias; case-insensitive, `_` reads as `-`.
    pub fn parse(s: &str) -> Option<RegressorKind> {
        let s = s.trim().to_ascii_lowercase().replace('_', "-");
        let kind = match s.as_str() {
            "linear" => RegressorKind::Linear,
            "ridge" => RegressorKind::Ridge,
            "lasso" => RegressorKind::Lasso,
            "tree" | "decision-tree" => RegressorKind::Tree,
            "forest" | "random-forest" | "rf" => RegressorKind::Forest,
            "svr" => RegressorKind::Svr,
            "knn" | "k-nn" => RegressorKind::Knn,
            "gbm" | "gradient-boosting" | "gb" => RegressorKind::Gbm,
            _ => return None,
        };
        Some(kind)
    }

    /// Label for tables and reports.
    pub fn label(self) -> &'static str {
        match self {
            RegressorKind::Linear => "linear",
            RegressorKind::Ridge => "ridge",
            RegressorKind::Lasso => "lasso",
            RegressorKind::Tree => "decision tree",
            RegressorKind::Forest => "random forest",
            RegressorKind::Svr => "SVR (RBF)",
            RegressorKind::Knn => "kNN",
            RegressorKind::Gbm => "gradient boosting",
        }
    }
}

impl fmt::Display for RegressorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Hyperparameters of one regressor. `fit` checks them first, so a bad value (negative
/// alpha, 0 trees, k = 0, a learning rate outside (0, 1], ...) is an error, never clamped.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RegressorParams {
    Linear(LinearParams),
    Ridge(RidgeParams),
    Lasso(LassoParams),
    Tree(TreeParams),
    Forest(ForestParams),
    Svr(SvrParams),
    Knn(KnnParams),
    Gbm(GbmParams),
}

impl RegressorParams {
    /// The default hyperparameters of `kind`. `seed` drives every random choice (tree
    /// tie-breaks, forest bootstraps and feature sampling, boosting subsampling), so the
    /// same data and seed give bit-identical predictions.
    pub fn new(kind: RegressorKind, seed: u64) -> RegressorParams {
        match kind {
            RegressorKind::Linear => RegressorParams::Linear(LinearParams),
            RegressorKind::Ridge => RegressorParams::Ridge(RidgeParams::default()),
            RegressorKind::Lasso => RegressorParams::Lasso(LassoParams::default()),
            RegressorKind::Tree => RegressorParams::Tree(TreeParams::new(seed)),
            RegressorKind::Forest => RegressorParams::Forest(ForestParams::new(seed)),
            RegressorKind::Svr => RegressorParams::Svr(SvrParams::default()),
            RegressorKind::Knn => RegressorParams::Knn(KnnParams::default()),
            RegressorKind::Gbm => RegressorParams::Gbm(GbmParams::new(seed)),
        }
    }

    pub fn kind(&self) -> RegressorKind {
        match self {
            RegressorParams::Linear(_) => RegressorKind::Linear,
            RegressorParams::Ridge(_) => RegressorKind::Ridge,
            RegressorParams::Lasso(_) => RegressorKind::Lasso,
            RegressorParams::Tree(_) => RegressorKind::Tree,
            RegressorParams::Forest(_) => RegressorKind::Forest,
            RegressorParams::Svr(_) => RegressorKind::Svr,
            RegressorParams::Knn(_) => RegressorKind::Knn,
            RegressorParams::Gbm(_) => RegressorKind::Gbm,
        }
    }

    /// An error naming the regressor and the bad value, if any hyperparameter is invalid.
    pub fn check(&self) -> Result<()> {
        match self {
            RegressorParams::Linear(p) => p.check(),
            RegressorParams::Ridge(p) => p.check(),
            RegressorParams::Lasso(p) => p.check(),
            RegressorParams::Tree(p) => p.check(),
            RegressorParams::Forest(p) => p.check(),
            RegressorParams::Svr(p) => p.check(),
            RegressorParams::Knn(p) => p.check(),
            RegressorParams::Gbm(p) => p.check(),
        }
    }

    /// Checks the hyperparameters and the data, then fits (rows of `x` are samples).
    pub fn fit(&self, x: &Array2<f64>, y: &Array1<f64>) -> Result<FittedRegressor> {
        Ok(match self {
            RegressorParams::Linear(p) => FittedRegressor::Linear(p.fit(x, y)?),
            RegressorParams::Ridge(p) => FittedRegressor::Ridge(p.fit(x, y)?),
            RegressorParams::Lasso(p) => FittedRegressor::Lasso(p.fit(x, y)?),
            RegressorParams::Tree(p) => FittedRegressor::Tree(p.fit(x, y)?),
            RegressorParams::Forest(p) => FittedRegressor::Forest(p.fit(x, y)?),
            RegressorParams::Svr(p) => FittedRegressor::Svr(p.fit(x, y)?),
            RegressorParams::Knn(p) => FittedRegressor::Knn(p.fit(x, y)?),
            RegressorParams::Gbm(p) => FittedRegressor::Gbm(p.fit(x, y)?),
        })
    }
}

/// The default params of `kind` for `seed` (see [`RegressorParams::new`]).
pub fn make(kind: RegressorKind, seed: u64) -> RegressorParams {
    RegressorParams::new(kind, seed)
}

/// A fitted regressor of any kind. Serializes (externally tagged by the kind's name), and a
/// deserialized model predicts bit-identically (with serde_json's `float_roundtrip`, which
/// forust-ml turns on). Not `Clone`: neither forust-ml's booster nor smartcore's tree is.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FittedRegressor {
    Linear(LinearModel),
    Ridge(LinearModel),
    Lasso(LinearModel),
    Tree(FittedTree),
    Forest(FittedForest),
    Svr(FittedSvr),
    Knn(FittedKnn),
    Gbm(FittedGbm),
}

impl FittedRegressor {
    pub fn kind(&self) -> RegressorKind {
        match self {
            FittedRegressor::Linear(_) => RegressorKind::Linear,
            FittedRegressor::Ridge(_) => RegressorKind::Ridge,
            FittedRegressor::Lasso(_) => RegressorKind::Lasso,
            FittedRegressor::Tree(_) => RegressorKind::Tree,
            FittedRegressor::Forest(_) => RegressorKind::Forest,
            FittedRegressor::Svr(_) => RegressorKind::Svr,
            FittedRegressor::Knn(_) => RegressorKind::Knn,
            FittedRegressor::Gbm(_) => RegressorKind::Gbm,
        }
    }

    /// Number of features (columns) the model was fitted on and predicts from.
    pub fn n_features(&self) -> usize {
        match self {
            FittedRegressor::Linear(m) | FittedRegressor::Ridge(m) | FittedRegressor::Lasso(m) => {
                m.n_features()
            }
            FittedRegressor::Tree(m) => m.n_features(),
            FittedRegressor::Forest(m) => m.n_features(),
            FittedRegressor::Svr(m) => m.n_features(),
            FittedRegressor::Knn(m) => m.n_features(),
            FittedRegressor::Gbm(m) => m.n_features(),
        }
    }

    /// Whether a fitted model read from a file is whole: every array the size its
    /// feature count says, every number finite, scales positive, tree links pointing
    /// forward. A hand edit that breaks one is an error naming it (a coefficient
    /// vector of the wrong length panicked in prediction; a support-vector matrix of
    /// the wrong width silently predicted from the features it had).
    pub fn check(&self) -> std::result::Result<(), String> {
        let n = self.n_features();
        if n == 0 {
            return Err(format!("{}: fitted on no features", self.kind().name()));
        }
        let r = match self {
            FittedRegressor::Linear(m) | FittedRegressor::Ridge(m) | FittedRegressor::Lasso(m) => {
                m.check()
            }
            FittedRegressor::Tree(m) => m.check(),
            FittedRegressor::Gbm(m) => m.check(),
            FittedRegressor::Forest(m) => m.check(),
            FittedRegressor::Svr(m) => m.check(),
            FittedRegressor::Knn(m) => m.check(),
        };
        r.map_err(|e| format!("{}: {e}", self.kind().name()))
    }

    /// One prediction per row of `x`; an error for a wrong width or a non-finite value.
    pub fn predict(&self, x: &Array2<f64>) -> Result<Array1<f64>> {
        let kind = self.kind();
        check_predict_input(kind.name(), x, self.n_features())?;
        if x.nrows() == 0 {
            return Ok(Array1::zeros(0));
        }
        let pred = match self {
            FittedRegressor::Linear(m) | FittedRegressor::Ridge(m) | FittedRegressor::Lasso(m) => {
                m.predict_unchecked(x)
            }
            FittedRegressor::Tree(m) => m.predict_unchecked(x)?,
            FittedRegressor::Forest(m) => m.predict_unchecked(x),
            FittedRegressor::Svr(m) => m.predict_unchecked(x)?,
            FittedRegressor::Knn(m) => m.predict_unchecked(x)?,
            FittedRegressor::Gbm(m) => m.predict_unchecked(x)?,
        };
        finite_predictions(kind.name(), pred)
    }
}

// ---------------------------------------------------------------------------------------
// Validation and helpers shared by the algorithm files
// ---------------------------------------------------------------------------------------

/// `Err` naming the regressor and the hyperparameter, for `check()`.
fn bad_param(name: &str, what: impl fmt::Display) -> Error {
    Error::model(format!("{name}: invalid hyperparameter: {what}"))
}

fn check_fit_input(name: &str, x: &Array2<f64>, y: &Array1<f64>) -> Result<()> {
    if x.nrows() == 0 {
        return Err(Error::model(format!("{name}: cannot fit on 0 samples")));
    }
    if x.ncols() == 0 {
        return Err(Error::model(format!("{name}: cannot fit on 0 features")));
    }
    if y.len() != x.nrows() {
        return Err(Error::model(format!(
            "{name}: {} samples in x but {} targets in y",
            x.nrows(),
            y.len()
        )));
    }
    if let Some(((r, c), v)) = x.indexed_iter().find(|(_, v)| !v.is_finite()) {
        return Err(Error::model(format!(
            "{name}: feature matrix has non-finite value {v} at row {r}, column {c}"
        )));
    }
    if let Some((i, v)) = y.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(Error::model(format!(
            "{name}: target has non-finite value {v} at row {i}"
        )));
    }
    Ok(())
}

fn check_predict_input(name: &str, x: &Array2<f64>, n_features: usize) -> Result<()> {
    if x.ncols() != n_features {
        return Err(Error::model(format!(
            "{name}: fitted on {n_features} features but asked to predict with {}",
            x.ncols()
        )));
    }
    if let Some(((r, c), v)) = x.indexed_iter().find(|(_, v)| !v.is_finite()) {
        return Err(Error::model(format!(
            "{name}: feature matrix has non-finite value {v} at row {r}, column {c}"
        )));
    }
    Ok(())
}

fn finite_predictions(name: &str, pred: Array1<f64>) -> Result<Array1<f64>> {
    match pred.iter().position(|v| !v.is_finite()) {
        Some(i) => Err(Error::model(format!(
            "{name}: non-finite prediction {} for row {i}",
            pred[i]
        ))),
        None => Ok(pred),
    }
}

/// Runs a library call, turning both its error and any panic into an `Error`.
fn guarded<T, E: fmt::Display>(
    name: &str,
    what: &str,
    f: impl FnOnce() -> std::result::Result<T, E>,
) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(Error::model(format!("{name}: {what} failed: {e}"))),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(Error::model(format!("{name}: {what} panicked: {msg}")))
        }
    }
}

/// Z-score transform with the training mean and (population) standard deviation;
/// constant columns get std 1, so they become all zeros.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct Standardizer {
    mean: Array1<f64>,
    scale: Array1<f64>,
}

impl Standardizer {
    fn fit(x: &Array2<f64>) -> Standardizer {
        let n = x.nrows().max(1) as f64;
        let mean = x.sum_axis(Axis(0)) / n;
        let scale = Array1::from_iter(
            x.axis_iter(Axis(1))
                .zip(mean.iter())
                .map(|(col, &m)| scale_of(col.iter(), m)),
        );
        Standardizer { mean, scale }
    }

    fn transform(&self, x: &Array2<f64>) -> Array2<f64> {
        let mut z = x.to_owned();
        for mut row in z.axis_iter_mut(Axis(0)) {
            for ((v, m), s) in row.iter_mut().zip(self.mean.iter()).zip(self.scale.iter()) {
                *v = (*v - m) / s;
            }
        }
        z
    }

    fn n_features(&self) -> usize {
        self.mean.len()
    }

    /// As many finite means as finite, positive scales.
    fn check(&self) -> std::result::Result<(), String> {
        if self.scale.len() != self.mean.len() {
            return Err(format!(
                "scaler has {} means but {} scales",
                self.mean.len(),
                self.scale.len()
            ));
        }
        if !self.mean.iter().all(|m| m.is_finite())
            || !self.scale.iter().all(|s| s.is_finite() && *s > 0.0)
        {
            return Err("scaler means must be finite and scales finite and > 0".into());
        }
        Ok(())
    }
}

/// Largest magnitude a saved model's coefficients, intercepts and target scales may
/// have: every regressor here learns a logarithm (of a time, or of a measured /
/// projected ratio), so a fitted number near 10^6 is a hand edit. A coefficient of
/// 1e308 made every prediction infinite.
const MAX_FITTED_MAGNITUDE: f64 = 1e6;

/// Whether `v` is a number a fitted model may hold ([`MAX_FITTED_MAGNITUDE`]).
fn plausible(v: f64) -> bool {
    v.is_finite() && v.abs() <= MAX_FITTED_MAGNITUDE
}

/// Every value plausible ([`plausible`]).
fn all_plausible(values: &Array1<f64>) -> bool {
    values.iter().all(|v| plausible(*v))
}

/// Largest magnitude of a tree's leaf (and of a boosted model's base score): every
/// tree here predicts a logarithm (a log-ratio correction, or a log time), and e^20
/// (5e8) is beyond any ratio or time a run can have; a leaf of 1e300 is a hand edit.
pub(crate) const MAX_LEAF_LOG: f64 = 20.0;

/// One node of a saved tree, as [`check_tree`] sees it.
pub(crate) enum NodeView {
    Leaf(f64),
    /// A split: the feature, its threshold and the nodes it can go to next.
    Split {
        feature: usize,
        threshold: f64,
        next: Vec<usize>,
    },
    /// A node that is neither (e.g. one child missing).
    Broken(&'static str),
}

/// Whether tree `t` of a saved model can be walked: it has nodes, each split names a
/// feature the model has, a finite threshold and only nodes after it (as every tree
/// here is grown, so a walk always ends within the tree), and each leaf is a finite
/// value within [`MAX_LEAF_LOG`]. A child pointing back made prediction loop forever;
/// one past the end, or a feature past the row, panicked.
pub(crate) fn check_tree(
    t: usize,
    nodes: impl ExactSizeIterator<Item = NodeView>,
    n_features: usize,
) -> std::result::Result<(), String> {
    let n = nodes.len();
    if n == 0 {
        return Err(format!("tree {t} has no nodes"));
    }
    for (k, node) in nodes.enumerate() {
        match node {
            NodeView::Leaf(v) if !(v.is_finite() && v.abs() <= MAX_LEAF_LOG) => {
                return Err(format!(
                    "tree {t} node {k}: leaf value {} is outside +-{MAX_LEAF_LOG}",
                    shown(v)
                ))
            }
            NodeView::Leaf(_) => {}
            NodeView::Split {
                feature,
                threshold,
                next,
            } => {
                if feature >= n_features {
                    return Err(format!(
                        "tree {t} node {k}: splits on feature {feature}, but the model has {n_features} features"
                    ));
                }
                if !threshold.is_finite() {
                    return Err(format!(
                        "tree {t} node {k}: split threshold {threshold} is not a finite number"
                    ));
                }
                if let Some(c) = next.iter().find(|c| !(k + 1..n).contains(*c)) {
                    return Err(format!(
                        "tree {t} node {k}: child {c} is not a node after it (the tree has {n} nodes): a walk would loop or leave the tree"
                    ));
                }
            }
            NodeView::Broken(what) => return Err(format!("tree {t} node {k}: {what}")),
        }
    }
    Ok(())
}

/// A number as a message shows it: 1e300 rather than its 301 digits.
pub(crate) fn shown(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-4..1e15).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// Population standard deviation of `values` around `mean`, or 1 when they are constant
/// (up to rounding), so dividing by it is always safe.
fn scale_of<'a>(values: impl ExactSizeIterator<Item = &'a f64>, mean: f64) -> f64 {
    let n = values.len().max(1) as f64;
    let sd = (values.map(|v| (v - mean) * (v - mean)).sum::<f64>() / n).sqrt();
    if sd.is_finite() && sd > 1e-12 * (1.0 + mean.abs()) {
        sd
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests;
