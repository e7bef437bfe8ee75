//! Address arithmetic as PTX defines it: a 32-bit register's address wraps modulo 2^32. Compilers emit
//! `[%r4+68]` with `%r4 = &s - 64*tid` below zero (Rodinia's `nw` does), which must reach `s[...]`.

use reconverge_mechanism::Mechanism;
use reconverge_program::{Arg, Buffer, DecodeOptions, Dtype, LaunchConfig};
use reconverge_sim::*;

const WRAP: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    .shared .align 4 .b8 s[128];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, s;
    shl.b32 %r3, %r1, 2;
    add.s32 %r4, %r2, %r3;
    add.s32 %r5, %r1, 100;
    st.shared.u32 [%r4], %r5;
    bar.sync 0;
    shl.b32 %r6, %r1, 6;
    sub.s32 %r7, %r2, %r6;
    ld.shared.u32 %r5, [%r7+68];
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd2, %rd2, %rd3;
    st.global.u32 [%rd2], %r5;
    ret;
}
"#;

#[test]
fn a_32_bit_register_address_wraps_like_ptx() {
    let m = reconverge_ptx::parse(WRAP).unwrap_or_else(|e| panic!("{e}"));
    for mech in [Mechanism::Pdom, Mechanism::Its] {
        let p = load(&m, None, mech, &DecodeOptions::default()).expect("decodes");
        let cfg = LaunchConfig { block: [2, 1, 1], ..LaunchConfig::default() };
        let r = run(&p, &cfg, vec![Arg::Buffer(Buffer::zeros(Dtype::U32, 2))], &mut NoObserver);
        assert!(r.error.is_none(), "{mech}: {:?}", r.error.map(|e| e.to_string()));
        let out = r.buffers[0].as_ref().expect("the buffer");
        // Thread 0 reads s + 68 = s[17] (never written: 0); thread 1 reads s - 64 + 68 = s[1] = 101.
        assert_eq!((out.format(0).as_str(), out.format(1).as_str()), ("0", "101"), "{mech}");
    }
}
