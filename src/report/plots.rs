//! SVG charts for reports: predicted vs measured scatter, error CDF and a roofline.
//!
//! Every chart is rendered into memory with plotters' SVG backend (text is written as
//! `<text>` elements, so no system fonts are needed) and then written atomically: a
//! temporary file in the target directory is renamed over the target.
//!
//! Odd data never panics: non-finite points, and points that cannot sit on a log axis
//! (zero or negative), are skipped; a chart with nothing to show still renders, with a
//! "no data" note in the plotting area.

use std::fmt::Display;
use std::path::Path;

use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::error::{Error, Result};
use crate::output::write_atomic;

/// Canvas size in pixels.
const SIZE: (u32, u32) = (900, 650);
const FONT: &str = "sans-serif";
const TITLE_SIZE: u32 = 28;
const AXIS_DESC_SIZE: u32 = 20;
const TICK_SIZE: u32 = 17;
const LEGEND_SIZE: u32 = 17;
const POINT_LABEL_SIZE: u32 = 14;
/// Longest point label drawn on a roofline before it is shortened with an ellipsis.
const MAX_POINT_LABEL: usize = 32;
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

type LogLogChart<'a> = ChartContext<'a, SVGBackend<'a>, Cartesian2d<LogCoord<f64>, LogCoord<f64>>>;

/// Predicted vs measured on log-log axes, one colour per series (e.g. per model or per kernel),
/// with the y = x line and dashed ±25 % lines. Points are (measured_ms, predicted_ms).
pub fn pred_vs_measured(
    path: &Path,
    title: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> Result<()> {
    let valid: Vec<(&str, Vec<(f64, f64)>)> = series
        .iter()
        .map(|(name, pts)| {
            let pts = pts
                .iter()
                .copied()
                .filter(|&(x, y)| positive(x) && positive(y))
                .collect();
            (name.as_str(), pts)
        })
        .collect();
    let (lo, hi) = decade_range(
        valid
            .iter()
            .flat_map(|(_, pts)| pts.iter().flat_map(|&(x, y)| [x, y])),
    )
    .unwrap_or((0.01, 100.0));
    let empty = valid.iter().all(|(_, pts)| pts.is_empty());

    let svg = render(path, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, TITLE_SIZE))
            .margin(20)
            .margin_right(40)
            .x_label_area_size(55)
            .y_label_area_size(75)
            .build_cartesian_2d(log_axis(lo, hi), log_axis(lo, hi))?;
        draw_mesh(&mut chart, "measured time (ms)", "predicted time (ms)")?;

        // Reference lines: y = x solid, y = 1.25 x and y = 0.75 x dashed, each kept inside the axes.
        let guide = RGBColor(60, 60, 60);
        chart
            .draw_series(LineSeries::new([(lo, lo), (hi, hi)], guide.stroke_width(2)))?
            .label("y = x")
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], guide.stroke_width(2)));
        let dashed = guide.mix(0.8).stroke_width(1);
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

        for (i, (name, pts)) in valid.iter().enumerate() {
            let style = series_style(i, 0.7);
            chart
                .draw_series(
                    pts.iter()
                        .map(|&(x, y)| Circle::new((x.clamp(lo, hi), y.clamp(lo, hi)), 3, style)),
                )?
                .label(*name)
                .legend(move |(x, y)| Circle::new((x + 10, y), 4, style));
        }
        if empty {
            draw_no_data(&mut chart, geo_mid(lo, hi), geo_mid(lo, hi))?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)
    })?;
    write_atomic(path, &svg)
}

