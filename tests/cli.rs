//! The `gpucast` binary end to end: exit codes, one-line errors, outputs.

mod common;

use common::*;
use std::process::{Command, Output};

fn gpucast(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpucast"))
        .args(args)
        .output()
        .expect("run gpucast")
}

/// Run gpucast, require success (showing its stderr otherwise) and return its stdout.
fn gpucast_ok(args: &[&str]) -> String {
    let o = gpucast(args);
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}

/// Run gpucast, require exit code 1 (showing its stdout otherwise) and return its stderr.
fn gpucast_err(args: &[&str]) -> String {
    let o = gpucast(args);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    stderr(&o)
}

/// A JSON file (a saved model) as a value.
fn read_json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The predicted times of [`one_harness_csv`]'s tiny configurations in `predict`'s CSV.
fn tiny_stream_ms(csv: &str) -> Vec<f64> {
    csv.lines()
        .filter(|l| l.starts_with("stream,KB="))
        .map(|l| l.split(',').nth(2).unwrap().parse().unwrap())
        .collect()
}

/// The shipped benchmark-hub corpus (Kernel Tuner caches of seven GPUs), as a path.
fn benchmark_hub() -> String {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/public/benchmark_hub");
    dir.to_str().unwrap().to_string()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `--version` names the release, the model format and the built-in model's data hash.
#[test]
fn version_says_what_a_result_cites() {
    let out = gpucast_ok(&["--version"]);
    let want = format!(
        "gpucast {} (model format {}, pre-trained model data {})",
        env!("CARGO_PKG_VERSION"),
        gpucast::models::hybrid::MODEL_FORMAT_VERSION,
        gpucast::predict::pretrained_data_hash().unwrap(),
    );
    assert_eq!(out.trim(), want);
    assert_eq!(gpucast::predict::pretrained_data_hash().unwrap().len(), 16);
}

#[test]
fn every_command_has_help() {
    for args in [
        vec!["--help"],
        vec!["data", "--help"],
        vec!["data", "import", "--help"],
        vec!["data", "validate", "--help"],
        vec!["data", "show", "--help"],
        vec!["gpus", "list", "--help"],
        vec!["gpus", "show", "--help"],
        vec!["predict", "--help"],
        vec!["explain", "--help"],
        vec!["evaluate", "--help"],
        vec!["train", "--help"],
        vec!["reproduce", "--help"],
    ] {
        let o = gpucast(&args);
        assert!(o.status.success(), "{args:?}");
        assert!(stdout(&o).contains("Usage:"), "{args:?}");
    }
}

#[test]
fn gpus_list_shows_at_least_40() {
    let o = gpucast(&["gpus", "list", "--format", "csv"]);
    assert!(o.status.success());
    let lines = stdout(&o).lines().count() - 1;
    assert!(lines >= 40, "{lines} GPUs");
    let printed = gpucast_ok(&["gpus", "show", "tesla v100-pcie-32gb"]);
    assert!(printed.contains("sm_count = 80"));
}

#[test]
fn bad_files_exit_nonzero_with_one_line() {
    let (_d, p) = write_tmp(
        "neg.csv",
        "gpu,kernel,config,time_ms,flops,dram_bytes\nNVIDIA TITAN V,k,c,-1,0,0\n",
    );
    let err = gpucast_err(&["data", "validate", p.to_str().unwrap()]);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("neg.csv:2: column 'time_ms'"), "{err}");

    let (_d, p) = write_tmp(
        "nobytes.csv",
        "gpu,kernel,config,time_ms,flops\nNVIDIA TITAN V,k,c,1,0\n",
    );
    let err = gpucast_err(&["data", "validate", p.to_str().unwrap()]);
    assert!(
        err.contains("nobytes.csv: missing required column 'dram_bytes'"),
        "{err}"
    );
}

#[test]
fn validate_reference_data_reports_flagged_rows() {
    let dir = reference_data();
    let out = gpucast_ok(&["data", "validate", dir.to_str().unwrap()]);
    assert!(out.contains("NVIDIA GeForce GTX TITAN X") && out.contains("flat_time="));
    let per = "excluded, rows per rule: above_peak_bandwidth 7, above_peak_flops 2, flat_time 41";
    assert!(
        out.contains("243 rows in 1 file(s): 70 flagged, 50 excluded") && out.contains(per),
        "{out}"
    );
}

