//! `gpucast rank` and `gpucast tune --write-cache` end to end, on shipped real data.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn gpucast(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpucast"))
        .args(args)
        .output()
        .expect("run gpucast")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn repo(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(path)
        .to_str()
        .unwrap()
        .to_string()
}

/// The shipped xgemm cache of an RTX 3090 (256 real configurations).
fn xgemm_cache() -> String {
    repo("tests/fixtures/kernel_tuner/xgemm_RTX_3090_subset.json.gz")
}

fn rank_json(extra: &[&str]) -> serde_json::Value {
    let hub = repo("datasets/public/benchmark_hub");
    let mut args = vec![
        "rank",
        "--runs",
        &hub,
        "--kernel",
        "convolution_milo",
        "--source",
        "RTX A4000",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let o = gpucast(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

#[test]
fn rank_orders_gpus_fastest_first_with_the_source_measured() {
    let dir = tempfile::tempdir().unwrap();
    let prices = dir.path().join("prices.toml");
    std::fs::write(&prices, "\"rtx a4000\" = 0.36\n\"H100 SXM5 80GB\" = 2.5\n").unwrap();
    let r = rank_json(&[
        "--targets",
        "RTX A4000,A100 PCIe 40GB,RTX A6000,H100 SXM5 80GB,RTX 4090",
        "--prices",
        prices.to_str().unwrap(),
    ]);
    let ranked = r["ranked"].as_array().unwrap();
    assert_eq!(ranked.len(), 5, "{r}");
    assert!(r["not_ranked"].as_array().unwrap().is_empty(), "{r}");
    assert_eq!(r["best_source"], "NVIDIA RTX A4000");
    assert_eq!(r["problems"], 1);
    let times: Vec<f64> = ranked
        .iter()
        .map(|g| g["time_ms"].as_f64().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    let best_ms = r["best_source_ms"].as_f64().unwrap();
    for g in ranked {
        let (t, lo, hi) = (
            g["time_ms"].as_f64().unwrap(),
            g["lo_ms"].as_f64().unwrap(),
            g["hi_ms"].as_f64().unwrap(),
        );
        assert!(lo <= t && t <= hi, "{g}");
        assert!(
            (g["speedup"].as_f64().unwrap() - best_ms / t).abs() < 1e-9,
            "{g}"
        );
        let priced =
            ["NVIDIA RTX A4000", "NVIDIA H100 SXM5 80GB"].contains(&g["gpu"].as_str().unwrap());
        assert_eq!(g["cost_per_run_usd"].is_number(), priced, "{g}");
        if g["gpu"] == "NVIDIA RTX A4000" {
            // the GPU the runs measured: its measured time (the fastest configuration)
            assert_eq!(g["basis"], "measured");
            assert_eq!(t, best_ms);
            assert_eq!(g["speedup"].as_f64().unwrap(), 1.0);
            // 140 W TDP (catalog), $0.36 an hour (the price file)
            assert!((g["energy_proxy_j"].as_f64().unwrap() - t / 1e3 * 140.0).abs() < 1e-9);
            assert!((g["cost_per_run_usd"].as_f64().unwrap() - t / 3.6e6 * 0.36).abs() < 1e-15);
        } else {
            assert_eq!(g["basis"], "predicted", "{g}");
        }
    }
    // (the faster GPU first)
    let h100 = ranked
        .iter()
        .position(|g| g["gpu"] == "NVIDIA H100 SXM5 80GB")
        .unwrap();
    let a4000 = ranked
        .iter()
        .position(|g| g["gpu"] == "NVIDIA RTX A4000")
        .unwrap();
    assert!(h100 < a4000, "{r}");
    // every target is of the source's vendor: no cross-vendor note
    let notes = r["notes"].as_array().unwrap();
    assert!(
        !notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("another vendor")),
        "{r}"
    );
}

/// AMD targets from an NVIDIA source only are ranked, with a note saying so.
#[test]
fn rank_notes_gpus_predicted_across_vendors() {
    let r = rank_json(&["--targets", "RTX A6000,MI210,W7800"]);
    assert_eq!(r["ranked"].as_array().unwrap().len(), 3, "{r}");
    let notes: Vec<&str> = r["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n
                .starts_with("note: 2 AMD GPU(s) predicted from sources of another vendor only")),
        "{notes:?}"
    );
}

#[test]
fn rank_filters_and_lists_what_it_cannot_rank() {
    let r = rank_json(&["--vendor", "nvidia", "--arch", "hopper"]);
    let ranked = r["ranked"].as_array().unwrap();
    assert!(!ranked.is_empty());
    assert!(ranked.iter().all(|g| g["arch"] == "Hopper"), "{r}");
    // a SYNTHETIC catalog GPU without a memory size: the memory filter cannot judge it
    let dir = tempfile::tempdir().unwrap();
    let cat = dir.path().join("gpus.toml");
    std::fs::write(
        &cat,
        "[[gpu]]\nname = \"Synthetic X\"\nvendor = \"NVIDIA\"\narch = \"Ampere\"\ncompute_capability = \"8.6\"\nsm_count = 10\nboost_clock_mhz = 1000.0\nfp32_gflops = 2560.0\nmem_bandwidth_gbs = 100.0\nl2_bytes = 1048576\nregs_per_sm = 65536\nmax_threads_per_sm = 1536\nmax_blocks_per_sm = 16\nsmem_per_sm = 102400\nwarp_size = 32\n",
    )
    .unwrap();
    let r = rank_json(&[
        "--gpus",
        cat.to_str().unwrap(),
        "--min-memory-gb",
        "40",
        "--arch",
        "ampere",
    ]);
    let not = r["not_ranked"].as_array().unwrap();
    assert_eq!(not.len(), 1, "{r}");
    assert_eq!(not[0]["gpu"], "Synthetic X");
    assert!(
        not[0]["reason"]
            .as_str()
            .unwrap()
            .contains("no memory size"),
        "{r}"
    );
    assert!(
        r["ranked"]
            .as_array()
            .unwrap()
            .iter()
            .all(|g| g["gpu"] != "NVIDIA RTX A4000"),
        "16 GB: filtered out {r}"
    );
}

#[test]
fn rank_refuses_an_unknown_price_name_or_filter_value() {
    let dir = tempfile::tempdir().unwrap();
    let prices = dir.path().join("prices.toml");
    std::fs::write(&prices, "\"RTX A4000\" = 0.36\n\"RTX 6000\" = 1.0\n").unwrap();
    let hub = repo("datasets/public/benchmark_hub");
    let o = gpucast(&["rank", "--runs", &hub, "--prices", prices.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("prices.toml:2:1: unknown GPU 'RTX 6000'"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    let o = gpucast(&[
        "rank",
        "--runs",
        &hub,
        "--vendor",
        "nvidia",
        "--targets",
        "RTX 409",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--targets: unknown GPU 'RTX 409'"),
        "{}",
        stderr(&o)
    );
}

/// The configurations of a cache as the project's own reader keys them.
fn entries(path: &Path) -> gpucast::data::kernel_tuner::CacheEntries {
    gpucast::data::kernel_tuner::read_entries(path, &gpucast::data::workload::Workloads::builtin())
        .unwrap()
}

#[test]
fn tune_writes_a_kernel_tuner_cache_of_predicted_times_and_never_over_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let out: PathBuf = dir.path().join("predicted.json");
    let cache = xgemm_cache();
    let args = [
        "tune",
        "--runs",
        &cache,
        "--target",
        "RTX A4000",
        "--top",
        "1",
        "--no-check",
        "--format",
        "json",
        "--write-cache",
        out.to_str().unwrap(),
    ];
    let o = gpucast(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let first: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let first = &first[0];
    assert!(
        stderr(&o).contains("256 configurations predicted, 0 failed"),
        "{}",
        stderr(&o)
    );

    // Round trip through the reader: the same keys, configurations and parameters.
    let (measured, written) = (entries(Path::new(&cache)), entries(&out));
    assert_eq!(written.device, "NVIDIA RTX A4000");
    assert_eq!(written.keys, measured.keys);
    assert_eq!(written.entries, measured.entries);
    for key in ["kernel_name", "problem_size", "tune_params", "objective"] {
        assert_eq!(written.doc[key], measured.doc[key], "{key}");
    }
    assert_eq!(
        written.doc["predicted_by"],
        format!("gpucast {}", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(written.doc["predicted_from"], "NVIDIA GeForce RTX 3090");
    // Every entry: parameters, a predicted time within its bounds, nothing measured.
    let mut fastest: Option<(f64, &str)> = None;
    for (key, e) in written.doc["cache"].as_object().unwrap() {
        let t = e["time"].as_f64().unwrap();
        assert!(e["time_lo"].as_f64().unwrap() <= t && t <= e["time_hi"].as_f64().unwrap());
        assert!(
            e.get("times").is_none() && e.get("GFLOP/s").is_none(),
            "{e}"
        );
        assert_eq!(e["MWG"], measured.doc["cache"][key]["MWG"]);
        if fastest.is_none_or(|(f, _)| t < f) {
            fastest = Some((t, key));
        }
    }
    // The fastest entry is the configuration tune ranks first.
    let (t, key) = fastest.unwrap();
    assert_eq!(format!("{t:.6}"), first["pred_ms"].as_str().unwrap());
    let (_, config) = written.entries.iter().find(|(k, _)| k == key).unwrap();
    assert_eq!(config, first["config"].as_str().unwrap());

    // Never over an existing file, and a predicted cache is not runs.
    let before = std::fs::read(&out).unwrap();
    let o = gpucast(&args);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("exists"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&out).unwrap(), before);
    let o = gpucast(&["data", "validate", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("predicted by gpucast"),
        "{}",
        stderr(&o)
    );
}
