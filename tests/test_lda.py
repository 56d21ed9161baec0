"""LDA engines: kernels vs naive twins, ESCA conditional (z-test), thread invariance, quality, bad input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import naive_lda as naive
from scalable_bayes.evaluation.heldout import heldout_loglik
from scalable_bayes.inference.lda import CVB0, ESCA, CollapsedGibbs
from scalable_bayes.inference.lda import _kernels as kern


@pytest.fixture(scope="module")
def small():
    X, phi, theta = naive.synthetic_lda(n_docs=40, n_words=30, n_topics=3, doc_len=25, seed=1)
    return X


@pytest.fixture(scope="module")
def corpus():
    X, phi, theta = naive.synthetic_lda(n_docs=500, n_words=300, n_topics=8, doc_len=80, alpha=0.1, beta=0.05,
                                        seed=3)
    return X[:400], X[400:], phi


# ---------------------------------------------------------------------------- alias tables


@pytest.mark.parametrize("n", [1, 2, 7, 100])
def test_alias_table_represents_weights(n):
    rng = np.random.default_rng(n)
    w = rng.gamma(0.3, size=n) + 1e-12
    prob, alias, work = np.empty(n), np.empty(n, np.int32), np.empty(n, np.int32)
    kern.build_alias(w, w.sum(), prob, alias, work)
    np.testing.assert_allclose(naive.alias_probabilities(prob, alias), w / w.sum(), rtol=1e-9, atol=1e-12)


def test_alias_table_degenerate_one_hot():
    w = np.array([0.0, 0.0, 3.0, 0.0])
    prob, alias, work = np.empty(4), np.empty(4, np.int32), np.empty(4, np.int32)
    kern.build_alias(w, 3.0, prob, alias, work)
    np.testing.assert_allclose(naive.alias_probabilities(prob, alias), [0, 0, 1, 0], atol=1e-12)


# ---------------------------------------------------------------------------- exact twins


@pytest.mark.parametrize("K", [4, 8, 13, 20])
def test_cgs_matches_naive_draw_for_draw(small, K):
    """K = 4: a partial row of topics only; 8: one full row of eight; 13, 20: full rows and a partial one."""
    a, b = 0.3, 0.1
    m = CollapsedGibbs(n_components=K, doc_topic_prior=a, topic_word_prior=b, max_iter=3, random_state=5).fit(small)
    W_ref, z_ref = naive.cgs(small, K, a, b, 3, 5)
    np.testing.assert_array_equal(m.topic_assignments_, z_ref)
    np.testing.assert_array_equal(np.rint(m.components_ - b), W_ref.T)


@pytest.mark.parametrize("P, n_threads", [(2, 1), (3, 1), (3, 2), (5, 2)])
def test_partitioned_cgs_matches_naive_draw_for_draw(small, P, n_threads):
    """P x P blocks in P rounds, topic totals stale within a round: every draw equals the twin's, on one thread
    and on two (the blocks of a round side by side); 30 words and 40 documents, P up to 5 (some word ranges
    empty: a few words hold most tokens)."""
    K, a, b = 13, 0.3, 0.1
    m = CollapsedGibbs(n_components=K, doc_topic_prior=a, topic_word_prior=b, max_iter=3, random_state=5,
                       n_partitions=P, n_jobs=n_threads).fit(small)
    doc_cuts = kern.balanced_cuts(np.asarray(small.sum(1)).ravel(), P)
    word_cuts = kern.balanced_cuts(np.asarray(small.sum(0)).ravel(), P)
    assert np.all(np.diff(doc_cuts) > 0) and np.count_nonzero(np.diff(word_cuts)) >= 2
    W_ref, z_ref = naive.cgs(small, K, a, b, 3, 5, doc_cuts, word_cuts)
    np.testing.assert_array_equal(m.topic_assignments_, z_ref)
    np.testing.assert_array_equal(np.rint(m.components_ - b), W_ref.T)
    # and the twin's partitioned schedule is not the sequential one
    assert not np.array_equal(naive.cgs(small, K, a, b, 3, 5)[1], z_ref)


@pytest.mark.parametrize("cls", [ESCA, CollapsedGibbs, CVB0])
def test_fit_leaves_a_non_canonical_matrix_as_it_was(small, cls):
    """Rows listing their words out of order, a duplicate entry and an explicit zero: the fit sums, sorts and
    drops them in a copy (the same fit as on the canonical matrix); the caller's arrays are unchanged."""
    X = small.tocsr().copy()
    for m in range(X.shape[0]):  # reverse each row's entries
        s, e = X.indptr[m], X.indptr[m + 1]
        X.indices[s:e] = X.indices[s:e][::-1].copy()
        X.data[s:e] = X.data[s:e][::-1].copy()
    X.has_sorted_indices = False
    # row 0: its first entry given the word of its second (a duplicate); row 1: its first count made an explicit 0
    X.indices[X.indptr[0]] = X.indices[X.indptr[0] + 1]
    X.data[X.indptr[1]] = 0
    ref = X.toarray()  # (duplicates summed)
    assert not X.has_canonical_format and X.nnz == small.nnz
    arrays = [X.indices.copy(), X.data.copy(), X.indptr.copy()]
    kw = dict(n_components=5, max_iter=2, random_state=1)
    a = cls(**kw).fit(X)
    b = cls(**kw).fit(sp.csr_matrix(ref))
    np.testing.assert_array_equal(a.components_, b.components_)
    for got, want in zip([X.indices, X.data, X.indptr], arrays):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_partitioned_cgs_rejects_a_bad_partition_count(small, bad):
    with pytest.raises(ValueError, match="n_partitions"):
        CollapsedGibbs(n_components=3, max_iter=1, n_partitions=bad).fit(small)


