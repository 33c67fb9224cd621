//! Nsight Compute import on every real export: shipped fixtures (licensed sources,
//! see tests/fixtures/ncu/README.md) and, when ../shared is present, the exports
//! without a license. Expected numbers are read off the files by hand.

mod common;

use common::*;
use gpucast::data::ncu::{self, NcuImport, NcuLayout};
use gpucast::data::Run;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/ncu")
        .join(name)
}

/// An export in ../shared (no license to ship it). Its tests are ignored without
/// ../shared (see build.rs); with it, a missing export fails the test.
fn shared(name: &str) -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/external/nsight-compute")
        .join(name);
    assert!(p.is_file(), "{} is missing from ../shared", p.display());
    p
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-300)
}

#[track_caller]
fn assert_close(actual: f64, expected: f64) {
    assert!(close(actual, expected), "{actual} != {expected}");
}

fn row<'a>(imp: &'a NcuImport, kernel_prefix: &str, config: &str) -> &'a Run {
    imp.runs
        .runs
        .iter()
        .find(|r| r.kernel.starts_with(kernel_prefix) && r.config == config)
        .unwrap_or_else(|| {
            let have: Vec<_> = imp
                .runs
                .runs
                .iter()
                .map(|r| (&r.kernel, &r.config))
                .collect();
            panic!("no row {kernel_prefix} / {config}; rows: {have:?}")
        })
}

fn extra_text(imp: &NcuImport, column: &str, run: &Run) -> Option<String> {
    let c = imp.runs.extra.column(column).expect("extra column");
    let s = c.str().expect("text column");
    s.get(run.origin.row - 1).map(str::to_string)
}

fn extra_num(imp: &NcuImport, column: &str, run: &Run) -> Option<f64> {
    let c = imp.runs.extra.column(column).expect("extra column");
    c.f64().expect("numeric column").get(run.origin.row - 1)
}

/// The missing-GPU error: one line, names the file and what to do.
#[track_caller]
fn assert_needs_gpu(path: &Path, cc: &str) {
    let e = ncu::import(path, None).unwrap_err().to_string();
    assert!(e.contains("no GPU name"), "{e}");
    assert!(e.contains(&format!("compute capability {cc}")), "{e}");
    assert!(e.contains(&path.display().to_string()), "{e}");
    assert!(!e.contains('\n'), "one line: {e}");
}

#[test]
fn gtx1080_raw_with_legacy_metric_names() {
    let p = fixture("gtx1080_vectoradd_legacy_names.csv");
    assert!(ncu::looks_like_ncu(&p));
    let imp = ncu::import(&p, None).unwrap();
    let rep = &imp.report;
    assert_eq!(rep.layout, NcuLayout::Raw);
    assert_eq!(
        (rep.launches, rep.kernels, rep.rows, rep.skipped_lines),
        (3, 1, 1, 0)
    );
    assert!(rep.device_from_file);
    let r = &imp.runs.runs[0];
    assert_eq!(r.gpu, "NVIDIA GeForce GTX 1080");
    assert_eq!(r.kernel, "vecAdd");
    assert_eq!(r.config, "block=1024,grid=1");
    // gpu__time_duration "2,720.00" nsecond, three times.
    assert_close(r.time_ms, 0.00272);
    assert_eq!((r.trials, r.time_std_ms), (Some(3.0), Some(0.0)));
    // dram__read_bytes + dram__write_bytes: (7552+384 + 3264+256 + 2176+256) / 3.
    assert_close(r.dram_bytes, 13_888.0 / 3.0);
    assert_eq!(r.regs_per_thread, Some(8.0));
    assert_eq!(r.smem_per_block, Some(0.0));
    assert_eq!(r.details().inst_warp, Some(344.0)); // smsp__inst_executed_sum
    assert_eq!(r.details().sm_count, Some(20.0));
    assert_eq!(r.l2_bytes, None, "absent, never 0");
    // No FLOP counters: the documented rule.
    assert_eq!((r.flops, r.precision.as_deref()), (0.0, Some("unknown")));
    assert!(rep.missing.iter().any(|m| m.starts_with("flops:")));
    assert!(rep.metrics_found.contains(&"dram__read_bytes".to_string()));
    assert!(rep
        .metrics_found
        .contains(&"gpu__time_duration".to_string()));
    assert_eq!(
        extra_text(&imp, "compute_capability", r).as_deref(),
        Some("6.1")
    );
    assert_eq!(extra_text(&imp, "ncu_ids", r).as_deref(), Some("0;1;2"));
    assert_eq!(extra_text(&imp, "flops_source", r).as_deref(), Some("none"));

    // A GPU name that contradicts the file is an error, an agreeing one is fine.
    let e = ncu::import(&p, Some("Tesla V100")).unwrap_err().to_string();
    assert!(
        e.contains("'NVIDIA GeForce GTX 1080'") && !e.contains('\n'),
        "{e}"
    );
    assert!(ncu::import(&p, Some("nvidia geforce gtx 1080")).is_ok());
}

