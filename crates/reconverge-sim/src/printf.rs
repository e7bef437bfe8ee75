//! CUDA's device `printf`: the C formatting of one call ([`format()`]) and the output of a launch
//! ([`PrintfRecord`], [`PrintfLog`], [`gather`]).
//!
//! NVCC and NVRTC compile `printf("fmt", args...)` into a call of the external `vprintf(fmt, buffer)`
//! ([`crate::program::Op::Printf`]): the arguments sit in a buffer in the thread's local memory, each
//! aligned to its size, `float`s promoted to `double`. The executor formats each active lane's call in
//! lane order, reading the format string and `%s` strings from simulated memory (at most [`MAX_STRING`]
//! bytes each). What it reads and prints follows C's `printf` as glibc implements it:
//!
//! - conversions `d i u o x X c s p e E f F g G a A %`, flags `- + space # 0`, a width and a precision,
//!   each a number or `*` (an `int` argument, as in C; CUDA documents `*` for the width only), and the
//!   length modifiers `hh h l ll` (also `j z t L`, taken as 8 bytes);
//! - an argument takes 4 bytes for `c` and the integer conversions without `l`/`ll` (`char` and `short`
//!   arguments are promoted to `int`; `hh`/`h` narrow the value back, as C does), 8 bytes for
//!   `l`/`ll`/`j`/`z`/`t` integers, every floating-point conversion (a `double`), `%s` and `%p`;
//! - `%s` of a null pointer prints `(null)` and `%p` of one `(nil)`, as glibc does;
//! - like CUDA, a call formats at most [`MAX_ARGS`] arguments: a conversion that would need more, and
//!   one with an unknown conversion character (`%n` included) or cut short by the end of the string, is
//!   printed as written and takes no argument;
//! - widths and precisions are capped at [`MAX_FIELD`] (C has no cap).
//!
//! The call returns the number of arguments it read (CUDA's `vprintf` returns its argument count).
//! CUDA prints the output of a launch in an unspecified order; the simulator keeps each call as a
//! [`PrintfRecord`] and prints them in thread order (CTA, then thread, then the thread's own order), so the
//! output does not depend on the mechanism, the timing or the host threads. Like CUDA's printf FIFO
//! (`cudaLimitPrintfFifoSize`, 1 MiB by default), a launch keeps at most [`OUTPUT_LIMIT`] bytes of text:
//! later calls are dropped and the result says so (`printf_truncated`).

/// The most bytes of a format string, or of a `%s` string without a precision, read before its NUL: a
/// longer one stops the run as a trap (an unterminated string).
pub const MAX_STRING: usize = 4096;
/// The most bytes of text one launch keeps (CUDA's default printf FIFO, `cudaLimitPrintfFifoSize`).
pub const OUTPUT_LIMIT: usize = 1 << 20;
/// The most arguments one call formats (CUDA's limit): later conversions are printed as written.
pub const MAX_ARGS: u32 = 32;
/// The largest width or precision honoured; larger ones are capped (so that one call's text stays
/// small however its format was written).
pub const MAX_FIELD: usize = 4096;

/// The text one thread's `printf` call printed.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PrintfRecord {
    /// The CTA (`%ctaid`: x, y, z).
    pub cta: [u32; 3],
    /// The thread in its CTA (`%tid`: x, y, z).
    pub thread: [u32; 3],
    /// What the call printed, exactly as formatted (bytes that are not UTF-8 are replaced by U+FFFD).
    pub text: String,
}

impl PrintfRecord {
    /// The thread order: linear CTA index, then linear thread index (z, y, x most significant first).
    pub(crate) fn thread_key(&self) -> [u32; 6] {
        let (c, t) = (self.cta, self.thread);
        [c[2], c[1], c[0], t[2], t[1], t[0]]
    }
}

/// Sorts `records` into thread order: by linear CTA index, then linear thread index, each thread's
/// records staying in the order they were printed (a stable sort).
pub fn sort_thread_order(records: &mut [PrintfRecord]) {
    records.sort_by_key(PrintfRecord::thread_key);
}

/// The printf output of one SM core during a launch, in the order it executed the calls, bounded by
/// [`OUTPUT_LIMIT`] bytes.
#[derive(Clone, Debug, Default)]
pub struct PrintfLog {
    records: Vec<PrintfRecord>,
    bytes: usize,
    truncated: bool,
}

impl PrintfLog {
    /// The records kept, in execution order.
    pub fn records(&self) -> &[PrintfRecord] {
        &self.records
    }

