//! Native runs of the suite's CUDA C for `bench --native`: the kernel is compiled as C++ with the system
//! compiler against a shim header (`native/reconverge_native.h`: `threadIdx` and friends as globals,
//! plain atomics) and run one thread after another, block by block, by a small driver that reads the
//! launch from a file and reports the time of each repeat and the final buffers.

use reconverge_program::Arg;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The shim header and driver.
const SHIM: &str = include_str!("../native/reconverge_native.h");

/// CUDA constructs a sequential port cannot express: the threads of a warp or block must run together.
const NEEDS_CONCURRENT_THREADS: &[&str] = &[
    "__syncthreads",
    "__syncwarp",
    "__shfl",
    "__ballot",
    "__any_sync",
    "__all_sync",
    "__activemask",
    "__reduce_",
    "__match_",
    "cooperative_groups",
    "asm(",
    "asm volatile",
];

/// Why the kernel source `src` cannot run natively one thread at a time (`None`: it can).
pub(crate) fn skip_reason(src: &str, uses_globals: bool) -> Option<String> {
    if let Some(w) = NEEDS_CONCURRENT_THREADS.iter().find(|w| src.contains(*w)) {
        return Some(format!("uses `{}`, which needs threads running together", w.trim_end_matches('(')));
    }
    uses_globals.then(|| "sets module variables before the launch (not ported)".to_string())
}

/// A scratch directory for the native builds, removed when dropped.
pub(crate) struct Workdir(PathBuf);

