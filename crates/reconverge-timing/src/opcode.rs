//! What each instruction costs the pipeline: its result latency, how long it occupies its functional unit,
//! and which unit, computed once per pc of a program from the GPU configuration.
//!
//! With an `[opcode]` table ([`OpcodeConfig`]) the operation picks its row the way GPGPU-Sim 4.0 classifies
//! PTX opcodes (`ptx_instruction::set_opcode_and_latency`): `add`/`sub`, `min`/`max`, `mul`, `mad`, `div`
//! by type (integer, single, double), the special functions, `shfl`; everything else (moves, logic, shifts,
//! comparisons, selects, conversions, and `fma`, which GPGPU-Sim does not list) is `other`. Without a table
//! every instruction takes its class's `[latency]` and `[interval]`. Memory instructions get their timing from
//! the memory system; control and mechanism instructions from `latency.branch`.

use crate::config::{GpuConfig, OpcodeConfig};
use reconverge_ir::ScalarType;
use reconverge_program::facts::{facts, TimingSlot as Slot};
use reconverge_program::program::{InstClass, Op};
use reconverge_program::Program;

/// The unit index of a class: 0 integer, 1 float, 2 double, 3 special function, 4 load/store (and 5, the
/// tensor unit, which no class names: [`TENSOR_UNIT`]).
pub(crate) fn unit_of_class(class: InstClass) -> usize {
    match class {
        InstClass::Float => 1,
        InstClass::Double => 2,
        InstClass::Sfu => 3,
        InstClass::Mem => 4,
        InstClass::Int | InstClass::Control | InstClass::Sync | InstClass::Mechanism | InstClass::Nop => 0,
    }
}

/// The unit of the tensor cores' matrix operations (with an `[opcode]` table).
pub(crate) const TENSOR_UNIT: usize = 5;

/// The timing of one pc.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OpTiming {
    /// Cycles from issue until a dependent instruction may issue (before the memory system's share).
    pub latency: u64,
    /// Cycles the unit stays busy.
    pub occupancy: u64,
    /// The unit ([`unit_of_class`]'s numbering).
    pub unit: u8,
}

/// The arithmetic slot of an operation in GPGPU-Sim's tables, from its facts.
fn slot(op: &Op) -> (Slot, Option<ScalarType>) {
    let f = facts(op);
    (f.slot, f.slot_ty)
}

/// The timing of the instruction `op` under `t`: GPGPU-Sim runs integer, single-precision
/// and other operations on its SP units (our unit 0), special functions and divisions on the SFU, doubles
/// on the double unit or, without one, the SFU.
fn from_table(t: &OpcodeConfig, op: &Op) -> OpTiming {
    let (s, ty) = slot(op);
    let i = match s {
        Slot::Add => 0,
        Slot::Max => 1,
        Slot::Mul => 2,
        Slot::Mad => 3,
        Slot::Div => 4,
        Slot::Sfu | Slot::Shfl | Slot::Other | Slot::Tensor => 5,
    };
    let float = matches!(ty, Some(ScalarType::F32 | ScalarType::F16 | ScalarType::Bf16));
    let double = matches!(ty, Some(ScalarType::F64));
    let sfu_unit = unit_of_class(InstClass::Sfu) as u8;
    match s {
        Slot::Sfu => OpTiming { latency: t.sfu_latency, occupancy: t.sfu_initiation, unit: sfu_unit },
        Slot::Tensor => OpTiming { latency: t.tensor_latency, occupancy: t.tensor_initiation, unit: TENSOR_UNIT as u8 },
        Slot::Shfl => OpTiming { latency: t.int_latency[5], occupancy: t.int_initiation[5], unit: 0 },
        Slot::Other => OpTiming {
            latency: t.other_latency,
            occupancy: t.other_initiation,
            unit: if double && t.dp_on_sfu {
                sfu_unit
            } else if double {
                unit_of_class(InstClass::Double) as u8
            } else {
                0
            },
        },
        _ if double => OpTiming {
            latency: t.dp_latency[i],
            occupancy: t.dp_initiation[i],
            unit: if t.dp_on_sfu || s == Slot::Div { sfu_unit } else { unit_of_class(InstClass::Double) as u8 },
        },
        _ if float => OpTiming {
            latency: t.fp_latency[i],
            occupancy: t.fp_initiation[i],
            unit: if s == Slot::Div { sfu_unit } else { 0 },
        },
        _ => OpTiming {
            latency: t.int_latency[i],
            occupancy: t.int_initiation[i],
            unit: if s == Slot::Div { sfu_unit } else { 0 },
        },
    }
}

