//! What each command does: load, call the library, print.

use super::*;
use gpucast::catalog::Catalog;
use gpucast::data::{self, RunsTable};
use gpucast::error::{Error, Result};
use gpucast::evaluation::{self, Protocol};
use gpucast::features::Calibration;
use gpucast::models::{self, analytical, hybrid, Context, Evidence, Model};
use gpucast::report::{self, Table};
use std::path::Path;

pub fn run(cli: Cli) -> Result<()> {
    let mut catalog = Catalog::builtin();
    for f in &cli.global.gpus {
        catalog.merge_file(f)?;
    }
    match cli.command {
        Command::Data { command } => data_cmd(command, &catalog),
        Command::Gpus { command } => gpus_cmd(command, &catalog),
        Command::Predict(a) => predict(a, &catalog),
        Command::Explain(a) => explain(a, &catalog),
        Command::Evaluate(a) => evaluate(a, &catalog),
        Command::Train(a) => train(a, &catalog),
        Command::Reproduce(a) => reproduce(a, &catalog),
    }
}

/// Load and validate runs (errors stop here with one line).
fn load(paths: &[PathBuf], catalog: &Catalog) -> Result<(RunsTable, data::ValidationReport)> {
    let mut table = data::load(paths)?;
    let report = data::validate(&mut table, catalog)?;
    Ok((table, report))
}

fn print_json<T: serde::Serialize>(v: &T) -> Result<()> {
    println!(
        "{}",
        serde_json::to_string_pretty(v).map_err(|e| Error::msg(e.to_string()))?
    );
    Ok(())
}

fn print_table(t: &Table, format: Format) {
    match format {
        Format::Csv => print!("{}", t.to_csv()),
        _ => print!("{}", t.to_text()),
    }
}

