//! The PTX writer: one [`FnGen`] per function emits NVRTC-shaped PTX text while it draws random
//! statements, keeping a running estimate of the dynamic instruction count so that every kernel stays
//! small and terminates.

use crate::rng::Rng;
use crate::GenOptions;
use std::fmt::Write as _;

/// Words of thread-private shared memory per thread.
pub(crate) const SHARED_WORDS: u32 = 4;
/// Words of the per-frame `.local` array.
pub(crate) const LOCAL_WORDS: u32 = 8;
/// Elements of the input array.
pub(crate) const IN_LEN: u32 = 256;

/// A device function already written, as callers see it.
#[derive(Clone, Debug)]
pub(crate) struct Callee {
    /// Its name.
    pub name: String,
    /// Estimated dynamic instructions of one call (recursion included).
    pub cost: u64,
}

/// An enclosing loop: where `break` and `continue` go.
struct LoopCtx {
    exit: String,
    latch: String,
}

/// Facts shared by every function of one kernel.
pub(crate) struct KernelFacts {
    /// Trace slots per thread (the last one receives the final counter).
    pub slots: u32,
    /// Threads per CTA.
    pub threads: u32,
    /// Whether the block is two-dimensional (`block.x` is then `bx`).
    pub two_d: Option<u32>,
    /// Name of the module-scope shared array, if any.
    pub smem: Option<String>,
}

/// Writes one function.
pub(crate) struct FnGen<'a> {
    rng: &'a mut Rng,
    opts: &'a GenOptions,
    facts: &'a KernelFacts,
    /// Next block code (shared by all functions, so every code is distinct in the kernel).
    codes: &'a mut u32,
    /// Index used in label names (`$L__BB{index}_{n}`) and the local depot's name.
    index: usize,
    body: String,
    nr: u32,
    nrd: u32,
    np: u32,
    nlabel: u32,
    /// 32-bit variables.
    vars: Vec<String>,
    /// 64-bit variables.
    wvars: Vec<String>,
    /// CTA-local linear thread index.
    ltid: String,
    /// Input value (kernel: `in[gtid]`; function: its argument).
    v: String,
    /// Scalar kernel parameter (kernel only).
    cparam: Option<String>,
    /// Pointer to `in` (kernel only).
    in_ptr: Option<String>,
    /// Pointer to this thread's first trace slot.
    out: String,
    /// Trace counter.
    k: String,
    /// Recursion depth argument (functions).
    depth: Option<String>,
    /// `%SPL` (local-space depot address), when the function has a `.local` array.
    spl: Option<String>,
    /// `%SP` (generic depot address).
    sp: Option<String>,
    loops: Vec<LoopCtx>,
    fwd: Vec<String>,
    /// Estimated dynamic instructions so far.
    pub cost: u64,
    mult: u64,
    budget: u64,
    is_kernel: bool,
    callees: &'a [Callee],
    /// For a self-recursive function: its name (the self call is emitted at most once).
    self_name: Option<String>,
    self_calls: u32,
    calls_left: u32,
    /// Inside a barrier nest: no statement may leave it or end the thread (every thread must reach
    /// every `bar.sync`).
    in_barrier_nest: bool,
    /// The function's name.
    name: String,
}

/// What one generated function is: its position, name and kind, what it may call, and its budget.
pub(crate) struct FnSpec<'a> {
    /// Its index among the module's functions (the kernel comes last).
    pub index: usize,
    /// Its name.
    pub name: String,
    /// The kernel rather than a device function.
    pub is_kernel: bool,
    /// The functions it may call (defined before it).
    pub callees: &'a [Callee],
    /// Estimated dynamic instructions it may take.
    pub budget: u64,
    /// It may call itself (once).
    pub recursive: bool,
}