/// Empirical CDF of absolute percentage error per series (x: |pred-true|/true in %, log x axis from 0.1 % to max(1000 %, data)),
/// y: share of predictions 0..1; vertical guide lines at 10, 25, 50 %.
///
/// Non-finite and negative values are skipped. Errors below 0.1 % (including exact zeros)
/// count in the CDF and are drawn at the left edge.
pub fn error_cdf(path: &Path, title: &str, series: &[(String, Vec<f64>)]) -> Result<()> {
    const X_MIN: f64 = 0.1;
    let valid: Vec<(&str, Vec<f64>)> = series
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
        .collect();
    let data_max = valid
        .iter()
        .filter_map(|(_, v)| v.last().copied())
        .fold(0.0_f64, f64::max);
    let x_max = decade_ceil(data_max.max(1000.0)).min(X_MIN * 10f64.powi(MAX_DECADES));
    let empty = valid.iter().all(|(_, v)| v.is_empty());

    let svg = render(path, |root| {
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

        for (i, (name, vals)) in valid.iter().enumerate() {
            let style = series_style(i, 1.0).stroke_width(2);
            chart
                .draw_series(LineSeries::new(cdf_path(vals, X_MIN, x_max), style))?
                .label(*name)
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], style));
        }
        if empty {
            draw_no_data(&mut chart, geo_mid(X_MIN, x_max), 0.5)?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)
    })?;
    write_atomic(path, &svg)
}

