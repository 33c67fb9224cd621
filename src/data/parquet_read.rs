//! Reading a Parquet file into a frame without trusting its footer: the column
//! types a runs table can hold, the column count, and every page header's sizes and
//! row counts are checked against the file before polars decodes it (polars trusts
//! them and allocates what they claim; a failed allocation aborts the process).

use crate::error::{Error, Result};
use polars::prelude::*;

/// A Parquet file (`file` names it in errors) as a frame, once its schema holds only
/// column types a table of runs can: numbers, text, booleans. Checked before reading:
/// polars, built without its decimal type, panics on a decimal column, and a list
/// column read as text gave every run a time of 0.
pub(crate) fn read_parquet(bytes: Vec<u8>, file: &str) -> Result<DataFrame> {
    crate::error::contain_panic(file, || read_parquet_checked(bytes, file))
}

/// Most rows a Parquet file of `bytes` bytes may claim: 8 per byte. Every row of a
/// runs table is a distinct run (no two share gpu, kernel and config), so its
/// configuration alone carries at least a bit of the file per row, whatever the
/// encoding and compression; polars allocates for the rows a footer claims before
/// it decodes a page, and a claim of 10^12 rows aborted the process.
const MAX_ROWS_PER_BYTE: usize = 8;

/// Walk every page header of every column chunk of a Parquet file (`bytes`) and
/// refuse sizes no page of it can have: more rows than the file's length allows
/// ([`MAX_ROWS_PER_BYTE`]), a file's row count that is not its row groups', a page
/// larger than its column chunk, of more values than its row group has rows, or a
/// column chunk whose pages do not hold its row group's rows. polars trusts these
/// numbers and asks for that much memory, and a failed allocation aborts the
/// process; a damaged header must end in a one-line error instead.
fn check_parquet_pages(buffer: &polars_buffer::Buffer<u8>, file: &str) -> Result<()> {
    use polars_parquet::parquet::page::CompressedPage;
    use polars_parquet::parquet::read::{read_metadata, PageReader};
    let damaged = |what: String| {
        Error::parse_file(file, format!("cannot read: the file is damaged ({what})"))
    };
    let bytes: &[u8] = buffer;
    let meta = read_metadata(&mut std::io::Cursor::new(bytes))
        .map_err(|e| damaged(first_line(&e.to_string()).to_string()))?;
    let max_rows = bytes.len().saturating_mul(MAX_ROWS_PER_BYTE);
    let group_rows = meta
        .row_groups
        .iter()
        .try_fold(0usize, |sum, g| sum.checked_add(g.num_rows()));
    match group_rows {
        Some(rows) if rows <= max_rows && rows == meta.num_rows => {}
        Some(rows) if rows <= max_rows => {
            return Err(damaged(format!(
                "its footer claims {} rows, its row groups {rows}",
                meta.num_rows
            )))
        }
        _ => {
            let claimed = meta
                .row_groups
                .iter()
                .map(|g| g.num_rows() as f64)
                .sum::<f64>();
            return Err(damaged(format!(
                "its row groups claim {claimed:e} rows, more than a file of {} bytes holds (at most {max_rows})",
                bytes.len()
            )));
        }
    }
    for (g, group) in meta.row_groups.iter().enumerate() {
        let rows = group.num_rows();
        for column in group.parquet_columns() {
            let range = column.byte_range();
            let (start, end) = (range.start as usize, range.end as usize);
            if start > end || end > bytes.len() {
                return Err(damaged(format!(
                    "row group {g}: a column chunk at bytes {start}..{end} of {}",
                    bytes.len()
                )));
            }
            let chunk_bytes = column.uncompressed_size().max(0) as usize;
            let cursor = std::io::Cursor::new(buffer.clone().sliced(start..end));
            let mut held = 0usize;
            for page in PageReader::new(cursor, column, Vec::new(), end - start) {
                let page = page.map_err(|e| {
                    damaged(format!("row group {g}: {}", first_line(&e.to_string())))
                })?;
                let CompressedPage::Data(page) = page else {
                    continue;
                };
                let (size, values) = (page.uncompressed_size(), page.num_values());
                if size > chunk_bytes || values > rows {
                    return Err(damaged(format!(
                        "row group {g}: a page of {size} bytes and {values} values in a column of {chunk_bytes} bytes and {rows} rows"
                    )));
                }
                held = held.saturating_add(values);
            }
            // (the columns are flat: each value of a page is one row, nulls included)
            if held != rows {
                return Err(damaged(format!(
                    "row group {g}: it claims {rows} rows, the pages of column '{}' hold {held}",
                    column.descriptor().path_in_schema.join(".")
                )));
            }
        }
    }
    Ok(())
}

