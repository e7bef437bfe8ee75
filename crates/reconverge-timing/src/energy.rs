//! The energy per event of a GPU configuration (`[energy]`): the numbers `reconverge-energy` prices the
//! timing model's counts with. Every preset value names its source here and in `docs/energy.md`.

use serde::{Deserialize, Serialize};

/// Energy per counted event (joules) and the chip's time-proportional power (watts).
///
/// Each field's event is exactly a counter of [`crate::TimingStats`]; `docs/energy.md` maps them to
/// GPUWattch's and AccelWattch's performance counters.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnergyCoefficients {
    /// Technology node, nm (for readers; the coefficients already are that node's).
    pub node_nm: u32,
    /// Where the values come from, in one line (the full citations are in `docs/energy.md`).
    pub source: String,
    /// Fetch buffer, decode and scheduling, per issued warp instruction.
    pub instruction_j: f64,
    /// An instruction-cache fetch that hit.
    pub icache_hit_j: f64,
    /// An instruction-cache fetch that missed.
    pub icache_miss_j: f64,
    /// A register read, per lane and source register operand.
    pub register_read_j: f64,
    /// A register write, per lane and destination register.
    pub register_write_j: f64,
    /// Whether masked lanes skip their register reads and writes (clock-gated register file).
    pub register_file_gated: bool,
    /// An integer lane operation.
    pub int_lane_j: f64,
    /// A single-precision lane operation.
    pub float_lane_j: f64,
    /// A double-precision lane operation.
    pub double_lane_j: f64,
    /// A special-function lane operation.
    pub sfu_lane_j: f64,
    /// Energy of a masked lane of an issued instruction in its functional unit, as a fraction of an active
    /// lane's (0: clock-gated lanes).
    pub idle_lane_fraction: f64,
    /// The execution pipeline (pipeline registers, operand and result buses), per lane operation.
    pub pipeline_lane_j: f64,
    /// An L1 line request of a load that hit.
    pub l1_read_hit_j: f64,
    /// An L1 line request of a load that missed.
    pub l1_read_miss_j: f64,
    /// An L1 line request of a store (write-through, no allocation).
    pub l1_write_j: f64,
    /// A shared-memory wavefront.
    pub shared_wavefront_j: f64,
    /// A constant-cache line access that hit.
    pub constant_hit_j: f64,
    /// A constant-cache line access that missed.
    pub constant_miss_j: f64,
    /// A texture-cache line access that hit.
    pub texture_hit_j: f64,
    /// A texture-cache line access that missed.
    pub texture_miss_j: f64,
    /// An L2 sector read that hit.
    pub l2_read_hit_j: f64,
    /// An L2 sector read that missed.
    pub l2_read_miss_j: f64,
    /// An L2 sector written that hit.
    pub l2_write_hit_j: f64,
    /// An L2 sector written that missed.
    pub l2_write_miss_j: f64,
    /// An interconnect flit.
    pub noc_flit_j: f64,
    /// A DRAM read burst (column read command), memory controller included.
    pub dram_read_burst_j: f64,
    /// A DRAM write burst (column write command), memory controller included.
    pub dram_write_burst_j: f64,
    /// A DRAM row cycle (activate and its precharge).
    pub dram_activate_j: f64,
    /// Power of an SM without resident work, watts.
    pub idle_sm_w: f64,
    /// The chip's constant power (clock tree, leakage, fixed memory-controller power), watts.
    pub constant_w: f64,
    /// Static power of the whole chip's SMs with work, at one active lane per instruction, watts (charged for
    /// the fraction of SMs with resident work: AccelWattch's first-lane static power).
    #[serde(default)]
    pub sm_static_w: f64,
    /// Static power added per further active lane of the launch's mean active lanes per warp instruction,
    /// watts (AccelWattch's additional-lane static power).
    #[serde(default)]
    pub lane_static_w: f64,
}