#[test]
fn evaluate_json_follows_the_contract() {
    let dir = reference_data();
    let printed = gpucast_ok(&[
        "evaluate",
        "--protocol",
        "logo",
        "--model",
        "analytical",
        "--data",
        dir.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&printed).expect("json");
    assert_eq!(v["protocol"], "logo");
    let results = v["results"].as_array().unwrap();
    let targets: Vec<&str> = results
        .iter()
        .map(|r| r["target"].as_str().unwrap())
        .collect();
    assert!(targets.contains(&"NVIDIA TITAN V") && targets.contains(&"all"));
    for r in results {
        for key in [
            "model",
            "target",
            "n",
            "mape",
            "median_ape",
            "median_ratio",
            "within_10",
            "within_25",
            "within_50",
            "rmse_log",
        ] {
            assert!(!r[key].is_null(), "missing {key}");
        }
        assert!(r["within_50"].as_f64().unwrap() <= 1.0);
    }
}

#[test]
fn train_then_predict_and_reject_bad_model_files() {
    let dir = reference_data();
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("h.json");
    gpucast_ok(&[
        "train",
        "--data",
        dir.to_str().unwrap(),
        "--model",
        "hybrid",
        "--out",
        model.to_str().unwrap(),
    ]);
    let out = tmp.path().join("pred.csv");
    gpucast_ok(&[
        "predict",
        "--model",
        model.to_str().unwrap(),
        "--runs",
        dir.to_str().unwrap(),
        "--source",
        "RTX 2080 Ti",
        "--target",
        "NVIDIA A100-SXM4-40GB",
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&out).unwrap();
    let header = text.lines().next().unwrap();
    for col in [
        "gpu",
        "kernel",
        "config",
        "target_gpu",
        "pred_ms",
        "pred_lo_ms",
        "pred_hi_ms",
        "bound",
        "model",
    ] {
        assert!(
            header.split(',').any(|c| c == col),
            "missing {col} in {header}"
        );
    }
    assert_eq!(text.lines().count(), 1 + 63);

    // predict the TITAN V with a model file that must be refused (exit 1)
    let predict_with = |model: &std::path::Path| {
        gpucast_err(&[
            "predict",
            "--model",
            model.to_str().unwrap(),
            "--runs",
            dir.to_str().unwrap(),
            "--target",
            "TITAN V",
        ])
    };
    let bad = tmp.path().join("bad.json");
    std::fs::write(&bad, "{ not json").unwrap();
    let err = predict_with(&bad);
    assert!(err.contains("not a gpucast model file"), "{err}");

    let mut v: serde_json::Value = read_json(&model);
    v["version"] = serde_json::json!(999);
    let old = tmp.path().join("old.json");
    std::fs::write(&old, v.to_string()).unwrap();
    let err = predict_with(&old);
    assert!(err.contains("format version 999"), "{err}");

    // The file holds the fitted residual, not a design matrix to refit.
    let saved: serde_json::Value = read_json(&model);
    assert!(saved.get("x").is_none() && saved.get("y").is_none());
    assert!(saved.get("residual").is_some() && saved["pairs"].as_u64().unwrap() > 0);
    // Every hand edit that would change predictions silently is an error.
    let edits: [(&str, serde_json::Value, &str); 7] = [
        ("correction_share", serde_json::json!(-0.5), "outside 0..1"),
        (
            "interval",
            serde_json::json!({"pooled_log": [-1e308, 1e308]}),
            "interval.pooled_log (-1e308, 1e308) must be numbers within +-20",
        ),
        (
            "similarity_power",
            serde_json::json!(3),
            "similarity_power 3 is not one of [1, 2, 4]",
        ),
        ("new_family_share", serde_json::json!(2.0), "outside 0..1"),
        (
            "interval",
            serde_json::json!({"pooled_log": [0.4, -0.3]}),
            "lo <= hi",
        ),
        (
            "features",
            serde_json::json!(["a", "b"]),
            "features must be",
        ),
        ("regressor", serde_json::json!("forest"), "residual is a"),
    ];
    for (field, value, message) in edits {
        let mut v = saved.clone();
        if field == "regressor" && v["residual"].is_null() {
            continue; // nothing to disagree with
        }
        v[field] = value;
        let edited = tmp.path().join(format!("{field}.json"));
        std::fs::write(&edited, v.to_string()).unwrap();
        let err = predict_with(&edited);
        assert!(err.contains(message), "{field}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

#[test]
fn a_user_catalog_adds_a_gpu_that_does_not_exist_yet() {
    let dir = reference_data();
    // SYNTHETIC catalog entry: a GPU that does not exist.
    let toml = r#"
[[gpu]]
name = "Future X1"
vendor = "NVIDIA"
arch = "Future"
compute_capability = "13.0"
sm_count = 200
boost_clock_mhz = 2000.0
fp32_gflops = 102400.0
cores_per_sm = 128
mem_bandwidth_gbs = 8000.0
l2_bytes = 134217728
regs_per_sm = 65536
max_threads_per_sm = 2048
max_blocks_per_sm = 32
smem_per_sm = 233472
warp_size = 32

# A compute capability the built-in table lacks needs its limits (SYNTHETIC).
[[cc]]
cc = "13.0"
max_threads_per_block = 1024
max_threads_per_sm = 2048
max_warps_per_sm = 64
max_blocks_per_sm = 32
regs_per_sm = 65536
max_regs_per_block = 65536
max_regs_per_thread = 255
reg_alloc_unit = 256
warp_alloc_granularity = 4
smem_per_sm = 233472
max_smem_per_block = 232448
smem_alloc_unit = 128
reserved_smem_per_block = 1024
smem_carveout_kb = [0, 100, 228]
"#;
    let (_d, cat) = write_tmp("future.toml", toml);
    let printed = gpucast_ok(&[
        "--gpus",
        cat.to_str().unwrap(),
        "predict",
        "--runs",
        dir.to_str().unwrap(),
        "--source",
        "TITAN V",
        "--target",
        "future x1",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&printed).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 60);
    assert!(rows
        .iter()
        .all(|r| r["target_gpu"] == "Future X1" && r["pred_ms"].as_f64().unwrap() > 0.0));
    // without the file the name is unknown: one line, a usage error
    let o = gpucast(&[
        "predict",
        "--runs",
        dir.to_str().unwrap(),
        "--target",
        "future x1",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1);
    assert!(err.contains("--target: unknown GPU 'future x1'"), "{err}");
}

#[test]
fn a_partial_calibration_file_lays_measured_figures_over_a_known_gpu() {
    let dir = reference_data();
    // The shape `gpucast-bench calibrate` writes; figures from the study's own
    // device_calibration_titanv.json (measured on the TITAN V, outside its runs).
    let toml = r#"
[[gpu]]
name = "NVIDIA TITAN V"
compute_capability = "7.0"
sm_count = 80
sustained_bandwidth_gbs = 609.9
sustained_fp32_gflops = 13480.1
measured.copy_bandwidth_gbs = 609.9
measured_source = "reference study calibration/device_calibration_titanv.json"
"#;
    let (_d, cal) = write_tmp("cal.toml", toml);
    let out = gpucast_ok(&["--gpus", cal.to_str().unwrap(), "gpus", "show", "titan v"]);
    assert!(
        out.contains("sustained_bandwidth_gbs = 609.9") && out.contains("l2_bytes = 4718592"),
        "{out}"
    );
    // Only the TITAN V has measured figures: the other targets must say so.
    let err = gpucast_err(&[
        "--gpus",
        cal.to_str().unwrap(),
        "evaluate",
        "--protocol",
        "logo",
        "--model",
        "analytical",
        "--data",
        dir.to_str().unwrap(),
        "--target-calibration",
        "measured",
        "--format",
        "json",
    ]);
    assert!(
        err.contains("has no measured 'sustained_bandwidth_gbs'"),
        "{err}"
    );
}

#[test]
fn evaluate_says_what_the_hybrid_fit_decided() {
    let dir = reference_data();
    let out = gpucast_ok(&[
        "evaluate",
        "--model",
        "hybrid,hybrid@0.25",
        "--data",
        dir.to_str().unwrap(),
    ]);
    // The fixed share is reported as fixed, in every fold.
    let fixed = out
        .lines()
        .find(|l| l.starts_with("fitted: hybrid@0.25:"))
        .unwrap_or_else(|| panic!("no summary for hybrid@0.25 in {out}"));
    assert_eq!(
        fixed.matches("correction share 0.25 (fixed), no shape transfer, kernel-ratio share 0, sources weighted by their similarity to the power 1, the target on each source's launch floor").count(),
        fixed.split("; ").count(),
        "{fixed}"
    );
    let chosen = out
        .lines()
        .find(|l| l.starts_with("fitted: hybrid:"))
        .unwrap_or_else(|| panic!("no summary for hybrid in {out}"));
    // The folds chose different shares (TITAN V's 1): one entry per fold. None
    // carried over to held-out kernel families there: a new family gets none.
    assert!(
        chosen.contains("NVIDIA TITAN V: correction share 1 (chosen by leave-one-GPU-out inside the training GPUs), 0 for a new kernel family"),
        "{chosen}"
    );
}

/// Run gpucast with its stdout closed by the reader straight away (`gpucast ... | head
/// -c 0`): it must end quietly with exit code 0, not panic.
fn closed_pipe_exit(args: &[&str]) -> (Option<i32>, String) {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpucast"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run gpucast");
    drop(child.stdout.take());
    let o = child.wait_with_output().expect("wait");
    (o.status.code(), stderr(&o))
}

#[test]
fn a_closed_stdout_ends_quietly() {
    let mut cases: Vec<Vec<String>> = vec![
        vec![
            "gpus".into(),
            "list".into(),
            "--format".into(),
            "json".into(),
        ],
        vec!["gpus".into(), "list".into()],
        vec![
            "gpus".into(),
            "list".into(),
            "--format".into(),
            "csv".into(),
        ],
    ];
    let d = reference_data().to_str().unwrap().to_string();
    let out = tempfile::tempdir().unwrap();
    let o = out.path().join("r").to_str().unwrap().to_string();
    for args in [
        vec!["reproduce", "--data", &d, "--out", &o, "--no-plots"],
        vec![
            "explain", "--runs", &d, "--row", "12", "--target", "TITAN V",
        ],
        vec![
            "predict",
            "--runs",
            &d,
            "--target",
            "H100 SXM5 80GB",
            "--format",
            "csv",
        ],
        vec!["data", "show", &d, "--limit", "0"],
        vec!["data", "validate", &d, "--format", "json"],
    ] {
        cases.push(args.into_iter().map(String::from).collect());
    }
    for args in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, err) = closed_pipe_exit(&args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn bad_usage_exits_2_and_bad_input_exits_1() {
    // clap's own usage errors and ours share exit code 2.
    assert_eq!(
        gpucast(&["evaluate", "--protocol", "nope", "--data", "x"])
            .status
            .code(),
        Some(2)
    );
    let (_d, p) = write_tmp("runs.csv", SYNTHETIC_RUNS);
    let p = p.to_str().unwrap();
    let o = gpucast(&["evaluate", "--model", "hybrid@2", "--data", p]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("outside 0..1"), "{}", stderr(&o));
    let o = gpucast(&[
        "predict",
        "--runs",
        p,
        "--target",
        "H100 SXM5 80GB",
        "--source",
        "RTX 3090",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("has no rows"), "{}", stderr(&o));
    // A missing file is bad input.
    assert_eq!(
        gpucast(&["data", "validate", "/nonexistent.csv"])
            .status
            .code(),
        Some(1)
    );
}

#[test]
fn validate_lists_flagged_rows_with_reasons() {
    let dir = reference_data();
    let csv = gpucast_ok(&[
        "data",
        "validate",
        dir.to_str().unwrap(),
        "--list",
        "--format",
        "csv",
    ]);
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "place,gpu,kernel,config,verdict,reasons"
    );
    let rows: Vec<&str> = lines.collect();
    // the summary's flagged count is the list's length
    let summary = gpucast_ok(&[
        "data",
        "validate",
        dir.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&summary).unwrap();
    assert_eq!(rows.len() as u64, v["flagged"].as_u64().unwrap());
    assert!(rows.iter().any(|r| r.contains("single GPU")), "{csv}");
    assert!(rows
        .iter()
        .all(|r| r.contains(",kept,") || r.contains(",excluded,")));
}

/// The shipped pre-trained hybrid loads (its format is this gpucast's), stays small,
/// says what it was trained on, and `--model pretrained` predicts with its interval.
#[test]
fn the_shipped_pretrained_model_loads_and_predicts() {
    let bytes = gpucast::predict::PRETRAINED_JSON.len();
    assert!(bytes <= 20 * 1024 * 1024, "{bytes} bytes");
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("models/hybrid-pretrained.json");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        gpucast::predict::PRETRAINED_JSON,
        "the built-in model is the file in models/ (rebuild after retraining)"
    );
    let m = gpucast::predict::pretrained().unwrap();
    assert!(
        m.state().training_gpus.len() >= 20,
        "{:?}",
        m.state().training_gpus
    );
    assert_eq!(m.state().data_hash.len(), 16);
    let dir = reference_data();
    let csv = gpucast_ok(&[
        "predict",
        "--runs",
        dir.to_str().unwrap(),
        "--source",
        "TITAN V",
        "--target",
        "H100 SXM5",
        "--model",
        "pretrained",
        "--format",
        "csv",
    ]);
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "interval").unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert!(!rows.is_empty());
    assert!(
        rows.iter()
            .all(|r| r.rsplit(',').nth(header.len() - 1 - col) == Some("90%")),
        "{csv}"
    );
}

/// Predictions from one source GPU have only the sources' spread as an interval (no
/// other GPU to hold out): `predict` says so, and that the pre-trained hybrid
/// calibrates one; with the pre-trained hybrid nothing is said.
#[test]
fn an_uncalibrated_interval_is_named_with_the_model_that_calibrates_one() {
    let runs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/own/h200/runs.csv");
    let args = |model: &'static str| {
        let mut a = vec![
            "predict".to_string(),
            "--runs".into(),
            runs.to_str().unwrap().into(),
            "--target".into(),
            "H100 SXM5".into(),
            "--format".into(),
            "csv".into(),
        ];
        if !model.is_empty() {
            a.extend(["--model".to_string(), model.to_string()]);
        }
        a
    };
    let run = |model: &'static str| {
        let a = args(model);
        let o = gpucast(&a.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(o.status.success(), "{}", stderr(&o));
        (stdout(&o), stderr(&o))
    };
    let (csv, err) = run("");
    let rows = csv.lines().count() - 1;
    let spread = csv.lines().filter(|l| l.contains(",spread,")).count();
    assert!(spread > 0 && rows > 0, "{csv}");
    assert!(
        err.contains(&format!(
            "note: {spread} of {rows} predictions have only the spread"
        )) && err.contains("(model `pretrained`) calibrates it"),
        "{err}"
    );
    let (csv, err) = run("pretrained");
    assert!(!csv.contains(",spread,"), "{csv}");
    assert!(!err.contains("only the spread"), "{err}");
}

/// `reproduce --data` with data that lacks the GPUs an experiment selects (here the SM
/// partitions of `own-partition-scaling`) skips that experiment with a note rather
/// than failing the whole run.
#[test]
fn reproduce_with_other_data_skips_an_experiment_whose_gpus_it_lacks() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let exps = tmp.path().join("exps");
    std::fs::create_dir(&exps).unwrap();
    let shipped = |f: &str| std::fs::read_to_string(root.join("experiments").join(f)).unwrap();
    let partitions = "own_partition_scaling.toml";
    std::fs::write(exps.join(partitions), shipped(partitions)).unwrap();
    // its resources file is named relative to the shipped experiments directory
    let logo = shipped("ref_logo_all_gpus.toml").replace("resources = ", "# resources = ");
    std::fs::write(exps.join("ref_logo_all_gpus.toml"), logo).unwrap();
    let out = tmp.path().join("out");
    let data = root.join("datasets/public/reference_study");
    gpucast_ok(&[
        "reproduce",
        "--experiments",
        exps.to_str().unwrap(),
        "--data",
        data.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--no-plots",
    ]);
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        summary.contains(
            "- own-partition-scaling: skipped (the GPUs it selects are not in the data given)"
        ),
        "{summary}"
    );
    assert!(
        summary.contains("| logo | logo | analytical | 173 |"),
        "{summary}"
    );
}

/// A target can be a partition of a known GPU ("H100 SXM5 [16 SMs]"): a kernel that
/// needs the SMs' throughput is predicted slower on it than on the whole GPU, in
/// proportion to the SMs for a compute-bound one; a partition as large as the GPU is
/// refused.
#[test]
fn predict_on_a_partition_of_a_gpu() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let runs = root.join("datasets/own/h200/runs.csv");
    let pred = |target: &str, kernel: &str, config: &str| -> f64 {
        let csv = gpucast_ok(&[
            "predict",
            "--runs",
            runs.to_str().unwrap(),
            "--target",
            target,
            "--model",
            "analytical",
            "--format",
            "csv",
        ]);
        let line = csv
            .lines()
            .find(|l| l.starts_with(&format!("{kernel},\"{config}\"")))
            .unwrap_or_else(|| panic!("no {kernel} {config} in\n{csv}"));
        // kernel,"config",pred_ms,...: the config is quoted (it holds commas)
        let after_config = line.split("\",").nth(1).unwrap();
        after_config.split(',').next().unwrap().parse().unwrap()
    };
    let fma = ("fp32_fma_peak", "N=4194304,block=256,iters=512");
    let whole = pred("H100 SXM5", fma.0, fma.1);
    let part = pred("H100 SXM5 [33 SMs]", fma.0, fma.1);
    // compute-bound: 132/33 = 4x, within the waves' rounding (3.93 when written)
    assert!(
        (part / whole / 4.0 - 1.0).abs() < 0.05,
        "compute-bound: got {part} / {whole}"
    );
    let copy = ("stream_copy", "N=67108864,block=256");
    assert!(pred("H100 SXM5 [33 SMs]", copy.0, copy.1) > 2.0 * pred("H100 SXM5", copy.0, copy.1));
    let out = gpucast(&[
        "predict",
        "--runs",
        runs.to_str().unwrap(),
        "--target",
        "H100 SXM5 [132 SMs]",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("a partition has 1 to 131"), "{err}");
}

#[test]
fn evaluation_threads_change_nothing_but_the_time() {
    // The reference study's runs as shipped in datasets/ (4 GPUs: 4 LOGO folds).
    let data = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/datasets/public/reference_study"
    );
    let on = |threads: &str| {
        gpucast_ok(&[
            "--threads",
            threads,
            "evaluate",
            "--protocol",
            "logo",
            "--model",
            "analytical,hybrid",
            "--data",
            data,
            "--format",
            "json",
        ])
    };
    let one = on("1");
    assert!(one.contains("\"target\""), "{one}");
    assert_eq!(one, on("3"));
    let o = gpucast(&["--threads", "many", "evaluate", "--data", data]);
    assert_eq!(o.status.code(), Some(2)); // a usage error, as clap reports them
    assert!(stderr(&o).contains("--threads"), "{}", stderr(&o));
}

#[test]
fn prediction_threads_change_nothing_but_the_time() {
    // A shipped Kernel Tuner corpus: tens of thousands of distinct configurations,
    // several chunks of rows per thread.
    let data = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/datasets/public/gpu_benchmarking_paper"
    );
    let dir = tempfile::tempdir().unwrap();
    let on = |threads: &str| {
        let out = dir.path().join(format!("p{threads}.csv"));
        gpucast_ok(&[
            "--threads",
            threads,
            "predict",
            "--runs",
            data,
            "--target",
            "NVIDIA H100 SXM5 80GB",
            "--model",
            "analytical",
            "--out",
            out.to_str().unwrap(),
        ]);
        std::fs::read_to_string(out).unwrap()
    };
    let one = on("1");
    assert!(
        one.lines().count() > 3 * 4096,
        "{} rows",
        one.lines().count()
    );
    assert_eq!(one, on("3"));
}

