//! What an SM remembers of each issue context's readiness ([`Memos`]): the [`Known`] conditions its last
//! check established, and the lasting wait they answered with, kept flat so that a scan over contexts
//! that still wait reads one pair per context.

use super::{Cause, Known, Wait};

/// Per issue context (`cta * nctx + ctx`): what its last readiness check established that only time or
/// an event can change, and the wait it was last answered with.
#[derive(Debug, Default)]
pub(super) struct Memos {
    known: Vec<Known>,
    /// Per context: a lasting wait [`Memos::known`] answered with, as `(until, cause)`: it answers the
    /// same at every cycle before `until` (the conditions are checked in a fixed order, and those before
    /// the one that holds had already ended). `until` 0: none.
    quick: Vec<(u64, Cause)>,
}

impl Memos {
    /// The lasting wait context `g` was last answered with, while it holds at `now`.
    #[inline]
    pub(super) fn waiting(&self, g: u32, now: u64) -> Option<Wait> {
        match self.quick.get(g as usize) {
            Some(&(until, cause)) if until > now => Some(Wait::lasting(cause, until)),
            _ => None,
        }
    }

    /// What is remembered of context `g` ([`Known::Unknown`] when nothing).
    #[inline]
    pub(super) fn get(&self, g: u32) -> Known {
        self.known.get(g as usize).copied().unwrap_or(Known::Unknown)
    }

    /// Remembers `k` of context `g`.
    pub(super) fn set(&mut self, g: u32, k: Known) {
        let i = g as usize;
        if self.known.len() <= i {
            self.known.resize(i + 1, Known::Unknown);
            self.quick.resize(i + 1, (0, Cause::Done));
        }
        self.known[i] = k;
        self.quick[i].0 = 0;
    }

    /// Notes that context `g`'s remembered conditions answered `w` (a lasting wait) at some cycle.
    #[inline]
    pub(super) fn answered(&mut self, g: u32, w: Wait) {
        if let Some(q) = self.quick.get_mut(g as usize) {
            *q = (w.until, w.cause);
        }
    }

    /// Forgets context `g`.
    pub(super) fn forget(&mut self, g: u32) {
        if let Some(x) = self.known.get_mut(g as usize) {
            *x = Known::Unknown;
            self.quick[g as usize].0 = 0;
        }
    }

    /// Forgets the contexts `first..end`.
    pub(super) fn forget_range(&mut self, first: usize, end: usize) {
        let end = end.min(self.known.len());
        if first < end {
            self.known[first..end].fill(Known::Unknown);
            self.quick[first..end].iter_mut().for_each(|q| q.0 = 0);
        }
    }

    /// Forgets every context.
    pub(super) fn clear(&mut self) {
        self.known.clear();
        self.quick.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_holds_until_its_cycle_and_until_the_context_is_forgotten_or_set() {
        let mut m = Memos::default();
        assert!(m.waiting(3, 0).is_none());
        m.set(3, Known::Wait(10, Cause::Barrier));
        assert!(m.waiting(3, 0).is_none(), "a memo alone answers nothing quickly");
        m.answered(3, Wait::lasting(Cause::Scoreboard, 10));
        assert_eq!(m.waiting(3, 9).map(|w| (w.cause, w.until)), Some((Cause::Scoreboard, 10)));
        assert!(m.waiting(3, 10).is_none(), "it ends at its cycle");
        m.forget(3);
        assert!(m.waiting(3, 0).is_none() && matches!(m.get(3), Known::Unknown));
        m.set(3, Known::Wait(20, Cause::Memory));
        m.answered(3, Wait::lasting(Cause::Memory, 20));
        m.set(3, Known::Wait(30, Cause::Memory));
        assert!(m.waiting(3, 0).is_none(), "a new memo voids the old answer");
        m.answered(3, Wait::lasting(Cause::Memory, 30));
        m.answered(1, Wait::lasting(Cause::Memory, 30));
        m.forget_range(0, 8);
        assert!(m.waiting(3, 0).is_none() && m.waiting(1, 0).is_none());
        m.set(2, Known::Wait(5, Cause::Pipeline));
        m.answered(2, Wait::lasting(Cause::Pipeline, 5));
        m.clear();
        assert!(m.waiting(2, 0).is_none() && matches!(m.get(2), Known::Unknown));
    }
}
