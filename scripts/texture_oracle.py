#!/usr/bin/env python3
"""An independent oracle for the texture semantics of `crates/reconverge-semantics/src/texture.rs`.

Usage:
    .tools/py/bin/python scripts/texture_oracle.py            # rewrite the case file (tests/data/texture_cases.txt)
    .tools/py/bin/python scripts/texture_oracle.py --check    # exit 1 when the file is not this script's output

This is a second implementation of the specification in texture.rs's module documentation (the `//!` lines), written
from that text, the public types and the signatures alone, never from the function bodies: the test
`crates/reconverge-semantics/tests/texture_oracle.rs` runs the Rust functions on every case written here and asks for
bit-exact agreement. The case generator uses its own SplitMix64 generator (fixed seed), so the output depends on
neither Python's nor NumPy's random number streams. NumPy supplies binary32 arithmetic (`np.float32`); Python floats
are binary64.

What the oracle computes, point by point (CUDA C++ Programming Guide, appendix "Texture Fetching"):
- Coordinates are binary32. With normalized coordinates the address mode maps `x` first (wrap: `frac(x) = x -
  floor(x)`; mirror: `frac(x)` when `floor(x)` is even, else `1 - frac(x)`; all in binary32), then it is scaled by the
  extent N (a binary32 product). Without normalized coordinates wrap and mirror act as clamp.
- Point sampling reads texel `floor(x)` (NaN -> 0, +-inf saturate to the i64 range); outside `[0, N)` the index is
  clamped (clamp), is the border (border), taken modulo N (wrap) or reflected (mirror: -1 -> 0, N -> N-1).
- Linear filtering (float results of float coordinates) reads `i = floor(x - 0.5)` and `i + 1` (x - 0.5 in binary32)
  with `alpha = frac(x - 0.5)` rounded to the nearest multiple of 1/256, halfway cases up (*); an infinite or NaN
  `x - 0.5` gives alpha = 0 and `i + 1` saturates. The weighted sum is binary64, evaluated left to right in the
  module doc's order starting from the first term (no leading +0.0, so a sum of -0.0 terms is -0.0), and rounded
  once to binary32.
- Integer coordinates: unnormalized indices, point sampled, clamp or border (wrap and mirror act as clamp). On linear
  memory an index outside `[0, width)` returns zeros in all four results (alpha included).
- Read modes: float channels as float (binary16 widened exactly, as PTX `cvt.f32.f16` does, every binary16 NaN
  becoming the canonical NaN 0x7fffffff (*); binary32 channels keep their bits, NaNs included);
  integer channels as integers, sign-extended for signed kinds; normalized float for 8- and 16-bit integers:
  unsigned `v / (2^n - 1)`, signed `max(v / (2^(n-1) - 1), -1)`, each one correctly rounded binary32 division
  (32-bit integer channels read as elements in that mode); a float result of an integer element is the integer
  rounded to binary32 (to nearest, ties to even).
- Missing channels of a 1- or 2-channel format read as 0 and alpha as 1 (1.0 for float results).
- A border texel is the whole border color (all four channels, whatever the format's channel count) for float
  results; for integer results (`.s32`/`.u32`) it is four zeros (the border color is documented "for float results";
  the guide's border mode returns zero).
- Layers are clamped to `[0, layers-1]`; coordinates a geometry does not use (and the layer of a non-layered
  geometry) are ignored, so the cases fill them with arbitrary values.
- `tld4` (gather) returns channel `comp` of the bilinear footprint's texels (i, j+1), (i+1, j+1), (i+1, j), (i, j).
- Surfaces: x is a byte offset, y, z and the layer are elements; in range when `0 <= x`, `x + size <= width * bytes`,
  `0 <= y < height`, `0 <= z < depth`, `0 <= layer < layers`; the address is base + ((layer * depth + z) * height +
  y) * pitch + x. `.clamp` clamps each coordinate into its range (x to the nearest element), `.zero` is `Dropped`,
  `.trap` is `Trap`. The generated cases keep x a multiple of the access size, the size at most the element size,
  and x beyond the row under `.clamp` only with size == element size, where every reading of "nearest element"
  agrees.
- `txq`: width, height, depth, array_size (= layers), normalized_coords and filter_mode (0/1), addr_mode_0..2 (CUDA's
  enum values).

(*) The module doc does not say how ties of the weight rounding go, nor what a binary16 NaN widens to. This oracle
first rounded ties to even and kept binary16 NaN payloads (quiet bit set); texture.rs rounds halfway up and returns
PTX's canonical NaN, and since neither the doc nor the guide decides, the oracle took texture.rs's readings (half
up is also what a fixed-point conversion that adds half and truncates does). Both are pinned by cases here.

Cases whose results the module doc leaves open are not generated: float coordinates on linear memory, `.s32`/`.u32`
results of float channels or of normalized-float reads, `num_mipmap_levels` and `num_samples` queries.

The format of the case file is described in its header (HEADER below).
"""

