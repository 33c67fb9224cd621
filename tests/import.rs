//! Importers on real files: Kernel Tuner caches (both layouts, .json and .json.gz),
//! GEMM latency tables (CSV and Parquet), format detection and the CLI. Fixtures are
//! slices of MIT / Apache-2.0 sources (tests/fixtures/*/README.md says which and how);
//! tests on the full public files in ../shared are ignored when it is absent.

use gpucast::data::import::{self, Format, ImportOptions, Imported};
use gpucast::data::workload::Workloads;
use gpucast::data::{kernel_tuner, Run};
use std::path::PathBuf;
use std::process::Command;

fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

fn import(rel: &str, format: Format) -> Imported {
    let opts = ImportOptions {
        source: Some("benchmark_hub".into()),
        ..ImportOptions::default()
    };
    import::import_paths(&[fixture(rel)], format, &opts).unwrap()
}

fn find<'a>(runs: &'a [Run], config: &str) -> &'a Run {
    runs.iter()
        .find(|r| r.config == config)
        .unwrap_or_else(|| panic!("no row with config {config}"))
}

/// A public file in ../shared. Its tests are ignored without ../shared (see
/// build.rs); with it, a missing file fails the test.
fn shared(rel: &str) -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/external")
        .join(rel);
    assert!(p.exists(), "{} is missing from ../shared", p.display());
    p
}

const PNPOLY_NEW: &str = "kernel_tuner/pnpoly_RTX_3090_subset.json.gz";
const PNPOLY_OLD: &str = "kernel_tuner/pnpoly_RTX_3090_bsx800_old_layout.json";
const XGEMM: &str = "kernel_tuner/xgemm_RTX_3090_subset.json.gz";
const GEMM_CSV: &str = "gemm_table/a100_sxm_trtllm-1.0.0_n4096_k4096.csv";
const GEMM_PARQUET: &str = "gemm_table/h100_sxm_trtllm-1.3.0rc20_n4096_k4096.parquet";

#[test]
fn kernel_tuner_newer_layout_gz() {
    let imp = import(PNPOLY_NEW, Format::parse("kernel-tuner").unwrap());
    let rep = &imp.report.files[0];
    // 264 entries with block_size_x 32 or 800; 23 failed at run time.
    assert_eq!(rep.rows, 241);
    assert_eq!(imp.table.len(), 241);
    assert_eq!(rep.failed.len(), 1);
    assert_eq!(rep.failed["RuntimeFailedConfig"], 23);
    assert_eq!(imp.report.absurd_times(), 0);
    assert_eq!(
        rep.workload.as_deref(),
        Some("datasets/workloads/pnpoly.toml")
    );

    let r = find(
        &imp.table.runs,
        "between_method=0,block_size_x=32,tile_size=1,use_method=0",
    );
    assert_eq!(r.gpu, "NVIDIA GeForce RTX 3090");
    assert_eq!(r.kernel, "pnpoly");
    assert_eq!(r.source.as_deref(), Some("benchmark_hub"));
    assert_eq!(r.time_ms, 43.55386238098144);
    assert_eq!(r.trials, Some(10.0));
    assert!((r.time_std_ms.unwrap() - 0.13921719229553378).abs() < 1e-12);
    // 2 FLOPs per (point, edge): 2 x 20e6 x 600.
    assert_eq!(r.flops, 2.4e10);
    assert_eq!(r.dram_bytes, 12.0 * 2e7 + 8.0 * 600.0);
    assert_eq!(r.grid_blocks, Some(625_000.0));
    assert_eq!(r.block_threads, Some(32.0));
    assert_eq!(r.smem_per_block, Some(0.0));
    assert_eq!(r.precision.as_deref(), Some("fp32"));
    assert_eq!(r.suite.as_deref(), Some("kernel-tuner"));
    assert_eq!(r.category.as_deref(), Some("point_in_polygon"));
}

