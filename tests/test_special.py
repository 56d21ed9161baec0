"""Special functions of the vMF paper against mpmath (50 digits) and analytic identities."""

import math

import mpmath as mp
import numpy as np
import pytest
from scipy import integrate, special as sps

from scalable_bayes.special import (
    bessel_ratio,
    kappa_halley_perron,
    log_besseli,
    log_sphere_area,
    negentropy_offset,
    solve_negentropy_ode,
    vmf_log_normalizer,
    vmf_log_partition_uniform,
    vmf_mean_to_kappa,
    vmf_negentropy,
    vmf_negentropy_grad,
    vmf_negentropy_hess,
    vmf_variance_function,
)

from naive_vmf import kappa_mp, log_besseli_mp, log_partition_uniform_mp, negentropy_mp, ratio_mp

NUS = [0.0, 0.5, 1.0, 4.0, 49.0, 199.5, 200.0, 499.0, 2499.0, 24999.0, 1e5]
XS = [1e-8, 1e-2, 1.0, 10.0, 29.0, 31.0, 100.0, 1e3, 1e4, 1e5, 1e6, 1e7]


def test_log_besseli_vs_mpmath():
    checked = 0
    for nu in NUS:
        for x in XS:
            try:
                ref = log_besseli_mp(nu, x)
            except mp.libmp.NoConvergence:
                continue  # mpmath's series cannot reach nu ~ x ~ 1e5; covered by the consistency test
            got = log_besseli(nu, x)
            assert abs(got - ref) <= 1e-10 * max(1.0, abs(ref)), (nu, x, got, ref)
            checked += 1
    assert checked >= 0.8 * len(NUS) * len(XS)


def test_log_besseli_no_overflow_and_consistency():
    nu = np.array([1e5, 1e5, 1e5, 24999.0, 3e5])
    x = np.array([1e-8, 1e5, 1e7, 1e6, 1e3])
    out = log_besseli(nu, x)
    assert np.all(np.isfinite(out))
    # Debye route vs scipy's ive (AMOS) where ive is a normal number: independent implementations
    n_checked = 0
    for v, xx in [(300.0, 1e3), (300.0, 1e5), (1000.0, 2e3), (2499.0, 1e4), (24999.0, 1e5), (24999.0, 1e6)]:
        iv = sps.ive(v, xx)
        if not 1e-300 < iv < 1e300:
            continue  # AMOS gives up here (that is why the Debye route exists)
        n_checked += 1
        ref = math.log(iv) + xx
        assert abs(log_besseli(v, xx) - ref) <= 1e-10 * max(1.0, abs(ref))
    assert n_checked >= 4
    # I_nu(0)
    assert log_besseli(0.0, 0.0) == 0.0 and log_besseli(2.0, 0.0) == -np.inf
    # x -> 0 leading term
    assert log_besseli(1e5, 1e-8) == pytest.approx(1e5 * math.log(5e-9) - math.lgamma(1e5 + 1), rel=1e-13)


def test_bessel_ratio_of_one_number_is_the_array_value():
    # a scalar call skips the arrays; it must give the number the array path gives, bit for bit
    rng = np.random.default_rng(4)
    kappas = np.concatenate([[0.0, 1e-9, 1e-6, 0.5, np.inf], 10 ** rng.uniform(-8, 7, 60)])
    for d in [1, 2, 3, 50, 3000, 28571.5]:
        arr = bessel_ratio(kappas, d=d)
        for k, a in zip(kappas, arr):
            got = bessel_ratio(float(k), d=d)
            assert type(got) is float and got == a, (d, k)
            assert bessel_ratio(np.float64(k), d=np.float64(d)) == a
    with pytest.raises(ValueError, match="dimension"):
        bessel_ratio(1.0, d=0.5)
    with pytest.raises(ValueError, match="kappa"):
        bessel_ratio(-1.0, d=3)


def test_bessel_ratio_vs_mpmath():
    for d in [2, 3, 10, 100, 1000, 28571]:
        for k in [1e-8, 1e-3, 0.5, 1.0, 10.0, 100.0, 1e3, 1e4, 1e6, 1e7]:
            try:
                ref = ratio_mp(d, k)
            except mp.libmp.NoConvergence:
                continue
            assert bessel_ratio(k, d=d) == pytest.approx(ref, rel=1e-12, abs=0), (d, k)
    assert bessel_ratio(0.0, d=10) == 0.0 and bessel_ratio(np.inf, d=10) == 1.0
    # d = 3: A_3(kappa) = coth(kappa) - 1/kappa
    k = np.array([0.3, 2.0, 50.0])
    assert np.allclose(bessel_ratio(k, d=3), 1 / np.tanh(k) - 1 / k, rtol=1e-13)


