"""Simplex samplers of the SCIR paper (Baker et al. 2018): the CIR draw, SCIR and SGRLD.

Each test can fail for a wrong sampler: the CIR transition against scipy's non-central chi-square
(KS), the SCIR estimator's mean and variance against Corollary 3.2 (z-tests over independent chains),
SCIR against the exact Dirichlet posterior (MCSE z-tests), SGRLD's upward bias at a sparse component.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special as sc
import scipy.stats as st

import naive_samplers as naive
from scalable_bayes import models, rng, samplers
from scalable_bayes.evaluation import mcmc
from scalable_bayes.manifolds import GammaSimplex, cir_constants, cir_transition, dirichlet, normalise_blocks
from scalable_bayes.models.base import Model
from scalable_bayes.samplers.base import DivergenceError
from scalable_bayes.samplers.simplex import scir_step

SPARSE = np.array([800, 100, 100, 0, 0, 0, 0, 0, 0, 0])  # SCIR Sec. 1.3, the running experiment
DENSE = np.full(10, 100)  # SCIR Sec. 2.2


def _draws(f, n, *args):
    return np.array([f(*args) for _ in range(n)])


@pytest.mark.parametrize("a", [1e-3, 0.02, 0.3, 1.0, 7.5, 400.0])
def test_gamma_and_log_gamma_draws_follow_the_gamma_law(a):
    key = rng.make_key(11)
    lg = _draws(rng.log_gamma, 8000, key, a)
    # CDF of log G: P(G <= e^y), written for tiny e^y as e^(a y) / Gamma(a + 1) (no underflow)
    cdf = lambda y: np.where(y < -30, np.exp(a * y - sc.gammaln(a + 1)), sc.gammainc(a, np.exp(np.minimum(y, 700))))
    assert st.kstest(lg, cdf).pvalue > 1e-3
    if a >= 0.3:
        g = _draws(rng.gamma, 8000, key, a)
        assert st.kstest(g, st.gamma(a).cdf).pvalue > 1e-3


def _log_gamma_cdf(a):
    """CDF of log G, G ~ Gamma(a, 1): P(G <= e^y), written for tiny e^y as e^(a y) / Gamma(a + 1)."""
    return lambda y: np.where(y < -30, np.exp(a * y - sc.gammaln(a + 1)), sc.gammainc(a, np.exp(np.minimum(y, 700))))


@pytest.mark.parametrize("a", [0.004, 0.049, 0.05, 0.2, 0.7, 0.999, 1.0, 1.3])
def test_gamma_draws_on_both_sides_of_each_route_boundary(a):
    """rng.gamma switches from GS to the boost at shape 0.05 and to Marsaglia-Tsang at 1: the law on each
    side (KS on log values, so that draws that underflow to 0 count as -inf below every finite point)."""
    key = rng.make_key(13)
    g = _draws(rng.gamma, 20000, key, a)
    assert np.all(g >= 0) and np.all(np.isfinite(g))
    _check_log_gamma_law(g, a)


def _check_log_gamma_law(g, a):
    """Draws that round to 0.0 (G below half the smallest subnormal, log 2^-1075) counted by a z-test;
    the rest checked by KS on log values against the law conditioned on exceeding that point."""
    cdf = _log_gamma_cdf(a)
    y0 = -1075 * math.log(2)
    p0 = float(cdf(y0))
    zero = (g == 0).mean()
    assert abs(zero - p0) < 4.5 * math.sqrt(max(p0 * (1 - p0), 1e-12) / len(g)) + 1e-12, (zero, p0)
    pos = g[g > 0]
    assert st.kstest(np.log(pos), lambda y: (cdf(y) - p0) / (1 - p0)).pvalue > 1e-3


@pytest.mark.parametrize("a", [0.002, 0.3, 0.9])
def test_gs_gamma_follows_the_gamma_law_in_both_branches(a):
    """Ahrens & Dieter's GS (rng._gamma_gs, written with exponential variates) at any shape below 1: at 0.3
    and 0.9 about 10-25% of its proposals come from the e^(1-x) branch."""
    key = rng.make_key(17)
    g = _draws(rng._gamma_gs, 20000, key, a)
    _check_log_gamma_law(g, a)
    if a > 0.1:
        assert abs((g > 1).mean() - st.gamma(a).sf(1)) < 4 * math.sqrt(st.gamma(a).sf(1) / len(g))


def test_exponential_ziggurat_body_wedges_and_tail():
    """rng.ziggurat_exponential: KS over all draws, chi-square on 400 equal-mass bins (the wedges of the
    256 layers are narrow: a wrong wedge test shows up as a bin excess), and the tail beyond r = 7.697
    (P = e^-r = 4.5e-4): its frequency and its law r + Exp(1); mean and variance z-tests (Var of the sample
    variance of Exp(1) is 8/n), which see a wedge test accepting e^-0.9x instead of e^-x (z ~ 7)."""
    n = 1_000_000
    key = rng.make_key(19)
    x = np.empty(n)
    _fill_exponential(key, x)
    assert x.min() >= 0
    assert st.kstest(x, st.expon.cdf).pvalue > 1e-3
    edges = st.expon.ppf(np.linspace(0, 1, 401))
    obs = np.histogram(x, edges)[0]
    stat = ((obs - n / 400) ** 2 / (n / 400)).sum()
    assert st.chi2(399).sf(stat) > 1e-4
    assert abs(x.mean() - 1) < 4.5 / math.sqrt(n)
    assert abs(x.var() - 1) < 4.5 * math.sqrt(8 / n)
    r = 7.69711747013104972
    tail = x[x > r]
    p = math.exp(-r)
    assert abs(tail.size - n * p) < 4.5 * math.sqrt(n * p)
    assert st.kstest(tail - r, st.expon.cdf).pvalue > 1e-3


from numba import njit  # noqa: E402


@njit
def _fill_exponential(key, out):
    for i in range(out.shape[0]):
        out[i] = rng.ziggurat_exponential(key)


@pytest.mark.parametrize("lam", [0.0, 0.4, 6.0, 9.99, 10.0, 37.0, 2500.0, 3.0e7])
def test_poisson_draws_follow_the_poisson_law(lam):
    key = rng.make_key(5)
    x = _draws(rng.poisson, 20000, key, lam)
    assert x.min() >= 0
    if lam == 0:
        assert np.all(x == 0)
        return
    # mean and variance z-tests, and a chi-square goodness of fit on the central cells
    assert abs(x.mean() - lam) < 4.5 * math.sqrt(lam / len(x))
    assert abs(x.var() / lam - 1) < 4.5 * math.sqrt(2 / len(x)) + 4.5 / math.sqrt(len(x) * lam)
    lo, hi = st.poisson(lam).ppf([0.01, 0.99]).astype(int)
    edges = np.unique(np.linspace(lo, hi + 1, 25).astype(int))
    obs = np.histogram(x, np.concatenate([[-1], edges, [np.inf]]))[0]
    cdf = st.poisson(lam).cdf(np.concatenate([[-1], edges - 1, [np.inf]]))
    exp = np.diff(cdf) * len(x)
    keep = exp > 5
    stat = ((obs[keep] - exp[keep]) ** 2 / exp[keep]).sum()
    assert st.chi2(keep.sum() - 1).sf(stat) > 1e-4


def test_invalid_variate_parameters_give_nan_or_minus_one_never_a_number():
    key = rng.make_key(0)
    assert np.isnan(rng.gamma(key, 0.0)) and np.isnan(rng.gamma(key, -1.0)) and np.isnan(rng.gamma(key, np.nan))
    assert rng.poisson(key, -0.5) == -1 and rng.poisson(key, np.inf) == -1 and rng.poisson(key, np.nan) == -1
    c, r = cir_constants(0.1)
    assert np.isnan(cir_transition(key, -1.0, 1.0, c, r)) and np.isnan(cir_transition(key, 1.0, 0.0, c, r))
    with pytest.raises(ValueError, match="positive"):
        cir_constants(0.0)


@pytest.mark.parametrize("a,theta,h", [(1e-3, 0.5, 0.01), (0.1, 2.0, 1.0), (5.0, 1.0, 0.001), (50.0, 100.0, 0.5),
                                        (0.5, 3.0, 5.0), (2.0, 0.0, 0.3), (0.3, 1.0, 0.01), (0.51, 0.2, 0.1),
                                        (0.6, 5.0, 0.01), (1.0, 0.05, 1.0), (1.0, 3.0, 0.01), (0.55, 0.0, 0.5),
                                        (0.501, 0.0, 1.0), (1e-3, 2e-4, 1e-4)])
def test_cir_transition_matches_the_noncentral_chi_square(a, theta, h):
    """SCIR eq. 2.2: theta' = (1 - e^-h)/2 W, W ~ chi'^2(2a, 2 theta e^-h / (1 - e^-h)). The cases cover both
    routes of cir_transition (a <= 1/2: Poisson mixture, by inversion and by PTRS; a > 1/2: central gamma
    plus a shifted squared normal, the gamma by GS, the boost and Marsaglia-Tsang) and theta = 0."""
    key = rng.make_key(7)
    c, r = cir_constants(h)
    x = _draws(cir_transition, 10000, key, theta, a, c, r)
    assert np.all(x >= 0)
    ref = st.ncx2(2 * a, 2 * theta * math.exp(-h) / c, scale=c / 2) if theta > 0 else st.chi2(2 * a, scale=c / 2)
    cdf = ref.cdf
    if 0 < a < 0.01 and theta * r > 0.5:
        # scipy's ncx2 CDF is wrong near 0 for df ~ 1e-3 (off by ~0.06 at the atom-like mass near 0): use the
        # Poisson mixture of gammas, sum_k Pois(k; lam) P(c Gamma(a + k) <= x), summed to 1e-15 of the mass
        lam = theta * r
        ks = np.arange(int(lam + 12 * math.sqrt(lam) + 40))
        w = st.poisson(lam).pmf(ks)
        mix = lambda v: (w[None, :] * sc.gammainc(a + ks[None, :], np.asarray(v, float)[:, None] / c)).sum(axis=1)
        # draws below half the smallest subnormal round to 0.0 (an atom of the rounded law): its mass by a
        # z-test, the positive draws by KS against the law conditioned on exceeding that point
        # (t = 2^-1075 is not a double: P(c G_k <= t) in logs, where only k = 0 contributes)
        p0 = w[0] * math.exp(a * (-1075 * math.log(2) - math.log(c)) - sc.gammaln(a + 1))
        assert abs((x == 0).mean() - p0) <= 4.5 * math.sqrt(p0 * (1 - p0) / len(x))
        x = x[x > 0]
        cdf = lambda v: (mix(v) - p0) / (1 - p0)
    assert st.kstest(x, cdf).pvalue > 1e-3


@pytest.mark.parametrize("h", [0.05, 2.0])
def test_cir_transition_from_zero_with_tiny_shape_on_the_log_scale(h):
    """theta = 0, a = 1e-3: the law is c * Gamma(1e-3) (half its mass below 1e-308), checked on log values."""
    key = rng.make_key(8)
    a = 1e-3
    c, r = cir_constants(h)
    x = _draws(cir_transition, 10000, key, 0.0, a, c, r)
    # below the smallest normal double the values are denormal or 0: the test counts them, then checks the
    # law of the rest (P(c G <= y), conditioned on y >= tiny) on log values
    tiny = np.finfo(float).tiny
    pos = x[x >= tiny]
    lcdf = lambda ly: np.where(ly - math.log(c) < -30, np.exp(a * (ly - math.log(c)) - sc.gammaln(a + 1)),
                               sc.gammainc(a, np.exp(np.minimum(ly - math.log(c), 700))))
    p0 = lcdf(math.log(tiny))
    assert abs((x < tiny).mean() - p0) < 4 * math.sqrt(p0 * (1 - p0) / len(x))
    assert st.kstest(np.log(pos), lambda ly: (lcdf(ly) - p0) / (1 - p0)).pvalue > 1e-3


def test_scir_estimator_mean_and_variance_follow_corollary_3_2():
    """Corollary 3.2: E[theta^_M] = theta0 e^-Mh + a (1 - e^-Mh);
    Var[theta^_M] = 2 theta0 (e^-Mh - e^-2Mh) + a (1 - e^-Mh)^2 + (1 - e^-2Mh)(1 - e^-h)/(1 + e^-h) Var[a^].

    20,000 independent chains in one state vector, each step with its own a^ = a + e, e = +-delta.
    """
    n_chains, M, h, theta0, a, delta = 20000, 6, 0.4, 3.0, 2.0, 1.5
    x = np.full(n_chains, theta0)
    hyper = np.concatenate([[2.0], np.full(n_chains, a)])  # block size 2: scir_step ignores blocks
    key = rng.make_key(3)
    gen = np.random.default_rng(3)
    p, xi = np.zeros(0), np.zeros(1)
    for _ in range(M):
        g = np.where(gen.random(n_chains) < 0.5, -delta, delta)
        scir_step(x, p, xi, g, key, h, hyper)
    e1, e2 = math.exp(-M * h), math.exp(-2 * M * h)
    mean = theta0 * e1 + a * (1 - e1)
    var = 2 * theta0 * (e1 - e2) + a * (1 - e1) ** 2 + (1 - e2) * (1 - math.exp(-h)) / (1 + math.exp(-h)) * delta**2
    assert abs(x.mean() - mean) < 4 * math.sqrt(var / n_chains)
    m4 = np.mean((x - x.mean()) ** 4)
    assert abs(x.var() - var) < 4 * math.sqrt((m4 - var**2) / n_chains)
    # the variance without the minibatch term is measurably smaller: the test sees the noise term
    assert abs(x.var() - (var - (1 - e2) * (1 - math.exp(-h)) / (1 + math.exp(-h)) * delta**2)) > \
        6 * math.sqrt((m4 - var**2) / n_chains)


def _omega(res):
    """The chain's simplex points (the driver normalises the gamma variables: samples sum to 1)."""
    np.testing.assert_allclose(res.samples.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(res.samples, res.gamma_samples / res.gamma_samples.sum(axis=1, keepdims=True))
    return res.samples


def test_scir_full_batch_is_exact_on_the_sparse_dirichlet_posterior():
    """With the full data a^ = alpha + n exactly, so SCIR is the exact CIR: omega ~ Dir(alpha + n)."""
    m = models.dirichlet_categorical(SPARSE, 0.1)
    res = samplers.run_chain(samplers.scir(), m, np.ones(10), seed=1, n_steps=20000, burnin=200, step_size=0.5)
    om = _omega(res)
    post = SPARSE + 0.1
    mean = post / post.sum()
    for j in (0, 1, 4):
        assert abs(mcmc.mcse_z(om[:, j], mean[j])) < 4
    # the sparse component's distribution (on the log scale) matches the exact Beta marginal
    ref = models.dirichlet_marginal(SPARSE, 0.1)[4]
    assert st.kstest(om[::10, 4], ref.cdf).pvalue > 1e-3


@njit(cache=True)
def _no_counts(x, data, idx, key, out):
    """No data: n^ = 0, so the target is the Dirichlet prior itself."""
    out[:] = 0.0


def test_samples_are_simplex_points_block_by_block_and_match_the_dirichlet_mean():
    """Two simplex blocks with a Dirichlet prior and no data: ``samples`` rows sum to 1 in each block (the
    normalised gammas, SCIR Sec. 1.2), ``gamma_samples`` keeps the gamma variables, and the sample mean of
    each block is alpha / sum(alpha) within 4 MCSE."""
    alpha = np.array([0.5, 1.0, 2.0, 3.0, 1.0, 0.3])
    man = GammaSimplex(2, 3, alpha)
    m = models.Model("dirichlet-prior", 6, 0, _no_counts, (), manifold=man)
    res = samplers.run_chain(samplers.scir(), m, np.ones(6), seed=7, n_steps=20000, burnin=100, step_size=0.5)
    om = res.samples.reshape(-1, 2, 3)
    np.testing.assert_allclose(om.sum(axis=2), 1.0, rtol=1e-12)
    assert np.all(om >= 0)
    gam = res.gamma_samples.reshape(-1, 2, 3)
    # not on the simplex: each block's gamma sum is Gamma(sum alpha, 1), mean 3.5 and 4.3
    np.testing.assert_allclose(gam.sum(axis=2).mean(axis=0), [3.5, 4.3], rtol=0.15)
    np.testing.assert_array_equal(om, gam / gam.sum(axis=2, keepdims=True))
    for b in range(2):
        a = alpha[3 * b:3 * b + 3]
        for j in range(3):
            assert abs(mcmc.mcse_z(om[:, b, j], a[j] / a.sum())) < 4, (b, j)


def test_scir_minibatch_gamma_means_are_unbiased():
    """SCIR with minibatches of 10 is asymptotically unbiased (Cor. 3.2): the mean of theta_j is alpha_j + n_j."""
    m = models.dirichlet_categorical(SPARSE, 0.1)
    res = samplers.run_chain(samplers.scir(), m, np.ones(10), seed=2, n_steps=40000, burnin=500, step_size=0.1,
                             batch_size=10)
    for j in (0, 1, 5):
        assert abs(mcmc.mcse_z(res.gamma_samples[:, j], SPARSE[j] + 0.1)) < 4


def test_sgrld_is_biased_upwards_at_a_sparse_component_and_scir_is_not():
    """SCIR Sec. 1.3 / Prop. 1.1: SGRLD's discretisation bias dominates near the boundary."""
    m = models.dirichlet_categorical(SPARSE, 0.1)
    exact_mean = 0.1 / (SPARSE.sum() + 1.0)
    kw = dict(n_steps=20000, burnin=1000, batch_size=10)
    sg = _omega(samplers.run_chain(samplers.sgrld(), m, np.ones(10), seed=4, step_size=0.01, **kw))[:, 4]
    sc_ = _omega(samplers.run_chain(samplers.scir(), m, np.ones(10), seed=4, step_size=0.01, **kw))[:, 4]
    assert mcmc.mcse_z(sg, exact_mean) > 6  # far above the exact mean
    assert np.median(sg) > 100 * np.median(sc_)
    ex = np.empty((2000, 10))
    key = rng.make_key(4)
    for i in range(2000):
        dirichlet(key, SPARSE + 0.1, ex[i])
    assert abs(np.log10(np.median(sc_)) - np.log10(np.median(ex[:, 4]))) < 1


def test_sgrld_on_a_dense_target_is_close_to_exact():
    m = models.dirichlet_categorical(DENSE, 0.1)
    res = samplers.run_chain(samplers.sgrld(), m, np.ones(10), seed=5, n_steps=30000, burnin=2000, step_size=0.01)
    om = _omega(res)
    assert abs(mcmc.mcse_z(om[:, 3], 0.1)) < 4


def test_exact_dirichlet_draws_match_the_beta_marginals():
    key = rng.make_key(9)
    a = np.array([0.01, 0.5, 3.0, 40.0])
    out = np.empty((6000, 4))
    for i in range(6000):
        dirichlet(key, a, out[i])
    assert np.allclose(out.sum(axis=1), 1.0)
    for j in (1, 2, 3):
        assert st.kstest(out[:, j], st.beta(a[j], a.sum() - a[j]).cdf).pvalue > 1e-3
    assert (out[:, 0] > 0).mean() > 0.9  # tiny shapes keep positive values (no underflow to exact zeros)


def _python_chain(alg, m, x0, seed, n_steps, batch, step_sizes):
    """The driver's chain re-done with build_kernel's Python step and the driver's two streams (a twin)."""
    from scalable_bayes.rng import partial_shuffle
    from scalable_bayes.samplers.driver import batch_key

    key = rng.make_key(seed, 0)
    step = alg.build_kernel(m)
    state = alg.init(x0, key, step_size=step_sizes[0])
    bkey = batch_key(seed, 0)
    perm = np.arange(m.n_data, dtype=np.int32)
    partial_shuffle(bkey, perm, batch)
    nxt = perm[:batch].astype(np.int64)
    out = []
    for t in range(n_steps):
        cur = nxt.copy()
        if t + 1 < n_steps:
            partial_shuffle(bkey, perm, batch)
            nxt = perm[:batch].astype(np.int64)
        state, _ = step(key, state, cur, step_sizes[t])
        out.append(state.position.copy())
    return np.array(out)


def test_python_steps_equal_the_compiled_chain_and_a_seed_repeats():
    m = models.dirichlet_categorical(SPARSE, 0.1)
    for alg, h in ((samplers.scir(), 0.3), (samplers.sgrld(), 0.005)):
        res = samplers.run_chain(alg, m, np.ones(10), seed=6, n_steps=50, step_size=h, batch_size=10)
        again = samplers.run_chain(alg, m, np.ones(10), seed=6, n_steps=50, step_size=h, batch_size=10)
        assert np.array_equal(res.samples, again.samples)
        twin = _python_chain(alg, m, np.ones(10), 6, 50, 10, [h] * 50)
        assert np.array_equal(twin, res.gamma_samples), alg.name


@pytest.mark.parametrize("n_blocks, block", [(3, 4), (1, 5)])
def test_simplex_kernels_match_their_naive_twins_step_for_step(n_blocks, block):
    """SCIR and SGRLD kernels against the pure-Python twins of tests/naive_samplers.py: the same draws from the
    same keys, the same arithmetic, so the positions and the chain's key agree exactly at every step (both
    routes of the CIR transition: sparse shapes a <= 1/2 and dense ones)."""
    from scalable_bayes.samplers.simplex import sgrld_step

    n = n_blocks * block
    gen = np.random.default_rng(n)
    alpha = np.where(np.arange(n) % 3 == 0, 0.1, 2.0)
    hyper = np.concatenate([[float(block)], alpha])
    for kern, twin, h in ((scir_step, naive.scir, 0.3), (sgrld_step, naive.sgrld, 0.01)):
        x = gen.gamma(2.0, size=n)
        ref = x.copy()
        key = rng.make_key(21)
        key_ref = key.copy()
        for _ in range(20):
            g = 10.0 * gen.poisson(1.0, size=n).astype(np.float64)  # a minibatch estimate (N/n) sum z_ij
            kern(x, np.zeros(0), np.zeros(1), g, key, h, hyper)
            ref = twin(ref, g, key_ref, h, block, alpha)
            assert np.array_equal(x, ref), kern
            assert np.array_equal(key, key_ref)
        assert np.all(x >= 0)


@pytest.mark.parametrize("alg, h", [(samplers.scir(), 0.3), (samplers.sgrld(), 0.005)])
def test_simplex_chains_equal_their_naive_twins(alg, h):
    """run_chain's compiled chain (minibatches from the driver's batch stream) equals the pure-Python twin
    driven by the model's gradient and the same two streams, bit for bit."""
    from scalable_bayes.rng import partial_shuffle
    from scalable_bayes.samplers.driver import batch_key

    m = models.dirichlet_categorical(SPARSE, 0.1)
    seed, n_steps, b = 8, 40, 25
    res = samplers.run_chain(alg, m, np.ones(10), seed=seed, n_steps=n_steps, step_size=h, batch_size=b)
    hyper = m.manifold.constants()
    block, alpha = int(hyper[0]), hyper[1:]
    twin = naive.scir if alg.name == "SCIR" else naive.sgrld
    key, bkey = rng.make_key(seed, 0), batch_key(seed, 0)
    perm = np.arange(m.n_data, dtype=np.int32)
    partial_shuffle(bkey, perm, b)
    nxt = perm[:b].astype(np.int64)
    x = np.ones(10)
    out = []
    for t in range(n_steps):
        cur = nxt.copy()
        if t + 1 < n_steps:
            partial_shuffle(bkey, perm, b)
            nxt = perm[:b].astype(np.int64)
        x = twin(x, m.gradient(x, cur, key), key, h, block, alpha)
        out.append(x)
    assert np.array_equal(np.array(out), res.gamma_samples), alg.name


def test_step_decay_schedule_is_applied_per_step():
    """h_t = h (1 + t/tau)^-kappa; kappa = 0 is the constant schedule, bit for bit."""
    m = models.dirichlet_categorical(SPARSE, 0.1)
    kw = dict(seed=3, n_steps=40, batch_size=10)
    base = samplers.run_chain(samplers.sgrld(), m, np.ones(10), step_size=0.01, **kw)
    flat = samplers.run_chain(samplers.sgrld(), m, np.ones(10), step_size=0.01, step_decay=(10.0, 0.0), **kw)
    assert np.array_equal(base.samples, flat.samples)
    dec = samplers.run_chain(samplers.sgrld(), m, np.ones(10), step_size=0.01, step_decay=(10.0, 0.55), **kw)
    assert not np.array_equal(base.samples[5:], dec.samples[5:])
    assert np.array_equal(base.samples[0], dec.samples[0])  # step 0 uses h (1 + 0)^-kappa = h
    # twin: the Python step with the scheduled step sizes
    twin = _python_chain(samplers.sgrld(), m, np.ones(10), 3, 40, 10, [0.01 * (1 + t / 10.0) ** -0.55 for t in range(40)])
    assert np.array_equal(twin[-1], dec.gamma_samples[-1])
    with pytest.raises(ValueError, match="tau > 0"):
        samplers.run_chain(samplers.sgrld(), m, np.ones(10), step_size=0.01, step_decay=(0.0, 0.5), **kw)


def test_bad_input_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match="non-negative integers"):
        models.dirichlet_categorical([3, -1, 2], 0.1)
    with pytest.raises(ValueError, match="positive"):
        models.dirichlet_categorical([3, 1, 2], 0.0)
    m = models.dirichlet_categorical(SPARSE, 0.1)
    with pytest.raises(ValueError, match="step_size"):
        samplers.run_chain(samplers.scir(), m, np.ones(10), seed=0, n_steps=5, step_size=0.0)
    with pytest.raises(ValueError, match="minibatch size"):
        samplers.run_chain(samplers.scir(), m, np.ones(10), seed=0, n_steps=5, step_size=0.1, batch_size=1001)
    with pytest.raises(ValueError, match=">= 0"):
        samplers.run_chain(samplers.scir(), m, -np.ones(10), seed=0, n_steps=5, step_size=0.1)
    with pytest.raises(ValueError, match="gamma-simplex"):  # a simplex sampler on a Euclidean model
        samplers.run_chain(samplers.scir(), models.gaussian_known_variance(np.zeros(5)), [0.0], seed=0, n_steps=5,
                           step_size=0.1)
    with pytest.raises(ValueError, match="scir or sgrld"):  # a Euclidean sampler on a simplex model
        samplers.run_chain(samplers.sgld(), m, np.ones(10), seed=0, n_steps=5, step_size=0.1)
    with pytest.raises(ValueError, match="prior"):
        GammaSimplex(2, 3, [1.0, 2.0])


