"""von Mises-Fisher normaliser, mean <-> natural parameter maps and the negative entropy.

Notation (Nonnenmacher & Sahani 2024, "A solution for the mean parametrization of the vMF
distribution", Sec. 2 and App. A.4-A.5):

* vMF on S^{d-1}: p(x | eta) = exp(eta^T x - Phi(eta)), kappa = |eta|, nu = d/2 - 1.
* A_d(kappa) = I_{d/2}(kappa) / I_{d/2-1}(kappa) = r = |mu|, the norm of the mean parameter.
* psi_U(kappa) = log E_{x ~ Uniform(S^{d-1})} exp(kappa x_1) = lgamma(d/2) + log I_nu(kappa) - nu log(kappa/2),
  the log-partition w.r.t. the *uniform probability measure* (psi_U(0) = 0).
* Negative entropy phi(r) = kappa r - psi_U(kappa), kappa = A_d^{-1}(r): phi(0) = 0, phi'(r) = kappa,
  phi''(r) = 1 / A_d'(kappa) = 1 / (1 - r^2 - (d - 1) r / kappa).
* ODE (paper Sec. 2.2-2.3): phi'' = phi' / ((1 - r^2) phi' - (d - 1) r).
* Closed forms (the paper's approximations): Banerjee et al. (2005) kappa ~ r (d - r^2) / (1 - r^2) with its
  antiderivative, and the paper's refinements psi~'_1, psi~_1 (antiderivative), psi~''_1, psi~'_2.

Other conventions differ from phi by constants: the density w.r.t. the Hausdorff (surface) measure
has log-normaliser ``vmf_log_normalizer`` = -log|S^{d-1}| - psi_U(kappa); the VMF authors' code adds
``author_psi0(d)`` to phi (see ``negentropy_offset``).
"""

from __future__ import annotations

import logging
import math

import numpy as np
from numba import njit
from scipy import integrate
from scipy.special import gammaln

from .bessel import bessel_ratio_perron, bessel_ratio_perron_fixed, log_besseli

logger = logging.getLogger(__name__)

__all__ = [
    "vmf_log_normalizer",
    "vmf_log_partition_uniform",
    "vmf_mean_to_kappa",
    "vmf_negentropy",
    "vmf_negentropy_grad",
    "vmf_negentropy_hess",
    "vmf_variance_function",
    "solve_negentropy_ode",
    "kappa_halley_perron",
    "log_sphere_area",
    "author_psi0",
    "negentropy_offset",
    "KAPPA_METHODS",
    "NEGENTROPY_METHODS",
]

KAPPA_METHODS = ("newton", "halley", "banerjee", "refined1", "refined2", "ode")
NEGENTROPY_METHODS = ("exact", "ode", "banerjee", "refined")


# ----------------------------------------------------------------------------- validation
def _check_d(d):
    d_arr = np.asarray(d, dtype=np.float64)
    if d_arr.ndim != 0:
        raise ValueError(f"d must be a scalar dimension, got an array of shape {d_arr.shape}")
    d = float(d_arr)
    if not (d >= 2) or not np.isfinite(d):
        raise ValueError(f"d = {d}: the vMF distribution needs dimension d >= 2 (sphere S^(d-1)); pass d >= 2")
    return d


def _check_r(r, name="r"):
    r = np.asarray(r, dtype=np.float64)
    if r.size == 0:
        return r
    lo, hi = float(r.min()), float(r.max())  # two reductions, no temporaries; NaN propagates into both
    if math.isnan(lo) or math.isnan(hi):
        raise ValueError(f"{name} contains NaN; pass mean-parameter norms in [0, 1)")
    if lo < 0:
        raise ValueError(f"{name} = {lo} < 0: a mean-parameter norm |mu| must be in [0, 1)")
    if hi >= 1:
        raise ValueError(f"{name} = {hi} >= 1: |mu| must be < 1 for a vMF (kappa finite); "
                         "cap it, e.g. at A_d(kappa_max)")
    return r


def _check_kappa(kappa):
    kappa = np.asarray(kappa, dtype=np.float64)
    if np.any(~(kappa >= 0)):
        raise ValueError("kappa must be >= 0 and not NaN; pass the concentration |eta|")
    return kappa


def _ret(a):
    a = np.asarray(a)
    return a if a.ndim else float(a)


