//! Plots as inline SVG, written directly (lines, grouped bars, stacked bars, stacked areas): every plot
//! has a title, axis labels with units and a legend (small multiples share one legend in the page,
//! [`html_legend`]), reads at 1280 px and prints in black and white well enough. Hovering a point, bar
//! or area shows its value or name (SVG `<title>`).
//!
//! Series are told apart by a [`Style`], a colour and a pattern (the dash pattern of a line, the hatching
//! of a bar): [`styles`] gives every series of a page its own pair, however many there are (25
//! mechanisms and more), and gives the members of a family (`dwf`, `dwf:pc`, `dwf:pdom`) one colour with
//! different patterns. Every mark carries its series' name and style (`data-series`, `data-style`), so a
//! test can check that no two series look alike.

use super::esc;
use std::fmt::Write;

/// Series colours: ten hues, then a lighter shade of each (Tableau 20). A family of series takes one.
pub const COLORS: [&str; 20] = [
    "#4e79a7", "#f28e2b", "#e15759", "#499894", "#59a14f", "#b6992d", "#b07aa1", "#d37295", "#9d7660", "#79706e",
    "#a0cbe8", "#ffbe7d", "#ff9d9a", "#86bcb6", "#8cd17d", "#e8c547", "#d4a6c8", "#f4a3c4", "#d7b5a6", "#bab0ac",
];

/// Dash patterns of lines, by pattern index (solid first).
const DASHES: [&str; 8] = ["none", "9 4", "2 3", "10 3 2 3", "16 5", "10 3 2 3 2 3", "2 7", "5 2"];

/// Hatching of bars over their colour, by pattern index (an 8 × 8 tile; solid first).
const HATCHES: [&str; 8] = [
    "",
    r#"<path d="M-2,2 l4,-4 M0,8 l8,-8 M6,10 l4,-4" stroke-width="2"/>"#,
    r#"<circle cx="4" cy="4" r="1.7" stroke="none"/>"#,
    r#"<path d="M0,4 h8" stroke-width="2.2"/>"#,
    r#"<path d="M0,0 l8,8 M0,8 l8,-8" stroke-width="1.3"/>"#,
    r#"<path d="M-2,6 l4,4 M0,0 l8,8 M6,-2 l4,4" stroke-width="2"/>"#,
    r#"<path d="M4,0 v8" stroke-width="2.2"/>"#,
    r#"<path d="M0,4 h8 M4,0 v8" stroke-width="1.3"/>"#,
];

/// How one series is drawn: a colour of [`COLORS`] and a pattern (line dashes, bar hatching).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Style {
    /// Index into [`COLORS`].
    pub color: usize,
    /// The dash pattern of a line, the hatching of a bar (0: solid).
    pub pattern: usize,
}

impl Style {
    /// The colour, as CSS.
    pub fn css(self) -> &'static str {
        COLORS[self.color % COLORS.len()]
    }

    /// The SVG `stroke-dasharray` of a line.
    pub fn dash(self) -> &'static str {
        DASHES[self.pattern % DASHES.len()]
    }

    /// `c3 p1`: colour 3, pattern 1 (the `data-style` attribute of marks and legend keys).
    pub fn key(self) -> String {
        format!("c{} p{}", self.color, self.pattern)
    }
}

/// The family of `name` among the series `names`: the part before `:` (`sorted:majority` → `sorted`), or
/// the part before the first `-` when that part names another series (`stackless-dcp` → `stackless`),
/// else the name itself.
pub fn family<'a>(name: &'a str, names: &[&str]) -> &'a str {
    if let Some((f, _)) = name.split_once(':') {
        return f;
    }
    match name.split_once('-') {
        Some((f, _)) if names.contains(&f) => f,
        _ => name,
    }
}

/// One style per name, no two alike while there are at most 160 names: the families, in the order they
/// first appear, take the colours in order, and the members of a family the patterns in order (the first
/// solid); a pair already taken moves on to the next pattern.
pub fn styles(names: &[&str]) -> Vec<Style> {
    let mut families: Vec<&str> = Vec::new();
    let mut members: Vec<usize> = Vec::new();
    let mut used = std::collections::HashSet::new();
    let room = COLORS.len() * DASHES.len();
    names
        .iter()
        .map(|n| {
            let f = family(n, names);
            let k = families.iter().position(|x| *x == f).unwrap_or_else(|| {
                families.push(f);
                members.push(0);
                families.len() - 1
            });
            let mut s = Style { color: k % COLORS.len(), pattern: (members[k] + k / COLORS.len()) % DASHES.len() };
            members[k] += 1;
            for _ in 0..room {
                if !used.contains(&s) {
                    break;
                }
                s.pattern = (s.pattern + 1) % DASHES.len();
                if s.pattern == 0 {
                    s.color = (s.color + 1) % COLORS.len();
                }
            }
            used.insert(s);
            s
        })
        .collect()
}

