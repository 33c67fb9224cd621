//! Analytical zero-shot projection: a source GPU's measurement of the same work,
//! scaled by roofline and occupancy ratios, with the source's efficiency assumed to
//! transfer to the target.
//!
//! - [`AnalyticalStudy`]: the reference study's Algorithm 1 as published:
//!   `T_t = T_s x (roof_t / roof_s) x (occ_s / occ_t)`, roof = max(FLOPs / compute,
//!   bytes / DRAM bandwidth), one source at a time (several sources: their mean).
//! - [`Analytical`]: our projection (see [`project`]): the launch floor is an additive
//!   term, the memory roof is the L2's when the working set fits in L2, contended
//!   atomics have their own roof, the share of time the roof does not explain scales
//!   with warp parallelism (resident warps x clock) and waves are quantized; several
//!   sources combine by a weighted geometric mean with weights from architectural
//!   similarity ([`similarity`]) to a power the fit chooses on the training GPUs
//!   ([`SIMILARITY_POWERS`]); the interval spans the sources and the memory levels
//!   (hierarchical roofline).

use super::interval::FittedInterval;
use super::similarity::similarity_at;
pub use super::similarity::{similarity, source_weight, SIMILARITY_POWERS};
use super::{Context, Evidence, Fit, HeldOutError, Interval, LaunchFloors, Predict, Prediction};
use crate::catalog::Gpu;
use crate::data::{Query, Run};
use crate::error::Result;
use crate::features::{run_features, work_features, Bound, Figures, RunFeatures, RunWork};

/// Share of a source's time always attributed to work (a run measured at its floor
/// still says something about its work).
const MIN_BUSY_FRACTION: f64 = 0.05;

/// The reference study's Algorithm 1.
#[derive(Debug, Clone, Copy, Default)]
pub struct AnalyticalStudy;

/// Our analytical projection (its parameters: there are none to choose).
#[derive(Debug, Clone, Copy, Default)]
pub struct Analytical;

/// Our analytical projection, fitted: only how it weighs its sources and its interval
/// are learned, from the projection's own errors on the training GPUs.
#[derive(Debug, Clone)]
pub struct FittedAnalytical {
    /// The interval of the projection's held-out errors on the training runs (each
    /// run projected from the other training GPUs only,
    /// [`super::interval::fit_interval`]); without a pooled one (too few errors) the
    /// interval is the sources' spread.
    pub interval: FittedInterval,
    /// The power of a source's similarity that is its weight
    /// (one of [`SIMILARITY_POWERS`], chosen on the training GPUs).
    pub similarity_power: i32,
    /// Where the target's launch floor comes from when the catalog measures none for
    /// it (the context's it was fitted in).
    pub launch_floors: LaunchFloors,
    /// The corpora ([`super::corpus`]) of the training runs, sorted: sources of
    /// another corpus take their interval from themselves (`bounds_log`).
    pub corpora: Vec<String>,
}

impl Default for FittedAnalytical {
    /// Fitted on nothing: sources weighted by their similarity, the sources' spread as
    /// the interval.
    fn default() -> Self {
        FittedAnalytical {
            interval: FittedInterval::default(),
            similarity_power: 1,
            launch_floors: LaunchFloors::Sources,
            corpora: Vec::new(),
        }
    }
}

/// Most training runs the analytical interval is calibrated on (an even, deterministic
/// subsample beyond it: quantiles at 5 % and 95 % need hundreds, not millions).
const MAX_INTERVAL_RUNS: usize = 4000;

/// A fit's own interval (its held-out errors: [`super::interval::fit_interval`]) and
/// the corpora it was fitted on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FittedBounds<'f> {
    pub interval: &'f FittedInterval,
    pub corpora: &'f [String],
}

/// The calibrated interval's bounds in log units for a prediction on `target`
/// (`launch_bound`: [`Combination::launch_bound`]).
///
/// A fit's held-out errors say how well it predicts GPUs of the corpora it was fitted
/// on. Sources of another corpus (a corpus held out, a user's own runs under a
/// pre-trained model) were timed by another harness on another mix of work, and how
/// predictable they are is their own: the interval is then calibrated on the sources
/// themselves, each of their GPUs projected from their other GPUs
/// ([`evidence_interval`]), as a fit on them would calibrate it. Nothing of the
/// target is read. Leave one corpus out, the fit's own interval covers 96.8 % of
/// benchmark_hub's runs and 91.2 % of the reference study's work-bound runs, the
/// sources' own 90.0 and 99.3 % (every corpus: the method's table in
/// `docs/method.md`). Sources of one GPU have no other to be projected from: the
/// fit's own interval then.
pub(crate) fn bounds_log(
    fitted: FittedBounds,
    launch_bound: bool,
    target: &str,
    evidence: &Evidence,
    ctx: &Context,
) -> Result<Option<(f64, f64)>> {
    let own = if evidence.has_corpus_beyond(fitted.corpora) {
        evidence.own_interval(ctx, || evidence_interval(evidence, ctx))?
    } else {
        None
    };
    own.as_deref()
        .unwrap_or(fitted.interval)
        .bounds_log(launch_bound, target, ctx)
}

/// The interval a fit on `evidence` would calibrate
/// ([`super::interval::fit_interval`]): each of its runs (at most
/// [`MAX_INTERVAL_RUNS`], an even subsample) projected from its other GPUs as `ctx`
/// projects, sources of the target's architecture preferred as this model prefers
/// them. None with too few such errors (sources of one GPU have none).
pub(crate) fn evidence_interval(
    evidence: &Evidence,
    ctx: &Context,
) -> Result<Option<FittedInterval>> {
    let runs: Vec<&Run> = evidence.indexed_runs().collect();
    let queries = super::learning_queries(&runs, MAX_INTERVAL_RUNS);
    let cand = Candidate {
        prefer_same_arch: true,
        power: ctx.similarity_power,
    };
    let errors = held_out_errors_by_candidate(&queries, evidence, ctx, &[cand])?.swap_remove(0);
    let fitted = super::interval::fit_interval(&errors, &evidence.gpus(), ctx)?;
    Ok(fitted.pooled_log.is_some().then_some(fitted))
}

/// How much more similar a source of the target's compute capability counts in the
/// analytical model's weights (before the power): e, as if the other sources' other
/// architecture were one more unit of distance. A kernel's efficiency transfers best
/// within an architecture (the same SM, the same compiled code); bandwidth, compute
/// and L2 differences, which the similarity also counts, are what the projection's
/// ratios model. Leave one corpus out the analytical model is 18.1 % pooled with it and
/// 19.1 % without (1 instead of e): the GEMM tables 13.1 and 14.8 %, the paper's caches
/// 24.9 and 26.3 %, no corpus better without. Where no source has the target's compute
/// capability (the reference study's GPUs) nothing changes, to the bit: the other
/// sources keep their weights.
pub const SAME_ARCH_SIMILARITY: f64 = std::f64::consts::E;

