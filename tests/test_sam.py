"""Spherical admixture model (SGGMC paper Sec. 4, eq. 9-10, Alg. 3, App. B): kernels and estimator.

* the stochastic gradient of eq. 10 against finite differences of the potential and a slow NumPy twin;
* the theta sampler (GMC on the sphere lift) against known laws: kappa = 0 gives Dir(2, 3, 5) (z-test of the
  means with the standard error over independent document chains), a K = 2 posterior against 1-D
  quadrature; dropping the Jacobian of the lift must fail the first test;
* identical fits with 1 and 2 threads; every method improves a synthetic SAM corpus's held-out
  log-perplexity; finite values at V = 60,000; bad input is refused before anything is written.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import integrate

from scalable_bayes.evaluation.sam import importance_log_lik
from scalable_bayes.evaluation.sam import prior_draw_log_perplexity as _log_perplexity
from scalable_bayes.inference import _sam_variational as _vi
from scalable_bayes.inference.sam import METHODS, SphericalAdmixture
from scalable_bayes.manifolds.sphere import geodesic_flow, project_tangent
from scalable_bayes.models import sam as M
from scalable_bayes.special import bessel_ratio, vmf_log_normalizer

import naive_sam as naive  # noqa: E402

Z_MAX = 4.0


def _unit(a):
    return a / np.linalg.norm(a, axis=-1, keepdims=True)


# ---------------------------------------------------------------------------------------------
# gradient of eq. 10
# ---------------------------------------------------------------------------------------------


def _potential_numpy(beta, X, docs, thetas, m0, kappa, sigma, kappa0, scale):
    """U(beta) = log c_V(||mbar||) - scale sum_{s} (1/N) sum_n v_s' vbar(beta, theta_sn): slow twin of eq. 9."""
    K, V = beta.shape
    mb = kappa0 * m0 + sigma * beta.sum(axis=0)
    u = float(vmf_log_normalizer(np.linalg.norm(mb), d=V))
    Xd = X.toarray()
    for s, d in enumerate(docs):
        for n in range(thetas.shape[1]):
            w = thetas[s, n] @ beta
            u -= scale / thetas.shape[1] * Xd[d] @ w / np.linalg.norm(w)
    return u


def _grad_numpy(beta, X, docs, thetas, m0, kappa, sigma, kappa0, scale):
    """The eq. 10 gradient (SGGMC Sec. 4, our differentiation) with dense vbar per document (slow twin of grad_documents)."""
    K, V = beta.shape
    mb = kappa0 * m0 + sigma * beta.sum(axis=0)
    r = np.linalg.norm(mb)
    g = np.tile(-sigma * float(bessel_ratio(r, d=V)) * mb / r, (K, 1))
    Xd = X.toarray()
    N = thetas.shape[1]
    for s, d in enumerate(docs):
        for n in range(N):
            th = thetas[s, n]
            w = th @ beta
            nw = np.linalg.norm(w)
            vb = w / nw
            f = Xd[d] @ vb
            for k in range(K):
                g[k] -= scale / N * th[k] * (Xd[d] - f * vb) / nw
    return g


@pytest.mark.parametrize("K,V", [(1, 7), (3, 5), (37, 1001), (200, 64)])
def test_prior_mean_and_its_gradient_term_are_the_numpy_expressions(K, V):
    # compiled loops in NumPy's order: the numbers of kappa0 m + sigma beta.sum(axis=0) and of
    # grad -= c mbar, bit for bit, on entries over ten orders of magnitude (a pairwise sum would differ)
    rng = np.random.default_rng(K)
    beta = rng.standard_normal(K * V) * 10 ** rng.uniform(-5, 5, K * V)
    m0 = rng.random(V)
    m0 /= np.linalg.norm(m0)
    mb, r = M.prior_mean_vector(beta, K, V, m0, 5.3, 21.7)
    ref = 5.3 * m0 + 21.7 * beta.reshape(K, V).sum(axis=0)
    np.testing.assert_array_equal(mb, ref)
    assert r == float(np.linalg.norm(ref))
    g = rng.standard_normal(K * V)
    want = g.reshape(K, V) - 0.37 * mb[None, :]
    M.subtract_mean_direction(g, mb, 0.37, K, V)
    np.testing.assert_array_equal(g.reshape(K, V), want)


def _kernel_grad(beta, X, docs, thetas, m0, sigma, kappa0, scale):
    K, V = beta.shape
    S, N, _ = thetas.shape
    b = beta.ravel().copy()
    G = np.zeros((K, K))
    B = np.zeros((S, K))
    ip, ix, dt = X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data
    M.gram(b, K, V, G)
    M.doc_projections(b, K, V, ip, ix, dt, docs, B)
    score, norm = np.zeros((S, N)), np.zeros((S, N))
    M.stored_scores(thetas, B, G, K, score, norm)
    grad = np.zeros(K * V)
    M.grad_documents(b, K, V, ip, ix, dt, docs, thetas, score, norm, scale, grad)
    mb, r = M.prior_mean_vector(b, K, V, m0, kappa0, sigma)
    grad = grad.reshape(K, V) - sigma * float(bessel_ratio(r, d=V)) * mb / r
    return grad, score


@pytest.fixture(scope="module")
def small_problem():
    rng = np.random.default_rng(11)
    K, V, D, N = 3, 25, 6, 2
    beta = _unit(rng.standard_normal((K, V)))
    dense = rng.standard_normal((D, V)) * (rng.random((D, V)) < 0.4)
    dense[:, 0] += 0.1
    X = sp.csr_matrix(_unit(dense))
    docs = np.array([0, 2, 3, 5], dtype=np.int64)
    thetas = rng.dirichlet(np.ones(K), size=(docs.size, N))
    m0 = _unit(rng.standard_normal(V))
    return beta, X, docs, thetas, m0


