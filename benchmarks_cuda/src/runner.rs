//! The run loop: compile, verify, warm up, choose reps, time trials, write one
//! row per configuration (an error row when anything fails), resume.
use crate::device::{Device, DeviceInfo, Launch};
use crate::manifest::{verify_instance, Instance, KernelDef, Suite};
use crate::output::{done_key, done_rows, ResultsFile, Row};
use crate::stats::{choose_reps, trial_stats};
use crate::verify;
use anyhow::{anyhow, Result};
use std::collections::HashMap;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct RunOptions {
    pub trials: u32,
    pub warmup: u32,
    pub target_trial_ms: f64,
    pub max_reps: u32,
    pub timeout: Duration,
    pub verify: bool,
    pub resume: bool,
    pub progress: bool,
    pub date: String,
    pub commit: String,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            trials: 10,
            warmup: 3,
            target_trial_ms: 1.0,
            max_reps: 100_000,
            timeout: Duration::from_secs(60),
            verify: true,
            resume: false,
            progress: false,
            date: crate::provenance::utc_date(),
            commit: crate::provenance::commit(),
        }
    }
}

#[derive(Debug, Default, Clone, PartialEq)]
pub struct Summary {
    pub ok: usize,
    pub errors: usize,
    pub skipped: usize,
}

pub fn base_row(info: &DeviceInfo, k: &KernelDef, inst: &Instance, opts: &RunOptions) -> Row {
    Row {
        gpu: info.name.clone(),
        kernel: k.name.clone(),
        config: inst.config.clone(),
        flops: inst.flops,
        dram_bytes: inst.dram_bytes,
        block_threads: inst.block_threads(),
        grid_blocks: inst.grid_blocks(),
        working_set_bytes: inst.working_set,
        dram_bytes_model: inst.dram_bytes_model,
        precision: k.precision.clone(),
        suite: k.suite.clone(),
        category: k.category.clone(),
        sm_count: Some(info.partition_sms.unwrap_or(info.sm_count)),
        driver_version: info.driver_version.clone(),
        cuda_version: info.cuda_version.clone(),
        sm_clock_mhz: info.sm_clock_mhz,
        mem_clock_mhz: info.mem_clock_mhz,
        date: opts.date.clone(),
        commit: opts.commit.clone(),
        source: format!("gpucast-bench {}", env!("CARGO_PKG_VERSION")),
        ..Default::default()
    }
}

fn launch_of(inst: &Instance) -> Launch {
    Launch {
        grid: inst.grid,
        block: inst.block,
        smem_dyn: inst.smem_dyn,
    }
}

/// Verify a kernel's output at its small size against the CPU reference.
pub fn verify_kernel<D: Device>(
    dev: &mut D,
    k: &KernelDef,
    opts: &RunOptions,
) -> Result<(), String> {
    let inst = verify_instance(k).map_err(|e| format!("{e:#}"))?;
    let p = verify::prepare(&inst, 1).map_err(|e| format!("{e:#}"))?;
    let mut expected = p.bufs.clone();
    verify::cpu_reference(&inst, &mut expected, &p.names).map_err(|e| format!("{e:#}"))?;
    dev.upload(&p.bufs).map_err(|e| format!("upload: {e:#}"))?;
    let res = (|| {
        dev.launch(&k.name, &p.args, &launch_of(&inst), 1, opts.timeout)
            .map_err(|e| format!("launch: {e:#}"))?;
        let (rtol, atol) = verify::tolerance(&k.name);
        for &o in &p.outputs {
            let got = dev.download(o).map_err(|e| format!("download: {e:#}"))?;
            verify::compare(&p.names[o], &expected[o], &got, rtol, atol)?;
        }
        Ok(())
    })();
    dev.free();
    res
}