from __future__ import annotations

import argparse
import math
import struct
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "crates" / "reconverge-semantics" / "tests" / "data" / "texture_cases.txt"
SEED = 0x7E7_0C1E

HEADER = """\
# Texture and surface cases for crates/reconverge-semantics/src/texture.rs, generated by
# scripts/texture_oracle.py (an independent implementation of texture.rs's module documentation).
# Do not edit: regenerate with `.tools/py/bin/python scripts/texture_oracle.py`; `--check` verifies this file.
#
# One record a line, fields separated by single spaces; `#` starts a comment line. Numbers are decimal unless
# said hex (lower case, no 0x); a binary32 value is written as its 8-hex-digit bit pattern.
#   cases N        the number of sample, gather, query and surface lines that follow (the test counts them)
#   image ID BASE BYTES
#                  device memory: BYTES (hex, two digits a byte) lie at address BASE (hex)
#   desc ID IMAGE OBJ RES KIND CHANNELS BITS BASE WIDTH PITCH HEIGHT DEPTH LAYERS A0 A1 A2 LIN NF NC B0 B1 B2 B3
#                  a Descriptor. IMAGE: the image id holding its texels, or - (surfaces); OBJ: tex | surf;
#                  RES: linear | pitch2d | array; KIND: s | u | f; BASE hex; A0..A2: address modes per dimension
#                  as CUDA numbers (0 wrap, 1 clamp, 2 mirror, 3 border); LIN: linear filtering; NF: normalized
#                  float read mode; NC: normalized coordinates (0 or 1 each); B0..B3: border color (binary32 hex)
#   sample DESC GEOM f X Y Z LAYER TY = R0 R1 R2 R3
#                  tex with float coordinates X Y Z (binary32 hex); GEOM: 1d 2d 3d a1d a2d; LAYER decimal;
#                  TY: f32 s32 u32; R0..R3: the four expected result registers (hex u32)
#   sample DESC GEOM i X Y Z LAYER TY = R0 R1 R2 R3
#                  tex with integer coordinates X Y Z (decimal i32)
#   gather DESC COMP X Y TY = R0 R1 R2 R3
#                  tld4 of component COMP (0..3) at binary32 coordinates X Y
#   query DESC Q = V
#                  txq: Q is width height depth array_size normalized_coords filter_mode addr_mode_0 addr_mode_1
#                  addr_mode_2; V decimal
#   surface DESC GEOM X Y Z LAYER SIZE OOB = at ADDR | dropped | trap
#                  suld/sust address: X (bytes), Y, Z, LAYER decimal i32; SIZE bytes; OOB: trap clamp zero;
#                  ADDR hex
# The NaNs of filtered results (linear filtering, float coordinates, f32 results) follow x86-64: 0 * inf and
# inf - inf give -qNaN (0xffc00000 after rounding), a NaN operand passes through. IEEE 754 and Rust leave the
# sign and payload of an arithmetic NaN open, so the test compares such a NaN as "any NaN" off x86-64; on
# x86-64, and for every other result everywhere, it compares bit for bit.
"""

WRAP, CLAMP, MIRROR, BORDER = 0, 1, 2, 3
GEOMS = {"1d": (1, False), "2d": (2, False), "3d": (3, False), "a1d": (1, True), "a2d": (2, True)}


# ---------------------------------------------------------------------------------------------------------------
# Deterministic random numbers (SplitMix64).
# ---------------------------------------------------------------------------------------------------------------
class Rng:
    def __init__(self, seed: int):
        self.s = seed & (2**64 - 1)

    def next(self) -> int:
        self.s = (self.s + 0x9E3779B97F4A7C15) & (2**64 - 1)
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & (2**64 - 1)
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & (2**64 - 1)
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        return self.next() % n

    def range(self, lo: int, hi: int) -> int:
        """An integer in [lo, hi]."""
        return lo + self.below(hi - lo + 1)

    def bits(self, k: int) -> int:
        return self.next() & ((1 << k) - 1)

    def chance(self, p: float) -> bool:
        return self.next() < p * 2**64

    def choice(self, seq):
        return seq[self.below(len(seq))]

    def uniform(self, lo: float, hi: float) -> float:
        return lo + (hi - lo) * (self.next() >> 11) / 2**53


