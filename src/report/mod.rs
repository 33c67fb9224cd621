//! Reports: tables (text, markdown, CSV) and SVG plots of evaluations.

pub mod plots;
mod views;

pub use views::{
    cross_source_table, explain_text, flagged_rows_table, gpus_table, hybrid_stages_text,
    import_report, not_imported_text, runs_table, timings_table, validation_footer,
    validation_table, RunView,
};

use crate::evaluation::{Evaluation, Metrics};

/// How a command prints a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Aligned text for a terminal
    #[default]
    Table,
    /// Comma-separated values with a header
    Csv,
    /// A JSON array of objects keyed by column
    Json,
}
use std::collections::BTreeMap;

/// A simple table rendered as aligned text, markdown or CSV.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The most characters a cell shows in a terminal table ([`Table::to_text`]); CSV,
/// JSON and Markdown keep every cell whole.
pub const MAX_TEXT_CELL_CHARS: usize = 200;

impl Table {
    pub fn new(headers: &[&str]) -> Table {
        Table {
            headers: headers.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
        }
    }
    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }
    /// The named columns only, in the order given (names the table lacks are skipped):
    /// a narrow view for markdown, the whole table going to CSV.
    pub fn select(&self, columns: &[&str]) -> Table {
        let idx: Vec<usize> = columns
            .iter()
            .filter_map(|c| self.headers.iter().position(|h| h == c))
            .collect();
        Table {
            headers: idx.iter().map(|&i| self.headers[i].clone()).collect(),
            rows: self
                .rows
                .iter()
                .map(|r| {
                    idx.iter()
                        .map(|&i| r.get(i).cloned().unwrap_or_default())
                        .collect()
                })
                .collect(),
        }
    }
    /// The cells of `column` longer than `max_chars` cut to that many, the last an
    /// ellipsis: for a terminal, where one demangled C++ kernel name (Nsight Compute
    /// exports name kernels by their whole signature, 200 characters and more) would
    /// widen every row. Machine-readable outputs keep the whole text.
    pub fn shorten(&mut self, column: &str, max_chars: usize) {
        let Some(i) = self.headers.iter().position(|h| h == column) else {
            return;
        };
        for r in &mut self.rows {
            if let Some(c) = r.get_mut(i) {
                if c.chars().count() > max_chars {
                    *c = c
                        .chars()
                        .take(max_chars.saturating_sub(1))
                        .collect::<String>()
                        + "…";
                }
            }
        }
    }
    fn widths(&self) -> Vec<usize> {
        let mut w: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate() {
                if i < w.len() {
                    w[i] = w[i].max(c.chars().count().min(MAX_TEXT_CELL_CHARS));
                }
            }
        }
        w
    }
    /// Aligned plain text (numbers right-aligned, text left-aligned); a cell longer
    /// than [`MAX_TEXT_CELL_CHARS`] is cut there, the last character an ellipsis.
    pub fn to_text(&self) -> String {
        let w = self.widths();
        let fmt_row = |cells: &[String]| {
            cells
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let width = w.get(i).copied().unwrap_or(0);
                    let n = c.chars().count();
                    let cell = if n > MAX_TEXT_CELL_CHARS {
                        c.chars().take(MAX_TEXT_CELL_CHARS - 1).collect::<String>() + "…"
                    } else {
                        c.clone()
                    };
                    let pad = " ".repeat(width.saturating_sub(n.min(MAX_TEXT_CELL_CHARS)));
                    let numeric = c.parse::<f64>().is_ok() || c.ends_with('%');
                    if numeric {
                        pad + &cell
                    } else {
                        cell + &pad
                    }
                })
                .collect::<Vec<_>>()
                .join("  ")
                .trim_end()
                .to_string()
        };
        let mut out = fmt_row(&self.headers) + "\n";
        out += &(w
            .iter()
            .map(|n| "-".repeat(*n))
            .collect::<Vec<_>>()
            .join("  ")
            + "\n");
        for r in &self.rows {
            out += &(fmt_row(r) + "\n");
        }
        out
    }
    pub fn to_markdown(&self) -> String {
        let mut out = format!("| {} |\n", self.headers.join(" | "));
        out += &format!(
            "|{}|\n",
            self.headers
                .iter()
                .map(|_| "---")
                .collect::<Vec<_>>()
                .join("|")
        );
        for r in &self.rows {
            out += &format!("| {} |\n", r.join(" | "));
        }
        out
    }
    /// A JSON array with one object per row, keyed by the headers.
    pub fn to_json(&self) -> String {
        let rows: Vec<serde_json::Map<String, serde_json::Value>> = self
            .rows
            .iter()
            .map(|r| {
                self.headers
                    .iter()
                    .zip(r)
                    .map(|(h, c)| (h.clone(), serde_json::Value::String(c.clone())))
                    .collect()
            })
            .collect();
        serde_json::to_string_pretty(&rows).unwrap_or_default() + "\n"
    }
    /// The table in `format`.
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Table => self.to_text(),
            Format::Csv => self.to_csv(),
            Format::Json => self.to_json(),
        }
    }
    pub fn to_csv(&self) -> String {
        let mut out = self
            .headers
            .iter()
            .map(|s| csv_cell(s))
            .collect::<Vec<_>>()
            .join(",")
            + "\n";
        for r in &self.rows {
            out += &(r.iter().map(|s| csv_cell(s)).collect::<Vec<_>>().join(",") + "\n");
        }
        out
    }
}