/// `bench --stage STAGES --format json` on 100 reference rows of 2 GPUs, 2 repeats.
fn bench_json(stages: &str) -> serde_json::Value {
    bench_json_with(stages, &["--rows", "100", "--repeat", "2"])
}

/// `bench --stage STAGES --format json` on 2 GPUs of the reference data, with `args`.
fn bench_json_with(stages: &str, args: &[&str]) -> serde_json::Value {
    let dir = reference_data();
    let mut all = vec![
        "bench",
        "--data",
        dir.to_str().unwrap(),
        "--gpu-count",
        "2",
        "--stage",
        stages,
        "--format",
        "json",
    ];
    all.extend_from_slice(args);
    let printed = gpucast_ok(&all);
    serde_json::from_str(&printed).expect("json")
}

/// Each subset is timed laid out as asked: a table of its own by default (a copy, and
/// for the last subset the whole table cut down to it), or where its rows lie in the
/// whole table. Either way every row of each size is predicted.
#[test]
fn bench_lays_each_subset_out_as_asked() {
    for layout in ["table", "in-place"] {
        let v = bench_json_with(
            "analytical-predict",
            &["--rows", "50,100", "--repeat", "1", "--layout", layout],
        );
        let stages = v.as_array().expect("an array of stages");
        assert_eq!(stages.len(), 2, "{v}");
        for (t, rows) in stages.iter().zip([50.0, 100.0]) {
            assert_eq!(t["layout"], layout, "{t}");
            let rate = t["rows_per_second"].as_f64().unwrap();
            let min = t["min_seconds"].as_f64().unwrap();
            assert!(t["rows"].as_f64().unwrap() >= rows, "{t}");
            assert_eq!((rate * min).round(), t["rows"].as_f64().unwrap(), "{t}");
        }
    }
}

