//! The GPU catalog: vendor facts about GPUs (`datasets/gpus.toml`) and the
//! per-compute-capability occupancy limits (`datasets/compute_capabilities.toml`),
//! both built in, plus a user's `--gpus` file merged on top.
//!
//! Name resolution ([`Catalog::resolve`]) accepts the canonical name, any alias
//! (for instance the name the CUDA driver reports), and a normalized form that
//! ignores case, spaces, punctuation and a leading "NVIDIA", "GeForce", "Tesla"
//! or "Quadro".

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

const BUILTIN_GPUS: &str = include_str!("../datasets/gpus.toml");
const BUILTIN_CCS: &str = include_str!("../datasets/compute_capabilities.toml");
const BUILTIN_GPUS_ORIGIN: &str = "datasets/gpus.toml (built in)";
const BUILTIN_CCS_ORIGIN: &str = "datasets/compute_capabilities.toml (built in)";

/// One GPU: vendor facts, per-SM limits and (optionally) measured figures.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Gpu {
    pub name: String,
    pub vendor: String,
    pub arch: String,
    /// "major.minor", e.g. "8.9".
    pub compute_capability: String,
    pub sm_count: u32,
    pub boost_clock_mhz: f64,
    /// Peak FP32 (FMA = 2 FLOP) at the boost clock.
    pub fp32_gflops: f64,
    /// Peak DRAM bandwidth, GB/s (10^9 bytes/s).
    pub mem_bandwidth_gbs: f64,
    pub l2_bytes: u64,
    pub regs_per_sm: u32,
    pub max_threads_per_sm: u32,
    pub max_blocks_per_sm: u32,
    /// Maximum configurable shared memory per SM, bytes.
    pub smem_per_sm: u32,
    pub warp_size: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores_per_sm: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp64_gflops: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp16_gflops: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor_fp16_gflops: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_gb: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_type: Option<String>,
    /// Unified L1 / shared memory capacity per SM, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l1_bytes_per_sm: Option<u32>,
    /// Opt-in maximum shared memory per block, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_smem_per_block: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reg_alloc_unit: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smem_alloc_unit: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_year: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tdp_w: Option<f64>,
    /// The vendor document(s) the figures come from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Measured sustained DRAM bandwidth (e.g. a STREAM-like copy), GB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sustained_bandwidth_gbs: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sustained_fp32_gflops: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l2_bandwidth_gbs: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_overhead_us: Option<f64>,
    /// Where the measured figures come from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_source: Option<String>,
    /// Other measured figures (e.g. `gpucast-bench calibrate`'s copy, triad, shared
    /// memory bandwidths and atomic rates), kept for reference: `[gpu.measured]`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub measured: std::collections::BTreeMap<String, f64>,
}

fn default_warp_size() -> u32 {
    32
}
fn default_reg_alloc_granularity() -> String {
    "warp".to_string()
}

/// Occupancy limits of one compute capability (see compute_capabilities.toml).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ComputeCapability {
    pub cc: String,
    pub max_threads_per_block: u32,
    pub max_threads_per_sm: u32,
    pub max_warps_per_sm: u32,
    pub max_blocks_per_sm: u32,
    pub regs_per_sm: u32,
    pub max_regs_per_block: u32,
    pub max_regs_per_thread: u32,
    /// Registers are allocated to a warp in multiples of this.
    pub reg_alloc_unit: u32,
    /// Register-file sub-partitions per SM (cuda_occupancy.h
    /// `cudaOccSubPartitionsPerMultiprocessor`): the number of warps the
    /// register file can hold is a multiple of it.
    pub warp_alloc_granularity: u32,
    /// Maximum configurable shared memory per SM, bytes.
    pub smem_per_sm: u32,
    /// Opt-in maximum shared memory per block, bytes (without the reserved part).
    pub max_smem_per_block: u32,
    pub smem_alloc_unit: u32,
    /// Shared memory the driver reserves per block (1 KB from sm_80 on).
    pub reserved_smem_per_block: u32,
    /// Configurable shared memory sizes per SM, KB, ascending.
    pub smem_carveout_kb: Vec<u32>,
    #[serde(default = "default_warp_size")]
    pub warp_size: u32,
    /// "warp": registers are allocated per warp.
    #[serde(default = "default_reg_alloc_granularity")]
    pub reg_alloc_granularity: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arch: Option<String>,
}

