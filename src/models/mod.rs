//! Models: small traits in the spirit of linfa (`fit`, then `predict`).
//!
//! A model is fitted on training runs (in LOGO never a row of the target GPU) and
//! predicts a [`Query`] (a run's work on the target, with no measured time) from the
//! [`Evidence`]: the runs it may look at — the training runs, plus, in the new-kernel
//! protocol, the query kernel's runs on other GPUs. The hybrid is the analytical
//! projection moved by fitted [`stages`], each chosen on errors held out inside the
//! training GPUs under one rule (`HeldOutChoice`).

pub mod analytical;
pub mod corun;
pub mod hybrid;
pub mod interval;
pub mod learned;
pub mod regressors;
pub mod similarity;
pub mod stages;
pub mod transfer;

use crate::catalog::{Catalog, Gpu};
use crate::data::validate::is_excluded;
use crate::data::{Query, Run};
use crate::error::{Error, Result};
use crate::features::{Bound, Calibration, Figures};
pub use interval::{interval_log, HeldOutError, INTERVAL_LEVEL, MIN_INTERVAL_ERRORS};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// What a model needs besides data: the GPU catalog and where figures come from, and
/// how a projection weighs its sources.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    pub catalog: &'a Catalog,
    pub calibration: &'a Calibration,
    /// Per-architecture kernel resources (from `gpucast-bench inspect`), when supplied.
    pub resources: Option<&'a crate::features::KernelResources>,
    /// The power of a source GPU's similarity to the target that is its weight in a
    /// combined projection (1 in a new context; a fitted model projects with the
    /// power it chose, see [`analytical::SIMILARITY_POWERS`]).
    pub similarity_power: i32,
    /// Where a projection puts the target's launch floor when the catalog measures
    /// none for it ([`LaunchFloors::Sources`] in a new context).
    pub launch_floors: LaunchFloors,
    /// Whether a source of the target's compute capability counts as more similar
    /// ([`analytical::weighted_similarity`]): true in a new context, as the analytical
    /// model weighs; the hybrid decides for itself.
    pub prefer_same_arch: bool,
}

/// The corpus a run belongs to (leave-one-corpus-out holds corpora out; the hybrid's
/// shape transfer applies within the corpora it learned from): its `source`, or this
/// when it has none.
pub const NO_SOURCE: &str = "(no source)";

/// The corpus of a run (see [`NO_SOURCE`]).
pub fn corpus(run: &Run) -> &str {
    run.source.as_deref().unwrap_or(NO_SOURCE)
}

/// The distinct corpora of `runs`, sorted.
pub fn corpora_of(runs: &[&Run]) -> Vec<String> {
    let mut c: Vec<&str> = runs.iter().map(|r| corpus(r)).collect();
    c.sort_unstable();
    c.dedup();
    c.into_iter().map(str::to_string).collect()
}

/// A run is launch-bound when its measured time is below this many times its harness's
/// launch floor on its GPU ([`harness_floor_ms`]): what the time says is mostly the
/// harness, not the work. The evaluation splits its figures by it; the interval has
/// its own quantiles for such predictions.
pub const LAUNCH_BOUND_FLOOR_FACTOR: f64 = 4.0;

/// A fastest run longer than this (50 µs) is work, not a launch floor: timing one
/// kernel through a framework (launch, dispatch, synchronisation) costs tens of µs at
/// most (PyTorch operators: 24-31 µs on NeuSight's five GPUs; a bare CUDA launch 2-9
/// µs), while a tuning space's fastest configuration is a tenth of a millisecond or
/// more.
pub const MAX_LAUNCH_FLOOR_MS: f64 = 0.05;

/// A harness's fastest run on a GPU says something of its launch floor only among at
/// least this many runs it timed there: one run (a profile of one kernel) is its own
/// work, not a floor.
pub const MIN_HARNESS_RUNS: u32 = 3;

/// The fastest of `runs` runs a harness timed on a GPU as a floor candidate: itself
/// with at least [`MIN_HARNESS_RUNS`], else infinite (no floor).
pub fn fastest_of_harness(fastest_ms: f64, runs: u32) -> f64 {
    if runs >= MIN_HARNESS_RUNS {
        fastest_ms
    } else {
        f64::INFINITY
    }
}

/// The launch floor of a harness on a GPU from the fastest run it timed there: that
/// run's time when it is short enough to be one ([`MAX_LAUNCH_FLOOR_MS`]), else none.
pub fn harness_floor_ms(fastest_ms: Option<f64>) -> Option<f64> {
    fastest_ms.filter(|&f| f <= MAX_LAUNCH_FLOOR_MS)
}

/// Whether a run of `time_ms` is launch-bound on a harness whose fastest run there took
/// `fastest_ms` ([`LAUNCH_BOUND_FLOOR_FACTOR`]; never without a floor).
pub fn launch_bound(time_ms: f64, fastest_ms: Option<f64>) -> bool {
    harness_floor_ms(fastest_ms).is_some_and(|f| time_ms < LAUNCH_BOUND_FLOOR_FACTOR * f)
}

/// Where a target's launch floor comes from when the catalog measures none for it. A
/// launch floor comes from how runs were timed as much as from the GPU: PyTorch's
/// operator timings floor at 24-31 µs, a bare CUDA-event harness at 1.4-3.1 µs. The
/// default is the physically consistent one: the target is timed as its sources were,
/// so it sits on their floors. Leave one corpus out (every corpus held out from the fit,
/// its GPUs predicted from its other GPUs) the pooled MAPE is 18.2 % with them, 19.4 %
/// with a per-fit choice between them and the catalog's; no corpus is more than 0.7
/// points worse (the reference study, whose GPUs were timed on different systems: one
/// board's floor is 5.4 µs beside 1.4-1.5 µs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LaunchFloors {
    /// Each source's floor: the fastest run its harness timed on its GPU
    /// ([`Evidence::floor_ms`]), when that is short enough to be one
    /// ([`harness_floor_ms`]): the target timed as the sources were.
    #[default]
    Sources,
    /// The catalog's floor for the target (measured, or 1.5 µs): the target timed by
    /// a bare CUDA harness whatever timed the sources.
    Catalog,
}

impl<'a> Context<'a> {
    /// A context with sources weighted by their similarity itself (power 1).
    pub fn new(
        catalog: &'a Catalog,
        calibration: &'a Calibration,
        resources: Option<&'a crate::features::KernelResources>,
    ) -> Context<'a> {
        Context {
            catalog,
            calibration,
            resources,
            similarity_power: 1,
            launch_floors: LaunchFloors::Sources,
            prefer_same_arch: true,
        }
    }
    /// This context with sources weighted by their similarity to the power `power`.
    pub fn with_similarity_power(&self, power: i32) -> Context<'a> {
        Context {
            similarity_power: power,
            ..*self
        }
    }
    /// This context with (or without) sources of the target's compute capability
    /// preferred in weights.
    pub fn with_prefer_same_arch(&self, prefer_same_arch: bool) -> Context<'a> {
        Context {
            prefer_same_arch,
            ..*self
        }
    }
    /// This context with the target's launch floors from `launch_floors`.
    pub fn with_launch_floors(&self, launch_floors: LaunchFloors) -> Context<'a> {
        Context {
            launch_floors,
            ..*self
        }
    }
}

impl Context<'_> {
    pub fn gpu(&self, name: &str) -> Result<&Gpu> {
        self.catalog.resolve_or_err(name)
    }
    pub fn figures(&self, gpu: &Gpu) -> Result<Figures> {
        self.calibration.figures(gpu)
    }
}

/// One prediction with its interval and the roof that limits it.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Prediction {
    pub pred_ms: f64,
    pub lo_ms: f64,
    pub hi_ms: f64,
    /// What `lo_ms..hi_ms` is.
    pub interval: Interval,
    pub bound: Bound,
}