/// [`read_parquet`], where a panic of the reader is not yet contained: the schema,
/// then the pages ([`check_parquet_pages`], of flat columns once the schema allows
/// no other), then the rows.
fn read_parquet_checked(bytes: Vec<u8>, file: &str) -> Result<DataFrame> {
    let bad = |e: PolarsError| {
        Error::parse_file(file, format!("cannot read: {}", first_line(&e.to_string())))
    };
    // (one buffer for the page walk and the reader: no copy of the file)
    let buffer: polars_buffer::Buffer<u8> = bytes.into();
    let mut reader = ParquetReader::new(std::io::Cursor::new(&buffer[..]));
    let schema = reader.schema().map_err(bad)?;
    if schema.len() > max_columns() {
        return Err(Error::parse_file(
            file,
            format!(
                "{} columns; a table of runs has at most {} (the runs contract's {} and up to 1000 of your own)",
                schema.len(),
                max_columns(),
                gpucast_runs::COLUMNS.len()
            ),
        ));
    }
    for (name, field) in schema.iter() {
        if let Some(kind) = unreadable_type(&field.dtype) {
            return Err(Error::parse_file(
                file,
                format!(
                    "column '{name}' holds {kind}: the columns of a runs table are numbers \
                     (integers, 32- or 64-bit floats), text or booleans"
                ),
            ));
        }
    }
    check_parquet_pages(&buffer, file)?;
    reader.finish().map_err(bad)
}

/// What a Parquet column type is, in words, when a runs table cannot hold it (None
/// when it can: numbers, text, booleans, or a dictionary of those).
fn unreadable_type(dtype: &ArrowDataType) -> Option<&'static str> {
    use ArrowDataType as A;
    match dtype {
        A::Null
        | A::Boolean
        | A::Int8
        | A::Int16
        | A::Int32
        | A::Int64
        | A::UInt8
        | A::UInt16
        | A::UInt32
        | A::UInt64
        | A::Float32
        | A::Float64
        | A::Utf8
        | A::LargeUtf8
        | A::Utf8View
        | A::Binary
        | A::LargeBinary
        | A::BinaryView => None,
        A::Dictionary(_, values, _) => unreadable_type(values),
        A::Float16 => Some("16-bit floats"),
        A::Decimal(..) | A::Decimal32(..) | A::Decimal64(..) | A::Decimal256(..) => {
            Some("decimals")
        }
        A::List(_) | A::LargeList(_) | A::FixedSizeList(..) | A::Map(..) => {
            Some("lists (several values per row)")
        }
        A::Struct(_) | A::Union(_) => Some("records (several fields per row)"),
        A::Timestamp(..) | A::Date32 | A::Date64 | A::Time32(_) | A::Time64(_) => {
            Some("dates or times")
        }
        A::Duration(_) | A::Interval(_) => Some("durations"),
        _ => Some("a type gpucast does not read"),
    }
}

/// Most columns a table gpucast reads may have: the runs contract's columns and as
/// many of the user's own again, several times over (a runs table passes extra
/// columns through). A header of a million columns is no table of runs, and every
/// step after the header costs time per column.
pub(crate) fn max_columns() -> usize {
    gpucast_runs::COLUMNS.len() + 1000
}

/// The first line of an error's text (polars's run on over several).
pub(crate) fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
}
