//! Linear models on z-scored features: OLS (`linfa-linear`), lasso (`linfa-elasticnet`,
//! l1 ratio 1) and ridge (closed form, written here).
//!
//! Why ridge is not `linfa-elasticnet` at l1 ratio 0 (benches/regressors.rs, SYNTHETIC
//! 30 correlated features, 1000 held-out rows, fit + predict, 2 shared cores): its
//! coordinate descent needs thousands of sweeps on correlated columns, 1.44 s at 2k rows,
//! 20.8 s at 20k and 190 s at 100k, against 0.001, 0.008 and 0.046 s for the normal
//! equations solved by Cholesky here (over 1000x slower), and it stops short of the exact
//! solution (predictions differ by up to 1.8e-3). Lasso has no closed form; there the
//! library's coordinate descent matched the former hand-written one to 1e-9 and took
//! 1.1-1.35x its time (0.125 vs 0.110 s at 2k, 12.0 vs 8.9 s at 20k), so the library won.
//!
//! OLS falls back to the same Cholesky solve with a vanishing penalty (1e-12 of the Gram
//! trace, a near minimum-norm interpolant) when `linfa-linear`'s QR least squares cannot
//! be used: fewer samples than features or a constant column, as in the hybrid's small
//! folds (~20 pairs, up to 40 features).

use super::{bad_param, check_fit_input, guarded, RegressorKind, Standardizer};
use crate::error::{Error, Result};
use ndarray::{Array1, Array2, Axis};

/// Ordinary least squares. No hyperparameters.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LinearParams;

/// Ridge regression, `||y - Xw - b||^2 + alpha ||w||^2` on z-scored features, solved in
/// closed form.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RidgeParams {
    /// Penalty on the squared weights (scikit-learn's `Ridge(alpha)`), >= 0.
    pub alpha: f64,
}

/// Lasso, `1/(2n) ||y - Xw - b||^2 + alpha ||w||_1` on z-scored features (scikit-learn's
/// objective).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LassoParams {
    /// Penalty on the absolute weights, >= 0.
    pub alpha: f64,
    /// Coordinate-descent tolerance (relative weight change and duality gap), > 0.
    pub tolerance: f64,
    /// Coordinate-descent sweeps at most, >= 1.
    pub max_iterations: u32,
}

impl Default for RidgeParams {
    fn default() -> Self {
        RidgeParams { alpha: 1.0 }
    }
}

impl Default for LassoParams {
    fn default() -> Self {
        LassoParams {
            alpha: 0.01,
            tolerance: 1e-10,
            max_iterations: 10_000,
        }
    }
}

/// A fitted linear model: weights on standardized features plus intercept.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LinearModel {
    scaler: Standardizer,
    coef: Array1<f64>,
    intercept: f64,
}

impl LinearModel {
    pub fn n_features(&self) -> usize {
        self.scaler.n_features()
    }

    /// See [`super::FittedRegressor::check`].
    pub(super) fn check(&self) -> std::result::Result<(), String> {
        self.scaler.check()?;
        if self.coef.len() != self.n_features() {
            return Err(format!(
                "{} coefficients for {} features",
                self.coef.len(),
                self.n_features()
            ));
        }
        if !super::all_plausible(&self.coef) || !super::plausible(self.intercept) {
            return Err(format!(
                "coefficients and intercept must be finite numbers within +-{:e}",
                super::MAX_FITTED_MAGNITUDE
            ));
        }
        Ok(())
    }

    /// Weights on the z-scored features, and the intercept.
    pub fn coefficients(&self) -> (&Array1<f64>, f64) {
        (&self.coef, self.intercept)
    }

    pub(super) fn predict_unchecked(&self, x: &Array2<f64>) -> Array1<f64> {
        self.scaler.transform(x).dot(&self.coef) + self.intercept
    }
}

impl LinearParams {
    pub fn check(&self) -> Result<()> {
        Ok(())
    }

    pub fn fit(&self, x: &Array2<f64>, y: &Array1<f64>) -> Result<LinearModel> {
        let name = RegressorKind::Linear.name();
        check_fit_input(name, x, y)?;
        let scaler = Standardizer::fit(x);
        let z = scaler.transform(x);
        let has_constant = z
            .axis_iter(Axis(1))
            .any(|col| col.iter().all(|v| *v == 0.0));
        let ols = if z.nrows() > z.ncols() + 1 && !has_constant {
            use linfa::traits::Fit;
            let dataset = linfa::Dataset::new(z.clone(), y.clone());
            guarded(name, "least squares", || {
                linfa_linear::LinearRegression::new().fit(&dataset)
            })
            .ok()
            .map(|m| (m.params().clone(), m.intercept()))
            .filter(|(w, b)| b.is_finite() && w.iter().all(|v| v.is_finite()))
        } else {
            None
        };
        let (coef, intercept) = match ols {
            Some(fit) => fit,
            None => ridge_solve(name, &z, y, 0.0)?,
        };
        Ok(LinearModel {
            scaler,
            coef,
            intercept,
        })
    }
}

impl RidgeParams {
    pub fn check(&self) -> Result<()> {
        let alpha = self.alpha;
        if !(alpha.is_finite() && alpha >= 0.0) {
            return Err(bad_param(
                RegressorKind::Ridge.name(),
                format!("alpha must be >= 0, got {alpha}"),
            ));
        }
        Ok(())
    }

