//! DRAM with banks, row buffers and an FR-FCFS scheduler, after GPGPU-Sim 4.0's model
//! (`src/gpgpu-sim/dram.cc`, `dram_sched.cc`, `addrdec.cc`).
//!
//! # What is modelled
//! Each memory channel (GPGPU-Sim's memory partition: `-gpgpu_n_mem`) has `banks` banks in `bank_groups`
//! groups, one open row per bank (open-page policy: a row stays open until a request to another row of
//! the bank closes it), a command bus and a data bus. Every timing constraint of GPGPU-Sim's
//! `-gpgpu_dram_timing_opt` is kept, in DRAM command-clock cycles:
//!
//! | constraint | between |
//! | --- | --- |
//! | `ccd` | column commands of the channel |
//! | `ccdl` | column commands of one bank group |
//! | `rrd` | activates of the channel |
//! | `rcd` | activate and a read of the bank (`rcd − (wl + 1)` before a write, GPGPU-Sim's `tRCDWR`) |
//! | `ras` | activate and precharge of the bank |
//! | `rp` | precharge and activate of the bank |
//! | `rc` | activates of the bank |
//! | `cl`, `wl` | a read (write) command and its data on the bus |
//! | `cl + burst + 2 − wl` | a read and a following write of the channel (GPGPU-Sim's `tRTW`) |
//! | `wl + burst + cdlr` | a write and a following read of the channel (`tWTR`) |
//! | `wl + burst + wr` | a write and precharge of its bank (`tWTP`) |
//! | `burst`, `rtpl` | a read and precharge of its bank, of its bank group |
//!
//! where `burst` = `BL / dram_data_command_freq_ratio` is the command cycles one burst holds the data
//! bus and moves `burst_bytes` (GPGPU-Sim's `dram_atom_size` = bus width × BL × chips per channel). A
//! request of `n` bytes takes `⌈n / burst_bytes⌉` bursts. GPGPU-Sim has no refresh (its `n_ref_event`
//! counter is never incremented), so neither has this model.
//!
//! # Scheduling
//! Requests wait in a queue per channel and bank, as in GPGPU-Sim's FR-FCFS scheduler
//! (`frfcfs_scheduler::schedule`): for each bank, among the requests that have arrived by the time the
//! bank can take its next one, the oldest that hits the open row goes first, else the oldest; among the
//! banks, the request whose first column command can issue earliest is committed first (ties: the older
//! request, then the lower bank). A request's activate and precharge are issued as early as their
//! constraints allow. The timing model hands the DRAM its requests at each epoch-end merge (where all SMs'
//! requests of an epoch meet, in a deterministic order) and then commits the requests whose first column
//! command comes before the earliest cycle a request of a later epoch can arrive ([`Dram::schedule`]'s
//! horizon): those no later arrival could overtake. The rest stay queued and are reordered with later
//! arrivals, so the queue holds what a backlogged controller's would. GPGPU-Sim's queue limit (64 requests
//! per channel) is not modelled: the queue is unbounded and an L2 miss never waits for room. The command
//! bus is not a resource here: GPGPU-Sim issues at most one row and one column command per DRAM cycle,
//! which the `ccd` ≥ `burst` spacing of column commands leaves room for in the configurations it ships.
//!
//! # Address mapping
//! The channel of an address is the L2 slice's channel (the caller passes it). Bank, row and column come
//! from GPGPU-Sim's `-gpgpu_mem_addr_mapping` string applied to the address with the channel bits taken
//! out (`dramid@S`: the channel is `(addr >> S) mod channels`, and the rest of the address is
//! `(addr >> S) / channels` shifted back above the low `S` bits — GPGPU-Sim's `addrdec_tlx`). The bank
//! group is the bank's low bits (`-dram_bnkgrp_indexing_policy 1`).
//!
//! Times are DRAM command cycles internally; arrival times are converted from core cycles rounding up, and
//! completion times back rounding up. Every arithmetic operation saturates; no input panics.

