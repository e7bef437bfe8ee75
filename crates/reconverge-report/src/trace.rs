//! Step-by-step traces: one line per issued instruction of a warp, with the reconvergence structure after
//! it. Lane masks read lane 0 first as `0`/`1` up to [`BINARY_LANES`] lanes; wider warps print them in
//! hexadecimal with lane `i` as bit `i` (`0x0000ffff`: lanes 0-15), so that a line at 32 lanes under a
//! CTA-wide mechanism stays within a screen or two rather than hundreds of columns.

use reconverge_mechanism::EntryView;
use reconverge_program::{mask_string, pc_string, LaneMask, Program};
use reconverge_sim::{IssueEvent, Observer};
use std::fmt::Write;

/// The widest warp whose lane masks the trace prints lane by lane (wider: hexadecimal).
pub const BINARY_LANES: u32 = 16;

/// `mask` of a `width`-lane warp as the trace prints it: `0`/`1` per lane, lane 0 first, up to
/// [`BINARY_LANES`] lanes; `0x` and hexadecimal digits with lane `i` as bit `i` above.
pub fn trace_mask(mask: LaneMask, width: u32) -> String {
    if width <= BINARY_LANES {
        return mask_string(mask, width);
    }
    let digits = width.div_ceil(4) as usize;
    let mask = if width >= 64 { mask } else { mask & ((1 << width) - 1) };
    format!("0x{mask:0digits$x}")
}

/// Collects the trace of one warp (per-warp mechanisms) or of one CTA (mechanisms whose issue contexts
/// are not static warps: the CTA-wide stack of TBC, the warp pool of DWF).
pub struct TraceRecorder<'p> {
    prog: &'p Program,
    cta: u64,
    warp: Option<u32>,
    width: u32,
    limit: usize,
    skip: usize,
    seen: usize,
    figure: bool,
    last_block: Option<(u32, u64)>,
    /// The lines so far.
    pub lines: Vec<String>,
    /// Whether the limit cut the trace.
    pub truncated: bool,
}

impl<'p> TraceRecorder<'p> {
    /// Traces warp `warp` of CTA `cta` (linear index), or every issue of the CTA when `warp` is `None`, at
    /// most `limit` lines.
    pub fn new(prog: &'p Program, cta: u64, warp: Option<u32>, width: u32, limit: usize) -> TraceRecorder<'p> {
        TraceRecorder {
            prog,
            cta,
            warp,
            width,
            limit,
            skip: 0,
            seen: 0,
            figure: false,
            last_block: None,
            lines: Vec::new(),
            truncated: false,
        }
    }

    /// Prints one line per basic block a group enters instead of one per instruction, in the style of
    /// seed 003's Figure 1: the block and its active lanes, the saved paths in parentheses and the
    /// synchronisation points in brackets (after the block's first instruction).
    pub fn figure(mut self) -> Self {
        self.figure = true;
        self
    }

    /// The block name of `pc` (`B` and the block's index in its function, as `reconverge cfg` names it).
    fn block(&self, pc: u32) -> String {
        match self.prog.info.get(pc as usize) {
            Some(i) => format!("B{}", i.block),
            None => pc_string(pc),
        }
    }

    /// Whether `pc` starts a basic block.
    fn starts_block(&self, pc: u32) -> bool {
        let info = &self.prog.info;
        pc == 0
            || info
                .get(pc as usize - 1)
                .zip(info.get(pc as usize))
                .is_none_or(|(a, b)| a.block != b.block || a.func != b.func)
    }

    fn figure_line(&mut self, ev: &IssueEvent<'_>) {
        let key = (self.prog.info[ev.pc as usize].block, ev.mask);
        if !self.starts_block(ev.pc) && self.last_block == Some(key) {
            return;
        }
        self.last_block = Some(key);
        let mut others = Vec::new();
        let mut active_seen = false;
        for e in ev.entries.iter().rev() {
            let m = e.lanes.first().copied().unwrap_or(0);
            let sync = e.kind.waits();
            if !sync && !active_seen && m & ev.mask == ev.mask {
                active_seen = true;
                continue;
            }
            let body = format!("{} {}", self.block(e.pc), trace_mask(m, self.width));
            others.push(if sync { format!("[{body}]") } else { format!("({body})") });
        }
        let src = self.prog.info[ev.pc as usize].loc.filter(|l| l.line > 0).map(|l| format!(":{}", l.line));
        self.lines.push(format!(
            "{:>5}  {:<5} {:<6} {:<w$}  {}",
            self.seen - 1,
            self.block(ev.pc),
            src.unwrap_or_default(),
            trace_mask(ev.mask, self.width),
            others.join(" "),
            w = self.mask_chars()
        ));
    }

    /// Leaves out the first `n` traced instructions (they keep their numbers).
    pub fn skip(mut self, n: usize) -> Self {
        self.skip = n;
        self
    }

    /// The header line.
    pub fn header(&self) -> String {
        if self.figure {
            return format!(
                "{:>5}  {:<5} {:<6} {:<w$}  saved paths (block lanes), synchronisation points [block lanes]",
                "#",
                "block",
                "line",
                "active",
                w = self.mask_chars()
            );
        }
        format!(
            "{:>5} {:>4} {:>5} {:<10} {:<w$} {:<40} structure after (bottom → top: mask npc rpc; wN: warp N's lanes)",
            "#",
            "pc",
            "line",
            "source",
            if self.width <= BINARY_LANES { "active lanes (lane 0 first)" } else { "lanes (hex, bit i = lane i)" },
            "instruction",
            w = self.mask_chars().max(27)
        )
    }

    /// The characters of one printed mask.
    fn mask_chars(&self) -> usize {
        trace_mask(0, self.width).len()
    }

    fn entries(&self, es: &[EntryView]) -> String {
        let mut s = String::new();
        for e in es {
            let kind = if e.kind.unlabelled() { String::new() } else { format!("{} ", e.kind.label()) };
            // An entry over several warps (a CTA-wide or SM-wide pool) names only the warps it holds lanes of.
            let masks: Vec<String> = if e.lanes.len() > 1 {
                let held: Vec<String> = e
                    .lanes
                    .iter()
                    .enumerate()
                    .filter(|(_, m)| **m != 0)
                    .map(|(w, m)| format!("w{w}:{}", trace_mask(*m, self.width)))
                    .collect();
                if held.is_empty() {
                    vec!["-".to_string()]
                } else {
                    held
                }
            } else {
                e.lanes.iter().map(|m| trace_mask(*m, self.width)).collect()
            };
            let note = if e.note.is_empty() { String::new() } else { format!(" {}", e.note) };
            let _ = write!(s, "[{kind}{} {} {}{note}] ", masks.join("|"), pc_string(e.pc), pc_string(e.rpc));
        }
        s.trim_end().to_string()
    }
}

impl Observer for TraceRecorder<'_> {
    fn wants(&self, cta: u64, _ctx: u32) -> bool {
        // Contexts are static warps for most per-warp mechanisms but paths of one for parallel
        // traversals: the warp is checked from the lanes in `on_issue`.
        cta == self.cta
    }

