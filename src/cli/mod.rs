//! Argument definitions and dispatch.

mod bench;
mod check;
mod commands;
mod corun;
mod paths;
mod trace;
mod values;

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
pub use values::{FiguresSource, Format, LaunchFloors, Layout, ProtocolKind, Stage};

pub use commands::run;

/// `gpucast --version`: the release, the saved-model format it reads and the hash of
/// the data the built-in pre-trained model learned from (what a result cites).
static VERSION: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "{} (model format {}, pre-trained model data {})",
        env!("CARGO_PKG_VERSION"),
        gpucast::models::hybrid::MODEL_FORMAT_VERSION,
        gpucast::predict::pretrained_data_hash().unwrap_or("unknown"),
    )
});

#[derive(Parser, Debug)]
#[command(
    name = "gpucast",
    version = VERSION.as_str(),
    about = "Predict how fast a CUDA kernel runs on a GPU you do not have, from measurements on GPUs you do have",
    long_about = None,
    after_help = "Start with `gpucast reproduce` (every experiment on the data shipped in datasets/) or `gpucast data validate PATH`."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Args, Debug, Clone)]
pub struct Global {
    /// A GPU catalog TOML merged over the built-in one (new GPUs, measured figures)
    #[arg(long, global = true, value_name = "FILE")]
    pub gpus: Vec<PathBuf>,
    /// Threads for the parallel stages: evaluation folds (evaluate, reproduce, bench)
    /// and chunks of rows to predict (predict); 0 is one per available core. Results
    /// do not depend on it
    #[arg(long, global = true, default_value_t = 0, value_name = "N")]
    pub threads: usize,
    /// Let outputs (-o, --predictions, --plots, model files) replace existing files.
    /// Without it an output is written only where no file is, or over one this run
    /// wrote (reproduce --out: over those an earlier reproduce listed, unchanged); an
    /// input (any file the command may read) is never written over, with or without it
    #[arg(long, global = true)]
    pub force: bool,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Runs tables: import, validate, show
    Data {
        #[command(subcommand)]
        command: DataCommand,
    },
    /// The GPU catalog
    Gpus {
        #[command(subcommand)]
        command: GpusCommand,
    },
    /// Predict the runs of a file on a target GPU (data-formats §4)
    Predict(PredictArgs),
    /// The configurations of a tuning space predicted fastest on a target GPU
    Tune(TuneArgs),
    /// Every catalog GPU (or those the filters keep) ranked fastest first for a kernel
    /// or a whole runs file
    Rank(RankArgs),
    /// Show every term of one analytical projection (and, with --model, what each of
    /// a hybrid's fitted stages does to the prediction)
    Explain(ExplainArgs),
    /// Score models under a protocol (logo, new-size, new-kernel, new-family)
    Evaluate(EvaluateArgs),
    /// Fit a model and save it as JSON
    Train(TrainArgs),
    /// Roofline charts per GPU (SVG): GFLOP/s against FLOP per DRAM byte, or with
    /// --instruction warp GIPS against warp instructions per 32-byte transaction
    Roofline(RooflineArgs),
    /// Run the experiments of experiments/*.toml and write tables and plots
    Reproduce(ReproduceArgs),
    /// Predict each kernel's time when several run at once on disjoint SM partitions
    /// of one GPU (shared L2 and DRAM)
    Corun(CorunArgs),
    /// Time the pipeline's stages on real data (min of repeats) and report peak memory
    Bench(BenchArgs),
}

