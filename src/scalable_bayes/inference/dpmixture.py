"""Dirichlet-process mixture of multinomials: exact slice Gibbs and a minibatched SG slice sampler.

Model (SCIR paper, Baker, Fearnhead, Fox & Nemeth 2018, Sec. 4.2, eq. 4.1; Dunson & Xing 2009), for L users
with count vectors x_i over d categories, n_i = sum_j x_ij:

    x_i | z_i, theta ~ Multi(n_i, theta_{z_i}),   theta_k ~ Dir(a) (the base),
    pi = GEM(alpha): pi_k = v_k prod_{j<k} (1 - v_j),  v_k ~ Beta(1, alpha),   alpha ~ Gamma(shape, rate).

**Exact Gibbs slice sampler** (Walker 2007; Kalli, Griffin & Walker 2011), ``method="gibbs"``; one sweep:

1. u_i ~ U(0, pi_{z_i}) for every user (in logs: log u_i = log pi_{z_i} + log U);
2. instantiate sticks until sum_{k<K*} pi_k > 1 - min_i u_i, i.e. prod_k (1 - v_k) < min u; a new stick
   has v ~ Beta(1, alpha) and theta ~ Dir(a), both drawn from the prior;
3. z_i ~ p(z_i = k) propto 1{u_i < pi_k} Multi(x_i | n_i, theta_k), k < K* (log space; the multinomial
   coefficient cancels);
4. clusters above the largest occupied label are dropped (their conditional law given z is the prior, so
   dropping them and re-drawing them from the prior in step 2 is exact); empty clusters *below* an
   occupied one are kept and resampled from their conditionals (stick-breaking labels are not
   exchangeable, so they cannot be compacted away);
5. alpha | z by Escobar & West (1995): eta ~ Beta(alpha + 1, L), alpha from the two-component mixture of
   Gamma(s + K_occ, r - log eta) and Gamma(s + K_occ - 1, r - log eta) with odds (s + K_occ - 1) :
   L (r - log eta); then v | z, alpha (the (alpha, v) block given z, u integrated out, as in Kalli et
   al.'s cycle; u is drawn afresh in step 1 of the next sweep);
6. v_k ~ Beta(1 + m_k, alpha + sum_{j>k} m_j), theta_k ~ Dir(a + sum_{z_i=k} x_i) (both drawn in logs).

**Minibatched SG slice sampler** (``method="scir"`` or ``"sgrld"``), the paper's "novel minibatched
version of the slice sampler", whose exact scheme is in the supplement only. **Reconstruction**
(ours; SCIR Sec. 4.2 gives only the idea): each iteration draws a minibatch S of n users without replacement; steps 1-3 run for the
users of S only (min u over S); theta and the sticks are then moved by *one* step of the simplex kernel
(:func:`scalable_bayes.samplers.simplex.scir_step` or ``sgrld_step``) instead of being drawn exactly:

* theta: the K* x d gamma variables (block layout, one block per instantiated cluster) with count estimates
  n^_kj = (L/n) sum_{i in S, z_i=k} x_ij and Dirichlet prior a;
* sticks: v_k = G1_k / (G1_k + G2_k), a 2-entry simplex per stick, with count estimates
  ((L/n) m_k^S, (L/n) sum_{j>k} m_j^S) and prior (1, alpha): Beta(1 + m_k, alpha + sum_{j>k} m_j) is the
  Dirichlet(1 + m_k, alpha + rest) posterior of a 2-category "stopped at k / went past k" count, which is
  exactly the form the simplex samplers target, so the same kernel (and the same bias properties, the
  paper's point) applies to the weights as to the components.

Reason for this reconstruction: the main text says only that the stick weights are sampled by SCIR/SGRLD
from a minibatch of n = 1000 users with a fixed step; the expanded-mean (gamma) form of a Beta is the
only way to feed a stick to a simplex sampler, and the (L/n)-scaled minibatch counts are the estimator the
paper uses for every other simplex parameter (eq. 2.3).

SG choices (documented because the paper leaves them open):

* the gamma variables of every instantiated cluster (K* x d for theta, K* x 2 for the stick) persist across
  iterations; a cluster created by the slice step gets theta gammas Gamma(a, 1) (so theta ~ Dir(a), the
  base) and stick gammas (Gamma(1, 1), Gamma(alpha, 1)) (so v ~ Beta(1, alpha));
* *stale allocations*: users outside the minibatch keep the allocation of their last visit. They count for
  occupancy (the number of occupied clusters in the trace, K_occ of the alpha update, and pruning) but not
  for the count estimates, which come from the minibatch alone (that is what makes the update unbiased
  for the full-data counts given current allocations);
* *pruning*: after the z step, clusters above the largest label any user (minibatch or stale) holds are
  dropped with their gamma state; interior empty clusters are kept and keep being moved (with zero counts
  they drift to the prior), as in the exact sampler;
* the initial state is shared by all three methods for a seed: z uniform over ``init_clusters`` labels, then
  (v, theta) drawn exactly from their full-data conditionals given that z (one pass over the data);
* alpha is updated every iteration by Escobar & West with K_occ from all allocations and L users.

**Determinism and threads**: ``random_state`` gives one integer seed per fit (an int is used as is, a numpy
Generator draws one, None draws fresh entropy; recorded as ``seed_``). u_i and z_i of user i at iteration t come
from the counter-based stream ``rng.stream(seed_, t, i)``, so the z step (Numba ``prange`` over users) gives
identical results for any thread count (``n_jobs``); everything else (minibatch, new clusters, alpha, the
simplex kernels) is drawn serially from one xoroshiro key ``rng.make_key(seed_)``.

**Score** (SCIR Fig. 3b plots a "test log predictive" without a formula; reconstructed): the test log-predictive of the current sample is
mean_i log sum_{k<K*} pi_k Multi(x_i | n_i, theta_k) over test users, multinomial coefficient included
(a log-probability of the count vectors): **higher is better**. The stick mass 1 - sum_{k<K*} pi_k not
instantiated is left out; with the slice rule it is below min u.

Defaults (the paper states none): a = 0.5, alpha_prior = (1, 1) (shape, rate; a weak prior of mean 1,
whose influence on alpha is small next to L users), init_clusters = 10, max_clusters = 500.
"""

