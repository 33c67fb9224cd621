//! Unit tests of the regressors. All fixtures are SYNTHETIC (seeded formulas).

use super::*;

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

/// SYNTHETIC fixture "plane": 3 features in [0,1), y = 3 x0 - 2 x1 + 1 (x2 irrelevant).
fn plane(n: usize, seed: u64) -> (Array2<f64>, Array1<f64>) {
    let x = Rng(seed).matrix(n, 3);
    let y = x.map_axis(Axis(1), |r| 3.0 * r[0] - 2.0 * r[1] + 1.0);
    (x, y)
}

/// SYNTHETIC fixture "step": 3 features in [0,1), y = 1 if x0 > 0.5 else 0.
fn step(n: usize, seed: u64) -> (Array2<f64>, Array1<f64>) {
    let x = Rng(seed).matrix(n, 3);
    let y = x.map_axis(Axis(1), |r| if r[0] > 0.5 { 1.0 } else { 0.0 });
    (x, y)
}

/// SYNTHETIC fixture "smooth": 2 features in [0,1), y = sin(2 pi x0) + x1^2.
fn smooth(n: usize, seed: u64) -> (Array2<f64>, Array1<f64>) {
    let x = Rng(seed).matrix(n, 2);
    let y = x.map_axis(Axis(1), |r| {
        (2.0 * std::f64::consts::PI * r[0]).sin() + r[1] * r[1]
    });
    (x, y)
}

/// SYNTHETIC fixture "wavy": 8 features in [0,1), nonlinear with interactions.
fn wavy(n: usize, seed: u64) -> (Array2<f64>, Array1<f64>) {
    let x = Rng(seed).matrix(n, 8);
    let y = x.map_axis(Axis(1), |r| (3.0 * r[0]).sin() + r[1] * r[2] + 0.1 * r[7]);
    (x, y)
}

fn fitted(kind: RegressorKind, x: &Array2<f64>, y: &Array1<f64>) -> FittedRegressor {
    make(kind, 7)
        .fit(x, y)
        .unwrap_or_else(|e| panic!("{kind}: fit failed: {e}"))
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

fn same_bits(a: &Array1<f64>, b: &Array1<f64>) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b.iter())
            .all(|(u, v)| u.to_bits() == v.to_bits())
}

