//! Reading and writing runs tables (CSV and Parquet) with polars.

pub(crate) use super::parquet_read::{first_line, max_columns, read_parquet};
use super::{
    canonical_config, column, upper_bound, ColumnKind, ColumnSpec, Name, Origin, Run, RunsTable,
    OPTIONAL_NUMERIC, OPTIONAL_TEXT, REQUIRED,
};
use crate::error::{Error, Position, Result};
use polars::prelude::*;
use std::path::Path;
use std::sync::Arc;

/// A file name's extension, lowercase.
pub(crate) fn extension(p: &Path) -> Option<String> {
    p.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
}

/// Where each data row of a file is, for messages: the editor's line of each row
/// of a text file, or only its row number (Parquet, or a CSV whose layout the
/// line scan could not follow).
#[derive(Debug, Clone, Default)]
pub(crate) struct RowLines(Option<Vec<usize>>);

impl RowLines {
    /// Position of 0-based data row `i`.
    pub(crate) fn at(&self, i: usize) -> Position {
        match self.0.as_ref().and_then(|l| l.get(i)) {
            Some(&line) => Position::Line(line),
            None => Position::Row(i + 1),
        }
    }
    fn line(&self, i: usize) -> Option<usize> {
        self.0.as_ref().and_then(|l| l.get(i).copied())
    }
}

/// One record of CSV text: the editor line it starts on and its number of fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Record {
    line: usize,
    fields: usize,
}

/// What a scan of CSV text finds: its records (header first), the byte ranges of
/// blank or whitespace-only lines between records (dropped before parsing, so that a
/// trailing or stray blank line is not a row), and the line where a quoted cell
/// opens that is never closed. Quotes are followed so that a quoted cell spanning
/// lines stays one record and its commas are not separators.
#[derive(Debug, Default)]
struct Scan {
    records: Vec<Record>,
    blanks: Vec<std::ops::Range<usize>>,
    unclosed_quote: Option<usize>,
}

fn scan_records(bytes: &[u8]) -> Scan {
    let mut scan = Scan::default();
    let mut in_quotes = false;
    let mut quote_line = 0;
    let mut line_no = 1;
    let mut s = 0;
    while s < bytes.len() {
        let e = bytes[s..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |p| s + p);
        let line = &bytes[s..e];
        if !in_quotes {
            if line.iter().all(u8::is_ascii_whitespace) {
                scan.blanks.push(s..(e + 1).min(bytes.len()));
                line_no += 1;
                s = e + 1;
                continue;
            }
            scan.records.push(Record {
                line: line_no,
                fields: 1,
            });
        }
        if let Some(record) = scan.records.last_mut() {
            for &b in line {
                match b {
                    b'"' => {
                        in_quotes = !in_quotes;
                        quote_line = line_no;
                    }
                    b',' if !in_quotes => record.fields += 1,
                    _ => {}
                }
            }
        }
        line_no += 1;
        s = e + 1;
    }
    if in_quotes {
        scan.unclosed_quote = Some(quote_line);
    }
    scan
}

/// The column names of a CSV header line (quotes removed).
fn header_names(header: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(header);
    let mut names = vec![String::new()];
    let mut quoted = false;
    let mut chars = text.trim_end_matches(['\r', '\n']).chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                names.last_mut().expect("one name").push('"');
            }
            '"' => quoted = !quoted,
            ',' if !quoted => names.push(String::new()),
            c => names.last_mut().expect("one name").push(c),
        }
    }
    names
}

/// [`check_layout`] of CSV text read by an importer (`file` names it): each problem
/// at its line, before polars's reader words it in its own terms ("found more
/// fields than defined in 'Schema'").
pub(crate) fn check_csv_layout(bytes: &[u8], file: &str) -> Result<()> {
    let bytes = bytes.strip_prefix(UTF8_BOM).unwrap_or(bytes);
    let scan = scan_records(bytes);
    if scan.records.is_empty() {
        return Err(Error::parse_file(file, "empty file"));
    }
    check_layout(bytes, &scan, file)
}

