//! Hybrid: the analytical projection times exp(a learned residual).
//!
//! The residual model sees only GPU-agnostic features of a source -> target projection
//! ([`crate::features::vectors::pair`]) and is fitted on projections among the training
//! runs only: every pair of training GPUs that measured the same work, plus each
//! training run projected from the nearest other size of its kernel on its own GPU
//! (so the correction also learns size scaling). Its target is
//! ln(measured / projected). How much of the correction is applied is chosen by
//! leave-one-GPU-out inside the training GPUs (0 when it does not generalize).
//!
//! The sources' projections are then moved a learned share of the way to their
//! kernel's typical projection ratio, and combined with a learned shape transfer
//! ([`ShapeTransfer`]): the level from all sources, the tuning-space shape from the
//! sources whose shape the training GPUs say carries over to the target. Held-out
//! errors of that combined prediction give a 90 % prediction interval. A prediction
//! applies these fitted stages in order ([`super::stages`]); fitting chooses them here,
//! each on the errors of the training GPUs held out in turn. Deterministic for a seed.

use super::analytical::{self, project, projections, similarity};
use super::interval::FittedInterval;
use super::regressors::{make, FittedRegressor, RegressorKind};
use super::stages;
use super::transfer::{self, ShapeTransfer};
use super::{
    group_means, interval_log, no_group_worse, Context, Evidence, Fit, FractionChoice,
    HeldOutError, LaunchFloors, Predict, Prediction,
};
use crate::catalog::Gpu;
use crate::data::{Query, Run};
use crate::error::{Error, Result};
use crate::features::vectors;
use ndarray::{Array1, Array2};

/// The regressor behind the residual unless told otherwise.
pub const DEFAULT_REGRESSOR: RegressorKind = RegressorKind::Gbm;
/// Below this many training pairs the correction is not fitted (pure analytical).
const MIN_PAIRS: usize = 8;
/// Version of the saved-model format ([`HybridState`]); loading another version is an
/// error (CHANGELOG.md lists what each version changed).
pub const MODEL_FORMAT_VERSION: u32 = 12;

/// Hyperparameters of the hybrid: the residual's regressor, its seed and, as a
/// diagnostic, a fixed correction share (`hybrid@0.5`) instead of the one chosen by
/// leave-one-GPU-out inside the training GPUs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HybridParams {
    pub regressor: RegressorKind,
    pub seed: u64,
    /// The share of the learned correction applied, when fixed (0..=1).
    pub correction_share: Option<f64>,
    /// Training runs the residual learns from, at most (an even, deterministic
    /// subsample beyond it; every training run stays a source). Bounds the pairs, and
    /// so the booster's fits, whatever the corpus size.
    pub training_queries: usize,
}

impl HybridParams {
    pub fn new(seed: u64) -> Self {
        HybridParams {
            regressor: DEFAULT_REGRESSOR,
            seed,
            correction_share: None,
            training_queries: DEFAULT_TRAINING_QUERIES,
        }
    }
    pub fn regressor(mut self, kind: RegressorKind) -> Self {
        self.regressor = kind;
        self
    }
    /// Apply this share of the learned correction instead of choosing it (0..=1).
    pub fn correction_share(mut self, share: f64) -> Result<Self> {
        self.correction_share = Some(share);
        self.check()
    }
    /// Learn the residual from at most `n` training runs (>= 1).
    pub fn training_queries(mut self, n: usize) -> Result<Self> {
        self.training_queries = n;
        self.check()
    }
    /// Validate the hyperparameters.
    pub fn check(self) -> Result<Self> {
        if self.training_queries == 0 {
            return Err(Error::usage("hybrid training queries must be >= 1"));
        }
        if let Some(s) = self.correction_share {
            if !(0.0..=1.0).contains(&s) {
                return Err(Error::usage(format!(
                    "hybrid correction share {s} is outside 0..1"
                )));
            }
        }
        Ok(self)
    }
    /// `hybrid[-REGRESSOR][@SHARE]`.
    pub fn parse(name: &str, seed: u64) -> Result<Self> {
        let (base, share) = match name.split_once('@') {
            Some((b, s)) => (
                b,
                Some(s.trim().parse::<f64>().map_err(|_| {
                    Error::usage(format!(
                        "'{name}': the correction share after '@' must be a number in 0..1 (e.g. hybrid@0.5)"
                    ))
                })?),
            ),
            None => (name, None),
        };
        let mut p = HybridParams::new(seed);
        if let Some(r) = base.strip_prefix("hybrid-") {
            p.regressor = RegressorKind::parse(r).ok_or_else(|| {
                Error::usage(format!(
                    "unknown residual regressor in '{name}' (e.g. hybrid-forest)"
                ))
            })?;
        } else if base != "hybrid" {
            return Err(Error::usage(format!("'{name}' is not a hybrid model name")));
        }
        match share {
            Some(s) => p.correction_share(s),
            None => Ok(p),
        }
    }
}

