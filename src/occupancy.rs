//! Theoretical occupancy, computed with the rules of NVIDIA's CUDA occupancy
//! calculator (`cuda_occupancy.h`, `cudaOccMaxActiveBlocksPerMultiprocessor`).
//!
//! For a block of `T` threads, `R` registers per thread and `S` bytes of shared
//! memory (static + dynamic) on an SM described by a [`ComputeCapability`]:
//!
//! * warps per block `W = ceil(T / warp_size)`;
//!   warp limit `= floor(max_warps_per_sm / W)`.
//! * registers are allocated per warp: `rpw = ceil(R × warp_size / reg_alloc_unit) × reg_alloc_unit`.
//!   The register file is split into `P = warp_alloc_granularity` sub-partitions
//!   (4; 2 on GP100), each holding `floor(regs_per_sm / P / rpw)` warps, so the
//!   register limit is `floor(P × floor(regs_per_sm / P / rpw) / W)` blocks.
//!   A block whose `rpw × W` or `rpw × roundup(W, P)` (the hardware's check)
//!   exceeds `max_regs_per_block` cannot launch. `R = 0` means no register limit.
//!   On 6.0 (GP100) the launch must also fit a 4-partition GP10x SM, as the
//!   calculator requires.
//! * shared memory per block `= roundup(S + reserved_smem_per_block, smem_alloc_unit)`
//!   (the 1 KB reserve exists from sm_80 on, so even `S = 0` costs 1 KB there;
//!   before sm_80 `S = 0` means no shared-memory limit). The shared memory
//!   per SM is the carveout: see [`occupancy_with_carveout`].
//! * block limit `= max_blocks_per_sm` (on AMD GPUs, whose workgroup limit counts
//!   barriers, a one-wavefront block is bounded by the warp limit alone).
//!
//! The same rules give AMD's occupancy (LLVM `AMDGPU::IsaInfo`,
//! `getNumWavesPerEUWithNumVGPRs` and `getMaxWorkGroupsPerCU`) when a compute unit is
//! described as an SM: warps are wavefronts, the `P` partitions its SIMDs (4 on
//! CDNA, 2 per CU on RDNA), `regs_per_sm` its VGPR file (VGPRs per lane per SIMD x
//! wavefront size x SIMDs) and `reg_alloc_unit` the VGPR allocation granule x
//! wavefront size, so waves per SIMD = VGPRs per SIMD / VGPRs rounded up to the
//! granule, capped by the wave slots (`max_warps_per_sm` / P); shared memory is the
//! LDS, allocated in the target's LDS granule.
//!
//! Resident blocks are the minimum of the four limits. The limiter reported is
//! the first limit equal to that minimum in the order warps, registers, shared
//! memory, blocks (the order of cuda_occupancy.h's `limitingFactors` bits).
//! [`Limiter::Threads`] is never reported: threads are limited through warps
//! (a partial warp occupies a whole warp slot, so the warp limit is always at
//! least as tight as a thread count limit).

use crate::catalog::ComputeCapability;
use crate::error::{Error, Result};
use serde::Serialize;
use std::fmt;

/// Which resource bounds the number of resident blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Limiter {
    /// Kept for callers; the calculator reports thread limits as `Warps`.
    Threads,
    Warps,
    Registers,
    SharedMemory,
    Blocks,
}

impl Limiter {
    pub fn as_str(&self) -> &'static str {
        match self {
            Limiter::Threads => "threads",
            Limiter::Warps => "warps",
            Limiter::Registers => "registers",
            Limiter::SharedMemory => "shared memory",
            Limiter::Blocks => "blocks",
        }
    }
}