# ---------------------------------------------------------------------------------------------------------------
# binary32 helpers.
# ---------------------------------------------------------------------------------------------------------------
f32 = np.float32


def f32_bits(x) -> int:
    return int(np.array([x], dtype=np.float32).view(np.uint32)[0])


def bits_f32(b: int):
    return np.array([b & 0xFFFFFFFF], dtype=np.uint32).view(np.float32)[0]


def f32_of(v: float):
    """The binary32 nearest a binary64 (NumPy's conversion rounds to nearest, ties to even)."""
    return np.float32(v)


def f16_to_f32_bits(h: int) -> int:
    """binary16 -> binary32, exact; a NaN becomes the canonical NaN (PTX `cvt.f32.f16`)."""
    sign = (h >> 15) & 1
    exp = (h >> 10) & 0x1F
    man = h & 0x3FF
    if exp == 0x1F:
        if man == 0:
            return (sign << 31) | 0x7F800000
        return 0x7FFFFFFF
    if exp == 0:
        if man == 0:
            return sign << 31
        # Subnormal: man * 2^-24, exact in binary32.
        return f32_bits(np.float32((-1.0 if sign else 1.0) * man * 2.0**-24))
    return (sign << 31) | ((exp - 15 + 127) << 23) | (man << 13)


X86_DEFAULT_NAN = struct.unpack("<d", struct.pack("<Q", 0xFFF8_0000_0000_0000))[0]


def x86_op(op, a: float, b: float) -> float:
    """A binary64 operation with x86-64's NaN rules, whatever machine runs this: an invalid operation (0 * inf,
    inf - inf) gives the default NaN -qNaN (AArch64's is +qNaN); a NaN operand passes through (the first, when
    both are NaN, on both machines)."""
    r = op(a, b)
    if math.isnan(r) and not (math.isnan(a) or math.isnan(b)):
        return X86_DEFAULT_NAN
    return r


def floor_index(x) -> int:
    """floor(x) as an index, saturated to the i64 range (NaN -> 0)."""
    if math.isnan(x):
        return 0
    if math.isinf(x):
        return 2**63 - 1 if x > 0 else -(2**63)
    return max(-(2**63), min(2**63 - 1, math.floor(float(x))))


def frac32(x):
    return x - np.floor(x)


# ---------------------------------------------------------------------------------------------------------------
# The specification.
# ---------------------------------------------------------------------------------------------------------------
class Desc:
    def __init__(self, **kw):
        self.__dict__.update(kw)

    @property
    def elem_bytes(self) -> int:
        return self.channels * self.bits // 8

    def extent(self, dim: int) -> int:
        return [self.width, self.height, self.depth][dim]

    def element_addr(self, x: int, y: int, z: int, layer: int) -> int:
        return self.base + ((layer * self.depth + z) * self.height + y) * self.pitch + x * self.elem_bytes


def scaled(x, n: int, mode: int, normalized: bool):
    """A binary32 coordinate after the normalized-coordinate address mode, in texel units."""
    if not normalized:
        return x
    if mode == WRAP:
        x = frac32(x)
    elif mode == MIRROR:
        fl = np.floor(x)
        fr = x - fl
        even = math.isfinite(fl) and int(fl) % 2 == 0
        x = fr if even else f32(1.0) - fr
    return x * f32(n)


def index(i: int, n: int, mode: int, normalized: bool):
    """A texel index under the address mode; None for a border texel."""
    if 0 <= i < n:
        return i
    if not normalized and mode in (WRAP, MIRROR):
        mode = CLAMP
    if mode == CLAMP:
        return min(max(i, 0), n - 1)
    if mode == BORDER:
        return None
    if mode == WRAP:
        return i % n
    m = i % (2 * n)  # mirror: period 2N, -1 -> 0, N -> N-1
    return m if m < n else 2 * n - 1 - m


def linear_footprint(x, n: int, mode: int, normalized: bool):
    """The filter's first texel index and its weight alpha (a multiple of 1/256)."""
    xb = scaled(x, n, mode, normalized) - f32(0.5)
    i = floor_index(xb)
    fr = frac32(xb)
    if not math.isfinite(fr):
        return i, 0.0
    return i, math.floor(float(fr) * 256.0 + 0.5) / 256.0  # halfway cases up (fr * 256 + 0.5 is exact)