/// What a prediction's interval means: outputs print it beside the bounds.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub enum Interval {
    /// A prediction interval at this nominal level (0.9 = 90 %), from errors held out
    /// on the training GPUs.
    Calibrated(f64),
    /// The spread of the sources' projections and memory levels: not a calibrated
    /// interval (too little training data to calibrate one).
    Spread,
    /// No interval (the bounds equal the prediction).
    None,
}

impl Interval {
    /// The label outputs print: "90%", "spread" or "none".
    pub fn label(self) -> String {
        match self {
            Interval::Calibrated(level) => format!("{:.0}%", level * 100.0),
            Interval::Spread => "spread".into(),
            Interval::None => "none".into(),
        }
    }
}

impl std::fmt::Display for Interval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label())
    }
}

/// Most a learned part (the hybrid's correction, the shape transfer) may worsen any
/// held-out training GPU's mean APE (1 point). Half a point trades one target for
/// another: on the reference study with the Hopper GPUs RTX 2080 Ti went 25.4 -> 24.8 %
/// (analytical 24.4), but Kernel Tuner GEMM's pooled LOGO MAPE 17.6 -> 18.3 % and its
/// V100 17.5 -> 18.5 % (analytical 17.1).
pub(crate) const MAX_HARM: f64 = 0.01;

/// Serde's `skip_serializing_if` for a share or coefficient a model file leaves out
/// when it is 0 (what a file that predates it reads as).
pub(crate) fn is_zero(x: &f64) -> bool {
    *x == 0.0
}
/// Standard errors by which a learned part must lower the held-out runs' mean error.
const SIGNIFICANCE: f64 = 2.0;

/// Do paired error differences (with - without a learned part, one per held-out run)
/// drop by more than [`SIGNIFICANCE`] standard errors? With ~100 held-out runs (the
/// reference study) a share that looked 0.7 points better made the target 2.2 points
/// worse.
pub(crate) fn clearly_lower(differences: impl Iterator<Item = f64>) -> bool {
    let d: Vec<f64> = differences.collect();
    let n = d.len() as f64;
    let mean = d.iter().sum::<f64>() / n;
    let var = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    mean < -SIGNIFICANCE * (var / n).sqrt()
}

/// Is no group (held-out GPU or family) more than [`MAX_HARM`] worse `with` a learned
/// part than `without` it (mean APEs per group)?
pub(crate) fn no_group_worse(with: &[f64], without: &[f64]) -> bool {
    with.iter().zip(without).all(|(m, b)| *m <= b + MAX_HARM)
}

/// Which of `n` groups occur in `groups` (the held-out GPUs a case has runs of).
pub(crate) fn groups_present(n: usize, groups: impl Iterator<Item = usize>) -> Vec<bool> {
    let mut present = vec![false; n];
    for g in groups {
        present[g] = true;
    }
    present
}

/// Fewest held-out GPUs a gain counted per GPU is judged on: with two, a difference
/// of means over one degree of freedom says next to nothing (on the three-GPU Kernel
/// Tuner corpus, two held-out GPUs chose a kernel-ratio share that left the third's
/// interval covering 81 % of its runs).
const MIN_GPUS_PER_GPU_TEST: usize = 3;

/// Do the held-out GPUs' mean errors (`with` a learned part, `without` it; per GPU,
/// only those `held_out`) drop clearly ([`clearly_lower`]), counted per GPU: the runs
/// of one GPU move together, so where a gain depends on the GPU the evidence is the
/// number of GPUs. False with fewer than [`MIN_GPUS_PER_GPU_TEST`] of them.
pub(crate) fn clearly_lower_per_gpu(with: &[f64], without: &[f64], held_out: &[bool]) -> bool {
    let d: Vec<f64> = with
        .iter()
        .zip(without)
        .zip(held_out)
        .filter(|(_, held)| **held)
        .map(|((w, b), _)| w - b)
        .collect();
    d.len() >= MIN_GPUS_PER_GPU_TEST && clearly_lower(d.into_iter())
}

/// Candidate fractions of a learned part to apply (the hybrid's correction share, the
/// shape transfer's strengths).
pub(crate) const FRACTION_GRID: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

/// The index of the lowest `cost` among candidate 0 and the `admissible` ones of
/// `n` candidates (ties go to the earlier).
fn lowest_cost_index(
    n: usize,
    admissible: impl Fn(usize) -> bool,
    cost: impl Fn(usize) -> f64,
) -> usize {
    (0..n)
        .filter(|&k| k == 0 || admissible(k))
        .fold((0, f64::INFINITY), |best, k| {
            let c = cost(k);
            if c < best.1 - 1e-12 {
                (k, c)
            } else {
                best
            }
        })
        .0
}

/// The fraction in [`FRACTION_GRID`] with the lowest `cost` among 0 and the
/// `admissible` ones (ties go to the smaller).
pub(crate) fn lowest_cost_fraction(
    admissible: impl Fn(f64) -> bool,
    cost: impl Fn(f64) -> f64,
) -> f64 {
    FRACTION_GRID[lowest_cost_index(
        FRACTION_GRID.len(),
        |k| admissible(FRACTION_GRID[k]),
        |k| cost(FRACTION_GRID[k]),
    )]
}

/// The evidence a candidate must show against the base to be admissible in a
/// [`HeldOutChoice`], beyond making no held-out GPU more than [`MAX_HARM`] worse.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GainEvidence {
    /// The held-out runs' errors drop clearly ([`clearly_lower`]).
    pub per_run: bool,
    /// The held-out GPUs' mean errors drop clearly, counted per GPU
    /// ([`clearly_lower_per_gpu`]): where the gain depends on the GPU.
    pub per_gpu: bool,
}

/// The one rule every fitted choice follows: candidates (a fraction of a learned part,
/// a similarity power) judged on the errors of runs held out inside the training GPUs,
/// each against the first candidate, the base (no learned part, power 1). A candidate
/// is admissible when it makes no held-out GPU more than [`MAX_HARM`] worse
/// ([`no_group_worse`]), shows the [`GainEvidence`] asked for and passes the caller's own
/// guard; the base always is. [`HeldOutChoice::lowest`] takes the admissible one with
/// the lowest total error.
pub(crate) struct HeldOutChoice {
    /// Per candidate: the held-out GPUs' mean APEs with it.
    per_gpu: Vec<Vec<f64>>,
    /// Per candidate: the total APE over the held-out runs.
    cost: Vec<f64>,
    admissible: Vec<bool>,
    /// The GPUs that have held-out runs.
    held_out: Vec<bool>,
}

impl HeldOutChoice {
    /// Judge `n_candidates` candidates on `runs`: `gpu` is a run's held-out GPU (<
    /// `n_gpus`), `ape(k, run)` its absolute percentage error with candidate k; `also`
    /// is the caller's guard (evaluated last, only for candidates that pass the rest).
    pub(crate) fn judge<T>(
        runs: &[T],
        n_candidates: usize,
        n_gpus: usize,
        gpu: impl Fn(&T) -> usize,
        ape: impl Fn(usize, &T) -> f64,
        evidence: GainEvidence,
        also: impl Fn(usize) -> bool,
    ) -> HeldOutChoice {
        let held_out = groups_present(n_gpus, runs.iter().map(&gpu));
        let base: Vec<f64> = runs.iter().map(|r| ape(0, r)).collect();
        let mut choice = HeldOutChoice {
            per_gpu: Vec::with_capacity(n_candidates),
            cost: Vec::with_capacity(n_candidates),
            admissible: Vec::with_capacity(n_candidates),
            held_out,
        };
        for k in 0..n_candidates {
            let apes: Vec<f64> = if k == 0 {
                base.clone()
            } else {
                runs.iter().map(|r| ape(k, r)).collect()
            };
            let means = group_means(n_gpus, runs.iter().zip(&apes).map(|(r, a)| (gpu(r), *a)));
            let admissible = k == 0 || {
                let without = &choice.per_gpu[0];
                no_group_worse(&means, without)
                    && (!evidence.per_run
                        || clearly_lower(apes.iter().zip(&base).map(|(a, b)| a - b)))
                    && (!evidence.per_gpu
                        || clearly_lower_per_gpu(&means, without, &choice.held_out))
                    && also(k)
            };
            choice.cost.push(apes.iter().sum());
            choice.per_gpu.push(means);
            choice.admissible.push(admissible);
        }
        choice
    }

