//! Models and protocols: numbers on the reference data, honesty of LOGO, determinism.

mod common;

use common::*;
use gpucast::catalog::Catalog;
use gpucast::data::Query;
use gpucast::data::{self, Run};
use gpucast::error::Result;
use gpucast::evaluation::{self, Protocol, Selection};
use gpucast::features::{Calibration, KernelResources};
use gpucast::models::{Context, Evidence, Fit, LaunchFloors, ModelSpec, Predict, Prediction};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

fn resources() -> KernelResources {
    KernelResources::from_csv(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benchmarks_cuda/inspect/resources.csv"),
    )
    .unwrap()
}

fn reference() -> (Vec<Run>, Catalog) {
    let dir = reference_data();
    let catalog = Catalog::builtin();
    let mut t = data::load(&[dir]).unwrap();
    data::validate(&mut t, &catalog).unwrap();
    (t.runs, catalog)
}

/// LOGO of the named models on the reference data with the shipped kernel resources.
fn reference_logo(models: &[&str]) -> evaluation::Evaluation {
    let (runs, catalog) = reference();
    let res = resources();
    let ctx = resources_context(&catalog, &res);
    let specs: Vec<ModelSpec> = models
        .iter()
        .map(|m| ModelSpec::parse(m, 42).unwrap())
        .collect();
    let fits: Vec<&dyn Fit> = specs.iter().map(|s| s as &dyn Fit).collect();
    logo(&runs, &Selection::default(), &fits, &ctx)
}

/// Leave-one-GPU-out of `fits` on `runs`.
fn logo(runs: &[Run], sel: &Selection, fits: &[&dyn Fit], ctx: &Context) -> evaluation::Evaluation {
    evaluation::evaluate(runs, &Protocol::Logo, sel, fits, ctx, &|| {}).unwrap()
}

/// Catalog-only figures, the shipped kernel resources (`res`, from [`resources`]).
fn resources_context<'a>(catalog: &'a Catalog, res: &'a KernelResources) -> Context<'a> {
    Context::new(catalog, &Calibration::Spec, Some(res))
}

/// Catalog-only figures, the runs' own register counts.
fn spec_context(catalog: &Catalog) -> Context<'_> {
    Context::new(catalog, &Calibration::Spec, None)
}

/// The runs of a SYNTHETIC runs CSV, loaded and validated against the built-in catalog.
fn synthetic_runs(csv: &str) -> Vec<Run> {
    let (_d, p) = write_tmp("runs.csv", csv);
    let mut t = data::load(&[p]).unwrap();
    data::validate(&mut t, &Catalog::builtin()).unwrap();
    t.runs
}

fn mape_by_target(
    runs: &[Run],
    catalog: &Catalog,
    cal: &Calibration,
    res: Option<&KernelResources>,
    model: &str,
    sel: &Selection,
) -> Vec<(String, f64, usize)> {
    let ctx = Context::new(catalog, cal, res);
    let spec = ModelSpec::parse(model, 42).unwrap();
    let e = evaluation::evaluate(runs, &Protocol::Logo, sel, &[&spec], &ctx, &|| {}).unwrap();
    e.results
        .iter()
        .map(|r| (r.target.clone(), r.metrics.mape, r.metrics.n))
        .collect()
}

#[test]
fn analytical_logo_stays_within_40_percent_per_gpu() {
    let (runs, catalog) = reference();
    let res = resources();
    let rows = mape_by_target(
        &runs,
        &catalog,
        &Calibration::Spec,
        Some(&res),
        "analytical",
        &Selection::default(),
    );
    for (t, mape, n) in &rows {
        if t != "NVIDIA GeForce GTX TITAN X" {
            assert!(*mape <= 40.0, "{t}: MAPE {mape:.1} % over {n} rows");
            assert!(*n >= 45, "{t}: only {n} predictions");
        }
    }
}

#[test]
fn hybrid_interval_covers_most_measurements() {
    let e = reference_logo(&["hybrid"]);
    let all = e.results.iter().find(|r| r.target == "all").unwrap();
    // a 90 % interval from held-out errors of the training GPUs
    assert!(
        all.metrics.interval_coverage >= 0.8,
        "coverage {}",
        all.metrics.interval_coverage
    );
    assert!(
        all.metrics.mape <= 30.0,
        "pooled hybrid MAPE {}",
        all.metrics.mape
    );
}

#[test]
fn study_algorithm_reproduces_experiment_1() {
    let (runs, catalog) = reference();
    let dir = reference_data();
    let cal = Calibration::from_study_metrics(&dir.join("gpu_metrics.json"), &catalog).unwrap();
    let sel = Selection {
        targets: Some(vec!["NVIDIA TITAN V".into()]),
        sources: Some(vec![
            "NVIDIA GeForce RTX 2080 Ti".into(),
            "NVIDIA GeForce RTX 4070".into(),
        ]),
        per_source: true,
        ..Selection::default()
    };
    let rows = mape_by_target(&runs, &catalog, &cal, None, "analytical-study", &sel);
    let all = rows.iter().find(|r| r.0 == "all").unwrap();
    // published: 86.62 %
    assert!((all.1 - 86.62).abs() < 2.0, "Exp 1 MAPE {:.2}", all.1);
}

/// A model that records, per fit, the distinct values of one field of the runs it
/// was fitted on (their GPUs, their kernels) and predicts 1 ms.
struct Spy(Arc<Mutex<Vec<Vec<String>>>>, fn(&Run) -> &str);
impl Fit for Spy {
    fn name(&self) -> String {
        "spy".into()
    }
    fn fit(&self, train: &[&Run], _: &Context) -> Result<Box<dyn Predict>> {
        let mut g: Vec<String> = train.iter().map(|r| self.1(r).to_string()).collect();
        g.sort();
        g.dedup();
        self.0.lock().unwrap().push(g);
        Ok(Box::new(FittedSpy))
    }
}
struct FittedSpy;
impl Predict for FittedSpy {
    fn name(&self) -> String {
        "spy".into()
    }
    fn predict(&self, q: &Query, ev: &Evidence, _: &Context) -> Result<Option<Prediction>> {
        assert!(
            ev.same_work(q, "").iter().all(|r| r.gpu != q.gpu),
            "evidence holds a target row"
        );
        assert!(q.time_ms.is_nan(), "the query carries its measurement");
        Ok(Some(Prediction {
            pred_ms: 1.0,
            lo_ms: 1.0,
            hi_ms: 1.0,
            interval: gpucast::models::Interval::None,
            bound: gpucast::features::Bound::Dram,
        }))
    }
}

