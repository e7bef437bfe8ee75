//! Module variables: their placement in the global, constant and shared spaces and their initial
//! memory image.

use super::*;

pub(super) fn var_size(v: &Variable) -> u64 {
    v.size_bytes()
}

/// Places variable `name` of `size` bytes aligned to `align` in `space` (named `what` in the message): its
/// offset, or an error when it does not fit the space.
pub(super) fn place_var(space: &mut Placer, name: &str, size: u64, align: u64, what: &str) -> Result<u64, DecodeError> {
    space.place(size, align.max(1)).ok_or_else(|| DecodeError::BadVariable {
        name: name.to_string(),
        why: format!(
            "{size} bytes (aligned to {align}) after {} bytes do not fit the {what} of {} bytes",
            space.used(),
            space.limit()
        ),
    })
}

/// Places `.global` variable `name` of `size` bytes aligned to `align` after `next`, between guard regions:
/// its address and the next free address; an error when it is larger than any allocation the layout
/// places ([`MAX_GLOBAL_VARIABLE`]) or the module's variables would run past [`GLOBAL_END`].
pub(super) fn place_global(next: u64, name: &str, size: u64, align: u64) -> Result<(u64, u64), DecodeError> {
    let (addr, end) = crate::layout::place_allocation(next, size, align);
    if size > MAX_GLOBAL_VARIABLE || end > GLOBAL_END {
        return Err(DecodeError::BadVariable {
            name: name.to_string(),
            why: format!(
                "{size} bytes: a module's .global variables hold at most {MAX_GLOBAL_VARIABLE} bytes each and end \
                 before {GLOBAL_END:#x}"
            ),
        });
    }
    Ok((addr, end))
}

/// A variable placed at `addr` (contents filled in later from its initializer).
pub(super) fn placed(v: &Variable, name: String, addr: u64) -> PlacedVar {
    PlacedVar {
        name,
        addr,
        size: var_size(v),
        init: Vec::new(),
        ty: v.ty,
        scalar: v.dims.is_empty() && v.vector.is_none(),
        align: v.alignment().max(1),
    }
}

impl<'m> Decoder<'m> {
    /// Places module-level `.global`, `.const` and `.shared` variables: the `.global` ones from `global_base`
    /// on ([`GLOBAL_BASE`] unless [`DecodeOptions::global_base`] says otherwise), each after the previous
    /// one's guard region.
    pub(super) fn place_module_vars(&mut self, global_base: u64) -> Result<(), DecodeError> {
        let mut global_next = global_base;
        let mut consts = Placer::new(0, WINDOW_SIZE);
        // Static shared memory is a 32-bit size (`Program::static_shared`).
        let mut shared = Placer::new(0, u64::from(u32::MAX));
        let mut dynamic_shared = Vec::new();
        for (gid, v) in self.m.globals.iter() {
            let size = var_size(v);
            let align = v.alignment().max(1);
            match v.space {
                StateSpace::Global => {
                    let (addr, next) = place_global(global_next, &v.name, size, align)?;
                    global_next = next;
                    self.global_addr.insert(gid, (StateSpace::Global, addr));
                    self.prog.globals.push(placed(v, v.name.clone(), addr));
                }
                StateSpace::Const => {
                    let addr = place_var(&mut consts, &v.name, size, align, ".const bank")?;
                    self.global_addr.insert(gid, (StateSpace::Const, addr));
                    self.prog.consts.push(placed(v, v.name.clone(), addr));
                }
                StateSpace::Shared => {
                    if v.dims.iter().any(|d| d.is_none()) {
                        dynamic_shared.push(gid);
                        continue;
                    }
                    let addr = place_var(&mut shared, &v.name, size, align, ".shared space")?;
                    self.global_addr.insert(gid, (StateSpace::Shared, addr));
                    self.prog.shared.push(placed(v, v.name.clone(), addr));
                }
                _ => {}
            }
        }
        // Function-scope shared variables are per-CTA too.
        let order = self.order.clone();
        for &fid in &order {
            for (_, v) in self.m.functions[fid].locals.iter() {
                let name = format!("{}::{}", self.m.functions[fid].name, v.name);
                if v.space == StateSpace::Shared && !v.dims.iter().any(|d| d.is_none()) {
                    let addr = place_var(&mut shared, &name, var_size(v), v.alignment().max(1), ".shared space")?;
                    self.prog.shared.push(placed(v, name, addr));
                } else if v.space == StateSpace::Const {
                    let addr = place_var(&mut consts, &name, var_size(v), v.alignment().max(1), ".const bank")?;
                    self.prog.consts.push(placed(v, name, addr));
                }
            }
        }
        let dyn_base = place_var(&mut shared, "dynamic shared memory", 0, 16, ".shared space")?;
        for gid in dynamic_shared {
            self.global_addr.insert(gid, (StateSpace::Shared, dyn_base));
            self.prog.uses_dynamic_shared = true;
        }
        // The placer's limit keeps it within 32 bits.
        self.prog.static_shared = dyn_base as u32;
        self.prog.const_size = consts.used();
        // Initializers (after placement, so address initializers resolve).
        let mut gi = 0;
        let mut ci = 0;
        for (_, v) in self.m.globals.iter() {
            let target = match v.space {
                StateSpace::Global => {
                    gi += 1;
                    Some((true, gi - 1))
                }
                StateSpace::Const => {
                    ci += 1;
                    Some((false, ci - 1))
                }
                _ => None,
            };
            if let (Some((is_global, idx)), Some(init)) = (target, &v.init) {
                // Only the initialized prefix is materialized; the rest is zero-filled when the launch
                // sets up memory (after its memory limit is checked).
                let bytes = self.write_init(v, init)?;
                if is_global {
                    self.prog.globals[idx].init = bytes;
                } else {
                    self.prog.consts[idx].init = bytes;
                }
            }
        }
        Ok(())
    }

