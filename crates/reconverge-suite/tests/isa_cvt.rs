//! Every `cvt` form, run as PTX through every engine — the functional simulator interpreted and with
//! compiled segments, the timing model, and the reference interpreter — against a table computed here,
//! independently of `reconverge-semantics`: integer arithmetic in `i128`, float rounding by
//! `rustc_apfloat`, and the register rule of the PTX ISA ("Operand Size Exceeding Instruction-Type
//! Size": a destination register wider than the destination type receives the result extended "based on
//! the destination format", sign-extended for a signed integer type, zero-extended otherwise; a source
//! register wider than the source type is read in its low bits).
//!
//! A form is `cvt{.rnd}{.ftz}{.sat}.dtype.atype` with a destination and a source register of a given
//! width; each of the 12 × 12 type pairs is one kernel whose threads load one input pattern each (64
//! patterns per source type: boundaries, ties, subnormals, infinities, NaNs, random bits with random upper
//! bits above the source type) and convert it under every form of the pair. The engines must agree with the
//! table on every result (a NaN result may be any NaN of the destination type: PTX leaves its payload
//! unspecified) and with each other bit for bit.

use reconverge_mechanism::Mechanism;
use reconverge_program::{Arg, Buffer, DecodeOptions, Dtype, JitPolicy, LaunchConfig};
use reconverge_sim::{load, run, NoObserver};
use reconverge_timing::{run_timed, GpuConfig, TimedOptions};
use rustc_apfloat::ieee::{BFloat, Double, Half, Single};
use rustc_apfloat::{Float, FloatConvert, Round};

/// The `cvt` types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum T {
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F16,
    Bf16,
    F32,
    F64,
}

const TYPES: [T; 12] = [T::U8, T::U16, T::U32, T::U64, T::S8, T::S16, T::S32, T::S64, T::F16, T::Bf16, T::F32, T::F64];

impl T {
    fn name(self) -> &'static str {
        match self {
            T::U8 => "u8",
            T::U16 => "u16",
            T::U32 => "u32",
            T::U64 => "u64",
            T::S8 => "s8",
            T::S16 => "s16",
            T::S32 => "s32",
            T::S64 => "s64",
            T::F16 => "f16",
            T::Bf16 => "bf16",
            T::F32 => "f32",
            T::F64 => "f64",
        }
    }

    fn bits(self) -> u32 {
        match self {
            T::U8 | T::S8 => 8,
            T::U16 | T::S16 | T::F16 | T::Bf16 => 16,
            T::U32 | T::S32 | T::F32 => 32,
            T::U64 | T::S64 | T::F64 => 64,
        }
    }

    fn is_float(self) -> bool {
        matches!(self, T::F16 | T::Bf16 | T::F32 | T::F64)
    }

    fn signed(self) -> bool {
        matches!(self, T::S8 | T::S16 | T::S32 | T::S64)
    }

    fn mask(self) -> u64 {
        mask(self.bits())
    }

    /// The range of an integer type.
    fn range(self) -> (i128, i128) {
        let b = self.bits();
        if self.signed() {
            (-(1i128 << (b - 1)), (1i128 << (b - 1)) - 1)
        } else {
            (0, (1i128 << b) - 1)
        }
    }

    /// The integer value of the low bits of `x`.
    fn int_value(self, x: u64) -> i128 {
        let b = self.bits();
        let low = x & self.mask();
        if self.signed() && low >> (b - 1) & 1 == 1 {
            low as i128 - (1i128 << b)
        } else {
            low as i128
        }
    }

    /// Register widths a value of this type can live in: every width from the type's own (at least 16:
    /// PTX has no 8-bit registers in practice) for integers, the type's own for floats.
    fn register_widths(self) -> &'static [u32] {
        match (self.is_float(), self.bits()) {
            (true, 16) => &[16],
            (true, 32) => &[32],
            (true, _) => &[64],
            (false, 8 | 16) => &[16, 32, 64],
            (false, 32) => &[32, 64],
            (false, _) => &[64],
        }
    }
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// One form of a type pair.
#[derive(Clone, Debug)]
struct Form {
    d: T,
    a: T,
    /// The rounding modifier (`rn`, `rzi`, ...), if any.
    rnd: Option<&'static str>,
    ftz: bool,
    sat: bool,
    dst_bits: u32,
    src_bits: u32,
}

