"""SG-MCMC samplers: kernels vs naive references, statistical tests, thermostat claims, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

import naive_samplers as naive
from scalable_bayes import models, samplers
from scalable_bayes.evaluation import mcmc
from scalable_bayes.models.base import Model
from scalable_bayes.samplers import euclidean
from scalable_bayes.samplers.driver import batch_key
from scalable_bayes.rng import (cdf_count, cdf_search, fill_normal, make_key, partial_shuffle, uniform,
                                uniform_int)

# ------------------------------------------------------------------ (a) kernels vs naive


def test_rng_matches_naive_and_is_keyed():
    key = make_key(7, 3)
    ref = naive.NaiveRNG(key.copy())
    for _ in range(50):
        assert uniform(key) == ref.uniform()
    out = np.empty(7)  # odd length exercises the unpaired tail
    fill_normal(key, out)
    np.testing.assert_array_equal(out, ref.normals(7))
    assert uniform_int(key, 13) == ref.uniform_int(13)
    assert not np.array_equal(make_key(7, 3), make_key(7, 4))
    np.testing.assert_array_equal(make_key(7, 3), make_key(7, 3))


@njit
def _cdf_both(cum, n, u):
    return cdf_search(cum, n, u), cdf_count(cum, n, u)


def test_cdf_count_finds_the_index_cdf_search_finds():
    """Counting the running sums at or below u gives the binary search's first index above u, n - 1 when none is:
    over running sums with ties (zero weights, at the start, inside and at the end), targets drawn, exactly on
    every sum, below the first and past the last, n = 1..40."""
    rng = np.random.default_rng(3)
    checked = 0
    for n in range(1, 41):
        w = rng.gamma(0.5, 1.0, n)
        w[rng.random(n) < 0.3] = 0.0
        w[0] = 0.0 if n % 3 == 0 else w[0]
        cum = np.cumsum(w)
        for u in (*rng.uniform(-0.1, cum[-1] * 1.1 + 0.1, 20), *cum, -1.0, cum[-1] + 1.0):
            a, b = _cdf_both(cum, n, float(u))
            assert a == b, (n, u)
            checked += 1
    assert checked > 1500


@pytest.mark.parametrize("n", [0, 1, 2, 9, 512, 1027])
@pytest.mark.parametrize("chunk", [1, 3, 256])
def test_chunked_normals_are_the_pairwise_normals_whatever_the_chunk(n, chunk):
    # fill_normal_chunked draws a chunk's accepted polar tries first, then their scales: the numbers and the
    # key's end state must be those of drawing pair after pair (rejected tries included), at every chunk size
    from scalable_bayes.rng import fill_normal_chunked, normal_pair

    key = make_key(5, n)
    ref = naive.NaiveRNG(key.copy())
    out = np.full(n, np.nan)
    fill_normal_chunked(key, out, np.empty(chunk))
    np.testing.assert_array_equal(out, ref.normals(n))
    assert uniform(key) == ref.uniform()  # the same state afterwards
    a, b = normal_pair(key)
    assert (a, b) == ref.normal_pair()
    with pytest.raises(ValueError, match="at least one entry"):
        fill_normal_chunked(key, np.empty(4), np.empty(0))


def test_one_seeding_for_keys_and_generators_and_one_draw_for_both_generators():
    from numba import njit

    from scalable_bayes.rng import draw_index, draw_uniform, next_uniform, rng_from_seed, seed_sequence, stream

    # make_key and rng_from_seed spawn the same SeedSequence from (seed, *keys)
    np.testing.assert_array_equal(make_key(7, 3), seed_sequence(7, 3).generate_state(2, dtype=np.uint64))
    assert rng_from_seed(7, 3).random() == np.random.default_rng(seed_sequence(7, 3)).random()
    assert rng_from_seed(7, 3).random() != rng_from_seed(7, 4).random()
    g = np.random.default_rng(0)
    assert rng_from_seed(g) is g
    with pytest.raises(ValueError, match="keyed"):
        rng_from_seed(g, 1)

    @njit
    def draws(rng, n, out, idx):
        for i in range(n):
            rng, out[i] = draw_uniform(rng)
            rng, idx[i] = draw_index(rng, 7)
        return rng

    out, idx = np.empty(5), np.empty(5, np.int64)
    key = make_key(11)
    ref = naive.NaiveRNG(key.copy())
    draws(key, 5, out, idx)  # a xoroshiro key: advanced in place
    for i in range(5):
        assert out[i] == ref.uniform() and idx[i] == ref.uniform_int(7)
    st = np.uint64(stream(3, 1, 2))  # (a compiled function returns it to Python as an int)
    end = draws(st, 5, out, idx)  # a SplitMix64 stream state: the advanced state is returned
    for i in range(5):
        st, u = next_uniform(st)
        assert out[i] == u
        st, u = next_uniform(np.uint64(st))
        assert idx[i] == min(int(u * 7), 6)
        st = np.uint64(st)
    assert end == st


def test_rng_normal_moments():
    key = make_key(1)
    z = np.empty(200_000)
    fill_normal(key, z)
    assert abs(z.mean()) < 5 / np.sqrt(z.size)
    assert abs(z.var() - 1) < 5 * np.sqrt(2 / z.size)


def test_partial_shuffle_is_a_subset_without_replacement():
    key = make_key(3)
    perm = np.arange(20, dtype=np.int64)
    ref = naive.NaiveRNG(key.copy())
    rp = list(range(20))
    for _ in range(30):
        partial_shuffle(key, perm, 6)
        for i in range(6):
            j = i + ref.uniform_int(20 - i)
            rp[i], rp[j] = rp[j], rp[i]
        assert list(perm) == rp
        assert len(set(perm[:6])) == 6
    assert sorted(perm) == list(range(20))
    partial_shuffle(key, perm, 20)  # full batch edge case
    assert sorted(perm) == list(range(20))


@pytest.mark.parametrize("n", [1, 4, 5])
def test_kernels_match_naive(n):
    rng0 = np.random.default_rng(n)
    h, A, bhat, mu = 0.05, 1.3, 0.4, 2.0
    for name in ["sgld", "sghmc", "sgnht", "sgnht_fixed", "sghmc_reform", "sgnht_reform", "sgnht_matrix"]:
        x = rng0.standard_normal(n)
        p = rng0.standard_normal(n)
        key = make_key(11)
        ref = naive.NaiveRNG(key.copy())
        xr, pr = x.copy(), p.copy()
        if name == "sgnht_matrix":
            xi = np.zeros(n * n + n)
            Xi = rng0.standard_normal((n, n)) * 0.1
            xi[: n * n] = Xi.ravel()
            Xir = Xi.copy()
        else:
            xi = np.array([0.7])
            xir = 0.7
        for _ in range(5):
            g = rng0.standard_normal(n)
            if name == "sgld":
                euclidean.sgld_step(x, p, xi, g, key, h, np.zeros(0))
                xr = naive.sgld(xr, g, ref, h)
            elif name == "sghmc":
                ke, _ = euclidean.sghmc_step(x, p, xi, g, key, h, np.array([A, bhat]))
                xr, pr = naive.sghmc(xr, pr, g, ref, h, A, bhat)
                assert ke == pytest.approx(pr @ pr / (2 * n))
            elif name in ("sgnht", "sgnht_fixed"):
                fixed = name == "sgnht_fixed"
                ke, th = euclidean.sgnht_step(x, p, xi, g, key, h, np.array([A, float(fixed)]))
                xr, pr, xir = naive.sgnht(xr, pr, xir, g, ref, h, A, fixed)
                assert th == pytest.approx(xir)
            elif name == "sghmc_reform":
                euclidean.sghmc_reform_step(x, p, xi, g, key, h, np.array([A * h, bhat * h]))
                xr, pr = naive.sghmc_reform(xr, pr, g, ref, h, A * h, bhat * h)
            elif name == "sgnht_reform":
                ke, th = euclidean.sgnht_reform_step(x, p, xi, g, key, h, np.array([A * h]))
                xr, pr, xir = naive.sgnht_reform(xr, pr, xir, g, ref, h, A * h)
                assert th == pytest.approx(xir)
                assert ke == pytest.approx(pr @ pr / (2 * n * h))
            else:
                _, th = euclidean.sgnht_matrix_step(x, p, xi, g, key, h, np.array([A, mu]))
                xr, pr, Xir = naive.sgnht_matrix(xr, pr, Xir, g, ref, h, A, mu)
                np.testing.assert_allclose(xi[: n * n], Xir.ravel(), rtol=1e-12, atol=1e-14)
                assert th == pytest.approx(np.trace(Xir) / n)
            np.testing.assert_allclose(x, xr, rtol=1e-12, atol=1e-14, err_msg=name)
            if name != "sgld":
                np.testing.assert_allclose(p, pr, rtol=1e-12, atol=1e-14, err_msg=name)


def test_model_gradients_match_naive():
    rng = np.random.default_rng(0)
    X, y, _ = models.synthetic_logistic_data(500, 7, 1)
    m = models.logistic_regression(X, y, prior_var=2.0)
    theta = rng.standard_normal(7)
    idx = rng.choice(500, 37, replace=False).astype(np.int64)
    ref = naive.logreg_grad(theta, X.astype(np.float32), y, idx, 2.0)
    np.testing.assert_allclose(m.gradient(theta, idx, make_key(0)), ref, rtol=1e-5, atol=1e-6)
    xs = rng.standard_normal(50)
    ng = models.normal_gamma(xs)
    idx = np.arange(10, dtype=np.int64)
    np.testing.assert_allclose(ng.gradient(np.array([0.3, 1.7]), idx, make_key(0)),
                               naive.normal_gamma_grad(0.3, 1.7, xs, idx), rtol=1e-12)
    kv = models.gaussian_known_variance(xs)
    assert kv.gradient(np.array([0.2]), idx, make_key(0))[0] == pytest.approx(50 * 0.2 - 5 * xs[:10].sum())
    dw = models.double_well(B=0.0, h=0.01)
    for t in [-3.0, -0.5, 0.0, 2.2]:
        assert dw.gradient(np.array([t]), idx, make_key(0))[0] == pytest.approx(naive.double_well_grad(t), rel=1e-6)


def test_double_well_density_normalised():
    grid = np.linspace(-8, 8, 40001)
    assert np.trapezoid(models.double_well_density(grid), grid) == pytest.approx(1.0, rel=1e-6)


def test_python_step_equals_compiled_chain_and_is_reproducible():
    xs = np.random.default_rng(0).standard_normal(100)
    m = models.normal_gamma(xs)
    m_py = Model("ng_py", 2, 100, grad_py=lambda x, idx, key: m.gradient(x, idx, key), reflect=[0, 1])
    alg = samplers.sgnht(A=1.0)
    a = samplers.run_chain(alg, m, [0.0, 1.0], seed=5, n_steps=3000, step_size=0.01, batch_size=10, burnin=100, thin=3)
    b = samplers.run_chain(alg, m_py, [0.0, 1.0], seed=5, n_steps=3000, step_size=0.01, batch_size=10, burnin=100,
                           thin=3, checkpoint_every=700)
    c = samplers.run_chain(alg, m, [0.0, 1.0], seed=5, n_steps=3000, step_size=0.01, batch_size=10, burnin=100, thin=3,
                           checkpoint_every=1234)
    np.testing.assert_array_equal(a.samples, b.samples)
    np.testing.assert_array_equal(a.samples, c.samples)
    np.testing.assert_array_equal(a.thermostat, b.thermostat)
    assert a.samples.shape == (967, 2) and a.sample_steps[0] == 100 and a.sample_steps[1] == 103
    assert np.all(a.samples[:, 1] > 0)  # reflecting boundary keeps gamma positive
    # the functional step API: same numbers as the driver's first step
    key = make_key(5, 0)
    st = alg.init([0.0, 1.0], key, step_size=0.01)
    step = alg.build_kernel(m)
    perm = np.arange(100, dtype=np.int64)
    partial_shuffle(batch_key(5, 0), perm, 10)  # minibatches come from their own stream
    st2, info = step(key, st, perm[:10], 0.01)
    assert info.kinetic_energy == pytest.approx(a.kinetic_energy[0])
    assert info.thermostat == pytest.approx(a.thermostat[0])
    assert st.position[0] == 0.0  # functional: the input state is not modified
    d = samplers.run_chain(alg, m, [0.0, 1.0], seed=6, n_steps=3000, step_size=0.01, batch_size=10)
    assert not np.array_equal(a.kinetic_energy, d.kinetic_energy)


# ------------------------------------------------------------------ (b) statistical tests

COV5 = None


def _cov5():
    rng = np.random.default_rng(42)
    Q, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    return Q @ np.diag([0.5, 0.8, 1.0, 1.5, 2.0]) @ Q.T


SAMPLER_CASES = [
    ("SGLD", lambda: samplers.sgld(), 0.005, 1),
    ("SGHMC", lambda: samplers.sghmc(A=1.0), 0.01, 1),
    ("SGNHT", lambda: samplers.sgnht(A=1.0), 0.01, 1),
    ("SGHMC-reform", lambda: samplers.sghmc_reformulated(a=0.01), 1e-4, 1),
    ("SGNHT-reform", lambda: samplers.sgnht_reformulated(a=0.01), 1e-4, 1),
    ("SGNHT-matrix", lambda: samplers.sgnht_matrix(A=1.0, mu=1.0), 0.01, 1),
]


def _chains(alg, model, x0, h, n_steps, n_chains=4, burnin=5000, thin=5):
    out = []
    for c in range(n_chains):
        r = samplers.run_chain(alg, model, x0, seed=123, chain=c, n_steps=n_steps, step_size=h, burnin=burnin, thin=thin)
        out.append(r.samples)
    return np.stack(out)  # (chains, draws, dim)


@pytest.mark.parametrize("label,make,h,_", SAMPLER_CASES, ids=[c[0] for c in SAMPLER_CASES])
def test_mcse_gaussian_1d(label, make, h, _):
    model = models.gaussian([1.0], [[2.0]])
    d = _chains(make(), model, [0.0], h, 150_000)[:, :, 0]
    z_mean = mcmc.mcse_z(d, 1.0, layout="chain,draw")
    z_var = mcmc.mcse_z(d, 2.0, func=lambda v: (v - 1.0) ** 2, layout="chain,draw")
    assert abs(z_mean) < 4.5, (label, z_mean)
    assert abs(z_var) < 4.5, (label, z_var, ((d - 1) ** 2).mean())


@pytest.mark.parametrize("label,make,h,_", SAMPLER_CASES, ids=[c[0] for c in SAMPLER_CASES])
def test_mcse_gaussian_correlated_5d(label, make, h, _):
    cov = _cov5()
    mean = np.array([1.0, -1.0, 0.5, 0.0, 2.0])
    model = models.gaussian(mean, cov)
    d = _chains(make(), model, np.zeros(5), h, 150_000)
    for i in range(5):
        z = mcmc.mcse_z(d[:, :, i], mean[i], layout="chain,draw")
        assert abs(z) < 4.5, (label, i, z)
        z = mcmc.mcse_z(d[:, :, i], cov[i, i], func=lambda v, m=mean[i]: (v - m) ** 2, layout="chain,draw")
        assert abs(z) < 4.5, (label, "var", i, z)
    z = mcmc.mcse_z(d[:, :, 0] * 0 + (d[:, :, 0] - mean[0]) * (d[:, :, 4] - mean[4]), cov[0, 4], layout="chain,draw")
    assert abs(z) < 4.5, (label, "cov04", z)


def test_sgnht_thermostat_absorbs_injected_noise():
    """Paper claim (Sec. 3-4): with unknown gradient noise B, xi -> A + B and mean KE -> 1/2; samples stay correct."""
    h, B = 0.01, 1.0
    sd = np.sqrt(2 * B / h)
    model = models.gaussian(np.zeros(5), _cov5(), grad_noise_sd=sd)
    res = [samplers.run_chain(samplers.sgnht(A=0.0, xi0=0.0), model, np.zeros(5), seed=9, chain=c,
                              n_steps=200_000, step_size=h, burnin=20_000, thin=5) for c in range(4)]
    ke = np.array([r.kinetic_energy[20_000:] for r in res])
    xi = np.array([r.thermostat[20_000:] for r in res])
    assert abs(ke.mean() - 0.5) < 0.02, ke.mean()
    assert abs(xi.mean() - B) < 0.1, xi.mean()
    d = np.stack([r.samples for r in res])
    cov = _cov5()
    for i in range(5):
        assert abs(mcmc.mcse_z(d[:, :, i], cov[i, i], func=lambda v: v**2, layout="chain,draw")) < 4.5


def test_sghmc_wrong_bhat_is_biased_and_right_bhat_is_not():
    """SGHMC with B_hat = 0 under injected noise B = 1 samples at temperature (A + B)/A = 2: variance doubles."""
    h, B = 0.01, 1.0
    model = models.gaussian([0.0], [[1.0]], grad_noise_sd=np.sqrt(2 * B / h))
    wrong = _chains(samplers.sghmc(A=1.0, B_hat=0.0), model, [0.0], h, 150_000)[:, :, 0]
    right = _chains(samplers.sghmc(A=2.0, B_hat=1.0), model, [0.0], h, 150_000)[:, :, 0]
    z_wrong = mcmc.mcse_z(wrong, 1.0, func=lambda v: v**2, layout="chain,draw")
    z_right = mcmc.mcse_z(right, 1.0, func=lambda v: v**2, layout="chain,draw")
    assert z_wrong > 8, z_wrong
    assert abs((wrong**2).mean() - 2.0) < 0.25
    assert abs(z_right) < 4.5, z_right


def test_fixed_friction_too_large_lowers_kinetic_energy():
    """Fig. 1 mechanism: fixed xi = 10 > B starves the kinetic energy, xi = 0.1 < B overheats it."""
    model = models.double_well(B=1.0, h=0.01)
    ke = {}
    for xi in [0.1, 1.0, 10.0]:
        r = samplers.run_chain(samplers.sgnht(A=0.0, xi0=xi, fixed_xi=True), model, [0.0], seed=0,
                               n_steps=200_000, step_size=0.01)
        ke[xi] = r.kinetic_energy[10_000:].mean()
    assert abs(ke[1.0] - 0.5) < 0.05
    assert ke[10.0] < 0.2 and ke[0.1] > 1.0


# ------------------------------------------------------------------ bad input


def test_invalid_hyperparameters_rejected():
    with pytest.raises(ValueError, match="A"):
        samplers.sgnht(A=-1.0)
    with pytest.raises(ValueError, match="B_hat"):
        samplers.sghmc(A=0.5, B_hat=1.0)
    with pytest.raises(ValueError, match="mu"):
        samplers.sgnht_matrix(mu=0.0)
    m = models.gaussian_known_variance(np.zeros(10))
    with pytest.raises(ValueError, match="step_size"):
        samplers.run_chain(samplers.sgld(), m, [0.0], seed=0, n_steps=10, step_size=-0.1, batch_size=5)
    with pytest.raises(ValueError, match="minibatch size 11"):
        samplers.run_chain(samplers.sgld(), m, [0.0], seed=0, n_steps=10, step_size=0.1, batch_size=11)
    with pytest.raises(ValueError, match="burnin"):
        samplers.run_chain(samplers.sgld(), m, [0.0], seed=0, n_steps=10, step_size=0.1, burnin=10)
    with pytest.raises(ValueError, match="unknown sampler"):
        samplers.make_sampler("hmc")


def test_divergence_names_step_sampler_and_saves_partial(tmp_path):
    model = models.gaussian([0.0], [[1e-4]])  # stiff target: h = 0.1 explodes
    path = tmp_path / "partial.npz"
    with pytest.raises(samplers.DivergenceError, match=r"SGHMC diverged at step \d+.*step size 0.1 too large") as exc:
        samplers.run_chain(samplers.sghmc(A=0.1), model, [1.0], seed=0, n_steps=100_000, step_size=0.1,
                           checkpoint_every=10, partial_path=path)
    assert exc.value.step > 10
    saved = np.load(path)
    assert saved["samples"].shape[0] > 0 and np.all(np.isfinite(saved["samples"]))
    # the Python-step API raises the same error class
    alg = samplers.sghmc(A=0.1)
    st = alg.init([1e300], 0)
    with pytest.raises(samplers.DivergenceError, match="non-finite"):
        alg.build_kernel(model)(make_key(0), st, None, 0.1)


# ------------------------------------------------------------------ fast paths of the compiled driver


def test_logreg_float32_storage_matches_float64_reference():
    """X is stored as float32 but every product and sum is float64: the gradient agrees with an
    all-float64 computation on the original data to float32 rounding of X (~1e-7 relative)."""
    X, y, _ = models.synthetic_logistic_data(3000, 50, 4)
    m = models.logistic_regression(X, y, prior_var=0.5, max_batch=100)
    rng = np.random.default_rng(1)
    for b in [1, 3, 4, 37, 100]:  # remainders of the four-row blocks
        theta = rng.standard_normal(50)
        idx = rng.choice(3000, b, replace=False).astype(np.int64)
        Xb = X[idx]
        ref = theta / 0.5 - (3000 / b) * (Xb.T @ (y[idx] - 1.0 / (1.0 + np.exp(-Xb @ theta))))
        got = m.gradient(theta, idx, make_key(0))
        assert np.abs(got - ref).max() <= 1e-5 * np.abs(ref).max(), b
        # against the same float32-rounded data the only difference is summation order
        Xr = Xb.astype(np.float32).astype(np.float64)
        ref32 = theta / 0.5 - (3000 / b) * (Xr.T @ (y[idx] - 1.0 / (1.0 + np.exp(-Xr @ theta))))
        np.testing.assert_allclose(got, ref32, rtol=1e-10, atol=1e-9 * np.abs(ref32).max())


def test_logreg_prefetch_lookahead_never_changes_values():
    """The next-batch buffer only drives prefetches: any contents give bit-identical gradients."""
    X, y, _ = models.synthetic_logistic_data(2000, 50, 5)
    m = models.logistic_regression(X, y, max_batch=64)
    theta = np.random.default_rng(2).standard_normal(50)
    idx = np.random.default_rng(3).choice(2000, 64, replace=False).astype(np.int64)
    m.next_batch[:] = 0
    g0 = m.gradient(theta, idx, make_key(0))
    m.next_batch[:] = np.random.default_rng(4).integers(0, 2000, 64)
    np.testing.assert_array_equal(m.gradient(theta, idx, make_key(0)), g0)
    with pytest.raises(ValueError, match="max_batch"):
        m.gradient(theta, np.arange(65, dtype=np.int64), make_key(0))


def test_prefetch_intrinsic_is_a_no_op():
    from numba import njit

    from scalable_bayes.intrinsics import prefetch, prefetch_l2

    @njit
    def f(a):
        s = 0.0
        for i in range(a.shape[0]):
            prefetch(a, i * a.itemsize)
            prefetch_l2(a, (i + 8) * a.itemsize)
            s += a[i]
        return s

    a = np.arange(1000, dtype=np.float64)
    assert f(a) == a.sum()


@pytest.mark.parametrize("d", [5, 50])
def test_minibatches_come_from_their_own_stream_one_step_ahead(d):
    """The driver draws batch t+1 before the gradient of step t (lookahead), from batch_key(seed, chain):
    the batches it passes are exactly successive partial shuffles of that stream, in both paths, and
    the compiled lookahead chain equals the Python-path chain bit for bit, for any chunking (the
    gradient has no fastmath flags: inlined into the chunk loop or called alone, it computes the same bits)."""
    X, y, _ = models.synthetic_logistic_data(500, d, 6)
    m = models.logistic_regression(X, y, max_batch=20)
    seen = []

    def grad_py(x, idx, key):
        seen.append(np.array(idx))
        return m.gradient(x, idx, key)

    m_py = Model("logreg_py", d, 500, grad_py=grad_py)
    alg = samplers.sghmc(A=1.0)
    kw = dict(seed=3, chain=2, n_steps=400, step_size=1e-3, batch_size=20, thin=1)
    a = samplers.run_chain(alg, m, np.zeros(d), **kw)
    b = samplers.run_chain(alg, m_py, np.zeros(d), checkpoint_every=33, **kw)
    c = samplers.run_chain(alg, m, np.zeros(d), checkpoint_every=1, **kw)
    np.testing.assert_array_equal(a.samples, b.samples)
    np.testing.assert_array_equal(a.samples, c.samples)
    np.testing.assert_array_equal(a.kinetic_energy, b.kinetic_energy)
    bk = batch_key(3, 2)
    perm = np.arange(500, dtype=np.int64)
    assert len(seen) == 400
    for t in range(400):
        partial_shuffle(bk, perm, 20)
        np.testing.assert_array_equal(seen[t], perm[:20])
    # another seed gives another chain
    other = samplers.run_chain(alg, m, np.zeros(d), **{**kw, "seed": 4})
    assert not np.array_equal(a.samples, other.samples)


@pytest.mark.slow
def test_compiled_chain_identical_across_processes_and_cache_states(tmp_path):
    """Same seed => same bytes whether the chunk loop is compiled in this process or loaded from
    Numba's on-disk cache (the first run compiles and caches, the second loads), and when the loop is
    compiled in a process that loads the gradient and the step from Numba's cache (the compiled chunk loop
    removed: the kernels are then linked as cached object code, not inlined from fresh IR). The second run
    compiles nothing (the logistic gradient has no fastmath flags, so its chunk loop is cached)."""
    import os
    import subprocess
    import sys

    script = tmp_path / "run.py"
    script.write_text(
        "import sys, numpy as np\n"
        "from scalable_bayes import models, samplers\n"
        "X, y, _ = models.synthetic_logistic_data(500, 50, 6)\n"
        "m = models.logistic_regression(X, y, max_batch=20)\n"
        "r = samplers.run_chain(samplers.sgnht(A=1.0), m, np.zeros(50), seed=3, n_steps=500, step_size=1e-3,"
        " batch_size=20)\n"
        "np.save(sys.argv[1], r.samples)\n"
        "print(r.compile_time)\n"
    )
    import shutil

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"), SCALABLE_BAYES_CACHE=str(tmp_path / "sb"))
    outs, compile_times = [], []
    for i in range(3):
        if i == 2:  # forget the compiled chunk loop only; the kernels stay in Numba's cache
            for d in (tmp_path / "numba").glob("chunk_runners*"):
                shutil.rmtree(d)
        out = tmp_path / f"s{i}.npy"
        run = subprocess.run([sys.executable, str(script), str(out)], check=True, env=env, timeout=600,
                             capture_output=True, text=True)
        outs.append(np.load(out))
        compile_times.append(float(run.stdout.split()[-1]))
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], outs[2])
    assert compile_times[0] > 0.2 and compile_times[2] > 0.2  # the chunk loop compiled
    assert compile_times[1] < 0.05, compile_times  # everything loaded from the caches


def test_logreg_sigmoid_residuals_within_an_ulp_of_libm_and_keep_nan():
    """The gradient's own vectorised exp: residuals y - 1/(1 + exp(-z)) agree with libm's to an ulp or two of
    1 over the whole range (including the clamped tails), and a NaN or infinite z stays non-finite
    or saturates exactly as libm's sigmoid does."""
    from scalable_bayes.models.logistic import _sigmoid_residuals

    rng = np.random.default_rng(11)
    z = np.concatenate([rng.standard_normal(20_000) * s for s in (0.01, 1.0, 10.0, 100.0, 1000.0)])
    z = np.concatenate([z, [0.0, -0.0, 708.0, -708.0, 709.5, -709.5, 745.0, -745.0, 1e308, -1e308]])
    X = np.zeros((z.size, 2), dtype=np.float32)
    X[:, 1] = rng.random(z.size) < 0.5
    idx = rng.permutation(z.size).astype(np.int64)
    got = z[idx].copy()
    _sigmoid_residuals(got, X, idx, 1, 3.0, np.zeros(z.size, dtype=np.int64))
    with np.errstate(over="ignore"):
        ref = 3.0 * (X[idx, 1] - 1.0 / (1.0 + np.exp(-z[idx])))
    assert np.abs(got - ref).max() <= 3.0 * 2.0**-51  # c = 3 times a residual with ~1 ulp error
    assert np.mean(got == ref) > 0.5  # most bits equal (numpy's own SIMD exp is not libm either)
    special = np.array([np.nan, np.inf, -np.inf])
    out = special.copy()
    _sigmoid_residuals(out, np.zeros((3, 2), dtype=np.float32), np.arange(3, dtype=np.int64), 1, 1.0,
                       np.zeros(3, dtype=np.int64))
    assert np.isnan(out[0]) and out[1] == -1.0 and abs(out[2]) < 1e-300


