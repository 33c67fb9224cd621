//! `calibrate`: the measured fields of the GPU catalog from micro-benchmarks of
//! the suite's own kernels at large sizes.
use crate::device::Device;
use crate::expr::Env;
use crate::manifest::{resolve, Suite};
use crate::runner::{measure, RunOptions};
use anyhow::{Context, Result};

/// (catalog field, kernel, sizes, work per launch as a function of the instance, unit divisor)
struct Probe {
    field: &'static str,
    kernel: &'static str,
    sizes: &'static [(&'static str, f64)],
    /// work units per launch (bytes, flops, atomics); None = report time in microseconds
    work: Option<fn(&Env) -> f64>,
    /// divide work/second by this (1e9 for GB/s, GFLOP/s, Gops/s)
    scale: f64,
    min_cc: u32,
}

const N_STREAM: f64 = 67_108_864.0;

fn probes() -> Vec<Probe> {
    vec![
        Probe {
            field: "copy_bandwidth_gbs",
            kernel: "stream_copy",
            sizes: &[("N", N_STREAM)],
            work: Some(|e| 8.0 * e["N"]),
            scale: 1e9,
            min_cc: 0,
        },
        Probe {
            field: "triad_bandwidth_gbs",
            kernel: "saxpy",
            sizes: &[("N", N_STREAM)],
            work: Some(|e| 12.0 * e["N"]),
            scale: 1e9,
            min_cc: 0,
        },
        Probe {
            field: "read_bandwidth_gbs",
            kernel: "stream_read",
            sizes: &[("N", N_STREAM)],
            work: Some(|e| 4.0 * e["N"]),
            scale: 1e9,
            min_cc: 0,
        },
        Probe {
            field: "write_bandwidth_gbs",
            kernel: "stream_write",
            sizes: &[("N", N_STREAM)],
            work: Some(|e| 4.0 * e["N"]),
            scale: 1e9,
            min_cc: 0,
        },
        Probe {
            field: "l2_bandwidth_gbs",
            kernel: "l2_stream",
            sizes: &[("N", 4_194_304.0), ("M", 262_144.0), ("iters", 64.0)],
            work: Some(|e| 4.0 * e["N"] * e["iters"]),
            scale: 1e9,
            min_cc: 0,
        },
        Probe {
            field: "l1_bandwidth_gbs",
            kernel: "l1_read",
            sizes: &[("N", 4_194_304.0), ("iters", 256.0)],
            work: Some(|e| 4.0 * e["N"] * e["iters"]),
            scale: 1e9,
            min_cc: 0,
        },
        Probe {
            field: "shared_bandwidth_gbs",
            kernel: "smem_bandwidth",
            sizes: &[("N", 4_194_304.0), ("iters", 256.0)],
            work: Some(|e| 4.0 * e["N"] * e["iters"]),
            scale: 1e9,
            min_cc: 0,
        },
        Probe {
            field: "sustained_fp32_gflops",
            kernel: "fp32_fma_peak",
            sizes: &[("N", 4_194_304.0), ("iters", 512.0)],
            work: Some(|e| 16.0 * e["N"] * e["iters"]),
            scale: 1e9,
            min_cc: 0,
        },
        Probe {
            field: "sustained_fp64_gflops",
            kernel: "fp64_fma_loop",
            sizes: &[("N", 4_194_304.0), ("iters", 128.0)],
            work: Some(|e| 8.0 * e["N"] * e["iters"]),
            scale: 1e9,
            min_cc: 0,
        },
        Probe {
            field: "sustained_tensor_fp16_gflops",
            kernel: "tensor_gemm_f16",
            sizes: &[("n", 2048.0)],
            work: Some(|e| 2.0 * e["n"].powi(3)),
            scale: 1e9,
            min_cc: 80,
        },
        Probe {
            field: "launch_overhead_us",
            kernel: "empty_kernel",
            sizes: &[],
            work: None,
            scale: 1.0,
            min_cc: 0,
        },
        Probe {
            field: "atomic_single_address_gops",
            kernel: "atomic_hotspot",
            sizes: &[("N", 1_048_576.0), ("iters", 50.0)],
            work: Some(|e| e["N"] * e["iters"]),
            scale: 1e9,
            min_cc: 0,
        },
        Probe {
            field: "atomic_distinct_gops",
            kernel: "atomic_distinct",
            sizes: &[("N", 4_194_304.0), ("iters", 8.0)],
            work: Some(|e| e["N"] * e["iters"]),
            scale: 1e9,
            min_cc: 0,
        },
    ]
}

pub struct Measured {
    pub field: String,
    pub value: Option<f64>,
    pub kernel: String,
    pub time_ms: Option<f64>,
    pub error: String,
}

pub fn calibrate<D: Device>(
    dev: &mut D,
    suite: &Suite,
    opts: &RunOptions,
    mut progress: impl FnMut(&str),
) -> Result<Vec<Measured>> {
    let (ma, mi) = dev.info().compute_capability;
    let cc = ma * 10 + mi;
    let mut out = Vec::new();
    for p in probes() {
        progress(p.field);
        let k = suite
            .get(p.kernel)
            .with_context(|| format!("suite lacks {}", p.kernel))?;
        if cc < p.min_cc {
            out.push(Measured {
                field: p.field.into(),
                value: None,
                kernel: p.kernel.into(),
                time_ms: None,
                error: format!("needs sm_{}+", p.min_cc),
            });
            continue;
        }
        let env: Env = p.sizes.iter().map(|(n, v)| (n.to_string(), *v)).collect();
        let inst = resolve(k, env)?;
        let r = (|| -> Result<f64> {
            let src = suite.source(k)?;
            dev.load(&k.name, src, &k.entry)?;
            Ok(measure(dev, k, &inst, opts)?.0.min)
        })();
        match r {
            Ok(t) => {
                let v = match p.work {
                    Some(w) => w(&inst.vars) / (t * 1e-3) / p.scale,
                    None => t * 1e3,
                };
                out.push(Measured {
                    field: p.field.into(),
                    value: Some(v),
                    kernel: p.kernel.into(),
                    time_ms: Some(t),
                    error: String::new(),
                });
            }
            Err(e) => {
                let _ = dev.recover();
                out.push(Measured {
                    field: p.field.into(),
                    value: None,
                    kernel: p.kernel.into(),
                    time_ms: None,
                    error: format!("{e:#}"),
                });
            }
        }
    }
    Ok(out)
}

