//! A single CART regression tree: `smartcore`'s `DecisionTreeRegressor`, nothing hand-written.

use super::{bad_param, check_fit_input, guarded, NodeView, RegressorKind};
use crate::error::Result;
use ndarray::{Array1, Array2};

type Dense = smartcore::linalg::basic::matrix::DenseMatrix<f64>;
type SmartTree =
    smartcore::tree::decision_tree_regressor::DecisionTreeRegressor<f64, f64, Dense, Vec<f64>>;

/// Hyperparameters of [`FittedTree`].
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TreeParams {
    /// Deepest level grown (`None`: until leaves are pure or at `min_samples_leaf`), >= 1.
    pub max_depth: Option<u16>,
    /// Fewest training samples in a leaf, >= 1.
    pub min_samples_leaf: usize,
    /// Seeds smartcore's feature order (ties between equally good splits).
    pub seed: u64,
}

impl TreeParams {
    pub fn new(seed: u64) -> Self {
        TreeParams {
            max_depth: None,
            min_samples_leaf: 1,
            seed,
        }
    }

    pub fn check(&self) -> Result<()> {
        let name = RegressorKind::Tree.name();
        if self.max_depth == Some(0) {
            return Err(bad_param(name, "max_depth must be >= 1, got 0"));
        }
        if self.min_samples_leaf == 0 {
            return Err(bad_param(name, "min_samples_leaf must be >= 1, got 0"));
        }
        Ok(())
    }

    pub fn fit(&self, x: &Array2<f64>, y: &Array1<f64>) -> Result<FittedTree> {
        use smartcore::tree::decision_tree_regressor::{
            DecisionTreeRegressor, DecisionTreeRegressorParameters,
        };
        let name = RegressorKind::Tree.name();
        self.check()?;
        check_fit_input(name, x, y)?;
        let xm = to_dense(name, x)?;
        let yv = y.to_vec();
        let params = DecisionTreeRegressorParameters {
            max_depth: self.max_depth,
            min_samples_leaf: self.min_samples_leaf,
            seed: Some(self.seed),
            ..Default::default()
        };
        let model = guarded(name, "fit", || DecisionTreeRegressor::fit(&xm, &yv, params))?;
        Ok(FittedTree {
            n_features: x.ncols(),
            model,
        })
    }
}

/// A fitted [`TreeParams`] model.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct FittedTree {
    n_features: usize,
    model: SmartTree,
}

impl FittedTree {
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// See [`super::FittedRegressor::check`]: smartcore's tree is there and walkable
    /// ([`super::check_tree`]). Its nodes are private, so they are read from its
    /// serialized form (`tree_regressor.nodes`: `output`, `split_feature`,
    /// `split_value`, `true_child`, `false_child`).
    pub(super) fn check(&self) -> std::result::Result<(), String> {
        let v = serde_json::to_value(&self.model).map_err(|e| format!("unreadable tree: {e}"))?;
        let Some(nodes) = v["tree_regressor"]["nodes"].as_array() else {
            return Err("no tree".into());
        };
        let views = nodes.iter().map(|node| {
            let child = |k: &str| &node[k];
            match (child("true_child"), child("false_child")) {
                (serde_json::Value::Null, serde_json::Value::Null) => {
                    NodeView::Leaf(node["output"].as_f64().unwrap_or(f64::NAN))
                }
                (a, b) => match (a.as_u64(), b.as_u64(), node["split_feature"].as_u64()) {
                    (Some(a), Some(b), Some(f)) => NodeView::Split {
                        feature: usize::try_from(f).unwrap_or(usize::MAX),
                        threshold: node["split_value"].as_f64().unwrap_or(f64::NAN),
                        next: vec![
                            usize::try_from(a).unwrap_or(usize::MAX),
                            usize::try_from(b).unwrap_or(usize::MAX),
                        ],
                    },
                    _ => NodeView::Broken(
                        "a split needs a feature and two children, a leaf neither child",
                    ),
                },
            }
        });
        super::check_tree(0, views, self.n_features)
    }

    pub(super) fn predict_unchecked(&self, x: &Array2<f64>) -> Result<Array1<f64>> {
        let name = RegressorKind::Tree.name();
        let xm = to_dense(name, x)?;
        let pred = guarded(name, "predict", || self.model.predict(&xm))?;
        Ok(Array1::from(pred))
    }
}

/// Row-major copy into smartcore's dense matrix.
fn to_dense(name: &str, x: &Array2<f64>) -> Result<Dense> {
    let values: Vec<f64> = x.iter().copied().collect();
    guarded(name, "building matrix", || {
        Dense::new(x.nrows(), x.ncols(), values, false)
    })
}