    /// The index of the admissible candidate with the lowest total error (ties go to
    /// the earlier).
    pub(crate) fn lowest(&self) -> usize {
        lowest_cost_index(self.cost.len(), |k| self.admissible[k], |k| self.cost[k])
    }

    /// The first admissible candidate after the base, at most `best`, that `best` is
    /// not clearly better than counted per GPU (the one-standard-error rule, for
    /// candidates ordered from least to most learned); `best` when there is none.
    pub(crate) fn first_as_good_as(&self, best: usize) -> usize {
        let at_best = &self.per_gpu[best];
        (1..=best)
            .filter(|&k| self.admissible[k])
            .find(|&k| !clearly_lower_per_gpu(at_best, &self.per_gpu[k], &self.held_out))
            .unwrap_or(best)
    }
}

/// A learned part's fraction of [`FRACTION_GRID`] judged on held-out runs
/// ([`HeldOutChoice`], the grid's fractions its candidates, 0 the base), every
/// fraction held to a clear per-run gain and, with `per_gpu_evidence`, a per-GPU one.
pub(crate) struct FractionChoice(HeldOutChoice);

impl FractionChoice {
    /// Judge every fraction on `runs` ([`HeldOutChoice::judge`], `ape(fraction, run)`,
    /// `also(fraction)`).
    pub(crate) fn judge<T>(
        runs: &[T],
        n_gpus: usize,
        gpu: impl Fn(&T) -> usize,
        ape: impl Fn(f64, &T) -> f64,
        per_gpu_evidence: bool,
        also: impl Fn(f64) -> bool,
    ) -> FractionChoice {
        FractionChoice(HeldOutChoice::judge(
            runs,
            FRACTION_GRID.len(),
            n_gpus,
            gpu,
            |k, r| ape(FRACTION_GRID[k], r),
            GainEvidence {
                per_run: true,
                per_gpu: per_gpu_evidence,
            },
            |k| also(FRACTION_GRID[k]),
        ))
    }

    fn index(f: f64) -> usize {
        FRACTION_GRID.iter().position(|&g| g == f).unwrap_or(0)
    }

    /// The admissible fraction with the lowest total error (ties go to the smaller).
    pub(crate) fn lowest(&self) -> f64 {
        FRACTION_GRID[self.0.lowest()]
    }

    /// The smallest admissible fraction above 0, at most `best`, that `best` is not
    /// clearly better than counted per GPU (the one-standard-error rule); `best` when
    /// there is none.
    pub(crate) fn smallest_as_good_as(&self, best: f64) -> f64 {
        FRACTION_GRID[self.0.first_as_good_as(Self::index(best))]
    }
}

/// The mean of each group's values (group index < `n`, value); 0 for one with none.
pub(crate) fn group_means(n: usize, values: impl Iterator<Item = (usize, f64)>) -> Vec<f64> {
    let mut sums = vec![(0.0, 0usize); n];
    for (g, v) in values {
        sums[g].0 += v;
        sums[g].1 += 1;
    }
    sums.into_iter()
        .map(|(s, n)| if n > 0 { s / n as f64 } else { 0.0 })
        .collect()
}

impl Prediction {
    /// No faster than `floor_ms` (what the target's peaks allow): the prediction and
    /// its lower bound are raised to it, the upper bound kept at or above them.
    pub fn at_least(mut self, floor_ms: f64) -> Prediction {
        self.pred_ms = self.pred_ms.max(floor_ms);
        self.lo_ms = self.lo_ms.max(floor_ms);
        self.hi_ms = self.hi_ms.max(self.pred_ms);
        self
    }

    /// With the calibrated interval `bounds_log` (log units around the prediction, which
    /// it always contains; unchanged without one): a launch-bound prediction takes it
    /// as it is, any other is widened to it ([`Prediction::within_calibrated`]). A
    /// launch-bound source's projection sits on that source's own floor, so the
    /// sources' spread there is the spread of their floors, which the launch-bound
    /// held-out errors already measure: kept as a lower bound it over-covered (leave
    /// one corpus out, launch-bound rows: GEMM tables 98.3 %, NeuSight 95.3 %; with the
    /// calibrated interval alone 95.7 and 94.4 %, the reference study unchanged).
    pub fn calibrated(self, bounds_log: Option<(f64, f64)>, launch_bound: bool) -> Prediction {
        match bounds_log {
            Some((lo, hi)) if launch_bound => Prediction {
                lo_ms: self.pred_ms * lo.min(0.0).exp(),
                hi_ms: self.pred_ms * hi.max(0.0).exp(),
                interval: Interval::Calibrated(INTERVAL_LEVEL),
                ..self
            },
            _ => self.within_calibrated(bounds_log),
        }
    }

    /// Widened to the calibrated interval `bounds_log` (log units around the
    /// prediction: never narrower than it was) and labelled so; unchanged without one.
    pub fn within_calibrated(mut self, bounds_log: Option<(f64, f64)>) -> Prediction {
        if let Some((lo, hi)) = bounds_log {
            self.lo_ms = self.lo_ms.min(self.pred_ms * lo.exp());
            self.hi_ms = self.hi_ms.max(self.pred_ms * hi.exp());
            self.interval = Interval::Calibrated(INTERVAL_LEVEL);
        }
        self
    }
}

/// The training runs a model learns from (those the validation rule keeps), at most
/// `max` of them: an even, deterministic subsample of the rest beyond it.
pub fn learning_queries<'a>(train: &[&'a Run], max: usize) -> Vec<&'a Run> {
    let kept: Vec<&Run> = train.iter().copied().filter(|r| !is_excluded(r)).collect();
    let stride = kept.len().div_ceil(max.max(1)).max(1);
    kept.into_iter().step_by(stride).collect()
}

/// Runs a model may consult, indexed by work and by (gpu, kernel).
#[derive(Debug, Default)]
pub struct Evidence<'a> {
    /// Per work (kernel, configuration): its range in `sources`, found by the names'
    /// hash and compared with their copies in `work_names`. (Compact entries and one
    /// buffer of names: a map keyed by the runs' own strings read each query's names
    /// from wherever its first run's strings were, a cache miss per query.)
    by_work: hashbrown::HashTable<WorkEntry>,
    /// Every work's kernel and configuration names, back to back.
    work_names: String,
    /// Every indexed run as a compact source record, grouped by work (in the order
    /// given within a work): one allocation, so a work's sources sit side by side and
    /// a dropped index returns its memory whole (a vector per work fragmented the
    /// heap among long-lived records: 200 MB more at the peak of a 1M-row LOGO).
    sources: Vec<Source<'a>>,
    /// The GPUs in the order first seen; a [`Source`] names its GPU by position here.
    gpu_names: Vec<&'a str>,
    gpu_ids: FxHashMap<&'a str, u32>,
    /// Each GPU's place in the catalog it was first resolved with (that catalog's
    /// address, with the caveat of [`ContextId`]; None: not in it): a source's GPU is
    /// resolved by name once per evidence, not once per projection.
    catalog_gpus: std::sync::OnceLock<(usize, Vec<Option<usize>>)>,
    by_kernel: FxHashMap<(&'a str, &'a str), Vec<&'a Run>>,
    /// The timings a launch floor is read from: each (GPU, `source` column) pair, by
    /// position in `fastest`. Runs of one GPU timed by different harnesses have
    /// different floors (the GEMM latency tables time the H200's fastest GEMM at 2.4
    /// us, our runner its fastest kernel at 3.1 us): a source's floor is its own
    /// harness's.
    timings: FxHashMap<(&'a str, Option<&'a str>), u32>,
    /// Each timing's fastest run (by position, as `timings` numbers them), ms.
    fastest: Vec<f64>,
    /// Per (kernel, GPU): its typical log time relative to the kernel's anchor GPU
    /// (see [`Evidence::level`]); computed on first use.
    levels: std::sync::OnceLock<Levels<'a>>,
    /// Per (GPU, kernel): runs by work (see [`Evidence::nearest_size`]).
    sizes: std::sync::OnceLock<FxHashMap<(&'a str, &'a str), Vec<SizeEntry<'a>>>>,
    /// [`analytical::kernel_log_ratio`]s computed so far, with the context they were
    /// computed in (a call with another context computes afresh).
    kernel_ratios: std::sync::Mutex<(ContextId, KernelRatios<'a>)>,
    /// The interval calibrated on these runs themselves
    /// ([`analytical::evidence_interval`]), with the context it was computed in.
    own_interval: std::sync::Mutex<Option<(ContextId, Option<Arc<interval::FittedInterval>>)>>,
}

