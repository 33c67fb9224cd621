//! Predicting a runs table on a target GPU: what `gpucast predict` does, as a library
//! function. One prediction per distinct work (kernel, config) among the source rows;
//! a row with no prediction carries the reason.

use crate::data::{validate::is_excluded, Name, Run, RunsTable};
use crate::error::{Error, Result};
use crate::models::hybrid::FittedHybrid;
use crate::models::{Context, Evidence, Fit, ModelSpec, Predict, Prediction};
use polars::prelude::{Column, DataFrame};
use std::path::Path;

/// A model to predict with: one named (fitted on training data first) or a saved one.
pub enum ModelChoice {
    Named(ModelSpec),
    Saved(Box<FittedHybrid>),
}

/// The pre-trained hybrid of `models/` (trained on every corpus of `datasets/`), built
/// into the binary so that it travels with it.
pub const PRETRAINED_JSON: &str = include_str!("../models/hybrid-pretrained.json");

/// The built-in pre-trained model's `data_hash` (the hash of the runs it learned from),
/// read from its text without parsing the model.
pub fn pretrained_data_hash() -> Option<&'static str> {
    let key = "\"data_hash\":\"";
    let start = PRETRAINED_JSON.find(key)? + key.len();
    let len = PRETRAINED_JSON[start..].find('"')?;
    Some(&PRETRAINED_JSON[start..start + len])
}

/// Where the pre-trained hybrid comes from: `$GPUCAST_MODELS/hybrid-pretrained.json`
/// when `GPUCAST_MODELS` is set, else the one built into the binary (None).
pub fn pretrained_path() -> Option<std::path::PathBuf> {
    std::env::var_os("GPUCAST_MODELS").map(|d| std::path::PathBuf::from(d).join(PRETRAINED_FILE))
}

/// The pre-trained hybrid ([`pretrained_path`]).
pub fn pretrained() -> Result<FittedHybrid> {
    match pretrained_path() {
        Some(path) => {
            if !path.is_file() {
                return Err(Error::usage(format!(
                    "no pre-trained model at {} (GPUCAST_MODELS names its directory; train one with `gpucast train --data datasets/public --sample 0.05 -o {}`, or unset it for the built-in one)",
                    path.display(),
                    path.display()
                )));
            }
            FittedHybrid::load(&path)
        }
        None => FittedHybrid::from_json(
            PRETRAINED_JSON,
            "the built-in models/hybrid-pretrained.json",
        ),
    }
}

/// File name of the pre-trained hybrid.
pub const PRETRAINED_FILE: &str = "hybrid-pretrained.json";
/// The model name that picks the pre-trained hybrid.
pub const PRETRAINED_NAME: &str = "pretrained";

impl ModelChoice {
    /// A saved model file (`*.json`, written by `gpucast train`), `pretrained` (the
    /// shipped hybrid, see [`pretrained_path`]) or a model name.
    pub fn parse(name_or_file: &str, seed: u64) -> Result<ModelChoice> {
        if name_or_file == PRETRAINED_NAME {
            return Ok(ModelChoice::Saved(Box::new(pretrained()?)));
        }
        if name_or_file.ends_with(".json") {
            return Ok(ModelChoice::Saved(Box::new(FittedHybrid::load(
                Path::new(name_or_file),
            )?)));
        }
        Ok(ModelChoice::Named(ModelSpec::parse(name_or_file, seed)?))
    }

    /// Whether the analytical-study figures apply.
    pub fn is_study(&self) -> bool {
        matches!(self, ModelChoice::Named(s) if s.is_study())
    }

    /// The fitted model: a named one is fitted on `training` without the target's rows.
    pub fn fitted(self, training: &[Run], target: &str, ctx: &Context) -> Result<Box<dyn Predict>> {
        match self {
            ModelChoice::Saved(m) => Ok(m),
            ModelChoice::Named(spec) => {
                let train: Vec<&Run> = training.iter().filter(|r| r.gpu != target).collect();
                spec.fit(&train, ctx)
            }
        }
    }
}

