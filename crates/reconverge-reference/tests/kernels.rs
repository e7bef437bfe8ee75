//! The kernel suite (`kernels/manifest.toml`) under the reference interpreter: every kernel, every PTX
//! variant, warp sizes 4, 8, 16 and 32 (where the manifest allows them), expected outputs bit-exact.
//!
//! The manifest's `outcome_by_mechanism` does not apply: the reference schedules threads independently, so
//! every kernel (the naive spin lock included) must complete. Variants other than the manifest's are
//! checked bit-exactly for integer outputs; float outputs of the FMA-contracted variants are only
//! checked to be close (they legitimately round differently from the `--fmad=false` expectations).

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
            toml::Value::Integer(i) => Arg::Scalar(reconverge_sim::parse_scalar(&i.to_string(), p.ty).expect("scalar")),
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

struct Case {
    name: String,
    ptx: String,
    exact: bool,
}

#[test]
fn every_kernel_matches_its_expected_outputs() {
    let dir = kernels_dir();
    let text = std::fs::read_to_string(dir.join("manifest.toml")).expect("manifest");
    let manifest: toml::Table = text.parse().expect("manifest parses");
    let kernels = manifest["kernel"].as_array().expect("[[kernel]]");
    let mut failures = Vec::new();
    let mut runs = 0;
    for k in kernels {
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
            Some(v) => v.as_array().expect("warp_sizes").iter().map(|x| x.as_integer().expect("int") as u32).collect(),
            None => vec![4, 8, 16, 32],
        };
        let expected: Vec<(usize, Buffer)> = k["expected"]
            .as_table()
            .expect("expected")
            .iter()
            .map(|(i, f)| (i.parse().expect("index"), read_npy(&dir.join(f.as_str().expect("path")))))
            .collect();
        for case in &cases {
            let src = std::fs::read_to_string(dir.join(&case.ptx)).expect("ptx");
            let module = reconverge_ptx::parse(&src).unwrap_or_else(|e| panic!("{}: {e}", case.ptx));
            let kernel = module.function_by_name(&case.name).expect("kernel by name");
            let args = build_args(&module, kernel, k["args"].as_array().expect("args"));
            for &w in warp_sizes.iter().filter(|w| [4, 8, 16, 32].contains(*w)) {
                let cfg = LaunchConfig {
                    grid: dims(&k["grid"]),
                    block: dims(&k["block"]),
                    warp_size: w,
                    dynamic_shared: k.get("dynamic_shared").and_then(|v| v.as_integer()).unwrap_or(0) as u32,
                    ..LaunchConfig::default()
                };
                let start = std::time::Instant::now();
                let r: RefResult = run_reference(&module, kernel, &cfg, &args);
                runs += 1;
                let tag = format!("{} warp {w}", case.ptx);
                eprintln!("{tag}: {} thread instructions in {:?}", r.thread_instructions, start.elapsed());
                if let Some(e) = &r.error {
                    failures.push(format!("{tag}: {e}"));
                    continue;
                }
                for (i, want) in &expected {
                    match r.buffers.get(*i).and_then(|b| b.as_ref()) {
                        Some(got) => {
                            if let Err(e) = compare(got, want, !case.exact) {
                                failures.push(format!("{tag}: argument {i}: {e}"));
                            }
                        }
                        None => failures.push(format!("{tag}: argument {i} is not a buffer")),
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} of {runs} runs failed:\n{}", failures.len(), failures.join("\n"));
    assert!(runs >= 100, "only {runs} runs");
}
