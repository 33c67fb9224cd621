//! The throughput figures a projection divides by: sustained DRAM and L2 bandwidth,
//! sustained compute, launch floor, atomic throughput. Where they come from is the
//! [`Calibration`]: the catalog's peaks times documented fractions (the default), the
//! catalog's measured fields (a calibration TOML merged with `--gpus`), or the reference
//! study's own `gpu_metrics.json` (to reproduce its table).

use crate::catalog::Gpu;
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::path::Path;

/// Share of peak DRAM bandwidth a streaming kernel sustains on a GPU the catalog has no
/// measured figure for (STREAM-like copies reach 80-95 % of the vendor figure on the
/// GPUs datasets/gpus_measured.toml measures). It matters where a measured GPU and an
/// unmeasured one meet: leave one corpus out, 18.1 % pooled with it, 18.3 % with the
/// vendor figure itself (NeuSight 21.5 against 22.1 %, the reference study 29.4
/// against 28.4 %).
pub const SUSTAINED_DRAM_FRACTION: f64 = 0.85;
/// Share of peak FP throughput a dense FMA loop sustains.
pub const SUSTAINED_COMPUTE_FRACTION: f64 = 0.90;
/// L2 bandwidth estimate when none is measured: 20 bytes per clock per SM, the order
/// microbenchmarks report for Volta and Turing (Jia et al., "Dissecting the NVIDIA
/// Volta/Turing GPU architecture via microbenchmarking": ~2.1 TB/s on a V100 with 80
/// SMs at 1.38 GHz, ~1.3 TB/s on a T4 with 40 SMs at 1.59 GHz), per SM so it scales.
/// It is a throughput roof: simple streaming kernels get far less from L2 residency
/// (at most 1.32x their DRAM rate on our H100 and H200, datasets/own/*/l2-sweep), but
/// capping the L2 roof at 2-4x the DRAM roof, which helps the analytical model on the
/// reference study (24.2 -> 22.4-23.2 % LOGO MAPE), makes the hybrid worse than it on
/// some targets (RTX 2080 Ti beside the Hopper GPUs +2.8 points at 4x).
pub const L2_BYTES_PER_CLOCK_PER_SM: f64 = 20.0;
/// DRAM bandwidth one SM sustains on its own, bytes per SM clock. An SM holds a
/// bounded number of memory requests in flight, so a slice of a GPU (a green context,
/// an SM partition) gets more than its SM share of the memory system, up to its SMs'
/// own limit or the whole GPU's bandwidth. Measured on 8-SM partitions of our H100 and
/// H200 (`datasets/own/*/sm8-2026-11-24`, a partition size the partition experiment
/// does not evaluate): the median of the suite's five streaming kernels at their
/// largest size is 15.7 and 15.8 (stream_read 7.2, stream_copy 13.1, stream_write 15.7,
/// saxpy 17.5, vector_add 17.3-17.5). With the SM share alone, the five, run on 16 of
/// the H100's 132 SMs, were predicted 1.16-1.95x too slow (geometric mean per kernel).
pub const SM_DRAM_BYTES_PER_CLOCK: f64 = 16.0;
/// L1 / shared-memory bandwidth: 128 bytes per clock per SM (32 banks of 4 bytes, the
/// CUDA C++ Programming Guide's shared-memory description; on Volta and later L1 and
/// shared memory are one SRAM with the same width). Only runs that carry profiled
/// L1 or shared traffic (Nsight Compute) use it.
pub const L1_BYTES_PER_CLOCK_PER_SM: f64 = 128.0;
/// Back-to-back launch interval when none is measured (µs). The reference study's tiny
/// kernels sit at 1.3-5.5 µs.
pub const DEFAULT_LAUNCH_OVERHEAD_US: f64 = 1.5;
/// Contended (same-address) atomic throughput, bytes of the study's accounting per clock:
/// about 0.6 warp-aggregated atomics per L2 clock x 32 lanes x 8 bytes. Only its
/// scaling with the clock matters for a projection; the constant decides when the
/// atomic roof binds.
pub const ATOMIC_BYTES_PER_CLOCK: f64 = 160.0;

