//! Every catalog GPU ranked for a kernel (or a whole runs file): what `gpucast rank`
//! does, as a library function. Each GPU passing the filters is predicted from the
//! runs as `predict` predicts it ([`crate::pipeline`], [`crate::predict::predict_table`]),
//! from and fitted on its own vendor's runs where they suffice ([`MIN_OWN_VENDOR_FIT_GPUS`]),
//! and marked where that is an extrapolation ([`extrapolation`]); a GPU the runs
//! measured keeps its measured time.
//!
//! A *problem* is one kernel doing one work (equal FLOPs, or bytes where a kernel
//! counts none): a tuning space, or a single configuration. A GPU's time for a
//! problem is its fastest configuration (predicted, or measured on a source GPU): the
//! kernel as it would be tuned there. A GPU's time is the sum over the problems, its
//! bounds the sums of the chosen configurations' bounds. A GPU without a prediction for
//! every problem is not ranked: it is listed with the reason.

use crate::catalog::{Catalog, Gpu};
use crate::data::{validate::is_excluded, Run, RunsTable};
use crate::error::{text_place, toml_message, Error, Input, Result};
use crate::models::Context;
use crate::pipeline::{self, PredictOptions};
use crate::predict::{predict_table, ModelChoice};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Which catalog GPUs to rank (every one when all are None).
#[derive(Debug, Clone, Default)]
pub struct Filters {
    /// Only this vendor's GPUs (as the catalog writes it, any case).
    pub vendor: Option<String>,
    /// Only GPUs of this architecture (as the catalog writes it, any case).
    pub arch: Option<String>,
    /// Only GPUs with at least this much memory (GB, the catalog's `mem_gb`).
    pub min_memory_gb: Option<f64>,
    /// Only these GPUs (names matched in the catalog).
    pub gpus: Option<Vec<String>>,
}

/// Prices of GPUs by the hour (US dollars), keyed by catalog name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prices {
    pub usd_per_hour: BTreeMap<String, f64>,
}

impl Prices {
    /// Read a price file: TOML of `"GPU name" = dollars per hour`, each name matched in
    /// the catalog (never guessed); an error names the file, line and column.
    pub fn load(path: &Path, catalog: &Catalog) -> Result<Prices> {
        let text = crate::files::read_to_string(path)
            .map_err(|e| Error::io_error(path.display(), "cannot read", e))?;
        Prices::parse(&text, &path.display().to_string(), catalog)
    }

    /// [`Prices::load`] of `text`; `file` names it in errors.
    pub fn parse(text: &str, file: &str, catalog: &Catalog) -> Result<Prices> {
        use serde::Deserialize;
        use toml::de::{DeTable, ValueDeserializer};
        let doc = DeTable::parse(text).map_err(|e| {
            Error::file(
                crate::error::toml_place(file, text, &e),
                format!("not a valid price file: {}", toml_message(&e)),
            )
        })?;
        let mut prices = Prices::default();
        for (key, value) in doc.into_inner() {
            let at = |offset: usize| text_place(file, text, offset);
            let name = key.get_ref();
            let gpu = catalog.resolve(name).ok_or_else(|| {
                Error::file(
                    at(key.span().start),
                    format!("unknown GPU '{name}': {}", catalog.unresolved_hint(name)),
                )
            })?;
            let value_at = value.span().start;
            let usd = f64::deserialize(ValueDeserializer::from(value))
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| {
                    Error::file(
                        at(value_at),
                        format!("'{name}': the price must be a number of dollars per hour (>= 0)"),
                    )
                })?;
            if prices.usd_per_hour.insert(gpu.name.clone(), usd).is_some() {
                return Err(Error::file(
                    at(key.span().start),
                    format!("'{name}' is {}, priced twice", gpu.name),
                ));
            }
        }
        Ok(prices)
    }
}

/// Where a ranked GPU's time comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Basis {
    /// The runs measured it (every problem).
    Measured,
    /// Predicted from the runs of other GPUs.
    Predicted,
}

