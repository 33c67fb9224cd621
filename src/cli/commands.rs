//! What each command does: call the library, print. Output goes through [`out`], so a
//! closed pipe ends the command quietly instead of panicking.

use super::paths::{claim_output, claim_plots, out_file, OutFile};
use super::*;
use gpucast::catalog::{Catalog, Gpu};
use gpucast::data;
use gpucast::error::{Error, Input, Result};
use gpucast::evaluation::Protocol;
use gpucast::experiments::{self, ReproduceOptions};
use gpucast::features::Calibration;
use gpucast::models::{analytical, hybrid::HybridParams, Context, Evidence, ModelSpec};
use gpucast::pipeline::{self, FigureOptions, PickCheck, PredictOptions, Target};
use gpucast::predict::Predictions;
use gpucast::report::{self, Table};
use std::io::Write;
use std::path::Path;

pub fn run(cli: Cli) -> Result<()> {
    gpucast::error::name_inputs(flag_of);
    gpucast::parallel::set_threads(cli.global.threads);
    if cli.global.force {
        gpucast::files::allow_replacing();
    }
    super::paths::claim(&cli)?;
    let mut catalog = Catalog::builtin();
    // (each GPU a --gpus file replaces is said once the command has run: an error
    // stays the one line on stderr)
    let mut replaced = Vec::new();
    for f in &cli.global.gpus {
        replaced.extend(catalog.merge_file(f)?);
    }
    let done = match cli.command {
        Command::Data { command } => data_cmd(command, &catalog),
        Command::Gpus { command } => gpus_cmd(command, &catalog),
        Command::Predict(a) => super::trace::predict(a, &catalog),
        Command::Tune(a) => tune(a, &catalog),
        Command::Rank(a) => rank(a, &catalog),
        Command::Explain(a) => explain(a, &catalog),
        Command::Evaluate(a) => evaluate(a, &catalog),
        Command::Train(a) => train(a, &catalog),
        Command::Roofline(a) => roofline(a, &catalog),
        Command::Reproduce(a) => reproduce(a, &catalog),
        Command::Corun(a) => super::corun::corun(a, &catalog),
        Command::Bench(a) => super::bench::bench(a, &catalog),
    };
    if done.is_ok() {
        for note in replaced {
            eprintln!("note: {note}");
        }
    }
    done
}

/// The flag that gives each of the library's inputs (what its errors call them).
fn flag_of(input: Input) -> &'static str {
    match input {
        Input::Target => "--target",
        Input::Source => "--source",
        Input::Gpu => "--gpu",
        Input::Kernel => "--kernel",
        Input::GpuCatalog => "--gpus",
        Input::StudyMetrics => "--study-metrics",
        Input::TargetCalibration => "--target-calibration",
        Input::ImportFormat => "--from",
        Input::LaunchFloor => "--launch-floor",
        Input::Targets => "--targets",
        Input::Replace => "--force",
        Input::Model => "--model",
    }
}

/// Write to standard output; a closed pipe surfaces as an error main ends quietly on.
pub(super) fn out(text: &str) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    Ok(())
}

pub(super) fn json<T: serde::Serialize>(v: &T) -> Result<String> {
    Ok(serde_json::to_string_pretty(v)? + "\n")
}

/// A table in the chosen format, with a footer line only on a terminal table.
pub(super) fn out_table(t: &Table, format: Format, footer: &str) -> Result<()> {
    out(&t.render(format.into()))?;
    if format == Format::Table && !footer.is_empty() {
        out(&format!("\n{footer}\n"))?;
    }
    Ok(())
}

fn data_cmd(cmd: DataCommand, catalog: &Catalog) -> Result<()> {
    match cmd {
        DataCommand::Import {
            inputs,
            out,
            from,
            source,
            gpu,
            workloads,
            validate,
        } => data_import(
            &inputs,
            &out,
            &from,
            data::import::ImportOptions {
                source,
                ..pipeline::import_options(gpu.as_deref(), catalog)?
            },
            &workloads,
            validate,
            catalog,
        ),
        DataCommand::Validate {
            paths,
            format,
            list,
            gpu,
        } => data_validate(&paths, format, list, gpu.as_deref(), catalog),
        DataCommand::Show {
            paths,
            format,
            gpu,
            kernel,
            limit,
        } => data_show(&paths, format, gpu, kernel, limit, catalog),
    }
}

