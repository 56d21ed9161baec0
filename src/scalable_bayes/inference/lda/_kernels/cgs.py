"""Collapsed Gibbs sampling for LDA (Griffiths & Steyvers 2004; ESCA eq. 13), sequential.

Layouts and symbols: :mod:`.common`. ``z`` holds one topic per token (the tokens of entry e are
contiguous); D is dense (M, K) here.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ....rng import draw_index, next_uniform, stream
from .common import cdf_search


@njit(cache=True)
def cgs_init(indptr, indices, cnt, n_topics, seed, z, D, W, T):
    """Uniform random initial topics; ``z`` one entry per token (tokens of entry e are contiguous)."""
    K = n_topics
    M = indptr.shape[0] - 1
    t = 0
    for m in range(M):
        st = stream(seed, 0, m)
        for e in range(indptr[m], indptr[m + 1]):
            v = indices[e]
            for _ in range(cnt[e]):
                st, k = draw_index(st, K)
                z[t] = k
                t += 1
                D[m, k] += 1
                W[v * K + k] += 1
                T[k] += 1


@njit(cache=True)
def cgs_sweep(indptr, indices, cnt, n_topics, alpha, beta, n_words, seed, iteration, z, D, W, T):
    """One sequential collapsed Gibbs sweep: for each token remove it from the counts, draw
    k ~ (D_mk + alpha)(W_kv + beta)/(T_k + V beta) (dense inverse CDF), add it back."""
    K = n_topics
    Vb = n_words * beta
    M = indptr.shape[0] - 1
    cum = np.empty(K, np.float64)
    t = 0
    for m in range(M):
        st = stream(seed, iteration, m)
        for e in range(indptr[m], indptr[m + 1]):
            v = indices[e]
            row = v * K
            for _ in range(cnt[e]):
                old = z[t]
                D[m, old] -= 1
                W[row + old] -= 1
                T[old] -= 1
                P = 0.0
                for k in range(K):
                    P += (D[m, k] + alpha) * (W[row + k] + beta) / (T[k] + Vb)
                    cum[k] = P
                st, u = next_uniform(st)
                k = cdf_search(cum, K, u * P)
                z[t] = k
                D[m, k] += 1
                W[row + k] += 1
                T[k] += 1
                t += 1