/// One ranked GPU.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Ranked {
    pub gpu: String,
    pub vendor: String,
    pub arch: String,
    pub basis: Basis,
    /// The sum over the problems of the fastest configuration's time.
    pub time_ms: f64,
    pub lo_ms: f64,
    pub hi_ms: f64,
    /// What `lo_ms..hi_ms` is: the predictions' interval ("90%", "spread", "none";
    /// "mixed" when the problems' differ) or "measured".
    pub interval: String,
    /// The best source GPU's measured time over this GPU's time.
    pub speedup: f64,
    /// time (s) x the catalog's TDP (W): an energy proxy in joules, the energy at the
    /// board's rated power, not a measurement (None without a TDP).
    pub energy_proxy_j: Option<f64>,
    /// time (h) x the price file's dollars per hour (None without a price).
    pub cost_per_run_usd: Option<f64>,
    /// The source GPUs the prediction came from (none when measured): its own
    /// vendor's where the data hold enough of them (a source for every problem and
    /// [`MIN_OWN_VENDOR_FIT_GPUS`] to fit on), and then the model was fitted on that
    /// vendor's runs alone; else every GPU's.
    pub sources: Vec<String>,
    /// How many of `sources` each vendor has.
    pub source_vendors: BTreeMap<String, usize>,
    /// Why the prediction is an extrapolation ([`extrapolation`]); None when it is not
    /// (or measured).
    pub extrapolated: Option<String>,
}

/// A GPU passing the filters that is not ranked, and why.
#[derive(Debug, Clone, serde::Serialize)]
pub struct NotRanked {
    pub gpu: String,
    pub reason: String,
}

/// The ranking: GPUs fastest first, then those not ranked.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Ranking {
    pub model: String,
    /// The kernels ranked and how many problems they make.
    pub kernels: Vec<String>,
    pub problems: usize,
    /// The source GPU with the lowest measured time, and that time.
    pub best_source: String,
    pub best_source_ms: f64,
    pub ranked: Vec<Ranked>,
    pub not_ranked: Vec<NotRanked>,
    /// What the user should know (one line each).
    pub notes: Vec<String>,
}

/// What to rank: the runs and model (as `predict` takes them; `source` limits the
/// source GPUs), the kernel (None: every kernel of the runs), which GPUs, and prices.
pub struct RankOptions<'p> {
    pub predict: PredictOptions,
    pub kernel: Option<String>,
    pub filters: Filters,
    pub prices: Option<&'p Prices>,
}

/// The catalog GPUs passing `filters`, in catalog order, and those the memory
/// filter cannot judge (no `mem_gb`) with the reason.
pub fn candidates<'c>(
    catalog: &'c Catalog,
    filters: &Filters,
) -> Result<(Vec<&'c Gpu>, Vec<NotRanked>)> {
    let known = |field: fn(&Gpu) -> &str, asked: &Option<String>, what: &str| -> Result<()> {
        let Some(asked) = asked else { return Ok(()) };
        let mut values: Vec<&str> = catalog.gpus().iter().map(field).collect();
        values.sort_unstable();
        values.dedup();
        if values.iter().any(|v| v.eq_ignore_ascii_case(asked)) {
            return Ok(());
        }
        Err(Error::InvalidInput {
            what: format!("{what} '{asked}'"),
            message: format!(
                "no GPU of the catalog has it (the catalog's: {})",
                values.join(", ")
            ),
        })
    };
    known(|g| g.vendor.as_str(), &filters.vendor, "vendor")?;
    known(|g| g.arch.as_str(), &filters.arch, "architecture")?;
    let named: Option<Vec<String>> = filters
        .gpus
        .as_ref()
        .map(|names| {
            names
                .iter()
                .map(|n| {
                    pipeline::resolve_input(catalog, Input::Targets, n).map(|g| g.name.clone())
                })
                .collect::<Result<Vec<_>>>()
        })
        .transpose()?;
    let mut kept = Vec::new();
    let mut unjudged = Vec::new();
    for g in catalog.gpus() {
        let same = |asked: &Option<String>, v: &str| {
            asked.as_ref().is_none_or(|a| a.eq_ignore_ascii_case(v))
        };
        if !same(&filters.vendor, &g.vendor)
            || !same(&filters.arch, &g.arch)
            || named.as_ref().is_some_and(|n| !n.contains(&g.name))
        {
            continue;
        }
        if let Some(min) = filters.min_memory_gb {
            match g.mem_gb {
                Some(m) if m >= min => {}
                Some(_) => continue,
                None => {
                    unjudged.push(NotRanked {
                        gpu: g.name.clone(),
                        reason: "the catalog has no memory size for it (the memory filter cannot judge it)".into(),
                    });
                    continue;
                }
            }
        }
        kept.push(g);
    }
    Ok((kept, unjudged))
}