/// Predictions of a table's distinct work on one target GPU.
pub struct Predictions {
    pub model: String,
    pub target: String,
    /// The source rows predicted: one of each distinct work, the first that
    /// validation kept where there is one.
    pub rows: RunsTable,
    pub predictions: Vec<Option<Prediction>>,
    /// Why a row has no prediction (None where it has one).
    pub reasons: Vec<Option<String>>,
    /// Rows of the table measured on the target itself: never a source of its
    /// predictions (what `evaluate` scores them against).
    pub target_rows: usize,
    /// The target's own times of the works validation kept, by (kernel, config):
    /// what [`Predictions::checked_on_target`] compares the predictions with.
    pub target_measured_ms: rustc_hash::FxHashMap<(Name, Name), f64>,
    /// Whether the model was trained with runs of the target (a saved model whose
    /// training GPUs include it): set by the caller, which knows the model.
    pub model_trained_on_target: bool,
    /// How the model's picks did on the data's other GPUs ([`check_on_sources`]):
    /// set by a caller that asks for it (`tune`).
    pub source_checks: Vec<SourceCheck>,
}

/// How the configuration predicted fastest in a tuning space did on the target, where
/// the data measured it ([`Predictions::checked_on_target`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TargetCheck {
    pub kernel: String,
    /// The configuration predicted fastest.
    pub config: String,
    /// Its time measured on the target (None when the target did not measure it).
    pub measured_ms: Option<f64>,
    /// The fastest of the space's configurations measured on the target.
    pub best_measured_ms: f64,
    /// Its rank among those (1 = the fastest).
    pub rank: Option<usize>,
    /// How many of the space's configurations the target measured.
    pub measured: usize,
}

impl TargetCheck {
    /// One line for a user: the regret (measured time over the best measured) and rank.
    pub fn text(&self, target: &str) -> String {
        match (self.measured_ms, self.rank) {
            (Some(ms), Some(rank)) => format!(
                "measured on {target}, {}: the configuration predicted fastest takes {ms:.6} ms, {:.3}x the fastest of the {} measured there (rank {rank})",
                self.kernel,
                ms / self.best_measured_ms,
                self.measured
            ),
            _ => format!(
                "measured on {target}, {}: the configuration predicted fastest is not among the {} measured there",
                self.kernel, self.measured
            ),
        }
    }
}

/// Most characters of a kernel name in a terminal table (see
/// [`Table::shorten`](crate::report::Table::shorten)).
pub const TEXT_KERNEL_CHARS: usize = 60;

/// Rows one thread predicts at a time: large enough that handing out chunks costs
/// nothing, small enough that the threads finish together.
const PREDICT_CHUNK_ROWS: usize = 4096;

/// Predict every distinct work of `table` (rows of GPUs other than `target`, of
/// `source` only when given) on `target` (a catalog name), on
/// [`crate::parallel::threads`] threads (the output does not depend on it).
pub fn predict_table(
    table: &RunsTable,
    model: &dyn Predict,
    target: &str,
    source: Option<&str>,
    ctx: &Context,
) -> Result<Predictions> {
    if let Some(src) = source {
        table.require_gpu(crate::error::Input::Source, src)?;
    }
    let is_source = |r: &Run| r.gpu != target && source.is_none_or(|s| r.gpu == s);
    if !table.runs.iter().any(is_source) {
        return Err(Error::usage(format!(
            "no rows measured on a GPU other than {target} to predict from"
        )));
    }
    // Borrowed, not copied: a million-row table is predicted without a second copy.
    let evidence = Evidence::new(table.runs.iter().filter(|r| is_source(r)));
    let rows = table.masked(&representatives(table, is_source));
    // Chunks of rows on the parallel stages' threads, merged in row order.
    let chunks: Vec<&[Run]> = rows.runs.chunks(PREDICT_CHUNK_ROWS).collect();
    let predicted = crate::parallel::map(&chunks, crate::parallel::threads(), |chunk| {
        let mut query = crate::data::Query::default(); // one buffer a chunk: no allocation per row
        chunk
            .iter()
            .map(|r| model.predict_work(r, target, &mut query, &evidence, ctx))
            .collect::<Result<Vec<_>>>()
    });
    let mut predictions = Vec::with_capacity(rows.len());
    for chunk in predicted {
        predictions.extend(chunk?);
    }
    let reasons = rows
        .runs
        .iter()
        .zip(&predictions)
        .map(|(r, p)| match p {
            Some(_) => None,
            None if is_excluded(r) => Some(format!(
                "source row excluded by validation: {}",
                r.reasons().join("; ")
            )),
            None => Some("no usable source measured this work".into()),
        })
        .collect();
    // The target's own rows, in one pass: counted, and the kept ones' times.
    let mut target_rows = 0;
    let mut target_measured_ms = rustc_hash::FxHashMap::default();
    for r in table.runs.iter().filter(|r| r.gpu == target) {
        target_rows += 1;
        if !is_excluded(r) {
            target_measured_ms.insert((r.kernel.clone(), r.config.clone()), r.time_ms);
        }
    }
    Ok(Predictions {
        model: model.name(),
        target: target.to_string(),
        rows,
        predictions,
        reasons,
        target_rows,
        target_measured_ms,
        model_trained_on_target: false,
        source_checks: Vec::new(),
    })
}