/// `data import`: convert `inputs` to a canonical runs table at `path`.
fn data_import(
    inputs: &[PathBuf],
    path: &Path,
    from: &str,
    mut opts: data::import::ImportOptions,
    workloads: &[PathBuf],
    validate: bool,
    catalog: &Catalog,
) -> Result<()> {
    let format = data::import::Format::parse(from)?;
    data::is_parquet_output(path)?;
    if let Some(name) = &opts.gpu {
        pipeline::resolve_input(catalog, Input::Gpu, name)?;
    }
    claim_output(path)?;
    for w in workloads {
        opts.workloads.add_path(w)?;
    }
    let imported = data::import::import_paths(inputs, format, &opts)?;
    let mut table = imported.table;
    // (before the report: a failed import prints its one error line, nothing else)
    if validate {
        data::validate(&mut table, catalog)?;
    } else {
        data::validate::refuse_ambiguous_gpus(&table, catalog)?;
    }
    let (t, notes) = report::import_report(&imported.report);
    out_table(&t, Format::Table, &notes)?;
    data::write(&table, path)?;
    eprintln!(
        "wrote {} rows from {} file(s) to {}",
        table.len(),
        table.files.len(),
        path.display()
    );
    Ok(())
}

/// `data validate`: check runs files, print the flags per GPU or every flagged row.
fn data_validate(
    paths: &[PathBuf],
    format: Format,
    list: bool,
    gpu: Option<&str>,
    catalog: &Catalog,
) -> Result<()> {
    let (table, rep) =
        data::load_validated_with(paths, &pipeline::import_options(gpu, catalog)?, catalog)?;
    if list {
        let footer = format!(
            "{} of {} rows flagged, {} excluded",
            rep.flagged, rep.rows, rep.excluded
        );
        return out_table(&report::flagged_rows_table(&rep), format, &footer);
    }
    if format == Format::Json {
        return out(&json(&rep)?);
    }
    let agreement = report::cross_source_table(&table.runs);
    let footer = report::validation_footer(&rep);
    out_table(&report::validation_table(&rep), format, &footer)?;
    if format == Format::Table && !agreement.rows.is_empty() {
        out(
            "\nGPUs measured by two sources (their agreement: the noise floor of a prediction):\n",
        )?;
        out(&agreement.to_text())?;
    }
    Ok(())
}

/// `data show`: print runs as a table.
fn data_show(
    paths: &[PathBuf],
    format: Format,
    gpu: Option<String>,
    kernel: Option<String>,
    limit: usize,
    catalog: &Catalog,
) -> Result<()> {
    let (table, _) = load_noting(paths, &Default::default(), catalog)?;
    let gpu = gpu
        .map(|g| pipeline::resolve_input(catalog, Input::Gpu, &g).map(|x| x.name.clone()))
        .transpose()?;
    if let Some(g) = &gpu {
        table.require_gpu(Input::Gpu, g)?;
    }
    if let Some(k) = &kernel {
        table.require_kernel(Input::Kernel, k)?;
    }
    let rows: Vec<(usize, &data::Run)> = table
        .runs
        .iter()
        .enumerate()
        .filter(|(_, r)| gpu.as_ref().is_none_or(|g| &r.gpu == g))
        .filter(|(_, r)| kernel.as_ref().is_none_or(|k| &r.kernel == k))
        .collect();
    let shown = if limit == 0 {
        rows.len()
    } else {
        limit.min(rows.len())
    };
    let footer = if shown < rows.len() {
        format!(
            "... {shown} of {} rows shown (--limit 0 for all)",
            rows.len()
        )
    } else {
        String::new()
    };
    let rows = rows.into_iter().take(shown);
    match format {
        // (every number as stored: what a program reads back)
        Format::Json => out(&json(
            &rows
                .map(|(i, r)| report::RunView::of(i, r))
                .collect::<Vec<_>>(),
        )?),
        Format::Csv => out_table(&report::runs_table(rows, true), format, &footer),
        Format::Table => out_table(&report::runs_table(rows, false), format, &footer),
    }
}

fn gpus_cmd(cmd: GpusCommand, catalog: &Catalog) -> Result<()> {
    match cmd {
        GpusCommand::List { format, vendor } => {
            let gpus: Vec<&Gpu> = match &vendor {
                Some(v) => {
                    let of = catalog.gpus_of_vendor(v);
                    if of.is_empty() {
                        return Err(Error::usage(format!(
                            "--vendor {v}: no GPU of this vendor in the catalog (vendors: {})",
                            catalog.vendors().join(", ")
                        )));
                    }
                    of
                }
                None => catalog.gpus().iter().collect(),
            };
            if format == Format::Json {
                return out(&json(&gpus)?);
            }
            let footer = format!("{} GPUs", gpus.len());
            out_table(&report::gpus_table(&gpus), format, &footer)
        }
        GpusCommand::Show { name } => {
            let with_partition = catalog.for_partition_name(&name)?;
            let catalog = with_partition.as_ref().unwrap_or(catalog);
            let g = gpu_arg(catalog, "gpus show", &name)?;
            let text = toml::to_string_pretty(g)?;
            let limits = toml::to_string_pretty(&catalog.limits(g)?)?;
            out(&format!(
                "{text}\n# occupancy limits (compute capability {})\n{limits}\n",
                g.compute_capability
            ))
        }
    }
}

