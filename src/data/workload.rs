//! Workload descriptions: what a tuned kernel computes, as formulas of its tuning
//! parameters (`datasets/workloads/<kernel>.toml`).
//!
//! A Kernel Tuner cache records times per configuration but not the work done; a
//! workload file supplies it: the problem size (`[constants]`), FLOPs, a DRAM-byte
//! model and the launch geometry (`[formulas]`, evaluated with the tuning parameters
//! and the constants as variables), and which caches it describes (`[match]`: the
//! cache's `kernel_name`, parameters that must be present or absent, and the problem
//! size when the cache states one).
//!
//! ```toml
//! name = "xgemm"                      # the `kernel` of the imported rows
//! suite = "kernel-tuner"              # optional labels copied to every row
//! category = "matmul_tiled"
//! precision = "fp32"
//! [match]
//! kernel_name = "Xgemm"
//! params = ["MWG", "NWG"]             # optional: must all be tuning parameters
//! absent_params = []                  # optional: must not be tuning parameters
//! problem_size = [4096, 4096]         # optional: compared with the cache's
//! [constants]
//! m = 4096
//! [formulas]                          # flops and dram_bytes are required
//! flops = "2*m*n*k"
//! dram_bytes = "4*(m*k + k*n + m*n)"
//! grid_blocks = "(m/MWG)*(n/NWG)"     # any optional numeric runs column
//! ```

use gpucast_runs::expr;

use super::OPTIONAL_NUMERIC;
use crate::error::{line_col, Error, Result};
use std::collections::BTreeMap;
use std::path::Path;

/// Variables for formula evaluation (name -> value).
pub type Env = expr::Env;

/// The shipped workload files, embedded so that a binary without the source tree
/// still knows them.
const BUILTIN: [(&str, &str); 5] = [
    (
        "datasets/workloads/xgemm.toml",
        include_str!("../../datasets/workloads/xgemm.toml"),
    ),
    (
        "datasets/workloads/convolution.toml",
        include_str!("../../datasets/workloads/convolution.toml"),
    ),
    (
        "datasets/workloads/convolution_milo.toml",
        include_str!("../../datasets/workloads/convolution_milo.toml"),
    ),
    (
        "datasets/workloads/pnpoly.toml",
        include_str!("../../datasets/workloads/pnpoly.toml"),
    ),
    (
        "datasets/workloads/dedispersion_milo.toml",
        include_str!("../../datasets/workloads/dedispersion_milo.toml"),
    ),
];

/// Which caches a workload describes.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Match {
    pub kernel_name: String,
    #[serde(default)]
    pub params: Vec<String>,
    #[serde(default)]
    pub absent_params: Vec<String>,
    #[serde(default, deserialize_with = "de_problem_size")]
    pub problem_size: Option<Vec<f64>>,
}

/// One workload file.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// Kernel name given to the imported rows (shared by them).
    pub name: std::sync::Arc<str>,
    #[serde(default)]
    pub description: Option<String>,
    // (the runs' own labels: shared by every row imported with this workload)
    #[serde(default)]
    pub suite: Option<std::sync::Arc<str>>,
    #[serde(default)]
    pub category: Option<std::sync::Arc<str>>,
    #[serde(default)]
    pub precision: Option<std::sync::Arc<str>>,
    #[serde(rename = "match")]
    pub matcher: Match,
    #[serde(default)]
    pub constants: BTreeMap<String, f64>,
    /// Runs column -> expression.
    pub formulas: BTreeMap<String, String>,
    /// The file it was read from.
    #[serde(skip)]
    pub origin: String,
}

/// Formula results for one configuration: each column's value, or why it failed.
pub type Evaluated = BTreeMap<String, std::result::Result<f64, String>>;

