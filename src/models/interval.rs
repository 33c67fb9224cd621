//! The calibrated prediction interval: quantiles of the errors a model made on its
//! training GPUs, each projected from the others ([`HeldOutError`]).
//!
//! - Pooled ([`interval_log`]): one interval for every target, from all the training
//!   GPUs' errors.
//! - Local ([`LocalInterval`]): each training GPU's errors weighted by its similarity
//!   to the target, so a target like the GPUs the model predicts well gets their narrow
//!   interval and one like the GPUs it predicts badly their wide one. A fit keeps it
//!   only where it calibrates the training GPUs themselves clearly better, each held
//!   out in turn ([`fit_interval`]). On the GEMM latency tables (seven datacenter GPUs
//!   beside two workstation boards) the pooled interval covered every datacenter
//!   target's runs and 61-81 % of the boards'.

use super::similarity::{similarity, source_weight, SIMILARITY_POWERS};
use super::Context;
use crate::error::Result;
use rustc_hash::FxHashMap;
use std::sync::RwLock;

/// Nominal level of the calibrated intervals, and the quantiles of held-out log errors
/// ln(measured / predicted) that bound it.
pub const INTERVAL_LEVEL: f64 = 0.9;
const INTERVAL_QUANTILES: (f64, f64) = ((1.0 - INTERVAL_LEVEL) / 2.0, (1.0 + INTERVAL_LEVEL) / 2.0);
/// Fewest held-out errors a calibrated interval is drawn from.
pub const MIN_INTERVAL_ERRORS: usize = 20;

/// One held-out error ln(measured / predicted) and the training GPU (an index of the
/// caller's choosing) it was measured on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeldOutError {
    pub gpu: usize,
    pub ln_error: f64,
    /// Whether the prediction was in the launch-bound regime
    /// ([`super::analytical::Combination::launch_bound`]).
    pub launch_bound: bool,
}

/// Upper half of the standard normal's quantiles at (k + 0.5) / 50, k = 0..50 (the
/// lower half is their negatives), from Python's `statistics.NormalDist().inv_cdf`:
/// 50 equally likely levels of a new GPU (the 5 % and 95 % quantiles are among them).
const NORMAL_LEVELS: [f64; 25] = [
    0.025068908259,
    0.075269862100,
    0.125661346855,
    0.176374164781,
    0.227544976641,
    0.279319034447,
    0.331853346437,
    0.385320466408,
    0.439913165673,
    0.495850347347,
    0.553384719556,
    0.612812991017,
    0.674489750196,
    0.738846849185,
    0.806421247018,
    0.877896295051,
    0.954165253146,
    1.036433389494,
    1.126391129039,
    1.226528120037,
    1.340755033690,
    1.475791028179,
    1.644853626951,
    1.880793608151,
    2.326347874041,
];

/// The calibrated interval's bounds in log units from errors held out on the training
/// GPUs; None with fewer than [`MIN_INTERVAL_ERRORS`].
///
/// Errors cluster by GPU: most of a target's error is its own level (scale), the rest
/// its shape. With many GPUs their pooled 5 % and 95 % quantiles would do; with three
/// they hold three draws of the level, and a new GPU's level is often outside them.
/// So the two parts are modelled apart: a new GPU's level ~ Normal(0, s^2), s^2 the
/// mean square of the training GPUs' levels (each the median of its errors; centred
/// on 0 because no model is fitted to the targets' level, and two or three GPUs
/// place a mean badly), plus a shape error drawn from the errors around their GPU's
/// level. The bounds are the quantiles of that mixture. One GPU: its errors' quantiles.
/// Measured on the 4-GPU convolution, share of the targets' runs covered: pooled
/// quantiles 82.6 %, with tails shrunk by n / (n + 1) 84.2 %, this 85.6 %.
pub fn interval_log(errors: &[HeldOutError]) -> Option<(f64, f64)> {
    let mut errors: Vec<HeldOutError> = errors
        .iter()
        .copied()
        .filter(|e| e.ln_error.is_finite())
        .collect();
    if errors.len() < MIN_INTERVAL_ERRORS {
        return None;
    }
    errors.sort_by(|a, b| a.gpu.cmp(&b.gpu).then(a.ln_error.total_cmp(&b.ln_error)));
    let groups: Vec<&[HeldOutError]> = errors.chunk_by(|a, b| a.gpu == b.gpu).collect();
    let median = |g: &[HeldOutError]| {
        sorted_quantile(&g.iter().map(|e| e.ln_error).collect::<Vec<_>>(), 0.5)
    };
    let mut mixture: Vec<f64> = if groups.len() < 2 {
        errors.iter().map(|e| e.ln_error).collect()
    } else {
        let levels: Vec<f64> = groups.iter().map(|g| median(g)).collect();
        let s = (levels.iter().map(|l| l * l).sum::<f64>() / levels.len() as f64).sqrt();
        let shape = groups
            .iter()
            .zip(&levels)
            .flat_map(|(g, l)| g.iter().map(move |e| e.ln_error - l));
        shape
            .flat_map(|w| {
                NORMAL_LEVELS
                    .iter()
                    .flat_map(move |z| [w + s * z, w - s * z])
            })
            .collect()
    };
    Some((
        selected_quantile(&mut mixture, INTERVAL_QUANTILES.0),
        selected_quantile(&mut mixture, INTERVAL_QUANTILES.1),
    ))
}

