//! `reconverge exec`: runs an unmodified CUDA program on the simulated GPU through the drop-in runtime
//! (`reconverge-cudart`, loaded as `libcudart.so.13`), then summarises its launches per kernel.
//!
//! The shim reports to `exec` on a private channel (a Unix socket the program inherits,
//! [`reconverge_cudart::settings::Channel`]): that it started, then each launch's statistics line. A
//! reader thread folds the lines into per-kernel totals while the program runs, so `exec` holds memory
//! bounded independently of the number of launches, and its status and summary never depend on reading
//! back the user's `--stats` file (which may be `/dev/null`, a pipe or a device). SIGTERM, SIGINT and
//! SIGHUP are forwarded to the program; `exec` waits for it, removes its temporary directory and exits
//! 128 + the signal.

use crate::Failure;
use clap::Args;
use reconverge_cudart::settings::{Channel, Message, CHANNEL_VAR, PER_PC_VAR, VARIABLES};
use reconverge_records::aggregate::{self, PerKernel};
use reconverge_records::per_pc::{KernelMap, LaunchPcs, ProgramPcs};
use reconverge_records::sampling::SampledCycles;
use reconverge_report::exec::ExecLaunches;
use serde_json::Value;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicI32, Ordering};

/// Arguments of `reconverge exec`.
#[derive(Args)]
#[command(after_help = env_help())]
pub(crate) struct ExecArgs {
    /// The divergence mechanism every launch runs under.
    #[arg(long, default_value = "pdom", value_parser = crate::launch_args::mechanism_values())]
    mechanism: String,
    /// GPU configuration: a preset or a TOML file (docs/configuration.md).
    #[arg(long, default_value = "gtx480")]
    config: String,
    /// Functional simulation only: no cycles, fastest.
    #[arg(long, conflicts_with = "config")]
    functional: bool,
    /// Threads per warp (a power of two, 1..64); default: the configuration's.
    #[arg(long)]
    warp_size: Option<u32>,
    /// Write one JSON line per launch (the kernel, grid, block and `run --json`'s statistics) to FILE.
    #[arg(long, value_name = "FILE.jsonl")]
    stats: Option<PathBuf>,
    /// Write an HTML page of the launches: per-kernel totals, each kernel's lines and CFG with their
    /// executions summed over its launches, and the first 1000 launches one by one.
    #[arg(long, value_name = "FILE.html")]
    html: Option<PathBuf>,
    /// Stop a launch after this many warp instructions (the program exits with status 4); 0 = no limit.
    #[arg(long, default_value_t = crate::launch_args::DEFAULT_MAX_INSTRUCTIONS)]
    max_instructions: u64,
    /// Stop a launch after this many cycles (status 4).
    #[arg(long)]
    max_cycles: Option<u64>,
    /// Most bytes of simulated device memory and model state (default: half of this machine's memory;
    /// K/M/G suffixes).
    #[arg(long, value_name = "BYTES")]
    max_memory: Option<String>,
    /// Host threads of the timing model (0 = all cores).
    #[arg(long, default_value_t = 0, value_parser = crate::launch_args::host_threads)]
    threads: usize,
    /// Time a sample of the launches: a launch doing the work of launches already timed runs
    /// functionally and its cycles are estimated from theirs, with a 95% bound (docs/cudart.md).
    #[arg(long, conflicts_with = "functional")]
    sample: bool,
    /// Time about one CTA in N of each timed launch (default 10) and estimate the others' cycles, as
    /// `run --sample-ctas` does (docs/speed.md, "CTA sampling").
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "10", conflicts_with = "functional",
          value_parser = clap::value_parser!(u32).range(2..=1_000_000))]
    sample_ctas: Option<u32>,
    /// Write each module's PTX (the code that runs) into DIR; messages then name its lines.
    #[arg(long, value_name = "DIR")]
    keep_ptx: Option<PathBuf>,
    /// The program and its arguments (after `--`).
    #[arg(required = true, last = true, value_name = "PROGRAM [ARGS]...")]
    program: Vec<String>,
}

/// The shim's file name as cargo builds it: CUDA 13's runtime, `libcudart.so.13`.
const SHIM: &str = "libreconverge_cudart.so";

/// CUDA 12's runtime, `libcudart.so.12` (crate `reconverge-cudart12`, built with the command line).
const SHIM12: &str = "libreconverge_cudart12.so";

/// The variable that names the directory of `--keep-ptx`.
const PTX_DIR_VAR: &str = "RECONVERGE_PTX_DIR";

/// The signals `exec` forwards to the program.
const FORWARDED: [i32; 3] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP];