/// `bench --format json` pipes the timings as numbers (the table's text is rounded to
/// centiseconds): every repeat, the fastest, the rate and the peak memory.
#[test]
fn bench_json_gives_unrounded_numbers() {
    let v = bench_json("analytical-predict");
    let stages = v.as_array().expect("an array of stages");
    assert_eq!(stages.len(), 1);
    let t = &stages[0];
    assert_eq!(t["stage"], "analytical-predict");
    assert_eq!(
        (t["rows"].as_u64(), t["gpus"].as_u64()),
        (Some(100), Some(2))
    );
    assert_eq!(t["layout"], "table");
    let seconds: Vec<f64> = t["seconds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_f64().unwrap())
        .collect();
    assert_eq!(seconds.len(), 2);
    let min = t["min_seconds"].as_f64().unwrap();
    assert!(min > 0.0 && seconds.iter().all(|s| *s >= min), "{t}");
    // every row predicted (100 predictions over the fastest repeat)
    let rate = t["rows_per_second"].as_f64().unwrap();
    assert!(((rate * min) - 100.0).abs() < 1e-6 * 100.0, "{t}");
    assert!(t["peak_rss_bytes"].as_u64().unwrap() > 0);
}

/// `bench --stage load` times loading and validating the whole table, first among
/// the stages: each repeat, its rows and GPUs, rows per second over the fastest.
#[test]
fn bench_times_loading_as_a_stage() {
    let v = bench_json("analytical-predict,load");
    let stages: Vec<&str> = v
        .as_array()
        .expect("an array of stages")
        .iter()
        .map(|t| t["stage"].as_str().unwrap())
        .collect();
    assert_eq!(stages, ["load", "analytical-predict"]);
    let t = &v[0];
    // (whole files: no subset, so no layout)
    assert!(t["layout"].is_null(), "{t}");
    let (table, _) =
        gpucast::data::load_validated(&[reference_data()], &gpucast::catalog::Catalog::builtin())
            .unwrap();
    assert_eq!(
        (t["rows"].as_u64(), t["gpus"].as_u64()),
        (Some(table.len() as u64), Some(table.gpus().len() as u64))
    );
    assert_eq!(t["seconds"].as_array().unwrap().len(), 2);
    let min = t["min_seconds"].as_f64().unwrap();
    let rate = t["rows_per_second"].as_f64().unwrap();
    assert!(min > 0.0 && ((rate * min) - table.len() as f64).abs() < 1e-6 * rate * min);
}

/// `data show --format json|csv` carries every number as stored (the terminal table
/// rounds a time to the nanosecond and counts to 5 digits). SYNTHETIC row.
#[test]
fn data_show_for_programs_keeps_every_digit() {
    let (_dir, p) = write_tmp(
        "runs.csv",
        "gpu,kernel,config,time_ms,flops,dram_bytes\n\
         NVIDIA TITAN V,saxpy,N=7,0.0000123456789,123456789012345,98765.4321\n",
    );
    let path = p.to_str().unwrap();
    let printed = gpucast_ok(&["data", "show", path, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&printed).expect("json");
    let r = &v[0];
    assert_eq!(r["row"].as_u64(), Some(1));
    assert_eq!(r["time_ms"].as_f64(), Some(0.0000123456789));
    assert_eq!(r["flops"].as_f64(), Some(123456789012345.0));
    assert_eq!(r["dram_bytes"].as_f64(), Some(98765.4321));
    let csv = gpucast_ok(&["data", "show", path, "--format", "csv"]);
    let row = csv.lines().nth(1).unwrap();
    assert!(
        row.contains(",0.0000123456789,123456789012345,98765.4321,"),
        "{row}"
    );
    // the terminal table still rounds, for reading
    let table = gpucast_ok(&["data", "show", path]);
    assert!(
        table.contains("0.000012") && table.contains("1.2346e14"),
        "{table}"
    );
}

/// `explain` gives each source's weight, its share of the combination (the shares add
/// up to 100 %) and the similarity (times e for the target's compute capability) and
/// power it comes from.
#[test]
fn explain_says_how_each_source_is_weighted() {
    let dir = reference_data();
    let out = gpucast_ok(&[
        "explain",
        "--runs",
        dir.to_str().unwrap(),
        "--row",
        "12",
        "--target",
        "TITAN V",
    ]);
    let shares: Vec<f64> = out
        .lines()
        .filter_map(|l| l.trim().strip_prefix("weight "))
        .map(|l| {
            assert!(l.contains("to the power 1)"), "{l}");
            let pct = l.split(": ").nth(1).unwrap().split(" %").next().unwrap();
            pct.parse::<f64>().unwrap()
        })
        .collect();
    assert_eq!(shares.len(), 2, "{out}");
    assert!((shares.iter().sum::<f64>() - 100.0).abs() < 0.11, "{out}");
    assert!(
        shares[0] > shares[1],
        "the more similar source weighs more: {out}"
    );
    // A source of the target's compute capability counts e times as similar, and says so.
    let own = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("datasets/own/h100-80gb-hbm3/runs.csv");
    let out_same = gpucast_ok(&[
        "explain",
        "--runs",
        own.to_str().unwrap(),
        "--row",
        "1",
        "--target",
        "H200 SXM 141GB",
    ]);
    let line = out_same
        .lines()
        .find_map(|l| l.trim().strip_prefix("weight "))
        .unwrap_or_else(|| panic!("{out_same}"));
    assert!(
        line.contains("similarity 0.667 x e: the target's compute capability, to the power 1)"),
        "{line}"
    );
    let weight: f64 = line.split(':').next().unwrap().parse().unwrap();
    assert!(
        (weight - 0.667 * std::f64::consts::E).abs() < 0.002,
        "{line}"
    );
    // ... and what the calibrated interval comes from.
    assert!(
        out.lines()
            .any(|l| l.starts_with("interval: the training GPUs' held-out errors")),
        "{out}"
    );
}

/// A hybrid trained on the GEMM latency tables (seven datacenter GPUs it predicts within
/// a few per cent, two workstation boards it does not) saves an interval weighted toward
/// the training GPUs most like the target: narrow for a B200, wide for an L40S.
#[test]
fn a_saved_local_interval_is_narrow_for_a_target_like_the_well_predicted_gpus() {
    let tmp = tempfile::tempdir().unwrap();
    let data =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/public/aiconfigurator");
    let model = tmp.path().join("m.json");
    gpucast_ok(&[
        "train",
        "--data",
        data.to_str().unwrap(),
        "--sample",
        "0.01",
        "-o",
        model.to_str().unwrap(),
    ]);
    let saved: serde_json::Value = read_json(&model);
    let local = &saved["interval"]["local"];
    assert_eq!(local["gpus"].as_array().map(Vec::len), Some(9), "{local}");
    // The median interval width, in log units, of predictions from the H100's runs.
    let median_width = |target: &str| {
        let csv = gpucast_ok(&[
            "predict",
            "--model",
            model.to_str().unwrap(),
            "--runs",
            data.to_str().unwrap(),
            "--source",
            "H100 SXM5",
            "--target",
            target,
            "--format",
            "csv",
        ]);
        let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
        let (lo, hi) = (col("pred_lo_ms"), col("pred_hi_ms"));
        let mut widths: Vec<f64> = csv
            .lines()
            .skip(1)
            .map(|line| {
                // (the config column is quoted and holds commas: count from the end)
                let cells: Vec<&str> = line.rsplit(',').collect();
                let at = |c: usize| cells[header.len() - 1 - c].parse::<f64>().unwrap();
                (at(hi) / at(lo)).ln()
            })
            .collect();
        assert!(widths.len() > 1000, "{target}: {} rows", widths.len());
        widths.sort_by(f64::total_cmp);
        widths[widths.len() / 2]
    };
    let (b200, l40s) = (median_width("B200"), median_width("L40S"));
    assert!(b200 < 0.6 && l40s > 2.0 * b200, "B200 {b200}, L40S {l40s}");
    // `explain` fits the analytical model on the other GPUs and says which interval.
    let out = gpucast_ok(&[
        "explain",
        "--runs",
        data.to_str().unwrap(),
        "--row",
        "5",
        "--target",
        "B200",
    ]);
    assert!(
        out.contains("interval: the training GPUs' held-out errors, each GPU's weighted by its similarity to the target to the power"),
        "{out}"
    );
}

/// `explain` says when the fit put the target on its sources' launch floors, and the
/// target's floor shows it (SYNTHETIC runs: [`one_harness_csv`] at 3 µs).
/// `explain --model pretrained` shows what each fitted stage did, and its hybrid line
/// is `predict`'s prediction of that row.
#[test]
fn explain_shows_what_each_of_a_hybrids_stages_does() {
    let hub = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("datasets/public/benchmark_hub/runs.parquet");
    let runs = hub.to_str().unwrap();
    let args = |model: &'static str| {
        vec![
            "explain", "--runs", runs, "--row", "100", "--target", "RTX 3090", "--model", model,
        ]
    };
    let out = gpucast_ok(&args("pretrained"));
    let stage = |name: &str| -> f64 {
        let line = out
            .lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no line for {name}: {out}"));
        line.split(" x").nth(1).unwrap()[..6].parse().unwrap()
    };
    // The pre-trained model's residual share is 0; its shape transfer and analytical
    // share apply to this corpus, which it learned from.
    assert_eq!(stage("the learned residual correction"), 1.0);
    assert!(stage("the shape transfer") != 1.0, "{out}");
    let combined: f64 = out
        .lines()
        .find_map(|l| l.split("projections combined ").nth(1))
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let hybrid_line = out.lines().find(|l| l.starts_with("hybrid: ")).unwrap();
    let hybrid_ms: f64 = hybrid_line.split(' ').nth(1).unwrap().parse().unwrap();
    let product: f64 = [
        "the learned residual correction",
        "the kernel-ratio share",
        "the shape transfer",
        "the analytical fit's share",
    ]
    .iter()
    .map(|s| stage(s))
    .product();
    assert!((combined * product / hybrid_ms - 1.0).abs() < 1e-3, "{out}");
    let predicted = gpucast_ok(&[
        "predict",
        "--runs",
        runs,
        "--target",
        "RTX 3090",
        "--model",
        "pretrained",
        "--format",
        "csv",
    ]);
    let row: Vec<&str> = predicted.lines().nth(100).unwrap().rsplit(',').collect();
    // (kernel, "config", pred, lo, hi, interval, bound: from the end)
    let pred_ms: f64 = row[4].parse().unwrap();
    assert!(
        (hybrid_ms - pred_ms).abs() < 1e-6,
        "{hybrid_line} / {predicted:.200}"
    );
    // Without --model, no hybrid; a model that is not a hybrid is refused.
    let plain = gpucast_ok(&args("analytical"));
    assert!(!plain.contains("hybrid"), "{plain}");
    let o = gpucast(&args("forest"));
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("'forest' is not a model explain shows the stages of"));
}

