//! Standard output. Every command prints through [`write()`], so that a closed pipe (`reconverge compare |
//! head`) ends the command quietly with status 0 instead of a panic.

use crate::Failure;
use std::io::Write;

/// Writes `text` to standard output.
pub(crate) fn write(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Failure::quiet()),
        Err(e) => Err(Failure::input(format!("cannot write to standard output: {e}"))),
    }
}

/// `print!` through [`write()`]: evaluates to `Result<(), Failure>`.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => { $crate::out::write(&format!($($arg)*)) };
}

/// `println!` through [`write()`]: evaluates to `Result<(), Failure>`.
#[macro_export]
macro_rules! outln {
    () => { $crate::out::write("\n") };
    ($($arg:tt)*) => { $crate::out::write(&format!("{}\n", format!($($arg)*))) };
}
