//! Synthesis results of the path-tracking RTL (`hw/`, `reconverge cost --synth`): the parser of Yosys'
//! `stat` report and the SVG plot of logic cells against threads per warp. Running Yosys is the CLI's
//! job; nothing here does IO.

use std::fmt::Write;

/// Cell counts from one Yosys `stat` report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stat {
    /// `Number of memory bits` (bits of memories not yet mapped to cells).
    pub memory_bits: u64,
    /// Every cell type and its count.
    pub cells: Vec<(String, u64)>,
}

impl Stat {
    /// The count of cells whose type satisfies `pred`.
    pub fn count(&self, pred: impl Fn(&str) -> bool) -> u64 {
        self.cells.iter().filter(|(n, _)| pred(n)).map(|(_, c)| c).sum()
    }
}

/// Parses the last module's report of Yosys' `stat` output (`None` if there is none).
pub fn parse_stat(text: &str) -> Option<Stat> {
    let start = text.rfind("Number of wires:")?;
    let mut st = Stat::default();
    let mut in_cells = false;
    for line in text[start..].lines() {
        let t = line.trim();
        if let Some(v) = t.strip_prefix("Number of memory bits:") {
            st.memory_bits = v.trim().parse().ok()?;
        } else if t.starts_with("Number of cells:") {
            in_cells = true;
        } else if in_cells {
            let mut it = t.split_whitespace();
            match (it.next(), it.next(), it.next()) {
                (Some(name), Some(n), None) => match n.parse::<u64>() {
                    Ok(n) => st.cells.push((name.to_string(), n)),
                    Err(_) => break,
                },
                _ => break,
            }
        }
    }
    Some(st)
}

/// One unit synthesized at one warp size.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SynthRow {
    /// `arbiter` or `sorted_list`.
    pub unit: String,
    /// Threads per warp.
    pub warp_size: u32,
    /// Warps.
    pub warps: u32,
    /// Logic cells: 4-input LUTs (Cyclone IV E `cycloneive_lcell_comb`, or generic `$lut`).
    pub logic_cells: u64,
    /// Flip-flops.
    pub flip_flops: u64,
    /// Bits of memories mapped to block RAM (M9K).
    pub memory_bits: u64,
    /// Block RAM cells.
    pub ram_blocks: u64,
    /// The tool and flow.
    pub tool: String,
    /// Seconds Yosys took.
    pub seconds: f64,
}