#[test]
fn rtx5090_details_units_rule_rows_and_missing_gpu() {
    // (file, time_ms, dram_bytes, config, flops, precision)
    let cases = [
        (
            "rtx5090_kernel_0001.csv",
            0.00675,
            2.33e6,
            "block=128,block_dims=32x4x1,grid=224",
            0.0,
            "unknown",
        ),
        (
            "rtx5090_kernel_0002.csv",
            0.01834,
            17.57e6,
            "block=64,block_dims=16x4x1,grid=1712",
            0.0,
            "unknown",
        ),
        (
            "rtx5090_kernel_0003.csv",
            0.02342,
            3.35e6,
            "block=128,grid=608,grid_dims=152x4x1",
            1_275_068_416.0,
            "tensor_fp16",
        ),
        // dram__bytes_read.sum in Kbyte: 32.77 Kbyte = 32,770 bytes.
        (
            "rtx5090_kernel_0004.csv",
            0.0047,
            32_770.0,
            "block=128,grid=2",
            0.0,
            "unknown",
        ),
    ];
    for (name, time_ms, dram, config, flops, precision) in cases {
        let p = fixture(name);
        assert!(ncu::looks_like_ncu(&p));
        assert_needs_gpu(&p, "12.0");
        let imp = ncu::import(&p, Some("NVIDIA GeForce RTX 5090")).unwrap();
        assert_eq!(imp.report.layout, NcuLayout::Details);
        assert!(!imp.report.device_from_file);
        // 48 rows: 44 metrics and 4 rule rows, one launch.
        assert_eq!((imp.report.launches, imp.report.rows), (1, 1), "{name}");
        let r = &imp.runs.runs[0];
        assert_eq!(r.gpu, "NVIDIA GeForce RTX 5090");
        assert_close(r.time_ms, time_ms);
        assert_close(r.dram_bytes, dram);
        assert_eq!(r.config, config, "{name}");
        assert_close(r.flops, flops);
        assert_eq!(r.precision.as_deref(), Some(precision), "{name}");
        assert_eq!(r.details().flops_fma, None, "{name}: no CUDA-core counters");
        assert!(
            imp.report
                .missing
                .iter()
                .any(|m| m.starts_with("flops_fma")),
            "{name}"
        );
    }
    let imp = ncu::import(&fixture("rtx5090_kernel_0001.csv"), Some("RTX 5090")).unwrap();
    let r = &imp.runs.runs[0];
    assert_close(r.achieved_occupancy.unwrap(), 0.1132);
    assert_eq!(extra_num(&imp, "tensor_flops", r), Some(0.0));
}

#[test]
fn a100_details_nersc_metrics_and_repeated_launches() {
    let p = fixture("a100_bert_nersc_metrics_launches_6-14.csv");
    assert!(ncu::looks_like_ncu(&p));
    let e = ncu::import(&p, None).unwrap_err().to_string();
    assert!(e.contains("no GPU name") && !e.contains('\n'), "{e}");
    let imp = ncu::import(&p, Some("NVIDIA A100-SXM4-40GB")).unwrap();
    let rep = &imp.report;
    // Launches 6..14: sgemm x3, splitKreduce x2, two elementwise kernels x2 each.
    assert_eq!((rep.launches, rep.kernels, rep.rows), (9, 4, 4));
    let r = row(&imp, "ampere_sgemm_32x32_sliced1x4_tn", "block=128,grid=64");
    // No duration metric: sm__cycles_elapsed.avg / .per_second per launch, then the mean.
    let t = [
        9_583.22 / 998_252_314.81,
        9_687.43 / 1_002_424_040.35,
        9_695.07 / 1_006_548_388.09,
    ]
    .map(|s| s * 1e3);
    assert_close(r.time_ms, t.iter().sum::<f64>() / 3.0);
    assert_eq!(r.trials, Some(3.0));
    let sd = (t.iter().map(|x| (x - r.time_ms).powi(2)).sum::<f64>() / 2.0).sqrt();
    assert_close(r.time_std_ms.unwrap(), sd);
    // NERSC: fadd 196,608 + fmul 262,144 + 2 x ffma 4,194,304.
    assert_close(r.flops, 8_847_360.0);
    assert_eq!(r.details().flops_fma, Some(8_388_608.0));
    assert_eq!(r.details().flops_add, Some(196_608.0));
    assert_eq!(r.details().flops_mul, Some(262_144.0));
    assert_eq!(r.precision.as_deref(), Some("fp32"));
    assert_close(r.dram_bytes, (303_360.0 + 303_488.0 + 303_488.0) / 3.0);
    assert_close(
        r.l2_bytes.unwrap(),
        (1_983_520.0 + 1_991_776.0 + 1_977_088.0) / 3.0,
    );
    assert_eq!(r.l1_bytes, Some(1_015_808.0));
    assert_eq!(
        (r.regs_per_thread, r.smem_per_block),
        (Some(86.0), Some(32_768.0))
    );
    assert_eq!((r.block_threads, r.grid_blocks), (Some(128.0), Some(64.0)));
    assert_close(r.achieved_occupancy.unwrap(), 0.0624);
    assert_eq!(
        extra_text(&imp, "time_source", r).as_deref(),
        Some("sm__cycles_elapsed.avg / sm__cycles_elapsed.avg.per_second")
    );
    assert_eq!(extra_text(&imp, "ncu_ids", r).as_deref(), Some("6;10;14"));
    // splitKreduce: fp32 add 40,960 + mul 10,240 = 51,200 FLOPs < fp16 2 x hfma 30,720
    // = 61,440, so half precision dominates.
    let s = row(&imp, "void splitKreduce_kernel", "block=512,grid=24");
    assert_eq!(s.trials, Some(2.0));
    assert_close(s.flops, 40_960.0 + 10_240.0 + 61_440.0);
    assert_eq!(s.precision.as_deref(), Some("fp16"));
    // Tensor-pipe instructions on Ampere are not turned into FLOPs.
    assert_eq!(s.details().inst_warp_tensor, Some(960.0));
    assert!(rep
        .notes
        .iter()
        .any(|n| n.contains("tensor-pipe instructions")));
    // ffma 10,240 and hfma 10,240: a tie, the earlier label (fp32) wins.
    let e = row(
        &imp,
        "void at::native::elementwise_kernel",
        "block=128,grid=40",
    );
    assert_eq!(extra_text(&imp, "ncu_ids", e).as_deref(), Some("8;12"));
    assert_eq!((e.flops, e.precision.as_deref()), (40_960.0, Some("fp32")));
}

