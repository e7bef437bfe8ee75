//! CUDA runtime error codes (`cudaError_t`) the shim returns, with their names and descriptions as
//! `cudaGetErrorName` and `cudaGetErrorString` give them.

/// A `cudaError_t` value.
pub type CudaError = i32;

/// The codes the shim returns, with CUDA's names and descriptions (the values are CUDA 13's).
pub const ERRORS: &[(CudaError, &str, &str)] = &[
    (0, "cudaSuccess", "no error"),
    (1, "cudaErrorInvalidValue", "invalid argument"),
    (2, "cudaErrorMemoryAllocation", "out of memory"),
    (3, "cudaErrorInitializationError", "initialization error"),
    (4, "cudaErrorCudartUnloading", "driver shutting down"),
    (9, "cudaErrorInvalidConfiguration", "invalid configuration argument"),
    (12, "cudaErrorInvalidPitchValue", "invalid pitch argument"),
    (13, "cudaErrorInvalidSymbol", "invalid device symbol"),
    (17, "cudaErrorInvalidDevicePointer", "invalid device pointer"),
    (20, "cudaErrorInvalidChannelDescriptor", "invalid channel descriptor"),
    (21, "cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"),
    (26, "cudaErrorInvalidFilterSetting", "linear filtering not supported for non-float type"),
    (52, "cudaErrorMissingConfiguration", "__global__ function call is not configured"),
    (98, "cudaErrorInvalidDeviceFunction", "invalid device function"),
    (100, "cudaErrorNoDevice", "no CUDA-capable device is detected"),
    (101, "cudaErrorInvalidDevice", "invalid device ordinal"),
    (200, "cudaErrorInvalidKernelImage", "device kernel image is invalid"),
    (209, "cudaErrorNoKernelImageForDevice", "no kernel image is available for execution on the device"),
    (218, "cudaErrorInvalidPtx", "a PTX JIT compilation failed"),
    (400, "cudaErrorInvalidResourceHandle", "invalid resource handle"),
    (401, "cudaErrorIllegalState", "the operation cannot be performed in the present state"),
    (600, "cudaErrorNotReady", "device not ready"),
    (700, "cudaErrorIllegalAddress", "an illegal memory access was encountered"),
    (701, "cudaErrorLaunchOutOfResources", "too many resources requested for launch"),
    (702, "cudaErrorLaunchTimeout", "the launch timed out and was terminated"),
    (705, "cudaErrorPeerAccessNotEnabled", "peer access has not been enabled"),
    (710, "cudaErrorAssert", "device-side assert triggered"),
    (712, "cudaErrorHostMemoryAlreadyRegistered", "part or all of the requested memory range is already mapped"),
    (713, "cudaErrorHostMemoryNotRegistered", "pointer does not correspond to a registered memory region"),
    (716, "cudaErrorMisalignedAddress", "misaligned address"),
    (719, "cudaErrorLaunchFailure", "unspecified launch failure"),
    (801, "cudaErrorNotSupported", "operation not supported"),
    (900, "cudaErrorStreamCaptureUnsupported", "operation not permitted when stream is capturing"),
    (901, "cudaErrorStreamCaptureInvalidated", "operation failed due to a previous error during capture"),
    (902, "cudaErrorStreamCaptureMerge", "operation would result in a merge of separate capture sequences"),
    (903, "cudaErrorStreamCaptureUnmatched", "capture was not ended in the same stream as it began"),
    (904, "cudaErrorStreamCaptureUnjoined", "capturing stream has unjoined work"),
    (905, "cudaErrorStreamCaptureIsolation", "dependency created on uncaptured work in another stream"),
    (
        906,
        "cudaErrorStreamCaptureImplicit",
        "operation would make the legacy stream depend on a capturing blocking stream",
    ),
    (907, "cudaErrorCapturedEvent", "operation not permitted on an event last recorded in a capturing stream"),
    (
        908,
        "cudaErrorStreamCaptureWrongThread",
        "attempt to terminate a thread-local capture sequence from another thread",
    ),
    (999, "cudaErrorUnknown", "unknown error"),
];

