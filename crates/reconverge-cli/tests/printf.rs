//! `reconverge run` prints what the kernel's `printf` calls printed, in thread order and exactly as
//! formatted, before its report: functional and timed, and on standard error with `--json`.

mod common;
use common::{ok, reconverge};

const PTX: &str = "crates/reconverge-cli/tests/data/printf.ptx";

/// 2 CTAs of 5 threads (the kernel's comment says what each prints): `%d`, `%5.2f`, `%s`, `%x`, `%lld`,
/// `%c` and `%%`, a divergent call, and a call without arguments.
const EXPECTED: &str = "\
t0 c0: 3| 0.00|str|0|0|A|%
done
t1 c0: -4| 1.25|str|ff|-1234567890123|B|%
odd 1
t2 c0: -11| 2.50|str|1fe|-2469135780246|C|%
t3 c0: -18| 3.75|str|2fd|-3703703670369|D|%
odd 3
t4 c0: -25| 5.00|str|3fc|-4938271560492|E|%
t0 c1: 3| 0.00|str|0|0|A|%
t1 c1: -4| 1.25|str|ff|-1234567890123|B|%
odd 1
t2 c1: -11| 2.50|str|1fe|-2469135780246|C|%
t3 c1: -18| 3.75|str|2fd|-3703703670369|D|%
odd 3
t4 c1: -25| 5.00|str|3fc|-4938271560492|E|%
";

const LAUNCH: [&str; 6] = ["--grid", "2", "--block", "5", "--arg", "zeros:i32:10"];

/// The printf lines, then the report (which starts with the kernel's name).
fn check(out: &str, what: &str) {
    let (printed, report) = out.split_at(out.find("kernel formats under").unwrap_or(0));
    assert_eq!(printed, EXPECTED, "{what}:\n{out}");
    assert!(report.contains("completed"), "{what}:\n{out}");
}

#[test]
fn functional_pdom_prints_in_thread_order_before_the_report() {
    let out = ok(&[&["run", PTX, "--functional", "--mechanism", "pdom"][..], &LAUNCH].concat());
    check(&out, "functional pdom");
}

#[test]
fn a_timed_run_prints_the_same_lines() {
    let out = ok(&[&["run", PTX, "--config", "gtx480", "--threads", "2"][..], &LAUNCH].concat());
    check(&out, "timed gtx480");
    assert!(out.contains("cycles"), "{out}");
}

#[test]
fn with_json_the_lines_go_to_standard_error() {
    let (code, out, err) = reconverge(&[&["run", PTX, "--functional", "--json"][..], &LAUNCH].concat());
    assert_eq!(code, 0, "{err}");
    assert_eq!(err, EXPECTED);
    let j: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    assert_eq!(j["outcome"], "completed");
}