/// [`sorted_quantile`] of `v` in any order, reordering it: selection, not a sort (a fit
/// draws an interval from ~200,000 mixture values for each training GPU it holds out:
/// over `reproduce`'s 262 fits, 5.3 CPU seconds sorting, 1.6 selecting).
fn selected_quantile(v: &mut [f64], q: f64) -> f64 {
    let pos = q * (v.len() - 1) as f64;
    let (i, frac) = (pos.floor() as usize, pos.fract());
    let (_, &mut at, above) = v.select_nth_unstable_by(i, f64::total_cmp);
    let next = above.iter().copied().min_by(f64::total_cmp).unwrap_or(at);
    at + frac * (next - at)
}

/// Quantile of sorted `v` (linear interpolation), `q` in [0, 1].
fn sorted_quantile(v: &[f64], q: f64) -> f64 {
    let pos = q * (v.len() - 1) as f64;
    let (i, frac) = (pos.floor() as usize, pos.fract());
    v[i] + frac * (v[(i + 1).min(v.len() - 1)] - v[i])
}

/// Fewest training GPUs with held-out errors a local interval is chosen on: with two,
/// each held out in turn leaves one GPU, nothing to weigh.
pub const MIN_LOCAL_GPUS: usize = 3;
/// A local interval is kept when it brings the training GPUs' coverage (each GPU held
/// out in turn, mean distance from [`INTERVAL_LEVEL`]) to at most this share of the
/// pooled interval's distance; with no margin (1) Kernel Tuner GEMM's analytical folds
/// take a local interval in 5 of 11 folds and its RTX 3060 target's coverage drops by
/// 9 points, from under 90 %. The local interval is a within-corpus stage: leave one corpus out
/// no fit chooses it (coverage per corpus within 0.1 point of the pooled interval's);
/// leave one GPU out the GEMM tables, the benchmark hub's convolution and the reference
/// study choose it.
pub const LOCAL_MARGIN: f64 = 0.8;
/// Quantiles of a GPU's shape errors a local interval keeps, at (k + 0.5) / 50.
pub const SHAPE_QUANTILES: usize = 50;

/// One training GPU's held-out errors, summarised: the level (median) and the
/// quantiles of the errors around it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuErrors {
    pub gpu: String,
    /// Median held-out error, ln(measured / predicted).
    pub level_log: f64,
    /// The errors minus the level at [`SHAPE_QUANTILES`] quantiles, ascending.
    pub shape_log: Vec<f64>,
}

impl GpuErrors {
    /// The summary of `errors` (finite, at least one) measured on `gpu`.
    pub fn of(gpu: &str, errors: &[f64]) -> GpuErrors {
        let mut e = errors.to_vec();
        e.sort_by(f64::total_cmp);
        let level_log = sorted_quantile(&e, 0.5);
        let shape_log = (0..SHAPE_QUANTILES)
            .map(|k| {
                let q = (k as f64 + 0.5) / SHAPE_QUANTILES as f64;
                sorted_quantile(&e, q) - level_log
            })
            .collect();
        GpuErrors {
            gpu: gpu.to_string(),
            level_log,
            shape_log,
        }
    }
}

/// Largest log error a saved interval may hold (a factor of e^20, about 5 x 10^8): a
/// held-out error is a few units at most, and a hand-edited 1e308 made every upper
/// bound infinite.
pub const MAX_INTERVAL_LOG: f64 = 20.0;

/// Whether `v` is a log error a saved interval may hold ([`MAX_INTERVAL_LOG`]).
pub fn plausible_log(v: f64) -> bool {
    v.is_finite() && v.abs() <= MAX_INTERVAL_LOG
}

