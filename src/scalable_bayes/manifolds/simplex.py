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
  shape a > 0 (down to 1e-3 and below) and every h > 0, and never negative; for a > 1/2 the same law
  as a central gamma plus a shifted squared normal (no Poisson draw).
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

from ..rng import gamma, log_gamma, poisson, ziggurat_normal

__all__ = ["GammaSimplex", "cir_transition", "cir_constants", "normalise_blocks", "dirichlet"]


def cir_constants(h: float) -> tuple[float, float]:
    """(c, r) = (1 - e^-h, 1 / (e^h - 1)) of a CIR step of length h, computed without cancellation.

    Parameters
    ----------
    h : float
        The time step of the CIR process (the SCIR step size), positive and finite.

    Returns
    -------
    c : float
        1 - e^-h (the scale of the transition law, SCIR eq. 2.2).
    r : float
        1 / (e^h - 1) (theta r is the non-centrality lam of the transition).
    """
    h = float(h)
    if not (math.isfinite(h) and h > 0):
        raise ValueError(f"CIR step: the time step h must be positive and finite, got {h!r}")
    return -math.expm1(-h), 1.0 / math.expm1(h)


@njit(cache=True, inline="always")
def cir_transition(key, theta, a, c, r):
    """One exact CIR transition from ``theta`` >= 0 with stationary law Gamma(a, 1), a > 0, over a time h
    given by ``c = 1 - e^-h`` and ``r = 1 / (e^h - 1)`` (:func:`cir_constants`).

    The law is (c/2) chi'^2(2a, 2 lam) with lam = theta r (SCIR eq. 2.2). Two exact routes:

    * a > 1/2 (more than one degree of freedom): chi'^2(2a, 2 lam) = chi^2(2a - 1) + (Z + sqrt(2 lam))^2,
      so theta' = c Gamma(a - 1/2) + (c/2)(Z + sqrt(2 lam))^2: one gamma and one normal, no Poisson draw;
    * a <= 1/2 (the sparse entries): the Poisson mixture of gammas theta' = c Gamma(a + P), P ~ Poisson(lam);
      most such entries have a tiny lam, where the Poisson returns 0 after one uniform.

    Variates from :mod:`scalable_bayes.rng` (:func:`ziggurat_normal`, :func:`gamma`, :func:`poisson`), all
    inlined like this function (a call that passes the key costs more than a draw). Returns NaN when the
    inputs are invalid (theta < 0 or non-finite, a <= 0, on the Poisson route a mean above 2^60), so that
    the caller reports the step; never a negative number.

    Parameters
    ----------
    key : ndarray of uint64, shape (2,)
        A :mod:`scalable_bayes.rng` key, advanced in place.
    theta : float
        The current state, >= 0.
    a : float
        Shape of the stationary Gamma(a, 1) law, > 0 (in SCIR the Dirichlet prior plus the
        rescaled counts).
    c : float
        1 - e^-h, from :func:`cir_constants`.
    r : float
        1 / (e^h - 1), from :func:`cir_constants`.

    Returns
    -------
    float
        The new state theta' >= 0, or NaN for invalid inputs.
    """
    if not (theta >= 0.0) or not (a > 0.0) or not (a < np.inf):
        return np.nan
    lam = theta * r
    # one gamma draw site for both routes: every variate here is inlined into the caller, and each inlined
    # gamma (Marsaglia-Tsang, GS and the boost, with their ziggurats) costs tens of seconds of compilation
    if a > 0.5:
        if not (lam < np.inf):
            return np.nan
        z = ziggurat_normal(key) + np.sqrt(2.0 * lam)
        shape = a - 0.5
        noncentral = 0.5 * c * z * z
    else:
        pk = poisson(key, lam)
        if pk < 0:
            return np.nan
        shape = a + pk
        noncentral = 0.0  # c Gamma >= 0, so adding +0.0 leaves it bit for bit
    return c * gamma(key, shape) + noncentral


@njit(cache=True)
def normalise_blocks(theta, block, out):
    """out[b, j] = theta[b, j] / sum_j theta[b, j] for the flat ``theta`` split into blocks of ``block``
    entries; a block whose entries are all 0 gives NaN (the caller reports it).

    A Numba kernel; returns nothing.

    Parameters
    ----------
    theta : ndarray of float64, shape (n_blocks * block,)
        Gamma-parametrised positions, >= 0; not modified.
    block : int
        Block size (entries per simplex).
    out : ndarray of float64, shape (n_blocks * block,)
        Overwritten with the normalised blocks (may be ``theta`` itself).
    """
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
    computed from the logs of the gammas, so shapes far below 1 keep their relative sizes.

    A Numba kernel; returns nothing.

    Parameters
    ----------
    key : ndarray of uint64, shape (2,)
        A :mod:`scalable_bayes.rng` key, advanced in place.
    alpha : ndarray of float64, shape (d,)
        Dirichlet parameters, > 0.
    out : ndarray of float64, shape (d,)
        Overwritten with the draw (entries >= 0 summing to 1).
    """
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

    Parameters
    ----------
    n_blocks : int
        Number of simplices in the product, >= 1 (e.g. the K topics of LDA).
    block_size : int
        Entries per simplex, >= 2 (e.g. the vocabulary size).
    prior : float or array_like of float, shape (n_blocks * block_size,)
        Dirichlet prior, positive and finite: one value for every entry or one per entry.
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

    def sample_points(self, theta) -> np.ndarray:
        """The simplex points of gamma-parametrised positions: ``theta`` (n, dim), rows of independent gammas,
        -> omega (n, dim), each block of each row divided by its sum (SCIR Sec. 1.2: normalised independent
        Gamma(a_j, 1) variables are Dirichlet(a)). The run driver returns these as a chain's ``samples``.

        Computed as ``theta / theta.sum(-1)`` per block in NumPy (for one block bit for bit the
        ``th / th.sum(axis=1, keepdims=True)`` callers wrote before the driver normalised); a block summing
        to 0 gives NaN.
        """
        x = np.asarray(theta, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.dim:
            raise ValueError(f"GammaSimplex.sample_points: expected positions shaped (n, {self.dim}), got {x.shape}")
        blocks = x.reshape(x.shape[0], self.n_blocks, self.block_size)
        with np.errstate(invalid="ignore", divide="ignore"):
            tot = blocks.sum(axis=2, keepdims=True)
            return np.where(tot > 0, blocks / tot, np.nan).reshape(x.shape)

    def __repr__(self) -> str:
        return f"GammaSimplex(n_blocks={self.n_blocks}, block_size={self.block_size})"
