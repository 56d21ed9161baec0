"""Pieces shared by the LDA engines' kernels: Vose alias tables, the smoothing bucket, sparse rows of
the topic-word counts, counting drawn tokens, inverse-CDF search, CSR and topic-total reductions.

Corpus layout everywhere: CSR of one document per row, ``indptr`` (int64, M+1), ``indices`` (int32
word ids), ``cnt`` (int32 counts of the (doc, word) entry). Topic-word counts are stored word-major
and flat: ``W[v * K + k]``, so the K counts of one word are contiguous. Symbols (ESCA paper, Sec. 3):
D_mk document-topic counts, W_kv topic-word counts, T_k topic totals, alpha (doc_topic_prior),
beta (topic_word_prior), V vocabulary size, invT_k = 1 / (T_k + V beta).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ....intrinsics import atomic_add
from ....rng import cdf_search  # noqa: F401  (re-exported: the engines' kernels import it from here)

# ----------------------------------------------------------------------------------------------
# Vose alias tables (ESCA App. E)
# ----------------------------------------------------------------------------------------------


@njit(cache=True)
def build_alias(weights, total, prob, alias, work):
    """Vose's alias method, O(n). Fills ``prob``/``alias`` (length n = len(weights)).

    ``work`` is int scratch of length n (small stack grows from the left, large stack from the
    right). ``alias`` holds local indices 0..n-1. Draw with :func:`draw_alias`.
    """
    n = weights.shape[0]
    ns = 0
    nl = n
    scale = n / total
    for i in range(n):
        p = weights[i] * scale
        prob[i] = p
        if p < 1.0:
            work[ns] = i
            ns += 1
        else:
            nl -= 1
            work[nl] = i
    while ns > 0 and nl < n:
        ns -= 1
        small = work[ns]
        large = work[nl]
        alias[small] = large
        pg = prob[large] + prob[small] - 1.0
        prob[large] = pg
        if pg < 1.0:
            nl += 1
            work[ns] = large
            ns += 1
    while nl < n:
        i = work[nl]
        prob[i] = 1.0
        alias[i] = i
        nl += 1
    while ns > 0:  # only reached through round-off
        ns -= 1
        i = work[ns]
        prob[i] = 1.0
        alias[i] = i


@njit(inline="always", cache=True)
def draw_alias(u, prob, alias, offset, n):
    """Local index drawn from the alias table of n items starting at ``offset``; u in [0, 1)."""
    x = u * n
    i = int(x)
    if i >= n:
        i = n - 1
    if x - i < prob[offset + i]:
        return i
    return alias[offset + i]


@njit(inline="always", cache=True)
def draw_alias_clamped(x, prob, alias, offset, n):
    """:func:`draw_alias` for an ``x`` computed as (remaining mass) / (table mass), which round-off
    can push just outside [0, 1): clamped into it first."""
    if x >= 1.0:
        x = 0.9999999999999999
    if x < 0.0:
        x = 0.0
    return draw_alias(x, prob, alias, offset, n)


@njit(cache=True)
def smoothing_bucket(T, K, V, alpha, beta, invT, s_prob, s_alias, s_work):
    """invT_k = 1/(T_k + V beta) and the alias table of the smoothing bucket alpha beta invT_k (the
    word- and document-independent part of the conditional, ESCA eq. 23); returns its mass S."""
    Vb = V * beta
    S = 0.0
    sw = np.empty(K, np.float64)
    for k in range(K):
        invT[k] = 1.0 / (T[k] + Vb)
        sw[k] = alpha * beta * invT[k]
        S += sw[k]
    build_alias(sw, S, s_prob, s_alias, s_work)
    return S


# ----------------------------------------------------------------------------------------------
# sparse rows of the topic-word counts (the word bucket's read buffer)
# ----------------------------------------------------------------------------------------------


@njit(inline="always", cache=True)
def word_row_nnz(W, K, v):
    """Number of nonzero counts of word v. Read through a slice of the row: without the wraparound arithmetic of
    a signed index the loop compiles to vector code (ESCA's layout pass over 20 Newsgroups' 22,379 x 100 counts:
    0.7 ms against 2.1)."""
    r = W[v * K: v * K + K]
    n = 0
    for k in range(K):
        n += r[k] != 0
    return n


@njit(inline="always", cache=True)
def put_count(W, i, k, invT, wtop, wcoef, p, take):
    """Entry p of a sparse row: topic k, coefficient W_kv invT_k (the count ``W[i]``); with ``take``
    the count is zeroed in ``W``."""
    wtop[p] = k
    wcoef[p] = W[i] * invT[k]
    if take:
        W[i] = 0


@njit(inline="always", cache=True)
def sparse_row(W, row, K, invT, wtop, wcoef, o, take):
    """The nonzero counts of ``W[row : row + K]`` in increasing topic order as sparse entries from
    position ``o`` (:func:`put_count`; with ``take`` the row is zeroed after them); returns their number."""
    r = W[row: row + K]  # a slice: no wraparound arithmetic on the row's indices
    n = 0
    for k in range(K):
        if r[k] != 0:
            put_count(r, k, k, invT, wtop, wcoef, o + n, False)
            n += 1
    if take:
        for k in range(K):
            r[k] = 0
    return n


# ----------------------------------------------------------------------------------------------
# counting drawn tokens
# ----------------------------------------------------------------------------------------------


@njit(inline="always", cache=True)
def count_doc_topic(k, scratch, touched, nt):
    """Count a token drawn into topic k in the document's new counts (``scratch``, with the list
    ``touched`` of its topics, ``nt`` long); returns the new length. ``touched`` needs K + 1 entries:
    k is always stored at ``touched[nt]`` and kept (``nt`` advanced) only when the topic is new to the
    document, so the count takes no branch on it (ESCA's start, its two-buffer and plain sweeps; the
    default word sweep lists a document's topics after its last token instead)."""
    # branch-free: the store is always made and kept only when the topic is new to the document
    c = scratch[k]
    touched[nt] = k
    nt += c == 0
    scratch[k] = c + 1
    return nt


@njit(inline="always", cache=True)
def count_token(k, scratch, touched, nt, Ww, row, use_atomic):
    """Count one token drawn into topic k: the document's new counts (:func:`count_doc_topic`;
    returns the new length of ``touched``) and the topic-word count ``Ww[row + k]`` (an atomic add
    when ``use_atomic``: several threads write ``Ww``)."""
    nt = count_doc_topic(k, scratch, touched, nt)
    if use_atomic:
        atomic_add(Ww, row + k, 1)
    else:
        Ww[row + k] += 1
    return nt


@njit(inline="always", cache=True)
def store_doc_counts(m, base, nt, touched, scratch, dtop, dcnt, dnnz, Tpriv, c):
    """Write document m's new sparse counts (topics ``touched[:nt]``, counts ``scratch``) at
    ``dtop``/``dcnt[base:]``, add them to chunk c's topic totals ``Tpriv[c]`` and clear ``scratch``."""
    dnnz[m] = nt
    for i in range(nt):
        # unsigned indices (all are >= 0): no wraparound arithmetic for negative indices
        k = np.uint64(touched[np.uint64(i)])
        j = np.uint64(base + i)
        dtop[j] = k
        dcnt[j] = scratch[k]
        Tpriv[c, k] += scratch[k]
        scratch[k] = 0


@njit(inline="always", cache=True)
def cdf_scan(cum, n, u):
    """First j in [0, n) with ``cum[j] > u`` by a linear scan (n - 1 if none): for few entries, or
    rows sorted so that the target tends to come early."""
    j = 0
    while j < n - 1 and cum[j] <= u:
        j += 1
    return j


# ----------------------------------------------------------------------------------------------
# reductions
# ----------------------------------------------------------------------------------------------


@njit(cache=True)
def row_sums(indptr, cnt):
    """Sum of each CSR row (document lengths), int64."""
    M = indptr.shape[0] - 1
    out = np.zeros(M, np.int64)
    for m in range(M):
        s = 0
        for e in range(indptr[m], indptr[m + 1]):
            s += cnt[e]
        out[m] = s
    return out


@njit(cache=True)
def col_sums(indices, cnt, n_cols):
    """Total count of each column (word), int64."""
    out = np.zeros(n_cols, np.int64)
    for e in range(indices.shape[0]):
        out[indices[e]] += cnt[e]
    return out


@njit(parallel=True, cache=True)
def fill_zero(a):
    for i in prange(a.shape[0]):
        a[i] = 0


@njit(cache=True)
def reduce_rows(Tpriv, T):
    """T[k] = sum_c Tpriv[c, k]; Tpriv zeroed."""
    for k in range(T.shape[0]):
        s = 0
        for c in range(Tpriv.shape[0]):
            s += Tpriv[c, k]
            Tpriv[c, k] = 0
        T[k] = s