/// A source's similarity as weights use it: times [`SAME_ARCH_SIMILARITY`] when the
/// same architecture is preferred and the source has the target's compute capability.
pub fn weighted_similarity(similarity: f64, same_arch: bool, prefer_same_arch: bool) -> f64 {
    if prefer_same_arch && same_arch {
        similarity * SAME_ARCH_SIMILARITY
    } else {
        similarity
    }
}

/// A source's weight in a combination that prefers (or not) sources of the target's
/// compute capability and raises similarity to `power`.
pub fn weight_of(similarity: f64, same_arch: bool, prefer_same_arch: bool, power: i32) -> f64 {
    source_weight(
        weighted_similarity(similarity, same_arch, prefer_same_arch),
        power,
    )
}

/// What a fit summary says of the launch floors a fit projects with.
pub fn floors_text(launch_floors: LaunchFloors) -> &'static str {
    match launch_floors {
        LaunchFloors::Sources => ", the target on each source's launch floor",
        LaunchFloors::Catalog => ", the target on the catalog's launch floor",
    }
}

/// The candidate projections a fit chooses among, in order: each of `weightings`
/// (whether sources of the target's compute capability are preferred,
/// [`weighted_similarity`]), with each power of [`SIMILARITY_POWERS`] (the first, the
/// first weighting with power 1, is the base the others must beat).
fn candidates(weightings: &[bool]) -> impl Iterator<Item = Candidate> + '_ {
    weightings.iter().flat_map(move |&prefer_same_arch| {
        SIMILARITY_POWERS.into_iter().map(move |power| Candidate {
            prefer_same_arch,
            power,
        })
    })
}

/// How a fit may weigh its sources.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    pub prefer_same_arch: bool,
    pub power: i32,
}

/// Held-out errors ln(measured / projected) of training runs (`queries`: at most
/// [`MAX_INTERVAL_RUNS`] of them), with their GPUs, for each of `cands` (in order):
/// each run projected from the same work on the other GPUs of `evidence` (its own
/// GPU's rows are never a source), the same runs for every candidate; `gpu` indexes
/// `evidence.gpus()`.
fn held_out_errors_by_candidate(
    queries: &[&Run],
    evidence: &Evidence,
    ctx: &Context,
    cands: &[Candidate],
) -> Result<Vec<Vec<HeldOutError>>> {
    let gpus = evidence.gpus();
    let mut errors = vec![Vec::new(); cands.len()];
    for &t in queries {
        let q = crate::data::Query::of(t);
        if evidence.same_work(&q, &q.gpu).is_empty() {
            continue; // a size projection on the GPU itself: not what the interval is for
        }
        let gpu = gpus.binary_search(&t.gpu.as_str()).unwrap_or(0);
        // (projected once; each candidate only weighs them differently)
        let ps = projections(&q, evidence, &ctx.with_similarity_power(1))?;
        for (errors, c) in errors.iter_mut().zip(cands) {
            let mut combination = Combination::default();
            for (_, p) in &ps {
                combination.add_weighted(
                    p,
                    weight_of(p.similarity, p.same_arch, c.prefer_same_arch, c.power),
                );
            }
            if let Some(p) = combination.prediction() {
                errors.push(HeldOutError {
                    gpu,
                    ln_error: (t.time_ms / p.pred_ms).ln(),
                    launch_bound: combination.launch_bound(),
                });
            }
        }
    }
    Ok(errors)
}

/// The power of [`SIMILARITY_POWERS`] a fit weighs sources with, and the held-out
/// errors ([`held_out_errors_by_candidate`]) with it: of the base (power 1) and the
/// candidates that lower the training GPUs' held-out errors clearly, counted per GPU
/// ([`super::clearly_lower_per_gpu`]), and make none of them more than
/// [`super::MAX_HARM`] worse than the base, the one with the lowest mean error. The
/// guard is what keeps power 1 on Kernel Tuner's convolution: power 4 lowers its
/// held-out mean but makes one training GPU 8-16 points worse.
pub(crate) fn choose_similarity_power(train: &[&Run], ctx: &Context) -> Result<PowerChoice> {
    // Only the queried works are indexed (their sources are all a projection reads).
    let queries = super::learning_queries(train, MAX_INTERVAL_RUNS);
    let works: rustc_hash::FxHashSet<(&str, &str)> = queries.iter().map(|r| r.work_key()).collect();
    let evidence = Evidence::new_for(train.iter().copied(), |r| works.contains(&r.work_key()));
    // (as the fitted model projects: `FittedAnalytical::projecting`)
    let cands: Vec<Candidate> = candidates(&[true]).collect();
    let by_candidate = held_out_errors_by_candidate(&queries, &evidence, ctx, &cands)?;
    Ok(chosen(by_candidate, &evidence, &cands))
}

/// The hybrid's [`choose_similarity_power`], with `evidence` an index of `train`
/// already made (all of it, or at least its queried works: the same errors either
/// way): the power, sources weighted by their similarity alone (see
/// `HybridState::analytical_share` for why); and how the analytical fit on the same
/// runs would weigh them (the same held-out errors).
pub(crate) fn choose_similarity_power_in(
    train: &[&Run],
    evidence: &Evidence,
    ctx: &Context,
) -> Result<(PowerChoice, Candidate)> {
    let queries = super::learning_queries(train, MAX_INTERVAL_RUNS);
    let all: Vec<Candidate> = candidates(&[true, false]).collect();
    let by_candidate = held_out_errors_by_candidate(&queries, evidence, ctx, &all)?;
    // The analytical fit's candidates (same-architecture sources preferred) and the
    // hybrid's (by similarity alone).
    let subset = |keep: &dyn Fn(&Candidate) -> bool| {
        let picked: Vec<usize> = (0..all.len()).filter(|&i| keep(&all[i])).collect();
        let cands: Vec<Candidate> = picked.iter().map(|&i| all[i]).collect();
        let errors: Vec<Vec<HeldOutError>> =
            picked.iter().map(|&i| by_candidate[i].clone()).collect();
        (errors, cands)
    };
    let (errors, cands) = subset(&|c| c.prefer_same_arch);
    let analytical = chosen(errors, evidence, &cands);
    let (errors, cands) = subset(&|c| !c.prefer_same_arch);
    let choice = chosen(errors, evidence, &cands);
    Ok((
        choice,
        Candidate {
            prefer_same_arch: true,
            power: analytical.power,
        },
    ))
}

/// The [`PowerChoice`] of [`chosen_candidate`] among the held-out errors of each of
/// `cands` (in order, the first the base).
fn chosen(
    mut by_candidate: Vec<Vec<HeldOutError>>,
    evidence: &Evidence,
    cands: &[Candidate],
) -> PowerChoice {
    let best = chosen_candidate(&by_candidate);
    let c = cands.get(best).copied().unwrap_or(Candidate {
        prefer_same_arch: false,
        power: 1,
    });
    PowerChoice {
        power: c.power,
        held_out: by_candidate.swap_remove(best),
        gpus: evidence.gpus().into_iter().map(str::to_string).collect(),
    }
}

