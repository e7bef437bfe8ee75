#!/usr/bin/env python3
"""GPGPU-Sim next to reconverge: the same PTX, the same launch, cycles and counts side by side.

Run it with the Python of the work directory that build.sh made (it has numpy and NVRTC 11.8):

    W=/path/to/work
    $W/venv/bin/python scripts/gpgpusim/run.py ptx                 # (re)compile the validation PTX
    $W/venv/bin/python scripts/gpgpusim/run.py ptx --check         # ... and fail if it differs
    $W/venv/bin/python scripts/gpgpusim/run.py gpgpusim --work $W --config SM2_GTX480 [--only NAME ...]
    $W/venv/bin/python scripts/gpgpusim/run.py gpgpusim --work $W --config SM2_GTX480 --power   # GPUWattch
    $W42/venv/bin/python scripts/gpgpusim/run.py gpgpusim --work $W42 --config SM7_QV100 --power  # AccelWattch (4.2)
    $W/venv/bin/python scripts/gpgpusim/run.py one --work $W --config SM7_QV100 FILE.ptx --kernel K \\
        --grid 4 --block 128 --arg rand:f32:512:1 --arg zeros:f32:512 --arg 32

`gpgpusim` runs every launch of the validation set (kernels/validation/manifest.toml, then the suite's
kernels that GPGPU-Sim can run) under GPGPU-Sim with one of its tested configurations and writes
docs/validation/gpgpusim-CONFIG.csv: per launch the cycles (`gpu_sim_cycle`), the warp instructions and
thread instructions from the warp-occupancy histogram, the stall and cache counters, the simulation time,
and a checksum of every buffer afterwards. `one` runs any launch (a PTX file and `--arg`s in reconverge's
syntax) the same way and prints the row. scripts/gpgpusim/validate.py puts the rows beside reconverge's.

The GPGPU-Sim configurations are its own files (configs/tested-cfgs/CONFIG/ of its source), with the
power model off. What GPGPU-Sim 4.0 cannot run is listed in UNSUPPORTED with the reason.

`gpgpusim --power` runs the same launches with GPGPU-Sim's power model, GPUWattch, on
(`-power_simulation_enabled 1 -gpuwattch_xml_file` the configuration's gpuwattch_*.xml, e.g.
gpuwattch_gtx480.xml) and writes, instead of the CSV above, docs/validation/gpuwattch-CONFIG.csv and
docs/validation/gpuwattch-coefficients-CONFIG.csv. It needs a GPGPU-Sim built by build.sh (fix_power.py
makes GPUWattch print its per-event energies, "pd_*" lines, into its power report). How GPUWattch counts:

- It samples every S = gpu_stat_sample_freq core cycles (the first field of -gpgpu_runtime_stat; 500 for
  SM2_GTX480) at global cycles that are multiples of S. Each launch here is a process of its own, so a
  kernel of C = gpu_sim_cycle cycles has N = floor(C / S) samples; the last C - N*S cycles ("tail") are
  never given to McPAT. Each sample's counters are the events in its S cycles (differences of running
  totals), except PIPE_A (the SMs' average pipeline duty cycle over the sample, capped at 0.8) and
  IDLE_CORE_N (the average number of idle SMs over the sample).
- The report's gpu_avg_X is (Σ over the N samples of X) / N, for component powers (W) and counters alike;
  kernel_avg_power is the average over the N samples of the sample power (W). McPAT's executionTime is
  S / core clock (the XML file's clock_rate, equal to -gpgpu_clock_domains' core clock here: checked).

gpuwattch-CONFIG.csv, one row per launch (kernel, grid, block, cycles = gpu_sim_cycle):

- time_s = cycles / f_core, f_core the core clock of -gpgpu_clock_domains (MHz in the file; Hz here).
- energy_J = kernel_avg_power * time_s, and energy_COMP_J = gpu_avg_COMP * time_s for each of GPUWattch's
  components IBP ICP DCP TCP CCP SHRDP RFP SPP SFUP FPUP SCHEDP L2CP MCP NOCP DRAMP PIPEP IDLE_COREP
  CONST_DYNAMICP (they add up to energy_J). The sampled average power stands for the whole kernel, tail
  included. GPUWattch 4.0 reports no static (leakage) power: IDLE_COREP (idle SMs * idle_core_power) and
  CONST_DYNAMICP (the XML file's CONST_DYNAMICN watts minus McPAT's constant part) play that role.
- samples = N, tail_cycles = C - N*S; avg_power_W = kernel_avg_power.
- n_LABEL = Σ over the N samples of GPUWattch counter LABEL (= gpu_avg_LABEL * N; the report's sums,
  pd_sum_LABEL), for every label but CONST_DYNAMICN (not a counter). PIPE_A and IDLE_CORE_N are per-sample
  averages, so their n_ is Σ average * S: duty-cycle-weighted SM-pipeline cycles (GPUWattch multiplies
  the whole chip's pipeline power by the duty cycle) and idle SM-cycles. tail_LABEL = the same counter's
  events in the tail (not in n_LABEL, not in GPUWattch's power).
- energy_counts_J = Σ_LABEL e_LABEL * (n_LABEL + tail_LABEL) + rest_power_W * time_s: the whole kernel
  from the per-event energies e_LABEL (below), tail included; rest_power_W = the average over samples of
  (sample power - Σ effpower_coeff * counter), the power the counters do not explain (pd_avg_rest_power_W).

gpuwattch-coefficients-CONFIG.csv, one row per counter: energy_per_event_J = effpower_coeff *
executionTime (what GPUWattch charges for one counted event: McPAT's energy per event times the XML file's
scaling factor), mcpat_energy_per_event_J = initpower_coeff * executionTime (before scaling), scaling, the
component(s) the energy lands in, what one event is, and the largest relative spread of the coefficient
over the samples of any launch and over the launches. For PIPE_A and IDLE_CORE_N the energy is per unit of
their n_ column (J per duty-weighted cycle, J per idle SM-cycle: pd_energy / S). Rows CONST_DYNAMIC_W,
MCPAT_CONST_DYNAMIC_W, REST_W, IDLE_CORE_W give the constant powers in W.

AccelWattch (GPGPU-Sim 4.2, built by build.sh from the dev branch; --work of that build): when the
configuration has accelwattch_ptx_sim.xml (SM7_QV100), `gpgpusim --power` runs AccelWattch's PTX-mode model
(`-power_simulation_enabled 1 -power_simulation_mode 0 -accelwattch_xml_file accelwattch_ptx_sim.xml`) and
writes docs/validation/accelwattch-CONFIG.csv, accelwattch-coefficients-CONFIG.csv and accelwattch.txt
(fix_power42.py prints the pd_* lines; its docstring explains them). Sampling, time_s, energy_J, samples,
tail_cycles and the PIPE_A / IDLE_CORE_N units are as above (S = 500 for SM7_QV100). Differences:

- components: AccelWattch's 33 (IBP ... INTP FPUP DPUP INT_MUL24P ... TEXP SCHEDP L2CP MCP NOCP DRAMP PIPEP
  IDLE_COREP CONSTP STATICP); they add up to energy_J. CONSTP is the XML file's constant_power; STATICP its
  per-sample static model (static_power_W = its average over samples; static_categories = how many samples
  used each category of fix_power42.py, NONE = no SM had a CTA).
- counters: AccelWattch's 43. The execution-unit classes INT_ACC ... TEX_ACC hold active lanes times the
  XML factor in AccelWattch; their n_ and tail_ columns here are lane-ops (AccelWattch's sum / the factor).
- rest_power_W = sample power minus the counters' part minus STATICP (constant_power + McPAT's constant);
  energy_counts_J = Σ e * (n + tail) + (rest_power_W + static_power_W) * time_s.
- threads_per_warp = AccelWattch's gpu_avg_threads_per_warp (mean over samples, idle samples count as 0).
- coefficients: energy_per_event_J is J per event (per lane-op for the classes: McPAT's energy per access of
  the unit times the factor; per event times the factor for the others), scaling_in_counter says which; then
  rows CONSTANT_W, MCPAT_CONST_DYNAMIC_W, REST_W, IDLE_CORE_W and STATIC_FLANE_/STATIC_ADDLANE_CAT_W (W).
"""

