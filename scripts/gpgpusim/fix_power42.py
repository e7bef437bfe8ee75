"""AccelWattch's per-event energies in GPGPU-Sim 4.2's power report. Usage: fix_power42.py GPGPUSIM_DIR

The GPGPU-Sim 4.2 counterpart of fix_power.py (GPUWattch, 4.0). AccelWattch (src/accelwattch/
gpgpu_sim_wrapper.cc, src/gpgpu-sim/power_interface.cc) samples the performance counters every
gpu_stat_sample_freq core cycles (the first field of -gpgpu_runtime_stat; 500 for SM7_QV100), lets McPAT
turn each sample into energy, and reports per kernel the average over samples of the power and of each
counter. A sample's power is

    Σ_i c_i * counter_i  +  constant_power  +  STATICP  (+ McPAT's own counter-independent power)

where c_i is W per counted unit and counter_i is what AccelWattch's counter i holds for the sample.
Two kinds of counter:

- most (TOT_INST ... NON_REG_OPs, MEM_*, L2_*, NOC_A, PIPE_A, IDLE_CORE_N) count events, and
  c_i = effpower_coeff[i] = McPAT's energy per event (initpower_coeff[i] * executionTime) times the XML
  file's scaling factor, divided by executionTime (= one sample's length);
- the execution-unit classes INT_ACC, FP_ACC, DP_ACC (labelled FPU_ACC, DPU_ACC in the report),
  INT_MUL24_ACC ... TEX_ACC already hold active
  lanes * the XML factor (shader.h inc*_stat, called from shader_core_ctx::incexecstat with the factor
  from get_scaling_coeffs()): c_i is McPAT's energy per access of the unit, unscaled: the integer ALU
  (exu->exeu) for INT_ACC, the FPU (exu->fp_u) for FP_ACC and DP_ACC, the "SFU" (exu->mul) for the rest.
  AccelWattch's own effpower_coeff of FP_ACC ... TEX_ACC is that energy times the class's share of its
  unit's accesses in the sample (activity-dependent; only calculate_static_power looks at it), so the
  patch computes c_i itself for them.

STATICP (calculate_static_power) is per sample: a "first lane" power of the sample's category (which
instruction classes ran, or which memories were touched when no ALU instruction ran) plus (avg active
threads per ALU warp instruction, rounded up, - 1) times an "additional lane" power, times the fraction
of SMs that had a CTA. This patch prints, once per kernel, a block "Kernel Per-Event Energy Data
(power_dump):" into the power report (gpgpusim_power_report__*.log), before its "Accumulative Power
Statistics" block:

  pd_kernel_sample_count     samples in the kernel (the report's averages are sums / this)
  pd_sample_cycles           gpu_stat_sample_freq (core cycles per sample)
  pd_execution_time_s        McPAT's executionTime: pd_sample_cycles / core clock
  pd_core_clock_hz           McPAT's core clock (set from -gpgpu_clock_domains by init_mcpat)
  pd_tail_cycles             core cycles after the kernel's last sample (never sampled)
  pd_constant_power_W        the XML file's constant_power (AccelWattch's CONSTP, added to every sample)
  pd_mcpat_const_dynamic_power_W  McPAT's counter-independent dynamic power (inside MCP)
  pd_idle_core_power_W       the XML file's idle_core_power (per idle SM)
  pd_dvfs_enabled, pd_modeled_chip_voltage_ref_V  -dvfs_enabled and the XML reference voltage
  pd_{avg,min,max}_rest_power_W  sample power minus Σ c_i * counter_i minus STATICP over the samples
                             (what neither the counters nor the static model explain; constant if linear)
  pd_{avg,min,max}_static_power_W  STATICP over the samples
  pd_static_samples_CAT, pd_static_sum_W_CAT  samples whose static power came from category CAT, and
                             the sum of their STATICP (W); CAT is one of INT_ADD INT_MUL INT_ADD_MUL INT_FP
                             INT_FP_DP INT_FP_SFU INT_FP_TEX INT_FP_TENSOR GEOMEAN L1 SHARED L2 LIGHT
                             (NONE: no SM had a CTA, static power 0; UNKNOWN: no match)
  pd_static_flane_W_CAT, pd_static_addlane_W_CAT  the XML file's first-lane / additional-lane powers
  pd_mcpat_*leakage_W        McPAT's leakage estimate for the chip; AccelWattch does not add it to power
  and for every counter label L (TOT_INST, FP_INT, IC_H, ..., IDLE_CORE_N):
  pd_sum_L                   the counter summed over the kernel's samples (as AccelWattch counts it)
  pd_tail_L                  the counter after the last sample (in sample units for PIPE_A and
                             IDLE_CORE_N: duty-cycle * tail/sample cycles, idle SMs * tail/sample cycles)
  pd_energy_L                c_L * executionTime: J per counted unit of pd_sum_L
  pd_mcpat_energy_L          McPAT's energy of one event before scaling (J)
  pd_scaling_L               the XML file's scaling factor
  pd_counter_scaled_L        1 if the counter already includes pd_scaling_L (the execution-unit
                             classes: events = pd_sum_L / pd_scaling_L, J per event = pd_energy_L *
                             pd_scaling_L), else 0 (J per event = pd_energy_L)
  pd_spread_L                (max - min) / max of c_L over the kernel's samples

The coefficients printed are the last sample's. Nothing AccelWattch computes or prints changes. The
edits are text insertions, each after (or before) a line found exactly once; a second run changes nothing.
Prints the number of places changed (0 when the source already has them).
"""

