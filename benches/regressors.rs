//! Library vs hand-written regressors on SYNTHETIC data of gpucast's shapes (2k, 20k and
//! 100k rows x 30 correlated features, seeded): fit + predict time and held-out error.
//!
//! `cargo bench --bench regressors -- --quick` prints a one-shot table first (every pair,
//! every size it can afford: held-out RMSE, fit+predict seconds, largest difference between
//! the two implementations' predictions), then criterion measures the affordable pairs.
//! A criterion filter (e.g. `-- ridge`) restricts both to the matching names.
//!
//! The hand-written lasso and kNN below are the implementations gpucast used before it
//! moved them to `linfa-elasticnet` and `linfa-nn`; they live here only so the comparison
//! can be rerun. Ridge and the forest are the other way round: gpucast keeps its own
//! (closed-form ridge, histogram forest), and `linfa-elasticnet`'s ridge and `smartcore`'s
//! forest are the library side. The measured numbers are quoted in each regressor file's
//! module doc. The first row of each algorithm and size is the reference for the last
//! column.

use criterion::{BenchmarkId, Criterion};
use gpucast::models::regressors::{
    ForestParams, KnnParams, LassoParams, NeighbourSearch, RegressorKind, RegressorParams,
    RidgeParams,
};
use ndarray::{Array1, Array2, Axis};
use std::hint::black_box;
use std::time::{Duration, Instant};

const N_FEATURES: usize = 30;
const N_HELD_OUT: usize = 1000;
const SIZES: [usize; 3] = [2_000, 20_000, 100_000];

/// SplitMix64, so the data need no extra crate.
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
}

/// SYNTHETIC rows shaped like gpucast's design matrices: 30 features driven by 6 latent
/// factors (so columns are strongly correlated, as sizes, flops and bytes are), a third of
/// them on a log scale, and a nonlinear log-time-like target with a little noise.
fn synthetic(n: usize, seed: u64) -> (Array2<f64>, Array1<f64>) {
    let mut rng = Rng(seed);
    let mut x = Array2::zeros((n, N_FEATURES));
    let mut y = Array1::zeros(n);
    for i in 0..n {
        let u: Vec<f64> = (0..6).map(|_| rng.uniform()).collect();
        for j in 0..N_FEATURES {
            let base = u[j % 6] * (1.0 + (j / 6) as f64) + 0.05 * rng.uniform();
            x[[i, j]] = if j % 3 == 0 { (4.0 * base).exp() } else { base };
        }
        y[i] = 2.0 * u[0] + (3.0 * u[1]).sin() + u[2] * u[3] - 0.5 * u[4]
            + 0.05 * (rng.uniform() - 0.5);
    }
    (x, y)
}

fn rmse(a: &Array1<f64>, b: &Array1<f64>) -> f64 {
    let s: f64 = a.iter().zip(b).map(|(u, v)| (u - v) * (u - v)).sum();
    (s / a.len() as f64).sqrt()
}

fn max_abs_diff(a: &Array1<f64>, b: &Array1<f64>) -> f64 {
    a.iter()
        .zip(b)
        .map(|(u, v)| (u - v).abs())
        .fold(0.0, f64::max)
}

// ---------------------------------------------------------------------------------------
// Hand-written baselines (gpucast's former code)
// ---------------------------------------------------------------------------------------

/// Column means and standard deviations (1 for constant columns).
fn zscore_fit(x: &Array2<f64>) -> (Array1<f64>, Array1<f64>) {
    let n = x.nrows() as f64;
    let mean = x.sum_axis(Axis(0)) / n;
    let sd = Array1::from_iter(x.axis_iter(Axis(1)).zip(mean.iter()).map(|(c, m)| {
        let sd = (c.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / n).sqrt();
        if sd > 1e-12 * (1.0 + m.abs()) {
            sd
        } else {
            1.0
        }
    }));
    (mean, sd)
}

fn zscore(x: &Array2<f64>, (mean, sd): &(Array1<f64>, Array1<f64>)) -> Array2<f64> {
    (x - &mean.view().insert_axis(Axis(0))) / sd.view().insert_axis(Axis(0))
}

/// Ridge as `linfa-elasticnet` solves it (l1 ratio 0, penalty alpha / n), on z-scored
/// features, with the tolerance gpucast's lasso uses.
fn ridge_elasticnet(x: &Array2<f64>, y: &Array1<f64>, xt: &Array2<f64>) -> Array1<f64> {
    use linfa::traits::{Fit, Predict};
    let s = zscore_fit(x);
    let alpha = RidgeParams::default().alpha;
    let data = linfa::Dataset::new(zscore(x, &s), y.clone());
    let model = linfa_elasticnet::ElasticNet::params()
        .penalty(alpha / x.nrows() as f64)
        .l1_ratio(0.0)
        .tolerance(LassoParams::default().tolerance)
        .max_iterations(LassoParams::default().max_iterations)
        .fit(&data)
        .unwrap();
    model.predict(&zscore(xt, &s))
}