/// Format a percentage (already in percent).
pub fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.1}")
    } else {
        "-".into()
    }
}

/// Format a number to 3 decimals ("-" when it is not finite, e.g. the Spearman of
/// one pair).
pub fn fixed3(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.3}")
    } else {
        "-".into()
    }
}

/// Format a fraction as a percentage.
pub fn frac_pct(x: f64) -> String {
    pct(100.0 * x)
}

pub const METRIC_HEADERS: [&str; 18] = [
    "n",
    "MAPE %",
    "median APE %",
    "median ratio",
    "within 10 %",
    "within 25 %",
    "within 50 %",
    "RMSE(log)",
    "in interval %",
    "Spearman",
    "top-1 regret",
    "MAPE % at known level",
    "n launch-bound",
    "MAPE % launch-bound",
    "in interval % launch-bound",
    "n work-bound",
    "MAPE % work-bound",
    "in interval % work-bound",
];

pub fn metric_cells(m: &Metrics) -> Vec<String> {
    vec![
        m.n.to_string(),
        pct(m.mape),
        pct(m.median_ape),
        if m.median_ratio.is_finite() {
            format!("{:.2}", m.median_ratio)
        } else {
            "-".into()
        },
        frac_pct(m.within_10),
        frac_pct(m.within_25),
        frac_pct(m.within_50),
        fixed3(m.rmse_log),
        if m.interval.is_empty() {
            "-".into()
        } else {
            // the coverage beside what the interval is, e.g. "91.2 (90%)"
            format!("{} ({})", frac_pct(m.interval_coverage), m.interval)
        },
        if m.tuning_spaces > 0 {
            format!("{:.3}", m.spearman)
        } else {
            "-".into()
        },
        if m.tuning_spaces > 0 {
            format!("{:.3}", m.top1_regret)
        } else {
            "-".into()
        },
        pct(m.mape_known_level),
        m.n_launch_bound.to_string(),
        pct(m.mape_launch_bound),
        frac_pct(m.coverage_launch_bound),
        m.n_work_bound.to_string(),
        pct(m.mape_work_bound),
        frac_pct(m.coverage_work_bound),
    ]
}

