//! The hybrid's fitted stages, as a prediction applies them: each a [`Stage`] that
//! moves the sources' projections of a query or the combined prediction.
//!
//! A prediction starts from the analytical projections of its sources (weighted by
//! their similarity to the fitted power). In order:
//! 1. [`Residual`]: each projection moved by a share of the learned correction;
//! 2. [`KernelRatio`]: each projection moved a share of the way to its kernel's
//!    typical projection ratio;
//! 3. the projections combined ([`Combination`]);
//! 4. [`Shape`]: the combination moved to the tuning-space shape of the sources whose
//!    shape carries over ([`ShapeTransfer`]);
//! 5. [`AnalyticalShare`]: a share (in logs) of the analytical fit's prediction where a
//!    source has the target's architecture;
//! 6. the calibrated interval bounds it (`models::interval::FittedInterval`, which the
//!    hybrid applies itself: it sets the bounds, not the time).
//!
//! Stages 1, 2 and 5 read the projections as made, before any stage moved them (each
//! share was chosen on them); 4 reads them as moved. Each is fitted in
//! `HybridParams::fit_hybrid` on errors held out inside the training GPUs and stays at
//! 0 (does nothing) unless those errors choose it (`models::HeldOutChoice`).

use super::analytical::{self, Candidate, Combination, Projection};
use super::regressors::FittedRegressor;
use super::transfer::ShapeTransfer;
use super::{Context, Evidence, Prediction};
use crate::data::{Query, Run};
use crate::error::Result;
use crate::features::vectors;

/// Largest correction [`Residual`] applies, in log units (a factor of e^2 ~ 7.4).
pub const MAX_LOG_CORRECTION: f64 = 2.0;

/// One prediction as the stages build it.
pub struct Draft<'q, 'a> {
    pub query: &'q Query,
    /// The sources' projections as made: what every stage's share was chosen on.
    pub made: &'q [(&'a Run, Projection)],
    /// The projections as the stages so far moved them (1-2); `made` until one does.
    pub moved: &'q [(&'a Run, Projection)],
    /// The combined prediction (ms) times the factors of the stages so far (4-5); NaN
    /// while the projections move.
    pub pred_ms: f64,
}

/// A fitted stage of the hybrid: what it does to one prediction. A stage moves the
/// projections before they are combined ([`Stage::projection_moves`]) or the combined
/// prediction ([`Stage::prediction_factor`]); the defaults do nothing.
pub trait Stage {
    /// What the stage is, in a few words (`gpucast explain`).
    fn name(&self) -> &'static str;

    /// Each projection's move in log units (`draft.made` order), from the
    /// projections as made; None: none moves.
    fn projection_moves<'a>(
        &self,
        _draft: &Draft<'_, 'a>,
        _evidence: &Evidence<'a>,
        _ctx: &Context,
    ) -> Result<Option<Vec<f64>>> {
        Ok(None)
    }

    /// The factor on the combined prediction (1: none).
    fn prediction_factor<'a>(
        &self,
        _draft: &Draft<'_, 'a>,
        _evidence: &Evidence<'a>,
        _ctx: &Context,
    ) -> Result<f64> {
        Ok(1.0)
    }
}

/// Move each projection by e^`log_moves` (its prediction and its memory-level bounds).
pub fn move_projections(ps: &mut [(&Run, Projection)], log_moves: &[f64]) {
    for ((_, p), m) in ps.iter_mut().zip(log_moves) {
        let f = m.exp();
        p.pred_ms *= f;
        p.pred_dram_ms *= f;
        p.pred_l2_ms *= f;
    }
}

/// The learned residual correction: `share` of the regressor's log correction of each
/// source -> target pair ([`vectors::pair`]), bounded by [`MAX_LOG_CORRECTION`].
pub struct Residual<'s> {
    pub regressor: Option<&'s FittedRegressor>,
    /// The share for the query's family (`HybridState::share_for`).
    pub share: f64,
    /// The categories the regressor's features name.
    pub categories: &'s [String],
}

