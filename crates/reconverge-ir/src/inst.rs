//! Instructions: opcodes, modifiers, operands.

use crate::entity::{BlockId, FuncId, GlobalId, LocalId, ProtoId, RegId, TargetsId};
use crate::module::SrcLoc;
use crate::types::{word_enum, Dim, ScalarType, StateSpace};
use smallvec::SmallVec;
use std::fmt;
use std::ops::RangeInclusive;

macro_rules! opcodes {
    ($($variant:ident = $text:literal, $ops:expr;)*) => {
        /// A PTX opcode: the first word of an instruction, before any `.modifier`.
        ///
        /// Opcodes the front end does not know are kept as [`Opcode::Unknown`] so that valid PTX always
        /// parses; later stages reject them with their source location.
        #[derive(Clone, PartialEq, Eq, Hash, Debug)]
        pub enum Opcode {
            $(#[doc = concat!("`", $text, "`")] $variant,)*
            /// An opcode the front end does not know (kept verbatim).
            Unknown(Box<str>),
        }

        impl Opcode {
            /// Every known opcode.
            pub const KNOWN: &'static [Opcode] = &[$(Opcode::$variant,)*];

            /// The PTX spelling.
            pub fn as_str(&self) -> &str {
                match self { $(Opcode::$variant => $text,)* Opcode::Unknown(s) => s }
            }

            /// The opcode for a word; unknown words give [`Opcode::Unknown`].
            pub fn from_word(s: &str) -> Opcode {
                match s { $($text => Opcode::$variant,)* _ => Opcode::Unknown(s.into()) }
            }

            /// The number of operands a well-formed instruction has (for known opcodes).
            ///
            /// `call` is special-cased by the parser (its operands are lists).
            pub fn operand_count(&self) -> Option<RangeInclusive<usize>> {
                match self { $(Opcode::$variant => Some($ops),)* Opcode::Unknown(_) => None }
            }
        }
    };
}

opcodes! {
    Abs = "abs", 2..=2;
    Activemask = "activemask", 1..=1;
    Add = "add", 3..=3;
    Addc = "addc", 3..=3;
    And = "and", 3..=3;
    Atom = "atom", 3..=4;
    Bar = "bar", 0..=4;
    Barrier = "barrier", 0..=4;
    Bfe = "bfe", 4..=4;
    Bfi = "bfi", 5..=5;
    Bfind = "bfind", 2..=2;
    Bmsk = "bmsk", 3..=3;
    Bra = "bra", 1..=1;
    Brev = "brev", 2..=2;
    Brkpt = "brkpt", 0..=0;
    Brx = "brx", 2..=2;
    Call = "call", 1..=4;
    Clz = "clz", 2..=2;
    Cnot = "cnot", 2..=2;
    Copysign = "copysign", 3..=3;
    Cos = "cos", 2..=2;
    Cp = "cp", 0..=4;
    Cvt = "cvt", 2..=3;
    Cvta = "cvta", 2..=2;
    Div = "div", 3..=3;
    Dp2a = "dp2a", 4..=4;
    Dp4a = "dp4a", 4..=4;
    Elect = "elect", 2..=2;
    Ex2 = "ex2", 2..=2;
    Exit = "exit", 0..=0;
    Fence = "fence", 0..=0;
    Fma = "fma", 4..=4;
    Fns = "fns", 4..=4;
    Isspacep = "isspacep", 2..=2;
    Ld = "ld", 2..=3;
    Ldmatrix = "ldmatrix", 2..=2;
    Ldu = "ldu", 2..=2;
    Lg2 = "lg2", 2..=2;
    Lop3 = "lop3", 5..=6;
    Mad = "mad", 4..=4;
    Mad24 = "mad24", 4..=4;
    Madc = "madc", 4..=4;
    Match = "match", 3..=3;
    Max = "max", 3..=4;
    Mbarrier = "mbarrier", 1..=4;
    Membar = "membar", 0..=0;
    Min = "min", 3..=4;
    Mma = "mma", 4..=6;
    Mov = "mov", 2..=2;
    Movmatrix = "movmatrix", 2..=2;
    Mul = "mul", 3..=3;
    Mul24 = "mul24", 3..=3;
    Nanosleep = "nanosleep", 1..=1;
    Neg = "neg", 2..=2;
    Not = "not", 2..=2;
    Or = "or", 3..=3;
    Pmevent = "pmevent", 1..=1;
    Popc = "popc", 2..=2;
    Prefetch = "prefetch", 1..=1;
    Prefetchu = "prefetchu", 1..=1;
    Prmt = "prmt", 4..=4;
    Rcp = "rcp", 2..=2;
    Red = "red", 2..=3;
    Redux = "redux", 3..=3;
    Rem = "rem", 3..=3;
    Ret = "ret", 0..=0;
    Rsqrt = "rsqrt", 2..=2;
    Sad = "sad", 4..=4;
    Selp = "selp", 4..=4;
    Set = "set", 3..=4;
    Setp = "setp", 3..=4;
    Shf = "shf", 4..=4;
    Shfl = "shfl", 4..=5;
    Shl = "shl", 3..=3;
    Shr = "shr", 3..=3;
    Sin = "sin", 2..=2;
    Slct = "slct", 4..=4;
    Sqrt = "sqrt", 2..=2;
    St = "st", 2..=3;
    Stmatrix = "stmatrix", 2..=2;
    Sub = "sub", 3..=3;
    Subc = "subc", 3..=3;
    Suld = "suld", 2..=2;
    Suq = "suq", 2..=2;
    Sust = "sust", 2..=2;
    Szext = "szext", 3..=3;
    Tanh = "tanh", 2..=2;
    Testp = "testp", 2..=2;
    Tex = "tex", 2..=4;
    Tld4 = "tld4", 2..=2;
    Trap = "trap", 0..=0;
    Txq = "txq", 2..=2;
    Vote = "vote", 2..=3;
    Wmma = "wmma", 2..=4;
    Xor = "xor", 3..=3;
    // reconverge extensions: the explicit reconvergence-stack instructions of seed 001, inserted by the
    // SSY pass of the simulator (never emitted by CUDA compilers).
    Ssy = "ssy", 1..=1;
    Sync = "sync", 0..=1;
    Pbk = "pbk", 1..=1;
    Brk = "brk", 0..=1;
    // The fork/join pass's region end (seed 003 §2.2, AMD GCN `s_cbranch_join`), and the convergence
    // barriers of independent thread scheduling (Volta and later: `BSSY`/`BSYNC`, `YIELD`).
    Join = "join", 0..=0;
    Bssy = "bssy", 1..=1;
    Bsync = "bsync", 1..=1;
    Yield = "yield", 0..=0;
    // Stackless SIMT's compiler reconvergence point (seed 004 §5.2): a barrier for the warp's live threads.
    Syncwarp = "syncwarp", 0..=0;
}

impl Opcode {
    /// Whether an instruction with this opcode ends a basic block.
    ///
    /// `call` does not: calls are straight-line instructions in the CFG.
    pub fn is_terminator(&self) -> bool {
        matches!(
            self,
            Opcode::Bra | Opcode::Brx | Opcode::Ret | Opcode::Exit | Opcode::Trap | Opcode::Sync | Opcode::Brk
        )
    }

    /// Whether this is one of reconverge's explicit reconvergence-stack instructions (`ssy`, `sync`,
    /// `pbk`, `brk`), which only the SSY pass inserts.
    pub fn is_stack_op(&self) -> bool {
        matches!(self, Opcode::Ssy | Opcode::Sync | Opcode::Pbk | Opcode::Brk)
    }

    /// Whether this is an instruction only a mechanism's compiler pass inserts (the stack instructions,
    /// `join`, `bssy`, `bsync`, `yield`).
    pub fn is_mechanism_op(&self) -> bool {
        self.is_stack_op()
            || matches!(self, Opcode::Join | Opcode::Bssy | Opcode::Bsync | Opcode::Yield | Opcode::Syncwarp)
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

word_enum! {
    /// A known `.modifier` word of an instruction (anything that is not a data type).
    ///
    /// Words are kept flat: the same word means different things for different opcodes (`.and` is a
    /// predicate combiner for `setp` and an operation for `atom`); the simulator's decoder interprets them
    /// per opcode. Words not listed here are kept as [`Modifier::Other`].
    pub enum KnownModifier {
        /// `.rn` round to nearest even.
        Rn = "rn",
        /// `.rz` round towards zero.
        Rz = "rz",
        /// `.rm` round towards minus infinity.
        Rm = "rm",
        /// `.rp` round towards plus infinity.
        Rp = "rp",
        /// `.rni` round to nearest even integer.
        Rni = "rni",
        /// `.rzi` round towards zero to integer.
        Rzi = "rzi",
        /// `.rmi` round towards minus infinity to integer.
        Rmi = "rmi",
        /// `.rpi` round towards plus infinity to integer.
        Rpi = "rpi",
        /// `.rna` round to nearest, ties away.
        Rna = "rna",
        /// `.rs` stochastic rounding.
        Rs = "rs",
        /// `.eq`
        Eq = "eq",
        /// `.ne`
        Ne = "ne",
        /// `.lt`
        Lt = "lt",
        /// `.le`
        Le = "le",
        /// `.gt`
        Gt = "gt",
        /// `.ge`
        Ge = "ge",
        /// `.lo` (unsigned less-than, or the low half of a product)
        Lo = "lo",
        /// `.ls` unsigned lower-or-same
        Ls = "ls",
        /// `.hi` (unsigned higher, or the high half of a product)
        Hi = "hi",
        /// `.hs` unsigned higher-or-same
        Hs = "hs",
        /// `.equ` unordered equal
        Equ = "equ",
        /// `.neu` unordered not-equal
        Neu = "neu",
        /// `.ltu` unordered less-than
        Ltu = "ltu",
        /// `.leu` unordered less-or-equal
        Leu = "leu",
        /// `.gtu` unordered greater-than
        Gtu = "gtu",
        /// `.geu` unordered greater-or-equal
        Geu = "geu",
        /// `.num` both operands are numbers
        Num = "num",
        /// `.nan` either operand is NaN
        Nan = "nan",
        /// `.NaN` (min/max propagate NaN)
        NaN = "NaN",
        /// `.and`
        And = "and",
        /// `.or`
        Or = "or",
        /// `.xor`
        Xor = "xor",
        /// `.add`
        Add = "add",
        /// `.inc`
        Inc = "inc",
        /// `.dec`
        Dec = "dec",
        /// `.min`
        Min = "min",
        /// `.max`
        Max = "max",
        /// `.exch`
        Exch = "exch",
        /// `.cas`
        Cas = "cas",
        /// `.popc`
        Popc = "popc",
        /// `.ftz` flush subnormals to zero
        Ftz = "ftz",
        /// `.sat` saturate
        Sat = "sat",
        /// `.satfinite`
        Satfinite = "satfinite",
        /// `.approx`
        Approx = "approx",
        /// `.full`
        Full = "full",
        /// `.wide`
        Wide = "wide",
        /// `.uni` (non-divergent branch or call; `vote.uni`)
        Uni = "uni",
        /// `.cc` carry-out
        Cc = "cc",
        /// `.nc` non-coherent load
        Nc = "nc",
        /// `.volatile`
        Volatile = "volatile",
        /// `.sync`
        Sync = "sync",
        /// `.aligned`
        Aligned = "aligned",
        /// `.all`
        All = "all",
        /// `.any`
        Any = "any",
        /// `.ballot`
        Ballot = "ballot",
        /// `.up`
        Up = "up",
        /// `.down`
        Down = "down",
        /// `.bfly`
        Bfly = "bfly",
        /// `.idx`
        Idx = "idx",
        /// `.to` (cvta.to)
        To = "to",
        /// `.clamp`
        Clamp = "clamp",
        /// `.wrap`
        Wrap = "wrap",
        /// `.shiftamt`
        Shiftamt = "shiftamt",
        /// `.arrive`
        Arrive = "arrive",
        /// `.red`
        Red = "red",
        /// `.warp`
        Warp = "warp",
        /// `.relaxed`
        Relaxed = "relaxed",
        /// `.acquire`
        Acquire = "acquire",
        /// `.release`
        Release = "release",
        /// `.acq_rel`
        AcqRel = "acq_rel",
        /// `.sc`
        Sc = "sc",
        /// `.weak`
        Weak = "weak",
        /// `.mmio`
        Mmio = "mmio",
        /// `.cta`
        Cta = "cta",
        /// `.cluster`
        Cluster = "cluster",
        /// `.gpu`
        Gpu = "gpu",
        /// `.sys`
        Sys = "sys",
        /// `.gl` (membar.gl)
        Gl = "gl",
        /// `.global`
        Global = "global",
        /// `.shared`
        Shared = "shared",
        /// `.shared::cta`
        SharedCta = "shared::cta",
        /// `.shared::cluster`
        SharedCluster = "shared::cluster",
        /// `.local`
        Local = "local",
        /// `.const`
        Const = "const",
        /// `.param`
        Param = "param",
        /// `.generic`
        Generic = "generic",
        /// `.v2`
        V2 = "v2",
        /// `.v4`
        V4 = "v4",
        /// `.v8`
        V8 = "v8",
        /// `.ca` cache at all levels
        Ca = "ca",
        /// `.cg` cache global
        Cg = "cg",
        /// `.cs` cache streaming
        Cs = "cs",
        /// `.lu` last use
        Lu = "lu",
        /// `.cv` don't cache
        Cv = "cv",
        /// `.wb` write back
        Wb = "wb",
        /// `.wt` write through
        Wt = "wt",
        /// `.l` (shf.l)
        L = "l",
        /// `.r` (shf.r)
        R = "r",
        /// `.f4e` (prmt mode)
        F4e = "f4e",
        /// `.b4e` (prmt mode)
        B4e = "b4e",
        /// `.rc8` (prmt mode)
        Rc8 = "rc8",
        /// `.ecl` (prmt mode)
        Ecl = "ecl",
        /// `.ecr` (prmt mode)
        Ecr = "ecr",
        /// `.rc16` (prmt mode)
        Rc16 = "rc16",
        /// `.relu`
        Relu = "relu",
        /// `.xorsign`
        Xorsign = "xorsign",
        /// `.abs`
        Abs = "abs",
        /// `.noftz`
        Noftz = "noftz",
    }
}

/// A `.modifier` of an instruction other than its data type(s).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Modifier {
    /// A modifier word the IR knows.
    Known(KnownModifier),
    /// Any other word (kept verbatim, without the dot), e.g. `L1::evict_last` or `m16n8k16`.
    Other(Box<str>),
}

impl Modifier {
    /// Parses a modifier word (without the dot).
    pub fn from_word(s: &str) -> Modifier {
        match KnownModifier::from_word(s) {
            Some(k) => Modifier::Known(k),
            None => Modifier::Other(s.into()),
        }
    }

    /// The PTX spelling without the dot.
    pub fn as_str(&self) -> &str {
        match self {
            Modifier::Known(k) => k.as_str(),
            Modifier::Other(s) => s,
        }
    }

    /// The state space this modifier names, if it names one.
    pub fn space(&self) -> Option<StateSpace> {
        match self {
            Modifier::Known(KnownModifier::Global) => Some(StateSpace::Global),
            Modifier::Known(KnownModifier::Shared | KnownModifier::SharedCta | KnownModifier::SharedCluster) => {
                Some(StateSpace::Shared)
            }
            Modifier::Known(KnownModifier::Local) => Some(StateSpace::Local),
            Modifier::Known(KnownModifier::Const) => Some(StateSpace::Const),
            Modifier::Known(KnownModifier::Param) => Some(StateSpace::Param),
            _ => None,
        }
    }
}

impl fmt::Display for Modifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

word_enum! {
    /// The kind of a special register (`%tid`, `%laneid`, ...).
    pub enum SpecialRegKind {
        /// `%tid`: thread index in the CTA (has `.x/.y/.z`).
        Tid = "%tid",
        /// `%ntid`: CTA dimensions.
        Ntid = "%ntid",
        /// `%ctaid`: CTA index in the grid.
        Ctaid = "%ctaid",
        /// `%nctaid`: grid dimensions.
        Nctaid = "%nctaid",
        /// `%laneid`: lane in the warp.
        Laneid = "%laneid",
        /// `%warpid`: warp slot on the SM.
        Warpid = "%warpid",
        /// `%nwarpid`: number of warp slots.
        Nwarpid = "%nwarpid",
        /// `%smid`: SM index.
        Smid = "%smid",
        /// `%nsmid`: number of SMs.
        Nsmid = "%nsmid",
        /// `%gridid`: launch id.
        Gridid = "%gridid",
        /// `%clock`: 32-bit cycle counter.
        Clock = "%clock",
        /// `%clock_hi`: upper 32 bits of the cycle counter.
        ClockHi = "%clock_hi",
        /// `%clock64`: 64-bit cycle counter.
        Clock64 = "%clock64",
        /// `%globaltimer`: nanosecond timer.
        Globaltimer = "%globaltimer",
        /// `%lanemask_eq`
        LanemaskEq = "%lanemask_eq",
        /// `%lanemask_le`
        LanemaskLe = "%lanemask_le",
        /// `%lanemask_lt`
        LanemaskLt = "%lanemask_lt",
        /// `%lanemask_ge`
        LanemaskGe = "%lanemask_ge",
        /// `%lanemask_gt`
        LanemaskGt = "%lanemask_gt",
        /// `%dynamic_smem_size`
        DynamicSmemSize = "%dynamic_smem_size",
        /// `%total_smem_size`
        TotalSmemSize = "%total_smem_size",
        /// `%warpsz` (the `WARP_SZ` constant)
        WarpSize = "WARP_SZ",
    }
}

impl SpecialRegKind {
    /// Whether the register has `.x/.y/.z` components.
    pub fn is_vector(self) -> bool {
        matches!(self, SpecialRegKind::Tid | SpecialRegKind::Ntid | SpecialRegKind::Ctaid | SpecialRegKind::Nctaid)
    }
}

/// A special register operand such as `%tid.x` or `%laneid`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct SpecialReg {
    /// Which register.
    pub kind: SpecialRegKind,
    /// The component for `%tid`, `%ntid`, `%ctaid`, `%nctaid` (`None` elsewhere).
    pub dim: Option<Dim>,
}

/// An immediate constant.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Imm {
    /// An integer literal; the 64-bit two's-complement pattern (`0xFFFFFFFFFFFFFFFF` is `-1`).
    Int(i64),
    /// A single-precision literal `0fXXXXXXXX`, as its bits.
    F32(u32),
    /// A double-precision literal `0dXXXXXXXXXXXXXXXX` or a decimal literal, as its bits.
    F64(u64),
}

