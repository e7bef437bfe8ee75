//! Importing a GPGPU-Sim `gpgpusim.config`: each `-gpgpu_*` (and newer short-named) option the timing model
//! has an equivalent for, set on the `gtx480` preset, every other option listed as not modelled.
//!
//! A configuration file is options (`-name`) each followed by its values, `#` comments and double-quoted
//! values that may span lines; a later option replaces an earlier one, as in GPGPU-Sim. The equivalents
//! ([`import_gpgpusim`]) follow GPGPU-Sim 4.0's option meanings; where the model's parameter is a sum of
//! GPGPU-Sim's (the L2 hit latency is the ROP latency plus an interconnect trip; the presets fit both
//! memory latencies to GPGPU-Sim's cycles, `docs/validation.md`), the imported value is GPGPU-Sim's part
//! and [`Import::notes`] says so.

use crate::config::{GpuConfig, SchedulerPolicy};
use crate::memsys::SetIndex;
use std::collections::BTreeMap;

/// What an import found.
#[derive(Clone, Debug, PartialEq)]
pub struct Import {
    /// The configuration: `gtx480` with every mapped option applied (named by the caller).
    pub config: GpuConfig,
    /// Each option that was applied, with the keys it set.
    pub mapped: Vec<(String, &'static str)>,
    /// Options the model has no equivalent for (ignored), in file order.
    pub not_modelled: Vec<String>,
    /// Where an imported value means less than the model's parameter of that name.
    pub notes: Vec<String>,
}

/// A value the importer cannot read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {option} {value}: {why}")]
pub struct ImportError {
    /// The option's line (1-based).
    pub line: usize,
    /// The option.
    pub option: String,
    /// Its value as written.
    pub value: String,
    /// What is wrong with it.
    pub why: String,
}

/// Options by name (without the leading `-`): their values and line.
type Options = BTreeMap<String, (Vec<String>, usize)>;

/// The options of a file, and their names in file order; the last occurrence of an option wins.
fn options(text: &str) -> (Options, Vec<String>) {
    let mut map = Options::new();
    let mut order = Vec::new();
    let mut current: Option<String> = None;
    let (mut in_quote, mut token, mut token_line) = (false, String::new(), 1usize);
    let mut line = 1usize;
    let mut chars = text.chars().peekable();
    let mut push = |token: &mut String, at: usize, current: &mut Option<String>, quoted: bool| {
        if token.is_empty() && !quoted {
            return;
        }
        let t = std::mem::take(token);
        let is_option = !quoted && t.starts_with('-') && t[1..].starts_with(|c: char| c.is_ascii_alphabetic());
        if is_option {
            let name = t[1..].to_string();
            if !map.contains_key(&name) {
                order.push(name.clone());
            }
            map.insert(name.clone(), (Vec::new(), at));
            *current = Some(name);
        } else if let Some((values, _)) = current.as_ref().and_then(|c| map.get_mut(c)) {
            values.push(t);
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '"' if in_quote => {
                in_quote = false;
                push(&mut token, token_line, &mut current, true);
            }
            '"' => {
                in_quote = true;
                token_line = line;
            }
            '#' if !in_quote => {
                push(&mut token, token_line, &mut current, false);
                while chars.peek().is_some_and(|&n| n != '\n') {
                    chars.next();
                }
            }
            c if c.is_whitespace() && !in_quote => {
                push(&mut token, token_line, &mut current, false);
                if c == '\n' {
                    line += 1;
                }
            }
            c => {
                if c == '\n' {
                    line += 1;
                }
                if token.is_empty() {
                    token_line = line;
                }
                if !(in_quote && c.is_whitespace()) {
                    token.push(c);
                }
            }
        }
    }
    push(&mut token, token_line, &mut current, false);
    (map, order)
}

/// Reads options one at a time, recording what was used.
struct Reader {
    map: Options,
    used: Vec<(String, &'static str)>,
}

impl Reader {
    /// The values of the first of `names` present (GPGPU-Sim's long and short spellings).
    fn get(&mut self, names: &[&str], keys: &'static str) -> Option<(String, usize, String)> {
        let name = names.iter().find(|n| self.map.contains_key(**n))?;
        let (values, line) = self.map.get(*name)?;
        self.used.push((format!("-{name}"), keys));
        Some((values.join(" "), *line, format!("-{name}")))
    }