/// A mask over `table`'s rows: one row per distinct work (kernel and configuration)
/// among the rows `is_source` accepts, the first that validation kept. A row
/// validation excluded stands for its work only when no kept row measured it (its
/// reason is then printed); otherwise the source time printed beside a prediction could
/// be one the model never used (Kernel Tuner's pnpoly on the RTX 2080 Ti, 100x faster
/// than its fp32 peak allows, stood for predictions made from the RTX 3090's rows).
fn representatives(table: &RunsTable, is_source: impl Fn(&Run) -> bool) -> Vec<bool> {
    // One pass keeps each work's first row (as fast as a set); the rare works whose
    // first row validation excluded get their first kept row in a second pass.
    let mut seen = rustc_hash::FxHashSet::default();
    let mut excluded_first = rustc_hash::FxHashMap::default();
    let mut keep: Vec<bool> = table
        .runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let first = is_source(r) && seen.insert((r.kernel.as_str(), r.config.as_str()));
            if first && is_excluded(r) {
                excluded_first.insert((r.kernel.as_str(), r.config.as_str()), i);
            }
            first
        })
        .collect();
    if !excluded_first.is_empty() {
        for (i, r) in table.runs.iter().enumerate() {
            if is_source(r) && !is_excluded(r) {
                if let Some(j) = excluded_first.remove(&(r.kernel.as_str(), r.config.as_str())) {
                    keep[j] = false;
                    keep[i] = true;
                }
            }
        }
    }
    keep
}

impl Predictions {
    /// The source rows with the prediction columns appended (data-formats §4):
    /// target_gpu, pred_ms, pred_lo_ms, pred_hi_ms, interval (its level, e.g. "90%",
    /// or "spread" / "none"), bound, model, no_prediction_reason.
    pub fn to_frame(&self) -> Result<DataFrame> {
        let mut df = crate::data::table_frame(&self.rows)?;
        let n = self.rows.len();
        // One column from each prediction (null where a row has none).
        fn column<T>(ps: &[Option<Prediction>], name: &str, f: impl Fn(&Prediction) -> T) -> Column
        where
            polars::prelude::Series: polars::prelude::NamedFrom<Vec<Option<T>>, [Option<T>]>,
        {
            Column::new(
                name.into(),
                ps.iter().map(|p| p.as_ref().map(&f)).collect::<Vec<_>>(),
            )
        }
        let num = |name: &str, f: fn(&Prediction) -> f64| column(&self.predictions, name, f);
        let text = |name: &str, f: fn(&Prediction) -> String| column(&self.predictions, name, f);
        let cols = vec![
            Column::new("target_gpu".into(), vec![self.target.clone(); n]),
            num("pred_ms", |p| p.pred_ms),
            num("pred_lo_ms", |p| p.lo_ms),
            num("pred_hi_ms", |p| p.hi_ms),
            text("interval", |p| p.interval.label()),
            text("bound", |p| p.bound.to_string()),
            Column::new("model".into(), vec![self.model.clone(); n]),
            Column::new("no_prediction_reason".into(), self.reasons.clone()),
        ];
        df.hstack_mut(&cols).map_err(|e| Error::data("", e))?;
        Ok(df)
    }

