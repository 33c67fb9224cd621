"""gpucast: predict how fast a CUDA kernel runs on a GPU you do not have, from
measurements on GPUs you do have.

The functions here call the gpucast library (Rust) directly, as the ``gpucast``
command does: the same models, the same numbers, the same one-line errors. Runs go
in as a path (a runs table, a Kernel Tuner cache, an Nsight Compute export, a
directory of them) or as a polars (or pandas) DataFrame with the runs-table columns
(``gpu``, ``kernel``, ``config``, ``time_ms``, ``flops``, ``dram_bytes``, ...);
tables come out as polars DataFrames (``.to_pandas()`` for pandas). What the command
prints as a note on standard error is a :class:`Note` warning here.

>>> import gpucast
>>> preds = gpucast.predict("datasets/public/reference_study", target="H100 SXM5 80GB")
"""

from __future__ import annotations

import io
import json
import os
import tempfile
import warnings
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import polars as pl

from . import _gpucast
from ._errors import DataError, Error, FileError, UsageError

__all__ = [
    "DataError",
    "Error",
    "FileError",
    "Note",
    "UsageError",
    "evaluate",
    "gpus",
    "load",
    "predict",
    "predict_trace",
    "Step",
    "rank",
    "tune",
]

__version__: str = _gpucast.version({})

PathLike = Union[str, "os.PathLike[str]"]
Paths = Union[PathLike, Sequence[PathLike]]
#: Runs: a path, a DataFrame, or a list of them.
Runs = Union[PathLike, Any, Sequence[Union[PathLike, Any]]]


class Note(UserWarning):
    """What the ``gpucast`` command prints as a note on standard error: rows of the
    data not read as runs, the pre-trained model standing in for ``hybrid``, how a
    tuning pick did on the data's other GPUs."""


def _paths(paths: Optional[Paths]) -> List[str]:
    if paths is None:
        return []
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    return [os.fspath(p) for p in paths]


def _is_frame(x: Any) -> bool:
    return isinstance(x, pl.DataFrame) or type(x).__module__.split(".")[0] == "pandas"


class _RunsFiles:
    """Runs as paths for the library: each DataFrame written to a Parquet file of a
    private temporary directory (removed on exit), whose name errors then give as
    ``DataFrame`` (``DataFrame 2`` for the second of several)."""

    def __init__(self) -> None:
        self._dir: Optional[tempfile.TemporaryDirectory] = None
        self._names: Dict[str, str] = {}

    def paths(self, runs: Optional[Runs]) -> List[str]:
        if runs is None:
            return []
        items = [runs] if isinstance(runs, (str, os.PathLike)) or _is_frame(runs) else list(runs)
        out = []
        for item in items:
            if not _is_frame(item):
                out.append(os.fspath(item))
                continue
            frame = item if isinstance(item, pl.DataFrame) else pl.from_pandas(item)
            if self._dir is None:
                self._dir = tempfile.TemporaryDirectory(prefix="gpucast-")
            n = len(self._names) + 1
            path = os.path.join(self._dir.name, f"dataframe-{n}.parquet")
            frame.write_parquet(path, compression="uncompressed")
            self._names[path] = "DataFrame" if n == 1 else f"DataFrame {n}"
            out.append(path)
        return out

    def __enter__(self) -> "_RunsFiles":
        return self

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        names, self._names = self._names, {}
        if self._dir is not None:
            self._dir.cleanup()
        if isinstance(error, Error) and names:
            message = error.message
            for path, name in names.items():
                message = message.replace(path, name)
            if message != error.message:
                raise type(error)(message, error.exit_code) from None


def _notes(notes: Sequence[str]) -> None:
    for note in notes:
        warnings.warn(note, Note, stacklevel=3)


def _frame(parquet: bytes) -> pl.DataFrame:
    return pl.read_parquet(io.BytesIO(parquet))


def _table(csv: str) -> pl.DataFrame:
    # (the command line's CSV writes "-" where a cell has no value)
    return pl.read_csv(io.BytesIO(csv.encode()), infer_schema_length=None, null_values=["-"])


def _predicting(
    files: _RunsFiles,
    runs: Runs,
    model: PathLike,
    gpu: Optional[str],
    source: Optional[str],
    data: Optional[Runs],
    seed: int,
    target_calibration: str,
    launch_floor: Optional[str],
    study_metrics: Optional[PathLike],
    catalog: Optional[Paths],
) -> Dict[str, Any]:
    return {
        "runs": files.paths(runs),
        "model": os.fspath(model),
        "gpu": gpu,
        "source": source,
        "data": files.paths(data),
        "seed": seed,
        "target_calibration": target_calibration,
        "launch_floor": launch_floor,
        "study_metrics": os.fspath(study_metrics) if study_metrics is not None else None,
        "catalog": _paths(catalog),
    }