# ----------------------------------------------------------------------------- normalisers
def log_sphere_area(d):
    """log |S^{d-1}| = log(2 pi^{d/2} / Gamma(d/2)), the log surface area of the unit sphere in R^d.

    Parameters
    ----------
    d : float
        Ambient dimension, a scalar >= 2.

    Returns
    -------
    float
        log |S^{d-1}|.
    """
    d = _check_d(d)
    return math.log(2.0) + 0.5 * d * math.log(math.pi) - float(gammaln(0.5 * d))


def author_psi0(d):
    """Psi(0) in the VMF authors' code: (d/2 - 1) log 2 + lgamma(d/2) + (d/2) log(2 pi).

    The constant of the authors' code's convention for the negative entropy; see :func:`negentropy_offset`.

    Parameters
    ----------
    d : float
        Ambient dimension, a scalar >= 2.

    Returns
    -------
    float
        The authors' Psi(0).
    """
    d = _check_d(d)
    return (0.5 * d - 1.0) * math.log(2.0) + float(gammaln(0.5 * d)) + 0.5 * d * math.log(2 * math.pi)


def negentropy_offset(d, convention="uniform"):
    """Constant added to phi (uniform convention, phi(0) = 0) to get another convention's Psi.

    ``"uniform"``: 0.  ``"hausdorff"``: -log|S^{d-1}| (true negative differential entropy w.r.t. the
    surface measure).  ``"author"``: the authors' code, Psi(0) = (d/2-1) log 2 + lgamma(d/2) + (d/2) log 2 pi.

    Parameters
    ----------
    d : float
        Ambient dimension, a scalar >= 2 (not checked for ``"uniform"``).
    convention : {"uniform", "hausdorff", "author"}, default "uniform"
        The convention whose Psi(0) is returned.

    Returns
    -------
    float
        Psi(0) of that convention: phi(r) + offset is that convention's negative entropy.
    """
    if convention == "uniform":
        return 0.0
    if convention == "hausdorff":
        return -log_sphere_area(d)
    if convention == "author":
        return author_psi0(d)
    raise ValueError(f"convention = {convention!r}; use 'uniform', 'hausdorff' or 'author'")


def vmf_log_partition_uniform(kappa, *, d):
    """psi_U(kappa) = log E_{Uniform(S^{d-1})} exp(kappa x_1) = lgamma(d/2) + log I_{d/2-1}(kappa) - (d/2-1) log(kappa/2).

    psi_U(0) = 0 and psi_U(inf) = inf. Computed without forming I_nu; for small kappa from the power series.
    The log-partition of the vMF w.r.t. the uniform probability measure (VMF paper Sec. 1).

    Parameters
    ----------
    kappa : array_like of float
        Concentration(s) kappa = |eta| >= 0 (``inf`` allowed), any shape.
    d : float, keyword-only
        Ambient dimension, a scalar >= 2.

    Returns
    -------
    float or ndarray
        psi_U(kappa), shaped like ``kappa`` (a float for scalar input).
    """
    d = _check_d(d)
    kappa = _check_kappa(kappa)
    nu = 0.5 * d - 1.0
    k = np.atleast_1d(kappa).ravel()
    out = np.zeros(k.shape)
    small = (k > 0) & (0.25 * k * k <= 2.0 * (nu + 1.0)) & (k <= 30.0)
    if np.any(small):
        out[small] = _log_hyp0f1_series(nu, k[small])
    out[np.isposinf(k)] = np.inf  # the limit (log I_nu(k) ~ k): log C_d(inf) = -inf, as A_d(inf) = 1
    big = (k > 0) & ~small & np.isfinite(k)
    if np.any(big):
        out[big] = float(gammaln(nu + 1.0)) + log_besseli(nu, k[big]) - nu * np.log(0.5 * k[big])
    return _ret(out.reshape(np.shape(kappa)))


@njit(cache=True)
def _log_hyp0f1_series(nu, k):
    out = np.empty(k.shape[0])
    for i in range(k.shape[0]):
        q = 0.25 * k[i] * k[i]
        term = 1.0
        s = 1.0
        for j in range(1, 400):
            term *= q / (j * (nu + j))
            s += term
            if term < 1e-17 * s:
                break
        out[i] = math.log(s)
    return out


