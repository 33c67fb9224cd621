//! What travels with the binary: the pre-trained model, the kernel resources and the
//! experiment definitions are built in; the shipped data is found under a data
//! directory, never through the source tree the binary was built from.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn checkout() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The built binary copied into a fresh directory (away from the checkout).
fn copied_binary() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("gpucast");
    std::fs::copy(env!("CARGO_BIN_EXE_gpucast"), &bin).unwrap();
    (dir, bin)
}

/// Run `bin` in `cwd` with an environment of PATH alone. A copy just written can be
/// briefly busy ("Text file busy"): a process another test forked meanwhile inherits
/// the copy's open handle until it execs, so the run is retried for a while.
fn run_bare(bin: &Path, cwd: &Path, args: &[&str]) -> Output {
    let mut tries = 0;
    loop {
        let run = Command::new(bin)
            .args(args)
            .current_dir(cwd)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .output();
        match run {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 100 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => return other.unwrap(),
        }
    }
}

/// The pre-trained model and the suite's kernel resources travel with the binary: a
/// copy run from an empty directory, with PATH its whole environment, predicts exactly
/// as the built one does in the checkout; GPUCAST_MODELS, when set, names where the
/// model is instead.
#[test]
fn predict_with_the_pretrained_model_runs_without_the_checkout() {
    let (_bin_dir, bin) = copied_binary();
    let empty = tempfile::tempdir().unwrap();
    let runs = checkout().join("datasets/own/h200/runs.csv");
    let args = [
        "predict",
        "--runs",
        runs.to_str().unwrap(),
        "--target",
        "H100 SXM5",
        "--model",
        "pretrained",
        "--format",
        "csv",
    ];
    let away = run_bare(&bin, empty.path(), &args);
    assert!(
        away.status.success(),
        "{}",
        String::from_utf8_lossy(&away.stderr)
    );
    let here = Command::new(env!("CARGO_BIN_EXE_gpucast"))
        .args(args)
        .current_dir(checkout())
        .env_remove("GPUCAST_MODELS")
        .output()
        .unwrap();
    assert!(here.status.success());
    let away = String::from_utf8_lossy(&away.stdout);
    assert_eq!(
        away,
        String::from_utf8_lossy(&here.stdout),
        "the same predictions away from the checkout"
    );
    assert!(away.lines().count() > 100, "{away}");
    let elsewhere = Command::new(&bin)
        .args(args)
        .current_dir(empty.path())
        .env("GPUCAST_MODELS", empty.path())
        .output()
        .unwrap();
    assert_eq!(elsewhere.status.code(), Some(2));
    let err = String::from_utf8_lossy(&elsewhere.stderr);
    assert!(err.contains("no pre-trained model at"), "{err}");
}

#[test]
fn reproduce_without_a_data_directory_is_one_loud_line() {
    let (_bin_dir, bin) = copied_binary();
    let empty = tempfile::tempdir().unwrap();
    for args in [
        &["reproduce", "--out", "out"][..],
        &["bench", "--stage", "load"][..],
    ] {
        let o = run_bare(&bin, empty.path(), args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            err.trim_end(),
            "error: no data directory: pass --data-dir or set GPUCAST_DATA (the directory that holds datasets/, e.g. a gpucast checkout)",
            "{args:?}"
        );
        assert!(!empty.path().join("out").exists(), "nothing written");
    }
    // a data directory without datasets/ is named
    let o = run_bare(
        &bin,
        empty.path(),
        &["reproduce", "--data-dir", ".", "--out", "out"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--data-dir .: no datasets/ folder in it"));
}

/// The built-in experiments are the files of experiments/, every one, as they are.
#[test]
fn the_built_in_experiments_are_the_files_of_experiments() {
    let mut files: Vec<String> = std::fs::read_dir(checkout().join("experiments"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    files.sort();
    let builtin: Vec<&str> = gpucast::experiments::BUILTIN
        .iter()
        .map(|(f, _)| *f)
        .collect();
    assert_eq!(
        builtin, files,
        "experiments::BUILTIN lists every experiments/*.toml, sorted"
    );
    for (file, text) in gpucast::experiments::BUILTIN {
        let on_disk = std::fs::read_to_string(checkout().join("experiments").join(file)).unwrap();
        assert_eq!(*text, on_disk, "{file}");
    }
    // each loads, its data under the data directory; the same as the file read directly
    let data_dir = checkout();
    let exps = gpucast::experiments::ExperimentFiles::Builtin(data_dir)
        .load()
        .unwrap();
    let from_files = gpucast::experiments::ExperimentFiles::Dir(&data_dir.join("experiments"))
        .load()
        .unwrap();
    for (b, f) in exps.iter().zip(&from_files) {
        assert_eq!(b.name, f.name);
        assert!(!b.data.is_empty(), "{}", b.name);
        for (bd, fd) in b.data.iter().zip(&f.data) {
            assert!(bd.is_dir() || bd.is_file(), "{}: {}", b.name, bd.display());
            assert_eq!(
                bd.canonicalize().unwrap(),
                fd.canonicalize().unwrap(),
                "{}",
                b.name
            );
        }
    }
}
