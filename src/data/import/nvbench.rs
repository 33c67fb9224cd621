//! nvbench results (NVIDIA's CUDA kernel benchmarking library): the CSV a benchmark
//! writes with `--csv FILE` and the JSON it writes with `--json FILE`.
//!
//! Both hold one entry per benchmark state: a benchmark run on one device with one
//! value per axis. The CSV has the columns `Benchmark`, `Device` (its index), `Device
//! Name`, one column per axis (a power-of-two axis twice: `N (pow2)` = `2^10`, then
//! `N` = `1024`), `Skipped` (`Yes` / `No`), then one column per summary, its unit in
//! the header: `GPU Time (sec)` followed by its `Noise (%)`, `Batch GPU (sec)`,
//! `GlobalMem BW (bytes/sec)`, ... The JSON has `devices` (id, name) and `benchmarks`,
//! each with `states` holding `device`, `axis_values` and `summaries` tagged
//! `nv/cold/time/gpu/mean`, `nv/cold/time/gpu/stdev/relative`,
//! `nv/batch/time/gpu/mean`, `nv/cold/bw/global/bytes_per_second`, their values
//! written as text.
//!
//! Mapping: kernel <- the benchmark's name; config <- the axis values (the canonical
//! key); gpu <- the device's name, which must name one GPU of the catalog (matched,
//! never guessed); time_ms <- the mean isolated GPU time (seconds in both files,
//! converted), or the batch GPU time when a state has no isolated time (counted and
//! said in the report); time_std_ms <- the GPU noise (a relative deviation) x time;
//! dram_bytes <- the bytes the benchmark declared (global memory reads + writes, as
//! `bandwidth x time` when only the bandwidth is written, or a `... (bytes)` column
//! naming reads or writes); flops <- a workload description (datasets/workloads)
//! whose `kernel_name` is the benchmark's name, with the axes as its variables, since
//! nvbench records none. Skipped states are counted (`skipped`), not imported; the
//! same work on a second device of the same model is counted (`duplicate_config`).

use super::common::{FileReport, ImportOptions, Imported, Importer, Missing, Probe};
use super::kernel_tuner::{canonical_key, ParamValue};
use crate::data::workload::Matched;
use crate::data::{Name, Origin, Run};
use crate::error::{Error, Position, Result};
use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::Arc;

/// The format's name for `--from`.
pub const FORMAT: &str = "nvbench";

/// The reason a skipped state is not imported.
pub const SKIPPED: &str = "skipped";

/// nvbench's CSV and JSON results (`--from nvbench`).
pub struct Nvbench;

impl Importer for Nvbench {
    fn name(&self) -> &'static str {
        FORMAT
    }
    fn describe(&self) -> &'static str {
        "nvbench --csv (Benchmark, Device, Device Name, axes, Skipped, GPU Time (sec), ...) or --json results"
    }
    fn detect(&self, probe: &Probe) -> bool {
        if probe.is_json() {
            return probe.has_json_key("benchmarks")
                && (probe.has_json_key("devices") || probe.has_json_key("states"));
        }
        probe.has_columns(&["Benchmark", "Device", "Device Name", "Skipped"])
    }
    fn takes_file_name(&self, name: &str) -> bool {
        name.ends_with(".csv") || name.ends_with(".json")
    }
    fn read(&self, path: &Path, opts: &ImportOptions) -> Result<Imported> {
        let file = path.display().to_string();
        let text = super::kernel_tuner::read_text(path)?;
        let states = if Probe::new(path)?.is_json() {
            json_states(&text, &file)?
        } else {
            csv_states(&text, &file)?
        };
        to_runs(states, &file, opts)
    }
}

/// One benchmark state as either file writes it, times in seconds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct State {
    pub benchmark: String,
    pub device_name: String,
    pub axes: Vec<(String, ParamValue)>,
    pub skipped: bool,
    /// Mean isolated GPU time (s).
    pub gpu_time_s: Option<f64>,
    /// Mean batch GPU time (s).
    pub batch_time_s: Option<f64>,
    /// Relative standard deviation of the isolated GPU times.
    pub noise: Option<f64>,
    /// Global memory bytes read and written, as declared.
    pub bytes: Option<f64>,
    /// Global memory bandwidth (bytes/s), when the bytes themselves are not written.
    pub bandwidth: Option<f64>,
    /// Where the state is: its line (CSV) or its place in the JSON document.
    pub at: Position,
}

