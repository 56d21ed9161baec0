"""EM vs stochastic EM (SEM) for a Gaussian mixture (ESCA App. A and App. F, eqs. 71-73).

The two algorithms::

    EM:  E: r_ik propto theta_k N(x_i | mu_k, Sigma_k);  M: MAP updates with the soft counts.
    SEM: E as above; S: z_i ~ Cat(r_i); M: the same MAP updates with hard counts (eq. 73):
         theta_k = (n_k + a - 1)/(n + K a - K),  mu_k = (kappa0 mu0 + sum_{z_i=k} x_i)/(kappa0 + n_k),
         Sigma_k = (Psi0 + kappa0 mu0 mu0^T + sum_{z_i=k} x_i x_i^T - (kappa0 + n_k) mu_k mu_k^T)/(nu0 + d + 2 + n_k).

Default priors (weak; the ESCA paper states none): a = 1, kappa0 = 0.01, mu0 = data mean,
Psi0 = 0.01 I, nu0 = 0. An empty component keeps its previous parameters.
Both use the same M-step so that the only difference is soft vs sampled assignments.
Initialisation: :func:`init_kmeanspp` (k-means++ seeding), or any means through :func:`init_from_means`.
"""

from __future__ import annotations

import logging
from typing import NamedTuple

import numpy as np
from scipy.special import logsumexp

from ..utils import blas_thread_limit

logger = logging.getLogger(__name__)

__all__ = ["GMMParams", "fit_em_sem", "gmm_loglik", "init_from_means", "init_kmeanspp", "kmeanspp_means"]


class GMMParams(NamedTuple):
    """Parameters of a Gaussian mixture with K components in R^d (a NamedTuple).

    Parameters
    ----------
    weights : ndarray of float64, shape (K,)
        Mixture weights theta_k.
    means : ndarray of float64, shape (K, d)
        Component means mu_k.
    covs : ndarray of float64, shape (K, d, d)
        Component covariance matrices Sigma_k.
    """

    weights: np.ndarray  # (K,)
    means: np.ndarray  # (K, d)
    covs: np.ndarray  # (K, d, d)


def _log_resp(X, p: GMMParams):
    """log theta_k + log N(x_i | mu_k, Sigma_k), (n, K), vectorised over points and components.

    The Mahalanobis form (x - mu)^T P (x - mu), P = Sigma^{-1}, is expanded as
    x^T P x - 2 mu^T P x + mu^T P mu, i.e. one (n, d(d+1)/2 + d) x (.., K) matrix product."""
    K, d = p.means.shape
    n = X.shape[0]
    iu, ju = np.triu_indices(d)
    L = np.linalg.cholesky(p.covs)  # (K, d, d)
    P = np.linalg.inv(p.covs)
    P = 0.5 * (P + np.transpose(P, (0, 2, 1)))
    mult = np.where(iu == ju, 1.0, 2.0)
    F = np.empty((n, iu.size + d))
    F[:, : iu.size] = X[:, iu] * X[:, ju]
    F[:, iu.size :] = X
    Pm = np.einsum("kij,kj->ki", P, p.means)  # P mu
    coef = np.empty((iu.size + d, K))
    coef[: iu.size] = (-0.5 * P[:, iu, ju] * mult).T
    coef[iu.size :] = Pm.T
    const = (-0.5 * np.einsum("ki,ki->k", p.means, Pm) + np.log(np.maximum(p.weights, 1e-300))
             - np.log(np.diagonal(L, axis1=1, axis2=2)).sum(1) - 0.5 * d * np.log(2 * np.pi))
    out = F @ coef
    out += const
    return out


def gmm_loglik(X, p: GMMParams) -> float:
    """Mean log-likelihood per point of X under the mixture.

    Parameters
    ----------
    X : ndarray of float64, shape (n, d)
        The data points.
    p : GMMParams
        The mixture.

    Returns
    -------
    float
        (1/n) sum_i log sum_k theta_k N(x_i | mu_k, Sigma_k), in nats.
    """
    return float(logsumexp(_log_resp(X, p), axis=1).mean())