from __future__ import annotations

import argparse
import csv
import ctypes
import glob
import hashlib
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
VALIDATION = REPO / "kernels" / "validation"
SUITE = REPO / "kernels"
OUT = REPO / "docs" / "validation"

# Suite kernels GPGPU-Sim 4.0 cannot run, and why (docs/validation.md).
UNSUPPORTED = {
    "recursion": "non-inlined device calls abort GPGPU-Sim 4.0 (a double free in its call handling)",
    "warp_reduce": "shfl.sync crashes GPGPU-Sim 4.0 under the GTX480 latency table, and gives wrong values when capped",
    "warp_redux": "redux.sync and match.sync are sm_80 instructions that GPGPU-Sim 4.0 does not know",
    "spinlock_naive": "a SIMT deadlock under PDOM by design: GPGPU-Sim would spin until its own limits",
    "flag_handoff": "__nanosleep / an unbounded spin that GPGPU-Sim 4.0 runs until its own limits",
}

NVRTC_OPTIONS = ["--gpu-architecture=compute_35", "-default-device"]
TEMPLATE_FOR = {"SM2_GTX480": "gtx480", "SM7_QV100": "volta", "SM7_TITANV": "volta"}


# ------------------------------------------------------------------------------------------------
# Launches
# ------------------------------------------------------------------------------------------------


def launches() -> list[dict]:
    """Every launch of the validation set: the validation kernels, then the suite's."""
    out = []
    for e in tomllib.loads((VALIDATION / "manifest.toml").read_text())["kernel"]:
        e = dict(e)
        e["base"] = VALIDATION
        e["source"] = VALIDATION / "src" / f"{e['name']}.cu"
        out.append(e)
    for e in tomllib.loads((SUITE / "manifest.toml").read_text())["kernel"]:
        if e["name"] in UNSUPPORTED:
            continue
        e = dict(e)
        e["base"] = SUITE
        e["source"] = SUITE / "src" / f"{e['name']}.cu"
        e["nofma"] = "nofma" in e["ptx"]
        e["ptx"] = f"ptx/suite/{e['name']}.ptx"
        e["ptx_base"] = VALIDATION
        out.append(e)
    return out


def ptx_path(e: dict) -> Path:
    return e.get("ptx_base", e["base"]) / e["ptx"]


# ------------------------------------------------------------------------------------------------
# PTX with NVRTC 11.8
# ------------------------------------------------------------------------------------------------


def nvrtc():
    import nvidia.cuda_nvrtc as pkg

    libs = [p for d in pkg.__path__ for p in glob.glob(os.path.join(d, "lib", "libnvrtc.so.11*"))]
    if not libs:
        sys.exit("NVRTC 11.8 not found: run with the Python of build.sh's work directory")
    return ctypes.CDLL(libs[0])


def compile_ptx(lib, source: Path, options: list[str]) -> str:
    src = source.read_bytes()
    prog = ctypes.c_void_p()
    # A fixed program name keeps the PTX identical on every machine.
    lib.nvrtcCreateProgram(ctypes.byref(prog), src, f"/kernels/{source.name}".encode(), 0, None, None)
    opts = [o.encode() for o in options]
    r = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    if r != 0:
        sys.exit(f"{source}: NVRTC failed:\n{log.value.decode()}")
    lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
    buf = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetPTX(prog, buf)
    # GPGPU-Sim 4.0's parser knows `bar.sync`, not its PTX 6 spelling `barrier.sync`.
    return buf.value.decode().replace("barrier.sync", "bar.sync")


def cmd_ptx(a) -> int:
    lib = nvrtc()
    differ = []
    for e in launches():
        opts = NVRTC_OPTIONS + (["--fmad=false"] if e.get("nofma") else [])
        text = compile_ptx(lib, e["source"], opts)
        p = ptx_path(e)
        if a.check:
            if not p.exists() or p.read_text() != text:
                differ.append(str(p.relative_to(REPO)))
            continue
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    if differ:
        print("PTX differs from NVRTC 11.8's:", *differ, sep="\n  ")
        return 1
    return 0


# ------------------------------------------------------------------------------------------------
# Arguments (reconverge's --arg syntax) as bytes
# ------------------------------------------------------------------------------------------------

DTYPES = {"i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16, "i32": np.int32, "u32": np.uint32,
          "i64": np.int64, "u64": np.uint64, "f32": np.float32, "f64": np.float64}
M64 = (1 << 64) - 1