/// Board power per SM (W) below which a GPU cannot hold its boost clock under sustained
/// compute load: its power limit, not its clock table, sets the clock. Dynamic power
/// goes as f·V² with the voltage following the clock, so the clock the limit allows
/// goes as the cube root of the power per SM ([`power_limited_clock_factor`]). The
/// figure is where boards begin to throttle on third-party timings this project does
/// not ship (inference boards of the Turing, Ampere and Ada generations at 1.2-2.5
/// W/SM run well below boost under FMA or tensor load; boards at 3 W/SM and above hold
/// it), not a value fitted to any corpus here. Judged leave-one-corpus-out on the
/// shipped corpora, the analytical model is 19.4 % with it and 19.5 % without, no
/// corpus more than 0.2 points worse.
pub const SM_POWER_AT_BOOST_W: f64 = 3.0;

/// The share of its boost clock `gpu` sustains under compute load: 1 when its board
/// power per SM is at least [`SM_POWER_AT_BOOST_W`], else the cube root of the
/// ratio (a 72 W board of 58 SMs: (1.24 / 3)^(1/3) = 0.745). 1 when the catalog gives
/// no power.
pub fn power_limited_clock_factor(gpu: &Gpu) -> f64 {
    match gpu.tdp_w {
        Some(tdp) if tdp > 0.0 && gpu.sm_count > 0 => {
            // a partition draws its share of the board's power
            let sms = gpu.partition_of_sms.unwrap_or(gpu.sm_count) as f64;
            (tdp / sms / SM_POWER_AT_BOOST_W).cbrt().min(1.0)
        }
        _ => 1.0,
    }
}

/// The whole GPU's sustained DRAM bandwidth: its measured figure where the catalog has
/// one (`sustained_bandwidth_gbs`, e.g. datasets/gpus_measured.toml), else the vendor
/// figure times [`SUSTAINED_DRAM_FRACTION`].
pub fn sustained_dram_gbs(gpu: &Gpu) -> f64 {
    gpu.sustained_bandwidth_gbs
        .unwrap_or(gpu.mem_bandwidth_gbs * SUSTAINED_DRAM_FRACTION)
}

/// Throughput figures of one GPU.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Figures {
    pub dram_gbs: f64,
    pub l2_gbs: f64,
    /// L1 / shared-memory bandwidth summed over the SMs.
    pub l1_gbs: f64,
    /// Sustained / peak compute, applied to the peak of the run's precision.
    pub compute_fraction: f64,
    pub launch_ms: f64,
    pub atomic_gbs: f64,
}

impl Figures {
    pub fn compute_gflops(&self, gpu: &Gpu, precision: &str) -> f64 {
        self.sustained_gflops(gpu.peak_gflops(precision))
    }

    /// The sustained compute rate for a peak of `peak_gflops`.
    pub fn sustained_gflops(&self, peak_gflops: f64) -> f64 {
        peak_gflops * self.compute_fraction
    }