impl Workload {
    /// Parse and check one workload file's text.
    pub fn parse(text: &str, origin: &str) -> Result<Workload> {
        let mut w: Workload = toml::from_str(text).map_err(|e| toml_error(text, origin, &e))?;
        w.origin = origin.to_string();
        let at = |key: &str| -> String {
            let (line, col) = position_of_key(text, key);
            format!("line {line}, column {col}")
        };
        if w.name.trim().is_empty() {
            return Err(Error::file(
                origin,
                format!("{}: 'name' is empty", at("name")),
            ));
        }
        for required in ["flops", "dram_bytes"] {
            if !w.formulas.contains_key(required) {
                return Err(Error::file(
                    origin,
                    format!(
                        "{}: [formulas] lacks '{required}' (flops and dram_bytes are required)",
                        at("formulas")
                    ),
                ));
            }
        }
        for (column, src) in &w.formulas {
            if column != "flops"
                && column != "dram_bytes"
                && !OPTIONAL_NUMERIC.contains(&column.as_str())
            {
                return Err(Error::file(
                    origin,
                    format!(
                        "{}: [formulas] '{column}' is not a numeric runs column (known: flops, dram_bytes, {})",
                        at(column),
                        OPTIONAL_NUMERIC.join(", ")
                    ),
                ));
            }
            expr::variables(src).map_err(|e| {
                Error::file(origin, format!("{}: formula '{column}': {e}", at(column)))
            })?;
        }
        Ok(w)
    }

    /// Read one workload file.
    pub fn load(path: &Path) -> Result<Workload> {
        let text = crate::files::read_to_string(path)
            .map_err(|e| Error::file(path.display(), e.to_string()))?;
        Workload::parse(&text, &path.display().to_string())
    }

    /// Variables the formulas use that are neither constants nor in `params`.
    pub fn unknown_variables(&self, params: &[String]) -> Vec<String> {
        let mut out = Vec::new();
        for src in self.formulas.values() {
            for v in expr::variables(src).unwrap_or_default() {
                if !self.constants.contains_key(&v) && !params.contains(&v) && !out.contains(&v) {
                    out.push(v);
                }
            }
        }
        out
    }

    /// Evaluate every formula with the constants and `params` (parameters win over
    /// constants of the same name).
    pub fn evaluate(&self, params: &Env) -> Evaluated {
        let mut env: Env = self.constants.clone();
        env.extend(params.iter().map(|(k, v)| (k.clone(), *v)));
        self.formulas
            .iter()
            .map(|(column, src)| (column.clone(), expr::eval(src, &env)))
            .collect()
    }

    /// Why this workload does not describe a cache with these facts (None: it does).
    fn mismatch(
        &self,
        kernel_name: &str,
        params: &[String],
        problem_size: Option<&[f64]>,
    ) -> Option<String> {
        let m = &self.matcher;
        if m.kernel_name != kernel_name {
            return Some(format!("kernel_name is '{}'", m.kernel_name));
        }
        if let Some(p) = m.params.iter().find(|p| !params.contains(p)) {
            return Some(format!("needs tuning parameter '{p}'"));
        }
        if let Some(p) = m.absent_params.iter().find(|p| params.contains(p)) {
            return Some(format!("excludes tuning parameter '{p}'"));
        }
        if let (Some(want), Some(have)) = (&m.problem_size, problem_size) {
            if want.as_slice() != have {
                return Some(format!(
                    "is for problem_size {} but the cache states {}",
                    format_size(want),
                    format_size(have)
                ));
            }
        }
        None
    }
}

fn format_size(v: &[f64]) -> String {
    let parts: Vec<String> = v.iter().map(|x| format!("{x}")).collect();
    format!("[{}]", parts.join(", "))
}

/// The workloads known to an import.
#[derive(Debug, Clone, Default)]
pub struct Workloads {
    pub list: Vec<Workload>,
}

/// How a cache was matched to the workloads.
#[derive(Debug, Clone)]
pub enum Matched<'a> {
    /// Exactly one workload describes the cache.
    Found(&'a Workload),
    /// None does; the text says why (for the import report).
    NotFound(String),
}

impl Workloads {
    /// The shipped workload files (datasets/workloads/*.toml).
    pub fn builtin() -> Workloads {
        let list = BUILTIN
            .iter()
            .map(|(origin, text)| {
                Workload::parse(text, origin)
                    .unwrap_or_else(|e| panic!("shipped workload file is invalid: {e}"))
            })
            .collect();
        Workloads { list }
    }

    /// Add a workload; one with the same name replaces the earlier one.
    pub fn add(&mut self, w: Workload) {
        self.list.retain(|x| x.name != w.name);
        self.list.push(w);
    }

    /// Add a workload file, or every `*.toml` in a directory (sorted by name).
    pub fn add_path(&mut self, path: &Path) -> Result<()> {
        if path.is_dir() {
            let mut files: Vec<_> = std::fs::read_dir(path)
                .map_err(|e| Error::file(path.display(), e.to_string()))?
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .collect();
            files.sort();
            for f in files {
                self.add(Workload::load(&f)?);
            }
            Ok(())
        } else {
            self.add(Workload::load(path)?);
            Ok(())
        }
    }

