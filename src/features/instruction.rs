//! The instruction roofline: a kernel as warp instructions per second (GIPS) against
//! its instruction intensity at a memory level (warp instructions per 32-byte
//! transaction), under the GPU's issue ceiling and its bandwidth ceilings recast as
//! transactions per second. Each formula lives here once; the chart is
//! `report::plots::instruction_roofline`.

use crate::catalog::Gpu;
use crate::data::Run;

/// Warp schedulers per SM: four on every NVIDIA SM since Maxwell (one per SM
/// sub-partition).
pub const SCHEDULERS_PER_SM: f64 = 4.0;
/// Warp instructions one scheduler issues per clock.
pub const WARP_INSTRUCTIONS_PER_SCHEDULER_CLOCK: f64 = 1.0;
/// Bytes of one transaction: an L1, L2 or DRAM sector (a shared-memory wavefront is
/// one transaction of the shared-memory ceiling).
pub const TRANSACTION_BYTES: f64 = 32.0;

/// The SM clock of the ceilings, MHz: measured where the catalog has one
/// (`measured.sm_clock_mhz`, a calibration merged with `--gpus`), else the boost clock.
pub fn sm_clock_mhz(gpu: &Gpu) -> f64 {
    gpu.measured
        .get("sm_clock_mhz")
        .copied()
        .unwrap_or(gpu.boost_clock_mhz)
}

/// Peak warp instructions per second, in billions (GIPS): SMs x 4 schedulers x 1 warp
/// instruction per clock x clock.
pub fn peak_gips(gpu: &Gpu) -> f64 {
    gpu.sm_count as f64
        * SCHEDULERS_PER_SM
        * WARP_INSTRUCTIONS_PER_SCHEDULER_CLOCK
        * sm_clock_mhz(gpu)
        / 1e3
}

/// The instruction-issue floor, ms: the time `inst_warp` warp instructions take to
/// issue at [`peak_gips`]. No kernel runs faster than its instructions issue.
pub fn issue_floor_ms(inst_warp: f64, gpu: &Gpu) -> f64 {
    inst_warp / (peak_gips(gpu) * 1e9) * 1e3
}

/// [`issue_floor_ms`] of a run that carries its warp instruction count (`inst_warp`,
/// e.g. from Nsight Compute); `None` without one.
pub fn run_issue_floor_ms(run: &Run, gpu: &Gpu) -> Option<f64> {
    run.details()
        .inst_warp
        .filter(|n| n.is_finite() && *n >= 0.0)
        .map(|n| issue_floor_ms(n, gpu))
}

/// A memory level of the instruction roofline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Global loads and stores at L1 (sectors).
    L1,
    /// Shared-memory loads and stores (wavefronts).
    Shared,
    L2,
    Dram,
}

impl Level {
    pub const ALL: [Level; 4] = [Level::L1, Level::Shared, Level::L2, Level::Dram];

    pub fn name(self) -> &'static str {
        match self {
            Level::L1 => "L1",
            Level::Shared => "shared",
            Level::L2 => "L2",
            Level::Dram => "DRAM",
        }
    }

    /// The run's transactions at this level (its runs-table column), when it has them.
    pub fn transactions(self, run: &Run) -> Option<f64> {
        let d = run.details();
        match self {
            Level::L1 => d.l1_sectors,
            Level::Shared => d.shared_wavefronts,
            Level::L2 => d.l2_sectors,
            Level::Dram => d.dram_sectors,
        }
    }
}

/// One level's bandwidth ceiling.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ceiling {
    pub level: Level,
    pub gbs: f64,
    /// Billions of transactions per second: GB/s / 32 bytes.
    pub gtxn_per_s: f64,
    /// From the catalog's measured figures (else its vendor or documented figure).
    pub measured: bool,
}

/// The ceilings of one GPU's instruction roofline.
#[derive(Debug, Clone, PartialEq)]
pub struct Ceilings {
    pub gips: f64,
    pub clock_mhz: f64,
    /// The clock is the catalog's measured one.
    pub clock_measured: bool,
    pub sm_count: u32,
    /// One per [`Level`], in [`Level::ALL`]'s order.
    pub levels: Vec<Ceiling>,
}

impl Ceilings {
    pub fn of(&self, level: Level) -> Option<&Ceiling> {
        self.levels.iter().find(|c| c.level == level)
    }
}