impl FiguresArgs {
    /// The launch floors asked for, or the default.
    pub(super) fn launch_floor(&self) -> gpucast::models::LaunchFloors {
        self.launch_floor.map(Into::into).unwrap_or_default()
    }

    /// The library's figure options these arguments give.
    pub(super) fn options(&self) -> FigureOptions {
        FigureOptions {
            target_calibration: self.target_calibration.into(),
            study_metrics: self.study_metrics.clone(),
            resources: self.resources.clone(),
            no_resources: self.no_resources,
            launch_floors: self.launch_floor.map(Into::into),
        }
    }
}

impl PredictArgs {
    /// The library's prediction options these arguments give.
    pub(super) fn options(&self) -> PredictOptions {
        PredictOptions {
            runs: self.runs_or_trace(),
            gpu: self.gpu.clone(),
            source: self.source.clone(),
            model: self.model_name(),
            data: self.data.clone(),
            seed: self.seed,
            figures: self.figures.options(),
        }
    }
}

pub(super) fn predict(a: PredictArgs, catalog: &Catalog) -> Result<()> {
    let file = a
        .out
        .as_deref()
        .map(|p| {
            out_file(
                p,
                a.format,
                &[OutFile::Csv, OutFile::Parquet, OutFile::Json],
            )
        })
        .transpose()?;
    if let Some(path) = &a.out {
        claim_output(path)?;
    }
    let preds = predictions(&a, catalog, PickCheck::No)?;
    let target = &preds.target;
    if let (Some(path), Some(kind)) = (&a.out, file) {
        if kind == OutFile::Json {
            report::write_atomic(path, &json(&preds.to_json())?)?;
        } else {
            data::write_frame(&mut preds.to_frame()?, path)?;
        }
        eprintln!(
            "wrote {} predictions for {target} to {}",
            preds.rows.len(),
            path.display()
        );
    } else {
        match a.format {
            Format::Json => out(&json(&preds.to_json())?),
            Format::Csv => out(&preds.to_table().to_csv()),
            Format::Table => out(&format!(
                "{} on {target}:\n{}",
                preds.model,
                preds.to_text()
            )),
        }?;
    }
    note_target_rows(&preds);
    Ok(())
}

/// The data at `paths`, validated, with a note on standard error of what its files
/// held that was not read as runs (failed configurations and runner rows, rows an
/// importer could not use: [`report::not_imported_text`]).
pub(super) fn load_noting(
    paths: &[std::path::PathBuf],
    opts: &data::import::ImportOptions,
    catalog: &Catalog,
) -> Result<(data::RunsTable, data::validate::ValidationReport)> {
    let loaded = pipeline::load(paths, opts, catalog)?;
    if let Some(note) = &loaded.note {
        eprintln!("note: {note}");
    }
    Ok((loaded.table, loaded.report))
}

/// After a successful `predict` or `tune` (an error stays one line): the note that the
/// target's own rows were left out, where the data has some.
fn note_target_rows(preds: &Predictions) {
    if let Some(note) = preds.target_rows_note() {
        eprintln!("{note}");
    }
}

fn tune(a: TuneArgs, catalog: &Catalog) -> Result<()> {
    if a.top == 0 {
        return Err(Error::usage("--top 0: show at least one configuration"));
    }
    let file = a
        .predict
        .out
        .as_deref()
        .map(|p| out_file(p, a.predict.format, &[OutFile::Csv, OutFile::Json]))
        .transpose()?;
    if let Some(path) = &a.predict.out {
        claim_output(path)?;
    }
    if let Some(path) = &a.write_cache {
        if a.predict.runs.len() != 1 || !a.predict.runs[0].is_file() {
            return Err(Error::usage(
                "--write-cache: give one --runs file, the Kernel Tuner cache to predict",
            ));
        }
        gpucast::files::check_new_output(path, &[])?;
        let runs = &a.predict.runs[0];
        let format = data::import::detect(runs)?;
        if format.name() != data::kernel_tuner::FORMAT {
            return Err(Error::usage(format!(
                "--write-cache: {} is in the {} format, not a Kernel Tuner cache: only a cache's tuning space can be written back with predicted times",
                runs.display(),
                format.name()
            )));
        }
    }
    let check = if a.no_check {
        PickCheck::No
    } else {
        PickCheck::OnSources(a.kernel.as_deref())
    };
    let preds = predictions(&a.predict, catalog, check)?;
    let kernel = a.kernel.as_deref();
    pipeline::check_tuning(&preds, kernel)?;
    // (-o is put in place once --write-cache is written: both or neither)
    let mut table_file = None;
    if let (Some(path), Some(kind)) = (&a.predict.out, file) {
        let format = if kind == OutFile::Json {
            Format::Json
        } else {
            Format::Csv
        };
        let t = preds.best_configs(kernel, a.top);
        let pending = gpucast::files::write_pending_text(path, &t.render(format.into()))?;
        table_file = Some((pending, t.rows.len(), path));
    } else if a.predict.format == Format::Table {
        out(&format!(
            "{} on {}, predicted fastest first:\n",
            preds.model, preds.target
        ))?;
        out(&preds.best_configs_text(kernel, a.top))?;
    } else {
        out(&preds
            .best_configs(kernel, a.top)
            .render(a.predict.format.into()))?;
    }
    if let Some(path) = &a.write_cache {
        write_cache(path, &a.predict.runs[0], &preds)?;
    }
    if let Some((pending, rows, path)) = table_file {
        pending.commit()?;
        eprintln!(
            "wrote {rows} configurations for {} to {}",
            preds.target,
            path.display()
        );
    }
    for note in pipeline::tuning_notes(&preds, kernel) {
        eprintln!("{note}");
    }
    Ok(())
}

