//! SVG charts for reports: predicted vs measured with prediction intervals, error CDF and
//! a roofline with a bandwidth panel.
//!
//! Every chart is rendered into memory with plotters' SVG backend (text is written as
//! `<text>` elements, so no system fonts are needed) and then written atomically: a
//! temporary file in the target directory is renamed over the target.
//!
//! Odd data never panics: non-finite points, and points that cannot sit on a log axis
//! (zero or negative), are skipped; a chart with nothing to show still renders, with a
//! "no data" note in the plotting area.

use std::collections::BTreeMap;
use std::fmt::Display;
use std::path::{Path, PathBuf};

use plotters::coord::ranged1d::{Ranged, SegmentValue, ValueFormatter};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::error::{Error, Result};
use crate::features::roofline::arithmetic_intensity;
use crate::files::write_atomic;

/// An evaluation's charts in `dir`, named `{name}_...svg`: predicted against measured
/// per target (each model a series, with its intervals) and the error CDF of each
/// model. Returns the files written.
pub fn evaluation_plots(
    records: &[crate::evaluation::Record],
    name: &str,
    dir: &Path,
) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let mut targets: Vec<&str> = records.iter().map(|r| &*r.target).collect();
    targets.sort();
    targets.dedup();
    for t in targets {
        let mut by_model: BTreeMap<&str, Vec<Prediction>> = BTreeMap::new();
        for r in records.iter().filter(|r| &*r.target == t) {
            by_model.entry(&r.model).or_default().push(Prediction {
                measured_ms: r.measured_ms,
                pred_ms: r.pred_ms,
                lo_ms: r.pred_lo_ms,
                hi_ms: r.pred_hi_ms,
            });
        }
        let series: Vec<(String, Vec<Prediction>)> = by_model
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        let p = dir.join(format!("{name}_pred_vs_measured_{}.svg", file_slug(t)));
        pred_vs_measured(&p, &format!("{name}: predicted vs measured, {t}"), &series)?;
        written.push(p);
    }
    let mut ape: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for r in records {
        ape.entry(&r.model)
            .or_default()
            .push(100.0 * (r.pred_ms - r.measured_ms).abs() / r.measured_ms);
    }
    let series: Vec<(String, Vec<f64>)> =
        ape.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    let p = dir.join(format!("{name}_error_cdf.svg"));
    error_cdf(&p, &format!("{name}: error CDF"), &series)?;
    written.push(p);
    Ok(written)
}

/// A name as a file name part: ASCII letters and digits, lower case, the rest `_`.
pub fn file_slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// Canvas size of a single chart in pixels.
const SIZE: (u32, u32) = (900, 650);
/// One panel of a small-multiples chart.
const PANEL: (u32, u32) = (440, 400);
/// Up to this many models share one predicted-vs-measured panel; more get a panel each.
pub const MAX_OVERLAID_SERIES: usize = 3;
/// At most this many points are drawn per panel (all of them are still scored): a corpus
/// of 100k predictions would otherwise give SVGs of tens of MB that no viewer opens.
pub const MAX_DRAWN_PER_PANEL: usize = 3000;
const FONT: &str = "sans-serif";
const TITLE_SIZE: u32 = 28;
const PANEL_TITLE_SIZE: u32 = 20;
const NOTE_SIZE: u32 = 16;
const AXIS_DESC_SIZE: u32 = 20;
const TICK_SIZE: u32 = 17;
const LEGEND_SIZE: u32 = 17;
const POINT_LABEL_SIZE: u32 = 14;
/// Longest point label drawn on a roofline before it is shortened with an ellipsis.
const MAX_POINT_LABEL: usize = 32;
/// A roofline label that finds no room at full length is tried again this short.
const SHORT_POINT_LABEL: usize = 12;
/// Width of the key right of each instruction roofline panel, pixels.
const INSTRUCTION_KEY_WIDTH: i32 = 330;
/// Rows of the bandwidth panel (one per kernel); further kernels are counted in a note.
const MAX_BANDWIDTH_ROWS: usize = 60;
/// Above this many values an error CDF is drawn through this many quantiles.
const CDF_MAX_STEPS: usize = 2000;
/// Widest log axis, in decades (plotters' tick placement misbehaves on absurd spans).
const MAX_DECADES: i32 = 12;

/// Tableau 10: distinguishable colours for series.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];
const INK: RGBColor = RGBColor(30, 30, 30);
const GUIDE: RGBColor = RGBColor(60, 60, 60);
const COMPUTE_COLOR: RGBColor = RGBColor(214, 39, 40);
const DRAM_COLOR: RGBColor = RGBColor(31, 119, 180);
const L2_COLOR: RGBColor = RGBColor(44, 160, 44);
const MEMORY_ONLY_COLOR: RGBColor = RGBColor(230, 110, 0);

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type LogLogChart<'a> = ChartContext<'a, SVGBackend<'a>, Cartesian2d<LogCoord<f64>, LogCoord<f64>>>;

/// One scored prediction: the measured time, the prediction and its interval (ms).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prediction {
    pub measured_ms: f64,
    pub pred_ms: f64,
    /// Interval bounds; the interval is not drawn unless both are positive and finite
    /// and `lo_ms < hi_ms`.
    pub lo_ms: f64,
    pub hi_ms: f64,
}

/// Predicted vs measured on log-log axes with the y = x line, dashed ±25 % lines and each
/// prediction's interval as a light vertical bar. Up to [`MAX_OVERLAID_SERIES`] series
/// (models) share one panel; more get one panel each on shared axes (small multiples).
/// At most [`MAX_DRAWN_PER_PANEL`] points are drawn per panel, evenly spaced in measured
/// time, and the chart says so when points were left out of the drawing.
pub fn pred_vs_measured(
    path: &Path,
    title: &str,
    series: &[(String, Vec<Prediction>)],
) -> Result<()> {
    let valid: Vec<(&str, Vec<Prediction>)> = series
        .iter()
        .map(|(name, pts)| {
            let mut pts: Vec<Prediction> = pts
                .iter()
                .copied()
                .filter(|p| positive(p.measured_ms) && positive(p.pred_ms))
                .collect();
            pts.sort_by(|a, b| a.measured_ms.total_cmp(&b.measured_ms));
            (name.as_str(), pts)
        })
        .collect();
    let axes = decade_range(
        valid
            .iter()
            .flat_map(|(_, pts)| pts.iter().flat_map(|p| [p.measured_ms, p.pred_ms])),
    )
    .unwrap_or((0.01, 100.0));
    let multiples = valid.len() > MAX_OVERLAID_SERIES;
    let cap = if multiples {
        MAX_DRAWN_PER_PANEL
    } else {
        MAX_DRAWN_PER_PANEL / valid.len().max(1)
    };
    let drawn: Vec<(usize, &str, Vec<Prediction>)> = valid
        .iter()
        .enumerate()
        .map(|(i, (name, pts))| (i, *name, evenly_spaced(pts, cap)))
        .collect();
    let total: usize = valid.iter().map(|(_, p)| p.len()).sum();
    let shown: usize = drawn.iter().map(|(_, _, p)| p.len()).sum();
    let mut notes = Vec::new();
    if multiples {
        notes.push(
            "one panel per model, shared axes; bars: prediction interval; solid: y = x; dashed: ±25 %"
                .to_string(),
        );
    }
    if shown < total {
        notes.push(format!(
            "drawn: {} of {} predictions, evenly spaced in measured time (all are scored)",
            thousands(shown as u64),
            thousands(total as u64),
        ));
    }

    let (cols, rows) = if multiples {
        let cols = (valid.len() as f64).sqrt().ceil() as usize;
        (cols, valid.len().div_ceil(cols))
    } else {
        (1, 1)
    };
    let header = header_height(&notes);
    let size = if multiples {
        (cols as u32 * PANEL.0, header + rows as u32 * PANEL.1)
    } else {
        (SIZE.0, SIZE.1 - 50 + header)
    };

    let svg = render(path, size, |root| {
        let body = draw_header(root, title, &notes, header)?;
        if multiples {
            for (panel, (i, name, pts)) in body.split_evenly((rows, cols)).iter().zip(&drawn) {
                let caption = if pts.is_empty() || pts.iter().any(has_interval) {
                    name.to_string()
                } else {
                    format!("{name} (no intervals)")
                };
                let caption = (caption.as_str(), darker(*i));
                pvm_panel(panel, Some(caption), axes, &[(*i, *name, pts)], true)?;
            }
            Ok(())
        } else {
            let series: Vec<(usize, &str, &[Prediction])> = drawn
                .iter()
                .map(|(i, name, pts)| (*i, *name, pts.as_slice()))
                .collect();
            pvm_panel(&body, None, axes, &series, false)
        }
    })?;
    write_atomic(path, &svg)
}

/// One predicted-vs-measured panel: guides, intervals, then points (on top of every
/// interval). `small`: a panel of small multiples (smaller text, no legend).
fn pvm_panel(
    area: &Area<'_>,
    caption: Option<(&str, RGBColor)>,
    (lo, hi): (f64, f64),
    series: &[(usize, &str, &[Prediction])],
    small: bool,
) -> DrawResult {
    let mut builder = ChartBuilder::on(area);
    if let Some((text, color)) = caption {
        builder.caption(text, (FONT, PANEL_TITLE_SIZE).into_font().color(&color));
    }
    let (tick, desc) = if small {
        (14, 15)
    } else {
        (TICK_SIZE, AXIS_DESC_SIZE)
    };
    let mut chart = builder
        .margin(if small { 10 } else { 20 })
        .margin_right(if small { 20 } else { 40 })
        .x_label_area_size(if small { 42 } else { 55 })
        .y_label_area_size(if small { 62 } else { 75 })
        .build_cartesian_2d(log_axis(lo, hi), log_axis(lo, hi))?;
    draw_log_mesh(
        &mut chart,
        "measured time (ms)",
        "predicted time (ms)",
        (tick, desc),
    )?;

    // Reference lines: y = x solid, y = 1.25 x and y = 0.75 x dashed, each kept inside the axes.
    chart
        .draw_series(LineSeries::new([(lo, lo), (hi, hi)], GUIDE.stroke_width(2)))?
        .label("y = x")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], GUIDE.stroke_width(2)));
    let dashed = GUIDE.mix(0.8).stroke_width(1);
    chart
        .draw_series(DashedLineSeries::new(
            [(lo, lo * 1.25), (hi / 1.25, hi)],
            6,
            4,
            dashed,
        ))?
        .label("±25 %")
        .legend(move |(x, y)| DashedPathElement::new([(x, y), (x + 20, y)], 6, 4, dashed));
    chart.draw_series(DashedLineSeries::new(
        [(lo / 0.75, lo), (hi, hi * 0.75)],
        6,
        4,
        dashed,
    ))?;

    let clamp = |v: f64| v.clamp(lo, hi);
    let interval_legend = GUIDE.mix(0.4).stroke_width(3);
    let mut interval_entry = false;
    for (i, _, pts) in series {
        let style = PALETTE[i % PALETTE.len()].mix(0.3).stroke_width(1);
        let bars = chart.draw_series(pts.iter().filter(|p| has_interval(p)).map(|p| {
            let x = clamp(p.measured_ms);
            PathElement::new([(x, clamp(p.lo_ms)), (x, clamp(p.hi_ms))], style)
        }))?;
        if !interval_entry && pts.iter().any(has_interval) {
            interval_entry = true;
            bars.label("prediction interval").legend(move |(x, y)| {
                PathElement::new([(x + 10, y - 7), (x + 10, y + 7)], interval_legend)
            });
        }
    }
    let radius = if small { 2 } else { 3 };
    for (i, name, pts) in series {
        let style = series_style(*i, 0.75);
        chart
            .draw_series(
                pts.iter()
                    .map(|p| Circle::new((clamp(p.measured_ms), clamp(p.pred_ms)), radius, style)),
            )?
            .label(*name)
            .legend(move |(x, y)| Circle::new((x + 10, y), 4, style));
    }
    if series.iter().all(|(_, _, pts)| pts.is_empty()) {
        draw_no_data(&mut chart, geo_mid(lo, hi), geo_mid(lo, hi))?;
    }
    if !small {
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
    }
    Ok(())
}

