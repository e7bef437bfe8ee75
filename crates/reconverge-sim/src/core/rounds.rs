//! Rounds of turns at once (functional mode), for mechanisms whose groups of one warp take turns one
//! instruction each ([`Tracker::ROUNDS`]: `none`, `stackless`, `stackless-dcp`).
//!
//! Such a warp never runs straight-line code as one run while it holds several groups, so each of its
//! instructions costs a selection, an execution and an update. Where every group's next instructions are
//! *pure lane instructions* (they read and write only their own lanes' registers and predicates: no
//! memory, `%clock`, control or synchronisation), the order in which the groups execute them changes no
//! value, and the mechanism can say that its turns go round the groups in a known order
//! ([`Tracker::rotation`]). Then `k` rounds issue at once: every group executes its `k` instructions
//! (groups at one pc together, as one set of lanes: the compiled segment runs once for all of them),
//! each instruction is counted as the issue it would have been, and the mechanism updates once
//! ([`Tracker::advance_rounds`]). Nothing outside the warp can see the difference: the rounds end before
//! any group's next instruction that is not pure, so every memory access, clock read and control
//! transfer happens in the same order as one turn at a time, and the machine's quantum, watchdog and
//! instruction limit count the same issues.

use super::{exec_env, execute_straight, mechanism_error, update_ctx, IssueEnv, Issued, SmCore};
use crate::access::GlobalMemory;
use crate::error::SimError;
use crate::mechanism::{Group, Tracker};
use crate::types::{LaneMask, Pc};

use super::Jit;

impl<'a, T: Tracker> SmCore<'a, T> {
    /// How many rounds of turns of `group`'s context may issue at once, at most `max` instructions in
    /// all, with the context's groups in turn order left in `rotation` (`group` first): as many as every
    /// group's pure lane instructions from its pc allow. 0 where none may (the mechanism does not take
    /// turns, or cannot say whose turn comes when; an SM-wide pool; the scalarization counter or the
    /// timing model follows every instruction). Pure.
    pub fn rounds(&self, cta: usize, group: &Group, max: u32, rotation: &mut Vec<(Pc, LaneMask)>) -> u32 {
        if !T::ROUNDS || T::SM_POOL || self.scalar.is_some() || self.deferral.is_some() {
            return 0;
        }
        let pure = |pc: Pc| self.pure_run.get(pc as usize).map_or(0, |&n| u32::from(n));
        // The issuing group first: asking the mechanism costs more than this look.
        if pure(group.pc) == 0 {
            return 0;
        }
        let Some(r) = self.ctas.get(cta).and_then(Option::as_ref) else { return 0 };
        let view = self.view_of(&r.cta);
        if !self.tracker.rotation(&self.mech, &r.st, (self.prog, &view), group, rotation) {
            return 0;
        }
        let turns = rotation.len() as u32;
        if turns < 2 {
            return 0;
        }
        rotation.iter().fold(max / turns, |k, &(pc, _)| k.min(pure(pc)))
    }

    /// Issues the `rounds` rounds of turns [`SmCore::rounds`] allowed for `group`'s context: every group
    /// of `rotation` executes `rounds` pure lane instructions from its pc (the groups at one pc together),
    /// each counted as its own issue, and the mechanism updates once. No observer sees them. Returns what
    /// the last issue did (nothing a pure instruction does: no barrier, release or exit, no change the
    /// watchdog counts).
    pub fn issue_rounds<G: GlobalMemory>(
        &mut self,
        cta: usize,
        group: &Group,
        (rounds, rotation): (u32, &[(Pc, LaneMask)]),
        env: IssueEnv<'_, G>,
        mut jit: Option<&mut Jit<'a>>,
    ) -> Result<Issued, SimError> {
        let prog = self.prog;
        let Some(r) = self.ctas.get_mut(cta).and_then(Option::as_mut) else {
            return Err(SimError::Internal("issue to an empty CTA slot"));
        };
        let cycle = env.cycle;
        let mut e = exec_env(prog, env, &self.fixed, (&mut self.access, &mut self.printf), T::AWAITS_MEMBERS);
        e.cta_slot = cta as u32;
        // Lanes are independent: the groups at one pc execute as one set of lanes, in pc order of first turn.
        let mut done: LaneMask = 0;
        for (i, &(pc, mask)) in rotation.iter().enumerate() {
            if mask & done != 0 {
                continue;
            }
            let lanes = rotation[i..].iter().filter(|g| g.0 == pc).fold(0, |m, g| m | g.1);
            done |= lanes;
            let run = (&group.lanes, lanes, pc, rounds);
            // A pure lane instruction fails only on an internal error; its issue is then not counted.
            execute_straight(&mut e, &mut self.scratch, &mut r.cta, run, jit.as_deref_mut()).map_err(|(_, err)| err)?;
        }
        for &(pc, mask) in rotation {
            self.stats.count_run(prog, pc, rounds, mask);
        }
        self.released.clear();
        // `rounds` refuses an SM-wide pool, so the view is the CTA's own.
        let mut u = update_ctx(prog, cta, r.cta.view(), cycle, &mut self.stats, &mut self.delayed);
        self.tracker
            .advance_rounds(&mut self.mech, &mut r.st, group, rounds, &mut u)
            .map_err(|err| mechanism_error(self.tracker.name(), prog, &r.cta, group.pc, err))?;
        let (size, delay) = (u.size, u.delay);
        self.stats.max_structure = self.stats.max_structure.max(size);
        Ok(Issued { barrier: false, released: false, exited: false, changed: false, delay, structure: size })
    }
}
