//! Validation: hard errors (one line naming file, line, column; the load fails) and
//! verdicts on rows that are kept: [`Run::exclusion`] (left out of fitting and
//! scoring, see [`is_excluded`]) and [`Run::warnings`]. Validation sets them once;
//! the `flags` column is their serialized form.
//!
//! Errors beyond a cell's own value: a `precision` with no peak; a file whose times
//! are far from the roofline by a unit's factor (see `check_time_unit`); a launch
//! its GPU cannot make; a duplicate (GPU, kernel, config, source).
//!
//! Exclusions (physically implausible measurements, or not of the whole GPU):
//! - SM partition: the row ran on fewer SMs than the GPU has (`sm_count`, a CUDA
//!   green context); such rows are a partition-scaling table, not the GPU's own, and
//!   are neither duplicates of the whole-GPU row nor checked against its roofs;
//! - above peak bandwidth: DRAM bytes / time above 1.05 x the GPU's peak bandwidth
//!   while the working set does not fit in L2 (so no cache can explain it);
//! - above peak FLOP/s: above 1.05 x the peak for the run's precision;
//! - flat time: within one (GPU, kernel), rows whose work differs by >= 16x took
//!   nearly the same time (the larger grew by less than (work ratio)^0.25, 2x for
//!   16x the work), and most rows that far apart in work disagree with this one the
//!   same way, and so do most rows >= 4x apart (so one mistyped row is flagged
//!   alone, not the good rows around it). Work is the time the row's FLOPs and
//!   bytes need at the GPU's roofs (see `roof_seconds`). Two things make a flat
//!   time honest and are not counted: a row on the launch floor (below 10 us, or
//!   within 2x of the kernel's fastest run on that GPU and below 20 us) is in no
//!   flat pair, and only a throughput-bound row can be the larger of one (its grid
//!   spans more than one wave of the GPU, or, geometry unknown, it reaches a
//!   quarter of a roof: a partly filled GPU runs more blocks in parallel, not
//!   longer). E.g. the reference study's TITAN X rows: conv2d flat at 67 us over
//!   64x the work, 1 to 85 waves.
//!
//! Warnings (rows kept): flat time over >= 4x (caches and partial waves can do it),
//! below launch floor (under 1 us, faster than any back-to-back launch measured on
//! NVIDIA GPUs), single GPU (the (kernel, config) was measured on one GPU only: no
//! source->target pair).
//!
//! Cost: O(n log n) (a sort, then one sweep per (GPU, kernel) with a Fenwick tree).

use super::{Exclusion, Run, RunsTable, Warning};
use crate::catalog::{Catalog, Gpu, PrecisionClass};
use crate::error::{Error, GpuHint, Position, Result};
use gpucast_runs::VALIDATION_FLAGS;
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;

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
/// ...nor does one within this factor of the kernel's fastest run on the GPU, up to
/// the cap (above it, a plateau is not launch overhead).
const FLOOR_FACTOR: f64 = 2.0;
const FLOOR_CAP_MS: f64 = 0.020;
/// Faster than any back-to-back launch measured on NVIDIA GPUs (1 us; the reference
/// study's floor is 1.3-5.5 us).
pub const LAUNCH_FLOOR_MS: f64 = 1e-3;
const PEAK_SLACK: f64 = crate::catalog::MEASURED_ABOVE_PEAK_SLACK;
/// A run without launch geometry counts as throughput-bound from this fraction of
/// its roofline time on.
const MIN_ROOF_FRACTION: f64 = 0.25;