def test_a_step_that_would_go_negative_stops_with_the_step_number():
    """A shape a^ <= 0 (here from a statistic below -alpha) makes no silent clip: DivergenceError at that step."""
    man = GammaSimplex(1, 3, 0.5)
    calls = []

    def grad(x, idx, key):
        calls.append(1)
        return np.array([1.0, 2.0, -5.0 if len(calls) > 3 else 1.0])

    m = Model("bad", 3, n_data=10, grad_py=grad, manifold=man)
    with pytest.raises(DivergenceError, match="step 3"):
        samplers.run_chain(samplers.scir(), m, np.ones(3), seed=0, n_steps=10, step_size=0.1, batch_size=2)


def test_normalise_blocks_maps_each_block_to_the_simplex():
    th = np.array([1.0, 3.0, 0.0, 2.0, 2.0, 4.0])
    out = np.empty(6)
    normalise_blocks(th, 3, out)
    assert np.allclose(out, [0.25, 0.75, 0.0, 0.25, 0.25, 0.5])
    assert np.allclose(GammaSimplex(2, 3, 1.0).to_simplex(th).sum(axis=1), 1.0)


@pytest.mark.parametrize("step_name", ["scir_step", "sgrld_step"])
def test_parallel_block_steps_do_not_depend_on_the_thread_count(step_name):
    """The step kernels run blocks in parallel with one key per block: 1 and 2 threads draw the same chain."""
    import numba

    from scalable_bayes.samplers import simplex as sx

    step = getattr(sx, step_name)
    K, V = 7, 30
    gen = np.random.default_rng(0)
    hyper = np.concatenate([[float(V)], np.full(K * V, 0.05)])
    outs = []
    for threads in (1, 2):
        prev = numba.get_num_threads()
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        try:
            x = gen.gamma(1.0, 1.0, K * V) if not outs else x0.copy()
            if not outs:
                x0 = x.copy()
            key = rng.make_key(12)
            for t in range(20):
                g = np.random.default_rng(t).poisson(3.0, K * V).astype(float)
                step(x, np.zeros(0), np.zeros(1), g, key, 0.05, hyper)
            outs.append(x.copy())
        finally:
            numba.set_num_threads(prev)
    assert np.all(np.isfinite(outs[0])) and np.all(outs[0] >= 0)
    assert np.array_equal(outs[0], outs[1])


