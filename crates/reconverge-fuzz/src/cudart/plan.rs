//! A child's plan: the environment, the fat binary and the sequence of runtime calls it makes, generated
//! from a seed alone (the same seed gives the same plan, whatever the shim answers).
//!
//! Arguments are symbolic ([`Ptr`], [`Size`], [`Handle`], [`Out`]): "device allocation slot 2, 4 bytes
//! before its end", "the length of host buffer 3 plus one", "stream slot 1". The child resolves them
//! against what earlier calls produced (a slot keeps its last value after `cudaFree` or
//! `cudaStreamDestroy`, so it becomes a dangling pointer or a destroyed handle), which keeps every call
//! meaningful when a minimised plan leaves out the calls that filled a slot (it is then NULL, or 0).

use super::fatbin::{random_source, FatBase, FatSource};
use reconverge_program::layout;

/// Device allocation slots (`cudaMalloc`).
pub const DEV_SLOTS: u8 = 6;
/// Managed allocation slots (`cudaMallocManaged`).
pub const MANAGED_SLOTS: u8 = 3;
/// Page-locked host allocation slots (`cudaMallocHost`, `cudaHostAlloc`).
pub const PINNED_SLOTS: u8 = 3;
/// Slots for device addresses of symbols (`cudaGetSymbolAddress`).
pub const ADDR_SLOTS: u8 = 3;
/// Stream slots.
pub const STREAM_SLOTS: u8 = 3;
/// Event slots.
pub const EVENT_SLOTS: u8 = 3;
/// Module handle slots (`__cudaRegisterFatBinary`).
pub const MODULE_SLOTS: u8 = 2;

/// The child's guarded host buffers (each ends at an unmapped page): their lengths. One more buffer,
/// index [`RO`], is read-only, [`RO_LEN`] bytes of `A` with no NUL; kernel stubs lie in it.
pub const HOST_SIZES: [u64; 7] = [0, 1, 8, 64, 4096, 65_543, 1 << 20];
/// The index of the read-only host buffer.
pub const RO: u8 = HOST_SIZES.len() as u8;
/// Its length.
pub const RO_LEN: u64 = 4096;

/// The simulated memory limit of every child (`RECONVERGE_MAX_MEMORY`).
pub const MAX_MEMORY: u64 = 64 << 20;
/// The warp-instruction limit of every launch (`RECONVERGE_MAX_INSTRUCTIONS`).
pub const MAX_INSTRUCTIONS: u64 = 200_000;

/// A kernel parameter's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Param {
    /// A pointer (8 bytes).
    Ptr,
    /// A 32-bit integer.
    U32,
}

/// The kernels a child registers: the fuzzer's own module's six (`module.ptx`), then the fixtures' `add`.
/// A stub index is a position in this table; [`STUBS`] is one past it (a stub never registered).
pub const KERNELS: [(&str, &[Param]); 7] = [
    ("rw", &[Param::Ptr, Param::U32]),
    ("diverge", &[Param::Ptr, Param::U32]),
    ("fault", &[Param::Ptr]),
    ("symbols", &[Param::Ptr]),
    ("spin", &[Param::U32]),
    ("say", &[Param::Ptr, Param::U32]),
    ("_Z3addPii", &[Param::Ptr, Param::U32]),
];
/// Kernel stubs: one per kernel, plus one never registered.
pub const STUBS: u8 = KERNELS.len() as u8 + 1;
/// The index of the fixtures' kernel in [`KERNELS`].
pub const FIXTURE_KERNEL: u8 = 6;

/// The module's variables: name, size, and whether `__constant__`. The third is `__managed__`
/// (registered with `__cudaRegisterManagedVar`; its shadow is the cell the runtime writes the host
/// address into). A fourth shadow is never registered.
pub const VARS: [(&str, u64, bool); 3] = [("dvar", 64, false), ("cvals", 128, true), ("mvar", 16, false)];
/// The index of the managed variable in [`VARS`].
pub const MANAGED_VAR: u8 = 2;
/// Host shadows: one per variable, plus one never registered.
pub const SHADOWS: u8 = VARS.len() as u8 + 1;

/// Where in a buffer a pointer points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Off {
    /// This many bytes from the start (wrapping).
    At(u64),
    /// This many bytes from the end (the length plus the value, wrapping).
    End(i64),
}

/// A pointer argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ptr {
    /// NULL.
    Null,
    /// A fixed address: small integers, unmapped host addresses, the simulator's windows, kernel space.
    Lit(u64),
    /// Into a guarded host buffer ([`HOST_SIZES`], [`RO`]).
    Host(u8, Off),
    /// Into a device allocation slot.
    Dev(u8, Off),
    /// Into a managed allocation slot.
    Managed(u8, Off),
    /// Into a page-locked host allocation slot (clamped to the allocation by the child: an overrun there
    /// would be the program's heap corruption, not the runtime's).
    Pinned(u8, Off),
    /// Into a symbol's device address slot.
    SymAddr(u8, Off),
    /// Into a variable's host shadow ([`SHADOWS`]).
    Shadow(u8, Off),
    /// Into the managed variable's host copy (the address the runtime wrote into its shadow).
    ManagedVar(Off),
    /// A kernel stub's address ([`STUBS`]).
    Stub(u8),
}

/// What a [`Size::Len`] is the length of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A host buffer.
    Host(u8),
    /// A device slot.
    Dev(u8),
    /// A managed slot.
    Managed(u8),
    /// A page-locked slot.
    Pinned(u8),
    /// A variable.
    Var(u8),
}

/// A size argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    /// A fixed number of bytes.
    Lit(u64),
    /// The length of something plus a signed amount (wrapping).
    Len(Target, i64),
}

/// A stream or event handle argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handle {
    /// A fixed value: 0 (the default stream), 1 and 2 (legacy, per-thread), unknown handles.
    Lit(u64),
    /// A stream slot (live or destroyed).
    Stream(u8),
    /// An event slot (live or destroyed).
    Event(u8),
}

/// An output parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Out {
    /// A fresh guarded cell of exactly the size the call writes.
    Cell,
    /// Anything else (NULL, unmapped, read-only, too short, a device address).
    Ptr(Ptr),
}

/// A function (kernel handle) argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    /// A stub ([`STUBS`]; the last was never registered).
    Stub(u8),
    /// Any pointer.
    Ptr(Ptr),
}

/// A module handle argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModHandle {
    /// A handle slot (what `__cudaRegisterFatBinary` returned; NULL when it did not run).
    Slot(u8),
    /// Any pointer.
    Ptr(Ptr),
}