#[test]
fn kernel_tuner_older_layout_in_another_parameter_order_gives_the_same_keys() {
    let old = import(PNPOLY_OLD, Format::parse("kernel-tuner").unwrap());
    let new = import(PNPOLY_NEW, Format::parse("kernel-tuner").unwrap());
    let rep = &old.report.files[0];
    assert_eq!(rep.rows, 109);
    assert_eq!(rep.failed["RuntimeFailedConfig"], 23);
    // The older file keys "use_method,tile_size,block_size_x,between_method" = "2,2,800,1";
    // the newer one "between_method,...,use_method" = "1,800,2,2": one configuration.
    let key = "between_method=1,block_size_x=800,tile_size=2,use_method=2";
    let a = find(&old.table.runs, key);
    let b = find(&new.table.runs, key);
    assert_eq!(a.time_ms, 26.84231662750244);
    assert_eq!(a.time_ms, b.time_ms);
    assert_eq!(a.flops, b.flops);
    assert_eq!(a.grid_blocks, b.grid_blocks);
    // Every configuration of the older file is one of the newer file's.
    let new_keys: std::collections::HashSet<&str> =
        new.table.runs.iter().map(|r| r.config.as_str()).collect();
    assert!(old
        .table
        .runs
        .iter()
        .all(|r| new_keys.contains(r.config.as_str())));
    let bsx800 = new
        .table
        .runs
        .iter()
        .filter(|r| r.block_threads == Some(800.0))
        .count();
    assert_eq!(bsx800, 109);
}

#[test]
fn xgemm_flops_geometry_and_the_caches_own_gflops_agree() {
    let imp = import(XGEMM, Format::parse("kernel-tuner").unwrap());
    assert_eq!(imp.report.files[0].rows, 256);
    let r = find(
        &imp.table.runs,
        "KWG=32,KWI=2,MDIMA=8,MDIMC=16,MWG=64,NDIMB=8,NDIMC=16,NWG=64,PRECISION=32,SA=0,SB=0,STRM=0,STRN=0,VWM=1,VWN=1",
    );
    assert_eq!(r.time_ms, 16.132767);
    assert_eq!(r.flops, 137_472_507_904.0); // 2 x 4096^3 + 2 x 4096^2
    assert_eq!(r.grid_blocks, Some(4096.0));
    assert_eq!(r.block_threads, Some(256.0));
    assert_eq!(r.smem_per_block, Some(0.0));
    let sa_sb = find(
        &imp.table.runs,
        "KWG=32,KWI=2,MDIMA=8,MDIMC=16,MWG=64,NDIMB=8,NDIMC=16,NWG=64,PRECISION=32,SA=1,SB=1,STRM=0,STRN=0,VWM=1,VWN=1",
    );
    assert_eq!(sa_sb.smem_per_block, Some(4.0 * 32.0 * 128.0));

    // Without workload files the importer falls back on the cache's GFLOP/s: the same
    // FLOPs (to rounding), no bytes (reported missing), kernel named as in the cache.
    let opts = ImportOptions {
        workloads: Workloads::default(),
        ..ImportOptions::default()
    };
    let bare = import::import_paths(
        &[fixture(XGEMM)],
        Format::parse("kernel-tuner").unwrap(),
        &opts,
    )
    .unwrap();
    let rep = &bare.report.files[0];
    assert_eq!(rep.rows, 256);
    assert!(rep
        .missing
        .iter()
        .any(|m| m.feature == "dram_bytes" && m.rows == 256));
    let b = bare
        .table
        .runs
        .iter()
        .find(|x| x.time_ms == r.time_ms)
        .unwrap();
    assert_eq!(b.kernel, "Xgemm");
    assert!(
        b.config.ends_with(",problem_size=4096x4096"),
        "{}",
        b.config
    );
    assert!((b.flops / r.flops - 1.0).abs() < 1e-12);
    assert_eq!(b.dram_bytes, 0.0);
    assert_eq!(
        b.source.as_deref(),
        Some("kernel-tuner:xgemm_RTX_3090_subset.json.gz")
    );
}