fn has_interval(p: &Prediction) -> bool {
    positive(p.lo_ms) && positive(p.hi_ms) && p.lo_ms < p.hi_ms
}

/// At most `cap` of `pts`, evenly spaced through the slice (first and last kept); the
/// same input always gives the same choice.
fn evenly_spaced<T: Copy>(pts: &[T], cap: usize) -> Vec<T> {
    let n = pts.len();
    if n <= cap {
        return pts.to_vec();
    }
    match cap {
        0 => Vec::new(),
        1 => vec![pts[0]],
        _ => (0..cap).map(|j| pts[j * (n - 1) / (cap - 1)]).collect(),
    }
}

/// Empirical CDF of absolute percentage error per series (x: |pred-true|/true in %, log x axis from 0.1 % to max(1000 %, data)),
/// y: share of predictions 0..1; vertical guide lines at 10, 25, 50 %.
///
/// Series with the same values (e.g. a hybrid whose correction is zero and the analytical
/// model under it) would hide one another: they are drawn as one curve with a combined
/// legend entry ("analytical = hybrid").
///
/// Non-finite and negative values are skipped. Errors below 0.1 % (including exact zeros)
/// count in the CDF and are drawn at the left edge.
pub fn error_cdf(path: &Path, title: &str, series: &[(String, Vec<f64>)]) -> Result<()> {
    const X_MIN: f64 = 0.1;
    let valid = merge_identical(
        series
            .iter()
            .map(|(name, vals)| {
                let mut v: Vec<f64> = vals
                    .iter()
                    .copied()
                    .filter(|v| v.is_finite() && *v >= 0.0)
                    .collect();
                v.sort_by(f64::total_cmp);
                (name.as_str(), v)
            })
            .collect(),
    );
    let data_max = valid
        .iter()
        .filter_map(|(_, _, v)| v.last().copied())
        .fold(0.0_f64, f64::max);
    let x_max = decade_ceil(data_max.max(1000.0)).min(X_MIN * 10f64.powi(MAX_DECADES));
    let empty = valid.iter().all(|(_, _, v)| v.is_empty());

    let svg = render(path, SIZE, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, TITLE_SIZE))
            .margin(20)
            .margin_right(40)
            .x_label_area_size(55)
            .y_label_area_size(75)
            .build_cartesian_2d(log_axis(X_MIN, x_max), 0.0..1.0)?;
        chart
            .configure_mesh()
            .x_desc("absolute error |predicted - measured| / measured (%)")
            .y_desc("share of predictions")
            .x_labels(10)
            .y_labels(11)
            .x_label_formatter(&|v| decade_label(*v))
            .y_label_formatter(&|v| format!("{v:.1}"))
            .label_style((FONT, TICK_SIZE))
            .axis_desc_style((FONT, AXIS_DESC_SIZE))
            .bold_line_style(RGBColor(200, 200, 200))
            .light_line_style(RGBColor(238, 238, 238))
            .draw()?;

        let guide = RGBColor(90, 90, 90);
        for g in [10.0, 25.0, 50.0] {
            chart.draw_series(DashedLineSeries::new(
                [(g, 0.0), (g, 1.0)],
                5,
                5,
                guide.stroke_width(1),
            ))?;
            chart.draw_series(std::iter::once(Text::new(
                format!("{g} %"),
                (g * 1.05, 0.02),
                text_style(POINT_LABEL_SIZE, &guide, HPos::Left, VPos::Bottom),
            )))?;
        }

        for (i, name, vals) in &valid {
            let style = series_style(*i, 1.0).stroke_width(2);
            chart
                .draw_series(LineSeries::new(cdf_path(vals, X_MIN, x_max), style))?
                .label(name.as_str())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], style));
        }
        if empty {
            draw_no_data(&mut chart, geo_mid(X_MIN, x_max), 0.5)?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)
    })?;
    write_atomic(path, &svg)
}

/// Series with the same sorted values (to a relative 1e-9) become one, named "a = b".
/// Each result keeps the index of its first member (its colour, as in the other charts).
fn merge_identical(series: Vec<(&str, Vec<f64>)>) -> Vec<(usize, String, Vec<f64>)> {
    let same = |a: &[f64], b: &[f64]| {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| (x - y).abs() <= 1e-9 * x.abs().max(y.abs()))
    };
    let mut out: Vec<(usize, String, Vec<f64>)> = Vec::new();
    for (i, (name, vals)) in series.into_iter().enumerate() {
        match out.iter_mut().find(|(_, _, v)| same(v, &vals)) {
            Some(group) => {
                group.1.push_str(" = ");
                group.1.push_str(name);
            }
            None => out.push((i, name.to_string(), vals)),
        }
    }
    out
}

/// One measured run of a kernel, for a roofline chart.
#[derive(Debug, Clone, PartialEq)]
pub struct RoofPoint {
    pub kernel: String,
    pub flops: f64,
    pub dram_bytes: f64,
    pub time_ms: f64,
}

/// Billions per second of `amount` done in `time_ms`: GFLOP/s from FLOPs, GB/s from bytes.
pub fn giga_per_s(amount: f64, time_ms: f64) -> f64 {
    amount / (time_ms * 1e-3) / 1e9
}

/// Roofline chart of one GPU, in two panels.
///
/// Top: x = arithmetic intensity (FLOP/byte, log), y = achieved GFLOP/s (log); the DRAM
/// roof min(peak, AI x dram_gbs), the L2 roof if given and the compute ceiling; every run
/// with FLOPs is a point (one colour per kernel) and each kernel gets one label, placed
/// where it overlaps no other label, point or the legend; a label that finds no room is
/// shortened, then dropped (a note under the chart names the unlabelled kernels). Runs with
/// FLOPs and no DRAM bytes (infinite intensity) sit at the right edge.
///
/// Bottom: achieved DRAM bandwidth (GB/s, log) of every run that moves DRAM bytes, one row
/// per kernel, against the DRAM and L2 roofs: kernels with no FLOPs (pure memory kernels),
/// which have no place on a roofline, show here. Runs with neither FLOPs nor bytes are
/// named in the note.
///
/// Runs with a time that is not positive and finite, or negative or non-finite FLOPs or
/// bytes, are skipped. A roof that is not a positive finite number is left out.
pub fn roofline(
    path: &Path,
    title: &str,
    peak_gflops: f64,
    dram_gbs: f64,
    l2_gbs: Option<f64>,
    points: &[RoofPoint],
) -> Result<()> {
    let peak = Some(peak_gflops).filter(|v| positive(*v));
    let dram = Some(dram_gbs).filter(|v| positive(*v));
    let l2 = l2_gbs.filter(|v| positive(*v));
    let (mut roof_pts, bw_pts, nothing) = roofline_points(points);
    let axes = roofline_axes((peak, dram, l2), &roof_pts);

    // Bandwidth rows, highest median first, at most MAX_BANDWIDTH_ROWS of them.
    let mut rows: Vec<(&str, Vec<f64>, bool)> = bw_pts
        .into_iter()
        .map(|(k, (v, has_flops))| (k, v, has_flops))
        .collect();
    rows.sort_by(|a, b| median(&b.1).total_cmp(&median(&a.1)).then(a.0.cmp(b.0)));
    let rows_left_out = rows.len().saturating_sub(MAX_BANDWIDTH_ROWS);
    rows.truncate(MAX_BANDWIDTH_ROWS);

    let (runs_drawn, runs_total) = thin_roofline_points(&mut roof_pts, &mut rows);
    let mut notes = roofline_notes((runs_drawn, runs_total), &roof_pts, &nothing, rows_left_out);
    // One line more for the labels dropped, which are only known once the top panel is drawn.
    let footer = 10 + (notes.len() as u32 + 1) * (NOTE_SIZE + 8);
    let roof_height = SIZE.1;
    let bw_height = if rows.is_empty() {
        0
    } else {
        // At least four rows high: the key beside the plot has up to four entries.
        130 + 24 * rows.len().max(4) as u32
    };
    let size = (SIZE.0, roof_height + bw_height + footer);

    let svg = render(path, size, |root| {
        let (top, rest) = root.split_vertically(roof_height);
        let (bottom, foot) = rest.split_vertically(bw_height);
        let unlabelled = roof_panel(&top, title, (peak, dram, l2), axes, &roof_pts)?;
        if !rows.is_empty() {
            bandwidth_panel(&bottom, (dram, l2), &rows)?;
        }
        notes.push(if unlabelled.is_empty() {
            "every kernel on the roofline is labelled".to_string()
        } else {
            format!(
                "unlabelled on the roofline (no room): {}",
                unlabelled.join(", ")
            )
        });
        draw_notes(&foot, &notes, HPos::Left)
    })?;
    write_atomic(path, &svg)
}

/// Per kernel of [`roofline`] (by name): (intensity or None when infinite, GFLOP/s).
type RoofPoints<'a> = BTreeMap<&'a str, Vec<(Option<f64>, f64)>>;
/// Per kernel of [`roofline`] (by name): GB/s, and whether the kernel has FLOPs.
type BandwidthPoints<'a> = BTreeMap<&'a str, (Vec<f64>, bool)>;

