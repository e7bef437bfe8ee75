//! The sparse path (only the active lanes fetched, computed and written) against the whole-warp path.
use super::super::lanes::{Mixed, Whole};
use super::*;
use crate::memory::DeviceMemory;
use reconverge_program::DecodeOptions;

/// Integer, carry, bit-field, float, compare, select, move and special-register instructions.
const PTX: &str = r#"
.version 8.8
.target sm_80
.address_size 64
.visible .entry k()
{
    .reg .pred %p<5>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<4>;
    .reg .f32 %f<6>;
    mul.hi.s32 %r3, %r1, %r2;
    rem.s32 %r4, %r1, %r2;
    add.s32 %r5, %r1, 7;
    mad.lo.s32 %r6, %r1, %r2, %r3;
    add.s64 %rd3, %rd1, %rd2;
    shl.b32 %r7, %r1, 3;
    add.cc.u32 %r8, %r1, %r2;
    addc.u32 %r9, %r3, %r4;
    bfi.b32 %r10, %r1, %r2, 8, 4;
    add.f32 %f3, %f1, %f2;
    div.rn.f32 %f4, %f1, %f2;
    fma.rn.f32 %f5, %f1, %f2, %f3;
    cvt.rn.f32.s32 %f1, %r1;
    setp.lt.s32 %p1, %r1, %r2;
    setp.gtu.f32 %p2, %f1, %f2;
    setp.ne.and.s32 %p3, %r3, %r4, %p1;
    selp.b32 %r11, %r1, %r2, %p2;
    selp.f32 %f2, %f3, 0f3F800000, %p3;
    mov.u32 %r2, %tid.x;
    mov.u32 %r1, %laneid;
    @%p1 add.s32 %r4, %r4, %r2;
    ret;
}
"#;

fn program() -> Program {
    let m = reconverge_ptx::parse(PTX).expect("test PTX parses");
    let loaded =
        crate::load(&m, None, crate::mechanism::Mechanism::Pdom, &DecodeOptions::default()).expect("test PTX decodes");
    loaded.program().clone()
}

/// A CTA of two warps whose registers and predicates hold varied values (small, negative, zero,
/// float bit patterns).
fn cta(prog: &Program) -> Cta {
    let mut cta = Cta::new(prog, [0; 3], 0, [64, 1, 1], 32, 0);
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for (i, r) in cta.regs.iter_mut().enumerate() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *r = match i % 5 {
            0 => x % 9,
            1 => (x as i32 % 50) as u32 as u64,
            2 => 0,
            _ => x & 0xFFFF_FFFF,
        };
    }
    for (i, p) in cta.preds.iter_mut().enumerate() {
        *p = 0x5A5A_C3C3_0F0F_9669u64.rotate_left(i as u32 * 7);
    }
    cta
}

/// Runs every instruction of the program (but the last) for `lanes` and `mask` with the given
/// sparse limits, from the same state each time; returns the state after each and `env.changed`.
fn run_all<L: Lanes>(prog: &Program, g: L, mask: LaneMask, limits: u32, track: bool) -> Vec<(Cta, bool)> {
    let fixed = Fixed { grid: [1; 3], block: [64, 1, 1], sm: 0, nsm: 1, local_limit: 1024, dynamic_shared: 0 };
    let (mut mem, mut access, mut printf) = (DeviceMemory::new(), AccessLog::default(), PrintfLog::default());
    let mut sc = Scratch { sparse_whole: limits, sparse_mixed: limits, ..Scratch::default() };
    let mut out = Vec::new();
    for pc in 0..prog.insts.len() as Pc - 1 {
        let mut c = cta(prog);
        let mut env = test_env(prog, &mut mem, &fixed, (&mut access, &mut printf), track);
        let fx = execute(&mut env, &mut sc, &mut c, g, pc, mask).expect("executes");
        assert!(fx.barrier.is_none(), "no barriers in the test program");
        out.push((c, env.changed));
    }
    out
}