def test_gradient_matches_finite_differences_and_numpy_twin(small_problem):
    beta, X, docs, thetas, m0 = small_problem
    kappa, sigma, kappa0, scale = 7.0, 5.0, 3.0, 7.0 * 6 / 4
    g, score = _kernel_grad(beta, X, docs, thetas, m0, sigma, kappa0, scale)
    twin = _grad_numpy(beta, X, docs, thetas, m0, kappa, sigma, kappa0, scale)
    np.testing.assert_allclose(g, twin, rtol=1e-10, atol=1e-12)
    # central differences of the potential in the ambient space (eq. 9 is defined off the sphere too)
    h = 1e-5
    fd = np.zeros_like(beta)
    for k in range(beta.shape[0]):
        for j in range(beta.shape[1]):
            bp, bm = beta.copy(), beta.copy()
            bp[k, j] += h
            bm[k, j] -= h
            fd[k, j] = (_potential_numpy(bp, X, docs, thetas, m0, kappa, sigma, kappa0, scale)
                        - _potential_numpy(bm, X, docs, thetas, m0, kappa, sigma, kappa0, scale)) / (2 * h)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7)
    # and the stored scores are v'vbar
    Xd = X.toarray()
    f0 = Xd[docs[1]] @ _unit(thetas[1, 0] @ beta)
    assert score[1, 0] == pytest.approx(f0, rel=1e-12)


def test_a_wrong_gradient_is_caught(small_problem):
    """The comparison can fail: the gradient without the projection term (v - (v'vbar) vbar -> v) differs."""
    beta, X, docs, thetas, m0 = small_problem
    g, _ = _kernel_grad(beta, X, docs, thetas, m0, 5.0, 3.0, 10.0)
    K, V = beta.shape
    Xd = X.toarray()
    wrong = _grad_numpy(beta, X, docs, thetas, m0, 7.0, 5.0, 3.0, 0.0)
    for s, d in enumerate(docs):
        for n in range(thetas.shape[1]):
            w = thetas[s, n] @ beta
            for k in range(K):
                wrong[k] -= 10.0 / thetas.shape[1] * thetas[s, n, k] * Xd[d] / np.linalg.norm(w)
    assert not np.allclose(g, wrong, rtol=1e-6, atol=1e-7)


def test_vi_topic_gradient_matches_finite_differences(small_problem):
    """The VI / StoVI ascent direction is the gradient of the ELBO (Reisinger et al.'s E[vbar] approximation,
    mu collapsed as in eq. 9) w.r.t. the topics."""
    beta, X, _, _, m0 = small_problem
    K, V = beta.shape
    D = X.shape[0]
    est = SphericalAdmixture(K, "vi", kappa=7.0, sigma=5.0, kappa0=3.0, alpha=1.5)
    est._cfg = est._validate(D)
    est._X, est.n_features_in_, est.m_ = X, V, m0
    est._csr = (X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data)
    est._G = np.zeros((K, K))
    docs = np.arange(D, dtype=np.int64)
    gam = np.random.default_rng(4).gamma(3.0, 1.0, size=(D, K))
    b = beta.ravel().copy()
    B = np.zeros((D, K))
    est._summaries(b, docs, B)
    g = _vi.vi_beta_grad(est, b, docs, gam, B, est._G.copy(), 7.0)
    h = 1e-6
    fd = np.zeros(K * V)
    for i in range(K * V):
        bp, bm = b.copy(), b.copy()
        bp[i] += h
        bm[i] -= h
        fd[i] = (_vi.elbo(est, bp, docs, gam) - _vi.elbo(est, bm, docs, gam)) / (2 * h)
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-6)
    # and the local objective's gradient w.r.t. gamma_d
    from scalable_bayes.inference._sam_variational import vi_local_obj as _vi_local_obj

    alpha = np.full(K, 1.5)
    obj, dg = _vi_local_obj(gam, B, est._G, alpha, 7.0)
    for k in range(K):
        gp, gm = gam.copy(), gam.copy()
        gp[:, k] += h
        gm[:, k] -= h
        fdk = (_vi_local_obj(gp, B, est._G, alpha, 7.0)[0] - _vi_local_obj(gm, B, est._G, alpha, 7.0)[0]) / (2 * h)
        np.testing.assert_allclose(dg[:, k], fdk, rtol=1e-5, atol=1e-6)


def test_lift_potential_gradient():
    rng = np.random.default_rng(3)
    K = 4
    y = _unit(rng.standard_normal(K))
    c = M.lift_exponents(np.array([2.0, 0.7, 3.0, 1.5]), K)
    A = _unit(rng.standard_normal((K, 9)))
    G = A @ A.T
    b = A @ _unit(rng.standard_normal(9))
    grad, th = np.zeros(K), np.zeros(K)
    u = M.lift_potential(y, c, b, G, 13.0, K, grad, th)
    th2 = y * y
    f = th2 @ b / math.sqrt(th2 @ G @ th2)
    assert u == pytest.approx(-np.sum(c * np.log(np.abs(y))) - 13.0 * f, rel=1e-12)
    h = 1e-6
    for i in range(K):
        yp, ym = y.copy(), y.copy()
        yp[i] += h
        ym[i] -= h
        fd = (M.lift_potential(yp, c, b, G, 13.0, K, np.zeros(K), th)
              - M.lift_potential(ym, c, b, G, 13.0, K, np.zeros(K), th)) / (2 * h)
        assert grad[i] == pytest.approx(fd, rel=1e-6, abs=1e-6)