/// A work in [`Evidence`]'s index: where its names are in `work_names` and its
/// records in `sources`.
#[derive(Debug, Clone, Copy)]
struct WorkEntry {
    names_at: u32,
    kernel_len: u32,
    config_len: u32,
    start: u32,
    end: u32,
}

/// The evidence index's hash of a work's names. Not [`crate::data::work_hash`], which
/// is FNV-1a, fixed by its definition so that samples stay the same across Rust
/// releases: this one only has to agree with itself within a run (FxHash, the hasher
/// of the models' other indexes).
fn work_index_hash(kernel: &str, config: &str) -> u64 {
    use std::hash::{BuildHasher, Hash, Hasher};
    let mut h = rustc_hash::FxBuildHasher.build_hasher();
    kernel.hash(&mut h);
    config.hash(&mut h);
    h.finish()
}

/// A run of the work index with what projecting it as a source reads (its GPU, time
/// and work numbers) side by side: a prediction reads one compact record per source
/// rather than the run's fields and strings spread over the heap.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    pub run: &'a Run,
    pub time_ms: f64,
    /// The run's GPU, by position in the evidence's GPUs ([`Evidence::gpu_name`]).
    pub gpu: u32,
    /// The run's (GPU, source) timing, whose fastest run is its launch floor
    /// ([`Evidence::source_floor_ms`]).
    pub timing: u32,
    pub numbers: crate::features::WorkNumbers,
}

/// Which catalog, calibration and resources a cached figure was computed with, by
/// address (they live as long as a command or an evaluation runs: another one
/// allocated at a freed one's address while the same evidence is in use would read
/// the old figures; nothing in gpucast does that), with which similarity power and
/// whether the target sits on its sources' launch floors.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct ContextId([usize; 5]);

impl ContextId {
    fn of(ctx: &Context) -> ContextId {
        ContextId([
            ctx.catalog as *const Catalog as usize,
            ctx.calibration as *const Calibration as usize,
            ctx.resources
                .map_or(0, |r| r as *const crate::features::KernelResources as usize),
            ctx.similarity_power as usize,
            usize::from(ctx.launch_floors == LaunchFloors::Sources),
        ])
    }
}

/// (kernel, source GPU) -> target GPU -> median ln(projected / measured) (the target
/// a `&str` lookup: no allocation per projection).
type KernelRatios<'a> = FxHashMap<(&'a str, &'a str), FxHashMap<String, f64>>;

/// A run in the size index: ln of its work and its place in the (GPU, kernel) list.
#[derive(Debug)]
struct SizeEntry<'a> {
    ln_work: f64,
    order: usize,
    run: &'a Run,
}

/// [`Evidence::level`]s against the kernel's anchor GPU (`primary`) and against the
/// next one (`secondary`, for validation that holds the anchor out).
#[derive(Debug, Default)]
struct Levels<'a> {
    anchor: FxHashMap<&'a str, &'a str>,
    primary: FxHashMap<(&'a str, &'a str), f64>,
    secondary: FxHashMap<(&'a str, &'a str), f64>,
}

/// The median ln(time / anchor's time) over shared configurations, per GPU of `gpus`
/// (the anchor itself: 0; none shared: absent).
fn levels_against<'a>(
    kernel: &'a str,
    anchor: &'a str,
    anchor_runs: &[&'a Run],
    gpus: &[(&'a str, &Vec<&'a Run>)],
    out: &mut FxHashMap<(&'a str, &'a str), f64>,
) {
    let mut anchor_ln: FxHashMap<&str, f64> = FxHashMap::default();
    for r in anchor_runs {
        anchor_ln.entry(r.config.as_str()).or_insert(r.time_ms.ln());
    }
    out.insert((kernel, anchor), 0.0);
    for &(gpu, runs) in gpus.iter().filter(|g| g.0 != anchor) {
        let mut d: Vec<f64> = runs
            .iter()
            .filter_map(|r| anchor_ln.get(r.config.as_str()).map(|a| r.time_ms.ln() - a))
            .filter(|x| x.is_finite())
            .collect();
        if d.is_empty() {
            continue;
        }
        d.sort_by(f64::total_cmp);
        out.insert((kernel, gpu), d[d.len() / 2]);
    }
}

/// A work's (kernel, configuration) names in `names` (the evidence's `work_names`).
fn work_names_of<'n>(names: &'n str, w: &WorkEntry) -> (&'n str, &'n str) {
    let at = w.names_at as usize;
    let split = at + w.kernel_len as usize;
    (
        &names[at..split],
        &names[split..split + w.config_len as usize],
    )
}