    /// Whether a record was dropped because the output reached [`OUTPUT_LIMIT`] bytes.
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// Keeps `record` unless the output would exceed [`OUTPUT_LIMIT`] bytes (then it and every later
    /// record are dropped); returns whether it was kept.
    pub fn push(&mut self, record: PrintfRecord) -> bool {
        if self.truncated || self.bytes.saturating_add(record.text.len()) > OUTPUT_LIMIT {
            self.truncated = true;
            return false;
        }
        self.bytes += record.text.len();
        self.records.push(record);
        true
    }

    /// Takes the records (execution order) and the truncation flag out, leaving the log empty.
    pub fn take(&mut self) -> (Vec<PrintfRecord>, bool) {
        let truncated = std::mem::take(&mut self.truncated);
        self.bytes = 0;
        (std::mem::take(&mut self.records), truncated)
    }
}

/// The output of a launch run on several SM cores: their records in thread order, cut to the first
/// [`OUTPUT_LIMIT`] bytes in that order, and whether anything was dropped. Each thread runs on one core,
/// so its records keep their order; the result does not depend on how the cores were scheduled.
pub fn gather<'a>(logs: impl IntoIterator<Item = &'a PrintfLog>) -> (Vec<PrintfRecord>, bool) {
    let mut all = Vec::new();
    let mut truncated = false;
    for log in logs {
        all.extend_from_slice(&log.records);
        truncated |= log.truncated;
    }
    sort_thread_order(&mut all);
    let mut bytes = 0usize;
    if let Some(cut) = all.iter().position(|r| {
        bytes = bytes.saturating_add(r.text.len());
        bytes > OUTPUT_LIMIT
    }) {
        all.truncate(cut);
        truncated = true;
    }
    (all, truncated)
}

/// Where the arguments and strings of one call come from (the executor reads simulated memory; tests
/// read a table).
pub trait PrintfSource {
    /// Why a read failed (a memory fault).
    type Error;
    /// The `size`-byte (4 or 8) little-endian argument at byte `offset` of the argument buffer.
    fn arg(&mut self, offset: u64, size: u32) -> Result<u64, Self::Error>;
    /// Appends the string at generic address `addr` to `out`, without its NUL: at most `max` bytes when
    /// a precision bounds it (no NUL needed then), else up to the NUL, which must come within
    /// [`MAX_STRING`] bytes.
    fn string(&mut self, addr: u64, max: Option<usize>, out: &mut Vec<u8>) -> Result<(), Self::Error>;
}

/// A width or precision as written.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Count {
    None,
    Star,
    Num(usize),
}

/// A length modifier: the argument's size and how an integer is narrowed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Len {
    /// `int` (4 bytes).
    Int,
    /// `hh`: `char`.
    Char,
    /// `h`: `short`.
    Short,
    /// `l`, `ll`, `j`, `z`, `t`, `L`: 8 bytes.
    Long,
}

/// One conversion specification.
#[derive(Clone, Copy, Debug)]
struct Spec {
    minus: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
    width: Count,
    prec: Count,
    len: Len,
    conv: u8,
}

/// The conversion characters the formatter knows.
const CONVERSIONS: &[u8] = b"diuoxXcspeEfFgGaA%";

/// Parses the specification after the `%` at `fmt[start - 1]`: the specification (`None` when the
/// string ends first or the conversion character is unknown) and the index after it.
fn parse_spec(fmt: &[u8], start: usize) -> (Option<Spec>, usize) {
    let mut s = Spec {
        minus: false,
        plus: false,
        space: false,
        alt: false,
        zero: false,
        width: Count::None,
        prec: Count::None,
        len: Len::Int,
        conv: 0,
    };
    let mut i = start;
    let at = |i: usize| fmt.get(i).copied().unwrap_or(0);
    loop {
        match at(i) {
            b'-' => s.minus = true,
            b'+' => s.plus = true,
            b' ' => s.space = true,
            b'#' => s.alt = true,
            b'0' => s.zero = true,
            _ => break,
        }
        i += 1;
    }
    let count = |i: &mut usize| -> Count {
        if at(*i) == b'*' {
            *i += 1;
            return Count::Star;
        }
        let mut n: Option<usize> = None;
        while at(*i).is_ascii_digit() {
            n = Some(n.unwrap_or(0).saturating_mul(10).saturating_add(usize::from(at(*i) - b'0')));
            *i += 1;
        }
        n.map_or(Count::None, |n| Count::Num(n.min(MAX_FIELD)))
    };
    s.width = count(&mut i);
    if at(i) == b'.' {
        i += 1;
        s.prec = match count(&mut i) {
            Count::None => Count::Num(0),
            c => c,
        };
    }
    match at(i) {
        b'h' if at(i + 1) == b'h' => (s.len, i) = (Len::Char, i + 2),
        b'h' => (s.len, i) = (Len::Short, i + 1),
        b'l' if at(i + 1) == b'l' => (s.len, i) = (Len::Long, i + 2),
        b'l' | b'j' | b'z' | b't' | b'L' => (s.len, i) = (Len::Long, i + 1),
        _ => {}
    }
    let c = at(i);
    if i >= fmt.len() || !CONVERSIONS.contains(&c) {
        return (None, (i + 1).min(fmt.len()));
    }
    s.conv = c;
    (Some(s), i + 1)
}

