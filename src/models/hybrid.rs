//! Hybrid: the analytical projection times exp(a learned residual).
//!
//! The residual model sees only GPU-agnostic features of a source -> target projection
//! ([`crate::features::vectors::pair`]) and is fitted on projections among the training
//! runs only: every pair of training GPUs that measured the same work, plus each
//! training run projected from the nearest other size of its kernel on its own GPU
//! (so the correction also learns size scaling). Its target is
//! ln(measured / projected). How much of the correction is applied is chosen by
//! leave-one-GPU-out inside the training GPUs (0 when it does not generalize), and the
//! held-out errors left after it give a 90 % prediction interval. Deterministic for a
//! seed.

use super::analytical::{combine, project, projections};
use super::regressors::{make, FittedRegressor, RegressorKind};
use super::{Context, Evidence, Model, Prediction};
use crate::data::Run;
use crate::error::{Error, Result};
use crate::evaluation::query_of;
use crate::features::vectors;
use ndarray::{Array1, Array2};

/// The regressor behind the residual unless told otherwise.
pub const DEFAULT_REGRESSOR: RegressorKind = RegressorKind::Gbm;
/// Below this many training pairs the correction is not fitted (pure analytical).
const MIN_PAIRS: usize = 8;
/// Largest correction applied, in log units (a factor of e^2 ~ 7.4).
const MAX_LOG_CORRECTION: f64 = 2.0;
/// Version of the saved-model format; loading another version is an error.
pub const MODEL_FORMAT_VERSION: u32 = 1;

/// Everything that defines a fitted hybrid, as saved by `gpucast train`. The residual
/// regressor is refitted from the stored design matrix on load (deterministic for the
/// seed), so the file is plain data.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
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
    /// Share of the learned correction applied (chosen by leave-one-GPU-out inside the
    /// training GPUs; 0 = pure analytical).
    pub shrinkage: f64,
    /// Quantiles of the held-out log errors ln(measured / predicted): the prediction
    /// interval is [pred x e^lo, pred x e^hi], widened to the memory-level bounds.
    #[serde(default)]
    pub interval_log: (f64, f64),
    pub x: Vec<Vec<f64>>,
    pub y: Vec<f64>,
}

pub struct Hybrid {
    kind: RegressorKind,
    seed: u64,
    /// Share of the correction fixed by the user (`hybrid@0.5`) instead of chosen by
    /// leave-one-GPU-out: a diagnostic, to see what the correction does when forced.
    fixed_share: Option<f64>,
    state: Option<HybridState>,
    regressor: Option<FittedRegressor>,
}

impl Hybrid {
    pub fn new(seed: u64) -> Self {
        Self::with_regressor(DEFAULT_REGRESSOR, seed)
    }
    pub fn with_regressor(kind: RegressorKind, seed: u64) -> Self {
        Hybrid {
            kind,
            seed,
            fixed_share: None,
            state: None,
            regressor: None,
        }
    }
    /// Apply this share of the learned correction instead of choosing it (0..=1).
    pub fn with_fixed_share(mut self, share: f64) -> Result<Self> {
        if !(0.0..=1.0).contains(&share) {
            return Err(Error::msg(format!(
                "hybrid residual share {share} is outside 0..1"
            )));
        }
        self.fixed_share = Some(share);
        Ok(self)
    }
    pub fn state(&self) -> Option<&HybridState> {
        self.state.as_ref()
    }
    /// Rebuild a fitted hybrid from its saved state.
    pub fn from_state(state: HybridState) -> Result<Self> {
        if state.format != "gpucast-model" || state.model != "hybrid" {
            return Err(Error::msg("not a gpucast hybrid model file"));
        }
        if state.version != MODEL_FORMAT_VERSION {
            return Err(Error::msg(format!(
                "model file format version {} (written by gpucast {}), this gpucast reads version {MODEL_FORMAT_VERSION}: retrain it with `gpucast train`",
                state.version, state.gpucast_version
            )));
        }
        let mut h = Hybrid::with_regressor(state.regressor, state.seed);
        h.regressor = correction(
            state.regressor,
            state.seed,
            state.shrinkage,
            &state.x,
            &state.y,
        )?;
        h.state = Some(state);
        Ok(h)
    }
}

