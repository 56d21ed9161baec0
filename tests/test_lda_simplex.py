"""Semi-collapsed LDA on the simplex (SCIR Sec. 4.1): the within-document Gibbs counts against a pure-Python
twin drawing from the same streams, thread-count invariance, bad input, and SCIR learning known topics."""

from __future__ import annotations

import numba
import numpy as np
import pytest
import scipy.sparse as sp

from naive_lda import simplex_lda_topic_counts, synthetic_lda
from scalable_bayes import samplers
from scalable_bayes.evaluation.heldout import heldout_loglik
from scalable_bayes.models.lda_simplex import SimplexLDA
from scalable_bayes.rng import make_key, next_u64


@pytest.fixture(scope="module")
def small():
    X, phi, _ = synthetic_lda(n_docs=12, n_words=30, n_topics=3, doc_len=15, seed=3)
    return X, phi


@pytest.mark.parametrize("sweeps, burn", [(4, 2), (3, 0)])
def test_gibbs_counts_equal_the_naive_twin_draw_for_draw(small, sweeps, burn):
    X, _ = small
    m = SimplexLDA(X, 3, alpha=0.3, beta=0.05, sweeps=sweeps, burn=burn)
    theta = m.init_position(5)
    theta[4] = 0.0  # a word that topic 0 cannot emit
    docs = np.array([7, 0, 3, 11, 5])
    got = m.topic_counts(theta, docs, seed=123)
    want = simplex_lda_topic_counts(theta, X, 3, docs, 0.3, sweeps, burn, 123)
    np.testing.assert_array_equal(got.reshape(3, -1), want)
    assert got.sum() == (sweeps - burn) * X[docs].sum()  # every kept token counted once per kept sweep
    # grad: one next_u64 of the key seeds the call; n^ = D/|S| E[n_dkw]
    key = make_key(9)
    seed = np.uint64(next_u64(make_key(9)))  # a full 64-bit seed, as the chain gives
    g = m.grad(theta, docs, key)
    want = simplex_lda_topic_counts(theta, X, 3, docs, 0.3, sweeps, burn, seed)
    np.testing.assert_allclose(g, want.ravel() * (12 / 5) / (sweeps - burn), rtol=1e-14)
    k2 = make_key(9)
    next_u64(k2)
    np.testing.assert_array_equal(key, k2)  # the call took exactly one draw from the chain's key


def test_word_no_topic_emits_draws_uniformly(small):
    X, _ = small
    m = SimplexLDA(X, 3, sweeps=2, burn=1)
    theta = m.init_position(1)
    w = int(X[2].indices[0])
    theta[[w, 30 + w, 60 + w]] = 0.0
    got = m.topic_counts(theta, np.array([2]), seed=4)
    np.testing.assert_array_equal(got.reshape(3, -1), simplex_lda_topic_counts(theta, X, 3, [2], 0.1, 2, 1, 4))
    assert got.reshape(3, -1)[:, w].sum() == X[2, w]


def test_counts_identical_for_one_and_two_threads():
    X, _, _ = synthetic_lda(n_docs=80, n_words=120, n_topics=4, doc_len=50, seed=1)
    m = SimplexLDA(X, 6, sweeps=6, burn=2)
    theta = m.init_position(2)
    docs = np.arange(3, 80, 2)
    prev = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        a = m.grad(theta, docs, make_key(8))
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        b = m.grad(theta, docs, make_key(8))
    finally:
        numba.set_num_threads(prev)
    assert a.tobytes() == b.tobytes()
    # any split of the documents into work bins (1 to 7 bins) gives the same counts
    from scalable_bayes.models.lda_simplex import balanced_bins, batch_topic_counts, topics_transposed

    pi_t = np.empty((m.V, m.K))
    assert topics_transposed(theta, m.K, m.V, pi_t)
    outs = []
    for nbins in (1, 3, 7):
        order, bin_ptr = balanced_bins(m.doc_len[docs], nbins)
        assert sorted(order.tolist()) == list(range(len(docs))) and bin_ptr[-1] == len(docs)
        out = np.empty(m.dim)
        batch_topic_counts(pi_t, m.indptr, m.indices, m.tok_ptr, m.tok_word, m.tok_entry, docs, order, bin_ptr,
                           m.alpha, m.sweeps, m.burn, np.uint64(99), 1.0, out)
        outs.append(out.tobytes())
    assert outs[0] == outs[1] == outs[2]


