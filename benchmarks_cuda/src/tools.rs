//! Locating NVRTC, ptxas and nvdisasm: --cuda-tools DIR, $GPUCAST_CUDA_TOOLS,
//! the repo's .venv-cuda (scripts/install-cuda-tools.sh), $CUDA_HOME/$CUDA_PATH,
//! /usr/local/cuda, then the system PATH / loader.
use std::path::{Path, PathBuf};

/// Directories to search, most specific first.
pub fn search_dirs(explicit: Option<&Path>) -> Vec<PathBuf> {
    let mut v = Vec::new();
    if let Some(p) = explicit {
        v.push(p.to_path_buf());
    }
    if let Ok(p) = std::env::var("GPUCAST_CUDA_TOOLS") {
        if !p.is_empty() {
            v.push(PathBuf::from(p));
        }
    }
    // the venv made by scripts/install-cuda-tools.sh, relative to the working
    // directory (the checkout's root, or benchmarks_cuda/ under `cargo test`)
    v.push(PathBuf::from(".venv-cuda"));
    v.push(PathBuf::from("../.venv-cuda"));
    for e in ["CUDA_HOME", "CUDA_PATH"] {
        if let Ok(p) = std::env::var(e) {
            if !p.is_empty() {
                v.push(PathBuf::from(p));
            }
        }
    }
    v.push(PathBuf::from("/usr/local/cuda"));
    v
}

/// Places inside one root where NVIDIA's wheels or a toolkit keep things.
fn roots_in(dir: &Path) -> Vec<PathBuf> {
    let mut v = vec![dir.to_path_buf()];
    // venv: lib/python3.*/site-packages/nvidia/<component>
    if let Ok(rd) = std::fs::read_dir(dir.join("lib")) {
        for e in rd.flatten() {
            let nv = e.path().join("site-packages/nvidia");
            if let Ok(rd2) = std::fs::read_dir(&nv) {
                let mut comps: Vec<PathBuf> = rd2.flatten().map(|c| c.path()).collect();
                comps.sort();
                v.extend(comps);
            }
        }
    }
    // a site-packages/nvidia directory given directly
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.join("lib").is_dir() || p.join("bin").is_dir() {
                v.push(p);
            }
        }
    }
    v
}

pub fn nvrtc_candidates(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for d in dirs {
        if d.is_file() {
            v.push(d.clone());
            continue;
        }
        for r in roots_in(d) {
            for sub in ["lib", "lib64", "bin"] {
                for name in ["libnvrtc.so.12", "libnvrtc.so", "libnvrtc.so.13"] {
                    let p = r.join(sub).join(name);
                    if p.is_file() {
                        v.push(p);
                    }
                }
            }
        }
    }
    // the system loader path last
    for n in ["libnvrtc.so.12", "libnvrtc.so", "libnvrtc.so.13"] {
        v.push(PathBuf::from(n));
    }
    v
}

/// Find an executable (ptxas, nvdisasm, cuobjdump).
pub fn find_tool(name: &str, dirs: &[PathBuf]) -> Option<PathBuf> {
    for d in dirs {
        for r in roots_in(d) {
            let p = r.join("bin").join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(name))
            .find(|p| p.is_file())
    })
}