    /// One JSON object per row.
    pub fn to_json(&self) -> serde_json::Value {
        let rows: Vec<serde_json::Value> = self
            .rows
            .runs
            .iter()
            .zip(&self.predictions)
            .zip(&self.reasons)
            .map(|((r, p), why)| {
                serde_json::json!({"kernel": r.kernel.as_str(), "config": r.config.as_str(),
                    "source_gpu": r.gpu.as_str(),
                    "source_ms": r.time_ms, "target_gpu": self.target, "model": self.model,
                    "pred_ms": p.map(|p| p.pred_ms), "pred_lo_ms": p.map(|p| p.lo_ms),
                    "pred_hi_ms": p.map(|p| p.hi_ms), "interval": p.map(|p| p.interval.label()),
                    "bound": p.map(|p| p.bound.to_string()),
                    "no_prediction_reason": why})
            })
            .collect();
        serde_json::Value::Array(rows)
    }

    /// A readable table: the reason stands where a row has no prediction.
    pub fn to_table(&self) -> crate::report::Table {
        let mut t = crate::report::Table::new(&[
            "kernel",
            "config",
            "pred_ms",
            "pred_lo_ms",
            "pred_hi_ms",
            "interval",
            "bound",
        ]);
        for ((r, p), why) in self
            .rows
            .runs
            .iter()
            .zip(&self.predictions)
            .zip(&self.reasons)
        {
            let f = |v: Option<f64>| v.map(|x| format!("{x:.6}")).unwrap_or_else(|| "-".into());
            t.push(vec![
                r.kernel.to_string(),
                r.config.to_string(),
                f(p.map(|p| p.pred_ms)),
                f(p.map(|p| p.lo_ms)),
                f(p.map(|p| p.hi_ms)),
                p.map(|p| p.interval.label()).unwrap_or_else(|| "-".into()),
                p.map(|p| p.bound.to_string())
                    .or_else(|| why.clone())
                    .unwrap_or_default(),
            ]);
        }
        t
    }
}

impl Predictions {
    /// What to tell a user whose data also measured the target, or whose saved model
    /// was trained with the target's runs (None when neither).
    pub fn target_rows_note(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.target_rows > 0 {
            parts.push(format!(
                "the {} row(s) measured on {} are not sources of its predictions (`gpucast evaluate` scores predictions against them)",
                self.target_rows, self.target
            ));
        }
        if self.model_trained_on_target {
            parts.push(format!(
                "the saved model was trained with runs of {} (its training GPUs include it)",
                self.target
            ));
        }
        (!parts.is_empty()).then(|| format!("note: {}", parts.join("; ")))
    }

    /// [`to_table`](Self::to_table) for a terminal: a row without a prediction says
    /// `no prediction [k]`, and note k below the table gives the kind of reason those
    /// rows share, once, with the first row's whole reason (a reason is a sentence:
    /// written in each row, it made the column 200 characters wide on the reference
    /// study, where 12 rows have one; and the 3,734 benchmark-hub pnpoly rows of the
    /// RTX 2080 Ti above its peaks, each quoting its own figures, made 2,959 notes).
    pub fn to_text(&self) -> String {
        let mut t = self.to_table();
        t.shorten("kernel", TEXT_KERNEL_CHARS);
        let bound = t
            .headers
            .iter()
            .position(|h| h == "bound")
            .unwrap_or(t.headers.len() - 1);
        let (groups, group_of_row) = self.reason_groups(None, false);
        for (row, group) in t.rows.iter_mut().zip(group_of_row) {
            if let Some(k) = group {
                row[bound] = format!("no prediction [{}]", k + 1);
            }
        }
        let mut text = t.to_text();
        for (k, group) in groups.iter().enumerate() {
            text += &format!("[{}] {}\n", k + 1, group.note("row", ""));
        }
        text
    }