/// "MAPE (coverage)" of one regime, e.g. "35.2 (88.1)"; "-" with no row in it.
pub fn regime_cell(n: usize, mape: f64, coverage: f64) -> String {
    if n == 0 {
        return "-".into();
    }
    if coverage.is_finite() {
        format!("{} ({})", pct(mape), frac_pct(coverage))
    } else {
        pct(mape)
    }
}

/// Most folds named in a summary group; a larger group is counted instead.
const MAX_NAMED_FOLDS: usize = 4;

/// What fitting decided, one line per model: the summary once when every fold agrees
/// ("hybrid: correction share 0 (...) in 4 folds"), else each distinct summary once,
/// after the folds that chose it ("A / B: share 0.25") or, for more than
/// `MAX_NAMED_FOLDS` of them, with their count ("share 0 in 38 folds"): a
/// new-family evaluation has a fold per (GPU, family).
pub fn fit_summary_lines(eval: &Evaluation) -> Vec<String> {
    let mut models: Vec<&str> = eval
        .fit_summaries
        .iter()
        .map(|(m, _, _)| m.as_str())
        .collect();
    models.dedup();
    let folds_phrase = |n: usize| format!("{n} fold{}", if n == 1 { "" } else { "s" });
    models
        .into_iter()
        .map(|m| {
            // Distinct summaries in first-seen order, each with its folds.
            let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
            for (_, fold, summary) in eval.fit_summaries.iter().filter(|(x, _, _)| x == m) {
                match groups.iter_mut().find(|(s, _)| s == summary) {
                    Some((_, folds)) => folds.push(fold),
                    None => groups.push((summary, vec![fold])),
                }
            }
            if let [(summary, folds)] = groups.as_slice() {
                return format!("{m}: {summary} in {}", folds_phrase(folds.len()));
            }
            let each: Vec<String> = groups
                .iter()
                .map(|(summary, folds)| {
                    if folds.len() > MAX_NAMED_FOLDS {
                        format!("{summary} in {}", folds_phrase(folds.len()))
                    } else {
                        format!("{}: {summary}", folds.join(" / "))
                    }
                })
                .collect();
            format!("{m}: {}", each.join("; "))
        })
        .collect()
}

/// One row per (model, target) with the metrics.
pub fn results_table(eval: &Evaluation) -> Table {
    let mut headers = vec!["model", "target"];
    headers.extend(METRIC_HEADERS);
    let mut t = Table::new(&headers);
    for r in &eval.results {
        let mut row = vec![r.model.clone(), r.target.clone()];
        row.extend(metric_cells(&r.metrics));
        t.push(row);
    }
    t
}

/// One model's metrics on one kernel, pooled over targets (`evaluate --per-kernel`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct KernelResultRow {
    pub model: String,
    pub kernel: String,
    #[serde(flatten)]
    pub metrics: Metrics,
}

/// Per-kernel metrics: one row per (model, kernel), pooled over targets, in that order.
pub fn per_kernel_results(eval: &Evaluation) -> Vec<KernelResultRow> {
    let mut groups: BTreeMap<(&str, &str), Vec<&crate::evaluation::Record>> = BTreeMap::new();
    for r in &eval.records {
        groups.entry((&r.model, &r.kernel)).or_default().push(r);
    }
    groups
        .into_iter()
        .map(|((model, kernel), recs)| KernelResultRow {
            model: model.to_string(),
            kernel: kernel.to_string(),
            metrics: Metrics::from_records(recs),
        })
        .collect()
}

/// Per-kernel breakdown: one row per (model, kernel), pooled over targets.
pub fn per_kernel_table(eval: &Evaluation) -> Table {
    let mut headers = vec!["model", "kernel"];
    headers.extend(METRIC_HEADERS);
    let mut t = Table::new(&headers);
    for r in per_kernel_results(eval) {
        let mut row = vec![r.model, r.kernel];
        row.extend(metric_cells(&r.metrics));
        t.push(row);
    }
    t
}

