"""Mixtures of von Mises-Fisher distributions: EM in natural parameters (movMF), Bregman
clustering in mean parameters, and spherical k-means.

Functional core (``fit_vmf_mixture``) + thin scikit-learn-style classes in ``estimators.py``.

Both parametrisations give per-component scores that are affine in the cosine similarity
c_ik = x_i . m_k (m_k the unit mean direction):

* natural (Banerjee et al. 2005a; VMF paper Sec. 3.1): log p_ik = log w_k + log C_d(kappa_k) + kappa_k c_ik,
  with kappa_k = A_d^{-1}(rbar_k) from Newton/Halley on the Perron continued fraction;
* mean (Banerjee et al. 2005b, Bregman clustering; VMF paper Sec. 3.1)::

      log p_ik = log w_k + Psi(mu_k) + grad Psi(mu_k) . (x_i - mu_k) - log|S^{d-1}|
               = log w_k + [phi(r_k) - phi'(r_k) r_k - log|S^{d-1}|] + phi'(r_k) c_ik,

  with mu_k the responsibility-weighted mean (moment matching), r_k = |mu_k|, phi the negative
  entropy (closed forms psi~_1, psi~'_2 of the paper by default).

With the exact negative entropy the two parametrisations give identical iterates; with the
closed forms they differ only by the approximation error. Everything runs on sparse CSR rows
(X @ M^T and X^T @ R), log-domain responsibilities.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp

from .kernels import class_sums, class_sums_labels, estep, ordered_sum
from ...special import (
    bessel_ratio,
    kappa_halley_perron,
    log_sphere_area,
    vmf_log_normalizer,
    vmf_mean_to_kappa,
    vmf_negentropy,
    vmf_negentropy_grad,
)

logger = logging.getLogger(__name__)

__all__ = ["validate_unit_rows", "init_partition_means", "fit_vmf_mixture", "VMFMixtureResult",
           "component_scores", "spherical_kmeans"]

ASSIGNMENTS = ("soft", "hard")
PARAMETRIZATIONS = ("natural", "mean")


def validate_unit_rows(X, atol=1e-6):
    """Return X as CSR float64 (or a C-contiguous float64 array) after checking it is a finite matrix of unit rows.

    Raises ValueError naming the offending row for NaN/inf, zero rows and rows whose norm is not 1.

    Parameters
    ----------
    X : scipy.sparse matrix or array_like of float, shape (n, d)
        The data, d >= 2.
    atol : float, default 1e-6
        Largest accepted | |x_i| - 1 |.

    Returns
    -------
    scipy.sparse.csr_matrix or ndarray of float64, shape (n, d)
        ``X`` as CSR float64 (sparse input) or a C-contiguous float64 array.
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        data = X.data
        if not np.all(np.isfinite(data)):
            bad = int(np.searchsorted(X.indptr, np.flatnonzero(~np.isfinite(data))[0], side="right") - 1)
            raise ValueError(f"X has a NaN or inf entry in row {bad}; clean the input (e.g. drop that document)")
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    else:
        X = np.ascontiguousarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-d (n_samples, d), got shape {X.shape}")
        if not np.all(np.isfinite(X)):
            bad = int(np.flatnonzero(~np.all(np.isfinite(X), axis=1))[0])
            raise ValueError(f"X has a NaN or inf entry in row {bad}; clean the input (e.g. drop that document)")
        norms = np.linalg.norm(X, axis=1)
    if X.shape[1] < 2:
        raise ValueError(f"X has d = {X.shape[1]} columns (n_features = {X.shape[1]}); a vMF on S^(d-1) needs d >= 2")
    zero = np.flatnonzero(norms == 0)
    if zero.size:
        raise ValueError(f"X row {int(zero[0])} is zero ({zero.size} zero rows in all); "
                         "drop empty documents before clustering")
    off = np.flatnonzero(np.abs(norms - 1.0) > atol)
    if off.size:
        raise ValueError(f"X row {int(off[0])} has norm {norms[off[0]]:.6g}, not 1 ({off.size} such rows); "
                         "l2-normalise the rows, e.g. sklearn.preprocessing.normalize(X)")
    return X