    /// Catalog peaks times the documented sustained fractions, compute also times the
    /// clock a power-limited board holds ([`power_limited_clock_factor`]; measured DRAM
    /// and L2 bandwidth and launch overhead are used when the catalog has them,
    /// [`sustained_dram_gbs`]); a partition's DRAM roof is
    /// what its SMs draw: at least their share of the memory system
    /// ([`Gpu::memory_share`]), as much as [`SM_DRAM_BYTES_PER_CLOCK`] per SM allows,
    /// at most the whole GPU's.
    pub fn spec(gpu: &Gpu) -> Figures {
        let clock_ghz = gpu.boost_clock_mhz / 1e3;
        let whole_dram_gbs = sustained_dram_gbs(gpu);
        let own_sms_gbs = SM_DRAM_BYTES_PER_CLOCK * gpu.sm_count as f64 * clock_ghz;
        Figures {
            dram_gbs: whole_dram_gbs
                * gpu
                    .memory_share()
                    .max((own_sms_gbs / whole_dram_gbs).min(1.0)),
            l2_gbs: gpu
                .l2_bandwidth_gbs
                .unwrap_or(L2_BYTES_PER_CLOCK_PER_SM * gpu.sm_count as f64 * clock_ghz),
            l1_gbs: L1_BYTES_PER_CLOCK_PER_SM * gpu.sm_count as f64 * clock_ghz,
            compute_fraction: SUSTAINED_COMPUTE_FRACTION * power_limited_clock_factor(gpu),
            launch_ms: gpu.launch_overhead_us.unwrap_or(DEFAULT_LAUNCH_OVERHEAD_US) * 1e-3,
            atomic_gbs: ATOMIC_BYTES_PER_CLOCK * clock_ghz,
        }
    }

    /// The catalog's measured fields; an error names the first one missing.
    pub fn measured(gpu: &Gpu) -> Result<Figures> {
        let need = |v: Option<f64>, field: &str| {
            v.ok_or_else(|| Error::NoMeasuredFigure {
                gpu: gpu.name.clone(),
                field: field.to_string(),
            })
        };
        let spec = Figures::spec(gpu);
        Ok(Figures {
            dram_gbs: need(gpu.sustained_bandwidth_gbs, "sustained_bandwidth_gbs")?,
            compute_fraction: need(gpu.sustained_fp32_gflops, "sustained_fp32_gflops")?
                / gpu.fp32_gflops,
            l2_gbs: gpu.l2_bandwidth_gbs.unwrap_or(spec.l2_gbs),
            l1_gbs: spec.l1_gbs,
            launch_ms: gpu
                .launch_overhead_us
                .map(|u| u * 1e-3)
                .unwrap_or(spec.launch_ms),
            atomic_gbs: spec.atomic_gbs,
        })
    }
}

/// Where figures come from, by name: what `--target-calibration` and an experiment's
/// `calibration` / `study_calibration` say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FiguresSource {
    /// Catalog peaks x documented sustained fractions
    #[default]
    Spec,
    /// Measured figures of the catalog (a calibration TOML passed with --gpus)
    Measured,
    /// The reference study's gpu_metrics.json (beside the data, or given)
    Study,
}

impl FiguresSource {
    /// The name experiment files and `--target-calibration` use.
    pub fn name(self) -> &'static str {
        match self {
            FiguresSource::Spec => "spec",
            FiguresSource::Measured => "measured",
            FiguresSource::Study => "study",
        }
    }
}

/// The reference study's `gpu_metrics.json` beside the data (in a data directory, or
/// beside a data file), if there is one: the study's own figures for
/// `analytical-study`.
pub fn study_metrics_beside(data: &[std::path::PathBuf]) -> Option<std::path::PathBuf> {
    data.iter()
        .map(|d| {
            if d.is_dir() {
                d.join("gpu_metrics.json")
            } else {
                d.with_file_name("gpu_metrics.json")
            }
        })
        .find(|p| p.exists())
}

/// Where target (and source) figures come from.
#[derive(Debug, Clone, Default)]
pub enum Calibration {
    /// Catalog peaks x documented fractions.
    #[default]
    Spec,
    /// Measured fields of the catalog (merged calibration TOML).
    Measured,
    /// The reference study's `gpu_metrics.json` "sustained" figures, by GPU name
    /// (catalog-resolved); GPUs it lacks use the spec figures.
    Study(HashMap<String, (f64, f64)>),
}

impl Calibration {
    pub fn figures(&self, gpu: &Gpu) -> Result<Figures> {
        match self {
            Calibration::Spec => Ok(Figures::spec(gpu)),
            Calibration::Measured => Figures::measured(gpu),
            Calibration::Study(map) => {
                let mut f = Figures::spec(gpu);
                if let Some(&(bw, gflops)) = map.get(&gpu.name) {
                    f.dram_gbs = bw;
                    f.compute_fraction = gflops / gpu.fp32_gflops;
                }
                Ok(f)
            }
        }
    }

