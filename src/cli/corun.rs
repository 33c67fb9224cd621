//! `gpucast corun`: kernels sharing a GPU, each on its partition of SMs.

use super::commands::*;
use super::*;
use gpucast::catalog::Catalog;
use gpucast::error::{Error, Input, Result};
use gpucast::report::Table;
use gpucast::{experiments, pipeline};

/// `--kernel NAME[@CONFIG]:SMS` as (name, config, SMs).
fn kernel_selector(s: &str) -> Result<(&str, Option<&str>, u32)> {
    let bad = |why: &str| {
        Error::usage(format!(
            "--kernel '{s}': {why} (expected NAME:SMS or NAME@CONFIG:SMS)"
        ))
    };
    let (work, sms) = s.rsplit_once(':').ok_or_else(|| bad("no ':SMS'"))?;
    let sms: u32 = sms
        .trim()
        .parse()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| bad("the SMs are not a positive whole number"))?;
    let (kernel, config) = match work.split_once('@') {
        Some((k, c)) => (k.trim(), Some(c.trim())),
        None => (work.trim(), None),
    };
    if kernel.is_empty() {
        return Err(bad("no kernel name"));
    }
    Ok((kernel, config, sms))
}

pub(super) fn corun(a: CorunArgs, catalog: &Catalog) -> Result<()> {
    use gpucast::models::corun::{kernel_on, CorunParams, Roofs};
    let selectors = a
        .kernels
        .iter()
        .map(|k| kernel_selector(k))
        .collect::<Result<Vec<_>>>()?;
    let gpu = pipeline::resolve_input(catalog, Input::Target, &a.target)?;
    let sms: u32 = selectors.iter().map(|s| s.2).sum();
    if sms > gpu.sm_count {
        return Err(Error::usage(format!(
            "--kernel: the partitions take {sms} SMs, more than the {} of {}",
            gpu.sm_count, gpu.name
        )));
    }
    let (table, _) = load_noting(&a.runs, &pipeline::import_options(None, catalog)?, catalog)?;
    table.require_gpu(Input::Target, &gpu.name)?;
    let dirs = if a.coruns.is_empty() {
        experiments::corun::Study::builtin(&super::check::data_dir(&a.data_dir)?)?.gpus
    } else {
        a.coruns.clone()
    };
    let measured = dirs
        .iter()
        .map(|d| experiments::corun::load_gpu(d, catalog))
        .collect::<Result<Vec<_>>>()?;
    let train: Vec<_> = measured
        .iter()
        .flat_map(|g| g.sets.iter().map(move |s| (s, &g.roofs)))
        .collect();
    let fitted = CorunParams::default().fit(&train)?;
    let mut kernels = Vec::new();
    let mut sources = Vec::new();
    for (kernel, config, n) in &selectors {
        let (k, src) = kernel_on(&table, catalog, gpu, kernel, *config, *n)?;
        kernels.push(k);
        sources.push(src);
    }
    let predictions = fitted.predict(&kernels, &Roofs::of(gpu));
    let mut t = Table::new(&[
        "kernel",
        "config",
        "sms",
        "alone_ms",
        "alone",
        "together_ms",
        "slowdown",
        "low_ms",
        "high_ms",
    ]);
    for (p, src) in predictions.iter().zip(&sources) {
        t.push(vec![
            p.kernel.clone(),
            p.config.clone(),
            p.sm_count.to_string(),
            format!("{:.4}", p.time_alone_ms),
            src.name().to_string(),
            format!("{:.4}", p.time_together_ms),
            format!("{:.3}", p.slowdown),
            format!("{:.4}", p.low_ms),
            format!("{:.4}", p.high_ms),
        ]);
    }
    match a.format {
        Format::Table => out(&format!(
            "{} kernels together on {} (co-run model: roof scale {:.2}, fitted on {} measured sets; 90 % interval):\n{}",
            kernels.len(),
            gpu.name,
            fitted.roof_scale,
            train.len(),
            t.to_text()
        )),
        Format::Csv => out(&t.to_csv()),
        Format::Json => out(&t.to_json()),
    }
}
