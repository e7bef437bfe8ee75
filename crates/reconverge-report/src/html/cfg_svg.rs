//! A function's control-flow graph as SVG, laid out by `layout-rs` (a layered Sugiyama layout in Rust; no
//! Graphviz): blocks coloured by the share of their executions that were divergent, reconvergence points
//! drawn with a double border, back edges dashed. Blocks name their PTX line and, where the kernel has
//! line information, their CUDA line, each labelled as such.

use crate::cfg::{FunctionReport, ReconvergenceReport};
use layout::backends::svg::SVGWriter;
use layout::core::base::Orientation;
use layout::core::color::Color;
use layout::core::geometry::Point;
use layout::core::style::{LineStyleKind, StyleAttr};
use layout::std_shapes::shapes::{Arrow, Element, LineEndKind, ShapeKind};
use layout::topo::layout::VisualGraph;

/// Per block (by index in `f.blocks`): executions and divergent executions.
pub type BlockCounts = [(u64, u64)];

/// The fill colour of a block with `share` of its executions divergent: green (converged) through yellow
/// to red; grey when never executed.
pub fn heat(share: Option<f64>) -> u32 {
    let Some(s) = share else { return 0xe6e6e6ff };
    let s = s.clamp(0.0, 1.0);
    // Two linear ramps: #a6dba0 → #fee08b → #f46d43.
    let (a, b, t) = if s < 0.5 { (0xa6dba0u32, 0xfee08bu32, s * 2.0) } else { (0xfee08b, 0xf46d43, s * 2.0 - 1.0) };
    let ch = |sh: u32| {
        let x = ((a >> sh) & 0xff) as f64;
        let y = ((b >> sh) & 0xff) as f64;
        (x + (y - x) * t).round() as u32
    };
    (ch(16) << 24) | (ch(8) << 16) | (ch(0) << 8) | 0xff
}

/// The SVG of `f` with `counts` per block.
pub fn cfg_svg(f: &FunctionReport, counts: &BlockCounts) -> String {
    let mut vg = VisualGraph::new(Orientation::TopToBottom);
    let reconv: std::collections::BTreeSet<u32> = f
        .branches
        .iter()
        .filter(|b| b.may_diverge)
        .filter_map(|b| match &b.reconvergence {
            ReconvergenceReport::Block { block, .. } => Some(*block),
            ReconvergenceReport::Exit(_) => None,
        })
        .collect();
    let mut handles = Vec::new();
    for (i, b) in f.blocks.iter().enumerate() {
        let (execs, div) = counts.get(i).copied().unwrap_or((0, 0));
        let share = (execs > 0).then(|| div as f64 / execs as f64);
        // PTX and CUDA line numbers are told apart: the page's heat map may number either.
        let mut label = match b.loc.as_ref().filter(|l| l.line > 0) {
            Some(l) => format!("{}\nPTX line {} · CUDA line {}", b.name, b.ptx_line, l.line),
            None => format!("{}\nPTX line {}", b.name, b.ptx_line),
        };
        match share {
            Some(s) => label.push_str(&format!("\n{execs} exec, {:.0}% divergent", 100.0 * s)),
            None => label.push_str("\nnot executed"),
        }
        if reconv.contains(&b.index) {
            label.push_str("\n◆ reconvergence point");
        }
        let border = if reconv.contains(&b.index) { 4 } else { 1 };
        let look = StyleAttr::new(Color::new(0x333333ff), border, Some(Color::new(heat(share))), 4, 13);
        let size = Point::new(220.0, if reconv.contains(&b.index) { 88.0 } else { 72.0 });
        handles.push(vg.add_node(Element::create(ShapeKind::new_box(&label), look, Orientation::TopToBottom, size)));
    }
    for (i, b) in f.blocks.iter().enumerate() {
        for e in &b.succs {
            let Some(to) = e.to else { continue };
            let Some(j) = f.blocks.iter().position(|x| x.index == to) else { continue };
            let back = j <= i;
            let style = if back { LineStyleKind::Dashed } else { LineStyleKind::Normal };
            let look = StyleAttr::new(Color::new(0x444444ff), 1, None, 0, 11);
            let arrow = Arrow::new(LineEndKind::None, LineEndKind::Arrow, style, e.kind, &look, &None, &None);
            vg.add_edge(arrow, handles[i], handles[j]);
        }
    }
    let mut svg = SVGWriter::new();
    vg.do_it(false, false, false, &mut svg);
    let out = sorted_style(&svg.finalize());
    // Inline in the page: drop any XML prolog, let CSS size it.
    match out.find("<svg") {
        Some(k) => out[k..].to_string(),
        None => out,
    }
}

/// `svg` with the rules of its `<style>` element in sorted order: the layout crate writes its font classes
/// from a hash map, in an order that changes from run to run, and the same report must be the same bytes.
/// Each rule is one line and names its own class, so their order means nothing.
fn sorted_style(svg: &str) -> String {
    let (Some(open), Some(close)) = (svg.find("<style>\n"), svg.find("</style>")) else { return svg.to_string() };
    let body = open + "<style>\n".len();
    if close < body {
        return svg.to_string();
    }
    let mut rules: Vec<&str> = svg[body..close].lines().collect();
    rules.sort_unstable();
    let mut out = String::with_capacity(svg.len());
    out.push_str(&svg[..body]);
    for r in rules {
        out.push_str(r);
        out.push('\n');
    }
    out.push_str(&svg[close..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_say_which_lines_are_ptx_lines() {
        let ptx = "\n.version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u32 n)\n{\n.reg .pred %p<2>;\n.reg .b32 %r<3>;\nld.param.u32 %r1, [n];\nmov.u32 %r2, %tid.x;\nsetp.lt.u32 %p1, %r2, %r1;\n@%p1 bra $L__BB0_2;\nmov.u32 %r2, 0;\n$L__BB0_2:\nret;\n}\n";
        let module = reconverge_ptx::parse(ptx).expect("parses");
        let report = crate::cfg_report(&module, "k.ptx", ptx, None, None);
        let f = &report.functions[0];
        let svg = cfg_svg(f, &vec![(1, 0); f.blocks.len()]);
        assert!(svg.contains("PTX line"), "{svg}");
        assert!(!svg.contains("(line "), "{svg}");
    }

    #[test]
    fn style_rules_come_out_in_one_order() {
        let a = "<svg><style>\n.a13 { font-size: 13px; }\n.a11 { font-size: 11px; }\n</style><g/></svg>";
        let b = "<svg><style>\n.a11 { font-size: 11px; }\n.a13 { font-size: 13px; }\n</style><g/></svg>";
        assert_eq!(sorted_style(a), b);
        assert_eq!(sorted_style(b), b);
        assert_eq!(sorted_style("<svg><g/></svg>"), "<svg><g/></svg>");
    }

    #[test]
    fn the_heat_scale_runs_from_green_to_red() {
        assert_eq!(heat(Some(0.0)), 0xa6dba0ff);
        assert_eq!(heat(Some(0.5)), 0xfee08bff);
        assert_eq!(heat(Some(1.0)), 0xf46d43ff);
        assert_eq!(heat(None), 0xe6e6e6ff);
    }
}