def sign_extend(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


class Texel:
    """('raw', [channel bits]) | ('border',) | ('zero',)."""

    def __init__(self, kind: str, raw=None):
        self.kind = kind
        self.raw = raw


def read_texel(d: Desc, mem: dict, at, layer: int) -> Texel:
    addr = d.element_addr(at[0], at[1], at[2], layer)
    cb = d.bits // 8
    raw = []
    for c in range(d.channels):
        a = addr + c * cb
        raw.append(int.from_bytes(bytes(mem[a + k] for k in range(cb)), "little"))
    return Texel("raw", raw)


def channel_f32(d: Desc, t: Texel, c: int):
    """Channel c of a texel as a binary32 (the float result path)."""
    if t.kind == "border":
        return bits_f32(d.border[c])
    if t.kind == "zero":
        return f32(0.0)
    if c >= d.channels:
        return f32(1.0) if c == 3 else f32(0.0)
    v = t.raw[c]
    if d.kind == "f":
        return bits_f32(v if d.bits == 32 else f16_to_f32_bits(v))
    if d.nf and d.bits in (8, 16):
        if d.kind == "u":
            return f32(v) / f32(2**d.bits - 1)
        q = f32(sign_extend(v, d.bits)) / f32(2 ** (d.bits - 1) - 1)
        return max(q, f32(-1.0))
    iv = sign_extend(v, d.bits) if d.kind == "s" else v
    return f32_of(float(iv))


def channel_bits(d: Desc, t: Texel, c: int) -> int:
    """Channel c of a texel as integer bits (the .s32/.u32 result path)."""
    if t.kind in ("border", "zero"):
        return 0
    if c >= d.channels:
        return 1 if c == 3 else 0
    v = t.raw[c]
    if d.kind == "s":
        return sign_extend(v, d.bits) & 0xFFFFFFFF
    return v


def texel_result(d: Desc, t: Texel, ty: str):
    if ty == "f32":
        return [f32_bits(channel_f32(d, t, c)) for c in range(4)]
    return [channel_bits(d, t, c) for c in range(4)]


def layer_index(d: Desc, geom: str, layer: int) -> int:
    if not GEOMS[geom][1]:
        return 0
    return min(max(layer, 0), d.layers - 1)


def texel_at(d: Desc, mem: dict, idx, layer: int, normalized: bool) -> Texel:
    """The texel at signed indices idx (address modes applied per dimension)."""
    at = []
    for dim, i in enumerate(idx):
        k = index(i, d.extent(dim), d.address[dim], normalized)
        if k is None:
            return Texel("border")
        at.append(k)
    while len(at) < 3:
        at.append(0)
    return read_texel(d, mem, at, layer)


def sample(d: Desc, mem: dict, geom: str, coords, is_int: bool, layer: int, ty: str):
    dims = GEOMS[geom][0]
    li = layer_index(d, geom, layer)
    if is_int:
        idx = list(coords[:dims])
        if d.res == "linear":
            x = idx[0]
            if not 0 <= x < d.width:
                return texel_result(d, Texel("zero"), ty)
            return texel_result(d, read_texel(d, mem, [x, 0, 0], 0), ty)
        return texel_result(d, texel_at(d, mem, idx, li, False), ty)
    assert d.res != "linear"
    nc = d.nc
    if not (d.lin and ty == "f32"):
        idx = [floor_index(scaled(coords[k], d.extent(k), d.address[k], nc)) for k in range(dims)]
        return texel_result(d, texel_at(d, mem, idx, li, nc), ty)
    foot = [linear_footprint(coords[k], d.extent(k), d.address[k], nc) for k in range(dims)]
    terms = []  # (weight, texel), x fastest, then y, then z
    for corner in range(1 << dims):
        w = 1.0
        idx = []
        for k in range(dims):
            i, a = foot[k]
            hi = (corner >> k) & 1
            w *= a if hi else 1.0 - a
            idx.append(i + hi)
        terms.append((w, texel_at(d, mem, idx, li, nc)))
    out = []
    for c in range(4):
        acc = None
        for w, t in terms:
            term = x86_op(float.__mul__, w, float(channel_f32(d, t, c)))
            acc = term if acc is None else x86_op(float.__add__, acc, term)
        out.append(f32_bits(f32_of(acc)))
    return out


def gather(d: Desc, mem: dict, comp: int, x, ty: str):
    (i, _), (j, _) = (linear_footprint(x[k], d.extent(k), d.address[k], d.nc) for k in range(2))
    out = []
    for di, dj in ((0, 1), (1, 1), (1, 0), (0, 0)):
        t = texel_at(d, mem, [i + di, j + dj], 0, d.nc)
        out.append(f32_bits(channel_f32(d, t, comp)) if ty == "f32" else channel_bits(d, t, comp))
    return out


def query(d: Desc, q: str) -> int:
    return {
        "width": d.width,
        "height": d.height,
        "depth": d.depth,
        "array_size": d.layers,
        "normalized_coords": int(d.nc),
        "filter_mode": int(d.lin),
        "addr_mode_0": d.address[0],
        "addr_mode_1": d.address[1],
        "addr_mode_2": d.address[2],
    }[q]


def surface_addr(d: Desc, geom: str, c, layer: int, size: int, oob: str) -> str:
    dims, layered = GEOMS[geom]
    x = c[0]
    y = c[1] if dims >= 2 else 0
    z = c[2] if dims >= 3 else 0
    ly = layer if layered else 0
    row = d.width * d.elem_bytes
    b = d.elem_bytes
    inside = 0 <= x and x + size <= row and 0 <= y < d.height and 0 <= z < d.depth and 0 <= ly < d.layers
    if not inside:
        if oob == "trap":
            return "trap"
        if oob == "zero":
            return "dropped"
        if not (0 <= x and x + size <= row):
            x = 0 if x < 0 else (d.width - 1) * b
        y = min(max(y, 0), d.height - 1)
        z = min(max(z, 0), d.depth - 1)
        ly = min(max(ly, 0), d.layers - 1)
    return "at %x" % (d.base + ((ly * d.depth + z) * d.height + y) * d.pitch + x)


# ---------------------------------------------------------------------------------------------------------------
# The cases.
# ---------------------------------------------------------------------------------------------------------------
FORMATS = [(k, ch, b) for k in "su" for b in (8, 16, 32) for ch in (1, 2, 4)] + [
    ("f", ch, b) for b in (16, 32) for ch in (1, 2, 4)
]
# (resource, geometry): linear memory is 1-D (tex1Dfetch), pitched memory 2-D, arrays every geometry.
SHAPES = [("linear", "1d"), ("pitch2d", "2d"), ("array", "1d"), ("array", "2d"), ("array", "3d"), ("array", "a1d"),
          ("array", "a2d")]
F32_SPECIALS = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC12345, 0x7FA00001, 0x00000001,
                0x807FFFFF, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000]