/// The sparse and the whole-warp path leave the same registers, predicates, carries and `changed`;
/// registers change only in active lanes' thread slots, and some do.
fn same_both_ways<L: Lanes>(prog: &Program, g: L, mask: LaneMask) {
    let before = cta(prog);
    for track in [false, true] {
        let dense = run_all(prog, g, mask, 0, track);
        let sparse = run_all(prog, g, mask, 32, track);
        let mut wrote = 0;
        for (pc, ((d, dc), (s, sc))) in dense.iter().zip(&sparse).enumerate() {
            let text = &prog.info[pc].text;
            assert_eq!(d.regs, s.regs, "registers after `{text}` (mask {mask:#x}, track {track})");
            assert_eq!(d.preds, s.preds, "predicates after `{text}`");
            assert_eq!(d.carry, s.carry, "carries after `{text}`");
            assert_eq!(dc, sc, "`changed` after `{text}`");
            for (i, (a, b)) in before.regs.iter().zip(&s.regs).enumerate() {
                if a != b {
                    let slot = i % before.padded;
                    assert!(lanes(mask).any(|l| g.slot(l) == slot), "`{text}` wrote inactive slot {slot}");
                    wrote += 1;
                }
            }
        }
        assert!(wrote > 0, "the instructions wrote registers");
    }
}

#[test]
fn sparse_lanes_compute_what_whole_warps_do() {
    let prog = program();
    for (warp, mask) in [(0u32, 1u64), (1, 0x8000_0001), (0, 0x00F0_0F00), (1, 0x7FFF_FFFE), (0, u32::MAX as u64)] {
        same_both_ways(&prog, Whole { warp, base: warp as usize * 32 }, mask);
    }
}

#[test]
fn sparse_lanes_of_regrouped_groups_compute_what_whole_warps_do() {
    let prog = program();
    for parts in [vec![(0u32, 0x0000_00FFu64), (1, 0x0F00_0000)], vec![(1, 0x1), (0, 0x8000_0000)]] {
        let slots = Mixed::slot_table(&parts, 32);
        let g = Mixed { parts: &parts, slots: &slots, w: 32 };
        same_both_ways(&prog, g, parts.iter().fold(0, |a, p| a | p.1));
    }
}

#[test]
fn sparse_results_are_the_expected_values() {
    let prog = program();
    let pc_of = |s: &str| prog.info.iter().position(|i| i.text.starts_with(s)).expect("instruction") as Pc;
    let g = Whole { warp: 1, base: 32 };
    let mask = 0x8000_0004u64;
    let before = cta(&prog);
    let sparse = run_all(&prog, g, mask, 32, false);
    let reg = |c: &Cta, pc: Pc, l: usize| {
        let (Op::Selp { d, .. } | Op::IntBin { d, .. }) = prog.insts[pc as usize].op else { panic!("no dest") };
        c.regs[d as usize * c.padded + 32 + l]
    };
    let src = |pc: Pc, l: usize| {
        let (Op::Selp { a, b, .. } | Op::IntBin { a, b, .. }) = prog.insts[pc as usize].op else { panic!() };
        let v = |s: Src| match s {
            Src::Reg(r) => before.regs[r as usize * before.padded + 32 + l],
            Src::Imm(v) => v,
            _ => panic!("register or immediate"),
        };
        (v(a), v(b))
    };
    let add = pc_of("add.s32 %r5");
    let selp = pc_of("selp.b32");
    let Op::Selp { c: PredSrc::Reg(p, false), .. } = prog.insts[selp as usize].op else { panic!("selp") };
    for l in [2usize, 31] {
        let (x, y) = src(add, l);
        assert_eq!(reg(&sparse[add as usize].0, add, l), (x as u32).wrapping_add(y as u32) as u64);
        let (x, y) = src(selp, l);
        let pick = before.preds[p as usize * 2 + 1] >> l & 1 == 1;
        assert_eq!(reg(&sparse[selp as usize].0, selp, l), if pick { x } else { y });
    }
    let setp = pc_of("setp.lt.s32");
    let Op::Setp { p: Some(p), a, b, .. } = prog.insts[setp as usize].op else { panic!("setp") };
    let (Src::Reg(a), Src::Reg(b)) = (a, b) else { panic!("registers") };
    let after = sparse[setp as usize].0.preds[p as usize * 2 + 1];
    for l in 0..32 {
        let (x, y) = (before.regs[a as usize * 64 + 32 + l] as i32, before.regs[b as usize * 64 + 32 + l] as i32);
        let expect = if mask >> l & 1 == 1 { x < y } else { before.preds[p as usize * 2 + 1] >> l & 1 == 1 };
        assert_eq!(after >> l & 1 == 1, expect, "lane {l}");
    }
}