/// Everything that defines a fitted hybrid, as saved by `gpucast train`: what it was
/// trained on, the chosen correction share, the interval and the fitted residual
/// regressor (loading predicts without refitting).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HybridState {
    pub format: String,
    pub version: u32,
    pub gpucast_version: String,
    pub model: String,
    pub regressor: RegressorKind,
    pub seed: u64,
    pub features: Vec<String>,
    pub categories: Vec<String>,
    pub training_gpus: Vec<String>,
    pub data_hash: String,
    /// Share of the learned correction applied to a kernel of a family in
    /// `families` (chosen by leave-one-GPU-out inside the training GPUs; 0 = pure
    /// analytical).
    pub correction_share: f64,
    /// Share applied to a kernel of any other family (chosen by holding out kernel
    /// families together with the GPUs; 0 when the training data has one family).
    pub new_family_share: f64,
    /// The training runs' kernel families ([`Run::family`]), sorted.
    pub families: Vec<String>,
    /// The calibrated interval: quantiles of the held-out log errors ln(measured /
    /// predicted) (pooled, local where chosen, the launch-bound regime's own); the
    /// prediction interval is [pred x e^lo, pred x e^hi], widened to the memory-level
    /// bounds. Without a pooled one too few errors were held out to calibrate one.
    pub interval: FittedInterval,
    /// Training pairs the residual was fitted on.
    pub pairs: usize,
    /// The fitted residual regressor; None when the share is 0 or there were too few
    /// pairs to fit one.
    pub residual: Option<FittedRegressor>,
    /// Which sources' tuning-space shape to trust ([`ShapeTransfer`]); None with too
    /// few pairs of training GPUs sharing configurations. It applies to a query of one
    /// of `corpora` only: a tuning space's shape is learned within the corpus that
    /// measured it. Leave one corpus out, a shape learned on other corpora gives 18.4 %
    /// pooled against 18.2 % without (the reference study 30.5 against 29.4 %); within a
    /// corpus, leave one GPU out, Kernel Tuner's convolution is 26.6 % with it and 29.3 %
    /// without, its GEMM 16.8 and 18.7 %.
    pub shape: Option<ShapeTransfer>,
    /// The corpora (the runs' `source`, [`super::corpus`]) of the training runs, sorted.
    pub corpora: Vec<String>,
    /// Share of the way each projection moves from its per-configuration ratio to its
    /// kernel's typical ratio (0..=1; chosen on the training GPUs, see
    /// [`transfer::fit_and_choose`]).
    pub kernel_ratio_share: f64,
    /// The power of a source's similarity that is its weight in the analytical
    /// combination, chosen as the analytical fit chooses it
    /// ([`analytical::SIMILARITY_POWERS`]); 1 in a file that predates the choice.
    #[serde(default = "similarity_itself")]
    pub similarity_power: i32,
    /// Where its projections put the target's launch floor (the context's it was
    /// fitted in: its held-out errors, and so its shares and interval, were made so).
    #[serde(default)]
    pub launch_floors: LaunchFloors,
    /// Share (0..=1, in logs) of the analytical fit's prediction in the hybrid's where
    /// one of the sources has the target's compute capability: the analytical model
    /// leans on such sources ([`analytical::SAME_ARCH_SIMILARITY`]), which the
    /// correction, learned mostly across architectures, does not know to do. Chosen on
    /// the training GPUs' held-out runs of that case as the correction share is (no
    /// held-out GPU a point worse, a clear gain per run). The hybrid's own weights stay
    /// the similarity's: its corrections make sources of other architectures worth
    /// keeping, and weighting all of it as the analytical fit does is worse leave one GPU
    /// out on the GEMM tables and Kernel Tuner GEMM (CHANGELOG.md). 0 in a file that
    /// predates it.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub analytical_share: f64,
    /// How the analytical fit weighs its sources (the power of their similarity; same
    /// architecture preferred), for its share.
    #[serde(default = "similarity_itself")]
    pub analytical_power: i32,
}

fn similarity_itself() -> i32 {
    1
}

/// `ctx` projecting as the analytical fit `chosen` would.
fn analytical_context<'c>(ctx: &Context<'c>, chosen: &analytical::Candidate) -> Context<'c> {
    ctx.with_similarity_power(chosen.power)
        .with_prefer_same_arch(chosen.prefer_same_arch)
}

/// The share of the analytical fit's prediction in the hybrid's where a source has the
/// target's architecture (`HybridState::analytical_share`): among the fractions that
/// make no held-out GPU more than [`MAX_HARM`](super::MAX_HARM) worse and lower the
/// held-out runs' errors clearly, the one with the lowest mean absolute percentage
/// error (ties to the smaller), judged on the held-out runs of that case.
fn choose_analytical_share(held_out: &[transfer::HeldOutRun], n_gpus: usize) -> f64 {
    let case: Vec<&transfer::HeldOutRun> = held_out
        .iter()
        .filter(|h| h.arch_source && h.analytical_ln_error.is_finite())
        .collect();
    if case.is_empty() {
        return 0.0;
    }
    let ape =
        |share: f64, h: &&transfer::HeldOutRun| ((-h.blended_ln_error(share)).exp() - 1.0).abs();
    FractionChoice::judge(&case, n_gpus, |h| h.error.gpu, ape, false, |_| true).lowest()
}

impl HybridState {
    /// How the analytical fit on its training runs projects (for its share).
    pub fn analytical_fit(&self) -> analytical::Candidate {
        analytical::Candidate {
            prefer_same_arch: true,
            power: self.analytical_power,
        }
    }

    /// The shape transfer for `query`: none for a query of a corpus it was not learned
    /// on ([`HybridState::shape`]).
    pub fn shape_for(&self, query: &Query) -> Option<&ShapeTransfer> {
        let corpus = super::corpus(query);
        self.shape.as_ref().filter(|_| {
            self.corpora
                .binary_search_by(|c| c.as_str().cmp(corpus))
                .is_ok()
        })
    }

