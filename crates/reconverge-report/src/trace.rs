//! Step-by-step traces: one line per issued instruction of a warp, with the reconvergence structure after
//! it.

use reconverge_sim::{mask_string, pc_string, EntryView, IssueEvent, Observer, Program};
use std::fmt::Write;

/// Collects the trace of one warp.
pub struct TraceRecorder<'p> {
    prog: &'p Program,
    cta: u64,
    warp: u32,
    width: u32,
    limit: usize,
    /// The lines so far.
    pub lines: Vec<String>,
    /// Whether the limit cut the trace.
    pub truncated: bool,
}

impl<'p> TraceRecorder<'p> {
    /// Traces warp `warp` of CTA `cta` (linear index), at most `limit` lines.
    pub fn new(prog: &'p Program, cta: u64, warp: u32, width: u32, limit: usize) -> TraceRecorder<'p> {
        TraceRecorder { prog, cta, warp, width, limit, lines: Vec::new(), truncated: false }
    }

    /// The header line.
    pub fn header(&self) -> String {
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
            let kind = if e.kind == "div" || e.kind == "group" { String::new() } else { format!("{} ", e.kind) };
            let _ = write!(s, "[{kind}{} {} {}] ", mask_string(e.mask, self.width), pc_string(e.pc), pc_string(e.rpc));
        }
        s.trim_end().to_string()
    }
}

impl Observer for TraceRecorder<'_> {
    fn wants(&self, cta: u64, warp: u32) -> bool {
        cta == self.cta && warp == self.warp
    }

    fn on_issue(&mut self, ev: &IssueEvent<'_>) {
        if self.lines.len() >= self.limit {
            self.truncated = true;
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
        self.lines.push(format!(
            "{:>5} {:>4} {:>5} {:<10} {:<w$} {:<40} {}",
            self.lines.len(),
            ev.pc,
            line,
            src,
            mask_string(ev.mask, self.width),
            info.text,
            self.entries(&ev.entries),
            w = self.width.max(27) as usize
        ));
    }
}
