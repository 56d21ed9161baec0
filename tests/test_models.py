"""Models for SG-MCMC: gradients against finite differences / naive references, LDA kernels, quality floors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import logsumexp

import naive_samplers as naive
from scalable_bayes import samplers
from scalable_bayes.models import bnn, bpmf, lda
from scalable_bayes.rng import make_key


def test_bnn_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    X = rng.random((30, 12))
    y = rng.integers(0, 4, 30)
    m = bnn.BNN(X, y, hidden=5, n_classes=4, gibbs_every=10**9)
    m.lam[:] = [0.5, 2.0, 1.5, 3.0]
    m._calls = 1  # no Gibbs refresh of lambda during the check
    th = rng.normal(0, 0.5, m.dim)
    idx = np.array([1, 4, 7, 20, 29])

    def U(t):
        P = m.predict_proba(t, X[idx])
        nll = -np.log(P[np.arange(len(idx)), y[idx]]).sum() * (30 / len(idx))
        prior = sum(0.5 * m.lam[k] * (t[m.bounds[k]:m.bounds[k + 1]] ** 2).sum() for k in range(4))
        return nll + prior

    g = m.grad(th, idx, None)
    coords = list(rng.choice(m.dim, 25, replace=False)) + [m.dim - 1, m.bounds[1], m.bounds[2]]
    num = naive.numerical_grad(U, th, coords=coords)
    for i in coords:
        assert g[i] == pytest.approx(num[i], rel=1e-5, abs=1e-6)


def test_bnn_fixed_prior_precision_is_never_resampled():
    rng = np.random.default_rng(2)
    X, y = rng.random((20, 6)), rng.integers(0, 3, 20)
    m = bnn.BNN(X, y, hidden=4, n_classes=3, gibbs_every=1, prior_precision=[0.5, 2.0, 1.5, 3.0])
    th = rng.normal(0, 0.5, m.dim)
    g0 = m.grad(th, np.arange(5), None)
    for _ in range(5):
        assert np.array_equal(m.grad(th, np.arange(5), None), g0)
    assert list(m.lam) == [0.5, 2.0, 1.5, 3.0]
    free = bnn.BNN(X, y, hidden=4, n_classes=3, gibbs_every=1)
    free.grad(th, np.arange(5), None)
    assert not np.array_equal(free.lam, np.ones(4))  # the default resamples at the first call
    assert list(bnn.BNN(X, y, hidden=4, n_classes=3, prior_precision=2.0).lam) == [2.0] * 4
    for bad in (0.0, -1.0, [1.0, 2.0], float("nan")):
        with pytest.raises(ValueError, match="prior_precision"):
            bnn.BNN(X, y, hidden=4, n_classes=3, prior_precision=bad)


def test_bpmf_gradient_matches_finite_differences():
    rng = np.random.default_rng(1)
    users, items = rng.integers(0, 6, 40), rng.integers(0, 5, 40)
    r = rng.integers(1, 6, 40).astype(float)
    m = bpmf.BPMF(users, items, r, 6, 5, rank=3, tau=1.7, gibbs_every=10**9)
    m._calls = 1
    m.lam_U, m.lam_V, m.lam_a, m.lam_b = np.array([1.0, 2.0, 3.0]), np.array([0.5, 1.0, 1.5]), 0.7, 1.3
    th = rng.normal(0, 0.5, m.dim)
    idx = np.array([0, 3, 3, 9, 17, 39])  # a repeated index must accumulate

    def U(t):
        Uu, V, a, b = m.unpack(t)
        pred = m.mu + a[users[idx]] + b[items[idx]] + np.einsum("ij,ij->i", Uu[users[idx]], V[items[idx]])
        nll = 0.5 * m.tau * ((r[idx] - pred) ** 2).sum() * 40 / len(idx)
        prior = 0.5 * ((Uu**2) @ m.lam_U).sum() + 0.5 * ((V**2) @ m.lam_V).sum() + 0.5 * m.lam_a * a @ a + 0.5 * m.lam_b * b @ b
        return nll + prior

    g = m.grad(th, idx, None)
    num = naive.numerical_grad(U, th)
    np.testing.assert_allclose(g, [num[i] for i in range(m.dim)], rtol=1e-5, atol=1e-6)


def _toy_corpus(seed=0, D=40, W=25, K=3, L=30):
    rng = np.random.default_rng(seed)
    topics = rng.dirichlet(np.full(W, 0.1), K)
    rows = []
    for _ in range(D):
        th = rng.dirichlet(np.full(K, 0.3))
        rows.append(rng.multinomial(L, th @ topics))
    return sp.csr_matrix(np.array(rows)), topics


def test_lda_softmax_and_gibbs_match_naive():
    counts, _ = _toy_corpus()
    m = lda.SemiCollapsedLDA(counts, n_topics=3, sweeps=4, burn=2)
    th = m.init_position(0)
    pi = m.topics(th)
    ref = np.exp(th.reshape(3, -1) - logsumexp(th.reshape(3, -1), axis=1, keepdims=True))
    np.testing.assert_allclose(pi, ref, rtol=1e-12)
    key = make_key(4)
    ref_rng = naive.NaiveRNG(key.copy())
    docs = np.array([0, 5, 7], dtype=np.int64)
    ekw, ek = np.zeros_like(pi), np.zeros(3)
    lda.expected_counts(pi, m.ptr, m.words, docs, 0.1, 4, 2, key, ekw, ek)
    rkw, rk = naive.lda_expected_counts(pi, m.ptr, m.words, docs, 0.1, 4, 2, ref_rng)
    np.testing.assert_allclose(ekw, rkw, atol=1e-12)
    np.testing.assert_allclose(ek, rk, atol=1e-12)
    # expected counts sum to the document lengths
    assert ek.sum() == pytest.approx(sum(m.ptr[d + 1] - m.ptr[d] for d in docs))


def test_lda_grad_matches_naive_formula():
    """The fused gradient (softmax, transposed Gibbs kernel, one-pass assembly, reused buffers) equals the
    App. H expression built from the pure-Python Gibbs twin with the same random numbers, on repeated calls."""
    counts, _ = _toy_corpus()
    m = lda.SemiCollapsedLDA(counts, n_topics=3, sweeps=4, burn=2)
    key = make_key(11)
    ref_rng = naive.NaiveRNG(key.copy())
    for i, docs in enumerate([np.array([0, 5, 7]), np.array([3, 1]), np.array([2, 4, 6, 8])]):
        th = m.init_position(i) * (1 + i)
        g = m.grad(th, docs, key)
        pi = m.topics(th)
        ekw, ek = naive.lda_expected_counts(pi, m.ptr, m.words, docs, m.alpha, 4, 2, ref_rng)
        ref = -((m.beta - th.reshape(3, -1)) / m.sigma**2 + m.D / len(docs) * (ekw - pi * ek[:, None]))
        np.testing.assert_allclose(g, ref.ravel(), rtol=1e-12, atol=1e-12)


def test_lda_sgnht_lowers_heldout_perplexity():
    counts, _ = _toy_corpus(D=200, W=30, K=3, L=40)
    train, test = counts[:160], counts[160:]
    m = lda.SemiCollapsedLDA(train, n_topics=3, sweeps=6)
    ptr, words = lda.tokens_from_counts(test)
    optr, ow, hptr, hw = lda.split_halves(ptr, words)
    th0 = m.init_position(0)

    def perp(th):
        out = np.empty(hw.shape[0])
        lda.completion_probs(m.topics(th), optr, ow, hptr, hw, m.alpha, 20, make_key(1), out)
        return float(np.exp(-np.mean(np.log(out))))

    res = samplers.run_chain(samplers.sgnht_reformulated(a=0.1), m.model(), th0, seed=0, n_steps=300, step_size=2e-3,
                             batch_size=20, burnin=299)
    p0, p1 = perp(th0), perp(res.state.position)
    assert p1 < 0.8 * p0, (p0, p1)


MNIST = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mnist"


@pytest.mark.skipif(not (MNIST / "t10k-images-idx3-ubyte.gz").exists(), reason="MNIST mirror not present")
def test_bnn_sgnht_quality_floor_on_mnist():
    from scalable_bayes.corpora import readers
    from scalable_bayes_papers.sgnht.data import split_mnist  # the SGNHT paper's MNIST stand-in split
    from threadpoolctl import threadpool_limits

    im = readers.read_idx(str(MNIST / "t10k-images-idx3-ubyte.gz"))
    lb = readers.read_idx(str(MNIST / "t10k-labels-idx1-ubyte.gz"))
    (Xtr, ytr), _, (Xte, yte) = split_mnist(im, lb, 3000, 1000, seed=0)
    m = bnn.BNN(Xtr, ytr, hidden=50, seed=0)
    with threadpool_limits(1, "blas"):
        res = samplers.run_chain(samplers.sgnht_reformulated(a=0.01), m.model(), m.init_position(0), seed=0,
                                 n_steps=800, step_size=1e-6, batch_size=20, burnin=799)
    err = 100 * np.mean(m.predict_proba(res.state.position, Xte).argmax(1) != yte)
    assert err < 20.0, err


def test_lda_document_completion_matches_naive():
    counts, _ = _toy_corpus(seed=3, D=6)
    ptr, words = lda.tokens_from_counts(counts)
    optr, ow, hptr, hw = lda.split_halves(ptr, words)
    assert len(ow) + len(hw) == len(words) and hptr[-1] == len(hw)
    m = lda.SemiCollapsedLDA(counts, n_topics=3)
    pi = m.topics(m.init_position(2))
    key = make_key(8)
    ref = naive.lda_completion_probs(pi, optr, ow, hptr, hw, 0.1, 6, naive.NaiveRNG(key.copy()))
    out = np.empty(hw.shape[0])
    lda.completion_probs(pi, optr, ow, hptr, hw, 0.1, 6, key, out)
    np.testing.assert_allclose(out, ref, rtol=1e-12)
    assert np.all((out > 0) & (out < 1))


def test_split_halves_alternates_positions_within_each_document():
    words = np.arange(100, 112, dtype=np.int64)
    ptr = np.array([2, 2, 3, 7, 12])  # tokens before ptr[0] ignored; an empty and a 1-token document
    optr, ow, hptr, hw = lda.split_halves(ptr, words)
    ref_o, ref_h = [], []
    for d in range(len(ptr) - 1):
        toks = list(words[ptr[d]:ptr[d + 1]])
        ref_o.append(toks[0::2])
        ref_h.append(toks[1::2])
    assert [list(ow[optr[d]:optr[d + 1]]) for d in range(4)] == ref_o
    assert [list(hw[hptr[d]:hptr[d + 1]]) for d in range(4)] == ref_h
    assert ow.dtype == hw.dtype == optr.dtype == np.int64


# ------------------------------------------------------------------ data outside a likelihood's domain is refused


def test_logistic_regression_refuses_minus_one_labels_and_says_how_to_map_them():
    from scalable_bayes import models

    X, y, _ = models.synthetic_logistic_data(500, 3, seed=0)
    with pytest.raises(ValueError) as info:  # {-1, 1}: the posterior mean went to 175, -313, 87 (truth 1, -2, 0.5)
        models.logistic_regression(X, 2 * y - 1)
    msg = str(info.value)
    assert "labels y must be 0 or 1" in msg and "found -1" in msg and "(y + 1) / 2" in msg, msg


@pytest.mark.parametrize("labels", [
    lambda y: y * 2,  # {0, 2}
    lambda y: y + 0.5,  # fractional
    lambda y: np.where(np.arange(y.size) == 3, np.nan, y),  # a NaN label
    lambda y: np.array(["a"] * y.size),  # not numbers
])
def test_logistic_regression_refuses_labels_outside_0_1(labels):
    from scalable_bayes import models

    X, y, _ = models.synthetic_logistic_data(100, 2, seed=1)
    with pytest.raises(ValueError, match="labels y must be"):
        models.logistic_regression(X, labels(y))


def test_logistic_regression_takes_0_1_as_int_float_or_bool_alike():
    from scalable_bayes import models

    X, y, _ = models.synthetic_logistic_data(100, 2, seed=2)
    ref = models.logistic_regression(X, y).data[0]
    for yy in (y.astype(np.int64), y.astype(bool), y.astype(np.float32)):
        assert np.array_equal(models.logistic_regression(X, yy).data[0], ref)


def test_logistic_regression_refuses_non_finite_features():
    from scalable_bayes import models

    X, y, _ = models.synthetic_logistic_data(50, 2, seed=3)
    X[7, 1] = np.inf
    with pytest.raises(ValueError, match="logistic_regression: X holds 1 NaN or infinite"):
        models.logistic_regression(X, y)


@pytest.mark.parametrize("y, words", [
    (np.full(20, 1.7), "whole numbers"),  # was truncated to class 1
    (np.r_[np.zeros(19), 4], "must lie in [0, 4)"),
    (np.r_[np.zeros(19), -1], "must lie in [0, 4)"),
])
def test_bnn_refuses_fractional_or_out_of_range_labels(y, words):
    X = np.random.default_rng(0).random((20, 5))
    with pytest.raises(ValueError) as info:
        bnn.BNN(X, y, hidden=3, n_classes=4)
    assert words in str(info.value)


@pytest.mark.parametrize("users, items, ratings, words", [
    ([0, -1, 1], [0, 1, 2], [3.0, 4.0, 5.0], "users must lie in [0, 2)"),  # -1 wrapped to the last user
    ([0, 1, 2], [0, 1, 2], [3.0, 4.0, 5.0], "users must lie in [0, 2)"),
    ([0, 1, 1], [0, 3, 2], [3.0, 4.0, 5.0], "items must lie in [0, 3)"),
    ([0, 1.5, 1], [0, 1, 2], [3.0, 4.0, 5.0], "whole numbers"),
    ([0, 1, 1], [0, 1, 2], [3.0, np.nan, 5.0], "ratings holds 1 NaN"),
    ([], [], [], "no ratings"),
])
def test_bpmf_refuses_bad_indices_and_ratings(users, items, ratings, words):
    with pytest.raises(ValueError) as info:
        bpmf.BPMF(np.array(users), np.array(items), np.array(ratings), n_users=2, n_items=3, rank=2)
    assert words in str(info.value), str(info.value)


@pytest.mark.parametrize("counts", [
    sp.csr_matrix(np.array([[0.5, 1.2, 0.0], [0.3, 0.0, 2.0]])),  # tf-idf: truncated to whole tokens before
    sp.csr_matrix(np.array([[1, -2, 0], [0, 1, 3]])),
    np.array([[1.0, np.nan, 0.0], [0.0, 1.0, 3.0]]),
])
def test_semicollapsed_lda_refuses_anything_but_token_counts(counts):
    with pytest.raises(ValueError, match="SemiCollapsedLDA: counts"):
        lda.SemiCollapsedLDA(counts, n_topics=2)


@pytest.mark.parametrize("name", ["gaussian_known_variance", "normal_gamma"])
def test_toy_models_refuse_non_finite_or_no_observations(name):
    from scalable_bayes import models

    build = getattr(models, name)
    with pytest.raises(ValueError, match=f"{name}: x holds 1 NaN"):
        build(np.array([0.1, np.nan, 0.3]))
    with pytest.raises(ValueError, match=f"{name}: x is empty"):
        build(np.array([]))
