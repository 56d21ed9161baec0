"""Counter-free, explicit-state random numbers for Numba kernels (xoroshiro128+).

A *key* is a ``uint64[2]`` array holding the generator state. Every drawing kernel takes the key
and advances it in place, so a chain's randomness is fully determined by the key it starts from,
independent of Numba's global generator and of the thread count. Keys are derived from an integer
seed (plus optional stream indices such as the chain number) through ``numpy.random.SeedSequence``.

Generator: xoroshiro128+ (Blackman & Vigna 2016): uniform doubles from the top 53 bits;
normals by the Marsaglia polar method (exact, no tables).
"""

from __future__ import annotations

import numpy as np
from numba import njit

_MASK53 = 1.0 / 9007199254740992.0  # 2**-53


def make_key(seed, *keys) -> np.ndarray:
    """A fresh ``uint64[2]`` generator state from an int seed (or SeedSequence / Generator) and stream keys."""
    if isinstance(seed, np.random.Generator):
        words = seed.integers(0, 2**63, size=2, dtype=np.uint64)
    else:
        ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(int(seed))
        if keys:
            ss = np.random.SeedSequence(entropy=ss.entropy, spawn_key=tuple(ss.spawn_key) + tuple(int(k) for k in keys))
        words = ss.generate_state(2, dtype=np.uint64)
    words = np.asarray(words, dtype=np.uint64).copy()
    if words[0] == 0 and words[1] == 0:  # the all-zero state is a fixed point of xoroshiro
        words[0] = np.uint64(0x9E3779B97F4A7C15)
    return words


def as_key(rng) -> np.ndarray:
    """Accept a key (``uint64[2]``), an int seed or a numpy Generator; return a key array."""
    if isinstance(rng, np.ndarray) and rng.dtype == np.uint64 and rng.shape == (2,):
        return rng
    if isinstance(rng, (int, np.integer, np.random.Generator, np.random.SeedSequence)):
        return make_key(rng)
    raise ValueError(
        f"rng must be a uint64[2] key from scalable_bayes.samplers.rng.make_key, an int seed or a "
        f"numpy Generator; got {type(rng).__name__}"
    )


@njit(cache=True, inline="always")
def next_u64(key):
    s0 = key[0]
    s1 = key[1]
    result = s0 + s1
    s1 ^= s0
    key[0] = ((s0 << np.uint64(24)) | (s0 >> np.uint64(40))) ^ s1 ^ (s1 << np.uint64(16))
    key[1] = (s1 << np.uint64(37)) | (s1 >> np.uint64(27))
    return result


@njit(cache=True, inline="always")
def uniform(key):
    """U[0, 1) double with 53 random bits."""
    return np.float64(next_u64(key) >> np.uint64(11)) * _MASK53


@njit(cache=True)
def uniform_int(key, n):
    """Uniform integer in [0, n) (n >= 1)."""
    j = np.int64(uniform(key) * n)
    if j >= n:  # guard against rounding at the top end
        j = n - 1
    return j


@njit(cache=True)
def normal_pair(key):
    """Two independent N(0, 1) draws (Marsaglia polar method)."""
    while True:
        u = 2.0 * uniform(key) - 1.0
        v = 2.0 * uniform(key) - 1.0
        s = u * u + v * v
        if s > 0.0 and s < 1.0:
            f = np.sqrt(-2.0 * np.log(s) / s)
            return u * f, v * f


@njit(cache=True)
def normal(key):
    """One N(0, 1) draw (the second of the pair is discarded)."""
    a, _ = normal_pair(key)
    return a


@njit(cache=True)
def fill_normal(key, out):
    """Fill ``out`` (1-D float64) with independent N(0, 1) draws, two per polar step."""
    n = out.shape[0]
    i = 0
    while i + 1 < n:
        a, b = normal_pair(key)
        out[i] = a
        out[i + 1] = b
        i += 2
    if i < n:
        a, _ = normal_pair(key)
        out[i] = a


@njit(cache=True)
def partial_shuffle(key, perm, k):
    """Move a uniformly random k-subset of ``perm`` into ``perm[:k]`` (partial Fisher-Yates).

    ``perm`` is a persistent permutation of 0..N-1; after the call ``perm[:k]`` is a minibatch
    drawn without replacement. Costs O(k), allocation-free.
    """
    n = perm.shape[0]
    for i in range(k):
        j = i + uniform_int(key, n - i)
        t = perm[i]
        perm[i] = perm[j]
        perm[j] = t