/// The residual regressor a fitted hybrid applies: none when its share is 0 (the
/// correction would be multiplied by e^0, so fitting and querying it is wasted work).
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
    let width = x.first().map(|r| r.len()).unwrap_or(0);
    if x.iter().any(|r| r.len() != width) {
        return Err(Error::msg("model file: feature rows of different lengths"));
    }
    let flat: Vec<f64> = x.iter().flatten().copied().collect();
    let xm =
        Array2::from_shape_vec((y.len(), width), flat).map_err(|e| Error::msg(e.to_string()))?;
    Ok(Some(make(kind, seed).fit(&xm, &Array1::from(y.to_vec()))?))
}

/// Quantiles of held-out errors that bound the prediction interval (a 90 % interval).
const INTERVAL_QUANTILES: (f64, f64) = (0.05, 0.95);
/// Candidate shares of the correction.
const SHRINKAGE_GRID: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

/// How much of the learned correction to trust, chosen honestly inside the training
/// data: each training GPU in turn is held out, the residual model is fitted on the
/// pairs that do not touch it and scored on the pairs that target it; the share with
/// the lowest mean absolute percentage error over all held-out pairs wins (ties go to
/// the smaller share). With too few GPUs to hold one out, the correction is not used.
/// Also returns the held-out log errors left after the chosen correction: they set the
/// prediction interval. A `fixed` share is used as given (its held-out errors still set
/// the interval).
fn choose_shrinkage(
    kind: RegressorKind,
    seed: u64,
    x: &[Vec<f64>],
    y: &[f64],
    pair_gpus: &[(String, String)],
    gpus: &[String],
    fixed: Option<f64>,
) -> Result<(f64, Vec<f64>)> {
    let mut scored: Vec<(f64, f64)> = Vec::new(); // (predicted correction, actual residual)
    for g in gpus {
        let (mut xi, mut yi, mut xo, mut yo) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for ((row, &target), (s, t)) in x.iter().zip(y).zip(pair_gpus) {
            if s != g && t != g {
                xi.push(row.clone());
                yi.push(target);
            } else if t == g && s != g {
                xo.push(row.clone());
                yo.push(target);
            }
        }
        if xo.is_empty() {
            continue;
        }
        let Some(reg) = fit_regressor(kind, seed, &xi, &yi)? else {
            continue;
        };
        let width = xo[0].len();
        let xm = Array2::from_shape_vec((xo.len(), width), xo.concat())
            .map_err(|e| Error::msg(e.to_string()))?;
        let pred = reg.predict(&xm)?;
        scored.extend(
            pred.iter()
                .map(|c| c.clamp(-MAX_LOG_CORRECTION, MAX_LOG_CORRECTION))
                .zip(yo),
        );
    }
    if scored.is_empty() {
        // No GPU could be held out: no correction; the interval comes from the
        // in-sample residuals of the analytical projection.
        return Ok((fixed.unwrap_or(0.0), y.to_vec()));
    }
    let mape = |lambda: f64| {
        scored
            .iter()
            .map(|(c, r)| ((lambda * c - r).exp() - 1.0).abs())
            .sum::<f64>()
    };
    let lambda = fixed.unwrap_or_else(|| {
        SHRINKAGE_GRID
            .iter()
            .copied()
            .fold((0.0, f64::INFINITY), |best, l| {
                let m = mape(l);
                if m < best.1 - 1e-12 {
                    (l, m)
                } else {
                    best
                }
            })
            .0
    });
    Ok((lambda, scored.iter().map(|(c, r)| r - lambda * c).collect()))
}

/// Quantile of `v` (linear interpolation), `q` in [0, 1].
fn quantile(mut v: Vec<f64>, q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let pos = q * (v.len() - 1) as f64;
    let (i, frac) = (pos.floor() as usize, pos.fract());
    v[i] + frac * (v[(i + 1).min(v.len() - 1)] - v[i])
}

/// Sources a training run is projected from: the same work on the other training GPUs
/// and the nearest other size of its kernel on its own GPU.
fn training_sources<'a>(t: &Run, evidence: &Evidence<'a>) -> Vec<&'a Run> {
    let mut out = evidence.same_work(t, &t.gpu);
    out.extend(evidence.nearest_size(&t.gpu, t));
    out
}