use crate::error::StructureError;

/// The parameters of banked DRAM, in DRAM command-clock cycles (GPGPU-Sim's `-gpgpu_dram_timing_opt`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DramTiming {
    /// The core clock in MHz (the cycles the rest of the model counts).
    pub core_mhz: u32,
    /// The DRAM command clock in MHz (GPGPU-Sim's fourth `-gpgpu_clock_domains` entry).
    pub dram_mhz: u32,
    /// Memory channels.
    pub channels: u32,
    /// Banks per channel (`nbk`).
    pub banks: u32,
    /// Bank groups per channel (`nbkgrp`); 1 for none.
    pub bank_groups: u32,
    /// Bytes one burst moves (GPGPU-Sim's `dram_atom_size`).
    pub burst_bytes: u32,
    /// Command cycles one burst holds the data bus (`BL / dram_data_command_freq_ratio`).
    pub burst_cycles: u32,
    /// Column to column, any bank (`CCD`).
    pub ccd: u32,
    /// Column to column in one bank group (`CCDL`).
    pub ccdl: u32,
    /// Activate to activate, any bank (`RRD`).
    pub rrd: u32,
    /// Activate to read (`RCD`).
    pub rcd: u32,
    /// Activate to precharge (`RAS`).
    pub ras: u32,
    /// Precharge to activate (`RP`).
    pub rp: u32,
    /// Activate to activate, one bank (`RC`).
    pub rc: u32,
    /// Read command to data (`CL`).
    pub cl: u32,
    /// Write command to data (`WL`).
    pub wl: u32,
    /// Last write data to a read command (`CDLR`).
    pub cdlr: u32,
    /// Write recovery before precharge (`WR`).
    pub wr: u32,
    /// Read to precharge in one bank group (`RTPL`).
    pub rtpl: u32,
    /// The address mapping.
    pub mapping: AddressMapping,
}

/// GPGPU-Sim's `-gpgpu_mem_addr_mapping`: the bit masks of bank, row and column in the address with the
/// channel bits removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AddressMapping {
    /// The lowest address bit of the channel number (`dramid@S`).
    pub channel_shift: u32,
    /// Bits of the bank number.
    pub bank: u64,
    /// Bits of the row number.
    pub row: u64,
    /// Bits of the column (including GPGPU-Sim's burst bits `S`).
    pub column: u64,
}

impl AddressMapping {
    /// Parses GPGPU-Sim's syntax: `dramid@S;` then 64 characters from bit 63 down to bit 0, each `B`
    /// (bank), `R` (row), `C` or `S` (column) or `0` (unused), with `.`, `|` and spaces ignored.
    /// `D` (explicit channel bits) is not accepted: the channel comes from the L2's slicing.
    pub fn parse(text: &str) -> Result<AddressMapping, StructureError> {
        let bad = |why: &str| StructureError::AddressMapping(format!("{why} in `{}`", excerpt(text)));
        let (shift, bits) = match text.split_once(';') {
            Some((head, bits)) => {
                let s = head.trim().strip_prefix("dramid@").ok_or_else(|| bad("expected `dramid@N;`"))?;
                (s.parse::<u32>().ok().filter(|&s| s < 40).ok_or_else(|| bad("`dramid@N` needs N < 40"))?, bits)
            }
            None => return Err(bad("expected `dramid@N;` before the bits")),
        };
        let mut m = AddressMapping { channel_shift: shift, bank: 0, row: 0, column: 0 };
        let mut bit = 64u32;
        for ch in bits.chars().filter(|c| !matches!(c, '.' | '|' | ' ')) {
            bit = bit.checked_sub(1).ok_or_else(|| bad("more than 64 bits"))?;
            match ch {
                'B' | 'b' => m.bank |= 1 << bit,
                'R' | 'r' => m.row |= 1 << bit,
                'C' | 'c' | 'S' | 's' => m.column |= 1 << bit,
                '0' => {}
                other => return Err(bad(&format!("unknown bit `{other}`"))),
            }
        }
        if bit != 0 {
            return Err(bad(&format!("{} bits instead of 64", 64 - bit)));
        }
        if m.bank == 0 || m.row == 0 {
            return Err(bad("no bank or no row bits"));
        }
        Ok(m)
    }

