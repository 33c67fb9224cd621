//! One error type for the library, with variants callers can match. Every message
//! is one line that names the file and, for table data, where in it:
//! `FILE:LINE: column 'X': message` (LINE as an editor counts it: the header is
//! line 1), `FILE: row N: column 'X': message` for Parquet, `FILE: message` for a
//! whole file.

use std::fmt;

/// Where in a file a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Position {
    /// The whole file (a missing column, an empty file, ...).
    #[default]
    File,
    /// A line as an editor counts it (header = line 1, data row 1 = line 2).
    Line(usize),
    /// A 1-based data row of a file without lines (Parquet).
    Row(usize),
    /// A line and column of a JSON file (Kernel Tuner caches), as an editor counts them.
    LineColumn(usize, usize),
}

impl Position {
    /// The position of a row from its origin: its line for text files, else its row.
    pub fn of(origin: &crate::data::Origin) -> Position {
        match origin.line {
            Some(line) => Position::Line(line),
            None => Position::Row(origin.row),
        }
    }
    /// The position of data row `row` (1-based) of a frame: line `row + 1` of a text
    /// file (the header is line 1), else the row (Parquet).
    pub fn of_row(row: usize, is_text: bool) -> Position {
        if is_text {
            Position::Line(row + 1)
        } else {
            Position::Row(row)
        }
    }
}

/// `FILE:LINE: column 'X': ` / `FILE: row N: ` / `FILE: ` (trailing separator included).
fn place(
    f: &mut fmt::Formatter<'_>,
    file: &str,
    at: Position,
    column: Option<&str>,
) -> fmt::Result {
    match at {
        Position::File => write!(f, "{file}: ")?,
        Position::Line(l) => write!(f, "{file}:{l}: ")?,
        Position::Row(r) => write!(f, "{file}: row {r}: ")?,
        Position::LineColumn(l, c) => write!(f, "{file}: line {l}, column {c}: ")?,
    }
    if let Some(c) = column {
        write!(f, "column '{c}': ")?;
    }
    Ok(())
}

#[derive(Debug)]
pub enum Error {
    /// A file or directory cannot be read or written; `path` is empty for standard
    /// output, `kind` is set when an OS error is behind it.
    Io {
        path: String,
        message: String,
        kind: Option<std::io::ErrorKind>,
    },
    /// A file's content is malformed (bad number, missing column, bad TOML, ...).
    Parse {
        file: String,
        line: Position,
        column: Option<String>,
        message: String,
    },
    /// Well-formed data that breaks a rule across rows (e.g. a duplicate run).
    Validation {
        file: String,
        line: Position,
        column: Option<String>,
        message: String,
    },
    /// A GPU name the catalog does not know; `file` is empty when the name came
    /// from the command line.
    UnknownGpu {
        name: String,
        file: String,
        line: Position,
        /// Where the name is written: `column 'gpu'` in a runs table, the key or
        /// column of a tool's own format (e.g. `'device_name'` in a Kernel Tuner cache).
        field: String,
        /// What to do about it (e.g. "not in the catalog (add it with --gpus FILE)").
        hint: String,
    },
    /// A saved model file that cannot be used (the message names the file).
    ModelFile(String),
    /// The command line asks for something impossible (exit code 2).
    Usage(String),
    /// Anything else (a model that cannot fit, an internal failure, ...).
    Other(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, message, .. } if path.is_empty() => write!(f, "{message}"),
            Error::Io { path, message, .. } => write!(f, "{path}: {message}"),
            Error::Parse {
                file,
                line,
                column,
                message,
            }
            | Error::Validation {
                file,
                line,
                column,
                message,
            } => {
                place(f, file, *line, column.as_deref())?;
                write!(f, "{message}")
            }
            Error::UnknownGpu {
                name,
                file,
                line,
                field,
                hint,
            } => {
                if !file.is_empty() {
                    place(f, file, *line, None)?;
                    write!(f, "{field}: ")?;
                }
                write!(f, "unknown GPU '{name}'")?;
                if !hint.is_empty() {
                    write!(f, ": {hint}")?;
                }
                Ok(())
            }
            Error::ModelFile(m) | Error::Usage(m) | Error::Other(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for Error {}

/// Writing to standard output (`?` on a `write!` to stdout).
impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io {
            path: String::new(),
            message: format!("writing output: {e}"),
            kind: Some(e.kind()),
        }
    }
}

