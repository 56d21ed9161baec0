"""Low-dimensional targets of the SGNHT synthetic experiments (Sec. 3, Sec. 5.1, App. E) and
Gaussian test targets, each with a Numba gradient kernel and its exact density.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..rng import normal_pair
from . import _checks
from .base import Model


# ------------------------------------------------------------------ double well (SGNHT Fig. 1)
@njit(cache=True)
def double_well_potential(theta):
    """U(theta) = (theta + 4)(theta + 1)(theta - 1)(theta - 3)/14 + 0.5  (SGNHT Sec. 3).

    A Numba function (also callable on NumPy arrays from Python).

    Parameters
    ----------
    theta : float or ndarray of float
        The position(s).

    Returns
    -------
    float or ndarray
        U(theta), elementwise.
    """
    return (theta + 4.0) * (theta + 1.0) * (theta - 1.0) * (theta - 3.0) / 14.0 + 0.5


@njit(cache=True)
def double_well_grad_exact(theta):
    """dU/dtheta = (4 theta^3 + 3 theta^2 - 26 theta - 1)/14."""
    return (4.0 * theta**3 + 3.0 * theta**2 - 26.0 * theta - 1.0) / 14.0


@njit(cache=True)
def _double_well_grad(x, data, idx, key, out):
    noise_sd = data[0][0]
    a, _ = normal_pair(key)
    out[0] = double_well_grad_exact(x[0]) + noise_sd * a


def double_well(B: float = 1.0, h: float = 0.01) -> Model:
    """Double-well potential with injected gradient noise: grad U~ h = grad U h + N(0, 2 B h) (SGNHT Sec. 3).

    The gradient is dU/dtheta plus N(0, 2B/h) noise drawn from the chain's key; the model has no data
    (``n_data = 0``) and no ``potential`` (its gradient is never exact).

    Parameters
    ----------
    B : float, default 1.0
        Noise level, >= 0.
    h : float, default 0.01
        The step size the noise is calibrated to (noise sd sqrt(2B/h)), > 0.

    Returns
    -------
    Model
        The one-dimensional model (thread safe).
    """
    if B < 0 or h <= 0:
        raise ValueError(f"double_well: need B >= 0 and h > 0, got B={B}, h={h}")
    return Model("double_well", 1, 0, _double_well_grad, (np.array([np.sqrt(2.0 * B / h)]),), thread_safe=True)


def double_well_density(grid):
    """Normalised rho(theta) ∝ exp(-U(theta)) on ``grid`` (quadrature on a fine grid over [-8, 8]).

    Parameters
    ----------
    grid : array_like of float
        The positions theta, any shape.

    Returns
    -------
    ndarray
        rho(theta), shaped like ``grid``; the normaliser is the trapezoidal integral of exp(-U) over
        [-8, 8] on 200,001 points.
    """
    fine = np.linspace(-8.0, 8.0, 200_001)
    z = np.trapezoid(np.exp(-double_well_potential(fine)), fine)
    return np.exp(-double_well_potential(np.asarray(grid, dtype=np.float64))) / z


# ------------------------------------------------------------------ Gaussian targets (tests)
@njit(cache=True)
def _gaussian_grad(x, data, idx, key, out):
    prec, mean, noise = data[0], data[1], data[2][0]
    n = x.shape[0]
    for i in range(n):
        acc = 0.0
        for j in range(n):
            acc += prec[i, j] * (x[j] - mean[j])
        out[i] = acc
    if noise > 0.0:
        i = 0
        while i < n:
            a, b = normal_pair(key)
            out[i] += noise * a
            if i + 1 < n:
                out[i + 1] += noise * b
            i += 2


def gaussian(mean, cov, grad_noise_sd: float = 0.0) -> Model:
    """N(mean, cov) with exact gradient cov^-1 (x - mean), plus optional N(0, grad_noise_sd^2 I) gradient noise.

    Injected noise of sd s at step h corresponds to the SGNHT noise level B = s^2 h / 2.

    Parameters
    ----------
    mean : array_like of float, shape (n,)
        The mean (a scalar is one dimension).
    cov : array_like of float, shape (n, n)
        The covariance matrix, invertible (a scalar for n = 1).
    grad_noise_sd : float, default 0.0
        Standard deviation s of the injected gradient noise (0: exact gradient).

    Returns
    -------
    Model
        The model of dimension n, without data, with ``potential`` U(x) = (x - mean)' cov^-1 (x - mean) / 2
        (thread safe).
    """
    mean = np.atleast_1d(np.asarray(mean, dtype=np.float64))
    cov = np.atleast_2d(np.asarray(cov, dtype=np.float64))
    if cov.shape != (mean.size, mean.size):
        raise ValueError(f"gaussian: cov shape {cov.shape} does not match mean length {mean.size}")
    prec = np.linalg.inv(cov)
    m = mean.copy()

    def potential(x):
        """U(x) = (x - mean)' cov^-1 (x - mean) / 2."""
        r = x - m
        return 0.5 * float(r @ prec @ r)

    return Model("gaussian", mean.size, 0, _gaussian_grad,
                 (np.ascontiguousarray(prec), mean.copy(), np.array([float(grad_noise_sd)])),
                 potential=potential, exact_gradient=float(grad_noise_sd) == 0.0, thread_safe=True)


def _observations(x, who: str) -> np.ndarray:
    """1-D observations as a contiguous float64 vector: at least one, all finite."""
    x = np.ascontiguousarray(_checks.finite(x, who, "x")).reshape(-1)
    if x.size == 0:
        raise ValueError(f"{who}: x is empty; give at least one observation")
    return x