impl EnergyCoefficients {
    /// GPUWattch's GTX 480 (40 nm): GPGPU-Sim 4.0's power model with `configs/tested-cfgs/SM2_GTX480/
    /// gpuwattch_gtx480.xml`, per-event energies as it computes them (`effpower_coeff × executionTime`,
    /// extracted by `scripts/gpgpusim/fix_power.py`, listed in `docs/validation/gpuwattch-coefficients-
    /// SM2_GTX480.csv`). Where one of our events is several of GPUWattch's or a weighted one, the
    /// derivation is in `docs/energy.md`.
    pub fn gtx480() -> EnergyCoefficients {
        EnergyCoefficients {
            node_nm: 40,
            source: "GPUWattch (Leng et al., ISCA 2013), GPGPU-Sim 4.0 gpuwattch_gtx480.xml".into(),
            // TOT_INST 3.6141e-12 + FP_INT 5.48897e-11.
            instruction_j: 5.85038e-11,
            icache_hit_j: 6.34345e-11,
            icache_miss_j: 2.16931e-9,
            register_read_j: 7.26682e-12,
            register_write_j: 5.98604e-12,
            register_file_gated: false,
            // SP_ACC 2.69477e-12 per event, 32 events per lane.
            int_lane_j: 8.62326e-11,
            // FPU_ACC 2.95799e-11, weight 1 (fma).
            float_lane_j: 2.95799e-11,
            double_lane_j: 2.95799e-11,
            // SFU_ACC 4.83518e-11, weight 25 (sqrt/rsqrt; sin/cos 12, lg2/ex2 35).
            sfu_lane_j: 1.208795e-9,
            idle_lane_fraction: 0.5,
            // PIPE_A 3.63739e-8 per cycle at duty 1 = 64 lane operations on each of 15 SMs.
            pipeline_lane_j: 3.78895e-11,
            l1_read_hit_j: 2.9346e-9,
            l1_read_miss_j: 2.22507e-9,
            l1_write_j: 2.60367e-9,
            shared_wavefront_j: 2.11946e-9,
            constant_hit_j: 1.4673e-9,
            constant_miss_j: 1.11254e-9,
            texture_hit_j: 1.35331e-9,
            texture_miss_j: 2.22507e-9,
            l2_read_hit_j: 2.80504e-9,
            l2_read_miss_j: 1.02042e-10,
            l2_write_hit_j: 1.38512e-8,
            l2_write_miss_j: 1.50243e-8,
            noc_flit_j: 1.93858e-9,
            dram_read_burst_j: 2.69484e-8,
            dram_write_burst_j: 1.58649e-8,
            // MEM_PRE: GPUWattch charges the row cycle at its precharge.
            dram_activate_j: 4.23225e-9,
            idle_sm_w: 1.59,
            // CONST_DYNAMICN: McPAT's 1.17634 W fixed memory-controller power plus CONST_DYNAMICP.
            constant_w: 11.0,
            // GPUWattch has no static power term (McPAT's leakage is computed and not used).
            sm_static_w: 0.0,
            lane_static_w: 0.0,
        }
    }

    /// AccelWattch's Quadro V100 (12 nm): GPGPU-Sim 4.2's power model (`src/accelwattch`, the authors'
    /// upstream merge) with `configs/tested-cfgs/SM7_QV100/accelwattch_ptx_sim.xml` in its PTX simulation
    /// mode, per-event energies as it computes them (extracted by `scripts/gpgpusim/fix_power42.py`, listed
    /// in `docs/validation/accelwattch-coefficients-SM7_QV100.csv`). Lanes are clock-gated
    /// (`-gpgpu_clock_gated_lanes 1`), the register file is not.
    pub fn qv100() -> EnergyCoefficients {
        EnergyCoefficients {
            node_nm: 12,
            source: "AccelWattch (Kandiah et al., MICRO 2021), GPGPU-Sim 4.2 accelwattch_ptx_sim.xml".into(),
            // TOT_INST 1.17567e-12 + FP_INT 1.69726e-11.
            instruction_j: 1.814827e-11,
            icache_hit_j: 1.9944e-10,
            icache_miss_j: 1.48695e-9,
            register_read_j: 1.32464e-12,
            register_write_j: 1.21451e-12,
            register_file_gated: false,
            // INT_ACC, per active lane.
            int_lane_j: 1.58407e-12,
            // FP_MUL_ACC (fma, mul, mad); DP_MUL_ACC.
            float_lane_j: 8.22051e-12,
            double_lane_j: 1.09279e-11,
            // FP_SQRT_ACC (sqrt/rsqrt; lg2 2.28e-11, ex2 2.72e-11, sin/cos 8.2e-12).
            sfu_lane_j: 4.80048e-11,
            idle_lane_fraction: 0.0,
            // PIPE_A 5.0036e-10 per cycle at duty 1 = 256 active lanes on each of 80 SMs.
            pipeline_lane_j: 2.443164e-14,
            // AccelWattch's DC_* are per 32-byte sector; our events are line requests: x 4, the sectors of
            // a full 128-byte line (an over-estimate for requests of fewer sectors).
            l1_read_hit_j: 1.593668e-9,
            l1_read_miss_j: 1.065068e-9,
            l1_write_j: 1.237924e-9,
            shared_wavefront_j: 1.89649e-10,
            constant_hit_j: 3.63692e-11,
            constant_miss_j: 3.17602e-11,
            texture_hit_j: 8.09333e-13,
            texture_miss_j: 2.09578e-12,
            l2_read_hit_j: 5.71108e-11,
            l2_read_miss_j: 4.99828e-12,
            l2_write_hit_j: 2.13806e-10,
            l2_write_miss_j: 2.31801e-10,
            noc_flit_j: 2.23205e-10,
            dram_read_burst_j: 2.20359e-9,
            dram_write_burst_j: 1.25973e-9,
            dram_activate_j: 3.55509e-10,
            idle_sm_w: 0.282792,
            // CONSTANT_W 32.3252 + McPAT's fixed memory-controller power 0.55022.
            constant_w: 32.87544,
            // The GEOMEAN category of AccelWattch's static power (the one for mixed instruction classes).
            sm_static_w: 17.2175,
            lane_static_w: 0.650631,
        }
    }

