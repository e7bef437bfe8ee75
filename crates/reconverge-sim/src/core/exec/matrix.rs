//! Instruction family: the tensor cores' warp-wide matrix instructions (`mma`, `ldmatrix`, `stmatrix`,
//! `movmatrix`, `wmma.*`), whose values and fragment layouts are [`reconverge_semantics::mma`]'s. They are
//! `.aligned`: the member check before this (`split_by_members`) makes every live lane of the 32-lane warp
//! execute them together or reports the warp's split as PTX defines it (a SIMT deadlock, or a wait for the
//! missing lanes under a mechanism that gathers them).

use super::*;
use reconverge_semantics::mma::{self, Operand as Which};

/// The most registers per lane of any operand (a `.f16` `wmma` fragment: 8).
const MAX_REGS: usize = 8;

/// Lane-major register values of `srcs` for the 32 lanes (lanes outside `eff` read 0).
fn gather<G: GlobalMemory, L: Lanes>(cta: &Cta, env: &Env<G>, g: L, eff: LaneMask, srcs: &[Src], out: &mut [u64]) {
    let n = srcs.len();
    for l in 0..32 {
        for (j, s) in srcs.iter().enumerate() {
            out[l * n + j] = if eff >> l & 1 == 1 { lane_value(cta, env, g, *s, l) } else { 0 };
        }
    }
}

/// Writes lane-major values to the registers `d` of the lanes in `eff`.
fn scatter<G: GlobalMemory, L: Lanes>(cta: &mut Cta, env: &mut Env<G>, g: L, eff: LaneMask, d: &[Reg], vals: &[u64]) {
    let n = d.len();
    for l in lanes(eff) {
        for (j, r) in d.iter().enumerate() {
            write_lane(cta, env, g, *r, l, vals[l * n + j]);
        }
    }
}

/// The matrix a `wmma.load`/`wmma.store` reads or writes: base address, stride and element size.
struct Layout {
    space: Space,
    base: u64,
    stride: usize,
    row_major: bool,
    bytes: u32,
    dims: (usize, usize),
}

impl Layout {
    fn addr(&self, row: usize, col: usize) -> u64 {
        self.base.wrapping_add(mma::wmma_offset(self.row_major, self.stride, row, col) as u64 * u64::from(self.bytes))
    }
}

/// Times a `wmma` matrix access as each lane touching its 32nd of the elements, in memory order.
fn log_matrix<G: GlobalMemory>(env: &mut Env<G>, kind: AccessKind, eff: LaneMask, m: &Layout) {
    let (rows, cols) = m.dims;
    let per = (rows * cols / 32).max(1);
    env.access.begin(kind, per as u32 * m.bytes);
    for l in lanes(eff) {
        let e = l * per;
        let (r, c) = if m.row_major { (e / cols, e % cols) } else { (e % rows, e / rows) };
        env.access.record(l, m.space, m.addr(r, c));
    }
}

/// The matrix of a `wmma.load`/`wmma.store` of `frag`: the first active lane's address and stride.
fn layout<G: GlobalMemory, L: Lanes>(
    cta: &Cta,
    env: &Env<G>,
    (g, first): (L, usize),
    frag: &WmmaFragment,
    row_major: bool,
    (space, addr, stride): (Space, &Addr, Src),
) -> Layout {
    let (m, n, k) = frag.shape.mnk();
    let dims = match frag.which {
        Which::A => (m, k),
        Which::B => (k, n),
        Which::C => (m, n),
    };
    Layout {
        space,
        base: lane_addr(cta, g, first, addr),
        stride: lane_value(cta, env, g, stride, first) as u32 as usize,
        row_major,
        bytes: frag.elem.bits() / 8,
        dims,
    }
}

