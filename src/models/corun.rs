//! Kernels co-running on disjoint SM partitions of one GPU: each kernel's time
//! together from its time alone on its partition and its memory demand.
//!
//! SMs are not shared, the memory system is: L2 and DRAM serve every partition. A
//! kernel's demanded bandwidth at a level is its bytes there over its time alone
//! (`dram_bytes / time_alone`; at L2 `l2_bytes * l2_slice_imbalance / time_alone`,
//! below); its memory-bound share at the
//! level is that demand over the roof its own SMs reach alone (the partition's roof,
//! [`Roofs::partition`]). Under bandwidth sharing the memory-bound share is stretched
//! by what the other kernels draw from the shared roof:
//!
//! `slowdown_i = max over levels (1 + share_i * others_demand_i / (roof_scale * roof))`
//!
//! with one fitted constant, `roof_scale` (how much of the level's roof co-runners
//! can draw before they delay each other), chosen on training sets by the mean
//! absolute error of the together-time. The 90 % interval comes from errors held out
//! set by set on the training sets (conformal style).
//!
//! L2 is not one roof but many slices, each serving the addresses hashed to it. A
//! kernel whose traffic lands on a few slices (histogram's per-block flushes of 256
//! atomic bins) saturates those slices long before the whole L2's roof, and what its
//! co-runners send to the same slices queues behind it. So a kernel's L2 demand counts
//! at its busiest slice's rate: its L2 bytes times its slice imbalance (the profile's
//! `l2_slice_imbalance`, the busiest slice's bytes over the mean slice's; 1 when the
//! profile lacks it), both in its own share and in what it takes from the others. The
//! shipped exports give histogram 5.6-13.8 (H100) and 14.1-16.1 (H200) over its sizes,
//! every other co-run kernel at most 1.7.
//!
//! The evidence, held out on the measured co-runs (`datasets/own/*/corun.csv`, the
//! `own-corun` study of `reproduce`, mean absolute error of the together-time): leave
//! one set out 7.1 % (H100) and 5.8 % (H200), 8.0 % and 6.3 % with the L2 demand
//! unweighted; fitted on one GPU's sets and predicting the other's, alone times
//! measured, 5.9 % (H200) and 7.2 % (H100), against 6.7 % and 8.0 %; the interval
//! covers 88.7-91.2 %. The weighting adds no constant. With the alone times projected
//! by the analytical model from the other GPU's runs on the whole GPU and on its
//! partitions ([`predicted_alone_ms`]) it is 7.0 % (H200) and 8.0 % (H100), the
//! interval covering 85.3 % and 88.2 %. Without the slice
//! weighting, fitted on all sets of a GPU (DRAM roofs the vendor figures'), the
//! sharing form misses 7.7 % (H100) and 6.3 % (H200); a queueing form (memory share
//! stretched by (1 - own load) / (1 - total load)) 7.3 % and 6.3 %, as good but
//! needing the load capped below 1; slowing only above the roof 9.5 % and 8.4 %; no
//! interference 12.0 % and 9.8 %.

use super::interval::{interval_log, HeldOutError};
use crate::catalog::Gpu;
use crate::data::{upper_bound, Run};
use crate::error::{Error, Result};
use crate::features::Figures;
pub use gpucast_runs::CORUN_COLUMNS;
use std::collections::BTreeMap;
use std::path::Path;

/// One kernel of a co-run set: its work, its partition and what it needs alone.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CorunKernel {
    pub kernel: String,
    pub config: String,
    /// SMs of its partition.
    pub sm_count: u32,
    /// Its time alone on its partition (one launch).
    pub time_alone_ms: f64,
    /// DRAM bytes of one launch.
    pub dram_bytes: f64,
    /// L2 bytes of one launch, when profiled.
    pub l2_bytes: Option<f64>,
    /// Its busiest L2 slice's bytes over the mean slice's, when profiled.
    pub l2_slice_imbalance: Option<f64>,
}

impl CorunKernel {
    /// DRAM bandwidth it demands alone, GB/s.
    pub fn dram_demand_gbs(&self) -> f64 {
        self.dram_bytes / self.time_alone_ms / 1e6
    }
    /// L2 bandwidth it demands alone, GB/s, at its busiest slice's rate: its L2 bytes
    /// times its slice imbalance (1 when not profiled) over its time (0 without L2
    /// bytes).
    pub fn l2_demand_gbs(&self) -> f64 {
        self.l2_bytes.unwrap_or(0.0) * self.l2_slice_imbalance.unwrap_or(1.0)
            / self.time_alone_ms
            / 1e6
    }
}

/// The shared memory system of one GPU: the DRAM and L2 roofs of the whole GPU and
/// what a partition's SMs reach of them alone.
#[derive(Debug, Clone)]
pub struct Roofs {
    pub gpu: Gpu,
    pub dram_gbs: f64,
    pub l2_gbs: f64,
}

impl Roofs {
    /// The roofs of `gpu`: its measured figures where the catalog has them (a
    /// calibration merged with `--gpus`), else the catalog's peaks times the
    /// sustained fractions ([`Figures`]).
    pub fn of(gpu: &Gpu) -> Roofs {
        let f = Figures::measured(gpu).unwrap_or_else(|_| Figures::spec(gpu));
        Roofs {
            gpu: gpu.clone(),
            dram_gbs: f.dram_gbs,
            l2_gbs: f.l2_gbs,
        }
    }

