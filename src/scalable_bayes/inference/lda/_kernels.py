"""Numba kernels of the LDA engines (ESCA, plain SCA, CGS, CVB0).

Pure functions: arrays and scalars in, arrays out (or arrays filled in place where the caller owns
the buffers). No I/O, no globals. Corpus layout everywhere: CSR of one document per row,
``indptr`` (int64, M+1), ``indices`` (int32 word ids), ``cnt`` (int32 counts of the (doc, word)
entry). Topic-word counts are stored word-major and flat: ``W[v * K + k]`` (int32), so the K counts
of one word are contiguous.

Symbols (ESCA paper, Sec. 3): D_mk document-topic counts, W_kv topic-word counts, T_k topic totals,
alpha (doc_topic_prior), beta (topic_word_prior), V vocabulary size.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic
from llvmlite import ir

from ._rng import next_uniform, stream


@intrinsic
def atomic_add(typingctx, arr, idx, val):
    """``arr[idx] += val`` as one atomic read-modify-write (1-D contiguous integer array; ``val`` is
    cast to the array's dtype)."""
    if not isinstance(arr, types.Array) or arr.ndim != 1 or not isinstance(val, types.Integer):
        return None
    sig = types.void(arr, types.intp, val)

    def codegen(context, builder, sig, args):
        arrty = sig.args[0]
        ary = context.make_array(arrty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, arrty, ary, [args[1]], wraparound=False)
        v = context.cast(builder, args[2], sig.args[2], arrty.dtype)
        builder.atomic_rmw("add", ptr, v, "monotonic")
        return context.get_dummy_value()

    return sig, codegen


def _make_bit_intrinsic(name):
    @intrinsic
    def bitop(typingctx, x):
        if not isinstance(x, types.Integer) or x.bitwidth != 64:
            return None
        sig = types.int64(x)

        def codegen(context, builder, sig, args):
            i64 = ir.IntType(64)
            if name == "ctpop":
                fnty = ir.FunctionType(i64, [i64])
                fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.ctpop.i64")
                return builder.call(fn, [args[0]])
            fnty = ir.FunctionType(i64, [i64, ir.IntType(1)])
            fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.cttz.i64")
            return builder.call(fn, [args[0], ir.Constant(ir.IntType(1), 0)])

        return sig, codegen

    return bitop


#: number of set bits of a 64-bit integer
popcount64 = _make_bit_intrinsic("ctpop")
#: index of the lowest set bit of a 64-bit integer (64 for 0)
ctz64 = _make_bit_intrinsic("cttz")


def _make_prefetch(rw):
    @intrinsic
    def prefetch(typingctx, arr, idx):
        if not isinstance(arr, types.Array) or arr.ndim != 1:
            return None
        sig = types.void(arr, types.intp)

        def codegen(context, builder, sig, args):
            arrty = sig.args[0]
            ary = context.make_array(arrty)(context, builder, args[0])
            ptr = cgutils.get_item_pointer(context, builder, arrty, ary, [args[1]], wraparound=False)
            i8p = ir.PointerType(ir.IntType(8))
            i32 = ir.IntType(32)
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                                "llvm.prefetch.p0")
            builder.call(fn, [builder.bitcast(ptr, i8p), i32(rw), i32(3), i32(1)])
            return context.get_dummy_value()

        return sig, codegen

    return prefetch


#: software prefetch of ``arr[idx]`` into all cache levels, for reading / for writing (a hint: no
#: effect on results; the index must lie inside the array)
prefetch_read = _make_prefetch(0)
prefetch_write = _make_prefetch(1)


