"""Logarithm of the modified Bessel function of the first kind and the vMF Bessel ratio.

``log_besseli(nu, x)``  log I_nu(x) for orders up to 1e5+ and arguments 1e-8 .. 1e7 without
overflow/underflow. Three routes, each used only where it is accurate to ~1e-14:

* power series in log space, ``nu log(x/2) - lgamma(nu+1) + log sum_k (x^2/4)^k / (k! (nu+1)_k)``,
  when ``x^2 / 4 <= 2 (nu + 1)`` and ``x <= 30`` (converges in < 60 terms);
* ``log(scipy.special.ive(nu, x)) + x`` (AMOS) where ``ive`` is a normal float;
* the uniform (Debye) asymptotic expansion (Abramowitz & Stegun 9.7.7 with u_1..u_5) for
  ``nu >= 200`` (truncation error < 1e-15 absolute).

``bessel_ratio(kappa, d=d)``  A_d(kappa) = I_{d/2}(kappa) / I_{d/2-1}(kappa) by the Perron continued
fraction (Gautschi & Slavik 1978; Hornik & Gruen 2014; VMF paper App. A.5), summed until the
terms fall below 1e-17 relative, with the Taylor series below kappa = 1e-6. A Numba kernel.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from scipy import special as sps

__all__ = ["log_besseli", "bessel_ratio", "bessel_ratio_perron", "bessel_ratio_perron_fixed"]

# Debye polynomials u_k(t), A&S 9.3.9-9.3.10 (coefficients of increasing powers of t).
_U = (
    None,
    (0.0, 3 / 24, 0.0, -5 / 24),
    (0.0, 0.0, 81 / 1152, 0.0, -462 / 1152, 0.0, 385 / 1152),
    (0.0, 0.0, 0.0, 30375 / 414720, 0.0, -369603 / 414720, 0.0, 765765 / 414720, 0.0, -425425 / 414720),
    (0.0, 0.0, 0.0, 0.0, 4465125 / 39813120, 0.0, -94121676 / 39813120, 0.0, 349922430 / 39813120,
     0.0, -446185740 / 39813120, 0.0, 185910725 / 39813120),
    (0.0, 0.0, 0.0, 0.0, 0.0, 1519035525 / 6688604160, 0.0, -49286948607 / 6688604160, 0.0,
     284499769554 / 6688604160, 0.0, -614135872350 / 6688604160, 0.0, 566098157625 / 6688604160,
     0.0, -188699385875 / 6688604160),
)
_U_ARR = np.zeros((6, 16))
for _k in range(1, 6):
    _U_ARR[_k, : len(_U[_k])] = _U[_k]

DEBYE_MIN_ORDER = 200.0  # u_6/nu^6 < 1e-15 here; below it ive (AMOS) is used


@njit(cache=True)
def _log_besseli_debye_scalar(nu, x, U):
    """Uniform asymptotic expansion of log I_nu(nu z), z = x / nu (A&S 9.7.7), u_1..u_5."""
    z = x / nu
    sq = math.sqrt(1.0 + z * z)
    t = 1.0 / sq
    # eta = sq + log(z / (1 + sq)), written to avoid cancellation for small z
    eta = sq + math.log(z) - math.log1p(sq)
    corr = 1.0
    nuk = 1.0
    for k in range(1, 6):
        nuk *= nu
        # Horner in t
        p = 0.0
        for j in range(15, -1, -1):
            p = p * t + U[k, j]
        corr += p / nuk
    return -0.5 * math.log(2.0 * math.pi * nu) + nu * eta - 0.5 * math.log(sq) + math.log(corr)


@njit(cache=True)
def _log_besseli_series_scalar(nu, x):
    """log I_nu(x) from the power series, in log space (for x^2/4 small against nu+1)."""
    q = 0.25 * x * x
    term = 1.0
    s = 1.0
    for k in range(1, 400):
        term *= q / (k * (nu + k))
        s += term
        if term < 1e-17 * s:
            break
    return nu * math.log(0.5 * x) - math.lgamma(nu + 1.0) + math.log(s)


@njit(cache=True)
def _series_ok(nu, x):
    return x <= 30.0 and 0.25 * x * x <= 2.0 * (nu + 1.0)


def log_besseli(nu, x):
    """log I_nu(x), the logarithm of the modified Bessel function of the first kind.

    Parameters
    ----------
    nu : array_like of float
        Order, >= 0 (real, not only integer). Broadcast against ``x``.
    x : array_like of float
        Argument, >= 0 (x = 0 gives 0 for nu = 0 and -inf otherwise; x = inf gives inf).

    Returns
    -------
    float or ndarray
        log I_nu(x), of the broadcast shape of ``nu`` and ``x`` (a float for scalar input); finite
        wherever the log is finite.

    Raises
    ------
    ValueError
        If an order is negative or NaN, or an argument is negative or NaN.
    """
    nu_a, x_a = np.broadcast_arrays(np.asarray(nu, dtype=np.float64), np.asarray(x, dtype=np.float64))
    if np.any(nu_a < 0) or np.any(np.isnan(nu_a)):
        raise ValueError(f"log_besseli: order nu must be >= 0, got min {np.nanmin(nu_a) if nu_a.size else nu_a}; "
                         "use I_{-nu} = I_nu for integer orders")
    if np.any(x_a < 0) or np.any(np.isnan(x_a)):
        raise ValueError("log_besseli: argument x must be >= 0 and not NaN; pass |x| (I_nu is defined here for x >= 0)")
    out = _log_besseli_array(nu_a.ravel().copy(), x_a.ravel().copy(), _U_ARR).reshape(nu_a.shape)
    # scipy ive route where neither series nor Debye applies
    todo = np.isnan(out)
    if np.any(todo):
        v = sps.ive(nu_a[todo], x_a[todo])
        out[todo] = np.log(v) + x_a[todo]
    return out if out.ndim else float(out)


@njit(cache=True)
def _log_besseli_array(nu, x, U):
    n = nu.shape[0]
    out = np.empty(n)
    for i in range(n):
        v = nu[i]
        xi = x[i]
        if xi == 0.0:
            out[i] = 0.0 if v == 0.0 else -np.inf
        elif math.isinf(xi):
            out[i] = np.inf
        elif _series_ok(v, xi):
            out[i] = _log_besseli_series_scalar(v, xi)
        elif v >= DEBYE_MIN_ORDER:
            out[i] = _log_besseli_debye_scalar(v, xi, U)
        else:
            out[i] = np.nan  # filled by scipy.special.ive (normal range there: x > 30 or x^2 > 8(nu+1))
    return out


@njit(cache=True)
def bessel_ratio_perron(d, kappa, max_terms=100000, tol=1e-17):
    """A_d(kappa) = I_{d/2}(kappa)/I_{d/2-1}(kappa) by the Perron continued fraction (scalar).

    Written as the series 1 + rho_1 + rho_1 rho_2 + ... of Gautschi & Slavik (1978) as in the VMF
    authors' code (VMF paper App. A.5); stops when a term is below ``tol`` times the sum or after
    ``max_terms`` terms. Below kappa = 1e-6 the Taylor series kappa/d - kappa^3/(d^2 (d+2)) + ... is
    returned instead. A Numba kernel: arguments are scalars and positional.

    Parameters
    ----------
    d : float
        Ambient dimension (vMF on S^{d-1}), > 0.
    kappa : float
        Concentration, >= 0 and finite (kappa = 0 gives 0).
    max_terms : int, default 100000
        Upper bound on the number of terms of the series.
    tol : float, default 1e-17
        Relative stopping threshold: the sum stops when a term is below ``tol`` times the partial sum.

    Returns
    -------
    float
        A_d(kappa), in [0, 1).

    See Also
    --------
    bessel_ratio : the vectorised, validated version.
    bessel_ratio_perron_fixed : the same fraction truncated after a fixed number of terms.
    """
    if kappa == 0.0:
        return 0.0
    if kappa < 1e-6:
        return kappa / d - kappa**3 / (d * d * (d + 2.0)) + 2.0 * kappa**5 / (d**3 * (d + 2.0) * (d + 4.0))
    s = 0.5 * d
    xp = 0.5 * kappa
    v = s + kappa + 0.5
    u = (s + kappa) * v
    w = xp * (s + 0.5)
    rho = w / ((s + xp) * v - w)
    p = rho
    psum = 1.0 + rho
    for _k in range(2, max_terms):
        u += v
        v += 0.5
        w += xp
        t = w * (1.0 + rho)
        rho = t / (u - t)
        p *= rho
        psum += p
        if p < tol * psum:
            break
    return psum / (1.0 + 2.0 * s / kappa)


@njit(cache=True)
def bessel_ratio_perron_fixed(d, kappa, n_terms):
    """Perron continued fraction truncated after exactly ``n_terms`` terms (the paper's K).

    The truncated root finder of the VMF authors (VMF paper App. A.5) evaluates A_d this way; same
    series as :func:`bessel_ratio_perron` without the stopping rule, and the same Taylor series below
    kappa = 1e-6. A Numba kernel: arguments are scalars and positional.

    Parameters
    ----------
    d : float
        Ambient dimension (vMF on S^{d-1}), > 0.
    kappa : float
        Concentration, >= 0 and finite (kappa = 0 gives 0).
    n_terms : int
        Number of terms of the series 1 + rho_1 + rho_1 rho_2 + ... (values below 2 keep the first two).

    Returns
    -------
    float
        The truncated approximation of A_d(kappa) = I_{d/2}(kappa) / I_{d/2-1}(kappa).
    """
    if kappa == 0.0:
        return 0.0
    if kappa < 1e-6:
        return kappa / d - kappa**3 / (d * d * (d + 2.0)) + 2.0 * kappa**5 / (d**3 * (d + 2.0) * (d + 4.0))
    s = 0.5 * d
    xp = 0.5 * kappa
    v = s + kappa + 0.5
    u = (s + kappa) * v
    w = xp * (s + 0.5)
    rho = w / ((s + xp) * v - w)
    p = rho
    psum = 1.0 + rho
    for _k in range(2, n_terms):
        u += v
        v += 0.5
        w += xp
        t = w * (1.0 + rho)
        rho = t / (u - t)
        p *= rho
        psum += p
    return psum / (1.0 + 2.0 * s / kappa)


@njit(cache=True)
def _bessel_ratio_one(d, kappa):
    """A_d(kappa) for a checked d >= 1 and kappa >= 0 (1 at kappa = inf)."""
    if kappa == np.inf:
        return 1.0
    return bessel_ratio_perron(d, kappa, 1000000, 1e-17)


@njit(cache=True)
def _bessel_ratio_array(d, kappa):
    out = np.empty(kappa.shape[0])
    for i in range(kappa.shape[0]):
        out[i] = _bessel_ratio_one(d[i], kappa[i])
    return out


_SCALARS = (float, int, np.floating, np.integer)


def bessel_ratio(kappa, *, d):
    """A_d(kappa) = I_{d/2}(kappa) / I_{d/2-1}(kappa), the mean resultant length of vMF(kappa) on S^{d-1}.

    Parameters
    ----------
    kappa : array_like
        Concentration >= 0 (may be ``inf``, giving 1).
    d : array_like, keyword-only
        Ambient dimension >= 1 (vMF on S^{d-1}); keyword-only so that (d, kappa) cannot be swapped.

    Returns
    -------
    float or ndarray
        A_d(kappa), broadcast over ``kappa`` and ``d``.
    """
    if isinstance(kappa, _SCALARS) and isinstance(d, _SCALARS):  # one number (a sampler's every step): no arrays
        d_f, k_f = float(d), float(kappa)
        if not d_f >= 1:
            raise ValueError(f"bessel_ratio: dimension d must be >= 1, got {d_f}")
        if not k_f >= 0:
            raise ValueError("bessel_ratio: kappa must be >= 0 and not NaN; pass the concentration |eta|")
        return _bessel_ratio_one(d_f, k_f)
    d_a, k_a = np.broadcast_arrays(np.asarray(d, dtype=np.float64), np.asarray(kappa, dtype=np.float64))
    if np.any(~(d_a >= 1)):
        raise ValueError(f"bessel_ratio: dimension d must be >= 1, got {d_a.min() if d_a.size else d_a}")
    if np.any(~(k_a >= 0)):
        raise ValueError("bessel_ratio: kappa must be >= 0 and not NaN; pass the concentration |eta|")
    out = _bessel_ratio_array(d_a.ravel().copy(), k_a.ravel().copy()).reshape(k_a.shape)
    return out if out.ndim else float(out)
