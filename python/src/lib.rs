//! `gpucast._gpucast`: the gpucast library for Python. Each function here takes one
//! dict of plain values (paths, names, numbers), calls the library as the `gpucast`
//! binary does, and returns a table as Parquet bytes (typed columns: runs and
//! predictions) or as the CSV text the command line prints with `--format csv`, with
//! the notes the binary would print on standard error. The package around it
//! (`python/gpucast`) turns these into polars DataFrames and accepts DataFrames for
//! runs.
//!
//! The module is made with PyO3's plain API, not its macros: the macros' syn features
//! differ from those the rest of the workspace builds syn with, and would rebuild
//! every derive macro and all that uses them (polars included) for the workspace.

use gpucast::catalog::Catalog;
use gpucast::data;
use gpucast::error::{Error, Input};
use gpucast::evaluation::{Protocol, ProtocolKind};
use gpucast::features::FiguresSource;
use gpucast::models::LaunchFloors;
use gpucast::pipeline::{self, FigureOptions, PickCheck, PredictOptions, Target};
use gpucast::rank::{Filters, Prices, RankOptions};
use polars::prelude::{DataFrame, ParquetCompression, ParquetWriter};
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCFunction, PyDict, PyTuple, PyType};
use pyo3::IntoPyObjectExt;
use std::ffi::CStr;
use std::path::PathBuf;

/// How errors name the library's inputs here: the Python keyword that gives each.
fn keyword_of(input: Input) -> &'static str {
    match input {
        Input::Target => "target",
        Input::Source => "source",
        Input::Gpu => "gpu",
        Input::Kernel => "kernel",
        Input::GpuCatalog => "catalog",
        Input::StudyMetrics => "study_metrics",
        Input::TargetCalibration => "target_calibration",
        Input::ImportFormat => "format",
        Input::LaunchFloor => "launch_floor",
        Input::Targets => "targets",
        Input::Replace => "force",
        Input::Model => "model",
    }
}

/// The `gpucast.Error` subclass (in `gpucast._errors`) an error is raised as.
fn error_class(e: &Error) -> &'static str {
    match e {
        Error::Context { source, .. } => error_class(source),
        Error::Io { .. } => "FileError",
        Error::Parse { .. }
        | Error::Validation { .. }
        | Error::UnknownGpu { .. }
        | Error::Data { .. }
        | Error::Json { .. }
        | Error::Toml { .. }
        | Error::Launch(_)
        | Error::Catalog(_)
        | Error::ModelFile(_) => "DataError",
        Error::UnknownInputGpu { .. }
        | Error::GpuName { .. }
        | Error::NotInData { .. }
        | Error::Usage(_)
        | Error::InvalidInput { .. }
        | Error::LaunchFloorMismatch { .. }
        | Error::NoMeasuredFigure { .. }
        | Error::NoStudyMetrics => "UsageError",
        _ => "Error",
    }
}

/// The library's error as the Python exception of its kind, carrying the binary's
/// one-line message and exit code.
fn raise(py: Python<'_>, e: Error) -> PyErr {
    let message = gpucast::error::one_line_text(&e.to_string());
    let class = py
        .import("gpucast._errors")
        .and_then(|m| m.getattr(error_class(&e)))
        .and_then(|c| c.cast_into::<PyType>().map_err(PyErr::from));
    match class {
        Ok(class) => PyErr::from_type(class, (message, e.exit_code())),
        Err(lost) => lost,
    }
}

/// Run `work` without the interpreter lock (other Python threads go on meanwhile);
/// its error is raised as its `gpucast.Error` subclass.
fn call<T: Send>(py: Python<'_>, work: impl FnOnce() -> gpucast::Result<T> + Send) -> PyResult<T> {
    py.detach(work).map_err(|e| raise(py, e))
}

/// The built-in catalog with the given catalog files merged over it.
fn catalog(files: &[PathBuf]) -> gpucast::Result<Catalog> {
    let mut c = Catalog::builtin();
    for f in files {
        c.merge_file(f)?;
    }
    Ok(c)
}

