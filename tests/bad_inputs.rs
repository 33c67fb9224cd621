//! Bad inputs, one table: every case runs the `gpucast` binary on files it writes to a
//! temp dir and states what must happen. An error is exit code 1 (bad input) or 2
//! (bad usage) with exactly one line on stderr, `error: ...`, holding a fragment (the
//! `FILE:LINE: column 'X'` place for table data, LINE as an editor counts it); nothing
//! panics or hangs. A few inputs that look odd but are fine must succeed with a given
//! output. All failures are collected and reported together.
//!
//! Every data file here is SYNTHETIC (written by the case), except the shipped
//! reference study ({ref}) and test fixtures ({fx}) some cases start from.

mod common;

// Names, bounds, bombs, unclear errors (issue 62): the cases live in
// tests/bad_inputs/names_bounds.rs (this file is past 1,200 lines).
#[path = "bad_inputs/names_bounds.rs"]
mod names_bounds;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Longest a case may run before it counts as a hang.
const TIMEOUT: Duration = Duration::from_secs(60);

const HEADER: &str = "gpu,kernel,config,time_ms,flops,dram_bytes";
const ROW_TITAN: &str = "NVIDIA TITAN V,saxpy,N=1024,0.01,2048,12288";
const ROW_2080: &str = "NVIDIA GeForce RTX 2080 Ti,saxpy,N=1024,0.02,2048,12288";
const REF_TARGET: &str = "TITAN V";

/// A Kernel Tuner cache of the convolution: one measured configuration, one Kernel
/// Tuner marked invalid and one with a negative time.
const CACHE_WITH_FAILURES: &str = r#"{"device_name": "Tesla V100-PCIE-32GB", "kernel_name": "convolution_kernel",
 "tune_params_keys": ["filter_width", "filter_height", "block_size_x", "block_size_y", "tile_size_x", "tile_size_y", "use_padding", "read_only"],
 "cache": {"15,15,32,8,2,1,0,0": {"time": 2.0},
           "15,15,32,8,1,1,0,0": {"time": "InvalidConfig"},
           "15,15,32,8,4,1,0,0": {"time": -1.0}}}
"#;

/// The study's `gpu_metrics.json` layout, two GPUs (SYNTHETIC figures).
const STUDY_METRICS: &str = r#"[
 {"device_name": "NVIDIA TITAN V",
  "sustained_bandwidth_gbps": 300, "sustained_compute_gflops": 10900},
 {"device_name": "NVIDIA GeForce RTX 2080 Ti",
  "sustained_bandwidth_gbps": 267, "sustained_compute_gflops": 10400}
]"#;