/// The per-target and per-kernel results as one table (one CSV a program can read):
/// columns model, target, kernel; a per-target row has kernel `all` (every kernel
/// pooled), a per-kernel row target `all`.
pub fn results_and_kernels_table(eval: &Evaluation) -> Table {
    let mut headers = vec!["model", "target", "kernel"];
    headers.extend(METRIC_HEADERS);
    let mut t = Table::new(&headers);
    for r in &eval.results {
        let mut row = vec![r.model.clone(), r.target.clone(), "all".to_string()];
        row.extend(metric_cells(&r.metrics));
        t.push(row);
    }
    for r in per_kernel_results(eval) {
        let mut row = vec![r.model, "all".to_string(), r.kernel];
        row.extend(metric_cells(&r.metrics));
        t.push(row);
    }
    t
}

/// One model's metrics on one corpus (the records' `source`), pooled over its targets.
#[derive(Debug, Clone)]
pub struct CorpusResult {
    pub model: String,
    pub corpus: String,
    /// Targets scored in the corpus.
    pub targets: usize,
    pub metrics: Metrics,
    /// The worst target of at least 10 rows and its MAPE (%).
    pub worst: Option<(String, f64)>,
}

/// One [`CorpusResult`] per (model, corpus), models in the evaluation's order.
pub fn per_corpus_results(eval: &Evaluation) -> Vec<CorpusResult> {
    type Group<'r> = BTreeMap<&'r str, Vec<&'r crate::evaluation::Record>>;
    let mut groups: BTreeMap<(&str, &str), Group> = BTreeMap::new();
    for r in &eval.records {
        let corpus = r.source.as_deref().unwrap_or(crate::evaluation::NO_SOURCE);
        groups
            .entry((&r.model, corpus))
            .or_default()
            .entry(&r.target)
            .or_default()
            .push(r);
    }
    // models in the evaluation's order
    let mut models: Vec<&str> = Vec::new();
    for r in &eval.results {
        if !models.contains(&r.model.as_str()) {
            models.push(&r.model);
        }
    }
    models
        .iter()
        .flat_map(|m| groups.iter().filter(move |((gm, _), _)| gm == m))
        .map(|((model, corpus), targets)| {
            let all: Vec<&crate::evaluation::Record> =
                targets.values().flatten().copied().collect();
            let worst = targets
                .iter()
                .filter(|(_, recs)| recs.len() >= 10)
                .map(|(t, recs)| {
                    (
                        t.to_string(),
                        Metrics::from_records(recs.iter().copied()).mape,
                    )
                })
                .max_by(|a, b| a.1.total_cmp(&b.1));
            CorpusResult {
                model: model.to_string(),
                corpus: corpus.to_string(),
                targets: targets.len(),
                metrics: Metrics::from_records(all),
                worst,
            }
        })
        .collect()
}

/// One row per (model, corpus: the records' `source`): pooled MAPE, the worst target
/// (by MAPE, at least 10 rows), interval coverage and the launch-bound / work-bound
/// split. The table leave-one-corpus-out is judged by.
pub fn per_corpus_table(eval: &Evaluation) -> Table {
    let mut t = Table::new(&[
        "model",
        "corpus",
        "targets",
        "n",
        "MAPE %",
        "worst target (MAPE %)",
        "in interval %",
        "launch-bound MAPE % (in interval %)",
        "work-bound MAPE % (in interval %)",
    ]);
    for c in per_corpus_results(eval) {
        let m = &c.metrics;
        let worst = c
            .worst
            .as_ref()
            .map(|(t, mape)| format!("{} ({})", short_corpus_target(t), pct(*mape)))
            .unwrap_or_else(|| "-".into());
        t.push(vec![
            c.model.clone(),
            c.corpus.clone(),
            c.targets.to_string(),
            m.n.to_string(),
            pct(m.mape),
            worst,
            frac_pct(m.interval_coverage),
            regime_cell(
                m.n_launch_bound,
                m.mape_launch_bound,
                m.coverage_launch_bound,
            ),
            regime_cell(m.n_work_bound, m.mape_work_bound, m.coverage_work_bound),
        ]);
    }
    t
}