/// The usable runs of `points`, per kernel: (intensity or None when infinite, GFLOP/s)
/// of the runs with FLOPs; GB/s of the runs with DRAM bytes, and whether the kernel has
/// FLOPs; and the kernels drawn in neither panel (sorted).
fn roofline_points(points: &[RoofPoint]) -> (RoofPoints<'_>, BandwidthPoints<'_>, Vec<&str>) {
    let usable = |p: &&RoofPoint| {
        positive(p.time_ms)
            && p.flops.is_finite()
            && p.flops >= 0.0
            && p.dram_bytes.is_finite()
            && p.dram_bytes >= 0.0
    };
    let mut roof_pts: RoofPoints = BTreeMap::new();
    let mut bw_pts: BandwidthPoints = BTreeMap::new();
    let mut nothing: Vec<&str> = Vec::new();
    for p in points.iter().filter(usable) {
        let gflops = giga_per_s(p.flops, p.time_ms);
        let gbs = giga_per_s(p.dram_bytes, p.time_ms);
        if positive(gflops) {
            let ai = Some(arithmetic_intensity(p.flops, p.dram_bytes)).filter(|a| positive(*a));
            roof_pts.entry(&p.kernel).or_default().push((ai, gflops));
        }
        if positive(gbs) {
            let e = bw_pts.entry(&p.kernel).or_default();
            e.0.push(gbs);
            e.1 |= positive(gflops);
        }
        if !positive(gflops) && !positive(gbs) {
            nothing.push(&p.kernel);
        }
    }
    nothing.sort();
    nothing.dedup();
    nothing.retain(|k| !roof_pts.contains_key(k) && !bw_pts.contains_key(k));
    (roof_pts, bw_pts, nothing)
}

/// The roofline panel's axes ((x_lo, x_hi), (y_lo, y_hi)): whole decades around the
/// points, the ridge points and the roofs.
fn roofline_axes(
    (peak, dram, l2): (Option<f64>, Option<f64>, Option<f64>),
    roof_pts: &RoofPoints,
) -> ((f64, f64), (f64, f64)) {
    // Ridge points (where a bandwidth roof meets the compute ceiling).
    let ridge = |bw: Option<f64>| match (peak, bw) {
        (Some(p), Some(b)) => Some(p / b),
        _ => None,
    };
    let (ridge_dram, ridge_l2) = (ridge(dram), ridge(l2));
    let anchor = ridge_dram.or(ridge_l2);
    let finite_ai = || roof_pts.values().flatten().filter_map(|p| p.0);
    let (x_lo, x_hi) = decade_range(
        finite_ai()
            .chain(ridge_dram)
            .chain(ridge_l2)
            .chain(anchor.map(|r| r / 100.0))
            .chain(anchor.map(|r| r * 100.0)),
    )
    .unwrap_or((0.01, 10_000.0));
    // Bandwidth roofs at the left edge set the bottom of the y axis, the peak the top.
    let (y_lo, y_hi) = decade_range(
        roof_pts
            .values()
            .flatten()
            .map(|p| p.1)
            .chain(peak.map(|p| p * 2.0))
            .chain(dram.map(|b| b * x_lo))
            .chain(l2.map(|b| b * x_lo)),
    )
    .unwrap_or((1.0, 1e6));
    ((x_lo, x_hi), (y_lo, y_hi))
}

/// Keep at most MAX_DRAWN_PER_PANEL runs in each panel, shared evenly among its kernels
/// and spread over each kernel's range (sorted, ends kept), so the axes do not change;
/// returns (runs kept, runs before).
fn thin_roofline_points(
    roof_pts: &mut RoofPoints,
    rows: &mut [(&str, Vec<f64>, bool)],
) -> (usize, usize) {
    let runs_total: usize = roof_pts.values().map(Vec::len).sum::<usize>()
        + rows.iter().map(|r| r.1.len()).sum::<usize>();
    let per_kernel = |kernels: usize| (MAX_DRAWN_PER_PANEL / kernels.max(1)).max(1);
    let roof_cap = per_kernel(roof_pts.len());
    for pts in roof_pts.values_mut() {
        pts.sort_by(|a, b| a.1.total_cmp(&b.1));
        *pts = evenly_spaced(pts, roof_cap);
    }
    let row_cap = per_kernel(rows.len());
    for r in rows.iter_mut() {
        r.1.sort_by(f64::total_cmp);
        r.1 = evenly_spaced(&r.1, row_cap);
    }
    let runs_drawn: usize = roof_pts.values().map(Vec::len).sum::<usize>()
        + rows.iter().map(|r| r.1.len()).sum::<usize>();
    (runs_drawn, runs_total)
}

/// The notes under the roofline chart: points not drawn, kernels at the right edge,
/// kernels in neither panel, bandwidth rows not shown.
fn roofline_notes(
    (runs_drawn, runs_total): (usize, usize),
    roof_pts: &RoofPoints,
    nothing: &[&str],
    rows_left_out: usize,
) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    if runs_drawn < runs_total {
        notes.push(format!(
            "drawn: {} of {} points, evenly spaced within each kernel",
            thousands(runs_drawn as u64),
            thousands(runs_total as u64)
        ));
    }
    let compute_only: Vec<&str> = roof_pts
        .iter()
        .filter(|(_, v)| v.iter().any(|p| p.0.is_none()))
        .map(|(k, _)| *k)
        .collect();
    if !compute_only.is_empty() {
        notes.push(format!(
            "at the right edge (FLOPs, no DRAM bytes): {}",
            compute_only.join(", ")
        ));
    }
    if !nothing.is_empty() {
        notes.push(format!(
            "not drawn (neither FLOPs nor DRAM bytes): {}",
            nothing.join(", ")
        ));
    }
    if rows_left_out > 0 {
        notes.push(format!(
            "bandwidth panel: {rows_left_out} more kernels with lower bandwidth not shown"
        ));
    }
    notes
}

/// The top panel of [`roofline`]; returns the kernels whose label found no room.
#[allow(clippy::type_complexity)]
fn roof_panel(
    area: &Area<'_>,
    title: &str,
    roofs: (Option<f64>, Option<f64>, Option<f64>),
    axes: ((f64, f64), (f64, f64)),
    kernels: &BTreeMap<&str, Vec<(Option<f64>, f64)>>,
) -> std::result::Result<Vec<String>, DrawingAreaErrorKind<std::io::Error>> {
    let ((x_lo, x_hi), (y_lo, y_hi)) = axes;
    let mut chart = roofline_chart(area, (title, TITLE_SIZE), axes)?;
    draw_log_mesh(
        &mut chart,
        "arithmetic intensity (FLOP/byte)",
        "achieved GFLOP/s",
        (TICK_SIZE, AXIS_DESC_SIZE),
    )?;
    let legend_texts = draw_roofs(&mut chart, roofs, axes)?;

    // Points of each kernel, highest achieved first (the first is its preferred label anchor).
    let placed_pts: Vec<(&str, Vec<(f64, f64)>)> = kernels
        .iter()
        .map(|(k, pts)| {
            let mut v: Vec<(f64, f64)> = pts
                .iter()
                .map(|&(ai, achieved)| {
                    (
                        ai.map_or(x_hi, |a| a.clamp(x_lo, x_hi)),
                        achieved.clamp(y_lo, y_hi),
                    )
                })
                .collect();
            v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.total_cmp(&b.0)));
            (*k, v)
        })
        .collect();
    for (i, (_, pts)) in placed_pts.iter().enumerate() {
        let style = series_style(i, 0.9);
        chart.draw_series(pts.iter().map(|p| Circle::new(*p, 4, style)))?;
    }
    let dropped = draw_point_labels(&mut chart, &placed_pts, &legend_texts, &|i| i)?;
    if kernels.is_empty() {
        draw_no_data(&mut chart, geo_mid(x_lo, x_hi), geo_mid(y_lo, y_hi))?;
    }
    if !legend_texts.is_empty() {
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
    }
    Ok(dropped
        .into_iter()
        .map(|i| placed_pts[i].0.to_string())
        .collect())
}

/// Draw the compute peak and the DRAM and L2 roofs that are known, each with its
/// legend entry; returns the legend texts.
fn draw_roofs(
    chart: &mut LogLogChart<'_>,
    (peak, dram, l2): (Option<f64>, Option<f64>, Option<f64>),
    ((x_lo, x_hi), (y_lo, y_hi)): ((f64, f64), (f64, f64)),
) -> std::result::Result<Vec<String>, DrawingAreaErrorKind<std::io::Error>> {
    let roof = |bw: f64| roof_line(bw, peak, ((x_lo, x_hi), (y_lo, y_hi)));
    let mut legend_texts = Vec::new();
    if let Some(p) = peak {
        let style = COMPUTE_COLOR.stroke_width(2);
        let text = format!("compute peak ({} GFLOP/s)", number(p));
        chart
            .draw_series(LineSeries::new([(x_lo, p), (x_hi, p)], style))?
            .label(&text)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], style));
        legend_texts.push(text);
    }
    if let Some(b) = dram {
        let style = DRAM_COLOR.stroke_width(2);
        let text = format!("DRAM roof ({} GB/s)", number(b));
        chart
            .draw_series(LineSeries::new(roof(b), style))?
            .label(&text)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], style));
        legend_texts.push(text);
    }
    if let Some(b) = l2 {
        let style = L2_COLOR.stroke_width(2);
        let text = format!("L2 roof ({} GB/s)", number(b));
        chart
            .draw_series(DashedLineSeries::new(roof(b), 8, 5, style))?
            .label(&text)
            .legend(move |(x, y)| DashedPathElement::new([(x, y), (x + 20, y)], 8, 5, style));
        legend_texts.push(text);
    }
    Ok(legend_texts)
}

/// A bandwidth roof on log-log axes: y = intensity x `bw` up to the ridge with `peak`
/// (or the right edge), clipped to the axes; empty when it lies outside them.
fn roof_line(
    bw: f64,
    peak: Option<f64>,
    ((x_lo, x_hi), (y_lo, y_hi)): ((f64, f64), (f64, f64)),
) -> Vec<(f64, f64)> {
    let x_end = peak.map_or(x_hi, |p| (p / bw).min(x_hi));
    let x_start = x_lo.max(y_lo / bw);
    if x_start >= x_end {
        return Vec::new();
    }
    vec![(x_start, x_start * bw), (x_end, (x_end * bw).min(y_hi))]
}

