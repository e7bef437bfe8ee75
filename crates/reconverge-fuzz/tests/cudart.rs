//! A bounded fuzzing run of the CUDA runtime shim: a fixed range of seeds (random runtime-call sequences,
//! a third of them after a damaged fat binary), each in a child process, ends with no crash. Longer
//! campaigns: `reconverge-fuzz-cudart --seconds N` (docs/cudart.md, "Fuzzing the runtime").

use reconverge_fuzz::cudart::api::Api;
use reconverge_fuzz::cudart::campaign::{self, Options};
use reconverge_fuzz::cudart::fatbin::FatBase;
use reconverge_fuzz::cudart::find_shim;
use reconverge_fuzz::cudart::plan::{Call, Plan, Wrapper};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The fuzzer's binary (the children) and the shim built beside it (a dev-dependency of this crate).
fn options(out: &str, first_seed: u64, count: u64) -> Options {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_reconverge-fuzz-cudart"));
    let shim = find_shim(None, &exe).expect("the shim is built beside the fuzzer");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(out);
    let _ = std::fs::remove_dir_all(&out);
    Options {
        exe,
        shim,
        first_seed,
        count: Some(count),
        seconds: None,
        jobs: 2,
        timeout: Duration::from_secs(20),
        out,
        minimise: true,
        canary: None,
    }
}

#[test]
fn runtime_call_sequences_never_crash_the_shim() {
    let opts = options("cudart-fuzz", 1, 250);
    let t = campaign::run(&opts, |_| {}).expect("the harness runs");
    assert!(t.crashes.is_empty(), "crashes of the runtime shim:\n{}", t.summary());
    assert_eq!(t.children, 250);
    // The sequences get far: most run to their end, damaged fat binaries are refused (status 2), and
    // every entry point the fuzzer drives was called.
    assert!(t.ends.get("exit 0").copied().unwrap_or(0) > 100, "{}", t.summary());
    assert!(t.ends.get("exit 2").copied().unwrap_or(0) > 30, "{}", t.summary());
    assert!(t.damaged_fatbins > 50, "{}", t.summary());
    let never: Vec<&str> =
        Api::NAMES.iter().copied().filter(|n| t.calls_by_entry.get(*n).copied().unwrap_or(0) == 0).collect();
    assert!(never.is_empty(), "entry points never called: {never:?}");
    assert!(t.calls > 10_000, "{}", t.summary());
}

/// The first seeds at or after `from` whose plan registers the fuzzer's own module undamaged.
fn clean_seeds(from: u64, n: usize) -> Vec<u64> {
    (from..)
        .filter(|&s| {
            let p = Plan::generate(s);
            let own = matches!(&p.calls[0], Call::RegisterFatBinary { wrapper: Wrapper::Good(f), .. } if matches!(f.base, FatBase::Own { .. }));
            own && !p.damaged && p.env.iter().all(|(k, v)| *k != "RECONVERGE_WARP_SIZE" || v != "3")
        })
        .take(n)
        .collect()
}

/// A child that dies by a signal is a crash: saved with its plan, log and output, and minimised to the
/// one call it needs (the canary crashes when call 12's turn comes, whatever ran before).
#[test]
fn a_crashing_child_is_caught_saved_and_minimised() {
    let seeds = clean_seeds(1000, 2);
    let mut opts = options("cudart-canary", seeds[0], 1);
    opts.canary = Some(12);
    let t = campaign::run(&opts, |_| {}).expect("the harness runs");
    assert_eq!(t.crashes.len(), 1, "{}", t.summary());
    let c = &t.crashes[0];
    assert_eq!((c.seed, c.what.as_str()), (seeds[0], "signal 11 (SIGSEGV)"));
    assert!(c.call.as_deref().is_some_and(|l| l.starts_with("#12 ")), "{c:?}");
    assert_eq!(c.minimal.as_deref(), Some(&[12][..]));
    assert!(c.reproduce.ends_with("--keep 12"), "{}", c.reproduce);
    for f in ["plan.txt", "log.txt", "output.txt", "crash.txt", "minimal.txt"] {
        assert!(Path::new(&c.dir).join(f).is_file(), "{f} in {}", c.dir);
    }
    assert_eq!(t.ends.get("crash"), Some(&1));
}