impl Form {
    fn text(&self) -> String {
        let mut s = String::from("cvt");
        if let Some(r) = self.rnd {
            s.push('.');
            s.push_str(r);
        }
        if self.ftz {
            s.push_str(".ftz");
        }
        if self.sat {
            s.push_str(".sat");
        }
        format!("{s}.{}.{}", self.d.name(), self.a.name())
    }
}

/// Whether `cvt` from `a` to `d` is exact (every `a` value is a `d` value): no rounding modifier applies.
fn float_widening(d: T, a: T) -> bool {
    matches!((d, a), (T::F32, T::F16 | T::Bf16) | (T::F64, T::F16 | T::Bf16 | T::F32))
}

/// Every form of the pair (`d`, `a`): the rounding modifiers PTX defines for the kind of conversion,
/// `.ftz` where an `f32` is involved, `.sat` on and off, every register width.
fn forms(d: T, a: T) -> Vec<Form> {
    let rnds: &[Option<&'static str>] = match (d.is_float(), a.is_float()) {
        (false, false) => &[None],
        (true, false) => &[None, Some("rn"), Some("rz"), Some("rm"), Some("rp")],
        (false, true) => &[Some("rni"), Some("rzi"), Some("rmi"), Some("rpi")],
        (true, true) if d == a => &[None, Some("rni"), Some("rzi"), Some("rmi"), Some("rpi")],
        (true, true) if float_widening(d, a) => &[None],
        (true, true) => &[Some("rn"), Some("rz"), Some("rm"), Some("rp")],
    };
    let ftzs: &[bool] = if d == T::F32 || a == T::F32 { &[false, true] } else { &[false] };
    let mut out = Vec::new();
    for &rnd in rnds {
        for &ftz in ftzs {
            for sat in [false, true] {
                for &dst_bits in d.register_widths() {
                    for &src_bits in a.register_widths() {
                        out.push(Form { d, a, rnd, ftz, sat, dst_bits, src_bits });
                    }
                }
            }
        }
    }
    out
}

/// What a result must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Want {
    /// Exactly these register bits.
    Bits(u64),
    /// Any NaN of the destination type (the register's other bits zero).
    Nan,
}

/// Converts between the apfloat formats and raw bits.
trait Bits: Float {
    fn from_raw(x: u64) -> Self;
    fn raw(self) -> u64;
}

macro_rules! bits_impl {
    ($t:ty) => {
        impl Bits for $t {
            fn from_raw(x: u64) -> Self {
                <$t>::from_bits(x as u128)
            }
            fn raw(self) -> u64 {
                self.to_bits() as u64
            }
        }
    };
}
bits_impl!(Half);
bits_impl!(BFloat);
bits_impl!(Single);
bits_impl!(Double);

/// The exact value of float `x` of type `t`, as a `Double` (every format here widens exactly).
fn to_double(t: T, x: u64) -> Double {
    let mut lost = false;
    match t {
        T::F16 => FloatConvert::<Double>::convert(Half::from_raw(x & 0xffff), &mut lost).value,
        T::Bf16 => FloatConvert::<Double>::convert(BFloat::from_raw(x & 0xffff), &mut lost).value,
        T::F32 => FloatConvert::<Double>::convert(Single::from_raw(x & 0xffff_ffff), &mut lost).value,
        _ => Double::from_raw(x),
    }
}

/// `v` rounded to type `t` with `r`; the bits.
fn from_double(t: T, v: Double, r: Round) -> u64 {
    let mut lost = false;
    match t {
        T::F16 => FloatConvert::<Half>::convert_r(v, r, &mut lost).value.raw(),
        T::Bf16 => FloatConvert::<BFloat>::convert_r(v, r, &mut lost).value.raw(),
        T::F32 => FloatConvert::<Single>::convert_r(v, r, &mut lost).value.raw(),
        _ => v.raw(),
    }
}