impl ComputeCapability {
    /// (major, minor) of `cc`; (0, 0) when it does not parse.
    pub fn major_minor(&self) -> (u32, u32) {
        parse_cc(&self.cc).unwrap_or((0, 0))
    }
    /// The configurable shared-memory sizes per SM in bytes, ascending.
    pub fn carveouts_bytes(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self.smem_carveout_kb.iter().map(|k| k * 1024).collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

impl Gpu {
    /// (major, minor) of the compute capability; (0, 0) if it does not parse
    /// (load-time validation rejects that for catalog GPUs).
    pub fn cc_major_minor(&self) -> (u32, u32) {
        parse_cc(&self.compute_capability).unwrap_or((0, 0))
    }
    /// "sm_89" for compute capability 8.9, "sm_100" for 10.0.
    pub fn sm_arch(&self) -> String {
        let (ma, mi) = self.cc_major_minor();
        format!("sm_{ma}{mi}")
    }
    /// FP32 cores across the GPU, when cores_per_sm is known.
    pub fn cuda_cores(&self) -> Option<u32> {
        self.cores_per_sm.map(|c| c * self.sm_count)
    }
}

/// Parses "8.9" into (8, 9).
pub fn parse_cc(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.trim().split_once('.')?;
    let ma = a.parse::<u32>().ok()?;
    let mi = b.parse::<u32>().ok()?;
    Some((ma, mi))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogFile {
    #[serde(default)]
    gpu: Vec<toml::Value>,
    #[serde(default)]
    cc: Vec<toml::Value>,
}

/// The set of known GPUs and compute capabilities.
#[derive(Debug, Clone)]
pub struct Catalog {
    gpus: Vec<Gpu>,
    ccs: Vec<ComputeCapability>,
}

/// Lower-case, keep letters and digits only, drop a leading vendor/brand word.
pub fn normalize_name(name: &str) -> String {
    let mut s: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    loop {
        let mut stripped = false;
        for p in ["nvidia", "geforce", "tesla", "quadro"] {
            if s.len() > p.len() && s.starts_with(p) {
                s = s[p.len()..].to_string();
                stripped = true;
            }
        }
        if !stripped {
            break;
        }
    }
    s
}

/// Parse catalog TOML text (syntax only).
fn parse_doc(text: &str, origin: &str) -> Result<toml::Table> {
    toml::from_str(text).map_err(|e| {
        Error::file(
            origin,
            format!(
                "not a valid catalog TOML file: {}",
                one_line(&e.to_string())
            ),
        )
    })
}

fn parse_file(text: &str, origin: &str) -> Result<(Vec<Gpu>, Vec<ComputeCapability>)> {
    parse_table(parse_doc(text, origin)?, origin)
}

/// Typed, validated GPUs and compute capabilities of a parsed catalog document.
fn parse_table(doc: toml::Table, origin: &str) -> Result<(Vec<Gpu>, Vec<ComputeCapability>)> {
    let file: CatalogFile = doc.try_into().map_err(|e: toml::de::Error| {
        Error::file(
            origin,
            format!(
                "not a valid catalog TOML file: {}",
                one_line(&e.to_string())
            ),
        )
    })?;
    let mut gpus = Vec::with_capacity(file.gpu.len());
    for (i, v) in file.gpu.into_iter().enumerate() {
        let label = v
            .get("name")
            .and_then(|n| n.as_str())
            .map(|n| format!("[[gpu]] #{} '{}'", i + 1, n))
            .unwrap_or_else(|| format!("[[gpu]] #{}", i + 1));
        let gpu: Gpu = v.try_into().map_err(|e: toml::de::Error| {
            Error::file(origin, format!("{label}: {}", one_line(&e.to_string())))
        })?;
        validate_gpu(&gpu, origin, &label)?;
        gpus.push(gpu);
    }
    let mut ccs = Vec::with_capacity(file.cc.len());
    for (i, v) in file.cc.into_iter().enumerate() {
        let label = v
            .get("cc")
            .and_then(|n| n.as_str())
            .map(|n| format!("[[cc]] #{} '{}'", i + 1, n))
            .unwrap_or_else(|| format!("[[cc]] #{}", i + 1));
        let cc: ComputeCapability = v.try_into().map_err(|e: toml::de::Error| {
            Error::file(origin, format!("{label}: {}", one_line(&e.to_string())))
        })?;
        validate_cc(&cc, origin, &label)?;
        ccs.push(cc);
    }
    check_duplicates(&gpus, origin)?;
    let mut seen = std::collections::HashSet::new();
    for c in &ccs {
        if !seen.insert(parse_cc(&c.cc)) {
            return Err(Error::file(
                origin,
                format!("compute capability '{}' is defined twice", c.cc),
            ));
        }
    }
    Ok((gpus, ccs))
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn validate_gpu(g: &Gpu, origin: &str, label: &str) -> Result<()> {
    let bad = |msg: String| Err(Error::file(origin, format!("{label}: {msg}")));
    if g.name.trim().is_empty() {
        return bad("name is empty".into());
    }
    if parse_cc(&g.compute_capability).is_none() {
        return bad(format!(
            "compute_capability '{}' is not of the form MAJOR.MINOR (e.g. \"8.9\")",
            g.compute_capability
        ));
    }
    let ints = [
        ("sm_count", g.sm_count),
        ("regs_per_sm", g.regs_per_sm),
        ("max_threads_per_sm", g.max_threads_per_sm),
        ("max_blocks_per_sm", g.max_blocks_per_sm),
        ("smem_per_sm", g.smem_per_sm),
        ("warp_size", g.warp_size),
    ];
    for (k, v) in ints {
        if v == 0 {
            return bad(format!("{k} must be positive"));
        }
    }
    if g.l2_bytes == 0 {
        return bad("l2_bytes must be positive".into());
    }
    let floats = [
        ("boost_clock_mhz", Some(g.boost_clock_mhz)),
        ("fp32_gflops", Some(g.fp32_gflops)),
        ("mem_bandwidth_gbs", Some(g.mem_bandwidth_gbs)),
        ("fp64_gflops", g.fp64_gflops),
        ("fp16_gflops", g.fp16_gflops),
        ("tensor_fp16_gflops", g.tensor_fp16_gflops),
        ("mem_gb", g.mem_gb),
        ("tdp_w", g.tdp_w),
        ("sustained_bandwidth_gbs", g.sustained_bandwidth_gbs),
        ("sustained_fp32_gflops", g.sustained_fp32_gflops),
        ("l2_bandwidth_gbs", g.l2_bandwidth_gbs),
        ("launch_overhead_us", g.launch_overhead_us),
    ];
    for (k, v) in floats {
        if let Some(v) = v {
            if !(v.is_finite() && v > 0.0) {
                return bad(format!("{k} must be a positive number, got {v}"));
            }
        }
    }
    let opt_ints = [
        ("cores_per_sm", g.cores_per_sm),
        ("l1_bytes_per_sm", g.l1_bytes_per_sm),
        ("max_smem_per_block", g.max_smem_per_block),
        ("reg_alloc_unit", g.reg_alloc_unit),
        ("smem_alloc_unit", g.smem_alloc_unit),
    ];
    for (k, v) in opt_ints {
        if v == Some(0) {
            return bad(format!("{k} must be positive"));
        }
    }
    if !g.max_threads_per_sm.is_multiple_of(g.warp_size) {
        return bad(format!(
            "max_threads_per_sm {} is not a multiple of warp_size {}",
            g.max_threads_per_sm, g.warp_size
        ));
    }
    for a in &g.aliases {
        if a.trim().is_empty() {
            return bad("an alias is empty".into());
        }
    }
    Ok(())
}

fn validate_cc(c: &ComputeCapability, origin: &str, label: &str) -> Result<()> {
    let bad = |msg: String| Err(Error::file(origin, format!("{label}: {msg}")));
    if parse_cc(&c.cc).is_none() {
        return bad(format!("cc '{}' is not of the form MAJOR.MINOR", c.cc));
    }
    let ints = [
        ("max_threads_per_block", c.max_threads_per_block),
        ("max_threads_per_sm", c.max_threads_per_sm),
        ("max_warps_per_sm", c.max_warps_per_sm),
        ("max_blocks_per_sm", c.max_blocks_per_sm),
        ("regs_per_sm", c.regs_per_sm),
        ("max_regs_per_block", c.max_regs_per_block),
        ("max_regs_per_thread", c.max_regs_per_thread),
        ("reg_alloc_unit", c.reg_alloc_unit),
        ("warp_alloc_granularity", c.warp_alloc_granularity),
        ("smem_per_sm", c.smem_per_sm),
        ("max_smem_per_block", c.max_smem_per_block),
        ("smem_alloc_unit", c.smem_alloc_unit),
        ("warp_size", c.warp_size),
    ];
    for (k, v) in ints {
        if v == 0 {
            return bad(format!("{k} must be positive"));
        }
    }
    if c.max_warps_per_sm * c.warp_size != c.max_threads_per_sm {
        return bad(format!(
            "max_warps_per_sm {} x warp_size {} != max_threads_per_sm {}",
            c.max_warps_per_sm, c.warp_size, c.max_threads_per_sm
        ));
    }
    if c.reg_alloc_granularity != "warp" {
        return bad(format!(
            "reg_alloc_granularity '{}' is not supported (only \"warp\")",
            c.reg_alloc_granularity
        ));
    }
    if c.smem_carveout_kb.is_empty() {
        return bad("smem_carveout_kb is empty".into());
    }
    let max_kb = c.smem_carveout_kb.iter().max().copied().unwrap_or(0);
    if max_kb * 1024 != c.smem_per_sm {
        return bad(format!(
            "the largest smem_carveout_kb ({max_kb} KB) is not smem_per_sm ({} bytes)",
            c.smem_per_sm
        ));
    }
    Ok(())
}

fn check_duplicates(gpus: &[Gpu], origin: &str) -> Result<()> {
    let mut seen: std::collections::HashMap<String, &str> = std::collections::HashMap::new();
    for g in gpus {
        let mut own = std::collections::HashSet::new();
        for n in std::iter::once(&g.name).chain(g.aliases.iter()) {
            let key = n.trim().to_lowercase();
            if !own.insert(key.clone()) {
                continue; // the same GPU naming itself twice is harmless
            }
            if let Some(other) = seen.get(&key) {
                return Err(Error::file(
                    origin,
                    format!(
                        "name or alias '{n}' of GPU '{}' is already used by GPU '{other}'",
                        g.name
                    ),
                ));
            }
            seen.insert(key, &g.name);
        }
    }
    Ok(())
}

impl Catalog {
    /// The catalog shipped with gpucast. Panics only if the shipped data files
    /// are broken, which a unit test rules out.
    pub fn builtin() -> Catalog {
        let (gpus, _) = parse_file(BUILTIN_GPUS, BUILTIN_GPUS_ORIGIN)
            .unwrap_or_else(|e| panic!("built-in GPU catalog is broken: {e}"));
        let (_, ccs) = parse_file(BUILTIN_CCS, BUILTIN_CCS_ORIGIN)
            .unwrap_or_else(|e| panic!("built-in compute capability table is broken: {e}"));
        Catalog { gpus, ccs }
    }

    /// A catalog from one TOML text holding `[[gpu]]` and/or `[[cc]]` tables.
    /// `origin` names the file in error messages.
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Catalog> {
        let (gpus, ccs) = parse_file(text, origin)?;
        Ok(Catalog { gpus, ccs })
    }

    /// Merges a user's catalog file: a GPU whose name equals (case-insensitively)
    /// an existing GPU's name or alias replaces it; other GPUs are added. `[[cc]]`
    /// entries replace the same compute capability or are added. A `[[gpu]]` entry
    /// naming a known GPU may be partial (e.g. the measured fields written by
    /// `gpucast-bench calibrate`): its fields are laid over the known entry.
    pub fn merge_file(&mut self, path: &Path) -> Result<()> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::file(&origin, format!("cannot read: {e}")))?;
        let mut doc = parse_doc(&text, &origin)?;
        self.overlay_known(&mut doc, &origin)?;
        let (gpus, ccs) = parse_table(doc, &origin)?;
        self.merge(Catalog { gpus, ccs }, &origin)
    }

    /// Complete each `[[gpu]]` entry that names a known GPU with that GPU's fields
    /// (the entry's own fields win).
    fn overlay_known(&self, doc: &mut toml::Table, origin: &str) -> Result<()> {
        if let Some(toml::Value::Array(entries)) = doc.get_mut("gpu") {
            for entry in entries.iter_mut() {
                let Some(table) = entry.as_table_mut() else {
                    continue;
                };
                let Some(known) = table
                    .get("name")
                    .and_then(|n| n.as_str())
                    .and_then(|n| self.resolve(n))
                else {
                    continue;
                };
                let mut base = toml::Table::try_from(known)
                    .map_err(|e| Error::file(origin, format!("internal: {e}")))?;
                for (k, v) in std::mem::take(table) {
                    base.insert(k, v);
                }
                base.insert("name".into(), toml::Value::String(known.name.clone()));
                *table = base;
            }
        }
        Ok(())
    }

    /// Merges another catalog (see [`Catalog::merge_file`]).
    /// On error `self` is left unchanged.
    pub fn merge(&mut self, other: Catalog, origin: &str) -> Result<()> {
        let mut merged = self.clone();
        merged.merge_unchecked(other);
        check_duplicates(&merged.gpus, origin)?;
        *self = merged;
        Ok(())
    }

    fn merge_unchecked(&mut self, other: Catalog) {
        for g in other.gpus {
            let key = g.name.trim().to_lowercase();
            let pos = self.gpus.iter().position(|e| {
                e.name.trim().to_lowercase() == key
                    || e.aliases.iter().any(|a| a.trim().to_lowercase() == key)
            });
            match pos {
                Some(i) => self.gpus[i] = g,
                None => self.gpus.push(g),
            }
        }
        for c in other.ccs {
            let key = parse_cc(&c.cc);
            match self.ccs.iter().position(|e| parse_cc(&e.cc) == key) {
                Some(i) => self.ccs[i] = c,
                None => self.ccs.push(c),
            }
        }
    }

    pub fn gpus(&self) -> &[Gpu] {
        &self.gpus
    }

    pub fn compute_capabilities(&self) -> &[ComputeCapability] {
        &self.ccs
    }

    /// Finds a GPU by exact name, then exact alias, then case-insensitive
    /// name/alias, then normalized name (see [`normalize_name`]). Returns None
    /// when nothing matches or when the normalized query matches several GPUs.
    pub fn resolve(&self, name: &str) -> Option<&Gpu> {
        let q = name.trim();
        if q.is_empty() {
            return None;
        }
        if let Some(g) = self.gpus.iter().find(|g| g.name == q) {
            return Some(g);
        }
        if let Some(g) = self.gpus.iter().find(|g| g.aliases.iter().any(|a| a == q)) {
            return Some(g);
        }
        let lower = q.to_lowercase();
        let hits: Vec<&Gpu> = self
            .gpus
            .iter()
            .filter(|g| {
                g.name.to_lowercase() == lower
                    || g.aliases.iter().any(|a| a.to_lowercase() == lower)
            })
            .collect();
        if let Some(r) = unique(hits) {
            return r;
        }
        let n = normalize_name(q);
        if n.is_empty() {
            return None;
        }
        let hits: Vec<&Gpu> = self
            .gpus
            .iter()
            .filter(|g| {
                normalize_name(&g.name) == n || g.aliases.iter().any(|a| normalize_name(a) == n)
            })
            .collect();
        unique(hits).flatten()
    }

    /// Like [`Catalog::resolve`], with an error naming up to 5 close names.
    pub fn resolve_or_err(&self, name: &str) -> Result<&Gpu> {
        if let Some(g) = self.resolve(name) {
            return Ok(g);
        }
        let n = normalize_name(name);
        let ambiguous: Vec<&str> = self
            .gpus
            .iter()
            .filter(|g| {
                !n.is_empty()
                    && (normalize_name(&g.name) == n
                        || g.aliases.iter().any(|a| normalize_name(a) == n))
            })
            .map(|g| g.name.as_str())
            .collect();
        if ambiguous.len() > 1 {
            return Err(Error::msg(format!(
                "GPU name '{name}' is ambiguous: it matches {}; use the full name",
                ambiguous
                    .iter()
                    .take(5)
                    .map(|s| format!("'{s}'"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let close = self.close_names(name, 5);
        let hint = if close.is_empty() {
            String::new()
        } else {
            format!(
                "; close names: {}",
                close
                    .iter()
                    .map(|s| format!("'{s}'"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        Err(Error::msg(format!(
            "unknown GPU '{name}' (not in the catalog of {} GPUs; add it with a --gpus file){hint}",
            self.gpus.len()
        )))
    }

    /// Up to `k` GPU names closest to `name`: names containing it first, then
    /// by normalized edit distance.
    pub fn close_names(&self, name: &str, k: usize) -> Vec<String> {
        let q = normalize_name(name);
        if q.is_empty() {
            return Vec::new();
        }
        // Rank names containing the query (or contained in it) first, then by
        // edit distance between normalized names.
        let mut scored: Vec<((bool, bool), usize, &str)> = self
            .gpus
            .iter()
            .map(|g| {
                let (miss, d) = std::iter::once(&g.name)
                    .chain(g.aliases.iter())
                    .map(|n| {
                        let nn = normalize_name(n);
                        let key = (!nn.contains(&q), !q.contains(&nn));
                        (key, edit_distance(&q, &nn))
                    })
                    .min()
                    .unwrap_or(((true, true), usize::MAX));
                (miss, d, g.name.as_str())
            })
            .collect();
        scored.sort();
        let limit = (q.len() / 2).max(3);
        scored
            .into_iter()
            .filter(|((no_sup, no_sub), d, _)| !(*no_sup && *no_sub) || *d <= limit)
            .take(k)
            .map(|(_, _, n)| n.to_string())
            .collect()
    }

    /// The compute capability table entry for "8.9" (also accepts "89", "sm_89").
    pub fn compute_capability(&self, cc: &str) -> Option<&ComputeCapability> {
        let key = parse_cc(cc).or_else(|| {
            let digits = cc.trim().trim_start_matches("sm_").trim_start_matches("sm");
            if digits.len() >= 2 && digits.chars().all(|c| c.is_ascii_digit()) {
                let (a, b) = digits.split_at(digits.len() - 1);
                Some((a.parse().ok()?, b.parse().ok()?))
            } else {
                None
            }
        })?;
        self.ccs.iter().find(|c| parse_cc(&c.cc) == Some(key))
    }

    /// The occupancy limits for `gpu`: its compute capability's limits with the
    /// GPU's own fields (regs_per_sm, max_threads_per_sm, max_blocks_per_sm,
    /// smem_per_sm, warp_size, max_smem_per_block, reg_alloc_unit,
    /// smem_alloc_unit) overriding. For a compute capability not in the table,
    /// the granularities come from the closest known capability below it (or
    /// the newest one when there is none) and the rest from the GPU.
    pub fn limits(&self, gpu: &Gpu) -> ComputeCapability {
        let (ma, mi) = gpu.cc_major_minor();
        let mut base = match self.compute_capability(&gpu.compute_capability) {
            Some(c) => c.clone(),
            None => {
                let mut known: Vec<&ComputeCapability> = self.ccs.iter().collect();
                known.sort_by_key(|c| c.major_minor());
                let below = known.iter().rev().find(|c| c.major_minor() <= (ma, mi));
                let mut t = match below.or(known.last()) {
                    Some(c) => (*c).clone(),
                    None => latest_defaults(),
                };
                t.cc = gpu.compute_capability.clone();
                t.arch = Some(gpu.arch.clone());
                t
            }
        };
        base.warp_size = gpu.warp_size;
        base.regs_per_sm = gpu.regs_per_sm;
        base.max_regs_per_block = base.max_regs_per_block.min(gpu.regs_per_sm);
        base.max_threads_per_sm = gpu.max_threads_per_sm;
        base.max_warps_per_sm = gpu.max_threads_per_sm / gpu.warp_size.max(1);
        base.max_threads_per_block = base.max_threads_per_block.min(gpu.max_threads_per_sm);
        base.max_blocks_per_sm = gpu.max_blocks_per_sm;
        if let Some(u) = gpu.reg_alloc_unit {
            base.reg_alloc_unit = u;
        }
        if let Some(u) = gpu.smem_alloc_unit {
            base.smem_alloc_unit = u;
        }
        if gpu.smem_per_sm != base.smem_per_sm {
            base.smem_per_sm = gpu.smem_per_sm;
            let mut kb: Vec<u32> = base
                .smem_carveout_kb
                .iter()
                .copied()
                .filter(|k| k * 1024 < gpu.smem_per_sm)
                .collect();
            kb.push(gpu.smem_per_sm.div_ceil(1024));
            base.smem_carveout_kb = kb;
        }
        let per_block_cap = gpu.smem_per_sm.saturating_sub(base.reserved_smem_per_block);
        base.max_smem_per_block = match gpu.max_smem_per_block {
            Some(b) => b.min(per_block_cap.max(1)),
            None => base.max_smem_per_block.min(per_block_cap.max(1)),
        };
        base
    }
}

/// Granularities of the newest architecture in the table (used only when the
/// compute capability table is empty).
fn latest_defaults() -> ComputeCapability {
    ComputeCapability {
        cc: "0.0".into(),
        max_threads_per_block: 1024,
        max_threads_per_sm: 2048,
        max_warps_per_sm: 64,
        max_blocks_per_sm: 32,
        regs_per_sm: 65536,
        max_regs_per_block: 65536,
        max_regs_per_thread: 255,
        reg_alloc_unit: 256,
        warp_alloc_granularity: 4,
        smem_per_sm: 233472,
        max_smem_per_block: 232448,
        smem_alloc_unit: 128,
        reserved_smem_per_block: 1024,
        smem_carveout_kb: vec![228],
        warp_size: 32,
        reg_alloc_granularity: "warp".into(),
        arch: None,
    }
}

/// None: no hit; Some(None): ambiguous; Some(Some(g)): exactly one.
fn unique(hits: Vec<&Gpu>) -> Option<Option<&Gpu>> {
    match hits.len() {
        0 => None,
        1 => Some(Some(hits[0])),
        _ => Some(None),
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cat() -> Catalog {
        Catalog::builtin()
    }

    #[test]
    fn builtin_loads_with_enough_gpus() {
        let c = cat();
        assert!(c.gpus().len() >= 40, "only {} GPUs", c.gpus().len());
        assert!(c.compute_capabilities().len() >= 16);
    }

    #[test]
    fn required_gpus_present() {
        let c = cat();
        for n in [
            "NVIDIA GeForce GTX TITAN X",
            "Tesla M40",
            "Tesla P4",
            "Tesla P40",
            "Tesla P100-PCIE-16GB",
            "Tesla P100-SXM2-16GB",
            "NVIDIA TITAN Xp",
            "GeForce GTX 1080 Ti",
            "NVIDIA TITAN V",
            "Tesla V100-PCIE-16GB",
            "Tesla V100-PCIE-32GB",
            "Tesla V100-SXM2-16GB",
            "Tesla V100-SXM2-32GB",
            "Tesla T4",
            "NVIDIA GeForce RTX 2060",
            "NVIDIA GeForce RTX 2080",
            "NVIDIA GeForce RTX 2080 Ti",
            "NVIDIA TITAN RTX",
            "NVIDIA A10",
            "NVIDIA A30",
            "NVIDIA A40",
            "NVIDIA A100-PCIE-40GB",
            "NVIDIA A100-SXM4-40GB",
            "NVIDIA A100 80GB PCIe",
            "NVIDIA A100-SXM4-80GB",
            "rtx 3060",
            "rtx 3070",
            "rtx 3080",
            "rtx 3090",
            "NVIDIA RTX A6000",
            "NVIDIA L4",
            "NVIDIA L40",
            "NVIDIA L40S",
            "rtx 4060",
            "NVIDIA GeForce RTX 4070",
            "rtx 4080",
            "rtx 4090",
            "NVIDIA RTX 6000 Ada Generation",
            "NVIDIA H100 80GB HBM3",
            "NVIDIA H100 PCIe",
            "NVIDIA H200",
            "NVIDIA GH200 480GB",
            "NVIDIA B200",
            "NVIDIA GeForce RTX 5090",
        ] {
            assert!(c.resolve(n).is_some(), "cannot resolve {n}");
        }
    }

    #[test]
    fn resolve_driver_names_and_tolerant_forms() {
        let c = cat();
        let name = |q: &str| c.resolve(q).map(|g| g.name.clone());
        assert_eq!(
            name("NVIDIA GeForce GTX TITAN X").unwrap(),
            "NVIDIA GeForce GTX TITAN X"
        );
        assert_eq!(name("NVIDIA TITAN V").unwrap(), "NVIDIA TITAN V");
        assert_eq!(
            name("NVIDIA GeForce RTX 2080 Ti").unwrap(),
            "NVIDIA GeForce RTX 2080 Ti"
        );
        assert_eq!(
            name("NVIDIA GeForce RTX 4070").unwrap(),
            "NVIDIA GeForce RTX 4070"
        );
        assert_eq!(name("rtx 4070").unwrap(), "NVIDIA GeForce RTX 4070");
        assert_eq!(name("RTX-4070").unwrap(), "NVIDIA GeForce RTX 4070");
        assert_eq!(name("geforce_rtx_4070").unwrap(), "NVIDIA GeForce RTX 4070");
        assert_eq!(
            name("Tesla V100-PCIE-32GB").unwrap(),
            "NVIDIA Tesla V100 PCIe 32GB"
        );
        assert_eq!(
            name("v100 sxm2 16gb").unwrap(),
            "NVIDIA Tesla V100 SXM2 16GB"
        );
        assert_eq!(name("h100 sxm5 80gb").unwrap(), "NVIDIA H100 SXM5 80GB");
        assert_eq!(
            name("NVIDIA H100 80GB HBM3").unwrap(),
            "NVIDIA H100 SXM5 80GB"
        );
        assert_eq!(name("a100-sxm4-40gb").unwrap(), "NVIDIA A100 SXM4 40GB");
        assert_eq!(
            name("NVIDIA A100 80GB PCIe").unwrap(),
            "NVIDIA A100 PCIe 80GB"
        );
        assert_eq!(name("Tesla T4").unwrap(), "NVIDIA Tesla T4");
        assert_eq!(
            name("Tesla P100-PCIE-16GB").unwrap(),
            "NVIDIA Tesla P100 PCIe 16GB"
        );
        assert_eq!(name("NVIDIA H200").unwrap(), "NVIDIA H200 SXM 141GB");
        assert_eq!(name("NVIDIA GH200 480GB").unwrap(), "NVIDIA GH200 480GB");
        assert_eq!(name("gtx titan x").unwrap(), "NVIDIA GeForce GTX TITAN X");
        // A10 must not be confused with A100 / A40.
        assert_eq!(name("a10").unwrap(), "NVIDIA A10");
        assert!(c.resolve("RTX 9999").is_none());
        assert!(c.resolve("").is_none());
        assert!(c.resolve("NVIDIA").is_none());
    }

    #[test]
    fn normalized_names_do_not_collide_across_gpus() {
        let c = cat();
        let mut seen: std::collections::HashMap<String, String> = Default::default();
        for g in c.gpus() {
            for n in std::iter::once(&g.name).chain(g.aliases.iter()) {
                let k = normalize_name(n);
                if let Some(o) = seen.get(&k) {
                    assert_eq!(
                        o, &g.name,
                        "normalized '{k}' names both '{o}' and '{}'",
                        g.name
                    );
                }
                seen.insert(k, g.name.clone());
            }
            // every name and alias resolves to its own GPU
            for n in std::iter::once(&g.name).chain(g.aliases.iter()) {
                assert_eq!(c.resolve(n).unwrap().name, g.name, "{n}");
            }
        }
    }

    #[test]
    fn ambiguous_normalized_query_is_none() {
        let text = r#"
[[gpu]]
name = "Foo X-1"
vendor = "NVIDIA"
arch = "Ampere"
compute_capability = "8.6"
sm_count = 1
boost_clock_mhz = 1000.0
fp32_gflops = 256.0
mem_bandwidth_gbs = 100.0
l2_bytes = 1048576
regs_per_sm = 65536
max_threads_per_sm = 1536
max_blocks_per_sm = 16
smem_per_sm = 102400
warp_size = 32

[[gpu]]
name = "Foo X1"
vendor = "NVIDIA"
arch = "Ampere"
compute_capability = "8.6"
sm_count = 2
boost_clock_mhz = 1000.0
fp32_gflops = 512.0
mem_bandwidth_gbs = 100.0
l2_bytes = 1048576
regs_per_sm = 65536
max_threads_per_sm = 1536
max_blocks_per_sm = 16
smem_per_sm = 102400
warp_size = 32
"#;
        let c = Catalog::from_toml_str(text, "t.toml").unwrap();
        assert_eq!(c.resolve("Foo X-1").unwrap().sm_count, 1); // exact wins
        assert_eq!(c.resolve("foo x1").unwrap().sm_count, 2); // case-insensitive exact
        assert!(c.resolve("foo_x_1").is_none()); // normalized: both match
        let e = c.resolve_or_err("foo_x_1").unwrap_err().to_string();
        assert!(e.contains("ambiguous"), "{e}");
    }

    #[test]
    fn resolve_or_err_lists_close_names() {
        let c = cat();
        let e = c.resolve_or_err("RTX 4075").unwrap_err().to_string();
        assert!(e.contains("RTX 4070") || e.contains("RTX 4060"), "{e}");
        assert!(!e.contains('\n'));
        let n = e.matches("', '").count() + 1;
        assert!(n <= 5, "{e}");
        assert!(c.resolve_or_err("rtx 4090").is_ok());
        let e = c.resolve_or_err("V100").unwrap_err().to_string();
        assert_eq!(e.matches("V100").count(), 5, "{e}");
    }

    #[test]
    fn fp32_matches_cores_and_boost_clock() {
        for g in cat().gpus() {
            let cores = g.cores_per_sm.expect("built-in GPUs state cores_per_sm");
            let peak = g.sm_count as f64 * cores as f64 * 2.0 * g.boost_clock_mhz / 1000.0;
            let rel = (g.fp32_gflops - peak).abs() / peak;
            assert!(
                rel <= 0.02,
                "{}: fp32 {} vs {} from cores x clock",
                g.name,
                g.fp32_gflops,
                peak
            );
        }
    }

    #[test]
    fn gpu_limits_match_compute_capability_table() {
        let c = cat();
        for g in c.gpus() {
            let cc = c
                .compute_capability(&g.compute_capability)
                .unwrap_or_else(|| {
                    panic!("{}: cc {} not in the table", g.name, g.compute_capability)
                });
            assert_eq!(g.regs_per_sm, cc.regs_per_sm, "{}", g.name);
            assert_eq!(g.max_threads_per_sm, cc.max_threads_per_sm, "{}", g.name);
            assert_eq!(g.max_blocks_per_sm, cc.max_blocks_per_sm, "{}", g.name);
            assert_eq!(g.smem_per_sm, cc.smem_per_sm, "{}", g.name);
            assert_eq!(g.warp_size, cc.warp_size, "{}", g.name);
            if let Some(b) = g.max_smem_per_block {
                assert_eq!(b, cc.max_smem_per_block, "{}", g.name);
            }
            assert_eq!(&c.limits(g), cc, "{}", g.name);
            assert!(g.source.is_some(), "{} has no source", g.name);
            assert!(g.sustained_bandwidth_gbs.is_none() && g.measured_source.is_none());
        }
    }

    #[test]
    fn spot_check_vendor_figures() {
        let c = cat();
        let g = |n: &str| c.resolve(n).unwrap().clone();
        assert_eq!(g("NVIDIA TITAN V").l2_bytes, 4718592);
        assert_eq!(g("NVIDIA GeForce RTX 2080 Ti").l2_bytes, 5767168);
        assert_eq!(g("NVIDIA GeForce RTX 4070").l2_bytes, 37748736);
        assert_eq!(g("NVIDIA GeForce GTX TITAN X").l2_bytes, 3145728);
        assert_eq!(g("NVIDIA H100 80GB HBM3").l2_bytes, 52428800);
        assert_eq!(g("NVIDIA H200").l2_bytes, 52428800);
        assert_eq!(g("NVIDIA H100 80GB HBM3").sm_count, 132);
        assert_eq!(g("NVIDIA A100-SXM4-40GB").sm_count, 108);
        assert_eq!(g("NVIDIA TITAN V").sm_arch(), "sm_70");
        assert_eq!(g("NVIDIA B200").sm_arch(), "sm_100");
        assert_eq!(g("NVIDIA GeForce RTX 5090").cc_major_minor(), (12, 0));
    }

    #[test]
    fn compute_capability_table_contents() {
        let c = cat();
        for cc in [
            "5.0", "5.2", "5.3", "6.0", "6.1", "6.2", "7.0", "7.2", "7.5", "8.0", "8.6", "8.7",
            "8.9", "9.0", "10.0", "12.0",
        ] {
            let t = c
                .compute_capability(cc)
                .unwrap_or_else(|| panic!("missing {cc}"));
            assert_eq!(t.max_threads_per_block, 1024);
            assert_eq!(t.max_regs_per_thread, 255);
            assert_eq!(t.reg_alloc_unit, 256);
            let (ma, _) = t.major_minor();
            assert_eq!(
                t.reserved_smem_per_block,
                if ma >= 8 { 1024 } else { 0 },
                "{cc}"
            );
            assert_eq!(t.smem_alloc_unit, if ma >= 8 { 128 } else { 256 }, "{cc}");
            assert!(t.max_smem_per_block + t.reserved_smem_per_block <= t.smem_per_sm);
        }
        // cudaOccMaxBlocksPerMultiprocessor in cuda_occupancy.h (CUDA 12.9).
        for (cc, blocks) in [("sm_89", 24), ("9.0", 32), ("10.0", 32), ("12.0", 24)] {
            assert_eq!(
                c.compute_capability(cc).unwrap().max_blocks_per_sm,
                blocks,
                "{cc}"
            );
        }
        assert_eq!(c.compute_capability("86").unwrap().max_blocks_per_sm, 16);
        assert_eq!(
            c.compute_capability("7.5").unwrap().smem_carveout_kb,
            vec![32, 64]
        );
        assert!(c.compute_capability("4.2").is_none());
    }

    #[test]
    fn user_file_merges_replaces_and_adds() {
        let dir = std::env::temp_dir().join(format!("gpucast-cat-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("mine.toml");
        std::fs::write(
            &p,
            r#"
[[gpu]]
name = "NVIDIA GeForce RTX 4070"
vendor = "NVIDIA"
arch = "Ada Lovelace"
compute_capability = "8.9"
sm_count = 46
boost_clock_mhz = 2475.0
fp32_gflops = 29145.6
mem_bandwidth_gbs = 504.0
l2_bytes = 37748736
regs_per_sm = 65536
max_threads_per_sm = 1536
max_blocks_per_sm = 24
smem_per_sm = 102400
warp_size = 32
sustained_bandwidth_gbs = 450.0
measured_source = "my bench"

[[gpu]]
name = "Future GPU"
aliases = ["FG-1"]
vendor = "NVIDIA"
arch = "Futurewell"
compute_capability = "13.1"
sm_count = 10
boost_clock_mhz = 2000.0
fp32_gflops = 5120.0
mem_bandwidth_gbs = 1000.0
l2_bytes = 1048576
regs_per_sm = 65536
max_threads_per_sm = 1024
max_blocks_per_sm = 8
smem_per_sm = 65536
warp_size = 32
"#,
        )
        .unwrap();
        let mut c = cat();
        let n = c.gpus().len();
        c.merge_file(&p).unwrap();
        assert_eq!(c.gpus().len(), n + 1);
        let g = c.resolve("rtx 4070").unwrap();
        assert_eq!(g.sustained_bandwidth_gbs, Some(450.0));
        let f = c.resolve("fg 1").unwrap().clone();
        assert!(c.compute_capability(&f.compute_capability).is_none());
        let l = c.limits(&f);
        assert_eq!(l.max_warps_per_sm, 32);
        assert_eq!(l.max_blocks_per_sm, 8);
        assert_eq!(l.smem_per_sm, 65536);
        assert_eq!(l.smem_alloc_unit, 128); // from 12.0, the closest known below 13.1
        assert_eq!(l.reserved_smem_per_block, 1024);
        assert_eq!(*l.smem_carveout_kb.last().unwrap(), 64);
        assert_eq!(l.max_smem_per_block, 65536 - 1024);
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn merge_rejects_alias_clash() {
        let mut c = cat();
        let other = Catalog::from_toml_str(
            r#"
[[gpu]]
name = "My card"
aliases = ["Tesla T4"]
vendor = "NVIDIA"
arch = "Turing"
compute_capability = "7.5"
sm_count = 40
boost_clock_mhz = 1590.0
fp32_gflops = 8140.8
mem_bandwidth_gbs = 320.0
l2_bytes = 4194304
regs_per_sm = 65536
max_threads_per_sm = 1024
max_blocks_per_sm = 16
smem_per_sm = 65536
warp_size = 32
"#,
            "mine.toml",
        )
        .unwrap();
        let n = c.gpus().len();
        let e = c.merge(other, "mine.toml").unwrap_err().to_string();
        assert_eq!(
            c.gpus().len(),
            n,
            "a failed merge leaves the catalog unchanged"
        );
        assert!(
            e.contains("mine.toml") && e.contains("Tesla T4") && e.contains("My card"),
            "{e}"
        );
    }

    #[test]
    fn load_errors_name_file_and_gpu() {
        let e = Catalog::from_toml_str("[[gpu]]\nname = \"X\"\nvendor = \"NVIDIA\"\n", "bad.toml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("bad.toml: [[gpu]] #1 'X'"), "{e}");
        assert!(e.contains("missing field"), "{e}");
        assert!(!e.contains('\n'));

        let e = Catalog::from_toml_str("[[gpu]\n", "broken.toml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("broken.toml:"), "{e}");
        assert!(!e.contains('\n'), "{e}");

        let one = |name: &str, sms: u32| {
            format!(
                "[[gpu]]\nname = \"{name}\"\nvendor = \"NVIDIA\"\narch = \"A\"\ncompute_capability = \"8.6\"\nsm_count = {sms}\nboost_clock_mhz = 1.0\nfp32_gflops = 1.0\nmem_bandwidth_gbs = 1.0\nl2_bytes = 1\nregs_per_sm = 65536\nmax_threads_per_sm = 1536\nmax_blocks_per_sm = 16\nsmem_per_sm = 102400\nwarp_size = 32\n"
            )
        };
        let e = Catalog::from_toml_str(&one("Z", 0), "z.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("z.toml") && e.contains("'Z'") && e.contains("sm_count"),
            "{e}"
        );
        let dup = format!("{}\n{}", one("Dup", 1), one("dup", 2));
        let e = Catalog::from_toml_str(&dup, "d.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("d.toml") && e.contains("already used"), "{e}");
        let e = Catalog::from_toml_str(&one("Q", 1).replace("\"8.6\"", "\"eight\""), "q.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("compute_capability"), "{e}");
        let e = Catalog::from_toml_str(&format!("{}bogus = 1\n", one("B", 1)), "b.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("bogus"), "{e}");
    }

    #[test]
    fn gpu_round_trips_through_toml() {
        let g = cat().resolve("rtx 4090").unwrap().clone();
        let s = toml::to_string(&g).unwrap();
        let back: Gpu = toml::from_str(&s).unwrap();
        assert_eq!(g, back);
        assert!(!s.contains("sustained_bandwidth_gbs"));
    }

    #[test]
    fn normalize_examples() {
        assert_eq!(normalize_name("NVIDIA GeForce RTX 4070"), "rtx4070");
        assert_eq!(normalize_name("Tesla V100-PCIE-32GB"), "v100pcie32gb");
        assert_eq!(normalize_name("nvidia_a100_sxm4_40gb"), "a100sxm440gb");
        assert_eq!(normalize_name("NVIDIA"), "nvidia");
    }
}