/// What a case must do.
enum Expect {
    /// Exit with this code and one stderr line `error: ...` holding the fragment.
    Error(i32, &'static str),
    /// Exit 0 with the fragment on stdout.
    Stdout(&'static str),
    /// Exit 0 with the fragment on stderr (commands that write a file say so there).
    Stderr(&'static str),
}

struct Case {
    name: &'static str,
    /// Files written into the case's temp dir before it runs (name, content).
    files: Vec<(String, Vec<u8>)>,
    /// Arguments; `{dir}` is the temp dir, `{ref}` the shipped reference study,
    /// `{fx}` tests/fixtures.
    args: Vec<String>,
    expect: Expect,
    /// A file (relative to the temp dir) that must exist afterwards and hold this
    /// fragment, or, with `None`, must not exist.
    file: Option<(&'static str, Option<&'static str>)>,
    /// Special entries made before it runs: (name, what).
    specials: Vec<(String, Special)>,
    /// Files that may change (outputs the case expects to be written or replaced);
    /// every other file the case wrote must be byte-identical afterwards.
    may_change: Vec<&'static str>,
    /// What the command reads on standard input (none: /dev/null).
    stdin: Option<Vec<u8>>,
}

/// An entry of a case's temp dir that is not a plain file.
enum Special {
    /// A named pipe nobody writes to.
    Fifo,
    /// A symbolic link to this target (`{dir}` is the temp dir).
    Link(String),
    /// A hard link to this file of the temp dir.
    Hard(String),
}

impl Case {
    fn new(name: &'static str, expect: Expect, args: &[&str]) -> Case {
        Case {
            name,
            files: Vec::new(),
            args: args.iter().map(|a| a.to_string()).collect(),
            expect,
            file: None,
            specials: Vec::new(),
            may_change: Vec::new(),
            stdin: None,
        }
    }
    /// An error case.
    fn err(name: &'static str, code: i32, fragment: &'static str, args: &[&str]) -> Case {
        Case::new(name, Expect::Error(code, fragment), args)
    }
    fn with(mut self, name: &str, content: impl AsRef<[u8]>) -> Case {
        self.files
            .push((name.to_string(), content.as_ref().to_vec()));
        self
    }
    fn file_has(mut self, name: &'static str, fragment: &'static str) -> Case {
        self.file = Some((name, Some(fragment)));
        self
    }
    fn no_file(mut self, name: &'static str) -> Case {
        self.file = Some((name, None));
        self
    }
    fn fifo(mut self, name: &str) -> Case {
        self.specials.push((name.to_string(), Special::Fifo));
        self
    }
    fn link(mut self, name: &str, target: &str) -> Case {
        self.specials
            .push((name.to_string(), Special::Link(target.to_string())));
        self
    }
    fn hard(mut self, name: &str, target: &str) -> Case {
        self.specials
            .push((name.to_string(), Special::Hard(target.to_string())));
        self
    }
    fn stdin(mut self, content: impl AsRef<[u8]>) -> Case {
        self.stdin = Some(content.as_ref().to_vec());
        self
    }
    /// `name` is an output this case may write over.
    fn changes(mut self, name: &'static str) -> Case {
        self.may_change.push(name);
        self
    }
}

/// A runs CSV: the header, then the rows, each line ending in `\n`.
fn runs(rows: &[&str]) -> String {
    let mut s = format!("{HEADER}\n");
    for r in rows {
        s += r;
        s += "\n";
    }
    s
}

/// `data validate {dir}/a.csv` on the given text.
fn validate(name: &'static str, text: impl AsRef<[u8]>, expect: Expect) -> Case {
    Case::new(name, expect, &["data", "validate", "{dir}/a.csv"]).with("a.csv", text)
}

/// A one-GPU catalog entry (SYNTHETIC), with the fields given as TOML lines.
fn gpu_entry(name: &str, cc: &str, sm_count: &str, bandwidth: &str) -> String {
    format!(
        "[[gpu]]\nname = \"{name}\"\nvendor = \"NVIDIA\"\narch = \"A\"\ncompute_capability = \"{cc}\"\nsm_count = {sm_count}\nboost_clock_mhz = 1000.0\nfp32_gflops = 1000.0\nmem_bandwidth_gbs = {bandwidth}\nl2_bytes = 1048576\nregs_per_sm = 65536\nmax_threads_per_sm = 1536\nmax_blocks_per_sm = 16\nsmem_per_sm = 102400\nwarp_size = 32\n"
    )
}

/// `--gpus {dir}/c.toml gpus list` on the given catalog text.
fn catalog(name: &'static str, text: impl AsRef<[u8]>, code: i32, fragment: &'static str) -> Case {
    Case::err(
        name,
        code,
        fragment,
        &["--gpus", "{dir}/c.toml", "gpus", "list"],
    )
    .with("c.toml", text)
}

/// A saved hybrid model (SYNTHETIC: no residual) with one field changed by `edit`.
fn model_json(edit: impl FnOnce(&mut serde_json::Value)) -> String {
    let mut v = serde_json::json!({
        "format": "gpucast-model",
        "version": gpucast::models::hybrid::MODEL_FORMAT_VERSION,
        "gpucast_version": "0.2.0",
        "model": "hybrid",
        "regressor": "gbm",
        "seed": 42,
        "features": gpucast::features::vectors::PAIR_NAMES,
        "categories": [],
        "training_gpus": ["NVIDIA GeForce RTX 2080 Ti"],
        "corpora": ["reference_study"],
        "data_hash": "0",
        "correction_share": 0.0,
        "new_family_share": 0.0,
        "kernel_ratio_share": 0.0,
        "families": ["matmul"],
        "interval": {"pooled_log": [-0.4, 0.9]},
        "pairs": 0,
        "residual": null
    });
    edit(&mut v);
    v.to_string()
}

/// A model file's shape transfer (SYNTHETIC numbers).
fn shape(coefficients: &[f64], strength: f64) -> serde_json::Value {
    serde_json::json!({
        "coefficients": coefficients,
        "strength_same_arch": strength,
        "strength_other_arch": 0.0,
        "max_distance": 3.0
    })
}

/// A model file's `interval.local` with one GPU whose 50 shape quantiles step by `step`.
fn local_interval(similarity_power: i32, step: f64) -> serde_json::Value {
    let shape: Vec<f64> = (0..50).map(|k| step * (k as f64 - 24.5)).collect();
    serde_json::json!({
        "similarity_power": similarity_power,
        "gpus": [{"gpu": "NVIDIA TITAN V", "level_log": 0.1, "shape_log": shape}]
    })
}

/// `predict` on the reference study with the model file `{dir}/m.json`.
fn model_file(name: &'static str, text: impl AsRef<[u8]>, fragment: &'static str) -> Case {
    Case::err(
        name,
        1,
        fragment,
        &[
            "predict",
            "--runs",
            "{ref}",
            "--target",
            REF_TARGET,
            "--model",
            "{dir}/m.json",
        ],
    )
    .with("m.json", text)
}

/// An experiment TOML (SYNTHETIC) run by `reproduce` from its own directory.
fn experiment(name: &'static str, text: &str, code: i32, fragment: &'static str) -> Case {
    Case::err(
        name,
        code,
        fragment,
        &[
            "reproduce",
            "--experiments",
            "{dir}/exps",
            "--out",
            "{dir}/out",
            "--no-plots",
            "--data",
            "{ref}",
        ],
    )
    .with("exps/a.toml", text)
}

fn fixture(rel: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn cases() -> Vec<Case> {
    use Expect::*;
    let gemm = String::from_utf8(fixture("gemm_table/a100_sxm_trtllm-1.0.0_n4096_k4096.csv"))
        .expect("utf-8 fixture");
    let ncu = fixture("ncu/rtx5090_kernel_0003.csv");
    let pred = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut a = vec!["predict", "--runs", "{ref}", "--target", REF_TARGET];
        a.extend_from_slice(extra);
        a
    };
    let tune = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut a = vec!["tune", "--runs", "{ref}", "--target", REF_TARGET];
        a.extend_from_slice(extra);
        a
    };
    let eval = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut a = vec!["evaluate", "--data", "{ref}"];
        a.extend_from_slice(extra);
        a
    };
    let one_bad = |cell: &str| runs(&[&format!("NVIDIA TITAN V,saxpy,N=1024,{cell},2048,12288")]);

    vec![
        // ---- runs tables: cell values (the first data row is line 2) ----
        validate("time 1e300", one_bad("1e300"), Error(1, "a.csv:2: column 'time_ms': 1e300 is above 1e7 ms")),
        validate("warps per SM 1e300", format!("{HEADER},warps_per_sm\n{ROW_TITAN},1e300\n"), Error(1, "a.csv:2: column 'warps_per_sm': 1e300 is above 64, the largest plausible value")),
        validate("coefficient of variation 1e300", format!("{HEADER},time_cv\n{ROW_TITAN},1e300\n"), Error(1, "a.csv:2: column 'time_cv': 1e300 is above 100, the largest plausible value")),
        validate("time 0", one_bad("0"), Error(1, "a.csv:2: column 'time_ms': time must be > 0, found 0")),
        validate("time negative", one_bad("-1"), Error(1, "a.csv:2: column 'time_ms': time must be > 0, found -1")),
        validate("time NaN", one_bad("NaN"), Error(1, "a.csv:2: column 'time_ms': value is NaN: must be a finite number")),
        validate("time inf", one_bad("inf"), Error(1, "a.csv:2: column 'time_ms': value is inf")),
        validate("time empty", one_bad(""), Error(1, "a.csv:2: column 'time_ms': missing value")),
        validate("time text", one_bad("fast"), Error(1, "a.csv:2: column 'time_ms': expected a number, found 'fast'")),
        validate("time hex", one_bad("0x10"), Error(1, "column 'time_ms': expected a number, found '0x10'")),
        validate("time decimal comma", one_bad("\"1,5\""), Error(1, "a.csv:2: column 'time_ms': expected a number, found '1,5'")),
        validate("flops not a number", runs(&["NVIDIA TITAN V,saxpy,N=1024,0.01,lots,12288"]), Error(1, "a.csv:2: column 'flops': expected a number, found 'lots'")),
        validate("dram_bytes negative", runs(&["NVIDIA TITAN V,saxpy,N=1024,0.01,2048,-5"]), Error(1, "a.csv:2: column 'dram_bytes': must be >= 0, found -5")),
        validate("dram_bytes absurd", runs(&["NVIDIA TITAN V,saxpy,N=1024,0.01,2048,1e40"]), Error(1, "a.csv:2: column 'dram_bytes': 1e40 is above 1e21")),
        validate(
            "optional column negative",
            format!("{HEADER},block_threads\n{ROW_TITAN},-3\n"),
            Error(1, "a.csv:2: column 'block_threads': must be >= 0, found -3"),
        ),
        validate(
            "block of more threads than the GPU launches",
            format!("{HEADER},block_threads\n{ROW_TITAN},2048\n"),
            Error(1, "a.csv:2: column 'block_threads': 2048 is not what NVIDIA TITAN V (compute capability 7.0) can launch: a whole number from 1 to 1024"),
        ),
        validate(
            "grid of 0 blocks",
            format!("{HEADER},grid_blocks\n{ROW_TITAN},0\n"),
            Error(1, "a.csv:2: column 'grid_blocks': 0 is not what NVIDIA TITAN V (compute capability 7.0) can launch: a whole number from 1 to (2^31 - 1) x 65535 x 65535"),
        ),
        validate(
            "grid of more blocks than a launch has",
            format!("{HEADER},grid_blocks\n{ROW_TITAN},1e25\n"),
            Error(1, "a.csv:2: column 'grid_blocks': 1e25 is not what NVIDIA TITAN V (compute capability 7.0) can launch: a whole number from 1 to (2^31 - 1) x 65535 x 65535"),
        ),
        validate(
            "more registers than a thread has",
            format!("{HEADER},regs_per_thread\n{ROW_TITAN},1000\n"),
            Error(1, "a.csv:2: column 'regs_per_thread': 1000 is not what NVIDIA TITAN V (compute capability 7.0) can launch: a whole number from 0 to 255"),
        ),
        validate(
            "GEMM table without its latency",
            "device,gemm_dtype,m,n,k\nNVIDIA H100 80GB HBM3,bfloat16,8,4096,4096\n",
            Error(1, "a.csv: not a GEMM table: needs columns device, gemm_dtype or dtype, m, n, k, latency (found device, gemm_dtype, m, n, k)"),
        ),
        validate("kernel empty", runs(&["NVIDIA TITAN V,,N=1024,0.01,2048,12288"]), Error(1, "a.csv:2: column 'kernel': missing value")),
        validate(
            "config names a parameter twice",
            runs(&["NVIDIA TITAN V,saxpy,\"N=1,N=2\",0.01,2048,12288"]),
            Error(1, "a.csv:2: column 'config': parameter 'N' appears twice"),
        ),
        // ---- runs tables: positions are editor lines ----
        validate("bad cell on line 4", runs(&[ROW_TITAN, ROW_2080, "NVIDIA TITAN V,saxpy,N=2048,x,2048,12288"]), Error(1, "a.csv:4: column 'time_ms'")),
        validate(
            "blank lines count as lines",
            format!("{HEADER}\n{ROW_TITAN}\n\n\nNVIDIA TITAN V,saxpy,N=2048,x,2048,12288\n\n"),
            Error(1, "a.csv:5: column 'time_ms'"),
        ),
        validate(
            "a quoted cell spanning two lines",
            format!("{HEADER}\nNVIDIA TITAN V,saxpy,\"N=1024,\nblock=2\",0.01,2048,12288\nNVIDIA TITAN V,saxpy,N=2,x,2048,12288\n"),
            Error(1, "a.csv:4: column 'time_ms'"),
        ),
        validate("byte-order mark", format!("\u{feff}{}", one_bad("x")), Error(1, "a.csv:2: column 'time_ms'")),
        validate(
            "CRLF bad cell",
            format!("{HEADER}\r\n{ROW_TITAN}\r\nNVIDIA GeForce RTX 2080 Ti,saxpy,N=1024,-0.02,2048,12288\r\n"),
            Error(1, "a.csv:3: column 'time_ms': time must be > 0, found -0.02"),
        ),
        // ---- runs tables: layout ----
        validate(
            "missing required column",
            "gpu,kernel,config,time_ms,flops\nNVIDIA TITAN V,saxpy,N=1024,0.01,2048\n",
            Error(1, "a.csv: missing required column 'dram_bytes'"),
        ),
        validate(
            "upper-case column names",
            format!("GPU,Kernel,Config,Time_ms,FLOPS,DRAM_bytes\n{ROW_TITAN}\n"),
            Error(1, "missing required column 'gpu' (found 'GPU'"),
        ),
        validate(
            "a column named twice",
            format!("{HEADER},time_ms\n{ROW_TITAN},3\n"),
            Error(1, "a.csv:1: column 'time_ms': appears twice in the header"),
        ),
        validate("a row with too many cells", runs(&[ROW_TITAN, &format!("{ROW_2080},extra")]), Error(1, "a.csv:3: 7 cells, but the header has 6 columns")),
        validate("a row with too few cells", runs(&["NVIDIA TITAN V,saxpy,N=1024,0.01"]), Error(1, "a.csv:2: 4 cells, but the header has 6 columns")),
        validate(
            "a quote never closed",
            format!("{HEADER}\n{ROW_TITAN}\nNVIDIA TITAN V,saxpy,\"N=1024,0.01,2048,12288\n"),
            Error(1, "a.csv:3: a quoted cell is never closed"),
        ),
        validate(
            "semicolon-separated",
            "gpu;kernel;config;time_ms;flops;dram_bytes\nNVIDIA TITAN V;saxpy;N=1024;0.01;2048;12288\n",
            Error(1, "a.csv:1: looks ';'-separated"),
        ),
        validate(
            "tab-separated",
            "gpu\tkernel\tconfig\ttime_ms\tflops\tdram_bytes\nNVIDIA TITAN V\tsaxpy\tN=1024\t0.01\t2048\t12288\n",
            Error(1, "a.csv:1: looks tab-separated"),
        ),
        validate("empty file", "", Error(1, "a.csv: empty file")),
        validate("only blank lines", "\n  \n\r\n", Error(1, "a.csv: empty file")),
        validate("header only", format!("{HEADER}\n"), Error(1, "a.csv: no data rows (only a header)")),
        validate(
            "binary garbage",
            (0u8..=255).cycle().take(600).collect::<Vec<u8>>(),
            Error(1, "a.csv:2: not UTF-8 text"),
        ),
        validate(
            "Latin-1 cell",
            b"gpu,kernel,config,time_ms,flops,dram_bytes\nNVIDIA TITAN V,sax\xe9py,N=1,0.01,2048,12288\n",
            Error(1, "a.csv:2: not UTF-8 text"),
        ),
        validate(
            "bare carriage returns",
            format!("{HEADER}\r{ROW_TITAN}\r"),
            Error(1, "a.csv:1: lines end in a bare carriage return"),
        ),
        Case::err("garbage named .parquet", 1, "a.parquet: cannot read", &["data", "validate", "{dir}/a.parquet"])
            .with("a.parquet", runs(&[ROW_TITAN])),
        Case::err("cache of failed configurations only", 1, "c.json: no runs: none of its 2 entries could be read as a run (InvalidConfig=1 absurd_time=1)", &["data", "validate", "{dir}/c.json"])
            .with("c.json", CACHE_WITH_FAILURES.replace(r#""15,15,32,8,2,1,0,0": {"time": 2.0},"#, "")),
        Case::err("cache of failed configurations only, imported", 1, "c.json: no runs: none of its 2 entries", &["data", "import", "{dir}/c.json", "-o", "{dir}/x.csv"])
            .with("c.json", CACHE_WITH_FAILURES.replace(r#""15,15,32,8,2,1,0,0": {"time": 2.0},"#, ""))
            .no_file("x.csv"),
        Case::err("runner table of failed runs only, imported", 1, "a.csv: no runs: none of its 2 entries could be read as a run (status_not_ok=2)", &["data", "import", "{dir}/a.csv", "-o", "{dir}/x.csv"])
            .with("a.csv", format!("{HEADER},status\n{ROW_TITAN},failed\n{ROW_2080},failed\n"))
            .no_file("x.csv"),
        Case::err("import of one table twice", 1, "b.csv:2: column 'config': duplicate (gpu, kernel, config) = (NVIDIA TITAN V, saxpy, N=1024): also at", &["data", "import", "{dir}/a.csv", "{dir}/b.csv", "-o", "{dir}/x.csv"])
            .with("a.csv", runs(&[ROW_TITAN]))
            .with("b.csv", runs(&[ROW_TITAN]))
            .no_file("x.csv"),
        Case::err("--gpu names no known GPU", 2, "--gpu: unknown GPU 'NVIDIA Fake': not in the catalog", &["data", "validate", "{ref}", "--gpu", "NVIDIA Fake"]),
        Case::err("bench --repeat 0", 2, "--repeat 0: a stage is timed at least once", &["bench", "--repeat", "0"]),
        Case::err("decimal Parquet column", 1, "time_decimal.parquet: column 'time_ms' holds decimals", &["predict", "--runs", "{fx}/parquet/time_decimal.parquet", "--target", REF_TARGET]),
        Case::err("decimal Parquet column, imported", 1, "time_decimal.parquet: column 'time_ms' holds decimals", &["data", "import", "{fx}/parquet/time_decimal.parquet", "-o", "{dir}/x.csv"]),
        Case::err("unknown file type", 1, "a.json: unknown file type '.json'", &["data", "validate", "{dir}/a.json"])
            .with("a.json", runs(&[ROW_TITAN])),
        Case::err("nonexistent file", 1, "nope.csv: no such file or directory", &["data", "validate", "{dir}/nope.csv"]),
        Case::err("directory without runs files", 1, "no runs files", &["data", "validate", "{dir}/d"])
            .with("d/notes.txt", "not a runs table\n")
            .with("d/other.csv", "a,b\n1,2\n"),
        // ---- runs tables: rules across rows and the catalog ----
        validate(
            "unknown GPU, with close names",
            runs(&["NVIDIA TITAN Q,saxpy,N=1024,0.01,2048,12288"]),
            Error(1, "a.csv:2: column 'gpu': unknown GPU 'NVIDIA TITAN Q': not in the catalog (add it with --gpus FILE); close names: "),
        ),
        validate(
            "ambiguous GPU name",
            runs(&["TITAN,saxpy,N=1024,0.01,2048,12288"]),
            Error(1, "a.csv:2: column 'gpu': unknown GPU 'TITAN': ambiguous: it matches"),
        ),
        validate(
            "duplicate row",
            runs(&[ROW_TITAN, "NVIDIA TITAN V,saxpy,N=1024,0.02,2048,12288"]),
            Error(1, "a.csv:3: column 'config': duplicate (gpu, kernel, config) = (NVIDIA TITAN V, saxpy, N=1024): also at"),
        ),
        validate(
            "duplicate by alias and key order",
            runs(&[
                "NVIDIA TITAN V,saxpy,\"N=1024,block=256\",0.01,2048,12288",
                "TITAN V,saxpy,\"block=256, N=1024\",0.02,2048,12288",
            ]),
            Error(1, "a.csv:3: column 'config': duplicate"),
        ),
        // ---- runs tables that are fine ----
        validate("trailing blank line", format!("{HEADER}\n{ROW_TITAN}\n{ROW_2080}\n\n"), Stdout("2 rows in 1 file(s)")),
        validate("trailing whitespace line", format!("{HEADER}\n{ROW_TITAN}\n{ROW_2080}\n   \n"), Stdout("2 rows in 1 file(s)")),
        validate("CRLF line endings", format!("{HEADER}\r\n{ROW_TITAN}\r\n{ROW_2080}\r\n"), Stdout("2 rows in 1 file(s)")),
        validate("no final newline", format!("{HEADER}\n{ROW_TITAN}\n{ROW_2080}"), Stdout("2 rows in 1 file(s)")),
        validate(
            "every cell quoted",
            "\"gpu\",\"kernel\",\"config\",\"time_ms\",\"flops\",\"dram_bytes\"\n\"NVIDIA TITAN V\",\"saxpy\",\"N=1024\",\"0.01\",\"2048\",\"12288\"\n",
            Stdout("1 rows in 1 file(s)"),
        ),
        // ---- catalog files (--gpus) ----
        catalog("compute capability 13.7", gpu_entry("Future", "13.7", "10", "100.0"), 1, "c.toml:5:1: GPU 'Future': compute capability '13.7' is not in the compute capability table"),
        catalog(
            "catalog entry without a field",
            gpu_entry("Future", "8.6", "10", "100.0").replace("mem_bandwidth_gbs = 100.0\n", ""),
            1,
            "c.toml:1:1: [[gpu]] #1 'Future': missing field `mem_bandwidth_gbs`",
        ),
        catalog("negative bandwidth", gpu_entry("Future", "8.6", "10", "-100.0"), 1, "c.toml:9:1: [[gpu]] #1 'Future': mem_bandwidth_gbs must be a positive number, got -100"),
        catalog("NaN bandwidth", gpu_entry("Future", "8.6", "10", "nan"), 1, "mem_bandwidth_gbs must be a positive number, got NaN"),
        catalog("sm_count 0", gpu_entry("Future", "8.6", "0", "100.0"), 1, "c.toml:6:1: [[gpu]] #1 'Future': sm_count must be positive"),
        catalog("sm_count negative", gpu_entry("Future", "8.6", "-3", "100.0"), 1, "[[gpu]] #1 'Future': invalid value: integer `-3`"),
        catalog("misspelt field", "[[gpu]]\nname = \"NVIDIA TITAN V\"\nsm_cuont = 12\n", 1, "unknown field `sm_cuont`"),
        catalog("TOML syntax", "# mine\n[[gpu]\n", 1, "c.toml:2:"),
        catalog(
            "sustained bandwidth above the peak",
            "[[gpu]]\nname = \"NVIDIA TITAN V\"\nsustained_bandwidth_gbs = 5000.0\n",
            1,
            "c.toml:3:1: [[gpu]] #1 'NVIDIA TITAN V': sustained_bandwidth_gbs 5000 is above the peak",
        ),
        Case::err("nonexistent catalog", 1, "nope.toml: cannot read", &["--gpus", "{dir}/nope.toml", "gpus", "list"]),
        Case::new("catalog adds a GPU", Stdout("name = \"Future\""), &["--gpus", "{dir}/c.toml", "gpus", "show", "future"])
            .with("c.toml", gpu_entry("Future", "8.6", "10", "100.0")),
        // ---- GPU names on the command line ----
        Case::err("gpus show unknown", 2, "gpus show: unknown GPU 'RTX 4075': not in the catalog (add it with --gpus FILE); close names: 'NVIDIA GeForce RTX 4070'", &["gpus", "show", "RTX 4075"]),
        Case::err("--target of brand words only", 2, "--target: unknown GPU 'GeForce RTX': only brand words (nvidia, geforce, tesla, quadro, rtx, gtx): name the model", &["predict", "--runs", "{ref}", "--target", "GeForce RTX"]),
        Case::err("ambiguous --target", 2, "--target: unknown GPU 'TITAN': ambiguous: it matches", &["predict", "--runs", "{ref}", "--target", "TITAN"]),
        Case::err("unknown --target", 2, "--target: unknown GPU 'RTX 9999': not in the catalog", &["predict", "--runs", "{ref}", "--target", "RTX 9999"]),
        // ---- predict, tune, explain ----
        Case::err("predict --source not in the data", 2, "--source 'NVIDIA H100 SXM5 80GB' has no rows in the data (GPUs: ", &pred(&["--source", "H100 SXM5 80GB"])),
        Case::err("tune --source not in the data", 2, "--source 'NVIDIA H100 SXM5 80GB' has no rows in the data", &tune(&["--source", "H100 SXM5 80GB"])),
        Case::err(
            "explain --source not in the data",
            2,
            "--source 'NVIDIA H100 SXM5 80GB' has no rows in the data",
            &["explain", "--runs", "{ref}", "--target", REF_TARGET, "--row", "1", "--source", "H100 SXM5 80GB"],
        ),
        Case::err("--source is the target", 2, "no rows measured on a GPU other than NVIDIA TITAN V", &pred(&["--source", "TITAN V"])),
        Case::err("unknown model name", 2, "unknown model 'analyticl' (known: analytical", &pred(&["--model", "analyticl"])),
        Case::err("--format xml", 2, "invalid value 'xml' for '--format <FORMAT>' [possible values: table, csv, json]", &pred(&["--format", "xml"])),
        Case::err("-o x.json with --format csv", 2, "the file name says json but --format is csv", &pred(&["-o", "{dir}/x.json", "--format", "csv"]))
            .no_file("x.json"),
        Case::err("-o x.csv with --format json", 2, "the file name says csv but --format is json", &pred(&["-o", "{dir}/x.csv", "--format", "json"]))
            .no_file("x.csv"),
        Case::err("-o x.txt", 2, "x.txt: output must end in .csv, .parquet or .json", &pred(&["-o", "{dir}/x.txt"])),
        Case::err("-o under a regular file", 1, "cannot create directory", &pred(&["-o", "{dir}/f.csv/x.csv"])).with("f.csv", "x\n"),
        Case::new("-o x.json writes JSON", Stderr("wrote 80 predictions"), &pred(&["-o", "{dir}/x.json", "--format", "json"]))
            .file_has("x.json", "\"pred_ms\""),
        Case::new("-o x.json without --format", Stderr("wrote 80 predictions"), &pred(&["-o", "{dir}/x.json"]))
            .file_has("x.json", "\"pred_ms\""),
        Case::new("-o into a new directory", Stderr("wrote 80 predictions"), &pred(&["-o", "{dir}/new/dir/x.csv"]))
            .file_has("new/dir/x.csv", "pred_ms"),
        Case::err("tune --kernel misspelt", 2, "--kernel 'saxpyy' is not in the data (kernels: ", &tune(&["--kernel", "saxpyy"])),
        Case::err("tune --top 0", 2, "--top 0", &tune(&["--top", "0"])),
        Case::err("tune -o parquet", 2, "t.parquet: output must end in .csv or .json", &tune(&["-o", "{dir}/t.parquet"])),
        Case::new("tune -o csv", Stderr("configurations for NVIDIA TITAN V"), &tune(&["-o", "{dir}/t.csv"]))
            .file_has("t.csv", "kernel,rank,of,config"),
        Case::err("explain --row 0", 2, "--row 0: the data has rows 1..=243", &["explain", "--runs", "{ref}", "--target", REF_TARGET, "--row", "0"]),
        Case::err("conflicting --resources and --no-resources", 2, "cannot be used with '--no-resources'", &pred(&["--resources", "{dir}/r.csv", "--no-resources"])),
        Case::err("misspelt flag", 2, "unexpected argument '--targte' found (tip: a similar argument exists: '--target')", &["predict", "--runs", "{ref}", "--targte", "x"]),
        Case::err("missing --target", 2, "required arguments were not provided: --target <TARGET>", &["predict", "--runs", "{ref}"]),
        Case::err("nonexistent --study-metrics", 1, "nope.json: no such file", &pred(&["--study-metrics", "{dir}/nope.json"])),
        Case::err("bad --study-metrics", 1, "sm.json: not a study gpu_metrics.json", &pred(&["--model", "analytical-study", "--study-metrics", "{dir}/sm.json"]))
            .with("sm.json", "{bad"),
        Case::err("--study-metrics bandwidth <= 0", 1, "sm.json: line 5, column 3: sustained_bandwidth_gbps must be > 0, found -267", &pred(&["--model", "analytical-study", "--study-metrics", "{dir}/sm.json"]))
            .with("sm.json", STUDY_METRICS.replace("\"sustained_bandwidth_gbps\": 267", "\"sustained_bandwidth_gbps\": -267")),
        Case::err("--study-metrics GPU twice", 1, "sm.json: line 4, column 3: NVIDIA TITAN V is listed twice", &pred(&["--model", "analytical-study", "--study-metrics", "{dir}/sm.json"]))
            .with("sm.json", STUDY_METRICS.replace("RTX 2080 Ti", "TITAN V")),
        Case::err("--study-metrics compute above the peak", 1, "sm.json: line 5, column 36: sustained_compute_gflops 1e300 is above the catalog's peak for NVIDIA GeForce RTX 2080 Ti", &pred(&["--model", "analytical-study", "--study-metrics", "{dir}/sm.json"]))
            .with("sm.json", STUDY_METRICS.replace("\"sustained_compute_gflops\": 10400", "\"sustained_compute_gflops\": 1e300")),
        Case::err("--study-metrics empty", 1, "sm.json: no GPUs: the list is empty", &pred(&["--model", "analytical-study", "--study-metrics", "{dir}/sm.json"]))
            .with("sm.json", "[]"),
        Case::err("bad --resources", 1, "r.csv: missing column 'kernel'", &pred(&["--resources", "{dir}/r.csv"])).with("r.csv", "garbage,x\n"),
        Case::err("measured calibration without figures", 1, "has no measured 'sustained_bandwidth_gbs'", &pred(&["--target-calibration", "measured"])),
        // ---- evaluate, train ----
        Case::err(
            "--test-kernels misspelt",
            2,
            "test kernel 'matmul_tiledd' is not in the data (kernels: atomic_hotspot",
            &eval(&["--protocol", "new-kernel", "--test-kernels", "matmul_tiledd"]),
        ),
        Case::err("--test-kernels with logo", 2, "--test-kernels applies only to --protocol new-kernel", &eval(&["--test-kernels", "saxpy"])),
        Case::err("unknown protocol", 2, "invalid value 'lolo' for '--protocol <PROTOCOL>'", &eval(&["--protocol", "lolo"])),
        Case::err("unknown model in a list", 2, "unknown model 'foo'", &eval(&["--model", "analytical,foo"])),
        Case::err("correction share above 1", 2, "hybrid correction share 1.5 is outside 0..1", &eval(&["--model", "hybrid@1.5"])),
        Case::err("unknown residual regressor", 2, "unknown residual regressor in 'hybrid-foo'", &eval(&["--model", "hybrid-foo"])),
        Case::err("--predictions x.json", 2, "x.json: output must end in .csv", &eval(&["--predictions", "{dir}/x.json"])),
        Case::err("logo on one GPU", 2, "protocol logo holds one GPU out at a time: it needs runs of two or more GPUs", &["evaluate", "--data", "{dir}/a.csv"])
            .with("a.csv", runs(&[ROW_TITAN, "NVIDIA TITAN V,saxpy,N=2048,0.02,4096,24576"])),
        Case::err("train -o m.csv", 2, "m.csv: output must end in .json", &["train", "--data", "{ref}", "-o", "{dir}/m.csv"]).no_file("m.csv"),
        Case::err("train a model that is not saved", 2, "only hybrid models are saved", &["train", "--data", "{ref}", "--model", "analytical", "-o", "{dir}/m.json"]),
        // ---- saved model files (predict --model) ----
        model_file("truncated model JSON", &model_json(|_| {})[..40], "m.json: not a gpucast model file: EOF while parsing"),
        model_file("model format version 1", model_json(|v| v["version"] = 1.into()), "m.json: model file format version 1"),
        model_file("negative correction share", model_json(|v| v["correction_share"] = (-0.5).into()), "m.json: correction_share -0.5 is outside 0..1"),
        model_file("new-family share above 1", model_json(|v| v["new_family_share"] = 1.5.into()), "m.json: new_family_share 1.5 is outside 0..1"),
        model_file("negative kernel-ratio share", model_json(|v| v["kernel_ratio_share"] = (-0.25).into()), "m.json: kernel_ratio_share -0.25 is outside 0..1"),
        model_file("analytical share above 1", model_json(|v| v["analytical_share"] = 1.25.into()), "m.json: analytical_share 1.25 is outside 0..1"),
        model_file("corpora out of order", model_json(|v| v["corpora"] = serde_json::json!(["b", "a"])), "m.json: corpora must be sorted and not empty"),
        model_file("a model file of the previous version", model_json(|v| v["version"] = 11.into()), "m.json: model file format version 11 (written by gpucast 0.2.0), this gpucast reads version 12: retrain it"),
        model_file("similarity power not offered", model_json(|v| v["similarity_power"] = 0.into()), "m.json: similarity_power 0 is not one of [1, 2, 4]"),
        model_file("analytical power not offered", model_json(|v| v["analytical_power"] = 3.into()), "m.json: analytical_power 3 is not one of [1, 2, 4]"),
        model_file("local interval at a power not offered", model_json(|v| v["interval"]["local"] = local_interval(3, 0.1)), "m.json: interval.local.similarity_power 3 is not one of [1, 2, 4]"),
        model_file("local interval without a pooled one", model_json(|v| { v["interval"]["local"] = local_interval(2, 0.1); v["interval"]["pooled_log"] = serde_json::Value::Null; }), "m.json: interval.local without interval.pooled_log"),
        model_file("local interval with a descending shape", model_json(|v| v["interval"]["local"] = local_interval(2, -0.1)), "m.json: interval.local for NVIDIA TITAN V: level_log must be a number within +-20 and shape_log 50 such numbers in ascending order"),
        model_file("unsorted families", model_json(|v| v["families"] = serde_json::json!(["stencil", "matmul"])), "m.json: families must be sorted, each named once"),
        model_file("swapped interval", model_json(|v| v["interval"]["pooled_log"] = serde_json::json!([0.9, -0.4])), "m.json: interval.pooled_log (0.9, -0.4) must be numbers within +-20 with lo <= hi"),
        model_file("negative shape coefficient", model_json(|v| v["shape"] = shape(&[-1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], 1.0)), "m.json: shape.coefficients must be 8 finite numbers >= 0"),
        model_file("shape coefficients of another version", model_json(|v| v["shape"] = shape(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], 1.0)), "m.json: shape.coefficients must be 8 finite numbers >= 0"),
        model_file("a held-out curve cut short", model_json(|v| { v["shape"] = shape(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], 1.0); v["shape"]["other_arch_curves"] = serde_json::json!([{"gpu": "NVIDIA TITAN V", "mape": [0.2, 0.1]}]); }), "m.json: shape.other_arch_curves for 'NVIDIA TITAN V' must be 5 finite numbers >= 0 (one per strength [0.0, 0.25, 0.5, 0.75, 1.0])"),
        model_file("a negative shape variance for another campaign", model_json(|v| { v["shape"] = shape(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], 1.0); v["shape"]["other_source"] = serde_json::json!(-0.5); }), "m.json: shape.other_source -0.5 must be a finite number >= 0"),
        model_file("shape strength above 1", model_json(|v| v["shape"] = shape(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], 2.0)), "m.json: shape strength 2 is outside 0..1"),
        model_file("not a model", "[]", "m.json: not a gpucast model file"),
        model_file("another file format", model_json(|v| v["format"] = "onnx".into()), "m.json: not a gpucast hybrid model file"),
        model_file("unknown field in a model", model_json(|v| v["extra"] = 1.into()), "unknown field `extra`"),
        Case::err("nonexistent model file", 1, "nope.json: no such file", &pred(&["--model", "{dir}/nope.json"])),
        // ---- importers ----
        Case::err("JSON that is not a Kernel Tuner cache", 1, "k.json: line 1, column 1: not a Kernel Tuner cache", &["data", "import", "--from", "kernel-tuner", "{dir}/k.json", "-o", "{dir}/o.csv"])
            .with("k.json", "{\"foo\": 1}\n"),
        Case::err("a cache whose 'cache' is not an object", 1, "k.json: line 3, column 3: not a Kernel Tuner cache: 'cache' is a list, not an object of configurations", &["data", "import", "{dir}/k.json", "-o", "{dir}/o.csv"])
            .with("k.json", "{\n  \"device_name\": \"x\",\n  \"cache\": [1, 2]\n}\n")
            .no_file("o.csv"),
        Case::new("entries of a cache not read as runs are counted by data validate", Stdout("; 2 entries of the data not read as runs (InvalidConfig=1 absurd_time=1;"), &["data", "validate", "{dir}/k.json"])
            .with("k.json", CACHE_WITH_FAILURES),
        Case::new("entries of a cache not read as runs are noted by predict", Stderr("note: 2 entries of the data not read as runs (InvalidConfig=1 absurd_time=1;"), &["predict", "--runs", "{dir}/k.json", "--target", "RTX 4090"])
            .with("k.json", CACHE_WITH_FAILURES),
        Case::err("JSON of no known format", 1, "not a recognised format", &["data", "import", "{dir}/k.json", "-o", "{dir}/o.csv"])
            .with("k.json", "{\"foo\": 1}\n"),
        Case::err("gzip garbage", 1, "k.json.gz: cannot decompress gzip", &["data", "import", "{dir}/k.json.gz", "-o", "{dir}/o.csv"])
            .with("k.json.gz", b"\x1f\x8b\x08\x00garbage"),
        Case::err("Nsight Compute CSV cut in a quote", 1, "n.csv: line 8, column 1: a quoted field is never closed", &["data", "import", "--from", "ncu", "--gpu", "RTX 5090", "{dir}/n.csv", "-o", "{dir}/o.csv"])
            .with("n.csv", &ncu[..2000]),
        Case::err("Nsight Compute CSV cut short", 1, "n.csv: no launch has a kernel duration", &["data", "import", "--from", "ncu", "--gpu", "RTX 5090", "{dir}/n.csv", "-o", "{dir}/o.csv"])
            .with("n.csv", ncu.split(|&b| b == b'\n').take(5).collect::<Vec<_>>().join(&b'\n')),
        Case::err("Nsight Compute details without --gpu", 1, "no GPU name in this Nsight Compute export", &["data", "import", "--from", "ncu", "{fx}/ncu/rtx5090_kernel_0003.csv", "-o", "{dir}/o.csv"]),
        Case::err("GEMM table with a bad size", 1, "g.csv:3: column 'n': expected a positive whole number, found '-4096'", &["data", "import", "--from", "gemm-table", "{dir}/g.csv", "-o", "{dir}/o.csv"])
            .with("g.csv", {
                let mut lines: Vec<&str> = gemm.lines().collect();
                let bad = lines[2].replacen(",4096,4096,4096,", ",4096,-4096,4096,", 1);
                lines[2] = &bad;
                lines.join("\n") + "\n"
            }),
        Case::err("Kernel Tuner cache of an unknown GPU", 1, "c.json: line 1, column 2: 'device_name': unknown GPU 'Tesla V900': not in the catalog", &["data", "validate", "{dir}/c.json"])
            .with("c.json", CACHE_WITH_FAILURES.replace("Tesla V100-PCIE-32GB", "Tesla V900")),
        Case::err("Kernel Tuner entry of a launch no GPU makes", 1, "c.json: row 1: column 'block_threads': 4096 is not what NVIDIA Tesla V100 PCIe 32GB (compute capability 7.0) can launch: a whole number from 1 to 1024 (kernel 'convolution', config 'block_size_x=512,block_size_y=8,filter_height=15,filter_width=15,read_only=0,tile_size_x=2,tile_size_y=1,use_padding=0')", &["data", "validate", "{dir}/c.json"])
            .with("c.json", CACHE_WITH_FAILURES.replace("15,15,32,8,2,1,0,0", "15,15,512,8,2,1,0,0")),
        Case::err("GEMM table of an unknown GPU", 1, "g.csv:4: column 'device': unknown GPU 'NVIDIA A900': not in the catalog", &["data", "validate", "{dir}/g.csv"])
            .with("g.csv", {
                let mut lines: Vec<String> = gemm.lines().map(str::to_string).collect();
                lines[3] = lines[3].replace("NVIDIA A100-SXM4-80GB", "NVIDIA A900");
                lines.join("\n") + "\n"
            }),
        Case::err("unknown import format", 2, "invalid value 'kernel-tunr' for '--from <FORMAT>'", &["data", "import", "--from", "kernel-tunr", "{fx}/kernel_tuner/pnpoly_RTX_3090_subset.json.gz", "-o", "{dir}/o.csv"]),
        Case::err("import -o x.json", 2, "x.json: output must end in .csv or .parquet", &["data", "import", "{fx}/gemm_table/a100_sxm_trtllm-1.0.0_n4096_k4096.csv", "-o", "{dir}/x.json"])
            .no_file("x.json"),
        // ---- experiments (reproduce) ----
        experiment(
            "experiment with an unknown key",
            "name = \"x\"\ntitle = \"t\"\nprotocol = { name = \"logo\" }\nmodels = [\"analytical\"]\nbogus = 1\n",
            1,
            "a.toml:5:1: unknown field `bogus`, expected one of",
        ),
        experiment(
            "experiment with an unknown protocol",
            "name = \"x\"\ntitle = \"t\"\nprotocol = { name = \"lolo\" }\nmodels = [\"analytical\"]\n",
            1,
            "a.toml:3:21: unknown variant `lolo`",
        ),
        experiment("experiment with an unknown model", "name = \"x\"\ntitle = \"t\"\nprotocol = { name = \"logo\" }\nmodels = [\"analyticl\"]\n", 1, "a.toml: unknown model 'analyticl'"),
        experiment("experiment TOML syntax", "name = \"x\"\nprotocol = { name = \"logo\"\n", 1, "a.toml:2:"),
        experiment("experiment protocol with a setting it does not take", "name = \"x\"\ntitle = \"t\"\nprotocol = { name = \"logo\", foo = 1 }\nmodels = [\"analytical\"]\n", 1, "a.toml: protocol.foo: protocol logo takes no setting but its name"),
        experiment("experiment new-kernel of no test kernels", "name = \"x\"\ntitle = \"t\"\nprotocol = { name = \"new-kernel\", test_kernels = [] }\nmodels = [\"analytical\"]\n", 2, "protocol new-kernel with test_kernels = []: name the kernels to hold out"),
        experiment("experiment whose targets are its only sources", "name = \"x\"\ntitle = \"t\"\nprotocol = { name = \"logo\" }\nmodels = [\"analytical\"]\n[selection]\ntargets = [\"TITAN V\"]\nsources = [\"TITAN V\"]\n", 2, "experiment 'x': its protocol and selection leave no measured run to score"),
        experiment("experiment gate of three coverage bounds", "name = \"x\"\ntitle = \"t\"\nprotocol = { name = \"logo\" }\nmodels = [\"analytical\"]\n[gate.analytical]\ncoverage = [85, 95, 99]\n", 1, "gate.analytical.coverage = [85.0, 95.0, 99.0]: two percentages, the least first"),
        experiment("experiment gate bound NaN", "name = \"x\"\ntitle = \"t\"\nprotocol = { name = \"logo\" }\nmodels = [\"analytical\"]\n[gate.analytical]\npooled_mape_max = nan\n", 1, "gate.analytical.pooled_mape_max = NaN: a bound is a number >= 0"),
        experiment("experiment of a vendor the catalog lacks", "name = \"x\"\ntitle = \"t\"\nprotocol = { name = \"logo\" }\nmodels = [\"analytical\"]\nvendors = [\"nvidiaa\"]\n", 2, "experiment 'x': vendor 'nvidiaa' is not one of the catalog's (AMD, NVIDIA)"),
        experiment("experiment gate on a target's short name", "name = \"x\"\ntitle = \"t\"\nprotocol = { name = \"logo\" }\nmodels = [\"analytical\"]\n[gate.analytical]\ntarget_mape_max = { \"TITAN V\" = 35 }\n", 2, "experiment 'x': gate.analytical.target_mape_max names 'TITAN V': results name it 'NVIDIA TITAN V'"),
        experiment("experiment sample 2", "name = \"x\"\ntitle = \"t\"\nprotocol = { name = \"logo\" }\nmodels = [\"analytical\"]\nsample = 2.0\n", 1, "sample = 2: must be in (0, 1]"),
        experiment(
            "experiment test kernel not in the data",
            "name = \"x\"\ntitle = \"t\"\nprotocol = { name = \"new-kernel\", test_kernels = [\"nope\"] }\nmodels = [\"analytical\"]\n",
            2,
            "no experiment can run on the data given (kernels: atomic_hotspot, conv2d_3x3, conv2d_7x7, dot_product, histogram, matmul_naive, matmul_tiled, naive_transpose, random_access, reduce_sum, saxpy, shared_bank_conflict, shared_transpose, strided_copy_8, vector_add, vector_add_divergent): x: skipped (test kernel 'nope' is not in the data",
        ),
        Case::err("no experiment files", 1, "no experiment files (*.toml)", &["reproduce", "--experiments", "{dir}/e", "--out", "{dir}/out"])
            .with("e/readme.txt", "none\n"),
        Case::err("--experiments is a file", 1, "cannot read experiments directory", &["reproduce", "--experiments", "{dir}/a.toml", "--out", "{dir}/out"])
            .with("a.toml", "name = \"x\"\n"),
        // ---- data show ----
        Case::err("show --gpu not in the data", 2, "--gpu 'NVIDIA H100 SXM5 80GB' has no rows in the data", &["data", "show", "{ref}", "--gpu", "H100 SXM5 80GB"]),
        Case::err("show --kernel misspelt", 2, "--kernel 'saxpyy' is not in the data (kernels: ", &["data", "show", "{ref}", "--kernel", "saxpyy"]),
        // ---- bench: an empty benchmark is an error, found before any data is read ----
        Case::err("bench --rows 0", 2, "--rows must be at least 1", &["bench", "--data", "{dir}/absent", "--rows", "0"]),
        Case::err("bench --gpu-count 1", 2, "--gpu-count 1: every stage predicts a GPU from another", &["bench", "--data", "{dir}/absent", "--gpu-count", "8,1"]),
        Case::new("show --kernel", Stdout("saxpy"), &["data", "show", "{ref}", "--kernel", "saxpy", "--gpu", "TITAN V"]),
    ]
}

/// Outputs that must never destroy an input or a user's file, special files, pipes and
/// interrupted writes.
fn file_safety_cases() -> Vec<Case> {
    use Expect::*;
    let two = runs(&[ROW_TITAN, ROW_2080]);
    let exp = |name: &str| {
        format!("name = \"{name}\"\ntitle = \"t\"\nprotocol = {{ name = \"logo\" }}\nmodels = [\"analytical\"]\n")
    };
    let reproduce_into = |out: &str| -> Vec<String> {
        [
            "reproduce",
            "--experiments",
            "{dir}/exps",
            "--out",
            out,
            "--no-plots",
            "--data",
            "{ref}",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let rep = |name: &'static str, expect: Expect, out: &str| {
        let args = reproduce_into(out);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        Case::new(name, expect, &args).with("exps/a.toml", exp("x"))
    };
    let p_into = |out: &'static str| -> Vec<&'static str> {
        vec![
            "predict",
            "--runs",
            "{dir}/r.csv",
            "--target",
            "RTX 4090",
            "-o",
            out,
        ]
    };
    let named =
        |name: &'static str, n: &str| experiment(name, &exp(n), 1, "must be a plain file name");
    vec![
        // ---- an output that is an input is refused before any work ----
        Case::err("predict -o its runs file", 1, "r.csv: is also an input: writing it would destroy what is read", &p_into("{dir}/r.csv")).with("r.csv", &two),
        Case::err("predict -o its runs file through a directory not made yet", 1, "is also an input", &p_into("{dir}/new/../r.csv")).with("r.csv", &two).no_file("new"),
        Case::err("predict -o its runs file through ./", 1, "is also an input", &p_into("{dir}/./r.csv")).with("r.csv", &two),
        Case::err("predict -o a link to its runs file", 1, "l.csv: is also an input", &p_into("{dir}/l.csv")).with("r.csv", &two).link("l.csv", "{dir}/r.csv"),
        Case::err("predict -o a relative link to its runs file", 1, "l.csv: is also an input", &p_into("{dir}/l.csv")).with("r.csv", &two).link("l.csv", "r.csv"),
        Case::err("predict -o a hard link of its runs file", 1, "h.csv: is also an input", &p_into("{dir}/h.csv")).with("r.csv", &two).hard("h.csv", "r.csv"),
        Case::err("predict -o its runs given through a link", 1, "r.csv: is also an input", &["predict", "--runs", "{dir}/l.csv", "--target", "RTX 4090", "-o", "{dir}/r.csv"]).with("r.csv", &two).link("l.csv", "{dir}/r.csv"),
        Case::err("predict -o its Kernel Tuner cache", 1, "c.json: is also an input", &["predict", "--runs", "{dir}/c.json", "--target", "RTX 4090", "-o", "{dir}/c.json"]).with("c.json", CACHE_WITH_FAILURES),
        Case::err("predict -o a file of its runs directory", 1, "is a file inside the input directory", &["predict", "--runs", "{dir}/d", "--target", "RTX 4090", "-o", "{dir}/d/r.csv"]).with("d/r.csv", &two),
        Case::err("predict -o a file below its runs directory", 1, "is a file inside the input directory", &["predict", "--runs", "{dir}/d", "--target", "RTX 4090", "-o", "{dir}/d/e/notes.csv"]).with("d/r.csv", &two).with("d/e/notes.csv", "a,b\n1,2\n"),
        Case::err("predict -o its model file", 1, "m.json: is also an input", &["predict", "--runs", "{dir}/r.csv", "--target", "RTX 4090", "--model", "{dir}/m.json", "-o", "{dir}/m.json"]).with("r.csv", &two).with("m.json", model_json(|_| {})),
        Case::err("predict -o its training data", 1, "t.csv: is also an input", &["predict", "--runs", "{dir}/r.csv", "--target", "RTX 4090", "--model", "hybrid", "--data", "{dir}/t.csv", "-o", "{dir}/t.csv"]).with("r.csv", &two).with("t.csv", &two),
        Case::err("predict -o its study metrics", 1, "g.json: is also an input", &["predict", "--runs", "{dir}/r.csv", "--target", "RTX 4090", "--study-metrics", "{dir}/g.json", "-o", "{dir}/g.json"]).with("r.csv", &two).with("g.json", STUDY_METRICS),
        Case::err("predict -o its kernel resources", 1, "res.csv: is also an input", &["predict", "--runs", "{dir}/r.csv", "--target", "RTX 4090", "--resources", "{dir}/res.csv", "-o", "{dir}/res.csv"]).with("r.csv", &two).with("res.csv", "kernel,arch,regs\n"),
        Case::err("tune -o its runs file", 1, "r.csv: is also an input", &["tune", "--runs", "{dir}/r.csv", "--target", "RTX 4090", "-o", "{dir}/r.csv"]).with("r.csv", &two),
        Case::err("tune -o a link to its cache", 1, "l.json: is also an input", &["tune", "--runs", "{dir}/c.json", "--target", "RTX 4090", "-o", "{dir}/l.json"]).with("c.json", CACHE_WITH_FAILURES).link("l.json", "{dir}/c.json"),
        Case::err("evaluate --predictions its data", 1, "r.csv: is also an input", &["evaluate", "--data", "{dir}/r.csv", "--predictions", "{dir}/r.csv"]).with("r.csv", &two),
        Case::err("evaluate --predictions into its data directory", 1, "is a file inside the input directory", &["evaluate", "--data", "{dir}/d", "--predictions", "{dir}/d/p.csv"]).with("d/r.csv", &two).with("d/p.csv", "model,target\n"),
        Case::err("train -o a file of its data directory", 1, "is a file inside the input directory", &["train", "--data", "{dir}/d", "-o", "{dir}/d/m.json"]).with("d/r.csv", &two).with("d/m.json", "{}"),
        Case::err("train -o its data through a link", 1, "l.json: is also an input", &["train", "--data", "{dir}/c.json", "-o", "{dir}/l.json"]).with("c.json", CACHE_WITH_FAILURES).link("l.json", "{dir}/c.json"),
        Case::err("data import -o its input", 1, "r.csv: is also an input", &["data", "import", "{dir}/r.csv", "-o", "{dir}/r.csv"]).with("r.csv", &two),
        Case::err("data import -o its second input", 1, "b.csv: is also an input", &["data", "import", "{dir}/a.csv", "{dir}/b.csv", "-o", "{dir}/b.csv"]).with("a.csv", runs(&[ROW_TITAN])).with("b.csv", runs(&[ROW_2080])),
        Case::err("data import -o a link to its input", 1, "l.csv: is also an input", &["data", "import", "{dir}/r.csv", "-o", "{dir}/l.csv"]).with("r.csv", &two).link("l.csv", "{dir}/r.csv"),
        Case::err("data import -o its Parquet input", 1, "g.parquet: is also an input", &["data", "import", "{dir}/g.parquet", "-o", "{dir}/g.parquet"]).with("g.parquet", fixture("gemm_table/h100_sxm_trtllm-1.3.0rc20_n4096_k4096.parquet")),
        Case::err("data import -o a file of its input directory", 1, "is a file inside the input directory", &["data", "import", "{dir}/d", "-o", "{dir}/d/notes.csv"]).with("d/r.csv", &two).with("d/notes.csv", "a,b\n1,2\n"),
        Case::err("data import -o a workload file it reads", 1, "is a file inside the input directory", &["data", "import", "{dir}/c.json", "--workloads", "{dir}/w", "-o", "{dir}/w/x.csv"]).with("c.json", CACHE_WITH_FAILURES).with("w/x.csv", "keep\n"),
        // ---- outputs that are not files to replace ----
        Case::err("predict -o a directory", 1, "out.csv: is a directory", &p_into("{dir}/out.csv")).with("r.csv", &two).with("out.csv/keep", "mine\n"),
        Case::err("predict -o a dangling link", 1, "o.csv: a symbolic link to a file that does not exist", &p_into("{dir}/o.csv")).with("r.csv", &two).link("o.csv", "{dir}/nowhere.csv").no_file("nowhere.csv"),
        Case::err("data import -o a dangling link", 1, "a symbolic link to a file that does not exist", &["data", "import", "{dir}/r.csv", "-o", "{dir}/o.csv"]).with("r.csv", &two).link("o.csv", "{dir}/nowhere.csv").no_file("nowhere.csv"),
        Case::err("evaluate --plots over a chart of the user's, before any work", 1, "pp/logo_error_cdf.svg: exists, and gpucast replaces no file it did not write", &["evaluate", "--data", "{ref}", "--plots", "{dir}/pp", "--predictions", "{dir}/p.csv"]).with("pp/logo_error_cdf.svg", "mine\n").no_file("p.csv"),
        Case::err("evaluate a model named twice", 2, "--model analytical is named twice", &["evaluate", "--data", "{ref}", "--model", "analytical,analytical"]),
        Case::err("predict -o a FIFO nobody reads", 1, "o.csv: is a pipe nobody reads", &p_into("{dir}/o.csv")).with("r.csv", &two).fifo("o.csv"),
        // ---- an existing file is replaced only with --force ----
        Case::err("predict -o a link to an existing file", 1, "o.csv: exists, and gpucast replaces no file it did not write: give a new name, or allow replacing it (--force)", &p_into("{dir}/o.csv")).with("r.csv", &two).with("t.csv", "old\n").link("o.csv", "{dir}/t.csv"),
        Case::new("predict --force -o a link writes through it", Stderr("wrote 1 predictions"), &[p_into("{dir}/o.csv"), vec!["--force"]].concat()).with("r.csv", &two).with("t.csv", "old\n").link("o.csv", "{dir}/t.csv").changes("t.csv").file_has("t.csv", "pred_ms"),
        Case::err("predict -o over an existing file", 1, "p.csv: exists, and gpucast replaces no file it did not write", &p_into("{dir}/p.csv")).with("r.csv", &two).with("p.csv", "old\n"),
        Case::new("predict --force -o over an earlier output", Stderr("wrote 1 predictions"), &[p_into("{dir}/p.csv"), vec!["--force"]].concat()).with("r.csv", &two).with("p.csv", "old\n").changes("p.csv").file_has("p.csv", "pred_ms"),
        Case::err("data import -o over an existing file", 1, "x.parquet: exists, and gpucast replaces no file it did not write", &["data", "import", "{dir}/r.csv", "-o", "{dir}/x.parquet"]).with("r.csv", &two).with("x.parquet", "mine\n"),
        Case::err("predict --force -o its runs file", 1, "r.csv: is also an input", &[p_into("{dir}/r.csv"), vec!["--force"]].concat()).with("r.csv", &two),
        Case::new("predict -o into directories it makes", Stderr("wrote 1 predictions"), &p_into("{dir}/new/sub/p.json")).with("r.csv", &two).file_has("new/sub/p.json", "pred_ms"),
        Case::new("data import -o beside its input", Stderr("wrote 2 rows"), &["data", "import", "{dir}/r.csv", "-o", "{dir}/x.csv"]).with("r.csv", &two).file_has("x.csv", "saxpy"),
        Case::new("data import -o outside its input directory", Stderr("wrote 2 rows"), &["data", "import", "{dir}/d", "-o", "{dir}/x.csv"]).with("d/r.csv", &two).file_has("x.csv", "saxpy"),
        // ---- reproduce --out: only its own files, never the user's ----
        rep("reproduce --out holding a user's file of an output's name", Error(1, "x.md: exists and was not written by gpucast reproduce"), "{dir}/out")
            .with("out/x.md", "mine\n").with("out/notes.txt", "mine\n").no_file("out/summary.md"),
        rep("reproduce --out holding a user's summary", Error(1, "summary.md: exists and was not written by gpucast reproduce"), "{dir}/out")
            .with("out/summary.md", "mine\n").no_file("out/x.md"),
        rep("reproduce --out keeps the user's other files", Stdout("wrote 8 files"), "{dir}/out")
            .with("out/notes.txt", "mine\n").with("out/sub/data.csv", "a\n").file_has("out/x.md", "Protocol `logo`"),
        rep("reproduce --out replaces what an earlier reproduce wrote", Stdout("wrote 8 files"), "{dir}/out")
            .with("out/x.md", "old\n").with("out/.gpucast-reproduce", data_loss::listed(&[("x.md", "old\n")])).changes("out/x.md").changes("out/.gpucast-reproduce").file_has("out/x.md", "Protocol `logo`"),
        Case::new("reproduce --out never replaces its own input, listed or not", Error(1, "out/runs.csv: is also an input"), &["reproduce", "--experiments", "{dir}/exps", "--out", "{dir}/out", "--no-plots", "--data", "{dir}/out/runs.csv"])
            .with("exps/a.toml", exp("runs")).with("out/runs.csv", &two).with("out/.gpucast-reproduce", data_loss::listed(&[("runs.csv", &two)])),
        rep("reproduce --out lists what it wrote", Stdout("wrote 8 files"), "{dir}/out").file_has("out/.gpucast-reproduce", "x_predictions.csv"),
        rep("reproduce --out never replaces a link", Error(1, "'x.md' is a symbolic link (reproduce never writes through a link)"), "{dir}/out")
            .with("mine.txt", "mine\n").with("out/.gpucast-reproduce", data_loss::listed(&[("x.md", "mine\n")])).link("out/x.md", "{dir}/mine.txt"),
        rep("reproduce --out a file", Error(1, "f: is a file, not a directory"), "{dir}/f").with("f", "mine\n"),
        rep("reproduce --out a link to a file", Error(1, "is a file, not a directory"), "{dir}/l").with("f", "mine\n").link("l", "{dir}/f"),
        rep("reproduce --out a link to a directory", Stdout("wrote 8 files"), "{dir}/l").with("real/notes.txt", "mine\n").link("l", "{dir}/real").file_has("real/x.md", "Protocol `logo`"),
        rep("reproduce --out a new directory", Stdout("wrote 8 files"), "{dir}/a/b/out").file_has("a/b/out/summary.md", "x"),
        named("experiment named with ..", "../x"),
        named("experiment named with an absolute path", "/tmp/gpucast-x"),
        Case::err("tune --write-cache from a runs table", 2, "r.csv is in the canonical format, not a Kernel Tuner cache", &["tune", "--runs", "{dir}/r.csv", "--target", "RTX 4090", "--write-cache", "{dir}/x.json"]).with("r.csv", &two).no_file("x.json"),
        Case::err("data import --from canonical of a cache", 1, "c.json: a JSON file, not a CSV or Parquet table", &["data", "import", "{dir}/c.json", "--from", "canonical", "-o", "{dir}/x.csv"]).with("c.json", CACHE_WITH_FAILURES).no_file("x.csv"),
        Case::err("data import of an ambiguous GPU name", 1, "a.csv:2: column 'gpu': unknown GPU 'A100': ambiguous", &["data", "import", "{dir}/a.csv", "-o", "{dir}/x.csv"]).with("a.csv", runs(&["A100,saxpy,N=1024,0.01,2048,12288"])).no_file("x.csv"),
        Case::new("data import keeps a GPU the catalog does not know", Stderr("wrote 1 rows"), &["data", "import", "{dir}/a.csv", "-o", "{dir}/x.csv"]).with("a.csv", runs(&["Zeta Z9,saxpy,N=1024,0.01,2048,12288"])).file_has("x.csv", "Zeta Z9"),
        named("experiment named as a hidden file", ".x"),
        experiment("experiment named as the summary", &exp("summary"), 1, "name = \"summary\": reproduce writes its own summary.md and summary.csv; give the experiment another name").no_file("out"),
        experiment("experiment named as another's outputs", &exp("x"), 1, "x_per_target.csv: two outputs of this run have this name")
            .with("exps/b.toml", exp("x_per_target")).no_file("out/x.md"),
        named("experiment named with a slash", "a/b"),
        named("experiment named with a backslash", "a\\\\b"),
        named("experiment with an empty name", ""),
        named("experiment named with a space", "a b"),
        named("experiment named with a NUL", "a\\u0000b"),
        Case::err("two experiments of one name", 1, "two experiment files are named 'x'", &["reproduce", "--experiments", "{dir}/exps", "--out", "{dir}/out", "--no-plots", "--data", "{ref}"])
            .with("exps/a.toml", exp("x")).with("exps/b.toml", exp("x")).no_file("out"),
        experiment("experiment without models", "name = \"x\"\ntitle = \"t\"\nprotocol = { name = \"logo\" }\nmodels = []\n", 1, "a.toml: models = []: name at least one model"),
        experiment("experiment of no kernels", "name = \"x\"\ntitle = \"t\"\nprotocol = { name = \"logo\" }\nmodels = [\"analytical\"]\nkernels = []\n", 1, "a.toml: kernels = []: name at least one kernel"),
        Case::err("experiment kernel not in its data", 2, "experiment 'x': kernel 'nope' is not in its data (kernels: ", &["reproduce", "--experiments", "{dir}/exps", "--out", "{dir}/out", "--no-plots"])
            .with("exps/a.toml", "name = \"x\"\ntitle = \"t\"\nprotocol = { name = \"logo\" }\nmodels = [\"analytical\"]\nkernels = [\"saxpy\", \"nope\"]\ndata = [\"{ref}\"]\n").no_file("out"),
        Case::err("experiment test kernel not in its own data", 1, "test kernel 'nope' is not in the data (kernels: ", &["reproduce", "--experiments", "{dir}/exps", "--out", "{dir}/out", "--no-plots"])
            .with("exps/a.toml", "name = \"x\"\ntitle = \"t\"\nprotocol = { name = \"new-kernel\", test_kernels = [\"nope\"] }\nmodels = [\"analytical\"]\ndata = [\"{ref}\"]\n").no_file("out"),
        experiment("loco experiment on one corpus", "name = \"x\"\ntitle = \"t\"\nprotocol = { name = \"loco\" }\nmodels = [\"analytical\"]\n", 2, "x: skipped (protocol loco holds one corpus (the runs' source) out at a time"),
        Case::err("evaluate loco on one corpus", 2, "protocol loco holds one corpus (the runs' source) out at a time: it needs two or more corpora, one with runs of two or more GPUs (the data has: reference_study)", &["evaluate", "--protocol", "loco", "--data", "{ref}"]),
        experiment("experiment whose kernels are not in --data", "name = \"x\"\ntitle = \"t\"\nprotocol = { name = \"logo\" }\nmodels = [\"analytical\"]\nkernels = [\"nope\"]\n", 2, "): x: skipped (none of its kernels is in the data given)"),
        // ---- special files: read once, never waited on ----
        Case::err("a FIFO as the runs file", 1, "f.csv: empty file", &["data", "validate", "{dir}/f.csv"]).fifo("f.csv"),
        Case::err("a FIFO as predict's runs", 1, "f.csv: empty file", &["predict", "--runs", "{dir}/f.csv", "--target", "RTX 4090"]).fifo("f.csv"),
        Case::err("a FIFO named .json", 1, "f.json: empty file", &["data", "validate", "{dir}/f.json"]).fifo("f.json"),
        Case::err("a FIFO named .parquet", 1, "f.parquet: empty file", &["data", "validate", "{dir}/f.parquet"]).fifo("f.parquet"),
        Case::err("a FIFO imported", 1, "f.csv: empty file", &["data", "import", "{dir}/f.csv", "-o", "{dir}/x.csv"]).fifo("f.csv").no_file("x.csv"),
        Case::err("a FIFO inside a data directory", 1, "p.csv: is a pipe inside a data directory", &["data", "validate", "{dir}/d"]).with("d/r.csv", &two).fifo("d/p.csv"),
        Case::err("a FIFO inside an imported directory", 1, "p.json: is a pipe inside a data directory", &["data", "import", "{dir}/d", "-o", "{dir}/x.csv"]).with("d/r.csv", &two).fifo("d/p.json").no_file("x.csv"),
        Case::err("a FIFO as the catalog", 1, "c.toml: empty file", &["--gpus", "{dir}/c.toml", "gpus", "list"]).fifo("c.toml"),
        Case::err("an empty catalog", 1, "c.toml: empty file", &["--gpus", "{dir}/c.toml", "gpus", "list"]).with("c.toml", "\n"),
        Case::err("a FIFO as the model file", 1, "m.json: not a gpucast model file", &["predict", "--runs", "{ref}", "--target", REF_TARGET, "--model", "{dir}/m.json"]).fifo("m.json"),
        Case::err("a FIFO as an experiment file", 1, "a.toml", &["reproduce", "--experiments", "{dir}/exps", "--out", "{dir}/out", "--no-plots", "--data", "{ref}"]).fifo("exps/a.toml").no_file("out"),
        Case::err("a FIFO as a workload file", 1, "w.toml", &["data", "import", "{dir}/c.json", "--workloads", "{dir}/w.toml", "-o", "{dir}/x.csv"]).with("c.json", CACHE_WITH_FAILURES).fifo("w.toml").no_file("x.csv"),
        Case::err("a FIFO as the study metrics", 1, "g.json", &["predict", "--runs", "{dir}/r.csv", "--target", "RTX 4090", "--model", "analytical-study", "--study-metrics", "{dir}/g.json"]).with("r.csv", &two).fifo("g.json"),
        Case::err("a character device as the runs file", 1, "/dev/null: is a character device, not a file", &["data", "validate", "/dev/null"]),
        Case::err("an endless device as the runs file", 1, "/dev/zero: is a character device, not a file", &["predict", "--runs", "/dev/zero", "--target", "RTX 4090"]),
        Case::err("an endless device as the catalog", 1, "/dev/zero: cannot read: is a character device", &["--gpus", "/dev/zero", "gpus", "list"]),
        Case::err("a directory as the model file", 1, "m.json", &["predict", "--runs", "{ref}", "--target", REF_TARGET, "--model", "{dir}/m.json"]).with("m.json/keep", "x"),
        Case::new("a link loop in a data directory", Stdout("2 rows in 1 file(s)"), &["data", "validate", "{dir}/d"]).with("d/r.csv", &two).link("d/loop", "{dir}/d"),
        Case::new("a dangling link in a data directory", Stdout("2 rows in 1 file(s)"), &["data", "validate", "{dir}/d"]).with("d/r.csv", &two).link("d/gone.csv", "{dir}/nowhere.csv"),
        Case::new("runs on standard input", Stdout("2 rows in 1 file(s)"), &["data", "validate", "/dev/stdin"]).stdin(&two),
        Case::new("a cache on standard input", Stdout("1 rows in 1 file(s)"), &["data", "validate", "/dev/stdin"]).stdin(CACHE_WITH_FAILURES),
        Case::new("predict from standard input", Stdout("saxpy"), &["predict", "--runs", "/dev/stdin", "--target", "RTX 4090"]).stdin(&two),
        Case::new("import from standard input", Stderr("wrote 2 rows"), &["data", "import", "/dev/stdin", "-o", "{dir}/x.csv"]).stdin(&two).file_has("x.csv", "saxpy"),
        Case::err("a link loop as the runs file", 1, "l1: a symbolic link that leads to no file (a loop, or a missing target)", &["data", "validate", "{dir}/l1"]).link("l1", "{dir}/l2").link("l2", "{dir}/l1"),
        Case::err("a dangling link imported", 1, "l.csv: a symbolic link that leads to no file", &["data", "import", "{dir}/l.csv", "-o", "{dir}/x.csv"]).link("l.csv", "{dir}/gone.csv").no_file("x.csv"),
        Case::err("a file name with a line break", 1, "a\\nb.csv:2: column 'time_ms': expected a number, found 'x'", &["data", "validate", "{dir}/a\nb.csv"]).with("a\nb.csv", runs(&["NVIDIA TITAN V,saxpy,N=1,x,2048,12288"])),
        Case::err("a cell with a tab", 1, "column 'time_ms': expected a number, found '1\\t2'", &["data", "validate", "{dir}/a.csv"]).with("a.csv", runs(&["NVIDIA TITAN V,saxpy,N=1,\"1\t2\",2048,12288"])),
        Case::err("empty standard input", 1, "/dev/stdin: empty file", &["data", "validate", "/dev/stdin"]).stdin(""),
        // ---- what is wrong, said plainly ----
        Case::err("a zero-byte .json.gz", 1, "z.json.gz: empty file", &["data", "validate", "{dir}/z.json.gz"]).with("z.json.gz", ""),
        Case::err("a zero-byte .json", 1, "z.json: empty file", &["predict", "--runs", "{dir}/z.json", "--target", "RTX 4090"]).with("z.json", ""),
        Case::new("a cache with a byte-order mark", Stdout("1 rows in 1 file(s)"), &["data", "validate", "{dir}/c.json"]).with("c.json", format!("\u{feff}{CACHE_WITH_FAILURES}")),
        Case::err("a directory of profiler exports only", 1, "d: no runs files (CSV or Parquet with 'gpu', 'kernel' and 'time_ms' columns, or Kernel Tuner caches) in this directory: its 1 file(s) are 1 Nsight Compute export(s)", &["data", "validate", "{dir}/d"]).with("d/k.csv", fixture("ncu/rtx5090_kernel_0003.csv")),
        Case::err("a directory of other tables only", 1, "its 2 file(s) are 1 CSV file(s) without the 'gpu', 'kernel' and 'time_ms' columns, 1 JSON file(s) that are not Kernel Tuner caches", &["data", "validate", "{dir}/d"]).with("d/a.csv", "a,b\n1,2\n").with("d/b.json", "{}"),
        Case::err("an empty directory", 1, "d: no runs files", &["data", "validate", "{dir}/d"]).with("d/sub/.keep", "").link("d/x", "{dir}/nowhere"),
    ]
}

/// GPU names are matched, never guessed: in --target, runs tables, caches and profiles.
fn gpu_name_cases() -> Vec<Case> {
    use Expect::*;
    let two = runs(&[ROW_TITAN, ROW_2080]);
    let target = |name: &'static str, q: &'static str, code: i32, fragment: &'static str| {
        Case::err(
            name,
            code,
            fragment,
            &["predict", "--runs", "{dir}/r.csv", "--target", q],
        )
        .with("r.csv", runs(&[ROW_TITAN, ROW_2080]))
    };
    let resolves = |name: &'static str, q: &'static str, fragment: &'static str| {
        Case::new(
            name,
            Stdout(fragment),
            &["predict", "--runs", "{dir}/r.csv", "--target", q],
        )
        .with("r.csv", runs(&[ROW_TITAN, ROW_2080]))
    };
    let row = |gpu: &str| runs(&[&format!("{gpu},saxpy,N=1024,0.01,2048,12288")]);
    let cache_of = |gpu: &str| CACHE_WITH_FAILURES.replace("Tesla V100-PCIE-32GB", gpu);
    let gemm = String::from_utf8(fixture("gemm_table/a100_sxm_trtllm-1.0.0_n4096_k4096.csv"))
        .expect("utf-8 fixture");
    let gemm_of = |gpu: &str| gemm.replace("NVIDIA A100-SXM4-80GB", gpu);
    vec![
        // ---- --target: a name that resembles a GPU is not that GPU ----
        target("target resembling another board", "Quadro RTX 5000", 2, "unknown GPU 'Quadro RTX 5000'"),
        target("target of a board not in the catalog", "RTX 5000", 2, "unknown GPU 'RTX 5000'"),
        target("target shared by two boards", "RTX 6000", 2, "--target: unknown GPU 'RTX 6000': ambiguous: it matches 'NVIDIA Quadro RTX 6000', 'NVIDIA RTX 6000 Ada Generation'"),
        target("target of a bare model number, desktop or laptop", "4090", 2, "ambiguous: it matches 'NVIDIA GeForce RTX 4090', 'NVIDIA GeForce RTX 4090 Laptop GPU'"),
        target("target of a bare model number with variants", "2070", 2, "ambiguous"),
        target("target of a family", "A100", 2, "ambiguous"),
        target("target of a family with a brand", "Tesla V100", 2, "ambiguous"),
        target("target of a family with memory", "A100 80GB", 2, "ambiguous: it matches 'NVIDIA A100 PCIe 80GB', 'NVIDIA A100 SXM4 80GB'"),
        target("target of a TITAN", "TITAN", 2, "ambiguous"),
        target("target of a word short", "3060 laptop", 2, "unknown GPU '3060 laptop'"),
        target("target with an extra word", "RTX 4090 Ti", 2, "unknown GPU 'RTX 4090 Ti'"),
        target("target one digit off", "RTX 4075", 2, "close names: 'NVIDIA GeForce RTX 4070'"),
        target("target of a vendor the catalog lacks", "Intel Arc A770", 2, "unknown GPU 'Intel Arc A770'"),
        target("target of a partition of an ambiguous name", "H100 [16 SMs]", 2, "ambiguous"),
        target("target of a partition of an unknown GPU", "Quadro RTX 5000 [16 SMs]", 2, "unknown GPU 'Quadro RTX 5000'"),
        resolves("target by its short name", "rtx 4090", "on NVIDIA GeForce RTX 4090"),
        resolves("target with punctuation", "geforce_rtx-4070", "on NVIDIA GeForce RTX 4070"),
        resolves("target by its driver name", "NVIDIA H100 80GB HBM3", "on NVIDIA H100 SXM5 80GB"),
        resolves("target by an alias", "H200", "on NVIDIA H200 SXM 141GB"),
        resolves("target by a Quadro name", "Quadro RTX 6000", "on NVIDIA Quadro RTX 6000"),
        resolves("target by a longer name", "RTX 6000 Ada", "on NVIDIA RTX 6000 Ada Generation"),
        resolves("target by a cache's device name", "Tesla V100-PCIE-32GB", "on NVIDIA Tesla V100 PCIe 32GB"),
        Case::new("target added by --gpus", Stdout("on Quadro RTX 5000"), &["--gpus", "{dir}/c.toml", "predict", "--runs", "{dir}/r.csv", "--target", "Quadro RTX 5000"])
            .with("r.csv", &two).with("c.toml", gpu_entry("Quadro RTX 5000", "7.5", "48", "448.0")),
        // ---- other arguments naming GPUs ----
        Case::err("--source resembling a GPU", 2, "2080", &["predict", "--runs", "{dir}/r.csv", "--target", "RTX 4090", "--source", "2080"]).with("r.csv", &two),
        Case::err("explain --target shared by two boards", 2, "ambiguous", &["explain", "--runs", "{dir}/r.csv", "--row", "1", "--target", "RTX 6000"]).with("r.csv", &two),
        Case::err("tune --target resembling another board", 2, "unknown GPU 'Quadro RTX 5000'", &["tune", "--runs", "{dir}/r.csv", "--target", "Quadro RTX 5000"]).with("r.csv", &two),
        Case::err("gpus show resembling another board", 2, "unknown GPU 'Quadro RTX 5000'", &["gpus", "show", "Quadro RTX 5000"]),
        Case::err("gpus show shared by two boards", 2, "ambiguous", &["gpus", "show", "RTX 6000"]),
        Case::err("data validate --gpu resembling another board", 2, "Quadro RTX 5000", &["data", "validate", "{dir}/r.csv", "--gpu", "Quadro RTX 5000"]).with("r.csv", &two),
        Case::err("Nsight Compute --gpu resembling another board", 2, "Quadro RTX 5000", &["data", "import", "--from", "ncu", "--gpu", "Quadro RTX 5000", "{fx}/ncu/rtx5090_kernel_0003.csv", "-o", "{dir}/o.csv"]).no_file("o.csv"),
        Case::err("Nsight Compute --gpu shared by two boards", 2, "RTX 6000", &["data", "import", "--from", "ncu", "--gpu", "RTX 6000", "{fx}/ncu/rtx5090_kernel_0003.csv", "-o", "{dir}/o.csv"]).no_file("o.csv"),
        // ---- GPU names inside files ----
        validate("runs table GPU resembling another board", row("Quadro RTX 5000"), Error(1, "a.csv:2: column 'gpu': unknown GPU 'Quadro RTX 5000': not in the catalog")),
        validate("runs table GPU shared by two boards", row("RTX 6000"), Error(1, "a.csv:2: column 'gpu': unknown GPU 'RTX 6000': ambiguous")),
        validate("runs table GPU of a bare number", row("4090"), Error(1, "a.csv:2: column 'gpu': unknown GPU '4090': ambiguous")),
        validate("runs table GPU of a family", row("Tesla V100"), Error(1, "a.csv:2: column 'gpu': unknown GPU 'Tesla V100': ambiguous")),
        validate("runs table GPU on a later line", runs(&[ROW_TITAN, "RTX 5000,saxpy,N=1,0.01,2048,12288"]), Error(1, "a.csv:3: column 'gpu': unknown GPU 'RTX 5000'")),
        Case::err("cache device resembling another board", 1, "c.json: line 1, column 2: 'device_name': unknown GPU 'Quadro RTX 5000'", &["data", "validate", "{dir}/c.json"]).with("c.json", cache_of("Quadro RTX 5000")),
        Case::err("cache device shared by two boards", 1, "'device_name': unknown GPU 'RTX 6000': ambiguous", &["data", "validate", "{dir}/c.json"]).with("c.json", cache_of("RTX 6000")),
        Case::err("cache device of a family", 1, "'device_name': unknown GPU 'A100': ambiguous", &["predict", "--runs", "{dir}/c.json", "--target", "RTX 4090"]).with("c.json", cache_of("A100")),
        Case::new("cache device by its driver name", Stdout("1 rows in 1 file(s)"), &["data", "validate", "{dir}/c.json"]).with("c.json", cache_of("NVIDIA RTX A5000")),
        Case::err("GEMM table device of a family", 1, "column 'device': unknown GPU 'NVIDIA A100': ambiguous", &["data", "validate", "{dir}/g.csv"]).with("g.csv", gemm_of("NVIDIA A100")),
        Case::err("GEMM table device resembling another board", 1, "column 'device': unknown GPU 'Quadro RTX 5000'", &["data", "validate", "{dir}/g.csv"]).with("g.csv", gemm_of("Quadro RTX 5000")),
        Case::err("study metrics of an ambiguous GPU", 1, "g.json: line 2, column 3: unknown GPU 'TITAN': ambiguous", &["predict", "--runs", "{dir}/r.csv", "--target", "RTX 4090", "--model", "analytical-study", "--study-metrics", "{dir}/g.json"])
            .with("r.csv", &two).with("g.json", STUDY_METRICS.replace("NVIDIA TITAN V", "TITAN")),
    ]
}