import sys
from pathlib import Path

root = Path(sys.argv[1])
TAG = "// power_dump (reconverge scripts/gpgpusim/fix_power42.py)"

WRAPPER_H_DECL = f"""  {TAG}
  void set_kernel_tail(const std::vector<double>& counters, double cycles);
  double pd_coeff(unsigned i);
  double pd_mcpat_coeff(unsigned i);
  bool pd_counter_scaled(unsigned i);
"""
WRAPPER_H_MEMBERS = f"""  {TAG}: spread of the coefficients over a kernel's samples,
  // the sample power the counters do not explain, static power, the counts after the last sample
  std::vector<double> pd_eff_min, pd_eff_max, pd_tail;
  double pd_rest_sum, pd_rest_min, pd_rest_max, pd_tail_cycles;
  double pd_static_sum, pd_static_min, pd_static_max;
  double pd_static_base, pd_static_lane;
  std::vector<double> pd_cat_samples, pd_cat_static;
"""
N_CAT = 15
WRAPPER_CTOR = f"""  {TAG}
  pd_eff_min.resize(NUM_PERFORMANCE_COUNTERS, 0);
  pd_eff_max.resize(NUM_PERFORMANCE_COUNTERS, 0);
  pd_tail.resize(NUM_PERFORMANCE_COUNTERS, 0);
  pd_cat_samples.resize({N_CAT}, 0);
  pd_cat_static.resize({N_CAT}, 0);
  pd_rest_sum = pd_rest_min = pd_rest_max = pd_tail_cycles = 0;
  pd_static_sum = pd_static_min = pd_static_max = 0;
  pd_static_base = -1;
  pd_static_lane = 0;
"""
WRAPPER_RESET = f"""  {TAG}
  pd_rest_sum = pd_rest_min = pd_rest_max = pd_tail_cycles = 0;
  pd_static_sum = pd_static_min = pd_static_max = 0;
  for (unsigned i = 0; i < num_perf_counters; ++i)
    pd_eff_min[i] = pd_eff_max[i] = pd_tail[i] = 0;
  for (unsigned i = 0; i < pd_cat_samples.size(); ++i)
    pd_cat_samples[i] = pd_cat_static[i] = 0;
"""
# Category names, in the order of pd_cat_flane() below.
CATS = ["INT_ADD", "INT_MUL", "INT_ADD_MUL", "INT_FP", "INT_FP_DP", "INT_FP_SFU", "INT_FP_TEX", "INT_FP_TENSOR",
        "GEOMEAN", "L1", "SHARED", "L2", "LIGHT", "NONE", "UNKNOWN"]