/// An interval for each target from the training GPUs' errors, each GPU weighted by
/// its similarity to the target to `similarity_power` (what [`fit_interval`] chose).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocalInterval {
    /// One of [`SIMILARITY_POWERS`].
    pub similarity_power: i32,
    pub gpus: Vec<GpuErrors>,
    /// Bounds already drawn, by target name (the weights depend on the target only).
    #[serde(skip)]
    by_target: BoundsCache,
}

/// Bounds by target; a copy starts empty, and it never makes two intervals unequal.
#[derive(Debug, Default)]
struct BoundsCache(RwLock<FxHashMap<String, Option<(f64, f64)>>>);

impl Clone for BoundsCache {
    fn clone(&self) -> Self {
        BoundsCache::default()
    }
}

impl PartialEq for BoundsCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl LocalInterval {
    /// Check every field a hand edit could break (the message names the field).
    pub fn check(&self) -> std::result::Result<(), String> {
        if !SIMILARITY_POWERS.contains(&self.similarity_power) {
            return Err(format!(
                "interval.local.similarity_power {} is not one of {SIMILARITY_POWERS:?}",
                self.similarity_power
            ));
        }
        if self.gpus.is_empty() {
            return Err("interval.local.gpus is empty".into());
        }
        for g in &self.gpus {
            let ascending = g.shape_log.windows(2).all(|w| w[0] <= w[1]);
            if !plausible_log(g.level_log)
                || g.shape_log.len() != SHAPE_QUANTILES
                || !g.shape_log.iter().all(|v| plausible_log(*v))
                || !ascending
            {
                return Err(format!(
                    "interval.local for {}: level_log must be a number within +-{MAX_INTERVAL_LOG} and shape_log {SHAPE_QUANTILES} such numbers in ascending order",
                    g.gpu
                ));
            }
        }
        Ok(())
    }

    /// The bounds in log units for `target`; None when no training GPU has weight.
    pub fn bounds_log(&self, target: &str, ctx: &Context) -> Result<Option<(f64, f64)>> {
        if let Some(&b) = self.read_cache().get(target) {
            return Ok(b);
        }
        let gt = ctx.gpu(target)?;
        let mut weighted = Vec::with_capacity(self.gpus.len());
        for g in &self.gpus {
            let gs = ctx.gpu(&g.gpu)?;
            let w = source_weight(similarity(ctx.catalog, gt, gs), self.similarity_power);
            weighted.push((g, w));
        }
        let bounds = local_bounds(&weighted);
        self.by_target
            .0
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(target.to_string(), bounds);
        Ok(bounds)
    }

    fn read_cache(&self) -> std::sync::RwLockReadGuard<'_, FxHashMap<String, Option<(f64, f64)>>> {
        // (a panic elsewhere cannot leave a half-written entry: the map is only inserted into)
        self.by_target.0.read().unwrap_or_else(|e| e.into_inner())
    }
}

/// A fit's calibrated interval: the pooled one, the local one where [`fit_interval`]
/// chose it, and the launch-bound regime's own.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FittedInterval {
    /// [`interval_log`] of the held-out errors (of the work-bound ones where
    /// `launch_log` has its own); None with too few of them.
    pub pooled_log: Option<(f64, f64)>,
    /// The held-out errors weighted toward the training GPUs most like the target,
    /// where the fit chose that; absent: `pooled_log` for every target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local: Option<LocalInterval>,
    /// [`interval_log`] of the launch-bound errors alone, for a launch-bound
    /// prediction; None with too few of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_log: Option<(f64, f64)>,
}

impl FittedInterval {
    /// The bounds in log units for a prediction on `target`: `launch_log` for a
    /// launch-bound one where there is one, else the local interval's where there is
    /// one (and a training GPU has weight), else the pooled one.
    pub fn bounds_log(
        &self,
        launch_bound: bool,
        target: &str,
        ctx: &Context,
    ) -> Result<Option<(f64, f64)>> {
        if let Some(bounds) = self.launch_log.filter(|_| launch_bound) {
            return Ok(Some(bounds));
        }
        match &self.local {
            Some(l) => Ok(l.bounds_log(target, ctx)?.or(self.pooled_log)),
            None => Ok(self.pooled_log),
        }
    }

