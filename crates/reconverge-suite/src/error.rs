//! The suite's errors: a `.npy` file that cannot be read ([`NpyError`]), an argument that cannot be made
//! ([`ArgError`]), an entry that cannot be prepared ([`SuiteError`]) and a result that differs from the
//! expected one ([`Mismatch`]). Messages name the setting (the memory limit), never a command-line flag.

use reconverge_program::{quote, ArgShapeError, DecodeError, Dtype, OutOfMemory, ValueError};

/// Why a `.npy` file cannot be read.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub enum NpyError {
    /// Not a `.npy` file (no magic, an unknown version, a truncated header, the reader's complaint).
    #[error("not a valid .npy file: {0}")]
    Invalid(String),
    /// A shape that is not a list of sizes.
    #[error("the shape ({0}) is not a list of sizes")]
    Shape(String),
    /// A shape with more elements than can exist.
    #[error("the shape ({0}) has more elements than can exist")]
    ShapeOverflow(String),
    /// A structured dtype.
    #[error("unsupported .npy dtype {0} (structured arrays are not supported)")]
    Structured(String),
    /// Big-endian data.
    #[error("big-endian .npy data ({0}) is not supported")]
    BigEndian(String),
    /// A multi-dimensional Fortran-ordered array.
    #[error("Fortran-ordered .npy arrays are not supported")]
    Fortran,
    /// A dtype buffers cannot hold.
    #[error("unsupported .npy dtype `{0}`")]
    Dtype(String),
    /// A shape that does not describe the data that follows.
    #[error(
        "the shape {shape} ({elements} elements of {size} bytes) does not match the {data} data bytes of the file"
    )]
    Size {
        /// The shape, as numpy writes it.
        shape: String,
        /// Elements the shape claims.
        elements: u64,
        /// Bytes per element.
        size: usize,
        /// Data bytes in the file.
        data: u64,
    },
}

/// Why a launch argument (or a module variable's value) cannot be made from its specification.
#[derive(Debug, thiserror::Error)]
pub enum ArgError {
    /// `@` with no file name.
    #[error("`@` must be followed by a .npy file name")]
    EmptyFile,
    /// `zeros:` not followed by `DTYPE:LEN`.
    #[error("`{0}`: expected zeros:DTYPE:LEN")]
    ZerosSyntax(String),
    /// A length too large to be a number.
    #[error("`{text}`: the length `{len}` is too large")]
    LengthTooLarge {
        /// The specification.
        text: String,
        /// The length.
        len: String,
    },
    /// A length that is not a number.
    #[error("`{text}`: `{len}` is not a length")]
    NotALength {
        /// The specification.
        text: String,
        /// The length.
        len: String,
    },
    /// `rand:` not followed by `DTYPE:LEN:SEED[:BOUND]`.
    #[error("`{0}`: expected rand:DTYPE:LEN:SEED[:BOUND] (whole numbers)")]
    RandSyntax(String),
    /// A number or dtype that does not parse.
    #[error(transparent)]
    Value(#[from] ValueError),
    /// The number of arguments differs from the kernel's parameters.
    #[error("kernel `{kernel}` takes {} arguments ({}); {given} given", params.len(), params.join(", "))]
    Count {
        /// The kernel.
        kernel: String,
        /// Its parameters, as `name: .type`.
        params: Vec<String>,
        /// Arguments given.
        given: usize,
    },
    /// A buffer whose size overflows.
    #[error("the buffer is too large")]
    Overflow,
    /// Buffers larger than the launch's memory limit.
    #[error("the buffers need {bytes} bytes together, more than the memory limit of {limit} bytes")]
    MemoryLimit {
        /// Bytes asked for.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// A file the loader cannot read.
    #[error("cannot read `{file}`: {error}")]
    Read {
        /// The file.
        file: String,
        /// Why.
        error: std::io::Error,
    },
    /// A `.npy` file that cannot be read.
    #[error("{file}: {error}")]
    Npy {
        /// The file.
        file: String,
        /// Why.
        error: NpyError,
    },
    /// The host has no memory for the buffer.
    #[error(transparent)]
    OutOfMemory(#[from] OutOfMemory),
    /// `+OFFSET` after a buffer spec that is not a number of elements or of bytes.
    #[error("`{0}`: expected BUFFER+N (N elements of the buffer's dtype) or BUFFER+Nb (N bytes)")]
    OffsetSyntax(String),
    /// A pointer past the end of its buffer.
    #[error("an offset of {offset} bytes is past the end of the {len}-byte buffer")]
    OffsetPastEnd {
        /// The offset in bytes.
        offset: u64,
        /// The buffer's size in bytes.
        len: u64,
    },
    /// `struct:` with no fields.
    #[error("`struct:` needs at least one field: struct:TYPE=VALUE,TYPE=VALUE,... (TYPE one of i8 u8 i16 u16 i32 u32 i64 u64 f32 f64 ptr, or pad=N)")]
    EmptyStruct,
    /// A struct field that is not `TYPE=VALUE` or `pad=N`.
    #[error(
        "`{}`: expected TYPE=VALUE (TYPE one of i8 u8 i16 u16 i32 u32 i64 u64 f32 f64 ptr) or pad=N (N zero bytes)",
        quote(.0)
    )]
    FieldSyntax(String),
    /// A `pad=N` field whose `N` is not a number of bytes, or more than a struct can hold.
    #[error("`pad={}`: {}", quote(value), if *too_large {
        format!("{} zero bytes is too large (at most {})", quote(value), u32::MAX)
    } else {
        format!("`{}` is not a number of bytes", quote(value))
    })]
    Pad {
        /// The text after `pad=`.
        value: String,
        /// Whether it is a whole number, too large for a `u32`.
        too_large: bool,
    },
    /// A `ptr` field whose value is neither a buffer nor null.
    #[error("`ptr={0}`: a pointer field takes @FILE.npy[+N], zeros:DTYPE:LEN[+N], rand:...[+N], or 0 / null")]
    PointerValue(String),
    /// An error of one struct field (`field 3`).
    #[error("field {field}: {error}")]
    Field {
        /// The field's index (padding included).
        field: usize,
        /// Its error.
        error: Box<ArgError>,
    },
    /// A struct whose size differs from its parameter's.
    #[error(
        "the struct is {given} bytes (fields at offsets {}, aligned to {align}) but parameter `{param}` is {size} \
         bytes (aligned to {param_align}); give every field of the C struct, or pad=N for the bytes left out",
        offsets.iter().map(u64::to_string).collect::<Vec<_>>().join(" ")
    )]
    StructSize {
        /// The parameter.
        param: String,
        /// The parameter's size.
        size: u32,
        /// The parameter's alignment.
        param_align: u32,
        /// The struct's size.
        given: u64,
        /// The struct's alignment.
        align: u64,
        /// Its fields' offsets.
        offsets: Vec<u64>,
    },
    /// A struct whose fields need more alignment than its parameter has.
    #[error(
        "the struct's fields need {align}-byte alignment but parameter `{param}` is aligned to {param_align} \
         bytes: its fields cannot be laid out as the kernel's are"
    )]
    StructAlign {
        /// The parameter.
        param: String,
        /// The parameter's alignment.
        param_align: u32,
        /// The struct's alignment.
        align: u64,
    },
    /// A number given for a parameter that is a struct or an array (`.b8 p[56]`).
    #[error(
        "a number cannot fill the parameter: it is a {size}-byte struct or array of .{ty} (give struct:TYPE=VALUE,...)"
    )]
    NumberForStruct {
        /// The parameter's size in bytes.
        size: u32,
        /// Its element type.
        ty: &'static str,
    },
    /// A struct given for a module variable.
    #[error("a struct cannot set a module variable (give a number or a buffer)")]
    StructForVariable,
    /// A struct or pointer argument the launch would refuse.
    #[error(transparent)]
    Shape(#[from] ArgShapeError),
    /// An error of one argument (`argument 2 (n)`).
    #[error("{what}: {error}")]
    In {
        /// Which argument.
        what: String,
        /// Its error.
        error: Box<ArgError>,
    },
}