impl<'a> Evidence<'a> {
    /// Index `runs`, leaving out rows excluded by the validation rule.
    pub fn new(runs: impl IntoIterator<Item = &'a Run>) -> Self {
        Evidence::new_for(runs, |_| true)
    }
    /// [`Evidence::new`] with only the runs `indexed` accepts in the work and kernel
    /// indexes (e.g. the works a fit will query: a compact record per run of a
    /// million-row table is tens of MB); every run still counts toward the fastest
    /// run of its GPU and harness, the launch floor its sources are given.
    pub fn new_for(
        runs: impl IntoIterator<Item = &'a Run>,
        indexed: impl Fn(&Run) -> bool,
    ) -> Self {
        let mut e = Evidence::default();
        // Each indexed run with its work's place in order of first appearance; the
        // records are then laid out grouped by work (a counting sort). Making the
        // records in this pass, to read each run once, was faster on `gpucast bench`'s
        // 100k-row subsets, whose rows lie scattered through the table, but slower on a
        // whole table, read in order (LOGO on 1M rows x 12 GPUs, 2 threads): moved into
        // place by swaps, +10 % at 100k x 8 but 7.7 -> 8.5-9.2 s (swaps at random over a
        // 72 MB vector); staged in a second vector, +22 % at 100k x 8 and x 2 but 8.0 ->
        // 9.1-9.8 s and 30-80 MiB more at the peak.
        let mut indexed_runs: Vec<(u32, u32, u32, &'a Run)> = Vec::new();
        let mut work_sizes: Vec<u32> = Vec::new();
        let mut timing_runs: Vec<u32> = Vec::new();
        for r in runs {
            if is_excluded(r) {
                continue;
            }
            let next_id = e.gpu_names.len() as u32;
            let gpu = *e.gpu_ids.entry(r.gpu.as_str()).or_insert(next_id);
            if gpu == next_id {
                e.gpu_names.push(r.gpu.as_str());
            }
            let next_timing = e.fastest.len() as u32;
            let timing = *e
                .timings
                .entry((r.gpu.as_str(), r.source.as_deref()))
                .or_insert(next_timing);
            if timing == next_timing {
                e.fastest.push(f64::INFINITY);
                timing_runs.push(0u32);
            }
            let f = &mut e.fastest[timing as usize];
            *f = f.min(r.time_ms);
            timing_runs[timing as usize] += 1;
            if !indexed(r) {
                continue;
            }
            let next_work = work_sizes.len() as u32;
            let (kernel, config) = (r.kernel.as_str(), r.config.as_str());
            let names = &mut e.work_names;
            let work = match e.by_work.entry(
                work_index_hash(kernel, config),
                |w| work_names_of(names, w) == (kernel, config),
                |w| {
                    let (k, c) = work_names_of(names, w);
                    work_index_hash(k, c)
                },
            ) {
                hashbrown::hash_table::Entry::Occupied(o) => o.get().start,
                hashbrown::hash_table::Entry::Vacant(v) => {
                    let names_at = names.len() as u32;
                    names.push_str(kernel);
                    names.push_str(config);
                    // (`start` holds the work's number until the records are laid out)
                    v.insert(WorkEntry {
                        names_at,
                        kernel_len: kernel.len() as u32,
                        config_len: config.len() as u32,
                        start: next_work,
                        end: 0,
                    });
                    work_sizes.push(0);
                    next_work
                }
            };
            work_sizes[work as usize] += 1;
            indexed_runs.push((work, gpu, timing, r));
            e.by_kernel
                .entry((r.gpu.as_str(), r.kernel.as_str()))
                .or_default()
                .push(r);
        }
        for (f, &n) in e.fastest.iter_mut().zip(&timing_runs) {
            *f = fastest_of_harness(*f, n);
        }
        // Work i's records start where work i - 1's end.
        let mut starts = Vec::with_capacity(work_sizes.len());
        let mut next = 0u32;
        for n in &work_sizes {
            starts.push(next);
            next += n;
        }
        for w in e.by_work.iter_mut() {
            let work = w.start as usize;
            (w.start, w.end) = (starts[work], starts[work] + work_sizes[work]);
        }
        let source = |gpu, timing, r: &'a Run| Source {
            run: r,
            time_ms: r.time_ms,
            gpu,
            timing,
            numbers: crate::features::WorkNumbers::of(r),
        };
        // (filled in place over a copy of the first record: no second buffer)
        if let Some(&(_, gpu, timing, r)) = indexed_runs.first() {
            e.sources = vec![source(gpu, timing, r); indexed_runs.len()];
        }
        for (work, gpu, timing, r) in indexed_runs {
            let slot = &mut starts[work as usize];
            e.sources[*slot as usize] = source(gpu, timing, r);
            *slot += 1;
        }
        e
    }
    /// The fastest run measured on `run`'s GPU by `run`'s harness (its `source`): an
    /// upper bound of its launch floor, used as that source's floor (infinite where the
    /// harness timed fewer than [`MIN_HARNESS_RUNS`] runs there). Never asked for the
    /// target.
    pub fn floor_ms(&self, run: &Run) -> Option<f64> {
        self.timings
            .get(&(run.gpu.as_str(), run.source.as_deref()))
            .map(|&i| self.fastest[i as usize])
    }
    /// [`Evidence::floor_ms`] of a [`Source`]'s run.
    pub fn source_floor_ms(&self, s: &Source) -> f64 {
        self.fastest[s.timing as usize]
    }
    /// How slow `gpu` runs `kernel` typically, in log units relative to the kernel's
    /// anchor GPU (the one with the most runs of it): the median over the
    /// configurations both measured of ln(time on gpu / time on anchor). None when
    /// they share no configuration. Only differences between GPUs mean anything: a
    /// run's deviation from its GPU's level is the shape of the tuning space there.
    pub fn level(&self, kernel: &str, gpu: &str) -> Option<f64> {
        self.levels().primary.get(&(kernel, gpu)).copied()
    }

    /// [`Evidence::level`] computed without reading `without`'s runs (when it is the
    /// anchor, the next GPU is): what a model validated by holding `without` out may
    /// use.
    pub fn level_without(&self, kernel: &str, gpu: &str, without: &str) -> Option<f64> {
        let l = self.levels();
        let map = match l.anchor.get(kernel) {
            Some(a) if *a == without => &l.secondary,
            _ => &l.primary,
        };
        map.get(&(kernel, gpu)).copied()
    }