fn parquet(df: &mut DataFrame) -> gpucast::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    ParquetWriter::new(&mut bytes)
        .with_compression(ParquetCompression::Uncompressed)
        .finish(df)
        .map_err(|e| Error::data("passing the table to Python", e))?;
    Ok(bytes)
}

/// Where target figures and launch floors come from, from their names.
fn figures(
    target_calibration: &str,
    launch_floor: Option<&str>,
    study_metrics: Option<PathBuf>,
) -> gpucast::Result<FigureOptions> {
    let target_calibration = match target_calibration {
        "spec" => FiguresSource::Spec,
        "measured" => FiguresSource::Measured,
        "study" => FiguresSource::Study,
        other => {
            return Err(Error::usage(format!(
                "target_calibration '{other}': give spec, measured or study"
            )))
        }
    };
    let launch_floors = match launch_floor {
        None => None,
        Some("sources") => Some(LaunchFloors::Sources),
        Some("catalog") => Some(LaunchFloors::Catalog),
        Some(other) => {
            return Err(Error::usage(format!(
                "launch_floor '{other}': give sources or catalog"
            )))
        }
    };
    Ok(FigureOptions {
        target_calibration,
        launch_floors,
        study_metrics,
        ..Default::default()
    })
}

/// The options dict a function is called with.
struct Options<'py>(Bound<'py, PyDict>);

impl<'py> Options<'py> {
    /// The value of `key` (the package always passes every key).
    fn get<T>(&self, key: &str) -> PyResult<T>
    where
        T: for<'a> FromPyObject<'a, 'py>,
    {
        let item = self
            .0
            .get_item(key)?
            .ok_or_else(|| PyKeyError::new_err(key.to_string()))?;
        item.extract::<T>().map_err(Into::into)
    }

    /// The options every predicting function shares.
    fn predicting(&self) -> PyResult<Predicting> {
        Ok(Predicting {
            runs: self.get("runs")?,
            model: self.get("model")?,
            gpu: self.get("gpu")?,
            source: self.get("source")?,
            data: self.get("data")?,
            seed: self.get("seed")?,
            target_calibration: self.get("target_calibration")?,
            launch_floor: self.get("launch_floor")?,
            study_metrics: self.get("study_metrics")?,
            catalog: self.get("catalog")?,
        })
    }
}

/// Parquet bytes and notes as the Python tuple `(bytes, [str])`.
fn framed(py: Python<'_>, (bytes, notes): (Vec<u8>, Vec<String>)) -> PyResult<Py<PyAny>> {
    (PyBytes::new(py, &bytes), notes).into_py_any(py)
}

/// The catalog's GPUs (of one vendor, if given) as `gpucast gpus list --format csv`.
fn gpus(py: Python<'_>, o: &Options) -> PyResult<Py<PyAny>> {
    let vendor: Option<String> = o.get("vendor")?;
    let files: Vec<PathBuf> = o.get("catalog")?;
    let csv = call(py, move || {
        let catalog = catalog(&files)?;
        let gpus: Vec<&gpucast::catalog::Gpu> = match &vendor {
            Some(v) => {
                let of = catalog.gpus_of_vendor(v);
                if of.is_empty() {
                    return Err(Error::usage(format!(
                        "vendor '{v}': no GPU of this vendor in the catalog (vendors: {})",
                        catalog.vendors().join(", ")
                    )));
                }
                of
            }
            None => catalog.gpus().iter().collect(),
        };
        Ok(gpucast::report::gpus_table(&gpus).to_csv())
    })?;
    csv.into_py_any(py)
}

