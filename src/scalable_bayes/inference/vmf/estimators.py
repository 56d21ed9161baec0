"""scikit-learn estimators: MovMF (natural parameters), BregmanVMF (mean parameters), SphericalKMeans.

The two mixtures follow ``sklearn.mixture.GaussianMixture``: ``fit`` / ``fit_predict`` / ``predict`` /
``predict_proba`` / ``score_samples`` / ``score`` / ``bic`` / ``aic`` / ``sample``, ``n_init`` restarts
(the best by log-likelihood is kept), ``tol`` ending the fit (``converged_``, ``n_iter_``). Rows of X must be
unit vectors (points of the sphere S^{d-1}); densities are with respect to its surface measure.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClusterMixin, DensityMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .core import _check_k, _log_prob, component_scores, fit_vmf_mixture, spherical_kmeans, validate_unit_rows

__all__ = ["MovMF", "BregmanVMF", "SphericalKMeans"]


def _check_unit_input(est, X, reset):
    """``validate_data`` (feature-count bookkeeping, scikit-learn's messages), the rows l2-normalised if the
    estimator's ``normalize`` is set, then the unit-row check."""
    X = validate_data(est, X, accept_sparse="csr", dtype=np.float64, reset=reset)
    if est.normalize:
        from sklearn.preprocessing import normalize

        X = normalize(X)
    return validate_unit_rows(X)


def _tags(tags):
    tags.input_tags.sparse = True
    return tags


class _VMFMixtureBase(ClusterMixin, DensityMixin, BaseEstimator):
    _parametrization = "natural"

    def _fit_kwargs(self):
        raise NotImplementedError

    def __sklearn_tags__(self):
        return _tags(super().__sklearn_tags__())

    def fit(self, X, y=None):
        """Fit the mixture by EM (``n_init`` random-partition starts, the best by log-likelihood kept).

        Parameters
        ----------
        X : sparse matrix or array of shape (n_samples, d)
            Rows of unit l2 norm (e.g. ``sklearn.preprocessing.normalize`` of tf-idf vectors).
        y : ignored

        Returns
        -------
        self
        """
        X = _check_unit_input(self, X, reset=True)
        n_init = self.n_init
        if isinstance(n_init, (bool, np.bool_)) or not isinstance(n_init, (int, np.integer)) or n_init < 1:
            raise ValueError(f"n_init = {n_init!r}; pass a positive integer (the number of EM starts)")
        _check_k(self.n_components, X.shape[0])
        # one Generator for all starts: with n_init = 1 and an int seed, the same start as before n_init existed
        rng = self.random_state if isinstance(self.random_state, np.random.Generator) \
            else np.random.default_rng(self.random_state)
        best, best_ll = None, -np.inf
        for _ in range(int(n_init)):
            res = fit_vmf_mixture(
                X, self.n_components, parametrization=self._parametrization, assignment=self.assignment,
                tied=self.tied, max_iter=self.max_iter, tol=self.tol, kappa_max=self.kappa_max,
                rng=rng, init_mu=self.init_mu, **self._fit_kwargs())
            if n_init == 1:
                best = res
                break
            ll = float(np.sum(logsumexp(self._log_prob_of(X, res.weights, res.mean_norms, res.concentrations,
                                                          res.directions), axis=1)))
            if best is None or ll > best_ll:
                best, best_ll = res, ll
        res = best
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
        return self

    def _log_prob_of(self, X, weights, mean_norms, concentrations, directions):
        kw = self._fit_kwargs()
        a, b = component_scores(X.shape[1], weights, mean_norms, concentrations, self._parametrization,
                                kw.get("negentropy", "refined"), kw.get("kappa_method", "newton"), self.kappa_max)
        return _log_prob(X, directions, a, b)

    def _log_prob(self, X):
        check_is_fitted(self, "weights_")
        X = _check_unit_input(self, X, reset=False)
        return self._log_prob_of(X, self.weights_, self.mean_norms_, self.concentrations_, self.mean_directions_)

    def predict_proba(self, X):
        """Responsibilities r_ik = p(k | x_i), computed in the log domain."""
        L = self._log_prob(X)
        return np.exp(L - logsumexp(L, axis=1)[:, None])

    def predict(self, X):
        """The component of largest posterior probability for each row of X."""
        return np.argmax(self._log_prob(X), axis=1)

    def score_samples(self, X):
        """log p(x_i) under the mixture, density w.r.t. the surface measure of S^{d-1}."""
        return logsumexp(self._log_prob(X), axis=1)

    def score(self, X, y=None):
        """Mean log-likelihood per sample (higher is better)."""
        return float(np.mean(self.score_samples(X)))

    def _n_parameters(self) -> int:
        """Free parameters: K (d - 1) for the mean directions (unit vectors: d - 1 each), K concentrations
        (1 when ``tied``), K - 1 weights (they sum to one)."""
        check_is_fitted(self, "weights_")
        K, d = self.mean_directions_.shape
        return K * (d - 1) + (1 if self.tied else K) + K - 1

    def bic(self, X):
        """Bayesian information criterion on X: -2 log L + p log n (lower is better), p the free parameters:
        K (d - 1) mean directions (each a point of S^{d-1}), K concentrations (1 if ``tied``), K - 1 weights."""
        s = self.score_samples(X)
        return float(-2.0 * s.sum() + self._n_parameters() * np.log(s.size))

    def aic(self, X):
        """Akaike information criterion on X: -2 log L + 2 p (lower is better), p as in :meth:`bic`."""
        return float(-2.0 * self.score_samples(X).sum() + 2.0 * self._n_parameters())

    def sample(self, n_samples=1):
        """Draw ``n_samples`` points from the fitted mixture.

        Component counts are multinomial in ``weights_``; the points of component k are exact vMF draws
        (mean direction m_k, concentration kappa_k; Wood's 1994 rejection sampler,
        :meth:`scalable_bayes.distributions.VonMisesFisher.rvs`). The generator is ``random_state`` (an int gives the
        same draws on every call, as in ``GaussianMixture``).

        Returns
        -------
        X : ndarray of shape (n_samples, d), unit rows, grouped by component
        labels : ndarray of shape (n_samples,), the component of each row
        """
        from ...distributions import VonMisesFisher

        check_is_fitted(self, "weights_")
        if isinstance(n_samples, (bool, np.bool_)) or not isinstance(n_samples, (int, np.integer)) or n_samples < 1:
            raise ValueError(f"n_samples = {n_samples!r}; pass a positive integer")
        rng = self.random_state if isinstance(self.random_state, np.random.Generator) \
            else np.random.default_rng(self.random_state)
        w = np.asarray(self.weights_, dtype=np.float64)
        counts = rng.multinomial(int(n_samples), w / w.sum())
        d = self.mean_directions_.shape[1]
        X = np.empty((int(n_samples), d))
        labels = np.repeat(np.arange(w.size), counts)
        start = 0
        for k, c in enumerate(counts):
            if c:
                vmf = VonMisesFisher(self.mean_directions_[k], float(self.concentrations_[k]))
                X[start:start + c] = vmf.rvs(int(c), random_state=rng)
                start += c
        return X, labels


class MovMF(_VMFMixtureBase):
    """Mixture of von Mises-Fisher distributions fitted by EM in natural parameters (Banerjee et al. 2005a).

    p(x) = sum_k w_k C_d(kappa_k) exp(kappa_k m_k^T x), natural parameter eta_k = kappa_k m_k.
    M-step: m_k = s_k/|s_k|, rbar_k = |s_k| / N_k, kappa_k = A_d^{-1}(rbar_k) (Newton/Halley on the
    Perron continued fraction), capped at kappa_max.

    Parameters
    ----------
    n_components : int, default 2
        K, the number of components.
    assignment : {"soft", "hard"}
        EM or classification EM.
    tied : bool
        Share one concentration kappa across components.
    max_iter : int, default 100
        EM iterations per start.
    tol : float, default 0.0
        The fit stops (``converged_`` True) when the relative change of the log-likelihood between
        iterations is at most tol; 0 always runs ``max_iter`` iterations (the default, which the VMF
        paper's timings use). ``n_iter_`` is the number run.
    kappa_max : float
        Cap on kappa (paper: 1e4).
    kappa_method : {"newton", "halley_perron"}
        Full precision, or the authors' 2 steps on 50 continued-fraction terms.
    random_state : None, int or numpy Generator
        The random-partition initialisation (shared with BregmanVMF) and :meth:`sample`.
    init_mu : (K, d) array or None
        Initial mean parameters (overrides random_state's initialisation).
    n_init : int, default 1
        Number of starts (each a new random partition from the same generator); the one of largest
        log-likelihood of X under its final parameters is kept.
    normalize : bool, default False
        l2-normalise the rows of X (in fit and in every method taking X) instead of refusing rows whose
        norm is not 1; zero rows are refused either way.
    """

    _parametrization = "natural"

    def __init__(self, n_components=2, *, assignment="soft", tied=False, max_iter=100, tol=0.0,
                 kappa_max=1e4, kappa_method="newton", random_state=None, init_mu=None, n_init=1,
                 normalize=False):
        self.n_components = n_components
        self.assignment = assignment
        self.tied = tied
        self.max_iter = max_iter
        self.tol = tol
        self.kappa_max = kappa_max
        self.kappa_method = kappa_method
        self.random_state = random_state
        self.init_mu = init_mu
        self.n_init = n_init
        self.normalize = normalize

    def _fit_kwargs(self):
        return {"kappa_method": self.kappa_method}


class BregmanVMF(_VMFMixtureBase):
    """Bregman clustering of vMF mixtures in mean parameters (Banerjee et al. 2005b; Nonnenmacher & Sahani 2024).

    log p(x | mu) = Psi(mu) + grad Psi(mu)^T (x - mu) (+ const) = -D_Psi(x || mu) + Psi(x) with the
    vMF negative entropy Psi(mu) = phi(|mu|); M-step: mu_k = sum_i r_ik x_i / sum_i r_ik (moment
    matching), |mu_k| capped at A_d(kappa_max).

    Parameters
    ----------
    n_components : int, default 2
        K, the number of components.
    assignment : {"soft", "hard"}, default "soft"
        EM or classification EM (as in :class:`MovMF`).
    tied : bool, default False
        Share one mean-parameter norm |mu_k| (equivalent to a shared kappa).
    max_iter : int, default 100
        EM iterations per start.
    tol : float, default 0.0
        Relative change of the log-likelihood at which the fit stops, as in :class:`MovMF` (0: always
        ``max_iter`` iterations).
    kappa_max : float, default 1e4
        Cap on kappa: |mu_k| is capped at A_d(kappa_max).
    negentropy : {"refined", "exact", "banerjee", "ode"}, default "refined"
        "refined" is the paper's closed forms psi~_1 for Psi and psi~'_2 for grad Psi; "exact" root
        finding + log-Bessel.
    random_state : None, int or numpy Generator, default None
        The random-partition initialisation (shared with :class:`MovMF`) and :meth:`sample`.
    init_mu : array_like of float, shape (K, d), optional
        Initial mean parameters (overrides random_state's initialisation).
    n_init : int, default 1
        Number of starts; the one of largest log-likelihood is kept (as in :class:`MovMF`).
    normalize : bool, default False
        l2-normalise the rows of X instead of refusing rows whose norm is not 1 (as in :class:`MovMF`).
    """

    _parametrization = "mean"

    def __init__(self, n_components=2, *, assignment="soft", tied=False, max_iter=100, tol=0.0,
                 kappa_max=1e4, negentropy="refined", random_state=None, init_mu=None, n_init=1,
                 normalize=False):
        self.n_components = n_components
        self.assignment = assignment
        self.tied = tied
        self.max_iter = max_iter
        self.tol = tol
        self.kappa_max = kappa_max
        self.negentropy = negentropy
        self.random_state = random_state
        self.init_mu = init_mu
        self.n_init = n_init
        self.normalize = normalize

    def _fit_kwargs(self):
        return {"negentropy": self.negentropy}


class SphericalKMeans(ClusterMixin, BaseEstimator):
    """Spherical k-means (Dhillon & Modha 2001): assign to the centroid of largest cosine similarity,
    renormalise centroids; same random-partition initialisation as the mixtures.

    Parameters
    ----------
    n_components : int, default 2
        Number of clusters.
    max_iter : int, default 100
        Iterations (the fit stops earlier when the labels no longer change).
    random_state : None, int or numpy Generator
        The random-partition initialisation.
    init_mu : (K, d) array or None
        Initial centroids (overrides random_state).
    normalize : bool, default False
        l2-normalise the rows of X instead of refusing rows whose norm is not 1.

    Attributes
    ----------
    labels_, cluster_centers_ (K, d) unit rows, n_iter_.
    """

    def __init__(self, n_components=2, *, max_iter=100, random_state=None, init_mu=None, normalize=False):
        self.n_components = n_components
        self.max_iter = max_iter
        self.random_state = random_state
        self.init_mu = init_mu
        self.normalize = normalize

    def __sklearn_tags__(self):
        return _tags(super().__sklearn_tags__())

    def fit(self, X, y=None):
        """Cluster the unit rows of X; ``y`` is ignored."""
        X = _check_unit_input(self, X, reset=True)
        self.labels_, self.cluster_centers_, self.n_iter_ = spherical_kmeans(
            X, self.n_components, max_iter=self.max_iter, rng=self.random_state, init_mu=self.init_mu)
        return self

    def predict(self, X):
        """The centroid of largest cosine similarity for each row of X."""
        check_is_fitted(self, "cluster_centers_")
        X = _check_unit_input(self, X, reset=False)
        return np.argmax(np.asarray(X @ self.cluster_centers_.T), axis=1)