# ---------------------------------------------------------------------------------------------
# the kernels against their slow twins, bit for bit (tests/naive_sam.py)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("K, V, threads", [(1, 37, 1), (4, 37, 1), (7, 37, 2), (9, 37, 1), (13, 1100, 2),
                                             (20, 600, 1)])
def test_gram_equals_its_twin_exactly_and_is_symmetric(K, V, threads):
    """Blocks of four rows by eight columns summed down blocks of words and continued from block to block, the
    triangle mirrored, give every entry's plain dot product (K = 7, 9, 13: a last group of fewer than four rows;
    K not a multiple of 8: padded columns; V = 600, 1100: two and three blocks of words; two threads: the
    paired row groups)."""
    from scalable_bayes.utils import numba_threads

    rng = np.random.default_rng(K)
    beta = rng.standard_normal(K * V) * 10.0 ** rng.integers(-4, 4, K * V)
    G = np.full((K, K), np.nan)
    with numba_threads(threads):
        M.gram(beta, K, V, G)
    np.testing.assert_array_equal(G, naive.gram(beta, K, V))
    np.testing.assert_array_equal(G, G.T)


@pytest.mark.parametrize("K, threads", [(5, 1), (10, 2)])
def test_grad_documents_equals_its_twin_exactly(K, threads):
    """Word blocks (V above one block, V not a multiple of 8: the last words one by one), groups of four topics
    and a smaller last one, the mirrored K x K matrix and a sample below TINY_NORM (dropped)."""
    from scalable_bayes.utils import numba_threads

    rng = np.random.default_rng(4)
    V, D, N = 1300, 9, 3
    beta = _unit(rng.standard_normal((K, V))).ravel().copy()
    X = sp.csr_matrix(_unit(rng.standard_normal((D, V)) * (rng.random((D, V)) < 0.05) + 0.01))
    ip, ix, dt = X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data
    docs = np.array([0, 3, 4, 8], dtype=np.int64)
    thetas = rng.dirichlet(np.ones(K), size=(docs.size, N))
    score, norm = rng.random((docs.size, N)), rng.random((docs.size, N)) + 0.1
    norm[1, 2] = 0.0
    grad = np.full(K * V, np.nan)
    with numba_threads(threads):
        M.grad_documents(beta, K, V, ip, ix, dt, docs, thetas, score, norm, 123.0, grad)
    np.testing.assert_array_equal(grad, naive.grad_documents(beta, K, V, ip, ix, dt, docs, thetas, score, norm, 123.0))


@pytest.mark.parametrize("K, S, alpha, eps, kappa, threads", [
    (6, 5, 1.5, 0.05, 40.0, 1),
    (50, 11, 10.0, 0.01, 300.0, 2),  # the estimator's alpha; two threads: blocks of 5 and 6 lanes
    (9, 7, 0.5, 0.2, 25.0, 2),  # alpha = 1/2: every lift exponent 0 (no log terms, no 1/y in the gradient)
    (6, 300, 1.5, 0.05, 40.0, 2),  # blocks of 150 documents: a chunk of 128 in lockstep, then one of 22
])
def test_theta_sampler_equals_its_twin_exactly(K, S, alpha, eps, kappa, threads):
    """The sampler runs a block's documents in lockstep (vector lanes, chunk by chunk) and carries U and its
    gradient from one GMC transition to the next, summing U only where the Metropolis-Hastings test reads it: the
    same draws, acceptances and samples as one document after the other with U and its gradient computed afresh
    at every point (the twin), whatever the thread count. The step sizes are large enough that transitions are
    both accepted and rejected."""
    from scalable_bayes.utils import numba_threads

    rng = np.random.default_rng(8 + K)
    V = 40 + 2 * K
    beta = _unit(rng.standard_normal((K, V))).ravel().copy()
    G = np.zeros((K, K))
    M.gram(beta, K, V, G)
    B = _unit(rng.standard_normal((S, V))) @ beta.reshape(K, V).T
    Ginv = np.linalg.pinv(G, rcond=1e-10)
    c = M.lift_exponents(np.full(K, alpha), K)
    docs = np.arange(10, 10 + S, dtype=np.int64)
    n_samples, n_steps, n_leap = 3, 4, 4
    out, score, norm = np.zeros((S, n_samples, K)), np.zeros((S, n_samples)), np.zeros((S, n_samples))
    acc = np.zeros(S, np.int64)
    with numba_threads(threads):
        M.sample_theta(77, 3, docs, B, G, Ginv, c, kappa, K, n_samples, n_steps, eps, n_leap, 0.01 / K, 0,
                       np.zeros((1, K)), out, score, norm, acc)
    t_out, t_score, t_norm, t_acc = naive.sample_theta(77, 3, docs, B, G, Ginv, c, kappa, K, n_samples, n_steps,
                                                       eps, n_leap, 0.01 / K)
    assert 0 < acc.sum() < S * n_samples * n_steps, acc
    np.testing.assert_array_equal(acc, t_acc)
    np.testing.assert_array_equal(out, t_out)
    np.testing.assert_array_equal(score, t_score)
    np.testing.assert_array_equal(norm, t_norm)


def _lift_problem(rng):
    """(K, G, b) of a document's sphere-lift potential: K = 5 unit topics in R^11, G their Gram matrix, b = beta'v."""
    K = 5
    A = _unit(rng.standard_normal((K, 11)))
    G = np.zeros((K, K))
    M.gram(A.ravel().copy(), K, 11, G)
    return K, G, A @ _unit(rng.standard_normal(11))


