"""Geodesic samplers of the SGGMC paper (Liu, Zhu & Song 2016) on products of spheres.

Each test can fail for a wrong kernel: the geodesic flow keeps norms and tangency over 10^6 steps and
matches the closed-form great circle; kernels agree with slow NumPy twins; statistical tests compare
chains with known vMF moments (MCSE z-tests) and densities.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit

from scalable_bayes.manifolds import Sphere, geodesic_flow, project_tangent


# ------------------------------------------------------------------ manifold kernels
@njit(cache=True)
def _flow_many(x, v, t, block, n):
    for _ in range(n):
        geodesic_flow(x, v, t, block)


def _unit_and_tangent_error(x, v, block):
    xb = x.reshape(-1, block)
    vb = v.reshape(-1, block)
    return np.max(np.abs(np.sqrt(np.sum(xb**2, axis=1)) - 1.0)), np.max(np.abs(np.sum(xb * vb, axis=1)))


def test_geodesic_flow_keeps_norm_and_tangency_over_a_million_steps():
    sph = Sphere(3, 5)
    x = sph.random_point(1)
    v = sph.project(x, np.random.default_rng(2).normal(size=sph.dim) * 3.0)
    speed0 = np.sqrt(np.sum(v.reshape(3, 5) ** 2, axis=1))
    _flow_many(x, v, 0.37, 5, 1_000_000)
    ue, te = _unit_and_tangent_error(x, v, 5)
    assert ue < 1e-12 and te < 1e-12
    # the speed is conserved by the flow up to accumulated rounding of the re-projection
    assert np.allclose(np.sqrt(np.sum(v.reshape(3, 5) ** 2, axis=1)), speed0, rtol=1e-6)


def test_geodesic_flow_is_the_great_circle():
    # on S^1 a flow for time t with speed a turns the angle by a t
    x = np.array([1.0, 0.0])
    v = np.array([0.0, 2.0])
    geodesic_flow(x, v, 0.3, 2)
    assert np.allclose(x, [math.cos(0.6), math.sin(0.6)], atol=1e-15)
    assert np.allclose(v, [-2 * math.sin(0.6), 2 * math.cos(0.6)], atol=1e-14)
    # zero velocity: nothing moves; flow for t then -t returns
    x = Sphere(2, 4).random_point(3)
    v = np.zeros(8)
    x0 = x.copy()
    geodesic_flow(x, v, 1.0, 4)
    assert np.allclose(x, x0, rtol=0, atol=1e-15)
    v = Sphere(2, 4).project(x, np.arange(8.0))
    v0 = v.copy()
    geodesic_flow(x, v, 0.8, 4)
    geodesic_flow(x, v, -0.8, 4)
    assert np.allclose(x, x0, atol=1e-13) and np.allclose(v, v0, atol=1e-12)


@pytest.mark.parametrize("n_blocks", [4, 9])
def test_flow_and_projection_of_many_blocks_equal_block_by_block(n_blocks):
    """Four blocks at a time (their sums side by side) give each block's numbers of the one-block kernels, bit for
    bit, including a block at rest, one with a NaN velocity, one whose velocity overflows and one whose position
    cannot be renormalised; 9 blocks: two groups of four and one left over."""
    rng = np.random.default_rng(n_blocks)
    block = 37
    x = rng.standard_normal((n_blocks, block))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    v = rng.standard_normal((n_blocks, block)) * 10.0 ** rng.integers(-3, 2, (n_blocks, 1))
    v[1] = 0.0
    v[2, 5] = np.nan
    v[3] = 1e300
    if n_blocks > 4:
        x[6] = 0.0  # |x|^2 = 0 after a move of a zero position with zero velocity
        v[6] = 0.0
    for t in (0.7, 1e-4):
        xa, va = x.ravel().copy(), v.ravel().copy()
        project_tangent(xa, va, block)
        geodesic_flow(xa, va, t, block)
        for b in range(n_blocks):
            xb, vb = x[b].copy(), v[b].copy()
            project_tangent(xb, vb, block)
            geodesic_flow(xb, vb, t, block)
            np.testing.assert_array_equal(xa[b * block:(b + 1) * block], xb, err_msg=f"block {b}")
            np.testing.assert_array_equal(va[b * block:(b + 1) * block], vb, err_msg=f"block {b}")


def test_project_tangent_and_sphere_checks():
    sph = Sphere(2, 3)
    x = sph.random_point(0)
    v = np.ones(6)
    project_tangent(x, v, 3)
    assert np.max(np.abs(np.sum(x.reshape(2, 3) * v.reshape(2, 3), axis=1))) < 1e-15
    assert sph.intrinsic_dim == 4 and sph.dim == 6 and np.array_equal(sph.constants(), [3.0])
    sph.check_position(x)
    bad = x.copy()
    bad[3:] *= 1.001
    with pytest.raises(ValueError, match="block 1"):
        sph.check_position(bad, "test")
    with pytest.raises(ValueError, match="length"):
        sph.check_position(x[:5])
    with pytest.raises(ValueError, match="block_size"):
        Sphere(2, 1)
    with pytest.raises(ValueError, match="n_blocks"):
        Sphere(0, 3)


# ------------------------------------------------------------------ kernels vs naive twins
import naive_samplers as naive  # noqa: E402

from scalable_bayes import models, samplers  # noqa: E402
from scalable_bayes.evaluation import mcmc  # noqa: E402
from scalable_bayes.rng import make_key  # noqa: E402
from scalable_bayes.samplers import geodesic  # noqa: E402
from scalable_bayes.samplers.base import DivergenceError  # noqa: E402
from scalable_bayes.samplers.driver import batch_key  # noqa: E402
from scalable_bayes.samplers.geodesic import (  # noqa: E402
    _fisher_noise, gmc_step, sg_geodesic_fisher_step, sg_geodesic_inner_step, sg_geodesic_step)
from scalable_bayes.special import bessel_ratio  # noqa: E402


def test_geodesic_flow_matches_naive():
    sph = Sphere(3, 4)
    x = sph.random_point(5)
    v = sph.project(x, np.random.default_rng(5).normal(size=12))
    xr, vr = naive.sphere_flow(x, v, 0.21, 4)
    geodesic_flow(x, v, 0.21, 4)
    np.testing.assert_allclose(x, xr, rtol=0, atol=1e-13)
    np.testing.assert_allclose(v, vr, rtol=0, atol=1e-13)


@pytest.mark.parametrize("thermo", [0.0, 1.0])
def test_sg_kernels_match_naive(thermo):
    sph = Sphere(2, 3)
    C, V, eps = 2.0, 30.0, 0.04
    model = models.vmf_product([[3.0, 1.0, -2.0], [0.5, 0.5, 4.0]], [4.0, 9.0])
    coef = model.data[0]  # a deterministic vMF-product gradient -coef
    x = sph.random_point(7)
    p = np.random.default_rng(7).normal(size=6)  # not tangent: the kernel projects on entry
    key = make_key(3)
    ref = naive.NaiveRNG(key.copy())
    xr, vr, xir = x.copy(), p.copy(), C
    xi = np.array([C, 0.0])
    for L in (1, 3):
        for _ in range(15):
            g = -coef.copy()
            if L == 1:
                hyper = np.array([C, V, 1.0, thermo, 3.0])
                sg_geodesic_step(x, p, xi, g, key, eps, hyper)
            else:
                hyper = np.array([C, V, 3.0, thermo, 3.0])
                sg_geodesic_inner_step(x, p, xi, g, key, eps, hyper, model.data, np.zeros(0, np.int64),
                                       model.grad_kernel)
            xr, vr, xir, _ = naive.sg_geodesic(xr, vr, xir, lambda x_, l_: -coef, ref, eps, C, V, thermo, 3, L=L)
        np.testing.assert_allclose(x, xr, rtol=0, atol=1e-12)
        np.testing.assert_allclose(p, vr, rtol=0, atol=1e-12)
        assert xi[0] == pytest.approx(xir if thermo else C, abs=1e-12)


def _mixture(n=60, seed=2):
    X = models.vmf_mixture_data(n, seed=seed)
    return models.vmf_mixture(X), X


def test_mixture_gradient_matches_naive_and_finite_differences():
    m, X = _mixture()
    x = np.concatenate([[math.cos(-0.1), math.sin(-0.1)], [math.cos(0.4), math.sin(0.4)]])
    idx = np.array([3, 7, 11, 40, 59], dtype=np.int64)
    g = m.gradient(x, idx, make_key(0))
    gr, D = naive.vmf_mixture_grads(x, X, idx, 20.0, 20.0, 20.0, [1.0, 0.0], [1.0, 0.0])
    np.testing.assert_allclose(g, gr, rtol=1e-12, atol=1e-10)
    out = np.empty(4)
    for k, i in enumerate(idx):
        assert m.datum_grad_kernel(x, m.data, i, out) == 60.0
        np.testing.assert_allclose(out, D[k], rtol=1e-12, atol=1e-12)
    num = naive.numerical_grad(lambda y: m.potential(y, idx), x, eps=1e-6)
    np.testing.assert_allclose([num[i] for i in range(4)], g, rtol=1e-6, atol=1e-5)
    # the toy's gradient is the derivative of its potential (noise off)
    t = models.toy_circle(noise_var=0.0)
    y = np.array([math.cos(0.3), math.sin(0.3)])
    num = naive.numerical_grad(lambda z: t.potential(z), y)
    np.testing.assert_allclose([num[0], num[1]], t.gradient(y, np.zeros(0, np.int64), make_key(0)), rtol=1e-7)


@pytest.mark.parametrize("thermo", [0.0, 1.0])
def test_fisher_kernel_matches_naive(thermo):
    m, X = _mixture()
    C, eps, L = 0.5, 0.01, 2  # small C: some directions are clipped (counted)
    x = np.concatenate([[math.cos(-0.1), math.sin(-0.1)], [math.cos(0.4), math.sin(0.4)]])
    p = np.random.default_rng(1).normal(size=4)
    xi = np.array([C, 0.0])
    hyper = np.array([C, 0.0, float(L), thermo, 2.0])
    key = make_key(9)
    ref = naive.NaiveRNG(key.copy())
    xr, vr, xir, clip = x.copy(), p.copy(), C, 0
    idx = np.array([1, 5, 9, 20, 33, 47, 50, 58], dtype=np.int64)
    kw = dict(k1=20.0, k2=20.0, kx=20.0, e1=[1.0, 0.0], e2=[1.0, 0.0])
    for _ in range(10):
        g = m.gradient(x, idx, key)
        ref.u64  # the model draws no noise: the streams stay aligned
        sg_geodesic_fisher_step(x, p, xi, g, key, eps, hyper, m.data, idx, m.grad_kernel, m.datum_grad_kernel)
        xr, vr, xir, c = naive.sg_geodesic(
            xr, vr, xir, lambda y, _l: naive.vmf_mixture_grads(y, X, idx, **kw)[0], ref, eps, C, 0.0, thermo, 2,
            L=L, datum_grads=lambda y: naive.vmf_mixture_grads(y, X, idx, **kw)[1], N=60)
        clip += c
    np.testing.assert_allclose(x, xr, rtol=0, atol=1e-12)
    np.testing.assert_allclose(p, vr, rtol=0, atol=1e-11)
    assert xi[1] == clip > 0
    if thermo:
        assert xi[0] == pytest.approx(xir, abs=1e-12)


def test_fisher_noise_has_the_covariance_of_sggmc_eq8():
    """eps (2C Lambda - eps Lambda V Lambda), V = N (N - b)/b * sample covariance of the per-datum gradients."""
    m, X = _mixture()
    x = np.concatenate([[math.cos(-0.1), math.sin(-0.1)], [math.cos(0.4), math.sin(0.4)]])
    idx = np.arange(0, 60, 6, dtype=np.int64)
    C, eps, N, b = 40.0, 0.01, 60, 10
    _, D = naive.vmf_mixture_grads(x, X, idx, 20.0, 20.0, 20.0, [1.0, 0.0], [1.0, 0.0])
    V = N * (N - b) / b * np.cov(D.T)
    Lam = np.zeros((4, 4))
    for s in (0, 2):
        Lam[s:s + 2, s:s + 2] = np.eye(2) - np.outer(x[s:s + 2], x[s:s + 2])
    target = eps * (2 * C * Lam - eps * Lam @ V @ Lam)
    assert np.linalg.eigvalsh(Lam @ V @ Lam).max() * eps < 2 * C  # no clipping at these settings
    key = make_key(4)
    z, out = np.empty(4), np.empty(4)
    S = np.empty((40000, 4))
    for k in range(S.shape[0]):
        assert _fisher_noise(x, z, key, eps, C, m.data, idx, m.datum_grad_kernel, 2, out) == 0
        S[k] = out
    emp = S.T @ S / S.shape[0]
    # entrywise z-test of the second moments (sd of a product of normals ~ sqrt(s_ii s_jj + s_ij^2)/sqrt(n))
    sd = np.sqrt(np.outer(np.diag(target), np.diag(target)) + target**2) / math.sqrt(S.shape[0])
    assert np.all(np.abs(emp - target) < 5 * sd + 1e-15)
    # and it differs from the V = 0 noise by far more than that (the test can fail)
    assert np.max(np.abs(emp - eps * 2 * C * Lam) / (sd + 1e-15)) > 20


def test_gmc_kernel_matches_naive():
    m = models.vmf_product([[1.0, 2.0, 0.0], [0.0, -1.0, 1.0]], [5.0, 12.0])
    coef = m.data[0]
    x = m.manifold.random_point(2)
    p = np.zeros(6)
    xi = np.zeros(2 + 6)
    key = make_key(11)
    ref = naive.NaiveRNG(key.copy())
    xr = x.copy()
    hyper = np.array([7.0, 3.0])
    accs = []
    for _ in range(20):
        g = -coef.copy()
        _, acc = gmc_step(x, p, xi, g, key, 0.3, hyper, m.data, np.zeros(0, np.int64), m.grad_kernel,
                          m.potential_kernel)
        xr, vr, accr = naive.gmc(xr, lambda y: -coef, lambda y: -coef @ y, ref, 0.3, 7, 3)
        assert acc == pytest.approx(accr, rel=1e-10, abs=1e-12)
        accs.append(acc)
        np.testing.assert_allclose(x, xr, rtol=0, atol=1e-12)
    assert min(accs) < 1.0  # some proposals are not accepted outright: the MH branch is exercised


def test_python_step_equals_compiled_chain():
    m, _ = _mixture()
    x0 = np.concatenate([[1.0, 0.0], [math.cos(0.3), math.sin(0.3)]])
    for alg, b in [(samplers.sggmc(10.0, noise=50.0), 10), (samplers.gsgnht(10.0, n_inner=3), 10),
                   (samplers.sggmc(40.0, n_inner=2, noise="fisher"), 10), (samplers.gmc(4), None)]:
        res = samplers.run_chain(alg, m, x0, seed=5, n_steps=40, step_size=0.003, batch_size=b)
        key = make_key(5, 0)
        st = alg.init(x0, key, step_size=0.003)
        step = alg.build_kernel(m)
        bkey = batch_key(5, 0)
        perm = np.arange(60, dtype=np.int32)
        bs = 60 if b is None else b
        from scalable_bayes.rng import partial_shuffle
        if bs < 60:
            partial_shuffle(bkey, perm, bs)
        nxt = perm[:bs].astype(np.int64)
        for t in range(40):
            cur = nxt.copy()
            if bs < 60 and t + 1 < 40:
                partial_shuffle(bkey, perm, bs)
                nxt = perm[:bs].astype(np.int64)
            st, info = step(key, st, cur, 0.003)
            assert info.thermostat == res.thermostat[t]
        np.testing.assert_array_equal(st.position, res.samples[-1])
        np.testing.assert_array_equal(st.thermostat, res.state.thermostat)
        again = samplers.run_chain(alg, m, x0, seed=5, n_steps=40, step_size=0.003, batch_size=b, checkpoint_every=7)
        np.testing.assert_array_equal(again.samples, res.samples)


# ------------------------------------------------------------------ statistical tests
def _vmf_chains(alg, model, h, n_steps=20000, n_chains=2):
    return np.stack([samplers.run_chain(alg, model, model.manifold.random_point(100 + c), seed=3, chain=c,
                                        n_steps=n_steps, step_size=h, burnin=n_steps // 10).samples
                     for c in range(n_chains)])


@pytest.mark.parametrize("d", [3, 50])
@pytest.mark.parametrize("kappa", [1.0, 10.0, 100.0])
def test_vmf_mean_resultant_length(d, kappa):
    """E[mu'x] = A_d(kappa) (MCSE z-tests): GMC with exact gradients; SGGMC and gSGNHT with gradient noise
    N(0, V I) of variance V = C/eps (half of the injected noise) and V known to the sampler; SGGMC told
    V = 0 under noise 4C/eps (effective temperature 3) is rejected."""
    mu = np.zeros(d)
    mu[0] = 1.0
    A = bessel_ratio(kappa, d=d)
    C = 3.0
    h = 0.2 / math.sqrt(kappa + d)
    V = C / h
    noisy = models.vmf(mu, kappa, noise_var=V)
    h_gmc = 0.5 * math.pi / math.sqrt(kappa + d) / 10  # trajectory about a quarter period: no resonance
    for alg, model, hh in [(samplers.gmc(10), models.vmf(mu, kappa), h_gmc), (samplers.sggmc(C, noise=V), noisy, h),
                           (samplers.gsgnht(C, noise=V), noisy, h)]:
        ch = _vmf_chains(alg, model, hh)[:, :, 0]
        z = mcmc.mcse_z(ch, A, layout="chain,draw")
        assert abs(z) < 4.5, (alg.name, d, kappa, z, ch.mean(), A)
    bad = _vmf_chains(samplers.sggmc(C, noise=0.0), models.vmf(mu, kappa, noise_var=4 * C / h), h)[:, :, 0]
    assert mcmc.mcse_z(bad, A, layout="chain,draw") < -4.5


def test_product_of_two_spheres():
    mus = np.array([[0.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
    kap = [2.0, 30.0]
    m = models.vmf_product(mus, kap)
    assert m.manifold.intrinsic_dim == 4
    mus = mus / np.linalg.norm(mus, axis=1, keepdims=True)
    for alg, h in [(samplers.gsgnht(2.0, n_inner=2), 0.03), (samplers.gmc(8), 0.05)]:
        ch = _vmf_chains(alg, m, h)
        for b in range(2):
            r = ch[:, :, 3 * b:3 * b + 3] @ mus[b]
            z = mcmc.mcse_z(r, bessel_ratio(kap[b], d=3), layout="chain,draw")
            assert abs(z) < 4.5, (alg.name, b, z)
        # the blocks are independent: E[(mu1'x1)(mu2'x2)] = A(k1) A(k2)
        prod = (ch[:, :, 0:3] @ mus[0]) * (ch[:, :, 3:6] @ mus[1])
        assert abs(mcmc.mcse_z(prod, bessel_ratio(kap[0], d=3) * bessel_ratio(kap[1], d=3), layout="chain,draw")) < 4.5


def _near(ang):
    return np.maximum(np.cos(ang - math.pi / 3), np.cos(ang + math.pi / 3))


def _toy_upper_mass():
    th = np.linspace(0, math.pi, 200001)
    return np.trapezoid(models.toy_circle_density(th), th)


def test_s1_toy_gmc_and_sggmc_with_known_noise():
    """SGGMC Sec. 5.1 / App. F.1: L = 30, eps = 0.01, C = rho/eps = 10, V = 1000; 10,000 samples each."""
    edges = np.arange(-math.pi, math.pi + 0.1, 0.1)
    edges[-1] = math.pi
    true_mass = np.diff([np.trapezoid(models.toy_circle_density(np.linspace(-math.pi, e, 4001)),
                                      np.linspace(-math.pi, e, 4001)) for e in edges])
    upper = _toy_upper_mass()
    assert 0.3 < upper < 0.36
    th = np.linspace(-math.pi, math.pi, 400001)
    near = np.trapezoid(_near(th) * models.toy_circle_density(th), th)  # E[cos(angle to the nearest mode)]
    x0 = np.array([1.0, 0.0])
    out = {}
    for lab, alg, model in [("gmc", samplers.gmc(30), models.toy_circle(noise_var=0.0)),
                            ("sggmc", samplers.sggmc(10.0, n_inner=30, noise=1000.0), models.toy_circle()),
                            ("sggmc_V0", samplers.sggmc(10.0, n_inner=30, noise=0.0), models.toy_circle())]:
        r = samplers.run_chain(alg, model, x0, seed=1, n_steps=11000, step_size=0.01, burnin=1000)
        ang = np.arctan2(r.samples[:, 1], r.samples[:, 0])
        hist = np.histogram(ang, edges)[0] / len(ang)
        out[lab] = (0.5 * np.abs(hist - true_mass).sum(), mcmc.mcse_z((ang > 0).astype(float), upper),
                    mcmc.mcse_z(_near(ang), near))
    for lab in ("gmc", "sggmc"):
        assert out[lab][0] < 0.06 and abs(out[lab][1]) < 4.5 and abs(out[lab][2]) < 4.5, out
    assert out["sggmc"][0] <= out["gmc"][0] + 0.05
    # told V = 0 while the gradient carries N(0, 1000 I): temperature 1.5, wider modes; rejected
    assert out["sggmc_V0"][0] > 0.08 and out["sggmc_V0"][2] < -4.5, out


def test_vmf_mixture_posterior_with_fisher_noise_estimate():
    """The SGGMC Sec. 5.2 posterior (here with data drawn at v1 = v2, one mode) from minibatches of 10 of
    100 points with V(x) the empirical Fisher estimate: posterior means of cos/sin of both angles vs a grid
    (MCSE z-tests); clipped directions are counted, never NaN."""
    X = models.vmf_mixture_data(100, v1_angle=0.2, v2_angle=0.2, seed=0)
    m = models.vmf_mixture(X)
    g = np.linspace(-math.pi, math.pi, 541)[:-1]
    T1, T2 = np.meshgrid(g, g, indexing="ij")
    lp = models.vmf_mixture_log_posterior(T1, T2, X)
    w = np.exp(lp - lp.max())
    w /= w.sum()
    fs = {"cos1": lambda a, b: np.cos(a), "cos2": lambda a, b: np.cos(b), "sin1": lambda a, b: np.sin(a),
          "sin2": lambda a, b: np.sin(b)}
    x0 = np.array([math.cos(0.2), math.sin(0.2)] * 2)
    alg = samplers.sggmc(50.0, n_inner=2, noise="fisher")
    res = [samplers.run_chain(alg, m, x0, seed=2, chain=c, n_steps=15000, step_size=0.006, burnin=1500,
                              batch_size=10) for c in range(2)]
    s = np.stack([r.samples for r in res])
    t1, t2 = np.arctan2(s[..., 1], s[..., 0]), np.arctan2(s[..., 3], s[..., 2])
    for k, f in fs.items():
        z = mcmc.mcse_z(f(t1, t2), float((w * f(T1, T2)).sum()), layout="chain,draw")
        assert abs(z) < 4.5, (k, z)
    assert all(np.isfinite(r.samples).all() and r.state.thermostat[1] >= 0 for r in res)


# ------------------------------------------------------------------ bad input
def test_bad_input_is_a_clear_error():
    e = models.gaussian([0.0, 0.0], np.eye(2))
    for alg in (samplers.sggmc(1.0), samplers.gmc(3), samplers.gsgnht(1.0, n_inner=2)):
        with pytest.raises(ValueError, match="sphere manifold"):
            samplers.run_chain(alg, e, [1.0, 0.0], seed=0, n_steps=5, step_size=0.1)
    v = models.vmf([1.0, 0.0, 0.0], 3.0)
    with pytest.raises(ValueError, match="euclidean manifold"):
        samplers.run_chain(samplers.sgnht(), v, [1.0, 0.0, 0.0], seed=0, n_steps=5, step_size=0.1)
    with pytest.raises(ValueError, match="block 0"):
        samplers.run_chain(samplers.sggmc(1.0), v, [1.0, 0.1, 0.0], seed=0, n_steps=5, step_size=0.1)
    with pytest.raises(ValueError, match="block 0"):
        samplers.sggmc(1.0).build_kernel(v)(0, samplers.sggmc(1.0).init([2.0, 0, 0], 0), None, 0.1)
    with pytest.raises(ValueError, match=r"2C - eps V = 2\*1 - 0.1\*100"):
        samplers.sggmc(1.0, noise=100.0, step_size=0.1)
    with pytest.raises(ValueError, match="exceeds the largest step 0.02"):
        samplers.run_chain(samplers.sggmc(1.0, noise=100.0), v, [1.0, 0, 0], seed=0, n_steps=5, step_size=0.1)
    with pytest.raises(ValueError, match="fisher"):
        samplers.sggmc(1.0, noise="exact")
    with pytest.raises(ValueError, match="n_inner"):
        samplers.gsgnht(1.0, n_inner=0)
    with pytest.raises(ValueError, match="friction C"):
        samplers.sggmc(-1.0)
    with pytest.raises(ValueError, match="n_leapfrog"):
        samplers.gmc(0)
    with pytest.raises(ValueError, match="datum_grad_kernel"):  # no data: no per-datum gradients
        samplers.run_chain(samplers.sggmc(1.0, noise="fisher"), v, [1.0, 0, 0], seed=0, n_steps=5, step_size=0.1)
    from scalable_bayes.models.base import Model
    bare = Model("bare", 3, 0, v.grad_kernel, v.data, manifold=Sphere(1, 3))
    with pytest.raises(ValueError, match="potential_kernel"):
        samplers.run_chain(samplers.gmc(2), bare, [1.0, 0, 0], seed=0, n_steps=5, step_size=0.1)
    with pytest.raises(ValueError, match="concentrations"):
        models.vmf_product([[1.0, 0.0]], [-1.0])
    alg, eps = samplers.sggmc_sgd(5e-4, 0.1, 100, n_inner=10, noise="fisher")
    assert eps == pytest.approx(math.sqrt(5e-6)) and alg.hyper[0] == pytest.approx(0.1 / eps)


@njit(cache=True)
def _nan_far_from_start_grad(x, data, idx, key, out):
    for j in range(x.shape[0]):
        out[j] = -data[0][j]
    if x[0] > 0.9:  # a model that breaks once the chain gets near mu
        out[0] = np.nan


def test_divergence_inside_inner_steps_names_the_step():
    v = models.vmf([1.0, 0.0, 0.0], 50.0)
    broken = models.SphereModel("broken", Sphere(1, 3), _nan_far_from_start_grad, v.data, v.potential_kernel)
    for alg in (samplers.sggmc(2.0, n_inner=5), samplers.sggmc(2.0)):
        with pytest.raises(DivergenceError, match=r"diverged at step \d+") as err:
            samplers.run_chain(alg, broken, [0.0, 1.0, 0.0], seed=0, n_steps=5000, step_size=0.05)
        assert err.value.step > 0


def test_closure_kernels_take_the_uncached_loop_with_the_same_draws():
    v = models.vmf([1.0, 2.0, 2.0], 4.0, noise_var=5.0)
    gk = v.grad_kernel

    @njit
    def closure_grad(x, data, idx, key, out):  # not importable: chunk_runner compiles the loop in memory
        gk(x, data, idx, key, out)

    local = models.SphereModel("vmf_closure", v.manifold, closure_grad, v.data, v.potential_kernel, exact_gradient=False)
    for alg in (samplers.gsgnht(2.0, n_inner=3, noise=5.0), samplers.sggmc(2.0, noise=5.0)):
        a = samplers.run_chain(alg, v, [1.0, 0.0, 0.0], seed=4, n_steps=500, step_size=0.05)
        b = samplers.run_chain(alg, local, [1.0, 0.0, 0.0], seed=4, n_steps=500, step_size=0.05)
        np.testing.assert_array_equal(a.samples, b.samples)
    py = models.Model("py", 3, 0, grad_py=lambda x, idx, key: v.gradient(x, idx, key), manifold=v.manifold)
    with pytest.raises(ValueError, match="only a NumPy gradient"):
        samplers.run_chain(samplers.sggmc(2.0, n_inner=2), py, [1.0, 0.0, 0.0], seed=0, n_steps=5, step_size=0.05)


# ------------------------------------------------------------------ settings that run to nonsense
def _python_steps(alg, model, x0, h, n, batch=None):
    """``n`` Python steps (SamplingAlgorithm.build_kernel) from ``x0``."""
    step = alg.build_kernel(model)
    key = make_key(0, 0)
    st = alg.init(x0, key, step_size=h)
    for _ in range(n):
        st, _info = step(key, st, batch, h)
    return st


def test_friction_times_step_beyond_its_bound_is_refused():
    """SGGMC with eps C = 100 (eps = 1, C = 100 on S^2) froze at its start: exp(-eps C) wipes the velocity every
    step (sampled temperature (a/2)/sinh(a/2) = 1e-20). Refused above eps C = 4.35 (temperature 1/2), and gSGNHT
    above 4 sqrt(3) (temperature cosh(asinh(a)/2) = 2), by the run, the factory and App. E's parametrisation."""
    v = models.vmf([1.0, 0.0, 0.0], 10.0)
    for alg, C in ((samplers.sggmc(100.0), 100.0), (samplers.gsgnht(100.0), 100.0)):
        with pytest.raises(ValueError, match=r"largest step .*eps C would exceed .*C = 100.*friction C"):
            samplers.run_chain(alg, v, [0.0, 1.0, 0.0], seed=0, n_steps=50, step_size=1.0)
        with pytest.raises(ValueError, match="eps C would exceed"):
            _python_steps(alg, v, [0.0, 1.0, 0.0], 1.0, 1)
    with pytest.raises(ValueError, match=r"eps C = 1 x 100 = 100 exceeds 4.355.*Lower the step size below 0.04355"):
        samplers.sggmc(100.0, step_size=1.0)
    with pytest.raises(ValueError, match=r"momentum coefficient rho = 5 = eps C exceeds 4.355"):
        samplers.sggmc_sgd(5e-4, 5.0, 100)
    with pytest.raises(ValueError, match=r"rho = 8 = eps C exceeds 6.928"):
        samplers.sggmc_sgd(5e-4, 8.0, 100, thermostat=True)
    # the bounds are where the sampled temperature crosses 1/2 and 2
    assert geodesic.sampled_temperature(geodesic.SGGMC_MAX_EPS_C, False) == pytest.approx(0.5, rel=1e-12)
    assert geodesic.sampled_temperature(geodesic.GSGNHT_MAX_EPS_C, True) == pytest.approx(2.0, rel=1e-12)
    assert geodesic.sampled_temperature(0.1, False) > 0.999 and geodesic.sampled_temperature(0.1, True) < 1.002
    # just below the bound the chain runs
    samplers.run_chain(samplers.sggmc(100.0), v, [0.0, 1.0, 0.0], seed=0, n_steps=50, step_size=0.04)


def test_step_turning_a_block_past_half_a_circle_is_refused():
    """eps sqrt(block - 1) > pi: the velocity at its equilibrium length wraps each block more than half a great
    circle per step (the bound comes from the model's sphere, at bind)."""
    s2 = models.vmf([1.0, 0.0, 0.0], 10.0)
    with pytest.raises(ValueError, match=r"eps sqrt\(block - 1\) = pi on S\^2.*lower step_size below 2.221"):
        samplers.run_chain(samplers.gsgnht(0.1), s2, [0.0, 1.0, 0.0], seed=0, n_steps=50, step_size=3.0)
    mu = np.zeros(50)
    mu[0] = 1.0
    s49 = models.vmf(mu, 10.0)
    x0 = s49.manifold.random_point(0)
    for alg in (samplers.sggmc(0.1), samplers.gsgnht(0.1, n_inner=2)):
        with pytest.raises(ValueError, match=r"half a great circle.*below 0.4488"):
            samplers.run_chain(alg, s49, x0, seed=0, n_steps=50, step_size=0.5)
        with pytest.raises(ValueError, match=r"half a great circle"):
            _python_steps(alg, s49, x0, 0.5, 1)
        samplers.run_chain(alg, s49, x0, seed=0, n_steps=50, step_size=0.4)


def test_runaway_thermostat_is_a_divergence_naming_it():
    """gSGNHT at eps = 2 on S^2 (below the angle bound): the thermostat overshot to a negative friction, then to
    xi ~ 1e3 and froze the chain (measured before the check: max |xi| 1969, mean of the chain 0.03 against 0.90).
    The step kernel stops it once |xi eps| > 53 ln 2; the DivergenceError names the thermostat and the step."""
    v = models.vmf([1.0, 0.0, 0.0], 10.0)
    for alg in (samplers.gsgnht(1.0), samplers.gsgnht(1.0, n_inner=2)):
        with pytest.raises(DivergenceError, match=r"thermostat xi reached .*xi eps = .*at step size 2\b") as err:
            samplers.run_chain(alg, v, [0.0, 1.0, 0.0], seed=3, n_steps=20000, step_size=2.0)
        assert err.value.step >= 0
        with pytest.raises(DivergenceError, match=r"thermostat xi reached"):
            _python_steps(alg, v, np.array([0.0, 1.0, 0.0]), 2.0, 20000)
    m, _ = _mixture()
    x0 = np.concatenate([[1.0, 0.0], [math.cos(0.3), math.sin(0.3)]])
    with pytest.raises(DivergenceError, match=r"thermostat xi reached"):
        samplers.run_chain(samplers.gsgnht(0.5, noise="fisher"), m, x0, seed=1, n_steps=20000, step_size=2.0,
                           batch_size=10)


def test_gmc_refuses_minibatches():
    """GMC's Metropolis-Hastings test on a minibatch's potential targets a different law at every step (measured on
    the Fig. 4 posterior: E[cos v1] 0.988 at batch size 1 against 0.994 on the full data); refused, naming the
    fix. The full data set runs."""
    m, _ = _mixture()
    x0 = np.concatenate([[1.0, 0.0], [math.cos(0.3), math.sin(0.3)]])
    with pytest.raises(ValueError, match=r"GMC\(T=4\): minibatch of 10 < N = 60 .*Metropolis-Hastings.*batch_size=None"):
        samplers.run_chain(samplers.gmc(4), m, x0, seed=0, n_steps=5, step_size=0.01, batch_size=10)
    with pytest.raises(ValueError, match=r"minibatch of 10 < N = 60"):
        _python_steps(samplers.gmc(4), m, x0, 0.01, 1, batch=np.arange(10, dtype=np.int64))
    samplers.run_chain(samplers.gmc(4), m, x0, seed=0, n_steps=5, step_size=0.01, batch_size=60)


def test_pipeline_and_paper_settings_pass_the_checks():
    """The SGGMC paper's settings (App. F.1-F.3 as in config/config.yaml) are far inside every bound."""
    from scalable_bayes.inference.sam import SphericalAdmixture
    from scalable_bayes_papers.sggmc import runs

    f3 = dict(step_size=0.01, rho=0.1, noise_var=1000.0, n_inner=30, mu2_reading="angle")
    for method in ("SGGMC", "gSGNHT", "SGGMC-V0", "GMC"):
        alg, model = runs.fig3_sampler(method, f3)
        alg.bind(model).check_step_size(0.01)
    alg, eps = samplers.sggmc_sgd(5e-4, 0.1, 100, n_inner=10, noise="fisher")  # Fig. 4
    alg.bind(_mixture()[0]).check_step_size(eps)
    # Fig. 5: the default gamma = 0.5 / kappa on the smallest corpus shape of the pipeline, and 100x it
    for kappa, D, V in ((3e4, 2000, 4656), (2e4, 2000, 5000)):
        for gamma in (0.5 / kappa, 50.0 / kappa):
            for method in ("sggmc", "gsgnht"):
                SphericalAdmixture(20, method, kappa=kappa, gamma=gamma)._validate(D, V)
