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
    pub fn of(origin: &gpucast_runs::Origin) -> Position {
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

/// A value a caller of the library chose, which each interface names its own way (the
/// command line by its flags, see [`name_inputs`]): errors about it hold the value,
/// not the interface's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// The GPU to predict for.
    Target,
    /// The one source GPU whose runs are used.
    Source,
    /// The GPU a profile was taken on (for files that do not name it), or a GPU
    /// whose rows are selected.
    Gpu,
    /// A kernel whose rows are selected.
    Kernel,
    /// A GPU catalog file merged over the built-in one.
    GpuCatalog,
    /// The reference study's gpu_metrics.json.
    StudyMetrics,
    /// Where target figures come from.
    TargetCalibration,
    /// The input format of an import.
    ImportFormat,
    /// Where a target's launch floor comes from.
    LaunchFloor,
    /// GPUs a ranking is limited to.
    Targets,
    /// Leave to replace existing files with outputs ([`crate::files::allow_replacing`]).
    Replace,
    /// The models to fit or evaluate, by name.
    Model,
}

impl Input {
    /// How the library names it when no interface said otherwise.
    pub fn plain_name(self) -> &'static str {
        match self {
            Input::Target => "target GPU",
            Input::Source => "source GPU",
            Input::Gpu => "GPU",
            Input::Kernel => "kernel",
            Input::GpuCatalog => "GPU catalog file",
            Input::StudyMetrics => "study metrics file",
            Input::TargetCalibration => "target calibration",
            Input::ImportFormat => "input format",
            Input::LaunchFloor => "launch floors",
            Input::Targets => "GPUs to rank",
            Input::Replace => "files::allow_replacing",
            Input::Model => "model",
        }
    }
}

static INPUT_NAMES: std::sync::OnceLock<fn(Input) -> &'static str> = std::sync::OnceLock::new();

/// How errors name the [`Input`]s from now on (the command line: its flags, e.g.
/// `--source`); set once, by the program's front end. Without it errors use
/// [`Input::plain_name`].
pub fn name_inputs(names: fn(Input) -> &'static str) {
    let _ = INPUT_NAMES.set(names);
}

/// An [`Input`]'s name in errors.
pub fn input_name(input: Input) -> &'static str {
    INPUT_NAMES.get().map_or(input.plain_name(), |f| f(input))
}

/// Why a name given for a GPU names none of the catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GpuHint {
    /// No hint.
    None,
    /// It matches several GPUs (their names, quoted, best first).
    Ambiguous(String),
    /// The catalog has no such GPU; `close` is "; close names: 'A', 'B'" or empty.
    NotInCatalog { close: String },
    /// It holds a character GPU names are not written with: which, and the GPU it
    /// looks like.
    Character(String),
    /// A hint of the caller's own.
    Text(String),
}

impl fmt::Display for GpuHint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuHint::None => Ok(()),
            GpuHint::Ambiguous(gs) => write!(f, "ambiguous: {gs}"),
            GpuHint::NotInCatalog { close } => write!(
                f,
                "not in the catalog (add it with {} FILE){close}",
                input_name(Input::GpuCatalog)
            ),
            GpuHint::Character(t) | GpuHint::Text(t) => write!(f, "{t}"),
        }
    }
}