def _lanes(cols):
    """(K, n) C-contiguous array whose lane s is cols[s]."""
    return np.ascontiguousarray(np.array(cols, dtype=np.float64).T)


def test_lane_kernels_equal_the_one_document_kernels_at_the_edges():
    """Each lane of the lockstep kernels gives the one-document kernel's numbers, bit for bit, including the
    cases where the one-document kernel leaves early: U = +inf / -inf at a zero y_i (by the sign of c_i), NaN
    at a non-finite y_i inside a trajectory, the gradient-only limb at a zero ||beta theta|| or kappa = 0;
    the flow at rest (v = 0), with a NaN velocity and with an overflowing one; the projection."""
    rng = np.random.default_rng(12)
    K, G, b = _lift_problem(rng)
    ys = [_unit(rng.standard_normal(K)), np.array([0.0, 0.6, 0.0, 0.8, 0.0]), np.array([0.6, 0.0, 0.8, 0.0, 0.0]),
          np.array([np.nan, 0.6, 0.0, 0.8, 0.0]), np.array([0.6, np.inf, 0.8, 0.0, 0.0]),
          _unit(rng.standard_normal(K)), np.array([0.6, -0.0, 0.8, 0.0, 0.0]), _unit(rng.standard_normal(K))]
    n = len(ys)  # 8: G theta runs over blocks of eight lanes
    for c in (M.lift_exponents(np.array([2.0, 0.5, 1.0, 3.0, 0.7]), K), np.array([0.0, -0.5, 0.0, 1.0, 0.0]),
              np.zeros(K)):
        for kappa in (9.0, 0.0):
            for want_u in (True, False):
                Y = _lanes(ys)
                BT = _lanes([b * (0.0 if s == 5 else 1.0) for s in range(n)])  # lane 5: ||beta theta|| seen as 0
                GR, TH = np.zeros((K, n)), np.zeros((K, n))
                U, st, q, lin, mode = (np.zeros(n) for _ in range(5))
                Gs = G.copy()
                M._lift_lanes(Y, c, BT, Gs, kappa, K, n, GR, TH, want_u, U, st, q, lin, mode)
                for s in range(n):
                    g, th = np.zeros(K), np.zeros(K)
                    u = M._lift(ys[s].copy(), c, BT[:, s].copy(), G, kappa, K, g, th, want_u)
                    np.testing.assert_array_equal(U[s], u, err_msg=f"lane {s}, c {c}, kappa {kappa}")
                    if np.isfinite(u):
                        np.testing.assert_array_equal(GR[:, s], g, err_msg=f"lane {s}")
    # the flow and the projection
    xs = [_unit(rng.standard_normal(K)) for _ in range(6)]
    vs = [rng.standard_normal(K), np.zeros(K), np.full(K, np.nan), np.full(K, 1e300), 1e-170 * np.ones(K),
          rng.standard_normal(K)]
    for t in (0.3, 1e-3):
        X, Vv = _lanes(xs), _lanes(vs)
        scratch = [np.zeros(len(xs)) for _ in range(5)]
        M._project_lanes(X, Vv, K, len(xs), scratch[0])
        M._flow_lanes(X, Vv, t, K, len(xs), *scratch)
        for s in range(len(xs)):
            x, v = xs[s].copy(), vs[s].copy()
            project_tangent(x, v, K)
            geodesic_flow(x, v, t, K)
            np.testing.assert_array_equal(X[:, s], x, err_msg=f"lane {s}")
            np.testing.assert_array_equal(Vv[:, s], v, err_msg=f"lane {s}")


def test_lift_gradient_only_agrees_with_the_potential():
    """The leapfrog steps' call (U not summed) gives the same gradient and the same finite / not finite verdict."""
    rng = np.random.default_rng(5)
    K, G, b = _lift_problem(rng)
    c = M.lift_exponents(np.array([2.0, 0.5, 1.0, 3.0, 0.7]), K)
    for y in (_unit(rng.standard_normal(K)), np.array([0.0, 0.6, 0.0, 0.8, 0.0]), np.array([0.6, 0.0, 0.8, 0.0, 0.0]),
              np.array([np.nan, 0.6, 0.0, 0.8, 0.0])):
        g1, g2, th = np.zeros(K), np.zeros(K), np.zeros(K)
        u = M.lift_potential(y, c, b, G, 9.0, K, g1, th)
        r = M._lift(y, c, b, G, 9.0, K, g2, th, False)
        assert np.isfinite(u) == np.isfinite(r), (y, u, r)
        if np.isfinite(u):
            assert r == 0.0
            np.testing.assert_array_equal(g1, g2)


# ---------------------------------------------------------------------------------------------
# the theta sampler against known laws
# ---------------------------------------------------------------------------------------------


def _run_theta(alpha, B, G, kappa, jacobian=True, n_docs=400, n_samples=40, n_steps=2, eps=0.1, seed=5,
               burn=10):
    K = alpha.size
    D = n_docs
    docs = np.arange(D, dtype=np.int64)
    Bd = np.tile(B, (D, 1))
    out = np.zeros((D, n_samples, K))
    acc = np.zeros(D, np.int64)
    M.sample_theta(seed, 1, docs, Bd, G, np.linalg.pinv(G), M.lift_exponents(alpha, K, jacobian), kappa, K,
                   n_samples, n_steps, eps, 5, 0.01 / K, 0, np.zeros((1, K)), out, np.zeros((D, n_samples)),
                   np.zeros((D, n_samples)), acc)
    assert acc.sum() / (D * n_samples * n_steps) > 0.5
    chain_means = out[:, burn:, :].mean(axis=1)  # one independent chain per document
    return chain_means.mean(axis=0), chain_means.std(axis=0, ddof=1) / math.sqrt(D)


