//! Property tests: the front end never panics and always terminates on mutated corpus PTX, its diagnostics
//! stay inside the source and render; and generated valid instruction sequences survive the printer
//! round trip.
//!
//! Bounded to about 2000 cases in all so that the suite stays fast.

use proptest::prelude::*;
use reconverge_ir::{print_module, Module};
use reconverge_ptx::mutate::{apply, Mutation};
use reconverge_ptx::{parse, SourceError};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The corpus files of `tests/data`, smallest first (mutating small files keeps cases fast).
fn corpus() -> &'static [String] {
    static CORPUS: OnceLock<Vec<String>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "ptx"))
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .collect();
        files.sort_by_key(|s| s.len());
        files
    })
}

/// The fuzzer's mutations (shared with the whole-pipeline fuzzer, `reconverge-fuzz`), as a proptest
/// strategy so that failures shrink.
fn mutation() -> impl Strategy<Value = Mutation> {
    let pos = any::<usize>();
    prop_oneof![
        (pos, 1u8..=255).prop_map(|(at, xor)| Mutation::FlipByte { at, xor }),
        (pos, any::<u8>()).prop_map(|(at, byte)| Mutation::InsertByte { at, byte }),
        (pos, 1usize..40).prop_map(|(at, len)| Mutation::DeleteBytes { at, len }),
        pos.prop_map(|index| Mutation::DeleteToken { index }),
        pos.prop_map(|index| Mutation::DuplicateToken { index }),
        pos.prop_map(|at| Mutation::Truncate { at }),
        (pos, "[ -~\\n\\t]{1,24}").prop_map(|(at, text)| Mutation::InsertGarbage { at, text }),
    ]
}

