"""Spherical admixture model (SAM; Reisinger, Waters, Silverthorn & Mooney 2010): Numba kernels.

Model (SGGMC paper, Liu, Zhu & Song 2016, Sec. 4): documents v_d, topics beta_k, the corpus mean mu and
the hyperparameter m lie on S^{V-1}; theta_d on the (K-1)-simplex;

    mu ~ vMF(m, kappa0),  beta_k ~ vMF(mu, sigma),  theta_d ~ Dir(alpha),
    v_d ~ vMF(vbar(beta, theta_d), kappa),   vbar(beta, theta) = beta theta / ||beta theta||.

With mu collapsed (eq. 9)

    pi(v, beta, theta) = c_V(kappa0) c_V(sigma)^K c_V(||mbar||)^-1 prod_d Dir(theta_d|alpha) vMF(v_d|vbar, kappa),
    mbar(beta) = kappa0 m + sigma sum_k beta_k,

so the potential of beta given theta is U(beta | theta, v) = log c_V(||mbar||) - kappa sum_d v_d' vbar_d + const,
with d/dr log c_V(r) = -A_V(r) and

    grad_{beta_k} log c_V(||mbar||) = -sigma A_V(||mbar||) mbar / ||mbar||,
    grad_{beta_k} v_d' vbar(beta, theta_d) = theta_dk (v_d - (v_d' vbar) vbar) / ||beta theta_d||.

The stochastic gradient of eq. 10 (its second term written as the gradient it stands for) averages the
document term over N samples theta^(n)_d ~ pi(theta_d | beta, v_d) and a minibatch of S documents scaled
by D / S (Fisher's identity, Sec. 4).

**Cost structure** (ours): with G = beta beta' (K x K) and b_d = beta' v_d (K; O(K nnz_d) for a sparse row),
||beta theta||^2 = theta' G theta and v_d' vbar = theta' b_d / sqrt(theta' G theta): the theta sampler works in
K dimensions only. The document term of the gradient splits into a sparse part sum_d c_dk v_d and a dense
part sum_j M_kj beta_j with a K x K matrix M, so no dense V-vector is formed per document.

**theta sampler** (SGGMC Sec. 4 says only "we use GMC"; the lift is ours): theta = y o y with y on S^{K-1}.
A density p(theta) on the simplex is the image of the density p(y o y) prod_i |y_i| on the sphere (the
Jacobian of y -> y o y); for pi(theta | beta, v_d) the potential on the sphere is

    U(y) = -sum_i (2 alpha_i - 1) log|y_i| - kappa v_d' vbar(beta, y o y),

sampled by geodesic Monte Carlo (Byrne & Girolami 2013) on S^{K-1} with the kernels of
:mod:`scalable_bayes.manifolds.sphere`. The lifted exponents c_i = 2 alpha_i - 1
are passed in (:func:`lift_exponents`); without the Jacobian they would be 2 alpha_i - 2 (a test mutation).
Start (SGGMC App. F.3): theta_d = (beta' beta)^-1 beta' v_d; it can leave the simplex, so (ours) it is
divided by its sum (vbar is invariant to scaling theta), floored at ``floor`` and renormalised; a
non-positive or non-finite sum gives the uniform theta.

**Determinism**: document s of a batch at iteration ``it`` draws from the key
``rng.key_from_stream(seed, it, d)`` (d its corpus index), so results do not depend on the thread count.

Sparse rows: CSR arrays (``indptr`` int64, ``indices`` int32/int64, ``data`` float64). Topics: a flat K*V
array, topic k in block k (``beta[k*V:(k+1)*V]``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..distributions.vmf import sample_vmf
from ..intrinsics import matvec_lanes8x4, weighted_outer_lanes8x4
from ..rng import gamma, key_from_stream, polar_ok, polar_scale, polar_try, uniform
from ..utils import parallel_blocks

__all__ = [
    "lift_exponents", "transpose_topics", "gram", "doc_projections", "vbar_score", "theta_init", "lift_potential",
    "sample_theta", "stored_scores", "grad_documents", "prior_mean_vector", "subtract_mean_direction",
    "log_lik_prior_draws",
    "sample_vmf", "sample_sam_corpus",
]

#: below this ||beta theta|| the weighted mean vbar is undefined; the score is taken as 0 (ours)
TINY_NORM = 1e-150

#: words per block of the dense part of :func:`grad_documents` (the block of every topic, K x 4 KiB, stays in the
#: L2 cache while the K rows of the gradient take it up)
_WORD_BLOCK = 512


def lift_exponents(alpha, K: int, jacobian: bool = True) -> np.ndarray:
    """c_i = 2 alpha_i - 1 of the sphere-lift potential (``jacobian=False``: 2 alpha_i - 2, the density of
    theta read on the sphere without the Jacobian of y -> y o y; used only to show the tests can fail).

    Parameters
    ----------
    alpha : float or array_like of float, shape (K,)
        The Dirichlet parameter.
    K : int
        Number of topics.
    jacobian : bool, default True
        Include the Jacobian (the correct lift).

    Returns
    -------
    ndarray of float64, shape (K,)
        The exponents c_i.
    """
    a = np.broadcast_to(np.asarray(alpha, dtype=np.float64), (K,)).astype(np.float64)
    return 2.0 * a - (1.0 if jacobian else 2.0)


# ---------------------------------------------------------------------------------------------
# K-dimensional summaries of the topics
# ---------------------------------------------------------------------------------------------


def _k8(K) -> int:
    """K rounded up to a multiple of 8 (the column count of the topics by word)."""
    return (int(K) + 7) // 8 * 8


def transpose_topics(beta, K, V, beta_t=None):
    """beta_t[i, k] = beta_k[i]: the topics by word, (V, K8) C-contiguous with K8 = K rounded up to a multiple of
    8 and the columns K, ..., K8 - 1 zero: the layout :func:`gram` and :func:`doc_projections` read (a word's
    entries side by side: vector code over topics, eight at a time).

    Parameters
    ----------
    beta : ndarray of float64, shape (K * V,)
        The topics, flat (topic k in ``beta[k*V:(k+1)*V]``).
    K : int
        Number of topics.
    V : int
        Vocabulary size.
    beta_t : ndarray of float64, shape (V, K8), optional
        Output buffer (C-contiguous); a new array if None.

    Returns
    -------
    ndarray of float64, shape (V, K8)
        ``beta_t``.
    """
    K, V = int(K), int(V)
    beta = _flat_topics(beta, K, V)
    beta_t = np.empty((V, _k8(K))) if beta_t is None else _checked_topics_by_word(beta_t, K, V)
    parallel_blocks(_transpose_word_blocks, (V + _WORD_BLOCK - 1) // _WORD_BLOCK, beta, K, V, beta_t)
    return beta_t


@njit(nogil=True, cache=True)
def _transpose_word_blocks(b_lo, b_hi, beta, K, V, beta_t):
    """Words of the blocks b_lo, ..., b_hi - 1 of :func:`transpose_topics`."""
    K8 = beta_t.shape[1]
    b2 = beta.reshape((K, V))
    for i in range(b_lo * _WORD_BLOCK, min(b_hi * _WORD_BLOCK, V)):  # row by row: contiguous writes
        row = beta_t[i]
        for k in range(K):
            row[k] = b2[k, i]
        for k in range(K, K8):
            row[k] = 0.0


def _flat_topics(beta, K, V):
    """``beta`` as a C-contiguous float64 vector of K * V entries (no copy if it is one), else a ValueError."""
    beta = np.ascontiguousarray(beta, dtype=np.float64)
    if beta.ndim != 1 or beta.shape[0] != K * V:
        raise ValueError(f"beta must be the K = {K} topics flat, a vector of K * V = {K * V} entries (topic k in "
                         f"beta[k*V:(k+1)*V]), got shape {beta.shape}")
    return beta


def _checked_topics_by_word(beta_t, K, V):
    """``beta_t`` if it has the layout of :func:`transpose_topics`' output, else a ValueError naming it."""
    K8 = _k8(K)
    if beta_t.shape != (int(V), K8) or beta_t.dtype != np.float64 or not beta_t.flags.c_contiguous:
        raise ValueError(f"beta_t must be the topics by word, a C-contiguous float64 array of shape ({V}, {K8}) "
                         f"(K = {K} rounded up to a multiple of 8; transpose_topics makes it), got {beta_t.dtype} "
                         f"{beta_t.shape}")
    return beta_t


