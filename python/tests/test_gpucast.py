"""The Python package against the command line, on the data shipped in datasets/.

Each function's DataFrame must hold what the `gpucast` binary writes for the same
call (its CSV read back with the DataFrame's own column types), DataFrames must be
accepted wherever runs are, and errors must be `gpucast.Error`s carrying the
binary's one-line message. The binary is $GPUCAST_BIN, else target/release/gpucast
of this checkout (`cargo build --release`).
"""

from __future__ import annotations

import json
import os
import subprocess
import warnings
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import gpucast

REPO = Path(__file__).resolve().parents[2]
STUDY = REPO / "datasets/public/reference_study/runs.parquet"
HUB = REPO / "datasets/public/benchmark_hub/runs.parquet"
CACHE = REPO / "tests/fixtures/kernel_tuner/xgemm_RTX_3090_subset.json.gz"
TRACE = REPO / "tests/fixtures/torch_trace/step_h100.json"
TARGET = "H100 SXM5 80GB"


def binary() -> str:
    given = os.environ.get("GPUCAST_BIN")
    if given:
        assert os.access(given, os.X_OK), f"GPUCAST_BIN={given} is not an executable"
        return given
    built = REPO / "target/release/gpucast"
    if not built.is_file():
        pytest.skip("no gpucast binary to compare with: cargo build --release, or set GPUCAST_BIN")
    return str(built)


def cli(*args: object, ok: bool = True) -> subprocess.CompletedProcess:
    run = subprocess.run([binary(), *map(str, args)], capture_output=True, text=True, cwd=REPO)
    if ok:
        assert run.returncode == 0, run.stderr
    return run


def cli_error(*args: object) -> tuple:
    """The binary's error line (without `error: `) and exit code."""
    run = cli(*args, ok=False)
    assert run.returncode != 0
    line = run.stderr.strip().splitlines()[-1]
    assert line.startswith("error: ")
    return line[len("error: "):], run.returncode


def cli_csv(*args: object) -> pl.DataFrame:
    """What the binary prints with --format csv, read as the package reads it."""
    out = cli(*args, "--format", "csv").stdout
    return pl.read_csv(out.encode(), infer_schema_length=None, null_values=["-"])


def quiet(call, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gpucast.Note)
        return call(*args, **kwargs)


# --- every function against the command line ---------------------------------------


def test_gpus_is_the_catalog_the_binary_lists():
    frame = gpucast.gpus()
    assert frame.height >= 90
    assert "NVIDIA H100 SXM5 80GB" in frame["name"].to_list()
    assert_frame_equal(frame, cli_csv("gpus", "list"))
    amd = gpucast.gpus("amd")
    assert 0 < amd.height < frame.height
    assert_frame_equal(amd, cli_csv("gpus", "list", "--vendor", "amd"))


def test_load_holds_what_data_import_writes(tmp_path):
    runs = quiet(gpucast.load, CACHE)
    out = tmp_path / "runs.csv"
    cli("data", "import", "--from", "auto", CACHE, "--out", out)
    written = pl.read_csv(out, schema=runs.schema)
    assert runs.height == written.height > 100
    assert_frame_equal(runs, written)
    assert set(runs["gpu"].unique()) == {"NVIDIA GeForce RTX 3090"}
    assert_frame_equal(quiet(gpucast.load, CACHE, "kernel-tuner"), runs)


def test_predict_round_trip_equals_the_binarys_csv(tmp_path):
    preds = quiet(gpucast.predict, STUDY, TARGET)
    out = tmp_path / "preds.csv"
    cli("predict", "--runs", STUDY, "--target", TARGET, "-o", out)
    written = pl.read_csv(out, schema=preds.schema)
    assert_frame_equal(preds, written)
    assert preds.height > 50
    assert set(preds["target_gpu"].unique()) == {"NVIDIA H100 SXM5 80GB"}
    made = preds.filter(pl.col("pred_ms").is_not_null())
    assert made.height > 0
    assert (made["pred_lo_ms"] <= made["pred_ms"]).all()
    assert (made["pred_ms"] <= made["pred_hi_ms"]).all()


