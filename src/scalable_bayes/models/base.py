"""What a sampler needs from a target: the stochastic gradient of the potential U~.

U~(theta) = -(N/n) sum_{i in S} log p(x_i | theta) - log p(theta),  |S| = n   (SGNHT eq. 2).

A :class:`Model` carries either a Numba gradient kernel (compiled chains) with signature
``grad(x, data, batch_idx, key, out) -> None`` (``data`` a tuple of arrays, ``batch_idx`` int64
indices of the minibatch, ``key`` the xoroshiro state for models that inject noise), or a
vectorised NumPy gradient ``grad_py(x, batch_idx, key) -> ndarray`` for large models
(BNN, BPMF, LDA), which the driver runs in a Python loop around the same step kernels.

A model may also carry its potential U(theta) = -log p(theta | data) + const on the full data set
(``potential``); the driver then checks the gradient against central finite differences of U before the
first step (:meth:`Model.check_gradient`), so a gradient with a flipped sign or a wrong scale fails at once
instead of sampling a wrong target.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..manifolds import EUCLIDEAN
from ..rng import make_key

GRADIENT_CHECK_STREAM = 0x6763  # key of the (unused) noise stream the gradient check passes to a gradient


class Model:
    """A target for SG-MCMC.

    Parameters
    ----------
    name : str
        Label used in messages and tables.
    dim : int
        Number of parameters n, >= 1 (the length of a position vector).
    n_data : int, default 0
        N, the number of data items minibatches are drawn from (0: no data, e.g. a
        potential with injected gradient noise).
    grad_kernel : callable or None, default None
        Numba gradient kernel ``grad(x, data, batch_idx, key, out) -> None`` writing grad U~ into
        ``out`` (compiled path). One of ``grad_kernel`` and ``grad_py`` is required.
    data : tuple of ndarray, default ()
        The data tuple passed to ``grad_kernel``.
    grad_py : callable or None, default None
        NumPy gradient ``grad_py(x, batch_idx, key) -> ndarray`` of shape (dim,) (Python path).
    reflect : array_like of int8, shape (dim,), optional
        Mask; coordinates marked 1 are mirrored at 0 after each step
        (x <- |x|, p <- -p), i.e. a reflecting boundary for positive parameters.
    manifold : Euclidean, Sphere or GammaSimplex, optional
        Where the parameters live (:mod:`scalable_bayes.manifolds`); default R^n. Its ``dim`` must equal
        ``dim``. A model on
        :class:`~scalable_bayes.manifolds.GammaSimplex` returns, in place of a gradient, the minibatch
        estimate of the Dirichlet posterior's counts n^_j = (N/n) sum_{i in S} z_ij (SCIR Alg. 1); the
        simplex samplers add the prior from the manifold.
    potential : callable, optional
        ``potential(x) -> float``, U(x) = -log p(x | all data) + const (SGNHT eq. 2 with
        the full data set, n = N), the function whose gradient ``grad_kernel`` / ``grad_py`` return on a full
        batch. Only used to check the gradient before sampling (:meth:`check_gradient`); a model without it
        is not checked.
    exact_gradient : bool, default True
        False when the gradient carries injected noise even on the full batch (then it cannot
        be compared with finite differences and is not checked).
    thread_safe : bool, default False
        True when the gradient kernel writes nothing but its output ``out`` (no scratch arrays in
        ``data``, no shared lookahead buffer): several chains may then call it at once from threads
        (:func:`scalable_bayes.samplers.run_chains`). Default False: chains run one after another.
    """

    def __init__(self, name: str, dim: int, n_data: int = 0, grad_kernel: Callable | None = None,
                 data: tuple = (), grad_py: Callable | None = None, reflect=None, manifold=None,
                 potential: Callable | None = None, exact_gradient: bool = True, thread_safe: bool = False):
        if grad_kernel is None and grad_py is None:
            raise ValueError(f"model {name!r}: give grad_kernel (Numba) or grad_py (NumPy)")
        if potential is not None and not callable(potential):
            raise TypeError(f"model {name!r}: potential must be callable potential(x) -> float (U = -log p), got "
                            f"{type(potential).__name__}")
        if grad_py is not None and not callable(grad_py):
            raise TypeError(f"model {name!r}: grad_py must be callable grad_py(x, batch_idx, key), got "
                            f"{type(grad_py).__name__}")
        if int(dim) < 1 or int(dim) != dim:
            raise ValueError(f"model {name!r}: dim must be a positive integer, got {dim!r}")
        if int(n_data) < 0 or int(n_data) != n_data:
            raise ValueError(f"model {name!r}: n_data must be a non-negative integer, got {n_data!r}")
        self.name = name
        self.dim = int(dim)
        self.n_data = int(n_data)
        self.grad_kernel = grad_kernel
        self.data = tuple(data)
        self.grad_py = grad_py
        if reflect is not None:
            reflect = np.asarray(reflect, dtype=np.int8).reshape(-1)
            if reflect.shape[0] != self.dim:
                raise ValueError(f"model {name!r}: reflect mask has length {reflect.shape[0]}, expected dim={self.dim}")
        self.reflect = reflect
        self.manifold = EUCLIDEAN if manifold is None else manifold
        self.potential_fn = potential
        self.exact_gradient = bool(exact_gradient)
        self.thread_safe = bool(thread_safe)
        if getattr(self.manifold, "dim", self.dim) != self.dim:
            raise ValueError(f"model {name!r}: its manifold {self.manifold!r} has {self.manifold.dim} coordinates, "
                             f"the model dim={self.dim}")

    @property
    def compiled(self) -> bool:
        return self.grad_kernel is not None

    def gradient(self, x, batch_idx, key) -> np.ndarray:
        """grad U~ at ``x`` for minibatch ``batch_idx`` (a new array)."""
        if self.grad_kernel is not None:
            out = np.empty(self.dim)
            self.grad_kernel(x, self.data, np.ascontiguousarray(batch_idx, dtype=np.int64), key, out)
            return out
        return self.checked_gradient(self.grad_py(x, batch_idx, key))

    def checked_gradient(self, g) -> np.ndarray:
        """``g`` as a float64 vector of length ``dim``, or a TypeError/ValueError naming what ``grad_py``
        returned. The Numba step kernels do not check bounds: a shorter gradient would make them read
        memory past its end, a longer one would be truncated silently."""
        if g is None:
            raise TypeError(f"model {self.name!r}: grad_py returned None; it must return the gradient, "
                            f"a float array of shape ({self.dim},)")
        try:
            arr = np.asarray(g, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"model {self.name!r}: grad_py returned {type(g).__name__}, not a float array of "
                            f"shape ({self.dim},): {exc}") from None
        if arr.ndim == 0:
            raise ValueError(f"model {self.name!r}: grad_py returned a scalar; it must return an array of shape "
                             f"({self.dim},) (one partial derivative per parameter)")
        if arr.shape != (self.dim,):
            raise ValueError(f"model {self.name!r}: grad_py returned shape {arr.shape}, expected ({self.dim},) "
                             f"(dim={self.dim})")
        return arr

    def potential(self, x) -> float:
        """U(x) = -log p(x | all data) + const, the ``potential`` the model was built with."""
        if self.potential_fn is None:
            raise ValueError(f"model {self.name!r} was built without a potential; pass Model(..., potential=U)")
        return float(self.potential_fn(np.asarray(x, dtype=np.float64)))

    def check_gradient(self, x, *, max_coords: int = 8, rtol: float = 1e-3, who: str = "run_chain") -> int:
        """Compare the full-batch gradient with central finite differences of the potential; a ValueError
        naming the largest discrepancy and its coordinate if they disagree.

        Checked at ``x`` and at one nearby point ``x + 0.1 max(1, |x_i|) z_i`` (z from a fixed generator, so
        that a gradient that happens to vanish at ``x``, e.g. at the mode, is still tested); on at most
        ``max_coords`` coordinates per point (all of them up to that dimension, else the half with the
        largest gradient entries and a fixed random draw of the rest). Coordinate i passes when
        |g_i - d_i| <= rtol (|g_i| + |d_i|) + the rounding error of the difference quotient, with
        d_i = (U(x + e_i eps_i) - U(x - e_i eps_i)) / (2 eps_i), eps_i = 1e-5 max(1, |x_i|). Points or
        coordinates where U is not finite are skipped. Cost: 4 ``max_coords`` potential evaluations and two
        gradients at most.

        Nothing is checked (returns 0) when the model has no potential, when its gradient carries injected
        noise (``exact_gradient=False``) or when it lives on a manifold other than R^n (on the simplex the
        gradient slot holds counts, on the sphere the samplers use only its tangent part). The gradient is
        evaluated with a key of its own stream, so a chain's random streams are untouched.

        Returns
        -------
        int
            The number of coordinates compared.
        """
        if self.potential_fn is None or not self.exact_gradient or getattr(self.manifold, "name", "") != "euclidean":
            return 0
        x0 = np.array(x, dtype=np.float64).reshape(-1)
        rng = np.random.default_rng(GRADIENT_CHECK_STREAM)
        x1 = x0 + 0.1 * np.maximum(1.0, np.abs(x0)) * rng.standard_normal(self.dim)
        if self.reflect is not None:
            x1 = np.where(self.reflect != 0, np.abs(x1), x1)
        idx = np.arange(self.n_data, dtype=np.int64)
        worst = None  # (ratio, coordinate, point, gradient, difference quotient)
        n_checked = 0
        for point in (x0, x1):
            g = self.gradient(point.copy(), idx, make_key(0, GRADIENT_CHECK_STREAM))
            if not np.all(np.isfinite(g)):
                continue  # the driver reports a non-finite gradient at the initial position itself
            if self.dim <= max_coords:
                coords = np.arange(self.dim)
            else:
                top = np.argsort(-np.abs(g), kind="stable")[: max_coords // 2]
                rest = np.setdiff1d(np.arange(self.dim), top)
                coords = np.concatenate([top, rng.choice(rest, max_coords - top.size, replace=False)])
            for i in coords:
                eps = 1e-5 * max(1.0, abs(point[i]))
                xp, xm = point.copy(), point.copy()
                xp[i] += eps
                xm[i] -= eps
                up, um = self.potential(xp), self.potential(xm)
                if not (np.isfinite(up) and np.isfinite(um)):
                    continue
                d = (up - um) / (2.0 * eps)
                tol = rtol * (abs(g[i]) + abs(d)) + 1e3 * np.finfo(float).eps * (abs(up) + abs(um)) / (2 * eps) + 1e-8
                n_checked += 1
                ratio = abs(g[i] - d) / tol
                if ratio > 1.0 and (worst is None or ratio > worst[0]):
                    worst = (ratio, int(i), point, float(g[i]), float(d))
        if worst is not None:
            _, i, point, gi, d = worst
            where = "the initial position" if point is x0 else "a point near the initial position"
            raise ValueError(
                f"{who}: the gradient of model {self.name!r} disagrees with finite differences of its potential: "
                f"at {where}, coordinate {i}: gradient {gi:.6g}, central difference of U {d:.6g} (largest "
                f"discrepancy, {abs(gi - d):.3g}). The gradient must be grad U with U = -log p (a flipped sign "
                f"samples away from the target); fix the gradient or the potential, or pass check_gradient=False "
                f"to run_chain to skip this check.")
        return n_checked

    def __repr__(self) -> str:
        return f"Model({self.name!r}, dim={self.dim}, n_data={self.n_data})"