    /// The calibration `source` names; `study` needs the study's metrics file.
    pub fn new(
        source: FiguresSource,
        study_metrics: Option<&Path>,
        catalog: &crate::catalog::Catalog,
    ) -> Result<Calibration> {
        match source {
            FiguresSource::Spec => Ok(Calibration::Spec),
            FiguresSource::Measured => Ok(Calibration::Measured),
            FiguresSource::Study => match study_metrics {
                Some(p) => Calibration::from_study_metrics(p, catalog),
                None => Err(Error::NoStudyMetrics),
            },
        }
    }

    /// The figures `analytical-study` uses: `source` when given, else the study's own
    /// when its metrics file is known, else `fallback`.
    pub fn for_study(
        source: Option<FiguresSource>,
        study_metrics: Option<&Path>,
        fallback: &Calibration,
        catalog: &crate::catalog::Catalog,
    ) -> Result<Calibration> {
        match (source, study_metrics) {
            (Some(s), _) => Calibration::new(s, study_metrics, catalog),
            (None, Some(p)) => Calibration::from_study_metrics(p, catalog),
            (None, None) => Ok(fallback.clone()),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Calibration::Spec => "spec",
            Calibration::Measured => "measured",
            Calibration::Study(_) => "study",
        }
    }

    /// Read the study's `gpu_metrics.json`; names are resolved through the catalog.
    pub fn from_study_metrics(
        path: &Path,
        catalog: &crate::catalog::Catalog,
    ) -> Result<Calibration> {
        #[derive(serde::Deserialize)]
        struct Entry {
            device_name: String,
            sustained_bandwidth_gbps: f64,
            sustained_compute_gflops: f64,
        }
        let text = crate::files::read_to_string(path)
            .map_err(|e| Error::file(path.display(), e.to_string()))?;
        let entries: Vec<Entry> = serde_json::from_str(&text).map_err(|e| {
            Error::file(path.display(), format!("not a study gpu_metrics.json: {e}"))
        })?;
        let bad = |message: String| Error::file(path.display(), message);
        if entries.is_empty() {
            return Err(bad("no GPUs: the list is empty".into()));
        }
        let mut map = HashMap::new();
        for (i, e) in entries.into_iter().enumerate() {
            let at = |key: &str| json_key_place(&text, key, i);
            let gpu = catalog.resolve(&e.device_name).ok_or_else(|| {
                bad(format!(
                    "{}: unknown GPU '{}': {}",
                    at("device_name"),
                    e.device_name,
                    catalog.unresolved_hint(&e.device_name)
                ))
            })?;
            for (key, v, peak_key, peak) in [
                (
                    "sustained_bandwidth_gbps",
                    e.sustained_bandwidth_gbps,
                    "mem_bandwidth_gbs",
                    gpu.mem_bandwidth_gbs,
                ),
                (
                    "sustained_compute_gflops",
                    e.sustained_compute_gflops,
                    "fp32_gflops",
                    gpu.fp32_gflops,
                ),
            ] {
                if !(v.is_finite() && v > 0.0) {
                    return Err(bad(format!("{}: {key} must be > 0, found {v}", at(key))));
                }
                // (the catalog's own measured figures get the same slack)
                if v > crate::catalog::MEASURED_ABOVE_PEAK_SLACK * peak {
                    let v = if v < 1e15 {
                        format!("{v}")
                    } else {
                        format!("{v:e}")
                    };
                    return Err(bad(format!(
                        "{}: {key} {v} is above the catalog's peak for {} ({peak_key} {peak}): no measurement exceeds the peak",
                        at(key),
                        gpu.name
                    )));
                }
            }
            let figures = (e.sustained_bandwidth_gbps, e.sustained_compute_gflops);
            if map.insert(gpu.name.clone(), figures).is_some() {
                return Err(bad(format!(
                    "{}: {} is listed twice",
                    at("device_name"),
                    gpu.name
                )));
            }
        }
        Ok(Calibration::Study(map))
    }
}