/// SYNTHETIC runs of `kernels` at `sizes` sizes each on three GPUs.
fn three_gpu_runs(kernels: &[&str], sizes: u32) -> Vec<Run> {
    let mut text = String::from("gpu,kernel,config,time_ms,flops,dram_bytes\n");
    for g in [
        "NVIDIA TITAN V",
        "NVIDIA GeForce RTX 2080 Ti",
        "NVIDIA GeForce RTX 4070",
    ] {
        for k in kernels {
            for n in 1..=sizes {
                text += &format!("{g},{k},N={n},{},0,{}\n", n as f64 * 0.1, n * 1000);
            }
        }
    }
    synthetic_runs(&text)
}

/// `score_kernels` scores only those kernels, while every fold still trains on the
/// others (off the target GPU); a kernel the data lacks is an error, not an empty
/// table.
#[test]
fn scored_kernels_are_scored_and_the_others_still_train() {
    let catalog = Catalog::builtin();
    let runs = three_gpu_runs(&["mine", "theirs"], 2);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let spy = Spy(seen.clone(), |r| r.kernel.as_str());
    let sel = Selection {
        score_kernels: Some(vec!["mine".into()]),
        ..Selection::default()
    }
    .resolved(&catalog, &runs)
    .unwrap();
    let ctx = spec_context(&catalog);
    let e = logo(&runs, &sel, &[&spy], &ctx);
    assert_eq!(
        e.records.len(),
        6,
        "two runs of 'mine' on each of three targets"
    );
    assert!(e.records.iter().all(|r| &*r.kernel == "mine"));
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 3);
        assert!(seen.iter().all(|k| *k == ["mine", "theirs"]), "{seen:?}");
    }
    // without the selection every run is scored
    let all = logo(&runs, &Selection::default(), &[&spy], &ctx);
    assert_eq!(all.records.len(), 12);
    let err = Selection {
        score_kernels: Some(vec!["nope".into()]),
        ..Selection::default()
    }
    .resolved(&catalog, &runs)
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("kernel 'nope' to score has no rows in the data"),
        "{err}"
    );
}

#[test]
fn logo_never_shows_the_target_to_the_model() {
    let catalog = Catalog::builtin();
    let runs = three_gpu_runs(&["k"], 3);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let spy = Spy(seen.clone(), |r| r.gpu.as_str());
    let ctx = spec_context(&catalog);
    let e = logo(&runs, &Selection::default(), &[&spy], &ctx);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3);
    // Folds fit in parallel, in any order: each fit saw two GPUs, and the GPU each
    // one left out is, fold by fold, every scored target once.
    let all = [
        "NVIDIA GeForce RTX 2080 Ti",
        "NVIDIA GeForce RTX 4070",
        "NVIDIA TITAN V",
    ];
    let mut left_out: Vec<&str> = seen
        .iter()
        .map(|fit_gpus| {
            assert_eq!(fit_gpus.len(), 2, "{fit_gpus:?}");
            let missing: Vec<&str> = all
                .iter()
                .copied()
                .filter(|g| !fit_gpus.iter().any(|f| f == g))
                .collect();
            assert_eq!(missing.len(), 1, "{fit_gpus:?}");
            missing[0]
        })
        .collect();
    left_out.sort();
    let mut targets: Vec<&str> = e
        .results
        .iter()
        .map(|r| r.target.as_str())
        .filter(|t| *t != "all")
        .collect();
    targets.sort();
    assert_eq!(left_out, targets);
    assert_eq!(left_out, all);
}

#[test]
fn synthetic_memory_bound_projection_scales_with_bandwidth() {
    // SYNTHETIC: a 1 GB stream (far larger than any L2) measured at 2 ms on the TITAN V.
    let text = "gpu,kernel,config,time_ms,flops,dram_bytes,working_set_bytes\n\
NVIDIA TITAN V,stream,N=1,2.0,0,1e9,1e9\n";
    let catalog = Catalog::builtin();
    let runs = synthetic_runs(text);
    let ctx = spec_context(&catalog);
    let ev = Evidence::new(runs.iter());
    let q = Query::on(&runs[0], "NVIDIA H100 SXM5 80GB");
    let p = ModelSpec::parse("analytical", 1)
        .unwrap()
        .fit(&[], &ctx)
        .unwrap()
        .predict(&q, &ev, &ctx)
        .unwrap()
        .unwrap();
    // The only (2 ms) run is too long to be a floor: the default 1.5 µs floor applies,
    // eta = 1 GB / (0.85 x 652.8 GB/s) / 2 ms ~ 0.9, so ~ the bandwidth ratio.
    let bw_ratio = 652.8 / 3352.0;
    assert!(
        p.pred_ms > 2.0 * bw_ratio * 0.9 && p.pred_ms < 2.0 * bw_ratio * 1.3,
        "{}",
        p.pred_ms
    );
    assert_eq!(p.bound, gpucast::features::Bound::Dram);
    assert!(p.lo_ms <= p.pred_ms && p.pred_ms <= p.hi_ms);
    // never faster than the H100's peak bandwidth allows for 1 GB
    assert!(p.lo_ms >= 1e9 / 3352e9 * 1e3, "{}", p.lo_ms);
    // one source GPU: nothing to calibrate an interval on, and the output says so
    assert_eq!(p.interval, gpucast::models::Interval::Spread);
}

#[test]
fn analytical_interval_is_calibrated_on_the_training_gpus() {
    let e = reference_logo(&["analytical"]);
    let all = e.results.iter().find(|r| r.target == "all").unwrap();
    assert_eq!(all.metrics.interval, "90%");
    // held-out errors of three training GPUs set a 90 % interval for the fourth
    assert!(
        (0.75..=0.98).contains(&all.metrics.interval_coverage),
        "coverage {}",
        all.metrics.interval_coverage
    );
    assert!(e.records.iter().all(|r| r.interval.label() == "90%"));
}

#[test]
fn hybrid_is_deterministic_for_a_seed() {
    let (runs, catalog) = reference();
    let ctx = spec_context(&catalog);
    let fit = |seed| {
        let h = ModelSpec::parse("hybrid", seed)
            .unwrap()
            .fit(&runs.iter().collect::<Vec<_>>(), &ctx)
            .unwrap();
        let ev = Evidence::new(runs.iter().filter(|r| r.gpu != "NVIDIA TITAN V"));
        runs.iter()
            .filter(|r| r.gpu == "NVIDIA TITAN V")
            .filter_map(|r| h.predict(&Query::of(r), &ev, &ctx).unwrap())
            .map(|p| p.pred_ms.to_bits())
            .collect::<Vec<u64>>()
    };
    let a = fit(7);
    assert!(a.len() > 40);
    assert_eq!(a, fit(7));
}