def test_log_normalizer():
    # d = 3: C_3(kappa) = kappa / (4 pi sinh kappa)
    for k in [1e-5, 0.7, 5.0, 300.0]:
        ref = math.log(k) - math.log(4 * math.pi) - (k + math.log1p(-math.exp(-2 * k)) - math.log(2))
        assert vmf_log_normalizer(k, d=3) == pytest.approx(ref, rel=1e-12)
    assert vmf_log_normalizer(0.0, d=3) == pytest.approx(-math.log(4 * math.pi), rel=1e-14)
    assert vmf_log_normalizer(0.0, d=100) == pytest.approx(-log_sphere_area(100), rel=1e-14)
    # continuity at kappa -> 0 and vs mpmath for large d
    assert vmf_log_normalizer(1e-9, d=1000) == pytest.approx(vmf_log_normalizer(0.0, d=1000), rel=1e-12)
    n = 0
    for d, k in [(1000, 50.0), (1000, 5000.0), (5000, 300.0), (28571, 3000.0), (28571, 1e5)]:
        try:
            ref = log_partition_uniform_mp(d, k)
        except mp.libmp.NoConvergence:
            continue
        assert vmf_log_partition_uniform(k, d=d) == pytest.approx(ref, rel=1e-11)
        n += 1
    assert n >= 3


def test_kappa_newton_vs_mpmath_and_closed_forms():
    for d in [2, 3, 10, 100, 1000]:
        for r in [1e-4, 0.1, 0.5, 0.9, 0.99]:
            ref = kappa_mp(r, d)
            assert vmf_mean_to_kappa(r, d=d, method="newton") == pytest.approx(ref, rel=1e-12)
    # large d (mpmath's series does not converge there): A_d(kappa(r)) == r with the tested CF
    r = np.array([1e-4, 0.1, 0.5, 0.9, 0.99, 0.999])
    for d in [28571, 1e5]:
        assert np.allclose(bessel_ratio(vmf_mean_to_kappa(r, d=d), d=d), r, rtol=1e-13, atol=0)
    r = np.linspace(0.01, 0.99, 7)
    assert np.allclose(vmf_mean_to_kappa(r, d=50, method="banerjee"), r * (50 - r**2) / (1 - r**2))
    # reference values for d = 100, r = 0.9 (the VMF paper's closed forms, computed once in high precision)
    assert vmf_mean_to_kappa(0.9, d=100, method="refined2") == pytest.approx(469.4451283, abs=2e-7)
    assert vmf_mean_to_kappa(0.9, d=100, method="refined1") == pytest.approx(469.4450334, abs=2e-7)
    assert vmf_mean_to_kappa(0.9, d=100, method="ode") == pytest.approx(469.4451285, abs=2e-7)
    assert vmf_mean_to_kappa(0.0, d=10) == 0.0
    # the authors' truncated Halley (3 steps, K = 50) is close to the exact root
    assert kappa_halley_perron(0.7, d=1000, n_steps=3, n_terms=50) == pytest.approx(vmf_mean_to_kappa(0.7, d=1000), rel=1e-10)


def test_negentropy_exact_vs_mpmath():
    for d in [3, 10, 100, 1000]:
        for r in [0.05, 0.5, 0.95]:
            assert vmf_negentropy(r, d=d, method="exact") == pytest.approx(negentropy_mp(r, d), rel=1e-10)
    assert vmf_negentropy(0.0, d=10) == 0.0


@pytest.mark.parametrize("d", [2, 10, 100])
def test_ode_matches_exact(d):
    r = np.linspace(0.05, 0.99, 25)[::-1]  # unsorted on purpose
    phi, dphi = solve_negentropy_ode(r, d=d)
    assert np.allclose(dphi, vmf_mean_to_kappa(r, d=d), rtol=1e-6)
    assert np.allclose(phi, vmf_negentropy(r, d=d, method="exact"), rtol=1e-6, atol=1e-9)
    # psi0 is only an additive constant
    phi2, _ = solve_negentropy_ode(r, d=d, psi0=5.0)
    assert np.allclose(phi2 - phi, 5.0, rtol=0, atol=1e-9)


@pytest.mark.parametrize("d", [2, 3, 6, 7, 8, 100, 10000])
def test_refined_antiderivative(d):
    """psi~_1 (every branch: arctan d < 7, rational, log d >= 7) integrates psi~'_1."""
    for r in [0.1, 0.6, 0.95]:
        num, _ = integrate.quad(lambda t: vmf_mean_to_kappa(t, d=d, method="refined1"), 0, r, epsabs=1e-13, epsrel=1e-13)
        assert vmf_negentropy(r, d=d, method="refined") == pytest.approx(num, rel=1e-9)
        numb, _ = integrate.quad(lambda t: vmf_mean_to_kappa(t, d=d, method="banerjee"), 0, r, epsabs=1e-13, epsrel=1e-13)
        assert vmf_negentropy(r, d=d, method="banerjee") == pytest.approx(numb, rel=1e-9)


