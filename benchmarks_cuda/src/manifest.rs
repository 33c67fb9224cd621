//! The suite manifest (`suite.toml`): kernels, launch geometry, size grids and
//! FLOP / byte formulas, resolved into concrete configurations (`Instance`).
use crate::expr::{self, Env};
use anyhow::{anyhow, bail, Context, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

include!(concat!(env!("OUT_DIR"), "/embedded_kernels.rs"));

/// The manifest compiled into the binary.
pub const EMBEDDED_MANIFEST: &str = include_str!("../suite.toml");

#[cfg(test)]
/// The 16 kernel names of the reference study (shared/specs/reference-kernels.md).
pub const REFERENCE_16: [&str; 16] = [
    "vector_add",
    "saxpy",
    "strided_copy_8",
    "random_access",
    "vector_add_divergent",
    "naive_transpose",
    "shared_transpose",
    "matmul_naive",
    "matmul_tiled",
    "conv2d_3x3",
    "conv2d_7x7",
    "reduce_sum",
    "dot_product",
    "histogram",
    "atomic_hotspot",
    "shared_bank_conflict",
];

/// A number or an expression over the size variables.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum NumOrExpr {
    Num(f64),
    Expr(String),
}

impl NumOrExpr {
    pub fn eval(&self, env: &Env) -> Result<f64, String> {
        match self {
            NumOrExpr::Num(v) => Ok(*v),
            NumOrExpr::Expr(s) => expr::eval(s, env),
        }
    }
}

