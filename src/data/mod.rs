//! Runs tables: the canonical data every stage reads (data-formats §1).
//!
//! A [`RunsTable`] is a typed list of [`Run`]s plus the columns we do not know,
//! kept row-aligned in a polars `DataFrame` so they pass through untouched. The
//! columns, the [`Run`] record and the configuration key are the contract crate
//! `gpucast_runs`, shared with the benchmark runner that writes these tables.

pub mod import;
pub mod kernel_tuner_write;
mod load;
mod parquet_read;
mod table_io;
pub mod validate;
pub mod workload;

use polars::prelude::DataFrame;

pub use gpucast_runs::{
    canonical_config, column, config_key, upper_bound, ColumnKind, ColumnSpec, Exclusion, KeyError,
    Name, Origin, Run, RunDetails, Warning, COLUMNS, OPTIONAL_NUMERIC, OPTIONAL_TEXT, REQUIRED,
};
pub use import::{gemm_table, kernel_tuner, ncu, neusight, nvbench, torch_trace};
pub use load::{load, load_files, load_with, read_file, read_file_with, runs_files_in};
pub use table_io::{is_parquet_output, to_frame as table_frame, write, write_frame};
pub use validate::{validate, FlaggedRow, ValidationReport};

/// Load runs files (or directories of them) and validate them against the catalog:
/// errors stop here with one line; warnings flag rows.
pub fn load_validated(
    paths: &[std::path::PathBuf],
    catalog: &crate::catalog::Catalog,
) -> crate::error::Result<(RunsTable, ValidationReport)> {
    load_validated_with(paths, &import::ImportOptions::default(), catalog)
}

/// [`load_validated`], importing files in a tool's own format with `opts`.
pub fn load_validated_with(
    paths: &[std::path::PathBuf],
    opts: &import::ImportOptions,
    catalog: &crate::catalog::Catalog,
) -> crate::error::Result<(RunsTable, ValidationReport)> {
    let mut table = load_with(paths, opts)?;
    let report = validate(&mut table, catalog)?;
    Ok((table, report))
}

/// The table with each run on an SM partition ([`Exclusion::SmPartition`]) moved to
/// a GPU of its own, the partition's [`crate::catalog::Gpu::partition`] entry (its
/// exclusion goes: it is now a whole measurement of that smaller device), validated
/// again against `catalog` plus those entries, which is returned too. Evaluations
/// of partition scaling predict these GPUs from the whole ones.
pub fn partitions_as_gpus(
    table: &RunsTable,
    catalog: &crate::catalog::Catalog,
) -> crate::error::Result<(RunsTable, ValidationReport, crate::catalog::Catalog)> {
    let mut moved = table.clone();
    let parts = move_partition_runs(&mut moved.runs);
    let catalog = catalog.with_partitions(&parts)?;
    let report = validate(&mut moved, &catalog)?;
    Ok((moved, report, catalog))
}

/// Each run on an SM partition ([`Exclusion::SmPartition`]) moved to the partition's
/// GPU ([`crate::catalog::partition_name`]), its exclusion gone; returns the
/// partitions met, (GPU, SMs), each once: what the catalog must add
/// ([`crate::catalog::Catalog::with_partitions`]).
pub fn move_partition_runs(runs: &mut [Run]) -> Vec<(String, u32)> {
    let mut parts: Vec<(String, u32)> = Vec::new();
    for run in runs {
        if let Some(Exclusion::SmPartition { sm_count, .. }) = run.exclusion {
            if !parts.iter().any(|(g, n)| *g == run.gpu && *n == sm_count) {
                parts.push((run.gpu.to_string(), sm_count));
            }
            run.gpu = crate::catalog::partition_name(&run.gpu, sm_count).into();
            run.exclusion = None;
        }
    }
    parts
}

/// What [`with_instruction_counts`] did: runs given counts, and runs whose launch
/// more than one run or export of their GPU and kernel has (left without).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CountsJoined {
    pub joined: usize,
    pub ambiguous: usize,
}