/// The exclusion rule: a row is left out of fitting and scoring when validation
/// found its measurement physically implausible ([`Run::exclusion`]).
pub fn is_excluded(run: &Run) -> bool {
    run.exclusion.is_some()
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct GpuSummary {
    pub gpu: String,
    pub rows: usize,
    pub kernels: usize,
    pub configs: usize,
    pub flagged: usize,
    pub excluded: usize,
    /// reason name (flag without its value) -> rows
    pub reasons: BTreeMap<String, usize>,
}

/// One row validation excluded or warned about (for a `--list` output).
#[derive(Debug, Clone, serde::Serialize)]
pub struct FlaggedRow {
    /// Index into the table's runs.
    pub index: usize,
    /// `FILE:LINE` (or `FILE: row N` for Parquet).
    pub place: String,
    pub gpu: String,
    pub kernel: String,
    pub config: String,
    pub excluded: bool,
    /// The exclusion first, then the warnings, each one printable line.
    pub reasons: Vec<String>,
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ValidationReport {
    pub files: Vec<String>,
    pub rows: usize,
    pub flagged: usize,
    pub excluded: usize,
    pub skipped_error_rows: usize,
    /// [`super::RunsTable::not_imported`]: entries of the files not read as runs, by
    /// reason.
    pub not_imported: BTreeMap<String, usize>,
    pub per_gpu: Vec<GpuSummary>,
    /// Every excluded or warned row with its reasons (not in JSON: it can be as
    /// long as the table).
    #[serde(skip)]
    pub flagged_rows: Vec<FlaggedRow>,
}

/// Check a loaded table against the catalog: resolve GPU names (rows then carry the
/// catalog's canonical name), reject duplicates, and set each row's verdicts.
pub fn validate(table: &mut RunsTable, catalog: &Catalog) -> Result<ValidationReport> {
    // GPU names as written -> the GPU's number (in order of first appearance); the
    // catalog is asked once per distinct name.
    let mut resolved: HashMap<String, u32> = HashMap::default();
    let mut gpus: Vec<&Gpu> = Vec::new();
    // (each GPU's canonical name, shared by its rows)
    let mut names: Vec<super::Name> = Vec::new();
    let mut gpu_of: Vec<u32> = Vec::with_capacity(table.runs.len());
    for run in &mut table.runs {
        let id = match resolved.get(run.gpu.as_str()) {
            Some(&id) => id,
            None => {
                let Some(gpu) = catalog.resolve(&run.gpu) else {
                    return Err(unknown_gpu(&table.gpu_fields, run, catalog));
                };
                // two spellings of one GPU are one GPU
                let id = match gpus.iter().position(|g| g.name == gpu.name) {
                    Some(i) => i as u32,
                    None => {
                        gpus.push(gpu);
                        names.push(gpu.name.as_str().into());
                        gpus.len() as u32 - 1
                    }
                };
                resolved.insert(run.gpu.to_string(), id);
                id
            }
        };
        gpu_of.push(id);
        run.gpu = names[id as usize].clone();
        run.flags.retain(|f| !is_validation_flag(f));
        run.exclusion = None;
        run.warnings.clear();
    }
    let ids = RowIds::of(&table.runs, gpus, gpu_of);
    let partitions: Vec<Option<u32>> = table
        .runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            check_launch(r, ids.gpu(i), catalog)?;
            check_precision(r)?;
            partition_sms(r, ids.gpu(i))
        })
        .collect::<Result<_>>()?;
    check_duplicates(&table.runs, &ids, &partitions)?;
    check_time_unit(&table.runs, &ids, &partitions)?;
    let mut verdicts: Vec<Verdict> = table
        .runs
        .iter()
        .zip(&partitions)
        .enumerate()
        .map(|(i, (r, part))| {
            let gpu = ids.gpu(i);
            match part {
                // a partition's time says nothing about the whole GPU's roofs
                Some(n) => Verdict {
                    exclusions: vec![Exclusion::SmPartition {
                        sm_count: *n,
                        gpu_sms: gpu.sm_count,
                    }],
                    warnings: vec![],
                },
                None => peak_verdict(r, gpu),
            }
        })
        .collect();
    flat_time(&table.runs, &ids, &partitions, &mut verdicts);
    single_gpu(&ids, &mut verdicts);

    for (run, v) in table.runs.iter_mut().zip(verdicts) {
        let mut exclusions = v.exclusions.into_iter();
        run.exclusion = exclusions.next();
        run.warnings = exclusions
            .map(Warning::AlsoImplausible)
            .chain(v.warnings)
            .collect();
        let own = run
            .exclusion
            .iter()
            .map(|e| e.flag())
            .chain(run.warnings.iter().map(|w| w.flag()));
        run.flags.extend(own);
    }
    Ok(summarize(table, &ids))
}

/// Each row's GPU, kernel and work (kernel, config) as numbers, found once: the
/// checks group and count rows by them. With the names hashed again in each check,
/// validating the 980k-row GEMM corpus took 1.3 s; with these, 0.92 s.
struct RowIds<'c> {
    /// The GPUs by number, in order of first appearance.
    gpus: Vec<&'c Gpu>,
    gpu: Vec<u32>,
    kernel: Vec<u32>,
    kernels: usize,
    work: Vec<u32>,
    works: usize,
}