/// Runs imported as `gpucast data import --from FORMAT` imports them, as Parquet
/// bytes, with the import report's notes.
fn load(py: Python<'_>, o: &Options) -> PyResult<Py<PyAny>> {
    let paths: Vec<PathBuf> = o.get("paths")?;
    let format: String = o.get("format")?;
    let opts = data::import::ImportOptions {
        gpu: o.get("gpu")?,
        source: o.get("source")?,
        ..Default::default()
    };
    let validate: bool = o.get("validate")?;
    let files: Vec<PathBuf> = o.get("catalog")?;
    let out = call(py, move || {
        let catalog = catalog(&files)?;
        let (table, report) = pipeline::import(&paths, &format, opts, validate, &catalog)?;
        let (_, footer) = gpucast::report::import_report(&report);
        let mut notes: Vec<String> = footer.lines().map(str::to_string).collect();
        // (the first line counts rows and failed configurations: a note only when some failed)
        if report.failed_total() == 0 && !notes.is_empty() {
            notes.remove(0);
        }
        Ok((parquet(&mut data::table_frame(&table)?)?, notes))
    })?;
    framed(py, out)
}

/// The options every predicting function shares.
struct Predicting {
    runs: Vec<PathBuf>,
    model: String,
    gpu: Option<String>,
    source: Option<String>,
    data: Vec<PathBuf>,
    seed: u64,
    target_calibration: String,
    launch_floor: Option<String>,
    study_metrics: Option<PathBuf>,
    catalog: Vec<PathBuf>,
}

impl Predicting {
    fn options(&self) -> gpucast::Result<PredictOptions> {
        Ok(PredictOptions {
            runs: self.runs.clone(),
            gpu: self.gpu.clone(),
            source: self.source.clone(),
            model: self.model.clone(),
            data: self.data.clone(),
            seed: self.seed,
            figures: figures(
                &self.target_calibration,
                self.launch_floor.as_deref(),
                self.study_metrics.clone(),
            )?,
        })
    }
}

/// `gpucast predict -o FILE.parquet`: every run predicted on `target`, as Parquet
/// bytes (the runs' columns, then target_gpu, pred_ms, pred_lo_ms, pred_hi_ms,
/// interval, bound, model, no_prediction_reason), with the notes.
fn predict(py: Python<'_>, o: &Options) -> PyResult<Py<PyAny>> {
    let with = o.predicting()?;
    let target: String = o.get("target")?;
    let out = call(py, move || {
        let catalog = catalog(&with.catalog)?;
        let target = Target::resolve(&catalog, Input::Target, &target)?;
        let predicted =
            pipeline::predictions(&with.options()?, &target, &catalog, PickCheck::No, &|_| {})?;
        let preds = predicted.predictions;
        let mut notes = predicted.notes;
        notes.extend(preds.target_rows_note());
        Ok((parquet(&mut preds.to_frame()?)?, notes))
    })?;
    framed(py, out)
}

/// `gpucast predict --trace TRACE --format json`: the step a PyTorch profiler trace
/// recorded, predicted on `target` (its kernels, idle gaps, totals and interval), as
/// JSON text, with the notes.
fn predict_trace(py: Python<'_>, o: &Options) -> PyResult<Py<PyAny>> {
    let with = o.predicting()?;
    let target: String = o.get("target")?;
    let trace: PathBuf = o.get("trace")?;
    let out = call(py, move || {
        let catalog = catalog(&with.catalog)?;
        let target = Target::resolve(&catalog, Input::Target, &target)?;
        let step = gpucast::trace::predict_trace(&trace, &with.options()?, &target, &catalog)?;
        let notes = step.notes.clone();
        Ok((serde_json::to_string(&step)?, notes))
    })?;
    out.into_py_any(py)
}