impl Workdir {
    /// A fresh directory under the system's temporary directory.
    pub(crate) fn new() -> Result<Workdir, String> {
        let dir = std::env::temp_dir().join(format!("reconverge-native-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        std::fs::write(dir.join("reconverge_native.h"), SHIM).map_err(|e| format!("cannot write the shim: {e}"))?;
        Ok(Workdir(dir))
    }

    /// The directory.
    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Workdir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The C++ compiler: `$CXX`, else `c++`.
pub(crate) fn compiler() -> String {
    std::env::var("CXX").unwrap_or_else(|_| "c++".to_string())
}

/// Runs `cmd` to completion, or stops it after `timeout`: its output, or a message that says what ran,
/// that it was stopped, and what it had printed on standard error.
pub(crate) fn output_within(cmd: &mut Command, what: &str, timeout: Duration) -> Result<std::process::Output, String> {
    use std::io::Read as _;
    use std::os::unix::process::CommandExt as _;
    use std::process::Stdio;
    // Its own process group, so that stopping it stops whatever it started (a compiler driver's cc1plus).
    let mut child = cmd
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {what}: {e}"))?;
    let pipe = |r: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = pipe(child.stdout.take().map(|r| Box::new(r) as Box<dyn std::io::Read + Send>));
    let err = pipe(child.stderr.take().map(|r| Box::new(r) as Box<dyn std::io::Read + Send>));
    let start = std::time::Instant::now();
    let status = loop {
        match child.try_wait().map_err(|e| format!("cannot wait for {what}: {e}"))? {
            Some(status) => break Some(status),
            None if start.elapsed() >= timeout => {
                if let Ok(pgid) = libc::pid_t::try_from(child.id()) {
                    // SAFETY: killpg only sends a signal to the process group the child leads.
                    unsafe { libc::killpg(pgid, libc::SIGKILL) };
                }
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    let (stdout, stderr) = (out.join().unwrap_or_default(), err.join().unwrap_or_default());
    match status {
        Some(status) => Ok(std::process::Output { status, stdout, stderr }),
        None => {
            let said = String::from_utf8_lossy(&stderr);
            let first: Vec<&str> = said.lines().take(6).collect();
            Err(format!(
                "{what} did not finish within {} s and was stopped (--native-timeout){}",
                timeout.as_secs(),
                if first.is_empty() { String::new() } else { format!("; it said:\n{}", first.join("\n")) }
            ))
        }
    }
}

/// Compiles kernel `name` of the CUDA C file `cu` (with `g++ -O2`-class options: no floating-point
/// contraction, so results match the suite's `--fmad=false` PTX bit for bit), stopping the compiler after
/// `timeout`; returns the executable.
pub(crate) fn compile(work: &Workdir, name: &str, cu: &Path, timeout: Duration) -> Result<PathBuf, String> {
    let cu = cu.canonicalize().map_err(|e| format!("{}: {e}", cu.display()))?;
    let main = work.path().join(format!("{name}.cpp"));
    let text = format!(
        "#include \"reconverge_native.h\"\n#include \"{}\"\nRECONVERGE_NATIVE_MAIN({name})\n",
        cu.display().to_string().replace('\\', "\\\\").replace('"', "\\\"")
    );
    std::fs::write(&main, text).map_err(|e| format!("cannot write {}: {e}", main.display()))?;
    let exe = work.path().join(name);
    let cxx = compiler();
    let out = output_within(
        Command::new(&cxx).args(["-O2", "-std=c++17", "-ffp-contract=off", "-w", "-o"]).arg(&exe).arg(&main),
        &format!("the C++ compiler `{cxx}` (set CXX)"),
        timeout,
    )?;
    if !out.status.success() {
        return Err(failure(&out, &cxx, &format!("compiling {}", cu.display())));
    }
    Ok(exe)
}

/// What `what` (a program) did when it failed `doing` something: its exit status (or the signal that
/// stopped it) and the first lines of its standard error (else of its standard output), or that it printed
/// nothing: `c++ exited with status 1 compiling kern.cu:` and the lines.
fn failure(out: &std::process::Output, what: &str, doing: &str) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    let ended = match (out.status.code(), out.status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(signal)) => format!("was stopped by signal {signal}"),
        (None, None) => "failed".to_string(),
    };
    let said = [&out.stderr, &out.stdout].map(|b| String::from_utf8_lossy(b).trim().to_string());
    match said.iter().find(|s| !s.is_empty()) {
        None => format!("{what} {ended} and printed nothing ({doing})"),
        Some(text) => format!("{what} {ended} {doing}:\n{}", text.lines().take(6).collect::<Vec<_>>().join("\n")),
    }
}

/// What a native run measured.
pub(crate) struct NativeRun {
    /// The time of each repeat.
    pub times: Vec<Duration>,
    /// The buffer arguments after the first repeat, in argument order.
    pub buffers: Vec<Vec<u8>>,
}

/// Runs `exe` on `args` with the launch shape `grid` × `block`, `repeats` times (stopped after `timeout`).
pub(crate) fn run(
    work: &Workdir,
    exe: &Path,
    args: &[Arg],
    grid: [u32; 3],
    block: [u32; 3],
    repeats: u32,
    timeout: Duration,
) -> Result<NativeRun, String> {
    let mut launch = Vec::new();
    launch.extend((args.len() as u32).to_le_bytes());
    for a in args {
        let (kind, bytes): (u8, Vec<u8>) = match a {
            Arg::Scalar(v) => (0, v.to_le_bytes().to_vec()),
            Arg::Buffer(b) => (1, b.bytes.clone()),
            Arg::BufferAt { .. } | Arg::Struct(_) => {
                return Err(
                    "native runs take numbers and whole buffers only (no struct or offset pointer arguments)".into()
                )
            }
        };
        launch.push(kind);
        launch.extend((bytes.len() as u64).to_le_bytes());
        launch.extend(bytes);
    }
    for x in grid.iter().chain(block.iter()).chain(std::iter::once(&repeats)) {
        launch.extend(x.to_le_bytes());
    }
    let stem = exe.file_name().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
    let (input, output) = (work.path().join(format!("{stem}.launch")), work.path().join(format!("{stem}.out")));
    std::fs::write(&input, launch).map_err(|e| format!("cannot write {}: {e}", input.display()))?;
    let out = output_within(Command::new(exe).arg(&input).arg(&output), &exe.display().to_string(), timeout)?;
    if !out.status.success() {
        return Err(failure(&out, &exe.display().to_string(), "running the launch"));
    }
    let times = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("ns ").and_then(|n| n.trim().parse::<u64>().ok()))
        .map(Duration::from_nanos)
        .collect();
    let raw = std::fs::read(&output).map_err(|e| format!("cannot read {}: {e}", output.display()))?;
    Ok(NativeRun { times, buffers: split_buffers(&raw)? })
}

/// The driver's output file: per buffer a u64 length and the bytes.
fn split_buffers(mut raw: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    let mut out = Vec::new();
    while !raw.is_empty() {
        let (len, rest) = raw.split_at_checked(8).ok_or("truncated native output")?;
        let len = u64::from_le_bytes(len.try_into().map_err(|_| "bad length")?) as usize;
        let (data, rest) = rest.split_at_checked(len).ok_or("truncated native output")?;
        out.push(data.to_vec());
        raw = rest;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_ports_skip_kernels_whose_threads_must_run_together() {
        assert!(skip_reason("x = __shfl_down_sync(m, v, 1);", false).unwrap().contains("__shfl"));
        assert!(skip_reason("__syncthreads();", false).is_some());
        assert!(skip_reason("a[i] = b[i];", true).unwrap().contains("module variables"));
        assert_eq!(skip_reason("atomicAdd(p, 1);", false), None);
    }

    #[test]
    fn the_driver_output_splits_into_buffers() {
        let mut raw = 3u64.to_le_bytes().to_vec();
        raw.extend([1, 2, 3]);
        raw.extend(0u64.to_le_bytes());
        assert_eq!(split_buffers(&raw).unwrap(), vec![vec![1, 2, 3], vec![]]);
        assert!(split_buffers(&raw[..5]).is_err());
    }

    #[test]
    fn a_failure_says_how_the_program_ended_and_what_it_printed() {
        use std::os::unix::process::ExitStatusExt as _;
        let out = |raw: i32, stderr: &str, stdout: &str| std::process::Output {
            status: std::process::ExitStatus::from_raw(raw),
            stdout: stdout.as_bytes().to_vec(),
            stderr: stderr.as_bytes().to_vec(),
        };
        let f = failure(&out(1 << 8, "", ""), "/bin/false", "compiling k.cu");
        assert_eq!(f, "/bin/false exited with status 1 and printed nothing (compiling k.cu)");
        let f = failure(&out(2 << 8, "", "k.cu:3: error\n"), "c++", "compiling k.cu");
        assert_eq!(f, "c++ exited with status 2 compiling k.cu:\nk.cu:3: error");
        let f = failure(&out(9, "", ""), "./k", "running the launch");
        assert_eq!(f, "./k was stopped by signal 9 and printed nothing (running the launch)");
    }
}