    /// Bank and row of byte address `addr` in a memory of `channels` channels.
    pub fn locate(&self, addr: u64, channels: u32) -> (u32, u64) {
        let s = self.channel_shift;
        let high = (addr >> s) / u64::from(channels.max(1));
        let rest = high.checked_shl(s).unwrap_or(0) | (addr & ((1u64 << s) - 1));
        (pext(rest, self.bank) as u32, pext(rest, self.row))
    }
}

fn excerpt(text: &str) -> String {
    text.chars().take(100).collect()
}

/// The bits of `x` selected by `mask`, packed from bit 0 up (GPGPU-Sim's `addrdec_packbits`).
fn pext(x: u64, mask: u64) -> u64 {
    let (mut out, mut m, mut k) = (0u64, mask, 0u32);
    while m != 0 {
        let b = m.trailing_zeros();
        out |= ((x >> b) & 1) << k;
        k += 1;
        m &= m - 1;
    }
    out
}

/// One DRAM request of a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DramRequest {
    /// Core cycle it reaches the memory controller.
    pub arrival: u64,
    /// Channel.
    pub channel: u32,
    /// Byte address (of its first sector).
    pub addr: u64,
    /// Bytes moved.
    pub bytes: u32,
    /// A write (a write-back), else a read.
    pub write: bool,
}

/// Counters of banked DRAM.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DramStats {
    /// Requests that found their row open.
    pub row_hits: u64,
    /// Requests that found their bank with no row open (activate only).
    pub row_misses: u64,
    /// Requests that found another row open (precharge and activate): bank conflicts.
    pub row_conflicts: u64,
    /// Activate commands.
    pub activates: u64,
    /// Precharge commands.
    pub precharges: u64,
    /// Read bursts (column read commands).
    pub read_bursts: u64,
    /// Write bursts (column write commands).
    pub write_bursts: u64,
    /// DRAM command cycles the data buses carried data, all channels together.
    pub data_bus_cycles: u64,
    /// DRAM command cycles from each request's arrival to its first column command, summed (queueing and
    /// row activation).
    pub wait_cycles: u64,
    /// DRAM command cycles of the launch × channels: the data buses' capacity, the denominator of
    /// [`DramStats::bus_utilization`].
    pub channel_cycles: u64,
}

impl DramStats {
    /// Adds `o`'s counts (every field named, so a new counter must say how it combines).
    pub fn merge(&mut self, o: &DramStats) {
        let DramStats {
            row_hits,
            row_misses,
            row_conflicts,
            activates,
            precharges,
            read_bursts,
            write_bursts,
            data_bus_cycles,
            wait_cycles,
            channel_cycles,
        } = o;
        self.row_hits += row_hits;
        self.row_misses += row_misses;
        self.row_conflicts += row_conflicts;
        self.activates += activates;
        self.precharges += precharges;
        self.read_bursts += read_bursts;
        self.write_bursts += write_bursts;
        self.data_bus_cycles += data_bus_cycles;
        self.wait_cycles += wait_cycles;
        self.channel_cycles += channel_cycles;
    }

    /// Requests served (row hits, misses and conflicts).
    pub fn requests(&self) -> u64 {
        self.row_hits + self.row_misses + self.row_conflicts
    }

    /// Fraction of requests that found their row open (0 with none).
    pub fn row_hit_rate(&self) -> f64 {
        ratio(self.row_hits, self.requests())
    }