/// A name argument of a registration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Name {
    /// The name of a kernel ([`KERNELS`]).
    Kernel(u8),
    /// The name of a variable ([`VARS`]).
    Var(u8),
    /// A name no module defines.
    Unknown,
    /// Any pointer (NULL, unmapped, the read-only buffer, which has no NUL).
    Ptr(Ptr),
}

/// The wrapper `__cudaRegisterFatBinary` receives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Wrapper {
    /// `{magic, version, data, NULL}`, with the fat binary at `data`.
    Good(FatSource),
    /// A wrong magic or version.
    Header {
        /// The magic.
        magic: u32,
        /// The version.
        version: i32,
        /// The fat binary.
        fat: FatSource,
    },
    /// A good header whose data pointer is this instead of a fat binary.
    Data(Ptr),
    /// The wrapper pointer itself is this.
    At(Ptr),
    /// The wrapper is cut short by an unmapped page after its first 12 bytes.
    Short,
}

/// A kernel argument value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgVal {
    /// A pointer (8 bytes).
    Ptr(Ptr),
    /// A 32-bit value, in a 4-byte guarded cell (reading 8 bytes of it faults).
    U32(u32),
}

/// A launch's argument array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Args {
    /// An array of pointers to these values (in guarded cells; the array ends at an unmapped page).
    Array(Vec<ArgVal>),
    /// The array pointer is this.
    At(Ptr),
    /// An array whose element at the index points here instead.
    BadElem(Vec<ArgVal>, u8, Ptr),
}

/// The launch entry point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaunchPath {
    /// `<<<...>>>`: `__cudaPushCallConfiguration`, then the stub's `__cudaPopCallConfiguration`,
    /// `__cudaGetKernel` and `__cudaLaunchKernel`.
    Stub,
    /// The same with `__cudaLaunchKernel_ptsz`.
    StubPtsz,
    /// `cudaLaunchKernel`.
    Api,
    /// `cudaLaunchKernel_ptsz`.
    ApiPtsz,
}

/// `dim3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim(pub u32, pub u32, pub u32);

/// A call without arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plain {
    /// `cudaDeviceSynchronize`.
    DeviceSynchronize,
    /// `cudaThreadSynchronize`.
    ThreadSynchronize,
    /// `cudaDeviceReset`.
    DeviceReset,
    /// `cudaThreadExit`.
    ThreadExit,
    /// `cudaGetLastError`.
    GetLastError,
    /// `cudaPeekAtLastError`.
    PeekAtLastError,
    /// `cudaProfilerStart`.
    ProfilerStart,
    /// `cudaProfilerStop`.
    ProfilerStop,
    /// `cudaMemPrefetchAsync` (the shim reads no arguments).
    MemPrefetchAsync,
    /// `cudaMemAdvise` (the shim reads no arguments).
    MemAdvise,
}