/// The plot: logic cells (solid) and flip-flops (dashed) of each unit against threads per warp, both
/// axes logarithmic (base 2 for W).
pub fn svg(rows: &[SynthRow], title: &str) -> String {
    let (w, h, left, right, top, bottom) = (760.0, 420.0, 80.0, 170.0, 44.0, 56.0);
    let pw = w - left - right;
    let ph = h - top - bottom;
    let xs: Vec<u32> = {
        let mut v: Vec<u32> = rows.iter().map(|r| r.warp_size).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let (xmin, xmax) = match (xs.first(), xs.last()) {
        (Some(&a), Some(&b)) if b > a => (f64::from(a).log2(), f64::from(b).log2()),
        (Some(&a), _) => (f64::from(a).log2() - 1.0, f64::from(a).log2() + 1.0),
        _ => (0.0, 1.0),
    };
    let vals = rows.iter().flat_map(|r| [r.logic_cells, r.flip_flops]).filter(|&v| v > 0);
    let ymax_v = vals.clone().max().unwrap_or(10).max(10) as f64;
    let ymin_v = vals.min().unwrap_or(1).max(1) as f64;
    let (ylo, yhi) = (ymin_v.log10().floor(), ymax_v.log10().ceil());
    let yhi = if yhi <= ylo { ylo + 1.0 } else { yhi };
    let px = |x: f64| left + (x - xmin) / (xmax - xmin) * pw;
    let py = |v: f64| top + ph - (v.max(1.0).log10() - ylo) / (yhi - ylo) * ph;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = write!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = write!(
        s,
        r#"<text x="{}" y="24" text-anchor="middle" font-size="14" font-weight="bold">{}</text>"#,
        left + pw / 2.0,
        crate::html::esc(title)
    );
    let mut e = ylo as i32;
    while f64::from(e) <= yhi {
        let y = py(10f64.powi(e));
        let _ = write!(
            s,
            r##"<line x1="{left}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            left + pw,
            left - 6.0,
            y + 4.0,
            10u64.pow(e.max(0) as u32)
        );
        e += 1;
    }
    for &x in &xs {
        let xp = px(f64::from(x).log2());
        let _ = write!(
            s,
            r##"<line x1="{xp:.1}" x2="{xp:.1}" y1="{top}" y2="{}" stroke="#eee"/><text x="{xp:.1}" y="{}" text-anchor="middle">{x}</text>"##,
            top + ph,
            top + ph + 18.0
        );
    }
    let _ = write!(
        s,
        r##"<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#333"/><text x="{}" y="{}" text-anchor="middle">threads per warp (log scale)</text><text transform="translate(18,{}) rotate(-90)" text-anchor="middle">cells (log scale)</text>"##,
        left + pw / 2.0,
        h - 14.0,
        top + ph / 2.0
    );
    let mut units: Vec<&str> = Vec::new();
    for r in rows {
        if !units.contains(&r.unit.as_str()) {
            units.push(r.unit.as_str());
        }
    }
    let mut legend = 0;
    for (k, unit) in units.iter().enumerate() {
        let color = crate::html::PALETTE[k % crate::html::PALETTE.len()];
        for (what, dash) in [("logic cells", ""), ("flip-flops", r#" stroke-dasharray="6 4""#)] {
            let mut pts: Vec<(f64, f64)> = rows
                .iter()
                .filter(|r| r.unit == *unit)
                .map(|r| {
                    let v = if what == "logic cells" { r.logic_cells } else { r.flip_flops };
                    (f64::from(r.warp_size), v as f64)
                })
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            let path: Vec<String> = pts.iter().map(|&(x, v)| format!("{:.1},{:.1}", px(x.log2()), py(v))).collect();
            let _ = write!(
                s,
                r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="2"{dash}/>"#,
                path.join(" ")
            );
            for &(x, v) in &pts {
                let _ = write!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{color}"><title>{unit} W={x} {what}: {v}</title></circle>"#,
                    px(x.log2()),
                    py(v)
                );
            }
            let ly = top + 10.0 + 20.0 * f64::from(legend);
            let lx = left + pw + 12.0;
            let _ = write!(
                s,
                r#"<line x1="{lx}" x2="{}" y1="{ly}" y2="{ly}" stroke="{color}" stroke-width="2"{dash}/><text x="{}" y="{}">{unit} {what}</text>"#,
                lx + 26.0,
                lx + 32.0,
                ly + 4.0
            );
            legend += 1;
        }
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "
=== sorted_list ===

   Number of wires:               4961
   Number of wire bits:          16928
   Number of memories:               1
   Number of memory bits:          704
   Number of processes:              0
   Number of cells:               8718
     altsyncram                      2
     cycloneive_lcell_comb        7387
     dffeas                        721

";

    #[test]
    fn parses_cells_and_memory_bits() {
        let st = parse_stat(STAT).unwrap();
        assert_eq!(st.memory_bits, 704);
        assert_eq!(st.count(|n| n == "dffeas"), 721);
        assert_eq!(st.count(|n| n.starts_with("cycloneive_lcell")), 7387);
        assert_eq!(st.cells.len(), 3);
        assert!(parse_stat("nothing").is_none());
    }

    #[test]
    fn plot_has_a_line_per_unit_and_measure() {
        let row = |unit: &str, w, l| SynthRow {
            unit: unit.into(),
            warp_size: w,
            warps: 8,
            logic_cells: l,
            flip_flops: l / 2,
            memory_bits: 0,
            ram_blocks: 0,
            tool: "t".into(),
            seconds: 0.0,
        };
        let rows = [row("arbiter", 4, 1000), row("sorted_list", 4, 900), row("arbiter", 8, 2000)];
        let s = svg(&rows, "t");
        assert_eq!(s.matches("<polyline").count(), 4);
        assert!(s.starts_with("<svg") && s.ends_with("</svg>\n"));
    }
}
