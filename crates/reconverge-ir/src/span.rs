//! Byte spans into the source text.

use std::fmt;

/// A half-open byte range `start..end` into the source text a node was parsed from.
///
/// [`Span::DUMMY`] marks nodes that were not parsed (built by a transformation).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Span {
    /// First byte of the node.
    pub start: u32,
    /// One past the last byte of the node.
    pub end: u32,
}

impl Span {
    /// The span of nodes that do not come from source text.
    pub const DUMMY: Span = Span { start: 0, end: 0 };

    /// A span from `start` to `end` (byte offsets).
    pub fn new(start: usize, end: usize) -> Span {
        Span { start: start as u32, end: end as u32 }
    }

    /// The smallest span covering both `self` and `other`.
    pub fn to(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }

    /// Length in bytes.
    pub fn len(self) -> usize {
        (self.end - self.start) as usize
    }

    /// Whether the span covers no bytes.
    pub fn is_empty(self) -> bool {
        self.end == self.start
    }

    /// The byte range, for slicing the source.
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

impl fmt::Debug for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}
