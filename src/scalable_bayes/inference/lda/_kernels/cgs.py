"""Collapsed Gibbs sampling for LDA (Griffiths & Steyvers 2004; ESCA eq. 13): the sequential sweep and the
partitioned sweep that runs on threads.

Layouts and symbols: :mod:`.common`. ``z`` holds one topic per token (the tokens of entry e are
contiguous); D is dense (M, K) here.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ....intrinsics import dense_row8, prefetch_write
from ....rng import draw_index, next_uniform, stream
from ....utils import parallel_blocks


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


def balanced_cuts(weights, n_parts):
    """Boundaries (int64, ``n_parts`` + 1 entries, 0 first, ``len(weights)`` last, not decreasing) of ``n_parts``
    contiguous ranges of ``weights`` with about equal sums: range i ends after the first index whose running
    sum reaches i / n_parts of the total."""
    w = np.asarray(weights, dtype=np.float64)
    cum = np.cumsum(w)
    total = cum[-1] if cum.size else 0.0
    cuts = np.searchsorted(cum, total * np.arange(1, n_parts) / n_parts, side="left") + 1
    b = np.concatenate([[0], np.minimum(cuts, w.size), [w.size]]).astype(np.int64)
    return np.maximum.accumulate(b)


@njit(cache=True)
def cgs_partition_layout(indptr, indices, cnt, word_cuts, gptr, toff):
    """Where each document's entries of each word range start, for :func:`cgs_sweep`: ``gptr[m, g]`` the
    first entry of document m whose word is >= ``word_cuts[g]`` (``gptr[m, P]`` its row's end), ``toff[m, g]`` the
    index in ``z`` of that entry's first token. The words of each row must be in increasing order; returns False
    (and leaves the arrays partly filled) if a row is not."""
    M = indptr.shape[0] - 1
    P = word_cuts.shape[0] - 1
    t = 0
    for m in range(M):
        g = 0
        for e in range(indptr[m], indptr[m + 1]):
            v = indices[e]
            if e > indptr[m] and v <= indices[e - 1]:
                return False
            while g < P and v >= word_cuts[g]:
                gptr[m, g] = e
                toff[m, g] = t
                g += 1
            t += cnt[e]
        while g <= P:
            gptr[m, g] = indptr[m + 1]
            if g < P:
                toff[m, g] = t
            g += 1
    return True


def cgs_sweep(indptr, indices, cnt, n_topics, alpha, beta, n_words, seed, iteration, z, D, W, T, doc_cuts, gptr, toff,
              Tloc):
    """One collapsed Gibbs sweep: for each token remove it from the counts, draw
    k ~ p_k = (D_mk + alpha)(W_kv + beta)/(T_k + V beta), add it back; sequential or on P x P blocks.

    The conditional is computed as p_k = dd_k (W_kv + beta) with dd_k = (D_mk + alpha) invT_k and invT_k =
    1/(T_k + V beta) kept up to date (the two topics a token leaves and joins change two entries of each), so
    a token costs one multiplication per topic and no division. The draw is an inverse CDF over the topics in
    column order: topic k = 8 r + j is row r of column j; the eight column sums (each summed down its column)
    choose the column, then the column is walked down. Eight independent sums let the K products run as
    vector code, and the walk visits at most 8 + K/8 weights instead of a cumulative sum over all K.

    P = ``len(doc_cuts) - 1`` (``doc_cuts`` the document boundaries of P contiguous ranges; ``gptr``, ``toff`` the
    word ranges of :func:`cgs_partition_layout`; ``Tloc`` (P, K) int64 scratch). Block (i, g) holds the tokens of
    document range i whose words lie in word range g. The sweep runs P rounds; in round s the blocks
    (i, (i + s) mod P), i < P, share no document and no word, so they run side by side on threads
    (:func:`scalable_bayes.utils.parallel_blocks`), each drawing its tokens in order from the current D and W but
    with its own copy of the topic totals taken at the round's start (``Tloc[i]``): T alone is stale within a
    round, by the other blocks' moves, and is summed up after it. This is the partition scheme of parallel
    collapsed Gibbs samplers for LDA (Yan, Xu and Qi 2009; tomotopy's default on several workers). Document m's
    tokens of word range g in iteration t draw from the stream (seed, t P + g, m), so the draws depend on P but
    not on the thread count or the blocks' order. P = 1 is the sequential sweep (one block, the stream
    (seed, t, m)). Updates ``z``, ``D``, ``W``, ``T``."""
    P = doc_cuts.shape[0] - 1
    for s in range(P):
        parallel_blocks(_partition_round, P, s, indptr, indices, cnt, n_topics, alpha, beta, n_words, seed, iteration,
                        z, D, W, T, doc_cuts, gptr, toff, Tloc)
        _merge_topic_totals(T, Tloc)


@njit(nogil=True, cache=True)
def _partition_round(i_lo, i_hi, s, indptr, indices, cnt, n_topics, alpha, beta, n_words, seed, iteration, z, D, W, T,
                     doc_cuts, gptr, toff, Tloc):
    """The blocks (i, (i + s) mod P) of round s for i_lo <= i < i_hi (see :func:`cgs_sweep`)."""
    K = n_topics
    Vb = n_words * beta
    P = doc_cuts.shape[0] - 1
    nfull = K // 8
    jmax = min(7, K - 1)
    p = np.empty(K, np.float64)
    dd = np.empty(K, np.float64)
    invT = np.empty(K, np.float64)
    col = np.empty(8, np.float64)
    for i in range(i_lo, i_hi):
        g = (i + s) % P
        Tl = Tloc[i]
        for k in range(K):
            Tl[k] = T[k]
            invT[k] = 1.0 / (Tl[k] + Vb)
        for m in range(doc_cuts[i], doc_cuts[i + 1]):
            e0 = gptr[m, g]
            e1 = gptr[m, g + 1]
            if e0 == e1:
                continue
            st = stream(seed, iteration * P + g, m)
            for k in range(K):
                dd[k] = (D[m, k] + alpha) * invT[k]
            t = toff[m, g]
            for e in range(e0, e1):
                if e + _PREFETCH_AHEAD < e1:  # the word row of an entry a few ahead (a hint: same draws)
                    ahead = indices[e + _PREFETCH_AHEAD] * K
                    for q in range(0, K, 16):
                        prefetch_write(W, ahead + q)
                row = indices[e] * K
                for _ in range(cnt[e]):
                    # (written out here: the same lines as an inlined function cost 26% more time per token)
                    old = z[t]
                    D[m, old] -= 1
                    W[row + old] -= 1
                    Tl[old] -= 1
                    invT[old] = 1.0 / (Tl[old] + Vb)
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
                    Tl[k] += 1
                    invT[k] = 1.0 / (Tl[k] + Vb)
                    dd[k] = (D[m, k] + alpha) * invT[k]
                    t += 1


@njit(nogil=True, cache=True)
def _merge_topic_totals(T, Tloc):
    """T_k += sum_i (Tloc[i, k] - T_k): every block's moves of a round added to the totals it started from."""
    for k in range(T.shape[0]):
        d = 0
        for i in range(Tloc.shape[0]):
            d += Tloc[i, k] - T[k]
        T[k] += d