impl<'c> RowIds<'c> {
    fn of(runs: &[Run], gpus: Vec<&'c Gpu>, gpu: Vec<u32>) -> RowIds<'c> {
        let mut kernel_ids: HashMap<&str, u32> = HashMap::default();
        let mut work_ids: HashMap<(u32, &str), u32> = HashMap::default();
        let (mut kernel, mut work) = (
            Vec::with_capacity(runs.len()),
            Vec::with_capacity(runs.len()),
        );
        for r in runs {
            let next = kernel_ids.len() as u32;
            let k = *kernel_ids.entry(r.kernel.as_str()).or_insert(next);
            let next = work_ids.len() as u32;
            work.push(*work_ids.entry((k, r.config.as_str())).or_insert(next));
            kernel.push(k);
        }
        RowIds {
            gpus,
            gpu,
            kernel,
            kernels: kernel_ids.len(),
            work,
            works: work_ids.len(),
        }
    }

    /// Row `i`'s GPU.
    fn gpu(&self, i: usize) -> &'c Gpu {
        self.gpus[self.gpu[i] as usize]
    }
}

fn is_validation_flag(flag: &str) -> bool {
    let name = flag.split(':').next().unwrap_or(flag);
    VALIDATION_FLAGS.contains(&name)
}

/// An error in `column` of run `r`. A run without a line of its own (a Kernel Tuner
/// cache's entry, a Parquet row) is also named by its kernel and configuration: its
/// row number among the imported runs is hard to find in the file.
fn run_error(r: &Run, column: &str, message: String) -> Error {
    let message = match r.origin.line {
        Some(_) => message,
        None => format!("{message} (kernel '{}', config '{}')", r.kernel, r.config),
    };
    Error::validation(
        &*r.origin.file,
        Position::of(&r.origin),
        Some(column),
        message,
    )
}

/// The error for a run whose GPU name `catalog` does not resolve, placed where its
/// file writes the name.
fn unknown_gpu(fields: &[super::GpuField], run: &Run, catalog: &Catalog) -> Error {
    let written = fields.iter().find(|g| *g.file == *run.origin.file);
    Error::unknown_gpu(
        run.gpu.to_string(),
        &*run.origin.file,
        written
            .and_then(|g| g.at)
            .unwrap_or_else(|| Position::of(&run.origin)),
        written.map_or("column 'gpu'", |g| g.field.as_str()),
        catalog.unresolved_hint(&run.gpu),
    )
}

/// Refuse a GPU name that can name no GPU of any catalog: one that matches several of
/// `catalog`'s ("A100") or is brand words only. A name the catalog does not know is
/// kept (a GPU a user's `--gpus` file may add later). What `data import` checks
/// without `--validate`.
pub fn refuse_ambiguous_gpus(table: &RunsTable, catalog: &Catalog) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    for run in &table.runs {
        if !seen.insert(run.gpu.as_str()) || catalog.resolve(&run.gpu).is_some() {
            continue;
        }
        if !matches!(
            catalog.unresolved_hint(&run.gpu),
            GpuHint::NotInCatalog { .. }
        ) {
            return Err(unknown_gpu(&table.gpu_fields, run, catalog));
        }
    }
    Ok(())
}

/// SMs of the partition a run was restricted to, when fewer than the whole GPU's; an
/// `sm_count` that no partition of the GPU can have is an error.
fn partition_sms(r: &Run, gpu: &Gpu) -> Result<Option<u32>> {
    let Some(n) = r.details().sm_count else {
        return Ok(None);
    };
    if !(n >= 1.0 && n.fract() == 0.0 && n <= gpu.sm_count as f64) {
        return Err(run_error(
            r,
            "sm_count",
            format!(
                "{n} SMs: a run uses a whole number of SMs from 1 to the {} of {}",
                gpu.sm_count, gpu.name
            ),
        ));
    }
    Ok((n < gpu.sm_count as f64).then_some(n as u32))
}

/// Most blocks one launch can have: a grid of 2^31 - 1 x 65,535 x 65,535 (every
/// compute capability from 3.0 on).
const MAX_GRID_BLOCKS: f64 = 2_147_483_647.0 * 65_535.0 * 65_535.0;