F16_SPECIALS = [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE01, 0x7D55, 0x0001, 0x83FF, 0x7BFF, 0xFBFF, 0x3C00]
NANS = [0x7FC00000, 0xFFC00001, 0x7F800001, 0x7FBFFFFF]


def texel_channel_bits(rng: Rng, kind: str, bits: int) -> int:
    if kind == "f" and bits == 32:
        if rng.chance(0.06):
            return rng.choice(F32_SPECIALS)
        return f32_bits(f32_of(rng.uniform(-4.0, 4.0) * 2.0 ** rng.range(-6, 6)))
    if kind == "f":
        if rng.chance(0.06):
            return rng.choice(F16_SPECIALS)
        while True:
            h = rng.bits(16)
            if (h >> 10) & 0x1F != 0x1F:
                return h
    if rng.chance(0.15):
        edges = [0, 1, (1 << bits) - 1, 1 << (bits - 1), (1 << (bits - 1)) - 1, (1 << (bits - 1)) + 1]
        return rng.choice(edges)
    return rng.bits(bits)


def border_color(rng: Rng):
    out = []
    for _ in range(4):
        r = rng.below(10)
        if r == 0:
            out.append(0x80000000)
        elif r == 1:
            out.append(rng.choice([0x00000000, 0x3F800000, 0xBF800000, 0x7F800000]))
        else:
            out.append(f32_bits(f32_of(rng.uniform(-2.0, 2.0))))
    return out


