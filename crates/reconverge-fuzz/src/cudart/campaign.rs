//! The parent: runs children (one plan each, `--jobs` at a time), classifies how each ended, counts the
//! calls they made by entry point, saves crashes with their seed, plan, call log and output, and
//! minimises each crash to the calls it needs.

use super::api::Api;
use super::plan::Plan;
use super::{HarnessError, HARNESS_EXIT};
use serde::Serialize;
use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How a campaign runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// The executable children run (`reconverge-fuzz-cudart`, which takes `--child SEED`).
    pub exe: PathBuf,
    /// The shim the children load.
    pub shim: PathBuf,
    /// The first seed; child `i` runs seed `first_seed + i`.
    pub first_seed: u64,
    /// At most this many children (`None`: until the time is up).
    pub count: Option<u64>,
    /// Start no child after this long (`None`: until `count` children ran).
    pub seconds: Option<f64>,
    /// Children at once.
    pub jobs: usize,
    /// A child running longer than this is a crash (a hang).
    pub timeout: Duration,
    /// Where crashes are saved (`seed-N/`) and the children's working files kept (`.work/`).
    pub out: PathBuf,
    /// Minimise each crash to the calls it needs.
    pub minimise: bool,
    /// Children crash on purpose at this call (checks the harness).
    pub canary: Option<usize>,
}

/// How a child ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// It exited with this status.
    Exit(i32),
    /// A signal killed it.
    Signal(i32),
    /// It ran past the timeout (and was killed).
    Timeout,
}

impl End {
    /// The end an exit status means.
    pub fn of(status: ExitStatus) -> End {
        match (status.code(), status.signal()) {
            (Some(c), _) => End::Exit(c),
            (None, Some(s)) => End::Signal(s),
            (None, None) => End::Exit(-1),
        }
    }

    /// Whether it is a crash: anything but exit 0 or the shim's documented statuses 2 (bad input), 3
    /// (deadlock) and 4 (limit).
    pub fn is_crash(self) -> bool {
        !matches!(self, End::Exit(0 | 2 | 3 | 4))
    }

    /// The class it is counted under: `exit 0`, `exit 2`, `exit 3`, `exit 4` or `crash`.
    pub fn class(self) -> String {
        match self {
            End::Exit(c @ (0 | 2 | 3 | 4)) => format!("exit {c}"),
            _ => "crash".into(),
        }
    }

    /// In words: `signal 11 (SIGSEGV)`, `exit 70 (the shim's internal error)`, `timeout`.
    pub fn describe(self) -> String {
        match self {
            End::Exit(70) => "exit 70 (the shim's internal error)".into(),
            End::Exit(c) => format!("exit {c}"),
            End::Signal(s) => {
                let name = match s {
                    libc::SIGSEGV => "SIGSEGV",
                    libc::SIGABRT => "SIGABRT",
                    libc::SIGBUS => "SIGBUS",
                    libc::SIGILL => "SIGILL",
                    libc::SIGFPE => "SIGFPE",
                    libc::SIGKILL => "SIGKILL, maybe the out-of-memory killer",
                    libc::SIGTRAP => "SIGTRAP",
                    _ => "",
                };
                format!("signal {s} ({name})")
            }
            End::Timeout => "timeout".into(),
        }
    }
}

/// One crash.
#[derive(Clone, Debug, Serialize)]
pub struct Crash {
    /// The plan's seed.
    pub seed: u64,
    /// How the child ended.
    pub what: String,
    /// The entry point that was running (the log's last call without a result), if any.
    pub entry: Option<String>,
    /// The plan's call that was running (`#N ...`).
    pub call: Option<String>,
    /// Where it was saved.
    pub dir: String,
    /// The calls (plan indices) that still crash the same way, when minimised.
    pub minimal: Option<Vec<usize>>,
    /// The command that reproduces it.
    pub reproduce: String,
    /// The end of the child's output.
    pub output: String,
    #[serde(skip)]
    end: Option<End>,
}

