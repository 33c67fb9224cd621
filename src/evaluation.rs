//! Evaluation protocols and metrics (data-formats §3).
//!
//! - `logo`: each GPU in turn is the target; models are fitted on the other GPUs' rows
//!   and see no row of the target (nor any pair touching it).
//! - `new-size`: per (GPU, kernel) the largest configuration (by work) is held out on
//!   every GPU; models fit on the smaller ones (the study's Exp 2).
//! - `new-kernel`: the test kernels' rows are held out of fitting; a test row on GPU T
//!   may be projected from the same kernel measured on other GPUs (the study's Exp 3).
//! - `new-family`: each (target GPU, kernel family) in turn is held out of fitting
//!   together; the family's runs on other GPUs may still be projected.
//! - `loco`: each corpus and each of its GPUs in turn; nothing fitted saw the corpus.
//! - `newer`: each GPU from the GPUs that launched before it (the question users ask of
//!   the next generation): nothing fitted or projected saw a GPU of its launch or later.
//! - `loao`: each GPU with every GPU of its architecture removed from the sources and
//!   from every fitted part.
//!
//! Rows excluded by the validation rule are neither fitted nor scored; the counts are
//! reported.

use crate::data::validate::is_excluded;
use crate::data::Run;
use crate::error::{Error, Result};
use crate::features::Bound;
use crate::models::{Context, Evidence, Fit, Interval, Prediction};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

/// The study's Exp 3 test kernels.
pub const STUDY_TEST_KERNELS: [&str; 4] = [
    "matmul_tiled",
    "shared_transpose",
    "atomic_hotspot",
    "vector_add_divergent",
];

fn study_test_kernels() -> Vec<String> {
    STUDY_TEST_KERNELS.iter().map(|s| s.to_string()).collect()
}

/// The protocols by name (what `--protocol` takes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtocolKind {
    /// Leave one GPU out: each GPU in turn is the target
    Logo,
    /// Hold out the largest configuration of each (GPU, kernel)
    NewSize,
    /// Hold out whole kernels (projected from their runs on other GPUs)
    NewKernel,
    /// Hold out a kernel family (category) and the target GPU together
    NewFamily,
    /// Leave one corpus out: every fitted part has seen neither the target's corpus
    /// (the runs' `source`) nor the target GPU; the corpus's other GPUs are the sources
    Loco,
    /// Each GPU from the GPUs that launched before it (launch year, then compute
    /// capability), in every corpus with two or more such GPUs
    Newer,
    /// Leave one architecture out: every GPU of the target's architecture is removed
    /// from the sources and from every fitted part
    Loao,
}

/// A protocol with its settings. In an experiment file:
/// `protocol = { name = "new-kernel", test_kernels = ["matmul_tiled"], known = "smallest-size" }`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case", tag = "name", deny_unknown_fields)]
pub enum Protocol {
    Logo,
    NewSize,
    NewKernel {
        #[serde(default = "study_test_kernels")]
        test_kernels: Vec<String>,
        /// Fit on the smallest configuration of each (GPU, kernel) only (the study's ML
        /// setup for Exp 3).
        #[serde(default)]
        smallest_only: bool,
        /// What is known of a test kernel when predicting it on GPU T.
        #[serde(default)]
        known: KnownTestRuns,
    },
    /// Each (target GPU, kernel family) in turn: nothing fitted has seen the family or
    /// the target; the family's runs on other GPUs may be projected.
    NewFamily,
    /// Each corpus C (the runs' `source`: who measured them, with which harness) and
    /// each GPU T of it in turn: every fitted part is fitted on the other corpora's
    /// runs on GPUs other than T, and T's runs in C are predicted from C's runs on its
    /// other GPUs, as in LOGO. What a model learned must then carry over to a campaign
    /// it never saw.
    Loco,
    /// Each GPU T of each corpus from the GPUs that launched before it (launch year,
    /// then compute capability): every fitted part is fitted on runs (of any corpus)
    /// on older GPUs only, and T's runs in a corpus are projected from that corpus's
    /// runs on older GPUs. A corpus with fewer than [`NEWER_MIN_SOURCES`] older GPUs does not
    /// score T. The question of the next generation: how will it run on a GPU newer
    /// than any measured?
    Newer,
    /// Leave one architecture out: each GPU T of each corpus with every GPU of T's
    /// architecture (the catalog's `arch`) removed from the sources and from every
    /// fitted part; T's runs in a corpus are projected from that corpus's runs on GPUs
    /// of other architectures.
    Loao,
}

/// The fewest older GPUs of its corpus a target needs under [`Protocol::Newer`]: with
/// one, the chronological table would mostly measure a single pair of GPUs.
pub const NEWER_MIN_SOURCES: usize = 2;

pub use crate::models::{corpus, NO_SOURCE};

/// In the new-kernel protocol, the measurements of a test kernel a projection may use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KnownTestRuns {
    /// The kernel measured on the other GPUs (a new kernel on this GPU).
    #[default]
    OtherGpus,
    /// The kernel's smallest configuration on the same GPU (run once, small): it is
    /// evidence, not scored; the larger configurations are predicted.
    SmallestSize,
}