/// A run's launch as its GPU allows one: whole numbers, a block of 1 to the
/// compute capability's most threads, registers and shared memory per block within
/// its limits, at least one block. The projection drops a launch it cannot place
/// (occupancy unknown), so an impossible value would otherwise change predictions
/// silently.
fn check_launch(r: &Run, gpu: &Gpu, catalog: &Catalog) -> Result<()> {
    let Some(limits) = catalog.limits_ref(gpu) else {
        return Ok(());
    };
    let checks = [
        (
            "block_threads",
            r.block_threads,
            1,
            f64::from(limits.max_threads_per_block),
        ),
        ("grid_blocks", r.grid_blocks, 1, MAX_GRID_BLOCKS),
        (
            "regs_per_thread",
            r.regs_per_thread,
            0,
            f64::from(limits.max_regs_per_thread),
        ),
        (
            "smem_per_block",
            r.smem_per_block,
            0,
            f64::from(limits.max_smem_per_block),
        ),
    ];
    for (column, value, min, max) in checks {
        let Some(v) = value else { continue };
        let in_range = v >= f64::from(min) && v <= max;
        if !(v.fract() == 0.0 && in_range) {
            let shown = if v.fract() == 0.0 && v.abs() < 1e15 {
                format!("{v:.0}")
            } else {
                format!("{v:?}")
            };
            let range = if max == MAX_GRID_BLOCKS {
                format!("from {min} to (2^31 - 1) x 65535 x 65535")
            } else {
                format!("from {min} to {max:.0}")
            };
            return Err(run_error(
                r,
                column,
                format!(
                    "{shown} is not what {} (compute capability {}) can launch: a whole number {range}",
                    gpu.name, gpu.compute_capability
                ),
            ));
        }
    }
    Ok(())
}

/// A `precision` the catalog has no peak for is an error, not a run priced at the
/// fp32 peak (see [`PrecisionClass::is_known`]).
fn check_precision(r: &Run) -> Result<()> {
    match &r.precision {
        Some(p) if !PrecisionClass::is_known(p) => Err(run_error(
            r,
            "precision",
            format!(
                "unknown precision '{p}' (known: {})",
                PrecisionClass::KNOWN_LABELS
            ),
        )),
        _ => Ok(()),
    }
}

/// Same GPU, kernel, config, SM partition and source twice is an error; two sources
/// measuring the same work is allowed, and so is one source measuring it on the
/// whole GPU and on partitions of it.
fn check_duplicates(runs: &[Run], ids: &RowIds, partitions: &[Option<u32>]) -> Result<()> {
    /// (GPU, work, SMs of a partition, source)
    type Key<'a> = (u32, u32, Option<u32>, Option<&'a str>);
    // Sized up front: growing it to a million keys rehashed them at every doubling
    // (the 980k-row GEMM corpus validated 5 % faster).
    let mut seen: HashMap<Key, &Run> =
        HashMap::with_capacity_and_hasher(runs.len(), Default::default());
    for (i, (run, part)) in runs.iter().zip(partitions).enumerate() {
        let key = (ids.gpu[i], ids.work[i], *part, run.source.as_deref());
        if let Some(first) = seen.insert(key, run) {
            return Err(duplicate_error(run, first, *part));
        }
    }
    Ok(())
}

/// The error for `run`, which measures what `first` measured (on `partition` SMs).
pub(crate) fn duplicate_error(run: &Run, first: &Run, partition: Option<u32>) -> Error {
    let source = match &run.source {
        Some(s) => format!(" from source '{s}'"),
        None => String::new(),
    };
    Error::validation(
        &*run.origin.file,
        Position::of(&run.origin),
        Some("config"),
        format!(
            "duplicate (gpu, kernel, config) = ({}, {}, {}){}{source}: also at {}",
            run.gpu,
            run.kernel,
            run.config,
            partition
                .map(|n| format!(" on {n} SMs"))
                .unwrap_or_default(),
            first.origin
        ),
    )
}

/// Work of at least this much roofline time (ms) says what unit a time is in: below
/// it, launch overhead (5-20 us) holds honest times 10-1000x above the roofline.
const UNIT_MIN_ROOF_MS: f64 = 0.05;
/// Fewest such rows of one file and GPU for a verdict on its unit.
const UNIT_MIN_ROWS: usize = 8;
/// A median measured / roofline time above this says microseconds: honest kernels
/// with that much work run within a few times their roofline, and a serial or
/// contended one is a row, not a file's median.
const UNIT_SLOW_MEDIAN: f64 = 300.0;
/// A median below this says seconds: no kernel runs 300x faster than its roofline
/// (such rows are above the peak already).
const UNIT_FAST_MEDIAN: f64 = 1.0 / 300.0;
/// Share of rows that the 1000x rescale may put above the peak: more and the rescale
/// does not make the file plausible, so it is not the explanation.
const UNIT_MAX_IMPLAUSIBLE_SHARE: f64 = 0.1;

