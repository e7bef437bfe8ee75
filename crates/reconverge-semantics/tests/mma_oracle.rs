//! `mma`: every case of `tests/data/mma_cases.txt`, which `scripts/mma_oracle.py` (a NumPy implementation of
//! the module documentation and of the PTX ISA's fragment layouts, written without reading the function
//! bodies) generates, must come out bit for bit the same here; and cases worked out by hand from the ISA's
//! fragment figures. `MMA_ORACLE_DUMP=FILE` appends every differing case to FILE (the failure message shows
//! the first few).

use std::collections::{BTreeMap, HashSet};

use reconverge_semantics::mma::{
    ldmatrix_address_lane, ldmatrix_source, mma, mma_element, movmatrix, wmma_element, wmma_gather, wmma_mma,
    wmma_offset, wmma_regs, wmma_scatter, Elem, MmaKind, Operand, Shape, WmmaKind, WmmaShape,
};
use reconverge_semantics::Rounding;

fn hex(s: &str) -> u64 {
    u64::from_str_radix(s, 16).unwrap_or_else(|e| panic!("hex {s:?}: {e}"))
}

/// Fixed-width hex fields concatenated without separators.
fn hex_run(s: &str, digits: usize) -> Vec<u64> {
    assert!(s.len().is_multiple_of(digits), "hex run of {} digits is not a multiple of {digits}", s.len());
    (0..s.len()).step_by(digits).map(|i| hex(&s[i..i + digits])).collect()
}

fn dec<T: std::str::FromStr>(s: &str) -> T
where
    T::Err: std::fmt::Debug,
{
    s.parse().unwrap_or_else(|e| panic!("number {s:?}: {e:?}"))
}

fn elem(s: &str) -> Elem {
    Elem::ALL.into_iter().find(|e| e.name() == s).unwrap_or_else(|| panic!("element type {s:?}"))
}

fn shape(s: &str) -> Shape {
    Shape::ALL.into_iter().find(|e| e.name() == s).unwrap_or_else(|| panic!("mma shape {s:?}"))
}

fn wshape(s: &str) -> WmmaShape {
    WmmaShape::ALL.into_iter().find(|e| e.name() == s).unwrap_or_else(|| panic!("wmma shape {s:?}"))
}

fn rounding(s: &str) -> Rounding {
    match s {
        "rn" => Rounding::Rn,
        "rz" => Rounding::Rz,
        "rm" => Rounding::Rm,
        "rp" => Rounding::Rp,
        _ => panic!("rounding {s:?}"),
    }
}

fn operand(s: &str) -> Operand {
    match s {
        "a" => Operand::A,
        "b" => Operand::B,
        "c" => Operand::C,
        _ => panic!("operand {s:?}"),
    }
}

fn flag(s: &str) -> bool {
    match s {
        "0" => false,
        "1" => true,
        _ => panic!("flag {s:?}"),
    }
}

/// The element of a lane-major register file at matrix position (row, col), found through the layout under
/// test (used only to describe a mismatch).
fn element_at(
    regs: &[u64],
    nregs: usize,
    e: Elem,
    pos: impl Fn(usize, usize) -> Option<(usize, usize)>,
    rc: (usize, usize),
) -> u64 {
    let per = e.per_register();
    for lane in 0..32 {
        for i in 0..nregs * per {
            if pos(lane, i) == Some(rc) {
                let mask = if e.bits() == 64 { u64::MAX } else { (1u64 << e.bits()) - 1 };
                return (regs[lane * nregs + i / per] >> ((i % per) as u32 * e.bits())) & mask;
            }
        }
    }
    panic!("no lane holds {rc:?}")
}

/// Describes the differing elements of an `mma` case: position, expected, actual, and the row of A, column
/// of B and element of C it came from.
fn describe_mma(kind: &MmaKind, a: &[u64], b: &[u64], c: &[u64], want: &[u64], got: &[u64]) -> String {
    let regs = kind.regs();
    let (m, n, k) = kind.shape.mnk();
    let mut out = String::new();
    let mut shown = 0;
    let d_at = |regs_v: &[u64], rc| {
        element_at(regs_v, regs[3], kind.d, |l, i| mma_element(kind.shape, Operand::C, kind.d, l, i), rc)
    };
    let mut differing = 0;
    for i in 0..m {
        for j in 0..n {
            let (w, g) = (d_at(want, (i, j)), d_at(got, (i, j)));
            if w == g {
                continue;
            }
            differing += 1;
            if shown < 3 {
                shown += 1;
                let arow: Vec<String> = (0..k)
                    .map(|q| {
                        format!(
                            "{:x}",
                            element_at(
                                a,
                                regs[0],
                                kind.a,
                                |l, x| mma_element(kind.shape, Operand::A, kind.a, l, x),
                                (i, q)
                            )
                        )
                    })
                    .collect();
                let bcol: Vec<String> = (0..k)
                    .map(|q| {
                        format!(
                            "{:x}",
                            element_at(
                                b,
                                regs[1],
                                kind.b,
                                |l, x| mma_element(kind.shape, Operand::B, kind.b, l, x),
                                (q, j)
                            )
                        )
                    })
                    .collect();
                let cv =
                    element_at(c, regs[2], kind.c, |l, x| mma_element(kind.shape, Operand::C, kind.c, l, x), (i, j));
                out += &format!(
                    "    d[{i}][{j}]: expected {w:x}, actual {g:x}; a row {} b col {} c {cv:x}\n",
                    arow.join(","),
                    bcol.join(",")
                );
            }
        }
    }
    format!("  {differing} elements differ\n{out}")
}

