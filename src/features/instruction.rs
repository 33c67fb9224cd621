//! The instruction roofline: a kernel as warp instructions per second (GIPS) against
//! its instruction intensity at a memory level (warp instructions per 32-byte
//! transaction), under the GPU's issue ceiling and its bandwidth ceilings recast as
//! transactions per second. Each formula lives here once; the chart is
//! `report::plots::instruction_roofline`.

use crate::catalog::{Catalog, ComputeCapability, Gpu};
use crate::data::Run;
use crate::features::figures::power_limited_clock_factor;

/// Warp schedulers per SM: four on every NVIDIA SM since Maxwell (one per SM
/// sub-partition).
pub const SCHEDULERS_PER_SM: f64 = 4.0;
/// Warp instructions one scheduler issues per clock.
pub const WARP_INSTRUCTIONS_PER_SCHEDULER_CLOCK: f64 = 1.0;
/// Bytes of one transaction: an L1, L2 or DRAM sector (a shared-memory wavefront is
/// one transaction of the shared-memory ceiling).
pub const TRANSACTION_BYTES: f64 = 32.0;

/// The SM clock of the instruction ceilings (issue, ALU lanes), MHz: measured where the
/// catalog has one (`measured.sm_clock_mhz`, a calibration merged with `--gpus`), else
/// the boost clock times the share of it a power-limited board holds under compute
/// load ([`power_limited_clock_factor`]), the clock the FLOP roof assumes too.
pub fn sm_clock_mhz(gpu: &Gpu) -> f64 {
    gpu.measured
        .get("sm_clock_mhz")
        .copied()
        .unwrap_or_else(|| gpu.boost_clock_mhz * power_limited_clock_factor(gpu))
}

/// Share of an FP32 FLOP-bound kernel's warp instructions that are FFMA when no
/// instruction counts say otherwise. A kernel the FLOP roof binds does little but
/// arithmetic; its FFMAs still share the issue slots with the loads, address and loop
/// instructions that feed them. A register-blocked SGEMM main loop (the library GEMMs
/// and convolutions users time) issues per k-step an r x r outer product of FFMAs and
/// about r/2 vector shared-memory loads (r = 8: 64 FFMA, 4 LDS.128, plus the loop's
/// branch and address updates): 0.85-0.9 of its instructions. Our own Nsight Compute
/// exports give 0.88 for the suite's FMA microbenchmark (`fp32_fma_peak`:
/// `smsp__sass_thread_inst_executed_op_ffma_pred_on.sum` / 32 over
/// `smsp__inst_executed.sum`, `datasets/own/*/ncu`); 0.8 allows for the prologue and
/// epilogue around a library kernel's main loop.
pub const DEFAULT_FFMA_SHARE: f64 = 0.8;

/// The share of its FP32 peak an FFMA-bound kernel can reach on `gpu` (of [`DEFAULT_FFMA_SHARE`]
/// FFMAs) when its schedulers, not its FP32 lanes, limit it: since Volta (compute
/// capability 7.0) each of an SM's four schedulers issues one warp instruction per
/// clock, 128 lane-instructions per SM clock. An SM of 64 FP32 lanes (GV100, TU10x,
/// GA100) has issue to spare: 1. An SM of 128 (GA10x, AD10x, Hopper, Blackwell) can
/// keep them busy only with FFMAs alone: 128 x 0.8 / 128 = 0.8. Earlier NVIDIA SMs
/// (Maxwell, Pascal, Kepler) dual-issue, and AMD compute units issue per SIMD: 1. 1
/// when the catalog gives no FP32 lanes per SM.
pub fn fp32_issue_fraction(gpu: &Gpu) -> f64 {
    let single_issue = gpu.vendor.eq_ignore_ascii_case("NVIDIA") && gpu.cc_major_minor().0 >= 7;
    match gpu.cores_per_sm {
        Some(lanes) if single_issue && lanes > 0 => {
            let issue_lanes = SCHEDULERS_PER_SM
                * WARP_INSTRUCTIONS_PER_SCHEDULER_CLOCK
                * f64::from(gpu.warp_size.max(1));
            (issue_lanes * DEFAULT_FFMA_SHARE / f64::from(lanes)).min(1.0)
        }
        _ => 1.0,
    }
}

/// Warp (wavefront) instructions one SM (compute unit) issues per clock. An NVIDIA SM:
/// 4 schedulers x 1. An AMD compute unit issues per SIMD, each SIMD one wavefront
/// instruction per pass of the wavefront over its lanes: stream processors /
/// wavefront size (CDNA: 4 SIMD16 x wave64 every 4 clocks = 1; RDNA: 2 SIMD32 x wave32
/// = 2); 4 where the catalog gives no stream processors per CU.
pub fn warp_instructions_per_sm_clock(gpu: &Gpu) -> f64 {
    match gpu.cores_per_sm {
        Some(lanes) if gpu.vendor.eq_ignore_ascii_case("AMD") && gpu.warp_size > 0 => {
            f64::from(lanes) / f64::from(gpu.warp_size)
        }
        _ => SCHEDULERS_PER_SM * WARP_INSTRUCTIONS_PER_SCHEDULER_CLOCK,
    }
}