    /// The tuning spaces of the predictions (one kernel and problem: equal FLOPs, or
    /// bytes where a kernel counts none) of at least two predicted configurations,
    /// optionally of one kernel, each predicted fastest first.
    fn tuning_spaces(&self, kernel: Option<&str>) -> Vec<(&str, Vec<(&Run, Prediction)>)> {
        use std::collections::BTreeMap;
        let mut spaces: BTreeMap<(&str, u64), Vec<(&Run, Prediction)>> = BTreeMap::new();
        for (r, p) in self.rows.runs.iter().zip(&self.predictions) {
            if kernel.is_some_and(|k| k != r.kernel) {
                continue;
            }
            if let Some(p) = p {
                let work = if r.flops > 0.0 { r.flops } else { r.dram_bytes };
                spaces
                    .entry((r.kernel.as_str(), work.to_bits()))
                    .or_default()
                    .push((r, *p));
            }
        }
        spaces
            .into_iter()
            .filter(|(_, v)| v.len() >= 2)
            .map(|((k, _), mut v)| {
                v.sort_by(|a, b| a.1.pred_ms.total_cmp(&b.1.pred_ms));
                (k, v)
            })
            .collect()
    }

    /// Rows of `kernel` (or of every kernel) without a prediction, grouped by kernel
    /// and kind of reason: what a ranking of their tuning spaces leaves out, one line
    /// per group (`kernel: N configuration(s) not ranked: ...`), in kernel order, then
    /// the order the kinds first occur.
    pub fn unranked(&self, kernel: Option<&str>) -> Vec<(&str, String)> {
        let (mut groups, _) = self.reason_groups(kernel, true);
        groups.sort_by_key(|g| g.kernel);
        groups
            .iter()
            .map(|g| {
                let note = g.note("configuration", " not ranked");
                (g.kernel, format!("{}: {note}", g.kernel))
            })
            .collect()
    }

    /// Rows without a prediction (only `kernel`'s, when given) grouped by the kind of
    /// their reason ([`reason_kind`]), and with `per_kernel` by kernel too, in the order
    /// the groups first occur; and each row's group (None: a prediction, or another
    /// kernel).
    fn reason_groups(
        &self,
        kernel: Option<&str>,
        per_kernel: bool,
    ) -> (Vec<ReasonGroup<'_>>, Vec<Option<usize>>) {
        let mut groups: Vec<ReasonGroup> = Vec::new();
        let mut group_of_row = Vec::with_capacity(self.reasons.len());
        for (r, why) in self.rows.runs.iter().zip(&self.reasons) {
            let Some(why) = why
                .as_deref()
                .filter(|_| kernel.is_none_or(|k| k == r.kernel))
            else {
                group_of_row.push(None);
                continue;
            };
            let kind = reason_kind(r, why);
            let same =
                |g: &ReasonGroup| g.kind == kind && (!per_kernel || g.kernel == r.kernel.as_str());
            let k = match groups.iter().position(same) {
                Some(k) => k,
                None => {
                    groups.push(ReasonGroup {
                        kernel: &r.kernel,
                        kind,
                        first: r,
                        why,
                        rows: 0,
                    });
                    groups.len() - 1
                }
            };
            groups[k].rows += 1;
            group_of_row.push(Some(k));
        }
        (groups, group_of_row)
    }

    /// The kernels of [`best_configs`](Self::best_configs)' tuning spaces (optionally
    /// only `kernel`), each once.
    pub fn tuning_space_kernels(&self, kernel: Option<&str>) -> Vec<&str> {
        let mut kernels: Vec<&str> = self
            .tuning_spaces(kernel)
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        kernels.dedup();
        kernels
    }

    /// Where the data measured the target too: for each tuning space (as
    /// [`best_configs`](Self::best_configs) ranks them) of which the target measured at
    /// least two configurations, how the configuration predicted fastest did there.
    pub fn checked_on_target(&self, kernel: Option<&str>) -> Vec<TargetCheck> {
        let measured = |r: &Run| {
            self.target_measured_ms
                .get(&(r.kernel.clone(), r.config.clone()))
                .copied()
        };
        let mut checks = Vec::new();
        for (k, space) in self.tuning_spaces(kernel) {
            let times: Vec<f64> = space.iter().filter_map(|(r, _)| measured(r)).collect();
            if times.len() < 2 {
                continue;
            }
            let best = times.iter().copied().fold(f64::INFINITY, f64::min);
            let (pick, _) = space[0];
            let pick_ms = measured(pick);
            checks.push(TargetCheck {
                kernel: k.to_string(),
                config: pick.config.to_string(),
                measured_ms: pick_ms,
                best_measured_ms: best,
                rank: pick_ms.map(|m| times.iter().filter(|&&t| t < m).count() + 1),
                measured: times.len(),
            });
        }
        checks
    }

