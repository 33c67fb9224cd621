//! `reproduce --check` and `--accuracy-page`, and the data directory: the printing side
//! of [`gpucast::experiments::gate`] and [`gpucast::experiments::page`].

use super::DataDirArgs;
use gpucast::error::{Error, Result};
use gpucast::experiments::gate::{Bound, Check, Kind};
use gpucast::experiments::{self, Outcome};
use std::path::{Path, PathBuf};

/// The directory the shipped data is under: `--data-dir`, `GPUCAST_DATA` or `.`
/// ([`experiments::data_dir`]).
pub fn data_dir(a: &DataDirArgs) -> Result<PathBuf> {
    experiments::data_dir(
        a.data_dir.as_deref(),
        std::env::var_os("GPUCAST_DATA").as_deref(),
    )
}

fn bound_text(b: &Bound) -> String {
    match *b {
        Bound::AtMost(x) => format!("<= {x}"),
        Bound::AtLeast(x) => format!(">= {x}"),
        Bound::Within(lo, hi) => format!("in [{lo}, {hi}]"),
    }
}

/// A figure: MAPE and coverage with one decimal, Spearman with three, harm signed.
fn figure(kind: Kind, v: f64) -> String {
    if v.is_nan() {
        return "-".into();
    }
    match kind {
        Kind::Spearman => format!("{v:.3}"),
        Kind::Harm | Kind::CorpusHarm => format!("{v:+.2} points"),
        _ => format!("{v:.1} %"),
    }
}

/// What a check bounds, e.g. "pooled MAPE", "MAPE - analytical per target (>= 20 rows)".
fn what(c: &Check) -> String {
    let vs = c.vs.as_deref().unwrap_or("?");
    match c.kind {
        Kind::PooledMape => "pooled MAPE".into(),
        Kind::WorstTargetMape => "worst target MAPE".into(),
        Kind::Coverage => "90 % interval coverage".into(),
        Kind::Spearman => "Spearman".into(),
        Kind::TargetMape => "MAPE".into(),
        Kind::Harm => match c.min_rows {
            Some(n) if n > 0 => format!("MAPE - {vs} per target (>= {n} rows)"),
            _ => format!("MAPE - {vs} per target"),
        },
        Kind::CorpusHarm => format!("MAPE - {vs} per corpus"),
    }
}

/// One line per check: `ok` or `BREACH`, the experiment and model, the figure, its
/// bound; a breach also names where and why.
pub fn line(c: &Check) -> String {
    let at =
        c.at.as_deref()
            .map(|a| format!(" ({})", if a == "all" { "pooled" } else { a }))
            .unwrap_or_default();
    let mut s = format!(
        "{:<6} {}/{}: {} {}{at} {}",
        if c.passed() { "ok" } else { "BREACH" },
        c.experiment,
        c.model,
        what(c),
        figure(c.kind, c.value),
        bound_text(&c.bound)
    );
    if !c.passed() {
        s += &format!(": {}", breaches(c));
    }
    s
}

/// Every breach of a check, e.g. "NVIDIA TITAN V +2.10 points; pooled +1.50 points".
fn breaches(c: &Check) -> String {
    c.breaches
        .iter()
        .map(|b| {
            let at = match b.at.as_deref() {
                Some("all") => "pooled ".to_string(),
                Some(a) => format!("{a} "),
                None => String::new(),
            };
            match &b.note {
                Some(n) => format!("{at}{n}"),
                None => format!("{at}{}", figure(c.kind, b.value)),
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// A line per check under a heading; an error when there is none to check.
pub fn lines(checks: &[Check]) -> Result<String> {
    let mut text = format!("\n== Gates ({} checked)\n", checks.len());
    for c in checks {
        text += &line(c);
        text += "\n";
    }
    if checks.is_empty() {
        return Err(Error::msg(
            "reproduce --check: no experiment has a [gate] table, so nothing was checked",
        ));
    }
    Ok(text)
}

/// The error of a check with breaches: each named (None when every gate holds).
pub fn breached(checks: &[Check]) -> Option<Error> {
    let bad: Vec<String> = checks
        .iter()
        .filter(|c| !c.passed())
        .map(|c| {
            format!(
                "{}/{} {} {} ({})",
                c.experiment,
                c.model,
                what(c),
                bound_text(&c.bound),
                breaches(c)
            )
        })
        .collect();
    (!bad.is_empty()).then(|| {
        Error::msg(format!(
            "{} of {} gates breached: {}",
            bad.len(),
            checks.len(),
            bad.join(", ")
        ))
    })
}

/// The accuracy page's text as it is now (None: no page yet).
fn accuracy_page_text(page: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(page) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io_error(page.display(), "cannot read", e)),
    }
}

/// Check before any work that the tables can go into `page`: an output it may write
/// ([`gpucast::files::check_output`]; the page is spliced, not replaced, so an
/// existing one is allowed) with its two markers, or no page yet.
pub fn check_accuracy_page(page: &Path) -> Result<()> {
    if std::fs::metadata(page).is_ok_and(|m| !m.is_file()) {
        return Err(Error::refused(
            page.display(),
            "is not a regular file: the accuracy page is a markdown file its tables are spliced into",
        ));
    }
    gpucast::files::note_replaceable(page);
    gpucast::files::check_output(page, &[])?;
    let old = accuracy_page_text(page)?;
    experiments::page::splice(old.as_deref(), "", &page.display().to_string()).map(|_| ())
}

/// Write the accuracy page's tables into `page` ([`experiments::page::splice`]).
pub fn write_accuracy_page(page: &Path, outcomes: &[Outcome]) -> Result<()> {
    let tables = experiments::page::accuracy_tables(outcomes);
    let old = accuracy_page_text(page)?;
    let text = experiments::page::splice(old.as_deref(), &tables, &page.display().to_string())?;
    // (the page keeps every line outside gpucast's markers: only its own tables change)
    gpucast::files::note_replaceable(page);
    gpucast::report::write_atomic(page, &text)
}
