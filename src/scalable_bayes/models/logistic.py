"""Bayesian logistic regression: y_i ~ Bernoulli(sigmoid(x_i' theta)), theta ~ N(0, prior_var I).

Used by the SG-MCMC step-time benchmark (N = 100,000, d = 50, minibatch 100).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..intrinsics import dot8, dot8x4, fma, prefetch_l2
from . import _checks
from .base import Model


# exp(v) = 2^k exp(r), k = round(v / ln 2), r = v - k ln 2 (Cody-Waite: ln 2 split in two, the high
# part with 32 trailing zero bits, so k * _LN2_HI is exact), exp(r) by its Taylor polynomial of
# degree 13 (truncation < 4e-18 relative for |r| <= ln2/2, i.e. within an ulp or two of libm).
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_LOG2E = 1.4426950408889634
_EXP_C = tuple(1.0 / float(np.prod(np.arange(1, j + 1))) for j in range(14))  # 1/j!, j = 0..13


@njit(cache=True, error_model="numpy")
def _sigmoid_residuals(z, X, idx, d, c, bits):
    """z[k] <- c (y_k - 1 / (1 + exp(-z[k]))) with y_k = X[idx[k], d], for the whole minibatch.

    No fastmath: plain IEEE operations, elementwise (no reductions), so the loops vectorise and the
    compiled code gives the same bits vectorised or not, inlined into the chunk loop or not
    (``error_model="numpy"``: IEEE division without Numba's per-element zero check, which kept the
    residual loop scalar; 1 + e is never 0). The
    exponential is computed in two branch-free loops instead of a call of libm's ``exp`` per row
    (measured 0.75 us for 100 calls vs ~0.2 us vectorised): (1) range reduction and the
    polynomial, with 2^k written as its IEEE bit pattern into ``bits`` (int64 scratch); (2) the
    scaling by 2^k (``bits`` read as float64) and the sigmoid; then the residual. -z is clamped to [-708, 709]:
    exp(709) = 8.2e307 gives 1/(1 + e) = 1.2e-308 (0 in libm), exp(-708) = 3e-308 gives exactly 1;
    a NaN stays NaN (it skips both clamps and the polynomial propagates it; its k is set to 0), so a
    diverging chain still yields the non-finite gradient the driver reports.
    """
    b = idx.shape[0]
    for k in range(b):
        v = -z[k]
        if v > 709.0:
            v = 709.0
        if v < -708.0:
            v = -708.0
        kf = np.floor(v * _LOG2E + 0.5)
        r = (v - kf * _LN2_HI) - kf * _LN2_LO
        q = _EXP_C[13]
        q = q * r + _EXP_C[12]
        q = q * r + _EXP_C[11]
        q = q * r + _EXP_C[10]
        q = q * r + _EXP_C[9]
        q = q * r + _EXP_C[8]
        q = q * r + _EXP_C[7]
        q = q * r + _EXP_C[6]
        q = q * r + _EXP_C[5]
        q = q * r + _EXP_C[4]
        q = q * r + _EXP_C[3]
        q = q * r + _EXP_C[2]
        q = q * r + _EXP_C[1]
        q = q * r + 1.0
        z[k] = q
        ki = np.int64(kf) if kf == kf else np.int64(0)
        bits[k] = (ki + 1023) << 52
    scale = bits.view(np.float64)
    for k in range(b):  # the sigmoid (vectorised)
        z[k] = 1.0 / (1.0 + z[k] * scale[k])
    for k in range(b):  # the residual (label gather: scalar)
        z[k] = c * (np.float64(X[idx[k], d]) - z[k])


@njit(cache=True)
def _logreg_grad(x, data, idx, key, out):
    """grad U~ = theta/prior_var - (N/n) sum_S (y_i - sigmoid(x_i' theta)) x_i.

    ``data = (Xy, y, [1/prior_var], z, next_batch, bits)``: ``Xy`` (N, d+1) float32 holds x_i and,
    in its last column, y_i (one 204-byte row per item for d = 50: ~4.2 cache lines instead of
    4 + 1 for a separate label array; a 256-byte padded row was measured slower); ``y`` is kept
    for reference only; ``z`` (float64) and ``bits`` (int64) are scratch of length max_batch.

    Memory-bound on random rows of Xy, so the kernel is staged: (1) all minibatch dot products
    x_i' theta into the scratch ``z`` (float64 accumulation in <8 x double> vector code,
    :func:`~scalable_bayes.intrinsics.dot8`), (2) the residuals r_i = (N/n)(y_i - sigmoid(z_i)) in place
    (:func:`_sigmoid_residuals`), (3) the accumulation, eight rows per pass over ``out``. The rows
    of this step are already in cache: during (1) and (3) the kernel prefetches (into L2, so the
    20 KB of next rows do not evict this step's rows from L1; paired runs: 0.1-0.2 us/step faster
    than into L1) every cache line of the rows of the NEXT step's minibatch, ``data[4]`` (the model's ``next_batch`` buffer,
    filled one step ahead by the driver; lines 0-2 of each row during (1), the rest during (3), so
    the requests are spread over the step instead of queueing in one burst). Stale or zero
    indices there are harmless: a prefetch never changes a value; a call without a lookahead
    (the Python step) simply loads its rows on demand.

    No fastmath: the dot products are vector code with one fixed summation order (``dot8``), the
    accumulation is elementwise in j with its order written out, so the compiled code gives the same
    bits whether it runs alone, inlined into the driver's chunk loop, compiled in this process or
    loaded from Numba's cache (fastmath reassociation, which had vectorised the dot products before,
    depended on the surrounding code, and the chunk loop of such a kernel could not be cached).
    """
    X, prior_prec, z, nxt, bits = data[0], data[2][0], data[3], data[4], data[5]
    N = X.shape[0]
    d = X.shape[1] - 1  # the last column holds y_i (one fewer cache line per row than a separate y)
    b = idx.shape[0]
    if b > z.shape[0] or b > bits.shape[0] or b > nxt.shape[0]:
        raise ValueError("logistic_regression: minibatch larger than the scratch buffer; build the model with max_batch >= batch_size")
    rb = X.shape[1] * X.itemsize
    last = rb - 1
    k = 0
    while k <= b - 4:
        for q in range(k, k + 4):  # lookahead, part 1: the first three lines of the next step's rows
            off = nxt[q] * rb
            prefetch_l2(X, off)
            prefetch_l2(X, off + 64)
            prefetch_l2(X, off + 128)
        z[k], z[k + 1], z[k + 2], z[k + 3] = dot8x4(X, idx[k], idx[k + 1], idx[k + 2], idx[k + 3], x, d)
        k += 4
    while k < b:
        off = nxt[k] * rb
        prefetch_l2(X, off)
        prefetch_l2(X, off + 64)
        prefetch_l2(X, off + 128)
        z[k] = dot8(X, idx[k], x, d)
        k += 1
    _sigmoid_residuals(z, X, idx, d, N / b, bits)
    for j in range(d):
        out[j] = prior_prec * x[j]
    k = 0
    while k <= b - 8:  # eight rows per pass over out (measured 0.2 us/step faster than four)
        for q in range(k, k + 8):  # lookahead, part 2: the rest of each row (lines 3 and, if any, 4)
            off = nxt[q] * rb
            prefetch_l2(X, off + 192)
            prefetch_l2(X, off + last)
        r0 = z[k]
        r1 = z[k + 1]
        r2 = z[k + 2]
        r3 = z[k + 3]
        r4 = z[k + 4]
        r5 = z[k + 5]
        r6 = z[k + 6]
        r7 = z[k + 7]
        w0 = X[idx[k]]
        w1 = X[idx[k + 1]]
        w2 = X[idx[k + 2]]
        w3 = X[idx[k + 3]]
        w4 = X[idx[k + 4]]
        w5 = X[idx[k + 5]]
        w6 = X[idx[k + 6]]
        w7 = X[idx[k + 7]]
        for j in range(d):
            out[j] -= ((fma(r0, w0[j], r1 * w1[j]) + fma(r2, w2[j], r3 * w3[j]))
                       + (fma(r4, w4[j], r5 * w5[j]) + fma(r6, w6[j], r7 * w7[j])))
        k += 8
    while k <= b - 4:
        for q in range(k, k + 4):
            off = nxt[q] * rb
            prefetch_l2(X, off + 192)
            prefetch_l2(X, off + last)
        r0 = z[k]
        r1 = z[k + 1]
        r2 = z[k + 2]
        r3 = z[k + 3]
        w0 = X[idx[k]]
        w1 = X[idx[k + 1]]
        w2 = X[idx[k + 2]]
        w3 = X[idx[k + 3]]
        for j in range(d):
            out[j] -= fma(r0, w0[j], r1 * w1[j]) + fma(r2, w2[j], r3 * w3[j])
        k += 4
    while k < b:
        off = nxt[k] * rb
        prefetch_l2(X, off + 192)
        prefetch_l2(X, off + last)
        r0 = z[k]
        w = X[idx[k]]
        for j in range(d):
            out[j] -= r0 * w[j]
        k += 1


def logistic_regression(X, y, prior_var: float = 1.0, max_batch: int | None = None) -> Model:
    """Model for SG-MCMC: y_i ~ Bernoulli(sigmoid(x_i' theta)), theta ~ N(0, prior_var I).

    The gradient of U~ is theta/prior_var - (N/n) sum_{i in S} (y_i - sigmoid(x_i' theta)) x_i (the
    stochastic potential of SGNHT eq. 2 for this likelihood), a Numba kernel (compiled path).
    Gradients accumulate in float64.

    Parameters
    ----------
    X : array_like of float, shape (N, d)
        Finite features; stored as float32 (halves memory traffic).
    y : array_like, shape (N,)
        Labels in {0, 1} (bool accepted). Anything else is refused: labels in {-1, 1} would enter
        the likelihood as y_i = -1, a gradient without a fixed point near the truth (a posterior mean
        of 175 against a true coefficient of 1); map them with ``(y + 1) / 2``.
    prior_var : float, default 1.0
        Variance of the Gaussian prior (> 0, finite).
    max_batch : int, optional
        Largest minibatch the model will be asked for (sizes the scratch buffers; default N).

    Returns
    -------
    Model
        A model of dimension d with ``n_data = N`` on R^d, with a compiled gradient and no
        ``potential``; its ``next_batch`` attribute is the buffer the driver fills with the next
        minibatch (prefetch lookahead).

    Raises
    ------
    ValueError
        For labels outside {0, 1}, NaN or infinite features, mismatched shapes or a bad ``prior_var``.
    """
    X = np.asarray(X)
    y = np.asarray(y).reshape(-1)
    if X.ndim != 2 or y.shape[0] != X.shape[0]:
        raise ValueError(f"logistic_regression: X must be (N, d) and y (N,); got {X.shape} and {y.shape}")
    y = _checks.binary_labels(y, "logistic_regression").astype(np.float32)
    _checks.finite(X, "logistic_regression", "X")
    Xy = np.empty((X.shape[0], X.shape[1] + 1), dtype=np.float32)
    Xy[:, :-1] = X
    Xy[:, -1] = y
    if not np.isfinite(prior_var) or prior_var <= 0:
        raise ValueError(f"logistic_regression: prior_var must be finite and > 0, got {prior_var}")
    nb = max_batch or X.shape[0]
    scratch = np.zeros(nb)
    next_batch = np.zeros(nb, dtype=np.int64)
    bits = np.zeros(nb, dtype=np.int64)
    m = Model("logistic_regression", X.shape[1], X.shape[0], _logreg_grad,
              (Xy, y, np.array([1.0 / prior_var]), scratch, next_batch, bits))
    m.next_batch = next_batch  # the driver writes the next minibatch here (lookahead prefetch)
    return m


def synthetic_logistic_data(n: int, d: int, seed: int):
    """X ~ N(0, I/d), theta* ~ N(0, I), y ~ Bernoulli(sigmoid(X theta*)); returns X, y, theta*.

    Parameters
    ----------
    n : int
        Number of data items N.
    d : int
        Number of features.
    seed : int
        Seed of the ``numpy.random.default_rng`` the data are drawn from.

    Returns
    -------
    X : ndarray of float64, shape (n, d)
        Features, entries N(0, 1/d).
    y : ndarray of float64, shape (n,)
        Labels in {0, 1}.
    theta : ndarray of float64, shape (d,)
        The true coefficients theta*.
    """
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) / np.sqrt(d)
    theta = rng.standard_normal(d)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-X @ theta))).astype(np.float64)
    return X, y, theta
