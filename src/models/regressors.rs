//! Tabular regressors (linear, ridge, lasso, tree, forest, SVR, kNN, gradient boosting)
//! behind one small trait, so learned and hybrid models can swap them by name.
//!
//! Which implementation backs which kind:
//!
//! | kind     | backend                                                                    |
//! |----------|----------------------------------------------------------------------------|
//! | `linear` | `linfa-linear` OLS (QR least squares) on z-scored features; falls back to a |
//! |          | tiny-ridge solve when the system is rank deficient or under-determined    |
//! | `ridge`  | closed-form ridge, alpha 1.0 on z-scored features (Cholesky)               |
//! | `lasso`  | cyclic coordinate descent, alpha 0.01 on z-scored features (sklearn loss)  |
//! | `tree`   | `smartcore` `DecisionTreeRegressor` (unbounded depth, min leaf 1)          |
//! | `forest` | random forest in this file: 100 CART trees, bootstrap, mtry = max(1, p/3), |
//! |          | histogram split search (<= 256 bins), seeded per tree, 2+ threads         |
//! | `svr`    | `linfa-svm` epsilon-SVR, RBF, C 10, eps 0.1, gamma 1/p, z-scored x and y   |
//! | `knn`    | brute-force kNN in this file, k = 5, inverse-distance weights, z-scored   |
//! | `gbm`    | `forust-ml` gradient boosting, squared loss, 200 rounds, depth 3, lr 0.05  |
//!
//! `smartcore`'s ridge and lasso refuse `n_samples <= n_features` (and constant columns
//! when normalizing), which happens here with ~20 samples and up to 40 features, so those
//! two are small exact solvers in this file instead. `smartcore`'s random forest (~5 s) and
//! kNN (~0.7-1.7 s to predict) were too slow on 2000 x 30, so those are here too.
//!
//! Every regressor validates its input (non-empty, matching shapes, all finite), turns a
//! panic inside a library into an `Err`, and refuses to return non-finite predictions.

use crate::error::{Error, Result};
use ndarray::{Array1, Array2, Axis};
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A regressor on a dense feature matrix (rows = samples). Deterministic for a seed.
pub trait Regressor: Send + Sync {
    fn fit(&mut self, x: &Array2<f64>, y: &Array1<f64>) -> Result<()>;
    fn predict(&self, x: &Array2<f64>) -> Result<Array1<f64>>;
}

/// The regressors this module provides, by name.
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

/// A fresh, unfitted regressor of `kind`. `seed` drives every random choice (forest
/// bootstraps and feature sampling, boosting subsampling), so the same data and seed give
/// bit-identical predictions.
pub fn make(kind: RegressorKind, seed: u64) -> Box<dyn Regressor> {
    match kind {
        RegressorKind::Linear => Box::new(LinearRegressor::new()),
        RegressorKind::Ridge => Box::new(RidgeRegressor::new(RIDGE_ALPHA)),
        RegressorKind::Lasso => Box::new(LassoRegressor::new(LASSO_ALPHA)),
        RegressorKind::Tree => Box::new(TreeRegressor::new(seed)),
        RegressorKind::Forest => Box::new(ForestRegressor::new(FOREST_TREES, seed)),
        RegressorKind::Svr => Box::new(SvrRegressor::new(SVR_C, SVR_EPS)),
        RegressorKind::Knn => Box::new(KnnRegressor::new(KNN_K)),
        RegressorKind::Gbm => Box::new(GbmRegressor::new(seed)),
    }
}

const RIDGE_ALPHA: f64 = 1.0;
const LASSO_ALPHA: f64 = 0.01;
const FOREST_TREES: usize = 100;
const SVR_C: f64 = 10.0;
const SVR_EPS: f64 = 0.1;
/// SMO stopping tolerance (libsvm's default; linfa-svm's own 1e-7 is ~10x slower).
const SVR_SOLVER_TOL: f64 = 1e-3;
const KNN_K: usize = 5;
const GBM_ROUNDS: usize = 200;
const GBM_DEPTH: usize = 3;
const GBM_LEARNING_RATE: f32 = 0.05;
const GBM_SUBSAMPLE: f32 = 1.0;

// ---------------------------------------------------------------------------------------
// Validation and helpers
// ---------------------------------------------------------------------------------------

fn check_fit_input(name: &str, x: &Array2<f64>, y: &Array1<f64>) -> Result<()> {
    if x.nrows() == 0 {
        return Err(Error::msg(format!("{name}: cannot fit on 0 samples")));
    }
    if x.ncols() == 0 {
        return Err(Error::msg(format!("{name}: cannot fit on 0 features")));
    }
    if y.len() != x.nrows() {
        return Err(Error::msg(format!(
            "{name}: {} samples in x but {} targets in y",
            x.nrows(),
            y.len()
        )));
    }
    if let Some(((r, c), v)) = x.indexed_iter().find(|(_, v)| !v.is_finite()) {
        return Err(Error::msg(format!(
            "{name}: feature matrix has non-finite value {v} at row {r}, column {c}"
        )));
    }
    if let Some((i, v)) = y.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(Error::msg(format!(
            "{name}: target has non-finite value {v} at row {i}"
        )));
    }
    Ok(())
}

fn check_predict_input(name: &str, x: &Array2<f64>, n_features: usize) -> Result<()> {
    if x.ncols() != n_features {
        return Err(Error::msg(format!(
            "{name}: fitted on {n_features} features but asked to predict with {}",
            x.ncols()
        )));
    }
    if let Some(((r, c), v)) = x.indexed_iter().find(|(_, v)| !v.is_finite()) {
        return Err(Error::msg(format!(
            "{name}: feature matrix has non-finite value {v} at row {r}, column {c}"
        )));
    }
    Ok(())
}

fn not_fitted(name: &str) -> Error {
    Error::msg(format!("{name}: predict called before fit"))
}

