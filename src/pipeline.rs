//! What the commands that predict do, from their options to their result: the target
//! GPU resolved once ([`Target`]), the runs loaded, the figures and the model chosen,
//! the context built, the model fitted and the rows predicted. A front end (the
//! `gpucast` binary) parses its arguments into these options, calls one function and
//! prints what it returns.

use crate::catalog::{Catalog, Gpu};
use crate::data::{self, import::ImportOptions, Run, RunsTable, ValidationReport};
use crate::error::{Error, Input, Result};
use crate::features::{study_metrics_beside, Calibration, FiguresSource, KernelResources};
use crate::models::{hybrid::FittedHybrid, Context, Interval, LaunchFloors, Prediction};
use crate::predict::{self, predict_table, ModelChoice, Predictions};
use std::path::{Path, PathBuf};

/// A GPU named by a caller, resolved in the catalog once: its catalog name, and the
/// catalog to use with it (the given one with the partition added when the name is a
/// partition of a GPU, "H100 SXM5 [16 SMs]").
#[derive(Debug, Clone)]
pub struct Target {
    name: String,
    with_partition: Option<Catalog>,
}

impl Target {
    /// The GPU `name` names for `input` (exactly: see [`crate::catalog::names`]); a
    /// name that names none or several is an error naming `input`.
    pub fn resolve(catalog: &Catalog, input: Input, name: &str) -> Result<Target> {
        // (a name with brackets may be a partition: its checks come first)
        if !name.contains(['[', ']']) {
            let gpu = resolve_input(catalog, input, name)?;
            return Ok(Target {
                name: gpu.name.clone(),
                with_partition: None,
            });
        }
        let with_partition = catalog.for_partition_name(name)?;
        let in_catalog = with_partition.as_ref().unwrap_or(catalog);
        let gpu = match &with_partition {
            // the partition just added, by the name the catalog gave it
            Some(c) => c
                .gpus()
                .last()
                .filter(|g| g.name.contains('['))
                .map_or_else(|| resolve_input(c, input, name), Ok)?,
            None => resolve_input(in_catalog, input, name)?,
        };
        Ok(Target {
            name: gpu.name.clone(),
            with_partition,
        })
    }
    /// The GPU's catalog name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The catalog the GPU is in: `base` (the one it was resolved in), or that with
    /// its partition.
    pub fn catalog<'c>(&'c self, base: &'c Catalog) -> &'c Catalog {
        self.with_partition.as_ref().unwrap_or(base)
    }
}

/// The GPU `name` names, or an error naming `input`.
pub fn resolve_input<'c>(catalog: &'c Catalog, input: Input, name: &str) -> Result<&'c Gpu> {
    catalog.resolve(name).ok_or_else(|| Error::UnknownInputGpu {
        input,
        name: name.to_string(),
        hint: catalog.unresolved_hint(name),
    })
}

/// Where a command's figures come from (the options every predicting command shares).
#[derive(Debug, Clone, Default)]
pub struct FigureOptions {
    /// Where target figures come from (never from the target's own runs).
    pub target_calibration: FiguresSource,
    /// The reference study's gpu_metrics.json (default: the one beside the data).
    pub study_metrics: Option<PathBuf>,
    /// Per-architecture kernel resources (default: the suite's shipped ones).
    pub resources: Option<PathBuf>,
    /// Use only the runs' own register and shared-memory columns.
    pub no_resources: bool,
    /// Where a target's launch floor comes from when the catalog measures none (None:
    /// the default, or a saved model's own).
    pub launch_floors: Option<LaunchFloors>,
}

impl FigureOptions {
    /// The figures a command's models use: the target calibration for ours; for
    /// analytical-study (`study`) the study's own beside `data` when present.
    pub fn calibration(
        &self,
        study: bool,
        data: &[PathBuf],
        catalog: &Catalog,
    ) -> Result<Calibration> {
        if let Some(p) = self.study_metrics.as_ref().filter(|p| !p.is_file()) {
            return Err(Error::io(p.display(), "no such file"));
        }
        let metrics = self
            .study_metrics
            .clone()
            .or_else(|| study_metrics_beside(data));
        let ours = Calibration::new(self.target_calibration, metrics.as_deref(), catalog)?;
        if study {
            Calibration::for_study(None, metrics.as_deref(), &ours, catalog)
        } else {
            Ok(ours)
        }
    }
    /// The kernel resources asked for: the given file, else the suite's shipped one.
    pub fn kernel_resources(&self) -> Result<Option<KernelResources>> {
        if self.no_resources {
            return Ok(None);
        }
        match &self.resources {
            Some(p) => KernelResources::load(Some(p)),
            None => KernelResources::shipped().map(Some),
        }
    }
    /// Every file these options may read for a command on `data`: the study metrics
    /// (given, or the default beside the data) and the kernel resources.
    pub fn inputs(&self, data: &[PathBuf]) -> Vec<PathBuf> {
        let beside = study_metrics_beside(data);
        self.study_metrics
            .iter()
            .chain(&self.resources)
            .chain(&beside)
            .cloned()
            .collect()
    }
}