impl Protocol {
    /// The settings a protocol table may give beside `name`: serde reads a unit
    /// variant of a tagged enum without looking at other keys, so
    /// `protocol = { name = "logo", foo = 1 }` is checked against this list.
    pub fn settings(name: &str) -> &'static [&'static str] {
        match name {
            "new-kernel" => &["test_kernels", "smallest_only", "known"],
            _ => &[],
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Protocol::Logo => "logo",
            Protocol::NewSize => "new-size",
            Protocol::NewKernel { .. } => "new-kernel",
            Protocol::NewFamily => "new-family",
            Protocol::Loco => "loco",
            Protocol::Newer => "newer",
            Protocol::Loao => "loao",
        }
    }
    /// The protocol `kind` with its defaults (`test_kernels`: the study's four).
    pub fn new(kind: ProtocolKind, test_kernels: Option<Vec<String>>) -> Protocol {
        match kind {
            ProtocolKind::Logo => Protocol::Logo,
            ProtocolKind::NewSize => Protocol::NewSize,
            ProtocolKind::NewKernel => Protocol::NewKernel {
                test_kernels: test_kernels.unwrap_or_else(study_test_kernels),
                smallest_only: false,
                known: KnownTestRuns::OtherGpus,
            },
            ProtocolKind::NewFamily => Protocol::NewFamily,
            ProtocolKind::Loco => Protocol::Loco,
            ProtocolKind::Newer => Protocol::Newer,
            ProtocolKind::Loao => Protocol::Loao,
        }
    }

    /// Check the protocol against the data: test kernels must exist and a protocol
    /// holding GPUs out needs two (either would otherwise give an empty table).
    pub fn check(&self, runs: &[Run], catalog: &crate::catalog::Catalog) -> Result<()> {
        if matches!(self, Protocol::Logo | Protocol::NewFamily) {
            let gpus: BTreeSet<&str> = runs.iter().map(|r| r.gpu.as_str()).collect();
            if gpus.len() < 2 {
                let has: Vec<&str> = gpus.into_iter().collect();
                return Err(Error::usage(format!(
                    "protocol {} holds one GPU out at a time: it needs runs of two or more GPUs (the data has: {})",
                    self.name(),
                    has.join(", ")
                )));
            }
        }
        if matches!(self, Protocol::Loco) {
            let corpora: BTreeSet<&str> = runs.iter().map(corpus).collect();
            let held_out = loco_groups(runs.iter()).len();
            if corpora.len() < 2 || held_out == 0 {
                let has: Vec<&str> = corpora.into_iter().collect();
                return Err(Error::usage(format!(
                    "protocol loco holds one corpus (the runs' source) out at a time: it needs two or more corpora, one with runs of two or more GPUs (the data has: {})",
                    has.join(", ")
                )));
            }
        }
        if matches!(self, Protocol::Newer | Protocol::Loao) {
            let refs: Vec<&Run> = runs.iter().collect();
            if lineage_folds(&refs, self, catalog)?.is_empty() {
                return Err(Error::usage(match self {
                    Protocol::Newer => format!(
                        "protocol newer predicts each GPU from the GPUs launched before it: it needs a corpus with a GPU and {NEWER_MIN_SOURCES} or more older ones"
                    ),
                    _ => "protocol loao holds one architecture out at a time: it needs a corpus with GPUs of two or more architectures".to_string(),
                }));
            }
        }
        if let Protocol::NewKernel { test_kernels, .. } = self {
            if test_kernels.is_empty() {
                return Err(Error::usage(
                    "protocol new-kernel with test_kernels = []: name the kernels to hold out",
                ));
            }
            for k in test_kernels {
                if !runs.iter().any(|r| &r.kernel == k) {
                    let mut known: Vec<&str> = runs.iter().map(|r| r.kernel.as_str()).collect();
                    known.sort();
                    known.dedup();
                    return Err(Error::usage(format!(
                        "test kernel '{k}' is not in the data (kernels: {})",
                        known.join(", ")
                    )));
                }
            }
        }
        Ok(())
    }
}

/// Accuracy metrics over (predicted, measured) pairs. Percentages in percent,
/// `within_*` as fractions.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Metrics {
    pub n: usize,
    pub mape: f64,
    pub median_ape: f64,
    pub median_ratio: f64,
    pub within_10: f64,
    pub within_25: f64,
    pub within_50: f64,
    pub rmse_log: f64,
    /// Share of measurements inside the predicted [lo, hi] interval (an extension of
    /// the contract: how honest the interval is).
    #[serde(default)]
    pub interval_coverage: f64,
    /// What the intervals are ("90%", "spread", several joined by "+"); empty when no
    /// prediction has one.
    #[serde(default)]
    pub interval: String,
    /// Tuning spaces (see [`tuning_spaces`]): mean Spearman rank correlation of
    /// predicted and measured times within a space; NaN when there is none.
    #[serde(default)]
    pub spearman: f64,
    /// Tuning spaces: mean top-1 regret, the measured time of the configuration
    /// predicted fastest over the fastest measured one (1 = picked the best).
    #[serde(default)]
    pub top1_regret: f64,
    /// Number of tuning spaces the two figures above average over.
    #[serde(default)]
    pub tuning_spaces: usize,
    /// MAPE (%) with each kernel's level on each target known: the predictions of
    /// every (model, target, kernel) times the one factor that minimises their MAPE
    /// ([`known_level_mape`]). What is left is the error in how the kernel's
    /// configurations and sizes compare with each other on the target; `mape` minus it
    /// is the level's share (what one measured run per kernel on the target would
    /// mostly remove). A diagnostic: no prediction ever knows it.
    #[serde(default)]
    pub mape_known_level: f64,
    /// The launch-bound rows ([`Record::launch_bound`]): how many, their MAPE (%) and
    /// interval coverage (a fraction); NaN when there are none.
    #[serde(default)]
    pub n_launch_bound: usize,
    #[serde(default)]
    pub mape_launch_bound: f64,
    #[serde(default)]
    pub coverage_launch_bound: f64,
    /// The same over the work-bound rows (every other row).
    #[serde(default)]
    pub n_work_bound: usize,
    #[serde(default)]
    pub mape_work_bound: f64,
    #[serde(default)]
    pub coverage_work_bound: f64,
}

pub use crate::models::LAUNCH_BOUND_FLOOR_FACTOR;

/// A tuning space needs at least this many configurations of the same work.
pub const MIN_TUNING_SPACE: usize = 10;

/// Spearman rank correlation (ties get their mean rank).
pub fn spearman(a: &[f64], b: &[f64]) -> f64 {
    fn ranks(v: &[f64]) -> Vec<f64> {
        let mut idx: Vec<usize> = (0..v.len()).collect();
        idx.sort_by(|&i, &j| v[i].total_cmp(&v[j]));
        let mut r = vec![0.0; v.len()];
        let mut i = 0;
        while i < idx.len() {
            let mut j = i;
            while j + 1 < idx.len() && v[idx[j + 1]] == v[idx[i]] {
                j += 1;
            }
            let mean_rank = (i + j) as f64 / 2.0;
            for k in i..=j {
                r[idx[k]] = mean_rank;
            }
            i = j + 1;
        }
        r
    }
    let (ra, rb) = (ranks(a), ranks(b));
    let n = ra.len() as f64;
    let mean = (n - 1.0) / 2.0;
    let cov: f64 = ra
        .iter()
        .zip(&rb)
        .map(|(x, y)| (x - mean) * (y - mean))
        .sum();
    let var = |r: &[f64]| r.iter().map(|x| (x - mean).powi(2)).sum::<f64>();
    cov / (var(&ra) * var(&rb)).sqrt()
}

/// The tuning spaces among records: groups of one (model, target, kernel, source)
/// whose configurations all do the same work (same FLOPs: one problem, different
/// implementations) with at least [`MIN_TUNING_SPACE`] of them.
pub fn tuning_spaces<'r>(records: &[&'r Record]) -> Vec<Vec<&'r Record>> {
    let mut groups: BTreeMap<(&str, &str, &str, &str, u64), Vec<&Record>> = Default::default();
    for r in records {
        groups
            .entry((
                &r.model,
                &r.target,
                &r.kernel,
                r.source.as_deref().unwrap_or(""),
                r.work.to_bits(),
            ))
            .or_default()
            .push(r);
    }
    groups
        .into_values()
        .filter(|g| g.len() >= MIN_TUNING_SPACE)
        .collect()
}

/// The factor `s` that minimises the mean of |s x predicted - measured| / measured over
/// `pairs` of (predicted, measured): the median of measured / predicted weighted by
/// predicted / measured (the sum is piecewise linear in `s`, each term with slope
/// that weight); 1 when no pair has a positive, finite ratio.
pub fn mape_optimal_scale(pairs: &[(f64, f64)]) -> f64 {
    let mut weighted: Vec<(f64, f64)> = pairs
        .iter()
        .filter(|(p, t)| *p > 0.0 && *t > 0.0 && p.is_finite() && t.is_finite())
        .map(|(p, t)| (t / p, p / t))
        .collect();
    weighted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let half = weighted.iter().map(|(_, w)| w).sum::<f64>() / 2.0;
    let mut below = 0.0;
    for (ratio, w) in &weighted {
        below += w;
        if below >= half {
            return *ratio;
        }
    }
    1.0
}

