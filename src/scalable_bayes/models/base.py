"""What a sampler needs from a target: the stochastic gradient of the potential U~.

U~(theta) = -(N/n) sum_{i in S} log p(x_i | theta) - log p(theta),  |S| = n   (SGNHT eq. 2).

A :class:`Model` carries either a Numba gradient kernel (compiled chains) with signature
``grad(x, data, batch_idx, key, out) -> None`` (``data`` a tuple of arrays, ``batch_idx`` int64
indices of the minibatch, ``key`` the xoroshiro state for models that inject noise), or a
vectorised NumPy gradient ``grad_py(x, batch_idx, key) -> ndarray`` for large models
(BNN, BPMF, LDA), which the driver runs in a Python loop around the same step kernels.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..manifolds import EUCLIDEAN


class Model:
    """A target for SG-MCMC.

    Parameters
    ----------
    name : label used in messages and tables.
    dim : number of parameters n.
    n_data : N, the number of data items minibatches are drawn from (0: no data, e.g. a
        potential with injected gradient noise).
    grad_kernel, data : Numba gradient kernel and its data tuple (compiled path), or None.
    grad_py : NumPy gradient ``grad_py(x, batch_idx, key)`` (Python path), or None.
    reflect : optional int8 (dim,) mask; coordinates marked 1 are mirrored at 0 after each step
        (x <- |x|, p <- -p), i.e. a reflecting boundary for positive parameters.
    manifold : where the parameters live (:mod:`scalable_bayes.manifolds`); default R^n. A model on
        :class:`~scalable_bayes.manifolds.GammaSimplex` returns, in place of a gradient, the minibatch
        estimate of the Dirichlet posterior's counts n^_j = (N/n) sum_{i in S} z_ij (SCIR Alg. 1); the
        simplex samplers add the prior from the manifold.
    """

    def __init__(self, name: str, dim: int, n_data: int = 0, grad_kernel: Callable | None = None,
                 data: tuple = (), grad_py: Callable | None = None, reflect=None, manifold=None):
        if grad_kernel is None and grad_py is None:
            raise ValueError(f"model {name!r}: give grad_kernel (Numba) or grad_py (NumPy)")
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

    def __repr__(self) -> str:
        return f"Model({self.name!r}, dim={self.dim}, n_data={self.n_data})"
