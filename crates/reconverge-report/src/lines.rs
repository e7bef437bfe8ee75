//! Byte offsets to line numbers.

/// Start offsets of every line of a text.
#[derive(Clone, Debug, Default)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    /// Indexes `src`.
    pub fn new(src: &str) -> LineIndex {
        LineIndex { starts: std::iter::once(0).chain(src.match_indices('\n').map(|(i, _)| i + 1)).collect() }
    }

    /// The 1-based line holding byte `offset`.
    pub fn line(&self, offset: u32) -> u32 {
        match self.starts.binary_search(&(offset as usize)) {
            Ok(i) => i as u32 + 1,
            Err(i) => i as u32,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn lines() {
        let li = super::LineIndex::new("ab\ncd\n\nef");
        assert_eq!(li.line(0), 1);
        assert_eq!(li.line(2), 1);
        assert_eq!(li.line(3), 2);
        assert_eq!(li.line(6), 3);
        assert_eq!(li.line(7), 4);
    }
}