/// A target of a per-corpus table without its corpus ("corpus: GPU") and vendor.
pub fn short_corpus_target(target: &str) -> &str {
    let gpu = target.rsplit(": ").next().unwrap_or(target);
    gpu.strip_prefix("NVIDIA ").unwrap_or(gpu)
}

/// Every scored prediction.
pub fn records_table(eval: &Evaluation) -> Table {
    let mut t = Table::new(&[
        "model",
        "target",
        "kernel",
        "config",
        "measured_ms",
        "pred_ms",
        "pred_lo_ms",
        "pred_hi_ms",
        "interval",
        "bound",
        "launch_bound",
    ]);
    for r in &eval.records {
        t.push(vec![
            r.model.to_string(),
            r.target.to_string(),
            r.kernel.to_string(),
            r.config.to_string(),
            format!("{:.6}", r.measured_ms),
            format!("{:.6}", r.pred_ms),
            format!("{:.6}", r.pred_lo_ms),
            format!("{:.6}", r.pred_hi_ms),
            r.interval.label(),
            r.bound.to_string(),
            r.launch_bound.to_string(),
        ]);
    }
    t
}

pub use crate::files::write_atomic;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shorten_cuts_long_cells_of_one_column_to_an_ellipsis() {
        let long = format!("void k<{}>(float*)", "int, ".repeat(20));
        let mut t = Table::new(&["kernel", "config"]);
        t.push(vec![long.clone(), long.clone()]);
        t.push(vec!["saxpy".into(), "N=1".into()]);
        t.shorten("kernel", 20);
        t.shorten("no such column", 5);
        assert_eq!(t.rows[0][0], "void k<int, int, in…");
        assert_eq!(t.rows[0][0].chars().count(), 20);
        assert_eq!(t.rows[0][1], long, "other columns keep their text");
        assert_eq!(t.rows[1], vec!["saxpy".to_string(), "N=1".to_string()]);
    }

    #[test]
    fn fit_summaries_group_the_folds_by_choice() {
        let e = |m: &str, f: &str, s: &str| (m.to_string(), f.to_string(), s.to_string());
        let mut fit_summaries = vec![
            e("hybrid", "A", "share 0"),
            e("hybrid", "B", "share 0"),
            e("hybrid-forest", "A", "share 0"),
            e("hybrid-forest", "B", "share 0.25"),
            e("hybrid-forest", "C", "share 0"),
        ];
        // Many folds (a new-family evaluation): the common choice is counted, the
        // rare one names its folds.
        for fold in ["D", "E", "F", "G", "H"] {
            fit_summaries.push(e("hybrid-knn", fold, "share 0"));
        }
        fit_summaries.push(e("hybrid-knn", "I", "share 1"));
        let eval = Evaluation {
            fit_summaries,
            ..Evaluation::default()
        };
        assert_eq!(
            fit_summary_lines(&eval),
            vec![
                "hybrid: share 0 in 2 folds".to_string(),
                "hybrid-forest: A / C: share 0; B: share 0.25".to_string(),
                "hybrid-knn: share 0 in 5 folds; I: share 1".to_string(),
            ]
        );
    }

    #[test]
    fn table_renders_three_ways() {
        let mut t = Table::new(&["name", "value"]);
        t.push(vec!["a,b".into(), "1.5".into()]);
        assert_eq!(t.to_csv(), "name,value\n\"a,b\",1.5\n");
        assert_eq!(
            t.to_markdown(),
            "| name | value |\n|---|---|\n| a,b | 1.5 |\n"
        );
        assert_eq!(t.to_text(), "name  value\n----  -----\na,b     1.5\n");
    }
}