/// MAPE (%) of `records` with each (model, target, kernel)'s predictions scaled by
/// its [`mape_optimal_scale`] ([`Metrics::mape_known_level`]); NaN when no group has
/// two records (one run, scaled, is exact: the figure would say nothing, e.g. the
/// new-size protocol's one held-out size per kernel).
pub fn known_level_mape(records: &[&Record]) -> f64 {
    // (model, target, kernel) -> (predicted, measured) pairs; ordered, so the sum (and
    // every printed figure) is the same on every run.
    type Groups<'r> = BTreeMap<(&'r str, &'r str, &'r str), Vec<(f64, f64)>>;
    let mut groups: Groups = BTreeMap::new();
    for r in records {
        groups
            .entry((&r.model, &r.target, &r.kernel))
            .or_default()
            .push((r.pred_ms, r.measured_ms));
    }
    if groups.values().all(|pairs| pairs.len() < 2) {
        return f64::NAN;
    }
    let total: f64 = groups
        .values()
        .map(|pairs| {
            let s = mape_optimal_scale(pairs);
            pairs
                .iter()
                .map(|(p, t)| (s * p - t).abs() / t)
                .sum::<f64>()
        })
        .sum();
    100.0 * total / records.len() as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

impl Metrics {
    /// No rows: every figure NaN, every count 0.
    fn empty() -> Metrics {
        Metrics {
            n: 0,
            mape: f64::NAN,
            median_ape: f64::NAN,
            median_ratio: f64::NAN,
            within_10: f64::NAN,
            within_25: f64::NAN,
            within_50: f64::NAN,
            rmse_log: f64::NAN,
            interval_coverage: f64::NAN,
            interval: String::new(),
            spearman: f64::NAN,
            top1_regret: f64::NAN,
            tuning_spaces: 0,
            mape_known_level: f64::NAN,
            n_launch_bound: 0,
            mape_launch_bound: f64::NAN,
            coverage_launch_bound: f64::NAN,
            n_work_bound: 0,
            mape_work_bound: f64::NAN,
            coverage_work_bound: f64::NAN,
        }
    }

    pub fn from_pairs(pairs: impl IntoIterator<Item = (f64, f64)>) -> Metrics {
        let pairs: Vec<(f64, f64)> = pairs.into_iter().collect();
        let n = pairs.len();
        if n == 0 {
            return Metrics::empty();
        }
        let ape: Vec<f64> = pairs.iter().map(|(p, t)| (p - t).abs() / t).collect();
        let within = |x: f64| ape.iter().filter(|a| **a <= x + 1e-12).count() as f64 / n as f64;
        Metrics {
            n,
            mape: 100.0 * ape.iter().sum::<f64>() / n as f64,
            median_ape: 100.0 * median(ape.clone()),
            median_ratio: median(pairs.iter().map(|(p, t)| p / t).collect()),
            within_10: within(0.10),
            within_25: within(0.25),
            within_50: within(0.50),
            rmse_log: (pairs.iter().map(|(p, t)| (p / t).ln().powi(2)).sum::<f64>() / n as f64)
                .sqrt(),
            ..Metrics::empty()
        }
    }

    /// Metrics of scored predictions, with the interval coverage.
    pub fn from_records<'r>(records: impl IntoIterator<Item = &'r Record>) -> Metrics {
        let recs: Vec<&Record> = records.into_iter().collect();
        let mut m = Metrics::from_pairs(recs.iter().map(|r| (r.pred_ms, r.measured_ms)));
        for launch_bound in [true, false] {
            let part: Vec<&Record> = recs
                .iter()
                .copied()
                .filter(|r| r.launch_bound == launch_bound)
                .collect();
            let fields = (part.len(), mape(&part), coverage(&part));
            if launch_bound {
                (
                    m.n_launch_bound,
                    m.mape_launch_bound,
                    m.coverage_launch_bound,
                ) = fields;
            } else {
                (m.n_work_bound, m.mape_work_bound, m.coverage_work_bound) = fields;
            }
        }
        // Coverage over the predictions that have an interval, and what they are.
        m.interval_coverage = coverage(&recs);
        let mut kinds: Vec<String> = recs
            .iter()
            .filter(|r| r.interval != Interval::None)
            .map(|r| r.interval.label())
            .collect();
        kinds.sort_unstable();
        kinds.dedup();
        m.interval = kinds.join("+");
        m.mape_known_level = known_level_mape(&recs);
        let spaces = tuning_spaces(&recs);
        m.tuning_spaces = spaces.len();
        if !spaces.is_empty() {
            let (mut rho, mut regret) = (0.0, 0.0);
            for g in &spaces {
                let pred: Vec<f64> = g.iter().map(|r| r.pred_ms).collect();
                let meas: Vec<f64> = g.iter().map(|r| r.measured_ms).collect();
                rho += spearman(&pred, &meas);
                let picked = g
                    .iter()
                    .min_by(|a, b| a.pred_ms.total_cmp(&b.pred_ms))
                    .map_or(f64::NAN, |r| r.measured_ms);
                regret += picked / meas.iter().copied().fold(f64::INFINITY, f64::min);
            }
            m.spearman = rho / spaces.len() as f64;
            m.top1_regret = regret / spaces.len() as f64;
        }
        m
    }
}

/// The mean absolute percentage error of `records`; NaN when there are none.
fn mape(records: &[&Record]) -> f64 {
    let sum: f64 = records
        .iter()
        .map(|r| (r.pred_ms - r.measured_ms).abs() / r.measured_ms)
        .sum();
    100.0 * sum / records.len() as f64
}

/// The share of `records` with an interval whose interval holds the measurement; NaN
/// when none has an interval.
fn coverage(records: &[&Record]) -> f64 {
    let with: Vec<&&Record> = records
        .iter()
        .filter(|r| r.interval != Interval::None)
        .collect();
    if with.is_empty() {
        return f64::NAN;
    }
    let inside = with
        .iter()
        .filter(|r| r.pred_lo_ms <= r.measured_ms && r.measured_ms <= r.pred_hi_ms)
        .count();
    inside as f64 / with.len() as f64
}

/// One scored prediction.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Record {
    // The names are shared by the records (interned), the interval and bound are
    // values: at 1M records a String each was 7 allocations a record.
    pub model: Arc<str>,
    pub target: Arc<str>,
    pub kernel: Arc<str>,
    pub config: Arc<str>,
    pub category: Option<Arc<str>>,
    /// Who measured it (the runs table's `source`), when known.
    pub source: Option<Arc<str>>,
    /// The run's FLOPs (DRAM bytes when it has none): equal work in one kernel = the
    /// same problem in another configuration.
    pub work: f64,
    pub measured_ms: f64,
    pub pred_ms: f64,
    pub pred_lo_ms: f64,
    pub pred_hi_ms: f64,
    /// What the interval is (written as its label: "90%", "spread" or "none").
    #[serde(serialize_with = "serialize_label")]
    pub interval: Interval,
    #[serde(serialize_with = "serialize_label")]
    pub bound: Bound,
    /// Measured below [`LAUNCH_BOUND_FLOOR_FACTOR`] times its harness's floor (the
    /// fastest run its corpus timed on its GPU).
    pub launch_bound: bool,
}

