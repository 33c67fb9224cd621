//! gpucast-bench: the project's CUDA benchmark suite, runner, calibration and
//! per-architecture static inspection. CUDA libraries are loaded at run time.
mod calibrate;
mod cuda;
mod device;
mod inspect;
mod manifest;
mod nvml;
mod nvrtc;
mod output;
mod provenance;
mod runner;
mod stats;
mod tools;
mod verify;

// The evaluator lives in the shared contract crate (gpucast uses it for workload
// formulas); `crate::expr` keeps naming it here.
use gpucast_runs::{expr, CORUN_COLUMNS};

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use manifest::{instances, parse_size_filter, size_filter_matches, Suite};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "gpucast-bench",
    version,
    about = "gpucast's CUDA benchmark suite: list, inspect (no GPU needed), run, calibrate, corun"
)]
struct Cli {
    /// Use this suite manifest (kernels/ beside it) instead of the embedded one
    #[arg(long, global = true, value_name = "FILE")]
    manifest: Option<PathBuf>,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum, PartialEq)]
enum Format {
    Csv,
    Json,
    Table,
}

#[derive(clap::Args, Clone)]
struct Select {
    /// Suites to include, comma-separated (reference-16, extended); default all
    #[arg(long, value_delimiter = ',')]
    suite: Vec<String>,
    /// Kernels to include, comma-separated; default all of the selected suites
    #[arg(long, value_delimiter = ',')]
    kernels: Vec<String>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Print one kernel per line: name, suite, category
    List {
        #[command(flatten)]
        sel: Select,
        /// Also print every configuration key with its FLOPs and DRAM bytes
        #[arg(long)]
        configs: bool,
    },
    /// Compile every kernel with NVRTC + ptxas for each architecture (no GPU needed):
    /// registers, static shared memory, spills, SASS instruction mix
    Inspect(InspectArgs),
    /// Measure the suite on the GPU present; one canonical-runs CSV row per configuration
    Run(RunArgs),
    /// Measure DRAM/L2/L1/shared bandwidth, FMA peaks, launch overhead, atomics; write the measured GPU-catalog fields (TOML)
    Calibrate {
        #[arg(long)]
        out: PathBuf,
        #[command(flatten)]
        timing: Timing,
    },
    /// Launch kernels concurrently on disjoint SM partitions (green contexts); report each kernel's time alone and together
    Corun(CorunArgs),
}

// Arguments of `inspect`.
#[derive(clap::Args)]
struct InspectArgs {
    /// Architectures, comma-separated
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "sm_52,sm_60,sm_70,sm_75,sm_80,sm_86,sm_89,sm_90"
    )]
    arch: Vec<String>,
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
    /// Write here instead of standard output
    #[arg(long)]
    out: Option<PathBuf>,
    /// Directory holding NVRTC/ptxas (a venv from scripts/install-cuda-tools.sh, a CUDA toolkit); also $GPUCAST_CUDA_TOOLS
    #[arg(long, value_name = "DIR")]
    cuda_tools: Option<PathBuf>,
    /// Parallel compile jobs (default: available cores)
    #[arg(long)]
    jobs: Option<usize>,
    #[command(flatten)]
    sel: Select,
}

// Arguments of `run`.
#[derive(clap::Args)]
struct RunArgs {
    #[command(flatten)]
    sel: Select,
    /// Size filter, e.g. N=262144:1048576,H=512 (a parameter applies to kernels that have it)
    #[arg(long)]
    sizes: Option<String>,
    /// Output CSV (rows appended one complete line at a time)
    #[arg(long)]
    out: PathBuf,
    /// Skip (gpu, kernel, config, sm_count) already in --out with status ok
    #[arg(long)]
    resume: bool,
    /// Restrict kernels to N SMs (CUDA green contexts, driver 12.4+)
    #[arg(long)]
    sm_count: Option<u32>,
    #[command(flatten)]
    timing: Timing,
    /// Skip output verification against the CPU references
    #[arg(long)]
    no_verify: bool,
    /// Do not draw a progress bar
    #[arg(long)]
    no_progress: bool,
}