/// Runs loaded and validated, with the note on what their files held that was not
/// read as runs ([`crate::report::not_imported_text`]).
pub struct Loaded {
    pub table: RunsTable,
    pub report: ValidationReport,
    pub note: Option<String>,
}

/// Load and validate the runs at `paths`.
pub fn load(paths: &[PathBuf], opts: &ImportOptions, catalog: &Catalog) -> Result<Loaded> {
    let (table, report) = data::load_validated_with(paths, opts, catalog)?;
    let note = crate::report::not_imported_text(&report);
    Ok(Loaded {
        table,
        report,
        note,
    })
}

/// Import options for files in a tool's own format read as runs: `gpu` names the GPU
/// of files that do not (it must name a GPU of the catalog: an unknown one is the
/// option's error, not the file's).
pub fn import_options(gpu: Option<&str>, catalog: &Catalog) -> Result<ImportOptions> {
    if let Some(name) = gpu {
        resolve_input(catalog, Input::Gpu, name)?;
    }
    Ok(ImportOptions {
        gpu: gpu.map(String::from),
        catalog: Some(catalog.clone()),
        ..Default::default()
    })
}

/// Whether [`predictions`] also checks how the model's picks did on the data's own
/// GPUs (`tune`, unless told not to).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PickCheck<'k> {
    No,
    /// The tuning spaces of this kernel (None: of every kernel).
    OnSources(Option<&'k str>),
}

/// What to predict, from what, with which model.
#[derive(Debug, Clone)]
pub struct PredictOptions {
    /// Runs measured on source GPUs.
    pub runs: Vec<PathBuf>,
    /// The GPU the runs were measured on, for files that do not name it.
    pub gpu: Option<String>,
    /// Use only this source GPU's runs (resolved in the target's catalog).
    pub source: Option<String>,
    /// A model name, a saved model (.json) or `pretrained`.
    pub model: String,
    /// Training data for named models (default: `runs`).
    pub data: Vec<PathBuf>,
    /// Seed of the learned models.
    pub seed: u64,
    pub figures: FigureOptions,
}

impl PredictOptions {
    /// Every path a prediction may read: runs, training data, a model file (or the
    /// pre-trained one's), figures.
    pub fn inputs(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = self.runs.iter().chain(&self.data).cloned().collect();
        v.extend(self.figures.inputs(&v));
        if self.model.ends_with(".json") || Path::new(&self.model).is_file() {
            v.push(self.model.clone().into());
        }
        v.extend(predict::pretrained_path());
        v
    }
}

/// Predictions with the notes a front end shows beside them.
pub struct Predicted {
    pub predictions: Predictions,
    /// What the user should know (the runs' files held rows that are not runs; the
    /// pre-trained hybrid stands in for `hybrid`), one line each.
    pub notes: Vec<String>,
}

/// The name of launch floors as options spell them.
pub fn launch_floors_name(f: LaunchFloors) -> &'static str {
    match f {
        LaunchFloors::Catalog => "catalog",
        LaunchFloors::Sources => "sources",
    }
}

/// Fewest source GPUs `hybrid` learns a correction from (of two, each held out in turn
/// leaves a single source to learn from).
const MIN_HYBRID_SOURCE_GPUS: usize = 3;

/// With fewer than [`MIN_HYBRID_SOURCE_GPUS`] source GPUs, the note saying that the
/// pre-trained hybrid stands in for `hybrid`; None with enough of them.
fn pretrained_instead(source_gpus: usize) -> Option<String> {
    (source_gpus < MIN_HYBRID_SOURCE_GPUS).then(|| {
        let from = predict::pretrained_path()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "built in".into());
        format!(
            "note: {source_gpus} source GPU(s) are too few to learn a correction from: using the pre-trained hybrid ({from})"
        )
    })
}