#[derive(Subcommand, Debug)]
pub enum DataCommand {
    /// Convert measurements (Kernel Tuner caches, GEMM latency tables, the reference
    /// study's runs files, canonical runs tables, Nsight Compute and NeuSight files,
    /// nvbench results, PyTorch profiler traces) to a canonical CSV or Parquet, and
    /// report rows, failed configurations and missing features
    Import {
        /// Input files or directories
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Output file (.csv or .parquet)
        #[arg(long, short)]
        out: PathBuf,
        /// Input format (the import registry's formats), or auto: detected per file
        /// from its content
        #[arg(long, default_value = "auto", value_name = "FORMAT", ignore_case = true,
              value_parser = import_formats())]
        from: String,
        /// The `source` column: where the data comes from (e.g. the repository name)
        #[arg(long)]
        source: Option<String>,
        /// The GPU a file was measured on, when it does not name it (Nsight Compute
        /// exports of --page details, a Kernel Tuner cache with an empty device_name)
        #[arg(long)]
        gpu: Option<String>,
        /// Extra workload description files or directories (*.toml) for Kernel Tuner
        /// caches, over the shipped ones (datasets/workloads)
        #[arg(long, value_name = "PATH")]
        workloads: Vec<PathBuf>,
        /// Also write the validation flags column
        #[arg(long)]
        validate: bool,
    },
    /// Check runs files: errors stop with a one-line message; warnings flag rows
    Validate {
        /// Files or directories (searched for runs tables and Kernel Tuner caches)
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Output format
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
        /// List every flagged row (file:line, GPU, kernel, config, excluded or kept, and
        /// each reason) instead of the per-GPU summary
        #[arg(long)]
        list: bool,
        /// The GPU a file was measured on, when it does not name it (Nsight Compute
        /// exports of --page details, a Kernel Tuner cache with an empty device_name)
        #[arg(long)]
        gpu: Option<String>,
    },
    /// Print runs as a table
    Show {
        /// Runs files or directories (as for `data validate`)
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Output format
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
        /// Only rows of this GPU
        #[arg(long)]
        gpu: Option<String>,
        /// Only rows of this kernel
        #[arg(long)]
        kernel: Option<String>,
        /// At most this many rows (0 = all)
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
}

#[derive(Subcommand, Debug)]
pub enum GpusCommand {
    /// One line per GPU
    List {
        /// Output format
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
        /// Only GPUs of this vendor (the catalog's `vendor`, case-insensitive: nvidia, amd)
        #[arg(long)]
        vendor: Option<String>,
    },
    /// Every field of one GPU, with its compute capability's occupancy limits
    Show {
        /// Name, alias or driver name (case and spacing do not matter), or a partition of a GPU: "H100 SXM5 [16 SMs]"
        name: String,
    },
}

#[derive(Args, Debug, Clone)]
pub struct FiguresArgs {
    /// Where target figures come from (never from the target's own runs)
    #[arg(long, value_enum, default_value_t = FiguresSource::Spec)]
    pub target_calibration: FiguresSource,
    /// The reference study's gpu_metrics.json (used by analytical-study; default: the
    /// one beside the data, if any)
    #[arg(long, value_name = "FILE")]
    pub study_metrics: Option<PathBuf>,
    /// Per-architecture kernel resources (`gpucast-bench inspect --format csv`): target
    /// occupancy then uses the registers of each kernel as compiled for the target's
    /// architecture. Default: the suite's shipped benchmarks_cuda/inspect/resources.csv
    #[arg(long, value_name = "FILE")]
    pub resources: Option<PathBuf>,
    /// Use only the runs' own register and shared-memory columns
    #[arg(long, conflicts_with = "resources")]
    pub no_resources: bool,
    /// Where a target's launch floor (what a kernel of a few µs takes) comes from when
    /// the catalog measures none for it. Default: `sources` (the target timed as the
    /// sources were), or what a saved model was trained with
    #[arg(long, value_enum)]
    pub launch_floor: Option<LaunchFloors>,
}