/// `gpucast tune --format csv`: the `top` configurations of each tuning space (of
/// `kernel`, if given) predicted fastest on `target`; with `check`, how the model's
/// first picks did on the data's other GPUs is among the notes.
fn tune(py: Python<'_>, o: &Options) -> PyResult<Py<PyAny>> {
    let with = o.predicting()?;
    let target: String = o.get("target")?;
    let kernel: Option<String> = o.get("kernel")?;
    let top: usize = o.get("top")?;
    let check: bool = o.get("check")?;
    let out = call(py, move || {
        if top == 0 {
            return Err(Error::usage("top 0: show at least one configuration"));
        }
        let catalog = catalog(&with.catalog)?;
        let target = Target::resolve(&catalog, Input::Target, &target)?;
        let kernel = kernel.as_deref();
        let check = if check {
            PickCheck::OnSources(kernel)
        } else {
            PickCheck::No
        };
        let predicted = pipeline::predictions(&with.options()?, &target, &catalog, check, &|_| {})?;
        let preds = predicted.predictions;
        pipeline::check_tuning(&preds, kernel)?;
        let mut notes = predicted.notes;
        notes.extend(pipeline::tuning_notes(&preds, kernel));
        Ok((preds.best_configs(kernel, top).to_csv(), notes))
    })?;
    out.into_py_any(py)
}

/// `gpucast rank --format csv`: every catalog GPU the filters keep, fastest first for
/// `kernel` (None: every kernel of the runs), with the notes.
fn rank(py: Python<'_>, o: &Options) -> PyResult<Py<PyAny>> {
    let with = o.predicting()?;
    let kernel: Option<String> = o.get("kernel")?;
    let filters = Filters {
        vendor: o.get("vendor")?,
        arch: o.get("arch")?,
        min_memory_gb: o.get("min_memory_gb")?,
        gpus: o.get("targets")?,
    };
    let prices: Option<PathBuf> = o.get("prices")?;
    let out = call(py, move || {
        if filters
            .min_memory_gb
            .is_some_and(|m| !(m.is_finite() && m >= 0.0))
        {
            return Err(Error::usage(
                "min_memory_gb: give a number of GB, 0 or more",
            ));
        }
        let catalog = catalog(&with.catalog)?;
        let prices = prices
            .as_deref()
            .map(|p| Prices::load(p, &catalog))
            .transpose()?;
        let opts = RankOptions {
            predict: with.options()?,
            kernel,
            filters,
            prices: prices.as_ref(),
        };
        let ranking = gpucast::rank::rank(&opts, &catalog, &|_, _| {})?;
        Ok((ranking.to_table(prices.is_some()).to_csv(), ranking.notes))
    })?;
    out.into_py_any(py)
}

/// `gpucast evaluate --format csv` (with `per_kernel`, `--per-kernel`): each model's
/// scores under `protocol`, with the notes.
fn evaluate(py: Python<'_>, o: &Options) -> PyResult<Py<PyAny>> {
    let data: Vec<PathBuf> = o.get("data")?;
    let protocol: String = o.get("protocol")?;
    let models: Vec<String> = o.get("models")?;
    let test_kernels: Option<Vec<String>> = o.get("test_kernels")?;
    let score_kernels: Option<Vec<String>> = o.get("score_kernels")?;
    let per_kernel: bool = o.get("per_kernel")?;
    let seed: u64 = o.get("seed")?;
    let target_calibration: String = o.get("target_calibration")?;
    let launch_floor: Option<String> = o.get("launch_floor")?;
    let study_metrics: Option<PathBuf> = o.get("study_metrics")?;
    let files: Vec<PathBuf> = o.get("catalog")?;
    let out = call(py, move || {
        let kind = match protocol.as_str() {
            "logo" => ProtocolKind::Logo,
            "new-size" => ProtocolKind::NewSize,
            "new-kernel" => ProtocolKind::NewKernel,
            "new-family" => ProtocolKind::NewFamily,
            "loco" => ProtocolKind::Loco,
            other => {
                return Err(Error::usage(format!(
                    "protocol '{other}': give logo, new-size, new-kernel, new-family or loco"
                )))
            }
        };
        if test_kernels.is_some() && kind != ProtocolKind::NewKernel {
            return Err(Error::usage(
                "test_kernels applies only to protocol new-kernel",
            ));
        }
        if models.is_empty() {
            return Err(Error::usage("models: name at least one model"));
        }
        let catalog = catalog(&files)?;
        let opts = pipeline::EvaluateOptions {
            data,
            protocol: Protocol::new(kind, test_kernels),
            models,
            score_kernels,
            seed,
            figures: figures(&target_calibration, launch_floor.as_deref(), study_metrics)?,
        };
        let evaluated = pipeline::evaluate(&opts, &catalog, &|_, _| {})?;
        let eval = &evaluated.evaluation;
        let table = if per_kernel {
            gpucast::report::results_and_kernels_table(eval)
        } else {
            gpucast::report::results_table(eval)
        };
        let notes: Vec<String> = evaluated
            .note
            .iter()
            .map(|n| format!("note: {n}"))
            .collect();
        Ok((table.to_csv(), notes))
    })?;
    out.into_py_any(py)
}

