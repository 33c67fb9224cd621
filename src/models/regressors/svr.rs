//! Epsilon-SVR with an RBF kernel: `linfa-svm`, nothing hand-written. Features and target
//! are z-scored, so `eps` and `c` are in units of the target's standard deviation; gamma is
//! 1 / n_features.

use super::{bad_param, check_fit_input, guarded, scale_of, RegressorKind, Standardizer};
use crate::error::Result;
use ndarray::{Array1, Array2};

/// Hyperparameters of [`FittedSvr`].
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SvrParams {
    /// Box constraint (penalty on points outside the tube), > 0.
    pub c: f64,
    /// Half-width of the insensitive tube, in target standard deviations, > 0.
    pub eps: f64,
    /// SMO stopping tolerance, > 0. libsvm's default 1e-3; linfa-svm's own 1e-7 was ~10x
    /// slower on 2000 x 30.
    pub solver_tolerance: f64,
}

impl Default for SvrParams {
    fn default() -> Self {
        SvrParams {
            c: 10.0,
            eps: 0.1,
            solver_tolerance: 1e-3,
        }
    }
}

impl SvrParams {
    pub fn check(&self) -> Result<()> {
        let name = RegressorKind::Svr.name();
        if !(self.c.is_finite() && self.c > 0.0) {
            return Err(bad_param(name, format!("c must be > 0, got {}", self.c)));
        }
        // linfa-svm refuses a zero-width tube too.
        if !(self.eps.is_finite() && self.eps > 0.0) {
            return Err(bad_param(
                name,
                format!("eps must be > 0, got {}", self.eps),
            ));
        }
        let tol = self.solver_tolerance;
        if !(tol.is_finite() && tol > 0.0) {
            return Err(bad_param(
                name,
                format!("solver_tolerance must be > 0, got {tol}"),
            ));
        }
        Ok(())
    }

    pub fn fit(&self, x: &Array2<f64>, y: &Array1<f64>) -> Result<FittedSvr> {
        use linfa::traits::Fit;
        let name = RegressorKind::Svr.name();
        self.check()?;
        check_fit_input(name, x, y)?;
        let scaler = Standardizer::fit(x);
        let z = scaler.transform(x);
        let y_mean = y.mean().unwrap_or(0.0);
        let y_scale = scale_of(y.iter(), y_mean);
        let ys = y.mapv(|v| (v - y_mean) / y_scale);
        let dataset = linfa::Dataset::new(z, ys);
        // linfa's Gaussian kernel is exp(-|a-b|^2 / w): w = 1 / gamma = n_features.
        let width = x.ncols() as f64;
        let (c, eps, tol) = (self.c, self.eps, self.solver_tolerance);
        let model = guarded(name, "fit", || {
            linfa_svm::Svm::<f64, f64>::params()
                .c_svr(c, Some(eps))
                .gaussian_kernel(width)
                .eps(tol)
                .fit(&dataset)
        })?;
        Ok(FittedSvr {
            scaler,
            y_mean,
            y_scale,
            model,
        })
    }
}

/// A fitted [`SvrParams`] model.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct FittedSvr {
    scaler: Standardizer,
    y_mean: f64,
    y_scale: f64,
    model: linfa_svm::Svm<f64, f64>,
}

impl FittedSvr {
    pub fn n_features(&self) -> usize {
        self.scaler.n_features()
    }

    /// See [`super::FittedRegressor::check`]. linfa-svm keeps its support vectors
    /// private, so their shape is read from the model's serialized form: one row of
    /// `n_features` per weight that counts (linfa pairs them in order and ignores the
    /// rest of either list).
    pub(super) fn check(&self) -> std::result::Result<(), String> {
        self.scaler.check()?;
        if !(super::plausible(self.y_mean) && super::plausible(self.y_scale) && self.y_scale > 0.0)
        {
            return Err(format!(
                "y_mean and y_scale must be finite numbers within +-{:e}, y_scale > 0",
                super::MAX_FITTED_MAGNITUDE
            ));
        }
        if !(self.model.alpha.iter().all(|a| a.is_finite()) && self.model.rho.is_finite()) {
            return Err("alpha and rho must be finite".into());
        }
        let value = serde_json::to_value(&self.model).map_err(|e| e.to_string())?;
        // SvrParams fits a Gaussian kernel only
        let width = value["kernel_method"]["Gaussian"].as_f64();
        if !width.is_some_and(|w| w.is_finite() && w > 0.0) {
            return Err("kernel_method must be Gaussian with a finite width > 0".into());
        }
        let vectors = &value["sep_hyperplane"]["WeightedCombination"]["dim"];
        let dims = vectors
            .as_array()
            .and_then(|d| Some((d.first()?.as_u64()?, d.get(1)?.as_u64()?)));
        match dims {
            Some((rows, cols))
                if cols as usize == self.n_features() && rows as usize == self.model.nsupport() =>
            {
                Ok(())
            }
            Some((rows, cols)) => Err(format!(
                "{rows} support vectors of {cols} features for {} weights that count and {} features",
                self.model.nsupport(),
                self.n_features()
            )),
            None => Err("support vectors missing".into()),
        }
    }

    pub(super) fn predict_unchecked(&self, x: &Array2<f64>) -> Result<Array1<f64>> {
        use linfa::traits::Predict;
        let z = self.scaler.transform(x);
        let pred: Array1<f64> = guarded(RegressorKind::Svr.name(), "predict", || {
            Ok::<_, std::convert::Infallible>(self.model.predict(&z))
        })?;
        Ok(pred.mapv(|v| v * self.y_scale + self.y_mean))
    }
}