def edge_coord(rng: Rng, n: int, normalized: bool) -> int:
    """The binary32 bit pattern of one coordinate along an axis of n texels."""
    r = rng.below(100)
    if r < 35:
        if normalized:
            return f32_bits(f32_of(rng.uniform(-2.5, 2.5)))
        return f32_bits(f32_of(rng.uniform(-2.0, n + 2.0)))
    if r < 50:
        # A multiple of 1/512: half of them fall on a tie of the 1/256 weight rounding.
        k = rng.range(-3 * 512, (n + 3) * 512)
        v = k / 512.0
        return f32_bits(f32_of(v / n if normalized else v))
    if r < 60:
        # Texel centres and edges.
        k = rng.range(-2, n + 2)
        v = k + rng.choice([0.0, 0.5])
        return f32_bits(f32_of(v / n if normalized else v))
    special = [
        0x00000000, 0x80000000, 0x7F800000, 0xFF800000, rng.choice(NANS), 0x00000001, 0x80000001,
        f32_bits(f32(1e20)), f32_bits(f32(-1e20)), f32_bits(f32(2.0**23 + 1)), f32_bits(f32(-(2.0**23) - 1)),
        f32_bits(f32(2.0**24)), f32_bits(f32(3e9)), 0x7F7FFFFF,
        f32_bits(f32(2.0**-9 + 2.0**-32)),  # x - 0.5 rounds onto a weight tie in binary32 (from above)
        f32_bits(f32(2.0**-9 - 2.0**-33)),  # the same from below: binary32 rounds up to the tie, binary64 not
        f32_bits(f32(0.5 + 2.0**-9 + 2.0**-20)),  # just above a tie
        f32_bits(f32(0.5 + 2.0**-9 - 2.0**-20)),  # just below a tie
    ]
    if normalized:
        special += [
            f32_bits(f32(1.0)), f32_bits(f32(-1e-8)), f32_bits(f32(1.0 + 2.0**-23)), f32_bits(f32(-1.0)),
            f32_bits(f32(3.0)), f32_bits(f32(2.0)), f32_bits(f32(0.99999994)), f32_bits(f32(-0.99999994)),
            f32_bits(f32(1.5)), f32_bits(f32(-0.5)), f32_bits(f32(-1.25)), f32_bits(f32(0.5 / n)),
            f32_bits(f32(1.0 / n)), f32_bits(f32((n - 0.5) / n)), f32_bits(f32(1.0 - 2.0**-24)),
            f32_bits(f32((rng.range(0, n - 1) + 0.5 + 1 / 512) / n)),
        ]
    else:
        special += [
            f32_bits(f32(0.5)), f32_bits(f32(1.0)), f32_bits(f32(n - 0.5)), f32_bits(f32(n)), f32_bits(f32(n + 0.5)),
            f32_bits(f32(-0.5)), f32_bits(f32(-1.0)), f32_bits(f32(-0.25)), f32_bits(f32(0.5 + 1 / 512)),
            f32_bits(f32(1.5 - 1 / 512)), f32_bits(f32(n - 2.0**-20)), f32_bits(f32(-(2.0**-20))),
        ]
    return rng.choice(special)


def int_coord(rng: Rng, n: int) -> int:
    r = rng.below(10)
    if r == 0:
        return rng.choice([-(2**31), 2**31 - 1, -(2**31) + 1, n, -1, 2**30])
    return rng.range(-3, n + 2)


def layer_arg(rng: Rng, layers: int) -> int:
    r = rng.below(10)
    if r == 0:
        return rng.choice([-(2**31), 2**31 - 1, -1, layers, layers + 5])
    return rng.range(-1, layers)


def garbage_f32(rng: Rng) -> int:
    return rng.choice([rng.bits(32), 0x7FC00000, 0x7F800000, f32_bits(f32(1e30)), f32_bits(f32(-3.5))])


def i32(v: int) -> int:
    return sign_extend(v, 32)


