//! Finding the table in an ncu CSV dump and splitting it into records.
//!
//! ncu prints its own messages (`==PROF==`, `==ERROR==`, `==WARNING==`) and the
//! profiled program's output on the same stream as the table, before, after and
//! sometimes between its rows. Every field of the table is quoted, so a table line
//! starts with `"`; any other line is skipped and counted. Quoted fields may hold
//! commas, doubled quotes (NVTX range names) and, rarely, line breaks.

/// One CSV record and the line (1-based, as an editor counts) it starts on.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Record {
    pub line: usize,
    pub fields: Vec<String>,
}

/// The table of an ncu dump.
#[derive(Debug)]
pub(super) struct Table {
    pub header: Record,
    pub rows: Vec<Record>,
    /// Non-empty lines outside the table (profiler messages, program output).
    pub skipped_lines: usize,
    /// `==ERROR==` and `==WARNING==` lines, as printed.
    pub profiler_messages: Vec<String>,
}

/// A header is the first record whose first field is `ID` and which names a kernel.
fn is_header(fields: &[String]) -> bool {
    fields.first().is_some_and(|f| f == "ID") && fields.iter().any(|f| f == "Kernel Name")
}

/// Split `text` into the ncu table. `Ok(None)`: no ncu header in the text.
/// `Err((line, column, message))` for a malformed record.
pub(super) fn find_table(text: &str) -> Result<Option<Table>, (usize, usize, String)> {
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let mut header: Option<Record> = None;
    let mut rows = Vec::new();
    let mut skipped_lines = 0;
    let mut profiler_messages = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim_start();
        if !trimmed.starts_with('"') {
            if !trimmed.is_empty() {
                skipped_lines += 1;
                if trimmed.starts_with("==ERROR==") || trimmed.starts_with("==WARNING==") {
                    profiler_messages.push(trimmed.trim_end().to_string());
                }
            }
            i += 1;
            continue;
        }
        let (fields, used) = parse_record(&lines[i..], i + 1)?;
        let record = Record {
            line: i + 1,
            fields,
        };
        i += used;
        if header.is_some() {
            rows.push(record);
        } else if is_header(&record.fields) {
            header = Some(record);
        } else {
            skipped_lines += 1;
        }
    }
    Ok(header.map(|header| Table {
        header,
        rows,
        skipped_lines,
        profiler_messages,
    }))
}

/// Parse one record starting at `lines[0]` (line number `first_line`); returns the
/// fields and how many lines the record spans.
fn parse_record(
    lines: &[&str],
    first_line: usize,
) -> Result<(Vec<String>, usize), (usize, usize, String)> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut used = 1;
    let mut chars: Vec<char> = lines[0].chars().collect();
    let mut pos = 0;
    loop {
        // At the start of a field.
        if chars.get(pos) == Some(&'"') {
            pos += 1;
            loop {
                match chars.get(pos) {
                    Some('"') if chars.get(pos + 1) == Some(&'"') => {
                        field.push('"');
                        pos += 2;
                    }
                    Some('"') => {
                        pos += 1;
                        break;
                    }
                    Some(&c) => {
                        field.push(c);
                        pos += 1;
                    }
                    None => {
                        // The quoted field goes on on the next line.
                        if used >= lines.len() {
                            return Err((first_line, 1, "a quoted field is never closed".into()));
                        }
                        field.push('\n');
                        chars = lines[used].chars().collect();
                        used += 1;
                        pos = 0;
                    }
                }
            }
        } else {
            while let Some(&c) = chars.get(pos) {
                if c == ',' {
                    break;
                }
                field.push(c);
                pos += 1;
            }
        }
        fields.push(std::mem::take(&mut field));
        match chars.get(pos) {
            None => return Ok((fields, used)),
            Some(',') => pos += 1,
            Some(&c) => {
                return Err((
                    first_line + used - 1,
                    pos + 1,
                    format!("unexpected '{c}' after a closing quote"),
                ))
            }
        }
        if pos == chars.len() {
            // A trailing comma ends the record with an empty field.
            fields.push(String::new());
            return Ok((fields, used));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // SYNTHETIC lines, shaped like the real exports.
    #[test]
    fn skips_messages_and_keeps_quoted_commas_and_quotes() {
        let text = "==PROF== Connected to process 1 (/bin/app)\n\
                    Compiling took 0.4 s\n\
                    ==ERROR== Failed to profile \"k\" in process 1\n\
                    \"ID\",\"Kernel Name\",\"NVTX\",\"Value\"\r\n\
                    \"0\",\"f(int, int)\",\"1  \"\"A:b,c\"\" \",\"1,234,567\"\n\
                    ==PROF== Disconnected from process 1\n\
                    \"1\",\"g\",\"\",\"2\",\n";
        let t = find_table(text).unwrap().unwrap();
        assert_eq!(t.header.line, 4);
        assert_eq!(t.header.fields, ["ID", "Kernel Name", "NVTX", "Value"]);
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[0].line, 5);
        assert_eq!(t.rows[0].fields[1], "f(int, int)");
        assert_eq!(t.rows[0].fields[2], "1  \"A:b,c\" ");
        assert_eq!(t.rows[0].fields[3], "1,234,567");
        assert_eq!(t.rows[1].line, 7);
        assert_eq!(t.rows[1].fields, ["1", "g", "", "2", ""]);
        assert_eq!(t.skipped_lines, 4);
        assert_eq!(t.profiler_messages.len(), 1);
        assert!(t.profiler_messages[0].starts_with("==ERROR== Failed"));
    }

    #[test]
    fn quoted_line_breaks_and_malformed_records() {
        let t = find_table("\"ID\",\"Kernel Name\"\n\"0\",\"two\nlines\"\n\"1\",\"k\"\n")
            .unwrap()
            .unwrap();
        assert_eq!(t.rows[0].fields[1], "two\nlines");
        assert_eq!(t.rows[1].line, 4);
        let e = find_table("\"ID\",\"Kernel Name\"\n\"0\",\"k\"x,\"1\"\n").unwrap_err();
        assert_eq!((e.0, e.1), (2, 8));
        let e = find_table("\"ID\",\"Kernel Name\"\n\"0\",\"never closed\n").unwrap_err();
        assert_eq!(e.0, 2);
        assert!(find_table("a,b\n1,2\n").unwrap().is_none());
    }
}