def _check_k(n_components, n):
    if not isinstance(n_components, (int, np.integer)) or n_components < 1:
        raise ValueError(f"n_components = {n_components!r}; pass a positive integer")
    if n_components > n:
        raise ValueError(f"n_components = {n_components} is larger than the number of samples {n}; "
                         f"use at most {n} components")


def _class_sums(X, R):
    """S = R^T X as a dense (K, d) array; X sparse or dense, R dense (n, K) or sparse one-hot."""
    if sp.issparse(R):
        S = R.T @ X
        return S.toarray() if sp.issparse(S) else np.asarray(S)
    if sp.issparse(X):
        return np.ascontiguousarray(np.asarray(X.T @ R).T)
    return R.T @ X


def init_partition_means(X, n_components, rng, uniform_norm=False):
    """The shared initialisation of every clustering method (ours: the VMF paper does not state it): random partition of the rows into K parts, mu_k = part mean.

    ``uniform_norm`` rescales every mu_k to the mean norm over k (used for hard and tied fits).
    Returns mu (K, d) dense.

    Parameters
    ----------
    X : scipy.sparse matrix or array_like of float, shape (n, d)
        The data, unit rows.
    n_components : int
        K, the number of parts (``numpy.array_split`` of a random permutation of the rows).
    rng : numpy.random.Generator
        The random source of the permutation.
    uniform_norm : bool, default False
        Rescale every mu_k to the mean norm.

    Returns
    -------
    ndarray of float64, shape (K, d)
        The part means mu_k (norms below 1).
    """
    n = X.shape[0]
    perm = rng.permutation(n)
    labels = np.empty(n, dtype=np.int64)
    for k, part in enumerate(np.array_split(perm, n_components)):
        labels[part] = k
    R = sp.csr_matrix((np.ones(n), (np.arange(n), labels)), shape=(n, n_components))
    sums = _class_sums(X, R)
    counts = np.bincount(labels, minlength=n_components).astype(np.float64)
    mu = sums / counts[:, None]
    if uniform_norm:
        norms = np.linalg.norm(mu, axis=1)
        mu *= (norms.mean() / norms)[:, None]
    return mu


def _kappa_from_r(r, d, kappa_method, kappa_max):
    r = np.minimum(np.asarray(r, dtype=np.float64), float(bessel_ratio(kappa_max, d=d)))
    if kappa_method == "newton":
        k = vmf_mean_to_kappa(r, d=d, method="newton")
    elif kappa_method == "halley_perron":
        k = kappa_halley_perron(r, d=d, n_steps=2, n_terms=50)  # the authors' M-step: 2 Halley steps, 50 CF terms
    elif kappa_method in ("banerjee", "refined2"):
        k = vmf_mean_to_kappa(r, d=d, method=kappa_method)
    else:
        raise ValueError(f"kappa_method = {kappa_method!r}; use 'newton', 'halley_perron', 'banerjee' or 'refined2'")
    return np.minimum(np.atleast_1d(k), kappa_max)