/// The help text after the options: the environment variables the shim reads (from its own table), the
/// exit status and the signals.
pub(crate) fn env_help() -> String {
    let mut s = String::from(
        "The program runs with reconverge's libcudart.so.13 and libcudart.so.12 (for programs built with CUDA 12) \
         first on its library path; the flags reach it as \
         environment variables, which scripts that launch programs themselves can set directly:\n",
    );
    for (var, what) in VARIABLES {
        s.push_str(&format!("  {var:<29} {what}\n"));
    }
    s.push_str(
        "\nExit status: the program's; 128+N when it was killed by signal N; when it exited 0 although a launch \
         stopped early, 3 (deadlock), 4 (a limit) or 2 (an error in the simulator); 2 when it exited 0 without \
         loading reconverge's libcudart.so.13 or libcudart.so.12 (built with the static runtime, or not a CUDA \
         program). \
         SIGTERM, SIGINT and SIGHUP sent to exec are forwarded to the program; exec waits for it, removes its \
         temporary files and exits 128+the signal.\n\
         See docs/cudart.md for what the runtime supports and how to compile for it.",
    );
    s
}

/// The newest of the copies of `file` beside this executable `exe`: in its directory, its `deps/` (where
/// cargo leaves a library it builds as the command line's dependency) and one directory up (test
/// binaries). A direct `cargo build -p reconverge-cudart` leaves one beside the binary, building the
/// command line refreshes the one in `deps/`.
fn newest_beside(exe: &Path, file: &str) -> Option<PathBuf> {
    let dir = exe.parent().unwrap_or(Path::new("."));
    [Some(dir.to_path_buf()), Some(dir.join("deps")), dir.parent().map(Path::to_path_buf)]
        .into_iter()
        .flatten()
        .map(|d| d.join(file))
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .max_by_key(|(t, _)| *t)
        .map(|(_, p)| p)
}

/// Finds the shim (CUDA 13's runtime): `RECONVERGE_CUDART`, or the newest of the copies beside this
/// executable ([`newest_beside`]).
pub(crate) fn find_shim() -> Result<PathBuf, Failure> {
    if let Ok(p) = std::env::var("RECONVERGE_CUDART") {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe().map_err(|e| Failure::input(format!("cannot locate reconverge: {e}")))?;
    if let Some(p) = newest_beside(&exe, SHIM) {
        return Ok(p);
    }
    Err(Failure::input(format!(
        "the CUDA runtime shim {SHIM} is not beside {} (build it with `cargo build --release -p reconverge-cudart`, \
         or point RECONVERGE_CUDART at it)",
        exe.display()
    )))
}

/// Finds CUDA 12's runtime: `RECONVERGE_CUDART12`, else the copy beside `RECONVERGE_CUDART`'s shim when
/// that is set, else the newest copy beside this executable. `None` when there is none (a program built
/// with CUDA 12 then finds no `libcudart.so.12` of reconverge's).
pub(crate) fn find_shim12() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("RECONVERGE_CUDART12") {
        return Some(PathBuf::from(p));
    }
    if let Ok(p) = std::env::var("RECONVERGE_CUDART") {
        return Path::new(&p).parent().map(|d| d.join(SHIM12)).filter(|p| p.is_file());
    }
    newest_beside(&std::env::current_exe().ok()?, SHIM12)
}

/// Links `dir/NAME` to each library of `libraries` (`(NAME, library)`), replacing what was there.
pub(crate) fn link_libraries(dir: &Path, libraries: &[(&str, &Path)]) -> Result<(), Failure> {
    for (name, library) in libraries {
        let link = dir.join(name);
        let target = library.canonicalize().unwrap_or_else(|_| library.to_path_buf());
        if std::fs::read_link(&link).ok().as_ref() == Some(&target) {
            continue;
        }
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&target, &link).map_err(|e| Failure::input(format!("{}: {e}", link.display())))?;
    }
    Ok(())
}

/// The directory holding `libcudart.so.13` (a link to the shim) and, when CUDA 12's runtime is built,
/// `libcudart.so.12` (a link to it) for the program's library path, so that a program built with either
/// toolkit loads reconverge's runtime: private to this `exec`, removed when it ends.
fn library_dir(shim: &Path, shim12: Option<&Path>) -> Result<PathBuf, Failure> {
    let dir = std::env::temp_dir().join(format!("reconverge-exec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| Failure::input(format!("{}: {e}", dir.display())))?;
    let mut links = vec![("libcudart.so.13", shim)];
    links.extend(shim12.map(|s| ("libcudart.so.12", s)));
    link_libraries(&dir, &links)?;
    Ok(dir)
}

/// `p` as an absolute path (the program may change its directory before the shim reads it).
fn absolute(p: &Path) -> String {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()).display().to_string()
}

/// Empties `--stats FILE` when it is a regular file (or creates it), so that it holds this run's launches;
/// a device or pipe (`/dev/null`, `/dev/stdout`) is left as it is for the shim to append to.
fn prepare_stats(path: &Path) -> Result<(), Failure> {
    let fail = |e: std::io::Error| Failure::input(format!("--stats {}: {e}", path.display()));
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => Ok(()),
        _ => std::fs::write(path, "").map_err(fail),
    }
}

