"""Products of unit spheres: the manifold of the geodesic samplers.

Liu, Zhu & Song (2016), *Stochastic Gradient Geodesic MCMC Methods* (SGGMC paper), Sec. 3: on the
sphere S^{n-1} embedded in R^n the geodesic flow of a position x (unit vector) and a velocity v
(tangent, x'v = 0) over a time t has the closed form (SGGMC eq. 7; Byrne & Girolami 2013, Sec. 3.2)

    x(t) = x cos(a t) + (v / a) sin(a t),     v(t) = -a x sin(a t) + v cos(a t),     a = |v|,

and the orthogonal projection onto the tangent space at x is v - (x'v) x (SGGMC Sec. 3, Lambda(x) =
I - x x'). A parameter made of several unit vectors (the K topics of a spherical admixture model, the
two means of the SGGMC Fig. 4 mixture) is a *product* of spheres: ``x`` is one flat float64 array of
``n_blocks * block`` entries, block b holding the entries ``b * block .. (b + 1) * block - 1``, each
block a unit vector of R^block; the velocity ``v`` has the same layout, each block tangent to its
position block.

Kernels (Numba, ``cache=True``, allocation-free, in place):

* :func:`geodesic_flow` -- every block moves along its great circle for time t; afterwards each x_b is
  renormalised and v_b re-projected, so rounding never accumulates (after 10^6 flow steps the norms
  stay within 1e-12 of 1 and x_b'v_b within 1e-12 of 0; ``tests/test_geodesic_samplers.py``).
* :func:`project_tangent` -- v_b <- v_b - (x_b'v_b) x_b per block.

:class:`Sphere` is what a model declares as its manifold (``Model(manifold=Sphere(K, n))``); binding a
geodesic sampler (:mod:`scalable_bayes.samplers.geodesic`) to such a model appends ``[block_size]`` to the
sampler's kernel constants.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..rng import as_key, fill_normal

__all__ = ["Sphere", "geodesic_flow", "project_tangent", "normalise_sphere_blocks"]

UNIT_TOL = 1e-8  # tolerance of check_position on |x_b| - 1


@njit(cache=True)
def geodesic_flow(x, v, t, block):
    """Move each block (x_b unit, v_b tangent) along its great circle for time ``t``, in place
    (SGGMC eq. 7): x' = x cos(a t) + (v/a) sin(a t), v' = -a x sin(a t) + v cos(a t), a = |v_b|.

    A block with a = 0 does not move. Afterwards x_b is renormalised to unit length and v_b
    re-projected onto the tangent space at the new x_b (removes rounding drift; the exact flow keeps
    both). A non-finite velocity or position makes the block's position NaN, so the caller reports
    the step instead of moving on. A Numba kernel; returns nothing.

    Parameters
    ----------
    x : ndarray of float64, shape (n_blocks * block,)
        Positions, each block a unit vector; overwritten with the new positions.
    v : ndarray of float64, shape (n_blocks * block,)
        Velocities, each block tangent to its position block; overwritten with the new velocities.
    t : float
        Flow time (the step size of the geodesic samplers' flow sub-step).
    block : int
        Block size: the dimension of the ambient space R^block of each sphere.
    """
    n = x.shape[0]
    s = 0
    while s + 4 * block <= n:  # four blocks at a time: their sums run side by side (each in its own order)
        _flow_four(x, v, t, s, block)
        s += 4 * block
    while s < n:
        _flow_one(x, v, t, s, s + block)
        s += block


@njit(cache=True)
def _move(x, v, t, s, e, a):
    """The great-circle move of block [s, e) with speed a > 0 (finite)."""
    at = a * t
    c = np.cos(at)
    sn = np.sin(at)
    soa = sn / a
    asn = a * sn
    xs = x[s:e]  # views indexed from 0: vector code (indexed from s this loop stayed scalar, 3x slower)
    vs = v[s:e]
    for j in range(e - s):
        xj = xs[j]
        vj = vs[j]
        xs[j] = xj * c + vj * soa
        vs[j] = vj * c - xj * asn


@njit(cache=True)
def _flow_one(x, v, t, s, e):
    """:func:`geodesic_flow` of the block [s, e): move, renormalise x, re-project v."""
    block = e - s
    xs = x[s:e]
    vs = v[s:e]
    aa = 0.0
    for j in range(block):
        aa += vs[j] * vs[j]
    if not _flow_move_one(x, v, t, s, block, aa):
        return
    nrm = 0.0
    for j in range(block):
        nrm += xs[j] * xs[j]
    if not _renorm_ok(x, s, block, nrm):
        return
    inv = 1.0 / np.sqrt(nrm)
    d = 0.0
    for j in range(block):
        xs[j] *= inv
        d += xs[j] * vs[j]
    for j in range(block):
        vs[j] -= d * xs[j]


@njit(cache=True)
def _flow_four(x, v, t, s, block):
    """:func:`_flow_one` of the four blocks from s on, the same numbers: each block's three sums (|v|^2, |x|^2
    and x'v, each over its entries in order) run side by side with the other blocks' (four independent chains
    of additions instead of one: the sums are latency-bound), the rest block by block."""
    s1 = s + block
    s2 = s1 + block
    s3 = s2 + block
    X0 = x[s:s1]  # views indexed from 0 (ARCHITECTURE.md, compiled code)
    X1 = x[s1:s2]
    X2 = x[s2:s3]
    X3 = x[s3:s3 + block]
    V0 = v[s:s1]
    V1 = v[s1:s2]
    V2 = v[s2:s3]
    V3 = v[s3:s3 + block]
    a0 = 0.0
    a1 = 0.0
    a2 = 0.0
    a3 = 0.0
    for j in range(block):
        a0 += V0[j] * V0[j]
        a1 += V1[j] * V1[j]
        a2 += V2[j] * V2[j]
        a3 += V3[j] * V3[j]
    # live[q]: block q neither had a non-finite velocity nor a position that could not be renormalised
    live0 = _flow_move_one(x, v, t, s, block, a0)
    live1 = _flow_move_one(x, v, t, s1, block, a1)
    live2 = _flow_move_one(x, v, t, s2, block, a2)
    live3 = _flow_move_one(x, v, t, s3, block, a3)
    n0 = 0.0
    n1 = 0.0
    n2 = 0.0
    n3 = 0.0
    for j in range(block):
        n0 += X0[j] * X0[j]
        n1 += X1[j] * X1[j]
        n2 += X2[j] * X2[j]
        n3 += X3[j] * X3[j]
    live0 = live0 and _renorm_ok(x, s, block, n0)
    live1 = live1 and _renorm_ok(x, s1, block, n1)
    live2 = live2 and _renorm_ok(x, s2, block, n2)
    live3 = live3 and _renorm_ok(x, s3, block, n3)
    i0 = 1.0 / np.sqrt(n0) if live0 else 1.0  # a dead block's x is NaN already: x * 1 leaves it so
    i1 = 1.0 / np.sqrt(n1) if live1 else 1.0
    i2 = 1.0 / np.sqrt(n2) if live2 else 1.0
    i3 = 1.0 / np.sqrt(n3) if live3 else 1.0
    d0 = 0.0
    d1 = 0.0
    d2 = 0.0
    d3 = 0.0
    for j in range(block):
        x0 = X0[j] * i0
        X0[j] = x0
        d0 += x0 * V0[j]
        x1 = X1[j] * i1
        X1[j] = x1
        d1 += x1 * V1[j]
        x2 = X2[j] * i2
        X2[j] = x2
        d2 += x2 * V2[j]
        x3 = X3[j] * i3
        X3[j] = x3
        d3 += x3 * V3[j]
    if live0:
        for j in range(block):
            V0[j] -= d0 * X0[j]
    if live1:
        for j in range(block):
            V1[j] -= d1 * X1[j]
    if live2:
        for j in range(block):
            V2[j] -= d2 * X2[j]
    if live3:
        for j in range(block):
            V3[j] -= d3 * X3[j]


@njit(cache=True)
def _flow_move_one(x, v, t, s, block, aa):
    """The part of :func:`_flow_one` between its first and second sums, given |v|^2 = aa; False if the block's
    velocity was not finite (its position is then NaN)."""
    a = np.sqrt(aa)
    if not (a < np.inf):
        for j in range(s, s + block):
            x[j] = np.nan
        return False
    if a > 0.0:
        _move(x, v, t, s, s + block, a)
    return True


@njit(cache=True)
def _renorm_ok(x, s, block, nrm):
    """False (and the block's position set to NaN) if |x|^2 = nrm cannot be renormalised."""
    if not (nrm > 0.0) or not (nrm < np.inf):
        for j in range(s, s + block):
            x[j] = np.nan
        return False
    return True


@njit(cache=True)
def project_tangent(x, v, block):
    """v_b <- v_b - (x_b'v_b) x_b for every block: the projection Lambda(x) = I - x x' of SGGMC Sec. 3
    (x_b unit), in place.

    A Numba kernel; returns nothing.

    Parameters
    ----------
    x : ndarray of float64, shape (n_blocks * block,)
        Positions, each block a unit vector; not modified.
    v : ndarray of float64, shape (n_blocks * block,)
        Vectors to project; overwritten with their tangent parts.
    block : int
        Block size: the dimension of the ambient space of each sphere.
    """
    n = x.shape[0]
    s = 0
    while s + 4 * block <= n:  # four blocks' dot products side by side (each summed in its own order)
        X0 = x[s:s + block]  # views indexed from 0 (ARCHITECTURE.md, compiled code)
        X1 = x[s + block:s + 2 * block]
        X2 = x[s + 2 * block:s + 3 * block]
        X3 = x[s + 3 * block:s + 4 * block]
        V0 = v[s:s + block]
        V1 = v[s + block:s + 2 * block]
        V2 = v[s + 2 * block:s + 3 * block]
        V3 = v[s + 3 * block:s + 4 * block]
        d0 = 0.0
        d1 = 0.0
        d2 = 0.0
        d3 = 0.0
        for j in range(block):
            d0 += X0[j] * V0[j]
            d1 += X1[j] * V1[j]
            d2 += X2[j] * V2[j]
            d3 += X3[j] * V3[j]
        for j in range(block):
            V0[j] -= d0 * X0[j]
            V1[j] -= d1 * X1[j]
            V2[j] -= d2 * X2[j]
            V3[j] -= d3 * X3[j]
        s += 4 * block
    while s < n:
        xs = x[s:s + block]
        vs = v[s:s + block]
        d = 0.0
        for j in range(block):
            d += xs[j] * vs[j]
        for j in range(block):
            vs[j] -= d * xs[j]
        s += block


@njit(cache=True)
def normalise_sphere_blocks(x, block):
    """x_b <- x_b / |x_b| for every block, in place (a zero block becomes NaN).

    A Numba kernel; returns nothing.

    Parameters
    ----------
    x : ndarray of float64, shape (n_blocks * block,)
        The vector to normalise block by block; overwritten.
    block : int
        Block size.
    """
    n = x.shape[0]
    for s in range(0, n, block):
        nrm = 0.0
        for j in range(s, s + block):
            nrm += x[j] * x[j]
        inv = 1.0 / np.sqrt(nrm) if nrm > 0.0 else np.nan
        for j in range(s, s + block):
            x[j] *= inv


class Sphere:
    """A product of ``n_blocks`` unit spheres S^{block_size - 1} in R^block_size.

    ``dim`` = n_blocks * block_size (ambient coordinates); ``intrinsic_dim`` = n_blocks * (block_size - 1)
    (the m of the gSGNHT thermostat, SGGMC Alg. 2). ``constants()`` is what a geodesic sampler appends
    to its kernel constants: ``[block_size]``.

    Parameters
    ----------
    n_blocks : int
        Number of spheres in the product, >= 1 (e.g. the K topics of a spherical admixture model).
    block_size : int
        Dimension n of the ambient space R^n of each sphere S^{n-1}, >= 2.
    """

    name = "sphere"

    def __init__(self, n_blocks: int, block_size: int):
        if isinstance(n_blocks, bool) or int(n_blocks) != n_blocks or n_blocks < 1:
            raise ValueError(f"Sphere: n_blocks must be a positive integer, got {n_blocks!r}")
        if isinstance(block_size, bool) or int(block_size) != block_size or block_size < 2:
            raise ValueError(f"Sphere: block_size must be an integer >= 2 (S^0 is two points, no geodesic flow), "
                             f"got {block_size!r}")
        self.n_blocks = int(n_blocks)
        self.block_size = int(block_size)
        self.dim = self.n_blocks * self.block_size
        self.intrinsic_dim = self.n_blocks * (self.block_size - 1)

    def constants(self) -> np.ndarray:
        return np.array([float(self.block_size)])

    def check_position(self, x, who: str = "sampler") -> None:
        """A ValueError unless ``x`` is finite and every block has unit norm within 1e-8."""
        x = np.asarray(x, dtype=np.float64).reshape(-1)
        if x.shape[0] != self.dim:
            raise ValueError(f"{who}: position has length {x.shape[0]}, the sphere product {self!r} has {self.dim} "
                             f"coordinates")
        if not np.all(np.isfinite(x)):
            raise ValueError(f"{who}: position on the sphere has non-finite entries")
        norms = np.sqrt(np.sum(x.reshape(self.n_blocks, self.block_size) ** 2, axis=1))
        bad = np.flatnonzero(np.abs(norms - 1.0) > UNIT_TOL)
        if bad.size:
            b = int(bad[0])
            raise ValueError(f"{who}: block {b} of the position has norm {norms[b]!r}, not 1 (tolerance {UNIT_TOL:g}); "
                             f"points on {self!r} are unit vectors per block: normalise it "
                             f"(Sphere.normalise) or start from Sphere.random_point(seed)")

    def normalise(self, x) -> np.ndarray:
        """A copy of ``x`` with every block scaled to unit norm."""
        out = np.array(x, dtype=np.float64, copy=True).reshape(-1)
        if out.shape[0] != self.dim:
            raise ValueError(f"Sphere.normalise: got {out.shape[0]} entries, expected {self.dim}")
        normalise_sphere_blocks(out, self.block_size)
        if not np.all(np.isfinite(out)):
            raise ValueError("Sphere.normalise: a block is zero or non-finite and has no direction")
        return out

    def project(self, x, v) -> np.ndarray:
        """The tangent part of ``v`` at ``x`` (a copy)."""
        out = np.array(v, dtype=np.float64, copy=True).reshape(-1)
        project_tangent(np.ascontiguousarray(x, dtype=np.float64).reshape(-1), out, self.block_size)
        return out

    def random_point(self, key_or_seed) -> np.ndarray:
        """A point drawn uniformly on the product of spheres (normalised N(0, I) per block), from a key of
        :mod:`scalable_bayes.rng` (advanced) or an int seed."""
        key = as_key(key_or_seed)
        out = np.empty(self.dim)
        while True:
            fill_normal(key, out)
            if np.all(np.sum(out.reshape(self.n_blocks, self.block_size) ** 2, axis=1) > 0):
                break
        normalise_sphere_blocks(out, self.block_size)
        return out

    def blocks(self, x) -> np.ndarray:
        """``x`` viewed as (n_blocks, block_size)."""
        return np.asarray(x, dtype=np.float64).reshape(self.n_blocks, self.block_size)

    def __repr__(self) -> str:
        return f"Sphere(n_blocks={self.n_blocks}, block_size={self.block_size})"