@intrinsic
def dense_row8(typingctx, ddf, cnt, off, pf, bsum, nrow, beta):
    """Dense word row of the ESCA conditional in <8 x float32> vector code:
    ``pf[8 r + j] = ddf[8 r + j] * (cnt[off + 8 r + j] + beta)`` for r < nrow, j < 8, and the eight
    column sums ``bsum[j] = sum_r pf[8 r + j]``. ``ddf`` / ``pf`` / ``bsum`` float32, ``cnt`` uint16
    or int32 counts (1-D contiguous; the caller guarantees 8 nrow elements from ``off``)."""
    if not (isinstance(ddf, types.Array) and ddf.dtype == types.float32 and isinstance(cnt, types.Array)
            and cnt.dtype in (types.uint16, types.int32) and isinstance(pf, types.Array)
            and pf.dtype == types.float32 and isinstance(bsum, types.Array) and bsum.dtype == types.float32):
        return None
    sig = types.void(ddf, cnt, types.intp, pf, bsum, types.intp, types.float32)

    def codegen(context, builder, sig, args):
        a_ddf, a_cnt, a_off, a_pf, a_bsum, a_nrow, a_beta = args
        v8f = ir.VectorType(ir.FloatType(), 8)
        unsigned = sig.args[1].dtype == types.uint16
        ity = ir.IntType(16 if unsigned else 32)
        v8i = ir.VectorType(ity, 8)
        ddf_p = context.make_array(sig.args[0])(context, builder, a_ddf).data
        cnt_p = builder.gep(context.make_array(sig.args[1])(context, builder, a_cnt).data, [a_off])
        pf_p = context.make_array(sig.args[3])(context, builder, a_pf).data
        bs_p = context.make_array(sig.args[4])(context, builder, a_bsum).data
        bvec = ir.Constant(v8f, ir.Undefined)
        for j in range(8):
            bvec = builder.insert_element(bvec, a_beta, ir.IntType(32)(j))
        acc = cgutils.alloca_once_value(builder, ir.Constant(v8f, [0.0] * 8))
        with cgutils.for_range(builder, a_nrow) as loop:
            o = builder.mul(loop.index, ir.IntType(64)(8))
            c = builder.load(builder.bitcast(builder.gep(cnt_p, [o]), v8i.as_pointer()), align=ity.width // 8)
            cf = builder.uitofp(c, v8f) if unsigned else builder.sitofp(c, v8f)
            d = builder.load(builder.bitcast(builder.gep(ddf_p, [o]), v8f.as_pointer()), align=4)
            x = builder.fmul(d, builder.fadd(cf, bvec))
            builder.store(x, builder.bitcast(builder.gep(pf_p, [o]), v8f.as_pointer()), align=4)
            builder.store(builder.fadd(builder.load(acc), x), acc)
        builder.store(builder.load(acc), builder.bitcast(bs_p, v8f.as_pointer()), align=4)
        return context.get_dummy_value()

    return sig, codegen


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


# ----------------------------------------------------------------------------------------------
# ESCA: initialisation, per-iteration tables, one sweep (Algorithm 1, eqs. 20 and 23)
# ----------------------------------------------------------------------------------------------


@njit(parallel=True, cache=True)
def esca_init(indptr, indices, cnt, chunks, n_topics, seed, dptr, dtop, dcnt, dnnz, W, Tpriv, hslot, Wh,
              doc_offset=0):
    """Uniform random initial topics (Alg. 1, t = 0); fills D (sparse), W (atomic adds), Tpriv.
    A heavy word (``hslot[v]`` = h >= 0) is counted in its own int32 row ``Wh[h K : (h + 1) K]``
    instead of W. ``doc_offset``: global index of local document 0 (keys the random streams of a
    shard)."""
    K = n_topics
    n_chunks = chunks.shape[0] - 1
    for c in prange(n_chunks):
        scratch = np.zeros(K, np.int32)
        touched = np.empty(K, np.int32)
        for m in range(chunks[c], chunks[c + 1]):
            st = stream(seed, 0, doc_offset + m)
            nt = 0
            for e in range(indptr[m], indptr[m + 1]):
                v = indices[e]
                h = hslot[v]
                for _ in range(cnt[e]):
                    st, u = next_uniform(st)
                    k = int(u * K)
                    if k >= K:
                        k = K - 1
                    if scratch[k] == 0:
                        touched[nt] = k
                        nt += 1
                    scratch[k] += 1
                    if h >= 0:
                        atomic_add(Wh, h * K + k, np.int32(1))
                    else:
                        atomic_add(W, v * K + k, np.int32(1))
            base = dptr[m]
            dnnz[m] = nt
            for i in range(nt):
                k = touched[i]
                dtop[base + i] = k
                dcnt[base + i] = scratch[k]
                Tpriv[c, k] += scratch[k]
                scratch[k] = 0


@njit(cache=True)
def _smoothing_bucket(T, K, V, alpha, beta, invT, s_prob, s_alias, s_work):
    """invT_k = 1/(T_k + V beta) and the alias table of the smoothing bucket alpha beta invT_k;
    returns its mass S."""
    Vb = V * beta
    S = 0.0
    sw = np.empty(K, np.float64)
    for k in range(K):
        invT[k] = 1.0 / (T[k] + Vb)
        sw[k] = alpha * beta * invT[k]
        S += sw[k]
    build_alias(sw, S, s_prob, s_alias, s_work)
    return S


@njit(cache=True)
def _word_row_nnz(W, K, v):
    n = 0
    for k in range(K):
        if W[v * K + k] != 0:
            n += 1
    return n


@njit(parallel=True, cache=True)
def esca_tables(W, T, n_topics, n_words, alpha, beta, invT, s_prob, s_alias, s_work, wptr, wtop, wprob, walias, wwork, wmass,
                wcoef, word_alias):
    """Per-iteration draw tables of the dense term alpha (W_kv + beta) / (T_k + V beta).

    The dense term is split into a word-independent smoothing bucket alpha beta / (T_k + V beta)
    (one alias table of K, in ``s_*``) and a word bucket alpha W_kv / (T_k + V beta) over the
    word's nonzero topics only (alias tables in ``w*``, offsets ``wptr``): build cost
    O(K + nnz(W)) instead of O(V K). Returns the smoothing mass S; ``wmass[v]`` the word masses.
    ``wcoef`` receives W_kv / (T_k + V beta) over the same sparse layout (word-bucket coefficients).
    With ``word_alias`` False (word-bucket decomposition only) the per-word alias tables are not
    built and ``wprob``/``walias``/``wwork`` are not touched.
    """
    K = n_topics
    V = n_words
    S = _smoothing_bucket(T, K, V, alpha, beta, invT, s_prob, s_alias, s_work)
    nnz = np.empty(V, np.int64)
    for v in prange(V):
        nnz[v] = _word_row_nnz(W, K, v)
    wptr[0] = 0
    for v in range(V):
        wptr[v + 1] = wptr[v] + nnz[v]
    if wptr[V] > wtop.shape[0]:
        raise ValueError("esca_tables: nnz(W) exceeds the capacity of the word tables")
    for v in prange(V):
        o = wptr[v]
        n = 0
        tot = 0.0
        for k in range(K):
            w = W[v * K + k]
            if w != 0:
                wtop[o + n] = k
                wcoef[o + n] = w * invT[k]
                x = alpha * w * invT[k]
                if word_alias:
                    wprob[o + n] = x
                tot += x
                n += 1
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
        touched = np.empty(K, np.int32)
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
                            i = 0
                            while i < wn - 1 and cum[i] <= u:
                                i += 1
                            k = wtop[wo + i]
                        elif u - Q < R and nz > 0:
                            u -= Q
                            j = 0
                            while j < nz - 1 and rcum[j] <= u:
                                j += 1
                            k = dtop_r[base + j]
                        else:
                            x = (u - Q - R) / S
                            if x >= 1.0:
                                x = 0.9999999999999999
                            if x < 0.0:
                                x = 0.0
                            k = draw_alias(x, s_prob, s_alias, 0, K)
                        if scratch[k] == 0:
                            touched[nt] = k
                            nt += 1
                        scratch[k] += 1
                        if use_atomic:
                            atomic_add(W_w, row + k, np.int32(1))
                        else:
                            W_w[row + k] += 1
                    continue
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
                        j = 0
                        while j < nz - 1 and cum[j] <= u:
                            j += 1
                        k = dtop_r[base + j]
                    else:
                        u -= P
                        if u < wm and wn > 0:
                            i = draw_alias(u / wm, wprob, walias, wo, wn)
                            k = wtop[wo + i]
                        else:
                            u -= wm
                            x = u / S
                            if x >= 1.0:
                                x = 0.9999999999999999
                            if x < 0.0:
                                x = 0.0
                            k = draw_alias(x, s_prob, s_alias, 0, K)
                    if scratch[k] == 0:
                        touched[nt] = k
                        nt += 1
                    scratch[k] += 1
                    if use_atomic:
                        atomic_add(W_w, row + k, np.int32(1))
                    else:
                        W_w[row + k] += 1
            for j in range(nz):
                dd[dtop_r[base + j]] = 0.0
            dnnz_w[m] = nt
            for i in range(nt):
                k = touched[i]
                dtop_w[base + i] = k
                dcnt_w[base + i] = scratch[k]
                Tpriv[c, k] += scratch[k]
                scratch[k] = 0


# ----------------------------------------------------------------------------------------------
# ESCA, word decomposition (the default): one dense count array + a compact sparse read buffer
# ----------------------------------------------------------------------------------------------

#: entries ahead whose word data the word sweep prefetches (word-table offsets twice as far ahead)
_PREFETCH_AHEAD = 3


@njit(parallel=True, cache=True)
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
    K = n_topics
    V = n_words
    for v in prange(V):
        n = 0
        if hslot[v] >= 0:
            pass  # a heavy word's row of Wd is never written
        elif use_bits:
            for j in range(kw):
                n += popcount64(bits[v * kw + j])
        else:
            n = _word_row_nnz(Wd, K, v)
        wptr[v + 1] = n
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


@njit(cache=True)
def _sort_row_desc(wcoef, wtop, o, n):
    """Stable sort of wcoef[o:o+n] (and wtop with it) by decreasing coefficient."""
    if n <= 32:
        for i in range(o + 1, o + n):
            x = wcoef[i]
            t = wtop[i]
            j = i - 1
            while j >= o and wcoef[j] < x:
                wcoef[j + 1] = wcoef[j]
                wtop[j + 1] = wtop[j]
                j -= 1
            wcoef[j + 1] = x
            wtop[j + 1] = t
        return
    order = np.argsort(-wcoef[o:o + n], kind="mergesort")
    tc = wcoef[o:o + n].copy()
    tt = wtop[o:o + n].copy()
    for i in range(n):
        wcoef[o + i] = tc[order[i]]
        wtop[o + i] = tt[order[i]]


@njit(inline="always", cache=True)
def _take_count(Wd, i, k, invT, wtop, wcoef, p):
    """Move the count Wd[i] of topic k into the read buffer at position p (coefficient W_kv invT_k)
    and zero it in ``Wd``."""
    wtop[p] = k
    wcoef[p] = Wd[i] * invT[k]
    Wd[i] = 0


@njit(parallel=True, cache=True)
def esca_word_tables(Wd, T, n_topics, n_words, alpha, beta, invT, s_prob, s_alias, s_work, wptr, wtop, wcoef,
                     bits, kw, use_bits, dslot, Wdn, Kp, Wh, Whn):
    """Read buffer of one ESCA iteration in the word decomposition, built from the dense counts
    ``Wd`` of the previous iteration, which are then ZEROED (``Wd`` becomes the write buffer).

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
    K = n_topics
    V = n_words
    S = _smoothing_bucket(T, K, V, alpha, beta, invT, s_prob, s_alias, s_work)
    for v in prange(V):
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
            for k in range(K):
                Wdn[d * Kp + k] = Wd[v * K + k]
                Wd[v * K + k] = 0
            for k in range(K, Kp):
                Wdn[d * Kp + k] = 0
            if use_bits:
                for j in range(kw):
                    bits[v * kw + j] = 0
            continue
        o = wptr[v]
        n = 0
        if use_bits:
            for j in range(kw):
                x = bits[v * kw + j]
                if x == 0:
                    continue
                bits[v * kw + j] = 0
                while x != 0:
                    k = j * 64 + ctz64(x)
                    x &= x - np.uint64(1)
                    _take_count(Wd, v * K + k, k, invT, wtop, wcoef, o + n)
                    n += 1
        else:
            for k in range(K):
                if Wd[v * K + k] != 0:
                    _take_count(Wd, v * K + k, k, invT, wtop, wcoef, o + n)
                    n += 1
        if n > 1:
            _sort_row_desc(wcoef, wtop, o, n)
    return S


@njit(inline="always", cache=True)
def _count_draw(k, scratch, touched, nt, Ww, row, use_atomic, track, bits, v, kw):
    """Count one token drawn into topic k: the document's new counts (``scratch``, with the list
    ``touched`` of its topics, ``nt`` long; returns the new length) and the write buffer ``Ww``
    (atomic add when ``use_atomic``; with ``track``, the first count of (v, k) sets its bit)."""
    if scratch[k] == 0:
        touched[nt] = k
        nt += 1
    scratch[k] += 1
    if use_atomic:
        atomic_add(Ww, row + k, 1)
    else:
        old = Ww[row + k]
        Ww[row + k] = old + 1
        if track and old == 0:  # first count of (v, k) in this sweep: mark it
            bits[v * kw + (k >> 6)] |= np.uint64(1) << np.uint64(k & 63)
    return nt


@njit(inline="always", cache=True)
def _dense_entry(n_tok, st, ddf, src, off, pf, bsum, bcum, nrow, fbeta, K, jmax, scratch, touched, nt, Ww, row,
                 use_atomic, track, bits, v, kw):
    """Draw the ``n_tok`` tokens of one (document, word) entry from a DENSE read row (counts
    ``src[off : off + Kp]``, uint16 or int32) and count them into ``Ww[row :]``: the whole conditional
    p_k = [(D_mk + alpha) invT_k] (W_kv + beta) in <8 x float32> code (:func:`dense_row8`), then per
    token inverse CDF over the eight column sums (topics k = 8 r + j form column j) and down the
    chosen column. Returns (stream, new length of ``touched``)."""
    dense_row8(ddf, src, off, pf, bsum, nrow, fbeta)
    Z = 0.0
    for j in range(8):
        Z += bsum[j]
        bcum[j] = Z
    for _ in range(n_tok):
        st, u = next_uniform(st)
        u *= Z
        # column: number of running column sums <= u (branch-free), then down it
        j = 0
        for jj in range(7):
            j += bcum[jj] <= u
        if j > jmax:
            j = jmax
        acc = bcum[j] - bsum[j]
        r = 0
        rmax = (K - 1 - j) >> 3
        while r < rmax:
            acc += pf[r * 8 + j]
            if acc > u:
                break
            r += 1
        nt = _count_draw(r * 8 + j, scratch, touched, nt, Ww, row, use_atomic, track, bits, v, kw)
    return st, nt


@njit(parallel=True, cache=True, fastmath={"reassoc", "nsz", "contract"})
def esca_word_sweep(
    indptr, indices, cnt, chunks, n_topics, alpha, beta, seed, iteration,
    dptr, dtop, dcnt, dnnz, Ww, Tpriv, invT, s_prob, s_alias, S, wptr, wtop, wcoef, use_atomic, bits, kw, track,
    dslot, Wdn, Kp, Wh, Whn, doc_offset=0,
):
    """One ESCA iteration (Alg. 1, eq. 20) in the three-bucket decomposition of the frozen conditional

        p(k) propto (D_mk + alpha) W_kv invT_k  +  D_mk beta invT_k  +  alpha beta invT_k

    (word bucket over the word's nonzero topics from the sparse read buffer of
    :func:`esca_word_tables`; document bucket over the document's nonzero topics, computed once per
    document; smoothing bucket from one alias table of K) for a word with a sparse read row; for a
    word with a dense read row (``dslot[v]`` = d >= 0: its counts in ``Wdn[d Kp :]``) the whole
    conditional p_k = [(D_mk + alpha) invT_k] (W_kv + beta) in single precision, eight topics per
    vector instruction (:func:`dense_row8`), drawn by inverse CDF over the eight column sums (topics
    k = 8 r + j form column j) and then down the chosen column (:func:`_dense_entry`). A heavy word
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

    With ``track`` (single-chunk sweeps only: it is ignored with ``use_atomic``), the first
    increment of each (word, topic) count sets bit k of word v's row of the bitmap ``bits`` (``kw``
    64-bit words per row), so that the next iteration's read buffer is built from the nonzero counts
    alone (``use_bits`` of :func:`esca_word_nnz` / :func:`esca_word_tables`).
    """
    K = n_topics
    PF = _PREFETCH_AHEAD
    n_chunks = chunks.shape[0] - 1
    for c in prange(n_chunks):
        scratch = np.zeros(K, np.int32)
        touched = np.empty(K, np.int32)
        rcum = np.empty(K, np.float64)
        dda = np.full(K, alpha, np.float64)
        p = np.empty(K, np.float64)
        # dense rows: ddf_k = (D_mk + alpha) invT_k (alpha invT_k off the document's topics, 0 on the
        # padding), products and column sums / their running sums
        ddf = np.zeros(Kp, np.float32)
        for k in range(K):
            ddf[k] = alpha * invT[k]
        pf = np.empty(Kp, np.float32)
        bsum = np.empty(8, np.float32)
        bcum = np.empty(8, np.float64)
        nrow = Kp >> 3
        fbeta = np.float32(beta)
        jmax = min(7, K - 1)
        pf_step = max(1, 64 // Wdn.itemsize)  # elements per 64-byte cache line of a dense row
        pf_step_h = max(1, 64 // Whn.itemsize)
        e_end = indptr[chunks[c + 1]]
        for m in range(chunks[c], chunks[c + 1]):
            st = stream(seed, iteration, doc_offset + m)
            base = dptr[m]
            nz = dnnz[m]
            R = 0.0
            for j in range(nz):
                k = dtop[base + j]
                dk = dcnt[base + j]
                dda[k] = dk + alpha
                ddf[k] = (dk + alpha) * invT[k]
                R += dk * invT[k] * beta
                rcum[j] = R
            nt = 0
            for e in range(indptr[m], indptr[m + 1]):
                if e + 2 * PF < e_end:
                    prefetch_read(wptr, indices[e + 2 * PF])
                if e + PF < e_end:
                    v2 = indices[e + PF]
                    d2 = dslot[v2]
                    if d2 >= 0:
                        for q in range(0, Kp, pf_step):
                            prefetch_read(Wdn, d2 * Kp + q)
                        prefetch_write(Ww, v2 * K)
                    elif d2 <= -2:
                        for q in range(0, Kp, pf_step_h):
                            prefetch_read(Whn, (-2 - d2) * Kp + q)
                        prefetch_write(Wh, (-2 - d2) * K)
                    else:
                        o2 = wptr[v2]
                        if wptr[v2 + 1] > o2:
                            prefetch_read(wcoef, o2)
                            prefetch_read(wtop, o2)
                            prefetch_write(Ww, v2 * K + wtop[o2])
                v = indices[e]
                row = v * K
                d = dslot[v]
                if d >= 0:
                    st, nt = _dense_entry(cnt[e], st, ddf, Wdn, d * Kp, pf, bsum, bcum, nrow, fbeta, K, jmax,
                                          scratch, touched, nt, Ww, row, use_atomic, track, bits, v, kw)
                    continue
                if d <= -2:
                    h = -2 - d
                    st, nt = _dense_entry(cnt[e], st, ddf, Whn, h * Kp, pf, bsum, bcum, nrow, fbeta, K, jmax,
                                          scratch, touched, nt, Wh, h * K, use_atomic, False, bits, v, kw)
                    continue
                wo = wptr[v]
                wn = wptr[v + 1] - wo
                # word-bucket weights, four independent partial sums (no loop-carried add chain)
                q0 = 0.0
                q1 = 0.0
                q2 = 0.0
                q3 = 0.0
                i = 0
                while i + 4 <= wn:
                    x0 = dda[wtop[wo + i]] * wcoef[wo + i]
                    x1 = dda[wtop[wo + i + 1]] * wcoef[wo + i + 1]
                    x2 = dda[wtop[wo + i + 2]] * wcoef[wo + i + 2]
                    x3 = dda[wtop[wo + i + 3]] * wcoef[wo + i + 3]
                    p[i] = x0
                    p[i + 1] = x1
                    p[i + 2] = x2
                    p[i + 3] = x3
                    q0 += x0
                    q1 += x1
                    q2 += x2
                    q3 += x3
                    i += 4
                while i < wn:
                    x0 = dda[wtop[wo + i]] * wcoef[wo + i]
                    p[i] = x0
                    q0 += x0
                    i += 1
                Q = (q0 + q1) + (q2 + q3)
                Z = Q + R + S
                for _ in range(cnt[e]):
                    st, u = next_uniform(st)
                    u *= Z
                    if u < Q:
                        # linear search, four weights per step while the target lies further on
                        acc = 0.0
                        i = 0
                        while i + 4 < wn:
                            s4 = (p[i] + p[i + 1]) + (p[i + 2] + p[i + 3])
                            if acc + s4 > u:
                                break
                            acc += s4
                            i += 4
                        while i < wn - 1:
                            acc += p[i]
                            if acc > u:
                                break
                            i += 1
                        k = wtop[wo + i]
                    elif u - Q < R and nz > 0:
                        u -= Q
                        # first j with rcum[j] > u: linear scan over few topics, else binary search
                        lo = 0
                        if nz <= 32:
                            while lo < nz - 1 and rcum[lo] <= u:
                                lo += 1
                        else:
                            hi = nz - 1
                            while lo < hi:
                                mid = (lo + hi) >> 1
                                if rcum[mid] <= u:
                                    lo = mid + 1
                                else:
                                    hi = mid
                        k = dtop[base + lo]
                    else:
                        x = (u - Q - R) / S
                        if x >= 1.0:
                            x = 0.9999999999999999
                        if x < 0.0:
                            x = 0.0
                        k = draw_alias(x, s_prob, s_alias, 0, K)
                    nt = _count_draw(k, scratch, touched, nt, Ww, row, use_atomic, track, bits, v, kw)
            for j in range(nz):
                k = dtop[base + j]
                dda[k] = alpha
                ddf[k] = alpha * invT[k]
            dnnz[m] = nt
            for i in range(nt):
                k = touched[i]
                dtop[base + i] = k
                dcnt[base + i] = scratch[k]
                Tpriv[c, k] += scratch[k]
                scratch[k] = 0


@njit(parallel=True, cache=True)
def sca_plain_sweep(
    indptr, indices, cnt, chunks, n_topics, alpha, beta, seed, iteration,
    dptr, dtop_r, dcnt_r, dnnz_r, dtop_w, dcnt_w, dnnz_w,
    W_r, W_w, Tpriv, invT, use_atomic, doc_offset=0,
):
    """One plain ("vanilla") SCA iteration: same update rule as :func:`esca_sweep`, but each
    entry's conditional (D_mk + alpha)(W_kv + beta)/(T_k + V beta) is formed densely over all K
    topics and sampled by inverse CDF (binary search): O(K) per entry."""
    K = n_topics
    n_chunks = chunks.shape[0] - 1
    for c in prange(n_chunks):
        scratch = np.zeros(K, np.int32)
        dread = np.zeros(K, np.float64)
        touched = np.empty(K, np.int32)
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
                    u *= P
                    lo = 0
                    hi = K - 1
                    while lo < hi:
                        mid = (lo + hi) >> 1
                        if cum[mid] <= u:
                            lo = mid + 1
                        else:
                            hi = mid
                    k = lo
                    if scratch[k] == 0:
                        touched[nt] = k
                        nt += 1
                    scratch[k] += 1
                    if use_atomic:
                        atomic_add(W_w, row + k, np.int32(1))
                    else:
                        W_w[row + k] += 1
            for j in range(nz):
                dread[dtop_r[base + j]] = 0.0
            dnnz_w[m] = nt
            for i in range(nt):
                k = touched[i]
                dtop_w[base + i] = k
                dcnt_w[base + i] = scratch[k]
                Tpriv[c, k] += scratch[k]
                scratch[k] = 0


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


# ----------------------------------------------------------------------------------------------
# Collapsed Gibbs sampling (eq. 13, Griffiths & Steyvers 2004), sequential
# ----------------------------------------------------------------------------------------------


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
                st, u = next_uniform(st)
                k = int(u * K)
                if k >= K:
                    k = K - 1
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
                u *= P
                lo = 0
                hi = K - 1
                while lo < hi:
                    mid = (lo + hi) >> 1
                    if cum[mid] <= u:
                        lo = mid + 1
                    else:
                        hi = mid
                z[t] = lo
                D[m, lo] += 1
                W[row + lo] += 1
                T[lo] += 1
                t += 1


# ----------------------------------------------------------------------------------------------
# CVB0 (eq. 14, Asuncion et al. 2009), sequential
# ----------------------------------------------------------------------------------------------


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