/// The timing of every pc of `prog` on `gpu`.
pub(crate) fn op_timings(prog: &Program, gpu: &GpuConfig) -> Vec<OpTiming> {
    let (lat, iv) = (&gpu.latency, &gpu.interval);
    let extra = gpu.frontend.operand_latency;
    prog.insts
        .iter()
        .zip(&prog.info)
        .map(|(inst, info)| {
            let by_class = match info.class {
                InstClass::Int => (lat.int, iv.int),
                InstClass::Float => (lat.float, iv.float),
                InstClass::Double => (lat.double, iv.double),
                InstClass::Sfu => (lat.sfu, iv.sfu),
                InstClass::Control | InstClass::Mechanism => (lat.branch, iv.int),
                InstClass::Sync => (lat.warp_op, iv.int),
                InstClass::Mem | InstClass::Nop => (lat.int, iv.mem),
            };
            let arithmetic =
                matches!(info.class, InstClass::Int | InstClass::Float | InstClass::Double | InstClass::Sfu);
            let t = match &gpu.opcode {
                Some(table) if arithmetic || matches!(slot(&inst.op).0, Slot::Shfl | Slot::Tensor) => {
                    from_table(table, &inst.op)
                }
                _ => OpTiming { latency: by_class.0, occupancy: by_class.1, unit: unit_of_class(info.class) as u8 },
            };
            OpTiming { latency: t.latency + extra, ..t }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> OpcodeConfig {
        crate::GpuConfig::gtx480().opcode.expect("gtx480 has GPGPU-Sim's opcode tables")
    }

    #[test]
    fn operations_take_their_gpgpusim_rows() {
        let src = ".version 7.8\n.target sm_35\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n\
                   .reg .b32 %r<4>;\n.reg .f32 %f<4>;\n.reg .f64 %fd<3>;\n\
                   add.s32 %r1, %r2, %r3;\nmul.lo.s32 %r1, %r2, %r3;\nmad.lo.s32 %r1, %r2, %r3, %r1;\n\
                   and.b32 %r1, %r2, %r3;\nadd.f32 %f1, %f2, %f3;\nfma.rn.f32 %f1, %f2, %f3, %f1;\n\
                   div.rn.f32 %f1, %f2, %f3;\nsin.approx.f32 %f1, %f2;\nadd.f64 %fd1, %fd2, %fd1;\nret;\n}\n";
        let m = reconverge_ptx::parse(src).expect("parses");
        let prog =
            reconverge_sim::load(&m, None, reconverge_mechanism::Mechanism::Pdom, &Default::default()).expect("loads");
        let mut gpu = GpuConfig::gtx480();
        gpu.opcode = Some(table());
        gpu.frontend.operand_latency = 2;
        let t = op_timings(prog.program(), &gpu);
        let lat: Vec<u64> = t.iter().take(9).map(|x| x.latency).collect();
        // add 4, mul 4, mad 5, and (other) 1, fadd 4, fma (other) 1, fdiv 39, sin 8, dadd 8; plus 2 each.
        assert_eq!(lat, vec![6, 6, 7, 3, 6, 3, 41, 10, 10]);
        let sfu = unit_of_class(InstClass::Sfu) as u8;
        assert_eq!((t[6].unit, t[7].unit, t[8].unit), (sfu, sfu, sfu), "div, sin and doubles on the SFU");
        assert_eq!(t[8].occupancy, 8);
    }
}