impl ArgError {
    /// The error at the root of any [`ArgError::In`] chain.
    pub fn root(&self) -> &ArgError {
        match self {
            ArgError::In { error, .. } | ArgError::Field { error, .. } => error.root(),
            e => e,
        }
    }
}

/// Why a suite entry cannot be prepared.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// A file the loader cannot read.
    #[error("cannot read `{file}`: {error}")]
    Read {
        /// The file.
        file: String,
        /// Why.
        error: std::io::Error,
    },
    /// A PTX file that is not UTF-8.
    #[error("{0}: not UTF-8 text")]
    NotText(String),
    /// A PTX file that does not parse: the diagnostics, rendered with file:line:col.
    #[error("{0}")]
    Parse(String),
    /// A kernel that cannot be decoded.
    #[error("{file}: {error}")]
    Decode {
        /// The PTX file.
        file: String,
        /// Why.
        error: DecodeError,
    },
    /// An argument that cannot be made.
    #[error(transparent)]
    Arg(#[from] ArgError),
    /// A module variable's value that cannot be made.
    #[error("global `{name}`: {error}")]
    Global {
        /// The variable.
        name: String,
        /// Why.
        error: ArgError,
    },
    /// A manifest that does not parse.
    #[error("invalid kernel manifest: {0}")]
    Manifest(toml::de::Error),
}

/// How a buffer differs from the expected one.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub enum Mismatch {
    /// Different dtype or length.
    #[error("{what}: expected {want_len} × {want_dtype}, got {got_len} × {got_dtype}")]
    Shape {
        /// The buffer (`argument 2`, `global `x``).
        what: String,
        /// Expected elements.
        want_len: usize,
        /// Expected dtype.
        want_dtype: Dtype,
        /// Elements.
        got_len: usize,
        /// Dtype.
        got_dtype: Dtype,
    },
    /// Different values.
    #[error("{what}: {differ} of {len} elements differ; first at [{first}]: expected {want}, got {got}")]
    Values {
        /// The buffer.
        what: String,
        /// Elements that differ.
        differ: usize,
        /// Elements in all.
        len: usize,
        /// The first that differs.
        first: usize,
        /// Its expected value.
        want: String,
        /// Its value.
        got: String,
    },
}
