//! Names, bounds, bombs, unclear errors (issue 62): GPU names with look-alike or
//! invisible characters at every place a name enters, `--gpus` entries that replace a
//! known GPU, hostile model files and counts, files whose claimed sizes would exhaust
//! memory or time, and errors that must say what is wrong in the user's words.
//! Every file here is SYNTHETIC (written by the case) or a shipped test fixture.

use super::*;
use polars::prelude::*;

/// "RTX 3090 Ti" with a Cyrillic TE (U+0422) and I (U+0456) for "Ti".
const CYRILLIC_TI: &str = "RTX 3090 \u{0422}\u{0456}";
/// What every refusal of [`CYRILLIC_TI`] says: the character and the GPU it looks like.
const CYRILLIC_SAID: &str = "'\u{0422}' (U+0422 CYRILLIC CAPITAL LETTER TE, which looks like the Latin 'T') and 1 other such character: GPU names are written in ASCII letters, digits and punctuation; read as it looks, it is GPU 'NVIDIA GeForce RTX 3090 Ti'";

/// A Parquet file of `df` (written by polars here: SYNTHETIC rows).
fn parquet_of(mut df: DataFrame) -> Vec<u8> {
    let mut out = Vec::new();
    ParquetWriter::new(&mut out)
        .finish(&mut df)
        .expect("write parquet");
    out
}

/// A two-row runs table as Parquet, its GPUs `gpus`.
fn runs_parquet(gpus: [&str; 2]) -> Vec<u8> {
    parquet_of(
        df!(
            "gpu" => gpus,
            "kernel" => ["saxpy", "saxpy"],
            "config" => ["N=1024", "N=1024"],
            "time_ms" => [0.01, 0.02],
            "flops" => [2048.0, 2048.0],
            "dram_bytes" => [12288.0, 12288.0]
        )
        .expect("frame"),
    )
}

/// A ZigZag varint of the Thrift compact protocol (how a footer writes an i64).
fn varint(v: i64) -> Vec<u8> {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    let mut out = Vec::new();
    loop {
        let b = (z & 0x7f) as u8;
        z >>= 7;
        if z == 0 {
            out.push(b);
            return out;
        }
        out.push(b | 0x80);
    }
}

/// `parquet` (two rows, as [`runs_parquet`] writes it) with its footer's row count
/// (`file`) and/or its row group's (`group`) replaced: the footer is re-framed
/// around the longer varint, the pages left as they are.
fn claiming_rows(parquet: &[u8], file: Option<i64>, group: Option<i64>) -> Vec<u8> {
    let n = parquet.len();
    assert_eq!(&parquet[n - 4..], b"PAR1");
    let len = u32::from_le_bytes(parquet[n - 8..n - 4].try_into().unwrap()) as usize;
    let mut footer = parquet[n - 8 - len..n - 8].to_vec();
    let find = |f: &[u8], pat: &[u8], last: bool| {
        let mut hits = f.windows(pat.len()).enumerate().filter(|(_, w)| *w == pat);
        let at = if last { hits.next_back() } else { hits.next() };
        at.map(|(i, _)| i).expect("the footer's row count")
    };
    // (the row group's num_rows, field 3, follows its total_byte_size and precedes
    // its file_offset: 0x16 <2> 0x26; the file's follows the schema list's end)
    if let Some(rows) = group {
        let at = find(&footer, &[0x16, 0x04, 0x26], true) + 1;
        footer.splice(at..at + 1, varint(rows));
    }
    if let Some(rows) = file {
        let at = find(&footer, &[0x00, 0x16, 0x04, 0x19], false) + 2;
        footer.splice(at..at + 1, varint(rows));
    }
    let mut out = parquet[..n - 8 - len].to_vec();
    out.extend_from_slice(&footer);
    out.extend_from_slice(&(footer.len() as u32).to_le_bytes());
    out.extend_from_slice(b"PAR1");
    out
}