    /// The share of the correction applied to `query`: a family the training data
    /// lacks gets the share chosen for new families (a correction learned on other
    /// families can be wrong for it: on the reference study's new-family protocol, a
    /// share chosen on known families made TITAN V 8 points worse).
    pub fn share_for(&self, query: &Query) -> f64 {
        let family = query.family();
        if self
            .families
            .binary_search_by(|f| f.as_str().cmp(family))
            .is_ok()
        {
            self.correction_share
        } else {
            self.new_family_share
        }
    }
    /// Check every field a hand edit could break.
    fn check(&self) -> Result<()> {
        let bad = |m: String| Err(Error::model_file(m));
        if self.format != "gpucast-model" || self.model != "hybrid" {
            return bad("not a gpucast hybrid model file".into());
        }
        if self.version != MODEL_FORMAT_VERSION {
            return bad(version_mismatch(self.version, &self.gpucast_version));
        }
        for (name, share) in [
            ("correction_share", self.correction_share),
            ("new_family_share", self.new_family_share),
            ("kernel_ratio_share", self.kernel_ratio_share),
            ("analytical_share", self.analytical_share),
        ] {
            if !(0.0..=1.0).contains(&share) {
                return bad(format!("{name} {share} is outside 0..1"));
            }
        }
        if self.families.windows(2).any(|w| w[0] >= w[1]) {
            return bad("families must be sorted, each named once".into());
        }
        for (name, power) in [
            ("similarity_power", self.similarity_power),
            ("analytical_power", self.analytical_power),
        ] {
            if !analytical::SIMILARITY_POWERS.contains(&power) {
                return bad(format!(
                    "{name} {power} is not one of {:?}",
                    analytical::SIMILARITY_POWERS
                ));
            }
        }
        self.interval.check().or_else(bad)?;
        let width = vectors::PAIR_NAMES.len() + self.categories.len();
        if self.features != feature_names(&self.categories) {
            return bad(format!(
                "features must be this gpucast's {} pair features followed by one 'category=NAME' per category ({width} in all)",
                vectors::PAIR_NAMES.len(),
            ));
        }
        if let Some(r) = &self.residual {
            if r.kind() != self.regressor {
                return bad(format!(
                    "residual is a {} model but regressor says {}",
                    r.kind().name(),
                    self.regressor.name()
                ));
            }
            if r.n_features() != width {
                return bad(format!(
                    "residual takes {} features, the feature list has {width}",
                    r.n_features()
                ));
            }
            r.check()
                .map_err(|e| Error::model_file(format!("residual {e}")))?;
        } else if self.correction_share.max(self.new_family_share) > 0.0 && self.pairs >= MIN_PAIRS
        {
            return bad(format!(
                "correction_share {} (new families {}) but no residual model",
                self.correction_share, self.new_family_share
            ));
        }
        if self.training_gpus.is_empty() {
            return bad("no training GPUs".into());
        }
        if let Some(t) = &self.shape {
            t.check().or_else(bad)?;
        }
        if !self.corpora.is_sorted() || self.corpora.is_empty() {
            return bad("corpora must be sorted and not empty".into());
        }
        Ok(())
    }
}

/// Why a model file of another format version is not read.
fn version_mismatch(version: u32, written_by: &str) -> String {
    format!(
        "model file format version {version} (written by gpucast {written_by}), this gpucast reads version {MODEL_FORMAT_VERSION}: retrain it with `gpucast train`"
    )
}

/// The residual's feature names: the pair features, then one per kernel category.
fn feature_names(categories: &[String]) -> Vec<String> {
    vectors::PAIR_NAMES
        .iter()
        .map(|s| s.to_string())
        .chain(categories.iter().map(|c| format!("category={c}")))
        .collect()
}

/// A fitted hybrid.
pub struct FittedHybrid {
    params: HybridParams,
    state: HybridState,
}

impl FittedHybrid {
    pub fn state(&self) -> &HybridState {
        &self.state
    }
    /// Rebuild a fitted hybrid from its saved state (every field validated).
    pub fn from_state(state: HybridState) -> Result<Self> {
        state.check()?;
        let params = HybridParams::new(state.seed).regressor(state.regressor);
        Ok(FittedHybrid { params, state })
    }
    /// Read a model file written by `gpucast train`.
    pub fn load(path: &std::path::Path) -> Result<Self> {
        let text = crate::files::read_to_string(path)
            .map_err(|e| Error::file(path.display(), e.to_string()))?;
        Self::from_json(&text, &path.display().to_string())
    }
    /// A model from the text of a model file; `origin` names it in messages.
    pub fn from_json(text: &str, origin: &str) -> Result<Self> {
        let path = std::path::Path::new(origin);
        // The version first: a file of another version lacks or adds fields, and
        // "retrain it" says more than the first field serde misses.
        #[derive(serde::Deserialize)]
        struct Header {
            version: u32,
            #[serde(default)]
            gpucast_version: String,
        }
        if let Ok(h) = serde_json::from_str::<Header>(text) {
            if h.version != MODEL_FORMAT_VERSION {
                return Err(Error::model_file(format!(
                    "{}: {}",
                    path.display(),
                    version_mismatch(h.version, &h.gpucast_version)
                )));
            }
        }
        let state: HybridState = serde_json::from_str(text).map_err(|e| {
            Error::model_file(format!(
                "{}: not a gpucast model file: {}",
                path.display(),
                e.to_string().lines().next().unwrap_or_default()
            ))
        })?;
        Self::from_state(state).map_err(|e| Error::model_file(format!("{}: {e}", path.display())))
    }
    /// Write the model file atomically, once it passes the checks a load makes (a
    /// model that could not be read back is not written).
    pub fn save(&self, path: &std::path::Path) -> Result<()> {
        self.state.check()?;
        let text = serde_json::to_string(&self.state)?;
        crate::files::write_atomic(path, &text)
    }
}

/// The residual regressor a fitted hybrid applies: none when its share is 0 (the
/// correction would be multiplied by e^0, so fitting and querying it is wasted work).
/// `share` is the larger of the known- and new-family shares.
fn correction(
    kind: RegressorKind,
    seed: u64,
    share: f64,
    x: &[Vec<f64>],
    y: &[f64],
) -> Result<Option<FittedRegressor>> {
    if share == 0.0 {
        return Ok(None);
    }
    fit_regressor(kind, seed, x, y)
}

fn fit_regressor(
    kind: RegressorKind,
    seed: u64,
    x: &[Vec<f64>],
    y: &[f64],
) -> Result<Option<FittedRegressor>> {
    if y.len() < MIN_PAIRS {
        return Ok(None);
    }
    Ok(Some(
        make(kind, seed).fit(&to_matrix(x)?, &Array1::from(y.to_vec()))?,
    ))
}

/// Feature rows as a matrix (rows of equal width).
pub(crate) fn to_matrix(rows: &[Vec<f64>]) -> Result<Array2<f64>> {
    let width = rows.first().map(|r| r.len()).unwrap_or(0);
    if rows.iter().any(|r| r.len() != width) {
        return Err(Error::model("hybrid: feature rows of different lengths"));
    }
    Array2::from_shape_vec((rows.len(), width), rows.concat())
        .map_err(|e| Error::model(e.to_string()))
}

