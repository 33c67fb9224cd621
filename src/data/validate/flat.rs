//! The flat-time rule of validation (see the parent module): within one (GPU,
//! source, kernel), rows whose work differs by a factor but whose time does not, and
//! the launch floors that make such a plateau honest.

use super::rows::{roof_seconds, RowIds, Verdict};
use crate::catalog::Gpu;
use crate::data::{Exclusion, Run, Warning};

/// "Does not grow": the time grows by less than (work growth)^0.25.
const FLAT_GROWTH_EXPONENT: f64 = 0.25;
/// Work growth at which a flat time is a warning / an exclusion.
const FLAT_WARN_FACTOR: f64 = 4.0;
const FLAT_EXCLUDE_FACTOR: f64 = 16.0;
/// Work ratios this close (in log) to a factor count as reaching it: sizes 16x apart
/// whose byte counts carry a small per-block term are 15.9999x apart.
const RATIO_TOLERANCE: f64 = 0.01;
/// Launch floor: a time this short says nothing about the work done...
const FLOOR_ALWAYS_MS: f64 = 0.010;
/// ...nor does one within this factor of its kernel's fastest run in its harness...
const FLOOR_FACTOR: f64 = 2.0;
/// ...while that is this short: a kernel's own fixed cost above its harness's floor (a
/// TensorRT-LLM fp8 GEMM's quantization: 8 us in a harness whose fastest run is 1.7
/// us). The harness's floor itself may be longer (see [`floor_bound`]); a kernel's
/// plateau far above it is not launch overhead: the reference study's TITAN X
/// kernels at 36-67 us where the same harness timed one in 1.4 us (one of them at
/// 983 GB/s, 2.9x the board's peak).
const KERNEL_FLOOR_CAP_MS: f64 = 0.020;
/// A run without launch geometry counts as throughput-bound from this fraction of
/// its roofline time on.
const MIN_ROOF_FRACTION: f64 = 0.25;

/// Should the run's time grow with its work? When its launch geometry is known:
/// its grid spans more than one wave of resident blocks on the SMs it ran on (within
/// one wave, more blocks run in parallel, not longer). When it is not: it runs at a
/// quarter of a roof or more (below that, a partly filled GPU or a serial loop per
/// block can hold the time flat, e.g. a library GEMM with a long k and few tiles).
fn throughput_bound(r: &Run, gpu: &Gpu, roof_s: f64) -> bool {
    match (r.grid_blocks, r.block_threads) {
        (Some(grid), Some(threads)) if threads >= 1.0 && grid >= 1.0 => {
            let by_threads = (gpu.max_threads_per_sm as f64 / threads).floor();
            let per_sm = by_threads.min(gpu.max_blocks_per_sm as f64).max(1.0);
            let sms = r.details().sm_count.unwrap_or(gpu.sm_count as f64);
            grid > sms * per_sm
        }
        _ => roof_s >= MIN_ROOF_FRACTION * r.time_ms * 1e-3,
    }
}

/// One row of a (GPU, kernel) group, in order of work.
struct Point {
    /// Index into the table's runs.
    run: usize,
    ln_work: f64,
    time_ms: f64,
    /// ln(time) - FLAT_GROWTH_EXPONENT * ln(work): a pair (a, b) with more work in
    /// b is flat exactly when b's score is below a's.
    score: f64,
    /// On the launch floor: its time says nothing about its work, so it is in no
    /// flat pair (as the smaller row its time is overhead; as the larger row it is as
    /// fast as a launch gets, and a slower smaller row is slow for its own reasons).
    floor_bound: bool,
    /// Its time should grow with its work (see [`throughput_bound`]); only such a
    /// row can be the larger of a flat pair.
    throughput_bound: bool,
}

impl Point {
    fn can_be_larger(&self) -> bool {
        !self.floor_bound && self.throughput_bound
    }
}

/// How one row compares with the rows at least a factor apart in work.
#[derive(Default, Clone, Copy)]
struct Tally {
    comparable: usize,
    disagreeing: usize,
    /// The most extreme disagreeing partner (index into the group).
    witness: Option<usize>,
}