/// The power [`choose_similarity_power`] chose and the held-out errors with it.
pub(crate) struct PowerChoice {
    pub power: i32,
    /// `gpu` indexes `gpus`.
    pub held_out: Vec<HeldOutError>,
    pub gpus: Vec<String>,
}

/// [`choose_similarity_power`]'s rule on the held-out errors of each candidate (the
/// first the base): the index of the candidate chosen ([`super::HeldOutChoice`], the
/// gain counted per GPU).
fn chosen_candidate(by_candidate: &[Vec<HeldOutError>]) -> usize {
    let ape = |e: &HeldOutError| ((-e.ln_error).exp() - 1.0).abs();
    let n_gpus = by_candidate
        .iter()
        .flatten()
        .map(|e| e.gpu + 1)
        .max()
        .unwrap_or(0);
    // (every candidate weighs the same projections of the same runs: run i is the
    // i-th error of each)
    let base = &by_candidate[0];
    let runs: Vec<usize> = (0..base.len()).collect();
    super::HeldOutChoice::judge(
        &runs,
        by_candidate.len(),
        n_gpus,
        |&i| base[i].gpu,
        |k, &i| ape(&by_candidate[k][i]),
        super::GainEvidence {
            per_run: false,
            per_gpu: true,
        },
        |_| true,
    )
    .lowest()
}

/// Every term of one source -> target projection (what `gpucast explain` prints).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Projection {
    pub source_ms: f64,
    pub source: RunFeatures,
    pub target: RunFeatures,
    /// Source time above its launch floor.
    pub busy_source_ms: f64,
    pub roof_ratio: f64,
    /// Share of the busy time the roof explains (eta).
    pub roof_share: f64,
    /// Time ratio of the latency-bound share (warp parallelism per grid warp).
    pub latency_ratio: f64,
    /// The study's occupancy ratio (reported; our blend uses warp parallelism instead).
    pub occupancy_ratio: f64,
    pub wave_ratio: f64,
    /// Source efficiency: roof / (occupancy x measured), the study's eq. 5-11.
    pub efficiency: f64,
    pub pred_ms: f64,
    /// The same projection with the target's memory roof at DRAM and at L2.
    pub pred_dram_ms: f64,
    pub pred_l2_ms: f64,
    /// The source GPU's similarity to the target ([`similarity`]).
    pub similarity: f64,
    /// Whether the source GPU has the target's compute capability.
    pub same_arch: bool,
    /// Whether the source run is launch-bound: measured below
    /// [`super::LAUNCH_BOUND_FLOOR_FACTOR`] times its harness's floor on its GPU (what that
    /// time says is mostly the harness). Picks the interval's regime.
    pub source_launch_bound: bool,
    /// Its weight in a combination: the similarity (e times it for a source of the
    /// target's compute capability where the context prefers those) to the context's
    /// power ([`weight_of`]).
    pub weight: f64,
}

/// The roof with the memory traffic served at `level` (DRAM or L2): the two ends of
/// the working-set guess. A run with profiled traffic at every level has no guess to
/// make: its hierarchical roof is the one roof.
fn memory_roof(f: &RunFeatures, level: Bound) -> f64 {
    if f.hierarchical {
        return f.roof_ms;
    }
    let mem = if level == Bound::L2 {
        f.l2_ms
    } else {
        f.dram_ms
    };
    mem.max(f.compute_ms).max(f.atomic_ms)
}

/// Project one source run onto the target GPU.
///
/// The source's busy time (measured minus its launch floor) is split by its
/// efficiency at the binding roof, eta = roof / busy (clamped to [0, 1]): the part the
/// roof explains scales with the roof ratio, the rest — latency the roof does not
/// explain — with work over warp parallelism (resident warps x clock).
/// Geometrically: ratio = roof_ratio^eta x latency_ratio^(1 - eta). Across GPUs the
/// work is described by the source run (the same work; the target's own row is never
/// read); across sizes on one GPU by the query.
pub fn project(
    src: &Run,
    query: &Query,
    gs: &Gpu,
    gt: &Gpu,
    ctx: &Context,
    evidence: &Evidence,
) -> Result<Projection> {
    let src_work = RunWork::of(src, ctx.catalog, ctx.resources);
    let same_work = src.kernel == query.kernel && src.config == query.config;
    let work = (!same_work).then(|| RunWork::of(query, ctx.catalog, ctx.resources));
    project_with(
        src.time_ms,
        src_work,
        work,
        gs,
        gt,
        evidence.floor_ms(src),
        &ctx.figures(gt)?,
        ctx,
        &mut None,
    )
}

/// [`project`] from the source's time and work, with the projected work (`work`: None
/// across GPUs, where it is the source's own; the query's across sizes), the fastest
/// run of the source's GPU and harness (its launch floor, see [`source_features`])
/// and the target's figures given, reusing the target's features in `target` when the
/// projected work is described as the last time (the sources of one work usually
/// describe it alike: computing them once per prediction rather than per source is
/// what [`projections`] gains).
#[allow(clippy::too_many_arguments)]
fn project_with<'r>(
    src_time_ms: f64,
    src_work: RunWork<'r>,
    work: Option<RunWork<'r>>,
    gs: &Gpu,
    gt: &Gpu,
    src_fastest_ms: Option<f64>,
    ft_figs: &Figures,
    ctx: &Context,
    target: &mut Option<(RunWork<'r>, RunFeatures)>,
) -> Result<Projection> {
    let fs = source_features(&src_work, gs, src_fastest_ms, ctx)?;
    let work = work.unwrap_or(src_work);
    let ft = match target {
        Some((d, f)) if *d == work => f.clone(),
        _ => {
            let f = work_features(&work, gt, ft_figs, ctx.catalog, ctx.resources);
            *target = Some((work, f.clone()));
            f
        }
    };
    let work_ratio = ratio(work.amount(), src_work.amount());
    let mut p = project_features(src_time_ms, work_ratio, gs, gt, fs, ft, ctx);
    p.source_launch_bound = super::launch_bound(src_time_ms, src_fastest_ms);
    Ok(p)
}

/// ln(x^power), with x^0 = 1 for every x as [`f64::powf`] has it.
fn log_power(x: f64, power: f64) -> f64 {
    if power == 0.0 {
        0.0
    } else {
        power * x.ln()
    }
}

/// a / b, or 1 (no change) unless both are positive.
fn ratio(a: f64, b: f64) -> f64 {
    if a > 0.0 && b > 0.0 {
        a / b
    } else {
        1.0
    }
}