/// A problem: a kernel and its work's bits (FLOPs, or bytes where it counts none).
type Problem = (String, u64);

fn problem_of(r: &Run) -> Problem {
    let work = if r.flops > 0.0 { r.flops } else { r.dram_bytes };
    (r.kernel.to_string(), work.to_bits())
}

/// Each GPU's fastest measured time per problem (rows validation kept).
fn measured_best(runs: &[Run]) -> BTreeMap<String, BTreeMap<Problem, f64>> {
    let mut best: BTreeMap<String, BTreeMap<Problem, f64>> = BTreeMap::new();
    for r in runs.iter().filter(|r| !is_excluded(r)) {
        let t = best
            .entry(r.gpu.to_string())
            .or_default()
            .entry(problem_of(r))
            .or_insert(f64::INFINITY);
        *t = t.min(r.time_ms);
    }
    best
}

/// Rank the GPUs of `catalog` passing `opts.filters` for the runs of `opts`;
/// `progress(done, total)` is told after each GPU.
pub fn rank(
    opts: &RankOptions,
    catalog: &Catalog,
    progress: &dyn Fn(usize, usize),
) -> Result<Ranking> {
    let p = &opts.predict;
    let (gpus, mut not_ranked) = candidates(catalog, &opts.filters)?;
    let source = p
        .source
        .as_deref()
        .map(|s| pipeline::resolve_input(catalog, Input::Source, s).map(|g| g.name.clone()))
        .transpose()?;
    let loaded = pipeline::load(
        &p.runs,
        &pipeline::import_options(p.gpu.as_deref(), catalog)?,
        catalog,
    )?;
    let mut notes: Vec<String> = loaded.note.iter().map(|n| format!("note: {n}")).collect();
    let mut table = loaded.table;
    if let Some(k) = &opts.kernel {
        table.require_kernel(Input::Kernel, k)?;
        let mask: Vec<bool> = table.runs.iter().map(|r| r.kernel == k.as_str()).collect();
        table = table.masked(&mask);
    }
    if let Some(s) = &source {
        table.require_gpu(Input::Source, s)?;
    }
    let is_source = |r: &Run| source.as_ref().is_none_or(|s| r.gpu == s.as_str());
    let source_runs: Vec<Run> = table
        .runs
        .iter()
        .filter(|r| is_source(r))
        .cloned()
        .collect();
    let problems: Vec<Problem> = {
        let mut v: Vec<Problem> = source_runs.iter().map(problem_of).collect();
        v.sort();
        v.dedup();
        v
    };
    // GPUs that measured every problem keep their measured time.
    let measured: BTreeMap<String, f64> = measured_best(&source_runs)
        .into_iter()
        .filter(|(_, per)| per.len() == problems.len())
        .map(|(g, per)| (g, per.values().sum()))
        .collect();
    let (best_source, best_source_ms) = measured
        .iter()
        .min_by(|a, b| a.1.total_cmp(b.1))
        .map(|(g, t)| (g.clone(), *t))
        .ok_or_else(|| {
            Error::usage(
                "no source GPU measured every problem of the runs (a kernel doing one work) with a row validation kept, so there is no measured time to compare with: choose what one GPU measured with --kernel or --source",
            )
        })?;
    let mut kernels: Vec<String> = problems.iter().map(|(k, _)| k.clone()).collect();
    kernels.dedup();

    // The model, its figures and context, as `predict` chooses them.
    let (first_model, note) = pipeline::model_for(p, &table, "");
    notes.extend(note);
    let checked = ModelChoice::parse(&first_model, p.seed)?;
    let launch_floors = pipeline::launch_floors_for(&checked, p.figures.launch_floors)?;
    let cal = p
        .figures
        .calibration(checked.is_study(), &p.runs, catalog)?;
    let resources = p.figures.kernel_resources()?;
    let ctx = Context::new(catalog, &cal, resources.as_ref()).with_launch_floors(launch_floors);
    let other_data;
    let training: &[Run] = if p.data.is_empty() {
        &table.runs
    } else {
        let other = pipeline::load(&p.data, &Default::default(), catalog)?;
        notes.extend(other.note.map(|n| format!("note: {n}")));
        other_data = other.table.runs;
        &other_data
    };
    // Each target's scope: its own vendor's runs where the data hold enough of them
    // ([`own_vendor_suffices`]), else every GPU's; one fit per scope for the GPUs the
    // training data lack (a fit leaves the target's rows out), one per GPU it holds.
    let problems_of: BTreeMap<String, BTreeSet<Problem>> = measured_best(&source_runs)
        .into_iter()
        .map(|(g, per)| (g, per.into_keys().collect()))
        .collect();
    let training_gpus: BTreeSet<&str> = training.iter().map(|r| r.gpu.as_str()).collect();
    let source_gpus: BTreeSet<&str> = source_runs.iter().map(|r| r.gpu.as_str()).collect();
    let vendor_of = |gpu: &str| catalog.resolve_exact(gpu).map(|g| g.vendor.as_str());
    let mut scopes: BTreeMap<String, (RunsTable, Vec<Run>)> = BTreeMap::new();
    let mut shared_fits: BTreeMap<Option<String>, Box<dyn crate::models::Predict>> =
        BTreeMap::new();
    let mut model_name = String::new();
    let mut ranked = Vec::new();
    for (done, g) in gpus.iter().enumerate() {
        if let Some(&time_ms) = measured.get(&g.name) {
            ranked.push(row(
                g,
                Basis::Measured,
                (time_ms, time_ms, time_ms),
                "measured".into(),
                best_source_ms,
                opts.prices,
            ));
            progress(done + 1, gpus.len());
            continue;
        }
        let own_sources: Vec<&BTreeSet<Problem>> = problems_of
            .iter()
            .filter(|(s, _)| *s != &g.name && vendor_of(s) == Some(g.vendor.as_str()))
            .map(|(_, per)| per)
            .collect();
        let own_fit_gpus = training_gpus
            .iter()
            .filter(|t| **t != g.name && vendor_of(t) == Some(g.vendor.as_str()))
            .count();
        let scope = own_vendor_suffices(&own_sources, problems.len(), own_fit_gpus)
            .then(|| g.vendor.clone());
        let (scope_table, scope_training): (&RunsTable, &[Run]) = match &scope {
            None => (&table, training),
            Some(v) => {
                let (t, r) = scopes.entry(v.clone()).or_insert_with(|| {
                    let ours = |r: &Run| vendor_of(&r.gpu) == Some(v.as_str());
                    let t = table.filtered(ours);
                    (t, training.iter().filter(|r| ours(r)).cloned().collect())
                });
                (t, r)
            }
        };
        let fit = |target: &str| -> Result<Box<dyn crate::models::Predict>> {
            let (name, _) = pipeline::model_for(p, scope_table, target);
            ModelChoice::parse(&name, p.seed)?.fitted(scope_training, target, &ctx)
        };
        let predicted = (|| -> Result<_> {
            let own_fit;
            let fitted: &dyn crate::models::Predict = if training_gpus.contains(g.name.as_str()) {
                own_fit = fit(&g.name)?;
                own_fit.as_ref()
            } else {
                if !shared_fits.contains_key(&scope) {
                    shared_fits.insert(scope.clone(), fit(&g.name)?);
                }
                shared_fits[&scope].as_ref()
            };
            predict_table(scope_table, fitted, &g.name, source.as_deref(), &ctx)
        })();
        // The GPUs this target is predicted from and the model was fitted on.
        let in_scope = |gpus: &BTreeSet<&str>| -> BTreeSet<String> {
            gpus.iter()
                .filter(|n| {
                    **n != g.name && scope.as_deref().is_none_or(|v| vendor_of(n) == Some(v))
                })
                .map(|n| n.to_string())
                .collect()
        };
        match predicted {
            Ok(preds) => {
                model_name.clone_from(&preds.model);
                match summed(&preds, &problems) {
                    Ok((sums, interval)) => {
                        let mut r = row(
                            g,
                            Basis::Predicted,
                            sums,
                            interval,
                            best_source_ms,
                            opts.prices,
                        );
                        let sources = in_scope(&source_gpus);
                        let figures: Vec<&Gpu> = sources
                            .union(&in_scope(&training_gpus))
                            .filter_map(|n| catalog.resolve_exact(n))
                            .collect();
                        for s in &sources {
                            let v = vendor_of(s).unwrap_or("unknown");
                            *r.source_vendors.entry(v.to_string()).or_default() += 1;
                        }
                        r.extrapolated = extrapolation(g, &r.source_vendors, &figures);
                        r.sources = sources.into_iter().collect();
                        ranked.push(r);
                    }
                    Err(reason) => not_ranked.push(NotRanked {
                        gpu: g.name.clone(),
                        reason,
                    }),
                }
            }
            Err(e) => not_ranked.push(NotRanked {
                gpu: g.name.clone(),
                reason: e.to_string(),
            }),
        }
        progress(done + 1, gpus.len());
    }
    ranked.sort_by(|a, b| a.time_ms.total_cmp(&b.time_ms));
    notes.extend(vendor_notes(&ranked, &table.runs, catalog));
    if model_name.is_empty() {
        model_name = first_model;
    }
    Ok(Ranking {
        model: model_name,
        kernels,
        problems: problems.len(),
        best_source,
        best_source_ms,
        ranked,
        not_ranked,
        notes,
    })
}