/// Integer `v` rounded to float type `t` with `r`.
fn int_to_float(t: T, v: i128, r: Round) -> u64 {
    match t {
        T::F16 => Half::from_i128_r(v, r).value.raw(),
        T::Bf16 => BFloat::from_i128_r(v, r).value.raw(),
        T::F32 => Single::from_i128_r(v, r).value.raw(),
        _ => Double::from_i128_r(v, r).value.raw(),
    }
}

fn float_round(r: Option<&str>) -> Round {
    match r {
        Some("rz" | "rzi") => Round::TowardZero,
        Some("rm" | "rmi") => Round::TowardNegative,
        Some("rp" | "rpi") => Round::TowardPositive,
        _ => Round::NearestTiesToEven,
    }
}

/// Float bit-pattern facts of type `t`.
fn float_parts(t: T) -> (u32, u32) {
    // (exponent bits, fraction bits)
    match t {
        T::F16 => (5, 10),
        T::Bf16 => (8, 7),
        T::F32 => (8, 23),
        _ => (11, 52),
    }
}

fn is_nan(t: T, x: u64) -> bool {
    let (e, f) = float_parts(t);
    let exp = (x >> f) & mask(e);
    exp == mask(e) && x & mask(f) != 0
}

fn is_subnormal(t: T, x: u64) -> bool {
    let (e, f) = float_parts(t);
    (x >> f) & mask(e) == 0 && x & mask(f) != 0
}

fn sign_bit(t: T) -> u64 {
    1u64 << (t.bits() - 1)
}

/// `.ftz` on an `f32`: a subnormal becomes a zero of the same sign.
fn flush(t: T, ftz: bool, x: u64) -> u64 {
    if ftz && t == T::F32 && is_subnormal(t, x) {
        x & sign_bit(t)
    } else {
        x
    }
}

/// `.sat` on a float result: NaN, negative values and -0.0 become +0.0, values above 1.0 become 1.0.
fn saturate_float(t: T, x: u64) -> u64 {
    let one = from_double(t, Double::from_i128(1).value, Round::NearestTiesToEven);
    if is_nan(t, x) || x & sign_bit(t) != 0 {
        0
    } else if to_double(t, x) > to_double(t, one) {
        one
    } else {
        x
    }
}

/// The result of the value conversion of `x` (the source register's bits) under `f`, in the destination
/// type's width.
fn convert(f: &Form, x: u64) -> Want {
    let (d, a) = (f.d, f.a);
    match (d.is_float(), a.is_float()) {
        (false, false) => {
            let v = a.int_value(x);
            let (lo, hi) = d.range();
            let v = if f.sat { v.clamp(lo, hi) } else { v };
            Want::Bits(v as u64 & d.mask())
        }
        (false, true) => {
            let x = flush(a, f.ftz, x & a.mask());
            if is_nan(a, x) {
                return Want::Bits(0);
            }
            let v = to_double(a, x).round_to_integral(float_round(f.rnd)).value;
            let (lo, hi) = d.range();
            // Saturating: a value beyond a bound (compared as doubles; a rounded bound only matters at
            // values the clamp below catches) is that bound.
            let (lo_d, hi_d) = (Double::from_i128(lo).value, Double::from_i128(hi).value);
            let n = if v.is_infinite() || v > hi_d || v < lo_d {
                if v.is_negative() {
                    lo
                } else {
                    hi
                }
            } else {
                let mut exact = false;
                v.to_i128_r(128, Round::TowardZero, &mut exact).value.clamp(lo, hi)
            };
            Want::Bits(n as u64 & d.mask())
        }
        (true, false) => {
            let r = int_to_float(d, a.int_value(x), float_round(f.rnd));
            Want::Bits(if f.sat { saturate_float(d, r) } else { r })
        }
        (true, true) => {
            let x = flush(a, f.ftz, x & a.mask());
            if is_nan(a, x) {
                return if f.sat { Want::Bits(0) } else { Want::Nan };
            }
            let v = to_double(a, x);
            let r = match f.rnd {
                Some(r @ ("rni" | "rzi" | "rmi" | "rpi")) => {
                    let integral = v.round_to_integral(float_round(Some(r))).value;
                    from_double(d, integral, Round::NearestTiesToEven)
                }
                r => from_double(d, v, float_round(r)),
            };
            let r = flush(d, f.ftz, r);
            Want::Bits(if f.sat { saturate_float(d, r) } else { r })
        }
    }
}