/// The arguments of one call, read in order from the buffer.
struct Args<'s, S: PrintfSource> {
    src: &'s mut S,
    offset: u64,
    count: u32,
}

impl<S: PrintfSource> Args<'_, S> {
    /// The next argument of `size` bytes, at the next offset aligned to its size.
    fn next(&mut self, size: u32) -> Result<u64, S::Error> {
        let size64 = u64::from(size);
        let at = self.offset.div_ceil(size64) * size64;
        let v = self.src.arg(at, size)?;
        self.offset = at + size64;
        self.count += 1;
        Ok(v)
    }
}

/// Formats one call: the format string `fmt` (without its NUL) with the arguments and strings `src`
/// provides, appended to `out`. Returns the number of arguments read.
pub fn format<S: PrintfSource>(fmt: &[u8], src: &mut S, out: &mut Vec<u8>) -> Result<u32, S::Error> {
    let mut args = Args { src, offset: 0, count: 0 };
    let mut i = 0;
    while i < fmt.len() {
        let Some(pct) = fmt[i..].iter().position(|&c| c == b'%') else {
            out.extend_from_slice(&fmt[i..]);
            break;
        };
        out.extend_from_slice(&fmt[i..i + pct]);
        let start = i + pct;
        let (spec, end) = parse_spec(fmt, start + 1);
        i = end;
        let Some(mut spec) = spec else {
            out.extend_from_slice(&fmt[start..end]);
            continue;
        };
        if spec.conv == b'%' {
            out.push(b'%');
            continue;
        }
        let needs = 1 + u32::from(spec.width == Count::Star) + u32::from(spec.prec == Count::Star);
        if args.count + needs > MAX_ARGS {
            out.extend_from_slice(&fmt[start..end]);
            continue;
        }
        if spec.width == Count::Star {
            let w = args.next(4)? as u32 as i32;
            spec.minus |= w < 0;
            spec.width = Count::Num((w.unsigned_abs() as usize).min(MAX_FIELD));
        }
        if spec.prec == Count::Star {
            let p = args.next(4)? as u32 as i32;
            spec.prec = if p < 0 { Count::None } else { Count::Num((p as usize).min(MAX_FIELD)) };
        }
        convert(&spec, &mut args, out)?;
    }
    Ok(args.count)
}

/// One conversion (widths and precisions already resolved to numbers).
fn convert<S: PrintfSource>(spec: &Spec, args: &mut Args<'_, S>, out: &mut Vec<u8>) -> Result<(), S::Error> {
    let prec = match spec.prec {
        Count::Num(p) => Some(p),
        _ => None,
    };
    let size = if spec.len == Len::Long { 8 } else { 4 };
    match spec.conv {
        b'd' | b'i' => {
            let v = signed(args.next(size)?, spec.len);
            integer(spec, prec, v.unsigned_abs(), v < 0, out);
        }
        b'u' | b'o' | b'x' | b'X' => {
            let v = unsigned(args.next(size)?, spec.len);
            integer(spec, prec, v, false, out);
        }
        b'c' => {
            let v = args.next(4)? as u8;
            pad(spec, b"", &[v], false, out);
        }
        b's' => {
            let addr = args.next(8)?;
            let mut s = Vec::new();
            if addr == 0 {
                // glibc prints `(null)`, or nothing when the precision cannot hold it.
                if prec.is_none_or(|p| p >= 6) {
                    s.extend_from_slice(b"(null)");
                }
            } else {
                args.src.string(addr, prec, &mut s)?;
            }
            pad(spec, b"", &s, false, out);
        }
        b'p' => pointer(spec, prec, args.next(8)?, out),
        _ => float(spec, prec, args.next(8)?, out),
    }
    Ok(())
}