/// Per file: rows, failed configurations and left-out rows by reason; then the
/// features imported rows lack, and why.
fn print_import_report(rep: &data::importers::ImportReport) {
    let counts = |m: &std::collections::BTreeMap<String, usize>| {
        m.iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut t = Table::new(&[
        "file", "format", "gpu", "kernel", "rows", "failed", "left_out",
    ]);
    for f in &rep.files {
        t.push(vec![
            f.file.clone(),
            f.format.clone(),
            f.gpus.join("; "),
            if f.kernels.len() > 4 {
                format!("{} kernels", f.kernels.len())
            } else {
                f.kernels.join("; ")
            },
            f.rows.to_string(),
            counts(&f.failed),
            counts(&f.left_out),
        ]);
    }
    print!("{}", t.to_text());
    println!(
        "\n{} rows imported; {} failed configurations not imported ({} absurd times)",
        rep.rows(),
        rep.failed_total(),
        rep.absurd_times()
    );
    for (feature, (rows, why)) in rep.missing() {
        println!("missing {feature} in {rows} rows: {}", why.join("; "));
    }
    if let Some(first) = rep.skipped.first() {
        println!(
            "skipped {} file(s) of no recognised format in the input directories (first: {first})",
            rep.skipped.len()
        );
    }
    for f in &rep.files {
        for n in &f.notes {
            println!("note: {}: {n}", f.file);
        }
    }
}

fn data_cmd(cmd: DataCommand, catalog: &Catalog) -> Result<()> {
    match cmd {
        DataCommand::Import {
            inputs,
            out,
            from,
            source,
            workloads,
            validate,
        } => {
            let format = data::importers::Format::parse(&from)?;
            let mut opts = data::importers::ImportOptions {
                source,
                ..Default::default()
            };
            for w in &workloads {
                opts.workloads.add_path(w)?;
            }
            let imported = data::importers::import_paths(&inputs, format, &opts)?;
            print_import_report(&imported.report);
            let mut table = imported.table;
            if validate {
                data::validate(&mut table, catalog)?;
            }
            data::write(&table, &out)?;
            eprintln!(
                "wrote {} rows from {} file(s) to {}",
                table.len(),
                table.files.len(),
                out.display()
            );
            Ok(())
        }
        DataCommand::Validate { paths, format } => {
            let (_, rep) = load(&paths, catalog)?;
            if format == Format::Json {
                return print_json(&rep);
            }
            let mut t = Table::new(&[
                "gpu", "rows", "kernels", "configs", "flagged", "excluded", "reasons",
            ]);
            for g in &rep.per_gpu {
                let reasons = g
                    .reasons
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(" ");
                t.push(vec![
                    g.gpu.clone(),
                    g.rows.to_string(),
                    g.kernels.to_string(),
                    g.configs.to_string(),
                    g.flagged.to_string(),
                    g.excluded.to_string(),
                    reasons,
                ]);
            }
            print_table(&t, format);
            if format == Format::Table {
                println!(
                    "\n{} rows in {} file(s): {} flagged, {} excluded from models by the rule in `data::validate::is_excluded` (implausible: above a peak no cache explains, or flat over >= 16x work){}",
                    rep.rows,
                    rep.files.len(),
                    rep.flagged,
                    rep.excluded,
                    if rep.skipped_error_rows > 0 { format!("; {} runner error rows skipped", rep.skipped_error_rows) } else { String::new() }
                );
            }
            Ok(())
        }
        DataCommand::Show {
            paths,
            gpu,
            kernel,
            limit,
        } => {
            let (table, _) = load(&paths, catalog)?;
            let gpu = gpu
                .map(|g| catalog.resolve_or_err(&g).map(|x| x.name.clone()))
                .transpose()?;
            let mut t = Table::new(&[
                "row",
                "gpu",
                "kernel",
                "config",
                "time_ms",
                "flops",
                "dram_bytes",
                "flags",
            ]);
            let rows = table
                .runs
                .iter()
                .enumerate()
                .filter(|(_, r)| gpu.as_ref().is_none_or(|g| &r.gpu == g))
                .filter(|(_, r)| kernel.as_ref().is_none_or(|k| &r.kernel == k));
            let mut shown = 0;
            let mut total = 0;
            for (i, r) in rows {
                total += 1;
                if limit == 0 || shown < limit {
                    t.push(vec![
                        (i + 1).to_string(),
                        r.gpu.clone(),
                        r.kernel.clone(),
                        r.config.clone(),
                        format!("{:.6}", r.time_ms),
                        format!("{:.4e}", r.flops),
                        format!("{:.4e}", r.dram_bytes),
                        r.flags.join(";"),
                    ]);
                    shown += 1;
                }
            }
            print!("{}", t.to_text());
            if shown < total {
                println!("... {shown} of {total} rows shown (--limit 0 for all)");
            }
            Ok(())
        }
    }
}

fn gpus_cmd(cmd: GpusCommand, catalog: &Catalog) -> Result<()> {
    match cmd {
        GpusCommand::List { format } => {
            if format == Format::Json {
                return print_json(&catalog.gpus());
            }
            let mut t = Table::new(&[
                "name",
                "arch",
                "cc",
                "SMs",
                "boost MHz",
                "FP32 GFLOP/s",
                "DRAM GB/s",
                "L2 MiB",
            ]);
            for g in catalog.gpus() {
                t.push(vec![
                    g.name.clone(),
                    g.arch.clone(),
                    g.compute_capability.clone(),
                    g.sm_count.to_string(),
                    format!("{:.0}", g.boost_clock_mhz),
                    format!("{:.0}", g.fp32_gflops),
                    format!("{:.0}", g.mem_bandwidth_gbs),
                    format!("{:.1}", g.l2_bytes as f64 / 1048576.0),
                ]);
            }
            print_table(&t, format);
            if format == Format::Table {
                println!("\n{} GPUs", catalog.gpus().len());
            }
            Ok(())
        }
        GpusCommand::Show { name } => {
            let g = catalog.resolve_or_err(&name)?;
            let text = toml::to_string_pretty(g).map_err(|e| Error::msg(e.to_string()))?;
            println!("{text}");
            let limits = toml::to_string_pretty(&catalog.limits(g))
                .map_err(|e| Error::msg(e.to_string()))?;
            println!(
                "# occupancy limits (compute capability {})\n{limits}",
                g.compute_capability
            );
            Ok(())
        }
    }
}

/// The calibration for a command: spec or measured; analytical-study also reads the
/// study's gpu_metrics.json when one is given or sits beside the data.
fn calibration(
    f: &FiguresArgs,
    model: &str,
    data: &[PathBuf],
    catalog: &Catalog,
) -> Result<Calibration> {
    if model == "analytical-study" {
        let path = f.study_metrics.clone().or_else(|| {
            data.iter()
                .map(|d| {
                    if d.is_dir() {
                        d.join("gpu_metrics.json")
                    } else {
                        d.with_file_name("gpu_metrics.json")
                    }
                })
                .find(|p| p.exists())
        });
        if let Some(p) = path {
            return Calibration::from_study_metrics(&p, catalog);
        }
    }
    Ok(match f.target_calibration {
        TargetCalibration::Spec => Calibration::Spec,
        TargetCalibration::Measured => Calibration::Measured,
    })
}

fn load_model(spec: &str, seed: u64) -> Result<Box<dyn Model>> {
    if spec.ends_with(".json") {
        let text = std::fs::read_to_string(spec).map_err(|e| Error::file(spec, e.to_string()))?;
        let state: hybrid::HybridState = serde_json::from_str(&text).map_err(|e| {
            Error::file(
                spec,
                format!("not a gpucast model file (corrupted or another format): {e}"),
            )
        })?;
        let m = hybrid::Hybrid::from_state(state).map_err(|e| Error::file(spec, e.to_string()))?;
        return Ok(Box::new(m));
    }
    models::by_name(spec, seed)
}

fn predict(a: PredictArgs, catalog: &Catalog) -> Result<()> {
    let (mut table, _) = load(&a.runs, catalog)?;
    let target = catalog.resolve_or_err(&a.target)?.name.clone();
    let cal = calibration(&a.figures, &a.model, &a.runs, catalog)?;
    let resources = gpucast::features::KernelResources::load(a.figures.resources.as_deref())?;
    let ctx = Context {
        catalog,
        calibration: &cal,
        resources: resources.as_ref(),
    };
    let mut model = load_model(&a.model, a.seed)?;
    if !a.model.ends_with(".json") {
        // Fit learned parts on the training data (never on the target's rows).
        let train_table = if a.data.is_empty() {
            table.clone()
        } else {
            load(&a.data, catalog)?.0
        };
        let train: Vec<_> = train_table
            .runs
            .into_iter()
            .filter(|r| r.gpu != target)
            .collect();
        model.fit(&train, &ctx)?;
    }
    if let Some(src) = &a.source {
        let src = catalog.resolve_or_err(src)?.name.clone();
        table.retain(|r| r.gpu == src);
    }
    table.retain(|r| r.gpu != target);
    let evidence = Evidence::new(table.runs.iter());
    // One prediction per distinct work (kernel, config) among the source rows.
    let mut seen = std::collections::HashSet::new();
    let mut out = table.clone();
    let mut keep = Vec::new();
    let mut preds = Vec::new();
    for r in &table.runs {
        let first = seen.insert((r.kernel.clone(), r.config.clone()));
        keep.push(first);
        if !first {
            continue;
        }
        let mut q = evaluation::query_of(r);
        q.gpu = target.clone();
        preds.push(model.predict(&q, &evidence, &ctx)?);
    }
    let mut it = keep.iter();
    out.retain(|_| *it.next().unwrap_or(&false));
    let mut df = data::table_frame(&out)?;
    use polars::prelude::Column;
    let n = out.len();
    let col = |name: &str, f: &dyn Fn(&models::Prediction) -> f64| {
        Column::new(
            name.into(),
            preds
                .iter()
                .map(|p| p.as_ref().map(f))
                .collect::<Vec<Option<f64>>>(),
        )
    };
    let cols = vec![
        Column::new("target_gpu".into(), vec![target.clone(); n]),
        col("pred_ms", &|p| p.pred_ms),
        col("pred_lo_ms", &|p| p.lo_ms),
        col("pred_hi_ms", &|p| p.hi_ms),
        Column::new(
            "bound".into(),
            preds
                .iter()
                .map(|p| p.map(|p| p.bound.to_string()))
                .collect::<Vec<Option<String>>>(),
        ),
        Column::new("model".into(), vec![model.name(); n]),
    ];
    df.hstack_mut(&cols)
        .map_err(|e| Error::msg(e.to_string()))?;
    if let Some(path) = &a.out {
        data::write_frame(&mut df, path)?;
        eprintln!("wrote {n} predictions for {target} to {}", path.display());
        return Ok(());
    }
    match a.format {
        Format::Csv => {
            let mut buf = Vec::new();
            use polars::prelude::SerWriter;
            polars::prelude::CsvWriter::new(&mut buf)
                .finish(&mut df)
                .map_err(|e| Error::msg(e.to_string()))?;
            print!("{}", String::from_utf8_lossy(&buf));
        }
        Format::Json => {
            let rows: Vec<serde_json::Value> = out
                .runs
                .iter()
                .zip(&preds)
                .map(|(r, p)| {
                    serde_json::json!({"kernel": r.kernel, "config": r.config, "source_gpu": r.gpu,
                        "source_ms": r.time_ms, "target_gpu": target, "model": model.name(),
                        "pred_ms": p.map(|p| p.pred_ms), "pred_lo_ms": p.map(|p| p.lo_ms),
                        "pred_hi_ms": p.map(|p| p.hi_ms), "bound": p.map(|p| p.bound.to_string())})
                })
                .collect();
            print_json(&rows)?;
        }
        Format::Table => {
            let mut t = Table::new(&[
                "kernel",
                "config",
                "pred_ms",
                "pred_lo_ms",
                "pred_hi_ms",
                "bound",
            ]);
            for (r, p) in out.runs.iter().zip(&preds) {
                let f = |v: Option<f64>| v.map(|x| format!("{x:.6}")).unwrap_or_else(|| "-".into());
                t.push(vec![
                    r.kernel.clone(),
                    r.config.clone(),
                    f(p.map(|p| p.pred_ms)),
                    f(p.map(|p| p.lo_ms)),
                    f(p.map(|p| p.hi_ms)),
                    p.map(|p| p.bound.to_string()).unwrap_or_default(),
                ]);
            }
            println!("{} on {target}:", model.name());
            print!("{}", t.to_text());
        }
    }
    Ok(())
}

fn explain(a: ExplainArgs, catalog: &Catalog) -> Result<()> {
    let (table, _) = load(&a.runs, catalog)?;
    let target = catalog.resolve_or_err(&a.target)?.name.clone();
    let row = table.runs.get(a.row.wrapping_sub(1)).ok_or_else(|| {
        Error::msg(format!(
            "--row {}: the data has rows 1..={}",
            a.row,
            table.len()
        ))
    })?;
    let cal = calibration(&a.figures, "analytical", &a.runs, catalog)?;
    let resources = gpucast::features::KernelResources::load(a.figures.resources.as_deref())?;
    let ctx = Context {
        catalog,
        calibration: &cal,
        resources: resources.as_ref(),
    };
    let mut q = evaluation::query_of(row);
    q.gpu = target.clone();
    let source = a
        .source
        .as_ref()
        .map(|s| catalog.resolve_or_err(s).map(|g| g.name.clone()))
        .transpose()?;
    let evidence = Evidence::new(
        table
            .runs
            .iter()
            .filter(|r| r.gpu != target && source.as_ref().is_none_or(|s| &r.gpu == s)),
    );
    let ps = analytical::projections(&q, &evidence, &ctx)?;
    if ps.is_empty() {
        return Err(Error::msg(format!(
            "no source measures {} {} on a GPU other than {target}",
            q.kernel, q.config
        )));
    }
    println!(
        "{} {} -> {target}  (calibration: {})",
        q.kernel,
        q.config,
        cal.name()
    );
    for (_, p) in &ps {
        let f = |x: &gpucast::features::RunFeatures| {
            format!(
                "bound {:<7} roof {:.6} ms (dram {:.6}, l2 {:.6}, compute {:.6}, atomic {:.6}) occupancy {} waves {} floor {:.4} ms{}",
                x.bound.as_str(), x.roof_ms, x.dram_ms, x.l2_ms, x.compute_ms, x.atomic_ms,
                x.occupancy.map(|o| format!("{:.3} ({} blocks/SM, {})", o.occupancy, o.blocks_per_sm, o.limiter)).unwrap_or_else(|| "-".into()),
                x.waves.map(|w| format!("{w:.2} (tail {:.2})", x.tail_efficiency.unwrap_or(1.0))).unwrap_or_else(|| "-".into()),
                x.launch_floor_ms,
                if x.fits_l2 { ", working set fits L2" } else { "" }
            )
        };
        println!("\nsource {}: measured {:.6} ms", p.source_gpu, p.source_ms);
        println!("  source  {}", f(&p.source));
        println!("  target  {}", f(&p.target));
        println!("  busy (measured - floor)  {:.6} ms", p.busy_source_ms);
        println!(
            "  efficiency (roof / (occupancy x measured))  {:.3}",
            p.efficiency
        );
        println!(
            "  roof share (eta) {:.3}: time ratio = roof ratio {:.4}^eta x latency ratio {:.4}^(1-eta) x wave ratio {:.4}  (the study's occupancy ratio: {:.4})",
            p.roof_share, p.roof_ratio, p.latency_ratio, p.wave_ratio, p.occupancy_ratio
        );
        println!(
            "  projection {:.6} ms  (with DRAM roof {:.6}, with L2 roof {:.6})  weight {:.3}",
            p.pred_ms, p.pred_dram_ms, p.pred_l2_ms, p.weight
        );
    }
    if let Some(c) = analytical::combine(ps.iter().map(|(_, p)| p)) {
        println!(
            "\ncombined: {:.6} ms  interval [{:.6}, {:.6}]  bound {}",
            c.pred_ms, c.lo_ms, c.hi_ms, c.bound
        );
    }
    Ok(())
}

fn progress_bar(len: u64, msg: &str) -> indicatif::ProgressBar {
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
    let (table, rep) = load(&a.data, catalog)?;
    let protocol = Protocol::parse(&a.protocol, a.test_kernels.clone())?;
    for m in &a.model {
        models::by_name(m, a.seed)?;
    }
    let ours = calibration(&a.figures, "", &a.data, catalog)?;
    let study = calibration(&a.figures, "analytical-study", &a.data, catalog)?;
    let resources = gpucast::features::KernelResources::load(a.figures.resources.as_deref())?;
    let selection = Default::default();
    let pb = progress_bar(
        (evaluation::fold_count(&table.runs, &protocol, &selection) * a.model.len()) as u64,
        protocol.name(),
    );
    let setup = gpucast::experiments::ModelSetup {
        catalog,
        ours: &ours,
        study: &study,
        resources: resources.as_ref(),
        seed: a.seed,
    };
    let mut eval = gpucast::experiments::evaluate_models(
        &table.runs,
        &protocol,
        &selection,
        &a.model,
        setup,
        &|| pb.inc(1),
    )?;
    pb.finish_and_clear();
    eval.data = table.files.clone();
    if let Some(p) = &a.predictions {
        report::write_atomic(p, &report::records_table(&eval).to_csv())?;
    }
    match a.format {
        Format::Json => print_json(&eval)?,
        f => {
            print_table(&report::results_table(&eval), f);
            if a.per_kernel {
                println!();
                print_table(&report::per_kernel_table(&eval), f);
            }
            if f == Format::Table {
                let missing: Vec<String> = eval
                    .unpredicted
                    .iter()
                    .filter(|(_, n)| *n > 0)
                    .map(|(m, n)| format!("{m}: {n}"))
                    .collect();
                println!(
                    "\nprotocol {}; calibration {} (analytical-study: {}); {} rows, {} excluded by the validation rule{}",
                    protocol.name(),
                    ours.name(),
                    study.name(),
                    rep.rows,
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
                for line in report::fit_summary_lines(&eval) {
                    println!("fitted: {line}");
                }
            }
        }
    }
    Ok(())
}

fn train(a: TrainArgs, catalog: &Catalog) -> Result<()> {
    if a.model != "hybrid" {
        return Err(Error::msg(format!(
            "train: only 'hybrid' is saved as a file (got '{}')",
            a.model
        )));
    }
    let (table, _) = load(&a.data, catalog)?;
    let cal = calibration(&a.figures, &a.model, &a.data, catalog)?;
    let resources = gpucast::features::KernelResources::load(a.figures.resources.as_deref())?;
    let ctx = Context {
        catalog,
        calibration: &cal,
        resources: resources.as_ref(),
    };
    let mut m = hybrid::Hybrid::new(a.seed);
    m.fit(&table.runs, &ctx)?;
    let state = m
        .state()
        .ok_or_else(|| Error::msg("train: model not fitted"))?;
    let text = serde_json::to_string(state).map_err(|e| Error::msg(e.to_string()))?;
    report::write_atomic(&a.out, &text)?;
    eprintln!(
        "wrote {} (hybrid/{}, {} training pairs from {} GPUs, data hash {})",
        a.out.display(),
        state.regressor.name(),
        state.y.len(),
        state.training_gpus.len(),
        state.data_hash
    );
    Ok(())
}

fn reproduce(a: ReproduceArgs, catalog: &Catalog) -> Result<()> {
    use gpucast::experiments;
    use std::time::Instant;
    let t0 = Instant::now();
    let data = if a.data.is_empty() {
        let shipped = Path::new("datasets");
        if data::runs_files_in(shipped)
            .map(|f| f.is_empty())
            .unwrap_or(true)
        {
            return Err(Error::msg(
                "datasets/ holds no measurements yet: pass --data PATH (e.g. --data ../shared/reference-data)",
            ));
        }
        vec![shipped.to_path_buf()]
    } else {
        a.data.clone()
    };
    let (table, rep) = load(&data, catalog)?;
    let t_load = t0.elapsed().as_secs_f64();
    let study_metrics = data
        .iter()
        .map(|d| {
            if d.is_dir() {
                d.join("gpu_metrics.json")
            } else {
                d.with_file_name("gpu_metrics.json")
            }
        })
        .find(|p| p.exists());
    let exps = experiments::discover(&a.experiments)?
        .iter()
        .map(|p| experiments::Experiment::load(p))
        .collect::<Result<Vec<_>>>()?;
    let total: usize = exps.iter().map(|e| e.models.len()).sum();
    let pb = progress_bar(total as u64, "reproduce");
    let mut outcomes = Vec::new();
    for e in &exps {
        pb.set_message(e.name.clone());
        let o = experiments::run(
            e,
            &table.runs,
            &table.files,
            catalog,
            study_metrics.as_deref(),
            &|| {},
        )?;
        pb.inc(e.models.len() as u64);
        outcomes.push(o);
    }
    pb.finish_and_clear();
    let t_models = t0.elapsed().as_secs_f64() - t_load;
    let mut written = Vec::new();
    for o in &outcomes {
        written.extend(experiments::write_outputs(o, &a.out, !a.no_plots)?);
    }
    if !a.no_plots {
        written.extend(experiments::roofline_plots(&table.runs, catalog, &a.out)?);
    }
    let summary = experiments::summary_table(&outcomes);
    let mut md = String::from("# All models, MAPE (%): ours beside the published figures\n\n");
    md += &format!(
        "Data: {} ({} rows; {} flagged, {} excluded by the validation rule).\n\n",
        table.files.join(", "),
        rep.rows,
        rep.flagged,
        rep.excluded
    );
    md += &summary.to_markdown();
    let summary_md = a.out.join("summary.md");
    report::write_atomic(&summary_md, &md)?;
    report::write_atomic(&a.out.join("summary.csv"), &summary.to_csv())?;
    written.push(summary_md);
    let t_total = t0.elapsed().as_secs_f64();

    for o in &outcomes {
        println!("== {} ({})", o.experiment.title, o.evaluation.protocol);
        print!("{}", experiments::comparison_table(o).to_text());
        println!();
    }
    println!("== All models, MAPE %");
    print!("{}", summary.to_text());
    println!(
        "\nwrote {} files under {}",
        written.len() + 1,
        a.out.display()
    );
    if a.timings {
        println!("\ntimings (wall):");
        println!("  load + validate  {:>8.3} s", t_load);
        for o in &outcomes {
            println!("  {:<16} {:>8.3} s", o.experiment.name, o.seconds);
        }
        println!("  all experiments  {:>8.3} s", t_models);
        println!("  write outputs    {:>8.3} s", t_total - t_load - t_models);
        println!("  total            {:>8.3} s", t_total);
    }
    Ok(())
}