/// Instruction roofline chart of one GPU ([`crate::features::instruction`]), in two
/// panels: global memory (L1, L2 and DRAM points and ceilings, with the global access
/// walls) above, shared memory (with the bank-conflict walls) below. x = warp
/// instructions per 32-byte transaction, y = warp GIPS (log-log); the issue ceiling
/// (peak GIPS) is horizontal, each level's ceiling is its transactions per second times
/// the intensity. A kernel has one colour and one label, a marker per level (circle
/// L1 and shared, triangle L2, square DRAM) and, where it has thread instructions, a
/// cross at thread instructions / warp size joined to its marker by a line (thread
/// predication: the two meet when no lane is ever predicated off). A note names the
/// kernels whose label found no room.
pub fn instruction_roofline(
    path: &Path,
    title: &str,
    ceilings: &crate::features::instruction::Ceilings,
    points: &[crate::features::instruction::Point],
) -> Result<()> {
    use crate::features::instruction::{Level, GLOBAL_WALLS, SHARED_WALLS};
    let mut kernels: Vec<&str> = points.iter().map(|p| p.kernel.as_str()).collect();
    kernels.sort();
    kernels.dedup();
    let clock = if ceilings.clock_measured {
        "measured clock"
    } else {
        "boost clock"
    };
    let mut notes = vec![
        format!(
            "peak {} GIPS = {} SMs x 4 schedulers x 1 warp instruction per clock x {:.3} GHz ({clock})",
            number(ceilings.gips),
            ceilings.sm_count,
            ceilings.clock_mhz / 1e3
        ),
        "ceilings: GB/s / 32 = G transactions/s; measured: the catalog's measured figure".to_string(),
        "one point per kernel and level: the kernel's profiled run with the most warp instructions".to_string(),
    ];
    let footer = 10 + (notes.len() as u32 + 1) * (NOTE_SIZE + 8);
    let size = (SIZE.0 + INSTRUCTION_KEY_WIDTH as u32, 2 * SIZE.1 + footer);
    let global: Vec<&crate::features::instruction::Point> =
        points.iter().filter(|p| p.level != Level::Shared).collect();
    let shared: Vec<&crate::features::instruction::Point> =
        points.iter().filter(|p| p.level == Level::Shared).collect();
    let svg = render(path, size, |root| {
        let (top, rest) = root.split_vertically(SIZE.1);
        let (bottom, foot) = rest.split_vertically(SIZE.1);
        let mut unlabelled = instruction_panel(
            &top,
            &format!("{title}: global memory"),
            ceilings,
            (&[Level::L1, Level::L2, Level::Dram], &GLOBAL_WALLS),
            &kernels,
            &global,
        )?;
        unlabelled.extend(instruction_panel(
            &bottom,
            &format!("{title}: shared memory"),
            ceilings,
            (&[Level::Shared], &SHARED_WALLS),
            &kernels,
            &shared,
        )?);
        unlabelled.sort();
        unlabelled.dedup();
        notes.push(if unlabelled.is_empty() {
            "every kernel is labelled".to_string()
        } else {
            format!("unlabelled (no room): {}", unlabelled.join(", "))
        });
        draw_notes(&foot, &notes, HPos::Left)
    })?;
    write_atomic(path, &svg)
}

/// One panel of [`instruction_roofline`]: the ceilings of `levels`, the `walls`, the
/// points; `kernels` (sorted, all panels') gives each kernel its colour. Returns the
/// kernels whose label found no room.
fn instruction_panel(
    area: &Area<'_>,
    title: &str,
    ceilings: &crate::features::instruction::Ceilings,
    (levels, walls): (
        &[crate::features::instruction::Level],
        &[crate::features::instruction::Wall],
    ),
    kernels: &[&str],
    points: &[&crate::features::instruction::Point],
) -> std::result::Result<Vec<String>, DrawingAreaErrorKind<std::io::Error>> {
    use crate::features::instruction::Level;
    let peak = Some(ceilings.gips).filter(|v| positive(*v));
    let bws: Vec<&crate::features::instruction::Ceiling> = levels
        .iter()
        .filter_map(|l| ceilings.of(*l))
        .filter(|c| positive(c.gtxn_per_s))
        .collect();
    let usable = |x: f64, y: f64| positive(x) && positive(y);
    let pts: Vec<&&crate::features::instruction::Point> = points
        .iter()
        .filter(|p| usable(p.intensity, p.gips))
        .collect();
    let threads = || {
        pts.iter()
            .filter_map(|p| p.thread)
            .filter(|t| usable(t.0, t.1))
    };
    let (x_lo, x_hi) = decade_range(
        pts.iter()
            .map(|p| p.intensity)
            .chain(threads().map(|t| t.0))
            .chain(walls.iter().map(|w| w.intensity() / 2.0))
            .chain(
                bws.iter()
                    .filter_map(|c| peak.map(|p| p / c.gtxn_per_s * 10.0)),
            ),
    )
    .unwrap_or((0.01, 100.0));
    let (y_lo, y_hi) = decade_range(
        pts.iter()
            .map(|p| p.gips)
            .chain(threads().map(|t| t.1))
            .chain(peak.map(|p| p * 2.0))
            .chain(bws.iter().map(|c| c.gtxn_per_s * x_lo)),
    )
    .unwrap_or((0.01, 1e4));
    let axes = ((x_lo, x_hi), (y_lo, y_hi));
    // The key sits right of the plot: inside, it would cover points.
    let (w, _) = area.dim_in_pixel();
    let (plot_area, key_area) = area.split_horizontally(w as i32 - INSTRUCTION_KEY_WIDTH);
    let mut chart = roofline_chart(&plot_area, (title, PANEL_TITLE_SIZE), axes)?;
    draw_log_mesh(
        &mut chart,
        "instruction intensity (warp instructions per 32-byte transaction)",
        "warp GIPS (10^9 warp instructions / s)",
        (TICK_SIZE, AXIS_DESC_SIZE),
    )?;
    // Walls: dashed verticals, named at the bottom, each name a line higher than the
    // last (walls a factor of 4 apart would overlap).
    for (i, w) in walls.iter().enumerate() {
        let x = w.intensity();
        if !(x_lo..=x_hi).contains(&x) {
            continue;
        }
        chart.draw_series(DashedLineSeries::new(
            [(x, y_lo), (x, y_hi)],
            4,
            4,
            GUIDE.mix(0.6).stroke_width(1),
        ))?;
        let style = text_style(POINT_LABEL_SIZE, &GUIDE, HPos::Left, VPos::Bottom);
        chart.draw_series(std::iter::once(
            EmptyElement::at((x, y_lo))
                + Text::new(
                    format!("{} wall", w.name),
                    (4, -6 - (POINT_LABEL_SIZE as i32 + 4) * i as i32),
                    style,
                ),
        ))?;
    }
    let mut key: Vec<(Key, String)> = Vec::new();
    if let Some(p) = peak {
        chart.draw_series(LineSeries::new(
            [(x_lo, p), (x_hi, p)],
            COMPUTE_COLOR.stroke_width(2),
        ))?;
        key.push((
            Key::Line(COMPUTE_COLOR, false),
            format!("peak issue ({} GIPS)", number(p)),
        ));
    }
    for c in &bws {
        let color = match c.level {
            Level::Dram => DRAM_COLOR,
            Level::L2 => L2_COLOR,
            Level::L1 | Level::Shared => MEMORY_ONLY_COLOR,
        };
        chart.draw_series(LineSeries::new(
            roof_line(c.gtxn_per_s, peak, axes),
            color.stroke_width(2),
        ))?;
        key.push((
            Key::Line(color, false),
            format!(
                "{} ceiling ({} GTXN/s, {})",
                c.level.name(),
                number(c.gtxn_per_s),
                if c.measured { "measured" } else { "catalog" }
            ),
        ));
    }
    let clamp = |(x, y): (f64, f64)| (x.clamp(x_lo, x_hi), y.clamp(y_lo, y_hi));
    let colour = |k: &str| kernels.iter().position(|x| *x == k).unwrap_or(0);
    for p in &pts {
        let i = colour(&p.kernel);
        let at = clamp((p.intensity, p.gips));
        let style = PALETTE[i % PALETTE.len()].mix(0.9);
        if let Some(t) = p.thread.filter(|t| usable(t.0, t.1)) {
            let to = clamp(t);
            chart.draw_series(std::iter::once(PathElement::new(
                [at, to],
                style.stroke_width(1),
            )))?;
            chart.draw_series(std::iter::once(Cross::new(to, 4, style.stroke_width(2))))?;
        }
        match p.level {
            Level::L2 => {
                chart.draw_series(std::iter::once(TriangleMarker::new(at, 6, style.filled())))?;
            }
            Level::Dram => {
                chart.draw_series(std::iter::once(
                    EmptyElement::at(at) + Rectangle::new([(-4, -4), (4, 4)], style.filled()),
                ))?;
            }
            Level::L1 | Level::Shared => {
                chart.draw_series(std::iter::once(Circle::new(at, 4, style.filled())))?;
            }
        }
    }
    for l in levels.iter().filter(|l| pts.iter().any(|p| p.level == **l)) {
        let mark = match l {
            Level::L2 => Key::Triangle,
            Level::Dram => Key::Square,
            Level::L1 | Level::Shared => Key::Dot(INK.filled()),
        };
        key.push((mark, format!("{} point", l.name())));
    }
    if pts.iter().any(|p| p.thread.is_some()) {
        key.push((Key::Cross, "thread instructions / 32".to_string()));
    }
    // One label per kernel, anchored at its points (highest GIPS first).
    let mut by_kernel: BTreeMap<&str, Vec<(f64, f64)>> = BTreeMap::new();
    for p in &pts {
        by_kernel
            .entry(&p.kernel)
            .or_default()
            .push(clamp((p.intensity, p.gips)));
    }
    let placed_pts: Vec<(&str, Vec<(f64, f64)>)> = kernels
        .iter()
        .filter_map(|k| by_kernel.remove(k).map(|v| (*k, v)))
        .collect();
    // (labels take the kernel's colour: index by the kernel, not by the row)
    let dropped = draw_point_labels(&mut chart, &placed_pts, &[], &|i| colour(placed_pts[i].0))?;
    if pts.is_empty() {
        draw_no_data(&mut chart, geo_mid(x_lo, x_hi), geo_mid(y_lo, y_hi))?;
    }
    let (_, y_range) = chart.plotting_area().get_pixel_range();
    draw_key(&key_area, y_range.start - area.get_base_pixel().1 + 4, &key)?;
    Ok(dropped
        .into_iter()
        .map(|i| placed_pts[i].0.to_string())
        .collect())
}

/// Label each kernel's points (`placed_pts`, in axis units) where the label is clear
/// of every point, other labels and the legend; returns the indices of the kernels
/// whose label found no room.
fn draw_point_labels(
    chart: &mut LogLogChart<'_>,
    placed_pts: &[(&str, Vec<(f64, f64)>)],
    legend_texts: &[String],
    colour_of: &dyn Fn(usize) -> usize,
) -> std::result::Result<Vec<usize>, DrawingAreaErrorKind<std::io::Error>> {
    let (xr, yr) = chart.plotting_area().get_pixel_range();
    let area_px = (xr.start, yr.start, xr.end, yr.end);
    let mut obstacles: Vec<Rect> = placed_pts
        .iter()
        .flat_map(|(_, pts)| pts.iter())
        .map(|p| {
            let (x, y) = chart.backend_coord(p);
            (x - 5, y - 5, x + 5, y + 5)
        })
        .collect();
    if !legend_texts.is_empty() {
        obstacles.push(legend_box(area_px, legend_texts));
    }
    let specs: Vec<LabelSpec> = placed_pts
        .iter()
        .map(|(k, pts)| LabelSpec {
            text: shorten(k, MAX_POINT_LABEL),
            anchors: pts.iter().map(|p| chart.backend_coord(p)).collect(),
        })
        .collect();
    let (labels, dropped) = place_labels(&specs, area_px, &obstacles, POINT_LABEL_SIZE);
    for l in &labels {
        let kernel = l.spec;
        let at = placed_pts[kernel].1[l.anchor];
        let colour = colour_of(kernel);
        let leader = PALETTE[colour % PALETTE.len()].stroke_width(1);
        if l.offset.1 != 0 {
            chart.draw_series(std::iter::once(
                EmptyElement::at(at) + PathElement::new([(0, 0), l.offset], leader),
            ))?;
        }
        let h = if l.offset.0 < 0 {
            HPos::Right
        } else {
            HPos::Left
        };
        let style = text_style(POINT_LABEL_SIZE, &darker(colour), h, VPos::Center);
        chart.draw_series(std::iter::once(
            EmptyElement::at(at) + Text::new(l.text.clone(), l.offset, style),
        ))?;
    }
    Ok(dropped)
}

