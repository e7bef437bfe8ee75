//! Malformed inputs: each class of error yields a diagnostic with the right code, message and span, and
//! `render_plain` names `FILE:LINE:COL`.

use reconverge_ptx::{codes, parse, Diagnostic, LineIndex, SourceError};

const HEAD: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

/// The diagnostics of a source that must fail.
fn errors(src: &str) -> Vec<Diagnostic> {
    match parse(src) {
        Ok(_) => panic!("expected an error for:\n{src}"),
        Err(e) => {
            assert!(!e.diagnostics.is_empty());
            e.diagnostics
        }
    }
}

/// A kernel `k` with the given body lines (after the header, so line numbers are `4 + index`).
fn kernel(body: &str) -> String {
    format!("{HEAD}.visible .entry k(\n\t.param .u64 k_param_0\n)\n{{\n\t.reg .pred %p<3>;\n\t.reg .b32 %r<10>;\n\t.reg .b64 %rd<4>;\n{body}}}\n")
}

/// The single diagnostic of `src`, checked for code and for the text its span covers.
fn single(src: &str, code: &str, covered: &str) -> Diagnostic {
    let ds = errors(src);
    assert_eq!(ds.len(), 1, "{ds:#?}");
    let d = ds.into_iter().next().unwrap_or_else(|| unreachable!());
    assert_eq!(d.code, code, "{d:#?}");
    assert_eq!(src.get(d.span.range()), Some(covered), "{d:#?}");
    d
}

fn render(src: &str) -> String {
    match parse(src) {
        Ok(_) => panic!("expected an error"),
        Err(e) => SourceError::new("k.ptx", src, e).render_plain(),
    }
}

#[test]
fn truncated_file() {
    let src = format!("{HEAD}.entry k()\n{{\n\tret;\n");
    let d = single(&src, codes::UNEXPECTED_EOF, "");
    assert_eq!(d.span.start as usize, src.len());
    assert!(d.message.contains("unexpected end of input"), "{}", d.message);
    assert_eq!(d.labels.len(), 1, "the label points at the unclosed brace");
    let r = render(&src);
    assert!(r.starts_with("error[E0100]: unexpected end of input, expected `}`\n --> k.ptx:7:1\n"), "{r}");
    // Truncated in the middle of an instruction.
    let src = format!("{HEAD}.entry k()\n{{\n\t.reg .b32 %r<2>;\n\tadd.s32 %r1, ");
    let d = single(&src, codes::UNEXPECTED_EOF, "");
    assert!(d.message.contains("expected an operand"), "{}", d.message);
}

#[test]
fn stray_token() {
    let src = kernel("\tadd.s32 %r1, %r2 %r3;\n");
    let d = single(&src, codes::UNEXPECTED_TOKEN, "%r3");
    assert_eq!(d.message, "expected `,` or `;` after the operand, found `%r3`");
    assert!(render(&src).contains(" --> k.ptx:11:19\n"), "{}", render(&src));
    single(&kernel("\tret;\n\t;\n"), codes::UNEXPECTED_TOKEN, ";");
    single(&format!("{HEAD}foo"), codes::UNEXPECTED_TOKEN, "foo");
    single(&kernel("\t%r1 = 5;\n"), codes::UNEXPECTED_TOKEN, "%r1");
}

#[test]
fn unknown_directive() {
    let src = format!("{HEAD}.foo 1;\n");
    let d = single(&src, codes::UNKNOWN_DIRECTIVE, ".foo");
    assert_eq!(d.message, "unknown directive `.foo` at module level");
    assert!(render(&src).contains(" --> k.ptx:4:1\n"));
    single(&kernel("\t.bar 3;\n"), codes::UNKNOWN_DIRECTIVE, ".bar");
    single(&format!("{HEAD}.entry k() .maxthreads 3 {{ }}"), codes::UNKNOWN_DIRECTIVE, ".maxthreads");
    // Unknown instruction modifiers and opcodes are not errors.
    parse(&kernel("\tadd.weird.s32 %r1, %r2, %r3;\n\tfrobnicate.x %r1, 5;\n")).unwrap();
}

