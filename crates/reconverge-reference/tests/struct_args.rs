//! Structs passed by value and pointers into a buffer in the reference interpreter, beside the simulator:
//! the same parameter bytes, the same values read through the struct's pointers, the same buffers back.

use reconverge_program::{FieldBuffer, StructArg, StructField};
use reconverge_reference::{run_reference, Arg, Buffer, Dtype, LaunchConfig, LaunchError, RefError};

fn u32s(v: &[u32]) -> Buffer {
    Buffer { dtype: Dtype::U32, bytes: v.iter().flat_map(|x| x.to_le_bytes()).collect() }
}

/// The arguments of `crates/reconverge-cli/tests/data/struct_arg.ptx` (see its header).
fn args() -> Vec<Arg> {
    let graph = StructArg::new(vec![
        StructField::Number { dtype: Dtype::U32, bits: 2048 },
        StructField::Number { dtype: Dtype::U32, bits: 15230 },
        StructField::Pointer { buffer: u32s(&[0, 3, 5, 9]), offset: 0 },
        StructField::Pointer { buffer: u32s(&[10, 11, 12, 13, 14]), offset: 8 },
        StructField::Pointer { buffer: Buffer::zeros(Dtype::F32, 4), offset: 0 },
        StructField::Null,
        StructField::Number { dtype: Dtype::F64, bits: 2.5f64.to_bits() },
        StructField::Number { dtype: Dtype::I16, bits: (-2i64) as u64 },
    ])
    .expect("a struct");
    vec![
        Arg::Buffer(Buffer::zeros(Dtype::U64, 8)),
        Arg::Struct(graph),
        Arg::BufferAt { buffer: u32s(&[5, 6, 7, 8]), offset: 4 },
    ]
}

#[test]
fn the_reference_and_the_simulator_agree_on_struct_and_offset_arguments() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../reconverge-cli/tests/data/struct_arg.ptx");
    let ptx = std::fs::read_to_string(path).expect("the test kernel");
    let m = reconverge_ptx::parse(&ptx).expect("parses");
    let k = m.kernels().next().expect("a kernel");
    let cfg = LaunchConfig::default();
    let r = run_reference(&m, k, &cfg, &args());
    assert_eq!(r.error, None);
    let out = r.buffers[0].as_ref().expect("out");
    let got: Vec<u64> = (0..out.len()).map(|i| out.bits(i)).collect();
    assert_eq!(got, vec![2048, 15230, 3, 12, 0, 2.5f64.to_bits(), (-2i64) as u64, 5]);
    assert_eq!(r.buffers[2], Some(u32s(&[5, 77, 7, 8])), "the whole buffer of `+1`");
    let wt = r.fields.iter().find(|f| f.arg == 1 && f.field == 4).expect("field 4");
    assert_eq!(wt.buffer.bytes, [0.0f32, 1.5, 3.0, 4.5].iter().flat_map(|f| f.to_le_bytes()).collect::<Vec<_>>());

    let loaded = reconverge_sim::load(
        &m,
        None,
        reconverge_mechanism::Mechanism::Pdom,
        &reconverge_program::DecodeOptions::default(),
    )
    .expect("decodes");
    let s = reconverge_sim::run(&loaded, &cfg, args(), &mut reconverge_sim::NoObserver);
    assert!(s.error.is_none(), "{:?}", s.error);
    assert_eq!(s.buffers, r.buffers);
    let fields = |f: &[FieldBuffer]| f.iter().map(|b| (b.arg, b.field, b.buffer.clone())).collect::<Vec<_>>();
    assert_eq!(fields(&s.fields), fields(&r.fields));
    assert_eq!(s.fields.len(), 3);

    // A struct of the wrong size is refused by both before anything runs.
    let mut bad = args();
    bad[1] = Arg::Struct(StructArg::new(vec![StructField::Null]).expect("a struct"));
    let r = run_reference(&m, k, &cfg, &bad);
    assert!(matches!(r.error, Some(RefError::Launch(LaunchError::Shape(_)))), "{:?}", r.error);
    let s = reconverge_sim::run(&loaded, &cfg, &bad, &mut reconverge_sim::NoObserver);
    let e = s.error.map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("argument 1: the struct is 8 bytes but parameter `graph_fields_param_1` is 56 bytes"), "{e}");
}