#[test]
fn hybrid_residual_share_is_a_fixed_diagnostic() {
    let (runs, catalog) = reference();
    let ctx = spec_context(&catalog);
    let target = "NVIDIA GeForce RTX 2080 Ti";
    let train: Vec<&Run> = runs.iter().filter(|r| r.gpu != target).collect();
    let ev = Evidence::new(train.iter().copied());
    let predict = |name: &str| {
        let spec = ModelSpec::parse(name, 42).unwrap();
        assert_eq!(spec.name(), name);
        let m = spec.fit(&train, &ctx).unwrap();
        runs.iter()
            .filter(|r| r.gpu == target)
            .filter_map(|r| m.predict(&Query::of(r), &ev, &ctx).unwrap())
            .map(|p| p.pred_ms)
            .collect::<Vec<f64>>()
    };
    let analytical = predict("analytical");
    assert!(analytical.len() > 40);
    // Share 0: exactly the analytical projection; share 1: the full correction moves it.
    assert_eq!(predict("hybrid@0"), analytical);
    let forced = predict("hybrid-forest@1");
    assert_eq!(forced.len(), analytical.len());
    let moved = forced
        .iter()
        .zip(&analytical)
        .filter(|(f, a)| (*f / *a - 1.0).abs() > 0.01)
        .count();
    assert!(
        moved * 2 > analytical.len(),
        "only {moved} predictions moved"
    );
}

#[test]
fn hybrid_names_parse_or_fail_clearly() {
    for ok in ["hybrid", "hybrid-forest", "hybrid@0.25", "hybrid-ridge@1"] {
        assert_eq!(ModelSpec::parse(ok, 1).unwrap().name(), ok);
    }
    for (bad, says) in [
        ("hybrid@1.5", "outside 0..1"),
        ("hybrid@x", "must be a number"),
        ("hybrid-nope", "unknown residual regressor"),
        ("hybrid-nope@0.5", "unknown residual regressor"),
    ] {
        let err = ModelSpec::parse(bad, 1).expect_err(bad).to_string();
        assert!(err.contains(says), "{bad}: {err}");
    }
}

/// Where the hybrid applies no correction (share 0, as in most folds of the reference
/// data's three training GPUs) it predicts what the analytical model does, interval
/// included; where it applies one, the predictions move.
#[test]
fn hybrid_without_correction_is_the_analytical_model_interval_included() {
    let e = reference_logo(&["analytical", "hybrid"]);
    let share_zero: Vec<&str> = e
        .fit_summaries
        .iter()
        .filter(|(m, _, s)| m == "hybrid" && s.starts_with("correction share 0 "))
        .map(|(_, fold, _)| fold.as_str())
        .collect();
    assert!(share_zero.len() >= 2, "{:?}", e.fit_summaries);
    let by = |m: &str, zero: bool| -> Vec<(f64, f64, f64)> {
        e.records
            .iter()
            .filter(|r| &*r.model == m && share_zero.contains(&&*r.target) == zero)
            .map(|r| (r.pred_ms, r.pred_lo_ms, r.pred_hi_ms))
            .collect()
    };
    assert!(!by("hybrid", true).is_empty());
    assert_eq!(by("analytical", true), by("hybrid", true));
    assert_ne!(by("analytical", false), by("hybrid", false));
}

/// SYNTHETIC: one kernel's 40 configurations (the same work each) on two Turing GPUs
/// (CC 7.5), whose times share one shape, and two Ampere GPUs (CC 8.6), whose times
/// share another; and the target, a third Turing GPU (returned with the runs).
fn turing_and_ampere_runs() -> (Vec<Run>, &'static str) {
    let turing = ["NVIDIA TITAN RTX", "NVIDIA GeForce RTX 2070 SUPER"];
    let ampere = [
        "NVIDIA GeForce RTX 3090",
        "NVIDIA GeForce RTX 3060 Laptop GPU",
    ];
    let target = "NVIDIA GeForce RTX 2080 Ti";
    let time = |gpu: &str, c: usize| {
        let x = c as f64;
        let shape = if gpu.contains("30") {
            1.0 + 0.6 * (0.7 * x).cos()
        } else {
            1.0 + 0.6 * (0.7 * x).sin()
        };
        // a GPU-specific scale and a little GPU-specific noise
        let scale = 1.0 + gpu.len() as f64 / 40.0;
        10.0 * scale * shape * (1.0 + 0.01 * ((x + gpu.len() as f64) * 1.3).sin())
    };
    let mut text = String::from("gpu,kernel,config,time_ms,flops,dram_bytes\n");
    for gpu in turing.iter().chain(&ampere).chain([&target]) {
        for c in 0..40 {
            text += &format!("{gpu},tiled,T={c},{},1e6,1e8\n", time(gpu, c));
        }
    }
    (synthetic_runs(&text), target)
}

#[test]
fn hybrid_borrows_the_tuning_space_shape_of_the_same_architecture() {
    // The target, the RTX 2080 Ti, is never seen in fitting.
    let (runs, target) = turing_and_ampere_runs();
    let catalog = Catalog::builtin();
    let ctx = spec_context(&catalog);
    let (train, test): (Vec<&Run>, Vec<&Run>) = runs.iter().partition(|r| r.gpu != target);
    let hybrid = gpucast::models::hybrid::HybridParams::new(1)
        .fit_hybrid(&train, &ctx)
        .unwrap();
    let shape = hybrid
        .state()
        .shape
        .clone()
        .expect("a shape transfer is fitted");
    // Pairs of other compute capabilities differ in shape far more than same ones.
    assert!(shape.coefficients[0] > 1.0, "{:?}", shape);
    assert_eq!(shape.strength_same_arch, 1.0);
    let analytical = ModelSpec::parse("analytical", 1)
        .unwrap()
        .fit(&train, &ctx)
        .unwrap();
    let ev = Evidence::new(train.iter().copied());
    let measured: Vec<f64> = test.iter().map(|r| r.time_ms).collect();
    let predicted = |m: &dyn Predict| -> Vec<f64> {
        test.iter()
            .map(|r| {
                m.predict(&Query::of(r), &ev, &ctx)
                    .unwrap()
                    .unwrap()
                    .pred_ms
            })
            .collect()
    };
    let (h, a) = (predicted(&hybrid), predicted(analytical.as_ref()));
    let (rho_h, rho_a) = (
        evaluation::spearman(&h, &measured),
        evaluation::spearman(&a, &measured),
    );
    // the Turing shape ranks the configurations (almost) exactly; the analytical model's
    // mix of both shapes less well, though it leans on the Turing sources too (0.955)
    assert!(
        rho_h > 0.97,
        "hybrid Spearman {rho_h} (analytical {rho_a}) {shape:?}"
    );
    assert!(
        rho_a < rho_h - 0.02,
        "analytical Spearman {rho_a} hybrid {rho_h}"
    );
}

