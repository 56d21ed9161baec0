"""IEEE-754 half precision (binary16) kept as uint16 bit patterns, for Numba kernels.

Numba (0.68) has no float16 on the CPU (an ``np.float16`` array in a kernel raises
``NotImplementedError``), so a kernel that stores half-precision values keeps their bit patterns
in a uint16 array and converts with these two functions:

- ``half_bits(x)``: the binary16 pattern nearest to the float64 ``x``, ties to even (overflow to
  +-inf, NaN to NaN): the same pattern as numpy's ``np.float64(x).astype(np.float16)``;
- ``half_value(h)``: the exact float64 value of the pattern ``h`` (every binary16 value,
  subnormals included, is a float64).

So ``half_value(half_bits(x))`` is ``x`` rounded to half precision: 11 significant bits (relative
error at most 2^-11) for 2^-14 <= |x| < 65520, subnormal steps of 2^-24 below 2^-14, 0 below 2^-25.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ....intrinsics import bits_float64, float64_bits

_MANT64 = (1 << 52) - 1
_ABS64 = (1 << 63) - 1
_TWO_M24 = 2.0**-24


@njit(cache=True)
def half_bits(x):
    """The binary16 bit pattern (uint16) nearest to the float64 ``x``, ties to even."""
    b = float64_bits(np.float64(x))
    sign = (b >> 48) & 0x8000
    a = b & _ABS64
    exp = a >> 52
    mant = a & _MANT64
    if exp == 0x7FF:  # inf / NaN (NaN keeps the top 10 payload bits, at least one of them set)
        if mant == 0:
            return np.uint16(sign | 0x7C00)
        r = 0x7C00 + (mant >> 42)
        if r == 0x7C00:
            r += 1
        return np.uint16(sign | r)
    e = exp - 1008  # biased half exponent (1023 - 15)
    if e >= 31:
        return np.uint16(sign | 0x7C00)
    M = mant | (1 << 52)
    if e > 0:
        shift = 42
    else:  # half subnormal: value / 2^-24 = M / 2^(43 - e)
        shift = 43 - e
        if shift >= 54:  # below 2^-25 (float64 zeros and subnormals too): rounds to zero
            return np.uint16(sign)
    r = M >> shift
    rem = M & ((1 << shift) - 1)
    halfway = 1 << (shift - 1)
    if rem > halfway or (rem == halfway and (r & 1) == 1):
        r += 1
    if e > 0:
        # r in [2^10, 2^11]: the implicit bit adds one to the exponent field, and a carry out of
        # the significand (r = 2^11) moves to the next binade (or to inf at the top)
        return np.uint16(sign | (((e - 1) << 10) + r))
    return np.uint16(sign | r)  # r = 2^10 after rounding up is the smallest normal, as it should


@njit(cache=True)
def half_value(h):
    """The float64 value of the binary16 bit pattern ``h``."""
    h = np.int64(h)
    e = (h >> 10) & 0x1F
    f = h & 0x3FF
    if e == 0:
        v = f * _TWO_M24
    elif e == 31:
        v = np.inf if f == 0 else np.nan
    else:
        v = bits_float64(np.int64(((e + 1008) << 52) | (f << 42)))
    if h & 0x8000:
        v = -v
    return v