from __future__ import annotations

import logging
import math
import time

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln
from numba import njit, prange
from sklearn.base import BaseEstimator, DensityMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import validate_data

from ..rng import (beta, gamma, log_gamma, make_key, next_uniform, partial_shuffle, resolve_random_state, stream,
                   uniform)
from ..samplers.simplex import scir_step, sgrld_step
from .._optional import require
from ..utils import numba_threads

logger = logging.getLogger(__name__)

__all__ = ["DPMultinomialMixture"]

# the columns of a fit's history_ records (and of trace_)
TRACE_COLUMNS = ("iteration", "time", "log_predictive", "n_clusters", "n_instantiated", "alpha", "cpu_time")

_METHODS = ("scir", "sgrld", "gibbs")
_EMPTY = np.zeros(0)
_XI = np.zeros(1)


# ---------------------------------------------------------------------------------------------
# kernels
# ---------------------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _loglik(indptr, indices, vals, i, logw, k, d):
    """sum_j x_ij log theta_kj (the multinomial log-likelihood without its coefficient)."""
    s = 0.0
    base = k * d
    for p in range(indptr[i], indptr[i + 1]):
        s += vals[p] * logw[base + indices[p]]
    return s


@njit(cache=True, parallel=True)
def _draw_u(seed, it, batch, nb, z, logpi, logu, ustate):
    """log u_i = log pi_{z_i} + log U from the stream (seed, it, i); the advanced stream kept for the z step."""
    for b in prange(nb):
        i = batch[b]
        s = stream(seed, it, i)
        u = 0.0
        while u == 0.0:
            s, u = next_uniform(s)
        logu[b] = logpi[z[i]] + np.log(u)
        ustate[b] = s


@njit(cache=True, parallel=True)
def _sample_z(batch, nb, K, d, indptr, indices, vals, logw, logpi, logu, ustate, znew):
    """z_i ~ p(k) propto 1{log u_i < log pi_k} prod_j theta_kj^x_ij for the users of the batch; -1 when no
    cluster is admissible (non-finite state). Three passes (max, total, pick), no scratch memory."""
    for b in prange(nb):
        i = batch[b]
        lu = logu[b]
        mx = -np.inf
        for k in range(K):
            if logpi[k] > lu:
                ll = _loglik(indptr, indices, vals, i, logw, k, d)
                if ll > mx:
                    mx = ll
        if not (mx > -np.inf) or not np.isfinite(mx):
            znew[b] = -1
            continue
        tot = 0.0
        for k in range(K):
            if logpi[k] > lu:
                tot += np.exp(_loglik(indptr, indices, vals, i, logw, k, d) - mx)
        s, u = next_uniform(ustate[b])
        r = u * tot
        acc = 0.0
        pick = -1
        for k in range(K):
            if logpi[k] > lu:
                acc += np.exp(_loglik(indptr, indices, vals, i, logw, k, d) - mx)
                pick = k
                if acc > r:
                    break
        znew[b] = pick


