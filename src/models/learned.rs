//! Learned baselines (the study's ML setup): a regressor predicts log time from the
//! workload and hardware features of a run on its GPU. No source measurement is used.

use super::regressors::{make, FittedRegressor, RegressorKind};
use super::{Context, Evidence, Fit, Predict, Prediction};
use crate::data::{Query, Run};
use crate::error::{Error, Result};
use crate::features::{run_features, vectors};
use ndarray::{Array1, Array2};

/// Hyperparameters of a learned baseline: the regressor and its seed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LearnedParams {
    pub kind: RegressorKind,
    pub seed: u64,
}

/// A fitted learned baseline.
pub struct FittedLearned {
    kind: RegressorKind,
    regressor: FittedRegressor,
}

/// Workload + hardware feature rows for runs.
fn design(runs: &[&Run], ctx: &Context) -> Result<Array2<f64>> {
    let width = vectors::WORKLOAD_HARDWARE_NAMES.len();
    let mut x = Array2::zeros((runs.len(), width));
    for (i, r) in runs.iter().enumerate() {
        let gpu = ctx.gpu(&r.gpu)?;
        let f = run_features(r, gpu, &ctx.figures(gpu)?, ctx.catalog, ctx.resources);
        let v = vectors::workload_hardware(r, gpu, &f);
        x.row_mut(i).assign(&Array1::from(v));
    }
    Ok(x)
}

impl Fit for LearnedParams {
    fn name(&self) -> String {
        self.kind.name().into()
    }
    fn fit(&self, rows: &[&Run], ctx: &Context) -> Result<Box<dyn Predict>> {
        if rows.is_empty() {
            return Err(Error::model(format!(
                "{}: no training rows",
                self.kind.name()
            )));
        }
        let x = design(rows, ctx)?;
        let y = Array1::from_iter(rows.iter().map(|r| r.time_ms.ln()));
        let regressor = make(self.kind, self.seed).fit(&x, &y)?;
        Ok(Box::new(FittedLearned {
            kind: self.kind,
            regressor,
        }))
    }
}

impl Predict for FittedLearned {
    fn name(&self) -> String {
        self.kind.name().into()
    }
    fn predict(
        &self,
        query: &Query,
        _evidence: &Evidence,
        ctx: &Context,
    ) -> Result<Option<Prediction>> {
        let x = design(&[query], ctx)?;
        let log_t = self.regressor.predict(&x)?[0];
        let gpu = ctx.gpu(&query.gpu)?;
        let f = run_features(query, gpu, &ctx.figures(gpu)?, ctx.catalog, ctx.resources);
        let t = log_t.clamp(-30.0, 30.0).exp();
        Ok(Some(Prediction {
            pred_ms: t,
            lo_ms: t,
            hi_ms: t,
            interval: super::Interval::None,
            bound: f.bound,
        }))
    }
}
