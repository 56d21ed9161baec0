"""CVB0 for LDA (Asuncion et al. 2009; ESCA eq. 14), sequential.

Layouts and symbols: :mod:`.common`. One responsibility row gamma per (document, word) entry, shared
by its tokens; D is dense (M, K), W and T hold expected counts (float64).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ....rng import next_uniform, stream


@njit(cache=True)
def cvb0_init(indptr, indices, cnt, n_topics, seed, gamma, D, W, T):
    """Random initial responsibilities gamma (one row per (doc, word) entry, shared by its tokens)."""
    K = n_topics
    M = indptr.shape[0] - 1
    for m in range(M):
        st = stream(seed, 0, m)
        for e in range(indptr[m], indptr[m + 1]):
            v = indices[e]
            c = cnt[e]
            s = 0.0
            for k in range(K):
                st, u = next_uniform(st)
                gamma[e, k] = u + 1e-3
                s += gamma[e, k]
            for k in range(K):
                g = gamma[e, k] / s
                gamma[e, k] = g
                D[m, k] += c * g
                W[v * K + k] += c * g
                T[k] += c * g


@njit(cache=True)
def cvb0_sweep(indptr, indices, cnt, n_topics, alpha, beta, n_words, gamma, D, W, T):
    """One sequential CVB0 sweep: gamma_mnk propto (D_mk + alpha)(W_kv + beta)/(T_k + V beta) with
    expected counts excluding the token itself; the c tokens of an entry share gamma and are
    updated together."""
    K = n_topics
    Vb = n_words * beta
    M = indptr.shape[0] - 1
    g = np.empty(K, np.float64)
    for m in range(M):
        for e in range(indptr[m], indptr[m + 1]):
            v = indices[e]
            row = v * K
            c = cnt[e]
            s = 0.0
            for k in range(K):
                go = gamma[e, k]
                x = (D[m, k] - go + alpha) * (W[row + k] - go + beta) / (T[k] - go + Vb)
                if x < 0.0:
                    x = 0.0
                g[k] = x
                s += x
            for k in range(K):
                gn = g[k] / s
                d = c * (gn - gamma[e, k])
                gamma[e, k] = gn
                D[m, k] += d
                W[row + k] += d
                T[k] += d