#[test]
fn wrong_operand_count() {
    let src = kernel("\tmov.u32 %r1, 1;\n\tadd.s32 %r1, %r2;\n");
    let d = single(&src, codes::OPERAND_COUNT, "add.s32 %r1, %r2;");
    assert_eq!(d.message, "`add` expects 3 operands, found 2");
    assert_eq!(
        render(&src),
        "error[E0200]: `add` expects 3 operands, found 2\n  --> k.ptx:12:2\n   |\n12 |     add.s32 %r1, %r2;\n   |     ^^^^^^^^^^^^^^^^^\n"
    );
    let d = single(&kernel("\tret 1;\n"), codes::OPERAND_COUNT, "ret 1;");
    assert_eq!(d.message, "`ret` expects 0 operands, found 1");
    let d = single(&kernel("\tsetp.eq.s32 %p1;\n"), codes::OPERAND_COUNT, "setp.eq.s32 %p1;");
    assert_eq!(d.message, "`setp` expects 3 to 4 operands, found 1");
}

#[test]
fn undefined_label() {
    let src = kernel("\tbra.uni $L__nowhere;\n$L__BB0_1:\n\tret;\n");
    let d = single(&src, codes::UNDEFINED_LABEL, "$L__nowhere");
    assert_eq!(d.message, "undefined label `$L__nowhere`");
    assert!(render(&src).contains(" --> k.ptx:11:10\n"));
    // Labels of other functions are not visible; forward references are fine.
    let two = format!("{HEAD}.entry a() {{ bra $L1; $L1: ret; }}\n.entry b() {{ bra $L1; }}\n");
    single(&two, codes::UNDEFINED_LABEL, "$L1");
    single(&kernel("\t$t: .branchtargets $L1, $L2;\n$L1:\n\tret;\n"), codes::UNDEFINED_LABEL, "$L2");
}

#[test]
fn undeclared_register() {
    let src = kernel("\tmov.u32 %r1, %r99;\n");
    let d = single(&src, codes::UNDECLARED_REGISTER, "%r99");
    assert_eq!(d.message, "undeclared register `%r99`");
    assert!(d.help.is_some());
    assert!(render(&src).contains(" --> k.ptx:11:15\n"));
    // Registers of a closed scope are gone.
    single(&kernel("\t{ .reg .b32 %t; mov.u32 %t, 1; }\n\tmov.u32 %r1, %t;\n"), codes::UNDECLARED_REGISTER, "%t");
}

#[test]
fn undefined_variable_and_function() {
    let d = single(&kernel("\tld.global.u32 %r1, [nosuch+4];\n"), codes::UNDEFINED_SYMBOL, "nosuch");
    assert_eq!(d.message, "undefined symbol `nosuch`");
    // PTX requires declaration before use: calling a function defined later is an error.
    let src = format!("{HEAD}.entry k()\n{{\n\tcall.uni later;\n\tret;\n}}\n.func later()\n{{\n\tret;\n}}\n");
    let d = single(&src, codes::UNDEFINED_FUNCTION, "later");
    assert_eq!(d.message, "undefined function `later`");
    assert!(render(&src).contains(" --> k.ptx:6:11\n"));
    // With a prototype first it is fine.
    parse(&format!(
        "{HEAD}.func later();\n.entry k()\n{{\n\tcall.uni later;\n\tret;\n}}\n.func later()\n{{\n\tret;\n}}\n"
    ))
    .unwrap();
    single(&format!("{HEAD}.global .u64 p = nothing;\n"), codes::UNDEFINED_SYMBOL, "nothing");
}