/// "line L, column C" of the `n`-th (0-based) `"key":` in a JSON text (each entry of
/// the study's list names each field once), or "entry n + 1" when not found.
fn json_key_place(text: &str, key: &str, n: usize) -> String {
    let quoted = format!("\"{key}\"");
    text.match_indices(&quoted)
        .filter(|(at, _)| text[at + quoted.len()..].trim_start().starts_with(':'))
        .nth(n)
        .map(|(at, _)| {
            let (line, col) = crate::error::line_col(text, at);
            format!("line {line}, column {col}")
        })
        .unwrap_or_else(|| format!("entry {}", n + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Catalog, Gpu};

    /// A measurement that names the chip and memory size but not the board (gpu-benches'
    /// `a100_40`, `v100` triads) sets the DRAM roof of every board with that memory
    /// system; a board whose memory differs (the A100 80GB PCIe) keeps the sustained
    /// share of its vendor figure.
    #[test]
    fn boards_of_one_memory_system_share_its_measured_dram_figure() {
        let catalog = Catalog::builtin();
        let dram = |name: &str| Figures::spec(catalog.resolve(name).unwrap()).dram_gbs;
        assert_eq!(dram("A100 PCIe 40GB"), 1375.0);
        assert_eq!(dram("A100 SXM4 40GB"), 1375.0);
        for v100 in [
            "Tesla V100 PCIe 16GB",
            "Tesla V100 PCIe 32GB",
            "Tesla V100 SXM2 16GB",
            "Tesla V100 SXM2 32GB",
        ] {
            assert_eq!(dram(v100), 814.0, "{v100}");
        }
        assert!((dram("A100 PCIe 80GB") - 1935.0 * SUSTAINED_DRAM_FRACTION).abs() < 1e-9);
    }

    /// A whole GPU's DRAM roof is its measured sustained bandwidth, else the sustained
    /// share of the vendor peak; a slice's is what its SMs draw at 16 bytes per clock
    /// each, never below their SM share of that roof nor above it.
    #[test]
    fn a_partition_draws_what_its_sms_can() {
        let catalog = Catalog::builtin();
        let h100 = catalog.resolve("H100 SXM5").unwrap();
        let whole = Figures::spec(h100).dram_gbs;
        // gpucast-bench's triad on our H100 (datasets/gpus_measured.toml)
        assert_eq!(whole, 2743.2);
        let vendor = catalog.resolve("H100 PCIe").unwrap().clone();
        let unmeasured = Gpu {
            sustained_bandwidth_gbs: None,
            ..vendor
        };
        assert!(
            (Figures::spec(&unmeasured).dram_gbs - 2000.0 * SUSTAINED_DRAM_FRACTION).abs() < 1e-9
        );
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6 * b;
        // 16 SMs x 16 B x 1.98 GHz, 1.47x their 16/132 share
        let sixteen = Figures::spec(&h100.partition(16)).dram_gbs;
        assert!(close(sixteen, 16.0 * 16.0 * 1.98), "{sixteen}");
        assert!(sixteen > 1.4 * whole * 16.0 / 132.0);
        // 96 SMs could draw more than the whole memory system: they get all of it
        assert!(close(Figures::spec(&h100.partition(96)).dram_gbs, whole));
        // where the SMs' own limit is below their share (a GPU whose few SMs each
        // draw more than 16 B per clock), the share stays
        let mut wide = h100.clone();
        wide.mem_bandwidth_gbs = 20_000.0;
        wide.sustained_bandwidth_gbs = None;
        let p = wide.partition(16);
        assert!(close(
            Figures::spec(&p).dram_gbs,
            20_000.0 * SUSTAINED_DRAM_FRACTION * 16.0 / 132.0
        ));
    }
}