    /// The first value of an option as an integer.
    fn int(&mut self, names: &[&str], keys: &'static str) -> Result<Option<u64>, ImportError> {
        let Some((v, line, option)) = self.get(names, keys) else { return Ok(None) };
        let first = v.split([' ', ':', ',']).next().unwrap_or("");
        number(first).map(Some).ok_or(ImportError { line, option, value: v, why: "not a number".into() })
    }

    /// A list of integers `a,b,c`.
    fn ints(&mut self, names: &[&str], keys: &'static str) -> Result<Option<Vec<u64>>, ImportError> {
        let Some((v, line, option)) = self.get(names, keys) else { return Ok(None) };
        let parsed: Option<Vec<u64>> = v.split([',', ':']).map(|x| number(x.trim())).collect();
        parsed.map(Some).ok_or(ImportError { line, option, value: v, why: "not a list of numbers".into() })
    }
}

/// A count for a 32-bit parameter: a larger one becomes `u32::MAX`, which every range refuses, so that
/// the configuration's validation names it instead of a truncated value passing.
fn clamp(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// A non-negative number as GPGPU-Sim writes them (`700.0` for a clock), truncated to an integer.
fn number(text: &str) -> Option<u64> {
    text.parse::<f64>().ok().filter(|f| f.is_finite() && *f >= 0.0 && *f < 1e18).map(|f| f as u64)
}

/// A cache option `[N|S:]sets:line:ways,...[,A|S|T:mshrs:merge...]`: (bytes, line, ways, hashed, mshrs).
type CacheSpec = (u64, u32, u32, bool, Option<(u32, u32)>);

fn cache(v: &str) -> Option<CacheSpec> {
    if v.trim() == "none" {
        return Some((0, 128, 1, false, None));
    }
    let parts: Vec<&str> = v.split(',').collect();
    let geo: Vec<&str> = parts.first()?.split(':').collect();
    let geo = if geo.first().is_some_and(|g| g.parse::<u64>().is_err()) { &geo[1..] } else { &geo[..] };
    let [sets, line, ways] = [geo.first()?, geo.get(1)?, geo.get(2)?].map(|x| x.parse::<u64>().ok());
    let (sets, line, ways) = (sets?, line?, ways?);
    let hashed = parts.get(1).is_some_and(|p| p.split(':').nth(4) == Some("H"));
    let mshr = parts.get(2).and_then(|p| {
        let f: Vec<&str> = p.split(':').collect();
        Some((f.get(1)?.parse().ok()?, f.get(2)?.parse().ok()?))
    });
    Some((
        sets.checked_mul(line)?.checked_mul(ways)?,
        u32::try_from(line).ok()?,
        u32::try_from(ways).ok()?,
        hashed,
        mshr,
    ))
}

/// Imports GPGPU-Sim configuration `text` onto the `gtx480` preset, named `name`.
pub fn import_gpgpusim(text: &str, name: &str) -> Result<Import, ImportError> {
    let (map, order) = options(text);
    let mut r = Reader { map, used: Vec::new() };
    let mut c = GpuConfig::gtx480();
    c.name = name.to_string();
    let mut notes = Vec::new();
    sm_options(&mut r, &mut c)?;
    unit_options(&mut r, &mut c)?;
    memory_options(&mut r, &mut c, &mut notes)?;
    let used: std::collections::BTreeSet<String> = r.used.iter().map(|(o, _)| o[1..].to_string()).collect();
    let not_modelled = order.into_iter().filter(|o| !used.contains(o)).map(|o| format!("-{o}")).collect();
    Ok(Import { config: c, mapped: r.used, not_modelled, notes })
}

fn bad(r: &mut Reader, names: &[&str], why: &str) -> ImportError {
    let (value, line, option) = r.get(names, "").unwrap_or_default();
    r.used.pop();
    ImportError { line, option, value, why: why.into() }
}

fn sm_options(r: &mut Reader, c: &mut GpuConfig) -> Result<(), ImportError> {
    let clusters = r.int(&["gpgpu_n_clusters"], "num_sms")?;
    let per = r.int(&["gpgpu_n_cores_per_cluster"], "num_sms")?.unwrap_or(1);
    if let Some(n) = clusters.or(r.int(&["gpgpu_n_shader"], "num_sms")?) {
        c.num_sms = clamp(n.saturating_mul(per));
    }
    if let Some(mhz) = r.int(&["gpgpu_clock_domains"], "clock_mhz")? {
        c.clock_mhz = clamp(mhz);
    }
    if let Some(p) = r.ints(&["gpgpu_shader_core_pipeline"], "sm.max_threads, warp_size, sm.max_warps")? {
        let (&threads, &warp) = (p.first().unwrap_or(&0), p.get(1).unwrap_or(&32));
        if warp == 0 {
            return Err(bad(r, &["gpgpu_shader_core_pipeline"], "a warp of 0 threads"));
        }
        (c.sm.max_threads, c.warp_size, c.sm.max_warps) = (clamp(threads), clamp(warp), clamp(threads / warp));
    }
    let set = |v: Option<u64>, field: &mut u32| v.into_iter().for_each(|v| *field = clamp(v));
    set(r.int(&["gpgpu_shader_registers"], "sm.registers")?, &mut c.sm.registers);
    set(r.int(&["gpgpu_shader_cta"], "sm.max_ctas")?, &mut c.sm.max_ctas);
    set(r.int(&["gpgpu_shmem_size"], "sm.shared_memory")?, &mut c.sm.shared_memory);
    set(r.int(&["gpgpu_num_sched_per_core"], "sm.schedulers")?, &mut c.sm.schedulers);
    set(r.int(&["gpgpu_shmem_num_banks"], "shared.banks")?, &mut c.shared.banks);
    if let Some((v, ..)) = r.get(&["gpgpu_scheduler"], "sm.scheduler, sm.two_level_active") {
        c.sm.scheduler = match v.split(':').next().unwrap_or("") {
            "gto" => SchedulerPolicy::Gto,
            "lrr" => SchedulerPolicy::Lrr,
            "two_level_active" => {
                c.sm.two_level_active = v.split(':').nth(1).and_then(|n| n.parse().ok()).unwrap_or(8);
                SchedulerPolicy::TwoLevel
            }
            _ => {
                return Err(bad(
                    r,
                    &["gpgpu_scheduler"],
                    "a scheduler the model does not have (gto, lrr, two_level_active)",
                ))
            }
        };
    }
    if let Some(l) = r.int(&["smem_latency", "gpgpu_smem_latency"], "latency.shared")? {
        c.latency.shared = l;
    }
    if let Some(k) = r.int(&["gpgpu_kernel_launch_latency"], "launch.kernel_latency")? {
        c.launch.kernel_latency = k;
    }
    Ok(())
}

fn unit_options(r: &mut Reader, c: &mut GpuConfig) -> Result<(), ImportError> {
    let mut units = if c.sm.units.len() >= 5 { c.sm.units.clone() } else { vec![1, 0, 1, 1, 1] };
    if let Some(n) = r.int(&["gpgpu_num_sp_units"], "sm.units")? {
        units[0] = clamp(n);
    }
    if let Some(n) = r.int(&["gpgpu_num_dp_units"], "sm.units, opcode.dp_on_sfu")? {
        units[2] = clamp(n);
        if let Some(o) = c.opcode.as_mut() {
            o.dp_on_sfu = n == 0;
        }
    }
    if let Some(n) = r.int(&["gpgpu_num_sfu_units"], "sm.units")? {
        units[3] = clamp(n);
    }
    if let Some(n) = r.int(&["gpgpu_num_tensor_core_units"], "sm.units")? {
        units.resize(6, 0);
        units[5] = clamp(n);
    }
    c.sm.units = units;
    let Some(o) = c.opcode.as_mut() else { return Ok(()) };
    let mut table = |names: &[&str], keys: &'static str, into: &mut [u64]| -> Result<(), ImportError> {
        if let Some(v) = r.ints(names, keys)? {
            for (slot, x) in into.iter_mut().zip(v) {
                *slot = x;
            }
        }
        Ok(())
    };
    table(&["ptx_opcode_latency_int"], "opcode.int_latency", &mut o.int_latency)?;
    table(&["ptx_opcode_initiation_int"], "opcode.int_initiation", &mut o.int_initiation)?;
    table(&["ptx_opcode_latency_fp"], "opcode.fp_latency", &mut o.fp_latency)?;
    table(&["ptx_opcode_initiation_fp"], "opcode.fp_initiation", &mut o.fp_initiation)?;
    table(&["ptx_opcode_latency_dp"], "opcode.dp_latency", &mut o.dp_latency)?;
    table(&["ptx_opcode_initiation_dp"], "opcode.dp_initiation", &mut o.dp_initiation)?;
    table(&["ptx_opcode_latency_sfu"], "opcode.sfu_latency", std::slice::from_mut(&mut o.sfu_latency))?;
    table(&["ptx_opcode_initiation_sfu"], "opcode.sfu_initiation", std::slice::from_mut(&mut o.sfu_initiation))?;
    // GPGPU-Sim's option is spelled `-ptx_opcode_latency_tesnor` (sic); either spelling is read.
    let tensor = ["ptx_opcode_latency_tesnor", "ptx_opcode_latency_tensor"];
    table(&tensor, "opcode.tensor_latency", std::slice::from_mut(&mut o.tensor_latency))?;
    let tensor = ["ptx_opcode_initiation_tensor"];
    table(&tensor, "opcode.tensor_initiation", std::slice::from_mut(&mut o.tensor_initiation))?;
    Ok(())
}

fn memory_options(r: &mut Reader, c: &mut GpuConfig, notes: &mut Vec<String>) -> Result<(), ImportError> {
    if let Some((v, ..)) =
        r.get(&["gpgpu_cache:dl1"], "l1.size, l1.line, l1.ways, l1.set_index, l1.mshrs, l1.mshr_merge")
    {
        let Some((size, line, ways, hashed, mshr)) = cache(&v) else {
            return Err(bad(r, &["gpgpu_cache:dl1"], "not a cache configuration"));
        };
        (c.l1.size, c.l1.line, c.l1.ways) = (size, line, ways);
        c.l1.set_index = if hashed { SetIndex::FermiHash } else { SetIndex::Linear };
        // Cache type `N` (normal): a miss fills the whole line; `S` (sectored): only the sectors touched.
        c.l1.whole_line_fills = v.trim_start().starts_with('N');
        if let Some((m, merge)) = mshr {
            (c.l1.mshrs, c.l1.mshr_merge) = (m, merge);
        }
    }
    if r.get(&["gpgpu_no_dl1"], "l1.size").is_some() {
        c.l1.size = 0;
    }
    if let Some(l) = r.int(&["l1_latency", "gpgpu_l1_latency"], "l1.hit_latency")? {
        c.l1.hit_latency = l;
    }
    let channels = r.int(&["gpgpu_n_mem"], "l2.channels")?.unwrap_or(u64::from(c.l2.channels.max(1)));
    c.l2.channels = clamp(channels);
    let subs = r.int(&["gpgpu_n_sub_partition_per_mchannel"], "l2.slices_per_channel")?.unwrap_or(1);
    c.l2.slices_per_channel = clamp(subs);
    if let Some((v, ..)) = r.get(&["gpgpu_cache:dl2"], "l2.size, l2.line, l2.ways") {
        let Some((slice, line, ways, ..)) = cache(&v) else {
            return Err(bad(r, &["gpgpu_cache:dl2"], "not a cache configuration"));
        };
        // One cache of all slices: a power-of-two number of sets, the slices' odd factor in the ways.
        let slices = channels.saturating_mul(subs).max(1);
        let odd = slices >> slices.trailing_zeros();
        (c.l2.size, c.l2.line, c.l2.ways) = (slice.saturating_mul(slices), line, ways.saturating_mul(clamp(odd)));
    }
    if let Some(l) = r.int(&["rop_latency", "gpgpu_l2_rop_latency"], "l2.hit_latency")? {
        c.l2.hit_latency = l;
        notes.push(format!("l2.hit_latency = {l} is GPGPU-Sim's ROP latency alone: the presets add the interconnect's round trip and fit it to GPGPU-Sim's cycles (docs/validation.md)"));
    }
    if let Some(l) = r.int(&["dram_latency"], "dram.latency")? {
        c.dram.latency = l;
        notes.push(format!("dram.latency = {l} is GPGPU-Sim's minimum DRAM latency: the presets fit the whole miss path to GPGPU-Sim's cycles"));
    }
    dram_bandwidth(r, c, channels)?;
    dram_banks(r, c)?;
    if let Some(v) = r.int(&["perf_sim_memcpy", "gpgpu_perf_sim_memcpy"], "l2.preload")? {
        c.l2.preload = v != 0;
    }
    if let Some(v) = r.int(&["memory_partition_indexing", "gpgpu_memory_partition_indexing"], "l2.slice_hash")? {
        c.l2.slice_hash = v != 0;
    }
    if r.int(&["gpgpu_perfect_inst_const_cache"], "frontend.icache_size, constant_cache.size")?.is_some_and(|v| v != 0)
    {
        (c.frontend.icache_size, c.constant_cache.size) = (0, 0);
        for cache in ["gpgpu_cache:il1", "gpgpu_const_cache:l1"] {
            if r.get(&[cache], "").is_some() {
                notes.push(format!("-{cache} is superseded by -gpgpu_perfect_inst_const_cache 1"));
            }
        }
        return Ok(());
    }
    if let Some((v, ..)) =
        r.get(&["gpgpu_cache:il1"], "frontend.icache_size, frontend.icache_line, frontend.icache_ways")
    {
        let Some((size, line, ways, ..)) = cache(&v) else {
            return Err(bad(r, &["gpgpu_cache:il1"], "not a cache configuration"));
        };
        (c.frontend.icache_size, c.frontend.icache_line, c.frontend.icache_ways) = (size, line, ways);
    }
    if let Some((v, ..)) =
        r.get(&["gpgpu_const_cache:l1"], "constant_cache.size, constant_cache.line, constant_cache.ways")
    {
        let Some((size, line, ways, ..)) = cache(&v) else {
            return Err(bad(r, &["gpgpu_const_cache:l1"], "not a cache configuration"));
        };
        (c.constant_cache.size, c.constant_cache.line, c.constant_cache.ways) = (size, line, ways);
    }
    if let Some((v, ..)) = r.get(&["gpgpu_tex_cache:l1"], "texture_cache.size, texture_cache.line, texture_cache.ways")
    {
        let Some((size, line, ways, ..)) = cache(&v) else {
            return Err(bad(r, &["gpgpu_tex_cache:l1"], "not a cache configuration"));
        };
        (c.texture_cache.size, c.texture_cache.line, c.texture_cache.ways) = (size, line, ways);
    }
    Ok(())
}

/// `[dram.banks]` from `-gpgpu_dram_timing_opt` (`nbk=16:CCD=2:...`), the burst (`-gpgpu_dram_burst_length`,
/// `-gpgpu_dram_buswidth`, `-gpgpu_n_mem_per_ctrlr`, `-dram_data_command_freq_ratio`), the DRAM clock
/// (`-gpgpu_clock_domains`) and `-gpgpu_mem_addr_mapping`, on the preset's banks for what the file leaves
/// out.
fn dram_banks(r: &mut Reader, c: &mut GpuConfig) -> Result<(), ImportError> {
    let key = "dram.banks";
    let Some((opt, line, option)) = r.get(&["gpgpu_dram_timing_opt"], key) else { return Ok(()) };
    let mut b = c.dram.banks.clone().unwrap_or_else(crate::config::DramBanks::gtx480);
    for field in opt.trim_matches('"').split([':', ' ']).filter(|f| !f.is_empty()) {
        let (k, v) = field.split_once('=').unwrap_or((field, ""));
        let bad = || ImportError {
            line,
            option: option.clone(),
            value: opt.clone(),
            why: format!("`{field}` is not NAME=NUMBER"),
        };
        let n = u32::try_from(number(v).ok_or_else(bad)?).map_err(|_| bad())?;
        match k {
            "nbk" => b.banks = n,
            "nbkgrp" => b.bank_groups = n.max(1),
            "CCD" => b.ccd = n,
            "CCDL" => b.ccdl = n,
            "RRD" => b.rrd = n,
            "RCD" => b.rcd = n,
            "RAS" => b.ras = n,
            "RP" => b.rp = n,
            "RC" => b.rc = n,
            "CL" => b.cl = n,
            "WL" => b.wl = n,
            "CDLR" => b.cdlr = n,
            "WR" => b.wr = n,
            "RTPL" => b.rtpl = n,
            _ => return Err(bad()),
        }
    }
    let burst = r.int(&["gpgpu_dram_burst_length"], key)?.unwrap_or(u64::from(b.burst_cycles) * 2);
    let ratio = r.int(&["dram_data_command_freq_ratio"], key)?.unwrap_or(2).max(1);
    let bus = r.int(&["gpgpu_dram_buswidth"], key)?.unwrap_or(4);
    let chips = r.int(&["gpgpu_n_mem_per_ctrlr"], key)?.unwrap_or(1);
    b.burst_bytes = clamp(burst.saturating_mul(bus).saturating_mul(chips));
    b.burst_cycles = clamp((burst / ratio).max(1));
    if let Some(clocks) = r.ints(&["gpgpu_clock_domains"], key)? {
        b.clock_mhz = clamp(*clocks.get(3).unwrap_or(&u64::from(b.clock_mhz)));
    }
    if let Some((mapping, ..)) = r.get(&["gpgpu_mem_addr_mapping"], key) {
        b.address_mapping = mapping.trim_matches('"').to_string();
    }
    c.dram.banks = Some(b);
    Ok(())
}

/// DRAM bytes per core cycle: channels x chips per channel x bus bytes x transfers per command clock x
/// DRAM clock / core clock.
fn dram_bandwidth(r: &mut Reader, c: &mut GpuConfig, channels: u64) -> Result<(), ImportError> {
    let key = "dram.bytes_per_cycle";
    let chips = r.int(&["gpgpu_n_mem_per_ctrlr"], key)?;
    let bus = r.int(&["gpgpu_dram_buswidth"], key)?;
    let ratio = r.int(&["dram_data_command_freq_ratio"], key)?.unwrap_or(2);
    let clocks = r.ints(&["gpgpu_clock_domains"], "clock_mhz")?;
    if let (Some(chips), Some(bus), Some(clocks)) = (chips, bus, clocks) {
        let (core, dram) = (*clocks.first().unwrap_or(&1), *clocks.get(3).unwrap_or(&1));
        let bytes = [chips, bus, ratio, dram].iter().fold(channels, |a, &b| a.saturating_mul(b));
        c.dram.bytes_per_cycle = (bytes / core.max(1)).max(1);
    }
    Ok(())
}