fn rank(a: RankArgs, catalog: &Catalog) -> Result<()> {
    use gpucast::rank::{self, Filters, Prices, RankOptions};
    if a.min_memory_gb
        .is_some_and(|m| !(m.is_finite() && m >= 0.0))
    {
        return Err(Error::usage(
            "--min-memory-gb: give a number of GB, 0 or more",
        ));
    }
    let prices = a
        .prices
        .as_deref()
        .map(|p| Prices::load(p, catalog))
        .transpose()?;
    let opts = RankOptions {
        predict: PredictOptions {
            runs: a.runs.clone(),
            gpu: a.gpu.clone(),
            source: a.source.clone(),
            model: a.model.clone(),
            data: a.data.clone(),
            seed: a.seed,
            figures: a.figures.options(),
        },
        kernel: a.kernel.clone(),
        filters: Filters {
            vendor: a.vendor.clone(),
            arch: a.arch.clone(),
            min_memory_gb: a.min_memory_gb,
            gpus: a.targets.clone(),
        },
        prices: prices.as_ref(),
    };
    // A bar on a terminal once ranking has taken a second.
    let bar = indicatif::ProgressBar::hidden();
    let started = std::time::Instant::now();
    let progress = |done: usize, total: usize| {
        if bar.is_hidden() && started.elapsed().as_secs_f64() > 1.0 && done < total {
            bar.set_length(total as u64);
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            bar.set_message("GPUs predicted");
        }
        bar.set_position(done as u64);
    };
    let ranking = rank::rank(&opts, catalog, &progress);
    bar.finish_and_clear();
    let ranking = ranking?;
    for note in &ranking.notes {
        eprintln!("{note}");
    }
    match a.format {
        Format::Json => out(&json(&ranking)?),
        Format::Csv => out(&ranking.to_table(prices.is_some()).to_csv()),
        Format::Table => {
            out(&format!(
                "{} for {} ({} problem(s)), fastest first; speedup over {} (measured, {:.6} ms):\n",
                ranking.model,
                ranking.kernels.join(", "),
                ranking.problems,
                ranking.best_source,
                ranking.best_source_ms
            ))?;
            let mut t = ranking.to_table(prices.is_some());
            if ranking.not_ranked.is_empty() {
                let shown: Vec<String> = t
                    .headers
                    .iter()
                    .filter(|h| *h != "not_ranked_reason")
                    .cloned()
                    .collect();
                t = t.select(&shown.iter().map(String::as_str).collect::<Vec<_>>());
            }
            out(&t.to_text())?;
            out(&format!(
                "\n{} ranked, {} not ranked; time_ms sums each problem's fastest configuration; energy_proxy_j = time x TDP (J at the board's rated power, not measured)\n",
                ranking.ranked.len(),
                ranking.not_ranked.len()
            ))
        }
    }
}

/// `tune --write-cache`: the Kernel Tuner cache at `measured` with the target's
/// predicted times, written to the new file `path`.
fn write_cache(path: &Path, measured: &Path, preds: &Predictions) -> Result<()> {
    let workloads = data::workload::Workloads::builtin();
    let written =
        data::kernel_tuner_write::predicted_cache(measured, &workloads, &preds.target, preds)?;
    gpucast::files::write_new(path, &written.text)?;
    eprintln!(
        "wrote a Kernel Tuner cache for {} to {}: {} configurations predicted, {} failed on the source (kept as marked), {} without a prediction (InvalidConfig{})",
        preds.target,
        path.display(),
        written.predicted,
        written.failed,
        written.not_predicted,
        written
            .first_reason
            .map(|r| format!("; the first: {r}"))
            .unwrap_or_default()
    );
    if let Some(was) = &written.objective_was {
        eprintln!(
            "note: {} tuned for objective '{was}'; the written cache's objective is 'time' (its entries hold predicted times)",
            measured.display()
        );
    }
    Ok(())
}

