"""GPUWattch's per-event energies in GPGPU-Sim 4.0's power report. Usage: fix_power.py GPGPUSIM_DIR

GPUWattch (src/gpuwattch/gpgpu_sim_wrapper.cc) samples the performance counters every
gpu_stat_sample_freq core cycles (the first field of -gpgpu_runtime_stat; 500 for SM2_GTX480), lets
McPAT turn each sample into energy, and reports per kernel the average over samples of the power and of
each counter. For every counter i, update_coefficients() computes
    effpower_coeff[i] = initpower_coeff[i] * scaling_coefficients[i] / executionTime
(initpower_coeff[i]: McPAT's energy of one event, J; scaling_coefficients[i]: the XML file's factor;
executionTime = total_cycles / core clock = one sample's length in seconds), and the sample's power is
Σ effpower_coeff[i] * counter[i] plus parts that do not depend on the counters. So
effpower_coeff[i] * executionTime is GPUWattch's energy per counted event. This patch prints, once per
kernel, a block "Kernel Per-Event Energy Data (power_dump):" into the power report
(gpgpusim_power_report__*.log), before its "Accumulative Power Statistics" block:

  pd_kernel_sample_count     samples in the kernel (the report's averages are sums / this)
  pd_sample_cycles           gpu_stat_sample_freq (core cycles per sample)
  pd_execution_time_s        McPAT's executionTime: pd_sample_cycles / core clock
  pd_core_clock_hz           McPAT's core clock (the XML file's clock_rate)
  pd_tail_cycles             core cycles after the kernel's last sample (never sampled)
  pd_const_dynamic_power_W   McPAT's counter-independent dynamic power already inside the components
  pd_CONST_DYNAMICN_W        the XML file's CONST_DYNAMICN (total constant dynamic power)
  pd_idle_core_power_W       the XML file's idle_core_power (per idle SM)
  pd_{avg,min,max}_rest_power_W  sample power minus Σ effpower_coeff[i] * counter[i] over the samples
                             (what the counters do not explain; constant if the model is linear)
  pd_mcpat_*leakage_W        McPAT's leakage estimate for the chip; GPUWattch does not add it to power
  and for every counter label L (TOT_INST, FP_INT, IC_H, ..., IDLE_CORE_N, CONST_DYNAMICN):
  pd_sum_L                   the counter summed over the kernel's samples
  pd_tail_L                  the counter after the last sample (in sample units for PIPE_A and
                             IDLE_CORE_N: duty-cycle * tail/sample cycles, idle SMs * tail/sample cycles)
  pd_energy_L                effpower_coeff[L] * executionTime: J per event (GPUWattch, scaled)
  pd_mcpat_energy_L          initpower_coeff[L] * executionTime: J per event before scaling (McPAT)
  pd_scaling_L               scaling_coefficients[L] (the XML file)
  pd_spread_L                (max - min) / max of effpower_coeff[L] over the kernel's samples

The coefficients printed are the last sample's. Nothing GPUWattch computes or prints changes. The
edits are text insertions, each after (or before) a line found exactly once; a second run changes nothing.
Prints the number of places changed (0 when the source already has them).
"""

import sys
from pathlib import Path

root = Path(sys.argv[1])
TAG = "// power_dump (reconverge scripts/gpgpusim/fix_power.py)"

