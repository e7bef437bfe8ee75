//! The shim's settings, read once from the environment (`reconverge exec` sets them from its flags), and
//! the private channel to `reconverge exec` ([`Channel`]).

use reconverge_mechanism::Mechanism;
use reconverge_program::launch::{instruction_limit, is_warp_size, parse_size, DEFAULT_MAX_INSTRUCTIONS};
use reconverge_timing::GpuConfig;

/// One environment variable the shim reads: its name and what it sets.
pub const VARIABLES: &[(&str, &str)] = &[
    ("RECONVERGE_MECHANISM", "the divergence mechanism (default pdom)"),
    ("RECONVERGE_CONFIG", "a GPU preset or TOML file (default gtx480); `functional` for no timing model"),
    ("RECONVERGE_WARP_SIZE", "threads per warp (default: the configuration's)"),
    ("RECONVERGE_STATS", "write one JSON line per launch to this file"),
    ("RECONVERGE_MAX_INSTRUCTIONS", "warp instructions one launch may issue (default 1000000000; 0 = no limit)"),
    ("RECONVERGE_MAX_CYCLES", "cycles one launch may take (default: no limit)"),
    ("RECONVERGE_MAX_MEMORY", "bytes of simulated device memory and model state, K/M/G suffixes (default 8 GiB)"),
    ("RECONVERGE_THREADS", "host threads of the timing model (default 0: all cores)"),
    ("RECONVERGE_SAMPLE", "1: time a sample of the launches and estimate the others' cycles (default 0)"),
];

/// The variable through which `reconverge exec` hands the program its end of the private channel:
/// `FD:INODE`, a socket descriptor the program inherits and the inode that identifies it.
pub const CHANNEL_VAR: &str = "RECONVERGE_CHANNEL";

/// The variable through which `reconverge exec --html` asks the shim to send, on the channel, each
/// kernel's map once ([`Message::Kernel`]) and each launch's executions per pc ([`Message::Pcs`]): `1`.
/// Without it (and without a channel) launches count nothing per pc.
pub const PER_PC_VAR: &str = "RECONVERGE_CHANNEL_PER_PC";

/// What the shim runs kernels under.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The divergence mechanism.
    pub mechanism: Mechanism,
    /// The GPU configuration (`None`: functional simulation).
    pub gpu: Option<GpuConfig>,
    /// Threads per warp.
    pub warp_size: u32,
    /// Where the per-launch statistics go.
    pub stats: Option<String>,
    /// Warp instructions one launch may issue: `u64::MAX` (never reached) when the variable is 0, which
    /// means no limit as `--max-instructions 0` does.
    pub max_instructions: u64,
    /// Cycles one launch may take.
    pub max_cycles: Option<u64>,
    /// Bytes of simulated memory.
    pub max_memory: u64,
    /// Host threads of the timing model.
    pub threads: usize,
    /// The private channel to `reconverge exec`, when the program runs under it.
    pub channel: Option<Channel>,
    /// Send executions per pc on the channel ([`PER_PC_VAR`]; only with a channel).
    pub per_pc: bool,
    /// Time a sample of the launches and estimate the cycles of the others
    /// ([`reconverge_records::sampling`]); only with a GPU configuration.
    pub sample: bool,
    /// Time about one CTA in this many of each timed launch ([`reconverge_timing::sampling`]); only with
    /// a GPU configuration.
    pub sample_ctas: Option<u32>,
}

/// A setting that does not parse: the variable and why.
#[derive(Debug, thiserror::Error)]
#[error("{var}={value}: {why}")]
pub struct SettingError {
    /// The environment variable.
    pub var: &'static str,
    /// Its value.
    pub value: String,
    /// Why it was refused.
    pub why: String,
}