/// Loads and stores of every kind the whole-warp memory path takes (and some it leaves lane by lane).
const MEM_PTX: &str = r#"
.version 8.8
.target sm_80
.address_size 64
.visible .entry m()
{
    .reg .b16 %h<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    .shared .align 8 .b8 sh[512];
    ld.global.u32 %r1, [%rd1];
    ld.global.s16 %r2, [%rd1+2];
    ld.global.s8 %rd3, [%rd1+1];
    ld.global.v2.u32 {%r3, %r4}, [%rd1+8];
    ld.global.v4.u16 {%h1, %h0, %h0, %h1}, [%rd1];
    ld.shared.u32 %r5, [%r6+4];
    ld.u32 %r1, [%rd2];
    ld.local.u32 %r4, [%rd1];
    st.global.u32 [%rd1], %r7;
    st.global.v2.u32 [%rd1+8], {%r7, %r6};
    st.global.u8 [%rd1+3], 5;
    st.shared.u16 [%r6+2], %r7;
    st.u32 [%rd2], 5;
    ret;
}
"#;

/// Where lane `l` points in one test case: `(global address, shared offset)`; `a` and `b` are two
/// 512-byte allocations.
fn target(case: usize, l: usize, a: u64, b: u64) -> (u64, u64) {
    let l64 = l as u64;
    match (case, l) {
        (0, _) => (a + 16 * l64, 16 * l64),
        (1, _) => (a + 8 * (31 - l64), 8 * (31 - l64)),
        (2, _) => (a + 64, 64),
        (3, 7) => (a + 512, 512),
        (4, 5) => (a + 16 * l64 + 1, 16 * l64 + 1),
        (5, 9) => (b + 16, 16),
        (6, 3) => (0, u32::MAX as u64 - 1),
        (7, 30) => (a + 510, 510),
        (_, _) => (a + 16 * l64, 16 * l64),
    }
}

/// An environment over `mem` with no constants or parameters, at clock 0, in CTA slot 0.
fn test_env<'e>(
    prog: &'e Program,
    mem: &'e mut DeviceMemory,
    fixed: &'e Fixed,
    (access, printf): (&'e mut AccessLog, &'e mut PrintfLog),
    track: bool,
) -> Env<'e, DeviceMemory> {
    Env {
        prog,
        mem,
        consts: &[],
        params: &[],
        fixed,
        clock: 0,
        track,
        changed: false,
        access,
        cta_slot: 0,
        await_members: false,
        printf,
    }
}

/// What a load or store left: the result, the registers, shared and device memory, `changed`, the
/// access log and the bytes it logged.
type MemOutcome = (Result<(), SimError>, Vec<u64>, Vec<u8>, Vec<Vec<u8>>, bool, Vec<(usize, Space, u64)>, u32);

/// One load or store at `pc` for group `g`, `mask` in test case `case`, with the whole-warp memory
/// path on or off: the result, the registers, shared and device memory, `changed` and the access log.
fn run_mem<L: Lanes>(
    prog: &Program,
    pc: Pc,
    (g, mask): (L, LaneMask),
    case: usize,
    (track, warp_memory): (bool, bool),
) -> MemOutcome {
    let fixed = Fixed { grid: [1; 3], block: [64, 1, 1], sm: 0, nsm: 1, local_limit: 1024, dynamic_shared: 0 };
    let mut mem = DeviceMemory::new();
    let pattern = |n: usize, k: u64| (0..n).map(|i| (i as u64).wrapping_mul(k) as u8).collect::<Vec<_>>();
    let a = mem.alloc(pattern(512, 37), "a");
    let b = mem.alloc(pattern(512, 91), "b");
    let mut c = cta(prog);
    c.shared = pattern(512, 13);
    let (Op::Ld { space, addr, .. } | Op::St { space, addr, .. }) = &prog.insts[pc as usize].op else {
        panic!("a load or store")
    };
    for l in 0..32 {
        let (ga, so) = target(case, l, a, b);
        let want = match space {
            Space::Shared => so,
            Space::Generic if case % 2 == 1 => crate::layout::SHARED_WINDOW + so,
            _ => ga,
        };
        if let AddrBase::Reg(r) | AddrBase::Reg32(r) = addr.base {
            c.regs[r as usize * c.padded + g.slot(l)] = want.wrapping_sub(addr.offset as u64);
        }
    }
    let (mut access, mut printf) = (AccessLog { enabled: true, ..AccessLog::default() }, PrintfLog::default());
    let mut sc = Scratch { warp_memory, ..Scratch::default() };
    let mut env = test_env(prog, &mut mem, &fixed, (&mut access, &mut printf), track);
    let r = execute(&mut env, &mut sc, &mut c, g, pc, mask).map(|_| ());
    let changed = env.changed;
    let log = lanes(access.mask).map(|l| (l, access.space[l], access.addr[l])).collect();
    let data = mem.allocations().iter().map(|x| x.data.clone()).collect();
    (r, std::mem::take(&mut c.regs), std::mem::take(&mut c.shared), data, changed, log, access.bytes)
}