/// The model to use: as asked, except that `hybrid` with no training data of its own
/// (no `data`, runs of too few GPUs besides the target: [`pretrained_instead`]) becomes
/// the pre-trained hybrid, which learned from every corpus (with a note saying so).
pub(crate) fn model_for(
    opts: &PredictOptions,
    table: &RunsTable,
    target: &str,
) -> (String, Option<String>) {
    let source_gpus = table.gpus().iter().filter(|g| *g != target).count();
    if opts.model == "hybrid" && opts.data.is_empty() {
        if let Some(note) = pretrained_instead(source_gpus) {
            return (predict::PRETRAINED_NAME.into(), Some(note));
        }
    }
    (opts.model.clone(), None)
}

/// What a reader of predictions whose interval is only their sources' spread
/// ([`Interval::Spread`]) should know: it is not calibrated (from one source GPU it
/// spans only the memory levels, often nothing), and the pre-trained hybrid
/// calibrates one. None when every interval is calibrated or absent.
fn spread_note(predictions: &[Option<Prediction>]) -> Option<String> {
    let made: Vec<&Prediction> = predictions.iter().flatten().collect();
    let spread = made
        .iter()
        .filter(|p| p.interval == Interval::Spread)
        .count();
    (spread > 0).then(|| {
        format!(
            "note: {spread} of {} predictions have only the spread of their sources' projections as an interval, not a calibrated one (too few source GPUs to hold one out against the others; from one source GPU it spans only the memory levels the work could be served from, often nothing): the pre-trained hybrid (model `{}`) calibrates it on the errors held out on its training GPUs",
            made.len(),
            predict::PRETRAINED_NAME
        )
    })
}

/// The launch floors to project with: a saved model's own (a different floor asked
/// for would be silently ignored: an error), else those asked for or the default.
pub(crate) fn launch_floors_for(
    model: &ModelChoice,
    asked: Option<LaunchFloors>,
) -> Result<LaunchFloors> {
    let ModelChoice::Saved(saved) = model else {
        return Ok(asked.unwrap_or_default());
    };
    let own = saved.state().launch_floors;
    match asked {
        Some(asked) if asked != own => Err(Error::LaunchFloorMismatch {
            asked: launch_floors_name(asked),
            own: launch_floors_name(own),
        }),
        _ => Ok(own),
    }
}

/// The hybrid whose stages `explain` shows: `model` is `hybrid` (fitted on `train`, the
/// runs of the GPUs other than the target; with too few of them the pre-trained hybrid,
/// with a note, as `predict` does: `pretrained_instead`), `pretrained` or a saved model `.json`
/// (whose launch floors must be those asked for, if any).
pub fn hybrid_to_explain(
    model: &str,
    train: &[&Run],
    seed: u64,
    asked_floors: Option<LaunchFloors>,
    ctx: &Context,
) -> Result<(FittedHybrid, Option<String>)> {
    let gpus: std::collections::BTreeSet<&str> = train.iter().map(|r| r.gpu.as_str()).collect();
    let note = (model == "hybrid")
        .then(|| pretrained_instead(gpus.len()))
        .flatten();
    let name = if note.is_some() {
        predict::PRETRAINED_NAME
    } else {
        model
    };
    if name == "hybrid" {
        let fitted = crate::models::hybrid::HybridParams::new(seed).fit_hybrid(train, ctx)?;
        return Ok((fitted, note));
    }
    check_model_to_explain(name)?;
    let choice = ModelChoice::parse(name, seed)?;
    launch_floors_for(&choice, asked_floors)?;
    let ModelChoice::Saved(saved) = choice else {
        return Err(not_a_model_to_explain(model));
    };
    Ok((*saved, note))
}

/// Whether `explain` can show `model`: analytical, hybrid, pretrained or a saved
/// model .json (checked before any data is read).
pub fn check_model_to_explain(model: &str) -> Result<()> {
    match model {
        "analytical" | "hybrid" | predict::PRETRAINED_NAME => Ok(()),
        m if m.ends_with(".json") => Ok(()),
        _ => Err(not_a_model_to_explain(model)),
    }
}

fn not_a_model_to_explain(model: &str) -> Error {
    Error::usage(format!(
        "'{model}' is not a model explain shows the stages of: give analytical, hybrid, {} or a saved hybrid .json",
        predict::PRETRAINED_NAME
    ))
}