impl fmt::Display for Limiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Result of the occupancy calculation for one SM.
///
/// `limit_by_regs` is `u32::MAX` when the kernel uses no registers and
/// `limit_by_smem` is `u32::MAX` when a block allocates no shared memory
/// (before sm_80 with 0 bytes), as in cuda_occupancy.h (`INT_MAX`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Occupancy {
    pub blocks_per_sm: u32,
    pub warps_per_sm: u32,
    /// Active warps / max warps per SM, in 0..=1.
    pub occupancy: f64,
    pub limiter: Limiter,
    pub limit_by_warps: u32,
    pub limit_by_regs: u32,
    pub limit_by_smem: u32,
    pub limit_by_blocks: u32,
}

/// What one block of a launch needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LaunchResources {
    pub block_threads: u32,
    pub regs_per_thread: u32,
    /// Static + dynamic shared memory, bytes.
    pub smem_per_block: u32,
}

fn round_up(x: u64, unit: u64) -> u64 {
    if unit == 0 {
        x
    } else {
        x.div_ceil(unit) * unit
    }
}

fn cc_label(limits: &ComputeCapability) -> String {
    limits.sm_label()
}

/// Warps a block occupies: ceil(threads / warp size).
pub fn warps_per_block(limits: &ComputeCapability, block_threads: u32) -> u32 {
    block_threads.div_ceil(limits.warp_size.max(1))
}

/// Registers allocated to one warp: ceil(regs × warp size / unit) × unit.
pub fn allocated_regs_per_warp(limits: &ComputeCapability, regs_per_thread: u32) -> u32 {
    round_up(
        u64::from(regs_per_thread) * u64::from(limits.warp_size),
        u64::from(limits.reg_alloc_unit),
    ) as u32
}

/// Shared memory allocated to one block: (smem + reserved) rounded up to the
/// allocation unit.
pub fn allocated_smem_per_block(limits: &ComputeCapability, smem_per_block: u32) -> u32 {
    round_up(
        u64::from(smem_per_block) + u64::from(limits.reserved_smem_per_block),
        u64::from(limits.smem_alloc_unit),
    )
    .min(u64::from(u32::MAX)) as u32
}

/// Register limit in blocks per SM for `partitions` register-file partitions;
/// 0 when the block does not fit the per-block register limits.
fn regs_limit(limits: &ComputeCapability, regs: u32, wpb: u32, partitions: u32) -> u32 {
    let rpw = u64::from(allocated_regs_per_warp(limits, regs));
    if rpw == 0 {
        return u32::MAX;
    }
    let p = u64::from(partitions.max(1));
    let wpb = u64::from(wpb);
    let per_cta = rpw * wpb;
    let assumed = rpw * round_up(wpb, p);
    let max_per_block = u64::from(limits.max_regs_per_block);
    if per_cta > max_per_block || assumed > max_per_block {
        return 0;
    }
    let warps_per_partition = (u64::from(limits.regs_per_sm) / p) / rpw;
    ((warps_per_partition * p) / wpb) as u32
}

/// The smallest configurable carveout (bytes) that is at least `bytes`; None
/// when `bytes` exceeds the largest.
fn align_up_carveout(limits: &ComputeCapability, bytes: u32) -> Option<u32> {
    limits.carveouts_bytes().into_iter().find(|&c| c >= bytes)
}

/// The shared memory per SM a launch gets (cuda_occupancy.h
/// `cudaOccMaxBlocksPerSMSmemLimit`): the preferred carveout rounded up to a
/// configurable size, or, when one block does not fit in it, the smallest
/// configurable size that fits one block (sm_70+); fixed before sm_70.
fn effective_smem_per_sm(
    limits: &ComputeCapability,
    smem_alloc: u32,
    carveout_bytes: Option<u32>,
) -> Result<u32> {
    let major = limits.major_minor().0;
    let preference = match carveout_bytes {
        Some(c) if major >= 7 => align_up_carveout(limits, c).ok_or_else(|| {
            Error::Launch(format!(
                "shared memory carveout of {c} bytes exceeds the maximum of {} bytes per SM on {}",
                limits.smem_per_sm,
                cc_label(limits)
            ))
        })?,
        _ => limits.smem_per_sm,
    };
    Ok(if preference >= smem_alloc {
        preference
    } else if major >= 7 {
        align_up_carveout(limits, smem_alloc).unwrap_or(limits.smem_per_sm)
    } else {
        limits.smem_per_sm
    })
}