/// The environment the shim reads, from the flags, each checked here so that a bad value is the
/// command's error (naming the flag) before the program starts.
fn shim_env(a: &ExecArgs) -> Result<Vec<(&'static str, String)>, Failure> {
    let config = if a.functional {
        "functional".to_string()
    } else {
        crate::launch_args::gpu_config(&a.config)?;
        match reconverge_timing::GpuConfig::preset(&a.config) {
            Some(_) => a.config.clone(),
            None => absolute(Path::new(&a.config)),
        }
    };
    let mut env = vec![
        ("RECONVERGE_MECHANISM", a.mechanism.clone()),
        ("RECONVERGE_CONFIG", config),
        ("RECONVERGE_MAX_INSTRUCTIONS", a.max_instructions.to_string()),
        ("RECONVERGE_THREADS", a.threads.to_string()),
    ];
    if let Some(w) = a.warp_size {
        if !reconverge_program::launch::is_warp_size(w.into()) {
            return Err(Failure::input(format!("--warp-size {w}: a warp size is a power of two from 1 to 64")));
        }
        env.push(("RECONVERGE_WARP_SIZE", w.to_string()));
    }
    if let Some(c) = a.max_cycles {
        env.push(("RECONVERGE_MAX_CYCLES", c.to_string()));
    }
    if a.sample {
        env.push(("RECONVERGE_SAMPLE", "1".into()));
    }
    if let Some(n) = a.sample_ctas {
        env.push(("RECONVERGE_SAMPLE_CTAS", n.to_string()));
    }
    let memory = match &a.max_memory {
        Some(t) => crate::launch_args::bytes("max-memory", t)?,
        None => crate::launch_args::default_max_memory(),
    };
    env.push(("RECONVERGE_MAX_MEMORY", memory.to_string()));
    if let Some(s) = &a.stats {
        prepare_stats(s)?;
        env.push(("RECONVERGE_STATS", absolute(s)));
    }
    if let Some(d) = &a.keep_ptx {
        std::fs::create_dir_all(d).map_err(|e| Failure::input(format!("--keep-ptx {}: {e}", d.display())))?;
        env.push((PTX_DIR_VAR, absolute(d)));
    }
    Ok(env)
}

/// The program's process, for the signal handler (0: none running).
static CHILD: AtomicI32 = AtomicI32::new(0);

/// The first forwarded signal `exec` received (0: none).
static RECEIVED: AtomicI32 = AtomicI32::new(0);

/// The signal handler: remembers the signal and forwards it to the program. Only async-signal-safe
/// calls (atomics, `kill`).
extern "C" fn forward(sig: libc::c_int) {
    let _ = RECEIVED.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
    let child = CHILD.load(Ordering::SeqCst);
    if child > 0 {
        // SAFETY: kill is async-signal-safe; `child` is the program, which exec has not reaped yet.
        unsafe { libc::kill(child, sig) };
    }
}

