"""The exceptions gpucast raises: one class per kind of failure, all ``gpucast.Error``."""

from __future__ import annotations


class Error(Exception):
    """Every error gpucast raises.

    ``str(error)`` is the one line the ``gpucast`` command prints after ``error:``
    (it names the file, line and column, or the argument, at fault), and
    ``exit_code`` is the status the command exits with: 1 for bad input, 2 for bad
    usage.
    """

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code

    def __str__(self) -> str:
        return self.message


class UsageError(Error, ValueError):
    """An argument gpucast cannot use: a GPU name that names no catalog GPU or
    several, a kernel or GPU the data has no rows of, an unknown model, protocol or
    option value."""


class DataError(Error):
    """Data that cannot be read as runs: a malformed cell or file, a rule broken
    across rows (a duplicate run), a GPU name the catalog does not know, a damaged
    saved model."""


class FileError(Error):
    """A file or directory that cannot be read (missing, unreadable, a broken link,
    a directory with no runs files in it)."""