def gpus(vendor: Optional[str] = None, *, catalog: Optional[Paths] = None) -> pl.DataFrame:
    """The GPU catalog, one row per GPU (``gpucast gpus list --format csv``).

    Args:
        vendor: only GPUs of this vendor (``nvidia``, ``amd``; any case).
        catalog: GPU catalog TOML file(s) merged over the built-in one.
    """
    return _table(_gpucast.gpus({"vendor": vendor, "catalog": _paths(catalog)}))


def load(
    path: Paths,
    format: str = "auto",
    *,
    gpu: Optional[str] = None,
    source: Optional[str] = None,
    validate: bool = False,
    catalog: Optional[Paths] = None,
) -> pl.DataFrame:
    """Runs read from files in any format gpucast imports, as a canonical runs table
    (``gpucast data import --from FORMAT``; the DataFrame holds what its
    ``--out runs.parquet`` would).

    Args:
        path: a file or directory, or a list of them.
        format: ``auto`` (detected per file), ``canonical``, ``study``,
            ``kernel-tuner``, ``gemm-table``, ``ncu`` or ``neusight``.
        gpu: the GPU a file was measured on, where it does not name it.
        source: the ``source`` column (where the data comes from).
        validate: check the rows and add the ``flags`` column.
        catalog: GPU catalog TOML file(s) merged over the built-in one.
    """
    parquet, notes = _gpucast.load(
        {
            "paths": _paths(path),
            "format": format,
            "gpu": gpu,
            "source": source,
            "validate": validate,
            "catalog": _paths(catalog),
        }
    )
    _notes(notes)
    return _frame(parquet)


def predict(
    runs: Runs,
    target: str,
    model: PathLike = "analytical",
    *,
    gpu: Optional[str] = None,
    source: Optional[str] = None,
    data: Optional[Runs] = None,
    seed: int = 42,
    target_calibration: str = "spec",
    launch_floor: Optional[str] = None,
    study_metrics: Optional[PathLike] = None,
    catalog: Optional[Paths] = None,
) -> pl.DataFrame:
    """Every run's work predicted on ``target`` (``gpucast predict -o FILE``).

    Returns the runs' columns, then ``target_gpu``, ``pred_ms``, ``pred_lo_ms``,
    ``pred_hi_ms`` (the interval), ``interval`` (what the interval is: ``90%``,
    ``spread`` or ``none``), ``bound``, ``model`` and ``no_prediction_reason`` (where
    a row has no prediction, its predictions are null).

    Args:
        runs: runs measured on source GPUs: path(s) or DataFrame(s).
        target: the GPU to predict for, as the catalog names it (or an alias).
        model: a model name (``analytical``, ``hybrid``, ``pretrained``, ...) or a
            model saved by ``gpucast train`` (``.json``).
        gpu: the GPU the runs were measured on, for files that do not name it.
        source: use only this source GPU's runs.
        data: training data for a named model (default: ``runs``).
        seed: seed of the learned models.
        target_calibration: where target figures come from: ``spec``, ``measured``
            or ``study``.
        launch_floor: where a target's launch floor comes from: ``sources`` or
            ``catalog`` (default: ``sources``, or a saved model's own).
        study_metrics: the reference study's gpu_metrics.json (for
            ``analytical-study`` and ``target_calibration="study"``; default: the
            one beside the data).
        catalog: GPU catalog TOML file(s) merged over the built-in one.
    """
    with _RunsFiles() as files:
        options = _predicting(files, runs, model, gpu, source, data, seed, target_calibration, launch_floor, study_metrics, catalog)
        parquet, notes = _gpucast.predict({**options, "target": target})
    _notes(notes)
    return _frame(parquet)


