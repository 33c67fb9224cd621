//! How alike two GPUs are, and how much a source GPU weighs for a target: what the
//! analytical model's weights and the local prediction interval share (each of
//! [`super::analytical`] and [`super::interval`] reads it; neither reads the other
//! for it).

use crate::catalog::{Catalog, Gpu};

/// The powers of a source GPU's similarity to the target a fit may weigh its sources
/// with, the first being the similarity itself. A higher power leans on the most
/// similar sources: on the GEMM latency tables (datacenter GPUs of two generations
/// beside two workstation boards) sources of the target's own kind are the better
/// guide, on Kernel Tuner's GEMM (eleven GPUs of six generations) no source is close
/// enough to be trusted alone.
pub const SIMILARITY_POWERS: [i32; 3] = [1, 2, 4];

/// A source's weight: its similarity to the target to the power `power`.
pub fn source_weight(similarity: f64, power: i32) -> f64 {
    if power == 1 {
        similarity
    } else {
        similarity.powi(power)
    }
}

/// Architectural similarity of two GPUs in (0, 1]: close bandwidth, compute, L2 and
/// generation mean the source's efficiency is more likely to transfer. The distance
/// counts the L2 and compute-capability differences a quarter as much as the
/// bandwidth and compute ones: leave one corpus out the analytical model is 18.12 %
/// pooled so, 18.14 % without the L2 term, 18.42 % without the compute-capability one
/// and 18.24 % with all four at full weight (NeuSight 22.5 against 21.5 %).
pub fn similarity(catalog: &Catalog, a: &Gpu, b: &Gpu) -> f64 {
    similarity_at(&catalog.distances(a, b))
}

/// [`similarity`] of two GPUs [`gpu_distances`](crate::catalog::gpu_distances) apart.
pub(crate) fn similarity_at(distances: &[f64; crate::catalog::GPU_DISTANCES]) -> f64 {
    let [_, cc, bw, fp32, _, l2, _, _] = *distances;
    let d = bw + fp32 + 0.25 * l2 + 0.25 * cc;
    (-d).exp()
}