#[derive(Args, Debug)]
pub struct PredictArgs {
    /// Runs measured on source GPUs: runs tables (CSV, Parquet) or a tool's own files,
    /// imported on the fly (Nsight Compute CSV, Kernel Tuner cache, GEMM latency
    /// table, nvbench results, a PyTorch profiler trace); a directory means its runs
    /// tables and Kernel Tuner caches
    #[arg(long, required_unless_present = "trace")]
    pub runs: Vec<PathBuf>,
    /// A PyTorch profiler trace (Chrome-trace JSON, gzip'd or not) whose step to
    /// predict on the target: every kernel, then the step (predicted kernel time plus
    /// the trace's idle time between kernels, as measured), per-operator sums and the
    /// kernels that matter most. Default model: pretrained (a calibrated interval
    /// from one source GPU)
    #[arg(long, value_name = "TRACE", conflicts_with_all = ["runs", "source", "data"])]
    pub trace: Option<PathBuf>,
    /// The GPU the runs were measured on, for files that do not name it (an Nsight
    /// Compute export without device__attribute_display_name); a file that names
    /// another GPU is refused
    #[arg(long, value_name = "NAME")]
    pub gpu: Option<String>,
    /// GPU to predict for, or a partition of one: "H100 SXM5 [16 SMs]" (16 of its SMs, e.g. a CUDA green context)
    #[arg(long)]
    pub target: String,
    /// Use only this source GPU's runs
    #[arg(long)]
    pub source: Option<String>,
    /// A model name (analytical, analytical-study, hybrid, forest, ...), a saved model
    /// .json, or `pretrained` (the hybrid shipped in models/, trained on every corpus in
    /// datasets/). `hybrid` without --data on runs of fewer than 3 GPUs uses the
    /// pre-trained one: there is too little to learn a correction from. Default:
    /// analytical (with --trace: pretrained)
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// Training data for learned models given by name (default: the --runs data)
    #[arg(long)]
    pub data: Vec<PathBuf>,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Write the output here instead of standard output, in the format its name
    /// says: .csv, .json or (predict) .parquet; a --format other than table must agree
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    /// Seed of the learned models (the same seed gives the same output)
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    #[command(flatten)]
    pub figures: FiguresArgs,
}