#[test]
fn cc80_details_with_profiler_error_lines() {
    let p = fixture("cc80_share_tile_with_error_lines.csv");
    assert!(ncu::looks_like_ncu(&p));
    assert_needs_gpu(&p, "8.0");
    let imp = ncu::import(&p, Some("NVIDIA A100-PCIE-40GB")).unwrap();
    let rep = &imp.report;
    // 7 lines of ==PROF==/==ERROR==/==WARNING== before the header.
    assert_eq!(rep.skipped_lines, 7);
    assert_eq!(rep.profiler_messages.len(), 3);
    assert!(
        rep.profiler_messages[0].starts_with("==ERROR== Failed to profile \"gemm_shared_tile\"")
    );
    // randomInit twice with transposed grids: two configurations.
    assert_eq!((rep.launches, rep.rows), (3, 3));
    row(
        &imp,
        "void randomInit<float>",
        "block=1024,block_dims=32x32x1,grid=819200,grid_dims=640x1280x1",
    );
    row(
        &imp,
        "void randomInit<float>",
        "block=1024,block_dims=32x32x1,grid=819200,grid_dims=1280x640x1",
    );
    let g = row(
        &imp,
        "void gemm_v0<float>",
        "block=1024,block_dims=32x32x1,grid=1638400,grid_dims=1280x1280x1",
    );
    // "4,419,786,379,648.00" byte
    assert_eq!(g.dram_bytes, 4_419_786_379_648.0);
    // smsp__ counters: 2 x ffma 34,359,738,368,000 + 2 x hfma 3,355,443,200.
    assert_eq!(g.flops, 68_726_187_622_400.0);
    assert_eq!(g.precision.as_deref(), Some("fp32"));

    let p = fixture("cc80_gemm_nersc_metrics.csv");
    let imp = ncu::import(&p, Some("NVIDIA A100-PCIE-40GB")).unwrap();
    assert_eq!((imp.report.skipped_lines, imp.report.rows), (0, 3));
    let g = row(
        &imp,
        "void gemm_v0<float>",
        "block=1024,block_dims=32x32x1,grid=1638400,grid_dims=1280x1280x1",
    );
    // smsp__cycles_elapsed.avg / .per_second = 28,293,058,736.76 / 764,999,997.55 s.
    assert_close(g.time_ms, 28_293_058_736.76 / 764_999_997.55 * 1e3);
    assert_eq!(g.dram_bytes, 4_394_965_922_944.0);
}

#[test]
#[cfg_attr(
    not(shared_data),
    ignore = "needs the public data in ../shared beside the repository"
)]
fn v100_thousands_separators_and_volta_tensor_flops() {
    let p = shared("details/v100_roofline_thousands_separators.csv");
    assert_needs_gpu(&p, "7.0");
    let imp = ncu::import(&p, Some("Tesla V100-PCIE-32GB")).unwrap();
    // 10 lines of program output and ==PROF== before the header.
    assert_eq!(
        (
            imp.report.skipped_lines,
            imp.report.launches,
            imp.report.rows
        ),
        (10, 11, 4)
    );
    let r = row(
        &imp,
        "void cutlass::Kernel<cutlass_70_tensorop_s884gemm",
        "block=128,grid=25600,grid_dims=1280x20x1",
    );
    // 512 x 33,554,432,000 tensor instructions + fmul 419,430,400.
    assert_eq!(r.flops, 17_179_869_184_000.0 + 419_430_400.0);
    assert_eq!(r.precision.as_deref(), Some("tensor_fp16"));
    assert_close(r.time_ms, 224_198_002.15 / 1_236_080_147.79 * 1e3);
    assert_eq!(r.l2_bytes, Some(267_257_596_064.0));
    let c = row(
        &imp,
        "void cutlass::Kernel<cutlass::gemm::kernel::Gemm",
        "block=128,grid=25600,grid_dims=160x160x1",
    );
    assert_eq!(c.trials, Some(6.0));
    let i = row(
        &imp,
        "void InitializeMatrix_kernel<float",
        "block=256,block_dims=16x16x1,grid=1638400,grid_dims=1280x1280x1",
    );
    assert_eq!(i.trials, Some(2.0));
    assert_eq!(i.precision, None, "no floating-point work counted");
}