#[test]
fn explain_says_when_the_target_sits_on_its_sources_launch_floors() {
    let csv = one_harness_csv(0.003);
    let (_d, runs) = write_tmp("runs.csv", &csv);
    let out = gpucast_ok(&[
        "explain",
        "--runs",
        runs.to_str().unwrap(),
        "--row",
        "1",
        "--target",
        "A100 SXM4 80GB",
    ]);
    assert!(
        out.contains("launch floor: the target's is each source's (its GPU's fastest run)"),
        "{out}"
    );
    let target_lines: Vec<&str> = out
        .lines()
        .filter(|l| l.trim_start().starts_with("target "))
        .collect();
    assert_eq!(target_lines.len(), 4, "{out}");
    assert!(
        target_lines.iter().all(|l| l.contains("floor 0.0030 ms")),
        "{out}"
    );
}

/// `--launch-floor sources` puts the target on its sources' floor, `catalog` on the
/// catalog's 1.5 µs; `choose` lets the fit pick: the sources' where four GPUs timed
/// alike say so, the catalog's with one GPU's runs to fit on (SYNTHETIC runs:
/// [`one_harness_csv`] at 3 µs).
#[test]
fn launch_floor_option_says_whose_floor_a_target_sits_on() {
    let all = one_harness_csv(0.003);
    let titan_v: String = all
        .lines()
        .filter(|l| l.starts_with("gpu,") || l.starts_with("NVIDIA TITAN V,"))
        .map(|l| format!("{l}\n"))
        .collect();
    let tiny_ms = |csv: &str, launch_floor: &str| -> Vec<f64> {
        let (_d, runs) = write_tmp("runs.csv", csv);
        let out = gpucast_ok(&[
            "predict",
            "--runs",
            runs.to_str().unwrap(),
            "--source",
            "TITAN V",
            "--target",
            "A100 SXM4 80GB",
            "--launch-floor",
            launch_floor,
            "--format",
            "csv",
        ]);
        tiny_stream_ms(&out)
    };
    let sources = tiny_ms(&all, "sources");
    assert_eq!(sources.len(), 3);
    assert!(
        sources.iter().all(|t| (0.0029..0.0032).contains(t)),
        "{sources:?}"
    );
    let catalog = tiny_ms(&all, "catalog");
    assert!(
        catalog.iter().all(|t| (0.0014..0.0017).contains(t)),
        "{catalog:?}"
    );
    assert_eq!(tiny_ms(&titan_v, "sources"), sources);
    assert_eq!(tiny_ms(&titan_v, "catalog"), catalog);
}

/// A hybrid trained (with the `extra` arguments) on four GPUs timed by one harness at
/// 3 µs (`one_harness_csv`), saved: the directory holding both, the runs' file, the
/// model's file and the model as JSON.
fn hybrid_on_one_harness(
    extra: &[&str],
) -> (
    tempfile::TempDir,
    std::path::PathBuf,
    std::path::PathBuf,
    serde_json::Value,
) {
    let (dir, runs) = write_tmp("runs.csv", &one_harness_csv(0.003));
    let model = dir.path().join("m.json");
    let mut args = vec!["train", "--data", runs.to_str().unwrap()];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["-o", model.to_str().unwrap()]);
    gpucast_ok(&args);
    let saved = read_json(&model);
    (dir, runs, model, saved)
}

/// `predict --format csv` of `runs` on the A100 with the saved model `model` and the
/// `extra` arguments.
fn predict_on_a100(
    model: &std::path::Path,
    runs: &std::path::Path,
    extra: &[&str],
) -> std::process::Output {
    let mut args = vec![
        "predict",
        "--model",
        model.to_str().unwrap(),
        "--runs",
        runs.to_str().unwrap(),
        "--target",
        "A100 SXM4 80GB",
        "--format",
        "csv",
    ];
    args.extend_from_slice(extra);
    gpucast(&args)
}

/// A hybrid told `--launch-floor F` saves it, predicts with it, and refuses the other
/// floor rather than ignoring it. (Told the catalog's, its correction learns on these
/// runs that that floor is too short: the tiny configurations still come out near 3 µs.)
#[test]
fn a_saved_hybrid_keeps_the_launch_floor_it_was_told() {
    for (floors, other, tiny_range) in [
        ("sources", "catalog", 0.0029..0.0032),
        ("catalog", "sources", 0.0014..0.0034),
    ] {
        let (_dir, runs, model, saved) = hybrid_on_one_harness(&["--launch-floor", floors]);
        assert_eq!(saved["launch_floors"], floors);
        let o = predict_on_a100(&model, &runs, &[]);
        assert!(o.status.success(), "{}", stderr(&o));
        let csv = stdout(&o);
        let tiny = tiny_stream_ms(&csv);
        assert_eq!(tiny.len(), 3, "{csv}");
        assert!(
            tiny.iter().all(|t| tiny_range.contains(t)),
            "{floors}: {tiny:?}"
        );
        let o = predict_on_a100(&model, &runs, &["--launch-floor", other]);
        assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
        assert!(
            stderr(&o).contains(&format!(
                "--launch-floor {other}: the saved model was fitted with the {floors} launch floors"
            )),
            "{}",
            stderr(&o)
        );
    }
}