#[test]
fn whole_warp_loads_and_stores_match_lane_by_lane() {
    let m = reconverge_ptx::parse(MEM_PTX).expect("test PTX parses");
    let loaded =
        crate::load(&m, None, crate::mechanism::Mechanism::Pdom, &DecodeOptions::default()).expect("test PTX decodes");
    let prog = loaded.program();
    let parts = [(1u32, 0x00FF_00FFu64), (0, 0xFF00_FF00)];
    let slots = Mixed::slot_table(&parts, 32);
    let mixed = Mixed { parts: &parts, slots: &slots, w: 32 };
    let (mut faults, mut fine) = (0, 0);
    let mut tested = 0;
    for pc in 0..prog.insts.len() as Pc {
        if !matches!(prog.insts[pc as usize].op, Op::Ld { .. } | Op::St { .. }) {
            continue;
        }
        tested += 1;
        for case in 0..9 {
            for track in [false, true] {
                for mask in [u32::MAX as u64, 0x8000_0021, 0x00FF_FF80] {
                    let whole = Whole { warp: 1, base: 32 };
                    let fast = run_mem(prog, pc, (whole, mask), case, (track, true));
                    let slow = run_mem(prog, pc, (whole, mask), case, (track, false));
                    let text = &prog.info[pc as usize].text;
                    assert_eq!(fast, slow, "`{text}`, case {case}, mask {mask:#x}, track {track}");
                    if fast.0.is_err() {
                        faults += 1
                    } else {
                        fine += 1
                    }
                }
                let fast = run_mem(prog, pc, (mixed, u32::MAX as u64), case, (track, true));
                let slow = run_mem(prog, pc, (mixed, u32::MAX as u64), case, (track, false));
                assert_eq!(fast, slow, "`{}` regrouped, case {case}", prog.info[pc as usize].text);
            }
        }
    }
    assert_eq!(tested, 13, "every load and store of the test program");
    assert!(faults > 0 && fine > 0, "both faulting and clean accesses were tested");
}

#[test]
fn warp_spans_cover_clean_accesses_only() {
    let mut addrs = [0u64; 64];
    for (l, a) in addrs.iter_mut().enumerate().take(32) {
        *a = 0x1_0000_0000 + 4 * (31 - l as u64);
    }
    let full = u32::MAX as u64;
    let s = warp_span(Space::Global, full, &addrs, 4, 2).expect("aligned, one space");
    assert_eq!((s.space, s.lo, s.start, s.len), (Space::Global, 0x1_0000_0000, 0x1_0000_0000, 31 * 4 + 8));
    assert_eq!(s.offset(addrs[0], 1, 4), 31 * 4 + 4);
    addrs[3] += 2;
    assert!(warp_span(Space::Global, full, &addrs, 4, 1).is_none(), "a misaligned lane");
    assert!(warp_span(Space::Global, full & !8, &addrs, 4, 1).is_some(), "the misaligned lane inactive");
    addrs[3] = crate::layout::SHARED_WINDOW;
    assert!(warp_span(Space::Generic, full, &addrs, 4, 1).is_none(), "shared and global lanes");
    addrs[..32].iter_mut().for_each(|a| *a = crate::layout::SHARED_WINDOW + 8);
    let s = warp_span(Space::Generic, full, &addrs, 8, 1).expect("all shared");
    assert_eq!((s.space, s.start, s.len), (Space::Shared, 8, 8));
    addrs[0] = u64::MAX - 3;
    assert!(warp_span(Space::Global, 1, &addrs, 4, 2).is_none(), "past the end of the address space");
}