#[test]
#[cfg_attr(
    not(shared_data),
    ignore = "needs the public data in ../shared beside the repository"
)]
fn h200_raw_full_set_with_units_row() {
    let p = shared("raw/h200_full_set_2232_columns.csv");
    let imp = ncu::import(&p, None).unwrap();
    assert!(imp.report.device_from_file);
    assert_eq!(imp.report.launches, 30);
    assert!(imp.runs.runs.iter().all(|r| r.gpu == "NVIDIA H200"));
    // Launches 0, 5, 7: one copy kernel, 202 warp instructions each; 2.464, 2.272 and
    // 2.144 us; dram 0.032512, 0.032768, 0.032768 Mbyte read + 0 write; lts 12,484,
    // 12,446 and 12,494 sectors.
    let r = &imp.runs.runs[0];
    assert!(r.kernel.starts_with("void at::unrolled_elementwise_kernel"));
    assert_eq!(extra_text(&imp, "ncu_ids", r).as_deref(), Some("0;5;7"));
    assert_close(r.time_ms, (2.464 + 2.272 + 2.144) / 3.0 * 1e-3);
    assert_close(r.dram_bytes, (32_512.0 + 32_768.0 + 32_768.0) / 3.0);
    assert_close(
        r.l2_bytes.unwrap(),
        (12_484.0 + 12_446.0 + 12_494.0) / 3.0 * 32.0,
    );
    assert_eq!(
        (r.details().inst_warp, r.details().inst_thread),
        (Some(202.0), Some(5036.0))
    );
    assert_eq!(r.smem_per_block, Some(0.0)); // Kbyte/block
                                             // The instruction roofline's transactions: 1 + 1 global sectors at L1, no shared
                                             // wavefronts, the lts sectors above, 1,016 / 1,024 / 1,024 DRAM sectors read.
    let d = r.details();
    assert_eq!((d.l1_sectors, d.shared_wavefronts), (Some(2.0), Some(0.0)));
    assert_close(
        d.l2_sectors.unwrap(),
        (12_484.0 + 12_446.0 + 12_494.0) / 3.0,
    );
    assert_close(d.dram_sectors.unwrap(), (1_016.0 + 1_024.0 + 1_024.0) / 3.0);
    assert_eq!((d.inst_thread_int, d.inst_warp_tensor), (None, None));
    let occupancy = (5.842876 + 4.961609 + 4.894371) / 300.0;
    assert_close(r.achieved_occupancy.unwrap(), occupancy);
    // nvjet GEMM: bf16 tensor ops 167,772,160 dominate.
    let g = row(
        &imp,
        "nvjet_tst_64x8_64x16_4x1_v_bz_TNT",
        "block=384,grid=80,grid_dims=4x20x1",
    );
    assert_eq!(g.precision.as_deref(), Some("tensor_fp16"));
    assert_eq!(extra_num(&imp, "tensor_flops", g), Some(167_772_160.0));
    assert!(g.flops >= 167_772_160.0);
    // FLOPs from the roofline rates: launch 1 hfma 0.019393/cycle x 6,600.318182 cycles.
    let i = &imp.runs.runs[1];
    assert_eq!(i.flops, 2.0 * (0.019393_f64 * 6_600.318182).round());
    assert_eq!(i.precision.as_deref(), Some("fp16"));
}

#[test]
#[cfg_attr(
    not(shared_data),
    ignore = "needs the public data in ../shared beside the repository"
)]
fn b200_raw_without_flop_or_dram_counters() {
    let p = shared("raw/b200_sdpa_flash.csv");
    let imp = ncu::import(&p, None).unwrap();
    let rep = &imp.report;
    assert_eq!((rep.skipped_lines, rep.launches, rep.rows), (2, 16, 1));
    let r = &imp.runs.runs[0];
    assert_eq!(r.gpu, "NVIDIA B200");
    assert_eq!(r.config, "block=128,grid=512,grid_dims=1x64x8");
    let ns = [
        687488.0, 685792.0, 687968.0, 687648.0, 687808.0, 690336.0, 688928.0, 684992.0, 686464.0,
        686496.0, 687200.0, 686784.0, 689824.0, 686752.0, 686048.0, 687872.0,
    ];
    assert_close(r.time_ms, ns.iter().sum::<f64>() / 16.0 * 1e-6);
    assert_eq!(r.trials, Some(16.0));
    assert_eq!((r.flops, r.dram_bytes), (0.0, 0.0));
    assert_eq!(r.precision.as_deref(), Some("unknown"));
    assert_eq!(
        extra_text(&imp, "dram_bytes_source", r).as_deref(),
        Some("none")
    );
    assert!(rep.missing.iter().any(|m| m.starts_with("dram_bytes:")));
    assert_eq!(
        (r.regs_per_thread, r.smem_per_block),
        (Some(255.0), Some(65_536.0))
    );
    assert_eq!(r.details().sm_count, Some(148.0));
}

#[test]
#[cfg_attr(
    not(shared_data),
    ignore = "needs the public data in ../shared beside the repository"
)]
fn cc86_details_with_nvtx_columns_and_work_variants() {
    let p = shared("details/cc86_rtx_nvtx_columns.csv");
    assert_needs_gpu(&p, "8.6");
    let imp = ncu::import(&p, Some("NVIDIA GeForce RTX 3090")).unwrap();
    assert_eq!((imp.report.skipped_lines, imp.report.launches), (4, 17));
    let r = row(&imp, "wrapped_slice_1", "block=128,grid=235");
    assert_close(r.time_ms, 0.00416); // "4,160" ns
    assert_eq!(r.dram_bytes, 363_008.0);
    // ampere_sgemm_32x128_nn on a 1x79 grid: 3 launches with 5,177,344 ffma and one
    // with 10,354,688 (another K) are two configurations.
    let a = row(
        &imp,
        "ampere_sgemm_32x128_nn",
        "block=256,grid=79,grid_dims=1x79x1,variant=1",
    );
    let b = row(
        &imp,
        "ampere_sgemm_32x128_nn",
        "block=256,grid=79,grid_dims=1x79x1,variant=2",
    );
    assert_eq!((a.trials, b.trials), (Some(3.0), Some(1.0)));
    assert_close(a.time_ms, (8_672.0 + 9_152.0 + 9_216.0) / 3.0 * 1e-6);
    assert_eq!(b.flops, 2.0 * 10_354_688.0 + 323_584.0);
    assert!(imp.report.notes.iter().any(|n| n.contains("variant=k")));
}

#[test]
fn not_an_ncu_export_is_a_one_line_error() {
    let (_dir, p) = write_tmp("runs.csv", SYNTHETIC_RUNS);
    assert!(!ncu::looks_like_ncu(&p));
    let e = ncu::import(&p, Some("X")).unwrap_err().to_string();
    assert!(e.contains("not an Nsight Compute CSV export"), "{e}");
    assert!(e.contains("runs.csv") && !e.contains('\n'), "{e}");
    let e = ncu::import(&p.with_file_name("absent.csv"), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("absent.csv"), "{e}");
}