@njit(cache=True)
def _log_sticks_to_logpi(K, lv, l1v, logpi):
    """log pi_k = log v_k + sum_{j<k} log(1 - v_j); returns log of the uninstantiated mass."""
    acc = 0.0
    for k in range(K):
        logpi[k] = acc + lv[k]
        acc += l1v[k]
    return acc


@njit(cache=True)
def _lse_normalise(buf, start, d):
    """buf[start:start+d] <- buf - logsumexp(buf) in place; returns the logsumexp."""
    mx = -np.inf
    for j in range(start, start + d):
        if buf[j] > mx:
            mx = buf[j]
    tot = 0.0
    for j in range(start, start + d):
        tot += np.exp(buf[j] - mx)
    lse = mx + np.log(tot)
    for j in range(start, start + d):
        buf[j] -= lse
    return lse


@njit(cache=True)
def _extend(key, K, kmax, min_logu, d, a, alpha, lv, l1v, logw, logpi, G, S, sg):
    """Instantiate sticks from the prior until the uninstantiated mass prod (1 - v_k) < min u. Returns the
    new K*, or -1 if that would exceed ``kmax``."""
    logrem = 0.0
    for k in range(K):
        logrem += l1v[k]
    while logrem >= min_logu:
        if K >= kmax:
            return -1
        la = log_gamma(key, 1.0)
        lb = log_gamma(key, alpha)
        base = K * d
        for j in range(d):
            logw[base + j] = log_gamma(key, a)
        if sg:
            S[2 * K] = np.exp(la)
            S[2 * K + 1] = np.exp(lb)
            tot = S[2 * K] + S[2 * K + 1]
            lv[K] = np.log(S[2 * K]) - np.log(tot)
            l1v[K] = np.log(S[2 * K + 1]) - np.log(tot)
            tot = 0.0
            for j in range(d):
                G[base + j] = np.exp(logw[base + j])
                tot += G[base + j]
            ltot = np.log(tot)
            for j in range(d):
                logw[base + j] = np.log(G[base + j]) - ltot
        else:
            mx = max(la, lb)
            lse = mx + np.log(np.exp(la - mx) + np.exp(lb - mx))
            lv[K] = la - lse
            l1v[K] = lb - lse
            _lse_normalise(logw, base, d)
        logpi[K] = logrem + lv[K]
        logrem += l1v[K]
        K += 1
    return K


@njit(cache=True)
def _init_z(key, z, k0, m):
    """z_i uniform on {0, .., k0 - 1}; m the occupancy."""
    for i in range(z.shape[0]):
        k = np.int64(uniform(key) * k0)
        if k >= k0:
            k = k0 - 1
        z[i] = k
        m[k] += 1


@njit(cache=True)
def _commit(batch, nb, znew, z, m, K):
    """Write the batch's new allocations, update the occupancy m, drop trailing unoccupied clusters."""
    for b in range(nb):
        i = batch[b]
        m[z[i]] -= 1
        m[znew[b]] += 1
        z[i] = znew[b]
    while K > 1 and m[K - 1] == 0:
        K -= 1
    return K


@njit(cache=True)
def _batch_counts(batch, nb, z, indptr, indices, vals, d, K, scale, cnt, mb):
    """cnt_kj = scale * sum_{i in batch, z_i=k} x_ij, mb_k = scale * #{i in batch: z_i = k}."""
    for q in range(K * d):
        cnt[q] = 0.0
    for k in range(K):
        mb[k] = 0.0
    for b in range(nb):
        i = batch[b]
        k = z[i]
        mb[k] += scale
        base = k * d
        for p in range(indptr[i], indptr[i + 1]):
            cnt[base + indices[p]] += scale * vals[p]


@njit(cache=True)
def _escobar_west(key, alpha, kocc, L, shape, rate):
    """alpha | K_occ, L (Escobar & West 1995, eq. 13-14), Gamma(shape, rate) prior."""
    eta = beta(key, alpha + 1.0, float(L))
    r = rate - np.log(eta)
    odds = (shape + kocc - 1.0) / (L * r)
    s = shape + kocc if uniform(key) < odds / (1.0 + odds) else shape + kocc - 1.0
    return gamma(key, s) / r


