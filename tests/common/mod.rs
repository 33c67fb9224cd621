//! Shared helpers for the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// The reference study's measurements as shipped in datasets/ (runs and the study's
/// gpu_metrics.json): every clone has them, so no test skips for want of data.
pub fn reference_data() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("datasets/public/reference_study");
    assert!(
        p.is_dir(),
        "{} is missing from the source tree",
        p.display()
    );
    p
}

/// Write `text` to a fresh file named `name` in a temp dir (kept alive by the guard).
pub fn write_tmp(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join(name);
    std::fs::write(&p, text).expect("write");
    (dir, p)
}

/// A small canonical runs table. SYNTHETIC test fixture, not measurements.
pub const SYNTHETIC_RUNS: &str = "\
gpu,kernel,config,time_ms,flops,dram_bytes,block_threads,my_note
NVIDIA TITAN V,saxpy,N=1024,0.01,2048,12288,256,synthetic-a
NVIDIA GeForce RTX 4070,saxpy,N=1024,0.02,2048,12288,256,synthetic-b
";

/// A SYNTHETIC runs CSV: a stream kernel on four GPUs timed by one harness, three tiny
/// configurations on the launch floor `floor_ms` and three 1-4 GB ones at 85 % of each
/// GPU's peak bandwidth above it.
pub fn one_harness_csv(floor_ms: f64) -> String {
    let mut csv = String::from("gpu,kernel,config,time_ms,flops,dram_bytes,working_set_bytes\n");
    for (gpu, gbs) in [
        ("NVIDIA TITAN V", 652.8),
        ("NVIDIA GeForce RTX 2080 Ti", 616.0),
        ("NVIDIA GeForce RTX 4070", 504.2),
        ("NVIDIA H100 SXM5 80GB", 3352.0),
    ] {
        for kb in [4.0, 8.0, 16.0] {
            let bytes = kb * 1024.0;
            csv += &format!("{gpu},stream,KB={kb},{floor_ms},0,{bytes},{bytes}\n");
        }
        for gb in [1.0, 2.0, 4.0] {
            let bytes = gb * 1e9;
            let ms = floor_ms + bytes / (0.85 * gbs * 1e9) * 1e3;
            csv += &format!("{gpu},stream,GB={gb},{ms},0,{bytes},{bytes}\n");
        }
    }
    csv
}