def kmeanspp_means(X, n_components, rng, subsample=5000):
    """k-means++ seeding (Arthur & Vassilvitskii 2007) on a random subsample of ``subsample`` rows of X:
    the first centre uniform, each next one drawn with probability proportional to the squared
    distance to the nearest centre so far. Returns the (n_components, d) centres.

    Parameters
    ----------
    X : ndarray of float64, shape (n, d)
        The data points.
    n_components : int
        K, the number of centres.
    rng : numpy.random.Generator
        The random source.
    subsample : int, default 5000
        Rows of X drawn (without replacement) to seed from; all rows when X has fewer.

    Returns
    -------
    ndarray of float64, shape (n_components, d)
        The centres (rows of X).
    """
    K = n_components
    Xs = X[rng.choice(X.shape[0], size=min(subsample, X.shape[0]), replace=False)]
    means = [Xs[rng.integers(Xs.shape[0])]]
    d2 = ((Xs - means[0]) ** 2).sum(1)
    for _ in range(1, K):
        c = Xs[rng.choice(Xs.shape[0], p=d2 / d2.sum())]
        means.append(c)
        d2 = np.minimum(d2, ((Xs - c) ** 2).sum(1))
    return np.array(means)


def init_from_means(X, means) -> GMMParams:
    """Mixture parameters from given means: uniform weights, every covariance the data covariance
    (+ 1e-6 I).

    Parameters
    ----------
    X : ndarray of float64, shape (n, d)
        The data points.
    means : ndarray of float64, shape (K, d)
        The component means.

    Returns
    -------
    GMMParams
        Weights 1/K, the given means, K copies of cov(X) + 1e-6 I.
    """
    K, d = means.shape[0], X.shape[1]
    cov = np.cov(X.T) + 1e-6 * np.eye(d)
    return GMMParams(np.full(K, 1.0 / K), means, np.repeat(cov[None], K, axis=0))


def init_kmeanspp(X, n_components, rng, subsample=5000) -> GMMParams:
    """The usual initialisation: k-means++ means (:func:`kmeanspp_means`), data covariance, uniform weights.

    Parameters
    ----------
    X : ndarray of float64, shape (n, d)
        The data points.
    n_components : int
        K.
    rng : numpy.random.Generator
        The random source of the seeding.
    subsample : int, default 5000
        As in :func:`kmeanspp_means`.

    Returns
    -------
    GMMParams
        The initial mixture (:func:`init_from_means`).
    """
    return init_from_means(X, kmeanspp_means(X, n_components, rng, subsample))


def _stats_soft(X, R):
    """Soft sufficient statistics (n_k, sum_i r_ik x_i, sum_i r_ik x_i x_i^T) of the EM M-step."""
    n, d = X.shape
    K = R.shape[1]
    sxx = np.empty((K, d, d))
    # second moments as d(d+1)/2 matrix-vector products (a 3-operand einsum materialised an
    # (n, K, d, d)-sized intermediate and dominated the iteration time)
    for i in range(d):
        for j in range(i, d):
            sxx[:, i, j] = R.T @ (X[:, i] * X[:, j])
            sxx[:, j, i] = sxx[:, i, j]
    return R.sum(0), R.T @ X, sxx


def _stats_hard(X, z, K):
    """The same statistics for hard assignments z (SEM): counts and sums over the points with z_i = k."""
    n, d = X.shape
    nk = np.bincount(z, minlength=K).astype(np.float64)
    sx = np.empty((K, d))
    sxx = np.empty((K, d, d))
    for i in range(d):
        sx[:, i] = np.bincount(z, weights=X[:, i], minlength=K)
        for j in range(i, d):
            sxx[:, i, j] = np.bincount(z, weights=X[:, i] * X[:, j], minlength=K)
            sxx[:, j, i] = sxx[:, i, j]
    return nk, sx, sxx


