//! Plots as inline SVG, written directly (lines, grouped bars, stacked bars): every plot has a title,
//! axis labels with units and a legend, reads at 1280 px and prints in black and white well enough
//! (lines also differ by dash pattern). Hovering a point or bar shows its value (SVG `<title>`).

use super::{esc, PALETTE};
use std::fmt::Write;

/// Width and height of a plot, in CSS pixels (scaled to the page width).
const W: f64 = 1160.0;
const H: f64 = 340.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 190.0;
const TOP: f64 = 44.0;
const BOTTOM: f64 = 58.0;
/// The width of a narrow plot (two side by side; one series, no legend).
const NARROW: f64 = 580.0;

/// Titles and axes of a plot.
pub struct Spec<'a> {
    /// The title above the plot.
    pub title: &'a str,
    /// The x axis label (with its unit).
    pub x_label: &'a str,
    /// The y axis label (with its unit).
    pub y_label: &'a str,
    /// Show y values as percentages of 1.
    pub percent: bool,
    /// The top of the y axis (`None`: from the data).
    pub y_max: Option<f64>,
    /// A value marked by a dashed line across the plot (1× on a speedup plot).
    pub reference: Option<f64>,
    /// Half width, for small multiples (bar plots of one series).
    pub narrow: bool,
    /// The palette index of the first series (a small multiple takes its mechanism's colour).
    pub first_color: usize,
    /// Show x values (0..1) as percentages (line plots).
    pub x_percent: bool,
}

/// One named line of a line chart.
pub struct Series {
    /// Legend name.
    pub name: String,
    /// `(x, y)` points in x order.
    pub points: Vec<(f64, f64)>,
}

/// A "nice" axis step and top for values up to `max` (about 5 ticks).
fn ticks(max: f64) -> (f64, f64) {
    let max = if max.is_finite() && max > 0.0 { max } else { 1.0 };
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(10.0 * mag);
    (step, (max / step).ceil() * step)
}

fn fmt_value(v: f64, percent: bool) -> String {
    if percent {
        let p = v * 100.0;
        if (p - p.round()).abs() < 1e-9 {
            format!("{p:.0}%")
        } else {
            format!("{p:.1}%")
        }
    } else if v.abs() >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if v.abs() >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        let t = format!("{v:.2}");
        t.trim_end_matches('0').to_string()
    }
}

fn open(out: &mut String, spec: &Spec<'_>, class: &str, w: f64, h: f64) {
    let _ = write!(
        out,
        r#"<figure class="plot {class}"><svg viewBox="0 0 {w} {h}" role="img" aria-label="{t}" xmlns="http://www.w3.org/2000/svg"><text class="title" x="{x}" y="24">{t}</text>"#,
        t = esc(spec.title),
        x = LEFT,
    );
}