/// A campaign's totals.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Totals {
    /// Wall time, seconds.
    pub seconds: f64,
    /// The first seed.
    pub first_seed: u64,
    /// Children run (one sequence each).
    pub children: u64,
    /// Sequences per minute.
    pub per_minute: f64,
    /// Children whose plan registers a damaged fat binary or wrapper.
    pub damaged_fatbins: u64,
    /// Entry-point calls made.
    pub calls: u64,
    /// Calls by entry point (every entry point the fuzzer drives is listed, with 0 for none).
    pub calls_by_entry: BTreeMap<String, u64>,
    /// Children by how they ended: `exit 0`, `exit 2`, `exit 3`, `exit 4`, `crash`.
    pub ends: BTreeMap<String, u64>,
    /// Children that ended inside an entry point (a documented exit status or a crash), by status and
    /// entry point: `exit 2 in __cudaRegisterFatBinary`.
    pub ends_in: BTreeMap<String, u64>,
    /// The child that ran longest: its seed and seconds (how far below the timeout the children stay).
    pub slowest: (u64, f64),
    /// The crashes.
    pub crashes: Vec<Crash>,
}

impl Totals {
    /// The totals in words: one line of counts, the ends, the calls by entry point, the crashes.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "runtime fuzzing: {} sequences in {:.0} s ({:.1} per minute), seeds {}..{}, {} calls, {} with a damaged fat binary\n",
            self.children,
            self.seconds,
            self.per_minute,
            self.first_seed,
            self.first_seed + self.children,
            self.calls,
            self.damaged_fatbins
        );
        s.push_str(&format!("slowest sequence: seed {}, {:.2} s\n", self.slowest.0, self.slowest.1));
        let ends: Vec<String> = self.ends.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        s.push_str(&format!("ends: {}\n", ends.join(", ")));
        let inside: Vec<String> = self.ends_in.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        s.push_str(&format!("ended inside a call: {}\n", inside.join(", ")));
        let calls: Vec<String> = self.calls_by_entry.iter().map(|(k, v)| format!("{k} {v}")).collect();
        s.push_str(&format!("calls by entry point: {}\n", calls.join(", ")));
        if self.crashes.is_empty() {
            s.push_str("crashes: 0\n");
        } else {
            let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
            for c in &self.crashes {
                *kinds.entry(format!("{} in {}", c.what, c.entry.as_deref().unwrap_or("no call"))).or_default() += 1;
            }
            let kinds: Vec<String> = kinds.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            s.push_str(&format!("crashes: {} ({})\n", self.crashes.len(), kinds.join(", ")));
        }
        for c in &self.crashes {
            s.push_str(&format!(
                "crash: seed {}: {} in {} ({}){}; saved in {}; reproduce: {}\n",
                c.seed,
                c.what,
                c.entry.as_deref().unwrap_or("no call"),
                c.call.as_deref().unwrap_or("-"),
                c.minimal.as_ref().map_or(String::new(), |m| format!("; minimal: calls {m:?}")),
                c.dir,
                c.reproduce
            ));
        }
        s
    }
}

/// What a child's log says: the entry points it entered, the last plan call, and the entry point that
/// did not return (the log's last line, when it has no result).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogSummary {
    /// Entry points entered, in order.
    pub entries: Vec<String>,
    /// The last plan call begun (`#N ...`).
    pub last_call: Option<String>,
    /// The entry point running when the log ends, if one was.
    pub unfinished: Option<String>,
}

/// Reads a child's log.
pub fn read_log(text: &str) -> LogSummary {
    let mut s = LogSummary::default();
    for line in text.lines() {
        if line.starts_with('#') {
            s.last_call = Some(line.to_string());
            s.unfinished = None;
        } else if let Some(rest) = line.strip_prefix("  ") {
            let name = rest.split('(').next().unwrap_or("").to_string();
            if name.starts_with("cuda") || name.starts_with("__cuda") {
                s.unfinished = (!rest.contains(") = ")).then(|| name.clone());
                s.entries.push(name);
            }
        }
    }
    s
}

/// The shortest sublist of `items` found (by removing chunks, halving their size, up to `max_tries`
/// tries) for which `fails` still holds; `fails(items)` is assumed.
pub fn minimise(items: Vec<usize>, max_tries: usize, mut fails: impl FnMut(&[usize]) -> bool) -> Vec<usize> {
    let mut keep = items;
    let mut chunk = keep.len().div_ceil(2).max(1);
    let mut tries = 0;
    loop {
        let mut i = 0;
        while i < keep.len() {
            if tries >= max_tries {
                return keep;
            }
            tries += 1;
            let candidate: Vec<usize> =
                keep[..i].iter().chain(keep[(i + chunk).min(keep.len())..].iter()).copied().collect();
            if fails(&candidate) {
                keep = candidate;
            } else {
                i += chunk;
            }
        }
        if chunk == 1 {
            return keep;
        }
        chunk = chunk.div_ceil(2);
    }
}

