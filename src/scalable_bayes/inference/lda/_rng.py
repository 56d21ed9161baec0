"""Counter-based random numbers for Numba kernels (SplitMix64).

Every parallel kernel derives one stream per (seed, iteration, document) with :func:`stream`, so the
numbers a document sees do not depend on which thread processes it or on the thread count.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_INV53 = 1.0 / 9007199254740992.0  # 2**-53


@njit(inline="always", cache=True)
def mix64(z):
    """SplitMix64 finaliser (a bijection of uint64 with good avalanche)."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(inline="always", cache=True)
def stream(seed, a, b):
    """Initial state of the stream keyed by (seed, a, b); all three non-negative integers."""
    s = mix64(np.uint64(seed) + _GOLDEN)
    s = mix64(s ^ (np.uint64(a) * _M1 + _GOLDEN))
    s = mix64(s ^ (np.uint64(b) * _M2 + _GOLDEN))
    return s


@njit(inline="always", cache=True)
def next_uniform(state):
    """Advance ``state``; return (new_state, u) with u uniform on [0, 1) (53 bits)."""
    state = state + _GOLDEN
    z = mix64(state)
    return state, float(z >> _S11) * _INV53