def component_scores(d, weights, r, kappa_or_none, parametrization, negentropy, kappa_method, kappa_max):
    """(a_k, b_k) with log p_ik = a_k + b_k (x_i . m_k) for both parametrisations (Hausdorff measure).

    Natural: a_k = log w_k + log C_d(kappa_k), b_k = kappa_k. Mean: a_k = log w_k + phi(r_k) - phi'(r_k) r_k
    - log |S^{d-1}|, b_k = phi'(r_k) (the Bregman form, VMF paper Sec. 3.1).

    Parameters
    ----------
    d : int
        Dimension.
    weights : ndarray of float64, shape (K,)
        Mixture weights w_k.
    r : ndarray of float64, shape (K,)
        Mean norms r_k (used by the mean parametrisation).
    kappa_or_none : ndarray of float64, shape (K,), or None
        Concentrations kappa_k (natural parametrisation; None for the mean one).
    parametrization : {"natural", "mean"}
        Which form of the density.
    negentropy : {"refined", "exact", "banerjee", "ode"}
        Method of phi and phi' (mean parametrisation).
    kappa_method : str
        Not used here (kept for a uniform call).
    kappa_max : float
        Not used here (kept for a uniform call).

    Returns
    -------
    a : ndarray of float64, shape (K,)
        The offsets a_k.
    b : ndarray of float64, shape (K,)
        The slopes b_k (kappa_k or phi'(r_k)).
    """
    with np.errstate(divide="ignore"):
        logw = np.log(weights)
    if parametrization == "natural":
        kappa = kappa_or_none
        return logw + np.asarray(vmf_log_normalizer(kappa, d=d)), kappa
    # mean parametrisation: Psi and grad Psi of mu_k from the chosen negative-entropy method
    grad_method = {"refined": "refined", "exact": "exact", "banerjee": "banerjee", "ode": "ode"}[negentropy]
    if negentropy == "ode":
        phi, g = vmf_negentropy(r, d=d, method="ode"), vmf_negentropy_grad(r, d=d, method="ode")
    else:
        phi = vmf_negentropy(r, d=d, method=negentropy)
        g = vmf_negentropy_grad(r, d=d, method=grad_method)
    phi = np.atleast_1d(phi)
    g = np.atleast_1d(g)
    return logw + phi - g * r - log_sphere_area(d), g


@dataclass
class VMFMixtureResult:
    """The fitted parameters and trace of :func:`fit_vmf_mixture`.

    A dataclass: each parameter is kept as the attribute of the same name.

    Parameters
    ----------
    weights : ndarray of float64, shape (K,)
        Mixture weights w_k.
    directions : ndarray of float64, shape (K, d)
        Mean directions m_k, unit rows.
    mean_norms : ndarray of float64, shape (K,)
        r_k = |mu_k| (mean parametrisation) or A_d(kappa_k).
    concentrations : ndarray of float64, shape (K,)
        kappa_k = phi'(r_k).
    log_likelihood : list of float, default []
        Per iteration (soft: marginal; hard: classification).
    iter_times : list of float, default []
        Wall seconds per iteration.
    n_iter : int, default 0
        Iterations run.
    converged : bool, default False
        Whether the relative change of the log-likelihood fell to at most ``tol`` (which stops the fit).
    labels : ndarray of int, shape (n,), optional
        The component of largest responsibility of each row, under the final parameters.
    resp : ndarray of float64, shape (n, K), optional
        The responsibilities under the final parameters.
    """

    weights: np.ndarray          # w_k
    directions: np.ndarray       # m_k, (K, d) unit rows
    mean_norms: np.ndarray       # r_k = |mu_k| (mean parametrisation) or A_d(kappa_k)
    concentrations: np.ndarray   # kappa_k = phi'(r_k)
    log_likelihood: list = field(default_factory=list)  # per iteration (soft: marginal; hard: classification)
    iter_times: list = field(default_factory=list)      # wall seconds per iteration
    n_iter: int = 0
    converged: bool = False
    labels: np.ndarray | None = None
    resp: np.ndarray | None = None


def _log_prob(X, directions, a, b):
    C = X @ directions.T  # (n, K) cosine similarities; sparse-dense product, no densifying of X
    C = np.asarray(C)
    return a[None, :] + C * b[None, :]