/// `wmma.mma`: the fragments as matrices, multiplied, and D's fragment back.
fn wmma_mma<G: GlobalMemory, L: Lanes>(
    env: &mut Env<G>,
    cta: &mut Cta,
    (g, eff): (L, LaneMask),
    kind: &WmmaKind,
    (d, a, b, c): (&[Reg], &[Src], &[Src], &[Src]),
) -> Result<(), SimError> {
    let (m, n, k) = kind.shape.mnk();
    let mut fr = [0u64; 32 * MAX_REGS];
    let mut mats = [[0u64; 512]; 3];
    for (i, (srcs, which, elem, len)) in
        [(a, Which::A, kind.a, m * k), (b, Which::B, kind.b, k * n), (c, Which::C, kind.c, m * n)]
            .into_iter()
            .enumerate()
    {
        gather(cta, env, g, eff, srcs, &mut fr);
        if !mma::wmma_gather(kind.shape, which, elem, &fr[..32 * srcs.len()], &mut mats[i][..len]) {
            return Err(SimError::Internal("wmma.mma fragments"));
        }
    }
    let mut dm = [0u64; 512];
    let [am, bm, cm] = &mats;
    if !mma::wmma_mma(kind, &am[..m * k], &bm[..k * n], &cm[..m * n], &mut dm[..m * n]) {
        return Err(SimError::Internal("wmma.mma"));
    }
    let nd = 32 * d.len();
    if !mma::wmma_scatter(kind.shape, Which::C, kind.d, &dm[..m * n], &mut fr[..nd]) {
        return Err(SimError::Internal("wmma.mma result"));
    }
    scatter(cta, env, g, eff, d, &fr[..nd]);
    Ok(())
}

