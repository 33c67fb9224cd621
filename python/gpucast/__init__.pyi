"""Type stubs of the gpucast package (see gpucast/__init__.py for the docstrings)."""

import os
from typing import Any, Optional, Sequence, Union

import polars as pl

from ._errors import DataError as DataError
from ._errors import Error as Error
from ._errors import FileError as FileError
from ._errors import UsageError as UsageError

__version__: str

PathLike = Union[str, os.PathLike[str]]
Paths = Union[PathLike, Sequence[PathLike]]
Frame = Any  # a polars.DataFrame, or a pandas.DataFrame
Runs = Union[PathLike, Frame, Sequence[Union[PathLike, Frame]]]

class Note(UserWarning): ...

def gpus(vendor: Optional[str] = ..., *, catalog: Optional[Paths] = ...) -> pl.DataFrame: ...
def load(
    path: Paths,
    format: str = ...,
    *,
    gpu: Optional[str] = ...,
    source: Optional[str] = ...,
    validate: bool = ...,
    catalog: Optional[Paths] = ...,
) -> pl.DataFrame: ...
def predict(
    runs: Runs,
    target: str,
    model: PathLike = ...,
    *,
    gpu: Optional[str] = ...,
    source: Optional[str] = ...,
    data: Optional[Runs] = ...,
    seed: int = ...,
    target_calibration: str = ...,
    launch_floor: Optional[str] = ...,
    study_metrics: Optional[PathLike] = ...,
    catalog: Optional[Paths] = ...,
) -> pl.DataFrame: ...
class Step:
    total_ms: float
    lo_ms: float
    hi_ms: float
    interval: str
    measured_ms: float
    gaps_ms: float
    source_gpu: str
    target: str
    model: str
    unpredicted: int
    kernels: pl.DataFrame
    by_operator: pl.DataFrame

def predict_trace(
    trace: PathLike,
    target: str,
    *,
    model: PathLike = ...,
    gpu: Optional[str] = ...,
    data: Optional[Runs] = ...,
    seed: int = ...,
    target_calibration: str = ...,
    launch_floor: Optional[str] = ...,
    catalog: Optional[Paths] = ...,
) -> Step: ...
def tune(
    runs: Runs,
    target: str,
    kernel: Optional[str] = ...,
    *,
    top: int = ...,
    check: bool = ...,
    model: PathLike = ...,
    gpu: Optional[str] = ...,
    source: Optional[str] = ...,
    data: Optional[Runs] = ...,
    seed: int = ...,
    target_calibration: str = ...,
    launch_floor: Optional[str] = ...,
    study_metrics: Optional[PathLike] = ...,
    catalog: Optional[Paths] = ...,
) -> pl.DataFrame: ...
def rank(
    runs: Runs,
    kernel: Optional[str] = ...,
    *,
    model: PathLike = ...,
    vendor: Optional[str] = ...,
    arch: Optional[str] = ...,
    min_memory_gb: Optional[float] = ...,
    targets: Optional[Sequence[str]] = ...,
    prices: Optional[PathLike] = ...,
    gpu: Optional[str] = ...,
    source: Optional[str] = ...,
    data: Optional[Runs] = ...,
    seed: int = ...,
    target_calibration: str = ...,
    launch_floor: Optional[str] = ...,
    study_metrics: Optional[PathLike] = ...,
    catalog: Optional[Paths] = ...,
) -> pl.DataFrame: ...
def evaluate(
    data: Runs,
    models: Union[str, Sequence[str]] = ...,
    protocol: str = ...,
    *,
    test_kernels: Optional[Sequence[str]] = ...,
    score_kernels: Optional[Sequence[str]] = ...,
    per_kernel: bool = ...,
    seed: int = ...,
    target_calibration: str = ...,
    launch_floor: Optional[str] = ...,
    study_metrics: Optional[PathLike] = ...,
    catalog: Optional[Paths] = ...,
) -> pl.DataFrame: ...