WRAPPER_H_DECL = f"""  {TAG}
  void set_kernel_tail(const std::vector<double>& counters, double cycles);
"""
WRAPPER_H_MEMBERS = f"""  {TAG}: spread of effpower_coeff over a kernel's samples,
  // the sample power the counters do not explain, the counts after the last sample
  std::vector<double> pd_eff_min, pd_eff_max, pd_tail;
  double pd_rest_sum, pd_rest_min, pd_rest_max, pd_tail_cycles;
"""
WRAPPER_CTOR = f"""  {TAG}
  pd_eff_min.resize(NUM_PERFORMANCE_COUNTERS, 0);
  pd_eff_max.resize(NUM_PERFORMANCE_COUNTERS, 0);
  pd_tail.resize(NUM_PERFORMANCE_COUNTERS, 0);
  pd_rest_sum = pd_rest_min = pd_rest_max = pd_tail_cycles = 0;
"""
WRAPPER_RESET = f"""  {TAG}
  pd_rest_sum = pd_rest_min = pd_rest_max = pd_tail_cycles = 0;
  for (unsigned i = 0; i < num_perf_counters; ++i)
    pd_eff_min[i] = pd_eff_max[i] = pd_tail[i] = 0;
"""
WRAPPER_SAMPLE = f"""  {{  {TAG}
    double linear = 0;
    for (unsigned i = 0; i < num_perf_counters; ++i) {{
      linear += effpower_coeff[i] * sample_perf_counters[i];
      if (kernel_sample_count == 1 || effpower_coeff[i] < pd_eff_min[i])
        pd_eff_min[i] = effpower_coeff[i];
      if (kernel_sample_count == 1 || effpower_coeff[i] > pd_eff_max[i])
        pd_eff_max[i] = effpower_coeff[i];
    }}
    double rest = sample_power - linear;
    pd_rest_sum += rest;
    if (kernel_sample_count == 1 || rest < pd_rest_min) pd_rest_min = rest;
    if (kernel_sample_count == 1 || rest > pd_rest_max) pd_rest_max = rest;
  }}
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
"""
WRAPPER_PRINT = f"""    {{  {TAG}
      double t = proc->cores[0]->executionTime;
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
      powerfile << "pd_const_dynamic_power_W = " << const_dynamic_power
                << std::endl;
      powerfile << "pd_CONST_DYNAMICN_W = "
                << p->sys.scaling_coefficients[CONST_DYNAMICN] << std::endl;
      powerfile << "pd_idle_core_power_W = " << p->sys.idle_core_power
                << std::endl;
      powerfile << "pd_avg_rest_power_W = "
                << (kernel_sample_count ? pd_rest_sum / kernel_sample_count : 0)
                << std::endl;
      powerfile << "pd_min_rest_power_W = " << pd_rest_min << std::endl;
      powerfile << "pd_max_rest_power_W = " << pd_rest_max << std::endl;
      powerfile << "pd_mcpat_leakage_W = " << proc->power.readOp.leakage
                << std::endl;
      powerfile << "pd_mcpat_longer_channel_leakage_W = "
                << proc->power.readOp.longer_channel_leakage << std::endl;
      powerfile << "pd_mcpat_gate_leakage_W = "
                << proc->power.readOp.gate_leakage << std::endl;
      for (unsigned i = 0; i < num_perf_counters; ++i) {{
        std::string l = pd_label(i);
        powerfile << "pd_sum_" << l << " = " << kernel_cmp_perf_counters[i].avg
                  << std::endl;
        powerfile << "pd_tail_" << l << " = " << pd_tail[i] << std::endl;
        powerfile << "pd_energy_" << l << " = " << effpower_coeff[i] * t
                  << std::endl;
        powerfile << "pd_mcpat_energy_" << l << " = " << initpower_coeff[i] * t
                  << std::endl;
        powerfile << "pd_scaling_" << l << " = "
                  << p->sys.scaling_coefficients[i] << std::endl;
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
  c[TOT_INST] = power_stats->get_total_inst();
  c[FP_INT] = (double)power_stats->get_total_int_inst() +
              power_stats->get_total_fp_inst();
  c[IC_H] = power_stats->get_inst_c_hits();
  c[IC_M] = power_stats->get_inst_c_misses();
  c[DC_RH] = power_stats->get_l1d_read_hits();
  c[DC_RM] = power_stats->get_l1d_read_misses();
  c[DC_WH] = power_stats->get_l1d_write_hits();
  c[DC_WM] = power_stats->get_l1d_write_misses();
  c[TC_H] = power_stats->get_texture_c_hits();
  c[TC_M] = power_stats->get_texture_c_misses();
  c[CC_H] = power_stats->get_constant_c_hits();
  c[CC_M] = power_stats->get_constant_c_misses();
  c[SHRD_ACC] = power_stats->get_shmem_read_access();
  c[REG_RD] = power_stats->get_regfile_reads();
  c[REG_WR] = power_stats->get_regfile_writes();
  c[NON_REG_OPs] = power_stats->get_non_regfile_operands();
  c[SP_ACC] = power_stats->get_ialu_accessess();
  c[SFU_ACC] = power_stats->get_tot_sfu_accessess();
  c[FPU_ACC] = power_stats->get_tot_fpu_accessess();
  c[MEM_RD] = power_stats->get_dram_rd();
  c[MEM_WR] = power_stats->get_dram_wr();
  c[MEM_PRE] = power_stats->get_dram_pre();
  c[L2_RH] = power_stats->get_l2_read_hits();
  c[L2_RM] = power_stats->get_l2_read_misses();
  c[L2_WH] = power_stats->get_l2_write_hits();
  c[L2_WM] = power_stats->get_l2_write_misses();
  c[NOC_A] = (double)power_stats->get_icnt_mem_to_simt() +
             power_stats->get_icnt_simt_to_mem();
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
GPUSIM_CALL = f"""    {TAG}
    mcpat_kernel_tail(getShaderCoreConfig(), m_gpgpusim_wrapper, m_power_stats,
                      m_config.gpu_stat_sample_freq, gpu_tot_sim_cycle,
                      gpu_sim_cycle);
