"""scikit-learn style estimators: MovMF (natural parameters), BregmanVMF (mean parameters), SphericalKMeans."""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp
from sklearn.exceptions import NotFittedError

from .core import _log_prob, component_scores, fit_vmf_mixture, spherical_kmeans, validate_unit_rows

__all__ = ["MovMF", "BregmanVMF", "SphericalKMeans"]


class _VMFMixtureBase:
    _parametrization = "natural"

    def _fit_kwargs(self):
        raise NotImplementedError

    def fit(self, X, y=None):
        res = fit_vmf_mixture(
            X, self.n_components, parametrization=self._parametrization, assignment=self.assignment,
            tied=self.tied, max_iter=self.max_iter, tol=self.tol, kappa_max=self.kappa_max,
            rng=self.random_state, init_mu=self.init_mu, **self._fit_kwargs())
        self.weights_ = res.weights
        self.mean_directions_ = res.directions
        self.mean_norms_ = res.mean_norms
        self.concentrations_ = res.concentrations
        self.means_ = res.directions * res.mean_norms[:, None]
        self.natural_params_ = res.directions * res.concentrations[:, None]
        self.log_likelihood_ = np.asarray(res.log_likelihood)
        self.iter_times_ = np.asarray(res.iter_times)
        self.n_iter_ = res.n_iter
        self.converged_ = res.converged
        self.labels_ = res.labels
        self.n_features_in_ = res.directions.shape[1]
        return self

    def _check_fitted(self, X):
        if not hasattr(self, "weights_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit(X) first")
        X = validate_unit_rows(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} columns but the model was fitted on {self.n_features_in_}")
        return X

    def _log_prob(self, X):
        X = self._check_fitted(X)
        kw = self._fit_kwargs()
        a, b = component_scores(self.n_features_in_, self.weights_, self.mean_norms_, self.concentrations_,
                                self._parametrization, kw.get("negentropy", "refined"),
                                kw.get("kappa_method", "newton"), self.kappa_max)
        return _log_prob(X, self.mean_directions_, a, b)

    def predict_proba(self, X):
        """Responsibilities r_ik = p(k | x_i), computed in the log domain."""
        L = self._log_prob(X)
        return np.exp(L - logsumexp(L, axis=1)[:, None])

    def predict(self, X):
        return np.argmax(self._log_prob(X), axis=1)

    def score_samples(self, X):
        """log p(x_i) under the mixture, density w.r.t. the surface measure of S^{d-1}."""
        return logsumexp(self._log_prob(X), axis=1)

    def score(self, X, y=None):
        """Mean log-likelihood per sample."""
        return float(np.mean(self.score_samples(X)))


class MovMF(_VMFMixtureBase):
    """Mixture of von Mises-Fisher distributions fitted by EM in natural parameters (Banerjee et al. 2005a).

    p(x) = sum_k w_k C_d(kappa_k) exp(kappa_k m_k^T x), natural parameter eta_k = kappa_k m_k.
    M-step: m_k = s_k/|s_k|, rbar_k = |s_k| / N_k, kappa_k = A_d^{-1}(rbar_k) (Newton/Halley on the
    Perron continued fraction), capped at kappa_max.

    Parameters
    ----------
    n_components : K, number of components.
    assignment : "soft" (EM) or "hard" (classification EM).
    tied : share one concentration kappa across components.
    max_iter, tol : iterations; relative log-likelihood tolerance (0 = always max_iter).
    kappa_max : cap on kappa (paper: 1e4).
    kappa_method : "newton" (full precision) or "halley_perron" (authors' 2 steps, 50 CF terms).
    random_state : seed or Generator of the random-partition initialisation (shared with BregmanVMF).
    init_mu : optional (K, d) initial mean parameters (overrides random_state).
    """

    _parametrization = "natural"

    def __init__(self, n_components=2, *, assignment="soft", tied=False, max_iter=100, tol=0.0,
                 kappa_max=1e4, kappa_method="newton", random_state=None, init_mu=None):
        self.n_components = n_components
        self.assignment = assignment
        self.tied = tied
        self.max_iter = max_iter
        self.tol = tol
        self.kappa_max = kappa_max
        self.kappa_method = kappa_method
        self.random_state = random_state
        self.init_mu = init_mu

    def _fit_kwargs(self):
        return {"kappa_method": self.kappa_method}


class BregmanVMF(_VMFMixtureBase):
    """Bregman clustering of vMF mixtures in mean parameters (Banerjee et al. 2005b; Nonnenmacher & Sahani 2024).

    log p(x | mu) = Psi(mu) + grad Psi(mu)^T (x - mu) (+ const) = -D_Psi(x || mu) + Psi(x) with the
    vMF negative entropy Psi(mu) = phi(|mu|); M-step: mu_k = sum_i r_ik x_i / sum_i r_ik (moment
    matching), |mu_k| capped at A_d(kappa_max).

    Parameters
    ----------
    negentropy : "refined" (the paper's closed forms psi~_1 for Psi and psi~'_2 for grad Psi),
        "exact" (root finding + log-Bessel), "banerjee" or "ode".
    tied : share one mean-parameter norm |mu_k| (equivalent to a shared kappa).
    Other parameters as in :class:`MovMF`.
    """

    _parametrization = "mean"

    def __init__(self, n_components=2, *, assignment="soft", tied=False, max_iter=100, tol=0.0,
                 kappa_max=1e4, negentropy="refined", random_state=None, init_mu=None):
        self.n_components = n_components
        self.assignment = assignment
        self.tied = tied
        self.max_iter = max_iter
        self.tol = tol
        self.kappa_max = kappa_max
        self.negentropy = negentropy
        self.random_state = random_state
        self.init_mu = init_mu

    def _fit_kwargs(self):
        return {"negentropy": self.negentropy}


class SphericalKMeans:
    """Spherical k-means: assign to the centroid of largest cosine similarity, renormalise centroids."""

    def __init__(self, n_components=2, *, max_iter=100, random_state=None, init_mu=None):
        self.n_components = n_components
        self.max_iter = max_iter
        self.random_state = random_state
        self.init_mu = init_mu

    def fit(self, X, y=None):
        self.labels_, self.cluster_centers_, self.n_iter_ = spherical_kmeans(
            X, self.n_components, max_iter=self.max_iter, rng=self.random_state, init_mu=self.init_mu)
        return self

    def predict(self, X):
        if not hasattr(self, "cluster_centers_"):
            raise NotFittedError("this SphericalKMeans is not fitted yet; call fit(X) first")
        X = validate_unit_rows(X)
        return np.argmax(np.asarray(X @ self.cluster_centers_.T), axis=1)