/// The instruction roofline's ceilings of `gpu` from the catalog, measured where it
/// has them: DRAM `sustained_bandwidth_gbs` else the vendor peak, L2
/// `l2_bandwidth_gbs` else the documented per-SM estimate, L1 and shared memory
/// `measured.l1_bandwidth_gbs` / `measured.shared_bandwidth_gbs` else 128 bytes per SM
/// clock (the figures of [`super::Figures::spec`]).
pub fn ceilings(gpu: &Gpu) -> Ceilings {
    let spec = super::Figures::spec(gpu);
    let measured = |key: &str| gpu.measured.get(key).copied();
    let pick = |m: Option<f64>, fallback: f64| (m.unwrap_or(fallback), m.is_some());
    let levels = Level::ALL
        .iter()
        .map(|&level| {
            let (gbs, measured) = match level {
                Level::Dram => pick(gpu.sustained_bandwidth_gbs, gpu.mem_bandwidth_gbs),
                Level::L2 => pick(gpu.l2_bandwidth_gbs, spec.l2_gbs),
                Level::L1 => pick(measured("l1_bandwidth_gbs"), spec.l1_gbs),
                Level::Shared => pick(measured("shared_bandwidth_gbs"), spec.l1_gbs),
            };
            Ceiling {
                level,
                gbs,
                gtxn_per_s: gbs / TRANSACTION_BYTES,
                measured,
            }
        })
        .collect();
    Ceilings {
        gips: peak_gips(gpu),
        clock_mhz: sm_clock_mhz(gpu),
        clock_measured: gpu.measured.contains_key("sm_clock_mhz"),
        sm_count: gpu.sm_count,
        levels,
    }
}

/// An access pattern's wall: the instruction intensity of a kernel whose every warp
/// instruction is such an access (1 / transactions per warp instruction).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Wall {
    pub name: &'static str,
    pub transactions_per_instruction: f64,
}

impl Wall {
    pub fn intensity(&self) -> f64 {
        1.0 / self.transactions_per_instruction
    }
}

/// Global-memory walls: a warp's 32 threads reading one address (stride 0) move one
/// sector; consecutive 32-bit words (unit stride), 128 bytes = 4 sectors; a stride of
/// 8 words or more (or random addresses), a sector per thread.
pub const GLOBAL_WALLS: [Wall; 3] = [
    Wall {
        name: "stride-0",
        transactions_per_instruction: 1.0,
    },
    Wall {
        name: "unit stride",
        transactions_per_instruction: 4.0,
    },
    Wall {
        name: "stride-8 / random",
        transactions_per_instruction: 32.0,
    },
];

/// Shared-memory walls: without bank conflicts a warp's access is one wavefront; a
/// 32-way bank conflict serialises it into 32.
pub const SHARED_WALLS: [Wall; 2] = [
    Wall {
        name: "no bank conflict",
        transactions_per_instruction: 1.0,
    },
    Wall {
        name: "32-way bank conflict",
        transactions_per_instruction: 32.0,
    },
];

/// One kernel at one level of the instruction roofline.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub kernel: String,
    pub level: Level,
    /// Warp instructions per transaction.
    pub intensity: f64,
    /// Warp instructions per second, billions.
    pub gips: f64,
    /// Thread predication: thread instructions / warp size in place of the warp
    /// instructions, (intensity, GIPS); `None` without a thread instruction count.
    pub thread: Option<(f64, f64)>,
}

/// Billions of `count` per second done in `time_ms`.
fn giga_per_s(count: f64, time_ms: f64) -> f64 {
    count / (time_ms * 1e-3) / 1e9
}