/// A name an operand can refer to.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Symbol {
    /// A module-level variable.
    Global(GlobalId),
    /// A variable declared in the function body.
    Local(LocalId),
    /// The n-th input parameter of the function.
    Param(u32),
    /// The n-th return parameter of the function.
    Ret(u32),
    /// A function (call target or function address).
    Func(FuncId),
    /// A label (branch target).
    Label(BlockId),
    /// A `.branchtargets` list.
    Targets(TargetsId),
    /// A `.callprototype`.
    Proto(ProtoId),
}

/// The base of an address operand.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum AddrBase {
    /// `[%rd1+8]`
    Reg(RegId),
    /// `[name+4]`
    Sym(Symbol),
    /// `[4096]`: an absolute address (the offset is the address).
    Abs,
}

/// A memory address operand `[base+offset]`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Address {
    /// Register, symbol or nothing.
    pub base: AddrBase,
    /// Byte offset (may be negative: `[%rd1+-4]`).
    pub offset: i64,
}

/// An instruction operand.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Operand {
    /// A register.
    Reg(RegId),
    /// A negated predicate register `!%p` (source operands of `vote`, `setp`'s `c`, `selp`...).
    NotReg(RegId),
    /// A special register such as `%tid.x`.
    Special(SpecialReg),
    /// An immediate.
    Imm(Imm),
    /// A symbol used as a value: a variable's address, a function, a label, a target list.
    Sym(Symbol),
    /// A memory address `[...]`.
    Addr(Address),
    /// A vector `{%r1, %r2}`; elements are registers, immediates or [`Operand::Sink`].
    Vector(Vec<Operand>),
    /// Two destinations `%p|%q` (setp) or `%r|%p` (shfl, match); `None` stands for `_`.
    Pair([Option<RegId>; 2]),
    /// The sink `_`.
    Sink,
    /// A parenthesised list: the return or argument list of `call`.
    List(Vec<Operand>),
    /// A texture or surface access `[handle, {c0, c1, ...}]` (`tex`, `tld4`, `suld`, `sust`): the object
    /// (a register holding a texture or surface object) and the coordinate vector.
    Image {
        /// The object: a register (or a symbol, for the texture references of old PTX).
        handle: Box<Operand>,
        /// The coordinates, as written (registers or immediates).
        coords: Vec<Operand>,
    },
}

