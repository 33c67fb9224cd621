//! The canonical runs table as CSV (shared/specs/data-formats.md §1 plus optional
//! columns): rows, atomic appends, and the `--resume` bookkeeping.
use anyhow::{bail, Context, Result};
use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Column order of files this tool creates: the runs-table contract's runner header
/// (gpucast reads the same list; columns a row has no value for stay empty).
pub const COLUMNS: &[&str] = gpucast_runs::RUNNER_HEADER;

/// One output row; `None`/empty fields are written as empty cells.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row {
    pub gpu: String,
    pub kernel: String,
    pub config: String,
    pub time_ms: Option<f64>,
    pub flops: f64,
    pub dram_bytes: f64,
    pub time_std_ms: Option<f64>,
    pub trials: Option<u32>,
    pub time_min_ms: Option<f64>,
    pub time_median_ms: Option<f64>,
    pub time_cv: Option<f64>,
    pub reps: Option<u32>,
    pub block_threads: u64,
    pub grid_blocks: u64,
    pub regs_per_thread: Option<u32>,
    pub smem_per_block: Option<u32>,
    pub working_set_bytes: f64,
    pub dram_bytes_model: f64,
    pub precision: String,
    pub suite: String,
    pub category: String,
    /// SMs the kernel ran on (the whole GPU unless restricted by --sm-count).
    pub sm_count: Option<u32>,
    /// "ok" or "error".
    pub status: String,
    pub error: String,
    /// "true", "false", or "" when not checked.
    pub verified: String,
    pub driver_version: String,
    pub cuda_version: String,
    pub sm_clock_mhz: Option<u32>,
    pub mem_clock_mhz: Option<u32>,
    pub date: String,
    pub commit: String,
    pub source: String,
}

fn f(v: Option<f64>) -> String {
    v.map(num).unwrap_or_default()
}
fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}
fn u<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

impl Row {
    pub fn get(&self, col: &str) -> Option<String> {
        Some(match col {
            "gpu" => self.gpu.clone(),
            "kernel" => self.kernel.clone(),
            "config" => self.config.clone(),
            "time_ms" => f(self.time_ms),
            "flops" => num(self.flops),
            "dram_bytes" => num(self.dram_bytes),
            "time_std_ms" => f(self.time_std_ms),
            "trials" => u(self.trials),
            "time_min_ms" => f(self.time_min_ms),
            "time_median_ms" => f(self.time_median_ms),
            "time_cv" => f(self.time_cv),
            "reps" => u(self.reps),
            "block_threads" => self.block_threads.to_string(),
            "grid_blocks" => self.grid_blocks.to_string(),
            "regs_per_thread" => u(self.regs_per_thread),
            "smem_per_block" => u(self.smem_per_block),
            "working_set_bytes" => num(self.working_set_bytes),
            "dram_bytes_model" => num(self.dram_bytes_model),
            "precision" => self.precision.clone(),
            "suite" => self.suite.clone(),
            "category" => self.category.clone(),
            "sm_count" => u(self.sm_count),
            "status" => self.status.clone(),
            "error" => self.error.clone(),
            "verified" => self.verified.clone(),
            "driver_version" => self.driver_version.clone(),
            "cuda_version" => self.cuda_version.clone(),
            "sm_clock_mhz" => u(self.sm_clock_mhz),
            "mem_clock_mhz" => u(self.mem_clock_mhz),
            "date" => self.date.clone(),
            "commit" => self.commit.clone(),
            "source" => self.source.clone(),
            _ => return None,
        })
    }
}

/// One CSV line (RFC 4180 quoting), newline-terminated, with one-line cells.
pub fn csv_line(cells: &[String]) -> String {
    let mut s = String::new();
    for (i, c) in cells.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        let c = c.replace(['\n', '\r'], " ");
        if c.contains([',', '"']) || c.starts_with(' ') || c.ends_with(' ') {
            s.push('"');
            s.push_str(&c.replace('"', "\"\""));
            s.push('"');
        } else {
            s.push_str(&c);
        }
    }
    s.push('\n');
    s
}

/// A results file that rows are appended to one complete line at a time.
pub struct ResultsFile {
    pub path: PathBuf,
}

impl ResultsFile {
    pub fn new(path: &Path) -> Self {
        ResultsFile {
            path: path.to_path_buf(),
        }
    }

    fn header(&self) -> Result<Option<Vec<String>>> {
        if !self.path.exists() || std::fs::metadata(&self.path)?.len() == 0 {
            return Ok(None);
        }
        let mut r = csv::ReaderBuilder::new()
            .flexible(true)
            .from_path(&self.path)?;
        Ok(Some(r.headers()?.iter().map(|s| s.to_string()).collect()))
    }