/// Times in the wrong unit: per file and GPU, over the rows with enough work (see
/// [`UNIT_MIN_ROOF_MS`]), the median of measured time over roofline time. Far above
/// 1 (microseconds written as milliseconds) or far below (seconds), and plausible
/// once rescaled by 1000, is an error naming the file, the GPU and the likely unit;
/// one row's slip stays a row's verdict (above peak, flat time).
fn check_time_unit(runs: &[Run], ids: &RowIds, partitions: &[Option<u32>]) -> Result<()> {
    // (file, GPU) -> measured / roofline time of each row with enough work
    let mut ratios: BTreeMap<(&str, u32), Vec<f64>> = BTreeMap::new();
    for (i, r) in runs.iter().enumerate() {
        let roof_ms = roof_seconds(r, ids.gpu(i)) * 1e3;
        if partitions[i].is_none() && roof_ms >= UNIT_MIN_ROOF_MS {
            ratios
                .entry((&*r.origin.file, ids.gpu[i]))
                .or_default()
                .push(r.time_ms / roof_ms);
        }
    }
    for ((file, gpu), mut v) in ratios {
        if v.len() < UNIT_MIN_ROWS {
            continue;
        }
        v.sort_by(f64::total_cmp);
        let median = v[v.len() / 2];
        let (scale, unit) = if median > UNIT_SLOW_MEDIAN {
            (1e-3, "microseconds")
        } else if median < UNIT_FAST_MEDIAN {
            (1e3, "seconds")
        } else {
            continue;
        };
        let above_peak = v.iter().filter(|x| *x * scale < 1.0 / PEAK_SLACK).count();
        if above_peak as f64 > UNIT_MAX_IMPLAUSIBLE_SHARE * v.len() as f64 {
            continue;
        }
        let times = if median >= 1.0 {
            format!("a median {median:.0}x the roofline time")
        } else {
            format!("a median 1/{:.0} of the roofline time", 1.0 / median)
        };
        return Err(Error::validation(
            file,
            Position::File,
            Some("time_ms"),
            format!(
                "times are {times} of their work on {} ({} rows with at least {} us of it): they look like {unit}, not milliseconds",
                ids.gpus[gpu as usize].name,
                v.len(),
                UNIT_MIN_ROOF_MS * 1e3
            ),
        ));
    }
    Ok(())
}

/// What validation found about one row, in order of discovery.
#[derive(Default)]
struct Verdict {
    exclusions: Vec<Exclusion>,
    warnings: Vec<Warning>,
}

fn peak_verdict(r: &Run, gpu: &Gpu) -> Verdict {
    let mut v = Verdict::default();
    let secs = r.time_ms * 1e-3;
    let working_set = r.working_set_bytes.unwrap_or(r.dram_bytes);
    let bw_gbs = r.dram_bytes / secs / 1e9;
    if bw_gbs > PEAK_SLACK * gpu.mem_bandwidth_gbs && working_set > gpu.l2_bytes as f64 {
        v.exclusions.push(Exclusion::AbovePeakBandwidth {
            achieved_gbs: bw_gbs,
            peak_gbs: gpu.mem_bandwidth_gbs,
            working_set_bytes: working_set,
            l2_bytes: gpu.l2_bytes as f64,
        });
    }
    let gflops = r.flops / secs / 1e9;
    let peak = gpu.peak_gflops(r.precision());
    if gflops > PEAK_SLACK * peak {
        v.exclusions.push(Exclusion::AbovePeakFlops {
            achieved_gflops: gflops,
            peak_gflops: peak,
            precision: r.precision().to_string(),
        });
    }
    if r.time_ms < LAUNCH_FLOOR_MS {
        v.warnings
            .push(Warning::BelowLaunchFloor { time_ms: r.time_ms });
    }
    v
}

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

/// The work of a run in seconds at the GPU's roofs: the larger of FLOPs over the
/// peak for its precision and DRAM bytes over the peak bandwidth. Raw FLOPs and bytes
/// do not add up: a GEMM whose FLOPs grow 64x with its batch while its weights
/// (bytes) stay the same is honestly flat while memory-bound.
fn roof_seconds(r: &Run, gpu: &Gpu) -> f64 {
    let flops_s = r.flops / (gpu.peak_gflops(r.precision()) * 1e9);
    let bytes_s = r.dram_bytes / (gpu.mem_bandwidth_gbs * 1e9);
    let s = flops_s.max(bytes_s);
    if s.is_finite() {
        s
    } else {
        0.0
    }
}

