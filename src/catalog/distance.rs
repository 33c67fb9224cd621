//! How far apart two GPUs' specifications are: the analytical model's source
//! similarity and the hybrid's shape transfer are built on these distances. The
//! catalog keeps them for its own GPUs (a table filled on first use): the analytical
//! model asks for one per projection, and computing it (four compute-capability
//! parses and five logarithms) was 12 % of `gpucast bench`'s analytical predict.

use super::{Catalog, Gpu};

/// ln(a / b), 0 when either is not positive (a missing figure compares as equal).
pub fn ln_ratio(a: f64, b: f64) -> f64 {
    if a > 0.0 && b > 0.0 {
        (a / b).ln()
    } else {
        0.0
    }
}

/// Names of [`gpu_distances`]' columns.
pub const GPU_DISTANCE_NAMES: [&str; 7] = [
    "other_cc",
    "abs_cc_delta",
    "abs_ln_bw_ratio",
    "abs_ln_fp32_ratio",
    "abs_ln_sm_ratio",
    "abs_ln_l2_ratio",
    "abs_ln_clock_ratio",
];

/// Distances between two GPUs' specifications, each >= 0 (0 for the same GPU).
pub fn gpu_distances(a: &Gpu, b: &Gpu) -> [f64; 7] {
    [
        if a.cc_major_minor() == b.cc_major_minor() {
            0.0
        } else {
            1.0
        },
        (a.cc_number() - b.cc_number()).abs(),
        ln_ratio(a.mem_bandwidth_gbs, b.mem_bandwidth_gbs).abs(),
        ln_ratio(a.fp32_gflops, b.fp32_gflops).abs(),
        ln_ratio(a.sm_count as f64, b.sm_count as f64).abs(),
        ln_ratio(a.l2_bytes as f64, b.l2_bytes as f64).abs(),
        ln_ratio(a.boost_clock_mhz, b.boost_clock_mhz).abs(),
    ]
}

impl Catalog {
    /// [`gpu_distances`] of `a` and `b`: looked up when both are this catalog's own
    /// entries, computed otherwise.
    pub fn distances(&self, a: &Gpu, b: &Gpu) -> [f64; 7] {
        match (self.index_of(a), self.index_of(b)) {
            (Some(i), Some(j)) => {
                let n = self.gpus.len();
                let table = self.distances.get_or_init(|| {
                    self.gpus
                        .iter()
                        .flat_map(|x| self.gpus.iter().map(move |y| gpu_distances(x, y)))
                        .collect()
                });
                table[i * n + j]
            }
            _ => gpu_distances(a, b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_distances_are_the_computed_ones() {
        let c = Catalog::builtin();
        let gpus = c.gpus();
        let (a, b) = (&gpus[0], &gpus[gpus.len() - 1]);
        assert_eq!(c.distances(a, b), gpu_distances(a, b));
        assert_eq!(c.distances(b, a), gpu_distances(b, a));
        assert_eq!(c.distances(a, a), [0.0; 7]);
        assert!(gpu_distances(a, b).iter().any(|d| *d > 0.0));
        // a GPU that is not a catalog entry (an edited copy) is computed, not looked up
        let mut edited = a.clone();
        edited.mem_bandwidth_gbs *= 2.0;
        assert!((c.distances(&edited, a)[2] - 2f64.ln()).abs() < 1e-12);
    }
}