/// SYNTHETIC saxpy rows on `gpu` (peak bandwidth `bw_gbs`): `n` sizes from 2^22
/// elements up (12 bytes per element, 0.08 to 10 ms of roofline time on a TITAN V),
/// each `ratio` x its roofline time, the time then multiplied by `unit` (1e3 writes
/// microseconds into `time_ms`).
fn saxpy_rows(gpu: &str, bw_gbs: f64, n: usize, ratio: f64, unit: f64) -> Vec<String> {
    (0..n)
        .map(|k| {
            let elems = (1u64 << 22) << (k % 8) | (k / 8) as u64;
            let bytes = 12 * elems;
            let roof_ms = bytes as f64 / (bw_gbs * 1e9) * 1e3;
            format!(
                "{gpu},saxpy,N={elems},{},{},{bytes}",
                roof_ms * ratio * unit,
                2 * elems
            )
        })
        .collect()
}

/// [`runs`] of owned rows.
fn runs_of(rows: &[String]) -> String {
    runs(&rows.iter().map(String::as_str).collect::<Vec<_>>())
}

/// A one-entry Kernel Tuner cache (SYNTHETIC) of the convolution whose entry repeats
/// its parameters as fields: `fields` replaces the entry's parameter fields.
fn cache_entry(key: &str, fields: &str) -> String {
    format!(
        "{{\"device_name\": \"Tesla V100-PCIE-32GB\", \"kernel_name\": \"convolution_kernel\",\n \"tune_params_keys\": [\"filter_width\", \"filter_height\", \"block_size_x\", \"block_size_y\", \"tile_size_x\", \"tile_size_y\", \"use_padding\", \"read_only\"],\n \"cache\": {{\"{key}\": {{{fields}, \"time\": 2.0}}}}}}\n"
    )
}