fn finite_predictions(name: &str, pred: Array1<f64>) -> Result<Array1<f64>> {
    match pred.iter().position(|v| !v.is_finite()) {
        Some(i) => Err(Error::msg(format!(
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
        Ok(Err(e)) => Err(Error::msg(format!("{name}: {what} failed: {e}"))),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(Error::msg(format!("{name}: {what} panicked: {msg}")))
        }
    }
}

/// Z-score transform with the training mean and (population) standard deviation;
/// constant columns get std 1, so they become all zeros.
#[derive(Debug, Clone)]
struct Standardizer {
    mean: Array1<f64>,
    scale: Array1<f64>,
}

impl Standardizer {
    fn fit(x: &Array2<f64>) -> Standardizer {
        let n = x.nrows().max(1) as f64;
        let mean = x.sum_axis(Axis(0)) / n;
        let mut scale = Array1::zeros(x.ncols());
        for (j, col) in x.axis_iter(Axis(1)).enumerate() {
            let m = mean[j];
            let var = col.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / n;
            let sd = var.sqrt();
            scale[j] = if sd.is_finite() && sd > 1e-12 * (1.0 + m.abs()) {
                sd
            } else {
                1.0
            };
        }
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
}

/// Row-major copy into smartcore's dense matrix.
fn to_dense(
    name: &str,
    x: &Array2<f64>,
) -> Result<smartcore::linalg::basic::matrix::DenseMatrix<f64>> {
    let values: Vec<f64> = x.iter().copied().collect();
    guarded(name, "building matrix", || {
        smartcore::linalg::basic::matrix::DenseMatrix::new(x.nrows(), x.ncols(), values, false)
    })
}

// ---------------------------------------------------------------------------------------
// Linear models: OLS, ridge, lasso (all on z-scored features)
// ---------------------------------------------------------------------------------------

/// Coefficients on standardized features plus intercept.
#[derive(Debug, Clone)]
struct LinearFit {
    scaler: Standardizer,
    coef: Array1<f64>,
    intercept: f64,
}

impl LinearFit {
    fn predict(&self, name: &str, x: &Array2<f64>) -> Result<Array1<f64>> {
        check_predict_input(name, x, self.scaler.n_features())?;
        let z = self.scaler.transform(x);
        finite_predictions(name, z.dot(&self.coef) + self.intercept)
    }
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

/// Ridge on already-centered features `z` (column means 0): minimizes
/// `||y - ybar - z w||^2 + alpha ||w||^2`; returns `(w, ybar)`.
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
    // Scale-aware floor so alpha = 0-ish still gives a positive definite system.
    let trace = gram.diag().sum().max(1.0);
    let alpha = alpha.max(1e-12 * trace);
    for i in 0..gram.nrows() {
        gram[[i, i]] += alpha;
    }
    let w = cholesky_solve(&gram, &rhs).ok_or_else(|| {
        Error::msg(format!(
            "{name}: normal equations are not positive definite"
        ))
    })?;
    Ok((w, ybar))
}

/// Ordinary least squares via `linfa-linear` on z-scored features. Under-determined or
/// rank-deficient problems fall back to a vanishing-ridge (near minimum-norm) solution.
#[derive(Debug, Clone, Default)]
pub struct LinearRegressor {
    fitted: Option<LinearFit>,
}

impl LinearRegressor {
    const NAME: &'static str = "linear";

    pub fn new() -> LinearRegressor {
        LinearRegressor { fitted: None }
    }
}

impl Regressor for LinearRegressor {
    fn fit(&mut self, x: &Array2<f64>, y: &Array1<f64>) -> Result<()> {
        let name = Self::NAME;
        self.fitted = None;
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
        self.fitted = Some(LinearFit {
            scaler,
            coef,
            intercept,
        });
        Ok(())
    }

    fn predict(&self, x: &Array2<f64>) -> Result<Array1<f64>> {
        let fit = self.fitted.as_ref().ok_or_else(|| not_fitted(Self::NAME))?;
        fit.predict(Self::NAME, x)
    }
}

/// Ridge regression, `||y - Xw - b||^2 + alpha ||w||^2` on z-scored features (closed form).
#[derive(Debug, Clone)]
pub struct RidgeRegressor {
    alpha: f64,
    fitted: Option<LinearFit>,
}

impl RidgeRegressor {
    const NAME: &'static str = "ridge";

    pub fn new(alpha: f64) -> RidgeRegressor {
        RidgeRegressor {
            alpha: alpha.max(0.0),
            fitted: None,
        }
    }
}

impl Regressor for RidgeRegressor {
    fn fit(&mut self, x: &Array2<f64>, y: &Array1<f64>) -> Result<()> {
        self.fitted = None;
        check_fit_input(Self::NAME, x, y)?;
        let scaler = Standardizer::fit(x);
        let z = scaler.transform(x);
        let (coef, intercept) = ridge_solve(Self::NAME, &z, y, self.alpha)?;
        self.fitted = Some(LinearFit {
            scaler,
            coef,
            intercept,
        });
        Ok(())
    }

    fn predict(&self, x: &Array2<f64>) -> Result<Array1<f64>> {
        let fit = self.fitted.as_ref().ok_or_else(|| not_fitted(Self::NAME))?;
        fit.predict(Self::NAME, x)
    }
}

/// Lasso, `1/(2n) ||y - Xw - b||^2 + alpha ||w||_1` on z-scored features (the scikit-learn
/// objective), solved by cyclic coordinate descent.
#[derive(Debug, Clone)]
pub struct LassoRegressor {
    alpha: f64,
    max_sweeps: usize,
    tol: f64,
    fitted: Option<LinearFit>,
}

impl LassoRegressor {
    const NAME: &'static str = "lasso";

    pub fn new(alpha: f64) -> LassoRegressor {
        LassoRegressor {
            alpha: alpha.max(0.0),
            max_sweeps: 10_000,
            tol: 1e-10,
            fitted: None,
        }
    }
}

fn soft_threshold(v: f64, t: f64) -> f64 {
    if v > t {
        v - t
    } else if v < -t {
        v + t
    } else {
        0.0
    }
}

impl Regressor for LassoRegressor {
    fn fit(&mut self, x: &Array2<f64>, y: &Array1<f64>) -> Result<()> {
        self.fitted = None;
        check_fit_input(Self::NAME, x, y)?;
        let scaler = Standardizer::fit(x);
        let z = scaler.transform(x);
        let (n, p) = z.dim();
        let nf = n as f64;
        let ybar = y.mean().unwrap_or(0.0);
        // Residual r = y - ybar - z w, starting from w = 0.
        let mut r = y - ybar;
        let mut w = Array1::<f64>::zeros(p);
        let cols: Vec<_> = z.axis_iter(Axis(1)).collect();
        let col_sq: Vec<f64> = cols.iter().map(|c| c.dot(c) / nf).collect();
        let y_scale = r.iter().map(|v| v.abs()).fold(0.0, f64::max).max(1e-300);
        for _ in 0..self.max_sweeps {
            let mut max_change = 0.0f64;
            for j in 0..p {
                if col_sq[j] <= 0.0 {
                    continue;
                }
                let col = &cols[j];
                let old = w[j];
                let rho = col.dot(&r) / nf + col_sq[j] * old;
                let new = soft_threshold(rho, self.alpha) / col_sq[j];
                if new != old {
                    r.scaled_add(old - new, col);
                    w[j] = new;
                    max_change = max_change.max((new - old).abs());
                }
            }
            if max_change <= self.tol * y_scale {
                break;
            }
        }
        if w.iter().any(|v| !v.is_finite()) {
            return Err(Error::msg(format!(
                "{}: coordinate descent diverged",
                Self::NAME
            )));
        }
        self.fitted = Some(LinearFit {
            scaler,
            coef: w,
            intercept: ybar,
        });
        Ok(())
    }

    fn predict(&self, x: &Array2<f64>) -> Result<Array1<f64>> {
        let fit = self.fitted.as_ref().ok_or_else(|| not_fitted(Self::NAME))?;
        fit.predict(Self::NAME, x)
    }
}

// ---------------------------------------------------------------------------------------
// Trees (smartcore)
// ---------------------------------------------------------------------------------------

type Dense = smartcore::linalg::basic::matrix::DenseMatrix<f64>;
type SmartTree =
    smartcore::tree::decision_tree_regressor::DecisionTreeRegressor<f64, f64, Dense, Vec<f64>>;

/// A single CART regression tree (`smartcore`), grown until leaves are pure.
pub struct TreeRegressor {
    seed: u64,
    fitted: Option<(usize, SmartTree)>,
}

impl TreeRegressor {
    const NAME: &'static str = "tree";

    pub fn new(seed: u64) -> TreeRegressor {
        TreeRegressor { seed, fitted: None }
    }
}

impl Regressor for TreeRegressor {
    fn fit(&mut self, x: &Array2<f64>, y: &Array1<f64>) -> Result<()> {
        use smartcore::tree::decision_tree_regressor::{
            DecisionTreeRegressor, DecisionTreeRegressorParameters,
        };
        let name = Self::NAME;
        self.fitted = None;
        check_fit_input(name, x, y)?;
        let xm = to_dense(name, x)?;
        let yv = y.to_vec();
        let params = DecisionTreeRegressorParameters {
            seed: Some(self.seed),
            ..Default::default()
        };
        let model = guarded(name, "fit", || DecisionTreeRegressor::fit(&xm, &yv, params))?;
        self.fitted = Some((x.ncols(), model));
        Ok(())
    }

    fn predict(&self, x: &Array2<f64>) -> Result<Array1<f64>> {
        let name = Self::NAME;
        let (p, model) = self.fitted.as_ref().ok_or_else(|| not_fitted(name))?;
        check_predict_input(name, x, *p)?;
        if x.nrows() == 0 {
            return Ok(Array1::zeros(0));
        }
        let xm = to_dense(name, x)?;
        let pred = guarded(name, "predict", || model.predict(&xm))?;
        finite_predictions(name, Array1::from(pred))
    }
}

/// Random forest of CART regression trees: bootstrap samples, `max(1, p/3)` candidate
/// features per split, fully grown trees (min leaf 1), predictions averaged.
///
/// Written here rather than using `smartcore`'s forest, which took ~5 s for 100 trees on
/// 2000 x 30. Splits are searched on per-feature histograms (all distinct values when a
/// feature has at most 256 of them, otherwise 256 quantile bins), thresholds are midpoints
/// between neighbouring training values. Each tree draws from its own generator seeded from
/// `(seed, tree index)`, so results are bit-identical for a seed whatever the thread count.
pub struct ForestRegressor {
    n_trees: usize,
    seed: u64,
    fitted: Option<(usize, Vec<Tree>)>,
}

impl ForestRegressor {
    const NAME: &'static str = "forest";

    pub fn new(n_trees: usize, seed: u64) -> ForestRegressor {
        ForestRegressor {
            n_trees: n_trees.max(1),
            seed,
            fitted: None,
        }
    }
}

const MAX_BINS: usize = 256;

/// SplitMix64: tiny, fast, deterministic.
struct SplitMix(u64);

impl SplitMix {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0), by rejection-free multiply-shift.
    fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }
}

/// Features quantized to bin codes (column-major), with the threshold between bins.
struct Binned {
    n: usize,
    codes: Vec<u16>,
    /// `thresholds[j][b]` separates bin `b` (values <= it) from bin `b + 1`.
    thresholds: Vec<Vec<f64>>,
}

impl Binned {
    fn new(x: &Array2<f64>) -> Binned {
        let (n, p) = x.dim();
        let mut codes = vec![0u16; n * p];
        let mut thresholds = Vec::with_capacity(p);
        for (j, col) in x.axis_iter(Axis(1)).enumerate() {
            let mut u: Vec<f64> = col.to_vec();
            u.sort_by(f64::total_cmp);
            u.dedup();
            let cuts: Vec<f64> = if u.len() <= MAX_BINS {
                u.windows(2).map(|w| w[0] + (w[1] - w[0]) / 2.0).collect()
            } else {
                let mut c: Vec<f64> = (1..MAX_BINS)
                    .map(|k| {
                        let i = k * u.len() / MAX_BINS;
                        u[i - 1] + (u[i] - u[i - 1]) / 2.0
                    })
                    .collect();
                c.dedup();
                c
            };
            for (i, v) in col.iter().enumerate() {
                codes[j * n + i] = cuts.partition_point(|t| t < v) as u16;
            }
            thresholds.push(cuts);
        }
        Binned {
            n,
            codes,
            thresholds,
        }
    }

    fn code(&self, i: usize, j: usize) -> usize {
        self.codes[j * self.n + i] as usize
    }
}

/// Flat binary tree; `feature == usize::MAX` marks a leaf holding `value`.
#[derive(Debug, Clone)]
struct Node {
    feature: usize,
    threshold: f64,
    left: usize,
    right: usize,
    value: f64,
}

#[derive(Debug, Clone)]
struct Tree {
    nodes: Vec<Node>,
}

impl Tree {
    fn predict_row(&self, row: ndarray::ArrayView1<f64>) -> f64 {
        let mut k = 0;
        loop {
            let node = &self.nodes[k];
            if node.feature == usize::MAX {
                return node.value;
            }
            k = if row[node.feature] <= node.threshold {
                node.left
            } else {
                node.right
            };
        }
    }

    /// Grows one tree on the (bootstrap) sample `idx` of the binned data.
    fn grow(
        data: &Binned,
        y: &[f64],
        mut idx: Vec<usize>,
        mtry: usize,
        rng: &mut SplitMix,
    ) -> Tree {
        let p = data.thresholds.len();
        let mut nodes = vec![Node {
            feature: usize::MAX,
            threshold: 0.0,
            left: 0,
            right: 0,
            value: 0.0,
        }];
        let mut features: Vec<usize> = (0..p).collect();
        let mut hist_sum = vec![0.0f64; MAX_BINS + 1];
        let mut hist_cnt = vec![0usize; MAX_BINS + 1];
        let mut groups: Vec<(usize, f64, usize)> = Vec::with_capacity(MAX_BINS + 1);
        let mut pairs: Vec<(usize, f64)> = Vec::new();
        // Work stack of (node, start, end) ranges of `idx`.
        let mut stack = vec![(0usize, 0usize, idx.len())];
        while let Some((node, start, end)) = stack.pop() {
            let rows = &idx[start..end];
            let n = rows.len();
            let sum: f64 = rows.iter().map(|&i| y[i]).sum();
            nodes[node].value = sum / n as f64;
            let first = y[rows[0]];
            if n < 2 || rows.iter().all(|&i| y[i] == first) {
                continue;
            }
            // Best split among `mtry` features that are not constant in this node.
            let mut best: Option<(f64, usize, usize)> = None; // (score, feature, bin)
            let parent_score = sum * sum / n as f64;
            let mut tried = 0;
            for k in 0..p {
                if tried >= mtry {
                    break;
                }
                let r = k + rng.below(p - k);
                features.swap(k, r);
                let f = features[k];
                let nb = data.thresholds[f].len() + 1;
                if nb < 2 {
                    continue;
                }
                // Per-bin (bin, sum, count) in bin order: a dense histogram for big nodes,
                // a sort of the node's codes for small ones (deep nodes would otherwise pay
                // O(bins) per feature).
                groups.clear();
                if n * 8 >= nb {
                    hist_sum[..nb].fill(0.0);
                    hist_cnt[..nb].fill(0);
                    for &i in rows {
                        let b = data.code(i, f);
                        hist_sum[b] += y[i];
                        hist_cnt[b] += 1;
                    }
                    for b in 0..nb {
                        if hist_cnt[b] > 0 {
                            groups.push((b, hist_sum[b], hist_cnt[b]));
                        }
                    }
                } else {
                    pairs.clear();
                    pairs.extend(rows.iter().map(|&i| (data.code(i, f), y[i])));
                    pairs.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
                    for &(b, v) in pairs.iter() {
                        match groups.last_mut() {
                            Some(g) if g.0 == b => {
                                g.1 += v;
                                g.2 += 1;
                            }
                            _ => groups.push((b, v, 1)),
                        }
                    }
                }
                if groups.len() < 2 {
                    continue;
                }
                tried += 1;
                let (mut sl, mut cl) = (0.0, 0usize);
                for &(b, gs, gc) in &groups[..groups.len() - 1] {
                    sl += gs;
                    cl += gc;
                    let cr = n - cl;
                    let sr = sum - sl;
                    let score = sl * sl / cl as f64 + sr * sr / cr as f64;
                    if best.is_none_or(|(s, _, _)| score > s) {
                        best = Some((score, f, b));
                    }
                }
            }
            let Some((score, f, b)) = best else { continue };
            if score <= parent_score {
                continue; // no reduction in squared error
            }
            // Partition rows: bin <= b goes left.
            let seg = &mut idx[start..end];
            let mut split = 0;
            for k in 0..seg.len() {
                if data.code(seg[k], f) <= b {
                    seg.swap(k, split);
                    split += 1;
                }
            }
            let left = nodes.len();
            let right = left + 1;
            for _ in 0..2 {
                nodes.push(Node {
                    feature: usize::MAX,
                    threshold: 0.0,
                    left: 0,
                    right: 0,
                    value: 0.0,
                });
            }
            nodes[node].feature = f;
            nodes[node].threshold = data.thresholds[f][b];
            nodes[node].left = left;
            nodes[node].right = right;
            stack.push((right, start + split, end));
            stack.push((left, start, start + split));
        }
        Tree { nodes }
    }
}

fn grow_forest(x: &Array2<f64>, y: &[f64], n_trees: usize, seed: u64) -> Vec<Tree> {
    let data = Binned::new(x);
    let (n, p) = x.dim();
    let mtry = (p / 3).max(1);
    let grow_one = |t: usize| {
        let mut rng = SplitMix(seed ^ (t as u64).wrapping_mul(0xD1B5_4A32_D192_ED03));
        rng.next_u64();
        let idx: Vec<usize> = (0..n).map(|_| rng.below(n)).collect();
        Tree::grow(&data, y, idx, mtry, &mut rng)
    };
    let threads = std::thread::available_parallelism()
        .map(|t| t.get())
        .unwrap_or(1)
        .clamp(1, 8)
        .min(n_trees);
    if threads <= 1 || n * n_trees < 20_000 {
        return (0..n_trees).map(grow_one).collect();
    }
    let mut trees: Vec<Option<Tree>> = vec![None; n_trees];
    std::thread::scope(|scope| {
        let chunk = n_trees.div_ceil(threads);
        for (c, slots) in trees.chunks_mut(chunk).enumerate() {
            let grow_one = &grow_one;
            scope.spawn(move || {
                for (k, slot) in slots.iter_mut().enumerate() {
                    *slot = Some(grow_one(c * chunk + k));
                }
            });
        }
    });
    trees.into_iter().flatten().collect()
}

impl Regressor for ForestRegressor {
    fn fit(&mut self, x: &Array2<f64>, y: &Array1<f64>) -> Result<()> {
        let name = Self::NAME;
        self.fitted = None;
        check_fit_input(name, x, y)?;
        let yv = y.to_vec();
        let (n_trees, seed) = (self.n_trees, self.seed);
        let trees = guarded(name, "fit", || {
            let trees = grow_forest(x, &yv, n_trees, seed);
            if trees.len() == n_trees {
                Ok(trees)
            } else {
                Err("a worker thread failed")
            }
        })?;
        self.fitted = Some((x.ncols(), trees));
        Ok(())
    }

    fn predict(&self, x: &Array2<f64>) -> Result<Array1<f64>> {
        let name = Self::NAME;
        let (p, trees) = self.fitted.as_ref().ok_or_else(|| not_fitted(name))?;
        check_predict_input(name, x, *p)?;
        let pred = x.map_axis(Axis(1), |row| {
            trees.iter().map(|t| t.predict_row(row)).sum::<f64>() / trees.len() as f64
        });
        finite_predictions(name, pred)
    }
}

// ---------------------------------------------------------------------------------------
// SVR (linfa-svm)
// ---------------------------------------------------------------------------------------

/// Epsilon-SVR with an RBF kernel (`linfa-svm`). Features and target are z-scored, so
/// `eps` and `C` are in units of the target's standard deviation; gamma = 1 / n_features.
pub struct SvrRegressor {
    c: f64,
    eps: f64,
    fitted: Option<SvrFit>,
}

struct SvrFit {
    scaler: Standardizer,
    y_mean: f64,
    y_scale: f64,
    model: linfa_svm::Svm<f64, f64>,
}

impl SvrRegressor {
    const NAME: &'static str = "svr";

    pub fn new(c: f64, eps: f64) -> SvrRegressor {
        SvrRegressor {
            c,
            eps,
            fitted: None,
        }
    }
}

impl Regressor for SvrRegressor {
    fn fit(&mut self, x: &Array2<f64>, y: &Array1<f64>) -> Result<()> {
        use linfa::traits::Fit;
        let name = Self::NAME;
        self.fitted = None;
        check_fit_input(name, x, y)?;
        let scaler = Standardizer::fit(x);
        let z = scaler.transform(x);
        let y_mean = y.mean().unwrap_or(0.0);
        let y_sd =
            (y.iter().map(|v| (v - y_mean) * (v - y_mean)).sum::<f64>() / y.len() as f64).sqrt();
        let y_scale = if y_sd.is_finite() && y_sd > 1e-12 * (1.0 + y_mean.abs()) {
            y_sd
        } else {
            1.0
        };
        let ys = y.mapv(|v| (v - y_mean) / y_scale);
        let dataset = linfa::Dataset::new(z, ys);
        let gamma_inv = x.ncols() as f64; // kernel exp(-|a-b|^2 / eps) with eps = 1/gamma
        let (c, eps) = (self.c, self.eps);
        let model = guarded(name, "fit", || {
            linfa_svm::Svm::<f64, f64>::params()
                .c_svr(c, Some(eps))
                .gaussian_kernel(gamma_inv)
                .eps(SVR_SOLVER_TOL)
                .fit(&dataset)
        })?;
        self.fitted = Some(SvrFit {
            scaler,
            y_mean,
            y_scale,
            model,
        });
        Ok(())
    }

    fn predict(&self, x: &Array2<f64>) -> Result<Array1<f64>> {
        use linfa::traits::Predict;
        let name = Self::NAME;
        let fit = self.fitted.as_ref().ok_or_else(|| not_fitted(name))?;
        check_predict_input(name, x, fit.scaler.n_features())?;
        if x.nrows() == 0 {
            return Ok(Array1::zeros(0));
        }
        let z = fit.scaler.transform(x);
        let pred: Array1<f64> = guarded(name, "predict", || {
            Ok::<_, std::convert::Infallible>(fit.model.predict(&z))
        })?;
        finite_predictions(name, pred.mapv(|v| v * fit.y_scale + fit.y_mean))
    }
}

// ---------------------------------------------------------------------------------------
// kNN (smartcore)
// ---------------------------------------------------------------------------------------

/// k-nearest-neighbours regression: exact brute-force Euclidean search on z-scored
/// features, inverse-distance weights (a query that coincides with training points gets
/// their mean target), `k` capped at the number of training samples. Ties in distance go
/// to the lower training index, so results are deterministic.
///
/// Written here rather than using `smartcore`'s `KNNRegressor`, whose cover tree and linear
/// search took 0.7-1.7 s to answer 2000 queries against 2000 x 30.
pub struct KnnRegressor {
    k: usize,
    fitted: Option<KnnFit>,
}

struct KnnFit {
    scaler: Standardizer,
    z: Array2<f64>,
    y: Array1<f64>,
    k: usize,
}

impl KnnRegressor {
    const NAME: &'static str = "knn";

    pub fn new(k: usize) -> KnnRegressor {
        KnnRegressor {
            k: k.max(1),
            fitted: None,
        }
    }
}

impl KnnFit {
    fn predict_row(&self, q: &[f64], dist: &mut Vec<(f64, usize)>) -> f64 {
        dist.clear();
        for (i, row) in self.z.outer_iter().enumerate() {
            let d2: f64 = row.iter().zip(q).map(|(a, b)| (a - b) * (a - b)).sum();
            dist.push((d2, i));
        }
        let by_dist = |a: &(f64, usize), b: &(f64, usize)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1));
        let k = self.k.min(dist.len());
        if k < dist.len() {
            dist.select_nth_unstable_by(k - 1, by_dist);
        }
        let near = &mut dist[..k];
        near.sort_by(by_dist);
        let exact: Vec<f64> = near
            .iter()
            .filter(|(d, _)| *d == 0.0)
            .map(|&(_, i)| self.y[i])
            .collect();
        if !exact.is_empty() {
            return exact.iter().sum::<f64>() / exact.len() as f64;
        }
        let (mut num, mut den) = (0.0, 0.0);
        for &(d2, i) in near.iter() {
            let w = 1.0 / d2.sqrt();
            num += w * self.y[i];
            den += w;
        }
        num / den
    }
}