/// Load, fit and predict the runs of `opts` on `target` (resolved in `catalog`). With
/// [`PickCheck::OnSources`], a named model is also scored leave-one-GPU-out on the
/// rows of other GPUs than the target, for the kernels of its tuning spaces
/// ([`predict::check_on_sources`]; a saved model is not refitted, so it has nothing to
/// hold out); `checking` is told when that starts (true) and ends (false).
pub fn predictions(
    opts: &PredictOptions,
    target: &Target,
    catalog: &Catalog,
    check: PickCheck,
    checking: &dyn Fn(bool),
) -> Result<Predicted> {
    let catalog = target.catalog(catalog);
    let target = target.name();
    let source = opts
        .source
        .as_deref()
        .map(|s| resolve_input(catalog, Input::Source, s).map(|g| g.name.clone()))
        .transpose()?;
    let mut notes = Vec::new();
    let loaded = load(
        &opts.runs,
        &import_options(opts.gpu.as_deref(), catalog)?,
        catalog,
    )?;
    notes.extend(loaded.note.map(|n| format!("note: {n}")));
    let table = loaded.table;
    let (model_name, note) = model_for(opts, &table, target);
    notes.extend(note);
    let model = ModelChoice::parse(&model_name, opts.seed)?;
    let launch_floors = launch_floors_for(&model, opts.figures.launch_floors)?;
    let cal = opts
        .figures
        .calibration(model.is_study(), &opts.runs, catalog)?;
    let resources = opts.figures.kernel_resources()?;
    let ctx = Context::new(catalog, &cal, resources.as_ref()).with_launch_floors(launch_floors);
    let other_data;
    let training: &[Run] = if opts.data.is_empty() {
        &table.runs
    } else {
        let other = load(&opts.data, &Default::default(), catalog)?;
        notes.extend(other.note.map(|n| format!("note: {n}")));
        other_data = other.table.runs;
        &other_data
    };
    let trained_on_target = match &model {
        ModelChoice::Saved(saved) => saved.state().training_gpus.iter().any(|g| g == target),
        ModelChoice::Named(_) => false,
    };
    let spec_to_check = match (&model, check) {
        (ModelChoice::Named(spec), PickCheck::OnSources(kernel)) => Some((spec.clone(), kernel)),
        _ => None,
    };
    let fitted = model.fitted(training, target, &ctx)?;
    let mut preds = predict_table(&table, fitted.as_ref(), target, source.as_deref(), &ctx)?;
    preds.model_trained_on_target = trained_on_target;
    if model_name != predict::PRETRAINED_NAME {
        notes.extend(spread_note(&preds.predictions));
    }
    if let Some((spec, kernel)) = &spec_to_check {
        let others: Vec<&Run> = table.runs.iter().filter(|r| r.gpu != target).collect();
        let kernels = preds.tuning_space_kernels(*kernel);
        checking(true);
        let checks = predict::check_on_sources(&others, spec, &kernels, source.as_deref(), &ctx);
        checking(false);
        preds.source_checks = checks?;
    }
    Ok(Predicted {
        predictions: preds,
        notes,
    })
}

/// A model's output file (`-o FILE`) checked before any work: not one of `inputs`
/// nor inside an input directory.
pub fn claim_output(path: &Path, inputs: &[PathBuf]) -> Result<()> {
    crate::files::check_output(path, inputs)
}

/// Runs imported as `data import` does: `format` is an importer's name or `auto`
/// (each file's detected), `gpu` (if given) names a GPU of the catalog; with
/// `validate` the rows are checked and flagged, else only GPU names several catalog
/// entries could mean are refused. Returns the table and the import's report.
pub fn import(
    paths: &[PathBuf],
    format: &str,
    opts: ImportOptions,
    validate: bool,
    catalog: &Catalog,
) -> Result<(RunsTable, data::import::ImportReport)> {
    let format = data::import::Format::parse(format)?;
    if let Some(name) = &opts.gpu {
        resolve_input(catalog, Input::Gpu, name)?;
    }
    let mut opts = opts;
    // (a trace's device name resolves against the caller's catalog)
    opts.catalog.get_or_insert_with(|| catalog.clone());
    let imported = data::import::import_paths(paths, format, &opts)?;
    let mut table = imported.table;
    if validate {
        data::validate(&mut table, catalog)?;
    } else {
        data::validate::refuse_ambiguous_gpus(&table, catalog)?;
    }
    Ok((table, imported.report))
}

