#!/usr/bin/env bash
# Regenerates the NVRTC part of the corpus from cuda/*.cu (needs the NVRTC ctypes driver, see README).
# Usage: NV=/path/to/nv.py ./gen.sh
set -euo pipefail
cd "$(dirname "$0")"
NV=${NV:-/tmp/t/nv.py}
PY=${PY:-/opt/cudatools/bin/python3}
for f in cuda/*.cu; do
  b=$(basename "$f" .cu)
  "$PY" "$NV" "$f" -arch=compute_80 -default-device > "nvrtc_${b}.ptx"
done
# Variants: line info, fast math, other architectures.
for b in calls math warp shared; do
  "$PY" "$NV" "cuda/$b.cu" -arch=compute_80 -default-device -lineinfo > "nvrtc_${b}_lineinfo.ptx"
done
for b in math atomics; do
  "$PY" "$NV" "cuda/$b.cu" -arch=compute_80 -default-device --use_fast_math > "nvrtc_${b}_fastmath.ptx"
done
"$PY" "$NV" cuda/calls.cu -arch=compute_70 -default-device > nvrtc_calls_sm70.ptx
"$PY" "$NV" cuda/warp.cu -arch=compute_90 -default-device -lineinfo > nvrtc_warp_sm90.ptx
"$PY" "$NV" cuda/printf.cu -arch=compute_90 -default-device -G > nvrtc_printf_debug.ptx
"$PY" "$NV" cuda/fnptr.cu -arch=compute_80 -default-device -rdc=true > nvrtc_fnptr_rdc.ptx