/// The GPU an argument names (exactly: see `gpucast::catalog::names`); a name that
/// matches none or several is a usage error naming the argument.
fn gpu_arg<'c>(catalog: &'c Catalog, what: &str, name: &str) -> Result<&'c gpucast::catalog::Gpu> {
    catalog.resolve(name).ok_or_else(|| {
        Error::usage(format!(
            "{what}: unknown GPU '{name}': {}",
            catalog.unresolved_hint(name)
        ))
    })
}

/// [`pipeline::predictions`] for `predict` and `tune`, the target resolved once; the
/// library's notes go to standard error, and a spinner shows while picks are checked.
fn predictions(a: &PredictArgs, catalog: &Catalog, check: PickCheck) -> Result<Predictions> {
    let target = Target::resolve(catalog, Input::Target, &a.target)?;
    let spinner = indicatif::ProgressBar::new_spinner();
    let checking = |started: bool| {
        if started {
            // (seconds with the hybrid on large data: say what is going on, on a terminal)
            spinner
                .set_message("checking the picks on the data's own GPUs (--no-check skips this)");
            spinner.enable_steady_tick(std::time::Duration::from_millis(120));
        } else {
            spinner.finish_and_clear();
        }
    };
    let predicted = pipeline::predictions(&a.options(), &target, catalog, check, &checking)?;
    for note in &predicted.notes {
        eprintln!("{note}");
    }
    Ok(predicted.predictions)
}

fn explain(a: ExplainArgs, catalog: &Catalog) -> Result<()> {
    pipeline::check_model_to_explain(&a.model)?;
    let resolved = Target::resolve(catalog, Input::Target, &a.target)?;
    let catalog = resolved.catalog(catalog);
    let target = resolved.name().to_string();
    let source = a
        .source
        .as_deref()
        .map(|s| pipeline::resolve_input(catalog, Input::Source, s).map(|g| g.name.clone()))
        .transpose()?;
    let (table, _) = load_noting(
        &a.runs,
        &pipeline::import_options(a.gpu.as_deref(), catalog)?,
        catalog,
    )?;
    let row = match (a.row, &a.kernel, &a.config) {
        (Some(row), _, _) => table.runs.get(row.wrapping_sub(1)).ok_or_else(|| {
            Error::usage(format!(
                "--row {row}: the data has rows 1..={}",
                table.len()
            ))
        })?,
        (None, Some(kernel), Some(config)) => work_row(&table, kernel, config)?,
        _ => return Err(Error::usage("give --row, or --kernel and --config")),
    };
    let cal = a.figures.options().calibration(false, &a.runs, catalog)?;
    let resources = a.figures.options().kernel_resources()?;
    let ctx = Context::new(catalog, &cal, resources.as_ref())
        .with_launch_floors(a.figures.launch_floor());
    let q = data::Query::on(row, &target);
    if let Some(s) = &source {
        table.require_gpu(Input::Source, s)?;
    }
    let evidence = Evidence::new(
        table
            .runs
            .iter()
            .filter(|r| r.gpu != target && source.as_ref().is_none_or(|s| &r.gpu == s)),
    );
    // (before fitting: a work no other GPU measured is an error without the fit's cost)
    if analytical::projections(&q, &evidence, &ctx)?.is_empty() {
        return Err(Error::model(format!(
            "no usable source measures {} {} on a GPU other than {target}",
            q.kernel, q.config
        )));
    }
    // As `predict` does: sources weighed and the interval calibrated as a fit on the
    // other GPUs' runs chooses.
    let train: Vec<&data::Run> = table.runs.iter().filter(|r| r.gpu != target).collect();
    let fitted = analytical::Analytical.fit_analytical(&train, &ctx)?;
    let ps = fitted.projections(&q, &evidence, &ctx)?;
    let combined = fitted.combined(&ps, &target, &evidence, &ctx)?;
    // (the roofs' origins are those of the spec figures; other calibrations say theirs)
    let mut roofs_of: Vec<&Gpu> = Vec::new();
    if matches!(cal, Calibration::Spec) {
        let names = std::iter::once(target.as_str()).chain(ps.iter().map(|(r, _)| r.gpu.as_str()));
        for name in names {
            if let Some(g) = catalog.resolve_exact(name) {
                if !roofs_of.iter().any(|x| x.name == g.name) {
                    roofs_of.push(g);
                }
            }
        }
    }
    let mut text = report::explain_text(
        &q,
        &target,
        cal.name(),
        &ps,
        &fitted,
        combined.as_ref(),
        &roofs_of,
        catalog,
    );
    if a.model != "analytical" {
        let (hybrid, note) = pipeline::hybrid_to_explain(
            &a.model,
            &train,
            a.seed,
            a.figures.options().launch_floors,
            &ctx,
        )?;
        if let Some(note) = &note {
            eprintln!("{note}");
        }
        let mut trace = gpucast::models::stages::StageTrace::default();
        let p = hybrid.predict_traced(&q, &evidence, &ctx, Some(&mut trace))?;
        let label = match a.model.as_str() {
            "hybrid" if note.is_none() => "fitted on the other GPUs' runs",
            "hybrid" => gpucast::predict::PRETRAINED_NAME,
            other => other,
        };
        text += &report::hybrid_stages_text(
            label,
            gpucast::models::Predict::fit_summary(&hybrid).as_deref(),
            hybrid.state().similarity_power,
            &trace,
            p.as_ref(),
        );
    }
    out(&text)
}

