//! How far apart two GPUs' specifications are: the analytical model's source
//! similarity and the hybrid's shape transfer are built on these distances. The
//! catalog keeps them for its own GPUs (a table filled on first use): the analytical
//! model asks for one per projection, and computing it (four compute-capability
//! parses and five logarithms) was 12 % of `gpucast bench`'s analytical predict.

use super::{Catalog, ComputeCapability, Gpu};

/// ln(a / b), 0 when either is not positive (a missing figure compares as equal).
pub fn ln_ratio(a: f64, b: f64) -> f64 {
    if a > 0.0 && b > 0.0 {
        (a / b).ln()
    } else {
        0.0
    }
}

/// Names of [`gpu_distances`]' columns.
pub const GPU_DISTANCE_NAMES: [&str; GPU_DISTANCES] = [
    "other_cc",
    "abs_cc_delta",
    "abs_ln_bw_ratio",
    "abs_ln_fp32_ratio",
    "abs_ln_sm_ratio",
    "abs_ln_l2_ratio",
    "abs_ln_clock_ratio",
    "other_instruction_set",
];

/// How many distances [`gpu_distances`] gives.
pub const GPU_DISTANCES: usize = 8;
/// [`gpu_distances`]' "other_instruction_set": 0 for the same instruction set, else 1.
pub const OTHER_INSTRUCTION_SET: usize = 7;

/// Distances between two GPUs' specifications, each >= 0 (0 for the same GPU);
/// `same_instruction_set`: whether their compute capabilities share a machine
/// instruction set ([`Catalog::same_instruction_set`]).
pub fn gpu_distances(a: &Gpu, b: &Gpu, same_instruction_set: bool) -> [f64; GPU_DISTANCES] {
    [
        if a.same_compute_capability(b) {
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
        if same_instruction_set { 0.0 } else { 1.0 },
    ]
}

impl Catalog {
    /// [`gpu_distances`] of `a` and `b`: looked up when both are this catalog's own
    /// entries, computed otherwise.
    pub fn distances(&self, a: &Gpu, b: &Gpu) -> [f64; GPU_DISTANCES] {
        match (self.index_of(a), self.index_of(b)) {
            (Some(i), Some(j)) => {
                let n = self.gpus.len();
                let table = self.distances.get_or_init(|| {
                    // (each GPU's set looked up once, not once per pair)
                    let sets: Vec<Option<&str>> = self
                        .gpus
                        .iter()
                        .map(|g| self.instruction_set_of(g))
                        .collect();
                    let mut table = Vec::with_capacity(n * n);
                    for (x, sx) in self.gpus.iter().zip(&sets) {
                        for (y, sy) in self.gpus.iter().zip(&sets) {
                            table.push(gpu_distances(x, y, same_set(x, *sx, y, *sy)));
                        }
                    }
                    table
                });
                table[i * n + j]
            }
            _ => gpu_distances(a, b, self.same_instruction_set(a, b)),
        }
    }

    /// Whether `a` and `b` run one machine instruction set (SASS): NVIDIA documents
    /// one for Maxwell and Pascal together, one for Ampere and Ada
    /// (`instruction_set` in compute_capabilities.toml). A compute capability the table
    /// lacks shares its set with no other.
    pub fn same_instruction_set(&self, a: &Gpu, b: &Gpu) -> bool {
        same_set(a, self.instruction_set_of(a), b, self.instruction_set_of(b))
    }

    /// The instruction set of `gpu`'s compute capability (its entry in the table:
    /// [`ComputeCapability::instruction_set`]); None when the table lacks it.
    fn instruction_set_of(&self, gpu: &Gpu) -> Option<&str> {
        self.compute_capability_of(gpu)
            .map(ComputeCapability::instruction_set)
    }
}

/// Whether GPUs `a` and `b`, of instruction sets `set_a` and `set_b`, share one: the
/// same compute capability always does.
fn same_set(a: &Gpu, set_a: Option<&str>, b: &Gpu, set_b: Option<&str>) -> bool {
    a.same_compute_capability(b) || matches!((set_a, set_b), (Some(x), Some(y)) if x == y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_distances_are_the_computed_ones() {
        let c = Catalog::builtin();
        let gpus = c.gpus();
        let (a, b) = (&gpus[0], &gpus[gpus.len() - 1]);
        let computed = |x, y| gpu_distances(x, y, c.same_instruction_set(x, y));
        assert_eq!(c.distances(a, b), computed(a, b));
        assert_eq!(c.distances(b, a), computed(b, a));
        assert_eq!(c.distances(a, a), [0.0; GPU_DISTANCES]);
        assert!(computed(a, b).iter().any(|d| *d > 0.0));
        // a GPU that is not a catalog entry (an edited copy) is computed, not looked up
        let mut edited = a.clone();
        edited.mem_bandwidth_gbs *= 2.0;
        assert!((c.distances(&edited, a)[2] - 2f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn instruction_sets_follow_nvidias_grouping() {
        let c = Catalog::builtin();
        let gpu = |n: &str| c.resolve(n).unwrap();
        let other_set = |a: &str, b: &str| c.distances(gpu(a), gpu(b))[OTHER_INSTRUCTION_SET];
        // Maxwell (5.2) and Pascal (6.0, 6.1): one instruction set, three compute
        // capabilities.
        assert_eq!(other_set("GTX TITAN X", "GTX 1080 Ti"), 0.0);
        assert_eq!(other_set("Tesla P100 PCIe 12GB", "GTX 1080 Ti"), 0.0);
        assert_eq!(
            c.distances(gpu("Tesla P100 PCIe 12GB"), gpu("GTX 1080 Ti"))[0],
            1.0
        );
        // Ampere and Ada together; Volta and Turing apart; Kepler alone.
        assert_eq!(other_set("A100 PCIe 40GB", "L40S"), 0.0);
        assert_eq!(other_set("Tesla V100 PCIe 32GB", "RTX 2080 Ti"), 1.0);
        assert_eq!(other_set("Tesla K20m", "GTX TITAN X"), 1.0);
        // A compute capability without one shares it with no other.
        let mut entry = c.compute_capability("6.1").unwrap().clone();
        assert_eq!(entry.instruction_set(), "Maxwell and Pascal");
        entry.instruction_set = None;
        assert_eq!(entry.instruction_set(), "6.1");
    }
}