// Arguments of `corun`.
#[derive(clap::Args)]
struct CorunArgs {
    /// Kernels to co-run (2 or more), comma-separated; each at its largest working set (the one that interferes most in memory) unless --sizes narrows the choice
    #[arg(long, value_delimiter = ',', required = true)]
    kernels: Vec<String>,
    /// Size filter applied to each kernel (the largest matching configuration is used)
    #[arg(long)]
    sizes: Option<String>,
    /// SMs per partition
    #[arg(long)]
    sm_count: u32,
    /// Each kernel's stream of back-to-back launches lasts about this long alone (at least as long as the slowest single launch), so the co-run streams overlap for their whole length
    #[arg(long, default_value_t = 20.0)]
    target_ms: f64,
    /// Append to --out and skip the run when it already holds this set of kernels
    #[arg(long)]
    resume: bool,
    #[arg(long, default_value_t = 0)]
    device: i32,
    #[arg(long, value_name = "DIR")]
    cuda_tools: Option<PathBuf>,
    #[arg(long, default_value_t = 60.0)]
    timeout_s: f64,
    /// Output CSV (one line per kernel)
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(clap::Args, Clone)]
struct Timing {
    /// Timing trials per configuration (>= 10 recommended)
    #[arg(long, default_value_t = 10)]
    trials: u32,
    /// Warm-up launches before timing
    #[arg(long, default_value_t = 3)]
    warmup: u32,
    /// Minimum duration of one trial, ms (sets launches per trial)
    #[arg(long, default_value_t = 1.0)]
    min_trial_ms: f64,
    /// Give up on a configuration after this many seconds (hang watchdog)
    #[arg(long, default_value_t = 60.0)]
    timeout_s: f64,
    /// CUDA device ordinal
    #[arg(long, default_value_t = 0)]
    device: i32,
    /// Directory holding NVRTC (libnvrtc.so.12); also $GPUCAST_CUDA_TOOLS
    #[arg(long, value_name = "DIR")]
    cuda_tools: Option<PathBuf>,
}

impl Timing {
    fn options(&self) -> Result<runner::RunOptions> {
        let positive = |x: f64| x.is_finite() && x > 0.0;
        if self.trials == 0 || !positive(self.min_trial_ms) || !positive(self.timeout_s) {
            bail!("--trials, --min-trial-ms and --timeout-s must be positive");
        }
        Ok(runner::RunOptions {
            trials: self.trials,
            warmup: self.warmup,
            target_trial_ms: self.min_trial_ms,
            timeout: Duration::from_secs_f64(self.timeout_s),
            ..Default::default()
        })
    }
}

fn load_suite(p: &Option<PathBuf>) -> Result<Suite> {
    match p {
        Some(p) => Suite::from_path(p),
        None => Suite::embedded(),
    }
}

fn real_main() -> Result<i32> {
    let cli = Cli::parse();
    let suite = load_suite(&cli.manifest)?;
    match cli.cmd {
        Cmd::List { sel, configs } => cmd_list(&suite, &sel, configs),
        Cmd::Inspect(args) => cmd_inspect(&suite, args),
        Cmd::Run(args) => cmd_run(&suite, args),
        Cmd::Calibrate { out, timing } => cmd_calibrate(&suite, &out, &timing),
        Cmd::Corun(args) => cmd_corun(&suite, args),
    }
}

/// `list`: print the selected kernels, with their configurations when `configs`.
fn cmd_list(suite: &Suite, sel: &Select, configs: bool) -> Result<i32> {
    use std::fmt::Write as _;
    let mut text = String::new();
    for k in suite.select(&sel.suite, &sel.kernels)? {
        writeln!(text, "{}\t{}\t{}", k.name, k.suite, k.category)?;
        if configs {
            writeln!(
                text,
                "\t# {} [{}, {}]{}",
                k.description,
                k.precision,
                k.source,
                if k.note.is_empty() {
                    String::new()
                } else {
                    format!(" note: {}", k.note)
                }
            )?;
            for i in instances(k)? {
                writeln!(
                    text,
                    "\t{}\tflops={}\tdram_bytes={}\tdram_bytes_model={}\tgrid={:?}\tblock={:?}\tsmem_dyn={}\talloc_bytes={}",
                    i.config,
                    i.flops,
                    i.dram_bytes,
                    i.dram_bytes_model,
                    i.grid,
                    i.block,
                    i.smem_dyn,
                    i.alloc_bytes()
                )?;
            }
        }
    }
    write_stdout(&text)?;
    Ok(0)
}