/// `predict` writes one row per work: a source row validation kept where there is one
/// (a row it excluded would give a time the prediction never used), and the excluded
/// row with its reason where no kept row measured the work (in a terminal table, as a
/// note below it). SYNTHETIC rows: 10^9 FLOPs
/// in a picosecond is above every GPU's peak.
#[test]
fn predict_writes_a_kept_source_row_for_each_work() {
    let (dir, p) = write_tmp(
        "runs.csv",
        "gpu,kernel,config,time_ms,flops,dram_bytes\n\
         NVIDIA TITAN V,k,n=1,0.000000001,1000000000,1000000\n\
         NVIDIA GeForce RTX 2080 Ti,k,n=1,1.0,1000000000,1000000\n\
         NVIDIA TITAN V,k,n=2,0.000000001,1000000000,1000000\n",
    );
    let out = dir.path().join("pred.csv");
    gpucast_ok(&[
        "predict",
        "--runs",
        p.to_str().unwrap(),
        "--target",
        "H100 SXM5 80GB",
        "--out",
        out.to_str().unwrap(),
    ]);
    let csv = std::fs::read_to_string(&out).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    // n=1: the RTX 2080 Ti's row, predicted (0.252 ms: its 1 ms scaled by the two
    // compute roofs alone, the work being compute-bound with no launch geometry)
    assert!(
        rows[0].starts_with("NVIDIA GeForce RTX 2080 Ti,k,n=1,1.0,")
            && rows[0].contains(",NVIDIA H100 SXM5 80GB,0.252")
            && rows[0].ends_with(",analytical,"),
        "{csv}"
    );
    // n=2: only the excluded row measured it, so it stands with its reason
    assert!(
        rows[1].starts_with("NVIDIA TITAN V,k,n=2,")
            && rows[1].contains(
                ",,,,,,analytical,\"source row excluded by validation: above peak FLOP/s"
            ),
        "{csv}"
    );
    // The terminal table says so in a note below it, once per kind of reason, with
    // the first row's figures.
    let text = gpucast_ok(&[
        "predict",
        "--runs",
        p.to_str().unwrap(),
        "--target",
        "H100 SXM5 80GB",
    ]);
    let row = text.lines().find(|l| l.contains("n=2")).unwrap();
    assert!(row.ends_with("  no prediction [1]"), "{text}");
    let note = text.lines().last().unwrap();
    assert!(
        note.starts_with(
            "[1] 1 row: source row excluded by validation (above_peak_flops, below_launch_floor, single_gpu); the first: above peak FLOP/s"
        ),
        "{text}"
    );
}

/// Rows without a prediction are noted once per kind of reason, not once per row's
/// figures: the benchmark hub's pnpoly rows of the RTX 2080 Ti, each above its peaks
/// by its own figures, make two notes in `predict` (3,722 rows above both peaks, 12
/// above the FLOP/s one) and the same two lines in `tune`'s error, which ranks nothing.
#[test]
fn rows_without_predictions_are_noted_by_kind_of_reason() {
    let hub = &benchmark_hub();
    let args = [
        "--runs",
        hub,
        "--target",
        "RTX 4090",
        "--source",
        "RTX 2080 Ti",
    ];
    let text = gpucast_ok(&[&["predict"][..], &args].concat());
    let notes: Vec<&str> = text.lines().filter(|l| l.starts_with('[')).collect();
    let both = "source row excluded by validation (above_peak_bandwidth, above_peak_flops); the first: above peak bandwidth:";
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(
        notes[0].starts_with(&format!("[1] 3722 rows: {both}")),
        "{notes:?}"
    );
    assert!(
        notes[1].starts_with("[2] 12 rows: source row excluded by validation (above_peak_flops); the first: above peak FLOP/s:"),
        "{notes:?}"
    );
    let err = stderr(&gpucast(
        &[&["tune"][..], &args, &["--kernel", "pnpoly"]].concat(),
    ));
    assert!(
        err.contains(&format!(
            "has predictions (pnpoly: 3722 configurations not ranked: {both}"
        )),
        "{err}"
    );
    assert!(err.contains(". pnpoly: 12 configurations not ranked: source row excluded by validation (above_peak_flops)"), "{err}");
}