    /// Check every field a hand edit could break (the message names the field).
    pub fn check(&self) -> std::result::Result<(), String> {
        for (name, bounds) in [
            ("interval.pooled_log", self.pooled_log),
            ("interval.launch_log", self.launch_log),
        ] {
            if let Some((lo, hi)) = bounds {
                if !(plausible_log(lo) && plausible_log(hi) && lo <= hi) {
                    return Err(format!(
                        "{name} ({lo:?}, {hi:?}) must be numbers within +-{MAX_INTERVAL_LOG} with lo <= hi"
                    ));
                }
            }
        }
        if let Some(local) = &self.local {
            if self.pooled_log.is_none() {
                return Err("interval.local without interval.pooled_log".into());
            }
            local.check()?;
        }
        Ok(())
    }

    /// What a fit summary says of the interval: nothing for the pooled one.
    pub fn describe(&self) -> String {
        match &self.local {
            Some(l) => format!(
                ", interval from the training GPUs' errors weighted by their similarity to the target to the power {}",
                l.similarity_power
            ),
            None => String::new(),
        }
    }
}

/// The interval of a fit from its held-out errors (`errors[i].gpu` indexes `gpus`):
/// the pooled one ([`interval_log`]) and, with errors on at least [`MIN_LOCAL_GPUS`]
/// GPUs, a local one if it calibrates them clearly better. Each training GPU is held
/// out in turn and given the interval the others' errors make for it, pooled and local
/// at each power of [`SIMILARITY_POWERS`]; a candidate's miss is the mean over the GPUs
/// of |share of the GPU's errors inside - [`INTERVAL_LEVEL`]|. The local power with the
/// smallest miss is kept when that is at most [`LOCAL_MARGIN`] x the pooled miss.
/// Where there are enough errors of each regime, the launch-bound ones give
/// `launch_log` and the others the rest: a launch-bound time is mostly its harness,
/// whose errors are of another size than the work's (wider within a corpus timed on
/// several systems, narrower within one harness).
pub fn fit_interval(
    errors: &[HeldOutError],
    gpus: &[&str],
    ctx: &Context,
) -> Result<FittedInterval> {
    // Each regime from its own errors: launch-bound predictions from the launch-bound
    // ones; the rest (pooled and local) from the others, where both are enough.
    let (launch, work): (Vec<HeldOutError>, Vec<HeldOutError>) =
        errors.iter().partition(|e| e.launch_bound);
    let launch_log = interval_log(&launch);
    let work_log = launch_log.and_then(|_| interval_log(&work));
    let (errors, pooled_log): (&[HeldOutError], _) = match work_log {
        Some(_) => (&work, work_log),
        None => (errors, interval_log(errors)),
    };
    let mut by_gpu: Vec<Vec<f64>> = vec![Vec::new(); gpus.len()];
    for e in errors.iter().filter(|e| e.ln_error.is_finite()) {
        let Some(g) = by_gpu.get_mut(e.gpu) else {
            return Err(crate::error::Error::model(format!(
                "a held-out error of GPU {} of {} named",
                e.gpu,
                gpus.len()
            )));
        };
        g.push(e.ln_error);
    }
    let present: Vec<usize> = (0..gpus.len()).filter(|&g| !by_gpu[g].is_empty()).collect();
    if pooled_log.is_none() || present.len() < MIN_LOCAL_GPUS {
        return Ok(FittedInterval {
            pooled_log,
            local: None,
            launch_log,
        });
    }
    let summaries: Vec<GpuErrors> = present
        .iter()
        .map(|&g| GpuErrors::of(gpus[g], &by_gpu[g]))
        .collect();
    let mut similarities = Vec::with_capacity(present.len());
    for &a in &present {
        let ga = ctx.gpu(gpus[a])?;
        let mut row = Vec::with_capacity(present.len());
        for &b in &present {
            row.push(similarity(ctx.catalog, ga, ctx.gpu(gpus[b])?));
        }
        similarities.push(row);
    }
    let inside = |errors: &[f64], (lo, hi): (f64, f64)| {
        errors.iter().filter(|&&e| lo <= e && e <= hi).count() as f64 / errors.len() as f64
    };
    // The pooled interval of the other GPUs' errors, for each held-out GPU.
    let mut pooled_miss = 0.0;
    for &g in &present {
        let others: Vec<HeldOutError> = errors.iter().filter(|e| e.gpu != g).copied().collect();
        let Some(bounds) = interval_log(&others) else {
            return Ok(FittedInterval {
                pooled_log,
                local: None,
                launch_log,
            });
        };
        pooled_miss += (inside(&by_gpu[g], bounds) - INTERVAL_LEVEL).abs();
    }
    let mut best: Option<(f64, i32)> = None;
    'powers: for &power in &SIMILARITY_POWERS {
        let mut miss = 0.0;
        for (i, &g) in present.iter().enumerate() {
            let others: Vec<(&GpuErrors, f64)> = summaries
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(j, s)| (s, source_weight(similarities[i][j], power)))
                .collect();
            let Some(bounds) = local_bounds(&others) else {
                continue 'powers;
            };
            miss += (inside(&by_gpu[g], bounds) - INTERVAL_LEVEL).abs();
        }
        if best.is_none_or(|(m, _)| miss < m) {
            best = Some((miss, power));
        }
    }
    let local = best
        .filter(|&(miss, _)| miss <= LOCAL_MARGIN * pooled_miss)
        .map(|(_, similarity_power)| LocalInterval {
            similarity_power,
            gpus: summaries,
            by_target: BoundsCache::default(),
        });
    Ok(FittedInterval {
        pooled_log,
        local,
        launch_log,
    })
}