def vmf_log_normalizer(kappa, *, d):
    """log C_d(kappa) of vMF(m, kappa) on S^{d-1}, density w.r.t. the Hausdorff (surface) measure.

    C_d(kappa) = kappa^{d/2-1} / ((2 pi)^{d/2} I_{d/2-1}(kappa)); kappa = 0 gives -log|S^{d-1}|.
    Computed as -log|S^{d-1}| - psi_U(kappa) (:func:`vmf_log_partition_uniform`).

    Parameters
    ----------
    kappa : array_like of float
        Concentration(s) >= 0, any shape.
    d : float, keyword-only
        Ambient dimension, a scalar >= 2.

    Returns
    -------
    float or ndarray
        log C_d(kappa), shaped like ``kappa`` (a float for scalar input).
    """
    d = _check_d(d)
    return _ret(-log_sphere_area(d) - np.asarray(vmf_log_partition_uniform(kappa, d=d)))


# ----------------------------------------------------------------------------- kappa from r
def _banerjee_kappa(r, d):
    return r * (d - r * r) / (1.0 - r * r)


def _refined1_grad(r, d):
    """psi~'_1(r) = (d-1) [ r/(1-r^2) + r/(r^4 + (d-2) r^2 + d - 1) ]  (the paper's refined closed form)."""
    r2 = r * r
    return (d - 1.0) * (r / (1.0 - r2) + r / (r2 * r2 + (d - 2.0) * r2 + d - 1.0))


def _refined1_hess(r, d):
    r2 = r * r
    q = d - 1.0 + (d - 2.0) * r2 + r2 * r2
    return (d - 1.0) * (2.0 * r2 / (1.0 - r2) ** 2 + 1.0 / (1.0 - r2)
                        - r * (2.0 * (d - 2.0) * r + 4.0 * r2 * r) / (q * q) + 1.0 / q)


def _refined2_grad(r, d):
    """psi~'_2(r) = (d-1) r / (1 - r^2 - 1/psi~''_1(r))  (the paper's closed form for grad Psi)."""
    r = np.asarray(r, dtype=np.float64)
    return _refined2_grad_kernel(np.ascontiguousarray(r).ravel(), float(d)).reshape(r.shape)


@njit(cache=True)
def _refined2_grad_kernel(r, d):
    """Fused loop of psi~'_2 (about 20 floating-point operations per radius)."""
    out = np.empty(r.shape[0])
    dm1 = d - 1.0
    dm2 = d - 2.0
    for i in range(r.shape[0]):
        x = r[i]
        x2 = x * x
        om = 1.0 - x2
        q = dm1 + dm2 * x2 + x2 * x2
        h = dm1 * (2.0 * x2 / (om * om) + 1.0 / om - x * (2.0 * dm2 * x + 4.0 * x2 * x) / (q * q) + 1.0 / q)
        out[i] = dm1 * x / (om - 1.0 / h) if x > 0.0 else 0.0
    return out


@njit(cache=True)
def _ratio_adaptive(d, k):
    return bessel_ratio_perron(d, k, 1000000, 1e-17)


@njit(cache=True)
def _halley_perron_array(r, d, n_steps, n_terms, exact):
    """kappa = A_d^{-1}(r) by Halley steps on the Perron CF, started at Banerjee's approximation.

    exact=True: iterate (up to 100 steps) until the relative step is < 1e-15 with an adaptive CF;
    otherwise exactly ``n_steps`` steps with a CF truncated at ``n_terms`` (the paper's setting).
    """
    out = np.empty(r.shape[0])
    for i in range(r.shape[0]):
        ri = r[i]
        if ri < 1e-8:
            # A_d(kappa) = kappa/d - kappa^3/(d^2 (d+2)) + O(kappa^5) inverted: kappa = d r + d^2 r^3/(d+2),
            # exact in doubles here (the next term is O(r^5)); Halley's f2 would overflow (d^2/kappa^2).
            out[i] = d * ri + d * d * ri * ri * ri / (d + 2.0)
            continue
        k = ri * (d - ri * ri) / (1.0 - ri * ri)
        steps = 100 if exact else n_steps
        for _s in range(steps):
            if exact:
                from_cf = _ratio_adaptive(d, k)
            else:
                from_cf = bessel_ratio_perron_fixed(d, k, n_terms)
            a = from_cf
            f = a - ri
            f1 = 1.0 - a * a - (d - 1.0) * a / k
            f2 = 2.0 * a**3 + 3.0 * (d - 1.0) * a * a / k + (d * (d - 1.0) / (k * k) - 2.0) * a - (d - 1.0) / k
            den = 2.0 * f1 * f1 - f * f2
            if den != 0.0:
                step = 2.0 * f * f1 / den
            else:
                step = f / f1
            knew = k - step
            if not (knew > 0.0):
                knew = 0.5 * k  # keep kappa positive (never needed from Banerjee's start in practice)
            done = abs(knew - k) <= 1e-15 * knew
            k = knew
            if exact and done:
                break
        out[i] = k
    return out


