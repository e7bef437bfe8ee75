//! Damaged PTX for fuzzing the front end (and, through `reconverge-fuzz`, the whole pipeline): byte flips,
//! insertions, deletions, token deletions and duplications, truncation, garbage. [`mutate`] picks one to
//! three at random; [`apply`] replays a recorded list, so a finding can be reproduced from its mutations.

use crate::lexer;

/// One mutation of a PTX text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mutation {
    /// XOR a byte.
    FlipByte {
        /// Position (modulo the length).
        at: usize,
        /// The XOR mask.
        xor: u8,
    },
    /// Insert a byte.
    InsertByte {
        /// Position (modulo the length + 1).
        at: usize,
        /// The byte.
        byte: u8,
    },
    /// Delete a run of bytes.
    DeleteBytes {
        /// Position (modulo the length).
        at: usize,
        /// How many.
        len: usize,
    },
    /// Delete one token.
    DeleteToken {
        /// Token index (modulo the token count).
        index: usize,
    },
    /// Duplicate one token.
    DuplicateToken {
        /// Token index (modulo the token count).
        index: usize,
    },
    /// Cut the text.
    Truncate {
        /// Position (modulo the length).
        at: usize,
    },
    /// Insert printable garbage.
    InsertGarbage {
        /// Position (modulo the length + 1).
        at: usize,
        /// The text.
        text: String,
    },
    /// Delete one line (structure-preserving mutations keep many inputs parseable, so the later stages
    /// are exercised too).
    DeleteLine {
        /// Line index (modulo the line count).
        index: usize,
    },
    /// Duplicate one line.
    DuplicateLine {
        /// Line index (modulo the line count).
        index: usize,
    },
    /// Swap two lines.
    SwapLines {
        /// First line (modulo the line count).
        a: usize,
        /// Second line (modulo the line count).
        b: usize,
    },
    /// Replace one integer literal.
    ReplaceInt {
        /// Integer-literal index (modulo their count).
        index: usize,
        /// The new literal.
        value: String,
    },
    /// Replace one identifier (a register, label, variable or function) by another of the same text.
    ReplaceIdent {
        /// Identifier index (modulo their count).
        index: usize,
        /// Index of the identifier whose name replaces it.
        with: usize,
    },
}

/// The tokens of `text` of one kind, as byte ranges.
fn token_ranges(text: &str, kind: lexer::TokenKind) -> Vec<std::ops::Range<usize>> {
    lexer::lex(text).map(|t| t.iter().filter(|t| t.kind == kind).map(|t| t.span.range()).collect()).unwrap_or_default()
}

/// Applies `muts` to `src` in order.
pub fn apply(src: &str, muts: &[Mutation]) -> String {
    let mut bytes = src.as_bytes().to_vec();
    for m in muts {
        let n = bytes.len().max(1);
        match m {
            Mutation::FlipByte { at, xor } => {
                if let Some(b) = bytes.get_mut(at % n) {
                    *b ^= xor;
                }
            }
            Mutation::InsertByte { at, byte } => bytes.insert(at % (bytes.len() + 1), *byte),
            Mutation::DeleteBytes { at, len } => {
                let start = at % n;
                let end = (start + len).min(bytes.len());
                if start < end {
                    bytes.drain(start..end);
                }
            }
            Mutation::DeleteToken { index } | Mutation::DuplicateToken { index } => {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                let Ok(tokens) = lexer::lex(&text) else { continue };
                let Some(t) = tokens.get(index % tokens.len().max(1)) else { continue };
                let r = t.span.range();
                let mut s = text.clone();
                if matches!(m, Mutation::DeleteToken { .. }) {
                    s.replace_range(r, "");
                } else {
                    let tok = text.get(r.clone()).unwrap_or("").to_string();
                    s.insert_str(r.end, &format!(" {tok}"));
                }
                bytes = s.into_bytes();
            }
            Mutation::Truncate { at } => bytes.truncate(at % n),
            Mutation::InsertGarbage { at, text } => {
                let at = at % (bytes.len() + 1);
                bytes.splice(at..at, text.bytes());
            }
            Mutation::DeleteLine { index }
            | Mutation::DuplicateLine { index }
            | Mutation::SwapLines { a: index, .. } => {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                let mut lines: Vec<&str> = text.lines().collect();
                if lines.is_empty() {
                    continue;
                }
                let i = index % lines.len();
                match m {
                    Mutation::DeleteLine { .. } => {
                        lines.remove(i);
                    }
                    Mutation::DuplicateLine { .. } => lines.insert(i, lines[i]),
                    Mutation::SwapLines { b, .. } => {
                        let j = b % lines.len();
                        lines.swap(i, j);
                    }
                    _ => {}
                }
                bytes = (lines.join("\n") + "\n").into_bytes();
            }
            Mutation::ReplaceInt { index, value } => {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                let ints = token_ranges(&text, lexer::TokenKind::Int);
                if let Some(r) = ints.get(index % ints.len().max(1)) {
                    let mut s = text.clone();
                    s.replace_range(r.clone(), value);
                    bytes = s.into_bytes();
                }
            }
            Mutation::ReplaceIdent { index, with } => {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                let ids = token_ranges(&text, lexer::TokenKind::Ident);
                if let (Some(r), Some(w)) = (ids.get(index % ids.len().max(1)), ids.get(with % ids.len().max(1))) {
                    let name = text[w.clone()].to_string();
                    let mut s = text.clone();
                    s.replace_range(r.clone(), &name);
                    bytes = s.into_bytes();
                }
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A random mutation.
pub fn random_mutation(rng: &mut fastrand::Rng) -> Mutation {
    let at = rng.usize(..);
    match rng.u8(0..14) {
        7 | 8 => Mutation::DeleteLine { index: at },
        9 => Mutation::DuplicateLine { index: at },
        10 => Mutation::SwapLines { a: at, b: rng.usize(..) },
        11 | 12 => {
            const INTS: [&str; 10] =
                ["0", "1", "2", "3", "31", "32", "4096", "2147483647", "4294967295", "0x100000000"];
            Mutation::ReplaceInt { index: at, value: INTS[rng.usize(..INTS.len())].to_string() }
        }
        13 => Mutation::ReplaceIdent { index: at, with: rng.usize(..) },
        0 => Mutation::FlipByte { at, xor: rng.u8(1..) },
        1 => Mutation::InsertByte { at, byte: rng.u8(..) },
        2 => Mutation::DeleteBytes { at, len: rng.usize(1..40) },
        3 => Mutation::DeleteToken { index: at },
        4 => Mutation::DuplicateToken { index: at },
        5 => Mutation::Truncate { at },
        _ => {
            const PIECES: [&str; 12] =
                ["bra", "@%p1", "$L__BB0_1", ";", "{", "}", ".reg", "%r1", "ret;", "[%rd1]", "0x7fffffff", "\n"];
            let text: String =
                (0..rng.usize(1..4)).map(|_| PIECES[rng.usize(..PIECES.len())]).collect::<Vec<_>>().join(" ");
            Mutation::InsertGarbage { at, text }
        }
    }
}

/// `src` with one to three random mutations.
pub fn mutate(src: &str, rng: &mut fastrand::Rng) -> (String, Vec<Mutation>) {
    let muts: Vec<Mutation> = (0..rng.usize(1..=3)).map(|_| random_mutation(rng)).collect();
    (apply(src, &muts), muts)
}