/// Cyclic coordinate descent for 1/(2n)|r|^2 + alpha |w|_1 on z-scored features.
fn lasso_hand(x: &Array2<f64>, y: &Array1<f64>, xt: &Array2<f64>, alpha: f64) -> Array1<f64> {
    let s = zscore_fit(x);
    let z = zscore(x, &s);
    let (n, p) = z.dim();
    let ybar = y.mean().unwrap();
    let mut r = y - ybar;
    let mut w = Array1::<f64>::zeros(p);
    let col_sq: Vec<f64> = z.axis_iter(Axis(1)).map(|c| c.dot(&c) / n as f64).collect();
    let y_scale = r.iter().map(|v| v.abs()).fold(0.0, f64::max).max(1e-300);
    for _ in 0..10_000 {
        let mut max_change = 0.0f64;
        for j in 0..p {
            if col_sq[j] <= 0.0 {
                continue;
            }
            let col = z.column(j);
            let old = w[j];
            let rho = col.dot(&r) / n as f64 + col_sq[j] * old;
            let new = rho.signum() * (rho.abs() - alpha).max(0.0) / col_sq[j];
            if new != old {
                r.scaled_add(old - new, &col);
                w[j] = new;
                max_change = max_change.max((new - old).abs());
            }
        }
        if max_change <= 1e-10 * y_scale {
            break;
        }
    }
    zscore(xt, &s).dot(&w) + ybar
}

/// Brute-force kNN (select_nth), inverse-distance weights, on z-scored features.
fn knn_hand(x: &Array2<f64>, y: &Array1<f64>, xt: &Array2<f64>, k: usize) -> Array1<f64> {
    let s = zscore_fit(x);
    let (z, zq) = (zscore(x, &s), zscore(xt, &s));
    let mut dist: Vec<(f64, usize)> = Vec::with_capacity(z.nrows());
    zq.map_axis(Axis(1), |q| {
        dist.clear();
        dist.extend(z.outer_iter().enumerate().map(|(i, r)| {
            let d2: f64 = r.iter().zip(q.iter()).map(|(a, b)| (a - b) * (a - b)).sum();
            (d2, i)
        }));
        let by = |a: &(f64, usize), b: &(f64, usize)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1));
        dist.select_nth_unstable_by(k - 1, by);
        let near = &dist[..k];
        let exact: Vec<f64> = near.iter().filter(|d| d.0 == 0.0).map(|d| y[d.1]).collect();
        if !exact.is_empty() {
            return exact.iter().sum::<f64>() / exact.len() as f64;
        }
        let (num, den) = near.iter().fold((0.0, 0.0), |(n, w), &(d2, i)| {
            (n + y[i] / d2.sqrt(), w + 1.0 / d2.sqrt())
        });
        num / den
    })
}

/// smartcore's random forest with gpucast's forest settings (100 trees, m = p/3, full depth).
fn forest_smartcore(x: &Array2<f64>, y: &Array1<f64>, xt: &Array2<f64>) -> Array1<f64> {
    use smartcore::ensemble::random_forest_regressor::{
        RandomForestRegressor, RandomForestRegressorParameters,
    };
    use smartcore::linalg::basic::matrix::DenseMatrix;
    let dense = |a: &Array2<f64>| {
        DenseMatrix::new(a.nrows(), a.ncols(), a.iter().copied().collect(), false).unwrap()
    };
    let params = RandomForestRegressorParameters::default()
        .with_n_trees(100)
        .with_m((N_FEATURES / 3).max(1))
        .with_min_samples_leaf(1)
        .with_seed(7);
    let model = RandomForestRegressor::fit(&dense(x), &y.to_vec(), params).unwrap();
    Array1::from(model.predict(&dense(xt)).unwrap())
}

// ---------------------------------------------------------------------------------------
// The pairs
// ---------------------------------------------------------------------------------------

type Impl = fn(&Array2<f64>, &Array1<f64>, &Array2<f64>) -> Array1<f64>;
/// Fit on (x, y), predict the held-out rows.
type Run = Box<dyn Fn(&Array2<f64>, &Array1<f64>, &Array2<f64>) -> Array1<f64>>;

fn lib(
    params: RegressorParams,
) -> impl Fn(&Array2<f64>, &Array1<f64>, &Array2<f64>) -> Array1<f64> {
    move |x, y, xt| params.fit(x, y).unwrap().predict(xt).unwrap()
}

/// (name, implementation, largest training size for the one-shot table, for criterion).
struct Entry {
    name: &'static str,
    run: Run,
    max_rows_table: usize,
    max_rows_criterion: usize,
}

