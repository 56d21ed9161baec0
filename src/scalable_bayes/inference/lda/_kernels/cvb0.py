"""CVB0 for LDA (Asuncion et al. 2009; ESCA eq. 14), sequential.

Layouts and symbols: :mod:`.common`. One responsibility row gamma per (document, word) entry, shared
by its tokens; D is dense (M, K), W and T hold expected counts (float64).

gamma is stored either as float32 or as IEEE half precision (a uint16 array of binary16 bit
patterns, :mod:`.half`); the kernels are compiled for either. Whatever the storage, the counts
receive exactly the STORED value: an entry adds ``c * stored(g)`` when its row is written and
removes ``c * stored(g_old)`` (the value read back) when it is rewritten, so D, W and T stay equal
to the sums of ``c * gamma`` over the stored rows (up to float64 rounding of the sums), and the
token exclusion ``D_mk - gamma_mnk`` removes exactly what the token contributed.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

from ....rng import draw_index, next_uniform, stream
from .half import half_bits, half_value


def load(gamma, e, k):
    """float64 value of the stored gamma[e, k] (float32 or binary16 bits in uint16)."""
    raise NotImplementedError  # compiled only (overloaded below)


def store(gamma, e, k, x):
    """Round ``x`` to gamma's storage, write it to gamma[e, k] and return the stored value (float64)."""
    raise NotImplementedError  # compiled only


@overload(load, jit_options={"cache": True})
def _load(gamma, e, k):
    if gamma.dtype == types.float32:
        return lambda gamma, e, k: np.float64(gamma[e, k])
    if gamma.dtype == types.uint16:
        return lambda gamma, e, k: half_value(gamma[e, k])
    return None


@overload(store, jit_options={"cache": True})
def _store(gamma, e, k, x):
    if gamma.dtype == types.float32:
        def impl(gamma, e, k, x):
            y = np.float32(x)
            gamma[e, k] = y
            return np.float64(y)

        return impl
    if gamma.dtype == types.uint16:
        def impl(gamma, e, k, x):
            h = half_bits(x)
            gamma[e, k] = h
            return half_value(h)

        return impl
    return None


@njit(cache=True)
def cvb0_init_assignments(indptr, indices, cnt, n_topics, seed, gamma, D, W, T):
    """Initial responsibilities from random topic assignments: every (document, word) entry draws one topic
    uniformly (``draw_index`` on the document's stream ``stream(seed, 0, m)``, entries in CSR order) and its row
    is one-hot on it, so its c tokens, which share the row, start together."""
    K = n_topics
    M = indptr.shape[0] - 1
    for m in range(M):
        st = stream(seed, 0, m)
        for e in range(indptr[m], indptr[m + 1]):
            v = indices[e]
            c = cnt[e]
            st, j = draw_index(st, K)
            for k in range(K):
                d = c * store(gamma, e, k, 1.0 if k == j else 0.0)
                D[m, k] += d
                W[v * K + k] += d
                T[k] += d


@njit(cache=True)
def cvb0_init(indptr, indices, cnt, n_topics, seed, gamma, D, W, T):
    """Random initial responsibilities near 1/K: gamma_ek propto u_ek + 1e-3, u uniform (one row per (doc, word)
    entry, shared by its tokens). ``CVB0(init="soft")``."""
    K = n_topics
    M = indptr.shape[0] - 1
    g = np.empty(K, np.float64)
    for m in range(M):
        st = stream(seed, 0, m)
        for e in range(indptr[m], indptr[m + 1]):
            v = indices[e]
            c = cnt[e]
            s = 0.0
            for k in range(K):
                st, u = next_uniform(st)
                g[k] = u + 1e-3
                s += g[k]
            for k in range(K):
                d = c * store(gamma, e, k, g[k] / s)
                D[m, k] += d
                W[v * K + k] += d
                T[k] += d


@njit(cache=True)
def cvb0_sweep(indptr, indices, cnt, n_topics, alpha, beta, n_words, gamma, D, W, T):
    """One sequential CVB0 sweep: gamma_mnk propto (D_mk + alpha)(W_kv + beta)/(T_k + V beta) with
    expected counts excluding the token itself; the c tokens of an entry share gamma and are
    updated together."""
    K = n_topics
    Vb = n_words * beta
    M = indptr.shape[0] - 1
    g = np.empty(K, np.float64)
    old = np.empty(K, np.float64)
    for m in range(M):
        for e in range(indptr[m], indptr[m + 1]):
            v = indices[e]
            row = v * K
            c = cnt[e]
            s = 0.0
            for k in range(K):
                go = load(gamma, e, k)
                old[k] = go
                x = (D[m, k] - go + alpha) * (W[row + k] - go + beta) / (T[k] - go + Vb)
                if x < 0.0:
                    x = 0.0
                g[k] = x
                s += x
            for k in range(K):
                d = c * (store(gamma, e, k, g[k] / s) - old[k])
                D[m, k] += d
                W[row + k] += d
                T[k] += d


@njit(cache=True)
def cvb0_gamma(gamma, out):
    """``out`` (float64, same shape) = the stored gamma's values."""
    for e in range(gamma.shape[0]):
        for k in range(gamma.shape[1]):
            out[e, k] = load(gamma, e, k)