/// Each harness's launch floor ([`crate::models::fastest_of_harness`]): the fastest
/// run of each (GPU, source) among the rows no other rule excluded (a time above a
/// peak is no floor), infinite with too few runs. Indexed by [`RowIds::harness`].
fn harness_fastest(runs: &[Run], ids: &RowIds, verdicts: &[Verdict]) -> Vec<f64> {
    let mut fastest = vec![(f64::INFINITY, 0u32); ids.harnesses];
    for (i, r) in runs.iter().enumerate() {
        if verdicts[i].exclusions.is_empty() {
            let f = &mut fastest[ids.harness[i] as usize];
            *f = (f.0.min(r.time_ms), f.1 + 1);
        }
    }
    fastest
        .into_iter()
        .map(|(f, n)| crate::models::fastest_of_harness(f, n))
        .collect()
}

/// Whether a run of `time_ms` is on the launch floor, so that its time says nothing
/// about its work: below [`FLOOR_ALWAYS_MS`]; launch-bound on its harness's floor as
/// the models define it ([`crate::models::launch_bound`]: under 4x the fastest run
/// the harness timed on the GPU, when that is 50 us or less; a PyTorch operator's
/// host dispatch holds its times at 25-41 us whatever the work); or on its kernel's
/// own plateau ([`KERNEL_FLOOR_CAP_MS`]).
pub(super) fn floor_bound(time_ms: f64, kernel_fastest_ms: f64, harness_fastest_ms: f64) -> bool {
    let kernel_floor = (FLOOR_FACTOR * kernel_fastest_ms).min(KERNEL_FLOOR_CAP_MS);
    time_ms <= FLOOR_ALWAYS_MS.max(kernel_floor)
        || crate::models::launch_bound(time_ms, Some(harness_fastest_ms))
}

pub(super) fn flat_time(
    runs: &[Run],
    ids: &RowIds,
    partitions: &[Option<u32>],
    verdicts: &mut [Verdict],
) {
    let work: Vec<f64> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| roof_seconds(r, ids.gpu(i)))
        .collect();
    let harness_fastest = harness_fastest(runs, ids, verdicts);
    // (harness, kernel) groups as numbers: sorting a million rows by three strings
    // each was most of validation's time. Two harnesses timing one kernel are two
    // groups: each has its own launch floor.
    let group_of: Vec<u64> = (0..runs.len())
        .map(|i| ids.harness[i] as u64 * ids.kernels as u64 + ids.kernel[i] as u64)
        .collect();
    // partition runs are excluded already and would mix two devices in one group
    let mut order: Vec<usize> = (0..runs.len())
        .filter(|&i| work[i] > 0.0 && partitions[i].is_none())
        .collect();
    order.sort_by(|&a, &b| {
        group_of[a]
            .cmp(&group_of[b])
            .then(work[a].total_cmp(&work[b]))
    });
    for group in order.chunk_by(|&a, &b| group_of[a] == group_of[b]) {
        let gpu = ids.gpu(group[0]);
        let harness_ms = harness_fastest[ids.harness[group[0]] as usize];
        let fastest_ms = group
            .iter()
            .map(|&i| runs[i].time_ms)
            .fold(f64::INFINITY, f64::min);
        let points: Vec<Point> = group
            .iter()
            .map(|&i| {
                let r = &runs[i];
                let ln_work = work[i].ln();
                Point {
                    run: i,
                    ln_work,
                    time_ms: r.time_ms,
                    score: r.time_ms.ln() - FLAT_GROWTH_EXPONENT * ln_work,
                    floor_bound: floor_bound(r.time_ms, fastest_ms, harness_ms),
                    throughput_bound: throughput_bound(r, gpu, work[i]),
                }
            })
            .collect();
        let ranks = ScoreRanks::of(&points);
        let strong = tally(&points, &ranks, FLAT_EXCLUDE_FACTOR);
        let weak = tally(&points, &ranks, FLAT_WARN_FACTOR);
        for (k, p) in points.iter().enumerate() {
            let v = &mut verdicts[p.run];
            // Excluded only when the row also disagrees with most rows >= 4x apart:
            // a good row whose one far partner is a bad row is outvoted by its
            // nearer neighbours.
            let excluded = verdict_of(&points, k, &strong[k]).filter(|_| majority(&weak[k]));
            if let Some((work_ratio, time_ratio, t)) = excluded {
                v.exclusions.push(Exclusion::FlatTime {
                    work_ratio,
                    time_ratio,
                    disagreeing: t.disagreeing,
                    comparable: t.comparable,
                });
            } else if let Some((work_ratio, time_ratio, t)) = verdict_of(&points, k, &weak[k]) {
                v.warnings.push(Warning::FlatTime {
                    work_ratio,
                    time_ratio,
                    disagreeing: t.disagreeing,
                    comparable: t.comparable,
                });
            }
        }
    }
}