@njit(cache=True)
def _exact_params(key, K, d, a, alpha, mb, cnt, lv, l1v, logw, G, S, sg):
    """Exact conditionals: v_k ~ Beta(1 + m_k, alpha + sum_{j>k} m_j), theta_k ~ Dir(a + counts), in logs;
    with ``sg`` the gamma variables themselves are stored in G (K x d) and S (K x 2)."""
    rest = 0.0
    for k in range(K):
        rest += mb[k]
    for k in range(K):
        rest -= mb[k]
        if rest < 0.0:
            rest = 0.0
        la = log_gamma(key, 1.0 + mb[k])
        lb = log_gamma(key, alpha + rest)
        mx = max(la, lb)
        lse = mx + np.log(np.exp(la - mx) + np.exp(lb - mx))
        lv[k] = la - lse
        l1v[k] = lb - lse
        base = k * d
        for j in range(d):
            logw[base + j] = log_gamma(key, a + cnt[base + j])
        if sg:
            S[2 * k] = np.exp(la)
            S[2 * k + 1] = np.exp(lb)
            for j in range(d):
                G[base + j] = np.exp(logw[base + j])
        _lse_normalise(logw, base, d)


@njit(cache=True)
def _stick_inputs(K, mb, alpha, gstick, hyper_stick):
    """Count estimates ((L/n) m_k^S, (L/n) sum_{j>k} m_j^S) and prior (1, alpha) of the 2-entry stick simplices."""
    rest = 0.0
    for k in range(K):
        rest += mb[k]
    for k in range(K):
        rest -= mb[k]
        if rest < 0.0:
            rest = 0.0
        gstick[2 * k] = mb[k]
        gstick[2 * k + 1] = rest
        hyper_stick[1 + 2 * k] = 1.0
        hyper_stick[2 + 2 * k] = alpha


@njit(cache=True)
def _sg_logs(K, d, G, S, lv, l1v, logw):
    """log theta and log v, log(1 - v) from the gamma variables; False if any is NaN or a block sums to 0."""
    for k in range(K):
        s0 = S[2 * k]
        s1 = S[2 * k + 1]
        tot = s0 + s1
        if not (tot > 0.0) or not np.isfinite(tot) or not (s0 >= 0.0) or not (s1 >= 0.0):
            return False
        lt = np.log(tot)
        lv[k] = np.log(s0) - lt
        l1v[k] = np.log(s1) - lt
        base = k * d
        tot = 0.0
        for j in range(d):
            g = G[base + j]
            if not (g >= 0.0):
                return False
            tot += g
        if not (tot > 0.0) or not np.isfinite(tot):
            return False
        lt = np.log(tot)
        for j in range(d):
            logw[base + j] = np.log(G[base + j]) - lt
    return True


@njit(cache=True, parallel=True)
def _log_predictive(indptr, indices, vals, logcoef, K, d, logw, logpi, out):
    """out_i = log sum_k pi_k Multi(x_i | n_i, theta_k) (coefficient included)."""
    n = indptr.shape[0] - 1
    for i in prange(n):
        mx = -np.inf
        for k in range(K):
            v = logpi[k] + _loglik(indptr, indices, vals, i, logw, k, d)
            if v > mx:
                mx = v
        if not (mx > -np.inf):
            out[i] = -np.inf
            continue
        tot = 0.0
        for k in range(K):
            tot += np.exp(logpi[k] + _loglik(indptr, indices, vals, i, logw, k, d) - mx)
        out[i] = logcoef[i] + mx + np.log(tot)


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def _check_counts(X, what, n_features=None):
    """CSR (float64 data, int64 indices) of a users x categories count matrix; empty rows dropped."""
    if sp.issparse(X):
        if not np.issubdtype(X.dtype, np.number) or np.issubdtype(X.dtype, np.complexfloating):
            raise ValueError(f"{what} must hold real numbers (counts), got dtype {X.dtype}")
        X = sp.csr_matrix(X, dtype=np.float64, copy=True)
    else:
        arr = np.asarray(X)
        if arr.ndim != 2:
            raise ValueError(f"{what} must be a 2-D users x categories count matrix (scipy CSR), got shape {arr.shape}")
        if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
            raise ValueError(f"{what} must hold real numbers (counts), got dtype {arr.dtype}")
        X = sp.csr_matrix(arr.astype(np.float64))
    X.sum_duplicates()
    data = X.data
    if not np.all(np.isfinite(data)):
        raise ValueError(f"{what} has non-finite entries; pass integer counts (users x categories)")
    if np.any(data < 0):
        raise ValueError(f"Negative values in data: {what} has negative counts (smallest {data.min()!r}); pass "
                         "non-negative integer counts")
    if np.any(data != np.round(data)):
        raise ValueError(f"{what} has non-integer counts; the multinomial likelihood needs integer counts "
                         f"(round or binarise the matrix first)")
    X.eliminate_zeros()
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"{what} has {X.shape[1]} columns but the training data has {n_features} categories")
    if X.shape[1] < 2:
        raise ValueError(f"{what} must have at least 2 categories (columns), got n_features = {X.shape[1]}")
    nnz_row = np.diff(X.indptr)
    keep = np.flatnonzero(nnz_row > 0)
    if keep.size == 0:
        raise ValueError(f"{what}: every row is empty (or there are no rows); nothing to fit or score")
    n_empty = X.shape[0] - keep.size
    if n_empty:
        logger.warning("%s: dropping %d empty rows (users without counts carry no likelihood)", what, n_empty)
        X = X[keep]
    indptr = np.ascontiguousarray(X.indptr, dtype=np.int64)
    indices = np.ascontiguousarray(X.indices, dtype=np.int64)
    vals = np.ascontiguousarray(X.data, dtype=np.float64)
    n = np.add.reduceat(vals, indptr[:-1])
    lc = gammaln(n + 1.0) - np.add.reduceat(gammaln(vals + 1.0), indptr[:-1])
    return indptr, indices, vals, np.ascontiguousarray(lc), int(X.shape[1]), keep, n_empty


