//! What each command may read and what it writes, collected once, before any work:
//! every file a command may read under any of its flags is protected (no output
//! replaces it, with or without --force, whether this run reads it or not), and the
//! command's outputs are checked against each other.

use super::values::value_name;
use super::*;
use gpucast::error::{Error, Result};
use gpucast::files::{self, Output};
use gpucast::pipeline::PredictOptions;
use std::path::Path;

/// Protect every input of `cli`'s command and check its outputs against each other.
pub fn claim(cli: &Cli) -> Result<()> {
    files::protect_inputs(&may_read(cli));
    let outputs = writes(&cli.command);
    let listed: Vec<Output> = outputs
        .iter()
        .map(|(flag, path, writes)| Output {
            flag,
            path,
            writes: writes.as_deref(),
        })
        .collect();
    files::check_distinct_outputs(&listed)
}

/// Whether a file inside an output directory is one the command may write there.
type Writes = Box<dyn Fn(&Path) -> bool>;

/// Every output of `command`: its flag, its path, and for a directory what it writes
/// inside.
fn writes(command: &Command) -> Vec<(&'static str, PathBuf, Option<Writes>)> {
    // (a chart directly inside the directory: `NAME.svg`)
    let charts = || -> Option<Writes> {
        Some(Box::new(|p: &Path| {
            p.components().count() == 1 && p.extension().is_some_and(|e| e == "svg")
        }))
    };
    let mut v = Vec::new();
    match command {
        Command::Data {
            command: DataCommand::Import { out, .. },
        } => v.push(("-o", out.clone(), None)),
        Command::Predict(a) => v.extend(a.out.clone().map(|o| ("-o", o, None))),
        Command::Tune(a) => {
            v.extend(a.predict.out.clone().map(|o| ("-o", o, None)));
            v.extend(a.write_cache.clone().map(|o| ("--write-cache", o, None)));
        }
        Command::Evaluate(a) => {
            v.extend(a.predictions.clone().map(|o| ("--predictions", o, None)));
            v.extend(a.plots.clone().map(|o| ("--plots", o, charts())));
        }
        Command::Train(a) => v.push(("-o", a.out.clone(), None)),
        Command::Roofline(a) => v.push(("-o", a.out.clone(), charts())),
        Command::Reproduce(a) => {
            // (every file inside --out is reproduce's to manage)
            v.push(("--out", a.out.clone(), Some(Box::new(|_: &Path| true))));
            v.extend(
                a.accuracy_page
                    .clone()
                    .map(|o| ("--accuracy-page", o, None)),
            );
        }
        _ => {}
    }
    v
}

/// Every file or directory `cli`'s command may read, under any of its flags.
fn may_read(cli: &Cli) -> Vec<PathBuf> {
    let mut v = cli.global.gpus.clone();
    let shipped = |d: &DataDirArgs| -> Vec<PathBuf> {
        super::check::data_dir(d)
            .map(|d| vec![d.join("datasets")])
            .unwrap_or_default()
    };
    match &cli.command {
        Command::Data { command } => match command {
            DataCommand::Import {
                inputs, workloads, ..
            } => v.extend(inputs.iter().chain(workloads).cloned()),
            DataCommand::Validate { paths, .. } | DataCommand::Show { paths, .. } => {
                v.extend(paths.iter().cloned())
            }
        },
        Command::Gpus { .. } => {}
        Command::Predict(a) => v.extend(a.options().inputs()),
        Command::Tune(a) => v.extend(a.predict.options().inputs()),
        Command::Rank(a) => {
            v.extend(predict_inputs(&a.runs, &a.data, &a.model, &a.figures));
            v.extend(a.prices.clone());
        }
        Command::Explain(a) => {
            v.extend(predict_inputs(&a.runs, &[], &a.model, &a.figures));
        }
        Command::Evaluate(a) => {
            v.extend(a.data.iter().cloned());
            v.extend(a.figures.options().inputs(&a.data));
        }
        Command::Train(a) => {
            v.extend(a.data.iter().cloned());
            v.extend(a.figures.options().inputs(&a.data));
        }
        Command::Roofline(a) => v.extend(a.paths.iter().cloned()),
        Command::Reproduce(a) => {
            // (the experiment files; the data they name is added when they are read)
            v.extend(a.data.iter().cloned());
            if let Some(dir) = &a.experiments {
                let tomls = std::fs::read_dir(dir).into_iter().flatten().flatten();
                v.extend(
                    tomls
                        .map(|e| e.path())
                        .filter(|p| p.extension().is_some_and(|e| e == "toml")),
                );
            }
            if a.data.is_empty() && a.experiments.is_none() {
                v.extend(shipped(&a.data_dir));
            }
        }
        Command::Corun(a) => {
            v.extend(a.runs.iter().chain(&a.coruns).cloned());
            if a.coruns.is_empty() {
                v.extend(shipped(&a.data_dir));
            }
        }
        Command::Bench(a) => {
            v.extend(a.data.iter().cloned());
            if a.data.is_empty() {
                v.extend(shipped(&a.data_dir));
            }
            v.extend(a.figures.options().inputs(&a.data));
        }
    }
    v
}