fn describe_wmma(kind: &WmmaKind, a: &[u64], b: &[u64], c: &[u64], want: &[u64], got: &[u64]) -> String {
    let (_, n, k) = kind.shape.mnk();
    let mut out = String::new();
    let differing = want.iter().zip(got).filter(|(w, g)| w != g).count();
    for (idx, (w, g)) in want.iter().zip(got).enumerate().filter(|(_, (w, g))| w != g).take(3) {
        let (i, j) = (idx / n, idx % n);
        let arow: Vec<String> = (0..k).map(|q| format!("{:x}", a[i * k + q])).collect();
        let bcol: Vec<String> = (0..k).map(|q| format!("{:x}", b[q * n + j])).collect();
        out += &format!(
            "    d[{i}][{j}]: expected {w:x}, actual {g:x}; a row {} b col {} c {:x}\n",
            arow.join(","),
            bcol.join(","),
            c[idx]
        );
    }
    format!("  {differing} elements differ\n{out}")
}

#[test]
fn the_oracle_table_agrees_bit_for_bit() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/mma_cases.txt");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut declared: Option<usize> = None;
    let mut cases = 0usize;
    let mut by_combination: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut mismatches: Vec<String> = Vec::new();
    let mut mismatch_count = 0usize;
    for (no, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(' ').collect();
        if f[0] == "cases" {
            declared = Some(dec(f[1]));
            continue;
        }
        cases += 1;
        let short: String = line.chars().take(60).collect();
        let (key, elements, problem) = match f[0] {
            "mma" => {
                assert_eq!(f.len(), 12, "line {}: mma fields", no + 1);
                let kind = MmaKind {
                    shape: shape(f[1]),
                    a: elem(f[2]),
                    b: elem(f[3]),
                    c: elem(f[4]),
                    d: elem(f[5]),
                    satfinite: flag(f[6]),
                    rnd: rounding(f[7]),
                };
                assert!(kind.is_valid(), "line {}: {kind:?} is not valid", no + 1);
                let digits = if kind.a == Elem::F64 { 16 } else { 8 };
                let (a, b, c, want) =
                    (hex_run(f[8], digits), hex_run(f[9], digits), hex_run(f[10], digits), hex_run(f[11], digits));
                let regs = kind.regs();
                for (v, r, name) in [(&a, regs[0], "A"), (&b, regs[1], "B"), (&c, regs[2], "C"), (&want, regs[3], "D")]
                {
                    assert_eq!(v.len(), 32 * r, "line {}: {name} registers", no + 1);
                }
                let mut got = vec![0xDEAD_BEEF_u64; want.len()];
                let ok = mma(&kind, &a, &b, &c, &mut got);
                let (m, n, _) = kind.shape.mnk();
                let problem = if !ok {
                    Some("  mma returned false\n".to_string())
                } else if got != want {
                    Some(describe_mma(&kind, &a, &b, &c, &want, &got))
                } else {
                    None
                };
                (f[..8].join(" "), m * n, problem)
            }
            "wmma" => {
                assert_eq!(f.len(), 12, "line {}: wmma fields", no + 1);
                let kind = WmmaKind {
                    shape: wshape(f[1]),
                    a: elem(f[2]),
                    b: elem(f[3]),
                    c: elem(f[4]),
                    d: elem(f[5]),
                    satfinite: flag(f[6]),
                    rnd: rounding(f[7]),
                };
                assert!(kind.is_valid(), "line {}: {kind:?} is not valid", no + 1);
                let digits = |e: Elem| e.bits() as usize / 4;
                let a = hex_run(f[8], digits(kind.a));
                let b = hex_run(f[9], digits(kind.b));
                let c = hex_run(f[10], digits(kind.c));
                let want = hex_run(f[11], digits(kind.d));
                let (m, n, k) = kind.shape.mnk();
                assert_eq!((a.len(), b.len(), c.len(), want.len()), (m * k, k * n, m * n, m * n), "line {}", no + 1);
                let mut got = vec![0xDEAD_BEEF_u64; m * n];
                let problem = if !wmma_mma(&kind, &a, &b, &c, &mut got) {
                    Some("  wmma_mma returned false\n".to_string())
                } else if got != want {
                    Some(describe_wmma(&kind, &a, &b, &c, &want, &got))
                } else {
                    None
                };
                (f[..8].join(" "), m * n, problem)
            }
            "ldmatrix" => {
                let (num, trans): (usize, bool) = (dec(f[1]), flag(f[2]));
                assert_eq!(f.len(), 3 + 32 * num, "line {}: ldmatrix fields", no + 1);
                let mut bad = Vec::new();
                for lane in 0..32 {
                    for reg in 0..num {
                        let want: Vec<usize> = f[3 + lane * num + reg].split('.').map(dec).collect();
                        let got = ldmatrix_source(num, trans, lane, reg);
                        if got != Some((want[0], want[1], want[2])) {
                            bad.push(format!("lane {lane} reg {reg}: expected {want:?}, actual {got:?}"));
                        }
                    }
                }
                let problem = (!bad.is_empty()).then(|| format!("  {}\n", bad[..bad.len().min(4)].join("\n  ")));
                (format!("ldmatrix {num} {}", f[2]), 32 * num, problem)
            }
            "movmatrix" => {
                let src: [u32; 32] = hex_run(f[1], 8).iter().map(|&v| v as u32).collect::<Vec<_>>().try_into().unwrap();
                let want: Vec<u32> = hex_run(f[2], 8).iter().map(|&v| v as u32).collect();
                let got = movmatrix(&src);
                let problem = (got[..] != want[..]).then(|| format!("  expected {want:x?}\n  actual   {got:x?}\n"));
                ("movmatrix".to_string(), 64, problem)
            }
            "wfrag" => {
                let (s, which, e, regs) = (wshape(f[1]), operand(f[2]), elem(f[3]), dec::<usize>(f[4]));
                let per = e.per_register();
                assert_eq!(f.len(), 5 + 32 * regs * per, "line {}: wfrag fields", no + 1);
                let (_, n, k) = s.mnk();
                let cols = match which {
                    Operand::A => k,
                    Operand::B | Operand::C => n,
                };
                let mut bad = Vec::new();
                if wmma_regs(s, which, e) != regs {
                    bad.push(format!("wmma_regs {} != {regs}", wmma_regs(s, which, e)));
                }
                for lane in 0..32 {
                    for slot in 0..regs * per {
                        let want: usize = dec(f[5 + lane * regs * per + slot]);
                        let got = wmma_element(s, which, e, lane, slot);
                        if got != Some((want / cols, want % cols)) {
                            bad.push(format!("lane {lane} slot {slot}: expected index {want}, actual {got:?}"));
                        }
                    }
                }
                let problem = (!bad.is_empty()).then(|| format!("  {}\n", bad[..bad.len().min(4)].join("\n  ")));
                (f[..4].join(" "), 32 * regs * per, problem)
            }
            op => panic!("line {}: unknown record {op:?}", no + 1),
        };
        let entry = by_combination.entry(key).or_default();
        entry.0 += 1;
        entry.1 += elements;
        if let Some(p) = problem {
            mismatch_count += 1;
            if let Ok(dump) = std::env::var("MMA_ORACLE_DUMP") {
                use std::io::Write;
                let mut out = std::fs::OpenOptions::new().append(true).create(true).open(dump).unwrap();
                writeln!(out, "{line}\n{p}").unwrap();
            }
            if mismatches.len() < 6 {
                mismatches.push(format!("line {}: {short}…\n{p}", no + 1));
            }
        }
    }
    let declared = declared.expect("the file declares its number of cases");
    assert_eq!(cases, declared, "the file declares {declared} cases and holds {cases}");
    // Every implemented combination is covered, with a few hundred results each.
    let mma_combos = by_combination.keys().filter(|k| k.starts_with("mma ")).count();
    let wmma_combos = by_combination.keys().filter(|k| k.starts_with("wmma ")).count();
    assert_eq!(mma_combos, 36, "mma combinations in the file");
    assert_eq!(wmma_combos, 32, "wmma combinations in the file");
    for (key, &(_, elements)) in &by_combination {
        if key.starts_with("mma ") || key.starts_with("wmma ") {
            assert!(elements >= 128, "{key}: only {elements} results");
        }
    }
    if mismatch_count > 0 {
        panic!("{mismatch_count} of {cases} cases differ from the oracle; the first ones:\n{}", mismatches.join(""));
    }
    let results: usize = by_combination.values().map(|v| v.1).sum();
    println!("{cases} cases ({results} element results) agree; per combination (cases, results):");
    for (key, (n, e)) in &by_combination {
        println!("  {key}: {n}, {e}");
    }
}