impl Stage for Residual<'_> {
    fn name(&self) -> &'static str {
        "the learned residual correction"
    }

    fn projection_moves<'a>(
        &self,
        draft: &Draft<'_, 'a>,
        _evidence: &Evidence<'a>,
        ctx: &Context,
    ) -> Result<Option<Vec<f64>>> {
        let Some(reg) = self.regressor.filter(|_| self.share > 0.0) else {
            return Ok(None);
        };
        if draft.made.is_empty() {
            return Ok(None);
        }
        let gt = ctx.gpu(&draft.query.gpu)?;
        let rows: Vec<Vec<f64>> = draft
            .made
            .iter()
            .map(|(src, p)| -> Result<Vec<f64>> {
                let gs = ctx.gpu(&src.gpu)?;
                Ok(vectors::pair(
                    src,
                    draft.query,
                    gs,
                    gt,
                    &p.source,
                    &p.target,
                    self.categories,
                ))
            })
            .collect::<Result<_>>()?;
        let corrections = reg.predict(&super::hybrid::to_matrix(&rows)?)?;
        Ok(Some(
            corrections
                .iter()
                .map(|c| self.share * c.clamp(-MAX_LOG_CORRECTION, MAX_LOG_CORRECTION))
                .collect(),
        ))
    }
}

/// Each projection moved `share` of the way (in logs) to its kernel's typical
/// projection ratio ([`analytical::kernel_ratio_shift`]).
pub struct KernelRatio {
    pub share: f64,
}

impl Stage for KernelRatio {
    fn name(&self) -> &'static str {
        "the kernel-ratio share"
    }

    fn projection_moves<'a>(
        &self,
        draft: &Draft<'_, 'a>,
        evidence: &Evidence<'a>,
        ctx: &Context,
    ) -> Result<Option<Vec<f64>>> {
        if self.share <= 0.0 {
            return Ok(None);
        }
        let shifts = analytical::kernel_ratio_shift(draft.query, draft.made, evidence, ctx)?;
        Ok(Some(shifts.iter().map(|d| self.share * d).collect()))
    }
}

/// The tuning-space shape transfer ([`ShapeTransfer::log_correction`] of the moved
/// projections), for a query of a corpus it was learned on (`HybridState::shape_for`).
pub struct Shape<'s> {
    pub transfer: Option<&'s ShapeTransfer>,
}

impl Stage for Shape<'_> {
    fn name(&self) -> &'static str {
        "the shape transfer"
    }

    fn prediction_factor<'a>(
        &self,
        draft: &Draft<'_, 'a>,
        evidence: &Evidence<'a>,
        ctx: &Context,
    ) -> Result<f64> {
        match self.transfer {
            Some(t) => Ok((-t.log_correction(draft.query, draft.moved, evidence, ctx)?).exp()),
            None => Ok(1.0),
        }
    }
}

/// `share` (in logs) of the analytical fit's prediction (its sources weighed as `fit`
/// says) where a source has the target's architecture.
pub struct AnalyticalShare {
    pub share: f64,
    pub fit: Candidate,
}

impl Stage for AnalyticalShare {
    fn name(&self) -> &'static str {
        "the analytical fit's share"
    }

    fn prediction_factor<'a>(
        &self,
        draft: &Draft<'_, 'a>,
        evidence: &Evidence<'a>,
        ctx: &Context,
    ) -> Result<f64> {
        if self.share <= 0.0 || !analytical::has_same_arch_source(draft.made, &draft.query.gpu) {
            return Ok(1.0);
        }
        let actx = ctx
            .with_similarity_power(self.fit.power)
            .with_prefer_same_arch(self.fit.prefer_same_arch);
        let analytical_ms = analytical::combined_ms_as(
            draft.query,
            draft.made,
            ctx.launch_floors,
            evidence,
            &actx,
        )?;
        Ok(analytical_ms.map_or(1.0, |a| (a / draft.pred_ms).powf(self.share)))
    }
}