def _positive(name, value, fix):
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive number, got {value!r}; {fix}") from None
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be positive and finite, got {value!r}; {fix}")
    return v


def _pos_int(name, value, fix):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}; {fix}")
    return int(value)


class _State:
    """Preallocated state of one chain (cluster arrays sized max_clusters)."""

    def __init__(self, L, d, kmax, a, sg):
        self.z = np.zeros(L, dtype=np.int64)
        self.m = np.zeros(kmax, dtype=np.int64)
        self.lv = np.zeros(kmax)
        self.l1v = np.zeros(kmax)
        self.logpi = np.full(kmax, -np.inf)
        self.logw = np.zeros(kmax * d)
        self.cnt = np.zeros(kmax * d)
        self.mb = np.zeros(kmax)
        self.G = np.zeros(kmax * d if sg else 0)
        self.S = np.zeros(2 * kmax if sg else 0)
        self.gstick = np.zeros(2 * kmax if sg else 0)
        self.hyper_theta = np.full(1 + kmax * d if sg else 0, a)
        if sg:
            self.hyper_theta[0] = d
        self.hyper_stick = np.zeros(1 + 2 * kmax if sg else 0)
        if sg:
            self.hyper_stick[0] = 2.0
        self.K = 0


def sg_params_step(kernel, key, h, st, K, d, alpha):
    """One simplex-kernel step of theta (K x d gamma variables, counts ``st.cnt``) and of the K stick
    2-simplices (counts from ``st.mb``, prior (1, alpha)), then log theta, log v from them. Returns False if
    the state became non-finite. Exposed for the tests (frozen allocations)."""
    kernel(st.G[: K * d], _EMPTY, _XI, st.cnt[: K * d], key, h, st.hyper_theta[: 1 + K * d])
    _stick_inputs(K, st.mb, alpha, st.gstick, st.hyper_stick)
    kernel(st.S[: 2 * K], _EMPTY, _XI, st.gstick[: 2 * K], key, h, st.hyper_stick[: 1 + 2 * K])
    return bool(_sg_logs(K, d, st.G, st.S, st.lv, st.l1v, st.logw))


# ---------------------------------------------------------------------------------------------
# estimator
# ---------------------------------------------------------------------------------------------