#[test]
fn gemm_table_csv_and_parquet() {
    let imp = import(GEMM_CSV, Format::parse("gemm-table").unwrap());
    let rep = &imp.report.files[0];
    assert_eq!(rep.rows, 84);
    assert!(rep.failed.is_empty() && rep.left_out.is_empty());
    assert_eq!(
        rep.kernels,
        ["gemm_bfloat16", "gemm_int4_wo", "gemm_int8_wo", "gemm_sq"]
    );
    let r = imp
        .table
        .runs
        .iter()
        .find(|r| r.kernel == "gemm_bfloat16" && r.config == "k=4096,m=8192,n=4096")
        .unwrap();
    assert_eq!(r.gpu, "NVIDIA A100-SXM4-80GB");
    assert_eq!(r.time_ms, 1.035537083943685);
    assert_eq!(r.flops, 2.0 * 8192.0 * 4096.0 * 4096.0);
    // A 8192x4096, B 4096x4096, C 8192x4096, 2 bytes each.
    assert_eq!(
        r.dram_bytes,
        2.0 * (8192.0 * 4096.0 + 4096.0 * 4096.0 + 8192.0 * 4096.0)
    );
    assert_eq!(r.precision.as_deref(), Some("bf16"));
    let sq = imp
        .table
        .runs
        .iter()
        .find(|r| r.kernel == "gemm_sq" && r.config == "k=4096,m=8192,n=4096")
        .unwrap();
    assert_eq!(sq.precision.as_deref(), Some("int8"));
    assert_eq!(
        sq.dram_bytes,
        8192.0 * 4096.0 + 4096.0 * 4096.0 + 2.0 * 8192.0 * 4096.0
    );
    // Pass-through columns keep the library version per row.
    let versions = imp.table.extra.column("library_version").unwrap();
    assert_eq!(versions.len(), 84);
    assert_eq!(versions.str().unwrap().get(0), Some("1.0.0"));

    let p = import(GEMM_PARQUET, Format::Auto);
    let rep = &p.report.files[0];
    assert_eq!(rep.format, "gemm-table");
    assert_eq!(rep.rows, 222);
    assert_eq!(rep.gpus, ["NVIDIA H100 80GB HBM3"]);
    assert_eq!(rep.kernels, ["gemm_bfloat16", "gemm_fp8", "gemm_fp8_block"]);
    let fp8 = p
        .table
        .runs
        .iter()
        .find(|r| r.kernel == "gemm_fp8")
        .unwrap();
    assert_eq!(fp8.precision.as_deref(), Some("fp8"));
}

#[test]
fn auto_detects_each_format_and_names_the_formats_when_it_cannot() {
    for (rel, want) in [
        (PNPOLY_NEW, Format::parse("kernel-tuner").unwrap()),
        (PNPOLY_OLD, Format::parse("kernel-tuner").unwrap()),
        (GEMM_CSV, Format::parse("gemm-table").unwrap()),
        (GEMM_PARQUET, Format::parse("gemm-table").unwrap()),
    ] {
        assert_eq!(
            import::detect(&fixture(rel)).unwrap().name(),
            want.name(),
            "{rel}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("results.json");
    std::fs::write(&json, "{\n  \"results\": [1, 2, 3]\n}\n").unwrap();
    let e = import::detect(&json).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!(
            "{}: line 1, column 1: not a recognised format",
            json.display()
        )),
        "{e}"
    );
    assert!(
        e.contains("kernel-tuner") && e.contains("gemm-table") && e.contains("study"),
        "{e}"
    );
    // The command line's names for the options these messages suggest.
    gpucast::error::name_inputs(|i| match i {
        gpucast::error::Input::Gpu => "--gpu",
        gpucast::error::Input::ImportFormat => "--from",
        other => other.plain_name(),
    });
    // Asked for explicitly, the Kernel Tuner importer says why the file is not a cache.
    let e = kernel_tuner::import(&json, &Workloads::builtin(), "x", None)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        format!(
            "{}: line 1, column 1: not a Kernel Tuner cache: no top-level 'cache' object (found top-level keys results); \
             formats: kernel-tuner (JSON with 'cache'), gemm-table, study, canonical (pick one with --from)",
            json.display()
        )
    );
    let csv = dir.path().join("t.csv");
    std::fs::write(&csv, "a,b\n1,2\n").unwrap();
    let e = import::detect(&csv).unwrap_err().to_string();
    assert!(e.contains("not a recognised format (columns: a, b)"), "{e}");
    let both = dir.path().join("both.csv");
    std::fs::write(
        &both,
        "gpu,kernel,config,time_ms,device,dtype,m,n,k,latency\n",
    )
    .unwrap();
    // A runs table that also carries a GEMM table's columns is a runs table (the one
    // rule `predict --runs` and `data import` share).
    assert_eq!(import::detect(&both).unwrap().name(), "canonical");
}

