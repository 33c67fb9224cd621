//! One profiled kernel launch: its identifying columns and its metrics, read from
//! either layout into the same shape.

use super::records::{Record, Table};
use super::units::{parse_number, plausible, to_base, Kind};
use std::collections::HashMap;

/// The two CSV layouts of `ncu --csv`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NcuLayout {
    /// `--page raw`: one row per launch, one column per metric, units in a second row
    /// (newer versions).
    Raw,
    /// `--page details`: one row per (launch, section, metric) with unit and value columns.
    Details,
}

impl std::fmt::Display for NcuLayout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NcuLayout::Raw => "raw",
            NcuLayout::Details => "details",
        })
    }
}

/// One metric value as printed, with where it came from (for error messages).
#[derive(Debug, Clone)]
pub(super) struct Cell {
    pub value: String,
    pub unit: String,
    pub line: usize,
}

/// What is wrong and where: (line, column or metric name, message).
pub(super) type CellError = (usize, String, String);

#[derive(Debug, Clone)]
pub(super) struct Launch {
    /// Line of the launch's first row.
    pub line: usize,
    pub id: String,
    pub kernel: String,
    /// Metrics and identifying columns by name. Details-page metrics without `__` in
    /// their name (section metrics such as "Duration") are keyed "Section/Name".
    pub cells: HashMap<String, Cell>,
}

/// Columns that describe a launch rather than measure it, and the details page's own.
const DETAILS_COLUMNS: [&str; 4] = ["Section Name", "Metric Name", "Metric Unit", "Metric Value"];

impl Launch {
    pub fn text(&self, name: &str) -> Option<&str> {
        self.cells
            .get(name)
            .map(|c| c.value.trim())
            .filter(|v| !v.is_empty())
    }

    /// A metric converted to the base unit of `kind`; `Ok(None)` when the launch does
    /// not have it (absent, empty, n/a or a list).
    pub fn get(&self, name: &str, kind: Kind) -> Result<Option<f64>, CellError> {
        let Some(cell) = self.cells.get(name) else {
            return Ok(None);
        };
        let err = |m: String| (cell.line, name.to_string(), m);
        // Without a units row a sector count would read as bytes.
        let unit = if cell.unit.trim().is_empty() && name.contains("__") && name.contains("sectors")
        {
            "sector"
        } else {
            cell.unit.as_str()
        };
        match parse_number(&cell.value).map_err(err)? {
            None => Ok(None),
            Some(v) => to_base(v, unit, kind)
                .and_then(|v| plausible(v, kind))
                .map(Some)
                .map_err(err),
        }
    }