class Gen:
    def __init__(self):
        self.rng = Rng(SEED)
        self.lines: list[str] = []
        self.cases: list[str] = []
        self.next_image = 0
        self.next_desc = 0
        self.next_base = 0x1000_0000

    def image(self, nbytes: int):
        iid = self.next_image
        self.next_image += 1
        base = self.next_base
        self.next_base += (nbytes + 0x1000) & ~0xFFF
        return iid, base

    def emit_desc(self, d: Desc, image) -> int:
        did = self.next_desc
        self.next_desc += 1
        d.id = did
        fields = [
            "desc", str(did), "-" if image is None else str(image), d.obj, d.res, d.kind, str(d.channels),
            str(d.bits), "%x" % d.base, str(d.width), str(d.pitch), str(d.height), str(d.depth), str(d.layers),
            *map(str, d.address), str(int(d.lin)), str(int(d.nf)), str(int(d.nc)), *("%08x" % b for b in d.border),
        ]
        self.lines.append(" ".join(fields))
        return did

    def case(self, text: str):
        self.lines.append(text)
        self.cases.append(text)

    def texture_image(self, kind: str, ch: int, bits: int, res: str, geom: str):
        rng = self.rng
        dims, layered = GEOMS[geom]
        b = ch * bits // 8
        width = rng.range(1, 9)
        if rng.chance(0.2):
            width = rng.choice([1, 2])
        height = rng.range(1, 5) if dims >= 2 else 1
        depth = rng.range(1, 3) if dims >= 3 else 1
        layers = rng.range(1, 3) if layered else 1
        pitch = width * b
        if res == "pitch2d":
            pitch += b * rng.range(0, 3) + rng.choice([0, 0, 4, 16])
        nbytes = pitch * height * depth * layers if res != "linear" else width * b
        iid, base = self.image(nbytes)
        mem_bytes = bytearray(rng.bits(8) for _ in range(nbytes))  # padding keeps this garbage
        rows = height * depth * layers
        for r in range(rows):
            for x in range(width):
                for c in range(ch):
                    v = texel_channel_bits(rng, kind, bits)
                    at = r * pitch + x * b + c * (bits // 8)
                    mem_bytes[at : at + bits // 8] = v.to_bytes(bits // 8, "little")
        self.lines.append("image %d %x %s" % (iid, base, mem_bytes.hex()))
        mem = {base + k: v for k, v in enumerate(mem_bytes)}
        shape = dict(kind=kind, channels=ch, bits=bits, base=base, width=width, pitch=pitch, height=height,
                     depth=depth, layers=layers, res=res, obj="tex")
        return iid, mem, shape

    def textures(self):
        """Every format x resource/geometry x address mode x filter x coordinate kind: one image per format and
        shape, one descriptor per (mode, filter, normalized coordinates), plus two with a mode per dimension.
        The read mode alternates with them for 8- and 16-bit integers (where it matters) and is drawn for the
        rest (where it is ignored)."""
        rng = self.rng
        for kind, ch, bits in FORMATS:
            for res, geom in SHAPES:
                dims, layered = GEOMS[geom]
                iid, mem, shape = self.texture_image(kind, ch, bits, res, geom)
                nf_matters = kind in "su" and bits in (8, 16)

                def desc(address, lin, nc, parity):
                    nf = parity % 2 == 1 if nf_matters else rng.chance(0.15)
                    d = Desc(**shape, address=address, lin=lin, nf=nf, nc=nc, border=border_color(rng))
                    return d, self.emit_desc(d, iid)

                if res == "linear":
                    for mode in range(4):
                        d, did = desc([mode, rng.below(4), rng.below(4)], rng.chance(0.3), rng.chance(0.3), mode)
                        self.texture_cases(d, did, mem, geom, n_float=0, n_int=3)
                    continue
                for mode in range(4):
                    for lin in (False, True):
                        for nc in (False, True):
                            d, did = desc([mode] * 3, lin, nc, iid + mode + lin + nc)
                            self.texture_cases(d, did, mem, geom, n_float=2, n_int=int(rng.chance(0.35)))
                if dims >= 2:
                    for _ in range(2):
                        modes = [rng.below(4) for _ in range(3)]
                        d, did = desc(modes, rng.chance(0.5), rng.chance(0.5), rng.below(2))
                        self.texture_cases(d, did, mem, geom, n_float=3, n_int=1)

    def result_types(self, d: Desc):
        if d.kind == "f" or (d.nf and d.bits in (8, 16)):
            return ["f32"]
        return ["f32", "s32", "u32"]

    def texture_cases(self, d: Desc, did: int, mem: dict, geom: str, n_float: int, n_int: int):
        rng = self.rng
        dims, layered = GEOMS[geom]
        tys = self.result_types(d)
        fmt = lambda r: " ".join("%08x" % v for v in r)  # noqa: E731
        for _ in range(n_float):
            coords = [edge_coord(rng, d.extent(k), d.nc) if k < dims else garbage_f32(rng) for k in range(3)]
            ly = layer_arg(rng, d.layers) if layered else rng.choice([0, -7, 99])
            ty = "f32" if (d.lin and rng.chance(0.75)) else rng.choice(tys)
            r = sample(d, mem, geom, [bits_f32(c) for c in coords], False, ly, ty)
            self.case("sample %d %s f %08x %08x %08x %d %s = %s" % (did, geom, *coords, ly, ty, fmt(r)))
        for _ in range(n_int):
            coords = [int_coord(rng, d.extent(k)) if k < dims else i32(rng.bits(32)) for k in range(3)]
            ly = layer_arg(rng, d.layers) if layered else rng.choice([0, -7, 99])
            ty = rng.choice(tys)
            r = sample(d, mem, geom, coords, True, ly, ty)
            self.case("sample %d %s i %d %d %d %d %s = %s" % (did, geom, *coords, ly, ty, fmt(r)))
        if geom == "2d":
            for _ in range(1 + int(rng.chance(0.3))):
                comp = rng.below(4)
                xs = [edge_coord(rng, d.extent(k), d.nc) for k in range(2)]
                ty = rng.choice(tys)
                r = gather(d, mem, comp, [bits_f32(v) for v in xs], ty)
                self.case("gather %d %d %08x %08x %s = %s" % (did, comp, *xs, ty, fmt(r)))
        if rng.chance(0.25):
            q = rng.choice(["width", "height", "depth", "array_size", "normalized_coords", "filter_mode",
                            "addr_mode_0", "addr_mode_1", "addr_mode_2"])
            self.case("query %d %s = %d" % (did, q, query(d, q)))

    def surfaces(self):
        rng = self.rng
        for kind, ch, bits in FORMATS:
            for geom in ("1d", "2d", "3d", "a1d", "a2d"):
                dims, layered = GEOMS[geom]
                b = ch * bits // 8
                width = rng.range(1, 9)
                height = rng.range(1, 5) if dims >= 2 else 1
                depth = rng.range(1, 3) if dims >= 3 else 1
                layers = rng.range(1, 3) if layered else 1
                _, base = self.image(width * b * height * depth * layers)
                d = Desc(kind=kind, channels=ch, bits=bits, base=base, width=width, pitch=width * b, height=height,
                         depth=depth, layers=layers, res="array", obj="surf", address=[CLAMP] * 3, lin=False,
                         nf=False, nc=False, border=[0, 0, 0, 0])
                did = self.emit_desc(d, None)
                for _ in range(6):
                    oob = rng.choice(["trap", "clamp", "zero"])
                    size = b if rng.chance(0.6) else rng.choice([s for s in (1, 2, 4, 8, 16) if s <= b and b % s == 0])
                    row = width * b
                    r = rng.below(10)
                    if r < 5:
                        x = rng.range(0, row // size - 1) * size
                    elif r < 7:
                        x = rng.range(-3, -1) * size
                    elif r < 9:
                        x = row + rng.range(0, 2) * size
                    else:
                        x = rng.choice([-(2**31), (2**31 - 1) // size * size])
                    if oob == "clamp" and x >= row and size != b:
                        x = rng.range(0, row // size - 1) * size
                    c = [x] + [rng.range(-2, d.extent(k) + 1) if (k < dims and rng.chance(0.4))
                               else (rng.range(0, d.extent(k) - 1) if k < dims else i32(rng.bits(32)))
                               for k in (1, 2)]
                    ly = layer_arg(rng, layers) if layered else rng.choice([0, -7, 99])
                    res = surface_addr(d, geom, c, ly, size, oob)
                    self.case("surface %d %s %d %d %d %d %d %s = %s" % (did, geom, *c, ly, size, oob, res))
                if rng.chance(0.5):
                    q = rng.choice(["width", "height", "depth", "array_size"])
                    self.case("query %d %s = %d" % (did, q, query(d, q)))

    def text(self) -> str:
        self.textures()
        self.surfaces()
        return HEADER + "cases %d\n" % len(self.cases) + "\n".join(self.lines) + "\n"


def generate() -> str:
    with np.errstate(all="ignore"):
        return Gen().text()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help=f"exit 1 when {OUT.relative_to(REPO)} differs")
    args = ap.parse_args()
    text = generate()
    if args.check:
        old = OUT.read_text() if OUT.exists() else ""
        if old != text:
            print(f"texture_oracle --check: {OUT.relative_to(REPO)} is not this script's output; "
                  "run .tools/py/bin/python scripts/texture_oracle.py")
            return 1
        print(f"texture_oracle --check: {OUT.relative_to(REPO)} up to date ({text.count(chr(10))} lines)")
        return 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(REPO)}: {len(text)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