@pytest.mark.parametrize("gamma_dtype", ["float16", "float32"])
def test_cvb0_matches_naive(small, gamma_dtype):
    K, a, b = 4, 0.3, 0.1
    kw = dict(n_components=K, doc_topic_prior=a, topic_word_prior=b, random_state=2, gamma_dtype=gamma_dtype)
    m = CVB0(max_iter=0, **kw).fit(small)
    gamma = m.responsibilities()
    D, W, T = m._Dd.copy(), m._Wc.reshape(-1, K).copy(), m._Tc.copy()
    for _ in range(2):
        naive.cvb0_sweep(small, gamma, D, W, T, a, b, storage=np.dtype(gamma_dtype))
    m2 = CVB0(max_iter=2, **kw).fit(small)
    # same arithmetic and the same rounding of gamma to its storage: agreement to float64 precision
    np.testing.assert_allclose(m2.responsibilities(), gamma, rtol=0, atol=1e-12)
    np.testing.assert_allclose(m2._Wc.reshape(-1, K), W, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(m2._Tc, T, rtol=1e-12)


@pytest.mark.parametrize("gamma_dtype", ["float16", "float32"])
def test_cvb0_counts_are_sums_of_stored_gamma(corpus, gamma_dtype):
    """D, W, T stay equal to the sums of c x gamma over the STORED (rounded) responsibilities after
    many sweeps: the counts receive exactly the stored values, so removing a token's old
    contribution is exact and the counts do not drift away from gamma."""
    X = corpus[0]
    K = 8
    m = CVB0(n_components=K, doc_topic_prior=0.1, topic_word_prior=0.05, max_iter=10, random_state=4,
             gamma_dtype=gamma_dtype).fit(X)
    Xc = sp.csr_matrix(X)
    g = m.responsibilities() * Xc.data[:, None]
    rows = np.repeat(np.arange(Xc.shape[0]), np.diff(Xc.indptr))
    D = np.zeros((Xc.shape[0], K))
    np.add.at(D, rows, g)
    W = np.zeros((Xc.shape[1], K))
    np.add.at(W, Xc.indices, g)
    np.testing.assert_allclose(m._Dd, D, rtol=0, atol=1e-9 * D.max())
    np.testing.assert_allclose(m._Wc.reshape(-1, K), W, rtol=0, atol=1e-9 * W.max())
    np.testing.assert_allclose(m._Tc, g.sum(axis=0), rtol=1e-9)
    assert np.isclose(m._Tc.sum(), g.sum(), rtol=1e-12)


def test_half_conversion_matches_numpy():
    """binary16 helpers of the CVB0 storage: decode of all 65,536 patterns, encode (round to nearest
    even) of every half value, every midpoint and its neighbours, and random values over the range."""
    h = np.arange(2**16, dtype=np.uint16)
    ref = h.view(np.float16).astype(np.float64)
    out = np.array([kern.half_value(x) for x in h])
    fin = np.isfinite(ref)
    np.testing.assert_array_equal(out[fin], ref[fin])
    np.testing.assert_array_equal(np.signbit(out[fin]), np.signbit(ref[fin]))
    np.testing.assert_array_equal(np.isnan(out), np.isnan(ref))
    np.testing.assert_array_equal(np.isposinf(out), np.isposinf(ref))
    vals = np.unique(ref[fin])
    mids = (vals[:-1] + vals[1:]) / 2
    rng = np.random.default_rng(0)
    x = np.concatenate([vals, mids, np.nextafter(mids, np.inf), np.nextafter(mids, -np.inf), rng.random(20000),
                        np.exp(rng.uniform(-40, 12, 20000)) * rng.choice([-1, 1], 20000),
                        [0.0, -0.0, np.inf, -np.inf, 65504.0, 65519.99, 65520.0, 1e300, 5e-324, 2.0**-25,
                         2.0**-25 * (1 + 2**-52), 1.5 * 2.0**-24]])
    with np.errstate(over="ignore"):
        want = x.astype(np.float16).view(np.uint16)
    got = np.array([kern.half_bits(v) for v in x], dtype=np.uint16)
    np.testing.assert_array_equal(got, want)


def test_heldout_matches_naive(small, corpus):
    _, Xte, phi = corpus
    rng = np.random.default_rng(0)
    phi_s = rng.dirichlet(np.ones(30), size=3)
    got = heldout_loglik(phi_s, small, 0.4, n_sweeps=4, seed=9)
    ref = naive.heldout_loglik(phi_s, small, 0.4, n_sweeps=4, seed=9)
    assert got == pytest.approx(ref, rel=1e-12)


def _one_plain_sweep_expectation(X, K, a, b, seed):
    """(D, W, T) read buffer of an ESCA after 1 iteration, and the expected next counts."""
    m = ESCA(n_components=K, doc_topic_prior=a, topic_word_prior=b, max_iter=1, random_state=seed, n_jobs=1,
             decomposition="auto").fit(X)
    D = m.doc_topic_counts_.toarray().astype(float)
    W = m._W[m._r].reshape(-1, K).astype(float)
    T = m.topic_counts_.astype(float)
    return m, D, W, T


@pytest.mark.parametrize("sampler,mode", [("sparse_alias", 0), ("sparse_alias", 1), ("sparse_alias", 2), ("plain", 0),
                                          ("word", 2), ("word", -1), ("word", 0), ("word_heavy", 2)])
def test_esca_sweep_draws_from_frozen_conditional(small, sampler, mode):
    """z-test: over many seeds, the counts written by one sweep from a FIXED read buffer have the mean
    sum_tokens p(k | D, W, T) of eq. 20 (own topic not excluded). ``word``: the default engine's
    kernels (read buffer rebuilt from the dense counts, document counts in place), with ``mode`` the
    minimum number of topics of a dense word row: 2 (mixed dense and sparse rows), -1 (sparse rows
    only) or 0 (dense rows only). ``word_heavy``: mixed rows, and the most frequent third of the
    words heavy (int32 rows of their own, as words of 2^16+ tokens are)."""
    _ztest_one_sweep(small, 3, sampler, mode)


@pytest.mark.parametrize("dmin", [0, 6])
def test_esca_dense_rows_many_topics(dmin):
    """The z-test with K = 13 (not a multiple of 8: padded dense rows, columns of unequal length) and
    documents with most topics; all rows dense, or mixed."""
    X, _, _ = naive.synthetic_lda(n_docs=30, n_words=25, n_topics=4, doc_len=60, alpha=1.0, seed=4)
    _ztest_one_sweep(X, 13, "word", dmin)


@pytest.mark.parametrize("K", [40, 125, 136, 203])
def test_esca_dense_rows_of_many_rows(K):
    """The z-test with all rows dense and long columns: K = 40 (5 rows of 8 topics: an odd number, the last
    16-lane comparison half +inf) and K = 125 (16 rows, the most the draw takes in one count over the stacked
    running sums; three columns one topic short), where one count gives the topic; K = 136 (17 rows) and K = 203
    (26 rows, the last one partly padding), where it chooses the column, then counts the last rows of blocks of 8
    in it, then the rows of one block."""
    X, _, _ = naive.synthetic_lda(n_docs=40, n_words=20, n_topics=4, doc_len=400, alpha=1.0, seed=6)
    _ztest_one_sweep(X, K, "word", 0, a=2.0)


def test_esca_word_sweep_many_document_topics():
    """The same z-test where documents have more than 32 nonzero topics (the word kernel's document
    bucket then searches by bisection) and words many topics (long sorted word-bucket rows); a large
    beta gives the document bucket most of the mass."""
    X, _, _ = naive.synthetic_lda(n_docs=12, n_words=40, n_topics=3, doc_len=150, alpha=2.0, seed=2)
    m = ESCA(n_components=48, doc_topic_prior=0.5, topic_word_prior=5.0, max_iter=1, random_state=1, n_jobs=1).fit(X)
    assert m._D[2].max() > 32
    _ztest_one_sweep(X, 48, "word", -1, b=5.0)


def _ztest_one_sweep(small, K, sampler, mode, a=0.5, b=0.1):
    m, D, W, T = _one_plain_sweep_expectation(small, K, a, b, seed=1)
    D2_exp, W2_exp = naive.esca_expected_next(small, D, W, T, a, b)
    C = m._C
    D0 = tuple(x.copy() for x in m._D)
    Wr = m._W[m._r].copy()
    n_rep = 300
    acc = np.zeros_like(W2_exp)
    acc2 = np.zeros_like(W2_exp)
    accD = np.zeros_like(D2_exp)
    V = C.n_words
    for rep in range(n_rep):
        Ww = np.zeros_like(Wr)
        Tp = np.zeros_like(m._Tpriv)
        Dr = tuple(x.copy() for x in D0)  # read buffer, also the in-place write buffer
        if sampler.startswith("word"):
            Wd = Wr.copy()
            hslot = np.full(V, -1, np.int32)
            if sampler == "word_heavy":
                heavy = np.argsort(-np.asarray(small.sum(0)).ravel(), kind="stable")[: V // 3]
                hslot[heavy] = np.arange(heavy.size)
                Wh = Wd.reshape(V, K)[heavy].astype(np.int32).ravel()  # their counts move to rows of their own
                Wd.reshape(V, K)[heavy] = 0
            else:
                heavy, Wh = np.empty(0, np.int64), np.empty(0, np.int32)
            wptr = np.zeros(V + 1, np.int64)
            nobits = np.zeros(1, np.uint64)
            dslot = np.empty(V, np.int32)
            dmin = K + 1 if mode < 0 else mode
            Kp = (K + 7) // 8 * 8
            nnz, nd = kern.esca_word_nnz(Wd, K, V, wptr, nobits, 1, False, dslot, dmin, hslot)
            if rep == 0 and mode == 2:
                assert 0 < nd < V - heavy.size and nnz > 0  # mixed rows
                np.testing.assert_array_equal(dslot[heavy], -2 - np.arange(heavy.size))
            wtop, wcoef, Wdn = np.empty(nnz, np.int16), np.empty(nnz), np.empty(nd * Kp, Wd.dtype)
            Whn = np.empty(heavy.size * Kp, np.int32)
            invT, sp_, sa, sw = np.empty(K), np.empty(K), np.empty(K, np.int32), np.empty(K, np.int32)
            S = kern.esca_word_tables(Wd, m._T, K, V, a, b, invT, sp_, sa, sw, wptr, wtop, wcoef, nobits, 1, False,
                                      dslot, Wdn, Kp, Wh, Whn)
            assert not Wd.any() and not Wh.any()
            assert np.all(np.diff(wcoef[wptr[0]:wptr[1]]) <= 0)
            kern.esca_word_sweep(C.indptr, C.indices, C.cnt, m._chunks, K, a, b, 1000 + rep, 1, m._dptr, Dr[0],
                                 Dr[1], Dr[2], Wd, Tp, invT, sp_, sa, S, wptr, wtop, wcoef, False, nobits, 1, False,
                                 dslot, Wdn, Kp, Wh, Whn)
            Ww = Wd.astype(np.int64)
            Ww.reshape(V, K)[heavy] = Wh.reshape(-1, K)
        elif sampler == "sparse_alias":
            wcap = C.n_tokens
            wptr, wtop, wcoef = np.zeros(V + 1, np.int64), np.empty(wcap, np.int32), np.empty(wcap)
            wprob, walias, wwork, wmass = np.empty(wcap), np.empty(wcap, np.int32), np.empty(wcap, np.int32), np.empty(V)
            invT, sp_, sa, sw = np.empty(K), np.empty(K), np.empty(K, np.int32), np.empty(K, np.int32)
            S = kern.esca_tables(Wr, m._T, K, V, a, b, invT, sp_, sa, sw, wptr, wtop, wprob, walias, wwork, wmass,
                                 wcoef, True)
            kern.esca_sweep(C.indptr, C.indices, C.cnt, m._chunks, K, a, b, 1000 + rep, 1, m._dptr, Dr[0], Dr[1],
                            Dr[2], Dr[0], Dr[1], Dr[2], Wr, Ww, Tp, invT, sp_, sa, S, wptr, wtop, wprob, walias, wmass,
                            wcoef, False, mode)
        else:
            invT = 1.0 / (m._T + V * b)
            kern.sca_plain_sweep(C.indptr, C.indices, C.cnt, m._chunks, K, a, b, 1000 + rep, 1, m._dptr, Dr[0],
                                 Dr[1], Dr[2], Dr[0], Dr[1], Dr[2], Wr, Ww, Tp, invT, False)
        Wn = Ww.reshape(V, K).astype(float)
        acc += Wn
        acc2 += Wn**2
        for i in range(C.n_docs):
            s = m._dptr[i]
            accD[i, Dr[0][s:s + Dr[2][i]]] += Dr[1][s:s + Dr[2][i]]
        assert Tp.sum() == C.n_tokens
    mean = acc / n_rep
    sd = np.sqrt(np.maximum(acc2 / n_rep - mean**2, 1e-12) / n_rep)
    mask = W2_exp > 0.5
    z = (mean[mask] - W2_exp[mask]) / np.maximum(sd[mask], 1e-3)
    assert np.abs(z).max() < 5.0, np.abs(z).max()
    np.testing.assert_allclose(accD.sum(1) / n_rep, D2_exp.sum(1), rtol=1e-12)
    np.testing.assert_allclose((accD / n_rep)[D2_exp > 3], D2_exp[D2_exp > 3], rtol=0.25)


# ---------------------------------------------------------------------------- tables from the bitmap


def test_bit_intrinsics_match_python():
    from numba import njit

    from scalable_bayes.intrinsics import ctz64, popcount64

    @njit
    def ops(xs, out):
        for i in range(xs.shape[0]):
            out[i, 0] = popcount64(xs[i])
            out[i, 1] = ctz64(xs[i]) if xs[i] != 0 else -1

    rng = np.random.default_rng(0)
    xs = np.concatenate([rng.integers(0, 2**63, 200, dtype=np.uint64) >> rng.integers(0, 63, 200).astype(np.uint64),
                         np.array([1, 2**63, 2**64 - 1, 2**32], dtype=np.uint64)])
    out = np.zeros((xs.size, 2), np.int64)
    ops(xs, out)
    for x, (pc, tz) in zip(xs.tolist(), out):
        assert pc == bin(x).count("1")
        assert tz == (x & -x).bit_length() - 1


class _Tracking(ESCA):
    """ESCA keeping the bitmap whatever the corpus (by default only where V K > 2 x tokens)."""

    _track_cells_per_token = 0.0


def test_bitmap_kept_only_where_the_scan_it_saves_is_long():
    """One thread keeps the bitmap of written counts where V K exceeds twice the tokens, and not otherwise (the
    scan is then cheaper than a bit per token); never on two threads. Either way the same fit."""
    X, _, _ = naive.synthetic_lda(n_docs=60, n_words=50, n_topics=4, doc_len=40, seed=5)
    n_tok = int(X.sum())
    fits = {}
    for K in (20, 120):
        for n_jobs in (1, 2):
            m = ESCA(n_components=K, max_iter=3, random_state=2, n_jobs=n_jobs).fit(X)
            assert m._track == (n_jobs == 1 and 50 * K > 2 * n_tok), (K, n_jobs, n_tok)
            fits[K, n_jobs] = m.components_
        np.testing.assert_array_equal(fits[K, 1], fits[K, 2])
    assert 50 * 20 < 2 * n_tok < 50 * 120


class _SharedWrites(ESCA):
    """ESCA whose chunks all count into the one shared write buffer (atomic adds on several threads), whatever
    the corpus."""

    _own_buffer_bytes = -1


def test_merge_write_buffers_adds_every_buffer_and_zeroes_it():
    rng = np.random.default_rng(0)
    W = rng.integers(0, 1000, 1001).astype(np.uint16)
    Wx = rng.integers(0, 1000, (3, 1001)).astype(np.uint16)
    want = W.astype(np.int64) + Wx.sum(0)
    kern.merge_write_buffers(W, Wx)
    np.testing.assert_array_equal(W, want)
    assert not Wx.any()
    kern.merge_write_buffers(W, np.zeros((0, 1), np.uint16))  # no buffers: nothing to add
    np.testing.assert_array_equal(W, want)


@pytest.mark.parametrize("n_threads", [2])
def test_own_write_buffers_only_where_their_counts_are_few(n_threads):
    """On several threads the chunks after the first count into write buffers of their own, merged after the
    sweep, where these take at most ``_own_buffer_bytes``; otherwise every chunk adds atomically into the
    shared buffer. The same fit either way, and the one-thread fit, heavy words (int32 rows, always shared)
    included."""
    X, _, _ = naive.synthetic_lda(n_docs=60, n_words=50, n_topics=4, doc_len=40, seed=5)
    for K, limit in ((10, 1000), (120, 1000)):
        own = 50 * K * 2 * (n_threads - 1) <= limit  # uint16 counts
        fits = []
        for cls, nt in ((ESCA, 1), (ESCA, n_threads), (_SharedWrites, n_threads)):
            m = cls(n_components=K, max_iter=3, random_state=2, n_jobs=nt)
            m._own_buffer_bytes = limit if cls is ESCA else -1
            m._heavy_min_total = int(np.median(np.asarray(X.sum(0)).ravel())) + 1
            m.fit(X)
            assert m._heavy.size > 0
            assert m._Wx.shape[0] == (n_threads - 1 if own and cls is ESCA and nt > 1 else 0)
            assert not m._Wx.any()  # merged and zeroed after every sweep
            fits.append((m.components_, m.doc_topic_counts_.toarray()))
        for comp, dt in fits[1:]:
            np.testing.assert_array_equal(comp, fits[0][0])
            np.testing.assert_array_equal(dt, fits[0][1])
    assert ESCA._own_buffer_bytes >= 1.5 * 2**20  # the Wikipedia sample's 7,702 words at K = 100


def test_esca_chunks_balance_tokens_plus_weighted_entries():
    """Several threads' chunks are cut at equal work, a document's work its tokens plus ``_entry_weight`` times its
    entries (ESCA computes one distribution per entry): documents of many one-token entries take a chunk of
    fewer tokens than documents of few entries with many tokens each. The cut moves, the fit does not."""
    from scalable_bayes.inference.lda._estimators import CorpusArrays

    rng = np.random.default_rng(0)
    rows = [np.bincount(rng.choice(40, 20, replace=False), minlength=40) for _ in range(30)]  # 20 entries, 20 tokens
    rows += [np.bincount(rng.choice(40, 4, replace=False), minlength=40) * 5 for _ in range(30)]  # 4 entries, 20 tokens
    X = sp.csr_matrix(np.array(rows))
    C = CorpusArrays(X)
    np.testing.assert_array_equal(C.chunks(2), [0, 30, 60])  # equal tokens
    w = ESCA._entry_weight
    assert w > 0
    cut = C.chunks(2, w)[1]
    work = 20 + w * np.array([20] * 30 + [4] * 30)
    assert cut < 30 and abs(work[:cut].sum() - work[cut:].sum()) <= 2 * work.max()  # one document off the middle
    fits = [ESCA(n_components=5, max_iter=3, random_state=1, n_jobs=nt).fit(X) for nt in (1, 2)]
    np.testing.assert_array_equal(fits[1]._chunks, [0, cut, 60])
    np.testing.assert_array_equal(fits[0].components_, fits[1].components_)


@pytest.mark.parametrize("K,dense", [(5, False), (64, False), (65, False), (130, False), (5, True), (65, True),
                                     (130, True)])
def test_tables_from_bitmap_equal_tables_from_scan(K, dense):
    """The single-threaded sweep's bitmap marks exactly the nonzero counts it writes; the read
    buffer built from it is the one of the full V x K scan, entry for entry (same rows, same order),
    and both clear Wd. Multi-threaded fits keep no bitmap and give the same result. ``dense``: with
    the default layout (dense count rows for the words with many topics, sparse rows for the rest);
    otherwise all rows sparse."""
    X, _, _ = naive.synthetic_lda(n_docs=60, n_words=50, n_topics=4, doc_len=40, seed=5)
    dmin = min(12, K // 2) if dense else K + 1
    m = _Tracking(n_components=K, doc_topic_prior=0.3, max_iter=3, random_state=2, n_jobs=1,
                  dense_min_topics=dmin).fit(X)
    assert m._track and not m._use_atomic and m._kw == (K + 63) // 64
    m2 = ESCA(n_components=K, doc_topic_prior=0.3, max_iter=3, random_state=2, n_jobs=2, dense_min_topics=dmin).fit(X)
    assert m2._use_atomic and not m2._track
    np.testing.assert_array_equal(m2.components_, m.components_)
    V = X.shape[1]
    Wd = m._W[0]
    nz = (Wd.reshape(V, K) != 0)
    bits = m._bits.reshape(V, m._kw)
    marked = np.array([[(int(bits[v, k >> 6]) >> (k & 63)) & 1 for k in range(K)] for v in range(V)], bool)
    np.testing.assert_array_equal(marked, nz)
    outs = []
    Kp = m._Kp
    for use_bits in (False, True):
        W = Wd.copy()
        b = bits.ravel().copy()
        wptr = np.zeros(V + 1, np.int64)
        dslot = np.empty(V, np.int32)
        nnz, nd = kern.esca_word_nnz(W, K, V, wptr, b, m._kw, use_bits, dslot, dmin, m._hslot)
        wtop, wcoef, Wdn = np.empty(nnz, np.int16), np.empty(nnz), np.empty(nd * Kp, W.dtype)
        invT, sp_, sa, sw = np.empty(K), np.empty(K), np.empty(K, np.int32), np.empty(K, np.int32)
        S = kern.esca_word_tables(W, m._T, K, V, 0.3, 0.1, invT, sp_, sa, sw, wptr, wtop, wcoef, b, m._kw, use_bits,
                                  dslot, Wdn, Kp, m._Wh.copy(), m._Whn.copy())
        assert not W.any()
        assert b.any() != use_bits  # the bitmap is consumed only when it is used
        # dense rows: the words with >= dmin topics, in word order, holding their counts (zero-padded)
        is_dense = nz.sum(1) >= dmin
        np.testing.assert_array_equal(dslot, np.where(is_dense, np.cumsum(is_dense) - 1, -1))
        rows = Wdn.reshape(nd, Kp)
        np.testing.assert_array_equal(rows[:, :K], Wd.reshape(V, K)[is_dense])
        assert not rows[:, K:].any()
        outs.append((nnz, S, wptr, wtop, wcoef, dslot, Wdn))
    assert dense == (nd > 0) and (not dense or nd < V)
    assert outs[0][0] == outs[1][0] == nz[nz.sum(1) < dmin].sum()
    assert outs[0][1] == outs[1][1]
    for a, b in zip(outs[0][2:], outs[1][2:]):
        np.testing.assert_array_equal(a, b)


def test_esca_counts_consistent(corpus):
    Xtr, _, _ = corpus
    m = ESCA(n_components=6, doc_topic_prior=0.2, topic_word_prior=0.05, max_iter=5, random_state=0, n_jobs=1).fit(Xtr)
    D = m.doc_topic_counts_
    W = m.components_ - 0.05
    np.testing.assert_array_equal(np.asarray(D.sum(1)).ravel(), np.asarray(Xtr.sum(1)).ravel())
    np.testing.assert_allclose(W.sum(0), np.asarray(Xtr.sum(0)).ravel())
    np.testing.assert_array_equal(np.asarray(D.sum(0)).ravel(), m.topic_counts_)
    np.testing.assert_allclose(W.sum(1), m.topic_counts_)


@pytest.mark.parametrize("n_threads", [1, 2])
def test_heavy_word_rows_draw_exactly_as_dense_rows(corpus, n_threads):
    """A heavy word (int32 count rows of its own) is drawn from the same dense conditional as a dense
    uint16 row: with every word dense (dense_min_topics=0), moving any set of words to the heavy rows
    changes no draw (initialisation, tables, sweep; atomic adds on 2 threads)."""
    Xtr, _, _ = corpus
    kw = dict(n_components=11, doc_topic_prior=0.3, max_iter=4, random_state=5, n_jobs=n_threads, dense_min_topics=0)
    ref = ESCA(**kw).fit(Xtr)
    assert ref._heavy.size == 0 and ref._W[0].dtype == np.uint16
    tot = np.asarray(Xtr.sum(0)).ravel()
    for thr in (2, int(np.median(tot)) + 1):
        m = ESCA(**kw)
        m._heavy_min_total = thr
        m.fit(Xtr)
        assert 0 < m._heavy.size < Xtr.shape[1]
        np.testing.assert_array_equal(m._heavy, np.flatnonzero(tot >= thr))
        assert not m._W[0].reshape(-1, 11)[m._heavy].any()  # their counts live in the int32 rows
        np.testing.assert_array_equal(m.components_, ref.components_)
        np.testing.assert_array_equal(m.doc_topic_counts_.toarray(), ref.doc_topic_counts_.toarray())


def test_word_above_uint16_keeps_exact_counts():
    """A word with more than 2^16 tokens becomes heavy on its own; its counts exceed the uint16 range
    of the other words' counts and stay exact (every word's counts sum to its token count)."""
    rng = np.random.default_rng(0)
    M, V = 200, 30
    Xd = rng.poisson(3.0, size=(M, V)).astype(np.int32)
    Xd[:, 0] = 700  # 140,000 tokens of word 0: with K = 2 one topic holds more than 2^16 of them
    X = sp.csr_matrix(Xd)
    m = ESCA(n_components=2, doc_topic_prior=0.5, max_iter=3, random_state=0, n_jobs=1).fit(X)
    assert list(m._heavy) == [0] and m._W[0].dtype == np.uint16 and m._Wh.dtype == np.int32
    W = m.components_ - m.topic_word_prior
    Wi = np.rint(W).astype(np.int64)  # the integer counts behind components_
    np.testing.assert_allclose(W, Wi, rtol=0, atol=1e-9)
    assert Wi[:, 0].max() > 2**16
    np.testing.assert_array_equal(Wi.sum(0), Xd.sum(0))
    np.testing.assert_array_equal(Wi.sum(1), m.topic_counts_)


@pytest.mark.parametrize("cls,kw", [(ESCA, {}), (ESCA, {"decomposition": "doc"}), (ESCA, {"decomposition": "word"}),
                                    (ESCA, {"sampler": "plain"})])
def test_results_identical_for_1_and_2_threads(corpus, cls, kw):
    Xtr, Xte, _ = corpus
    outs = []
    for nt in (1, 2):
        m = cls(n_components=6, doc_topic_prior=0.2, topic_word_prior=0.05, max_iter=4, random_state=11, n_jobs=nt,
                evaluate_every=2, **kw).fit(Xtr, X_heldout=Xte)
        outs.append((m.components_, [h["heldout_ll"] for h in m.history_], m.transform(Xte[:20])))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    assert outs[0][1] == outs[1][1]
    np.testing.assert_array_equal(outs[0][2], outs[1][2])


def test_same_seed_same_result_different_seed_differs(corpus):
    Xtr, _, _ = corpus
    a = ESCA(n_components=5, max_iter=3, random_state=1).fit(Xtr).components_
    b = ESCA(n_components=5, max_iter=3, random_state=1).fit(Xtr).components_
    c = ESCA(n_components=5, max_iter=3, random_state=2).fit(Xtr).components_
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


# ---------------------------------------------------------------------------- quality floors


def test_quality_all_engines_reach_true_topic_level(corpus):
    Xtr, Xte, phi = corpus
    a, b, K = 0.1, 0.05, 8
    ll_true = heldout_loglik(phi + 1e-12, Xte, a, seed=0)
    ll_unif = heldout_loglik(np.ones_like(phi), Xte, a, seed=0)
    lls = {}
    # ESCA's synchronous updates need more iterations than the sequential samplers (cf. paper Fig. 2);
    # single chains of every engine now and then merge two topics (a local mode): median of 3 seeds
    # (and collapsed Gibbs on 4 x 4 blocks, two threads: topic totals stale within a round)
    for name, cls, n_iter, kw in (("ESCA", ESCA, 200, {}), ("CollapsedGibbs", CollapsedGibbs, 60, {}),
                                  ("CVB0", CVB0, 60, {}),
                                  ("partitioned CGS", CollapsedGibbs, 60, {"n_partitions": 4, "n_jobs": 2})):
        finals = []
        for seed in range(3):
            m = cls(n_components=K, doc_topic_prior=a, topic_word_prior=b, max_iter=n_iter, random_state=seed,
                    evaluate_every=n_iter, **kw)
            m.fit(Xtr, X_heldout=Xte)
            assert m.history_[-1]["heldout_ll"] > m.history_[0]["heldout_ll"] + 0.2
            finals.append(m.history_[-1]["heldout_ll"])
        lls[name] = float(np.median(finals))
    # learned topics from 400 docs: within 0.1 nats/word of the generating topics, far above uniform
    for name, ll in lls.items():
        assert ll > ll_true - 0.1, (name, ll, ll_true)
        assert ll > ll_unif + 1.0, (name, ll, ll_unif)
    assert abs(lls["ESCA"] - lls["CollapsedGibbs"]) < 0.05, lls
    assert abs(lls["partitioned CGS"] - lls["CollapsedGibbs"]) < 0.02, lls


def test_history_records_wall_time_and_tokens(corpus):
    Xtr, Xte, _ = corpus
    seen = []
    m = ESCA(n_components=4, max_iter=4, random_state=0, evaluate_every=2, callbacks=[lambda est, rec: seen.append(rec)])
    m.fit(Xtr, X_heldout=Xte)
    assert [h["iteration"] for h in m.history_] == [0, 2, 4]
    assert len(seen) == 3
    w = [h["wall_time"] for h in m.history_]
    assert all(x <= y for x, y in zip(w, w[1:]))
    c = [h["cpu_time"] for h in m.history_]
    assert all(np.isfinite(c)) and c[0] >= 0 and all(x <= y for x, y in zip(c, c[1:]))
    assert m.history_[-1]["tokens"] == 4 * int(Xtr.sum())
    th = m.transform(Xte)
    np.testing.assert_allclose(th.sum(1), 1.0)


@pytest.mark.parametrize("cls", [ESCA, CollapsedGibbs, CVB0])
def test_a_callback_that_returns_true_stops_the_fit_there(corpus, cls):
    # stopping after iteration 4 leaves exactly the state of a fit of 4 iterations; every callback still sees
    # every record, also the one after which another callback asked to stop
    Xtr, Xte, _ = corpus
    seen = []
    m = cls(n_components=4, max_iter=10, random_state=0, evaluate_every=2,
            callbacks=[lambda est, rec: rec["iteration"] >= 4, lambda est, rec: seen.append(rec["iteration"])])
    m.fit(Xtr, X_heldout=Xte)
    assert m.n_iter_ == 4 and [h["iteration"] for h in m.history_] == [0, 2, 4] and seen == [0, 2, 4]
    ref = cls(n_components=4, max_iter=4, random_state=0, evaluate_every=2).fit(Xtr, X_heldout=Xte)
    np.testing.assert_array_equal(m.components_, ref.components_)
    assert [h["heldout_ll"] for h in m.history_] == [h["heldout_ll"] for h in ref.history_]
    # a held-out target, numpy's booleans included: stops at the first record that reaches it
    target = ref.history_[1]["heldout_ll"]
    m2 = cls(n_components=4, max_iter=10, random_state=0, evaluate_every=2,
             callbacks=[lambda est, rec: np.float64(rec["heldout_ll"]) >= target]).fit(Xtr, X_heldout=Xte)
    assert m2.n_iter_ == 2
    # asked at the start's record: a fitted model of the start (no iteration)
    m0 = cls(n_components=4, max_iter=10, random_state=0, evaluate_every=3, callbacks=[lambda est, rec: True])
    m0.fit(Xtr, X_heldout=Xte)
    assert m0.n_iter_ == 0 and [h["iteration"] for h in m0.history_] == [0]
    assert m0.components_.shape == (4, Xtr.shape[1]) and np.isfinite(m0.transform(Xte)).all()
    # callbacks that return nothing (or a false value) never stop it
    m3 = cls(n_components=4, max_iter=5, random_state=0, evaluate_every=2,
             callbacks=[lambda est, rec: None, lambda est, rec: 0]).fit(Xtr, X_heldout=Xte)
    assert m3.n_iter_ == 5 and [h["iteration"] for h in m3.history_] == [0, 2, 4, 5]


# ---------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("kw,match", [
    ({"n_components": 0}, "n_components"),
    ({"doc_topic_prior": 0.0}, "doc_topic_prior"),
    ({"topic_word_prior": -1.0}, "topic_word_prior"),
    ({"max_iter": -1}, "max_iter"),
    ({"n_jobs": 0}, "n_jobs"),
])
def test_bad_parameters(small, kw, match):
    args = dict(n_components=3, max_iter=1)
    args.update(kw)
    for cls in (ESCA, CollapsedGibbs, CVB0):
        with pytest.raises(ValueError, match=match):
            cls(**args).fit(small)


@pytest.mark.parametrize("gamma_dtype", ["float32", "float16"])
def test_cvb0_starts_from_random_topic_assignments(gamma_dtype):
    """init="assignments": every (document, word) entry starts one-hot on a topic drawn uniformly from its
    document's stream (the slow twin draws the same topics with the library's stream and counts them);
    init="soft" starts near 1/K."""
    from scalable_bayes.rng import draw_index, stream

    X = sp.csr_matrix(np.random.default_rng(3).poisson(1.2, (40, 30)))  # entries with several tokens
    assert X.data.max() >= 3
    K, seed = 7, 11
    cvb = CVB0(n_components=K, max_iter=0, random_state=seed, gamma_dtype=gamma_dtype).fit(X)
    D, W, T = np.zeros((40, K)), np.zeros((30, K)), np.zeros(K)
    G = np.zeros((X.nnz, K))
    for m in range(40):
        st = np.uint64(stream(np.uint64(seed), 0, m))  # a stream state (Python returns it as an int)
        for e in range(X.indptr[m], X.indptr[m + 1]):
            st, k = draw_index(st, K)
            st = np.uint64(st)
            G[e, k] = 1.0
            D[m, k] += X.data[e]
            W[X.indices[e], k] += X.data[e]
            T[k] += X.data[e]
    np.testing.assert_array_equal(cvb.responsibilities(), G)
    np.testing.assert_array_equal(cvb._Dd, D)
    np.testing.assert_array_equal(cvb._Wc.reshape(30, K), W)
    np.testing.assert_array_equal(cvb._Tc, T)
    soft = CVB0(n_components=K, max_iter=0, random_state=seed, init="soft", gamma_dtype=gamma_dtype).fit(X)
    assert soft.responsibilities().min() > 0.0 and soft.responsibilities().max() < 0.5
    with pytest.raises(ValueError, match="init must be 'assignments'"):
        CVB0(n_components=K, max_iter=0, init="hard").fit(X)


def test_cvb0_bad_gamma_dtype(small):
    with pytest.raises(ValueError, match="gamma_dtype"):
        CVB0(n_components=3, max_iter=1, gamma_dtype="float64").fit(small)


def test_cvb0_auto_storage_follows_the_size_only(small, monkeypatch):
    """gamma_dtype="auto" (the default) stores float32 while nnz x K x 4 bytes is within AUTO_FLOAT32_BYTES and
    half precision above, whatever the machine; the fit equals the explicit storage's bit for bit."""
    X = sp.csr_matrix(small)
    K = 4
    assert CVB0.resolve_gamma_dtype(X.nnz, K) == "float32"
    assert CVB0.resolve_gamma_dtype(10**7, 1000) == "float16"  # 40 GB in float32
    assert CVB0.resolve_gamma_dtype(2**30, 2) == "float32" and CVB0.resolve_gamma_dtype(2**30 + 1, 2) == "float16"
    auto = CVB0(n_components=K, max_iter=3, random_state=1).fit(small)
    assert auto.gamma_dtype_ == "float32" and auto._gamma.dtype == np.float32
    f32 = CVB0(n_components=K, max_iter=3, random_state=1, gamma_dtype="float32").fit(small)
    np.testing.assert_array_equal(auto.components_, f32.components_)
    monkeypatch.setattr(CVB0, "AUTO_FLOAT32_BYTES", X.nnz * K * 4 - 1)  # the same corpus just above the limit
    half = CVB0(n_components=K, max_iter=3, random_state=1).fit(small)
    assert half.gamma_dtype_ == "float16" and half._gamma.dtype == np.uint16
    f16 = CVB0(n_components=K, max_iter=3, random_state=1, gamma_dtype="float16").fit(small)
    np.testing.assert_array_equal(half.components_, f16.components_)


@pytest.mark.parametrize("gamma_dtype,item", [("float16", 2), ("float32", 4)])
def test_cvb0_state_size_and_memory_guard(small, monkeypatch, gamma_dtype, item):
    """state_nbytes is the predicted size (gamma: item bytes per (entry, topic)); a state larger than the
    available memory is refused before anything is allocated, with the sizes and the fixes named."""
    import scalable_bayes.utils as utils

    K = 5
    m = CVB0(n_components=K, max_iter=1, gamma_dtype=gamma_dtype).fit(small)
    X = sp.csr_matrix(small)
    n_docs = int((np.diff(X.indptr) > 0).sum())
    assert m._gamma.dtype.itemsize == item
    assert m.state_nbytes() == CVB0.predict_state_nbytes(X.nnz, n_docs, X.shape[1], K, gamma_dtype)
    assert m.state_nbytes() == X.nnz * K * item + 8 * (n_docs + X.shape[1] + 1) * K
    monkeypatch.setattr(utils, "available_memory_bytes", lambda: m.state_nbytes() - 1)
    with pytest.raises(ValueError, match="reduce K") as err:
        CVB0(n_components=K, max_iter=1, gamma_dtype=gamma_dtype).fit(small)
    assert ("gamma_dtype='float16'" in str(err.value)) == (gamma_dtype == "float32")
    monkeypatch.setattr(utils, "available_memory_bytes", lambda: m.state_nbytes())
    CVB0(n_components=K, max_iter=1, gamma_dtype=gamma_dtype).fit(small)


def test_float64_bit_intrinsics_round_trip():
    from numba import njit

    from scalable_bayes.intrinsics import bits_float64, float64_bits

    @njit
    def ops(xs, bits, back):
        for i in range(xs.shape[0]):
            bits[i] = float64_bits(xs[i])
            back[i] = bits_float64(bits[i])

    xs = np.array([0.0, -0.0, 1.0, -2.5, 5e-324, np.inf, -np.inf, 1e300, np.pi])
    bits, back = np.empty(xs.size, np.int64), np.empty(xs.size)
    ops(xs, bits, back)
    np.testing.assert_array_equal(bits, xs.view(np.int64))
    np.testing.assert_array_equal(back.view(np.int64), xs.view(np.int64))


@pytest.mark.parametrize("dmin", [-1, 2.5, "all"])
def test_bad_dense_min_topics(small, dmin):
    with pytest.raises((ValueError, TypeError), match="dense_min_topics|int"):
        ESCA(n_components=3, max_iter=1, dense_min_topics=dmin).fit(small)


@pytest.mark.parametrize("K,want", [(13, 4), (89, 8), (100, 10), (300, 30), (1000, 100)])
def test_default_dense_threshold_and_the_memory_it_costs(K, want):
    """The default threshold is max(8, K // 10) nonzero topics, or fewer where a dense count row (Kp counts)
    is already no larger than the sparse row it replaces (one topic id + one float64 per nonzero topic:
    4 of K = 13); the dense rows of a fit then take at most 3 times the memory the sparse rows of the same
    words would (2.67 at K = 89, the worst case of the rule)."""
    X, _, _ = naive.synthetic_lda(n_docs=80, n_words=60, n_topics=5, doc_len=120, alpha=0.5, seed=7)
    m = ESCA(n_components=K, doc_topic_prior=0.5, max_iter=1, random_state=0, n_jobs=1).fit(X)
    dense_row = m._Kp * m._W[0].itemsize
    per_topic = m._D[0].itemsize + m._wcoef.itemsize
    assert m._dense_min == want
    assert m._dense_min == min(-(-dense_row // per_topic), max(8, K // 10))
    assert dense_row <= 3 * m._dense_min * per_topic
    nnz = (m._W[0].reshape(-1, K) != 0).sum(1)
    # the layout of the next sweep from the current counts
    V = nnz.size
    wptr, dslot = np.zeros(V + 1, np.int64), np.empty(V, np.int32)
    _, nd = kern.esca_word_nnz(m._W[0].copy(), K, V, wptr, np.zeros(1, np.uint64), 1, False, dslot, m._dense_min,
                               m._hslot)
    assert 0 < nd < V and nd == (nnz >= m._dense_min).sum()
    assert nd * dense_row <= 3 * nnz[dslot >= 0].sum() * per_topic


def test_bad_counts(small):
    neg = small.astype(np.float64).copy()
    neg.data[0] = -1
    with pytest.raises(ValueError, match="negative"):
        ESCA(n_components=3, max_iter=1).fit(neg)
    frac = small.astype(np.float64).copy()
    frac.data[0] = 0.5
    with pytest.raises(ValueError, match="non-integer"):
        CollapsedGibbs(n_components=3, max_iter=1).fit(frac)
    with pytest.raises(ValueError, match="empty"):
        CVB0(n_components=3, max_iter=1).fit(sp.csr_matrix((4, 5), dtype=np.int32))


def test_oov_columns_rejected(small):
    m = ESCA(n_components=3, max_iter=1).fit(small)
    wider = sp.hstack([small, sp.csr_matrix(np.ones((small.shape[0], 2), np.int32))]).tocsr()
    with pytest.raises(ValueError, match="vocabulary"):
        m.transform(wider)
    with pytest.raises(ValueError, match="vocabulary"):
        ESCA(n_components=3, max_iter=1).fit(small, X_heldout=wider)


def test_empty_documents_skipped_and_counted(small, caplog):
    X = sp.vstack([small[:5], sp.csr_matrix((2, small.shape[1]), dtype=np.int32), small[5:10]]).tocsr()
    with caplog.at_level("INFO"):
        m = ESCA(n_components=3, max_iter=2).fit(X)
    assert m.n_empty_docs_ == 2
    assert "skipped 2 empty documents" in caplog.text
    np.testing.assert_allclose(m.components_.sum() - 0.1 * m.components_.size, X.sum())


# ---------------------------------------------------------------------------- bad parameters: clear errors


@pytest.mark.parametrize("cls", ["ESCA", "CollapsedGibbs", "CVB0"])
@pytest.mark.parametrize("K, exc", [(0, ValueError), (-1, ValueError), (2.5, ValueError), (float("nan"), ValueError),
                                    ("10", TypeError), (None, TypeError)])
def test_bad_n_components_names_the_parameter(cls, K, exc):
    import scalable_bayes.inference.lda as lda
    X = sp.csr_matrix(np.array([[1, 2, 0], [0, 1, 3]], dtype=np.int32))
    with pytest.raises(exc, match="n_components"):
        getattr(lda, cls)(n_components=K, max_iter=1).fit(X)


@pytest.mark.parametrize("cls", ["ESCA", "CollapsedGibbs", "CVB0"])
def test_seed_none_draws_fresh_entropy_and_records_it(cls):
    import scalable_bayes.inference.lda as lda
    X = sp.csr_matrix(np.random.default_rng(0).poisson(1.0, size=(30, 20)).astype(np.int32))
    a = getattr(lda, cls)(n_components=3, max_iter=3, random_state=None).fit(X)
    b = getattr(lda, cls)(n_components=3, max_iter=3, random_state=None).fit(X)
    assert isinstance(a.seed_, int) and a.seed_ != b.seed_
    again = getattr(lda, cls)(n_components=3, max_iter=3, random_state=a.seed_).fit(X)
    np.testing.assert_array_equal(a.components_, again.components_)


@pytest.mark.parametrize("seed, exc", [(-1, ValueError), (2**63, ValueError), (1.5, TypeError), ("0", TypeError)])
def test_bad_seed_names_the_parameter(seed, exc):
    from scalable_bayes.inference.lda import ESCA
    X = sp.csr_matrix(np.array([[1, 2, 0], [0, 1, 3]], dtype=np.int32))
    with pytest.raises(exc, match="random_state"):
        ESCA(n_components=2, max_iter=1, random_state=seed).fit(X)


@pytest.mark.parametrize("cls", ["ESCA", "CollapsedGibbs", "CVB0"])
@pytest.mark.parametrize("method", ["score_heldout", "transform"])
def test_unfitted_estimator_raises_not_fitted(cls, method):
    from sklearn.exceptions import NotFittedError

    import scalable_bayes.inference.lda as lda
    X = sp.csr_matrix(np.array([[1, 2, 0], [0, 1, 3]], dtype=np.int32))
    with pytest.raises(NotFittedError, match="fit"):
        getattr(getattr(lda, cls)(n_components=2), method)(X)


# ---------------------------------------------------------------------------- ESCA's random start


def _prior_start_twin(X, K, alpha, seed):
    """Slow twin of ``esca_init`` with a prior start: per document the proportions from the library's
    Dirichlet draw on the key of (seed, 0, m), then each token by inverse CDF over their running sums, in CSR
    order; returns the dense document-topic and topic-word counts."""
    from scalable_bayes import rng as sbr
    from scalable_bayes.manifolds.simplex import dirichlet

    M, V = X.shape
    D = np.zeros((M, K), np.int64)
    W = np.zeros((K, V), np.int64)
    cum = np.empty(K)
    key = np.empty(2, np.uint64)
    for m in range(M):
        s, e = X.indptr[m], X.indptr[m + 1]
        if e == s:
            continue
        sbr.key_from_stream(seed, 0, m, key)
        dirichlet(key, np.full(K, alpha), cum)
        cum = np.cumsum(cum)
        z = cum[-1]
        for j in range(s, e):
            for _ in range(int(X.data[j])):
                u = sbr.uniform(key) * z
                k = int(np.searchsorted(cum, u, side="right"))
                D[m, k] += 1
                W[k, X.indices[j]] += 1
    return D, W


@pytest.mark.parametrize("n_threads", [1, 2])
def test_esca_prior_start_matches_twin(corpus, n_threads):
    """init="prior": the initial counts are exactly the twin's (same keys, same inverse CDF), on 1 and 2
    threads; max_iter=0 stops after the initialisation."""
    Xtr, _, _ = corpus
    X = Xtr[:60]
    m = ESCA(n_components=7, doc_topic_prior=0.3, max_iter=0, random_state=4, n_jobs=n_threads, init="prior").fit(X)
    D_ref, W_ref = _prior_start_twin(X.tocsr(), 7, 0.3, m.seed_)
    np.testing.assert_array_equal(m.doc_topic_counts_.toarray(), D_ref)
    np.testing.assert_array_equal(np.rint(m.components_ - m.topic_word_prior).astype(np.int64), W_ref)


@pytest.mark.parametrize("alpha", [0.05, 0.5, 3.0])
def test_esca_prior_start_is_dirichlet_multinomial(alpha):
    """Each document's initial topic counts follow LDA's prior, DirMult(N, alpha 1_K): the mean and the
    variance of D_mk over 2,000 documents of N = 40 tokens lie within 4 Monte Carlo standard errors of
    N/K and N (1/K)(1 - 1/K)(N + K alpha)/(1 + K alpha). The uniform start (variance N (1/K)(1 - 1/K))
    fails the variance test at every alpha here."""
    M, N, K = 2000, 40, 5
    X = sp.csr_matrix(np.full((M, 1), N, np.int32))  # one word type: every document has N tokens of it
    p = 1.0 / K
    var = N * p * (1 - p) * (N + K * alpha) / (1 + K * alpha)
    for init, should_pass in (("prior", True), ("uniform", False)):
        m = ESCA(n_components=K, doc_topic_prior=alpha, max_iter=0, random_state=3, n_jobs=1, init=init).fit(X)
        Dm = m.doc_topic_counts_.toarray().astype(float)
        x = Dm[:, 0]  # documents are independent; one topic's counts (exchangeable topics)
        se_mean = np.sqrt(var / M)
        # standard error of the sample variance from the 4th central moment (estimated)
        se_var = np.sqrt(max(np.mean((x - x.mean()) ** 4) - x.var() ** 2, 1e-12) / M)
        assert abs(x.mean() - N * p) < 4 * se_mean
        assert (abs(x.var(ddof=1) - var) < 4 * se_var) == should_pass, (init, x.var(ddof=1), var, se_var)


def test_esca_prior_start_thread_invariant_and_bad_init(corpus, small):
    Xtr, Xte, _ = corpus
    outs = [ESCA(n_components=6, doc_topic_prior=0.2, max_iter=3, random_state=8, n_jobs=nt, init="prior").fit(Xtr)
            for nt in (1, 2)]
    np.testing.assert_array_equal(outs[0].components_, outs[1].components_)
    u = ESCA(n_components=6, doc_topic_prior=0.2, max_iter=3, random_state=8, n_jobs=1).fit(Xtr)
    assert not np.array_equal(u.components_, outs[0].components_)  # the default start is the paper's uniform one
    with pytest.raises(ValueError, match="init must be 'uniform'"):
        ESCA(n_components=3, max_iter=1, init="random").fit(small)


@pytest.mark.parametrize("n", [0, 1, 2, 31, 32, 33, 64, 65, 200, 1000])
def test_sorted_word_rows_are_numpys_stable_order(n):
    """The read rows' sort (decreasing coefficient, ties in topic order) equals NumPy's stable argsort of
    -coefficient: the merge of the insertion-sorted runs keeps ties in order at every width."""
    from scalable_bayes.inference.lda._kernels.esca_word import _sort_row_desc

    rng = np.random.default_rng(n)
    for ties in (True, False):
        o = 3
        coef = (rng.integers(0, 4, n + o + 2) if ties else rng.random(n + o + 2)).astype(np.float64)
        top = rng.permutation(np.arange(n + o + 2) % 256).astype(np.uint8)
        c, t = coef.copy(), top.copy()
        _sort_row_desc(c, t, o, n)
        order = np.argsort(-coef[o:o + n], kind="stable")
        np.testing.assert_array_equal(c[o:o + n], coef[o:o + n][order])
        np.testing.assert_array_equal(t[o:o + n], top[o:o + n][order])
        np.testing.assert_array_equal(c[:o], coef[:o])  # outside the row: untouched
        np.testing.assert_array_equal(c[o + n:], coef[o + n:])