    /// Fraction of the data buses' cycles that carried data (GPGPU-Sim's `bw_util`; 0 with none).
    pub fn bus_utilization(&self) -> f64 {
        ratio(self.data_bus_cycles, self.channel_cycles)
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

#[derive(Clone, Debug, Default)]
struct Bank {
    /// The open row.
    open: Option<u64>,
    /// Last activate.
    act: Option<u64>,
    /// Earliest activate after the last precharge.
    precharged: u64,
    /// Earliest precharge allowed by the last read or write.
    pre_ok: u64,
    /// When the bank can take its next request (its last column command).
    ready: u64,
}

#[derive(Clone, Debug, Default)]
struct Channel {
    banks: Vec<Bank>,
    /// Last column command per bank group.
    group_col: Vec<Option<u64>>,
    /// Earliest precharge per bank group (after a read, `rtpl`).
    group_pre_ok: Vec<u64>,
    last_col: Option<u64>,
    last_read: Option<u64>,
    last_write: Option<u64>,
    last_act: Option<u64>,
    /// When the data bus is free.
    bus_free: u64,
}

/// A request waiting in a bank's queue.
#[derive(Clone, Copy, Debug)]
struct Queued {
    /// DRAM cycle it arrived.
    arrival: u64,
    /// The caller's identifier.
    id: u64,
    row: u64,
    bytes: u32,
    write: bool,
}

/// The commands one request needs, planned against the current state.
#[derive(Clone, Copy, Debug)]
struct Plan {
    precharge: Option<u64>,
    activate: Option<u64>,
    /// First and last column command.
    first_col: u64,
    last_col: u64,
    /// End of its last data burst.
    data_end: u64,
}

/// Banked DRAM: channels of banks with row buffers. See the [module documentation](self).
#[derive(Clone, Debug)]
pub struct Dram {
    t: DramTiming,
    channels: Vec<Channel>,
    /// Per channel and bank, the requests waiting, in arrival order.
    queues: Vec<Vec<Vec<Queued>>>,
    /// Requests waiting in all queues.
    queued: usize,
    stats: DramStats,
}

fn after(t: Option<u64>, d: u32) -> u64 {
    t.map_or(0, |t| t.saturating_add(u64::from(d)))
}

impl Dram {
    /// Checks the parameters: clocks, channels, banks (a power of two, at most 64), bank groups dividing
    /// the banks, a nonzero burst.
    pub fn check(t: &DramTiming) -> Result<(), StructureError> {
        let bad = |why: String| Err(StructureError::DramTiming(why));
        if t.core_mhz == 0 || t.dram_mhz == 0 {
            return bad("the core and DRAM clocks must be nonzero".into());
        }
        if t.channels == 0 || t.channels > 256 {
            return bad(format!("{} channels (1 to 256)", t.channels));
        }
        if !t.banks.is_power_of_two() || t.banks > 64 {
            return bad(format!("{} banks (a power of two, at most 64)", t.banks));
        }
        if t.bank_groups == 0 || !t.bank_groups.is_power_of_two() || t.bank_groups > t.banks {
            return bad(format!("{} bank groups for {} banks (a power of two dividing them)", t.bank_groups, t.banks));
        }
        if t.burst_bytes == 0 || t.burst_cycles == 0 {
            return bad("burst_bytes and burst_cycles must be nonzero".into());
        }
        let bank_bits = t.mapping.bank.count_ones();
        if (1u64 << bank_bits) < u64::from(t.banks) {
            return bad(format!("the address mapping has {bank_bits} bank bits for {} banks", t.banks));
        }
        Ok(())
    }

    /// Builds idle DRAM (every bank precharged). Errors unless [`Dram::check`] passes.
    pub fn new(t: DramTiming) -> Result<Dram, StructureError> {
        Dram::check(&t)?;
        let channel = Channel {
            banks: vec![Bank::default(); t.banks as usize],
            group_col: vec![None; t.bank_groups as usize],
            group_pre_ok: vec![0; t.bank_groups as usize],
            ..Channel::default()
        };
        let channels = vec![channel; t.channels as usize];
        let queues = vec![vec![Vec::new(); t.banks as usize]; t.channels as usize];
        Ok(Dram { t, channels, queues, queued: 0, stats: DramStats::default() })
    }

    /// The counters so far.
    pub fn stats(&self) -> &DramStats {
        &self.stats
    }

    /// The parameters.
    pub fn timing(&self) -> &DramTiming {
        &self.t
    }

    /// Core cycle → the first DRAM cycle at or after it.
    fn to_dram(&self, core: u64) -> u64 {
        let v = u128::from(core) * u128::from(self.t.dram_mhz);
        u64::try_from(v.div_ceil(u128::from(self.t.core_mhz))).unwrap_or(u64::MAX)
    }

    /// DRAM cycle → the first core cycle at or after it.
    fn to_core(&self, dram: u64) -> u64 {
        let v = u128::from(dram) * u128::from(self.t.core_mhz);
        u64::try_from(v.div_ceil(u128::from(self.t.dram_mhz))).unwrap_or(u64::MAX)
    }

    /// Queues request `r` under the caller's identifier `id` (unique while queued).
    pub fn enqueue(&mut self, id: u64, r: &DramRequest) {
        let (bank, row) = self.t.mapping.locate(r.addr, self.t.channels);
        let ch = (r.channel as usize).min(self.channels.len() - 1);
        let q = Queued { arrival: self.to_dram(r.arrival), id, row, bytes: r.bytes, write: r.write };
        let queue = &mut self.queues[ch][bank as usize % self.t.banks as usize];
        // Keep each bank's queue in arrival order (then identifier).
        let at = queue.partition_point(|x| (x.arrival, x.id) <= (q.arrival, q.id));
        queue.insert(at, q);
        self.queued += 1;
    }

    /// Requests waiting in the queues.
    pub fn queued(&self) -> usize {
        self.queued
    }

    /// Schedules, per channel and by FR-FCFS (see the [module documentation](self)), every queued request
    /// whose first column command comes before core cycle `horizon` (all of them with `None`): requests
    /// arriving later cannot be served before those. Appends (identifier, core cycle its last data burst
    /// ends) to `done`, in scheduling order.
    pub fn schedule(&mut self, horizon: Option<u64>, done: &mut Vec<(u64, u64)>) {
        let limit = horizon.map(|h| self.to_dram(h));
        for ch in 0..self.channels.len() {
            while let Some((bank, pos, plan)) = self.pick(ch) {
                if limit.is_some_and(|l| plan.first_col >= l) {
                    break;
                }
                let q = self.queues[ch][bank].remove(pos);
                self.queued -= 1;
                self.commit(ch, bank, &q, plan);
                done.push((q.id, self.to_core(plan.data_end)));
            }
        }
    }

    /// FR-FCFS: the next (bank, position in its queue, plan) of channel `ch` to commit, or `None` when
    /// its queues are empty.
    fn pick(&self, ch: usize) -> Option<(usize, usize, Plan)> {
        let c = &self.channels[ch];
        // (first column command, arrival, identifier, bank): the order requests are committed in.
        type Key = (u64, u64, u64, usize);
        let mut best: Option<(Key, usize, usize, Plan)> = None;
        for (b, q) in self.queues[ch].iter().enumerate() {
            let Some(first) = q.first() else { continue };
            // The oldest request's plan; a request to the open row that arrives before the oldest could
            // close the row (its precharge, or its column command on a row hit) goes first.
            let oldest = self.plan(ch, b, first);
            let decide = oldest.precharge.unwrap_or(oldest.first_col).max(first.arrival).max(c.banks[b].ready);
            let hit = q.iter().take_while(|x| x.arrival <= decide).position(|x| c.banks[b].open == Some(x.row));
            let pos = hit.unwrap_or(0);
            let plan = if pos == 0 { oldest } else { self.plan(ch, b, &q[pos]) };
            let key = (plan.first_col, q[pos].arrival, q[pos].id, b);
            if best.as_ref().is_none_or(|(k, ..)| key < *k) {
                best = Some((key, b, pos, plan));
            }
        }
        best.map(|(_, b, pos, plan)| (b, pos, plan))
    }

    fn group(&self, bank: usize) -> usize {
        bank & (self.t.bank_groups as usize - 1)
    }

    /// The commands queued request `r` of `bank` needs now.
    fn plan(&self, ch: usize, bank: usize, r: &Queued) -> Plan {
        let (row, arrival) = (r.row, r.arrival);
        let t = &self.t;
        let c = &self.channels[ch];
        let b = &c.banks[bank];
        let g = self.group(bank);
        let start = arrival.max(b.ready);
        let (mut precharge, mut activate) = (None, None);
        let mut col = start;
        if b.open != Some(row) {
            let mut act_at = start.max(b.precharged).max(after(b.act, t.rc)).max(after(c.last_act, t.rrd));
            if b.open.is_some() {
                let pre = start.max(after(b.act, t.ras)).max(b.pre_ok).max(c.group_pre_ok[g]);
                precharge = Some(pre);
                act_at = act_at.max(pre.saturating_add(u64::from(t.rp)));
            }
            activate = Some(act_at);
            let rcd = if r.write { t.rcd.saturating_sub(t.wl + 1) } else { t.rcd };
            col = act_at.saturating_add(u64::from(rcd));
        }
        let bursts = r.bytes.div_ceil(t.burst_bytes).max(1);
        let (lat, turnaround) = if r.write {
            (t.wl, after(c.last_read, (t.cl + t.burst_cycles + 2).saturating_sub(t.wl)))
        } else {
            (t.cl, after(c.last_write, t.wl + t.burst_cycles + t.cdlr))
        };
        let (mut first, mut last, mut bus) = (None, col, c.bus_free);
        let mut group_col = c.group_col[g];
        let mut chan_col = c.last_col;
        for _ in 0..bursts {
            let at = col
                .max(after(chan_col, t.ccd))
                .max(after(group_col, t.ccdl))
                .max(turnaround)
                .max(bus.saturating_sub(u64::from(lat)));
            first.get_or_insert(at);
            last = at;
            bus = at.saturating_add(u64::from(lat + t.burst_cycles));
            (chan_col, group_col, col) = (Some(at), Some(at), at);
        }
        Plan { precharge, activate, first_col: first.unwrap_or(col), last_col: last, data_end: bus }
    }

    fn commit(&mut self, ch: usize, bank: usize, r: &Queued, p: Plan) {
        let (row, arrival) = (r.row, r.arrival);
        let t = self.t;
        let g = self.group(bank);
        let bursts = u64::from(r.bytes.div_ceil(t.burst_bytes).max(1));
        let s = &mut self.stats;
        match (p.precharge, p.activate) {
            (None, None) => s.row_hits += 1,
            (None, Some(_)) => s.row_misses += 1,
            _ => s.row_conflicts += 1,
        }
        s.precharges += u64::from(p.precharge.is_some());
        s.activates += u64::from(p.activate.is_some());
        if r.write {
            s.write_bursts += bursts;
        } else {
            s.read_bursts += bursts;
        }
        s.data_bus_cycles += bursts * u64::from(t.burst_cycles);
        s.wait_cycles += p.first_col.saturating_sub(arrival);
        let c = &mut self.channels[ch];
        if let Some(a) = p.activate {
            c.last_act = Some(a);
            let b = &mut c.banks[bank];
            b.act = Some(a);
            b.open = Some(row);
            if let Some(pre) = p.precharge {
                b.precharged = pre.saturating_add(u64::from(t.rp));
            }
        }
        c.last_col = Some(p.last_col);
        c.group_col[g] = Some(p.last_col);
        c.bus_free = p.data_end;
        let b = &mut c.banks[bank];
        b.ready = p.last_col;
        if r.write {
            c.last_write = Some(p.last_col);
            b.pre_ok = b.pre_ok.max(p.last_col.saturating_add(u64::from(t.wl + t.burst_cycles + t.wr)));
        } else {
            c.last_read = Some(p.last_col);
            b.pre_ok = b.pre_ok.max(p.last_col.saturating_add(u64::from(t.burst_cycles)));
            c.group_pre_ok[g] = c.group_pre_ok[g].max(p.last_col.saturating_add(u64::from(t.rtpl)));
        }
    }

    /// DRAM command cycles of `core_cycles` core cycles (for the bandwidth utilisation of a launch).
    pub fn dram_cycles(&self, core_cycles: u64) -> u64 {
        self.to_dram(core_cycles)
    }
}

/// The GTX 480 preset's DRAM (`DramBanks::gtx480`) on one channel with the core at the DRAM's clock: the
/// tests' timing, whose cycles read directly as DRAM cycles.
#[cfg(test)]
pub(crate) fn equal_clock_gtx480() -> DramTiming {
    let gpu = crate::GpuConfig::gtx480();
    let banks = crate::config::DramBanks::gtx480();
    match banks.timing(&gpu) {
        Ok(t) => DramTiming { core_mhz: 1000, dram_mhz: 1000, channels: 1, ..t },
        Err(e) => panic!("the preset's mapping parses: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Equal clocks, one channel, GTX 480's timing.
    fn timing() -> DramTiming {
        equal_clock_gtx480()
    }

    fn dram() -> Dram {
        match Dram::new(timing()) {
            Ok(d) => d,
            Err(e) => panic!("{e}"),
        }
    }

    /// Queues `reqs` (identifiers 0, 1, ...) and schedules them all; their completion cycles in order.
    fn run(d: &mut Dram, reqs: &[DramRequest]) -> Vec<u64> {
        for (i, r) in reqs.iter().enumerate() {
            d.enqueue(i as u64, r);
        }
        let mut done = Vec::new();
        d.schedule(None, &mut done);
        done.sort_unstable();
        assert_eq!(done.len(), reqs.len());
        done.into_iter().map(|(_, t)| t).collect()
    }

    fn read(arrival: u64, addr: u64) -> DramRequest {
        DramRequest { arrival, channel: 0, addr, bytes: 32, write: false }
    }

    #[test]
    fn mapping_parses_gpgpusims_string() {
        let m = timing().mapping;
        assert_eq!(m.channel_shift, 8);
        // BBBCCCCB.CCSSSSSS: bank bits 15..13 and 8, column bits 12..9 and 7..0.
        assert_eq!(m.bank, 0b1110_0001_0000_0000);
        assert_eq!(m.column, 0b0001_1110_1111_1111);
        assert_eq!(m.row, 0xFFF_0000);
        // One channel: address 0x100 has bank bit 8 set -> bank 1.
        assert_eq!(m.locate(0x100, 1), (1, 0));
        assert_eq!(m.locate(0x1_0000, 1), (0, 1));
        // Six channels: (addr >> 8) / 6 above the low 8 bits.
        assert_eq!(m.locate(6 << 8, 6), (1, 0));
    }

    #[test]
    fn bad_mappings_are_refused_with_the_reason() {
        for (text, why) in [
            ("00RR", "dramid"),
            ("dramid@8;RRRR", "4 bits instead of 64"),
            ("dramid@8;X0000000.00000000.00000000.00000000.0000RRRR.RRRRRRRR.BBBCCCCB.CCSSSSSS", "unknown bit"),
        ] {
            match AddressMapping::parse(text) {
                Err(e) => assert!(e.to_string().contains(why), "{e}"),
                Ok(m) => panic!("accepted {text}: {m:?}"),
            }
        }
    }

    #[test]
    fn row_miss_then_hit_then_conflict() {
        let mut d = dram();
        // Idle bank: activate at 0, read at rcd = 12, data 12 + cl 12 + burst 2 = 26.
        assert_eq!(run(&mut d, &[read(0, 0)]), vec![26]);
        // Same row, later: a hit, column at 100, data at 114.
        assert_eq!(run(&mut d, &[read(100, 32)]), vec![114]);
        // Another row of bank 0: precharge at 200 (ras long past), activate at 212, read at 224, data 238.
        assert_eq!(run(&mut d, &[read(200, 0x1_0000)]), vec![238]);
        let s = d.stats();
        assert_eq!((s.row_misses, s.row_hits, s.row_conflicts), (1, 1, 1));
        assert_eq!((s.activates, s.precharges, s.read_bursts), (2, 1, 3));
    }

    #[test]
    fn frfcfs_serves_a_younger_row_hit_before_an_older_conflict() {
        let mut d = dram();
        assert_eq!(run(&mut d, &[read(0, 0)]), vec![26]);
        // At 100: first a request to another row of bank 0, then one to the open row. FR-FCFS serves the
        // hit first (column at 100, data 114); the conflict then precharges at 102 (the read's burst of 2
        // and rtpl 2 after its column), activates at 114, reads at 126, data 140.
        let done = run(&mut d, &[read(100, 0x1_0000), read(100, 64)]);
        assert_eq!(done, vec![140, 114]);
        assert_eq!(d.stats().row_hits, 1);
    }

    #[test]
    fn activates_of_two_banks_are_rrd_apart_and_bursts_share_the_bus() {
        let mut d = dram();
        // Banks 0 and 1 (bit 8), both idle: activates at 0 and 6, reads at 12 and 18.
        let done = run(&mut d, &[read(0, 0), read(0, 0x100)]);
        assert_eq!(done, vec![26, 32]);
        // A 128-byte write to an open row takes two bursts: ccdl apart within the group.
        let w = DramRequest { arrival: 100, channel: 0, addr: 0, bytes: 128, write: true };
        // Write after read: rtw = cl + burst + 2 - wl = 12 (long past); columns at 100 and 103 (ccdl 3);
        // data ends 103 + wl 4 + 2 = 109.
        assert_eq!(run(&mut d, &[w]), vec![109]);
        assert_eq!(d.stats().write_bursts, 2);
    }

    #[test]
    fn a_horizon_keeps_requests_a_later_arrival_could_overtake() {
        let mut d = dram();
        d.enqueue(0, &read(0, 0));
        let mut done = Vec::new();
        // Its column command (12) is not before 10: it stays queued.
        d.schedule(Some(10), &mut done);
        assert!(done.is_empty());
        assert_eq!(d.queued(), 1);
        d.schedule(Some(13), &mut done);
        assert_eq!(done, vec![(0, 26)]);
        assert_eq!(d.queued(), 0);
    }

    #[test]
    fn clocks_convert_rounding_up() {
        let mut t = timing();
        t.core_mhz = 700;
        t.dram_mhz = 924;
        let mut d = Dram::new(t).unwrap_or_else(|e| panic!("{e}"));
        // Arrival core 7 -> DRAM ceil(7 * 924 / 700) = 10; data at 10 + 26 = 36 -> core ceil(36 * 700 / 924) = 28.
        assert_eq!(run(&mut d, &[read(7, 0)]), vec![28]);
        assert_eq!(d.dram_cycles(700), 924);
    }

    #[test]
    fn bad_parameters_are_refused() {
        for f in [
            |t: &mut DramTiming| t.banks = 12,
            |t: &mut DramTiming| t.bank_groups = 32,
            |t: &mut DramTiming| t.dram_mhz = 0,
            |t: &mut DramTiming| t.burst_bytes = 0,
        ] {
            let mut t = timing();
            f(&mut t);
            assert!(Dram::new(t).is_err());
        }
    }
}