    fn levels(&self) -> &Levels<'a> {
        self.levels.get_or_init(|| {
            let mut by_kernel: FxHashMap<&'a str, Vec<(&'a str, &Vec<&'a Run>)>> =
                FxHashMap::default();
            for (&(gpu, kernel), runs) in &self.by_kernel {
                by_kernel.entry(kernel).or_default().push((gpu, runs));
            }
            let mut l = Levels::default();
            for (kernel, mut gpus) in by_kernel {
                gpus.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(b.0)));
                l.anchor.insert(kernel, gpus[0].0);
                for (rank, map) in [(0, &mut l.primary), (1, &mut l.secondary)] {
                    if let Some(&(anchor, anchor_runs)) = gpus.get(rank) {
                        levels_against(kernel, anchor, anchor_runs, &gpus, map);
                    }
                }
            }
            l
        })
    }

    /// Every (GPU, kernel) with its runs.
    pub fn kernel_runs(&self) -> impl Iterator<Item = ((&'a str, &'a str), &[&'a Run])> {
        self.by_kernel.iter().map(|(k, v)| (*k, v.as_slice()))
    }
    /// The runs of `kernel` on `gpu` (in the order given to [`Evidence::new`]).
    pub fn kernel_runs_on(&self, gpu: &'a str, kernel: &'a str) -> &[&'a Run] {
        self.by_kernel
            .get(&(gpu, kernel))
            .map_or(&[], |v| v.as_slice())
    }
    /// `compute`d once per (kernel, source GPU, target GPU) and context.
    pub(crate) fn kernel_ratio(
        &self,
        key: (&'a str, &'a str, &str),
        ctx: &Context,
        compute: impl FnOnce() -> Result<f64>,
    ) -> Result<f64> {
        let id = ContextId::of(ctx);
        {
            let memo = self.kernel_ratios.lock().unwrap_or_else(|e| e.into_inner());
            if memo.0 == id {
                if let Some(v) = memo.1.get(&(key.0, key.1)).and_then(|t| t.get(key.2)) {
                    return Ok(*v);
                }
            }
        }
        let v = compute()?;
        let mut memo = self.kernel_ratios.lock().unwrap_or_else(|e| e.into_inner());
        if memo.0 != id {
            *memo = (id, FxHashMap::default());
        }
        memo.1
            .entry((key.0, key.1))
            .or_default()
            .insert(key.2.to_string(), v);
        Ok(v)
    }
    /// The GPUs with runs, sorted.
    pub fn gpus(&self) -> Vec<&'a str> {
        let mut g = self.gpu_names.clone();
        g.sort();
        g
    }
    /// `run`'s work measured on GPUs other than `target`.
    pub fn same_work(&self, run: &Run, target: &str) -> Vec<&'a Run> {
        self.same_work_sources(run, target)
            .map(|sources| sources.map(|s| s.run).collect())
            .unwrap_or_default()
    }
    /// [`Evidence::same_work`] as source records (None when nothing measured the work).
    pub fn same_work_sources<'e>(
        &'e self,
        run: &Run,
        target: &str,
    ) -> Option<impl Iterator<Item = &'e Source<'a>> + use<'e, 'a>> {
        self.work_sources(&run.kernel, &run.config, target)
    }
    /// [`Evidence::same_work_sources`] of the work named `kernel`, `config`.
    pub fn work_sources<'e>(
        &'e self,
        kernel: &str,
        config: &str,
        target: &str,
    ) -> Option<impl Iterator<Item = &'e Source<'a>> + use<'e, 'a>> {
        let w = self.by_work.find(work_index_hash(kernel, config), |w| {
            work_names_of(&self.work_names, w) == (kernel, config)
        })?;
        let sources = &self.sources[w.start as usize..w.end as usize];
        // The target by position: filtering compares numbers, not each run's name.
        let target = self.gpu_ids.get(target).copied();
        Some(sources.iter().filter(move |s| Some(s.gpu) != target))
    }
    /// How many GPUs have runs.
    pub fn gpus_count(&self) -> usize {
        self.gpu_names.len()
    }
    /// The runs indexed as sources.
    pub fn indexed_runs(&self) -> impl Iterator<Item = &'a Run> + '_ {
        self.sources.iter().map(|s| s.run)
    }
    /// Whether a run here is of a corpus ([`corpus`]) not in `corpora` (sorted): runs
    /// a fit on those corpora has not seen the like of.
    pub fn has_corpus_beyond(&self, corpora: &[String]) -> bool {
        self.timings.keys().any(|&(_, source)| {
            let c = source.unwrap_or(NO_SOURCE);
            corpora.binary_search_by(|x| x.as_str().cmp(c)).is_err()
        })
    }
    /// The interval `compute` calibrates on these runs in `ctx`, computed once per
    /// context (the first call computes it; concurrent callers wait for it).
    pub(crate) fn own_interval(
        &self,
        ctx: &Context,
        compute: impl FnOnce() -> Result<Option<interval::FittedInterval>>,
    ) -> Result<Option<Arc<interval::FittedInterval>>> {
        let id = ContextId::of(ctx);
        let mut cached = self
            .own_interval
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((at, interval)) = cached.as_ref() {
            if *at == id {
                return Ok(interval.clone());
            }
        }
        let interval = compute()?.map(Arc::new);
        *cached = Some((id, interval.clone()));
        Ok(interval)
    }
    /// The catalog entry of the GPU a [`Source`] names by position.
    pub fn source_gpu<'c>(&self, gpu: u32, ctx: &Context<'c>) -> Result<&'c Gpu> {
        let address = ctx.catalog as *const Catalog as usize;
        let (resolved_in, places) = self.catalog_gpus.get_or_init(|| {
            let places = self
                .gpu_names
                .iter()
                .map(|name| {
                    let g = ctx.catalog.resolve_or_err(name).ok()?;
                    ctx.catalog.index_of(g)
                })
                .collect();
            (address, places)
        });
        let place = match places.get(gpu as usize) {
            Some(Some(i)) if *resolved_in == address => ctx.catalog.gpus().get(*i),
            _ => None,
        };
        // (else another catalog, or a name it does not know: the lookup's error)
        place.map_or_else(|| ctx.catalog.resolve_or_err(self.gpu_name(gpu)), Ok)
    }
    /// The name of the GPU a [`Source`] names by position.
    pub fn gpu_name(&self, gpu: u32) -> &'a str {
        self.gpu_names[gpu as usize]
    }
    /// The other configuration of the same kernel on `gpu` closest in (log) work to
    /// `run`'s: the source of a size projection (ties: the run indexed first).
    pub fn nearest_size(&self, gpu: &str, run: &Run) -> Option<&'a Run> {
        let w = run.work().max(1.0).ln();
        let v = self.size_index().get(&(gpu, run.kernel.as_str()))?;
        // Walk outwards from where `w` would sit, nearest first, until the next
        // candidate on either side is farther than the best found.
        let start = v.partition_point(|s| s.ln_work < w);
        let (mut left, mut right) = (start, start);
        let mut best: Option<(f64, usize, &'a Run)> = None;
        loop {
            let to_left = (left > 0).then(|| w - v[left - 1].ln_work);
            let to_right = (right < v.len()).then(|| v[right].ln_work - w);
            let (distance, go_left) = match (to_left, to_right) {
                (None, None) => break,
                (Some(a), None) => (a, true),
                (None, Some(b)) => (b, false),
                (Some(a), Some(b)) => {
                    if a <= b {
                        (a, true)
                    } else {
                        (b, false)
                    }
                }
            };
            if best.is_some_and(|(d, _, _)| distance > d) {
                break;
            }
            let s = if go_left {
                left -= 1;
                &v[left]
            } else {
                right += 1;
                &v[right - 1]
            };
            if s.run.config == run.config {
                continue;
            }
            if best.is_none_or(|(d, order, _)| (distance, s.order) < (d, order)) {
                best = Some((distance, s.order, s.run));
            }
        }
        best.map(|(_, _, r)| r)
    }

    /// Per (GPU, kernel): its runs sorted by ln work (built on first use: a size
    /// projection's source is found by bisection, not by scanning every run; the scan
    /// was a third of LOGO hybrid's time on 100k rows).
    fn size_index(&self) -> &FxHashMap<(&'a str, &'a str), Vec<SizeEntry<'a>>> {
        self.sizes.get_or_init(|| {
            self.by_kernel
                .iter()
                .map(|(&key, runs)| {
                    let mut v: Vec<SizeEntry<'a>> = runs
                        .iter()
                        .enumerate()
                        .map(|(order, &run)| SizeEntry {
                            ln_work: run.work().max(1.0).ln(),
                            order,
                            run,
                        })
                        .collect();
                    v.sort_by(|a, b| a.ln_work.total_cmp(&b.ln_work).then(a.order.cmp(&b.order)));
                    (key, v)
                })
                .collect()
        })
    }
}

/// Validated hyperparameters of a model (linfa's "params"): fitting returns a fitted
/// model, which alone predicts.
pub trait Fit: Send + Sync {
    fn name(&self) -> String;
    /// Learn from training runs (in LOGO never a row of the target GPU).
    fn fit(&self, train: &[&Run], ctx: &Context) -> Result<Box<dyn Predict>>;
}

/// A fitted model.
pub trait Predict: Send + Sync {
    fn name(&self) -> String;
    /// One line on what fitting decided that a reader of the results should know
    /// (e.g. the hybrid's correction share); None when there is nothing to say.
    fn fit_summary(&self) -> Option<String> {
        None
    }
    /// Predict `query` on `query.gpu`; None when the model has nothing to go on
    /// (e.g. no source GPU measured that work).
    fn predict(
        &self,
        query: &Query,
        evidence: &Evidence,
        ctx: &Context,
    ) -> Result<Option<Prediction>>;
    /// Predict `work` (a measured run: its work, on any GPU, the target's own test run
    /// included) on `target`: [`Predict::predict`] of its query
    /// ([`Query::set`](crate::data::Query::set) on `buffer`: one buffer for many calls
    /// allocates nothing per call; the query has no measurement). A model that reads
    /// only the work's names and the target overrides it to skip the copy, giving
    /// exactly what `predict` gives; no model reads `work`'s time.
    fn predict_work(
        &self,
        work: &Run,
        target: &str,
        buffer: &mut Query,
        evidence: &Evidence,
        ctx: &Context,
    ) -> Result<Option<Prediction>> {
        buffer.set(work, target);
        self.predict(buffer, evidence, ctx)
    }
}

/// Names accepted by `--model` (and `models = [...]` in experiment files), with what
/// each is. `hybrid-REGRESSOR` and `hybrid@SHARE` variants are parsed from these.
pub const MODEL_NAMES: &[(&str, &str)] = &[
    (
        "analytical",
        "our analytical projection (roofline + occupancy ratios)",
    ),
    ("analytical-study", "the reference study's Algorithm 1"),
    (
        "hybrid",
        "analytical x exp(learned residual), 90 % interval",
    ),
    ("linear", "learned baseline: least squares on log time"),
    ("ridge", "learned baseline: ridge regression"),
    ("lasso", "learned baseline: lasso regression"),
    ("tree", "learned baseline: regression tree"),
    ("forest", "learned baseline: random forest"),
    ("svr", "learned baseline: support vector regression"),
    ("knn", "learned baseline: k nearest neighbours"),
    ("gbm", "learned baseline: gradient-boosted trees"),
];

/// A model chosen by name: the one registry of model names. Parsing validates every
/// hyperparameter the name carries (`hybrid@1.5` is an error, not a clamp).
#[derive(Debug, Clone, PartialEq)]
pub enum ModelSpec {
    Analytical,
    AnalyticalStudy,
    Learned(learned::LearnedParams),
    Hybrid(hybrid::HybridParams),
}