    pub fn fit(&self, x: &Array2<f64>, y: &Array1<f64>) -> Result<LinearModel> {
        let name = RegressorKind::Ridge.name();
        self.check()?;
        check_fit_input(name, x, y)?;
        let scaler = Standardizer::fit(x);
        let z = scaler.transform(x);
        let (coef, intercept) = ridge_solve(name, &z, y, self.alpha)?;
        Ok(LinearModel {
            scaler,
            coef,
            intercept,
        })
    }
}

impl LassoParams {
    pub fn check(&self) -> Result<()> {
        let name = RegressorKind::Lasso.name();
        let (alpha, tolerance) = (self.alpha, self.tolerance);
        if !(alpha.is_finite() && alpha >= 0.0) {
            return Err(bad_param(name, format!("alpha must be >= 0, got {alpha}")));
        }
        if !(tolerance.is_finite() && tolerance > 0.0) {
            return Err(bad_param(
                name,
                format!("tolerance must be > 0, got {tolerance}"),
            ));
        }
        if self.max_iterations == 0 {
            return Err(bad_param(name, "max_iterations must be >= 1, got 0"));
        }
        Ok(())
    }

    pub fn fit(&self, x: &Array2<f64>, y: &Array1<f64>) -> Result<LinearModel> {
        self.check()?;
        elastic_net(
            RegressorKind::Lasso.name(),
            x,
            y,
            self.alpha,
            1.0,
            self.tolerance,
            self.max_iterations,
        )
    }
}

/// `linfa-elasticnet` on z-scored features, minimizing
/// `1/(2n) ||r||^2 + penalty (l1_ratio ||w||_1 + (1 - l1_ratio)/2 ||w||^2)`. Its intercept
/// is the mean of y, which is right because z-scored columns have mean 0.
pub(super) fn elastic_net(
    name: &str,
    x: &Array2<f64>,
    y: &Array1<f64>,
    penalty: f64,
    l1_ratio: f64,
    tolerance: f64,
    max_iterations: u32,
) -> Result<LinearModel> {
    use linfa::traits::Fit;
    check_fit_input(name, x, y)?;
    let scaler = Standardizer::fit(x);
    let z = scaler.transform(x);
    let y_mean = y.mean().unwrap_or(0.0);
    // A constant target has zero duality gap from the start, which linfa-elasticnet's
    // strict `gap < tol * |y|^2` never accepts: it would sweep max_iterations times.
    if y.iter().all(|v| *v == y[0]) {
        return Ok(LinearModel {
            scaler,
            coef: Array1::zeros(x.ncols()),
            intercept: y_mean,
        });
    }
    let dataset = linfa::Dataset::new(z, y.clone());
    let model = guarded(name, "coordinate descent", || {
        linfa_elasticnet::ElasticNet::params()
            .penalty(penalty)
            .l1_ratio(l1_ratio)
            .tolerance(tolerance)
            .max_iterations(max_iterations)
            .with_intercept(true)
            .fit(&dataset)
    })?;
    let coef = model.hyperplane().clone();
    let intercept = model.intercept();
    if !intercept.is_finite() || coef.iter().any(|v| !v.is_finite()) {
        return Err(Error::model(format!("{name}: coordinate descent diverged")));
    }
    Ok(LinearModel {
        scaler,
        coef,
        intercept,
    })
}

/// Ridge on already-centered features `z` (column means 0): minimizes
/// `||y - ybar - z w||^2 + alpha ||w||^2` by Cholesky on the normal equations; returns
/// `(w, ybar)`. `alpha` is floored at 1e-12 of the Gram trace so that alpha = 0 (OLS's
/// fallback) still gives a positive definite system.
fn ridge_solve(
    name: &str,
    z: &Array2<f64>,
    y: &Array1<f64>,
    alpha: f64,
) -> Result<(Array1<f64>, f64)> {
    let ybar = y.mean().unwrap_or(0.0);
    let yc = y - ybar;
    let mut gram = z.t().dot(z);
    let rhs = z.t().dot(&yc);
    let alpha = alpha.max(1e-12 * gram.diag().sum().max(1.0));
    for i in 0..gram.nrows() {
        gram[[i, i]] += alpha;
    }
    let w = cholesky_solve(&gram, &rhs).ok_or_else(|| {
        Error::model(format!(
            "{name}: normal equations are not positive definite"
        ))
    })?;
    Ok((w, ybar))
}

/// Solves the symmetric positive definite system `a w = b` by Cholesky; `None` if `a` is
/// not numerically positive definite.
fn cholesky_solve(a: &Array2<f64>, b: &Array1<f64>) -> Option<Array1<f64>> {
    let p = a.nrows();
    let mut l = Array2::<f64>::zeros((p, p));
    for i in 0..p {
        for j in 0..=i {
            let mut s = a[[i, j]];
            for k in 0..j {
                s -= l[[i, k]] * l[[j, k]];
            }
            if i == j {
                if s.is_nan() || s <= 0.0 {
                    return None;
                }
                l[[i, i]] = s.sqrt();
            } else {
                l[[i, j]] = s / l[[j, j]];
            }
        }
    }
    let mut z = Array1::<f64>::zeros(p);
    for i in 0..p {
        let mut s = b[i];
        for k in 0..i {
            s -= l[[i, k]] * z[k];
        }
        z[i] = s / l[[i, i]];
    }
    let mut w = Array1::<f64>::zeros(p);
    for i in (0..p).rev() {
        let mut s = z[i];
        for k in i + 1..p {
            s -= l[[k, i]] * w[k];
        }
        w[i] = s / l[[i, i]];
    }
    w.iter().all(|v| v.is_finite()).then_some(w)
}