/// `roofline`: a chart per GPU of the runs into `--out`, each path printed.
fn roofline(a: RooflineArgs, catalog: &Catalog) -> Result<()> {
    if a.out.exists() && !a.out.is_dir() {
        return Err(Error::usage(format!(
            "--out {}: a file of that name exists; give a directory",
            a.out.display()
        )));
    }
    let opts = pipeline::import_options(a.gpu.as_deref(), catalog)?;
    let runs = experiments::load_profiles(&a.paths, &opts, catalog)?;
    let gpus = experiments::gpus_of(&runs);
    for g in gpus {
        claim_output(&a.out.join(experiments::roofline_file(g, a.instruction)))?;
    }
    // (every chart into a hidden directory first, then all put in place)
    let staging = gpucast::files::Staging::new(&a.out, "roofline-")?;
    let staged = if a.instruction {
        experiments::instruction_roofline_plots(&runs, catalog, staging.path())?
    } else {
        experiments::roofline_plots(&runs, catalog, staging.path())?
    };
    let written = staging.publish(&staged)?;
    if written.is_empty() {
        return Err(Error::usage(
            "no run carries warp instructions (inst_warp) and transactions (l1_sectors, shared_wavefronts, l2_sectors or dram_sectors): the instruction roofline needs Nsight Compute counts",
        ));
    }
    let lines: String = written
        .iter()
        .map(|p| format!("wrote {}\n", p.display()))
        .collect();
    out(&lines)
}

/// The row `explain --kernel --config` names: one that measured that work (any GPU's:
/// the projection reads only the work), a row validation kept where there is one.
/// `config` may leave out parameters (as `tune`'s table leaves out those its whole
/// space shares) when the ones it gives name one configuration.
fn work_row<'t>(table: &'t data::RunsTable, kernel: &str, config: &str) -> Result<&'t data::Run> {
    table.require_kernel(Input::Kernel, kernel)?;
    let config = data::canonical_config(config)
        .map_err(|e| Error::usage(format!("--config '{config}': {e}")))?;
    let of_kernel = || table.runs.iter().filter(|r| r.kernel == kernel);
    let mut named: Vec<&str> = Vec::new();
    if !of_kernel().any(|r| r.config == config) {
        let parts: Vec<&str> = config.split(',').collect();
        for r in of_kernel() {
            let own = r.config.split(',');
            if parts.iter().all(|p| own.clone().any(|q| q == *p))
                && !named.contains(&r.config.as_str())
            {
                named.push(r.config.as_str());
            }
        }
        match named.len() {
            0 => {
                return Err(Error::usage(format!(
                    "--config '{config}': no row of {kernel} has it (`gpucast data show --kernel {kernel}` lists them)"
                )))
            }
            1 => {}
            n => {
                return Err(Error::usage(format!(
                    "--config '{config}': {n} configurations of {kernel} have it, e.g. '{}' and '{}': give more parameters",
                    named[0], named[1]
                )))
            }
        }
    }
    let config = named.first().copied().unwrap_or(&config);
    let mut rows = of_kernel().filter(|r| r.config == config);
    // (found above: a row has it)
    let first = rows
        .next()
        .ok_or_else(|| Error::usage(format!("--config '{config}': no row has it")))?;
    Ok(if first.is_excluded() {
        rows.find(|r| !r.is_excluded()).unwrap_or(first)
    } else {
        first
    })
}