/// What the destination register must hold: the conversion, extended to the register's width by the
/// destination type.
fn want(f: &Form, x: u64) -> Want {
    match convert(f, x) {
        Want::Bits(b) if f.d.signed() && f.dst_bits > f.d.bits() => {
            let sh = 64 - f.d.bits();
            Want::Bits((((b << sh) as i64) >> sh) as u64 & mask(f.dst_bits))
        }
        w => w,
    }
}

fn matches(f: &Form, w: Want, got: u64) -> bool {
    match w {
        Want::Bits(b) => b == got,
        Want::Nan => got & !f.d.mask() == 0 && is_nan(f.d, got),
    }
}

/// A deterministic generator (SplitMix64) for the random patterns.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Patterns that stress a conversion from type `a`: the integer and float boundaries of every destination,
/// ties, subnormals, infinities and NaNs; random bits fill up to `N` (upper bits above the type random too,
/// so a wider source register's extra bits are exercised).
const N: usize = 64;

fn inputs(a: T) -> Vec<u64> {
    let mut v: Vec<u64> = Vec::new();
    if a.is_float() {
        let from = |x: f64| from_double(a, Double::from_bits(x.to_bits() as u128), Round::NearestTiesToEven);
        for x in [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            -0.5,
            1.5,
            2.5,
            -2.5,
            0.3,
            -0.3,
            127.5,
            128.0,
            -128.5,
            -129.0,
            255.5,
            256.0,
            -0.75,
            32767.5,
            32768.0,
            -32768.5,
            65504.0,
            65519.0,
            65520.0,
            2147483520.0,
            2147483648.0,
            -2147483904.0,
            4294967296.0,
            9_223_372_036_854_775_808.0, // 2^63
            -9_223_372_036_854_775_808.0,
            18_446_744_073_709_551_616.0, // 2^64
            1e30,
            -1e30,
            1.0 + 2f64.powi(-24), // a tie between two f32 values
            1.00048828125,
            1.000244140625,
            16777217.0,
            3.0e-39,
            -3.0e-39,
            6.0e-8,
            3.0e-8,
            1e-300,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            v.push(from(x));
        }
        let (e, f) = float_parts(a);
        v.push(1); // the smallest subnormal
        v.push(mask(f) | sign_bit(a)); // the largest negative subnormal
        v.push(mask(e) << f | 1); // a signalling NaN
        v.push(mask(e) << f | 1 << (f - 1) | sign_bit(a)); // a negative quiet NaN
        v.push((mask(e) - 1) << f | mask(f)); // the largest finite value
    } else {
        let (lo, hi) = a.range();
        for x in [
            0i128,
            1,
            -1,
            2,
            lo,
            hi,
            lo + 1,
            hi - 1,
            127,
            128,
            -128,
            -129,
            255,
            256,
            32767,
            32768,
            -32768,
            65535,
            65536,
            2147483647,
            2147483648,
            -2147483648,
            4294967295,
            4294967296,
            16777217,
            16777219,
            9007199254740993,
            0x7fff_ffff_ffff_ffff,
            0x8000_0000_0000_0000,
            -2049,
            65519,
            65520,
            1 << 40,
        ] {
            v.push(x as u64);
        }
    }
    let mut state = 0x5eed ^ a.bits() as u64 ^ (a.is_float() as u64) << 8 ^ (a.signed() as u64) << 9;
    v.truncate(N);
    while v.len() < N {
        v.push(splitmix(&mut state));
    }
    // Random bits above the type's width for half of the patterns: registers wider than the source type
    // must be read in their low bits.
    for (i, x) in v.iter_mut().enumerate() {
        if i % 2 == 1 && a.bits() < 64 {
            *x = (*x & a.mask()) | (splitmix(&mut state) & !a.mask());
        }
    }
    v
}

fn reg_name(bits: u32) -> &'static str {
    match bits {
        16 => "%h",
        32 => "%r",
        _ => "%rd",
    }
}