impl Regressor for KnnRegressor {
    fn fit(&mut self, x: &Array2<f64>, y: &Array1<f64>) -> Result<()> {
        self.fitted = None;
        check_fit_input(Self::NAME, x, y)?;
        let scaler = Standardizer::fit(x);
        let z = scaler.transform(x);
        self.fitted = Some(KnnFit {
            scaler,
            z,
            y: y.clone(),
            k: self.k.min(x.nrows()),
        });
        Ok(())
    }

    fn predict(&self, x: &Array2<f64>) -> Result<Array1<f64>> {
        let name = Self::NAME;
        let fit = self.fitted.as_ref().ok_or_else(|| not_fitted(name))?;
        check_predict_input(name, x, fit.scaler.n_features())?;
        let zq = fit.scaler.transform(x);
        let mut dist = Vec::with_capacity(fit.z.nrows());
        let mut q = Vec::with_capacity(zq.ncols());
        let pred = zq.map_axis(Axis(1), |row| {
            q.clear();
            q.extend(row.iter().copied());
            fit.predict_row(&q, &mut dist)
        });
        finite_predictions(name, pred)
    }
}

// ---------------------------------------------------------------------------------------
// Gradient boosting (forust-ml)
// ---------------------------------------------------------------------------------------

/// Least-squares gradient boosting (`forust-ml`, histogram trees): 200 rounds, depth 3,
/// learning rate 0.05, no subsampling, single-threaded for bit-identical results.
pub struct GbmRegressor {
    seed: u64,
    fitted: Option<(usize, forust_ml::GradientBooster)>,
}

