//! `gpucast corun` end to end on the shipped H100 measurements, and the co-run study
//! on the shipped co-runs of the H100 and H200.

use gpucast::catalog::Catalog;
use gpucast::experiments::corun;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn gpucast(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpucast"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run gpucast")
}

const H100: &str = "datasets/own/h100-80gb-hbm3";
const WRITE: &str = "stream_write@N=67108864,block=256";
const STENCIL: &str = "stencil_5pt@block=256,cols=4096,rows=4096";

/// `corun` on the shipped H100 runs and profiles, with its calibration.
fn corun_h100(extra: &[&str]) -> Output {
    let calibration = format!("{H100}/calibration.toml");
    let mut args = vec![
        "--gpus",
        &calibration,
        "corun",
        "--target",
        "H100 SXM5",
        "--runs",
    ];
    let runs = format!("{H100}/runs.csv");
    let parts = format!("{H100}/runs_partitions.csv");
    let ncu: Vec<String> = ["stream_write", "stencil_5pt", "fp32_fma_peak"]
        .iter()
        .map(|k| format!("{H100}/ncu/{k}.csv"))
        .collect();
    args.extend([runs.as_str(), parts.as_str()]);
    args.extend(ncu.iter().map(String::as_str));
    args.extend(extra);
    gpucast(&args)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A measured pair of the H100 (datasets/own/h100-80gb-hbm3/corun.csv, each on 64
/// SMs): stream_write alone 0.1600, together 0.2087 ms; stencil_5pt alone 0.1218,
/// together 0.1666 ms. The prediction slows both, and each measured together-time
/// lies in its interval.
#[test]
fn a_measured_pair_is_slowed_and_its_measured_times_lie_in_the_intervals() {
    let w = format!("{WRITE}:64");
    let s = format!("{STENCIL}:64");
    let o = corun_h100(&["--kernel", &w, "--kernel", &s, "--format", "csv"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "kernel,config,sms,alone_ms,alone,together_ms,slowdown,low_ms,high_ms"
    );
    let rows: Vec<Vec<String>> = lines
        .map(|l| {
            // the config is quoted (it has commas): split after it
            let (head, rest) = l.split_once(",\"").unwrap();
            let (config, tail) = rest.split_once("\",").unwrap();
            let mut v = vec![head.to_string(), config.to_string()];
            v.extend(tail.split(',').map(str::to_string));
            v
        })
        .collect();
    assert_eq!(rows.len(), 2);
    for (row, measured_ms) in rows.iter().zip([0.2087, 0.1666]) {
        let num = |i: usize| row[i].parse::<f64>().unwrap();
        assert_eq!(row[2], "64");
        assert_eq!(row[4], "measured");
        let (alone, together, slowdown, lo, hi) = (num(3), num(5), num(6), num(7), num(8));
        assert!(slowdown > 1.05 && slowdown < 1.6, "{row:?}");
        assert!((together / alone - slowdown).abs() < 2e-3, "{row:?}");
        assert!(lo < together && together < hi, "{row:?}");
        assert!(lo <= measured_ms && measured_ms <= hi, "{row:?}");
    }
    // JSON: the same rows
    let o = corun_h100(&["--kernel", &w, "--kernel", &s, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v.as_array().map(Vec::len), Some(2), "{v}");
}

/// A partition size the runs lack (40 SMs): the alone time is the analytical model's.
#[test]
fn an_unmeasured_partition_size_is_predicted_alone() {
    let w = format!("{WRITE}:40");
    let o = corun_h100(&[
        "--kernel",
        &w,
        "--kernel",
        "fp32_fma_peak@N=1048576,block=256,iters=512:40",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("predicted"), "{text}");
    assert!(
        text.contains("2 kernels together on NVIDIA H100 SXM5 80GB"),
        "{text}"
    );
}

#[test]
fn bad_choices_exit_2_with_one_line_naming_what_is_wrong() {
    let w = format!("{WRITE}:64");
    for (extra, want) in [
        (vec!["--kernel", "no_such_kernel:64"], "no_such_kernel"),
        (
            vec!["--kernel", &w, "--kernel", "fp32_fma_peak:32"],
            "name one as fp32_fma_peak@CONFIG",
        ),
        (
            vec!["--kernel", &w, "--kernel", &w, "--kernel", &w],
            "192 SMs, more than the 132",
        ),
        (vec!["--kernel", "stream_write"], "no ':SMS'"),
        (
            vec!["--kernel", "stream_write:0"],
            "not a positive whole number",
        ),
        (
            vec!["--kernel", "stream_write@N=1:64"],
            "no run of configuration 'N=1'",
        ),
    ] {
        let o = corun_h100(&extra);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stdout(&o));
        let e = stderr(&o);
        assert!(e.contains(want), "{extra:?}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "{e}");
    }
    // a GPU name is matched, never guessed
    let o = gpucast(&[
        "corun",
        "--target",
        "H900",
        "--runs",
        H100,
        "--kernel",
        "stream_write:64",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("H900"), "{}", stderr(&o));
}

#[test]
fn every_argument_has_help() {
    let o = gpucast(&["corun", "--help"]);
    assert!(o.status.success());
    let help = stdout(&o);
    for flag in [
        "--runs",
        "--target",
        "--kernel",
        "--coruns",
        "--data-dir",
        "--format",
    ] {
        let line = help
            .lines()
            .find(|l| l.trim_start().starts_with(flag))
            .unwrap_or_else(|| panic!("{flag}: {help}"));
        let described = line.trim().len() > flag.len() + 20
            || help
                .lines()
                .skip_while(|l| *l != line)
                .nth(1)
                .is_some_and(|n| n.starts_with("          "));
        assert!(described, "{flag} has no help: {help}");
    }
}

/// The study on the shipped co-runs. With the target's alone times measured, the
/// model beats both baselines on every target, misses by less than 7.5 %, and its
/// interval covers 87-95 % of the measured times; with them predicted from the other
/// GPU's runs on the whole GPU and its partitions, it still beats both, misses by less
/// than 8.5 %, and covers 84-95 %.
#[test]
fn the_co_run_model_beats_both_baselines_on_the_shipped_co_runs() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let study = corun::Study::builtin(Path::new(&dir)).unwrap();
    let o = corun::run(study, &Catalog::builtin()).unwrap();
    let all: Vec<_> = o.rows.iter().filter(|r| r.kernels.is_none()).collect();
    // 2 GPUs x (leave-one-set-out + 2 across-GPU protocols)
    assert_eq!(all.len(), 6);
    for r in &all {
        assert!(r.model_mae < r.fixed_slowdown_mae, "{r:?}");
        assert!(r.model_mae < r.no_interference_mae, "{r:?}");
        if r.protocol == corun::ACROSS_PREDICTED {
            assert!(r.model_mae < 8.5, "{r:?}");
            assert!((84.0..=95.0).contains(&r.coverage), "{r:?}");
        } else {
            assert!(r.model_mae < 7.5, "{r:?}");
            assert!((87.0..=95.0).contains(&r.coverage), "{r:?}");
        }
    }
    let n: usize = all
        .iter()
        .filter(|r| r.protocol == corun::LOSO)
        .map(|r| r.n)
        .sum();
    assert_eq!(n, 178 + 238);
    // every protocol's gates hold
    let checks = corun::check(&o);
    assert_eq!(checks.len(), 6);
    assert!(checks.iter().all(|c| c.passed()), "{checks:?}");
}

/// A kernel's time alone on a partition of another GPU is predicted from the source's
/// runs on partitions too, each a GPU of its own: the H200's 32-SM times of the 16
/// co-run kernels, predicted from the H100's runs, are within 10 % (median); from the
/// H100's whole-GPU runs alone they are not.
#[test]
fn alone_times_on_another_gpus_partition_come_from_the_sources_partitions() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let catalog = Catalog::builtin();
    let h100 = corun::load_gpu(&dir.join(H100), &catalog).unwrap();
    let h200 = corun::load_gpu(&dir.join("datasets/own/h200"), &catalog).unwrap();
    // the H200's measured alone times on 32 SMs, per co-run kernel
    let mut works: Vec<(String, String, f64)> = Vec::new();
    for set in &h200.sets {
        for k in set.kernels.iter().filter(|k| k.sm_count == 32) {
            if !works.iter().any(|w| w.0 == k.kernel && w.1 == k.config) {
                works.push((k.kernel.clone(), k.config.clone(), k.time_alone_ms));
            }
        }
    }
    assert!(works.len() >= 10, "{works:?}");
    let asked: Vec<(&str, &str, u32)> = works
        .iter()
        .map(|w| (w.0.as_str(), w.1.as_str(), 32))
        .collect();
    let median_error = |runs: &[gpucast::data::Run]| {
        let predicted =
            gpucast::models::corun::predicted_alone_ms(runs, &catalog, &h200.gpu, &asked).unwrap();
        let mut e: Vec<f64> = predicted
            .iter()
            .zip(&works)
            .map(|(p, w)| (p.unwrap() / w.2 - 1.0).abs())
            .collect();
        e.sort_by(f64::total_cmp);
        e[e.len() / 2]
    };
    let with_partitions = median_error(&h100.runs);
    let whole: Vec<gpucast::data::Run> = h100
        .runs
        .iter()
        .filter(|r| r.exclusion.is_none())
        .cloned()
        .collect();
    let whole_only = median_error(&whole);
    assert!(with_partitions < 0.10, "{with_partitions} {whole_only}");
    assert!(
        whole_only > 2.0 * with_partitions,
        "{with_partitions} {whole_only}"
    );
}