def test_ziggurat_normal_is_standard_normal_in_the_body_and_the_tails():
    from scalable_bayes.rng import ziggurat_normal

    key = rng.make_key(21)
    z = _draws(ziggurat_normal, 200000, key)
    assert st.kstest(z, st.norm.cdf).pvalue > 1e-3
    tail = np.abs(z[np.abs(z) > 3.0])  # the layer-0 tail beyond r = 3.654 and the wedges near it
    assert abs(len(tail) / len(z) - 2 * st.norm.sf(3.0)) < 4 * math.sqrt(2 * st.norm.sf(3.0) / len(z))
    assert st.kstest(tail, lambda x: 1 - st.norm.sf(x) / st.norm.sf(3.0)).pvalue > 1e-3
    assert abs(np.mean(z > 0) - 0.5) < 4 * math.sqrt(0.25 / len(z))


def test_simplex_chain_identical_in_a_second_process_with_the_caches_warm(tmp_path):
    """The block-parallel step kernels inside the compiled chunk loop: a second process with warm Numba and
    chunk-runner caches runs the same chain (a cached loop around a parallel kernel used to crash on load)."""
    import os
    import subprocess
    import sys

    script = tmp_path / "run.py"
    script.write_text(
        "import sys, numpy as np\n"
        "from scalable_bayes import models, samplers\n"
        "m = models.dirichlet_categorical(np.array([800, 100, 100, 0, 0, 0, 0, 0, 0, 0]), 0.1)\n"
        "a = samplers.run_chain(samplers.scir(), m, np.ones(10), seed=2, n_steps=300, step_size=0.1, batch_size=10)\n"
        "b = samplers.run_chain(samplers.sgrld(), m, np.ones(10), seed=2, n_steps=300, step_size=1e-3, batch_size=10)\n"
        "np.save(sys.argv[1], np.concatenate([a.samples, b.samples]))\n"
    )
    env = dict(os.environ, SCALABLE_BAYES_CACHE=str(tmp_path / "sb"))
    outs = []
    for i in range(2):
        out = tmp_path / f"s{i}.npy"
        subprocess.run([sys.executable, str(script), str(out)], check=True, env=env, timeout=600)
        outs.append(np.load(out))
    np.testing.assert_array_equal(outs[0], outs[1])