/// `inspect`: compile the selected kernels for each architecture, write the
/// resources found and report the failures; exit code 1 when any failed.
fn cmd_inspect(suite: &Suite, args: InspectArgs) -> Result<i32> {
    let InspectArgs {
        arch,
        format,
        out,
        cuda_tools,
        jobs,
        sel,
    } = args;
    let kernels = suite.select(&sel.suite, &sel.kernels)?;
    let tools = inspect::Tools::find(cuda_tools.as_deref())?;
    let jobs = jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let (va, vb) = tools.nvrtc.version();
    eprintln!(
        "inspect: NVRTC {va}.{vb} ({}), {} ({}), disassembler: {}",
        tools.nvrtc.path.display(),
        tools.ptxas.display(),
        tools.ptxas_version(),
        tools
            .disasm
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "none (no SASS instruction mix)".into())
    );
    let results = inspect::inspect_all(&tools, suite, &kernels, &arch, jobs)?;
    let with_inst = tools.disasm.is_some();
    let mut ok = Vec::new();
    let mut failures = Vec::new();
    for r in results {
        match r {
            Ok(x) => ok.push(x),
            Err(e) => failures.push(format!("{e:#}")),
        }
    }
    let text = match format {
        Format::Csv => {
            let mut s = output::csv_line(&inspect::csv_header(with_inst));
            for r in &ok {
                s.push_str(&output::csv_line(&inspect::csv_cells(r, with_inst)));
            }
            s
        }
        Format::Json => serde_json::to_string_pretty(&ok)? + "\n",
        Format::Table => inspect_table(&ok, &kernels, &arch),
    };
    match &out {
        Some(p) => std::fs::write(p, &text).with_context(|| format!("writing {}", p.display()))?,
        None => write_stdout(&text)?,
    }
    eprintln!(
        "inspect: {} kernels x {} architectures: {} compiled, {} failed",
        kernels.len(),
        arch.len(),
        ok.len(),
        failures.len()
    );
    for f in &failures {
        eprintln!("inspect: FAILED {f}");
    }
    Ok(if failures.is_empty() { 0 } else { 1 })
}

/// The `inspect` table: kernels x architectures, registers per thread ('!' when
/// the kernel spills, FAIL when it did not compile), then static shared memory.
fn inspect_table(
    ok: &[inspect::Resources],
    kernels: &[&manifest::KernelDef],
    arch: &[String],
) -> String {
    let mut s = format!("{:<28}", "kernel \\ regs");
    for a in arch {
        s.push_str(&format!("{a:>8}"));
    }
    s.push_str(&format!("{:>9}\n", "smem"));
    for k in kernels {
        s.push_str(&format!("{:<28}", k.name));
        let mut smem = String::new();
        for a in arch {
            let a = format!(
                "sm_{}",
                a.trim_start_matches("sm_").trim_start_matches("compute_")
            );
            match ok.iter().find(|r| r.kernel == k.name && r.arch == a) {
                Some(r) => {
                    let spill = if r.spill_stores + r.spill_loads > 0 {
                        "!"
                    } else {
                        ""
                    };
                    s.push_str(&format!("{:>8}", format!("{}{}", r.regs_per_thread, spill)));
                    smem = r.static_smem_bytes.to_string();
                }
                None => s.push_str(&format!("{:>8}", "FAIL")),
            }
        }
        s.push_str(&format!("{smem:>9}\n"));
    }
    s
}