    /// The checks a configuration's `[energy]` must pass: every energy and power finite and not negative,
    /// the idle-lane fraction within 0..=1. Returns the offending key.
    pub fn check(&self) -> Result<(), &'static str> {
        let values = [
            ("energy.instruction_j", self.instruction_j),
            ("energy.icache_hit_j", self.icache_hit_j),
            ("energy.icache_miss_j", self.icache_miss_j),
            ("energy.register_read_j", self.register_read_j),
            ("energy.register_write_j", self.register_write_j),
            ("energy.int_lane_j", self.int_lane_j),
            ("energy.float_lane_j", self.float_lane_j),
            ("energy.double_lane_j", self.double_lane_j),
            ("energy.sfu_lane_j", self.sfu_lane_j),
            ("energy.pipeline_lane_j", self.pipeline_lane_j),
            ("energy.l1_read_hit_j", self.l1_read_hit_j),
            ("energy.l1_read_miss_j", self.l1_read_miss_j),
            ("energy.l1_write_j", self.l1_write_j),
            ("energy.shared_wavefront_j", self.shared_wavefront_j),
            ("energy.constant_hit_j", self.constant_hit_j),
            ("energy.constant_miss_j", self.constant_miss_j),
            ("energy.texture_hit_j", self.texture_hit_j),
            ("energy.texture_miss_j", self.texture_miss_j),
            ("energy.l2_read_hit_j", self.l2_read_hit_j),
            ("energy.l2_read_miss_j", self.l2_read_miss_j),
            ("energy.l2_write_hit_j", self.l2_write_hit_j),
            ("energy.l2_write_miss_j", self.l2_write_miss_j),
            ("energy.noc_flit_j", self.noc_flit_j),
            ("energy.dram_read_burst_j", self.dram_read_burst_j),
            ("energy.dram_write_burst_j", self.dram_write_burst_j),
            ("energy.dram_activate_j", self.dram_activate_j),
            ("energy.idle_sm_w", self.idle_sm_w),
            ("energy.constant_w", self.constant_w),
            ("energy.sm_static_w", self.sm_static_w),
            ("energy.lane_static_w", self.lane_static_w),
        ];
        if let Some((key, _)) = values.iter().find(|(_, v)| !v.is_finite() || *v < 0.0) {
            return Err(key);
        }
        if !(0.0..=1.0).contains(&self.idle_lane_fraction) {
            return Err("energy.idle_lane_fraction");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gtx480_coefficients_pass_and_a_negative_one_is_named() {
        let mut k = EnergyCoefficients::gtx480();
        assert_eq!(k.check(), Ok(()));
        k.noc_flit_j = -1.0;
        assert_eq!(k.check(), Err("energy.noc_flit_j"));
        k.noc_flit_j = 1e-9;
        k.idle_lane_fraction = 1.5;
        assert_eq!(k.check(), Err("energy.idle_lane_fraction"));
    }

    #[test]
    fn derived_values_follow_from_gpuwattchs_events() {
        let k = EnergyCoefficients::gtx480();
        assert!((k.instruction_j - (3.6141e-12 + 5.48897e-11)).abs() < 1e-16);
        assert!((k.int_lane_j - 32.0 * 2.69477e-12).abs() < 1e-16);
        assert!((k.sfu_lane_j - 25.0 * 4.83518e-11).abs() < 1e-15);
        assert!((k.pipeline_lane_j - 3.63739e-8 / (64.0 * 15.0)).abs() < 1e-15);
    }
}