/// Time one configuration: warm-up, reps so a trial lasts >= target, trials.
pub fn measure<D: Device>(
    dev: &mut D,
    k: &KernelDef,
    inst: &Instance,
    opts: &RunOptions,
) -> Result<(crate::stats::TrialStats, u32)> {
    let p = verify::prepare(inst, 2)?;
    dev.upload(&p.bufs)?;
    let res = (|| {
        let l = launch_of(inst);
        let mut single = f64::NAN;
        for _ in 0..opts.warmup.max(1) {
            single = dev.launch(&k.name, &p.args, &l, 1, opts.timeout)?;
        }
        // refine the per-launch estimate with a short back-to-back batch
        let probe = choose_reps(single, opts.target_trial_ms / 10.0, 1000).max(1);
        let per = dev.launch(&k.name, &p.args, &l, probe, opts.timeout)? / probe as f64;
        let reps = choose_reps(per, opts.target_trial_ms, opts.max_reps);
        let mut times = Vec::with_capacity(opts.trials as usize);
        for _ in 0..opts.trials.max(1) {
            let total = dev.launch(&k.name, &p.args, &l, reps, opts.timeout)?;
            times.push(total / reps as f64);
        }
        let st = trial_stats(&times).ok_or_else(|| anyhow!("no valid trial times ({times:?})"))?;
        if st.mean.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
            return Err(anyhow!("non-positive kernel time {}", st.mean));
        }
        Ok((st, reps))
    })();
    dev.free();
    res
}