def test_a_dataframe_is_accepted_wherever_runs_are():
    from_path = quiet(gpucast.predict, STUDY, TARGET)
    frame = quiet(gpucast.load, STUDY)
    assert_frame_equal(quiet(gpucast.predict, frame, TARGET), from_path)
    assert_frame_equal(quiet(gpucast.predict, frame.to_pandas(), TARGET), from_path)
    # several frames: the runs of all
    half = frame.height // 2
    both = quiet(gpucast.predict, [frame.head(half), frame.tail(frame.height - half)], TARGET)
    assert_frame_equal(both, from_path)
    assert_frame_equal(
        quiet(gpucast.evaluate, frame, "analytical"), quiet(gpucast.evaluate, STUDY, "analytical")
    )


def test_a_dataframe_takes_the_study_metrics_it_has_no_folder_for():
    # (a file's are found beside it; a frame's must be given, or the study's model
    # projects with catalog figures)
    frame = quiet(gpucast.load, STUDY)
    from_file = quiet(gpucast.evaluate, STUDY, "analytical-study")
    metrics = STUDY.parent / "gpu_metrics.json"
    assert_frame_equal(quiet(gpucast.evaluate, frame, "analytical-study", study_metrics=metrics), from_file)
    assert not quiet(gpucast.evaluate, frame, "analytical-study").equals(from_file)
    with pytest.raises(gpucast.FileError, match="no such file"):
        gpucast.evaluate(frame, "analytical-study", study_metrics=STUDY.parent / "none.json")


def test_predictions_go_to_pandas():
    preds = quiet(gpucast.predict, STUDY, TARGET).to_pandas()
    assert len(preds) > 0
    assert str(preds["pred_ms"].dtype) == "float64"


def test_tune_equals_the_binarys_table():
    with pytest.warns(gpucast.Note):
        best = gpucast.tune(CACHE, "RTX A6000", top=3)
    assert_frame_equal(best, cli_csv("tune", "--runs", CACHE, "--target", "RTX A6000", "--top", 3))
    assert best["rank"].to_list() == [1, 2, 3]
    assert (best["pred_ms"].diff().drop_nulls() >= 0).all()


def test_rank_equals_the_binarys_table():
    args = dict(kernel="convolution_milo", source="RTX A4000", min_memory_gb=80)
    ranking = quiet(gpucast.rank, HUB, **args)
    expected = cli_csv(
        "rank", "--runs", HUB, "--kernel", "convolution_milo", "--source", "RTX A4000", "--min-memory-gb", 80
    )
    assert_frame_equal(ranking, expected)
    ranked = ranking.filter(pl.col("rank").is_not_null())
    assert ranked.height > 0
    assert (ranked["time_ms"].diff().drop_nulls() >= 0).all()


def test_evaluate_equals_the_binarys_table():
    scores = quiet(gpucast.evaluate, STUDY, ["analytical", "analytical-study"])
    assert_frame_equal(scores, cli_csv("evaluate", "--data", STUDY, "--model", "analytical,analytical-study"))
    assert set(scores["model"].unique()) == {"analytical", "analytical-study"}
    assert_frame_equal(quiet(gpucast.evaluate, STUDY, "analytical,analytical-study"), scores)


def test_predict_trace_equals_the_binarys_step():
    step = quiet(gpucast.predict_trace, TRACE, "A100 SXM4 80GB")
    cli_step = json.loads(cli("predict", "--trace", TRACE, "--target", "A100 SXM4 80GB", "--format", "json").stdout)
    assert step.total_ms == pytest.approx(cli_step["total_ms"])
    assert (step.lo_ms, step.hi_ms, step.interval) == (pytest.approx(cli_step["lo_ms"]), pytest.approx(cli_step["hi_ms"]), cli_step["interval"])
    assert step.kernels.height == len(cli_step["kernels"]) > 0
    # the step is its kernels' predicted time plus the idle gaps kept as measured
    assert step.total_ms == pytest.approx(step.kernels["predicted_ms"].sum() + step.gaps_ms)
    assert step.by_operator["predicted_ms"].sum() == pytest.approx(step.kernels["predicted_ms"].sum())
    with pytest.raises(gpucast.Error, match="trace"):
        gpucast.predict_trace(REPO / "no-such-trace.json", "A100 SXM4 80GB")