def test_theta_sampler_kappa0_is_dirichlet():
    alpha = np.array([2.0, 3.0, 5.0])
    mean, se = _run_theta(alpha, np.zeros(3), np.eye(3), 0.0)
    z = (mean - alpha / alpha.sum()) / se
    assert np.all(np.abs(z) < Z_MAX), z


def test_theta_sampler_without_jacobian_fails():
    """Mutation: the density of theta read on the sphere without prod|y_i| targets Dir(alpha - 1/2)."""
    alpha = np.array([2.0, 3.0, 5.0])
    mean, se = _run_theta(alpha, np.zeros(3), np.eye(3), 0.0, jacobian=False)
    z = (mean - alpha / alpha.sum()) / se
    assert np.max(np.abs(z)) > Z_MAX, z


def test_theta_sampler_k2_against_quadrature():
    rng = np.random.default_rng(8)
    A = _unit(rng.standard_normal((2, 5)))
    v = _unit(A[0] + 0.3 * rng.standard_normal(5))
    G, b = A @ A.T, A @ v
    alpha, kappa = np.array([2.0, 3.0]), 6.0

    def dens(t):
        th = np.array([t, 1 - t])
        return t ** (alpha[0] - 1) * (1 - t) ** (alpha[1] - 1) * math.exp(kappa * th @ b / math.sqrt(th @ G @ th))

    Z = integrate.quad(dens, 0, 1, epsabs=0, epsrel=1e-12)[0]
    m1 = integrate.quad(lambda t: t * dens(t), 0, 1, epsabs=0, epsrel=1e-12)[0] / Z
    prior_mean = alpha[0] / alpha.sum()
    assert abs(m1 - prior_mean) > 0.05  # the likelihood moves the law away from the prior
    mean, se = _run_theta(alpha, b, G, kappa)
    assert abs(mean[0] - m1) / se[0] < Z_MAX, (mean[0], m1, se[0])
    # the mutation fails here too
    mean_w, se_w = _run_theta(alpha, b, G, kappa, jacobian=False)
    assert abs(mean_w[0] - m1) / se_w[0] > Z_MAX


def test_prior_draw_log_likelihood_against_quadrature():
    """log pi(v | beta) = log int Dir(theta|alpha) vMF(v | vbar(beta, theta), kappa) dtheta for K = 2 by 1-D
    quadrature; the prior-draw estimator lies within 4 of its standard errors, which are small."""
    from scipy.special import betaln

    rng = np.random.default_rng(21)
    V, kappa, alpha = 5, 4.0, np.array([2.0, 3.0])
    beta = _unit(rng.standard_normal((2, V)))
    Xt = sp.csr_matrix(_unit(rng.standard_normal((3, V))))
    log_cv = float(vmf_log_normalizer(kappa, d=V))
    exact = []
    for v in Xt.toarray():
        def dens(t):
            w = t * beta[0] + (1 - t) * beta[1]
            return math.exp((alpha[0] - 1) * math.log(t) + (alpha[1] - 1) * math.log1p(-t) - betaln(*alpha)
                            + kappa * v @ w / np.linalg.norm(w))
        exact.append(log_cv + math.log(integrate.quad(dens, 0, 1, epsabs=0, epsrel=1e-12)[0]))
    lp, se = _log_perplexity(beta[None], Xt, alpha, kappa, log_cv, 4000, 9)
    assert 0 < se < 0.02
    assert abs(lp - (-np.mean(exact))) < Z_MAX * se, (lp, -np.mean(exact), se)
    # two topic samples: the average is inside the log (a mixture), not of the logs
    lp2, _ = _log_perplexity(np.stack([beta, beta[::-1]]), Xt, alpha, kappa, log_cv, 4000, 9)
    assert lp2 != pytest.approx(lp, abs=1e-3)


def _exact_log_lik_k2(beta, v, alpha, kappa, log_cv):
    """log int_0^1 Beta(t; alpha) c_V(kappa) exp(kappa v'vbar(beta, (t, 1 - t))) dt by quadrature around the
    integrand's peak (found first), on the scale of that peak."""
    from scipy.optimize import minimize_scalar
    from scipy.special import betaln

    def g(t):
        w = t * beta[0] + (1 - t) * beta[1]
        return ((alpha[0] - 1) * math.log(t) + (alpha[1] - 1) * math.log1p(-t) - betaln(*alpha)
                + kappa * v @ w / np.linalg.norm(w))

    t_star = minimize_scalar(lambda t: -g(t), bounds=(1e-12, 1 - 1e-12), method="bounded",
                             options={"xatol": 1e-14}).x
    top = g(t_star)
    val = integrate.quad(lambda t: math.exp(g(t) - top), 0, 1, points=[t_star], limit=500, epsabs=0,
                         epsrel=1e-11)[0]
    return log_cv + top + math.log(val)


