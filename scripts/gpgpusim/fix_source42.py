"""The fixes GPGPU-Sim 4.2 (with AccelWattch) needs to build and run with this machine's tools.
Usage: fix_source42.py GPGPUSIM_DIR

The same fixes as fix_source.py (GPGPU-Sim 4.0) minus one: AccelWattch's copy of CACTI
(src/accelwattch/cacti/Ucache.cc) already ends calc_time_mt_wrapper with pthread_exit, so only three
non-void functions that fall off their end are left to fix, and the bison rule.

1. bison >= 3.6 writes `"end of file"` comments into ptx.tab.h that the Linux branch of the rule making
   ptx_parser_decode.def copies into it: the rule keeps only `DEF(TOKEN,"TOKEN")` of each `TOKEN = n` line.
2. g++ 12 at -O3 turns non-void functions that fall off their end into a crash at start-up: each gets
   a return value.
"""

import sys
from pathlib import Path

root = Path(sys.argv[1])
OLD_RULE = (
    "\tcat $(OUTPUT_DIR)/ptx.tab.h | grep \"=\" | sed 's/^[ ]\\+//' | sed 's/[=,]//g' | "
    "sed 's/\\([_A-Z1-9]\\+\\)[ ]\\+\\([0-9]\\+\\)/\\1 \\1/' | sed 's/^/DEF(/' | sed 's/ /,\"/' | "
    "sed 's/$$/\")/' > $(OUTPUT_DIR)/ptx_parser_decode.def"
)
NEW_RULE = (
    "\tcat $(OUTPUT_DIR)/ptx.tab.h | grep \"=\" | "
    "sed -E 's/^ +//; s/^([A-Za-z_0-9]+).*/DEF(\\1,\"\\1\")/' > $(OUTPUT_DIR)/ptx_parser_decode.def"
)
# (file, the text to replace, its replacement)
FIXES = [
    ("src/cuda-sim/Makefile", OLD_RULE, NEW_RULE),
    ("libcuda/cuda_runtime_api.cc", "  cudaConfigureCallInternal(gridDim, blockDim, sharedMem, stream);\n}",
     "  cudaConfigureCallInternal(gridDim, blockDim, sharedMem, stream);\n  return 0;\n}"),
    ("src/gpgpu-sim/dram.cc", "  } else {\n    assert(1);\n  }\n}", "  } else {\n    assert(1);\n  }\n  return 0;\n}"),
    ("src/gpgpu-sim/gpu-cache.h", "      if (sector_mask.to_ulong() & (1 << i)) return i;\n    }\n  }",
     "      if (sector_mask.to_ulong() & (1 << i)) return i;\n    }\n    return 0;\n  }"),
]
for name, old, new in FIXES:
    p = root / name
    text = p.read_text()
    if new in text:
        continue
    if text.count(old) != 1:
        sys.exit(f"{name}: the text to fix was not found exactly once")
    p.write_text(text.replace(old, new))
print("fixed", len(FIXES), "places")
