//! `exec --sample`: each launch either timed or, when it does the work of launches already timed, run
//! functionally with its cycles estimated from theirs ([`reconverge_records::sampling`]).
//!
//! Whether a launch matches is known only from its functional run, so a launch whose key has a settled
//! cluster runs functionally first on device memory of which a copy is kept; when its signature matches
//! no settled cluster (or the run stopped early) the copy is put back and the launch runs timed, as it
//! would without sampling. The copy is made only when it fits the memory limit beside the memory itself;
//! otherwise the launch is timed.

use crate::launch::{run_on, Ran};
use crate::runtime::{CallConfig, Runtime};
use reconverge_program::LaunchConfig;
use reconverge_records::sampling::{LaunchKey, Plan, Signature};
use reconverge_sim::{DeviceState, Loaded};

impl Runtime {
    /// Runs `loaded` (of module `module`) on `dev` as the settings say: timed, functional, or under
    /// [`Settings::sample`] one of the two with the launch's [`Sampled`] cycles.
    ///
    /// [`Settings::sample`]: crate::settings::Settings::sample
    /// [`Sampled`]: reconverge_records::sampling::Sampled
    pub(crate) fn run_launch(
        &mut self,
        module: usize,
        loaded: &Loaded,
        cfg: &LaunchConfig,
        call: &CallConfig,
        dev: &mut DeviceState,
    ) -> Ran {
        let settings = &self.settings;
        if !settings.sample || settings.gpu.is_none() {
            return run_on(settings, settings.gpu.as_ref(), loaded, cfg, dev);
        }
        let key = LaunchKey {
            kernel: format!("{module}:{}", loaded.program().kernel_name()),
            grid: call.grid,
            block: call.block,
            dynamic_shared: call.shared,
        };
        if self.sampler.plan(&key) == Plan::TryEstimate && copy_fits(dev, settings.max_memory) {
            let before = dev.mem.clone();
            let functional = run_on(settings, None, loaded, cfg, dev);
            if functional.run.error.is_none() {
                if let Some(s) = self.sampler.estimate(&key, &Signature::of(&functional.run.stats)) {
                    return Ran { sample: Some(s), ..functional };
                }
            }
            dev.mem = before;
        }
        let mut timed = run_on(settings, settings.gpu.as_ref(), loaded, cfg, dev);
        if let (None, Some(t)) = (&timed.run.error, &timed.timing) {
            timed.sample = Some(self.sampler.record(&key, &Signature::of(&timed.run.stats), t.cycles));
        }
        timed
    }
}

/// Whether a copy of `dev`'s memory fits `max_memory` beside the memory itself.
fn copy_fits(dev: &DeviceState, max_memory: u64) -> bool {
    dev.mem.allocated_bytes().saturating_mul(2) <= max_memory
}