#[test]
fn with_a_source_of_its_architecture_the_hybrid_takes_its_share_of_the_analytical_prediction() {
    use gpucast::models::analytical::FittedAnalytical;
    use gpucast::models::hybrid::{FittedHybrid, HybridParams, HybridState};
    let (runs, target) = turing_and_ampere_runs();
    let catalog = Catalog::builtin();
    let ctx = spec_context(&catalog);
    let (train, test): (Vec<&Run>, Vec<&Run>) = runs.iter().partition(|r| r.gpu != target);
    let fitted = HybridParams::new(1).fit_hybrid(&train, &ctx).unwrap();
    let with_share = |share: f64| {
        // (a copy through its file format: the fitted booster is not `Clone`)
        let text = serde_json::to_string(fitted.state()).unwrap();
        let mut state: HybridState = serde_json::from_str(&text).unwrap();
        state.analytical_share = share;
        FittedHybrid::from_state(state).unwrap()
    };
    let (none, half) = (with_share(0.0), with_share(0.5));
    let analytical = FittedAnalytical {
        similarity_power: fitted.state().analytical_power,
        launch_floors: fitted.state().launch_floors,
        ..FittedAnalytical::default()
    };
    let predict = |m: &dyn Predict, ev: &Evidence, r: &Run| {
        m.predict(&Query::of(r), ev, &ctx).unwrap().unwrap().pred_ms
    };
    // Turing sources: the geometric mean of its own prediction and the analytical fit's
    let ev = Evidence::new(train.iter().copied());
    let mut moved = 0;
    for r in &test {
        let (own, mixed, a) = (
            predict(&none, &ev, r),
            predict(&half, &ev, r),
            predict(&analytical, &ev, r),
        );
        assert!(
            (mixed / (own * a).sqrt() - 1.0).abs() < 1e-12,
            "{mixed} {own} {a}"
        );
        moved += usize::from((mixed / own - 1.0).abs() > 1e-3);
    }
    assert!(moved > 20, "the two differ: {moved} of {}", test.len());
    // Ampere sources only: none of it
    let ampere: Vec<&Run> = train
        .iter()
        .copied()
        .filter(|r| r.gpu.contains("30"))
        .collect();
    let ev = Evidence::new(ampere.iter().copied());
    for r in &test {
        assert_eq!(predict(&half, &ev, r), predict(&none, &ev, r));
    }
}

#[test]
fn a_source_of_the_targets_architecture_weighs_as_if_e_times_as_similar() {
    // SYNTHETIC: one work on a Turing, a Volta and an Ampere GPU, projected onto a
    // Turing one.
    let text = "gpu,kernel,config,time_ms,flops,dram_bytes,block_threads,grid_blocks\n\
NVIDIA TITAN RTX,k,N=1,2.0,1e9,4e8,256,4096\n\
NVIDIA TITAN V,k,N=1,1.2,1e9,4e8,256,4096\n\
NVIDIA A100 PCIe 40GB,k,N=1,0.8,1e9,4e8,256,4096\n";
    use gpucast::models::analytical::{combine, projections, SAME_ARCH_SIMILARITY};
    let catalog = Catalog::builtin();
    let runs = synthetic_runs(text);
    let q = data::Query::on(&runs[0], "NVIDIA GeForce RTX 2080 Ti");
    let ev = Evidence::new(runs.iter());
    let ctx = spec_context(&catalog);
    let preferred = projections(&q, &ev, &ctx).unwrap();
    let plain = projections(&q, &ev, &ctx.with_prefer_same_arch(false)).unwrap();
    assert_eq!(preferred.len(), 3);
    for ((src, p), (_, s)) in preferred.iter().zip(&plain) {
        let same = src.gpu == "NVIDIA TITAN RTX";
        assert_eq!(p.same_arch, same, "{}", src.gpu);
        assert_eq!(s.weight, s.similarity, "{}", src.gpu);
        let factor = if same { SAME_ARCH_SIMILARITY } else { 1.0 };
        assert_eq!(p.weight, p.similarity * factor, "{}", src.gpu);
        assert_eq!(p.pred_ms, s.pred_ms, "weights only: {}", src.gpu);
    }
    // the combination moves toward the Turing source's projection
    let turing = preferred[0].1.pred_ms;
    let with = combine(preferred.iter().map(|(_, p)| p)).unwrap().pred_ms;
    let without = combine(plain.iter().map(|(_, p)| p)).unwrap().pred_ms;
    assert!(
        (with.ln() - turing.ln()).abs() < (without.ln() - turing.ln()).abs(),
        "{with} {without} {turing}"
    );
}

#[test]
fn kernel_ratio_is_the_median_of_the_source_runs_projections_and_reads_no_target_run() {
    // SYNTHETIC: one kernel's 5 sizes on the TITAN V, and (for the second evidence)
    // the same sizes on the H100 at absurd times.
    let mut text = String::from("gpu,kernel,config,time_ms,flops,dram_bytes\n");
    for n in 1..=5u32 {
        let bytes = 1e8 * f64::from(n * n);
        // 100 GB/s down to 50 GB/s: within the TITAN V's peak, so none is excluded
        let time_ms = f64::from(n * n) * (1.0 + 0.25 * f64::from(n - 1));
        text += &format!("NVIDIA TITAN V,k,N={n},{time_ms},0,{bytes}\n");
    }
    let mut with_target = text.clone();
    for n in 1..=5 {
        with_target += &format!("NVIDIA H100 SXM5 80GB,k,N={n},{}\n", 1000.0 * n as f64)
            .replace('\n', ",0,1e8\n");
    }
    let load = |text: &str| synthetic_runs(text);
    let (source_only, both) = (load(&text), load(&with_target));
    let catalog = Catalog::builtin();
    let ctx = spec_context(&catalog);
    let target = "NVIDIA H100 SXM5 80GB";
    let ratio = |runs: &[Run]| {
        let ev = Evidence::new(runs.iter());
        gpucast::models::analytical::kernel_log_ratio(&runs[0], target, &ev, &ctx).unwrap()
    };
    // Each size projected on its own, then the median of ln(projected / measured).
    let ev = Evidence::new(source_only.iter());
    let (gs, gt) = (ctx.gpu("NVIDIA TITAN V").unwrap(), ctx.gpu(target).unwrap());
    let mut logs: Vec<f64> = source_only
        .iter()
        .map(|r| {
            let q = Query::on(r, target);
            let p = gpucast::models::analytical::project(r, &q, gs, gt, &ctx, &ev).unwrap();
            (p.pred_ms / r.time_ms).ln()
        })
        .collect();
    logs.sort_by(f64::total_cmp);
    assert!(
        logs[0] < logs[4] - 0.01,
        "the premise: sizes project differently"
    );
    assert!((ratio(&source_only) - logs[2]).abs() < 1e-12);
    // The target's own runs change nothing.
    assert!((ratio(&both) - logs[2]).abs() < 1e-12);
}