/// Same-work sources per training run (the most similar GPUs): bounds the pairs, which
/// otherwise grow with the square of the training GPUs.
const MAX_SOURCES_PER_RUN: usize = 4;
/// [`HybridParams::training_queries`] unless told otherwise. `gpucast bench`, LOGO
/// hybrid on 100k rows x 8 GPUs, 2 cores: 16.9 s (min of 3) with it, 3 held-out
/// groups and the shape transfer. Measured before the shape transfer and the size
/// index (then 22 s with it): 28 s with 4 groups, 35 s at 5,000 queries, and
/// unfinished after 5 minutes without a bound.
pub const DEFAULT_TRAINING_QUERIES: usize = 4_000;
/// Groups of training GPUs held out in turn to choose the correction share. 4 groups
/// took 34.6 s against 32.2 s in the benchmark above, and their pooled MAPE was lower
/// only on Kernel Tuner GEMM (21.1 against 21.2 %). Holding out every training GPU
/// alone (no bound) did not help either: pooled LOGO MAPE on the GEMM tables 12.2 ->
/// 12.3 %, on the reference study with the Hopper GPUs 20.6 -> 21.0 % (RTX 2080 Ti
/// 25.4 -> 27.3 %), Kernel Tuner's corpora unchanged.
const MAX_INNER_FOLDS: usize = 3;
/// Training runs held out (in all) to choose the shape transfer's strength and
/// calibrate the interval.
const INTERVAL_QUERIES: usize = 4_000;

/// Where a training pair comes from: its source and target GPUs (indices into the
/// training GPUs), its kernel family (index into the training families), the training
/// run it predicts and its source's weight in the analytical combination.
#[derive(Debug, Clone, Copy)]
struct PairOrigin {
    source_gpu: usize,
    target_gpu: usize,
    family: usize,
    query: usize,
    weight: f64,
}

/// The correction shares chosen inside the training data, the held-out errors the
/// known-family share left, and each held-out run's combined correction (its
/// index among the training queries, the weighted mean of its pairs' corrections).
struct ChosenShares {
    known_family: f64,
    new_family: f64,
    held_out: Vec<HeldOutError>,
    corrections: Vec<(usize, f64)>,
}

/// (predicted correction, actual residual, origin) of a held-out pair.
type ScoredPair = (f64, f64, PairOrigin);

/// Held-out scores of the pairs that target each group of training GPUs in turn
/// (GPU i in group i mod k, k <= [`MAX_INNER_FOLDS`]: with few GPUs that is
/// leave-one-GPU-out; with many it bounds the refits), the residual fitted on the
/// pairs that touch no GPU of the group. With `new_families`, the kernel families
/// of the group's index (family j in group j mod k) are held out of fitting too and
/// only their pairs are scored: what a kernel of a family never seen meets.
fn held_out_scores(
    kind: RegressorKind,
    seed: u64,
    (x, y, origins): (&[Vec<f64>], &[f64], &[PairOrigin]),
    n_gpus: usize,
    new_families: bool,
) -> Result<Vec<ScoredPair>> {
    let groups = n_gpus.clamp(1, MAX_INNER_FOLDS);
    let group = |g: usize| g % groups;
    let mut scored = Vec::new();
    for held in 0..groups {
        let (mut xi, mut yi, mut xo, mut yo) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for ((row, &target), o) in x.iter().zip(y).zip(origins) {
            let (s, t) = (group(o.source_gpu), group(o.target_gpu));
            let family_held = new_families && group(o.family) == held;
            if s != held && t != held && !family_held {
                xi.push(row.clone());
                yi.push(target);
            } else if t == held && s != held && (family_held || !new_families) {
                xo.push(row.clone());
                yo.push((target, *o));
            }
        }
        if xo.is_empty() {
            continue;
        }
        let Some(reg) = fit_regressor(kind, seed, &xi, &yi)? else {
            continue;
        };
        let pred = reg.predict(&to_matrix(&xo)?)?;
        scored.extend(
            pred.iter()
                .map(|c| c.clamp(-stages::MAX_LOG_CORRECTION, stages::MAX_LOG_CORRECTION))
                .zip(yo)
                .map(|(c, (r, o))| (c, r, o)),
        );
    }
    Ok(scored)
}

/// The correction shares for kernels of known and of new families, each chosen by
/// [`choose_share`] on [`held_out_scores`] (held-out GPUs; held-out GPUs and
/// families). A new family's share is never above the known families' (a correction
/// that does not carry over to a new GPU for the kernels it learned from is not
/// trusted for kernels it has never seen: on Kernel Tuner's new-family protocol a
/// larger one made V100 2 points worse). A `fixed` share is used for both. With one
/// training family no new family could be held out: kernels of another family get no
/// correction.
fn choose_correction_shares(
    kind: RegressorKind,
    seed: u64,
    pairs: (&[Vec<f64>], &[f64], &[PairOrigin]),
    n_gpus: usize,
    n_families: usize,
    fixed: Option<f64>,
) -> Result<ChosenShares> {
    let scored = held_out_scores(kind, seed, pairs, n_gpus, false)?;
    let (known_family, held_out, corrections) = if scored.is_empty() {
        // No GPU could be held out (one training GPU): no correction, and no errors
        // to calibrate an interval on. In-sample residuals of the projection are not
        // errors on a GPU the model has not seen: calibrated on them, the H100 <-> H200
        // interval covered 97 % and claimed 90 %.
        (fixed.unwrap_or(0.0), Vec::new(), Vec::new())
    } else {
        choose_share(scored, n_gpus, None, fixed)
    };
    let new_family = match fixed {
        Some(share) => share,
        None if n_families < 2 || known_family == 0.0 => 0.0,
        None => {
            let scored = held_out_scores(kind, seed, pairs, n_gpus, true)?;
            if scored.is_empty() {
                0.0
            } else {
                choose_share(scored, n_gpus, Some(n_families), None)
                    .0
                    .min(known_family)
            }
        }
    };
    Ok(ChosenShares {
        known_family,
        new_family,
        held_out,
        corrections,
    })
}