// ------------------------------------------------------------------------------------------------------------
// Cases worked out by hand.
// ------------------------------------------------------------------------------------------------------------

const F16_ONE: u64 = 0x3C00;

fn f16_of(v: f32) -> u64 {
    half::f16::from_f32(v).to_bits() as u64
}

/// Packs a row-major matrix of elements into `mma` registers along the ISA layout (via `mma_element`, whose
/// positions the next test pins by hand).
fn pack(shape: Shape, which: Operand, e: Elem, mat: &[u64], cols: usize) -> Vec<u64> {
    let (m, n, k) = shape.mnk();
    let (rows, c) = match which {
        Operand::A => (m, k),
        Operand::B => (k, n),
        Operand::C => (m, n),
    };
    assert_eq!(c, cols);
    let per = e.per_register();
    let nregs = rows * cols / 32 / per;
    let mut regs = vec![0u64; 32 * nregs];
    for lane in 0..32 {
        for i in 0..nregs * per {
            let (r, cc) = mma_element(shape, which, e, lane, i).unwrap();
            regs[lane * nregs + i / per] |= mat[r * cols + cc] << ((i % per) as u32 * e.bits());
        }
    }
    regs
}

fn unpack(shape: Shape, e: Elem, regs: &[u64]) -> Vec<u64> {
    let (m, n, _) = shape.mnk();
    let per = e.per_register();
    let nregs = m * n / 32 / per;
    let mask = if e.bits() == 64 { u64::MAX } else { (1 << e.bits()) - 1 };
    let mut mat = vec![0u64; m * n];
    for lane in 0..32 {
        for i in 0..nregs * per {
            let (r, c) = mma_element(shape, Operand::C, e, lane, i).unwrap();
            mat[r * n + c] = (regs[lane * nregs + i / per] >> ((i % per) as u32 * e.bits())) & mask;
        }
    }
    mat
}