    /// The (DRAM, L2) roofs `sms` of its SMs reach alone: the DRAM share the models
    /// give a partition ([`Figures::spec`] of [`Gpu::partition`] over the whole GPU's),
    /// and the L2 bandwidth in proportion to the SMs, as [`Gpu::partition`] scales it.
    pub fn partition(&self, sms: u32) -> (f64, f64) {
        let whole = Figures::spec(&self.gpu);
        let part = Figures::spec(&self.gpu.partition(sms));
        let sm_share = sms as f64 / self.gpu.sm_count as f64;
        (
            self.dram_gbs * part.dram_gbs / whole.dram_gbs,
            self.l2_gbs * sm_share,
        )
    }
}

/// What one kernel of a set meets at each shared level: its memory-bound share (its
/// demand over the roof its own SMs reach alone, at most 1) and the bandwidth the
/// other kernels of the set demand there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Load {
    pub dram_share: f64,
    pub l2_share: f64,
    pub dram_others_gbs: f64,
    pub l2_others_gbs: f64,
}

/// Each kernel's [`Load`] when `set` runs together on a GPU of `roofs`.
pub fn loads(set: &[CorunKernel], roofs: &Roofs) -> Vec<Load> {
    let dram_total: f64 = set.iter().map(CorunKernel::dram_demand_gbs).sum();
    let l2_total: f64 = set.iter().map(CorunKernel::l2_demand_gbs).sum();
    set.iter()
        .map(|k| {
            let (own_dram, own_l2) = roofs.partition(k.sm_count);
            let (d, l) = (k.dram_demand_gbs(), k.l2_demand_gbs());
            Load {
                dram_share: (d / own_dram).min(1.0),
                l2_share: (l / own_l2).min(1.0),
                dram_others_gbs: dram_total - d,
                l2_others_gbs: l2_total - l,
            }
        })
        .collect()
}

impl Load {
    /// The slowdown (time together / alone) with the shared roofs scaled by
    /// `roof_scale`: the larger of the two levels' stretches of the memory-bound share.
    pub fn slowdown(&self, roofs: &Roofs, roof_scale: f64) -> f64 {
        let dram = 1.0 + self.dram_share * self.dram_others_gbs / (roof_scale * roofs.dram_gbs);
        let l2 = 1.0 + self.l2_share * self.l2_others_gbs / (roof_scale * roofs.l2_gbs);
        dram.max(l2)
    }
}

/// A measured co-run set: the kernels (each alone and together) on one GPU.
#[derive(Debug, Clone)]
pub struct CorunSet {
    /// The catalog's name of the GPU.
    pub gpu: String,
    pub kernels: Vec<CorunKernel>,
    /// Each kernel's measured time together, in the order of `kernels`.
    pub time_together_ms: Vec<f64>,
    pub date: String,
    pub commit: String,
}

/// Parameters of the co-run model: the candidate roof scales.
#[derive(Debug, Clone, PartialEq)]
pub struct CorunParams {
    roof_scales: Vec<f64>,
}

impl Default for CorunParams {
    /// Roof scales 0.25 to 3 in steps of 0.05.
    fn default() -> Self {
        CorunParams {
            roof_scales: (5..=60).map(|i| i as f64 * 0.05).collect(),
        }
    }
}

impl CorunParams {
    /// Parameters with these candidate roof scales (each finite and positive).
    pub fn with_roof_scales(roof_scales: Vec<f64>) -> Result<CorunParams> {
        if roof_scales.is_empty() {
            return Err(Error::invalid("roof_scales", "no candidate roof scale"));
        }
        if let Some(s) = roof_scales.iter().find(|s| !(s.is_finite() && **s > 0.0)) {
            return Err(Error::invalid(
                "roof_scales",
                format!("{s} is not a positive number"),
            ));
        }
        Ok(CorunParams { roof_scales })
    }

    /// The roof scale of the least mean absolute error of the together-time over
    /// `sets` (each with its kernels' loads).
    fn best_scale(&self, sets: &[Prepared]) -> f64 {
        let mut best = (f64::INFINITY, self.roof_scales[0]);
        for &scale in &self.roof_scales {
            let err: f64 = sets
                .iter()
                .flat_map(|p| p.log_errors(scale))
                .map(|l| ((-l).exp() - 1.0).abs())
                .sum();
            if err < best.0 {
                best = (err, scale);
            }
        }
        best.1
    }