/// One step of a plan: one runtime call, or the few a `<<<...>>>` launch makes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Call {
    /// `__cudaRegisterFatBinary`, the handle kept in a module slot.
    RegisterFatBinary {
        /// The wrapper.
        wrapper: Wrapper,
        /// The slot the result is kept in.
        slot: u8,
    },
    /// `__cudaRegisterFatBinaryEnd`.
    RegisterFatBinaryEnd {
        /// The module handle.
        handle: ModHandle,
    },
    /// `__cudaUnregisterFatBinary`.
    UnregisterFatBinary {
        /// The module handle.
        handle: ModHandle,
    },
    /// `__cudaInitModule`.
    InitModule {
        /// The module handle.
        handle: ModHandle,
    },
    /// `__cudaRegisterFunction`.
    RegisterFunction {
        /// The module handle.
        handle: ModHandle,
        /// The host stub.
        stub: Func,
        /// The name.
        name: Name,
    },
    /// `__cudaRegisterVar` (`shadow` is the host shadow's address).
    RegisterVar {
        /// The module handle.
        handle: ModHandle,
        /// The host shadow's address.
        shadow: Ptr,
        /// The name.
        name: Name,
        /// The size in bytes.
        size: u64,
        /// A `__constant__` variable.
        constant: bool,
    },
    /// `__cudaRegisterManagedVar` (`cell` is where the runtime writes the host copy's address).
    RegisterManagedVar {
        /// The module handle.
        handle: ModHandle,
        /// Where the runtime writes the host copy's address.
        cell: Out,
        /// The name.
        name: Name,
        /// The size in bytes.
        size: u64,
    },
    /// `cudaMalloc`, the address kept in a device slot.
    Malloc {
        /// The output parameter.
        out: Out,
        /// The slot the result is kept in.
        slot: u8,
        /// The size in bytes.
        size: Size,
    },
    /// `cudaMallocManaged`.
    MallocManaged {
        /// The output parameter.
        out: Out,
        /// The slot the result is kept in.
        slot: u8,
        /// The size in bytes.
        size: Size,
        /// The flags.
        flags: u32,
    },
    /// `cudaMallocHost`, or `cudaHostAlloc` with flags.
    MallocHost {
        /// The output parameter.
        out: Out,
        /// The slot the result is kept in.
        slot: u8,
        /// The size in bytes.
        size: Size,
        /// The flags of the `WithFlags` form (`None`: the form without).
        flags: Option<u32>,
    },
    /// `cudaFree`.
    Free {
        /// The pointer.
        p: Ptr,
    },
    /// `cudaFreeHost`.
    FreeHost {
        /// The pointer.
        p: Ptr,
    },
    /// `cudaMemcpy`, or `cudaMemcpyAsync` on a stream.
    Memcpy {
        /// The destination.
        dst: Ptr,
        /// The source.
        src: Ptr,
        /// The byte count.
        n: Size,
        /// The copy direction (`cudaMemcpyKind`).
        kind: i32,
        /// The stream of the `Async` form (`None`: the synchronous form).
        stream: Option<Handle>,
    },
    /// `cudaMemset`, or `cudaMemsetAsync`.
    Memset {
        /// The pointer.
        p: Ptr,
        /// The value.
        value: i32,
        /// The byte count.
        n: Size,
        /// The stream of the `Async` form (`None`: the synchronous form).
        stream: Option<Handle>,
    },
    /// `cudaMemcpyToSymbol` (`to`) or `cudaMemcpyFromSymbol`, or their `Async` forms.
    SymbolCopy {
        /// To the symbol (else from it).
        to: bool,
        /// The symbol (its host shadow).
        symbol: Ptr,
        /// The other side of the copy.
        other: Ptr,
        /// The byte count.
        n: Size,
        /// The offset into the symbol.
        offset: Size,
        /// The copy direction (`cudaMemcpyKind`).
        kind: i32,
        /// The stream of the `Async` form (`None`: the synchronous form).
        stream: Option<Handle>,
    },
    /// `cudaGetSymbolAddress`, the address kept in an address slot.
    GetSymbolAddress {
        /// The output parameter.
        out: Out,
        /// The slot the result is kept in.
        slot: u8,
        /// The symbol (its host shadow).
        symbol: Ptr,
    },
    /// `cudaGetSymbolSize`.
    GetSymbolSize {
        /// The output parameter.
        out: Out,
        /// The symbol (its host shadow).
        symbol: Ptr,
    },
    /// `cudaMemGetInfo`.
    MemGetInfo {
        /// Where the free memory is written.
        free: Out,
        /// Where the total memory is written.
        total: Out,
    },
    /// `cudaStreamCreate` (`how` 0), `WithFlags` (1) or `WithPriority` (2).
    StreamCreate {
        /// The output parameter.
        out: Out,
        /// The slot the result is kept in.
        slot: u8,
        /// 0: `cudaStreamCreate`, 1: `WithFlags`, 2: `WithPriority`.
        how: u8,
        /// The flags.
        flags: u32,
        /// The priority.
        priority: i32,
    },
    /// `cudaStreamDestroy`.
    StreamDestroy {
        /// The stream.
        stream: Handle,
    },
    /// `cudaStreamSynchronize` (`query` false) or `cudaStreamQuery`.
    StreamSync {
        /// The stream.
        stream: Handle,
        /// The `Query` form instead of `Synchronize`.
        query: bool,
    },
    /// `cudaStreamWaitEvent`.
    StreamWaitEvent {
        /// The stream.
        stream: Handle,
        /// The event.
        event: Handle,
        /// The flags.
        flags: u32,
    },
    /// `cudaEventCreate`, or `WithFlags`.
    EventCreate {
        /// The output parameter.
        out: Out,
        /// The slot the result is kept in.
        slot: u8,
        /// The flags of the `WithFlags` form (`None`: the form without).
        flags: Option<u32>,
    },
    /// `cudaEventRecord`, or `WithFlags`.
    EventRecord {
        /// The event.
        event: Handle,
        /// The stream.
        stream: Handle,
        /// The flags of the `WithFlags` form (`None`: the form without).
        flags: Option<u32>,
    },
    /// `cudaEventSynchronize` (`query` false) or `cudaEventQuery`.
    EventSync {
        /// The event.
        event: Handle,
        /// The `Query` form instead of `Synchronize`.
        query: bool,
    },
    /// `cudaEventDestroy`.
    EventDestroy {
        /// The event.
        event: Handle,
    },
    /// `cudaEventElapsedTime`.
    EventElapsed {
        /// The output parameter.
        out: Out,
        /// The start event.
        start: Handle,
        /// The end event.
        end: Handle,
    },
    /// `cudaGetDeviceCount`.
    GetDeviceCount {
        /// The output parameter.
        out: Out,
    },
    /// `cudaSetDevice`.
    SetDevice {
        /// The device ordinal.
        device: i32,
    },
    /// `cudaGetDevice`.
    GetDevice {
        /// The output parameter.
        out: Out,
    },
    /// `cudaGetDeviceProperties`.
    GetDeviceProperties {
        /// The output parameter.
        out: Out,
        /// The device ordinal.
        device: i32,
    },
    /// `cudaDeviceGetAttribute`.
    DeviceGetAttribute {
        /// The output parameter.
        out: Out,
        /// The attribute.
        attr: i32,
        /// The device ordinal.
        device: i32,
    },
    /// A call without arguments.
    Plain(Plain),
    /// `cudaFuncSetCacheConfig`.
    FuncSetCacheConfig {
        /// The kernel (its host stub).
        func: Func,
        /// The cache configuration.
        config: i32,
    },
    /// `cudaFuncSetAttribute`.
    FuncSetAttribute {
        /// The kernel (its host stub).
        func: Func,
        /// The attribute.
        attr: i32,
        /// The value.
        value: i32,
    },
    /// `cudaDeviceSetLimit`.
    DeviceSetLimit {
        /// The limit (`cudaLimit`).
        limit: i32,
        /// The value.
        value: u64,
    },
    /// `cudaDeviceGetLimit`.
    DeviceGetLimit {
        /// The output parameter.
        out: Out,
        /// The limit (`cudaLimit`).
        limit: i32,
    },
    /// `cudaGetDeviceFlags`.
    GetDeviceFlags {
        /// The output parameter.
        out: Out,
    },
    /// `cudaDeviceGetStreamPriorityRange`.
    StreamPriorityRange {
        /// Where the least priority is written.
        least: Out,
        /// Where the greatest priority is written.
        greatest: Out,
    },
    /// `cudaDeviceSetCacheConfig`.
    DeviceSetCacheConfig {
        /// The cache configuration.
        config: i32,
    },
    /// `cudaSetDeviceFlags`.
    SetDeviceFlags {
        /// The flags.
        flags: u32,
    },
    /// `cudaFuncGetAttributes`.
    FuncGetAttributes {
        /// The output parameter.
        out: Out,
        /// The kernel (its host stub).
        func: Func,
    },
    /// `cudaOccupancyMaxActiveBlocksPerMultiprocessor`, or `WithFlags`.
    Occupancy {
        /// The output parameter.
        out: Out,
        /// The kernel (its host stub).
        func: Func,
        /// The block dimensions.
        block: i32,
        /// Dynamic shared memory, bytes.
        shared: u64,
        /// The flags of the `WithFlags` form (`None`: the form without).
        flags: Option<u32>,
    },
    /// `cudaGetErrorString` (`name` false) or `cudaGetErrorName`; the text is read back.
    ErrorText {
        /// The error code.
        code: i32,
        /// The name.
        name: bool,
    },
    /// `cudaDriverGetVersion` (`runtime` false) or `cudaRuntimeGetVersion`.
    Version {
        /// The output parameter.
        out: Out,
        /// `cudaRuntimeGetVersion` instead of `cudaDriverGetVersion`.
        runtime: bool,
    },
    /// `__cudaPushCallConfiguration` alone.
    Push {
        /// The grid dimensions.
        grid: Dim,
        /// The block dimensions.
        block: Dim,
        /// Dynamic shared memory, bytes.
        shared: u64,
        /// The stream.
        stream: Handle,
    },
    /// `__cudaPopCallConfiguration` alone.
    Pop {
        /// Where the grid is written.
        grid: Out,
        /// Where the block is written.
        block: Out,
        /// Where the dynamic shared memory size is written.
        shared: Out,
        /// Where the stream is written.
        stream: Out,
    },
    /// `__cudaGetKernel`.
    GetKernel {
        /// The output parameter.
        out: Out,
        /// The kernel (its host stub).
        func: Func,
    },
    /// A launch.
    Launch {
        /// The launch path.
        path: LaunchPath,
        /// The kernel (its host stub).
        func: Func,
        /// The grid dimensions.
        grid: Dim,
        /// The block dimensions.
        block: Dim,
        /// Dynamic shared memory, bytes.
        shared: u64,
        /// The stream.
        stream: Handle,
        /// The argument array.
        args: Args,
    },
}

