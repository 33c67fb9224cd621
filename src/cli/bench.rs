//! `gpucast bench`: time the pipeline's stages on generated or given data.

use super::commands::*;
use super::*;
use gpucast::catalog::Catalog;
use gpucast::error::{Error, Result};
use gpucast::models::Context;
use gpucast::report;

pub(super) fn bench(a: BenchArgs, catalog: &Catalog) -> Result<()> {
    use gpucast::bench;
    // (before loading: a million rows take seconds to read)
    if a.repeat == 0 {
        return Err(Error::usage(
            "--repeat 0: a stage is timed at least once (the fastest of --repeat runs is reported)",
        ));
    }
    for &gpus in &a.gpu_count {
        for &rows in &a.rows {
            bench::check_size(rows, gpus)?;
        }
    }
    let paths = if a.data.is_empty() {
        vec![super::check::data_dir(&a.data_dir)?.join("datasets/public/aiconfigurator")]
    } else {
        a.data.clone()
    };
    // Loading and validating: what every command pays first, its own stage. Its
    // repeats come after the other stages, so their peak memory is that of one table.
    let stages: Vec<bench::Stage> = a.stage.iter().map(|&s| s.into()).collect();
    let layout: bench::Layout = a.layout.into();
    let timed_load = stages.contains(&bench::Stage::Load);
    let (mut table, load_s) = bench::time_load(&paths, catalog)?;
    let (table_rows, table_gpus) = (table.len(), table.gpus().len());
    eprintln!("loaded and validated {table_rows} rows in {load_s:.2} s");
    let cal = a.figures.options().calibration(false, &paths, catalog)?;
    let resources = a.figures.options().kernel_resources()?;
    let ctx = Context::new(catalog, &cal, resources.as_ref())
        .with_launch_floors(a.figures.launch_floor());
    let mut timings = Vec::new();
    let subset_stages: Vec<bench::Stage> = stages
        .iter()
        .copied()
        .filter(|s| *s != bench::Stage::Load)
        .collect();
    let sizes: Vec<(usize, usize)> = a
        .gpu_count
        .iter()
        .flat_map(|&gpus| a.rows.iter().map(move |&rows| (rows, gpus)))
        .collect();
    for (n, &(rows, gpus)) in sizes.iter().enumerate() {
        if subset_stages.is_empty() {
            break;
        }
        let picked = bench::subset_rows(&table.runs, rows, gpus)?;
        let laid_out = bench::lay_out(&mut table.runs, &picked, layout, n + 1 == sizes.len());
        let runs = laid_out.runs();
        for &stage in &subset_stages {
            let pb = indicatif::ProgressBar::new_spinner()
                .with_message(format!("{} on {rows} rows x {gpus} GPUs", stage.name()));
            pb.enable_steady_tick(std::time::Duration::from_millis(200));
            let timing = bench::time_stage(stage, &runs, layout, a.repeat, &ctx)?;
            pb.finish_and_clear();
            eprintln!(
                "{} on {} rows x {} GPUs, {} threads: {:.2} s (min of {})",
                timing.stage,
                timing.rows,
                timing.gpus,
                timing.threads,
                timing.min_seconds,
                timing.seconds.len()
            );
            timings.push(timing);
        }
    }
    if timed_load {
        drop(table);
        let mut seconds = vec![load_s];
        for _ in 1..a.repeat {
            seconds.push(bench::time_load(&paths, catalog)?.1); // (each table dropped)
        }
        timings.insert(0, bench::load_timing(table_rows, table_gpus, seconds));
    }
    if a.markdown {
        return out(&report::timings_table(&timings).to_markdown());
    }
    if a.format == Format::Json {
        // Numbers, not the table's rounded text: what a script compares across runs.
        return out(&json(&timings)?);
    }
    out_table(
        &report::timings_table(&timings),
        a.format,
        &format!(
            "peak RSS is the process's high-water mark so far (loading included); \
             subsets laid out as --layout {}",
            layout.name()
        ),
    )
}