/// The interval of GPUs' errors weighted as given: a new GPU's level ~ Normal(0, s^2),
/// s^2 the weighted mean square of the GPUs' levels, plus a shape error drawn from a
/// GPU with probability its share of the weight (as [`interval_log`] does with equal
/// weights). None when the weights sum to nothing.
fn local_bounds(gpus: &[(&GpuErrors, f64)]) -> Option<(f64, f64)> {
    let total: f64 = gpus.iter().map(|&(_, w)| w).sum();
    if !(total.is_finite() && total > 0.0) {
        return None;
    }
    let s = (gpus
        .iter()
        .map(|&(g, w)| w * g.level_log * g.level_log)
        .sum::<f64>()
        / total)
        .sqrt();
    let mut mixture: Vec<(f64, f64)> = Vec::new();
    for &(g, w) in gpus {
        let each = w / total / (g.shape_log.len() * 2 * NORMAL_LEVELS.len()) as f64;
        for &v in &g.shape_log {
            for z in NORMAL_LEVELS {
                mixture.push((v + s * z, each));
                mixture.push((v - s * z, each));
            }
        }
    }
    Some((
        weighted_quantile(&mut mixture, INTERVAL_QUANTILES.0),
        weighted_quantile(&mut mixture, INTERVAL_QUANTILES.1),
    ))
}

