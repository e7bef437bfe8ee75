//! `vprintf`: CUDA's device `printf`, its arguments read from the lane's memory.

use super::*;

/// `vprintf` (CUDA's device `printf`, [`Op::Printf`]): formats each active lane's call, in lane order,
/// into the SM's printf log, and writes the number of arguments it read to the call's result. The format
/// string, the argument buffer and `%s` strings are read like loads (a bad address is a memory fault of
/// the lane), but not recorded as accesses: the timing model times the call as a control instruction.
/// Unlike every other instruction it allocates (the texts it formats).
pub(super) fn printf<G: GlobalMemory, L: Lanes>(
    env: &mut Env<G>,
    cta: &mut Cta,
    At { g, pc, eff, .. }: At<L>,
    (format, args, ret): (u32, u32, Option<u32>),
) -> Result<Effects, SimError> {
    for l in lanes(eff) {
        let t = g.slot(l);
        let frame = u64::from(cta.frame_base[t]);
        let slot = |env: &Env<G>, cta: &Cta, off: u32| {
            mem_read(env, cta, t, Space::Local, frame + u64::from(off), 8).map_err(|f| mem_err(env, cta, pc, t, f))
        };
        let fmt_addr = slot(env, cta, format)?;
        let buffer = slot(env, cta, args)?;
        let mut src = LaneSource { env, cta, t, pc, buffer };
        let mut fmt = Vec::new();
        src.string(fmt_addr, None, &mut fmt)?;
        let mut text = Vec::new();
        let n = crate::printf::format(&fmt, &mut src, &mut text)?;
        let text = String::from_utf8_lossy(&text).into_owned();
        // Output is progress for the livelock watchdog until the launch's output is full.
        env.changed |= env.printf.push(PrintfRecord { cta: cta.id, thread: cta.tid[t], text });
        if let Some(r) = ret {
            mem_write(env, cta, t, Space::Local, frame + u64::from(r), 4, u64::from(n))
                .map_err(|f| mem_err(env, cta, pc, t, f))?;
        }
    }
    Ok(Effects::next())
}

/// Where one lane's `printf` call reads its arguments and strings: simulated memory through generic
/// addresses.
pub(super) struct LaneSource<'x, 'a, G: GlobalMemory> {
    env: &'x Env<'a, G>,
    cta: &'x Cta,
    /// The lane's thread slot.
    t: usize,
    pc: Pc,
    /// The generic address of the argument buffer.
    buffer: u64,
}

impl<G: GlobalMemory> LaneSource<'_, '_, G> {
    fn read(&self, addr: u64, size: u32) -> Result<u64, SimError> {
        mem_read(self.env, self.cta, self.t, Space::Generic, addr, size)
            .map_err(|f| mem_err(self.env, self.cta, self.pc, self.t, f))
    }
}

impl<G: GlobalMemory> PrintfSource for LaneSource<'_, '_, G> {
    type Error = SimError;

    fn arg(&mut self, offset: u64, size: u32) -> Result<u64, SimError> {
        self.read(self.buffer.wrapping_add(offset), size)
    }

    fn string(&mut self, addr: u64, max: Option<usize>, out: &mut Vec<u8>) -> Result<(), SimError> {
        for k in 0..max.unwrap_or(MAX_STRING) as u64 {
            match self.read(addr.wrapping_add(k), 1)? as u8 {
                0 => return Ok(()),
                b => out.push(b),
            }
        }
        if max.is_some() {
            return Ok(());
        }
        Err(SimError::Trap {
            what: format!("printf: the string at {addr:#x} has no terminating NUL within {MAX_STRING} bytes"),
            at: Box::new(location(self.env.prog, self.cta, self.pc, Some(self.t))),
        })
    }
}