/// Check the layout of CSV text before polars parses it, so that each problem is
/// reported at its line: UTF-8 text, comma-separated, closed quotes, no column named
/// twice, and every record as wide as the header.
fn check_layout(bytes: &[u8], scan: &Scan, file: &str) -> Result<()> {
    let line_of = |offset: usize| bytes[..offset].iter().filter(|&&b| b == b'\n').count() + 1;
    let not_text = |offset: usize| {
        Error::parse(
            file,
            Position::Line(line_of(offset)),
            None,
            "not UTF-8 text (a binary file, or a text encoding other than UTF-8?)",
        )
    };
    if let Err(e) = std::str::from_utf8(bytes) {
        return Err(not_text(e.valid_up_to()));
    }
    if let Some(nul) = bytes.iter().position(|&b| b == 0) {
        return Err(not_text(nul));
    }
    let header_end = bytes
        .iter()
        .position(|&b| b == b'\n')
        .unwrap_or(bytes.len());
    let header = &bytes[..header_end];
    check_separator(header, file)?;
    // A carriage return before the header's last byte ends a line of its own.
    if header[..header.len().saturating_sub(1)].contains(&b'\r') {
        return Err(Error::parse(
            file,
            Position::Line(1),
            None,
            "lines end in a bare carriage return (old Mac line endings): save it with LF or CRLF line endings",
        ));
    }
    if let Some(line) = scan.unclosed_quote {
        return Err(Error::parse(
            file,
            Position::Line(line),
            None,
            "a quoted cell is never closed (a '\"' is missing)",
        ));
    }
    let names = header_names(header);
    check_column_count(names.len(), file)?;
    let mut first: std::collections::HashMap<&str, usize> =
        std::collections::HashMap::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        if let Some(&j) = first.get(name.as_str()) {
            return Err(Error::parse(
                file,
                Position::Line(1),
                Some(name),
                format!(
                    "appears twice in the header (columns {} and {})",
                    j + 1,
                    i + 1
                ),
            ));
        }
        first.insert(name, i);
    }
    let width = names.len();
    if let Some(r) = scan.records.iter().find(|r| r.fields != width) {
        return Err(Error::parse(
            file,
            Position::Line(r.line),
            None,
            format!("{} cells, but the header has {width} columns", r.fields),
        ));
    }
    Ok(())
}

/// Refuse a table of more than [`max_columns`] columns.
fn check_column_count(columns: usize, file: &str) -> Result<()> {
    if columns <= max_columns() {
        return Ok(());
    }
    Err(Error::parse(
        file,
        Position::Line(1),
        None,
        format!(
            "{columns} columns; a table of runs has at most {} (the runs contract's {} and up to 1000 of your own)",
            max_columns(),
            gpucast_runs::COLUMNS.len()
        ),
    ))
}

/// Reject a header that is clearly not comma-separated (counting outside quotes).
fn check_separator(header: &[u8], file: &str) -> Result<()> {
    let (mut commas, mut semis, mut tabs, mut quoted) = (0, 0, 0, false);
    for &b in header {
        match b {
            b'"' => quoted = !quoted,
            b',' if !quoted => commas += 1,
            b';' if !quoted => semis += 1,
            b'\t' if !quoted => tabs += 1,
            _ => {}
        }
    }
    let looks = if semis > commas {
        "';'-separated"
    } else if tabs > commas {
        "tab-separated"
    } else {
        return Ok(());
    };
    Err(Error::parse(
        file,
        Position::Line(1),
        None,
        format!("looks {looks}; gpucast reads comma-separated CSV"),
    ))
}

/// The gzip magic number: a file that starts with it is read decompressed.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// `bytes` decompressed when they are gzip (`file` names them in errors), else as
/// they are.
pub(crate) fn gunzip_if_gzip(bytes: Vec<u8>, file: &str) -> Result<Vec<u8>> {
    if !bytes.starts_with(&GZIP_MAGIC) {
        return Ok(bytes);
    }
    let mut out = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::MultiGzDecoder::new(bytes.as_slice()),
        &mut out,
    )
    .map_err(|e| Error::parse_file(file, format!("cannot decompress gzip: {e}")))?;
    Ok(out)
}