class Step:
    """A profiled step predicted on another GPU (what :func:`predict_trace` returns).

    Attributes:
        total_ms: the step predicted: the kernels' predicted time plus ``gaps_ms``.
        lo_ms, hi_ms: its interval; ``interval`` says what it is (``90%``,
            ``spread`` or ``none``).
        measured_ms: the step as the trace measured it.
        gaps_ms: the GPU's idle time between kernels, kept as measured.
        kernels: one row per kernel in launch order (``kernel``, ``operator``,
            ``measured_ms``, ``predicted_ms``, ``lo_ms``, ``hi_ms``, ``predicted``).
        by_operator: the kernels summed per launching operator, largest first.
        source_gpu, target, model, unpredicted: where it ran, what it was
            predicted on and with, and how many kernels kept their measured time.
    """

    def __init__(self, step: Dict[str, Any]) -> None:
        self.total_ms: float = step["total_ms"]
        self.lo_ms: float = step["lo_ms"]
        self.hi_ms: float = step["hi_ms"]
        self.interval: str = step["interval"]
        self.measured_ms: float = step["measured_ms"]
        self.gaps_ms: float = step["gaps_ms"]
        self.source_gpu: str = step["source_gpu"]
        self.target: str = step["target"]
        self.model: str = step["model"]
        self.unpredicted: int = step["unpredicted"]
        self.kernels: pl.DataFrame = pl.DataFrame(
            step["kernels"],
            schema={
                "kernel": pl.String,
                "operator": pl.String,
                "measured_ms": pl.Float64,
                "predicted_ms": pl.Float64,
                "lo_ms": pl.Float64,
                "hi_ms": pl.Float64,
                "predicted": pl.Boolean,
            },
        )
        self.by_operator: pl.DataFrame = (
            self.kernels.group_by("operator")
            .agg(
                pl.len().alias("kernels"),
                pl.col("measured_ms").sum(),
                pl.col("predicted_ms").sum(),
            )
            .sort(["predicted_ms", "operator"], descending=[True, False])
        )

    def __repr__(self) -> str:
        return (
            f"Step({self.kernels.height} kernels on {self.target}: {self.total_ms:.4f} ms "
            f"[{self.lo_ms:.4f}, {self.hi_ms:.4f}] ({self.interval}); measured on "
            f"{self.source_gpu} {self.measured_ms:.4f} ms)"
        )


def predict_trace(
    trace: PathLike,
    target: str,
    *,
    model: PathLike = "pretrained",
    gpu: Optional[str] = None,
    data: Optional[Runs] = None,
    seed: int = 42,
    target_calibration: str = "spec",
    launch_floor: Optional[str] = None,
    catalog: Optional[Paths] = None,
) -> Step:
    """The step a PyTorch profiler trace recorded, predicted on ``target``
    (``gpucast predict --trace``): every GPU kernel predicted, plus the trace's idle
    time between kernels kept as measured.

    Args:
        trace: a Chrome-trace JSON from ``torch.profiler`` (gzip'd or not).
        target: the GPU to predict for, as the catalog names it (or an alias).
        model: default ``pretrained`` (from one source GPU only a trained model has
            a calibrated interval); any model ``predict`` takes.
        gpu: the GPU the trace ran on, where its device name is not the catalog's.
        data, seed, target_calibration, launch_floor, catalog: as for :func:`predict`.
    """
    with _RunsFiles() as files:
        options = _predicting(files, [], model, gpu, None, data, seed, target_calibration, launch_floor, None, catalog)
        text, notes = _gpucast.predict_trace({**options, "target": target, "trace": os.fspath(trace)})
    _notes(notes)
    return Step(json.loads(text))


def tune(
    runs: Runs,
    target: str,
    kernel: Optional[str] = None,
    *,
    top: int = 10,
    check: bool = True,
    model: PathLike = "analytical",
    gpu: Optional[str] = None,
    source: Optional[str] = None,
    data: Optional[Runs] = None,
    seed: int = 42,
    target_calibration: str = "spec",
    launch_floor: Optional[str] = None,
    study_metrics: Optional[PathLike] = None,
    catalog: Optional[Paths] = None,
) -> pl.DataFrame:
    """The configurations of each tuning space predicted fastest on ``target``
    (``gpucast tune --format csv``): ``kernel``, ``rank``, ``of``, ``config``,
    ``pred_ms`` and its interval, one row per configuration shown.

    Args:
        runs: a tuning space measured on source GPUs: path(s) or DataFrame(s).
        target: the GPU to tune for.
        kernel: only this kernel's tuning spaces (default: every kernel's).
        top: configurations shown per tuning space.
        check: also score the model's first picks on the data's other GPUs
            (leave-one-GPU-out), said in a :class:`Note`.
        model, gpu, source, data, seed, target_calibration, launch_floor,
            study_metrics, catalog:
            as for :func:`predict`.
    """
    if top < 1:
        raise UsageError(f"top {top}: show at least one configuration", 2)
    with _RunsFiles() as files:
        options = _predicting(files, runs, model, gpu, source, data, seed, target_calibration, launch_floor, study_metrics, catalog)
        csv, notes = _gpucast.tune({**options, "target": target, "kernel": kernel, "top": top, "check": check})
    _notes(notes)
    return _table(csv)