fn serialize_label<T: std::fmt::Display, S: serde::Serializer>(
    value: &T,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.collect_str(value)
}

/// A row of the results table: a model on a target ("all" = pooled).
#[derive(Debug, Clone, serde::Serialize)]
pub struct ResultRow {
    pub model: String,
    pub target: String,
    #[serde(flatten)]
    pub metrics: Metrics,
}

/// The outcome of one protocol for one or more models.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Evaluation {
    pub protocol: String,
    pub data: Vec<String>,
    pub results: Vec<ResultRow>,
    #[serde(skip)]
    pub records: Vec<Record>,
    /// Rows left out by the validation exclusion rules, per rule.
    #[serde(skip)]
    pub excluded_rows: crate::data::validate::RuleCounts,
    /// Test rows a model could not predict (model -> count).
    #[serde(skip)]
    pub unpredicted: Vec<(String, usize)>,
    /// What fitting decided, per model and fold (model, fold, summary), for models
    /// that say (e.g. the hybrid's correction share).
    pub fit_summaries: Vec<(String, String, String)>,
}

impl Evaluation {
    /// The models that left test rows unpredicted, with how many.
    pub fn unpredicted_counts(&self) -> impl Iterator<Item = (&str, usize)> {
        self.unpredicted
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(m, n)| (m.as_str(), *n))
    }
}

/// Which GPUs a LOGO evaluation scores and learns from (the study's Exp 1 scores one
/// target from one source at a time), and which kernels it scores. Names are resolved
/// with [`Selection::resolved`].
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Selection {
    /// Score only these targets (default: every GPU in turn).
    #[serde(default)]
    pub targets: Option<Vec<String>>,
    /// Fit on / project from only these GPUs (default: all but the target).
    #[serde(default)]
    pub sources: Option<Vec<String>>,
    /// One fold per (target, source) instead of all sources together.
    #[serde(default)]
    pub per_source: bool,
    /// Score only runs of these kernels (default: every kernel). The other runs still
    /// train every fold as the protocol allows (in LOGO every run off the target GPU):
    /// score your own kernels while learning from other corpora too.
    #[serde(default)]
    pub score_kernels: Option<Vec<String>>,
}

impl Selection {
    /// The same selection with every GPU name as the catalog spells it, checked against
    /// the data (a GPU the data lacks would otherwise give an empty table).
    pub fn resolved(&self, catalog: &crate::catalog::Catalog, runs: &[Run]) -> Result<Selection> {
        let resolve = |l: &Option<Vec<String>>| -> Result<Option<Vec<String>>> {
            l.as_ref()
                .map(|v| {
                    v.iter()
                        .map(|g| {
                            let name = catalog.resolve_or_err(g)?.name.clone();
                            if runs.iter().any(|r| r.gpu == name) {
                                Ok(name)
                            } else {
                                Err(Error::usage(format!(
                                    "GPU '{name}' has no rows in the data"
                                )))
                            }
                        })
                        .collect()
                })
                .transpose()
        };
        if let Some(k) = self
            .score_kernels
            .iter()
            .flatten()
            .find(|k| !runs.iter().any(|r| r.kernel == **k))
        {
            return Err(Error::usage(format!(
                "kernel '{k}' to score has no rows in the data"
            )));
        }
        Ok(Selection {
            targets: resolve(&self.targets)?,
            sources: resolve(&self.sources)?,
            per_source: self.per_source,
            score_kernels: self.score_kernels.clone(),
        })
    }
}

/// A fold: the runs models are fitted on and groups of test runs, each group with the
/// runs its predictions may consult (the fold's evidence plus what that group alone
/// may see, e.g. a new kernel's runs on the other GPUs).
struct Fold<'a> {
    /// What the fold holds out, for reports ("NVIDIA TITAN V", "largest sizes", ...).
    label: String,
    /// Lists the fold's runs when it is evaluated: folds waiting their turn hold none
    /// (at 1M rows a LOGO fold's list is 7 MB, and new-family has a fold per target
    /// and family).
    runs: Box<dyn Fn() -> FoldRuns<'a> + Send + Sync + 'a>,
    groups: Vec<TestGroup<'a>>,
}

/// The runs a fold's models are fitted on and its evidence (in LOGO one list).
struct FoldRuns<'a> {
    fit: Arc<[&'a Run]>,
    evidence: Arc<[&'a Run]>,
}

impl<'a> FoldRuns<'a> {
    fn same(runs: Arc<[&'a Run]>) -> Self {
        FoldRuns {
            fit: runs.clone(),
            evidence: runs,
        }
    }
}

struct TestGroup<'a> {
    extra_evidence: Vec<&'a Run>,
    tests: Vec<&'a Run>,
    /// When set, only the fold's evidence in this corpus is consulted (a target of a
    /// corpus is projected from that corpus's runs, as in LOCO).
    corpus: Option<&'a str>,
    /// The target its records report instead of the run's GPU: "corpus: GPU" where
    /// one GPU measured by two corpora is two targets (LOCO, newer, loao).
    target_label: Option<Arc<str>>,
}

impl<'a> TestGroup<'a> {
    fn of(tests: Vec<&'a Run>) -> Self {
        TestGroup {
            extra_evidence: Vec::new(),
            tests,
            corpus: None,
            target_label: None,
        }
    }
    /// The runs of GPU `t` in corpus `c`, projected from that corpus's evidence and
    /// reported as "c: t".
    fn in_corpus(runs: &[&'a Run], c: &'a str, t: &str) -> Self {
        TestGroup {
            extra_evidence: Vec::new(),
            tests: runs
                .iter()
                .copied()
                .filter(|r| corpus(r) == c && r.gpu == t)
                .collect(),
            corpus: Some(c),
            target_label: Some(format!("{c}: {t}").into()),
        }
    }
}

/// The LOGO folds as (target GPU, training GPUs): each selected target with every
/// other selected source GPU, or one fold per source with `per_source`.
fn logo_groups<'g>(gpus: &BTreeSet<&'g str>, sel: &Selection) -> Vec<(&'g str, Vec<&'g str>)> {
    let listed = |list: &Option<Vec<String>>, g: &str| {
        list.as_ref().is_none_or(|l| l.iter().any(|x| x == g))
    };
    let mut out = Vec::new();
    for &t in gpus.iter().filter(|g| listed(&sel.targets, g)) {
        let sources: Vec<&str> = gpus
            .iter()
            .copied()
            .filter(|g| *g != t && listed(&sel.sources, g))
            .collect();
        if sel.per_source {
            out.extend(sources.into_iter().map(|s| (t, vec![s])));
        } else {
            out.push((t, sources));
        }
    }
    out
}

/// The LOCO folds as (corpus, target GPU): every GPU of every corpus with two or more
/// GPUs (a corpus of one GPU has no source of its own to predict it from).
fn loco_groups<'a>(runs: impl Iterator<Item = &'a Run>) -> Vec<(&'a str, &'a str)> {
    let mut gpus: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for r in runs {
        gpus.entry(corpus(r)).or_default().insert(r.gpu.as_str());
    }
    gpus.into_iter()
        .filter(|(_, g)| g.len() >= 2)
        .flat_map(|(c, g)| g.into_iter().map(move |t| (c, t)))
        .collect()
}

