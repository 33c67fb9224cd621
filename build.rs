//! Tells the tests whether the public data beside the repository (`../shared`) is
//! there: the tests that read it are then compiled as ignored without it, so
//! `cargo test` lists them as ignored instead of counting a test that checked nothing
//! as passed (the test harness has no way to skip at run time).
//!
//! With `../shared` present it is watched (about 130 files: adding or removing it
//! reruns this script). Without it only this file is watched: a path that does not
//! exist would rerun the script, and rebuild the crate, on every build. So a
//! `../shared` added after a build is seen after `touch build.rs` (or a clean build);
//! until then its tests still show as ignored, never as passed.

use std::path::Path;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(shared_data)");
    // (read when the script runs: `env!` would fix the path the script was compiled at)
    let root = std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let shared = Path::new(&root).join("../shared");
    if shared.is_dir() {
        println!("cargo::rustc-cfg=shared_data");
        println!("cargo::rerun-if-changed={}", shared.display());
    } else {
        println!("cargo::rerun-if-changed=build.rs");
    }
}