"""

W_H = "src/gpuwattch/gpgpu_sim_wrapper.h"
W_CC = "src/gpuwattch/gpgpu_sim_wrapper.cc"
PRINT_ANCHOR = ('    powerfile << std::endl\n'
                '              << "Accumulative Power Statistics Over Previous Kernels:"\n')
PRINT_CALL_ANCHOR = ("  if (m_config.g_power_simulation_enabled) {\n"
                     "    m_gpgpusim_wrapper->print_power_kernel_stats(\n")
# (file, a text found exactly once, what goes after it, what goes before it)
EDITS = [
    (W_H, "  bool sanity_check(double a, double b);\n", WRAPPER_H_DECL, ""),
    (W_H, "  std::vector<double> effpower_coeff;\n", WRAPPER_H_MEMBERS, ""),
    (W_CC, "  effpower_coeff.resize(NUM_PERFORMANCE_COUNTERS, 0);\n", WRAPPER_CTOR, ""),
    (W_CC, "  // Reset per-kernel counters\n  kernel_sample_count = 0;\n", WRAPPER_RESET, ""),
    (W_CC, "  kernel_power.avg = kernel_tot_power / kernel_sample_count;\n", WRAPPER_SAMPLE, ""),
    (W_CC, "void gpgpu_sim_wrapper::compute() { proc->compute(); }\n", WRAPPER_FUNCS, ""),
    (W_CC, PRINT_ANCHOR, "", WRAPPER_PRINT),
    ("src/gpgpu-sim/power_interface.h", "void mcpat_reset_perf_count(class gpgpu_sim_wrapper *wrapper);\n",
     IFACE_H, ""),
    ("src/gpgpu-sim/power_interface.cc",
     "void mcpat_reset_perf_count(class gpgpu_sim_wrapper *wrapper) {\n  wrapper->reset_counters();\n}\n",
     IFACE_CC, ""),
    # None: GPUSIM_CALL goes between the anchor's two lines
    ("src/gpgpu-sim/gpu-sim.cc", PRINT_CALL_ANCHOR, None, GPUSIM_CALL),
]

changed = 0
for name, anchor, after, before in EDITS:
    p = root / name
    text = p.read_text()
    if after is None:  # insert `before` in front of the anchor's second line
        first, second = anchor.split("\n", 1)
        new = first + "\n" + before + second
    else:
        new = before + anchor + after
    if new in text:
        continue
    if text.count(anchor) != 1:
        sys.exit(f"{name}: the text to patch was not found exactly once")
    p.write_text(text.replace(anchor, new))
    changed += 1
print(changed)
