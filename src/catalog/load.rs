//! Reading, validating and merging catalog files.
//!
//! Errors are one line: `FILE:LINE:COLUMN: [[gpu]] #N 'NAME': what is wrong`, the
//! line and column as an editor counts them: the offending key (a wrong type, an
//! unknown field, a failed check), the alias or name that clashes, or the entry's
//! header (a missing field). Entries are deserialized from the parser's spanned
//! values (not a `toml::Table`, which drops positions), so every error keeps its
//! place in the file.

use super::{cc_key, Catalog, ComputeCapability, Gpu};
use crate::error::{text_place, toml_message, Error, Result};
use serde::Deserialize;
use std::ops::Range;
use std::path::Path;
use toml::de::{DeTable, DeValue, ValueDeserializer};
use toml::Spanned;

const BUILTIN_GPUS: &str = include_str!("../../datasets/gpus.toml");
const BUILTIN_CCS: &str = include_str!("../../datasets/compute_capabilities.toml");
const BUILTIN_GPUS_ORIGIN: &str = "datasets/gpus.toml (built in)";
/// Measured figures laid over built-in GPUs (sustained DRAM bandwidth; L2 bandwidth
/// for reference), each entry with its `measured_source`.
const BUILTIN_MEASURED: &str = include_str!("../../datasets/gpus_measured.toml");
const BUILTIN_MEASURED_ORIGIN: &str = "datasets/gpus_measured.toml (built in)";
const BUILTIN_CCS_ORIGIN: &str = "datasets/compute_capabilities.toml (built in)";

/// Byte ranges of one `[[gpu]]` / `[[cc]]` entry as written in the file.
#[derive(Default)]
struct EntrySpans {
    /// The `[[gpu]]` header (or the inline table).
    header: Range<usize>,
    /// Each key written in the entry: (key, key's range, value's range).
    fields: Vec<(String, Range<usize>, Range<usize>)>,
    /// Each element of the entry's `aliases` array.
    aliases: Vec<Range<usize>>,
}

impl EntrySpans {
    fn of(entry: &Spanned<DeValue>) -> Self {
        let mut s = EntrySpans {
            header: entry.span(),
            ..Default::default()
        };
        if let DeValue::Table(t) = entry.get_ref() {
            for (k, v) in t.iter() {
                if k.get_ref() == "aliases" {
                    if let DeValue::Array(a) = v.get_ref() {
                        s.aliases = a.iter().map(Spanned::span).collect();
                    }
                }
                s.fields.push((k.get_ref().to_string(), k.span(), v.span()));
                // (a table's own keys too, dotted: `measured.dram_copy_gbs`)
                if let DeValue::Table(sub) = v.get_ref() {
                    for (sk, sv) in sub.iter() {
                        let dotted = format!("{}.{}", k.get_ref(), sk.get_ref());
                        s.fields.push((dotted, sk.span(), sv.span()));
                    }
                }
            }
        }
        s
    }

    fn key(&self, key: &str) -> Option<Range<usize>> {
        self.fields
            .iter()
            .find(|(k, _, _)| k == key)
            .map(|(_, k, _)| k.clone())
    }
}

/// Where entries and fields sit in a catalog file's text, for error positions.
/// Records only what the file itself writes (not fields laid over it from a known
/// GPU), so a position always points into `text`.
struct Positions<'a> {
    origin: &'a str,
    text: &'a str,
    gpu: Vec<EntrySpans>,
    cc: Vec<EntrySpans>,
}

impl<'a> Positions<'a> {
    fn new(text: &'a str, origin: &'a str, doc: &DeTable) -> Self {
        let entries = |table: &str| match doc.get(table).map(Spanned::get_ref) {
            Some(DeValue::Array(a)) => a.iter().map(EntrySpans::of).collect(),
            _ => Vec::new(),
        };
        Positions {
            origin,
            text,
            gpu: entries("gpu"),
            cc: entries("cc"),
        }
    }

    /// No text: every position is the file as a whole.
    fn none(origin: &'a str) -> Self {
        Positions {
            origin,
            text: "",
            gpu: Vec::new(),
            cc: Vec::new(),
        }
    }

    fn entry(&self, table: &str, index: usize) -> Option<&EntrySpans> {
        match table {
            "gpu" => self.gpu.get(index),
            _ => self.cc.get(index),
        }
    }

    fn offset(&self, offset: usize) -> String {
        text_place(self.origin, self.text, offset)
    }

