//! Least-squares gradient boosting: `forust-ml` (histogram trees), nothing hand-written.
//! Single-threaded for bit-identical results. The fitted booster is forust-ml's own
//! serde type, so it saves and loads as it is.
//!
//! The booster sees only the columns that vary in the training rows: a constant column
//! never splits, but forust-ml builds its histogram at every node all the same. The
//! hybrid's pairs carry one column per kernel category of the whole training set, and
//! a fold's rows leave a third of them constant (9 of 26 in `gpucast bench`'s LOGO
//! hybrid); the trees are the same without them, and that stage takes 0.8x the time
//! (docs/speed.md).

use super::{bad_param, check_fit_input, guarded, NodeView, RegressorKind};
use crate::error::Result;
use ndarray::{Array1, Array2};
use std::fmt;

/// Hyperparameters of [`FittedGbm`].
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GbmParams {
    /// Boosting rounds (trees), >= 1.
    pub rounds: usize,
    /// Depth of each tree, >= 1.
    pub max_depth: usize,
    /// Shrinkage of each tree, in (0, 1].
    pub learning_rate: f32,
    /// Share of rows sampled per round, in (0, 1].
    pub subsample: f32,
    /// Seeds the row sampling.
    pub seed: u64,
}

impl GbmParams {
    pub fn new(seed: u64) -> Self {
        GbmParams {
            rounds: 200,
            max_depth: 3,
            learning_rate: 0.05,
            subsample: 1.0,
            seed,
        }
    }

    pub fn check(&self) -> Result<()> {
        let name = RegressorKind::Gbm.name();
        if self.rounds == 0 {
            return Err(bad_param(name, "rounds must be >= 1, got 0"));
        }
        if self.max_depth == 0 {
            return Err(bad_param(name, "max_depth must be >= 1, got 0"));
        }
        let unit = |v: f32| v > 0.0 && v <= 1.0;
        if !unit(self.learning_rate) {
            return Err(bad_param(
                name,
                format!(
                    "learning_rate must be in (0, 1], got {}",
                    self.learning_rate
                ),
            ));
        }
        if !unit(self.subsample) {
            return Err(bad_param(
                name,
                format!("subsample must be in (0, 1], got {}", self.subsample),
            ));
        }
        Ok(())
    }

    pub fn fit(&self, x: &Array2<f64>, y: &Array1<f64>) -> Result<FittedGbm> {
        use forust_ml::objective::ObjectiveType;
        let name = RegressorKind::Gbm.name();
        self.check()?;
        check_fit_input(name, x, y)?;
        let columns = varying_columns(x);
        let data = column_major(x, &columns);
        let yv = y.to_vec();
        let booster = guarded(name, "fit", || {
            let matrix = forust_ml::Matrix::new(&data, x.nrows(), columns.len());
            let mut booster = forust_ml::GradientBooster::default()
                .set_objective_type(ObjectiveType::SquaredLoss)
                .set_iterations(self.rounds)
                .set_learning_rate(self.learning_rate)
                .set_max_depth(self.max_depth)
                .set_subsample(self.subsample)
                .set_seed(self.seed)
                .set_parallel(false)
                .set_initialize_base_score(true);
            booster.fit_unweighted(&matrix, &yv, None).map(|_| booster)
        })?;
        Ok(FittedGbm {
            n_features: x.ncols(),
            columns,
            booster,
        })
    }
}

/// A fitted [`GbmParams`] model.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct FittedGbm {
    n_features: usize,
    /// The input columns the booster was fitted on, ascending (those that vary in the
    /// training rows): its trees' feature `i` is input column `columns[i]`.
    columns: Vec<usize>,
    booster: forust_ml::GradientBooster,
}

impl fmt::Debug for FittedGbm {
    // forust-ml's booster is not Debug; its size is what matters in a log.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FittedGbm")
            .field("n_features", &self.n_features)
            .field("trees", &self.booster.trees.len())
            .finish()
    }
}

impl FittedGbm {
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// See [`super::FittedRegressor::check`]: a prediction iteration within its trees,
    /// a finite base score within
    /// [`super::MAX_LEAF_LOG`], every tree walkable ([`super::check_tree`]; a split
    /// goes on to its left, right and missing-value nodes).
    pub(super) fn check(&self) -> std::result::Result<(), String> {
        let ascending = self.columns.windows(2).all(|w| w[0] < w[1]);
        if self.columns.is_empty()
            || !ascending
            || self.columns.last().is_some_and(|&c| c >= self.n_features)
        {
            return Err(format!(
                "columns must be ascending input columns below {}",
                self.n_features
            ));
        }
        // forust-ml predicts with the first `prediction_iteration` trees (slicing its
        // tree list), so a count beyond the trees panics inside it.
        let trees = self.booster.trees.len();
        if trees == 0 {
            return Err("booster.trees is empty".into());
        }
        if let Some(p) = self
            .booster
            .prediction_iteration
            .filter(|&p| p == 0 || p > trees)
        {
            return Err(format!(
                "booster.prediction_iteration {p} must be 1 to the booster's {trees} trees"
            ));
        }
        if let Some(b) = self.booster.best_iteration.filter(|&b| b >= trees) {
            return Err(format!(
                "booster.best_iteration {b} must be below the booster's {trees} trees"
            ));
        }
        let base = self.booster.base_score;
        if !(base.is_finite() && base.abs() <= super::MAX_LEAF_LOG) {
            return Err(format!(
                "base_score {} is outside +-{}",
                super::shown(base),
                super::MAX_LEAF_LOG
            ));
        }
        for (t, tree) in self.booster.trees.iter().enumerate() {
            let nodes = tree.nodes.iter().map(|node| {
                if node.is_leaf {
                    NodeView::Leaf(node.weight_value as f64)
                } else {
                    NodeView::Split {
                        feature: node.split_feature,
                        threshold: node.split_value,
                        next: vec![node.left_child, node.right_child, node.missing_node],
                    }
                }
            });
            super::check_tree(t, nodes, self.columns.len())?;
        }
        Ok(())
    }

    pub(super) fn predict_unchecked(&self, x: &Array2<f64>) -> Result<Array1<f64>> {
        let data = column_major(x, &self.columns);
        let pred = guarded(RegressorKind::Gbm.name(), "predict", || {
            let matrix = forust_ml::Matrix::new(&data, x.nrows(), self.columns.len());
            Ok::<_, std::convert::Infallible>(self.booster.predict(&matrix, false))
        })?;
        Ok(Array1::from(pred))
    }
}

/// The columns of `x` that are not one value throughout; the first column when every
/// one is (the booster needs one to fit its base score on).
fn varying_columns(x: &Array2<f64>) -> Vec<usize> {
    let varying: Vec<usize> = x
        .columns()
        .into_iter()
        .enumerate()
        .filter(|(_, col)| col.iter().any(|v| v.to_bits() != col[0].to_bits()))
        .map(|(c, _)| c)
        .collect();
    if varying.is_empty() {
        vec![0]
    } else {
        varying
    }
}

/// Column-major copy of `columns` of `x`, the layout `forust_ml::Matrix` reads.
fn column_major(x: &Array2<f64>, columns: &[usize]) -> Vec<f64> {
    columns
        .iter()
        .flat_map(|&c| x.column(c).into_iter().copied())
        .collect()
}