    /// Fit on measured sets, each with its GPU's roofs: the roof scale, and the
    /// interval from each training set's errors when it is held out (the scale fitted
    /// on the others).
    pub fn fit(&self, sets: &[(&CorunSet, &Roofs)]) -> Result<FittedCorun> {
        if sets.len() < 2 {
            return Err(Error::model(format!(
                "the co-run model needs at least 2 measured sets to fit and hold out, got {}",
                sets.len()
            )));
        }
        let prepared: Vec<Prepared> = sets.iter().map(|(s, r)| Prepared::new(s, r)).collect();
        let roof_scale = self.best_scale(&prepared);
        let mut held_out = Vec::new();
        let mut rest = Vec::with_capacity(prepared.len());
        for (i, p) in prepared.iter().enumerate() {
            rest.clear();
            rest.extend(prepared[..i].iter().chain(&prepared[i + 1..]).cloned());
            let scale = self.best_scale(&rest);
            held_out.extend(p.log_errors(scale).map(|ln_error| HeldOutError {
                gpu: 0,
                ln_error,
                launch_bound: false,
            }));
        }
        let (lo, hi) = interval_log(&held_out).ok_or_else(|| {
            Error::model(format!(
                "the co-run model's interval needs more held-out kernels than the {} of {} sets",
                held_out.len(),
                sets.len()
            ))
        })?;
        Ok(FittedCorun {
            roof_scale,
            interval_log: (lo, hi),
            training_slowdown: mean_slowdown(sets.iter().map(|(s, _)| *s)),
        })
    }
}

/// A measured set ready for fitting: each kernel's load, alone and together times.
#[derive(Clone)]
struct Prepared<'a> {
    roofs: &'a Roofs,
    loads: Vec<Load>,
    set: &'a CorunSet,
}

impl<'a> Prepared<'a> {
    fn new(set: &'a CorunSet, roofs: &'a Roofs) -> Prepared<'a> {
        Prepared {
            roofs,
            loads: loads(&set.kernels, roofs),
            set,
        }
    }
    /// ln(measured / predicted) of each kernel's together-time with `scale`.
    fn log_errors(&self, scale: f64) -> impl Iterator<Item = f64> + '_ {
        self.loads
            .iter()
            .zip(&self.set.kernels)
            .zip(&self.set.time_together_ms)
            .map(move |((l, k), t)| (t / (k.time_alone_ms * l.slowdown(self.roofs, scale))).ln())
    }
}

/// The mean measured slowdown (together / alone) over every kernel of `sets`.
pub fn mean_slowdown<'a>(sets: impl Iterator<Item = &'a CorunSet>) -> f64 {
    let (sum, n) = sets
        .flat_map(|s| s.kernels.iter().zip(&s.time_together_ms))
        .fold((0.0, 0usize), |(sum, n), (k, t)| {
            (sum + t / k.time_alone_ms, n + 1)
        });
    sum / n.max(1) as f64
}

/// The fitted co-run model.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct FittedCorun {
    /// The share of each shared roof the co-runners' demand is measured against.
    pub roof_scale: f64,
    /// The 90 % interval's bounds as ln(measured / predicted).
    pub interval_log: (f64, f64),
    /// The training sets' mean slowdown (the fixed-slowdown baseline).
    pub training_slowdown: f64,
}

/// One kernel's predicted time together.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CorunPrediction {
    pub kernel: String,
    pub config: String,
    pub sm_count: u32,
    pub time_alone_ms: f64,
    pub time_together_ms: f64,
    pub slowdown: f64,
    pub low_ms: f64,
    pub high_ms: f64,
}

impl FittedCorun {
    /// Each kernel's time when `set` runs together on a GPU of `roofs`, with its
    /// 90 % interval ([`super::INTERVAL_LEVEL`]).
    pub fn predict(&self, set: &[CorunKernel], roofs: &Roofs) -> Vec<CorunPrediction> {
        loads(set, roofs)
            .iter()
            .zip(set)
            .map(|(l, k)| {
                let s = l.slowdown(roofs, self.roof_scale);
                let t = k.time_alone_ms * s;
                CorunPrediction {
                    kernel: k.kernel.clone(),
                    config: k.config.clone(),
                    sm_count: k.sm_count,
                    time_alone_ms: k.time_alone_ms,
                    time_together_ms: t,
                    slowdown: s,
                    low_ms: t * self.interval_log.0.exp(),
                    high_ms: t * self.interval_log.1.exp(),
                }
            })
            .collect()
    }
}

/// What a profile (or the timed run) says of one launch's memory traffic.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LaunchBytes {
    pub dram_bytes: f64,
    pub l2_bytes: Option<f64>,
    pub l2_slice_imbalance: Option<f64>,
}

/// The DRAM and L2 bytes (and L2 slice imbalance) of one launch of `kernel` /
/// `config` on `gpu` among `runs`: from a profile (a run with `l2_bytes`) of the same
/// kernel and launch geometry (`block_threads`, `grid_blocks`; profiles key
/// configurations by geometry), else the `dram_bytes` of the timed run itself, without
/// L2 figures.
pub fn launch_bytes(runs: &[Run], gpu: &str, kernel: &str, config: &str) -> Option<LaunchBytes> {
    let timed = runs
        .iter()
        .find(|r| &*r.gpu == gpu && &*r.kernel == kernel && &*r.config == config)?;
    let geometry = |r: &Run| (r.numeric("block_threads"), r.numeric("grid_blocks"));
    let profiled = runs.iter().find(|r| {
        &*r.gpu == gpu
            && &*r.kernel == kernel
            && r.numeric("l2_bytes").is_some()
            && geometry(r) == geometry(timed)
            && geometry(r).0.is_some()
    });
    Some(match profiled {
        Some(p) => LaunchBytes {
            dram_bytes: p.dram_bytes,
            l2_bytes: p.numeric("l2_bytes"),
            l2_slice_imbalance: p.numeric("l2_slice_imbalance"),
        },
        None => LaunchBytes {
            dram_bytes: timed.dram_bytes,
            l2_bytes: None,
            l2_slice_imbalance: None,
        },
    })
}