/// The library's version (what `gpucast --version` starts with).
fn version(py: Python<'_>, _: &Options) -> PyResult<Py<PyAny>> {
    env!("CARGO_PKG_VERSION").into_py_any(py)
}

type Function = fn(Python<'_>, &Options) -> PyResult<Py<PyAny>>;

/// The module's functions: name, docstring, body. Each takes one dict.
const FUNCTIONS: [(&CStr, &CStr, Function); 8] = [
    (c"gpus", c"gpus({vendor, catalog}) -> CSV text", gpus),
    (c"load", c"load({paths, format, gpu, source, validate, catalog}) -> (Parquet bytes, notes)", load),
    (c"predict", c"predict({runs, target, model, ...}) -> (Parquet bytes, notes)", predict),
    (c"predict_trace", c"predict_trace({trace, target, model, ...}) -> (JSON text, notes)", predict_trace),
    (c"tune", c"tune({runs, target, kernel, top, check, model, ...}) -> (CSV text, notes)", tune),
    (c"rank", c"rank({runs, kernel, vendor, arch, min_memory_gb, targets, prices, model, ...}) -> (CSV text, notes)", rank),
    (c"evaluate", c"evaluate({data, protocol, models, ...}) -> (CSV text, notes)", evaluate),
    (c"version", c"version({}) -> the library's version", version),
];

/// The module, made from a module definition as Python requires of an extension
/// (made once per process, so leaked: the interpreter keeps a pointer to it).
fn module(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    use pyo3::ffi;
    gpucast::error::name_inputs(keyword_of);
    let def = Box::leak(Box::new(ffi::PyModuleDef {
        m_base: ffi::PyModuleDef_HEAD_INIT,
        m_name: c"gpucast._gpucast".as_ptr(),
        m_doc:
            c"The gpucast library's functions for the gpucast package (one dict of options each)."
                .as_ptr(),
        m_size: -1,
        m_methods: std::ptr::null_mut(),
        m_slots: std::ptr::null_mut(),
        m_traverse: None,
        m_clear: None,
        m_free: None,
    }));
    // SAFETY: the definition lives as long as the process; the lock is held.
    let m = unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyModule_Create(def))? };
    let m = m.cast_into::<PyModule>()?;
    for (name, doc, f) in FUNCTIONS {
        let function = PyCFunction::new_closure(
            py,
            Some(name),
            Some(doc),
            move |args: &Bound<'_, PyTuple>, _: Option<&Bound<'_, PyDict>>| {
                let options = args.get_item(0)?.cast_into::<PyDict>()?;
                f(args.py(), &Options(options))
            },
        )?;
        m.add(name.to_str()?, function)?;
    }
    Ok(m)
}

/// The module's entry point, which Python calls on `import gpucast._gpucast`.
///
/// # Safety
/// Called by the interpreter, with its lock held, once per import.
#[no_mangle]
pub unsafe extern "C" fn PyInit__gpucast() -> *mut pyo3::ffi::PyObject {
    Python::attach(|py| match module(py) {
        Ok(m) => m.into_ptr(),
        Err(e) => {
            e.restore(py);
            std::ptr::null_mut()
        }
    })
}