/// Give each run the instruction counts (`inst_warp`, `inst_thread` and the mix) of
/// the profile of its launch: the one profiled run (an Nsight Compute export's row)
/// of its GPU and kernel with its block and grid size on as many SMs (`sm_count`, else
/// the whole GPU's), where no other run has that launch (a kernel whose configurations
/// differ beyond the launch, such as an iteration count, is left without). Counts a
/// run has are kept; its time, work and traffic are its own (a profile times one
/// launch under the profiler).
pub fn with_instruction_counts(
    runs: &mut [Run],
    profiles: &[Run],
    catalog: &crate::catalog::Catalog,
) -> CountsJoined {
    use std::collections::HashMap;
    type Launch = (String, String, u64, u64, u64);
    let launch = |r: &Run| -> Option<Launch> {
        let gpu = catalog.resolve(&r.gpu)?;
        let size = |v: Option<f64>| v.filter(|v| *v > 0.0).map(|v| v.round() as u64);
        Some((
            gpu.name.clone(),
            r.kernel.to_string(),
            size(r.block_threads)?,
            size(r.grid_blocks)?,
            size(r.details().sm_count).unwrap_or(u64::from(gpu.sm_count)),
        ))
    };
    let mut profiled: HashMap<Launch, Vec<&Run>> = HashMap::new();
    for p in profiles {
        if p.details().inst_warp.is_some() {
            if let Some(l) = launch(p) {
                profiled.entry(l).or_default().push(p);
            }
        }
    }
    // Each run's launch, made once and only for a kernel some profile has (a run of
    // another kernel can neither join nor share a profiled launch).
    let kernels: std::collections::HashSet<&str> = profiled.keys().map(|l| l.1.as_str()).collect();
    let keys: Vec<Option<Launch>> = runs
        .iter()
        .map(|r| kernels.contains(&*r.kernel).then(|| launch(r)).flatten())
        .collect();
    let mut launches: HashMap<&Launch, usize> = HashMap::new();
    for l in keys.iter().flatten() {
        *launches.entry(l).or_default() += 1;
    }
    let mut out = CountsJoined {
        joined: 0,
        ambiguous: 0,
    };
    for (r, l) in runs.iter_mut().zip(&keys) {
        let Some(l) = l else { continue };
        let Some(ps) = profiled.get(l) else { continue };
        if ps.len() != 1 || launches[l] != 1 {
            out.ambiguous += 1;
            continue;
        }
        let p = ps[0].details().clone();
        let d = r.details_mut();
        for (to, from) in [
            (&mut d.inst_warp, p.inst_warp),
            (&mut d.inst_thread, p.inst_thread),
            (&mut d.inst_thread_fp32, p.inst_thread_fp32),
            (&mut d.inst_thread_fp64, p.inst_thread_fp64),
            (&mut d.inst_thread_int, p.inst_thread_int),
            (&mut d.inst_thread_ldst, p.inst_thread_ldst),
            (&mut d.inst_warp_tensor, p.inst_warp_tensor),
        ] {
            *to = to.or(from);
        }
        out.joined += 1;
    }
    out
}