/// What `tune` ranks must exist in `preds`: the kernel asked for (if any) is in the
/// data, and some tuning space (two or more configurations of one kernel doing the
/// same work) has predictions; the error says why none has.
pub fn check_tuning(preds: &Predictions, kernel: Option<&str>) -> Result<()> {
    if let Some(k) = kernel {
        preds.rows.require_kernel(Input::Kernel, k)?;
    }
    if !preds.tuning_space_kernels(kernel).is_empty() {
        return Ok(());
    }
    let unranked = preds.unranked(kernel);
    let why: Vec<&str> = unranked.iter().map(|(_, note)| note.as_str()).collect();
    Err(Error::usage(format!(
        "no tuning space (two or more configurations of one kernel doing the same work) has predictions{}",
        if why.is_empty() {
            String::new()
        } else {
            format!(" ({})", why.join(". "))
        }
    )))
}

/// The notes `tune` shows below its ranking, one line each: the target's own rows
/// left out, spaces of ranked kernels left unranked, and how the first pick did where
/// the data measured the target (and, checked, on the data's other GPUs).
pub fn tuning_notes(preds: &Predictions, kernel: Option<&str>) -> Vec<String> {
    let mut notes: Vec<String> = preds.target_rows_note().into_iter().collect();
    let ranked = preds.tuning_space_kernels(kernel);
    for (_, note) in preds
        .unranked(kernel)
        .iter()
        .filter(|(k, _)| ranked.contains(k))
    {
        notes.push(format!("note: {note}"));
    }
    for check in preds.checked_on_target(kernel) {
        notes.push(format!("note: {}", check.text(&preds.target)));
    }
    for check in &preds.source_checks {
        notes.push(format!("note: {}", check.text()));
    }
    notes
}

/// What `evaluate` scores: models under a protocol on the runs of `data`.
#[derive(Debug, Clone)]
pub struct EvaluateOptions {
    /// Runs files or directories.
    pub data: Vec<PathBuf>,
    pub protocol: crate::evaluation::Protocol,
    /// Model names (each once).
    pub models: Vec<String>,
    /// Score only these kernels (every run still trains as the protocol allows).
    pub score_kernels: Option<Vec<String>>,
    /// Seed of the learned models.
    pub seed: u64,
    pub figures: FigureOptions,
}

/// An evaluation with what a front end shows beside it.
pub struct Evaluated {
    pub evaluation: crate::evaluation::Evaluation,
    /// Rows of the data (before the validation rule's exclusions).
    pub rows: usize,
    /// Figures of our models, and of analytical-study.
    pub ours: Calibration,
    pub study: Calibration,
    /// What the data's files held that was not read as runs, in a line.
    pub note: Option<String>,
}

/// Load the data of `opts` and score its models under its protocol; `progress` is
/// told (folds done, folds in all) as folds end.
pub fn evaluate(
    opts: &EvaluateOptions,
    catalog: &Catalog,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Evaluated> {
    if let Some(m) = opts
        .models
        .iter()
        .enumerate()
        .find_map(|(i, m)| opts.models[..i].contains(m).then_some(m))
    {
        return Err(Error::usage(format!(
            "{} {m} is named twice: name each model once",
            crate::error::input_name(Input::Model)
        )));
    }
    let loaded = load(&opts.data, &Default::default(), catalog)?;
    let table = loaded.table;
    let specs = opts
        .models
        .iter()
        .map(|m| crate::models::ModelSpec::parse(m, opts.seed))
        .collect::<Result<Vec<_>>>()?;
    let ours = opts.figures.calibration(false, &opts.data, catalog)?;
    let study = opts.figures.calibration(true, &opts.data, catalog)?;
    let resources = opts.figures.kernel_resources()?;
    let selection = crate::evaluation::Selection {
        score_kernels: opts.score_kernels.clone(),
        ..Default::default()
    }
    .resolved(catalog, &table.runs)?;
    let total = crate::evaluation::fold_count(&table.runs, &opts.protocol, &selection, catalog)
        * specs.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let setup = crate::experiments::ModelSetup {
        catalog,
        ours: &ours,
        study: &study,
        resources: resources.as_ref(),
        launch_floors: opts.figures.launch_floors.unwrap_or_default(),
    };
    let mut evaluation = crate::experiments::evaluate_models(
        &table.runs,
        &opts.protocol,
        &selection,
        &specs,
        setup,
        &|| {
            progress(
                done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
                total,
            )
        },
    )?;
    evaluation.data = table.files.clone();
    Ok(Evaluated {
        evaluation,
        rows: loaded.report.rows,
        ours,
        study,
        note: loaded.note,
    })
}
