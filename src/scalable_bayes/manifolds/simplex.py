"""The probability simplex through the gamma ("expanded-mean") parametrisation.

Baker, Fearnhead, Fox & Nemeth (2018), *Large-scale stochastic sampling from the probability simplex*
(SCIR paper), Sec. 1.2: if theta_j ~ Gamma(a_j, 1) independently, then omega = theta / sum(theta) is
Dirichlet(a). A Dirichlet(alpha + n) posterior of categorical data with counts n is therefore sampled by
sampling each theta_j from Gamma(alpha_j + n_j, 1) and normalising. A parameter made of several
simplex vectors (the K topics of LDA, the components of a mixture) is a *product* of blocks: ``theta``
is one flat float64 array of ``n_blocks * block_size`` non-negative entries, block b holding the
entries ``b * block_size .. (b + 1) * block_size - 1``.

Kernels (Numba, allocation-free, drawing from a :mod:`scalable_bayes.rng` key):

* :func:`cir_transition` -- the exact transition of the Cox-Ingersoll-Ross process
  d theta = (a - theta) dt + sqrt(2 theta) dW over a time h (SCIR eq. 2.2). Its law is
  (1 - e^-h)/2 * chi'^2(2a, 2 theta e^-h / (1 - e^-h)); written as a Poisson mixture of gammas,
  theta' = (1 - e^-h) * Gamma(a + P, 1) with P ~ Poisson(theta / (e^h - 1)), which is exact for every
  shape a > 0 (down to 1e-3 and below) and every h > 0, and never negative.
* :func:`normalise_blocks` -- omega = theta / sum(theta) block by block.
* :func:`dirichlet` -- exact Dirichlet draws (the reference "Exact" of SCIR Figs. 1-2), in logs so that
  tiny shapes give no spurious exact zeros.

:class:`GammaSimplex` is what a model declares as its manifold (``Model.manifold``); the simplex
samplers (:mod:`scalable_bayes.samplers.simplex`) read its constants (block size and Dirichlet prior).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..rng import log_gamma, next_u64, uniform

__all__ = ["GammaSimplex", "cir_transition", "cir_constants", "normalise_blocks", "dirichlet"]


def cir_constants(h: float) -> tuple[float, float]:
    """(c, r) = (1 - e^-h, 1 / (e^h - 1)) of a CIR step of length h, computed without cancellation."""
    h = float(h)
    if not (math.isfinite(h) and h > 0):
        raise ValueError(f"CIR step: the time step h must be positive and finite, got {h!r}")
    return -math.expm1(-h), 1.0 / math.expm1(h)


def _ziggurat_tables():
    """Tables of the 256-layer ziggurat for N(0, 1) (Marsaglia & Tsang 2000, "The ziggurat method for
    generating random variables"; the 52-bit layout of numpy's generator): right edges x_i (``wi`` = x_i /
    2^52), densities f(x_i) (``fi``), inner-rectangle thresholds (``ki`` = x_(i-1) / x_i 2^52); layer 0 is
    the base strip with the tail beyond r."""
    r, v, m = 3.6541528853610088, 0.00492867323399, 2.0**52
    ki = np.zeros(256, np.uint64)
    wi = np.zeros(256)
    fi = np.zeros(256)
    dn = tn = r
    q = v / math.exp(-0.5 * dn * dn)
    ki[0] = np.uint64(int(dn / q * m))
    wi[0], wi[255] = q / m, dn / m
    fi[0], fi[255] = 1.0, math.exp(-0.5 * dn * dn)
    for i in range(254, 0, -1):
        dn = math.sqrt(-2.0 * math.log(v / dn + math.exp(-0.5 * dn * dn)))
        ki[i + 1] = np.uint64(int(dn / tn * m))
        tn = dn
        fi[i] = math.exp(-0.5 * dn * dn)
        wi[i] = dn / m
    return ki, wi, fi, r


_ZKI, _ZWI, _ZFI, _ZR = _ziggurat_tables()
_M52 = np.uint64((1 << 52) - 1)


@njit(cache=True)
def _zig_normal(key):
    """One N(0, 1) draw by the ziggurat (tables :func:`_ziggurat_tables`): one 64-bit draw in ~99% of the
    calls. Layer from the top 8 bits, sign from bit 55, the 52-bit abscissa from bits 3..54 (the low bits
    of xoroshiro128+ are its weakest and are not used); Marsaglia's exact tail beyond r."""
    while True:
        u = next_u64(key)
        i = np.int64(u >> np.uint64(56))
        neg = (u >> np.uint64(55)) & np.uint64(1)
        rabbit = (u >> np.uint64(3)) & _M52
        x = np.float64(rabbit) * _ZWI[i]
        if rabbit < _ZKI[i]:
            return -x if neg else x
        if i == 0:  # tail x > r
            while True:
                xx = -np.log1p(-uniform(key)) / _ZR
                yy = -np.log1p(-uniform(key))
                if yy + yy > xx * xx:
                    return -(_ZR + xx) if neg else _ZR + xx
        if (_ZFI[i - 1] - _ZFI[i]) * uniform(key) + _ZFI[i] < np.exp(-0.5 * x * x):
            return -x if neg else x