/// The instruction roofline's points of `runs` (one GPU's, whose warp size is
/// `warp_size`): per kernel, its run with the most warp instructions (the largest
/// size, the least launch-bound), one point per level where it has transactions.
/// Runs without warp instructions or a positive time are left out.
pub fn points<'a>(runs: impl IntoIterator<Item = &'a Run>, warp_size: u32) -> Vec<Point> {
    let mut largest: std::collections::BTreeMap<&str, (&Run, f64)> = Default::default();
    for r in runs {
        let Some(n) = r.details().inst_warp.filter(|n| *n > 0.0 && n.is_finite()) else {
            continue;
        };
        if !(r.time_ms > 0.0 && r.time_ms.is_finite()) {
            continue;
        }
        let e = largest.entry(&r.kernel).or_insert((r, n));
        if n > e.1 {
            *e = (r, n);
        }
    }
    let mut out = Vec::new();
    for (kernel, (r, inst_warp)) in largest {
        let thread_warps = r
            .details()
            .inst_thread
            .filter(|n| *n > 0.0 && n.is_finite())
            .map(|n| n / f64::from(warp_size.max(1)));
        for level in Level::ALL {
            let Some(txn) = level.transactions(r).filter(|t| *t > 0.0 && t.is_finite()) else {
                continue;
            };
            out.push(Point {
                kernel: kernel.to_string(),
                level,
                intensity: inst_warp / txn,
                gips: giga_per_s(inst_warp, r.time_ms),
                thread: thread_warps.map(|w| (w / txn, giga_per_s(w, r.time_ms))),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h100() -> Gpu {
        crate::catalog::Catalog::builtin()
            .resolve("H100 SXM5")
            .unwrap()
            .clone()
    }

    #[test]
    fn peak_gips_and_issue_floor_from_the_catalog() {
        // 132 SMs x 4 schedulers x 1 instruction per clock x 1.98 GHz (boost).
        let mut g = h100();
        assert!((peak_gips(&g) - 1045.44).abs() < 1e-9);
        // 1,045,440,000 warp instructions issue in one millisecond at that peak.
        assert!((issue_floor_ms(1.04544e9, &g) - 1.0).abs() < 1e-12);
        // A measured clock replaces the boost clock.
        g.measured.insert("sm_clock_mhz".into(), 1755.0);
        assert!((peak_gips(&g) - 132.0 * 4.0 * 1.755).abs() < 1e-9);
        let c = ceilings(&g);
        assert!(c.clock_measured && (c.gips - 926.64).abs() < 1e-9);
        let mut run = Run::default();
        assert_eq!(run_issue_floor_ms(&run, &g), None);
        run.details_mut().inst_warp = Some(926.64e6);
        assert!((run_issue_floor_ms(&run, &g).unwrap() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn bandwidth_ceilings_in_transactions_per_second() {
        let mut g = h100();
        // (without the built-in catalog's measured DRAM figure)
        g.sustained_bandwidth_gbs = None;
        let c = ceilings(&g);
        // DRAM: the vendor's 3,352 GB/s = 104.75 G sectors/s.
        let dram = c.of(Level::Dram).unwrap();
        assert_eq!((dram.gtxn_per_s, dram.measured), (104.75, false));
        // L1 / shared: 128 bytes per SM clock = 4 transactions per SM clock.
        let l1 = c.of(Level::L1).unwrap();
        assert!((l1.gtxn_per_s - 132.0 * 4.0 * 1.98).abs() < 1e-9);
        // Measured figures where the catalog has them (our H100's calibration).
        g.sustained_bandwidth_gbs = Some(2743.2);
        g.measured.insert("shared_bandwidth_gbs".into(), 22356.6);
        let c = ceilings(&g);
        assert_eq!(c.of(Level::Dram).unwrap().gtxn_per_s, 2743.2 / 32.0);
        let shared = c.of(Level::Shared).unwrap();
        assert!(shared.measured && (shared.gtxn_per_s - 698.64375).abs() < 1e-9);
    }

    #[test]
    fn walls_are_one_over_transactions_per_instruction() {
        let x: Vec<f64> = GLOBAL_WALLS.iter().map(Wall::intensity).collect();
        assert_eq!(x, [1.0, 0.25, 1.0 / 32.0]);
        let x: Vec<f64> = SHARED_WALLS.iter().map(Wall::intensity).collect();
        assert_eq!(x, [1.0, 1.0 / 32.0]);
    }

    #[test]
    fn points_take_each_kernels_largest_run_per_level() {
        // SYNTHETIC runs: two sizes of one kernel, one without counts.
        let run = |kernel: &str, time_ms: f64, warp: Option<f64>, l2: Option<f64>| {
            let mut r = Run {
                kernel: kernel.into(),
                time_ms,
                ..Run::default()
            };
            let d = r.details_mut();
            d.inst_warp = warp;
            d.inst_thread = warp.map(|w| w * 16.0); // half the lanes predicated off
            d.l2_sectors = l2;
            d.dram_sectors = l2.map(|s| s / 4.0);
            d.shared_wavefronts = Some(0.0);
            r
        };
        let runs = [
            run("k", 1.0, Some(1e6), Some(4e6)),
            run("k", 2.0, Some(4e6), Some(16e6)),
            run("other", 1.0, None, Some(1.0)),
        ];
        let p = points(&runs, 32);
        assert_eq!(p.len(), 2, "L2 and DRAM of k's larger run: {p:?}");
        assert_eq!(
            (p[0].level, p[0].intensity, p[0].gips),
            (Level::L2, 0.25, 2.0)
        );
        assert_eq!(p[0].thread, Some((0.125, 1.0)));
        assert_eq!((p[1].level, p[1].intensity), (Level::Dram, 1.0));
    }
}