#[derive(Args, Debug)]
pub struct TuneArgs {
    #[command(flatten)]
    pub predict: PredictArgs,
    /// Only this kernel's tuning space
    #[arg(long)]
    pub kernel: Option<String>,
    /// How many configurations to show per tuning space
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// Skip the check of the model's picks on the data's own GPUs (each predicted from
    /// the others, leave-one-GPU-out: how far its first pick has been from the fastest
    /// where that is known)
    #[arg(long)]
    pub no_check: bool,
    /// Write a Kernel Tuner cache of the target's predicted times (ms) to this new
    /// file (never over an existing one): the --runs cache's keys, parameters and
    /// structure, `device_name` the target's, each configuration's interval in
    /// `time_lo` / `time_hi`, `predicted_by` naming this gpucast. Kernel Tuner's
    /// simulation mode replays it. Needs one --runs file, a Kernel Tuner cache
    #[arg(long, value_name = "OUT.json")]
    pub write_cache: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct RankArgs {
    /// Runs measured on the GPUs you have (as for `predict --runs`)
    #[arg(long, required = true)]
    pub runs: Vec<PathBuf>,
    /// The GPU the runs were measured on, for files that do not name it; a file that
    /// names another GPU is refused
    #[arg(long, value_name = "NAME")]
    pub gpu: Option<String>,
    /// Only this kernel's runs. Without it every kernel of the runs counts: a GPU's
    /// time is the sum over the problems (a kernel doing one work) of each one's
    /// fastest configuration, and its bounds the sums of those configurations' bounds
    #[arg(long)]
    pub kernel: Option<String>,
    /// Use only this source GPU's runs (the others still train the model, as in
    /// `predict --source`)
    #[arg(long)]
    pub source: Option<String>,
    /// Only GPUs of this vendor (as `gpus list` writes it; any case)
    #[arg(long)]
    pub vendor: Option<String>,
    /// Only GPUs of this architecture (as `gpus list` writes it; any case)
    #[arg(long)]
    pub arch: Option<String>,
    /// Only GPUs with at least this much memory (GB); GPUs the catalog gives no
    /// memory size are listed as not ranked
    #[arg(long, value_name = "N")]
    pub min_memory_gb: Option<f64>,
    /// Only these GPUs, comma-separated, each matched in the catalog (`--gpus` is the
    /// catalog file)
    #[arg(long, value_delimiter = ',', value_name = "A,B,C")]
    pub targets: Option<Vec<String>>,
    /// Prices: a TOML file of `"GPU name" = dollars per hour` (names matched in the
    /// catalog); adds the cost of one run (time x price)
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    /// The model (as for `predict --model`)
    #[arg(long, default_value = "analytical")]
    pub model: String,
    /// Training data for learned models given by name (default: the --runs data)
    #[arg(long)]
    pub data: Vec<PathBuf>,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Seed of the learned models (the same seed gives the same output)
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    #[command(flatten)]
    pub figures: FiguresArgs,
}

#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// Runs measured on source GPUs (as for `predict --runs`)
    #[arg(long, required = true)]
    pub runs: Vec<PathBuf>,
    /// The GPU the runs were measured on, for files that do not name it (an Nsight
    /// Compute export without device__attribute_display_name); a file that names
    /// another GPU is refused
    #[arg(long, value_name = "NAME")]
    pub gpu: Option<String>,
    /// 1-based row of the loaded runs (as `gpucast data show` numbers them)
    #[arg(long, required_unless_present = "kernel", conflicts_with = "kernel")]
    pub row: Option<usize>,
    /// The work to explain by its kernel (with --config) instead of --row: e.g. a
    /// configuration `tune` printed
    #[arg(long, requires = "config")]
    pub kernel: Option<String>,
    /// The configuration of --kernel: `name=value` pairs joined by `,`, in any order
    #[arg(long, requires = "kernel")]
    pub config: Option<String>,
    /// GPU to project the row onto, or a partition of one: "H100 SXM5 [16 SMs]"
    #[arg(long)]
    pub target: String,
    /// Use only this source GPU
    #[arg(long)]
    pub source: Option<String>,
    /// `analytical` (the terms of its projections), or a hybrid whose fitted stages are
    /// shown after them: `hybrid` (fitted on the other GPUs' runs, the pre-trained one
    /// with fewer than 3 of them, as `predict` does), `pretrained` or a saved model .json
    #[arg(long, default_value = "analytical")]
    pub model: String,
    /// Seed of a hybrid fitted on the runs (the same seed gives the same output)
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    #[command(flatten)]
    pub figures: FiguresArgs,
}