class DPMultinomialMixture(DensityMixin, BaseEstimator):
    """Dirichlet-process mixture of multinomials sampled by the exact slice Gibbs sampler or its minibatched
    SG version with SCIR / SGRLD updates of components and stick weights (see the module docstring).

    Parameters
    ----------
    method : {"scir", "sgrld", "gibbs"}, default "scir"
        "scir", "sgrld" (minibatched SG slice sampler) or "gibbs" (exact slice sampler, all users).
    base_concentration : float, default 0.5
        a > 0, the Dirichlet base Dir(a, ..., a) over the d categories.
    alpha : float, default 1.0
        Initial DP concentration (> 0); updated every iteration (Escobar & West).
    alpha_prior : tuple of float, default (1.0, 1.0)
        (shape, rate) of alpha's Gamma prior, both > 0.
    batch_size : int, default 1000
        Users per minibatch (SG methods; ignored by "gibbs").
    step_size : float, optional
        The fixed time step h of the SG kernels (required > 0 for SG; ignored by "gibbs").
    max_iter : int, default 100
        Iterations (sweeps for Gibbs); all of them run (``n_iter_``).
    max_clusters : int, default 500
        Hard cap on instantiated clusters; exceeding it raises (never truncates).
    init_clusters : int, default 10
        The initial allocations are uniform over this many labels. The slice sampler creates
        clusters slowly (a new stick's weight is about alpha / L), so start above the expected number of
        clusters rather than at 1: from one cluster it stays at one (and alpha collapses).
        There is no ``n_components``: the number of clusters is sampled (``n_clusters_`` occupied, as many
        rows of ``components_`` as are instantiated); scikit-learn's ``BayesianGaussianMixture`` names its
        fixed truncation level so, which this sampler does not have (``max_clusters`` only guards memory).
    random_state : None, int or numpy.random.Generator, default None
        The fit's integer seed (module docstring, "Determinism and threads"): an int is used as is (the
        same fit as the former ``seed`` of that value), a Generator gives one seed drawn once per fit, None
        fresh entropy; the seed used is ``seed_``.
    n_jobs : int or None, default None
        Numba threads for the z step and the score (None: current setting; -1 all, -2 all but one, ...);
        results do not depend on it.
    verbose : int, default 0
        Log one line per iteration at INFO level when > 0 (logger ``scalable_bayes.inference.dpmixture``);
        otherwise the checkpoints of ``history_`` at DEBUG level.

    Attributes
    ----------
    weights_ : ndarray, shape (K*,)
        Stick weights pi_k of the instantiated clusters (they sum to 1 - the uninstantiated mass).
    components_ : ndarray, shape (K*, d)
        theta_k.
    cluster_sizes_ : ndarray, shape (K*,)
        Users per cluster.
    labels_ : ndarray
        Allocations of the (non-empty) training rows.
    n_clusters_ : int
        Occupied clusters.
    alpha_ : float
        The DP concentration after the last iteration.
    seed_ : int
        The integer seed used (from ``random_state``).
    n_iter_ : int
        Iterations run (= ``max_iter``).
    n_empty_rows_ : int
        Dropped empty rows of X.
    history_ : list of dict
        One record per checkpoint (``trace_`` gives them as a pandas DataFrame, which needs the
        ``pipeline`` extra): iteration, time [cumulative seconds of sampling since fit started,
        initialisation (and a first call's compilation) included in row 0, evaluation excluded],
        log_predictive [mean per test user, higher is better; NaN without X_test], n_clusters (occupied),
        n_instantiated, alpha, cpu_time [the process CPU seconds over the same intervals as ``time``: with
        ``n_jobs=1`` the sampler's own work, without the stalls of a shared machine].
    """

    def __init__(self, method="scir", *, base_concentration=0.5, alpha=1.0, alpha_prior=(1.0, 1.0),
                 batch_size=1000, step_size=None, max_iter=100, max_clusters=500, init_clusters=10, random_state=None,
                 n_jobs=None, verbose=0):
        self.method = method
        self.base_concentration = base_concentration
        self.alpha = alpha
        self.alpha_prior = alpha_prior
        self.batch_size = batch_size
        self.step_size = step_size
        self.max_iter = max_iter
        self.max_clusters = max_clusters
        self.init_clusters = init_clusters
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    # -- validation ---------------------------------------------------------------------------
    def _check_params(self, L):
        if self.method not in _METHODS:
            raise ValueError(f"unknown method {self.method!r}; choose one of {', '.join(_METHODS)}")
        a = _positive("base_concentration", self.base_concentration, "the Dirichlet base needs a > 0 (e.g. 0.5)")
        alpha = _positive("alpha", self.alpha, "the DP concentration must be > 0 (e.g. 1.0)")
        try:
            s, r = (float(v) for v in self.alpha_prior)
        except (TypeError, ValueError):
            raise ValueError(f"alpha_prior must be a pair (shape, rate), got {self.alpha_prior!r}") from None
        if not (math.isfinite(s) and s > 0 and math.isfinite(r) and r > 0):
            raise ValueError(f"alpha_prior (shape, rate) must both be positive and finite, got {self.alpha_prior!r}")
        n_iter = _pos_int("max_iter", self.max_iter, "give the number of iterations, e.g. 100")
        kmax = _pos_int("max_clusters", self.max_clusters, "give a cap such as 500")
        k0 = _pos_int("init_clusters", self.init_clusters, "give e.g. 10")
        if k0 > kmax:
            raise ValueError(f"init_clusters={k0} exceeds max_clusters={kmax}; lower init_clusters or raise max_clusters")
        sg = self.method != "gibbs"
        h = None
        n = L
        if sg:
            if self.step_size is None:
                raise ValueError(f"method={self.method!r} needs a step_size > 0 (the fixed SG time step h, e.g. 0.1)")
            h = _positive("step_size", self.step_size, "the SG time step h must be > 0 (e.g. 0.1)")
            n = _pos_int("batch_size", self.batch_size, "give the users per minibatch, e.g. 1000")
            if n > L:
                raise ValueError(f"batch_size={n} is larger than the number of (non-empty) users {L}; "
                                 f"use batch_size <= {L} (batch_size = {L} uses every user each iteration)")
        nj = self.n_jobs
        if nj is not None and (isinstance(nj, (bool, np.bool_)) or not isinstance(nj, (int, np.integer)) or nj == 0):
            raise ValueError(f"n_jobs must be None, a positive thread count or -1 (all threads), -2 (all but one), "
                             f"...; got {nj!r}")
        return a, alpha, (s, r), n_iter, kmax, k0, sg, h, n

    # -- fit ----------------------------------------------------------------------------------
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = True
        # X must be counts: non-negative integers. scikit-learn's only tag for integer input is
        # "categorical" (its checks then pass non-negative integers), which is what count data needs
        tags.input_tags.categorical = True
        return tags

    def fit(self, X, y=None, *, X_test=None, evaluate_every=10):
        """Sample for ``max_iter`` iterations from the posterior given the users x categories counts X.

        Parameters
        ----------
        X : sparse matrix or array of shape (n_users, d)
            Non-negative integer counts (CSR preferred); empty rows are dropped.
        y : ignored
            Present for the scikit-learn API (a ``Pipeline`` passes it); never used as data.
        X_test : sparse matrix or array of shape (n_test_users, d), optional
            Test users whose mean log-predictive is recorded in ``trace_`` at iteration 0, every
            ``evaluate_every`` iterations and at the last.
        evaluate_every : int, default 10

        Returns
        -------
        self
        """
        X = validate_data(self, X, accept_sparse="csr", dtype="numeric")
        indptr, indices, vals, _, d, keep, n_empty = _check_counts(X, "X")
        L = indptr.shape[0] - 1
        a, alpha, (ps, pr), n_iter, kmax, k0, sg, h, n = self._check_params(L)
        ev = _pos_int("evaluate_every", evaluate_every, "evaluate every e.g. 10 iterations")
        test = None
        if X_test is not None:
            t_indptr, t_indices, t_vals, t_lc, _, _, _ = _check_counts(X_test, "X_test", n_features=d)
            test = (t_indptr, t_indices, t_vals, t_lc, np.empty(t_indptr.shape[0] - 1))
        seed = resolve_random_state(self.random_state)
        self.seed_ = seed
        key = make_key(seed)
        kernel = {"scir": scir_step, "sgrld": sgrld_step}.get(self.method)
        st = _State(L, d, kmax, a, sg)
        all_users = np.arange(L, dtype=np.int64)
        perm = all_users.copy()
        logu = np.empty(n)
        ustate = np.empty(n, dtype=np.uint64)
        znew = np.empty(n, dtype=np.int64)
        scale = L / n

        rows = []

        def record(it, elapsed, cpu):
            K = st.K
            lp = np.nan
            if test is not None:
                ti, tx, tv, tl, out = test
                _log_predictive(ti, tx, tv, tl, K, d, st.logw, st.logpi, out)
                lp = float(np.mean(out))
            rows.append((it, elapsed, lp, int(np.count_nonzero(st.m[:K])), K, alpha, cpu))
            return rows[-1]

        def log_line(it, elapsed, rec):  # one line per iteration at INFO when verbose, else the checkpoints at DEBUG
            if self.verbose or rec is not None:
                extra = "" if rec is None else f", log-predictive {rec[2]:.4f}"
                logger.log(logging.INFO if self.verbose else logging.DEBUG,
                           "DP %s iteration %d of max_iter %d, %.2fs, %d clusters, alpha %.4g%s", self.method, it,
                           n_iter, elapsed, int(np.count_nonzero(st.m[:st.K])), alpha, extra)

        with numba_threads(self.n_jobs):
            t0, c0 = time.perf_counter(), time.process_time()
            # initial state: z uniform over k0 labels, (v, theta) exact given z
            _init_z(key, st.z, k0, st.m)
            K = k0
            while K > 1 and st.m[K - 1] == 0:
                K -= 1
            _batch_counts(all_users, L, st.z, indptr, indices, vals, d, K, 1.0, st.cnt, st.mb)
            _exact_params(key, K, d, a, alpha, st.mb, st.cnt, st.lv, st.l1v, st.logw, st.G, st.S, sg)
            _log_sticks_to_logpi(K, st.lv, st.l1v, st.logpi)
            st.K = K
            elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
            record(0, elapsed, cpu)
            for it in range(1, n_iter + 1):
                t0, c0 = time.perf_counter(), time.process_time()
                if sg and n < L:
                    partial_shuffle(key, perm, n)
                    batch = perm
                else:
                    batch = all_users
                _draw_u(seed, it, batch, n, st.z, st.logpi, logu, ustate)
                min_logu = float(np.min(logu))
                K = _extend(key, K, kmax, min_logu, d, a, alpha, st.lv, st.l1v, st.logw, st.logpi, st.G, st.S, sg)
                if K < 0:
                    raise RuntimeError(
                        f"DPMultinomialMixture({self.method}): iteration {it} needs more than max_clusters="
                        f"{kmax} instantiated clusters (the slice min u is {math.exp(min_logu):.3g}); raise "
                        f"max_clusters, or lower alpha / alpha_prior if the cluster count is running away")
                _sample_z(batch, n, K, d, indptr, indices, vals, st.logw, st.logpi, logu, ustate, znew)
                if np.any(znew < 0):
                    b = int(np.flatnonzero(znew < 0)[0])
                    raise FloatingPointError(
                        f"DPMultinomialMixture({self.method}): non-finite state at iteration {it} (user "
                        f"{int(keep[batch[b]])} has no admissible cluster: non-finite stick weights or component "
                        f"log-probabilities); lower step_size")
                K = _commit(batch, n, znew, st.z, st.m, K)
                _batch_counts(batch, n, st.z, indptr, indices, vals, d, K, scale, st.cnt, st.mb)
                kocc = int(np.count_nonzero(st.m[:K]))
                alpha = float(_escobar_west(key, alpha, kocc, L, ps, pr))
                if not (math.isfinite(alpha) and alpha > 0):
                    raise FloatingPointError(f"DPMultinomialMixture({self.method}): alpha became {alpha!r} at "
                                             f"iteration {it}; check alpha_prior")
                if sg:
                    ok = sg_params_step(kernel, key, h, st, K, d, alpha)
                else:
                    _exact_params(key, K, d, a, alpha, st.mb, st.cnt, st.lv, st.l1v, st.logw, st.G, st.S, False)
                    ok = bool(np.all(np.isfinite(st.lv[:K])) and not np.any(np.isnan(st.logw[: K * d])))
                if not ok:
                    raise FloatingPointError(
                        f"DPMultinomialMixture({self.method}): the sampler produced non-finite values at iteration "
                        f"{it} (components or stick weights); lower step_size")
                _log_sticks_to_logpi(K, st.lv, st.l1v, st.logpi)
                st.K = K
                elapsed += time.perf_counter() - t0
                cpu += time.process_time() - c0
                log_line(it, elapsed, record(it, elapsed, cpu) if it % ev == 0 or it == n_iter else None)
        self.history_ = [dict(zip(TRACE_COLUMNS, r)) for r in rows]
        K = st.K
        self.weights_ = np.exp(st.logpi[:K]).copy()
        self.components_ = np.exp(st.logw[: K * d]).reshape(K, d).copy()
        self.cluster_sizes_ = st.m[:K].copy()
        self.labels_ = st.z.copy()
        self.n_clusters_ = int(np.count_nonzero(st.m[:K]))
        self.alpha_ = alpha
        self.n_iter_ = n_iter
        self.n_features_in_ = d
        self.n_empty_rows_ = n_empty
        return self

    @property
    def trace_(self):
        """``history_`` as a pandas DataFrame with the columns :data:`TRACE_COLUMNS` (needs pandas)."""
        if not hasattr(self, "history_"):
            raise NotFittedError("this DPMultinomialMixture is not fitted yet; call fit(X) first")
        pd = require("pandas", "DPMultinomialMixture.trace_ (a DataFrame)")
        return pd.DataFrame(self.history_, columns=list(TRACE_COLUMNS))

    # -- scoring ------------------------------------------------------------------------------
    def score_samples(self, X):
        """log sum_k pi_k Multi(x_i | n_i, theta_k) per non-empty row of X (coefficient included)."""
        if not hasattr(self, "components_"):
            raise NotFittedError("this DPMultinomialMixture is not fitted yet; call fit(X) first")
        shape = getattr(X, "shape", None)
        if shape is not None and len(shape) == 2 and shape[1] != self.n_features_in_:
            raise ValueError(f"X has {shape[1]} features, but DPMultinomialMixture is expecting {self.n_features_in_} "
                             "features as input (the training categories); pass the same columns as in fit")
        X = validate_data(self, X, accept_sparse="csr", dtype="numeric", reset=False)
        ti, tx, tv, tl, _, _, _ = _check_counts(X, "X", n_features=self.n_features_in_)
        K, d = self.components_.shape
        with np.errstate(divide="ignore"):
            logw = np.log(self.components_).reshape(-1)
            logpi = np.log(self.weights_)
        out = np.empty(ti.shape[0] - 1)
        _log_predictive(ti, tx, tv, tl, K, d, logw, logpi, out)
        return out

    def score(self, X, y=None):
        """Mean test log-predictive per (non-empty) row; higher is better."""
        return float(np.mean(self.score_samples(X)))