pub(crate) fn read_frame(path: &Path) -> Result<(DataFrame, RowLines)> {
    let name = &path.display().to_string();
    let bad = |e: PolarsError| {
        Error::parse_file(name, format!("cannot read: {}", first_line(&e.to_string())))
    };
    // (`runs.csv.gz`: the table's own type is the one before `.gz`)
    let ext = match extension(path).as_deref() {
        Some("gz") => extension(&path.with_extension("")),
        other => other.map(str::to_string),
    };
    match ext.as_deref() {
        Some("parquet") => {
            let bytes = crate::files::read(path).map_err(|e| Error::io(name, e))?;
            // (a gzip'd Parquet, `runs.parquet.gz`, is read decompressed, as a gzip'd
            // CSV is: polars's own reader names a build feature instead)
            let df = read_parquet(gunzip_if_gzip(bytes, name)?, name)?;
            if df.height() == 0 {
                return Err(Error::parse_file(name, "no data rows"));
            }
            Ok((df, RowLines(None)))
        }
        Some("csv") | Some("tsv") | Some("txt") | None => {
            let bytes = crate::files::read(path).map_err(|e| Error::io(name, e))?;
            let mut bytes = gunzip_if_gzip(bytes, name)?;
            if bytes.starts_with(UTF8_BOM) {
                bytes.drain(..UTF8_BOM.len());
            }
            let scan = scan_records(&bytes);
            if scan.records.is_empty() {
                return Err(Error::parse_file(name, "empty file"));
            }
            check_layout(&bytes, &scan, name)?;
            if scan.records.len() == 1 {
                return Err(Error::parse_file(name, "no data rows (only a header)"));
            }
            let Scan {
                records, blanks, ..
            } = scan;
            if !blanks.is_empty() {
                let mut kept = Vec::with_capacity(bytes.len());
                let mut from = 0;
                for r in &blanks {
                    kept.extend_from_slice(&bytes[from..r.start]);
                    from = r.end;
                }
                kept.extend_from_slice(&bytes[from..]);
                bytes = kept;
            }
            // Read every column as text: we type-check cell by cell so that a bad
            // value gets an error naming its line instead of a whole-file failure.
            let df = text_frame(bytes).map_err(bad)?;
            let lines = if df.height() + 1 == records.len() {
                RowLines(Some(records[1..].iter().map(|r| r.line).collect()))
            } else {
                RowLines(None)
            };
            Ok((df, lines))
        }
        Some(other) => Err(Error::parse_file(
            name,
            format!("unknown file type '.{other}' (expected .csv, .csv.gz or .parquet)"),
        )),
    }
}

/// A CSV's cells as text, its first line the header: every column is read as text
/// so that a bad value is found (and named with its line) cell by cell.
pub(crate) fn text_frame(bytes: Vec<u8>) -> PolarsResult<DataFrame> {
    CsvReadOptions::default()
        .with_has_header(true)
        .with_infer_schema_length(Some(0))
        .into_reader_with_file_handle(std::io::Cursor::new(bytes))
        .finish()
}

pub(crate) const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Column `name` as text cells (None = null or empty).
pub(crate) fn text_cells(df: &DataFrame, name: &str) -> Option<Vec<Option<String>>> {
    Some(
        text_column(df, name)?
            .iter()
            .map(|c| trimmed(c).map(str::to_string))
            .collect(),
    )
}

/// Column `name` as text, whatever its type (None: no such column, or one with no
/// text form).
fn text_column(df: &DataFrame, name: &str) -> Option<StringChunked> {
    let col = df.column(name).ok()?;
    let s = col.as_materialized_series().cast(&DataType::String).ok()?;
    s.str().ok().cloned()
}

/// A cell trimmed; None when null or empty.
fn trimmed(cell: Option<&str>) -> Option<&str> {
    cell.map(str::trim).filter(|x| !x.is_empty())
}

/// Column `name` as numbers when the file stores it as 64-bit floats or integers (a
/// Parquet table's numeric columns), None for any other type (text, CSV cells,
/// 32-bit floats, whose text form is the number the file meant: `0.1f32` is read as
/// 0.1, not 0.100000001490116). Converting every cell to text and parsing it back
/// took 0.5 s of the 3.3 s that loading and validating the 980k-row GEMM corpus took.
fn number_cells(df: &DataFrame, name: &str) -> Option<Float64Chunked> {
    let col = df.column(name).ok()?;
    let dtype = col.dtype();
    if !(dtype == &DataType::Float64 || dtype.is_integer()) {
        return None;
    }
    let s = col.as_materialized_series().cast(&DataType::Float64).ok()?;
    s.f64().ok().cloned()
}