impl Settings {
    /// The settings from `get` (the environment, or a map in tests).
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<Settings, SettingError> {
        let err = |var: &'static str, value: &str, why: String| SettingError { var, value: value.to_string(), why };
        let number = |var: &'static str| -> Result<Option<u64>, SettingError> {
            get(var).map(|v| v.trim().parse::<u64>().map_err(|e| err(var, &v, e.to_string()))).transpose()
        };
        let mech_name = get("RECONVERGE_MECHANISM").unwrap_or_else(|| "pdom".into());
        let mechanism = Mechanism::from_name(&mech_name).ok_or_else(|| {
            let known: Vec<&str> = Mechanism::ALL.iter().map(|m| m.name()).collect();
            err("RECONVERGE_MECHANISM", &mech_name, format!("unknown mechanism (known: {})", known.join(", ")))
        })?;
        let config = get("RECONVERGE_CONFIG").unwrap_or_else(|| "gtx480".into());
        let gpu = match config.as_str() {
            "functional" => None,
            c => Some(
                GpuConfig::named(c, |p| std::fs::read_to_string(p))
                    .map_err(|e| err("RECONVERGE_CONFIG", c, e.to_string()))?,
            ),
        };
        let warp_size = match number("RECONVERGE_WARP_SIZE")? {
            Some(w) if is_warp_size(w) => w as u32,
            Some(w) => return Err(err("RECONVERGE_WARP_SIZE", &w.to_string(), "a power of two, 1..64".into())),
            None => gpu.as_ref().map_or(32, |g| g.warp_size),
        };
        let max_memory = match get("RECONVERGE_MAX_MEMORY") {
            Some(v) => parse_size(&v).ok_or_else(|| {
                err("RECONVERGE_MAX_MEMORY", &v, "expected a positive size such as 4096, 512M or 4G".into())
            })?,
            None => reconverge_program::launch::DEFAULT_MAX_MEMORY,
        };
        let max_instructions = number("RECONVERGE_MAX_INSTRUCTIONS")?.unwrap_or(DEFAULT_MAX_INSTRUCTIONS);
        let channel = get(CHANNEL_VAR).and_then(|v| Channel::from_var(&v));
        let sample = match get("RECONVERGE_SAMPLE").as_deref().map(str::trim) {
            None | Some("0" | "") => false,
            Some("1") if gpu.is_none() => {
                let why = "sampling estimates cycles, and RECONVERGE_CONFIG=functional has none".into();
                return Err(err("RECONVERGE_SAMPLE", "1", why));
            }
            Some("1") => true,
            Some(v) => return Err(err("RECONVERGE_SAMPLE", v, "expected 0 or 1".into())),
        };
        let sample_ctas = match number("RECONVERGE_SAMPLE_CTAS")? {
            None | Some(0) => None,
            Some(_) if gpu.is_none() => {
                let why = "sampling estimates cycles, and RECONVERGE_CONFIG=functional has none".into();
                return Err(err("RECONVERGE_SAMPLE_CTAS", &get("RECONVERGE_SAMPLE_CTAS").unwrap_or_default(), why));
            }
            Some(n @ 2..=1_000_000) => Some(n as u32),
            Some(n) => return Err(err("RECONVERGE_SAMPLE_CTAS", &n.to_string(), "expected 0 or 2 to 1000000".into())),
        };
        Ok(Settings {
            mechanism,
            gpu,
            warp_size,
            stats: get("RECONVERGE_STATS").filter(|s| !s.is_empty()),
            max_instructions: instruction_limit(max_instructions).unwrap_or(u64::MAX),
            max_cycles: number("RECONVERGE_MAX_CYCLES")?,
            max_memory,
            threads: number("RECONVERGE_THREADS")?.unwrap_or(0).min(1024) as usize,
            per_pc: channel.is_some() && get(PER_PC_VAR).is_some_and(|v| v.trim() == "1"),
            channel,
            sample,
            sample_ctas,
        })
    }

    /// The settings from the process environment. This is the shim's start (the runtime's first call):
    /// it announces itself on `reconverge exec`'s channel first, so that `exec` knows the program loaded
    /// this library even when a setting is refused.
    pub fn from_env() -> Result<Settings, SettingError> {
        if let Some(c) = std::env::var(CHANNEL_VAR).ok().and_then(|v| Channel::from_var(&v)) {
            c.send(Message::Started, &std::process::id().to_string());
        }
        Settings::from_vars(|k| std::env::var(k).ok())
    }
}

