//! One error type for the library. Every message is one line that names the
//! file (and, for table data, the row and column) and what is wrong.

use std::fmt;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A problem with one cell of a table: file, 1-based data row, column.
    #[error("{file}: row {row}, column '{column}': {message}")]
    Cell {
        file: String,
        row: usize,
        column: String,
        message: String,
    },
    /// A problem with a whole file (unreadable, missing column, bad TOML, ...).
    #[error("{file}: {message}")]
    File { file: String, message: String },
    /// Bad usage: an argument or name the command cannot take (exit code 2).
    #[error("{0}")]
    Usage(String),
    /// A saved model file that cannot be used.
    #[error("{0}")]
    ModelFile(String),
    /// Writing to standard output failed (a closed pipe is not an error: see
    /// [`Error::is_broken_pipe`]).
    #[error("writing output: {0}")]
    Io(#[from] std::io::Error),
    /// Anything else.
    #[error("{0}")]
    Msg(String),
}

impl Error {
    pub fn cell(
        file: impl fmt::Display,
        row: usize,
        column: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Error::Cell {
            file: file.to_string(),
            row,
            column: column.into(),
            message: message.into(),
        }
    }
    pub fn file(file: impl fmt::Display, message: impl Into<String>) -> Self {
        Error::File {
            file: file.to_string(),
            message: message.into(),
        }
    }
    pub fn msg(message: impl Into<String>) -> Self {
        Error::Msg(message.into())
    }
    pub fn usage(message: impl Into<String>) -> Self {
        Error::Usage(message.into())
    }
    pub fn model_file(message: impl Into<String>) -> Self {
        Error::ModelFile(message.into())
    }
    /// The process exit code for this error: 2 for bad usage, 1 for bad input.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) => 2,
            _ => 1,
        }
    }
    /// Whether this is a write to a closed pipe (`gpucast ... | head`): the reader
    /// has what it wanted, so the command ends quietly with exit code 0.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::Io(e) if e.kind() == std::io::ErrorKind::BrokenPipe)
    }
}

pub type Result<T> = std::result::Result<T, Error>;