/// Parses `src` and checks the error contract; returns whether it parsed.
fn check_no_panic(src: &str) -> Result<bool, TestCaseError> {
    let start = Instant::now();
    let result = parse(src);
    prop_assert!(start.elapsed() < Duration::from_secs(5), "parse took {:?}", start.elapsed());
    match result {
        Ok(m) => {
            // Whatever parses must also print and re-parse.
            let printed = print_module(&m);
            prop_assert!(parse(&printed).is_ok(), "printed module does not parse:\n{printed}");
            Ok(true)
        }
        Err(e) => {
            prop_assert!(!e.diagnostics.is_empty());
            for d in &e.diagnostics {
                prop_assert!(
                    d.span.start <= d.span.end && d.span.end as usize <= src.len(),
                    "span {:?} outside 0..{}",
                    d.span,
                    src.len()
                );
                for (s, _) in &d.labels {
                    prop_assert!(s.start <= s.end && s.end as usize <= src.len());
                }
                prop_assert!(!d.message.is_empty());
            }
            let n = e.diagnostics.len().min(reconverge_ptx::diag::MAX_RENDERED);
            let rendered = SourceError::new("fuzz.ptx", src, e).render_plain();
            prop_assert_eq!(rendered.matches("error[").count(), n);
            prop_assert!(rendered.contains("--> fuzz.ptx:"));
            Ok(false)
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_corpus_never_panics(file in any::<usize>(), muts in prop::collection::vec(mutation(), 1..4)) {
        let files = corpus();
        prop_assume!(!files.is_empty());
        // Bias towards the smaller half of the corpus: same coverage of constructs, faster cases.
        let src = &files[file % files.len().div_ceil(2).max(1)];
        let mutated = apply(src, &muts);
        check_no_panic(&mutated)?;
    }
}

// ---- generated valid programs ---------------------------------------------------------------------------

/// One generated statement: a kind and a few numbers that pick registers, labels and constants.
type GenStmt = (u8, u8, u8, u8, i32);

const NREG: u8 = 8;

fn emit_program(stmts: &[GenStmt]) -> String {
    let labels = stmts.iter().filter(|s| s.0 % 24 == 0).count().max(1);
    let mut body = String::new();
    let mut next_label = 0;
    let r = |x: u8| format!("%r{}", x % NREG);
    let p = |x: u8| format!("%p{}", x % 4);
    let f = |x: u8| format!("%f{}", x % NREG);
    let lbl = |x: u8| format!("$L__BB0_{}", x as usize % labels);
    for (n, &(kind, a, b, c, imm)) in stmts.iter().enumerate() {
        let line = match kind % 24 {
            0 => {
                next_label += 1;
                format!("{}:", lbl((next_label - 1) as u8))
            }
            1 => format!("\tadd.s32 \t{}, {}, {};", r(a), r(b), r(c)),
            2 => format!("\tsub.s32 \t{}, {}, {imm};", r(a), r(b)),
            3 => format!("\tmad.lo.s32 \t{}, {}, {}, {};", r(a), r(b), r(c), r(a.wrapping_add(1))),
            4 => format!("\tsetp.{}.s32 \t{}, {}, {};", ["lt", "ge", "eq", "ne"][c as usize % 4], p(a), r(b), r(c)),
            5 => format!("\t@{}{} bra \t{};", if c % 2 == 0 { "" } else { "!" }, p(a), lbl(b)),
            6 => format!("\tbra.uni \t{};", lbl(a)),
            7 => format!("\tmov.u32 \t{}, %tid.{};", r(a), ["x", "y", "z"][b as usize % 3]),
            8 => format!("\tld.global.u32 \t{}, [%rd{}+{}];", r(a), b % 2, (imm & 0xff) * 4),
            9 => format!("\tst.shared.f32 \t[sh+{}], {};", (a % 16) * 4, f(b)),
            10 => format!("\tselp.b32 \t{}, {}, {imm}, {};", r(a), r(b), p(c)),
            11 => format!("\tfma.rn.f32 \t{}, {}, 0f{:08X}, {};", f(a), f(b), imm as u32, f(c)),
            12 => format!("\tshfl.sync.down.b32 \t{}|{}, {}, {}, 31, -1;", r(a), p(b), r(c), a % 32),
            13 => format!(
                "\t{{\n\t.reg .b32 tmp;\n\t.param .b32 param0;\n\tst.param.b32 \t[param0+0], {};\n\t.param .b32 retval0;\n\tcall.uni (retval0), \n\tcallee, \n\t(\n\tparam0\n\t);\n\tld.param.b32 \t{}, [retval0+0];\n\t}}",
                r(a),
                r(b)
            ),
            14 => format!("\t.loc\t1 {} {}", a as u32 + 1, b),
            15 => "\t.pragma \"nounroll\";".to_string(),
            16 => format!("\t@{} ret;", p(a)),
            17 => format!("\tcvt.rn.f32.s32 \t{}, {};", f(a), r(b)),
            18 => format!("\tvote.sync.ballot.b32 \t{}, {}{}, -1;", r(a), if b % 2 == 0 { "" } else { "!" }, p(c)),
            19 => format!("\tatom.global.add.u32 \t{}, [%rd{}], {};", r(a), b % 2, r(c)),
            20 => format!("\tmov.b64 \t%rd{}, {{{}, {}}};", a % 2, r(b), r(c)),
            21 => format!("\tld.global.nc.v4.f32 \t{{{}, {}, _, {}}}, [%rd{}];", f(a), f(b), f(c), n % 2),
            22 => format!("\tunknownop.weird.mod \t{}, {imm};", r(a)),
            _ => "\tbar.sync \t0;".to_string(),
        };
        body.push_str(&line);
        body.push('\n');
    }
    // Every branch target must exist: define the labels that were not placed.
    for l in next_label..labels {
        body.push_str(&format!("{}:\n", lbl(l as u8)));
    }
    format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n.file 1 \"gen.cu\"\n\
         .func (.param .b32 func_retval0) callee(.param .b32 callee_param_0)\n{{\n\t.reg .b32 %r<2>;\n\
         \tld.param.u32 %r1, [callee_param_0];\n\tst.param.b32 [func_retval0+0], %r1;\n\tret;\n}}\n\
         .visible .entry gen(.param .u64 gen_param_0)\n{{\n\t.reg .pred %p<4>;\n\t.reg .b32 %r<{NREG}>;\n\
         \t.reg .f32 %f<{NREG}>;\n\t.reg .b64 %rd<2>;\n\t.shared .align 4 .b8 sh[64];\n{body}\tret;\n}}\n"
    )
}

fn strip(mut m: Module) -> Module {
    m.strip_spans();
    m
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn generated_programs_round_trip(stmts in prop::collection::vec(any::<GenStmt>(), 0..60)) {
        let src = emit_program(&stmts);
        let m1 = match parse(&src) {
            Ok(m) => m,
            Err(e) => return Err(TestCaseError::fail(format!("{}\n{src}", SourceError::new("gen.ptx", src.clone(), e).render_plain()))),
        };
        let printed = print_module(&m1);
        let m2 = parse(&printed).map_err(|e| TestCaseError::fail(format!("{e}\n{printed}")))?;
        prop_assert_eq!(print_module(&m2), printed.clone());
        prop_assert!(strip(m1) == strip(m2), "round trip changed the IR:\n{}", printed);
    }
}