/// What one stage did to a prediction ([`apply_traced`]).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct StageEffect {
    /// [`Stage::name`].
    pub stage: &'static str,
    /// The factor it moved the combined prediction by (1: it did nothing).
    pub factor: f64,
}

/// The prediction `stages` (in order) make of `made`, the sources' projections of
/// `query`, before its interval, and the combination it came from (what the interval
/// reads: its regime, its floor); None with no projection.
pub fn apply<'a>(
    stages: &[&dyn Stage],
    query: &Query,
    made: &[(&'a Run, Projection)],
    evidence: &Evidence<'a>,
    ctx: &Context,
) -> Result<Option<(Prediction, Combination)>> {
    apply_traced(stages, query, made, evidence, ctx, None)
}

/// What the stages did to one prediction ([`apply_traced`]).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct StageTrace {
    /// The sources' projections as made, combined (ms): the prediction before any stage.
    pub combined_ms: f64,
    /// Each stage's effect, in order.
    pub effects: Vec<StageEffect>,
}

/// [`apply`], telling `trace` what each stage did (a projection stage: the factor its
/// moves, after the earlier stages', made of the combined prediction).
pub fn apply_traced<'a>(
    stages: &[&dyn Stage],
    query: &Query,
    made: &[(&'a Run, Projection)],
    evidence: &Evidence<'a>,
    ctx: &Context,
    mut trace: Option<&mut StageTrace>,
) -> Result<Option<(Prediction, Combination)>> {
    let mut draft = Draft {
        query,
        made,
        moved: made,
        pred_ms: f64::NAN,
    };
    // Every move from the projections as made, then applied in the stages' order.
    let mut moves = Vec::new();
    for (k, stage) in stages.iter().enumerate() {
        if let Some(m) = stage.projection_moves(&draft, evidence, ctx)? {
            moves.push((k, m));
        }
    }
    let combined_ms = |ps: &[(&Run, Projection)]| {
        Combination::of(ps.iter().map(|(_, p)| p))
            .prediction()
            .map_or(f64::NAN, |p| p.pred_ms)
    };
    // (traced only: each projection stage's factor on the combined prediction)
    let mut before_ms = trace.is_some().then(|| combined_ms(made));
    if let (Some(t), Some(base_ms)) = (trace.as_deref_mut(), before_ms) {
        *t = StageTrace {
            combined_ms: base_ms,
            effects: Vec::with_capacity(stages.len()),
        };
    }
    let mut projection_factors = Vec::new();
    let moved_ps: Vec<(&'a Run, Projection)>;
    if !moves.is_empty() {
        let mut ps = made.to_vec();
        for (k, m) in &moves {
            move_projections(&mut ps, m);
            if let Some(before) = &mut before_ms {
                let after = combined_ms(&ps);
                projection_factors.resize(stages.len(), 1.0);
                projection_factors[*k] = after / *before;
                *before = after;
            }
        }
        moved_ps = ps;
        draft.moved = &moved_ps;
    }
    let combination = Combination::of(draft.moved.iter().map(|(_, p)| p));
    let Some(mut p) = combination.prediction() else {
        return Ok(None);
    };
    let mut factor = 1.0;
    for (k, stage) in stages.iter().enumerate() {
        draft.pred_ms = p.pred_ms * factor;
        let f = stage.prediction_factor(&draft, evidence, ctx)?;
        factor *= f;
        if let Some(t) = trace.as_deref_mut() {
            t.effects.push(StageEffect {
                stage: stage.name(),
                factor: projection_factors.get(k).copied().unwrap_or(1.0) * f,
            });
        }
    }
    p.pred_ms *= factor;
    p.lo_ms *= factor;
    p.hi_ms *= factor;
    Ok(Some((p, combination)))
}