/// A short, stable hash of the training data (what it was fitted on).
pub fn data_hash(runs: &[Run]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for r in runs {
        h.update(format!(
            "{}|{}|{}|{:e}\n",
            r.gpu, r.kernel, r.config, r.time_ms
        ));
    }
    h.finalize()
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Model for Hybrid {
    fn name(&self) -> String {
        let base = if self.kind == DEFAULT_REGRESSOR {
            "hybrid".to_string()
        } else {
            format!("hybrid-{}", self.kind.name())
        };
        match self.fixed_share {
            Some(share) => format!("{base}@{share}"),
            None => base,
        }
    }

    fn fit(&mut self, train: &[Run], ctx: &Context) -> Result<()> {
        let evidence = Evidence::new(train.iter());
        let mut categories: Vec<String> = train.iter().filter_map(|r| r.category.clone()).collect();
        categories.sort();
        categories.dedup();
        let (mut x, mut y, mut pair_gpus) = (Vec::new(), Vec::new(), Vec::new());
        for t in train
            .iter()
            .filter(|r| !crate::data::validate::is_excluded(r))
        {
            let q = query_of(t);
            let gt = ctx.gpu(&t.gpu)?;
            for s in training_sources(t, &evidence) {
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
                pair_gpus.push((s.gpu.clone(), t.gpu.clone()));
            }
        }
        let mut gpus: Vec<String> = train.iter().map(|r| r.gpu.clone()).collect();
        gpus.sort();
        gpus.dedup();
        let mut names: Vec<String> = vectors::PAIR_NAMES.iter().map(|s| s.to_string()).collect();
        names.extend(categories.iter().map(|c| format!("category={c}")));
        let (shrinkage, held_out) = choose_shrinkage(
            self.kind,
            self.seed,
            &x,
            &y,
            &pair_gpus,
            &gpus,
            self.fixed_share,
        )?;
        let interval_log = (
            quantile(held_out.clone(), INTERVAL_QUANTILES.0),
            quantile(held_out, INTERVAL_QUANTILES.1),
        );
        self.regressor = correction(self.kind, self.seed, shrinkage, &x, &y)?;
        self.state = Some(HybridState {
            shrinkage,
            interval_log,
            format: "gpucast-model".into(),
            version: MODEL_FORMAT_VERSION,
            gpucast_version: env!("CARGO_PKG_VERSION").into(),
            model: "hybrid".into(),
            regressor: self.kind,
            seed: self.seed,
            features: names,
            categories,
            training_gpus: gpus,
            data_hash: data_hash(train),
            x,
            y,
        });
        Ok(())
    }

    fn fit_summary(&self) -> Option<String> {
        let s = self.state.as_ref()?;
        Some(format!(
            "residual share {} ({})",
            s.shrinkage,
            if self.fixed_share.is_some() {
                "fixed"
            } else {
                "chosen by leave-one-GPU-out inside the training GPUs"
            }
        ))
    }

    fn predict(
        &self,
        query: &Run,
        evidence: &Evidence,
        ctx: &Context,
    ) -> Result<Option<Prediction>> {
        let state = self
            .state
            .as_ref()
            .ok_or_else(|| Error::msg("hybrid: predict before fit"))?;
        let mut ps = projections(query, evidence, ctx)?;
        if let Some(reg) = &self.regressor {
            let gt = ctx.gpu(&query.gpu)?;
            let rows: Vec<Vec<f64>> = ps
                .iter()
                .map(|(src, p)| -> Result<Vec<f64>> {
                    let gs = ctx.gpu(&p.source_gpu)?;
                    Ok(vectors::pair(
                        src,
                        query,
                        gs,
                        gt,
                        &p.source,
                        &p.target,
                        &state.categories,
                    ))
                })
                .collect::<Result<_>>()?;
            if !rows.is_empty() {
                let width = rows[0].len();
                let xm = Array2::from_shape_vec((rows.len(), width), rows.concat())
                    .map_err(|e| Error::msg(e.to_string()))?;
                let corr = reg.predict(&xm)?;
                for ((_, p), c) in ps.iter_mut().zip(corr.iter()) {
                    let f =
                        (state.shrinkage * c.clamp(-MAX_LOG_CORRECTION, MAX_LOG_CORRECTION)).exp();
                    p.pred_ms *= f;
                    p.pred_dram_ms *= f;
                    p.pred_l2_ms *= f;
                }
            }
        }
        Ok(combine(ps.iter().map(|(_, p)| p)).map(|mut p| {
            let (lo, hi) = state.interval_log;
            p.lo_ms = p.lo_ms.min(p.pred_ms * lo.exp());
            p.hi_ms = p.hi_ms.max(p.pred_ms * hi.exp());
            p
        }))
    }
}
