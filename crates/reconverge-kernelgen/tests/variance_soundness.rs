//! Soundness of seed 004's convergence and variance analysis on random kernels: an instruction marked
//! thread-invariant in a block marked convergent (CA+VA with the exit rule) never produces two different
//! values in the lanes of one warp that execute it together, and never splits them at a branch, at any
//! warp size (simulated under PDOM, which reconverges at every convergent block).
//!
//! `RECONVERGE_SOUND_KERNELS` sets the number of kernels (default 300).

use reconverge_analysis::{FunctionAnalysis, Variance, VarianceAnalysis};
use reconverge_ir::EntityRef;
use reconverge_kernelgen::{generate, GenOptions, GeneratedKernel, KERNEL_NAME};
use reconverge_mechanism::{Flow, Mechanism};
use reconverge_program::{DecodeOptions, LaunchConfig, Program};
use reconverge_sim::{load, run, IssueEvent, Observer};

/// Checks every issue of the kernel's own instructions against the analysis.
struct Check<'a> {
    prog: &'a Program,
    /// Per IR instruction of the kernel: claimed invariant in a convergent block.
    claimed: Vec<bool>,
    violation: Option<String>,
    checked: u64,
}

impl Observer for Check<'_> {
    fn wants(&self, _: u64, _: u32) -> bool {
        self.violation.is_none()
    }

    fn on_issue(&mut self, ev: &IssueEvent<'_>) {
        let info = &self.prog.info[ev.pc as usize];
        let Some(id) = info.ir_inst else { return };
        if info.func != 0 || !self.claimed.get(id.index()).copied().unwrap_or(false) {
            return;
        }
        self.checked += 1;
        for (reg, vals) in &ev.written {
            if vals.windows(2).any(|w| w[0] != w[1]) {
                self.violation = Some(format!("`{}` wrote different values to r{reg}: {vals:?}", info.text));
            }
        }
        if let Flow::Branch { taken, .. } = ev.flow {
            if *taken != 0 && *taken != ev.mask {
                self.violation = Some(format!("`{}` split lanes {:#x} into {taken:#x}", info.text, ev.mask));
            }
        }
    }
}

#[test]
fn invariant_instructions_in_convergent_blocks_agree_across_the_warp() {
    let n: u64 = std::env::var("RECONVERGE_SOUND_KERNELS").ok().and_then(|v| v.parse().ok()).unwrap_or(300);
    let mut checked = 0u64;
    let mut failures = Vec::new();
    for seed in 0..n {
        let GeneratedKernel { ptx, grid, block, args } = generate(seed, &GenOptions::default());
        let module = reconverge_ptx::parse(&ptx).expect("generated PTX parses");
        let kid = module.function_by_name(KERNEL_NAME).expect("kernel");
        let f = &module.functions[kid];
        let fa = FunctionAnalysis::compute(f);
        let va = VarianceAnalysis::compute(f, &fa);
        let mut claimed = vec![false; f.insts.len()];
        for &b in &f.layout {
            for &i in &f.blocks[b].insts {
                claimed[i.index()] = va.convergent_exit[b.index()] && va.variance[i.index()] == Variance::Invariant;
            }
        }
        let prog = load(&module, Some(KERNEL_NAME), Mechanism::Pdom, &DecodeOptions::default()).expect("loads");
        for w in [4u32, 8, 16, 32] {
            let cfg = LaunchConfig {
                grid,
                block,
                warp_size: w,
                limits: reconverge_program::RunLimits { max_instructions: Some(20_000_000), ..Default::default() },
                ..LaunchConfig::default()
            };
            let mut check = Check { prog: prog.program(), claimed: claimed.clone(), violation: None, checked: 0 };
            let r = run(&prog, &cfg, &args, &mut check);
            assert!(r.error.is_none(), "seed {seed} w{w}: {:?}", r.error);
            checked += check.checked;
            if let Some(v) = check.violation {
                failures.push(format!("seed {seed}, warp size {w}: {v}"));
                break;
            }
        }
    }
    assert!(failures.is_empty(), "{} violations:\n{}", failures.len(), failures.join("\n"));
    assert!(checked > 10_000, "the analysis claims too little to test: {checked} checked issues");
}