@pytest.mark.parametrize("d", [7, 8, 100, 28571])
def test_refined_phi_array_path_vs_scalar_and_quadrature(d):
    """The three-pass array kernel of psi~_1 (numpy SIMD logs) against the scalar fused loop and quad."""
    from scalable_bayes.special.vmf import _refined1_phi_log_kernel, _refined1_phi_log_scalar

    r = np.concatenate([[1e-3, 0.1, 0.6, 0.95, 0.999], np.random.default_rng(0).uniform(0.05, 0.99, 2000)])
    fast = vmf_negentropy(r, d=d, method="refined")
    ref = _refined1_phi_log_scalar(r, float(d))
    assert np.array_equal(fast, _refined1_phi_log_kernel(r, float(d)))
    assert np.max(np.abs(fast - ref) / ref) < 1e-11
    assert np.max(np.abs(fast[1:] - ref[1:]) / ref[1:]) < 1e-12  # r = 1e-3: cancellation in both forms
    for i in (1, 2, 3):
        num, _ = integrate.quad(lambda t: vmf_mean_to_kappa(t, d=d, method="refined1"), 0, r[i], epsabs=1e-13, epsrel=1e-13)
        assert fast[i] == pytest.approx(num, rel=1e-9)
    assert fast.reshape(-1)[0] == vmf_negentropy(r[:1].reshape(1, 1), d=d, method="refined")[0, 0]


def test_bad_r_in_arrays():
    """Validation by min/max reductions: NaN, negative and >= 1 entries anywhere in an array."""
    for bad, match in ((np.nan, "NaN"), (-0.2, "-0.2 < 0"), (1.5, "1.5 >= 1")):
        r = np.full(50, 0.3)
        r[17] = bad
        with pytest.raises(ValueError, match=match):
            vmf_negentropy(r, d=100, method="refined")
        with pytest.raises(ValueError, match=match):
            vmf_mean_to_kappa(r, d=100, method="refined2")
    assert np.asarray(vmf_negentropy(np.empty(0), d=100, method="refined")).shape == (0,)


def test_hessians_are_derivatives():
    h = 1e-6
    for d in [3, 100, 5000]:
        for r in [0.2, 0.7, 0.95]:
            for method, gmethod in [("exact", "exact"), ("banerjee", "banerjee"), ("refined", "refined1")]:
                fd = (vmf_negentropy_grad(r + h, d=d, method=gmethod) - vmf_negentropy_grad(r - h, d=d, method=gmethod)) / (2 * h)
                assert vmf_negentropy_hess(r, d=d, method=method) == pytest.approx(fd, rel=1e-5)


def test_variance_function_trace_and_direction():
    rng = np.random.default_rng(0)
    for d in [3, 20]:
        mu = rng.normal(size=d)
        mu *= 0.6 / np.linalg.norm(mu)
        V = vmf_variance_function(mu)
        assert np.trace(V) == pytest.approx(1 - 0.36, rel=1e-10)  # mass on the sphere: tr Cov = 1 - |mu|^2
        u = mu / 0.6
        assert u @ V @ u == pytest.approx(1 / vmf_negentropy_hess(0.6, d=d), rel=1e-10)
        assert np.allclose(V, V.T)


def test_offsets():
    assert negentropy_offset(3, "hausdorff") == pytest.approx(-math.log(4 * math.pi))
    assert negentropy_offset(10, "uniform") == 0.0
    with pytest.raises(ValueError, match="convention"):
        negentropy_offset(10, "bogus")


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: vmf_mean_to_kappa(-0.1, d=10), "< 0"),
        (lambda: vmf_mean_to_kappa(1.0, d=10), ">= 1"),
        (lambda: vmf_mean_to_kappa(np.nan, d=10), "NaN"),
        (lambda: vmf_mean_to_kappa(0.5, d=1), "d >= 2"),
        (lambda: vmf_mean_to_kappa(0.5, d=10, method="bogus"), "method"),
        (lambda: vmf_negentropy(1.2, d=10), ">= 1"),
        (lambda: vmf_log_normalizer(-1.0, d=10), "kappa"),
        (lambda: log_besseli(-1.0, 1.0), "nu"),
        (lambda: bessel_ratio(np.nan, d=10), "kappa"),
        (lambda: solve_negentropy_ode([0.5], d=10, dpsi0=0.0), "dpsi0"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_infinite_concentration_gives_the_limits_without_warnings():
    import warnings

    from scalable_bayes.special import bessel_ratio, vmf_log_normalizer, vmf_log_partition_uniform
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert vmf_log_normalizer(np.inf, d=3) == -np.inf
        assert bessel_ratio(np.inf, d=3) == 1.0
        out = vmf_log_partition_uniform(np.array([0.0, 1.0, np.inf]), d=50)
    assert out[0] == 0.0 and np.isfinite(out[1]) and out[2] == np.inf
