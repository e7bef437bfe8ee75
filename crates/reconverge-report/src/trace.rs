//! Step-by-step traces: one line per issued instruction of a warp, with the reconvergence structure after
//! it.

use reconverge_mechanism::EntryView;
use reconverge_program::{mask_string, pc_string, Program};
use reconverge_sim::{IssueEvent, Observer};
use std::fmt::Write;

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
            let body = format!("{} {}", self.block(e.pc), mask_string(m, self.width));
            others.push(if sync { format!("[{body}]") } else { format!("({body})") });
        }
        let src = self.prog.info[ev.pc as usize].loc.filter(|l| l.line > 0).map(|l| format!(":{}", l.line));
        self.lines.push(format!(
            "{:>5}  {:<5} {:<6} {:<w$}  {}",
            self.seen - 1,
            self.block(ev.pc),
            src.unwrap_or_default(),
            mask_string(ev.mask, self.width),
            others.join(" "),
            w = self.width as usize
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
                w = self.width as usize
            );
        }
        format!(
            "{:>5} {:>4} {:>5} {:<10} {:<w$} {:<40} structure after (bottom → top: mask npc rpc)",
            "#",
            "pc",
            "line",
            "source",
            "active lanes (lane 0 first)",
            "instruction",
            w = self.width.max(27) as usize
        )
    }

    fn entries(&self, es: &[EntryView]) -> String {
        let mut s = String::new();
        for e in es {
            let kind = if e.kind.unlabelled() { String::new() } else { format!("{} ", e.kind.label()) };
            let masks: Vec<String> = e.lanes.iter().map(|m| mask_string(*m, self.width)).collect();
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
        let mut lanes_col = mask_string(ev.mask, self.width);
        if self.warp.is_none() {
            let from: Vec<String> = ev.lanes.split(ev.mask).map(|(w, _)| w.to_string()).collect();
            lanes_col = format!("{lanes_col} w{}", from.join(","));
        }
        self.lines.push(format!(
            "{:>5} {:>4} {:>5} {:<10} {:<w$} {:<40} {}",
            self.seen - 1,
            ev.pc,
            line,
            src,
            lanes_col,
            info.text,
            self.entries(&ev.entries),
            w = self.width.max(27) as usize
        ));
    }
}