#[test]
fn projections_share_target_features_only_between_sources_describing_the_work_alike() {
    // SYNTHETIC: one work on three GPUs; the V100's row describes it differently (more
    // DRAM bytes, other registers and block size), so the target's features computed
    // for the TITAN V's and 2080 Ti's rows must not be reused for it.
    let text =
        "gpu,kernel,config,time_ms,flops,dram_bytes,block_threads,grid_blocks,regs_per_thread\n\
NVIDIA TITAN V,k,N=1,2.0,1e9,4e8,256,4096,32\n\
NVIDIA GeForce RTX 2080 Ti,k,N=1,2.4,1e9,4e8,256,4096,32\n\
Tesla V100-SXM2-16GB,k,N=1,1.8,1e9,9e8,128,8192,96\n";
    let catalog = Catalog::builtin();
    let runs = synthetic_runs(text);
    let ctx = spec_context(&catalog);
    let ev = Evidence::new(runs.iter());
    let q = Query::on(&runs[0], "NVIDIA H100 SXM5 80GB");
    let gt = ctx.gpu(&q.gpu).unwrap();
    let ps = gpucast::models::analytical::projections(&q, &ev, &ctx).unwrap();
    assert_eq!(ps.len(), 3);
    for (src, p) in &ps {
        let alone = gpucast::models::analytical::project(
            src,
            &q,
            ctx.gpu(&src.gpu).unwrap(),
            gt,
            &ctx,
            &ev,
        )
        .unwrap();
        assert_eq!(p.pred_ms, alone.pred_ms, "{}", src.gpu);
        assert_eq!(p.target.roof_ms, alone.target.roof_ms, "{}", src.gpu);
        assert_eq!(
            p.target.parallelism, alone.target.parallelism,
            "{}",
            src.gpu
        );
    }
    // the V100's row describes more traffic: its target roof is the larger
    assert!(ps[2].1.target.roof_ms > ps[0].1.target.roof_ms);
}

/// A stage that moves every projection by `log_move` and the prediction by `factor`.
struct Fixed {
    log_move: f64,
    factor: f64,
}
impl gpucast::models::stages::Stage for Fixed {
    fn name(&self) -> &'static str {
        "fixed"
    }
    fn projection_moves<'a>(
        &self,
        draft: &gpucast::models::stages::Draft<'_, 'a>,
        _: &Evidence<'a>,
        _: &Context,
    ) -> Result<Option<Vec<f64>>> {
        Ok(Some(vec![self.log_move; draft.made.len()]))
    }
    fn prediction_factor<'a>(
        &self,
        draft: &gpucast::models::stages::Draft<'_, 'a>,
        _: &Evidence<'a>,
        _: &Context,
    ) -> Result<f64> {
        // (a later stage sees the earlier ones' factors in pred_ms)
        assert!(draft.pred_ms.is_finite());
        Ok(self.factor)
    }
}

#[test]
fn the_hybrids_stages_move_projections_then_the_combined_prediction() {
    use gpucast::models::stages::{self, AnalyticalShare, KernelRatio, Residual, Shape, Stage};
    // SYNTHETIC: one work on three GPUs, predicted on a fourth.
    let text = "gpu,kernel,config,time_ms,flops,dram_bytes,block_threads,grid_blocks\n\
NVIDIA TITAN V,k,N=1,2.0,1e9,4e8,256,4096\n\
NVIDIA GeForce RTX 2080 Ti,k,N=1,2.4,1e9,4e8,256,4096\n\
Tesla V100-SXM2-16GB,k,N=1,1.8,1e9,4e8,256,4096\n";
    let catalog = Catalog::builtin();
    let runs = synthetic_runs(text);
    let ctx = spec_context(&catalog);
    let ev = Evidence::new(runs.iter());
    let q = Query::on(&runs[0], "NVIDIA H100 SXM5 80GB");
    let made = gpucast::models::analytical::projections(&q, &ev, &ctx).unwrap();
    let analytical = gpucast::models::analytical::combine(made.iter().map(|(_, p)| p)).unwrap();
    // Stages at their "nothing learned" values leave the analytical combination.
    let idle_residual = Residual {
        regressor: None,
        share: 1.0,
        categories: &[],
    };
    let idle: [&dyn Stage; 4] = [
        &idle_residual,
        &KernelRatio { share: 0.0 },
        &Shape { transfer: None },
        &AnalyticalShare {
            share: 0.0,
            fit: gpucast::models::analytical::Candidate {
                prefer_same_arch: true,
                power: 1,
            },
        },
    ];
    let (p, c) = stages::apply(&idle, &q, &made, &ev, &ctx).unwrap().unwrap();
    assert_eq!(p, analytical);
    assert!(!c.is_empty());
    // Moves of every projection by ln 2 double the combination; factors multiply.
    let (doubled, _) = stages::apply(
        &[&Fixed {
            log_move: 2f64.ln(),
            factor: 1.0,
        }],
        &q,
        &made,
        &ev,
        &ctx,
    )
    .unwrap()
    .unwrap();
    assert!((doubled.pred_ms / analytical.pred_ms - 2.0).abs() < 1e-12);
    let (p, _) = stages::apply(
        &[
            &Fixed {
                log_move: 0.0,
                factor: 3.0,
            },
            &Fixed {
                log_move: 0.0,
                factor: 0.5,
            },
        ],
        &q,
        &made,
        &ev,
        &ctx,
    )
    .unwrap()
    .unwrap();
    assert!((p.pred_ms / analytical.pred_ms - 1.5).abs() < 1e-12);
    assert!((p.lo_ms / analytical.lo_ms - 1.5).abs() < 1e-12);
    // The trace says what each stage did; it changes nothing.
    let mut trace = stages::StageTrace::default();
    let both: [&dyn Stage; 2] = [
        &Fixed {
            log_move: 2f64.ln(),
            factor: 1.0,
        },
        &Fixed {
            log_move: 0.0,
            factor: 0.5,
        },
    ];
    let (traced, _) = stages::apply_traced(&both, &q, &made, &ev, &ctx, Some(&mut trace))
        .unwrap()
        .unwrap();
    assert_eq!(
        Some(traced),
        stages::apply(&both, &q, &made, &ev, &ctx)
            .unwrap()
            .map(|x| x.0)
    );
    assert_eq!(trace.combined_ms, analytical.pred_ms);
    let factors: Vec<f64> = trace.effects.iter().map(|e| e.factor).collect();
    assert_eq!(factors.len(), 2);
    assert!((factors[0] - 2.0).abs() < 1e-12 && (factors[1] - 0.5).abs() < 1e-12);
    assert!((traced.pred_ms / analytical.pred_ms - 1.0).abs() < 1e-12);
    // No projection, no prediction.
    assert!(stages::apply(&idle, &q, &[], &ev, &ctx).unwrap().is_none());
}

