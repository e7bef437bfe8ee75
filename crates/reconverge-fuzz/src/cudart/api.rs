//! The shim's entry points, resolved by name from the loaded library. Pointers travel as `u64` (the C
//! calling convention passes both alike on the 64-bit targets the shim runs on), so that a call can pass
//! any address the plan names.

use super::HarnessError;

/// `dim3` as C passes it (by value).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dim3 {
    /// x.
    pub x: u32,
    /// y.
    pub y: u32,
    /// z.
    pub z: u32,
}

/// A pointer argument.
type P = u64;

macro_rules! api {
    ($($field:ident = $sym:literal : fn($($arg:ty),*) $(-> $ret:ty)?;)*) => {
        /// The entry points the fuzzer calls, as function pointers into the loaded shim.
        pub struct Api {
            $(#[doc = concat!("`", $sym, "`.")] pub $field: unsafe extern "C" fn($($arg),*) $(-> $ret)?,)*
        }

        impl Api {
            /// Every entry point's name, in the order [`Api`] holds them.
            pub const NAMES: &'static [&'static str] = &[$($sym),*];

            /// Resolves every entry point in `lib`.
            ///
            /// # Safety
            /// `lib` must be the CUDA runtime shim, whose symbols have the types CUDA 13 declares.
            pub unsafe fn load(lib: &libloading::Library) -> Result<Api, HarnessError> {
                Ok(Api {
                    $($field: {
                        // SAFETY: the caller's contract: the symbol has this type.
                        let f = unsafe { lib.get::<unsafe extern "C" fn($($arg),*) $(-> $ret)?>($sym) };
                        *f.map_err(|e| HarnessError::Symbol { name: $sym, detail: e.to_string() })?
                    },)*
                })
            }
        }
    };
}