    fn on_issue(&mut self, ev: &IssueEvent<'_>) {
        if self.warp.is_some_and(|w| ev.lanes.single_warp(ev.mask) != Some(w)) {
            return;
        }
        self.seen += 1;
        if self.seen <= self.skip {
            return;
        }
        if self.lines.len() >= self.limit {
            self.truncated = true;
            return;
        }
        if self.figure {
            self.figure_line(ev);
            return;
        }
        let info = &self.prog.info[ev.pc as usize];
        let src = info
            .loc
            .filter(|l| l.line > 0)
            .map(|l| {
                let f = self.prog.src_files.iter().find(|(i, _)| *i == l.file).map(|(_, f)| f.as_str()).unwrap_or("?");
                let base = f.rsplit('/').next().unwrap_or(f);
                let stem = base.strip_suffix(".cu").unwrap_or(base);
                format!("{stem}:{}", l.line)
            })
            .unwrap_or_default();
        let line = if info.ptx_line > 0 { info.ptx_line.to_string() } else { "+".into() };
        // A regrouped warp names the static warps its lanes come from.
        let mut lanes_col = trace_mask(ev.mask, self.width);
        if self.warp.is_none() {
            let from: Vec<String> = ev.lanes.split(ev.mask).map(|(w, _)| w.to_string()).collect();
            lanes_col = format!("{lanes_col} w{}", from.join(","));
        }
        let head = format!(
            "{:>5} {:>4} {:>5} {:<10} {:<w$} {:<40} ",
            self.seen - 1,
            ev.pc,
            line,
            src,
            lanes_col,
            info.text,
            w = self.mask_chars().max(27)
        );
        // A structure of more than a few entries (a DWF or TBC pool, a long path list) continues one entry
        // per line under its column, so that no line runs to hundreds of characters.
        let indent = " ".repeat(head.chars().count());
        let mut text = head;
        let all = self.entries(&ev.entries);
        if all.chars().count() <= STRUCTURE_LINE_CHARS {
            text.push_str(&all);
        } else {
            for (k, e) in ev.entries.iter().enumerate() {
                if k > 0 {
                    text.push('\n');
                    text.push_str(&indent);
                }
                text.push_str(&self.entries(std::slice::from_ref(e)));
            }
        }
        self.lines.push(text.trim_end().to_string());
    }
}

/// The most characters of structure a trace line holds; a longer structure is printed one entry per line.
const STRUCTURE_LINE_CHARS: usize = 120;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_above_16_lanes_are_hexadecimal_with_lane_i_as_bit_i() {
        assert_eq!(trace_mask(0b0110, 4), "0110");
        assert_eq!(trace_mask(0xffff, 16), "1111111111111111");
        assert_eq!(trace_mask(0x0000_ffff, 32), "0x0000ffff");
        assert_eq!(trace_mask(0xffff_ffe0, 32), "0xffffffe0");
        assert_eq!(trace_mask(1, 20), "0x00001");
        assert_eq!(trace_mask(u64::MAX, 64), "0xffffffffffffffff");
    }
}
