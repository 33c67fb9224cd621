//! Static inspection without a GPU: NVRTC -> PTX -> ptxas per architecture;
//! registers, shared memory, spills; SASS instruction mix with nvdisasm.
use crate::manifest::{KernelDef, Suite};
use crate::nvrtc::{Nvrtc, Output};
use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// SASS opcode classes counted (static instruction counts in the cubin).
pub const INST_CLASSES: &[&str] = &[
    "total", "ffma", "fadd", "fmul", "mufu", "dfma", "hmma", "ldg", "stg", "lds", "sts", "atom",
    "branch",
];

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Resources {
    pub kernel: String,
    pub arch: String,
    pub regs_per_thread: u32,
    pub static_smem_bytes: u32,
    pub spill_stores: u32,
    pub spill_loads: u32,
    pub stack_frame: u32,
    /// Static SASS counts per class; empty when no disassembler was available.
    pub inst: BTreeMap<String, u64>,
}

fn num_before(line: &str, suffix: &str) -> Option<u32> {
    let i = line.find(suffix)?;
    line[..i]
        .split(|c: char| !c.is_ascii_digit())
        .rfind(|s| !s.is_empty())?
        .parse()
        .ok()
}

/// Parse `ptxas -v` output for one entry function.
pub fn parse_ptxas(log: &str, entry: &str) -> Result<(u32, u32, u32, u32, u32)> {
    let mut in_fn = false;
    let (mut regs, mut smem, mut ss, mut sl, mut stack) = (None, 0, 0, 0, 0);
    for line in log.lines() {
        if line.contains("Compiling entry function") || line.contains("Function properties for") {
            in_fn = line.contains(&format!("'{entry}'"))
                || line.trim_end().ends_with(&format!(" {entry}"));
            continue;
        }
        if !in_fn {
            continue;
        }
        if line.contains("bytes stack frame") {
            stack = num_before(line, " bytes stack frame").unwrap_or(0);
            ss = num_before(line, " bytes spill stores").unwrap_or(0);
            sl = num_before(line, " bytes spill loads").unwrap_or(0);
        }
        if line.contains("Used ") && line.contains(" registers") {
            regs = num_before(line, " registers");
            smem = num_before(line, " bytes smem").unwrap_or(0);
        }
    }
    match regs {
        Some(r) => Ok((r, smem, ss, sl, stack)),
        None => bail!("no register count for {entry} in ptxas output"),
    }
}

/// Count SASS opcode classes in `nvdisasm` output.
pub fn count_sass(text: &str) -> BTreeMap<String, u64> {
    let mut m: BTreeMap<String, u64> = INST_CLASSES.iter().map(|c| (c.to_string(), 0)).collect();
    for line in text.lines() {
        let Some(p) = line.find("*/") else { continue };
        if !line.trim_start().starts_with("/*") {
            continue;
        }
        let mut rest = line[p + 2..].trim().trim_start_matches('{').trim();
        if rest.starts_with('@') {
            rest = rest
                .split_once(char::is_whitespace)
                .map(|x| x.1)
                .unwrap_or("")
                .trim();
        }
        let op = rest
            .split(|c: char| c.is_whitespace() || c == ';')
            .next()
            .unwrap_or("");
        if op.is_empty() || !op.chars().next().unwrap().is_ascii_uppercase() {
            continue;
        }
        let base = op.split('.').next().unwrap_or(op);
        *m.get_mut("total").unwrap() += 1;
        let class = match base {
            "FFMA" | "FFMA32I" => Some("ffma"),
            "FADD" | "FADD32I" => Some("fadd"),
            "FMUL" | "FMUL32I" => Some("fmul"),
            "MUFU" => Some("mufu"),
            "DFMA" => Some("dfma"),
            "HMMA" => Some("hmma"),
            "LDG" | "LD" => Some("ldg"),
            "STG" | "ST" => Some("stg"),
            "LDS" => Some("lds"),
            "STS" => Some("sts"),
            "ATOM" | "ATOMG" | "ATOMS" | "RED" | "REDG" => Some("atom"),
            "BRA" | "BRX" | "JMP" | "JMX" | "CALL" | "RET" | "SSY" | "SYNC" | "BSSY" | "BSYNC"
            | "PBK" | "BRK" | "CONT" | "PCNT" => Some("branch"),
            _ => None,
        };
        if let Some(c) = class {
            *m.get_mut(c).unwrap() += 1;
        }
    }
    m
}

