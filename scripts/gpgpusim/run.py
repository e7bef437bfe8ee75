#!/usr/bin/env python3
"""GPGPU-Sim next to reconverge: the same PTX, the same launch, cycles and counts side by side.

Run it with the Python of the work directory that build.sh made (it has numpy and NVRTC 11.8):

    W=/path/to/work
    $W/venv/bin/python scripts/gpgpusim/run.py ptx                 # (re)compile the validation PTX
    $W/venv/bin/python scripts/gpgpusim/run.py ptx --check         # ... and fail if it differs
    $W/venv/bin/python scripts/gpgpusim/run.py gpgpusim --work $W --config SM2_GTX480 [--only NAME ...]
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


def run_gpgpusim(work: Path, config: str, e: dict, ptx: Path, keep: Path | None = None) -> dict:
    """One launch under GPGPU-Sim: its row (cycles, counts, checksums of the buffers after the launch)."""
    src_cfg = work / "gpgpu-sim" / "configs" / "tested-cfgs" / config
    text = ptx.read_text()
    types = param_types(text, e["name"])
    with tempfile.TemporaryDirectory(prefix="gsim-") as tmp:
        t = Path(tmp)
        for f in src_cfg.iterdir():
            shutil.copy(f, t / f.name)
        cfg = (t / "gpgpusim.config").read_text()
        cfg = re.sub(r"^-power_simulation_enabled.*$", "-power_simulation_enabled 0", cfg, flags=re.M)
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