def _topics_by_word(beta, K, V, beta_t):
    """``beta_t`` checked, or the topics transposed here if None."""
    return transpose_topics(beta, K, V) if beta_t is None else _checked_topics_by_word(beta_t, K, V)


def gram(beta, K, V, G, beta_t=None):
    """G[k, j] = beta_k' beta_j (K x K, 2-D), exactly symmetric.

    Each entry is the sum of beta_ki beta_ji in the order i = 0, ..., V-1 (the plain dot product's order). The
    upper triangle is computed from the topics by word (:func:`transpose_topics`) in blocks of four rows by
    eight columns whose sums stay in registers while they run down a block of words
    (:func:`scalable_bayes.intrinsics.matvec_lanes8x4`; each entry still adds its terms in the order of i,
    continued from one block of words to the next, the blocks small enough to stay in cache); then mirrored
    (beta_ki beta_ji = beta_ji beta_ki exactly, so the mirror is the value a full computation gives). One
    parallel task computes the row groups g and n_groups - 1 - g (about equal work per task). The theta sampler
    relies on the exact symmetry (it reads G by columns for G theta).

    Runs Numba kernels on blocks of its range, one per thread (:func:`scalable_bayes.utils.parallel_blocks`);
    callable from Python, not from Numba code; writes ``G`` and returns nothing.

    Parameters
    ----------
    beta : ndarray of float64, shape (K * V,)
        The topics, flat (topic k in ``beta[k*V:(k+1)*V]``).
    K : int
        Number of topics.
    V : int
        Vocabulary size.
    G : ndarray of float64, shape (K, K)
        Output.
    beta_t : ndarray of float64, shape (V, K8), optional
        :func:`transpose_topics` of this ``beta`` if the caller has it (it is not checked to match); computed
        here if None.
    """
    bt = _topics_by_word(beta, K, V, beta_t)
    K = int(K)
    K8 = _k8(K)
    Gp = np.zeros((K8, K8))
    n_groups = (K + 3) // 4
    parallel_blocks(_gram_group_pairs, (n_groups + 1) // 2, bt, K, int(V), Gp)
    _mirror_upper(Gp, K, 1.0, G)  # x * 1 = x exactly


@njit(nogil=True, cache=True)
def _gram_group_pairs(p_lo, p_hi, bt, K, V, Gp):
    """Row groups g and n_groups-1-g (four rows each) of :func:`gram`'s upper triangle into the padded ``Gp``,
    g = p_lo, ..., p_hi - 1, block of words by block of words."""
    n_groups = (K + 3) // 4
    for lo in range(0, V, _WORD_BLOCK):
        n = min(_WORD_BLOCK, V - lo)
        for p in range(p_lo, p_hi):
            _gram_group(bt, K, p, lo, n, Gp)
            if n_groups - 1 - p != p:
                _gram_group(bt, K, n_groups - 1 - p, lo, n, Gp)


@njit(cache=True)
def _gram_group(bt, K, g, lo, n, Gp):
    """Adds the words lo, ..., lo + n - 1 to the rows 4g, ..., 4g + 3 of ``Gp``, columns from the group's first
    multiple of 8 on (the upper triangle and a few entries below it, which are not read)."""
    k0 = 4 * g
    nr = min(4, K - k0)
    for j0 in range(k0 // 8 * 8, Gp.shape[1], 8):
        matvec_lanes8x4(bt, bt, Gp, k0, nr, j0, lo, n, lo > 0)


def doc_projections(beta, K, V, indptr, indices, data, docs, B, beta_t=None):
    """B[s, k] = beta_k' v_{docs[s]} for the sparse rows of the batch (one document per task).

    Each entry is the sum of v_di beta_ki over the document's stored entries in their order; all K entries of
    a document are summed side by side from the topics by word (:func:`transpose_topics`; vector code over k).

    Runs Numba kernels on blocks of its range, one per thread (:func:`scalable_bayes.utils.parallel_blocks`);
    callable from Python, not from Numba code; writes ``B`` and returns nothing.

    Parameters
    ----------
    beta : ndarray of float64, shape (K * V,)
        The topics, flat (topic k in ``beta[k*V:(k+1)*V]``).
    K : int
        Number of topics.
    V : int
        Vocabulary size.
    indptr, indices, data : ndarray
        The CSR arrays of the documents (int64, int32/int64, float64).
    docs : ndarray of int, shape (S,)
        Corpus indices of the batch documents.
    B : ndarray of float64, shape (S, K)
        Output.
    beta_t : ndarray of float64, shape (V, K8), optional
        :func:`transpose_topics` of this ``beta`` if the caller has it (it is not checked to match); computed
        here if None.
    """
    bt = _topics_by_word(beta, K, V, beta_t)
    parallel_blocks(_doc_projection_rows, docs.shape[0], bt, int(K), indptr, indices, data, docs, B)


@njit(nogil=True, cache=True)
def _doc_projection_rows(s_lo, s_hi, bt, K, indptr, indices, data, docs, B):
    """Rows s_lo, ..., s_hi - 1 of :func:`doc_projections`."""
    for s in range(s_lo, s_hi):
        d = docs[s]
        b = B[s]
        for k in range(K):
            b[k] = 0.0
        for p in range(indptr[d], indptr[d + 1]):
            w = data[p]
            r = bt[indices[p]]
            for k in range(K):
                b[k] += w * r[k]


@njit(cache=True)
def vbar_score(theta, b, G, K):
    """(v' vbar, ||beta theta||) from theta, b = beta' v and G = beta' beta; (0, norm) below TINY_NORM.

    Parameters
    ----------
    theta : ndarray of float64, shape (K,)
        Topic proportions.
    b : ndarray of float64, shape (K,)
        beta' v of the document.
    G : ndarray of float64, shape (K, K)
        beta' beta.
    K : int
        Number of topics.

    Returns
    -------
    score : float
        v' vbar(beta, theta) = theta' b / sqrt(theta' G theta).
    norm : float
        ||beta theta|| = sqrt(theta' G theta).
    """
    q = 0.0
    lin = 0.0
    for i in range(K):
        lin += theta[i] * b[i]
        gi = 0.0
        for j in range(K):
            gi += G[i, j] * theta[j]
        q += theta[i] * gi
    nrm = math.sqrt(q) if q > 0.0 else 0.0
    if nrm < TINY_NORM:
        return 0.0, nrm
    return lin / nrm, nrm


@njit(cache=True)
def theta_init(b, Ginv, K, floor, out):
    """SGGMC App. F.3's start theta = (beta'beta)^-1 beta' v (``Ginv`` a (pseudo-)inverse of G), divided by its
    sum, floored at ``floor`` and renormalised (ours); uniform if the sum is not positive and finite.

    A Numba kernel; writes ``out`` and returns nothing.

    Parameters
    ----------
    b : ndarray of float64, shape (K,)
        beta' v of the document.
    Ginv : ndarray of float64, shape (K, K)
        A (pseudo-)inverse of G = beta' beta.
    K : int
        Number of topics.
    floor : float
        Smallest entry before the final renormalisation.
    out : ndarray of float64, shape (K,)
        Output: the initial theta (on the simplex).
    """
    tot = 0.0
    for i in range(K):
        acc = 0.0
        for j in range(K):
            acc += Ginv[i, j] * b[j]
        out[i] = acc
        tot += acc
    if not (tot > 0.0) or not np.isfinite(tot):
        for i in range(K):
            out[i] = 1.0 / K
        return
    tot2 = 0.0
    for i in range(K):
        t = out[i] / tot
        if not (t > floor):
            t = floor
        out[i] = t
        tot2 += t
    for i in range(K):
        out[i] /= tot2


# ---------------------------------------------------------------------------------------------
# the theta sampler: GMC on the sphere lift theta = y o y
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def _lift(y, c, b, G, kappa, K, grad, theta, want_u):
    """The work of :func:`lift_potential`; with ``want_u`` False the log terms of U are not summed (a leapfrog
    step inside a trajectory needs only the gradient) and the return value is 0.0 where U is finite, +-inf or
    NaN where it is not (the same cases: some y_i with c_i != 0 zero or not finite, or a non-finite
    kappa v'vbar).

    G theta is accumulated row by row of G (G symmetric, as :func:`gram` makes it exactly: each entry of
    G theta is then the sum of G_ij theta_j in the order j = 0, ..., K-1, the same numbers as a dot product
    per row), a loop the compiler turns into vector instructions."""
    u = 0.0
    for i in range(K):
        yi = y[i]
        theta[i] = yi * yi
        grad[i] = 0.0
        if c[i] != 0.0:
            if yi == 0.0:
                if c[i] > 0.0:
                    return np.inf
                return -np.inf
            if want_u:
                u -= c[i] * math.log(abs(yi))
            elif not np.isfinite(yi):
                return np.nan
    for j in range(K):
        tj = theta[j]
        for i in range(K):
            grad[i] += G[j, i] * tj  # (G theta)_i for now
    q = 0.0
    lin = 0.0
    for i in range(K):
        lin += theta[i] * b[i]
        q += theta[i] * grad[i]
    nrm = math.sqrt(q) if q > 0.0 else 0.0
    if nrm < TINY_NORM or kappa == 0.0:
        for i in range(K):
            grad[i] = -c[i] / y[i] if c[i] != 0.0 else 0.0
        return u
    f = lin / nrm
    if want_u:
        u -= kappa * f
    elif not np.isfinite(kappa * f):
        return np.nan
    inv = 1.0 / nrm
    inv3 = lin * inv * inv * inv
    for i in range(K):
        dfdth = b[i] * inv - inv3 * grad[i]
        g = -2.0 * kappa * y[i] * dfdth
        if c[i] != 0.0:
            g -= c[i] / y[i]
        grad[i] = g
    return u


@njit(cache=True)
def lift_potential(y, c, b, G, kappa, K, grad, theta):
    """U(y) = -sum_i c_i log|y_i| - kappa v'vbar(beta, y o y) and its Euclidean gradient (into ``grad``);
    ``theta`` is scratch (receives y o y). +inf (gradient unspecified) where some y_i = 0 with c_i > 0.

    Parameters
    ----------
    y : ndarray of float64, shape (K,)
        The point on S^{K-1}.
    c : ndarray of float64, shape (K,)
        The exponents c_i (:func:`lift_exponents`).
    b : ndarray of float64, shape (K,)
        beta' v of the document.
    G : ndarray of float64, shape (K, K)
        beta' beta, symmetric (read by rows: G theta is computed as G' theta).
    kappa : float
        The document concentration.
    K : int
        Number of topics.
    grad : ndarray of float64, shape (K,)
        Output: the Euclidean gradient of U at y.
    theta : ndarray of float64, shape (K,)
        Scratch.

    Returns
    -------
    float
        U(y) (up to a constant); +inf or -inf where a y_i with c_i != 0 is 0.
    """
    return _lift(y, c, b, G, kappa, K, grad, theta, True)


def sample_theta(seed, it, docs, B, G, Ginv, c, kappa, K, n_samples, n_steps, eps, n_leap, floor,
                 warm, theta_state, out, score, norm, acc):
    """Draw ``n_samples`` theta's per batch document from pi(theta_d | beta, v_d) by GMC on the sphere lift,
    each document with its own key ``key_from_stream(seed, it, docs[s])``.

    Chain start: SGGMC App. F.3's initialisation at the current beta (``warm`` = 0 or 2) or the document's
    last theta (``warm`` = 1, ``theta_state[docs[s]]``; the blocked Gibbs sampler). Between stored samples the
    chain makes ``n_steps`` GMC transitions (step ``eps``, ``n_leap`` leapfrog steps). Outputs per batch
    document s and sample n: ``out[s, n, :]`` theta, ``score[s, n]`` = v'vbar, ``norm[s, n]`` = ||beta theta||;
    ``acc[s]`` accepted transitions; with ``warm`` >= 1 the last sample is written back to ``theta_state``.
    Each thread's block allocates its scratch once per call (7 K + 9 doubles per lane): no allocation in the
    loop.

    One transition (geodesic Monte Carlo, Byrne & Girolami 2013; SGGMC's GMC) of y on S^{K-1} targeting
    exp(-U) of :func:`lift_potential`: v ~ Lambda(y) N(0, I) (K normals from the document's key), ``n_leap``
    leapfrog steps (half kick, geodesic flow for eps, half kick), Metropolis-Hastings on H = U + v'v/2 (one
    uniform, drawn only when H grew). U and its gradient at the chain's point are carried from one transition
    to the next (a transition starts where the last one ended: at its last leapfrog point if accepted, at its
    start if not); inside a trajectory U is summed only at the last leapfrog point, the one the test reads,
    while every point's gradient and the finiteness of its U are checked; a transition meeting a non-finite U
    or H is rejected. The draws and decisions are those of computing U and its gradient afresh at every point
    (tests/naive_sam.py, bit for bit).

    The documents of a thread's block run in lockstep, as the lanes of vector loops: each K-vector is stored
    by rows over the block's documents (padded to a multiple of 8 lanes with idle lanes that draw nothing and
    write nothing out), so every sum over i = 0..K-1 keeps its order for each document (the same numbers as
    one document at a time) while the work over documents is vector code.

    Runs Numba kernels on blocks of its range, one per thread (:func:`scalable_bayes.utils.parallel_blocks`);
    callable from Python, not from Numba code; writes its outputs and returns nothing. The results do not
    depend on the thread count.

    Parameters
    ----------
    seed : int
        Seed of the per-document streams.
    it : int
        The outer iteration (the stream's second index).
    docs : ndarray of int, shape (S,)
        Corpus indices of the batch documents.
    B : ndarray of float64, shape (S, K)
        beta' v of each batch document (:func:`doc_projections`).
    G : ndarray of float64, shape (K, K)
        beta' beta (:func:`gram`).
    Ginv : ndarray of float64, shape (K, K)
        A (pseudo-)inverse of G, for the initialisation.
    c : ndarray of float64, shape (K,)
        The lift exponents (:func:`lift_exponents`).
    kappa : float
        The document concentration.
    K : int
        Number of topics.
    n_samples : int
        N, samples stored per document.
    n_steps : int
        GMC transitions between stored samples.
    eps : float
        GMC step size.
    n_leap : int
        Leapfrog steps per transition.
    floor : float
        Floor of the initialisation (:func:`theta_init`).
    warm : int
        0 or 2: start from the initialisation; 1: from ``theta_state``; >= 1 writes the last sample back.
    theta_state : ndarray of float64, shape (D, K)
        Every document's last theta.
    out : ndarray of float64, shape (S, N, K)
        Output: the samples.
    score : ndarray of float64, shape (S, N)
        Output: v' vbar of each sample.
    norm : ndarray of float64, shape (S, N)
        Output: ||beta theta|| of each sample.
    acc : ndarray, shape (S,)
        Output: accepted transitions per document.
    """
    G = np.ascontiguousarray(G, dtype=np.float64)
    parallel_blocks(_sample_theta_docs, docs.shape[0], seed, it, docs, B, G, Ginv, c, kappa, K, n_samples, n_steps,
                    eps, n_leap, floor, warm, theta_state, out, score, norm, acc)


# ---------------------------------------------------------------------------------------------
# the theta sampler in lockstep: the documents of a block as vector lanes
# ---------------------------------------------------------------------------------------------

#: per-lane scalars of the lockstep sampler's scratch (after its 7 K-vectors)
_N_LANE_SCALARS = 9

#: lanes of the lockstep sampler are padded to a multiple of this (one AVX-512 register of doubles)
_LANE_PAD = 8

#: documents run in lockstep at most (a larger block goes chunk by chunk): the chunk's scratch, 7 K + 9 doubles
#: a lane, stays in L2 (K = 50: 360 KB); one lockstep over 8,390 documents cost 56 us a document, 39 us in
#: chunks of this size
_LANE_CHUNK = 128


@njit(cache=True, error_model="numpy")
def _project_lanes(X, Vv, K, nb, dot):
    """:func:`~scalable_bayes.manifolds.sphere.project_tangent` of every lane s (x = X[:, s] unit,
    v = Vv[:, s]): v <- v - (x'v) x, the dot product summed over i = 0..K-1 in order."""
    for s in range(nb):
        dot[s] = 0.0
    for i in range(K):
        xr = X[i]
        vr = Vv[i]
        for s in range(nb):
            dot[s] += xr[s] * vr[s]
    for i in range(K):
        xr = X[i]
        vr = Vv[i]
        for s in range(nb):
            vr[s] -= dot[s] * xr[s]


@njit(cache=True, error_model="numpy")
def _flow_lanes(X, Vv, t, K, nb, aa, cs, soa, asn, fl):
    """:func:`~scalable_bayes.manifolds.sphere.geodesic_flow` (one sphere of dimension K per lane) for time t,
    every lane's numbers those of the one-block kernel: fl[s] = 1 moved, 0 at rest (|v| = 0), 2 NaN velocity
    (position set to NaN, velocity kept), 3 position not normalisable after the move (NaN). The loops over
    lanes compute every case and select (no branch per lane)."""
    for s in range(nb):
        aa[s] = 0.0
    for i in range(K):
        vr = Vv[i]
        for s in range(nb):
            aa[s] += vr[s] * vr[s]
    for s in range(nb):
        a = np.sqrt(aa[s])
        if not (a < np.inf):
            fl[s] = 2.0
        elif a > 0.0:
            at = a * t
            c = np.cos(at)
            sn = np.sin(at)
            cs[s] = c
            soa[s] = sn / a
            asn[s] = a * sn
            fl[s] = 1.0
        else:
            fl[s] = 0.0
    for i in range(K):
        xr = X[i]
        vr = Vv[i]
        for s in range(nb):
            xj = xr[s]
            vj = vr[s]
            f = fl[s]
            xm = xj * cs[s] + vj * soa[s]
            vm = vj * cs[s] - xj * asn[s]
            xr[s] = xm if f == 1.0 else (np.nan if f == 2.0 else xj)
            vr[s] = vm if f == 1.0 else vj
    for s in range(nb):
        aa[s] = 0.0
    for i in range(K):
        xr = X[i]
        for s in range(nb):
            aa[s] += xr[s] * xr[s]
    for s in range(nb):
        if fl[s] != 2.0:
            nrm = aa[s]
            if not (nrm > 0.0) or not (nrm < np.inf):
                fl[s] = 3.0
            else:
                cs[s] = 1.0 / np.sqrt(nrm)
        aa[s] = 0.0
    for i in range(K):
        xr = X[i]
        vr = Vv[i]
        for s in range(nb):
            f = fl[s]
            x = xr[s] * cs[s]
            keep = f == 2.0
            x = np.nan if f == 3.0 else (xr[s] if keep else x)
            xr[s] = x
            aa[s] += 0.0 if f >= 2.0 else x * vr[s]
    for i in range(K):
        xr = X[i]
        vr = Vv[i]
        for s in range(nb):
            v = vr[s]
            vr[s] = v - aa[s] * xr[s] if fl[s] < 2.0 else v


@njit(cache=True)
def _g_theta_lanes(G, TH, GR, K, nl):
    """GR[i, s] = (G theta_s)_i = sum_j G[j, i] TH[j, s], each entry summed over j = 0..K-1 in order (G
    symmetric: the numbers of a dot product with row i), eight lanes and four rows at a time with the sums
    in registers (:func:`scalable_bayes.intrinsics.matvec_lanes8x4`); ``nl`` a multiple of 8, G (K, K), TH and GR
    (K, nl), all C-contiguous."""
    if nl % 8 != 0 or TH.shape[1] != nl or GR.shape[1] != nl or TH.shape[0] < K or GR.shape[0] < K or \
            G.shape[0] < K or G.shape[1] < K:
        raise ValueError("_g_theta_lanes: lanes not a multiple of 8 or arrays too small")
    for i0 in range(0, K, 4):
        nr = min(4, K - i0)
        for s0 in range(0, nl, 8):
            matvec_lanes8x4(G, TH, GR, i0, nr, s0, 0, K, False)


@njit(cache=True, error_model="numpy")
def _lift_lanes(Y, c, BT, G, kappa, K, nb, GR, TH, want_u, U, st, q, lin, mode):
    """:func:`_lift` of every lane (y = Y[:, s], b = BT[:, s]): U[s] its return value, GR[:, s] the gradient
    (unspecified where U[s] is not finite), each lane's numbers those of the one-document kernel (G theta
    summed over j = 0..K-1 in order, the sums over i in order). st, q, lin, mode: per-lane scratch."""
    for s in range(nb):
        U[s] = 0.0
        st[s] = 0.0
    for i in range(K):
        ci = c[i]
        yr = Y[i]
        tr = TH[i]
        for s in range(nb):
            yi = yr[s]
            tr[s] = yi * yi
        if ci != 0.0 and want_u:
            # the logs in a loop of their own (q is free until it is zeroed below), then the same cases as
            # selects: log(0) = -inf and log(NaN) = NaN are computed and not taken
            for s in range(nb):
                q[s] = math.log(abs(yr[s]))
            uz = np.inf if ci > 0.0 else -np.inf
            for s in range(nb):
                z = yr[s] == 0.0
                live = st[s] == 0.0
                u = uz if z else U[s] - ci * q[s]
                U[s] = u if live else U[s]
                st[s] = 1.0 if live & z else st[s]
        elif ci != 0.0:  # the same cases without the log terms, as selects (no branch per lane)
            uz = np.inf if ci > 0.0 else -np.inf
            for s in range(nb):
                yi = yr[s]
                z = yi == 0.0
                hit = (st[s] == 0.0) & (z | (not (abs(yi) < np.inf)))
                U[s] = (uz if z else np.nan) if hit else U[s]
                st[s] = 1.0 if hit else st[s]
    _g_theta_lanes(G, TH, GR, K, nb)
    for s in range(nb):
        q[s] = 0.0
        lin[s] = 0.0
    for i in range(K):
        tr = TH[i]
        br = BT[i]
        gr = GR[i]
        for s in range(nb):
            lin[s] += tr[s] * br[s]
            q[s] += tr[s] * gr[s]
    for s in range(nb):
        if st[s] != 0.0:
            continue
        qs = q[s]
        nrm = math.sqrt(qs) if qs > 0.0 else 0.0
        if nrm < TINY_NORM or kappa == 0.0:
            mode[s] = 1.0
            continue
        mode[s] = 0.0
        f = lin[s] / nrm
        if want_u:
            U[s] -= kappa * f
        elif not np.isfinite(kappa * f):
            U[s] = np.nan
            st[s] = 1.0
        inv = 1.0 / nrm
        q[s] = inv
        lin[s] = lin[s] * inv * inv * inv
    m2k = -2.0 * kappa
    for i in range(K):
        ci = c[i]
        yr = Y[i]
        br = BT[i]
        gr = GR[i]
        if ci != 0.0:
            for s in range(nb):
                y = yr[s]
                r = ci / y  # (-ci) / y = -(ci / y) exactly: one division serves both limbs
                g = m2k * y * (br[s] * q[s] - lin[s] * gr[s]) - r
                gr[s] = -r if mode[s] == 1.0 else g
        else:
            for s in range(nb):
                y = yr[s]
                g = m2k * y * (br[s] * q[s] - lin[s] * gr[s])
                gr[s] = 0.0 if mode[s] == 1.0 else g


@njit(cache=True, error_model="numpy")
def _gmc_lanes(Y, YP, VP, GR, TH, GC, BT, UC, U, H0, AL, T1, T2, T3, T4, T5, c, G, kappa, K, nb, nl, eps, n_leap,
               keys, s0, acc):
    """One GMC transition of every lane (:func:`sample_theta` describes one), each lane's draws, decisions
    and numbers those of a transition of that document on its own (lane s: chain point Y[:, s], gradient
    GC[:, s] and U = UC[s] carried between transitions, key ``keys[s]``, accepted transitions added to
    ``acc[s0 + s]``). Lanes nb, ..., nl - 1 are idle padding: computed like the others from velocity 0, they
    draw nothing and are never tested. A lane whose one-document transition would have ended early (U or H
    not finite) is marked in AL and computed on to the end of the trajectory with its results discarded: it
    draws nothing more and changes nothing."""
    # K normals a lane from its key, the first of each polar pair (the numbers of rng.normal): first every
    # lane's accepted tries, u into VP and q into YP (free until the copy of Y below; a rejected try is
    # overwritten by the next, no branch per try), then the scales row by row, whose calls of log, divisions
    # and square roots overlap instead of waiting on the generator
    for s in range(nb):
        w0 = keys[s, 0]
        w1 = keys[s, 1]
        i = 0
        while i < K:
            u, _v, q, w0, w1 = polar_try(w0, w1)
            VP[i, s] = u
            YP[i, s] = q
            i += polar_ok(q)
        keys[s, 0] = w0
        keys[s, 1] = w1
    for i in range(K):
        vr = VP[i]
        qr = YP[i]
        for s in range(nb):
            vr[s] *= polar_scale(qr[s])
    for i in range(K):
        for s in range(nb, nl):
            VP[i, s] = 0.0
    for i in range(K):
        yr = Y[i]
        ypr = YP[i]
        for s in range(nl):
            ypr[s] = yr[s]
    _project_lanes(YP, VP, K, nl, T1)
    need = False
    for s in range(nl):
        if np.isnan(UC[s]):
            need = True
    if need:  # U and its gradient at the chain's point, for the lanes that do not carry them yet
        _lift_lanes(YP, c, BT, G, kappa, K, nl, GR, TH, True, U, T1, T2, T3, T4)
        for s in range(nl):
            if np.isnan(UC[s]):
                UC[s] = U[s]
                for i in range(K):
                    GC[i, s] = GR[i, s]
    for s in range(nl):
        u0 = UC[s]
        AL[s] = 1.0 if np.isfinite(u0) else 0.0
        H0[s] = u0
        U[s] = u0
    for i in range(K):
        gcr = GC[i]
        gr = GR[i]
        vr = VP[i]
        for s in range(nl):
            gr[s] = gcr[s]
            H0[s] += 0.5 * vr[s] * vr[s]
    he = 0.5 * eps
    for _l in range(n_leap):
        for i in range(K):
            vr = VP[i]
            gr = GR[i]
            for s in range(nl):
                vr[s] -= he * gr[s]
        _project_lanes(YP, VP, K, nl, T1)
        _flow_lanes(YP, VP, eps, K, nl, T1, T2, T3, T4, T5)
        _lift_lanes(YP, c, BT, G, kappa, K, nl, GR, TH, _l == n_leap - 1, U, T1, T2, T3, T4)
        for s in range(nl):
            if not np.isfinite(U[s]):
                AL[s] = 0.0
        for i in range(K):
            vr = VP[i]
            gr = GR[i]
            for s in range(nl):
                vr[s] -= he * gr[s]
        _project_lanes(YP, VP, K, nl, T1)
    for s in range(nl):
        T1[s] = U[s]
    for i in range(K):
        vr = VP[i]
        for s in range(nl):
            T1[s] += 0.5 * vr[s] * vr[s]
    for s in range(nb):
        if AL[s] == 0.0:
            continue
        h1 = T1[s]
        if not np.isfinite(h1):
            continue
        h0 = H0[s]
        if h1 <= h0 or uniform(keys[s]) < math.exp(h0 - h1):
            for i in range(K):
                Y[i, s] = YP[i, s]
                GC[i, s] = GR[i, s]
            UC[s] = U[s]
            acc[s0 + s] += 1


@njit(nogil=True, cache=True, error_model="numpy")
def _sample_theta_docs(s_lo, s_hi, seed, it, docs, B, G, Ginv, c, kappa, K, n_samples, n_steps, eps, n_leap, floor,
                       warm, theta_state, out, score, norm, acc):
    """The batch documents s_lo, ..., s_hi - 1 of :func:`sample_theta`, in chunks of at most ``_LANE_CHUNK``
    documents run in lockstep (:func:`_sample_theta_chunk`; the documents are independent, so the chunking does
    not change a number). One scratch per block, sized for its largest chunk."""
    n = s_hi - s_lo
    if n <= 0:
        return
    w = min(n, _LANE_CHUNK)
    nl = (w + _LANE_PAD - 1) // _LANE_PAD * _LANE_PAD
    flat = np.zeros(7 * K * nl + _N_LANE_SCALARS * nl)
    keys = np.zeros((nl, 2), np.uint64)
    for c0 in range(s_lo, s_hi, _LANE_CHUNK):
        _sample_theta_chunk(c0, min(c0 + _LANE_CHUNK, s_hi), seed, it, docs, B, G, Ginv, c, kappa, K, n_samples,
                            n_steps, eps, n_leap, floor, warm, theta_state, out, score, norm, acc, flat, keys)


@njit(cache=True, error_model="numpy")
def _sample_theta_chunk(s_lo, s_hi, seed, it, docs, B, G, Ginv, c, kappa, K, n_samples, n_steps, eps, n_leap,
                        floor, warm, theta_state, out, score, norm, acc, flat, keys):
    """The documents s_lo, ..., s_hi - 1 of :func:`sample_theta` in lockstep: they are the lanes of every loop
    (K-vectors stored by rows, ``X[i, s]``; lanes nb..nl-1 pad the rows to a multiple of 8 and stay idle), so
    each sum over i stays in its order for every document while the loops over documents run as vector code.
    ``flat`` and ``keys``: scratch for at least nl lanes (every part used is set here)."""
    nb = s_hi - s_lo
    nl = (nb + _LANE_PAD - 1) // _LANE_PAD * _LANE_PAD
    kn = K * nl
    Y = flat[0:kn].reshape((K, nl))
    YP = flat[kn:2 * kn].reshape((K, nl))
    VP = flat[2 * kn:3 * kn].reshape((K, nl))
    GR = flat[3 * kn:4 * kn].reshape((K, nl))
    TH = flat[4 * kn:5 * kn].reshape((K, nl))
    GC = flat[5 * kn:6 * kn].reshape((K, nl))
    BT = flat[6 * kn:7 * kn].reshape((K, nl))
    sc = flat[7 * kn:7 * kn + _N_LANE_SCALARS * nl]
    UC = sc[0:nl]
    U = sc[nl:2 * nl]
    H0 = sc[2 * nl:3 * nl]
    AL = sc[3 * nl:4 * nl]
    T1 = sc[4 * nl:5 * nl]
    T2 = sc[5 * nl:6 * nl]
    T3 = sc[6 * nl:7 * nl]
    T4 = sc[7 * nl:8 * nl]
    T5 = sc[8 * nl:9 * nl]
    for s in range(nl):
        UC[s] = np.nan  # U at the chain's point: computed by the first transition
    for s in range(nb):
        key_from_stream(seed, it, docs[s_lo + s], keys[s])
        acc[s_lo + s] = 0
        for i in range(K):
            BT[i, s] = B[s_lo + s, i]
    for i in range(K):
        for s in range(nb, nl):
            BT[i, s] = 0.0
    # idle lanes (b = 0): theta uniform, at rest (no velocity is drawn for them), U finite
    if warm == 1:
        for s in range(nb):
            d = docs[s_lo + s]
            for i in range(K):
                TH[i, s] = theta_state[d, i]
        for s in range(nb, nl):
            for i in range(K):
                TH[i, s] = 1.0 / K
    else:
        _theta_init_lanes(BT, Ginv, K, nl, floor, TH, T1, T2)
    for i in range(K):
        yr = Y[i]
        tr = TH[i]
        for s in range(nl):
            yr[s] = math.sqrt(tr[s])
    for n in range(n_samples):
        for _t in range(n_steps):
            _gmc_lanes(Y, YP, VP, GR, TH, GC, BT, UC, U, H0, AL, T1, T2, T3, T4, T5, c, G, kappa, K, nb, nl, eps,
                       n_leap, keys, s_lo, acc)
        for s in range(nl):
            T1[s] = 0.0
        for i in range(K):
            yr = Y[i]
            tr = TH[i]
            for s in range(nl):
                t = yr[s] * yr[s]
                tr[s] = t
                T1[s] += t
        for i in range(K):
            tr = TH[i]
            for s in range(nl):
                tr[s] /= T1[s]
        for s in range(nb):
            for i in range(K):
                out[s_lo + s, n, i] = TH[i, s]
        _vbar_score_lanes(TH, BT, G, K, nl, T1, T2, GR)
        for s in range(nb):
            score[s_lo + s, n] = T1[s]
            norm[s_lo + s, n] = T2[s]
    if warm >= 1:
        for s in range(nb):
            d = docs[s_lo + s]
            for i in range(K):
                theta_state[d, i] = out[s_lo + s, n_samples - 1, i]


@njit(cache=True, error_model="numpy")
def _theta_init_lanes(BT, Ginv, K, nb, floor, TH, tot, acc):
    """:func:`theta_init` of every lane (b = BT[:, s]) into TH[:, s], the same numbers."""
    for s in range(nb):
        tot[s] = 0.0
    for i in range(K):
        for s in range(nb):
            acc[s] = 0.0
        for j in range(K):
            g = Ginv[i, j]
            br = BT[j]
            for s in range(nb):
                acc[s] += g * br[s]
        tr = TH[i]
        for s in range(nb):
            tr[s] = acc[s]
            tot[s] += acc[s]
    for s in range(nb):
        ts = tot[s]
        if not (ts > 0.0) or not np.isfinite(ts):
            for i in range(K):
                TH[i, s] = 1.0 / K
            continue
        tot2 = 0.0
        for i in range(K):
            t = TH[i, s] / ts
            if not (t > floor):
                t = floor
            TH[i, s] = t
            tot2 += t
        for i in range(K):
            TH[i, s] /= tot2


@njit(cache=True, error_model="numpy")
def _vbar_score_lanes(TH, BT, G, K, nb, score, nrm_out, GI):
    """:func:`vbar_score` of every lane (theta = TH[:, s], b = BT[:, s]): score[s], nrm_out[s], the same
    numbers (G theta with each entry summed over j in order, G exactly symmetric; ``GI`` (K, nb) scratch)."""
    _g_theta_lanes(G, TH, GI, K, nb)
    for s in range(nb):
        score[s] = 0.0  # lin
        nrm_out[s] = 0.0  # q
    for i in range(K):
        tr = TH[i]
        br = BT[i]
        gr = GI[i]
        for s in range(nb):
            score[s] += tr[s] * br[s]
            nrm_out[s] += tr[s] * gr[s]
    for s in range(nb):
        q = nrm_out[s]
        nrm = math.sqrt(q) if q > 0.0 else 0.0
        nrm_out[s] = nrm
        if nrm < TINY_NORM:
            score[s] = 0.0
        else:
            score[s] = score[s] / nrm


def stored_scores(thetas, B, G, K, score, norm):
    """score[s, n] = v_s' vbar(beta, theta[s, n]) and norm[s, n] = ||beta theta[s, n]|| for stored samples
    ``thetas`` (S, N, K) at the topics summarised by B (S x K) and G: the theta's stay fixed while beta moves
    within one outer iteration (SGGMC Alg. 3) or one GMC trajectory (App. B).

    Runs Numba kernels on blocks of its range, one per thread (:func:`scalable_bayes.utils.parallel_blocks`);
    callable from Python, not from Numba code; writes ``score`` and ``norm`` and returns nothing.

    Parameters
    ----------
    thetas : ndarray of float64, shape (S, N, K)
        The stored samples.
    B : ndarray of float64, shape (S, K)
        beta' v of each document at the current topics.
    G : ndarray of float64, shape (K, K)
        beta' beta at the current topics.
    K : int
        Number of topics.
    score : ndarray of float64, shape (S, N)
        Output: v' vbar.
    norm : ndarray of float64, shape (S, N)
        Output: ||beta theta||.
    """
    parallel_blocks(_stored_score_docs, thetas.shape[0], thetas, B, G, K, score, norm)


@njit(nogil=True, cache=True)
def _stored_score_docs(s_lo, s_hi, thetas, B, G, K, score, norm):
    """The documents s_lo, ..., s_hi - 1 of :func:`stored_scores`."""
    for s in range(s_lo, s_hi):
        for n in range(thetas.shape[1]):
            f, nr = vbar_score(thetas[s, n], B[s], G, K)
            score[s, n] = f
            norm[s, n] = nr


# ---------------------------------------------------------------------------------------------
# gradient of the document term (eq. 10)
# ---------------------------------------------------------------------------------------------


def grad_documents(beta, K, V, indptr, indices, data, docs, thetas, score, norm, scale, grad):
    """grad <- -scale * sum_s (1/N) sum_n grad_beta [v_s' vbar(beta, theta[s, n])] (flat K*V, block V):
    the document part of the stochastic gradient of eq. 10 (scale = kappa D / S). Per topic k (one task):

        sum_{s,n} theta_snk v_s / ||beta theta_sn||  -  sum_j beta_j sum_{s,n} theta_snk theta_snj f_sn / ||beta theta_sn||^2

    (f = v'vbar); terms with ||beta theta|| below TINY_NORM are dropped. Overwrites ``grad``.

    Runs Numba kernels on blocks of its range, one per thread (:func:`scalable_bayes.utils.parallel_blocks`);
    callable from Python, not from Numba code; returns nothing.

    Parameters
    ----------
    beta : ndarray of float64, shape (K * V,)
        The topics, flat (topic k in ``beta[k*V:(k+1)*V]``).
    K : int
        Number of topics.
    V : int
        Vocabulary size.
    indptr, indices, data : ndarray
        The CSR arrays of the documents (int64, int32/int64, float64).
    docs : ndarray of int, shape (S,)
        Corpus indices of the batch documents.
    thetas : ndarray of float64, shape (S, N, K)
        The theta samples of the batch documents.
    score : ndarray of float64, shape (S, N)
        v' vbar of each sample (:func:`sample_theta` or :func:`stored_scores`).
    norm : ndarray of float64, shape (S, N)
        ||beta theta|| of each sample.
    scale : float
        kappa D / S.
    grad : ndarray of float64, shape (K * V,)
        Output.
    """
    N = thetas.shape[1]
    inv_n = 1.0 / N
    K, V = int(K), int(V)
    K8 = _k8(K)
    beta = np.ascontiguousarray(beta, dtype=np.float64)
    if grad.dtype != np.float64 or grad.ndim != 1 or not grad.flags.c_contiguous:
        raise ValueError(f"grad_documents: grad must be a C-contiguous 1-D float64 array (written in place), got "
                         f"{grad.dtype} {grad.shape}")
    # the K x K matrix of the dense part, M[k, j] = scale/N sum_{s,n} theta_snk theta_snj f_sn / ||beta theta_sn||^2
    # over the samples with ||beta theta|| >= TINY_NORM in the order (s, n): symmetric (theta_snk theta_snj =
    # theta_snj theta_snk exactly), so its upper triangle is summed, by blocks of four rows by eight columns with
    # the sums in registers (weighted_outer_lanes8x4 on the samples' thetas padded to K8 columns), and mirrored
    S = thetas.shape[0]
    nrm = np.ascontiguousarray(norm, dtype=np.float64).reshape(S * N)
    keep = nrm >= TINY_NORM
    T = int(keep.sum())
    A = np.zeros((T, K8))
    A[:, :K] = np.asarray(thetas, dtype=np.float64).reshape(S * N, K)[keep]
    f = np.ascontiguousarray(np.asarray(score, dtype=np.float64).reshape(S * N)[keep])
    nk = nrm[keep]
    d = nk * nk
    Mp = np.zeros((K8, K8))
    n_groups = (K + 3) // 4
    parallel_blocks(_grad_matrix_group_pairs, (n_groups + 1) // 2, A, f, d, K, Mp)
    Mkj = np.empty((K, K))
    _mirror_upper(Mp, K, scale * inv_n, Mkj)
    # sparse part into the gradient by word in chunks of eight topics ((K8 / 8, V, 8): a word's eight topics side by
    # side), then transposed into grad
    gc = np.empty((K8 // 8, V, 8))
    parallel_blocks(_grad_sparse_chunks, K8 // 8, K, indptr, indices, data, docs, thetas, norm, -scale * inv_n, gc)
    parallel_blocks(_grad_untranspose_word_blocks, (V + _WORD_BLOCK - 1) // _WORD_BLOCK, gc, K, V, grad)
    # dense part by blocks of words (a block of every topic stays in cache while all K rows of grad take it up);
    # every entry of grad adds its K terms in the order j = 0, ..., K-1
    parallel_blocks(_grad_dense_word_blocks, (V + _WORD_BLOCK - 1) // _WORD_BLOCK, beta, K, V, Mkj, grad)


@njit(nogil=True, cache=True)
def _grad_matrix_group_pairs(p_lo, p_hi, A, f, d, K, Mp):
    """Row groups g and n_groups-1-g of the dense part's matrix (upper triangle, padded), g = p_lo, ..., p_hi - 1."""
    n_groups = (K + 3) // 4
    for p in range(p_lo, p_hi):
        _grad_matrix_group(A, f, d, K, p, Mp)
        if n_groups - 1 - p != p:
            _grad_matrix_group(A, f, d, K, n_groups - 1 - p, Mp)


@njit(cache=True)
def _grad_matrix_group(A, f, d, K, g, Mp):
    """Rows 4g, ..., 4g + 3 of the dense part's matrix, columns from the group's first multiple of 8 on."""
    k0 = 4 * g
    nr = min(4, K - k0)
    for j0 in range(k0 // 8 * 8, Mp.shape[1], 8):
        weighted_outer_lanes8x4(A, f, d, Mp, k0, nr, j0, A.shape[0])


@njit(cache=True)
def _mirror_upper(src, K, w, out):
    """out[k, j] = out[j, k] = src[k, j] * w for j >= k (the upper triangle of a padded K8 x K8 ``src``,
    mirrored: the Gram matrix with w = 1, the gradient's dense matrix with its scale)."""
    for k in range(K):
        for j in range(k, K):
            m = src[k, j] * w
            out[k, j] = m
            out[j, k] = m


@njit(nogil=True, cache=True)
def _grad_sparse_chunks(c_lo, c_hi, K, indptr, indices, data, docs, thetas, norm, coef, gc):
    """The sparse part of :func:`grad_documents` for the chunks of eight topics c_lo, ..., c_hi - 1 (``coef`` =
    -scale / N), by word: gc[c, i, q] (topic k = 8 c + q) = sum_s sum_{p of s, word i} cf_sk v_sp, summed over s
    and then p in order (cf_sk = coef sum_n theta_snk / ||beta theta_sn|| over the samples above TINY_NORM, n in
    order). A chunk's (V, 8) block, 8 V doubles, stays in cache while the documents' words hit it in random order,
    a word's eight topics side by side (one vector). Overwrites its chunks of gc; topics beyond K get 0."""
    S = docs.shape[0]
    N = thetas.shape[1]
    V = gc.shape[1]
    cf = np.zeros(8)
    for c in range(c_lo, c_hi):
        g = gc[c].reshape(V * 8)
        k0 = 8 * c
        kt = min(8, K - k0)
        for i in range(V * 8):
            g[i] = 0.0
        for s in range(S):
            d = docs[s]
            for q in range(8):
                cf[q] = 0.0
            for n in range(N):
                nr = norm[s, n]
                if nr >= TINY_NORM:
                    for q in range(kt):
                        cf[q] += thetas[s, n, k0 + q] / nr
            for q in range(8):
                cf[q] *= coef
            for p in range(indptr[d], indptr[d + 1]):
                w = data[p]
                base = indices[p] * 8
                for q in range(8):
                    g[base + q] += cf[q] * w


@njit(nogil=True, cache=True)
def _grad_untranspose_word_blocks(b_lo, b_hi, gc, K, V, grad):
    """grad[k V + i] = gc[k // 8, i, k % 8] for the words of the blocks b_lo, ..., b_hi - 1 (a word's eight
    topics read as one vector, written to eight rows of ``grad``)."""
    g2 = grad.reshape((K, V))
    for ib in range(b_lo, b_hi):
        lo = ib * _WORD_BLOCK
        hi = min(lo + _WORD_BLOCK, V)
        for c in range(gc.shape[0]):
            k0 = 8 * c
            kt = min(8, K - k0)
            src = gc[c]
            for i in range(lo, hi):
                v8 = src[i]
                for q in range(kt):
                    g2[k0 + q, i] = v8[q]


@njit(nogil=True, cache=True)
def _grad_dense_word_blocks(b_lo, b_hi, beta, K, V, Mkj, grad):
    """The dense part of :func:`grad_documents` for the word blocks b_lo, ..., b_hi - 1: each entry of ``grad``
    adds M_kj beta_ji in the order j = 0, ..., K-1, four topics by eight words at a time with the sums in
    registers (:func:`scalable_bayes.intrinsics.matvec_lanes8x4`, continuing from the sparse part; M is
    exactly symmetric, so M_jk beta_ji is the same product), the last V % 8 words one by one."""
    b2 = beta.reshape((K, V))
    g2 = grad.reshape((K, V))
    V8 = V // 8 * 8
    for ib in range(b_lo, b_hi):
        lo = ib * _WORD_BLOCK
        hi = min(lo + _WORD_BLOCK, V)
        for k0 in range(0, K, 4):
            nr = min(4, K - k0)
            for i0 in range(lo, min(hi, V8), 8):
                matvec_lanes8x4(Mkj, b2, g2, k0, nr, i0, 0, K, True)
        for k in range(K):
            for i in range(max(lo, V8), hi):
                acc = g2[k, i]
                for j in range(K):
                    acc += Mkj[k, j] * b2[j, i]
                g2[k, i] = acc


def prior_mean_vector(beta, K, V, m0, kappa0, sigma):
    """mbar(beta) = kappa0 m + sigma sum_k beta_k (eq. 9) and its norm.

    Parameters
    ----------
    beta : ndarray of float64, shape (K * V,)
        The topics, flat (topic k in ``beta[k*V:(k+1)*V]``).
    K : int
        Number of topics.
    V : int
        Vocabulary size.
    m0 : ndarray of float64, shape (V,)
        The hyperparameter m (unit vector).
    kappa0 : float
        Concentration of the corpus mean.
    sigma : float
        Concentration of the topics.

    Returns
    -------
    mbar : ndarray of float64, shape (V,)
        kappa0 m + sigma sum_k beta_k.
    norm : float
        ||mbar||.
    """
    K, V = int(K), int(V)
    beta = _flat_topics(beta, K, V)
    m0 = np.ascontiguousarray(m0, dtype=np.float64)
    if m0.shape != (V,):
        raise ValueError(f"m0 must be a vector of V = {V} entries, got shape {m0.shape}")
    mb = np.empty(V)
    _prior_mean_into(beta, K, V, m0, float(kappa0), float(sigma), mb)
    return mb, float(np.linalg.norm(mb))


@njit(cache=True)
def _prior_mean_into(beta, K, V, m0, kappa0, sigma, out):
    """kappa0 m + sigma sum_k beta_k into ``out``, each column summed in NumPy's order for
    ``beta.reshape(K, V).sum(axis=0)`` (the first row, then each next row added) and the two terms formed and
    added as NumPy does: the numbers of that expression, without its temporaries."""
    rows = beta.reshape((K, V))
    first = rows[0]
    for j in range(V):
        out[j] = first[j]
    for k in range(1, K):
        row = rows[k]
        for j in range(V):
            out[j] += row[j]
    for j in range(V):
        out[j] = kappa0 * m0[j] + sigma * out[j]


@njit(cache=True)
def subtract_mean_direction(grad, mb, c, K, V):
    """grad_k -= c mb for every topic k (``grad`` flat, (K * V,)): the prior's gradient term of every block
    (:func:`prior_mean_vector`), in place, the numbers of ``grad.reshape(K, V) -= c * mb[None, :]``.

    Parameters
    ----------
    grad : ndarray of float64, shape (K * V,)
        Gradient, updated in place.
    mb : ndarray of float64, shape (V,)
        The prior's mean vector mbar.
    c : float
        The factor (sigma A_V(||mbar||) / ||mbar||).
    K : int
        Number of topics.
    V : int
        Vocabulary size.
    """
    rows = grad.reshape((K, V))
    for k in range(K):
        row = rows[k]
        for j in range(V):
            row[j] -= c * mb[j]


# ---------------------------------------------------------------------------------------------
# log-likelihood of held-out documents by prior draws (SGGMC Sec. 5.3 log-perplexity)
# ---------------------------------------------------------------------------------------------


def log_lik_prior_draws(Bm, Gm, alpha, kappa, log_cv, n_draws, seed, doc_ids, lw, lm, keys, logp, se):
    """Per held-out document d: log pi(v_d | {beta^(m)}) ~= log[(1/(N M)) sum_n sum_m exp(log c_V(kappa) +
    kappa v_d' vbar(beta^(m), theta_n))] with theta_n ~ Dir(alpha) drawn from the key
    ``key_from_stream(seed, doc_ids[d], 0)`` (the same draws for every beta^(m): common random numbers),
    into ``logp[d]``; ``se[d]`` is the delta-method Monte Carlo standard error of that log, sd_n(w_n) /
    (sqrt(N) mean_n(w_n)) with w_n the beta-average of exp(...). ``Bm`` (M, D, K), ``Gm`` (M, K, K);
    ``lw`` (D, N), ``lm`` (D, M + K) and ``keys`` (D, 2) uint64 scratch.

    Runs Numba kernels on blocks of its range, one per thread (:func:`scalable_bayes.utils.parallel_blocks`);
    callable from Python, not from Numba code; writes ``logp`` and ``se`` and returns nothing.

    Parameters
    ----------
    Bm : ndarray of float64, shape (M, D, K)
        beta^(m)' v_d for every topic sample m and document d.
    Gm : ndarray of float64, shape (M, K, K)
        beta^(m)' beta^(m).
    alpha : ndarray of float64, shape (K,)
        The Dirichlet parameter of the prior draws.
    kappa : float
        The document concentration.
    log_cv : float
        log c_V(kappa).
    n_draws : int
        N, prior draws per document.
    seed : int
        Seed of the per-document streams.
    doc_ids : ndarray of int, shape (D,)
        The documents' ids (the streams' second index).
    lw, lm : ndarray of float64
        Scratch, shapes (D, N) and (D, M + K).
    keys : ndarray of uint64, shape (D, 2)
        Scratch.
    logp : ndarray of float64, shape (D,)
        Output: the estimate of log pi(v_d | {beta^(m)}).
    se : ndarray of float64, shape (D,)
        Output: its Monte Carlo standard error (NaN for N = 1).
    """
    parallel_blocks(_prior_draw_docs, Bm.shape[1], Bm, Gm, alpha, kappa, log_cv, n_draws, seed, doc_ids, lw, lm, keys,
                    logp, se)


@njit(nogil=True, cache=True)
def _prior_draw_docs(d_lo, d_hi, Bm, Gm, alpha, kappa, log_cv, n_draws, seed, doc_ids, lw, lm, keys, logp, se):
    """The documents d_lo, ..., d_hi - 1 of :func:`log_lik_prior_draws`."""
    M = Bm.shape[0]
    K = Gm.shape[1]
    for d in range(d_lo, d_hi):
        key = keys[d]
        key_from_stream(seed, doc_ids[d], 0, key)
        th = lm[d, M:M + K]
        for n in range(n_draws):
            tot = 0.0
            for i in range(K):
                g = gamma(key, alpha[i])
                th[i] = g
                tot += g
            if not (tot > 0.0):  # every gamma rounded to 0 (tiny alpha): the vertex of the largest log draw
                for i in range(K):
                    th[i] = 1.0 / K
                tot = 1.0
            for i in range(K):
                th[i] /= tot
            mx = -np.inf
            for m in range(M):
                f, _ = vbar_score(th, Bm[m, d], Gm[m], K)
                lm[d, m] = kappa * f
                if lm[d, m] > mx:
                    mx = lm[d, m]
            acc = 0.0
            for m in range(M):
                acc += math.exp(lm[d, m] - mx)
            lw[d, n] = mx + math.log(acc / M)
        mx = -np.inf
        for n in range(n_draws):
            if lw[d, n] > mx:
                mx = lw[d, n]
        s1 = 0.0
        s2 = 0.0
        for n in range(n_draws):
            w = math.exp(lw[d, n] - mx)
            s1 += w
            s2 += w * w
        mean = s1 / n_draws
        logp[d] = log_cv + mx + math.log(mean)
        if n_draws > 1:
            var = (s2 - n_draws * mean * mean) / (n_draws - 1)
            se[d] = math.sqrt(max(var, 0.0) / n_draws) / mean
        else:
            se[d] = np.nan


# ---------------------------------------------------------------------------------------------
# generative model (synthetic corpora)
# ---------------------------------------------------------------------------------------------


def sample_sam_corpus(n_docs, n_topics, n_words, *, kappa, sigma, kappa0, alpha, seed, m=None):
    """A corpus drawn from SAM's generative process (SGGMC Sec. 4): returns (X as CSR of unit rows,
    topics beta (K x V), proportions theta (D x K), m). ``m`` defaults to a uniform random unit vector.

    Parameters
    ----------
    n_docs : int
        D.
    n_topics : int
        K.
    n_words : int
        V.
    kappa : float, keyword-only
        Document concentration.
    sigma : float, keyword-only
        Topic concentration.
    kappa0 : float, keyword-only
        Concentration of the corpus mean mu ~ vMF(m, kappa0).
    alpha : float or array_like of float, shape (K,), keyword-only
        Dirichlet parameter of theta_d.
    seed : int, keyword-only
        Seed (:func:`scalable_bayes.rng.rng_from_seed`).
    m : ndarray of float64, shape (V,), optional
        The hyperparameter m, a unit vector.

    Returns
    -------
    X : scipy.sparse.csr_matrix, shape (D, V)
        The documents, unit rows.
    beta : ndarray of float64, shape (K, V)
        The topics.
    theta : ndarray of float64, shape (D, K)
        The proportions.
    m : ndarray of float64, shape (V,)
        The hyperparameter used.
    """
    import scipy.sparse as sp

    from ..rng import rng_from_seed

    rng = rng_from_seed(seed)
    V = int(n_words)
    if m is None:
        m = rng.standard_normal(V)
        m /= np.linalg.norm(m)
    mu = sample_vmf(m, kappa0, 1, rng)[0]
    beta = sample_vmf(mu, sigma, n_topics, rng)
    a = np.broadcast_to(np.asarray(alpha, dtype=np.float64), (n_topics,))
    theta = rng.dirichlet(a, size=n_docs)
    X = np.empty((n_docs, V))
    for d in range(n_docs):
        mean = theta[d] @ beta
        mean /= np.linalg.norm(mean)
        X[d] = sample_vmf(mean, kappa, 1, rng)[0]
    return sp.csr_matrix(X), beta, theta, m
