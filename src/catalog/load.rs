//! Reading, validating and merging catalog files.
//!
//! Errors are one line: `FILE:LINE:COLUMN: [[gpu]] #N 'NAME': what is wrong`, the
//! line and column as an editor counts them (the entry's header, or the offending
//! field when the problem is one field).

use super::{parse_cc, Catalog, ComputeCapability, Gpu};
use crate::error::{toml_message, Error, Result};
use std::path::Path;

const BUILTIN_GPUS: &str = include_str!("../../datasets/gpus.toml");
const BUILTIN_CCS: &str = include_str!("../../datasets/compute_capabilities.toml");
const BUILTIN_GPUS_ORIGIN: &str = "datasets/gpus.toml (built in)";
const BUILTIN_CCS_ORIGIN: &str = "datasets/compute_capabilities.toml (built in)";

/// Where entries and fields sit in a catalog file's text, for error positions.
struct Positions<'a> {
    origin: &'a str,
    lines: Vec<&'a str>,
}

impl<'a> Positions<'a> {
    fn new(text: &'a str, origin: &'a str) -> Self {
        Positions {
            origin,
            lines: text.lines().collect(),
        }
    }

    /// 0-based line indices of the `[[table]]` headers, in file order.
    fn headers(&self, table: &str) -> Vec<usize> {
        self.lines
            .iter()
            .enumerate()
            .filter(|(_, l)| {
                let t: String = l.chars().filter(|c| !c.is_whitespace()).collect();
                t.starts_with(&format!("[[{table}]]"))
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// "FILE:LINE:COL" of entry `index` of `table`, or of its `key` field when that
    /// is written on a line of its own inside the entry.
    fn at(&self, table: &str, index: usize, key: Option<&str>) -> String {
        let headers = self.headers(table);
        let Some(&start) = headers.get(index) else {
            return self.origin.to_string();
        };
        if let Some(key) = key {
            // The entry runs until the next table header of any kind.
            let end = (start + 1..self.lines.len())
                .find(|&i| self.lines[i].trim_start().starts_with('['))
                .unwrap_or(self.lines.len());
            for i in start + 1..end {
                let l = self.lines[i];
                let t = l.trim_start();
                if let Some(rest) = t.strip_prefix(key) {
                    if rest.trim_start().starts_with('=') {
                        let col = l.chars().count() - t.chars().count() + 1;
                        return format!("{}:{}:{}", self.origin, i + 1, col);
                    }
                }
            }
        }
        let col =
            self.lines[start].chars().count() - self.lines[start].trim_start().chars().count();
        format!("{}:{}:{}", self.origin, start + 1, col + 1)
    }
}

/// A validation failure of one entry: the message and, when it is about one field,
/// the field's key.
struct Invalid {
    key: Option<&'static str>,
    message: String,
}

fn invalid(key: &'static str, message: impl Into<String>) -> Invalid {
    Invalid {
        key: Some(key),
        message: message.into(),
    }
}

/// Parse catalog TOML text (syntax only). The toml crate's message carries the
/// line and column; it is folded into one line.
fn parse_doc(text: &str, origin: &str) -> Result<toml::Table> {
    toml::from_str(text).map_err(|e| {
        Error::file(
            crate::error::toml_place(origin, text, &e),
            format!("not a valid catalog TOML file: {}", toml_message(&e)),
        )
    })
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Typed, validated GPUs and compute capabilities of a parsed catalog document.
fn parse_table(
    mut doc: toml::Table,
    pos: &Positions,
) -> Result<(Vec<Gpu>, Vec<ComputeCapability>)> {
    let origin = pos.origin;
    let gpu_values = take_array(&mut doc, "gpu", origin)?;
    let cc_values = take_array(&mut doc, "cc", origin)?;
    if let Some(k) = doc.keys().next() {
        return Err(Error::file(
            origin,
            format!("unknown top-level key '{k}' (a catalog file holds [[gpu]] and [[cc]] tables)"),
        ));
    }
    let mut gpus = Vec::with_capacity(gpu_values.len());
    for (i, v) in gpu_values.into_iter().enumerate() {
        let label = entry_label("gpu", i, v.get("name"));
        let gpu: Gpu = v.try_into().map_err(|e: toml::de::Error| {
            Error::file(
                pos.at("gpu", i, None),
                format!("{label}: {}", one_line(e.message())),
            )
        })?;
        validate_gpu(&gpu).map_err(|bad| {
            Error::file(
                pos.at("gpu", i, bad.key),
                format!("{label}: {}", bad.message),
            )
        })?;
        gpus.push(gpu);
    }
    let mut ccs = Vec::with_capacity(cc_values.len());
    for (i, v) in cc_values.into_iter().enumerate() {
        let label = entry_label("cc", i, v.get("cc"));
        let cc: ComputeCapability = v.try_into().map_err(|e: toml::de::Error| {
            Error::file(
                pos.at("cc", i, None),
                format!("{label}: {}", one_line(e.message())),
            )
        })?;
        validate_cc(&cc).map_err(|bad| {
            Error::file(
                pos.at("cc", i, bad.key),
                format!("{label}: {}", bad.message),
            )
        })?;
        if let Some(j) = ccs
            .iter()
            .position(|c: &ComputeCapability| parse_cc(&c.cc) == parse_cc(&cc.cc))
        {
            return Err(Error::file(
                pos.at("cc", i, Some("cc")),
                format!(
                    "{label}: compute capability '{}' is already defined by [[cc]] #{}",
                    cc.cc,
                    j + 1
                ),
            ));
        }
        ccs.push(cc);
    }
    check_duplicates(&gpus, pos)?;
    Ok((gpus, ccs))
}

fn take_array(doc: &mut toml::Table, key: &str, origin: &str) -> Result<Vec<toml::Value>> {
    match doc.remove(key) {
        None => Ok(Vec::new()),
        Some(toml::Value::Array(a)) => Ok(a),
        Some(_) => Err(Error::file(
            origin,
            format!("'{key}' must be an array of tables ([[{key}]])"),
        )),
    }
}

fn entry_label(table: &str, i: usize, name: Option<&toml::Value>) -> String {
    match name.and_then(|n| n.as_str()) {
        Some(n) => format!("[[{table}]] #{} '{n}'", i + 1),
        None => format!("[[{table}]] #{}", i + 1),
    }
}

fn validate_gpu(g: &Gpu) -> std::result::Result<(), Invalid> {
    if g.name.trim().is_empty() {
        return Err(invalid("name", "name is empty"));
    }
    if parse_cc(&g.compute_capability).is_none() {
        return Err(invalid(
            "compute_capability",
            format!(
                "compute_capability '{}' is not of the form MAJOR.MINOR (e.g. \"8.9\")",
                g.compute_capability
            ),
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
            return Err(invalid(k, format!("{k} must be positive")));
        }
    }
    if g.l2_bytes == 0 {
        return Err(invalid("l2_bytes", "l2_bytes must be positive"));
    }
    let floats = [
        ("boost_clock_mhz", Some(g.boost_clock_mhz)),
        ("fp32_gflops", Some(g.fp32_gflops)),
        ("mem_bandwidth_gbs", Some(g.mem_bandwidth_gbs)),
        ("fp64_gflops", g.fp64_gflops),
        ("fp16_gflops", g.fp16_gflops),
        ("tensor_fp64_gflops", g.tensor_fp64_gflops),
        ("tensor_tf32_gflops", g.tensor_tf32_gflops),
        ("tensor_fp16_gflops", g.tensor_fp16_gflops),
        ("tensor_bf16_gflops", g.tensor_bf16_gflops),
        ("tensor_fp8_gflops", g.tensor_fp8_gflops),
        ("tensor_fp4_gflops", g.tensor_fp4_gflops),
        ("tensor_int8_gops", g.tensor_int8_gops),
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
                return Err(invalid(
                    k,
                    format!("{k} must be a positive number, got {v}"),
                ));
            }
        }
    }
    // A measured sustained bandwidth above the memory's peak is a typo or a broken
    // benchmark (the same 5 % slack as the validation of runs).
    if let Some(s) = g.sustained_bandwidth_gbs {
        if s > 1.05 * g.mem_bandwidth_gbs {
            return Err(invalid(
                "sustained_bandwidth_gbs",
                format!(
                    "sustained_bandwidth_gbs {s} is above the peak mem_bandwidth_gbs {}: no measurement exceeds the peak",
                    g.mem_bandwidth_gbs
                ),
            ));
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
            return Err(invalid(k, format!("{k} must be positive")));
        }
    }
    if !g.max_threads_per_sm.is_multiple_of(g.warp_size) {
        return Err(invalid(
            "max_threads_per_sm",
            format!(
                "max_threads_per_sm {} is not a multiple of warp_size {}",
                g.max_threads_per_sm, g.warp_size
            ),
        ));
    }
    if g.aliases.iter().any(|a| a.trim().is_empty()) {
        return Err(invalid("aliases", "an alias is empty"));
    }
    Ok(())
}

fn validate_cc(c: &ComputeCapability) -> std::result::Result<(), Invalid> {
    if parse_cc(&c.cc).is_none() {
        return Err(invalid(
            "cc",
            format!("cc '{}' is not of the form MAJOR.MINOR", c.cc),
        ));
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
            return Err(invalid(k, format!("{k} must be positive")));
        }
    }
    if c.max_warps_per_sm * c.warp_size != c.max_threads_per_sm {
        return Err(invalid(
            "max_warps_per_sm",
            format!(
                "max_warps_per_sm {} x warp_size {} != max_threads_per_sm {}",
                c.max_warps_per_sm, c.warp_size, c.max_threads_per_sm
            ),
        ));
    }
    if c.reg_alloc_granularity != "warp" {
        return Err(invalid(
            "reg_alloc_granularity",
            format!(
                "reg_alloc_granularity '{}' is not supported (only \"warp\")",
                c.reg_alloc_granularity
            ),
        ));
    }
    let max_kb = c.smem_carveout_kb.iter().max().copied().unwrap_or(0);
    if c.smem_carveout_kb.is_empty() {
        return Err(invalid("smem_carveout_kb", "smem_carveout_kb is empty"));
    }
    if max_kb * 1024 != c.smem_per_sm {
        return Err(invalid(
            "smem_carveout_kb",
            format!(
                "the largest smem_carveout_kb ({max_kb} KB) is not smem_per_sm ({} bytes)",
                c.smem_per_sm
            ),
        ));
    }
    Ok(())
}

/// No name or alias (case-insensitive) may name two GPUs.
fn check_duplicates(gpus: &[Gpu], pos: &Positions) -> Result<()> {
    let mut seen: std::collections::HashMap<String, &str> = std::collections::HashMap::new();
    for (i, g) in gpus.iter().enumerate() {
        let mut own = std::collections::HashSet::new();
        for n in std::iter::once(&g.name).chain(g.aliases.iter()) {
            let key = n.trim().to_lowercase();
            if !own.insert(key.clone()) {
                continue; // the same GPU naming itself twice is harmless
            }
            if let Some(other) = seen.get(&key) {
                return Err(Error::file(
                    pos.at("gpu", i, None),
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

/// Every GPU's compute capability must be in `ccs`: limits are never made up.
/// `entry_of` maps a GPU to its entry index in the file `pos` describes (None for
/// a GPU from elsewhere, which is then reported without a position).
fn check_ccs_known(
    gpus: &[Gpu],
    ccs: &[ComputeCapability],
    pos: &Positions,
    entry_of: impl Fn(&Gpu) -> Option<usize>,
) -> Result<()> {
    for g in gpus {
        let key = parse_cc(&g.compute_capability);
        if ccs.iter().any(|c| parse_cc(&c.cc) == key) {
            continue;
        }
        let mut known: Vec<&ComputeCapability> = ccs.iter().collect();
        known.sort_by_key(|c| c.major_minor());
        let known: Vec<&str> = known.iter().map(|c| c.cc.as_str()).collect();
        let at = match entry_of(g) {
            Some(i) => pos.at("gpu", i, Some("compute_capability")),
            None => pos.origin.to_string(),
        };
        return Err(Error::file(
            at,
            format!(
                "GPU '{}': compute capability '{}' is not in the compute capability table \
                 (known: {}); add a [[cc]] entry with its limits from cuda_occupancy.h",
                g.name,
                g.compute_capability,
                known.join(", ")
            ),
        ));
    }
    Ok(())
}

fn builtin_ccs() -> Vec<ComputeCapability> {
    let pos = Positions::new(BUILTIN_CCS, BUILTIN_CCS_ORIGIN);
    let doc = parse_doc(BUILTIN_CCS, BUILTIN_CCS_ORIGIN)
        .unwrap_or_else(|e| panic!("built-in compute capability table is broken: {e}"));
    parse_table(doc, &pos)
        .unwrap_or_else(|e| panic!("built-in compute capability table is broken: {e}"))
        .1
}

/// The `[[cc]]` entries of `extra` laid over `base` (same compute capability
/// replaced, others added).
fn merge_ccs(base: &mut Vec<ComputeCapability>, extra: Vec<ComputeCapability>) {
    for c in extra {
        let key = parse_cc(&c.cc);
        match base.iter().position(|e| parse_cc(&e.cc) == key) {
            Some(i) => base[i] = c,
            None => base.push(c),
        }
    }
}

impl Catalog {
    /// The catalog shipped with gpucast. Panics only if the shipped data files
    /// are broken, which a unit test rules out.
    pub fn builtin() -> Catalog {
        let pos = Positions::new(BUILTIN_GPUS, BUILTIN_GPUS_ORIGIN);
        let (gpus, _) = parse_doc(BUILTIN_GPUS, BUILTIN_GPUS_ORIGIN)
            .and_then(|doc| parse_table(doc, &pos))
            .unwrap_or_else(|e| panic!("built-in GPU catalog is broken: {e}"));
        let ccs = builtin_ccs();
        let index = |g: &Gpu| gpus.iter().position(|x| x.name == g.name);
        check_ccs_known(&gpus, &ccs, &pos, index)
            .unwrap_or_else(|e| panic!("built-in GPU catalog is broken: {e}"));
        Catalog::new(gpus, ccs)
    }

    /// A catalog from one TOML text holding `[[gpu]]` and/or `[[cc]]` tables, with
    /// the built-in compute capability table under the text's `[[cc]]` entries.
    /// `origin` names the file in error messages. Every GPU's compute capability
    /// must be in that table.
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Catalog> {
        let pos = Positions::new(text, origin);
        let (gpus, own_ccs) = parse_table(parse_doc(text, origin)?, &pos)?;
        let mut ccs = builtin_ccs();
        merge_ccs(&mut ccs, own_ccs);
        check_ccs_known(&gpus, &ccs, &pos, |g| {
            gpus.iter().position(|x| x.name == g.name)
        })?;
        Ok(Catalog::new(gpus, ccs))
    }

    /// Merges a user's catalog file: a GPU whose name equals (case-insensitively)
    /// an existing GPU's name or alias replaces it; other GPUs are added. `[[cc]]`
    /// entries replace the same compute capability or are added. A `[[gpu]]` entry
    /// naming a known GPU may be partial (e.g. the measured fields written by
    /// `gpucast-bench calibrate`): its fields are laid over the known entry.
    /// A GPU whose compute capability is in neither the table nor the file's
    /// `[[cc]]` entries is an error naming the file, line and GPU.
    pub fn merge_file(&mut self, path: &Path) -> Result<()> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::file(&origin, format!("cannot read: {e}")))?;
        let pos = Positions::new(&text, &origin);
        let mut doc = parse_doc(&text, &origin)?;
        self.overlay_known(&mut doc, &origin)?;
        let (gpus, ccs) = parse_table(doc, &pos)?;
        let mut all_ccs = self.ccs.clone();
        merge_ccs(&mut all_ccs, ccs.clone());
        check_ccs_known(&gpus, &all_ccs, &pos, |g| {
            gpus.iter().position(|x| x.name == g.name)
        })?;
        self.merge(Catalog::new(gpus, ccs), &origin)
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
                    .and_then(|n| self.resolve_exact(n))
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
        for g in other.gpus {
            let key = g.name.trim().to_lowercase();
            let pos = merged.gpus.iter().position(|e| {
                e.name.trim().to_lowercase() == key
                    || e.aliases.iter().any(|a| a.trim().to_lowercase() == key)
            });
            match pos {
                Some(i) => merged.gpus[i] = g,
                None => merged.gpus.push(g),
            }
        }
        merge_ccs(&mut merged.ccs, other.ccs);
        let pos = Positions::new("", origin);
        check_duplicates(&merged.gpus, &pos)?;
        check_ccs_known(&merged.gpus, &merged.ccs, &pos, |_| None)?;
        *self = Catalog::new(merged.gpus, merged.ccs);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cat() -> Catalog {
        Catalog::builtin()
    }

    /// A minimal SYNTHETIC GPU entry for loader tests.
    fn one(name: &str, cc: &str, sms: u32) -> String {
        format!(
            "[[gpu]]\nname = \"{name}\"\nvendor = \"NVIDIA\"\narch = \"A\"\ncompute_capability = \"{cc}\"\nsm_count = {sms}\nboost_clock_mhz = 1.0\nfp32_gflops = 1.0\nmem_bandwidth_gbs = 1.0\nl2_bytes = 1\nregs_per_sm = 65536\nmax_threads_per_sm = 1536\nmax_blocks_per_sm = 16\nsmem_per_sm = 102400\nwarp_size = 32\n"
        )
    }

    #[test]
    fn builtin_loads_with_enough_gpus() {
        let c = cat();
        assert!(c.gpus().len() >= 80, "only {} GPUs", c.gpus().len());
        assert!(c.compute_capabilities().len() >= 19);
    }

    #[test]
    fn load_errors_name_file_line_and_gpu() {
        let e = Catalog::from_toml_str("[[gpu]]\nname = \"X\"\nvendor = \"NVIDIA\"\n", "bad.toml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("bad.toml:1:1: [[gpu]] #1 'X'"), "{e}");
        assert!(e.contains("missing field"), "{e}");
        assert!(!e.contains('\n'));

        let e = Catalog::from_toml_str("# c\n[[gpu]\n", "broken.toml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("broken.toml:2:"), "{e}");
        assert!(!e.contains('\n'), "{e}");

        // A bad field is reported at its own line and column.
        let text = format!("{}\n{}", one("A", "8.6", 1), one("Z", "8.6", 0));
        let e = Catalog::from_toml_str(&text, "z.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("z.toml:22:1: [[gpu]] #2 'Z': sm_count must be positive"),
            "{e}"
        );
        let dup = format!("{}\n{}", one("Dup", "8.6", 1), one("dup", "8.6", 2));
        let e = Catalog::from_toml_str(&dup, "d.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("d.toml:17:1:") && e.contains("already used"),
            "{e}"
        );
        let e = Catalog::from_toml_str(&one("Q", "eight", 1), "q.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("q.toml:5:1:") && e.contains("compute_capability"),
            "{e}"
        );
        // SYNTHETIC: a sustained bandwidth above the peak (1.0 GB/s in `one`).
        let e = Catalog::from_toml_str(
            &format!("{}sustained_bandwidth_gbs = 5.0\n", one("S", "8.6", 1)),
            "s.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("s.toml:16:1: [[gpu]] #1 'S': sustained_bandwidth_gbs 5 is above"),
            "{e}"
        );
        let e = Catalog::from_toml_str(&format!("{}bogus = 1\n", one("B", "8.6", 1)), "b.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("bogus"), "{e}");
        let e = Catalog::from_toml_str("foo = 1\n", "f.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown top-level key 'foo'"), "{e}");
    }

    #[test]
    fn unknown_compute_capability_is_a_load_error() {
        // SYNTHETIC: a GPU of a compute capability no table lists.
        let e = Catalog::from_toml_str(&one("Future", "13.7", 1), "future.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("future.toml:5:1: GPU 'Future': compute capability '13.7' is not in"),
            "{e}"
        );
        assert!(e.contains("12.0") && !e.contains('\n'), "{e}");
        // The same file with the capability's limits loads.
        let cc = "[[cc]]\ncc = \"13.7\"\nmax_threads_per_block = 1024\nmax_threads_per_sm = 1536\nmax_warps_per_sm = 48\nmax_blocks_per_sm = 16\nregs_per_sm = 65536\nmax_regs_per_block = 65536\nmax_regs_per_thread = 255\nreg_alloc_unit = 256\nwarp_alloc_granularity = 4\nsmem_per_sm = 102400\nmax_smem_per_block = 101376\nsmem_alloc_unit = 128\nreserved_smem_per_block = 1024\nsmem_carveout_kb = [0, 100]\n";
        let c = Catalog::from_toml_str(&format!("{}\n{cc}", one("Future", "13.7", 1)), "f.toml")
            .unwrap();
        let g = c.resolve("Future").unwrap();
        assert_eq!(c.limits(g).unwrap().max_blocks_per_sm, 16);
    }

    #[test]
    fn user_file_merges_replaces_and_adds() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("mine.toml");
        // SYNTHETIC measured figure laid over a known GPU, and a new GPU.
        std::fs::write(
            &p,
            format!(
                "[[gpu]]\nname = \"NVIDIA GeForce RTX 4070\"\nsustained_bandwidth_gbs = 450.0\nmeasured_source = \"my bench\"\n\n{}aliases = [\"FG-1\"]\n",
                one("Future GPU", "12.0", 10)
            ),
        )
        .unwrap();
        let mut c = cat();
        let n = c.gpus().len();
        c.merge_file(&p).unwrap();
        assert_eq!(c.gpus().len(), n + 1);
        let g = c.resolve("rtx 4070").unwrap();
        assert_eq!(g.sustained_bandwidth_gbs, Some(450.0));
        assert_eq!(g.sm_count, 46, "the known fields stay");
        let f = c.resolve("fg 1").unwrap().clone();
        assert_eq!(f.sm_count, 10);
        let l = c.limits(&f).unwrap();
        assert_eq!(l.max_blocks_per_sm, 16, "the GPU's own field wins");
        assert_eq!(l.smem_alloc_unit, 128);

        // A user GPU of an unknown capability is refused, naming file, line and GPU.
        let q = dir.path().join("new.toml");
        std::fs::write(&q, format!("# mine\n{}", one("Odd", "13.7", 4))).unwrap();
        let e = c.merge_file(&q).unwrap_err().to_string();
        assert!(
            e.contains("new.toml:6:1: GPU 'Odd'") && e.contains("13.7"),
            "{e}"
        );
        assert_eq!(c.gpus().len(), n + 1, "a failed merge changes nothing");
    }

    #[test]
    fn merge_rejects_alias_clash() {
        let mut c = cat();
        let other = Catalog::from_toml_str(
            &format!("{}aliases = [\"Tesla T4\"]\n", one("My card", "7.5", 40)),
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
}