assert len(CATS) == N_CAT
WRAPPER_SAMPLE = f"""  {{  {TAG}
    double linear = 0;
    for (unsigned i = 0; i < num_perf_counters; ++i) {{
      double c = pd_coeff(i);
      linear += c * sample_perf_counters[i];
      if (kernel_sample_count == 1 || c < pd_eff_min[i]) pd_eff_min[i] = c;
      if (kernel_sample_count == 1 || c > pd_eff_max[i]) pd_eff_max[i] = c;
    }}
    double st = sample_cmp_pwr[STATICP];
    double rest = sample_power - linear - st;
    pd_rest_sum += rest;
    pd_static_sum += st;
    if (kernel_sample_count == 1 || rest < pd_rest_min) pd_rest_min = rest;
    if (kernel_sample_count == 1 || rest > pd_rest_max) pd_rest_max = rest;
    if (kernel_sample_count == 1 || st < pd_static_min) pd_static_min = st;
    if (kernel_sample_count == 1 || st > pd_static_max) pd_static_max = st;
    // the static category: calculate_static_power's first-lane power (pd_static_base, or, for its
    // early returns when no ALU instruction ran, static power / active fraction) matched to the XML's
    double active = num_cores > 0 ? (num_cores - num_idle_cores) / num_cores : 0;
    double base = pd_static_base;
    if (base < 0) base = active > 0 ? st / active : -1;
    const double fl[13] = {{p->sys.static_intadd_flane, p->sys.static_intmul_flane,
        p->sys.static_cat1_flane, p->sys.static_cat2_flane, p->sys.static_cat3_flane,
        p->sys.static_cat4_flane, p->sys.static_cat5_flane, p->sys.static_cat6_flane,
        p->sys.static_geomean_flane, p->sys.static_l1_flane, p->sys.static_shared_flane,
        p->sys.static_l2_flane, p->sys.static_light_flane}};
    unsigned cat = {N_CAT - 1};
    if (active <= 0)
      cat = {N_CAT - 2};
    else
      for (unsigned k = 0; k < 13; ++k)
        if (fabs(base - fl[k]) <= 1e-9 * fabs(fl[k])) {{ cat = k; break; }}
    pd_cat_samples[cat] += 1;
    pd_cat_static[cat] += st;
  }}
"""
WRAPPER_STATIC_START = f"""	pd_static_base = -1;  {TAG}
	pd_static_lane = 0;
"""
WRAPPER_STATIC_END = f"""	pd_static_base = base_static_power;  {TAG}
	pd_static_lane = lane_static_power;
"""
WRAPPER_FUNCS = f"""
{TAG}
static std::string pd_label(unsigned i) {{
  std::string s(perf_count_label[i]);
  if (!s.empty() && s[s.size() - 1] == ',') s.erase(s.size() - 1);
  return s;
}}
void gpgpu_sim_wrapper::set_kernel_tail(const std::vector<double>& counters,
                                        double cycles) {{
  for (unsigned i = 0; i < num_perf_counters && i < counters.size(); ++i)
    pd_tail[i] = counters[i];
  pd_tail_cycles = cycles;
}}
// The execution-unit classes whose counters hold active lanes * the XML factor.
bool gpgpu_sim_wrapper::pd_counter_scaled(unsigned i) {{
  return i >= INT_ACC && i <= TEX_ACC;
}}
// W per counted unit of counter i in the current sample.
double gpgpu_sim_wrapper::pd_coeff(unsigned i) {{
  double t = proc->cores[0]->executionTime;
  if (i == FP_ACC || i == DP_ACC)
    return proc->cores[0]->get_coefficient_fpu_accesses() / t;
  if (i >= INT_MUL24_ACC && i <= TEX_ACC)
    return proc->cores[0]->get_coefficient_sfu_accesses() / t;
  if (i == constant_power) return 0;
  return effpower_coeff[i];
}}
// W per event of counter i before the XML factor (McPAT's own).
double gpgpu_sim_wrapper::pd_mcpat_coeff(unsigned i) {{
  if (pd_counter_scaled(i)) return pd_coeff(i);
  if (i == constant_power) return 0;
  return initpower_coeff[i];
}}
"""
CAT_FLANE = ["static_intadd_flane", "static_intmul_flane", "static_cat1_flane", "static_cat2_flane",
             "static_cat3_flane", "static_cat4_flane", "static_cat5_flane", "static_cat6_flane",
             "static_geomean_flane", "static_l1_flane", "static_shared_flane", "static_l2_flane",
             "static_light_flane"]