@pytest.mark.parametrize("kappa", [50.0, 3e4])
def test_importance_log_likelihood_against_quadrature(kappa):
    """K = 2, documents drawn from the model (so the theta posterior is interior and, at kappa = 3e4, about
    as narrow as on the paper's corpora): the importance estimate of log pi(v | beta) lies within 4 of its
    standard errors of 1-D quadrature for every document, with small errors, also for an average over two
    topic samples."""
    rng = np.random.default_rng(23)
    V, alpha = 40, np.array([10.0, 10.0])
    beta = _unit(rng.standard_normal((2, V)) + 2.0 * _unit(np.ones(V)))
    thetas = rng.dirichlet(alpha, 12)
    Xt = sp.csr_matrix(np.vstack([M.sample_vmf(_unit(t @ beta), kappa, 1, rng) for t in thetas]))
    log_cv = float(vmf_log_normalizer(kappa, d=V))
    exact = np.array([_exact_log_lik_k2(beta, v, alpha, kappa, log_cv) for v in Xt.toarray()])
    logp, se, diag = importance_log_lik(beta[None], Xt, alpha, kappa, log_cv, 400, 3, floor=0.005)
    assert np.all(se < 0.05), se
    z = (logp - exact) / se
    assert np.all(np.abs(z) < Z_MAX), (logp - exact, se)
    assert diag["ess"].shape == (12, 1) and np.median(diag["ess"]) > 200
    # two topic samples: the average over samples is inside the log
    beta2 = _unit(beta + 0.05 * rng.standard_normal(beta.shape))
    exact2 = np.array([_exact_log_lik_k2(beta2, v, alpha, kappa, log_cv) for v in Xt.toarray()])
    lp2, se2, _ = importance_log_lik(np.stack([beta, beta2]), Xt, alpha, kappa, log_cv, 400, 3, floor=0.005)
    mix = np.logaddexp(exact, exact2) - math.log(2)
    assert np.all(np.abs(lp2 - mix) < Z_MAX * se2 + 1e-9), (lp2 - mix, se2)


def test_importance_log_likelihood_agrees_with_many_prior_draws():
    """K = 4 (no quadrature): at a moderate kappa where 200,000 prior draws converge, the importance estimate
    (400 draws) agrees with them within 4 combined standard errors."""
    rng = np.random.default_rng(29)
    V, K, kappa, alpha = 30, 4, 30.0, np.full(4, 2.0)
    beta = _unit(rng.standard_normal((K, V)))
    Xt = sp.csr_matrix(np.vstack([M.sample_vmf(_unit(t @ beta), kappa, 1, rng) for t in rng.dirichlet(alpha, 6)]))
    log_cv = float(vmf_log_normalizer(kappa, d=V))
    lp_prior, se_prior = _log_perplexity(beta[None], Xt, alpha, kappa, log_cv, 200_000, 5)
    logp, se, _ = importance_log_lik(beta[None], Xt, alpha, kappa, log_cv, 400, 5, floor=0.01 / K)
    lp_is, se_is = -logp.mean(), math.sqrt(np.sum(se ** 2)) / len(se)
    assert abs(lp_is - lp_prior) < Z_MAX * math.hypot(se_is, se_prior), (lp_is, lp_prior, se_is, se_prior)


def test_importance_estimate_survives_a_newton_search_that_ended_off_the_maximum(monkeypatch):
    """Where the Newton search for the theta posterior's mode stops off a maximum, -H is not positive definite
    (a default-run job on the Wikipedia sample stopped at its Cholesky factor). The proposal then takes the
    ridged precision: the estimate stays finite and, the defensive mixture keeping it unbiased, agrees with the
    estimate from the true mode within 4 combined standard errors; positive definite precisions keep exactly
    their factor."""
    from scalable_bayes.evaluation import sam as ev

    rng = np.random.default_rng(29)
    V, K, kappa, alpha = 30, 4, 30.0, np.full(4, 2.0)
    beta = _unit(rng.standard_normal((K, V)))
    Xt = sp.csr_matrix(np.vstack([M.sample_vmf(_unit(t @ beta), kappa, 1, rng) for t in rng.dirichlet(alpha, 6)]))
    log_cv = float(vmf_log_normalizer(kappa, d=V))
    good, se_good, _ = importance_log_lik(beta[None], Xt, alpha, kappa, log_cv, 4000, 5, floor=0.01 / K)

    newton = ev._alr_newton

    def off_the_maximum(*a, **k):
        z, neg_h, val = newton(*a, **k)
        z, neg_h = z.copy(), neg_h.copy()
        z[0] += 0.7                     # document 0: away from its mode, at a point where -H is indefinite
        neg_h[0] = -neg_h[0] + np.diag([2.0 * neg_h[0].max(), 0.0, 0.0])
        assert np.linalg.eigvalsh(neg_h[0])[0] < 0
        return z, neg_h, val

    monkeypatch.setattr(ev, "_alr_newton", off_the_maximum)
    bad, se_bad, _ = importance_log_lik(beta[None], Xt, alpha, kappa, log_cv, 4000, 5, floor=0.01 / K)
    assert np.all(np.isfinite(bad)) and np.all(np.isfinite(se_bad))
    assert abs(bad[0] - good[0]) < Z_MAX * math.hypot(se_bad[0], se_good[0]), (bad[0], good[0], se_bad[0])
    np.testing.assert_array_equal(bad[1:], good[1:])   # the other documents: the same draws, the same factors
    pd_ = np.array([[2.0, 0.3], [0.3, 1.0]])[None]
    np.testing.assert_array_equal(ev._proposal_cholesky(pd_), np.linalg.cholesky(pd_ + 1e-10 * np.eye(2)[None]))


# ---------------------------------------------------------------------------------------------
# the estimator
# ---------------------------------------------------------------------------------------------

KW = dict(kappa=500.0, sigma=100.0, kappa0=100.0, alpha=2.0)


@pytest.fixture(scope="module")
def corpus():
    X, beta, theta, m = M.sample_sam_corpus(260, 4, 120, seed=1, **KW)
    return X[:200], X[200:], beta