/// The source's features on its own GPU, with its launch floor from the fastest run
/// of its GPU and harness (`fastest_ms`, [`Evidence::floor_ms`]) when the catalog has
/// no measured one (if that run is short enough to be a launch floor at all).
fn source_features(
    src_work: &RunWork,
    gs: &Gpu,
    fastest_ms: Option<f64>,
    ctx: &Context,
) -> Result<RunFeatures> {
    let mut figs = ctx.figures(gs)?;
    if gs.launch_overhead_us.is_none() {
        if let Some(f) = super::harness_floor_ms(fastest_ms) {
            figs.launch_ms = f;
        }
    }
    Ok(work_features(
        src_work,
        gs,
        &figs,
        ctx.catalog,
        ctx.resources,
    ))
}

/// The target's launch floor in a projection from a source with features `fs` to
/// `gt` (the projected work's features there `ft`, with the catalog's floor): the
/// source's with [`LaunchFloors::Sources`] where the catalog measures none for the
/// target, else the catalog's.
fn target_launch_floor_ms(
    floors: LaunchFloors,
    gt: &Gpu,
    fs: &RunFeatures,
    ft: &RunFeatures,
) -> f64 {
    if floors == LaunchFloors::Sources && gt.launch_overhead_us.is_none() {
        fs.launch_floor_ms
    } else {
        ft.launch_floor_ms
    }
}

/// How a projection splits a source's busy time between its roof and latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoofBasis {
    /// The roof explains the share eta = roof / busy; the rest scales with the latency
    /// ratio (work over warp parallelism, or the clock ratio without a launch).
    Blend,
    /// Compute-bound work without launch geometry (a library call timed by its sizes:
    /// GEMM latency tables, PyTorch operators): all of it scales with the compute
    /// roof. Without a grid the latency ratio can only be the clock ratio, which says
    /// nothing of the SMs a library kernel fills; the library picks a kernel that
    /// fills the GPU for a compute-bound shape, so its time follows the compute roof.
    RoofOnly,
}

/// The [`RoofBasis`] of a projection from a source with features `fs`.
pub fn roof_basis(fs: &RunFeatures) -> RoofBasis {
    if fs.bound == Bound::Compute && fs.grid_warps.is_none() {
        RoofBasis::RoofOnly
    } else {
        RoofBasis::Blend
    }
}

/// [`project`] from the source's time and features `fs` on `gs`, the projected work's
/// `ft` on `gt` and the ratio of the projected work's amount to the source's. With
/// [`LaunchFloors::Sources`] the target sits on the source's launch floor where the
/// catalog measures none for it.
fn project_features(
    src_time_ms: f64,
    work_ratio: f64,
    gs: &Gpu,
    gt: &Gpu,
    fs: RunFeatures,
    mut ft: RunFeatures,
    ctx: &Context,
) -> Projection {
    ft.launch_floor_ms = target_launch_floor_ms(ctx.launch_floors, gt, &fs, &ft);
    let busy = (src_time_ms - fs.launch_floor_ms).max(MIN_BUSY_FRACTION * src_time_ms);
    // Latency-bound time ~ work / parallelism (per-thread work grows with the problem
    // in e.g. a matmul, so the work, not the warp count, is what scales).
    let latency_ratio = match (fs.parallelism, ft.parallelism) {
        (Some(ps), Some(pt)) => work_ratio * ps / pt,
        _ => work_ratio * gs.boost_clock_mhz / gt.boost_clock_mhz,
    };
    let eta = match roof_basis(&fs) {
        RoofBasis::RoofOnly => 1.0,
        RoofBasis::Blend if fs.roof_ms > 0.0 => (fs.roof_ms / busy).clamp(0.0, 1.0),
        RoofBasis::Blend => 0.0,
    };
    let roof_ratio = if fs.roof_ms > 0.0 && ft.roof_ms > 0.0 {
        ft.roof_ms / fs.roof_ms
    } else {
        latency_ratio
    };
    let occ = |f: &RunFeatures| f.occupancy.map(|o| o.occupancy).unwrap_or(0.0);
    let occupancy_ratio = ratio(occ(&fs), occ(&ft));
    let tail = |f: &RunFeatures| f.tail_efficiency.unwrap_or(1.0);
    let wave_ratio = ratio(tail(&fs), tail(&ft));
    // roof^eta * latency^(1 - eta), as one exp of logs: the powers were the costliest
    // step of a projection (two powf, a quarter of analytical predict's time).
    let ln_latency_term = log_power(latency_ratio, 1.0 - eta);
    let blend = |roof: f64| (log_power(roof, eta) + ln_latency_term).exp() * wave_ratio;
    let pred = ft.launch_floor_ms + busy * blend(roof_ratio);
    let level_pred = |level: Bound| {
        let r = if fs.roof_ms > 0.0 {
            ratio(memory_roof(&ft, level), fs.roof_ms)
        } else {
            roof_ratio
        };
        if r == roof_ratio {
            pred
        } else {
            ft.launch_floor_ms + busy * blend(r)
        }
    };
    let distances = ctx.catalog.distances(gs, gt);
    // ("other_cc", the first distance: 0 for the same compute capability)
    let same_arch = distances[0] == 0.0;
    let similarity_to_target = similarity_at(&distances);
    Projection {
        source_ms: src_time_ms,
        efficiency: crate::features::efficiency(fs.roof_ms, occ(&fs).max(1e-9), src_time_ms),
        roof_share: eta,
        latency_ratio,
        busy_source_ms: busy,
        roof_ratio,
        occupancy_ratio,
        wave_ratio,
        pred_ms: pred,
        pred_dram_ms: level_pred(Bound::Dram),
        pred_l2_ms: level_pred(Bound::L2),
        similarity: similarity_to_target,
        same_arch,
        source_launch_bound: false,
        weight: weight_of(
            similarity_to_target,
            same_arch,
            ctx.prefer_same_arch,
            ctx.similarity_power,
        ),
        source: fs,
        target: ft,
    }
}

/// The sources our projection uses for `query`: the same work on other GPUs, or (for a
/// configuration never measured elsewhere) the nearest size of the same kernel on the
/// target itself, scaled by the roof ratio of the two sizes.
pub fn sources<'a>(query: &Query, evidence: &Evidence<'a>) -> Vec<&'a Run> {
    let same = evidence.same_work(query, &query.gpu);
    if !same.is_empty() {
        return same;
    }
    evidence
        .nearest_size(&query.gpu, query)
        .into_iter()
        .collect()
}

/// Most runs of a kernel [`kernel_log_ratio`] projects (an even subsample beyond it).
const MAX_KERNEL_RATIO_RUNS: usize = 256;