fn loco_folds<'a>(runs: &'a [&'a Run]) -> Vec<Fold<'a>> {
    loco_groups(runs.iter().copied())
        .into_iter()
        .map(|(c, t)| Fold {
            label: format!("{c}: {t}"),
            groups: vec![TestGroup::in_corpus(runs, c, t)],
            runs: Box::new(move || FoldRuns {
                fit: runs
                    .iter()
                    .copied()
                    .filter(|r| corpus(r) != c && r.gpu != t)
                    .collect(),
                evidence: runs
                    .iter()
                    .copied()
                    .filter(|r| corpus(r) == c && r.gpu != t)
                    .collect(),
            }),
        })
        .collect()
}

/// Where a GPU stands for the protocols that hold GPUs out by what they are: its launch
/// (year, then compute capability; none without a launch year) and its architecture.
struct Lineage<'a> {
    launch: Option<(u32, (u32, u32))>,
    arch: &'a str,
}

/// Whether `source` may teach a model about `target` under `newer` (launched before
/// it) or `loao` (another architecture).
fn may_teach(protocol: &Protocol, target: &Lineage, source: &Lineage) -> bool {
    match protocol {
        Protocol::Newer => matches!((source.launch, target.launch), (Some(s), Some(t)) if s < t),
        Protocol::Loao => source.arch != target.arch,
        _ => unreachable!("only newer and loao hold sources out by lineage"),
    }
}

/// The fewest allowed GPUs of a target's corpus that let it be scored.
fn lineage_min_sources(protocol: &Protocol) -> usize {
    match protocol {
        Protocol::Newer => NEWER_MIN_SOURCES,
        _ => 1,
    }
}

/// The `newer` and `loao` folds: targets whose allowed sources are the same GPUs share
/// one fold, fitted once on every corpus's runs on those GPUs; each (corpus, target)
/// whose corpus has enough of them is a test group projected from that corpus's runs
/// on them (reported "corpus: GPU", as in LOCO).
fn lineage_folds<'a>(
    runs: &'a [&'a Run],
    protocol: &Protocol,
    catalog: &'a crate::catalog::Catalog,
) -> Result<Vec<Fold<'a>>> {
    let mut lineage: BTreeMap<&str, Lineage> = BTreeMap::new();
    let mut in_corpus: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for r in runs {
        in_corpus
            .entry(corpus(r))
            .or_default()
            .insert(r.gpu.as_str());
        if !lineage.contains_key(r.gpu.as_str()) {
            let gpu = catalog.resolve_or_err(&r.gpu)?;
            let launch = gpu.launch_year.map(|y| (y, gpu.cc_major_minor()));
            lineage.insert(
                r.gpu.as_str(),
                Lineage {
                    launch,
                    arch: &gpu.arch,
                },
            );
        }
    }
    // Allowed sources -> the (corpus, target) pairs they serve.
    let mut by_sources: BTreeMap<BTreeSet<&str>, Vec<(&str, &str)>> = BTreeMap::new();
    for (&t, lt) in &lineage {
        let allowed: BTreeSet<&str> = lineage
            .iter()
            .filter(|(_, ls)| may_teach(protocol, lt, ls))
            .map(|(&g, _)| g)
            .collect();
        for (&c, gpus) in &in_corpus {
            if gpus.contains(t)
                && gpus.intersection(&allowed).count() >= lineage_min_sources(protocol)
            {
                by_sources.entry(allowed.clone()).or_default().push((c, t));
            }
        }
    }
    Ok(by_sources
        .into_iter()
        .map(|(allowed, targets)| {
            let mut names: Vec<&str> = targets.iter().map(|(_, t)| *t).collect();
            names.dedup();
            Fold {
                label: format!("{} (from {} GPUs)", names.join(", "), allowed.len()),
                groups: targets
                    .iter()
                    .map(|&(c, t)| TestGroup::in_corpus(runs, c, t))
                    .collect(),
                runs: Box::new(move || {
                    FoldRuns::same(
                        runs.iter()
                            .copied()
                            .filter(|r| allowed.contains(r.gpu.as_str()))
                            .collect(),
                    )
                }),
            }
        })
        .collect())
}

fn logo_folds<'a>(runs: &'a [&'a Run], sel: &Selection) -> Vec<Fold<'a>> {
    let gpus: BTreeSet<&str> = runs.iter().map(|r| r.gpu.as_str()).collect();
    logo_groups(&gpus, sel)
        .into_iter()
        .map(|(t, group)| Fold {
            label: if sel.per_source {
                format!("{t} from {}", group.join(" + "))
            } else {
                t.to_string()
            },
            groups: vec![TestGroup::of(
                runs.iter().copied().filter(|r| r.gpu == t).collect(),
            )],
            runs: Box::new(move || {
                FoldRuns::same(
                    runs.iter()
                        .copied()
                        .filter(|r| group.contains(&r.gpu.as_str()))
                        .collect(),
                )
            }),
        })
        .collect()
}

/// Per (GPU, kernel): the smallest and largest work and the number of rows (the
/// new-size and new-kernel protocols' "smallest"/"largest" in one pass).
fn work_extents<'a>(runs: &[&'a Run]) -> HashMap<(&'a str, &'a str), (f64, f64, usize)> {
    let mut m: HashMap<(&str, &str), (f64, f64, usize)> = HashMap::new();
    for r in runs {
        let e = m.entry((r.gpu.as_str(), r.kernel.as_str())).or_insert((
            f64::INFINITY,
            f64::NEG_INFINITY,
            0,
        ));
        e.0 = e.0.min(r.work());
        e.1 = e.1.max(r.work());
        e.2 += 1;
    }
    m
}

/// The protocol's folds ([`protocol_folds`]), each scoring only the selection's
/// kernels; a fold with nothing left to score is dropped.
fn folds<'a>(
    runs: &'a [&'a Run],
    protocol: &Protocol,
    sel: &Selection,
    catalog: &'a crate::catalog::Catalog,
) -> Result<Vec<Fold<'a>>> {
    let mut folds = match protocol {
        Protocol::Newer | Protocol::Loao => lineage_folds(runs, protocol, catalog)?,
        _ => protocol_folds(runs, protocol, sel),
    };
    if let Some(kernels) = &sel.score_kernels {
        for g in folds.iter_mut().flat_map(|f| f.groups.iter_mut()) {
            g.tests.retain(|r| kernels.iter().any(|k| r.kernel == *k));
        }
        folds.retain(|f| f.groups.iter().any(|g| !g.tests.is_empty()));
    }
    Ok(folds)
}

