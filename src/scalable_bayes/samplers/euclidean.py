"""The Euclidean SG-MCMC samplers (SGLD: Welling & Teh 2011; SGHMC: Chen et al. 2014; SGNHT: Ding et al.
2014, Alg. 1, Alg. 2 and eq. 11): their Numba step kernels and the factories that configure them.

Every kernel has the same signature, so one compiled driver runs them all::

    ke, thermo = step(x, p, xi, g, key, h, hyper)

``x`` position, ``p`` momentum, ``xi`` thermostat (all float64, updated in place), ``g`` the
stochastic gradient of the potential  U~ = -(N/n) sum log p(x_i|theta) - log p(theta)  at ``x``,
``key`` the xoroshiro state (advanced in place), ``h`` the step size (``eta`` for the
reformulated kernels) and ``hyper`` a float64 array of sampler constants. The kernel returns
the kinetic energy per dimension after the step (p'p / 2n; NaN for SGLD which has no momentum)
and the scalar thermostat value (friction for fixed-friction samplers). Kernels never allocate;
the general (matrix) thermostat keeps its scratch row inside ``xi``.

Manifold samplers (sphere: :mod:`~scalable_bayes.samplers.geodesic`, simplex:
:mod:`~scalable_bayes.samplers.simplex`) implement this same signature with their own geometry in the kernel,
so the driver and the state layout are shared. A factory returns a
:class:`~scalable_bayes.samplers.base.SamplingAlgorithm` on the ``euclidean`` manifold
(:class:`scalable_bayes.manifolds.Euclidean`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..rng import normal_pair
from .base import SamplingAlgorithm


# -------------------------------------------------------------------- step kernels
@njit(cache=True)
def sgld_step(x, p, xi, g, key, h, hyper):
    """SGLD (Welling & Teh 2011; SCIR eq. 1.2): theta <- theta - h grad U~ + sqrt(2h) N(0, I).  ``hyper`` unused."""
    n = x.shape[0]
    s = np.sqrt(2.0 * h)
    i = 0
    while i < n:
        a, b = normal_pair(key)
        x[i] += -h * g[i] + s * a
        if i + 1 < n:
            x[i + 1] += -h * g[i + 1] + s * b
        i += 2
    return np.nan, 0.0


@njit(cache=True)
def sghmc_step(x, p, xi, g, key, h, hyper):
    """SGHMC, Euler form of SGNHT Sec. 5.1 (Chen et al. 2014): hyper = [A, B_hat].

    p <- p - A p h - grad U~ h + sqrt(2 (A - B_hat) h) N(0, I);  theta <- theta + p h.
    """
    A = hyper[0]
    bhat = hyper[1]
    n = x.shape[0]
    s = np.sqrt(2.0 * (A - bhat) * h)
    kin = 0.0
    i = 0
    while i < n:
        a, b = normal_pair(key)
        pi = p[i] - A * p[i] * h - g[i] * h + s * a
        p[i] = pi
        x[i] += pi * h
        kin += pi * pi
        if i + 1 < n:
            pj = p[i + 1] - A * p[i + 1] * h - g[i + 1] * h + s * b
            p[i + 1] = pj
            x[i + 1] += pj * h
            kin += pj * pj
        i += 2
    return 0.5 * kin / n, A


@njit(cache=True)
def sgnht_step(x, p, xi, g, key, h, hyper):
    """SGNHT, Algorithm 1: hyper = [A, fixed] (fixed != 0 freezes xi: the fixed-friction runs of Fig. 1).

    p <- p - xi p h - grad U~ h + sqrt(2A) N(0, h);  theta <- theta + p h;  xi <- xi + (p'p/n - 1) h.
    """
    A = hyper[0]
    fixed = hyper[1] != 0.0
    n = x.shape[0]
    z = xi[0]
    s = np.sqrt(2.0 * A * h)
    kin = 0.0
    i = 0
    while i < n:
        a, b = normal_pair(key)
        pi = p[i] - z * p[i] * h - g[i] * h + s * a
        p[i] = pi
        x[i] += pi * h
        kin += pi * pi
        if i + 1 < n:
            pj = p[i + 1] - z * p[i + 1] * h - g[i + 1] * h + s * b
            p[i + 1] = pj
            x[i + 1] += pj * h
            kin += pj * pj
        i += 2
    if not fixed:
        z = z + (kin / n - 1.0) * h
        xi[0] = z
    return 0.5 * kin / n, z


@njit(cache=True)
def sghmc_reform_step(x, p, xi, g, key, h, hyper):
    """SGHMC reformulated (Chen et al. Alg. 2; SGNHT Sec. 5.2): h is eta, hyper = [a, b_hat].

    u <- u - a u - eta grad U~ + N(0, 2 (a - b_hat) eta);  theta <- theta + u.   (u = p h, eta = h^2, a = A h)
    Kinetic energy reported as u'u / (2 n eta) = p'p / 2n.
    """
    a_ = hyper[0]
    bhat = hyper[1]
    n = x.shape[0]
    s = np.sqrt(2.0 * (a_ - bhat) * h)
    kin = 0.0
    i = 0
    while i < n:
        a, b = normal_pair(key)
        ui = p[i] - a_ * p[i] - h * g[i] + s * a
        p[i] = ui
        x[i] += ui
        kin += ui * ui
        if i + 1 < n:
            uj = p[i + 1] - a_ * p[i + 1] - h * g[i + 1] + s * b
            p[i + 1] = uj
            x[i + 1] += uj
            kin += uj * uj
        i += 2
    return 0.5 * kin / (n * h), a_


@njit(cache=True)
def sgnht_reform_step(x, p, xi, g, key, h, hyper):
    """SGNHT reformulated, Algorithm 2: h is eta, hyper = [a].

    u <- u - alpha u - eta grad U~ + N(0, 2 a eta);  theta <- theta + u;  alpha <- alpha + (u'u/n - eta).
    (u = p h, eta = h^2, alpha = xi h, a = A h.) Returns alpha as the thermostat value.
    """
    a_ = hyper[0]
    n = x.shape[0]
    al = xi[0]
    s = np.sqrt(2.0 * a_ * h)
    kin = 0.0
    i = 0
    while i < n:
        a, b = normal_pair(key)
        ui = p[i] - al * p[i] - h * g[i] + s * a
        p[i] = ui
        x[i] += ui
        kin += ui * ui
        if i + 1 < n:
            uj = p[i + 1] - al * p[i + 1] - h * g[i + 1] + s * b
            p[i + 1] = uj
            x[i + 1] += uj
            kin += uj * uj
        i += 2
    al = al + (kin / n - h)
    xi[0] = al
    return 0.5 * kin / (n * h), al


@njit(cache=True)
def sgnht_matrix_step(x, p, xi, g, key, h, hyper):
    """General (matrix) SG Nose-Hoover thermostat, SGNHT eqs. (10)-(11), Euler form: hyper = [A, mu].

    p <- p - Xi p h - grad U~ h + sqrt(2A) N(0, h);  theta <- theta + p h;
    Xi <- Xi + (p p' - I) h / mu.
    ``xi`` holds Xi row-major in its first n*n entries and an n-vector of scratch after them.
    Returns the mean diagonal trace(Xi)/n as the thermostat value.
    """
    A = hyper[0]
    mu = hyper[1]
    n = x.shape[0]
    s = np.sqrt(2.0 * A * h)
    nn = n * n
    # scratch = Xi p (old p)
    for r in range(n):
        acc = 0.0
        for c in range(n):
            acc += xi[r * n + c] * p[c]
        xi[nn + r] = acc
    kin = 0.0
    i = 0
    while i < n:
        a, b = normal_pair(key)
        pi = p[i] - xi[nn + i] * h - g[i] * h + s * a
        p[i] = pi
        x[i] += pi * h
        kin += pi * pi
        if i + 1 < n:
            pj = p[i + 1] - xi[nn + i + 1] * h - g[i + 1] * h + s * b
            p[i + 1] = pj
            x[i + 1] += pj * h
            kin += pj * pj
        i += 2
    c_ = h / mu
    tr = 0.0
    for r in range(n):
        for c in range(n):
            d = p[r] * p[c]
            if r == c:
                d -= 1.0
            xi[r * n + c] += d * c_
        tr += xi[r * n + r]
    return 0.5 * kin / n, tr / n


# -------------------------------------------------------------------- sampler factories
def _nonneg(v, what, name):
    v = float(v)
    if not (np.isfinite(v) and v >= 0):
        raise ValueError(f"{name}: {what} must be finite and >= 0, got {v!r}")
    return v


def sgld() -> SamplingAlgorithm:
    """Stochastic gradient Langevin dynamics (Welling & Teh 2011), SCIR eq. 1.2 convention: theta <- theta - h grad U~ + sqrt(2h) N.

    Returns
    -------
    SamplingAlgorithm
        ``"SGLD"`` on R^n (kernel :func:`sgld_step`), without momentum; the step size is h. Its info
        reports NaN kinetic energy and thermostat 0.
    """
    return SamplingAlgorithm("SGLD", sgld_step, np.zeros(0), momentum=False, thermostat_init=0.0)


def sghmc(A: float = 1.0, B_hat: float = 0.0) -> SamplingAlgorithm:
    """SGHMC (Chen et al. 2014), Euler form used in SGNHT Sec. 5.1: friction ``A``, noise estimate ``B_hat`` (B-hat).

    p <- p - A p h - grad U~ h + sqrt(2 (A - B_hat) h) N(0, I);  theta <- theta + p h (:func:`sghmc_step`).

    Parameters
    ----------
    A : float, default 1.0
        Friction, finite and >= 0.
    B_hat : float, default 0.0
        Estimate of the gradient-noise level B, 0 <= B_hat <= A.

    Returns
    -------
    SamplingAlgorithm
        ``"SGHMC"`` on R^n; the step size is h; the reported thermostat is the fixed friction A.
    """
    A = _nonneg(A, "friction A", "SGHMC")
    B_hat = _nonneg(B_hat, "noise estimate B_hat", "SGHMC")
    if B_hat > A:
        raise ValueError(f"SGHMC: B_hat={B_hat} exceeds A={A}; the injected noise variance 2(A - B_hat)h would be negative. Use A >= B_hat.")
    return SamplingAlgorithm("SGHMC", sghmc_step, np.array([A, B_hat]), thermostat_init=A)


def sgnht(A: float = 1.0, xi0: float | None = None, fixed_xi: bool = False) -> SamplingAlgorithm:
    """SGNHT, Algorithm 1: injected-noise level ``A`` (xi_0 = A unless ``xi0`` given).

    ``fixed_xi=True`` removes the thermostat update (the fixed-friction chains of SGNHT Fig. 1).

    p <- p - xi p h - grad U~ h + sqrt(2A) N(0, h);  theta <- theta + p h;  xi <- xi + (p'p/n - 1) h
    (:func:`sgnht_step`).

    Parameters
    ----------
    A : float, default 1.0
        Diffusion (injected-noise level) A, finite and >= 0.
    xi0 : float, optional
        Initial thermostat xi_0, finite; default ``A``.
    fixed_xi : bool, default False
        Keep xi at xi_0 (a fixed friction).

    Returns
    -------
    SamplingAlgorithm
        ``"SGNHT"`` on R^n (named ``"fixed-xi(<xi0>)"`` when ``fixed_xi``); the step size is h.
    """
    A = _nonneg(A, "diffusion A", "SGNHT")
    x0 = A if xi0 is None else float(xi0)
    if not np.isfinite(x0):
        raise ValueError(f"SGNHT: xi0 must be finite, got {xi0!r}")
    name = "SGNHT" if not fixed_xi else f"fixed-xi({x0:g})"
    return SamplingAlgorithm(name, sgnht_step, np.array([A, 1.0 if fixed_xi else 0.0]), thermostat_init=x0)


def sghmc_reformulated(a: float = 0.01, b_hat: float = 0.0) -> SamplingAlgorithm:
    """SGHMC in the reformulated parameters (u = p h, eta = h^2, a = A h); step size is eta (Chen et al. 2014, Alg. 2).

    u <- u - a u - eta grad U~ + N(0, 2 (a - b_hat) eta);  theta <- theta + u (:func:`sghmc_reform_step`;
    SGNHT Sec. 5.2).

    Parameters
    ----------
    a : float, default 0.01
        Friction a = A h, finite and >= 0.
    b_hat : float, default 0.0
        Noise estimate, 0 <= b_hat <= a.

    Returns
    -------
    SamplingAlgorithm
        ``"SGHMC"`` on R^n, reformulated (the step size passed to the driver is eta, the momentum is u);
        the reported thermostat is a.
    """
    a = _nonneg(a, "friction a", "SGHMC")
    b_hat = _nonneg(b_hat, "noise estimate b_hat", "SGHMC")
    if b_hat > a:
        raise ValueError(f"SGHMC: b_hat={b_hat} exceeds a={a}; use a >= b_hat.")
    return SamplingAlgorithm("SGHMC", sghmc_reform_step, np.array([a, b_hat]), reformulated=True, thermostat_init=a)


def sgnht_reformulated(a: float = 0.01) -> SamplingAlgorithm:
    """SGNHT, Algorithm 2 (u = p h, eta = h^2, alpha = xi h, a = A h); step size is eta; alpha_0 = a.

    u <- u - alpha u - eta grad U~ + N(0, 2 a eta);  theta <- theta + u;  alpha <- alpha + (u'u/n - eta)
    (:func:`sgnht_reform_step`).

    Parameters
    ----------
    a : float, default 0.01
        Diffusion a = A h, finite and >= 0; also the initial thermostat alpha_0.

    Returns
    -------
    SamplingAlgorithm
        ``"SGNHT"`` on R^n, reformulated (step size eta, momentum u); the reported thermostat is alpha.
    """
    a = _nonneg(a, "diffusion a", "SGNHT")
    return SamplingAlgorithm("SGNHT", sgnht_reform_step, np.array([a]), reformulated=True, thermostat_init=a)


def sgnht_matrix(A: float = 1.0, mu: float = 1.0, xi0: float | None = None) -> SamplingAlgorithm:
    """General SGNHT with a matrix thermostat Xi, SGNHT eq. (11): dXi = (p p' - I)/mu dt; Xi_0 = xi0 I (default A I).

    Euler form (:func:`sgnht_matrix_step`): p <- p - Xi p h - grad U~ h + sqrt(2A) N(0, h);
    theta <- theta + p h; Xi <- Xi + (p p' - I) h / mu.

    Parameters
    ----------
    A : float, default 1.0
        Diffusion A, finite and >= 0.
    mu : float, default 1.0
        Thermostat mass mu, > 0.
    xi0 : float, optional
        Diagonal of the initial thermostat Xi_0 = xi0 I; default ``A``.

    Returns
    -------
    SamplingAlgorithm
        ``"SGNHT-matrix"`` on R^n, with a thermostat array of n^2 + n entries (Xi row-major, then
        scratch); the step size is h; the reported thermostat is trace(Xi)/n.
    """
    A = _nonneg(A, "diffusion A", "SGNHT-matrix")
    mu = float(mu)
    if not (np.isfinite(mu) and mu > 0):
        raise ValueError(f"SGNHT-matrix: thermostat mass mu must be > 0, got {mu!r}")
    return SamplingAlgorithm(
        "SGNHT-matrix", sgnht_matrix_step, np.array([A, mu]), thermostat_kind="matrix",
        thermostat_init=A if xi0 is None else float(xi0),
    )