/// Run `selected` configurations, appending one row each to `out`.
pub fn run<D: Device>(
    dev: &mut D,
    suite: &Suite,
    selected: &[(&KernelDef, Instance)],
    out: &ResultsFile,
    opts: &RunOptions,
) -> Result<Summary> {
    let done = if opts.resume {
        done_rows(&out.path)?
    } else {
        Default::default()
    };
    let mut summary = Summary::default();
    let mut loaded: HashMap<String, Result<crate::device::KernelAttrs, String>> = HashMap::new();
    let mut verified: HashMap<String, Result<(), String>> = HashMap::new();
    let bar = if opts.progress {
        let b = indicatif::ProgressBar::new(selected.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed} {msg}")
                .unwrap(),
        );
        b
    } else {
        indicatif::ProgressBar::hidden()
    };
    for (k, inst) in selected {
        bar.set_message(format!("{} {}", k.name, inst.config));
        let info = dev.info().clone();
        let key = done_key(
            &info.name,
            &k.name,
            &inst.config,
            Some(info.partition_sms.unwrap_or(info.sm_count)),
        );
        if done.contains(&key) {
            summary.skipped += 1;
            bar.inc(1);
            continue;
        }
        let mut row = base_row(&info, k, inst, opts);
        let result: Result<(), String> = (|| {
            let attrs = loaded
                .entry(k.name.clone())
                .or_insert_with(|| {
                    let src = suite.source(k).map_err(|e| format!("{e:#}"))?;
                    dev.load(&k.name, src, &k.entry)
                        .map_err(|e| format!("compile/load: {e:#}"))
                })
                .clone()?;
            row.regs_per_thread = Some(attrs.regs_per_thread);
            row.smem_per_block = Some(attrs.static_smem + inst.smem_dyn);
            if opts.verify {
                let v = verified
                    .entry(k.name.clone())
                    .or_insert_with(|| verify_kernel(dev, k, opts));
                match v {
                    Ok(()) => row.verified = "true".into(),
                    Err(m) => {
                        row.verified = "false".into();
                        row.error = format!("verify: {m}");
                    }
                }
            }
            let (st, reps) = measure(dev, k, inst, opts).map_err(|e| format!("{e:#}"))?;
            row.time_ms = Some(st.mean);
            row.time_std_ms = Some(st.std);
            row.trials = Some(st.n as u32);
            row.time_min_ms = Some(st.min);
            row.time_median_ms = Some(st.median);
            row.time_cv = Some(st.cv);
            row.reps = Some(reps);
            Ok(())
        })();
        match result {
            Ok(()) => {
                row.status = "ok".into();
                summary.ok += 1;
            }
            Err(m) => {
                row.status = "error".into();
                row.time_ms = None;
                row.error = m;
                summary.errors += 1;
                // a failed launch or a hang may have poisoned the context
                if loaded.get(&k.name).map(|r| r.is_ok()).unwrap_or(false) {
                    if let Err(e) = dev.recover() {
                        bar.finish_and_clear();
                        out.append(&row)?;
                        return Err(anyhow!(
                            "could not recover the CUDA context after an error: {e:#}"
                        ));
                    }
                    // modules live in the old context: load again on demand
                    loaded.retain(|_, r| r.is_err());
                }
            }
        }
        out.append(&row)?;
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(summary)
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use crate::device::{Arg, HostBuf, KernelAttrs};
    use crate::manifest::{instances, ResolvedArg};

    fn buffer_lens(i: &Instance) -> Vec<usize> {
        i.args
            .iter()
            .filter_map(|a| match a {
                ResolvedArg::Buffer { len, .. } => Some(*len),
                _ => None,
            })
            .collect()
    }
    use anyhow::bail;

    /// SYNTHETIC device for tests: no GPU. Kernel "time" is a made-up function of
    /// the launch size; outputs come from the CPU references, so verification passes.
    pub struct SyntheticDevice {
        pub info: DeviceInfo,
        pub compile_fail: Vec<String>,
        pub hang: Vec<String>,
        pub wrong_output: Vec<String>,
        pub recovers: usize,
        pub launches: usize,
        bufs: Vec<HostBuf>,
        names: Vec<String>,
        inst: Option<Instance>,
        suite: Suite,
        loaded: Vec<String>,
    }

    impl SyntheticDevice {
        pub fn new() -> Self {
            SyntheticDevice {
                info: DeviceInfo {
                    name: "Synthetic GPU (test)".into(),
                    driver_version: "0.0".into(),
                    cuda_version: "0.0".into(),
                    sm_count: 8,
                    compute_capability: (8, 9),
                    ..Default::default()
                },
                compile_fail: vec![],
                hang: vec![],
                wrong_output: vec![],
                recovers: 0,
                launches: 0,
                bufs: vec![],
                names: vec![],
                inst: None,
                suite: Suite::embedded().unwrap(),
                loaded: vec![],
            }
        }
    }

    impl Device for SyntheticDevice {
        fn info(&self) -> &DeviceInfo {
            &self.info
        }
        fn load(&mut self, name: &str, _source: &str, _entry: &str) -> Result<KernelAttrs> {
            if self.compile_fail.iter().any(|n| n == name) {
                bail!("synthetic compile error in {name}");
            }
            self.loaded.push(name.to_string());
            Ok(KernelAttrs {
                regs_per_thread: 32,
                static_smem: 16,
            })
        }
        fn upload(&mut self, bufs: &[HostBuf]) -> Result<()> {
            self.bufs = bufs.to_vec();
            self.inst = None;
            Ok(())
        }
        fn launch(
            &mut self,
            name: &str,
            args: &[Arg],
            l: &Launch,
            reps: u32,
            timeout: Duration,
        ) -> Result<f64> {
            if !self.loaded.iter().any(|n| n == name) {
                bail!("kernel {name} not loaded in this context");
            }
            self.launches += 1;
            if self.hang.iter().any(|n| n == name) {
                bail!(
                    "timed out after {:.1} s (kernel hang?)",
                    timeout.as_secs_f64()
                );
            }
            // on the first launch after an upload, find the configuration with this
            // geometry and buffer sizes and apply the CPU reference (if small)
            if self.inst.is_none() {
                let k = self.suite.get(name).unwrap();
                let lens: Vec<usize> = self.bufs.iter().map(|b| b.len()).collect();
                let found = instances(k)
                    .unwrap()
                    .into_iter()
                    .chain(std::iter::once(verify_instance(k).unwrap()))
                    .find(|i| i.grid == l.grid && buffer_lens(i) == lens);
                if let Some(inst) = found {
                    self.names = inst
                        .args
                        .iter()
                        .filter_map(|a| match a {
                            ResolvedArg::Buffer { name, .. } => Some(name.clone()),
                            _ => None,
                        })
                        .collect();
                    if !self.wrong_output.iter().any(|n| n == name)
                        && inst.alloc_bytes() < (8 << 20)
                    {
                        let mut b = self.bufs.clone();
                        verify::cpu_reference(&inst, &mut b, &self.names)?;
                        self.bufs = b;
                    }
                    self.inst = Some(inst);
                }
            }
            let _ = args;
            let blocks: u64 = l.grid.iter().map(|&g| g as u64).product();
            Ok(reps as f64 * (0.002 + 1e-6 * blocks as f64))
        }
        fn download(&mut self, idx: usize) -> Result<HostBuf> {
            self.bufs
                .get(idx)
                .cloned()
                .ok_or_else(|| anyhow!("no buffer {idx}"))
        }
        fn free(&mut self) {
            self.bufs.clear();
            self.inst = None;
        }
        fn recover(&mut self) -> Result<()> {
            self.recovers += 1;
            self.loaded.clear();
            Ok(())
        }
    }

    fn selection<'a>(s: &'a Suite, names: &[&str]) -> Vec<(&'a KernelDef, Instance)> {
        let mut v = vec![];
        for n in names {
            let k = s.get(n).unwrap();
            // two sizes of each (N = 262144 and 1048576: the spec's two smallest)
            let spec_sizes = |i: &Instance| {
                ["N=262144,", "N=1048576,"]
                    .iter()
                    .any(|p| i.config.starts_with(p))
            };
            for i in instances(k).unwrap().into_iter().filter(spec_sizes).take(2) {
                v.push((k, i));
            }
        }
        v
    }

    fn opts() -> RunOptions {
        RunOptions {
            date: "2026-01-01".into(),
            commit: "test".into(),
            ..Default::default()
        }
    }

    #[test]
    fn run_loop_writes_rows_with_stats_and_provenance() {
        let s = Suite::embedded().unwrap();
        let d = tempfile::tempdir().unwrap();
        let out = ResultsFile::new(&d.path().join("runs.csv"));
        let mut dev = SyntheticDevice::new();
        let sel = selection(&s, &["vector_add", "histogram"]);
        let sum = run(&mut dev, &s, &sel, &out, &opts()).unwrap();
        assert_eq!(
            sum,
            Summary {
                ok: 4,
                errors: 0,
                skipped: 0
            }
        );
        let mut r = csv::Reader::from_path(&out.path).unwrap();
        let h = r.headers().unwrap().clone();
        let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
        assert_eq!(rows.len(), 4);
        let col = |row: &csv::StringRecord, c: &str| {
            row[h.iter().position(|x| x == c).unwrap()].to_string()
        };
        let r0 = &rows[0];
        assert_eq!(col(r0, "kernel"), "vector_add");
        assert_eq!(col(r0, "config"), "N=262144,block=256");
        assert_eq!(col(r0, "status"), "ok");
        assert_eq!(col(r0, "verified"), "true");
        assert_eq!(col(r0, "trials"), "10");
        // synthetic time per launch = 0.002 + 1e-6 * 1024 blocks
        let t: f64 = col(r0, "time_ms").parse().unwrap();
        assert!((t - 0.003024).abs() < 1e-12, "{t}");
        // reps so that a trial lasts >= 1 ms
        let reps: f64 = col(r0, "reps").parse().unwrap();
        assert!(reps * t >= 1.0 && (reps - 1.0) * t < 1.0, "reps {reps}");
        assert_eq!(col(r0, "flops"), "262144");
        assert_eq!(col(r0, "dram_bytes"), "3145728");
        assert_eq!(col(r0, "grid_blocks"), "1024");
        assert_eq!(col(r0, "regs_per_thread"), "32");
        assert_eq!(col(r0, "smem_per_block"), "16");
        assert_eq!(col(r0, "sm_count"), "8");
        assert_eq!(col(r0, "commit"), "test");
        assert_eq!(
            col(r0, "source"),
            format!("gpucast-bench {}", env!("CARGO_PKG_VERSION"))
        );
        assert_eq!(col(&rows[2], "smem_per_block"), "16");
    }

    #[test]
    fn failing_and_hanging_kernels_give_error_rows_and_the_run_goes_on() {
        let s = Suite::embedded().unwrap();
        let d = tempfile::tempdir().unwrap();
        let out = ResultsFile::new(&d.path().join("runs.csv"));
        let mut dev = SyntheticDevice::new();
        dev.compile_fail = vec!["saxpy".into()];
        dev.hang = vec!["reduce_sum".into()];
        dev.wrong_output = vec!["vector_add".into()];
        let sel = selection(&s, &["saxpy", "reduce_sum", "vector_add", "dot_product"]);
        let sum = run(&mut dev, &s, &sel, &out, &opts()).unwrap();
        assert_eq!(
            sum,
            Summary {
                ok: 4,
                errors: 4,
                skipped: 0
            }
        );
        // a hang recovers the context (once per failed configuration)
        assert_eq!(dev.recovers, 2);
        let mut r = csv::Reader::from_path(&out.path).unwrap();
        let h = r.headers().unwrap().clone();
        let col = |row: &csv::StringRecord, c: &str| {
            row[h.iter().position(|x| x == c).unwrap()].to_string()
        };
        let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
        assert_eq!(rows.len(), 8);
        for row in &rows[0..2] {
            assert_eq!(col(row, "status"), "error");
            assert_eq!(col(row, "time_ms"), "");
            assert!(
                col(row, "error").contains("synthetic compile error"),
                "{}",
                col(row, "error")
            );
        }
        assert_eq!(col(&rows[0], "flops"), "524288"); // formulas still filled on error rows
        for row in &rows[2..4] {
            assert_eq!(col(row, "status"), "error");
            assert!(
                col(row, "error").contains("timed out"),
                "{}",
                col(row, "error")
            );
        }
        // wrong output: timed (status ok) but verified=false with the mismatch message
        assert_eq!(col(&rows[4], "status"), "ok");
        assert_eq!(col(&rows[4], "verified"), "false");
        assert!(
            col(&rows[4], "error").starts_with("verify: c: "),
            "{}",
            col(&rows[4], "error")
        );
        assert_eq!(col(&rows[6], "verified"), "true");
        assert_eq!(col(&rows[7], "status"), "ok");
    }

    #[test]
    fn resume_skips_ok_rows_and_retries_errors() {
        let s = Suite::embedded().unwrap();
        let d = tempfile::tempdir().unwrap();
        let out = ResultsFile::new(&d.path().join("runs.csv"));
        let sel = selection(&s, &["vector_add", "saxpy"]);
        let mut dev = SyntheticDevice::new();
        dev.hang = vec!["saxpy".into()];
        let first = run(&mut dev, &s, &sel, &out, &opts()).unwrap();
        assert_eq!(
            first,
            Summary {
                ok: 2,
                errors: 2,
                skipped: 0
            }
        );
        let mut dev = SyntheticDevice::new();
        let o = RunOptions {
            resume: true,
            ..opts()
        };
        let second = run(&mut dev, &s, &sel, &out, &o).unwrap();
        assert_eq!(
            second,
            Summary {
                ok: 2,
                errors: 0,
                skipped: 2
            }
        );
        // third time: everything done
        let mut dev = SyntheticDevice::new();
        let third = run(&mut dev, &s, &sel, &out, &o).unwrap();
        assert_eq!(
            third,
            Summary {
                ok: 0,
                errors: 0,
                skipped: 4
            }
        );
        assert_eq!(dev.launches, 0);
        // a different SM partition is different work
        let mut dev = SyntheticDevice::new();
        dev.info.partition_sms = Some(4);
        let part = run(&mut dev, &s, &sel[..1], &out, &o).unwrap();
        assert_eq!(
            part,
            Summary {
                ok: 1,
                errors: 0,
                skipped: 0
            }
        );
        let text = std::fs::read_to_string(&out.path).unwrap();
        assert_eq!(text.lines().count(), 1 + 4 + 2 + 1);
        // without --resume everything is measured again
        let mut dev = SyntheticDevice::new();
        let again = run(&mut dev, &s, &sel, &out, &opts()).unwrap();
        assert_eq!(again.skipped, 0);
    }
}