/// The bottom panel of [`roofline`]: one row per kernel (highest median bandwidth on top),
/// each run a point at its achieved DRAM GB/s, the DRAM and L2 roofs as vertical lines.
/// The key sits right of the plot: inside, it would cover some row's points.
fn bandwidth_panel(
    area: &Area<'_>,
    (dram, l2): (Option<f64>, Option<f64>),
    rows: &[(&str, Vec<f64>, bool)],
) -> DrawResult {
    let (x_lo, x_hi) = decade_range(
        rows.iter()
            .flat_map(|r| r.1.iter().copied())
            .chain(dram)
            .chain(l2),
    )
    .unwrap_or((1.0, 1e4));
    let n = rows.len() as i32;
    // Row r of the list is drawn in segment n-1-r, so that the first row is on top. One
    // row still gets a two-segment axis: plotters maps a one-value integer range wrongly.
    let at_row = |r: usize| SegmentValue::CenterOf(n - 1 - r as i32);
    let names: Vec<String> = rows.iter().map(|r| shorten(r.0, MAX_POINT_LABEL)).collect();
    let longest = names.iter().map(|s| s.chars().count()).max().unwrap_or(0);
    let label_area = (text_width_px(longest, TICK_SIZE) + 20).clamp(60, 320);

    let mut key: Vec<(Key, String)> = Vec::new();
    if let Some(b) = dram {
        key.push((
            Key::Line(DRAM_COLOR, false),
            format!("DRAM roof ({} GB/s)", number(b)),
        ));
    }
    if let Some(b) = l2 {
        key.push((
            Key::Line(L2_COLOR, true),
            format!("L2 roof ({} GB/s)", number(b)),
        ));
    }
    let flops_style = INK.mix(0.8).filled();
    let memory_style = MEMORY_ONLY_COLOR.mix(0.9).filled();
    if rows.iter().any(|r| r.2) {
        key.push((Key::Dot(flops_style), "kernel with FLOPs".to_string()));
    }
    if rows.iter().any(|r| !r.2) {
        key.push((Key::Dot(memory_style), "kernel without FLOPs".to_string()));
    }
    let key_width = key
        .iter()
        .map(|(_, t)| text_width_px(t.chars().count(), LEGEND_SIZE))
        .max()
        .unwrap_or(0)
        + 50;
    let (w, _) = area.dim_in_pixel();
    let (plot_area, key_area) = area.split_horizontally(w as i32 - key_width);

    let mut chart = ChartBuilder::on(&plot_area)
        .caption(
            "achieved DRAM bandwidth per kernel",
            (FONT, PANEL_TITLE_SIZE),
        )
        .margin(20)
        .margin_right(10)
        .x_label_area_size(55)
        .y_label_area_size(label_area as u32)
        .build_cartesian_2d(log_axis(x_lo, x_hi), (0..(n - 1).max(1)).into_segmented())?;
    let row_name = |v: &SegmentValue<i32>| match v {
        SegmentValue::CenterOf(i) if (0..n).contains(i) => names[(n - 1 - i) as usize].clone(),
        _ => String::new(),
    };
    chart
        .configure_mesh()
        .x_desc("achieved DRAM bandwidth (GB/s): DRAM bytes / time")
        .x_labels(10)
        .y_labels(rows.len().max(2))
        .x_label_formatter(&|v| decade_label(*v))
        .y_label_formatter(&row_name)
        .label_style((FONT, TICK_SIZE))
        .axis_desc_style((FONT, AXIS_DESC_SIZE))
        .bold_line_style(RGBColor(215, 215, 215))
        .light_line_style(RGBColor(242, 242, 242))
        .draw()?;

    let span = |x: f64| [(x, SegmentValue::Exact(0)), (x, SegmentValue::Last)];
    if let Some(b) = dram {
        chart.draw_series(LineSeries::new(span(b), DRAM_COLOR.stroke_width(2)))?;
    }
    if let Some(b) = l2 {
        chart.draw_series(DashedLineSeries::new(
            span(b),
            8,
            5,
            L2_COLOR.stroke_width(2),
        ))?;
    }
    let clamp = |v: f64| v.clamp(x_lo, x_hi);
    let range_style = RGBColor(150, 150, 150).stroke_width(1);
    chart.draw_series(
        rows.iter()
            .enumerate()
            .filter(|(_, r)| r.1.len() > 1)
            .map(|(i, r)| {
                let (lo, hi) = r.1.iter().fold((f64::INFINITY, 0.0_f64), |(lo, hi), v| {
                    (lo.min(*v), hi.max(*v))
                });
                PathElement::new(
                    [(clamp(lo), at_row(i)), (clamp(hi), at_row(i))],
                    range_style,
                )
            }),
    )?;
    chart.draw_series(rows.iter().enumerate().flat_map(|(i, r)| {
        let style = if r.2 { flops_style } else { memory_style };
        r.1.iter()
            .map(move |v| Circle::new((clamp(*v), at_row(i)), 4, style))
    }))?;

    // The key, level with the top of the plotting area.
    let (_, y_range) = chart.plotting_area().get_pixel_range();
    let top = y_range.start - area.get_base_pixel().1 + 4;
    draw_key(&key_area, top, &key)
}

/// A mark in a hand-drawn key: a line (dashed or not), a dot, or the instruction
/// roofline's triangle, square and cross (in ink).
enum Key {
    Line(RGBColor, bool),
    Dot(ShapeStyle),
    Triangle,
    Square,
    Cross,
}

/// Draws a key: one entry per line from `top` (pixels from the area's top edge).
fn draw_key(area: &Area<'_>, top: i32, entries: &[(Key, String)]) -> DrawResult {
    let step = LEGEND_SIZE as i32 + 8;
    for (i, (mark, text)) in entries.iter().enumerate() {
        let y = top + i as i32 * step + step / 2;
        match mark {
            Key::Line(color, false) => {
                area.draw(&PathElement::new([(4, y), (28, y)], color.stroke_width(2)))?
            }
            Key::Line(color, true) => area.draw(&DashedPathElement::new(
                [(4, y), (28, y)],
                8,
                5,
                color.stroke_width(2),
            ))?,
            Key::Dot(style) => area.draw(&Circle::new((16, y), 4, *style))?,
            Key::Triangle => area.draw(&TriangleMarker::new((16, y), 6, INK.filled()))?,
            Key::Square => area.draw(&Rectangle::new([(12, y - 4), (20, y + 4)], INK.filled()))?,
            Key::Cross => area.draw(&Cross::new((16, y), 4, INK.stroke_width(2)))?,
        }
        let style = text_style(LEGEND_SIZE, &BLACK, HPos::Left, VPos::Center);
        area.draw(&Text::new(text.clone(), (36, y), style))?;
    }
    Ok(())
}

/// Series colour `i`, darkened so that text in it reads on white.
fn darker(i: usize) -> RGBColor {
    let RGBColor(r, g, b) = PALETTE[i % PALETTE.len()];
    let dim = |c: u8| (f64::from(c) * 0.7) as u8;
    RGBColor(dim(r), dim(g), dim(b))
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => s[n / 2],
        n => 0.5 * (s[n / 2 - 1] + s[n / 2]),
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers.

/// Renders a chart into an SVG string; `draw` gets the whole canvas, already cleared to white.
fn render<F>(path: &Path, size: (u32, u32), draw: F) -> Result<String>
where
    F: FnOnce(&Area<'_>) -> DrawResult,
{
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| render_error(path, e))?;
        draw(&root).map_err(|e| render_error(path, e))?;
        root.present().map_err(|e| render_error(path, e))?;
    }
    Ok(svg)
}

type DrawResult = std::result::Result<(), DrawingAreaErrorKind<std::io::Error>>;

fn render_error(path: &Path, e: impl Display) -> Error {
    Error::file(path.display(), format!("cannot render chart: {e}"))
}

/// Height of a chart header holding the title and `notes`, one line each.
fn header_height(notes: &[String]) -> u32 {
    16 + TITLE_SIZE + notes.len() as u32 * (NOTE_SIZE + 8)
}

/// Draws the title and notes at the top of `root` and returns the area below them.
fn draw_header<'a>(
    root: &Area<'a>,
    title: &str,
    notes: &[String],
    height: u32,
) -> std::result::Result<Area<'a>, DrawingAreaErrorKind<std::io::Error>> {
    let (head, body) = root.split_vertically(height);
    let (w, _) = head.dim_in_pixel();
    // A long title gets a smaller font, and is cut at the smallest one if still too long.
    let room = f64::from(w) - 40.0;
    let size = [TITLE_SIZE, 24, 20]
        .into_iter()
        .find(|s| title.chars().count() as f64 * char_width_px(*s) <= room)
        .unwrap_or(20);
    let title = shorten(title, (room / char_width_px(size)) as usize);
    let title_style = text_style(size, &BLACK, HPos::Center, VPos::Top);
    head.draw(&Text::new(title, (w as i32 / 2, 10), title_style))?;
    let (_, notes_area) = head.split_vertically(14 + TITLE_SIZE);
    draw_notes(&notes_area, notes, HPos::Center)?;
    Ok(body)
}

/// One line per note in a smaller grey font, each cut to the area's width.
fn draw_notes(area: &Area<'_>, notes: &[String], h: HPos) -> DrawResult {
    let (w, _) = area.dim_in_pixel();
    let max_chars = ((f64::from(w) - 40.0) / char_width_px(NOTE_SIZE)).max(10.0) as usize;
    let x = match h {
        HPos::Left => 20,
        HPos::Center => w as i32 / 2,
        HPos::Right => w as i32 - 20,
    };
    for (i, note) in notes.iter().enumerate() {
        let style = text_style(NOTE_SIZE, &RGBColor(80, 80, 80), h, VPos::Top);
        let y = 4 + i as i32 * (NOTE_SIZE as i32 + 8);
        area.draw(&Text::new(shorten(note, max_chars), (x, y), style))?;
    }
    Ok(())
}

/// A box in pixels: (left, top, right, bottom).
type Rect = (i32, i32, i32, i32);

fn overlaps(a: &Rect, b: &Rect) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

fn inside(r: &Rect, area: &Rect) -> bool {
    r.0 >= area.0 && r.1 >= area.1 && r.2 <= area.2 && r.3 <= area.3
}

/// Width of one character, estimated generously (the SVG viewer picks the font; plotters
/// writes font-size = size / 1.24).
fn char_width_px(size: u32) -> f64 {
    f64::from(size) / 1.24 * 0.6
}

fn text_width_px(chars: usize, size: u32) -> i32 {
    (chars as f64 * char_width_px(size)).ceil() as i32
}