/// The library's error: a variant per kind of failure, each matchable, with the
/// failure behind it as its [`source`](std::error::Error::source) where there is one.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or directory cannot be read or written; `path` is empty for standard
    /// output; `source` is the OS error when there is one.
    #[error("{}", io_text(path, message))]
    Io {
        path: String,
        message: String,
        #[source]
        source: Option<std::io::Error>,
    },
    /// A file's content is malformed (bad number, missing column, bad TOML, ...).
    #[error("{}{message}", Place(file, *line, column.as_deref()))]
    Parse {
        file: String,
        line: Position,
        column: Option<String>,
        message: String,
    },
    /// Well-formed data that breaks a rule across rows (e.g. a duplicate run).
    #[error("{}{message}", Place(file, *line, column.as_deref()))]
    Validation {
        file: String,
        line: Position,
        column: Option<String>,
        message: String,
    },
    /// A GPU name of a data file the catalog does not know; `file` is empty when the
    /// name came from elsewhere.
    #[error("{}", unknown_gpu_text(name, file, *line, field, hint))]
    UnknownGpu {
        name: String,
        file: String,
        line: Position,
        /// Where the name is written: `column 'gpu'` in a runs table, the key or
        /// column of a tool's own format (e.g. `'device_name'` in a Kernel Tuner cache).
        field: String,
        hint: Box<GpuHint>,
    },
    /// A GPU name that names none of the catalog's GPUs, or several.
    #[error("{}", gpu_name_text(name, candidates, *catalog_gpus, close))]
    GpuName {
        name: String,
        /// The GPUs it matches, quoted, when it matches several (empty: none).
        candidates: String,
        /// How many GPUs the catalog has.
        catalog_gpus: usize,
        /// "; close names: 'A', 'B'" or empty.
        close: String,
    },
    /// A GPU name with a character GPU names are not written with (a Cyrillic or
    /// Greek look-alike, an invisible character); `why` names it and the GPU the
    /// name looks like.
    #[error("unknown GPU '{name}': {why}")]
    GpuNameCharacter { name: String, why: String },
    /// A GPU chosen for `input` that names none of the catalog's GPUs, or several.
    #[error("{}: unknown GPU '{name}': {hint}", input_name(*input))]
    UnknownInputGpu {
        input: Input,
        name: String,
        hint: GpuHint,
    },
    /// Launch floors asked of a saved model that was fitted with others.
    #[error(
        "{flag} {asked}: the saved model was fitted with the {own} launch floors; train it again with {flag} {asked}",
        flag = input_name(Input::LaunchFloor)
    )]
    LaunchFloorMismatch {
        asked: &'static str,
        own: &'static str,
    },
    /// A value chosen for `input` (a GPU, a kernel) that the data has no rows of.
    #[error("{} '{value}' {}", input_name(*input), not_in_data_text(*input, present))]
    NotInData {
        input: Input,
        value: String,
        /// The values the data has.
        present: Vec<String>,
    },
    /// A target calibrated from measured figures, whose GPU lacks one.
    #[error(
        "{} measured: GPU '{gpu}' has no measured '{field}' (run `gpucast-bench calibrate` and pass its file with {})",
        input_name(Input::TargetCalibration),
        input_name(Input::GpuCatalog)
    )]
    NoMeasuredFigure { gpu: String, field: String },
    /// The study's calibration without its gpu_metrics.json.
    #[error(
        "calibration \"study\" needs the study's gpu_metrics.json (beside the data, or {} FILE)",
        input_name(Input::StudyMetrics)
    )]
    NoStudyMetrics,
    /// A saved model file that cannot be used (the message names the file).
    #[error("{0}")]
    ModelFile(String),
    /// The caller asks for something impossible (on the command line: exit code 2).
    #[error("{0}")]
    Usage(String),
    /// A value out of range or inconsistent (a launch configuration, a hyperparameter,
    /// a description's field): `what` names it.
    #[error("{what}: {message}")]
    InvalidInput { what: String, message: String },
    /// A model that cannot fit or predict (too few samples, a diverging solver, ...).
    #[error("{0}")]
    Model(String),
    /// A table operation of polars that failed (`context`: what was being done).
    #[error("{}{source}", if context.is_empty() { String::new() } else { format!("{context}: ") })]
    Data {
        context: String,
        #[source]
        source: polars::error::PolarsError,
    },
    /// Writing JSON (a model, a report) failed.
    #[error("{context}{source}")]
    Json {
        context: String,
        #[source]
        source: serde_json::Error,
    },
    /// A launch configuration that cannot run on a GPU (occupancy).
    #[error("{0}")]
    Launch(String),
    /// The catalog lacks what a GPU needs (e.g. its compute capability's limits).
    #[error("{0}")]
    Catalog(String),
    /// Writing TOML failed.
    #[error("{source}")]
    Toml {
        #[source]
        source: toml::ser::Error,
    },
    /// An error of `context` (e.g. one experiment), whose cause is `source`.
    #[error("{context}: {source}")]
    Context {
        context: String,
        #[source]
        source: Box<Error>,
    },
    /// Anything else (an internal failure, ...).
    #[error("{0}")]
    Other(String),
    /// An output this run will not write: it would destroy an input, a file the run
    /// did not write, or another output of the same run (`path` as the user named it).
    #[error("{path}: {message}")]
    OutputRefused { path: String, message: String },
}