    /// Append one row, laid out by the existing file's header (columns it lacks are
    /// dropped, unknown columns left empty), or by [`COLUMNS`] in a new file.
    pub fn append(&self, row: &Row) -> Result<()> {
        let cols = match self.header()? {
            None => COLUMNS.iter().map(|s| s.to_string()).collect(),
            Some(cols) => {
                if !cols.iter().any(|c| c == "kernel") || !cols.iter().any(|c| c == "config") {
                    bail!(
                        "{} exists but is not a runs table (no kernel/config columns)",
                        self.path.display()
                    );
                }
                cols
            }
        };
        let line = csv_line(
            &cols
                .iter()
                .map(|c| row.get(c).unwrap_or_default())
                .collect::<Vec<_>>(),
        );
        append_lines(&self.path, &csv_line(&cols), &line)
    }
}

/// Append complete lines to a CSV file. A new (or empty) file gets `header` and the
/// lines written to a temporary file in the same directory and renamed into place; an
/// existing file gets the lines in a single write followed by fsync, after a partial
/// last line left by a crash is dropped.
pub fn append_lines(path: &Path, header: &str, lines: &str) -> Result<()> {
    if !path.exists() || std::fs::metadata(path)?.len() == 0 {
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let tmp = dir.join(format!(
            ".{}.tmp{}",
            path.file_name()
                .and_then(|s| s.to_str())
                .unwrap_or("runs.csv"),
            std::process::id()
        ));
        {
            let mut fh =
                File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
            fh.write_all(header.as_bytes())?;
            fh.write_all(lines.as_bytes())?;
            fh.sync_all()?;
        }
        std::fs::rename(&tmp, path).with_context(|| format!("renaming into {}", path.display()))?;
        return Ok(());
    }
    let mut fh = OpenOptions::new().read(true).write(true).open(path)?;
    let len = fh.metadata()?.len();
    let mut last = [0u8; 1];
    fh.seek(SeekFrom::Start(len - 1))?;
    fh.read_exact(&mut last)?;
    if last[0] != b'\n' {
        let mut text = Vec::new();
        fh.seek(SeekFrom::Start(0))?;
        fh.read_to_end(&mut text)?;
        let keep = text
            .iter()
            .rposition(|&b| b == b'\n')
            .map(|p| p + 1)
            .unwrap_or(0);
        fh.set_len(keep as u64)?;
    }
    fh.seek(SeekFrom::End(0))?;
    fh.write_all(lines.as_bytes())?;
    fh.sync_all()?;
    Ok(())
}

/// Key of a measured configuration for `--resume`.
pub type DoneKey = (String, String, String, String);

pub fn done_key(gpu: &str, kernel: &str, config: &str, sm_count: Option<u32>) -> DoneKey {
    (
        gpu.to_string(),
        kernel.to_string(),
        config.to_string(),
        sm_count.map(|s| s.to_string()).unwrap_or_default(),
    )
}