impl GbmRegressor {
    const NAME: &'static str = "gbm";

    pub fn new(seed: u64) -> GbmRegressor {
        GbmRegressor { seed, fitted: None }
    }
}

/// Column-major copy, the layout `forust_ml::Matrix` reads.
fn column_major(x: &Array2<f64>) -> Vec<f64> {
    x.t().iter().copied().collect()
}

impl Regressor for GbmRegressor {
    fn fit(&mut self, x: &Array2<f64>, y: &Array1<f64>) -> Result<()> {
        use forust_ml::objective::ObjectiveType;
        let name = Self::NAME;
        self.fitted = None;
        check_fit_input(name, x, y)?;
        let data = column_major(x);
        let yv = y.to_vec();
        let seed = self.seed;
        let model = guarded(name, "fit", || {
            let matrix = forust_ml::Matrix::new(&data, x.nrows(), x.ncols());
            let mut booster = forust_ml::GradientBooster::default()
                .set_objective_type(ObjectiveType::SquaredLoss)
                .set_iterations(GBM_ROUNDS)
                .set_learning_rate(GBM_LEARNING_RATE)
                .set_max_depth(GBM_DEPTH)
                .set_subsample(GBM_SUBSAMPLE)
                .set_seed(seed)
                .set_parallel(false)
                .set_initialize_base_score(true);
            booster.fit_unweighted(&matrix, &yv, None).map(|_| booster)
        })?;
        self.fitted = Some((x.ncols(), model));
        Ok(())
    }