/// Installs [`forward`] for SIGTERM, SIGINT and SIGHUP (restarting interrupted calls).
fn install_forwarding() {
    for sig in FORWARDED {
        // SAFETY: a zeroed sigaction is a valid value; the handler only touches atomics and calls kill.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = forward as extern "C" fn(libc::c_int) as libc::sighandler_t;
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// The name of signal `n` (`SIGSEGV`), or `signal N`.
fn signal_name(n: i32) -> String {
    let name = match n {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGSYS => "SIGSYS",
        _ => return format!("signal {n}"),
    };
    name.to_string()
}

/// Two connected sockets (close-on-exec): exec's end and the program's.
fn socket_pair() -> Result<(OwnedFd, OwnedFd), Failure> {
    let mut fds = [0i32; 2];
    // SAFETY: `fds` has room for the two descriptors socketpair writes.
    let r = unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0, fds.as_mut_ptr()) };
    if r != 0 {
        return Err(Failure::input(format!("cannot open the runtime's channel: {}", std::io::Error::last_os_error())));
    }
    // SAFETY: socketpair succeeded: both descriptors are open and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// A pipe (close-on-exec): its read and write ends.
fn pipe() -> Result<(OwnedFd, OwnedFd), Failure> {
    let mut fds = [0i32; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Failure::input(format!("cannot open a pipe: {}", std::io::Error::last_os_error())));
    }
    // SAFETY: pipe2 succeeded: both descriptors are open and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// How the first launch that stopped early ended: its number, outcome and the status it stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
struct EarlyStop {
    launch: u64,
    kernel: String,
    outcome: String,
    code: u8,
}

/// What `exec` keeps of the channel: bounded however many launches the program makes.
#[derive(Debug, Default)]
struct Summary {
    /// The shim started in the program (or a child of it).
    started: bool,
    /// Launch lines received.
    launches: u64,
    /// Per-kernel totals.
    kernels: PerKernel,
    /// The first launch that did not complete.
    early: Option<EarlyStop>,
    /// The launches for `--html` (bounded), when it is asked for.
    page: Option<ExecLaunches>,
    /// The kernels' executions per pc for `--html` (bounded), when it is asked for.
    pcs: Option<ProgramPcs>,
    /// The first line that could not be read or combined, and how many such lines there were.
    problem: Option<(String, u64)>,
}

impl Summary {
    /// Takes one line of the channel.
    fn line(&mut self, line: &str) {
        match Message::parse(line) {
            Some((Message::Started, _)) => self.started = true,
            Some((Message::Launch, json)) => self.launch(json),
            Some((Message::Kernel, json)) => match serde_json::from_str::<KernelMap>(json) {
                Ok(m) => self.pcs.iter_mut().for_each(|p| p.map(m.clone(), reconverge_report::exec::MAX_PAGE_KERNELS)),
                Err(e) => self.problem(format!("a kernel line that is not a kernel's map: {e}")),
            },
            Some((Message::Pcs, json)) => match serde_json::from_str::<LaunchPcs>(json) {
                Ok(l) => self.pcs.iter_mut().for_each(|p| p.launch(&l)),
                Err(e) => self.problem(format!("a pcs line that is not a launch's counts: {e}")),
            },
            None => self.problem(format!("a line that is not the runtime's: {:.80}", line)),
        }
    }

    /// Takes one launch line.
    fn launch(&mut self, json: &str) {
        self.started = true;
        let Ok(Value::Object(l)) = serde_json::from_str::<Value>(json) else {
            return self.problem(format!("a launch line that is not a JSON object: {json:.80}"));
        };
        self.launches += 1;
        let outcome = l.get("outcome").and_then(Value::as_str).unwrap_or("completed");
        if self.early.is_none() && outcome != "completed" {
            self.early = Some(EarlyStop {
                launch: l.get("launch").and_then(Value::as_u64).unwrap_or(self.launches),
                kernel: l.get("kernel").and_then(Value::as_str).unwrap_or("?").to_string(),
                outcome: outcome.to_string(),
                code: match outcome {
                    "deadlock" => 3,
                    "limit" => 4,
                    _ => 2,
                },
            });
        }
        if let Some(p) = &mut self.page {
            p.push(&l);
        }
        if let Err(e) = self.kernels.add(l) {
            self.problem(format!("launch {}: {e}", self.launches));
        }
    }

    /// Notes a line that could not be used (the first is kept).
    fn problem(&mut self, what: String) {
        match &mut self.problem {
            Some((_, n)) => *n += 1,
            None => self.problem = Some((what, 1)),
        }
    }
}

/// Reads the channel until the program's end closes it or `done` becomes readable (the program
/// exited: what it wrote is already buffered, so the rest is drained without waiting for children that
/// inherited the socket).
fn read_channel(sock: OwnedFd, done: OwnedFd, mut summary: Summary) -> Summary {
    let mut pending: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 1 << 16];
    let mut draining = false;
    loop {
        if !draining {
            let mut fds = [
                libc::pollfd { fd: sock.as_raw_fd(), events: libc::POLLIN, revents: 0 },
                libc::pollfd { fd: done.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            ];
            // SAFETY: `fds` is a valid array of two pollfd.
            if unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) } < 0 {
                continue; // EINTR
            }
            if fds[0].revents == 0 && fds[1].revents != 0 {
                draining = true;
                // SAFETY: setting a flag on a descriptor this function owns.
                unsafe { libc::fcntl(sock.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK) };
                continue;
            }
        }
        // SAFETY: `chunk` is writable for its length; `sock` is open.
        let n = unsafe { libc::read(sock.as_raw_fd(), chunk.as_mut_ptr().cast(), chunk.len()) };
        if n == 0 || (n < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted) {
            break; // the end, or nothing more buffered while draining
        }
        let n = n.max(0) as usize;
        pending.extend_from_slice(&chunk[..n]);
        let mut start = 0;
        while let Some(end) = pending[start..].iter().position(|&b| b == b'\n') {
            summary.line(&String::from_utf8_lossy(&pending[start..start + end]));
            start += end + 1;
        }
        pending.drain(..start);
    }
    if !pending.is_empty() {
        summary.line(&String::from_utf8_lossy(&pending));
    }
    summary
}

/// How the program ended, as `exec` reports it.
struct Ended {
    /// Its exit status, or the signal that killed it.
    status: std::process::ExitStatus,
    /// The signal exec received and forwarded (0: none).
    received: i32,
}