/// Positions read off the ISA's formulas and figures by hand (groupID = lane >> 2, threadID_in_group =
/// lane % 4).
#[test]
fn fragment_positions_by_hand() {
    use Elem::*;
    use Operand::*;
    use Shape::*;
    // m16n8k16 .f16 A, lane 5 (g 1, t 1): a0 a1 row 1 cols 2 3; a2 a3 row 9; a4 col 10; a7 row 9 col 11.
    let a = |s, e, l, i| mma_element(s, A, e, l, i);
    let b = |s, e, l, i| mma_element(s, B, e, l, i);
    let c = |s, e, l, i| mma_element(s, C, e, l, i);
    assert_eq!(
        [0, 1, 2, 3, 4, 7].map(|i| a(M16N8K16, F16, 5, i).unwrap()),
        [(1, 2), (1, 3), (9, 2), (9, 3), (1, 10), (9, 11)]
    );
    // B lane 5: b0 row 2, b1 row 3, b2 row 10, b3 row 11, column 1.
    assert_eq!([0, 1, 2, 3].map(|i| b(M16N8K16, Bf16, 5, i).unwrap()), [(2, 1), (3, 1), (10, 1), (11, 1)]);
    // C lane 31 (g 7, t 3): c0 (7, 6), c3 (15, 7).
    assert_eq!(c(M16N8K16, F32, 31, 0), Some((7, 6)));
    assert_eq!(c(M16N8K16, F16, 31, 3), Some((15, 7)));
    // m16n8k8 .tf32, lane 6 (g 1, t 2): a0 (1, 2), a1 (9, 2), a2 (1, 6), a3 (9, 6); b1 (6, 1).
    assert_eq!([0, 1, 2, 3].map(|i| a(M16N8K8, Tf32, 6, i).unwrap()), [(1, 2), (9, 2), (1, 6), (9, 6)]);
    assert_eq!(b(M16N8K8, Tf32, 6, 1), Some((6, 1)));
    // m16n8k8 .f16 lane 6: a2 (9, 4); b1 (5, 1).
    assert_eq!(a(M16N8K8, F16, 6, 2), Some((9, 4)));
    assert_eq!(b(M16N8K8, F16, 6, 1), Some((5, 1)));
    // m16n8k4 .tf32 lane 6: a1 (9, 2), b0 (2, 1).
    assert_eq!(a(M16N8K4, Tf32, 6, 1), Some((9, 2)));
    assert_eq!(b(M16N8K4, Tf32, 6, 0), Some((2, 1)));
    // m16n8k32 .s8 lane 9 (g 2, t 1): a5 row g + 8 = 10 col 4 + 1 = 5; a13 (10, 21); a9 (2, 21); a1 (2, 5);
    // b6 (22, 2).
    assert_eq!(a(M16N8K32, S8, 9, 5), Some((10, 5)));
    assert_eq!(a(M16N8K32, U8, 9, 13), Some((10, 21)));
    assert_eq!(a(M16N8K32, S8, 9, 9), Some((2, 21)));
    assert_eq!(a(M16N8K32, S8, 9, 1), Some((2, 5)));
    assert_eq!(b(M16N8K32, S8, 9, 6), Some((22, 2)));
    // m16n8k16 .u8 lane 9: a6 (10, 6); b3 (7, 2).
    assert_eq!(a(M16N8K16, U8, 9, 6), Some((10, 6)));
    assert_eq!(b(M16N8K16, U8, 9, 3), Some((7, 2)));
    // m8n8k16 lane 30 (g 7, t 2): a3 (7, 11), b0 (8, 7), c1 (7, 5).
    assert_eq!(a(M8N8K16, S8, 30, 3), Some((7, 11)));
    assert_eq!(b(M8N8K16, S8, 30, 0), Some((8, 7)));
    assert_eq!(c(M8N8K16, S32, 30, 1), Some((7, 5)));
    // m8n8k4 .f64 lane 13: a0 (row 13 >> 2 = 3, col 13 % 4 = 1), b0 (1, 3), c1 (3, 3).
    assert_eq!(
        (a(M8N8K4, F64, 13, 0), b(M8N8K4, F64, 13, 0), c(M8N8K4, F64, 13, 1)),
        (Some((3, 1)), Some((1, 3)), Some((3, 3)))
    );
    // Out of range: lane 32, i past the fragment, a type without that layout.
    assert_eq!(a(M16N8K16, F16, 32, 0), None);
    assert_eq!(a(M16N8K16, F16, 0, 8), None);
    assert_eq!(a(M16N8K16, Tf32, 0, 0), None);
    assert_eq!(a(M8N8K4, F16, 0, 0), None);
}