#[test]
fn analytical_predict_work_equals_predict_of_the_query() {
    // predict_work skips the query copy; it must give exactly what predict gives, on
    // the same-work path (every reference row on every GPU) and on the size path (a
    // GPU's rows predicted on itself from that GPU alone: no other GPU measured them).
    let (runs, catalog) = reference();
    let res = resources();
    let ctx = resources_context(&catalog, &res);
    let model = gpucast::models::analytical::Analytical
        .fit(&runs.iter().collect::<Vec<_>>(), &ctx)
        .unwrap();
    let targets: Vec<&str> = runs
        .iter()
        .map(|r| r.gpu.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let check = |ev: &Evidence, rows: &[&Run], targets: &[&str]| {
        let (mut buffer, mut predicted) = (Query::default(), 0);
        for r in rows {
            for t in targets {
                let want = model.predict(&data::Query::on(r, t), ev, &ctx).unwrap();
                let got = model.predict_work(r, t, &mut buffer, ev, &ctx).unwrap();
                assert_eq!(got, want, "{} {} {} on {t}", r.gpu, r.kernel, r.config);
                predicted += got.is_some() as usize;
            }
        }
        predicted
    };
    let all: Vec<&Run> = runs.iter().collect();
    let n = check(&Evidence::new(runs.iter()), &all, &targets);
    assert!(n > all.len() * 3, "{n} same-work predictions");
    let titan_v: Vec<&Run> = all
        .iter()
        .copied()
        .filter(|r| r.gpu == "NVIDIA TITAN V")
        .collect();
    let n = check(
        &Evidence::new(titan_v.iter().copied()),
        &titan_v,
        &["NVIDIA TITAN V"],
    );
    assert!(n > titan_v.len() / 2, "{n} size projections");
}

#[test]
fn combination_is_the_weighted_geometric_mean_with_the_sources_spread() {
    // SYNTHETIC: one work on three GPUs projected onto an H100.
    let text = "gpu,kernel,config,time_ms,flops,dram_bytes,block_threads,grid_blocks\n\
NVIDIA TITAN V,k,N=1,2.0,1e9,4e8,256,4096\n\
NVIDIA GeForce RTX 2080 Ti,k,N=1,2.6,1e9,4e8,256,4096\n\
Tesla V100-SXM2-16GB,k,N=1,1.7,1e9,4e8,256,4096\n";
    use gpucast::models::analytical::{combine, projections, Combination};
    let catalog = Catalog::builtin();
    let runs = synthetic_runs(text);
    let q = data::Query::on(&runs[0], "NVIDIA H100 SXM5 80GB");
    let mut ps: Vec<_> = projections(&q, &Evidence::new(runs.iter()), &spec_context(&catalog))
        .unwrap()
        .into_iter()
        .map(|(_, p)| p)
        .collect();
    assert_eq!(ps.len(), 3);
    let c = combine(&ps).unwrap();
    let wsum: f64 = ps.iter().map(|p| p.weight).sum();
    let mean = (ps.iter().map(|p| p.weight * p.pred_ms.ln()).sum::<f64>() / wsum).exp();
    let floor = ps
        .iter()
        .map(|p| p.target.peak_floor_ms)
        .fold(0.0, f64::max);
    assert!((c.pred_ms - mean.max(floor)).abs() <= 1e-12 * mean);
    let levels = ps
        .iter()
        .flat_map(|p| [p.pred_ms, p.pred_dram_ms, p.pred_l2_ms]);
    let lo = levels.clone().fold(f64::INFINITY, f64::min).min(mean);
    let hi = levels.fold(0.0, f64::max).max(mean);
    assert_eq!((c.lo_ms, c.hi_ms), (lo.max(floor), hi.max(c.pred_ms)));
    assert!(c.lo_ms < c.pred_ms && c.pred_ms < c.hi_ms, "{c:?}");
    // the bound is the most similar source's; of equals, the last one's
    let best = ps
        .iter()
        .max_by(|a, b| a.weight.total_cmp(&b.weight))
        .unwrap();
    assert_eq!(c.bound, best.target.limiting());
    let mut twin = ps[0].clone();
    twin.weight = best.weight;
    twin.target.roof_ms = 0.0; // launch-bound
    ps.push(twin);
    let c = combine(&ps).unwrap();
    assert_eq!(c.bound, gpucast::features::Bound::Launch);
    // nothing to combine: no prediction
    assert!(combine(&[]).is_none());
    assert!(Combination::default().is_empty());
}

/// The runs of [`one_harness_csv`], validated.
fn one_harness_runs(floor_ms: f64) -> Vec<Run> {
    synthetic_runs(&one_harness_csv(floor_ms))
}

/// By default a target sits on its sources' launch floor (the fastest run of their
/// harness): the tiny kernel on a fifth GPU is predicted at the training GPUs' 3 µs by
/// the analytical model and by the hybrid, with its correction or without; told the
/// catalog's floor, near its 1.5 µs without the correction (with it, the correction
/// learns that floor is too short here).
#[test]
fn a_target_sits_on_its_sources_launch_floor_unless_told_the_catalogs() {
    use gpucast::models::analytical::Analytical;
    let catalog = Catalog::builtin();
    let runs = one_harness_runs(0.003);
    let train: Vec<&Run> = runs.iter().collect();
    let ev = Evidence::new(runs.iter());
    let q = Query::on(&runs[0], "NVIDIA A100 SXM4 80GB");
    for (floors, range) in [
        (LaunchFloors::Sources, 0.0028..0.0034),
        (LaunchFloors::Catalog, 0.0014..0.0017),
    ] {
        let ctx = spec_context(&catalog).with_launch_floors(floors);
        let fitted = Analytical.fit_analytical(&train, &ctx).unwrap();
        assert_eq!(fitted.launch_floors, floors);
        let pred_ms = fitted.predict(&q, &ev, &ctx).unwrap().unwrap().pred_ms;
        assert!(range.contains(&pred_ms), "{floors:?}: {pred_ms}");
        let shares: &[f64] = match floors {
            LaunchFloors::Sources => &[0.0, 1.0],
            LaunchFloors::Catalog => &[0.0],
        };
        for &share in shares {
            let hybrid = gpucast::models::hybrid::HybridParams::new(1)
                .correction_share(share)
                .unwrap()
                .fit_hybrid(&train, &ctx)
                .unwrap();
            assert_eq!(hybrid.state().launch_floors, floors);
            let pred_ms = hybrid.predict(&q, &ev, &ctx).unwrap().unwrap().pred_ms;
            assert!(
                range.contains(&pred_ms),
                "{floors:?} share {share}: {pred_ms}"
            );
        }
    }
}

/// A target whose catalog entry measures its launch overhead keeps it, source floors
/// or not.
#[test]
fn a_measured_launch_overhead_is_the_targets_floor_whatever_the_sources() {
    use gpucast::models::analytical::project;
    let catalog = Catalog::builtin();
    let runs = one_harness_runs(0.003);
    let ev = Evidence::new(runs.iter());
    let source = &runs[0];
    let gs = catalog.resolve_or_err(&source.gpu).unwrap();
    let mut gt = catalog
        .resolve_or_err("NVIDIA A100 SXM4 80GB")
        .unwrap()
        .clone();
    let floor_ms = |gt: &gpucast::catalog::Gpu, launch_floors: LaunchFloors| {
        let ctx = spec_context(&catalog).with_launch_floors(launch_floors);
        let q = Query::on(source, &gt.name);
        project(source, &q, gs, gt, &ctx, &ev)
            .unwrap()
            .target
            .launch_floor_ms
    };
    use LaunchFloors::{Catalog as Cat, Sources};
    assert_eq!(floor_ms(&gt, Cat), 0.0015);
    assert_eq!(floor_ms(&gt, Sources), 0.003);
    gt.launch_overhead_us = Some(5.0);
    assert_eq!(floor_ms(&gt, Cat), 0.005);
    assert_eq!(floor_ms(&gt, Sources), 0.005);
}

/// SYNTHETIC runs of two corpora (sources): "a" on three GPUs, "b" on two of them and a
/// fourth; each row says which corpus and GPU it is.
fn two_corpus_runs() -> Vec<Run> {
    let mut text = String::from("gpu,kernel,config,time_ms,flops,dram_bytes,source\n");
    for (source, gpus) in [
        (
            "a",
            &[
                "NVIDIA TITAN V",
                "NVIDIA GeForce RTX 2080 Ti",
                "NVIDIA GeForce RTX 4070",
            ][..],
        ),
        (
            "b",
            &[
                "NVIDIA TITAN V",
                "NVIDIA GeForce RTX 2080 Ti",
                "NVIDIA RTX A4000",
            ][..],
        ),
    ] {
        for g in gpus {
            for n in 1..=3 {
                let ms = 0.01 * 10f64.powi(n - 1);
                text += &format!("{g},k,N={n},{ms},0,{},{source}\n", n * 1000);
            }
        }
    }
    synthetic_runs(&text)
}

/// Leave one corpus out: each fit sees neither the held-out corpus nor the target GPU
/// in any corpus; each GPU of each corpus is a target once, labelled "corpus: GPU", and
/// is predicted from its own corpus's other GPUs.
#[test]
fn loco_never_shows_the_corpus_or_the_target_to_the_model() {
    let catalog = Catalog::builtin();
    let runs = two_corpus_runs();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let spy = Spy(seen.clone(), |r| r.source.as_deref().unwrap_or("-"));
    let seen_gpus = Arc::new(Mutex::new(Vec::new()));
    let gpu_spy = Spy(seen_gpus.clone(), |r| r.gpu.as_str());
    let ctx = spec_context(&catalog);
    let e = evaluation::evaluate(
        &runs,
        &Protocol::Loco,
        &Selection::default(),
        &[&spy, &gpu_spy],
        &ctx,
        &|| {},
    )
    .unwrap();
    let mut targets: Vec<&str> = e
        .results
        .iter()
        .filter(|r| r.model == "spy" && r.target != "all")
        .map(|r| r.target.as_str())
        .collect();
    targets.sort();
    targets.dedup();
    assert_eq!(
        targets,
        [
            "a: NVIDIA GeForce RTX 2080 Ti",
            "a: NVIDIA GeForce RTX 4070",
            "a: NVIDIA TITAN V",
            "b: NVIDIA GeForce RTX 2080 Ti",
            "b: NVIDIA RTX A4000",
            "b: NVIDIA TITAN V",
        ]
    );
    // every fit of a corpus-a fold saw only corpus b, and the other way round
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 6, "six folds");
    assert!(
        seen.iter().all(|s| s.len() == 1),
        "a fit saw two corpora: {seen:?}"
    );
    // ... and never the target GPU: the TITAN V's folds leave it out of corpus b too
    let gpus = seen_gpus.lock().unwrap();
    let without_titan = gpus
        .iter()
        .filter(|g| !g.contains(&"NVIDIA TITAN V".to_string()))
        .count();
    assert_eq!(without_titan, 2, "{gpus:?}");
    assert!(e
        .records
        .iter()
        .all(|r| r.source.as_deref().is_some_and(|s| r.target.starts_with(s))));
    // the fastest run of each corpus on each GPU is its harness's floor: the 0.01 ms
    // runs are launch-bound (below 4x it), the 0.1 and 1 ms runs work-bound
    let all = e
        .results
        .iter()
        .find(|r| r.model == "spy" && r.target == "all")
        .unwrap();
    assert_eq!(
        (all.metrics.n_launch_bound, all.metrics.n_work_bound),
        (6, 12)
    );
    assert!(e
        .records
        .iter()
        .all(|r| r.launch_bound == (r.measured_ms < 0.04)));
    // one corpus is nothing to hold out
    let one: Vec<Run> = runs
        .iter()
        .filter(|r| r.source.as_deref() == Some("a"))
        .cloned()
        .collect();
    let err = Protocol::Loco
        .check(&one, &catalog)
        .unwrap_err()
        .to_string();
    assert!(err.contains("protocol loco holds one corpus"), "{err}");
}

