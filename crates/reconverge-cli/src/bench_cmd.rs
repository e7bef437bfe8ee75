//! `reconverge bench`: simulation speed on the suite kernels, in simulated instructions per second.

use crate::launch_args::mechanism;
use crate::suite_cmd::{default_kernels_dir, load_manifest};
use crate::Failure;
use clap::Args;
use reconverge_report::table::Table;
use reconverge_sim::{run, DecodeOptions, LaunchConfig, Mechanism, NoObserver};
use reconverge_suite::{resolve_args, ArgSpec};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Arguments of `reconverge bench`.
#[derive(Args)]
pub struct BenchArgs {
    /// The kernel directory (holding manifest.toml).
    #[arg(long)]
    pub kernels: Option<PathBuf>,
    /// Only these kernels (repeatable).
    #[arg(long = "kernel")]
    pub only: Vec<String>,
    /// The mechanism.
    #[arg(long, default_value = "pdom")]
    pub mechanism: String,
    /// Warp size.
    #[arg(long, default_value_t = 32)]
    pub warp_size: u32,
    /// Minimum measuring time per kernel and mode, in milliseconds.
    #[arg(long, default_value_t = 300)]
    pub min_ms: u64,
    /// GPU configuration for the timed measurement.
    #[arg(long, default_value = "gtx480")]
    pub config: String,
    /// Host threads for the timed measurement (SMs in parallel).
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Functional simulation only.
    #[arg(long)]
    pub functional: bool,
}

/// Runs `reconverge bench`.
pub fn run_bench(a: BenchArgs) -> Result<(), Failure> {
    let dir = a
        .kernels
        .clone()
        .or_else(default_kernels_dir)
        .ok_or_else(|| Failure::input("cannot find kernels/; pass --kernels DIR"))?;
    let manifest = load_manifest(&dir)?;
    let mech: Mechanism = mechanism(&a.mechanism)?;
    let load = |p: &str| std::fs::read(dir.join(p)).map_err(|e| format!("cannot read `{p}`: {e}"));
    let gpu = if a.functional { None } else { Some(crate::launch_args::gpu_config(&a.config)?) };
    let mut t = Table::new(&[
        "kernel",
        "SIMD eff",
        "func thread/s",
        "func warp/s",
        "timed thread/s",
        "timed warp/s",
        "cycles/s",
    ]);
    let (mut tot_thread, mut tot_warp, mut tot_time) = (0u64, 0u64, Duration::ZERO);
    let (mut ttot_thread, mut ttot_warp, mut ttot_cycles, mut ttot_time) = (0u64, 0u64, 0u64, Duration::ZERO);
    // Parser speed on the suite's PTX.
    let mut ptx_bytes = 0usize;
    let mut parse_time = Duration::ZERO;
    for e in manifest.kernels.iter().filter(|e| a.only.is_empty() || a.only.contains(&e.name)) {
        if !e.supports_warp_size(a.warp_size) || e.expected_outcome(mech.name()) != "completed" {
            continue;
        }
        let text =
            String::from_utf8(load(&e.ptx).map_err(Failure::input)?).map_err(|e| Failure::input(e.to_string()))?;
        let t0 = Instant::now();
        let module = reconverge_ptx::parse(&text).map_err(|_| Failure::input(format!("{}: parse error", e.ptx)))?;
        parse_time += t0.elapsed();
        ptx_bytes += text.len();
        let prog =
            reconverge_sim::load(&module, Some(&e.name), mech, &DecodeOptions { file: e.ptx.clone(), source: None })
                .map_err(|err| Failure::input(err.to_string()))?;
        let specs: Vec<ArgSpec> =
            e.args.iter().map(|x| ArgSpec::parse(&x.text())).collect::<Result<_, _>>().map_err(Failure::input)?;
        let args = resolve_args(&prog, &specs, &load).map_err(Failure::input)?;
        let cfg = LaunchConfig {
            grid: e.grid,
            block: e.block,
            warp_size: a.warp_size,
            dynamic_shared: e.dynamic_shared,
            ..LaunchConfig::default()
        };
        let (mut warp, mut thread, mut runs) = (0u64, 0u64, 0u64);
        let start = Instant::now();
        let mut eff = 0.0;
        while runs == 0 || start.elapsed() < Duration::from_millis(a.min_ms) {
            let r = run(&prog, mech, &cfg, &args, &mut NoObserver);
            if let Some(err) = &r.error {
                return Err(Failure::input(format!("{}: {err}", e.name)));
            }
            warp += r.stats.warp_instructions;
            thread += r.stats.thread_instructions;
            eff = r.stats.simd_efficiency(a.warp_size);
            runs += 1;
        }
        let el = start.elapsed();
        tot_thread += thread;
        tot_warp += warp;
        tot_time += el;
        let s = el.as_secs_f64();
        let mut row = vec![
            e.name.clone(),
            format!("{:.1}%", eff * 100.0),
            format!("{:.1}M", thread as f64 / s / 1e6),
            format!("{:.2}M", warp as f64 / s / 1e6),
        ];
        if let Some(g) = &gpu {
            let (mut tw, mut tt, mut tc, mut runs) = (0u64, 0u64, 0u64, 0u64);
            let start = Instant::now();
            while runs == 0 || start.elapsed() < Duration::from_millis(a.min_ms) {
                let r = reconverge_timing::run_timed(&prog, mech, &cfg, g, &args, None, a.threads);
                if let Some(err) = &r.run.error {
                    return Err(Failure::input(format!("{}: {err}", e.name)));
                }
                tw += r.run.stats.warp_instructions;
                tt += r.run.stats.thread_instructions;
                tc += r.timing.cycles;
                runs += 1;
            }
            let el = start.elapsed();
            ttot_thread += tt;
            ttot_warp += tw;
            ttot_cycles += tc;
            ttot_time += el;
            let s = el.as_secs_f64();
            row.push(format!("{:.1}M", tt as f64 / s / 1e6));
            row.push(format!("{:.2}M", tw as f64 / s / 1e6));
            row.push(format!("{:.2}M", tc as f64 / s / 1e6));
        }
        t.row(row);
    }
    let s = tot_time.as_secs_f64().max(1e-9);
    let ts = ttot_time.as_secs_f64().max(1e-9);
    let mut row = vec![
        "ALL".into(),
        "-".into(),
        format!("{:.1}M", tot_thread as f64 / s / 1e6),
        format!("{:.2}M", tot_warp as f64 / s / 1e6),
    ];
    if gpu.is_some() {
        row.push(format!("{:.1}M", ttot_thread as f64 / ts / 1e6));
        row.push(format!("{:.2}M", ttot_warp as f64 / ts / 1e6));
        row.push(format!("{:.2}M", ttot_cycles as f64 / ts / 1e6));
    }
    t.row(row);
    println!(
        "mechanism {}, warp size {}; functional: one host thread; timed: {} on {} host thread(s)",
        mech,
        a.warp_size,
        gpu.as_ref().map(|g| g.name.as_str()).unwrap_or("-"),
        a.threads
    );
    print!("{}", t.render());
    println!(
        "PTX parsing: {} bytes in {:.2} ms ({:.1} MB/s, single pass; see `cargo bench -p reconverge-ptx` for a careful figure)",
        ptx_bytes,
        parse_time.as_secs_f64() * 1e3,
        ptx_bytes as f64 / parse_time.as_secs_f64().max(1e-9) / 1e6
    );
    Ok(())
}