/// The folds of `protocol` (every run scored).
fn protocol_folds<'a>(runs: &'a [&'a Run], protocol: &Protocol, sel: &Selection) -> Vec<Fold<'a>> {
    let extents = work_extents(runs);
    let extent = |r: &Run| extents[&(r.gpu.as_str(), r.kernel.as_str())];
    let smallest = |r: &Run| r.work() <= extent(r).0;
    match protocol {
        Protocol::Logo => logo_folds(runs, sel),
        Protocol::Loco => loco_folds(runs),
        Protocol::Newer | Protocol::Loao => unreachable!("lineage_folds"),
        Protocol::NewSize => {
            let largest = |r: &Run| extent(r).2 > 1 && r.work() >= extent(r).1;
            let (test, train): (Vec<&Run>, Vec<&Run>) =
                runs.iter().copied().partition(|r| largest(r));
            let train: Arc<[&Run]> = train.into();
            vec![Fold {
                label: "largest sizes".into(),
                runs: Box::new(move || FoldRuns::same(train.clone())),
                groups: vec![TestGroup::of(test)],
            }]
        }
        Protocol::NewKernel {
            test_kernels,
            smallest_only,
            known,
        } => {
            let is_test = |r: &Run| test_kernels.iter().any(|k| r.kernel == *k);
            let train: Arc<[&Run]> = runs.iter().copied().filter(|r| !is_test(r)).collect();
            let fit: Arc<[&Run]> = train
                .iter()
                .copied()
                .filter(|r| !smallest_only || smallest(r))
                .collect();
            // One group per target GPU: what is known of the test kernels there.
            let gpus: BTreeSet<&str> = runs.iter().map(|r| r.gpu.as_str()).collect();
            let groups = gpus
                .into_iter()
                .map(|g| {
                    let test_runs = runs.iter().copied().filter(|r| is_test(r));
                    let extra_evidence = test_runs
                        .clone()
                        .filter(|r| match known {
                            KnownTestRuns::OtherGpus => r.gpu != g,
                            KnownTestRuns::SmallestSize => r.gpu == g && smallest(r),
                        })
                        .collect();
                    let tests = test_runs
                        .filter(|r| {
                            r.gpu == g && !(*known == KnownTestRuns::SmallestSize && smallest(r))
                        })
                        .collect();
                    TestGroup {
                        extra_evidence,
                        ..TestGroup::of(tests)
                    }
                })
                .collect();
            vec![Fold {
                label: format!("kernels {}", test_kernels.join(",")),
                runs: Box::new(move || FoldRuns {
                    fit: fit.clone(),
                    evidence: train.clone(),
                }),
                groups,
            }]
        }
        Protocol::NewFamily => {
            let gpus: BTreeSet<&str> = runs.iter().map(|r| r.gpu.as_str()).collect();
            let families: BTreeSet<&str> = runs.iter().map(|r| r.family()).collect();
            let mut out = Vec::new();
            for &t in &gpus {
                for &f in &families {
                    let tests: Vec<&Run> = runs
                        .iter()
                        .copied()
                        .filter(|r| r.gpu == t && r.family() == f)
                        .collect();
                    if tests.is_empty() {
                        continue;
                    }
                    out.push(Fold {
                        label: format!("{t}, family {f}"),
                        // The family's runs on other GPUs are sources a projection may
                        // use; nothing learned has seen the family or the target.
                        runs: Box::new(move || {
                            let evidence: Arc<[&Run]> =
                                runs.iter().copied().filter(|r| r.gpu != t).collect();
                            FoldRuns {
                                fit: evidence
                                    .iter()
                                    .copied()
                                    .filter(|r| r.family() != f)
                                    .collect(),
                                evidence,
                            }
                        }),
                        groups: vec![TestGroup::of(tests)],
                    });
                }
            }
            out
        }
    }
}

/// Evaluate models (any [`Fit`]: a [`crate::models::ModelSpec`] or your own) under a
/// protocol: each model is fitted afresh per fold, folds on
/// [`crate::parallel::threads`] threads (the results do not depend on it). The caller
/// records which data it ran on in the result's `data`.
pub fn evaluate<'r>(
    runs: impl IntoIterator<Item = &'r Run>,
    protocol: &Protocol,
    selection: &Selection,
    models: &[&dyn Fit],
    ctx: &Context,
    progress: &(dyn Fn() + Sync),
) -> Result<Evaluation> {
    evaluate_on(
        runs,
        protocol,
        selection,
        models,
        ctx,
        progress,
        crate::parallel::threads(),
    )
}

/// [`evaluate`] on `threads` threads (the results are the same on any number).
pub fn evaluate_on<'r>(
    runs: impl IntoIterator<Item = &'r Run>,
    protocol: &Protocol,
    selection: &Selection,
    models: &[&dyn Fit],
    ctx: &Context,
    progress: &(dyn Fn() + Sync),
    threads: usize,
) -> Result<Evaluation> {
    let mut excluded_rows = crate::data::validate::RuleCounts::default();
    let kept: Vec<&Run> = runs
        .into_iter()
        .filter(|r| !excluded_rows.count(r))
        .collect();
    let mut eval = Evaluation {
        protocol: protocol.name().into(),
        excluded_rows,
        ..Evaluation::default()
    };
    let folds = folds(&kept, protocol, selection, ctx.catalog)?;
    let names = Names::of(&kept);
    let floors = harness_floors(&kept);
    for spec in models {
        let name = &spec.name();
        let shared_name: Arc<str> = name.as_str().into(); // one copy for every record
        let mut missing = 0;
        let mut recs = Vec::new();
        // Folds are independent: fitted and scored in parallel, merged in fold order
        // (the output does not depend on the thread count).
        let outcomes = crate::parallel::map(&folds, threads, |fold| {
            let outcome = evaluate_fold(*spec, &shared_name, fold, &names, &floors, ctx);
            progress();
            outcome
        })
        .into_iter()
        .collect::<Result<Vec<FoldOutcome>>>()?;
        // Sized once: a growing vector of a million records briefly holds two copies.
        recs.reserve_exact(outcomes.iter().map(|o| o.records.len()).sum());
        for (fold, outcome) in folds.iter().zip(outcomes) {
            if let Some(s) = outcome.summary {
                eval.fit_summaries
                    .push((name.clone(), fold.label.clone(), s));
            }
            missing += outcome.missing;
            recs.extend(outcome.records);
        }
        eval.unpredicted.push((name.clone(), missing));
        let targets: BTreeSet<&str> = recs.iter().map(|r| &*r.target).collect();
        for t in targets.into_iter().chain(["all"]) {
            let m = Metrics::from_records(recs.iter().filter(|r| t == "all" || &*r.target == t));
            eval.results.push(ResultRow {
                model: name.clone(),
                target: t.to_string(),
                metrics: m,
            });
        }
        if eval.records.is_empty() {
            eval.records = recs; // moved, not copied
        } else {
            eval.records.extend(recs);
        }
    }
    Ok(eval)
}