/// The box plotters' series legend takes in the upper left corner of the plotting area
/// (margin 12), estimated from its entries' texts.
fn legend_box(plot: Rect, texts: &[String]) -> Rect {
    let longest = texts.iter().map(|t| t.chars().count()).max().unwrap_or(0);
    let width = text_width_px(longest, LEGEND_SIZE) + 50;
    let height = texts.len() as i32 * (LEGEND_SIZE as i32 + 8) + 16;
    (plot.0, plot.1, plot.0 + 12 + width, plot.1 + 12 + height)
}

/// A label to place: its text and the pixel points it may be attached to, best first.
struct LabelSpec {
    text: String,
    anchors: Vec<(i32, i32)>,
}

/// A placed label: which spec and which of its anchors, the text actually drawn (perhaps
/// shortened), the text anchor's offset from the point in pixels (negative x: the text
/// ends left of the point) and the box it covers.
#[derive(Debug)]
struct PlacedLabel {
    spec: usize,
    anchor: usize,
    text: String,
    offset: (i32, i32),
    rect: Rect,
}

/// Places each label beside one of its anchors: right of it, else left, on the anchor's
/// line, else up to three lines above or below (drawn with a leader line). A position is
/// taken only if the label's box lies inside `area` and overlaps no obstacle (points,
/// legend) and no label placed before it. A label with no such position at full length
/// is tried again shortened to [`SHORT_POINT_LABEL`] characters; failing that it is
/// dropped. Returns the placed labels and the indices of the dropped specs.
fn place_labels(
    specs: &[LabelSpec],
    area: Rect,
    obstacles: &[Rect],
    font_size: u32,
) -> (Vec<PlacedLabel>, Vec<usize>) {
    let line = (f64::from(font_size) / 1.24 * 1.25).ceil() as i32;
    let gap = 7;
    let mut placed: Vec<PlacedLabel> = Vec::new();
    let mut dropped = Vec::new();
    for (s, spec) in specs.iter().enumerate() {
        let short = shorten(&spec.text, SHORT_POINT_LABEL);
        let variants = if short == spec.text {
            vec![spec.text.clone()]
        } else {
            vec![spec.text.clone(), short]
        };
        let found = variants.into_iter().find_map(|text| {
            let width = text_width_px(text.chars().count(), font_size);
            spec.anchors.iter().enumerate().find_map(|(a, &(px, py))| {
                [0, -1, 1, -2, 2, -3, 3].into_iter().find_map(|k| {
                    [true, false].into_iter().find_map(|right| {
                        let dy = k * line;
                        let x0 = if right { px + gap } else { px - gap - width };
                        let rect = (x0, py + dy - line / 2, x0 + width, py + dy + line / 2);
                        let free = inside(&rect, &area)
                            && !obstacles.iter().any(|o| overlaps(o, &rect))
                            && !placed.iter().any(|p| overlaps(&p.rect, &rect));
                        free.then(|| PlacedLabel {
                            spec: s,
                            anchor: a,
                            text: text.clone(),
                            offset: (if right { gap } else { -gap }, dy),
                            rect,
                        })
                    })
                })
            })
        });
        match found {
            Some(p) => placed.push(p),
            None => dropped.push(s),
        }
    }
    (placed, dropped)
}

fn positive(v: f64) -> bool {
    v.is_finite() && v > 0.0
}

fn decade_floor(v: f64) -> f64 {
    10f64.powf(v.log10().floor())
}

fn decade_ceil(v: f64) -> f64 {
    10f64.powf(v.log10().ceil())
}

/// The smallest range of whole decades holding every positive finite value, at least one decade
/// and at most [`MAX_DECADES`] wide (beyond that the top of the data is kept and smaller values
/// are drawn at the bottom edge); `None` when there is no such value.
fn decade_range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (min, max) = values
        .filter(|v| positive(*v))
        .fold((f64::INFINITY, 0.0_f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if !positive(min) || !positive(max) {
        return None;
    }
    let mut hi = decade_ceil(max).min(1e300);
    let mut lo = decade_floor(min).max(hi / 10f64.powi(MAX_DECADES));
    if hi <= lo {
        if lo <= 1e299 {
            hi = lo * 10.0;
        } else {
            lo = hi / 10.0;
        }
    }
    (positive(lo) && positive(hi)).then_some((lo, hi))
}

/// A log axis over `lo..hi`, widened by a hair so that plotters puts ticks on both end decades
/// (it starts at the first power of ten strictly inside the range, after rounding).
fn log_axis(lo: f64, hi: f64) -> LogCoord<f64> {
    (lo * (1.0 - 1e-9)..hi * (1.0 + 1e-9)).log_scale().into()
}

fn geo_mid(lo: f64, hi: f64) -> f64 {
    (lo * hi).sqrt()
}

/// Tick label for a log axis: powers of ten are labelled, minor ticks are left blank.
fn decade_label(v: f64) -> String {
    if !positive(v) {
        return String::new();
    }
    let e = v.log10();
    if (e - e.round()).abs() > 1e-6 {
        return String::new();
    }
    let e = e.round() as i32;
    match e {
        0..=6 => thousands(10u64.pow(e as u32)),
        -4..=-1 => format!("{:.*}", (-e) as usize, 10f64.powi(e)),
        _ => format!("1e{e}"),
    }
}

/// An integer with thousands separators: 1,000,000.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A number for a legend: thousands without decimals, small values with a few significant digits.
fn number(v: f64) -> String {
    if (100.0..1e15).contains(&v) {
        thousands(v.round() as u64)
    } else if v >= 100.0 {
        format!("{v:.3e}")
    } else if v >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// `label` cut to at most `max` characters, ending in an ellipsis when cut.
fn shorten(label: &str, max: usize) -> String {
    if label.chars().count() <= max {
        label.to_string()
    } else {
        let mut s: String = label.chars().take(max.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

fn series_style(i: usize, opacity: f64) -> ShapeStyle {
    // After the tenth series colours repeat, alternating filled and hollow markers.
    let color = PALETTE[i % PALETTE.len()].mix(opacity);
    if (i / PALETTE.len()).is_multiple_of(2) {
        color.filled()
    } else {
        color.stroke_width(1)
    }
}

fn text_style<'a>(size: u32, color: &RGBColor, h: HPos, v: VPos) -> TextStyle<'a> {
    (FONT, size).into_font().color(color).pos(Pos::new(h, v))
}

/// The points of an empirical CDF as a step line, from (x_min, 0) to (x_max, 1). Values are
/// sorted; those below `x_min` sit at `x_min`. Long series are drawn through quantiles.
fn cdf_path(sorted: &[f64], x_min: f64, x_max: f64) -> Vec<(f64, f64)> {
    let n = sorted.len();
    if n == 0 {
        return Vec::new();
    }
    let x = |v: f64| v.clamp(x_min, x_max);
    let mut path = vec![(x_min, 0.0)];
    if n <= CDF_MAX_STEPS {
        for (i, &v) in sorted.iter().enumerate() {
            path.push((x(v), i as f64 / n as f64));
            path.push((x(v), (i + 1) as f64 / n as f64));
        }
    } else {
        path.push((x(sorted[0]), 0.0));
        for j in 0..=CDF_MAX_STEPS {
            let i = j * (n - 1) / CDF_MAX_STEPS;
            path.push((x(sorted[i]), (i + 1) as f64 / n as f64));
        }
    }
    path.push((x_max, 1.0));
    path
}

/// A roofline's log-log chart on `area` over `((x_lo, x_hi), (y_lo, y_hi))`, titled at
/// a font size, with room for its throughput labels (the FLOP and instruction rooflines).
fn roofline_chart<'a>(
    area: &Area<'a>,
    (title, title_size): (&str, u32),
    ((x_lo, x_hi), (y_lo, y_hi)): ((f64, f64), (f64, f64)),
) -> std::result::Result<LogLogChart<'a>, DrawingAreaErrorKind<std::io::Error>> {
    ChartBuilder::on(area)
        .caption(title, (FONT, title_size))
        .margin(20)
        .margin_right(40)
        .x_label_area_size(55)
        .y_label_area_size(95)
        .build_cartesian_2d(log_axis(x_lo, x_hi), log_axis(y_lo, y_hi))
}

/// Grid, ticks and axis titles of a log-log chart; `(tick, desc)`: font sizes.
fn draw_log_mesh(
    chart: &mut LogLogChart<'_>,
    x_desc: &str,
    y_desc: &str,
    (tick, desc): (u32, u32),
) -> DrawResult {
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_labels(10)
        .y_labels(10)
        .x_label_formatter(&|v| decade_label(*v))
        .y_label_formatter(&|v| decade_label(*v))
        .label_style((FONT, tick))
        .axis_desc_style((FONT, desc))
        .bold_line_style(RGBColor(200, 200, 200))
        .light_line_style(RGBColor(238, 238, 238))
        .draw()
}

fn draw_no_data<'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    x: X::ValueType,
    y: Y::ValueType,
) -> DrawResult
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let style = text_style(28, &RGBColor(120, 120, 120), HPos::Center, VPos::Center);
    let backdrop = Rectangle::new([(-75, -22), (75, 22)], WHITE.mix(0.9).filled());
    chart.draw_series(std::iter::once(
        EmptyElement::at((x, y)) + backdrop + Text::new("no data", (0, 0), style),
    ))?;
    Ok(())
}

fn draw_legend<'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
    position: SeriesLabelPosition,
) -> DrawResult {
    chart
        .configure_series_labels()
        .position(position)
        .margin(12)
        .label_font((FONT, LEGEND_SIZE))
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(160, 160, 160))
        .draw()
}

#[cfg(test)]
mod tests {
    //! All data here is SYNTHETIC: made-up times that exercise the drawing code.
    use super::*;

    fn read(path: &Path) -> String {
        std::fs::read_to_string(path).expect("chart written")
    }

    /// Whether a `<text>` element with exactly this content was drawn.
    fn has_text(svg: &str, text: &str) -> bool {
        count_text(svg, text) > 0
    }

    fn count_text(svg: &str, text: &str) -> usize {
        count(svg, &format!(">\n{text}\n</text>"))
    }

    fn count(svg: &str, needle: &str) -> usize {
        svg.matches(needle).count()
    }

    /// A prediction with no interval.
    fn pt(measured_ms: f64, pred_ms: f64) -> Prediction {
        Prediction {
            measured_ms,
            pred_ms,
            lo_ms: pred_ms,
            hi_ms: pred_ms,
        }
    }

    fn with_interval(measured_ms: f64, pred_ms: f64) -> Prediction {
        Prediction {
            lo_ms: pred_ms * 0.8,
            hi_ms: pred_ms * 1.3,
            ..pt(measured_ms, pred_ms)
        }
    }