def kappa_halley_perron(r, *, d, n_steps=2, n_terms=50):
    """The VMF authors' truncated root finder: ``n_steps`` Halley steps, CF truncated at ``n_terms``.

    Solves A_d(kappa) = r (VMF paper App. A.5) by Halley steps started at Banerjee's approximation
    kappa_0 = r (d - r^2) / (1 - r^2), each evaluating A_d by :func:`bessel_ratio_perron_fixed`. Radii
    below 1e-8 take the series inverse d r + d^2 r^3 / (d + 2) instead.

    Parameters
    ----------
    r : array_like of float
        Mean-parameter norms |mu| in [0, 1), any shape.
    d : float, keyword-only
        Ambient dimension, a scalar >= 2.
    n_steps : int, default 2
        Number of Halley steps (exactly this many, no convergence test).
    n_terms : int, default 50
        Number of terms of the truncated Perron continued fraction (the paper's K).

    Returns
    -------
    float or ndarray
        The approximate concentration kappa, shaped like ``r`` (a float for scalar input).

    See Also
    --------
    vmf_mean_to_kappa : the root to full precision (``method="newton"``) and the closed forms.
    """
    d = _check_d(d)
    r = _check_r(r)
    flat = np.atleast_1d(r).astype(np.float64).ravel()
    return _ret(_halley_perron_array(flat, d, int(n_steps), int(n_terms), False).reshape(r.shape))


def vmf_mean_to_kappa(r, *, d, method="newton", **kwargs):
    """kappa = A_d^{-1}(r) = phi'(r): the concentration whose vMF on S^{d-1} has mean norm r.

    Parameters
    ----------
    r : array_like of float
        Mean-parameter norms |mu| in [0, 1), any shape.
    d : float, keyword-only
        Ambient dimension, a scalar >= 2 (keyword-only, as in every function of this module).
    method : {"newton", "halley", "banerjee", "refined1", "refined2", "ode"}, default "newton"
        ``"newton"`` (Halley steps on the Perron CF to full precision, started from Banerjee; alias
        ``"halley"``; VMF paper App. A.5), ``"banerjee"`` (r (d - r^2)/(1 - r^2), Banerjee et al.
        2005), ``"refined1"`` (psi~'_1), ``"refined2"`` (psi~'_2, the paper's closed form, Sec. 2.5 and
        App. A.4), ``"ode"`` (phi' from the paper's ODE, Sec. 2.2-2.3).
    **kwargs
        Forwarded to :func:`solve_negentropy_ode` for ``method="ode"`` (``psi0``, ``dpsi0``, ``rtol``,
        ``atol``, ``method``); ignored by the other methods.

    Returns
    -------
    float or ndarray
        The concentration kappa >= 0, shaped like ``r`` (a float for scalar input).
    """
    d = _check_d(d)
    r = _check_r(r)
    if method in ("newton", "halley"):
        flat = np.atleast_1d(r).astype(np.float64).ravel()
        return _ret(_halley_perron_array(flat, d, 0, 0, True).reshape(r.shape))
    if method == "banerjee":
        return _ret(_banerjee_kappa(r, d))
    if method == "refined1":
        return _ret(_refined1_grad(r, d))
    if method == "refined2":
        return _ret(_refined2_grad(r, d))
    if method == "ode":
        return _ret(solve_negentropy_ode(r, d=d, **kwargs)[1])
    raise ValueError(f"method = {method!r}; use one of {KAPPA_METHODS}")


# ----------------------------------------------------------------------------- negative entropy
def _banerjee_phi(r, d):
    """Antiderivative of Banerjee's approximation with phi(0) = 0: ((1-d) log(1-r^2) + r^2) / 2."""
    return 0.5 * ((1.0 - d) * np.log1p(-r * r) + r * r)