def splitmix64(seed: int, n: int) -> np.ndarray:
    """The SplitMix64 stream of reconverge's `rand:` specs (reconverge_suite::args::splitmix64)."""
    i = np.arange(1, n + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = np.uint64(seed) + i * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def buffer_bytes(spec: str, base: Path) -> bytes:
    if spec.startswith("@"):
        data = (base / spec[1:]).read_bytes()
        return np.load(base / spec[1:]).tobytes() if data else b""
    kind, dtype, *rest = spec.split(":")
    n = int(rest[0])
    if kind == "zeros":
        return bytes(n * np.dtype(DTYPES[dtype]).itemsize)
    seed, bound = int(rest[1]), (int(rest[2]) if len(rest) > 2 else None)
    x = splitmix64(seed, n)
    if dtype == "f32":
        v = ((x >> np.uint64(40)).astype(np.float64) / float(1 << 24) * (bound or 1)).astype(np.float32)
    elif dtype == "f64":
        v = (x >> np.uint64(11)).astype(np.float64) / float(1 << 53) * (bound or 1)
    else:
        v = (x % np.uint64(bound) if bound else x).astype(DTYPES[dtype])
    return v.tobytes()


def param_types(ptx: str, kernel: str) -> list[str]:
    m = re.search(r"\.entry\s+" + re.escape(kernel) + r"\s*\((.*?)\)", ptx, re.S)
    if not m:
        sys.exit(f"no kernel {kernel} in the PTX")
    return re.findall(r"\.param\s+\.(\w+)", m.group(1))


def scalar_hex(value, ty: str) -> str:
    size = {"u8": 1, "s8": 1, "b8": 1, "u16": 2, "s16": 2, "b16": 2, "u32": 4, "s32": 4, "b32": 4, "f32": 4,
            "u64": 8, "s64": 8, "b64": 8, "f64": 8}[ty]
    if ty == "f32":
        raw = struct.pack("<f", float(value))
    elif ty == "f64":
        raw = struct.pack("<d", float(value))
    else:
        raw = (int(value) & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
    return raw.hex()


# ------------------------------------------------------------------------------------------------
# GPGPU-Sim
# ------------------------------------------------------------------------------------------------


def parse_log(text: str) -> dict:
    def last(key):
        m = re.findall(r"^\s*" + re.escape(key) + r"\s*=\s*([-0-9.eE+]+)", text, re.M)
        return float(m[-1]) if m else None

    row = {"cycles": last("gpu_sim_cycle"), "gpgpusim_thread_insn": last("gpu_sim_insn")}
    m = re.search(r"Warp Occupancy Distribution:\n(.*)\n", text)
    if m:
        h = dict((k, int(v)) for k, v in re.findall(r"(\w+):(\d+)", m.group(1)))
        w = {int(k[1:]): v for k, v in h.items() if re.fullmatch(r"W\d+", k) and k != "W0"}
        row["warp_instructions"] = sum(w.values())
        row["thread_instructions"] = sum(i * v for i, v in w.items())
        row["stall_cycles"] = h.get("Stall")
        row["idle_cycles"] = h.get("W0_Idle")
        row["scoreboard_cycles"] = h.get("W0_Scoreboard")
    for key, col in [("L1D_total_cache_accesses", "l1_accesses"), ("L1D_total_cache_misses", "l1_misses"),
                     ("L2_total_cache_accesses", "l2_accesses"), ("L2_total_cache_misses", "l2_misses"),
                     ("gpgpu_n_shmem_bkconflict", "shared_bank_conflicts"),
                     ("gpu_reg_bank_conflict_stalls", "reg_bank_conflict_stalls")]:
        v = last(key)
        row[col] = int(v) if v is not None else None
    m = re.search(r"gpgpu_simulation_time = .*\((\d+) sec\)", text)
    row["gpgpusim_seconds"] = int(m.group(1)) if m else None
    return row


def run_gpgpusim(work: Path, config: str, e: dict, ptx: Path, keep: Path | None = None, power: bool = False) -> dict:
    """One launch under GPGPU-Sim: its row (cycles, counts, checksums of the buffers after the launch).

    With `power`, the power model is on (GPUWattch in GPGPU-Sim 4.0; AccelWattch in 4.2, chosen when the
    configuration has accelwattch_ptx_sim.xml) and row["power"] holds its power report's numbers
    (parse_power_report)."""
    src_cfg = work / "gpgpu-sim" / "configs" / "tested-cfgs" / config
    text = ptx.read_text()
    types = param_types(text, e["name"])
    with tempfile.TemporaryDirectory(prefix="gsim-") as tmp:
        t = Path(tmp)
        for f in src_cfg.iterdir():
            shutil.copy(f, t / f.name)
        cfg = (t / "gpgpusim.config").read_text()
        cfg = re.sub(r"^-power_simulation_enabled.*$", "-power_simulation_enabled 0", cfg, flags=re.M)
        if power and (t / AW_XML).exists():
            # AccelWattch's PTX-mode model (AccelWattch PTX_SIM): simulator counters (mode 0)
            cfg = re.sub(r"^-(power_simulation_enabled|power_simulation_mode|accelwattch_xml_file)\b.*\n?", "",
                         cfg, flags=re.M)
            cfg += f"\n-power_simulation_enabled 1\n-power_simulation_mode 0\n-accelwattch_xml_file {AW_XML}\n"
        elif power:
            xml = sorted(t.glob("gpuwattch*.xml"))
            if len(xml) != 1:
                sys.exit(f"{src_cfg}: expected one gpuwattch*.xml, found {len(xml)}")
            cfg = re.sub(r"^-(power_simulation_enabled|gpuwattch_xml_file)\b.*\n?", "", cfg, flags=re.M)
            cfg += f"\n-power_simulation_enabled 1\n-gpuwattch_xml_file {xml[0].name}\n"
        (t / "gpgpusim.config").write_text(cfg)
        lines = [f"kernel {e['name']}", "grid " + " ".join(map(str, e["grid"])),
                 "block " + " ".join(map(str, e["block"])), f"shared {e.get('dynamic_shared', 0)}"]
        buffers = []
        for i, (arg, ty) in enumerate(zip(e["args"], types)):
            if isinstance(arg, str) and (arg.startswith("@") or arg.startswith(("zeros:", "rand:"))):
                f = t / f"arg{i}.bin"
                f.write_bytes(buffer_bytes(arg, e["base"]))
                lines.append(f"arg file {f}")
                lines.append(f"dump {i} {t / f'out{i}.bin'}")
                buffers.append(i)
            else:
                lines.append(f"arg scalar {scalar_hex(arg, ty)}")
        for name, val in sorted(e.get("globals", {}).items()):
            size = global_size(text, name)
            f = t / f"global_{name}.bin"
            if isinstance(val, str):
                f.write_bytes(buffer_bytes(val, e["base"]))
                kind = "pointer" if size == 8 and not val.startswith("zeros:") and ".b8" not in global_decl(text, name) else "file"
            else:
                f.write_bytes((int(val) & M64).to_bytes(8, "little")[:size])
                kind = "file"
            lines.append(f"global {name} {global_space(text, name)} {size} {kind} {f}")
        (t / "launch.txt").write_text("\n".join(lines) + "\n")
        env = gpgpusim_env(work)
        env["RECONVERGE_GSIM_PTX"] = str(ptx)
        start = time.monotonic()
        p = subprocess.run([str(work / "launch"), str(t / "launch.txt")], cwd=t, env=env, capture_output=True,
                           text=True, errors="replace")
        log = p.stdout + p.stderr
        if keep:
            keep.write_text(log)
        row = {"kernel": e["name"], "config": config, "grid": "x".join(map(str, e["grid"])),
               "block": "x".join(map(str, e["block"])), "ok": p.returncode == 0 and "launch: done" in log}
        row.update(parse_log(log))
        row["wall_seconds"] = round(time.monotonic() - start, 1)
        if power:
            # GPUWattch (4.0): gpgpusim_power_report__DATE.log; AccelWattch (4.2): accelwattch_power_report.log
            reports = sorted(t.glob("gpgpusim_power_report__*.log")) or sorted(t.glob("accelwattch_power_report*.log"))
            text_report = reports[-1].read_text() if reports else ""
            if keep:
                keep.with_name(keep.stem + ".power.log").write_text(text_report)
            row["power"] = parse_power_report(text_report)
            row["core_clock_hz"] = core_clock_hz(cfg)
            if not row["power"].get("kernel_avg_power") and row["ok"]:
                row["ok"] = False
                row["error"] = f"no {'AccelWattch' if (t / AW_XML).exists() else 'GPUWattch'} power report"
        sums = []
        for i in buffers:
            out = t / f"out{i}.bin"
            sums.append(f"{i}:{hashlib.sha256(out.read_bytes()).hexdigest()[:16]}" if out.exists() else f"{i}:-")
        row["buffers"] = " ".join(sums)
        if not row["ok"]:
            row["error"] = (log.strip().splitlines() or ["no output"])[-1][:300]
        return row


def global_decl(ptx: str, name: str) -> str:
    m = re.search(r"^\s*(?:\.visible\s+|\.extern\s+)?\.(global|const)\b[^;]*\b" + re.escape(name) + r"\b[^;]*;", ptx, re.M)
    return m.group(0) if m else ""


def global_space(ptx: str, name: str) -> str:
    d = global_decl(ptx, name)
    return "const" if ".const" in d else "global"


def global_size(ptx: str, name: str) -> int:
    d = global_decl(ptx, name)
    m = re.search(r"\.(?:[usbf])(\d+)\s+" + re.escape(name) + r"(?:\[(\d+)\])?", d)
    if not m:
        sys.exit(f"cannot size module variable {name}")
    return int(m.group(1)) // 8 * int(m.group(2) or 1)


def gpgpusim_env(work: Path) -> dict:
    """The environment GPGPU-Sim's setup_environment makes (sourced once, remembered)."""
    out = subprocess.run(["bash", "-c", "set +u; source setup_environment release >/dev/null 2>&1; env -0"],
                         cwd=work / "gpgpu-sim", capture_output=True,
                         env={**os.environ, "CUDA_INSTALL_PATH": str(work / "cuda"),
                              "PATH": f"{work / 'cuda' / 'bin'}:{os.environ['PATH']}"})
    env = dict(kv.split("=", 1) for kv in out.stdout.decode().split("\0") if "=" in kv)
    env["PATH"] = f"{work / 'cuda' / 'bin'}:{env.get('PATH', '')}"
    return env


# ------------------------------------------------------------------------------------------------
# GPUWattch (run.py gpgpusim --power)
# ------------------------------------------------------------------------------------------------

# AccelWattch's XML file for PTX mode (GPGPU-Sim 4.2, configs/tested-cfgs/SM7_QV100).
AW_XML = "accelwattch_ptx_sim.xml"

# GPUWattch's components (pwr_cmp_label) and counters (perf_count_label), in its order.
COMPONENTS = ["IBP", "ICP", "DCP", "TCP", "CCP", "SHRDP", "RFP", "SPP", "SFUP", "FPUP", "SCHEDP", "L2CP", "MCP",
              "NOCP", "DRAMP", "PIPEP", "IDLE_COREP", "CONST_DYNAMICP"]
COUNTERS = ["TOT_INST", "FP_INT", "IC_H", "IC_M", "DC_RH", "DC_RM", "DC_WH", "DC_WM", "TC_H", "TC_M", "CC_H", "CC_M",
            "SHRD_ACC", "REG_RD", "REG_WR", "NON_REG_OPs", "SP_ACC", "SFU_ACC", "FPU_ACC", "MEM_RD", "MEM_WR",
            "MEM_PRE", "L2_RH", "L2_RM", "L2_WH", "L2_WM", "NOC_A", "PIPE_A", "IDLE_CORE_N"]
# Counters that are per-sample averages: n_ and the energy per event are per cycle (times / divided by S).
AVERAGED = {"PIPE_A", "IDLE_CORE_N"}
# Where each counter's energy lands and what one event is (read from the GPGPU-Sim 4.0 source).
COUNTER_INFO = {
    "TOT_INST": ("IBP", "warp instruction decoded (shader_core_ctx::decode), including ones flushed after a taken branch"),
    "FP_INT": ("SCHEDP", "warp instruction decoded with an INT or FP operand type (decode)"),
    "IC_H": ("ICP", "instruction cache hit or hit-reserved: one 16 B fetch (2 instructions) of a warp"),
    "IC_M": ("ICP", "instruction cache miss"),
    "DC_RH": ("DCP+MCP", "L1D read hit or hit-reserved, per 128 B-line request of a warp's global/local load"),
    "DC_RM": ("DCP+MCP", "L1D read miss (per memory request)"),
    "DC_WH": ("DCP+MCP", "L1D write hit (per memory request)"),
    "DC_WM": ("DCP+MCP", "L1D write miss (per memory request)"),
    "TC_H": ("TCP+MCP", "texture cache hit or hit-reserved (per request)"),
    "TC_M": ("TCP+MCP", "texture cache miss (per request)"),
    "CC_H": ("CCP+MCP", "constant cache hit or hit-reserved (per request; ld.param and ld.const)"),
    "CC_M": ("CCP+MCP", "constant cache miss (per request)"),
    "SHRD_ACC": ("SHRDP", "shared-memory pass: per shared-memory warp instruction, its bank-conflict degree"),
    "REG_RD": ("RFP", "register operand read, times 32 lanes (warp_size per source register operand)"),
    "REG_WR": ("RFP", "register write, times 32 lanes (warp_size per destination register)"),
    "NON_REG_OPs": ("RFP", "non-register source operand (immediate, special register, memory/param address), times 32 lanes"),
    "SP_ACC": ("SPP", "int ALU_OP lane-op x32 (mov, setp, cvt(a), logic, shift; not add/sub/min/max): (active + (inactive>>1)) * 32"),
    "SFU_ACC": ("SFUP", "lane-op x weight: 32-bit int mul/mad 4, int div 40, sqrt/rsqrt 25, lg2/ex2 35, sin/cos 12; inactive lanes ~3/4"),
    "FPU_ACC": ("FPUP", "lane-op x weight: fma/setp/mov/cvt/neg .f 1, mul/mad.f 1.8, div/rcp.f 48, mul24 4.2, 64-bit int mul 7.2; add/sub/min/max not counted"),
    "MEM_RD": ("MCP+DRAMP", "DRAM column read command (<= 64 B: BL 8 x 4 B x 2 chips), not L2 write-allocate reads"),
    "MEM_WR": ("MCP+DRAMP", "DRAM column write command, not L2 write-backs (so 0 with the write-back L2)"),
    "MEM_PRE": ("DRAMP", "DRAM precharge (row close); activates are not counted"),
    "L2_RH": ("L2CP", "L2 read hit or hit-reserved, per 32 B sector request at an L2 bank (sectored L2)"),
    "L2_RM": ("L2CP", "L2 read MISS (line not present); SECTOR_MISS is not counted at all"),
    "L2_WH": ("L2CP", "L2 write hit, per 32 B sector request"),
    "L2_WM": ("L2CP", "L2 write MISS; SECTOR_MISS is not counted at all"),
    "NOC_A": ("NOCP", "interconnect flit (40 B), counted at the SM, requests and replies"),
    "PIPE_A": ("PIPEP", "one core cycle at pipeline duty cycle 1 (whole chip), n_ = duty * cycles"),
    "IDLE_CORE_N": ("IDLE_COREP", "one idle SM-cycle"),
}


def parse_power_report(text: str) -> dict:
    """The numbers of a GPUWattch power report with one kernel: kernel_avg_power, gpu_avg_* and pd_*."""
    out = {}
    for key, val in re.findall(r"^((?:kernel_avg_power|gpu_avg_\w+|pd_\w+)),? = (\S+)$", text, re.M):
        if key not in out:
            out[key] = float(val)
    return out


def core_clock_hz(cfg: str) -> float:
    m = re.search(r"^-gpgpu_clock_domains\s+([0-9.]+):", cfg, re.M)
    return float(m.group(1)) * 1e6


def power_row(r: dict) -> dict:
    """The gpuwattch-CONFIG.csv row of one run_gpgpusim(..., power=True) result."""
    row = {k: r.get(k) for k in ["kernel", "config", "grid", "block", "ok", "cycles", "gpgpusim_seconds",
                                 "wall_seconds", "error"]}
    p = r.get("power") or {}
    if not r["ok"] or not p:
        return row
    f = r["core_clock_hz"]
    if abs(p["pd_core_clock_hz"] - f) > 1e-6 * f:
        sys.exit(f"{r['kernel']}: GPUWattch's clock {p['pd_core_clock_hz']} Hz is not the core clock {f} Hz")
    t = r["cycles"] / f
    s = p["pd_sample_cycles"]
    row.update(time_s=t, samples=int(p["pd_kernel_sample_count"]), tail_cycles=int(p["pd_tail_cycles"]),
               avg_power_W=p["kernel_avg_power"], energy_J=p["kernel_avg_power"] * t,
               rest_power_W=p["pd_avg_rest_power_W"])
    for c in COMPONENTS:
        row[f"energy_{c}_J"] = p[f"gpu_avg_{c}"] * t
    e_counts = p["pd_avg_rest_power_W"] * t
    for c in COUNTERS:
        k = s if c in AVERAGED else 1
        row[f"n_{c}"] = p[f"pd_sum_{c}"] * k
        row[f"tail_{c}"] = p[f"pd_tail_{c}"] * k
        e_counts += p[f"pd_energy_{c}"] / k * (row[f"n_{c}"] + row[f"tail_{c}"])
    row["energy_counts_J"] = e_counts
    return row


POWER_COLUMNS = (["kernel", "config", "grid", "block", "ok", "cycles", "time_s", "samples", "tail_cycles",
                  "avg_power_W", "energy_J"] + [f"energy_{c}_J" for c in COMPONENTS]
                 + ["energy_counts_J", "rest_power_W"] + [f"n_{c}" for c in COUNTERS]
                 + [f"tail_{c}" for c in COUNTERS] + ["gpgpusim_seconds", "wall_seconds", "error"])
COEFF_COLUMNS = ["counter", "energy_per_event_J", "mcpat_energy_per_event_J", "scaling", "component", "event",
                 "max_spread_over_samples", "spread_over_launches"]


def coefficient_rows(results: list[dict]) -> list[dict]:
    """gpuwattch-coefficients-CONFIG.csv: GPUWattch's energy per event of every counter (from the launches'
    power reports: the first launch's value, and how much it varies within and across launches)."""
    ps = [r["power"] for r in results if r.get("ok") and r.get("power", {}).get("pd_kernel_sample_count")]
    if not ps:
        return []
    p0 = ps[0]
    s = p0["pd_sample_cycles"]

    def spread(vals):
        hi = max(abs(v) for v in vals)
        return (max(vals) - min(vals)) / hi if hi else 0.0

    rows = []
    for c in COUNTERS:
        k = s if c in AVERAGED else 1
        rows.append({"counter": c, "energy_per_event_J": p0[f"pd_energy_{c}"] / k,
                     "mcpat_energy_per_event_J": p0[f"pd_mcpat_energy_{c}"] / k, "scaling": p0[f"pd_scaling_{c}"],
                     "component": COUNTER_INFO[c][0], "event": COUNTER_INFO[c][1],
                     "max_spread_over_samples": max(p[f"pd_spread_{c}"] for p in ps),
                     "spread_over_launches": spread([p[f"pd_energy_{c}"] for p in ps])})
    for name, key, comp, what in [
            ("CONST_DYNAMIC_W", "pd_CONST_DYNAMICN_W", "CONST_DYNAMICP+MCP",
             "XML CONST_DYNAMICN: constant dynamic power (W); CONST_DYNAMICP = it minus MCPAT_CONST_DYNAMIC_W"),
            ("MCPAT_CONST_DYNAMIC_W", "pd_const_dynamic_power_W", "MCP",
             "McPAT's counter-independent dynamic power (W; MC front end, PHY, transaction engine)"),
            ("REST_W", "pd_avg_rest_power_W", "all",
             "sample power minus the counters' part (W): the constant power GPUWattch adds"),
            ("IDLE_CORE_W", "pd_idle_core_power_W", "IDLE_COREP", "XML idle_core_power: W per idle SM")]:
        rows.append({"counter": name, "energy_per_event_J": p0[key], "scaling": "", "component": comp, "event": what,
                     "spread_over_launches": spread([p[key] for p in ps])})
    return rows


# ------------------------------------------------------------------------------------------------
# AccelWattch (GPGPU-Sim 4.2; run.py gpgpusim --power with a configuration that has accelwattch_ptx_sim.xml)
# ------------------------------------------------------------------------------------------------

# AccelWattch's components (pwr_cmp_label) and counters (perf_count_label), in its order.
AW_COMPONENTS = ["IBP", "ICP", "DCP", "TCP", "CCP", "SHRDP", "RFP", "INTP", "FPUP", "DPUP", "INT_MUL24P",
                 "INT_MUL32P", "INT_MULP", "INT_DIVP", "FP_MULP", "FP_DIVP", "FP_SQRTP", "FP_LGP", "FP_SINP", "FP_EXP",
                 "DP_MULP", "DP_DIVP", "TENSORP", "TEXP", "SCHEDP", "L2CP", "MCP", "NOCP", "DRAMP", "PIPEP",
                 "IDLE_COREP", "CONSTP", "STATICP"]
AW_COUNTERS = ["TOT_INST", "FP_INT", "IC_H", "IC_M", "DC_RH", "DC_RM", "DC_WH", "DC_WM", "TC_H", "TC_M", "CC_H",
               "CC_M", "SHRD_ACC", "REG_RD", "REG_WR", "NON_REG_OPs", "INT_ACC", "FPU_ACC", "DPU_ACC", "INT_MUL24_ACC",
               "INT_MUL32_ACC", "INT_MUL_ACC", "INT_DIV_ACC", "FP_MUL_ACC", "FP_DIV_ACC", "FP_SQRT_ACC", "FP_LG_ACC",
               "FP_SIN_ACC", "FP_EXP_ACC", "DP_MUL_ACC", "DP_DIV_ACC", "TENSOR_ACC", "TEX_ACC", "MEM_RD", "MEM_WR",
               "MEM_PRE", "L2_RH", "L2_RM", "L2_WH", "L2_WM", "NOC_A", "PIPE_A", "IDLE_CORE_N"]
# calculate_static_power's categories (fix_power42.py's names): first-lane and additional-lane powers.
AW_STATIC = ["INT_ADD", "INT_MUL", "INT_ADD_MUL", "INT_FP", "INT_FP_DP", "INT_FP_SFU", "INT_FP_TEX", "INT_FP_TENSOR",
             "GEOMEAN", "L1", "SHARED", "L2", "LIGHT", "NONE", "UNKNOWN"]
# Where each counter's energy lands and what one event is (read from the GPGPU-Sim 4.2 source; PTX mode,
# SM7_QV100 with -gpgpu_clock_gated_lanes 1). "lane-op": one active thread of a warp instruction of the class;
# AccelWattch's counter holds lane-ops * the XML factor, the n_ columns hold lane-ops.
AW_COUNTER_INFO = {
    "TOT_INST": ("IBP", "warp instruction decoded (shader_core_ctx::decode), including ones flushed after a taken branch"),
    "FP_INT": ("SCHEDP", "decoded warp instruction of INT, FP or untyped operand type (almost every one; decode)"),
    "IC_H": ("ICP", "instruction cache hit (0: SM7_QV100 has -gpgpu_perfect_inst_const_cache 1)"),
    "IC_M": ("ICP", "instruction cache miss (0: perfect instruction cache)"),
    "DC_RH": ("DCP+MCP", "L1D read HIT or MSHR_HIT (merge into a pending miss), per 32 B sector request of a global/local load"),
    "DC_RM": ("DCP+MCP", "L1D read MISS + SECTOR_MISS - MSHR_HIT (per sector request)"),
    "DC_WH": ("DCP+MCP", "L1D write HIT or MSHR_HIT (per sector request of a global/local store)"),
    "DC_WM": ("DCP+MCP", "L1D write MISS + SECTOR_MISS - MSHR_HIT (per sector request)"),
    "TC_H": ("TCP+MCP", "texture cache hit or hit-reserved (per request)"),
    "TC_M": ("TCP+MCP", "texture cache miss (per request)"),
    "CC_H": ("CCP+MCP", "warp instruction with a constant-memory operand (const_cache_operand): never set in PTX mode, so 0"),
    "CC_M": ("CCP+MCP", "constant cache miss: always 0 (mcpat_cycle passes 0)"),
    "SHRD_ACC": ("SHRDP", "shared-memory pass: per shared-memory warp instruction, its bank-conflict degree"),
    "REG_RD": ("RFP", "register operand read, times 32 lanes (warp_size per source register operand)"),
    "REG_WR": ("RFP", "register write, times 32 lanes (warp_size per destination register)"),
    "NON_REG_OPs": ("RFP", "non-register source operand (immediate, special register, address), times 32 lanes"),
    "INT_ACC": ("INTP", "int ALU lane-op: add/sub/min/max, mov, setp, cvt(a), logic, shift... of integer type (sp_op INT__OP)"),
    "FPU_ACC": ("FPUP", "f32/f16 lane-op other than mul/mad/fma/div/rcp/sfu: add, sub, min, max, setp, mov, cvt, abs, neg (FP__OP)"),
    "DPU_ACC": ("DPUP", "f64 lane-op other than mul/mad/fma/div/rcp/sfu (DP___OP)"),
    "INT_MUL24_ACC": ("INT_MUL24P", "mul24/mad24 lane-op (SFU-unit energy)"),
    "INT_MUL32_ACC": ("INT_MUL32P", "mul/mad of 32-bit integer type (incl. mul.wide.s32/u32) lane-op (SFU-unit energy)"),
    "INT_MUL_ACC": ("INT_MULP", "mul/mad of 64- or 16-bit integer type lane-op (SFU-unit energy)"),
    "INT_DIV_ACC": ("INT_DIVP", "integer div/rem lane-op (SFU-unit energy)"),
    "FP_MUL_ACC": ("FP_MULP", "f32/f16 mul, mad, fma lane-op (SFU-unit energy)"),
    "FP_DIV_ACC": ("FP_DIVP", "f32/f16 div, rem, rcp lane-op (SFU-unit energy)"),
    "FP_SQRT_ACC": ("FP_SQRTP", "sqrt/rsqrt lane-op, f32 or f64 (SFU-unit energy)"),
    "FP_LG_ACC": ("FP_LGP", "lg2 lane-op (SFU-unit energy)"),
    "FP_SIN_ACC": ("FP_SINP", "sin/cos lane-op (SFU-unit energy)"),
    "FP_EXP_ACC": ("FP_EXP", "ex2 lane-op (SFU-unit energy)"),
    "DP_MUL_ACC": ("DP_MULP", "f64 mul, mad, fma lane-op (SFU-unit energy)"),
    "DP_DIV_ACC": ("DP_DIVP", "f64 div, rem, rcp lane-op (SFU-unit energy)"),
    "TENSOR_ACC": ("TENSORP", "mma lane-op (SFU-unit energy)"),
    "TEX_ACC": ("TEXP", "tex lane-op (SFU-unit energy)"),
    "MEM_RD": ("MCP+DRAMP", "DRAM column read command, not L2 write-allocate reads"),
    "MEM_WR": ("MCP+DRAMP", "DRAM column write command, L2 write-backs included"),
    "MEM_PRE": ("DRAMP", "DRAM precharge (row close); activates are not counted"),
    "L2_RH": ("L2CP", "L2 read HIT or HIT_RESERVED, per 32 B sector request (global/local/const/tex/inst)"),
    "L2_RM": ("L2CP", "L2 read MISS or SECTOR_MISS (per sector request)"),
    "L2_WH": ("L2CP", "L2 write HIT or HIT_RESERVED, per sector request (global/local write, L1 write-back)"),
    "L2_WM": ("L2CP", "L2 write MISS or SECTOR_MISS (per sector request)"),
    "NOC_A": ("NOCP", "interconnect flit, counted at the SM, requests and replies"),
    "PIPE_A": ("PIPEP", "one core cycle at pipeline duty cycle 1 (whole chip), n_ = duty * cycles"),
    "IDLE_CORE_N": ("IDLE_COREP", "one idle SM-cycle (SM without a CTA)"),
}


def aw_row(r: dict) -> dict:
    """The accelwattch-CONFIG.csv row of one run_gpgpusim(..., power=True) result (AccelWattch)."""
    row = {k: r.get(k) for k in ["kernel", "config", "grid", "block", "ok", "cycles", "gpgpusim_seconds",
                                 "wall_seconds", "error"]}
    p = r.get("power") or {}
    if not r["ok"] or not p:
        return row
    f = r["core_clock_hz"]
    if abs(p["pd_core_clock_hz"] - f) > 1e-6 * f:
        sys.exit(f"{r['kernel']}: AccelWattch's clock {p['pd_core_clock_hz']} Hz is not the core clock {f} Hz")
    t = r["cycles"] / f
    s = p["pd_sample_cycles"]
    row.update(time_s=t, samples=int(p["pd_kernel_sample_count"]), tail_cycles=int(p["pd_tail_cycles"]),
               avg_power_W=p["kernel_avg_power"], energy_J=p["kernel_avg_power"] * t,
               rest_power_W=p["pd_avg_rest_power_W"], static_power_W=p["pd_avg_static_power_W"],
               threads_per_warp=p.get("gpu_avg_threads_per_warp"))
    for c in AW_COMPONENTS:
        row[f"energy_{c}_J"] = p[f"gpu_avg_{c}"] * t
    e_counts = (p["pd_avg_rest_power_W"] + p["pd_avg_static_power_W"]) * t
    for c in AW_COUNTERS:
        k = s if c in AVERAGED else 1
        scale = p[f"pd_scaling_{c}"] if p[f"pd_counter_scaled_{c}"] else 1.0
        row[f"n_{c}"] = p[f"pd_sum_{c}"] * k / scale
        row[f"tail_{c}"] = p[f"pd_tail_{c}"] * k / scale
        e_counts += p[f"pd_energy_{c}"] * scale / k * (row[f"n_{c}"] + row[f"tail_{c}"])
    row["energy_counts_J"] = e_counts
    row["static_categories"] = " ".join(f"{c}:{int(p[f'pd_static_samples_{c}'])}" for c in AW_STATIC
                                        if p.get(f"pd_static_samples_{c}"))
    return row


AW_POWER_COLUMNS = (["kernel", "config", "grid", "block", "ok", "cycles", "time_s", "samples", "tail_cycles",
                     "avg_power_W", "energy_J"] + [f"energy_{c}_J" for c in AW_COMPONENTS]
                    + ["energy_counts_J", "rest_power_W", "static_power_W", "static_categories", "threads_per_warp"]
                    + [f"n_{c}" for c in AW_COUNTERS] + [f"tail_{c}" for c in AW_COUNTERS]
                    + ["gpgpusim_seconds", "wall_seconds", "error"])
AW_COEFF_COLUMNS = ["counter", "energy_per_event_J", "mcpat_energy_per_event_J", "scaling", "scaling_in_counter",
                    "component", "event", "max_spread_over_samples", "spread_over_launches"]


def aw_coefficient_rows(results: list[dict]) -> list[dict]:
    """accelwattch-coefficients-CONFIG.csv: AccelWattch's energy per event of every counter (the first launch's
    value, and how much it varies within and across launches), then the constant and static powers."""
    ps = [r["power"] for r in results if r.get("ok") and r.get("power", {}).get("pd_kernel_sample_count")]
    if not ps:
        return []
    p0 = ps[0]
    s = p0["pd_sample_cycles"]

    def spread(vals):
        hi = max(abs(v) for v in vals)
        return (max(vals) - min(vals)) / hi if hi else 0.0

    rows = []
    for c in AW_COUNTERS:
        k = s if c in AVERAGED else 1
        scaled = bool(p0[f"pd_counter_scaled_{c}"])
        per_event = p0[f"pd_energy_{c}"] * (p0[f"pd_scaling_{c}"] if scaled else 1.0) / k
        rows.append({"counter": c, "energy_per_event_J": per_event,
                     "mcpat_energy_per_event_J": p0[f"pd_mcpat_energy_{c}"] / k, "scaling": p0[f"pd_scaling_{c}"],
                     "scaling_in_counter": int(scaled), "component": AW_COUNTER_INFO[c][0],
                     "event": AW_COUNTER_INFO[c][1], "max_spread_over_samples": max(p[f"pd_spread_{c}"] for p in ps),
                     "spread_over_launches": spread([p[f"pd_energy_{c}"] for p in ps])})
    consts = [("CONSTANT_W", "pd_constant_power_W", "CONSTP", "XML constant_power: added to every sample (W)"),
              ("MCPAT_CONST_DYNAMIC_W", "pd_mcpat_const_dynamic_power_W", "MCP",
               "McPAT's counter-independent dynamic power (W; MC front end, PHY, transaction engine)"),
              ("REST_W", "pd_avg_rest_power_W", "CONSTP+MCP",
               "sample power minus the counters' part minus STATICP (W): CONSTANT_W + MCPAT_CONST_DYNAMIC_W"),
              ("IDLE_CORE_W", "pd_idle_core_power_W", "IDLE_COREP", "XML idle_core_power: W per idle SM")]
    for cat in AW_STATIC[:13]:
        consts.append((f"STATIC_FLANE_{cat}_W", f"pd_static_flane_W_{cat}", "STATICP",
                       f"XML first-lane static power of category {cat} (W, times the active-SM fraction)"))
        consts.append((f"STATIC_ADDLANE_{cat}_W", f"pd_static_addlane_W_{cat}", "STATICP",
                       f"XML additional-lane static power of category {cat} (W per thread beyond the first)"))
    for name, key, comp, what in consts:
        rows.append({"counter": name, "energy_per_event_J": p0[key], "scaling": "", "component": comp, "event": what,
                     "spread_over_launches": spread([p[key] for p in ps])})
    return rows


def write_power(path: Path, rows: list[dict], columns: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})


COLUMNS = ["kernel", "config", "grid", "block", "ok", "cycles", "warp_instructions", "thread_instructions",
           "gpgpusim_thread_insn", "stall_cycles", "idle_cycles", "scoreboard_cycles", "l1_accesses", "l1_misses",
           "l2_accesses", "l2_misses", "shared_bank_conflicts", "reg_bank_conflict_stalls", "gpgpusim_seconds",
           "wall_seconds", "buffers", "error"]


def write_rows(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)


def read_rows(path: Path) -> list[dict]:
    with path.open() as f:
        return list(csv.DictReader(f))


def cmd_gpgpusim(a) -> int:
    if a.power:
        return cmd_gpuwattch(a)
    work = Path(a.work).resolve()
    out = OUT / f"gpgpusim-{a.config}.csv"
    old = {r["kernel"]: r for r in read_rows(out)} if out.exists() and a.only else {}
    rows = []
    for e in launches():
        if a.only and e["name"] not in a.only:
            if e["name"] in old:
                rows.append(old[e["name"]])
            continue
        sys.stderr.write(f"{e['name']} ... ")
        sys.stderr.flush()
        r = run_gpgpusim(work, a.config, e, ptx_path(e), Path(a.logs) / f"{e['name']}-{a.config}.log" if a.logs else None)
        sys.stderr.write(f"{r.get('cycles')} cycles, {r['wall_seconds']} s{'' if r['ok'] else ' FAILED: ' + r.get('error', '')}\n")
        rows.append(r)
        write_rows(out, rows)
    meta = OUT / "gpgpusim.txt"
    commit = a.commit or "unknown"
    meta.write_text(f"GPGPU-Sim: gpgpu-sim/gpgpu-sim_distribution {commit} (4.0), PTX mode, configs/tested-cfgs as shipped,\n"
                    f"-power_simulation_enabled 0; NVRTC 11.8 PTX for compute_35 (kernels/validation/ptx).\n")
    return 0


def cmd_gpuwattch(a) -> int:
    """`gpgpusim --power`: every launch with GPUWattch on; gpuwattch-CONFIG.csv and the coefficients."""
    work = Path(a.work).resolve()
    if (work / "gpgpu-sim" / "configs" / "tested-cfgs" / a.config / AW_XML).exists():
        return cmd_accelwattch(a)
    out = OUT / f"gpuwattch-{a.config}.csv"
    old = {r["kernel"]: r for r in read_rows(out)} if out.exists() and a.only else {}
    rows, results = [], []
    for e in launches():
        if a.only and e["name"] not in a.only:
            if e["name"] in old:
                rows.append(old[e["name"]])
            continue
        sys.stderr.write(f"{e['name']} ... ")
        sys.stderr.flush()
        r = run_gpgpusim(work, a.config, e, ptx_path(e),
                         Path(a.logs) / f"{e['name']}-{a.config}.log" if a.logs else None, power=True)
        row = power_row(r)
        sys.stderr.write(f"{r.get('cycles')} cycles, {row.get('energy_J', float('nan')):.4g} J, {r['wall_seconds']} s"
                         f"{'' if r['ok'] else ' FAILED: ' + r.get('error', '')}\n")
        rows.append(row)
        results.append(r)
        write_power(out, rows, POWER_COLUMNS)
    write_power(out, rows, POWER_COLUMNS)  # with --only: the old rows after the last launch run
    coeff = coefficient_rows(results)
    if coeff and not a.only:
        write_power(OUT / f"gpuwattch-coefficients-{a.config}.csv", coeff, COEFF_COLUMNS)
    elif coeff:
        for c in coeff:
            sys.stderr.write(f"{c['counter']:22s} {c['energy_per_event_J']:.4e} J\n")
    (OUT / "gpuwattch.txt").write_text(
        f"GPUWattch: gpgpu-sim/gpgpu-sim_distribution {a.commit or 'unknown'} (4.0) with scripts/gpgpusim/fix_power.py,\n"
        f"PTX mode, configs/tested-cfgs as shipped with -power_simulation_enabled 1 and the configuration's\n"
        f"gpuwattch_*.xml; NVRTC 11.8 PTX for compute_35 (kernels/validation/ptx). scripts/gpgpusim/run.py explains\n"
        f"the columns.\n")
    return 0


def cmd_accelwattch(a) -> int:
    """`gpgpusim --power` on GPGPU-Sim 4.2: every launch with AccelWattch (PTX_SIM) on;
    accelwattch-CONFIG.csv and accelwattch-coefficients-CONFIG.csv."""
    work = Path(a.work).resolve()
    out = OUT / f"accelwattch-{a.config}.csv"
    old = {r["kernel"]: r for r in read_rows(out)} if out.exists() and a.only else {}
    rows, results = [], []
    for e in launches():
        if a.only and e["name"] not in a.only:
            if e["name"] in old:
                rows.append(old[e["name"]])
            continue
        sys.stderr.write(f"{e['name']} ... ")
        sys.stderr.flush()
        r = run_gpgpusim(work, a.config, e, ptx_path(e),
                         Path(a.logs) / f"{e['name']}-{a.config}.log" if a.logs else None, power=True)
        row = aw_row(r)
        sys.stderr.write(f"{r.get('cycles')} cycles, {row.get('energy_J', float('nan')):.4g} J, {r['wall_seconds']} s"
                         f"{'' if r['ok'] else ' FAILED: ' + r.get('error', '')}\n")
        rows.append(row)
        results.append(r)
        write_power(out, rows, AW_POWER_COLUMNS)
    write_power(out, rows, AW_POWER_COLUMNS)  # with --only: the old rows after the last launch run
    coeff = aw_coefficient_rows(results)
    if coeff and not a.only:
        write_power(OUT / f"accelwattch-coefficients-{a.config}.csv", coeff, AW_COEFF_COLUMNS)
    elif coeff:
        for c in coeff:
            sys.stderr.write(f"{c['counter']:26s} {c['energy_per_event_J']:.4e}\n")
    (OUT / "accelwattch.txt").write_text(
        f"AccelWattch: gpgpu-sim/gpgpu-sim_distribution {a.commit or 'unknown'} (4.2, dev) with\n"
        f"scripts/gpgpusim/fix_source42.py and fix_power42.py, PTX mode, configs/tested-cfgs as shipped with\n"
        f"-power_simulation_enabled 1 -power_simulation_mode 0 -accelwattch_xml_file {AW_XML} (AccelWattch PTX_SIM);\n"
        f"NVRTC 11.8 PTX for compute_35 (kernels/validation/ptx). scripts/gpgpusim/run.py explains the columns.\n")
    return 0


def cmd_one(a) -> int:
    work = Path(a.work).resolve()
    grid = [int(x) for x in a.grid.split(",")] + [1] * (3 - len(a.grid.split(",")))
    block = [int(x) for x in a.block.split(",")] + [1] * (3 - len(a.block.split(",")))
    args = [x if not re.fullmatch(r"-?[0-9.eE+]+", x) else (float(x) if re.search(r"[.eE]", x) else int(x)) for x in a.arg]
    e = {"name": a.kernel, "grid": grid, "block": block, "args": args, "base": Path.cwd(),
         "dynamic_shared": a.dynamic_shared}
    r = run_gpgpusim(work, a.config, e, Path(a.ptx).resolve(), Path(a.log) if a.log else None)
    w = csv.DictWriter(sys.stdout, fieldnames=COLUMNS, extrasaction="ignore")
    w.writeheader()
    w.writerow(r)
    return 0 if r["ok"] else 1


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("ptx", help="compile the validation PTX with NVRTC 11.8")
    s.add_argument("--check", action="store_true")
    s = sub.add_parser("gpgpusim", help="run the validation set under GPGPU-Sim")
    s.add_argument("--work", required=True)
    s.add_argument("--config", required=True, choices=sorted(TEMPLATE_FOR))
    s.add_argument("--only", nargs="*", default=[])
    s.add_argument("--logs", help="keep each launch's GPGPU-Sim log in this directory")
    s.add_argument("--commit", help="the GPGPU-Sim commit, recorded beside the results")
    s.add_argument("--power", action="store_true",
                   help="power model on: GPUWattch (4.0) writes gpuwattch-CONFIG.csv and gpuwattch-coefficients-CONFIG.csv, "
                        "AccelWattch (4.2, configurations with accelwattch_ptx_sim.xml) accelwattch-CONFIG.csv and "
                        "accelwattch-coefficients-CONFIG.csv, instead")
    s = sub.add_parser("one", help="run one launch under GPGPU-Sim")
    s.add_argument("--work", required=True)
    s.add_argument("--config", required=True, choices=sorted(TEMPLATE_FOR))
    s.add_argument("ptx")
    s.add_argument("--kernel", required=True)
    s.add_argument("--grid", default="1")
    s.add_argument("--block", default="1")
    s.add_argument("--arg", action="append", default=[])
    s.add_argument("--dynamic-shared", type=int, default=0)
    s.add_argument("--log")
    a = p.parse_args()
    return {"ptx": cmd_ptx, "gpgpusim": cmd_gpgpusim, "one": cmd_one}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