pub struct Tools {
    pub nvrtc: Nvrtc,
    pub ptxas: PathBuf,
    pub disasm: Option<PathBuf>,
}

impl Tools {
    pub fn find(explicit: Option<&Path>) -> Result<Tools> {
        let dirs = crate::tools::search_dirs(explicit);
        let nvrtc = Nvrtc::load(&dirs)?;
        let ptxas = crate::tools::find_tool("ptxas", &dirs)
            .context("ptxas not found; install it with benchmarks_cuda/scripts/install-cuda-tools.sh or pass --cuda-tools DIR")?;
        let disasm = crate::tools::find_tool("nvdisasm", &dirs);
        Ok(Tools {
            nvrtc,
            ptxas,
            disasm,
        })
    }

    pub fn ptxas_version(&self) -> String {
        Command::new(&self.ptxas)
            .arg("--version")
            .output()
            .ok()
            .and_then(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .find(|l| l.contains("release"))
                    .map(|l| l.trim().to_string())
            })
            .unwrap_or_default()
    }
}

fn arch_num(arch: &str) -> Result<u32> {
    arch.trim_start_matches("sm_")
        .trim_start_matches("compute_")
        .parse()
        .with_context(|| format!("bad architecture '{arch}' (expected e.g. sm_80)"))
}

/// Inspect one kernel for one architecture.
pub fn inspect_one(
    tools: &Tools,
    suite: &Suite,
    k: &KernelDef,
    arch: &str,
    work: &Path,
) -> Result<Resources> {
    let n = arch_num(arch)?;
    let src = suite.source(k)?;
    let opts = vec![
        format!("--gpu-architecture=compute_{n}"),
        "-default-device".to_string(),
    ];
    let (ptx, _log) = tools.nvrtc.compile(src, &k.source, &opts, Output::Ptx)?;
    let ptx_path = work.join(format!("{}_{}.ptx", k.name, n));
    let cubin = work.join(format!("{}_{}.cubin", k.name, n));
    let end = ptx.iter().position(|&b| b == 0).unwrap_or(ptx.len());
    std::fs::write(&ptx_path, &ptx[..end])?;
    let out = Command::new(&tools.ptxas)
        .args(["-v", &format!("-arch=sm_{n}"), "-o"])
        .arg(&cubin)
        .arg(&ptx_path)
        .output()
        .with_context(|| format!("running {}", tools.ptxas.display()))?;
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() {
        let first = log
            .lines()
            .find(|l| l.contains("error") || l.contains("fatal"))
            .unwrap_or("")
            .trim();
        bail!("ptxas sm_{n} failed for {}: {first}", k.name);
    }
    let (regs, smem, ss, sl, stack) = parse_ptxas(&log, &k.entry)?;
    let mut inst = BTreeMap::new();
    if let Some(d) = &tools.disasm {
        if let Ok(o) = Command::new(d).arg(&cubin).output() {
            if o.status.success() {
                inst = count_sass(&String::from_utf8_lossy(&o.stdout));
            }
        }
    }
    let _ = std::fs::remove_file(&ptx_path);
    let _ = std::fs::remove_file(&cubin);
    Ok(Resources {
        kernel: k.name.clone(),
        arch: format!("sm_{n}"),
        regs_per_thread: regs,
        static_smem_bytes: smem,
        spill_stores: ss,
        spill_loads: sl,
        stack_frame: stack,
        inst,
    })
}