/// Occupancy with the default shared-memory configuration, which is what
/// cuda_occupancy.h computes when no carveout preference is set: the maximum
/// shared memory per SM (`smem_per_sm`). The driver then picks, at launch, the
/// smallest carveout that still fits this many blocks
/// (see [`preferred_carveout_bytes`]), so the block count is the same.
pub fn occupancy(limits: &ComputeCapability, res: &LaunchResources) -> Result<Occupancy> {
    occupancy_with_carveout(limits, res, None)
}

/// Occupancy with an explicit shared-memory carveout per SM in bytes.
///
/// * `None`: the maximum configurable shared memory (`smem_per_sm`), as
///   cuda_occupancy.h with `SHAREDMEM_CARVEOUT_DEFAULT`; this gives the largest
///   block count any carveout can give.
/// * `Some(bytes)` on sm_70+: `bytes` is rounded up to the next configurable
///   carveout (`smem_carveout_kb`; an error if larger than the largest). If a
///   single block does not fit in it, the smallest carveout that fits one block
///   is used instead (the driver overrides a too-small preference), as
///   cuda_occupancy.h does.
/// * `Some(_)` before sm_70: ignored, shared memory is fixed.
///
/// Errors (one line each): no threads, more threads than `max_threads_per_block`,
/// more registers than `max_regs_per_thread`, more shared memory than
/// `max_smem_per_block`, or a block that cannot be resident at all (e.g. the
/// block's registers exceed `max_regs_per_block`).
pub fn occupancy_with_carveout(
    limits: &ComputeCapability,
    res: &LaunchResources,
    carveout_bytes: Option<u32>,
) -> Result<Occupancy> {
    let arch = cc_label(limits);
    let (major, minor) = limits.major_minor();
    if res.block_threads == 0 {
        return Err(Error::Launch(format!(
            "a block of 0 threads cannot launch ({arch})"
        )));
    }
    if res.block_threads > limits.max_threads_per_block {
        return Err(Error::Launch(format!(
            "a block of {} threads exceeds the maximum of {} threads per block on {arch}",
            res.block_threads, limits.max_threads_per_block
        )));
    }
    if res.regs_per_thread > limits.max_regs_per_thread {
        return Err(Error::Launch(format!(
            "{} registers per thread exceed the maximum of {} on {arch}",
            res.regs_per_thread, limits.max_regs_per_thread
        )));
    }
    if res.smem_per_block > limits.max_smem_per_block {
        return Err(Error::Launch(format!(
            "{} bytes of shared memory per block exceed the maximum of {} bytes on {arch}",
            res.smem_per_block, limits.max_smem_per_block
        )));
    }
    let wpb = warps_per_block(limits, res.block_threads);

    // Warps.
    let limit_by_warps = limits.max_warps_per_sm / wpb;

    // Registers.
    let mut limit_by_regs = regs_limit(
        limits,
        res.regs_per_thread,
        wpb,
        limits.warp_alloc_granularity,
    );
    if (major, minor) == (6, 0) && limit_by_regs > 0 {
        // cuda_occupancy.h: a launch that cannot run on a 4-partition GP10x SM
        // is not allowed on GP100 either.
        if regs_limit(limits, res.regs_per_thread, wpb, 4) == 0 {
            limit_by_regs = 0;
        }
    }

    // Shared memory.
    let smem_alloc = allocated_smem_per_block(limits, res.smem_per_block);
    let per_block_cap =
        u64::from(limits.max_smem_per_block) + u64::from(limits.reserved_smem_per_block);
    let limit_by_smem = if u64::from(smem_alloc) > per_block_cap {
        0
    } else {
        let smem_sm = effective_smem_per_sm(limits, smem_alloc, carveout_bytes)?;
        smem_sm.checked_div(smem_alloc).unwrap_or(u32::MAX)
    };

    let limit_by_blocks = if wpb == 1 && limits.one_warp_blocks_unbounded {
        limits.max_warps_per_sm
    } else {
        limits.max_blocks_per_sm
    };

    let blocks = limit_by_warps
        .min(limit_by_regs)
        .min(limit_by_smem)
        .min(limit_by_blocks);
    let limiter = if blocks == limit_by_warps {
        Limiter::Warps
    } else if blocks == limit_by_regs {
        Limiter::Registers
    } else if blocks == limit_by_smem {
        Limiter::SharedMemory
    } else {
        Limiter::Blocks
    };
    if blocks == 0 {
        let why = match limiter {
            Limiter::Registers => format!(
                "its registers ({} per thread x {} threads, {} allocated) exceed the {} registers available to a block",
                res.regs_per_thread,
                res.block_threads,
                u64::from(allocated_regs_per_warp(limits, res.regs_per_thread)) * u64::from(wpb),
                limits.max_regs_per_block
            ),
            Limiter::SharedMemory => format!(
                "its shared memory ({smem_alloc} bytes allocated) exceeds the {per_block_cap} bytes a block may use"
            ),
            _ => format!("{limiter} allow no block"),
        };
        return Err(Error::Launch(format!(
            "a block of {} threads cannot be resident on {arch}: {why}",
            res.block_threads
        )));
    }
    let warps_per_sm = blocks * wpb;
    Ok(Occupancy {
        blocks_per_sm: blocks,
        warps_per_sm,
        occupancy: f64::from(warps_per_sm) / f64::from(limits.max_warps_per_sm),
        limiter,
        limit_by_warps,
        limit_by_regs,
        limit_by_smem,
        limit_by_blocks,
    })
}