impl ModelSpec {
    /// Parse `analytical`, `analytical-study`, a learned baseline (`forest`, ...) or
    /// `hybrid[-REGRESSOR][@SHARE]`; `seed` makes learned models deterministic.
    pub fn parse(name: &str, seed: u64) -> Result<ModelSpec> {
        use regressors::RegressorKind;
        let name = name.trim();
        match name {
            "analytical" => Ok(ModelSpec::Analytical),
            "analytical-study" => Ok(ModelSpec::AnalyticalStudy),
            h if h == "hybrid" || h.starts_with("hybrid-") || h.starts_with("hybrid@") => {
                Ok(ModelSpec::Hybrid(hybrid::HybridParams::parse(h, seed)?))
            }
            other => match RegressorKind::parse(other) {
                Some(kind) => Ok(ModelSpec::Learned(learned::LearnedParams { kind, seed })),
                None => Err(Error::usage(format!(
                    "unknown model '{other}' (known: {}; hybrid-REGRESSOR and hybrid@SHARE vary the hybrid)",
                    MODEL_NAMES
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", ")
                ))),
            },
        }
    }

    /// Whether this is the study's algorithm (which uses the study's own figures).
    pub fn is_study(&self) -> bool {
        matches!(self, ModelSpec::AnalyticalStudy)
    }

    fn params(&self) -> &dyn Fit {
        match self {
            ModelSpec::Analytical => &analytical::Analytical,
            ModelSpec::AnalyticalStudy => &analytical::AnalyticalStudy,
            ModelSpec::Learned(p) => p,
            ModelSpec::Hybrid(p) => p,
        }
    }
}

impl Fit for ModelSpec {
    fn name(&self) -> String {
        self.params().name()
    }
    fn fit(&self, train: &[&Run], ctx: &Context) -> Result<Box<dyn Predict>> {
        self.params().fit(train, ctx)
    }
}

#[cfg(test)]
mod tests {

    /// SYNTHETIC held-out runs: (GPU, error without the part, what a full fraction of it
    /// removes); a fraction f leaves |error - f x removed|.
    fn fraction_of(
        runs: &[(usize, f64, f64)],
        n_gpus: usize,
        per_gpu: bool,
    ) -> super::FractionChoice {
        let ape = |f: f64, r: &(usize, f64, f64)| (r.1 - f * r.2).abs();
        super::FractionChoice::judge(runs, n_gpus, |r| r.0, ape, per_gpu, |_| true)
    }

    /// A fraction is taken only when it helps clearly and hurts no held-out GPU by more
    /// than a point; per GPU, it needs three GPUs that gain.
    #[test]
    fn a_fraction_helps_clearly_and_hurts_no_held_out_gpu() {
        // every GPU's runs lose their whole error at fraction 1
        let helps: Vec<(usize, f64, f64)> = (0..60)
            .map(|i| {
                (
                    i % 3,
                    0.10 + 0.01 * (i % 5) as f64,
                    0.10 + 0.01 * (i % 5) as f64,
                )
            })
            .collect();
        assert_eq!(fraction_of(&helps, 3, false).lowest(), 1.0);
        assert_eq!(fraction_of(&helps, 3, true).lowest(), 1.0);
        // ... but GPU 2 is 2 points worse with any of it: nothing is taken
        let hurts: Vec<(usize, f64, f64)> = helps
            .iter()
            .map(|&(g, e, r)| if g == 2 { (g, 0.0, -0.08) } else { (g, e, r) })
            .collect();
        assert_eq!(fraction_of(&hurts, 3, false).lowest(), 0.0);
        // two GPUs cannot show a gain counted per GPU
        let two: Vec<(usize, f64, f64)> = helps.iter().map(|&(g, e, r)| (g % 2, e, r)).collect();
        assert_eq!(fraction_of(&two, 2, false).lowest(), 1.0);
        assert_eq!(fraction_of(&two, 2, true).lowest(), 0.0);
        // the caller's own guard can refuse a fraction
        let ape = |f: f64, r: &(usize, f64, f64)| (r.1 - f * r.2).abs();
        let guarded = super::FractionChoice::judge(&helps, 3, |r| r.0, ape, false, |f| f < 0.6);
        assert_eq!(guarded.lowest(), 0.5);
    }

    /// The one-standard-error rule: the smallest fraction the best is not clearly better
    /// than, per GPU.
    #[test]
    fn the_smallest_fraction_as_good_as_the_best() {
        // SYNTHETIC mean APE per fraction (0, 0.25, 0.5, 0.75, 1) of GPUs 0 and 1, and
        // of GPUs 2 and 3: 1 is best in total, but from 0.5 to 1 two GPUs gain 3 points
        // and two lose 1, which is no clear gain over four GPUs; 0.25 is clearly worse.
        let profile = [
            [0.30, 0.20, 0.15, 0.13, 0.12],
            [0.30, 0.20, 0.14, 0.15, 0.15],
        ];
        let runs: Vec<(usize, f64)> = (0..80).map(|i| (i % 4, 0.002 * (i % 5) as f64)).collect();
        let ape = |f: f64, r: &(usize, f64)| {
            let at = super::FRACTION_GRID.iter().position(|&g| g == f).unwrap();
            profile[r.0 / 2][at] + r.1
        };
        let choice = super::FractionChoice::judge(&runs, 4, |r| r.0, ape, true, |_| true);
        assert_eq!(choice.lowest(), 1.0);
        assert_eq!(choice.smallest_as_good_as(1.0), 0.5);
        assert_eq!(choice.smallest_as_good_as(0.0), 0.0);
    }

    /// A harness's floor is its fastest run only up to 50 µs (a tuning space's fastest
    /// configuration is work); launch-bound is below four times it.
    #[test]
    fn launch_bound_runs_sit_near_a_harness_floor() {
        assert_eq!(harness_floor_ms(Some(0.025)), Some(0.025));
        assert_eq!(harness_floor_ms(Some(0.5)), None);
        assert_eq!(harness_floor_ms(None), None);
        assert!(launch_bound(0.09, Some(0.025)));
        assert!(!launch_bound(0.1, Some(0.025)));
        assert!(
            !launch_bound(0.6, Some(0.5)),
            "no floor, no launch-bound run"
        );
    }

    use super::*;