    /// The `top` configurations predicted fastest in each tuning space (one kernel and
    /// problem: equal FLOPs) of at least two configurations, optionally of one kernel:
    /// what to try first on a GPU you do not have.
    pub fn best_configs(&self, kernel: Option<&str>, top: usize) -> crate::report::Table {
        self.best_configs_table(kernel, top, false).0
    }

    /// [`best_configs`](Self::best_configs) for a terminal: each configuration without
    /// the parameters every configuration of its space sets alike, which a line below
    /// the table names once per space (Kernel Tuner's Xgemm repeats `PRECISION=32` in
    /// all 17,956 of its configurations, the convolution its filter size), and kernel
    /// names shortened as in [`to_text`](Self::to_text).
    pub fn best_configs_text(&self, kernel: Option<&str>, top: usize) -> String {
        let (mut t, shared) = self.best_configs_table(kernel, top, true);
        t.shorten("kernel", TEXT_KERNEL_CHARS);
        let mut text = t.to_text();
        for (k, n, params) in shared {
            text += &format!(
                "{k}: all {n} configurations have {} (not repeated above)\n",
                params.join(",")
            );
        }
        text
    }

    /// The best-configurations table; with `compact`, configurations without their
    /// space's shared parameters, and per space (kernel, configurations, the shared
    /// `name=value` parameters) where it has any.
    #[allow(clippy::type_complexity)]
    fn best_configs_table<'s>(
        &'s self,
        kernel: Option<&str>,
        top: usize,
        compact: bool,
    ) -> (crate::report::Table, Vec<(&'s str, usize, Vec<&'s str>)>) {
        let mut t = crate::report::Table::new(&[
            "kernel",
            "rank",
            "of",
            "config",
            "pred_ms",
            "pred_lo_ms",
            "pred_hi_ms",
            "interval",
            "measured on source",
        ]);
        let mut shared_by_space = Vec::new();
        for (k, v) in self.tuning_spaces(kernel) {
            let n = v.len();
            let shared = if compact {
                shared_params(v.iter().map(|(r, _)| r.config.as_str()))
            } else {
                Vec::new()
            };
            for (i, (r, p)) in v.into_iter().take(top).enumerate() {
                let config = if shared.is_empty() {
                    r.config.to_string()
                } else {
                    r.config
                        .split(',')
                        .filter(|part| !shared.contains(part))
                        .collect::<Vec<_>>()
                        .join(",")
                };
                t.push(vec![
                    k.to_string(),
                    (i + 1).to_string(),
                    n.to_string(),
                    config,
                    format!("{:.6}", p.pred_ms),
                    format!("{:.6}", p.lo_ms),
                    format!("{:.6}", p.hi_ms),
                    p.interval.label(),
                    format!("{:.6} ms on {}", r.time_ms, r.gpu),
                ]);
            }
            if !shared.is_empty() {
                shared_by_space.push((k, n, shared));
            }
        }
        (t, shared_by_space)
    }
}

/// What a row's reason for having no prediction says without the row's own figures,
/// to group rows by: for a source row validation excluded, the names of its flags
/// (`above_peak_bandwidth, above_peak_flops`); otherwise the reason itself.
fn reason_kind(r: &Run, why: &str) -> String {
    match &r.exclusion {
        Some(e) => {
            let mut names = vec![e.name()];
            for w in &r.warnings {
                if !names.contains(&w.name()) {
                    names.push(w.name());
                }
            }
            format!("source row excluded by validation ({})", names.join(", "))
        }
        None => why.to_string(),
    }
}

/// Rows without a prediction that share a kind of reason ([`reason_kind`]) and, where
/// grouped so, a kernel ([`Predictions::reason_groups`]).
struct ReasonGroup<'a> {
    kernel: &'a str,
    kind: String,
    /// The group's first row and its whole reason.
    first: &'a Run,
    why: &'a str,
    rows: usize,
}

