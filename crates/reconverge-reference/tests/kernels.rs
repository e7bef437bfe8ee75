//! The kernel suite (`kernels/manifest.toml`) under the reference interpreter: every kernel, every PTX
//! variant, warp sizes 4, 8, 16 and 32 (where the manifest allows them), expected outputs bit-exact.
//!
//! The manifest's `outcome_by_mechanism` does not apply: the reference schedules threads independently, so
//! every kernel (the naive spin lock included) must complete. Variants other than the manifest's are
//! checked bit-exactly for integer outputs; float outputs of the FMA-contracted variants are only
//! checked to be close (they legitimately round differently from the `--fmad=false` expectations).
//!
//! A second test runs the same launches on the simulator under every mechanism, with every straight-line
//! segment compiled to native code, and compares every buffer (not only the expected ones) with the
//! reference, bit for bit; launches the manifest expects to deadlock under a mechanism must deadlock
//! there.

#![allow(clippy::print_stderr, reason = "its helpers say on stderr what was skipped and why")]

use reconverge_ir::{Module, ScalarType};
use reconverge_reference::{run_reference, Arg, Buffer, Dtype, LaunchConfig, RefResult};
use std::path::{Path, PathBuf};

fn kernels_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kernels")
}

/// Reads a one-dimensional little-endian `.npy` file.
fn read_npy(path: &Path) -> Buffer {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let npyz::DType::Plain(ts) = npy.dtype() else { panic!("{}: not a plain dtype", path.display()) };
    let dtype = match ts.to_string().trim_start_matches(['<', '|', '=']) {
        "i1" => Dtype::I8,
        "u1" => Dtype::U8,
        "i2" => Dtype::I16,
        "u2" => Dtype::U16,
        "i4" => Dtype::I32,
        "u4" => Dtype::U32,
        "i8" => Dtype::I64,
        "u8" => Dtype::U64,
        "f4" => Dtype::F32,
        "f8" => Dtype::F64,
        other => panic!("{}: unsupported dtype {other}", path.display()),
    };
    let len = npy.len() as usize;
    let data: &[u8] = npy.into_inner();
    assert!(data.len() >= len * dtype.size(), "{}: truncated", path.display());
    Buffer { dtype, bytes: data[..len * dtype.size()].to_vec() }
}

fn dims(v: &toml::Value) -> [u32; 3] {
    let a = v.as_array().expect("dimension array");
    let mut d = [1u32; 3];
    for (i, x) in a.iter().enumerate() {
        d[i] = x.as_integer().expect("integer dimension") as u32;
    }
    d
}

fn build_args(module: &Module, kernel: reconverge_ir::FuncId, specs: &[toml::Value]) -> Vec<Arg> {
    let params = &module.functions[kernel].params;
    assert_eq!(params.len(), specs.len(), "argument count");
    specs
        .iter()
        .zip(params)
        .map(|(s, p)| match s {
            toml::Value::String(t) if t.starts_with('@') => Arg::Buffer(read_npy(&kernels_dir().join(&t[1..]))),
            toml::Value::String(t) if t.starts_with("zeros:") => {
                let mut parts = t.split(':').skip(1);
                let dtype: Dtype = parts.next().expect("dtype").parse().expect("dtype");
                let len: usize = parts.next().expect("length").parse().expect("length");
                Arg::Buffer(Buffer::zeros(dtype, len))
            }
            toml::Value::Integer(i) => {
                Arg::Scalar(reconverge_program::parse_scalar(&i.to_string(), p.ty).expect("scalar"))
            }
            toml::Value::Float(f) => Arg::Scalar(match p.ty {
                ScalarType::F32 => (*f as f32).to_bits() as u64,
                _ => f.to_bits(),
            }),
            other => panic!("unsupported argument {other}"),
        })
        .collect()
}