// SYNTHETIC exports below: made-up numbers in the real layouts, for the messes the
// real files do not all show (messages after the table, Gbyte/msecond/second).
const SYNTHETIC_RAW: &str = "\
==PROF== Connected to process 7 (/bin/app)
\"ID\",\"Kernel Name\",\"Block Size\",\"Grid Size\",\"device__attribute_display_name\",\"gpu__time_duration.sum\",\"dram__bytes.sum\",\"lts__t_bytes.sum\",\"smsp__sass_thread_inst_executed_op_dfma_pred_on.sum\"
\"\",\"\",\"\",\"\",\"\",\"msecond\",\"Gbyte\",\"Mbyte\",\"inst\"
\"0\",\"k(int)\",\"(256, 1, 1)\",\"(4096, 1, 1)\",\"Some GPU\",\"1.5\",\"1.25\",\"3\",\"1,000\"
==WARNING== something after a row
\"1\",\"k(int)\",\"(256, 1, 1)\",\"(4096, 1, 1)\",\"Some GPU\",\"2.5\",\"1.75\",\"3\",\"1,000\"
\"2\",\"other\",\"(32, 1, 1)\",\"(1, 1, 1)\",\"Some GPU\",\"0.5\",\"n/a\",\"\",\"0\"
==PROF== Disconnected from process 7
";

#[test]
fn synthetic_raw_units_messages_and_aggregation() {
    let imp = ncu::import_str(SYNTHETIC_RAW, "synthetic.csv", None).unwrap();
    assert_eq!(imp.report.skipped_lines, 3);
    assert_eq!(
        imp.report.profiler_messages,
        ["==WARNING== something after a row"]
    );
    let r = &imp.runs.runs[0];
    assert_eq!(
        (r.gpu.as_str(), r.config.as_str()),
        ("Some GPU", "block=256,grid=4096")
    );
    assert_eq!(r.time_ms, 2.0);
    assert_close(r.time_std_ms.unwrap(), 2f64.sqrt() / 2.0);
    assert_eq!(r.dram_bytes, 1.5e9);
    assert_eq!(r.l2_bytes, Some(3e6));
    assert_eq!((r.flops, r.precision.as_deref()), (2000.0, Some("fp64")));
    let o = &imp.runs.runs[1];
    assert_eq!(
        (o.dram_bytes, o.l2_bytes),
        (0.0, None),
        "n/a and empty are absent"
    );
    assert_eq!(o.precision, None, "FLOP counters present but zero");
    assert_eq!(
        extra_text(&imp, "dram_bytes_source", o).as_deref(),
        Some("none")
    );
}

/// SYNTHETIC: L2 bytes per slice (ncu's max and avg over the `lts` units) give the
/// slice imbalance, averaged over a configuration's launches; a kernel without L2
/// traffic, and an export without the per-slice counters, leave it empty.
#[test]
fn synthetic_l2_slice_imbalance_is_the_busiest_slice_over_the_mean() {
    let export = "\
\"ID\",\"Kernel Name\",\"Block Size\",\"Grid Size\",\"device__attribute_display_name\",\"gpu__time_duration.sum\",\"dram__bytes.sum\",\"lts__t_bytes.avg\",\"lts__t_bytes.max\",\"lts__t_bytes.sum\"
\"\",\"\",\"\",\"\",\"\",\"usecond\",\"byte\",\"Kbyte\",\"Kbyte\",\"Mbyte\"
\"0\",\"hot\",\"(256, 1, 1)\",\"(64, 1, 1)\",\"Some GPU\",\"10\",\"1,000\",\"20\",\"160\",\"1.6\"
\"1\",\"hot\",\"(256, 1, 1)\",\"(64, 1, 1)\",\"Some GPU\",\"10\",\"1,000\",\"20\",\"200\",\"1.6\"
\"2\",\"even\",\"(256, 1, 1)\",\"(64, 1, 1)\",\"Some GPU\",\"10\",\"1,000\",\"12.5\",\"12.5\",\"1\"
\"3\",\"idle\",\"(32, 1, 1)\",\"(1, 1, 1)\",\"Some GPU\",\"1\",\"0\",\"0\",\"0\",\"0\"
";
    let imp = ncu::import_str(export, "slices.csv", None).unwrap();
    let imbalance = |k: &str, config: &str| row(&imp, k, config).details().l2_slice_imbalance;
    // launches of 8 and 10 times the mean slice's bytes
    assert_close(imbalance("hot", "block=256,grid=64").unwrap(), 9.0);
    assert_eq!(imbalance("even", "block=256,grid=64"), Some(1.0));
    assert_eq!(
        imbalance("idle", "block=32,grid=1"),
        None,
        "no L2 bytes, no imbalance"
    );
    assert!(!imp.report.missing.iter().any(|m| m == "l2_slice_imbalance"));
    assert!(imp
        .report
        .metrics_found
        .contains(&"lts__t_bytes.max".to_string()));
    // an export with only the sum: the column stays empty and the report says so
    let imp = ncu::import_str(SYNTHETIC_RAW, "synthetic.csv", None).unwrap();
    assert_eq!(imp.runs.runs[0].details().l2_slice_imbalance, None);
    assert!(imp.report.missing.iter().any(|m| m == "l2_slice_imbalance"));
}