/// What one fold gave: its fitted model's summary, its records and how many test
/// runs the model had nothing to go on for.
struct FoldOutcome {
    summary: Option<String>,
    records: Vec<Record>,
    missing: usize,
}

/// The fastest run of each (GPU, source): the floor each harness timed on each GPU
/// ([`crate::models::fastest_of_harness`]: infinite with too few runs).
type HarnessFloors<'a> = HashMap<(&'a str, Option<&'a str>), f64>;

fn harness_floors<'a>(runs: &[&'a Run]) -> HarnessFloors<'a> {
    let mut floors: HashMap<(&str, Option<&str>), (f64, u32)> = HashMap::new();
    for r in runs {
        let (f, n) = floors
            .entry((r.gpu.as_str(), r.source.as_deref()))
            .or_insert((f64::INFINITY, 0));
        *f = f.min(r.time_ms);
        *n += 1;
    }
    floors
        .into_iter()
        .map(|(k, (f, n))| (k, crate::models::fastest_of_harness(f, n)))
        .collect()
}

fn evaluate_fold(
    spec: &dyn Fit,
    name: &Arc<str>,
    fold: &Fold,
    names: &Names,
    floors: &HarnessFloors,
    ctx: &Context,
) -> Result<FoldOutcome> {
    let runs = (fold.runs)();
    let model = spec.fit(&runs.fit, ctx)?;
    let mut out = FoldOutcome {
        summary: model.fit_summary(),
        records: Vec::new(),
        missing: 0,
    };
    // One evidence index per test group.
    for group in &fold.groups {
        if group.tests.is_empty() {
            continue;
        }
        let evidence = Evidence::new(
            runs.evidence
                .iter()
                .filter(|r| group.corpus.is_none_or(|c| corpus(r) == c))
                .chain(&group.extra_evidence)
                .copied(),
        );
        let mut query = crate::data::Query::default(); // one buffer: no allocation per test run
        for run in &group.tests {
            match model.predict_work(run, &run.gpu, &mut query, &evidence, ctx)? {
                Some(p) => {
                    let mut rec = record(name, names, run, &p);
                    rec.launch_bound = crate::models::launch_bound(
                        run.time_ms,
                        floors
                            .get(&(run.gpu.as_str(), run.source.as_deref()))
                            .copied(),
                    );
                    if let Some(t) = &group.target_label {
                        rec.target = t.clone();
                    }
                    out.records.push(rec)
                }
                None => out.missing += 1,
            }
        }
    }
    Ok(out)
}

/// Number of folds a protocol makes on these runs (for progress bars).
pub fn fold_count(
    runs: &[Run],
    protocol: &Protocol,
    sel: &Selection,
    catalog: &crate::catalog::Catalog,
) -> usize {
    let kept = runs.iter().filter(|r| !is_excluded(r));
    match protocol {
        Protocol::Newer | Protocol::Loao => {
            let kept: Vec<&Run> = kept.collect();
            lineage_folds(&kept, protocol, catalog).map_or(0, |f| f.len())
        }
        Protocol::Logo => {
            let gpus: BTreeSet<&str> = kept.map(|r| r.gpu.as_str()).collect();
            logo_groups(&gpus, sel).len()
        }
        Protocol::NewFamily => kept
            .map(|r| (r.gpu.as_str(), r.family()))
            .collect::<BTreeSet<_>>()
            .len(),
        Protocol::Loco => loco_groups(kept).len(),
        _ => 1,
    }
}

/// One shared copy of each name the records repeat: a run's GPU, kernel, category and
/// source, and its configuration, which recurs once per GPU. Built once per evaluation
/// and read by every fold (a String per record's configuration was 40 MB more at 1M
/// records, and names interned per fold were copied once per fold).
struct Names<'a>(rustc_hash::FxHashMap<&'a str, Arc<str>>);