/// The kernel of one type pair: thread `t` loads pattern `t` into a source register of every width and
/// stores every form's destination register to `out[t * forms + i]` (8 bytes each, the register's bytes).
fn kernel(forms: &[Form]) -> String {
    let n = forms.len();
    let mut s = format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\n.visible .entry cvt_k(.param .u64 in, .param .u64 out)\n{{\n\
         .reg .b16 %hs;\n.reg .b32 %rs;\n.reg .b64 %rds;\n.reg .b32 %t;\n.reg .b64 %p<7>;\n\
         .reg .b16 %h<{n}>;\n.reg .b32 %r<{n}>;\n.reg .b64 %rd<{n}>;\n\
         ld.param.u64 %p1, [in];\ncvta.to.global.u64 %p1, %p1;\nld.param.u64 %p2, [out];\ncvta.to.global.u64 %p2, %p2;\n\
         mov.u32 %t, %tid.x;\nmul.wide.u32 %p3, %t, 8;\nadd.s64 %p4, %p1, %p3;\n\
         ld.global.b16 %hs, [%p4];\nld.global.b32 %rs, [%p4];\nld.global.b64 %rds, [%p4];\n\
         mul.wide.u32 %p5, %t, {};\nadd.s64 %p6, %p2, %p5;\n",
        n * 8
    );
    for (i, f) in forms.iter().enumerate() {
        let dst = format!("{}{i}", reg_name(f.dst_bits));
        let src = format!("{}s", reg_name(f.src_bits));
        s.push_str(&format!("{} {dst}, {src};\nst.global.b{} [%p6+{}], {dst};\n", f.text(), f.dst_bits, i * 8));
    }
    s.push_str("ret;\n}\n");
    s
}

fn u64_buffer(values: &[u64]) -> Buffer {
    Buffer { dtype: Dtype::U64, bytes: values.iter().flat_map(|v| v.to_le_bytes()).collect() }
}

/// Runs one pair's kernel on every engine: `(engine, out buffer)`.
fn run_engines(ptx: &str, args: &[Arg], threads: u32) -> Vec<(&'static str, Buffer)> {
    let module = reconverge_ptx::parse(ptx).unwrap_or_else(|e| panic!("the cvt kernel does not parse: {e}\n{ptx}"));
    let func = module.function_by_name("cvt_k").expect("cvt_k");
    let cfg = LaunchConfig { grid: [1, 1, 1], block: [threads, 1, 1], ..LaunchConfig::default() };
    let out = |buffers: &[Option<Buffer>], engine: &str| -> Buffer {
        buffers.get(1).cloned().flatten().unwrap_or_else(|| panic!("{engine}: no output buffer"))
    };
    let mut results = Vec::new();
    let reference = reconverge_reference::run_reference(&module, func, &cfg, args);
    assert!(reference.error.is_none(), "reference: {:?}", reference.error);
    results.push(("reference", out(&reference.buffers, "reference")));
    let prog = load(&module, Some("cvt_k"), Mechanism::Pdom, &DecodeOptions::default())
        .unwrap_or_else(|e| panic!("the simulator cannot load the cvt kernel: {e}"));
    for (engine, jit) in [("functional", JitPolicy::Off), ("compiled", JitPolicy::Always)] {
        let r = run(
            &prog,
            &LaunchConfig { host: reconverge_program::HostOptions { jit, ..cfg.host.clone() }, ..cfg.clone() },
            args,
            &mut NoObserver,
        );
        assert!(r.error.is_none(), "{engine}: {:?}", r.error);
        results.push((engine, out(&r.buffers, engine)));
    }
    let gpu = GpuConfig::preset("gtx480").expect("gtx480");
    let t = run_timed(&prog, &cfg, &gpu, args, TimedOptions::default());
    assert!(t.run.error.is_none(), "timed: {:?}", t.run.error);
    results.push(("timed", out(&t.run.buffers, "timed")));
    results
}

#[test]
fn every_cvt_form_matches_the_independent_table_on_every_engine() {
    let mut checked = 0usize;
    let mut wrong: Vec<String> = Vec::new();
    let mut wrong_count = 0usize;
    for d in TYPES {
        for a in TYPES {
            let forms = forms(d, a);
            let values = inputs(a);
            let args = [Arg::Buffer(u64_buffer(&values)), Arg::Buffer(Buffer::zeros(Dtype::U64, N * forms.len()))];
            for (engine, out) in run_engines(&kernel(&forms), &args, N as u32) {
                for (t, &x) in values.iter().enumerate() {
                    for (i, f) in forms.iter().enumerate() {
                        let got = out.bits(t * forms.len() + i);
                        let w = want(f, x);
                        checked += 1;
                        if !matches(f, w, got) {
                            wrong_count += 1;
                            if wrong.len() < 25 {
                                wrong.push(format!(
                                    "{engine}: {} {}{} <- {}{}: input {x:#x}: got {got:#x}, want {w:x?}",
                                    f.text(),
                                    reg_name(f.dst_bits),
                                    f.dst_bits,
                                    reg_name(f.src_bits),
                                    f.src_bits
                                ));
                            }
                        }
                    }
                }
            }
        }
    }
    eprintln!("{checked} cvt results checked (every form on 4 engines), {wrong_count} differ from the table");
    assert!(checked > 100_000, "only {checked} results");
    assert!(wrong.is_empty(), "{wrong_count} of {checked} cvt results differ from the table:\n{}", wrong.join("\n"));
}

/// NaN payloads are unspecified by PTX, but the engines share one semantics: they must agree bit for bit.
#[test]
fn every_engine_gives_the_same_bits() {
    for (d, a) in [(T::F16, T::F32), (T::F32, T::F64), (T::F32, T::F32), (T::Bf16, T::F64), (T::S8, T::S64)] {
        let forms = forms(d, a);
        let values = inputs(a);
        let args = [Arg::Buffer(u64_buffer(&values)), Arg::Buffer(Buffer::zeros(Dtype::U64, N * forms.len()))];
        let engines = run_engines(&kernel(&forms), &args, N as u32);
        let (_, reference) = &engines[0];
        for (engine, out) in &engines[1..] {
            let first = (0..out.len()).find(|&k| out.bits(k) != reference.bits(k));
            assert_eq!(
                first,
                None,
                "{engine} and the reference differ on cvt.{}.{} (element {first:?})",
                d.name(),
                a.name()
            );
        }
    }
}

#[test]
fn the_table_knows_the_register_rule() {
    // The issue's reproducers, as the table states them (guards the oracle itself).
    let f = |d, a, sat, dst_bits| Form { d, a, rnd: None, ftz: false, sat, dst_bits, src_bits: 32 };
    assert_eq!(want(&f(T::S8, T::S32, false, 32), 194), Want::Bits(0xffff_ffc2));
    assert_eq!(want(&f(T::S8, T::S32, true, 32), 0xffff_8001), Want::Bits(0xffff_ff80));
    assert_eq!(want(&f(T::S16, T::S32, false, 32), 0xffff_8001), Want::Bits(0xffff_8001));
    assert_eq!(want(&f(T::S8, T::S32, false, 64), 194), Want::Bits(0xffff_ffff_ffff_ffc2));
    assert_eq!(want(&f(T::S8, T::S32, false, 16), 194), Want::Bits(0xffc2));
    assert_eq!(want(&f(T::U8, T::S32, false, 32), 0xffff_ffff), Want::Bits(0xff));
    // NaN to an integer is 0; saturating float conversions clamp.
    let g = Form { d: T::S32, a: T::F32, rnd: Some("rni"), ftz: false, sat: false, dst_bits: 32, src_bits: 32 };
    assert_eq!(want(&g, 0x7fc0_0000), Want::Bits(0));
    assert_eq!(want(&g, f32::INFINITY.to_bits() as u64), Want::Bits(0x7fff_ffff));
    assert_eq!(want(&g, (-2.5f32).to_bits() as u64), Want::Bits((-2i32) as u32 as u64));
    let h = Form { d: T::F16, a: T::F32, rnd: Some("rn"), ftz: false, sat: false, dst_bits: 16, src_bits: 32 };
    assert_eq!(want(&h, 65520f32.to_bits() as u64), Want::Bits(0x7c00), "65520 rounds to +inf in f16");
    assert_eq!(want(&h, 1.0f32.to_bits() as u64), Want::Bits(0x3c00));
}
