//! Experiments: a study is a TOML file (data, protocol, models, splits, published
//! figures), not code. `reproduce` runs every `experiments/*.toml` and writes markdown
//! and CSV tables (ours beside the published figures) and SVG plots.
//!
//! ```toml
//! name = "exp1-new-gpu"
//! title = "Experiment 1: same kernel and configuration, new GPU"
//! protocol = { name = "logo" }         # logo | new-size | new-kernel (+ test_kernels, known, smallest_only)
//! models = ["analytical-study", "analytical", "hybrid", "forest"]
//! calibration = "spec"                 # our models: spec | measured
//! study_calibration = "study"          # analytical-study: study (gpu_metrics.json beside the data) | spec
//! resources = "shipped"               # per-arch registers: "shipped" (built in) or a CSV relative to this file
//! sm_partitions = "exclude"            # runs on SM partitions: exclude | as-gpus
//! vendors = ["NVIDIA"]                 # only runs on these vendors' GPUs (default: all)
//! plots = true
//! instruction_roofline = ["../datasets/own/h200/ncu"]  # Nsight Compute exports: a chart per GPU
//! instruction_counts = ["../datasets/own/h200/ncu"]    # their instruction counts join the runs
//! sample = 0.05                        # a share of the configurations, the same on every GPU
//! sample_sources = { aiconfigurator = 0.02 }  # per corpus (the runs' source), over `sample`
//! [selection]                          # optional (logo)
//! targets = ["TITAN V"]
//! sources = ["RTX 2080 Ti", "RTX 4070"]
//! per_source = true                    # one source at a time, pooled
//! score_kernels = ["saxpy"]            # score only these; the rest of the data still trains
//! [published]                          # optional: figures to print beside ours
//! source = "reference-results.md, Experiment 1"
//! [published.models.analytical-study]
//! mape = 86.62
//! median_ratio = 1.03
//! within_10 = 16.3                     # percent here, as published
//! [gate.hybrid]                        # optional: bounds `reproduce --check` holds it to
//! pooled_mape_max = 27                 # (every key: [`gate::ModelGate`])
//! ```
//!
//! The files of `experiments/` are built into the binary ([`BUILTIN`]); the data they
//! name is found under a data directory ([`data_dir`]).

use crate::catalog::Catalog;
use crate::data::{validate::is_excluded, with_instruction_counts, CountsJoined, Run};
use crate::error::{Error, Result};
use crate::evaluation::{self, Evaluation, Metrics, Protocol, Selection};
use crate::features::{instruction, roofline, Calibration, FiguresSource, KernelResources};
use crate::models::{Context, ModelSpec};
use crate::report::{self, pct, plots, Table};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub mod corun;
pub mod gate;
pub mod page;
mod publish;

#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    pub name: String,
    pub title: String,
    pub protocol: Protocol,
    pub models: Vec<String>,
    /// Which GPUs are scored and learned from (logo).
    #[serde(default)]
    pub selection: Selection,
    /// Figures for our models.
    #[serde(default)]
    pub calibration: FiguresSource,
    /// Figures for `analytical-study` (default: the study's gpu_metrics.json beside the
    /// data when there is one, else `calibration`).
    #[serde(default)]
    pub study_calibration: Option<FiguresSource>,
    /// Per-architecture kernel resources (gpucast-bench inspect CSV), relative to the
    /// experiment file, or `"shipped"` ([`SHIPPED_RESOURCES`]: the suite's, built into
    /// the binary); target occupancy then uses the target arch's registers.
    #[serde(default)]
    pub resources: Option<PathBuf>,
    /// The runs it evaluates: files or directories relative to the experiment file
    /// (`reproduce --data` replaces them).
    #[serde(default)]
    pub data: Vec<PathBuf>,
    /// Only these kernels of the data (default: all).
    #[serde(default)]
    pub kernels: Option<Vec<String>>,
    /// Only runs on GPUs of these vendors (the catalog's `vendor`, case-insensitive;
    /// default: all): keeps an experiment on the GPUs it was set up for when a corpus
    /// it reads gains another vendor's runs.
    #[serde(default)]
    pub vendors: Option<Vec<String>>,
    /// Evaluate a deterministic share of the configurations (0..1], the same ones on
    /// every GPU (chosen by a hash of kernel and config): keeps large corpora quick.
    #[serde(default)]
    pub sample: Option<f64>,
    /// Per corpus (the runs' `source`), a share that replaces `sample` for its runs: a
    /// million-row corpus evaluated beside a few hundred rows of another.
    #[serde(default)]
    pub sample_sources: BTreeMap<String, f64>,
    #[serde(default = "yes")]
    pub plots: bool,
    /// Also draw a roofline chart per GPU of the data.
    #[serde(default)]
    pub roofline: bool,
    /// Nsight Compute exports (files, or directories searched for them) relative to
    /// the experiment file: an instruction roofline chart per GPU of them
    /// ([`instruction_roofline_plots`]), drawn when the experiment runs on its own data.
    #[serde(default)]
    pub instruction_roofline: Vec<PathBuf>,
    /// Nsight Compute exports (as `instruction_roofline`) whose instruction counts join
    /// the data's runs of the same launch ([`with_instruction_counts`]), when the
    /// experiment runs on its own data: the models' issue roof then applies to them.
    #[serde(default)]
    pub instruction_counts: Vec<PathBuf>,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// What runs on SM partitions (`sm_count` below the GPU's) are: left out with
    /// their reason (`exclude`, the default), or GPUs of their own
    /// ([`crate::data::partitions_as_gpus`]: "NVIDIA H100 SXM5 80GB [16 SMs]"), which a
    /// selection can then predict from the whole GPUs.
    #[serde(default)]
    pub sm_partitions: SmPartitions,
    #[serde(default)]
    pub published: Option<Published>,
    /// Regression bounds per model, checked by `reproduce --check` ([`gate`]).
    #[serde(default)]
    pub gate: gate::Gates,
}

/// How an experiment treats runs on SM partitions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SmPartitions {
    #[default]
    Exclude,
    AsGpus,
}

fn yes() -> bool {
    true
}
fn default_seed() -> u64 {
    42
}

/// Published figures for one experiment, by model name.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Published {
    pub source: String,
    #[serde(default)]
    pub models: BTreeMap<String, PublishedFigures>,
}

/// Published metrics (percentages in percent, like the paper prints them).
#[derive(Debug, Clone, Copy, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedFigures {
    pub mape: Option<f64>,
    pub median_ratio: Option<f64>,
    pub within_10: Option<f64>,
    pub within_25: Option<f64>,
    pub within_50: Option<f64>,
}

impl Experiment {
    /// Every file or directory this experiment may read under `opts`: its data (or
    /// --data), the study metrics beside it, its kernel resources and profiles.
    fn may_read(&self, opts: &ReproduceOptions) -> Vec<PathBuf> {
        let data = if opts.data.is_empty() {
            &self.data
        } else {
            opts.data
        };
        let mut v: Vec<PathBuf> = data.iter().chain(&self.resources).cloned().collect();
        v.extend(crate::features::study_metrics_beside(data));
        v.extend(self.instruction_roofline.iter().cloned());
        v.extend(self.instruction_counts.iter().cloned());
        v
    }

