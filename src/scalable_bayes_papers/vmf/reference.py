"""High-precision reference for the VMF curve figures (Nonnenmacher & Sahani 2024, Sec. 3, App. A.5).

Figs 2 and 5 measure errors of double-precision closed forms (Sec. 2.5, App. A.4) and root finders
(App. A.5) against a reference. The paper's reference is the ODE of Sec. 2.2-2.3 solved with RK45 at
rtol = atol = 1e-12; at D >= 10^4 its own error (~1e-7 in phi') exceeds the errors being measured.
This module gives kappa = phi'(r) = A_D^{-1}(r) and phi(r) = kappa r - psi_U(kappa) in mpmath at
``dps`` digits (default 50), then rounds to float64:

* log I_nu(x): mpmath's ``besseli`` for nu < ``NU_BESSELI`` where it converges (it raises
  NoConvergence otherwise), else (nu >= ``NU_DEBYE``) the
  uniform (Debye) asymptotic expansion of I_nu(nu z) (DLMF 10.41.3), summed until two successive terms
  fall below 10^-(dps + 5) relative; refused (ValueError) if that takes more than 80 terms.
  The coefficients u_k(t) come from the exact recursion DLMF 10.41.9 in rational arithmetic.
* kappa: Newton's method on A_D(kappa) - r in mpmath (A_D = exp(log I_{nu+1} - log I_nu),
  A_D'(kappa) = 1 - A^2 - (D - 1) A / kappa), started from the double-precision root, iterated until
  the step is below 10^-(dps/2) relative: the error left after a Newton step is O(step^2), so about
  10^-dps relative (from the double root, 1e-15 off, that is two steps).

Tested against mpmath's ``besseli`` where both converge (tests/test_vmf_reference.py).
"""

from __future__ import annotations

import functools
from fractions import Fraction

import mpmath as mp
import numpy as np

from scalable_bayes.special import vmf_mean_to_kappa

NU_DEBYE = 100.0     # smallest order at which the Debye expansion may be used (50 digits need ~25 terms at 499)
NU_BESSELI = 1000.0  # below this order mpmath's besseli is tried first (faster there; it fails at nu, x ~ 1e4-1e5)
_K_MAX = 80       # most Debye terms summed before giving up


@functools.lru_cache(maxsize=None)
def _debye_polys(k_max=_K_MAX):
    """Exact coefficients (lowest degree first) of u_0 .. u_k_max (DLMF 10.41.9):
    u_{k+1}(t) = t^2 (1 - t^2) u_k'(t) / 2 + (1/8) int_0^t (1 - 5 s^2) u_k(s) ds."""
    polys = [[Fraction(1)]]
    for _ in range(k_max):
        u = polys[-1]
        new = [Fraction(0)] * (len(u) + 3)
        for j, c in enumerate(u):
            if j >= 1:  # t^2 (1 - t^2) / 2 * j c t^(j-1)
                new[j + 1] += Fraction(j) * c / 2
                new[j + 3] -= Fraction(j) * c / 2
            new[j + 1] += c / (8 * (j + 1))      # (1/8) int_0^t c s^j ds
            new[j + 3] -= 5 * c / (8 * (j + 3))  # -(5/8) int_0^t c s^(j+2) ds
        while len(new) > 1 and new[-1] == 0:
            new.pop()
        polys.append(new)
    return polys


@functools.lru_cache(maxsize=None)
def _debye_polys_mp(dps):
    """u_k(t) = t^k q_k(t^2): the coefficients of q_k as mpf, lowest degree first."""
    out = []
    with mp.workdps(dps + 10):
        for k, p in enumerate(_debye_polys()):
            q = p[k::2]  # u_k has only the powers t^k, t^(k+2), ..., t^(3k)
            assert all(c == 0 for i, c in enumerate(p) if i < k or (i - k) % 2), "u_k parity"
            out.append([mp.mpf(c.numerator) / c.denominator for c in q])
    return out


def _log_besseli_debye(nu, x, dps):
    """log I_nu(x) by the uniform asymptotic expansion; nu, x mpf (called inside a workdps context)."""
    z = x / nu
    s = mp.sqrt(1 + z * z)
    t = 1 / s
    eta = s + mp.log(z / (1 + s))
    tol = mp.mpf(10) ** (-(dps + 5))
    total = mp.mpf(0)
    small = 0
    t2 = t * t
    scale = mp.mpf(1)  # (t / nu)^k
    for poly in _debye_polys_mp(dps):
        term = mp.polyval(poly, t2, asc=True) * scale
        total += term
        # u_k(t) has zeros in t, so one small term proves nothing: stop after two in a row
        small = small + 1 if abs(term) <= tol * abs(total) else 0
        if small == 2:
            break
        scale *= t / nu
    else:
        raise ValueError(f"Debye expansion of I_nu(x) not converged to {dps} digits in {_K_MAX} terms at "
                         f"nu = {nu}, x = {x}; raise NU_DEBYE or lower dps")
    return nu * eta - mp.log(2 * mp.pi * nu) / 2 - mp.log(1 + z * z) / 4 + mp.log(total)


def log_besseli_mp(nu, x, dps=50):
    """log I_nu(x) to about ``dps`` digits (mpmath object); nu >= 0, x > 0."""
    with mp.workdps(dps + 10):
        nu = mp.mpf(nu)
        x = mp.mpf(x)
        if nu < NU_BESSELI:
            try:
                return mp.log(mp.besseli(nu, x))
            except mp.libmp.NoConvergence:
                if nu < NU_DEBYE:
                    raise
        return _log_besseli_debye(nu, x, dps)


def kappa_negentropy_mp(r, d, dps=50, kappa0=None):
    """(kappa, phi) at one radius 0 < r < 1 as mpmath numbers: kappa = A_d^{-1}(r), phi = kappa r - psi_U(kappa)
    (uniform-measure convention, phi(0) = 0). ``kappa0``: start of Newton (default: the double root)."""
    if not (0 < r < 1):
        raise ValueError(f"r = {r}: the reference needs 0 < r < 1")
    if not d >= 2:
        raise ValueError(f"d = {d}: the vMF needs d >= 2")
    k = float(vmf_mean_to_kappa(float(r), d=float(d), method="newton")) if kappa0 is None else float(kappa0)
    with mp.workdps(dps + 10):
        r_mp = mp.mpf(r)
        nu = mp.mpf(d) / 2 - 1
        k = mp.mpf(k)
        tol = mp.mpf(10) ** (-(dps // 2))
        for _ in range(30):
            lnu = log_besseli_mp(nu, k, dps)
            a = mp.exp(log_besseli_mp(nu + 1, k, dps) - lnu)
            step = (a - r_mp) / (1 - a * a - (d - 1) * a / k)
            k = k - step
            if abs(step) <= tol * k:
                break
        else:
            raise ValueError(f"high-precision Newton for kappa did not converge at r = {r}, d = {d}")
        psi_u = mp.loggamma(mp.mpf(d) / 2) + log_besseli_mp(nu, k, dps) - nu * mp.log(k / 2)
        return k, k * r_mp - psi_u


def reference_curves(r, d, dps=50):
    """Float64 arrays (phi, phi') of the high-precision reference at radii r (each 0 < r < 1)."""
    r = np.asarray(r, dtype=np.float64)
    phi = np.empty(r.shape)
    dphi = np.empty(r.shape)
    for i, ri in np.ndenumerate(r):
        k, p = kappa_negentropy_mp(float(ri), d, dps)
        dphi[i] = float(k)
        phi[i] = float(p)
    return phi, dphi
