"""Bayesian logistic regression: y_i ~ Bernoulli(sigmoid(x_i' theta)), theta ~ N(0, prior_var I).

Used by the SG-MCMC step-time benchmark (N = 100,000, d = 50, minibatch 100).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..samplers.intrinsics import prefetch
from .base import Model


# fastmath restricted to reassociation / FMA contraction / signed zeros: lets LLVM vectorise the
# reductions, but no approximate reciprocals or functions and no no-NaN/no-Inf assumptions (a
# diverging chain must still produce the NaN/Inf the driver reports)
_FASTMATH = {"reassoc", "contract", "nsz"}


@njit(cache=True, fastmath=_FASTMATH)
def _logreg_grad(x, data, idx, key, out):
    """grad U~ = theta/prior_var - (N/n) sum_S (y_i - sigmoid(x_i' theta)) x_i.

    ``data = (Xy, y, [1/prior_var], z, next_batch)``: ``Xy`` (N, d+1) float32 holds x_i and, in its
    last column, y_i (one 204-byte row per item for d = 50: ~4.2 cache lines instead of 4 + 1 for
    a separate label array; a 256-byte padded row was measured slower); ``y`` is kept for
    reference only.

    Memory-bound on random rows of Xy, so the kernel is
    staged: (1) one software prefetch per cache line of every minibatch row (the
    misses overlap instead of stalling one after another; when the driver already fetched them
    one step ahead these hit the cache), (2) all minibatch dot products
    x_i' theta into the scratch ``z`` (float64 accumulation), four rows at a time so each
    theta_j load serves four rows, (3) the residuals r_i = (N/n)(y_i - sigmoid(z_i)) in place,
    (4) the accumulation, four rows per pass over ``out``. During (2) it also prefetches the rows
    of the NEXT step's minibatch, ``data[4]`` (the model's ``next_batch`` buffer, filled one step
    ahead by the driver; stale or zero indices are harmless, a prefetch never changes a value), so
    their memory latency overlaps this step's arithmetic. fastmath lets LLVM vectorise the
    reductions; the result is still deterministic (the same compiled code gives the same numbers).
    """
    X, prior_prec, z, nxt = data[0], data[2][0], data[3], data[4]
    N = X.shape[0]
    d = X.shape[1] - 1  # the last column holds y_i (one fewer cache line per row than a separate y)
    b = idx.shape[0]
    if b > z.shape[0]:
        raise ValueError("logistic_regression: minibatch larger than the scratch buffer; build the model with max_batch >= batch_size")
    rb = X.shape[1] * X.itemsize
    for k in range(b):
        off = idx[k] * rb
        o = 0
        while o < rb:
            prefetch(X, off + o)
            o += 64
        prefetch(X, off + rb - 1)
    k = 0
    while k + 4 <= b:
        for q in range(k, k + 4):  # lookahead: start loading the next step's rows
            off = nxt[q] * rb
            prefetch(X, off)
            prefetch(X, off + 64)
            prefetch(X, off + 128)
            prefetch(X, off + rb - 1)
        w0 = X[idx[k]]
        w1 = X[idx[k + 1]]
        w2 = X[idx[k + 2]]
        w3 = X[idx[k + 3]]
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        a3 = 0.0
        for j in range(d):
            xj = x[j]
            a0 += w0[j] * xj
            a1 += w1[j] * xj
            a2 += w2[j] * xj
            a3 += w3[j] * xj
        z[k] = a0
        z[k + 1] = a1
        z[k + 2] = a2
        z[k + 3] = a3
        k += 4
    while k < b:
        w = X[idx[k]]
        a0 = 0.0
        for j in range(d):
            a0 += w[j] * x[j]
        z[k] = a0
        k += 1
    c = N / b
    for k in range(b):
        z[k] = c * (X[idx[k], d] - 1.0 / (1.0 + np.exp(-z[k])))
    for j in range(d):
        out[j] = prior_prec * x[j]
    k = 0
    while k + 4 <= b:
        r0 = z[k]
        r1 = z[k + 1]
        r2 = z[k + 2]
        r3 = z[k + 3]
        w0 = X[idx[k]]
        w1 = X[idx[k + 1]]
        w2 = X[idx[k + 2]]
        w3 = X[idx[k + 3]]
        for j in range(d):
            out[j] -= (r0 * w0[j] + r1 * w1[j]) + (r2 * w2[j] + r3 * w3[j])
        k += 4
    while k < b:
        r0 = z[k]
        w = X[idx[k]]
        for j in range(d):
            out[j] -= r0 * w[j]
        k += 1


def logistic_regression(X, y, prior_var: float = 1.0, max_batch: int | None = None) -> Model:
    """Model for SG-MCMC; ``X`` is stored as float32 (halves memory traffic), ``y`` in {0, 1}.

    ``max_batch``: largest minibatch the model will be asked for (sizes the scratch buffers;
    default N). Gradients accumulate in float64.
    """
    X = np.asarray(X)
    y = np.ascontiguousarray(y, dtype=np.float32).reshape(-1)
    if X.ndim != 2 or y.shape[0] != X.shape[0]:
        raise ValueError(f"logistic_regression: X must be (N, d) and y (N,); got {X.shape} and {y.shape}")
    Xy = np.empty((X.shape[0], X.shape[1] + 1), dtype=np.float32)
    Xy[:, :-1] = X
    Xy[:, -1] = y
    if prior_var <= 0:
        raise ValueError(f"logistic_regression: prior_var must be > 0, got {prior_var}")
    nb = max_batch or X.shape[0]
    scratch = np.zeros(nb)
    next_batch = np.zeros(nb, dtype=np.int64)
    m = Model("logistic_regression", X.shape[1], X.shape[0], _logreg_grad,
              (Xy, y, np.array([1.0 / prior_var]), scratch, next_batch))
    m.next_batch = next_batch  # the driver writes the next minibatch here (lookahead prefetch)
    return m


def synthetic_logistic_data(n: int, d: int, seed: int):
    """X ~ N(0, I/d), theta* ~ N(0, I), y ~ Bernoulli(sigmoid(X theta*)); returns X, y, theta*."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) / np.sqrt(d)
    theta = rng.standard_normal(d)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-X @ theta))).astype(np.float64)
    return X, y, theta