/// Compares `got` with `want`: bit-exactly, or (for floats, when `close`) within a relative tolerance.
fn compare(got: &Buffer, want: &Buffer, close: bool) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("length {} != expected {}", got.len(), want.len()));
    }
    for i in 0..got.len() {
        let (g, w) = (got.bits(i), want.bits(i));
        let same = if close && want.dtype.is_float() {
            let (g, w) = match want.dtype {
                Dtype::F32 => (f32::from_bits(g as u32) as f64, f32::from_bits(w as u32) as f64),
                _ => (f64::from_bits(g), f64::from_bits(w)),
            };
            (g - w).abs() <= 1e-3 * w.abs().max(1.0)
        } else {
            g == w
        };
        if !same {
            return Err(format!("element {i}: got {}, expected {}", got.format(i), want.format(i)));
        }
    }
    Ok(())
}

/// One manifest entry, loaded.
struct Entry {
    cases: Vec<Case>,
    warp_sizes: Vec<u32>,
    expected: Vec<(usize, Buffer)>,
    grid: [u32; 3],
    block: [u32; 3],
    dynamic_shared: u32,
    args: Vec<toml::Value>,
    outcomes: Vec<(String, String)>,
    /// Module variables set before the launch.
    globals: Vec<reconverge_program::GlobalInit>,
    /// Module variables and their expected final contents.
    expected_globals: Vec<(String, Buffer)>,
}

impl Entry {
    /// The launch at warp size `w`.
    fn launch(&self, w: u32, max_instructions: Option<u64>) -> LaunchConfig {
        LaunchConfig {
            grid: self.grid,
            block: self.block,
            warp_size: w,
            dynamic_shared: self.dynamic_shared,
            globals: self.globals.clone(),
            dump_globals: self.expected_globals.iter().map(|(n, _)| n.clone()).collect(),
            limits: reconverge_program::RunLimits { max_instructions, ..Default::default() },
            ..LaunchConfig::default()
        }
    }
}

/// A module variable's value from the manifest: `@FILE.npy` or an integer.
fn global_value(v: &toml::Value) -> Arg {
    match v {
        toml::Value::String(t) if t.starts_with('@') => Arg::Buffer(read_npy(&kernels_dir().join(&t[1..]))),
        toml::Value::Integer(i) => Arg::Scalar(*i as u64),
        other => panic!("unsupported global value {other}"),
    }
}

fn load_manifest() -> Vec<Entry> {
    let dir = kernels_dir();
    let text = std::fs::read_to_string(dir.join("manifest.toml")).expect("manifest");
    let manifest: toml::Table = text.parse().expect("manifest parses");
    let kernels = manifest["kernel"].as_array().expect("[[kernel]]");
    kernels
        .iter()
        .map(|k| {
            let name = k["name"].as_str().expect("name").to_string();
            let main_ptx = k["ptx"].as_str().expect("ptx").to_string();
            let float_kernel = main_ptx.contains("nofma");
            let mut cases = vec![Case { name: name.clone(), ptx: main_ptx.clone(), exact: true }];
            for variant in ["sm_80", "sm_70", "sm_80-nofma"] {
                let p = format!("ptx/{variant}/{name}.ptx");
                if p != main_ptx && dir.join(&p).exists() {
                    cases.push(Case { name: name.clone(), ptx: p, exact: !float_kernel || variant.contains("nofma") });
                }
            }
            let warp_sizes: Vec<u32> = match k.get("warp_sizes") {
                Some(v) => {
                    v.as_array().expect("warp_sizes").iter().map(|x| x.as_integer().expect("int") as u32).collect()
                }
                None => vec![4, 8, 16, 32],
            };
            let expected = k["expected"]
                .as_table()
                .expect("expected")
                .iter()
                .map(|(i, f)| (i.parse().expect("index"), read_npy(&dir.join(f.as_str().expect("path")))))
                .collect();
            let outcomes = match k.get("outcome_by_mechanism").and_then(|v| v.as_table()) {
                Some(t) => t.iter().map(|(m, o)| (m.clone(), o.as_str().unwrap_or("").to_string())).collect(),
                None => Vec::new(),
            };
            Entry {
                cases,
                warp_sizes: warp_sizes.into_iter().filter(|w| [4, 8, 16, 32].contains(w)).collect(),
                expected,
                grid: dims(&k["grid"]),
                block: dims(&k["block"]),
                dynamic_shared: k.get("dynamic_shared").and_then(|v| v.as_integer()).unwrap_or(0) as u32,
                args: k["args"].as_array().expect("args").clone(),
                outcomes,
                globals: k
                    .get("globals")
                    .and_then(|g| g.as_table())
                    .map(|t| {
                        t.iter()
                            .map(|(n, v)| reconverge_program::GlobalInit { name: n.clone(), value: global_value(v) })
                            .collect()
                    })
                    .unwrap_or_default(),
                expected_globals: k
                    .get("expected_globals")
                    .and_then(|g| g.as_table())
                    .map(|t| {
                        t.iter().map(|(n, f)| (n.clone(), read_npy(&dir.join(f.as_str().expect("path"))))).collect()
                    })
                    .unwrap_or_default(),
            }
        })
        .collect()
}