/// The carveout (bytes) the driver would configure for this launch: the
/// smallest configurable shared-memory size per SM that keeps the block count
/// of [`occupancy`] (the maximum). Before sm_70 this is the fixed `smem_per_sm`.
pub fn preferred_carveout_bytes(limits: &ComputeCapability, res: &LaunchResources) -> Result<u32> {
    let best = occupancy(limits, res)?;
    if limits.major_minor().0 < 7 {
        return Ok(limits.smem_per_sm);
    }
    let alloc = allocated_smem_per_block(limits, res.smem_per_block);
    for c in limits.carveouts_bytes() {
        if occupancy_with_carveout(limits, res, Some(c))?.blocks_per_sm == best.blocks_per_sm {
            return effective_smem_per_sm(limits, alloc, Some(c));
        }
    }
    Ok(limits.smem_per_sm)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;

    fn cc(s: &str) -> ComputeCapability {
        Catalog::builtin().compute_capability(s).unwrap().clone()
    }
    fn res(t: u32, r: u32, s: u32) -> LaunchResources {
        LaunchResources {
            block_threads: t,
            regs_per_thread: r,
            smem_per_block: s,
        }
    }
    fn occ(c: &str, t: u32, r: u32, s: u32) -> Occupancy {
        occupancy(&cc(c), &res(t, r, s)).unwrap()
    }

    #[test]
    fn sm75_256_threads_64_regs() {
        // W = 8; rpw = 64*32 = 2048; per partition 16384/2048 = 8 warps -> 32 warps
        // -> 32/8 = 4 blocks; warps 32/8 = 4; blocks 16; smem 0 -> unlimited.
        // min 4, tie warps/registers -> Warps; 32/32 warps = 1.0.
        let o = occ("7.5", 256, 64, 0);
        assert_eq!((o.blocks_per_sm, o.warps_per_sm), (4, 32));
        assert_eq!(o.limiter, Limiter::Warps);
        assert_eq!(o.limit_by_regs, 4);
        assert_eq!(o.limit_by_smem, u32::MAX);
        assert_eq!(o.occupancy, 1.0);
    }

    #[test]
    fn sm75_register_limited() {
        // 256 threads x 72 regs: rpw = 2304 (9 x 256); 16384/2304 = 7 warps per
        // partition -> 28 warps -> 28/8 = 3 blocks; warps 4; blocks 16.
        // -> 3 blocks, 24 warps, 24/32 = 0.75, Registers.
        let o = occ("7.5", 256, 72, 0);
        assert_eq!((o.blocks_per_sm, o.warps_per_sm), (3, 24));
        assert_eq!(o.limiter, Limiter::Registers);
        assert_eq!(o.occupancy, 0.75);
    }

    #[test]
    fn sm70_register_partition_rounding() {
        // 64 threads (W=2) x 40 regs: rpw = 1280 (5 x 256). Per partition
        // 16384/1280 = 12 warps -> 48 warps -> 48/2 = 24 blocks (a single pool
        // would give 65536/1280 = 51 warps -> 25 blocks). warps 64/2 = 32,
        // blocks 32 -> 24 blocks, 48 warps, 48/64 = 0.75, Registers.
        let o = occ("7.0", 64, 40, 0);
        assert_eq!(o.blocks_per_sm, 24);
        assert_eq!(o.limit_by_regs, 24);
        assert_eq!(o.limiter, Limiter::Registers);
        assert_eq!(o.occupancy, 0.75);
    }

    #[test]
    fn sm80_shared_memory_with_reserved_kb() {
        // 128 threads, 32 regs, 32 KB: alloc = 32768 + 1024 = 33792 (x128 ok);
        // 167936/33792 = 4.97 -> 4 (without the reserve it would be 5).
        // warps 64/4 = 16; regs rpw 1024 -> 16/partition -> 64 warps -> 16;
        // blocks 32. -> 4 blocks, 16 warps, 0.25, SharedMemory.
        let o = occ("8.0", 128, 32, 32768);
        assert_eq!(o.blocks_per_sm, 4);
        assert_eq!(o.limit_by_smem, 4);
        assert_eq!(o.limiter, Limiter::SharedMemory);
        assert_eq!(o.occupancy, 0.25);
        assert_eq!(allocated_smem_per_block(&cc("8.0"), 32768), 33792);
    }

    #[test]
    fn sm80_tiny_blocks_are_block_limited_and_zero_smem_still_costs_1kb() {
        // 32 threads (W=1), 16 regs: warps 64; rpw 512 -> 32/partition -> 128
        // warps -> 128 blocks; smem 0 + 1024 reserved -> 167936/1024 = 164;
        // blocks 32 -> 32 blocks, 32 warps, 0.5, Blocks.
        let o = occ("8.0", 32, 16, 0);
        assert_eq!(o.blocks_per_sm, 32);
        assert_eq!(o.limit_by_smem, 164);
        assert_eq!(o.limit_by_regs, 128);
        assert_eq!(o.limiter, Limiter::Blocks);
        assert_eq!(o.occupancy, 0.5);
    }

    #[test]
    fn sm75_1024_thread_blocks() {
        // 1024 threads = 32 warps = the whole Turing SM: warps 32/32 = 1.
        // 32 regs: rpw 1024 -> 64 warps -> 2 blocks. -> 1 block, occupancy 1.
        let o = occ("7.5", 1024, 32, 0);
        assert_eq!((o.blocks_per_sm, o.limiter), (1, Limiter::Warps));
        assert_eq!(o.occupancy, 1.0);
        // 64 regs: 2048 x 32 warps = 65536 = max regs per block -> 1 block.
        let o = occ("7.5", 1024, 64, 0);
        assert_eq!((o.blocks_per_sm, o.limit_by_regs), (1, 1));
        // 65 regs: rpw = 2080 -> 2304; 2304 x 32 = 73728 > 65536 -> cannot launch.
        let e = occupancy(&cc("7.5"), &res(1024, 65, 0))
            .unwrap_err()
            .to_string();
        assert!(e.contains("registers") && e.contains("sm_75"), "{e}");
    }

    #[test]
    fn sm86_and_sm89_thread_and_block_limits() {
        // sm_86, 256 threads, 32 regs: warps 48/8 = 6; regs 64/8 = 8; blocks 16;
        // smem 1 KB reserved -> 102400/1024 = 100. -> 6 blocks, 48 warps, 1.0.
        let o = occ("8.6", 256, 32, 0);
        assert_eq!(
            (o.blocks_per_sm, o.warps_per_sm, o.limiter),
            (6, 48, Limiter::Warps)
        );
        assert_eq!(o.limit_by_smem, 100);
        assert_eq!(o.occupancy, 1.0);
        // sm_86, 64 threads: warps 48/2 = 24; regs 32; blocks 16 -> 16 blocks,
        // 32 warps, 32/48, Blocks.
        let o = occ("8.6", 64, 32, 0);
        assert_eq!((o.blocks_per_sm, o.limiter), (16, Limiter::Blocks));
        assert!((o.occupancy - 32.0 / 48.0).abs() < 1e-12);
        // sm_89, 64 threads: warps 24 = blocks 24 -> tie, reported as Warps; 1.0.
        let o = occ("8.9", 64, 32, 0);
        assert_eq!((o.blocks_per_sm, o.limiter), (24, Limiter::Warps));
        assert_eq!(o.occupancy, 1.0);
        // sm_89, 32 threads, 16 regs: warps 48; regs 128; blocks 24 -> 24 blocks, 0.5.
        let o = occ("8.9", 32, 16, 0);
        assert_eq!((o.blocks_per_sm, o.limiter), (24, Limiter::Blocks));
        assert_eq!(o.occupancy, 0.5);
    }

    #[test]
    fn sm60_partial_warp_and_two_partitions() {
        // 48 threads = 2 warps. 64 regs: rpw 2048; GP100 has 2 partitions:
        // 32768/2048 = 16 warps each -> 32 warps -> 16 blocks (GP10x check:
        // 16384/2048 = 8 x 4 = 32 -> 16 > 0, fine). warps 64/2 = 32, blocks 32.
        // -> 16 blocks, 32 warps, 0.5, Registers.
        let o = occ("6.0", 48, 64, 0);
        assert_eq!((o.blocks_per_sm, o.warps_per_sm), (16, 32));
        assert_eq!(o.limit_by_warps, 32);
        assert_eq!(o.limiter, Limiter::Registers);
        assert_eq!(o.occupancy, 0.5);
    }

    #[test]
    fn sm60_must_also_fit_gp10x() {
        // 320 threads (10 warps) x 200 regs: rpw = 6400. On GP100 (2 partitions):
        // 64000 regs per block, assumed 6400 x roundup(10,2) = 64000 <= 65536;
        // 32768/6400 = 5 warps/partition -> 10 warps -> 1 block. The GP10x check
        // (4 partitions): assumed 6400 x 12 = 76800 > 65536 -> 0 -> no block.
        let e = occupancy(&cc("6.0"), &res(320, 200, 0))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("cannot be resident") && e.contains("sm_60"),
            "{e}"
        );
    }

    #[test]
    fn sm52_shared_memory_granularity() {
        // 256 threads, 32 regs, 20000 B: alloc roundup(20000, 256) = 20224;
        // 98304/20224 = 4.86 -> 4. warps 64/8 = 8; regs 16/partition -> 64 -> 8;
        // blocks 32. -> 4 blocks, 32 warps, 0.5, SharedMemory.
        let o = occ("5.2", 256, 32, 20000);
        assert_eq!((o.blocks_per_sm, o.limiter), (4, Limiter::SharedMemory));
        assert_eq!(o.occupancy, 0.5);
        // No shared memory before sm_80 -> no shared-memory limit.
        assert_eq!(occ("5.2", 256, 32, 0).limit_by_smem, u32::MAX);
        // No registers -> no register limit.
        assert_eq!(occ("5.2", 256, 0, 0).limit_by_regs, u32::MAX);
    }

    #[test]
    fn sm90_registers_and_largest_block() {
        // 128 threads x 128 regs: rpw 4096 -> 4/partition -> 16 warps -> 4 blocks;
        // warps 16; blocks 32; smem 1 KB -> 228. -> 4 blocks, 16 warps, 0.25.
        let o = occ("9.0", 128, 128, 0);
        assert_eq!((o.blocks_per_sm, o.limiter), (4, Limiter::Registers));
        assert_eq!(o.limit_by_smem, 228);
        assert_eq!(o.occupancy, 0.25);
        // 227 KB = 232448 B + 1 KB reserved = 233472 = all of 228 KB -> 1 block.
        let o = occ("9.0", 128, 32, 232448);
        assert_eq!((o.blocks_per_sm, o.limiter), (1, Limiter::SharedMemory));
        // 232449 B exceeds the 227 KB per-block maximum.
        assert!(occupancy(&cc("9.0"), &res(128, 32, 232449)).is_err());
    }

    #[test]
    fn sm90_carveouts() {
        // 128 threads, 32 regs, 16 KB: alloc 17408. Default (228 KB):
        // 233472/17408 = 13.4 -> 13 blocks (warps 16, regs 16).
        let c = cc("9.0");
        let r = res(128, 32, 16384);
        assert_eq!(occupancy(&c, &r).unwrap().blocks_per_sm, 13);
        // 100 KB carveout: 102400/17408 = 5.9 -> 5.
        let o = occupancy_with_carveout(&c, &r, Some(100 * 1024)).unwrap();
        assert_eq!(o.blocks_per_sm, 5);
        // 10000 B -> rounds up to 16 KB, which cannot hold one 17408 B block ->
        // the smallest carveout that can (32 KB): 32768/17408 = 1.
        let o = occupancy_with_carveout(&c, &r, Some(10000)).unwrap();
        assert_eq!(o.blocks_per_sm, 1);
        // Above the largest carveout -> error.
        assert!(occupancy_with_carveout(&c, &r, Some(300 * 1024)).is_err());
        // The driver's choice keeps 13 blocks: needs >= 13 x 17408 = 226304 -> 228 KB.
        assert_eq!(preferred_carveout_bytes(&c, &r).unwrap(), 228 * 1024);
        // 256 threads, no smem: 8 blocks (warps) x 1 KB reserved -> 8 KB carveout.
        assert_eq!(
            preferred_carveout_bytes(&c, &res(256, 32, 0)).unwrap(),
            8 * 1024
        );
    }

    #[test]
    fn sm70_carveout_and_pre_volta_fixed() {
        // sm_70, 128 threads, 40000 B: alloc roundup(40000, 256) = 40192;
        // 98304/40192 = 2.4 -> 2 blocks; with a 64 KB carveout 65536/40192 = 1.
        let c = cc("7.0");
        let r = res(128, 32, 40000);
        assert_eq!(occupancy(&c, &r).unwrap().blocks_per_sm, 2);
        assert_eq!(
            occupancy_with_carveout(&c, &r, Some(65536))
                .unwrap()
                .blocks_per_sm,
            1
        );
        // Turing: a 0 preference means 32 KB (the smallest carveout).
        let t = cc("7.5");
        let o = occupancy_with_carveout(&t, &res(128, 32, 8192), Some(0)).unwrap();
        assert_eq!(o.limit_by_smem, 4); // 32768/8192
                                        // Pascal: carveout ignored (fixed 96 KB on 6.1): 98304/40192 = 2.
        let p = cc("6.1");
        assert_eq!(
            occupancy_with_carveout(&p, &r, Some(1024))
                .unwrap()
                .blocks_per_sm,
            2
        );
    }

    #[test]
    fn errors() {
        let c = cc("8.6");
        let e = occupancy(&c, &res(0, 32, 0)).unwrap_err().to_string();
        assert!(e.contains("0 threads"), "{e}");
        let e = occupancy(&c, &res(1025, 32, 0)).unwrap_err().to_string();
        assert!(e.contains("1025") && e.contains("1024"), "{e}");
        let e = occupancy(&c, &res(128, 256, 0)).unwrap_err().to_string();
        assert!(e.contains("256 registers"), "{e}");
        let e = occupancy(&c, &res(128, 32, 101377))
            .unwrap_err()
            .to_string();
        assert!(e.contains("101377") && e.contains("101376"), "{e}");
        // 5.3 has 32K registers per block: 1024 threads x 64 regs = 65536 > 32768.
        let e = occupancy(&cc("5.3"), &res(1024, 64, 0))
            .unwrap_err()
            .to_string();
        assert!(e.contains("32768"), "{e}");
        assert!(!e.contains('\n'));
    }

    #[test]
    fn limiter_display() {
        assert_eq!(Limiter::SharedMemory.to_string(), "shared memory");
        assert_eq!(Limiter::Threads.to_string(), "threads");
        assert_eq!(Limiter::Warps.to_string(), "warps");
        assert_eq!(Limiter::Registers.to_string(), "registers");
        assert_eq!(Limiter::Blocks.to_string(), "blocks");
    }

    #[test]
    fn gpu_limits_feed_the_calculator() {
        let cat = Catalog::builtin();
        let g = cat.resolve("rtx 4070").unwrap();
        let o = occupancy(&cat.limits(g).unwrap(), &res(256, 32, 0)).unwrap();
        assert_eq!((o.blocks_per_sm, o.occupancy), (6, 1.0));
    }

    #[test]
    fn invariants_over_a_grid() {
        let cat = Catalog::builtin();
        let threads: Vec<u32> = (1..=1024)
            .step_by(37)
            .chain([32, 64, 96, 128, 256, 512, 768, 1024])
            .collect();
        let regs = [0u32, 1, 16, 24, 32, 40, 48, 64, 72, 96, 128, 168, 200, 255];
        let mut checked = 0;
        for c in cat.compute_capabilities() {
            let smems = [
                0u32,
                1,
                1000,
                4096,
                16384,
                40000,
                49152,
                c.max_smem_per_block,
            ];
            for &t in &threads {
                let wpb = warps_per_block(c, t);
                for &r in &regs {
                    let mut prev_blocks = u32::MAX;
                    for &s in &smems {
                        let Ok(o) = occupancy(c, &res(t, r, s)) else {
                            prev_blocks = 0;
                            continue;
                        };
                        checked += 1;
                        assert!(o.occupancy > 0.0 && o.occupancy <= 1.0);
                        assert!(o.blocks_per_sm * wpb <= c.max_warps_per_sm);
                        assert_eq!(o.warps_per_sm, o.blocks_per_sm * wpb);
                        assert!(
                            o.blocks_per_sm <= c.max_blocks_per_sm
                                || (wpb == 1 && c.one_warp_blocks_unbounded)
                        );
                        let regs_used =
                            u64::from(allocated_regs_per_warp(c, r)) * u64::from(o.warps_per_sm);
                        assert!(regs_used <= u64::from(c.regs_per_sm));
                        let smem_used =
                            u64::from(allocated_smem_per_block(c, s)) * u64::from(o.blocks_per_sm);
                        assert!(smem_used <= u64::from(c.smem_per_sm));
                        // More shared memory never allows more blocks.
                        assert!(o.blocks_per_sm <= prev_blocks);
                        prev_blocks = o.blocks_per_sm;
                        // Any carveout gives at most the default's blocks.
                        for k in c.carveouts_bytes() {
                            let ok = occupancy_with_carveout(c, &res(t, r, s), Some(k)).unwrap();
                            assert!(ok.blocks_per_sm <= o.blocks_per_sm);
                        }
                    }
                }
            }
        }
        assert!(checked > 10_000, "{checked}");
    }
}
