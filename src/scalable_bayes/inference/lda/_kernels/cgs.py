"""Collapsed Gibbs sampling for LDA (Griffiths & Steyvers 2004; ESCA eq. 13), sequential.

Layouts and symbols: :mod:`.common`. ``z`` holds one topic per token (the tokens of entry e are
contiguous); D is dense (M, K) here.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ....intrinsics import dense_row8, prefetch_write
from ....rng import draw_index, next_uniform, stream


#: entries ahead whose word row the sweep prefetches
_PREFETCH_AHEAD = 2


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
    k ~ p_k = (D_mk + alpha)(W_kv + beta)/(T_k + V beta), add it back.

    The conditional is computed as p_k = dd_k (W_kv + beta) with dd_k = (D_mk + alpha) invT_k and invT_k =
    1/(T_k + V beta) kept up to date (the two topics a token leaves and joins change two entries of each), so
    a token costs one multiplication per topic and no division. The draw is an inverse CDF over the topics in
    column order: topic k = 8 r + j is row r of column j; the eight column sums (each summed down its column)
    choose the column, then the column is walked down. Eight independent sums let the K products run as
    vector code, and the walk visits at most 8 + K/8 weights instead of a cumulative sum over all K.
    Returns nothing; updates ``z``, ``D``, ``W``, ``T``."""
    K = n_topics
    Vb = n_words * beta
    M = indptr.shape[0] - 1
    n_entries = indptr[M]
    nfull = K // 8
    jmax = min(7, K - 1)
    p = np.empty(K, np.float64)
    dd = np.empty(K, np.float64)
    invT = np.empty(K, np.float64)
    col = np.empty(8, np.float64)
    for k in range(K):
        invT[k] = 1.0 / (T[k] + Vb)
    t = 0
    for m in range(M):
        st = stream(seed, iteration, m)
        for k in range(K):
            dd[k] = (D[m, k] + alpha) * invT[k]
        for e in range(indptr[m], indptr[m + 1]):
            if e + _PREFETCH_AHEAD < n_entries:  # the word row of an entry a few ahead (a hint: same draws)
                ahead = indices[e + _PREFETCH_AHEAD] * K
                for q in range(0, K, 16):  # 16 int32 counts per 64-byte line
                    prefetch_write(W, ahead + q)
            v = indices[e]
            row = v * K
            for _ in range(cnt[e]):
                old = z[t]
                D[m, old] -= 1
                W[row + old] -= 1
                T[old] -= 1
                invT[old] = 1.0 / (T[old] + Vb)
                dd[old] = (D[m, old] + alpha) * invT[old]
                dense_row8(dd, W, row, p, col, nfull, beta)
                for k in range(8 * nfull, K):  # the last, partial row: topic k in column k - 8 nfull
                    x = dd[k] * (W[row + k] + beta)
                    p[k] = x
                    col[k - 8 * nfull] += x
                Z = 0.0
                for j in range(8):
                    Z += col[j]
                st, u = next_uniform(st)
                u *= Z
                # the column: the first j with col[0] + ... + col[j] > u (the last nonempty one at the end)
                acc = 0.0
                j = 0
                while j < jmax and acc + col[j] <= u:
                    acc += col[j]
                    j += 1
                # down the column: topics j, j + 8, ... while the running sum stays <= u
                k = j
                while k + 8 < K and acc + p[k] <= u:
                    acc += p[k]
                    k += 8
                z[t] = k
                D[m, k] += 1
                W[row + k] += 1
                T[k] += 1
                invT[k] = 1.0 / (T[k] + Vb)
                dd[k] = (D[m, k] + alpha) * invT[k]
                t += 1