#[test]
fn cli_imports_prints_the_report_and_writes_zstd_parquet() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("kt.parquet");
    // `data import OPTIONS FILES --out kt.parquet --force` (each import replaces the
    // last one's file)
    let import = |options: &[&str], files: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_gpucast"))
            .args(["data", "import"])
            .args(options)
            .args(files.iter().map(|f| fixture(f)))
            .arg("--out")
            .arg(&out)
            .arg("--force")
            .output()
            .unwrap()
    };
    // (each file its default source, kernel-tuner:NAME: the two hold the same
    // configurations, which one source may not measure twice)
    let o = import(&["--from", "kernel-tuner"], &[PNPOLY_NEW, PNPOLY_OLD]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains("RuntimeFailedConfig=23"), "{stdout}");
    assert!(
        stdout
            .contains("350 rows imported; 46 failed configurations not imported (0 absurd times)"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "missing regs_per_thread in 350 rows: Kernel Tuner caches do not record registers"
        ),
        "{stdout}"
    );
    let bytes = std::fs::read(&out).unwrap();
    assert!(bytes.starts_with(b"PAR1"));
    // Read back as a canonical runs table: the two files' rows, same keys.
    let back = gpucast::data::load(std::slice::from_ref(&out)).unwrap();
    assert_eq!(back.len(), 350);
    let key = "between_method=1,block_size_x=800,tile_size=2,use_method=2";
    assert_eq!(back.runs.iter().filter(|r| r.config == key).count(), 2);

    // one source given for both: the same configurations twice from it, refused
    let o = import(&["--source", "benchmark_hub"], &[PNPOLY_NEW, PNPOLY_OLD]);
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("column 'config': duplicate (gpu, kernel, config)")
            && stderr.contains("from source 'benchmark_hub': also at"),
        "{stderr}"
    );

    // (a bad usage: the command line's values are the import registry's)
    let o = import(&["--from", "gemm-tables"], &[GEMM_CSV]);
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("invalid value 'gemm-tables' for '--from <FORMAT>'")
            && stderr.contains("gemm-table"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}

/// The published caches with failed configurations (the GEMM and dedispersion caches
/// have none and are the slowest to read): row and failure counts, and the same
/// configurations keyed in different parameter orders by the two sources.
#[test]
#[cfg_attr(
    not(shared_data),
    ignore = "needs the public data in ../shared beside the repository"
)]
fn public_kernel_tuner_caches() {
    let hub: Vec<PathBuf> = ["convolution", "convolution_milo", "pnpoly"]
        .iter()
        .map(|k| shared(&format!("kernel-tuner/benchmark_hub/{k}")))
        .collect();
    let paper = shared("kernel-tuner/gpu_benchmarking_paper/convolution");
    let kt = |p: &[PathBuf], source: &str| {
        let opts = ImportOptions {
            source: Some(source.into()),
            ..ImportOptions::default()
        };
        import::import_paths(p, Format::Auto, &opts).unwrap()
    };
    let h = kt(&hub, "benchmark_hub");
    assert_eq!(h.report.rows(), 20_952 + 12_291 + 15_032);
    assert_eq!(h.report.failed_total(), 8251);
    assert_eq!(h.report.failed()["CompilationFailedConfig"], 5968);
    assert_eq!(h.report.failed()["RuntimeFailedConfig"], 2283);
    let p = kt(&[paper], "gpu_benchmarking_paper");
    assert_eq!(p.report.rows(), 8 * 5776);
    assert_eq!(p.report.failed_total(), 0);
    // TITAN RTX convolution: the sources order the parameters differently
    // (block_size_x first vs filter_width first) yet 5220 configurations coincide.
    let conv = |t: &Imported, gpu: &str| -> std::collections::HashSet<String> {
        t.table
            .runs
            .iter()
            .filter(|r| r.gpu == gpu && r.kernel == "convolution")
            .map(|r| r.config.to_string())
            .collect()
    };
    let a = conv(&h, "NVIDIA TITAN RTX");
    let b = conv(&p, "TITAN RTX");
    assert_eq!(
        (a.len(), b.len(), a.intersection(&b).count()),
        (5256, 5776, 5220)
    );
    // Every row has FLOPs and bytes from a workload file.
    assert!(h
        .table
        .runs
        .iter()
        .chain(&p.table.runs)
        .all(|r| r.flops > 0.0 && r.dram_bytes > 0.0));
}