/// The typical projection ratio of `src`'s kernel from its GPU to `target`: the median
/// of ln(projected / measured) over that GPU's runs of the kernel (at most
/// `MAX_KERNEL_RATIO_RUNS` = 256, evenly spaced), each projected as the same work on the
/// target. Reads no run of the target. Computed once per (kernel, GPUs) and evidence.
/// NaN when no run projects to a finite ratio (then nothing moves).
pub fn kernel_log_ratio<'a>(
    src: &'a Run,
    target: &str,
    evidence: &Evidence<'a>,
    ctx: &Context,
) -> Result<f64> {
    evidence.kernel_ratio((&src.kernel, &src.gpu, target), ctx, || {
        let (gs, gt) = (ctx.gpu(&src.gpu)?, ctx.gpu(target)?);
        let runs = evidence.kernel_runs_on(&src.gpu, &src.kernel);
        let stride = runs.len().div_ceil(MAX_KERNEL_RATIO_RUNS).max(1);
        let mut logs = Vec::with_capacity(runs.len() / stride + 1);
        for r in runs.iter().step_by(stride) {
            let q = crate::data::Query::on(r, target);
            let p = project(r, &q, gs, gt, ctx, evidence)?;
            logs.push((p.pred_ms / r.time_ms).ln());
        }
        logs.retain(|x| x.is_finite());
        logs.sort_by(f64::total_cmp);
        Ok(logs.get(logs.len() / 2).copied().unwrap_or(f64::NAN))
    })
}

/// Each source's log shift from its own projection ratio to its kernel's typical one
/// ([`kernel_log_ratio`]): kernel ratio - own ratio, 0 for a size projection on the
/// target itself or a ratio that is not finite. A share of it moves each projection
/// (the hybrid's [`super::stages::KernelRatio`]).
pub fn kernel_ratio_shift<'a>(
    query: &Query,
    ps: &[(&'a Run, Projection)],
    evidence: &Evidence<'a>,
    ctx: &Context,
) -> Result<Vec<f64>> {
    ps.iter()
        .map(|(src, p)| {
            if src.gpu == query.gpu || src.time_ms <= 0.0 || p.pred_ms <= 0.0 {
                return Ok(0.0); // a size projection on the target: its own kernel
            }
            let typical = kernel_log_ratio(src, &query.gpu, evidence, ctx)?;
            let shift = typical - (p.pred_ms / src.time_ms).ln();
            Ok(if shift.is_finite() { shift } else { 0.0 })
        })
        .collect()
}

/// The combined prediction (ms) of `query` as `ctx` projects, from its projections `ps`
/// made with the target on `floors`: where those are `ctx`'s, only the weights can
/// differ, and `ps` are weighed again (as [`project`] weighs) instead of projected
/// anew; else projected with `ctx`.
pub fn combined_ms_as<'a>(
    query: &Query,
    ps: &[(&'a Run, Projection)],
    floors: LaunchFloors,
    evidence: &Evidence<'a>,
    ctx: &Context,
) -> Result<Option<f64>> {
    let mut c = Combination::default();
    if floors == ctx.launch_floors {
        for (_, p) in ps {
            let w = weight_of(
                p.similarity,
                p.same_arch,
                ctx.prefer_same_arch,
                ctx.similarity_power,
            );
            c.add_weighted(p, w);
        }
    } else {
        for (_, p) in &projections(query, evidence, ctx)? {
            c.add(p);
        }
    }
    Ok(c.prediction().map(|p| p.pred_ms))
}

/// Whether one of `ps` (projections onto `target`) comes from another GPU of the
/// target's compute capability: the case the hybrid's analytical share is chosen for
/// and applied in.
pub fn has_same_arch_source(ps: &[(&Run, Projection)], target: &str) -> bool {
    ps.iter().any(|(s, p)| s.gpu != target && p.same_arch)
}

/// All projections of `query`, each with its source run (the sources of [`sources`]).
pub fn projections<'a>(
    query: &Query,
    evidence: &Evidence<'a>,
    ctx: &Context,
) -> Result<Vec<(&'a Run, Projection)>> {
    let same = work_projections(&query.kernel, &query.config, &query.gpu, evidence, ctx)?;
    if !same.is_empty() {
        return Ok(same);
    }
    size_projection(query, evidence, ctx)
}

/// The projections of the work named `kernel`, `config` from the other GPUs that
/// measured it onto `target` (empty when none did). Reads only the names: no query
/// run is needed (see [`FittedAnalytical::predict_work`]).
fn work_projections<'a>(
    kernel: &str,
    config: &str,
    target: &str,
    evidence: &Evidence<'a>,
    ctx: &Context,
) -> Result<Vec<(&'a Run, Projection)>> {
    // A loop into a sized vector: a projection is ~500 bytes, and collecting through
    // `Result` adapters moved each one several times.
    let mut out = Vec::with_capacity(evidence.gpus_count());
    for_each_work_projection(kernel, config, target, evidence, ctx, |s, p| {
        out.push((s, p))
    })?;
    Ok(out)
}

/// Each projection of [`work_projections`] given to `sink` as it is made.
fn for_each_work_projection<'a>(
    kernel: &str,
    config: &str,
    target: &str,
    evidence: &Evidence<'a>,
    ctx: &Context,
    mut sink: impl FnMut(&'a Run, Projection),
) -> Result<()> {
    let Some(same) = evidence.work_sources(kernel, config, target) else {
        return Ok(());
    };
    let gt = ctx.gpu(target)?;
    let ft_figs = ctx.figures(gt)?;
    let mut target_features = None;
    for s in same {
        let gs = evidence.source_gpu(s.gpu, ctx)?;
        // (the kernel name: the work's, read once per prediction)
        let src_work = s.numbers.work(kernel, s.run, ctx.catalog, ctx.resources);
        let p = project_with(
            s.time_ms,
            src_work,
            None,
            gs,
            gt,
            Some(evidence.source_floor_ms(s)),
            &ft_figs,
            ctx,
            &mut target_features,
        )?;
        sink(s.run, p);
    }
    Ok(())
}

/// A configuration never measured on another GPU: the projection from the nearest size
/// of the same kernel on the target itself (none when there is none).
fn size_projection<'a>(
    query: &Query,
    evidence: &Evidence<'a>,
    ctx: &Context,
) -> Result<Vec<(&'a Run, Projection)>> {
    let Some(s) = evidence.nearest_size(&query.gpu, query) else {
        return Ok(Vec::new());
    };
    let gt = ctx.gpu(&query.gpu)?;
    let src_work = RunWork::of(s, ctx.catalog, ctx.resources);
    let work = RunWork::of(query, ctx.catalog, ctx.resources);
    let gs = ctx.gpu(&s.gpu)?;
    let p = project_with(
        s.time_ms,
        src_work,
        Some(work),
        gs,
        gt,
        evidence.floor_ms(s),
        &ctx.figures(gt)?,
        ctx,
        &mut None,
    )?;
    Ok(vec![(s, p)])
}