/// Peak warp instructions per second, in billions (GIPS): SMs x
/// [`warp_instructions_per_sm_clock`] (4 on NVIDIA) x clock.
pub fn peak_gips(gpu: &Gpu) -> f64 {
    gpu.sm_count as f64 * warp_instructions_per_sm_clock(gpu) * sm_clock_mhz(gpu) / 1e3
}

/// The instruction-issue floor, ms: the time `inst_warp` warp instructions take to
/// issue at [`peak_gips`]. No kernel runs faster than its instructions issue.
pub fn issue_floor_ms(inst_warp: f64, gpu: &Gpu) -> f64 {
    inst_warp / (peak_gips(gpu) * 1e9) * 1e3
}

/// The issue roof on `gpu`, ms, of `inst_warp` warp instructions counted on a GPU of
/// warp size `counted_warp_size`: the same threads run the same instruction stream,
/// in warps of `gpu`'s size (a wavefront of 64 is half as many instructions as warps
/// of 32), at [`peak_gips`].
pub fn issue_ms(inst_warp: f64, counted_warp_size: u32, gpu: &Gpu) -> f64 {
    let warps = inst_warp * f64::from(counted_warp_size) / f64::from(gpu.warp_size.max(1));
    issue_floor_ms(warps, gpu)
}

/// The ALU roof, ms: FP32 and INT32 thread instructions at the lanes that execute
/// them, per SM per clock the largest of fp32 / FP32 lanes (`cores_per_sm`), int /
/// INT32 lanes and, where INT32 takes some of the FP32 lanes (compute capability 8.6,
/// 8.9), (fp32 + int) / FP32 lanes; at [`sm_clock_mhz`]. None where the catalog lacks
/// the lane counts (`cores_per_sm`, the compute capability's `int32_lanes_per_sm`).
pub fn alu_ms(
    fp32_thread: f64,
    int_thread: f64,
    gpu: &Gpu,
    cc: Option<&ComputeCapability>,
) -> Option<f64> {
    let fp32_lanes = f64::from(gpu.cores_per_sm.filter(|c| *c > 0)?);
    let cc = cc?;
    let int_lanes = f64::from(cc.int32_lanes_per_sm.filter(|c| *c > 0)?);
    let shared = if cc.int32_shares_fp32_lanes {
        (fp32_thread + int_thread) / fp32_lanes
    } else {
        0.0
    };
    let cycles_per_sm = (fp32_thread / fp32_lanes)
        .max(int_thread / int_lanes)
        .max(shared);
    Some(cycles_per_sm / (gpu.sm_count as f64 * sm_clock_mhz(gpu) * 1e3))
}

/// What a run's instruction counts say its work takes on a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct InstructionCounts {
    /// Warp instructions and the warp size of the GPU that counted them.
    pub warp: Option<(f64, u32)>,
    /// FP32 and integer thread instructions (the instruction mix).
    pub fp32_int_thread: Option<(f64, f64)>,
}

impl InstructionCounts {
    /// The counts `run` carries (`inst_warp`; `inst_thread_fp32` with
    /// `inst_thread_int`); warp instructions only when the run's GPU is in `catalog`
    /// (its warp size says how many threads one counted).
    pub fn of(run: &Run, catalog: &Catalog) -> InstructionCounts {
        let d = run.details();
        let ok = |v: Option<f64>| v.filter(|n| n.is_finite() && *n >= 0.0);
        InstructionCounts {
            warp: ok(d.inst_warp).zip(catalog.resolve(&run.gpu).map(|g| g.warp_size)),
            fp32_int_thread: ok(d.inst_thread_fp32).zip(ok(d.inst_thread_int)),
        }
    }

    /// Whether `run` carries a count the roofs use (without resolving its GPU).
    pub fn carried(run: &Run) -> bool {
        let d = run.details();
        d.inst_warp.is_some() || (d.inst_thread_fp32.is_some() && d.inst_thread_int.is_some())
    }

    /// Whether these counts have any the roofs use.
    pub fn any(&self) -> bool {
        self.warp.is_some() || self.fp32_int_thread.is_some()
    }

    /// The issue and ALU roofs of these counts on `gpu`.
    pub fn roofs(&self, gpu: &Gpu, catalog: &Catalog) -> InstructionRoofs {
        InstructionRoofs {
            issue_ms: self.warp.map(|(n, w)| issue_ms(n, w, gpu)),
            alu_ms: self
                .fp32_int_thread
                .and_then(|(f, i)| alu_ms(f, i, gpu, catalog.compute_capability_of(gpu))),
        }
    }
}

