"""Numba kernels of the vMF mixture EM on CSR rows (pure functions; one row/column per loop index,
so results do not depend on the number of threads)."""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange


# Soft responsibilities below RESP_FLOOR are set to exactly 0. They cannot change any quantity that
# matters (a class sum gains < 1e-280 per document), but near-underflow responsibilities make the
# products x_ij r_ik in the class sums subnormal, and subnormal arithmetic costs ~100x a normal
# multiply-add on x86: at the kappa ~ 5,000 of news20 this doubled the class-sum time of soft EM.
# Products with tf-idf weights >= 1e-20 stay normal above this floor.
RESP_FLOOR = 1e-280
LOG_RESP_FLOOR = math.log(RESP_FLOOR)
ROW_CHUNK = 256  # rows per parallel task (fixed, so per-row work is independent of the thread count)


def _estep_csr(indptr, indices, data, Mt, a, b, soft):
    """Responsibilities and per-row log-likelihood for log p_ik = a_k + b_k (x_i . m_k).

    indptr/indices/data : CSR of X (n, d); Mt : (d, K) = directions^T, C-contiguous.
    soft : True -> R = softmax_k (entries < RESP_FLOOR set to 0), ll_i = logsumexp_k;
    False -> one-hot argmax, ll_i = max_k.
    Returns (R (n, K), ll (n,)).
    """
    n = indptr.shape[0] - 1
    K = Mt.shape[1]
    R = np.empty((n, K))
    ll = np.empty(n)
    nchunk = (n + ROW_CHUNK - 1) // ROW_CHUNK
    for c in prange(nchunk):
        acc = np.empty(K)  # one scratch row per task, not per document
        for i in range(c * ROW_CHUNK, min(n, (c + 1) * ROW_CHUNK)):
            for k in range(K):
                acc[k] = 0.0
            for p in range(indptr[i], indptr[i + 1]):
                j = indices[p]
                x = data[p]
                for k in range(K):
                    acc[k] += x * Mt[j, k]
            best = -np.inf
            kbest = 0
            for k in range(K):
                v = a[k] + b[k] * acc[k]
                acc[k] = v
                if v > best:
                    best = v
                    kbest = k
            row = R[i]
            if soft:
                s = 0.0
                for k in range(K):
                    t = acc[k] - best  # -inf for a dead component (a_k = -inf): e = 0
                    e = math.exp(t) if t >= LOG_RESP_FLOOR else 0.0
                    acc[k] = e
                    s += e
                for k in range(K):
                    v = acc[k] / s
                    row[k] = v if v >= RESP_FLOOR or v != v else 0.0  # (NaN kept: all-dead row)
                ll[i] = best + math.log(s)
            else:
                for k in range(K):
                    row[k] = 0.0
                row[kbest] = 1.0
                ll[i] = best
    return R, ll


def _class_sums_csc(indptr_t, indices_t, data_t, R):
    """S^T = X^T R as (d, K), from the CSR of X^T (one column of X per loop index)."""
    d = indptr_t.shape[0] - 1
    K = R.shape[1]
    St = np.zeros((d, K))
    for j in prange(d):
        for p in range(indptr_t[j], indptr_t[j + 1]):
            i = indices_t[p]
            x = data_t[p]
            for k in range(K):
                St[j, k] += x * R[i, k]
    return St


def _class_sums_labels_csc(indptr_t, indices_t, data_t, labels, K):
    """S^T = X^T R for a one-hot R given by its labels (hard EM): one term per entry of X and a gather
    from the small labels array instead of a K-wide row of R. Bit-identical to ``_class_sums_csc`` on
    the one-hot R (the terms x * 0 it adds change nothing; x * 1 = x)."""
    d = indptr_t.shape[0] - 1
    St = np.zeros((d, K))
    for j in prange(d):
        for p in range(indptr_t[j], indptr_t[j + 1]):
            St[j, labels[indices_t[p]]] += data_t[p]
    return St


# Parallel versions for large inputs; serial ones for small inputs, where thread start-up dominates
# (and stalls on a loaded machine). Both compute every row/column identically.
estep_csr = njit(cache=True, parallel=True)(_estep_csr)
estep_csr_serial = njit(cache=True)(_estep_csr)
class_sums_csc = njit(cache=True, parallel=True)(_class_sums_csc)
class_sums_csc_serial = njit(cache=True)(_class_sums_csc)
class_sums_labels_csc = njit(cache=True, parallel=True)(_class_sums_labels_csc)
class_sums_labels_csc_serial = njit(cache=True)(_class_sums_labels_csc)

PARALLEL_MIN_WORK = 2_000_000  # nnz x K above which the parallel kernels are used


def estep(indptr, indices, data, Mt, a, b, soft):
    f = estep_csr if data.shape[0] * Mt.shape[1] >= PARALLEL_MIN_WORK else estep_csr_serial
    return f(indptr, indices, data, Mt, a, b, soft)


def class_sums(indptr_t, indices_t, data_t, R):
    f = class_sums_csc if data_t.shape[0] * R.shape[1] >= PARALLEL_MIN_WORK else class_sums_csc_serial
    return f(indptr_t, indices_t, data_t, R)


def class_sums_labels(indptr_t, indices_t, data_t, labels, K):
    f = class_sums_labels_csc if data_t.shape[0] * K >= PARALLEL_MIN_WORK else class_sums_labels_csc_serial
    return f(indptr_t, indices_t, data_t, labels, K)


@njit(cache=True)
def ordered_sum(v):
    """Sequential sum (fixed order, so totals are bit-identical across thread counts)."""
    s = 0.0
    for i in range(v.shape[0]):
        s += v[i]
    return s