/// `run`: measure the selected configurations on the GPU present, appending rows
/// to `--out`; exit code 2 when any configuration failed.
fn cmd_run(suite: &Suite, args: RunArgs) -> Result<i32> {
    let RunArgs {
        sel,
        sizes,
        out,
        resume,
        sm_count,
        timing,
        no_verify,
        no_progress,
    } = args;
    let filter = match &sizes {
        Some(s) => parse_size_filter(s)?,
        None => Default::default(),
    };
    let kernels = suite.select(&sel.suite, &sel.kernels)?;
    let mut selected = Vec::new();
    for k in kernels {
        for i in instances(k)? {
            if size_filter_matches(&i, &filter) {
                selected.push((k, i));
            }
        }
    }
    if selected.is_empty() {
        bail!("no configuration matches the selection");
    }
    let mut opts = timing.options()?;
    opts.resume = resume;
    opts.verify = !no_verify;
    opts.progress = !no_progress;
    let mut dev = cuda::CudaDevice::open(timing.device, sm_count, timing.cuda_tools.clone())?;
    let (a, b) = dev.nvrtc_version();
    let info = device::Device::info(&dev).clone();
    eprintln!(
        "run: {} (sm_{}{}, {} SMs{}), driver {}, CUDA {}, NVRTC {a}.{b}; {} configurations -> {}",
        info.name,
        info.compute_capability.0,
        info.compute_capability.1,
        info.sm_count,
        info.partition_sms
            .map(|p| format!(", partition of {p}"))
            .unwrap_or_default(),
        info.driver_version,
        info.cuda_version,
        selected.len(),
        out.display()
    );
    let s = runner::run(
        &mut dev,
        suite,
        &selected,
        &output::ResultsFile::new(&out),
        &opts,
    )?;
    eprintln!(
        "run: {} ok, {} errors, {} skipped (already done)",
        s.ok, s.errors, s.skipped
    );
    Ok(if s.errors > 0 { 2 } else { 0 })
}

/// `calibrate`: measure the GPU present and write its catalog fields to `out`
/// and standard output.
fn cmd_calibrate(suite: &Suite, out: &std::path::Path, timing: &Timing) -> Result<i32> {
    let opts = timing.options()?;
    let mut dev = cuda::CudaDevice::open(timing.device, None, timing.cuda_tools.clone())?;
    let m = calibrate::calibrate(&mut dev, suite, &opts, |f| eprintln!("calibrate: {f}"))?;
    let text = calibrate::to_toml(device::Device::info(&dev), &m, &opts);
    std::fs::write(out, &text).with_context(|| format!("writing {}", out.display()))?;
    write_stdout(&text)?;
    Ok(0)
}

/// `corun`: check the arguments, run the kernels together on disjoint SM
/// partitions and write one row per kernel.
fn cmd_corun(suite: &Suite, args: CorunArgs) -> Result<i32> {
    let kernels = &args.kernels;
    if kernels.len() < 2 {
        bail!("corun needs at least two kernels");
    }
    if !(args.target_ms > 0.0 && args.target_ms.is_finite()) {
        bail!(
            "--target-ms must be a positive number of milliseconds, got {}",
            args.target_ms
        );
    }
    if let (true, Some(p)) = (args.resume, &args.out) {
        if corun_done(p, &kernels[0], &corun_others(kernels, 0))? {
            eprintln!("corun: {} already in {}", kernels.join("+"), p.display());
            return Ok(0);
        }
    }
    let (jobs, configs) = corun_jobs(suite, kernels, args.sizes.as_deref())?;
    let (info, got, times) = cuda::corun(
        args.device,
        args.cuda_tools.clone(),
        args.sm_count,
        &jobs,
        args.target_ms,
        Duration::from_secs_f64(args.timeout_s),
    )?;
    let header = output::csv_line(&CORUN_COLUMNS.map(String::from));
    let mut lines = String::new();
    for (i, t) in times.iter().enumerate() {
        lines.push_str(&output::csv_line(&[
            info.name.clone(),
            kernels[i].clone(),
            configs[i].clone(),
            got.to_string(),
            corun_others(kernels, i),
            t.reps.to_string(),
            format!("{}", t.alone_ms),
            format!("{}", t.together_ms),
            format!("{:.4}", t.together_ms / t.alone_ms),
            provenance::utc_date(),
            provenance::commit(),
        ]));
    }
    write_corun(args.out.as_deref(), header, &lines)?;
    Ok(0)
}

/// The kernels of a co-run set other than the `i`-th, joined with '+'.
fn corun_others(kernels: &[String], i: usize) -> String {
    kernels
        .iter()
        .enumerate()
        .filter(|(j, _)| *j != i)
        .map(|(_, k)| k.as_str())
        .collect::<Vec<_>>()
        .join("+")
}