def fit_vmf_mixture(X, n_components, *, parametrization="natural", assignment="soft", tied=False,
                    max_iter=100, tol=0.0, kappa_max=1e4, kappa_method="newton", negentropy="refined",
                    rng=None, init_mu=None):
    """EM for a mixture of vMF distributions on the rows of X (unit vectors).

    Parameters
    ----------
    X : scipy.sparse matrix or array_like of float, shape (n, d)
        The data, unit rows.
    n_components : int
        K, the number of components.
    parametrization : {"natural", "mean"}, default "natural"
        ``"natural"`` (movMF, kappa by root finding) or ``"mean"`` (Bregman clustering,
        moment matching + negative entropy).
    assignment : {"soft", "hard"}, default "soft"
        ``"soft"`` (EM) or ``"hard"`` (classification EM).
    tied : bool, default False
        Shared concentration kappa (natural) / shared |mu| (mean); the M-step maximises the tied
        objective: A_d(kappa) = sum_k |s_k| / n, i.e. |mu| = sum_k N_k r_k / n for both.
    max_iter : int, default 100
        EM iterations.
    tol : float, default 0.0
        Stop when the relative log-likelihood change is at most tol (0: run max_iter iterations).
    kappa_max : float, default 1e4
        Cap on kappa (natural) and on |mu| <= A_d(kappa_max) (mean).
    kappa_method : str, default "newton"
        Natural M-step root finder: ``"newton"`` (to full precision) or ``"halley_perron"``
        (the authors' 2 Halley steps, 50 CF terms); also ``"banerjee"``, ``"refined2"`` (closed forms).
    negentropy : {"refined", "exact", "banerjee", "ode"}, default "refined"
        Mean-parametrisation Psi, grad Psi: ``"refined"`` (psi~_1, psi~'_2), ``"exact"``,
        ``"banerjee"`` or ``"ode"``.
    rng : numpy.random.Generator, int or None, optional
        Generator or seed (for the random-partition initialisation); ``init_mu`` overrides it.
    init_mu : array_like of float, shape (K, d), optional
        Initial mean parameters mu_k (their norms are capped at A_d(kappa_max)).

    Returns
    -------
    VMFMixtureResult
        The fitted parameters, the per-iteration log-likelihoods and times, and the labels and
        responsibilities of the rows of X under the final parameters.
    """
    if parametrization not in PARAMETRIZATIONS:
        raise ValueError(f"parametrization = {parametrization!r}; use 'natural' or 'mean'")
    if assignment not in ASSIGNMENTS:
        raise ValueError(f"assignment = {assignment!r}; use 'soft' or 'hard'")
    if negentropy not in ("refined", "exact", "banerjee", "ode"):
        raise ValueError(f"negentropy = {negentropy!r}; use 'refined', 'exact', 'banerjee' or 'ode'")
    if not (kappa_max > 0):
        raise ValueError(f"kappa_max = {kappa_max}; pass a positive cap, e.g. 1e4")
    if not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"max_iter = {max_iter!r}; pass a positive integer")
    if isinstance(tol, (bool, np.bool_)) or not isinstance(tol, (int, float, np.integer, np.floating)):
        raise TypeError(f"tol = {tol!r}; pass a number >= 0 (0: always run max_iter iterations)")
    if not (np.isfinite(tol) and tol >= 0):
        raise ValueError(f"tol = {tol!r}; pass a finite number >= 0 (0: always run max_iter iterations)")
    X = validate_unit_rows(X)
    X = X if sp.issparse(X) else sp.csr_matrix(X)
    X.sort_indices()
    XT = X.T.tocsr()
    XT.sort_indices()
    n, d = X.shape
    _check_k(n_components, n)
    K = int(n_components)
    rng = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
    mu_max = float(bessel_ratio(kappa_max, d=d))
    mu0 = init_partition_means(X, K, rng, uniform_norm=(assignment == "hard" or tied)) if init_mu is None \
        else np.array(init_mu, dtype=np.float64)
    if mu0.shape != (K, d):
        raise ValueError(f"init_mu has shape {mu0.shape}; expected ({K}, {d})")
    r = np.minimum(np.linalg.norm(mu0, axis=1), mu_max)
    directions = mu0 / np.linalg.norm(mu0, axis=1)[:, None]
    weights = np.full(K, 1.0 / K)
    kappa = _kappa_from_r(r, d, kappa_method, kappa_max) if parametrization == "natural" else None
    res = VMFMixtureResult(weights, directions, r, kappa)
    prev = -np.inf
    for it in range(max_iter):
        t0 = time.perf_counter()
        # ---- E-step (log domain)
        a, b = component_scores(d, weights, r, kappa, parametrization, negentropy, kappa_method, kappa_max)
        Mt = np.ascontiguousarray(directions.T)
        R, ll_rows = estep(X.indptr, X.indices, X.data, Mt, np.ascontiguousarray(a, dtype=np.float64),
                               np.ascontiguousarray(b, dtype=np.float64), assignment == "soft")
        ll = float(ordered_sum(ll_rows))
        # ---- M-step
        Nk = R.sum(axis=0)
        if assignment == "soft":
            S = class_sums(XT.indptr, XT.indices, XT.data, R).T  # (K, d) sums s_k
        else:  # one-hot R: sums by label, one term per entry (bit-identical to the dense sums)
            S = class_sums_labels(XT.indptr, XT.indices, XT.data, np.argmax(R, axis=1), K).T
        snorm = np.linalg.norm(S, axis=1)
        alive = (Nk > 0) & (snorm > 0)
        weights = Nk / n
        directions = directions.copy()
        directions[alive] = S[alive] / snorm[alive, None]
        r_new = r.copy()
        if tied:
            r_new[:] = min(snorm.sum() / n, mu_max)
        else:
            r_new[alive] = np.minimum(snorm[alive] / Nk[alive], mu_max)
        r = r_new
        if parametrization == "natural":
            kappa = _kappa_from_r(r, d, kappa_method, kappa_max)
        res.log_likelihood.append(ll)
        res.iter_times.append(time.perf_counter() - t0)
        res.n_iter = it + 1
        if tol > 0 and np.isfinite(prev) and abs(ll - prev) <= tol * abs(ll):
            res.converged = True
            break
        prev = ll
    res.weights, res.directions, res.mean_norms = weights, directions, r
    res.concentrations = kappa if parametrization == "natural" else np.atleast_1d(
        vmf_negentropy_grad(r, d=d, method={"refined": "refined", "exact": "exact", "banerjee": "banerjee",
                                            "ode": "ode"}[negentropy]))
    a, b = component_scores(d, weights, r, kappa, parametrization, negentropy, kappa_method, kappa_max)
    L = _log_prob(X, directions, a, b)
    res.labels = np.argmax(L, axis=1)
    res.resp = np.exp(L - logsumexp(L, axis=1)[:, None])
    logger.debug("vMF mixture %s/%s tied=%s: %d iterations, LL %.6g", parametrization, assignment, tied,
                 res.n_iter, res.log_likelihood[-1])
    return res