/// `explain --kernel K --config C` explains the work the row of that kernel and
/// configuration measured, its parameters in any order, as `--row` does; a
/// configuration no row has is a usage error naming it.
#[test]
fn explain_finds_a_work_by_kernel_and_configuration() {
    let dir = reference_data();
    let data = dir.to_str().unwrap();
    let by_row = gpucast_ok(&[
        "explain", "--runs", data, "--row", "8", "--target", "TITAN V",
    ]);
    assert!(
        by_row.starts_with("saxpy N=1048576,block=256 -> NVIDIA TITAN V"),
        "{by_row}"
    );
    let by_work = gpucast_ok(&[
        "explain",
        "--runs",
        data,
        "--kernel",
        "saxpy",
        "--config",
        "block=256, N=1048576",
        "--target",
        "TITAN V",
    ]);
    assert_eq!(by_work, by_row);
    // Parameters may be left out (as tune's table leaves out those a whole space
    // shares) where the rest name one configuration.
    let partial = gpucast_ok(&[
        "explain",
        "--runs",
        data,
        "--kernel",
        "saxpy",
        "--config",
        "N=1048576",
        "--target",
        "TITAN V",
    ]);
    assert_eq!(partial, by_row);
    let o = gpucast(&[
        "explain",
        "--runs",
        data,
        "--kernel",
        "saxpy",
        "--config",
        "block=256",
        "--target",
        "TITAN V",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("--config 'block=256': 6 configurations of saxpy have it, e.g. 'N=262144,block=256' and 'N=1048576,block=256': give more parameters"),
        "{}",
        stderr(&o)
    );
    let o = gpucast(&[
        "explain", "--runs", data, "--kernel", "saxpy", "--config", "N=3", "--target", "TITAN V",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o)); // a usage error
    let err = stderr(&o);
    assert!(
        err.contains("--config 'N=3': no row of saxpy has it"),
        "{err}"
    );
}

/// Predicting a GPU the data also measured says that its own rows are not sources (they
/// are what `evaluate` scores against), and where a saved model was trained with the
/// target's runs, that too; a GPU the data does not have gets no such note.
#[test]
fn predict_says_the_targets_own_rows_are_not_used() {
    let dir = reference_data();
    let data = dir.to_str().unwrap();
    let o = gpucast(&["predict", "--runs", data, "--target", "TITAN V"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let note = "note: the 60 row(s) measured on NVIDIA TITAN V are not sources of its predictions";
    assert!(stderr(&o).contains(note), "{}", stderr(&o));
    assert!(!stderr(&o).contains("the saved model"), "{}", stderr(&o));
    let o = gpucast(&["predict", "--runs", data, "--target", "RTX 3090"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("are not sources"), "{}", stderr(&o));
    // The pre-trained model learned from every corpus, the TITAN V's runs included.
    let o = gpucast(&[
        "predict",
        "--runs",
        data,
        "--target",
        "TITAN V",
        "--model",
        "pretrained",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "{note} (`gpucast evaluate` scores predictions against them); the saved model was trained with runs of NVIDIA TITAN V"
        )),
        "{}",
        stderr(&o)
    );
}

/// Where the data measured the target too, `tune` says how its first pick did there:
/// its measured time, that over the fastest measured, and its rank, all as the
/// target's own rows give them (which were not sources of the prediction).
#[test]
fn tune_checks_its_first_pick_against_the_targets_own_runs() {
    let hub = &benchmark_hub();
    let o = gpucast(&[
        "tune",
        "--runs",
        hub,
        "--target",
        "RTX A6000",
        "--kernel",
        "convolution_milo",
        "--top",
        "100000",
        "--format",
        "csv",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The space as tune ranked it: config is the fourth column, quoted.
    let ranked: Vec<String> = stdout(&o)
        .lines()
        .skip(1)
        .map(|l| l.split('"').nth(1).unwrap().to_string())
        .collect();
    let note = stderr(&o)
        .lines()
        .find(|l| l.starts_with("note: measured on NVIDIA RTX A6000, convolution_milo: "))
        .unwrap_or_else(|| panic!("{}", stderr(&o)))
        .to_string();
    // The target's own times, from the data.
    let shown = gpucast_ok(&[
        "data",
        "show",
        hub,
        "--gpu",
        "RTX A6000",
        "--kernel",
        "convolution_milo",
        "--limit",
        "0",
        "--format",
        "csv",
    ]);
    let times: std::collections::HashMap<String, f64> = shown
        .lines()
        .skip(1)
        .map(|l| {
            let config = l.split('"').nth(1).unwrap().to_string();
            let rest: Vec<&str> = l.rsplit('"').next().unwrap().split(',').collect();
            (config, rest[1].parse().unwrap())
        })
        .collect();
    let measured: Vec<f64> = ranked
        .iter()
        .filter_map(|c| times.get(c).copied())
        .collect();
    let pick = times[&ranked[0]];
    let best = measured.iter().copied().fold(f64::INFINITY, f64::min);
    let rank = measured.iter().filter(|&&t| t < pick).count() + 1;
    let expected = format!(
        "the configuration predicted fastest takes {pick:.6} ms, {:.3}x the fastest of the {} measured there (rank {rank})",
        pick / best,
        measured.len()
    );
    assert!(note.ends_with(&expected), "{note}\nexpected: {expected}");
    assert!(measured.len() > 1000, "{note}");
}

/// In a terminal, `tune` shows each configuration without the parameters every
/// configuration of its space sets alike (the benchmark hub's convolution always has a
/// 15 x 15 filter) and names them once below the table; CSV keeps whole keys.
#[test]
fn tune_names_a_spaces_shared_parameters_once() {
    let hub = &benchmark_hub();
    let args = [
        "tune",
        "--runs",
        hub,
        "--target",
        "RTX 4090",
        "--kernel",
        "convolution",
        "--top",
        "3",
    ];
    let text = gpucast_ok(&args);
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("convolution "))
        .collect();
    assert_eq!(rows.len(), 3, "{text}");
    assert!(rows.iter().all(|l| !l.contains("filter_")), "{text}");
    assert!(rows.iter().all(|l| l.contains("block_size_x=")), "{text}");
    let n = rows[0].split_whitespace().nth(2).unwrap();
    assert!(
        text.ends_with(&format!(
            "convolution: all {n} configurations have filter_height=15,filter_width=15 (not repeated above)\n"
        )),
        "{text}"
    );
    let csv = gpucast_ok(&[&args[..], &["--format", "csv"]].concat());
    assert_eq!(csv.lines().count(), 4, "{csv}");
    assert!(csv
        .lines()
        .skip(1)
        .all(|l| l.contains("filter_height=15,filter_width=15")));
}

/// A GPU name that names no one GPU fails before any data is read (tune, predict,
/// explain).
#[test]
fn gpu_names_are_checked_before_reading_data() {
    for command in ["tune", "predict", "explain"] {
        for names in [["A100", "RTX 4090"], ["RTX 4090", "A100"]] {
            let mut args = vec![
                command,
                "--runs",
                "no/such/runs.csv",
                "--target",
                names[0],
                "--source",
                names[1],
            ];
            if command == "explain" {
                args.extend(["--row", "1"]);
            }
            let o = gpucast(&args);
            assert_eq!(o.status.code(), Some(2), "{command}");
            let err = stderr(&o);
            assert!(
                err.contains("unknown GPU 'A100': ambiguous"),
                "{command}: {err}"
            );
            assert!(!err.contains("no/such"), "{command}: {err}");
        }
    }
}

/// `data validate --gpu` names the GPU of an Nsight Compute export that does not (as
/// `data import`, `predict` and `tune` do); without it the error says how.
#[test]
fn data_validate_takes_the_gpu_of_a_profile() {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/ncu/cc80_gemm_nersc_metrics.csv");
    let file = file.to_str().unwrap();
    let text = gpucast_ok(&["data", "validate", file, "--gpu", "A100 SXM4 40GB"]);
    assert!(
        text.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()
                == ["NVIDIA", "A100", "SXM4", "40GB", "3", "2", "3", "0", "0"]),
        "{text}"
    );
    let err = gpucast_err(&["data", "validate", file]);
    assert!(err.contains("pass it with --gpu NAME"), "{err}");
}

/// `tune` checks its model's picks on the data's own GPUs, each predicted from the
/// others: the mean top-1 regret and Spearman it prints are `evaluate --protocol logo
/// --per-kernel`'s for that kernel (the target, a GPU the data lacks, changes nothing);
/// `--no-check` leaves the note out.
#[test]
fn tune_checks_its_picks_on_the_sources() {
    let hub = &benchmark_hub();
    let args = [
        "tune",
        "--runs",
        hub,
        "--target",
        "RTX 4090",
        "--kernel",
        "convolution_milo",
        "--top",
        "1",
    ];
    let o = gpucast(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let note = stderr(&o)
        .lines()
        .find(|l| l.starts_with("note: convolution_milo: on the data's 6 other GPU(s), each predicted from the rest (leave-one-GPU-out), the first pick took "))
        .unwrap_or_else(|| panic!("{}", stderr(&o)))
        .to_string();
    let scored = gpucast_ok(&[
        "evaluate",
        "--protocol",
        "logo",
        "--model",
        "analytical",
        "--data",
        hub,
        "--per-kernel",
        "--format",
        "csv",
    ]);
    let row: Vec<&str> = scored
        .lines()
        .find(|l| l.starts_with("analytical,all,convolution_milo,"))
        .unwrap_or_else(|| panic!("{scored}"))
        .split(',')
        .collect();
    let header: Vec<&str> = scored
        .lines()
        .next()
        .unwrap_or_default()
        .split(',')
        .collect();
    let column = |name: &str| {
        let at = header.iter().position(|h| *h == name);
        row[at.unwrap_or_else(|| panic!("no {name} column: {header:?}"))]
    };
    let (spearman, regret) = (column("Spearman"), column("top-1 regret"));
    assert!(
        note.contains(&format!("(mean {regret}x;")),
        "{note} / {regret}"
    );
    assert!(
        note.ends_with(&format!("; Spearman {spearman}")),
        "{note} / {spearman}"
    );
    let o = gpucast(&[&args[..], &["--no-check"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !stderr(&o).contains("each predicted from the rest"),
        "{}",
        stderr(&o)
    );
    // every kernel's note, in kernel order as the table lists them
    let o = gpucast(&["tune", "--runs", hub, "--target", "RTX 4090", "--top", "1"]);
    let kernels: Vec<&str> = std::str::from_utf8(&o.stderr)
        .unwrap()
        .lines()
        .filter(|l| l.contains("each predicted from the rest"))
        .map(|l| l["note: ".len()..].split(':').next().unwrap())
        .collect();
    assert_eq!(
        kernels,
        [
            "convolution",
            "convolution_milo",
            "dedispersion_milo",
            "pnpoly",
            "xgemm"
        ]
    );
    // a kernel the data lacks is an error either way
    for check in [&[][..], &["--no-check"][..]] {
        let o = gpucast(
            &[
                &[
                    "tune", "--runs", hub, "--target", "RTX 4090", "--kernel", "nosuch",
                ][..],
                check,
            ]
            .concat(),
        );
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("--kernel 'nosuch' is not in the data"),
            "{}",
            stderr(&o)
        );
    }
}

/// `evaluate --per-kernel` in CSV is one table a program can read (per-target rows
/// with kernel `all`, per-kernel rows with target `all`); in JSON a `per_kernel`
/// array beside `results`, with the same figures.
#[test]
fn evaluate_per_kernel_is_one_csv_and_a_json_array() {
    let dir = reference_data();
    let data = dir.to_str().unwrap();
    let args = [
        "evaluate",
        "--protocol",
        "logo",
        "--model",
        "analytical",
        "--data",
        data,
        "--per-kernel",
    ];
    let csv = gpucast_ok(&[&args[..], &["--format", "csv"]].concat());
    let lines: Vec<&str> = csv.lines().collect();
    assert!(
        lines[0].starts_with("model,target,kernel,n,MAPE %,"),
        "{csv}"
    );
    assert!(
        lines.iter().all(|l| !l.is_empty()),
        "one table, no blank line: {csv}"
    );
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("model,")).count(),
        1,
        "{csv}"
    );
    let saxpy: Vec<&str> = lines
        .iter()
        .find(|l| l.starts_with("analytical,all,saxpy,"))
        .unwrap_or_else(|| panic!("{csv}"))
        .split(',')
        .collect();
    assert!(
        lines.iter().any(|l| l.starts_with("analytical,all,all,")),
        "{csv}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&gpucast_ok(&[&args[..], &["--format", "json"]].concat())).unwrap();
    let row = doc["per_kernel"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["kernel"] == "saxpy")
        .unwrap();
    assert_eq!(row["n"].as_u64().unwrap().to_string(), saxpy[3]);
    assert_eq!(format!("{:.1}", row["mape"].as_f64().unwrap()), saxpy[4]);
    assert!(doc["results"].as_array().is_some_and(|r| !r.is_empty()));
}

/// A configuration of a ranked space that has no prediction is named below `tune`'s
/// table with the kind of its reason, not dropped without a word.
#[test]
fn tune_names_the_configurations_it_could_not_rank() {
    let (_dir, p) = write_tmp(
        "runs.csv",
        "gpu,kernel,config,time_ms,flops,dram_bytes\n\
         NVIDIA GeForce RTX 2080 Ti,k,n=1,1.0,1000000000,1000000\n\
         NVIDIA GeForce RTX 2080 Ti,k,n=2,2.0,1000000000,1000000\n\
         NVIDIA GeForce RTX 2080 Ti,k,n=3,3.0,1000000000,1000000\n\
         NVIDIA TITAN V,k,n=4,0.000000001,1000000000,1000000\n",
    );
    let o = gpucast(&[
        "tune",
        "--runs",
        p.to_str().unwrap(),
        "--target",
        "H100 SXM5 80GB",
        "--no-check",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let ranked: Vec<String> = stdout(&o)
        .lines()
        .filter(|l| l.starts_with("k "))
        .map(|l| l.split_whitespace().nth(3).unwrap().to_string())
        .collect();
    assert_eq!(ranked, ["n=1", "n=2", "n=3"], "{}", stdout(&o));
    assert!(
        stderr(&o).contains(
            "note: k: 1 configuration not ranked: source row excluded by validation (above_peak_flops"
        ),
        "{}",
        stderr(&o)
    );
}

/// `evaluate --plots DIR` draws the evaluation: a predicted-vs-measured chart per
/// target, titled with it, and the error CDF, into a directory it makes; a file in
/// the directory's place is a usage error.
#[test]
fn evaluate_draws_its_charts() {
    let dir = reference_data();
    let data = dir.to_str().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let charts = tmp.path().join("charts");
    let args = |to: &str| {
        gpucast(&[
            "evaluate",
            "--model",
            "analytical",
            "--data",
            data,
            "--plots",
            to,
        ])
    };
    let o = args(charts.to_str().unwrap());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("wrote 5 charts to {}", charts.display())),
        "{}",
        stderr(&o)
    );
    let mut names: Vec<String> = std::fs::read_dir(&charts)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "logo_error_cdf.svg",
            "logo_pred_vs_measured_nvidia_geforce_gtx_titan_x.svg",
            "logo_pred_vs_measured_nvidia_geforce_rtx_2080_ti.svg",
            "logo_pred_vs_measured_nvidia_geforce_rtx_4070.svg",
            "logo_pred_vs_measured_nvidia_titan_v.svg",
        ]
    );
    let svg =
        std::fs::read_to_string(charts.join("logo_pred_vs_measured_nvidia_titan_v.svg")).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..80.min(svg.len())]);
    assert!(
        svg.contains("logo: predicted vs measured, NVIDIA TITAN V"),
        "the title names the target"
    );
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let o = args(file.to_str().unwrap());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("a file of that name exists"),
        "{}",
        stderr(&o)
    );
}