/// Roofline chart of one GPU: x = arithmetic intensity (FLOP/byte, log), y = GFLOP/s (log); the DRAM roof
/// min(peak, AI x dram_gbs), the L2 roof if given, the compute ceiling; points (label, intensity, achieved GFLOP/s)
/// drawn and labelled (small font). Points with intensity 0 or achieved 0 (pure memory kernels with no FLOPs) are
/// placed at the left edge (intensity = x-axis minimum) rather than dropped, only if achieved > 0; otherwise skipped.
///
/// A roof whose value is not a positive finite number is left out (the points still show).
pub fn roofline(
    path: &Path,
    title: &str,
    peak_gflops: f64,
    dram_gbs: f64,
    l2_gbs: Option<f64>,
    points: &[(String, f64, f64)],
) -> Result<()> {
    let peak = Some(peak_gflops).filter(|v| positive(*v));
    let dram = Some(dram_gbs).filter(|v| positive(*v));
    let l2 = l2_gbs.filter(|v| positive(*v));
    // Points that can be drawn: achieved > 0; intensity > 0, or exactly 0 (moved to the left edge).
    let pts: Vec<(&str, Option<f64>, f64)> = points
        .iter()
        .filter(|(_, ai, achieved)| positive(*achieved) && ai.is_finite() && *ai >= 0.0)
        .map(|(label, ai, achieved)| (label.as_str(), Some(*ai).filter(|a| *a > 0.0), *achieved))
        .collect();

    // Ridge points (where a bandwidth roof meets the compute ceiling).
    let ridge = |bw: Option<f64>| match (peak, bw) {
        (Some(p), Some(b)) => Some(p / b),
        _ => None,
    };
    let (ridge_dram, ridge_l2) = (ridge(dram), ridge(l2));
    let anchor = ridge_dram.or(ridge_l2);
    let (x_lo, x_hi) = decade_range(
        pts.iter()
            .filter_map(|p| p.1)
            .chain(ridge_dram)
            .chain(ridge_l2)
            .chain(anchor.map(|r| r / 100.0))
            .chain(anchor.map(|r| r * 100.0)),
    )
    .unwrap_or((0.01, 10_000.0));
    // Bandwidth roofs at the left edge set the bottom of the y axis, the peak the top.
    let (y_lo, y_hi) = decade_range(
        pts.iter()
            .map(|p| p.2)
            .chain(peak.map(|p| p * 2.0))
            .chain(dram.map(|b| b * x_lo))
            .chain(l2.map(|b| b * x_lo))
            .filter(|v| positive(*v)),
    )
    .unwrap_or((1.0, 1e6));
    let empty = pts.is_empty();

    let svg = render(path, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, TITLE_SIZE))
            .margin(20)
            .margin_right(40)
            .x_label_area_size(55)
            .y_label_area_size(95)
            .build_cartesian_2d(log_axis(x_lo, x_hi), log_axis(y_lo, y_hi))?;
        draw_mesh(
            &mut chart,
            "arithmetic intensity (FLOP/byte)",
            "performance (GFLOP/s)",
        )?;

        // A bandwidth roof: y = AI * bw up to the ridge (or the right edge), clipped to the axes.
        let roof = |bw: f64| -> Vec<(f64, f64)> {
            let x_end = peak.map_or(x_hi, |p| (p / bw).min(x_hi));
            let x_start = x_lo.max(y_lo / bw);
            if x_start >= x_end {
                return Vec::new();
            }
            vec![(x_start, x_start * bw), (x_end, (x_end * bw).min(y_hi))]
        };
        let compute_color = RGBColor(214, 39, 40);
        let dram_color = RGBColor(31, 119, 180);
        let l2_color = RGBColor(44, 160, 44);
        if let Some(p) = peak {
            let style = compute_color.stroke_width(2);
            chart
                .draw_series(LineSeries::new([(x_lo, p), (x_hi, p)], style))?
                .label(format!("compute peak ({} GFLOP/s)", number(p)))
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], style));
        }
        if let Some(b) = dram {
            let style = dram_color.stroke_width(2);
            chart
                .draw_series(LineSeries::new(roof(b), style))?
                .label(format!("DRAM roof ({} GB/s)", number(b)))
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], style));
        }
        if let Some(b) = l2 {
            let style = l2_color.stroke_width(2);
            chart
                .draw_series(DashedLineSeries::new(roof(b), 8, 5, style))?
                .label(format!("L2 roof ({} GB/s)", number(b)))
                .legend(move |(x, y)| DashedPathElement::new([(x, y), (x + 20, y)], 8, 5, style));
        }

        let point_color = RGBColor(30, 30, 30);
        let placed: Vec<(String, (f64, f64))> = pts
            .iter()
            .map(|&(label, ai, achieved)| {
                let ai = ai.map_or(x_lo, |a| a.clamp(x_lo, x_hi));
                (shorten(label), (ai, achieved.clamp(y_lo, y_hi)))
            })
            .collect();
        if !placed.is_empty() {
            chart
                .draw_series(
                    placed
                        .iter()
                        .map(|(_, p)| Circle::new(*p, 4, point_color.mix(0.85).filled())),
                )?
                .label("kernels")
                .legend(move |(x, y)| Circle::new((x + 10, y), 4, point_color.filled()));
            let labels = place_labels(&chart, &placed);
            let leader = point_color.mix(0.5).stroke_width(1);
            chart.draw_series(
                labels
                    .iter()
                    .filter(|l| l.offset.1 != 0)
                    .map(|l| EmptyElement::at(l.at) + PathElement::new([(0, 0), l.offset], leader)),
            )?;
            chart.draw_series(labels.into_iter().map(|l| {
                let h = if l.offset.0 < 0 {
                    HPos::Right
                } else {
                    HPos::Left
                };
                let style = text_style(POINT_LABEL_SIZE, &point_color, h, VPos::Center);
                EmptyElement::at(l.at) + Text::new(l.text, l.offset, style)
            }))?;
        }
        if empty {
            draw_no_data(&mut chart, geo_mid(x_lo, x_hi), geo_mid(y_lo, y_hi))?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)
    })?;
    write_atomic(path, &svg)
}

// ---------------------------------------------------------------------------------------------
// Helpers.