/// Texture and surface instructions on objects whose descriptors lie in device memory: a `tex1Dfetch`,
/// a linearly filtered `tex2D`, `txq`, `suld`/`sust`, and a handle that is not an object.
mod texture_objects {
    use super::*;
    use reconverge_semantics::texture::{ChannelKind, Descriptor, Format, ObjectKind, Resource, Sampler};

    /// A 4 x 2 float texture (texel (x, y) = 10 y + x) with its texture and surface descriptors, and an
    /// output buffer: (memory, texture handle, surface handle, output address).
    fn memory(linear: bool) -> (DeviceMemory, u64, u64, u64) {
        let mut mem = DeviceMemory::new();
        let texels: Vec<u8> = (0..8).flat_map(|i| ((10 * (i / 4) + i % 4) as f32).to_le_bytes()).collect();
        let base = mem.alloc(texels, "texels");
        let d = Descriptor {
            object: ObjectKind::Texture,
            resource: Resource::Array,
            format: Format { kind: ChannelKind::Float, channels: 1, bits: 32 },
            base,
            width: 4,
            pitch: 16,
            height: 2,
            depth: 1,
            layers: 1,
            sampler: Sampler { linear, ..Sampler::default() },
        };
        let tex = mem.alloc(d.encode().to_vec(), "texture");
        let surf = mem.alloc(Descriptor { object: ObjectKind::Surface, ..d }.encode().to_vec(), "surface");
        let out = mem.alloc(vec![0; 32 * 16], "out");
        (mem, tex, surf, out)
    }

    /// Runs `body` (after `%rd1` = texture, `%rd2` = surface, `%rd3` = this thread's 16 output bytes,
    /// `%r1` = %tid.x) for one warp of 8 threads; returns the outcome and the memory.
    fn run(body: &str, linear: bool) -> (Result<(), SimError>, DeviceMemory, u64) {
        let (mut mem, tex, surf, out) = memory(linear);
        let ptx = format!(
            ".version 8.8\n.target sm_80\n.address_size 64\n.visible .entry k()\n{{\n.reg .pred %p<3>;\n\
             .reg .b32 %r<12>;\n.reg .b64 %rd<8>;\n.reg .f32 %f<12>;\nmov.u64 %rd1, {tex};\nmov.u64 %rd2, {surf};\n\
             mov.u32 %r1, %tid.x;\nmul.wide.u32 %rd4, %r1, 16;\nadd.s64 %rd3, %rd4, {out};\n{body}\nret;\n}}\n"
        );
        let m = reconverge_ptx::parse(&ptx).expect("test PTX parses");
        let loaded = crate::load(&m, None, crate::mechanism::Mechanism::Pdom, &DecodeOptions::default())
            .expect("test PTX decodes");
        let prog = loaded.program();
        let fixed = Fixed { grid: [1; 3], block: [8, 1, 1], sm: 0, nsm: 1, local_limit: 1024, dynamic_shared: 0 };
        let (mut access, mut printf) = (AccessLog { enabled: true, ..AccessLog::default() }, PrintfLog::default());
        let mut c = Cta::new(prog, [0; 3], 0, [8, 1, 1], 8, 0);
        let mut sc = Scratch::default();
        let g = Whole { warp: 0, base: 0 };
        let mut result = Ok(());
        for pc in 0..prog.insts.len() as Pc - 1 {
            let mut env = test_env(prog, &mut mem, &fixed, (&mut access, &mut printf), false);
            if let Err(e) = execute(&mut env, &mut sc, &mut c, g, pc, 0xFF) {
                result = Err(e);
                break;
            }
        }
        (result, mem, out)
    }