#[test]
fn duplicates() {
    let src = kernel("$L1:\n\tret;\n$L1:\n\tret;\n");
    let d = single(&src, codes::DUPLICATE_LABEL, "$L1");
    assert_eq!(d.span.start as usize, src.rfind("$L1").unwrap_or(0));
    assert_eq!(d.labels.len(), 1);
    let r = render(&src);
    assert!(
        r.contains(" --> k.ptx:13:1\n") && r.contains("::: k.ptx:11:1\n") && r.contains("- first defined here"),
        "{r}"
    );
    let d = single(&kernel("\t.reg .b32 %r5;\n"), codes::DUPLICATE_REGISTER, "%r5");
    assert!(d.message.contains("declared more than once"));
    single(&kernel("\t.reg .b32 %x, %x;\n"), codes::DUPLICATE_REGISTER, "%x");
    // The same name in a nested scope is not a duplicate (it is renamed).
    parse(&kernel("\t{ .reg .b32 %r5; mov.u32 %r5, 1; }\n\tret;\n")).unwrap();
    single(&format!("{HEAD}.global .u32 g;\n.global .u32 g;\n"), codes::DUPLICATE_SYMBOL, "g");
    single(&format!("{HEAD}.func f() {{ ret; }}\n.func f() {{ ret; }}\n"), codes::DUPLICATE_SYMBOL, "f");
}

#[test]
fn guard_must_be_a_predicate() {
    let src = kernel("\t@%r1 bra $L1;\n$L1:\n\tret;\n");
    let d = single(&src, codes::BAD_GUARD, "%r1");
    assert_eq!(d.message, "guard `%r1` is not a .pred register (it is .b32)");
    assert_eq!(src.get(d.labels[0].0.range()), Some("%r<10>"));
    single(&kernel("\t@!%q ret;\n"), codes::UNDECLARED_REGISTER, "%q");
}

#[test]
fn special_register_components() {
    let d = single(&kernel("\tmov.u32 %r1, %laneid.x;\n"), codes::SPECIAL_COMPONENT, ".x");
    assert!(d.message.contains("not a vector register"));
    let d = single(&kernel("\tmov.u32 %r1, %tid;\n"), codes::SPECIAL_COMPONENT, "%tid");
    assert!(d.message.contains("needs a component"));
    single(&kernel("\tmov.u32 %r1, %ctaid.w;\n"), codes::SPECIAL_COMPONENT, ".w");
    single(&kernel("\tmov.u32 %r1, %r2.x;\n"), codes::BAD_OPERAND, ".x");
}

#[test]
fn integer_out_of_range() {
    let d = single(&kernel("\tmov.u64 %rd1, 18446744073709551616;\n"), codes::BAD_NUMBER, "18446744073709551616");
    assert!(d.message.contains("out of range"));
    single(&kernel("\tmov.u64 %rd1, 0x1FFFFFFFFFFFFFFFF;\n"), codes::BAD_NUMBER, "0x1FFFFFFFFFFFFFFFF");
    single(&kernel("\tmov.u64 %rd1, -9223372036854775809;\n"), codes::BAD_NUMBER, "-9223372036854775809");
    single(&kernel("\tmov.u32 %r1, 09;\n"), codes::BAD_NUMBER, "09");
    single(&format!("{HEAD}.global .u32 a[99999999999999999999];\n"), codes::BAD_NUMBER, "99999999999999999999");
    // The extremes are fine.
    parse(&kernel("\tmov.u64 %rd1, 18446744073709551615;\n\tmov.u64 %rd1, -9223372036854775808;\n")).unwrap();
}

#[test]
fn lexical_errors() {
    let src = kernel("\tmov.u32 %r1, #5;\n");
    let d = single(&src, codes::BAD_CHAR, "#");
    assert_eq!(d.message, "unexpected character `#`");
    assert!(render(&src).contains(" --> k.ptx:11:15\n"));
    single(&format!("{HEAD}.file 1 \"abc\n"), codes::UNTERMINATED, "\"abc");
    let d = single(&format!("{HEAD}/* never closed"), codes::UNTERMINATED, "/*");
    assert!(d.message.contains("block comment"));
}