    /// Read an experiment file; model names are checked and `data` and `resources`
    /// are made relative to the file's directory (so reproduce runs from any
    /// directory).
    pub fn load(path: &Path) -> Result<Experiment> {
        let text = crate::files::read_to_string(path)
            .map_err(|e| Error::file(path.display(), e.to_string()))?;
        let dir = path.parent().unwrap_or(Path::new("."));
        Self::parse(&text, &path.display().to_string(), &|p| dir.join(p))
    }

    /// A built-in experiment ([`BUILTIN`]) as if its file were in `data_dir/experiments`:
    /// its `../datasets/...` paths name `data_dir/datasets/...` (joined lexically, so
    /// `data_dir` needs no `experiments` folder).
    pub fn builtin(file: &str, text: &str, data_dir: &Path) -> Result<Experiment> {
        let dir = data_dir.join("experiments");
        Self::parse(text, &format!("experiments/{file} (built in)"), &|p| {
            join_lexically(&dir, p)
        })
    }

    /// An experiment from its TOML text; `file` names it in messages and `place`
    /// turns the paths it gives into the paths to read.
    fn parse(text: &str, file: &str, place: &dyn Fn(&Path) -> PathBuf) -> Result<Experiment> {
        let mut e: Experiment = toml::from_str(text).map_err(|e| {
            Error::file(
                crate::error::toml_place(file, text, &e),
                crate::error::toml_message(&e),
            )
        })?;
        e.model_specs()
            .map_err(|err| Error::file(file, err.to_string()))?;
        let bad = |m: String| Error::file(file, m);
        if let Ok(doc) = toml::from_str::<toml::Table>(text) {
            if let Some(toml::Value::Table(p)) = doc.get("protocol") {
                let allowed = Protocol::settings(e.protocol.name());
                if let Some(k) = p
                    .keys()
                    .find(|k| *k != "name" && !allowed.contains(&k.as_str()))
                {
                    return Err(bad(format!(
                        "protocol.{k}: protocol {} takes {}",
                        e.protocol.name(),
                        if allowed.is_empty() {
                            "no setting but its name".to_string()
                        } else {
                            format!("only {}", allowed.join(", "))
                        }
                    )));
                }
            }
        }
        if !is_plain_file_name(&e.name) {
            return Err(bad(format!(
                "name = {:?}: the outputs are named after it, so it must be a plain file name (letters, digits, '-', '_', '.'; not starting with '.')",
                e.name
            )));
        }
        if RESERVED_NAMES.contains(&e.name.as_str()) {
            return Err(bad(format!(
                "name = {:?}: reproduce writes its own {0}.md and {0}.csv; give the experiment another name",
                e.name
            )));
        }
        if e.models.is_empty() {
            return Err(bad("models = []: name at least one model".into()));
        }
        if e.kernels.as_ref().is_some_and(|k| k.is_empty()) {
            return Err(bad(
                "kernels = []: name at least one kernel, or leave `kernels` out for all".into(),
            ));
        }
        if e.vendors.as_ref().is_some_and(|v| v.is_empty()) {
            return Err(bad(
                "vendors = []: name at least one vendor, or leave `vendors` out for all".into(),
            ));
        }
        gate::validate(&e.gate, &e.models).map_err(bad)?;
        if let Some(r) = &e.resources {
            if r != Path::new(SHIPPED_RESOURCES) {
                e.resources = Some(place(r));
            }
        }
        e.data = e.data.iter().map(|d| place(d)).collect();
        e.instruction_roofline = e.instruction_roofline.iter().map(|d| place(d)).collect();
        e.instruction_counts = e.instruction_counts.iter().map(|d| place(d)).collect();
        if let Some(f) = e.sample {
            if !(f > 0.0 && f <= 1.0) {
                return Err(bad(format!("sample = {f}: must be in (0, 1]")));
            }
        }
        for (source, f) in &e.sample_sources {
            if !(*f > 0.0 && *f <= 1.0) {
                return Err(bad(format!(
                    "sample_sources.{source} = {f}: must be in (0, 1]"
                )));
            }
        }
        Ok(e)
    }

    /// The share of the configurations `run`'s corpus is evaluated on (None: all).
    pub fn sample_of(&self, run: &Run) -> Option<f64> {
        run.source
            .as_deref()
            .and_then(|s| self.sample_sources.get(s).copied())
            .or(self.sample)
    }

    /// Whether some runs are left out by `sample` or `sample_sources`.
    fn is_sampled(&self) -> bool {
        self.sample.is_some_and(|f| f < 1.0) || self.sample_sources.values().any(|f| *f < 1.0)
    }

    /// The experiment's models, parsed (with its seed).
    pub fn model_specs(&self) -> Result<Vec<ModelSpec>> {
        self.models
            .iter()
            .map(|m| ModelSpec::parse(m, self.seed))
            .collect()
    }
}

/// Whether `name` can name output files on its own: no path, nothing hidden.
fn is_plain_file_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 200
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// `resources = "shipped"`: the benchmark suite's resources built into the binary
/// ([`KernelResources::shipped`]), wherever it runs.
pub const SHIPPED_RESOURCES: &str = "shipped";

/// The experiment files of `experiments/`, built into the binary so that `reproduce`
/// travels with it: (file name, text), sorted by name. A test checks the list against
/// the directory.
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "gemm_tables_logo.toml",
        include_str!("../experiments/gemm_tables_logo.toml"),
    ),
    (
        "kt_convolution_benchmark_hub_logo.toml",
        include_str!("../experiments/kt_convolution_benchmark_hub_logo.toml"),
    ),
    (
        "kt_convolution_logo.toml",
        include_str!("../experiments/kt_convolution_logo.toml"),
    ),
    (
        "kt_convolution_paper_logo.toml",
        include_str!("../experiments/kt_convolution_paper_logo.toml"),
    ),
    (
        "kt_cross_vendor_amd_from_nvidia.toml",
        include_str!("../experiments/kt_cross_vendor_amd_from_nvidia.toml"),
    ),
    (
        "kt_cross_vendor_amd_targets.toml",
        include_str!("../experiments/kt_cross_vendor_amd_targets.toml"),
    ),
    (
        "kt_cross_vendor_nvidia_targets.toml",
        include_str!("../experiments/kt_cross_vendor_nvidia_targets.toml"),
    ),
    (
        "kt_gemm_logo.toml",
        include_str!("../experiments/kt_gemm_logo.toml"),
    ),
    (
        "kt_new_family.toml",
        include_str!("../experiments/kt_new_family.toml"),
    ),
    (
        "kt_three_gpu_logo.toml",
        include_str!("../experiments/kt_three_gpu_logo.toml"),
    ),
    ("loao.toml", include_str!("../experiments/loao.toml")),
    ("loco.toml", include_str!("../experiments/loco.toml")),
    (
        "neusight_amd_logo.toml",
        include_str!("../experiments/neusight_amd_logo.toml"),
    ),
    (
        "neusight_logo.toml",
        include_str!("../experiments/neusight_logo.toml"),
    ),
    ("newer.toml", include_str!("../experiments/newer.toml")),
    (
        "own_partition_scaling.toml",
        include_str!("../experiments/own_partition_scaling.toml"),
    ),
    (
        "own_suite_logo.toml",
        include_str!("../experiments/own_suite_logo.toml"),
    ),
    (
        "ref_exp1_new_gpu.toml",
        include_str!("../experiments/ref_exp1_new_gpu.toml"),
    ),
    (
        "ref_exp2_new_size.toml",
        include_str!("../experiments/ref_exp2_new_size.toml"),
    ),
    (
        "ref_exp3_new_kernel.toml",
        include_str!("../experiments/ref_exp3_new_kernel.toml"),
    ),
    (
        "ref_exp3b_new_kernel_new_gpu.toml",
        include_str!("../experiments/ref_exp3b_new_kernel_new_gpu.toml"),
    ),
    (
        "ref_logo_all_gpus.toml",
        include_str!("../experiments/ref_logo_all_gpus.toml"),
    ),
    (
        "ref_logo_with_hopper.toml",
        include_str!("../experiments/ref_logo_with_hopper.toml"),
    ),
    (
        "ref_new_family.toml",
        include_str!("../experiments/ref_new_family.toml"),
    ),
];

