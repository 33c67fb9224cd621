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
    /// Anything else (bad argument, unknown model, ...).
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
}

pub type Result<T> = std::result::Result<T, Error>;