/// The sums over `problems` of each one's fastest predicted configuration (time,
/// low, high) and the interval they share, or why a problem has none.
fn summed(
    preds: &crate::predict::Predictions,
    problems: &[Problem],
) -> std::result::Result<((f64, f64, f64), String), String> {
    let mut best: BTreeMap<Problem, crate::models::Prediction> = BTreeMap::new();
    let mut why: BTreeMap<Problem, &str> = BTreeMap::new();
    for ((r, p), reason) in preds
        .rows
        .runs
        .iter()
        .zip(&preds.predictions)
        .zip(&preds.reasons)
    {
        let key = problem_of(r);
        match p {
            Some(p) => {
                let b = best.entry(key).or_insert(*p);
                if p.pred_ms < b.pred_ms {
                    *b = *p;
                }
            }
            None => {
                why.entry(key)
                    .or_insert(reason.as_deref().unwrap_or("no prediction"));
            }
        }
    }
    let missing: Vec<&Problem> = problems.iter().filter(|k| !best.contains_key(*k)).collect();
    if let Some(first) = missing.first() {
        return Err(format!(
            "{} of {} problem(s) have no prediction; {}: {}",
            missing.len(),
            problems.len(),
            first.0,
            why.get(*first).copied().unwrap_or("no prediction")
        ));
    }
    let sums = best.values().fold((0.0, 0.0, 0.0), |s, p| {
        (s.0 + p.pred_ms, s.1 + p.lo_ms, s.2 + p.hi_ms)
    });
    let mut labels: Vec<String> = best.values().map(|p| p.interval.label()).collect();
    labels.dedup();
    let interval = if labels.len() == 1 {
        labels.remove(0)
    } else {
        "mixed".into()
    };
    Ok((sums, interval))
}