    fn predict(&self, x: &Array2<f64>) -> Result<Array1<f64>> {
        let name = Self::NAME;
        let (p, model) = self.fitted.as_ref().ok_or_else(|| not_fitted(name))?;
        check_predict_input(name, x, *p)?;
        if x.nrows() == 0 {
            return Ok(Array1::zeros(0));
        }
        let data = column_major(x);
        let pred = guarded(name, "predict", || {
            let matrix = forust_ml::Matrix::new(&data, x.nrows(), x.ncols());
            Ok::<_, std::convert::Infallible>(model.predict(&matrix, false))
        })?;
        finite_predictions(name, Array1::from(pred))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// Small deterministic generator (splitmix64) so fixtures need no extra crate.
    struct Rng(u64);
    impl Rng {
        fn uniform(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            (z >> 11) as f64 / (1u64 << 53) as f64
        }
        fn matrix(&mut self, n: usize, p: usize) -> Array2<f64> {
            Array2::from_shape_fn((n, p), |_| self.uniform())
        }
    }

    /// Fixture "plane": 3 features in [0,1), y = 3 x0 - 2 x1 + 1 (x2 irrelevant).
    fn plane(n: usize, seed: u64) -> (Array2<f64>, Array1<f64>) {
        let x = Rng(seed).matrix(n, 3);
        let y = x.map_axis(Axis(1), |r| 3.0 * r[0] - 2.0 * r[1] + 1.0);
        (x, y)
    }

    /// Fixture "step": 3 features in [0,1), y = 1 if x0 > 0.5 else 0.
    fn step(n: usize, seed: u64) -> (Array2<f64>, Array1<f64>) {
        let x = Rng(seed).matrix(n, 3);
        let y = x.map_axis(Axis(1), |r| if r[0] > 0.5 { 1.0 } else { 0.0 });
        (x, y)
    }

    /// Fixture "smooth": 2 features in [0,1), y = sin(2 pi x0) + x1^2.
    fn smooth(n: usize, seed: u64) -> (Array2<f64>, Array1<f64>) {
        let x = Rng(seed).matrix(n, 2);
        let y = x.map_axis(Axis(1), |r| {
            (2.0 * std::f64::consts::PI * r[0]).sin() + r[1] * r[1]
        });
        (x, y)
    }

    fn fitted(kind: RegressorKind, x: &Array2<f64>, y: &Array1<f64>) -> Box<dyn Regressor> {
        let mut m = make(kind, 7);
        m.fit(x, y)
            .unwrap_or_else(|e| panic!("{kind}: fit failed: {e}"));
        m
    }

    fn max_abs_err(a: &Array1<f64>, b: &Array1<f64>) -> f64 {
        a.iter()
            .zip(b.iter())
            .map(|(u, v)| (u - v).abs())
            .fold(0.0, f64::max)
    }

    fn rmse(a: &Array1<f64>, b: &Array1<f64>) -> f64 {
        let s: f64 = a.iter().zip(b.iter()).map(|(u, v)| (u - v) * (u - v)).sum();
        (s / a.len() as f64).sqrt()
    }

    /// Slopes of a fitted model in original units, read off by finite differences.
    fn slopes(m: &dyn Regressor, p: usize) -> (f64, Vec<f64>) {
        let mut x = Array2::zeros((p + 1, p));
        for j in 0..p {
            x[[j + 1, j]] = 1.0;
        }
        let f = m.predict(&x).unwrap();
        (f[0], (0..p).map(|j| f[j + 1] - f[0]).collect())
    }

    #[test]
    fn names_parse_labels_and_serde() {
        let names: Vec<_> = RegressorKind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(
            names,
            ["linear", "ridge", "lasso", "tree", "forest", "svr", "knn", "gbm"]
        );
        let labels: Vec<_> = RegressorKind::ALL.iter().map(|k| k.label()).collect();
        assert_eq!(
            labels,
            [
                "linear",
                "ridge",
                "lasso",
                "decision tree",
                "random forest",
                "SVR (RBF)",
                "kNN",
                "gradient boosting"
            ]
        );
        for k in RegressorKind::ALL {
            assert_eq!(RegressorKind::parse(k.name()), Some(k));
            assert_eq!(k.to_string(), k.name());
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(json, format!("\"{}\"", k.name()));
            assert_eq!(serde_json::from_str::<RegressorKind>(&json).unwrap(), k);
        }
        for (alias, k) in [
            ("random-forest", RegressorKind::Forest),
            ("rf", RegressorKind::Forest),
            ("decision-tree", RegressorKind::Tree),
            ("gradient-boosting", RegressorKind::Gbm),
            ("gb", RegressorKind::Gbm),
            ("k-nn", RegressorKind::Knn),
            (" KNN ", RegressorKind::Knn),
            ("random_forest", RegressorKind::Forest),
        ] {
            assert_eq!(RegressorKind::parse(alias), Some(k), "{alias}");
        }
        assert_eq!(RegressorKind::parse("xgboost"), None);
        assert_eq!(RegressorKind::parse(""), None);
    }

    #[test]
    fn linear_recovers_plane_exactly() {
        let (x, y) = plane(50, 1);
        let m = fitted(RegressorKind::Linear, &x, &y);
        assert!(max_abs_err(&m.predict(&x).unwrap(), &y) < 1e-9);
        let (xt, yt) = plane(30, 2);
        assert!(max_abs_err(&m.predict(&xt).unwrap(), &yt) < 1e-9);
        let (b, w) = slopes(m.as_ref(), 3);
        assert!((b - 1.0).abs() < 1e-9, "intercept {b}");
        assert!((w[0] - 3.0).abs() < 1e-9, "w0 {}", w[0]);
        assert!((w[1] + 2.0).abs() < 1e-9, "w1 {}", w[1]);
        assert!(w[2].abs() < 1e-9, "w2 {}", w[2]);
    }

    #[test]
    fn ridge_shrinks_slightly() {
        let (x, y) = plane(50, 1);
        let m = fitted(RegressorKind::Ridge, &x, &y);
        let (_, w) = slopes(m.as_ref(), 3);
        // alpha 1 against n = 50 standardized rows: a few percent of shrinkage.
        assert!(w[0] > 2.8 && w[0] < 3.0, "w0 {}", w[0]);
        assert!(w[1] < -1.8 && w[1] > -2.0, "w1 {}", w[1]);
        assert!(w[2].abs() < 0.1, "w2 {}", w[2]);
        let (xt, yt) = plane(30, 2);
        assert!(max_abs_err(&m.predict(&xt).unwrap(), &yt) < 0.1);
        // With many rows the penalty is negligible.
        let (x, y) = plane(2000, 3);
        let m = fitted(RegressorKind::Ridge, &x, &y);
        let (b, w) = slopes(m.as_ref(), 3);
        assert!(
            (w[0] - 3.0).abs() < 3e-3 && (w[1] + 2.0).abs() < 3e-3,
            "{w:?}"
        );
        assert!((b - 1.0).abs() < 3e-3, "intercept {b}");
    }

    #[test]
    fn lasso_close_and_sparse() {
        let (x, y) = plane(50, 1);
        let m = fitted(RegressorKind::Lasso, &x, &y);
        let (b, w) = slopes(m.as_ref(), 3);
        // alpha 0.01 in standardized units shrinks each slope by about 0.01 / std(x) ~ 0.035.
        assert!((w[0] - 3.0).abs() < 0.1, "w0 {}", w[0]);
        assert!((w[1] + 2.0).abs() < 0.1, "w1 {}", w[1]);
        assert!(w[0] < 3.0 && w[1] > -2.0, "lasso must shrink: {w:?}");
        assert_eq!(w[2], 0.0, "irrelevant feature must be exactly zero");
        assert!((b - 1.0).abs() < 0.1, "intercept {b}");
        let (xt, yt) = plane(30, 2);
        assert!(max_abs_err(&m.predict(&xt).unwrap(), &yt) < 0.1);
    }

    #[test]
    fn trees_fit_step_and_generalize() {
        let (x, y) = step(200, 11);
        let (xt, yt) = step(400, 12);
        // Held-out points away from the boundary.
        let keep: Vec<usize> = (0..xt.nrows())
            .filter(|&i| (xt[[i, 0]] - 0.5).abs() > 0.05)
            .collect();
        let xt = xt.select(Axis(0), &keep);
        let yt = yt.select(Axis(0), &keep);
        for (kind, train_tol, test_tol) in [
            (RegressorKind::Tree, 1e-12, 1e-12),
            (RegressorKind::Forest, 0.3, 0.3),
            (RegressorKind::Gbm, 0.05, 0.05),
        ] {
            let m = fitted(kind, &x, &y);
            let train = max_abs_err(&m.predict(&x).unwrap(), &y);
            let test = max_abs_err(&m.predict(&xt).unwrap(), &yt);
            assert!(train <= train_tol, "{kind}: train max err {train}");
            assert!(test <= test_tol, "{kind}: held-out max err {test}");
        }
        // The forest's average error is far smaller than its worst case.
        let m = fitted(RegressorKind::Forest, &x, &y);
        let r = rmse(&m.predict(&xt).unwrap(), &yt);
        assert!(r < 0.1, "forest held-out rmse {r}");
    }

    #[test]
    fn knn_and_svr_fit_smooth_function() {
        let (x, y) = smooth(300, 21);
        let (xt, yt) = smooth(200, 22);
        let sd = {
            let m = yt.mean().unwrap();
            (yt.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / yt.len() as f64).sqrt()
        };
        for (kind, tol) in [(RegressorKind::Knn, 0.15), (RegressorKind::Svr, 0.1)] {
            let m = fitted(kind, &x, &y);
            let r = rmse(&m.predict(&xt).unwrap(), &yt);
            assert!(r < tol, "{kind}: held-out rmse {r} (target sd {sd})");
        }
        // Distance weighting: kNN reproduces training targets exactly.
        let m = fitted(RegressorKind::Knn, &x, &y);
        assert!(max_abs_err(&m.predict(&x).unwrap(), &y) < 1e-12);
        // SVR training residuals stay near the epsilon tube (eps 0.1 target sd).
        let m = fitted(RegressorKind::Svr, &x, &y);
        let train = rmse(&m.predict(&x).unwrap(), &y);
        assert!(train < 0.1, "svr train rmse {train}");
    }

    #[test]
    fn all_kinds_reasonable_on_plane() {
        let (x, y) = plane(300, 31);
        let (xt, yt) = plane(100, 32);
        for kind in RegressorKind::ALL {
            let m = fitted(kind, &x, &y);
            let pred = m.predict(&xt).unwrap();
            assert_eq!(pred.len(), xt.nrows());
            let r = rmse(&pred, &yt);
            assert!(r < 0.25, "{kind}: held-out rmse {r}");
        }
    }

    #[test]
    fn few_samples_many_features_and_constant_columns() {
        // 20 samples, 40 features, two constant columns: every kind fits and predicts.
        let mut x = Rng(41).matrix(20, 40);
        x.column_mut(5).fill(3.0);
        x.column_mut(17).fill(0.0);
        let y = x.map_axis(Axis(1), |r| 2.0 * r[0] - r[1]);
        let xt = Rng(42).matrix(10, 40);
        for kind in RegressorKind::ALL {
            let m = fitted(kind, &x, &y);
            let pred = m.predict(&xt).unwrap();
            assert_eq!(pred.len(), 10, "{kind}");
            assert!(pred.iter().all(|v| v.is_finite()), "{kind}: {pred}");
            // Predictions stay in a sane range (targets lie in [-1, 2]).
            assert!(pred.iter().all(|v| v.abs() < 10.0), "{kind}: {pred}");
        }
        // Linear interpolates the training data even though n < p.
        let m = fitted(RegressorKind::Linear, &x, &y);
        assert!(max_abs_err(&m.predict(&x).unwrap(), &y) < 1e-6);
    }

    #[test]
    fn constant_target_and_tiny_inputs() {
        let x = Rng(51).matrix(25, 4);
        let y = Array1::from_elem(25, 5.0);
        for kind in RegressorKind::ALL {
            let m = fitted(kind, &x, &y);
            let pred = m.predict(&Rng(52).matrix(5, 4)).unwrap();
            assert!(
                max_abs_err(&pred, &Array1::from_elem(5, 5.0)) < 1e-6,
                "{kind}: {pred}"
            );
        }
        // One to three samples: never panic; either an error or finite predictions.
        for n in 1..=3 {
            let x = Rng(53).matrix(n, 4);
            let y = Array1::from_shape_fn(n, |i| i as f64);
            for kind in RegressorKind::ALL {
                let mut m = make(kind, 1);
                if m.fit(&x, &y).is_ok() {
                    let pred = m.predict(&x).unwrap();
                    assert!(pred.iter().all(|v| v.is_finite()), "{kind} n={n}: {pred}");
                }
            }
        }
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        let (x, y) = plane(30, 61);
        for kind in RegressorKind::ALL {
            let mut m = make(kind, 0);
            assert!(m.predict(&x).is_err(), "{kind}: predict before fit");
            assert!(m.fit(&Array2::zeros((0, 3)), &Array1::zeros(0)).is_err());
            assert!(m.fit(&Array2::zeros((5, 0)), &Array1::zeros(5)).is_err());
            assert!(m.fit(&x, &Array1::zeros(29)).is_err(), "{kind}: short y");
            let mut xn = x.clone();
            xn[[3, 1]] = f64::NAN;
            let err = m.fit(&xn, &y).unwrap_err().to_string();
            assert!(err.contains(kind.name()) && err.contains("row 3"), "{err}");
            let mut yn = y.clone();
            yn[7] = f64::INFINITY;
            assert!(m.fit(&x, &yn).is_err(), "{kind}: inf target");

            m.fit(&x, &y).unwrap();
            assert!(
                m.predict(&Array2::zeros((4, 2))).is_err(),
                "{kind}: wrong width"
            );
            assert!(m.predict(&xn).is_err(), "{kind}: NaN at predict");
            assert_eq!(m.predict(&Array2::zeros((0, 3))).unwrap().len(), 0);
            // A failed fit leaves the model unfitted rather than stale.
            assert!(m.fit(&xn, &y).is_err());
            assert!(
                m.predict(&x).is_err(),
                "{kind}: stale model after failed fit"
            );
        }
    }

    #[test]
    fn deterministic_per_seed() {
        let x = Rng(71).matrix(300, 8);
        let y = x.map_axis(Axis(1), |r| (3.0 * r[0]).sin() + r[1] * r[2] + 0.1 * r[7]);
        let xt = Rng(72).matrix(50, 8);
        for kind in RegressorKind::ALL {
            let run = |seed| {
                let mut m = make(kind, seed);
                m.fit(&x, &y).unwrap();
                m.predict(&xt).unwrap()
            };
            let (a, b) = (run(5), run(5));
            assert!(
                a.iter()
                    .zip(b.iter())
                    .all(|(u, v)| u.to_bits() == v.to_bits()),
                "{kind}: same seed, different predictions"
            );
        }
        let run = |kind, seed| {
            let mut m = make(kind, seed);
            m.fit(&x, &y).unwrap();
            m.predict(&xt).unwrap()
        };
        assert_ne!(run(RegressorKind::Forest, 5), run(RegressorKind::Forest, 6));
    }

    /// Fit/predict timings on 2000 x 30; run with
    /// `cargo test --release -- --ignored --nocapture timings`.
    #[test]
    #[ignore]
    fn timings_2000x30() {
        let mut rng = Rng(81);
        let x = rng.matrix(2000, 30);
        let noise: Vec<f64> = (0..2000).map(|_| rng.uniform() - 0.5).collect();
        let y = Array1::from_shape_fn(2000, |i| {
            let r = x.row(i);
            (4.0 * r[0]).sin() + 2.0 * r[1] * r[2] - r[3] + 0.1 * noise[i]
        });
        let xt = Rng(82).matrix(2000, 30);
        let mut slow = Vec::new();
        for kind in RegressorKind::ALL {
            let mut m = make(kind, 1);
            let t0 = Instant::now();
            m.fit(&x, &y).unwrap();
            let fit = t0.elapsed().as_secs_f64();
            let t1 = Instant::now();
            let pred = m.predict(&xt).unwrap();
            let predict = t1.elapsed().as_secs_f64();
            assert!(pred.iter().all(|v| v.is_finite()));
            println!(
                "{:<18} fit {:>8.1} ms   predict(2000) {:>7.1} ms",
                kind.label(),
                fit * 1e3,
                predict * 1e3
            );
            if fit >= 1.0 {
                slow.push(format!("{kind}: fit took {fit:.3} s"));
            }
        }
        if !cfg!(debug_assertions) {
            assert!(slow.is_empty(), "{slow:?}");
        }
    }
}