/// SYNTHETIC runs of two corpora on GPUs of four generations (TITAN V 2017 Volta,
/// RTX 2080 Ti 2018 Turing, RTX 3090 2020 and RTX A4000 2021 Ampere, RTX 4070 2023
/// Ada), for the protocols that hold GPUs out by launch and architecture.
fn lineage_runs() -> Vec<Run> {
    let mut text = String::from("gpu,kernel,config,time_ms,flops,dram_bytes,source\n");
    for (source, gpus) in [
        (
            "a",
            [
                "NVIDIA TITAN V",
                "NVIDIA GeForce RTX 2080 Ti",
                "NVIDIA RTX A4000",
                "NVIDIA GeForce RTX 4070",
            ],
        ),
        (
            "b",
            [
                "NVIDIA TITAN V",
                "NVIDIA GeForce RTX 2080 Ti",
                "NVIDIA GeForce RTX 3090",
                "NVIDIA RTX A4000",
            ],
        ),
    ] {
        for g in gpus {
            for n in 1..=3 {
                text += &format!(
                    "{g},k,N={n},{},0,{},{source}\n",
                    0.1 * f64::from(n),
                    n * 100_000
                );
            }
        }
    }
    synthetic_runs(&text)
}

/// The targets a spy was scored on and the GPUs each of its fits saw.
fn spy_evaluation(protocol: &Protocol) -> (Vec<String>, Vec<Vec<String>>) {
    let catalog = Catalog::builtin();
    let runs = lineage_runs();
    protocol.check(&runs, &catalog).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let spy = Spy(seen.clone(), |r| r.gpu.as_str());
    let e = evaluation::evaluate(
        &runs,
        protocol,
        &Selection::default(),
        &[&spy],
        &spec_context(&catalog),
        &|| {},
    )
    .unwrap();
    let mut targets: Vec<String> = e
        .results
        .iter()
        .filter(|r| r.target != "all")
        .map(|r| r.target.clone())
        .collect();
    targets.sort();
    let mut seen = seen.lock().unwrap().clone();
    seen.sort();
    (targets, seen)
}