/// A hash of a run's work (kernel, config), the same on every GPU and in every Rust
/// release (FNV-1a, fixed by its definition; std's hasher may change): what
/// deterministic samples of configurations are drawn by, so sampled runs still pair
/// across GPUs.
pub fn work_hash(run: &Run) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in run.kernel.bytes().chain([0]).chain(run.config.bytes()) {
        h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// One shared [`Name`] per distinct text: a run's names and labels are shared
/// strings, and a table's rows mostly repeat a few GPUs, kernels, precisions and
/// sources, so loaders and importers make each once.
#[derive(Debug, Default)]
pub struct SharedNames(rustc_hash::FxHashSet<Name>);

impl SharedNames {
    /// The shared name of `text`, made on first sight.
    pub fn get(&mut self, text: &str) -> Name {
        if let Some(known) = self.0.get(text) {
            return known.clone();
        }
        let made = Name::from(text);
        self.0.insert(made.clone());
        made
    }
}

/// What a model is asked to predict: a run's work on a GPU, without its measurement
/// (time NaN, no spread, no time details). Only these constructors make one, so a
/// prediction can never read the time it predicts: a model's `predict` takes a
/// `Query`, not a [`Run`]. It reads as the run it describes (`query.kernel`,
/// `query.gpu`; [`std::ops::Deref`]), and is not changed in place.
#[derive(Debug, Clone, Default)]
pub struct Query(Run);

impl Query {
    /// The query for `run`'s work on its own GPU.
    pub fn of(run: &Run) -> Query {
        Query::on(run, &run.gpu)
    }

    /// The query for `run`'s work on another GPU (`gpu`, a catalog name).
    pub fn on(run: &Run, gpu: &str) -> Query {
        let mut query = Query::default();
        query.set(run, gpu);
        query
    }

    /// This buffer made [`Query::on`]`(run, gpu)`, reusing what it holds: a loop making
    /// a query per row allocates nothing per row.
    pub fn set(&mut self, run: &Run, gpu: &str) {
        let query = &mut self.0;
        // (the buffer's target name is kept when it is this one: a loop over one target
        // makes its name once)
        let kept = (query.gpu == gpu).then(|| std::mem::replace(&mut query.gpu, run.gpu.clone()));
        query.clone_from(run);
        if query.gpu != gpu {
            query.gpu = kept.unwrap_or_else(|| gpu.into());
        }
        query.time_ms = f64::NAN;
        query.time_std_ms = None;
        if let Some(d) = &mut query.details {
            (d.time_min_ms, d.time_median_ms, d.time_cv) = (None, None, None);
        }
    }
}

impl std::ops::Deref for Query {
    type Target = Run;
    fn deref(&self) -> &Run {
        &self.0
    }
}

/// Add the counts of `more` to `into`, key by key.
pub(crate) fn add_counts(
    into: &mut std::collections::BTreeMap<String, usize>,
    more: &std::collections::BTreeMap<String, usize>,
) {
    for (k, n) in more {
        *into.entry(k.clone()).or_default() += n;
    }
}

/// A runs table: typed rows plus pass-through columns.
#[derive(Debug, Clone, Default)]
pub struct RunsTable {
    pub runs: Vec<Run>,
    /// Columns the contract does not name, row-aligned with `runs`.
    pub extra: DataFrame,
    /// Files the rows came from.
    pub files: Vec<String>,
    /// Entries of the files not read as runs, by reason: rows a runner marked failed
    /// (`status_not_ok`: [`RunsTable::skipped_error_rows`]), and in files of a tool's
    /// format (Kernel Tuner caches, GEMM tables, Nsight Compute exports) failed
    /// configurations (the marker the tool wrote, `no_time`, `absurd_time`, ...) and
    /// measured rows the importer could not use (e.g. `duplicate_config`). `data
    /// import` counts them per file.
    pub not_imported: std::collections::BTreeMap<String, usize>,
    /// Files in a tool's own format, and where each writes its GPU's name (a runs
    /// table's is `column 'gpu'` on each row's line): what an unknown GPU's error
    /// points at.
    pub gpu_fields: Vec<GpuField>,
}

/// Where a file in a tool's own format writes the GPU's name.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuField {
    pub file: String,
    /// The key or column, as the error shows it (e.g. `'device_name'`, `column 'device'`).
    pub field: String,
    /// Where the name is when one place in the file holds it for every row; `None`:
    /// each row's own line or row.
    pub at: Option<crate::error::Position>,
}

/// The reason a row a runner marked failed (`status` != ok) was not read.
pub const STATUS_NOT_OK: &str = "status_not_ok";

impl RunsTable {
    /// Rows skipped on load because a runner marked them failed (`status` != ok).
    pub fn skipped_error_rows(&self) -> usize {
        self.not_imported.get(STATUS_NOT_OK).copied().unwrap_or(0)
    }