def _m_step_stats(stats, n, prev: GMMParams, a, kappa0, mu0, Psi0, nu0):
    nk, sx, sxx_all = stats
    K, d = sx.shape
    w = (nk + a - 1) / (n + K * a - K)
    w = np.maximum(w, 0)
    w /= w.sum()
    means = prev.means.copy()
    covs = prev.covs.copy()
    for k in range(K):
        if nk[k] < 1e-8:
            continue  # empty component: keep previous parameters
        mu = (kappa0 * mu0 + sx[k]) / (kappa0 + nk[k])
        S = (Psi0 + kappa0 * np.outer(mu0, mu0) + sxx_all[k] - (kappa0 + nk[k]) * np.outer(mu, mu)) / (nu0 + d + 2 + nk[k])
        means[k] = mu
        covs[k] = 0.5 * (S + S.T)
    return GMMParams(w, means, covs)


def _m_step(X, R, prev: GMMParams, a, kappa0, mu0, Psi0, nu0):
    """MAP M-step (eq. 73) from responsibilities R (one-hot rows for SEM)."""
    return _m_step_stats(_stats_soft(X, R), X.shape[0], prev, a, kappa0, mu0, Psi0, nu0)


def fit_em_sem(X, X_test, init: GMMParams, method: str, n_iter: int, seed: int, *, a=1.0, kappa0=0.01,
               psi0=0.01, nu0=0.0):
    """Run EM or SEM for ``n_iter`` iterations from ``init``; returns (final params, list of records
    with iteration, test and train mean log-likelihood).

    The MAP M-step of the module docstring (ESCA App. F, eq. 73 for SEM) with the prior mean mu0 the
    mean of ``X`` and Psi0 = psi0 I.

    Parameters
    ----------
    X : ndarray of float64, shape (n, d)
        The data points.
    X_test : ndarray of float64, shape (n_test, d)
        Held-out points, scored after every iteration.
    init : GMMParams
        The initial mixture.
    method : {"EM", "SEM"}
        Soft (EM) or sampled (SEM) assignments.
    n_iter : int
        Number of iterations.
    seed : int
        Seed of the SEM assignment draws (``numpy.random.default_rng``).
    a : float, default 1.0
        Dirichlet prior of the weights.
    kappa0 : float, default 0.01
        Prior strength of the means.
    psi0 : float, default 0.01
        Scale of the inverse-Wishart prior matrix Psi0 = psi0 I.
    nu0 : float, default 0.0
        Prior degrees of freedom.

    Returns
    -------
    params : GMMParams
        The mixture after ``n_iter`` iterations.
    history : list of dict
        One record per iteration 0..n_iter: ``iteration``, ``test_ll`` (mean log-likelihood of
        ``X_test``) and ``train_ll`` (mean log-likelihood of ``X`` under the same parameters).
    """
    if method not in ("EM", "SEM"):
        raise ValueError(f"method must be 'EM' or 'SEM', got {method!r}")
    rng = np.random.default_rng(seed)
    mu0 = X.mean(0)
    Psi0 = psi0 * np.eye(X.shape[1])
    n = X.shape[0]
    p = init
    # one BLAS thread: small (n x K x d) products and d x d factorisations, whose idle OpenBLAS workers would
    # spin on the cores other jobs need
    with blas_thread_limit(1):
        hist = [{"iteration": 0, "test_ll": gmm_loglik(X_test, p)}]
        for it in range(1, n_iter + 1):
            R = _log_resp(X, p)
            m = R.max(axis=1, keepdims=True)
            R -= m
            np.exp(R, out=R)
            s = R.sum(axis=1, keepdims=True)
            hist[-1]["train_ll"] = float((m + np.log(s)).mean())  # train LL of the parameters this E-step used
            R /= s
            if method == "SEM":
                u = rng.random(n)[:, None]
                z = (np.cumsum(R, axis=1) < u).sum(1)
                z = np.minimum(z, R.shape[1] - 1)
                stats = _stats_hard(X, z, R.shape[1])
            else:
                stats = _stats_soft(X, R)
            p = _m_step_stats(stats, n, p, a, kappa0, mu0, Psi0, nu0)
            hist.append({"iteration": it, "test_ll": gmm_loglik(X_test, p)})
        hist[-1]["train_ll"] = gmm_loglik(X, p)
    return p, hist