/// A signed integer argument narrowed to its length modifier's type.
fn signed(v: u64, len: Len) -> i64 {
    match len {
        Len::Int => i64::from(v as u32 as i32),
        Len::Char => i64::from(v as u8 as i8),
        Len::Short => i64::from(v as u16 as i16),
        Len::Long => v as i64,
    }
}

/// An unsigned integer argument narrowed to its length modifier's type.
fn unsigned(v: u64, len: Len) -> u64 {
    match len {
        Len::Int => u64::from(v as u32),
        Len::Char => u64::from(v as u8),
        Len::Short => u64::from(v as u16),
        Len::Long => v,
    }
}

/// The sign a signed conversion prints: `-`, or `+`/space as the flags ask.
fn sign(spec: &Spec, negative: bool) -> &'static [u8] {
    if negative {
        b"-"
    } else if spec.plus {
        b"+"
    } else if spec.space {
        b" "
    } else {
        b""
    }
}

/// `prefix` (sign, `0x`) and `body` padded to the width: spaces on the left, on the right with `-`, or
/// zeros between prefix and body when `zeros` (the `0` flag where it applies).
fn pad(spec: &Spec, prefix: &[u8], body: &[u8], zeros: bool, out: &mut Vec<u8>) {
    let width = match spec.width {
        Count::Num(w) => w,
        _ => 0,
    };
    let fill = width.saturating_sub(prefix.len() + body.len());
    if spec.minus {
        out.extend_from_slice(prefix);
        out.extend_from_slice(body);
        out.resize(out.len() + fill, b' ');
    } else if zeros {
        out.extend_from_slice(prefix);
        out.resize(out.len() + fill, b'0');
        out.extend_from_slice(body);
    } else {
        out.resize(out.len() + fill, b' ');
        out.extend_from_slice(prefix);
        out.extend_from_slice(body);
    }
}

/// `d i u o x X`: the magnitude `v`, negative or not.
fn integer(spec: &Spec, prec: Option<usize>, v: u64, negative: bool, out: &mut Vec<u8>) {
    let mut digits = match spec.conv {
        b'o' => format!("{v:o}"),
        b'x' => format!("{v:x}"),
        b'X' => format!("{v:X}"),
        _ => v.to_string(),
    }
    .into_bytes();
    if prec == Some(0) && v == 0 {
        digits.clear();
    }
    if let Some(p) = prec {
        if digits.len() < p {
            let mut z = vec![b'0'; p - digits.len()];
            z.append(&mut digits);
            digits = z;
        }
    }
    if spec.alt && spec.conv == b'o' && digits.first() != Some(&b'0') {
        digits.insert(0, b'0');
    }
    let prefix: &[u8] = match spec.conv {
        b'd' | b'i' => sign(spec, negative),
        b'x' if spec.alt && v != 0 => b"0x",
        b'X' if spec.alt && v != 0 => b"0X",
        _ => b"",
    };
    pad(spec, prefix, &digits, spec.zero && prec.is_none(), out);
}

/// `%p`: glibc's `(nil)` for a null pointer, else `%#lx` with the sign flags and the precision.
fn pointer(spec: &Spec, prec: Option<usize>, v: u64, out: &mut Vec<u8>) {
    if v == 0 {
        pad(spec, b"", b"(nil)", false, out);
        return;
    }
    let mut prefix = sign(spec, false).to_vec();
    prefix.extend_from_slice(b"0x");
    let hex = format!("{v:x}");
    let mut digits = vec![b'0'; prec.unwrap_or(0).saturating_sub(hex.len())];
    digits.extend_from_slice(hex.as_bytes());
    pad(spec, &prefix, &digits, spec.zero && prec.is_none(), out);
}

/// `e E f F g G a A` of the `double` with bits `bits`.
fn float(spec: &Spec, prec: Option<usize>, bits: u64, out: &mut Vec<u8>) {
    let x = f64::from_bits(bits);
    let negative = x.is_sign_negative();
    let a = x.abs();
    let conv = spec.conv.to_ascii_lowercase();
    let (body, prefix): (String, &str) = if x.is_nan() {
        ("nan".into(), "")
    } else if x.is_infinite() {
        ("inf".into(), "")
    } else {
        match conv {
            b'f' => (fixed(a, prec.unwrap_or(6), spec.alt), ""),
            b'e' => (exponent(a, prec.unwrap_or(6), spec.alt), ""),
            b'g' => (general(a, prec, spec.alt), ""),
            _ => (hex(bits, prec, spec.alt), "0x"),
        }
    };
    let mut pre = sign(spec, negative).to_vec();
    pre.extend_from_slice(prefix.as_bytes());
    let mut body = body.into_bytes();
    if spec.conv.is_ascii_uppercase() {
        pre.make_ascii_uppercase();
        body.make_ascii_uppercase();
    }
    pad(spec, &pre, &body, spec.zero && x.is_finite(), out);
}

