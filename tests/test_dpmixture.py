"""DP mixture of multinomials (SCIR paper Sec. 4.2): exact slice Gibbs, minibatched SCIR / SGRLD slice sampler."""

from __future__ import annotations

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import gammaln, logsumexp
from sklearn.metrics import adjusted_rand_score

from scalable_bayes.inference import DPMultinomialMixture
from scalable_bayes.inference.dpmixture import _State, sg_params_step
from scalable_bayes.rng import make_key
from scalable_bayes.samplers.simplex import scir_step, sgrld_step


def _synth(K=4, d=40, L=1500, L_test=500, mean_n=10, conc=0.05, seed=0):
    """Well-separated sparse multinomial components (Dir(0.05) over 40 categories), n_i = 1 + Poisson(9)."""
    rng = np.random.default_rng(seed)
    theta = rng.dirichlet(np.full(d, conc), size=K)
    w = np.full(K, 1.0 / K)

    def draw(n):
        z = rng.choice(K, size=n, p=w)
        ni = 1 + rng.poisson(mean_n - 1, size=n)
        return sp.csr_matrix(np.stack([rng.multinomial(ni[i], theta[z[i]]) for i in range(n)])), z

    X, z = draw(L)
    Xt, _ = draw(L_test)
    return X, Xt, theta, w, z


def _true_log_predictive(Xt, theta, w):
    X = Xt.toarray().astype(float)
    n = X.sum(1)
    lc = gammaln(n + 1) - gammaln(X + 1).sum(1)
    with np.errstate(divide="ignore"):
        lt = np.log(theta)
    ll = np.where(X[:, None, :] > 0, X[:, None, :] * lt[None], 0.0).sum(-1)
    return float(np.mean(lc + logsumexp(ll + np.log(w), axis=1)))


@pytest.fixture(scope="module")
def data():
    return _synth()


@pytest.fixture(scope="module")
def gibbs_fit(data):
    X, Xt, *_ = data
    return DPMultinomialMixture("gibbs", max_iter=150, random_state=3).fit(X, X_test=Xt, evaluate_every=10)


def test_gibbs_recovers_clusters_and_log_predictive(data, gibbs_fit):
    X, Xt, theta, w, z = data
    est = gibbs_fit
    big = np.count_nonzero(est.cluster_sizes_ >= 0.02 * X.shape[0])
    assert big == 4, est.cluster_sizes_
    assert adjusted_rand_score(z, est.labels_) > 0.95
    lp = est.trace_["log_predictive"].to_numpy()
    true = _true_log_predictive(Xt, theta, w)
    assert lp[0] < true - 2.0  # the start is poor: the test below can fail
    assert abs(np.mean(lp[-5:]) - true) < 0.1, (lp[-5:], true)
    # score() uses the fitted sample and agrees with the last trace row
    assert est.score(Xt) == pytest.approx(lp[-1], rel=1e-12)
    assert est.components_.shape == (est.weights_.size, X.shape[1])
    np.testing.assert_allclose(est.components_.sum(1), 1.0, rtol=1e-10)
    assert est.weights_.sum() < 1.0 + 1e-12 and est.alpha_ > 0 and est.seed_ == 3
    assert list(est.trace_.columns) == ["iteration", "time", "log_predictive", "n_clusters", "n_instantiated", "alpha",
                                       "cpu_time"]
    assert np.all(np.diff(est.trace_["time"]) >= 0) and np.all(np.diff(est.trace_["cpu_time"]) >= 0)