/// Combine projections: weighted geometric mean; interval over sources and levels
/// (see [`Combination`]).
pub fn combine<'p>(ps: impl IntoIterator<Item = &'p Projection>) -> Option<Prediction> {
    Combination::of(ps).prediction()
}

/// Similarity to the target of a source GPU of nearly the same chip (the B200, GB200,
/// B300 and GB300 are 0.83-0.94 apart; the H100 and H200 0.67). With such a source the
/// spread that bounds every interval counts only the sources at least
/// [`TWIN_SPREAD_SIMILARITY`] similar: how far an L40S or an A100 source projects a
/// B200 (similarity 0.06, 0.03) says how unlike a B200 they are, not how uncertain a
/// prediction from its twins is. Predictions do not change, only intervals, and only
/// where a twin is a source: the GEMM tables' Blackwell GPUs, whose intervals cover
/// 93.5-97.7 % of their runs leave one GPU out with this and 96.1-99.3 % without; leave
/// one corpus out that corpus is covered 91.7 % with it, 92.1 % without, every other
/// corpus the same. Without a twin every source's spread counts: there far sources that
/// disagree mark a hard target (leaving sources of weight below 0.1 out of the spread
/// everywhere halves the coverage of Kernel Tuner GEMM's K20m). A threshold of 0.6
/// (the H100 and H200 too) narrows other corpora's intervals as well: the reference
/// study with the Hopper GPUs is covered 90.7 % with it, 93.2 % with 0.8.
pub const TWIN_SIMILARITY: f64 = 0.8;
/// See [`TWIN_SIMILARITY`]: half of it (0.5 and 0.7 x the most similar source's
/// similarity gave the same coverage on every corpus).
pub const TWIN_SPREAD_SIMILARITY: f64 = 0.4;

/// Projections combined as they are made, without keeping them (what a prediction
/// needs of each: folding them in rather than collecting ~500-byte projections into a
/// vector made `gpucast bench`'s analytical predictions 10 % faster at 100k rows x 8
/// GPUs, alternating runs of both builds): the weighted geometric mean of the
/// predictions, the spread of the sources' predictions at each memory level (every
/// source's, or with a twin of the target only the near ones': [`TWIN_SIMILARITY`]),
/// the limiting roof of the most similar source (the last of equals) and the target's
/// peak floor, below which nothing goes.
#[derive(Debug, Clone, Copy)]
pub struct Combination {
    count: usize,
    best_weight: f64,
    bound: Bound,
    weight_sum: f64,
    weighted_log_sum: f64,
    lo_ms: f64,
    hi_ms: f64,
    /// A source at least [`TWIN_SIMILARITY`] similar to the target was added, and the
    /// spread of the sources at least [`TWIN_SPREAD_SIMILARITY`] similar.
    twin: bool,
    near_lo_ms: f64,
    near_hi_ms: f64,
    floor_ms: f64,
    /// Weight of the launch-bound sources ([`Projection::source_launch_bound`]).
    launch_weight: f64,
}

impl Default for Combination {
    fn default() -> Self {
        Combination {
            count: 0,
            best_weight: f64::NEG_INFINITY,
            bound: Bound::Dram,
            weight_sum: 0.0,
            weighted_log_sum: 0.0,
            lo_ms: f64::INFINITY,
            hi_ms: 0.0,
            twin: false,
            near_lo_ms: f64::INFINITY,
            near_hi_ms: 0.0,
            floor_ms: 0.0,
            launch_weight: 0.0,
        }
    }
}

impl Combination {
    /// The projections `ps` folded in, in order.
    pub fn of<'p>(ps: impl IntoIterator<Item = &'p Projection>) -> Combination {
        let mut c = Combination::default();
        for p in ps {
            c.add(p);
        }
        c
    }

    /// Fold in one projection (in source order: of equally similar sources, the last
    /// one's bound is kept, as `Iterator::max_by` would).
    pub fn add(&mut self, p: &Projection) {
        self.add_weighted(p, p.weight);
    }

    /// [`Combination::add`] with `weight` for the projection's own.
    pub fn add_weighted(&mut self, p: &Projection, weight: f64) {
        if self.count == 0 || weight.total_cmp(&self.best_weight).is_ge() {
            self.best_weight = weight;
            self.bound = p.target.limiting();
        }
        self.count += 1;
        self.weight_sum += weight;
        self.weighted_log_sum += weight * p.pred_ms.ln();
        let lo = p.pred_ms.min(p.pred_dram_ms).min(p.pred_l2_ms);
        let hi = p.pred_ms.max(p.pred_dram_ms).max(p.pred_l2_ms);
        self.lo_ms = self.lo_ms.min(lo);
        self.hi_ms = self.hi_ms.max(hi);
        if p.similarity >= TWIN_SPREAD_SIMILARITY {
            self.twin |= p.similarity >= TWIN_SIMILARITY;
            self.near_lo_ms = self.near_lo_ms.min(lo);
            self.near_hi_ms = self.near_hi_ms.max(hi);
        }
        self.floor_ms = self.floor_ms.max(p.target.peak_floor_ms);
        if p.source_launch_bound {
            self.launch_weight += weight;
        }
    }

    /// Whether the prediction is in the launch-bound regime: at least half its sources'
    /// weight is launch-bound. The interval has its own quantiles there
    /// ([`FittedInterval::launch_log`]): a launch-bound time is mostly
    /// the harness, which the projection knows least about.
    pub fn launch_bound(&self) -> bool {
        self.launch_weight > 0.0 && self.launch_weight >= 0.5 * self.weight_sum
    }

    /// No projection added yet.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The shortest time the target's peaks allow for the projected work (the largest
    /// [`RunFeatures::peak_floor_ms`]): no prediction or bound goes below it.
    pub fn floor_ms(&self) -> f64 {
        self.floor_ms
    }

    /// The combined prediction; None with no projection.
    pub fn prediction(&self) -> Option<Prediction> {
        if self.count == 0 {
            return None;
        }
        let pred = (self.weighted_log_sum / self.weight_sum).exp();
        let (lo_ms, hi_ms) = if self.twin {
            (self.near_lo_ms, self.near_hi_ms)
        } else {
            (self.lo_ms, self.hi_ms)
        };
        Some(
            Prediction {
                pred_ms: pred,
                lo_ms: lo_ms.min(pred),
                hi_ms: hi_ms.max(pred),
                interval: Interval::Spread,
                bound: self.bound,
            }
            .at_least(self.floor_ms),
        )
    }
}

impl Fit for Analytical {
    fn name(&self) -> String {
        "analytical".into()
    }
    fn fit(&self, train: &[&Run], ctx: &Context) -> Result<Box<dyn Predict>> {
        Ok(Box::new(self.fit_analytical(train, ctx)?))
    }
}

