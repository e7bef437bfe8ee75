#!/usr/bin/env bash
# Builds GPGPU-Sim 4.0 or 4.2 (gpgpu-sim/gpgpu-sim_distribution, PTX mode) on a machine without a CUDA toolkit,
# from the pieces NVIDIA ships as PyPI wheels (CUDA 11.8: ptxas, headers, libcudart, NVRTC), plus the
# one-launch host program `launch` (launch.cpp) that reconverge's validation runs use.
#
#   scripts/gpgpusim/build.sh WORK SRC
#
# WORK: a scratch directory (created; about 1.5 GB after the build). SRC: an unpacked snapshot of
# gpgpu-sim/gpgpu-sim_distribution (`git clone` it, or `git archive` a mirror): version 4.0 (master,
# 90ec3399; power model GPUWattch, src/gpuwattch) or 4.2 (dev, 6b244a5d; power model AccelWattch,
# src/accelwattch). A source with src/accelwattch gets fix_source42.py and fix_power42.py instead of
# fix_source.py and fix_power.py.
# Needs the Debian packages g++ make bison flex xutils-dev zlib1g-dev and python3 with venv; installs the
# wheels into WORK/venv. Takes 5-15 minutes on 2 cores. docs/validation.md explains every step.
#
# Why the stand-ins: the nvidia-cuda-nvcc-cu11 wheel has ptxas but no `nvcc` driver, and there is no
# CUDA 11 cuobjdump wheel. GPGPU-Sim's build only runs `nvcc --version`; its loader runs `cuobjdump -lptx
# APP` and `cuobjdump -xptx NAME APP` to find the PTX, then `ptxas -v`. Our cuobjdump hands it the PTX file
# named by $RECONVERGE_GSIM_PTX. Why the source edits: bison >= 3.6 writes `"end of file"` comments that
# the Linux branch of a sed rule copies into ptx_parser_decode.def, and g++ 12 at -O3 miscompiles four
# non-void functions that fall off their end (GPGPU-Sim crashes at start-up; three in 4.2). fix_power.py
# (fix_power42.py) makes GPUWattch (AccelWattch) print its per-event energies (J per counted event) into the
# power report; run.py --power reads them.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 WORK SRC" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1"; work=$(cd "$1" && pwd); src=$(cd "$2" && pwd)
cd "$work"

echo "== CUDA 11.8 pieces from PyPI (into $work/venv)"
if [ ! -x venv/bin/python ]; then python3 -m venv venv; fi
venv/bin/python -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
nv=$(venv/bin/python -c 'import nvidia, os; print(os.path.dirname(nvidia.__path__[0]) + "/nvidia")')

echo "== a CUDA tree GPGPU-Sim can build against ($work/cuda)"
mkdir -p cuda/bin cuda/include cuda/lib64 cuda/nvvm
cp -r "$nv"/cuda_runtime/include/. cuda/include/
cp -r "$nv"/cuda_nvcc/include/. cuda/include/
cp "$nv"/cuda_profiler_api/include/*.h cuda/include/
cp -r "$nv"/cuda_nvcc/nvvm/. cuda/nvvm/
ln -sf "$nv"/cuda_nvcc/bin/ptxas cuda/bin/ptxas
ln -sf "$nv"/cuda_runtime/lib/libcudart.so.11.0 cuda/lib64/libcudart.so.11.0
cat > cuda/bin/nvcc <<'NVCC'
#!/bin/sh
# Stand-in: GPGPU-Sim's build asks only for the version.
if [ "$1" = "--version" ]; then
  echo "nvcc: NVIDIA (R) Cuda compiler driver"
  echo "Cuda compilation tools, release 11.8, V11.8.89"
  exit 0
fi
echo "nvcc stand-in: only --version" >&2; exit 1
NVCC
cat > cuda/bin/cuobjdump <<'CUOBJ'
#!/bin/sh
# Stand-in: serves the PTX file $RECONVERGE_GSIM_PTX as the program's only PTX section.
[ -n "$RECONVERGE_GSIM_PTX" ] || { echo "cuobjdump stand-in: RECONVERGE_GSIM_PTX is not set" >&2; exit 1; }
sm=$(sed -n 's/^\.target[ \t]*sm_\([0-9]*\).*/\1/p' "$RECONVERGE_GSIM_PTX" | head -n 1)
case "$1" in
  -lptx) echo "PTX file    1: program.1.sm_$sm.ptx" ;;
  -xptx) cp "$RECONVERGE_GSIM_PTX" "./$2" ;;
  *) echo "cuobjdump stand-in: unsupported: $*" >&2; exit 1 ;;
esac
CUOBJ
chmod +x cuda/bin/nvcc cuda/bin/cuobjdump
export CUDA_INSTALL_PATH=$work/cuda PATH=$work/cuda/bin:$PATH

fix_source=fix_source.py fix_power=fix_power.py model=GPUWattch
if [ -d "$src/src/accelwattch" ]; then fix_source=fix_source42.py fix_power=fix_power42.py model=AccelWattch; fi
echo "== GPGPU-Sim source with two fixes and $model's per-event energies ($work/gpgpu-sim)"
if [ ! -d gpgpu-sim ]; then
  cp -r "$src" gpgpu-sim
  python3 "$here/$fix_source" gpgpu-sim
fi
# $fix_power prints how many places it changed: 0 when the source has them already; a work directory
# built before it existed gets them here and is rebuilt (make rebuilds only what changed).
power_edits=$(python3 "$here/$fix_power" gpgpu-sim)
lib=$(ls -d "$work"/gpgpu-sim/lib/*/cuda-11080/release 2>/dev/null || true)
if [ -z "$lib" ] || [ ! -e "$lib/libcudart.so.11.0" ] || [ "$power_edits" != 0 ]; then
  echo "== make (log: $work/build.log)"
  (cd gpgpu-sim && set +u && source setup_environment release >/dev/null 2>&1 && make -j"${JOBS:-2}" > "$work/build.log" 2>&1) \
    || { tail -n 30 "$work/build.log" >&2; exit 1; }
fi

echo "== the one-launch host program ($work/launch)"
g++ -O1 -std=c++14 -I"$work/cuda/include" "$here/launch.cpp" -o "$work/launch" -L"$work/cuda/lib64" -l:libcudart.so.11.0
echo "built: $work/gpgpu-sim (GPGPU-Sim), $work/launch; run launches with scripts/gpgpusim/run.py --work $work"