fn entries() -> Vec<(&'static str, Vec<Entry>)> {
    let e = |name, run: Run, t, c| Entry {
        name,
        run,
        max_rows_table: t,
        max_rows_criterion: c,
    };
    let ridge_alpha = RidgeParams::default().alpha;
    let lasso_alpha = LassoParams::default().alpha;
    let knn = |search| RegressorParams::Knn(KnnParams { k: 5, search });
    let hand_lasso: Impl = |x, y, xt| lasso_hand(x, y, xt, 0.01);
    let hand_knn: Impl = |x, y, xt| knn_hand(x, y, xt, 5);
    assert_eq!(
        (ridge_alpha, lasso_alpha),
        (1.0, 0.01),
        "baselines use the defaults"
    );
    vec![
        (
            "ridge",
            vec![
                e(
                    "gpucast (Cholesky)",
                    Box::new(lib(RegressorParams::Ridge(RidgeParams::default()))),
                    100_000,
                    100_000,
                ),
                // 1.4 s at 2k, 21 s at 20k, 190 s at 100k when measured: 2k, table only.
                e(
                    "linfa-elasticnet",
                    Box::new(ridge_elasticnet as Impl),
                    2_000,
                    0,
                ),
            ],
        ),
        (
            "lasso",
            vec![
                // Coordinate descent on correlated columns: ~10 s at 20k, ~2 min at 100k.
                e("hand (CD)", Box::new(hand_lasso), 20_000, 2_000),
                e(
                    "linfa-elasticnet",
                    Box::new(lib(RegressorParams::Lasso(LassoParams::default()))),
                    20_000,
                    2_000,
                ),
            ],
        ),
        (
            "knn",
            vec![
                e("hand (brute force)", Box::new(hand_knn), 100_000, 20_000),
                e(
                    "linfa-nn linear",
                    Box::new(lib(knn(NeighbourSearch::Linear))),
                    100_000,
                    20_000,
                ),
                e(
                    "linfa-nn kd-tree",
                    Box::new(lib(knn(NeighbourSearch::KdTree))),
                    100_000,
                    20_000,
                ),
                e(
                    "linfa-nn ball-tree",
                    Box::new(lib(knn(NeighbourSearch::BallTree))),
                    20_000,
                    2_000,
                ),
            ],
        ),
        (
            "forest",
            vec![
                // 31 s at 100k when measured: up to 20k here.
                e(
                    "gpucast (histogram)",
                    Box::new(lib(RegressorParams::Forest(ForestParams::new(7)))),
                    20_000,
                    2_000,
                ),
                // ~seconds per fit at 2k rows: table only.
                e("smartcore", Box::new(forest_smartcore as Impl), 2_000, 0),
            ],
        ),
        (
            "kept (no comparison)",
            // SVR's kernel matrix grows with n^2: 2k rows only.
            [
                (RegressorKind::Linear, 100_000),
                (RegressorKind::Tree, 2_000),
                (RegressorKind::Svr, 2_000),
                (RegressorKind::Gbm, 20_000),
            ]
            .into_iter()
            .map(|(k, rows)| e(k.name(), Box::new(lib(RegressorParams::new(k, 7))), rows, 0))
            .collect(),
        ),
    ]
}

/// Criterion's name filter, if any (the first argument that is not an option).
fn filter() -> Option<String> {
    std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .filter(|a| !a.is_empty())
}

fn main() {
    let filter = filter();
    let wanted = |id: &str| filter.as_ref().is_none_or(|f| id.contains(f.as_str()));
    let (xt, yt) = synthetic(N_HELD_OUT, 999);
    let data: Vec<(usize, Array2<f64>, Array1<f64>)> = SIZES
        .iter()
        .map(|&n| {
            let (x, y) = synthetic(n, n as u64);
            (n, x, y)
        })
        .collect();
    let groups = entries();

    println!("SYNTHETIC data, {N_FEATURES} features, {N_HELD_OUT} held-out rows; one run each");
    println!(
        "{:<22} {:<20} {:>7} {:>10} {:>12} {:>14}",
        "algorithm", "implementation", "rows", "rmse", "fit+pred s", "max |diff| 1st"
    );
    for (group, impls) in &groups {
        for (n, x, y) in &data {
            let mut first: Option<Array1<f64>> = None;
            for imp in impls.iter().filter(|i| *n <= i.max_rows_table) {
                if !wanted(&format!("{group}/{}/{n}", imp.name)) {
                    continue;
                }
                let t0 = Instant::now();
                let pred = (imp.run)(x, y, &xt);
                let secs = t0.elapsed().as_secs_f64();
                let diff = first.as_ref().map(|f| max_abs_diff(f, &pred));
                println!(
                    "{:<22} {:<20} {:>7} {:>10.5} {:>12.3} {:>14}",
                    group,
                    imp.name,
                    n,
                    rmse(&pred, &yt),
                    secs,
                    diff.map(|d| format!("{d:.2e}")).unwrap_or_default()
                );
                if *group != "kept (no comparison)" {
                    first.get_or_insert(pred);
                }
            }
        }
    }

    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    for (group, impls) in &groups {
        let mut g = c.benchmark_group(*group);
        for (n, x, y) in &data {
            for imp in impls.iter().filter(|i| *n <= i.max_rows_criterion) {
                g.bench_with_input(BenchmarkId::new(imp.name, n), &(x, y), |b, (x, y)| {
                    b.iter(|| black_box((imp.run)(x, y, &xt)))
                });
            }
        }
        g.finish();
    }
    c.final_summary();
}