    /// "FILE:LINE:COL" of entry `index` of `table`, or of its `key` when the entry
    /// writes it; "FILE" for an entry not in the text.
    fn at(&self, table: &str, index: usize, key: Option<&str>) -> String {
        let Some(e) = self.entry(table, index) else {
            return self.origin.to_string();
        };
        let span = key.and_then(|k| e.key(k)).unwrap_or(e.header.clone());
        self.offset(span.start)
    }

    /// Where a deserialization error of entry `index` is: the key whose value (or an
    /// element of it) is wrong, as for a failed check; else toml's own span (an
    /// unknown key, the header for a missing field).
    fn of_error(&self, table: &str, index: usize, e: &toml::de::Error) -> String {
        let (Some(entry), Some(span)) = (self.entry(table, index), e.span()) else {
            return self.at(table, index, None);
        };
        let inside = |v: &Range<usize>| v.start <= span.start && span.end <= v.end;
        match entry.fields.iter().find(|(_, _, v)| inside(v)) {
            Some((_, k, _)) => self.offset(k.start),
            None => self.offset(span.start),
        }
    }

    /// Where the `n`th of a GPU's names is written (0 the name, then the aliases);
    /// None when entry `index` does not write it.
    fn name(&self, index: usize, n: usize) -> Option<String> {
        let e = self.gpu.get(index)?;
        let span = match n {
            0 => e.key("name")?,
            _ => e.aliases.get(n - 1)?.clone(),
        };
        Some(self.offset(span.start))
    }
}

/// A validation failure of one entry: the message and, when it is about one field,
/// the field's key.
struct Invalid {
    /// The key as written: `name`, or a dotted `measured.dram_copy_gbs`.
    key: Option<String>,
    message: String,
}

fn invalid(key: &str, message: impl Into<String>) -> Invalid {
    Invalid {
        key: Some(key.to_string()),
        message: message.into(),
    }
}