impl Default for NumOrExpr {
    fn default() -> Self {
        NumOrExpr::Num(0.0)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElemType {
    F32,
    F64,
    I32,
    U32,
    /// IEEE half, stored as its 16 bits.
    F16,
    /// bfloat16, stored as its 16 bits.
    Bf16,
}

impl ElemType {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            ElemType::F64 => 8,
            ElemType::F16 | ElemType::Bf16 => 2,
            _ => 4,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgDef {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: ElemType,
    /// Element count: present for buffers (a pointer argument).
    pub len: Option<NumOrExpr>,
    /// Buffer initialisation: zero, ones, random, unit, small, iota, permutation,
    /// bits, rowptr:K, randidx:M, const:V.
    pub init: Option<String>,
    /// Scalar value (a by-value argument).
    pub value: Option<NumOrExpr>,
    /// Compared against the CPU reference during verification.
    #[serde(default)]
    pub output: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelDef {
    pub name: String,
    pub suite: String,
    pub category: String,
    pub source: String,
    pub entry: String,
    #[serde(default = "fp32")]
    pub precision: String,
    #[serde(default)]
    pub description: String,
    /// Size parameters and their values (cartesian product).
    #[serde(default)]
    pub sizes: BTreeMap<String, Vec<f64>>,
    /// Variables computed from the sizes (e.g. rows = "H").
    #[serde(default)]
    pub derived: BTreeMap<String, String>,
    /// One small size for verification against the CPU reference.
    #[serde(default)]
    pub verify: BTreeMap<String, f64>,
    pub block: Vec<NumOrExpr>,
    pub grid: Vec<NumOrExpr>,
    /// Dynamic shared memory per block, bytes.
    #[serde(default)]
    pub smem: NumOrExpr,
    pub flops: NumOrExpr,
    /// The study's DRAM byte accounting (reference-16) or our estimate.
    pub dram_bytes: NumOrExpr,
    /// Our own estimate of the real DRAM traffic (defaults to dram_bytes).
    pub dram_bytes_model: Option<NumOrExpr>,
    pub working_set: NumOrExpr,
    pub args: Vec<ArgDef>,
    #[serde(default)]
    pub note: String,
}

fn fp32() -> String {
    "fp32".into()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteFile {
    kernel: Vec<KernelDef>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Init {
    Zero,
    Ones,
    /// Uniform in [-1, 1).
    Random,
    /// Uniform in [0, 1).
    Unit,
    /// Multiples of 1/4 in [-1, 1], exact in fp16 / bf16.
    Small,
    Iota,
    Permutation,
    /// Random 32-bit patterns.
    Bits,
    /// CSR row pointers i*K.
    RowPtr(u64),
    /// Random indices in [0, M).
    RandIdx(u64),
    Const(f64),
}

#[derive(Debug, Clone)]
pub enum ResolvedArg {
    Buffer {
        name: String,
        ty: ElemType,
        len: usize,
        init: Init,
        output: bool,
    },
    Scalar {
        name: String,
        ty: ElemType,
        value: f64,
    },
}

/// One concrete configuration of one kernel.
#[derive(Debug, Clone)]
pub struct Instance {
    pub kernel: String,
    pub vars: Env,
    pub block: [u32; 3],
    pub grid: [u32; 3],
    pub smem_dyn: u32,
    pub flops: f64,
    pub dram_bytes: f64,
    pub dram_bytes_model: f64,
    pub working_set: f64,
    pub config: String,
    pub args: Vec<ResolvedArg>,
}

impl Instance {
    pub fn block_threads(&self) -> u64 {
        self.block.iter().map(|&b| b as u64).product()
    }
    pub fn grid_blocks(&self) -> u64 {
        self.grid.iter().map(|&b| b as u64).product()
    }
    /// Device memory the configuration allocates.
    pub fn alloc_bytes(&self) -> u64 {
        self.args
            .iter()
            .map(|a| match a {
                ResolvedArg::Buffer { ty, len, .. } => (*len as u64) * ty.size() as u64,
                _ => 0,
            })
            .sum()
    }
}

/// The configuration key shared with the main crate's importer of the reference
/// data, in the contract's canonical form ([`gpucast_runs::config_key`]: sorted by
/// name): N, rows, cols and iters when present and non-zero, `block` = threads per
/// block when non-zero, and the kernel's other size parameters (extended kernels
/// only) so that distinct configurations keep distinct keys.
pub fn config_key(vars: &Env, block_threads: u64, extra: &[String]) -> String {
    const STUDY: [&str; 5] = ["N", "rows", "cols", "block", "iters"];
    let mut params: Vec<(&str, f64)> = ["N", "rows", "cols", "iters"]
        .into_iter()
        .filter_map(|k| vars.get(k).map(|&v| (k, v)))
        .filter(|&(_, v)| v != 0.0)
        .collect();
    if block_threads != 0 {
        params.push(("block", block_threads as f64));
    }
    for k in extra {
        if STUDY.contains(&k.as_str()) {
            continue;
        }
        if let Some(&v) = vars.get(k.as_str()) {
            params.push((k.as_str(), v));
        }
    }
    gpucast_runs::config_key(params)
}

pub fn parse_init(s: &str, env: &Env) -> Result<Init, String> {
    let (head, arg) = match s.split_once(':') {
        Some((h, a)) => (h.trim(), Some(expr::eval(a, env)?)),
        None => (s.trim(), None),
    };
    let need = |a: Option<f64>| {
        a.ok_or_else(|| format!("init '{head}' needs a parameter ('{head}:EXPR')"))
    };
    Ok(match head {
        "zero" => Init::Zero,
        "ones" => Init::Ones,
        "random" => Init::Random,
        "unit" => Init::Unit,
        "small" => Init::Small,
        "iota" => Init::Iota,
        "permutation" => Init::Permutation,
        "bits" => Init::Bits,
        "rowptr" => Init::RowPtr(need(arg)? as u64),
        "randidx" => Init::RandIdx(need(arg)? as u64),
        "const" => Init::Const(need(arg)?),
        _ => return Err(format!("unknown init '{s}'")),
    })
}

pub struct Suite {
    pub kernels: Vec<KernelDef>,
    sources: BTreeMap<String, String>,
}

impl Suite {
    /// The manifest and kernels compiled into the binary.
    pub fn embedded() -> Result<Suite> {
        let sources = KERNEL_FILES
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Suite::from_str(EMBEDDED_MANIFEST, sources)
    }

    /// A manifest on disk; kernel sources are read from `kernels/` beside it.
    pub fn from_path(path: &Path) -> Result<Suite> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let dir = path.parent().unwrap_or(Path::new(".")).join("kernels");
        let file: SuiteFile =
            toml::from_str(&text).map_err(|e| anyhow!("{}: {}", path.display(), e.message()))?;
        let mut sources = BTreeMap::new();
        for k in &file.kernel {
            let p = dir.join(&k.source);
            let s = std::fs::read_to_string(&p)
                .with_context(|| format!("kernel {}: reading {}", k.name, p.display()))?;
            sources.insert(k.source.clone(), s);
        }
        let s = Suite {
            kernels: file.kernel,
            sources,
        };
        s.validate()?;
        Ok(s)
    }

    pub fn from_str(text: &str, sources: BTreeMap<String, String>) -> Result<Suite> {
        let file: SuiteFile =
            toml::from_str(text).map_err(|e| anyhow!("suite manifest: {}", e.message()))?;
        let s = Suite {
            kernels: file.kernel,
            sources,
        };
        s.validate()?;
        Ok(s)
    }

    pub fn source(&self, k: &KernelDef) -> Result<&str> {
        self.sources
            .get(&k.source)
            .map(|s| s.as_str())
            .ok_or_else(|| anyhow!("kernel {}: source {} not found", k.name, k.source))
    }

    pub fn get(&self, name: &str) -> Option<&KernelDef> {
        self.kernels.iter().find(|k| k.name == name)
    }

    /// Kernels selected by suite names and kernel names (empty = all).
    pub fn select(&self, suites: &[String], names: &[String]) -> Result<Vec<&KernelDef>> {
        for n in names {
            if self.get(n).is_none() {
                bail!("unknown kernel '{n}' (see `gpucast-bench list`)");
            }
        }
        for s in suites {
            if !self.kernels.iter().any(|k| &k.suite == s) {
                bail!("unknown suite '{s}' (known: reference-16, extended)");
            }
        }
        Ok(self
            .kernels
            .iter()
            .filter(|k| suites.is_empty() || suites.contains(&k.suite))
            .filter(|k| names.is_empty() || names.contains(&k.name))
            .collect())
    }

    fn validate(&self) -> Result<()> {
        let mut seen = std::collections::BTreeSet::new();
        for k in &self.kernels {
            if !seen.insert(k.name.as_str()) {
                bail!("duplicate kernel name '{}'", k.name);
            }
            let src = self.source(k)?;
            if !src.contains(&format!(" {}(", k.entry)) || !src.contains("extern \"C\"") {
                bail!(
                    "kernel {}: entry '{}' not found as an extern \"C\" function in {}",
                    k.name,
                    k.entry,
                    k.source
                );
            }
            if k.block.is_empty() || k.block.len() > 3 || k.grid.is_empty() || k.grid.len() > 3 {
                bail!("kernel {}: block and grid need 1 to 3 dimensions", k.name);
            }
            let insts = instances(k).with_context(|| format!("kernel {}", k.name))?;
            if insts.is_empty() {
                bail!("kernel {}: empty size grid", k.name);
            }
            verify_instance(k).with_context(|| format!("kernel {} (verify size)", k.name))?;
        }
        Ok(())
    }
}

fn cartesian(sizes: &BTreeMap<String, Vec<f64>>) -> Vec<Env> {
    let mut out = vec![Env::new()];
    for (k, vals) in sizes {
        let mut next = Vec::new();
        for e in &out {
            for v in vals {
                let mut e2 = e.clone();
                e2.insert(k.clone(), *v);
                next.push(e2);
            }
        }
        out = next;
    }
    out
}

/// All configurations of a kernel's size grid.
pub fn instances(k: &KernelDef) -> Result<Vec<Instance>> {
    cartesian(&k.sizes)
        .into_iter()
        .map(|env| resolve(k, env))
        .collect()
}

/// The small configuration used for verification (defaults: the smallest size).
pub fn verify_instance(k: &KernelDef) -> Result<Instance> {
    let mut env = Env::new();
    for (p, vals) in &k.sizes {
        let v = k
            .verify
            .get(p)
            .copied()
            .unwrap_or_else(|| vals.iter().cloned().fold(f64::INFINITY, f64::min));
        env.insert(p.clone(), v);
    }
    for p in k.verify.keys() {
        if !k.sizes.contains_key(p) {
            bail!("verify size '{p}' is not a size parameter");
        }
    }
    resolve(k, env)
}

/// Resolve one point of the size grid.
pub fn resolve(k: &KernelDef, mut env: Env) -> Result<Instance> {
    // size parameters that other variables are derived from (H -> rows, cols)
    // are represented by those and stay out of the config key
    let mut referenced = Vec::new();
    for e in k.derived.values() {
        referenced.extend(expr::variables(e).map_err(|m| anyhow!("derived '{e}': {m}"))?);
    }
    let size_params: Vec<String> = k
        .sizes
        .keys()
        .filter(|p| !referenced.contains(p))
        .cloned()
        .collect();
    // derived variables, possibly referring to each other
    let mut pending: Vec<(&String, &String)> = k.derived.iter().collect();
    while !pending.is_empty() {
        let before = pending.len();
        let mut err = String::new();
        pending.retain(|(name, e)| match expr::eval(e, &env) {
            Ok(v) => {
                env.insert((*name).clone(), v);
                false
            }
            Err(m) => {
                err = format!("derived {name} = {e}: {m}");
                true
            }
        });
        if pending.len() == before {
            bail!(err);
        }
    }
    let ev = |what: &str, e: &NumOrExpr, env: &Env| -> Result<f64> {
        let v = e.eval(env).map_err(|m| anyhow!("{what}: {m}"))?;
        if v < 0.0 {
            bail!("{what} is negative ({v})");
        }
        Ok(v)
    };
    let dims = |what: &str, v: &[NumOrExpr], env: &Env| -> Result<[u32; 3]> {
        let mut d = [1u32; 3];
        for (i, e) in v.iter().enumerate() {
            let x = ev(what, e, env)?;
            if x < 1.0 || x > u32::MAX as f64 || x.fract() != 0.0 {
                bail!("{what}[{i}] = {x} is not a positive integer");
            }
            d[i] = x as u32;
        }
        Ok(d)
    };
    let block = dims("block", &k.block, &env)?;
    let threads: u64 = block.iter().map(|&b| b as u64).product();
    if threads > 1024 {
        bail!("block of {threads} threads exceeds 1024");
    }
    env.insert("threads".into(), threads as f64);
    let grid = dims("grid", &k.grid, &env)?;
    env.insert("blocks".into(), grid.iter().map(|&b| b as f64).product());
    let smem_dyn = ev("smem", &k.smem, &env)? as u32;
    let flops = ev("flops", &k.flops, &env)?;
    let dram_bytes = ev("dram_bytes", &k.dram_bytes, &env)?;
    let dram_bytes_model = match &k.dram_bytes_model {
        Some(e) => ev("dram_bytes_model", e, &env)?,
        None => dram_bytes,
    };
    let working_set = ev("working_set", &k.working_set, &env)?;
    let mut args = Vec::new();
    for a in &k.args {
        match (&a.len, &a.value) {
            (Some(len), None) => {
                let n = ev(&format!("arg {} len", a.name), len, &env)?;
                let init = parse_init(a.init.as_deref().unwrap_or("zero"), &env)
                    .map_err(|m| anyhow!("arg {}: {m}", a.name))?;
                args.push(ResolvedArg::Buffer {
                    name: a.name.clone(),
                    ty: a.ty,
                    len: n.max(1.0) as usize,
                    init,
                    output: a.output,
                });
            }
            (None, Some(v)) => {
                let value = v.eval(&env).map_err(|m| anyhow!("arg {}: {m}", a.name))?;
                if a.ty == ElemType::F16 || a.ty == ElemType::Bf16 {
                    bail!("arg {}: 16-bit scalars are not supported", a.name);
                }
                args.push(ResolvedArg::Scalar {
                    name: a.name.clone(),
                    ty: a.ty,
                    value,
                });
            }
            _ => bail!(
                "arg {}: give exactly one of len (buffer) or value (scalar)",
                a.name
            ),
        }
    }
    let config = config_key(&env, threads, &size_params);
    Ok(Instance {
        kernel: k.name.clone(),
        vars: env,
        block,
        grid,
        smem_dyn,
        flops,
        dram_bytes,
        dram_bytes_model,
        working_set,
        config,
        args,
    })
}

/// Parse a `--sizes` filter: `N=262144,H=512,H=1024`.
pub fn parse_size_filter(s: &str) -> Result<BTreeMap<String, Vec<f64>>> {
    let mut m: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| anyhow!("--sizes: expected NAME=VALUE, got '{part}'"))?;
        for v in v.split(':') {
            let x: f64 = v
                .trim()
                .parse()
                .map_err(|_| anyhow!("--sizes: '{v}' is not a number"))?;
            m.entry(k.trim().to_string()).or_default().push(x);
        }
    }
    Ok(m)
}

/// Does an instance pass the size filter? A filtered parameter only applies to
/// kernels that have it (among sizes or derived variables).
pub fn size_filter_matches(inst: &Instance, filter: &BTreeMap<String, Vec<f64>>) -> bool {
    filter.iter().all(|(k, vals)| match inst.vars.get(k) {
        Some(v) => vals.contains(v),
        None => true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(p: &[(&str, f64)]) -> Env {
        p.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn config_key_rule() {
        assert_eq!(
            config_key(
                &env(&[("N", 262144.0), ("iters", 50.0)]),
                256,
                &["N".into(), "iters".into()]
            ),
            "N=262144,block=256,iters=50"
        );
        assert_eq!(
            config_key(
                &env(&[("H", 512.0), ("rows", 512.0), ("cols", 512.0)]),
                256,
                &[]
            ),
            "block=256,cols=512,rows=512"
        );
        assert_eq!(
            config_key(&env(&[("N", 1024.0)]), 256, &[]),
            "N=1024,block=256"
        );
        assert_eq!(
            config_key(&env(&[("N", 0.0), ("iters", 0.0)]), 1024, &[]),
            "block=1024"
        );
        assert_eq!(
            config_key(
                &env(&[("N", 4096.0), ("K", 16.0)]),
                128,
                &["K".into(), "N".into()]
            ),
            "K=16,N=4096,block=128"
        );
    }

    /// The L2-residency sweep (`l2-sweep.toml`, the manifest behind
    /// datasets/own/*/l2-sweep) is the suite's own kernels with other sizes: every other
    /// field equal, 28 working sets from 1 to 512 MB each.
    #[test]
    fn l2_sweep_manifest_is_the_suites_kernels_at_other_sizes() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let sweep = Suite::from_path(&dir.join("l2-sweep.toml")).unwrap();
        let suite = Suite::embedded().unwrap();
        assert_eq!(sweep.kernels.len(), 5);
        for k in &sweep.kernels {
            let mut own = suite.get(&k.name).unwrap().clone();
            let sizes = &k.sizes["N"];
            assert_eq!(sizes.len(), 28, "{}", k.name);
            let bytes_per_n = Env::from([("N".to_string(), 1.0), ("blocks".to_string(), 0.0)]);
            let per_n = k.working_set.eval(&bytes_per_n).unwrap();
            let (first_mb, last_mb) = (sizes[0] * per_n / 1e6, sizes[27] * per_n / 1e6);
            assert!((0.7..1.3).contains(&first_mb), "{} {first_mb}", k.name);
            assert!((500.0..525.0).contains(&last_mb), "{} {last_mb}", k.name);
            own.sizes = k.sizes.clone();
            own.verify = k.verify.clone();
            assert_eq!(format!("{own:?}"), format!("{k:?}"), "{}", k.name);
        }
    }

    #[test]
    fn embedded_suite_parses_and_has_reference_16() {
        let s = Suite::embedded().unwrap();
        for n in REFERENCE_16 {
            let k = s.get(n).unwrap_or_else(|| panic!("missing {n}"));
            assert_eq!(k.suite, "reference-16", "{n}");
        }
        assert_eq!(
            s.kernels
                .iter()
                .filter(|k| k.suite == "reference-16")
                .count(),
            16
        );
        let ext = s.kernels.iter().filter(|k| k.suite == "extended").count();
        assert!(ext >= 14, "only {ext} extended kernels");
        assert!(s.kernels.len() >= 30);
        // every .cu file embedded is used by some kernel
        for (f, _) in KERNEL_FILES {
            assert!(
                s.kernels.iter().any(|k| k.source == *f),
                "unused kernel file {f}"
            );
        }
    }

    fn inst(name: &str, cfg: &str) -> Instance {
        let s = Suite::embedded().unwrap();
        let all = instances(s.get(name).unwrap()).unwrap();
        let keys: Vec<_> = all.iter().map(|i| i.config.clone()).collect();
        all.into_iter()
            .find(|i| i.config == cfg)
            .unwrap_or_else(|| panic!("{name}: no config {cfg}; have {keys:?}"))
    }

    #[test]
    fn reference_sizes_exact() {
        let s = Suite::embedded().unwrap();
        let keys = |n: &str| -> Vec<String> {
            instances(s.get(n).unwrap())
                .unwrap()
                .into_iter()
                .map(|i| i.config)
                .collect()
        };
        // the spec's four sizes, plus the two the study measured on one GPU each
        // (65536 on the GTX TITAN X, 8388608 on the TITAN V)
        assert_eq!(
            keys("vector_add"),
            [
                "N=65536,block=256",
                "N=262144,block=256",
                "N=1048576,block=256",
                "N=4194304,block=256",
                "N=8388608,block=256",
                "N=16777216,block=256"
            ]
        );
        assert_eq!(
            keys("conv2d_3x3"),
            [
                "block=256,cols=256,rows=256",
                "block=256,cols=512,rows=512",
                "block=256,cols=1024,rows=1024",
                "block=256,cols=2048,rows=2048",
                "block=256,cols=3072,rows=3072",
                "block=256,cols=4096,rows=4096"
            ]
        );
        assert_eq!(
            keys("matmul_naive"),
            [
                "block=256,cols=128,rows=128",
                "block=256,cols=256,rows=256",
                "block=256,cols=512,rows=512",
                "block=256,cols=1024,rows=1024",
                "block=256,cols=2048,rows=2048"
            ]
        );
        assert_eq!(keys("matmul_tiled")[1], "block=1024,cols=256,rows=256");
        assert_eq!(keys("shared_bank_conflict"), ["block=1024"]);
        let a = keys("atomic_hotspot");
        assert_eq!(a.len(), 8);
        assert!(a.contains(&"N=262144,block=256,iters=50".to_string()));
        assert!(a.contains(&"N=16777216,block=256,iters=100".to_string()));
    }

    #[test]
    fn reference_flop_byte_formulas() {
        let n = 1048576.0;
        let i = inst("vector_add", "N=1048576,block=256");
        assert_eq!(
            (i.flops, i.dram_bytes, i.grid, i.block),
            (n, 12.0 * n, [4096, 1, 1], [256, 1, 1])
        );
        let i = inst("saxpy", "N=1048576,block=256");
        assert_eq!((i.flops, i.dram_bytes), (2.0 * n, 12.0 * n));
        let i = inst("strided_copy_8", "N=1048576,block=256");
        assert_eq!((i.flops, i.dram_bytes), (0.0, n));
        assert!(
            i.dram_bytes_model > i.dram_bytes,
            "model counts whole 32-byte sectors"
        );
        let i = inst("random_access", "N=1048576,block=256");
        assert_eq!(i.dram_bytes, 8.0 * n);
        let i = inst("matmul_naive", "block=256,cols=512,rows=512");
        assert_eq!(
            (i.flops, i.dram_bytes, i.grid),
            (2.0 * 512f64.powi(3), 12.0 * 512.0 * 512.0, [32, 32, 1])
        );
        let i = inst("matmul_tiled", "block=1024,cols=2048,rows=2048");
        assert_eq!(
            (i.flops, i.grid, i.block),
            (2.0 * 2048f64.powi(3), [64, 64, 1], [32, 32, 1])
        );
        let i = inst("conv2d_3x3", "block=256,cols=1024,rows=1024");
        assert_eq!(
            (i.flops, i.dram_bytes, i.grid),
            (18.0 * 1024.0 * 1024.0, 8.0 * 1024.0 * 1024.0, [64, 64, 1])
        );
        let i = inst("conv2d_7x7", "block=256,cols=512,rows=512");
        assert_eq!(i.flops, 98.0 * 512.0 * 512.0);
        let i = inst("shared_transpose", "block=1024,cols=4096,rows=4096");
        assert_eq!(
            (i.grid, i.dram_bytes),
            ([128, 128, 1], 8.0 * 4096.0 * 4096.0)
        );
        let i = inst("reduce_sum", "N=262144,block=256");
        assert_eq!((i.flops, i.smem_dyn), (262143.0, 1024));
        let i = inst("dot_product", "N=262144,block=256");
        assert_eq!(i.flops, 2.0 * 262144.0);
        let i = inst("atomic_hotspot", "N=262144,block=256,iters=100");
        assert_eq!(
            (i.dram_bytes, i.grid),
            (8.0 * 262144.0 * 100.0, [1024, 1, 1])
        );
        let i = inst("histogram", "N=4194304,block=256");
        assert_eq!((i.dram_bytes, i.grid), (12.0 * 4194304.0, [16384, 1, 1]));
        let i = inst("shared_bank_conflict", "block=1024");
        assert_eq!(
            (i.grid, i.block, i.flops, i.dram_bytes),
            ([1, 1, 1], [1024, 1, 1], 0.0, 0.0)
        );
    }

    #[test]
    fn size_filter() {
        let f = parse_size_filter("N=262144:1048576,H=512").unwrap();
        assert_eq!(f["N"], vec![262144.0, 1048576.0]);
        let i = inst("vector_add", "N=262144,block=256");
        assert!(size_filter_matches(&i, &f));
        let i = inst("vector_add", "N=4194304,block=256");
        assert!(!size_filter_matches(&i, &f));
        let i = inst("conv2d_3x3", "block=256,cols=512,rows=512");
        assert!(size_filter_matches(&i, &f));
        assert!(parse_size_filter("N").is_err());
        assert!(parse_size_filter("N=abc").is_err());
    }

    #[test]
    fn manifest_errors_are_reported() {
        let src: BTreeMap<String, String> = [(
            "k.cu".to_string(),
            "extern \"C\" __global__ void k(float* a) {}".to_string(),
        )]
        .into();
        let good = r#"
[[kernel]]
name = "k"
suite = "extended"
category = "memory-bound"
source = "k.cu"
entry = "k"
sizes = { N = [1024, 2048] }
block = [128]
grid = ["cdiv(N, threads)"]
flops = "N"
dram_bytes = "4*N"
working_set = "4*N"
args = [{ name = "a", type = "f32", len = "N", init = "random", output = true }, { name = "n", type = "i32", value = "N" }]
"#;
        let s = Suite::from_str(good, src.clone()).unwrap();
        let v = instances(&s.kernels[0]).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[1].grid, [16, 1, 1]);
        assert_eq!(v[1].config, "N=2048,block=128");
        assert_eq!(verify_instance(&s.kernels[0]).unwrap().vars["N"], 1024.0);
        let bad_var = good.replace("\"4*N\"\nworking", "\"4*M\"\nworking");
        let e = Suite::from_str(&bad_var, src.clone()).err().unwrap();
        assert!(format!("{e:#}").contains("unknown variable 'M'"), "{e:#}");
        let bad_entry = good.replace("entry = \"k\"", "entry = \"nope\"");
        assert!(Suite::from_str(&bad_entry, src.clone()).is_err());
        let bad_key = good
            .replace("precision", "")
            .replace("category =", "kategory =");
        assert!(Suite::from_str(&bad_key, src.clone()).is_err());
        let big_block = good.replace("block = [128]", "block = [2048]");
        assert!(format!(
            "{:#}",
            Suite::from_str(&big_block, src.clone()).err().unwrap()
        )
        .contains("exceeds 1024"));
        let bad_init = good.replace("init = \"random\"", "init = \"rowptr\"");
        assert!(Suite::from_str(&bad_init, src).is_err());
    }
}