/// The end of a Unix socket the program inherited from `reconverge exec`, which reads it while the
/// program runs: the shim says it started and sends each launch's statistics line, so that `exec`'s
/// status and summary never depend on re-reading the user's `--stats` file.
///
/// One message a line: [`Message::Started`] with the process id, [`Message::Launch`] with the launch's
/// JSON object; with [`PER_PC_VAR`], [`Message::Kernel`] and [`Message::Pcs`]. Sends never raise
/// `SIGPIPE`; one that fails (`exec` is gone) is dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Channel {
    fd: i32,
    inode: u64,
}

/// What a line of the channel says: its first word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Message {
    /// The shim started in a process (`started PID`).
    Started,
    /// One launch's statistics (`launch {JSON}`).
    Launch,
    /// A kernel's map, once per kernel (`kernel {JSON}`, a [`reconverge_records::per_pc::KernelMap`]).
    Kernel,
    /// One launch's executions per pc (`pcs {JSON}`, a [`reconverge_records::per_pc::LaunchPcs`]).
    Pcs,
}

impl Message {
    /// The line's first word.
    pub fn word(self) -> &'static str {
        match self {
            Message::Started => "started",
            Message::Launch => "launch",
            Message::Kernel => "kernel",
            Message::Pcs => "pcs",
        }
    }

    /// Splits a line into its message and the rest (`None` for a line of another kind).
    pub fn parse(line: &str) -> Option<(Message, &str)> {
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        [Message::Started, Message::Launch, Message::Kernel, Message::Pcs]
            .into_iter()
            .find(|m| m.word() == word)
            .map(|m| (m, rest))
    }
}

impl Channel {
    /// The channel `FD:INODE` names, when that descriptor is open and is that socket (a program that
    /// closed it, or a child that has another file under that number, has no channel).
    pub fn from_var(value: &str) -> Option<Channel> {
        let (fd, inode) = value.trim().split_once(':')?;
        let c = Channel { fd: fd.parse().ok()?, inode: inode.parse().ok()? };
        c.is_open().then_some(c)
    }

    /// The value of [`CHANNEL_VAR`] that names socket `fd` (`None` when `fd` is not an open socket).
    pub fn var_for(fd: i32) -> Option<String> {
        socket_inode(fd).map(|inode| format!("{fd}:{inode}"))
    }

    /// Whether the descriptor still is the socket the variable named.
    fn is_open(&self) -> bool {
        socket_inode(self.fd) == Some(self.inode)
    }

    /// Sends one line: `message`'s word, a space, `body` (which holds no newline).
    pub fn send(&self, message: Message, body: &str) {
        if !self.is_open() {
            return;
        }
        let line = format!("{} {body}\n", message.word());
        let mut rest = line.as_bytes();
        while !rest.is_empty() {
            // SAFETY: `rest` is a live buffer of `rest.len()` bytes; `fd` is an open socket (checked above).
            let n = unsafe { libc::send(self.fd, rest.as_ptr().cast(), rest.len(), libc::MSG_NOSIGNAL) };
            match n {
                n if n > 0 => rest = &rest[n as usize..],
                _ if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {}
                _ => return,
            }
        }
    }
}