/// `%f` of `a >= 0` with `p` decimals (Rust's formatting rounds the exact value half to even, as glibc
/// does in the default rounding mode).
fn fixed(a: f64, p: usize, alt: bool) -> String {
    let mut s = format!("{a:.p$}");
    if alt && p == 0 {
        s.push('.');
    }
    s
}

/// The mantissa digits and the decimal exponent of `a >= 0` rounded to `p` decimals in `%e` form.
fn scientific(a: f64, p: usize) -> (String, i32) {
    let s = format!("{a:.p$e}");
    match s.split_once('e') {
        Some((m, e)) => (m.to_string(), e.parse().unwrap_or(0)),
        None => (s, 0),
    }
}

/// `%e` of `a >= 0` with `p` decimals: `d.ddde+XX`, at least two exponent digits.
fn exponent(a: f64, p: usize, alt: bool) -> String {
    let (mut m, e) = scientific(a, p);
    if alt && p == 0 {
        m.push('.');
    }
    let sign = if e < 0 { '-' } else { '+' };
    format!("{m}e{sign}{:02}", e.unsigned_abs())
}

/// `%g` of `a >= 0`: `%e` or `%f` with `P` significant digits by C's rule, trailing zeros removed
/// unless `#`.
fn general(a: f64, prec: Option<usize>, alt: bool) -> String {
    let p = prec.unwrap_or(6).max(1);
    let x = if a == 0.0 { 0 } else { scientific(a, p - 1).1 };
    let (mut s, tail) = if x < -4 || i64::from(x) >= p as i64 {
        let e = exponent(a, p - 1, alt);
        let at = e.find('e').unwrap_or(e.len());
        (e[..at].to_string(), e[at..].to_string())
    } else {
        let decimals = usize::try_from(p as i64 - 1 - i64::from(x)).unwrap_or(0);
        (fixed(a, decimals, alt), String::new())
    };
    if !alt && s.contains('.') {
        let kept = s.trim_end_matches('0').trim_end_matches('.').len();
        s.truncate(kept);
    }
    s + &tail
}

/// `%a` of the `double` with bits `bits` (sign excluded), without its `0x`: glibc's form, a leading
/// digit `1` (`0` for zero and subnormals), the fraction in hexadecimal (shortest exact without a
/// precision, else rounded half to even), and a binary exponent.
fn hex(bits: u64, prec: Option<usize>, alt: bool) -> String {
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    let (mut lead, exp) = match (biased, frac) {
        (0, 0) => (0u64, 0),
        (0, _) => (0, -1022),
        _ => (1, biased - 1023),
    };
    // 13 hexadecimal digits of fraction.
    let mut digits = frac;
    let mut n = 13usize;
    match prec {
        None => {
            while n > 0 && digits & 0xf == 0 {
                digits >>= 4;
                n -= 1;
            }
        }
        Some(p) if p < 13 => {
            let drop = 4 * (13 - p) as u32;
            let rest = digits & ((1u64 << drop) - 1);
            let half = 1u64 << (drop - 1);
            digits >>= drop;
            let odd = if p == 0 { lead & 1 == 1 } else { digits & 1 == 1 };
            if rest > half || (rest == half && odd) {
                digits += 1;
                if p == 0 || digits >> (4 * p) != 0 {
                    // The carry reaches the leading digit.
                    lead += 1;
                    digits &= (1u64 << (4 * p)).wrapping_sub(1);
                }
            }
            n = p;
        }
        Some(_) => {}
    }
    let mut s = format!("{lead}");
    if n > 0 || alt {
        s.push('.');
    }
    if n > 0 {
        s.push_str(&format!("{digits:0n$x}"));
    }
    if let Some(p) = prec {
        s.extend(std::iter::repeat_n('0', p.saturating_sub(n.max(13))));
    }
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{s}p{sign}{}", exp.unsigned_abs())
}

#[cfg(test)]
mod tests;