fn io_text(path: &str, message: &str) -> String {
    if path.is_empty() {
        message.to_string()
    } else {
        format!("{path}: {message}")
    }
}

/// `FILE:LINE: column 'X': ` and the like ([`place`]).
struct Place<'a>(&'a str, Position, Option<&'a str>);

impl fmt::Display for Place<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        place(f, self.0, self.1, self.2)
    }
}

fn unknown_gpu_text(name: &str, file: &str, line: Position, field: &str, hint: &GpuHint) -> String {
    let mut s = String::new();
    if !file.is_empty() {
        s += &format!("{}{field}: ", Place(file, line, None));
    }
    s += &format!("unknown GPU '{name}'");
    if hint != &GpuHint::None {
        s += &format!(": {hint}");
    }
    s
}

fn gpu_name_text(name: &str, candidates: &str, catalog_gpus: usize, close: &str) -> String {
    if !candidates.is_empty() {
        return format!("GPU name '{name}' is ambiguous: {candidates}");
    }
    format!(
        "unknown GPU '{name}' (not in the catalog of {catalog_gpus} GPUs; add it with a {} file){close}",
        input_name(Input::GpuCatalog)
    )
}

fn not_in_data_text(input: Input, present: &[String]) -> String {
    if input == Input::Kernel {
        let more = present.len().saturating_sub(20);
        format!(
            "is not in the data (kernels: {}{})",
            present[..present.len() - more].join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        )
    } else {
        format!("has no rows in the data (GPUs: {})", present.join(", "))
    }
}

/// Writing to standard output (`?` on a `write!` to stdout).
impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io {
            path: String::new(),
            message: format!("writing output: {e}"),
            source: Some(e),
        }
    }
}

impl From<toml::ser::Error> for Error {
    fn from(source: toml::ser::Error) -> Self {
        Error::Toml { source }
    }
}

impl From<serde_json::Error> for Error {
    fn from(source: serde_json::Error) -> Self {
        Error::Json {
            context: String::new(),
            source,
        }
    }
}