def _refined1_phi(r, d):
    """psi~_1(r) - psi(0): antiderivative of psi~'_1, valid for every d >= 2.

    int_0^r t/(t^4 + (d-2)t^2 + d-1) dt = 1/2 int_0^{r^2} du/(u^2 + 2 v u + d - 1), v = d/2 - 1,
    with discriminant s^2 = v^2 - (d-1) = d^2/4 - 2d + 2: log form for s^2 > 0 (d >= 7, the paper's
    formula), arctan form for s^2 < 0, rational for s^2 = 0.
    """
    r2 = r * r
    v = 0.5 * d - 1.0
    s2 = 0.25 * d * d - 2.0 * d + 2.0
    if s2 > 1e-12 and np.ndim(r) > 0:
        ra = np.asarray(r, dtype=np.float64)
        return _refined1_phi_log_kernel(np.ascontiguousarray(ra).ravel(), float(d)).reshape(ra.shape)
    if s2 > 1e-12:
        s = math.sqrt(s2)
        part = (np.log(r2 + v - s) - np.log(r2 + v + s) + math.log(v + s) - math.log(v - s)) / (4.0 * s)
    elif s2 < -1e-12:
        a = math.sqrt(-s2)
        part = 0.5 * (np.arctan((r2 + v) / a) - math.atan(v / a)) / a
    else:
        part = 0.5 * (1.0 / v - 1.0 / (r2 + v))
    return (d - 1.0) * (part - 0.5 * np.log1p(-r2))


def _refined1_phi_log_kernel(r, d):
    """psi~_1 - psi(0) for d >= 7 (the log branch), in three passes: rational arguments (numba loop),
    the two logarithms by numpy's SIMD log/log1p (a scalar libm call per element was ~2/3 of the
    time of the former fused loop), and a fused combination. Same formula as the scalar version
    ``_refined1_phi_log_scalar`` (kept as the test reference), equal to it within a few ulp."""
    v = 0.5 * d - 1.0
    s = math.sqrt(0.25 * d * d - 2.0 * d + 2.0)
    c = math.log(v + s) - math.log(v - s)
    q, m = _refined1_phi_log_args(r, v, s)
    np.log(q, out=q)
    np.log1p(m, out=m)
    return _refined1_phi_combine(q, m, c, s, d)


@njit(cache=True)
def _refined1_phi_log_args(r, v, s):
    n = r.shape[0]
    q = np.empty(n)
    m = np.empty(n)
    for i in range(n):
        r2 = r[i] * r[i]
        q[i] = (r2 + v - s) / (r2 + v + s)
        m[i] = -r2
    return q, m


@njit(cache=True)
def _refined1_phi_combine(lq, lm, c, s, d):
    """In place: (d - 1) ((log q + c) / (4 s) - log1p(-r^2) / 2)."""
    for i in range(lq.shape[0]):
        lq[i] = (d - 1.0) * ((lq[i] + c) / (4.0 * s) - 0.5 * lm[i])
    return lq


@njit(cache=True)
def _refined1_phi_log_scalar(r, d):
    """Fused scalar loop of psi~_1 - psi(0) for d >= 7 (reference for the three-pass version)."""
    v = 0.5 * d - 1.0
    s = math.sqrt(0.25 * d * d - 2.0 * d + 2.0)
    c = math.log(v + s) - math.log(v - s)
    out = np.empty(r.shape[0])
    for i in range(r.shape[0]):
        r2 = r[i] * r[i]
        part = (math.log((r2 + v - s) / (r2 + v + s)) + c) / (4.0 * s)
        out[i] = (d - 1.0) * (part - 0.5 * math.log1p(-r2))
    return out


def vmf_negentropy(r, *, d, method="exact", **kwargs):
    """Negative entropy phi(r) = kappa r - psi_U(kappa), kappa = A_d^{-1}(r) (so phi(0) = 0, phi' = kappa).

    Relative to the uniform probability measure on S^{d-1}; add ``negentropy_offset(d, convention)``
    for the Hausdorff or the authors' convention.

    Parameters
    ----------
    r : array_like of float
        Mean-parameter norms |mu| in [0, 1), any shape.
    d : float, keyword-only
        Ambient dimension, a scalar >= 2.
    method : {"exact", "ode", "banerjee", "refined"}, default "exact"
        ``"exact"`` (Newton root + log-Bessel), ``"ode"`` (the paper's ODE, Sec. 2.2-2.3, one RK45
        solve), ``"banerjee"`` (antiderivative of Banerjee's approximation, Sec. 2.5), ``"refined"``
        (the paper's psi~_1, Sec. 2.5 and App. A.4).
    **kwargs
        Forwarded to :func:`solve_negentropy_ode` for ``method="ode"``; ignored otherwise.

    Returns
    -------
    float or ndarray
        phi(r), shaped like ``r`` (a float for scalar input).
    """
    d = _check_d(d)
    r = _check_r(r)
    if method == "exact":
        kappa = np.asarray(vmf_mean_to_kappa(r, d=d, method="newton"))
        return _ret(kappa * r - np.asarray(vmf_log_partition_uniform(kappa, d=d)))
    if method == "ode":
        return _ret(solve_negentropy_ode(r, d=d, **kwargs)[0])
    if method == "banerjee":
        return _ret(_banerjee_phi(r, d))
    if method == "refined":
        return _ret(_refined1_phi(r, d))
    raise ValueError(f"method = {method!r}; use one of {NEGENTROPY_METHODS}")