/// Every layout covers its matrix exactly once.
#[test]
fn every_mma_layout_is_a_bijection() {
    let combos: &[(Shape, &[Elem])] = &[
        (Shape::M16N8K16, &[Elem::F16, Elem::Bf16, Elem::S8, Elem::U8]),
        (Shape::M16N8K8, &[Elem::F16, Elem::Bf16, Elem::Tf32]),
        (Shape::M16N8K4, &[Elem::Tf32]),
        (Shape::M8N8K4, &[Elem::F64]),
        (Shape::M8N8K16, &[Elem::S8]),
        (Shape::M16N8K32, &[Elem::U8]),
    ];
    for &(s, elems) in combos {
        let (m, n, k) = s.mnk();
        for &e in elems {
            for (which, rows, cols) in [(Operand::A, m, k), (Operand::B, k, n), (Operand::C, m, n)] {
                let mut seen = HashSet::new();
                for lane in 0..32 {
                    for i in 0..rows * cols / 32 {
                        let (r, c) = mma_element(s, which, e, lane, i).unwrap();
                        assert!(r < rows && c < cols);
                        assert!(seen.insert((r, c)), "{s:?} {e:?} {which:?}: ({r}, {c}) twice");
                    }
                }
                assert_eq!(seen.len(), rows * cols);
            }
        }
    }
}

/// With A the identity (m16n8k16, K = M = 16), D = B + C: each sum is one B element plus zeros, plus C,
/// rounded once. Integer values make it exact.
#[test]
fn identity_a_gives_b_plus_c() {
    let s = Shape::M16N8K16;
    let kind = MmaKind::new(s, Elem::F16, Elem::F16, Elem::F32, Elem::F32);
    assert!(kind.is_valid());
    assert_eq!(kind.regs(), [4, 2, 4, 4]);
    let ident: Vec<u64> = (0..256).map(|x| if x / 16 == x % 16 { F16_ONE } else { 0 }).collect();
    let bm: Vec<u64> = (0..128).map(|x| f16_of((x as f32) - 60.0)).collect();
    let cm: Vec<u64> = (0..128).map(|x| (1000.0f32 + 3.0 * x as f32).to_bits() as u64).collect();
    let (a, b, c) = (
        pack(s, Operand::A, Elem::F16, &ident, 16),
        pack(s, Operand::B, Elem::F16, &bm, 8),
        pack(s, Operand::C, Elem::F32, &cm, 8),
    );
    let mut d = vec![0; 128];
    assert!(mma(&kind, &a, &b, &c, &mut d));
    let dm = unpack(s, Elem::F32, &d);
    for (x, &v) in dm.iter().enumerate() {
        assert_eq!(f32::from_bits(v as u32), (x as f32 - 60.0) + (1000.0 + 3.0 * x as f32), "element {x}");
    }
    // The same through wmma on whole matrices (m16n16k16: D is 16x16, B 16x16).
    let wk = WmmaKind::new(WmmaShape::M16N16K16, Elem::F16, Elem::F16, Elem::F32, Elem::F16);
    let bm: Vec<u64> = (0..256).map(|x| f16_of((x % 50) as f32)).collect();
    let cm: Vec<u64> = (0..256).map(|x| (x as f32).to_bits() as u64).collect();
    let mut dm = vec![0; 256];
    assert!(wmma_mma(&wk, &ident, &bm, &cm, &mut dm));
    for (x, &v) in dm.iter().enumerate() {
        assert_eq!(v, f16_of((x % 50 + x) as f32), "element {x}");
    }
}