/// gzip of `bytes`.
fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// A runs CSV of one row with `extra` columns of the user's own.
fn wide_csv(extra: usize) -> String {
    let names: Vec<String> = (0..extra).map(|i| format!("x{i}")).collect();
    let ones = vec!["1"; extra];
    format!(
        "{HEADER},{}\n{ROW_TITAN},{}\n",
        names.join(","),
        ones.join(",")
    )
}

pub(super) fn names_bounds_cases() -> Vec<Case> {
    use Expect::*;
    let two = runs(&[ROW_TITAN, ROW_2080]);
    let target = |name: &'static str, q: &str, fragment: &'static str| {
        Case::err(
            name,
            2,
            fragment,
            &["predict", "--runs", "{dir}/r.csv", "--target", q],
        )
        .with("r.csv", runs(&[ROW_TITAN, ROW_2080]))
    };
    let row = |gpu: &str| runs(&[&format!("{gpu},saxpy,N=1024,0.01,2048,12288")]);
    let cache_of = |gpu: &str| CACHE_WITH_FAILURES.replace("Tesla V100-PCIE-32GB", gpu);
    let gemm = String::from_utf8(fixture("gemm_table/a100_sxm_trtllm-1.0.0_n4096_k4096.csv"))
        .expect("utf-8 fixture");
    let ncu = String::from_utf8(fixture("ncu/rtx5090_kernel_0003.csv")).expect("utf-8 fixture");
    let ncu_args = [
        "data",
        "import",
        "--from",
        "ncu",
        "--gpu",
        "RTX 5090",
        "{dir}/n.csv",
        "-o",
        "{dir}/o.csv",
    ];
    let neusight = String::from_utf8(fixture("neusight/nvidia-train/add/Tesla_T4.csv"))
        .expect("utf-8 fixture");
    let neusight_args = [
        "data",
        "import",
        "--from",
        "neusight",
        "{dir}/n.csv",
        "-o",
        "{dir}/o.csv",
    ];
    let mut pnpoly = String::new();
    flate2::read::GzDecoder::new(&fixture("kernel_tuner/pnpoly_RTX_3090_subset.json.gz")[..])
        .read_to_string(&mut pnpoly)
        .expect("the pnpoly fixture");
    assert!(
        pnpoly.contains("\"objective\": \"time\""),
        "the fixture tunes for time"
    );
    let known = |fields: &str| format!("[[gpu]]\nname = \"RTX 3090\"\n{fields}");
    let good_parquet = runs_parquet(["NVIDIA TITAN V", "NVIDIA GeForce RTX 2080 Ti"]);
    let h100 = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/own/h100-80gb-hbm3");
    let h = |f: &str| h100.join(f).display().to_string();
    let corun_args = [
        "--gpus".to_string(),
        h("calibration.toml"),
        "corun".into(),
        "--target".into(),
        "H100 SXM5".into(),
        "--runs".into(),
        h("runs.csv"),
        h("runs_partitions.csv"),
        h("ncu/stream_write.csv"),
        h("ncu/stencil_5pt.csv"),
        "--kernel".into(),
        "stencil_5pt@rows=4096,block=256,cols=4096:64".into(),
        "--kernel".into(),
        "stream_write@block=256,N=67108864:64".into(),
        "--format".into(),
        "csv".into(),
    ];
    let corun_args: Vec<&str> = corun_args.iter().map(String::as_str).collect();
    vec![
        // ---- GPU names with look-alike or invisible characters, at every entry ----
        target("target with a Cyrillic 'Ti'", CYRILLIC_TI, CYRILLIC_SAID),
        target("target with a zero-width space", "RTX\u{200B} 4090", "--target: unknown GPU 'RTX\u{200B} 4090': an invisible character (U+200B ZERO WIDTH SPACE): GPU names are written in ASCII letters, digits and punctuation; read as it looks, it is GPU 'NVIDIA GeForce RTX 4090'"),
        target("target with a Greek capital alpha", "\u{0391}100 SXM4 80GB", "U+0391 GREEK CAPITAL LETTER ALPHA, which looks like the Latin 'A'): GPU names are written in ASCII letters, digits and punctuation; read as it looks, it is GPU 'NVIDIA A100 SXM4 80GB'"),
        target("target in another script", "\u{0420}\u{0422}\u{0425} \u{044F}", "and 3 other such characters: GPU names are written in ASCII letters, digits and punctuation"),
        target("target partition with a Cyrillic EN", "\u{041D}100 SXM5 [16 SMs]", "U+041D CYRILLIC CAPITAL LETTER EN"),
        Case::new("target in full-width letters", Stdout("on NVIDIA GeForce RTX 4090"), &["predict", "--runs", "{dir}/r.csv", "--target", "\u{FF32}\u{FF34}\u{FF38} \u{FF14}\u{FF10}\u{FF19}\u{FF10}"]).with("r.csv", &two),
        Case::err("--source with a Cyrillic letter", 2, "--source: unknown GPU '\u{0422}ITAN V': '\u{0422}' (U+0422 CYRILLIC CAPITAL LETTER TE", &["predict", "--runs", "{dir}/r.csv", "--target", "RTX 4090", "--source", "\u{0422}ITAN V"]).with("r.csv", &two),
        Case::err("tune --target with a Cyrillic 'Ti'", 2, CYRILLIC_SAID, &["tune", "--runs", "{dir}/r.csv", "--target", CYRILLIC_TI]).with("r.csv", &two),
        Case::err("gpus show with a Cyrillic A", 2, "'\u{0410}' (U+0410 CYRILLIC CAPITAL LETTER A, which looks like the Latin 'A'): GPU names are written in ASCII letters, digits and punctuation; read as it looks, it is GPU 'NVIDIA RTX A6000'", &["gpus", "show", "RTX \u{0410}6000"]),
        Case::err("data validate --gpu with a Cyrillic 'Ti'", 2, CYRILLIC_SAID, &["data", "validate", "{dir}/r.csv", "--gpu", CYRILLIC_TI]).with("r.csv", &two),
        Case::err("data show --gpu with a zero-width joiner", 2, "U+200D ZERO WIDTH JOINER", &["data", "show", "{dir}/r.csv", "--gpu", "TITAN\u{200D} V"]).with("r.csv", &two),
        Case::err("Nsight Compute --gpu with a Cyrillic HA", 2, "U+0425 CYRILLIC CAPITAL LETTER HA, which looks like the Latin 'X'): GPU names are written in ASCII letters, digits and punctuation; read as it looks, it is GPU 'NVIDIA GeForce RTX 5090'", &["data", "import", "--from", "ncu", "--gpu", "RT\u{0425} 5090", "{fx}/ncu/rtx5090_kernel_0003.csv", "-o", "{dir}/o.csv"]).no_file("o.csv"),
        Case::err("rank --targets with a Cyrillic 'Ti'", 2, CYRILLIC_SAID, &["rank", "--runs", "{dir}/r.csv", "--kernel", "saxpy", "--source", "TITAN V", "--targets", &format!("RTX 4090,{CYRILLIC_TI}")]).with("r.csv", &two),
        Case::err("rank --prices of a GPU with a Cyrillic 'Ti'", 1, "p.toml:1:1: unknown GPU 'RTX 3090 \u{0422}\u{0456}': '\u{0422}' (U+0422", &["rank", "--runs", "{dir}/r.csv", "--kernel", "saxpy", "--source", "TITAN V", "--targets", "RTX 4090", "--prices", "{dir}/p.toml"]).with("r.csv", &two).with("p.toml", format!("\"{CYRILLIC_TI}\" = 1.0\n")),
        validate("runs table GPU with a Cyrillic 'Ti'", row(&format!("NVIDIA GeForce {CYRILLIC_TI}")), Error(1, "a.csv:2: column 'gpu': unknown GPU 'NVIDIA GeForce RTX 3090 \u{0422}\u{0456}': '\u{0422}' (U+0422 CYRILLIC CAPITAL LETTER TE")),
        validate("runs table GPU with a zero-width space on a later line", runs(&[ROW_TITAN, "NVIDIA GeForce RTX 2080\u{200B} Ti,saxpy,N=1,0.01,2048,12288"]), Error(1, "a.csv:3: column 'gpu': unknown GPU 'NVIDIA GeForce RTX 2080\u{200B} Ti': an invisible character (U+200B ZERO WIDTH SPACE)")),
        Case::err("Parquet runs GPU with a Cyrillic 'Ti'", 1, "column 'gpu': unknown GPU 'NVIDIA GeForce RTX 3090 \u{0422}\u{0456}': '\u{0422}' (U+0422", &["data", "validate", "{dir}/a.parquet"]).with("a.parquet", runs_parquet(["NVIDIA TITAN V", "NVIDIA GeForce RTX 3090 \u{0422}\u{0456}"])),
        Case::err("cache device with a Cyrillic IE", 1, "c.json: line 1, column 2: 'device_name': unknown GPU 'Tesla V100-PCI\u{0415}-32GB': '\u{0415}' (U+0415 CYRILLIC CAPITAL LETTER IE, which looks like the Latin 'E'): GPU names are written in ASCII letters, digits and punctuation", &["data", "validate", "{dir}/c.json"]).with("c.json", cache_of("Tesla V100-PCI\u{0415}-32GB")),
        Case::err("gzip'd cache device with a Greek omicron", 1, "U+039F GREEK CAPITAL LETTER OMICRON", &["predict", "--runs", "{dir}/c.json.gz", "--target", "RTX 4090"]).with("c.json.gz", gzip(cache_of("NVIDIA TITAN V\u{039F}").as_bytes())),
        Case::err("GEMM table device with a Greek alpha", 1, "column 'device': unknown GPU 'NVIDIA \u{0391}100-SXM4-80GB': '\u{0391}' (U+0391 GREEK CAPITAL LETTER ALPHA", &["data", "validate", "{dir}/g.csv"]).with("g.csv", gemm.replace("NVIDIA A100-SXM4-80GB", "NVIDIA \u{0391}100-SXM4-80GB")),
        Case::err("study metrics GPU with a zero-width space", 1, "g.json: line 2, column 3: unknown GPU 'NVIDIA TITAN V\u{200B}': an invisible character (U+200B ZERO WIDTH SPACE)", &["predict", "--runs", "{dir}/r.csv", "--target", "RTX 4090", "--model", "analytical-study", "--study-metrics", "{dir}/g.json"])
            .with("r.csv", &two).with("g.json", STUDY_METRICS.replace("NVIDIA TITAN V", "NVIDIA TITAN V\u{200B}")),
        // ---- --gpus entries: their names, and the known GPUs they replace ----
        catalog("catalog entry named with a Cyrillic 'Ti'", gpu_entry(&format!("NVIDIA GeForce {CYRILLIC_TI}"), "8.6", "84", "1008.0"), 1, "c.toml:2:1: [[gpu]] #1: name 'NVIDIA GeForce RTX 3090 \u{0422}\u{0456}': '\u{0422}' (U+0422 CYRILLIC CAPITAL LETTER TE, which looks like the Latin 'T') and 1 other such character: GPU names are written in ASCII letters, digits and punctuation; read as it looks, it is GPU 'NVIDIA GeForce RTX 3090 Ti'"),
        catalog("catalog alias with a right-to-left override", format!("{}aliases = [\"Fuzz\u{202E}1\"]\n", gpu_entry("Fuzz 1", "8.6", "1", "100.0")), 1, "c.toml:16:12: [[gpu]] #1: alias 'Fuzz\u{202E}1': an invisible character (U+202E RIGHT-TO-LEFT OVERRIDE)"),
        catalog("catalog entry of a known NVIDIA GPU as AMD", known("vendor = \"AMD\"\n"), 1, "c.toml:3:1: GPU 'NVIDIA GeForce RTX 3090' is known (vendor \"NVIDIA\", arch \"Ampere\"); an entry replacing it must keep its vendor \"NVIDIA\", not \"AMD\": give a different GPU a name of its own"),
        catalog("catalog entry of a known GPU in another architecture", known("arch = \"Ampere GA102\"\n"), 1, "must keep its arch \"Ampere\", not \"Ampere GA102\""),
        Case::new("catalog entry replacing a known GPU says so", Stderr("c.toml replaces the entry of GPU 'NVIDIA GeForce RTX 3090' (mem_bandwidth_gbs)"), &["--gpus", "{dir}/c.toml", "gpus", "show", "RTX 3090"]).with("c.toml", known("mem_bandwidth_gbs = 900.0\n")),
        // ---- hostile model files and counts ----
        model_file("a booster predicting with more trees than it has", model_with_residual("gbm", |m| m["booster"]["prediction_iteration"] = serde_json::json!(100000)), "booster.prediction_iteration 100000 must be 1 to the booster's"),
        model_file("a shape coefficient of 1e308", model_json(|v| v["shape"] = shape(&[1e308, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], 1.0)), "m.json: shape.coefficients 'other_cc' 1e308 is above 1e3"),
        model_file("a shape slope for another campaign of 1e9", model_json(|v| { v["shape"] = shape(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], 1.0); v["shape"]["other_source"] = serde_json::json!(1e9); }), "m.json: shape.other_source 1e9 is above 1e3"),
        Case::err("Nsight Compute duration of 1e-300 ns", 1, "n.csv: line 7, column 'gpu__time_duration.sum': a duration of 1e-300 ns is shorter than the GPU timer's resolution (1 ns)", &ncu_args).with("n.csv", ncu.replace("\"gpu__time_duration.sum\",\"us\",\"23.42\"", "\"gpu__time_duration.sum\",\"ns\",\"1e-300\"")).no_file("o.csv"),
        Case::err("Nsight Compute duration of 1e300 us", 1, "n.csv: line 7, column 'gpu__time_duration.sum': 1e297 ms is longer than any launch takes (1e7)", &ncu_args).with("n.csv", ncu.replace("\"gpu__time_duration.sum\",\"us\",\"23.42\"", "\"gpu__time_duration.sum\",\"us\",\"1e300\"")).no_file("o.csv"),
        Case::err("Nsight Compute byte count of 1e300 Mbyte", 1, "n.csv: line 2, column 'dram__bytes_read.sum': 1e306 is more than any launch counts (1e21)", &ncu_args).with("n.csv", ncu.replace("\"dram__bytes_read.sum\",\"Mbyte\",\"3.35\"", "\"dram__bytes_read.sum\",\"Mbyte\",\"1e300\"")).no_file("o.csv"),
        Case::new("tune --write-cache of a GFLOP/s cache writes time", Stderr("c.json tuned for objective 'GFLOP/s'; the written cache's objective is 'time' (its entries hold predicted times)"), &["tune", "--runs", "{dir}/c.json", "--target", "RTX 4090", "--write-cache", "{dir}/x.json"])
            .with("c.json", pnpoly.replace("\"objective\": \"time\"", "\"objective\": \"GFLOP/s\"")).file_has("x.json", "\"objective\": \"time\",").changes("x.json"),
        Case::new("co-run --kernel with its parameters in another order", Stdout("stencil_5pt,\"block=256,cols=4096,rows=4096\",64"), &corun_args),
        // ---- resource bombs: sizes bounded before anything is allocated ----
        Case::err("Parquet row group claiming 10^12 rows", 1, "a.parquet: cannot read: the file is damaged (its row groups claim 1e12 rows, more than a file of", &["data", "validate", "{dir}/a.parquet"]).with("a.parquet", claiming_rows(&good_parquet, None, Some(1_000_000_000_000))),
        Case::err("Parquet footer and row group claiming 10^12 rows", 1, "a.parquet: cannot read: the file is damaged (its row groups claim 1e12 rows", &["data", "validate", "{dir}/a.parquet"]).with("a.parquet", claiming_rows(&good_parquet, Some(1_000_000_000_000), Some(1_000_000_000_000))),
        Case::err("Parquet footer claiming other rows than its row groups", 1, "a.parquet: cannot read: the file is damaged (its footer claims 1000000000000 rows, its row groups 2)", &["data", "validate", "{dir}/a.parquet"]).with("a.parquet", claiming_rows(&good_parquet, Some(1_000_000_000_000), None)),
        Case::err("Parquet row group claiming a row its pages lack", 1, "a.parquet: cannot read: the file is damaged (row group 0: it claims 3 rows, the pages of column 'gpu' hold 2)", &["data", "validate", "{dir}/a.parquet"]).with("a.parquet", claiming_rows(&good_parquet, Some(3), Some(3))),
        validate("CSV of a million columns", wide_csv(1_000_000), Error(1, "a.csv:1: 1000006 columns; a table of runs has at most")),
        validate("CSV of 200 columns of one's own", wide_csv(200), Stdout("1 rows in 1 file(s)")),
        Case::err("Parquet of 3000 columns", 1, "a.parquet: 3000 columns; a table of runs has at most", &["data", "validate", "{dir}/a.parquet"])
            .with("a.parquet", parquet_of(DataFrame::new_infer_height((0..3000).map(|i| Column::new(format!("c{i}").into(), [1.0f64])).collect()).unwrap())),
        // ---- errors in the user's words ----
        Case::new("gzip'd Parquet is read", Stdout("2 rows in 1 file(s)"), &["data", "validate", "{dir}/a.parquet.gz"]).with("a.parquet.gz", gzip(&good_parquet)),
        Case::err("empty gzip'd CSV", 1, "a.csv.gz: empty file", &["data", "validate", "{dir}/a.csv.gz"]).with("a.csv.gz", gzip(b"")),
        Case::err("NeuSight row with an extra cell", 1, "n.csv:3: 18 cells, but the header has 17 columns", &neusight_args).with("n.csv", neusight.replacen("16,1024\n", "16,1024,7\n", 2).replacen("16,1024,7\n", "16,1024\n", 1)).no_file("o.csv"),
        Case::err("NeuSight import of a Kernel Tuner cache", 1, "n.csv: is JSON (a Kernel Tuner cache?), not a NeuSight table: NeuSight's tables are CSV with columns OPName, Latency, Device", &neusight_args).with("n.csv", CACHE_WITH_FAILURES).no_file("o.csv"),
    ]
}

