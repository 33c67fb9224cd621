//! Runs tables: formats, import, validation errors and warnings.

mod common;

use common::*;
use gpucast::catalog::Catalog;
use gpucast::data;

#[test]
fn csv_parquet_round_trip_keeps_values_and_unknown_columns() {
    let (dir, csv) = write_tmp("runs.csv", SYNTHETIC_RUNS);
    let t = data::load(&[csv]).unwrap();
    assert_eq!(t.len(), 2);
    assert_eq!(t.extra.get_column_names()[0].as_str(), "my_note");
    let pq = dir.path().join("runs.parquet");
    data::write(&t, &pq).unwrap();
    let back = data::load(std::slice::from_ref(&pq)).unwrap();
    assert_eq!(back.len(), 2);
    for (a, b) in t.runs.iter().zip(&back.runs) {
        assert_eq!(
            (a.gpu.as_str(), a.kernel.as_str(), a.config.as_str()),
            (b.gpu.as_str(), b.kernel.as_str(), b.config.as_str())
        );
        assert_eq!(a.time_ms, b.time_ms);
        assert_eq!(a.flops, b.flops);
        assert_eq!(a.dram_bytes, b.dram_bytes);
        assert_eq!(a.block_threads, b.block_threads);
    }
    assert!(
        back.extra.column("my_note").is_ok(),
        "unknown column passes through Parquet"
    );
    let csv2 = dir.path().join("again.csv");
    data::write(&back, &csv2).unwrap();
    let text = std::fs::read_to_string(&csv2).unwrap();
    assert!(text.starts_with("gpu,kernel,config,time_ms,flops,dram_bytes,block_threads"));
    assert!(text.contains("synthetic-b"));
}

#[test]
fn a_directory_means_every_runs_file_in_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.csv"), SYNTHETIC_RUNS).unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(
        dir.path().join("sub/b.csv"),
        "gpu,kernel,config,time_ms,flops,dram_bytes\nNVIDIA TITAN V,copy,N=1,0.5,0,8\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("trials.csv"), "trial,ms\n1,0.5\n").unwrap();
    let t = data::load(&[dir.path().to_path_buf()]).unwrap();
    assert_eq!(t.len(), 3);
    assert_eq!(t.files.len(), 2);
    // the pass-through column of a.csv is null for b.csv's row
    assert_eq!(t.extra.height(), 3);
}

fn load_err(text: &str) -> String {
    let (_d, p) = write_tmp("bad.csv", text);
    let catalog = Catalog::builtin();
    match data::load(&[p]) {
        Err(e) => e.to_string(),
        Ok(mut t) => match data::validate(&mut t, &catalog) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("expected an error for:\n{text}"),
        },
    }
}

const HEADER: &str = "gpu,kernel,config,time_ms,flops,dram_bytes\n";

#[test]
fn each_error_names_file_row_column() {
    let cases = [
        (
            "gpu,kernel,config,time_ms,flops\nNVIDIA TITAN V,k,c,1,0\n",
            "missing required column 'dram_bytes'",
        ),
        (
            "NVIDIA TITAN V,k,c,abc,0,0\n",
            "row 1, column 'time_ms': expected a number, found 'abc'",
        ),
        (
            "NVIDIA TITAN V,k,c,NaN,0,0\n",
            "row 1, column 'time_ms': value is NaN",
        ),
        (
            "NVIDIA TITAN V,k,c,1,inf,0\n",
            "row 1, column 'flops': value is inf",
        ),
        (
            "NVIDIA TITAN V,k,c,-0.5,0,0\n",
            "row 1, column 'time_ms': time must be > 0",
        ),
        (
            "NVIDIA TITAN V,k,c,0,0,0\n",
            "row 1, column 'time_ms': time must be > 0",
        ),
        (
            "NVIDIA TITAN V,k,c,1,-1,0\n",
            "row 1, column 'flops': must be >= 0",
        ),
        (
            "NVIDIA TITAN V,k,c,1,0,-8\n",
            "row 1, column 'dram_bytes': must be >= 0",
        ),
        (
            "NVIDIA TITAN V,k,,1,0,0\n",
            "row 1, column 'config': missing value",
        ),
        (
            "Imaginary GPU 9000,k,c,1,0,0\n",
            "row 1, column 'gpu': unknown GPU 'Imaginary GPU 9000'",
        ),
        (
            "NVIDIA TITAN V,k,c,1,0,0\nTITAN V,k,c,2,0,0\n",
            "row 2, column 'config': duplicate (gpu, kernel, config)",
        ),
    ];
    for (body, want) in cases {
        let text = if body.starts_with("gpu,") {
            body.to_string()
        } else {
            format!("{HEADER}{body}")
        };
        let msg = load_err(&text);
        assert!(
            msg.contains(want),
            "for {body:?}: got {msg:?}, want {want:?}"
        );
        assert!(msg.contains("bad.csv"), "message names the file: {msg}");
        assert_eq!(msg.lines().count(), 1, "one line: {msg}");
    }
}