@pytest.mark.parametrize("factory", ["scir", "sgrld"])
def test_the_serial_twin_draws_the_parallel_chain_and_is_chosen_for_few_blocks(factory):
    """A model with fewer than SERIAL_BELOW_BLOCKS blocks runs the serial twin of the block-parallel step
    (compiled once and cached on disk, where a parallel chain compiles in every process); both draw the
    same chain, block by block from the same keys."""
    from scalable_bayes.manifolds import GammaSimplex
    from scalable_bayes.models import Model
    from scalable_bayes.models.simplex import _count_grad
    from scalable_bayes.samplers import simplex as S

    alg = getattr(samplers, factory)()
    parallel, serial = ((S.scir_step, S.scir_step_serial) if factory == "scir"
                        else (S.sgrld_step, S.sgrld_step_serial))
    n_blocks, block = 20, 3
    labels = np.sort(np.random.default_rng(0).integers(0, n_blocks * block, size=400))
    model = Model("blocks", n_blocks * block, n_data=labels.size, grad_kernel=_count_grad, data=(labels,),
                  manifold=GammaSimplex(n_blocks, block, 0.5))
    assert alg.bind(model).kernel is parallel
    assert alg.bind(models.dirichlet_categorical([5, 0, 3], 0.5)).kernel is serial
    kw = dict(seed=3, n_steps=300, step_size=0.05, batch_size=40, progress=False)
    x0 = np.ones(n_blocks * block)
    a = samplers.run_chain(alg, model, x0, **kw)
    b = samplers.run_chain(alg._replace(kernel=serial, kernel_for=None), model, x0, **kw)
    np.testing.assert_array_equal(a.gamma_samples, b.gamma_samples)