/// A time column's factor to seconds from the unit its header ends with; a time
/// column without a unit is refused (nvbench writes "(sec)").
fn time_unit(header: &str, file: &str) -> Result<f64> {
    let unit = header
        .rsplit_once('(')
        .map(|(_, u)| u.trim_end_matches(')').trim().to_ascii_lowercase());
    match unit.as_deref() {
        Some("sec" | "s") => Ok(1.0),
        Some("ms") => Ok(1e-3),
        Some("us" | "µs") => Ok(1e-6),
        Some("ns") => Ok(1e-9),
        _ => Err(Error::parse(
            file,
            Position::Line(1),
            Some(header),
            "a time column without its unit: nvbench writes 'GPU Time (sec)'; say the unit in the header ((sec), (ms), (us) or (ns))",
        )),
    }
}

/// The states of an nvbench CSV.
pub fn csv_states(text: &str, file: &str) -> Result<Vec<State>> {
    let mut lines = text.lines().enumerate();
    let Some((_, header)) = lines.next() else {
        return Err(Error::parse_file(file, "empty file"));
    };
    let header = split_csv_line(header.trim_start_matches('\u{feff}'));
    let col = |name: &str| header.iter().position(|h| h == name);
    let missing = |name: &str| {
        Error::parse(
            file,
            Position::Line(1),
            None,
            format!("not an nvbench CSV: no column '{name}' (nvbench --csv writes Benchmark, Device, Device Name, the axes, Skipped, then the summaries)"),
        )
    };
    let bench = col("Benchmark").ok_or_else(|| missing("Benchmark"))?;
    let name = col("Device Name").ok_or_else(|| missing("Device Name"))?;
    let skipped = col("Skipped").ok_or_else(|| missing("Skipped"))?;
    // Axes: between the device's name and Skipped; a power-of-two axis's "(pow2)"
    // column is its exponent, the plain one beside it the value.
    let axes: Vec<usize> = (name + 1..skipped)
        .filter(|&i| !header[i].ends_with(" (pow2)"))
        .collect();
    let gpu_time = col_starting(&header, "GPU Time");
    let batch = col_starting(&header, "Batch GPU");
    let noise = gpu_time
        .map(|i| i + 1)
        .filter(|&i| header.get(i).is_some_and(|h| h.starts_with("Noise")));
    let bandwidth = col_starting(&header, "GlobalMem BW");
    let byte_cols: Vec<usize> = header
        .iter()
        .enumerate()
        .filter(|(_, h)| {
            let l = h.to_ascii_lowercase();
            l.ends_with("(bytes)") && (l.contains("read") || l.contains("write"))
        })
        .map(|(i, _)| i)
        .collect();
    let gpu_unit = gpu_time.map(|i| time_unit(&header[i], file)).transpose()?;
    let batch_unit = batch.map(|i| time_unit(&header[i], file)).transpose()?;
    let mut out = Vec::new();
    for (i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let at = Position::Line(i + 1);
        let cells = split_csv_line(line);
        let cell = |c: usize| cells.get(c).map(|s| s.trim()).filter(|s| !s.is_empty());
        let number = |c: usize| -> Result<Option<f64>> {
            match cell(c) {
                None => Ok(None),
                Some(s) => s.parse::<f64>().map(Some).map_err(|_| {
                    Error::parse(
                        file,
                        at,
                        Some(&header[c]),
                        format!("expected a number, found '{s}'"),
                    )
                }),
            }
        };
        let mut state = State {
            benchmark: cell(bench).unwrap_or_default().to_string(),
            device_name: cell(name).unwrap_or_default().to_string(),
            skipped: match cell(skipped) {
                Some("Yes") => true,
                Some("No") | None => false,
                Some(other) => {
                    return Err(Error::parse(
                        file,
                        at,
                        Some("Skipped"),
                        format!("expected Yes or No, found '{other}'"),
                    ))
                }
            },
            at,
            ..State::default()
        };
        for &a in &axes {
            if let Some(v) = cell(a) {
                state.axes.push((header[a].clone(), param_value(v)));
            }
        }
        if !state.skipped {
            state.gpu_time_s = gpu_time
                .map(&number)
                .transpose()?
                .flatten()
                .map(|t| t * gpu_unit.unwrap_or(1.0));
            state.batch_time_s = batch
                .map(&number)
                .transpose()?
                .flatten()
                .map(|t| t * batch_unit.unwrap_or(1.0));
            state.noise = noise.map(&number).transpose()?.flatten();
            state.bandwidth = bandwidth.map(&number).transpose()?.flatten();
            let mut bytes = None;
            for &c in &byte_cols {
                if let Some(b) = number(c)? {
                    *bytes.get_or_insert(0.0) += b;
                }
            }
            state.bytes = bytes;
        }
        out.push(state);
    }
    Ok(out)
}