/// A child that is running.
struct Running {
    seed: u64,
    child: std::process::Child,
    started: Instant,
    log: PathBuf,
    output: PathBuf,
}

/// The last `n` characters of `text`.
fn tail(text: &str, n: usize) -> String {
    let start = text.char_indices().rev().nth(n).map_or(0, |(i, _)| i);
    text[start..].to_string()
}

/// Starts the child of `seed` (working files named after `slot`), with only the calls `keep` when given.
fn spawn(opts: &Options, seed: u64, slot: &str, keep: Option<&[usize]>) -> Result<Running, HarnessError> {
    let work = opts.out.join(".work");
    std::fs::create_dir_all(&work).map_err(|e| HarnessError::Io(work.display().to_string(), e))?;
    let (log, output) = (work.join(format!("{slot}.log")), work.join(format!("{slot}.out")));
    let io = |p: &Path, e| HarnessError::Io(p.display().to_string(), e);
    let out = std::fs::File::create(&output).map_err(|e| io(&output, e))?;
    let err = out.try_clone().map_err(|e| io(&output, e))?;
    let mut cmd = Command::new(&opts.exe);
    cmd.arg("--child").arg(seed.to_string()).arg("--shim").arg(&opts.shim).arg("--log").arg(&log);
    if let Some(k) = keep {
        cmd.arg("--keep").arg(keep_arg(k));
    }
    if let Some(c) = opts.canary {
        cmd.arg("--canary").arg(c.to_string());
    }
    set_env(&mut cmd, seed);
    cmd.stdin(Stdio::null()).stdout(out).stderr(err);
    let child = cmd.spawn().map_err(|e| io(&opts.exe, e))?;
    Ok(Running { seed, child, started: Instant::now(), log, output })
}

/// `--keep`'s value: the indices, comma-separated (`-` for none).
pub fn keep_arg(keep: &[usize]) -> String {
    if keep.is_empty() {
        return "-".into();
    }
    keep.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(",")
}

/// Reads `--keep`'s value (what [`keep_arg`] writes).
pub fn parse_keep(s: &str) -> Result<Vec<usize>, std::num::ParseIntError> {
    if s == "-" {
        return Ok(Vec::new());
    }
    s.split(',').map(|t| t.trim().parse::<usize>()).collect()
}

/// The child's environment: the plan's settings for the shim, and no other `RECONVERGE_*` variable
/// (no statistics file, channel or PTX directory of the parent's).
pub fn set_env(cmd: &mut Command, seed: u64) {
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("RECONVERGE_") {
            cmd.env_remove(k);
        }
    }
    for (k, v) in Plan::generate(seed).env {
        cmd.env(k, v);
    }
}

/// Waits for `r` to end (killing it past the timeout): how it ended.
fn poll(r: &mut Running, timeout: Duration) -> Result<Option<End>, HarnessError> {
    let io = |e| HarnessError::Io(format!("child of seed {}", r.seed), e);
    if let Some(status) = r.child.try_wait().map_err(io)? {
        return Ok(Some(End::of(status)));
    }
    if r.started.elapsed() > timeout {
        let _ = r.child.kill();
        r.child.wait().map_err(io)?;
        return Ok(Some(End::Timeout));
    }
    Ok(None)
}