/// Starts the program with the shim and the channel, forwards signals while it runs, and waits for it
/// while a thread reads the channel.
fn run_program(a: &ExecArgs, libdir: &Path, env: Vec<(&'static str, String)>) -> Result<(Ended, Summary), Failure> {
    let path = match std::env::var("LD_LIBRARY_PATH") {
        Ok(p) if !p.is_empty() => format!("{}:{p}", libdir.display()),
        _ => libdir.display().to_string(),
    };
    let (mine, theirs) = socket_pair()?;
    let channel = Channel::var_for(theirs.as_raw_fd())
        .ok_or_else(|| Failure::input("cannot open the runtime's channel: not a socket"))?;
    let (done_read, done_write) = pipe()?;
    let mut cmd = Command::new(&a.program[0]);
    cmd.args(&a.program[1..]).env("LD_LIBRARY_PATH", path).env(CHANNEL_VAR, channel);
    // Only the flags given reach the program: a variable of an enclosing environment would override none.
    for (var, _) in VARIABLES.iter().chain([&(PTX_DIR_VAR, "")]) {
        if !env.iter().any(|(v, _)| v == var) {
            cmd.env_remove(var);
        }
    }
    cmd.envs(env);
    // Executions per pc only for the page's lines and CFGs.
    if a.html.is_some() {
        cmd.env(PER_PC_VAR, "1");
    } else {
        cmd.env_remove(PER_PC_VAR);
    }
    let fd = theirs.as_raw_fd();
    // SAFETY: between fork and exec the closure only calls fcntl, which is async-signal-safe: the
    // program's end of the channel stays open across exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    install_forwarding();
    let summary = Summary {
        page: a.html.as_ref().map(|_| ExecLaunches::default()),
        pcs: a.html.as_ref().map(|_| ProgramPcs::default()),
        ..Summary::default()
    };
    let reader = std::thread::spawn(move || read_channel(mine, done_read, summary));
    let child = cmd.spawn();
    drop(theirs);
    let waited = child.and_then(|mut c| {
        CHILD.store(c.id() as i32, Ordering::SeqCst);
        // A signal that came before the program existed is forwarded now.
        let early = RECEIVED.load(Ordering::SeqCst);
        if early != 0 {
            // SAFETY: kill on the program exec just started.
            unsafe { libc::kill(c.id() as i32, early) };
        }
        let s = c.wait();
        CHILD.store(0, Ordering::SeqCst);
        s
    });
    let _ = std::fs::File::from(done_write).write_all(b"x");
    let summary = reader.join().unwrap_or_default();
    let status = waited.map_err(|e| Failure::input(format!("cannot run {}: {e}", a.program[0])))?;
    Ok((Ended { status, received: RECEIVED.load(Ordering::SeqCst) }, summary))
}

/// Runs `reconverge exec`.
pub(crate) fn run(a: ExecArgs) -> Result<(), Failure> {
    let env = shim_env(&a)?;
    let shim = find_shim()?;
    let libdir = library_dir(&shim, find_shim12().as_deref())?;
    let ran = run_program(&a, &libdir, env);
    let _ = std::fs::remove_dir_all(&libdir);
    let (ended, summary) = ran?;
    if summary.started || summary.launches > 0 {
        say(&summary_text(&summary));
    }
    write_page(&a, &summary);
    let (message, code) = verdict(&ended, &summary);
    if !message.is_empty() {
        say(&message);
    }
    match code {
        0 => Ok(()),
        c => Err(Failure { message: String::new(), code: c }),
    }
}

/// Writes `--html`'s page, when asked for.
fn write_page(a: &ExecArgs, summary: &Summary) {
    let (Some(h), Some(page)) = (&a.html, &summary.page) else { return };
    let sources: Vec<KernelSource> =
        summary.pcs.iter().flat_map(|p| &p.kernels).map(|k| kernel_source(&a.program[0], &k.map)).collect();
    let lines = summary.pcs.as_ref().map(|p| reconverge_report::exec::ExecLines {
        kernels: p
            .kernels
            .iter()
            .zip(&sources)
            .map(|(k, s)| reconverge_report::exec::KernelLines {
                pcs: k,
                source: reconverge_report::html::SourceView {
                    name: &s.name,
                    text: &s.text,
                    cuda_file: s.cuda_file,
                    fallback: s.fallback.as_deref(),
                },
                cfg: s.cfg.as_ref(),
            })
            .collect(),
        kernels_left_out: p.kernels_left_out,
        launches_left_out: p.launches_left_out,
    });
    let html = reconverge_report::exec::exec_html(&a.program.join(" "), page, summary.kernels.totals(), lines.as_ref());
    if let Err(e) = std::fs::write(h, html) {
        say(&format!("reconverge: --html {}: {e}", h.display()));
    }
}

/// What the page shows a kernel's lines and CFG beside ([`kernel_source`]).
struct KernelSource {
    /// The source's name: the CUDA file, or the module's PTX.
    name: String,
    /// Its text.
    text: String,
    /// The `.loc` file index of the CUDA file (`None`: PTX lines).
    cuda_file: Option<u32>,
    /// Why the lines are PTX lines, when the kernel has CUDA line information.
    fallback: Option<String>,
    /// The kernel's CFG, of its module's PTX as written.
    cfg: Option<reconverge_report::cfg::FunctionReport>,
}

/// The source of kernel `map`'s heat map, as `report` finds it (the CUDA file its `.loc` lines name, as
/// written or beside `program`, else its module's PTX), and its CFG.
fn kernel_source(program: &str, map: &KernelMap) -> KernelSource {
    use crate::report_cmd::{cuda_source, Cuda};
    let cfg = reconverge_ptx::parse(&map.ptx).ok().and_then(|module| {
        let report = reconverge_report::cfg_report(&module, &map.module, &map.ptx, None, None);
        report.functions.into_iter().find(|f| f.name == map.kernel)
    });
    let loc = map.sites.iter().find_map(|s| s.cuda_file);
    let ptx = |fallback: Option<String>| KernelSource {
        name: map.module.clone(),
        text: map.ptx.clone(),
        cuda_file: None,
        fallback,
        cfg: cfg.clone(),
    };
    match cuda_source(program, None, loc, &map.cuda_files) {
        Ok(Cuda::Found(f, name, text)) => KernelSource { name, text, cuda_file: Some(f), fallback: None, cfg },
        Ok(Cuda::NotFound(named)) => ptx(Some(format!(
            "The kernel's line information names {named}, which was not found, so the heat map shows the lines of its PTX."
        ))),
        Ok(Cuda::NoLineInfo) | Err(_) => ptx(None),
    }
}

/// Writes `text` (one or more lines) on standard error; a closed terminal (after SIGHUP) is no error.
fn say(text: &str) {
    let _ = writeln!(std::io::stderr(), "{}", text.trim_end());
}

/// What `exec` says at the end and its exit status: exec's own signal; the program's signal; the
/// program's status; a launch that stopped early; a program that never loaded the shim; statistics that
/// could not be used.
fn verdict(ended: &Ended, s: &Summary) -> (String, u8) {
    use std::os::unix::process::ExitStatusExt;
    let of_signal = |n: i32| u8::try_from(128 + n).unwrap_or(255);
    if ended.received != 0 {
        let name = signal_name(ended.received);
        return (
            format!("reconverge: exec received {name}, forwarded it to the program and stopped"),
            of_signal(ended.received),
        );
    }
    if let Some(sig) = ended.status.signal() {
        let core = if ended.status.core_dumped() { ", core dumped" } else { "" };
        return (
            format!("reconverge: the program was killed by signal {sig} ({}{core})", signal_name(sig)),
            of_signal(sig),
        );
    }
    let code = ended.status.code().map_or(1, |c| u8::try_from(c).unwrap_or(1));
    let not_loaded = !s.started;
    let mut notes = Vec::new();
    if not_loaded {
        notes.push(
            "reconverge: the program did not load reconverge's libcudart.so.13 or libcudart.so.12 (it made no CUDA \
             runtime call to it): \
             build it with `nvcc -cudart shared` (nvcc's default, `-cudart static`, links NVIDIA's runtime into the \
             program, where it cannot be replaced), or it is not a CUDA program"
                .to_string(),
        );
    }
    if let Some((what, n)) = &s.problem {
        let more = if *n > 1 { format!(" (and {} more)", n - 1) } else { String::new() };
        notes.push(format!("reconverge: the runtime's statistics could not all be used: {what}{more}"));
    }
    let code = match (code, &s.early) {
        (0, Some(e)) => {
            notes.push(format!(
                "reconverge: the program exited 0, but launch {} ({}, {}) stopped early: exit status {}",
                e.launch,
                reconverge_ir::names::short_name(&e.kernel),
                e.outcome,
                e.code
            ));
            e.code
        }
        (0, None) if not_loaded || s.problem.is_some() => 2,
        (c, _) => c,
    };
    (notes.join("\n"), code)
}

/// The summary printed at exit: one row per kernel; under `--sample` the cycles are the sampled ones
/// (measured and estimated) with their 95% bound, and a line gives the program's.
fn summary_text(s: &Summary) -> String {
    let kernels = s.kernels.totals();
    let energy_of = |stats: &serde_json::Map<String, Value>| {
        stats.get("energy").and_then(|e| e.get("total_j")).and_then(Value::as_f64)
    };
    let sampled = kernels.iter().any(|k| k.stats.contains_key("sampled"));
    let cta_sampled = kernels.iter().any(|k| k.stats.contains_key("cta_sample"));
    // Energy is measured for launches timed in full only: under sampling a kernel's total would leave out
    // the rest.
    let energy = !sampled && !cta_sampled && kernels.iter().any(|k| energy_of(&k.stats).is_some());
    let mut head = vec!["kernel", "launches", "cycles", "warp instr", "SIMD eff", "divergent br"];
    if energy {
        head.push("energy");
    }
    head.push("outcome");
    let mut t = reconverge_report::table::Table::new(&head);
    for aggregate::KernelTotal { kernel: name, stats } in kernels {
        let n = |k: &str| stats.get(k).and_then(Value::as_u64).map_or("-".to_string(), |v| v.to_string());
        let outcome = stats.get("outcome").and_then(Value::as_str).unwrap_or("-").to_string();
        let cycles = match SampledCycles::of(stats) {
            Some(c) if sampled => c.text(),
            _ => n("cycles"),
        };
        let mut row = vec![
            reconverge_ir::names::short_name(name),
            n(aggregate::LAUNCHES),
            cycles,
            n("warp_instructions"),
            reconverge_report::records::pct(stats.get("simd_efficiency").and_then(Value::as_f64)),
            n("divergent_branches"),
        ];
        if energy {
            row.push(energy_of(stats).map_or_else(|| "-".into(), reconverge_report::run::joules));
        }
        row.push(outcome);
        t.row(row);
    }
    let total = s.launches;
    let mut text = format!(
        "\nreconverge: {total} launch{} of {} kernel{}\n{}",
        if total == 1 { "" } else { "es" },
        kernels.len(),
        if kernels.len() == 1 { "" } else { "s" },
        t.render()
    );
    if sampled {
        let all =
            kernels.iter().filter_map(|k| SampledCycles::of(&k.stats)).fold(SampledCycles::default(), |a, b| a + b);
        text.push_str(&sampled_line(&all));
    }
    if cta_sampled {
        let sum = |key: &str| kernels.iter().filter_map(|k| k.stats.get("cta_sample")?.get(key)?.as_u64()).sum::<u64>();
        text.push_str(&format!(
            "\nreconverge: --sample-ctas ran {} of the sampled launches' {} CTAs functionally and estimated their \
             cycles from the timed CTAs' rates (docs/speed.md, \"CTA sampling\")",
            sum("skipped_ctas"),
            sum("ctas")
        ));
    }
    text
}

/// The program's line under `--sample`: launches timed, and the cycles with their bound.
fn sampled_line(all: &SampledCycles) -> String {
    let launches = all.timed + all.estimated;
    if all.estimated == 0 {
        return format!(
            "\nreconverge: --sample timed all {launches} completed launches (none did the work of launches timed \
             before it): {} cycles",
            all.cycles
        );
    }
    format!(
        "\nreconverge: --sample timed {} of {launches} completed launches and estimated the others' cycles: {} \
         cycles in all, ± {} ({:.2}%, a 95% bound)",
        all.timed,
        all.cycles,
        all.error,
        100.0 * all.error as f64 / all.cycles.max(1) as f64
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    fn launch(n: u64, kernel: &str, outcome: &str) -> String {
        let mut v = serde_json::json!({"launch": n, "kernel": kernel, "outcome": outcome, "mechanism": "pdom",
            "warp_size": 32, "warp_instructions": 10, "kernel_instructions": 10,
            "kernel_thread_instructions": 181, "simd_efficiency": 0.566, "grid": [1, 1, 1], "block": [32, 1, 1]});
        if outcome != "completed" {
            v["error"] = "stopped".into();
        }
        format!("launch {v}")
    }

    fn ended(code: i32) -> Ended {
        Ended { status: std::process::ExitStatus::from_raw(code << 8), received: 0 }
    }

    #[test]
    fn the_summary_is_folded_line_by_line() {
        let mut s = Summary::default();
        s.line("started 1234");
        for n in 1..=5 {
            s.line(&launch(n, "_Z4tickPj", if n == 3 { "limit" } else { "completed" }));
        }
        s.line(&launch(6, "_Z4tockPj", "deadlock"));
        assert!(s.started);
        assert_eq!(s.launches, 6);
        let totals = s.kernels.totals();
        assert_eq!(totals.len(), 2);
        assert_eq!(totals[0].stats["warp_instructions"], serde_json::json!(50));
        let e = s.early.clone().expect("launch 3 stopped");
        assert_eq!((e.launch, e.outcome.as_str(), e.code), (3, "limit", 4));
        let text = summary_text(&s);
        assert!(text.contains("6 launches of 2 kernels"), "{text}");
        assert!(text.contains("56.6%") && !text.contains("0.566"), "SIMD efficiency as a percentage: {text}");
        assert_eq!(verdict(&ended(0), &s).1, 4, "the first launch that stopped early");
        assert_eq!(verdict(&ended(1), &s).1, 1, "the program's own status first");
    }

    /// Under `--sample` the cycles column is the sampled cycles with their bound, and a line gives the
    /// program's; energy (measured for timed launches only) is left out.
    #[test]
    fn a_sampled_summary_shows_the_estimate_and_its_bound() {
        let sampled = |n: u64, cycles: u64, error: u64, estimated: u64| {
            let mut v: serde_json::Value =
                serde_json::from_str(launch(n, "_Z4tickPj", "completed").trim_start_matches("launch ")).expect("json");
            v["sampled"] = serde_json::json!({"cycles": cycles, "cycles_error": error,
                "timed_launches": 1 - estimated, "estimated_launches": estimated});
            v["sample_cluster"] = 0.into();
            v["energy"] = serde_json::json!({"total_j": 1e-6, "seconds": 1e-6});
            format!("launch {v}")
        };
        let mut s = Summary::default();
        s.line("started 1");
        for (n, (c, e, est)) in [(1000, 0, 0), (1000, 0, 0), (1010, 0, 0), (995, 12, 1)].into_iter().enumerate() {
            s.line(&sampled(n as u64 + 1, c, e, est));
        }
        let text = summary_text(&s);
        assert!(text.contains("4005 ± 12"), "{text}");
        assert!(!text.contains("energy"), "{text}");
        assert!(
            text.contains("--sample timed 3 of 4 completed launches and estimated the others' cycles: 4005 cycles in all, ± 12 (0.30%, a 95% bound)"),
            "{text}"
        );
        let mut all_timed = Summary::default();
        all_timed.line(&sampled(1, 1000, 0, 0));
        let text = summary_text(&all_timed);
        assert!(text.contains("--sample timed all 1 completed launches") && !text.contains("±"), "{text}");
    }

    /// Under `--sample-ctas` a line says how many CTAs ran functionally, and energy (whose counters would
    /// cover only the timed CTAs) is left out.
    #[test]
    fn a_summary_of_launches_sampled_by_ctas_says_so() {
        let line = |n: u64, sample: Option<(u64, u64)>| {
            let mut v: serde_json::Value =
                serde_json::from_str(launch(n, "_Z4tickPj", "completed").trim_start_matches("launch ")).expect("json");
            v["cycles"] = 1000.into();
            v["energy"] = serde_json::json!({"total_j": 1e-6, "seconds": 1e-6});
            if let Some((ctas, skipped)) = sample {
                v["cta_sample"] = serde_json::json!({"ctas": ctas, "skipped_ctas": skipped});
            }
            format!("launch {v}")
        };
        let mut s = Summary::default();
        s.line("started 1");
        s.line(&line(1, Some((960, 540))));
        s.line(&line(2, None));
        s.line(&line(3, Some((960, 405))));
        let text = summary_text(&s);
        assert!(text.contains("--sample-ctas ran 945 of the sampled launches' 1920 CTAs functionally"), "{text}");
        assert!(!text.contains("energy"), "{text}");
        let mut full = Summary::default();
        full.line(&line(1, None));
        let text = summary_text(&full);
        assert!(!text.contains("--sample-ctas") && text.contains("energy"), "{text}");
    }

    #[test]
    fn statuses_for_signals_and_a_program_without_the_shim() {
        let none = Summary::default();
        let (msg, code) = verdict(&ended(0), &none);
        assert_eq!(code, 2);
        assert!(msg.contains("did not load reconverge's libcudart.so.13") && msg.contains("-cudart shared"), "{msg}");
        assert!(verdict(&ended(1), &none).0.contains("did not load"));
        let killed = Ended { status: std::process::ExitStatus::from_raw(libc::SIGSEGV), received: 0 };
        let (msg, code) = verdict(&killed, &none);
        assert_eq!((msg.as_str(), code), ("reconverge: the program was killed by signal 11 (SIGSEGV)", 139));
        let term = Ended { status: std::process::ExitStatus::from_raw(libc::SIGTERM), received: libc::SIGTERM };
        let (msg, code) = verdict(&term, &none);
        assert_eq!(code, 143);
        assert!(msg.contains("SIGTERM"), "{msg}");
    }

    /// Under `--html` a kernel's map and its launches' executions per pc are summed per kernel; without
    /// it they are not kept (the runtime sends none then), and neither is a problem.
    #[test]
    fn per_pc_lines_are_summed_only_for_the_page() {
        use reconverge_timing::per_pc::{PcCount, PcSite};
        let map = KernelMap {
            kernel: "k".into(),
            module: "p:module0.ptx".into(),
            ptx: String::new(),
            sites: vec![PcSite::default(); 2],
            cuda_files: Vec::new(),
        };
        let count = PcCount { executions: 1, lanes: 32, divergent: 0 };
        let pcs = LaunchPcs { launch: 1, kernel: "k".into(), module: "p:module0.ptx".into(), counts: vec![(1, count)] };
        let lines = [
            format!("kernel {}", serde_json::to_string(&map).expect("json")),
            format!("pcs {}", serde_json::to_string(&pcs).expect("json")),
            format!("pcs {}", serde_json::to_string(&pcs).expect("json")),
        ];
        let mut page = Summary { pcs: Some(ProgramPcs::default()), ..Summary::default() };
        let mut plain = Summary::default();
        for l in &lines {
            page.line(l);
            plain.line(l);
        }
        let kept = page.pcs.as_ref().map(|p| (p.kernels.len(), p.kernels[0].launches, p.kernels[0].counts[1]));
        assert_eq!(kept, Some((1, 2, PcCount { executions: 2, lanes: 64, divergent: 0 })));
        assert!(page.problem.is_none() && plain.problem.is_none() && plain.pcs.is_none());
        page.line("pcs [1]");
        assert!(page.problem.is_some_and(|(what, _)| what.contains("not a launch's counts")));
    }

    #[test]
    fn lines_that_are_not_the_runtimes_are_counted_not_fatal() {
        let mut s = Summary::default();
        s.line("started 1");
        s.line("launch [1, 2]");
        s.line("hello");
        s.line(&launch(1, "k", "completed"));
        assert_eq!(s.launches, 1);
        let (what, n) = s.problem.clone().expect("two bad lines");
        assert!(what.contains("not a JSON object") && n == 2, "{what} {n}");
        let (msg, code) = verdict(&ended(0), &s);
        assert_eq!(code, 2);
        assert!(msg.contains("(and 1 more)"), "{msg}");
    }
}
