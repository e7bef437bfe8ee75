#!/usr/bin/env python3
"""Regenerate the suite's PTX: kernels/src/NAME.cu -> kernels/ptx/VARIANT/NAME.ptx with NVRTC.

Usage:
    python3 scripts/gen_ptx.py            # regenerate every variant of every kernel
    python3 scripts/gen_ptx.py fir bfs    # only these kernels (stale files are then kept)
    python3 scripts/gen_ptx.py --check    # regenerate into a temporary directory and diff
                                          # against kernels/ptx; exit 1 on any difference

NVRTC (pinned in scripts/requirements-cuda.txt: nvidia-cuda-nvrtc-cu12==12.9.86) is found via
$RECONVERGE_NVRTC (path to libnvrtc.so.12), else the nvidia-cuda-nvrtc-cu12 package of the
running Python, else a virtual environment at .tools/cuda that this script creates and fills
with the pinned requirements, then re-executes itself with (see scripts/_tools.py).

Options passed to nvrtcCompileProgram (default optimisation level, i.e. NVRTC's -O3 for
device code; no fast-math):
    common:        -default-device -lineinfo
    sm_80:         -arch=compute_80
    sm_70:         -arch=compute_70
    sm_80-nofma:   -arch=compute_80 --fmad=false   (kernels whose float results must be exact)

Which variants a kernel gets is declared in its header comment by a line
    // ptx-variants: sm_80 sm_70 sm_80-nofma
(default when absent: sm_80 sm_70). A kernel using sm_80-only intrinsics (redux.sync) lists
only sm_80.

The program handed to NVRTC is named "/kernels/src/NAME.cu": NVRTC prefixes a relative name
with the current directory in the PTX `.file` directive, so a fixed absolute pseudo-path keeps
the output identical on every machine. With that, NVRTC output is deterministic: the same
source and options give byte-identical PTX (checked by --check).
"""

from __future__ import annotations

import argparse
import ctypes
import difflib
import re
import sys
import tempfile
from pathlib import Path

sys.dont_write_bytecode = True   # keep scripts/ free of __pycache__
sys.path.insert(0, str(Path(__file__).resolve().parent))
import _tools  # noqa: E402

REPO = _tools.REPO
KERNELS = REPO / "kernels"
SRC = KERNELS / "src"
PTX = KERNELS / "ptx"

COMMON_OPTIONS = ["-default-device", "-lineinfo"]
VARIANTS = {
    "sm_80": ["-arch=compute_80"],
    "sm_70": ["-arch=compute_70"],
    "sm_80-nofma": ["-arch=compute_80", "--fmad=false"],
}
DEFAULT_VARIANTS = ["sm_80", "sm_70"]
EXPECTED_NVRTC = (12, 9)

_VARIANT_RE = re.compile(r"^//\s*ptx-variants:\s*(.+?)\s*$", re.M)


class CompileError(RuntimeError):
    pass


class Nvrtc:
    def __init__(self, path: Path):
        self.path = path
        self.lib = ctypes.CDLL(str(path))
        self.lib.nvrtcGetErrorString.restype = ctypes.c_char_p
        major, minor = ctypes.c_int(), ctypes.c_int()
        self._ok(self.lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)), "nvrtcVersion")
        self.version = (major.value, minor.value)

    def _ok(self, rc: int, what: str) -> None:
        if rc != 0:
            msg = self.lib.nvrtcGetErrorString(rc).decode()
            raise CompileError(f"{what} failed: {msg} ({rc})")

    def compile(self, source: bytes, name: str, options: list[str]) -> tuple[str, str]:
        """Compile `source`; return (ptx, log). Raise CompileError with the log on failure."""
        lib = self.lib
        prog = ctypes.c_void_p()
        self._ok(lib.nvrtcCreateProgram(ctypes.byref(prog), source, name.encode(), 0, None, None),
                 "nvrtcCreateProgram")
        try:
            opts = [o.encode() for o in options]
            arr = (ctypes.c_char_p * len(opts))(*opts)
            rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
            size = ctypes.c_size_t()
            lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
            logbuf = ctypes.create_string_buffer(size.value)
            lib.nvrtcGetProgramLog(prog, logbuf)
            log = logbuf.value.decode(errors="replace")
            if rc != 0:
                msg = lib.nvrtcGetErrorString(rc).decode()
                raise CompileError(f"{name} {' '.join(options)}: {msg}\n{log}")
            self._ok(lib.nvrtcGetPTXSize(prog, ctypes.byref(size)), "nvrtcGetPTXSize")
            buf = ctypes.create_string_buffer(size.value)
            self._ok(lib.nvrtcGetPTX(prog, buf), "nvrtcGetPTX")
            return buf.value.decode(), log
        finally:
            lib.nvrtcDestroyProgram(ctypes.byref(prog))