/// `newer`: each GPU is predicted only from GPUs launched before it, in corpora with
/// two or more of them; targets with the same older GPUs share one fit, which saw no
/// GPU of the target's launch or later (in any corpus).
#[test]
fn newer_predicts_each_gpu_from_older_ones_only() {
    let (targets, seen) = spy_evaluation(&Protocol::Newer);
    assert_eq!(
        targets,
        [
            "a: NVIDIA GeForce RTX 4070",
            "a: NVIDIA RTX A4000",
            "b: NVIDIA GeForce RTX 3090",
            "b: NVIDIA RTX A4000",
        ]
    );
    let (tv, ti, g3090, a4000) = (
        "NVIDIA TITAN V",
        "NVIDIA GeForce RTX 2080 Ti",
        "NVIDIA GeForce RTX 3090",
        "NVIDIA RTX A4000",
    );
    assert_eq!(
        seen,
        [
            vec![ti, g3090, a4000, tv],
            vec![ti, g3090, tv],
            vec![ti, tv],
        ]
    );
    // one corpus whose GPUs have fewer than two older ones each scores nothing
    let two: Vec<Run> = lineage_runs()
        .into_iter()
        .filter(|r| r.gpu == tv || r.gpu == ti)
        .collect();
    let err = Protocol::Newer
        .check(&two, &Catalog::builtin())
        .unwrap_err()
        .to_string();
    assert!(err.contains("GPUs launched before it"), "{err}");
}

/// `loao`: every GPU of the target's architecture is out of the fit and the sources
/// (the 3090 and the A4000 share one fit that saw neither).
#[test]
fn loao_holds_the_targets_architecture_out() {
    let (targets, seen) = spy_evaluation(&Protocol::Loao);
    assert_eq!(targets.len(), 8, "{targets:?}");
    let (tv, ti, g3090, a4000, g4070) = (
        "NVIDIA TITAN V",
        "NVIDIA GeForce RTX 2080 Ti",
        "NVIDIA GeForce RTX 3090",
        "NVIDIA RTX A4000",
        "NVIDIA GeForce RTX 4070",
    );
    assert_eq!(
        seen,
        [
            vec![ti, g3090, g4070, a4000],
            vec![ti, g3090, a4000, tv],
            vec![ti, g4070, tv],
            vec![g3090, g4070, a4000, tv],
        ]
    );
}

/// SYNTHETIC runs of one corpus: six memory-bound kernels at four sizes on `gpus`,
/// each timed at its bytes over `gbs(gpu)` times a factor `noise(i)` (i counts rows).
fn corpus_runs(source: &str, gpus: &[(&str, f64)], noise: impl Fn(usize) -> f64) -> Vec<Run> {
    let mut text = String::from("gpu,kernel,config,time_ms,flops,dram_bytes,source\n");
    let mut i = 0;
    for &(g, gbs) in gpus {
        for k in 0..6 {
            for n in 1..=4u32 {
                let bytes = f64::from(n) * 2e8 * (1.0 + k as f64);
                let ms = bytes / (gbs * 1e9) * 1e3 * noise(i);
                text += &format!("{g},k{k},N={n},{ms},0,{bytes},{source}\n");
                i += 1;
            }
        }
    }
    synthetic_runs(&text)
}

/// Sources of a corpus the fit never saw take their interval from themselves, each of
/// their GPUs projected from the others: runs that agree with the roofline get a
/// narrow interval from a fit whose own corpus scatters, and the fit's own interval
/// stays for sources of its corpus.
#[test]
fn sources_of_another_corpus_calibrate_their_own_interval() {
    let catalog = Catalog::builtin();
    let ctx = spec_context(&catalog);
    // (vendor peak bandwidths: the three project one another exactly)
    let tight = corpus_runs(
        "tight",
        &[
            ("NVIDIA TITAN V", 652.8),
            ("NVIDIA GeForce RTX 2080 Ti", 616.0),
            ("NVIDIA GeForce RTX 4070", 504.2),
        ],
        |_| 1.0,
    );
    // the same GPUs timed with a factor 0.5..2 from row to row
    let loose = corpus_runs(
        "loose",
        &[
            ("NVIDIA TITAN V", 652.8),
            ("NVIDIA GeForce RTX 2080 Ti", 616.0),
            ("NVIDIA RTX A4000", 448.0),
        ],
        |i| 2f64.powf(((i * 7919) % 97) as f64 / 48.0 - 1.0),
    );
    let fit_on: Vec<&Run> = loose.iter().collect();
    let model = ModelSpec::parse("analytical", 0)
        .unwrap()
        .fit(&fit_on, &ctx)
        .unwrap();
    let width = |p: Prediction| p.hi_ms / p.lo_ms;
    let query = tight
        .iter()
        .find(|r| r.gpu == "NVIDIA GeForce RTX 4070" && r.kernel == "k2")
        .unwrap();
    let on_4070 = |evidence: &[Run]| {
        let e = Evidence::new(evidence.iter().filter(|r| r.gpu != query.gpu));
        model.predict(&Query::of(query), &e, &ctx).unwrap().unwrap()
    };
    let own = on_4070(&tight);
    assert!(width(own) < 1.1, "{own:?}");
    assert!((own.pred_ms / query.time_ms - 1.0).abs() < 0.01, "{own:?}");
    // the loose corpus's own sources: the fit's interval, as wide as its scatter
    let mut as_loose = tight.clone();
    for r in &mut as_loose {
        r.source = Some("loose".into());
    }
    let fitted = on_4070(&as_loose);
    assert_eq!(fitted.pred_ms, own.pred_ms);
    assert!(width(fitted) > 1.5, "{fitted:?}");
}