/// (gpu, kernel, canonical config, sm_count) of rows already measured with status ok.
/// Rows that do not parse (e.g. a line cut short by a crash) are ignored.
pub fn done_rows(path: &Path) -> Result<HashSet<DoneKey>> {
    let mut done = HashSet::new();
    if !path.exists() {
        return Ok(done);
    }
    let mut r = csv::ReaderBuilder::new()
        .flexible(true)
        .from_path(path)
        .with_context(|| format!("reading {}", path.display()))?;
    let h = r.headers()?.clone();
    let idx = |n: &str| h.iter().position(|c| c == n);
    let (Some(g), Some(k), Some(c)) = (idx("gpu"), idx("kernel"), idx("config")) else {
        bail!(
            "{}: not a runs table (needs gpu, kernel, config columns)",
            path.display()
        );
    };
    let (st, sm, t) = (idx("status"), idx("sm_count"), idx("time_ms"));
    for rec in r.records() {
        let Ok(rec) = rec else { continue };
        if rec.len() != h.len() {
            continue;
        }
        let ok = match st {
            Some(i) => &rec[i] == "ok",
            None => t.map(|i| !rec[i].is_empty()).unwrap_or(true),
        };
        if ok {
            let smv = sm.map(|i| rec[i].to_string()).unwrap_or_default();
            // Files written before keys were canonical spell them in another order.
            let config =
                gpucast_runs::canonical_config(&rec[c]).unwrap_or_else(|_| rec[c].to_string());
            done.insert((rec[g].to_string(), rec[k].to_string(), config, smv));
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(kernel: &str, config: &str, status: &str) -> Row {
        Row {
            gpu: "Synthetic GPU".into(),
            kernel: kernel.into(),
            config: config.into(),
            time_ms: if status == "ok" { Some(0.5) } else { None },
            flops: 1024.0,
            dram_bytes: 12288.0,
            status: status.into(),
            error: if status == "ok" {
                String::new()
            } else {
                "launch failed: \"bad\", really".into()
            },
            ..Default::default()
        }
    }

    #[test]
    fn quoting() {
        assert_eq!(
            csv_line(&["a".into(), "b,c".into(), "say \"hi\"".into(), "x\ny".into()]),
            "a,\"b,c\",\"say \"\"hi\"\"\",x y\n"
        );
    }

    #[test]
    fn append_creates_then_appends_and_resume_reads_ok_rows() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sub/runs.csv");
        let f = ResultsFile::new(&p);
        f.append(&row("vector_add", "N=262144,block=256", "ok"))
            .unwrap();
        f.append(&row("saxpy", "N=262144,block=256", "error"))
            .unwrap();
        f.append(&Row {
            sm_count: Some(8),
            ..row("vector_add", "N=262144,block=256", "ok")
        })
        .unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let lines: Vec<_> = text.lines().collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0], COLUMNS.join(","));
        assert!(
            lines[1].starts_with("Synthetic GPU,vector_add,\"N=262144,block=256\",0.5,1024,12288,")
        );
        assert!(lines[2].contains(",error,\"launch failed: \"\"bad\"\", really\","));
        // error row: empty time_ms
        assert!(lines[2].starts_with("Synthetic GPU,saxpy,\"N=262144,block=256\",,1024,"));
        let done = done_rows(&p).unwrap();
        assert_eq!(done.len(), 2);
        assert!(done.contains(&done_key(
            "Synthetic GPU",
            "vector_add",
            "N=262144,block=256",
            None
        )));
        assert!(done.contains(&done_key(
            "Synthetic GPU",
            "vector_add",
            "N=262144,block=256",
            Some(8)
        )));
        assert!(!done.contains(&done_key(
            "Synthetic GPU",
            "saxpy",
            "N=262144,block=256",
            None
        )));
        // no temp file left behind
        assert_eq!(std::fs::read_dir(p.parent().unwrap()).unwrap().count(), 1);
    }

    #[test]
    fn header_is_the_contract_and_rows_fill_the_required_columns() {
        use gpucast_runs::{column, ColumnKind};
        // By construction: the header is the contract's list, not a copy of it.
        assert!(std::ptr::eq(COLUMNS, gpucast_runs::RUNNER_HEADER));
        let r = row("vector_add", "N=4,block=256", "ok");
        for c in COLUMNS {
            let spec = column(c).unwrap();
            match spec.kind {
                ColumnKind::Required | ColumnKind::Runner => {
                    assert!(r.get(c).is_some(), "the runner has no value for {c}")
                }
                ColumnKind::Flags => panic!("runners do not write {c}"),
                _ => {}
            }
        }
        // Every value the runner fills is read back by gpucast as a number or a text.
        for c in COLUMNS.iter().filter(|c| r.get(c).is_some()) {
            let spec = column(c).unwrap();
            if spec.numeric && !r.get(c).unwrap().is_empty() {
                assert!(r.get(c).unwrap().parse::<f64>().is_ok(), "{c}");
            }
        }
    }

    #[test]
    fn resume_recognizes_keys_written_in_another_order() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("runs.csv");
        std::fs::write(
            &p,
            "gpu,kernel,config,time_ms,flops,dram_bytes,status\n\
             Synthetic GPU,conv,\"rows=512,cols=512,block=256\",0.5,1,1,ok\n",
        )
        .unwrap();
        let done = done_rows(&p).unwrap();
        assert!(done.contains(&done_key(
            "Synthetic GPU",
            "conv",
            "block=256,cols=512,rows=512",
            None
        )));
    }

    #[test]
    fn partial_last_line_is_dropped_on_append() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("runs.csv");
        let f = ResultsFile::new(&p);
        f.append(&row("vector_add", "N=1,block=256", "ok")).unwrap();
        let mut fh = OpenOptions::new().append(true).open(&p).unwrap();
        fh.write_all(b"Synthetic GPU,saxpy,\"N=1,blo").unwrap();
        drop(fh);
        assert_eq!(done_rows(&p).unwrap().len(), 1);
        f.append(&row("saxpy", "N=1,block=256", "ok")).unwrap();
        let done = done_rows(&p).unwrap();
        assert!(
            done.contains(&done_key("Synthetic GPU", "saxpy", "N=1,block=256", None)),
            "{done:?}"
        );
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(text.lines().count(), 3);
        assert!(text
            .lines()
            .nth(2)
            .unwrap()
            .starts_with("Synthetic GPU,saxpy,\"N=1,block=256\",0.5,"));
    }

    #[test]
    fn existing_file_with_other_columns_is_respected() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("runs.csv");
        std::fs::write(&p, "kernel,gpu,config,time_ms,flops,dram_bytes,extra\n").unwrap();
        ResultsFile::new(&p)
            .append(&row("vector_add", "N=4,block=256", "ok"))
            .unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(
            text.lines().nth(1).unwrap(),
            "vector_add,Synthetic GPU,\"N=4,block=256\",0.5,1024,12288,"
        );
        // without a status column, a row with a time counts as done
        assert_eq!(done_rows(&p).unwrap().len(), 1);
        std::fs::write(d.path().join("x.csv"), "a,b\n1,2\n").unwrap();
        assert!(ResultsFile::new(&d.path().join("x.csv"))
            .append(&row("k", "c", "ok"))
            .is_err());
    }
}