#[test]
#[cfg_attr(
    not(shared_data),
    ignore = "needs the public data in ../shared beside the repository"
)]
fn public_gemm_tables() {
    let files: Vec<PathBuf> = [
        "a100_sxm__trtllm-1.0.0.parquet",
        "l40s__trtllm-1.3.0rc20.parquet",
    ]
    .iter()
    .map(|f| shared(&format!("aiconfigurator/gemm/{f}")))
    .collect();
    let imp = import::import_paths(&files, Format::Auto, &ImportOptions::default()).unwrap();
    assert_eq!(imp.report.rows(), 27_384 + 100_668);
    assert_eq!(imp.report.failed_total(), 0);
    assert!(imp.report.files.iter().all(|f| f.left_out.is_empty()));
    assert!(imp
        .table
        .runs
        .iter()
        .all(|r| r.source.as_deref() == Some("aiconfigurator")));
}

/// A user's own workload file (--workloads) describes a kernel the shipped ones do
/// not. SYNTHETIC cache and workload, made up for the test.
#[test]
fn cli_takes_user_workload_files() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("saxpy.json");
    std::fs::write(
        &cache,
        r#"{"device_name": "NVIDIA TITAN V", "kernel_name": "saxpy_kernel",
  "tune_params_keys": ["block_size_x"],
  "cache": {"128": {"block_size_x": 128, "time": 0.5, "times": [0.4, 0.6]},
            "256": {"block_size_x": 256, "time": "CompilationFailedConfig"}}}"#,
    )
    .unwrap();
    let wl = dir.path().join("saxpy.toml");
    std::fs::write(
        &wl,
        "name = \"saxpy_user\"\n[match]\nkernel_name = \"saxpy_kernel\"\n[constants]\nn = 1000\n\
         [formulas]\nflops = \"2*n\"\ndram_bytes = \"12*n\"\ngrid_blocks = \"cdiv(n, block_size_x)\"\n\
         regs_per_thread = \"16 + block_size_x / 64\"\n",
    )
    .unwrap();
    let out = dir.path().join("out.csv");
    let o = Command::new(env!("CARGO_BIN_EXE_gpucast"))
        .args(["data", "import", "--workloads"])
        .arg(&wl)
        .arg(&cache)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("1 rows imported; 1 failed configurations"),
        "{stdout}"
    );
    // registers come from the workload's formula: none are reported missing
    assert!(!stdout.contains("regs_per_thread"), "{stdout}");
    let csv = std::fs::read_to_string(&out).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let get = |c: &str| row[header.iter().position(|h| *h == c).unwrap()];
    assert_eq!(get("kernel"), "saxpy_user");
    assert_eq!(get("config"), "block_size_x=128");
    assert_eq!(get("flops").parse::<f64>().unwrap(), 2000.0);
    assert_eq!(get("dram_bytes").parse::<f64>().unwrap(), 12000.0);
    assert_eq!(get("grid_blocks").parse::<f64>().unwrap(), 8.0);
    assert_eq!(get("regs_per_thread").parse::<f64>().unwrap(), 18.0);
    assert_eq!(get("work_from"), "workload:saxpy_user");
    assert!((get("time_std_ms").parse::<f64>().unwrap() - 0.02_f64.sqrt()).abs() < 1e-12);
    assert!(lines.next().is_none());
}

const NEUSIGHT: &str = "neusight/nvidia-train";