def vmf_negentropy_grad(r, *, d, method="exact", **kwargs):
    """phi'(r) = kappa, the derivative of the negative-entropy profile (= :func:`vmf_mean_to_kappa`).

    Parameters
    ----------
    r : array_like of float
        Mean-parameter norms |mu| in [0, 1), any shape.
    d : float, keyword-only
        Ambient dimension, a scalar >= 2.
    method : {"exact", "banerjee", "refined", "refined1", "ode"}, default "exact"
        ``"exact"`` = Newton (``vmf_mean_to_kappa(method="newton")``); ``"banerjee"``; ``"refined"`` =
        psi~'_2 (the paper's choice, VMF Sec. 2.5); ``"refined1"`` = psi~'_1; ``"ode"``. The other
        names of :data:`KAPPA_METHODS` are passed through as well.
    **kwargs
        Forwarded to :func:`vmf_mean_to_kappa` (used by ``method="ode"``).

    Returns
    -------
    float or ndarray
        phi'(r) = kappa, shaped like ``r`` (a float for scalar input).
    """
    m = {"exact": "newton", "refined": "refined2"}.get(method, method)
    return vmf_mean_to_kappa(r, d=d, method=m, **kwargs)


def vmf_negentropy_hess(r, *, d, method="exact", **kwargs):
    """phi''(r), the second derivative of the negative-entropy profile.

    ``"exact"``: 1/A_d'(kappa) = 1/(1 - r^2 - (d-1) r/kappa) with the Newton kappa; ``"banerjee"``:
    derivative of Banerjee's kappa; ``"refined"``: psi~''_1 (VMF App. A.4); ``"ode"``: the ODE
    right-hand side (Sec. 2.2) at the ODE solution phi'. For ``"exact"`` and ``"ode"``, r = 0 gives the
    limit d.

    Parameters
    ----------
    r : array_like of float
        Mean-parameter norms |mu| in [0, 1), any shape.
    d : float, keyword-only
        Ambient dimension, a scalar >= 2.
    method : {"exact", "ode", "banerjee", "refined"}, default "exact"
        The route, as above.
    **kwargs
        Forwarded to :func:`vmf_mean_to_kappa` (used by ``method="ode"``).

    Returns
    -------
    float or ndarray
        phi''(r), shaped like ``r`` (a float for scalar input).
    """
    d = _check_d(d)
    r = _check_r(r)
    if method in ("exact", "ode"):
        kappa = np.asarray(vmf_mean_to_kappa(r, d=d, method="newton" if method == "exact" else "ode", **kwargs))
        with np.errstate(invalid="ignore", divide="ignore"):
            h = kappa / ((1.0 - r * r) * kappa - (d - 1.0) * r)
        h = np.where(r == 0, float(d), h)  # limit r -> 0: kappa ~ d r
        return _ret(h)
    if method == "banerjee":
        r2 = r * r
        return _ret((d - 3.0 * r2) / (1.0 - r2) + 2.0 * r2 * (d - r2) / (1.0 - r2) ** 2)
    if method == "refined":
        return _ret(_refined1_hess(r, d))
    raise ValueError(f"method = {method!r}; use one of {NEGENTROPY_METHODS}")