/// Runs one child to its end: how it ended, its log and its output.
fn run_once(opts: &Options, seed: u64, keep: Option<&[usize]>) -> Result<(End, String, String), HarnessError> {
    let mut r = spawn(opts, seed, "single", keep)?;
    loop {
        if let Some(end) = poll(&mut r, opts.timeout)? {
            let log = std::fs::read_to_string(&r.log).unwrap_or_default();
            let output = std::fs::read_to_string(&r.output).unwrap_or_default();
            return Ok((end, log, output));
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// The campaign state between children.
struct Campaign<'a> {
    opts: &'a Options,
    totals: Totals,
    started: Instant,
    /// Children started and not yet counted.
    running: u64,
}

impl Campaign<'_> {
    /// Counts a finished child; saves it when it crashed.
    fn finish(&mut self, r: &Running, end: End) -> Result<(), HarnessError> {
        let log = std::fs::read_to_string(&r.log).unwrap_or_default();
        let output = std::fs::read_to_string(&r.output).unwrap_or_default();
        if end == End::Exit(HARNESS_EXIT) {
            return Err(HarnessError::Child { seed: r.seed, output: tail(&output, 4000) });
        }
        let summary = read_log(&log);
        let took = r.started.elapsed().as_secs_f64();
        if took > self.totals.slowest.1 {
            self.totals.slowest = (r.seed, took);
        }
        self.totals.children += 1;
        self.totals.damaged_fatbins += u64::from(Plan::generate(r.seed).damaged);
        self.totals.calls += summary.entries.len() as u64;
        for e in summary.entries.iter() {
            *self.totals.calls_by_entry.entry(e.clone()).or_default() += 1;
        }
        *self.totals.ends.entry(end.class()).or_default() += 1;
        if let Some(entry) = &summary.unfinished {
            *self.totals.ends_in.entry(format!("{} in {entry}", end.describe())).or_default() += 1;
        }
        if end.is_crash() {
            let crash = save(self.opts, r.seed, end, &log, &output)?;
            self.totals.crashes.push(crash);
        }
        Ok(())
    }

    /// Whether another child may start.
    fn may_start(&self) -> bool {
        let seconds_left = self.opts.seconds.is_none_or(|s| self.started.elapsed().as_secs_f64() < s);
        let count_left = self.opts.count.is_none_or(|c| self.totals.children + self.running < c);
        seconds_left && count_left && (self.opts.seconds.is_some() || self.opts.count.is_some())
    }
}

/// Saves a crash in `out/seed-N/`: the plan, the call log, the output, the reproducing command.
fn save(opts: &Options, seed: u64, end: End, log: &str, output: &str) -> Result<Crash, HarnessError> {
    let dir = opts.out.join(format!("seed-{seed}"));
    let io = |e| HarnessError::Io(dir.display().to_string(), e);
    std::fs::create_dir_all(&dir).map_err(io)?;
    let summary = read_log(log);
    let reproduce = format!("reconverge-fuzz-cudart --shim {} --replay {seed}", opts.shim.display());
    std::fs::write(dir.join("plan.txt"), Plan::generate(seed).describe()).map_err(io)?;
    std::fs::write(dir.join("log.txt"), log).map_err(io)?;
    std::fs::write(dir.join("output.txt"), output).map_err(io)?;
    std::fs::write(dir.join("crash.txt"), format!("{}\n{}\n", end.describe(), reproduce)).map_err(io)?;
    Ok(Crash {
        seed,
        what: end.describe(),
        entry: summary.unfinished,
        call: summary.last_call,
        dir: dir.display().to_string(),
        minimal: None,
        reproduce,
        output: tail(output, 2000),
        end: Some(end),
    })
}

/// Runs a campaign; `progress` sees the totals after each child.
pub fn run(opts: &Options, mut progress: impl FnMut(&Totals)) -> Result<Totals, HarnessError> {
    let totals = Totals { first_seed: opts.first_seed, ..Totals::default() };
    let mut c = Campaign { opts, totals, started: Instant::now(), running: 0 };
    for name in Api::NAMES {
        c.totals.calls_by_entry.insert(name.to_string(), 0);
    }
    let mut slots: Vec<Option<Running>> = (0..opts.jobs.max(1)).map(|_| None).collect();
    let mut next = opts.first_seed;
    loop {
        for (j, slot) in slots.iter_mut().enumerate() {
            if slot.is_none() && c.may_start() {
                *slot = Some(spawn(opts, next, &format!("job{j}"), None)?);
                next += 1;
                c.running += 1;
            }
        }
        if slots.iter().all(Option::is_none) {
            break;
        }
        for slot in slots.iter_mut() {
            let Some(r) = slot else { continue };
            if let Some(end) = poll(r, opts.timeout)? {
                c.running -= 1;
                c.finish(r, end)?;
                *slot = None;
                progress(&c.totals);
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    c.totals.seconds = c.started.elapsed().as_secs_f64();
    c.totals.per_minute = c.totals.children as f64 * 60.0 / c.totals.seconds.max(1e-9);
    if opts.minimise {
        for crash in c.totals.crashes.iter_mut().take(20) {
            minimise_crash(opts, crash)?;
        }
    }
    Ok(c.totals)
}

/// Minimises a saved crash to the calls it needs (the same end), and writes `minimal.txt` beside it: the
/// calls kept and the log of a run with only them.
pub fn minimise_crash(opts: &Options, crash: &mut Crash) -> Result<(), HarnessError> {
    let Some(end) = crash.end else { return Ok(()) };
    let plan = Plan::generate(crash.seed);
    // Calls after the one that crashed play no part.
    let last = crash.call.as_deref().and_then(|l| l[1..].split(' ').next()?.parse::<usize>().ok());
    let upto = last.map_or(plan.calls.len(), |i| (i + 1).min(plan.calls.len()));
    let max_tries = if end == End::Timeout { 6 } else { 300 };
    let mut error = None;
    let keep = minimise((0..upto).collect(), max_tries, |keep| match run_once(opts, crash.seed, Some(keep)) {
        Ok((e, _, _)) => e == end,
        Err(e) => {
            error.get_or_insert(e);
            false
        }
    });
    if let Some(e) = error {
        return Err(e);
    }
    let (e, log, _) = run_once(opts, crash.seed, Some(&keep))?;
    let mut text = format!(
        "{} with calls {} of seed {} (this run: {})\n",
        end.describe(),
        keep_arg(&keep),
        crash.seed,
        e.describe()
    );
    for &i in &keep {
        text.push_str(&format!("#{i} {:?}\n", plan.calls[i]));
    }
    text.push_str("\nlog:\n");
    text.push_str(&log);
    std::fs::write(Path::new(&crash.dir).join("minimal.txt"), text)
        .map_err(|e| HarnessError::Io(crash.dir.clone(), e))?;
    crash.reproduce = format!("{} --keep {}", crash.reproduce, keep_arg(&keep));
    crash.minimal = Some(keep);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exit 0, 2, 3 and 4 are fine; a signal, exit 70 (the shim's internal error), any other status and
    /// a timeout are crashes.
    #[test]
    fn ends_are_classified() {
        let end = |raw| End::of(ExitStatus::from_raw(raw));
        for (raw, want, crash) in [
            (0, End::Exit(0), false),
            (2 << 8, End::Exit(2), false),
            (3 << 8, End::Exit(3), false),
            (4 << 8, End::Exit(4), false),
            (70 << 8, End::Exit(70), true),
            (1 << 8, End::Exit(1), true),
            (101 << 8, End::Exit(101), true),
            (libc::SIGSEGV, End::Signal(libc::SIGSEGV), true),
            (libc::SIGABRT, End::Signal(libc::SIGABRT), true),
            (libc::SIGKILL, End::Signal(libc::SIGKILL), true),
        ] {
            assert_eq!(end(raw), want);
            assert_eq!(want.is_crash(), crash, "{want:?}");
            assert_eq!(want.class(), if crash { "crash".to_string() } else { format!("exit {}", (raw >> 8)) });
        }
        assert!(End::Timeout.is_crash());
        assert_eq!(End::Signal(11).describe(), "signal 11 (SIGSEGV)");
    }

    #[test]
    fn the_log_names_the_unfinished_call() {
        let log = "#0 Malloc\n  cudaMalloc(0x10, 4) = 0\n#1 Memcpy\n  cudaMemcpy(0x0, 0x8, 4, 1)";
        let s = read_log(log);
        assert_eq!(s.entries, ["cudaMalloc", "cudaMemcpy"]);
        assert_eq!(s.last_call.as_deref(), Some("#1 Memcpy"));
        assert_eq!(s.unfinished.as_deref(), Some("cudaMemcpy"));
        let done = read_log("#0 X\n  cudaFree(0x0) = 0\n    text \"x\"\n");
        assert_eq!((done.unfinished, done.entries.len()), (None, 1));
    }

    #[test]
    fn keep_lists_round_trip() {
        for keep in [vec![], vec![0], vec![3, 17, 200]] {
            assert_eq!(parse_keep(&keep_arg(&keep)), Ok(keep));
        }
        assert!(parse_keep("1,x").is_err());
    }

    #[test]
    fn minimising_keeps_what_the_failure_needs() {
        let fails = |k: &[usize]| k.contains(&3) && k.contains(&17);
        assert_eq!(minimise((0..40).collect(), 1000, fails), [3, 17]);
        let mut tries = 0;
        let kept = minimise((0..40).collect(), 5, |k| {
            tries += 1;
            fails(k)
        });
        assert_eq!(tries, 5, "the budget bounds the tries");
        assert!(kept.contains(&3) && kept.contains(&17));
    }
}
