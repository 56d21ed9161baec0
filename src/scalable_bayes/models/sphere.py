"""Targets on products of unit spheres for the geodesic samplers (:mod:`scalable_bayes.samplers.geodesic`).

Every model declares :class:`~scalable_bayes.manifolds.Sphere` and carries Numba kernels:

* ``grad_kernel(x, data, batch_idx, key, out)`` -- the gradient of the stochastic potential U~_H in the
  embedded coordinates (the samplers project it onto the tangent space);
* ``potential_kernel(x, data, batch_idx) -> float`` -- U~_H itself up to a constant (for GMC's
  Metropolis-Hastings test);
* ``datum_grad_kernel(x, data, i, out) -> N`` (models with data) -- grad_x log p(x_i | x) of datum i,
  returning the data-set size N (for the empirical Fisher noise estimate of SGGMC eq. 8).

Densities are with respect to the Hausdorff (surface) measure, as in SGGMC Sec. 3.1.

* :func:`vmf`, :func:`vmf_product` -- von Mises-Fisher vMF(x | mu, kappa) on S^{d-1} (SGGMC Sec. 4), or a
  product of independent vMFs on a product of spheres, with optional injected N(0, V I) gradient noise.
* :func:`toy_circle` -- the S^1 toy of SGGMC Sec. 5.1 (Fig. 3): U(x) = -log(exp(5 mu1'x) + 2 exp(5 mu2'x)).
* :func:`vmf_mixture` -- the posterior of SGGMC Sec. 5.2 (Fig. 4) on S^1 x S^1 (any S^{d-1} here).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..manifolds.sphere import Sphere
from ..rng import normal_pair, rng_from_seed
from .base import Model

__all__ = ["SphereModel", "vmf", "vmf_product", "toy_circle", "toy_circle_density", "vmf_mixture",
           "vmf_mixture_data", "vmf_mixture_log_posterior"]


class SphereModel(Model):
    """A :class:`Model` on a :class:`Sphere` with the extra kernels of the geodesic samplers:
    ``potential_kernel`` (U~_H, for GMC) and, for models with data, ``datum_grad_kernel`` (for the
    Fisher noise estimate). ``exact_gradient`` is False when the gradient carries injected noise.

    Parameters
    ----------
    name : str
        Label used in messages and tables.
    sphere : Sphere
        The product of spheres the positions live on; the model's ``dim`` is ``sphere.dim``.
    grad_kernel : callable
        Numba kernel ``grad_kernel(x, data, batch_idx, key, out)`` writing the gradient of U~_H in the
        embedded coordinates into ``out``.
    data : tuple of ndarray
        The data tuple passed to the kernels.
    potential_kernel : callable
        Numba kernel ``potential_kernel(x, data, batch_idx) -> float``, U~_H up to a constant.
    datum_grad_kernel : callable, optional
        Numba kernel ``datum_grad_kernel(x, data, i, out) -> N`` writing grad_x log p(x_i | x) of datum i
        into ``out`` and returning the data-set size N (for the Fisher noise estimate of SGGMC eq. 8).
    n_data : int, default 0
        N, the number of data items minibatches are drawn from.
    exact_gradient : bool, default True
        False when the gradient carries injected noise.
    """

    def __init__(self, name, sphere: Sphere, grad_kernel, data, potential_kernel, datum_grad_kernel=None,
                 n_data: int = 0, exact_gradient: bool = True):
        super().__init__(name, sphere.dim, n_data, grad_kernel, data, manifold=sphere)
        self.potential_kernel = potential_kernel
        self.datum_grad_kernel = datum_grad_kernel
        self.exact_gradient = bool(exact_gradient)

    def potential(self, x, batch_idx=None) -> float:
        """U~_H at ``x`` on the minibatch ``batch_idx`` (default: all data)."""
        idx = np.arange(self.n_data, dtype=np.int64) if batch_idx is None else np.ascontiguousarray(batch_idx, np.int64)
        return float(self.potential_kernel(np.ascontiguousarray(x, dtype=np.float64), self.data, idx))


@njit(cache=True)
def _add_noise(out, sd, key):
    n = out.shape[0]
    i = 0
    while i < n:
        a, b = normal_pair(key)
        out[i] += sd * a
        if i + 1 < n:
            out[i + 1] += sd * b
        i += 2


# ------------------------------------------------------------------ vMF and products of vMFs
@njit(cache=True)
def _vmf_grad(x, data, idx, key, out):
    coef = data[0]
    sd = data[1][0]
    for j in range(x.shape[0]):
        out[j] = -coef[j]
    if sd > 0.0:
        _add_noise(out, sd, key)


@njit(cache=True)
def _vmf_potential(x, data, idx):
    coef = data[0]
    u = 0.0
    for j in range(x.shape[0]):
        u -= coef[j] * x[j]
    return u


def vmf_product(mus, kappas, noise_var: float = 0.0) -> SphereModel:
    """Independent vMF(x_b | mu_b, kappa_b) on each block of a product of spheres: U_H = -sum_b kappa_b mu_b'x_b,
    grad U_H = -kappa_b mu_b, plus optional injected N(0, noise_var I) gradient noise (in R^n).

    Parameters
    ----------
    mus : array_like of float, shape (K, d)
        Mean directions, finite and non-zero (normalised here), d >= 2; a (d,) vector is one block.
    kappas : float or array_like of float, shape (K,)
        Concentrations >= 0 and finite: one per block, or one for all.
    noise_var : float, default 0.0
        Variance V >= 0 of the injected N(0, V I) gradient noise (0: exact gradient).

    Returns
    -------
    SphereModel
        The model on ``Sphere(K, d)`` (named ``"vmf"`` for K = 1), without data; ``exact_gradient`` is
        True only when ``noise_var`` is 0.
    """
    mus = np.atleast_2d(np.asarray(mus, dtype=np.float64))
    K, d = mus.shape
    if d < 2:
        raise ValueError(f"vmf: mean directions need at least 2 coordinates (S^{{d-1}}, d >= 2), got d={d}")
    nrm = np.linalg.norm(mus, axis=1)
    if not (np.all(np.isfinite(mus)) and np.all(nrm > 0)):
        raise ValueError("vmf: every mean direction mu must be finite and non-zero (it is normalised to unit length)")
    kap = np.broadcast_to(np.asarray(kappas, dtype=np.float64).reshape(-1), (K,)).copy() \
        if np.size(kappas) in (1, K) else None
    if kap is None:
        raise ValueError(f"vmf: give one concentration or {K} (one per block), got {np.size(kappas)}")
    if not (np.all(np.isfinite(kap)) and np.all(kap >= 0)):
        raise ValueError(f"vmf: concentrations kappa must be finite and >= 0, got {kap.tolist()}")
    V = float(noise_var)
    if not (math.isfinite(V) and V >= 0):
        raise ValueError(f"vmf: noise_var (variance of the injected gradient noise) must be finite and >= 0, got {noise_var!r}")
    coef = np.ascontiguousarray((mus / nrm[:, None] * kap[:, None]).reshape(-1))
    name = "vmf" if K == 1 else f"vmf_product{K}"
    return SphereModel(name, Sphere(K, d), _vmf_grad, (coef, np.array([math.sqrt(V)])), _vmf_potential,
                       exact_gradient=V == 0)


def vmf(mu, kappa: float, noise_var: float = 0.0) -> SphereModel:
    """vMF(x | mu, kappa) on S^{d-1} (SGGMC Sec. 4; E[mu'x] = A_d(kappa), see
    :func:`scalable_bayes.special.bessel_ratio`), gradient -kappa mu plus optional N(0, noise_var I) noise.

    Parameters
    ----------
    mu : array_like of float, shape (d,)
        Mean direction, finite and non-zero (normalised here), d >= 2.
    kappa : float
        Concentration, one number >= 0.
    noise_var : float, default 0.0
        Variance of the injected gradient noise (0: exact gradient).

    Returns
    -------
    SphereModel
        The model on ``Sphere(1, d)`` (:func:`vmf_product` with one block).
    """
    if np.ndim(kappa) != 0:
        raise ValueError("vmf: kappa is one concentration; use vmf_product for several blocks")
    return vmf_product(np.asarray(mu, dtype=np.float64).reshape(1, -1), [kappa], noise_var)


# ------------------------------------------------------------------ S^1 toy of SGGMC Fig. 3
@njit(cache=True)
def _toy_terms(x, data):
    m1, m2, par = data[0], data[1], data[2]
    a1 = par[0] * (m1[0] * x[0] + m1[1] * x[1]) + par[1]
    a2 = par[0] * (m2[0] * x[0] + m2[1] * x[1]) + par[2]
    mx = max(a1, a2)
    e1 = np.exp(a1 - mx)
    e2 = np.exp(a2 - mx)
    return mx + np.log(e1 + e2), e1 / (e1 + e2), e2 / (e1 + e2)


@njit(cache=True)
def _toy_grad(x, data, idx, key, out):
    m1, m2, par = data[0], data[1], data[2]
    _, w1, w2 = _toy_terms(x, data)
    out[0] = -par[0] * (w1 * m1[0] + w2 * m2[0])
    out[1] = -par[0] * (w1 * m1[1] + w2 * m2[1])
    if par[3] > 0.0:
        _add_noise(out, par[3], key)


@njit(cache=True)
def _toy_potential(x, data, idx):
    lse, _, _ = _toy_terms(x, data)
    return -lse


def toy_circle(angle1: float = math.pi / 3, angle2: float = -math.pi / 3, concentration: float = 5.0,
               weights=(1.0, 2.0), noise_var: float = 1000.0) -> SphereModel:
    """The S^1 toy of SGGMC Sec. 5.1 (Fig. 3): U(x) = -log(w1 exp(c mu1'x) + w2 exp(c mu2'x)), c = 5, weights
    (1, 2), mu1 and mu2 at the angles +pi/3 and -pi/3 (our reading of the paper's "mu1 = -mu2 = pi/3" as
    angles), gradient corrupted by N(0, noise_var I), noise_var = 1000 in the paper (its V(x)).

    Parameters
    ----------
    angle1 : float, default pi/3
        Angle of mu1 on the circle, in radians.
    angle2 : float, default -pi/3
        Angle of mu2, in radians.
    concentration : float, default 5.0
        c, positive and finite.
    weights : tuple of float, default (1.0, 2.0)
        (w1, w2), two positive numbers (need not sum to 1).
    noise_var : float, default 1000.0
        Variance of the injected gradient noise, >= 0 (0: exact gradient).

    Returns
    -------
    SphereModel
        The model on ``Sphere(1, 2)``, position x = (cos t, sin t); no data (``n_data = 0``).
    """
    c = _positive_finite(concentration, "concentration")
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (2,) or not (np.all(np.isfinite(w)) and np.all(w > 0)):
        raise ValueError(f"toy_circle: weights must be two positive numbers, got {weights!r}")
    V = float(noise_var)
    if not (math.isfinite(V) and V >= 0):
        raise ValueError(f"toy_circle: noise_var must be finite and >= 0, got {noise_var!r}")
    m1 = np.array([math.cos(angle1), math.sin(angle1)])
    m2 = np.array([math.cos(angle2), math.sin(angle2)])
    par = np.array([c, math.log(w[0]), math.log(w[1]), math.sqrt(V)])
    return SphereModel("toy_circle", Sphere(1, 2), _toy_grad, (m1, m2, par), _toy_potential, exact_gradient=V == 0)


def toy_circle_density(theta, angle1: float = math.pi / 3, angle2: float = -math.pi / 3,
                       concentration: float = 5.0, weights=(1.0, 2.0)) -> np.ndarray:
    """The normalised density of :func:`toy_circle` at angles ``theta`` w.r.t. arc length (closed form:
    a mixture of von Mises densities, each normalised by 2 pi I_0(c)).

    Parameters
    ----------
    theta : array_like of float
        Angles in radians, any shape.
    angle1 : float, default pi/3
        Angle of mu1, in radians.
    angle2 : float, default -pi/3
        Angle of mu2, in radians.
    concentration : float, default 5.0
        c.
    weights : tuple of float, default (1.0, 2.0)
        (w1, w2), normalised here to sum 1.

    Returns
    -------
    ndarray
        The density (per radian), shaped like ``theta``; it integrates to 1 over [0, 2 pi).
    """
    from scipy.special import i0e

    th = np.asarray(theta, dtype=np.float64)
    c = float(concentration)
    w = np.asarray(weights, dtype=np.float64)
    w = w / w.sum()
    z = 2.0 * np.pi * i0e(c)  # exp(c cos) / (2 pi I0(c)) = exp(c (cos - 1)) / (2 pi i0e(c))
    return (w[0] * np.exp(c * (np.cos(th - angle1) - 1.0)) + w[1] * np.exp(c * (np.cos(th - angle2) - 1.0))) / z


def _positive_finite(v, what):
    v = float(v)
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"toy_circle: {what} must be positive and finite, got {v!r}")
    return v


# ------------------------------------------------------------------ two-vMF mixture posterior of SGGMC Fig. 4
@njit(cache=True)
def _mix_setup(x, d):
    r2 = 0.0
    for j in range(d):
        w = x[j] + x[d + j]
        r2 += w * w
    return np.sqrt(r2)


@njit(cache=True)
def _mix_datum(x, X, i, d, kx, r):
    """(log of the likelihood kernel exp(kx v1'x_i) + exp(kx mu'x_i), weight a1 of the v1 term, mu'x_i)."""
    s1 = 0.0
    s2 = 0.0
    for j in range(d):
        s1 += x[j] * X[i, j]
        s2 += (x[j] + x[d + j]) * X[i, j]
    s2 /= r
    t1 = kx * s1
    t2 = kx * s2
    mx = max(t1, t2)
    e1 = np.exp(t1 - mx)
    e2 = np.exp(t2 - mx)
    return mx + np.log(e1 + e2), e1 / (e1 + e2), s2


@njit(cache=True)
def _mix_datum_grad_into(x, X, i, d, kx, r, scale, out):
    """out += scale * grad_x log p(x_i | v1, v2)."""
    _, a1, mux = _mix_datum(x, X, i, d, kx, r)
    a2 = 1.0 - a1
    for j in range(d):
        mu_j = (x[j] + x[d + j]) / r
        t = kx * a2 * (X[i, j] - mu_j * mux) / r
        out[j] += scale * (kx * a1 * X[i, j] + t)
        out[d + j] += scale * t


@njit(cache=True)
def _mix_grad(x, data, idx, key, out):
    X, e1, e2, par = data[0], data[1], data[2], data[3]
    N = X.shape[0]
    d = X.shape[1]
    r = _mix_setup(x, d)
    for j in range(2 * d):
        out[j] = 0.0
    b = idx.shape[0]
    sc = -N / b
    for k in range(b):
        _mix_datum_grad_into(x, X, idx[k], d, par[2], r, sc, out)
    for j in range(d):
        out[j] -= par[0] * e1[j]
        out[d + j] -= par[1] * e2[j]


@njit(cache=True)
def _mix_datum_grad(x, data, i, out):
    X, par = data[0], data[3]
    d = X.shape[1]
    r = _mix_setup(x, d)
    for j in range(2 * d):
        out[j] = 0.0
    _mix_datum_grad_into(x, X, i, d, par[2], r, 1.0, out)
    return float(X.shape[0])


@njit(cache=True)
def _mix_potential(x, data, idx):
    X, e1, e2, par = data[0], data[1], data[2], data[3]
    N = X.shape[0]
    d = X.shape[1]
    r = _mix_setup(x, d)
    b = idx.shape[0]
    s = 0.0
    for k in range(b):
        ll, _, _ = _mix_datum(x, X, idx[k], d, par[2], r)
        s += ll
    u = -(N / b) * s
    for j in range(d):
        u -= par[0] * e1[j] * x[j] + par[1] * e2[j] * x[d + j]
    return u


def vmf_mixture(data, kappa1: float = 20.0, kappa2: float = 20.0, kappa_x: float = 20.0, e1=(1.0, 0.0),
                e2=None) -> SphereModel:
    """Posterior of (v1, v2) on S^{d-1} x S^{d-1} in SGGMC Sec. 5.2 (Fig. 4): prior vMF(v1 | e1, kappa1)
    vMF(v2 | e2, kappa2), likelihood p(x_i | v1, v2) = 1/2 vMF(x_i | v1, kappa_x) + 1/2 vMF(x_i | mu, kappa_x),
    mu = (v1 + v2) / |v1 + v2|. The likelihood with mu is *reconstructed* from the paper's App. D (the
    main-text formula lost mu); e2 defaults to e1 (App. D says the two posterior modes are symmetric about
    e1 and equally preferred by the prior, which needs both priors centred at e1). Position (v1, v2);
    minibatch gradients -(N/|S|) sum_S grad log p(x_i | v) - grad log prior; per-datum gradients for
    the Fisher noise estimate.

    Parameters
    ----------
    data : array_like of float, shape (N, d)
        The observations x_i, unit vectors (within 1e-8), N >= 1, d >= 2.
    kappa1 : float, default 20.0
        Concentration of the prior of v1, >= 0.
    kappa2 : float, default 20.0
        Concentration of the prior of v2, >= 0.
    kappa_x : float, default 20.0
        Concentration of both likelihood components, >= 0.
    e1 : array_like of float, shape (d,), default (1.0, 0.0)
        Mean direction of the prior of v1, a unit vector.
    e2 : array_like of float, shape (d,), optional
        Mean direction of the prior of v2, a unit vector; default ``e1``.

    Returns
    -------
    SphereModel
        The model on ``Sphere(2, d)``, position (v1, v2) concatenated (length 2 d), ``n_data = N``, with
        a per-datum gradient kernel.
    """
    X = np.ascontiguousarray(np.atleast_2d(np.asarray(data, dtype=np.float64)))
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 2:
        raise ValueError(f"vmf_mixture: data must be (N, d) unit vectors with N >= 1, d >= 2, got shape {X.shape}")
    nrm = np.linalg.norm(X, axis=1)
    if not np.all(np.abs(nrm - 1.0) < 1e-8):
        raise ValueError(f"vmf_mixture: data row {int(np.argmax(np.abs(nrm - 1)))} is not a unit vector; normalise the data")
    d = X.shape[1]
    e1 = np.asarray(e1, dtype=np.float64).reshape(-1)
    e2 = e1.copy() if e2 is None else np.asarray(e2, dtype=np.float64).reshape(-1)
    for nm, e in (("e1", e1), ("e2", e2)):
        if e.shape != (d,) or not abs(np.linalg.norm(e) - 1.0) < 1e-8:
            raise ValueError(f"vmf_mixture: {nm} must be a unit vector of length {d}, got {e.tolist()}")
    par = np.array([float(kappa1), float(kappa2), float(kappa_x)])
    if not (np.all(np.isfinite(par)) and np.all(par >= 0)):
        raise ValueError(f"vmf_mixture: concentrations must be finite and >= 0, got {par.tolist()}")
    return SphereModel("vmf_mixture", Sphere(2, d), _mix_grad, (X, e1.copy(), e2.copy(), par), _mix_potential,
                       _mix_datum_grad, n_data=X.shape[0])


def vmf_mixture_data(n: int, v1_angle: float = -math.pi / 24, v2_angle: float = math.pi / 8,
                     kappa_x: float = 20.0, seed=0) -> np.ndarray:
    """``n`` points on S^1 drawn exactly from the likelihood of :func:`vmf_mixture` at v1, v2 given as angles
    (SGGMC Sec. 5.2: v1 = -pi/24, v2 = pi/8, kappa_x = 20; the paper generated them "by GMC", we draw
    exactly with von Mises variates).

    Each point is drawn from vMF(v1, kappa_x) or vMF(mu, kappa_x), mu = (v1 + v2) / |v1 + v2|, with
    probability 1/2 each.

    Parameters
    ----------
    n : int
        Number of points.
    v1_angle : float, default -pi/24
        Angle of v1, in radians.
    v2_angle : float, default pi/8
        Angle of v2, in radians.
    kappa_x : float, default 20.0
        Concentration of the likelihood components.
    seed : int, numpy.random.SeedSequence or numpy.random.Generator, default 0
        Random source, through :func:`scalable_bayes.rng.rng_from_seed`.

    Returns
    -------
    ndarray of float64, shape (n, 2)
        The points (cos, sin) on S^1.
    """
    g = rng_from_seed(seed)
    v1 = np.array([math.cos(v1_angle), math.sin(v1_angle)])
    v2 = np.array([math.cos(v2_angle), math.sin(v2_angle)])
    mu = (v1 + v2) / np.linalg.norm(v1 + v2)
    centre = np.where(g.random(int(n)) < 0.5, v1_angle, math.atan2(mu[1], mu[0]))
    ang = g.vonmises(centre, float(kappa_x))
    return np.column_stack([np.cos(ang), np.sin(ang)])


def vmf_mixture_log_posterior(t1, t2, data, kappa1: float = 20.0, kappa2: float = 20.0, kappa_x: float = 20.0,
                              e1_angle: float = 0.0, e2_angle: float | None = None) -> np.ndarray:
    """Unnormalised log posterior of :func:`vmf_mixture` on S^1 x S^1 at angles (t1, t2) (broadcast), full
    data (vectorised NumPy; for the "true" densities on a grid).

    The sum over the data of log(exp(kappa_x cos(a_i - t1)) + exp(kappa_x cos(a_i - m))), a_i the angle of
    x_i and m that of v1 + v2, plus kappa1 cos(t1 - e1_angle) + kappa2 cos(t2 - e2_angle): the log
    posterior up to an additive constant.

    Parameters
    ----------
    t1 : array_like of float
        Angles of v1, in radians.
    t2 : array_like of float
        Angles of v2, in radians; broadcast against ``t1``.
    data : array_like of float, shape (N, 2)
        The observations, points on S^1.
    kappa1 : float, default 20.0
        Concentration of the prior of v1.
    kappa2 : float, default 20.0
        Concentration of the prior of v2.
    kappa_x : float, default 20.0
        Concentration of the likelihood components.
    e1_angle : float, default 0.0
        Angle of the prior mean of v1, in radians.
    e2_angle : float, optional
        Angle of the prior mean of v2, in radians; default ``e1_angle``.

    Returns
    -------
    ndarray
        The unnormalised log posterior, of the broadcast shape of ``t1`` and ``t2``.
    """
    X = np.asarray(data, dtype=np.float64)
    t1, t2 = np.broadcast_arrays(np.asarray(t1, dtype=np.float64), np.asarray(t2, dtype=np.float64))
    e2_angle = e1_angle if e2_angle is None else e2_angle
    ang = np.arctan2(X[:, 1], X[:, 0])
    mu = np.arctan2(np.sin(t1) + np.sin(t2), np.cos(t1) + np.cos(t2))
    a = kappa_x * np.cos(ang[None, :] - t1.reshape(-1, 1))
    b = kappa_x * np.cos(ang[None, :] - mu.reshape(-1, 1))
    ll = np.logaddexp(a, b).sum(axis=1).reshape(t1.shape)
    return ll + kappa1 * np.cos(t1 - e1_angle) + kappa2 * np.cos(t2 - e2_angle)