#[derive(Args, Debug)]
pub struct EvaluateArgs {
    /// How data is held out
    #[arg(long, value_enum, default_value_t = ProtocolKind::Logo)]
    pub protocol: ProtocolKind,
    /// Model names, comma-separated (e.g. analytical,hybrid). hybrid-REGRESSOR picks the
    /// residual's regressor (hybrid-forest); hybrid@SHARE fixes the share of the learned
    /// correction applied (0..1) instead of choosing it inside the training GPUs: a
    /// diagnostic
    #[arg(long, default_value = "analytical", value_delimiter = ',')]
    pub model: Vec<String>,
    /// Runs files or directories
    #[arg(long, required = true)]
    pub data: Vec<PathBuf>,
    /// Test kernels for new-kernel (default: the study's four)
    #[arg(long, value_delimiter = ',')]
    pub test_kernels: Option<Vec<String>>,
    /// Score only these kernels, comma-separated (default: all). Every other run of
    /// --data still trains each fold as the protocol allows (in LOGO every run not on
    /// the target GPU): score your kernels while learning from other corpora too
    #[arg(long, value_delimiter = ',', value_name = "KERNELS")]
    pub score_kernels: Option<Vec<String>>,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also print the per-kernel breakdown, pooled over targets (table: a second
    /// table; csv: rows with target `all` in one table, whose per-target rows have
    /// kernel `all`; json: a `per_kernel` array)
    #[arg(long)]
    pub per_kernel: bool,
    /// Write every scored prediction (model, target, kernel, config, measured, predicted, interval, bound) to this CSV
    #[arg(long, value_name = "FILE")]
    pub predictions: Option<PathBuf>,
    /// Write SVG charts of the evaluation into this directory (made if missing):
    /// predicted against measured per target, each model with its intervals
    /// (`PROTOCOL_pred_vs_measured_TARGET.svg`), and each model's error CDF
    /// (`PROTOCOL_error_cdf.svg`)
    #[arg(long, value_name = "DIR")]
    pub plots: Option<PathBuf>,
    /// Seed of the learned models (the same seed gives the same output)
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    #[command(flatten)]
    pub figures: FiguresArgs,
}

#[derive(Args, Debug)]
pub struct TrainArgs {
    /// Training runs (files or directories; e.g. datasets/public for every shipped corpus)
    #[arg(long, required = true)]
    pub data: Vec<PathBuf>,
    /// The model to fit and save: hybrid or hybrid-REGRESSOR (the others have nothing
    /// worth saving)
    #[arg(long, default_value = "hybrid")]
    pub model: String,
    /// Fit on this deterministic fraction of the configurations (the same on every GPU,
    /// so pairs survive): large corpora train in minutes instead of hours
    #[arg(long, value_name = "FRACTION")]
    pub sample: Option<f64>,
    /// Training runs the residual learns from, at most (an even subsample beyond it;
    /// every run stays a source)
    #[arg(long, default_value_t = gpucast::models::hybrid::DEFAULT_TRAINING_QUERIES)]
    pub training_queries: usize,
    /// Output model file (.json)
    #[arg(long, short)]
    pub out: PathBuf,
    /// Seed of the learned models (the same seed gives the same output)
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    #[command(flatten)]
    pub figures: FiguresArgs,
}

#[derive(Args, Debug, Clone)]
pub struct DataDirArgs {
    /// The directory that holds the shipped datasets/ (a gpucast checkout) (default:
    /// $GPUCAST_DATA, else the current directory when it has datasets/)
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct CorunArgs {
    /// Runs of the kernels on the target GPU: runs tables (alone times, on the whole GPU
    /// or on SM partitions) and Nsight Compute exports (DRAM and L2 bytes); a directory
    /// means its runs tables; several may follow one --runs
    #[arg(long, required = true, num_args = 1..)]
    pub runs: Vec<PathBuf>,
    /// The GPU the kernels share (a catalog name; `--gpus FILE` adds its measured roofs)
    #[arg(long)]
    pub target: String,
    /// A kernel and the SMs of its partition: NAME:SMS, or NAME@CONFIG:SMS when it has
    /// several configurations; once per co-running kernel
    #[arg(long = "kernel", required = true, value_name = "KERNEL:SMS")]
    pub kernels: Vec<String>,
    /// Measured co-runs to fit the model on: directories holding corun.csv, runs.csv,
    /// runs_partitions.csv, ncu/ and calibration.toml (default: the shipped H100 and
    /// H200 ones under --data-dir)
    #[arg(long, value_name = "DIR")]
    pub coruns: Vec<PathBuf>,
    #[command(flatten)]
    pub data_dir: DataDirArgs,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Runs to benchmark on (default: the shipped GEMM latency tables,
    /// datasets/public/aiconfigurator under --data-dir: 980k real rows on 9 GPUs)
    #[arg(long)]
    pub data: Vec<PathBuf>,
    #[command(flatten)]
    pub data_dir: DataDirArgs,
    /// Print the timings as the markdown table of docs/speed.md (instead of --format)
    #[arg(long, conflicts_with = "format")]
    pub markdown: bool,
    /// Rows of each subset, comma-separated (several sizes show how time grows)
    #[arg(long, value_delimiter = ',', default_value = "100000")]
    pub rows: Vec<usize>,
    /// GPUs of each subset (those with the most rows), comma-separated
    #[arg(long, value_delimiter = ',', default_value = "8")]
    pub gpu_count: Vec<usize>,
    /// Stages to time, comma-separated
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "load,analytical-predict,logo-analytical,logo-hybrid"
    )]
    pub stage: Vec<Stage>,
    /// Repeats of each stage; the fastest is reported
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,
    /// Where each subset's rows lie while it is timed
    #[arg(long, value_enum, default_value_t = Layout::Table)]
    pub layout: Layout,
    /// Output format (json: each stage's timing as numbers, every repeat's seconds,
    /// rows per second and peak memory in bytes, unrounded)
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    #[command(flatten)]
    pub figures: FiguresArgs,
}

#[derive(Args, Debug)]
pub struct RooflineArgs {
    /// Runs files, Nsight Compute exports, or directories (searched for both)
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Directory to write the charts into, one SVG per GPU (made if missing)
    #[arg(long, short)]
    pub out: PathBuf,
    /// The instruction roofline: one point per kernel and memory level (L1, shared,
    /// L2, DRAM) from warp instruction and transaction counts (Nsight Compute
    /// exports), under the issue and bandwidth ceilings, with the access-pattern
    /// walls and thread predication
    #[arg(long)]
    pub instruction: bool,
    /// The GPU a profile was taken on, when the file does not name it (Nsight
    /// Compute exports of --page details)
    #[arg(long)]
    pub gpu: Option<String>,
}

#[derive(Args, Debug)]
pub struct ReproduceArgs {
    /// Runs every experiment evaluates instead of the data its file names (default:
    /// each experiment's own, the corpora shipped in datasets/ under --data-dir)
    #[arg(long)]
    pub data: Vec<PathBuf>,
    #[command(flatten)]
    pub data_dir: DataDirArgs,
    /// Output directory
    #[arg(long, default_value = "experiments/results")]
    pub out: PathBuf,
    /// Directory of experiment definitions (*.toml), their data relative to each file
    /// (default: the experiments/ built into the binary, their data under --data-dir)
    #[arg(long, value_name = "DIR")]
    pub experiments: Option<PathBuf>,
    /// Check every experiment's [gate] bounds on the computed figures: a line per
    /// bound, and exit code 1 naming each one broken
    #[arg(long, conflicts_with = "data")]
    pub check: bool,
    /// Write the accuracy page's tables into FILE (e.g. docs/accuracy.md) between its
    /// two marker lines, keeping the text around them (a new FILE is the tables alone)
    #[arg(long, value_name = "FILE")]
    pub accuracy_page: Option<PathBuf>,
    /// Print wall times of each stage
    #[arg(long)]
    pub timings: bool,
    /// Skip the SVG plots
    #[arg(long)]
    pub no_plots: bool,
}

/// The values `data import --from` takes: the import registry's formats (with their
/// aliases), then auto. Made from the registry, so help and parser list what it has.
fn import_formats() -> clap::builder::PossibleValuesParser {
    use clap::builder::PossibleValue;
    let mut values: Vec<PossibleValue> = gpucast::data::import::REGISTRY
        .iter()
        .map(|i| {
            PossibleValue::new(i.name())
                .aliases(i.aliases().iter().copied())
                .help(i.describe())
        })
        .collect();
    values.push(
        PossibleValue::new(gpucast::data::import::AUTO).help("detected per file from its content"),
    );
    clap::builder::PossibleValuesParser::new(values)
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    /// Every argument of every command says what it is in `--help`.
    #[test]
    fn every_argument_has_help_text() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if id == "help" || id == "version" {
                    continue;
                }
                if arg.get_help().is_none() && arg.get_long_help().is_none() {
                    missing.push(format!("{path} {id}"));
                }
            }
            for sub in cmd.get_subcommands() {
                if sub.get_about().is_none() && sub.get_name() != "help" {
                    missing.push(format!("{path} {} (no about)", sub.get_name()));
                }
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        walk(&Cli::command(), "gpucast", &mut missing);
        assert!(missing.is_empty(), "arguments without help: {missing:?}");
    }

    #[test]
    fn the_cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