    /// The first of `names` the launch has, with the name used.
    pub fn first(
        &self,
        names: &[&'static str],
        kind: Kind,
    ) -> Result<Option<(f64, &'static str)>, CellError> {
        for &n in names {
            if let Some(v) = self.get(n, kind)? {
                return Ok(Some((v, n)));
            }
        }
        Ok(None)
    }

    /// Launch dimensions from a "(x, y, z)" cell, or one number (possibly with
    /// thousands separators) as a single dimension.
    pub fn dims(&self, name: &str) -> Result<Option<Vec<f64>>, CellError> {
        let Some(cell) = self.cells.get(name) else {
            return Ok(None);
        };
        let t = cell.value.trim();
        let bad = || {
            (
                cell.line,
                name.to_string(),
                format!("cannot read '{t}' as launch dimensions"),
            )
        };
        let Some(inner) = t.strip_prefix('(') else {
            return parse_number(t)
                .map_err(|_| bad())
                .map(|v| v.map(|v| vec![v]));
        };
        inner
            .trim_end_matches(')')
            .split(',')
            .map(|p| match p.trim().parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
                _ => Err(bad()),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }
}

/// The layout a header belongs to.
pub(super) fn layout_of(header: &Record) -> NcuLayout {
    let has = |c: &str| header.fields.iter().any(|f| f == c);
    if has("Metric Name") && has("Metric Value") {
        NcuLayout::Details
    } else {
        NcuLayout::Raw
    }
}

/// Read the launches of a table. `Err` for rows that do not fit the header.
pub(super) fn launches(table: &Table, layout: NcuLayout) -> Result<Vec<Launch>, CellError> {
    let header = &table.header.fields;
    let col = |name: &str| header.iter().position(|h| h == name);
    let width_error = |r: &Record| {
        (
            r.line,
            String::from("(row)"),
            format!(
                "{} fields but the header at line {} has {}",
                r.fields.len(),
                table.header.line,
                header.len()
            ),
        )
    };
    let field = |r: &Record, i: Option<usize>| -> String {
        i.and_then(|i| r.fields.get(i)).cloned().unwrap_or_default()
    };
    let (id_col, pid_col, kernel_col) = (col("ID"), col("Process ID"), col("Kernel Name"));
    let mut out: Vec<Launch> = Vec::new();
    match layout {
        NcuLayout::Raw => {
            let mut rows = table.rows.iter().peekable();
            // Newer versions print a units row under the header: its ID cell is empty.
            let units: Vec<String> = match rows.peek() {
                Some(r) if field(r, id_col).trim().is_empty() => {
                    if r.fields.len() != header.len() {
                        return Err(width_error(r));
                    }
                    rows.next().map(|r| r.fields.clone()).unwrap_or_default()
                }
                _ => Vec::new(),
            };
            for r in rows {
                // A raw export writes every column of every launch: a shorter row is
                // cut (its missing metrics would read as absent, and a launch could
                // vanish with a misleading reason).
                if r.fields.len() != header.len() {
                    return Err(width_error(r));
                }
                let mut cells = HashMap::with_capacity(header.len());
                for (i, name) in header.iter().enumerate() {
                    cells.insert(
                        name.clone(),
                        Cell {
                            value: r.fields.get(i).cloned().unwrap_or_default(),
                            unit: units.get(i).cloned().unwrap_or_default(),
                            line: r.line,
                        },
                    );
                }
                out.push(new_launch(
                    r,
                    field(r, id_col),
                    field(r, kernel_col),
                    cells,
                )?);
            }
        }
        NcuLayout::Details => {
            let [sec, name, unit, value] = DETAILS_COLUMNS.map(col);
            let mut index: HashMap<(String, String), usize> = HashMap::new();
            for r in &table.rows {
                // (real details exports end rows without a rule's columns early)
                if r.fields.len() > header.len() {
                    return Err(width_error(r));
                }
                let key = (field(r, pid_col), field(r, id_col));
                let at = match index.get(&key) {
                    Some(&at) => at,
                    None => {
                        // Identifying columns come from the launch's first row.
                        let mut cells = HashMap::new();
                        for (i, h) in header.iter().enumerate() {
                            if !DETAILS_COLUMNS.contains(&h.as_str()) && !h.starts_with("Rule ") {
                                cells.insert(
                                    h.clone(),
                                    Cell {
                                        value: field(r, Some(i)),
                                        unit: String::new(),
                                        line: r.line,
                                    },
                                );
                            }
                        }
                        out.push(new_launch(r, key.1.clone(), field(r, kernel_col), cells)?);
                        index.insert(key, out.len() - 1);
                        out.len() - 1
                    }
                };
                let metric = field(r, name);
                let metric = metric.trim();
                if metric.is_empty() {
                    continue; // a rule row (advice text), no measurement
                }
                let section = field(r, sec);
                let key = if metric.contains("__") {
                    metric.to_string()
                } else {
                    format!("{}/{metric}", section.trim())
                };
                out[at].cells.entry(key).or_insert(Cell {
                    value: field(r, value),
                    unit: field(r, unit),
                    line: r.line,
                });
            }
        }
    }
    Ok(out)
}

fn new_launch(
    r: &Record,
    id: String,
    kernel: String,
    cells: HashMap<String, Cell>,
) -> Result<Launch, CellError> {
    let id = id.trim().to_string();
    if id.is_empty() {
        return Err((r.line, "ID".into(), "a row without a launch ID".into()));
    }
    let kernel = kernel.trim().to_string();
    if kernel.is_empty() {
        return Err((r.line, "Kernel Name".into(), "empty kernel name".into()));
    }
    Ok(Launch {
        line: r.line,
        id,
        kernel,
        cells,
    })
}