/// How much of the learned correction to trust, judged on held-out pairs (`scored`,
/// not empty). Each held-out run's pairs are combined as the prediction combines
/// sources (a weighted geometric mean), so a share is judged by the error of what the
/// hybrid would predict, not of single-source projections (corrections that help each
/// source can still shift the combined level). Among the shares that make no held-out
/// GPU more than [`MAX_HARM`](super::MAX_HARM) worse (combined or per source), keep
/// the single-source error and lower the held-out runs' error clearly
/// ([`clearly_lower`]), the one with the lowest mean absolute percentage error over
/// the held-out runs wins (ties go to the smaller share). With `n_families` (the share
/// for new families), no held-out family may get more than
/// [`MAX_HARM`](super::MAX_HARM) worse either: a correction that helps most families
/// while hurting one would hurt some new ones (on the reference study,
/// without this guard, held-out shared-memory kernels got 395 % off).
///
/// Returns the share, the held-out log errors left after it (they set the prediction
/// interval when the shape transfer has none) and each held-out run's combined
/// correction (query index, weighted mean of its pairs' corrections). A `fixed` share
/// is used as given (its held-out errors still set the interval).
fn choose_share(
    mut scored: Vec<ScoredPair>,
    n_gpus: usize,
    n_families: Option<usize>,
    fixed: Option<f64>,
) -> (f64, Vec<HeldOutError>, Vec<(usize, f64)>) {
    // Each held-out run's pairs, together: (weight, predicted correction, actual
    // residual) per pair.
    type HeldOutPair = (f64, f64, f64);
    struct HeldOutRun {
        query: usize,
        gpu: usize,
        family: usize,
        pairs: Vec<HeldOutPair>,
    }
    scored.sort_by_key(|(_, _, o)| o.query);
    let runs: Vec<HeldOutRun> = scored
        .chunk_by(|a, b| a.2.query == b.2.query)
        .map(|pairs| {
            let o = pairs[0].2;
            HeldOutRun {
                query: o.query,
                gpu: o.target_gpu,
                family: o.family,
                pairs: pairs.iter().map(|&(c, r, o)| (o.weight, c, r)).collect(),
            }
        })
        .collect();
    // The weighted mean of (correction, residual) over a run's pairs: the combined
    // prediction's log shift per unit of share, and its error without correction.
    let combined = |pairs: &[HeldOutPair]| {
        let wsum: f64 = pairs.iter().map(|p| p.0).sum::<f64>().max(1e-300);
        let mean =
            |f: fn(&HeldOutPair) -> f64| pairs.iter().map(|p| p.0 * f(p)).sum::<f64>() / wsum;
        (mean(|p| p.1), mean(|p| p.2))
    };
    // ln(measured / combined prediction) of a run with a share of the correction.
    let error = |share: f64, pairs: &[HeldOutPair]| {
        let (c, r) = combined(pairs);
        r - share * c
    };
    let ape = |share: f64, pairs: &[HeldOutPair]| (error(share, pairs).exp() - 1.0).abs();
    let pair_ape = |share: f64, c: f64, r: f64| ((r - share * c).exp() - 1.0).abs();
    // Per held-out GPU: its mean APE with a share, over its runs' combined predictions
    // and over the single-source projections. A share is admissible only when it
    // makes no held-out GPU more than MAX_HARM worse than no correction in either
    // (the target is one more GPU like them, and a correction that helps on average
    // while hurting some GPU would hurt some targets), and keeps the pooled
    // single-source error: the combination can favour a correction that is wrong for
    // most sources when their errors cancel. The single-source tests are a guard: on
    // the shipped corpora they changed no choice (the significance test did).
    let per_family = |share: f64| match n_families {
        Some(n) => group_means(n, runs.iter().map(|r| (r.family, ape(share, &r.pairs)))),
        None => Vec::new(),
    };
    let per_gpu_pairs = |share: f64| {
        group_means(
            n_gpus,
            scored
                .iter()
                .map(|&(c, r, o)| (o.target_gpu, pair_ape(share, c, r))),
        )
    };
    let pooled_pairs = |share: f64| {
        scored
            .iter()
            .map(|&(c, r, _)| pair_ape(share, c, r))
            .sum::<f64>()
    };
    let share = fixed.unwrap_or_else(|| {
        let (base_pairs, base_families) = (per_gpu_pairs(0.0), per_family(0.0));
        let also = |share: f64| {
            no_group_worse(&per_gpu_pairs(share), &base_pairs)
                && no_group_worse(&per_family(share), &base_families)
                && pooled_pairs(share) <= pooled_pairs(0.0) + 1e-12
        };
        FractionChoice::judge(
            &runs,
            n_gpus,
            |r| r.gpu,
            |f, r| ape(f, &r.pairs),
            false,
            also,
        )
        .lowest()
    });
    // (the regime is not known here: these errors only stand in for the interval's
    // when the combined ones are too few, and then for every regime)
    let errors = runs.iter().map(|r| HeldOutError {
        gpu: r.gpu,
        ln_error: error(share, &r.pairs),
        launch_bound: false,
    });
    let corrections = runs.iter().map(|r| (r.query, combined(&r.pairs).0));
    (share, errors.collect(), corrections.collect())
}

/// Sources a training run is projected from: the same work on the other training GPUs
/// and the nearest other size of its kernel on its own GPU.
fn training_sources<'a>(t: &Run, gt: &Gpu, evidence: &Evidence<'a>, ctx: &Context) -> Vec<&'a Run> {
    let mut out = evidence.same_work(t, &t.gpu);
    if out.len() > MAX_SOURCES_PER_RUN {
        // The most similar source GPUs: pairs grow with the square of the GPUs, and
        // distant pairs teach the correction least about the pairs it will meet.
        // Similarity once per source, not per comparison (a catalog lookup each).
        let mut ranked: Vec<(f64, &'a Run)> = out
            .iter()
            .map(|&r| {
                (
                    ctx.gpu(&r.gpu)
                        .map(|g| similarity(ctx.catalog, g, gt))
                        .unwrap_or(0.0),
                    r,
                )
            })
            .collect();
        ranked.sort_by(|(sa, a), (sb, b)| sb.total_cmp(sa).then_with(|| a.gpu.cmp(&b.gpu)));
        out = ranked
            .into_iter()
            .take(MAX_SOURCES_PER_RUN)
            .map(|(_, r)| r)
            .collect();
    }
    out.extend(evidence.nearest_size(&t.gpu, t));
    out
}