impl<'a> FnGen<'a> {
    /// A generator of the function `spec`, drawing from `rng` under `opts`, recording the kernel's
    /// `facts` and numbering trace codes from `codes`.
    pub(crate) fn new(
        rng: &'a mut Rng,
        opts: &'a GenOptions,
        facts: &'a KernelFacts,
        codes: &'a mut u32,
        spec: FnSpec<'a>,
    ) -> FnGen<'a> {
        let FnSpec { index, name, is_kernel, callees, budget, recursive } = spec;
        let self_name = recursive.then(|| name.clone());
        FnGen {
            rng,
            opts,
            facts,
            codes,
            index,
            body: String::new(),
            nr: 0,
            nrd: 0,
            np: 0,
            nlabel: 0,
            vars: Vec::new(),
            wvars: Vec::new(),
            ltid: String::new(),
            v: String::new(),
            cparam: None,
            in_ptr: None,
            out: String::new(),
            k: String::new(),
            depth: None,
            spl: None,
            sp: None,
            loops: Vec::new(),
            fwd: Vec::new(),
            cost: 0,
            mult: 1,
            budget,
            is_kernel,
            callees,
            self_name,
            self_calls: 0,
            calls_left: if is_kernel { 3 } else { 1 },
            in_barrier_nest: false,
            name,
        }
    }

    // ---- text ------------------------------------------------------------------------------------------

    fn r(&mut self) -> String {
        self.nr += 1;
        format!("%r{}", self.nr)
    }

    fn rd(&mut self) -> String {
        self.nrd += 1;
        format!("%rd{}", self.nrd)
    }

    fn p(&mut self) -> String {
        self.np += 1;
        format!("%p{}", self.np)
    }

    fn label(&mut self) -> String {
        self.nlabel += 1;
        format!("$L__BB{}_{}", self.index, self.nlabel)
    }

    fn ins(&mut self, s: impl AsRef<str>) {
        let s = s.as_ref();
        // NVRTC aligns operands with a tab after the opcode.
        match s.split_once(' ') {
            Some((op, rest)) if !op.starts_with('@') => {
                let _ = writeln!(self.body, "\t{op} \t{rest};");
            }
            _ => {
                let _ = writeln!(self.body, "\t{s};");
            }
        }
        self.cost += self.mult;
    }

    fn place(&mut self, label: &str) {
        let _ = writeln!(self.body, "{label}:");
    }

    fn var(&mut self) -> String {
        self.rng.pick(&self.vars).clone()
    }

    fn wvar(&mut self) -> String {
        self.rng.pick(&self.wvars).clone()
    }

    fn over_budget(&self) -> bool {
        self.cost >= self.budget
    }

    fn next_code(&mut self) -> u32 {
        *self.codes += 1;
        *self.codes
    }

    // ---- prologues and epilogues -------------------------------------------------------------------------

    /// Computes the CTA-local linear thread index into a fresh register.
    fn emit_ltid(&mut self) -> String {
        let tx = self.r();
        self.ins(format!("mov.u32 {tx}, %tid.x"));
        if self.facts.two_d.is_some() {
            let (ty, nx, l) = (self.r(), self.r(), self.r());
            self.ins(format!("mov.u32 {ty}, %tid.y"));
            self.ins(format!("mov.u32 {nx}, %ntid.x"));
            self.ins(format!("mad.lo.s32 {l}, {ty}, {nx}, {tx}"));
            l
        } else {
            tx
        }
    }

    fn init_local(&mut self, uses_local: bool) {
        if !uses_local {
            return;
        }
        let (spl, sp) = ("%SPL".to_string(), "%SP".to_string());
        self.ins(format!("mov.u64 {spl}, __local_depot{}", self.index));
        self.ins(format!("cvta.local.u64 {sp}, {spl}"));
        self.spl = Some(spl.clone());
        self.sp = Some(sp);
        for j in 0..LOCAL_WORDS {
            let src = if self.rng.chance(0.5) { self.ltid.clone() } else { self.var() };
            self.ins(format!("st.local.u32 [{spl}+{}], {src}", 4 * j));
        }
    }

    fn init_shared(&mut self) {
        let Some(smem) = self.facts.smem.clone() else { return };
        if !self.opts.shared_memory {
            return;
        }
        let (b, a) = (self.r(), self.r());
        self.ins(format!("mov.u32 {b}, {smem}"));
        self.ins(format!("mad.lo.s32 {a}, {}, {}, {b}", self.ltid, 4 * SHARED_WORDS));
        for j in 0..SHARED_WORDS {
            let src = self.var();
            self.ins(format!("st.shared.u32 [{a}+{}], {src}", 4 * j));
        }
    }

    /// Kernel prologue: parameters, thread indices, input value, output pointer, variables.
    pub(crate) fn kernel_prologue(&mut self, uses_local: bool) {
        let name = self.name.clone();
        let (pin, pout, pc) = (self.rd(), self.rd(), self.r());
        self.ins(format!("ld.param.u64 {pin}, [{name}_param_0]"));
        self.ins(format!("ld.param.u64 {pout}, [{name}_param_1]"));
        self.ins(format!("ld.param.u32 {pc}, [{name}_param_2]"));
        let (gin, gout) = (self.rd(), self.rd());
        self.ins(format!("cvta.to.global.u64 {gin}, {pin}"));
        self.ins(format!("cvta.to.global.u64 {gout}, {pout}"));
        self.ltid = self.emit_ltid();
        let (cta, bs, gtid) = (self.r(), self.r(), self.r());
        self.ins(format!("mov.u32 {cta}, %ctaid.x"));
        if self.facts.two_d.is_some() {
            let (nx, ny) = (self.r(), self.r());
            self.ins(format!("mov.u32 {nx}, %ntid.x"));
            self.ins(format!("mov.u32 {ny}, %ntid.y"));
            self.ins(format!("mul.lo.s32 {bs}, {nx}, {ny}"));
        } else {
            self.ins(format!("mov.u32 {bs}, %ntid.x"));
        }
        self.ins(format!("mad.lo.s32 {gtid}, {cta}, {bs}, {}", self.ltid));
        let (off, addr, v) = (self.rd(), self.rd(), self.r());
        self.ins(format!("mul.wide.s32 {off}, {gtid}, 4"));
        self.ins(format!("add.s64 {addr}, {gin}, {off}"));
        self.ins(format!("ld.global.u32 {v}, [{addr}]"));
        let (base, boff, out) = (self.r(), self.rd(), self.rd());
        self.ins(format!("mul.lo.s32 {base}, {gtid}, {}", self.facts.slots));
        self.ins(format!("mul.wide.s32 {boff}, {base}, 4"));
        self.ins(format!("add.s64 {out}, {gout}, {boff}"));
        let k = self.r();
        self.ins(format!("mov.u32 {k}, 0"));
        self.v = v.clone();
        self.cparam = Some(pc.clone());
        self.in_ptr = Some(gin);
        self.out = out;
        self.k = k;
        // Variables.
        let (v0, v1, v2, v3) = (self.r(), self.r(), self.r(), self.r());
        self.ins(format!("mov.u32 {v0}, {v}"));
        self.ins(format!("mov.u32 {v1}, {gtid}"));
        self.ins(format!("xor.b32 {v2}, {v}, {pc}"));
        self.ins(format!("mul.lo.s32 {v3}, {gtid}, -1640531535"));
        let (w0, w1) = (self.rd(), self.rd());
        self.ins(format!("cvt.s64.s32 {w0}, {v}"));
        self.ins(format!("mul.wide.u32 {w1}, {gtid}, 40503"));
        self.vars = vec![v0, v1, v2, v3];
        self.wvars = vec![w0, w1];
        self.init_local(uses_local);
        self.init_shared();
    }

    /// Device-function prologue: `(out, k, x, depth)` parameters and variables.
    pub(crate) fn func_prologue(&mut self, uses_local: bool) {
        let name = self.name.clone();
        let (out, k, x, d) = (self.rd(), self.r(), self.r(), self.r());
        self.ins(format!("ld.param.u64 {out}, [{name}_param_0]"));
        self.ins(format!("ld.param.u32 {k}, [{name}_param_1]"));
        self.ins(format!("ld.param.u32 {x}, [{name}_param_2]"));
        self.ins(format!("ld.param.u32 {d}, [{name}_param_3]"));
        self.out = out;
        self.k = k;
        self.v = x.clone();
        self.depth = Some(d.clone());
        self.ltid = self.emit_ltid();
        let (v0, v1, v2) = (self.r(), self.r(), self.r());
        let c = self.rng.range_i(-50, 50);
        self.ins(format!("add.s32 {v0}, {x}, {c}"));
        self.ins(format!("xor.b32 {v1}, {x}, {}", self.ltid));
        self.ins(format!("mad.lo.s32 {v2}, {d}, 7, {x}"));
        let w0 = self.rd();
        let c = self.rng.range_i(-9, 9);
        self.ins(format!("mul.wide.s32 {w0}, {x}, {c}"));
        self.vars = vec![v0, v1, v2];
        self.wvars = vec![w0];
        self.init_local(uses_local);
        self.init_shared();
    }

    /// Appends every variable to the trace, then (kernel) stores the final counter in the last slot.
    pub(crate) fn epilogue(&mut self) {
        let vars = self.vars.clone();
        for v in vars.iter().take(if self.is_kernel { 4 } else { 1 }) {
            self.trace(v);
        }
        if self.is_kernel {
            let last = 4 * (self.facts.slots - 1);
            self.ins(format!("st.global.u32 [{}+{last}], {}", self.out, self.k));
            self.ins("ret");
        } else {
            self.func_return();
        }
    }

    /// Packs `(k << 32) | vars[0]` into the return value and returns.
    fn func_return(&mut self) {
        let (a, b, c, d) = (self.rd(), self.rd(), self.rd(), self.rd());
        self.ins(format!("cvt.u64.u32 {a}, {}", self.vars[0]));
        self.ins(format!("cvt.u64.u32 {b}, {}", self.k));
        self.ins(format!("shl.b64 {c}, {b}, 32"));
        self.ins(format!("or.b64 {d}, {c}, {a}"));
        self.ins(format!("st.param.b64 [func_retval0+0], {d}"));
        self.ins("ret");
    }

    // ---- building blocks ---------------------------------------------------------------------------------

    /// Appends `val` to this thread's trace (when a slot is left) and counts it.
    fn trace(&mut self, val: &str) {
        let (p, off, addr) = (self.p(), self.rd(), self.rd());
        self.ins(format!("setp.lt.u32 {p}, {}, {}", self.k, self.facts.slots - 1));
        if self.rng.chance(0.5) {
            self.ins(format!("mul.wide.u32 {off}, {}, 4", self.k));
        } else {
            let w = self.rd();
            self.ins(format!("cvt.u64.u32 {w}, {}", self.k));
            self.ins(format!("shl.b64 {off}, {w}, 2"));
        }
        self.ins(format!("add.s64 {addr}, {}, {off}", self.out));
        let space = if self.rng.chance(0.8) { ".global" } else { "" };
        self.ins(format!("@{p} st{space}.u32 [{addr}], {val}"));
        self.ins(format!("add.s32 {}, {}, 1", self.k, self.k));
    }

    /// A basic block's side effect: its code mixed with a variable, appended to the trace.
    fn block_mark(&mut self) {
        let code = self.next_code();
        let (v, t) = (self.var(), self.r());
        self.ins(format!("mad.lo.s32 {t}, {v}, 4096, {code}"));
        self.trace(&t);
    }

    /// A predicate from tid, data, the scalar parameter or variables.
    fn cond(&mut self) -> String {
        let p = self.p();
        let lt = self.ltid.clone();
        let data = self.opts.data_conditions;
        match self.rng.weighted(&[4, 3, 2, 3 * data as u32, 2 * data as u32, 3, 2, 1, 1]) {
            0 => {
                let (k, t) = (self.rng.range(2, 8), self.r());
                let j = self.rng.range(1, k - 1);
                self.ins(format!("rem.u32 {t}, {lt}, {k}"));
                self.ins(format!("setp.lt.u32 {p}, {t}, {j}"));
            }
            1 => {
                let (m, t) = (self.rng.range(1, 31), self.r());
                self.ins(format!("and.b32 {t}, {lt}, {m}"));
                let cmp = if self.rng.chance(0.5) { "ne" } else { "eq" };
                self.ins(format!("setp.{cmp}.s32 {p}, {t}, 0"));
            }
            2 => {
                let c = self.rng.range(0, self.facts.threads as u64);
                let cmp = *self.rng.pick(&["gt", "lt", "ge", "le"]);
                self.ins(format!("setp.{cmp}.u32 {p}, {lt}, {c}"));
            }
            3 => {
                let c = self.rng.range_i(-600, 600);
                let cmp = *self.rng.pick(&["gt", "lt", "ge", "ne"]);
                self.ins(format!("setp.{cmp}.s32 {p}, {}, {c}", self.v));
            }
            4 => match self.cparam.clone() {
                Some(c) => self.ins(format!("setp.lt.s32 {p}, {}, {c}", self.v)),
                None => {
                    let c = self.rng.range_i(-600, 600);
                    self.ins(format!("setp.gt.s32 {p}, {}, {c}", self.v));
                }
            },
            5 => {
                let (v, t) = (self.var(), self.r());
                let bit = self.rng.range(0, 4);
                self.ins(format!("bfe.u32 {t}, {v}, {bit}, 1"));
                self.ins(format!("setp.eq.b32 {p}, {t}, 1"));
            }
            6 => {
                let (a, b) = (self.var(), self.var());
                let (cmp, ty) = *self.rng.pick(&[("lt", "s32"), ("gt", "u32"), ("le", "u32"), ("ne", "b32")]);
                self.ins(format!("setp.{cmp}.{ty} {p}, {a}, {b}"));
            }
            7 => {
                // A combined comparison: setp.cmp.bool with a predicate operand.
                let (q, t) = (self.p(), self.r());
                self.ins(format!("and.b32 {t}, {lt}, 1"));
                self.ins(format!("setp.eq.s32 {q}, {t}, 0"));
                let c = self.rng.range(0, self.facts.threads as u64);
                let op = *self.rng.pick(&["and", "or", "xor"]);
                let neg = if self.rng.chance(0.3) { "!" } else { "" };
                self.ins(format!("setp.lt.{op}.u32 {p}, {lt}, {c}, {neg}{q}"));
            }
            _ => {
                let (a, b) = (self.wvar(), self.wvar());
                self.ins(format!("setp.lt.u64 {p}, {a}, {b}"));
            }
        }
        if self.rng.chance(0.15) {
            let q = self.p();
            self.ins(format!("not.pred {q}, {p}"));
            return q;
        }
        p
    }

    /// One to three random arithmetic instructions on the variables.
    fn arith(&mut self) {
        for _ in 0..self.rng.range(1, 3) {
            let d = self.var();
            let (a, b) = (self.var(), self.var());
            let imm = self.rng.range_i(-100, 100);
            let text = match self.rng.range(0, 27) {
                0 => format!("add.s32 {d}, {a}, {b}"),
                1 => format!("sub.s32 {d}, {a}, {imm}"),
                2 => format!("mul.lo.s32 {d}, {a}, {imm}"),
                3 => {
                    let c = self.var();
                    format!("mad.lo.s32 {d}, {a}, {b}, {c}")
                }
                4 => format!("xor.b32 {d}, {a}, {b}"),
                5 => format!("and.b32 {d}, {a}, {}", self.rng.range(1, 0xFFFF)),
                6 => format!("or.b32 {d}, {a}, {b}"),
                7 => format!("shl.b32 {d}, {a}, {}", self.rng.range(0, 31)),
                8 => format!("shr.u32 {d}, {a}, {}", self.rng.range(0, 31)),
                9 => format!("shr.s32 {d}, {a}, {}", self.rng.range(0, 31)),
                10 => format!("min.s32 {d}, {a}, {b}"),
                11 => format!("max.u32 {d}, {a}, {b}"),
                12 => {
                    let p = self.p();
                    self.ins(format!("setp.gt.s32 {p}, {a}, {b}"));
                    format!("selp.b32 {d}, {a}, {imm}, {p}")
                }
                13 => format!("rem.u32 {d}, {a}, {}", self.rng.range(1, 9)),
                14 => format!("div.s32 {d}, {a}, {}", *self.rng.pick(&[-7i64, -3, 2, 3, 5, 11])),
                15 => {
                    let (w, t) = (self.wvar(), self.rd());
                    self.ins(format!("mul.wide.s32 {t}, {a}, {b}"));
                    format!("add.s64 {w}, {w}, {t}")
                }
                16 => {
                    let (w, x) = (self.wvar(), self.wvar());
                    format!("xor.b64 {w}, {w}, {x}")
                }
                17 => {
                    let (w, t) = (self.wvar(), self.rd());
                    let sh = self.rng.range(0, 40);
                    self.ins(format!("shr.u64 {t}, {w}, {sh}"));
                    format!("cvt.u32.u64 {d}, {t}")
                }
                18 => {
                    let w = self.wvar();
                    format!("cvt.s64.s32 {w}, {a}")
                }
                19 => format!("popc.b32 {d}, {a}"),
                20 => format!("brev.b32 {d}, {a}"),
                21 => {
                    let w = self.wvar();
                    format!("mul.lo.s64 {w}, {w}, {}", self.rng.range_i(-1000, 1000))
                }
                22 => {
                    let (w, x) = (self.wvar(), self.wvar());
                    let op = *self.rng.pick(&["min.s64", "max.s64", "min.u64", "max.u64", "sub.s64"]);
                    format!("{op} {w}, {w}, {x}")
                }
                23 => {
                    let w = self.wvar();
                    format!("shl.b64 {w}, {w}, {}", self.rng.range(0, 63))
                }
                24 => {
                    let (w, x, p) = (self.wvar(), self.wvar(), self.p());
                    self.ins(format!("setp.ge.s64 {p}, {w}, {x}"));
                    format!("selp.b64 {w}, {w}, {x}, {p}")
                }
                25 => format!("not.b32 {d}, {a}"),
                26 => format!("neg.s32 {d}, {a}"),
                _ => format!("max.s32 {d}, {a}, {imm}"),
            };
            self.ins(text);
        }
    }

    // ---- statements ----------------------------------------------------------------------------------------

    /// A sequence of up to `n` statements nested at most `depth` deep.
    pub(crate) fn stmts(&mut self, depth: u32, n: u32) {
        for _ in 0..n {
            if self.over_budget() {
                break;
            }
            self.stmt(depth);
        }
    }

    fn stmt(&mut self, depth: u32) {
        let o = self.opts;
        let nest = (depth > 0) as u32;
        let in_loop = !self.loops.is_empty() as u32;
        let lp = (o.loops && self.mult < 64) as u32 * nest;
        let un = o.unstructured as u32 * nest;
        let calls = (o.calls
            && !self.in_barrier_nest
            && self.calls_left > 0
            && (!self.callees.is_empty() || self.self_name.is_some())) as u32;
        let w = [
            6,                                                         // 0 block
            4,                                                         // 1 arithmetic
            5 * nest,                                                  // 2 if
            5 * nest,                                                  // 3 if-else
            3 * nest,                                                  // 4 short circuit
            4 * lp,                                                    // 5 counted loop
            2 * lp,                                                    // 6 while loop
            2 * lp * un,                                               // 7 backward goto
            2 * lp * un,                                               // 8 irreducible
            2 * un,                                                    // 9 forward-goto region
            (!self.fwd.is_empty()) as u32 * 3,                         // 10 goto forward
            2 * in_loop,                                               // 11 break
            2 * in_loop,                                               // 12 continue
            (o.early_exit && !self.in_barrier_nest) as u32,            // 13 early exit
            4 * calls,                                                 // 14 call
            2 * self.spl.is_some() as u32,                             // 15 local memory
            2 * (o.shared_memory && self.facts.smem.is_some()) as u32, // 16 shared memory
            2 * un,                                                    // 17 jump into an else branch
            (self.is_kernel && o.data_conditions) as u32,              // 18 load data
            2 * nest * o.indirect_branches as u32,                     // 19 switch through brx.idx
        ];
        match self.rng.weighted(&w) {
            0 => self.block_mark(),
            1 => self.arith(),
            2 => self.s_if(depth),
            3 => self.s_if_else(depth),
            4 => self.s_short_circuit(depth),
            5 => self.s_loop(depth, true),
            6 => self.s_loop(depth, false),
            7 => self.s_backward_goto(depth),
            8 => self.s_irreducible(depth),
            9 => self.s_goto_region(depth),
            10 => self.s_goto(),
            11 => self.s_break(),
            12 => self.s_continue(),
            13 => self.s_early_exit(),
            14 => self.s_call(),
            15 => self.s_local(),
            16 => self.s_shared(),
            17 => self.s_jump_into_else(depth),
            18 => self.s_load(),
            _ => self.s_switch(depth),
        }
    }

    fn n_stmts(&mut self) -> u32 {
        self.rng.range(1, self.opts.max_stmts.max(1) as u64) as u32
    }

    fn s_if(&mut self, depth: u32) {
        let p = self.cond();
        let end = self.label();
        self.ins(format!("@!{p} bra {end}"));
        self.block_mark();
        let n = self.n_stmts();
        self.stmts(depth - 1, n);
        self.place(&end);
    }

    fn s_if_else(&mut self, depth: u32) {
        let p = self.cond();
        let (other, end) = (self.label(), self.label());
        self.ins(format!("@{p} bra {other}"));
        self.block_mark();
        let n = self.n_stmts();
        self.stmts(depth - 1, n);
        self.ins(format!("bra.uni {end}"));
        self.place(&other);
        self.block_mark();
        let n = self.n_stmts();
        self.stmts(depth - 1, n);
        self.place(&end);
    }

    /// `if (A && B) C; else D;` (seed 003 Fig. 1) or `if (A || B) C; else D;`.
    fn s_short_circuit(&mut self, depth: u32) {
        let (c_lab, d_lab, e_lab) = (self.label(), self.label(), self.label());
        let and = self.rng.chance(0.6);
        let a = self.cond();
        if and {
            self.ins(format!("@!{a} bra {d_lab}"));
        } else {
            self.ins(format!("@{a} bra {c_lab}"));
        }
        self.block_mark(); // B
        let b = self.cond();
        // Both shapes leave B for D when B is false; they differ in where A goes.
        self.ins(format!("@!{b} bra {d_lab}"));
        self.place(&c_lab); // C
        self.block_mark();
        let n = self.n_stmts();
        self.stmts(depth - 1, n);
        self.ins(format!("bra.uni {e_lab}"));
        self.place(&d_lab); // D
        self.block_mark();
        let n = self.n_stmts();
        self.stmts(depth - 1, n);
        self.place(&e_lab); // E
        self.block_mark();
    }

    /// A trip count in a fresh register and its maximum: `(x % m) + 1`, or `x % m` (possibly 0) for
    /// while loops, with `x` the thread index, the input value or a variable.
    fn trip(&mut self, at_least_one: bool) -> (String, u64) {
        let t = self.r();
        let n = self.r();
        let max = if self.mult >= 16 { 2 } else { self.rng.range(2, 5) };
        let src = match self.rng.range(0, 2) {
            0 => self.ltid.clone(),
            1 => self.v.clone(),
            _ => self.var(),
        };
        self.ins(format!("and.b32 {t}, {src}, 2147483647"));
        self.ins(format!("rem.u32 {n}, {t}, {max}"));
        if at_least_one {
            let n1 = self.r();
            self.ins(format!("add.s32 {n1}, {n}, 1"));
            (n1, max)
        } else {
            (n, max)
        }
    }

    /// A counted loop: do-while form (`bottom == true`, body at least once) or while form (test on top).
    fn s_loop(&mut self, depth: u32, bottom: bool) {
        let (n, max) = self.trip(bottom);
        let i = self.r();
        self.ins(format!("mov.u32 {i}, 0"));
        let (head, latch, exit) = (self.label(), self.label(), self.label());
        let saved = self.mult;
        self.place(&head);
        self.mult = saved * max;
        if !bottom {
            let p = self.p();
            self.ins(format!("setp.ge.u32 {p}, {i}, {n}"));
            self.ins(format!("@{p} bra {exit}"));
        }
        self.block_mark();
        self.loops.push(LoopCtx { exit: exit.clone(), latch: latch.clone() });
        let k = self.n_stmts();
        self.stmts(depth - 1, k);
        self.loops.pop();
        self.place(&latch);
        self.ins(format!("add.s32 {i}, {i}, 1"));
        if bottom {
            let p = self.p();
            self.ins(format!("setp.lt.u32 {p}, {i}, {n}"));
            self.ins(format!("@{p} bra {head}"));
        } else {
            self.ins(format!("bra.uni {head}"));
        }
        self.mult = saved;
        self.place(&exit);
        self.block_mark();
    }

    /// The shape of the CUDA samples' `bitonicSortShared`: two nested loops with uniform trip counts
    /// whose inner body holds `bar.sync 0` (at its top, as there, or at its bottom) and an `if` on the
    /// thread index with random statements inside (possibly divergent), after a few converged
    /// instructions. Written at the top of the kernel, before any early exit; nothing inside may leave
    /// the nest or end a thread, so every thread reaches every barrier.
    pub(crate) fn barrier_nest(&mut self, depth: u32) {
        let (outer_n, inner_n) = (self.rng.range(1, 3), self.rng.range(2, 4));
        let sync_on_top = self.rng.chance(0.6);
        let saved = (self.mult, std::mem::take(&mut self.loops), std::mem::take(&mut self.fwd));
        self.in_barrier_nest = true;
        let (i, j) = (self.r(), self.r());
        let (outer, inner, inner_exit) = (self.label(), self.label(), self.label());
        self.ins(format!("mov.u32 {i}, 0"));
        self.place(&outer);
        self.mult = saved.0 * outer_n;
        self.block_mark();
        // The inner loop in NVRTC's rotated form: a (uniform) guard that skips it, then a do-while.
        let g = self.p();
        self.ins(format!("mov.u32 {j}, 0"));
        self.ins(format!("setp.ge.u32 {g}, {j}, {inner_n}"));
        self.ins(format!("@{g} bra {inner_exit}"));
        self.place(&inner);
        self.mult = saved.0 * outer_n * inner_n;
        if sync_on_top {
            self.ins("bar.sync 0");
        }
        self.block_mark();
        for _ in 0..self.rng.range(2, 6) {
            self.arith();
        }
        let p = self.p();
        let lt = self.ltid.clone();
        let (k, t) = (self.rng.range(2, 8), self.r());
        let m = self.rng.range(1, k - 1);
        self.ins(format!("rem.u32 {t}, {lt}, {k}"));
        self.ins(format!("setp.lt.u32 {p}, {t}, {m}"));
        let skip = self.label();
        self.ins(format!("@!{p} bra {skip}"));
        self.block_mark();
        let n = self.n_stmts();
        self.stmts(depth.saturating_sub(1).max(1), n);
        self.place(&skip);
        if !sync_on_top {
            self.ins("bar.sync 0");
        }
        let (q, r) = (self.p(), self.p());
        self.ins(format!("add.s32 {j}, {j}, 1"));
        self.ins(format!("setp.lt.u32 {q}, {j}, {inner_n}"));
        self.ins(format!("@{q} bra {inner}"));
        self.mult = saved.0 * outer_n;
        self.place(&inner_exit);
        self.ins(format!("add.s32 {i}, {i}, 1"));
        self.ins(format!("setp.lt.u32 {r}, {i}, {outer_n}"));
        self.ins(format!("@{r} bra {outer}"));
        (self.mult, self.loops, self.fwd) = saved;
        self.in_barrier_nest = false;
        self.block_mark();
    }

    /// `top: ...; if (--c > 0) goto top;`
    fn s_backward_goto(&mut self, depth: u32) {
        let (c, max) = self.trip(true);
        let top = self.label();
        let saved = self.mult;
        self.place(&top);
        self.mult = saved * max;
        self.block_mark();
        let k = self.n_stmts();
        self.stmts(depth - 1, k);
        let p = self.p();
        self.ins(format!("add.s32 {c}, {c}, -1"));
        self.ins(format!("setp.gt.s32 {p}, {c}, 0"));
        self.ins(format!("@{p} bra {top}"));
        self.mult = saved;
        self.block_mark();
    }

    /// A cycle {A, B} entered at A or at B; every visit of either block decrements a shared counter.
    fn s_irreducible(&mut self, depth: u32) {
        let (c, max) = self.trip(true);
        let entry = self.cond();
        let (a, b, x) = (self.label(), self.label(), self.label());
        self.ins(format!("@{entry} bra {b}"));
        let saved = self.mult;
        self.mult = saved * max;
        self.place(&a);
        self.block_mark();
        let k = self.n_stmts().min(2);
        self.stmts(depth - 1, k);
        let p = self.p();
        self.ins(format!("add.s32 {c}, {c}, -1"));
        self.ins(format!("setp.lt.s32 {p}, {c}, 1"));
        self.ins(format!("@{p} bra {x}"));
        self.place(&b);
        self.block_mark();
        let k = self.n_stmts().min(2);
        self.stmts(depth - 1, k);
        let q = self.p();
        self.ins(format!("add.s32 {c}, {c}, -1"));
        self.ins(format!("setp.gt.s32 {q}, {c}, 0"));
        self.ins(format!("@{q} bra {a}"));
        self.mult = saved;
        self.place(&x);
        self.block_mark();
    }

    /// A region whose end label nested statements may jump to (`goto out;`).
    fn s_goto_region(&mut self, depth: u32) {
        let end = self.label();
        self.fwd.push(end.clone());
        let k = self.n_stmts();
        self.stmts(depth - 1, k);
        self.fwd.pop();
        self.place(&end);
        self.block_mark();
    }

    fn s_goto(&mut self) {
        let target = self.rng.pick(&self.fwd).clone();
        let p = self.cond();
        self.ins(format!("@{p} bra {target}"));
        self.block_mark();
    }

    fn s_break(&mut self) {
        // Usually the innermost loop; sometimes an outer one (a labelled break).
        let i = if self.rng.chance(0.75) {
            self.loops.len() - 1
        } else {
            self.rng.range(0, self.loops.len() as u64 - 1) as usize
        };
        let exit = self.loops[i].exit.clone();
        let p = self.cond();
        self.ins(format!("@{p} bra {exit}"));
        self.block_mark();
    }

    fn s_continue(&mut self) {
        let latch = self.loops[self.loops.len() - 1].latch.clone();
        let p = self.cond();
        self.ins(format!("@{p} bra {latch}"));
        self.block_mark();
    }

    /// `@p ret` / `@p exit` for a minority of threads (functions: an early `return` or `exit`).
    fn s_early_exit(&mut self) {
        // Narrow conditions so that most threads go on.
        let p = self.p();
        let (t, lt) = (self.r(), self.ltid.clone());
        let k = self.rng.range(3, 9);
        self.ins(format!("rem.u32 {t}, {lt}, {k}"));
        let j = self.rng.range(0, k - 1);
        self.ins(format!("setp.eq.s32 {p}, {t}, {j}"));
        if self.is_kernel {
            let op = if self.rng.chance(0.5) { "ret" } else { "exit" };
            self.ins(format!("@{p} {op}"));
        } else if self.rng.chance(0.3) {
            self.ins(format!("@{p} exit"));
        } else {
            let skip = self.label();
            self.ins(format!("@!{p} bra {skip}"));
            self.block_mark();
            self.func_return();
            self.place(&skip);
        }
        self.block_mark();
    }

    /// A call in NVRTC's staging style; the callee appends to the trace and returns `(k << 32) | value`.
    fn s_call(&mut self) {
        let remaining = self.budget.saturating_sub(self.cost);
        let mut options: Vec<(String, u64, bool)> = self
            .callees
            .iter()
            .filter(|c| c.cost.saturating_mul(self.mult) <= remaining)
            .map(|c| (c.name.clone(), c.cost, false))
            .collect();
        if let Some(me) = &self.self_name {
            if self.self_calls == 0 && self.loops.is_empty() && self.mult == 1 {
                options.push((me.clone(), 0, true));
            }
        }
        if options.is_empty() {
            return self.arith();
        }
        let (callee, cost, recursive) = self.rng.pick(&options).clone();
        self.calls_left -= 1;
        let x = self.var();
        let depth = self.r();
        let skip = self.label();
        if recursive {
            self.self_calls += 1;
            let Some(d) = self.depth.clone() else { return };
            let p = self.p();
            self.ins(format!("setp.lt.s32 {p}, {d}, 1"));
            self.ins(format!("@{p} bra {skip}"));
            self.ins(format!("add.s32 {depth}, {d}, -1"));
        } else {
            let src = if self.rng.chance(0.5) { self.ltid.clone() } else { x.clone() };
            self.ins(format!("and.b32 {depth}, {src}, 3"));
        }
        let seq = self.nlabel;
        let _ = writeln!(self.body, "\t{{ // callseq {seq}, 0");
        let _ = writeln!(self.body, "\t.reg .b32 temp_param_reg;");
        let _ = writeln!(self.body, "\t.param .b64 param0;");
        self.ins(format!("st.param.b64 [param0+0], {}", self.out));
        let _ = writeln!(self.body, "\t.param .b32 param1;");
        self.ins(format!("st.param.b32 [param1+0], {}", self.k));
        let _ = writeln!(self.body, "\t.param .b32 param2;");
        self.ins(format!("st.param.b32 [param2+0], {x}"));
        let _ = writeln!(self.body, "\t.param .b32 param3;");
        self.ins(format!("st.param.b32 [param3+0], {depth}"));
        let _ = writeln!(self.body, "\t.param .b64 retval0;");
        let uni = if self.rng.chance(0.7) { ".uni" } else { "" };
        let _ = writeln!(
            self.body,
            "\tcall{uni} (retval0), \n\t{callee}, \n\t(\n\tparam0, \n\tparam1, \n\tparam2, \n\tparam3\n\t);"
        );
        self.cost += self.mult * (cost + 1);
        let ret = self.rd();
        self.ins(format!("ld.param.b64 {ret}, [retval0+0]"));
        let _ = writeln!(self.body, "\t}} // callseq {seq}");
        let (val, hi) = (self.r(), self.rd());
        self.ins(format!("cvt.u32.u64 {val}, {ret}"));
        self.ins(format!("shr.u64 {hi}, {ret}, 32"));
        self.ins(format!("cvt.u32.u64 {}, {hi}", self.k));
        let d = self.var();
        self.ins(format!("xor.b32 {d}, {d}, {val}"));
        if recursive {
            self.place(&skip);
        }
        self.block_mark();
    }

    fn local_addr(&mut self, generic: bool) -> String {
        let (v, t, off, a) = (self.var(), self.r(), self.rd(), self.rd());
        self.ins(format!("and.b32 {t}, {v}, {}", LOCAL_WORDS - 1));
        self.ins(format!("mul.wide.u32 {off}, {t}, 4"));
        let base = if generic { self.sp.clone() } else { self.spl.clone() };
        self.ins(format!("add.s64 {a}, {}, {off}", base.unwrap_or_default()));
        a
    }

    /// A write to, or a read from, a random element of the frame's `.local` array.
    fn s_local(&mut self) {
        let generic = self.rng.chance(0.5);
        let a = self.local_addr(generic);
        let sp = if generic { "" } else { ".local" };
        if self.rng.chance(0.5) {
            let v = self.var();
            self.ins(format!("st{sp}.u32 [{a}], {v}"));
        } else {
            let (t, d) = (self.r(), self.var());
            self.ins(format!("ld{sp}.u32 {t}, [{a}]"));
            self.ins(format!("add.s32 {d}, {d}, {t}"));
        }
    }

    /// A write to, or a read from, one of this thread's private shared-memory words.
    fn s_shared(&mut self) {
        let Some(smem) = self.facts.smem.clone() else { return };
        let (v, t, s) = (self.var(), self.r(), self.r());
        self.ins(format!("and.b32 {t}, {v}, {}", SHARED_WORDS - 1));
        self.ins(format!("mad.lo.s32 {s}, {}, {SHARED_WORDS}, {t}", self.ltid));
        let write = self.rng.chance(0.5);
        if self.rng.chance(0.5) {
            // Shared window, 32-bit address.
            let (b, a) = (self.r(), self.r());
            self.ins(format!("mov.u32 {b}, {smem}"));
            let sh = self.r();
            self.ins(format!("shl.b32 {sh}, {s}, 2"));
            self.ins(format!("add.s32 {a}, {b}, {sh}"));
            if write {
                let x = self.var();
                self.ins(format!("st.shared.u32 [{a}], {x}"));
            } else {
                let (x, d) = (self.r(), self.var());
                self.ins(format!("ld.shared.u32 {x}, [{a}]"));
                self.ins(format!("xor.b32 {d}, {d}, {x}"));
            }
        } else {
            // Generic address through cvta.shared.
            let (b, g, off, a) = (self.rd(), self.rd(), self.rd(), self.rd());
            self.ins(format!("mov.u64 {b}, {smem}"));
            self.ins(format!("cvta.shared.u64 {g}, {b}"));
            self.ins(format!("mul.wide.u32 {off}, {s}, 4"));
            self.ins(format!("add.s64 {a}, {g}, {off}"));
            if write {
                let x = self.var();
                self.ins(format!("st.u32 [{a}], {x}"));
            } else {
                let (x, d) = (self.r(), self.var());
                self.ins(format!("ld.u32 {x}, [{a}]"));
                self.ins(format!("sub.s32 {d}, {d}, {x}"));
            }
        }
    }

    /// Unstructured acyclic flow: a jump from before an if-else into the middle of its else branch.
    fn s_jump_into_else(&mut self, depth: u32) {
        let (inside, other, end) = (self.label(), self.label(), self.label());
        let p = self.cond();
        self.ins(format!("@{p} bra {inside}"));
        self.block_mark();
        let q = self.cond();
        self.ins(format!("@{q} bra {other}"));
        self.block_mark();
        let n = self.n_stmts();
        self.stmts(depth - 1, n);
        self.ins(format!("bra.uni {end}"));
        self.place(&other);
        self.block_mark();
        self.place(&inside);
        self.block_mark();
        let n = self.n_stmts().min(2);
        self.stmts(depth - 1, n);
        self.place(&end);
        self.block_mark();
    }

    /// A `switch` through a jump table (`brx.idx`): cases may share a target and fall through to the next.
    fn s_switch(&mut self, depth: u32) {
        let ncases = self.rng.range(2, 5) as usize;
        let labels: Vec<String> = (0..ncases).map(|_| self.label()).collect();
        let end = self.label();
        let entries = self.rng.range(ncases as u64, ncases as u64 + 2);
        let mut targets: Vec<String> = labels.clone();
        while (targets.len() as u64) < entries {
            let extra = self.rng.pick(&labels).clone();
            targets.push(extra);
        }
        let (t, idx) = (self.r(), self.r());
        let src = if self.rng.chance(0.6) { self.ltid.clone() } else { self.var() };
        self.ins(format!("and.b32 {t}, {src}, 2147483647"));
        self.ins(format!("rem.u32 {idx}, {t}, {}", targets.len()));
        self.nlabel += 1;
        let table = format!("$L_brx_{}_{}", self.index, self.nlabel);
        let _ = writeln!(self.body, "\t{table}: .branchtargets {};", targets.join(", "));
        self.ins(format!("brx.idx {idx}, {table}"));
        for (i, l) in labels.iter().enumerate() {
            self.place(l);
            self.block_mark();
            if self.rng.chance(0.5) {
                let n = self.n_stmts().min(2);
                self.stmts(depth - 1, n);
            }
            if i + 1 < labels.len() && self.rng.chance(0.7) {
                self.ins(format!("bra.uni {end}"));
            }
        }
        self.place(&end);
        self.block_mark();
    }

    /// `var = in[var & 255]`.
    fn s_load(&mut self) {
        let Some(inp) = self.in_ptr.clone() else { return self.arith() };
        let (v, t, off, a, x) = (self.var(), self.r(), self.rd(), self.rd(), self.r());
        self.ins(format!("and.b32 {t}, {v}, {}", IN_LEN - 1));
        self.ins(format!("mul.wide.u32 {off}, {t}, 4"));
        self.ins(format!("add.s64 {a}, {inp}, {off}"));
        let nc = if self.rng.chance(0.5) { ".nc" } else { "" };
        self.ins(format!("ld.global{nc}.u32 {x}, [{a}]"));
        let d = self.var();
        self.ins(format!("add.s32 {d}, {d}, {x}"));
    }

    // ---- assembly ------------------------------------------------------------------------------------------

    /// The register and depot declarations plus the body.
    pub(crate) fn finish(self, uses_local: bool) -> String {
        let mut s = String::new();
        if uses_local {
            let _ = writeln!(s, "\t.local .align 4 .b8 \t__local_depot{}[{}];", self.index, 4 * LOCAL_WORDS);
            let _ = writeln!(s, "\t.reg .b64 \t%SP;");
            let _ = writeln!(s, "\t.reg .b64 \t%SPL;");
        }
        let _ = writeln!(s, "\t.reg .pred \t%p<{}>;", self.np + 1);
        let _ = writeln!(s, "\t.reg .b32 \t%r<{}>;", self.nr + 1);
        let _ = writeln!(s, "\t.reg .b64 \t%rd<{}>;", self.nrd + 1);
        s.push('\n');
        s.push_str(&self.body);
        s
    }
}
