"""ESCA kernels of the word decomposition (the default): one dense topic-word count buffer, written
by the sweep, and a compact read buffer rebuilt from it at the start of each iteration (ESCA Alg. 1
with eq. 20 split in three buckets; dense rows in 8-lane single precision for words with many
topics, int32 rows of their own for heavy words). Layouts and symbols: :mod:`.common`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ....intrinsics import (
    atomic_add,
    column_count_le8,
    count_le16,
    ctz64,
    dense_prefix8,
    popcount64,
    prefetch_read,
    prefetch_write,
    stack_columns8,
)
from ....rng import next_uniform, stream
from ....utils import NO_PARFORS as _NO_PARFORS
from ....utils import parallel_blocks, quiet_no_parfors_warning
from .common import (
    draw_alias_clamped,
    put_count,
    smoothing_bucket,
    sparse_row,
    store_doc_counts,
    word_row_nnz,
)

quiet_no_parfors_warning()

#: entries ahead whose word data the word sweep prefetches (word-table offsets twice as far ahead)
_PREFETCH_AHEAD = 3


def esca_word_nnz(Wd, n_topics, n_words, wptr, bits, kw, use_bits, dslot, dense_min, hslot):
    """Layout of the read buffer of the next sweep from the dense counts ``Wd`` (V x K, word-major).

    A word with at least ``dense_min`` nonzero counts gets a DENSE row (``dslot[v]`` = its row among
    the dense rows, in word order); the others a sparse row of their nonzero topics (``dslot[v]`` =
    -1; ``wptr[v + 1] - wptr[v]`` = its number of nonzero counts, 0 for dense words). A heavy word
    (``hslot[v]`` = h >= 0: its counts live in int32 rows of their own, see :func:`esca_word_tables`)
    always reads a dense row of those: ``dslot[v]`` = -2 - h. Returns (nnz of the sparse rows,
    number of dense rows of ``Wd``).

    With ``use_bits`` the counts are not scanned: the bitmap ``bits`` that :func:`esca_word_sweep`
    keeps with ``track`` (bit k of word v's ``kw`` 64-bit words set iff W_kv > 0) gives them by
    popcount, O(V kw) instead of O(V K)."""
    parallel_blocks(_nnz_rows, n_words, Wd, n_topics, wptr, bits, kw, use_bits, hslot)
    return _nnz_layout(n_words, wptr, dslot, dense_min, hslot)


@njit(nogil=True, cache=True)
def _nnz_rows(v_lo, v_hi, Wd, K, wptr, bits, kw, use_bits, hslot):
    """Nonzero counts of the words v_lo..v_hi - 1 into ``wptr[v + 1]`` (a block of :func:`esca_word_nnz`)."""
    for v in range(v_lo, v_hi):
        n = 0
        if hslot[v] >= 0:
            pass  # a heavy word's row of Wd is never written
        elif use_bits:
            for j in range(kw):
                n += popcount64(bits[v * kw + j])
        else:
            n = word_row_nnz(Wd, K, v)
        wptr[v + 1] = n


@njit(nogil=True, cache=True)
def _nnz_layout(V, wptr, dslot, dense_min, hslot):
    """The slots and offsets of :func:`esca_word_nnz` from the per-word counts in ``wptr[1:]``."""
    wptr[0] = 0
    nd = 0
    for v in range(V):
        n = wptr[v + 1]
        if hslot[v] >= 0:
            dslot[v] = -2 - hslot[v]
            n = 0
        elif n >= dense_min:
            dslot[v] = nd
            nd += 1
            n = 0
        else:
            dslot[v] = -1
        wptr[v + 1] = wptr[v] + n
    return wptr[V], nd


@njit(nogil=True, cache=True)
def _insertion_sort_desc(wcoef, wtop, lo, hi):
    """Stable insertion sort of wcoef[lo:hi] (and wtop with it) by decreasing coefficient."""
    for i in range(lo + 1, hi):
        x = wcoef[i]
        t = wtop[i]
        j = i - 1
        while j >= lo and wcoef[j] < x:
            wcoef[j + 1] = wcoef[j]
            wtop[j + 1] = wtop[j]
            j -= 1
        wcoef[j + 1] = x
        wtop[j + 1] = t


@njit(nogil=True, cache=True)
def _sort_row_desc(wcoef, wtop, o, n):
    """Stable sort of wcoef[o:o+n] (and wtop with it) by decreasing coefficient: insertion sorts of runs of
    32, then bottom-up merges (a stable sort's order is unique, so this is the order of NumPy's stable argsort
    of -wcoef; written out because Numba's argsort compiles for about 2 s, a cost every first call paid)."""
    run = 32
    for lo in range(o, o + n, run):
        _insertion_sort_desc(wcoef, wtop, lo, min(lo + run, o + n))
    if n <= run:
        return
    tc = np.empty(n, wcoef.dtype)
    tt = np.empty(n, wtop.dtype)
    width = run
    while width < n:
        # merge the sorted runs [a, a + width) and [a + width, a + 2 width) of the row into tc / tt
        for a in range(0, n, 2 * width):
            mid = min(a + width, n)
            end = min(a + 2 * width, n)
            i = a
            j = mid
            for q in range(a, end):
                # take the left run's element unless the right one is strictly larger (stability)
                if j >= end or (i < mid and wcoef[o + i] >= wcoef[o + j]):
                    tc[q] = wcoef[o + i]
                    tt[q] = wtop[o + i]
                    i += 1
                else:
                    tc[q] = wcoef[o + j]
                    tt[q] = wtop[o + j]
                    j += 1
        for q in range(n):
            wcoef[o + q] = tc[q]
            wtop[o + q] = tt[q]
        width *= 2


def esca_word_tables(Wd, T, n_topics, n_words, alpha, beta, invT, s_prob, s_alias, s_work, wptr, wtop, wcoef,
                     bits, kw, use_bits, dslot, Wdn, Kp, Wh, Whn):
    """Read buffer of one ESCA iteration in the word decomposition, built from the dense counts
    ``Wd`` of the previous iteration, which are then ZEROED (``Wd`` becomes the write buffer).
    Shares the smoothing bucket and the sparse rows with :func:`.esca.esca_tables` (the tables of the
    two-buffer sweep, which keep the counts and the topic order and build per-word alias tables).

    Fills invT_k = 1/(T_k + V beta), the alias table of the smoothing bucket alpha beta invT_k
    (``s_*``; returns its mass S) and, per word, its read row in the layout of
    :func:`esca_word_nnz`. A dense word (``dslot[v]`` = d >= 0) gets a copy of its K counts in
    ``Wdn[d Kp : d Kp + K]`` (zero-padded to ``Kp``, a multiple of 8); a heavy word (``dslot[v]`` =
    -2 - h) likewise from its int32 write row ``Wh[h K :]`` into ``Whn[h Kp :]``, zeroing ``Wh``.
    A sparse word (offsets ``wptr``) gets its nonzero topics ``wtop`` with coefficients ``wcoef`` =
    W_kv invT_k, sorted by decreasing coefficient (stable, so the order does not depend on the
    thread count): the draw's linear search then stops early. The nonzero counts are found by a
    scan of all V x K counts, or, with ``use_bits``, through the bitmap of :func:`esca_word_sweep`
    (cleared on the way): O(V kw + nnz(W)) instead of O(V K). Both visit a row's topics in
    increasing order, so both give the same tables. Plus O(nnz(W) log) for the sort.
    """
    S = smoothing_bucket(T, n_topics, n_words, alpha, beta, invT, s_prob, s_alias, s_work)
    parallel_blocks(_table_rows, n_words, Wd, n_topics, invT, wptr, wtop, wcoef, bits, kw, use_bits, dslot, Wdn, Kp,
                    Wh, Whn)
    return S


@njit(nogil=True, cache=True)
def _table_rows(v_lo, v_hi, Wd, K, invT, wptr, wtop, wcoef, bits, kw, use_bits, dslot, Wdn, Kp, Wh, Whn):
    """The read rows of the words v_lo..v_hi - 1 (a block of :func:`esca_word_tables`)."""
    for v in range(v_lo, v_hi):
        d = dslot[v]
        if d <= -2:
            h = -2 - d
            for k in range(K):
                Whn[h * Kp + k] = Wh[h * K + k]
                Wh[h * K + k] = 0
            for k in range(K, Kp):
                Whn[h * Kp + k] = 0
            continue
        if d >= 0:
            src = Wd[v * K: v * K + K]
            dst = Wdn[d * Kp: d * Kp + Kp]
            for k in range(K):
                dst[k] = src[k]
            for k in range(K):
                src[k] = 0
            for k in range(K, Kp):
                dst[k] = 0
            if use_bits:
                for j in range(kw):
                    bits[v * kw + j] = 0
            continue
        o = wptr[v]
        n = np.int64(0)  # not the literal 0: a literal would compile _sort_row_desc a second time
        if use_bits:
            for j in range(kw):
                x = bits[v * kw + j]
                if x == 0:
                    continue
                bits[v * kw + j] = 0
                while x != 0:
                    k = j * 64 + ctz64(x)
                    x &= x - np.uint64(1)
                    put_count(Wd, v * K + k, k, invT, wtop, wcoef, o + n, True)
                    n += 1
        else:
            n = sparse_row(Wd, v * K, K, invT, wtop, wcoef, o, True)
        if n > 1:
            _sort_row_desc(wcoef, wtop, o, n)


@njit(inline="always", cache=True)
def _count_token_tracked(k, scratch, Ww, row, use_atomic, track, bits, v, kw):
    """Count a token drawn into topic k: in the document's dense new counts ``scratch`` (its list of topics is
    made after its last token, :func:`_list_doc_topics`) and in the word's write row ``Ww[row :]``; with
    ``track`` (single-threaded sweeps) the first count of (v, k) in this sweep sets bit k of word v's row of
    ``bits`` (``kw`` 64-bit words per row)."""
    # unsigned indices (all are >= 0): no wraparound arithmetic for negative indices on the token's chain
    ku = np.uint64(k)
    i = np.uint64(row) + ku
    scratch[ku] += 1
    if use_atomic:
        atomic_add(Ww, i, 1)
    else:
        old = Ww[i]
        Ww[i] = old + 1
        if track:  # the first count of (v, k) in this sweep marks it (without a branch on the count)
            bits[np.uint64(v * kw) + (ku >> np.uint64(6))] |= np.uint64(old == 0) << (ku & np.uint64(63))


@njit(inline="always", cache=True)
def _list_doc_topics(scratch, touched, K):
    """The topics with a nonzero count in ``scratch``, in increasing order, into ``touched`` (K + 1 entries;
    branch-free: every topic is written and kept only when counted); returns how many. Once per document,
    after its tokens: a list kept token by token (a store whose position waits on the previous token's count)
    cost about 8 ns a dense entry on the Wikipedia sample at K = 100 (frozen-state ablation); at K = 1000 the
    scan of 1,000 counts a document measured as fast as the list on 20 Newsgroups and the Wikipedia sample."""
    nt = 0
    for k in range(K):
        touched[nt] = k
        nt += scratch[k] != 0
    return nt


@njit(inline="always", cache=True)
def _stacked_row(ddf, src, off, pf, bsum, nrow, fbeta):
    """The first half of :func:`_dense_entry`'s one-count draw (K <= 128): the dense row's running sums over all
    topics in column-major order into ``pf``; returns their float32 total."""
    dense_prefix8(ddf, src, off, pf, bsum, nrow, fbeta)
    return stack_columns8(pf, bsum, nrow)


@njit(inline="always", cache=True)
def _one_count_draws(n_tok, st, pf, Zs, ktab, nrow, scratch, Ww, row, use_atomic, track, bits, v, kw):
    """The second half of :func:`_dense_entry`'s one-count draw: the ``n_tok`` tokens drawn from the stacked row
    ``pf`` of total ``Zs`` (:func:`_stacked_row`) and counted. Returns the stream."""
    # the largest target below the total: the first running sum above it is a topic of positive weight
    cap = Zs * np.float32(1.0 - 2.0**-24)  # (a positive normal total times 1 - 2^-24 rounds to the float below it)
    nvec = (nrow + 1) >> 1  # an odd last row is compared with the +inf row after it
    last = 8 * nrow - 1
    for _ in range(n_tok):
        st, u = next_uniform(st)
        n = count_le16(pf, nvec, min(np.float32(u) * Zs, cap))
        if n > last:  # only for an infinite total (overflowed weights): every finite sum is then <= the target
            n = last
        _count_token_tracked(ktab[np.uint64(n)], scratch, Ww, row, use_atomic, track, bits, v, kw)
    return st


@njit(inline="always", cache=True)
def _dense_entry(n_tok, st, ddf, src, off, pf, bsum, bcum, ktab, nrow, fbeta, K, jmax, scratch, Ww, row, use_atomic,
                 track, bits, v, kw):
    """Draw the ``n_tok`` tokens of one (document, word) entry from a DENSE read row (counts
    ``src[off : off + Kp]``, uint16 or int32) and count them into ``Ww[row :]``: the whole conditional
    p_k = [(D_mk + alpha) invT_k] (W_kv + beta) in <8 x float32> code, topics k = 8 r + j forming column j,
    stored as running sums down each column (:func:`scalable_bayes.intrinsics.dense_prefix8`; ``pf`` holds
    8 more rows of +inf after them). For more than 16 rows (K > 128), per token: inverse CDF over the eight
    column sums (in double precision), then the row: the first r whose running sum in column j exceeds what is
    left of the uniform, found by COUNTING the running sums at or below it (they do not decrease down a column;
    :func:`scalable_bayes.intrinsics.column_count_le8`), first the last rows of blocks of 8 rows, then the 8
    rows of one block. No data-dependent branch and no chain of dependent additions: the former walk down the
    column added the weights one by one and stopped at the crossing, a branch mispredicted about once per
    token; without it an ESCA iteration on the Wikipedia sample at K = 100 took about a quarter less time.

    For up to 16 rows (K <= 128) the column and the row are found in ONE count: the column sums are stacked
    (:func:`scalable_bayes.intrinsics.stack_columns8`: ``pf`` then holds the running sums over all topics in
    column-major order, in single precision, not decreasing), and the number of them at or below the target,
    counted sixteen at a time (:func:`scalable_bayes.intrinsics.count_le16`), is the topic's position in that
    order; ``ktab`` maps a position to its topic (column ``n // nrow``, row ``n % nrow``). The target is taken in
    single precision too, the uniform rounded to float32 times the float32 total (capped just below it), so
    every comparison is one of two floats: the probabilities are those of the float32 running sums to within
    float32 rounding (as the float32 weights themselves). The same order as the column-then-row search, the same
    distribution to that precision; a draw differs from it only where the target falls within a rounding of a
    boundary. Returns the stream."""
    if nrow <= 16:
        Zs = _stacked_row(ddf, src, off, pf, bsum, nrow, fbeta)
        return _one_count_draws(n_tok, st, pf, Zs, ktab, nrow, scratch, Ww, row, use_atomic, track, bits, v, kw)
    dense_prefix8(ddf, src, off, pf, bsum, nrow, fbeta)
    Z = 0.0
    for j in range(8):
        Z += bsum[j]
        bcum[j] = Z
    for _ in range(n_tok):
        st, u = next_uniform(st)
        u *= Z
        # column: number of running column sums <= u (branch-free)
        j = 0
        for jj in range(7):
            j += bcum[jj] <= u
        if j > jmax:
            j = jmax
        # row: how many running sums of column j are <= the rest of u, by the last rows of blocks of 8, then the
        # rows of one block (8 more rows of +inf: no bound check)
        up = u - (bcum[j] - bsum[j])
        r = 8 * column_count_le8(pf, 7, nrow >> 3, 8, up, j)
        r += column_count_le8(pf, r, 8, 1, up, j)
        rmax = (K - 1 - j) >> 3
        if r > rmax:
            r = rmax
        _count_token_tracked(r * 8 + j, scratch, Ww, row, use_atomic, track, bits, v, kw)
    return st


def esca_word_sweep(
    indptr, indices, cnt, chunks, n_topics, alpha, beta, seed, iteration,
    dptr, dtop, dcnt, dnnz, Ww, Tpriv, invT, s_prob, s_alias, S, wptr, wtop, wcoef, use_atomic, bits, kw, track,
    dslot, Wdn, Kp, Wh, Whn, doc_offset=0, Wx=None,
):
    """One ESCA iteration (Alg. 1, eq. 20) in the three-bucket decomposition of the frozen conditional

        p(k) propto (D_mk + alpha) W_kv invT_k  +  D_mk beta invT_k  +  alpha beta invT_k

    (word bucket over the word's nonzero topics from the sparse read buffer of
    :func:`esca_word_tables`; document bucket over the document's nonzero topics, computed once per
    document; smoothing bucket from one alias table of K) for a word with a sparse read row; for a
    word with a dense read row (``dslot[v]`` = d >= 0: its counts in ``Wdn[d Kp :]``) the whole
    conditional p_k = [(D_mk + alpha) invT_k] (W_kv + beta) in single precision, eight topics per
    vector instruction (:func:`scalable_bayes.intrinsics.dense_prefix8`), drawn by inverse CDF over its
    running sums (:func:`_dense_entry`: for K <= 128 one count over all topics in column-major order, made in
    two halves so that a dense entry's running sums are made before the previous dense entry's tokens are
    drawn; for larger K the column by the eight column sums, then the row in it). A heavy word
    (``dslot[v]`` = -2 - h) is drawn the same way from its int32 read row ``Whn[h Kp :]`` and counted
    into its int32 write row ``Wh[h K :]``. The read counts are those of the previous iteration; drawn
    topics are counted into the zeroed dense ``Ww`` / ``Wh`` (atomic adds when ``use_atomic``) and
    ``Tpriv`` (one row per chunk).

    The document-topic counts are updated IN PLACE: document m's counts are read only by document
    m, so they are read whole (into a dense scratch) before its tokens are drawn and overwritten with
    the new counts after its last token: identical to the paper's double buffer, at half the memory.
    All tokens of one (document, word) entry are drawn from one computed distribution. Document m
    draws from the stream (seed, iteration, m): results do not depend on the thread count. The word
    data of entries a few positions ahead are prefetched (a hint; no effect on the draws).

    ``Wx`` (n_chunks - 1, V K), optional: write buffers of their own for chunks 1, 2, ..., which then count with
    plain increments (chunk 0 into ``Ww``); :func:`merge_write_buffers` adds them into ``Ww`` after the sweep.
    Without (the default, or zero rows), every chunk counts into ``Ww``.

    With ``track`` (single-chunk sweeps only: it is ignored with ``use_atomic``), the first
    increment of each (word, topic) count sets bit k of word v's row of the bitmap ``bits`` (``kw``
    64-bit words per row), so that the next iteration's read buffer is built from the nonzero counts
    alone (``use_bits`` of :func:`esca_word_nnz` / :func:`esca_word_tables`).
    """
    if Wx is None:
        Wx = np.zeros((0, 1), Ww.dtype)
    parallel_blocks(_sweep_chunks, chunks.shape[0] - 1, indptr, indices, cnt, chunks, n_topics, alpha, beta, seed,
                    iteration, dptr, dtop, dcnt, dnnz, Ww, Wx, Tpriv, invT, s_prob, s_alias, S, wptr, wtop, wcoef,
                    use_atomic, bits, kw, track, dslot, Wdn, Kp, Wh, Whn, doc_offset)




@njit(nogil=True, cache=True, parallel=_NO_PARFORS)
def _sweep_chunks(c_lo, c_hi, indptr, indices, cnt, chunks, n_topics, alpha, beta, seed, iteration, dptr, dtop, dcnt,
                  dnnz, Wshared, Wx, Tpriv, invT, s_prob, s_alias, S, wptr, wtop, wcoef, use_atomic, bits, kw, track,
                  dslot, Wdn, Kp, Wh, Whn, doc_offset):
    """The chunks c_lo..c_hi - 1 of :func:`esca_word_sweep` (chunk c: the documents ``chunks[c]`` to
    ``chunks[c + 1] - 1``)."""
    K = n_topics
    PF = _PREFETCH_AHEAD
    for c in range(c_lo, c_hi):
        # chunk c > 0 counts into a write buffer of its own when there are any (plain increments), else into the
        # shared one (atomic adds when several chunks run)
        own = Wx.shape[0] > 0
        Ww = Wx[c - 1] if own and c > 0 else Wshared
        atomic = use_atomic and not own
        scratch = np.zeros(K, np.int32)
        touched = np.empty(K + 1, np.int32)
        rcum = np.empty(K, np.float64)
        dda = np.full(K, alpha, np.float64)
        p = np.empty(K, np.float64)
        # dense rows: ddf_k = (D_mk + alpha) invT_k (alpha invT_k off the document's topics, 0 on the
        # padding), products and column sums / their running sums
        ddf = np.zeros(Kp, np.float32)
        for k in range(K):
            ddf[k] = alpha * invT[k]
        # running column sums of a dense row, then 8 rows of +inf: a row search counts 8 rows from any block
        # start without a bound check (the padding never counts)
        pf = np.full(Kp + 64, np.inf, np.float32)
        # K <= 128: a dense entry's stacked row is made while the tokens of the dense entry before it are still to
        # be drawn (two row buffers; the draws keep the entries' order, so the same draws): the next entry's vector
        # work then overlaps the previous entry's chain of dependent steps (uniform, count, table, counts)
        pf2 = np.full(Kp + 64, np.inf, np.float32)
        bsum = np.empty(8, np.float32)
        bcum = np.empty(8, np.float64)
        nrow = Kp >> 3
        one_count = nrow <= 16  # K <= 128: _dense_entry's one-count draw
        fbeta = np.float32(beta)
        jmax = min(7, K - 1)
        # position in the column-major order of a dense row (column n // nrow, row n % nrow) -> topic; positions
        # past a column's last topic (and columns past K - 1 when K < 8) map to the last topic before them
        ktab = np.empty(8 * nrow, np.int64)
        for n in range(8 * nrow):
            jj = min(n // nrow, jmax)
            ktab[n] = min(n % nrow, (K - 1 - jj) >> 3) * 8 + jj
        pf_step = max(1, 64 // Wdn.itemsize)  # elements per 64-byte cache line of a dense row
        pf_step_h = max(1, 64 // Whn.itemsize)
        # write rows of dense words up to 8 cache lines are prefetched whole (2-6% less CPU per token on 20
        # Newsgroups at K = 100, paired, the same draws), longer ones at their first line
        wpf_step = max(1, 64 // Ww.itemsize)
        wpf_len = K if K * Ww.itemsize <= 512 else 1
        e_end = indptr[chunks[c + 1]]
        for m in range(chunks[c], chunks[c + 1]):
            st = stream(seed, iteration, doc_offset + m)
            base = dptr[m]
            nz = dnnz[m]
            # the dense entry whose row is made and whose tokens are not yet drawn: its row's buffer (0: pf,
            # 1: pf2), its tokens, word and total
            pend = False
            pb = 0
            pn = 0
            pv = 0
            pZ = np.float32(0.0)
            R = 0.0
            for j in range(nz):
                k = np.uint64(dtop[np.uint64(base + j)])
                dk = dcnt[np.uint64(base + j)]
                dda[k] = dk + alpha
                ddf[k] = (dk + alpha) * invT[k]
                R += dk * invT[k] * beta
                rcum[np.uint64(j)] = R
            for e in range(indptr[m], indptr[m + 1]):
                if e + 2 * PF < e_end:
                    prefetch_read(wptr, indices[np.uint64(e + 2 * PF)])
                if e + PF < e_end:
                    v2 = indices[np.uint64(e + PF)]
                    d2 = dslot[np.uint64(v2)]
                    if d2 >= 0:
                        for q in range(0, Kp, pf_step):
                            prefetch_read(Wdn, d2 * Kp + q)
                        # the drawn topic of a dense row can be any: its whole write row when short
                        for q in range(0, wpf_len, wpf_step):
                            prefetch_write(Ww, v2 * K + q)
                    elif d2 <= -2:
                        for q in range(0, Kp, pf_step_h):
                            prefetch_read(Whn, (-2 - d2) * Kp + q)
                        prefetch_write(Wh, (-2 - d2) * K)
                    else:
                        o2 = wptr[np.uint64(v2)]
                        if wptr[np.uint64(v2) + np.uint64(1)] > o2:
                            prefetch_read(wcoef, o2)
                            prefetch_read(wtop, o2)
                            prefetch_write(Ww, v2 * K + wtop[np.uint64(o2)])
                # indices as uint64 here and below (all are >= 0): a signed index costs the arithmetic for negative
                # indices at every load (1-thread iteration 7% less time on 20 Newsgroups at K = 100, 11% at K = 1000)
                eu = np.uint64(e)
                v = indices[eu]
                row = v * K
                d = dslot[np.uint64(v)]
                piped = one_count and d >= 0
                if piped:  # this entry's row, into the buffer the pending entry does not use
                    Z1 = _stacked_row(ddf, Wdn, d * Kp, pf if pb == 1 else pf2, bsum, nrow, fbeta)
                if pend:  # the pending entry's tokens, before this entry's
                    st = _one_count_draws(pn, st, pf if pb == 0 else pf2, pZ, ktab, nrow, scratch, Ww, pv * K,
                                          atomic, track, bits, pv, kw)
                    pend = False
                if piped:
                    pend = True
                    pb = 1 - pb
                    pn = cnt[eu]
                    pv = v
                    pZ = Z1
                    continue
                if d >= 0:
                    st = _dense_entry(cnt[eu], st, ddf, Wdn, d * Kp, pf, bsum, bcum, ktab, nrow, fbeta, K, jmax,
                                      scratch, Ww, row, atomic, track, bits, v, kw)
                    continue
                if d <= -2:
                    h = -2 - d
                    st = _dense_entry(cnt[eu], st, ddf, Whn, h * Kp, pf, bsum, bcum, ktab, nrow, fbeta, K, jmax,
                                      scratch, Wh, h * K, use_atomic, False, bits, v, kw)
                    continue
                wo = wptr[np.uint64(v)]
                wn = wptr[np.uint64(v) + np.uint64(1)] - wo
                # word-bucket weights, four independent partial sums (no loop-carried add chain)
                q0 = 0.0
                q1 = 0.0
                q2 = 0.0
                q3 = 0.0
                i = 0
                while i + 4 <= wn:
                    j0 = np.uint64(wo + i)
                    iu = np.uint64(i)
                    x0 = dda[wtop[j0]] * wcoef[j0]
                    x1 = dda[wtop[j0 + np.uint64(1)]] * wcoef[j0 + np.uint64(1)]
                    x2 = dda[wtop[j0 + np.uint64(2)]] * wcoef[j0 + np.uint64(2)]
                    x3 = dda[wtop[j0 + np.uint64(3)]] * wcoef[j0 + np.uint64(3)]
                    p[iu] = x0
                    p[iu + np.uint64(1)] = x1
                    p[iu + np.uint64(2)] = x2
                    p[iu + np.uint64(3)] = x3
                    q0 += x0
                    q1 += x1
                    q2 += x2
                    q3 += x3
                    i += 4
                while i < wn:
                    j0 = np.uint64(wo + i)
                    x0 = dda[wtop[j0]] * wcoef[j0]
                    p[np.uint64(i)] = x0
                    q0 += x0
                    i += 1
                Q = (q0 + q1) + (q2 + q3)
                Z = Q + R + S
                for _ in range(cnt[eu]):
                    st, u = next_uniform(st)
                    u *= Z
                    if u < Q:
                        # linear search, four weights per step while the target lies further on
                        acc = 0.0
                        i = 0
                        while i + 4 < wn:
                            iu = np.uint64(i)
                            s4 = (p[iu] + p[iu + np.uint64(1)]) + (p[iu + np.uint64(2)] + p[iu + np.uint64(3)])
                            if acc + s4 > u:
                                break
                            acc += s4
                            i += 4
                        while i < wn - 1:
                            acc += p[np.uint64(i)]
                            if acc > u:
                                break
                            i += 1
                        k = wtop[np.uint64(wo + i)]
                    elif u - Q < R and nz > 0:
                        u -= Q
                        # first j with rcum[j] > u: linear scan over few topics, else binary search
                        # (written out as in the measured version; common.cdf_scan / cdf_search draw the
                        # same topics)
                        lo = 0
                        if nz <= 32:
                            while lo < nz - 1 and rcum[np.uint64(lo)] <= u:
                                lo += 1
                        else:
                            hi = nz - 1
                            while lo < hi:
                                mid = (lo + hi) >> 1
                                if rcum[np.uint64(mid)] <= u:
                                    lo = mid + 1
                                else:
                                    hi = mid
                        k = dtop[np.uint64(base + lo)]
                    else:
                        k = draw_alias_clamped((u - Q - R) / S, s_prob, s_alias, 0, K)
                    _count_token_tracked(k, scratch, Ww, row, atomic, track, bits, v, kw)
            if pend:  # the document's last dense entry
                st = _one_count_draws(pn, st, pf if pb == 0 else pf2, pZ, ktab, nrow, scratch, Ww, pv * K, atomic,
                                      track, bits, pv, kw)
            for j in range(nz):
                k = np.uint64(dtop[np.uint64(base + j)])
                dda[k] = alpha
                ddf[k] = alpha * invT[k]
            store_doc_counts(m, base, _list_doc_topics(scratch, touched, K), touched, scratch, dtop, dcnt, dnnz, Tpriv,
                             c)


def merge_write_buffers(W, Wx):
    """``W += Wx[0] + Wx[1] + ...`` and ``Wx`` zeroed: the counts that the sweep's chunks wrote into write buffers of
    their own (:func:`esca_word_sweep`'s ``Wx``), added to the shared buffer, in parallel blocks of the V K
    counts. Integer sums: the same counts whatever the order."""
    if Wx.shape[0]:
        parallel_blocks(_merge_rows, W.shape[0], W, Wx)


@njit(nogil=True, cache=True)
def _merge_rows(lo, hi, W, Wx):
    for c in range(Wx.shape[0]):
        for i in range(lo, hi):
            W[i] += Wx[c, i]
            Wx[c, i] = 0