/// A row is implausible when most rows far enough apart in work disagree with it:
/// (work ratio, time ratio) of its most extreme pair, larger over smaller.
fn verdict_of(points: &[Point], k: usize, t: &Tally) -> Option<(f64, f64, Tally)> {
    if !majority(t) {
        return None;
    }
    let w = t.witness?;
    let (small, large) = if points[w].ln_work < points[k].ln_work {
        (&points[w], &points[k])
    } else {
        (&points[k], &points[w])
    };
    Some((
        (large.ln_work - small.ln_work).exp(),
        large.time_ms / small.time_ms,
        *t,
    ))
}

fn majority(t: &Tally) -> bool {
    t.disagreeing > 0 && 2 * t.disagreeing > t.comparable
}

/// For every point (sorted by work), count the points at least `factor` apart in
/// work on either side, and those among them that form a flat pair with it. Two
/// sweeps with a Fenwick tree over score ranks: O(n log n).
fn tally(points: &[Point], ranks: &ScoreRanks, factor: f64) -> Vec<Tally> {
    let n = points.len();
    let gap = factor.ln() - RATIO_TOLERANCE;
    // 1-based rank of the last score <= point k's, and of point k's own score
    let rank_le = |k: usize| ranks.at_most[k];
    let rank_of = |k: usize| ranks.below[k] + 1;
    let mut out = vec![Tally::default(); n];

    // As the larger row: partners are smaller rows (not floor-bound) a factor below.
    let mut tree = Fenwick::new(n);
    let (mut next, mut inserted) = (0, 0);
    let mut max_score: Option<usize> = None;
    for b in 0..n {
        while next < n && points[b].ln_work - points[next].ln_work >= gap {
            let a = &points[next];
            if !a.floor_bound {
                tree.add(rank_of(next));
                inserted += 1;
                if max_score.is_none_or(|m| points[m].score < a.score) {
                    max_score = Some(next);
                }
            }
            next += 1;
        }
        if !points[b].can_be_larger() || inserted == 0 {
            continue;
        }
        let higher = inserted - tree.sum(rank_le(b));
        out[b].comparable += inserted;
        out[b].disagreeing += higher;
        if higher > 0 {
            out[b].witness = max_score;
        }
    }

    // As the smaller row: partners are larger rows a factor above.
    let mut tree = Fenwick::new(n);
    let (mut next, mut inserted) = (n, 0);
    let mut min_score: Option<usize> = None;
    for a in (0..n).rev() {
        while next > 0 && points[next - 1].ln_work - points[a].ln_work >= gap {
            let b = &points[next - 1];
            if b.can_be_larger() {
                tree.add(rank_of(next - 1));
                inserted += 1;
                if min_score.is_none_or(|m| points[m].score > b.score) {
                    min_score = Some(next - 1);
                }
            }
            next -= 1;
        }
        if points[a].floor_bound || inserted == 0 {
            continue;
        }
        let lower = tree.sum(ranks.below[a]);
        out[a].comparable += inserted;
        out[a].disagreeing += lower;
        if lower > 0 {
            // keep the pair with the larger work ratio
            let better = match out[a].witness {
                Some(w) => {
                    let prev = points[a].ln_work - points[w].ln_work;
                    min_score.is_some_and(|m| points[m].ln_work - points[a].ln_work > prev)
                }
                None => true,
            };
            if better {
                out[a].witness = min_score;
            }
        }
    }
    out
}

/// Where each point's score ranks among its group's: `below[k]` scores are lower than
/// point k's, `at_most[k]` are lower or equal. Both tallies of a group share them:
/// binary searches per point in each tally were most of validation's flat-time check.
struct ScoreRanks {
    below: Vec<usize>,
    at_most: Vec<usize>,
}