fn toml_str(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The GPU catalog fragment (`[[gpu]]`, data-formats.md §2) with the measured fields.
pub fn to_toml(info: &crate::device::DeviceInfo, m: &[Measured], opts: &RunOptions) -> String {
    let mut s = String::new();
    s.push_str(
        "# Measured by gpucast-bench calibrate (best of the trials of each micro-benchmark).\n",
    );
    s.push_str("# Merge over the catalog entry of this GPU (gpucast --gpus FILE); bandwidths in GB/s (1e9 B/s).\n");
    for x in m.iter().filter(|x| x.value.is_some()) {
        s.push_str(&format!(
            "# {}: {} best launch {:.6} ms\n",
            x.field,
            x.kernel,
            x.time_ms.unwrap_or(0.0)
        ));
    }
    for x in m.iter().filter(|x| x.value.is_none()) {
        s.push_str(&format!(
            "# {} not measured ({}): {}\n",
            x.field, x.kernel, x.error
        ));
    }
    s.push_str("[[gpu]]\n");
    s.push_str(&format!("name = {}\n", toml_str(&info.name)));
    s.push_str(&format!(
        "compute_capability = \"{}.{}\"\n",
        info.compute_capability.0, info.compute_capability.1
    ));
    s.push_str(&format!("sm_count = {}\n", info.sm_count));
    // The clock NVML reports at calibration time (not necessarily the rated boost clock).
    if let Some(c) = info.sm_clock_mhz {
        s.push_str(&format!("measured.sm_clock_mhz = {c}\n"));
    }
    let get = |f: &str| m.iter().find(|x| x.field == f).and_then(|x| x.value);
    let best_bw = ["copy_bandwidth_gbs", "triad_bandwidth_gbs"]
        .iter()
        .filter_map(|f| get(f))
        .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))));
    if let Some(b) = best_bw {
        s.push_str(&format!("sustained_bandwidth_gbs = {b:.1}\n"));
    }
    // Fields of the catalog format go in plainly; the others under `measured.`.
    const CATALOG_FIELDS: [&str; 3] = [
        "l2_bandwidth_gbs",
        "sustained_fp32_gflops",
        "launch_overhead_us",
    ];
    for x in m {
        if let Some(v) = x.value {
            let digits = if v < 100.0 { 3 } else { 1 };
            let key = if CATALOG_FIELDS.contains(&x.field.as_str()) {
                x.field.to_string()
            } else {
                format!("measured.{}", x.field)
            };
            s.push_str(&format!("{key} = {v:.digits$}\n"));
        }
    }
    s.push_str(&format!(
        "measured_source = {}\n",
        toml_str(&format!(
            "gpucast-bench {} calibrate; driver {}; CUDA {}; {}; commit {}",
            env!("CARGO_PKG_VERSION"),
            info.driver_version,
            info.cuda_version,
            opts.date,
            opts.commit
        ))
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::tests::SyntheticDevice;

    #[test]
    fn calibration_on_the_synthetic_device() {
        let s = Suite::embedded().unwrap();
        let mut dev = SyntheticDevice::new();
        dev.hang = vec!["fp64_fma_loop".into()];
        let opts = RunOptions {
            date: "2026-01-01".into(),
            commit: "abc".into(),
            trials: 3,
            ..Default::default()
        };
        let m = calibrate(&mut dev, &s, &opts, |_| {}).unwrap();
        let get = |f: &str| m.iter().find(|x| x.field == f).unwrap();
        // synthetic time per launch: 0.002 ms + 1e-6 ms per block
        let copy_t = 0.002 + 1e-6 * (N_STREAM / 256.0);
        assert!(
            (get("copy_bandwidth_gbs").value.unwrap() - 8.0 * N_STREAM / (copy_t * 1e-3) / 1e9)
                .abs()
                < 1e-6
        );
        assert!((get("launch_overhead_us").value.unwrap() - 2.001).abs() < 1e-9);
        assert!(get("sustained_fp64_gflops").value.is_none());
        assert!(get("sustained_fp64_gflops").error.contains("timed out"));
        assert!(
            get("sustained_tensor_fp16_gflops").value.is_some(),
            "synthetic GPU is sm_89"
        );
        let t = to_toml(&dev.info, &m, &opts);
        let v: toml::Value = toml::from_str(&t).unwrap();
        let g = &v["gpu"][0];
        assert_eq!(g["name"].as_str().unwrap(), "Synthetic GPU (test)");
        assert!(g["sustained_bandwidth_gbs"].as_float().unwrap() > 0.0);
        assert!(g["measured"]["copy_bandwidth_gbs"].as_float().unwrap() > 0.0);
        assert!(g["launch_overhead_us"].as_float().unwrap() > 0.0);
        assert!(g.get("sustained_fp64_gflops").is_none());
        assert!(g["measured_source"]
            .as_str()
            .unwrap()
            .contains("commit abc"));
    }
}