/// `cudaSuccess`.
pub const SUCCESS: CudaError = 0;
/// `cudaErrorInvalidValue`.
pub const INVALID_VALUE: CudaError = 1;
/// `cudaErrorMemoryAllocation`.
pub const MEMORY_ALLOCATION: CudaError = 2;
/// `cudaErrorInitializationError`.
pub const INITIALIZATION: CudaError = 3;
/// `cudaErrorInvalidConfiguration`.
pub const INVALID_CONFIGURATION: CudaError = 9;
/// `cudaErrorInvalidPitchValue`.
pub const INVALID_PITCH_VALUE: CudaError = 12;
/// `cudaErrorPeerAccessNotEnabled`.
pub const PEER_ACCESS_NOT_ENABLED: CudaError = 705;
/// `cudaErrorInvalidSymbol`.
pub const INVALID_SYMBOL: CudaError = 13;
/// `cudaErrorInvalidDevicePointer`.
pub const INVALID_DEVICE_POINTER: CudaError = 17;
/// `cudaErrorInvalidChannelDescriptor`.
pub const INVALID_CHANNEL_DESCRIPTOR: CudaError = 20;
/// `cudaErrorInvalidMemcpyDirection`.
pub const INVALID_MEMCPY_DIRECTION: CudaError = 21;
/// `cudaErrorInvalidFilterSetting`.
pub const INVALID_FILTER_SETTING: CudaError = 26;
/// `cudaErrorMissingConfiguration`.
pub const MISSING_CONFIGURATION: CudaError = 52;
/// `cudaErrorInvalidDeviceFunction`.
pub const INVALID_DEVICE_FUNCTION: CudaError = 98;
/// `cudaErrorInvalidDevice`.
pub const INVALID_DEVICE: CudaError = 101;
/// `cudaErrorInvalidPtx`.
pub const INVALID_PTX: CudaError = 218;
/// `cudaErrorInvalidResourceHandle`.
pub const INVALID_RESOURCE_HANDLE: CudaError = 400;
/// `cudaErrorIllegalState`.
pub const ILLEGAL_STATE: CudaError = 401;
/// `cudaErrorHostMemoryAlreadyRegistered`.
pub const HOST_MEMORY_ALREADY_REGISTERED: CudaError = 712;
/// `cudaErrorHostMemoryNotRegistered`.
pub const HOST_MEMORY_NOT_REGISTERED: CudaError = 713;
/// `cudaErrorStreamCaptureUnsupported`.
pub const STREAM_CAPTURE_UNSUPPORTED: CudaError = 900;
/// `cudaErrorStreamCaptureInvalidated`.
pub const STREAM_CAPTURE_INVALIDATED: CudaError = 901;
/// `cudaErrorStreamCaptureMerge`.
pub const STREAM_CAPTURE_MERGE: CudaError = 902;
/// `cudaErrorStreamCaptureUnmatched`.
pub const STREAM_CAPTURE_UNMATCHED: CudaError = 903;
/// `cudaErrorStreamCaptureUnjoined`.
pub const STREAM_CAPTURE_UNJOINED: CudaError = 904;
/// `cudaErrorStreamCaptureIsolation`.
pub const STREAM_CAPTURE_ISOLATION: CudaError = 905;
/// `cudaErrorStreamCaptureImplicit`.
pub const STREAM_CAPTURE_IMPLICIT: CudaError = 906;
/// `cudaErrorCapturedEvent`.
pub const CAPTURED_EVENT: CudaError = 907;
/// `cudaErrorStreamCaptureWrongThread`.
pub const STREAM_CAPTURE_WRONG_THREAD: CudaError = 908;
/// `cudaErrorIllegalAddress`.
pub const ILLEGAL_ADDRESS: CudaError = 700;
/// `cudaErrorLaunchOutOfResources`.
pub const LAUNCH_OUT_OF_RESOURCES: CudaError = 701;
/// `cudaErrorMisalignedAddress`.
pub const MISALIGNED_ADDRESS: CudaError = 716;
/// `cudaErrorLaunchFailure`.
pub const LAUNCH_FAILURE: CudaError = 719;
/// `cudaErrorNotSupported`.
pub const NOT_SUPPORTED: CudaError = 801;
/// `cudaErrorUnknown`.
pub const UNKNOWN: CudaError = 999;

/// `cudaGetErrorName`'s text for `code`.
pub fn name(code: CudaError) -> &'static str {
    ERRORS.iter().find(|e| e.0 == code).map_or("cudaErrorUnknown", |e| e.1)
}

/// `cudaGetErrorString`'s text for `code`.
pub fn description(code: CudaError) -> &'static str {
    ERRORS.iter().find(|e| e.0 == code).map_or("unknown error", |e| e.2)
}

/// Whether `code` is a sticky error: CUDA's context is corrupted and every later call returns it.
pub fn is_sticky(code: CudaError) -> bool {
    matches!(code, ILLEGAL_ADDRESS | MISALIGNED_ADDRESS | LAUNCH_FAILURE | 710)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_descriptions_come_from_one_table() {
        assert_eq!(name(ILLEGAL_ADDRESS), "cudaErrorIllegalAddress");
        assert_eq!(description(SUCCESS), "no error");
        assert_eq!(name(12345), "cudaErrorUnknown");
        let mut codes: Vec<_> = ERRORS.iter().map(|e| e.0).collect();
        codes.dedup();
        assert_eq!(codes.len(), ERRORS.len(), "each code once, in order");
        assert!(is_sticky(ILLEGAL_ADDRESS) && !is_sticky(INVALID_VALUE));
    }
}