/// Notes on the vendors of the predicted GPUs' sources ([`Ranked::source_vendors`]): where
/// the runs are of more than one vendor, that each GPU is predicted from its own
/// vendor's where they suffice; and the GPUs predicted from another vendor's sources
/// only, or from several vendors' (their own vendor's too few). Across vendors the same
/// kernel is a different build (HIP vs CUDA), which the model does not see;
/// `reproduce`'s cross-vendor experiments measure how far off that makes it.
fn vendor_notes(ranked: &[Ranked], runs: &[Run], catalog: &Catalog) -> Vec<String> {
    let data_vendors: BTreeSet<&str> = runs
        .iter()
        .filter_map(|r| catalog.resolve_exact(&r.gpu))
        .map(|g| g.vendor.as_str())
        .collect();
    let mut other: BTreeMap<&str, usize> = BTreeMap::new();
    let mut mixed: BTreeMap<&str, usize> = BTreeMap::new();
    for r in ranked.iter().filter(|r| r.basis == Basis::Predicted) {
        if !r.source_vendors.contains_key(&r.vendor) {
            *other.entry(r.vendor.as_str()).or_default() += 1;
        } else if r.source_vendors.len() > 1 {
            *mixed.entry(r.vendor.as_str()).or_default() += 1;
        }
    }
    let counts = |by: &BTreeMap<&str, usize>| {
        by.iter()
            .map(|(v, n)| format!("{n} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut notes = Vec::new();
    if data_vendors.len() > 1 {
        notes.push(format!(
            "note: a GPU is predicted from its own vendor's sources, by a model fitted on that vendor's runs, where the data hold a source for every problem and {MIN_OWN_VENDOR_FIT_GPUS} of its GPUs to fit on; column sources names them"
        ));
    }
    if !other.is_empty() {
        notes.push(format!(
            "note: {} GPU(s) predicted from sources of another vendor only: `gpucast reproduce`'s kt-cross-vendor-* experiments measure such predictions",
            counts(&other)
        ));
    }
    if !mixed.is_empty() {
        notes.push(format!(
            "note: {} GPU(s) predicted from every vendor's sources (their own vendor's too few): `gpucast reproduce`'s kt-cross-vendor-* experiments measure such predictions",
            counts(&mixed)
        ));
    }
    notes
}

/// Fewest GPUs of a target's vendor (the target aside) its model is fitted on when
/// it is predicted from that vendor alone: a fit calibrates its interval on each
/// training GPU predicted from the others, so it needs two.
pub const MIN_OWN_VENDOR_FIT_GPUS: usize = 2;

/// Whether a target is predicted from, and by a model fitted on, its own vendor's runs
/// alone: its vendor's source GPUs (the target aside; `own_sources` holds the problems
/// each measured) together measured all `problems`, and the training data hold at least
/// [`MIN_OWN_VENDOR_FIT_GPUS`] of its vendor's GPUs (`own_fit_gpus`). Across vendors the
/// same kernel is a different build (HIP vs CUDA) the model does not see: other
/// vendors' runs as sources or training widen and bias the prediction (`reproduce`'s
/// kt-cross-vendor-* experiments: NVIDIA targets 17.5 % MAPE from NVIDIA sources, 47 %
/// with AMD sources added).
fn own_vendor_suffices(
    own_sources: &[&BTreeSet<Problem>],
    problems: usize,
    own_fit_gpus: usize,
) -> bool {
    let covered: BTreeSet<&Problem> = own_sources.iter().flat_map(|per| per.iter()).collect();
    !own_sources.is_empty() && covered.len() == problems && own_fit_gpus >= MIN_OWN_VENDOR_FIT_GPUS
}

/// How far beyond the range of the GPUs a prediction draws on (its sources and the
/// GPUs its model was fitted on) a target's DRAM bandwidth or FP32 peak may lie before
/// the prediction counts as an extrapolation. The projection scales a source's time by
/// the ratio of these roofs, and the interval is calibrated on projections between the
/// fitted GPUs: its errors describe projections within their range, not beyond it.
/// A factor of 2 lets through the next board up or down a family (an RTX A6000 from an
/// RTX A4000: 1.7x the bandwidth) and flags a jump of class or generation (an H100 SXM5
/// from an A100 PCIe: 2.16x the bandwidth; a laptop GPU from datacenter boards).
pub const EXTRAPOLATION_FACTOR: f64 = 2.0;

/// Why predicting `target` is an extrapolation, or None: no source GPU of its vendor
/// (`source_vendors`), or its DRAM bandwidth or FP32 peak more than
/// [`EXTRAPOLATION_FACTOR`] above the highest or below the lowest of `drawn_on` (the
/// sources and the GPUs the model was fitted on), e.g. "no AMD source; DRAM bandwidth
/// 3.86x and FP32 peak 2.11x the highest fitted".
pub fn extrapolation(
    target: &Gpu,
    source_vendors: &BTreeMap<String, usize>,
    drawn_on: &[&Gpu],
) -> Option<String> {
    let mut reasons = Vec::new();
    if !source_vendors.contains_key(&target.vendor) {
        reasons.push(format!("no {} source", target.vendor));
    }
    type Figure = fn(&Gpu) -> f64;
    let figures: [(&str, Figure); 2] = [
        ("DRAM bandwidth", |g| g.mem_bandwidth_gbs),
        ("FP32 peak", |g| g.fp32_gflops),
    ];
    let (mut above, mut below) = (Vec::new(), Vec::new());
    for (what, figure) in figures.into_iter().filter(|_| !drawn_on.is_empty()) {
        let values = drawn_on.iter().map(|g| figure(g));
        let (lo, hi) = values.fold((f64::INFINITY, 0.0_f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        let t = figure(target);
        if t > EXTRAPOLATION_FACTOR * hi {
            above.push(format!("{what} {:.2}x", t / hi));
        } else if t * EXTRAPOLATION_FACTOR < lo {
            below.push(format!("{what} 1/{:.2}", lo / t));
        }
    }
    if !above.is_empty() {
        reasons.push(format!("{} the highest fitted", above.join(" and ")));
    }
    if !below.is_empty() {
        reasons.push(format!("{} of the lowest fitted", below.join(" and ")));
    }
    (!reasons.is_empty()).then(|| reasons.join("; "))
}

fn row(
    g: &Gpu,
    basis: Basis,
    (time_ms, lo_ms, hi_ms): (f64, f64, f64),
    interval: String,
    best_source_ms: f64,
    prices: Option<&Prices>,
) -> Ranked {
    let seconds = time_ms / 1e3;
    Ranked {
        gpu: g.name.clone(),
        vendor: g.vendor.clone(),
        arch: g.arch.clone(),
        basis,
        time_ms,
        lo_ms,
        hi_ms,
        interval,
        speedup: best_source_ms / time_ms,
        energy_proxy_j: g.tdp_w.map(|w| seconds * w),
        cost_per_run_usd: prices
            .and_then(|p| p.usd_per_hour.get(&g.name))
            .map(|usd| seconds / 3600.0 * usd),
        sources: Vec::new(),
        source_vendors: BTreeMap::new(),
        extrapolated: None,
    }
}

impl Ranking {
    /// One row per GPU: the ranked ones fastest first (`rank` 1..), then those not
    /// ranked with their reason; `cost` adds the cost column (a price file was given).
    pub fn to_table(&self, cost: bool) -> crate::report::Table {
        let mut headers = vec![
            "rank",
            "gpu",
            "vendor",
            "arch",
            "basis",
            "time_ms",
            "lo_ms",
            "hi_ms",
            "interval",
            "speedup",
            "energy_proxy_j",
        ];
        if cost {
            headers.push("cost_per_run_usd");
        }
        headers.extend(["sources", "extrapolated", "not_ranked_reason"]);
        let mut t = crate::report::Table::new(&headers);
        let f = |x: Option<f64>| x.map(|v| format!("{v:.6}")).unwrap_or_else(|| "-".into());
        for (i, r) in self.ranked.iter().enumerate() {
            let mut cells = vec![
                (i + 1).to_string(),
                r.gpu.clone(),
                r.vendor.clone(),
                r.arch.clone(),
                format!("{:?}", r.basis).to_lowercase(),
                format!("{:.6}", r.time_ms),
                format!("{:.6}", r.lo_ms),
                format!("{:.6}", r.hi_ms),
                r.interval.clone(),
                format!("{:.3}", r.speedup),
                f(r.energy_proxy_j),
            ];
            if cost {
                cells.push(
                    r.cost_per_run_usd
                        .map(|v| format!("{v:.3e}"))
                        .unwrap_or_else(|| "-".into()),
                );
            }
            let sources: Vec<String> = r
                .source_vendors
                .iter()
                .map(|(v, n)| format!("{n} {v}"))
                .collect();
            cells.push(if sources.is_empty() {
                "-".into()
            } else {
                sources.join(" + ")
            });
            cells.push(r.extrapolated.clone().unwrap_or_else(|| "-".into()));
            cells.push(String::new());
            t.push(cells);
        }
        for n in &self.not_ranked {
            let mut cells = vec!["-".to_string(), n.gpu.clone()];
            cells.extend(std::iter::repeat_n("-".to_string(), headers.len() - 3));
            cells.push(n.reason.clone());
            t.push(cells);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_price_file_matches_names_and_says_where_it_is_wrong() {
        let catalog = Catalog::builtin();
        let p = Prices::parse(
            "\"rtx a4000\" = 0.25\n\"H100 SXM5 80GB\" = 3\n",
            "p.toml",
            &catalog,
        )
        .unwrap();
        assert_eq!(p.usd_per_hour.get("NVIDIA RTX A4000"), Some(&0.25));
        assert_eq!(p.usd_per_hour.len(), 2);
        let e = Prices::parse(
            "\"RTX A4000\" = 0.25\n\"RTX 6000\" = 1.0\n",
            "p.toml",
            &catalog,
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("p.toml:2:1: unknown GPU 'RTX 6000'"), "{e}");
        let e = Prices::parse("\"RTX A4000\" = \"cheap\"\n", "p.toml", &catalog)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("p.toml:1:15: "), "{e}");
        let e = Prices::parse("\"RTX A4000\" = 1\n\"rtx-a4000\" = 2\n", "p.toml", &catalog)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("p.toml:2:1: ") && e.contains("priced twice"),
            "{e}"
        );
    }

    #[test]
    fn filters_keep_only_matching_gpus_and_refuse_unknown_values() {
        let catalog = Catalog::builtin();
        let f = Filters {
            vendor: Some("nvidia".into()),
            min_memory_gb: Some(80.0),
            ..Default::default()
        };
        let (kept, _) = candidates(&catalog, &f).unwrap();
        assert!(!kept.is_empty());
        assert!(kept.iter().all(|g| g.mem_gb.is_some_and(|m| m >= 80.0)));
        assert!(kept.iter().any(|g| g.name == "NVIDIA H100 SXM5 80GB"));
        let f = Filters {
            gpus: Some(vec!["rtx a4000".into(), "A100 PCIe 40GB".into()]),
            ..Default::default()
        };
        let (kept, _) = candidates(&catalog, &f).unwrap();
        assert_eq!(kept.len(), 2);
        let f = Filters {
            arch: Some("Amperr".into()),
            ..Default::default()
        };
        assert!(candidates(&catalog, &f)
            .unwrap_err()
            .to_string()
            .contains("Ampere"));
    }

    #[test]
    fn extrapolation_flags_a_target_beyond_twice_the_fitted_range_or_of_another_vendor() {
        let catalog = Catalog::builtin();
        let gpu = |n: &str| catalog.resolve(n).unwrap();
        let drawn_on = [gpu("RTX A4000"), gpu("RTX A6000")]; // 448 / 768 GB/s, 19.2 / 38.7 TFLOP/s
        let nvidia = BTreeMap::from([("NVIDIA".to_string(), 2)]);
        let why = |n: &str| extrapolation(gpu(n), &nvidia, &drawn_on);
        // 640 GB/s, 23.7 TFLOP/s: inside the range
        assert_eq!(why("RTX A4500"), None);
        // 3352 GB/s: 4.36x the highest; 66.9 TFLOP/s is only 1.73x
        assert_eq!(
            why("H100 SXM5 80GB").as_deref(),
            Some("DRAM bandwidth 4.36x the highest fitted")
        );
        // 128 GB/s and 2.98 TFLOP/s: below half the lowest of both
        assert_eq!(
            why("GTX 1650").as_deref(),
            Some("DRAM bandwidth 1/3.50 and FP32 peak 1/6.42 of the lowest fitted")
        );
        // an AMD GPU from NVIDIA sources, its 1638 GB/s 2.13x the highest
        assert_eq!(
            why("MI210").as_deref(),
            Some("no AMD source; DRAM bandwidth 2.13x the highest fitted")
        );
        // the factor's edge: twice the highest is still inside
        let mut edge = gpu("RTX A6000").clone();
        edge.mem_bandwidth_gbs = 2.0 * 768.0; // SYNTHETIC figure
        assert_eq!(extrapolation(&edge, &nvidia, &drawn_on), None);
        edge.mem_bandwidth_gbs = 2.01 * 768.0;
        assert!(extrapolation(&edge, &nvidia, &drawn_on).is_some());
    }
}