impl Error {
    /// The process exit status for this error: 2 for a usage error, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_)
            | Error::NotInData { .. }
            | Error::UnknownInputGpu { .. }
            | Error::LaunchFloorMismatch { .. } => 2,
            _ => 1,
        }
    }

    /// Whether this is a write to a closed pipe (`gpucast ... | head`): the reader
    /// has what it wanted, so the command ends quietly.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(
            self,
            Error::Io {
                source: Some(e),
                ..
            } if e.kind() == std::io::ErrorKind::BrokenPipe
        )
    }

    /// `path` cannot be read or written (`message` says why).
    pub fn io(path: impl fmt::Display, message: impl fmt::Display) -> Self {
        Error::Io {
            path: path.to_string(),
            message: message.to_string(),
            source: None,
        }
    }
    /// `path` cannot be read or written because of `source` (its text is the message,
    /// after `doing` when that is not empty, e.g. "cannot write").
    pub fn io_error(path: impl fmt::Display, doing: &str, source: std::io::Error) -> Self {
        Error::Io {
            path: path.to_string(),
            message: if doing.is_empty() {
                source.to_string()
            } else {
                format!("{doing}: {source}")
            },
            source: Some(source),
        }
    }
    /// The output `path` is not written (`message` says why and what to do).
    pub fn refused(path: impl fmt::Display, message: impl Into<String>) -> Self {
        Error::OutputRefused {
            path: path.to_string(),
            message: message.into(),
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
        hint: GpuHint,
    ) -> Self {
        Error::UnknownGpu {
            name: name.into(),
            file: file.to_string(),
            line,
            field: field.into(),
            hint: Box::new(hint),
        }
    }
    /// A model file that cannot be used; the message names the file.
    pub fn model_file(message: impl Into<String>) -> Self {
        Error::ModelFile(message.into())
    }
    pub fn usage(message: impl Into<String>) -> Self {
        Error::Usage(message.into())
    }
    /// `what` is out of range or inconsistent.
    pub fn invalid(what: impl Into<String>, message: impl Into<String>) -> Self {
        Error::InvalidInput {
            what: what.into(),
            message: message.into(),
        }
    }
    /// A model cannot fit or predict.
    pub fn model(message: impl Into<String>) -> Self {
        Error::Model(message.into())
    }
    /// A polars operation failed while doing `context`.
    pub fn data(context: impl Into<String>, source: polars::error::PolarsError) -> Self {
        Error::Data {
            context: context.into(),
            source,
        }
    }
    /// This error, as one of `context` (e.g. "experiment 'x'").
    pub fn context(self, context: impl Into<String>) -> Self {
        Error::Context {
            context: context.into(),
            source: Box::new(self),
        }
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
    /// Shim for older call sites (src/experiments.rs): anything else. Prefer a
    /// variant that says what failed.
    pub fn msg(message: impl Into<String>) -> Self {
        Error::Other(message.into())
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// An error's text on one line whatever it quotes, as every front end prints it: a
/// line break or other control character (in a file name, a cell, an argument) is
/// written as its escape.
pub fn one_line_text(message: &str) -> String {
    message
        .chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<char>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

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

/// What a library that panics on bad bytes said, while [`contain_panic`] runs: the
/// panic hook keeps the message here instead of printing it.
static CONTAINED: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);
/// How many [`contain_panic`] calls are running (the hook is process-wide, and a
/// library may panic on one of its own threads).
static CONTAINING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Run `f`, turning a panic inside it into an error on `file` ("cannot read: ...").
///
/// polars's Parquet reader panics on some corrupt files (a flipped bit in the footer
/// ends in `thrift bool field`) instead of returning an error; a user's bad file must
/// end in a one-line error, not a crash. The message is kept from the terminal while
/// `f` runs.
pub fn contain_panic<T>(file: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    use std::sync::atomic::Ordering;
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if CONTAINING.load(Ordering::SeqCst) == 0 {
                return default(info);
            }
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "an internal error".into());
            *CONTAINED.lock().unwrap_or_else(|e| e.into_inner()) = Some(message);
        }));
    });
    CONTAINING.fetch_add(1, Ordering::SeqCst);
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    CONTAINING.fetch_sub(1, Ordering::SeqCst);
    outcome.unwrap_or_else(|_| {
        let said = CONTAINED.lock().unwrap_or_else(|e| e.into_inner()).take();
        Err(Error::parse_file(
            file,
            format!(
                "cannot read: the file is damaged ({})",
                said.as_deref().unwrap_or("the reader failed")
            ),
        ))
    })
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
            GpuHint::Text("add it".into()),
        );
        assert_eq!(
            e.to_string(),
            "a.csv:4: column 'gpu': unknown GPU 'X 9000': add it"
        );
        assert_eq!(
            Error::unknown_gpu("X", "", Position::File, "column 'gpu'", GpuHint::None).to_string(),
            "unknown GPU 'X'"
        );
        // shims keep old call sites meaning the same thing
        assert_eq!(
            Error::cell("a.csv", 1, "gpu", "m").to_string(),
            "a.csv:2: column 'gpu': m"
        );
        assert!(matches!(Error::file("f", "m"), Error::Io { .. }));
        assert!(matches!(Error::msg("m"), Error::Other(_)));
        let e = Error::invalid("block", "too large").context("experiment 'x'");
        assert_eq!(e.to_string(), "experiment 'x': block: too large");
        assert!(std::error::Error::source(&e).is_some());
    }

    #[test]
    fn errors_quoting_line_breaks_stay_one_line() {
        assert_eq!(
            one_line_text("a\nb.csv:2: column 'x'\t"),
            "a\\nb.csv:2: column 'x'\\t"
        );
        assert_eq!(one_line_text("RTX 4090 – é"), "RTX 4090 – é");
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
        assert!(std::error::Error::source(&pipe).is_some());
    }
}
