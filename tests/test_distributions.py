"""The von Mises-Fisher distribution object: scipy where scipy is finite, exact draws (Monte Carlo
standard-error tests on the cosine's known mean and variance), finite far beyond scipy, a slow twin of
the sampler, maximum-likelihood fit, and errors that name the fix."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats as st

from scalable_bayes import special
from scalable_bayes.distributions import VonMisesFisher, sample_vmf
from scalable_bayes.special import bessel_ratio


def _unit(v):
    v = np.asarray(v, dtype=np.float64)
    return v / np.linalg.norm(v)


def _basis(d, i=0):
    e = np.zeros(d)
    e[i] = 1.0
    return e


def _cosine_moments(kappa, d):
    """Exact 1 - A_d(kappa) and A_d'(kappa) = 1 - A^2 - (d - 1) A / kappa = Var(mu'x) under vMF(mu, kappa),
    in 50-digit arithmetic (in doubles the variance cancels away at kappa >> d)."""
    import mpmath as mp

    with mp.workdps(50):
        k = mp.mpf(kappa)
        a = mp.besseli(mp.mpf(d) / 2, k) / mp.besseli(mp.mpf(d) / 2 - 1, k)
        return float(1 - a), float(1 - a * a - (d - 1) * a / k)


GRID = [(2, 0.5), (3, 2.0), (3, 200.0), (10, 50.0), (100, 30.0), (500, 2000.0)]


@pytest.mark.parametrize("d,kappa", GRID)
def test_density_entropy_and_mean_agree_with_scipy_where_it_is_finite(d, kappa):
    mu = _unit(np.random.default_rng(d).standard_normal(d))
    ours, ref = VonMisesFisher(mu, kappa), st.vonmises_fisher(mu, kappa)
    x = ref.rvs(7, random_state=1)
    np.testing.assert_allclose(ours.logpdf(x), ref.logpdf(x), rtol=1e-11, atol=1e-10)
    if d <= 100:  # beyond, the density itself overflows a double
        np.testing.assert_allclose(ours.pdf(x[0]), ref.pdf(x[0]), rtol=1e-10)
    assert ours.entropy() == pytest.approx(ref.entropy(), rel=1e-11, abs=1e-10)
    np.testing.assert_allclose(ours.mean(), float(bessel_ratio(kappa, d=d)) * mu, rtol=1e-14)


@pytest.mark.parametrize("d,kappa", GRID + [(10, 1e8), (10_000, 1e4)])
def test_draws_have_the_exact_cosine_mean_and_variance(d, kappa):
    """mu'x has mean A_d(kappa) and variance A_d'(kappa); the tangent part has mean 0 (z-tests, 4.5 sd)."""
    mu = _unit(np.random.default_rng(7).standard_normal(d))
    n = 20_000 if d <= 500 else 2_000
    x = VonMisesFisher(mu, kappa).rvs(n, random_state=11)
    assert x.shape == (n, d) and np.all(np.isfinite(x))
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0, atol=1e-12)
    s = 1.0 - x @ mu  # 1 - w, kept exact at large kappa by the sampler
    one_minus_a, var = _cosine_moments(kappa, d)
    z_mean = (s.mean() - one_minus_a) / math.sqrt(var / n)
    assert abs(z_mean) < 4.5, (z_mean, s.mean(), one_minus_a)
    dev2 = (s - one_minus_a) ** 2
    z_var = (dev2.mean() - var) / (dev2.std() / math.sqrt(n))
    assert abs(z_var) < 4.5, (z_var, dev2.mean(), var)
    # a direction orthogonal to mu: its coordinate has mean 0 and variance (1 - E w^2) / (d - 1)
    u = np.random.default_rng(3).standard_normal(d)
    u = _unit(u - (u @ mu) * mu)
    t = x @ u
    assert abs(t.mean()) / (t.std() / math.sqrt(n)) < 4.5


def test_a_wrong_concentration_fails_the_cosine_test():
    """The z-test above has power: draws at 0.9 kappa are caught."""
    d, kappa, n = 10, 50.0, 20_000
    x = VonMisesFisher(_basis(d), 0.9 * kappa).rvs(n, random_state=11)
    s = 1.0 - x[:, 0]
    one_minus_a, var = _cosine_moments(kappa, d)
    z = (s.mean() - one_minus_a) / math.sqrt(var / n)
    assert abs(z) > 10


@pytest.mark.parametrize("d,kappa", [(100_000, 1e4), (10_000, 1e4), (10, 1e8), (100_000, 1e8)])
def test_finite_where_scipy_overflows_and_with_a_basis_vector_mean(d, kappa):
    vmf = VonMisesFisher(_basis(d, d - 1), kappa)
    x = vmf.rvs(50, random_state=0)
    assert np.all(np.isfinite(x))
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0, atol=1e-12)
    lp = vmf.logpdf(x)
    assert np.all(np.isfinite(lp)) and np.isfinite(vmf.entropy()) and np.isfinite(vmf.log_normalizer())
    # the density is largest at the mean: log p(mu) >= log p(x) for every draw
    assert vmf.logpdf(vmf.mu) >= lp.max()
    # mean of 1 - w against its exact value, loosely (50 draws): 1 - A_d(kappa)
    one_minus_a, var = _cosine_moments(kappa, d)
    assert vmf.mean_resultant_length() == pytest.approx(1.0 - one_minus_a, rel=1e-14)
    assert abs((1.0 - x[:, -1]).mean() - one_minus_a) < 6 * math.sqrt(var / 50)


def test_kappa_zero_is_uniform():
    vmf = VonMisesFisher(_basis(3), 0.0)
    assert vmf.logpdf(_unit([1.0, 2.0, 3.0])) == pytest.approx(-math.log(4 * math.pi), rel=1e-14)
    assert vmf.entropy() == pytest.approx(math.log(4 * math.pi), rel=1e-14)
    x = vmf.rvs(20_000, random_state=0)
    assert abs(x[:, 0].mean()) < 4.5 * math.sqrt(1 / 3 / 20_000)


def _wood_scalar_reference(mu, kappa, size, rng):
    """The slow twin: Wood (1994) row by row in the textbook form (w and x0, not 1 - w and 1 - x0)."""
    V = mu.shape[0]
    dm1 = V - 1.0
    out = np.empty((size, V))
    b = dm1 / (2.0 * kappa + math.sqrt(4.0 * kappa * kappa + dm1 * dm1))
    x0 = (1.0 - b) / (1.0 + b)
    cst = kappa * x0 + dm1 * math.log(1.0 - x0 * x0)
    for r in range(size):
        while True:
            z = rng.beta(dm1 / 2.0, dm1 / 2.0)
            w = (1.0 - (1.0 + b) * z) / (1.0 - (1.0 - b) * z)
            u = rng.uniform()
            if kappa * w + dm1 * math.log(1.0 - x0 * w) - cst >= math.log(u):
                break
        t = rng.standard_normal(V)
        t -= (t @ mu) * mu
        t /= np.linalg.norm(t)
        out[r] = w * mu + math.sqrt(max(1.0 - w * w, 0.0)) * t
    return out


@pytest.mark.parametrize("d,kappa", [(3, 5.0), (50, 100.0), (300, 3e3)])
def test_sample_vmf_matches_the_textbook_sampler_draw_for_draw(d, kappa):
    """Where the textbook form is well conditioned, both consume the generator identically and agree to
    rounding; so synthetic corpora drawn before the stable rewrite are drawn again unchanged."""
    mu = _unit(np.random.default_rng(1).standard_normal(d))
    ours = sample_vmf(mu, kappa, 40, np.random.default_rng(5))
    ref = _wood_scalar_reference(mu, kappa, 40, np.random.default_rng(5))
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-12)


def test_fit_recovers_the_parameters_and_agrees_with_scipy():
    d, kappa = 20, 80.0
    mu = _unit(np.arange(1.0, d + 1))
    x = VonMisesFisher(mu, kappa).rvs(20_000, random_state=4)
    fit = VonMisesFisher.fit(x)
    mu_s, kappa_s = st.vonmises_fisher.fit(x)
    np.testing.assert_allclose(fit.mu, mu_s, atol=1e-12)
    assert fit.kappa == pytest.approx(kappa_s, rel=1e-8)
    assert fit.kappa == pytest.approx(kappa, rel=0.03) and fit.mu @ mu > 0.999
    # weights: integer weights are repeated rows
    w = np.random.default_rng(0).integers(1, 4, size=200)
    a = VonMisesFisher.fit(x[:200], sample_weight=w)
    b = VonMisesFisher.fit(np.repeat(x[:200], w, axis=0))
    assert a.kappa == pytest.approx(b.kappa, rel=1e-12) and np.allclose(a.mu, b.mu, atol=1e-14)


def test_errors_name_the_problem_and_the_fix():
    with pytest.raises(ValueError, match="norm"):
        VonMisesFisher([1.0, 1.0], 1.0)
    with pytest.raises(ValueError, match="concentration"):
        VonMisesFisher(_basis(3), -1.0)
    with pytest.raises(ValueError, match="concentration"):
        VonMisesFisher(_basis(3), np.inf)
    with pytest.raises(ValueError, match="d >= 2"):
        VonMisesFisher([1.0], 1.0)
    vmf = VonMisesFisher(_basis(3), 2.0)
    with pytest.raises(ValueError, match="unit vectors"):
        vmf.logpdf([1.0, 1.0, 0.0])
    with pytest.raises(ValueError, match="length d = 3"):
        vmf.logpdf([1.0, 0.0])
    with pytest.raises(ValueError, match="infinite"):
        VonMisesFisher.fit(np.tile(_basis(3), (5, 1)))
    with pytest.raises(TypeError, match="random_state"):
        vmf.rvs(2, random_state="seed")


def test_draws_are_deterministic_for_a_seed():
    vmf = VonMisesFisher(_unit([1.0, 2.0, 2.0]), 10.0)
    assert np.array_equal(vmf.rvs(5, random_state=3), vmf.rvs(5, random_state=3))
    assert not np.array_equal(vmf.rvs(5, random_state=3), vmf.rvs(5, random_state=4))


S = special
KEYWORD_ONLY = {
    "bessel_ratio": (lambda: S.bessel_ratio(10, 3.0), lambda: S.bessel_ratio(3.0, d=10)),
    "vmf_log_normalizer": (lambda: S.vmf_log_normalizer(10, 3.0), lambda: S.vmf_log_normalizer(3.0, d=10)),
    "vmf_log_partition_uniform": (lambda: S.vmf_log_partition_uniform(10, 3.0),
                                  lambda: S.vmf_log_partition_uniform(3.0, d=10)),
    "vmf_mean_to_kappa": (lambda: S.vmf_mean_to_kappa(0.5, 10), lambda: S.vmf_mean_to_kappa(0.5, d=10)),
    "vmf_negentropy": (lambda: S.vmf_negentropy(0.5, 10), lambda: S.vmf_negentropy(0.5, d=10)),
    "vmf_negentropy_grad": (lambda: S.vmf_negentropy_grad(0.5, 10), lambda: S.vmf_negentropy_grad(0.5, d=10)),
    "vmf_negentropy_hess": (lambda: S.vmf_negentropy_hess(0.5, 10), lambda: S.vmf_negentropy_hess(0.5, d=10)),
    "kappa_halley_perron": (lambda: S.kappa_halley_perron(0.5, 10), lambda: S.kappa_halley_perron(0.5, d=10)),
    "solve_negentropy_ode": (lambda: S.solve_negentropy_ode(0.5, 10), lambda: S.solve_negentropy_ode(0.5, d=10)[1]),
}


@pytest.mark.parametrize("name", sorted(KEYWORD_ONLY))
def test_special_functions_take_the_dimension_by_keyword_only(name):
    """The literature mixes (d, kappa) and (r, d) orders; a swapped positional call would return a
    plausible number (A_3(10) = 0.70 read as A_10(3) = 0.099), so the dimension is keyword-only."""
    swapped, right = KEYWORD_ONLY[name]
    with pytest.raises(TypeError):
        swapped()
    assert np.all(np.isfinite(right()))