/// Renders a chart into an SVG string; `draw` gets the whole canvas, already cleared to white.
fn render<F>(path: &Path, draw: F) -> Result<String>
where
    F: FnOnce(&DrawingArea<SVGBackend<'_>, plotters::coord::Shift>) -> DrawResult,
{
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
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

/// A point label: the text, the data point and the text anchor's offset from it in pixels
/// (negative x: the text ends left of the point).
struct PlacedLabel {
    text: String,
    at: (f64, f64),
    offset: (i32, i32),
}

/// Puts each label right of its point (left where it would run past the plotting area) and
/// moves it up or down a line or a few where it would overlap a label already placed.
/// Text widths are estimates (the SVG viewer picks the font).
fn place_labels(chart: &LogLogChart<'_>, points: &[(String, (f64, f64))]) -> Vec<PlacedLabel> {
    let (x_range, y_range) = chart.plotting_area().get_pixel_range();
    let font_px = f64::from(POINT_LABEL_SIZE) / 1.24;
    let line = (font_px * 1.2).ceil() as i32;
    let gap = 7;
    let mut taken: Vec<(i32, i32, i32, i32)> = Vec::new();
    let overlaps = |a: &(i32, i32, i32, i32), b: &(i32, i32, i32, i32)| {
        a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
    };
    points
        .iter()
        .map(|(text, at)| {
            let (px, py) = chart.backend_coord(at);
            let width = (text.chars().count() as f64 * font_px * 0.6).ceil() as i32;
            let right = px + gap + width <= x_range.end;
            let x0 = if right { px + gap } else { px - gap - width };
            let boxed = |dy: i32| (x0, py + dy - line / 2, x0 + width, py + dy + line / 2);
            let dy = [0, 1, -1, 2, -2, 3, -3]
                .into_iter()
                .map(|k| k * line)
                .find(|&dy| {
                    let b = boxed(dy);
                    b.1 >= y_range.start
                        && b.3 <= y_range.end
                        && !taken.iter().any(|t| overlaps(t, &b))
                })
                .unwrap_or(0);
            taken.push(boxed(dy));
            PlacedLabel {
                text: text.clone(),
                at: *at,
                offset: (if right { gap } else { -gap }, dy),
            }
        })
        .collect()
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

fn shorten(label: &str) -> String {
    if label.chars().count() <= MAX_POINT_LABEL {
        label.to_string()
    } else {
        let mut s: String = label.chars().take(MAX_POINT_LABEL - 1).collect();
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

fn draw_mesh(chart: &mut LogLogChart<'_>, x_desc: &str, y_desc: &str) -> DrawResult {
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_labels(10)
        .y_labels(10)
        .x_label_formatter(&|v| decade_label(*v))
        .y_label_formatter(&|v| decade_label(*v))
        .label_style((FONT, TICK_SIZE))
        .axis_desc_style((FONT, AXIS_DESC_SIZE))
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

fn draw_legend<'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    position: SeriesLabelPosition,
) -> DrawResult
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
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
    use super::*;

    fn read(path: &Path) -> String {
        std::fs::read_to_string(path).expect("chart written")
    }

    /// Whether a `<text>` element with exactly this content was drawn.
    fn has_text(svg: &str, text: &str) -> bool {
        svg.contains(&format!(">\n{text}\n</text>"))
    }

    fn count(svg: &str, needle: &str) -> usize {
        svg.matches(needle).count()
    }

    #[test]
    fn pred_vs_measured_writes_svg_with_labels_and_points() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/dir/pvm.svg");
        let series = vec![
            (
                "analytical".to_string(),
                vec![(0.01, 0.012), (0.5, 0.4), (3.0, 3.3), (120.0, 90.0)],
            ),
            ("hybrid".to_string(), vec![(0.02, 0.02), (1.0, 1.1)]),
        ];
        pred_vs_measured(&path, "H100 predictions", &series).unwrap();
        let svg = read(&path);
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("H100 predictions"));
        assert!(svg.contains("analytical"));
        assert!(svg.contains("hybrid"));
        assert!(svg.contains("measured time (ms)"));
        assert!(count(&svg, "<circle") >= 6);
        assert!(!svg.contains("no data"));
        assert!(!svg.contains("NaN"));
    }

    #[test]
    fn pred_vs_measured_skips_bad_points() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.svg");
        let series = vec![(
            "odd".to_string(),
            vec![
                (f64::NAN, 1.0),
                (1.0, f64::INFINITY),
                (-1.0, 2.0),
                (0.0, 1.0),
                (2.0, 0.0),
                (1.0, 1.5),
                (4.0, 3.0),
            ],
        )];
        pred_vs_measured(&path, "odd data", &series).unwrap();
        let svg = read(&path);
        assert!(svg.contains("odd data"));
        assert!(svg.contains("odd"));
        // Two valid points plus the legend marker.
        assert_eq!(count(&svg, "<circle"), 3);
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }

    #[test]
    fn pred_vs_measured_empty_renders_no_data() {
        let dir = tempfile::tempdir().unwrap();
        for (i, series) in [
            vec![],
            vec![("nothing".to_string(), vec![])],
            vec![(
                "all bad".to_string(),
                vec![(f64::NAN, f64::NAN), (0.0, 0.0)],
            )],
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
        pred_vs_measured(&path, "one", &[("s".to_string(), vec![(1.0, 1.0)])]).unwrap();
        assert!(count(&read(&path), "<circle") >= 1);
        let path = dir.path().join("tiny.svg");
        pred_vs_measured(&path, "tiny", &[("s".to_string(), vec![(1e-300, 1e300)])]).unwrap();
        assert!(count(&read(&path), "<circle") >= 1);
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
        assert!(svg.contains("analytical"));
        assert!(svg.contains("learned"));
        assert!(svg.contains("25 %"));
        // One polyline per series at least (plus guides and legend entries).
        assert!(count(&svg, "<polyline") >= 2);
        assert!(!svg.contains("no data"));
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

    #[test]
    fn roofline_writes_svg_with_roofs_and_points() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("roof.svg");
        let points = vec![
            ("sgemm".to_string(), 80.0, 40_000.0),
            ("saxpy".to_string(), 0.083, 250.0),
            ("memcpy".to_string(), 0.0, 1.0),
            ("nothing".to_string(), 0.0, 0.0),
            ("bad".to_string(), f64::NAN, 10.0),
            ("neg".to_string(), 1.0, -3.0),
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
        assert!(svg.contains("H100 roofline"));
        assert!(svg.contains("DRAM roof"));
        assert!(svg.contains("L2 roof"));
        assert!(svg.contains("compute peak"));
        for label in ["sgemm", "saxpy", "memcpy"] {
            assert!(svg.contains(label), "{label}");
        }
        for label in ["sgemm", "saxpy", "memcpy", "kernels"] {
            assert!(has_text(&svg, label), "{label}");
        }
        for label in ["nothing", "bad", "neg"] {
            assert!(!has_text(&svg, label), "{label}");
        }
        // Three valid points plus one legend marker.
        assert_eq!(count(&svg, "<circle"), 4);
        assert!(!svg.contains("NaN"));
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

        let path = dir.path().join("odd.svg");
        let pts = vec![("k".to_string(), 2.0, 100.0)];
        roofline(&path, "odd", f64::NAN, 0.0, Some(-1.0), &pts).unwrap();
        let svg = read(&path);
        assert!(has_text(&svg, "k"));
        assert!(!svg.contains("roof ("));
        roofline(&path, "nothing", 0.0, f64::INFINITY, None, &[]).unwrap();
        assert!(read(&path).contains("no data"));
    }

    #[test]
    fn long_labels_are_shortened() {
        assert_eq!(shorten("abc"), "abc");
        let long = "x".repeat(100);
        assert_eq!(shorten(&long).chars().count(), MAX_POINT_LABEL);
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
    fn write_atomic_replaces_existing_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.svg");
        write_atomic(&path, "old").unwrap();
        write_atomic(&path, "new").unwrap();
        assert_eq!(read(&path), "new");
        // Only the target is left behind, no temporary files.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
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