/// The column named `name`, with or without a unit in parentheses after it.
fn col_starting(header: &[String], name: &str) -> Option<usize> {
    header.iter().position(|h| {
        h == name
            || h.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with(" ("))
    })
}

/// An axis value: a number when it reads as one, else text.
fn param_value(s: &str) -> ParamValue {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() => ParamValue::Number(v),
        _ => ParamValue::Text(s.to_string()),
    }
}

/// The cells of one CSV line (double quotes around a cell dropped, `""` inside one
/// read as a quote).
fn split_csv_line(line: &str) -> Vec<String> {
    let line = line.trim_end_matches('\r');
    let mut cells = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => cells.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    cells.push(cur);
    cells
}

mod json {
    //! The parts of nvbench's JSON the importer reads.
    use serde::Deserialize;

    #[derive(Deserialize)]
    pub struct Root {
        #[serde(default)]
        pub devices: Vec<Device>,
        pub benchmarks: Vec<Bench>,
    }
    #[derive(Deserialize)]
    pub struct Device {
        pub id: i64,
        pub name: String,
    }
    #[derive(Deserialize)]
    pub struct Bench {
        pub name: String,
        #[serde(default)]
        pub states: Vec<State>,
    }
    #[derive(Deserialize)]
    pub struct State {
        pub device: Option<i64>,
        #[serde(default)]
        pub axis_values: Vec<Named>,
        #[serde(default)]
        pub summaries: Vec<Summary>,
        #[serde(default)]
        pub is_skipped: bool,
    }
    #[derive(Deserialize)]
    pub struct Named {
        pub name: String,
        #[serde(default)]
        pub value: serde_json::Value,
    }
    #[derive(Deserialize)]
    pub struct Summary {
        pub tag: String,
        #[serde(default)]
        pub data: Vec<Named>,
    }
}

/// The states of an nvbench JSON document (read into the fields the import uses, not
/// kept whole).
pub fn json_states(text: &str, file: &str) -> Result<Vec<State>> {
    let root: json::Root = serde_json::from_str(text).map_err(|e| {
        Error::parse(
            file,
            Position::LineColumn(e.line(), e.column()),
            None,
            format!(
                "not an nvbench JSON result: {}",
                e.to_string().split(" at line ").next().unwrap_or_default()
            ),
        )
    })?;
    let names: BTreeMap<i64, &str> = root
        .devices
        .iter()
        .map(|d| (d.id, d.name.as_str()))
        .collect();
    let mut out = Vec::new();
    for (b, bench) in root.benchmarks.iter().enumerate() {
        for (s, st) in bench.states.iter().enumerate() {
            let place = format!("benchmarks[{b}].states[{s}]");
            let bad =
                |what: String| Error::parse(file, Position::File, None, format!("{place}: {what}"));
            let device_name = match st.device {
                Some(id) => names
                    .get(&id)
                    .ok_or_else(|| bad(format!("device {id} is not in the file's 'devices'")))?
                    .to_string(),
                None => String::new(),
            };
            let mut state = State {
                benchmark: bench.name.clone(),
                device_name,
                skipped: st.is_skipped,
                at: Position::File,
                ..State::default()
            };
            for a in &st.axis_values {
                let v = match &a.value {
                    serde_json::Value::String(s) => param_value(s),
                    serde_json::Value::Number(n) => n
                        .as_f64()
                        .map_or(ParamValue::Text(n.to_string()), ParamValue::Number),
                    other => ParamValue::Text(other.to_string()),
                };
                state.axes.push((a.name.clone(), v));
            }
            if !state.skipped {
                for summ in &st.summaries {
                    let Some(v) = summ.data.iter().find(|d| d.name == "value") else {
                        continue;
                    };
                    let number = match &v.value {
                        serde_json::Value::String(s) => s.trim().parse::<f64>().ok(),
                        serde_json::Value::Number(n) => n.as_f64(),
                        _ => None,
                    };
                    let slot = match summ.tag.as_str() {
                        "nv/cold/time/gpu/mean" => &mut state.gpu_time_s,
                        "nv/batch/time/gpu/mean" => &mut state.batch_time_s,
                        "nv/cold/time/gpu/stdev/relative" => &mut state.noise,
                        "nv/cold/bw/global/bytes_per_second" => &mut state.bandwidth,
                        _ => continue,
                    };
                    *slot = Some(number.ok_or_else(|| {
                        bad(format!("summary '{}': its value is not a number", summ.tag))
                    })?);
                }
            }
            out.push(state);
        }
    }
    Ok(out)
}