/// Everything one child does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The seed it was generated from.
    pub seed: u64,
    /// The shim's settings (`RECONVERGE_*`), set in the child's environment.
    pub env: Vec<(&'static str, String)>,
    /// Whether the first call registers a damaged fat binary (or wrapper).
    pub damaged: bool,
    /// The calls, registration first.
    pub calls: Vec<Call>,
}

impl Plan {
    /// The plan of `seed`: the shim's settings, the registration of a module (a damaged one for about a
    /// third of the seeds, which then make 3 to 15 more calls; none for a few), usually a few
    /// allocations, then 10 to 200 random calls.
    pub fn generate(seed: u64) -> Plan {
        let mut g = Gen::new(seed);
        let env = g.env();
        let damaged = g.rng.u8(..100) < 30;
        // A few programs have no device code at all (host-only programs that still call the runtime).
        let mut calls = if !damaged && g.chance(3) { Vec::new() } else { g.registration(damaged) };
        if !damaged && g.chance(85) {
            calls.extend(g.setup());
        }
        let n = if damaged {
            g.rng.usize(3..=15)
        } else if g.rng.bool() {
            g.rng.usize(10..=50)
        } else {
            g.rng.usize(10..=200)
        };
        for _ in 0..n {
            let call = g.call();
            calls.push(call);
        }
        Plan { seed, env, damaged, calls }
    }

    /// The plan as text: the settings, then one numbered line per call.
    pub fn describe(&self) -> String {
        let mut s = format!("seed {}{}\n", self.seed, if self.damaged { " (damaged fat binary)" } else { "" });
        for (k, v) in &self.env {
            s.push_str(&format!("{k}={v}\n"));
        }
        for (i, c) in self.calls.iter().enumerate() {
            s.push_str(&format!("#{i} {c:?}\n"));
        }
        s
    }
}

/// Addresses no host mapping uses: small integers, the simulator's windows, unallocated parts of the
/// device and managed regions, past the user address space, the top of the address space. (The
/// function-address window is left out: it lies where the host's own mappings may be.)
pub const LIT_PTRS: [u64; 16] = [
    1,
    8,
    0x1000,
    0xdead_0000,
    layout::GLOBAL_BASE - 0x1000,
    layout::GLOBAL_BASE + (1 << 36),
    0x2000_0000_0000 + (1 << 40),
    layout::SHARED_WINDOW,
    layout::LOCAL_WINDOW + 0x10,
    layout::CONST_WINDOW,
    layout::PARAM_WINDOW,
    0x8000_0000_0000,
    0xffff_8000_0000_0000,
    u64::MAX - 3,
    u64::MAX,
    layout::CONST_WINDOW + layout::WINDOW_SIZE - 4,
];

/// Sizes at the edges: zero, small, page and memory-limit boundaries, 2^31, 2^32, huge, wrapping.
pub const EDGE_SIZES: [u64; 24] = [
    0,
    1,
    3,
    4,
    7,
    8,
    12,
    64,
    65,
    4095,
    4096,
    4097,
    1 << 20,
    MAX_MEMORY - 1,
    MAX_MEMORY,
    MAX_MEMORY + 1,
    1 << 31,
    1 << 32,
    1 << 40,
    1 << 63,
    u64::MAX - 4095,
    u64::MAX - 7,
    u64::MAX,
    (1 << 32) - 1,
];

/// Grid and block dimensions at the edges.
pub const EDGE_DIMS: [u32; 11] = [0, 1, 2, 32, 33, 1024, 1025, 65_535, 65_536, 1 << 31, u32::MAX];

/// Dynamic shared memory sizes at the edges.
pub const EDGE_SHARED: [u64; 8] = [0, 16, 48 << 10, (48 << 10) + 1, 100 << 10, 1 << 31, 1 << 40, u64::MAX];

/// Error codes for `cudaGetErrorString` and `cudaGetErrorName`.
pub const CODES: [i32; 12] = [0, 1, 2, 9, 98, 400, 700, 719, 999, -1, i32::MAX, i32::MIN];

/// The generator: a seeded random source and what it has asked for so far (which slots were
/// allocated, with what size when it was fixed), to aim later calls at them.
struct Gen {
    rng: fastrand::Rng,
    dev: [Option<u64>; DEV_SLOTS as usize],
    /// The module registered is a fixture (whose kernel is `add`).
    fixture: bool,
}

impl Gen {
    fn new(seed: u64) -> Gen {
        Gen { rng: fastrand::Rng::with_seed(seed), dev: [None; DEV_SLOTS as usize], fixture: false }
    }

