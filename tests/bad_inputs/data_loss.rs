//! Data loss (issue 62): `reproduce`'s manifest is its own, every input a command may
//! read is protected whatever the flags, outputs of one command are checked against
//! each other, and temporaries go on every way out (signals at random points, a
//! file-size limit).
//!
//! Every data file here is SYNTHETIC (written by the test), except the shipped
//! reference study ({ref}).

use super::Expect::*;
use super::{hidden_temporaries, Case, ROW_2080, ROW_TITAN, STUDY_METRICS};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A manifest as `reproduce` writes it, listing `files` (name, content) with the
/// SHA-256 of each content.
pub fn listed(files: &[(&str, &str)]) -> String {
    use sha2::{Digest, Sha256};
    let mut text = String::from("# gpucast reproduce: the files it wrote here\n");
    for (name, content) in files {
        let hash: String = Sha256::digest(content.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        text += &format!("{hash}  {name}\n");
    }
    text
}

/// A SYNTHETIC experiment named `name`: analytical under LOGO.
fn exp(name: &str) -> String {
    format!(
        "name = \"{name}\"\ntitle = \"t\"\nprotocol = {{ name = \"logo\" }}\nmodels = [\"analytical\"]\n"
    )
}

/// `reproduce` of one experiment (`x`) on the reference study into `{dir}/out`, with
/// `extra` arguments.
fn rep(name: &'static str, expect: super::Expect, extra: &[&str]) -> Case {
    let mut args = vec![
        "reproduce",
        "--experiments",
        "{dir}/exps",
        "--out",
        "{dir}/out",
        "--no-plots",
        "--data",
        "{ref}",
    ];
    args.extend_from_slice(extra);
    Case::new(name, expect, &args).with("exps/a.toml", exp("x"))
}

/// The cases of this class, run by the table test with every other.
pub fn cases() -> Vec<Case> {
    let two = super::runs(&[ROW_TITAN, ROW_2080]);
    let refused_manifest = "not the list gpucast reproduce keeps of its files";
    vec![
        // ---- the manifest is gpucast's own, checked before anything is written ----
        rep("manifest that is a link to a user's file", Error(1, "out/.gpucast-reproduce: is a symbolic link, not the list gpucast reproduce keeps"), &[])
            .with("mine.txt", "mine\n").link("out/.gpucast-reproduce", "{dir}/mine.txt").no_file("out/x.md"),
        rep("manifest that is a directory", Error(1, "out/.gpucast-reproduce: is a directory, not the list"), &[])
            .with("out/.gpucast-reproduce/keep", "mine\n").no_file("out/x.md"),
        rep("manifest that is a FIFO", Error(1, "out/.gpucast-reproduce: is a pipe, not the list"), &[])
            .fifo("out/.gpucast-reproduce").no_file("out/summary.md"),
        rep("manifest that is not text", Error(1, refused_manifest), &[])
            .with("out/.gpucast-reproduce", b"\xff\xfe\x00x.md\n").no_file("out/x.md"),
        rep("manifest entry with ..", Error(1, ".gpucast-reproduce:2: '../mine.md' is not a file reproduce writes inside --out"), &[])
            .with("mine.md", "mine\n").with("out/.gpucast-reproduce", listed(&[("../mine.md", "mine\n")])).no_file("out/x.md"),
        rep("manifest entry absolute", Error(1, ".gpucast-reproduce:2: '/tmp/x.md' is not a file reproduce writes inside --out"), &[])
            .with("out/.gpucast-reproduce", listed(&[("/tmp/x.md", "x")])).no_file("out/x.md"),
        rep("manifest entry through a linked directory", Error(1, "'sub/x.md' leads through the symbolic link 'sub'"), &[])
            .with("mine/x.md", "mine\n").link("out/sub", "{dir}/mine").with("out/.gpucast-reproduce", listed(&[("sub/x.md", "mine\n")])).no_file("out/x.md"),
        rep("manifest line added by hand without a hash", Error(1, "x.md: exists and is listed by an older gpucast without its content"), &[])
            .with("out/x.md", "mine\n").with("out/.gpucast-reproduce", "x.md\n").no_file("out/summary.md"),
        rep("manifest line added by hand with a wrong hash", Error(1, "x.md: exists and was changed since gpucast reproduce wrote it"), &[])
            .with("out/x.md", "mine\n").with("out/.gpucast-reproduce", listed(&[("x.md", "what gpucast wrote\n")])).no_file("out/summary.md"),
        rep("an output the user edited since", Error(1, "summary.md: exists and was changed since"), &[])
            .with("out/summary.md", "my notes\n").with("out/.gpucast-reproduce", listed(&[("summary.md", "# Every experiment\n")])).no_file("out/x.md"),
        rep("an output the user replaced by a directory", Error(1, "summary.md: exists and is a directory, not a file gpucast reproduce wrote"), &[])
            .with("out/summary.md/keep", "mine\n").no_file("out/x.md"),
        rep("manifest keeps an earlier run's unchanged files", Stdout("wrote 8 files"), &[])
            .with("out/old.md", "old\n").with("out/.gpucast-reproduce", listed(&[("old.md", "old\n")])).changes("out/.gpucast-reproduce").file_has("out/.gpucast-reproduce", "  old.md"),
        rep("manifest forgets an earlier run's file the user changed", Stdout("wrote 8 files"), &[])
            .with("out/old.md", "mine now\n").with("out/.gpucast-reproduce", listed(&[("old.md", "old\n")])).changes("out/.gpucast-reproduce").file_has("out/.gpucast-reproduce", "  x.md"),
        // ---- every input a command may read is protected, with or without --force ----
        Case::err("train --force -o its study metrics", 1, "g.json: is also an input", &["--force", "train", "--data", "{dir}/r.csv", "--study-metrics", "{dir}/g.json", "-o", "{dir}/g.json"])
            .with("r.csv", &two).with("g.json", STUDY_METRICS),
        Case::err("tune --force -o its study metrics", 1, "g.json: is also an input", &["--force", "tune", "--runs", "{dir}/r.csv", "--target", "RTX 4090", "--study-metrics", "{dir}/g.json", "-o", "{dir}/g.json"])
            .with("r.csv", &two).with("g.json", STUDY_METRICS),
        Case::err("predict --force -o the study metrics beside its runs", 1, "gpu_metrics.json: is also an input", &["--force", "predict", "--runs", "{dir}/r.csv", "--target", "RTX 4090", "-o", "{dir}/gpu_metrics.json"])
            .with("r.csv", &two).with("gpu_metrics.json", STUDY_METRICS),
        Case::err("evaluate --force --predictions its study metrics", 1, "g.csv: is also an input", &["--force", "evaluate", "--data", "{ref}", "--study-metrics", "{dir}/g.csv", "--predictions", "{dir}/g.csv"])
            .with("g.csv", STUDY_METRICS),
        Case::err("train --force -o its catalog", 1, "c.json: is also an input", &["--force", "--gpus", "{dir}/c.json", "train", "--data", "{dir}/r.csv", "-o", "{dir}/c.json"])
            .with("r.csv", &two).with("c.json", super::gpu_entry("Zeta Z9", "8.6", "80", "900.0")),
        rep("reproduce --accuracy-page its data", Error(1, "r.csv: is also an input"), &["--data", "{dir}/r.csv", "--accuracy-page", "{dir}/r.csv"])
            .with("r.csv", &two).no_file("out"),
        rep("reproduce --accuracy-page its experiment file", Error(1, "a.toml: is also an input"), &["--accuracy-page", "{dir}/exps/a.toml"]).no_file("out"),
        rep("reproduce --accuracy-page without its markers, before any work", Error(1, "page.md: the page has no generated section"), &["--accuracy-page", "{dir}/page.md"])
            .with("page.md", "# My page\n").no_file("out"),
        rep("reproduce --accuracy-page a FIFO", Error(1, "page.md: is not a regular file"), &["--accuracy-page", "{dir}/page.md"])
            .fifo("page.md").no_file("out"),
        // ---- outputs of one command are checked against each other before any work ----
        Case::err("tune -o and --write-cache one file", 1, "x.json: --write-cache of this command: -o names it too", &["tune", "--runs", "{dir}/c.json", "--target", "RTX 4090", "-o", "{dir}/x.json", "--write-cache", "{dir}/x.json"])
            .with("c.json", super::CACHE_WITH_FAILURES).no_file("x.json"),
        Case::err("tune -o and --write-cache one file through ..", 1, "--write-cache of this command: -o names it too", &["tune", "--runs", "{dir}/c.json", "--target", "RTX 4090", "-o", "{dir}/new/../x.json", "--write-cache", "{dir}/x.json"])
            .with("c.json", super::CACHE_WITH_FAILURES).no_file("x.json").no_file("new"),
        Case::err("evaluate --predictions and --plots one path", 1, "p.csv: --plots of this command: --predictions names it too", &["evaluate", "--data", "{ref}", "--predictions", "{dir}/p.csv", "--plots", "{dir}/p.csv"])
            .no_file("p.csv"),
        Case::err("evaluate --plots inside --predictions", 1, "--plots of this command: inside", &["evaluate", "--data", "{ref}", "--predictions", "{dir}/p.csv", "--plots", "{dir}/p.csv/charts"])
            .no_file("p.csv"),
        Case::err("evaluate --predictions named as a chart of --plots", 1, "--predictions of this command: --plots writes a file of this name", &["evaluate", "--data", "{ref}", "--plots", "{dir}/pp", "--predictions", "{dir}/pp/logo_error_cdf.svg"])
            .no_file("pp"),
        rep("reproduce --accuracy-page inside --out", Error(1, "out/accuracy.md: --accuracy-page of this command: --out writes a file of this name"), &["--accuracy-page", "{dir}/out/accuracy.md"]).no_file("out"),
        rep("reproduce --accuracy-page its own manifest", Error(1, "--accuracy-page of this command: --out writes a file of this name"), &["--accuracy-page", "{dir}/out/.gpucast-reproduce"])
            .with("out/.gpucast-reproduce", listed(&[])).no_file("out/x.md"),
        Case::new("evaluate --predictions inside --plots", Stderr("wrote 5 charts"), &["evaluate", "--data", "{ref}", "--plots", "{dir}/pp", "--predictions", "{dir}/pp/p.csv"])
            .file_has("pp/p.csv", "measured_ms"),
    ]
}

/// The gpucast binary with `args`, its output thrown away.
fn gpucast(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gpucast"));
    c.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

/// Limit the files `c` may write to `bytes` (RLIMIT_FSIZE: a longer write fails with
/// EFBIG, SIGXFSZ ignored).
fn with_file_size_limit(c: &mut Command, bytes: u64) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe; the closure allocates nothing.
    unsafe {
        c.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// The files under `dir` (relative, sorted) with their content.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    fn walk(root: &Path, d: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
        for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                walk(root, &p, out);
            } else if let Ok(bytes) = std::fs::read(&p) {
                out.push((p.strip_prefix(root).unwrap_or(&p).to_path_buf(), bytes));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// A write that passes the file-size limit fails as an error of one line, and the
/// command leaves nothing: no temporary, no output of a command whose other output
/// failed, no changed file.
#[test]
fn a_file_size_limit_is_an_error_that_leaves_nothing() {
    let reference = crate::common::reference_data();
    let r = reference.to_str().expect("utf-8 path");
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::create_dir_all(d.join("exps")).unwrap();
    std::fs::write(d.join("exps/a.toml"), exp("x")).unwrap();
    std::fs::create_dir_all(d.join("out")).unwrap();
    std::fs::write(d.join("out/notes.txt"), "mine\n").unwrap();
    let before = snapshot(d);
    let s = |p: &str| d.join(p).display().to_string();
    let (exps, out, preds, pp) = (s("exps"), s("out"), s("p.csv"), s("pp"));
    // (the reference study's predictions CSV is about 21 KB and each of its charts
    // over 30 KB: each limit stops one write midway, for evaluate the charts after
    // the predictions are written)
    let runs: [(&str, Vec<&str>, u64); 3] = [
        (
            "reproduce",
            vec![
                "reproduce",
                "--experiments",
                &exps,
                "--out",
                &out,
                "--data",
                r,
            ],
            8 << 10,
        ),
        (
            "evaluate --predictions --plots",
            vec![
                "evaluate",
                "--data",
                r,
                "--predictions",
                &preds,
                "--plots",
                &pp,
            ],
            24 << 10,
        ),
        (
            "evaluate --predictions",
            vec!["evaluate", "--data", r, "--predictions", &preds],
            4 << 10,
        ),
    ];
    for (name, args, limit) in runs {
        let mut c = gpucast(&args);
        with_file_size_limit(&mut c, limit);
        let o = c.output().expect("run gpucast");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(err.contains("File too large"), "{name}: {err}");
        let mut left = Vec::new();
        hidden_temporaries(d, &mut left);
        assert!(left.is_empty(), "{name} left {left:?}");
        let now: Vec<(PathBuf, Vec<u8>)> = snapshot(d);
        assert_eq!(now, before, "{name} changed or left files");
    }
    // (the same runs without the limit write their files: the limit was what failed)
    let o = gpucast(&[
        "evaluate",
        "--data",
        r,
        "--predictions",
        &preds,
        "--plots",
        &pp,
    ])
    .output()
    .expect("run gpucast");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(d.join("p.csv").is_file() && d.join("pp/logo_error_cdf.svg").is_file());
}

/// A small random number generator (xorshift), seeded from the clock and printed, so a
/// failing run can be repeated with GPUCAST_SIGNAL_SEED.
struct Rng(u64);

impl Rng {
    fn new() -> Rng {
        let seed = std::env::var("GPUCAST_SIGNAL_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(1)
            });
        println!("GPUCAST_SIGNAL_SEED={seed}");
        Rng(seed | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Signal runs of `args` at random points, `signals` signals in all (SIGINT, SIGTERM,
/// SIGHUP; one run in five gets a second signal within 2 ms), and after each run check
/// `dir`: no temporary, every file of `keep` as it was, and `consistent` holds.
/// Returns how many runs the signals ended.
fn signal_at_random(
    args: &[String],
    dir: &Path,
    keep: &[(PathBuf, Vec<u8>)],
    signals: usize,
    consistent: &dyn Fn() -> Result<(), String>,
) -> usize {
    let mut rng = Rng::new();
    let run = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_gpucast"));
        c.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        c
    };
    // How long a run takes: the signals fall anywhere from its start to past its end.
    let t = Instant::now();
    assert!(run().status().expect("run").success(), "{args:?} fails");
    let span = (t.elapsed().as_micros() as u64 * 5 / 4).max(1000);
    let (mut sent, mut ended, mut runs) = (0, 0, 0);
    while sent < signals {
        runs += 1;
        let mut child = run().spawn().expect("spawn gpucast");
        std::thread::sleep(Duration::from_micros(rng.below(span)));
        let sigs = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];
        let sig = sigs[rng.below(3) as usize];
        let twice = rng.below(5) == 0;
        for k in 0..1 + twice as usize {
            if child.try_wait().expect("wait").is_some() {
                break;
            }
            if k == 1 {
                std::thread::sleep(Duration::from_micros(rng.below(2000)));
            }
            // SAFETY: kill sends a signal to the child this test spawned and still holds.
            unsafe { libc::kill(child.id() as i32, sig) };
            sent += 1;
        }
        let status = child.wait().expect("wait");
        let code = status.code();
        // (a signal before gpucast set up its cleanup ends it the default way: nothing
        // was written yet)
        use std::os::unix::process::ExitStatusExt;
        assert!(
            code == Some(0) || code == Some(128 + sig) || status.signal() == Some(sig),
            "run {runs} (signal {sig}): exit {status:?}"
        );
        ended += (code == Some(128 + sig)) as usize;
        let mut left = Vec::new();
        hidden_temporaries(dir, &mut left);
        assert!(left.is_empty(), "run {runs} (signal {sig}) left {left:?}");
        for (p, bytes) in keep {
            assert_eq!(
                std::fs::read(p).ok().as_ref(),
                Some(bytes),
                "run {runs} (signal {sig}) changed {}",
                p.display()
            );
        }
        if let Err(e) = consistent() {
            panic!("run {runs} (signal {sig}): {e}");
        }
    }
    println!("{sent} signals, {runs} runs, {ended} ended by a signal");
    ended
}

/// `reproduce` stopped by SIGINT, SIGTERM or SIGHUP at random points, 200 signals in
/// all, on a SYNTHETIC four-GPU table (each run a fraction of a second): no temporary
/// is ever left, the user's files in --out and beside it never change, and the
/// manifest always lists exactly what it says (each listed file with its hash).
#[test]
fn reproduce_stopped_at_random_points_leaves_nothing_and_loses_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let write = |rel: &str, text: &str| {
        let p = d.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).unwrap();
        std::fs::write(&p, text).unwrap();
        (p, text.as_bytes().to_vec())
    };
    write("exps/a.toml", &exp("x"));
    write("r.csv", &crate::common::one_harness_csv(0.005));
    let keep = vec![
        write("out/notes.txt", "mine\n"),
        write("out/x_draft.md", "my draft\n"),
        write("beside.csv", "mine,too\n"),
    ];
    let args: Vec<String> = [
        "reproduce",
        "--experiments",
        &d.join("exps").display().to_string(),
        "--out",
        &d.join("out").display().to_string(),
        "--data",
        &d.join("r.csv").display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let manifest = d.join("out/.gpucast-reproduce");
    let consistent = || -> Result<(), String> {
        let text = std::fs::read_to_string(&manifest).map_err(|e| format!("manifest: {e}"))?;
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let (hash, name) = line.split_once("  ").ok_or(format!("line {line:?}"))?;
            let bytes =
                std::fs::read(d.join("out").join(name)).map_err(|e| format!("{name}: {e}"))?;
            if listed(&[(name, &String::from_utf8_lossy(&bytes))])
                .lines()
                .nth(1)
                != Some(line)
            {
                return Err(format!("{name} does not have the hash {hash} listed"));
            }
        }
        Ok(())
    };
    let started = Instant::now();
    let ended = signal_at_random(&args, d, &keep, 200, &consistent);
    assert!(
        ended >= 50,
        "only {ended} runs were ended by a signal: the test hits too late"
    );
    println!("took {:.1} s", started.elapsed().as_secs_f64());
}

/// `evaluate --plots --predictions` stopped at random points: its staging directory
/// and its temporaries never stay, and the user's file in the chart directory stays.
#[test]
fn evaluate_stopped_at_random_points_leaves_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::write(d.join("r.csv"), crate::common::one_harness_csv(0.005)).unwrap();
    std::fs::create_dir_all(d.join("pp")).unwrap();
    std::fs::write(d.join("pp/notes.txt"), "mine\n").unwrap();
    let keep = vec![(d.join("pp/notes.txt"), b"mine\n".to_vec())];
    let s = |p: &str| d.join(p).display().to_string();
    let args: Vec<String> = [
        "--force",
        "evaluate",
        "--data",
        &s("r.csv"),
        "--predictions",
        &s("p.csv"),
        "--plots",
        &s("pp"),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let consistent = || -> Result<(), String> { Ok(()) };
    signal_at_random(&args, d, &keep, 40, &consistent);
}
