//! Members of warp-synchronous instructions: whether every lane of the member mask is in the group, and
//! splitting a group by member masks.

use super::*;

/// A member set of a warp-synchronous instruction: its member mask, the lanes of it in the issue group,
/// and its live member lanes that are not.
pub(super) struct MemberSet {
    members: u64,
    present: LaneMask,
    missing: LaneMask,
}

/// The outcome of a member set whose live member lanes `missing` are not in the group: a wait for them
/// when the mechanism gathers members (and the group is one static warp's), else a SIMT deadlock.
pub(super) fn members_missing<G: GlobalMemory>(
    env: &Env<G>,
    cta: &Cta,
    pc: Pc,
    sw: u32,
    MemberSet { members, present, missing }: MemberSet,
    whole: bool,
) -> Result<Option<Effects>, SimError> {
    if env.await_members && whole {
        return Ok(Some(Effects { flow: Flow::Await { lanes: missing }, barrier: None }));
    }
    let at = Box::new(location(env.prog, cta, pc, None));
    let report = Box::new(DeadlockReport::MembersMissing { warp: sw, missing, members, present, at });
    Err(SimError::Deadlock { report })
}

/// Warp-synchronous instructions execute per *member set*: the active lanes that come from the same
/// static warp and name the same member mask run together (PTX: every thread of the member mask executes
/// the same instruction with the same mask before any proceeds). When the group holds several sets,
/// each is executed by itself and `Some` is returned. A set whose live member lanes are not all in the
/// group waits for them ([`Flow::Await`], when the mechanism gathers them) or is a SIMT deadlock.
pub(super) fn split_by_members<G: GlobalMemory, L: Lanes>(
    env: &mut Env<G>,
    sc: &mut Scratch,
    cta: &mut Cta,
    At { g, pc, mask, eff, .. }: At<L>,
    member: Src,
) -> Result<Option<Effects>, SimError> {
    let w = cta.w;
    let values = fetch(cta, env, g, member, &mut sc.e, None);
    let fm = full_mask(w as u32);
    // The common case: one static warp, one member mask.
    let first = values[eff.trailing_zeros() as usize] & fm;
    if g.base().is_some() && lanes(eff).all(|l| values[l] & fm == first) {
        let sw = g.warp(eff.trailing_zeros() as usize);
        let missing = first & cta.live[sw as usize] & !mask;
        if missing == 0 {
            return Ok(None);
        }
        return members_missing(
            env,
            cta,
            pc,
            sw,
            MemberSet { members: first, present: mask, missing },
            g.base().is_some(),
        );
    }
    let mut sets: SmallVec<[(u32, u64, LaneMask); 2]> = SmallVec::new();
    for l in lanes(eff) {
        let key = (g.warp(l), values[l] & fm);
        match sets.iter_mut().find(|s| (s.0, s.1) == key) {
            Some(s) => s.2 |= 1 << l,
            None => sets.push((key.0, key.1, 1 << l)),
        }
    }
    // Lanes of the group holding threads of each static warp.
    let present = |sw: u32| lanes(mask).filter(|&l| g.warp(l) == sw).fold(0u64, |a, l| a | 1 << l);
    for &(sw, members, _) in &sets {
        let missing = members & cta.live[sw as usize] & !present(sw);
        if missing == 0 {
            continue;
        }
        let set = MemberSet { members, present: present(sw), missing };
        return members_missing(env, cta, pc, sw, set, g.base().is_some());
    }
    if sets.len() <= 1 {
        return Ok(None);
    }
    for &(_, _, set) in &sets {
        execute(env, sc, cta, g, pc, set)?;
    }
    Ok(Some(Effects::next()))
}