/// What the built-in experiments' data is found under when neither `--data-dir` nor
/// `GPUCAST_DATA` says: a message for the user.
pub const NO_DATA_DIR: &str = "no data directory: pass --data-dir or set GPUCAST_DATA (the directory that holds datasets/, e.g. a gpucast checkout)";

/// The directory the shipped data is found under (the one holding `datasets/`):
/// `given` (`--data-dir`), else `env` (`GPUCAST_DATA`) when set and not empty, else the
/// current directory when it has `datasets/`; otherwise an error ([`NO_DATA_DIR`]).
pub fn data_dir(given: Option<&Path>, env: Option<&std::ffi::OsStr>) -> Result<PathBuf> {
    let named = given.map(|d| (d.to_path_buf(), "--data-dir")).or_else(|| {
        env.filter(|e| !e.is_empty())
            .map(|e| (PathBuf::from(e), "GPUCAST_DATA"))
    });
    match named {
        Some((d, _)) if d.join("datasets").is_dir() => Ok(d),
        Some((d, how)) => Err(Error::usage(format!(
            "{how} {}: no datasets/ folder in it (name the directory that holds datasets/, e.g. a gpucast checkout)",
            d.display()
        ))),
        None if Path::new("datasets").is_dir() => Ok(PathBuf::from(".")),
        None => Err(Error::usage(NO_DATA_DIR)),
    }
}