def test_identical_with_one_and_two_threads(corpus):
    import numba

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("Numba runs with one thread here (NUMBA_NUM_THREADS)")
    X, Xt, _ = corpus
    fits = [SphericalAdmixture(4, "sggmc", max_iter=4, batch_size=40, n_jobs=t, random_state=3, evaluate_every=2,
                               n_prior_draws=20, **KW).fit(X, X_test=Xt) for t in (1, 2)]
    assert (fits[0].n_threads_, fits[1].n_threads_) == (1, 2)
    np.testing.assert_array_equal(fits[0].components_, fits[1].components_)
    np.testing.assert_array_equal(fits[0].trace_.log_perplexity.values, fits[1].trace_.log_perplexity.values)
    np.testing.assert_array_equal(fits[0].transform(Xt[:5]), fits[1].transform(Xt[:5]))
    other = SphericalAdmixture(4, "sggmc", max_iter=4, batch_size=40, n_jobs=1, random_state=4, **KW).fit(X)
    assert not np.array_equal(other.components_, fits[0].components_)


SETTINGS = {
    "sggmc": dict(max_iter=40, batch_size=40),
    "gsgnht": dict(max_iter=40, batch_size=40),
    "gmc_apprmh": dict(max_iter=25),
    "gmc_bgibbs": dict(max_iter=40),
    "vi": dict(max_iter=25),
    "stovi": dict(max_iter=40, batch_size=40),
}


@pytest.mark.parametrize("method", METHODS)
def test_each_method_recovers_topics(corpus, method):
    X, Xt, beta = corpus
    K, V = beta.shape
    alpha = np.full(K, KW["alpha"])
    log_cv = float(vmf_log_normalizer(KW["kappa"], d=V))
    truth, _ = _log_perplexity(beta[None], Xt, alpha, KW["kappa"], log_cv, 100, 0)
    rand, _ = _log_perplexity(_unit(np.random.default_rng(0).standard_normal((K, V)))[None], Xt, alpha,
                              KW["kappa"], log_cv, 100, 0)
    est = SphericalAdmixture(K, method, n_jobs=1, random_state=0, n_prior_draws=100, **SETTINGS[method], **KW)
    est.fit(X, X_test=Xt)
    tr = est.trace_
    start, end = tr.log_perplexity.iloc[0], tr.log_perplexity.iloc[-1]
    assert np.all(np.diff(tr.wall_time.values) >= 0)
    assert end < rand - 100
    assert end < start - 0.5 * (start - truth), (start, end, truth)  # closes at least half the gap
    assert abs(end - truth) < 10 * max(1.0, 0.05 * abs(truth))
    np.testing.assert_allclose(np.linalg.norm(est.components_, axis=1), 1.0, atol=1e-10)
    th = est.transform(Xt[:10])
    np.testing.assert_allclose(th.sum(axis=1), 1.0, atol=1e-12)
    lp, se = est.log_perplexity(Xt, 100, return_se=True)
    assert np.isfinite(lp) and 0 < se < 1.0


def test_finite_at_vocabulary_60000():
    V, K, D = 60_000, 2, 6
    rng = np.random.default_rng(2)
    rows = []
    for _d in range(D):
        idx = rng.choice(V, 40, replace=False)
        rows.append(sp.csr_matrix((rng.random(40), (np.zeros(40, int), idx)), shape=(1, V)))
    X = sp.vstack(rows).tocsr()
    X = sp.diags(1 / np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())) @ X
    big = dict(kappa=3e4, sigma=1e4, kappa0=1e4, alpha=10.0)
    for method in ("sggmc", "gmc_bgibbs", "vi"):
        est = SphericalAdmixture(K, method, max_iter=2, batch_size=3, n_jobs=1, random_state=0, n_prior_draws=10,
                                 **big).fit(X, X_test=X)
        assert np.all(np.isfinite(est.components_)), method
        assert np.all(np.isfinite(est.trace_.log_perplexity)), method
    g, _ = _kernel_grad(est.components_, X, np.arange(3, dtype=np.int64), rng.dirichlet(np.ones(K), (3, 2)),
                        _unit(np.ones(V)), big["sigma"], big["kappa0"], big["kappa"] * 2)
    assert np.all(np.isfinite(g))


@pytest.mark.parametrize("change, message", [
    (dict(n_components=1), "n_components"),
    (dict(kappa=0.0), "kappa"),
    (dict(sigma=-1.0), "sigma"),
    (dict(kappa0=float("nan")), "kappa0"),
    (dict(alpha=0.0), "alpha"),
    (dict(method="gibbs"), "method"),
    (dict(grad_noise_var=1e9), "2C - eps V"),
    (dict(eps=0.1, friction=0.01, grad_noise_var=1.0), "2C - eps V"),
    (dict(theta_step_size=-0.1), "theta_step_size"),
    (dict(samples_dtype="float16"), "samples_dtype"),
    (dict(budget_clock="gpu"), "budget_clock"),
    # steps that run to nonsense (samplers.geodesic "Checks"): measured, gamma 1e2-1e8 ran with unrelated successive
    # topic samples (gSGNHT: thermostat at 5e9, frozen); eps C = rho beyond the sampled-temperature bounds
    (dict(gamma=1e4), "sqrt(gamma / D) = sqrt(1e+04 / 200)"),
    (dict(gamma=1e8, method="gsgnht"), "lower gamma to at most D pi^2 / (V - 1) = 16.59"),
    (dict(gamma=100.0), "> pi radians per step"),
    (dict(rho=5.0), "eps C = 5 > 4.355"),
    (dict(eps=0.1, friction=100.0, method="gsgnht"), "eps C = 10 > 6.928"),
])
def test_bad_settings_are_refused(corpus, change, message):
    X, _, _ = corpus
    kw = dict(n_components=4, method="sggmc", max_iter=2, **KW)
    kw.update(change)
    est = SphericalAdmixture(**kw)
    before = dict(vars(est))
    with pytest.raises(ValueError, match=re.escape(message)):
        est.fit(X)
    assert vars(est) == before  # nothing written