/// A short, stable hash of the training data (what it was fitted on).
pub fn data_hash(runs: &[&Run]) -> String {
    use sha2::{Digest, Sha256};
    use std::io::Write;
    let mut h = Sha256::new();
    // Written into the hasher, not through a String per run: every LOGO fold hashes
    // its training runs (4.3 -> 3.5 % of LOGO hybrid's profile at 100k rows; the
    // float formatting, which fixes the hash's bytes, is most of what is left).
    for r in runs {
        writeln!(h, "{}|{}|{}|{:e}", r.gpu, r.kernel, r.config, r.time_ms)
            .expect("hashing never fails");
    }
    h.finalize()
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Fit for HybridParams {
    fn name(&self) -> String {
        let base = if self.regressor == DEFAULT_REGRESSOR {
            "hybrid".to_string()
        } else {
            format!("hybrid-{}", self.regressor.name())
        };
        match self.correction_share {
            Some(share) => format!("{base}@{share}"),
            None => base,
        }
    }

    fn fit(&self, train: &[&Run], ctx: &Context) -> Result<Box<dyn Predict>> {
        Ok(Box::new(self.fit_hybrid(train, ctx)?))
    }
}

impl HybridParams {
    /// Fit, keeping the concrete type (what `gpucast train` saves).
    pub fn fit_hybrid(&self, train: &[&Run], ctx: &Context) -> Result<FittedHybrid> {
        let params = self.check()?;
        let evidence = Evidence::new(train.iter().copied());
        // The base weighs its sources by their similarity alone (to the power the
        // held-out errors choose, see `analytical::choose_similarity_power_in`);
        // everything below projects so. Where a source has the target's architecture,
        // the analytical fit's prediction takes a share (`analytical_share`).
        let (choice, analytical) = analytical::choose_similarity_power_in(train, &evidence, ctx)?;
        let similarity_power = choice.power;
        let launch_floors = ctx.launch_floors;
        let analytical_ctx = analytical_context(ctx, &analytical);
        let ctx = &ctx
            .with_similarity_power(similarity_power)
            .with_prefer_same_arch(false);
        // (a string per distinct name, not per run)
        let distinct = |names: &mut Vec<&str>| -> Vec<String> {
            names.sort_unstable();
            names.dedup();
            names.iter().map(|s| s.to_string()).collect()
        };
        let categories =
            distinct(&mut train.iter().filter_map(|r| r.category.as_deref()).collect());
        let gpus = distinct(&mut train.iter().map(|r| r.gpu.as_str()).collect());
        let index = |g: &str| gpus.binary_search_by(|x| x.as_str().cmp(g)).unwrap_or(0);
        let corpora = super::corpora_of(train);
        let families: Vec<String> = train
            .iter()
            .map(|r| r.family())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .map(str::to_string)
            .collect();
        let family_index = |f: &str| {
            families
                .binary_search_by(|x| x.as_str().cmp(f))
                .unwrap_or(0)
        };
        let (mut x, mut y, mut origins) = (Vec::new(), Vec::new(), Vec::new());
        let queries = super::learning_queries(train, params.training_queries);
        for (query, &t) in queries.iter().enumerate() {
            let q = Query::of(t);
            let gt = ctx.gpu(&t.gpu)?;
            for s in training_sources(t, gt, &evidence, ctx) {
                let gs = ctx.gpu(&s.gpu)?;
                let p = project(s, &q, gs, gt, ctx, &evidence)?;
                x.push(vectors::pair(
                    s,
                    &q,
                    gs,
                    gt,
                    &p.source,
                    &p.target,
                    &categories,
                ));
                y.push((t.time_ms / p.pred_ms).ln());
                origins.push(PairOrigin {
                    source_gpu: index(&s.gpu),
                    target_gpu: index(&t.gpu),
                    family: family_index(t.family()),
                    query,
                    weight: p.weight,
                });
            }
        }
        let names = feature_names(&categories);
        let shares = choose_correction_shares(
            params.regressor,
            params.seed,
            (&x, &y, &origins),
            gpus.len(),
            families.len(),
            params.correction_share,
        )?;
        // The interval comes from held-out errors of what the hybrid predicts: each
        // training GPU projected from the others with the shape transfer, and with the
        // chosen share of the residual correction a regressor that never saw the run's
        // GPU gave it (in the share choice). Without the correction the errors were
        // those of a weaker model: on the GEMM tables the interval covered 95.4 % of
        // the targets' runs. Too few of those: the held-out runs' errors from the share
        // choice (sources combined, no shape transfer); too few of those: no
        // calibrated interval.
        let transfer::ShapeChoice {
            transfer: shape,
            kernel_ratio_share,
            held_out: shape_errors,
        } = transfer::fit_and_choose(train, &evidence, ctx, INTERVAL_QUERIES, &analytical_ctx)?;
        let share = shares.known_family;
        let corrections: rustc_hash::FxHashMap<*const Run, f64> = shares
            .corrections
            .iter()
            .map(|&(q, c)| (queries[q] as *const Run, c))
            .collect();
        // Each held-out run's error with the chosen share of its correction (runs the
        // share choice did not hold out have none to add, and are left out unless the
        // share is 0), indexed by `gpus` (the training GPUs' names, for the local
        // interval).
        let held_out: Vec<transfer::HeldOutRun> = shape_errors
            .into_iter()
            .filter_map(|mut h| {
                let c = match corrections.get(&(h.run as *const Run)) {
                    Some(c) => *c,
                    None if share == 0.0 => 0.0,
                    None => return None,
                };
                h.error.ln_error -= share * c;
                h.error.gpu = index(&h.run.gpu);
                Some(h)
            })
            .collect();
        let analytical_share = choose_analytical_share(&held_out, gpus.len());
        let errors: Vec<HeldOutError> = held_out
            .iter()
            .map(|h| HeldOutError {
                ln_error: h.blended_ln_error(analytical_share),
                ..h.error
            })
            .collect();
        let gpu_names: Vec<&str> = gpus.iter().map(String::as_str).collect();
        let interval = super::interval::fit_interval(&errors, &gpu_names, ctx)?;
        let interval = match interval.pooled_log {
            Some(_) => interval,
            None => FittedInterval {
                pooled_log: interval_log(&shares.held_out),
                ..FittedInterval::default()
            },
        };
        let residual = correction(
            params.regressor,
            params.seed,
            shares.known_family.max(shares.new_family),
            &x,
            &y,
        )?;
        Ok(FittedHybrid {
            params,
            state: HybridState {
                correction_share: shares.known_family,
                new_family_share: shares.new_family,
                families,
                interval,
                format: "gpucast-model".into(),
                version: MODEL_FORMAT_VERSION,
                gpucast_version: env!("CARGO_PKG_VERSION").into(),
                model: "hybrid".into(),
                regressor: params.regressor,
                seed: params.seed,
                features: names,
                categories,
                training_gpus: gpus,
                corpora,
                data_hash: data_hash(train),
                pairs: y.len(),
                residual,
                shape,
                kernel_ratio_share,
                similarity_power,
                launch_floors,
                analytical_share,
                analytical_power: analytical.power,
            },
        })
    }
}

impl Predict for FittedHybrid {
    fn name(&self) -> String {
        Fit::name(&self.params)
    }

    fn fit_summary(&self) -> Option<String> {
        let shape = match &self.state.shape {
            Some(t) if t.other_arch_curves.is_empty() => format!(
                ", shape transfer strength {} with a source of the target's architecture, {} without",
                t.strength_same_arch, t.strength_other_arch
            ),
            Some(t) => format!(
                ", shape transfer strength {} with a source of the target's architecture, without one chosen per target by the held-out GPUs whose shape is most like its own",
                t.strength_same_arch,
            ),
            None => ", no shape transfer".into(),
        };
        let share = if self.params.correction_share.is_some() {
            format!("{} (fixed)", self.state.correction_share)
        } else {
            format!(
                "{} (chosen by leave-one-GPU-out inside the training GPUs), {} for a new kernel family",
                self.state.correction_share, self.state.new_family_share
            )
        };
        Some(format!(
            "correction share {share}{shape}, kernel-ratio share {}, sources weighted by their similarity to the power {}{}{}{}",
            self.state.kernel_ratio_share,
            self.state.similarity_power,
            analytical::floors_text(self.state.launch_floors),
            if self.state.analytical_share > 0.0 {
                format!(
                    ", the analytical fit's prediction a share of {} with a source of the target's architecture",
                    self.state.analytical_share
                )
            } else {
                String::new()
            },
            self.state.interval.describe(),
        ))
    }

    fn predict(
        &self,
        query: &Query,
        evidence: &Evidence,
        ctx: &Context,
    ) -> Result<Option<Prediction>> {
        self.predict_traced(query, evidence, ctx, None)
    }
}

impl FittedHybrid {
    /// [`Predict::predict`], telling `trace` what each fitted stage did to the
    /// combination of the sources' projections ([`stages::apply_traced`]).
    pub fn predict_traced(
        &self,
        query: &Query,
        evidence: &Evidence,
        ctx: &Context,
        trace: Option<&mut stages::StageTrace>,
    ) -> Result<Option<Prediction>> {
        let state = &self.state;
        let shape = state.shape_for(query);
        // Sources by their similarity alone where the shape transfer leans on those of
        // the target's architecture; as the analytical model weighs them where it does
        // not (no transfer, or none for that case). That alone took Kernel Tuner's
        // convolution caches from the benchmark hub (no shape transfer chosen) from
        // 19.8 to 16.9 %, the paper's caches 28.0 -> 27.2 %. (The held-out errors the
        // shares and the interval are chosen on weigh by similarity alone.)
        let prefer_same_arch = shape.is_none_or(|t| t.strength_same_arch == 0.0);
        let ctx = &ctx
            .with_similarity_power(state.similarity_power)
            .with_launch_floors(state.launch_floors)
            .with_prefer_same_arch(prefer_same_arch);
        let made = projections(query, evidence, ctx)?;
        let residual = stages::Residual {
            regressor: state.residual.as_ref(),
            share: state.share_for(query),
            categories: &state.categories,
        };
        let kernel_ratio = stages::KernelRatio {
            share: state.kernel_ratio_share,
        };
        let shape = stages::Shape { transfer: shape };
        let analytical_share = stages::AnalyticalShare {
            share: state.analytical_share,
            fit: state.analytical_fit(),
        };
        let order: [&dyn stages::Stage; 4] = [&residual, &kernel_ratio, &shape, &analytical_share];
        let Some((p, combination)) =
            stages::apply_traced(&order, query, &made, evidence, ctx, trace)?
        else {
            return Ok(None);
        };
        let bounds = analytical::bounds_log(
            analytical::FittedBounds {
                interval: &state.interval,
                corpora: &state.corpora,
            },
            combination.launch_bound(),
            &query.gpu,
            evidence,
            ctx,
        )?;
        Ok(Some(
            p.calibrated(bounds, combination.launch_bound())
                .at_least(combination.floor_ms()),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A model that would not load is not written: `save` makes the load's checks.
    #[test]
    fn save_refuses_a_model_that_would_not_load() {
        let mut model =
            FittedHybrid::from_json(crate::predict::PRETRAINED_JSON, "the built-in model").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("m.json");
        model.save(&out).unwrap();
        assert!(
            FittedHybrid::load(&out).is_ok(),
            "a whole model round-trips"
        );
        std::fs::remove_file(&out).unwrap();
        model.state.correction_share = 2.0;
        let e = model.save(&out).unwrap_err().to_string();
        assert!(e.contains("correction_share 2 is outside 0..1"), "{e}");
        assert!(!out.exists(), "nothing written");
    }

    /// The shape transfer applies to a query of a corpus the model learned from only.
    #[test]
    fn the_shape_transfer_applies_within_its_corpora() {
        let model = crate::predict::pretrained().unwrap();
        let state = model.state();
        assert!(state.shape.is_some());
        let from = |source: Option<&str>| {
            Query::of(&Run {
                source: source.map(Into::into),
                ..Run::default()
            })
        };
        assert!(state.shape_for(&from(Some("benchmark_hub"))).is_some());
        assert!(state
            .shape_for(&from(Some("someone else's harness")))
            .is_none());
        assert!(state.shape_for(&from(None)).is_none());
    }

    /// SYNTHETIC held-out runs on 3 GPUs, 30 each: the hybrid's error `hybrid(i)` and
    /// the analytical fit's `analytical(i)` on run i, a source of the run's
    /// architecture where `arch_source`.
    fn held_out_runs<'a>(
        run: &'a Run,
        arch_source: bool,
        hybrid: impl Fn(usize) -> f64,
        analytical: impl Fn(usize) -> f64,
    ) -> Vec<transfer::HeldOutRun<'a>> {
        (0..90)
            .map(|i| transfer::HeldOutRun {
                run,
                error: HeldOutError {
                    gpu: i % 3,
                    ln_error: hybrid(i),
                    launch_bound: false,
                },
                analytical_ln_error: analytical(i),
                arch_source,
            })
            .collect()
    }

    #[test]
    fn the_analytical_share_is_taken_only_with_a_source_of_the_targets_architecture() {
        let run = Run::default();
        // The analytical fit is right where the hybrid is 20 % off: all of it.
        let better = held_out_runs(&run, true, |i| 0.2 + 0.001 * (i % 5) as f64, |_| 0.0);
        assert_eq!(choose_analytical_share(&better, 3), 1.0);
        assert_eq!(better[0].blended_ln_error(0.25), 0.75 * 0.2);
        // ... but no source of the target's architecture: the hybrid's own
        let elsewhere = held_out_runs(&run, false, |_| 0.2, |_| 0.0);
        assert_eq!(choose_analytical_share(&elsewhere, 3), 0.0);
        assert_eq!(elsewhere[0].blended_ln_error(1.0), 0.2);
        // ... or no analytical prediction
        let none = held_out_runs(&run, true, |_| 0.2, |_| f64::NAN);
        assert_eq!(choose_analytical_share(&none, 3), 0.0);
        // Errors of opposite signs: half of each cancels them.
        let opposite = held_out_runs(&run, true, |_| 0.2, |_| -0.2);
        assert_eq!(choose_analytical_share(&opposite, 3), 0.5);
        // Better on two GPUs, 5 points worse on the third: none.
        let harms_one = held_out_runs(
            &run,
            true,
            |i| if i % 3 == 2 { 0.0 } else { 0.2 },
            |i| if i % 3 == 2 { 0.05 } else { 0.0 },
        );
        assert_eq!(choose_analytical_share(&harms_one, 3), 0.0);
    }

    /// SYNTHETIC pairs on 3 GPUs: every training run (query) is predicted from the
    /// two other GPUs; the source from the GPU after it is off by `a`, the other by
    /// `b` (log units), and the one feature says which source a pair is.
    fn pairs(a: f64, b: f64) -> (Vec<Vec<f64>>, Vec<f64>, Vec<PairOrigin>) {
        let (mut x, mut y, mut o) = (Vec::new(), Vec::new(), Vec::new());
        for query in 0..60 {
            let t = query % 3;
            for (s, side, r) in [((t + 1) % 3, 1.0, a), ((t + 2) % 3, -1.0, b)] {
                x.push(vec![side]);
                y.push(r);
                o.push(PairOrigin {
                    source_gpu: s,
                    target_gpu: t,
                    family: 0,
                    query,
                    weight: 1.0,
                });
            }
        }
        (x, y, o)
    }

    #[test]
    fn share_is_judged_on_the_combined_prediction() {
        // Each source is off, but the two errors cancel in the combination: a
        // correction learned per source cannot improve what the hybrid predicts.
        let (x, y, o) = pairs(0.3, -0.3);
        let chosen = |x, y, o| {
            let c =
                choose_correction_shares(RegressorKind::Linear, 1, (x, y, o), 3, 1, None).unwrap();
            assert_eq!(
                c.new_family, 0.0,
                "one family: no new family was ever held out"
            );
            (c.known_family, c.held_out, c.corrections)
        };
        let (share, errors, _) = chosen(&x, &y, &o);
        assert_eq!(share, 0.0);
        assert_eq!(errors.len(), 60, "one held-out error per run, not per pair");
        assert!(errors.iter().all(|e| e.ln_error.abs() < 1e-9));
        // Both sources off the same way: the combination is off too, and the
        // correction that fixes it is taken in full.
        let (x, y, o) = pairs(0.3, 0.3);
        let (share, errors, corrections) = chosen(&x, &y, &o);
        assert_eq!(share, 1.0);
        assert!(errors.iter().all(|e| e.ln_error.abs() < 1e-6));
        // Each held-out run's combined correction (what the interval's errors are
        // corrected by): every run once, by the 0.3 its sources are off.
        let mut runs: Vec<usize> = corrections.iter().map(|(q, _)| *q).collect();
        runs.dedup();
        assert_eq!(runs, (0..60).collect::<Vec<_>>());
        assert!(corrections.iter().all(|(_, c)| (c - 0.3).abs() < 1e-6));
    }

    #[test]
    fn a_new_family_gets_only_a_correction_that_carried_over_to_held_out_families() {
        // SYNTHETIC: 4 GPUs, 2 families; each family is off by its own amount on every
        // GPU, and the one feature says which family a pair is. Known families: the
        // correction fixes both, so it is taken. A family never seen: the correction
        // learned on the other family has the wrong sign, so it is not.
        let pairs = |off: [f64; 2]| {
            let (mut x, mut y, mut o) = (Vec::new(), Vec::new(), Vec::new());
            for query in 0..240 {
                let (t, family) = (query % 4, (query / 4) % 2);
                for s in (0..4).filter(|&s| s != t) {
                    x.push(vec![family as f64]);
                    y.push(off[family]);
                    o.push(PairOrigin {
                        source_gpu: s,
                        target_gpu: t,
                        family,
                        query,
                        weight: 1.0,
                    });
                }
            }
            (x, y, o)
        };
        let (x, y, o) = pairs([0.3, -0.3]);
        let c = choose_correction_shares(RegressorKind::Gbm, 1, (&x, &y, &o), 4, 2, None).unwrap();
        assert_eq!(c.known_family, 1.0);
        assert_eq!(c.new_family, 0.0);
        // Both families off the same way: what was learned on one carries over.
        let (x, y, o) = pairs([0.3, 0.3]);
        let c = choose_correction_shares(RegressorKind::Gbm, 1, (&x, &y, &o), 4, 2, None).unwrap();
        assert_eq!((c.known_family, c.new_family), (1.0, 1.0));
        // A fixed share is used for both.
        let c =
            choose_correction_shares(RegressorKind::Gbm, 1, (&x, &y, &o), 4, 2, Some(0.5)).unwrap();
        assert_eq!((c.known_family, c.new_family), (0.5, 0.5));
    }
}