def rank(
    runs: Runs,
    kernel: Optional[str] = None,
    *,
    model: PathLike = "analytical",
    vendor: Optional[str] = None,
    arch: Optional[str] = None,
    min_memory_gb: Optional[float] = None,
    targets: Optional[Sequence[str]] = None,
    prices: Optional[PathLike] = None,
    gpu: Optional[str] = None,
    source: Optional[str] = None,
    data: Optional[Runs] = None,
    seed: int = 42,
    target_calibration: str = "spec",
    launch_floor: Optional[str] = None,
    study_metrics: Optional[PathLike] = None,
    catalog: Optional[Paths] = None,
) -> pl.DataFrame:
    """Every catalog GPU (or those the filters keep) ranked fastest first for a
    kernel or the whole runs (``gpucast rank --format csv``): ``rank``, ``gpu``,
    ``time_ms`` and its interval, ``speedup`` over the fastest source GPU, ... and,
    for GPUs not ranked, ``not_ranked_reason``.

    Args:
        runs: runs measured on source GPUs: path(s) or DataFrame(s).
        kernel: rank for this kernel (default: every kernel of the runs).
        vendor, arch: only GPUs of this vendor or architecture.
        min_memory_gb: only GPUs with at least this much memory.
        targets: only these GPUs.
        prices: a TOML of ``"GPU name" = dollars per hour``: adds the cost per run.
        model, gpu, source, data, seed, target_calibration, launch_floor,
            study_metrics, catalog:
            as for :func:`predict`.
    """
    filters = {
        "vendor": vendor,
        "arch": arch,
        "min_memory_gb": min_memory_gb,
        "targets": list(targets) if targets is not None else None,
        "prices": os.fspath(prices) if prices is not None else None,
    }
    with _RunsFiles() as files:
        options = _predicting(files, runs, model, gpu, source, data, seed, target_calibration, launch_floor, study_metrics, catalog)
        csv, notes = _gpucast.rank({**options, **filters, "kernel": kernel})
    _notes(notes)
    return _table(csv)


def evaluate(
    data: Runs,
    models: Union[str, Sequence[str]] = "analytical",
    protocol: str = "logo",
    *,
    test_kernels: Optional[Sequence[str]] = None,
    score_kernels: Optional[Sequence[str]] = None,
    per_kernel: bool = False,
    seed: int = 42,
    target_calibration: str = "spec",
    launch_floor: Optional[str] = None,
    study_metrics: Optional[PathLike] = None,
    catalog: Optional[Paths] = None,
) -> pl.DataFrame:
    """Models scored under a protocol (``gpucast evaluate --format csv``): one row
    per model and target (MAPE, median ratio, within 10/25/50 %, interval coverage,
    Spearman, top-1 regret, ...).

    Args:
        data: runs: path(s) or DataFrame(s).
        models: a model name or several (``"analytical,hybrid"`` or a list).
        protocol: ``logo`` (leave one GPU out), ``new-size``, ``new-kernel``,
            ``new-family`` or ``loco`` (leave one corpus out).
        test_kernels: the kernels held out by ``new-kernel``.
        score_kernels: score only these kernels (every run still trains).
        per_kernel: add rows per kernel, pooled over targets (target ``all``).
        seed, target_calibration, launch_floor, study_metrics, catalog: as for
            :func:`predict`.
    """
    names = [m for m in models.split(",")] if isinstance(models, str) else list(models)
    with _RunsFiles() as files:
        csv, notes = _gpucast.evaluate(
            {
                "data": files.paths(data),
                "protocol": protocol,
                "models": names,
                "test_kernels": list(test_kernels) if test_kernels is not None else None,
                "score_kernels": list(score_kernels) if score_kernels is not None else None,
                "per_kernel": per_kernel,
                "seed": seed,
                "target_calibration": target_calibration,
                "launch_floor": launch_floor,
                "study_metrics": os.fspath(study_metrics) if study_metrics is not None else None,
                "catalog": _paths(catalog),
            }
        )
    _notes(notes)
    return _table(csv)
