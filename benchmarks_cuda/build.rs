//! Embeds kernels/**/*.cu and suite.toml into the binary (single-file deploy) and
//! records the project commit (read from .git without running git).
use std::{env, fs, path::Path, path::PathBuf};

fn collect(dir: &Path, base: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    let mut ents: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    ents.sort();
    for p in ents {
        if p.is_dir() {
            collect(&p, base, out);
        } else if p.extension().and_then(|e| e.to_str()) == Some("cu") {
            let rel = p
                .strip_prefix(base)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            out.push((rel, p));
        }
    }
}

fn git_commit(root: &Path) -> Option<String> {
    let git = root.join(".git");
    let head = fs::read_to_string(git.join("HEAD")).ok()?;
    let head = head.trim();
    if let Some(r) = head.strip_prefix("ref: ") {
        println!("cargo:rerun-if-changed={}", git.join(r).display());
        if let Ok(s) = fs::read_to_string(git.join(r)) {
            return Some(s.trim().to_string());
        }
        let packed = fs::read_to_string(git.join("packed-refs")).ok()?;
        packed
            .lines()
            .find(|l| l.ends_with(r))
            .map(|l| l[..40.min(l.len())].to_string())
    } else {
        Some(head.to_string())
    }
}

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let kdir = manifest_dir.join("kernels");
    let mut files = Vec::new();
    collect(&kdir, &kdir, &mut files);
    let mut code = String::from("pub static KERNEL_FILES: &[(&str, &str)] = &[\n");
    for (rel, p) in &files {
        code.push_str(&format!(
            "    ({:?}, include_str!({:?})),\n",
            rel,
            p.display().to_string()
        ));
    }
    code.push_str("];\n");
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    fs::write(out.join("embedded_kernels.rs"), code).unwrap();
    println!("cargo:rerun-if-changed=kernels");
    println!("cargo:rerun-if-changed=suite.toml");
    println!("cargo:rerun-if-env-changed=GPUCAST_COMMIT");
    let root = manifest_dir.parent().unwrap_or(&manifest_dir);
    println!(
        "cargo:rerun-if-changed={}",
        root.join(".git/HEAD").display()
    );
    let commit = env::var("GPUCAST_COMMIT")
        .ok()
        .or_else(|| git_commit(root))
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=GPUCAST_BUILD_COMMIT={commit}");
}