/// A guard predicate `@%p` or `@!%p`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Guard {
    /// The predicate register.
    pub reg: RegId,
    /// `true` for `@!%p`.
    pub negated: bool,
}

/// One PTX instruction.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Inst {
    /// Optional guard predicate.
    pub guard: Option<Guard>,
    /// The opcode.
    pub opcode: Opcode,
    /// Modifiers other than data types, in source order.
    pub mods: SmallVec<[Modifier; 4]>,
    /// Data types, in source order (`cvt.f32.s32` has two: destination then source).
    pub types: SmallVec<[ScalarType; 2]>,
    /// Operands, destinations first, as written.
    pub operands: SmallVec<[Operand; 4]>,
    /// The CUDA source location from the last `.loc` directive before the instruction.
    pub loc: Option<SrcLoc>,
}

impl Inst {
    /// Whether the instruction carries the known modifier `m`.
    pub fn has(&self, m: KnownModifier) -> bool {
        self.mods.contains(&Modifier::Known(m))
    }

    /// The first state-space modifier, if any (`ld.global` → `Global`).
    pub fn space(&self) -> Option<StateSpace> {
        self.mods.iter().find_map(Modifier::space)
    }

    /// The first data type, if any.
    pub fn ty(&self) -> Option<ScalarType> {
        self.types.first().copied()
    }

    /// Whether this instruction ends its basic block.
    pub fn is_terminator(&self) -> bool {
        self.opcode.is_terminator()
    }

    /// For `bra`: the target block.
    pub fn branch_target(&self) -> Option<BlockId> {
        match (&self.opcode, self.operands.first()) {
            (Opcode::Bra, Some(Operand::Sym(Symbol::Label(b)))) => Some(*b),
            _ => None,
        }
    }

    /// For `brx.idx`: the target list.
    pub fn branch_targets(&self) -> Option<TargetsId> {
        match (&self.opcode, self.operands.get(1)) {
            (Opcode::Brx, Some(Operand::Sym(Symbol::Targets(t)))) => Some(*t),
            _ => None,
        }
    }

    /// For `call`: the callee when the call is direct.
    pub fn callee(&self) -> Option<FuncId> {
        if self.opcode != Opcode::Call {
            return None;
        }
        self.operands.iter().find_map(|o| match o {
            Operand::Sym(Symbol::Func(f)) => Some(*f),
            _ => None,
        })
    }
}