def test_predictive_average_scores_the_running_mean_of_the_predictions_after_burnin():
    from types import SimpleNamespace

    cb = mcmc.PredictiveAverage(2, lambda th: (th, 2.0 * th), lambda v, t: (float(v.sum()), float(t.sum())))
    out = [cb(step, SimpleNamespace(position=np.array([float(step)]))) for step in (1, 2, 3, 5)]
    assert out[:2] == [None, None] and cb.n == 2
    assert cb.rows == [(3, 3.0, 6.0), (5, 4.0, 8.0)] and out[2:] == [6.0, 8.0]


# ---------------------------------------------------------------------------- user input at the boundary
# (Numba checks no bounds: a wrong-length gradient must be an error before a kernel reads it)


def _py_model(grad, dim=2):
    from scalable_bayes.models import Model
    return Model("m", dim, 100, grad_py=grad)


@pytest.mark.parametrize("grad, exc, words", [
    (lambda p, i, k: np.array([100 * p[0]]), ValueError, "shape (1,), expected (2,)"),
    (lambda p, i, k: np.zeros(3), ValueError, "shape (3,), expected (2,)"),
    (lambda p, i, k: None, TypeError, "returned None"),
    (lambda p, i, k: 1.5, ValueError, "returned a scalar"),
    (lambda p, i, k: np.zeros((2, 1)), ValueError, "shape (2, 1)"),
    (lambda p, i, k: "ab", TypeError, "not a float array"),
])
def test_a_gradient_of_the_wrong_shape_is_an_error(grad, exc, words):
    from scalable_bayes.samplers import run_chain, sgld
    with pytest.raises(exc) as info:
        run_chain(sgld(), _py_model(grad), [0.0, 0.0], seed=0, n_steps=200, step_size=1e-3, batch_size=10)
    assert words in str(info.value) and "'m'" in str(info.value)