/// `ldmatrix`'s destinations or `stmatrix`'s sources.
enum Rows<'a> {
    Load(&'a [Reg]),
    Store(&'a [Src]),
}

/// `ldmatrix`/`stmatrix`: lane `8 m + r` addresses row `r` of matrix `m`; each lane's register `j` holds
/// two `.b16` elements ([`mma::ldmatrix_source`]).
fn ld_st_matrix<G: GlobalMemory, L: Lanes>(
    env: &mut Env<G>,
    cta: &mut Cta,
    (g, pc, eff): (L, Pc, LaneMask),
    (num, trans): (usize, bool),
    (space, addr): (Space, &Addr),
    rows: Rows<'_>,
) -> Result<(), SimError> {
    let kind = if matches!(rows, Rows::Load(_)) { AccessKind::Load } else { AccessKind::Store };
    env.access.begin(kind, 16);
    let mut row_addr = [0u64; 32];
    for l in lanes(eff).filter(|&l| l < 8 * num) {
        row_addr[l] = lane_addr(cta, g, l, addr);
        env.access.record(l, space, row_addr[l]);
    }
    let element = |m: usize, r: usize, c: usize| {
        let lane = mma::ldmatrix_address_lane(m, r).unwrap_or(0);
        (lane, row_addr[lane].wrapping_add(2 * c as u64))
    };
    for t in lanes(eff) {
        for j in 0..num {
            let Some((m, r, c)) = mma::ldmatrix_source(num, trans, t, j) else { continue };
            let (r1, c1) = if trans { (r + 1, c) } else { (r, c + 1) };
            let halves = [element(m, r, c), element(m, r1, c1)];
            match &rows {
                Rows::Load(d) => {
                    let mut v = 0u64;
                    for (h, (lane, a)) in halves.into_iter().enumerate() {
                        let slot = g.slot(lane);
                        let x = mem_read(env, cta, slot, space, a, 2).map_err(|f| mem_err(env, cta, pc, slot, f))?;
                        v |= x << (16 * h);
                    }
                    write_lane(cta, env, g, d[j], t, v);
                }
                Rows::Store(s) => {
                    let v = lane_value(cta, env, g, s[j], t);
                    for (h, (lane, a)) in halves.into_iter().enumerate() {
                        let slot = g.slot(lane);
                        mem_write(env, cta, slot, space, a, 2, v >> (16 * h))
                            .map_err(|f| mem_err(env, cta, pc, slot, f))?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// The tensor-core instructions.
pub(super) fn matrix<G: GlobalMemory, L: Lanes>(
    env: &mut Env<G>,
    cta: &mut Cta,
    At { g, pc, eff, .. }: At<L>,
    op: &Op,
) -> Result<Effects, SimError> {
    if cta.w != 32 {
        return Err(SimError::Unsupported {
            what: format!("warp-wide matrix instructions need 32-thread warps (this launch has {})", cta.w),
            at: Box::new(location(env.prog, cta, pc, None)),
        });
    }
    let first = eff.trailing_zeros() as usize;
    let bad = |what: &'static str| {
        SimError::Internal(if what.is_empty() { "matrix() called for another family" } else { what })
    };
    match op {
        Op::Mma { kind, d, a, b, c } => {
            let (mut av, mut bv, mut cv, mut dv) = ([0u64; 32 * 4], [0u64; 32 * 4], [0u64; 32 * 4], [0u64; 32 * 4]);
            gather(cta, env, g, eff, a, &mut av);
            gather(cta, env, g, eff, b, &mut bv);
            gather(cta, env, g, eff, c, &mut cv);
            let n = 32 * d.len();
            if !mma::mma(kind, &av[..32 * a.len()], &bv[..32 * b.len()], &cv[..32 * c.len()], &mut dv[..n]) {
                return Err(bad("mma"));
            }
            scatter(cta, env, g, eff, d, &dv[..n]);
        }
        Op::Movmatrix { d, a } => {
            let mut av = [0u32; 32];
            for l in lanes(eff) {
                av[l] = lane_value(cta, env, g, *a, l) as u32;
            }
            let out = mma::movmatrix(&av);
            for l in lanes(eff) {
                write_lane(cta, env, g, *d, l, u64::from(out[l]));
            }
        }
        Op::Ldmatrix { num, trans, d, space, addr } => {
            let shape = (usize::from(*num), *trans);
            ld_st_matrix(env, cta, (g, pc, eff), shape, (*space, addr), Rows::Load(d))?
        }
        Op::Stmatrix { num, trans, s, space, addr } => {
            let shape = (usize::from(*num), *trans);
            ld_st_matrix(env, cta, (g, pc, eff), shape, (*space, addr), Rows::Store(s))?
        }
        Op::WmmaLoad { frag, row_major, d, space, addr, stride } => {
            let m = layout(cta, env, (g, first), frag, *row_major, (*space, addr, *stride));
            log_matrix(env, AccessKind::Load, eff, &m);
            let (rows, cols) = m.dims;
            let mut matrix = [0u64; 512];
            for r in 0..rows {
                for c in 0..cols {
                    let slot = g.slot(first);
                    matrix[r * cols + c] = mem_read(env, cta, slot, m.space, m.addr(r, c), m.bytes)
                        .map_err(|f| mem_err(env, cta, pc, slot, f))?;
                }
            }
            let mut fr = [0u64; 32 * MAX_REGS];
            let n = 32 * d.len();
            if !mma::wmma_scatter(frag.shape, frag.which, frag.elem, &matrix[..rows * cols], &mut fr[..n]) {
                return Err(bad("wmma.load"));
            }
            scatter(cta, env, g, eff, d, &fr[..n]);
        }
        Op::WmmaStore { frag, row_major, s, space, addr, stride } => {
            let m = layout(cta, env, (g, first), frag, *row_major, (*space, addr, *stride));
            log_matrix(env, AccessKind::Store, eff, &m);
            let (rows, cols) = m.dims;
            let mut fr = [0u64; 32 * MAX_REGS];
            gather(cta, env, g, eff, s, &mut fr);
            let mut matrix = [0u64; 512];
            if !mma::wmma_gather(frag.shape, frag.which, frag.elem, &fr[..32 * s.len()], &mut matrix[..rows * cols]) {
                return Err(bad("wmma.store"));
            }
            let slot = g.slot(first);
            for r in 0..rows {
                for c in 0..cols {
                    mem_write(env, cta, slot, m.space, m.addr(r, c), m.bytes, matrix[r * cols + c])
                        .map_err(|f| mem_err(env, cta, pc, slot, f))?;
                }
            }
        }
        Op::WmmaMma { kind, d, a, b, c } => wmma_mma(env, cta, (g, eff), kind, (d, a, b, c))?,
        _ => return Err(bad("")),
    }
    Ok(Effects::next())
}