/// The SYNTHETIC NeuSight fixtures (tests/fixtures/neusight/README.md): the same
/// rows whether the format is named or detected, with the work derived from the
/// shapes.
#[test]
fn neusight_operators_by_name_and_detected() {
    let opts = ImportOptions {
        source: Some("neusight".into()),
        ..ImportOptions::default()
    };
    let named = import::import_paths(
        &[fixture(NEUSIGHT)],
        Format::parse("neusight").unwrap(),
        &opts,
    )
    .unwrap();
    let auto = import::import_paths(&[fixture(NEUSIGHT)], Format::Auto, &opts).unwrap();
    assert_eq!(named.table.runs, auto.table.runs);
    assert!(auto.report.files.iter().all(|f| f.format == "neusight"));
    let imp = named;
    // 12 rows: a linear with latency 0 failed, a repeated add shape left out.
    assert_eq!(imp.table.len(), 10);
    assert_eq!(imp.report.failed_total(), 1);
    assert_eq!(imp.report.failed()["absurd_time"], 1);
    assert_eq!(imp.report.left_out()["duplicate_config"], 1);
    let runs = &imp.table.runs;
    let row = |kernel: &str, config: &str| {
        runs.iter()
            .find(|r| r.kernel == kernel && r.config == config)
            .unwrap_or_else(|| panic!("no {kernel} row with config {config}"))
    };

    // bmm: 4 pairs of (32 x 16) by (16 x 64).
    let r = row("bmm", "B=4,K=64,M=32,N=16");
    assert_eq!(r.gpu, "Tesla T4");
    assert_eq!(r.time_ms, 0.05);
    assert_eq!(r.flops, 2.0 * 4.0 * 32.0 * 16.0 * 64.0);
    assert_eq!(r.dram_bytes, 4.0 * 4.0 * (512.0 + 1024.0 + 2048.0));
    assert_eq!(r.working_set_bytes, Some(r.dram_bytes));
    assert_eq!(r.category.as_deref(), Some("matmul_library"));
    assert_eq!(r.precision.as_deref(), Some("fp32"));
    assert_eq!(r.source.as_deref(), Some("neusight"));
    assert_eq!(r.grid_blocks, Some(24.0));
    assert_eq!(r.block_threads, Some(256.0));

    // linear (gzip'd file): 64 x 32 input, 16 x 32 weight, bias 16.
    let r = row("linear", "B=1,K=16,M=64,N=32");
    assert_eq!(r.flops, 2.0 * 64.0 * 32.0 * 16.0 + 64.0 * 16.0);
    assert_eq!(r.dram_bytes, 4.0 * (2048.0 + 512.0 + 16.0 + 1024.0));
    assert_eq!(r.category.as_deref(), Some("matmul_library"));

    // add: two 16 x 1024 inputs, one output; the kernel name's commas are quoted.
    let r = row("add", "B=16,H=1024");
    assert_eq!(r.time_ms, 0.02);
    assert_eq!(r.flops, 16384.0);
    assert_eq!(r.dram_bytes, 4.0 * 3.0 * 16384.0);
    assert_eq!(r.category.as_deref(), Some("elementwise"));
    assert_eq!((r.grid_blocks, r.block_threads), (Some(32.0), Some(128.0)));
    // addu: one tensor and a scalar.
    let r = row("addu", "B=16,H=1024");
    assert_eq!(r.dram_bytes, 4.0 * 2.0 * 16384.0);
    assert_eq!(r.category.as_deref(), Some("elementwise"));
    assert_eq!(row("gelu", "B=2,H=8").flops, 5.0 * 16.0);

    // softmax over 64 rows of 512.
    let r = row("softmax", "B=64,H=512");
    assert_eq!(r.flops, 5.0 * 32768.0);
    assert_eq!(r.dram_bytes, 4.0 * 2.0 * 32768.0);
    assert_eq!(r.category.as_deref(), Some("reduction"));
    assert_eq!((r.grid_blocks, r.block_threads), (Some(16.0), Some(128.0)));

    let r = row("ln", "B=8,H=256");
    assert_eq!(r.flops, 8.0 * 2048.0);
    assert_eq!(r.dram_bytes, 4.0 * (2.0 * 2048.0 + 512.0 + 16.0));
    assert_eq!(r.category.as_deref(), Some("normalization"));

    // conv: 2 x 3 x 16 x 16 input, 8 filters of 3 x 3 x 3, padding 1: 16 x 16 out.
    let r = row(
        "conv",
        "B=2,C_in=3,C_out=8,input_size=16,kernel_size=3,padding=1,stride=1",
    );
    assert_eq!(r.flops, 2.0 * 2.0 * 8.0 * 3.0 * 9.0 * 256.0);
    assert_eq!(r.dram_bytes, 4.0 * (1536.0 + 216.0 + 4096.0));
    assert_eq!(r.category.as_deref(), Some("conv_library"));

    // the kernels the operator launched pass through, without the leading separator
    let kernels = imp.table.extra.column("cuda_kernels").unwrap();
    let i = runs.iter().position(|r| r.kernel == "conv").unwrap();
    assert_eq!(
        kernels.str().unwrap().get(i),
        Some("synthetic_winograd_tiles;synthetic_scudnn_128x64_relu_small_nn")
    );
}