impl Analytical {
    /// Fit, keeping the concrete type (what `explain` shows the terms of).
    pub fn fit_analytical(&self, train: &[&Run], ctx: &Context) -> Result<FittedAnalytical> {
        let choice = choose_similarity_power(train, ctx)?;
        let gpus: Vec<&str> = choice.gpus.iter().map(String::as_str).collect();
        let interval = super::interval::fit_interval(&choice.held_out, &gpus, ctx)?;
        Ok(FittedAnalytical {
            interval,
            similarity_power: choice.power,
            launch_floors: ctx.launch_floors,
            corpora: super::corpora_of(train),
        })
    }
}

impl FittedAnalytical {
    /// `query`'s projections (each with its source run), its sources weighted as this
    /// model weighs them.
    pub fn projections<'a>(
        &self,
        query: &Query,
        evidence: &Evidence<'a>,
        ctx: &Context,
    ) -> Result<Vec<(&'a Run, Projection)>> {
        projections(query, evidence, &self.projecting(ctx))
    }

    /// `ctx` projecting as this fit chose: its power, its launch floors.
    pub fn projecting<'c>(&self, ctx: &Context<'c>) -> Context<'c> {
        ctx.with_similarity_power(self.similarity_power)
            .with_launch_floors(self.launch_floors)
            .with_prefer_same_arch(true)
    }

    /// The projections (each with its source run) of a run on `target` combined, with
    /// the calibrated interval where there is one (never narrower than the sources'
    /// spread, never below the target's peaks).
    pub fn combined(
        &self,
        ps: &[(&Run, Projection)],
        target: &str,
        evidence: &Evidence,
        ctx: &Context,
    ) -> Result<Option<Prediction>> {
        self.calibrated(
            &Combination::of(ps.iter().map(|(_, p)| p)),
            target,
            evidence,
            ctx,
        )
    }

    /// The combination with the calibrated interval where there is one.
    fn calibrated(
        &self,
        c: &Combination,
        target: &str,
        evidence: &Evidence,
        ctx: &Context,
    ) -> Result<Option<Prediction>> {
        let Some(p) = c.prediction() else {
            return Ok(None);
        };
        let bounds = bounds_log(
            FittedBounds {
                interval: &self.interval,
                corpora: &self.corpora,
            },
            c.launch_bound(),
            target,
            evidence,
            ctx,
        )?;
        Ok(Some(
            p.calibrated(bounds, c.launch_bound())
                .at_least(c.floor_ms()),
        ))
    }
}

impl Predict for FittedAnalytical {
    fn name(&self) -> String {
        "analytical".into()
    }
    fn fit_summary(&self) -> Option<String> {
        Some(format!(
            "sources weighted by their similarity to the power {}, those of the target's architecture as if e times as similar{} (chosen by leave-one-GPU-out inside the training GPUs){}",
            self.similarity_power,
            floors_text(self.launch_floors),
            self.interval.describe(),
        ))
    }
    fn predict(
        &self,
        query: &Query,
        evidence: &Evidence,
        ctx: &Context,
    ) -> Result<Option<Prediction>> {
        self.combined(
            &self.projections(query, evidence, ctx)?,
            &query.gpu,
            evidence,
            ctx,
        )
    }
    /// [`Predict::predict`] without copying `work` into a query while another GPU
    /// measured it (the copy is only made for a size projection on the target): the
    /// copy read each run's fields and strings from wherever they were on the heap,
    /// a quarter of `gpucast bench`'s analytical predictions (0.1 s of 0.39 s at 100k
    /// rows x 8 GPUs).
    fn predict_work(
        &self,
        work: &Run,
        target: &str,
        buffer: &mut Query,
        evidence: &Evidence,
        ctx: &Context,
    ) -> Result<Option<Prediction>> {
        let ctx = &self.projecting(ctx);
        let mut c = Combination::default();
        for_each_work_projection(&work.kernel, &work.config, target, evidence, ctx, |_, p| {
            c.add(&p)
        })?;
        if !c.is_empty() {
            return self.calibrated(&c, target, evidence, ctx);
        }
        buffer.set(work, target);
        self.combined(
            &size_projection(buffer, evidence, ctx)?,
            target,
            evidence,
            ctx,
        )
    }
}

/// Algorithm 1 of the study for one source run.
pub fn project_study(src: &Run, query: &Query, gs: &Gpu, gt: &Gpu, ctx: &Context) -> Result<f64> {
    let (fs, ft) = (ctx.figures(gs)?, ctx.figures(gt)?);
    let roof = |r: &Run, g: &Gpu, f: &Figures| {
        crate::features::roofline::compute_time_ms(r.flops, f.compute_gflops(g, r.precision())).max(
            crate::features::roofline::memory_time_ms(r.dram_bytes, f.dram_gbs),
        )
    };
    let (rs, rt) = (roof(src, gs, &fs), roof(query, gt, &ft));
    let roof_ratio = if rs > 0.0 && rt > 0.0 { rt / rs } else { 1.0 };
    let occ = |r: &Run, g: &Gpu| {
        crate::features::run_occupancy(r, g, ctx.catalog, ctx.resources)
            .map(|o| o.occupancy)
            .unwrap_or(0.0)
    };
    let (os, ot) = (occ(src, gs), occ(query, gt));
    let occ_ratio = if os > 0.0 && ot > 0.0 { os / ot } else { 1.0 };
    Ok(src.time_ms * roof_ratio * occ_ratio)
}

/// Nothing to learn: the parameters are the fitted model.
impl Fit for AnalyticalStudy {
    fn name(&self) -> String {
        "analytical-study".into()
    }
    fn fit(&self, _train: &[&Run], _ctx: &Context) -> Result<Box<dyn Predict>> {
        Ok(Box::new(AnalyticalStudy))
    }
}