/// Least time together / time alone a co-run row may have. Running beside another
/// kernel takes nothing from the SMs of a kernel's own partition, so it is never
/// faster together than alone but for timing noise (a few percent: the runner's
/// `time_cv`) and clock changes (boost varies by well under 2x); half its time alone
/// is a wrong row, not noise.
pub const MIN_SLOWDOWN: f64 = 0.5;

/// How [`read_sets`] learns a co-run file's GPU: its catalog name and SM count, or why
/// the name names none.
pub type GpuOf<'a> = dyn Fn(&str) -> std::result::Result<(String, u32), String> + 'a;

/// A set's key in a co-run file: GPU, date, commit and its kernels, sorted.
type SetKey = (String, String, String, Vec<String>);

/// Read a co-run file (`gpucast-bench corun`: one row per kernel of a set, columns
/// [`CORUN_COLUMNS`]) into sets, the bytes of each kernel from `runs` (the same GPU's
/// runs and profiles, [`launch_bytes`]). A set is the rows of one GPU, date and
/// commit whose kernel and co-runners name the same kernels; each must have one row
/// per kernel. `gpu_of` maps the file's GPU name to the catalog's and its SM count
/// (Err: why it names no GPU). A partition larger than its GPU, or a time beyond what
/// a runs table takes ([`upper_bound`]), is an error.
pub fn read_sets(path: &Path, runs: &[Run], gpu_of: &GpuOf) -> Result<Vec<CorunSet>> {
    let file = path.display().to_string();
    let text =
        crate::files::read_to_string(path).map_err(|e| Error::io_error(&file, "reading", e))?;
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .flexible(true)
        .from_reader(text.as_bytes());
    let malformed = |e: csv::Error| {
        let line = e.position().map_or(0, |p| p.line());
        Error::file(&file, format!("line {line}: not a CSV row: {e}"))
    };
    let header = reader.headers().map_err(malformed)?.clone();
    if header.is_empty() {
        return Err(Error::file(
            &file,
            "empty file: expected a header naming the co-run columns",
        ));
    }
    let col = |name: &str| {
        header.iter().position(|h| h == name).ok_or_else(|| {
            Error::file(
                &file,
                format!(
                    "line 1: no column '{name}' (a co-run file has {})",
                    CORUN_COLUMNS.join(", ")
                ),
            )
        })
    };
    let idx: Vec<usize> = CORUN_COLUMNS
        .iter()
        .map(|c| col(c))
        .collect::<Result<_>>()?;
    let mut groups: BTreeMap<SetKey, Vec<(usize, CorunKernel, f64)>> = BTreeMap::new();
    for record in reader.records() {
        let f = record.map_err(malformed)?;
        if f.iter().all(str::is_empty) {
            continue;
        }
        let n = f.position().map_or(0, |p| p.line() as usize);
        let field = |c: usize| -> Result<&str> {
            f.get(idx[c]).ok_or_else(|| {
                Error::file(
                    &file,
                    format!("line {n}: no value in column '{}'", CORUN_COLUMNS[c]),
                )
            })
        };
        let number = |c: usize, min: f64, max: f64| -> Result<f64> {
            let v = field(c)?;
            let column = CORUN_COLUMNS[c];
            let x = v
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x > 0.0)
                .ok_or_else(|| {
                    Error::file(
                        &file,
                        format!("line {n}, column '{column}': '{v}' is not a positive number"),
                    )
                })?;
            if x > max {
                return Err(Error::file(
                    &file,
                    format!("line {n}, column '{column}': {v} is above {max}"),
                ));
            }
            if x < min {
                return Err(Error::file(
                    &file,
                    format!("line {n}, column '{column}': {v} is below {min}, faster than any kernel launch"),
                ));
            }
            Ok(x)
        };
        let gpu_raw = field(0)?;
        let (gpu, gpu_sms) = gpu_of(gpu_raw).map_err(|why| {
            Error::file(
                &file,
                format!("line {n}, column 'gpu': '{gpu_raw}' names no GPU of the catalog: {why}"),
            )
        })?;
        let kernel = field(1)?.to_string();
        // (canonical, as the runs' configurations are: parameters in any order)
        let config = field(2)?;
        let config = gpucast_runs::canonical_config(config).unwrap_or_else(|_| config.to_string());
        let sm_count = number(3, 0.0, f64::from(gpu_sms))?;
        if sm_count.fract() != 0.0 {
            return Err(Error::file(
                &file,
                format!("line {n}, column 'sm_count': {sm_count} is not a whole number of SMs"),
            ));
        }
        let max_ms = upper_bound("time_ms").unwrap_or(f64::INFINITY);
        let min_ms = crate::data::validate::LAUNCH_FLOOR_MS;
        let time_alone_ms = number(6, min_ms, max_ms)?;
        let together = number(7, min_ms, max_ms)?;
        if together < MIN_SLOWDOWN * time_alone_ms {
            return Err(Error::file(
                &file,
                format!(
                    "line {n}, column 'time_together_ms': {together} ms together is {:.3}x its {time_alone_ms} ms alone; a kernel sharing its GPU is not {}x faster than alone (the times are swapped or from another run)",
                    together / time_alone_ms,
                    1.0 / MIN_SLOWDOWN
                ),
            ));
        }
        let bytes = launch_bytes(runs, &gpu, &kernel, &config).ok_or_else(|| {
            Error::file(
                &file,
                format!("line {n}: no run of {kernel} ({config}) on {gpu} gives its bytes"),
            )
        })?;
        let mut members: Vec<String> = field(4)?.split('+').map(str::to_string).collect();
        members.push(kernel.clone());
        members.sort();
        let key = (gpu, field(9)?.to_string(), field(10)?.to_string(), members);
        groups.entry(key).or_default().push((
            n,
            CorunKernel {
                kernel,
                config,
                sm_count: sm_count as u32,
                time_alone_ms,
                dram_bytes: bytes.dram_bytes,
                l2_bytes: bytes.l2_bytes,
                l2_slice_imbalance: bytes.l2_slice_imbalance,
            },
            together,
        ));
    }
    groups
        .into_iter()
        .map(|((gpu, date, commit, members), rows)| {
            if rows.len() != members.len() {
                return Err(Error::file(
                    &file,
                    format!(
                        "line {}: the set {} has {} rows, not one per kernel",
                        rows[0].0,
                        members.join("+"),
                        rows.len()
                    ),
                ));
            }
            let (kernels, time_together_ms) = rows.into_iter().map(|(_, k, t)| (k, t)).unzip();
            Ok(CorunSet {
                gpu,
                kernels,
                time_together_ms,
                date,
                commit,
            })
        })
        .collect()
}