@njit(cache=True)
def _gamma_above_one(key, a):
    """One Gamma(a, 1) draw for a >= 1: Marsaglia & Tsang (2000), as :func:`scalable_bayes.rng.gamma`, with
    the ziggurat normal :func:`_zig_normal` in place of the polar one."""
    d = a - 1.0 / 3.0
    c = 1.0 / np.sqrt(9.0 * d)
    while True:
        x = _zig_normal(key)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = uniform(key)
        x2 = x * x
        if u < 1.0 - 0.0331 * x2 * x2 or np.log(u) < 0.5 * x2 + d * (1.0 - v + np.log(v)):
            return d * v


@njit(cache=True)
def _cir_poisson(key, lam):
    """One Poisson(lam) draw for the CIR transition, lam >= 0 (-1 for a negative, non-finite or over-large lam).

    The algorithms of :func:`scalable_bayes.rng.poisson` (sequential inversion below mean 10, Hoermann's PTRS
    above) with two shortcuts that leave the law exact: inversion returns 0 at once when u <= 1 - lam
    (<= e^-lam, so the inversion would return 0 too; most LDA entries have lam far below 1), and PTRS takes
    log(lam) and lgamma only when its squeeze fails.
    """
    if not (lam >= 0.0) or not (lam <= 1.152921504606847e18):
        return np.int64(-1)
    if lam == 0.0:
        return np.int64(0)
    if lam < 10.0:
        u = uniform(key)
        if u <= 1.0 - lam:
            return np.int64(0)
        p = np.exp(-lam)
        k = 0
        while u > p:
            u -= p
            k += 1
            p *= lam / k
            if p <= 0.0:  # round-off tail: restart is exact (rejects a set of measure ~1e-300)
                u = uniform(key)
                p = np.exp(-lam)
                k = 0
        return np.int64(k)
    slam = np.sqrt(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    vr = 0.9277 - 3.6224 / (b - 2.0)
    while True:
        u = uniform(key) - 0.5
        v = uniform(key)
        us = 0.5 - abs(u)
        k = np.floor((2.0 * a / us + b) * u + lam + 0.43)
        if us >= 0.07 and v <= vr:
            return np.int64(k)
        if k < 0.0 or (us < 0.013 and v > us):
            continue
        inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
        if np.log(v) + np.log(inv_alpha) - np.log(a / (us * us) + b) <= -lam + k * np.log(lam) - math.lgamma(k + 1.0):
            return np.int64(k)


@njit(cache=True)
def _gamma_below_one(key, a):
    """One Gamma(a, 1) draw for 0 < a < 1: Ahrens & Dieter's (1974) GS rejection (proposal a x^(a-1) on
    [0, 1] and e^(1-x) on (1, inf), acceptance >= 0.72, tending to 1 as a -> 0), with the squeeze
    e^-x >= 1 - x. Uniforms, one log and one exp per try; x = exp(log(p) / a) is exact down to the
    smallest positive double (smaller draws round to 0.0, their correct double value), as :func:`gamma`."""
    b = 1.0 + a * 0.36787944117144233  # 1 + a / e
    while True:
        p = b * uniform(key)
        if p <= 1.0:
            y = np.log(p) / a
            # below log of half the smallest subnormal exp rounds to 0.0: skip libm's slow underflow path
            x = np.exp(y) if y > -745.2 else 0.0
            u = uniform(key)
            if u <= 1.0 - x or u <= np.exp(-x):
                return x
        else:
            v = (b - p) / a
            if not (v > 0.0):
                continue
            x = -np.log(v)
            u = uniform(key)
            if u <= np.exp((a - 1.0) * np.log(x)):
                return x


@njit(cache=True)
def cir_transition(key, theta, a, c, r):
    """One exact CIR transition from ``theta`` >= 0 with stationary law Gamma(a, 1), a > 0, over a time h
    given by ``c = 1 - e^-h`` and ``r = 1 / (e^h - 1)`` (:func:`cir_constants`).

    theta' = c * Gamma(a + P, 1), P ~ Poisson(theta * r)  (SCIR eq. 2.2 as a Poisson mixture of gammas);
    for a >= 1.5 and a Poisson mean theta r >= 1/4 the equivalent theta' = c Gamma(a - 1/2) + (c/2)(Z +
    sqrt(2 theta r))^2 (the non-central chi-square with more than 1 degree of freedom as a central one plus a
    shifted squared normal; no Poisson draw). Poisson by :func:`_cir_poisson`; the gamma by Marsaglia & Tsang with a ziggurat normal
    (:func:`_gamma_above_one`) for shapes >= 1 and by :func:`_gamma_below_one` below 1 (the sparse entries:
    shape a with P = 0).
    Returns NaN when the inputs are invalid (theta < 0 or non-finite, a <= 0, a Poisson mean above
    2^60), so that the caller reports the step; never a negative number.
    """
    if not (theta >= 0.0) or not (a > 0.0) or not (a < np.inf):
        return np.nan
    lam = theta * r
    if a >= 1.5 and lam >= 0.25 and lam <= 1.152921504606847e18:
        # chi'^2(2a, 2 lam) = chi^2(2a - 1) + (Z + sqrt(2 lam))^2 (df > 1): no Poisson draw
        z = _zig_normal(key) + np.sqrt(2.0 * lam)
        return c * _gamma_above_one(key, a - 0.5) + 0.5 * c * z * z
    pk = _cir_poisson(key, lam)
    if pk < 0:
        return np.nan
    s = a + pk
    if s < 1.0:
        return c * _gamma_below_one(key, s)
    return c * _gamma_above_one(key, s)


@njit(cache=True)
def normalise_blocks(theta, block, out):
    """out[b, j] = theta[b, j] / sum_j theta[b, j] for the flat ``theta`` split into blocks of ``block``
    entries; a block whose entries are all 0 gives NaN (the caller reports it)."""
    n = theta.shape[0]
    for s in range(0, n, block):
        tot = 0.0
        for j in range(s, s + block):
            tot += theta[j]
        inv = 1.0 / tot if tot > 0.0 else np.nan
        for j in range(s, s + block):
            out[j] = theta[j] * inv


@njit(cache=True)
def dirichlet(key, alpha, out):
    """One exact Dirichlet(alpha) draw into ``out`` (SCIR Sec. 1.2: normalised Gamma(alpha_j, 1) draws),
    computed from the logs of the gammas, so shapes far below 1 keep their relative sizes."""
    d = alpha.shape[0]
    m = -np.inf
    for j in range(d):
        lg = log_gamma(key, alpha[j])
        out[j] = lg
        if lg > m:
            m = lg
    tot = 0.0
    for j in range(d):
        e = np.exp(out[j] - m)
        out[j] = e
        tot += e
    for j in range(d):
        out[j] /= tot


class GammaSimplex:
    """A product of ``n_blocks`` probability simplices of dimension ``block_size`` in the gamma
    parametrisation, with Dirichlet prior ``prior`` (a scalar or one value per entry).

    ``constants()`` is what the simplex samplers append to their kernel constants:
    ``[block_size, prior_0, ..., prior_{dim-1}]``.
    """

    name = "gamma-simplex"

    def __init__(self, n_blocks: int, block_size: int, prior):
        if int(n_blocks) != n_blocks or n_blocks < 1:
            raise ValueError(f"GammaSimplex: n_blocks must be a positive integer, got {n_blocks!r}")
        if int(block_size) != block_size or block_size < 2:
            raise ValueError(f"GammaSimplex: block_size must be an integer >= 2 (a simplex of one entry is a point), "
                             f"got {block_size!r}")
        self.n_blocks = int(n_blocks)
        self.block_size = int(block_size)
        self.dim = self.n_blocks * self.block_size
        pr = np.asarray(prior, dtype=np.float64)
        pr = np.broadcast_to(pr, (self.dim,)).copy() if pr.ndim == 0 or pr.shape == (1,) else pr.reshape(-1).copy()
        if pr.shape != (self.dim,):
            raise ValueError(f"GammaSimplex: prior has {pr.size} entries; give a scalar or {self.dim} (n_blocks * "
                             f"block_size) values")
        if not (np.all(np.isfinite(pr)) and np.all(pr > 0)):
            raise ValueError("GammaSimplex: the Dirichlet prior must be positive and finite in every entry "
                             f"(smallest given: {float(np.min(pr))!r})")
        self.prior = pr

    def constants(self) -> np.ndarray:
        return np.concatenate([[float(self.block_size)], self.prior])

    def check_position(self, theta, who: str = "sampler") -> None:
        """A ValueError unless ``theta`` is a valid gamma-parametrised point: finite, >= 0, no block all zero."""
        x = np.asarray(theta, dtype=np.float64).reshape(-1)
        if x.shape[0] != self.dim:
            raise ValueError(f"{who}: position has length {x.shape[0]}, the simplex product has {self.dim} entries")
        if not np.all(np.isfinite(x)) or np.any(x < 0):
            raise ValueError(f"{who}: gamma-parametrised simplex points must be finite and >= 0 (theta_j ~ Gamma); "
                             f"start from e.g. theta = 1 everywhere")
        if np.any(x.reshape(self.n_blocks, self.block_size).sum(axis=1) <= 0):
            raise ValueError(f"{who}: a block of theta is all zero; omega = theta / sum(theta) is undefined there")

    def to_simplex(self, theta) -> np.ndarray:
        """omega (n_blocks, block_size): each block of ``theta`` normalised to sum 1."""
        x = np.ascontiguousarray(theta, dtype=np.float64).reshape(-1)
        out = np.empty_like(x)
        normalise_blocks(x, self.block_size, out)
        return out.reshape(self.n_blocks, self.block_size)

    def __repr__(self) -> str:
        return f"GammaSimplex(n_blocks={self.n_blocks}, block_size={self.block_size})"


class Euclidean:
    """R^n: the manifold of every model that declares none. Adds no constants to a sampler's kernel."""

    name = "euclidean"

    def constants(self) -> np.ndarray:
        return np.zeros(0)

    def check_position(self, theta, who: str = "sampler") -> None:
        return None

    def __repr__(self) -> str:
        return "Euclidean()"


EUCLIDEAN = Euclidean()