/// `.f16` accumulation rounds the binary64 sum once, ties to even: 2048 + 1 = 2049 lies halfway between the
/// binary16 neighbours 2048 and 2050 and rounds to 2048; 2048 + 3 = 2051 rounds to 2052. Sums that overflow
/// binary16 give +inf; NaN and inf - inf give the canonical NaN 0x7FFF.
#[test]
fn f16_accumulation_rounds_once_to_nearest_even() {
    let s = Shape::M16N8K8;
    let kind = MmaKind::new(s, Elem::F16, Elem::F16, Elem::F16, Elem::F16);
    assert_eq!(kind.regs(), [2, 1, 2, 2]);
    let mut am = vec![0u64; 16 * 8];
    let mut bm = vec![0u64; 8 * 8];
    let mut cm = vec![0u64; 16 * 8];
    // Row 0: 1024 + 1024 (two products), c = 1 -> 2049 -> 2048. Row 1: 1024 + 1024 + 3 -> 2052.
    for r in [0, 1] {
        am[r * 8] = f16_of(32.0);
        am[r * 8 + 1] = f16_of(32.0);
    }
    bm[0] = f16_of(32.0); // b[0][0]
    bm[8] = f16_of(32.0); // b[1][0]
    cm[0] = f16_of(1.0);
    cm[8] = f16_of(3.0);
    // Row 2: 8 products of 256 * 256 = 65536 each: overflow to +inf.
    for q in 0..8 {
        am[2 * 8 + q] = f16_of(256.0);
        bm[q * 8 + 1] = f16_of(256.0);
    }
    // Row 3: a NaN; row 4: +inf * 1 + (-inf) = NaN.
    am[3 * 8] = 0x7E01;
    am[4 * 8] = 0x7C00;
    bm[0] = f16_of(32.0);
    cm[4 * 8] = 0xFC00;
    let (a, b, c) = (
        pack(s, Operand::A, Elem::F16, &am, 8),
        pack(s, Operand::B, Elem::F16, &bm, 8),
        pack(s, Operand::C, Elem::F16, &cm, 8),
    );
    let mut d = vec![0; 64];
    assert!(mma(&kind, &a, &b, &c, &mut d));
    let dm = unpack(s, Elem::F16, &d);
    assert_eq!(dm[0], f16_of(2048.0));
    assert_eq!(dm[8], f16_of(2052.0));
    assert_eq!(dm[2 * 8 + 1], 0x7C00);
    assert_eq!(dm[3 * 8], 0x7FFF);
    assert_eq!(dm[4 * 8], 0x7FFF);
}

/// `.tf32` ignores the low 13 fraction bits: 1 + 2^-20 reads as 1.0; a NaN with only those bits set reads
/// as +inf (times 0 it is NaN, times 1 it is inf).
#[test]
fn tf32_ignores_the_low_13_bits() {
    let s = Shape::M16N8K4;
    let kind = MmaKind::new(s, Elem::Tf32, Elem::Tf32, Elem::F32, Elem::F32);
    assert_eq!(kind.regs(), [2, 1, 4, 4]);
    let mut am = vec![0u64; 16 * 4];
    let mut bm = vec![0u64; 4 * 8];
    am[0] = (1.0f32 + 2f32.powi(-20)).to_bits() as u64;
    bm[0] = (3.0f32 + 2f32.powi(-21)).to_bits() as u64;
    am[4] = 0x7F80_0001; // row 1
    bm[1] = 1.0f32.to_bits() as u64; // column 1
    let cm = vec![0u64; 128];
    let (a, b, c) = (
        pack(s, Operand::A, Elem::Tf32, &am, 4),
        pack(s, Operand::B, Elem::Tf32, &bm, 8),
        pack(s, Operand::C, Elem::F32, &cm, 8),
    );
    let mut d = vec![0; 128];
    assert!(mma(&kind, &a, &b, &c, &mut d));
    let dm = unpack(s, Elem::F32, &d);
    assert_eq!(f32::from_bits(dm[0] as u32), 3.0);
    // Row 1 of A is (inf, 0, 0, 0): d[1][0] = inf * 3 = inf, d[1][1] = inf * 1 = inf, d[1][2] = inf * 0 = NaN.
    assert_eq!(dm[8], f32::INFINITY.to_bits() as u64);
    assert_eq!(dm[8 + 1], f32::INFINITY.to_bits() as u64);
    assert_eq!(dm[8 + 2], 0x7FFF_FFFF);
}

/// Integer accumulation wraps, or saturates with `.satfinite`: m8n8k16 with every A and B element -128 gives
/// 16 * 16384 = 262144 per element; C = i32::MAX - 100000 overflows.
#[test]
fn integer_overflow_wraps_or_saturates() {
    let s = Shape::M8N8K16;
    let mut kind = MmaKind::new(s, Elem::S8, Elem::S8, Elem::S32, Elem::S32);
    assert_eq!(kind.regs(), [1, 1, 2, 2]);
    let a = vec![0x8080_8080u64; 32];
    let b = vec![0x8080_8080u64; 32];
    let c = vec![(i32::MAX - 100_000) as u32 as u64; 64];
    let mut d = vec![0; 64];
    assert!(mma(&kind, &a, &b, &c, &mut d));
    let wrapped = (i32::MAX - 100_000).wrapping_add(262_144) as u32 as u64;
    assert!(d.iter().all(|&x| x == wrapped));
    kind.satfinite = true;
    assert!(mma(&kind, &a, &b, &c, &mut d));
    assert!(d.iter().all(|&x| x == i32::MAX as u32 as u64));
    // .u8 x .s8: 255 * -128 * 16 = -522240, plus c = 0; .u8 A reads 0x80 as 128.
    let kind = MmaKind::new(s, Elem::U8, Elem::S8, Elem::S32, Elem::S32);
    let a = vec![0xFFFF_FFFFu64; 32];
    assert!(mma(&kind, &a, &b, &vec![0; 64], &mut d));
    assert!(d.iter().all(|&x| x == (-522_240i32) as u32 as u64));
    // Bits above a 32-bit register are ignored.
    let a_dirty: Vec<u64> = a.iter().map(|&x| x | 0xABCD_0000_0000_0000).collect();
    let mut d2 = vec![0; 64];
    assert!(mma(&kind, &a_dirty, &b, &vec![0; 64], &mut d2));
    assert_eq!(d, d2);
}