/// Slopes of a fitted model in original units, read off by finite differences.
fn slopes(m: &FittedRegressor, p: usize) -> (f64, Vec<f64>) {
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
        assert_eq!(make(k, 3).kind(), k);
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
fn default_params_pass_check_and_bad_ones_are_named() {
    for k in RegressorKind::ALL {
        make(k, 1).check().unwrap_or_else(|e| panic!("{k}: {e}"));
    }
    let (x, y) = plane(30, 1);
    let bad: Vec<(RegressorParams, &str)> = vec![
        (
            RegressorParams::Ridge(RidgeParams { alpha: -1.0 }),
            "alpha must be >= 0, got -1",
        ),
        (
            RegressorParams::Lasso(LassoParams {
                tolerance: 0.0,
                ..Default::default()
            }),
            "tolerance must be > 0, got 0",
        ),
        (
            RegressorParams::Lasso(LassoParams {
                alpha: f64::NAN,
                ..Default::default()
            }),
            "alpha must be >= 0, got NaN",
        ),
        (
            RegressorParams::Lasso(LassoParams {
                max_iterations: 0,
                ..Default::default()
            }),
            "max_iterations must be >= 1, got 0",
        ),
        (
            RegressorParams::Tree(TreeParams {
                max_depth: Some(0),
                ..TreeParams::new(1)
            }),
            "max_depth must be >= 1, got 0",
        ),
        (
            RegressorParams::Tree(TreeParams {
                min_samples_leaf: 0,
                ..TreeParams::new(1)
            }),
            "min_samples_leaf must be >= 1, got 0",
        ),
        (
            RegressorParams::Forest(ForestParams {
                n_trees: 0,
                ..ForestParams::new(1)
            }),
            "n_trees must be >= 1, got 0",
        ),
        (
            RegressorParams::Forest(ForestParams {
                max_features: Some(0),
                ..ForestParams::new(1)
            }),
            "max_features must be >= 1, got 0",
        ),
        (
            RegressorParams::Svr(SvrParams {
                c: 0.0,
                ..Default::default()
            }),
            "c must be > 0, got 0",
        ),
        (
            RegressorParams::Svr(SvrParams {
                eps: 0.0,
                ..Default::default()
            }),
            "eps must be > 0, got 0",
        ),
        (
            RegressorParams::Knn(KnnParams {
                k: 0,
                ..Default::default()
            }),
            "k must be >= 1, got 0",
        ),
        (
            RegressorParams::Gbm(GbmParams {
                rounds: 0,
                ..GbmParams::new(1)
            }),
            "rounds must be >= 1, got 0",
        ),
        (
            RegressorParams::Gbm(GbmParams {
                learning_rate: 1.5,
                ..GbmParams::new(1)
            }),
            "learning_rate must be in (0, 1], got 1.5",
        ),
        (
            RegressorParams::Gbm(GbmParams {
                learning_rate: 0.0,
                ..GbmParams::new(1)
            }),
            "learning_rate must be in (0, 1], got 0",
        ),
        (
            RegressorParams::Gbm(GbmParams {
                subsample: 0.0,
                ..GbmParams::new(1)
            }),
            "subsample must be in (0, 1], got 0",
        ),
    ];
    for (params, what) in bad {
        let kind = params.kind();
        let err = params.check().unwrap_err().to_string();
        assert_eq!(
            err,
            format!("{kind}: invalid hyperparameter: {what}"),
            "{params:?}"
        );
        // fit checks first: the same error, not a silent clamp.
        assert_eq!(params.fit(&x, &y).unwrap_err().to_string(), err);
    }
    // The edges of the valid ranges are accepted.
    let edge = [
        RegressorParams::Ridge(RidgeParams { alpha: 0.0 }),
        RegressorParams::Gbm(GbmParams {
            learning_rate: 1.0,
            subsample: 1.0,
            ..GbmParams::new(1)
        }),
        RegressorParams::Knn(KnnParams {
            k: 1000,
            ..Default::default()
        }),
    ];
    for params in edge {
        params.fit(&x, &y).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn linear_recovers_plane_exactly() {
    let (x, y) = plane(50, 1);
    let m = fitted(RegressorKind::Linear, &x, &y);
    assert!(max_abs_err(&m.predict(&x).unwrap(), &y) < 1e-9);
    let (xt, yt) = plane(30, 2);
    assert!(max_abs_err(&m.predict(&xt).unwrap(), &yt) < 1e-9);
    let (b, w) = slopes(&m, 3);
    assert!((b - 1.0).abs() < 1e-9, "intercept {b}");
    assert!((w[0] - 3.0).abs() < 1e-9, "w0 {}", w[0]);
    assert!((w[1] + 2.0).abs() < 1e-9, "w1 {}", w[1]);
    assert!(w[2].abs() < 1e-9, "w2 {}", w[2]);
}

#[test]
fn ridge_shrinks_slightly() {
    let (x, y) = plane(50, 1);
    let m = fitted(RegressorKind::Ridge, &x, &y);
    let (_, w) = slopes(&m, 3);
    // alpha 1 against n = 50 standardized rows: a few percent of shrinkage.
    assert!(w[0] > 2.8 && w[0] < 3.0, "w0 {}", w[0]);
    assert!(w[1] < -1.8 && w[1] > -2.0, "w1 {}", w[1]);
    assert!(w[2].abs() < 0.1, "w2 {}", w[2]);
    let (xt, yt) = plane(30, 2);
    assert!(max_abs_err(&m.predict(&xt).unwrap(), &yt) < 0.1);
    // With many rows the penalty is negligible.
    let (x, y) = plane(2000, 3);
    let m = fitted(RegressorKind::Ridge, &x, &y);
    let (b, w) = slopes(&m, 3);
    assert!(
        (w[0] - 3.0).abs() < 3e-3 && (w[1] + 2.0).abs() < 3e-3,
        "{w:?}"
    );
    assert!((b - 1.0).abs() < 3e-3, "intercept {b}");
}

/// The closed-form ridge agrees with an independent solver: linfa-elasticnet's coordinate
/// descent at l1 ratio 0 (penalty alpha / n), also with fewer samples than features.
#[test]
fn ridge_matches_coordinate_descent() {
    for (n, p, seed) in [(200, 6, 91), (20, 40, 92)] {
        let x = Rng(seed).matrix(n, p);
        let y = x.map_axis(Axis(1), |r| (2.0 * r[0]).sin() - r[1] * r[2] + 0.5);
        let FittedRegressor::Ridge(exact) = fitted(RegressorKind::Ridge, &x, &y) else {
            panic!("ridge params fit a ridge model")
        };
        let alpha = RidgeParams::default().alpha;
        let cd =
            linear::elastic_net("ridge", &x, &y, alpha / n as f64, 0.0, 1e-13, 200_000).unwrap();
        let ((w, b), (w_cd, b_cd)) = (exact.coefficients(), cd.coefficients());
        assert!((b - b_cd).abs() < 1e-12, "n={n}: intercepts {b} vs {b_cd}");
        let worst = max_abs_err(w, w_cd);
        assert!(worst < 1e-6, "n={n} p={p}: max weight difference {worst}");
        assert!(
            w.iter().any(|v| v.abs() > 0.05),
            "n={n}: weights all ~0: {w}"
        );
    }
}

#[test]
fn lasso_close_and_sparse() {
    let (x, y) = plane(50, 1);
    let m = fitted(RegressorKind::Lasso, &x, &y);
    let (b, w) = slopes(&m, 3);
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

/// The three linfa-nn indexes find the same neighbours (no ties in this fixture), and the
/// prediction is the inverse-distance mean of the k nearest, computed here by brute force.
#[test]
fn knn_searches_agree_with_brute_force() {
    let (x, y) = wavy(200, 23);
    let xt = Rng(24).matrix(20, 8);
    let searches = [
        knn::NeighbourSearch::Linear,
        knn::NeighbourSearch::KdTree,
        knn::NeighbourSearch::BallTree,
    ];
    let preds: Vec<Array1<f64>> = searches
        .iter()
        .map(|&search| {
            let m = RegressorParams::Knn(KnnParams { k: 5, search });
            m.fit(&x, &y).unwrap().predict(&xt).unwrap()
        })
        .collect();
    let scaler = Standardizer::fit(&x);
    let (z, zq) = (scaler.transform(&x), scaler.transform(&xt));
    for (q, row) in zq.outer_iter().enumerate() {
        let mut d: Vec<(f64, usize)> = z
            .outer_iter()
            .enumerate()
            .map(|(i, r)| (r.iter().zip(row).map(|(a, b)| (a - b) * (a - b)).sum(), i))
            .collect();
        d.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (num, den) = d[..5].iter().fold((0.0, 0.0), |(n, w), &(d2, i)| {
            (n + y[i] / d2.sqrt(), w + 1.0 / d2.sqrt())
        });
        for (s, p) in searches.iter().zip(&preds) {
            assert!((p[q] - num / den).abs() < 1e-12, "{s:?} query {q}");
        }
    }
}

#[test]
fn all_kinds_reasonable_on_plane() {
    let (x, y) = plane(300, 31);
    let (xt, yt) = plane(100, 32);
    for kind in RegressorKind::ALL {
        let m = fitted(kind, &x, &y);
        assert_eq!(m.kind(), kind);
        assert_eq!(m.n_features(), 3);
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
            if let Ok(m) = make(kind, 1).fit(&x, &y) {
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
        let params = make(kind, 0);
        let err = params
            .fit(&Array2::zeros((0, 3)), &Array1::zeros(0))
            .unwrap_err()
            .to_string();
        assert_eq!(err, format!("{kind}: cannot fit on 0 samples"));
        assert!(params
            .fit(&Array2::zeros((5, 0)), &Array1::zeros(5))
            .is_err());
        let err = params.fit(&x, &Array1::zeros(29)).unwrap_err().to_string();
        assert_eq!(err, format!("{kind}: 30 samples in x but 29 targets in y"));
        let mut xn = x.clone();
        xn[[3, 1]] = f64::NAN;
        let err = params.fit(&xn, &y).unwrap_err().to_string();
        assert_eq!(
            err,
            format!("{kind}: feature matrix has non-finite value NaN at row 3, column 1")
        );
        let mut yn = y.clone();
        yn[7] = f64::INFINITY;
        assert!(params.fit(&x, &yn).is_err(), "{kind}: inf target");

        let m = params.fit(&x, &y).unwrap();
        let err = m.predict(&Array2::zeros((4, 2))).unwrap_err().to_string();
        assert_eq!(
            err,
            format!("{kind}: fitted on 3 features but asked to predict with 2")
        );
        assert!(m.predict(&xn).is_err(), "{kind}: NaN at predict");
        assert_eq!(m.predict(&Array2::zeros((0, 3))).unwrap().len(), 0);
    }
    // A query astronomically far from the training data: an error or a finite answer.
    let far = Array2::from_elem((1, 3), 1e300);
    for kind in RegressorKind::ALL {
        if let Ok(pred) = fitted(kind, &x, &y).predict(&far) {
            assert!(pred[0].is_finite(), "{kind}");
        }
    }
}

#[test]
fn deterministic_per_seed() {
    let (x, y) = wavy(300, 71);
    let xt = Rng(72).matrix(50, 8);
    let run = |kind, seed| make(kind, seed).fit(&x, &y).unwrap().predict(&xt).unwrap();
    for kind in RegressorKind::ALL {
        assert!(
            same_bits(&run(kind, 5), &run(kind, 5)),
            "{kind}: same seed, different predictions"
        );
    }
    assert_ne!(run(RegressorKind::Forest, 5), run(RegressorKind::Forest, 6));
}

/// Every fitted model survives a JSON round trip and then predicts bit-identically;
/// the params round-trip too.
#[test]
fn serde_round_trip_predicts_identically() {
    let (x, y) = wavy(300, 81);
    let xt = Rng(82).matrix(60, 8);
    for kind in RegressorKind::ALL {
        let params = make(kind, 9);
        let json = serde_json::to_string(&params).unwrap();
        assert_eq!(
            serde_json::from_str::<RegressorParams>(&json).unwrap(),
            params
        );
        let m = params.fit(&x, &y).unwrap();
        let json = serde_json::to_string(&m).unwrap();
        assert!(
            json.starts_with(&format!("{{\"{}\":", kind.name())),
            "{kind}: tagged by its name"
        );
        let back: FittedRegressor =
            serde_json::from_str(&json).unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert_eq!(back.kind(), kind);
        let (a, b) = (m.predict(&xt).unwrap(), back.predict(&xt).unwrap());
        assert!(same_bits(&a, &b), "{kind}: predictions changed after load");
    }
    let err = serde_json::from_str::<FittedRegressor>("{\"xgboost\": {}}").unwrap_err();
    assert!(err.to_string().contains("unknown variant"), "{err}");
}

/// A fitted model read back from JSON passes `check`; each hand edit that would make
/// it panic or predict from the wrong numbers fails it, naming what is wrong.
#[test]
fn check_refuses_broken_saved_models() {
    let (x, y) = wavy(200, 91);
    for kind in RegressorKind::ALL {
        let m = make(kind, 9).fit(&x, &y).unwrap();
        assert_eq!(m.check(), Ok(()), "{kind}: a fitted model is whole");
    }
    let edited = |kind: RegressorKind, edit: &dyn Fn(&mut serde_json::Value)| {
        let m = make(kind, 9).fit(&x, &y).unwrap();
        let mut v = serde_json::to_value(&m).unwrap();
        edit(&mut v[kind.name()]);
        let back: FittedRegressor = serde_json::from_value(v).unwrap();
        back.check().unwrap_err()
    };
    let set_array = |v: &mut serde_json::Value, values: Vec<f64>| {
        v["dim"] = serde_json::json!([values.len()]);
        v["data"] = serde_json::json!(values);
    };
    let e = edited(RegressorKind::Lasso, &|m| {
        set_array(&mut m["coef"], vec![0.5; 3])
    });
    assert_eq!(e, "lasso: 3 coefficients for 8 features");
    let e = edited(RegressorKind::Ridge, &|m| {
        m["intercept"] = serde_json::json!(1e308)
    });
    assert_eq!(
        e,
        "ridge: coefficients and intercept must be finite numbers within +-1e6"
    );
    let e = edited(RegressorKind::Linear, &|m| {
        set_array(&mut m["scaler"]["scale"], vec![0.0; 8])
    });
    assert_eq!(
        e,
        "linear: scaler means must be finite and scales finite and > 0"
    );
    let e = edited(RegressorKind::Svr, &|m| {
        let dim = m["model"]["sep_hyperplane"]["WeightedCombination"]["dim"].clone();
        let rows = dim[0].as_u64().unwrap() as usize;
        let sv = &mut m["model"]["sep_hyperplane"]["WeightedCombination"];
        sv["dim"] = serde_json::json!([rows, 7]);
        sv["data"] = serde_json::json!(vec![0.0; rows * 7]);
    });
    assert!(e.starts_with("svr: ") && e.contains("of 7 features"), "{e}");
    let e = edited(RegressorKind::Svr, &|m| {
        m["y_scale"] = serde_json::json!(0.0)
    });
    assert!(e.contains("y_scale > 0"), "{e}");
    let e = edited(RegressorKind::Svr, &|m| {
        m["model"]["kernel_method"] = serde_json::json!({"Gaussian": -1.0})
    });
    assert_eq!(
        e,
        "svr: kernel_method must be Gaussian with a finite width > 0"
    );
    let e = edited(RegressorKind::Gbm, &|m| {
        m["columns"] = serde_json::json!([3, 1])
    });
    assert_eq!(e, "gbm: columns must be ascending input columns below 8");
    let e = edited(RegressorKind::Gbm, &|m| {
        m["columns"] = serde_json::json!([8])
    });
    assert_eq!(e, "gbm: columns must be ascending input columns below 8");
    // forust-ml slices its trees by prediction_iteration: past them it panicked
    let trees = make(RegressorKind::Gbm, 9).fit(&x, &y).unwrap();
    let trees = serde_json::to_value(&trees).unwrap()["gbm"]["booster"]["trees"]
        .as_array()
        .unwrap()
        .len();
    let e = edited(RegressorKind::Gbm, &|m| {
        m["booster"]["prediction_iteration"] = serde_json::json!(trees + 1)
    });
    assert_eq!(
        e,
        format!(
            "gbm: booster.prediction_iteration {} must be 1 to the booster's {trees} trees",
            trees + 1
        )
    );
    let e = edited(RegressorKind::Gbm, &|m| {
        m["booster"]["best_iteration"] = serde_json::json!(trees)
    });
    assert!(e.contains("booster.best_iteration"), "{e}");
    let e = edited(RegressorKind::Gbm, &|m| {
        m["booster"]["trees"] = serde_json::json!([])
    });
    assert_eq!(e, "gbm: booster.trees is empty");
    let e = edited(RegressorKind::Knn, &|m| m["k"] = serde_json::json!(0));
    assert_eq!(e, "knn: k 0 is outside 1..=200");
    let e = edited(RegressorKind::Forest, &|m| {
        // the root's left child pointing back at the root: a walk that never ends
        m["trees"][0]["nodes"][0]["l"] = serde_json::json!(0)
    });
    assert!(
        e.starts_with("forest: tree 0 node 0: child 0 is not a node after it"),
        "{e}"
    );
}

/// The booster is fitted on the columns that vary: with constant columns added
/// anywhere, it predicts exactly what it predicts without them, and a matrix whose
/// every column is constant still fits (its base score).
#[test]
fn gbm_leaves_constant_columns_out_and_predicts_the_same() {
    let (x, y) = smooth(300, 61);
    let (xt, _) = smooth(50, 62);
    let with_constants = |m: &Array2<f64>| {
        let n = m.nrows();
        ndarray::concatenate(
            Axis(1),
            &[
                Array2::from_elem((n, 1), 1.0).view(),
                m.column(0).insert_axis(Axis(1)),
                Array2::from_elem((n, 2), 0.0).view(),
                m.column(1).insert_axis(Axis(1)),
            ],
        )
        .unwrap()
    };
    let plain = fitted(RegressorKind::Gbm, &x, &y);
    let padded = fitted(RegressorKind::Gbm, &with_constants(&x), &y);
    let saved = serde_json::to_value(&padded).unwrap();
    assert_eq!(saved["gbm"]["columns"], serde_json::json!([1, 4]));
    assert_eq!(padded.n_features(), 5);
    assert!(same_bits(
        &plain.predict(&xt).unwrap(),
        &padded.predict(&with_constants(&xt)).unwrap()
    ));
    // (at prediction time the left-out columns may hold anything)
    let mut other = with_constants(&xt);
    other.column_mut(2).fill(7.0);
    assert!(same_bits(
        &plain.predict(&xt).unwrap(),
        &padded.predict(&other).unwrap()
    ));
    let flat = Array2::from_elem((30, 3), 2.0);
    let y = Array1::from_shape_fn(30, |i| i as f64);
    let m = fitted(RegressorKind::Gbm, &flat, &y);
    let pred = m.predict(&flat).unwrap();
    assert!(
        pred.iter()
            .all(|v| (v - pred[0]).abs() < 1e-9 && v.is_finite()),
        "{pred}"
    );
}