    pub fn len(&self) -> usize {
        self.runs.len()
    }
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }
    /// GPU names in first-seen order.
    pub fn gpus(&self) -> Vec<String> {
        let mut seen = std::collections::HashSet::new();
        let mut out: Vec<String> = Vec::new();
        for r in &self.runs {
            if seen.insert(r.gpu.as_str()) {
                out.push(r.gpu.to_string());
            }
        }
        out
    }
    /// Kernel names, sorted.
    pub fn kernels(&self) -> Vec<String> {
        let set: std::collections::BTreeSet<&str> =
            self.runs.iter().map(|r| r.kernel.as_str()).collect();
        set.into_iter().map(str::to_string).collect()
    }
    /// A choice that selects the rows of one GPU (`gpu` as the catalog spells it)
    /// must name a GPU of the data: one the data lacks would give an empty table.
    pub fn require_gpu(&self, input: crate::error::Input, gpu: &str) -> crate::error::Result<()> {
        if self.runs.iter().any(|r| r.gpu == gpu) {
            return Ok(());
        }
        Err(crate::error::Error::NotInData {
            input,
            value: gpu.to_string(),
            present: self.gpus(),
        })
    }
    /// Like [`RunsTable::require_gpu`] for a kernel name (its message lists at most 20
    /// known).
    pub fn require_kernel(
        &self,
        input: crate::error::Input,
        kernel: &str,
    ) -> crate::error::Result<()> {
        if self.runs.iter().any(|r| r.kernel == kernel) {
            return Ok(());
        }
        Err(crate::error::Error::NotInData {
            input,
            value: kernel.to_string(),
            present: self.kernels(),
        })
    }
    /// Keep the rows for which `keep` is true (pass-through columns follow).
    pub fn retain(&mut self, keep: impl FnMut(&Run) -> bool) {
        let mask: Vec<bool> = self.runs.iter().map(keep).collect();
        self.extra = filter_extra(&self.extra, &mask);
        let mut it = mask.iter();
        self.runs.retain(|_| *it.next().unwrap_or(&false));
    }
    /// A new table of the rows for which `keep` is true (pass-through columns follow):
    /// copies only those rows, where `clone` then [`RunsTable::retain`] would copy all.
    pub fn filtered<'a>(&'a self, keep: impl FnMut(&'a Run) -> bool) -> RunsTable {
        self.masked(&self.runs.iter().map(keep).collect::<Vec<bool>>())
    }

    /// The rows where `mask` (one entry per row) is true, with their pass-through
    /// columns.
    pub fn masked(&self, mask: &[bool]) -> RunsTable {
        RunsTable {
            runs: self
                .runs
                .iter()
                .zip(mask)
                .filter(|(_, &k)| k)
                .map(|(r, _)| r.clone())
                .collect(),
            extra: filter_extra(&self.extra, mask),
            files: self.files.clone(),
            not_imported: self.not_imported.clone(),
            gpu_fields: self.gpu_fields.clone(),
        }
    }
}

/// Counts by reason, `reason=n reason=n` in the reasons' order.
pub fn counts_text(counts: &std::collections::BTreeMap<String, usize>) -> String {
    counts
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The error for data that yields no runs at all (`files`: what was read), with what
/// was not read as runs and why. Every command needs runs; a header-only CSV was an
/// error already, a cache of failed configurations validated as "0 rows".
pub(crate) fn no_runs_error(
    files: &[impl AsRef<std::path::Path>],
    not_imported: &std::collections::BTreeMap<String, usize>,
) -> crate::error::Error {
    let what = match files {
        [one] => one.as_ref().display().to_string(),
        many => format!("the {} files read", many.len()),
    };
    let n: usize = not_imported.values().sum();
    let why = if n > 0 {
        format!(
            ": none of its {n} entr{} could be read as a run ({})",
            if n == 1 { "y" } else { "ies" },
            counts_text(not_imported)
        )
    } else {
        ": it holds no entries".to_string()
    };
    crate::error::Error::parse_file(what, format!("no runs{why}"))
}

/// The pass-through columns of the rows a mask keeps.
fn filter_extra(extra: &DataFrame, mask: &[bool]) -> DataFrame {
    if extra.width() == 0 {
        return extra.clone();
    }
    use polars::prelude::NewChunkedArray;
    let m = polars::prelude::BooleanChunked::from_slice("mask".into(), mask);
    extra.filter(&m).unwrap_or_default()
}