/// `base` joined with `rel`, `..` taken off lexically (`base` need not exist).
fn join_lexically(base: &Path, rel: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = base.to_path_buf();
    for c in rel.components() {
        match c {
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// Where `reproduce` reads its experiments from.
#[derive(Debug, Clone, Copy)]
pub enum ExperimentFiles<'a> {
    /// Every `*.toml` of a directory (`--experiments DIR`).
    Dir(&'a Path),
    /// The built-in ones ([`BUILTIN`]), their data under this directory ([`data_dir`]).
    Builtin(&'a Path),
}

impl ExperimentFiles<'_> {
    /// The experiments, sorted by file name.
    pub fn load(&self) -> Result<Vec<Experiment>> {
        match self {
            ExperimentFiles::Dir(dir) => {
                discover(dir)?.iter().map(|p| Experiment::load(p)).collect()
            }
            ExperimentFiles::Builtin(data_dir) => BUILTIN
                .iter()
                .map(|(file, text)| Experiment::builtin(file, text, data_dir))
                .collect(),
        }
    }

    /// Where they come from, for messages.
    pub fn describe(&self) -> String {
        match self {
            ExperimentFiles::Dir(dir) => dir.display().to_string(),
            ExperimentFiles::Builtin(_) => "the built-in experiments".into(),
        }
    }
}

/// The experiment files of a directory, sorted by name.
pub fn discover(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| {
            Error::file(
                dir.display(),
                format!("cannot read experiments directory: {e}"),
            )
        })?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    v.sort();
    if v.is_empty() {
        return Err(Error::file(dir.display(), "no experiment files (*.toml)"));
    }
    Ok(v)
}

/// The outcome of one experiment.
pub struct Outcome {
    pub experiment: Experiment,
    pub evaluation: Evaluation,
    pub seconds: f64,
    /// The runs to draw roofline charts of, when the experiment asks for them.
    pub rooflines: Option<Vec<Run>>,
}

/// Figures and facts the models of one evaluation use.
pub struct ModelSetup<'a> {
    pub catalog: &'a Catalog,
    /// Figures for our models.
    pub ours: &'a Calibration,
    /// Figures for `analytical-study` (the study's own, to reproduce it).
    pub study: &'a Calibration,
    /// Per-architecture kernel resources for our models.
    pub resources: Option<&'a KernelResources>,
    /// Where our models put a target's launch floor (chosen per fit by default).
    pub launch_floors: crate::models::LaunchFloors,
}

/// Evaluate several models under one protocol, `analytical-study` with the study's
/// figures and every other model with ours; results keep the order of `models`.
pub fn evaluate_models(
    runs: &[Run],
    protocol: &Protocol,
    selection: &Selection,
    models: &[ModelSpec],
    setup: ModelSetup,
    progress: &(dyn Fn() + Sync),
) -> Result<Evaluation> {
    use crate::models::Fit;
    protocol.check(runs, setup.catalog)?;
    let mut evaluation = Evaluation::default();
    for is_study in [true, false] {
        let group: Vec<&dyn Fit> = models
            .iter()
            .filter(|m| m.is_study() == is_study)
            .map(|m| m as &dyn Fit)
            .collect();
        if group.is_empty() {
            continue;
        }
        let ctx = Context::new(
            setup.catalog,
            if is_study { setup.study } else { setup.ours },
            if is_study { None } else { setup.resources },
        )
        .with_launch_floors(setup.launch_floors);
        let e = evaluation::evaluate(runs, protocol, selection, &group, &ctx, progress)?;
        evaluation.protocol = e.protocol;
        evaluation.excluded_rows = e.excluded_rows;
        evaluation.results.extend(e.results);
        evaluation.records.extend(e.records);
        evaluation.unpredicted.extend(e.unpredicted);
        evaluation.fit_summaries.extend(e.fit_summaries);
    }
    let names: Vec<String> = models.iter().map(|m| m.name()).collect();
    let order = |m: &str| names.iter().position(|x| x == m).unwrap_or(usize::MAX);
    evaluation.results.sort_by_key(|r| order(&r.model));
    Ok(evaluation)
}

/// Run one experiment on loaded, validated runs. `analytical-study` uses the
/// experiment's `study_calibration` (the study's own figures when the data ships
/// them); every other model uses `calibration` (catalog-only by default).
pub fn run(
    exp: &Experiment,
    runs: &[Run],
    files: &[String],
    catalog: &Catalog,
    study_metrics: Option<&Path>,
    progress: &(dyn Fn() + Sync),
) -> Result<Outcome> {
    let start = Instant::now();
    let in_exp = |e: Error| Error::msg(format!("experiment '{}': {e}", exp.name));
    let ours = Calibration::new(exp.calibration, study_metrics, catalog).map_err(in_exp)?;
    let study = Calibration::for_study(exp.study_calibration, study_metrics, &ours, catalog)
        .map_err(in_exp)?;
    let resources = match exp.resources.as_deref() {
        Some(p) if p == Path::new(SHIPPED_RESOURCES) => Some(KernelResources::shipped()?),
        p => KernelResources::load(p)?,
    };
    let selection = exp.selection.resolved(catalog, runs).map_err(in_exp)?;
    let mut evaluation = evaluate_models(
        runs,
        &exp.protocol,
        &selection,
        &exp.model_specs()?,
        ModelSetup {
            catalog,
            ours: &ours,
            study: &study,
            resources: resources.as_ref(),
            launch_floors: Default::default(),
        },
        progress,
    )
    .map_err(in_exp)?;
    evaluation.data = files.to_vec();
    Ok(Outcome {
        experiment: exp.clone(),
        evaluation,
        seconds: start.elapsed().as_secs_f64(),
        rooflines: None,
    })
}

/// Ours beside the published figures, one row per model (pooled over targets).
pub fn comparison_table(o: &Outcome) -> Table {
    let mut t = Table::new(&[
        "model",
        "n",
        "MAPE % (ours)",
        "MAPE % (published)",
        "median ratio (ours)",
        "median ratio (published)",
        "within 10 % (ours)",
        "(published)",
        "within 25 % (ours)",
        "(published)",
        "within 50 % (ours)",
        "(published)",
    ]);
    let published = o.experiment.published.clone().unwrap_or_default();
    let opt = |v: Option<f64>, digits: usize| {
        v.map(|x| format!("{x:.digits$}"))
            .unwrap_or_else(|| "-".into())
    };
    for r in o.evaluation.results.iter().filter(|r| r.target == "all") {
        let p = published.models.get(&r.model).copied().unwrap_or_default();
        let m = &r.metrics;
        t.push(vec![
            r.model.clone(),
            m.n.to_string(),
            pct(m.mape),
            opt(p.mape, 2),
            format!("{:.2}", m.median_ratio),
            opt(p.median_ratio, 2),
            pct(100.0 * m.within_10),
            opt(p.within_10, 2),
            pct(100.0 * m.within_25),
            opt(p.within_25, 2),
            pct(100.0 * m.within_50),
            opt(p.within_50, 2),
        ]);
    }
    t
}

/// Names `reproduce` gives its own files ([`write_reproduction`]'s summaries): no
/// experiment may take them.
const RESERVED_NAMES: [&str; 2] = ["summary", "summary_wide"];

/// Write a file of this run, and list it; a second file of the same name (two
/// experiments' outputs that collide) is an error, not a silent replacement.
fn write(path: &Path, text: &str, written: &mut Vec<PathBuf>) -> Result<()> {
    if written.iter().any(|w| w == path) {
        return Err(Error::file(
            path.display(),
            "two outputs of this run have this name (an experiment's name and another's outputs): rename one",
        ));
    }
    report::write_atomic(path, text)?;
    written.push(path.to_path_buf());
    Ok(())
}

/// Write an experiment's tables (and plots) under `out`.
pub fn write_outputs(o: &Outcome, out: &Path, with_plots: bool) -> Result<Vec<PathBuf>> {
    let name = &o.experiment.name;
    let mut written = Vec::new();
    let cmp = comparison_table(o);
    let results = report::results_table(&o.evaluation);
    let per_kernel = report::per_kernel_table(&o.evaluation);
    let missing: Vec<String> = o
        .evaluation
        .unpredicted_counts()
        .map(|(m, n)| format!("{m} {n}"))
        .collect();
    let mut md = format!(
        "# {}\n\nProtocol `{}`; figures `{}` (analytical-study: `{}`); kernel resources: {}; data: {}.\n",
        o.experiment.title,
        o.evaluation.protocol,
        o.experiment.calibration.name(),
        o.experiment.study_calibration.map(FiguresSource::name).unwrap_or("study, when gpu_metrics.json is beside the data"),
        o.experiment.resources.as_ref().map(|p| p.display().to_string()).unwrap_or_else(|| "the runs' own columns".into()),
        o.evaluation.data.join(", ")
    );
    md += &format!(
        "Rows excluded by the validation rules (`data::validate`): {}{}.\n\n",
        o.evaluation.excluded_rows,
        if missing.is_empty() {
            String::new()
        } else {
            format!(
                "; test rows with no prediction (no source measured that work): {}",
                missing.join(", ")
            )
        }
    );
    for line in report::fit_summary_lines(&o.evaluation) {
        md += &format!("Fitted: {line}.\n\n");
    }
    if let Some(p) = &o.experiment.published {
        md += &format!("## Ours beside the published figures ({})\n\n", p.source);
    } else {
        md += "## Pooled results\n\n";
    }
    md += &cmp.to_markdown();
    let corpora: std::collections::BTreeSet<Option<&str>> = o
        .evaluation
        .records
        .iter()
        .map(|r| r.source.as_deref())
        .collect();
    let per_corpus = (matches!(o.evaluation.protocol.as_str(), "loco" | "newer" | "loao")
        || corpora.len() > 1)
        .then(|| report::per_corpus_table(&o.evaluation));
    if let Some(t) = &per_corpus {
        md += &format!("\n## Per corpus (the runs' source; {name}_per_corpus.csv)\n\n");
        md += &t.to_markdown();
    }
    // Narrow views that fit a screen; every metric is in the CSV files beside.
    let narrow = [
        "model",
        "target",
        "kernel",
        "n",
        "MAPE %",
        "MAPE % at known level",
        "median ratio",
        "within 25 %",
        "in interval %",
        "Spearman",
        "top-1 regret",
    ];
    md += &format!("\n## Per target GPU (every metric: {name}_per_target.csv)\n\n");
    md += &results.select(&narrow).to_markdown();
    md +=
        &format!("\n## Per kernel, pooled over targets (every metric: {name}_per_kernel.csv)\n\n");
    md += &per_kernel.select(&narrow).to_markdown();
    write(&out.join(format!("{name}.md")), &md, &mut written)?;
    write(
        &out.join(format!("{name}.csv")),
        &cmp.to_csv(),
        &mut written,
    )?;
    write(
        &out.join(format!("{name}_per_target.csv")),
        &results.to_csv(),
        &mut written,
    )?;
    write(
        &out.join(format!("{name}_per_kernel.csv")),
        &per_kernel.to_csv(),
        &mut written,
    )?;
    if let Some(t) = &per_corpus {
        write(
            &out.join(format!("{name}_per_corpus.csv")),
            &t.to_csv(),
            &mut written,
        )?;
    }
    write(
        &out.join(format!("{name}_predictions.csv")),
        &report::records_table(&o.evaluation).to_csv(),
        &mut written,
    )?;

    if with_plots && o.experiment.plots {
        written.extend(plots::evaluation_plots(&o.evaluation.records, name, out)?);
    }
    Ok(written)
}

/// The distinct GPUs of `runs`, sorted: one chart each.
pub fn gpus_of(runs: &[Run]) -> Vec<&str> {
    let mut gpus: Vec<&str> = runs.iter().map(|r| r.gpu.as_str()).collect();
    gpus.sort();
    gpus.dedup();
    gpus
}

/// A roofline chart per GPU: every run with FLOPs at its achieved GFLOP/s, and every run
/// that moves DRAM bytes (pure memory kernels included) at its achieved GB/s.
pub fn roofline_plots(runs: &[Run], catalog: &Catalog, out: &Path) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let gpus = gpus_of(runs);
    for g in gpus {
        let gpu = catalog.resolve_or_err(g)?;
        let figs = Calibration::Spec.figures(gpu)?;
        let points: Vec<plots::RoofPoint> = runs
            .iter()
            .filter(|r| r.gpu == g && !is_excluded(r))
            .map(|r| plots::RoofPoint {
                kernel: r.kernel.to_string(),
                flops: r.flops,
                dram_bytes: r.dram_bytes,
                time_ms: r.time_ms,
            })
            .collect();
        let p = out.join(roofline_file(g, false));
        plots::roofline(
            &p,
            &format!("Roofline: {g} (catalog peaks)"),
            roofline::peak_gflops(gpu, "fp32"),
            gpu.mem_bandwidth_gbs,
            Some(figs.l2_gbs),
            &points,
        )?;
        written.push(p);
    }
    Ok(written)
}