def _batch_means_z(x, target, n_batches=25):
    """z-statistic of mean(x) - target with the batch-means MCSE."""
    b = np.asarray(x)[: len(x) // n_batches * n_batches].reshape(n_batches, -1).mean(1)
    return (b.mean() - target) / (b.std(ddof=1) / np.sqrt(n_batches))


@pytest.mark.parametrize("kernel", [scir_step])
def test_frozen_allocations_scir_targets_beta_sticks_and_dirichlet_components(kernel):
    """With allocations frozen (fixed counts), one SCIR step per iteration must target v_k ~ Beta(1 + m_k,
    alpha + sum_{j>k} m_j) and theta_k ~ Dir(a + counts_k)."""
    K, d, a, alpha, h = 3, 5, 0.5, 1.5, 0.7
    st = _State(L=10, d=d, kmax=K, a=a, sg=True)
    m = np.array([20.0, 5.0, 3.0])
    counts = np.array([[0, 0, 3, 10, 1], [2, 2, 0, 0, 0], [0, 1, 0, 0, 5]], dtype=float)
    st.mb[:K] = m
    st.cnt[: K * d] = counts.ravel()
    st.G[: K * d] = 1.0
    st.S[: 2 * K] = 1.0
    key = make_key(11)
    n_burn, n_keep = 200, 5000
    v = np.empty((n_keep, K))
    th = np.empty((n_keep, K, d))
    for t in range(n_burn + n_keep):
        assert sg_params_step(kernel, key, h, st, K, d, alpha)
        if t >= n_burn:
            v[t - n_burn] = np.exp(st.lv[:K])
            th[t - n_burn] = np.exp(st.logw[: K * d]).reshape(K, d)
    rest = np.array([m[1:].sum(), m[2:].sum(), 0.0])
    A, B = 1 + m, alpha + rest
    mean_v = A / (A + B)
    var_v = A * B / ((A + B) ** 2 * (A + B + 1))
    for k in range(K):
        assert abs(_batch_means_z(v[:, k], mean_v[k])) < 4.0, (k, v[:, k].mean(), mean_v[k])
        assert abs(_batch_means_z((v[:, k] - mean_v[k]) ** 2, var_v[k])) < 4.0, (k, v[:, k].var(), var_v[k])
    post = a + counts
    mean_th = post / post.sum(1, keepdims=True)
    for k in range(K):
        for j in range(d):
            assert abs(_batch_means_z(th[:, k, j], mean_th[k, j])) < 4.0, (k, j, th[:, k, j].mean(), mean_th[k, j])
    # the same check must reject a wrong target (a stick with 'rest' counting cluster k itself)
    wrong = (1 + m[1]) / (1 + m[1] + alpha + m[1:].sum())
    assert abs(_batch_means_z(v[:, 1], wrong)) > 4.0


def test_identical_for_one_and_two_threads(data):
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs 2 Numba threads")
    X, Xt, *_ = data
    for method, h in (("scir", 0.5), ("gibbs", None)):
        fits = [DPMultinomialMixture(method, step_size=h, batch_size=300, max_iter=30, random_state=5, n_jobs=nt)
                .fit(X, X_test=Xt, evaluate_every=10) for nt in (1, 2)]
        np.testing.assert_array_equal(fits[0].labels_, fits[1].labels_)
        np.testing.assert_array_equal(fits[0].components_, fits[1].components_)
        np.testing.assert_array_equal(fits[0].weights_, fits[1].weights_)
        np.testing.assert_array_equal(fits[0].trace_["log_predictive"], fits[1].trace_["log_predictive"])
        assert fits[0].alpha_ == fits[1].alpha_
    # another seed gives another chain
    other = DPMultinomialMixture("scir", step_size=0.5, batch_size=300, max_iter=30, random_state=6).fit(X)
    assert not np.array_equal(other.labels_, fits[0].labels_) or other.alpha_ != fits[0].alpha_


def test_validation_errors(data):
    X, Xt, *_ = data
    est = lambda **kw: DPMultinomialMixture(**{"method": "scir", "step_size": 0.1, "batch_size": 100,
                                                "max_iter": 2, "random_state": 0, **kw})
    neg = X.copy().astype(float)
    neg.data[0] = -1
    with pytest.raises(ValueError, match="negative counts"):
        est().fit(neg)
    frac = X.copy().astype(float)
    frac.data[0] = 0.5
    with pytest.raises(ValueError, match="non-integer counts"):
        est().fit(frac)
    with pytest.raises(ValueError, match="alpha must be positive"):
        est(alpha=0.0).fit(X)
    with pytest.raises(ValueError, match="base_concentration must be positive"):
        est(base_concentration=-1).fit(X)
    with pytest.raises(ValueError, match="step_size must be positive"):
        est(step_size=0.0).fit(X)
    with pytest.raises(ValueError, match="needs a step_size"):
        est(step_size=None).fit(X)
    with pytest.raises(ValueError, match="batch_size=5000 is larger than the number"):
        est(batch_size=5000).fit(X)
    with pytest.raises(ValueError, match="unknown method 'sgld'"):
        est(method="sgld").fit(X)
    with pytest.raises(ValueError, match="alpha_prior"):
        est(alpha_prior=(1.0, 0.0)).fit(X)
    with pytest.raises(ValueError, match="X_test has 39 columns"):
        est().fit(X, X_test=Xt[:, :39])
    # empty rows: dropped (they carry no likelihood), recorded
    Xe = sp.vstack([X[:50], sp.csr_matrix((1, X.shape[1]))]).tocsr()
    fit = est(batch_size=20).fit(Xe)
    assert fit.n_empty_rows_ == 1 and fit.labels_.shape == (50,)
    with pytest.raises(ValueError, match="every row is empty"):
        est().fit(sp.csr_matrix((3, X.shape[1])))
    # the cap on clusters is an error, never a truncation
    with pytest.raises(RuntimeError, match="more than max_clusters=3"):
        DPMultinomialMixture("gibbs", alpha=50.0, alpha_prior=(50.0, 1.0), max_clusters=3, init_clusters=2,
                             max_iter=20, random_state=0).fit(X)
    # a sampler producing non-finite values stops, naming the iteration
    with pytest.raises(FloatingPointError, match="iteration 1"):
        est(method="sgrld", step_size=1e308).fit(X)


def test_sg_with_all_users_is_close_to_gibbs(data, gibbs_fit):
    """SCIR with batch = all users and a long step is the exact sampler in law (the CIR transition over a
    long time is an exact Gamma draw); a minibatched SCIR chain must come close too."""
    X, Xt, theta, w, _ = data
    g = gibbs_fit.trace_["log_predictive"].to_numpy()[-5:].mean()
    full = DPMultinomialMixture("scir", step_size=30.0, batch_size=X.shape[0], max_iter=150, random_state=4).fit(
        X, X_test=Xt, evaluate_every=10)
    s = full.trace_["log_predictive"].to_numpy()[-5:].mean()
    assert abs(s - g) < 0.1, (s, g)
    assert np.count_nonzero(full.cluster_sizes_ >= 0.02 * X.shape[0]) == 4
    mb = DPMultinomialMixture("scir", step_size=0.5, batch_size=300, max_iter=300, random_state=4).fit(
        X, X_test=Xt, evaluate_every=20)
    assert abs(mb.trace_["log_predictive"].to_numpy()[-5:].mean() - g) < 0.3
    # same seed, same chain
    again = DPMultinomialMixture("scir", step_size=0.5, batch_size=300, max_iter=300, random_state=4).fit(
        X, X_test=Xt, evaluate_every=20)
    np.testing.assert_array_equal(mb.trace_["log_predictive"], again.trace_["log_predictive"])


def test_sgrld_sticks_step_runs_and_stays_positive():
    """SGRLD with the same frozen counts: finite, non-negative gamma variables (mirroring), sticks in (0, 1)."""
    K, d = 2, 4
    st = _State(L=10, d=d, kmax=K, a=0.5, sg=True)
    st.mb[:K] = [10.0, 2.0]
    st.cnt[: K * d] = [5, 0, 0, 5, 0, 1, 1, 0]
    st.G[: K * d] = 1.0
    st.S[: 2 * K] = 1.0
    key = make_key(2)
    for _ in range(500):
        assert sg_params_step(sgrld_step, key, 0.01, st, K, d, 1.0)
    assert np.all(st.G[: K * d] >= 0) and np.all((np.exp(st.lv[:K]) > 0) & (np.exp(st.lv[:K]) < 1))


def test_slice_z_step_leaves_the_conditional_posterior_invariant():
    """u_i ~ U(0, pi_{z_i}) then z_i ~ 1{u_i < pi_k} lik_k keeps z ~ pi_k lik_k (pi, theta fixed): start 40,000
    identical users from that law, one step, chi-square against it (the slice indicator matters here: without
    it the new law would be propto lik_k)."""
    from scipy.stats import chisquare

    from scalable_bayes.inference.dpmixture import _draw_u, _sample_z

    K, d, L = 4, 3, 40_000
    pi = np.array([0.5, 0.25, 0.15, 0.06])
    theta = np.array([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2], [0.1, 0.1, 0.8], [0.3, 0.4, 0.3]])
    x = np.array([1.0, 0.0, 2.0])  # one user type
    lik = np.exp(np.log(theta) @ x)
    post = pi * lik / (pi * lik).sum()
    rng = np.random.default_rng(0)
    z = rng.choice(K, size=L, p=post).astype(np.int64)
    indptr = np.arange(0, 2 * L + 1, 2, dtype=np.int64)
    indices = np.tile(np.array([0, 2], dtype=np.int64), L)
    vals = np.tile(np.array([1.0, 2.0]), L)
    logw = np.log(theta).ravel()
    logpi = np.log(pi)
    batch = np.arange(L, dtype=np.int64)
    logu, ustate, znew = np.empty(L), np.empty(L, dtype=np.uint64), np.empty(L, dtype=np.int64)
    _draw_u(7, 1, batch, L, z, logpi, logu, ustate)
    assert np.all(logu < logpi[z])
    _sample_z(batch, L, K, d, indptr, indices, vals, logw, logpi, logu, ustate, znew)
    counts = np.bincount(znew, minlength=K)
    assert chisquare(counts, post * L).pvalue > 1e-3, (counts / L, post)
    naive = lik / lik.sum()  # what a z step without the slice would leave
    assert chisquare(counts, naive * L).pvalue < 1e-6


def test_minibatch_counts_are_rescaled_by_users_over_batch():
    """One sparse cluster: categories never visited keep Gamma(a) gamma variables, the visited ones
    Gamma(a + (L/n) counts), so the component mass on the unvisited categories is about n0 a / N (N the
    cluster's total count). Without the L/n factor it would be L/n = 5 times larger."""
    rng = np.random.default_rng(1)
    d, L, n_zero, a = 200, 2000, 180, 0.5
    p = np.zeros(d)
    p[:d - n_zero] = rng.dirichlet(np.ones(d - n_zero))
    X = sp.csr_matrix(rng.multinomial(5, p, size=L))
    est = DPMultinomialMixture("scir", base_concentration=a, alpha=0.05, alpha_prior=(1.0, 50.0), step_size=1.0,
                               batch_size=L // 5, max_iter=40, init_clusters=1, random_state=2).fit(X)
    k = int(np.argmax(est.cluster_sizes_))
    N = X[est.labels_ == k].sum()
    mass = est.components_[k, d - n_zero:].sum()
    expected = n_zero * a / (N + d * a)
    assert 0.6 < mass / expected < 1.6, (mass, expected)