/// What a command predicting from `runs` (trained on `data`) with `model` may read.
fn predict_inputs(
    runs: &[PathBuf],
    data: &[PathBuf],
    model: &str,
    figures: &FiguresArgs,
) -> Vec<PathBuf> {
    PredictOptions {
        runs: runs.to_vec(),
        gpu: None,
        source: None,
        model: model.to_string(),
        data: data.to_vec(),
        seed: 0,
        figures: figures.options(),
    }
    .inputs()
}

/// What `-o FILE` writes, by the file's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutFile {
    Csv,
    Parquet,
    Json,
}

/// The kind of `-o FILE`, one of `allowed`, checked before any work against
/// `--format`: the default (table) takes the extension's format; csv or json must
/// agree with it, so no file holds another format than its name says.
pub fn out_file(path: &Path, format: Format, allowed: &[OutFile]) -> Result<OutFile> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    let kind = match ext.as_deref() {
        Some("csv") => Some(OutFile::Csv),
        Some("parquet") => Some(OutFile::Parquet),
        Some("json") => Some(OutFile::Json),
        _ => None,
    };
    let Some(kind) = kind.filter(|k| allowed.contains(k)) else {
        let names: Vec<String> = allowed
            .iter()
            .map(|k| format!(".{}", format!("{k:?}").to_lowercase()))
            .collect();
        let (last, rest) = names.split_last().expect("one kind allowed");
        let list = if rest.is_empty() {
            last.clone()
        } else {
            format!("{} or {last}", rest.join(", "))
        };
        return Err(Error::usage(format!(
            "{}: output must end in {list}",
            path.display()
        )));
    };
    let agrees = matches!(
        (format, kind),
        (Format::Table, _) | (Format::Csv, OutFile::Csv) | (Format::Json, OutFile::Json)
    );
    if !agrees {
        let name = value_name(&format);
        return Err(Error::usage(format!(
            "-o {}: the file name says {} but --format is {name}: make them agree",
            path.display(),
            format!("{kind:?}").to_lowercase()
        )));
    }
    Ok(kind)
}

/// Refuse, before any work, an output that is one of the command's inputs (every file
/// it may read: [`claim`]) or a file inside an input directory, or an existing file it
/// may not replace; files read later are checked again when the output is written.
pub fn claim_output(path: &Path) -> Result<()> {
    files::check_output(path, &[])
}

/// Before any work, the charts `evaluate --plots DIR` would write over: every
/// `PROTOCOL_*.svg` already in `dir` must be one it may replace (`--force`), so a
/// refusal comes before the evaluation, not after part of its files are written.
pub fn claim_plots(dir: &Path, protocol: &str) -> Result<()> {
    let prefix = format!("{protocol}_");
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir.display(), e.to_string()))?;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(&prefix) && name.ends_with(".svg") {
            files::check_output(&e.path(), &[])?;
        }
    }
    Ok(())
}

/// `evaluate`'s files, all or none: the predictions CSV written beside its place and
/// the charts into a hidden directory inside `--plots`, then each put in place; a
/// chart that cannot be written leaves no predictions file behind. Returns the charts.
pub fn write_evaluation(
    predictions: Option<(&Path, &str)>,
    plots: Option<&Path>,
    eval: &gpucast::evaluation::Evaluation,
) -> Result<Vec<PathBuf>> {
    let pending = predictions
        .map(|(p, csv)| files::write_pending_text(p, csv))
        .transpose()?;
    let charts = match plots {
        Some(dir) => {
            let staging = files::Staging::new(dir, "plots-")?;
            let name = eval.protocol.as_str();
            let staged =
                gpucast::report::plots::evaluation_plots(&eval.records, name, staging.path())?;
            Some((staging, staged))
        }
        None => None,
    };
    files::uninterrupted(|| {
        let written = match &charts {
            Some((staging, staged)) => staging.publish(staged)?,
            None => Vec::new(),
        };
        if let Some(p) = pending {
            p.commit()?;
        }
        Ok(written)
    })
}