@pytest.mark.parametrize("factory", ["scir", "sgrld"])
@pytest.mark.parametrize("threads", [1, 2])
def test_a_python_gradient_gets_the_thread_pool_step_which_draws_the_same_chain(factory, threads):
    """A model with a Python gradient and many blocks runs the thread-pool twin of the step (called from Python;
    its block kernel compiles as a plain cached function): the same chain as the serial twin, on one thread or
    two."""
    from scalable_bayes.manifolds import GammaSimplex
    from scalable_bayes.models import Model
    from scalable_bayes.models.simplex import _count_grad
    from scalable_bayes.samplers import simplex as S
    from scalable_bayes.utils import numba_threads

    alg = getattr(samplers, factory)()
    serial, threaded = ((S.scir_step_serial, S.scir_step_threads) if factory == "scir"
                        else (S.sgrld_step_serial, S.sgrld_step_threads))
    n_blocks, block = 20, 3
    labels = np.sort(np.random.default_rng(0).integers(0, n_blocks * block, size=400))
    man = GammaSimplex(n_blocks, block, 0.5)
    compiled = Model("blocks", n_blocks * block, n_data=labels.size, grad_kernel=_count_grad, data=(labels,),
                     manifold=man)

    def grad_py(x, idx, key):
        out = np.zeros(n_blocks * block)
        _count_grad(x, (labels,), np.asarray(idx, np.int64), key, out)
        return out

    python = Model("blocks_py", n_blocks * block, n_data=labels.size, grad_py=grad_py, manifold=man)
    assert alg.bind(python).kernel is threaded
    kw = dict(seed=3, n_steps=200, step_size=0.05, batch_size=40, progress=False)
    x0 = np.ones(n_blocks * block)
    with numba_threads(threads):
        a = samplers.run_chain(alg, python, x0, **kw)
    b = samplers.run_chain(alg._replace(kernel=serial, kernel_for=None), compiled, x0, **kw)
    np.testing.assert_array_equal(a.gamma_samples, b.gamma_samples)