def spherical_kmeans(X, n_components, *, max_iter=100, rng=None, init_mu=None):
    """Spherical k-means (Dhillon & Modha 2001): cosine-similarity assignment, centroids renormalised.

    Returns (labels, centroids (K, d), n_iter). Same random-partition initialisation as the mixtures.

    Parameters
    ----------
    X : scipy.sparse matrix or array_like of float, shape (n, d)
        The data, unit rows.
    n_components : int
        K, the number of clusters.
    max_iter : int, default 100
        Iterations (the fit stops earlier when the labels no longer change).
    rng : numpy.random.Generator, int or None, optional
        Generator or seed of the initialisation.
    init_mu : array_like of float, shape (K, d), optional
        Initial centroids (normalised here); overrides the random partition.

    Returns
    -------
    labels : ndarray of int, shape (n,)
        The cluster of every row.
    centroids : ndarray of float64, shape (K, d)
        Unit centroids.
    n_iter : int
        Iterations run.
    """
    X = validate_unit_rows(X)
    n, d = X.shape
    _check_k(n_components, n)
    K = int(n_components)
    rng = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
    mu0 = init_partition_means(X, K, rng) if init_mu is None else np.asarray(init_mu, dtype=np.float64)
    C = mu0 / np.linalg.norm(mu0, axis=1)[:, None]
    labels = np.full(n, -1)
    it = 0
    for it in range(1, max_iter + 1):
        new = np.argmax(np.asarray(X @ C.T), axis=1)
        if np.array_equal(new, labels):
            break
        labels = new
        R = sp.csr_matrix((np.ones(n), (np.arange(n), labels)), shape=(n, K))
        S = _class_sums(X, R)
        norms = np.linalg.norm(S, axis=1)
        ok = norms > 0
        C[ok] = S[ok] / norms[ok, None]
    return labels, C, it