@pytest.mark.parametrize("kw, match", [
    (dict(alpha=0.0), "alpha must be positive"),
    (dict(beta=-1.0), "beta must be positive"),
    (dict(n_topics=1), "n_topics must be an integer >= 2"),
    (dict(sweeps=5, burn=5), "lower burn or raise sweeps"),
])
def test_bad_settings_raise(small, kw, match):
    X, _ = small
    args = dict(n_topics=3) | kw
    with pytest.raises(ValueError, match=match):
        SimplexLDA(X, **args)


def test_documents_out_of_range_raise(small):
    m = SimplexLDA(small[0], 3)
    with pytest.raises(ValueError, match="document indices"):
        m.topic_counts(m.init_position(0), np.array([0, 12]), seed=1)


def test_negative_counts_raise():
    X = sp.csr_matrix(np.array([[1, 2, 0], [0, -1, 3]]))
    with pytest.raises(ValueError, match="non-negative integers"):
        SimplexLDA(X, 2)


def test_a_topic_without_mass_gives_nan_and_the_driver_stops(small):
    X, _ = small
    m = SimplexLDA(X, 3)
    theta = m.init_position(0)
    theta[:30] = 0.0
    assert np.isnan(m.grad(theta, np.arange(3), make_key(0))).all()


def test_scir_learns_known_topics():
    """SCIR on synthetic LDA data (K = 5, V = 200, 300 documents of 60 tokens from sparse Dir(0.05)
    topics): after 300 iterations of 25 documents the held-out per-word log-likelihood with the sampled
    topics is within 0.05 nats of the true topics' score and far above random topics'."""
    X, phi, _ = synthetic_lda(n_docs=300, n_words=200, n_topics=5, doc_len=60, alpha=0.2, beta=0.05, seed=0)
    Xtr, Xte = X[:250], X[250:]
    m = SimplexLDA(Xtr, 5, alpha=0.2, beta=0.05, sweeps=10, burn=5)
    res = samplers.run_chain(samplers.scir(), m.model(), m.init_position(0), seed=1, n_steps=300, step_size=0.5,
                             batch_size=25, step_decay=(20.0, 0.5), burnin=250, thin=10)
    assert np.allclose(res.samples.reshape(-1, 5, 200).sum(axis=2), 1.0)  # topics on the simplex
    pi = res.samples.mean(axis=0).reshape(5, 200)
    score = heldout_loglik(pi, Xte, 0.2, n_sweeps=20, seed=0)
    true = heldout_loglik(phi, Xte, 0.2, n_sweeps=20, seed=0)
    rand = heldout_loglik(np.random.default_rng(0).dirichlet(np.ones(200), 5), Xte, 0.2, n_sweeps=20, seed=0)
    assert score > true - 0.05, (score, true, rand)
    assert score > rand + 0.5 * (true - rand), (score, true, rand)


@pytest.mark.parametrize("a", [0.002, 0.05, 0.5, 0.95])
def test_cir_small_shape_gamma_follows_the_gamma_law(a):
    """The GS gamma draw the CIR transition uses below shape 1 (both branches of its proposal), KS test."""
    import scipy.stats as st

    from scalable_bayes.rng import _gamma_below_one

    key = make_key(21)
    x = np.array([_gamma_below_one(key, a) for _ in range(6000)])
    assert (x >= 0).all() and np.isfinite(x).all()
    if a >= 0.05:  # tiny shapes: most draws underflow to 0.0; compare on the draws above 1e-300
        assert st.kstest(x, st.gamma(a).cdf).pvalue > 1e-3
    else:
        big = x[x > 1e-300]
        assert abs(big.size / x.size - st.gamma(a).sf(1e-300)) < 0.03
        assert st.kstest(np.log(big), lambda y: st.gamma(a).cdf(np.exp(y)) / st.gamma(a).sf(1e-300)
                         - st.gamma(a).cdf(1e-300) / st.gamma(a).sf(1e-300)).pvalue > 1e-3