    /// A launch-bound prediction takes the calibrated interval as it is (narrower than
    /// its sources' spread too); any other is only ever widened to it.
    #[test]
    fn a_launch_bound_prediction_takes_the_calibrated_interval_as_it_is() {
        let spread = Prediction {
            pred_ms: 1.0,
            lo_ms: 0.5,
            hi_ms: 2.0,
            interval: Interval::Spread,
            bound: Bound::Dram,
        };
        let bounds = Some((-0.1, 0.2));
        let launch = spread.calibrated(bounds, true);
        assert_eq!(
            (launch.lo_ms, launch.hi_ms),
            ((-0.1f64).exp(), 0.2f64.exp())
        );
        assert_eq!(launch.interval, Interval::Calibrated(INTERVAL_LEVEL));
        let work = spread.calibrated(bounds, false);
        assert_eq!((work.lo_ms, work.hi_ms), (0.5, 2.0));
        assert_eq!(work.interval, Interval::Calibrated(INTERVAL_LEVEL));
        // bounds both above the prediction still contain it
        let above = spread.calibrated(Some((0.1, 0.3)), true);
        assert_eq!((above.lo_ms, above.hi_ms), (1.0, 0.3f64.exp()));
        // no calibrated interval: the spread
        assert_eq!(spread.calibrated(None, true), spread);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        /// The bisection finds what scanning every run finds, ties included
        /// (SYNTHETIC runs: works from a few values, so equal distances are common).
        #[test]
        fn nearest_size_equals_a_full_scan(
            works in proptest::collection::vec(0u32..6, 1..30),
            query_work in 0u32..7,
            query_config in 0usize..30,
        ) {
            let runs: Vec<Run> = works
                .iter()
                .enumerate()
                .map(|(i, &w)| Run {
                    gpu: "G".into(),
                    kernel: "k".into(),
                    config: format!("c{}", i % 25).into(),
                    flops: 10f64.powi(w as i32 + 3) * if w % 2 == 0 { 1.0 } else { 3.0 },
                    time_ms: 1.0,
                    ..Default::default()
                })
                .collect();
            let query = Run {
                config: format!("c{query_config}").into(),
                flops: 10f64.powi(query_work as i32 + 3),
                ..runs[0].clone()
            };
            let w = query.work().max(1.0).ln();
            let distance = |r: &Run| (r.work().max(1.0).ln() - w).abs();
            let scan = runs
                .iter()
                .filter(|r| r.config != query.config)
                .min_by(|a, b| distance(a).total_cmp(&distance(b)));
            let ev = Evidence::new(runs.iter());
            let found = ev.nearest_size("G", &query);
            proptest::prop_assert_eq!(found.map(|r| r as *const Run), scan.map(|r| r as *const Run));
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        /// The work-grouped source records give what filtering the runs gives: the
        /// same work on every other GPU, in the order the runs were given
        /// (SYNTHETIC runs: works and GPUs drawn from a few values, interleaved).
        #[test]
        fn same_work_equals_a_filter_of_the_runs(
            rows in proptest::collection::vec((0u32..4, 0u32..3, 0u32..4), 0..40),
            query_config in 0u32..5,
            target in 0u32..4,
        ) {
            let runs: Vec<Run> = rows
                .iter()
                .map(|&(gpu, kernel, config)| Run {
                    gpu: format!("G{gpu}").into(),
                    kernel: format!("k{kernel}").into(),
                    config: format!("c{config}").into(),
                    time_ms: 1.0 + gpu as f64,
                    flops: 1e6 * (1 + config) as f64,
                    ..Default::default()
                })
                .collect();
            let query = Run {
                gpu: format!("G{target}").into(),
                kernel: "k1".into(),
                config: format!("c{query_config}").into(),
                ..Default::default()
            };
            let scan: Vec<*const Run> = runs
                .iter()
                .filter(|r| r.work_key() == query.work_key() && r.gpu != query.gpu)
                .map(|r| r as *const Run)
                .collect();
            let ev = Evidence::new(runs.iter());
            let found: Vec<*const Run> = ev
                .same_work(&query, &query.gpu)
                .into_iter()
                .map(|r| r as *const Run)
                .collect();
            proptest::prop_assert_eq!(&found, &scan);
            // each record carries its run's time, GPU and numbers
            for s in ev.same_work_sources(&query, &query.gpu).into_iter().flatten() {
                proptest::prop_assert_eq!(s.time_ms, s.run.time_ms);
                proptest::prop_assert_eq!(ev.gpu_name(s.gpu), s.run.gpu.as_str());
                let harness = runs
                    .iter()
                    .filter(|r| r.gpu == s.run.gpu && r.source == s.run.source);
                let fastest = harness.clone().map(|r| r.time_ms).fold(f64::INFINITY, f64::min);
                let fastest = fastest_of_harness(fastest, harness.count() as u32);
                proptest::prop_assert_eq!(ev.source_floor_ms(s), fastest);
                proptest::prop_assert_eq!(ev.floor_ms(s.run), Some(fastest));
                proptest::prop_assert_eq!(s.numbers, crate::features::WorkNumbers::of(s.run));
            }
        }
    }

    #[test]
    fn source_records_stay_compact() {
        // 80 bytes a run in every LOGO fold's index: 73 MB of a 1M-row fold.
        assert!(std::mem::size_of::<Source>() <= 80);
        assert!(std::mem::size_of::<crate::features::WorkNumbers>() <= 56);
    }

    #[test]
    fn an_index_of_some_works_still_floors_every_gpu() {
        // SYNTHETIC: the fastest run of G1 is of a work the index leaves out.
        let run = |gpu: &str, config: &str, time_ms: f64| Run {
            gpu: gpu.into(),
            kernel: "k".into(),
            config: config.into(),
            time_ms,
            ..Default::default()
        };
        let runs = [
            run("G1", "a", 0.002),
            run("G1", "b", 0.5),
            run("G2", "b", 0.4),
            run("G2", "a", 0.003),
            run("G1", "c", 0.6),
            run("G2", "c", 0.7),
        ];
        let ev = Evidence::new_for(runs.iter(), |r| r.config == "b");
        assert_eq!(ev.floor_ms(&runs[1]), Some(0.002));
        assert_eq!(ev.floor_ms(&runs[2]), Some(0.003));
        assert_eq!(ev.gpus(), ["G1", "G2"]);
        let on = |gpu: &str, config: &str| Run {
            gpu: gpu.into(),
            ..run("", config, f64::NAN)
        };
        assert_eq!(ev.same_work(&on("G9", "b"), "G9").len(), 2);
        assert!(ev.same_work(&on("G9", "a"), "G9").is_empty());
        assert!(ev.kernel_runs_on("G1", "k").iter().all(|r| r.config == "b"));
    }

    /// SYNTHETIC: one GPU timed by two harnesses (the `source` column) has a floor
    /// per harness, each its own fastest run; a source record reads its own. A harness
    /// with fewer than three runs there has none (infinite).
    #[test]
    fn each_harness_has_its_own_floor_on_a_gpu() {
        let run = |source: Option<&str>, config: &str, time_ms: f64| Run {
            gpu: "G1".into(),
            kernel: "k".into(),
            config: config.into(),
            time_ms,
            source: source.map(Into::into),
            ..Default::default()
        };
        let runs = [
            run(Some("tables"), "a", 0.0024),
            run(Some("runner"), "a", 0.0031),
            run(Some("runner"), "b", 0.009),
            run(None, "b", 0.004),
            run(Some("tables"), "c", 0.01),
            run(Some("tables"), "d", 0.02),
            run(Some("runner"), "c", 0.03),
        ];
        let ev = Evidence::new(runs.iter());
        let floors: Vec<Option<f64>> = runs[..4].iter().map(|r| ev.floor_ms(r)).collect();
        assert_eq!(
            floors,
            [
                Some(0.0024),
                Some(0.0031),
                Some(0.0031),
                Some(f64::INFINITY)
            ]
        );
        let b = ev.work_sources("k", "b", "G9").unwrap();
        let b_floors: Vec<f64> = b.map(|s| ev.source_floor_ms(s)).collect();
        assert_eq!(b_floors, [0.0031, f64::INFINITY]);
        // a GPU no run of which is indexed has no floor
        assert_eq!(
            ev.floor_ms(&Run {
                gpu: "G2".into(),
                ..run(None, "a", 1.0)
            }),
            None
        );
    }

    #[test]
    fn a_source_gpu_is_the_catalog_entry_of_its_name() {
        let catalog = Catalog::builtin();
        let other = Catalog::builtin();
        let ctx = |catalog| Context::new(catalog, &Calibration::Spec, None);
        let run = |gpu: &str| Run {
            gpu: gpu.into(),
            kernel: "k".into(),
            config: "c".into(),
            time_ms: 1.0,
            ..Default::default()
        };
        let runs = [run("NVIDIA TITAN V"), run("no such GPU")];
        let ev = Evidence::new(runs.iter());
        let (first, second) = (ctx(&catalog), ctx(&other));
        let titan = first.gpu("NVIDIA TITAN V").unwrap();
        assert!(std::ptr::eq(ev.source_gpu(0, &first).unwrap(), titan));
        // another catalog (after the first fixed the cache) resolves in that one
        let in_other = ev.source_gpu(0, &second).unwrap();
        assert!(std::ptr::eq(
            in_other,
            second.gpu("NVIDIA TITAN V").unwrap()
        ));
        // a name no catalog knows is the lookup's error, every time
        for c in [&first, &second] {
            let e = ev.source_gpu(1, c).unwrap_err().to_string();
            assert!(e.contains("unknown GPU 'no such GPU'"), "{e}");
        }
    }

    #[test]
    fn a_prediction_is_never_below_the_peak_floor() {
        let p = Prediction {
            pred_ms: 1.0,
            lo_ms: 0.2,
            hi_ms: 3.0,
            interval: Interval::Calibrated(0.9),
            bound: Bound::Dram,
        };
        let q = p.at_least(0.5);
        assert_eq!((q.pred_ms, q.lo_ms, q.hi_ms), (1.0, 0.5, 3.0));
        let q = p.at_least(4.0);
        assert_eq!((q.pred_ms, q.lo_ms, q.hi_ms), (4.0, 4.0, 4.0));
        assert_eq!(p.interval.label(), "90%");
        assert_eq!(Interval::Spread.label(), "spread");
    }
}