/// The instruction roofs of a work on a GPU, ms; None where the counts (or the
/// catalog's lane counts) are missing.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct InstructionRoofs {
    pub issue_ms: Option<f64>,
    pub alu_ms: Option<f64>,
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
        let catalog = crate::catalog::Catalog::builtin();
        let mut run = Run {
            gpu: "H100 SXM5".into(),
            ..Run::default()
        };
        let counts = |r: &Run| InstructionCounts::of(r, &catalog);
        assert!(!counts(&run).any());
        assert_eq!(
            counts(&run).roofs(&g, &catalog),
            InstructionRoofs::default()
        );
        run.details_mut().inst_warp = Some(926.64e6);
        assert_eq!(counts(&run).warp, Some((926.64e6, 32)));
        let issue = counts(&run).roofs(&g, &catalog).issue_ms.unwrap();
        assert!((issue - 1.0).abs() < 1e-12);
        // a GPU the catalog does not name: no warp size, no issue roof
        run.gpu = "not a GPU".into();
        assert_eq!(counts(&run).warp, None);
    }

    #[test]
    fn an_amd_compute_unit_issues_per_simd_and_a_wavefront_of_64_is_half_the_warps() {
        let catalog = crate::catalog::Catalog::builtin();
        let gpu = |name: &str| catalog.resolve(name).unwrap();
        // CDNA: 4 SIMD16, a wave64 instruction every 4 clocks: 1 per CU per clock;
        // 104 CUs x 1.7 GHz, held at (300 W / 104 CUs / 3 W)^(1/3) of it.
        let mi210 = gpu("MI210");
        assert_eq!(warp_instructions_per_sm_clock(mi210), 1.0);
        let held = (300.0_f64 / 104.0 / 3.0).cbrt();
        assert!((power_limited_clock_factor(mi210) - held).abs() < 1e-12);
        assert!((peak_gips(mi210) - 176.8 * held).abs() < 1e-9);
        // RDNA: 2 SIMD32, a wave32 instruction per clock each.
        assert_eq!(warp_instructions_per_sm_clock(gpu("RX 7900 XTX")), 2.0);
        assert_eq!(warp_instructions_per_sm_clock(&h100()), 4.0);
        // 353.6 M warp-32 instructions are 176.8 M wavefront-64 instructions: 1 ms at
        // the boost clock.
        assert!((issue_ms(353.6e6 * held, 32, mi210) - 1.0).abs() < 1e-12);
        // counted in wavefronts of 64, issued in warps of 32: twice as many
        let h = h100();
        assert!((issue_ms(1.04544e9 / 2.0, 64, &h) - 1.0).abs() < 1e-12);
    }

    /// SYNTHETIC instruction mix: 2 FP32 thread instructions per integer one. The
    /// H100 (9.0) has INT32 lanes of its own, 64 beside its 128 FP32 lanes: the integers
    /// take as long as the FP32 instructions. On an RTX 3090 (8.6) they take 64 of the
    /// 128 FP32 lanes: (2 + 1) / 128 per SM clock, 1.5x the FP32 rate alone. On an A100
    /// (8.0, 64 FP32 lanes) the FP32 instructions bind.
    #[test]
    fn alu_lanes_per_compute_capability() {
        let catalog = crate::catalog::Catalog::builtin();
        let (fp32, int) = (2.0e9, 1.0e9);
        let alu = |name: &str| {
            let g = catalog.resolve(name).unwrap();
            let ms = alu_ms(fp32, int, g, catalog.compute_capability_of(g)).unwrap();
            // in SM clocks per SM
            ms * g.sm_count as f64 * g.boost_clock_mhz * 1e3
        };
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6 * b;
        assert!(close(alu("H100 SXM5"), fp32 / 128.0));
        assert!(close(alu("H100 SXM5"), int / 64.0));
        assert!(close(alu("RTX 3090"), (fp32 + int) / 128.0));
        assert!(close(alu("RTX 3090"), 1.5 * fp32 / 128.0));
        assert!(close(alu("A100 SXM4 40GB"), fp32 / 64.0));
        // Kepler has no lane counts in the table, AMD no compute-capability lanes
        for name in ["Tesla K80", "MI210"] {
            let g = catalog.resolve(name).unwrap();
            assert_eq!(
                alu_ms(fp32, int, g, catalog.compute_capability_of(g)),
                None,
                "{name}"
            );
        }
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

    /// The FP32 issue share: 0.8 on 128-lane SMs with single-issue schedulers (Ampere
    /// GA10x, Ada, Hopper), 1 on 64-lane ones (Volta, Turing, GA100), on dual-issue
    /// Pascal and on AMD.
    #[test]
    fn fp32_issue_share_follows_lanes_and_issue() {
        let c = Catalog::builtin();
        let share = |n: &str| fp32_issue_fraction(c.resolve(n).unwrap());
        for n in ["RTX 3090", "RTX 4070", "H100 SXM5 80GB"] {
            assert_eq!(share(n), 0.8, "{n}");
        }
        for n in [
            "TITAN V",
            "RTX 2080 Ti",
            "A100 PCIe 40GB",
            "GTX 1080 Ti",
            "MI210",
        ] {
            assert_eq!(share(n), 1.0, "{n}");
        }
    }
}