/// The y axis (gridlines, tick labels, label) for values up to `top`, the x axis label `extra` pixels
/// lower than usual (below rotated category labels), and the reference line.
fn y_axis(out: &mut String, spec: &Spec<'_>, top: f64, step: f64, extra: f64, w: f64, right: f64) {
    let plot_h = H - TOP - BOTTOM;
    let mut v = 0.0;
    while v <= top + step * 1e-9 {
        let y = TOP + plot_h * (1.0 - v / top);
        let _ = write!(
            out,
            r#"<line class="grid" x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}"/><text class="tick" x="{}" y="{:.1}" text-anchor="end">{}</text>"#,
            w - right,
            LEFT - 8.0,
            y + 4.0,
            fmt_value(v, spec.percent)
        );
        v += step;
    }
    let _ = write!(
        out,
        r#"<text class="axis" transform="translate(18,{:.1}) rotate(-90)" text-anchor="middle">{}</text><text class="axis" x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
        TOP + plot_h / 2.0,
        esc(spec.y_label),
        LEFT + (w - LEFT - right) / 2.0,
        H + extra - 12.0,
        esc(spec.x_label)
    );
    let _ = write!(
        out,
        r#"<line class="frame" x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{}"/><line class="frame" x1="{LEFT}" x2="{}" y1="{}" y2="{}"/>"#,
        H - BOTTOM,
        w - right,
        H - BOTTOM,
        H - BOTTOM
    );
    if let Some(r) = spec.reference.filter(|r| *r <= top) {
        let y = TOP + (H - TOP - BOTTOM) * (1.0 - r / top);
        let _ = write!(out, r#"<line class="reference" x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}"/>"#, w - right);
    }
}

fn legend(out: &mut String, names: &[&str], lines: bool, w: f64, right: f64) {
    // Up to 14 entries at 20 px; more share the plot's height (every mechanism stays named).
    let step = (20.0f64).min((H - TOP - 12.0) / names.len().max(1) as f64);
    let small = if step < 18.0 { " style=\"font-size:11px\"" } else { "" };
    for (i, n) in names.iter().enumerate() {
        let y = TOP + 8.0 + step * i as f64;
        let x = w - right + 16.0;
        let c = PALETTE[i % PALETTE.len()];
        if lines {
            let _ = write!(
                out,
                r#"<line x1="{x}" x2="{}" y1="{y}" y2="{y}" stroke="{c}" stroke-width="3" stroke-dasharray="{}"/>"#,
                x + 22.0,
                dash(i)
            );
        } else {
            let _ = write!(out, r#"<rect x="{x}" y="{}" width="22" height="12" fill="{c}"/>"#, y - 6.0);
        }
        let _ = write!(out, r#"<text class="legend" x="{}" y="{}"{small}>{}</text>"#, x + 30.0, y + 4.0, esc(n));
    }
}

/// Dash pattern of line `i` (solid for the first palette round).
fn dash(i: usize) -> &'static str {
    ["none", "6 3", "2 3", "10 3 2 3"][(i / PALETTE.len()) % 4]
}

/// A line chart; x from 0 to the largest x.
pub fn lines(spec: &Spec<'_>, series: &[Series]) -> String {
    let mut out = String::new();
    open(&mut out, spec, "lines", W, H);
    let x_max = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).fold(0.0, f64::max);
    let y_data = series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).fold(0.0, f64::max);
    let (step, top) = ticks(spec.y_max.unwrap_or(y_data));
    y_axis(&mut out, spec, top, step, 0.0, W, RIGHT);
    let (x_step, x_top) = if spec.x_percent { (0.2, 1.0) } else { ticks(x_max) };
    let plot_w = W - LEFT - RIGHT;
    let plot_h = H - TOP - BOTTOM;
    let mut v = 0.0;
    while v <= x_top + x_step * 1e-9 {
        let x = LEFT + plot_w * v / x_top;
        let _ = write!(
            out,
            r#"<text class="tick" x="{x:.1}" y="{}" text-anchor="middle">{}</text>"#,
            H - BOTTOM + 18.0,
            fmt_value(v, spec.x_percent)
        );
        v += x_step;
    }
    let n = series.len();
    for (i, s) in series.iter().enumerate() {
        let c = PALETTE[i % PALETTE.len()];
        // Earlier lines are drawn wider, so a line that another one covers still shows at its edges.
        let width = 1.5 + 1.5 * (n - 1 - i) as f64 / n.max(1) as f64 * 2.0;
        let pts: Vec<String> = s
            .points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", LEFT + plot_w * x / x_top, TOP + plot_h * (1.0 - y / top)))
            .collect();
        let _ = write!(
            out,
            r#"<polyline class="series" fill="none" stroke="{c}" stroke-width="{width:.1}" stroke-linejoin="round" stroke-dasharray="{}" points="{}"><title>{}</title></polyline>"#,
            dash(i),
            pts.join(" "),
            esc(&s.name)
        );
    }
    let names: Vec<&str> = series.iter().map(|s| s.name.as_str()).collect();
    legend(&mut out, &names, true, W, RIGHT);
    out.push_str("</svg></figure>");
    out
}