/// Each kernel's time alone on a partition of `target` (a catalog GPU): `(kernel,
/// config, SMs)`, predicted by the analytical model from `runs` (validated): every
/// timed run on a whole GPU or on an SM partition, a partition being a GPU of its own
/// (the catalog's [`Gpu::partition`]), so the nearest measured slice of a GPU like
/// the target weighs most. Profiles (runs with L2 bytes) time one launch under the
/// profiler and are left out. None where no run measured the work.
pub fn predicted_alone_ms(
    runs: &[Run],
    catalog: &crate::catalog::Catalog,
    target: &str,
    works: &[(&str, &str, u32)],
) -> Result<Vec<Option<f64>>> {
    use crate::data::Exclusion;
    let mut sources: Vec<Run> = runs
        .iter()
        .filter(|r| {
            r.numeric("l2_bytes").is_none()
                && matches!(r.exclusion, None | Some(Exclusion::SmPartition { .. }))
        })
        .cloned()
        .collect();
    let mut parts = crate::data::move_partition_runs(&mut sources);
    parts.extend(works.iter().map(|w| (target.to_string(), w.2)));
    let catalog = catalog.with_partitions(&parts)?;
    let calibration = crate::features::Calibration::Spec;
    let ctx = super::Context::new(&catalog, &calibration, None);
    let training: Vec<&Run> = sources.iter().collect();
    use super::Fit;
    let model = super::ModelSpec::parse("analytical", 0)?.fit(&training, &ctx)?;
    let evidence = super::Evidence::new(sources.iter());
    let mut buffer = crate::data::Query::default();
    works
        .iter()
        .map(|&(kernel, config, sms)| {
            let Some(work) = sources
                .iter()
                .find(|r| &*r.kernel == kernel && &*r.config == config)
            else {
                return Ok(None);
            };
            let part = crate::catalog::partition_name(target, sms);
            Ok(model
                .predict_work(work, &part, &mut buffer, &evidence, &ctx)?
                .map(|p| p.pred_ms))
        })
        .collect()
}

/// Where a kernel's time alone on its partition comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AloneSource {
    /// A run of the work on the GPU with that many SMs.
    Measured,
    /// The analytical model's projection from the runs on whole GPUs and partitions
    /// ([`predicted_alone_ms`]).
    Predicted,
}

impl AloneSource {
    pub fn name(self) -> &'static str {
        match self {
            AloneSource::Measured => "measured",
            AloneSource::Predicted => "predicted",
        }
    }
}