impl ReasonGroup<'_> {
    /// `N {noun}s{what}: {kind}`, and for rows validation excluded, the first row's
    /// reasons with their figures.
    fn note(&self, noun: &str, what: &str) -> String {
        let (n, kind) = (self.rows, &self.kind);
        let s = if n == 1 { "" } else { "s" };
        if *kind == self.why {
            format!("{n} {noun}{s}{what}: {kind}")
        } else {
            format!(
                "{n} {noun}{s}{what}: {kind}; the first: {}",
                self.first.reasons().join("; ")
            )
        }
    }
}

/// How a model's first pick did where the data can tell without the target: on each
/// other GPU the data measured, predicted from the rest as `gpucast evaluate
/// --protocol logo` predicts it ([`check_on_sources`]), for one kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceCheck {
    pub kernel: String,
    /// The one GPU every prediction was projected from (`--source`), if one.
    pub source: Option<String>,
    /// One per tuning space of at least [`crate::evaluation::MIN_TUNING_SPACE`]
    /// configurations: the GPU predicted, the top-1 regret (the measured time of the
    /// configuration predicted fastest over the fastest measured) and the Spearman
    /// rank correlation of predicted and measured times.
    pub spaces: Vec<(String, f64, f64)>,
}

impl SourceCheck {
    /// One line for a user: the range and mean of the regrets, the worst GPU and the
    /// mean Spearman.
    pub fn text(&self) -> String {
        let regrets: Vec<f64> = self.spaces.iter().map(|s| s.1).collect();
        let (lo, hi) = regrets
            .iter()
            .fold((f64::INFINITY, 0.0_f64), |(lo, hi), r| {
                (lo.min(*r), hi.max(*r))
            });
        let mean = regrets.iter().sum::<f64>() / regrets.len() as f64;
        // (a space whose predictions are all equal has no rank correlation; with none
        // left the mean is NaN, written "-")
        let rhos: Vec<f64> = self
            .spaces
            .iter()
            .map(|s| s.2)
            .filter(|r| r.is_finite())
            .collect();
        let spearman = crate::report::fixed3(rhos.iter().sum::<f64>() / rhos.len() as f64);
        let mut gpus: Vec<&str> = self.spaces.iter().map(|s| s.0.as_str()).collect();
        gpus.sort_unstable();
        gpus.dedup();
        let worst = self
            .spaces
            .iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map_or("", |s| s.0.as_str());
        let range = if self.spaces.len() == 1 {
            format!("{lo:.3}x the fastest measured")
        } else {
            format!("{lo:.3}-{hi:.3}x the fastest measured (mean {mean:.3}x; the worst on {worst})")
        };
        let from = match &self.source {
            Some(s) => format!("from {s} alone"),
            None => "from the rest (leave-one-GPU-out)".into(),
        };
        format!(
            "{}: on the data's {} other GPU(s), each predicted {from}, the first pick took {range} over {} tuning space(s); Spearman {spearman}",
            self.kernel,
            gpus.len(),
            self.spaces.len(),
        )
    }
}

