//! Least-squares gradient boosting: `forust-ml` (histogram trees), nothing hand-written.
//! Single-threaded for bit-identical results. The fitted booster is forust-ml's own
//! serde type, so it saves and loads as it is.

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
        let data = column_major(x);
        let yv = y.to_vec();
        let booster = guarded(name, "fit", || {
            let matrix = forust_ml::Matrix::new(&data, x.nrows(), x.ncols());
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
            booster,
        })
    }
}

/// A fitted [`GbmParams`] model.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct FittedGbm {
    n_features: usize,
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

    /// See [`super::FittedRegressor::check`]: a finite base score within
    /// [`super::MAX_LEAF_LOG`], every tree walkable ([`super::check_tree`]; a split
    /// goes on to its left, right and missing-value nodes).
    pub(super) fn check(&self) -> std::result::Result<(), String> {
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
            super::check_tree(t, nodes, self.n_features)?;
        }
        Ok(())
    }

    pub(super) fn predict_unchecked(&self, x: &Array2<f64>) -> Result<Array1<f64>> {
        let data = column_major(x);
        let pred = guarded(RegressorKind::Gbm.name(), "predict", || {
            let matrix = forust_ml::Matrix::new(&data, x.nrows(), x.ncols());
            Ok::<_, std::convert::Infallible>(self.booster.predict(&matrix, false))
        })?;
        Ok(Array1::from(pred))
    }
}

/// Column-major copy, the layout `forust_ml::Matrix` reads.
fn column_major(x: &Array2<f64>) -> Vec<f64> {
    x.t().iter().copied().collect()
}