/// The smallest value of `(value, weight)` items (weights summing to 1) whose items at
/// or below it weigh at least `q`: the first a scan in ascending order reaches with a
/// running weight of `q` (the last value if rounding leaves it short). Found by
/// selection, reordering the items: the sort it replaces was most of the time a fit
/// spends choosing its interval (`gpucast bench`'s LOGO analytical, 100k rows x 8 GPUs:
/// 0.35 s before local intervals, 0.43 s with a sort, 0.39-0.40 s with this).
fn weighted_quantile(items: &mut [(f64, f64)], q: f64) -> f64 {
    let mut rest = items;
    let mut need = q;
    loop {
        if rest.len() <= 1 {
            return rest.first().map_or(f64::NAN, |&(v, _)| v);
        }
        let mid = rest.len() / 2;
        let (below, &mut (pivot, w), above) =
            rest.select_nth_unstable_by(mid, |a, b| a.0.total_cmp(&b.0));
        let below_weight: f64 = below.iter().map(|&(_, w)| w).sum();
        if below_weight >= need {
            rest = below;
        } else if below_weight + w >= need || above.is_empty() {
            return pivot;
        } else {
            need -= below_weight + w;
            rest = above;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SYNTHETIC held-out errors: `values` on each of the GPUs, shifted by its level.
    fn held_out(levels: &[f64], values: &[f64]) -> Vec<HeldOutError> {
        levels
            .iter()
            .enumerate()
            .flat_map(|(gpu, l)| {
                values.iter().map(move |v| HeldOutError {
                    gpu,
                    ln_error: l + v,
                    launch_bound: false,
                })
            })
            .collect()
    }

    /// SYNTHETIC: the launch-bound errors (wide) get their own interval, the pooled one
    /// keeps every error; too few launch-bound errors give none.
    #[test]
    fn launch_bound_errors_get_their_own_interval() {
        let catalog = crate::catalog::Catalog::builtin();
        let ctx = Context::new(&catalog, &crate::features::Calibration::Spec, None);
        let grid: Vec<f64> = (0..40).map(|i| (i as f64 - 19.5) / 200.0).collect();
        let mut errors = held_out(&[0.0, 0.0], &grid);
        let wide: Vec<HeldOutError> = held_out(&[0.0, 0.0], &grid)
            .into_iter()
            .map(|e| HeldOutError {
                ln_error: 8.0 * e.ln_error,
                launch_bound: true,
                ..e
            })
            .collect();
        let fitted =
            fit_interval(&errors, &["NVIDIA TITAN V", "NVIDIA A100 SXM4 80GB"], &ctx).unwrap();
        assert_eq!(fitted.launch_log, None);
        errors.extend(wide);
        let fitted =
            fit_interval(&errors, &["NVIDIA TITAN V", "NVIDIA A100 SXM4 80GB"], &ctx).unwrap();
        let (lo, hi) = fitted.launch_log.expect("a launch-bound interval");
        let (plo, phi) = fitted.pooled_log.unwrap();
        assert!(hi - lo > phi - plo + 0.1, "{lo} {hi} / {plo} {phi}");
        assert!((lo + hi).abs() < 1e-9 && lo < -0.6, "{lo} {hi}");
    }

    #[test]
    fn interval_quantiles_need_enough_errors() {
        let grid: Vec<f64> = (0..=100).map(|i| (i as f64 - 50.0) / 100.0).collect();
        assert_eq!(
            interval_log(&held_out(&[0.0], &grid[..MIN_INTERVAL_ERRORS - 1])),
            None
        );
        // one GPU: errors -0.50, -0.49, ..., 0.50, their 5 % and 95 % quantiles
        let (lo, hi) = interval_log(&held_out(&[0.0], &grid)).unwrap();
        assert!(
            (lo + 0.45).abs() < 1e-12 && (hi - 0.45).abs() < 1e-12,
            "{lo} {hi}"
        );
        // non-finite errors are left out, not counted
        let mut e = held_out(&[0.0], &grid[..MIN_INTERVAL_ERRORS]);
        e[0].ln_error = f64::NAN;
        assert_eq!(interval_log(&e), None);
    }

    #[test]
    fn a_new_gpus_level_reaches_beyond_the_training_gpus() {
        // Two GPUs at levels +-0.2, no shape error: the pooled errors are only +-0.2,
        // a new GPU's level ~ Normal(0, 0.2^2): bounds +-1.645 x 0.2.
        let (lo, hi) = interval_log(&held_out(&[0.2, -0.2], &[0.0; 20])).unwrap();
        assert!((hi - 0.2 * 1.644853626951).abs() < 1e-9, "{hi}");
        assert!((lo + hi).abs() < 1e-12, "{lo} {hi}");
        // The same shape errors on GPUs that agree in level: the shape errors alone.
        let grid: Vec<f64> = (0..=100).map(|i| (i as f64 - 50.0) / 100.0).collect();
        let (lo, hi) = interval_log(&held_out(&[0.0, 0.0, 0.0], &grid)).unwrap();
        assert!(
            (lo + 0.45).abs() < 1e-9 && (hi - 0.45).abs() < 1e-9,
            "{lo} {hi}"
        );
        // Levels that differ more than the shapes do widen it beyond the pooled
        // errors' own quantiles (three draws of the level: a fourth is often outside).
        let narrow: Vec<f64> = grid.iter().map(|g| g / 10.0).collect();
        let (_, hi) = interval_log(&held_out(&[0.3, -0.3, 0.1], &narrow)).unwrap();
        let mut pooled: Vec<f64> = held_out(&[0.3, -0.3, 0.1], &narrow)
            .iter()
            .map(|e| e.ln_error)
            .collect();
        pooled.sort_by(f64::total_cmp);
        assert!(hi > sorted_quantile(&pooled, 0.95) + 0.02, "{hi}");
    }

    const DATACENTER: [&str; 6] = [
        "NVIDIA B200",
        "NVIDIA GB200",
        "NVIDIA B300 SXM6 AC",
        "NVIDIA GB300",
        "NVIDIA H100 SXM5 80GB",
        "NVIDIA H200 SXM 141GB",
    ];
    const BOARDS: [&str; 2] = [
        "NVIDIA L40S",
        "NVIDIA RTX PRO 6000 Blackwell Server Edition",
    ];

    fn grid(half_width: f64) -> Vec<f64> {
        (0..=100)
            .map(|i| (i as f64 - 50.0) / 50.0 * half_width)
            .collect()
    }

    /// SYNTHETIC errors on GPUs named in `gpus`: each GPU's level plus `values`.
    fn errors_on(gpus: &[(&str, f64, &[f64])]) -> (Vec<HeldOutError>, Vec<String>) {
        let names = gpus.iter().map(|g| g.0.to_string()).collect();
        let errors = gpus
            .iter()
            .enumerate()
            .flat_map(|(gpu, &(_, level, values))| {
                values.iter().map(move |v| HeldOutError {
                    gpu,
                    ln_error: level + v,
                    launch_bound: false,
                })
            })
            .collect();
        (errors, names)
    }

    #[test]
    fn a_gpu_summary_is_its_median_and_the_quantiles_around_it() {
        let e: Vec<f64> = grid(0.5).iter().map(|v| v + 0.2).collect();
        let g = GpuErrors::of("X", &e);
        assert!((g.level_log - 0.2).abs() < 1e-12);
        assert_eq!(g.shape_log.len(), SHAPE_QUANTILES);
        // quantiles (k + 0.5) / 50 of -0.5..0.5: -0.49, -0.47, ..., 0.49
        assert!((g.shape_log[0] + 0.49).abs() < 1e-9, "{}", g.shape_log[0]);
        assert!((g.shape_log[49] - 0.49).abs() < 1e-9, "{}", g.shape_log[49]);
        assert!(g.shape_log.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn local_bounds_follow_the_weight() {
        let narrow = GpuErrors::of("A", &grid(0.1));
        let wide_values: Vec<f64> = grid(1.0).iter().map(|v| v + 0.5).collect();
        let wide = GpuErrors::of("B", &wide_values);
        // All the weight on A: its errors alone (level 0, no level spread).
        let (lo, hi) = local_bounds(&[(&narrow, 1.0), (&wide, 0.0)]).unwrap();
        assert!(
            lo > -0.1 && lo < -0.08 && hi < 0.1 && hi > 0.08,
            "{lo} {hi}"
        );
        // All on B: its shape widened by its level (a new GPU's level ~ N(0, 0.5^2)).
        let (lo, hi) = local_bounds(&[(&narrow, 0.0), (&wide, 1.0)]).unwrap();
        assert!(lo < -1.0 && hi > 1.0, "{lo} {hi}");
        // Equal weights lie between; no weight at all gives no interval.
        let (lo_mid, hi_mid) = local_bounds(&[(&narrow, 1.0), (&wide, 1.0)]).unwrap();
        assert!(
            lo_mid > lo && hi_mid < hi && hi_mid > 0.1,
            "{lo_mid} {hi_mid}"
        );
        assert_eq!(local_bounds(&[(&narrow, 0.0), (&wide, 0.0)]), None);
    }

    fn ctx_of(catalog: &crate::catalog::Catalog) -> Context<'_> {
        Context::new(catalog, &crate::features::Calibration::Spec, None)
    }

    #[test]
    fn errors_that_follow_similarity_give_each_target_its_own_interval() {
        let catalog = crate::catalog::Catalog::builtin();
        let ctx = ctx_of(&catalog);
        // Datacenter GPUs predicted within 2 %, the two boards 40 % slow and spread
        // widely: the pooled interval is as wide for every target.
        let (tight, loose) = (grid(0.02), grid(0.3));
        let gpus: Vec<(&str, f64, &[f64])> = DATACENTER
            .iter()
            .map(|&g| (g, 0.0, &tight[..]))
            .chain(BOARDS.iter().map(|&g| (g, 0.4, &loose[..])))
            .collect();
        let (errors, names) = errors_on(&gpus);
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let fitted = fit_interval(&errors, &names, &ctx).unwrap();
        let pooled = fitted.pooled_log.unwrap();
        let local = fitted.local.expect("a local interval");
        let width = |(lo, hi): (f64, f64)| hi - lo;
        let b200 = local.bounds_log("NVIDIA B200", &ctx).unwrap().unwrap();
        let l40s = local.bounds_log("NVIDIA L40S", &ctx).unwrap().unwrap();
        assert!(width(b200) < 0.5 * width(pooled), "{b200:?} {pooled:?}");
        assert!(width(l40s) > width(b200) + 0.3, "{l40s:?} {b200:?}");
        // The same bounds again (from the cache), and through the fitted interval.
        assert_eq!(local.bounds_log("NVIDIA B200", &ctx).unwrap(), Some(b200));
        let with = |local: Option<&LocalInterval>, launch_log| FittedInterval {
            pooled_log: Some(pooled),
            local: local.cloned(),
            launch_log,
        };
        let bounds = |i: &FittedInterval, launch_bound| {
            i.bounds_log(launch_bound, "NVIDIA B200", &ctx).unwrap()
        };
        assert_eq!(bounds(&with(Some(&local), None), false), Some(b200));
        assert_eq!(bounds(&with(None, None), false), Some(pooled));
        // A launch-bound prediction takes the launch-bound errors' interval, where
        // there is one; the others never do.
        let launch = (-0.9, 0.8);
        assert_eq!(
            bounds(&with(Some(&local), Some(launch)), true),
            Some(launch)
        );
        assert_eq!(bounds(&with(Some(&local), Some(launch)), false), Some(b200));
        assert_eq!(bounds(&with(None, None), true), Some(pooled));
        assert!(local.check().is_ok());
        assert!(with(Some(&local), None).describe().contains("to the power"));
        assert_eq!(with(None, None).describe(), "");
        // A GPU the catalog lacks is an error naming it.
        let err = local.bounds_log("NVIDIA NoSuchGPU", &ctx).unwrap_err();
        assert!(err.to_string().contains("NoSuchGPU"), "{err}");
    }

    #[test]
    fn errors_unrelated_to_similarity_keep_the_pooled_interval() {
        let catalog = crate::catalog::Catalog::builtin();
        let ctx = ctx_of(&catalog);
        let same = grid(0.2);
        let gpus: Vec<(&str, f64, &[f64])> = DATACENTER
            .iter()
            .chain(&BOARDS)
            .map(|&g| (g, 0.0, &same[..]))
            .collect();
        let (errors, names) = errors_on(&gpus);
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let fitted = fit_interval(&errors, &names, &ctx).unwrap();
        assert_eq!(fitted.pooled_log, interval_log(&errors));
        assert_eq!(fitted.local, None);
        // An error of a GPU not named is refused, not a panic.
        let mut bad = errors.clone();
        bad[0].gpu = names.len();
        assert!(fit_interval(&bad, &names, &ctx).is_err());
        // Two GPUs: nothing to weigh, whatever their errors.
        let (errors, names) = errors_on(&[
            (DATACENTER[0], 0.0, &grid(0.02)),
            (BOARDS[0], 0.4, &grid(0.3)),
        ]);
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        assert_eq!(fit_interval(&errors, &names, &ctx).unwrap().local, None);
    }

    #[test]
    fn a_hand_edited_local_interval_is_refused() {
        let good = LocalInterval {
            similarity_power: 2,
            gpus: vec![GpuErrors::of("NVIDIA B200", &grid(0.1))],
            by_target: BoundsCache::default(),
        };
        assert!(good.check().is_ok());
        let mut bad = good.clone();
        bad.similarity_power = 3;
        assert!(bad.check().unwrap_err().contains("similarity_power 3"));
        let mut bad = good.clone();
        bad.gpus.clear();
        assert!(bad.check().unwrap_err().contains("empty"));
        let mut bad = good.clone();
        bad.gpus[0].shape_log.swap(0, 49);
        assert!(bad.check().unwrap_err().contains("ascending"));
        let mut bad = good.clone();
        bad.gpus[0].shape_log.pop();
        assert!(bad.check().is_err());
        let mut bad = good;
        bad.gpus[0].level_log = f64::NAN;
        assert!(bad.check().is_err());
    }

    #[test]
    fn weighted_quantile_is_the_first_value_a_sorted_scan_reaches() {
        // SYNTHETIC items: values with ties, uneven weights summing to 1.
        let mut items: Vec<(f64, f64)> = (0..997u64)
            .map(|i| {
                let v = ((i * 7919) % 101) as f64 / 10.0;
                (v, 1.0 + (i % 5) as f64)
            })
            .collect();
        let total: f64 = items.iter().map(|&(_, w)| w).sum();
        items.iter_mut().for_each(|(_, w)| *w /= total);
        let mut sorted = items.clone();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
        for q in [0.0001, 0.05, 0.3, 0.5, 0.95, 0.9999] {
            let mut running = 0.0;
            let scanned = sorted
                .iter()
                .find(|&&(_, w)| {
                    running += w;
                    running >= q
                })
                .unwrap()
                .0;
            assert_eq!(weighted_quantile(&mut items.clone(), q), scanned, "q {q}");
        }
        // Rounding that leaves the total short of q: the largest value.
        assert_eq!(weighted_quantile(&mut items.clone(), 1.0 + 1e-9), 10.0);
        assert_eq!(weighted_quantile(&mut [(3.0, 1.0)], 0.5), 3.0);
    }
}