struct Case {
    name: String,
    ptx: String,
    exact: bool,
}

#[test]
fn every_kernel_matches_its_expected_outputs() {
    let dir = kernels_dir();
    let mut failures = Vec::new();
    let mut runs = 0;
    for e in load_manifest() {
        for case in &e.cases {
            let src = std::fs::read_to_string(dir.join(&case.ptx)).expect("ptx");
            let module = reconverge_ptx::parse(&src).unwrap_or_else(|err| panic!("{}: {err}", case.ptx));
            let kernel = module.function_by_name(&case.name).expect("kernel by name");
            let args = build_args(&module, kernel, &e.args);
            for &w in &e.warp_sizes {
                let cfg = e.launch(w, None);
                let start = std::time::Instant::now();
                let r: RefResult = run_reference(&module, kernel, &cfg, &args);
                runs += 1;
                let tag = format!("{} warp {w}", case.ptx);
                eprintln!("{tag}: {} thread instructions in {:?}", r.thread_instructions, start.elapsed());
                if let Some(err) = &r.error {
                    failures.push(format!("{tag}: {err}"));
                    continue;
                }
                for (i, want) in &e.expected {
                    match r.buffers.get(*i).and_then(|b| b.as_ref()) {
                        Some(got) => {
                            if let Err(err) = compare(got, want, !case.exact) {
                                failures.push(format!("{tag}: argument {i}: {err}"));
                            }
                        }
                        None => failures.push(format!("{tag}: argument {i} is not a buffer")),
                    }
                }
                for ((name, want), (_, got)) in e.expected_globals.iter().zip(&r.globals) {
                    if let Err(err) = compare(got, want, !case.exact) {
                        failures.push(format!("{tag}: global {name}: {err}"));
                    }
                }
                if r.globals.len() != e.expected_globals.len() {
                    failures.push(format!("{tag}: not every expected global was read back"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} of {runs} runs failed:\n{}", failures.len(), failures.join("\n"));
    assert!(runs >= 100, "only {runs} runs");
}

/// Warp instructions after which a simulator run counts as hung (the suite needs far fewer).
const SIM_LIMIT: u64 = 3_000_000;

/// Every kernel variant of the manifest on the simulator under every mechanism, compiled, against the
/// reference (the variants on every core).
#[test]
fn the_simulator_agrees_with_the_reference_on_every_kernel() {
    use rayon::prelude::*;
    let manifest = load_manifest();
    let jobs: Vec<(&Entry, &Case)> = manifest.iter().flat_map(|e| e.cases.iter().map(move |c| (e, c))).collect();
    let checked: Vec<(usize, Vec<String>)> =
        jobs.par_iter().map(|&(e, case)| simulator_against_reference(e, case)).collect();
    let runs: usize = checked.iter().map(|c| c.0).sum();
    let failures: Vec<String> = checked.into_iter().flat_map(|c| c.1).collect();
    assert!(failures.is_empty(), "{} of {runs} runs failed:\n{}", failures.len(), failures.join("\n"));
    assert!(runs >= 300, "only {runs} runs");
}

/// One variant of a kernel under every mechanism at every warp size it supports: the runs made and what
/// failed.
fn simulator_against_reference(e: &Entry, case: &Case) -> (usize, Vec<String>) {
    use reconverge_mechanism::Mechanism;
    use reconverge_program::DecodeOptions;
    use reconverge_sim::{load, run, NoObserver};
    let dir = kernels_dir();
    let mut failures = Vec::new();
    let mut runs = 0;
    let src = std::fs::read_to_string(dir.join(&case.ptx)).expect("ptx");
    let module = reconverge_ptx::parse(&src).unwrap_or_else(|err| panic!("{}: {err}", case.ptx));
    let kernel = module.function_by_name(&case.name).expect("kernel by name");
    let args = build_args(&module, kernel, &e.args);
    let dopts = DecodeOptions { file: case.ptx.clone(), source: Some(src.clone()), ..Default::default() };
    let mut progs = Vec::new();
    for mech in Mechanism::ALL {
        match load(&module, Some(&case.name), mech, &dopts) {
            Ok(p) => progs.push((mech, p)),
            Err(err) => failures.push(format!("{} {mech}: cannot load: {err}", case.ptx)),
        }
    }
    for &w in &e.warp_sizes {
        let cfg = e.launch(w, Some(SIM_LIMIT));
        let reference = run_reference(&module, kernel, &cfg, &args);
        if let Some(err) = &reference.error {
            failures.push(format!("{} warp {w}: the reference stopped: {err}", case.ptx));
            continue;
        }
        // Every straight-line segment runs compiled from its first run, so the reference checks
        // the compiled code as well as the interpreter.
        let sim_cfg = LaunchConfig {
            host: reconverge_program::HostOptions { jit: reconverge_program::JitPolicy::Always, ..cfg.host.clone() },
            ..cfg.clone()
        };
        for (mech, prog) in &progs {
            let tag = format!("{} {mech} warp {w}", case.ptx);
            let sim = run(prog, &sim_cfg, &args, &mut NoObserver);
            runs += 1;
            let listed = e.outcomes.iter().find(|(m, _)| m == mech.name()).map(|(_, o)| o.as_str());
            // `a|b` accepts either outcome.
            let listed = listed.map(|o| o.split('|').find(|x| *x == sim.outcome()).unwrap_or(o));
            match (listed, sim.outcome()) {
                (Some(want), got) if got != want => {
                    failures.push(format!("{tag}: outcome {got}, the manifest says {want}: {:?}", sim.error));
                    continue;
                }
                (Some(_), _) => continue,
                // The manifest records pdom and ssy only; other mechanisms may legitimately
                // deadlock on warp-synchronous code (e.g. `none` never regroups a warp).
                (None, "deadlock") if !matches!(mech, Mechanism::Pdom | Mechanism::Ssy) => {
                    eprintln!("{tag}: deadlock (not recorded in the manifest for this mechanism)");
                    continue;
                }
                (None, "completed") => {}
                (None, got) => {
                    failures.push(format!("{tag}: outcome {got}: {:?}", sim.error.map(|x| x.to_string())));
                    continue;
                }
            }
            for (i, (got, want)) in sim.buffers.iter().zip(&reference.buffers).enumerate() {
                if let (Some(got), Some(want)) = (got, want) {
                    if let Err(err) = compare(got, want, false) {
                        failures.push(format!("{tag}: argument {i}: simulator vs reference: {err}"));
                    }
                }
            }
            if sim.globals != reference.globals {
                failures.push(format!("{tag}: module variables: simulator vs reference differ"));
            }
        }
    }
    (runs, failures)
}