/// The runs of `paths` for roofline charts: files as given (runs tables, Nsight
/// Compute exports, ...), directories searched for runs files and Nsight Compute
/// exports (in name order); imported with `opts` and validated against `catalog`.
pub fn load_profiles(
    paths: &[PathBuf],
    opts: &crate::data::import::ImportOptions,
    catalog: &Catalog,
) -> Result<Vec<Run>> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let runs_files = crate::data::runs_files_in(p)?;
            let mut found: Vec<PathBuf> = crate::files::walk(p)?
                .into_iter()
                .filter(|f| runs_files.contains(f) || crate::data::ncu::looks_like_ncu(f))
                .collect();
            if found.is_empty() {
                return Err(Error::io(
                    p.display(),
                    "no runs files or Nsight Compute exports in this directory",
                ));
            }
            found.sort();
            files.extend(found);
        } else {
            files.push(p.clone());
        }
    }
    Ok(crate::data::load_validated_with(&files, opts, catalog)?
        .0
        .runs)
}

/// The file name of a GPU's roofline chart: `roofline_<gpu>.svg`, or
/// `instruction_roofline_<gpu>.svg` for the instruction roofline.
pub fn roofline_file(gpu: &str, instruction: bool) -> String {
    let kind = if instruction { "instruction_" } else { "" };
    format!("{kind}roofline_{}.svg", plots::file_slug(gpu))
}

/// An instruction roofline chart per GPU ([`plots::instruction_roofline`]): the
/// catalog's ceilings of the GPU ([`instruction::ceilings`]), one point per kernel and
/// memory level of the runs that carry warp instructions and transactions (runs
/// validation excludes are left out). A GPU none of whose runs has them gets no chart.
pub fn instruction_roofline_plots(
    runs: &[Run],
    catalog: &Catalog,
    out: &Path,
) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let gpus = gpus_of(runs);
    for g in gpus {
        let gpu = catalog.resolve_or_err(g)?;
        let points = instruction::points(
            runs.iter().filter(|r| r.gpu == g && !is_excluded(r)),
            gpu.warp_size,
        );
        if points.is_empty() {
            continue;
        }
        let p = out.join(roofline_file(g, true));
        plots::instruction_roofline(
            &p,
            &format!("Instruction roofline: {g}"),
            &instruction::ceilings(gpu),
            &points,
        )?;
        written.push(p);
    }
    Ok(written)
}

/// The summary that fits a screen: one row per experiment and model, pooled MAPE
/// beside the published figure and beside its value with each kernel's level on each
/// target known (the rest is the level's), the worst target, the interval's coverage and, for
/// tuning spaces, Spearman and top-1 regret.
pub fn summary_table(outcomes: &[Outcome]) -> Table {
    let mut t = Table::new(&[
        "experiment",
        "protocol",
        "model",
        "n",
        "MAPE %",
        "published",
        "at known level %",
        "worst target (MAPE %)",
        "in interval %",
        "Spearman",
        "regret",
        "launch-bound MAPE % (in interval %)",
        "work-bound MAPE % (in interval %)",
    ]);
    for o in outcomes {
        for m in &o.experiment.models {
            let rows: Vec<_> = o
                .evaluation
                .results
                .iter()
                .filter(|r| &r.model == m && r.metrics.n > 0)
                .collect();
            let Some(all) = rows.iter().find(|r| r.target == "all") else {
                continue;
            };
            let worst = rows
                .iter()
                .filter(|r| r.target != "all")
                .max_by(|a, b| a.metrics.mape.total_cmp(&b.metrics.mape))
                .map(|r| format!("{} ({})", short_gpu(&r.target), pct(r.metrics.mape)))
                .unwrap_or_else(|| "-".into());
            let published = o
                .experiment
                .published
                .as_ref()
                .and_then(|p| p.models.get(m))
                .and_then(|f| f.mape);
            let cells = report::metric_cells(&all.metrics);
            let m_ = &all.metrics;
            t.push(vec![
                o.experiment.name.clone(),
                o.evaluation.protocol.clone(),
                m.clone(),
                m_.n.to_string(),
                pct(m_.mape),
                published
                    .map(|x| format!("{x:.2}"))
                    .unwrap_or_else(|| "-".into()),
                pct(m_.mape_known_level),
                worst,
                cells[8].clone(),
                cells[9].clone(),
                cells[10].clone(),
                report::regime_cell(
                    m_.n_launch_bound,
                    m_.mape_launch_bound,
                    m_.coverage_launch_bound,
                ),
                report::regime_cell(m_.n_work_bound, m_.mape_work_bound, m_.coverage_work_bound),
            ]);
        }
    }
    t
}

/// A GPU name without the vendor prefix, for narrow tables.
fn short_gpu(name: &str) -> &str {
    name.strip_prefix("NVIDIA ")
        .map(|n| n.strip_prefix("GeForce ").unwrap_or(n))
        .unwrap_or(name)
}

