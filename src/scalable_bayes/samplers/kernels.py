"""Numba step kernels of the Euclidean SG-MCMC samplers (SGLD: Welling & Teh 2011; SGHMC: Chen et al. 2014;
SGNHT: Ding et al. 2014, Alg. 2 and eq. 11).

Every kernel has the same signature, so one compiled driver runs them all::

    ke, thermo = step(x, p, xi, g, key, h, hyper)

``x`` position, ``p`` momentum, ``xi`` thermostat (all float64, updated in place), ``g`` the
stochastic gradient of the potential  U~ = -(N/n) sum log p(x_i|theta) - log p(theta)  at ``x``,
``key`` the xoroshiro state (advanced in place), ``h`` the step size (``eta`` for the
reformulated kernels) and ``hyper`` a float64 array of sampler constants. The kernel returns
the kinetic energy per dimension after the step (p'p / 2n; NaN for SGLD which has no momentum)
and the scalar thermostat value (friction for fixed-friction samplers). Kernels never allocate;
the general (matrix) thermostat keeps its scratch row inside ``xi``.

Manifold samplers (sphere, simplex) implement this same signature with their own geometry in
the kernel, so the driver and the state layout are shared.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..rng import normal_pair


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