/// The co-run kernel `kernel` (of `config`, or its only configuration on `gpu`) on
/// `sms` SMs of `gpu` from `runs` (validated): its time alone measured there (a run
/// whose `sm_count` is `sms`, or a whole-GPU run when `sms` is all of them), else
/// predicted from the runs on whole GPUs and partitions ([`predicted_alone_ms`]); its
/// bytes from [`launch_bytes`].
pub fn kernel_on(
    table: &crate::data::RunsTable,
    catalog: &crate::catalog::Catalog,
    gpu: &Gpu,
    kernel: &str,
    config: Option<&str>,
    sms: u32,
) -> Result<(CorunKernel, AloneSource)> {
    use crate::error::Input;
    table.require_kernel(Input::Kernel, kernel)?;
    // (profiles, the runs with L2 bytes, time one launch under the profiler: bytes only)
    let timed =
        |r: &&Run| *r.gpu == gpu.name && &*r.kernel == kernel && r.numeric("l2_bytes").is_none();
    let mut configs: Vec<&str> = table
        .runs
        .iter()
        .filter(timed)
        .map(|r| &*r.config)
        .collect();
    configs.sort_unstable();
    configs.dedup();
    // A configuration is its parameters' names and values, in any order and spelling
    // of a number ("b=2,a=1" is "a=1,b=2"): the table's are canonical, so is the ask.
    let canonical =
        config.map(|c| gpucast_runs::canonical_config(c).unwrap_or_else(|_| c.trim().to_string()));
    let config = match (canonical.as_deref(), configs.as_slice()) {
        (Some(c), _) if configs.contains(&c) => c.to_string(),
        (Some(c), _) => {
            return Err(Error::usage(format!(
                "{kernel} has no run of configuration '{c}' on {} (its configurations there: {})",
                gpu.name,
                configs.join(" | ")
            )))
        }
        (None, [one]) => one.to_string(),
        (None, []) => return Err(Error::usage(format!("{kernel} has no run on {}", gpu.name))),
        (None, many) => {
            return Err(Error::usage(format!(
            "{kernel} has {} configurations on {}: name one as {kernel}@CONFIG (e.g. {kernel}@{})",
            many.len(),
            gpu.name,
            many[0]
        )))
        }
    };
    let run_sms = |r: &Run| r.numeric("sm_count").map_or(gpu.sm_count, |s| s as u32);
    let measured = table
        .runs
        .iter()
        .filter(timed)
        .find(|r| *r.config == *config && run_sms(r) == sms)
        .map(|r| r.time_ms);
    let (time_alone_ms, source) = match measured {
        Some(t) => (t, AloneSource::Measured),
        None => {
            let t = predicted_alone_ms(&table.runs, catalog, &gpu.name, &[(kernel, &config, sms)])?[0]
                .ok_or_else(|| {
                    Error::usage(format!(
                        "{kernel} ({config}) is not measured on {sms} SMs of {} and no whole-GPU run predicts it",
                        gpu.name
                    ))
                })?;
            (t, AloneSource::Predicted)
        }
    };
    let bytes = launch_bytes(&table.runs, &gpu.name, kernel, &config)
        .expect("a timed run of this work exists");
    Ok((
        CorunKernel {
            kernel: kernel.to_string(),
            config,
            sm_count: sms,
            time_alone_ms,
            dram_bytes: bytes.dram_bytes,
            l2_bytes: bytes.l2_bytes,
            l2_slice_imbalance: bytes.l2_slice_imbalance,
        },
        source,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;

    /// SYNTHETIC roofs: the built-in H100's SMs, round DRAM and L2 roofs.
    fn roofs() -> Roofs {
        let gpu = Catalog::builtin().resolve("H100 SXM5").unwrap().clone();
        Roofs {
            gpu,
            dram_gbs: 1000.0,
            l2_gbs: 4000.0,
        }
    }

    /// SYNTHETIC kernel: `dram_gbs` demanded over 1 ms alone.
    fn kernel(name: &str, sms: u32, dram_gbs: f64, l2_gbs: Option<f64>) -> CorunKernel {
        CorunKernel {
            kernel: name.into(),
            config: "n=1".into(),
            sm_count: sms,
            time_alone_ms: 1.0,
            dram_bytes: dram_gbs * 1e6,
            l2_bytes: l2_gbs.map(|g| g * 1e6),
            l2_slice_imbalance: None,
        }
    }

    #[test]
    fn each_kernel_is_stretched_by_what_the_others_draw_over_the_roof() {
        let r = roofs();
        let all = r.gpu.sm_count;
        // whole-GPU partitions: each kernel's own roof is the shared one
        let (dram, l2) = r.partition(all);
        assert!((dram - 1000.0).abs() < 1e-9 && (l2 - 4000.0).abs() < 1e-9);
        // a: 1500 GB/s demanded, memory-bound share capped at 1; b: 250, share 0.25
        let set = [
            kernel("a", all, 1500.0, None),
            kernel("b", all, 250.0, None),
        ];
        let s: Vec<f64> = loads(&set, &r)
            .iter()
            .map(|l| l.slowdown(&r, 1.0))
            .collect();
        assert!((s[0] - 1.25).abs() < 1e-12, "{s:?}");
        assert!((s[1] - 1.375).abs() < 1e-12, "{s:?}");
        // a larger roof scale halves the stretch
        let s2 = loads(&set, &r)[0].slowdown(&r, 2.0);
        assert!((s2 - 1.125).abs() < 1e-12);
        // L2 binds when it stretches more: 2000 + 2000 GB/s of 4000, each share 0.5
        let set = [
            kernel("a", all, 0.0, Some(2000.0)),
            kernel("b", all, 0.0, Some(2000.0)),
        ];
        for l in loads(&set, &r) {
            assert!((l.slowdown(&r, 1.0) - 1.25).abs() < 1e-12);
        }
    }

    #[test]
    fn a_kernel_without_memory_traffic_and_a_lone_kernel_are_not_slowed() {
        let r = roofs();
        let set = [
            kernel("compute", 66, 0.0, Some(0.0)),
            kernel("stream", 66, 900.0, None),
        ];
        let l = loads(&set, &r);
        assert_eq!(l[0].slowdown(&r, 1.0), 1.0);
        assert_eq!(l[1].slowdown(&r, 1.0), 1.0);
        let alone = [kernel("stream", 132, 900.0, None)];
        assert_eq!(loads(&alone, &r)[0].slowdown(&r, 0.5), 1.0);
    }

    #[test]
    fn l2_demand_counts_at_the_busiest_slice_for_the_kernel_and_its_co_runners() {
        let r = roofs();
        let all = r.gpu.sm_count;
        let with = |imbalance: Option<f64>| {
            let mut hot = kernel("hot", all, 0.0, Some(1000.0));
            hot.l2_slice_imbalance = imbalance;
            [hot, kernel("even", all, 0.0, Some(1000.0))]
        };
        let slowdowns = |set: &[CorunKernel]| -> Vec<f64> {
            loads(set, &r).iter().map(|l| l.slowdown(&r, 1.0)).collect()
        };
        // even traffic (or none recorded): 1000 + 1000 GB/s of 4000, shares 0.25
        for even in [None, Some(1.0)] {
            let s = slowdowns(&with(even));
            assert!((s[0] - 1.0625).abs() < 1e-12 && (s[1] - 1.0625).abs() < 1e-12);
        }
        // 3x on its busiest slice: it counts 3000 GB/s (share 0.75, 1000 from the
        // other: 1 + 0.75 / 4), and the other meets 3000 (1 + 0.25 * 3 / 4)
        let set = with(Some(3.0));
        assert!((set[0].l2_demand_gbs() - 3000.0).abs() < 1e-9);
        let s = slowdowns(&set);
        assert!((s[0] - 1.1875).abs() < 1e-12, "{s:?}");
        assert!((s[1] - 1.1875).abs() < 1e-12, "{s:?}");
        // an imbalance without L2 bytes demands nothing
        let mut none = kernel("none", all, 0.0, None);
        none.l2_slice_imbalance = Some(5.0);
        assert_eq!(none.l2_demand_gbs(), 0.0);
    }

    #[test]
    fn launch_bytes_take_the_profile_of_the_same_geometry_with_its_imbalance() {
        // SYNTHETIC: a timed run and a profile of the same geometry (another key)
        let geometry = |r: &mut Run| {
            *r.numeric_mut("block_threads").unwrap() = Some(256.0);
            *r.numeric_mut("grid_blocks").unwrap() = Some(64.0);
        };
        let mut timed = Run {
            gpu: "G".into(),
            kernel: "k".into(),
            config: "N=16384,block=256".into(),
            time_ms: 1.0,
            dram_bytes: 1e6,
            ..Run::default()
        };
        geometry(&mut timed);
        let mut profile = timed.clone();
        profile.config = "block=256,grid=64".into();
        profile.dram_bytes = 9e5;
        profile.l2_bytes = Some(2e6);
        *profile.numeric_mut("l2_slice_imbalance").unwrap() = Some(4.5);
        let b = launch_bytes(&[timed.clone(), profile], "G", "k", "N=16384,block=256").unwrap();
        assert_eq!(
            b,
            LaunchBytes {
                dram_bytes: 9e5,
                l2_bytes: Some(2e6),
                l2_slice_imbalance: Some(4.5)
            }
        );
        let alone = launch_bytes(&[timed], "G", "k", "N=16384,block=256").unwrap();
        assert_eq!((alone.l2_bytes, alone.l2_slice_imbalance), (None, None));
        assert_eq!(alone.dram_bytes, 1e6);
    }

    #[test]
    fn a_partition_reaches_more_than_its_share_of_dram_but_its_share_of_l2() {
        let r = roofs();
        let (dram, l2) = r.partition(33);
        assert!((l2 - 1000.0).abs() < 1e-9);
        assert!(dram > 250.0 && dram <= 1000.0, "{dram}");
    }

    /// SYNTHETIC sets whose together-times follow the model at `scale` exactly.
    fn synthetic_sets(scale: f64, r: &Roofs) -> Vec<CorunSet> {
        (0..8)
            .map(|i| {
                let kernels = vec![
                    kernel("a", 64, 300.0 + 100.0 * i as f64, Some(900.0)),
                    kernel("b", 32, 500.0, Some(200.0 * i as f64)),
                    kernel("c", 32, 50.0 * i as f64, None),
                ];
                let time_together_ms = loads(&kernels, r)
                    .iter()
                    .zip(&kernels)
                    .map(|(l, k)| k.time_alone_ms * l.slowdown(r, scale))
                    .collect();
                CorunSet {
                    gpu: r.gpu.name.clone(),
                    kernels,
                    time_together_ms,
                    date: "d".into(),
                    commit: "c".into(),
                }
            })
            .collect()
    }

    #[test]
    fn fitting_recovers_the_roof_scale_of_exact_sets_and_a_zero_width_interval() {
        let r = roofs();
        let sets = synthetic_sets(0.8, &r);
        let train: Vec<_> = sets.iter().map(|s| (s, &r)).collect();
        let f = CorunParams::default().fit(&train).unwrap();
        assert!((f.roof_scale - 0.8).abs() < 1e-9, "{}", f.roof_scale);
        assert!(f.interval_log.0.abs() < 1e-9 && f.interval_log.1.abs() < 1e-9);
        let p = f.predict(&sets[3].kernels, &r);
        for (p, t) in p.iter().zip(&sets[3].time_together_ms) {
            assert!((p.time_together_ms - t).abs() < 1e-9);
            assert!((p.slowdown - t / p.time_alone_ms).abs() < 1e-9);
        }
        assert!(f.training_slowdown > 1.0);
    }

    #[test]
    fn parameters_and_fits_refuse_what_they_cannot_use() {
        assert!(CorunParams::with_roof_scales(vec![]).is_err());
        assert!(CorunParams::with_roof_scales(vec![1.0, -0.5]).is_err());
        assert!(CorunParams::with_roof_scales(vec![f64::NAN]).is_err());
        let r = roofs();
        let sets = synthetic_sets(1.0, &r);
        let one = [(&sets[0], &r)];
        assert!(CorunParams::default().fit(&one).is_err());
        // 5 sets of 3 kernels: 15 held-out errors, fewer than the interval needs
        let few: Vec<_> = sets.iter().map(|s| (s, &r)).collect();
        let p = CorunParams::with_roof_scales(vec![1.0]).unwrap();
        assert!(p.fit(&few[..5]).is_err());
    }

    #[test]
    fn co_run_files_group_rows_into_sets_and_name_the_line_of_bad_input() {
        // SYNTHETIC co-run file and runs
        let dir = tempfile::tempdir().unwrap();
        let head = CORUN_COLUMNS.join(",");
        let good = format!(
            "{head}\n\
             G,a,\"n=1,b=2\",64,b,3,1.0,1.5,1.5,d1,c1\n\
             G,b,n=1,64,a,3,2.0,2.2,1.1,d1,c1\n\
             G,a,\"n=1,b=2\",64,b,3,1.1,1.2,1.09,d2,c2\n\
             G,b,n=1,64,a,3,2.1,2.3,1.09,d2,c2\n"
        );
        let path = dir.path().join("corun.csv");
        std::fs::write(&path, &good).unwrap();
        let run = |k: &str, c: &str| Run {
            gpu: "G".into(),
            kernel: k.into(),
            config: c.into(),
            time_ms: 1.0,
            dram_bytes: 1e6,
            ..Run::default()
        };
        // (the runs' configurations are canonical; the co-run file's in any order)
        let runs = [run("a", "b=2,n=1"), run("b", "n=1")];
        let name = |g: &str| match g {
            "G" => Ok(("G".to_string(), 64)),
            _ => Err("not in the catalog".to_string()),
        };
        let sets = read_sets(&path, &runs, &name).unwrap();
        assert_eq!(sets.len(), 2);
        assert_eq!(sets[0].kernels.len(), 2);
        assert_eq!(sets[0].kernels[0].config, "b=2,n=1");
        assert_eq!(sets[0].time_together_ms, vec![1.5, 2.2]);
        assert_eq!(sets[0].kernels[1].dram_bytes, 1e6);

        let missing_row: String = good.lines().take(4).collect::<Vec<_>>().join("\n");
        std::fs::write(&path, missing_row).unwrap();
        let e = read_sets(&path, &runs, &name).unwrap_err().to_string();
        assert!(
            e.contains("line 4") && e.contains("not one per kernel"),
            "{e}"
        );

        std::fs::write(&path, good.replace("2.0,2.2", "2.0,fast")).unwrap();
        let e = read_sets(&path, &runs, &name).unwrap_err().to_string();
        assert!(e.contains("line 3, column 'time_together_ms'"), "{e}");

        std::fs::write(&path, good.replace("G,b", "X,b")).unwrap();
        let e = read_sets(&path, &runs, &name).unwrap_err().to_string();
        assert!(
            e.contains("line 3, column 'gpu': 'X' names no GPU of the catalog: not in the catalog"),
            "{e}"
        );

        // a partition of more SMs than the GPU has, a time no run takes
        std::fs::write(&path, good.replace("G,b,n=1,64", "G,b,n=1,99")).unwrap();
        let e = read_sets(&path, &runs, &name).unwrap_err().to_string();
        assert!(
            e.contains("line 3, column 'sm_count': 99 is above 64"),
            "{e}"
        );
        std::fs::write(&path, good.replace("2.0,2.2", "2.0,1e300")).unwrap();
        let e = read_sets(&path, &runs, &name).unwrap_err().to_string();
        assert!(
            e.contains("line 3, column 'time_together_ms': 1e300 is above 10000000"),
            "{e}"
        );
        std::fs::write(&path, good.replace("2.0,2.2", "2.0,1e-9")).unwrap();
        let e = read_sets(&path, &runs, &name).unwrap_err().to_string();
        let said =
            "line 3, column 'time_together_ms': 1e-9 is below 0.001, faster than any kernel launch";
        assert!(e.contains(said), "{e}");
        // faster together than alone: 0.01 ms beside a kernel, 2 ms alone
        std::fs::write(&path, good.replace("2.0,2.2", "2.0,0.01")).unwrap();
        let e = read_sets(&path, &runs, &name).unwrap_err().to_string();
        let said = "line 3, column 'time_together_ms': 0.01 ms together is 0.005x its 2 ms alone";
        assert!(e.contains(said), "{e}");
        // within noise of the time alone is a measurement
        std::fs::write(&path, good.replace("2.0,2.2", "2.0,1.9")).unwrap();
        assert!(read_sets(&path, &runs, &name).is_ok());
    }
}