pub(super) fn progress_bar(len: u64, msg: &str) -> indicatif::ProgressBar {
    let pb = indicatif::ProgressBar::new(len);
    pb.set_style(
        indicatif::ProgressStyle::with_template("{msg:>12} [{bar:30}] {pos}/{len} {elapsed}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb.set_message(msg.to_string());
    pb
}

fn evaluate(a: EvaluateArgs, catalog: &Catalog) -> Result<()> {
    if a.test_kernels.is_some() && a.protocol != ProtocolKind::NewKernel {
        return Err(Error::usage(
            "--test-kernels applies only to --protocol new-kernel",
        ));
    }
    if let Some(p) = &a.predictions {
        out_file(p, Format::Csv, &[OutFile::Csv])?;
        claim_output(p)?;
    }
    if let Some(dir) = a.plots.as_ref().filter(|d| d.exists() && !d.is_dir()) {
        return Err(Error::usage(format!(
            "--plots {}: a file of that name exists; give a directory",
            dir.display()
        )));
    }
    let protocol = Protocol::new(a.protocol.into(), a.test_kernels.clone());
    if let Some(dir) = a.plots.as_ref().filter(|d| d.is_dir()) {
        claim_plots(dir, protocol.name())?;
    }
    let opts = pipeline::EvaluateOptions {
        data: a.data.clone(),
        protocol: protocol.clone(),
        models: a.model.clone(),
        score_kernels: a.score_kernels.clone(),
        seed: a.seed,
        figures: a.figures.options(),
    };
    let pb = progress_bar(0, protocol.name());
    let evaluated = pipeline::evaluate(&opts, catalog, &|done, total| {
        pb.set_length(total as u64);
        pb.set_position(done as u64);
    });
    pb.finish_and_clear();
    let evaluated = evaluated?;
    if let Some(note) = &evaluated.note {
        eprintln!("note: {note}");
    }
    let eval = evaluated.evaluation;
    let (ours, study) = (evaluated.ours, evaluated.study);
    let csv = a
        .predictions
        .as_ref()
        .map(|_| report::records_table(&eval).to_csv());
    let charts = super::paths::write_evaluation(
        a.predictions.as_deref().zip(csv.as_deref()),
        a.plots.as_deref(),
        &eval,
    )?;
    if let Some(dir) = &a.plots {
        eprintln!("wrote {} charts to {}", charts.len(), dir.display());
    }
    print_evaluation(&a, &eval, &protocol, (&ours, &study), evaluated.rows)
}

/// `evaluate`'s output: the results in the chosen format, per kernel when asked, and
/// on a terminal a footer (protocol, calibrations, rows, fitted models).
fn print_evaluation(
    a: &EvaluateArgs,
    eval: &gpucast::evaluation::Evaluation,
    protocol: &Protocol,
    (ours, study): (&Calibration, &Calibration),
    rows: usize,
) -> Result<()> {
    match (a.format, a.per_kernel) {
        (Format::Json, false) => return out(&json(eval)?),
        (Format::Json, true) => {
            let mut doc = serde_json::to_value(eval)?;
            let per_kernel = serde_json::to_value(report::per_kernel_results(eval))?;
            if let Some(fields) = doc.as_object_mut() {
                fields.insert("per_kernel".into(), per_kernel);
            }
            return out(&json(&doc)?);
        }
        // one CSV a program can read: the per-kernel rows beside the per-target ones
        (Format::Csv, true) => out(&report::results_and_kernels_table(eval).to_csv())?,
        (Format::Table, false)
            if matches!(
                a.protocol,
                ProtocolKind::Loco | ProtocolKind::Newer | ProtocolKind::Loao
            ) =>
        {
            out(&report::results_table(eval).to_text())?;
            out("\nPer corpus (the runs' source):\n")?;
            out(&report::per_corpus_table(eval).to_text())?;
        }
        (_, false) => out(&report::results_table(eval).render(a.format.into()))?,
        (Format::Table, true) => {
            out(&report::results_table(eval).to_text())?;
            out("\n")?;
            out(&report::per_kernel_table(eval).to_text())?;
        }
    }
    if a.format == Format::Table {
        let missing: Vec<String> = eval
            .unpredicted_counts()
            .map(|(m, n)| format!("{m}: {n}"))
            .collect();
        let mut footer = format!(
            "\nprotocol {}; calibration {} (analytical-study: {}); {} rows; excluded by the validation rules: {}{}\n",
            protocol.name(),
            ours.name(),
            study.name(),
            rows,
            eval.excluded_rows,
            if missing.is_empty() {
                String::new()
            } else {
                format!(
                    "; rows with no prediction (no source measured that work): {}",
                    missing.join(", ")
                )
            }
        );
        for line in report::fit_summary_lines(eval) {
            footer += &format!("fitted: {line}\n");
        }
        out(&footer)?;
    }
    Ok(())
}

fn train(a: TrainArgs, catalog: &Catalog) -> Result<()> {
    // `predict --model` knows a saved model by its .json name.
    out_file(&a.out, Format::Json, &[OutFile::Json])?;
    claim_output(&a.out)?;
    let params = match ModelSpec::parse(&a.model, a.seed)? {
        ModelSpec::Hybrid(p) => p.training_queries(a.training_queries)?,
        other => {
            return Err(Error::usage(format!(
                "train: only hybrid models are saved as a file (got '{}')",
                gpucast::models::Fit::name(&other)
            )))
        }
    };
    if let Some(f) = a.sample {
        if !(f > 0.0 && f <= 1.0) {
            return Err(Error::usage(format!("--sample {f} must be in (0, 1]")));
        }
    }
    let (mut table, _) = load_noting(&a.data, &Default::default(), catalog)?;
    if let Some(f) = a.sample {
        table.retain(|r| experiments::in_sample(r, f));
    }
    let cal = a.figures.options().calibration(false, &a.data, catalog)?;
    let resources = a.figures.options().kernel_resources()?;
    let ctx = Context::new(catalog, &cal, resources.as_ref())
        .with_launch_floors(a.figures.launch_floor());
    let train: Vec<&data::Run> = table.runs.iter().collect();
    let fitted = HybridParams::fit_hybrid(&params, &train, &ctx)?;
    fitted.save(&a.out)?;
    let state = fitted.state();
    eprintln!(
        "wrote {} (hybrid/{}, {} training pairs from {} GPUs and {} kernel families, data hash {}, correction share {}, {} for a new family)",
        a.out.display(),
        state.regressor.name(),
        state.pairs,
        state.training_gpus.len(),
        state.families.len(),
        state.data_hash,
        state.correction_share,
        state.new_family_share
    );
    Ok(())
}

fn reproduce(a: ReproduceArgs, catalog: &Catalog) -> Result<()> {
    let t0 = std::time::Instant::now();
    if let Some(page) = &a.accuracy_page {
        super::check::check_accuracy_page(page)?;
    }
    // Built-in experiments read the shipped data under the data directory (unless
    // --data replaces it); --experiments DIR reads files, their data beside them.
    let data_dir;
    let experiments_files = match &a.experiments {
        Some(dir) => experiments::ExperimentFiles::Dir(dir),
        None if !a.data.is_empty() => experiments::ExperimentFiles::Builtin(Path::new(".")),
        None => {
            data_dir = super::check::data_dir(&a.data_dir)?;
            experiments::ExperimentFiles::Builtin(&data_dir)
        }
    };
    let data = a.data.clone();
    let pb = progress_bar(0, "reproduce");
    let r = experiments::reproduce(
        &ReproduceOptions {
            data: &data,
            experiments: experiments_files,
            out: &a.out,
            plots: !a.no_plots,
        },
        catalog,
        &|name, done, total| {
            pb.set_length(total as u64);
            pb.set_position(done as u64);
            pb.set_message(name.to_string());
        },
    )?;
    pb.finish_and_clear();
    let t_total = t0.elapsed().as_secs_f64();
    // One narrow table for every experiment; each experiment's full tables are in
    // the output directory.
    let mut text = String::new();
    text += "== Summary (pooled MAPE %, ours beside published; per target and per kernel: each experiment's .md and .csv files)\n";
    text += &r.summary.to_text();
    text += &format!(
        "\nwrote {} files under {}\n",
        r.files.len(),
        a.out.display()
    );
    if a.timings {
        let t_models: f64 = r.outcomes.iter().map(|o| o.seconds).sum();
        text += "\ntimings (wall):\n";
        text += &format!("  load + validate  {:>8.3} s\n", r.load_seconds);
        for o in &r.outcomes {
            text += &format!("  {:<16} {:>8.3} s\n", o.experiment.name, o.seconds);
        }
        text += &format!("  all experiments  {:>8.3} s\n", t_models);
        text += &format!("  write outputs    {:>8.3} s\n", r.write_seconds);
        text += &format!("  total            {:>8.3} s\n", t_total);
    }
    if let Some(page) = &a.accuracy_page {
        super::check::write_accuracy_page(page, &r.outcomes)?;
        text += &format!("wrote the accuracy tables into {}\n", page.display());
    }
    if let Some(c) = &r.corun {
        text += &format!(
            "\n== {} (MAE of the together-time %, 90 % interval coverage %)\n",
            c.study.title
        );
        text += &experiments::corun::table(&c.rows).to_text();
    }
    let checks = a.check.then(|| {
        let mut checks = experiments::gate::check(&r.outcomes);
        if let Some(c) = &r.corun {
            checks.extend(experiments::corun::check(c));
        }
        checks
    });
    if let Some(checks) = &checks {
        text += &super::check::lines(checks)?;
    }
    out(&text)?;
    match checks.as_deref().and_then(super::check::breached) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