impl Error {
    /// The process exit status for this error: 2 for a usage error, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) => 2,
            _ => 1,
        }
    }

    /// Whether this is a write to a closed pipe (`gpucast ... | head`): the reader
    /// has what it wanted, so the command ends quietly.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(
            self,
            Error::Io {
                kind: Some(std::io::ErrorKind::BrokenPipe),
                ..
            }
        )
    }

    /// `path` cannot be read or written (`message` is usually the OS error).
    pub fn io(path: impl fmt::Display, message: impl fmt::Display) -> Self {
        Error::Io {
            path: path.to_string(),
            message: message.to_string(),
            kind: None,
        }
    }
    /// A malformed cell or line.
    pub fn parse(
        file: impl fmt::Display,
        line: Position,
        column: Option<&str>,
        message: impl Into<String>,
    ) -> Self {
        Error::Parse {
            file: file.to_string(),
            line,
            column: column.map(str::to_string),
            message: message.into(),
        }
    }
    /// A malformed file as a whole.
    pub fn parse_file(file: impl fmt::Display, message: impl Into<String>) -> Self {
        Error::parse(file, Position::File, None, message)
    }
    pub fn validation(
        file: impl fmt::Display,
        line: Position,
        column: Option<&str>,
        message: impl Into<String>,
    ) -> Self {
        Error::Validation {
            file: file.to_string(),
            line,
            column: column.map(str::to_string),
            message: message.into(),
        }
    }
    /// A GPU name the catalog does not know, written at `line` of `file` in `field`
    /// (e.g. `column 'gpu'`; unused without a file).
    pub fn unknown_gpu(
        name: impl Into<String>,
        file: impl fmt::Display,
        line: Position,
        field: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        Error::UnknownGpu {
            name: name.into(),
            file: file.to_string(),
            line,
            field: field.into(),
            hint: hint.into(),
        }
    }
    /// A model file that cannot be used; the message names the file.
    pub fn model_file(message: impl Into<String>) -> Self {
        Error::ModelFile(message.into())
    }
    pub fn usage(message: impl Into<String>) -> Self {
        Error::Usage(message.into())
    }

    /// Shim for older call sites: a cell of a table by its 1-based data row
    /// (reported as the editor's line, row + 1). Prefer [`Error::parse`].
    pub fn cell(
        file: impl fmt::Display,
        row: usize,
        column: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        let column = column.into();
        Error::parse(file, Position::Line(row + 1), Some(&column), message)
    }
    /// Shim for older call sites: a problem with a whole file, reported as I/O.
    /// Prefer [`Error::io`], [`Error::parse_file`] or [`Error::model_file`].
    pub fn file(file: impl fmt::Display, message: impl Into<String>) -> Self {
        Error::io(file, message.into())
    }
    /// Shim for older call sites: anything else. Prefer [`Error::usage`] for
    /// command-line mistakes.
    pub fn msg(message: impl Into<String>) -> Self {
        Error::Other(message.into())
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// Where a TOML error is: `FILE:LINE:COL` as an editor counts them, or `FILE` when the
/// error has no position.
pub fn toml_place(file: &str, text: &str, e: &toml::de::Error) -> String {
    match e.span() {
        Some(s) => text_place(file, text, s.start),
        None => file.to_string(),
    }
}

/// `FILE:LINE:COL` of byte `offset` of `text`, as an editor counts them
/// ([`line_col`]).
pub fn text_place(file: &str, text: &str, offset: usize) -> String {
    let (line, col) = line_col(text, offset);
    format!("{file}:{line}:{col}")
}

/// 1-based line and column (in characters) of byte `offset` of `text`; an offset
/// past the end or inside a character counts as the character's start.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, col)
}

/// A TOML error's message on one line, without the toml crate's position and snippet
/// (see [`toml_place`]).
pub fn toml_message(e: &toml::de::Error) -> String {
    e.message().split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_file_line_and_column() {
        let e = Error::parse("a.csv", Position::Line(2), Some("time_ms"), "bad");
        assert_eq!(e.to_string(), "a.csv:2: column 'time_ms': bad");
        let e = Error::parse("a.parquet", Position::Row(7), Some("flops"), "bad");
        assert_eq!(e.to_string(), "a.parquet: row 7: column 'flops': bad");
        assert_eq!(
            Error::parse_file("a.csv", "no data rows").to_string(),
            "a.csv: no data rows"
        );
        let e = Error::validation("a.csv", Position::Line(3), Some("config"), "dup");
        assert_eq!(e.to_string(), "a.csv:3: column 'config': dup");
        let e = Error::unknown_gpu(
            "X 9000",
            "a.csv",
            Position::Line(4),
            "column 'gpu'",
            "add it",
        );
        assert_eq!(
            e.to_string(),
            "a.csv:4: column 'gpu': unknown GPU 'X 9000': add it"
        );
        assert_eq!(
            Error::unknown_gpu("X", "", Position::File, "column 'gpu'", "").to_string(),
            "unknown GPU 'X'"
        );
        // shims keep old call sites meaning the same thing
        assert_eq!(
            Error::cell("a.csv", 1, "gpu", "m").to_string(),
            "a.csv:2: column 'gpu': m"
        );
        assert!(matches!(Error::file("f", "m"), Error::Io { .. }));
        assert!(matches!(Error::msg("m"), Error::Other(_)));
    }

    #[test]
    fn toml_errors_name_line_and_column_on_one_line() {
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct T {
            a: u32,
        }
        let text = "a = 1\nbogus = 2\n";
        let e = toml::from_str::<T>(text).unwrap_err();
        assert_eq!(toml_place("t.toml", text, &e), "t.toml:2:1");
        // Columns count characters, not bytes; offsets past the end or inside a
        // character do not panic.
        assert_eq!(text_place("u.toml", "é = 1\nab", 7), "u.toml:2:1");
        assert_eq!(text_place("u.toml", "é = 1\nab", 9), "u.toml:2:3");
        assert_eq!(text_place("u.toml", "é = 1\nab", 99), "u.toml:2:3");
        assert_eq!(text_place("u.toml", "é = 1\nab", 1), "u.toml:1:1");
        assert_eq!(text_place("u.toml", "é = 1\nab", 2), "u.toml:1:2");
        let m = toml_message(&e);
        assert!(
            m.starts_with("unknown field `bogus`") && !m.contains('\n'),
            "{m}"
        );
    }

    #[test]
    fn exit_codes() {
        assert_eq!(Error::usage("bad flag").exit_code(), 2);
        assert_eq!(Error::msg("x").exit_code(), 1);
        assert_eq!(Error::io("f", "gone").exit_code(), 1);
        assert_eq!(Error::model_file("m.json: bad").exit_code(), 1);
        let pipe = Error::from(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        assert!(pipe.is_broken_pipe() && pipe.to_string().starts_with("writing output: "));
        assert!(!Error::io("f", "gone").is_broken_pipe());
    }
}