/// One co-run job: kernel name, source, entry point, prepared buffers, launch shape.
type CorunJob = (String, String, String, verify::Prepared, device::Launch);

/// The co-run job of each kernel, at its largest working set among the
/// configurations matching `sizes`, with each configuration's key.
fn corun_jobs(
    suite: &Suite,
    kernels: &[String],
    sizes: Option<&str>,
) -> Result<(Vec<CorunJob>, Vec<String>)> {
    let filter = match sizes {
        Some(s) => parse_size_filter(s)?,
        None => Default::default(),
    };
    let mut jobs = Vec::new();
    let mut configs = Vec::new();
    for n in kernels {
        let k = suite
            .get(n)
            .with_context(|| format!("unknown kernel '{n}'"))?;
        let inst = instances(k)?
            .into_iter()
            .filter(|i| size_filter_matches(i, &filter))
            .max_by(|a, b| a.working_set.total_cmp(&b.working_set))
            .with_context(|| format!("{n}: no configuration matches --sizes"))?;
        let p = verify::prepare(&inst, 2)?;
        let l = device::Launch {
            grid: inst.grid,
            block: inst.block,
            smem_dyn: inst.smem_dyn,
        };
        jobs.push((
            k.name.clone(),
            suite.source(k)?.to_string(),
            k.entry.clone(),
            p,
            l,
        ));
        configs.push(inst.config.clone());
    }
    Ok((jobs, configs))
}

/// Append the co-run rows to `out` (which must be a co-run table if it exists),
/// or write them with their header to standard output.
fn write_corun(out: Option<&std::path::Path>, header: String, lines: &str) -> Result<()> {
    match out {
        Some(p) => {
            if let Some(cols) = csv_header(p)? {
                if cols != CORUN_COLUMNS {
                    bail!(
                        "{} exists with other columns than a co-run table's ({})",
                        p.display(),
                        CORUN_COLUMNS.join(",")
                    );
                }
            }
            output::append_lines(p, &header, lines)
        }
        None => write_stdout(&(header + lines)),
    }
}

/// The header of an existing, non-empty CSV file.
fn csv_header(path: &std::path::Path) -> Result<Option<Vec<String>>> {
    if !path.exists() || std::fs::metadata(path)?.len() == 0 {
        return Ok(None);
    }
    let mut r = csv::ReaderBuilder::new().flexible(true).from_path(path)?;
    Ok(Some(r.headers()?.iter().map(String::from).collect()))
}

