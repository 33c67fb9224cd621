//! The occupancy limits of a GPU: its compute capability's entry in the table, with
//! the GPU's own per-SM fields laid over it.

use super::{cc_key, parse_cc, Catalog, CcKey, ComputeCapability, Gpu};
use crate::error::{Error, Result};

impl Catalog {
    /// The compute capability table entry for "8.9" (also accepts "89", "sm_89"), or
    /// for an AMD LLVM target ("gfx90a").
    pub fn compute_capability(&self, cc: &str) -> Option<&ComputeCapability> {
        if let Some(amd @ CcKey::Amd(_)) = cc_key(cc) {
            return self
                .ccs
                .iter()
                .find(|c| cc_key(&c.cc).as_ref() == Some(&amd));
        }
        let key = parse_cc(cc).or_else(|| {
            let digits = cc.trim().trim_start_matches("sm_").trim_start_matches("sm");
            if digits.len() >= 2 && digits.chars().all(|c| c.is_ascii_digit()) {
                let (a, b) = digits.split_at(digits.len() - 1);
                Some((a.parse().ok()?, b.parse().ok()?))
            } else {
                None
            }
        })?;
        self.ccs.iter().find(|c| parse_cc(&c.cc) == Some(key))
    }

    /// `gpu`'s compute-capability entry: its own limits when it is one of this
    /// catalog's entries (the table's entry with its per-SM fields laid over), else the
    /// table's entry for its compute capability (a GPU made outside the catalog).
    pub fn compute_capability_of(&self, gpu: &Gpu) -> Option<&ComputeCapability> {
        self.limits_ref(gpu)
            .or_else(|| self.compute_capability(&gpu.compute_capability))
    }