/// `.f64`: a chain of fused multiply-adds in the instruction's rounding mode. 1 + 2^-60 is not representable:
/// with A row (1, 2^-60, 0, 0) and B column ones, C = 0: fma(1, 1, 0) = 1, then fma(2^-60, 1, 1) rounds to 1
/// (rn, rz, rm) or to 1 + 2^-52 (rp).
#[test]
fn f64_is_a_chain_of_fmas_in_the_rounding_mode() {
    let s = Shape::M8N8K4;
    let mut am = vec![0u64; 32];
    am[0] = 1.0f64.to_bits();
    am[1] = 2f64.powi(-60).to_bits();
    let bm = vec![1.0f64.to_bits(); 32];
    let cm = vec![0u64; 64];
    let (a, b, c) = (
        pack(s, Operand::A, Elem::F64, &am, 4),
        pack(s, Operand::B, Elem::F64, &bm, 8),
        pack(s, Operand::C, Elem::F64, &cm, 8),
    );
    for (rnd, want) in
        [(Rounding::Rn, 1.0), (Rounding::Rz, 1.0), (Rounding::Rm, 1.0), (Rounding::Rp, 1.0 + f64::EPSILON)]
    {
        let kind = MmaKind { rnd, ..MmaKind::new(s, Elem::F64, Elem::F64, Elem::F64, Elem::F64) };
        assert_eq!(kind.regs(), [1, 1, 2, 2]);
        let mut d = vec![0; 64];
        assert!(mma(&kind, &a, &b, &c, &mut d));
        let dm = unpack(s, Elem::F64, &d);
        assert_eq!(f64::from_bits(dm[0]), want, "{rnd:?}");
        // Rows of zeros: fma(0, 1, +0) chains stay +0.
        assert_eq!(dm[8], 0);
    }
}

#[test]
fn invalid_kinds_and_short_slices_write_nothing() {
    use Elem::*;
    let bad = [
        MmaKind::new(Shape::M16N8K16, F16, F16, F16, F32),
        MmaKind::new(Shape::M16N8K4, F16, F16, F32, F32),
        MmaKind::new(Shape::M16N8K16, Tf32, Tf32, F32, F32),
        MmaKind::new(Shape::M16N8K8, Bf16, Tf32, F32, F32),
        MmaKind::new(Shape::M8N8K4, F16, F16, F32, F32),
        MmaKind { satfinite: true, ..MmaKind::new(Shape::M16N8K8, F16, F16, F32, F32) },
        MmaKind { rnd: Rounding::Rz, ..MmaKind::new(Shape::M16N8K8, F16, F16, F32, F32) },
        MmaKind::new(Shape::M16N8K32, S8, S8, S32, F32),
    ];
    let mut d = vec![7u64; 512];
    for k in bad {
        assert!(!k.is_valid(), "{k:?}");
        assert!(!mma(&k, &[0; 512], &[0; 512], &[0; 512], &mut d));
    }
    let ok = MmaKind::new(Shape::M16N8K16, F16, F16, F32, F32);
    assert!(!mma(&ok, &[0; 127], &[0; 64], &[0; 128], &mut d));
    assert!(!mma(&ok, &[0; 128], &[0; 64], &[0; 128], &mut d[..127]));
    assert!(d.iter().all(|&x| x == 7));
    let wk = WmmaKind::new(WmmaShape::M16N16K16, S8, U8, S32, S32);
    assert!(!wk.is_valid());
    assert!(!wmma_mma(&wk, &[0; 256], &[0; 256], &[0; 256], &mut d));
    assert!(d.iter().all(|&x| x == 7));
}

/// ldmatrix x4: lane 13 (row 3, columns 6 and 7) register 2 reads matrix 2; with .trans rows 2 and 3 of
/// column 3 (lane 13 % 4 = 1 -> rows 2, 3). Row r of matrix m comes from lane 8m + r.
#[test]
fn ldmatrix_positions_by_hand() {
    assert_eq!(ldmatrix_source(4, false, 13, 2), Some((2, 3, 2)));
    assert_eq!(ldmatrix_source(4, true, 13, 2), Some((2, 2, 3)));
    assert_eq!(ldmatrix_source(1, false, 31, 0), Some((0, 7, 6)));
    assert_eq!(ldmatrix_source(2, false, 0, 2), None);
    assert_eq!(ldmatrix_source(3, false, 0, 0), None);
    assert_eq!(ldmatrix_source(4, false, 32, 0), None);
    assert_eq!(ldmatrix_address_lane(3, 5), Some(29));
    assert_eq!(ldmatrix_address_lane(4, 0), None);
}