/// The size of a plot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Size {
    /// The page's width, legend on the right.
    #[default]
    Wide,
    /// Half the page's width, two side by side; one series, no legend.
    Half,
    /// A third of the page's width, for small multiples (one series each, named by the title).
    Panel,
}

/// The plot area within the SVG, in CSS pixels (scaled to the page width).
#[derive(Clone, Copy, Debug)]
struct Frame {
    w: f64,
    h: f64,
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
}

impl Frame {
    /// The frame of a plot of `size` with a legend of `entries` (the wide plot grows to give each 17 px).
    fn of(size: Size, entries: usize) -> Frame {
        match size {
            Size::Wide => Frame {
                w: 1160.0,
                h: (44.0 + 17.0 * entries as f64 + 24.0).max(340.0),
                left: 78.0,
                right: 190.0,
                top: 44.0,
                bottom: 58.0,
            },
            Size::Half => Frame { w: 580.0, h: 340.0, left: 78.0, right: 24.0, top: 44.0, bottom: 58.0 },
            Size::Panel => Frame { w: 400.0, h: 250.0, left: 62.0, right: 16.0, top: 36.0, bottom: 48.0 },
        }
    }

    fn plot_w(&self) -> f64 {
        self.w - self.left - self.right
    }

    fn plot_h(&self) -> f64 {
        self.h - self.top - self.bottom
    }
}

/// Titles and axes of a plot.
#[derive(Clone, Copy, Debug, Default)]
pub struct Spec<'a> {
    /// The title above the plot.
    pub title: &'a str,
    /// The x axis label (with its unit).
    pub x_label: &'a str,
    /// The y axis label (with its unit).
    pub y_label: &'a str,
    /// Show y values as percentages of 1.
    pub percent: bool,
    /// The top of the y axis (`None`: from the data). Small multiples pass the same value to share it.
    pub y_max: Option<f64>,
    /// The end of the x axis of a line chart (`None`: from the data). Small multiples share it.
    pub x_max: Option<f64>,
    /// A value marked by a dashed line across the plot (1× on a speedup plot).
    pub reference: Option<f64>,
    /// How large.
    pub size: Size,
}

/// One named line of a line chart.
pub struct Series {
    /// Legend name.
    pub name: String,
    /// `(x, y)` points in x order.
    pub points: Vec<(f64, f64)>,
    /// How it is drawn.
    pub style: Style,
}