/// Every model's pooled MAPE per experiment, ours beside published, side by side:
/// wide, so written as CSV only (`summary_wide.csv`).
pub fn summary_wide_table(outcomes: &[Outcome]) -> Table {
    let mut headers: Vec<String> = vec!["model".into()];
    for o in outcomes {
        headers.push(format!("{} (ours)", o.experiment.name));
        headers.push(format!("{} (published)", o.experiment.name));
    }
    let mut models: Vec<String> = Vec::new();
    for o in outcomes {
        for m in &o.experiment.models {
            if !models.contains(m) {
                models.push(m.clone());
            }
        }
    }
    let mut t = Table {
        headers,
        rows: Vec::new(),
    };
    for m in models {
        let mut row = vec![m.clone()];
        for o in outcomes {
            let ours = o
                .evaluation
                .results
                .iter()
                .find(|r| r.model == m && r.target == "all")
                .map(|r| r.metrics.clone());
            row.push(
                ours.map(|x: Metrics| pct(x.mape))
                    .unwrap_or_else(|| "-".into()),
            );
            let p = o
                .experiment
                .published
                .as_ref()
                .and_then(|p| p.models.get(&m))
                .and_then(|f| f.mape);
            row.push(p.map(|x| format!("{x:.2}")).unwrap_or_else(|| "-".into()));
        }
        t.push(row);
    }
    t
}

/// What `reproduce` did: each experiment's outcome, the summary table, the files
/// written and the wall time of each stage.
pub struct Reproduction {
    pub outcomes: Vec<Outcome>,
    /// The co-run study ([`corun::STUDY`]), run with the built-in experiments on the
    /// shipped data.
    pub corun: Option<corun::Outcome>,
    pub summary: Table,
    pub files: Vec<PathBuf>,
    pub load_seconds: f64,
    pub write_seconds: f64,
}

/// Options of [`reproduce`].
pub struct ReproduceOptions<'a> {
    /// Runs every experiment evaluates instead of its own `data` (empty: its own).
    pub data: &'a [PathBuf],
    pub experiments: ExperimentFiles<'a>,
    pub out: &'a Path,
    pub plots: bool,
}

/// Whether a (kernel, config) is in a deterministic `fraction` of all configurations:
/// the same on every GPU, so sampled runs still pair across GPUs.
pub fn in_sample(run: &Run, fraction: f64) -> bool {
    ((crate::data::work_hash(run) % 1_000_000) as f64) < fraction * 1_000_000.0
}

/// What a load of data is keyed by: its files and the exports whose instruction
/// counts join it.
type LoadKey = (Vec<PathBuf>, Vec<PathBuf>);

/// Loaded, validated runs of one data set.
struct Loaded {
    table: crate::data::RunsTable,
    report: crate::data::ValidationReport,
    study_metrics: Option<PathBuf>,
    /// What joining instruction counts did ([`with_instruction_counts`]), if asked.
    counts: Option<CountsJoined>,
}

/// Run every experiment of a directory and write tables and plots into `opts.out`:
/// everything is written into a hidden directory inside it first (removed if the run is
/// stopped), then each file is renamed into place, listed in [`MANIFEST`]; files the run does not
/// write are left alone. `progress` is told each experiment's name before it runs.
pub fn reproduce(
    opts: &ReproduceOptions,
    catalog: &Catalog,
    progress: &dyn Fn(&str, usize, usize),
) -> Result<Reproduction> {
    let exps = opts.experiments.load()?;
    check_names_unique(&exps, opts)?;
    // (every file an experiment may read stays an input, read this run or not)
    let inputs: Vec<PathBuf> = exps.iter().flat_map(|e| e.may_read(opts)).collect();
    crate::files::protect_inputs(&inputs);
    check_out_dir(opts.out)?;
    let mut loaded: Vec<(LoadKey, Loaded)> = Vec::new();
    let mut load_seconds = 0.0;
    let mut outcomes = Vec::new();
    let mut notes = Vec::new();
    for (i, e) in exps.iter().enumerate() {
        progress(&e.name, i, exps.len());
        let data = experiment_data(e, opts)?;
        let exports = if opts.data.is_empty() {
            e.instruction_counts.clone()
        } else {
            Vec::new()
        };
        let key = (data, exports);
        if !loaded.iter().any(|(k, _)| *k == key) {
            let t = Instant::now();
            let (mut table, report) = crate::data::load_validated(&key.0, catalog)?;
            let counts = if key.1.is_empty() {
                None
            } else {
                let profiles = load_profiles(&key.1, &Default::default(), catalog)?;
                Some(with_instruction_counts(&mut table.runs, &profiles, catalog))
            };
            load_seconds += t.elapsed().as_secs_f64();
            let study_metrics = crate::features::study_metrics_beside(&key.0);
            loaded.push((
                key.clone(),
                Loaded {
                    table,
                    report,
                    study_metrics,
                    counts,
                },
            ));
        }
        let l = &loaded
            .iter()
            .find(|(k, _)| *k == key)
            .expect("loaded above")
            .1;
        match run_experiment(e, l, opts, catalog)? {
            Ok((o, note)) => {
                notes.push(note);
                outcomes.push(o);
            }
            Err(skipped) => notes.push(skipped),
        }
    }
    if outcomes.is_empty() {
        let kernels = loaded
            .first()
            .map(|(_, l)| kernel_list(&l.table.runs))
            .unwrap_or_default();
        // every experiment was skipped: say why for each
        let why: Vec<&str> = notes.iter().filter_map(|n| n.strip_prefix("- ")).collect();
        return Err(Error::usage(format!(
            "no experiment can run on the data given (kernels: {kernels}): {}",
            why.join("; ")
        )));
    }
    let corun = match (&opts.experiments, opts.data.is_empty()) {
        (ExperimentFiles::Builtin(data_dir), true) => {
            progress(corun::STUDY.0, exps.len(), exps.len());
            Some(corun::run(corun::Study::builtin(data_dir)?, catalog)?)
        }
        _ => None,
    };
    progress("writing", exps.len(), exps.len());
    let t_write = Instant::now();
    let (summary, files) =
        write_reproduction(&mut outcomes, corun.as_ref(), &notes, opts, catalog)?;
    Ok(Reproduction {
        outcomes,
        corun,
        summary,
        files,
        load_seconds,
        write_seconds: t_write.elapsed().as_secs_f64(),
    })
}

/// An error when two experiment files share a name (their outputs would collide).
fn check_names_unique(exps: &[Experiment], opts: &ReproduceOptions) -> Result<()> {
    for (i, e) in exps.iter().enumerate() {
        if exps[..i].iter().any(|o| o.name == e.name) {
            return Err(Error::file(
                opts.experiments.describe(),
                format!(
                    "two experiment files are named '{}': their outputs would overwrite each other",
                    e.name
                ),
            ));
        }
    }
    Ok(())
}

/// The data files experiment `e` runs on: those given with --data, else its own.
fn experiment_data(e: &Experiment, opts: &ReproduceOptions) -> Result<Vec<PathBuf>> {
    let data = if opts.data.is_empty() {
        e.data.clone()
    } else {
        opts.data.to_vec()
    };
    if data.is_empty() {
        return Err(Error::usage(format!(
            "experiment '{}' names no data: give it `data = [...]` or pass --data",
            e.name
        )));
    }
    Ok(data)
}