# --- errors: gpucast.Error subclasses with the binary's one-line messages ---------------


def test_a_bad_file_raises_the_binarys_message(tmp_path):
    # SYNTHETIC runs table with a time that is not a number on its second data row.
    bad = tmp_path / "runs.csv"
    bad.write_text(
        "gpu,kernel,config,time_ms,flops,dram_bytes\n"
        "NVIDIA TITAN V,saxpy,N=1024,0.25,2048,12288\n"
        "NVIDIA TITAN V,saxpy,N=2048,fast,4096,24576\n"
    )
    message, code = cli_error("predict", "--runs", bad, "--target", TARGET)
    with pytest.raises(gpucast.DataError) as raised:
        gpucast.predict(bad, TARGET)
    assert str(raised.value) == message
    assert raised.value.exit_code == code == 1
    assert message.startswith(f"{bad}:3: column 'time_ms'")


def test_a_missing_file_raises_file_error(tmp_path):
    missing = tmp_path / "none.csv"
    message, code = cli_error("predict", "--runs", missing, "--target", TARGET)
    with pytest.raises(gpucast.FileError) as raised:
        gpucast.predict(missing, TARGET)
    assert str(raised.value) == message
    assert raised.value.exit_code == code


def test_a_gpu_name_is_matched_never_guessed():
    message, code = cli_error("predict", "--runs", STUDY, "--target", "RTX 6000")
    with pytest.raises(gpucast.UsageError) as raised:
        gpucast.predict(STUDY, "RTX 6000")
    # (the same line, naming the keyword where the binary names its flag)
    assert message.startswith("--target: ")
    assert str(raised.value) == message.replace("--target: ", "target: ", 1)
    assert raised.value.exit_code == code == 2
    assert isinstance(raised.value, ValueError)


def test_a_dataframe_error_names_the_dataframe():
    frame = quiet(gpucast.load, STUDY).with_columns(
        pl.when(pl.int_range(pl.len()) == 4).then(-1.0).otherwise(pl.col("time_ms")).alias("time_ms")
    )
    with pytest.raises(gpucast.DataError) as raised:
        gpucast.predict(frame, TARGET)
    assert str(raised.value).startswith("DataFrame: row 5: column 'time_ms'"), str(raised.value)
    assert "gpucast-" not in str(raised.value)


def test_bad_options_are_usage_errors():
    for call in [
        lambda: gpucast.evaluate(STUDY, "analytical", protocol="lolo"),
        lambda: gpucast.evaluate(STUDY, ["analytical", "analytical"]),
        lambda: gpucast.predict(STUDY, TARGET, model="no-such-model"),
        lambda: gpucast.predict(STUDY, TARGET, target_calibration="guess"),
        lambda: gpucast.tune(CACHE, "RTX A6000", top=0),
        lambda: gpucast.tune(CACHE, "RTX A6000", kernel="no_such_kernel"),
        lambda: gpucast.rank(HUB, kernel="convolution_milo", min_memory_gb=-1),
        lambda: gpucast.gpus("intel"),
    ]:
        with pytest.raises(gpucast.UsageError) as raised:
            call()
        assert raised.value.exit_code == 2
        assert "\n" not in str(raised.value)
    with pytest.raises(gpucast.UsageError, match="model analytical is named twice"):
        gpucast.evaluate(STUDY, ["analytical", "analytical"])


def test_the_docs_example_runs_as_written(monkeypatch, capsys):
    page = (REPO / "docs/python.md").read_text()
    example = page.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(REPO)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gpucast.Note)
        exec(compile(example, "docs/python.md", "exec"), {})
    printed = capsys.readouterr().out
    assert "saxpy predictions" in printed
    assert "2 target: unknown GPU 'RTX 6000'" in printed