/// Parse a numeric cell of `column` and check it ([`check_number`]).
fn parse_number(file: &str, at: Position, column: &str, cell: &str) -> Result<f64> {
    let v: f64 = cell.parse().map_err(|_| {
        Error::parse(
            file,
            at,
            Some(column),
            format!("expected a number, found '{cell}'"),
        )
    })?;
    check_number(file, at, column, v, cell)
}

/// A number of `column` (written `cell` in the file): finite, >= 0 (time > 0), and
/// below the contract's plausible bound. Checked here, once, for every column.
fn check_number(
    file: &str,
    at: Position,
    column: &str,
    v: f64,
    cell: impl std::fmt::Display,
) -> Result<f64> {
    let err = |m: String| Error::parse(file, at, Some(column), m);
    if !v.is_finite() {
        return Err(err(format!("value is {cell}: must be a finite number")));
    }
    if column == "time_ms" && v <= 0.0 {
        return Err(err(format!("time must be > 0, found {cell}")));
    }
    if v < 0.0 {
        return Err(err(format!("must be >= 0, found {cell}")));
    }
    if let Some(max) = upper_bound(column) {
        if v > max {
            let what = if column.ends_with("_ms") {
                " ms (about 3 hours)"
            } else {
                ""
            };
            let max = if max < 1e6 {
                format!("{max}")
            } else {
                format!("{max:e}")
            };
            return Err(err(format!(
                "{cell} is above {max}{what}, the largest plausible value: a typo?"
            )));
        }
    }
    Ok(v)
}

/// Convert a canonical frame (all columns, any dtype) into typed runs.
pub(crate) fn from_frame(df: DataFrame, file: Arc<str>, lines: RowLines) -> Result<RunsTable> {
    let n = df.height();
    for req in REQUIRED {
        if df.column(req).is_err() {
            // A near miss ('GPU', ' gpu') says what to change.
            let near = df
                .get_column_names()
                .into_iter()
                .find(|c| c.trim().eq_ignore_ascii_case(req))
                .map(|c| format!(" (found '{c}': column names are lower case, without spaces)"))
                .unwrap_or_default();
            return Err(Error::parse_file(
                &*file,
                format!("missing required column '{req}'{near}"),
            ));
        }
    }
    // Rows a runner marked as failed carry no time: skip them (and count them).
    let status = text_cells(&df, "status");
    let keep: Vec<bool> = (0..n)
        .map(|i| match &status {
            Some(s) => s[i]
                .as_deref()
                .map(|v| v.eq_ignore_ascii_case("ok"))
                .unwrap_or(true),
            None => true,
        })
        .collect();

    // The contract's columns (a runner's provenance columns pass through as extra
    // columns), each as numbers or as text.
    let mut known: Vec<&str> = Vec::new();
    let mut columns: Vec<(&ColumnSpec, ColumnData)> = Vec::new();
    for name in df.get_column_names() {
        let name = name.as_str();
        let Some(spec) = column(name) else { continue };
        if spec.kind == ColumnKind::Runner {
            continue;
        }
        let data = match spec.numeric.then(|| number_cells(&df, name)).flatten() {
            Some(numbers) => ColumnData::Numbers(numbers),
            None => match text_column(&df, name) {
                Some(text) if spec.numeric => ColumnData::NumberText(text),
                Some(text) => ColumnData::Text(text),
                None => continue,
            },
        };
        known.push(name);
        columns.push((spec, data));
    }
    // Each run is written once, row by row: filling a million runs column by column
    // swept the whole table once per column (60 ms per column of the 980k-row GEMM
    // corpus, when a run was 704 bytes). Its names and labels are shared strings
    // ([`Shared`]): no string is made per row, except a flagged row's flags.
    let (specs, data): (Vec<&ColumnSpec>, Vec<ColumnData>) = columns.into_iter().unzip();
    let mut cells: Vec<Cells> = data.iter().map(ColumnData::cells).collect();
    let mut shared = Shared::default();
    let mut runs: Vec<Run> = Vec::with_capacity(keep.iter().filter(|k| **k).count());
    for (i, kept) in keep.iter().enumerate() {
        if !kept {
            cells.iter_mut().for_each(Cells::skip);
            continue;
        }
        runs.push(read_row(i, &specs, &mut cells, &mut shared, &file, &lines)?);
    }

    let extra_cols: Vec<Column> = df
        .columns()
        .iter()
        .filter(|c| !known.contains(&c.name().as_str()))
        .cloned()
        .collect();
    let mut extra =
        DataFrame::new(n, extra_cols).map_err(|e| Error::parse_file(&*file, e.to_string()))?;
    let skipped = keep.iter().filter(|k| !**k).count();
    if skipped > 0 {
        let mask = BooleanChunked::from_slice("keep".into(), &keep);
        extra = extra
            .filter(&mask)
            .map_err(|e| Error::parse_file(&*file, e.to_string()))?;
    }
    Ok(RunsTable {
        runs,
        extra,
        files: vec![file.to_string()],
        not_imported: (skipped > 0)
            .then(|| (super::STATUS_NOT_OK.to_string(), skipped))
            .into_iter()
            .collect(),
        gpu_fields: Vec::new(),
    })
}