CAT_PRINT = "".join(
    f"""      powerfile << "pd_static_flane_W_{c} = " << p->sys.{f} << std::endl;
      powerfile << "pd_static_addlane_W_{c} = " << p->sys.{f.replace('flane', 'addlane')} << std::endl;
""" for c, f in zip(CATS, CAT_FLANE))
CAT_NAMES = ", ".join(f'"{c}"' for c in CATS)
WRAPPER_PRINT = f"""    {{  {TAG}
      double t = proc->cores[0]->executionTime;
      double n = kernel_sample_count ? kernel_sample_count : 1;
      std::streamsize old_precision = powerfile.precision(10);
      powerfile << std::endl
                << "Kernel Per-Event Energy Data (power_dump):" << std::endl;
      powerfile << "pd_kernel_sample_count = " << kernel_sample_count
                << std::endl;
      powerfile << "pd_sample_cycles = " << gpu_stat_sample_freq << std::endl;
      powerfile << "pd_execution_time_s = " << t << std::endl;
      powerfile << "pd_core_clock_hz = " << p->sys.core[0].clock_rate * 1e6
                << std::endl;
      powerfile << "pd_tail_cycles = " << pd_tail_cycles << std::endl;
      powerfile << "pd_constant_power_W = "
                << p->sys.scaling_coefficients[constant_power] << std::endl;
      powerfile << "pd_mcpat_const_dynamic_power_W = "
                << proc->get_const_dynamic_power() / t << std::endl;
      powerfile << "pd_idle_core_power_W = " << p->sys.idle_core_power
                << std::endl;
      powerfile << "pd_dvfs_enabled = " << g_dvfs_enabled << std::endl;
      powerfile << "pd_modeled_chip_voltage_ref_V = "
                << p->sys.modeled_chip_voltage_ref << std::endl;
      powerfile << "pd_avg_rest_power_W = " << pd_rest_sum / n << std::endl;
      powerfile << "pd_min_rest_power_W = " << pd_rest_min << std::endl;
      powerfile << "pd_max_rest_power_W = " << pd_rest_max << std::endl;
      powerfile << "pd_avg_static_power_W = " << pd_static_sum / n << std::endl;
      powerfile << "pd_min_static_power_W = " << pd_static_min << std::endl;
      powerfile << "pd_max_static_power_W = " << pd_static_max << std::endl;
      {{
        const char* cats[{N_CAT}] = {{{CAT_NAMES}}};
        for (unsigned k = 0; k < {N_CAT}; ++k) {{
          powerfile << "pd_static_samples_" << cats[k] << " = "
                    << pd_cat_samples[k] << std::endl;
          powerfile << "pd_static_sum_W_" << cats[k] << " = "
                    << pd_cat_static[k] << std::endl;
        }}
      }}
{CAT_PRINT}      powerfile << "pd_mcpat_leakage_W = " << proc->power.readOp.leakage
                << std::endl;
      powerfile << "pd_mcpat_longer_channel_leakage_W = "
                << proc->power.readOp.longer_channel_leakage << std::endl;
      powerfile << "pd_mcpat_gate_leakage_W = "
                << proc->power.readOp.gate_leakage << std::endl;
      for (unsigned i = 0; i < num_perf_counters; ++i) {{
        if (i == constant_power) continue;
        std::string l = pd_label(i);
        powerfile << "pd_sum_" << l << " = " << kernel_cmp_perf_counters[i].avg
                  << std::endl;
        powerfile << "pd_tail_" << l << " = " << pd_tail[i] << std::endl;
        powerfile << "pd_energy_" << l << " = " << pd_coeff(i) * t << std::endl;
        powerfile << "pd_mcpat_energy_" << l << " = " << pd_mcpat_coeff(i) * t
                  << std::endl;
        powerfile << "pd_scaling_" << l << " = "
                  << p->sys.scaling_coefficients[i] << std::endl;
        powerfile << "pd_counter_scaled_" << l << " = " << pd_counter_scaled(i)
                  << std::endl;
        powerfile << "pd_spread_" << l << " = "
                  << (pd_eff_max[i] != 0
                          ? (pd_eff_max[i] - pd_eff_min[i]) / pd_eff_max[i]
                          : 0)
                  << std::endl;
      }}
      powerfile.precision(old_precision);
    }}
"""
IFACE_H = f"""{TAG}: the counters after the kernel's last sample
void mcpat_kernel_tail(const shader_core_config *shdr_config,
                       class gpgpu_sim_wrapper *wrapper,
                       class power_stat_t *power_stats,
                       unsigned stat_sample_freq, unsigned long long tot_cycle,
                       unsigned long long cycle);
"""
IFACE_CC = f"""
{TAG}: the counters after the kernel's last sample, counted
// as mcpat_cycle counts them; PIPE_A and IDLE_CORE_N in sample units.
void mcpat_kernel_tail(const shader_core_config *shdr_config,
                       class gpgpu_sim_wrapper *wrapper,
                       class power_stat_t *power_stats,
                       unsigned stat_sample_freq, unsigned long long tot_cycle,
                       unsigned long long cycle) {{
  double tail = (double)((tot_cycle + cycle) % stat_sample_freq);
  std::vector<double> c(NUM_PERFORMANCE_COUNTERS, 0.0);
  c[TOT_INST] = power_stats->get_total_inst(0);
  c[FP_INT] = power_stats->get_total_int_inst(0) +
              power_stats->get_total_fp_inst(0);
  c[IC_H] = power_stats->get_inst_c_hits(0);
  c[IC_M] = power_stats->get_inst_c_misses(0);
  c[DC_RH] = power_stats->get_l1d_read_hits(0);
  c[DC_RM] = power_stats->get_l1d_read_misses(0);
  c[DC_WH] = power_stats->get_l1d_write_hits(0);
  c[DC_WM] = power_stats->get_l1d_write_misses(0);
  c[TC_H] = power_stats->get_texture_c_hits();
  c[TC_M] = power_stats->get_texture_c_misses();
  c[CC_H] = power_stats->get_const_accessess(0);
  c[CC_M] = 0;
  c[SHRD_ACC] = power_stats->get_shmem_access(0);
  c[REG_RD] = power_stats->get_regfile_reads(0);
  c[REG_WR] = power_stats->get_regfile_writes(0);
  c[NON_REG_OPs] = power_stats->get_non_regfile_operands(0);
  c[INT_ACC] = power_stats->get_ialu_accessess(0);
  c[FP_ACC] = power_stats->get_fp_accessess(0);
  c[DP_ACC] = power_stats->get_dp_accessess(0);
  c[INT_MUL24_ACC] = power_stats->get_intmul24_accessess(0);
  c[INT_MUL32_ACC] = power_stats->get_intmul32_accessess(0);
  c[INT_MUL_ACC] = power_stats->get_intmul_accessess(0);
  c[INT_DIV_ACC] = power_stats->get_intdiv_accessess(0);
  c[FP_MUL_ACC] = power_stats->get_fpmul_accessess(0);
  c[FP_DIV_ACC] = power_stats->get_fpdiv_accessess(0);
  c[FP_SQRT_ACC] = power_stats->get_sqrt_accessess(0);
  c[FP_LG_ACC] = power_stats->get_log_accessess(0);
  c[FP_SIN_ACC] = power_stats->get_sin_accessess(0);
  c[FP_EXP_ACC] = power_stats->get_exp_accessess(0);
  c[DP_MUL_ACC] = power_stats->get_dpmul_accessess(0);
  c[DP_DIV_ACC] = power_stats->get_dpdiv_accessess(0);
  c[TENSOR_ACC] = power_stats->get_tensor_accessess(0);
  c[TEX_ACC] = power_stats->get_tex_accessess(0);
  c[MEM_RD] = power_stats->get_dram_rd(0);
  c[MEM_WR] = power_stats->get_dram_wr(0);
  c[MEM_PRE] = power_stats->get_dram_pre(0);
  c[L2_RH] = power_stats->get_l2_read_hits(0);
  c[L2_RM] = power_stats->get_l2_read_misses(0);
  c[L2_WH] = power_stats->get_l2_write_hits(0);
  c[L2_WM] = power_stats->get_l2_write_misses(0);
  c[NOC_A] = (double)power_stats->get_icnt_mem_to_simt(0) +
             power_stats->get_icnt_simt_to_mem(0);
  if (tail > 0) {{
    double active_sms = (*power_stats->m_active_sms) / tail;
    c[IDLE_CORE_N] =
        (shdr_config->num_shader() - active_sms) * tail / stat_sample_freq;
    double duty = (*power_stats->m_average_pipeline_duty_cycle) / tail;
    c[PIPE_A] = (duty < 0.8 ? duty : 0.8) * tail / stat_sample_freq;
  }}
  wrapper->set_kernel_tail(c, tail);
}}
"""
GPUSIM_CALL = f"""    if (m_config.g_power_simulation_mode == 0) {{  {TAG}
      mcpat_kernel_tail(getShaderCoreConfig(), m_gpgpusim_wrapper, m_power_stats,
                        m_config.gpu_stat_sample_freq, gpu_tot_sim_cycle,
                        gpu_sim_cycle);
    }}
"""