/// SYNTHETIC: an export with the instruction roofline's counters under every name the
/// seed's metric table gives (sectors, wavefronts, the instruction mix by type).
#[test]
fn synthetic_instruction_mix_and_transactions_per_level() {
    let names = [
        ("smsp__inst_executed.sum", "inst", "100"),
        (
            "smsp__sass_thread_inst_executed_op_fp32_pred_on.sum",
            "inst",
            "640",
        ),
        (
            "smsp__sass_thread_inst_executed_op_fp64_pred_on.sum",
            "inst",
            "32",
        ),
        (
            "smsp__sass_thread_inst_executed_op_integer_pred_on.sum",
            "inst",
            "1,280",
        ),
        (
            "smsp__sass_thread_inst_executed_op_memory_pred_on.sum",
            "inst",
            "320",
        ),
        ("smsp__inst_executed_pipe_tensor.sum", "inst", "4"),
        (
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
            "sector",
            "40",
        ),
        (
            "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
            "sector",
            "8",
        ),
        (
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
            "",
            "12",
        ),
        (
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
            "",
            "3",
        ),
        ("lts__t_sectors.sum", "sector", "30"),
        ("dram__sectors_read.sum", "sector", "20"),
        ("dram__sectors_write.sum", "sector", "5"),
    ];
    let quoted = |v: Vec<&str>| {
        v.iter()
            .map(|x| format!("\"{x}\""))
            .collect::<Vec<_>>()
            .join(",")
    };
    let header = quoted(
        [
            "ID",
            "Kernel Name",
            "device__attribute_display_name",
            "gpu__time_duration.sum",
        ]
        .into_iter()
        .chain(names.iter().map(|n| n.0))
        .collect(),
    );
    let units = quoted(
        ["", "", "", "usecond"]
            .into_iter()
            .chain(names.iter().map(|n| n.1))
            .collect(),
    );
    let row = quoted(
        ["0", "k", "Some GPU", "2"]
            .into_iter()
            .chain(names.iter().map(|n| n.2))
            .collect(),
    );
    let imp = ncu::import_str(&format!("{header}\n{units}\n{row}\n"), "mix.csv", None).unwrap();
    let d = imp.runs.runs[0].details();
    assert_eq!(
        (
            d.inst_thread_fp32,
            d.inst_thread_fp64,
            d.inst_thread_int,
            d.inst_thread_ldst
        ),
        (Some(640.0), Some(32.0), Some(1280.0), Some(320.0))
    );
    assert_eq!(d.inst_warp_tensor, Some(4.0));
    assert_eq!(
        (
            d.l1_sectors,
            d.shared_wavefronts,
            d.l2_sectors,
            d.dram_sectors
        ),
        (Some(48.0), Some(15.0), Some(30.0), Some(25.0))
    );
    assert!(!imp
        .report
        .missing
        .iter()
        .any(|m| m.contains("sectors") || m.contains("mix")));
}

#[test]
fn synthetic_malformed_cells_name_line_and_column() {
    let bad_unit = SYNTHETIC_RAW.replace("\"msecond\"", "\"byte\"");
    let e = ncu::import_str(&bad_unit, "s.csv", None)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "s.csv: line 4, column 'gpu__time_duration.sum': unit 'byte' is not a time unit"
    );
    let bad_number = SYNTHETIC_RAW.replace("\"1.25\"", "\"1.2.5\"");
    let e = ncu::import_str(&bad_number, "s.csv", None)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "s.csv: line 4, column 'dram__bytes.sum': cannot read '1.2.5' as a number"
    );
    let bad_quote = SYNTHETIC_RAW.replace(
        "\"(4096, 1, 1)\",\"Some GPU\",\"2.5\"",
        "\"(4096, 1, 1)\"x,\"Some GPU\",\"2.5\"",
    );
    let e = ncu::import_str(&bad_quote, "s.csv", None)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("s.csv: line 6, column 42: unexpected 'x'"),
        "{e}"
    );
    let no_time = SYNTHETIC_RAW.replace("gpu__time_duration.sum", "gpu__something_else");
    let e = ncu::import_str(&no_time, "s.csv", None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no launch has a kernel duration") && !e.contains('\n'),
        "{e}"
    );
    let no_gpu = SYNTHETIC_RAW.replace("device__attribute_display_name", "Device");
    let e = ncu::import_str(&no_gpu, "s.csv", None)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("s.csv: no GPU name"), "{e}");
    // a raw export writes every column of every launch: a row cut short is an error
    let cut = SYNTHETIC_RAW.replace(",\"3\",\"1,000\"\n==WARNING==", "\n==WARNING==");
    let e = ncu::import_str(&cut, "s.csv", None)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "s.csv: line 4, column '(row)': 7 fields but the header at line 2 has 9"
    );
}

/// A launch without a positive duration is left out and counted, so every command
/// that reads the export says so (not only `data import`'s notes).
#[test]
fn synthetic_launch_without_duration_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.csv");
    std::fs::write(&p, SYNTHETIC_RAW.replace("\"0.5\"", "\"-0.5\"")).unwrap();
    let t = gpucast::data::load(&[p]).unwrap();
    assert_eq!(t.runs.len(), 1, "the two k(int) launches, one row");
    assert_eq!(
        t.not_imported,
        std::collections::BTreeMap::from([("no_kernel_duration".to_string(), 1)])
    );
}

#[test]
fn data_import_detects_an_nsight_compute_export() {
    use gpucast::data::import::{self, Format, ImportOptions};
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ncu");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().contains("gtx1080"))
        .expect("the GTX 1080 fixture");
    assert_eq!(import::detect(&file).unwrap().name(), "ncu");
    let imp = import::import_paths(&[file], Format::Auto, &ImportOptions::default()).unwrap();
    assert_eq!(imp.report.files[0].format, "ncu");
    assert_eq!(imp.table.len(), 1);
    assert_eq!(imp.table.runs[0].kernel, "vecAdd");
}