impl Predict for AnalyticalStudy {
    fn name(&self) -> String {
        Fit::name(self)
    }
    fn predict(
        &self,
        query: &Query,
        evidence: &Evidence,
        ctx: &Context,
    ) -> Result<Option<Prediction>> {
        let gt = ctx.gpu(&query.gpu)?;
        let preds = sources(query, evidence)
            .into_iter()
            .map(|s| project_study(s, query, ctx.gpu(&s.gpu)?, gt, ctx))
            .collect::<Result<Vec<f64>>>()?;
        if preds.is_empty() {
            return Ok(None);
        }
        let mean = preds.iter().sum::<f64>() / preds.len() as f64;
        let lo = preds.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = preds.iter().copied().fold(0.0, f64::max);
        let figs = ctx.figures(gt)?;
        let f = run_features(query, gt, &figs, ctx.catalog, ctx.resources);
        let bound = if f.compute_ms >= f.dram_ms && f.compute_ms > 0.0 {
            Bound::Compute
        } else {
            Bound::Dram
        };
        Ok(Some(Prediction {
            pred_ms: mean,
            lo_ms: lo,
            hi_ms: hi,
            interval: Interval::Spread,
            bound,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A projection's blend as one exp of logs is the product of the two powers it
    /// replaced, to rounding, at the shares' ends too (x^0 = 1 even for x = 0).
    #[test]
    fn log_powers_give_the_powers() {
        let blend = |roof: f64, latency: f64, eta: f64| {
            (log_power(roof, eta) + log_power(latency, 1.0 - eta)).exp()
        };
        for (roof, latency) in [
            (0.37, 2.5),
            (1.0, 1.0),
            (12.0f64, 0.05f64),
            (0.0, 3.0),
            (3.0, 0.0),
        ] {
            for eta in [0.0, 0.25, 0.5, 0.9, 1.0] {
                let want = roof.powf(eta) * latency.powf(1.0 - eta);
                let got = blend(roof, latency, eta);
                assert!(
                    (got - want).abs() <= 1e-14 * want.max(1.0),
                    "{roof}^{eta} x {latency}^(1-{eta}): {got} vs {want}"
                );
            }
        }
    }

    /// SYNTHETIC held-out errors: `per_gpu[g]` as the log error of 10 runs of GPU g.
    fn errors(per_gpu: &[f64]) -> Vec<HeldOutError> {
        per_gpu
            .iter()
            .enumerate()
            .flat_map(|(gpu, &e)| {
                (0..10).map(move |i| HeldOutError {
                    gpu,
                    ln_error: e + 0.001 * i as f64,
                    launch_bound: false,
                })
            })
            .collect()
    }

    /// A higher power is taken only where it lowers every held-out GPU's error clearly
    /// enough and makes none more than a point worse; the lowest such wins.
    #[test]
    fn a_similarity_power_is_chosen_only_where_it_clearly_helps_and_harms_no_gpu() {
        let power1 = errors(&[0.2, 0.2, 0.25, 0.2]);
        let power2 = errors(&[0.1, 0.12, 0.1, 0.15]);
        // lower still on average, but the last GPU 0.2 -> 0.5 (18 -> 39 % APE)
        let power4 = errors(&[0.0, 0.0, 0.0, 0.5]);
        assert_eq!(
            chosen_candidate(&[power1.clone(), power2.clone(), power4.clone()]),
            1
        );
        // without the harm, power 4 is the lowest
        let power4 = errors(&[0.0, 0.0, 0.0, 0.05]);
        assert_eq!(
            chosen_candidate(&[power1.clone(), power2.clone(), power4]),
            2
        );
        // no gain: the similarity itself
        assert_eq!(
            chosen_candidate(&[power1.clone(), power1.clone(), power1.clone()]),
            0
        );
        // two held-out GPUs say too little to leave power 1
        let two = |e: &[f64]| errors(&e[..2]);
        assert_eq!(
            chosen_candidate(&[two(&[0.2, 0.2]), two(&[0.1, 0.1]), two(&[0.2, 0.2])]),
            0
        );
    }

    /// SYNTHETIC projection of `pred_ms` (at every memory level) weighted `weight`, its
    /// similarity the weight.
    fn synthetic_projection(pred_ms: f64, weight: f64) -> Projection {
        let features = RunFeatures {
            intensity: 1.0,
            working_set_bytes: 0.0,
            fits_l2: false,
            dram_ms: 1.0,
            l2_ms: 0.0,
            l1_ms: 0.0,
            hierarchical: false,
            compute_ms: 0.0,
            atomic_ms: 0.0,
            roof_ms: 1.0,
            peak_floor_ms: 0.0,
            bound: Bound::Dram,
            occupancy: None,
            waves: None,
            tail_efficiency: None,
            launch_floor_ms: 0.0,
            parallelism: None,
            grid_warps: None,
        };
        Projection {
            source_ms: 1.0,
            source: features.clone(),
            target: features,
            busy_source_ms: 1.0,
            roof_ratio: 1.0,
            roof_share: 1.0,
            latency_ratio: 1.0,
            occupancy_ratio: 1.0,
            wave_ratio: 1.0,
            efficiency: 1.0,
            pred_ms,
            pred_dram_ms: pred_ms,
            pred_l2_ms: pred_ms,
            similarity: weight,
            same_arch: false,
            source_launch_bound: false,
            weight,
        }
    }

    /// Weighing a combination by a power of the similarity is the same as projecting
    /// with that power.
    #[test]
    fn a_weight_is_a_power_of_the_similarity() {
        assert_eq!(source_weight(0.5, 1), 0.5);
        assert_eq!(source_weight(0.5, 2), 0.25);
        assert_eq!(source_weight(0.5, 4), 0.0625);
        let projection = synthetic_projection;
        // (no source a twin of the target: both spreads count, see the next test)
        let (near, far) = (projection(1.0, 0.7), projection(4.0, 0.2));
        let mut by_weight = Combination::default();
        by_weight.add_weighted(&near, source_weight(near.similarity, 2));
        by_weight.add_weighted(&far, source_weight(far.similarity, 2));
        let squared = Combination::of([
            &projection(1.0, source_weight(0.7, 2)),
            &projection(4.0, source_weight(0.2, 2)),
        ]);
        let (a, b) = (
            by_weight.prediction().unwrap(),
            squared.prediction().unwrap(),
        );
        assert_eq!(a, b);
        // 0.49 : 0.04 of the logs: much nearer the near source than weights 0.7 : 0.2
        let expected = ((0.49 * 1f64.ln() + 0.04 * 4f64.ln()) / 0.53).exp();
        assert!((a.pred_ms - expected).abs() < 1e-12, "{}", a.pred_ms);
        let plain = Combination::of([&near, &far]).prediction().unwrap();
        assert!(a.pred_ms < plain.pred_ms);
    }

    #[test]
    fn with_a_twin_source_only_the_near_sources_spread() {
        let projection = |pred_ms: f64, similarity: f64| Projection {
            pred_ms,
            pred_dram_ms: pred_ms * 0.9,
            pred_l2_ms: pred_ms * 1.1,
            ..synthetic_projection(pred_ms, similarity)
        };
        // A twin (0.9), a near source (0.5) and a far one (0.1): the far one moves the
        // prediction a little but not the spread.
        let (twin, near, far) = (
            projection(1.0, 0.9),
            projection(1.2, 0.5),
            projection(4.0, 0.1),
        );
        let p = Combination::of([&twin, &near, &far]).prediction().unwrap();
        assert!(
            (p.lo_ms - 0.9).abs() < 1e-12 && (p.hi_ms - 1.32).abs() < 1e-12,
            "{p:?}"
        );
        assert!(p.pred_ms > 1.0);
        // Without the twin (0.7 at most) every source's spread counts.
        let untwinned = projection(1.0, 0.7);
        let p = Combination::of([&untwinned, &near, &far])
            .prediction()
            .unwrap();
        assert!((p.hi_ms - 4.4).abs() < 1e-12, "{p:?}");
    }
}