/// The movmatrix test NVIDIA-GPU users run (an 8x8 matrix of 0..63 loaded with ldmatrix, then transposed):
/// element (r, c) of the result, stored from lane r * 4 + c / 2, half c % 2, is c * 8 + r.
#[test]
fn movmatrix_transposes() {
    let m = |r: usize, c: usize| (8 * r + c) as u32;
    let src: [u32; 32] = std::array::from_fn(|l| m(l / 4, 2 * (l % 4)) | (m(l / 4, 2 * (l % 4) + 1) << 16));
    let dst = movmatrix(&src);
    for (l, &reg) in dst.iter().enumerate() {
        for h in 0..2 {
            let (r, c) = (l / 4, 2 * (l % 4) + h);
            assert_eq!((reg >> (16 * h)) & 0xFFFF, (c * 8 + r) as u32, "lane {l} half {h}");
        }
    }
    assert_eq!(movmatrix(&dst), src);
}

/// wmma register counts as nvcc 13 emits them for sm_80 (`nvcuda::wmma::fragment`), and the layout: every
/// element held, `.f16` A/B twice (m16n16k16) or four times (m32n8k16 B, m8n32k16 A); gather(scatter(x)) = x.
#[test]
fn wmma_fragments() {
    use Elem::*;
    use Operand::*;
    use WmmaShape::*;
    let table = [
        (M16N16K16, F16, [8, 8]),
        (M32N8K16, F16, [8, 8]),
        (M8N32K16, F16, [8, 8]),
        (M16N16K16, Bf16, [4, 4]),
        (M32N8K16, Bf16, [8, 2]),
        (M8N32K16, Bf16, [2, 8]),
        (M16N16K16, S8, [2, 2]),
        (M32N8K16, U8, [4, 1]),
        (M8N32K16, S8, [1, 4]),
        (M16N16K8, Tf32, [4, 4]),
        (M8N8K4, F64, [1, 1]),
    ];
    for (s, e, [ra, rb]) in table {
        assert_eq!((wmma_regs(s, A, e), wmma_regs(s, B, e)), (ra, rb), "{s:?} {e:?}");
    }
    for s in [M16N16K16, M32N8K16, M8N32K16] {
        assert_eq!([wmma_regs(s, C, F16), wmma_regs(s, C, F32), wmma_regs(s, C, S32)], [4, 8, 8]);
    }
    assert_eq!((wmma_regs(M16N16K8, C, F32), wmma_regs(M8N8K4, C, F64)), (8, 2));
    assert_eq!((wmma_regs(M16N16K8, A, F16), wmma_regs(M8N8K4, C, F32), wmma_regs(M16N16K16, A, F32)), (0, 0, 0));
    let kinds = [
        (M16N16K16, F16),
        (M32N8K16, F16),
        (M8N32K16, F16),
        (M32N8K16, Bf16),
        (M8N32K16, U8),
        (M16N16K8, Tf32),
        (M8N8K4, F64),
    ];
    for (s, e) in kinds {
        let (m, n, k) = s.mnk();
        let acc = match e {
            F16 => F16,
            U8 | S8 => S32,
            F64 => F64,
            _ => F32,
        };
        for (which, e, rows, cols) in [(A, e, m, k), (B, e, k, n), (C, acc, m, n)] {
            let slots = 32 * wmma_regs(s, which, e) * e.per_register();
            let mut count = vec![0usize; rows * cols];
            for lane in 0..32 {
                for slot in 0..slots / 32 {
                    let (r, c) = wmma_element(s, which, e, lane, slot).unwrap();
                    count[r * cols + c] += 1;
                }
            }
            assert!(count.iter().all(|&x| x == slots / (rows * cols)), "{s:?} {which:?} {e:?}: {count:?}");
            let mask = if e.bits() == 64 { u64::MAX } else { (1u64 << e.bits()) - 1 };
            let mat: Vec<u64> = (0..rows * cols as u64 as usize)
                .map(|x| ((x as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 7) & mask)
                .collect();
            let mut frag = vec![0u64; slots / e.per_register()];
            assert!(wmma_scatter(s, which, e, &mat, &mut frag));
            let mut back = vec![0u64; rows * cols];
            assert!(wmma_gather(s, which, e, &frag, &mut back));
            assert_eq!(back, mat, "{s:?} {which:?} {e:?}");
        }
    }
    // m16n16k16 .f16 A: register 0 of lane 0 holds elements 0 and 1 (row 0, columns 0 and 1); register 4 of
    // lane 0 holds them again (4 * 32 * 2 = 256 = 0 mod 256); lane 8, slot 1 holds element 17 = (1, 1).
    assert_eq!(wmma_element(M16N16K16, A, F16, 0, 1), Some((0, 1)));
    assert_eq!(wmma_element(M16N16K16, A, F16, 0, 8), Some((0, 0)));
    assert_eq!(wmma_element(M16N16K16, A, F16, 8, 1), Some((1, 1)));
    assert_eq!(wmma_element(M16N16K16, A, F16, 0, 16), None);
    assert_eq!(wmma_offset(true, 40, 3, 5), 125);
    assert_eq!(wmma_offset(false, 40, 3, 5), 203);
}
