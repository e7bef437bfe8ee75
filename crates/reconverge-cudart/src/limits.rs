//! The simulated device's limits, from one place: what `cudaGetDeviceProperties` and
//! `cudaDeviceGetAttribute` report, and what a launch is checked against before it runs
//! ([`Runtime::check_launch`]).

use crate::error::{self as cuda, CudaError};
use crate::runtime::{CallConfig, Runtime};
use reconverge_program::launch::{MAX_BLOCK, MAX_GRID, MAX_THREADS_PER_BLOCK};
use reconverge_timing::GpuConfig;
use std::sync::OnceLock;

/// Shared memory a block may use without opting in (`sharedMemPerBlock`), as on every GPU since Fermi.
pub const DEFAULT_SHARED_PER_BLOCK: u64 = 48 * 1024;

/// The GPU properties describe when the timing model is off (functional mode).
const FUNCTIONAL_PRESET: &str = "gtx480";

/// The limits a launch must respect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// `maxThreadsPerBlock`.
    pub threads_per_block: u64,
    /// `maxThreadsDim`.
    pub block: [u64; 3],
    /// `maxGridSize`.
    pub grid: [u64; 3],
    /// `sharedMemPerBlock`: static plus dynamic shared memory of a block that has not opted in.
    pub shared_per_block: u64,
    /// `sharedMemPerBlockOptin`: the most a kernel may opt in to (`cudaFuncSetAttribute`).
    pub shared_per_block_optin: u64,
}

/// Why the runtime refuses a launch before it runs (CUDA's codes: [`Refusal::code`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// A grid or block dimension of 0.
    #[error("grid and block dimensions must be at least 1")]
    ZeroDimension,
    /// A block dimension above `maxThreadsDim`.
    #[error("block dimension {axis} is {size}; at most {max}")]
    BlockDimension {
        /// `x`, `y` or `z`.
        axis: &'static str,
        /// The dimension asked for.
        size: u32,
        /// The limit.
        max: u64,
    },
    /// More threads per block than `maxThreadsPerBlock`.
    #[error("the block has {threads} threads; at most {max}")]
    BlockThreads {
        /// x·y·z.
        threads: u64,
        /// The limit.
        max: u64,
    },
    /// A grid dimension above `maxGridSize`.
    #[error("grid dimension {axis} is {size}; at most {max}")]
    GridDimension {
        /// `x`, `y` or `z`.
        axis: &'static str,
        /// The dimension asked for.
        size: u32,
        /// The limit.
        max: u64,
    },
    /// More dynamic shared memory than the kernel may have.
    #[error(
        "more dynamic shared memory than the kernel may have: {asked} bytes asked, {allowed} allowed (its static \
         shared memory is {static_shared} bytes; cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize) \
         allows up to {optin} bytes in all)"
    )]
    SharedMemory {
        /// Bytes asked for.
        asked: u64,
        /// Bytes allowed.
        allowed: u64,
        /// The kernel's static shared memory.
        static_shared: u64,
        /// `sharedMemPerBlockOptin`.
        optin: u64,
    },
    /// A stream that was never created or is destroyed.
    #[error("stream {0:#x} is not a stream of this process")]
    Stream(u64),
}

impl Refusal {
    /// The error code CUDA returns for it.
    pub fn code(&self) -> CudaError {
        match self {
            Refusal::SharedMemory { .. } => cuda::INVALID_VALUE,
            Refusal::Stream(_) => cuda::INVALID_RESOURCE_HANDLE,
            _ => cuda::INVALID_CONFIGURATION,
        }
    }
}

impl Limits {
    /// The limits of GPU `g`.
    pub fn of(g: &GpuConfig) -> Limits {
        let sm_shared = u64::from(g.sm.shared_memory);
        Limits {
            threads_per_block: u64::from(g.sm.max_threads).min(MAX_THREADS_PER_BLOCK),
            block: MAX_BLOCK,
            grid: MAX_GRID,
            shared_per_block: sm_shared.min(DEFAULT_SHARED_PER_BLOCK),
            shared_per_block_optin: sm_shared,
        }
    }

    /// The dynamic shared memory a kernel with `static_shared` bytes of its own may be launched with:
    /// what it opted in to, or what is left of `sharedMemPerBlock`.
    pub fn dynamic_shared(&self, static_shared: u64, opted_in: Option<u64>) -> u64 {
        opted_in.unwrap_or_else(|| self.shared_per_block.saturating_sub(static_shared))
    }