@pytest.mark.parametrize("bad, message", [("scaled", "l2-normalised"), ("zero", "all-zero"), ("nan", "non-finite")])
def test_bad_documents_are_refused(corpus, bad, message):
    X, _, _ = corpus
    Xb = X.toarray()
    if bad == "scaled":
        Xb[3] *= 2
    elif bad == "zero":
        Xb[5] = 0
    else:
        Xb[1, 0] = np.nan
    est = SphericalAdmixture(4, max_iter=2, **KW)
    with pytest.raises(ValueError, match=message):
        est.fit(sp.csr_matrix(Xb))
    assert not hasattr(est, "components_") and not hasattr(est, "seed_")
    fitted = SphericalAdmixture(4, "vi", max_iter=1, **KW).fit(X)
    with pytest.raises(ValueError, match=message):
        fitted.log_perplexity(sp.csr_matrix(Xb))


def _kept_by_list(n_samples, max_samples, thin):
    """Slow twin of the sample buffer: a list that gets every ``keep_every``-th sample and, when it grows past
    max_samples, keeps its elements 1, 3, 5, ... and doubles ``keep_every``."""
    kept, every = [], thin
    for i in range(1, n_samples + 1):
        if i % every:
            continue
        kept.append(i)
        if len(kept) > max_samples:
            kept, every = kept[1::2], every * 2
    return kept


@pytest.mark.parametrize("max_samples, thin", [(1, 1), (2, 1), (3, 2), (5, 1), (50, 1), (7, 3)])
def test_sample_buffer_thins_like_the_list_twin(max_samples, thin):
    """The in-place buffer of max_samples rows keeps the same samples as the list twin after each of 1,000
    samples (each sample is a constant array holding its index)."""
    est = SphericalAdmixture(2, max_samples=max_samples, thin=thin)
    est._cfg, est.n_features_in_ = {"K": 2, "samples_dtype": np.dtype(np.float64)}, 3
    est._samples, est._n_kept, est._n_seen, est._keep_every = None, 0, 0, thin
    for i in range(1, 1001):
        est._beta = np.full(6, float(i))
        est._record_sample()
        got = est._samples[: est._n_kept, 0, 0].tolist() if est._n_kept else []
        assert got == [float(j) for j in _kept_by_list(i, max_samples, thin)], i
    assert est._samples.shape[0] == max_samples


def test_float32_samples_score_as_float64(corpus):
    """Kept samples stored in single precision (the default) give the trace and the log-perplexity of a fit
    that keeps them in double precision to within 1e-3 nats (the MC standard error is far larger), from the
    same chain."""
    X, Xt, _ = corpus
    fits = {dt: SphericalAdmixture(4, "sggmc", max_iter=30, batch_size=40, n_jobs=1, random_state=5, evaluate_every=10,
                                   n_prior_draws=30, samples_dtype=dt, **KW).fit(X, X_test=Xt) for dt in ("float32", "float64")}
    f32, f64 = fits["float32"], fits["float64"]
    assert f32.samples_.dtype == np.float32 and f64.samples_.dtype == np.float64
    assert f32.samples_.shape == f64.samples_.shape and f32.samples_.shape[0] == 15
    np.testing.assert_array_equal(f32.components_, f64.components_)  # the chain itself is float64 in both
    np.testing.assert_allclose(f32.samples_, f64.samples_, rtol=0, atol=1e-7)
    np.testing.assert_allclose(f32.trace_.log_perplexity, f64.trace_.log_perplexity, rtol=0, atol=1e-3)
    assert f32.log_perplexity(Xt, 30) == pytest.approx(f64.log_perplexity(Xt, 30), abs=1e-3)


@pytest.mark.parametrize("clock, col", [("cpu", "cpu_time"), ("wall", "wall_time")])
def test_time_budget_stops_on_its_clock(corpus, clock, col):
    """max_time is read on budget_clock: the fit stops at the first iteration whose clock reaches it."""
    X, _, _ = corpus
    est = SphericalAdmixture(4, "sggmc", max_iter=10**9, max_time=0.3, budget_clock=clock, batch_size=40, n_jobs=1,
                             evaluate_every=1, **KW).fit(X)
    t = est.trace_[col].to_numpy()
    assert t[-1] >= 0.3 and t[-2] < 0.3
    assert est.samples_.shape[0] >= 1


def test_fit_and_scores_run_on_one_blas_thread(corpus, monkeypatch):
    """The fit's small LAPACK calls (pinv of G) and kernels run with one BLAS thread (OpenBLAS's idle workers
    spun on the core Numba's second thread needs); the caller's setting is restored."""
    from threadpoolctl import threadpool_info, threadpool_limits

    def blas():
        return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}

    if not blas():
        pytest.skip("no BLAS library loaded that threadpoolctl sees")
    seen = []
    draw = M.sample_theta

    def recording(*args):
        seen.append(frozenset(blas()))
        return draw(*args)

    monkeypatch.setattr(M, "sample_theta", recording)
    X, X_test = corpus[0], corpus[1]
    with threadpool_limits(limits=2, user_api="blas"):
        before = blas()
        est = SphericalAdmixture(n_components=3, method="sggmc", max_iter=3, batch_size=10, random_state=0).fit(X)
        est.transform(X_test[:3], n_samples=2)
        assert blas() == before
    assert seen and set(seen) == {frozenset({1})}, seen
