//! PTX data types and state spaces.

use std::fmt;

macro_rules! word_enum {
    ($(#[$meta:meta])* pub enum $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
        pub enum $name { $($(#[$vmeta])* $variant,)* }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The PTX spelling without the leading dot.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text,)* }
            }

            /// Parses the PTX spelling (without the leading dot).
            pub fn from_word(s: &str) -> Option<$name> {
                match s { $($text => Some($name::$variant),)* _ => None }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
pub(crate) use word_enum;

word_enum! {
    /// A PTX fundamental type (`.u32`, `.f64`, `.pred`, ...).
    pub enum ScalarType {
        /// `.pred`: a 1-bit predicate.
        Pred = "pred",
        /// `.b8`: untyped 8 bits.
        B8 = "b8",
        /// `.b16`: untyped 16 bits.
        B16 = "b16",
        /// `.b32`: untyped 32 bits.
        B32 = "b32",
        /// `.b64`: untyped 64 bits.
        B64 = "b64",
        /// `.b128`: untyped 128 bits.
        B128 = "b128",
        /// `.u8`: unsigned 8-bit integer.
        U8 = "u8",
        /// `.u16`: unsigned 16-bit integer.
        U16 = "u16",
        /// `.u32`: unsigned 32-bit integer.
        U32 = "u32",
        /// `.u64`: unsigned 64-bit integer.
        U64 = "u64",
        /// `.s8`: signed 8-bit integer.
        S8 = "s8",
        /// `.s16`: signed 16-bit integer.
        S16 = "s16",
        /// `.s32`: signed 32-bit integer.
        S32 = "s32",
        /// `.s64`: signed 64-bit integer.
        S64 = "s64",
        /// `.f16`: IEEE half precision.
        F16 = "f16",
        /// `.f16x2`: two packed halves.
        F16x2 = "f16x2",
        /// `.bf16`: bfloat16.
        Bf16 = "bf16",
        /// `.bf16x2`: two packed bfloat16.
        Bf16x2 = "bf16x2",
        /// `.tf32`: TensorFloat-32 (stored in 32 bits).
        Tf32 = "tf32",
        /// `.f32`: IEEE single precision.
        F32 = "f32",
        /// `.f64`: IEEE double precision.
        F64 = "f64",
        /// `.e4m3`: FP8 E4M3.
        E4m3 = "e4m3",
        /// `.e5m2`: FP8 E5M2.
        E5m2 = "e5m2",
        /// `.e4m3x2`: two packed FP8 E4M3.
        E4m3x2 = "e4m3x2",
        /// `.e5m2x2`: two packed FP8 E5M2.
        E5m2x2 = "e5m2x2",
    }
}

impl ScalarType {
    /// Size in bits (`.pred` counts as 1).
    pub fn bits(self) -> u32 {
        use ScalarType::*;
        match self {
            Pred => 1,
            B8 | U8 | S8 | E4m3 | E5m2 => 8,
            B16 | U16 | S16 | F16 | Bf16 | E4m3x2 | E5m2x2 => 16,
            B32 | U32 | S32 | F32 | F16x2 | Bf16x2 | Tf32 => 32,
            B64 | U64 | S64 | F64 => 64,
            B128 => 128,
        }
    }

    /// Size in bytes (`.pred` counts as 1).
    pub fn bytes(self) -> u32 {
        self.bits().div_ceil(8)
    }

    /// Whether the type is a signed integer.
    pub fn is_signed(self) -> bool {
        matches!(self, ScalarType::S8 | ScalarType::S16 | ScalarType::S32 | ScalarType::S64)
    }

    /// Whether the type is a signed or unsigned integer.
    pub fn is_integer(self) -> bool {
        use ScalarType::*;
        matches!(self, U8 | U16 | U32 | U64 | S8 | S16 | S32 | S64)
    }

    /// Whether the type is untyped bits (`.bN`).
    pub fn is_bits(self) -> bool {
        use ScalarType::*;
        matches!(self, B8 | B16 | B32 | B64 | B128)
    }

    /// Whether the type is a floating-point type (scalar or packed).
    pub fn is_float(self) -> bool {
        use ScalarType::*;
        matches!(self, F16 | F16x2 | Bf16 | Bf16x2 | Tf32 | F32 | F64 | E4m3 | E5m2 | E4m3x2 | E5m2x2)
    }
}

word_enum! {
    /// A PTX state space.
    pub enum StateSpace {
        /// `.reg`: registers.
        Reg = "reg",
        /// `.sreg`: special registers.
        Sreg = "sreg",
        /// `.global`: device memory visible to all threads.
        Global = "global",
        /// `.shared`: per-CTA memory.
        Shared = "shared",
        /// `.local`: per-thread memory.
        Local = "local",
        /// `.const`: read-only constant bank.
        Const = "const",
        /// `.param`: kernel parameters or call staging.
        Param = "param",
        /// `.tex`: texture references (declared only).
        Tex = "tex",
    }
}

word_enum! {
    /// A vector component of a special register (`%tid.x`).
    pub enum Dim {
        /// `.x`
        X = "x",
        /// `.y`
        Y = "y",
        /// `.z`
        Z = "z",
    }
}

impl Dim {
    /// 0 for x, 1 for y, 2 for z.
    pub fn index(self) -> usize {
        self as usize
    }
}