    /// Checks a launch's geometry and dynamic shared memory (a kernel of `static_shared` bytes that
    /// opted in to `opted_in`).
    pub fn check(&self, call: &CallConfig, static_shared: u64, opted_in: Option<u64>) -> Result<(), Refusal> {
        if call.grid.contains(&0) || call.block.contains(&0) {
            return Err(Refusal::ZeroDimension);
        }
        const AXES: [&str; 3] = ["x", "y", "z"];
        for (i, (&size, &max)) in call.block.iter().zip(&self.block).enumerate() {
            if u64::from(size) > max {
                return Err(Refusal::BlockDimension { axis: AXES[i], size, max });
            }
        }
        let threads: u64 = call.block.iter().map(|&b| u64::from(b)).product();
        if threads > self.threads_per_block {
            return Err(Refusal::BlockThreads { threads, max: self.threads_per_block });
        }
        for (i, (&size, &max)) in call.grid.iter().zip(&self.grid).enumerate() {
            if u64::from(size) > max {
                return Err(Refusal::GridDimension { axis: AXES[i], size, max });
            }
        }
        let allowed = self.dynamic_shared(static_shared, opted_in);
        if call.shared > allowed {
            let optin = self.shared_per_block_optin;
            return Err(Refusal::SharedMemory { asked: call.shared, allowed, static_shared, optin });
        }
        Ok(())
    }
}

impl Runtime {
    /// The GPU the device's properties describe: the configuration, or the functional preset.
    pub fn described(&self) -> &GpuConfig {
        static FUNCTIONAL: OnceLock<GpuConfig> = OnceLock::new();
        self.settings.gpu.as_ref().unwrap_or_else(|| {
            FUNCTIONAL.get_or_init(|| {
                GpuConfig::preset(FUNCTIONAL_PRESET)
                    .unwrap_or_else(|| crate::api::exit_with(70, "no built-in GPU configuration"))
            })
        })
    }

    /// The limits of the described GPU.
    pub fn limits(&self) -> Limits {
        Limits::of(self.described())
    }

    /// Checks a launch of the kernel of host stub `host_fn` (with `static_shared` bytes of its own)
    /// before anything runs: geometry, dynamic shared memory, the stream.
    pub fn check_launch(&self, host_fn: u64, call: &CallConfig, static_shared: u64) -> Result<(), Refusal> {
        let opted_in = self.max_dynamic_shared.get(&host_fn).copied();
        self.limits().check(call, static_shared, opted_in)?;
        self.stream(call.stream).map_err(|_| Refusal::Stream(call.stream))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits::of(&GpuConfig::preset(FUNCTIONAL_PRESET).expect("the preset"))
    }

    fn call(grid: [u32; 3], block: [u32; 3], shared: u64) -> CallConfig {
        CallConfig { grid, block, shared, stream: 0 }
    }

    #[test]
    fn cuda_refuses_these_launches_with_these_codes() {
        let l = limits();
        let code = |grid, block, shared| l.check(&call(grid, block, shared), 0, None).map_err(|r| r.code());
        assert_eq!(code([1; 3], [1024, 1, 1], 0), Ok(()));
        assert_eq!(code([(1 << 31) - 1, 65535, 65535], [32, 1, 1], 0), Ok(()));
        for (grid, block) in [
            ([1, 1, 1], [1025, 1, 1]),
            ([1, 1, 1], [1024, 2, 1]),
            ([1, 1, 1], [1, 1, 128]),
            ([1, 65536, 1], [1, 1, 1]),
            ([1, 1, 65536], [1, 1, 1]),
            ([0, 1, 1], [1, 1, 1]),
        ] {
            assert_eq!(code(grid, block, 0), Err(cuda::INVALID_CONFIGURATION), "{grid:?} {block:?}");
        }
        assert_eq!(code([1; 3], [32, 1, 1], 48 * 1024), Ok(()));
        assert_eq!(code([1; 3], [32, 1, 1], 1 << 20), Err(cuda::INVALID_VALUE));
        let r = l.check(&call([1; 3], [32, 1, 1], 1 << 33), 0, None).expect_err("8 GiB");
        assert!(r.to_string().contains("8589934592 bytes asked, 49152 allowed"), "{r}");
    }

    #[test]
    fn static_shared_memory_and_the_opt_in_move_the_dynamic_limit() {
        let l = limits();
        let c = call([1; 3], [32, 1, 1], 40 * 1024);
        assert!(l.check(&c, 8 * 1024, None).is_ok());
        assert!(l.check(&c, 8 * 1024 + 1, None).is_err());
        assert!(l.check(&c, 0, Some(16 * 1024)).is_err(), "an opt-in below the default is a limit too");
        assert!(l.check(&c, 0, Some(40 * 1024)).is_ok());
    }
}