    /// The occupancy limits for `gpu`: its compute capability's limits with the
    /// GPU's own fields (regs_per_sm, max_threads_per_sm, max_blocks_per_sm,
    /// smem_per_sm, warp_size, max_smem_per_block, reg_alloc_unit, smem_alloc_unit)
    /// overriding. An error when the compute capability is not in the table, which
    /// only happens for a GPU that did not come through this catalog's loading
    /// (loading refuses such GPUs).
    pub fn limits(&self, gpu: &Gpu) -> Result<ComputeCapability> {
        let mut base = self
            .compute_capability(&gpu.compute_capability)
            .cloned()
            .ok_or_else(|| {
                Error::Catalog(format!(
                    "GPU '{}': compute capability '{}' is not in the compute capability table",
                    gpu.name, gpu.compute_capability
                ))
            })?;
        base.warp_size = gpu.warp_size;
        base.regs_per_sm = gpu.regs_per_sm;
        base.max_regs_per_block = base.max_regs_per_block.min(gpu.regs_per_sm);
        base.max_threads_per_sm = gpu.max_threads_per_sm;
        base.max_warps_per_sm = gpu.max_threads_per_sm / gpu.warp_size.max(1);
        base.max_threads_per_block = base.max_threads_per_block.min(gpu.max_threads_per_sm);
        base.max_blocks_per_sm = gpu.max_blocks_per_sm;
        if let Some(u) = gpu.reg_alloc_unit {
            base.reg_alloc_unit = u;
        }
        if let Some(u) = gpu.smem_alloc_unit {
            base.smem_alloc_unit = u;
        }
        if gpu.smem_per_sm != base.smem_per_sm {
            // Keep the carveouts below the GPU's maximum and end the list with it.
            base.smem_per_sm = gpu.smem_per_sm;
            let mut kb: Vec<u32> = base
                .smem_carveout_kb
                .iter()
                .copied()
                .filter(|k| k * 1024 < gpu.smem_per_sm)
                .collect();
            kb.push(gpu.smem_per_sm.div_ceil(1024));
            base.smem_carveout_kb = kb;
        }
        let per_block_cap = gpu.smem_per_sm.saturating_sub(base.reserved_smem_per_block);
        base.max_smem_per_block = match gpu.max_smem_per_block {
            Some(b) => b.min(per_block_cap.max(1)),
            None => base.max_smem_per_block.min(per_block_cap.max(1)),
        };
        Ok(base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::occupancy::{occupancy, LaunchResources};

    fn cat() -> Catalog {
        Catalog::builtin()
    }

    #[test]
    fn gpu_limits_match_compute_capability_table() {
        let c = cat();
        for g in c.gpus() {
            let cc = c
                .compute_capability(&g.compute_capability)
                .unwrap_or_else(|| {
                    panic!("{}: cc {} not in the table", g.name, g.compute_capability)
                });
            assert_eq!(g.regs_per_sm, cc.regs_per_sm, "{}", g.name);
            assert_eq!(g.max_threads_per_sm, cc.max_threads_per_sm, "{}", g.name);
            assert_eq!(g.max_blocks_per_sm, cc.max_blocks_per_sm, "{}", g.name);
            assert_eq!(g.smem_per_sm, cc.smem_per_sm, "{}", g.name);
            assert_eq!(g.warp_size, cc.warp_size, "{}", g.name);
            if let Some(b) = g.max_smem_per_block {
                assert_eq!(b, cc.max_smem_per_block, "{}", g.name);
            }
            assert_eq!(&c.limits(g).unwrap(), cc, "{}", g.name);
            assert!(g.source.is_some(), "{} has no source", g.name);
            // every measured figure says where it comes from
            let measured = g.sustained_bandwidth_gbs.is_some() || !g.measured.is_empty();
            assert_eq!(measured, g.measured_source.is_some(), "{}", g.name);
        }
    }

    /// Waves per SIMD of a one-wavefront block using `vgprs` VGPRs on `cc`.
    fn waves_per_simd(c: &Catalog, cc: &str, vgprs: u32) -> u32 {
        let l = c.compute_capability(cc).unwrap();
        let res = LaunchResources {
            block_threads: l.warp_size,
            regs_per_thread: vgprs,
            smem_per_block: 0,
        };
        occupancy(l, &res).unwrap().warps_per_sm / l.warp_alloc_granularity
    }

    #[test]
    fn amd_occupancy_follows_amds_rules() {
        let c = cat();
        // LLVM's AMDGPU CodeGen test agpr-register-count.ll, kernel_40_vgprs:
        // "GFX908: Occupancy: 6" with 40 VGPRs, "GFX90A: Occupancy: 8" with 56 VGPRs
        // (VGPRs and AGPRs of one file), and kernel_32_agprs: 44 registers give 8 on gfx90a.
        assert_eq!(waves_per_simd(&c, "gfx908", 40), 6);
        assert_eq!(waves_per_simd(&c, "gfx90a", 56), 8);
        assert_eq!(waves_per_simd(&c, "gfx90a", 44), 8);
        // AMDGPUBaseInfo getNumWavesPerEUWithNumVGPRs: min(total / roundup(VGPRs,
        // granule), wave slots): gfx90a 512 / 72 = 7, 512 / 128 = 4, 512 / 512 = 1;
        // gfx1030 (granule 16 in wave32) 1024 / 96 = 10; gfx1100 (granule 24)
        // rounds 100 VGPRs up to 120, 1536 / 120 = 12; few VGPRs hit the 16 wave slots.
        assert_eq!(waves_per_simd(&c, "gfx90a", 72), 7);
        assert_eq!(waves_per_simd(&c, "gfx90a", 128), 4);
        assert_eq!(waves_per_simd(&c, "gfx90a", 512), 1);
        assert_eq!(waves_per_simd(&c, "gfx906", 24), 10);
        assert_eq!(waves_per_simd(&c, "gfx1030", 96), 10);
        assert_eq!(waves_per_simd(&c, "gfx1030", 32), 16);
        assert_eq!(waves_per_simd(&c, "gfx1100", 100), 12);
        assert_eq!(waves_per_simd(&c, "gfx1100", 96), 16);

        // getMaxWorkGroupsPerCU: a one-wave workgroup holds no barrier (32 of them fit
        // a gfx90a CU's 32 wave slots); two waves are bounded by 16 barriers.
        let l = c.compute_capability("gfx90a").unwrap();
        let blocks = |threads, smem| {
            occupancy(
                l,
                &LaunchResources {
                    block_threads: threads,
                    regs_per_thread: 32,
                    smem_per_block: smem,
                },
            )
            .unwrap()
            .blocks_per_sm
        };
        assert_eq!(blocks(64, 0), 32);
        assert_eq!(blocks(128, 0), 16);
        // LDS in 512-byte blocks: 20000 bytes take 20480, three per 64 KiB CU.
        assert_eq!(blocks(256, 20000), 3);
        // The 160 KiB LDS of a gfx950 CU, in 1280-byte blocks: 40000 bytes take 40960, four.
        let l950 = c.compute_capability("gfx950").unwrap();
        let o = occupancy(
            l950,
            &LaunchResources {
                block_threads: 256,
                regs_per_thread: 32,
                smem_per_block: 40000,
            },
        )
        .unwrap();
        assert_eq!(
            (o.blocks_per_sm, o.limiter),
            (4, crate::occupancy::Limiter::SharedMemory)
        );
        // A 1024-thread workgroup of 512-VGPR waves needs 16 x 512 VGPRs per lane on
        // 4 SIMDs of 512: it cannot be resident.
        assert!(occupancy(
            l,
            &LaunchResources {
                block_threads: 1024,
                regs_per_thread: 512,
                smem_per_block: 0,
            }
        )
        .is_err());
    }

    #[test]
    fn foreign_gpu_of_unknown_capability_has_no_limits() {
        let c = cat();
        let mut g = c.resolve("rtx 4070").unwrap().clone();
        g.compute_capability = "13.7".into();
        let e = c.limits(&g).unwrap_err().to_string();
        assert!(e.contains("13.7") && e.contains("RTX 4070"), "{e}");
    }

    #[test]
    fn compute_capability_table_contents() {
        let c = cat();
        for cc in [
            "3.5", "3.7", "5.0", "5.2", "5.3", "6.0", "6.1", "6.2", "7.0", "7.2", "7.5", "8.0",
            "8.6", "8.7", "8.9", "9.0", "10.0", "10.3", "12.0",
        ] {
            let t = c
                .compute_capability(cc)
                .unwrap_or_else(|| panic!("missing {cc}"));
            assert_eq!(t.max_threads_per_block, 1024);
            assert_eq!(t.max_regs_per_thread, 255);
            assert_eq!(t.reg_alloc_unit, 256);
            assert_eq!(
                t.warp_alloc_granularity,
                if cc == "6.0" { 2 } else { 4 },
                "{cc}"
            );
            let (ma, _) = t.major_minor();
            assert_eq!(
                t.reserved_smem_per_block,
                if ma >= 8 { 1024 } else { 0 },
                "{cc}"
            );
            assert_eq!(t.smem_alloc_unit, if ma >= 8 { 128 } else { 256 }, "{cc}");
            assert!(t.max_smem_per_block + t.reserved_smem_per_block <= t.smem_per_sm);
        }
        // cudaOccMaxBlocksPerMultiprocessor in cuda_occupancy.h (CUDA 12.9).
        for (cc, blocks) in [
            ("3.5", 16),
            ("sm_37", 16),
            ("sm_89", 24),
            ("9.0", 32),
            ("10.0", 32),
            ("10.3", 32),
            ("12.0", 24),
        ] {
            assert_eq!(
                c.compute_capability(cc).unwrap().max_blocks_per_sm,
                blocks,
                "{cc}"
            );
        }
        assert_eq!(c.compute_capability("86").unwrap().max_blocks_per_sm, 16);
        assert_eq!(
            c.compute_capability("7.5").unwrap().smem_carveout_kb,
            vec![32, 64]
        );
        // Kepler: 48 KB shared memory per SM on 3.5, 112 KB on 3.7 (GK210), whose
        // register file is twice as large.
        let k = c.compute_capability("3.5").unwrap();
        assert_eq!(
            (k.smem_per_sm, k.regs_per_sm, k.max_warps_per_sm),
            (49152, 65536, 64)
        );
        let k = c.compute_capability("3.7").unwrap();
        assert_eq!(
            (k.smem_per_sm, k.regs_per_sm, k.max_regs_per_block),
            (114688, 131072, 65536)
        );
        assert_eq!(
            c.compute_capability("10.3").unwrap().smem_carveout_kb,
            c.compute_capability("10.0").unwrap().smem_carveout_kb
        );
        assert!(c.compute_capability("4.2").is_none());
    }

    /// Kepler occupancy, as NVIDIA's occupancy calculator gives it.
    #[test]
    fn kepler_occupancy() {
        let c = cat();
        let res = |t, r, s| LaunchResources {
            block_threads: t,
            regs_per_thread: r,
            smem_per_block: s,
        };
        let k20 = c.limits(c.resolve("Tesla K20m").unwrap()).unwrap();
        // 256 threads x 64 registers: 2048 registers per warp, 8 warps per block,
        // 64K registers hold 32 warps = 4 blocks (50 % of 64 warps).
        let o = occupancy(&k20, &res(256, 64, 0)).unwrap();
        assert_eq!((o.blocks_per_sm, o.warps_per_sm), (4, 32));
        assert_eq!(o.occupancy, 0.5);
        // 128 threads, 32 registers, 12 KB shared: shared memory allows 4 blocks of
        // the 48 KB; the 16-block limit and registers (16) would allow more.
        let o = occupancy(&k20, &res(128, 32, 12 * 1024)).unwrap();
        assert_eq!(o.blocks_per_sm, 4);
        // Small blocks hit Kepler's 16 blocks per SM.
        let o = occupancy(&k20, &res(64, 16, 0)).unwrap();
        assert_eq!((o.blocks_per_sm, o.occupancy), (16, 0.5));
        // GK210 (K80): the doubled register file fits 256 x 64 at full occupancy.
        let k80 = c.limits(c.resolve("Tesla K80").unwrap()).unwrap();
        let o = occupancy(&k80, &res(256, 64, 0)).unwrap();
        assert_eq!((o.blocks_per_sm, o.occupancy), (8, 1.0));
        let o = occupancy(&k80, &res(128, 32, 12 * 1024)).unwrap();
        assert_eq!(o.blocks_per_sm, 9); // 112 KB / 12 KB
    }
}