    pub fn get(&self, name: &str) -> Option<&Workload> {
        self.list.iter().find(|w| *w.name == *name)
    }

    /// The workload describing a cache of `kernel_name` with these tuning parameters
    /// and (when stated) problem size. Two matching workloads are an error.
    pub fn find(
        &self,
        kernel_name: &str,
        params: &[String],
        problem_size: Option<&[f64]>,
    ) -> Result<Matched<'_>> {
        let mut found: Vec<&Workload> = Vec::new();
        let mut why: Vec<String> = Vec::new();
        for w in &self.list {
            match w.mismatch(kernel_name, params, problem_size) {
                None => found.push(w),
                Some(reason) if w.matcher.kernel_name == kernel_name => {
                    why.push(format!("{} {reason}", w.origin))
                }
                Some(_) => {}
            }
        }
        match found.as_slice() {
            [one] => Ok(Matched::Found(one)),
            [] if why.is_empty() => Ok(Matched::NotFound(format!(
                "no workload file for kernel_name '{kernel_name}'"
            ))),
            [] => Ok(Matched::NotFound(why.join("; "))),
            many => {
                Err(Error::invalid(
                    format!("kernel_name '{kernel_name}'"),
                    format!(
                    "matches several workload files ({}): make their [match] sections exclusive",
                    many.iter().map(|w| w.origin.as_str()).collect::<Vec<_>>().join(", ")
                ),
                ))
            }
        }
    }
}

/// `problem_size` as a list of numbers; a bare number is a one-element list.
fn de_problem_size<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<Vec<f64>>, D::Error> {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Size {
        One(f64),
        Many(Vec<f64>),
    }
    Ok(Some(match Size::deserialize(d)? {
        Size::One(v) => vec![v],
        Size::Many(v) => v,
    }))
}
use serde::Deserialize;

/// A TOML error as one line: file, line, column, message.
fn toml_error(text: &str, origin: &str, e: &toml::de::Error) -> Error {
    let msg = e.message().lines().collect::<Vec<_>>().join(" ");
    match e.span() {
        Some(span) => {
            let (line, col) = line_col(text, span.start);
            Error::file(origin, format!("line {line}, column {col}: {msg}"))
        }
        None => Error::file(origin, msg),
    }
}