impl<'a> Names<'a> {
    fn of(runs: &[&'a Run]) -> Names<'a> {
        let mut names = rustc_hash::FxHashMap::default();
        for r in runs {
            let labels = [r.category.as_deref(), r.source.as_deref()];
            for n in [&r.gpu, &r.kernel, &r.config].map(|n| n.as_str()) {
                names.entry(n).or_insert_with(|| n.into());
            }
            for n in labels.into_iter().flatten() {
                names.entry(n).or_insert_with(|| n.into());
            }
        }
        Names(names)
    }
    /// The shared copy of `name` (a new one for a name no run had).
    fn get(&self, name: &str) -> Arc<str> {
        self.0.get(name).cloned().unwrap_or_else(|| name.into())
    }
}

fn record(model: &Arc<str>, names: &Names, run: &Run, p: &Prediction) -> Record {
    Record {
        model: model.clone(),
        target: names.get(&run.gpu),
        kernel: names.get(&run.kernel),
        config: names.get(&run.config),
        category: run.category.as_deref().map(|c| names.get(c)),
        source: run.source.as_deref().map(|s| names.get(s)),
        work: if run.flops > 0.0 {
            run.flops
        } else {
            run.dram_bytes
        },
        measured_ms: run.time_ms,
        pred_ms: p.pred_ms,
        pred_lo_ms: p.lo_ms,
        pred_hi_ms: p.hi_ms,
        interval: p.interval,
        bound: p.bound,
        launch_bound: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_in_parallel_give_the_sequential_results() {
        // SYNTHETIC: 4 kernels x 12 sizes on 5 catalog GPUs, times from a roofline-like
        // formula with a fixed per-(GPU, kernel) factor and per-run wobble.
        let gpus = [
            "NVIDIA TITAN V",
            "NVIDIA GeForce RTX 2080 Ti",
            "NVIDIA GeForce RTX 4070",
            "NVIDIA H100 SXM5 80GB",
            "NVIDIA A100 SXM4 80GB",
        ];
        let mut runs = Vec::new();
        for (g, gpu) in gpus.iter().enumerate() {
            for k in 0..4 {
                for n in 0..12 {
                    let bytes = 1e6 * 2f64.powi(n);
                    let wobble = 1.0 + 0.05 * (((g * 7 + k * 3 + n as usize) % 5) as f64 - 2.0);
                    runs.push(Run {
                        gpu: gpu.to_string().into(),
                        kernel: format!("k{k}").into(),
                        config: format!("n={n}").into(),
                        flops: bytes * (k as f64 + 0.5),
                        dram_bytes: bytes,
                        time_ms: (0.005 + bytes / (2e8 * (g + 2) as f64))
                            * (1.0 + 0.3 * k as f64)
                            * wobble,
                        ..Run::default()
                    });
                }
            }
        }
        let catalog = crate::catalog::Catalog::builtin();
        let ctx = Context::new(&catalog, &crate::features::Calibration::Spec, None);
        let specs: Vec<crate::models::ModelSpec> = ["analytical", "hybrid"]
            .iter()
            .map(|m| crate::models::ModelSpec::parse(m, 7).unwrap())
            .collect();
        let fits: Vec<&dyn Fit> = specs.iter().map(|s| s as &dyn Fit).collect();
        let run_on = |threads| {
            let e = evaluate_on(
                &runs,
                &Protocol::Logo,
                &Selection::default(),
                &fits,
                &ctx,
                &|| {},
                threads,
            )
            .unwrap();
            // every record of a configuration (one per target and model, from folds on
            // any thread) shares one copy of its names
            let mut first: std::collections::HashMap<(&str, &str), &Record> = Default::default();
            for r in &e.records {
                let f = first.entry((&*r.kernel, &*r.config)).or_insert(r);
                assert!(Arc::ptr_eq(&f.config, &r.config) && Arc::ptr_eq(&f.kernel, &r.kernel));
            }
            assert_eq!(first.len(), 12 * 4);
            let recs: Vec<_> = e
                .records
                .iter()
                .map(|r| {
                    (
                        r.model.clone(),
                        r.target.clone(),
                        r.config.clone(),
                        r.pred_ms.to_bits(),
                        r.pred_lo_ms.to_bits(),
                        r.pred_hi_ms.to_bits(),
                    )
                })
                .collect();
            (recs, e.fit_summaries)
        };
        let one = run_on(1);
        assert_eq!(one.0.len(), 2 * runs.len());
        assert!(!one.1.is_empty());
        assert_eq!(one, run_on(4));
    }

    #[test]
    fn metrics_by_hand() {
        // ratios 1.1, 0.8, 2.0, 1.0 -> APE 10 %, 20 %, 100 %, 0 %
        let m = Metrics::from_pairs([(1.1, 1.0), (0.8, 1.0), (4.0, 2.0), (3.0, 3.0)]);
        assert_eq!(m.n, 4);
        assert!((m.mape - 32.5).abs() < 1e-9);
        assert!((m.median_ape - 15.0).abs() < 1e-9);
        assert!((m.median_ratio - 1.05).abs() < 1e-9);
        assert!((m.within_10 - 0.5).abs() < 1e-12);
        assert!((m.within_25 - 0.75).abs() < 1e-12);
        assert!((m.within_50 - 0.75).abs() < 1e-12);
        let rmse = ((1.1f64.ln().powi(2) + 0.8f64.ln().powi(2) + 2f64.ln().powi(2)) / 4.0).sqrt();
        assert!((m.rmse_log - rmse).abs() < 1e-12);
    }

    #[test]
    fn known_level_scales_each_kernel_on_each_target_by_its_best_factor() {
        // The factor minimising the mean APE is a weighted median of measured/predicted:
        // predictions 2x, 2x and 1x the measured times (weights 2, 2, 1) -> 0.5.
        let pairs = [(2.0, 1.0), (4.0, 2.0), (3.0, 3.0)];
        assert_eq!(mape_optimal_scale(&pairs), 0.5);
        // No usable pair: no change.
        assert_eq!(mape_optimal_scale(&[(0.0, 1.0)]), 1.0);
        let rec = |target: &str, kernel: &str, pred_ms: f64, measured_ms: f64| Record {
            model: "m".into(),
            target: target.into(),
            kernel: kernel.into(),
            config: "c".into(),
            category: None,
            source: None,
            work: 1.0,
            measured_ms,
            pred_ms,
            pred_lo_ms: pred_ms,
            pred_hi_ms: pred_ms,
            interval: Interval::None,
            bound: Bound::Dram,
            launch_bound: false,
        };
        // Kernel k on g: every prediction twice the measurement (a level error only);
        // kernel j on g: the first run right, the second 50 % slow; the second's weight
        // (1.5 against 1) sets the scale, 2/3 -> APEs 1/3 and 0 (scale 1: 0 and 1/2);
        // kernel k on h: one run, exact once scaled.
        let recs = [
            rec("g", "k", 2.0, 1.0),
            rec("g", "k", 6.0, 3.0),
            rec("g", "j", 1.0, 1.0),
            rec("g", "j", 3.0, 2.0),
            rec("h", "k", 5.0, 1.0),
        ];
        let refs: Vec<&Record> = recs.iter().collect();
        let expected = 100.0 * (1.0 / 3.0) / 5.0;
        assert!((known_level_mape(&refs) - expected).abs() < 1e-12);
        let m = Metrics::from_records(refs.iter().copied());
        assert!((m.mape_known_level - expected).abs() < 1e-12);
        // (100 + 100 + 0 + 50 + 400) / 5 %
        assert!((m.mape - 130.0).abs() < 1e-9);
        // One run per kernel and target says nothing: NaN, printed "-".
        assert!(known_level_mape(&[&recs[0], &recs[2], &recs[4]]).is_nan());
    }

    #[test]
    fn records_serialize_interval_and_bound_as_labels() {
        let r = Record {
            model: "hybrid".into(),
            target: "g".into(),
            kernel: "k".into(),
            config: "n=1".into(),
            category: None,
            source: None,
            work: 1.0,
            measured_ms: 1.0,
            pred_ms: 1.0,
            pred_lo_ms: 0.5,
            pred_hi_ms: 2.0,
            interval: Interval::Calibrated(0.9),
            bound: Bound::Dram,
            launch_bound: false,
        };
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["model"], "hybrid");
        assert_eq!(json["interval"], "90%");
        assert_eq!(json["bound"], "dram");
    }

    #[test]
    fn spearman_and_regret_by_hand() {
        assert!((spearman(&[1.0, 2.0, 3.0], &[10.0, 20.0, 30.0]) - 1.0).abs() < 1e-12);
        assert!((spearman(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]) + 1.0).abs() < 1e-12);
        // ranks (0,1,2,3) vs (1,0,2,3): 1 - 6*2/(4*15) = 0.8
        assert!((spearman(&[1.0, 2.0, 3.0, 4.0], &[2.0, 1.0, 3.0, 4.0]) - 0.8).abs() < 1e-12);
        // A tuning space of 10 configurations of one work; the model picks the second
        // fastest (measured 1.1 ms where the best is 1.0): regret 1.1.
        let recs: Vec<Record> = (0..10)
            .map(|i| Record {
                model: "m".into(),
                target: "g".into(),
                kernel: "k".into(),
                config: format!("c={i}").into(),
                category: None,
                source: None,
                work: 1e9,
                measured_ms: 1.0 + 0.1 * i as f64,
                pred_ms: if i == 1 { 0.5 } else { 1.0 + 0.1 * i as f64 },
                pred_lo_ms: 0.0,
                pred_hi_ms: 9.0,
                interval: Interval::Calibrated(0.9),
                bound: Bound::Dram,
                launch_bound: false,
            })
            .collect();
        let m = Metrics::from_records(&recs);
        assert_eq!(m.tuning_spaces, 1);
        assert!((m.top1_regret - 1.1).abs() < 1e-12);
        assert!(m.spearman > 0.9 && m.spearman < 1.0);
        // Nine configurations are not a tuning space.
        assert_eq!(Metrics::from_records(&recs[..9]).tuning_spaces, 0);
    }
}