/// The parameter fields of key 15,15,32,8,2,1,0,0 with `name` set to `value`.
fn conv_fields(name: &str, value: &str) -> String {
    let mut f = [
        ("filter_width", "15"),
        ("filter_height", "15"),
        ("block_size_x", "32"),
        ("block_size_y", "8"),
        ("tile_size_x", "2"),
        ("tile_size_y", "1"),
        ("use_padding", "0"),
        ("read_only", "0"),
    ];
    for p in f.iter_mut() {
        if p.0 == name {
            p.1 = value;
        }
    }
    f.iter()
        .map(|(k, v)| format!("\"{k}\": {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A Kernel Tuner cache (SYNTHETIC) of an unknown kernel with one parameter `n` and
/// the given cache body (work from its GB/s).
fn one_param_cache(body: &str) -> String {
    format!(
        "{{\"device_name\": \"Tesla V100-PCIE-32GB\", \"kernel_name\": \"k\", \"tune_params_keys\": [\"n\"],\n \"cache\": {{{body}}}}}\n"
    )
}

/// A saved hybrid model (SYNTHETIC) whose residual is a `kind` regressor fitted on
/// made-up pairs, its fitted form edited by `edit` (the regressor's own object).
fn model_with_residual(kind: &str, edit: impl FnOnce(&mut serde_json::Value)) -> String {
    use gpucast::models::regressors::{make, RegressorKind};
    let width = gpucast::features::vectors::PAIR_NAMES.len();
    let rows = 60;
    let x = ndarray::Array2::from_shape_fn((rows, width), |(i, j)| ((i * 7 + j * 3) % 11) as f64);
    let y = ndarray::Array1::from_shape_fn(rows, |i| 0.05 * x[[i, 0]] - 0.25 + 0.01 * x[[i, 1]]);
    let k = RegressorKind::parse(kind).expect("a regressor");
    let fitted = make(k, 1).fit(&x, &y).expect("fit");
    let mut r = serde_json::to_value(&fitted).expect("serialize");
    edit(&mut r[kind]);
    model_json(|v| {
        v["regressor"] = kind.into();
        v["residual"] = r;
        v["correction_share"] = 0.5.into();
        v["pairs"] = 60.into();
    })
}

/// The index of the first leaf among a serialized tree's `nodes`.
fn first_leaf(nodes: &serde_json::Value, is_leaf: impl Fn(&serde_json::Value) -> bool) -> usize {
    nodes
        .as_array()
        .expect("nodes")
        .iter()
        .position(is_leaf)
        .expect("a leaf")
}

/// An Nsight Compute raw-page CSV (every cell quoted) without the column `name`.
fn drop_ncu_column(csv: &[u8], name: &str) -> String {
    let text = String::from_utf8(csv.to_vec()).expect("utf-8 fixture");
    let rows: Vec<Vec<&str>> = text
        .lines()
        .map(|l| {
            let inner = l.strip_prefix('"').and_then(|l| l.strip_suffix('"'));
            inner.expect("quoted cells").split("\",\"").collect()
        })
        .collect();
    let at = rows[0].iter().position(|c| *c == name).expect("the column");
    rows.iter()
        .map(|r| {
            let kept: Vec<&str> = r
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != at)
                .map(|(_, c)| *c)
                .collect();
            format!("\"{}\"\n", kept.join("\",\""))
        })
        .collect()
}

/// Values that cannot be right: units, precisions, caches, profiles, catalogs, models.
fn plausibility_cases() -> Vec<Case> {
    use Expect::*;
    const TITAN_BW: f64 = 652.8;
    const RTX_BW: f64 = 616.0;
    let with_precision = |p: &str| format!("{HEADER},precision\n{ROW_TITAN},{p}\n");
    let ncu_import = |gpu: &'static str| -> Vec<&'static str> {
        vec![
            "data",
            "import",
            "--from",
            "ncu",
            "--gpu",
            gpu,
            "{fx}/ncu/rtx5090_kernel_0003.csv",
            "-o",
            "{dir}/o.csv",
        ]
    };
    let entry = |extra: &str| format!("{}{extra}", gpu_entry("Future", "8.6", "10", "100.0"));
    let with_arch = |arch: &str, cc: &str| {
        gpu_entry("Future", cc, "10", "100.0")
            .replace("arch = \"A\"", &format!("arch = \"{arch}\""))
    };
    let forest_leaf = |n: &serde_json::Value| first_leaf(n, |x| x["f"].as_u64() == Some(u64::MAX));
    let gbm_leaf = |n: &serde_json::Value| first_leaf(n, |x| x["is_leaf"] == true);
    let tree_leaf = |n: &serde_json::Value| first_leaf(n, |x| x["true_child"].is_null());
    let us_rows = saxpy_rows("NVIDIA TITAN V", TITAN_BW, 12, 1.3, 1e3);
    let ms_rows = saxpy_rows("NVIDIA TITAN V", TITAN_BW, 12, 1.3, 1.0);

    vec![
        // ---- precisions: a label with no peak is an error, not the fp32 peak ----
        validate("precision fp46", with_precision("fp46"), Error(1, "a.csv:2: column 'precision': unknown precision 'fp46' (known: fp64, fp32, tf32, fp16, bf16")),
        validate("precision float64", with_precision("float64"), Error(1, "a.csv:2: column 'precision': unknown precision 'float64'")),
        validate("precision int4", with_precision("int4"), Error(1, "a.csv:2: column 'precision': unknown precision 'int4'")),
        validate("precision tensor_fp46", with_precision("tensor_fp46"), Error(1, "a.csv:2: column 'precision': unknown precision 'tensor_fp46'")),
        validate("precision with a space", with_precision("fp 32"), Error(1, "a.csv:2: column 'precision': unknown precision 'fp 32'")),
        validate(
            "unknown precision on line 3",
            format!("{HEADER},precision\n{ROW_TITAN},fp32\n{ROW_2080},fp33\n"),
            Error(1, "a.csv:3: column 'precision': unknown precision 'fp33'"),
        ),
        validate("precision FP16 in capitals", with_precision("FP16"), Stdout("1 rows in 1 file(s)")),
        validate("precision fp8_e4m3", with_precision("fp8_e4m3"), Stdout("1 rows in 1 file(s)")),
        validate("precision tensor_tf32", with_precision("tensor_tf32"), Stdout("1 rows in 1 file(s)")),
        validate("precision unknown (an Nsight Compute import's)", with_precision("unknown"), Stdout("1 rows in 1 file(s)")),
        // ---- time units: a file's times that are microseconds, or seconds ----
        validate(
            "times in microseconds",
            runs_of(&us_rows),
            Error(1, "a.csv: column 'time_ms': times are a median 1300x the roofline time of their work on NVIDIA TITAN V (12 rows with at least 50 us of it): they look like microseconds, not milliseconds"),
        ),
        validate(
            "times in seconds",
            runs_of(&saxpy_rows("NVIDIA TITAN V", TITAN_BW, 12, 1.3, 1e-3)),
            Error(1, "a.csv: column 'time_ms': times are a median 1/769 of the roofline time of their work on NVIDIA TITAN V (12 rows with at least 50 us of it): they look like seconds, not milliseconds"),
        ),
        validate(
            "times in microseconds for one GPU of two",
            runs_of(&[ms_rows.clone(), saxpy_rows("NVIDIA GeForce RTX 2080 Ti", RTX_BW, 10, 2.0, 1e3)].concat()),
            Error(1, "a.csv: column 'time_ms': times are a median 2000x the roofline time of their work on NVIDIA GeForce RTX 2080 Ti (10 rows"),
        ),
        Case::err("times in microseconds in the second file", 1, "b.csv: column 'time_ms': times are a median 1300x", &["data", "validate", "{dir}/a.csv", "{dir}/b.csv"])
            .with("a.csv", runs_of(&ms_rows))
            .with("b.csv", runs_of(&saxpy_rows("NVIDIA TITAN V", TITAN_BW, 12, 1.3, 1e3).iter().map(|r| r.replace("saxpy", "saxpy_b")).collect::<Vec<_>>())),
        Case::err("times in microseconds, imported with --validate", 1, "a.csv: column 'time_ms': times are a median 1300x", &["data", "import", "--validate", "{dir}/a.csv", "-o", "{dir}/x.csv"])
            .with("a.csv", runs_of(&us_rows))
            .no_file("x.csv"),
        Case::err("times in microseconds, predicted from", 1, "a.csv: column 'time_ms': times are a median 1300x", &["predict", "--runs", "{dir}/a.csv", "--target", "RTX 2080 Ti"])
            .with("a.csv", runs_of(&us_rows)),
        validate(
            "microseconds among small kernels",
            runs_of(&[us_rows.clone(), (0..20).map(|k| format!("NVIDIA TITAN V,tiny,N={},0.005,{},{}", 1024 + k, 2 * (1024 + k), 12 * (1024 + k))).collect()].concat()),
            Error(1, "look like microseconds, not milliseconds"),
        ),
        validate("milliseconds near the roofline", runs_of(&ms_rows), Stdout("12 rows in 1 file(s)")),
        validate(
            "small kernels on the launch floor, 100-1000x their roofline",
            runs_of(&(0..20).map(|k| format!("NVIDIA TITAN V,tiny,N={},0.005,{},{}", 1024 * (k + 1), 2 * 1024 * (k + 1), 12 * 1024 * (k + 1))).collect::<Vec<_>>()),
            Stdout("20 rows in 1 file(s)"),
        ),
        validate("slow but plausible: 100x the roofline", runs_of(&saxpy_rows("NVIDIA TITAN V", TITAN_BW, 12, 100.0, 1.0)), Stdout("12 rows in 1 file(s)")),
        validate("too few rows to judge a unit", runs_of(&saxpy_rows("NVIDIA TITAN V", TITAN_BW, 7, 1.3, 1e3)), Stdout("7 rows in 1 file(s)")),
        // ---- Kernel Tuner caches: key against entry, repeated keys ----
        Case::err(
            "cache key disagrees with its entry",
            1,
            "c.json: line 3, column 12: cache entry '15,15,32,8,2,1,0,0': the key says block_size_x=32 (field 3 of the key) but the entry's 'block_size_x' is 64",
            &["data", "validate", "{dir}/c.json"],
        )
        .with("c.json", cache_entry("15,15,32,8,2,1,0,0", &conv_fields("block_size_x", "64"))),
        Case::err("cache entry value as written", 1, "the key says tile_size_x=2 (field 5 of the key) but the entry's 'tile_size_x' is 2.50", &["data", "validate", "{dir}/c.json"])
            .with("c.json", cache_entry("15,15,32,8,2,1,0,0", &conv_fields("tile_size_x", "2.50"))),
        Case::err("cache entry with a text value", 1, "the key says read_only=0 (field 8 of the key) but the entry's 'read_only' is \"yes\"", &["data", "validate", "{dir}/c.json"])
            .with("c.json", cache_entry("15,15,32,8,2,1,0,0", &conv_fields("read_only", "\"yes\""))),
        Case::err("cache key disagrees, imported", 1, "cache entry '15,15,32,8,2,1,0,0': the key says filter_width=15", &["data", "import", "{dir}/c.json", "-o", "{dir}/x.csv"])
            .with("c.json", cache_entry("15,15,32,8,2,1,0,0", &conv_fields("filter_width", "7")))
            .no_file("x.csv"),
        Case::err(
            "cache key and entry beyond 2^53",
            1,
            "the key says n=9007199254740993 (field 1 of the key) but the entry's 'n' is 9007199254740992",
            &["data", "validate", "{dir}/c.json"],
        )
        .with("c.json", one_param_cache("\"9007199254740993\": {\"n\": 9007199254740992, \"time\": 1.0, \"GB/s\": 10}")),
        Case::new("cache entry repeating its key", Stdout("1 rows in 1 file(s)"), &["data", "validate", "{dir}/c.json"])
            .with("c.json", cache_entry("15,15,32,8,2,1,0,0", &conv_fields("tile_size_x", "2.0"))),
        Case::new("cache configurations beyond 2^53 stay apart", Stdout("2 rows in 1 file(s)"), &["data", "validate", "{dir}/c.json"])
            .with("c.json", one_param_cache("\"9007199254740993\": {\"time\": 1.0, \"GB/s\": 10}, \"9007199254740992\": {\"time\": 1.0, \"GB/s\": 10}")),
        Case::err("cache configuration twice", 1, "c.json: line 5, column 12: key \"15,15,32,8,2,1,0,0\" appears twice in one object (first at line 3, column 12)", &["data", "validate", "{dir}/c.json"])
            .with("c.json", CACHE_WITH_FAILURES.replace("\"15,15,32,8,4,1,0,0\": {\"time\": -1.0}", "\"15,15,32,8,2,1,0,0\": {\"time\": 3.0}")),
        Case::err("cache configuration beyond 2^53 twice", 1, "key \"9007199254740993\" appears twice in one object", &["data", "validate", "{dir}/c.json"])
            .with("c.json", one_param_cache("\"9007199254740993\": {\"time\": 1.0, \"GB/s\": 10}, \"9007199254740993\": {\"time\": 2.0, \"GB/s\": 10}")),
        Case::err("cache entry with its time twice", 1, "c.json: line 3, column 48: key \"time\" appears twice in one object (first at line 3, column 35)", &["data", "validate", "{dir}/c.json"])
            .with("c.json", CACHE_WITH_FAILURES.replace("{\"time\": 2.0}", "{\"time\": 2.0, \"time\": 0.5}")),
        Case::err("cache with device_name twice", 1, "c.json: line 1, column 41: key \"device_name\" appears twice in one object (first at line 1, column 2)", &["data", "validate", "{dir}/c.json"])
            .with("c.json", CACHE_WITH_FAILURES.replacen("\"kernel_name\"", "\"device_name\": \"Tesla V100-PCIE-32GB\", \"kernel_name\"", 1)),
        Case::err("cache key repeated by an escape", 1, "key \"\\u0074ime\" appears twice in one object", &["data", "validate", "{dir}/c.json"])
            .with("c.json", CACHE_WITH_FAILURES.replace("{\"time\": 2.0}", "{\"time\": 2.0, \"\\u0074ime\": 0.5}")),
        Case::err("cache configuration twice, imported", 1, "appears twice in one object", &["data", "import", "{dir}/c.json", "-o", "{dir}/x.csv"])
            .with("c.json", CACHE_WITH_FAILURES.replace("\"15,15,32,8,4,1,0,0\": {\"time\": -1.0}", "\"15,15,32,8,2,1,0,0\": {\"time\": 3.0}"))
            .no_file("x.csv"),
        Case::new("one key in many objects", Stdout("1 rows in 1 file(s)"), &["data", "validate", "{dir}/c.json"])
            .with("c.json", CACHE_WITH_FAILURES.replace("{\"time\": 2.0}", "{\"time\": 2.0, \"meta\": {\"time\": 1, \"x\": [{\"time\": 1}, {\"time\": 2}]}}")),
        // ---- Nsight Compute: the export's compute capability against --gpu ----
        Case::err("ncu export of compute capability 12.0 as a TITAN V", 1, "rtx5090_kernel_0003.csv: line 2: the export's compute capability is 12.0, but --gpu 'TITAN V' is NVIDIA TITAN V of compute capability 7.0", &ncu_import("TITAN V")).no_file("o.csv"),
        Case::err("ncu export as an H100", 1, "the export's compute capability is 12.0, but --gpu 'H100 SXM5 80GB' is NVIDIA H100 SXM5 80GB of compute capability 9.0", &ncu_import("H100 SXM5 80GB")),
        Case::err("ncu export as an A100", 1, "but --gpu 'A100 SXM4 80GB' is NVIDIA A100 SXM4 80GB of compute capability 8.0 (the catalog's GPUs of compute capability 12.0: ", &ncu_import("A100 SXM4 80GB")),
        Case::err("ncu export as a Blackwell of another compute capability", 1, "of compute capability 10.0", &ncu_import("B200")),
        Case::new("ncu export as its own GPU", Stderr("o.csv"), &ncu_import("RTX 5090")).changes("o.csv"),
        Case::new("ncu export as another GPU of its compute capability", Stderr("o.csv"), &ncu_import("RTX 5080")).changes("o.csv"),
        Case::err("raw ncu export of compute capability 6.1 as an RTX 2080 Ti", 1, "n.csv: line 3: the export's compute capability is 6.1, but --gpu 'RTX 2080 Ti' is NVIDIA GeForce RTX 2080 Ti of compute capability 7.5", &["data", "import", "--from", "ncu", "--gpu", "RTX 2080 Ti", "{dir}/n.csv", "-o", "{dir}/o.csv"])
            .with("n.csv", drop_ncu_column(&fixture("ncu/gtx1080_vectoradd_legacy_names.csv"), "device__attribute_display_name"))
            .no_file("o.csv"),
        Case::new("raw ncu export as its own GPU", Stderr("o.csv"), &["data", "import", "--from", "ncu", "--gpu", "GTX 1080", "{dir}/n.csv", "-o", "{dir}/o.csv"])
            .with("n.csv", drop_ncu_column(&fixture("ncu/gtx1080_vectoradd_legacy_names.csv"), "device__attribute_display_name"))
            .changes("o.csv"),
        // ---- catalog figures outside physical ranges ----
        catalog("FP32 rate inf", gpu_entry("Future", "8.6", "10", "100.0").replace("fp32_gflops = 1000.0", "fp32_gflops = inf"), 1, "c.toml:8:1: [[gpu]] #1 'Future': fp32_gflops must be a positive number, got inf"),
        catalog("sustained FP32 NaN", entry("sustained_fp32_gflops = nan\n"), 1, "sustained_fp32_gflops must be a positive number, got NaN"),
        catalog("bandwidth 1e308", gpu_entry("Future", "8.6", "10", "1e308"), 1, "c.toml:9:1: [[gpu]] #1 'Future': mem_bandwidth_gbs 1e308 is outside 1..100000 GB/s"),
        catalog("bandwidth 1e-300", gpu_entry("Future", "8.6", "10", "1e-300"), 1, "c.toml:9:1: [[gpu]] #1 'Future': mem_bandwidth_gbs 1e-300 is outside 1..100000 GB/s"),
        catalog("bandwidth in TB/s", gpu_entry("Future", "8.6", "10", "0.9"), 1, "mem_bandwidth_gbs 0.9 is outside 1..100000 GB/s"),
        catalog("bandwidth in B/s", gpu_entry("Future", "8.6", "10", "9e11"), 1, "mem_bandwidth_gbs 900000000000 is outside 1..100000 GB/s"),
        catalog("FP32 rate far above physical", gpu_entry("Future", "8.6", "10", "100.0").replace("fp32_gflops = 1000.0", "fp32_gflops = 1e12"), 1, "c.toml:8:1: [[gpu]] #1 'Future': fp32_gflops 1000000000000 is outside 1..10000000 GFLOP/s"),
        catalog("FP32 rate in TFLOP/s below 1", gpu_entry("Future", "8.6", "10", "100.0").replace("fp32_gflops = 1000.0", "fp32_gflops = 0.5"), 1, "fp32_gflops 0.5 is outside 1..10000000 GFLOP/s"),
        catalog("clock in Hz", gpu_entry("Future", "8.6", "10", "100.0").replace("boost_clock_mhz = 1000.0", "boost_clock_mhz = 1.5e9"), 1, "c.toml:7:1: [[gpu]] #1 'Future': boost_clock_mhz 1500000000 is outside 100..5000 MHz"),
        catalog("clock in GHz", gpu_entry("Future", "8.6", "10", "100.0").replace("boost_clock_mhz = 1000.0", "boost_clock_mhz = 1.5"), 1, "boost_clock_mhz 1.5 is outside 100..5000 MHz"),
        catalog("5000 SMs", gpu_entry("Future", "8.6", "5000", "100.0"), 1, "c.toml:6:1: [[gpu]] #1 'Future': sm_count 5000 is outside 1..1024 SMs"),
        catalog("L2 of 100 bytes", gpu_entry("Future", "8.6", "10", "100.0").replace("l2_bytes = 1048576", "l2_bytes = 100"), 1, "c.toml:10:1: [[gpu]] #1 'Future': l2_bytes 100 is outside 1024..1073741824 bytes"),
        catalog("L2 of a terabyte", gpu_entry("Future", "8.6", "10", "100.0").replace("l2_bytes = 1048576", "l2_bytes = 1000000000000"), 1, "l2_bytes 1000000000000 is outside 1024..1073741824 bytes"),
        catalog("FP64 rate 1e20", entry("fp64_gflops = 1e20\n"), 1, "c.toml:16:1: [[gpu]] #1 'Future': fp64_gflops 1e20 is outside 1..10000000 GFLOP/s"),
        catalog("tensor FP16 rate 1e10", entry("tensor_fp16_gflops = 1e10\n"), 1, "tensor_fp16_gflops 10000000000 is outside 1..100000000 GFLOP/s"),
        catalog("tensor INT8 rate 1e-3", entry("tensor_int8_gops = 1e-3\n"), 1, "tensor_int8_gops 0.001 is outside 1..100000000 GOP/s"),
        catalog("memory of 1e7 GB", entry("mem_gb = 1e7\n"), 1, "mem_gb 10000000 is outside 0.1..100000 GB"),
        catalog("launch overhead 1e-9 us", entry("launch_overhead_us = 1e-9\n"), 1, "launch_overhead_us 1e-9 is outside 0.1..10000 us"),
        catalog("L2 bandwidth 1e300", entry("l2_bandwidth_gbs = 1e300\n"), 1, "l2_bandwidth_gbs 1e300 is outside 1..1000000 GB/s"),
        catalog("sustained bandwidth 1e308", entry("sustained_bandwidth_gbs = 1e308\n"), 1, "c.toml:16:1: [[gpu]] #1 'Future': sustained_bandwidth_gbs 1e308 is outside 1..100000 GB/s"),
        catalog("sustained bandwidth above its peak", entry("sustained_bandwidth_gbs = 200.0\n"), 1, "c.toml:16:1: [[gpu]] #1 'Future': sustained_bandwidth_gbs 200 is above the peak mem_bandwidth_gbs 100: no measurement exceeds the peak"),
        catalog("sustained FP32 above its peak", entry("sustained_fp32_gflops = 2000.0\n"), 1, "c.toml:16:1: [[gpu]] #1 'Future': sustained_fp32_gflops 2000 is above the peak fp32_gflops 1000"),
        catalog("measured copy bandwidth above the peak", entry("measured.copy_bandwidth_gbs = 150.0\n"), 1, "[[gpu]] #1 'Future': measured.copy_bandwidth_gbs 150 is above the peak mem_bandwidth_gbs 100"),
        catalog("measured triad bandwidth above the peak", entry("measured.triad_bandwidth_gbs = 150.0\n"), 1, "measured.triad_bandwidth_gbs 150 is above the peak mem_bandwidth_gbs 100"),
        catalog("measured read bandwidth above the peak", entry("measured.read_bandwidth_gbs = 150.0\n"), 1, "measured.read_bandwidth_gbs 150 is above the peak mem_bandwidth_gbs 100"),
        catalog("measured write bandwidth above the peak", entry("measured.write_bandwidth_gbs = 150.0\n"), 1, "measured.write_bandwidth_gbs 150 is above the peak mem_bandwidth_gbs 100"),
        catalog("measured FP64 above its peak", entry("fp64_gflops = 500.0\nmeasured.sustained_fp64_gflops = 800.0\n"), 1, "measured.sustained_fp64_gflops 800 is above the fp64 peak 500"),
        catalog("measured tensor FP16 above its peak", entry("tensor_fp16_gflops = 8000.0\nmeasured.sustained_tensor_fp16_gflops = 9000.0\n"), 1, "measured.sustained_tensor_fp16_gflops 9000 is above the tensor_fp16 peak 8000"),
        catalog("measured SM clock above the boost clock", entry("measured.sm_clock_mhz = 2000.0\n"), 1, "measured.sm_clock_mhz 2000 is above the boost_clock_mhz 1000"),
        catalog("measured figure 1e300", entry("measured.atomic_distinct_gops = 1e300\n"), 1, "c.toml:16:10: [[gpu]] #1 'Future': measured.atomic_distinct_gops 1e300 is outside 0..1e8"),
        catalog("measured figure negative", entry("measured.atomic_distinct_gops = -4.0\n"), 1, "measured.atomic_distinct_gops -4 is outside 0..1e8"),
        catalog("sustained bandwidth over a known GPU's peak", "[[gpu]]\nname = \"NVIDIA TITAN V\"\nmeasured.copy_bandwidth_gbs = 5000.0\n", 1, "[[gpu]] #1 'NVIDIA TITAN V': measured.copy_bandwidth_gbs 5000 is above the peak mem_bandwidth_gbs 652.8"),
        catalog("Hopper of compute capability 8.6", with_arch("Hopper", "8.6"), 1, "c.toml:5:1: GPU 'Future': compute capability 8.6 is Ampere, not its arch 'Hopper' (compute capability 9.0)"),
        catalog("Volta of compute capability 8.9", with_arch("Volta", "8.9"), 1, "GPU 'Future': compute capability 8.9 is Ada Lovelace, not its arch 'Volta' (compute capability 7.0, 7.2)"),
        catalog("Blackwell of compute capability 9.0", with_arch("Blackwell", "9.0"), 1, "compute capability 9.0 is Hopper, not its arch 'Blackwell' (compute capability 10.0, 10.3, 12.0)"),
        catalog("a known GPU given another arch", "[[gpu]]\nname = \"NVIDIA TITAN V\"\narch = \"Turing\"\n", 1, "GPU 'NVIDIA TITAN V': compute capability 7.0 is Volta, not its arch 'Turing' (compute capability 7.5)"),
        Case::new("arch named in lower case", Stdout("Future"), &["--gpus", "{dir}/c.toml", "gpus", "list"]).with("c.toml", with_arch("ampere", "8.6")),
        Case::new("figures at the edges of their ranges", Stdout("Future"), &["--gpus", "{dir}/c.toml", "gpus", "list"])
            .with("c.toml", gpu_entry("Future", "8.6", "1024", "100000.0").replace("l2_bytes = 1048576", "l2_bytes = 1024").replace("boost_clock_mhz = 1000.0", "boost_clock_mhz = 5000.0")),
        Case::new("a shipped calibration file loads", Stdout("NVIDIA H200"), &["--gpus", "{fx}/../../datasets/own/h200/calibration.toml", "gpus", "list"]),
        // ---- saved model files: the residual's trees are walkable, its leaves sane ----
        model_file("forest child pointing back", model_with_residual("forest", |m| m["trees"][0]["nodes"][0]["l"] = 0.into()), "m.json: residual forest: tree 0 node 0: child 0 is not a node after it (the tree has"),
        model_file("forest child past the end", model_with_residual("forest", |m| m["trees"][2]["nodes"][0]["r"] = 100000.into()), "m.json: residual forest: tree 2 node 0: child 100000 is not a node after it"),
        model_file("forest split on a feature it lacks", model_with_residual("forest", |m| m["trees"][1]["nodes"][0]["f"] = 999.into()), "m.json: residual forest: tree 1 node 0: splits on feature 999, but the model has"),
        model_file("forest leaf 1e300", model_with_residual("forest", |m| { let k = forest_leaf(&m["trees"][0]["nodes"]); m["trees"][0]["nodes"][k]["v"] = 1e300.into(); }), "m.json: residual forest: tree 0 node "),
        model_file("forest leaf 25", model_with_residual("forest", |m| { let k = forest_leaf(&m["trees"][3]["nodes"]); m["trees"][3]["nodes"][k]["v"] = (-25.0).into(); }), "leaf value -25 is outside +-20"),
        model_file("forest tree without nodes", model_with_residual("forest", |m| m["trees"][4]["nodes"] = serde_json::json!([])), "m.json: residual forest: tree 4 has no nodes"),
        model_file("forest without trees", model_with_residual("forest", |m| m["trees"] = serde_json::json!([])), "m.json: residual forest: no trees"),
        model_file("gbm child pointing back", model_with_residual("gbm", |m| m["booster"]["trees"][0]["nodes"][0]["left_child"] = 0.into()), "m.json: residual gbm: tree 0 node 0: child 0 is not a node after it"),
        model_file("gbm missing-value child past the end", model_with_residual("gbm", |m| m["booster"]["trees"][5]["nodes"][0]["missing_node"] = 77777.into()), "m.json: residual gbm: tree 5 node 0: child 77777 is not a node after it"),
        model_file("gbm split on a feature it lacks", model_with_residual("gbm", |m| m["booster"]["trees"][0]["nodes"][0]["split_feature"] = 4096.into()), "residual gbm: tree 0 node 0: splits on feature 4096"),
        model_file("gbm leaf 100", model_with_residual("gbm", |m| { let k = gbm_leaf(&m["booster"]["trees"][7]["nodes"]); m["booster"]["trees"][7]["nodes"][k]["weight_value"] = 100.0.into(); }), "leaf value 100 is outside +-20"),
        model_file("gbm tree without nodes", model_with_residual("gbm", |m| m["booster"]["trees"][3]["nodes"] = serde_json::json!([])), "m.json: residual gbm: tree 3 has no nodes"),
        model_file("gbm base score 1e300", model_with_residual("gbm", |m| m["booster"]["base_score"] = 1e300.into()), "m.json: residual gbm: base_score 1e300 is outside +-20"),
        model_file("tree child pointing back", model_with_residual("tree", |m| m["model"]["tree_regressor"]["nodes"][0]["false_child"] = 0.into()), "m.json: residual tree: tree 0 node 0: child 0 is not a node after it"),
        model_file("tree split on a feature it lacks", model_with_residual("tree", |m| m["model"]["tree_regressor"]["nodes"][0]["split_feature"] = 500.into()), "residual tree: tree 0 node 0: splits on feature 500"),
        model_file("tree leaf 1e300", model_with_residual("tree", |m| { let k = tree_leaf(&m["model"]["tree_regressor"]["nodes"]); m["model"]["tree_regressor"]["nodes"][k]["output"] = 1e300.into(); }), "leaf value 1e300 is outside +-20"),
        model_file("tree without nodes", model_with_residual("tree", |m| m["model"]["tree_regressor"]["nodes"] = serde_json::json!([])), "m.json: residual tree: tree 0 has no nodes"),
        model_file("tree split with one child", model_with_residual("tree", |m| m["model"]["tree_regressor"]["nodes"][0]["true_child"] = serde_json::Value::Null), "residual tree: tree 0 node 0: a split needs a feature and two children"),
        Case::new("a model with a forest residual predicts", Stdout("NVIDIA TITAN V"), &["predict", "--runs", "{ref}", "--target", REF_TARGET, "--model", "{dir}/m.json"])
            .with("m.json", model_with_residual("forest", |_| {})),
    ]
}

/// Hidden temporaries (`.tmp*`, `.NAME.tmp-*`) anywhere under `dir`.
fn hidden_temporaries(dir: &Path, found: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') && name.contains("tmp") {
            found.push(name);
        } else if e.file_type().is_ok_and(|t| t.is_dir()) {
            hidden_temporaries(&e.path(), found);
        }
    }
}