    /// A choice from a slice.
    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.rng.usize(..from.len())]
    }

    /// Percent chance.
    fn chance(&mut self, percent: u8) -> bool {
        self.rng.u8(..100) < percent
    }

    /// The shim's settings: functional mostly, timed on a preset otherwise, any mechanism, sometimes a
    /// warp size; now and then a value the shim must refuse (which ends the child with status 2).
    fn env(&mut self) -> Vec<(&'static str, String)> {
        let mechs = reconverge_mechanism::Mechanism::ALL;
        let mech = mechs[self.rng.usize(..mechs.len())].name().to_string();
        let config = match self.rng.u8(..10) {
            0..=5 => "functional".to_string(),
            6..=8 => "gtx480".to_string(),
            _ => self.pick(&reconverge_timing::PRESETS).to_string(),
        };
        let mut env = vec![
            ("RECONVERGE_MECHANISM", mech),
            ("RECONVERGE_CONFIG", config),
            ("RECONVERGE_MAX_MEMORY", MAX_MEMORY.to_string()),
            ("RECONVERGE_MAX_INSTRUCTIONS", MAX_INSTRUCTIONS.to_string()),
            ("RECONVERGE_MAX_CYCLES", "5000000".to_string()),
            ("RECONVERGE_THREADS", "1".to_string()),
        ];
        if self.chance(10) {
            env.push(("RECONVERGE_STATS", "/dev/null".to_string()));
        }
        if self.chance(20) {
            env.push(("RECONVERGE_WARP_SIZE", (1u32 << self.rng.u32(0..=6)).to_string()));
        }
        if self.chance(2) {
            let (var, bad) = self.pick(&[
                ("RECONVERGE_WARP_SIZE", "3"),
                ("RECONVERGE_MECHANISM", "nope"),
                ("RECONVERGE_MAX_MEMORY", "lots"),
                ("RECONVERGE_CONFIG", "/nonexistent.toml"),
            ]);
            env.retain(|(k, _)| *k != var);
            env.push((var, bad.to_string()));
        }
        env
    }

    /// The static constructors' calls: the fat binary (damaged or not), the kernels, the variables.
    fn registration(&mut self, damaged: bool) -> Vec<Call> {
        let source = random_source(&mut self.rng, damaged);
        let fixture = matches!(source.base, FatBase::Fixture(_));
        self.fixture = fixture;
        let wrapper = if damaged && self.chance(15) {
            match self.rng.u8(..4) {
                0 => Wrapper::Header { magic: self.rng.u32(..), version: 1, fat: source },
                1 => Wrapper::Header {
                    magic: super::fatbin::WRAPPER_MAGIC,
                    version: self.pick(&[0, 2, 3, -1]),
                    fat: source,
                },
                2 => Wrapper::Data(self.bad_ptr()),
                _ if self.rng.bool() => Wrapper::At(self.bad_ptr()),
                _ => Wrapper::Short,
            }
        } else {
            Wrapper::Good(source)
        };
        let handle = ModHandle::Slot(0);
        let mut calls = vec![Call::RegisterFatBinary { wrapper, slot: 0 }];
        let kernels: Vec<u8> = if fixture { vec![FIXTURE_KERNEL] } else { (0..FIXTURE_KERNEL).collect() };
        for k in kernels {
            calls.push(Call::RegisterFunction { handle, stub: Func::Stub(k), name: Name::Kernel(k) });
        }
        if !fixture {
            for (i, &(_, size, constant)) in VARS.iter().enumerate().take(MANAGED_VAR as usize) {
                let (shadow, name) = (Ptr::Shadow(i as u8, Off::At(0)), Name::Var(i as u8));
                calls.push(Call::RegisterVar { handle, shadow, name, size, constant });
            }
            let size = VARS[MANAGED_VAR as usize].1;
            calls.push(Call::RegisterManagedVar { handle, cell: Out::Cell, name: Name::Var(MANAGED_VAR), size });
        }
        calls.push(Call::RegisterFatBinaryEnd { handle });
        calls
    }

    /// What most programs do first: allocate one to three buffers, and fill some from the host.
    fn setup(&mut self) -> Vec<Call> {
        let mut calls = Vec::new();
        for slot in 0..self.rng.u8(1..=3) {
            let len = self.pick(&[256, 1024, 4096, 65_536]);
            self.dev[slot as usize] = Some(len);
            calls.push(Call::Malloc { out: Out::Cell, slot, size: Size::Lit(len) });
            if self.rng.bool() {
                let (dst, src) = (Ptr::Dev(slot, Off::At(0)), Ptr::Host(5, Off::At(0)));
                calls.push(Call::Memcpy { dst, src, n: Size::Len(Target::Dev(slot), 0), kind: 1, stream: None });
            }
        }
        calls
    }

    /// One random call, by family: memory, launches, streams and events, device and errors, stray
    /// registrations.
    fn call(&mut self) -> Call {
        match self.rng.u8(..100) {
            0..=37 => self.memory_call(),
            38..=62 => self.launch_call(),
            63..=77 => self.stream_call(),
            78..=97 => self.device_call(),
            _ => self.registration_call(),
        }
    }

    /// An offset: mostly the start, sometimes an edge from the start or the end.
    fn off(&mut self) -> Off {
        match self.rng.u8(..10) {
            0..=6 => Off::At(0),
            7 => Off::At(self.pick(&[1, 3, 4, 8, 64, 4095, 4096, 1 << 20, 1 << 32, 1 << 63, u64::MAX - 3, u64::MAX])),
            _ => Off::End(self.pick(&[-8, -4, -1, 0, 1, 8, 4096])),
        }
    }

    /// A device slot, preferring one that was allocated.
    fn dev_slot(&mut self) -> u8 {
        let live: Vec<u8> = (0..DEV_SLOTS).filter(|&k| self.dev[k as usize].is_some()).collect();
        if !live.is_empty() && self.chance(85) {
            self.pick(&live)
        } else {
            self.rng.u8(..DEV_SLOTS)
        }
    }

    /// Any pointer.
    fn ptr(&mut self) -> Ptr {
        match self.rng.u8(..100) {
            0..=5 => Ptr::Null,
            6..=15 => Ptr::Lit(self.pick(&LIT_PTRS)),
            16..=39 => Ptr::Host(self.rng.u8(..=RO), self.off()),
            40..=69 => Ptr::Dev(self.dev_slot(), self.off()),
            70..=77 => Ptr::Managed(self.rng.u8(..MANAGED_SLOTS), self.off()),
            78..=82 => Ptr::Pinned(self.rng.u8(..PINNED_SLOTS), self.off()),
            83..=88 => Ptr::SymAddr(self.rng.u8(..ADDR_SLOTS), self.off()),
            89..=93 => Ptr::Shadow(self.rng.u8(..SHADOWS), self.off()),
            94..=97 => Ptr::ManagedVar(self.off()),
            _ => Ptr::Stub(self.rng.u8(..STUBS)),
        }
    }

    /// A pointer the program should not pass: NULL, unmapped, read-only, a device address.
    fn bad_ptr(&mut self) -> Ptr {
        match self.rng.u8(..6) {
            0 => Ptr::Null,
            1 | 2 => Ptr::Lit(self.pick(&LIT_PTRS)),
            3 => Ptr::Host(RO, self.off()),
            4 => Ptr::Dev(self.dev_slot(), Off::At(0)),
            _ => Ptr::Host(self.rng.u8(..RO), Off::End(self.pick(&[-2, -1, 0, 1]))),
        }
    }

    /// An output parameter: a good cell mostly.
    fn out(&mut self) -> Out {
        if self.chance(85) {
            Out::Cell
        } else {
            Out::Ptr(self.bad_ptr())
        }
    }

    /// A size: an edge, a small one, or a length of something plus a little.
    fn size(&mut self) -> Size {
        match self.rng.u8(..10) {
            0..=2 => Size::Lit(self.pick(&EDGE_SIZES)),
            3..=4 => Size::Lit(self.rng.u64(0..=4096)),
            _ => Size::Len(self.target(), self.pick(&[0, 0, 0, -1, 1, -4, 4, 4096])),
        }
    }

    /// Something with a length.
    fn target(&mut self) -> Target {
        match self.rng.u8(..10) {
            0..=2 => Target::Host(self.rng.u8(..=RO)),
            3..=6 => Target::Dev(self.dev_slot()),
            7 => Target::Managed(self.rng.u8(..MANAGED_SLOTS)),
            8 => Target::Pinned(self.rng.u8(..PINNED_SLOTS)),
            _ => Target::Var(self.rng.u8(..VARS.len() as u8)),
        }
    }

    /// An allocation size: small and usable mostly, an edge otherwise.
    fn alloc_size(&mut self) -> Size {
        match self.rng.u8(..10) {
            0..=6 => Size::Lit(self.pick(&[1, 4, 64, 256, 1000, 4096, 65_536, 1 << 20])),
            7 => Size::Lit(self.rng.u64(0..=8192)),
            _ => Size::Lit(self.pick(&EDGE_SIZES)),
        }
    }

    /// A stream: the default ones, a slot, or something that is not a stream.
    fn stream(&mut self) -> Handle {
        match self.rng.u8(..10) {
            0..=3 => Handle::Lit(0),
            4..=7 => Handle::Stream(self.rng.u8(..STREAM_SLOTS)),
            8 => Handle::Lit(self.pick(&[1, 2, 3, 0x1000, 0x1010, 0xdead, u64::MAX])),
            _ => Handle::Event(self.rng.u8(..EVENT_SLOTS)),
        }
    }

    /// An event: a slot mostly.
    fn event(&mut self) -> Handle {
        match self.rng.u8(..10) {
            0..=7 => Handle::Event(self.rng.u8(..EVENT_SLOTS)),
            8 => Handle::Stream(self.rng.u8(..STREAM_SLOTS)),
            _ => Handle::Lit(self.pick(&[0, 1, 0x1010, u64::MAX])),
        }
    }

    /// A kernel: a registered stub mostly.
    fn func(&mut self) -> Func {
        match self.rng.u8(..20) {
            0..=16 => Func::Stub(self.rng.u8(..STUBS)),
            _ => Func::Ptr(self.ptr()),
        }
    }

    /// A symbol: a registered shadow mostly.
    fn symbol(&mut self) -> Ptr {
        if self.chance(80) {
            Ptr::Shadow(self.rng.u8(..SHADOWS), Off::At(0))
        } else {
            self.ptr()
        }
    }

    /// A `cudaMemcpyKind`: the five kinds mostly.
    fn kind(&mut self) -> i32 {
        if self.chance(92) {
            self.rng.i32(0..=4)
        } else {
            self.pick(&[-1, 5, 7, 1000, i32::MIN, i32::MAX])
        }
    }

    /// The stream of an `Async` form, or `None` for the synchronous one.
    fn maybe_stream(&mut self) -> Option<Handle> {
        if self.chance(30) {
            Some(self.stream())
        } else {
            None
        }
    }

    /// `cudaMemcpy` with operands that match the kind (host or device, the smaller length) mostly.
    fn memcpy(&mut self) -> Call {
        let stream = self.maybe_stream();
        if self.chance(40) {
            let (dst, src, n, kind) = (self.ptr(), self.ptr(), self.size(), self.kind());
            return Call::Memcpy { dst, src, n, kind, stream };
        }
        let kind = self.rng.i32(0..=4);
        let host = |g: &mut Gen| match g.rng.u8(..10) {
            0..=6 => (Ptr::Host(g.rng.u8(..RO), Off::At(0)), Target::Host(g.rng.u8(..RO))),
            7..=8 => {
                let k = g.rng.u8(..PINNED_SLOTS);
                (Ptr::Pinned(k, Off::At(0)), Target::Pinned(k))
            }
            _ => {
                let k = g.rng.u8(..MANAGED_SLOTS);
                (Ptr::Managed(k, Off::At(0)), Target::Managed(k))
            }
        };
        let device = |g: &mut Gen| {
            let k = g.dev_slot();
            (Ptr::Dev(k, Off::At(0)), Target::Dev(k))
        };
        let ((dst, dt), (src, _)) = match kind {
            0 => (host(self), host(self)),
            1 => (device(self), host(self)),
            2 => (host(self), device(self)),
            3 => (device(self), device(self)),
            _ if self.rng.bool() => (device(self), host(self)),
            _ => (host(self), device(self)),
        };
        let n = Size::Len(dt, self.pick(&[0, 0, 0, -1, 1]));
        Call::Memcpy { dst, src, n, kind, stream }
    }

    /// Memory calls.
    fn memory_call(&mut self) -> Call {
        match self.rng.u8(..38) {
            0..=5 => {
                let (slot, size) = (self.rng.u8(..DEV_SLOTS), self.alloc_size());
                self.dev[slot as usize] = match size {
                    Size::Lit(n) => Some(n),
                    Size::Len(..) => None,
                };
                Call::Malloc { out: self.out(), slot, size }
            }
            6..=8 => Call::Free { p: if self.chance(70) { Ptr::Dev(self.dev_slot(), Off::At(0)) } else { self.ptr() } },
            9..=10 => {
                let (out, slot, size) = (self.out(), self.rng.u8(..MANAGED_SLOTS), self.alloc_size());
                Call::MallocManaged { out, slot, size, flags: self.pick(&[1, 1, 2, 0, 7]) }
            }
            11..=12 => {
                let (out, slot, size) = (self.out(), self.rng.u8(..PINNED_SLOTS), self.alloc_size());
                let flags = if self.rng.bool() { Some(self.pick(&[0, 1, 2, 4, 0xff])) } else { None };
                Call::MallocHost { out, slot, size, flags }
            }
            13 => Call::FreeHost {
                p: if self.chance(70) { Ptr::Pinned(self.rng.u8(..PINNED_SLOTS), Off::At(0)) } else { self.ptr() },
            },
            14..=26 => self.memcpy(),
            27..=30 => {
                let p = if self.chance(70) { Ptr::Dev(self.dev_slot(), self.off()) } else { self.ptr() };
                let n = if self.chance(50) { Size::Len(Target::Dev(self.dev_slot()), 0) } else { self.size() };
                Call::Memset { p, value: self.pick(&[0, 1, 0xff, -1, 0x1234_5678]), n, stream: self.maybe_stream() }
            }
            31..=34 => {
                let (to, symbol, other) = (self.rng.bool(), self.symbol(), self.ptr());
                let n = if self.chance(50) {
                    Size::Len(Target::Var(self.rng.u8(..3)), self.pick(&[0, -4, 1]))
                } else {
                    self.size()
                };
                let offset = if self.chance(60) { Size::Lit(self.pick(&[0, 0, 4, 60, 64])) } else { self.size() };
                Call::SymbolCopy { to, symbol, other, n, offset, kind: self.kind(), stream: self.maybe_stream() }
            }
            35 => Call::GetSymbolAddress { out: self.out(), slot: self.rng.u8(..ADDR_SLOTS), symbol: self.symbol() },
            36 => Call::GetSymbolSize { out: self.out(), symbol: self.symbol() },
            _ => Call::MemGetInfo { free: self.out(), total: self.out() },
        }
    }

    /// A grid or block: small mostly, an edge otherwise.
    fn dim(&mut self, small: &[u32]) -> Dim {
        if self.chance(85) {
            Dim(self.pick(small), 1, 1)
        } else {
            Dim(self.pick(&EDGE_DIMS), self.pick(&[1, 1, 0, 2, 65_535, 65_536]), self.pick(&[1, 1, 0, 64, 65]))
        }
    }

    /// A kernel's argument value of kind `p`: a live device pointer and a small count mostly.
    fn arg(&mut self, p: Param, slot: u8) -> ArgVal {
        match p {
            Param::Ptr if self.chance(92) => ArgVal::Ptr(Ptr::Dev(slot, Off::At(0))),
            Param::Ptr => ArgVal::Ptr(self.ptr()),
            Param::U32 => {
                let len = self.dev[slot as usize].unwrap_or(64);
                let quarter = u32::try_from(len / 4).unwrap_or(u32::MAX);
                if self.chance(94) {
                    ArgVal::U32(self.pick(&[0, 1, 32, 64, quarter, quarter, quarter]).min(quarter))
                } else {
                    ArgVal::U32(self.pick(&[quarter.saturating_add(1), 256, u32::MAX, 1 << 20]))
                }
            }
        }
    }

    /// A launch's argument array for kernel `k`: right mostly; short, long, NULL or with a bad element
    /// otherwise.
    fn args(&mut self, k: u8) -> Args {
        let params: &[Param] = KERNELS.get(k as usize).map_or(&[Param::Ptr], |k| k.1);
        let slot = self.dev_slot();
        let mut vals: Vec<ArgVal> = params.iter().map(|&p| self.arg(p, slot)).collect();
        match self.rng.u8(..40) {
            0..=35 => Args::Array(vals),
            36 => {
                vals.truncate(self.rng.usize(..vals.len().max(1)));
                Args::Array(vals)
            }
            37 => {
                vals.push(ArgVal::U32(7));
                Args::Array(vals)
            }
            38 => Args::At(self.bad_ptr()),
            _ => {
                let at = self.rng.u8(..vals.len().max(1) as u8);
                Args::BadElem(vals, at, self.bad_ptr())
            }
        }
    }

    /// Launches (most of this family), stray configuration pushes and pops, function queries.
    fn launch_call(&mut self) -> Call {
        match self.rng.u8(..25) {
            0..=17 => {
                let k = if self.fixture && self.chance(80) {
                    FIXTURE_KERNEL
                } else {
                    self.pick(&[0, 0, 0, 0, 0, 1, 1, 1, 1, 3, 3, 3, 2, 4, 5, 5, FIXTURE_KERNEL, STUBS - 1])
                };
                let func = if self.chance(95) { Func::Stub(k) } else { Func::Ptr(self.ptr()) };
                let path = self.pick(&[
                    LaunchPath::Stub,
                    LaunchPath::Stub,
                    LaunchPath::Api,
                    LaunchPath::StubPtsz,
                    LaunchPath::ApiPtsz,
                ]);
                let (grid, block) = (self.dim(&[1, 1, 2, 3, 4, 8]), self.dim(&[1, 32, 64, 100, 128, 256]));
                let shared =
                    if self.chance(80) { self.pick(&[0, 0, 0, 64, 128, 4096]) } else { self.pick(&EDGE_SHARED) };
                let stream = if self.chance(80) { Handle::Lit(0) } else { self.stream() };
                Call::Launch { path, func, grid, block, shared, stream, args: self.args(k) }
            }
            18 => Call::Push {
                grid: self.dim(&[1, 2]),
                block: self.dim(&[32, 64]),
                shared: self.pick(&EDGE_SHARED),
                stream: self.stream(),
            },
            19 => Call::Pop { grid: self.out(), block: self.out(), shared: self.out(), stream: self.out() },
            20 => Call::GetKernel { out: self.out(), func: self.func() },
            21 => Call::FuncGetAttributes { out: self.out(), func: self.func() },
            22 => {
                let (out, func, block) =
                    (self.out(), self.func(), self.pick(&[0, 1, 32, 256, 1024, 1025, -1, i32::MAX]));
                let flags = if self.rng.bool() { Some(self.pick(&[0, 1, 2])) } else { None };
                Call::Occupancy { out, func, block, shared: self.pick(&EDGE_SHARED), flags }
            }
            23 => {
                let (func, attr) = (self.func(), self.pick(&[8, 8, 9, 0, -1, 99]));
                Call::FuncSetAttribute {
                    func,
                    attr,
                    value: self.pick(&[0, 1024, 48 << 10, 100 << 10, 1 << 30, -1, i32::MAX]),
                }
            }
            _ => Call::FuncSetCacheConfig { func: self.func(), config: self.pick(&[0, 1, 2, 3, -1, 99]) },
        }
    }

    /// Streams and events.
    fn stream_call(&mut self) -> Call {
        match self.rng.u8(..15) {
            0..=1 => {
                let (out, slot, how) = (self.out(), self.rng.u8(..STREAM_SLOTS), self.rng.u8(..3));
                Call::StreamCreate {
                    out,
                    slot,
                    how,
                    flags: self.pick(&[0, 1, 2, u32::MAX]),
                    priority: self.pick(&[0, -1, 5, i32::MIN]),
                }
            }
            2 => Call::StreamDestroy { stream: self.stream() },
            3..=4 => Call::StreamSync { stream: self.stream(), query: self.rng.bool() },
            5 => Call::StreamWaitEvent {
                stream: self.stream(),
                event: self.event(),
                flags: self.pick(&[0, 1, u32::MAX]),
            },
            6..=7 => {
                let (out, slot) = (self.out(), self.rng.u8(..EVENT_SLOTS));
                Call::EventCreate {
                    out,
                    slot,
                    flags: if self.rng.bool() { Some(self.pick(&[0, 1, 2, 4, u32::MAX])) } else { None },
                }
            }
            8..=10 => {
                let (event, stream) = (self.event(), self.stream());
                Call::EventRecord {
                    event,
                    stream,
                    flags: if self.chance(20) { Some(self.pick(&[0, 1, u32::MAX])) } else { None },
                }
            }
            11 => Call::EventSync { event: self.event(), query: self.rng.bool() },
            12 => Call::EventDestroy { event: self.event() },
            _ => Call::EventElapsed { out: self.out(), start: self.event(), end: self.event() },
        }
    }

    /// Device queries and settings, synchronisation and reset, errors and versions.
    fn device_call(&mut self) -> Call {
        let device = |g: &mut Gen| if g.chance(85) { 0 } else { g.pick(&[1, -1, i32::MAX]) };
        match self.rng.u8(..26) {
            24..=25 => Call::Plain(Plain::DeviceReset),
            0 => Call::GetDeviceCount { out: self.out() },
            1 => Call::SetDevice { device: device(self) },
            2 => Call::GetDevice { out: self.out() },
            3 => Call::GetDeviceProperties { out: self.out(), device: device(self) },
            4..=5 => {
                let attr = if self.chance(70) { self.rng.i32(0..=130) } else { self.pick(&[-1, i32::MAX, i32::MIN]) };
                Call::DeviceGetAttribute { out: self.out(), attr, device: device(self) }
            }
            6..=8 => {
                Call::Plain(self.pick(&[Plain::DeviceSynchronize, Plain::DeviceSynchronize, Plain::ThreadSynchronize]))
            }
            9 => Call::Plain(if self.chance(70) { Plain::DeviceReset } else { Plain::ThreadExit }),
            10..=12 => Call::Plain(self.pick(&[Plain::GetLastError, Plain::PeekAtLastError])),
            13 => Call::Plain(self.pick(&[
                Plain::ProfilerStart,
                Plain::ProfilerStop,
                Plain::MemPrefetchAsync,
                Plain::MemAdvise,
            ])),
            14..=15 => {
                let code = if self.chance(60) { self.pick(&CODES) } else { self.rng.i32(..) };
                Call::ErrorText { code, name: self.rng.bool() }
            }
            16 => Call::Version { out: self.out(), runtime: self.rng.bool() },
            17 => Call::DeviceSetLimit { limit: self.pick(&[0, 1, 2, 5, -1]), value: self.pick(&EDGE_SIZES) },
            18 => Call::DeviceGetLimit { out: self.out(), limit: self.pick(&[0, 1, 2, 3, 5, -1]) },
            19 => Call::GetDeviceFlags { out: self.out() },
            20 => {
                let least = if self.chance(20) { Out::Ptr(Ptr::Null) } else { self.out() };
                Call::StreamPriorityRange { least, greatest: self.out() }
            }
            21 => Call::DeviceSetCacheConfig { config: self.pick(&[0, 1, 2, 3, -1]) },
            22 => Call::SetDeviceFlags { flags: self.pick(&[0, 1, 4, 8, u32::MAX]) },
            _ => Call::MemGetInfo { free: self.out(), total: self.out() },
        }
    }

    /// Registrations after start, most of them wrong: a second fat binary, functions and variables
    /// with bad handles, names or stubs, module calls with bad handles.
    fn registration_call(&mut self) -> Call {
        let handle = |g: &mut Gen| {
            if g.chance(50) {
                ModHandle::Slot(g.rng.u8(..MODULE_SLOTS))
            } else {
                ModHandle::Ptr(g.bad_ptr())
            }
        };
        let name = |g: &mut Gen| match g.rng.u8(..4) {
            0 => Name::Kernel(g.rng.u8(..KERNELS.len() as u8)),
            1 => Name::Var(g.rng.u8(..VARS.len() as u8)),
            2 => Name::Unknown,
            _ => Name::Ptr(g.bad_ptr()),
        };
        let damaged = self.chance(50);
        match self.rng.u8(..8) {
            0 => Call::RegisterFatBinary { wrapper: Wrapper::Good(random_source(&mut self.rng, damaged)), slot: 1 },
            1..=2 => Call::RegisterFunction { handle: handle(self), stub: self.func(), name: name(self) },
            3..=4 => {
                let (handle, shadow, name) = (handle(self), self.symbol(), name(self));
                Call::RegisterVar { handle, shadow, name, size: self.pick(&EDGE_SIZES), constant: self.rng.bool() }
            }
            5 => {
                let (handle, cell, name) = (handle(self), self.out(), name(self));
                Call::RegisterManagedVar {
                    handle,
                    cell,
                    name,
                    size: self.pick(&[0, 4, 16, 4096, MAX_MEMORY + 1, u64::MAX]),
                }
            }
            6 => Call::InitModule { handle: handle(self) },
            _ if self.rng.bool() => Call::UnregisterFatBinary { handle: handle(self) },
            _ => Call::RegisterFatBinaryEnd { handle: handle(self) },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_gives_one_plan() {
        for seed in [0, 1, 77, u64::MAX] {
            assert_eq!(Plan::generate(seed), Plan::generate(seed));
        }
        assert_ne!(Plan::generate(1).calls, Plan::generate(2).calls);
    }

    /// Plans register first (all but a few); undamaged ones make 10 to 200 calls after the registration
    /// (and the setup), damaged ones 3 to 15; about a third are damaged.
    #[test]
    fn plans_register_first_and_have_their_lengths() {
        let (mut damaged, mut unregistered) = (0, 0);
        for seed in 0..300 {
            let p = Plan::generate(seed);
            let registers = matches!(p.calls[0], Call::RegisterFatBinary { slot: 0, .. });
            unregistered += u32::from(!registers);
            let end =
                p.calls.iter().position(|c| matches!(c, Call::RegisterFatBinaryEnd { handle: ModHandle::Slot(0) }));
            let body = if registers { p.calls.len() - end.expect("registration ends") - 1 } else { p.calls.len() };
            if p.damaged {
                damaged += 1;
                assert!((3..=15).contains(&body), "seed {seed}: {body} calls");
            } else {
                assert!((10..=200 + 6).contains(&body), "seed {seed}: {body} calls");
            }
        }
        assert!((60..=120).contains(&damaged), "{damaged} of 300 damaged");
        assert!((1..=20).contains(&unregistered), "{unregistered} of 300 register nothing");
    }

    /// Over a few hundred seeds every kind of call, launch path and pointer kind is drawn.
    #[test]
    fn plans_draw_every_kind_of_call() {
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..400 {
            for c in Plan::generate(seed).calls {
                let name = format!("{c:?}");
                seen.insert(name.split([' ', '(']).next().unwrap_or("").to_string());
                if let Call::Launch { path, .. } = c {
                    seen.insert(format!("{path:?}"));
                }
            }
        }
        for want in
            ["Malloc", "Memcpy", "SymbolCopy", "Launch", "Stub", "StubPtsz", "Api", "ApiPtsz", "Pop", "EventElapsed"]
        {
            assert!(seen.contains(want), "{want} never drawn: {seen:?}");
        }
        assert!(seen.len() >= 50, "{} kinds of call: {seen:?}", seen.len());
    }
}