/// Store a checked number in the field of column `name`.
fn set_number(run: &mut Run, name: &str, v: f64) {
    if let Some(slot) = run.required_numeric_mut(name) {
        *slot = v;
    } else if let Some(slot) = run.numeric_mut(name) {
        *slot = Some(v);
    }
}

/// A contract column of a frame, ready to be read row by row.
enum ColumnData {
    /// Numbers stored as numbers ([`number_cells`]).
    Numbers(Float64Chunked),
    /// Numbers written as text (CSV), parsed where they lie.
    NumberText(StringChunked),
    /// Text.
    Text(StringChunked),
}

/// A [`ColumnData`]'s cells in row order.
enum Cells<'a> {
    Numbers(Box<dyn Iterator<Item = Option<f64>> + 'a>),
    NumberText(Box<dyn Iterator<Item = Option<&'a str>> + 'a>),
    Text(Box<dyn Iterator<Item = Option<&'a str>> + 'a>),
}

impl ColumnData {
    fn cells(&self) -> Cells<'_> {
        match self {
            ColumnData::Numbers(c) => Cells::Numbers(Box::new(c.iter())),
            ColumnData::NumberText(c) => Cells::NumberText(Box::new(c.iter())),
            ColumnData::Text(c) => Cells::Text(Box::new(c.iter())),
        }
    }
}

impl Cells<'_> {
    /// Pass over a skipped row's cell.
    fn skip(&mut self) {
        match self {
            Cells::Numbers(it) => _ = it.next(),
            Cells::NumberText(it) | Cells::Text(it) => _ = it.next(),
        }
    }
}

/// What a file's rows share: one [`Name`] per distinct text (GPU, kernel, label, and
/// configuration as made canonical), and each distinct config cell made canonical once
/// (the same configurations recur on every GPU, and canonicalizing every cell was a
/// fifth of loading the shipped corpora).
#[derive(Default)]
struct Shared<'a> {
    names: super::SharedNames,
    canonical: rustc_hash::FxHashMap<&'a str, Name>,
}

impl<'a> Shared<'a> {
    /// The canonical configuration of cell `cell`, shared with every cell that reads
    /// the same.
    fn config(&mut self, cell: &'a str) -> std::result::Result<Name, super::KeyError> {
        if let Some(known) = self.canonical.get(cell) {
            return Ok(known.clone());
        }
        let made = self.names.get(&canonical_config(cell)?);
        self.canonical.insert(cell, made.clone());
        Ok(made)
    }
}