/// `predict --runs PROFILE` end to end: the export is imported on the fly (no `data
/// import` step), `--gpu` names the device of exports that do not, and every row gets
/// a prediction on the H100 with its interval and the level printed beside it.
#[test]
fn predict_reads_a_profile_directly_on_every_fixture() {
    let cases = [
        ("gtx1080_vectoradd_legacy_names.csv", None, 1),
        (
            "a100_bert_nersc_metrics_launches_6-14.csv",
            Some("A100-SXM4-40GB"),
            4,
        ),
        ("cc80_gemm_nersc_metrics.csv", Some("A100-SXM4-40GB"), 3),
        (
            "cc80_share_tile_with_error_lines.csv",
            Some("A100-SXM4-40GB"),
            3,
        ),
        ("rtx5090_kernel_0001.csv", Some("RTX 5090"), 1),
        ("rtx5090_kernel_0002.csv", Some("RTX 5090"), 1),
        ("rtx5090_kernel_0003.csv", Some("RTX 5090"), 1),
        ("rtx5090_kernel_0004.csv", Some("RTX 5090"), 1),
    ];
    for (name, gpu, rows) in cases {
        let path = fixture(name);
        let mut args = vec![
            "predict".to_string(),
            "--runs".into(),
            path.display().to_string(),
            "--target".into(),
            "H100 SXM5".into(),
            "--format".into(),
            "json".into(),
        ];
        if let Some(g) = gpu {
            args.extend(["--gpu".to_string(), g.to_string()]);
        }
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_gpucast"))
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{name}: {err}");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let v = v.as_array().unwrap();
        assert_eq!(v.len(), rows, "{name}");
        for r in v {
            let (p, lo, hi) = (
                r["pred_ms"].as_f64().unwrap(),
                r["pred_lo_ms"].as_f64().unwrap(),
                r["pred_hi_ms"].as_f64().unwrap(),
            );
            assert!(p > 0.0 && lo <= p && p <= hi, "{name}: {r}");
            assert!(r["interval"].is_string(), "{name}: {r}");
            assert_eq!(r["target_gpu"], "NVIDIA H100 SXM5 80GB");
        }
        if gpu.is_some() {
            // Without the GPU the same command is a one-line error that says what to pass.
            let o = std::process::Command::new(env!("CARGO_BIN_EXE_gpucast"))
                .args(&args[..args.len() - 2])
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{name}");
            assert!(
                err.contains("no GPU name") && err.contains("--gpu"),
                "{err}"
            );
        }
    }
}

/// A profile's L2, L1 and shared traffic makes each level a roof (hierarchical
/// roofline), and its achieved occupancy replaces the computed one on its own GPU.
#[test]
fn profiled_traffic_and_occupancy_drive_the_features() {
    use gpucast::catalog::Catalog;
    use gpucast::features::{run_features, run_occupancy, Bound, Figures};
    let catalog = Catalog::builtin();
    let imp = ncu::import(
        &fixture("cc80_gemm_nersc_metrics.csv"),
        Some("A100-SXM4-40GB"),
    )
    .unwrap();
    let gemm = imp
        .runs
        .runs
        .iter()
        .find(|r| r.kernel.starts_with("void gemm_v0"))
        .unwrap();
    let a100 = catalog.resolve("A100-SXM4-40GB").unwrap();
    let f = run_features(gemm, a100, &Figures::spec(a100), &catalog, None);
    assert!(f.hierarchical);
    let l1_bytes = gemm.l1_bytes.unwrap_or(0.0) + gemm.shared_bytes.unwrap_or(0.0);
    let l1_gbs = 128.0 * a100.sm_count as f64 * a100.boost_clock_mhz / 1e3;
    assert_close(f.l1_ms, l1_bytes / (l1_gbs * 1e9) * 1e3);
    assert_close(
        f.l2_ms,
        gemm.l2_bytes.unwrap() / (Figures::spec(a100).l2_gbs * 1e9) * 1e3,
    );
    // the naive GEMM moves most bytes through L1: that level binds
    assert_eq!(f.bound, Bound::L1);
    assert_close(
        f.roof_ms,
        f.l1_ms.max(f.l2_ms).max(f.dram_ms).max(f.compute_ms),
    );

    // achieved occupancy (the CUTLASS kernel's profile has it): exactly the profile's on
    // the RTX 5090, the same share of the computed occupancy on another GPU
    let imp = ncu::import(&fixture("rtx5090_kernel_0003.csv"), Some("RTX 5090")).unwrap();
    let run = &imp.runs.runs[0];
    let achieved = run
        .achieved_occupancy
        .expect("the export has achieved occupancy");
    let rtx5090 = catalog.resolve("RTX 5090").unwrap();
    let theoretical = |g| {
        let mut r = run.clone();
        r.achieved_occupancy = None;
        run_occupancy(&r, g, &catalog, None).unwrap().occupancy
    };
    assert!(achieved < theoretical(rtx5090), "{achieved}");
    let on_own = run_occupancy(run, rtx5090, &catalog, None).unwrap();
    assert_close(on_own.occupancy, achieved);
    let h100 = catalog.resolve("H100 SXM5").unwrap();
    let on_h100 = run_occupancy(run, h100, &catalog, None).unwrap();
    assert_close(
        on_h100.occupancy,
        theoretical(h100) * achieved / theoretical(rtx5090),
    );
}