# ------------------------------------------------------------------ 1-D Gaussian, known variance (SGNHT Fig. 2)
@njit(cache=True)
def _known_var_grad(x, data, idx, key, out):
    xs = data[0]
    N = xs.shape[0]
    b = idx.shape[0]
    s = 0.0
    for k in range(b):
        s += xs[idx[k]]
    out[0] = N * x[0] - (N / b) * s


def gaussian_known_variance(x) -> Model:
    """x_i ~ N(mu, 1), improper flat prior on mu: grad U~ = N mu - (N/n) sum_S x_i (SGNHT App. E).

    Parameters
    ----------
    x : array_like of float
        The observations x_i (flattened): at least one, all finite (a NaN would make every gradient NaN).

    Returns
    -------
    Model
        The one-dimensional model (position mu) with ``n_data = N`` and ``potential``
        U(mu) = sum_i (x_i - mu)^2 / 2 (thread safe).
    """
    x = _observations(x, "gaussian_known_variance")

    def potential(th):
        """U(mu) = sum_i (x_i - mu)^2 / 2."""
        return 0.5 * float(np.sum((x - th[0]) ** 2))

    return Model("gaussian_known_variance", 1, x.size, _known_var_grad, (x,), potential=potential, thread_safe=True)


def gaussian_known_variance_posterior(x):
    """Exact posterior N(xbar, 1/N) as a frozen scipy distribution.

    Parameters
    ----------
    x : array_like of float
        The observations x_i (N = ``x.size``).

    Returns
    -------
    scipy.stats.rv_frozen
        ``scipy.stats.norm(xbar, 1 / sqrt(N))``.
    """
    x = np.asarray(x, dtype=np.float64)
    from scipy import stats  # here, not at import (~0.7 s)

    return stats.norm(x.mean(), 1.0 / np.sqrt(x.size))


# ------------------------------------------------------------------ Normal-Gamma (SGNHT Fig. 2 panel 4, Tab. 1, Fig. 6)
@njit(cache=True)
def _normal_gamma_grad(x, data, idx, key, out):
    xs = data[0]
    N = xs.shape[0]
    b = idx.shape[0]
    mu = x[0]
    gam = x[1]
    s1 = 0.0
    s2 = 0.0
    for k in range(b):
        v = xs[idx[k]]
        s1 += v
        s2 += (v - mu) * (v - mu)
    c = N / b
    out[0] = (N + 1) * mu * gam - c * gam * s1
    # App. E prints the last term without the 1/2; -log p gives 1/2 (we follow -log p).
    out[1] = -(N + 1) / (2.0 * gam) + 1.0 + 0.5 * mu * mu + 0.5 * c * s2


def normal_gamma(x) -> Model:
    """x_i ~ N(mu, 1/gamma), prior N(mu|0, 1/gamma) Gam(gamma|1, 1); position (mu, gamma).

    gamma > 0 is kept by a reflecting boundary at 0 (gamma <- |gamma|, not stated in the paper).
    The gradient follows -log p (SGNHT App. E prints the last term of d/dgamma without the 1/2).

    Parameters
    ----------
    x : array_like of float
        The observations x_i (flattened): at least one, all finite.

    Returns
    -------
    Model
        The two-dimensional model, position (mu, gamma), ``n_data = N``, with ``potential`` -log p up to a
        constant (thread safe).
    """
    x = _observations(x, "normal_gamma")

    def potential(th):
        """U(mu, gamma) = gamma (sum_i (x_i - mu)^2 + mu^2) / 2 - (N + 1) log(gamma) / 2 + gamma (-log p up to a
        constant; NaN for gamma <= 0)."""
        mu, gam = th[0], th[1]
        if not gam > 0:
            return float("nan")
        return float(0.5 * gam * (np.sum((x - mu) ** 2) + mu * mu) - 0.5 * (x.size + 1) * np.log(gam) + gam)

    return Model("normal_gamma", 2, x.size, _normal_gamma_grad, (x,), reflect=np.array([0, 1], dtype=np.int8),
                 potential=potential, thread_safe=True)


def normal_gamma_posterior(x):
    """Posterior parameters (mu_N, kappa_N, alpha_N, beta_N) and the exact marginals of mu and gamma.

    mu ~ Student-t(2 alpha_N, mu_N, sqrt(beta_N/(alpha_N kappa_N))), gamma ~ Gamma(alpha_N, rate beta_N).

    Parameters
    ----------
    x : array_like of float
        The observations x_i (N = ``x.size``) of :func:`normal_gamma`.

    Returns
    -------
    dict
        ``"mu_N"``, ``"kappa_N"``, ``"alpha_N"``, ``"beta_N"`` (floats: the Normal-Gamma posterior
        parameters) and ``"mu"``, ``"gamma"`` (frozen ``scipy.stats`` marginals).
    """
    x = np.asarray(x, dtype=np.float64)
    N = x.size
    xbar = x.mean()
    mu_n = N * xbar / (N + 1.0)
    kappa_n = 1.0 + N
    alpha_n = 1.0 + N / 2.0
    beta_n = 1.0 + 0.5 * np.sum((x - xbar) ** 2) + N * xbar**2 / (2.0 * (1.0 + N))
    from scipy import stats  # here, not at import (~0.7 s)

    mu_marg = stats.t(df=2 * alpha_n, loc=mu_n, scale=np.sqrt(beta_n / (alpha_n * kappa_n)))
    gam_marg = stats.gamma(a=alpha_n, scale=1.0 / beta_n)
    return {"mu_N": mu_n, "kappa_N": kappa_n, "alpha_N": alpha_n, "beta_N": beta_n, "mu": mu_marg, "gamma": gam_marg}