/// Run experiment `e` on its loaded data `l`: its outcome and the note on the data it
/// evaluated, or the note saying why it is skipped (with other data given with --data).
fn run_experiment(
    e: &Experiment,
    l: &Loaded,
    opts: &ReproduceOptions,
    catalog: &Catalog,
) -> Result<std::result::Result<(Outcome, String), String>> {
    // SM partitions as GPUs of their own: this experiment's table and catalog
    let as_gpus;
    let (l, exp_catalog) = match e.sm_partitions {
        SmPartitions::Exclude => (l, catalog),
        SmPartitions::AsGpus => {
            let (table, report, cat) = crate::data::partitions_as_gpus(&l.table, catalog)?;
            as_gpus = (
                Loaded {
                    table,
                    report,
                    study_metrics: l.study_metrics.clone(),
                    counts: l.counts,
                },
                cat,
            );
            (&as_gpus.0, &as_gpus.1)
        }
    };
    if let (Some(ks), true) = (&e.kernels, opts.data.is_empty()) {
        if let Some(k) = ks
            .iter()
            .find(|k| !l.table.runs.iter().any(|r| *r.kernel == ***k))
        {
            return Err(Error::usage(format!(
                "experiment '{}': kernel '{k}' is not in its data (kernels: {})",
                e.name,
                kernel_list(&l.table.runs)
            )));
        }
    }
    // A gate names a target as the results spell it ("NVIDIA TITAN V", "corpus: NAME"):
    // a short or unknown name would fail the gate only after the run.
    for (model, g) in &e.gate {
        for t in g.target_mape_max.keys() {
            let gpu = t.rsplit(": ").next().unwrap_or(t);
            let why = match exp_catalog.resolve(gpu) {
                Some(found) if found.name == gpu => continue,
                Some(found) => format!("results name it '{}'", t.replace(gpu, &found.name)),
                None => exp_catalog.unresolved_hint(gpu).to_string(),
            };
            return Err(Error::usage(format!(
                "experiment '{}': gate.{model}.target_mape_max names '{t}': {why}",
                e.name
            )));
        }
    }
    if let Some(v) = e.vendors.iter().flatten().find(|v| {
        !exp_catalog
            .vendors()
            .iter()
            .any(|known| known.eq_ignore_ascii_case(v))
    }) {
        return Err(Error::usage(format!(
            "experiment '{}': vendor '{v}' is not one of the catalog's ({})",
            e.name,
            exp_catalog.vendors().join(", ")
        )));
    }
    let selected: Vec<Run>;
    let runs = if e.is_sampled() || e.kernels.is_some() || e.vendors.is_some() {
        selected = selected_runs(e, &l.table.runs, exp_catalog);
        if selected.is_empty() {
            if opts.data.is_empty() {
                return Err(Error::usage(format!(
                    "experiment '{}': no rows of its kernels in its data",
                    e.name
                )));
            }
            // Other data given with --data: this experiment's kernels are not in it.
            return Ok(Err(format!(
                "- {}: skipped (none of its kernels is in the data given)",
                e.name
            )));
        }
        &selected[..]
    } else {
        &l.table.runs[..]
    };
    if !opts.data.is_empty() {
        if let Err(why) = e.protocol.check(runs, exp_catalog) {
            // Other data given with --data: not what this experiment's protocol needs.
            return Ok(Err(format!("- {}: skipped ({why})", e.name)));
        }
    }
    if !opts.data.is_empty() && e.selection.resolved(exp_catalog, runs).is_err() {
        // Other data given with --data: the GPUs this experiment selects are not in it.
        return Ok(Err(format!(
            "- {}: skipped (the GPUs it selects are not in the data given)",
            e.name
        )));
    }
    let note = data_note(e, l, runs);
    let mut o = run(
        e,
        runs,
        &l.table.files,
        exp_catalog,
        l.study_metrics.as_deref(),
        &|| {},
    )?;
    if o.evaluation.records.is_empty() {
        // (an empty test set, targets that are also the only sources, ...)
        return Err(Error::usage(format!(
            "experiment '{}': its protocol and selection leave no measured run to score ({} runs in its data{}): check its test kernels, targets and sources",
            e.name,
            runs.len(),
            o.evaluation
                .unpredicted
                .iter()
                .map(|(m, n)| format!("; {m}: {n} test rows without a prediction"))
                .collect::<String>()
        )));
    }
    if e.roofline && opts.plots {
        // whole GPUs only: the roofline charts draw the built-in catalog's roofs
        let whole = runs.iter().filter(|r| catalog.resolve(&r.gpu).is_some());
        o.rooflines = Some(whole.cloned().collect());
    }
    Ok(Ok((o, note)))
}

/// The runs of `all` that experiment `e` evaluates: its kernels, its vendors' GPUs
/// (as `catalog` names them), its sample.
fn selected_runs(e: &Experiment, all: &[Run], catalog: &Catalog) -> Vec<Run> {
    all.iter()
        .filter(|r| {
            e.kernels
                .as_ref()
                .is_none_or(|k| k.iter().any(|k| r.kernel == *k))
        })
        .filter(|r| {
            e.vendors.as_ref().is_none_or(|vs| {
                catalog
                    .resolve(&r.gpu)
                    .is_some_and(|g| vs.iter().any(|v| g.vendor.eq_ignore_ascii_case(v.trim())))
            })
        })
        .filter(|r| e.sample_of(r).is_none_or(|f| in_sample(r, f)))
        .cloned()
        .collect()
}

/// The summary's line on the data experiment `e` evaluated (`runs`, of `l`).
fn data_note(e: &Experiment, l: &Loaded, runs: &[Run]) -> String {
    format!(
        "- {}: {} ({} rows{}; {} flagged; excluded by the validation rules: {}{})",
        e.name,
        l.table.files.join(", "),
        l.report.rows,
        if runs.len() < l.table.runs.len() {
            format!(
                ", {} of them evaluated ({}{})",
                runs.len(),
                e.kernels
                    .as_ref()
                    .map(|k| k.join(", "))
                    .unwrap_or_else(|| "all kernels".into()),
                e.sample
                    .map(|f| format!(", a {:.1} % sample of configurations", 100.0 * f))
                    .unwrap_or_default()
                    + &e.sample_sources
                        .iter()
                        .map(|(s, f)| format!(", {:.1} % of {s}'s", 100.0 * f))
                        .collect::<String>()
            )
        } else {
            String::new()
        },
        l.report.flagged,
        l.report.excluded_by_rule,
        crate::report::not_imported_text(&l.report)
            .map(|t| format!("; {t}"))
            .unwrap_or_default()
    ) + &l
        .counts
        .map(|c| {
            format!(
                "; instruction counts of {} runs from its Nsight Compute exports ({} left without: a launch more than one run or export has)",
                c.joined, c.ambiguous
            )
        })
        .unwrap_or_default()
}