/// A NeuSight file without one of its operator's shape columns: one line naming the
/// file and the column.
#[test]
fn neusight_missing_shape_column_is_one_line_naming_file_and_column() {
    let path = fixture("neusight/bad/bmm_without_K.csv");
    for format in [Format::parse("neusight").unwrap(), Format::Auto] {
        let e = import::import_paths(
            std::slice::from_ref(&path),
            format,
            &ImportOptions::default(),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            format!(
                "{}: column 'K': missing: the shape of 'bmm' needs columns B, M, N, K",
                path.display()
            )
        );
    }
}

/// The shipped corpus is what the importer makes of NeuSight's NVIDIA files: the same
/// rows, no failed runs, the files' 75 repeated shapes left out.
#[test]
#[cfg_attr(
    not(shared_data),
    ignore = "needs the public data in ../shared beside the repository"
)]
fn public_neusight_matches_the_shipped_corpus() {
    neusight_import_is_shipped("nvidia-train", "runs.parquet", 251_647, 75, 5);
}

/// The same for NeuSight's AMD files (MI100, MI210): 13 operator families, the two ln
/// files' 3 repeated shapes each left out, the devices named as the catalog names them.
#[test]
#[cfg_attr(
    not(shared_data),
    ignore = "needs the public data in ../shared beside the repository"
)]
fn public_neusight_amd_matches_the_shipped_corpus() {
    let imp = neusight_import_is_shipped("amd-train", "runs_amd.parquet", 44_794, 6, 2);
    let catalog = gpucast::catalog::Catalog::builtin();
    let mut gpus = imp.table.gpus();
    gpus.sort();
    assert_eq!(gpus, ["AMD Instinct MI100", "AMD Instinct MI210"]);
    for g in &gpus {
        assert_eq!(&catalog.resolve(g).unwrap().name, g);
    }
}

/// Imports `neusight/<dir>` from ../shared, checks its counts (rows, repeated shapes
/// left out, GPUs) and that `datasets/public/neusight/<shipped>` holds the same rows.
fn neusight_import_is_shipped(
    dir: &str,
    shipped: &str,
    rows: usize,
    repeats: usize,
    gpus: usize,
) -> Imported {
    let opts = ImportOptions {
        source: Some("neusight".into()),
        ..ImportOptions::default()
    };
    let imp =
        import::import_paths(&[shared(&format!("neusight/{dir}"))], Format::Auto, &opts).unwrap();
    assert_eq!(imp.report.rows(), rows);
    assert_eq!(imp.report.failed_total(), 0);
    assert_eq!(imp.report.left_out()["duplicate_config"], repeats);
    assert_eq!(imp.table.gpus().len(), gpus);
    let shipped = gpucast::data::read_file(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join(format!("datasets/public/neusight/{shipped}")),
    )
    .unwrap();
    assert_eq!(shipped.len(), imp.table.len());
    for (a, b) in shipped.runs.iter().zip(&imp.table.runs) {
        assert_eq!(
            (
                &a.gpu,
                &a.kernel,
                &a.config,
                a.time_ms,
                a.flops,
                a.dram_bytes
            ),
            (
                &b.gpu,
                &b.kernel,
                &b.config,
                b.time_ms,
                b.flops,
                b.dram_bytes
            )
        );
        assert_eq!(a.category, b.category);
    }
    imp
}
