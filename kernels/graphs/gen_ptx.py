#!/usr/bin/env python3
"""The graph workloads' PTX: kernels/graphs/src/NAME.cu -> kernels/graphs/ptx/NAME.ptx with NVRTC.

Usage:
    python3 kernels/graphs/gen_ptx.py            # regenerate every kernel's PTX
    python3 kernels/graphs/gen_ptx.py --check    # regenerate in memory and compare; exit 1 on
                                                 # any difference

This is scripts/gen_ptx.py applied to kernels/graphs: the same NVRTC lookup (scripts/_tools.py:
$RECONVERGE_NVRTC, the running Python's nvidia-cuda-nvrtc-cu12, else .tools/cuda), the same
options (-default-device -lineinfo plus the variant's -arch=compute_80 [--fmad=false]) and the
same `// ptx-variants:` header line. Each graph kernel names exactly one variant, the one the
manifest runs (sm_80 for the integer kernels, sm_80-nofma for graph_pagerank), so the PTX sits
flat in ptx/NAME.ptx. The program is named "/kernels/graphs/src/NAME.cu" (a fixed pseudo-path,
so that the `.file` directive, and the whole PTX, is the same on every machine).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.dont_write_bytecode = True   # keep scripts/ free of __pycache__
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "scripts"))
import _tools  # noqa: E402
import gen_ptx  # noqa: E402

SRC = HERE / "src"
PTX = HERE / "ptx"


def compile_all(nvrtc: "gen_ptx.Nvrtc") -> dict[str, tuple[str, list[str]]]:
    out = {}
    for src in sorted(SRC.glob("*.cu")):
        variants = gen_ptx.kernel_variants(src)
        if len(variants) != 1:
            raise SystemExit(f"{src}: a graph kernel names exactly one ptx variant, not {variants}")
        options = gen_ptx.COMMON_OPTIONS + gen_ptx.VARIANTS[variants[0]]
        ptx, log = nvrtc.compile(src.read_bytes(), f"/kernels/graphs/src/{src.name}", options)
        log = "\n".join(l for l in log.splitlines() if l.strip())
        if log:
            sys.stderr.write(f"[nvrtc] {src.stem}:\n{log}\n")
        out[f"{src.stem}.ptx"] = (ptx, options)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed PTX")
    args = ap.parse_args()

    tools = _tools.require_cuda_tools(need_nvrtc=True)
    nvrtc = gen_ptx.Nvrtc(tools["nvrtc"])
    if nvrtc.version[:2] != gen_ptx.EXPECTED_NVRTC:
        print(f"warning: NVRTC {nvrtc.version[0]}.{nvrtc.version[1]} at {nvrtc.path}; the committed "
              f"PTX comes from {gen_ptx.EXPECTED_NVRTC[0]}.{gen_ptx.EXPECTED_NVRTC[1]}", file=sys.stderr)
    try:
        produced = compile_all(nvrtc)
    except gen_ptx.CompileError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    stale = sorted({p.name for p in PTX.glob("*.ptx")} - set(produced)) if PTX.exists() else []
    if args.check:
        bad = [name for name, (ptx, _) in produced.items()
               if not (PTX / name).exists() or (PTX / name).read_text() != ptx]
        for name in bad:
            print(f"differs or missing: kernels/graphs/ptx/{name}")
        for name in stale:
            print(f"stale: kernels/graphs/ptx/{name} (no source produces it)")
        if bad or stale:
            return 1
        print(f"gen_ptx --check: {len(produced)} graph PTX files up to date "
              f"(NVRTC {nvrtc.version[0]}.{nvrtc.version[1]})")
        return 0
    PTX.mkdir(exist_ok=True)
    for name, (ptx, options) in produced.items():
        (PTX / name).write_text(ptx)
        print(f"wrote kernels/graphs/ptx/{name} ({' '.join(options)})")
    for name in stale:
        (PTX / name).unlink()
        print(f"removed stale kernels/graphs/ptx/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