W_H = "src/accelwattch/gpgpu_sim_wrapper.h"
W_CC = "src/accelwattch/gpgpu_sim_wrapper.cc"
PRINT_ANCHOR = ('    powerfile << std::endl\n'
                '              << "Accumulative Power Statistics Over Previous Kernels:"\n')
# (file, a text found exactly once, what goes after it, what goes before it)
EDITS = [
    (W_H, "  bool sanity_check(double a, double b);\n", WRAPPER_H_DECL, ""),
    (W_H, "  std::vector<double> effpower_coeff;\n", WRAPPER_H_MEMBERS, ""),
    (W_CC, "  effpower_coeff.resize(NUM_PERFORMANCE_COUNTERS, 0);\n", WRAPPER_CTOR, ""),
    (W_CC, "  // Reset per-kernel counters\n  kernel_sample_count = 0;\n", WRAPPER_RESET, ""),
    (W_CC, "  kernel_power.avg = kernel_tot_power / kernel_sample_count;\n", WRAPPER_SAMPLE, ""),
    (W_CC, "\tdouble per_active_core = (num_cores - num_idle_cores)/num_cores;\n", WRAPPER_STATIC_START, ""),
    (W_CC, "\ttotal_static_power = base_static_power + (((double)avg_threads_per_warp-1.0)*lane_static_power);"
           " //Linear Model\n", "", WRAPPER_STATIC_END),
    (W_CC, "void gpgpu_sim_wrapper::compute() { proc->compute(); }\n", WRAPPER_FUNCS, ""),
    (W_CC, PRINT_ANCHOR, "", WRAPPER_PRINT),
    ("src/gpgpu-sim/power_interface.h", "void mcpat_reset_perf_count(class gpgpu_sim_wrapper *wrapper);\n",
     IFACE_H, ""),
    ("src/gpgpu-sim/power_interface.cc",
     "void mcpat_reset_perf_count(class gpgpu_sim_wrapper *wrapper) {\n  wrapper->reset_counters();\n}\n",
     IFACE_CC, ""),
    ("src/gpgpu-sim/gpu-sim.cc", "    m_gpgpusim_wrapper->print_power_kernel_stats(\n", "", GPUSIM_CALL),
]

changed = 0
for name, anchor, after, before in EDITS:
    p = root / name
    text = p.read_text()
    new = before + anchor + after
    if new in text:
        continue
    if text.count(anchor) != 1:
        sys.exit(f"{name}: the text to patch was not found exactly once")
    p.write_text(text.replace(anchor, new))
    changed += 1
print(changed)