#[test]
fn all_lowering_errors_of_a_function_are_reported() {
    let src = kernel("\tmov.u32 %r1, %bad1;\n\tadd.s32 %r1, %r2;\n\tbra $nowhere;\n\tmov.u32 %r2, %bad2;\n");
    let ds = errors(&src);
    let got: Vec<(&str, &str)> = ds.iter().map(|d| (d.code, src.get(d.span.range()).unwrap_or("?"))).collect();
    assert_eq!(
        got,
        [
            (codes::UNDECLARED_REGISTER, "%bad1"),
            (codes::OPERAND_COUNT, "add.s32 %r1, %r2;"),
            (codes::UNDEFINED_LABEL, "$nowhere"),
            (codes::UNDECLARED_REGISTER, "%bad2"),
        ]
    );
    let r = render(&src);
    assert_eq!(r.matches("error[").count(), 4);
    for loc in ["k.ptx:11:15", "k.ptx:12:2", "k.ptx:13:6", "k.ptx:14:15"] {
        assert!(r.contains(loc), "{loc} missing in\n{r}");
    }
}

#[test]
fn line_index_and_display() {
    let src = "a\n\tbé c\n";
    let idx = LineIndex::new(src);
    assert_eq!(idx.line_col(0), (1, 1));
    assert_eq!(idx.line_col(3), (2, 2));
    assert_eq!(idx.line_col(6), (2, 4)); // `c` after the two-byte `é`
    let e = parse(&kernel("\tmov.u32 %r1, %x;\n\tmov.u32 %r1, %y;\n")).unwrap_err();
    assert_eq!(e.to_string(), "undeclared register `%x` (and 1 more error)");
    let se = SourceError::new("k.ptx", "", e);
    assert_eq!(se.to_string(), "k.ptx: 2 errors in PTX");
    use miette::Diagnostic as _;
    assert_eq!(se.related().map(|r| r.count()), Some(2));
}

#[test]
fn lowering_errors_before_a_syntax_error_are_kept() {
    let src = format!("{HEAD}.entry a()\n{{\n\tbra $nowhere;\n}}\n.entry b()\n{{\n\tret\n}}\n");
    let ds = errors(&src);
    let got: Vec<(&str, &str)> = ds.iter().map(|d| (d.code, src.get(d.span.range()).unwrap_or("?"))).collect();
    assert_eq!(got, [(codes::UNDEFINED_LABEL, "$nowhere"), (codes::UNEXPECTED_TOKEN, "}")]);
}

#[test]
fn miette_renders_every_diagnostic_with_its_source() {
    let src = kernel("\tmov.u32 %r1, %x;\n\tbra $nowhere;\n");
    let e = parse(&src).unwrap_err();
    let se = SourceError::new("k.ptx", src.clone(), e);
    let mut out = String::new();
    miette::NarratableReportHandler::new().render_report(&mut out, &se).unwrap_or_else(|_| unreachable!());
    assert!(out.contains("undeclared register `%x`"), "{out}");
    assert!(out.contains("undefined label `$nowhere`"), "{out}");
    assert!(out.contains("E0202") && out.contains("E0201"), "{out}");
    assert!(out.contains("k.ptx"), "{out}");
}

/// Found by fuzzing: a register named like a special register shadowed it in one scope, and the printed
/// module (one flat register list) no longer parsed.
#[test]
fn special_register_names_cannot_be_declared() {
    let src = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n.reg .b32 %r<2>;\nmov.u32 %r1, %tid.x;\n{\n.reg .b32 %tid;\n}\nret;\n}\n";
    let e = reconverge_ptx::parse(src).expect_err("rejected");
    assert!(e.diagnostics[0].message.contains("`%tid` is a special register"), "{e}");
}

/// Found by fuzzing: a label named like a special register (`%tid:`) printed as an operand that no longer
/// parsed.
#[test]
fn special_register_names_cannot_be_labels() {
    let src = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n%tid:\nret;\n}\n";
    let e = reconverge_ptx::parse(src).expect_err("rejected");
    assert!(e.diagnostics[0].message.contains("`%tid` is a special register and cannot be a label"), "{e}");
}
