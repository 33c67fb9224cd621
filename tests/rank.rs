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
    rank_json_of(
        "datasets/public/benchmark_hub",
        &[&["--source", "RTX A4000"], extra].concat(),
    )
}

/// `rank --format json` of convolution_milo in `runs` (a path in the repository).
fn rank_json_of(runs: &str, extra: &[&str]) -> serde_json::Value {
    let runs = repo(runs);
    let mut args = vec![
        "rank",
        "--runs",
        &runs,
        "--kernel",
        "convolution_milo",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let o = gpucast(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

/// The ranked row of `gpu` (its catalog name).
fn ranked<'r>(r: &'r serde_json::Value, gpu: &str) -> &'r serde_json::Value {
    r["ranked"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["gpu"] == gpu)
        .unwrap_or_else(|| panic!("{gpu} not ranked: {r}"))
}

fn notes(r: &serde_json::Value) -> Vec<&str> {
    r["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect()
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

/// With both vendors' runs in the data, a GPU is predicted from its own vendor's
/// sources by a model fitted on its own vendor's runs: exactly as from that vendor's
/// file alone (the AMD runs once widened the H100's interval from 0.12..0.35 to
/// 0.11..1.74 ms).
#[test]
fn rank_predicts_each_gpu_from_its_own_vendor_when_the_data_hold_both() {
    let hub = "datasets/public/benchmark_hub";
    let targets = ["--targets", "H100 SXM5 80GB,RTX 3060 Laptop,MI300X"];
    let both = rank_json_of(hub, &targets);
    let nvidia = rank_json_of(&format!("{hub}/runs.parquet"), &targets);
    let amd = rank_json_of(&format!("{hub}/runs_amd.parquet"), &targets);
    for (gpu, alone, sources) in [
        (
            "NVIDIA H100 SXM5 80GB",
            &nvidia,
            serde_json::json!({"NVIDIA": 3}),
        ),
        (
            "NVIDIA GeForce RTX 3060 Laptop GPU",
            &nvidia,
            serde_json::json!({"NVIDIA": 3}),
        ),
        ("AMD Instinct MI300X", &amd, serde_json::json!({"AMD": 3})),
    ] {
        let (b, a) = (ranked(&both, gpu), ranked(alone, gpu));
        assert_eq!(b["basis"], "predicted", "{b}");
        for k in ["time_ms", "lo_ms", "hi_ms", "interval", "sources"] {
            assert_eq!(b[k], a[k], "{gpu} {k}");
        }
        assert_eq!(b["source_vendors"], sources, "{b}");
    }
    assert_eq!(
        ranked(&both, "AMD Instinct MI300X")["sources"],
        serde_json::json!([
            "AMD Instinct MI250X",
            "AMD Radeon PRO W6600",
            "AMD Radeon PRO W7800"
        ])
    );
    let h100 = ranked(&both, "NVIDIA H100 SXM5 80GB");
    let (lo, hi) = (
        h100["lo_ms"].as_f64().unwrap(),
        h100["hi_ms"].as_f64().unwrap(),
    );
    assert!(hi / lo < 3.5, "fitted on NVIDIA runs alone: {h100}");
    assert!(notes(&both)[0].starts_with("note: a GPU is predicted from its own vendor's sources"));
    assert!(
        !notes(&both).iter().any(|n| n.contains("another vendor")),
        "{both}"
    );
    // one vendor's data: nothing to say about vendors
    assert!(
        !notes(&nvidia).iter().any(|n| n.contains("own vendor")),
        "{nvidia}"
    );

    // --source RTX A4000: the NVIDIA GPUs (the A100, in the data, by a fit leaving
    // its rows out) as from the NVIDIA file alone; no AMD source, so the MI300X from
    // the A4000, by a model fitted on every GPU's runs
    let targets = [
        "--source",
        "RTX A4000",
        "--targets",
        "H100 SXM5 80GB,A100 PCIe 40GB,MI300X",
    ];
    let both = rank_json_of(hub, &targets);
    let nvidia = rank_json_of(&format!("{hub}/runs.parquet"), &targets);
    for gpu in ["NVIDIA H100 SXM5 80GB", "NVIDIA A100 PCIe 40GB"] {
        let (b, n) = (ranked(&both, gpu), ranked(&nvidia, gpu));
        assert_eq!(b["basis"], "predicted", "{b}");
        for k in ["time_ms", "lo_ms", "hi_ms"] {
            assert_eq!(b[k], n[k], "{gpu} {k}");
        }
    }
    // H100 0.215380 ms, 0.128862..0.376115; A100 0.489935, 0.387329..0.765035
    let hi_ms = |gpu| ranked(&both, gpu)["hi_ms"].as_f64().unwrap();
    assert!(
        (hi_ms("NVIDIA H100 SXM5 80GB") - 0.376115).abs() < 1e-6,
        "{both}"
    );
    assert!(
        (hi_ms("NVIDIA A100 PCIe 40GB") - 0.765035).abs() < 1e-6,
        "{both}"
    );
    let mi = ranked(&both, "AMD Instinct MI300X");
    assert_eq!(mi["sources"], serde_json::json!(["NVIDIA RTX A4000"]));
    assert!(
        mi["extrapolated"]
            .as_str()
            .unwrap()
            .starts_with("no AMD source"),
        "{mi}"
    );
    assert!(
        notes(&both).contains(&"note: 1 AMD GPU(s) predicted from sources of another vendor only: `gpucast reproduce`'s kt-cross-vendor-* experiments measure such predictions"),
        "{both}"
    );
}

/// A vendor whose runs are too few to fit on (here none: the training data are the
/// NVIDIA file) has its GPUs predicted from every vendor's sources, with a note.
#[test]
fn rank_predicts_from_every_vendor_where_its_own_vendors_runs_are_too_few() {
    let hub = "datasets/public/benchmark_hub";
    let nvidia = repo(&format!("{hub}/runs.parquet"));
    let r = rank_json_of(
        hub,
        &["--data", &nvidia, "--targets", "MI300X,H100 SXM5 80GB"],
    );
    assert_eq!(
        ranked(&r, "AMD Instinct MI300X")["source_vendors"],
        serde_json::json!({"AMD": 3, "NVIDIA": 3})
    );
    assert_eq!(
        ranked(&r, "NVIDIA H100 SXM5 80GB")["source_vendors"],
        serde_json::json!({"NVIDIA": 3})
    );
    assert!(
        notes(&r).iter().any(|n| n.starts_with(
            "note: 1 AMD GPU(s) predicted from every vendor's sources (their own vendor's too few)"
        )),
        "{r}"
    );
}

/// The extrapolation reason in every format: JSON null or text, the CSV and table
/// column `extrapolated` ("-" where there is none) beside `sources`.
#[test]
fn rank_marks_extrapolated_gpus_in_every_format() {
    let r = rank_json(&["--targets", "RTX A4000,RTX A4500,H100 SXM5 80GB"]);
    assert!(ranked(&r, "NVIDIA RTX A4000")["extrapolated"].is_null());
    assert!(ranked(&r, "NVIDIA RTX A4500")["extrapolated"].is_null());
    // 3352 GB/s over the A100 PCIe 40GB's 1555, the highest the model was fitted on
    assert_eq!(
        ranked(&r, "NVIDIA H100 SXM5 80GB")["extrapolated"],
        "DRAM bandwidth 2.16x the highest fitted"
    );
    let hub = repo("datasets/public/benchmark_hub");
    let args = [
        "rank",
        "--runs",
        &hub,
        "--kernel",
        "convolution_milo",
        "--source",
        "RTX A4000",
        "--targets",
        "RTX A4000,H100 SXM5 80GB",
    ];
    let o = gpucast(&[&args[..], &["--format", "csv"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = stdout(&o);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let row = |gpu: &str| rows.iter().find(|r| r[col("gpu")] == gpu).unwrap();
    let h100 = row("NVIDIA H100 SXM5 80GB");
    assert_eq!(h100[col("sources")], "1 NVIDIA");
    assert_eq!(
        h100[col("extrapolated")],
        "DRAM bandwidth 2.16x the highest fitted"
    );
    let a4000 = row("NVIDIA RTX A4000");
    assert_eq!(
        (a4000[col("sources")], a4000[col("extrapolated")]),
        ("-", "-")
    );
    let o = gpucast(&args);
    let table = stdout(&o);
    assert!(
        table
            .lines()
            .nth(1)
            .unwrap()
            .contains("  sources   extrapolated"),
        "{table}"
    );
    assert!(
        table.lines().any(|l| l.contains("NVIDIA H100 SXM5 80GB")
            && l.ends_with("1 NVIDIA  DRAM bandwidth 2.16x the highest fitted")),
        "{table}"
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