/// Write every outcome's files and the summaries into a staging directory, then
/// move them into `opts.out`: the summary table and the files written there.
fn write_reproduction(
    outcomes: &mut [Outcome],
    corun: Option<&corun::Outcome>,
    notes: &[String],
    opts: &ReproduceOptions,
    catalog: &Catalog,
) -> Result<(Table, Vec<PathBuf>)> {
    let staged = crate::files::Staging::new(opts.out, "reproduce-")?;
    let staging = staged.path();
    let mut files = Vec::new();
    for o in outcomes.iter_mut() {
        files.extend(write_outputs(o, staging, opts.plots)?);
        if let Some(runs) = o.rooflines.take() {
            files.extend(roofline_plots(&runs, catalog, staging)?);
        }
        let profiles = &o.experiment.instruction_roofline;
        if opts.plots && opts.data.is_empty() && !profiles.is_empty() {
            let runs = load_profiles(profiles, &Default::default(), catalog)?;
            files.extend(instruction_roofline_plots(&runs, catalog, staging)?);
        }
    }
    if let Some(c) = corun {
        let t = corun::table(&c.rows);
        let md = format!("# {}\n\n{}", c.study.title, t.to_markdown());
        write(
            &staging.join(format!("{}.md", c.study.name)),
            &md,
            &mut files,
        )?;
        write(
            &staging.join(format!("{}.csv", c.study.name)),
            &t.to_csv(),
            &mut files,
        )?;
    }
    let summary = summary_table(outcomes);
    let mut md = String::from("# Every experiment: pooled MAPE (ours beside published; at known level: with each kernel's level on each target known, the rest is the level's), worst target, interval coverage, tuning-space ranking\n\n");
    md += &summary.to_markdown();
    md += "\nPer target, per kernel and every other metric: each experiment's own file; all models side by side: summary_wide.csv.\n\nData per experiment:\n\n";
    md += &notes.join("\n");
    md += "\n";
    write(&staging.join("summary.md"), &md, &mut files)?;
    write(&staging.join("summary.csv"), &summary.to_csv(), &mut files)?;
    write(
        &staging.join("summary_wide.csv"),
        &summary_wide_table(outcomes).to_csv(),
        &mut files,
    )?;
    publish::publish(&staged, opts.out, &files)?;
    let files = files.iter().map(|f| staged.destination(f)).collect();
    Ok((summary, files))
}

/// The kernels of `runs`, sorted, at most 20 named.
fn kernel_list(runs: &[Run]) -> String {
    let mut ks: Vec<&str> = runs.iter().map(|r| &*r.kernel).collect();
    ks.sort_unstable();
    ks.dedup();
    let more = ks.len().saturating_sub(20);
    let mut s = ks[..ks.len().min(20)].join(", ");
    if more > 0 {
        s += &format!(" and {more} more");
    }
    s
}

pub use publish::MANIFEST;

/// `out` can take the run's files: missing (it is made) or a directory whose manifest,
/// if any, is gpucast's own ([`publish`]): checked before any work.
fn check_out_dir(out: &Path) -> Result<()> {
    match std::fs::metadata(out) {
        Ok(m) if !m.is_dir() => Err(Error::refused(
            out.display(),
            "is a file, not a directory: give --out a directory (reproduce writes many files)",
        )),
        Ok(_) => publish::read_manifest(out).map(|_| ()),
        Err(_) => Ok(()),
    }
}

#[cfg(test)]
mod data_dir_tests {
    use super::*;

    /// SYNTHETIC runs and profiles: counts join the one run of a launch, on as many
    /// SMs; two configurations of one launch get none.
    #[test]
    fn instruction_counts_join_the_run_of_their_launch() {
        let catalog = Catalog::builtin();
        let run = |config: &str, grid: f64, sms: Option<f64>, warp: Option<f64>| {
            let mut r = Run {
                gpu: "H100 SXM5".into(),
                kernel: "k".into(),
                config: config.into(),
                block_threads: Some(256.0),
                grid_blocks: Some(grid),
                time_ms: 1.0,
                ..Run::default()
            };
            r.details_mut().sm_count = sms;
            r.details_mut().inst_warp = warp;
            r.details_mut().inst_thread = warp.map(|w| w * 32.0);
            r
        };
        let mut runs = vec![
            run("N=1", 16.0, None, None),
            run("N=1", 16.0, Some(16.0), None), // a 16-SM partition: no profile
            run("N=2,iters=1", 32.0, None, None),
            run("N=2,iters=2", 32.0, None, None),
            run("N=3", 64.0, None, Some(7.0)), // its own count is kept
            run("N=4", 128.0, None, None),     // not profiled
        ];
        let profiles = [
            run("grid=16", 16.0, Some(132.0), Some(100.0)),
            run("grid=32", 32.0, Some(132.0), Some(200.0)),
            run("grid=64", 64.0, Some(132.0), Some(400.0)),
        ];
        let joined = with_instruction_counts(&mut runs, &profiles, &catalog);
        assert_eq!(
            joined,
            CountsJoined {
                joined: 2,
                ambiguous: 2
            }
        );
        let warp: Vec<Option<f64>> = runs.iter().map(|r| r.details().inst_warp).collect();
        assert_eq!(warp, [Some(100.0), None, None, None, Some(7.0), None]);
        assert_eq!(runs[0].details().inst_thread, Some(3200.0));
        assert_eq!(runs[0].time_ms, 1.0);
    }

    #[test]
    fn paths_of_built_in_experiments_join_lexically() {
        let base = Path::new("/nowhere/experiments");
        assert_eq!(
            join_lexically(base, Path::new("../datasets/public/x")),
            Path::new("/nowhere/datasets/public/x")
        );
        assert_eq!(
            join_lexically(Path::new("./experiments"), Path::new("../d")),
            Path::new("./d")
        );
        assert_eq!(
            join_lexically(Path::new("."), Path::new("../d")),
            Path::new("./../d")
        );
        assert_eq!(
            join_lexically(base, Path::new("/abs/d")),
            Path::new("/abs/d")
        );
    }

    #[test]
    fn the_data_directory_is_the_flag_then_the_environment_then_here() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("datasets")).unwrap();
        let other = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert_eq!(
            data_dir(Some(d), Some(other.path().as_os_str())).unwrap(),
            d
        );
        assert_eq!(data_dir(None, Some(d.as_os_str())).unwrap(), d);
        let e = data_dir(Some(other.path()), None).unwrap_err();
        assert!(e.to_string().starts_with("--data-dir "), "{e}");
        assert!(e.to_string().contains("no datasets/ folder"), "{e}");
        let e = data_dir(None, Some(other.path().as_os_str())).unwrap_err();
        assert!(e.to_string().starts_with("GPUCAST_DATA "), "{e}");
        // (the tests run in the checkout, which has datasets/; an empty variable is unset)
        assert_eq!(
            data_dir(None, Some(std::ffi::OsStr::new(""))).unwrap(),
            Path::new(".")
        );
    }
}