#[test]
fn runner_error_rows_are_skipped_and_counted() {
    let text = "gpu,kernel,config,time_ms,flops,dram_bytes,status,error\n\
NVIDIA TITAN V,k,N=1,1.0,0,8,ok,\n\
NVIDIA TITAN V,k,N=2,,0,8,error,launch timed out\n";
    let (_d, p) = write_tmp("runs.csv", text);
    let t = data::load(&[p]).unwrap();
    assert_eq!(t.len(), 1);
    assert_eq!(t.skipped_error_rows, 1);
}

#[test]
fn flat_time_and_peak_warnings_flag_rows() {
    // SYNTHETIC: a kernel whose time stays flat while work grows 64x on one GPU.
    let mut text = String::from(HEADER);
    for (i, n) in [1e6f64, 4e6, 16e6, 64e6].iter().enumerate() {
        text += &format!("NVIDIA TITAN V,flat,N={i},0.05,0,{n}\n");
        text += &format!("NVIDIA GeForce RTX 4070,flat,N={i},{},0,{n}\n", n / 4e8);
    }
    let (_d, p) = write_tmp("runs.csv", &text);
    let mut t = data::load(&[p]).unwrap();
    let rep = data::validate(&mut t, &Catalog::builtin()).unwrap();
    let tv: Vec<_> = t
        .runs
        .iter()
        .filter(|r| r.gpu == "NVIDIA TITAN V")
        .collect();
    assert!(
        tv.iter().all(|r| r.has_flag("flat_time")),
        "{:?}",
        tv[0].flags
    );
    // 64e6 bytes in 0.05 ms = 1280 GB/s > 1.05 x 652.8 with 64 MB >> L2
    assert!(tv[3].has_flag("above_peak_bandwidth"));
    assert!(
        tv.iter().all(|r| data::validate::is_excluded(r)),
        "a 64x plateau is excluded"
    );
    let other: Vec<_> = t
        .runs
        .iter()
        .filter(|r| r.gpu != "NVIDIA TITAN V")
        .collect();
    assert!(other.iter().all(|r| !r.has_flag("flat_time")));
    assert_eq!(rep.excluded, 4);
}

#[test]
fn reference_files_import_with_their_row_counts_and_titan_x_flagged() {
    let Some(dir) = reference_data() else { return };
    let catalog = Catalog::builtin();
    for (file, rows) in [
        ("runs_2080ti.csv", 63),
        ("runs_titanv.csv", 60),
        ("runs_titanx.csv", 60),
        ("runs_4070.csv", 60),
    ] {
        let t = data::load(&[dir.join(file)]).unwrap();
        assert_eq!(t.len(), rows, "{file}");
        assert!(
            t.runs.iter().all(|r| r.config.contains("block=")),
            "{file}: config keys"
        );
        assert!(
            t.extra.column("mean_ms").is_ok(),
            "{file}: original columns kept"
        );
    }
    let mut t = data::load(std::slice::from_ref(&dir)).unwrap();
    assert_eq!(t.len(), 243);
    let rep = data::validate(&mut t, &catalog).unwrap();
    let tx = rep
        .per_gpu
        .iter()
        .find(|g| g.gpu == "NVIDIA GeForce GTX TITAN X")
        .unwrap();
    assert_eq!(tx.rows, 60);
    let conv: Vec<_> = t
        .runs
        .iter()
        .filter(|r| r.gpu == "NVIDIA GeForce GTX TITAN X" && r.kernel.starts_with("conv2d"))
        .collect();
    assert_eq!(conv.len(), 8);
    assert!(
        conv.iter().all(|r| r.has_flag("flat_time")),
        "TITAN X conv2d rows flagged"
    );
    assert!(conv.iter().all(|r| data::validate::is_excluded(r)));
    // The config key pairs the same work across GPUs.
    let saxpy_4m: Vec<_> = t
        .runs
        .iter()
        .filter(|r| r.kernel == "saxpy" && r.config == "N=4194304,block=256")
        .collect();
    assert_eq!(saxpy_4m.len(), 4);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    #[test]
    fn loader_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
        let dir = tempfile::tempdir().unwrap();
        for name in ["x.csv", "x.parquet"] {
            let p = dir.path().join(name);
            std::fs::write(&p, &bytes).unwrap();
            let _ = data::load(&[p]);
        }
    }

    #[test]
    fn loader_never_panics_on_mangled_runs(cut in 0usize..200, junk in "[a-z0-9,.\\-\"\n]{0,40}") {
        let mut text = SYNTHETIC_RUNS.to_string();
        text.truncate(cut.min(text.len()));
        text.push_str(&junk);
        let (_d, p) = write_tmp("m.csv", &text);
        if let Ok(mut t) = data::load(&[p]) {
            let _ = data::validate(&mut t, &Catalog::builtin());
        }
    }
}
