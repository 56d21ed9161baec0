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
from ..manifolds.sphere import geodesic_flow, project_tangent
from ..rng import gamma, key_from_stream, normal, uniform
from ..utils import parallel_blocks

__all__ = [
    "lift_exponents", "gram", "doc_projections", "vbar_score", "theta_init", "lift_potential",
    "sample_theta", "stored_scores", "grad_documents", "prior_mean_vector", "log_lik_prior_draws",
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


def gram(beta, K, V, G):
    """G[k, j] = beta_k' beta_j (K x K, 2-D), exactly symmetric.

    Each entry is the sum of beta_ki beta_ji in the order i = 0, ..., V-1 (the plain dot product's order);
    the upper triangle is computed, four entries of a row at a time (four independent sums in flight, each
    topic row read once per four), and mirrored (beta_ki beta_ji = beta_ji beta_ki exactly, so the mirror is
    the value a full computation gives). One parallel task computes rows k and K-1-k (equal work per task).
    The theta sampler relies on the exact symmetry (:func:`lift_potential` reads G by rows for G theta).

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
    """
    parallel_blocks(_gram_pairs, (int(K) + 1) // 2, beta, K, V, G)


@njit(nogil=True, cache=True)
def _gram_pairs(p_lo, p_hi, beta, K, V, G):
    """Rows k and K-1-k of :func:`gram` for k = p_lo, ..., p_hi - 1 (a block of pairs)."""
    for k in range(p_lo, p_hi):
        _gram_row(beta, k, K, V, G)
        if K - 1 - k != k:
            _gram_row(beta, K - 1 - k, K, V, G)


@njit(cache=True)
def _gram_row(beta, k, K, V, G):
    """Row k of :func:`gram` from the diagonal on, mirrored into column k."""
    bk = k * V
    j = k
    while j + 3 < K:
        b0 = j * V
        b1 = b0 + V
        b2 = b1 + V
        b3 = b2 + V
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        s3 = 0.0
        for i in range(V):
            x = beta[bk + i]
            s0 += x * beta[b0 + i]
            s1 += x * beta[b1 + i]
            s2 += x * beta[b2 + i]
            s3 += x * beta[b3 + i]
        G[k, j] = s0
        G[j, k] = s0
        G[k, j + 1] = s1
        G[j + 1, k] = s1
        G[k, j + 2] = s2
        G[j + 2, k] = s2
        G[k, j + 3] = s3
        G[j + 3, k] = s3
        j += 4
    while j < K:
        bj = j * V
        s = 0.0
        for i in range(V):
            s += beta[bk + i] * beta[bj + i]
        G[k, j] = s
        G[j, k] = s
        j += 1


def doc_projections(beta, K, V, indptr, indices, data, docs, B):
    """B[s, k] = beta_k' v_{docs[s]} for the sparse rows of the batch (one document per task).

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
    """
    parallel_blocks(_doc_projection_rows, docs.shape[0], beta, K, V, indptr, indices, data, docs, B)


@njit(nogil=True, cache=True)
def _doc_projection_rows(s_lo, s_hi, beta, K, V, indptr, indices, data, docs, B):
    """Rows s_lo, ..., s_hi - 1 of :func:`doc_projections`."""
    for s in range(s_lo, s_hi):
        d = docs[s]
        for k in range(K):
            acc = 0.0
            base = k * V
            for p in range(indptr[d], indptr[d + 1]):
                acc += data[p] * beta[base + indices[p]]
            B[s, k] = acc


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


@njit(cache=True)
def _gmc_lift_step(y, c, b, G, kappa, K, eps, n_leap, key, yp, vp, grad, theta, gcur, ucur):
    """One geodesic Monte Carlo transition (Byrne & Girolami 2013; SGGMC's GMC) of y on S^{K-1} targeting
    exp(-U) of :func:`lift_potential`: v ~ Lambda(y) N(0, I), ``n_leap`` leapfrog steps (half kick, geodesic
    flow for eps, half kick), Metropolis-Hastings on H = U + v'v/2. Returns (1 if accepted else 0, U at the
    chain's point after the transition).

    ``ucur`` and ``gcur`` carry U and its gradient at the current y from one transition to the next (``ucur``
    NaN: not known yet, computed here into ``gcur``): a transition starts where the last one ended, at its last
    leapfrog point if accepted, at its start if not, so U and its gradient there are known. Inside a trajectory
    U is summed only at the last leapfrog point (the Metropolis-Hastings test needs no other); every point's
    gradient and the finiteness of its U are checked as before. The draws and the decisions are those of
    computing U and its gradient afresh at every point (tests/naive_sam.py, bit for bit)."""
    for i in range(K):
        vp[i] = normal(key)
        yp[i] = y[i]
    project_tangent(yp, vp, K)
    if np.isnan(ucur):
        ucur = _lift(yp, c, b, G, kappa, K, gcur, theta, True)
    u0 = ucur
    if not np.isfinite(u0):
        return 0, ucur
    for i in range(K):
        grad[i] = gcur[i]
    h0 = u0
    for i in range(K):
        h0 += 0.5 * vp[i] * vp[i]
    u = u0
    for _l in range(n_leap):
        for i in range(K):
            vp[i] -= 0.5 * eps * grad[i]
        project_tangent(yp, vp, K)
        geodesic_flow(yp, vp, eps, K)
        u = _lift(yp, c, b, G, kappa, K, grad, theta, _l == n_leap - 1)
        if not np.isfinite(u):
            return 0, ucur
        for i in range(K):
            vp[i] -= 0.5 * eps * grad[i]
        project_tangent(yp, vp, K)
    h1 = u
    for i in range(K):
        h1 += 0.5 * vp[i] * vp[i]
    if not np.isfinite(h1):
        return 0, ucur
    if h1 <= h0 or uniform(key) < math.exp(h0 - h1):
        for i in range(K):
            y[i] = yp[i]
            gcur[i] = grad[i]
        return 1, u
    return 0, ucur


def sample_theta(seed, it, docs, B, G, Ginv, c, kappa, K, n_samples, n_steps, eps, n_leap, floor,
                 warm, theta_state, out, score, norm, acc, work, keys):
    """Draw ``n_samples`` theta's per batch document from pi(theta_d | beta, v_d) by GMC on the sphere lift,
    one document per parallel task, with key ``key_from_stream(seed, it, docs[s])``.

    Chain start: SGGMC App. F.3's initialisation at the current beta (``warm`` = 0 or 2) or the document's
    last theta (``warm`` = 1, ``theta_state[docs[s]]``; the blocked Gibbs sampler). Between stored samples the
    chain makes ``n_steps`` GMC transitions (step ``eps``, ``n_leap`` leapfrog steps). Outputs per batch
    document s and sample n: ``out[s, n, :]`` theta, ``score[s, n]`` = v'vbar, ``norm[s, n]`` = ||beta theta||;
    ``acc[s]`` accepted transitions; with ``warm`` >= 1 the last sample is written back to ``theta_state``.
    ``work`` is (S, >= 6K) scratch, ``keys`` (S, 2) uint64 scratch: no allocation in the loop.

    Runs Numba kernels on blocks of its range, one per thread (:func:`scalable_bayes.utils.parallel_blocks`);
    callable from Python, not from Numba code; writes its outputs and returns nothing.

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
    work : ndarray of float64, shape (S, >= 6 K)
        Scratch.
    keys : ndarray of uint64, shape (S, 2)
        Scratch.
    """
    parallel_blocks(_sample_theta_docs, docs.shape[0], seed, it, docs, B, G, Ginv, c, kappa, K, n_samples, n_steps,
                    eps, n_leap, floor, warm, theta_state, out, score, norm, acc, work, keys)


@njit(nogil=True, cache=True)
def _sample_theta_docs(s_lo, s_hi, seed, it, docs, B, G, Ginv, c, kappa, K, n_samples, n_steps, eps, n_leap, floor,
                       warm, theta_state, out, score, norm, acc, work, keys):
    """The batch documents s_lo, ..., s_hi - 1 of :func:`sample_theta`."""
    for s in range(s_lo, s_hi):
        d = docs[s]
        key = keys[s]
        key_from_stream(seed, it, d, key)
        w = work[s]
        y = w[0:K]
        yp = w[K:2 * K]
        vp = w[2 * K:3 * K]
        grad = w[3 * K:4 * K]
        th = w[4 * K:5 * K]
        gcur = w[5 * K:6 * K]
        b = B[s]
        if warm == 1:
            for i in range(K):
                th[i] = theta_state[d, i]
        else:
            theta_init(b, Ginv, K, floor, th)
        for i in range(K):
            y[i] = math.sqrt(th[i])
        na = 0
        ucur = np.nan  # U at y: computed by the first transition
        for n in range(n_samples):
            for _t in range(n_steps):
                a, ucur = _gmc_lift_step(y, c, b, G, kappa, K, eps, n_leap, key, yp, vp, grad, th, gcur, ucur)
                na += a
            tot = 0.0
            for i in range(K):
                out[s, n, i] = y[i] * y[i]
                tot += out[s, n, i]
            for i in range(K):
                out[s, n, i] /= tot
            f, nr = vbar_score(out[s, n], b, G, K)
            score[s, n] = f
            norm[s, n] = nr
        acc[s] = na
        if warm >= 1:
            for i in range(K):
                theta_state[d, i] = out[s, n_samples - 1, i]


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
    # the K x K matrix of the dense part, M[k, j] = scale/N sum_{s,n} theta_snk theta_snj f_sn / ||beta theta_sn||^2:
    # symmetric (theta_snk theta_snj = theta_snj theta_snk exactly), so its upper triangle is summed, in the order
    # (s, n), one row per task (rows k and K-1-k together), and mirrored
    K = int(K)
    Mkj = np.empty((K, K))
    parallel_blocks(_grad_dense_matrix_pairs, (K + 1) // 2, thetas, score, norm, K, scale * inv_n, Mkj)
    # sparse part, one topic per task
    parallel_blocks(_grad_sparse_topics, K, V, indptr, indices, data, docs, thetas, norm, -scale * inv_n, grad)
    # dense part by blocks of words (a block of every topic stays in cache while all K rows of grad take it up);
    # every entry of grad adds its K terms in the order j = 0, ..., K-1
    parallel_blocks(_grad_dense_word_blocks, (V + _WORD_BLOCK - 1) // _WORD_BLOCK, beta, K, V, Mkj, grad)


@njit(nogil=True, cache=True)
def _grad_dense_matrix_pairs(p_lo, p_hi, thetas, score, norm, K, coef, Mkj):
    """Rows k and K-1-k of the dense part's matrix of :func:`grad_documents`, k = p_lo, ..., p_hi - 1."""
    for k in range(p_lo, p_hi):
        _dense_row(thetas, score, norm, k, K, coef, Mkj)
        if K - 1 - k != k:
            _dense_row(thetas, score, norm, K - 1 - k, K, coef, Mkj)


@njit(nogil=True, cache=True)
def _grad_sparse_topics(k_lo, k_hi, V, indptr, indices, data, docs, thetas, norm, coef, grad):
    """The sparse part of :func:`grad_documents` for the topics k_lo, ..., k_hi - 1 (``coef`` = -scale / N);
    overwrites their rows of ``grad``."""
    S = docs.shape[0]
    N = thetas.shape[1]
    for k in range(k_lo, k_hi):
        base = k * V
        for i in range(V):
            grad[base + i] = 0.0
        for s in range(S):
            d = docs[s]
            cf = 0.0
            for n in range(N):
                if norm[s, n] >= TINY_NORM:
                    cf += thetas[s, n, k] / norm[s, n]
            cf *= coef
            for p in range(indptr[d], indptr[d + 1]):
                grad[base + indices[p]] += cf * data[p]


@njit(nogil=True, cache=True)
def _grad_dense_word_blocks(b_lo, b_hi, beta, K, V, Mkj, grad):
    """The dense part of :func:`grad_documents` for the word blocks b_lo, ..., b_hi - 1."""
    for ib in range(b_lo, b_hi):
        lo = ib * _WORD_BLOCK
        hi = min(lo + _WORD_BLOCK, V)
        for k in range(K):
            g = grad[k * V + lo:k * V + hi]
            for j in range(K):
                m = Mkj[k, j]
                bj = beta[j * V + lo:j * V + hi]
                for i in range(hi - lo):  # on slices: vector code (flat offsets into two arrays defeat it)
                    g[i] += m * bj[i]


@njit(cache=True)
def _dense_row(thetas, score, norm, k, K, w, Mkj):
    """Row k of the dense part's matrix of :func:`grad_documents` from the diagonal on, mirrored into column k."""
    for j in range(k, K):
        Mkj[k, j] = 0.0
    for s in range(thetas.shape[0]):
        for n in range(thetas.shape[1]):
            nr = norm[s, n]
            if nr >= TINY_NORM:
                tk = thetas[s, n, k]
                f = score[s, n]
                nr2 = nr * nr
                for j in range(k, K):
                    Mkj[k, j] += tk * thetas[s, n, j] * f / nr2
    for j in range(k, K):
        m = Mkj[k, j] * w
        Mkj[k, j] = m
        Mkj[j, k] = m


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
    mb = kappa0 * m0 + sigma * beta.reshape(K, V).sum(axis=0)
    return mb, float(np.linalg.norm(mb))


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