def vmf_variance_function(mu, method="exact"):
    """V(mu) = Cov_mu[x] = (Hessian of Psi)^{-1} = (r/phi') I + (1/phi'' - r/phi') mu mu^T / r^2 (paper Sec. 2.4).

    Parameters
    ----------
    mu : array_like of float, shape (d,)
        Mean parameter with |mu| < 1; its dimension d is that of the ambient space (d >= 2).
    method : str, default "exact"
        How phi' and phi'' are computed: a method of :func:`vmf_negentropy_grad` that
        :func:`vmf_negentropy_hess` also accepts (``"exact"``, ``"banerjee"``, ``"refined"``, ``"ode"``).

    Returns
    -------
    ndarray, shape (d, d)
        The covariance matrix V(mu); for mu = 0 the isotropic I / d.
    """
    mu = np.asarray(mu, dtype=np.float64)
    if mu.ndim != 1:
        raise ValueError(f"mu must be a 1-d mean parameter vector, got shape {mu.shape}")
    d = mu.shape[0]
    r = float(np.linalg.norm(mu))
    _check_r(r, "|mu|")
    if r == 0.0:
        return np.eye(d) / d
    kappa = float(vmf_negentropy_grad(r, d=d, method=method))
    h = float(vmf_negentropy_hess(r, d=d, method=method))
    u = mu / r
    return (r / kappa) * np.eye(d) + (1.0 / h - r / kappa) * np.outer(u, u)


# ----------------------------------------------------------------------------- the ODE
def _ode_rhs(d):
    def rhs(t, y):
        return [y[1], y[1] / ((1.0 - t * t) * y[1] - (d - 1.0) * t)]
    return rhs


def solve_negentropy_ode(r, *, d, psi0=0.0, dpsi0=None, rtol=1e-12, atol=1e-12, method="RK45"):
    """Solve the paper's ODE phi'' = phi' / ((1 - r^2) phi' - (d-1) r) once from 0 to max(r).

    The ODE of the VMF paper (Sec. 2.2, initial conditions Sec. 2.3 and App. A.3), solved with
    ``scipy.integrate.solve_ivp`` from r = 0 to the largest query radius, stopping at every query radius.

    Parameters
    ----------
    r : array_like of float
        Query radii in [0, 1), any shape (any order; duplicates allowed).
    d : float, keyword-only
        Ambient dimension, a scalar >= 2.
    psi0 : float, default 0.0
        phi(0), the constant of the chosen convention (0 = uniform measure; see :func:`negentropy_offset`).
    dpsi0 : float, optional
        phi'(0) = epsilon_0 > 0 (the exact value 0 is a 0/0 singularity). Default: the authors'
        1e-6 for d < 1000, 1e-5 for d < 50000, 1e-4 above.
    rtol : float, default 1e-12
        Relative tolerance of the solver (paper: 1e-12).
    atol : float, default 1e-12
        Absolute tolerance of the solver (paper: 1e-12).
    method : str, default "RK45"
        The ``solve_ivp`` method (paper: RK45).

    Returns
    -------
    phi : ndarray
        phi(r), shaped like ``r`` (psi0 at r = 0).
    dphi : ndarray
        phi'(r) = kappa, shaped like ``r`` (dpsi0 at r = 0).

    Raises
    ------
    RuntimeError
        If the solver fails.
    """
    d = _check_d(d)
    r = _check_r(r)
    if dpsi0 is None:
        dpsi0 = 1e-6 if d < 1000 else (1e-5 if d < 50000 else 1e-4)
    if not dpsi0 > 0:
        raise ValueError(f"dpsi0 = {dpsi0}: the ODE needs phi'(0) > 0 (0 is singular); use e.g. 1e-6")
    flat = np.atleast_1d(r).ravel()
    uniq, inv = np.unique(flat, return_inverse=True)
    phi = np.empty(uniq.shape)
    dphi = np.empty(uniq.shape)
    pos = uniq > 0
    phi[~pos] = psi0
    dphi[~pos] = dpsi0
    if np.any(pos):
        t_eval = uniq[pos]
        sol = integrate.solve_ivp(_ode_rhs(d), (0.0, float(t_eval[-1])), [psi0, dpsi0], method=method,
                                  t_eval=t_eval, rtol=rtol, atol=atol)
        if not sol.success:
            raise RuntimeError(f"negentropy ODE failed for d = {d}: {sol.message}; loosen rtol/atol or lower max r")
        phi[pos] = sol.y[0]
        dphi[pos] = sol.y[1]
        logger.debug("ODE d=%g: %d rhs evaluations", d, sol.nfev)
    return phi[inv].reshape(r.shape), dphi[inv].reshape(r.shape)