api! {
    register_fat_binary = "__cudaRegisterFatBinary": fn(P) -> P;
    register_fat_binary_end = "__cudaRegisterFatBinaryEnd": fn(P);
    unregister_fat_binary = "__cudaUnregisterFatBinary": fn(P);
    init_module = "__cudaInitModule": fn(P) -> i8;
    register_function = "__cudaRegisterFunction": fn(P, P, P, P, i32, P, P, P, P, P);
    register_var = "__cudaRegisterVar": fn(P, P, P, P, i32, u64, i32, i32);
    register_managed_var = "__cudaRegisterManagedVar": fn(P, P, P, P, i32, u64, i32, i32);
    push_call_configuration = "__cudaPushCallConfiguration": fn(Dim3, Dim3, u64, P) -> u32;
    pop_call_configuration = "__cudaPopCallConfiguration": fn(P, P, P, P) -> i32;
    get_kernel = "__cudaGetKernel": fn(P, P) -> i32;
    launch_stub = "__cudaLaunchKernel": fn(P, Dim3, Dim3, P, u64, P) -> i32;
    launch_stub_ptsz = "__cudaLaunchKernel_ptsz": fn(P, Dim3, Dim3, P, u64, P) -> i32;
    launch_kernel = "cudaLaunchKernel": fn(P, Dim3, Dim3, P, u64, P) -> i32;
    launch_kernel_ptsz = "cudaLaunchKernel_ptsz": fn(P, Dim3, Dim3, P, u64, P) -> i32;
    malloc = "cudaMalloc": fn(P, u64) -> i32;
    free = "cudaFree": fn(P) -> i32;
    memcpy = "cudaMemcpy": fn(P, P, u64, i32) -> i32;
    memcpy_async = "cudaMemcpyAsync": fn(P, P, u64, i32, P) -> i32;
    memset = "cudaMemset": fn(P, i32, u64) -> i32;
    memset_async = "cudaMemsetAsync": fn(P, i32, u64, P) -> i32;
    memcpy_to_symbol = "cudaMemcpyToSymbol": fn(P, P, u64, u64, i32) -> i32;
    memcpy_to_symbol_async = "cudaMemcpyToSymbolAsync": fn(P, P, u64, u64, i32, P) -> i32;
    memcpy_from_symbol = "cudaMemcpyFromSymbol": fn(P, P, u64, u64, i32) -> i32;
    memcpy_from_symbol_async = "cudaMemcpyFromSymbolAsync": fn(P, P, u64, u64, i32, P) -> i32;
    get_symbol_address = "cudaGetSymbolAddress": fn(P, P) -> i32;
    get_symbol_size = "cudaGetSymbolSize": fn(P, P) -> i32;
    malloc_managed = "cudaMallocManaged": fn(P, u64, u32) -> i32;
    malloc_host = "cudaMallocHost": fn(P, u64) -> i32;
    host_alloc = "cudaHostAlloc": fn(P, u64, u32) -> i32;
    free_host = "cudaFreeHost": fn(P) -> i32;
    mem_get_info = "cudaMemGetInfo": fn(P, P) -> i32;
    stream_create = "cudaStreamCreate": fn(P) -> i32;
    stream_create_with_flags = "cudaStreamCreateWithFlags": fn(P, u32) -> i32;
    stream_create_with_priority = "cudaStreamCreateWithPriority": fn(P, u32, i32) -> i32;
    stream_destroy = "cudaStreamDestroy": fn(P) -> i32;
    stream_synchronize = "cudaStreamSynchronize": fn(P) -> i32;
    stream_query = "cudaStreamQuery": fn(P) -> i32;
    stream_wait_event = "cudaStreamWaitEvent": fn(P, P, u32) -> i32;
    event_create = "cudaEventCreate": fn(P) -> i32;
    event_create_with_flags = "cudaEventCreateWithFlags": fn(P, u32) -> i32;
    event_record = "cudaEventRecord": fn(P, P) -> i32;
    event_record_with_flags = "cudaEventRecordWithFlags": fn(P, P, u32) -> i32;
    event_synchronize = "cudaEventSynchronize": fn(P) -> i32;
    event_query = "cudaEventQuery": fn(P) -> i32;
    event_destroy = "cudaEventDestroy": fn(P) -> i32;
    event_elapsed_time = "cudaEventElapsedTime": fn(P, P, P) -> i32;
    get_device_count = "cudaGetDeviceCount": fn(P) -> i32;
    set_device = "cudaSetDevice": fn(i32) -> i32;
    get_device = "cudaGetDevice": fn(P) -> i32;
    get_device_properties = "cudaGetDeviceProperties": fn(P, i32) -> i32;
    device_get_attribute = "cudaDeviceGetAttribute": fn(P, i32, i32) -> i32;
    device_synchronize = "cudaDeviceSynchronize": fn() -> i32;
    thread_synchronize = "cudaThreadSynchronize": fn() -> i32;
    device_reset = "cudaDeviceReset": fn() -> i32;
    thread_exit = "cudaThreadExit": fn() -> i32;
    get_last_error = "cudaGetLastError": fn() -> i32;
    peek_at_last_error = "cudaPeekAtLastError": fn() -> i32;
    profiler_start = "cudaProfilerStart": fn() -> i32;
    profiler_stop = "cudaProfilerStop": fn() -> i32;
    mem_prefetch_async = "cudaMemPrefetchAsync": fn() -> i32;
    mem_advise = "cudaMemAdvise": fn() -> i32;
    func_set_cache_config = "cudaFuncSetCacheConfig": fn(P, i32) -> i32;
    func_set_attribute = "cudaFuncSetAttribute": fn(P, i32, i32) -> i32;
    device_set_limit = "cudaDeviceSetLimit": fn(i32, u64) -> i32;
    device_get_limit = "cudaDeviceGetLimit": fn(P, i32) -> i32;
    get_device_flags = "cudaGetDeviceFlags": fn(P) -> i32;
    device_get_stream_priority_range = "cudaDeviceGetStreamPriorityRange": fn(P, P) -> i32;
    device_set_cache_config = "cudaDeviceSetCacheConfig": fn(i32) -> i32;
    set_device_flags = "cudaSetDeviceFlags": fn(u32) -> i32;
    func_get_attributes = "cudaFuncGetAttributes": fn(P, P) -> i32;
    occupancy = "cudaOccupancyMaxActiveBlocksPerMultiprocessor": fn(P, P, i32, u64) -> i32;
    occupancy_with_flags = "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags": fn(P, P, i32, u64, u32) -> i32;
    get_error_string = "cudaGetErrorString": fn(i32) -> P;
    get_error_name = "cudaGetErrorName": fn(i32) -> P;
    driver_get_version = "cudaDriverGetVersion": fn(P) -> i32;
    runtime_get_version = "cudaRuntimeGetVersion": fn(P) -> i32;
}