fn flat_time(runs: &[Run], ids: &RowIds, partitions: &[Option<u32>], verdicts: &mut [Verdict]) {
    let work: Vec<f64> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| roof_seconds(r, ids.gpu(i)))
        .collect();
    // (GPU, kernel) groups as numbers: sorting a million rows by two strings each was
    // most of validation's time.
    let group_of: Vec<u64> = (0..runs.len())
        .map(|i| ids.gpu[i] as u64 * ids.kernels as u64 + ids.kernel[i] as u64)
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
        let fastest_ms = group
            .iter()
            .map(|&i| runs[i].time_ms)
            .fold(f64::INFINITY, f64::min);
        let floor_ms = FLOOR_ALWAYS_MS.max((FLOOR_FACTOR * fastest_ms).min(FLOOR_CAP_MS));
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
                    floor_bound: r.time_ms <= floor_ms,
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
fn single_gpu(ids: &RowIds, verdicts: &mut [Verdict]) {
    if ids.gpus.len() < 2 {
        return;
    }
    // each work's first GPU, and whether every row of it is on that GPU
    let mut first_gpu: Vec<Option<(u32, bool)>> = vec![None; ids.works];
    for (&w, &g) in ids.work.iter().zip(&ids.gpu) {
        let e = first_gpu[w as usize].get_or_insert((g, true));
        if e.0 != g {
            e.1 = false;
        }
    }
    for (&w, v) in ids.work.iter().zip(verdicts) {
        if first_gpu[w as usize].is_some_and(|(_, only)| only) {
            v.warnings.push(Warning::SingleGpu);
        }
    }
}

/// (GPU, how many distinct values of `of` its rows have), for each GPU with rows.
fn distinct_per_gpu(gpu: &[u32], of: &[u32]) -> Vec<(usize, usize)> {
    let mut pairs: Vec<u64> = gpu
        .iter()
        .zip(of)
        .map(|(&g, &v)| (g as u64) << 32 | v as u64)
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    pairs
        .chunk_by(|a, b| a >> 32 == b >> 32)
        .map(|c| ((c[0] >> 32) as usize, c.len()))
        .collect()
}

fn summarize(table: &RunsTable, ids: &RowIds) -> ValidationReport {
    let mut per_gpu: Vec<GpuSummary> = ids
        .gpus
        .iter()
        .map(|g| GpuSummary {
            gpu: g.name.clone(),
            ..GpuSummary::default()
        })
        .collect();
    // distinct kernels and (kernel, config) per GPU: a configuration measured on the
    // whole GPU and on SM partitions is one configuration
    for (gpu, kernels) in distinct_per_gpu(&ids.gpu, &ids.kernel) {
        per_gpu[gpu].kernels = kernels;
    }
    for (gpu, configs) in distinct_per_gpu(&ids.gpu, &ids.work) {
        per_gpu[gpu].configs = configs;
    }
    let mut flagged_rows = Vec::new();
    for (index, r) in table.runs.iter().enumerate() {
        let g = &mut per_gpu[ids.gpu[index] as usize];
        g.rows += 1;
        let names = r
            .exclusion
            .iter()
            .map(|e| e.name())
            .chain(r.warnings.iter().map(|w| w.name()));
        for name in names {
            *g.reasons.entry(name.to_string()).or_insert(0) += 1;
        }
        let flagged = r.exclusion.is_some() || !r.warnings.is_empty();
        if flagged {
            g.flagged += 1;
            flagged_rows.push(FlaggedRow {
                index,
                place: r.origin.to_string(),
                gpu: r.gpu.to_string(),
                kernel: r.kernel.to_string(),
                config: r.config.to_string(),
                excluded: is_excluded(r),
                reasons: r.reasons(),
            });
        }
        if is_excluded(r) {
            g.excluded += 1;
        }
    }
    ValidationReport {
        files: table.files.clone(),
        rows: table.runs.len(),
        flagged: per_gpu.iter().map(|g| g.flagged).sum(),
        excluded: per_gpu.iter().map(|g| g.excluded).sum(),
        skipped_error_rows: table.skipped_error_rows(),
        not_imported: table.not_imported.clone(),
        per_gpu,
        flagged_rows,
    }
}

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