/// A Parquet write stopped by the file-size limit (EFBIG, the shell's `ulimit -f`
/// with SIGXFSZ ignored) names the system's reason, not the encoder's ("Invalid
/// thrift: transport error"), and leaves no output.
#[test]
fn a_write_past_the_file_size_limit_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let src =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/public/reference_study/runs.parquet");
    let out = dir.path().join("o.parquet");
    let script = format!(
        "ulimit -f 8; trap '' XFSZ; exec '{}' data import '{}' -o '{}'",
        env!("CARGO_BIN_EXE_gpucast"),
        src.display(),
        out.display()
    );
    let o = Command::new("sh").arg("-c").arg(&script).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("o.parquet: cannot write: File too large") && err.lines().count() == 1,
        "{err}"
    );
    assert!(!out.exists());
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A million columns are refused from the header, in well under the harness's 60 s
/// (the duplicate-name check was quadratic in the columns).
#[test]
fn a_million_columns_are_refused_fast() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.csv");
    std::fs::write(&p, wide_csv(1_000_000)).unwrap();
    let start = Instant::now();
    let r = run(
        &["data".into(), "validate".into(), p.display().to_string()],
        None,
    );
    let took = start.elapsed();
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("1000006 columns"), "{}", r.stderr);
    assert!(took < Duration::from_secs(10), "took {took:?}");
}