    fn floats(mem: &DeviceMemory, out: u64, thread: usize) -> [f32; 4] {
        let a = mem.allocation(out).expect("output buffer");
        [0, 1, 2, 3].map(|k| {
            let at = thread * 16 + 4 * k;
            f32::from_le_bytes(a.data[at..at + 4].try_into().expect("4 bytes"))
        })
    }

    #[test]
    fn integer_coordinates_fetch_texels_with_missing_channels_zero_and_alpha_one() {
        let body = "tex.2d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [%rd1, {%r1, %r1}];\n\
                    st.global.v4.f32 [%rd3], {%f1, %f2, %f3, %f4};";
        let (r, mem, out) = run(body, false);
        r.expect("runs");
        // (t, t) clamped to the 4 x 2 texture: x = min(t, 3), y = min(t, 1).
        for t in 0..8 {
            let want = (10 * t.min(1) + t.min(3)) as f32;
            assert_eq!(floats(&mem, out, t), [want, 0.0, 0.0, 1.0], "thread {t}");
        }
    }

    #[test]
    fn linear_filtering_interpolates_between_texel_centres() {
        // x = t / 2 + 0.5, y = 1.0: halfway between rows 0 and 1 (weights 1/2), and between columns.
        let body = "cvt.rn.f32.u32 %f5, %r1;\nfma.rn.f32 %f6, %f5, 0f3F000000, 0f3F000000;\n\
                    tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f6, 0f3F800000}];\n\
                    st.global.v4.f32 [%rd3], {%f1, %f2, %f3, %f4};";
        let (r, mem, out) = run(body, true);
        r.expect("runs");
        for t in 0..8usize {
            // Column position x - 0.5 = t / 2, clamped at the edge 3; rows average to 5 + x.
            let x = (t as f32 / 2.0).min(3.0);
            assert_eq!(floats(&mem, out, t)[0], 5.0 + x, "thread {t}");
        }
    }

    #[test]
    fn queries_and_surface_stores_and_loads() {
        let body = "txq.width.b32 %r2, [%rd1];\ntxq.height.b32 %r3, [%rd1];\n\
                    shl.b32 %r4, %r1, 2;\nand.b32 %r5, %r1, 1;\n\
                    cvt.rn.f32.u32 %f1, %r1;\nsust.b.2d.b32.zero [%rd2, {%r4, %r5}], {%f1};\n\
                    suld.b.2d.b32.zero {%r6}, [%rd2, {%r4, %r5}];\n\
                    st.global.v4.u32 [%rd3], {%r2, %r3, %r6, %r6};";
        let (r, mem, out) = run(body, false);
        r.expect("runs");
        for t in 0..8usize {
            let v = floats(&mem, out, t);
            assert_eq!((v[0].to_bits(), v[1].to_bits()), (4, 2), "width and height");
            // Threads 0..3 store inside the 4 x 2 surface and read their value back; 4..7 are out of range
            // (x = 16..28 bytes): the store is dropped and the load reads zero.
            let want = if t < 4 { t as f32 } else { 0.0 };
            assert_eq!(v[2], want, "thread {t}");
        }
        let texels = &mem.allocations()[0].data;
        let at = |x: usize, y: usize| f32::from_le_bytes(texels[(y * 4 + x) * 4..][..4].try_into().expect("4"));
        assert_eq!((at(0, 0), at(1, 1), at(2, 0), at(3, 1)), (0.0, 1.0, 2.0, 3.0));
    }

    #[test]
    fn a_handle_that_is_no_object_is_an_error_naming_it() {
        let body = "tex.1d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [%rd3, {%r1}];";
        let (r, _, out) = run(body, false);
        let e = r.expect_err("a fetch through the output buffer's address fails").to_string();
        assert!(e.contains(&format!("{out:#x}")) && e.contains("not a texture or surface object"), "{e}");
        let body = "suld.b.1d.b32.trap {%r6}, [%rd1, {%r1}];";
        let e = run(body, false).0.expect_err("a texture is no surface").to_string();
        assert!(e.contains("not a surface object"), "{e}");
        let body = "shl.b32 %r4, %r1, 2;\nsuld.b.1d.b32.trap {%r6}, [%rd2, {%r4}];";
        let e = run(body, false).0.expect_err("x = 16 bytes is out of range").to_string();
        assert!(e.contains("surface access out of range"), "{e}");
    }
}
