//! The import registry, nvbench results and PyTorch profiler traces (issue 65), on the
//! fixtures in tests/fixtures/nvbench (SYNTHETIC) and tests/fixtures/torch_trace
//! (one SYNTHETIC step, one real MI250 trace; see their READMEs).

use gpucast::data::import::{self, Format, ImportOptions, Imported};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

fn import(rel: &str, from: &str, opts: &ImportOptions) -> Imported {
    import::import_paths(&[fixture(rel)], Format::parse(from).unwrap(), opts)
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn gpucast(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_gpucast"))
        .args(args)
        .output()
        .unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-12)
}

#[test]
fn the_from_list_of_the_help_is_the_registry() {
    let out = gpucast(&["data", "import", "--help"]);
    let help = String::from_utf8(out.stdout).unwrap();
    let listed: BTreeSet<String> = help
        .split("Possible values:")
        .nth(1)
        .expect("--from lists its values")
        .lines()
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(|l| l.split(':').next().unwrap().trim().to_string())
        .collect();
    let registry: BTreeSet<String> = import::names().iter().map(|s| s.to_string()).collect();
    assert_eq!(listed, registry, "{help}");
    assert!(
        registry.contains("nvbench")
            && registry.contains("torch-trace")
            && registry.contains("auto")
    );
    // every listed name (and alias) parses to its importer
    for i in import::REGISTRY {
        assert_eq!(Format::parse(i.name()).unwrap().name(), i.name());
        for a in i.aliases() {
            assert_eq!(Format::parse(a).unwrap().name(), i.name());
        }
    }
    // the command line refuses what the registry lacks, listing what it has
    let out = gpucast(&["data", "import", "x.csv", "--from", "xls", "-o", "y.csv"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("nvbench") && err.contains("torch-trace"),
        "{err}"
    );
}

#[test]
fn auto_detects_the_new_formats() {
    for (rel, want) in [
        ("nvbench/copy_h100.csv", "nvbench"),
        ("nvbench/copy_h100.json", "nvbench"),
        ("nvbench/skipped_only.csv", "nvbench"),
        ("torch_trace/step_h100.json", "torch-trace"),
        ("torch_trace/minitoy_train_mi250.json.gz", "torch-trace"),
        ("kernel_tuner/xgemm_RTX_3090_subset.json.gz", "kernel-tuner"),
        (
            "gemm_table/a100_sxm_trtllm-1.0.0_n4096_k4096.csv",
            "gemm-table",
        ),
    ] {
        assert_eq!(import::detect(&fixture(rel)).unwrap().name(), want, "{rel}");
    }
}

#[test]
fn nvbench_csv_maps_states_to_runs_in_milliseconds() {
    let imp = import(
        "nvbench/copy_h100.csv",
        "nvbench",
        &ImportOptions::default(),
    );
    let runs = &imp.table.runs;
    assert_eq!(runs.len(), 3);
    let f = &imp.report.files[0];
    assert_eq!(f.failed, BTreeMap::from([("skipped".to_string(), 1)]));
    let r = &runs[0];
    assert_eq!(
        (&*r.gpu, &*r.kernel, &*r.config),
        ("NVIDIA H100 80GB HBM3", "copy", "Elements=1048576,T=F32")
    );
    // GPU Time 2e-05 s; the GPU's noise (0.02, not the CPU's 0.08) x time
    assert!(close(r.time_ms, 0.02), "{}", r.time_ms);
    assert!(close(r.time_std_ms.unwrap(), 0.02 * 0.02));
    // GlobalMem BW 419430400000 B/s x 2e-05 s = the 8 MiB the benchmark declared
    assert_eq!(r.dram_bytes, 8_388_608.0);
    assert_eq!(r.flops, 0.0);
    assert!(f
        .missing
        .iter()
        .any(|m| m.feature == "flops" && m.rows == 3));
    // the JSON output of the same states reads to the same runs
    let json = import("nvbench/copy_h100.json", "auto", &ImportOptions::default());
    let key = |i: &Imported| {
        i.table
            .runs
            .iter()
            .map(|r| {
                (
                    r.kernel.to_string(),
                    r.config.to_string(),
                    r.time_ms.to_bits(),
                    r.dram_bytes.to_bits(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(key(&json), key(&imp));
    assert_eq!(json.report.files[0].failed["skipped"], 1);
}

#[test]
fn nvbench_multi_device_file_gives_a_run_per_gpu_and_counts_repeats() {
    let imp = import(
        "nvbench/multi_device.csv",
        "auto",
        &ImportOptions::default(),
    );
    let gpus: Vec<&str> = imp.table.runs.iter().map(|r| &*r.gpu).collect();
    assert_eq!(gpus, ["NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"]);
    assert!(close(imp.table.runs[1].time_ms, 0.08));
    assert_eq!(imp.report.files[0].left_out["duplicate_config"], 1);
}

#[test]
fn nvbench_batch_times_and_workload_flops_are_used_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("reduce.toml");
    std::fs::write(
        &w,
        "# SYNTHETIC workload for the batch_only fixture\nname = \"reduce\"\n[match]\nkernel_name = \"reduce\"\n[formulas]\nflops = \"Elements\"\ndram_bytes = \"4*Elements\"\n",
    )
    .unwrap();
    let mut opts = ImportOptions::default();
    opts.workloads.add_path(&w).unwrap();
    let imp = import("nvbench/batch_only.csv", "nvbench", &opts);
    let r = &imp.table.runs[1];
    assert!(close(r.time_ms, 0.03));
    assert_eq!((r.flops, r.dram_bytes), (4_194_304.0, 4.0 * 4_194_304.0));
    assert!(r.time_std_ms.is_none());
    let f = &imp.report.files[0];
    assert!(
        f.notes
            .iter()
            .any(|n| n.contains("2 row(s) timed by Batch GPU")),
        "{:?}",
        f.notes
    );
    assert!(f.workload.as_deref().unwrap().ends_with("reduce.toml"));
    // without a workload the states have no work measure and are not read
    let e = import::import_paths(
        &[fixture("nvbench/batch_only.csv")],
        Format::Auto,
        &ImportOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.ends_with("no runs: none of its 2 entries could be read as a run (no_work_measure=2)"),
        "{e}"
    );
}

#[test]
fn torch_trace_kernels_take_the_work_of_their_launching_operator() {
    let imp = import(
        "torch_trace/step_h100.json",
        "torch-trace",
        &ImportOptions::default(),
    );
    let runs = &imp.table.runs;
    assert_eq!(runs.len(), 6);
    assert!(runs.iter().all(|r| &*r.gpu == "NVIDIA H100 80GB HBM3"));
    // the GEMM: addmm's flops argument, bytes from its shapes (linear: 16384 x 1024 in, 4096 out)
    let g = &runs[0];
    assert!(close(g.time_ms, 3.5));
    assert_eq!(g.flops, 2.0 * 16384.0 * 1024.0 * 4096.0);
    assert_eq!(
        g.dram_bytes,
        4.0 * (16384.0 * 1024.0 + 4096.0 * 1024.0 + 4096.0 + 16384.0 * 4096.0)
    );
    assert_eq!(
        (g.grid_blocks, g.block_threads),
        (Some(4096.0), Some(384.0))
    );
    assert_eq!(
        (g.regs_per_thread, g.smem_per_block),
        (Some(168.0), Some(213248.0))
    );
    // relu: one operation per element, read and written once
    let n = 16384.0 * 4096.0;
    assert_eq!((runs[1].flops, runs[1].dram_bytes), (n, 8.0 * n));
    // softmax, from aten::_softmax inside aten::softmax
    assert_eq!(runs[2].flops, 5.0 * n);
    // layer norm's two kernels share its work 2:1 by their times (150 and 75 us)
    let ln = gpucast::data::neusight::layernorm_work(16384.0, 4096.0);
    assert!(close(runs[3].flops, ln.flops * 2.0 / 3.0) && close(runs[4].flops, ln.flops / 3.0));
    assert!(close(
        runs[3].dram_bytes + runs[4].dram_bytes,
        ln.dram_bytes
    ));
    // the copy has no rule: kept with its time, work 0, counted and said
    assert_eq!(
        (runs[5].flops, runs[5].dram_bytes, runs[5].time_ms),
        (0.0, 0.0, 0.03)
    );
    let f = &imp.report.files[0];
    assert!(f
        .missing
        .iter()
        .any(|m| m.feature == "flops" && m.rows == 1));
    assert!(f
        .notes
        .iter()
        .any(|n| n.contains("1 of 6 kernels have no work derivation")));
    let ops = imp.table.extra.column("operator").unwrap();
    assert_eq!(ops.str().unwrap().get(2), Some("aten::_softmax"));
}

#[test]
fn a_trace_gpu_the_catalog_does_not_know_is_refused_with_the_gpus_it_fits() {
    let mi250 = fixture("torch_trace/minitoy_train_mi250.json.gz");
    let e = import::import_paths(
        std::slice::from_ref(&mi250),
        Format::Auto,
        &ImportOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("unknown GPU 'AMD Radeon Graphics'")
            && e.contains("(104 SMs, compute capability 9.0, 64.0 GiB) fit 'AMD Instinct MI210'"),
        "{e}"
    );
    let opts = ImportOptions {
        gpu: Some("AMD Instinct MI210".into()),
        ..ImportOptions::default()
    };
    let imp = import::import_paths(&[mi250], Format::Auto, &opts).unwrap();
    assert_eq!(imp.table.runs.len(), 14);
    assert!(imp
        .table
        .runs
        .iter()
        .all(|r| &*r.gpu == "AMD Instinct MI210"));
    // mm, addmm, add_, relu (clamp_min), threshold_backward... have shapes here
    let derived = imp.table.runs.iter().filter(|r| r.flops > 0.0).count();
    assert_eq!(derived, 7);
}

#[test]
fn a_predicted_step_is_the_sum_of_its_parts() {
    use gpucast::pipeline::{PredictOptions, Target};
    let catalog = gpucast::catalog::Catalog::builtin();
    let target =
        Target::resolve(&catalog, gpucast::error::Input::Target, "A100 SXM4 80GB").unwrap();
    let opts = PredictOptions {
        runs: vec![],
        gpu: None,
        source: None,
        model: "pretrained".into(),
        data: vec![],
        seed: 42,
        figures: Default::default(),
    };
    let trace = fixture("torch_trace/step_h100.json");
    let step = gpucast::trace::predict_trace(&trace, &opts, &target, &catalog).unwrap();
    assert_eq!(step.kernels.len(), 6);
    assert_eq!(step.source_gpu, "NVIDIA H100 SXM5 80GB");
    assert!(close(step.gaps_ms, 0.28), "{}", step.gaps_ms);
    assert!(close(step.total_ms, step.kernel_ms() + step.gaps_ms));
    let parts: f64 = step
        .by_operator()
        .iter()
        .map(|o| o.predicted_ms)
        .sum::<f64>()
        + step.gaps_ms;
    assert!(close(step.total_ms, parts));
    assert!(close(
        step.measured_ms,
        3.5 + 0.22 + 0.25 + 0.15 + 0.075 + 0.03 + 0.28
    ));
    assert!(step.lo_ms <= step.total_ms && step.total_ms <= step.hi_ms);
    // the copy (no work derivation) keeps its measured time; the others are predicted
    assert_eq!(step.unpredicted, 1);
    let copy = &step.kernels[5];
    assert!(!copy.predicted && copy.predicted_ms == copy.measured_ms);
    assert!(step.kernels[..5].iter().all(|k| k.predicted));
    // an A100 is slower than an H100 on the GEMM that dominates the step
    assert!(step.kernels[0].predicted_ms > step.kernels[0].measured_ms);
    assert_eq!(step.top_kernels(10).len(), 6);
    assert_eq!(step.top_kernels(1)[0].operator, "aten::addmm");
    // the command prints the total, the parts and the kernels that matter most
    let out = gpucast(&[
        "predict",
        "--trace",
        trace.to_str().unwrap(),
        "--target",
        "A100 SXM4 80GB",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(&format!("step: {:.4} ms predicted", step.total_ms)),
        "{text}"
    );
    assert!(
        text.contains("+ idle time between kernels 0.2800 ms (as measured)"),
        "{text}"
    );
    assert!(
        text.contains("per operator:") && text.contains("the 6 kernels that matter most:"),
        "{text}"
    );
}

/// No two modules under src/data import each other, directly or around a circle
/// (the root `data` module, which only declares them and re-exports, aside): the
/// registry builds on the formats, the formats on `import::common`.
#[test]
fn no_module_cycle_under_src_data() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    let mut stack = vec![root.join("data")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    // a file's module path: src/data/import/ncu/mod.rs -> data::import::ncu
    let module_of = |p: &Path| -> Vec<String> {
        let rel = p.strip_prefix(&root).unwrap().with_extension("");
        let mut parts: Vec<String> = rel
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect();
        if parts.last().map(String::as_str) == Some("mod") {
            parts.pop();
        }
        parts
    };
    let modules: BTreeSet<Vec<String>> = files.iter().map(|p| module_of(p)).collect();
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for f in &files {
        let me = module_of(f);
        let text = std::fs::read_to_string(f).unwrap();
        // (test modules' `super` is the file itself: their uses are not the module's)
        let code = text.split("#[cfg(test)]").next().unwrap();
        for line in code.lines() {
            let t = line.trim_start();
            if t.starts_with("//") || t.starts_with("mod ") || t.starts_with("pub mod ") {
                continue;
            }
            // a child module named by its bare path (`kernel_tuner::KernelTuner`)
            for child in modules
                .iter()
                .filter(|m| m.len() == me.len() + 1 && m.starts_with(&me))
            {
                let name = format!("{}::", child.last().unwrap());
                let bare = t.match_indices(&name).any(|(i, _)| {
                    i == 0
                        || !t[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':')
                });
                if bare {
                    edges.entry(me.clone()).or_default().insert(child.clone());
                }
            }
            for (i, _) in t
                .match_indices("super::")
                .chain(t.match_indices("crate::data::"))
            {
                if i > 0 && t[..i].ends_with("super::") {
                    continue; // (the rest of a super::super:: chain)
                }
                let rest = &t[i..];
                let mut path: Vec<String> = if rest.starts_with("crate::") {
                    vec![]
                } else {
                    me.clone()
                };
                let mut segs = rest.split("::").peekable();
                if rest.starts_with("crate::") {
                    segs.next();
                }
                let mut resolved = path.clone();
                for seg in segs {
                    let s: String = seg
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if s == "super" {
                        path.pop();
                        resolved = path.clone();
                        continue;
                    }
                    path.push(s);
                    if !modules.contains(&path) {
                        break;
                    }
                    resolved = path.clone();
                }
                if resolved != me && resolved.len() > 1 {
                    edges.entry(me.clone()).or_default().insert(resolved);
                }
            }
        }
    }
    // a cycle: a module reaching itself
    for start in edges.keys() {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<(Vec<String>, Vec<String>)> =
            vec![(start.clone(), vec![start.join("::")])];
        while let Some((m, trail)) = todo.pop() {
            for next in edges.get(&m).into_iter().flatten() {
                let mut t = trail.clone();
                t.push(next.join("::"));
                assert!(next != start, "module cycle: {}", t.join(" -> "));
                if seen.insert(next.clone()) {
                    todo.push((next.clone(), t));
                }
            }
        }
    }
    // the check sees the edges it is for
    let registry = vec!["data".to_string(), "import".to_string()];
    assert!(edges[&registry].contains(&vec!["data".into(), "import".into(), "nvbench".into()]));
}