extern "C" {
    #[link_name = "mkfifo"]
    fn libc_mkfifo(path: *const std::ffi::c_char, mode: u32) -> i32;
}

/// What one run of the binary gave.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    timed_out: bool,
}

/// Run gpucast with a deadline (killed past it); the pipes are drained on threads so a
/// large output cannot block the child.
fn run(args: &[String], stdin: Option<&[u8]>) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpucast"))
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn gpucast");
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
        let bytes = bytes.to_vec();
        std::thread::spawn(move || {
            use std::io::Write;
            let _ = pipe.write_all(&bytes);
        });
    }
    let out = drain(Box::new(child.stdout.take().expect("stdout")));
    let err = drain(Box::new(child.stderr.take().expect("stderr")));
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > TIMEOUT {
            timed_out = true;
            let _ = child.kill();
            break child.wait().expect("wait after kill");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Run {
        code: status.code(),
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        timed_out,
    }
}

/// Run one case; the list of what went wrong (empty when it passed).
fn check(case: &Case, reference: &Path) -> Vec<String> {
    let dir = tempfile::tempdir().expect("tempdir");
    let fixtures: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let place = |a: &str| {
        a.replace("{dir}", &dir.path().display().to_string())
            .replace("{ref}", &reference.display().to_string())
            .replace("{fx}", &fixtures.display().to_string())
    };
    // (a text file may name the places too: an experiment's data)
    let files: Vec<(String, Vec<u8>)> = case
        .files
        .iter()
        .map(|(n, c)| match std::str::from_utf8(c) {
            Ok(t) if t.contains('{') => (n.clone(), place(t).into_bytes()),
            _ => (n.clone(), c.clone()),
        })
        .collect();
    for (name, content) in &files {
        let p = dir.path().join(name);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, content).expect("write");
    }
    for (name, what) in &case.specials {
        let p = dir.path().join(name);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        match what {
            Special::Fifo => {
                let c = std::ffi::CString::new(p.display().to_string()).expect("path");
                // SAFETY: mkfifo reads a NUL-terminated path and touches nothing else.
                assert_eq!(unsafe { libc_mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
            }
            Special::Link(target) => {
                let t = target.replace("{dir}", &dir.path().display().to_string());
                std::os::unix::fs::symlink(t, &p).expect("symlink");
            }
            Special::Hard(target) => {
                std::fs::hard_link(dir.path().join(target), &p).expect("hard link");
            }
        }
    }
    let args: Vec<String> = case.args.iter().map(|a| place(a)).collect();
    let before: Vec<(String, Vec<u8>)> = files
        .iter()
        .filter(|(n, _)| !case.may_change.contains(&n.as_str()))
        .cloned()
        .collect();
    let r = run(&args, case.stdin.as_deref());
    let mut bad = Vec::new();
    for (name, content) in &before {
        match std::fs::read(dir.path().join(name)) {
            Ok(now) if &now == content => {}
            Ok(_) => bad.push(format!("{name} changed")),
            Err(e) => bad.push(format!("{name} is gone: {e}")),
        }
    }
    if r.timed_out {
        bad.push(format!("did not finish within {TIMEOUT:?}"));
    }
    if r.stderr.contains("panicked") {
        bad.push("panicked".into());
    }
    let has = |text: &str, fragment: &str| text.to_lowercase().contains(&fragment.to_lowercase());
    match case.expect {
        Expect::Error(code, fragment) => {
            if r.code != Some(code) {
                bad.push(format!("exit code {:?}, expected {code}", r.code));
            }
            let lines: Vec<&str> = r.stderr.lines().collect();
            if lines.len() != 1 || !lines[0].starts_with("error: ") {
                bad.push(format!(
                    "stderr is not one line 'error: ...': {:?}",
                    r.stderr
                ));
            }
            if !has(&r.stderr, fragment) {
                bad.push(format!("stderr lacks {fragment:?}: {:?}", r.stderr));
            }
            if !r.stdout.is_empty() {
                bad.push(format!("printed before failing: {:?}", r.stdout));
            }
        }
        Expect::Stdout(fragment) | Expect::Stderr(fragment) => {
            if r.code != Some(0) {
                bad.push(format!(
                    "exit code {:?}, expected 0: {:?}",
                    r.code, r.stderr
                ));
            }
            let text = match case.expect {
                Expect::Stdout(_) => &r.stdout,
                _ => &r.stderr,
            };
            if !has(text, fragment) {
                bad.push(format!(
                    "output lacks {fragment:?}: stdout {:?}, stderr {:?}",
                    r.stdout, r.stderr
                ));
            }
        }
    }
    let mut left = Vec::new();
    hidden_temporaries(dir.path(), &mut left);
    if !left.is_empty() {
        bad.push(format!("left temporaries behind: {left:?}"));
    }
    if let Some((name, want)) = case.file {
        let p = dir.path().join(name);
        match (want, std::fs::read_to_string(&p)) {
            (None, Ok(_)) => bad.push(format!("{name} was written")),
            (Some(f), Ok(text)) if !text.contains(f) => bad.push(format!("{name} lacks {f:?}")),
            (Some(_), Err(e)) => bad.push(format!("{name} not readable: {e}")),
            _ => {}
        }
    }
    bad
}

#[test]
fn bad_inputs_fail_cleanly_and_odd_but_valid_inputs_pass() {
    let reference = common::reference_data();
    let cases: Vec<Case> = cases()
        .into_iter()
        .chain(file_safety_cases())
        .chain(gpu_name_cases())
        .chain(plausibility_cases())
        .chain(data_loss::cases())
        .chain(names_bounds::names_bounds_cases())
        .chain(new_importer_cases())
        .collect();
    assert!(cases.len() >= 250, "{} cases", cases.len());
    println!(
        "{} bad-input cases: {} earlier, {} file safety, {} GPU names, {} plausibility, {} names/bounds/bombs",
        cases.len(),
        self::cases().len(),
        file_safety_cases().len(),
        gpu_name_cases().len(),
        plausibility_cases().len(),
        names_bounds::names_bounds_cases().len()
    );
    let mut names = std::collections::HashSet::new();
    for c in &cases {
        assert!(names.insert(c.name), "two cases are named '{}'", c.name);
    }
    let mut failures = Vec::new();
    for case in &cases {
        let bad = check(case, &reference);
        if !bad.is_empty() {
            failures.push(format!("- {}: {}", case.name, bad.join("; ")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// A write stopped by SIGTERM or SIGINT leaves neither a temporary nor a partial output:
/// `data import` of the shipped GEMM tables (about a million rows, so its Parquet
/// temporary lives long enough to be seen) is signalled the moment its temporary
/// appears.
#[test]
fn an_interrupted_write_leaves_nothing_behind() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/public/aiconfigurator");
    for (signal, code) in [("TERM", 143), ("INT", 130)] {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = dir.path().join("all.parquet");
        let mut child = Command::new(env!("CARGO_BIN_EXE_gpucast"))
            .args(["data", "import"])
            .arg(&data)
            .arg("-o")
            .arg(&out)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn gpucast");
        let start = Instant::now();
        let mut signalled = false;
        while start.elapsed() < TIMEOUT && child.try_wait().expect("wait").is_none() {
            let mut temporaries = Vec::new();
            hidden_temporaries(dir.path(), &mut temporaries);
            if !temporaries.is_empty() {
                let kill = Command::new("kill")
                    .arg(format!("-{signal}"))
                    .arg(child.id().to_string())
                    .status()
                    .expect("kill");
                assert!(kill.success());
                signalled = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let status = child.wait().expect("wait");
        assert!(
            signalled,
            "SIG{signal}: never saw the temporary (exit {status:?})"
        );
        assert_eq!(status.code(), Some(code), "SIG{signal}");
        let mut left = Vec::new();
        hidden_temporaries(dir.path(), &mut left);
        assert!(left.is_empty(), "SIG{signal} left {left:?}");
        assert!(!out.exists(), "SIG{signal}: a partial output");
    }
}

/// A Parquet file damaged in its footer (each byte of the footer's metadata with one
/// bit flipped, as a bad disk or a cut download leaves it): every read ends in an exit
/// code and one line, never a panic (polars's reader panics on some of these), and
/// the damage is named where the reader fails.
#[test]
fn a_damaged_parquet_footer_is_an_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    std::fs::write(&csv, runs(&[ROW_TITAN, ROW_2080])).unwrap();
    let good = dir.path().join("good.parquet");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let made = run(
        &[
            "data".into(),
            "import".into(),
            s(&csv),
            "-o".into(),
            s(&good),
        ],
        None,
    );
    assert_eq!(made.code, Some(0), "{}", made.stderr);
    let bytes = std::fs::read(&good).unwrap();
    let n = bytes.len();
    assert_eq!(&bytes[n - 4..], b"PAR1");
    let footer = u32::from_le_bytes(bytes[n - 8..n - 4].try_into().unwrap()) as usize;
    let (mut panics, mut damaged) = (Vec::new(), 0);
    for at in n - 8 - footer..n - 8 {
        let mut bad = bytes.clone();
        bad[at] ^= 0x10;
        let path = dir.path().join("bad.parquet");
        std::fs::write(&path, &bad).unwrap();
        let r = run(&["data".into(), "validate".into(), s(&path)], None);
        let lines = r.stderr.lines().count();
        if r.timed_out
            || r.code == Some(101)
            || r.stderr.contains("panicked")
            || (r.code != Some(0) && lines != 1)
        {
            panics.push(format!("byte {at}: {:?} {}", r.code, r.stderr));
        }
        damaged += r
            .stderr
            .contains("bad.parquet: cannot read: the file is damaged") as usize;
    }
    assert!(
        panics.is_empty(),
        "{} of {footer} damaged footers: {}",
        panics.len(),
        panics.join("\n")
    );
    assert!(
        damaged > 0,
        "no flipped bit reached the reader's panic: the test no longer tests it"
    );
}

// Data loss (issue 62): the cases (chained into the table above) and the signal and
// file-size-limit tests are in bad_inputs/data_loss.rs.
#[path = "bad_inputs/data_loss.rs"]
mod data_loss;
// New importers (issue 65)

/// A SYNTHETIC one-kernel trace on a device of this name and SM count.
fn trace_on(device: &str, sms: u32) -> String {
    format!(
        r#"{{"deviceProperties": [{{"id": 0, "name": "{device}", "totalGlobalMem": 85045379072, "computeMajor": 9, "computeMinor": 0, "numSms": {sms}}}],
 "traceEvents": [{{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 5, "args": {{"device": 0, "stream": 7, "correlation": 1, "grid": [1, 1, 1], "block": [32, 1, 1]}}}}]}}"#
    )
}

/// A SYNTHETIC nvbench CSV of one state with these summary columns and cells.
fn nvbench_csv(summaries: &str, cells: &str) -> String {
    format!("Benchmark,Device,Device Name,N,Skipped,{summaries}\nk,0,NVIDIA H100 80GB HBM3,1024,No,{cells}\n")
}

fn new_importer_cases() -> Vec<Case> {
    use Expect::*;
    let import = |name: &'static str, file: &str, content: String, expect: Expect| {
        Case::new(
            name,
            expect,
            &[
                "data",
                "import",
                &format!("{{dir}}/{file}"),
                "-o",
                "{dir}/x.csv",
            ],
        )
        .with(file, content)
    };
    let deep = |open: &str| format!("{open}{}", "[".repeat(100_000));
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, trace_on("NVIDIA H100 80GB HBM3", 132).as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    let cut_gz = gz[..gz.len() / 2].to_vec();
    let trace = trace_on("NVIDIA H100 80GB HBM3", 132);
    vec![
        import("truncated trace", "t.json", trace[..trace.len() - 40].to_string(), Error(1, "t.json: line 2, column")).no_file("x.csv"),
        Case::err("truncated gzip'd trace", 1, "t.json.gz: ", &["data", "import", "{dir}/t.json.gz", "-o", "{dir}/x.csv"]).with("t.json.gz", cut_gz).no_file("x.csv"),
        import("trace nested to death", "t.json", deep(r#"{"traceEvents": [{"ph": "X", "cat": "kernel", "args": {"grid": "#), Error(1, "recursion limit exceeded")).no_file("x.csv"),
        import("nvbench JSON nested to death", "n.json", deep(r#"{"devices": [], "benchmarks": "#), Error(1, "n.json: line 1, column")).no_file("x.csv"),
        import("unknown JSON nested to death", "u.json", deep(""), Error(1, "u.json: line 1, column")).no_file("x.csv"),
        import("trace of a CPU-only run", "t.json", r#"{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 0, "dur": 5}]}"#.into(), Error(1, "no GPU kernels in 'traceEvents': 1 events, none a GPU kernel (a CPU-only run")).no_file("x.csv"),
        import("trace of an unknown GPU", "t.json", trace_on("NVIDIA Z9000", 999), Error(1, "unknown GPU 'NVIDIA Z9000': not a name of the catalog; no GPU of the catalog has its device properties (999 SMs")).no_file("x.csv"),
        Case::err("trace of a known GPU with another --gpu", 1, "the file names the GPU 'NVIDIA H100 80GB HBM3' but --gpu 'A100 SXM4 80GB' was given", &["data", "import", "{dir}/t.json", "--gpu", "A100 SXM4 80GB", "-o", "{dir}/x.csv"]).with("t.json", trace.clone()).no_file("x.csv"),
        Case::err("predict --trace of a trace without events", 1, "t.json: no GPU kernels in 'traceEvents': no events at all", &["predict", "--trace", "{dir}/t.json", "--target", "A100 SXM4 80GB"]).with("t.json", r#"{"traceEvents": []}"#),
        Case::err("predict --trace with --runs", 2, "cannot be used with", &["predict", "--trace", "{dir}/t.json", "--runs", "{dir}/t.json", "--target", "A100 SXM4 80GB"]).with("t.json", trace.clone()),
        import("nvbench with skipped states only", "n.csv", String::from_utf8(fixture("nvbench/skipped_only.csv")).unwrap(), Error(1, "n.csv: no runs: none of its 2 entries could be read as a run (skipped=2)")).no_file("x.csv"),
        import("nvbench time without its unit", "n.csv", nvbench_csv("GPU Time,GlobalMem BW (bytes/sec)", "0.5,1e9"), Error(1, "n.csv:1: column 'GPU Time': a time column without its unit")).no_file("x.csv"),
        import("nvbench times in milliseconds", "n.csv", nvbench_csv("GPU Time (ms),GlobalMem BW (bytes/sec)", "0.5,1000000000"), Stderr("wrote 1 rows")).file_has("x.csv", "N=1024,0.5,0.0,500000.0"),
        import("nvbench milliseconds written as seconds", "n.csv", nvbench_csv("GPU Time (sec),GlobalMem BW (bytes/sec)", "5000,1"), Error(1, "none of its 1 entry could be read as a run (absurd_time=1)")).no_file("x.csv"),
        import("nvbench time not a number", "n.csv", nvbench_csv("GPU Time (sec),GlobalMem BW (bytes/sec)", "fast,1"), Error(1, "n.csv:2: column 'GPU Time (sec)': expected a number, found 'fast'")).no_file("x.csv"),
        import("nvbench of an unknown GPU", "n.csv", nvbench_csv("GPU Time (sec),GlobalMem BW (bytes/sec)", "0.001,1e9").replace("NVIDIA H100 80GB HBM3", "NVIDIA Z9000"), Error(1, "n.csv:2: column 'Device Name': unknown GPU 'NVIDIA Z9000'")).no_file("x.csv"),
        import("nvbench JSON state of a device it does not list", "n.json", r#"{"devices": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}], "benchmarks": [{"name": "k", "states": [{"device": 3, "axis_values": [], "summaries": [], "is_skipped": false}]}]}"#.into(), Error(1, "benchmarks[0].states[0]: device 3 is not in the file's 'devices'")).no_file("x.csv"),
    ]
}
