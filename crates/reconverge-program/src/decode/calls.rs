//! Calls: direct calls with their parameter copies, and `vprintf` (CUDA's device `printf`).

use super::*;

/// The external function CUDA's device `printf` compiles to ([`Op::Printf`]).
pub const PRINTF: &str = "vprintf";

impl<'m> Decoder<'m> {
    pub(super) fn decode_call(&self, fi: usize, f: &Function, inst: &reconverge_ir::Inst) -> DResult<Op> {
        let mut rets: &[Operand] = &[];
        let mut args: &[Operand] = &[];
        let mut callee = None;
        let mut seen_callee = false;
        for op in &inst.operands {
            match op {
                Operand::List(items) if !seen_callee => rets = items,
                Operand::List(items) => args = items,
                Operand::Sym(Symbol::Func(id)) => {
                    callee = Some(*id);
                    seen_callee = true;
                }
                Operand::Reg(_) => return Err("indirect calls are not supported yet".into()),
                Operand::Sym(Symbol::Proto(_)) => {}
                other => return Err(Unsupported::Operand { expected: "a call target", found: format!("{other:?}") }),
            }
        }
        let callee = callee.ok_or("call without a callee")?;
        let cf = &self.m.functions[callee];
        let Some(&ci) = self.func_index.get(&callee) else {
            if cf.name == PRINTF {
                return self.decode_printf(fi, f, cf, args, rets);
            }
            return Err(Unsupported::ExternalCall(cf.name.clone()));
        };
        let callee_info = &self.prog.functions[ci as usize];
        if args.len() != callee_info.param_offsets.len() || rets.len() != callee_info.ret_offsets.len() {
            return Err(Unsupported::CallArity {
                callee: cf.name.clone(),
                args: args.len(),
                rets: rets.len(),
                params: callee_info.param_offsets.len(),
                returns: callee_info.ret_offsets.len(),
            });
        }
        let mut a = SmallVec::new();
        for (i, op) in args.iter().enumerate() {
            let (off, size) = self.frame_slot(fi, f, op)?;
            let psize = var_size(&cf.params[i]) as u32;
            a.push(ParamCopy { from: off, to: callee_info.param_offsets[i], size: size.min(psize) });
        }
        let mut r = SmallVec::new();
        for (i, op) in rets.iter().enumerate() {
            let (off, size) = self.frame_slot(fi, f, op)?;
            let rsize = var_size(&cf.rets[i]) as u32;
            r.push(ParamCopy { from: callee_info.ret_offsets[i], to: off, size: size.min(rsize) });
        }
        Ok(Op::Call { callee: ci, args: a, rets: r })
    }

    /// The frame offset and size of a call argument or result of function `fi`: a `.param` variable of
    /// its frame (or, in a device function, one of its own parameters).
    pub(super) fn frame_slot(&self, fi: usize, f: &Function, op: &Operand) -> DResult<(u32, u32)> {
        match op {
            Operand::Sym(Symbol::Local(l)) => match self.ctxs[fi].locals[l.index()] {
                LocalPlace::Frame(off) => Ok((off, var_size(&f.locals[*l]) as u32)),
                _ => Err("call argument must be a .param variable".into()),
            },
            Operand::Sym(Symbol::Param(n)) if f.kind == FuncKind::Func => {
                Ok((self.prog.functions[fi].param_offsets[*n as usize], var_size(&f.params[*n as usize]) as u32))
            }
            other => Err(Unsupported::Operand { expected: "a call argument", found: format!("{other:?}") }),
        }
    }

    /// A call of the external `vprintf` (CUDA's device `printf`): [`Op::Printf`]. The declaration must be
    /// CUDA's, `(.param .b32 r) vprintf(.param .b64 format, .param .b64 args)`, and the call must pass two
    /// 8-byte `.param` variables and receive the result in one of at least 4 bytes, or not at all.
    pub(super) fn decode_printf(
        &self,
        fi: usize,
        f: &Function,
        cf: &Function,
        args: &[Operand],
        rets: &[Operand],
    ) -> DResult<Op> {
        let declared = cf.params.len() == 2
            && cf.params.iter().all(|p| var_size(p) == 8)
            && cf.rets.len() <= 1
            && cf.rets.iter().all(|r| var_size(r) == 4);
        if !declared {
            return Err("`vprintf` must be declared as CUDA's `(.param .b32) vprintf(.param .b64, .param .b64)`".into());
        }
        if args.len() != 2 || rets.len() > cf.rets.len() {
            return Err(Unsupported::CallArity {
                callee: cf.name.clone(),
                args: args.len(),
                rets: rets.len(),
                params: 2,
                returns: cf.rets.len(),
            });
        }
        let (format, fsize) = self.frame_slot(fi, f, &args[0])?;
        let (buffer, bsize) = self.frame_slot(fi, f, &args[1])?;
        if fsize != 8 || bsize != 8 {
            return Err("the arguments of `vprintf` must be 8-byte .param variables".into());
        }
        let ret = match rets.first() {
            Some(op) => {
                let (off, size) = self.frame_slot(fi, f, op)?;
                if size < 4 {
                    return Err("the result of `vprintf` needs a .param variable of at least 4 bytes".into());
                }
                Some(off)
            }
            None => None,
        };
        Ok(Op::Printf { format, args: buffer, ret })
    }
}