/// Grouped vertical bars: one group per category, one bar per series (`None`: no bar).
pub fn bars(spec: &Spec<'_>, categories: &[String], series: &[(String, Vec<Option<f64>>)]) -> String {
    let mut out = String::new();
    // Many categories: a narrow plot labels every k-th one upright; a wide one rotates them all.
    let every = if spec.narrow { categories.len().div_ceil(12).max(1) } else { 1 };
    let rotate = categories.len() > 12 && !spec.narrow;
    let longest = categories.iter().map(|c| c.chars().count()).max().unwrap_or(0) as f64;
    let extra = if rotate { (longest * 6.5 * 0.5).min(120.0) } else { 0.0 };
    let (w, right) = if spec.narrow { (NARROW, 24.0) } else { (W, RIGHT) };
    open(&mut out, spec, "bars", w, H + extra);
    let y_data = series.iter().flat_map(|s| s.1.iter().flatten().copied()).fold(0.0, f64::max);
    let (step, top) = ticks(spec.y_max.unwrap_or(y_data));
    y_axis(&mut out, spec, top, step, extra, w, right);
    let plot_w = w - LEFT - right;
    let plot_h = H - TOP - BOTTOM;
    let group = plot_w / categories.len().max(1) as f64;
    let bar = (group * 0.8) / series.len().max(1) as f64;
    for (ci, cat) in categories.iter().enumerate() {
        let gx = LEFT + group * ci as f64 + group * 0.1;
        for (si, (name, vals)) in series.iter().enumerate() {
            let Some(v) = vals.get(ci).copied().flatten() else { continue };
            let h = plot_h * (v / top).clamp(0.0, 1.0);
            let _ = write!(
                out,
                r#"<rect class="bar" x="{:.1}" y="{:.1}" width="{:.1}" height="{h:.1}" fill="{}"><title>{}: {} {}</title></rect>"#,
                gx + bar * si as f64,
                TOP + plot_h - h,
                (bar - 1.0).max(1.0),
                PALETTE[(si + spec.first_color) % PALETTE.len()],
                esc(cat),
                esc(name),
                fmt_value(v, spec.percent)
            );
        }
        let cx = gx + group * 0.4;
        let y = H - BOTTOM + 16.0;
        if every > 1 && ci != 0 && (ci + 1) % every != 0 {
            continue;
        }
        if rotate {
            let _ = write!(
                out,
                r#"<text class="tick" transform="translate({cx:.1},{y}) rotate(-30)" text-anchor="end">{}</text>"#,
                esc(cat)
            );
        } else {
            let _ = write!(out, r#"<text class="tick" x="{cx:.1}" y="{y}" text-anchor="middle">{}</text>"#, esc(cat));
        }
    }
    if series.len() > 1 {
        let names: Vec<&str> = series.iter().map(|s| s.0.as_str()).collect();
        legend(&mut out, &names, false, w, right);
    }
    out.push_str("</svg></figure>");
    out
}

/// Horizontal stacked bars: one row per name, one segment per part (shares of the row's total, which
/// the x axis shows as a percentage).
pub fn stacked(spec: &Spec<'_>, rows: &[(String, Vec<f64>)], parts: &[&str]) -> String {
    let mut out = String::new();
    let height = TOP + BOTTOM + 30.0 * rows.len().max(1) as f64;
    let _ = write!(
        out,
        r#"<figure class="plot stacked"><svg viewBox="0 0 {W} {height}" role="img" aria-label="{t}" xmlns="http://www.w3.org/2000/svg"><text class="title" x="{LEFT}" y="24">{t}</text>"#,
        t = esc(spec.title)
    );
    let left = LEFT + 80.0;
    let plot_w = W - left - RIGHT;
    for k in 0..=4 {
        let x = left + plot_w * k as f64 / 4.0;
        let _ = write!(
            out,
            r#"<line class="grid" x1="{x:.1}" x2="{x:.1}" y1="{TOP}" y2="{}"/><text class="tick" x="{x:.1}" y="{}" text-anchor="middle">{}%</text>"#,
            height - BOTTOM,
            height - BOTTOM + 18.0,
            k * 25
        );
    }
    let _ = write!(
        out,
        r#"<text class="axis" x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
        left + plot_w / 2.0,
        height - 12.0,
        esc(spec.x_label)
    );
    for (ri, (name, vals)) in rows.iter().enumerate() {
        let y = TOP + 30.0 * ri as f64 + 4.0;
        let total: f64 = vals.iter().sum();
        let _ = write!(
            out,
            r#"<text class="tick" x="{}" y="{}" text-anchor="end">{}</text>"#,
            left - 8.0,
            y + 15.0,
            esc(name)
        );
        let mut x = left;
        for (pi, v) in vals.iter().enumerate() {
            if total <= 0.0 || *v <= 0.0 {
                continue;
            }
            let w = plot_w * v / total;
            let _ = write!(
                out,
                r#"<rect class="bar" x="{x:.1}" y="{y:.1}" width="{w:.1}" height="22" fill="{}"><title>{}: {} {:.1}%</title></rect>"#,
                PALETTE[pi % PALETTE.len()],
                esc(name),
                esc(parts[pi]),
                100.0 * v / total
            );
            x += w;
        }
    }
    legend(&mut out, parts, false, W, RIGHT);
    out.push_str("</svg></figure>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_use_round_steps() {
        assert_eq!(ticks(0.93), (0.2, 1.0));
        assert_eq!(ticks(12.0), (2.5, 12.5));
        assert_eq!(ticks(0.0), (0.2, 1.0));
    }

    #[test]
    fn plots_have_titles_axes_and_legends() {
        let spec = Spec {
            title: "SIMD <efficiency>",
            x_label: "x (u)",
            y_label: "y (%)",
            percent: true,
            y_max: Some(1.0),
            reference: None,
            narrow: false,
            first_color: 0,
            x_percent: false,
        };
        let svg = lines(&spec, &[Series { name: "pdom".into(), points: vec![(0.0, 0.5), (10.0, 1.0)] }]);
        assert!(svg.contains("SIMD &lt;efficiency&gt;") && svg.contains("x (u)") && svg.contains("y (%)"));
        assert!(svg.contains("<polyline") && svg.contains(">pdom</text>"));
        let b = bars(&spec, &["k".into()], &[("a".into(), vec![Some(0.5)]), ("b".into(), vec![None])]);
        assert_eq!(b.matches("<rect class=\"bar\"").count(), 1);
        let s = stacked(&spec, &[("m".into(), vec![1.0, 3.0])], &["p", "q"]);
        assert!(s.contains("q 75.0%"));
    }
}
