"""ESCA kernels on two dense topic-word buffers (read r, write w): initialisation, the per-iteration
draw tables of the paper's eq. 23 and one sweep (ESCA Alg. 1), plus the plain ("vanilla") SCA sweep.

The default word decomposition, with one dense count buffer, is in :mod:`.esca_word`. Layouts and
symbols: :mod:`.common`.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ....manifolds.simplex import dirichlet
from ....rng import cdf_count, draw_index, key_from_stream, next_uniform, stream, uniform
from ....utils import parallel_blocks
from .common import (
    build_alias,
    cdf_scan,
    cdf_search,
    count_token,
    draw_alias,
    draw_alias_clamped,
    smoothing_bucket,
    sparse_row,
    store_doc_counts,
    word_row_nnz,
)


def esca_init(indptr, indices, cnt, chunks, n_topics, seed, dptr, dtop, dcnt, dnnz, W, Tpriv, hslot, Wh,
              doc_offset=0, prior_alpha=0.0, use_atomic=True):
    """Random initial topics (Alg. 1 line 1, t = 0); fills D (sparse), W (atomic adds when ``use_atomic``, which
    several chunks need: they run on threads), Tpriv.

    ``prior_alpha`` <= 0: every token's topic uniform on the K topics, independently (the paper's
    eq. 19), from the stream (seed, 0, m) of document m. ``prior_alpha`` > 0: the topics are drawn
    from LDA's own prior: theta_m ~ Dirichlet(prior_alpha) (:func:`scalable_bayes.manifolds.simplex.dirichlet`), then every
    token of document m independently from Categorical(theta_m), all from the key derived from
    (seed, 0, m). Either way a document's draws depend on (seed, m) only, not on the thread count.
    A heavy word (``hslot[v]`` = h >= 0) is counted in its own int32 row ``Wh[h K : (h + 1) K]``
    instead of W. ``doc_offset``: global index of local document 0 (keys the random streams of a
    shard)."""
    args = (indptr, indices, cnt, chunks, n_topics, seed, dptr, dtop, dcnt, dnnz, W, Tpriv, hslot, Wh, doc_offset,
            bool(use_atomic))
    if prior_alpha > 0.0:
        parallel_blocks(_init_prior_chunks, chunks.shape[0] - 1, *args, float(prior_alpha))
    else:
        parallel_blocks(_init_uniform_chunks, chunks.shape[0] - 1, *args)


@njit(inline="always", cache=True)
def _count_start_token(k, v, h, K, scratch, touched, nt, W, Wh, use_atomic):
    """Count a start token of word v in topic k: into the heavy word's int32 row ``Wh[h K :]`` when ``h`` >= 0,
    else into ``W[v K :]``. Returns the new length of ``touched``."""
    if h >= 0:
        return count_token(k, scratch, touched, nt, Wh, h * K, use_atomic)
    return count_token(k, scratch, touched, nt, W, v * K, use_atomic)


@njit(nogil=True, cache=True)
def _init_uniform_chunks(c_lo, c_hi, indptr, indices, cnt, chunks, K, seed, dptr, dtop, dcnt, dnnz, W, Tpriv, hslot,
                         Wh, doc_offset, use_atomic):
    """The uniform start (eq. 19) of the chunks c_lo..c_hi - 1 (a block of :func:`esca_init`)."""
    for c in range(c_lo, c_hi):
        scratch = np.zeros(K, np.int32)
        touched = np.empty(K + 1, np.int32)
        for m in range(chunks[c], chunks[c + 1]):
            st = stream(seed, 0, doc_offset + m)
            nt = 0
            for e in range(indptr[m], indptr[m + 1]):
                v = indices[e]
                h = hslot[v]
                for _ in range(cnt[e]):
                    st, k = draw_index(st, K)
                    nt = _count_start_token(k, v, h, K, scratch, touched, nt, W, Wh, use_atomic)
            store_doc_counts(m, dptr[m], nt, touched, scratch, dtop, dcnt, dnnz, Tpriv, c)


@njit(nogil=True, cache=True)
def _init_prior_chunks(c_lo, c_hi, indptr, indices, cnt, chunks, K, seed, dptr, dtop, dcnt, dnnz, W, Tpriv, hslot,
                       Wh, doc_offset, use_atomic, prior_alpha):
    """The start from LDA's prior of the chunks c_lo..c_hi - 1 (a block of :func:`esca_init`). A function of
    its own so that the uniform start does not compile the Dirichlet draw."""
    for c in range(c_lo, c_hi):
        scratch = np.zeros(K, np.int32)
        touched = np.empty(K + 1, np.int32)
        cum = np.empty(K, np.float64)
        prior = np.full(K, prior_alpha)
        key = np.empty(2, np.uint64)
        for m in range(chunks[c], chunks[c + 1]):
            z = 0.0
            if indptr[m + 1] > indptr[m]:
                key_from_stream(seed, 0, doc_offset + m, key)
                dirichlet(key, prior, cum)  # theta_m, then its running sums in place
                for k in range(1, K):
                    cum[k] += cum[k - 1]
                z = cum[K - 1]
            nt = 0
            for e in range(indptr[m], indptr[m + 1]):
                v = indices[e]
                h = hslot[v]
                for _ in range(cnt[e]):
                    k = cdf_count(cum, K, uniform(key) * z)
                    nt = _count_start_token(k, v, h, K, scratch, touched, nt, W, Wh, use_atomic)
            store_doc_counts(m, dptr[m], nt, touched, scratch, dtop, dcnt, dnnz, Tpriv, c)

@njit(parallel=True, cache=True)
def esca_tables(W, T, n_topics, n_words, alpha, beta, invT, s_prob, s_alias, s_work, wptr, wtop, wprob, walias, wwork, wmass,
                wcoef, word_alias):
    """Per-iteration draw tables of the dense term alpha (W_kv + beta) / (T_k + V beta) (eq. 23) from
    the read buffer ``W`` (left unchanged: the sweep's document term reads it).

    The dense term is split into a word-independent smoothing bucket alpha beta / (T_k + V beta)
    (one alias table of K, in ``s_*``) and a word bucket alpha W_kv / (T_k + V beta) over the
    word's nonzero topics only (alias tables in ``w*``, offsets ``wptr``): build cost
    O(K + nnz(W)) instead of O(V K). Returns the smoothing mass S; ``wmass[v]`` the word masses.
    ``wcoef`` receives W_kv / (T_k + V beta) over the same sparse layout, in increasing topic order
    (word-bucket coefficients of :func:`esca_sweep`'s three-bucket mode). With ``word_alias`` False
    the per-word alias tables are not built and ``wprob``/``walias``/``wwork`` are not touched.

    The word decomposition's tables (:func:`.esca_word.esca_word_tables`) share the smoothing
    bucket and the sparse rows but not this layout: they take the counts out of a single buffer,
    keep dense rows for words with many topics and sort the rows; these keep the counts, the topic
    order and build per-word alias tables.
    """
    K = n_topics
    V = n_words
    S = smoothing_bucket(T, K, V, alpha, beta, invT, s_prob, s_alias, s_work)
    nnz = np.empty(V, np.int64)
    for v in prange(V):
        nnz[v] = word_row_nnz(W, K, v)
    wptr[0] = 0
    for v in range(V):
        wptr[v + 1] = wptr[v] + nnz[v]
    if wptr[V] > wtop.shape[0]:
        raise ValueError("esca_tables: nnz(W) exceeds the capacity of the word tables")
    for v in prange(V):
        o = wptr[v]
        n = sparse_row(W, v * K, K, invT, wtop, wcoef, o, False)
        tot = 0.0
        for i in range(n):
            k = wtop[o + i]
            x = alpha * W[v * K + k] * invT[k]
            if word_alias:
                wprob[o + i] = x
            tot += x
        wmass[v] = tot
        if n > 0 and word_alias:
            build_alias(wprob[o : o + n], tot, wprob[o : o + n], walias[o : o + n], wwork[o : o + n])
    return S


@njit(parallel=True, cache=True)
def esca_sweep(
    indptr, indices, cnt, chunks, n_topics, alpha, beta, seed, iteration,
    dptr, dtop_r, dcnt_r, dnnz_r, dtop_w, dcnt_w, dnnz_w,
    W_r, W_w, Tpriv, invT,
    s_prob, s_alias, S, wptr, wtop, wprob, walias, wmass, wcoef, use_atomic, mode, doc_offset=0,
):
    """One ESCA iteration (Alg. 1 with eq. 23), reading buffer r and writing buffer w.

    Every token's new topic is drawn from the frozen conditional
    p(k) propto (D_mk + alpha)(W_kv + beta)/(T_k + V beta) of the read buffer (the token's own
    current topic is not excluded: no assignment is stored). Split as
    D_mk (W_kv + beta)/(T_k + V beta) over the document's nonzero topics (linear scan) plus the dense
    term drawn in O(1) from the tables of :func:`esca_tables`. All tokens of one (document, word)
    entry are drawn from one computed distribution. Document m draws from the stream
    (seed, iteration, m), so results do not depend on the thread count.

    ``mode`` picks, per (document, word) entry, one of two exact decompositions of the same
    conditional: 1 = the paper's eq. 23 (document term over the document's nonzero topics + dense
    term from the word's alias table); 2 = three buckets, (D_mk + alpha) W_kv/(T_k + V beta) over the
    word's nonzero topics, D_mk beta/(T_k + V beta) over the document's topics (computed once per
    document) and alpha beta/(T_k + V beta) (one alias table of K); 0 = whichever of the two loops
    is shorter for the entry (nnz(W_v) vs nnz(D_m)). All three draw from the same distribution.
    """
    K = n_topics
    n_chunks = chunks.shape[0] - 1
    for c in prange(n_chunks):
        scratch = np.zeros(K, np.int32)
        touched = np.empty(K + 1, np.int32)
        dinv = np.empty(K, np.float64)
        cum = np.empty(K, np.float64)
        rcum = np.empty(K, np.float64)
        dd = np.zeros(K, np.float64)
        for m in range(chunks[c], chunks[c + 1]):
            st = stream(seed, iteration, doc_offset + m)
            base = dptr[m]
            nz = dnnz_r[m]
            R = 0.0
            for j in range(nz):
                k = dtop_r[base + j]
                dinv[j] = dcnt_r[base + j] * invT[k]
                dd[k] = dcnt_r[base + j]
                R += dinv[j] * beta
                rcum[j] = R
            nt = 0
            for e in range(indptr[m], indptr[m + 1]):
                v = indices[e]
                row = v * K
                wo = wptr[v]
                wn = wptr[v + 1] - wo
                if mode == 2 or (mode == 0 and wn <= nz):
                    # word bucket over nnz(W_v), document bucket, smoothing bucket
                    Q = 0.0
                    for i in range(wn):
                        Q += (dd[wtop[wo + i]] + alpha) * wcoef[wo + i]
                        cum[i] = Q
                    Z = Q + R + S
                    for _ in range(cnt[e]):
                        st, u = next_uniform(st)
                        u *= Z
                        if u < Q:
                            k = wtop[wo + cdf_scan(cum, wn, u)]
                        elif u - Q < R and nz > 0:
                            k = dtop_r[base + cdf_scan(rcum, nz, u - Q)]
                        else:
                            k = draw_alias_clamped((u - Q - R) / S, s_prob, s_alias, 0, K)
                        nt = count_token(k, scratch, touched, nt, W_w, row, use_atomic)
                    continue
                # eq. 23: document term over nnz(D_m), then the word's alias table, smoothing bucket
                P = 0.0
                for j in range(nz):
                    P += dinv[j] * (W_r[row + dtop_r[base + j]] + beta)
                    cum[j] = P
                wm = wmass[v]
                Z = P + wm + S
                for _ in range(cnt[e]):
                    st, u = next_uniform(st)
                    u *= Z
                    if u < P:
                        k = dtop_r[base + cdf_scan(cum, nz, u)]
                    else:
                        u -= P
                        if u < wm and wn > 0:
                            k = wtop[wo + draw_alias(u / wm, wprob, walias, wo, wn)]
                        else:
                            k = draw_alias_clamped((u - wm) / S, s_prob, s_alias, 0, K)
                    nt = count_token(k, scratch, touched, nt, W_w, row, use_atomic)
            for j in range(nz):
                dd[dtop_r[base + j]] = 0.0
            store_doc_counts(m, base, nt, touched, scratch, dtop_w, dcnt_w, dnnz_w, Tpriv, c)


@njit(parallel=True, cache=True)
def sca_plain_sweep(
    indptr, indices, cnt, chunks, n_topics, alpha, beta, seed, iteration,
    dptr, dtop_r, dcnt_r, dnnz_r, dtop_w, dcnt_w, dnnz_w,
    W_r, W_w, Tpriv, invT, use_atomic, doc_offset=0,
):
    """One plain ("vanilla") SCA iteration (ESCA App. G, Fig. 5): same update rule as
    :func:`esca_sweep`, but each entry's conditional (D_mk + alpha)(W_kv + beta)/(T_k + V beta) is
    formed densely over all K topics and sampled by inverse CDF (binary search): O(K) per entry."""
    K = n_topics
    n_chunks = chunks.shape[0] - 1
    for c in prange(n_chunks):
        scratch = np.zeros(K, np.int32)
        dread = np.zeros(K, np.float64)
        touched = np.empty(K + 1, np.int32)
        cum = np.empty(K, np.float64)
        for m in range(chunks[c], chunks[c + 1]):
            st = stream(seed, iteration, doc_offset + m)
            base = dptr[m]
            nz = dnnz_r[m]
            for j in range(nz):
                dread[dtop_r[base + j]] = dcnt_r[base + j]
            nt = 0
            for e in range(indptr[m], indptr[m + 1]):
                v = indices[e]
                row = v * K
                P = 0.0
                for k in range(K):
                    P += (dread[k] + alpha) * (W_r[row + k] + beta) * invT[k]
                    cum[k] = P
                for _ in range(cnt[e]):
                    st, u = next_uniform(st)
                    k = cdf_search(cum, K, u * P)
                    nt = count_token(k, scratch, touched, nt, W_w, row, use_atomic)
            for j in range(nz):
                dread[dtop_r[base + j]] = 0.0
            store_doc_counts(m, base, nt, touched, scratch, dtop_w, dcnt_w, dnnz_w, Tpriv, c)