/// [`SourceCheck`]s of `kernels`, in kernel order: `spec` fitted leave-one-GPU-out on
/// `runs` (the rows of other GPUs than the target; projected from `source` alone when
/// given, as `predict --source` predicts) and scored on the kernels' rows. No check
/// for a kernel without a tuning space among the scored predictions, and none at all
/// where fewer than two GPUs measured the kernels.
pub fn check_on_sources(
    runs: &[&Run],
    spec: &ModelSpec,
    kernels: &[&str],
    source: Option<&str>,
    ctx: &Context,
) -> Result<Vec<SourceCheck>> {
    use crate::evaluation::{evaluate, tuning_spaces, Metrics, Protocol, Selection};
    let mut gpus: Vec<&str> = runs
        .iter()
        .filter(|r| kernels.contains(&r.kernel.as_str()))
        .map(|r| r.gpu.as_str())
        .collect();
    gpus.sort_unstable();
    gpus.dedup();
    if gpus.len() < 2 {
        return Ok(Vec::new());
    }
    let selection = Selection {
        sources: source.map(|s| vec![s.to_string()]),
        ..Selection::default()
    };
    // Fitted on every row, as the prediction's model is; only the kernels' are scored.
    let eval = evaluate(
        runs.iter().copied(),
        &Protocol::Logo,
        &selection,
        &[spec],
        ctx,
        &|| {},
    )?;
    let records: Vec<_> = eval
        .records
        .iter()
        .filter(|r| kernels.contains(&&*r.kernel))
        .collect();
    let mut checks: Vec<SourceCheck> = Vec::new();
    for space in tuning_spaces(&records) {
        let m = Metrics::from_records(space.iter().copied());
        let kernel = space[0].kernel.to_string();
        let entry = (space[0].target.to_string(), m.top1_regret, m.spearman);
        match checks.iter_mut().find(|c| c.kernel == kernel) {
            Some(c) => c.spaces.push(entry),
            None => checks.push(SourceCheck {
                kernel,
                source: source.map(str::to_string),
                spaces: vec![entry],
            }),
        }
    }
    // (in kernel order, as the table shows them)
    checks.sort_by(|a, b| a.kernel.cmp(&b.kernel));
    Ok(checks)
}

/// The `name=value` parts of canonical configuration keys that every one of
/// `configs` has, in key order: none unless each is `name=value` pairs (free text is
/// left whole) and at least one part of each is not shared (a configuration is never
/// shown empty).
fn shared_params<'c>(configs: impl Iterator<Item = &'c str>) -> Vec<&'c str> {
    let configs: Vec<&str> = configs.collect();
    let is_pairs = |c: &str| c.split(',').all(|part| part.contains('='));
    let Some(first) = configs.first() else {
        return Vec::new();
    };
    if !configs.iter().all(|c| is_pairs(c)) {
        return Vec::new();
    }
    let mut shared: Vec<&str> = first.split(',').collect();
    for c in &configs[1..] {
        shared.retain(|part| c.split(',').any(|q| q == *part));
    }
    // (a configuration all of whose parts are shared would be shown empty)
    if configs.iter().any(|c| c.split(',').count() == shared.len()) {
        return Vec::new();
    }
    shared
}

#[cfg(test)]
mod tests {
    use super::{shared_params, SourceCheck};

    #[test]
    fn a_source_check_says_range_mean_worst_and_spearman() {
        let check = |spaces: Vec<(&str, f64, f64)>, source: Option<&str>| {
            SourceCheck {
                kernel: "k".into(),
                source: source.map(str::to_string),
                spaces: spaces
                    .into_iter()
                    .map(|(g, r, s)| (g.to_string(), r, s))
                    .collect(),
            }
            .text()
        };
        assert_eq!(
            check(
                vec![("A", 1.0, 0.9), ("B", 1.5, 0.7), ("A", 1.2, f64::NAN)],
                None
            ),
            "k: on the data's 2 other GPU(s), each predicted from the rest (leave-one-GPU-out), \
             the first pick took 1.000-1.500x the fastest measured (mean 1.233x; the worst on B) \
             over 3 tuning space(s); Spearman 0.800"
        );
        assert_eq!(
            check(vec![("B", 1.25, f64::NAN)], Some("A")),
            "k: on the data's 1 other GPU(s), each predicted from A alone, the first pick took \
             1.250x the fastest measured over 1 tuning space(s); Spearman -"
        );
    }

    #[test]
    fn shared_params_are_the_parts_every_configuration_has() {
        let space = ["N=32,P=32,b=1", "N=32,P=32,b=2", "N=64,P=32,b=1"];
        assert_eq!(shared_params(space.into_iter()), ["P=32"]);
        // none shared, or a configuration that would be left empty
        assert!(shared_params(["a=1", "a=2"].into_iter()).is_empty());
        assert!(shared_params(["P=32", "P=32,b=1"].into_iter()).is_empty());
        // free text is left whole
        assert!(shared_params(["P=32,fast", "P=32,slow"].into_iter()).is_empty());
        assert!(shared_params(std::iter::empty()).is_empty());
    }
}