impl ScoreRanks {
    fn of(points: &[Point]) -> ScoreRanks {
        let n = points.len();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_unstable_by(|&a, &b| points[a].score.total_cmp(&points[b].score));
        let (mut below, mut at_most) = (vec![0; n], vec![0; n]);
        let mut start = 0;
        for ties in order.chunk_by(|&a, &b| points[a].score == points[b].score) {
            let end = start + ties.len();
            for &k in ties {
                (below[k], at_most[k]) = (start, end);
            }
            start = end;
        }
        ScoreRanks { below, at_most }
    }
}

/// Counts of inserted ranks, prefix sums in O(log n).
struct Fenwick(Vec<usize>);

impl Fenwick {
    fn new(n: usize) -> Self {
        Fenwick(vec![0; n + 1])
    }
    /// Insert one at 1-based rank `i`.
    fn add(&mut self, mut i: usize) {
        while i < self.0.len() {
            self.0[i] += 1;
            i += i & i.wrapping_neg();
        }
    }
    /// How many inserted at ranks 1..=i.
    fn sum(&self, mut i: usize) -> usize {
        let mut s = 0;
        while i > 0 {
            s += self.0[i];
            i -= i & i.wrapping_neg();
        }
        s
    }
}

/// A (kernel, config) measured on one GPU only has no source -> target pair.
#[cfg(test)]
mod tests {
    use super::*;

    /// SYNTHETIC points: (work, time_ms, floor_bound, throughput_bound).
    fn points(rows: &[(f64, f64, bool, bool)]) -> Vec<Point> {
        rows.iter()
            .enumerate()
            .map(|(i, &(w, t, floor_bound, throughput_bound))| Point {
                run: i,
                ln_work: w.ln(),
                time_ms: t,
                score: t.ln() - FLAT_GROWTH_EXPONENT * w.ln(),
                floor_bound,
                throughput_bound,
            })
            .collect()
    }

    /// The O(n^2) definition the sweep must agree with.
    fn brute(points: &[Point], factor: f64) -> Vec<(usize, usize)> {
        let mut out = vec![(0, 0); points.len()];
        for (i, a) in points.iter().enumerate() {
            for (j, b) in points.iter().enumerate() {
                if b.ln_work - a.ln_work >= factor.ln() - RATIO_TOLERANCE
                    && !a.floor_bound
                    && b.can_be_larger()
                {
                    let flat = b.score < a.score;
                    for k in [i, j] {
                        out[k].0 += 1;
                        out[k].1 += flat as usize;
                    }
                }
            }
        }
        out
    }

    #[test]
    fn sweep_matches_the_pairwise_definition() {
        // SYNTHETIC: a deterministic pseudo-random sweep with ties, floors and waves.
        let mut x: u64 = 12345;
        let mut rnd = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 1000) as f64 / 1000.0
        };
        let mut rows: Vec<(f64, f64, bool, bool)> = (0..300)
            .map(|_| {
                let w = 10f64.powf(3.0 + 6.0 * rnd());
                let t = 0.001 * w.powf(0.2 + 0.8 * rnd()).max(1.0) / 100.0;
                (w, (t * 1e4).round() / 1e4 + 1e-4, rnd() < 0.2, rnd() < 0.9)
            })
            .collect();
        rows.sort_by(|a, b| a.0.total_cmp(&b.0));
        let p = points(&rows);
        for factor in [4.0, 16.0] {
            let fast = tally(&p, &ScoreRanks::of(&p), factor);
            let slow = brute(&p, factor);
            for (k, (t, s)) in fast.iter().zip(&slow).enumerate() {
                assert_eq!((t.comparable, t.disagreeing), *s, "row {k} factor {factor}");
                assert_eq!(t.witness.is_some(), s.1 > 0);
            }
        }
    }

    #[test]
    fn score_ranks_count_lower_and_tied_scores() {
        // SYNTHETIC: scores 2, 1, 2, 3 (work 1, time e^score)
        let p = points(&[2.0, 1.0, 2.0, 3.0].map(|s: f64| (1.0, s.exp(), false, true)));
        let r = ScoreRanks::of(&p);
        assert_eq!(r.below, [1, 0, 1, 3]);
        assert_eq!(r.at_most, [3, 1, 3, 4]);
    }

    #[test]
    fn fenwick_counts() {
        let mut f = Fenwick::new(5);
        for r in [1, 3, 3, 5] {
            f.add(r);
        }
        assert_eq!(
            (0..=5).map(|i| f.sum(i)).collect::<Vec<_>>(),
            [0, 1, 1, 3, 3, 4]
        );
    }
}