    #[test]
    fn pred_vs_measured_writes_svg_with_labels_and_points() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/dir/pvm.svg");
        let series = vec![
            (
                "analytical".to_string(),
                vec![pt(0.01, 0.012), pt(0.5, 0.4), pt(3.0, 3.3), pt(120.0, 90.0)],
            ),
            ("hybrid".to_string(), vec![pt(0.02, 0.02), pt(1.0, 1.1)]),
        ];
        pred_vs_measured(&path, "H100 predictions", &series).unwrap();
        let svg = read(&path);
        assert!(svg.starts_with("<svg"));
        assert!(has_text(&svg, "H100 predictions"));
        // Up to three models share one panel, with a legend naming each.
        assert!(has_text(&svg, "analytical"));
        assert!(has_text(&svg, "hybrid"));
        assert!(svg.contains("measured time (ms)"));
        // Six points plus two legend markers; no interval has any width.
        assert_eq!(count(&svg, "<circle"), 8);
        assert!(!has_text(&svg, "prediction interval"));
        assert!(!svg.contains("no data"));
        assert!(!svg.contains("NaN"));
    }

    #[test]
    fn pred_vs_measured_draws_each_interval() {
        let dir = tempfile::tempdir().unwrap();
        let points = vec![pt(0.1, 0.12), pt(1.0, 0.9), pt(10.0, 11.0)];
        let plain = dir.path().join("plain.svg");
        pred_vs_measured(&plain, "t", &[("m".to_string(), points.clone())]).unwrap();
        let mut with = points.clone();
        with[0] = with_interval(0.1, 0.12);
        with[2] = with_interval(10.0, 11.0);
        // Bounds that cannot sit on a log axis, or in the wrong order, draw no interval.
        with[1].lo_ms = f64::NAN;
        let barred = dir.path().join("barred.svg");
        pred_vs_measured(&barred, "t", &[("m".to_string(), with)]).unwrap();
        let (plain, barred) = (read(&plain), read(&barred));
        assert!(has_text(&barred, "prediction interval"));
        // Two interval bars and the legend's interval mark.
        assert_eq!(count(&barred, "<polyline") - count(&plain, "<polyline"), 3);
        assert_eq!(count(&barred, "<circle"), count(&plain, "<circle"));
    }

    #[test]
    fn many_models_become_small_multiples() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("multi.svg");
        let names = ["analytical", "forest", "gbm", "hybrid", "knn"];
        let series: Vec<(String, Vec<Prediction>)> = names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let pts = (1..=4)
                    .map(|k| with_interval(k as f64, k as f64 * (1.0 + 0.1 * i as f64)))
                    .collect();
                (n.to_string(), pts)
            })
            .collect();
        pred_vs_measured(&path, "five models", &series).unwrap();
        let svg = read(&path);
        // One titled panel per model, no legend: 20 points, no legend markers.
        for n in names {
            assert_eq!(count_text(&svg, n), 1, "{n}");
        }
        assert_eq!(count(&svg, "<circle"), 20);
        assert_eq!(count_text(&svg, "measured time (ms)"), 5);
        assert!(svg.contains("one panel per model"));
        assert!(!svg.contains("drawn:"));
        // 3 columns x 2 rows of panels.
        assert!(
            svg.contains(&format!("width=\"{}\"", 3 * PANEL.0)),
            "{}",
            &svg[..200]
        );

        // A model without any interval says so in its panel title.
        let mut series = series;
        series[1].1 = vec![pt(1.0, 2.0)];
        pred_vs_measured(&path, "five models", &series).unwrap();
        assert!(has_text(&read(&path), "forest (no intervals)"));
    }

    #[test]
    fn large_corpora_draw_a_deterministic_subsample_and_say_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.svg");
        let pts: Vec<Prediction> = (1..=10_000)
            .map(|i| with_interval(i as f64 * 1e-3, i as f64 * 1.1e-3))
            .collect();
        pred_vs_measured(&path, "big", &[("m".to_string(), pts.clone())]).unwrap();
        let svg = read(&path);
        // The cap, plus the legend marker.
        assert_eq!(count(&svg, "<circle"), MAX_DRAWN_PER_PANEL + 1);
        assert!(svg.contains("drawn: 3,000 of 10,000 predictions"));
        assert!(svg.len() < 2_000_000, "{} bytes", svg.len());
        pred_vs_measured(&path, "big", &[("m".to_string(), pts)]).unwrap();
        assert_eq!(read(&path), svg);
    }

    #[test]
    fn evenly_spaced_keeps_ends_and_the_cap() {
        let v: Vec<u32> = (0..10).collect();
        assert_eq!(evenly_spaced(&v, 20), v);
        assert_eq!(evenly_spaced(&v, 4), vec![0, 3, 6, 9]);
        assert_eq!(evenly_spaced(&v, 1), vec![0]);
        assert!(evenly_spaced(&v, 0).is_empty());
        let big: Vec<u32> = (0..100_001).collect();
        let s = evenly_spaced(&big, 3000);
        assert_eq!(s.len(), 3000);
        assert_eq!((s[0], s[2999]), (0, 100_000));
        assert!(s.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn pred_vs_measured_skips_bad_points() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.svg");
        let series = vec![(
            "odd".to_string(),
            vec![
                pt(f64::NAN, 1.0),
                pt(1.0, f64::INFINITY),
                pt(-1.0, 2.0),
                pt(0.0, 1.0),
                pt(2.0, 0.0),
                pt(1.0, 1.5),
                Prediction {
                    lo_ms: f64::INFINITY,
                    hi_ms: -1.0,
                    ..pt(4.0, 3.0)
                },
            ],
        )];
        pred_vs_measured(&path, "odd data", &series).unwrap();
        let svg = read(&path);
        assert!(has_text(&svg, "odd data"));
        assert!(has_text(&svg, "odd"));
        // Two valid points plus the legend marker.
        assert_eq!(count(&svg, "<circle"), 3);
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }

    #[test]
    fn pred_vs_measured_empty_renders_no_data() {
        let dir = tempfile::tempdir().unwrap();
        let bad = vec![pt(f64::NAN, f64::NAN), pt(0.0, 0.0)];
        let many: Vec<(String, Vec<Prediction>)> =
            (0..5).map(|i| (format!("m{i}"), bad.clone())).collect();
        for (i, series) in [
            vec![],
            vec![("nothing".to_string(), vec![])],
            vec![("all bad".to_string(), bad.clone())],
            many,
        ]
        .iter()
        .enumerate()
        {
            let path = dir.path().join(format!("empty{i}.svg"));
            pred_vs_measured(&path, "empty", series).unwrap();
            let svg = read(&path);
            assert!(svg.starts_with("<svg"));
            assert!(svg.contains("no data"));
        }
    }

    #[test]
    fn pred_vs_measured_single_point_and_identical_values() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("one.svg");
        pred_vs_measured(&path, "one", &[("s".to_string(), vec![pt(1.0, 1.0)])]).unwrap();
        assert_eq!(count(&read(&path), "<circle"), 2);
        let path = dir.path().join("tiny.svg");
        pred_vs_measured(&path, "tiny", &[("s".to_string(), vec![pt(1e-300, 1e300)])]).unwrap();
        assert_eq!(count(&read(&path), "<circle"), 2);
    }

    #[test]
    fn error_cdf_writes_svg_with_labels() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cdf.svg");
        let series = vec![
            ("analytical".to_string(), vec![0.0, 3.0, 12.0, 40.0, 250.0]),
            ("learned".to_string(), vec![1.0, 5.0, 8.0, 5000.0]),
        ];
        error_cdf(&path, "Error CDF", &series).unwrap();
        let svg = read(&path);
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("Error CDF"));
        assert!(has_text(&svg, "analytical"));
        assert!(has_text(&svg, "learned"));
        assert!(svg.contains("25 %"));
        // One polyline per series at least (plus guides and legend entries).
        assert!(count(&svg, "<polyline") >= 2);
        assert!(!svg.contains("no data"));
    }

    #[test]
    fn error_cdf_draws_coinciding_models_once_with_a_combined_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("same.svg");
        let errors = vec![4.0, 12.0, 30.0, 75.0];
        let series = vec![
            ("analytical".to_string(), errors.clone()),
            ("forest".to_string(), vec![5.0, 9.0, 20.0]),
            // The same values in another order, one a hair off: the same curve.
            (
                "hybrid".to_string(),
                vec![75.0, 30.0 * (1.0 + 1e-12), 4.0, 12.0],
            ),
        ];
        error_cdf(&path, "cdf", &series).unwrap();
        let svg = read(&path);
        assert!(has_text(&svg, "analytical = hybrid"));
        assert!(has_text(&svg, "forest"));
        assert!(!has_text(&svg, "analytical") && !has_text(&svg, "hybrid"));
        let single = dir.path().join("single.svg");
        error_cdf(&single, "cdf", &series[..2]).unwrap();
        // No extra curve or legend entry for the merged model.
        assert_eq!(count(&svg, "<polyline"), count(&read(&single), "<polyline"));

        let groups = merge_identical(vec![
            ("a", vec![1.0, 2.0]),
            ("b", vec![1.0, 2.0001]),
            ("c", vec![1.0, 2.0]),
            ("d", vec![1.0]),
        ]);
        let names: Vec<(usize, &str)> = groups.iter().map(|g| (g.0, g.1.as_str())).collect();
        assert_eq!(names, vec![(0, "a = c"), (1, "b"), (3, "d")]);
    }

    #[test]
    fn error_cdf_odd_and_empty_input() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("odd.svg");
        let series = vec![(
            "odd".to_string(),
            vec![f64::NAN, -5.0, f64::INFINITY, f64::NEG_INFINITY, 10.0],
        )];
        error_cdf(&path, "odd", &series).unwrap();
        let svg = read(&path);
        assert!(svg.contains("odd"));
        assert!(!svg.contains("NaN"));

        let path = dir.path().join("empty.svg");
        error_cdf(&path, "empty", &[]).unwrap();
        assert!(read(&path).contains("no data"));
        error_cdf(&path, "empty", &[("x".to_string(), vec![f64::NAN])]).unwrap();
        assert!(read(&path).contains("no data"));
    }

    #[test]
    fn cdf_path_is_monotone_and_spans_axis() {
        let vals: Vec<f64> = (0..5000).map(|i| i as f64 * 0.1).collect();
        let p = cdf_path(&vals, 0.1, 1000.0);
        assert!(p.len() <= 2 * CDF_MAX_STEPS + 4);
        assert_eq!(p.first(), Some(&(0.1, 0.0)));
        assert_eq!(p.last(), Some(&(1000.0, 1.0)));
        assert!(p.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
        let small = cdf_path(&[2.0, 3.0], 0.1, 1000.0);
        assert_eq!(
            small,
            vec![
                (0.1, 0.0),
                (2.0, 0.0),
                (2.0, 0.5),
                (3.0, 0.5),
                (3.0, 1.0),
                (1000.0, 1.0)
            ]
        );
    }

    fn run(kernel: &str, flops: f64, dram_bytes: f64, time_ms: f64) -> RoofPoint {
        RoofPoint {
            kernel: kernel.to_string(),
            flops,
            dram_bytes,
            time_ms,
        }
    }

    #[test]
    fn instruction_roofline_draws_ceilings_walls_points_and_predication() {
        use crate::features::instruction::{Ceiling, Ceilings, Level, Point};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("iroof.svg");
        let ceiling = |level, gbs: f64, measured| Ceiling {
            level,
            gbs,
            gtxn_per_s: gbs / 32.0,
            measured,
        };
        let ceilings = Ceilings {
            gips: 1045.44,
            clock_mhz: 1980.0,
            clock_measured: false,
            sm_count: 132,
            levels: vec![
                ceiling(Level::L1, 33_454.08, false),
                ceiling(Level::Shared, 22_356.6, true),
                ceiling(Level::L2, 10_120.2, true),
                ceiling(Level::Dram, 3352.0, false),
            ],
        };
        let point = |kernel: &str, level, intensity, gips, thread| Point {
            kernel: kernel.into(),
            level,
            intensity,
            gips,
            thread,
        };
        let points = [
            point("stream", Level::Dram, 0.5, 50.0, Some((0.5, 50.0))),
            point("stream", Level::L2, 0.2, 50.0, None),
            point("divergent", Level::L1, 4.0, 400.0, Some((2.0, 200.0))),
            point("conflicts", Level::Shared, 0.05, 3.0, None),
            point("bad", Level::Dram, f64::NAN, 1.0, None),
        ];
        instruction_roofline(&path, "H100", &ceilings, &points).unwrap();
        let svg = read(&path);
        assert!(has_text(&svg, "H100: global memory") && has_text(&svg, "H100: shared memory"));
        assert!(has_text(&svg, "peak issue (1,045 GIPS)"));
        assert!(has_text(&svg, "DRAM ceiling (105 GTXN/s, catalog)"));
        assert!(has_text(&svg, "L2 ceiling (316 GTXN/s, measured)"));
        assert!(has_text(&svg, "shared ceiling (699 GTXN/s, measured)"));
        for wall in [
            "stride-0 wall",
            "unit stride wall",
            "stride-8 / random wall",
            "no bank conflict wall",
            "32-way bank conflict wall",
        ] {
            assert!(has_text(&svg, wall), "{wall}");
        }
        assert!(svg.contains(
            "peak 1,045 GIPS = 132 SMs x 4 schedulers x 1 warp instruction per clock x 1.980 GHz (boost clock)"
        ));
        // One label per kernel and panel it has points on; the unusable point is not drawn.
        assert_eq!(count_text(&svg, "stream"), 1);
        assert_eq!(count_text(&svg, "divergent"), 1);
        assert_eq!(count_text(&svg, "conflicts"), 1);
        assert_eq!(count_text(&svg, "bad"), 0);
        assert!(has_text(&svg, "thread instructions / 32"));
        // No points at all still renders, with "no data" in both panels.
        instruction_roofline(&path, "none", &ceilings, &[]).unwrap();
        assert_eq!(count_text(&read(&path), "no data"), 2);
    }

    #[test]
    fn roofline_writes_svg_with_roofs_and_points() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("roof.svg");
        let points = vec![
            // 40,000 GFLOP/s at 80 FLOP/byte, in four sizes: one label.
            run("sgemm", 4e10, 5e8, 1.0),
            run("sgemm", 8e10, 1e9, 2.0),
            run("sgemm", 1.6e11, 2e9, 4.2),
            run("sgemm", 3.2e11, 4e9, 8.5),
            run("saxpy", 2.5e8, 3e9, 1.0),
            // Pure memory kernels: no FLOPs, only on the bandwidth panel.
            run("memcpy", 0.0, 2e9, 1.0),
            run("memcpy", 0.0, 4e9, 2.0),
            // FLOPs without DRAM bytes: the right edge of the roofline.
            run("smem_fma", 1e10, 0.0, 1.0),
            run("nothing", 0.0, 0.0, 1.0),
            run("bad", f64::NAN, 1.0, 1.0),
            run("neg", 1.0, -3.0, 1.0),
            run("no_time", 1e9, 1e9, 0.0),
        ];
        roofline(
            &path,
            "H100 roofline",
            67_000.0,
            3350.0,
            Some(12_000.0),
            &points,
        )
        .unwrap();
        let svg = read(&path);
        assert!(svg.starts_with("<svg"));
        assert!(has_text(&svg, "H100 roofline"));
        assert!(svg.contains("DRAM roof"));
        assert!(svg.contains("L2 roof"));
        assert!(svg.contains("compute peak"));
        // One roofline label per kernel with FLOPs, one bandwidth row per kernel with bytes.
        assert_eq!(count_text(&svg, "sgemm"), 2);
        assert_eq!(count_text(&svg, "saxpy"), 2);
        assert_eq!(count_text(&svg, "smem_fma"), 1);
        // The zero-FLOP kernel is kept: a row of its own on the bandwidth panel.
        assert_eq!(count_text(&svg, "memcpy"), 1);
        assert!(has_text(&svg, "kernel without FLOPs"));
        assert!(svg.contains("at the right edge (FLOPs, no DRAM bytes): smem_fma"));
        assert!(svg.contains("not drawn (neither FLOPs nor DRAM bytes): nothing"));
        assert!(svg.contains("every kernel on the roofline is labelled"));
        for label in ["bad", "neg", "no_time"] {
            assert!(!svg.contains(label), "{label}");
        }
        // Roofline: 4 + 1 + 1 runs with FLOPs; bandwidth: 4 + 1 + 2 runs with bytes;
        // two dots in the bandwidth key.
        assert_eq!(count(&svg, "<circle"), 6 + 7 + 2);
        assert!(!svg.contains("NaN"));
    }

    #[test]
    fn roofline_of_a_large_corpus_draws_a_capped_share_of_runs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.svg");
        // Two kernels of 5,000 runs each, both with FLOPs and bytes: 20,000 points.
        let pts: Vec<RoofPoint> = (1..=5000)
            .flat_map(|i| {
                let t = 1.0 + i as f64 * 1e-3;
                [run("gemm", 1e10, 1e8, t), run("copy", 1e6, 1e9, t)]
            })
            .collect();
        roofline(&path, "big", 67_000.0, 3350.0, None, &pts).unwrap();
        let svg = read(&path);
        // 1,500 per kernel and panel, plus the key's dot.
        assert_eq!(count(&svg, "<circle"), 2 * MAX_DRAWN_PER_PANEL + 1);
        assert!(svg.contains("drawn: 6,000 of 20,000 points"));
        assert!(svg.len() < 2_000_000, "{} bytes", svg.len());
    }

    #[test]
    fn roofline_odd_roofs_and_empty_points() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty.svg");
        roofline(&path, "no kernels", 67_000.0, 3350.0, None, &[]).unwrap();
        let svg = read(&path);
        assert!(svg.contains("no data"));
        assert!(svg.contains("DRAM roof"));
        assert!(!svg.contains("L2 roof"));
        assert!(!svg.contains("achieved DRAM bandwidth per kernel"));

        let path = dir.path().join("odd.svg");
        let pts = vec![run("k", 2e8, 1e8, 1.0)];
        roofline(&path, "odd", f64::NAN, 0.0, Some(-1.0), &pts).unwrap();
        let svg = read(&path);
        assert_eq!(count_text(&svg, "k"), 2);
        assert!(!svg.contains("roof ("));
        roofline(&path, "nothing", 0.0, f64::INFINITY, None, &[]).unwrap();
        assert!(read(&path).contains("no data"));
    }

    #[test]
    fn crowded_roofline_labels_never_overlap() {
        let area = (0, 0, 400, 300);
        // Twenty kernels at one point, and a point-sized obstacle right of it.
        let specs: Vec<LabelSpec> = (0..20)
            .map(|i| LabelSpec {
                text: format!("kernel_number_{i}"),
                anchors: vec![(200, 150)],
            })
            .collect();
        let obstacles = vec![(195, 145, 205, 155), (210, 140, 260, 160)];
        let (placed, dropped) = place_labels(&specs, area, &obstacles, POINT_LABEL_SIZE);
        assert_eq!(placed.len() + dropped.len(), 20);
        assert!(!dropped.is_empty(), "14 slots around one point");
        assert!(placed.len() >= 10, "{}", placed.len());
        for (i, a) in placed.iter().enumerate() {
            assert!(inside(&a.rect, &area));
            assert!(!obstacles.iter().any(|o| overlaps(o, &a.rect)), "{a:?}");
            for b in &placed[i + 1..] {
                assert!(!overlaps(&a.rect, &b.rect), "{a:?} {b:?}");
            }
        }
        // The first label takes the best free slot: left, as the right is blocked.
        assert_eq!(placed[0].offset, (-7, 0));
        assert_eq!(placed[0].text, "kernel_number_0");
        // 7 rows x 2 sides, less the three right-hand slots the obstacle blocks.
        assert_eq!(placed.len(), 11);
    }

    #[test]
    fn labels_use_another_anchor_before_dropping() {
        let area = (0, 0, 300, 200);
        // The first anchor is hemmed in by obstacles on every side; the second is free.
        let obstacles = vec![(0, 0, 300, 100)];
        let specs = vec![LabelSpec {
            text: "k".to_string(),
            anchors: vec![(150, 50), (150, 150)],
        }];
        let (placed, dropped) = place_labels(&specs, area, &obstacles, POINT_LABEL_SIZE);
        assert!(dropped.is_empty());
        assert_eq!(placed[0].anchor, 1);
        assert_eq!(placed[0].offset, (7, 0));
        // No room for the whole text on either side: shortened.
        let specs = vec![LabelSpec {
            text: "a_rather_long_kernel".to_string(),
            anchors: vec![(100, 50)],
        }];
        let (placed, _) = place_labels(&specs, (0, 0, 200, 100), &[], POINT_LABEL_SIZE);
        assert_eq!(placed[0].text, "a_rather_lo…");
        // Nowhere to go: dropped.
        let specs = vec![LabelSpec {
            text: "k".to_string(),
            anchors: vec![(150, 50)],
        }];
        let (placed, dropped) = place_labels(&specs, area, &[(0, 0, 300, 200)], POINT_LABEL_SIZE);
        assert!(placed.is_empty());
        assert_eq!(dropped, vec![0]);
    }

    #[test]
    fn long_labels_are_shortened() {
        assert_eq!(shorten("abc", MAX_POINT_LABEL), "abc");
        let long = "x".repeat(100);
        assert_eq!(
            shorten(&long, MAX_POINT_LABEL).chars().count(),
            MAX_POINT_LABEL
        );
        assert_eq!(shorten("abcdef", 4), "abc…");
    }

    #[test]
    fn decade_labels() {
        assert_eq!(decade_label(1.0), "1");
        assert_eq!(decade_label(1000.0), "1,000");
        assert_eq!(decade_label(1e6), "1,000,000");
        assert_eq!(decade_label(100.0), "100");
        assert_eq!(decade_label(0.01), "0.01");
        assert_eq!(decade_label(1e7), "1e7");
        assert_eq!(decade_label(2.0), "");
        assert_eq!(decade_label(0.0), "");
    }

    #[test]
    fn unwritable_target_is_a_file_error() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, "x").unwrap();
        let err = pred_vs_measured(&blocker.join("x.svg"), "t", &[]).unwrap_err();
        assert!(matches!(err, Error::Io { .. }), "{err}");
    }
}