/// The inode of socket `fd`, or `None` when `fd` is not an open socket.
fn socket_inode(fd: i32) -> Option<u64> {
    if fd < 0 {
        return None;
    }
    // SAFETY: `st` is a plain C struct that fstat fills; all-zero bytes are a valid value of it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is writable and of the type fstat expects; a bad descriptor is an error, not UB.
    let ok = unsafe { libc::fstat(fd, &mut st) } == 0;
    (ok && (st.st_mode & libc::S_IFMT) == libc::S_IFSOCK).then_some(st.st_ino)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(pairs: &[(&str, &str)]) -> Result<Settings, SettingError> {
        let map: std::collections::HashMap<String, String> =
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Settings::from_vars(|k| map.get(k).cloned())
    }

    #[test]
    fn defaults_are_pdom_on_gtx480_at_its_warp_size() {
        let s = with(&[]).expect("defaults");
        assert_eq!(s.mechanism.name(), "pdom");
        assert_eq!(s.gpu.as_ref().map(|g| g.name.as_str()), Some("gtx480"));
        assert_eq!(s.warp_size, 32);
        assert_eq!(s.max_instructions, DEFAULT_MAX_INSTRUCTIONS);
        assert!(s.channel.is_none());
        assert!(!with(&[(PER_PC_VAR, "1")]).expect("no channel").per_pc, "counts per pc need a channel");
    }

    #[test]
    fn bad_values_name_the_variable() {
        let e = with(&[("RECONVERGE_MECHANISM", "nope")]).expect_err("unknown");
        assert!(e.to_string().starts_with("RECONVERGE_MECHANISM=nope: unknown mechanism"), "{e}");
        let e = with(&[("RECONVERGE_WARP_SIZE", "48")]).expect_err("not a power of two");
        assert!(e.to_string().contains("RECONVERGE_WARP_SIZE=48"), "{e}");
        let s = with(&[("RECONVERGE_CONFIG", "functional"), ("RECONVERGE_WARP_SIZE", "8")]).expect("functional");
        assert!(s.gpu.is_none() && s.warp_size == 8);
        let e = with(&[("RECONVERGE_MAX_MEMORY", "lots")]).expect_err("not a size");
        assert!(e.to_string().starts_with("RECONVERGE_MAX_MEMORY=lots: expected a positive size"), "{e}");
        assert!(with(&[("RECONVERGE_SAMPLE", "1")]).expect("timed").sample);
        let e = with(&[("RECONVERGE_SAMPLE", "yes")]).expect_err("not 0 or 1");
        assert_eq!(e.to_string(), "RECONVERGE_SAMPLE=yes: expected 0 or 1");
        let e = with(&[("RECONVERGE_SAMPLE", "1"), ("RECONVERGE_CONFIG", "functional")]).expect_err("no cycles");
        assert!(e.to_string().contains("RECONVERGE_CONFIG=functional has none"), "{e}");
    }

    #[test]
    fn ctas_are_sampled_one_in_n_of_a_timed_launch() {
        assert_eq!(with(&[]).expect("default").sample_ctas, None);
        assert_eq!(with(&[("RECONVERGE_SAMPLE_CTAS", "0")]).expect("0").sample_ctas, None);
        assert_eq!(with(&[("RECONVERGE_SAMPLE_CTAS", "10")]).expect("10").sample_ctas, Some(10));
        let e = with(&[("RECONVERGE_SAMPLE_CTAS", "1")]).expect_err("one in one");
        assert_eq!(e.to_string(), "RECONVERGE_SAMPLE_CTAS=1: expected 0 or 2 to 1000000");
        let e = with(&[("RECONVERGE_SAMPLE_CTAS", "ten")]).expect_err("not a number");
        assert!(e.to_string().starts_with("RECONVERGE_SAMPLE_CTAS=ten: "), "{e}");
        let functional = [("RECONVERGE_SAMPLE_CTAS", "4"), ("RECONVERGE_CONFIG", "functional")];
        let e = with(&functional).expect_err("no cycles");
        assert_eq!(
            e.to_string(),
            "RECONVERGE_SAMPLE_CTAS=4: sampling estimates cycles, and RECONVERGE_CONFIG=functional has none"
        );
    }

    /// Issue 37: a value that is neither a preset nor a file was parsed as TOML text.
    #[test]
    fn a_config_that_is_neither_a_preset_nor_a_file_says_so() {
        let e = with(&[("RECONVERGE_CONFIG", "nope")]).expect_err("neither");
        let text = e.to_string();
        assert!(text.starts_with("RECONVERGE_CONFIG=nope: `nope` is neither a preset (gtx480"), "{text}");
        assert!(!text.contains("TOML"), "{text}");
        let dir = std::env::temp_dir().join(format!("reconverge-settings-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join("small.toml");
        std::fs::write(&file, "num_sms = 2\n").expect("write");
        let s = with(&[("RECONVERGE_CONFIG", file.to_str().expect("utf-8"))]).expect("a TOML file");
        assert_eq!(s.gpu.map(|g| g.num_sms), Some(2));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Issue 37: `RECONVERGE_MAX_MEMORY` takes the suffixes `--max-memory` takes.
    #[test]
    fn memory_takes_the_flags_suffixes() {
        assert_eq!(with(&[("RECONVERGE_MAX_MEMORY", "100M")]).expect("100M").max_memory, 100 << 20);
        assert_eq!(with(&[("RECONVERGE_MAX_MEMORY", "4096")]).expect("bytes").max_memory, 4096);
    }

    /// Issue 37: 0 means no limit, as for `run --max-instructions 0`.
    #[test]
    fn zero_instructions_is_no_limit() {
        assert_eq!(with(&[("RECONVERGE_MAX_INSTRUCTIONS", "0")]).expect("0").max_instructions, u64::MAX);
        assert_eq!(with(&[("RECONVERGE_MAX_INSTRUCTIONS", "7")]).expect("7").max_instructions, 7);
    }

    #[test]
    fn the_channel_is_a_named_open_socket_and_carries_lines() {
        let mut fds = [0i32; 2];
        // SAFETY: `fds` has room for the two descriptors socketpair writes.
        let made =
            unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0, fds.as_mut_ptr()) };
        assert_eq!(made, 0);
        let var = Channel::var_for(fds[1]).expect("a socket");
        let c = Channel::from_var(&var).expect("the channel");
        assert_eq!(Channel::from_var(&format!("{}:1", fds[1])), None, "another inode");
        assert_eq!(Channel::from_var("0:0"), None, "not a socket");
        assert_eq!(Channel::from_var("nonsense"), None);
        c.send(Message::Launch, "{\"launch\":1}");
        c.send(Message::Started, "42");
        let s = with(&[(CHANNEL_VAR, &var), (PER_PC_VAR, "1")]).expect("settings");
        assert!(s.per_pc && s.channel == Some(c));
        let mut buf = [0u8; 64];
        // SAFETY: `buf` is writable for its length; fds[0] is the open other end.
        let n = unsafe { libc::read(fds[0], buf.as_mut_ptr().cast(), buf.len()) };
        let text = std::str::from_utf8(&buf[..n.max(0) as usize]).expect("utf-8");
        assert_eq!(text, "launch {\"launch\":1}\nstarted 42\n");
        let lines: Vec<_> = text.lines().map(Message::parse).collect();
        assert_eq!(lines, [Some((Message::Launch, "{\"launch\":1}")), Some((Message::Started, "42"))]);
        assert_eq!(Message::parse("pcs {}"), Some((Message::Pcs, "{}")));
        assert_eq!(Message::parse("kernel {}"), Some((Message::Kernel, "{}")));
        // SAFETY: closing descriptors this test opened.
        unsafe {
            libc::close(fds[0]);
        }
        c.send(Message::Launch, "{}"); // the reader is gone: no SIGPIPE, no error
                                       // SAFETY: as above.
        unsafe {
            libc::close(fds[1]);
        }
        assert_eq!(Channel::from_var(&var), None, "closed");
    }
}