/// The run of row `i` (0-based), its cells read from `cells` (one per column of
/// `specs`), each checked.
fn read_row<'a>(
    i: usize,
    specs: &[&ColumnSpec],
    cells: &mut [Cells<'a>],
    shared: &mut Shared<'a>,
    file: &Arc<str>,
    lines: &RowLines,
) -> Result<Run> {
    let at = lines.at(i);
    let mut run = Run {
        origin: Origin {
            file: file.clone(),
            row: i + 1,
            line: lines.line(i),
        },
        ..Run::default()
    };
    for (spec, cell) in specs.iter().zip(cells.iter_mut()) {
        let name = spec.name;
        let present: Option<Result<()>> = match cell {
            // (Debug: `-1.0`, as the text path shows a float cell)
            Cells::Numbers(it) => it.next().flatten().map(|v| {
                let v = check_number(file, at, name, v, format_args!("{v:?}"))?;
                set_number(&mut run, name, v);
                Ok(())
            }),
            Cells::NumberText(it) => trimmed(it.next().flatten()).map(|t| {
                set_number(&mut run, name, parse_number(file, at, name, t)?);
                Ok(())
            }),
            Cells::Text(it) => trimmed(it.next().flatten()).map(|t| {
                if spec.kind == ColumnKind::Flags {
                    run.flags = t
                        .split(';')
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect();
                } else if name == "config" {
                    run.config = shared
                        .config(t)
                        .map_err(|e| Error::parse(&**file, at, Some(name), e.to_string()))?;
                } else if let Some(slot) = run.required_text_mut(name) {
                    *slot = shared.names.get(t);
                } else if let Some(slot) = run.text_mut(name) {
                    *slot = Some(shared.names.get(t));
                }
                Ok(())
            }),
        };
        match present {
            Some(done) => done?,
            None if spec.kind == ColumnKind::Required => {
                return Err(Error::parse(&**file, at, Some(name), "missing value"))
            }
            None => {}
        }
    }
    Ok(run)
}

/// Build the output frame: required columns, the optional ones any row has, flags,
/// then the pass-through columns.
pub fn to_frame(table: &RunsTable) -> Result<DataFrame> {
    let n = table.runs.len();
    let mut cols: Vec<Column> = Vec::new();
    let text = |name: &str| -> Column {
        let v: Vec<Option<&str>> = table.runs.iter().map(|r| r.text(name)).collect();
        Column::new(name.into(), v)
    };
    let num = |name: &str| -> Column {
        let v: Vec<Option<f64>> = table.runs.iter().map(|r| r.numeric(name)).collect();
        Column::new(name.into(), v)
    };
    for name in ["gpu", "kernel", "config"] {
        cols.push(text(name));
    }
    for name in ["time_ms", "flops", "dram_bytes"] {
        cols.push(num(name));
    }
    for name in OPTIONAL_NUMERIC {
        if table.runs.iter().any(|r| r.numeric(name).is_some()) {
            cols.push(num(name));
        }
    }
    for name in OPTIONAL_TEXT {
        if table.runs.iter().any(|r| r.text(name).is_some()) {
            cols.push(text(name));
        }
    }
    if table.runs.iter().any(|r| !r.flags.is_empty()) {
        let v: Vec<String> = table.runs.iter().map(|r| r.flags.join(";")).collect();
        cols.push(Column::new("flags".into(), v));
    }
    if table.extra.height() == n {
        for c in table.extra.columns() {
            if !cols.iter().any(|k| k.name() == c.name()) {
                cols.push(c.clone());
            }
        }
    }
    DataFrame::new(n, cols).map_err(|e| Error::data("building output table", e))
}

/// Write `df` to `path` (CSV or Parquet by extension), atomically, so an interrupted
/// write never leaves half a file.
pub fn write_frame(df: &mut DataFrame, path: &Path) -> Result<()> {
    let name = &path.display().to_string();
    let parquet = is_parquet_output(path)?;
    crate::files::write_atomic_with(path, |file| {
        let mut out = KeepsWriteError {
            inner: file,
            error: None,
        };
        let res = if parquet {
            ParquetWriter::new(&mut out)
                .with_compression(ParquetCompression::Zstd(None))
                .finish(df)
                .map(|_| ())
        } else {
            CsvWriter::new(&mut out).include_header(true).finish(df)
        };
        res.map_err(|e| match out.error.take() {
            // (the system's reason, e.g. "File too large" or "No space left on
            // device", not the encoder's: Parquet's says "Invalid thrift: transport
            // error" for any failed write)
            Some(io) => Error::io_error(name, "cannot write", io),
            None => Error::io(name, format!("cannot write: {e}")),
        })
    })
}

/// A writer that keeps the first error of the file it writes to, for the message:
/// the encoders above it replace it with their own words.
struct KeepsWriteError<W> {
    inner: W,
    error: Option<std::io::Error>,
}