/// Whether the co-run table at `path` already holds the set whose first kernel is
/// `first`, run with `others`.
fn corun_done(path: &std::path::Path, first: &str, others: &str) -> Result<bool> {
    if std::fs::metadata(path).map_or(true, |m| m.len() == 0) {
        return Ok(false);
    }
    let mut r = csv::ReaderBuilder::new().flexible(true).from_path(path)?;
    let h = r.headers()?.clone();
    let (Some(k), Some(w)) = (
        h.iter().position(|c| c == "kernel"),
        h.iter().position(|c| c == "corun_with"),
    ) else {
        return Ok(false);
    };
    for rec in r.records() {
        let rec = rec.with_context(|| format!("reading {}", path.display()))?;
        if rec.get(k) == Some(first) && rec.get(w) == Some(others) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Write to standard output; a reader that closed the pipe (`| head`) already has
/// what it wanted, so that is not an error.
fn write_stdout(text: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

fn main() {
    // errors are one line and a non-zero exit, never a panic trace
    std::panic::set_hook(Box::new(|_| {}));
    let r = std::panic::catch_unwind(real_main);
    let code = match r {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => {
            let msg = format!("{e:#}").replace('\n', " ");
            eprintln!("gpucast-bench: error: {msg}");
            1
        }
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "internal error".into());
            eprintln!("gpucast-bench: error: {}", msg.replace('\n', " "));
            1
        }
    };
    std::process::exit(code);
}

#[cfg(test)]
mod campaign_script_tests {
    use super::Cli;
    use clap::Parser;

    /// Every gpucast-bench command the campaign script would run (printed by its dry
    /// run) must parse with this CLI: the script and the runner cannot drift apart
    /// unnoticed before the next GPU is lent.
    #[test]
    fn campaign_dry_run_commands_parse() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let out = tempfile::tempdir().unwrap();
        let o = std::process::Command::new("bash")
            .arg(root.join("scripts/campaign.sh"))
            .args(["all", out.path().to_str().unwrap(), "BENCH"])
            .env("DRY_RUN", "1")
            .env("GPUCAST_COMMIT", "test")
            .output()
            .expect("bash");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let text = String::from_utf8_lossy(&o.stdout);
        let mut commands = 0;
        let mut subcommands = std::collections::BTreeSet::new();
        for line in text.lines() {
            // printf %q escapes commas; no argument holds a space.
            let words: Vec<String> = line
                .split_whitespace()
                .map(|w| w.replace('\\', ""))
                .collect();
            let Some(at) = words.iter().position(|w| w == "BENCH") else {
                continue;
            };
            let args = &words[at..];
            if let Err(e) = Cli::try_parse_from(args) {
                panic!("campaign.sh runs a command this CLI rejects: {line}\n{e}");
            }
            subcommands.insert(args[1].clone());
            commands += 1;
        }
        // probe + calibrate + suite + 4 partitions + 40 co-runs + one ncu per kernel
        assert!(commands >= 47 + 30, "only {commands} commands");
        let want: std::collections::BTreeSet<String> = ["calibrate", "corun", "run"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(subcommands, want);
        // 40 distinct co-run sets: a set drawn again in another order would be skipped
        // by `corun --resume` and leave fewer
        let sets: std::collections::BTreeSet<Vec<String>> = text
            .lines()
            .filter(|l| l.contains(" corun "))
            .map(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                let at = w.iter().position(|x| *x == "--kernels").unwrap();
                let mut k: Vec<String> = w[at + 1].split("\\,").map(String::from).collect();
                k.sort();
                k
            })
            .collect();
        assert_eq!(sets.len(), 40);
        // the L2 sweep: two timed passes and one profile per kernel of its manifest,
        // which exists where the script names it
        let sweep: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("l2-sweep.toml"))
            .collect();
        assert_eq!(sweep.len(), 2 + 5, "{sweep:?}");
        assert_eq!(sweep.iter().filter(|l| l.starts_with("ncu ")).count(), 5);
        assert!(root.join("scripts/../l2-sweep.toml").is_file());
    }
}

#[cfg(test)]
mod corun_table_tests {
    use super::{corun_done, output, CORUN_COLUMNS};

    /// SYNTHETIC co-run rows: appending keeps earlier sets, and --resume recognises a
    /// set by its first kernel and the kernels it ran with.
    #[test]
    fn corun_rows_append_and_a_done_set_is_recognised() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("corun.csv");
        assert!(!corun_done(&p, "a", "b").unwrap());
        let header = output::csv_line(&CORUN_COLUMNS.map(String::from));
        let row = |k: &str, with: &str| {
            output::csv_line(
                &[
                    "G",
                    k,
                    "N=1,block=256",
                    "64",
                    with,
                    "10",
                    "1",
                    "1.5",
                    "1.5",
                    "d",
                    "c",
                ]
                .map(String::from),
            )
        };
        output::append_lines(&p, &header, &(row("a", "b") + &row("b", "a"))).unwrap();
        output::append_lines(&p, &header, &row("c", "a+b")).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(text.lines().count(), 4, "{text}");
        assert!(text.starts_with("gpu,kernel,config,sm_count,corun_with,reps,"));
        assert!(corun_done(&p, "a", "b").unwrap());
        assert!(corun_done(&p, "c", "a+b").unwrap());
        assert!(!corun_done(&p, "c", "b+a").unwrap());
        // a partial last line (a crash mid-write) is dropped before the next append
        std::fs::write(&p, format!("{text}G,d,N=1")).unwrap();
        output::append_lines(&p, &header, &row("d", "a")).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(text.lines().count(), 5, "{text}");
        assert!(text.ends_with("d,c\n"), "{text}");
    }
}