/// One named series of a bar chart: a value per category.
pub struct BarSeries {
    /// Legend name.
    pub name: String,
    /// Per category (`None`: no bar).
    pub values: Vec<Option<f64>>,
    /// How its bars are drawn.
    pub style: Style,
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

/// A short id for the patterns of one plot (ids are global to the page; the title and series tell
/// plots apart).
fn plot_id(spec: &Spec<'_>, names: &[&str]) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in spec.title.bytes().chain(names.iter().flat_map(|n| n.bytes().chain([0]))) {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    format!("p{h:08x}")
}

/// The `<defs>` of the hatched patterns `styles` use.
fn pattern_defs(out: &mut String, id: &str, styles: &[Style]) {
    let mut seen = Vec::new();
    out.push_str("<defs>");
    for s in styles.iter().filter(|s| s.pattern % HATCHES.len() != 0) {
        if seen.contains(s) {
            continue;
        }
        seen.push(*s);
        let _ = write!(
            out,
            r##"<pattern id="{id}-{}-{}" width="8" height="8" patternUnits="userSpaceOnUse"><rect width="8" height="8" fill="{}"/><g stroke="#000" stroke-opacity="0.55" fill="#000" fill-opacity="0.55">{}</g></pattern>"##,
            s.color,
            s.pattern,
            s.css(),
            HATCHES[s.pattern % HATCHES.len()]
        );
    }
    out.push_str("</defs>");
}

/// The fill of a bar of style `s` (its hatching from [`pattern_defs`] with the same `id`).
fn bar_fill(id: &str, s: Style) -> String {
    if s.pattern.is_multiple_of(HATCHES.len()) {
        s.css().to_string()
    } else {
        format!("url(#{id}-{}-{})", s.color, s.pattern)
    }
}

fn open(out: &mut String, spec: &Spec<'_>, class: &str, f: &Frame) {
    let _ = write!(
        out,
        r#"<figure class="plot {class}"><svg viewBox="0 0 {w} {h}" role="img" aria-label="{t}" xmlns="http://www.w3.org/2000/svg"><text class="title" x="{x}" y="24">{t}</text>"#,
        w = f.w,
        h = f.h,
        t = esc(spec.title),
        x = f.left,
    );
}

/// The y axis (gridlines, tick labels, label) for values up to `top`, the x axis label `extra` pixels
/// lower than usual (below rotated category labels), and the reference line.
fn y_axis(out: &mut String, spec: &Spec<'_>, top: f64, step: f64, extra: f64, f: &Frame) {
    let (plot_h, x_end, base) = (f.plot_h(), f.w - f.right, f.h - f.bottom);
    let mut v = 0.0;
    while v <= top + step * 1e-9 {
        let y = f.top + plot_h * (1.0 - v / top);
        let _ = write!(
            out,
            r#"<line class="grid" x1="{}" x2="{x_end}" y1="{y:.1}" y2="{y:.1}"/><text class="tick" x="{}" y="{:.1}" text-anchor="end">{}</text>"#,
            f.left,
            f.left - 8.0,
            y + 4.0,
            fmt_value(v, spec.percent)
        );
        v += step;
    }
    let _ = write!(
        out,
        r#"<text class="axis" transform="translate(18,{:.1}) rotate(-90)" text-anchor="middle">{}</text><text class="axis" x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
        f.top + plot_h / 2.0,
        esc(spec.y_label),
        f.left + f.plot_w() / 2.0,
        f.h + extra - 12.0,
        esc(spec.x_label)
    );
    let _ = write!(
        out,
        r#"<line class="frame" x1="{l}" x2="{l}" y1="{}" y2="{base}"/><line class="frame" x1="{l}" x2="{x_end}" y1="{base}" y2="{base}"/>"#,
        f.top,
        l = f.left,
    );
    if let Some(r) = spec.reference.filter(|r| *r <= top) {
        let y = f.top + plot_h * (1.0 - r / top);
        let _ = write!(out, r#"<line class="reference" x1="{}" x2="{x_end}" y1="{y:.1}" y2="{y:.1}"/>"#, f.left);
    }
}

/// The legend right of the plot: a key per series, drawn as the series is (a line or a bar swatch).
fn legend(out: &mut String, entries: &[(&str, Style)], lines: bool, id: &str, f: &Frame) {
    legend_of(out, entries, lines, id, f, "series");
}

/// [`legend`], its keys marked `data-{what}` (`part` for the parts of stacked bars, which are not series).
fn legend_of(out: &mut String, entries: &[(&str, Style)], lines: bool, id: &str, f: &Frame, what: &str) {
    let step = 17.0f64.min((f.h - f.top - 12.0) / entries.len().max(1) as f64);
    let small = if step < 15.0 { " style=\"font-size:11px\"" } else { "" };
    for (i, (n, s)) in entries.iter().enumerate() {
        let y = f.top + 8.0 + step * i as f64;
        let x = f.w - f.right + 16.0;
        let _ = write!(out, r#"<g class="key" data-{what}="{}" data-style="{}">"#, esc(n), s.key());
        if lines {
            let _ = write!(
                out,
                r#"<line x1="{x}" x2="{}" y1="{y}" y2="{y}" stroke="{}" stroke-width="3" stroke-dasharray="{}"/>"#,
                x + 26.0,
                s.css(),
                s.dash()
            );
        } else {
            let _ = write!(
                out,
                r##"<rect x="{x}" y="{}" width="26" height="{:.1}" fill="{}" stroke="#555" stroke-width="0.5"/>"##,
                y - 6.0,
                (step - 3.0).min(13.0),
                bar_fill(id, *s)
            );
        }
        let _ = write!(out, r#"<text class="legend" x="{}" y="{}"{small}>{}</text></g>"#, x + 34.0, y + 4.0, esc(n));
    }
}

/// The tick labels of an x axis from 0 to a round value at or above `x_max`; returns that value.
fn x_axis(out: &mut String, x_max: f64, f: &Frame) -> f64 {
    let (x_step, x_top) = ticks(x_max);
    let mut v = 0.0;
    while v <= x_top + x_step * 1e-9 {
        let x = f.left + f.plot_w() * v / x_top;
        let _ = write!(
            out,
            r#"<text class="tick" x="{x:.1}" y="{}" text-anchor="middle">{}</text>"#,
            f.h - f.bottom + 18.0,
            fmt_value(v, false)
        );
        v += x_step;
    }
    x_top
}

/// A line chart; x from 0 to [`Spec::x_max`] or the largest x. Series are drawn in their styles; a
/// wide chart has a legend, a panel names its one series in its title.
pub fn lines(spec: &Spec<'_>, series: &[Series]) -> String {
    let mut out = String::new();
    let wide = spec.size == Size::Wide;
    let f = Frame::of(spec.size, if wide { series.len() } else { 0 });
    open(&mut out, spec, "lines", &f);
    let x_data = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).fold(0.0, f64::max);
    let y_data = series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).fold(0.0, f64::max);
    let (step, top) = ticks(spec.y_max.unwrap_or(y_data));
    y_axis(&mut out, spec, top, step, 0.0, &f);
    let x_top = x_axis(&mut out, spec.x_max.unwrap_or(x_data), &f);
    let (plot_w, plot_h) = (f.plot_w(), f.plot_h());
    let n = series.len();
    for (i, s) in series.iter().enumerate() {
        // Earlier lines are drawn wider, so a line that another one covers still shows at its edges.
        let width = if wide { 1.5 + 1.5 * (n - 1 - i) as f64 / n.max(1) as f64 * 2.0 } else { 2.0 };
        let pts: Vec<String> = s
            .points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", f.left + plot_w * x / x_top, f.top + plot_h * (1.0 - y / top)))
            .collect();
        let _ = write!(
            out,
            r#"<polyline class="series" data-series="{name}" data-style="{}" fill="none" stroke="{}" stroke-width="{width:.1}" stroke-linejoin="round" stroke-dasharray="{}" points="{}"><title>{name}</title></polyline>"#,
            s.style.key(),
            s.style.css(),
            s.style.dash(),
            pts.join(" "),
            name = esc(&s.name)
        );
    }
    if wide {
        let entries: Vec<(&str, Style)> = series.iter().map(|s| (s.name.as_str(), s.style)).collect();
        legend(&mut out, &entries, true, "", &f);
    }
    out.push_str("</svg></figure>");
    out
}

/// Grouped vertical bars: one group per category, one bar per series (`None`: no bar), each in its
/// series' colour and hatching; a legend when there is more than one series.
pub fn bars(spec: &Spec<'_>, categories: &[String], series: &[BarSeries]) -> String {
    let mut out = String::new();
    // Many categories: a narrow plot labels every k-th one upright; a wide one rotates them all.
    let wide = spec.size == Size::Wide;
    let every = if wide { 1 } else { categories.len().div_ceil(if spec.size == Size::Half { 12 } else { 8 }).max(1) };
    let rotate = categories.len() > 12 && wide;
    let longest = categories.iter().map(|c| c.chars().count()).max().unwrap_or(0) as f64;
    let extra = if rotate { (longest * 6.5 * 0.5).min(120.0) } else { 0.0 };
    let keyed = series.len() > 1;
    let mut f = Frame::of(spec.size, if keyed { series.len() } else { 0 });
    let names: Vec<&str> = series.iter().map(|s| s.name.as_str()).collect();
    let id = plot_id(spec, &names);
    let h = f.h;
    f.h += extra;
    open(&mut out, spec, "bars", &f);
    f.h = h;
    let styles: Vec<Style> = series.iter().map(|s| s.style).collect();
    pattern_defs(&mut out, &id, &styles);
    let y_data = series.iter().flat_map(|s| s.values.iter().flatten().copied()).fold(0.0, f64::max);
    let (step, top) = ticks(spec.y_max.unwrap_or(y_data));
    y_axis(&mut out, spec, top, step, extra, &f);
    let (plot_w, plot_h) = (f.plot_w(), f.plot_h());
    let group = plot_w / categories.len().max(1) as f64;
    let bar = (group * 0.8) / series.len().max(1) as f64;
    for (ci, cat) in categories.iter().enumerate() {
        let gx = f.left + group * ci as f64 + group * 0.1;
        for (si, s) in series.iter().enumerate() {
            let Some(v) = s.values.get(ci).copied().flatten() else { continue };
            let h = plot_h * (v / top).clamp(0.0, 1.0);
            let _ = write!(
                out,
                r#"<rect class="bar" data-series="{name}" data-style="{}" x="{:.1}" y="{:.1}" width="{:.1}" height="{h:.1}" fill="{}"><title>{}: {name} {}</title></rect>"#,
                s.style.key(),
                gx + bar * si as f64,
                f.top + plot_h - h,
                (bar - 1.0).max(1.0),
                bar_fill(&id, s.style),
                esc(cat),
                fmt_value(v, spec.percent),
                name = esc(&s.name),
            );
        }
        let cx = gx + group * 0.4;
        let y = f.h - f.bottom + 16.0;
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
    if keyed {
        let entries: Vec<(&str, Style)> = series.iter().map(|s| (s.name.as_str(), s.style)).collect();
        legend(&mut out, &entries, false, &id, &f);
    }
    out.push_str("</svg></figure>");
    out
}

/// Horizontal stacked bars: one row per name, one segment per part; with [`Spec::percent`] each row shows
/// its parts' shares of its own total (the x axis in percent), otherwise every row is on one scale, the
/// round value at or above the longest row's total (the x axis in the values' unit). The parts take the first colours, solid.
pub fn stacked(spec: &Spec<'_>, rows: &[(String, Vec<f64>)], parts: &[&str]) -> String {
    let mut out = String::new();
    let mut f = Frame::of(Size::Wide, parts.len());
    f.h = f.top + f.bottom + 30.0 * rows.len().max(1) as f64;
    let _ = write!(
        out,
        r#"<figure class="plot stacked"><svg viewBox="0 0 {} {}" role="img" aria-label="{t}" xmlns="http://www.w3.org/2000/svg"><text class="title" x="{}" y="24">{t}</text>"#,
        f.w,
        f.h,
        f.left,
        t = esc(spec.title)
    );
    let left = f.left + 80.0;
    let plot_w = f.w - left - f.right;
    // On one scale: a round top at or above the longest row, in round steps.
    let (step, longest) = if spec.percent {
        (0.25, 1.0)
    } else {
        ticks(rows.iter().map(|(_, v)| v.iter().sum::<f64>()).fold(0.0, f64::max))
    };
    let steps = (longest / step).round().max(1.0) as usize;
    for k in 0..=steps {
        let x = left + plot_w * k as f64 / steps as f64;
        let tick = if spec.percent { format!("{}%", k * 25) } else { fmt_value(step * k as f64, false) };
        let _ = write!(
            out,
            r#"<line class="grid" x1="{x:.1}" x2="{x:.1}" y1="{}" y2="{}"/><text class="tick" x="{x:.1}" y="{}" text-anchor="middle">{}</text>"#,
            f.top,
            f.h - f.bottom,
            f.h - f.bottom + 18.0,
            tick
        );
    }
    let _ = write!(
        out,
        r#"<text class="axis" x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
        left + plot_w / 2.0,
        f.h - 12.0,
        esc(spec.x_label)
    );
    for (ri, (name, vals)) in rows.iter().enumerate() {
        let y = f.top + 30.0 * ri as f64 + 4.0;
        let total: f64 = vals.iter().sum();
        let _ = write!(
            out,
            r#"<text class="tick" x="{}" y="{}" text-anchor="end">{}</text>"#,
            left - 8.0,
            y + 15.0,
            esc(name)
        );
        let mut x = left;
        let scale = if spec.percent { total } else { longest };
        for (pi, v) in vals.iter().enumerate() {
            if scale <= 0.0 || *v <= 0.0 {
                continue;
            }
            let w = plot_w * v / scale;
            let _ = write!(
                out,
                r#"<rect class="bar" x="{x:.1}" y="{y:.1}" width="{w:.1}" height="22" fill="{}"><title>{}: {} {} ({:.1}%)</title></rect>"#,
                COLORS[pi % COLORS.len()],
                esc(name),
                esc(parts[pi]),
                fmt_value(*v, false),
                100.0 * v / total
            );
            x += w;
        }
    }
    let entries: Vec<(&str, Style)> =
        parts.iter().enumerate().map(|(i, p)| (*p, Style { color: i % COLORS.len(), pattern: 0 })).collect();
    legend_of(&mut out, &entries, false, "", &f, "part");
    out.push_str("</svg></figure>");
    out
}

/// One layer of a stacked-area chart ([`stacked_areas`]).
pub struct Layer {
    /// Its name (the page's legend, and the hover text).
    pub name: String,
    /// Its fill, as CSS.
    pub fill: String,
    /// Per column.
    pub values: Vec<f64>,
}

/// Stacked areas over x: column `i` covers x from `i * width` to `(i + 1) * width`, its value held over
/// that range (steps, not slopes between columns), and the layers stack in order, the first at the
/// bottom. Every layer is one `polygon.area` named in its `<title>`; the x axis runs to [`Spec::x_max`]
/// (or the last column's end) and the y axis to [`Spec::y_max`] (or the tallest stack), so small
/// multiples share both. The legend is the page's ([`html_legend`]), one for every panel.
pub fn stacked_areas(spec: &Spec<'_>, width: f64, layers: &[Layer]) -> String {
    let mut out = String::new();
    let f = Frame::of(spec.size, 0);
    open(&mut out, spec, "areas", &f);
    let n = layers.iter().map(|l| l.values.len()).max().unwrap_or(0);
    let mut totals = vec![0.0f64; n];
    for l in layers {
        for (t, v) in totals.iter_mut().zip(&l.values) {
            *t += v.max(0.0);
        }
    }
    let (step, top) = ticks(spec.y_max.unwrap_or_else(|| totals.iter().copied().fold(0.0, f64::max)));
    y_axis(&mut out, spec, top, step, 0.0, &f);
    let x_top = x_axis(&mut out, spec.x_max.unwrap_or(n as f64 * width), &f);
    let (plot_w, plot_h) = (f.plot_w(), f.plot_h());
    let px = |x: f64, y: f64| {
        format!("{:.1},{:.1}", f.left + plot_w * (x / x_top).min(1.0), f.top + plot_h * (1.0 - (y / top).min(1.0)))
    };
    let mut base = vec![0.0f64; n];
    for l in layers {
        let (mut upper, mut lower) = (Vec::with_capacity(2 * n), Vec::with_capacity(2 * n));
        for (i, b) in base.iter_mut().enumerate() {
            let v = l.values.get(i).copied().unwrap_or(0.0).max(0.0);
            let (x0, x1) = (i as f64 * width, (i + 1) as f64 * width);
            upper.extend([px(x0, *b + v), px(x1, *b + v)]);
            lower.extend([px(x0, *b), px(x1, *b)]);
            *b += v;
        }
        if l.values.iter().all(|v| *v <= 0.0) {
            continue;
        }
        lower.reverse();
        upper.extend(lower);
        let _ = write!(
            out,
            r##"<polygon class="area" data-layer="{name}" fill="{}" stroke="#fff" stroke-width="0.3" points="{}"><title>{name}</title></polygon>"##,
            esc(&l.fill),
            upper.join(" "),
            name = esc(&l.name)
        );
    }
    out.push_str("</svg></figure>");
    out
}

/// A legend in the page for plots that share one (the panels of small multiples, a table's bars): a
/// swatch of each fill with its name.
pub fn html_legend(entries: &[(&str, &str)]) -> String {
    let mut out = String::from("<p class=\"legend-scale\">");
    for (name, fill) in entries {
        let _ = write!(out, "<span style=\"background:{}\">{}</span>", esc(fill), esc(name));
    }
    out.push_str("</p>");
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
        let spec =
            Spec { title: "SIMD <efficiency>", x_label: "x (u)", y_label: "y (%)", percent: true, ..Spec::default() };
        let style = Style::default();
        let svg = lines(&spec, &[Series { name: "pdom".into(), points: vec![(0.0, 0.5), (10.0, 1.0)], style }]);
        assert!(svg.contains("SIMD &lt;efficiency&gt;") && svg.contains("x (u)") && svg.contains("y (%)"));
        assert!(svg.contains("<polyline") && svg.contains(">pdom</text>"));
        let b = bars(
            &spec,
            &["k".into()],
            &[
                BarSeries { name: "a".into(), values: vec![Some(0.5)], style },
                BarSeries { name: "b".into(), values: vec![None], style: Style { color: 1, pattern: 1 } },
            ],
        );
        assert_eq!(b.matches("<rect class=\"bar\"").count(), 1);
        // The hatched series' legend key refers to its pattern, which the plot defines.
        assert!(b.contains("<pattern id=\"") && b.contains("fill=\"url(#p"));
        let s = stacked(&spec, &[("m".into(), vec![1.0, 3.0])], &["p", "q"]);
        assert!(s.contains("q 3 (75.0%)") && s.contains(">100%</text>"));
        // On one scale: the shorter row is half as long, the axis in the values' unit.
        let spec = Spec { percent: false, ..spec };
        let s = stacked(&spec, &[("m".into(), vec![1.0, 3.0]), ("n".into(), vec![2.0, 0.0])], &["p", "q"]);
        assert!(s.contains(">4</text>") && !s.contains("%</text>"), "{s}");
        // The longest row (4) spans the plot: 203 + 609; the other's 2 is half of it.
        assert!(s.contains("width=\"203.0\"") && s.contains("width=\"609.0\"") && s.contains("width=\"406.0\""), "{s}");
    }

    /// Layers stack: the second starts where the first ends, each column holds its value over its x
    /// range, and an all-zero layer draws nothing.
    #[test]
    fn stacked_areas_stack_their_layers_in_steps() {
        let spec = Spec {
            title: "t",
            x_label: "cycle",
            y_label: "IPC",
            y_max: Some(2.0),
            x_max: Some(4.0),
            ..Spec::default()
        };
        let layer = |name: &str, values: Vec<f64>| Layer { name: name.into(), fill: "#abc".into(), values };
        let svg = stacked_areas(
            &spec,
            2.0,
            &[layer("a", vec![1.0, 0.5]), layer("b", vec![1.0, 1.0]), layer("z", vec![0.0, 0.0])],
        );
        assert_eq!(svg.matches("<polygon class=\"area\"").count(), 2);
        let points = |name: &str| -> Vec<(f64, f64)> {
            let at = svg.find(&format!("data-layer=\"{name}\"")).expect("the layer");
            let p = &svg[at..];
            let p = &p[p.find("points=\"").expect("points") + 8..];
            p[..p.find('"').expect("end")]
                .split(' ')
                .map(|xy| xy.split_once(',').map(|(x, y)| (x.parse().expect("x"), y.parse().expect("y"))).expect("x,y"))
                .collect()
        };
        let (a, b) = (points("a"), points("b"));
        // Upper edge of `a` at column 0 is the lower edge of `b` there; a step at x = 2.
        assert_eq!(a[0].1, b[b.len() - 1].1);
        assert_eq!(a[1].0, a[2].0);
        assert!(a[1].1 < a[2].1, "the step down from 1 to 0.5 at x = 2: {a:?}");
        assert!(!svg.contains("data-layer=\"z\""));
        let legend = html_legend(&[("W1–4", "#f00")]);
        assert!(legend.contains("background:#f00") && legend.contains("W1–4"));
    }

    /// Every mechanism of the registry (28) gets its own colour and pattern, families share a colour,
    /// and the first of a family is solid.
    #[test]
    fn every_mechanism_looks_different() {
        let names: Vec<&str> = reconverge_mechanism::Mechanism::ALL.iter().map(|m| m.name()).collect();
        let s = styles(&names);
        let distinct: std::collections::HashSet<Style> = s.iter().copied().collect();
        assert_eq!(distinct.len(), names.len(), "{s:?}");
        let of = |n: &str| s[names.iter().position(|x| *x == n).expect("registered")];
        assert_eq!(of("pdom"), Style { color: 0, pattern: 0 });
        assert_eq!(of("sorted:majority").color, of("sorted:minpc").color);
        assert_ne!(of("sorted:majority").pattern, of("sorted:minpc").pattern);
        assert_eq!(of("stackless-dcp").color, of("stackless").color);
        assert_ne!(of("pdom").color, of("sorted:majority").color);
        assert_ne!(of("dual-path").color, of("multi-path").color);
        // More series than colours and patterns hold: still no two alike up to 160.
        let many: Vec<String> = (0..160).map(|i| format!("f{}:{}", i % 7, i)).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let s: std::collections::HashSet<Style> = styles(&many).into_iter().collect();
        assert_eq!(s.len(), 160);
    }
}