/// `roofline --instruction` on the suite's Nsight Compute exports: a chart per GPU with
/// the catalog's ceilings, measured ones with a calibration; `explain` prints the
/// issue floor of a profiled row.
#[test]
fn instruction_roofline_of_the_suites_exports() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("charts");
    let root = env!("CARGO_MANIFEST_DIR");
    let h100 = format!("{root}/datasets/own/h100-80gb-hbm3/ncu");
    let h200 = format!("{root}/datasets/own/h200/ncu");
    let o = out.to_str().unwrap();
    let printed = gpucast_ok(&["roofline", "--instruction", &h100, &h200, "--out", o]);
    let names = [
        "instruction_roofline_nvidia_h100_sxm5_80gb.svg",
        "instruction_roofline_nvidia_h200_sxm_141gb.svg",
    ];
    let expected: String = names
        .iter()
        .map(|n| format!("wrote {}\n", out.join(n).display()))
        .collect();
    assert_eq!(printed, expected);
    let svg = std::fs::read_to_string(out.join(names[0])).unwrap();
    // 132 SMs x 4 x 1.98 GHz; DRAM: the built-in catalog's measured 2,743.2 GB/s
    // (datasets/gpus_measured.toml) / 32 = 85.7 G transactions/s; L2 the estimate.
    assert!(svg.contains("peak issue (1,045 GIPS)"));
    assert!(svg.contains("DRAM ceiling (85.7 GTXN/s, measured)"));
    assert!(svg.contains("L2 ceiling (163 GTXN/s, catalog)"), "{svg}");
    assert!(svg.contains("stride-8 / random wall"));
    // The H100's calibration: its measured clock, and its L2 bandwidth measured.
    // (drawn again over the first run's chart: only with --force)
    let calibration = format!("{root}/datasets/own/h100-80gb-hbm3/calibration.toml");
    let again = [
        "--gpus",
        &calibration,
        "roofline",
        "--instruction",
        &h100,
        "--out",
        o,
    ];
    let e = gpucast(&again);
    assert_eq!(e.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&e.stderr)
        .contains("exists, and gpucast replaces no file it did not write"));
    gpucast_ok(&[&again[..], &["--force"]].concat());
    let svg = std::fs::read_to_string(out.join(names[0])).unwrap();
    assert!(svg.contains("L2 ceiling (316 GTXN/s, measured)"), "{svg}");
    assert!(svg.contains("(measured clock)"));
    // Runs without instruction counts: a one-line error.
    let e = gpucast(&[
        "roofline",
        "--instruction",
        &format!("{root}/datasets/own/h100-80gb-hbm3/runs.csv"),
        "--out",
        tmp.path().join("none").to_str().unwrap(),
    ]);
    assert_eq!(e.status.code(), Some(2), "{}", stderr(&e));
    assert!(stderr(&e).contains("no run carries warp instructions"));
    // explain: vector_add's first configuration, 40,960 warp instructions, on the H100
    // and the H200 (both 132 SMs x 4 x 1.98 GHz = 1,045.44 GIPS): 0.000039 ms, part of
    // the compute roof (here under the L2 roof and the launch floor).
    let text = gpucast_ok(&[
        "explain",
        "--runs",
        &format!("{h100}/vector_add.csv"),
        "--row",
        "1",
        "--target",
        "H200",
    ]);
    assert!(
        text.contains("  instruction roofs (in compute): issue 0.000039 -> 0.000039 ms (40960 warp instructions at 1045.4 -> 1045.4 GIPS)\n"),
        "{text}"
    );
}

/// An experiment naming Nsight Compute exports gets an instruction roofline per GPU in
/// `reproduce`'s output, and none with --no-plots.
#[test]
fn reproduce_draws_the_instruction_roofline_of_an_experiments_exports() {
    let tmp = tempfile::tempdir().unwrap();
    let root = env!("CARGO_MANIFEST_DIR");
    let exps = tmp.path().join("exps");
    std::fs::create_dir(&exps).unwrap();
    std::fs::write(
        exps.join("own.toml"),
        format!(
            "name = \"own\"\ntitle = \"own\"\nprotocol = {{ name = \"logo\" }}\nmodels = [\"analytical\"]\n\
             data = [\"{root}/datasets/own\"]\n\
             instruction_roofline = [\"{root}/datasets/own/h200/ncu\"]\n"
        ),
    )
    .unwrap();
    let svg = "instruction_roofline_nvidia_h200_sxm_141gb.svg";
    for (plots, out) in [(true, "with"), (false, "without")] {
        let out = tmp.path().join(out);
        let mut args = vec!["reproduce", "--experiments", exps.to_str().unwrap()];
        args.extend(["--out", out.to_str().unwrap()]);
        if !plots {
            args.push("--no-plots");
        }
        gpucast_ok(&args);
        assert_eq!(out.join(svg).is_file(), plots, "plots: {plots}");
    }
}