/// Inspect all (kernel, arch) pairs with `jobs` threads; results in input order.
pub fn inspect_all(
    tools: &Tools,
    suite: &Suite,
    kernels: &[&KernelDef],
    archs: &[String],
    jobs: usize,
) -> Result<Vec<Result<Resources>>> {
    let work = std::env::temp_dir().join(format!("gpucast-inspect-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    let pairs: Vec<(&KernelDef, &String)> = kernels
        .iter()
        .flat_map(|k| archs.iter().map(move |a| (*k, a)))
        .collect();
    let jobs = jobs.max(1).min(pairs.len().max(1));
    let mut results: Vec<Option<Result<Resources>>> = (0..pairs.len()).map(|_| None).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let collected = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                if i >= pairs.len() {
                    break;
                }
                let (k, a) = pairs[i];
                let r = inspect_one(tools, suite, k, a, &work);
                collected.lock().unwrap().push((i, r));
            });
        }
    });
    for (i, r) in collected.into_inner().unwrap() {
        results[i] = Some(r);
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(results.into_iter().map(|r| r.unwrap()).collect())
}

pub fn csv_header(with_inst: bool) -> Vec<String> {
    let mut h: Vec<String> = [
        "kernel",
        "arch",
        "regs_per_thread",
        "static_smem_bytes",
        "spill_stores",
        "spill_loads",
        "stack_frame",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if with_inst {
        h.extend(INST_CLASSES.iter().map(|c| format!("inst_{c}")));
    }
    h
}

pub fn csv_cells(r: &Resources, with_inst: bool) -> Vec<String> {
    let mut v = vec![
        r.kernel.clone(),
        r.arch.clone(),
        r.regs_per_thread.to_string(),
        r.static_smem_bytes.to_string(),
        r.spill_stores.to_string(),
        r.spill_loads.to_string(),
        r.stack_frame.to_string(),
    ];
    if with_inst {
        v.extend(
            INST_CLASSES
                .iter()
                .map(|c| r.inst.get(*c).map(|x| x.to_string()).unwrap_or_default()),
        );
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    const LOG: &str = "ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'other' for 'sm_52'
ptxas info    : Function properties for other
    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 255 registers, used 0 barriers, 340 bytes cmem[0]
ptxas info    : Compiling entry function 'matmul_tiled' for 'sm_52'
ptxas info    : Function properties for matmul_tiled
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 30 registers, used 1 barriers, 8192 bytes smem, 348 bytes cmem[0]
";
    #[test]
    fn parses_ptxas_verbose_output() {
        assert_eq!(
            parse_ptxas(LOG, "matmul_tiled").unwrap(),
            (30, 8192, 0, 0, 0)
        );
        assert_eq!(parse_ptxas(LOG, "other").unwrap(), (255, 0, 4, 4, 8));
        assert!(parse_ptxas(LOG, "missing").is_err());
    }
    #[test]
    fn counts_sass_classes() {
        let sass = "
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/                   S2R R0, SR_TID.X ;
        /*0020*/               @P0 BRA `(.L_x_1) ;
        /*0030*/                   LDG.E R2, desc[UR4][R2.64] ;
        /*0040*/                   FFMA R5, R2, R3, R4 ;
        /*0050*/                   FADD.FTZ R5, R5, 1 ;
        /*0060*/              @!P1 STG.E desc[UR4][R6.64], R5 ;
        /*0070*/                   LDS.U.32 R8, [R9] ;
        /*0080*/                   STS [R9], R8 ;
        /*0090*/                   ATOMS.ADD RZ, [R9], R8 ;
        /*00a0*/                   RED.E.ADD.STRONG.GPU desc[UR4][R2.64], R8 ;
        /*00b0*/                   HMMA.16816.F32 R4, R8, R12, R4 ;
        /*00c0*/                   MUFU.RCP R3, R2 ;
        /*00d0*/                   EXIT ;
        .L_x_1:
        /* 0x000fca0000000f00 */
";
        let m = count_sass(sass);
        assert_eq!(m["total"], 14);
        assert_eq!(
            (m["ffma"], m["fadd"], m["ldg"], m["stg"], m["lds"], m["sts"]),
            (1, 1, 1, 1, 1, 1)
        );
        assert_eq!(
            (m["atom"], m["branch"], m["hmma"], m["mufu"], m["fmul"]),
            (2, 1, 1, 1, 0)
        );
    }
}
