"""Bayesian neural network for classification (SGNHT Sec. 5.2, "BNN as in Chen et al. 2014"; the
parts that paper leaves unstated are chosen below and in scalable_bayes_papers/sgnht/README.md).

784-H-10 network, sigmoid hidden units, softmax output. Weights of each of the four parameter groups
(W1, b1, W2, b2) have prior N(0, 1/lambda_g) with lambda_g ~ Gamma(1, 1), resampled by Gibbs every
``gibbs_every`` gradient evaluations (period not stated in the paper: reconstructed), or held fixed at
``prior_precision`` (not in the paper: a control for studies of the hierarchical prior's effect). Gradients
are vectorised NumPy; the sampler kernels are the shared Numba step kernels.
"""

from __future__ import annotations

import numpy as np

from . import _checks
from .base import Model


def _sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))


class BNN:
    """Parameters theta = [W1 (d x H), b1 (H), W2 (H x C), b2 (C)] flattened."""

    def __init__(self, X, y, hidden: int = 100, n_classes: int = 10, gibbs_every: int = 100, seed: int = 0,
                 prior_precision=None):
        X = np.ascontiguousarray(X, dtype=np.float64)
        y = np.asarray(y).reshape(-1)
        if X.ndim != 2 or X.shape[0] != y.shape[0]:
            raise ValueError(f"BNN: X must be (N, d) and y (N,), got {X.shape} and {y.shape}")
        # a fractional label (1.7) was truncated to a class without a word; NaN features give a NaN gradient
        y = _checks.integer_labels(y, int(n_classes), "BNN")
        _checks.finite(X, "BNN", "X")
        self.X, self.y = X, y
        self.d, self.H, self.C = X.shape[1], int(hidden), int(n_classes)
        sizes = [self.d * self.H, self.H, self.H * self.C, self.C]
        self.bounds = np.cumsum([0] + sizes)
        self.dim = int(self.bounds[-1])
        if prior_precision is None:
            self.lam, self.fixed_prior = np.ones(4), False
        else:
            lam = np.asarray(prior_precision, dtype=np.float64).reshape(-1)
            if lam.size == 1:
                lam = np.repeat(lam, 4)
            if lam.shape != (4,) or not np.all(np.isfinite(lam)) or np.any(lam <= 0):
                raise ValueError(f"BNN: prior_precision must be one positive number or four (W1, b1, W2, b2), "
                                 f"got {prior_precision!r}")
            self.lam, self.fixed_prior = lam, True
        self.gibbs_every = int(gibbs_every)
        self._calls = 0
        self._rng = np.random.default_rng(seed)

    def unpack(self, theta):
        b = self.bounds
        return (theta[b[0]:b[1]].reshape(self.d, self.H), theta[b[1]:b[2]],
                theta[b[2]:b[3]].reshape(self.H, self.C), theta[b[3]:b[4]])

    def init_position(self, seed: int, scale: float = 0.1):
        return np.random.default_rng(seed).normal(0.0, scale, self.dim)

    def predict_proba(self, theta, X):
        W1, b1, W2, b2 = self.unpack(theta)
        a = _sigmoid(X @ W1 + b1)
        z = a @ W2 + b2
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    def _gibbs_lambda(self, theta):
        for g in range(4):
            w = theta[self.bounds[g]:self.bounds[g + 1]]
            self.lam[g] = self._rng.gamma(1.0 + 0.5 * w.size, 1.0 / (1.0 + 0.5 * float(w @ w)))

    def grad(self, theta, idx, key):
        """grad U~ = (N/n) sum_S -grad log p(y_i|x_i, theta) + lambda theta."""
        if not self.fixed_prior and self._calls % self.gibbs_every == 0:
            self._gibbs_lambda(theta)
        self._calls += 1
        N = self.X.shape[0]
        Xb, yb = self.X[idx], self.y[idx]
        W1, b1, W2, b2 = self.unpack(theta)
        a = _sigmoid(Xb @ W1 + b1)
        z = a @ W2 + b2
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        p[np.arange(len(yb)), yb] -= 1.0          # d(-log softmax)/dz
        c = N / len(idx)
        gW2 = c * (a.T @ p)
        gb2 = c * p.sum(axis=0)
        da = (p @ W2.T) * a * (1.0 - a)
        gW1 = c * (Xb.T @ da)
        gb1 = c * da.sum(axis=0)
        g = np.concatenate([gW1.ravel(), gb1, gW2.ravel(), gb2])
        for k in range(4):
            s = slice(self.bounds[k], self.bounds[k + 1])
            g[s] += self.lam[k] * theta[s]
        return g

    def model(self) -> Model:
        return Model("bnn", self.dim, self.X.shape[0], grad_py=self.grad)
