"""Bayesian logistic regression: y_i ~ Bernoulli(sigmoid(x_i' theta)), theta ~ N(0, prior_var I).

Used by the SG-MCMC step-time benchmark (N = 100,000, d = 50, minibatch 100).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .base import Model


@njit(cache=True, fastmath=True)
def _logreg_grad(x, data, idx, key, out):
    """grad U~ = theta/prior_var - (N/n) sum_S (y_i - sigmoid(x_i' theta)) x_i.

    Memory-bound on random rows: a first pass touches one element per cache line of every
    minibatch row (independent loads whose misses overlap), then all dot products, then the
    accumulation. fastmath lets LLVM vectorise the reductions (still deterministic: the same
    compiled code gives the same numbers).
    """
    X, y, prior_prec, z = data[0], data[1], data[2][0], data[3]
    N = X.shape[0]
    d = X.shape[1]
    b = idx.shape[0]
    s = np.float32(0.0)
    for k in range(b):
        i = idx[k]
        for j in range(0, d, 16):
            s += X[i, j]
    z[0] = s  # keeps the touch pass alive; overwritten below
    for k in range(b):
        i = idx[k]
        acc = 0.0
        for j in range(d):
            acc += X[i, j] * x[j]
        z[k] = acc
    for j in range(d):
        out[j] = prior_prec * x[j]
    c = N / b
    for k in range(b):
        i = idx[k]
        r = c * (y[i] - 1.0 / (1.0 + np.exp(-z[k])))
        for j in range(d):
            out[j] -= r * X[i, j]


def logistic_regression(X, y, prior_var: float = 1.0, max_batch: int | None = None) -> Model:
    """Model for SG-MCMC; ``X`` is stored as float32 (halves memory traffic), ``y`` in {0, 1}."""
    X = np.ascontiguousarray(X, dtype=np.float32)
    y = np.ascontiguousarray(y, dtype=np.float32).reshape(-1)
    if X.ndim != 2 or y.shape[0] != X.shape[0]:
        raise ValueError(f"logistic_regression: X must be (N, d) and y (N,); got {X.shape} and {y.shape}")
    if prior_var <= 0:
        raise ValueError(f"logistic_regression: prior_var must be > 0, got {prior_var}")
    scratch = np.zeros(max_batch or X.shape[0])
    return Model("logistic_regression", X.shape[1], X.shape[0], _logreg_grad,
                 (X, y, np.array([1.0 / prior_var]), scratch))


def synthetic_logistic_data(n: int, d: int, seed: int):
    """X ~ N(0, I/d), theta* ~ N(0, I), y ~ Bernoulli(sigmoid(X theta*)); returns X, y, theta*."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) / np.sqrt(d)
    theta = rng.standard_normal(d)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-X @ theta))).astype(np.float64)
    return X, y, theta