/// Runs from states, with the import report.
fn to_runs(states: Vec<State>, file: &str, opts: &ImportOptions) -> Result<Imported> {
    let catalog = opts.catalog();
    let file_arc: Arc<str> = Arc::from(file);
    let mut report = FileReport {
        file: file.to_string(),
        format: FORMAT.into(),
        ..FileReport::default()
    };
    let mut names = crate::data::SharedNames::default();
    let source = opts.source.clone().unwrap_or_else(|| {
        format!(
            "nvbench:{}",
            Path::new(file)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        )
    });
    let mut runs = Vec::new();
    let mut seen = HashSet::new();
    let (mut batch_rows, mut no_flops, mut no_bytes) = (0, 0, 0);
    let mut workloads_used: Vec<String> = Vec::new();
    let mut resolved: BTreeMap<String, ()> = BTreeMap::new();
    for (row, st) in states.into_iter().enumerate() {
        let mut fail = |reason: &str| {
            *report.failed.entry(reason.to_string()).or_default() += 1;
        };
        if st.skipped {
            fail(SKIPPED);
            continue;
        }
        let (time_s, from_batch) = match (st.gpu_time_s, st.batch_time_s) {
            (Some(t), _) => (t, false),
            (None, Some(t)) => (t, true),
            (None, None) => {
                fail("no_time");
                continue;
            }
        };
        let time_ms = time_s * 1e3;
        if !time_ms.is_finite() || time_ms <= 0.0 || time_ms > super::common::ABSURD_TIME_MS {
            fail("absurd_time");
            continue;
        }
        let gpu = match (st.device_name.as_str(), opts.gpu.as_deref()) {
            ("", Some(given)) => given.to_string(),
            ("", None) => {
                return Err(Error::parse(
                    file,
                    st.at,
                    Some("Device Name"),
                    "no device name: give the GPU it ran on with --gpu",
                ))
            }
            (name, _) => name.to_string(),
        };
        if !resolved.contains_key(&gpu) {
            if catalog.resolve(&gpu).is_none() {
                return Err(Error::unknown_gpu(
                    &gpu,
                    file,
                    st.at,
                    "column 'Device Name'",
                    catalog.unresolved_hint(&gpu),
                ));
            }
            resolved.insert(gpu.clone(), ());
        }
        let config = canonical_key(&st.axes);
        if !seen.insert((gpu.clone(), st.benchmark.clone(), config.clone())) {
            *report
                .left_out
                .entry("duplicate_config".into())
                .or_default() += 1;
            continue;
        }
        let mut run = Run {
            gpu: names.get(&gpu),
            kernel: names.get(&st.benchmark),
            config: config.into(),
            time_ms,
            time_std_ms: st
                .noise
                .filter(|n| n.is_finite() && *n >= 0.0 && !from_batch)
                .map(|n| n * time_ms),
            source: Some(names.get(&source)),
            origin: Origin {
                file: file_arc.clone(),
                row: row + 1,
                line: match st.at {
                    Position::Line(l) => Some(l),
                    _ => None,
                },
            },
            ..Run::default()
        };
        let declared = st.bytes.or_else(|| {
            // (nvbench writes bandwidth = declared bytes / the isolated mean time)
            st.bandwidth
                .zip(st.gpu_time_s)
                .map(|(bw, t)| (bw * t).round())
        });
        let env: crate::data::workload::Env = st
            .axes
            .iter()
            .filter_map(|(k, v)| match v {
                ParamValue::Number(x) => Some((k.clone(), *x)),
                ParamValue::Text(_) => None,
            })
            .collect();
        let axis_names: Vec<String> = st.axes.iter().map(|(k, _)| k.clone()).collect();
        let mut flops = None;
        let mut model_bytes = None;
        if let Matched::Found(w) = opts.workloads.find(&st.benchmark, &axis_names, None)? {
            if !workloads_used.contains(&w.origin) {
                workloads_used.push(w.origin.clone());
            }
            run.suite = w.suite.clone().map(Name::from);
            run.category = w.category.clone().map(Name::from);
            run.precision = w.precision.clone().map(Name::from);
            for (column, value) in w.evaluate(&env) {
                match (column.as_str(), value) {
                    ("flops", Ok(v)) if v >= 0.0 => flops = Some(v),
                    ("dram_bytes", Ok(v)) if v >= 0.0 => model_bytes = Some(v),
                    (_, Ok(v)) if v >= 0.0 => {
                        if let Some(slot) = run.numeric_mut(&column) {
                            *slot = Some(v);
                        }
                    }
                    _ => {}
                }
            }
        }
        let bytes = declared.or(model_bytes);
        if flops.is_none() && bytes.is_none() {
            *report.left_out.entry("no_work_measure".into()).or_default() += 1;
            continue;
        }
        no_flops += usize::from(flops.is_none());
        no_bytes += usize::from(bytes.is_none());
        batch_rows += usize::from(from_batch);
        run.flops = flops.unwrap_or(0.0);
        run.dram_bytes = bytes.unwrap_or(0.0);
        runs.push(run);
    }
    if no_flops > 0 {
        report.missing.push(Missing {
            feature: "flops".into(),
            rows: no_flops,
            why: "nvbench records no FLOPs and no workload description (datasets/workloads, --workloads) names the benchmark".into(),
        });
    }
    if no_bytes > 0 {
        report.missing.push(Missing {
            feature: "dram_bytes".into(),
            rows: no_bytes,
            why: "the benchmark declared no global memory reads or writes".into(),
        });
    }
    if batch_rows > 0 {
        report.notes.push(format!(
            "{batch_rows} row(s) timed by Batch GPU (back-to-back launches): the state has no isolated GPU Time"
        ));
    }
    report.workload = (!workloads_used.is_empty()).then(|| workloads_used.join(", "));
    super::common::one_table_import(runs, Vec::new(), &[], file, "Device Name", report, &[])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SYNTHETIC: the CSV layout nvbench writes (a pow2 axis, a skipped state, the
    /// CPU and GPU noise columns of the same name).
    const CSV: &str = "Benchmark,Device,Device Name,T,Elements (pow2),Elements,Skipped,Samples,CPU Time (sec),Noise (%),GPU Time (sec),Noise (%),GlobalMem BW (bytes/sec),BWUtil (%),Samples,Batch GPU (sec)\n\
copy,0,NVIDIA H100 80GB HBM3,F32,2^20,1048576,No,1000,2.1e-05,0.05,2.0e-05,0.01,419430400000,0.12,20000,1.9e-05\n\
copy,0,NVIDIA H100 80GB HBM3,F32,2^22,4194304,Yes,,,,,,,,,\n";

    #[test]
    fn csv_states_take_axes_times_noise_and_bandwidth() {
        let s = csv_states(CSV, "t.csv").unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].benchmark, "copy");
        assert_eq!(
            s[0].axes,
            vec![
                ("T".to_string(), ParamValue::Text("F32".into())),
                ("Elements".to_string(), ParamValue::Number(1048576.0))
            ]
        );
        assert_eq!(s[0].gpu_time_s, Some(2.0e-5));
        assert_eq!(s[0].noise, Some(0.01), "the GPU's noise, not the CPU's");
        assert_eq!(s[0].batch_time_s, Some(1.9e-5));
        assert!(s[1].skipped && s[1].gpu_time_s.is_none());
    }

    #[test]
    fn a_time_column_without_a_unit_is_refused() {
        let e = csv_states(
            "Benchmark,Device,Device Name,Skipped,GPU Time\nb,0,X,No,1\n",
            "t.csv",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("column 'GPU Time': a time column without its unit"),
            "{e}"
        );
    }

    #[test]
    fn quoted_cells_keep_their_commas() {
        assert_eq!(
            split_csv_line("a,\"b,c\",\"d\"\"e\""),
            vec!["a", "b,c", "d\"e"]
        );
    }
}
