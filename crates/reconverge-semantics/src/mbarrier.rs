//! `mbarrier`: the 64-bit barrier objects in shared memory that `cuda::barrier` and asynchronous copies
//! complete on (PTX ISA, "Parallel Synchronization and Communication Instructions: mbarrier").
//!
//! PTX leaves the object's bits opaque; here they are: bits 0..21 the pending arrival count, 21..42 the
//! expected arrival count, 42..63 the pending transaction count (two's complement in 21 bits: a
//! `complete_tx` may come before its `expect_tx`), bit 63 the current phase's parity. The state token an
//! arrive returns is the object before the arrival (its bit 63 names the phase it arrived in).
//!
//! A phase completes when its pending arrivals and pending transactions are both zero: the phase parity
//! flips, the pending count is reset to the expected count and the transaction count to zero.

const COUNT_BITS: u32 = 21;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;
const EXPECTED_SHIFT: u32 = COUNT_BITS;
const TX_SHIFT: u32 = 2 * COUNT_BITS;
const PHASE: u64 = 1 << 63;

/// The largest arrival count (`mbarrier.init`'s count is in `[1, 2^20 - 1]`).
pub const MAX_COUNT: u64 = (1 << 20) - 1;

/// The fields of a barrier object.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct State {
    /// Arrivals the current phase still waits for.
    pub pending: u64,
    /// Arrivals each phase waits for.
    pub expected: u64,
    /// Transactions (bytes) the current phase still waits for (negative: completed before announced).
    pub tx: i64,
    /// The current phase's parity.
    pub phase: bool,
}

impl State {
    /// The object's bits.
    pub fn encode(self) -> u64 {
        let tx = (self.tx as u64) & COUNT_MASK;
        (self.pending & COUNT_MASK)
            | (self.expected & COUNT_MASK) << EXPECTED_SHIFT
            | tx << TX_SHIFT
            | if self.phase { PHASE } else { 0 }
    }

    /// The fields of an object's bits.
    pub fn decode(bits: u64) -> State {
        let tx = (bits >> TX_SHIFT) & COUNT_MASK;
        let tx = ((tx << (64 - COUNT_BITS)) as i64) >> (64 - COUNT_BITS);
        State {
            pending: bits & COUNT_MASK,
            expected: (bits >> EXPECTED_SHIFT) & COUNT_MASK,
            tx,
            phase: bits & PHASE != 0,
        }
    }

    /// Completes the phase when nothing is pending.
    fn settle(mut self) -> State {
        if self.pending == 0 && self.tx == 0 {
            self.phase = !self.phase;
            self.pending = self.expected;
        }
        self
    }
}

/// `mbarrier.init.b64 [a], count`: a new object expecting `count` arrivals per phase (clamped to
/// [`MAX_COUNT`]), in phase 0.
pub fn init(count: u64) -> u64 {
    let count = count.clamp(1, MAX_COUNT);
    State { pending: count, expected: count, tx: 0, phase: false }.encode()
}

/// `mbarrier.arrive{.expect_tx}{.noComplete}.b64 state, [a]{, count}`: `count` arrivals after adding
/// `expect_tx` pending transactions; `drop` (`arrive_drop`) also lowers the expected count of this and
/// later phases. Returns the new object and the state token (the object before).
pub fn arrive(bits: u64, count: u64, expect_tx: u64, drop: bool) -> (u64, u64) {
    let mut s = State::decode(bits);
    s.tx = s.tx.wrapping_add(expect_tx as i64);
    s.pending = s.pending.saturating_sub(count);
    if drop {
        s.expected = s.expected.saturating_sub(count);
    }
    (s.settle().encode(), bits)
}

/// `mbarrier.expect_tx.b64 [a], txCount`: the current phase also waits for `tx` more bytes.
pub fn expect_tx(bits: u64, tx: u64) -> u64 {
    let mut s = State::decode(bits);
    s.tx = s.tx.wrapping_add(tx as i64);
    s.encode()
}

/// `mbarrier.complete_tx.b64 [a], txCount`: `tx` bytes arrived.
pub fn complete_tx(bits: u64, tx: u64) -> u64 {
    let mut s = State::decode(bits);
    s.tx = s.tx.wrapping_sub(tx as i64);
    s.settle().encode()
}

/// `mbarrier.test_wait`/`try_wait`: whether the phase the state token `token` arrived in has completed.
pub fn phase_done(bits: u64, token: u64) -> bool {
    (bits ^ token) & PHASE != 0
}

/// `mbarrier.test_wait.parity`/`try_wait.parity`: whether the phase of parity `parity` has completed
/// (the current phase has the other parity).
pub fn parity_done(bits: u64, parity: u64) -> bool {
    (bits & PHASE != 0) != (parity & 1 != 0)
}

/// `mbarrier.pending_count.b64 count, state`: the pending arrivals a state token records.
pub fn pending_count(token: u64) -> u64 {
    State::decode(token).pending
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phase_completes_after_its_arrivals_and_the_next_waits_for_as_many() {
        let mut b = init(3);
        let mut tokens = Vec::new();
        for _ in 0..3 {
            assert!(tokens.iter().all(|&t| !phase_done(b, t)), "no waiter passes before the last arrival");
            let (nb, t) = arrive(b, 1, 0, false);
            b = nb;
            tokens.push(t);
        }
        assert!(tokens.iter().all(|&t| phase_done(b, t)), "every arrival's phase completed");
        assert!(parity_done(b, 0) && !parity_done(b, 1));
        assert_eq!(State::decode(b), State { pending: 3, expected: 3, tx: 0, phase: true });
    }

    #[test]
    fn transactions_hold_the_phase_open_whatever_their_order() {
        let b = init(1);
        let (b1, t) = arrive(b, 1, 64, false);
        assert!(!phase_done(b1, t), "64 bytes pending");
        assert!(phase_done(complete_tx(b1, 64), t));
        // Bytes that land before the arrival announces them.
        let early = complete_tx(init(1), 16);
        assert_eq!(State::decode(early).tx, -16);
        let (b2, t2) = arrive(early, 1, 16, false);
        assert!(phase_done(b2, t2));
    }

    #[test]
    fn arrive_drop_lowers_the_count_of_later_phases() {
        let (b, _) = arrive(init(2), 1, 0, true);
        let (b, t) = arrive(b, 1, 0, false);
        assert!(phase_done(b, t));
        assert_eq!(State::decode(b).pending, 1, "one participant left");
        assert_eq!(pending_count(init(5)), 5);
    }
}