def test_a_non_finite_gradient_at_the_start_names_the_model_not_the_step_size():
    from scalable_bayes.samplers import DivergenceError, run_chain, sghmc
    with pytest.raises(DivergenceError) as info:
        run_chain(sghmc(), _py_model(lambda p, i, k: np.full(2, np.nan)), [0.0, 0.0], seed=0, n_steps=50,
                  step_size=1e-3, batch_size=10)
    msg = str(info.value)
    assert "initial position" in msg and "step 0" in msg and "reduce step_size" not in msg


def test_compiled_model_data_are_checked_once_per_chain():
    from scalable_bayes.models import gaussian_known_variance
    from scalable_bayes.samplers import run_chain, sgld
    x = np.random.default_rng(0).normal(size=100)
    m = gaussian_known_variance(x)
    m.data = tuple(np.where(np.arange(a.size).reshape(a.shape) == 3, np.nan, a) if isinstance(a, np.ndarray)
                   and a.dtype.kind == "f" else a for a in m.data)
    with pytest.raises(ValueError, match="NaN or inf"):
        run_chain(sgld(), m, [0.0], seed=0, n_steps=100, step_size=1e-3, batch_size=10)


def test_seed_none_is_fresh_entropy_recorded_in_the_result():
    from scalable_bayes.models import gaussian_known_variance
    from scalable_bayes.samplers import run_chain, sgld
    m = gaussian_known_variance(np.random.default_rng(0).normal(size=100))
    a = run_chain(sgld(), m, [0.0], seed=None, n_steps=300, step_size=1e-3, batch_size=10)
    again = run_chain(sgld(), m, [0.0], seed=a.seed, n_steps=300, step_size=1e-3, batch_size=10)
    np.testing.assert_array_equal(a.samples, again.samples)


@pytest.mark.parametrize("seed, exc", [(-1, ValueError), (1.5, TypeError), ("1", TypeError)])
def test_bad_chain_seed_names_the_parameter(seed, exc):
    from scalable_bayes.models import gaussian_known_variance
    from scalable_bayes.samplers import run_chain, sgld
    m = gaussian_known_variance(np.random.default_rng(0).normal(size=100))
    with pytest.raises(exc, match="seed"):
        run_chain(sgld(), m, [0.0], seed=seed, n_steps=10, step_size=1e-3, batch_size=10)