/// Where `key` is defined in a TOML text (its first line starting with `key =` or
/// `[key]`); line 1, column 1 when not found.
fn position_of_key(text: &str, key: &str) -> (usize, usize) {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        let rest = t.strip_prefix(key).map(str::trim_start);
        let is_key = rest.is_some_and(|r| r.starts_with('='));
        if is_key || t.starts_with(&format!("[{key}]")) {
            return line_col(text, offset + (line.len() - t.len()));
        }
        offset += line.len();
    }
    (1, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(p: &[(&str, f64)]) -> Env {
        p.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn builtin_workloads_parse_and_name_their_kernels() {
        let w = Workloads::builtin();
        let names: Vec<&str> = w.list.iter().map(|w| &*w.name).collect();
        assert_eq!(
            names,
            [
                "xgemm",
                "convolution",
                "convolution_milo",
                "pnpoly",
                "dedispersion_milo"
            ]
        );
    }

    #[test]
    fn xgemm_formulas_give_the_scripts_flops_and_geometry() {
        let w = Workloads::builtin();
        let x = w.get("xgemm").unwrap();
        let p = env(&[
            ("MWG", 64.0),
            ("NWG", 128.0),
            ("KWG", 32.0),
            ("MDIMC", 16.0),
            ("NDIMC", 8.0),
            ("SA", 1.0),
            ("SB", 0.0),
        ]);
        let r = x.evaluate(&p);
        let n = 4096.0_f64;
        assert_eq!(r["flops"], Ok(2.0 * n * n * n + 2.0 * n * n));
        assert_eq!(r["dram_bytes"], Ok(4.0 * 4.0 * n * n));
        assert_eq!(r["grid_blocks"], Ok(64.0 * 32.0));
        assert_eq!(r["block_threads"], Ok(128.0));
        assert_eq!(r["smem_per_block"], Ok(4.0 * 32.0 * 64.0));
    }

    #[test]
    fn convolution_padding_follows_the_bank_conflict_rule() {
        let w = Workloads::builtin();
        let c = w.get("convolution").unwrap();
        let smem = |bx: f64, tx: f64, pad: f64| {
            let p = env(&[
                ("block_size_x", bx),
                ("block_size_y", 4.0),
                ("tile_size_x", tx),
                ("tile_size_y", 2.0),
                ("use_padding", pad),
            ]);
            c.evaluate(&p)["smem_per_block"].clone().unwrap()
        };
        // 8 rows + 14 halo = 22 rows of (16*2 + 14) = 46 floats without padding.
        assert_eq!(smem(16.0, 2.0, 0.0), 4.0 * 22.0 * 46.0);
        // With padding: 14 + 32 - 16 = 30 columns past the block -> 2 more columns.
        assert_eq!(smem(16.0, 2.0, 1.0), 4.0 * 22.0 * 48.0);
        // block_size_x a multiple of 32: no padding even when asked.
        assert_eq!(smem(32.0, 1.0, 1.0), 4.0 * 22.0 * 46.0);
        // Grid rounds up: 4096 / (48*1) = 85.33 -> 86 columns of blocks.
        let p = env(&[
            ("block_size_x", 48.0),
            ("block_size_y", 1.0),
            ("tile_size_x", 1.0),
            ("tile_size_y", 1.0),
            ("use_padding", 0.0),
        ]);
        assert_eq!(c.evaluate(&p)["grid_blocks"], Ok(86.0 * 4096.0));
    }

    #[test]
    fn matching_uses_kernel_name_params_and_problem_size() {
        let w = Workloads::builtin();
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let old = names(&[
            "block_size_x",
            "block_size_y",
            "tile_size_x",
            "tile_size_y",
            "use_padding",
            "read_only",
        ]);
        let milo = names(&[
            "block_size_x",
            "block_size_y",
            "tile_size_x",
            "tile_size_y",
            "use_padding",
            "use_shmem",
        ]);
        let name_of = |m: Matched| match m {
            Matched::Found(w) => w.name.to_string(),
            Matched::NotFound(why) => format!("none: {why}"),
        };
        assert_eq!(
            name_of(w.find("convolution_kernel", &old, None).unwrap()),
            "convolution"
        );
        assert_eq!(
            name_of(
                w.find("convolution_kernel", &milo, Some(&[4096.0, 4096.0]))
                    .unwrap()
            ),
            "convolution_milo"
        );
        let other = name_of(
            w.find("convolution_kernel", &old, Some(&[2048.0, 2048.0]))
                .unwrap(),
        );
        assert!(
            other.contains("problem_size [4096, 4096] but the cache states [2048, 2048]"),
            "{other}"
        );
        let unknown = name_of(w.find("my_kernel", &old, None).unwrap());
        assert_eq!(
            unknown,
            "none: no workload file for kernel_name 'my_kernel'"
        );
    }

    #[test]
    fn bad_workload_files_name_line_and_column() {
        let e = Workload::parse("name = \"x\"\n[match]\nkernel_name = 3\n", "w.toml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("w.toml: line 3, column 15:"), "{e}");
        let text = "name = \"x\"\n[match]\nkernel_name = \"k\"\n[formulas]\nflops = \"1\"\n";
        let e = Workload::parse(text, "w.toml").unwrap_err().to_string();
        assert_eq!(e, "w.toml: line 4, column 1: [formulas] lacks 'dram_bytes' (flops and dram_bytes are required)");
        let text = "name = \"x\"\n[match]\nkernel_name = \"k\"\n[formulas]\nflops = \"1\"\ndram_bytes = \"2\"\n  speed = \"3\"\n";
        let e = Workload::parse(text, "w.toml").unwrap_err().to_string();
        assert!(
            e.starts_with(
                "w.toml: line 7, column 3: [formulas] 'speed' is not a numeric runs column"
            ),
            "{e}"
        );
        let text = "name = \"x\"\n[match]\nkernel_name = \"k\"\n[formulas]\nflops = \"1 +\"\ndram_bytes = \"2 $\"\n";
        let e = Workload::parse(text, "w.toml").unwrap_err().to_string();
        assert_eq!(
            e,
            "w.toml: line 6, column 1: formula 'dram_bytes': unexpected character '$'"
        );
    }

    #[test]
    fn unknown_variables_are_listed() {
        let w = Workloads::builtin();
        let x = w.get("xgemm").unwrap();
        let params: Vec<String> = ["MWG", "NWG", "KWG", "MDIMC", "NDIMC", "SA"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(x.unknown_variables(&params), vec!["SB".to_string()]);
    }
}