/// Parse catalog TOML text (syntax only), keeping every value's byte range. The
/// toml crate's message carries the line and column; it is folded into one line.
fn parse_doc<'t>(text: &'t str, origin: &str) -> Result<DeTable<'t>> {
    DeTable::parse(text).map(Spanned::into_inner).map_err(|e| {
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
fn parse_table(mut doc: DeTable, pos: &Positions) -> Result<(Vec<Gpu>, Vec<ComputeCapability>)> {
    let gpu_values = take_array(&mut doc, "gpu", pos)?;
    let cc_values = take_array(&mut doc, "cc", pos)?;
    if let Some(k) = doc.keys().next() {
        return Err(Error::file(
            pos.offset(k.span().start),
            format!(
                "unknown top-level key '{}' (a catalog file holds [[gpu]] and [[cc]] tables)",
                k.get_ref()
            ),
        ));
    }
    let mut gpus = Vec::with_capacity(gpu_values.len());
    for (i, v) in gpu_values.into_iter().enumerate() {
        let label = entry_label("gpu", i, &v, "name");
        let gpu = Gpu::deserialize(ValueDeserializer::from(v)).map_err(|e| {
            Error::file(
                pos.of_error("gpu", i, &e),
                format!("{label}: {}", one_line(e.message())),
            )
        })?;
        validate_gpu(&gpu).map_err(|bad| {
            Error::file(
                pos.at("gpu", i, bad.key.as_deref()),
                format!("{label}: {}", bad.message),
            )
        })?;
        gpus.push(gpu);
    }
    let mut ccs = Vec::with_capacity(cc_values.len());
    for (i, v) in cc_values.into_iter().enumerate() {
        let label = entry_label("cc", i, &v, "cc");
        let cc = ComputeCapability::deserialize(ValueDeserializer::from(v)).map_err(|e| {
            Error::file(
                pos.of_error("cc", i, &e),
                format!("{label}: {}", one_line(e.message())),
            )
        })?;
        validate_cc(&cc).map_err(|bad| {
            Error::file(
                pos.at("cc", i, bad.key.as_deref()),
                format!("{label}: {}", bad.message),
            )
        })?;
        if let Some(j) = ccs
            .iter()
            .position(|c: &ComputeCapability| cc_key(&c.cc) == cc_key(&cc.cc))
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
    check_duplicates(&gpus, pos.origin, |i, _, n| pos.name(i, n))?;
    Ok((gpus, ccs))
}

fn take_array<'t>(
    doc: &mut DeTable<'t>,
    key: &str,
    pos: &Positions,
) -> Result<Vec<Spanned<DeValue<'t>>>> {
    let Some((k, v)) = doc.remove_entry(key) else {
        return Ok(Vec::new());
    };
    match v.into_inner() {
        DeValue::Array(a) => Ok(a.into_iter().collect()),
        _ => Err(Error::file(
            pos.offset(k.span().start),
            format!("'{key}' must be an array of tables ([[{key}]])"),
        )),
    }
}

/// "[[gpu]] #N 'NAME'" (or without the name when `name_key` holds no string).
fn entry_label(table: &str, i: usize, entry: &Spanned<DeValue>, name_key: &str) -> String {
    let name = match entry.get_ref() {
        DeValue::Table(t) => t.get(name_key).map(Spanned::get_ref),
        _ => None,
    };
    match name {
        Some(DeValue::String(n)) => format!("[[{table}]] #{} '{n}'", i + 1),
        _ => format!("[[{table}]] #{}", i + 1),
    }
}

fn validate_gpu(g: &Gpu) -> std::result::Result<(), Invalid> {
    if g.name.trim().is_empty() {
        return Err(invalid("name", "name is empty"));
    }
    // Names are matched ignoring what is not an ASCII letter or digit: a name with
    // a look-alike letter would read as another GPU's (see `super::glyphs`).
    let names = std::iter::once(("name", &g.name)).chain(g.aliases.iter().map(|a| ("aliases", a)));
    for (key, n) in names {
        if let Some(c) = n.chars().find(|&c| !super::glyphs::is_name_char(c)) {
            let looks = super::glyphs::as_it_looks(n);
            return Err(invalid(
                key,
                format!(
                    "{} '{n}' holds {}: GPU names are written in ASCII letters, digits and punctuation (write '{}')",
                    if key == "name" { "name" } else { "alias" },
                    super::glyphs::describe(c),
                    looks.trim()
                ),
            ));
        }
    }
    if cc_key(&g.compute_capability).is_none() {
        return Err(invalid(
            "compute_capability",
            format!(
                "compute_capability '{}' is not of the form MAJOR.MINOR (e.g. \"8.9\") or an AMD LLVM target (e.g. \"gfx90a\")",
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
    if g.llc_bytes == Some(0) {
        return Err(invalid("llc_bytes", "llc_bytes must be positive"));
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
    check_ranges(g)?;
    check_sustained(g)?;
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

/// Physical ranges of a catalog's figures: wide enough for any GPU built or
/// announced (a Jetson's 112 GB/s to a rack's HBM, a Kepler's 700 MHz to a
/// Blackwell's FP4 tensor rate), narrow enough that a unit slip (GB/s written as
/// B/s, MHz as Hz) or an exponent typo (1e308, 1e-300) is caught before it becomes a
/// roofline. (key, value, lowest, highest, unit).
fn ranges(g: &Gpu) -> Vec<(&'static str, Option<f64>, f64, f64, &'static str)> {
    const BW: (f64, f64) = (1.0, 1e5);
    const CORE: (f64, f64) = (1.0, 1e7);
    const TENSOR: (f64, f64) = (1.0, 1e8);
    let f = |k, v, (lo, hi): (f64, f64), unit| (k, v, lo, hi, unit);
    vec![
        f(
            "sm_count",
            Some(f64::from(g.sm_count)),
            (1.0, 1024.0),
            "SMs",
        ),
        f(
            "boost_clock_mhz",
            Some(g.boost_clock_mhz),
            (100.0, 5000.0),
            "MHz",
        ),
        f(
            "l2_bytes",
            Some(g.l2_bytes as f64),
            (1024.0, 1024.0 * 1024.0 * 1024.0),
            "bytes",
        ),
        f("mem_bandwidth_gbs", Some(g.mem_bandwidth_gbs), BW, "GB/s"),
        f(
            "sustained_bandwidth_gbs",
            g.sustained_bandwidth_gbs,
            BW,
            "GB/s",
        ),
        f("l2_bandwidth_gbs", g.l2_bandwidth_gbs, (1.0, 1e6), "GB/s"),
        f("fp32_gflops", Some(g.fp32_gflops), CORE, "GFLOP/s"),
        f(
            "sustained_fp32_gflops",
            g.sustained_fp32_gflops,
            CORE,
            "GFLOP/s",
        ),
        f("fp64_gflops", g.fp64_gflops, CORE, "GFLOP/s"),
        f("fp16_gflops", g.fp16_gflops, CORE, "GFLOP/s"),
        f(
            "tensor_fp64_gflops",
            g.tensor_fp64_gflops,
            TENSOR,
            "GFLOP/s",
        ),
        f(
            "tensor_tf32_gflops",
            g.tensor_tf32_gflops,
            TENSOR,
            "GFLOP/s",
        ),
        f(
            "tensor_fp16_gflops",
            g.tensor_fp16_gflops,
            TENSOR,
            "GFLOP/s",
        ),
        f(
            "tensor_bf16_gflops",
            g.tensor_bf16_gflops,
            TENSOR,
            "GFLOP/s",
        ),
        f("tensor_fp8_gflops", g.tensor_fp8_gflops, TENSOR, "GFLOP/s"),
        f("tensor_fp4_gflops", g.tensor_fp4_gflops, TENSOR, "GFLOP/s"),
        f("tensor_int8_gops", g.tensor_int8_gops, TENSOR, "GOP/s"),
        f("mem_gb", g.mem_gb, (0.1, 1e5), "GB"),
        f("tdp_w", g.tdp_w, (1.0, 1e5), "W"),
        f("launch_overhead_us", g.launch_overhead_us, (0.1, 1e4), "us"),
    ]
}

/// A figure as a message shows it: 1e308 rather than its 309 digits.
fn shown(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-4..1e15).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// Every figure within its physical range ([`ranges`]).
fn check_ranges(g: &Gpu) -> std::result::Result<(), Invalid> {
    for (k, v, lo, hi, unit) in ranges(g) {
        let Some(v) = v else { continue };
        if !(lo..=hi).contains(&v) {
            return Err(invalid(
                k,
                format!(
                    "{k} {} is outside {}..{} {unit}",
                    shown(v),
                    shown(lo),
                    shown(hi)
                ),
            ));
        }
    }
    for (k, v) in &g.measured {
        if !(v.is_finite() && *v > 0.0 && *v <= 1e8) {
            return Err(Invalid {
                key: Some(format!("measured.{k}")),
                message: format!("measured.{k} {} is outside 0..1e8", shown(*v)),
            });
        }
    }
    Ok(())
}

/// No measured (sustained) figure above its peak: that is a typo or a broken
/// benchmark (the same 5 % slack as the validation of runs). Sustained DRAM
/// bandwidth and the measured copy, triad, read and write bandwidths against
/// `mem_bandwidth_gbs`; sustained FP32 against `fp32_gflops`; a measured
/// `sustained_<precision>_gflops` against that precision's peak; a measured SM
/// clock against `boost_clock_mhz`.
fn check_sustained(g: &Gpu) -> std::result::Result<(), Invalid> {
    const SLACK: f64 = super::MEASURED_ABOVE_PEAK_SLACK;
    // (`peak` names the peak, e.g. "the peak mem_bandwidth_gbs")
    let above = |key: &str, v: f64, peak: &str, value: f64| {
        (v > SLACK * value).then(|| {
            format!(
                "{key} {} is above {peak} {}: no measurement exceeds the peak",
                shown(v),
                shown(value)
            )
        })
    };
    let own = [
        (
            "sustained_bandwidth_gbs",
            g.sustained_bandwidth_gbs,
            "the peak mem_bandwidth_gbs",
            g.mem_bandwidth_gbs,
        ),
        (
            "sustained_fp32_gflops",
            g.sustained_fp32_gflops,
            "the peak fp32_gflops",
            g.fp32_gflops,
        ),
    ];
    for (key, v, peak_key, peak) in own {
        if let Some(m) = v.and_then(|v| above(key, v, peak_key, peak)) {
            return Err(invalid(key, m));
        }
    }
    for (key, &v) in &g.measured {
        let name = format!("measured.{key}");
        let bandwidth = ["copy", "triad", "read", "write"]
            .iter()
            .any(|p| *key == format!("{p}_bandwidth_gbs"));
        let m = if bandwidth {
            above(&name, v, "the peak mem_bandwidth_gbs", g.mem_bandwidth_gbs)
        } else if key == "sm_clock_mhz" {
            above(&name, v, "the boost_clock_mhz", g.boost_clock_mhz)
        } else if let Some(p) = key
            .strip_prefix("sustained_")
            .and_then(|k| k.strip_suffix("_gflops"))
        {
            let class = super::PrecisionClass::from_label(p);
            above(&name, v, &format!("the {p} peak"), g.peak_gflops_for(class))
        } else {
            None
        };
        if let Some(message) = m {
            return Err(Invalid { key: None, message });
        }
    }
    Ok(())
}

fn validate_cc(c: &ComputeCapability) -> std::result::Result<(), Invalid> {
    if cc_key(&c.cc).is_none() {
        return Err(invalid(
            "cc",
            format!(
                "cc '{}' is not of the form MAJOR.MINOR or an AMD LLVM target (gfx...)",
                c.cc
            ),
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
        ("int32_lanes_per_sm", c.int32_lanes_per_sm.unwrap_or(1)),
    ];
    for (k, v) in ints {
        if v == 0 {
            return Err(invalid(k, format!("{k} must be positive")));
        }
    }
    if c.int32_shares_fp32_lanes && c.int32_lanes_per_sm.is_none() {
        return Err(invalid(
            "int32_shares_fp32_lanes",
            "int32_shares_fp32_lanes needs int32_lanes_per_sm",
        ));
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

/// The `n`th of a GPU's names: 0 its name, then its aliases.
fn nth_name(g: &Gpu, n: usize) -> &str {
    match n {
        0 => &g.name,
        _ => &g.aliases[n - 1],
    }
}

/// No name or alias may name two GPUs, compared as names resolve
/// ([`super::normalize_name`]: case, punctuation and a leading NVIDIA, GeForce or
/// Tesla aside): an alias "RTX 4090" on a GPU of the user's would otherwise take
/// the name from the GeForce RTX 4090. `at(i, g, n)` places the
/// `n`th name of GPU `i` (see [`nth_name`]) when a file writes it. A clash is
/// reported where the later GPU writes the name, else where the earlier one does (a
/// file's GPU laid over a known one may clash with a known GPU after it).
fn check_duplicates(
    gpus: &[Gpu],
    origin: &str,
    at: impl Fn(usize, &Gpu, usize) -> Option<String>,
) -> Result<()> {
    let clash = |g: &Gpu, n: usize, other: &Gpu| {
        format!(
            "name or alias '{}' of GPU '{}' is already used by GPU '{}'",
            nth_name(g, n),
            g.name,
            other.name
        )
    };
    // spelling as names resolve -> (GPU, which of its names)
    let mut seen: std::collections::HashMap<String, (usize, usize)> =
        std::collections::HashMap::new();
    for (i, g) in gpus.iter().enumerate() {
        let mut own = std::collections::HashSet::new();
        for n in 0..=g.aliases.len() {
            let spelled = nth_name(g, n).trim();
            let key = match super::normalize_name(spelled) {
                k if k.is_empty() => spelled.to_lowercase(),
                k => k,
            };
            if !own.insert(key.clone()) {
                continue; // the same GPU naming itself twice is harmless
            }
            if let Some(&(j, m)) = seen.get(&key) {
                let other = &gpus[j];
                let (place, message) = match (at(i, g, n), at(j, other, m)) {
                    (Some(p), _) => (p, clash(g, n, other)),
                    (None, Some(p)) => (p, clash(other, m, g)),
                    (None, None) => (origin.to_string(), clash(g, n, other)),
                };
                return Err(Error::file(place, message));
            }
            seen.insert(key, (i, n));
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
        let key = cc_key(&g.compute_capability);
        if let Some(c) = ccs.iter().find(|c| cc_key(&c.cc) == key) {
            check_arch(g, c, ccs, pos, &entry_of)?;
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
                 (known: {}); add a [[cc]] entry with its limits (cuda_occupancy.h; LLVM AMDGPU for gfx targets)",
                g.name,
                g.compute_capability,
                known.join(", ")
            ),
        ));
    }
    Ok(())
}

/// A GPU's `arch` that names an architecture of the compute capability table must
/// be its compute capability's ("Hopper" with "8.6" is one typo or the other, and
/// the limits come from the compute capability). An arch the table does not name
/// (a vendor's marketing name) is not checked.
fn check_arch(
    g: &Gpu,
    cc: &ComputeCapability,
    ccs: &[ComputeCapability],
    pos: &Positions,
    entry_of: &impl Fn(&Gpu) -> Option<usize>,
) -> Result<()> {
    let Some(own) = cc.arch.as_deref() else {
        return Ok(());
    };
    let arch = g.arch.trim();
    let named = |c: &ComputeCapability| {
        c.arch
            .as_deref()
            .is_some_and(|a| a.eq_ignore_ascii_case(arch))
    };
    if own.eq_ignore_ascii_case(arch) || !ccs.iter().any(named) {
        return Ok(());
    }
    let mut of_arch: Vec<&ComputeCapability> = ccs.iter().filter(|c| named(c)).collect();
    of_arch.sort_by_key(|c| c.major_minor());
    let of_arch: Vec<&str> = of_arch.iter().map(|c| c.cc.as_str()).collect();
    let at = match entry_of(g) {
        Some(i) => pos.at("gpu", i, Some("compute_capability")),
        None => pos.origin.to_string(),
    };
    Err(Error::file(
        at,
        format!(
            "GPU '{}': compute capability {} is {own}, not its arch '{}' (compute capability {})",
            g.name,
            g.compute_capability,
            g.arch,
            of_arch.join(", ")
        ),
    ))
}

fn builtin_ccs() -> Vec<ComputeCapability> {
    let doc = parse_doc(BUILTIN_CCS, BUILTIN_CCS_ORIGIN)
        .unwrap_or_else(|e| panic!("built-in compute capability table is broken: {e}"));
    let pos = Positions::new(BUILTIN_CCS, BUILTIN_CCS_ORIGIN, &doc);
    parse_table(doc, &pos)
        .unwrap_or_else(|e| panic!("built-in compute capability table is broken: {e}"))
        .1
}

/// The `[[cc]]` entries of `extra` laid over `base` (same compute capability
/// replaced, others added).
fn merge_ccs(base: &mut Vec<ComputeCapability>, extra: Vec<ComputeCapability>) {
    for c in extra {
        let key = cc_key(&c.cc);
        match base.iter().position(|e| cc_key(&e.cc) == key) {
            Some(i) => base[i] = c,
            None => base.push(c),
        }
    }
}

impl Catalog {
    /// The catalog shipped with gpucast. Panics only if the shipped data files
    /// are broken, which a unit test rules out.
    pub fn builtin() -> Catalog {
        let mut c = Catalog::from_toml_str(BUILTIN_GPUS, BUILTIN_GPUS_ORIGIN)
            .unwrap_or_else(|e| panic!("built-in GPU catalog is broken: {e}"));
        c.merge_text(BUILTIN_MEASURED, BUILTIN_MEASURED_ORIGIN)
            .unwrap_or_else(|e| panic!("built-in measured figures are broken: {e}"));
        c
    }

    /// A catalog from one TOML text holding `[[gpu]]` and/or `[[cc]]` tables, with
    /// the built-in compute capability table under the text's `[[cc]]` entries.
    /// `origin` names the file in error messages. Every GPU's compute capability
    /// must be in that table.
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Catalog> {
        let doc = parse_doc(text, origin)?;
        let pos = Positions::new(text, origin, &doc);
        let (gpus, own_ccs) = parse_table(doc, &pos)?;
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
    pub fn merge_file(&mut self, path: &Path) -> Result<Vec<String>> {
        let origin = path.display().to_string();
        let text = crate::files::read_to_string(path)
            .map_err(|e| Error::file(&origin, format!("cannot read: {e}")))?;
        self.merge_text(&text, &origin)
    }

    /// [`Catalog::merge_file`] on a text; `origin` names it in error messages.
    /// Returns a note for each GPU it replaces (see [`Catalog::merge`]).
    fn merge_text(&mut self, text: &str, origin: &str) -> Result<Vec<String>> {
        if text.trim().is_empty() {
            return Err(Error::file(
                origin,
                "empty file: no [[gpu]] or [[cc]] entries",
            ));
        }
        let doc = parse_doc(text, origin)?;
        let pos = Positions::new(text, origin, &doc);
        self.check_entry_names(&doc, &pos)?;
        let known = self.known_entries(&doc, origin)?;
        // Rebound after `known`, whose texts the laid-over values borrow.
        let mut doc = doc;
        overlay_known(&mut doc, &known, origin)?;
        let (gpus, ccs) = parse_table(doc, &pos)?;
        let mut all_ccs = self.ccs.clone();
        merge_ccs(&mut all_ccs, ccs.clone());
        check_ccs_known(&gpus, &all_ccs, &pos, |g| {
            gpus.iter().position(|x| x.name == g.name)
        })?;
        let names: Vec<String> = gpus.iter().map(|g| g.name.clone()).collect();
        let entry = |g: &Gpu| names.iter().position(|x| *x == g.name);
        self.merge_placed(
            Catalog::new(gpus, ccs),
            origin,
            |_, g, n| pos.name(entry(g)?, n),
            |g, key| Some(pos.at("gpu", entry(g)?, Some(key))),
        )
    }

    /// Every name and alias a file's `[[gpu]]` entries write is in the alphabet of
    /// GPU names ([`super::glyphs`]); a name with a look-alike letter is an error
    /// naming the character and the GPU it looks like (it would otherwise be taken
    /// for that GPU's name wherever names are matched).
    fn check_entry_names(&self, doc: &DeTable, pos: &Positions) -> Result<()> {
        let Some(DeValue::Array(entries)) = doc.get("gpu").map(Spanned::get_ref) else {
            return Ok(());
        };
        for (i, entry) in entries.iter().enumerate() {
            let DeValue::Table(t) = entry.get_ref() else {
                continue;
            };
            let text = |v: Option<&Spanned<DeValue>>| match v.map(Spanned::get_ref) {
                Some(DeValue::String(s)) => Some(s.to_string()),
                _ => None,
            };
            let mut names = vec![text(t.get("name"))];
            if let Some(DeValue::Array(a)) = t.get("aliases").map(Spanned::get_ref) {
                names.extend(a.iter().map(|v| text(Some(v))));
            }
            for (n, name) in names.iter().enumerate() {
                let Some(name) = name else { continue };
                let Some(c) = name.chars().find(|&c| !super::glyphs::is_name_char(c)) else {
                    continue;
                };
                let what = if n == 0 { "name" } else { "alias" };
                return Err(Error::file(
                    pos.name(i, n).unwrap_or_else(|| pos.at("gpu", i, None)),
                    format!(
                        "[[gpu]] #{}: {what} '{name}': {}",
                        i + 1,
                        self.foreign_hint(name, c)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// For each `[[gpu]]` entry of `doc` that names a known GPU: its index and that
    /// GPU as TOML text (what [`overlay_known`] lays under the entry).
    fn known_entries(&self, doc: &DeTable, origin: &str) -> Result<Vec<(usize, String)>> {
        let Some(DeValue::Array(entries)) = doc.get("gpu").map(Spanned::get_ref) else {
            return Ok(Vec::new());
        };
        let mut known = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            let DeValue::Table(t) = entry.get_ref() else {
                continue;
            };
            let Some(DeValue::String(name)) = t.get("name").map(Spanned::get_ref) else {
                continue;
            };
            if let Some(g) = self.resolve_exact(name) {
                let text = toml::to_string(g)
                    .map_err(|e| Error::file(origin, format!("internal: {e}")))?;
                known.push((i, text));
            }
        }
        Ok(known)
    }

    /// Merges another catalog (see [`Catalog::merge_file`]).
    /// On error `self` is left unchanged.
    /// A GPU that replaces one must be of its vendor and architecture (a known
    /// NVIDIA GPU with vendor "AMD" is a mistake, not a new figure); each replacement
    /// is returned as a note naming the GPU and the fields that change.
    /// On error `self` is left unchanged.
    pub fn merge(&mut self, other: Catalog, origin: &str) -> Result<Vec<String>> {
        self.merge_placed(other, origin, |_, _, _| None, |_, _| None)
    }

    /// A GPU added by a merge may not take a spelling that already means something
    /// here: a name or alias that resolves to a GPU of this catalog, matches several
    /// ("A100"), or is brand words only ("RTX") would make that spelling pick the new
    /// GPU where it names another or none.
    /// The first such spelling of `g` (which of its names, [`nth_name`]) and why.
    fn taken_name(&self, g: &Gpu) -> Option<(usize, String)> {
        use crate::error::GpuHint;
        (0..=g.aliases.len()).find_map(|i| {
            let n = nth_name(g, i);
            let why = match self.resolve(n) {
                Some(other) => format!("it names GPU '{}'", other.name),
                None => match self.unresolved_hint(n) {
                    GpuHint::NotInCatalog { .. } => return None,
                    hint => format!("it is {hint}"),
                },
            };
            Some((
                i,
                format!(
                    "name or alias '{n}' of GPU '{}' already means something ({why}): give the GPU names of its own",
                    g.name
                ),
            ))
        })
    }

    /// [`Catalog::merge`], a name clash placed by `at` (see [`check_duplicates`]).
    fn merge_placed(
        &mut self,
        other: Catalog,
        origin: &str,
        at: impl Fn(usize, &Gpu, usize) -> Option<String>,
        at_key: impl Fn(&Gpu, &str) -> Option<String>,
    ) -> Result<Vec<String>> {
        let mut merged = self.clone();
        let mut notes = Vec::new();
        for g in other.gpus {
            let key = g.name.trim().to_lowercase();
            let pos = merged.gpus.iter().position(|e| {
                e.name.trim().to_lowercase() == key
                    || e.aliases.iter().any(|a| a.trim().to_lowercase() == key)
            });
            match pos {
                Some(i) => {
                    let old = &merged.gpus[i];
                    if let Some((field, message)) = replacement_clash(old, &g) {
                        let place = at_key(&g, field).unwrap_or_else(|| origin.to_string());
                        return Err(Error::file(place, message));
                    }
                    if let Some(note) = replacement_note(old, &g, origin) {
                        notes.push(note);
                    }
                    merged.gpus[i] = g
                }
                None => {
                    if let Some((n, message)) = self.taken_name(&g) {
                        let place = at(merged.gpus.len(), &g, n);
                        return Err(Error::file(place.as_deref().unwrap_or(origin), message));
                    }
                    merged.gpus.push(g)
                }
            }
        }
        merge_ccs(&mut merged.ccs, other.ccs);
        check_duplicates(&merged.gpus, origin, at)?;
        let pos = Positions::none(origin);
        check_ccs_known(&merged.gpus, &merged.ccs, &pos, |_| None)?;
        *self = Catalog::new(merged.gpus, merged.ccs);
        Ok(notes)
    }
}

/// Why `new` may not replace `old` (same name): the field (`vendor` or `arch`) and
/// the message. A GPU is one vendor's, of one architecture; a file that says
/// otherwise for a known name has the wrong name or the wrong figures.
fn replacement_clash(old: &Gpu, new: &Gpu) -> Option<(&'static str, String)> {
    let same = |a: &str, b: &str| a.trim().eq_ignore_ascii_case(b.trim());
    let (field, was, is) = if !same(&old.vendor, &new.vendor) {
        ("vendor", &old.vendor, &new.vendor)
    } else if !same(&old.arch, &new.arch) {
        ("arch", &old.arch, &new.arch)
    } else {
        return None;
    };
    Some((
        field,
        format!(
            "GPU '{}' is known (vendor \"{}\", arch \"{}\"); an entry replacing it must keep its {field} \"{was}\", not \"{is}\": give a different GPU a name of its own",
            new.name, old.vendor, old.arch
        ),
    ))
}

/// "note: FILE replaces the figures of GPU 'X': a, b" for the fields `new` changes
/// (None when it changes none).
fn replacement_note(old: &Gpu, new: &Gpu, origin: &str) -> Option<String> {
    let (Ok(serde_json::Value::Object(a)), Ok(serde_json::Value::Object(b))) =
        (serde_json::to_value(old), serde_json::to_value(new))
    else {
        return None;
    };
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    let changed: Vec<&str> = keys
        .into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(String::as_str)
        .collect();
    if changed.is_empty() {
        return None;
    }
    Some(format!(
        "{origin} replaces the entry of GPU '{}' ({})",
        old.name,
        changed.join(", ")
    ))
}

/// Completes each entry of `known` (see [`Catalog::known_entries`]) with the known
/// GPU's fields; the entry's own fields win, and its name becomes the known GPU's
/// canonical name. The laid-over fields take the entry header's range: they are
/// valid, so no error points at them, and a position never leaves the file.
fn overlay_known<'t>(
    doc: &mut DeTable<'t>,
    known: &'t [(usize, String)],
    origin: &str,
) -> Result<()> {
    let Some(DeValue::Array(entries)) = doc.get_mut("gpu").map(Spanned::get_mut) else {
        return Ok(());
    };
    for (i, text) in known {
        let (Some(entry), Ok(base)) = (entries.get_mut(*i), DeTable::parse(text)) else {
            return Err(Error::file(
                origin,
                "internal: a known GPU does not read back",
            ));
        };
        let header = entry.span();
        let DeValue::Table(table) = entry.get_mut() else {
            continue;
        };
        let mut name = None;
        for (k, v) in base.into_inner() {
            if k.get_ref() == "name" {
                name = Some(v.into_inner());
            } else if !table.contains_key(k.get_ref().as_ref()) {
                table.insert(
                    Spanned::new(header.clone(), k.into_inner()),
                    Spanned::new(header.clone(), v.into_inner()),
                );
            }
        }
        if let (Some(name), Some(v)) = (name, table.get_mut("name")) {
            *v = Spanned::new(v.span(), name);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
