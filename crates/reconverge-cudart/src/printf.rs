//! Device `printf` output of a launch, printed after it in thread order.
//!
//! The lines go through the C library's `stdout` stream — the program's own buffer — so that the host's
//! output before the launch comes first and its output after the launch comes after, as on a GPU where
//! `cudaDeviceSynchronize` flushes the device's printf buffer into the same stream.

use reconverge_sim::RunResult;

extern "C" {
    /// glibc's `stdout` stream.
    static mut stdout: *mut libc::FILE;
}

/// The launch's device `printf` output, in (block, thread, call) order, with a note when CUDA's 1 MiB
/// printf buffer would have overflowed.
pub fn text(run: &RunResult) -> String {
    let mut out = String::new();
    for r in run.printf_in_thread_order() {
        out.push_str(&r.text);
    }
    if run.printf_truncated {
        out.push_str("reconverge: device printf output beyond the 1 MiB buffer was dropped\n");
    }
    out
}

/// Prints the launch's device `printf` output on the program's standard output.
pub fn print(run: &RunResult) {
    let t = text(run);
    if t.is_empty() {
        return;
    }
    // SAFETY: `stdout` is glibc's stream, valid for the life of the process; fwrite locks it.
    unsafe {
        let out = stdout;
        libc::fwrite(t.as_ptr() as *const libc::c_void, 1, t.len(), out);
        libc::fflush(out);
    }
}