    /// The bytes of `v`'s initializer (as many as it has values; the variable may be longer).
    pub(super) fn write_init(&self, v: &Variable, init: &Initializer) -> Result<Vec<u8>, DecodeError> {
        let elem = v.ty.bytes() as usize;
        let mut values = Vec::new();
        fn flatten<'a>(i: &'a Initializer, out: &mut Vec<&'a InitValue>) {
            match i {
                Initializer::Value(v) => out.push(v),
                Initializer::List(items) => items.iter().for_each(|x| flatten(x, out)),
            }
        }
        flatten(init, &mut values);
        let size = var_size(v);
        let needed = values.len().saturating_mul(elem);
        if needed as u64 > size {
            return Err(DecodeError::BadVariable {
                name: v.name.clone(),
                why: format!("{} initializer values for {size} bytes", values.len()),
            });
        }
        let mut out = vec![0u8; needed];
        for (i, val) in values.iter().enumerate() {
            let bits = match val {
                InitValue::Imm(imm) => imm_for(*imm, Some(v.ty)),
                InitValue::Addr { sym, generic, offset } => {
                    let base = match sym {
                        Symbol::Global(g) => match self.global_addr.get(g) {
                            Some((StateSpace::Global, a)) => *a,
                            Some((StateSpace::Const, a)) => {
                                if *generic {
                                    CONST_WINDOW + a
                                } else {
                                    *a
                                }
                            }
                            Some((StateSpace::Shared, a)) => {
                                if *generic {
                                    SHARED_WINDOW + a
                                } else {
                                    *a
                                }
                            }
                            _ => 0,
                        },
                        Symbol::Func(f) => FUNC_ADDR_BASE + *self.func_index.get(f).unwrap_or(&u32::MAX) as u64,
                        _ => 0,
                    };
                    base.wrapping_add(*offset as u64)
                }
            };
            let at = i * elem;
            out[at..at + elem].copy_from_slice(&bits.to_le_bytes()[..elem]);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::layout::{place_allocation, GLOBAL_BASE};
    use crate::{decode, function_points, select_kernel, DecodeOptions};

    /// The `.global` variables' addresses of `ptx` decoded with `global_base`.
    fn addresses(ptx: &str, global_base: Option<u64>) -> Vec<u64> {
        let m = reconverge_ptx::parse(ptx).expect("parses");
        let k = select_kernel(&m, None).expect("one kernel");
        let opts = DecodeOptions { global_base, ..Default::default() };
        let p = decode(&m, k, &|f| function_points(f, false), &opts).expect("decodes");
        p.globals.iter().map(|g| g.addr).collect()
    }

    /// A module's `.global` variables start at `GLOBAL_BASE` unless the options name another base (a
    /// further module of a program), each then placed after the previous one's guard as before.
    #[test]
    fn global_variables_start_at_the_base_the_options_give() {
        let ptx = ".version 8.0\n.target sm_80\n.address_size 64\n.global .align 4 .b8 a[100];\n\
                   .global .align 16 .b8 b[8];\n.visible .entry k()\n{\nret;\n}\n";
        let (a, next) = place_allocation(GLOBAL_BASE, 100, 4);
        let (b, _) = place_allocation(next, 8, 16);
        assert_eq!(addresses(ptx, None), [a, b], "the default layout is unchanged");
        assert_eq!(addresses(ptx, Some(GLOBAL_BASE)), [a, b]);
        let base = GLOBAL_BASE + (3 << 30);
        let (a2, next2) = place_allocation(base, 100, 4);
        let (b2, _) = place_allocation(next2, 8, 16);
        assert_eq!(addresses(ptx, Some(base)), [a2, b2]);
        assert!(a2 > base && a2 - base == a - GLOBAL_BASE, "the same layout, moved");
    }
}
