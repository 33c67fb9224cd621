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