def kernel_variants(src: Path) -> list[str]:
    m = _VARIANT_RE.search(src.read_text())
    if not m:
        return list(DEFAULT_VARIANTS)
    names = m.group(1).split()
    for v in names:
        if v not in VARIANTS:
            raise SystemExit(f"{src.relative_to(REPO)}: unknown ptx variant {v!r} "
                             f"(known: {', '.join(VARIANTS)})")
    return names


def all_kernels() -> list[str]:
    return sorted(p.stem for p in SRC.glob("*.cu"))


def generate(nvrtc: Nvrtc, names: list[str], out_root: Path, verbose: bool) -> dict[str, str]:
    """Compile every requested (kernel, variant); write under out_root; return relpath -> text."""
    produced: dict[str, str] = {}
    for name in names:
        src = SRC / f"{name}.cu"
        if not src.is_file():
            raise SystemExit(f"no such kernel source: {src.relative_to(REPO)}")
        source = src.read_bytes()
        for variant in kernel_variants(src):
            options = COMMON_OPTIONS + VARIANTS[variant]
            ptx, log = nvrtc.compile(source, f"/kernels/src/{name}.cu", options)
            log = "\n".join(l for l in log.splitlines()
                            if l.strip() and "Architectures prior to" not in l)
            if log and verbose:
                sys.stderr.write(f"[nvrtc] {name} ({variant}):\n{log}\n")
            rel = f"{variant}/{name}.ptx"
            dest = out_root / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            old = dest.read_text() if dest.exists() else None
            dest.write_text(ptx)
            produced[rel] = ptx
            if verbose:
                state = "unchanged" if old == ptx else ("updated" if old is not None else "new")
                print(f"wrote kernels/ptx/{rel} ({state}; {' '.join(options)})")
    return produced


def existing_ptx() -> set[str]:
    return {str(p.relative_to(PTX)) for p in PTX.glob("*/*.ptx")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kernels", nargs="*", help="kernel names (default: every kernels/src/*.cu)")
    ap.add_argument("--check", action="store_true",
                    help="regenerate into a temporary directory and diff against kernels/ptx")
    args = ap.parse_args()

    tools = _tools.require_cuda_tools(need_nvrtc=True)
    nvrtc = Nvrtc(tools["nvrtc"])
    if nvrtc.version[:2] != EXPECTED_NVRTC:
        print(f"warning: NVRTC {nvrtc.version[0]}.{nvrtc.version[1]} at {nvrtc.path}; the committed "
              f"PTX comes from {EXPECTED_NVRTC[0]}.{EXPECTED_NVRTC[1]} (pinned in "
              f"scripts/requirements-cuda.txt)", file=sys.stderr)

    names = args.kernels or all_kernels()
    try:
        if args.check:
            with tempfile.TemporaryDirectory() as tmp:
                produced = generate(nvrtc, names, Path(tmp), verbose=False)
            bad = 0
            for rel, text in sorted(produced.items()):
                committed = PTX / rel
                if not committed.exists():
                    print(f"missing: kernels/ptx/{rel}")
                    bad += 1
                    continue
                old = committed.read_text()
                if old != text:
                    bad += 1
                    print(f"differs: kernels/ptx/{rel}")
                    diff = difflib.unified_diff(old.splitlines(), text.splitlines(),
                                                f"committed/{rel}", f"regenerated/{rel}",
                                                lineterm="", n=1)
                    for i, line in enumerate(diff):
                        if i >= 40:
                            print("  ...")
                            break
                        print("  " + line)
            if not args.kernels:
                for rel in sorted(existing_ptx() - set(produced)):
                    print(f"stale: kernels/ptx/{rel} (no source/variant produces it)")
                    bad += 1
            if bad:
                print(f"gen_ptx --check: {bad} file(s) out of date; run python3 scripts/gen_ptx.py")
                return 1
            print(f"gen_ptx --check: {len(produced)} PTX files up to date "
                  f"(NVRTC {nvrtc.version[0]}.{nvrtc.version[1]})")
            return 0

        produced = generate(nvrtc, names, PTX, verbose=True)
        if not args.kernels:
            for rel in sorted(existing_ptx() - set(produced)):
                (PTX / rel).unlink()
                print(f"removed stale kernels/ptx/{rel}")
        print(f"{len(produced)} PTX files from {len(names)} kernels "
              f"(NVRTC {nvrtc.version[0]}.{nvrtc.version[1]}, {nvrtc.path})")
        return 0
    except CompileError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
