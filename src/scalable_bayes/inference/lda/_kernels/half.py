"""IEEE-754 half precision (binary16) kept as uint16 bit patterns, for Numba kernels.

Numba (0.68) has no float16 on the CPU (an ``np.float16`` array in a kernel raises
``NotImplementedError``), so a kernel that stores half-precision values keeps their bit patterns
in a uint16 array and converts with these two functions:

- ``half_bits(x)``: the binary16 pattern nearest to the float64 ``x``, ties to even (overflow to
  +-inf, NaN to the quiet NaN 0x7E00): for every other x the pattern of numpy's
  ``np.float64(x).astype(np.float16)``;
- ``half_value(h)``: the exact float64 value of the pattern ``h`` (every binary16 value,
  subnormals included, is a float64).

So ``half_value(half_bits(x))`` is ``x`` rounded to half precision: 11 significant bits (relative
error at most 2^-11) for 2^-14 <= |x| < 65520, subnormal steps of 2^-24 below 2^-14, 0 below 2^-25.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ....intrinsics import bits_float64, float64_bits

_ABS64 = (1 << 63) - 1
_MAGIC = 2.0**28  # its ulp is 2^-24, the subnormal step of binary16
_MAGIC_BITS = (1023 + 28) << 52
_MIN_NORMAL_BITS = (1023 - 14) << 52  # 2^-14, the smallest normal binary16
_OVERFLOW_BITS = (1023 + 16) << 52  # 2^16: from here on inf (65520 <= x < 2^16 rounds up to inf below)
_INF_BITS = 0x7FF << 52


@njit(cache=True)
def half_bits(x):
    """The binary16 bit pattern (uint16) nearest to the float64 ``x``, ties to even.

    Both roundings are computed and one is selected (no data-dependent branch in the common case, so
    that the sweep's loops stay fast): normal results drop 42 significand bits with the
    round-to-nearest-even bias (2^41 - 1 plus the lowest kept bit; a carry moves to the next binade,
    or to inf); subnormal results let the float64 adder round, x + 2^28 having an ulp of 2^-24.
    """
    b = float64_bits(np.float64(x))
    sign = (b >> 48) & 0x8000
    a = b & _ABS64
    n = (a + ((15 - 1023) << 52) + (1 << 41) - 1 + ((a >> 42) & 1)) >> 42
    s = float64_bits(bits_float64(a) + _MAGIC) - _MAGIC_BITS
    r = s if a < _MIN_NORMAL_BITS else n
    if a >= _OVERFLOW_BITS:
        r = 0x7E00 if a > _INF_BITS else 0x7C00
    return np.uint16(sign | r)


@njit(cache=True)
def half_value(h):
    """The float64 value of the binary16 bit pattern ``h``: the exponent rebiased by 1008 (1023 - 15);
    a subnormal is built as 2^-14 (1 + f/1024) - 2^-14 (exact)."""
    h = np.int64(h)
    a = h & 0x7FFF
    sub = a < 0x400
    v = bits_float64((a << 42) + ((1009 if sub else 1008) << 52)) - (2.0**-14 if sub else 0.0)
    if a >= 0x7C00:
        v = np.inf if a == 0x7C00 else np.nan
    return bits_float64(float64_bits(v) | ((h & 0x8000) << 48))