impl<W: std::io::Write> KeepsWriteError<W> {
    fn keep<T>(&mut self, r: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &r {
            if self.error.is_none() {
                self.error = Some(match e.raw_os_error() {
                    Some(code) => std::io::Error::from_raw_os_error(code),
                    None => std::io::Error::new(e.kind(), e.to_string()),
                });
            }
        }
        r
    }
}

impl<W: std::io::Write> std::io::Write for KeepsWriteError<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = self.inner.write(buf);
        self.keep(r)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.inner.flush();
        self.keep(r)
    }
}

/// Whether a table written to `path` is Parquet (`.parquet`) or CSV (`.csv`); any
/// other name is a usage error. Commands check it before doing the work.
pub fn is_parquet_output(path: &Path) -> Result<bool> {
    match extension(path).as_deref() {
        Some("parquet") => Ok(true),
        Some("csv") => Ok(false),
        _ => Err(Error::usage(format!(
            "{}: output must end in .csv or .parquet",
            path.display()
        ))),
    }
}

/// Write a runs table to CSV or Parquet (atomically).
pub fn write(table: &RunsTable, path: &Path) -> Result<()> {
    let mut df = to_frame(table)?;
    write_frame(&mut df, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Input;

    /// The message `check_layout` gives for SYNTHETIC CSV text, or None when it passes.
    fn layout(text: &[u8]) -> Option<String> {
        check_layout(text, &scan_records(text), "t.csv")
            .err()
            .map(|e| e.to_string())
    }

    #[test]
    fn scan_follows_quotes_and_skips_blank_lines() {
        let s = scan_records(b"a,b\n\n \r\n1,\"x,\ny\"\n2,3\n\n");
        let lines: Vec<(usize, usize)> = s.records.iter().map(|r| (r.line, r.fields)).collect();
        assert_eq!(lines, [(1, 2), (4, 2), (6, 2)]);
        assert_eq!(s.blanks.len(), 3);
        assert_eq!(s.unclosed_quote, None);
        assert_eq!(scan_records(b"a,b\n1,2\n3,\"4\n").unclosed_quote, Some(3));
        assert_eq!(
            header_names(b"a,\"b,c\",\"d\"\"e\"\r"),
            ["a", "b,c", "d\"e"]
        );
    }

    #[test]
    fn layout_errors_name_their_line() {
        assert_eq!(layout(b"a,b\n1,2\n\n3,4\n"), None);
        assert_eq!(
            layout(b"a,b\n1,2\n\n3,4,5\n").as_deref(),
            Some("t.csv:4: 3 cells, but the header has 2 columns")
        );
        assert_eq!(
            layout(b"a,b,a\n1,2,3\n").as_deref(),
            Some("t.csv:1: column 'a': appears twice in the header (columns 1 and 3)")
        );
        assert_eq!(
            layout(b"a,b\n1,2\n\"3,4\n").as_deref(),
            Some("t.csv:3: a quoted cell is never closed (a '\"' is missing)")
        );
        assert!(layout(b"a,b\n1,\xff\n").is_some_and(|e| e.starts_with("t.csv:2: not UTF-8 text")));
        assert!(layout(b"a,b\n1,\x002\n").is_some_and(|e| e.starts_with("t.csv:2: not UTF-8 text")));
        assert!(layout(b"a,b\r1,2\r").is_some_and(|e| e.contains("bare carriage return")));
        assert_eq!(layout(b"a,b\r\n1,2\r\n"), None);
    }

    #[test]
    fn options_must_select_rows_of_the_data() {
        let run = |gpu: &str, kernel: &str| Run {
            gpu: gpu.into(),
            kernel: kernel.into(),
            ..Run::default()
        };
        let t = RunsTable {
            runs: vec![run("G1", "k2"), run("G2", "k1")],
            ..RunsTable::default()
        };
        assert!(t.require_gpu(Input::Source, "G2").is_ok());
        assert!(t.require_kernel(Input::Kernel, "k1").is_ok());
        let e = t.require_gpu(Input::Source, "G3").unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert_eq!(
            e.to_string(),
            "source GPU 'G3' has no rows in the data (GPUs: G1, G2)"
        );
        assert_eq!(
            t.require_kernel(Input::Kernel, "k3")
                .unwrap_err()
                .to_string(),
            "kernel 'k3' is not in the data (kernels: k1, k2)"
        );
    }
}
