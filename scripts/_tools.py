"""Locating the pinned NVIDIA tools and numpy for the kernel-suite scripts.

Used by scripts/gen_ptx.py, scripts/bssy_compare.py and kernels/reference.py, and (`find_nvcc`, for
whole CUDA programs) by scripts/paper_workloads.py, scripts/texture_programs.py and
scripts/sample_validation.py. Nothing here is needed by the Rust workspace.

Lookup order for the CUDA tools (NVRTC, ptxas, nvdisasm):
  1. an environment variable naming the file: RECONVERGE_NVRTC (path to libnvrtc.so.12),
     RECONVERGE_PTXAS, RECONVERGE_NVDISASM;
  2. the pip packages installed for the running Python (nvidia-cuda-nvrtc-cu12,
     nvidia-cuda-nvcc-cu12, nvidia-cuda-nvdisasm);
  3. a virtual environment at <repo>/.tools/cuda (git-ignored), created on first use with
     `python3 -m venv` and filled with `pip install -r scripts/requirements-cuda.txt`; the
     calling script then re-executes itself with that environment's Python.
numpy for kernels/reference.py follows steps 2-3 with <repo>/.tools/ref and
scripts/requirements-ref.txt.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = REPO / "scripts"
CUDA_VENV = REPO / ".tools" / "cuda"
REF_VENV = REPO / ".tools" / "ref"
CUDA_REQUIREMENTS = SCRIPTS / "requirements-cuda.txt"
REF_REQUIREMENTS = SCRIPTS / "requirements-ref.txt"

_BOOTSTRAP_ENV = "RECONVERGE_TOOLS_BOOTSTRAPPED"


class ToolError(RuntimeError):
    """A tool could not be found or installed."""


def _nvidia_dirs() -> list[Path]:
    """Directories of the `nvidia` namespace package visible to the running Python."""
    spec = importlib.util.find_spec("nvidia")
    if spec is None or not spec.submodule_search_locations:
        return []
    return [Path(p) for p in spec.submodule_search_locations]


def _find_in_nvidia(relpaths: list[str]) -> Path | None:
    for base in _nvidia_dirs():
        for rel in relpaths:
            cand = base / rel
            if cand.is_file():
                return cand
    return None


def find_nvcc() -> str:
    """CUDA 13's nvcc: the wheel's in <repo>/.tools/cuda, else `nvcc` on PATH; exits with how to install
    it when there is neither."""
    import shutil

    wheel = sorted(REPO.glob(".tools/cuda/lib/python3*/site-packages/nvidia/cu13/bin/nvcc"))
    found = wheel[0] if wheel else shutil.which("nvcc")
    if not found:
        sys.exit("no nvcc: pip install -r scripts/requirements-cuda.txt (it installs into .tools/cuda)")
    return str(found)


def find_nvrtc() -> Path | None:
    env = os.environ.get("RECONVERGE_NVRTC")
    if env:
        p = Path(env)
        if not p.is_file():
            raise ToolError(f"RECONVERGE_NVRTC={env} does not name a file")
        return p
    return _find_in_nvidia(["cuda_nvrtc/lib/libnvrtc.so.12"])


def find_ptxas() -> Path | None:
    env = os.environ.get("RECONVERGE_PTXAS")
    if env:
        p = Path(env)
        if not p.is_file():
            raise ToolError(f"RECONVERGE_PTXAS={env} does not name a file")
        return p
    return _find_in_nvidia(["cuda_nvcc/bin/ptxas"])


def find_nvdisasm() -> Path | None:
    env = os.environ.get("RECONVERGE_NVDISASM")
    if env:
        p = Path(env)
        if not p.is_file():
            raise ToolError(f"RECONVERGE_NVDISASM={env} does not name a file")
        return p
    # nvidia-cuda-nvdisasm 13.x installs under nvidia/cu13/bin; 12.x under cuda_nvdisasm/bin.
    return _find_in_nvidia(["cu13/bin/nvdisasm", "cuda_nvdisasm/bin/nvdisasm"])


def _venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def _install_venv(venv: Path, requirements: Path) -> None:
    """Create `venv` if needed and install `requirements` unless already installed."""
    stamp = venv / ".installed-requirements.txt"
    wanted = requirements.read_text()
    if _venv_python(venv).exists() and stamp.exists() and stamp.read_text() == wanted:
        return
    if not _venv_python(venv).exists():
        print(f"[tools] creating virtual environment {venv.relative_to(REPO)}", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    print(f"[tools] pip install -r {requirements.relative_to(REPO)} into {venv.relative_to(REPO)}",
          file=sys.stderr)
    subprocess.run([str(_venv_python(venv)), "-m", "pip", "install", "--disable-pip-version-check",
                    "-q", "-r", str(requirements)], check=True)
    stamp.write_text(wanted)


def _reexec_in(venv: Path, requirements: Path, what: str) -> None:
    """Install into `venv` and re-execute the current script with its Python (never returns)."""
    if os.environ.get(_BOOTSTRAP_ENV) == str(venv):
        raise ToolError(f"{what} not found even inside {venv}; "
                        f"delete {venv} and retry, or set the RECONVERGE_* variable")
    _install_venv(venv, requirements)
    env = dict(os.environ)
    env[_BOOTSTRAP_ENV] = str(venv)
    py = str(_venv_python(venv))
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(py, [py, os.path.abspath(sys.argv[0]), *sys.argv[1:]], env)


def require_cuda_tools(need_nvrtc: bool = False, need_ptxas: bool = False,
                       need_nvdisasm: bool = False) -> dict[str, Path]:
    """Return the requested tool paths, bootstrapping .tools/cuda (re-exec) when one is missing."""
    found: dict[str, Path | None] = {}
    if need_nvrtc:
        found["nvrtc"] = find_nvrtc()
    if need_ptxas:
        found["ptxas"] = find_ptxas()
    if need_nvdisasm:
        found["nvdisasm"] = find_nvdisasm()
    missing = [k for k, v in found.items() if v is None]
    if missing:
        _reexec_in(CUDA_VENV, CUDA_REQUIREMENTS, ", ".join(missing))
    return {k: v for k, v in found.items() if v is not None}


def require_numpy() -> None:
    """Make `import numpy` work, bootstrapping .tools/ref (re-exec) when it is missing."""
    if importlib.util.find_spec("numpy") is None:
        _reexec_in(REF_VENV, REF_REQUIREMENTS, "numpy")