/// Our own exports (datasets/own/*/ncu, taken on the H100 and H200 we were lent): every
/// file imports and names its GPU; the suite's 155 configurations were profiled 3
/// launches each, and they make 153 rows, because a profile sees launch geometry, not
/// a kernel's scalar arguments (l2_stream's three sizes share one grid). vector_add on
/// the H100 read by hand: launches 3-5 (N = 262144; 0-2 are N = 65536) took 3,584,
/// 3,520 and 3,584 ns, read 2,099,968 DRAM bytes each (no writes reached DRAM), moved
/// 6,133,728 / 6,173,824 / 6,141,312 L2 bytes, and ran 163,840 warp instructions at
/// 67.59 / 66.98 / 67.40 % achieved occupancy.
#[test]
fn own_hopper_exports_import_one_row_per_configuration() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("datasets/own");
    for (dir, gpu) in [
        ("h100-80gb-hbm3", "NVIDIA H100 80GB HBM3"),
        ("h200", "NVIDIA H200"),
    ] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(dir).join("ncu"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        assert_eq!(files.len(), 38, "{dir}");
        let (mut rows, mut launches) = (0, 0);
        for f in &files {
            let imp = ncu::import(f, None).unwrap();
            assert!(imp.report.device_from_file, "{}", f.display());
            assert!(
                imp.runs.runs.iter().all(|r| r.gpu == gpu),
                "{}",
                f.display()
            );
            assert_eq!(imp.report.launches % 3, 0, "{}", f.display());
            rows += imp.runs.runs.len();
            launches += imp.report.launches;
        }
        assert_eq!((rows, launches), (153, 3 * 155), "{dir}");
    }
    let imp = ncu::import(&root.join("h100-80gb-hbm3/ncu/vector_add.csv"), None).unwrap();
    let r = row(&imp, "vector_add", "block=256,grid=1024");
    assert_eq!(extra_text(&imp, "ncu_ids", r).as_deref(), Some("3;4;5"));
    assert_close(r.time_ms, (3584.0 + 3520.0 + 3584.0) / 3.0 * 1e-6);
    assert_close(r.dram_bytes, 2_099_968.0);
    assert_close(
        r.l2_bytes.unwrap(),
        (6_133_728.0 + 6_173_824.0 + 6_141_312.0) / 3.0,
    );
    assert_eq!(r.details().inst_warp, Some(163_840.0));
    assert_close(
        r.achieved_occupancy.unwrap(),
        (67.59 + 66.98 + 67.40) / 300.0,
    );
    // The instruction roofline's counts of the same launches: thread instructions,
    // and transactions per level from the byte counters (sectors x 32) and the shared
    // wavefronts; the export has no instruction mix, which stays empty.
    let d = r.details();
    assert_eq!(d.inst_thread, Some(5_242_880.0));
    assert_eq!(d.l1_sectors, Some(3_145_728.0 / 32.0));
    assert_close(
        d.l2_sectors.unwrap(),
        (6_133_728.0 + 6_173_824.0 + 6_141_312.0) / 3.0 / 32.0,
    );
    assert_eq!(d.dram_sectors, Some(2_099_968.0 / 32.0));
    assert_eq!(d.shared_wavefronts, Some(8_192.0));
    // L2 bytes of the busiest slice over the mean slice's (lts__t_bytes max / avg):
    // even for vector_add, 13.8 for histogram's largest size (its 256 atomic bins)
    assert_close(
        d.l2_slice_imbalance.unwrap(),
        (80_448.0 / 76_671.6 + 82_464.0 / 77_172.8 + 80_416.0 / 76_766.4) / 3.0,
    );
    let imp = ncu::import(&root.join("h100-80gb-hbm3/ncu/histogram.csv"), None).unwrap();
    let h = row(&imp, "histogram", "block=256,grid=65536").details();
    assert_close(
        h.l2_slice_imbalance.unwrap(),
        (34_830_656.0 / 2_531_264.0 + 34_843_232.0 / 2_530_675.6 + 34_828_288.0 / 2_532_152.0)
            / 3.0,
    );
    assert_eq!(
        (
            d.inst_thread_fp32,
            d.inst_thread_fp64,
            d.inst_thread_int,
            d.inst_thread_ldst,
            d.inst_warp_tensor
        ),
        (None, None, None, None, None)
    );
    assert!(imp
        .report
        .missing
        .iter()
        .any(|m| m.starts_with("instruction mix")));
}

/// An export that does not name its GPU is an error that says how to name it, with
/// the catalog's GPUs of the export's compute capability as candidates.
#[test]
fn an_export_without_a_gpu_name_suggests_gpus_of_its_compute_capability() {
    use gpucast::data::import::{self, Format, ImportOptions};
    // The command line's names for the options these messages suggest.
    gpucast::error::name_inputs(|i| match i {
        gpucast::error::Input::Gpu => "--gpu",
        gpucast::error::Input::ImportFormat => "--from",
        other => other.plain_name(),
    });
    let file = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/ncu/cc80_gemm_nersc_metrics.csv");
    let path = file.display().to_string();
    let e = import::import_paths(&[file], Format::Auto, &ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.ends_with(&format!(
            "compute capability 8.0); pass it with --gpu NAME, or name it once: `gpucast data import \
             {path} --gpu NAME --out runs.csv` (the catalog's GPUs of compute capability 8.0: \
             NVIDIA A100 PCIe 40GB, NVIDIA A100 SXM4 40GB, NVIDIA A100 PCIe 80GB, NVIDIA A100 SXM4 80GB, NVIDIA A30)"
        )),
        "{e}"
    );
}

/// A GPU given beside an export that names its own must be that GPU: the same name
/// but for case, or another name of it in the catalog ("NVIDIA H200" and "H200");
/// another GPU is an error naming both.
#[test]
fn a_given_gpu_must_be_the_one_the_export_names() {
    let export = SYNTHETIC_RAW.replace("Some GPU", "NVIDIA H200");
    for same in ["nvidia h200", "H200", "NVIDIA H200 SXM 141GB"] {
        let imp = ncu::import_str(&export, "s.csv", Some(same)).unwrap();
        assert!(
            imp.runs.runs.iter().all(|r| r.gpu == "NVIDIA H200"),
            "{same}"
        );
    }
    let e = ncu::import_str(&export, "s.csv", Some("H100 SXM"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("the file names the GPU 'NVIDIA H200' but 'H100 SXM' was given"),
        "{e}"
    );
}
