"""Spherical admixture model (SAM) estimator: SGGMC, gSGNHT, GMC-apprMH, GMC-bGibbs, VI and StoVI.

Liu, Zhu & Song (2016), *Stochastic Gradient Geodesic MCMC Methods* (SGGMC paper), Sec. 4, eq. 9-10, Alg. 3,
Sec. 5.3, App. B, App. E and F.3; the model kernels are in :mod:`scalable_bayes.models.sam`, the sphere
geometry in :mod:`scalable_bayes.manifolds.sphere`.

Methods (``method=``):

* ``"sggmc"`` / ``"gsgnht"`` (SGGMC Alg. 3 with Alg. 1 / Alg. 2 on the product of K spheres S^{V-1}):
  each outer iteration draws a minibatch S of documents (all documents if ``batch_size`` is None or >=
  D: the full-batch variants of Fig. 5), draws ``n_theta_samples`` theta's per batch document from
  pi(theta_d | beta, v_d) by GMC on the sphere lift (chain started at App. F.3's (beta'beta)^-1 beta'v_d at the
  current beta), then makes ``n_inner`` (L) ABOBA steps with the stochastic gradient of eq. 10 and
  V(x) = 0 (Sec. 5.3; ``grad_noise_var`` sets a scalar V). The theta samples stay fixed during the L
  inner steps (Alg. 3 draws them once per beta sample). Step size and friction by App. E:
  eps = sqrt(gamma / D), C = rho / eps (``gamma``, ``rho``), or ``eps`` and ``friction`` directly; gSGNHT's
  thermostat xi starts at C, with m = K (V - 1) the intrinsic dimension.
* ``"gmc_apprmh"`` (Sec. 5.3, App. B): full batch; per iteration theta samples for all documents at the
  current beta, then one GMC transition on beta (``beta_leapfrog`` steps of size ``beta_step_size``)
  whose Metropolis-Hastings test uses App. B eq. 1, U^(beta) = log c_V(||mbar||) - kappa sum_d (1/N)
  sum_n v_d'vbar(beta, theta_d^(n)), with the theta samples drawn at the start of the trajectory at both
  ends (our reading of App. B: "pi(theta|v, beta) does not change much" for a nearby proposal); the
  gradient is the full-data eq. 10 with the same samples.
* ``"gmc_bgibbs"`` (Sec. 5.3): blocked Gibbs; one GMC transition per theta_d (warm-started from the
  document's previous theta; the first iteration starts at App. F.3's initialisation), then one GMC
  transition on beta targeting the exact U(beta | theta, v).
* ``"vi"`` (Reisinger et al. 2010, mean-field; the SGGMC authors ran that MATLAB code, so this is our
  reconstruction): q(theta_d) = Dir(gamma_d), point estimates of the topics, mu collapsed as in eq. 9;
  E[vbar] ~= beta E[theta] / sqrt(E ||beta theta||^2) (Reisinger et al.'s approximation), so
  ELBO = sum_d [ -KL(Dir(gamma_d) || Dir(alpha)) + kappa v_d' rho_d ] - log c_V(||mbar||) + const with
  rho_d = beta E theta_d / sqrt(E ||beta theta_d||^2). Each iteration: ``vi_local_steps`` steps of gradient
  ascent on log gamma_d for every document (per-document step adapted: x1.5 on increase, x0.5 and undo
  on decrease; ours), then one step on the topics "by repeatedly normalizing" (Sec. 4):
  beta_k <- normalise(beta_k + eta g_k / ||g_k||) with g_k the tangent gradient and the angle eta adapted
  by backtracking on the ELBO (ours).
* ``"stovi"`` (stochastic VI after Hoffman et al. 2013; ours): per iteration a minibatch, local gamma_d
  optimised from a fresh start (gamma_d = sum(alpha) times App. F.3's theta initialisation, floored at
  alpha / 10: ours), then beta_k <- normalise(beta_k + rho_t g^_k / ||g^_k||) with g^ the minibatch estimate
  of the ELBO's tangent gradient (document part scaled by D / S) and the angle
  rho_t = vi_step ((tau0 + 1) / (tau0 + t))^stovi_kappa (Robbins-Monro decay of Hoffman et al.'s
  (tau0 + t)^-kappa, scaled so that the first step is ``vi_step`` radians).

**Where the pieces are.** This module holds the estimator, its validation and the sampling steps; the VI /
StoVI steps are in :mod:`scalable_bayes.inference._sam_variational`, the held-out scores in
:mod:`scalable_bayes.evaluation.sam`, the model's kernels in :mod:`scalable_bayes.models.sam`.

**Clock and trace.** ``history_`` (a list of dicts; ``trace_`` is the same as a pandas DataFrame) records
per checkpoint the iteration, the sampler's wall time and process CPU time (evaluation excluded), the
log-perplexity on ``X_test`` (if given) and its Monte Carlo standard error, and the number of topic samples it averages over. Sampling methods average over the
topic samples recorded after ``burn_in`` iterations (at most ``max_samples`` kept, thinned by halving when
full; before burn-in ends: the current topics); VI / StoVI use their point estimate.

**Log-perplexity** (Sec. 5.3; our reading): for test document v_d,
log pi(v_d | beta) ~= log (1/N) sum_n c_V(kappa) exp(kappa v_d'vbar(beta, theta^(n))), theta^(n) ~ Dir(alpha)
(prior draws), averaged over topic samples inside the log, and
log-perplexity = -(1/D_test) sum_d log pi(v_d | {beta^(m)}) (lower is better); standard error by the delta
method per document (independent draws across documents). At the paper's concentrations the prior draws
rarely reach the narrow theta posterior and this estimate is biased by hundreds to thousands of nats;
``log_perplexity(estimator="importance")`` estimates the same quantity by importance sampling
(:func:`scalable_bayes.evaluation.sam.importance_log_lik`, ours), which converges there.

**Threads and seeds.** Per-document theta chains run in Numba ``prange`` with a key per (iteration, document)
(``rng.key_from_stream``), the topic-gradient kernels are parallel over topics with a fixed summation order,
so a fit gives identical results for any ``n_jobs``. ``random_state`` gives one integer seed per fit (an int is
used as is, a numpy Generator draws one, None draws fresh entropy; recorded as ``seed_``): minibatches come from
``rng_from_seed(seed_, 1)``, the topic chains' noise from ``make_key(seed_, 2)``, theta streams from a seed derived
from ``seed_``.

**Initial topics** (not stated in the paper; ours): K documents drawn at random (``rng_from_seed(seed_, 3)``),
each mixed with m (beta_k = normalise(v_dk + m)) -- the same start for every method of a seed.

Defaults for the settings the paper does not state (ours, tuned on synthetic SAM corpora with V ~ 500):
gamma = 0.5 / kappa and rho = 0.1 (App. E recommends gamma, rho in 0.01..0.1; the per-document
gradient grows with kappa, so a fixed gamma is unstable for large kappa: gamma = 1e-2 diverged and 1e-3
was best at kappa = 500 on a synthetic corpus with V = 200, D = 300), n_inner = 1, N = 5 theta samples with ``theta_steps`` = 3
GMC transitions each of ``theta_leapfrog`` = 5 leapfrog steps of size
``theta_step_size`` = 0.5 / sqrt(kappa + 2 sum(alpha)); beta GMC: ``beta_leapfrog`` = 10 steps of
``beta_step_size`` = 0.5 / sqrt(kappa D); VI: ``vi_local_steps`` = 20, StoVI tau0 = 10,
stovi_kappa = 0.7.
"""

from __future__ import annotations

import logging
import math
import time

import numpy as np
import scipy.sparse as sp
from numba import njit
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_array, validate_data

from ..evaluation.sam import importance_log_lik, prior_draw_log_perplexity
from ..manifolds.sphere import geodesic_flow, project_tangent
from ..models import sam as M
from ..samplers.geodesic import XI_EPS_MAX, max_eps_c, max_step_on_sphere, sampled_temperature, sg_geodesic_step
from ..rng import fill_normal, make_key, resolve_random_state, resolve_seed, rng_from_seed, uniform
from ..special import bessel_ratio, vmf_log_normalizer
from .._optional import require
from . import _sam_variational as _vi
from ..utils import blas_thread_limit, numba_threads

logger = logging.getLogger(__name__)

__all__ = ["SphericalAdmixture", "check_unit_rows", "METHODS"]

METHODS = ("sggmc", "gsgnht", "gmc_apprmh", "gmc_bgibbs", "vi", "stovi")
UNIT_TOL = 1e-6


# ---------------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------------


def check_unit_rows(X, n_words: int | None = None, *, what: str = "X") -> sp.csr_matrix:
    """X as canonical CSR float64 with l2-normalised rows (tf-idf vectors on S^{V-1}); ValueError for an
    all-zero row, a row of norm != 1 (tolerance 1e-6), non-finite entries or a wrong number of columns.

    Parameters
    ----------
    X : scipy.sparse matrix or array_like of float, shape (D, V)
        Documents as unit rows (e.g. tf-idf vectors).
    n_words : int, optional
        The vocabulary size V the model was fitted on.
    what : str, default "X"
        The name of the argument in error messages.

    Returns
    -------
    scipy.sparse.csr_matrix of float64, shape (D, V)
        Canonical CSR (the caller's matrix is never changed; a canonical float64 CSR input is returned
        without a copy).
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)  # no copy of a float64 CSR matrix
    else:
        a = np.asarray(X, dtype=np.float64)
        if a.ndim != 2:
            raise ValueError(f"{what} must be a 2-D document-by-word matrix, got shape {a.shape}")
        X = sp.csr_matrix(a)
    if X.shape[0] == 0:
        raise ValueError(f"{what} has no rows")
    if X.nnz and not np.all(np.isfinite(X.data)):
        raise ValueError(f"{what} has non-finite entries (NaN or inf); clean the input (e.g. drop those documents)")
    if not X.has_canonical_format or not np.all(X.data != 0.0):
        X = X.copy()  # the caller's matrix is never changed; a canonical one (the usual tf-idf) is not copied
        X.sum_duplicates()
        X.eliminate_zeros()
        X.sort_indices()
    if n_words is not None and X.shape[1] != n_words:
        raise ValueError(f"{what} has {X.shape[1]} columns but the model was fitted on {n_words} words")
    # row norms from the stored values (no second matrix): reduceat over the rows' runs, 0 for empty rows
    norms = np.sqrt(np.add.reduceat(np.append(X.data * X.data, 0.0), X.indptr[:-1]))
    norms[np.diff(X.indptr) == 0] = 0.0
    zero = np.flatnonzero(norms == 0.0)
    if zero.size:
        raise ValueError(f"{what} has {zero.size} all-zero row(s) (first: row {zero[0]}); SAM documents are "
                         "unit vectors: drop empty documents before fitting")
    bad = np.flatnonzero(np.abs(norms - 1.0) > UNIT_TOL)
    if bad.size:
        raise ValueError(f"{what} rows must be l2-normalised (unit tf-idf vectors); {bad.size} row(s) are not, "
                         f"e.g. row {bad[0]} has norm {norms[bad[0]]:.6g}")
    return X


def _positive(name, value):
    if isinstance(value, (bool, np.bool_)) or not np.all(np.isfinite(np.asarray(value, dtype=float))) or \
            not np.all(np.asarray(value, dtype=float) > 0):
        raise ValueError(f"{name} must be positive and finite, got {value!r}")


def _check_n_jobs(n_jobs):
    if n_jobs is not None and (isinstance(n_jobs, (bool, np.bool_)) or not isinstance(n_jobs, (int, np.integer))
                               or n_jobs == 0):
        raise ValueError(f"n_jobs must be None, a positive thread count or -1 (all threads), -2 (all but one), ...; "
                         f"got {n_jobs!r}")


def _count(name, value, minimum, allow_none=False):
    if value is None and allow_none:
        return
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")


# ---------------------------------------------------------------------------------------------
# topic-chain kernels (the GMC leapfrog on the product of spheres; SGGMC / gSGNHT use samplers.geodesic)
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def _kick(x, v, grad, h, block):
    """v <- v - h Lambda(x) grad (a half kick of the GMC leapfrog)."""
    for i in range(v.shape[0]):
        v[i] -= h * grad[i]
    project_tangent(x, v, block)


@njit(cache=True)
def _sq(v):
    s = 0.0
    for i in range(v.shape[0]):
        s += v[i] * v[i]
    return s


@njit(cache=True)
def _mh_accept(key, h0, h1):
    if not np.isfinite(h1):
        return False
    return h1 <= h0 or uniform(key) < math.exp(h0 - h1)


# ---------------------------------------------------------------------------------------------
# the estimator
# ---------------------------------------------------------------------------------------------


class SphericalAdmixture(TransformerMixin, BaseEstimator):
    """Spherical admixture model fitted by one of :data:`METHODS` (module docstring).

    Parameters
    ----------
    n_components : int, default 10
        K >= 2, the number of topics.
    method : {"sggmc", "gsgnht", "gmc_apprmh", "gmc_bgibbs", "vi", "stovi"}, default "sggmc"
        The inference method (module docstring). Every parameter after ``method`` is keyword-only.
    kappa, sigma, kappa0 : float, defaults 3e3, 1e3, 1e3
        Document, topic and corpus-mean concentrations (SGGMC App. F.3: kappa_1, sigma, kappa_0).
    alpha : float or array_like of float, shape (K,), default 10.0
        Dirichlet parameter (scalar or length K).
    batch_size : int or None, default 50
        Minibatch size S (sggmc, gsgnht, stovi); None or >= D: full batch.
    n_theta_samples : int, default 5
        N theta samples per document and beta step (sggmc, gsgnht, gmc_apprmh).
    max_iter : int, default 100
        Outer iterations (one beta sample / one VI sweep each); ``max_time`` stops earlier on the sampler's
        clock (seconds): ``budget_clock`` "wall" (default) or "cpu" (the process CPU time, which does not
        shrink the work when other processes share the machine; with ``n_jobs=1`` it is the wall time of an
        idle machine). The iterations run are ``n_iter_``.
    n_jobs : int or None, default None
        Numba threads (None: leave as is; -1 all, -2 all but one, ...); results do not depend on it.
    random_state : None, int or numpy.random.Generator, default 0
        The fit's integer seed (module docstring, "Threads and seeds"): an int is used as is (the same fit as
        the former ``seed`` of that value), a Generator gives one seed drawn once per fit, None fresh entropy;
        the seed used is ``seed_``, also the default seed of ``log_perplexity`` and ``transform``.
    verbose : int, default 0
        Log one line per iteration at INFO level when > 0 (logger ``scalable_bayes.inference.sam``;
        ``logging.basicConfig(level=logging.INFO)`` shows it); otherwise the checkpoints of ``history_`` are
        logged at DEBUG level.
    mean_direction : array_like of float, shape (V,), optional
        m of the model (unit vector); default the normalised mean of the training documents
        (App. F.3).
    gamma : float, optional
        App. E's learning rate (default 0.5 / kappa, ours): eps = sqrt(gamma / D).
    rho : float, default 0.1
        App. E's momentum coefficient: C = rho / eps.
    eps : float, optional
        The step size; overrides ``gamma``.
    friction : float, optional
        The friction C; overrides ``rho``.
        A step that runs to nonsense is refused before fitting (sggmc, gsgnht;
        :mod:`scalable_bayes.samplers.geodesic`, "Checks"): eps C (= rho) above 4.35 (SGGMC: sampled temperature
        below 1/2, frozen for eps C >~ 50) or 6.93 (gSGNHT: above 2), or eps sqrt(V - 1) > pi (one step turns a
        topic by more than half a great circle: gamma > D pi^2 / (V - 1)). A gSGNHT thermostat that runs away
        (|xi eps| > 53 ln 2) stops the fit with a FloatingPointError naming it.
    n_inner : int, default 1
        L, the inner steps per minibatch.
    grad_noise_var : float, default 0.0
        V(x) as a scalar (0 in Sec. 5.3); 2C - eps V must not be negative.
    theta_steps, theta_leapfrog : int, defaults 3, 5
        The GMC theta chains: transitions between stored samples, and leapfrog steps per transition.
    theta_step_size : float, optional
        Initial step size of the theta chains; default 0.5 / sqrt(kappa + 2 sum(alpha)).
    theta_floor : float, optional
        Floor of the theta initialisation, in (0, 1/K); default 0.01 / K.
    theta_target_accept : float or None, default 0.7
        The theta step size is adapted between outer iterations towards this acceptance
        rate of the theta chains (ours: the curvature of pi(theta | beta, v) grows with kappa and with how
        nearly collinear the topics are, so no fixed default fits every corpus: on the Wikipedia sample
        (K = 50, kappa = 2e4) the default step accepted 3-5% of proposals and the theta draws barely left
        their initialisation, on 20News-different (K = 20, kappa = 3e4) 86-97% in minibatch runs). log eps <- log eps + (rate - target), the factor clipped to [1/2, 2]; every
        theta chain restarts from its initialisation at each iteration, so each draw is still an MH chain
        for a fixed step. None: keep the step fixed.
    beta_leapfrog : int, default 10
        Leapfrog steps of the GMC transition on beta (gmc_apprmh, gmc_bgibbs).
    beta_step_size : float, optional
        Step size of the GMC transition on beta; default 0.5 / sqrt(kappa D).
    vi_local_steps : int, default 20
        Local gamma ascent steps of VI / StoVI.
    vi_step : float, default 0.1
        The initial topic angle (radians) of VI / StoVI.
    stovi_tau0, stovi_kappa : float, defaults 10.0, 0.7
        StoVI's rate rho_t = (tau0 + t)^-kappa (module docstring).
    burn_in : int, optional
        Topic samples kept for the log-perplexity start after ``burn_in`` iterations (default max_iter // 2, or,
        with ``max_time``, the iterations that end after half the time budget).
    max_samples : int, default 50
        At most this many topic samples are kept (thinned by halving when full).
    thin : int, default 1
        Thinning of the kept topic samples.
    samples_dtype : {"float32", "float64"}, default "float32"
        Storage of the kept topic samples ``samples_``. The
        state and every computation stay float64; a sample is widened when it is scored. Ours: K x V doubles
        per sample made the 50 kept samples 5.3x the input of an 8,390 x 3,000 tf-idf corpus
        (benchmarks/README_sggmc.md); in single precision a unit topic vector is exact to ~6e-8 per entry,
        which moves kappa v'mu by at most ~kappa x 1e-7 (3e-3 nats at kappa = 3e4, against a log-perplexity
        standard error above 0.05).
    evaluate_every : int, default 0
        Checkpoints of ``trace_`` (iterations; 0: start and end only).
    n_prior_draws : int, default 200
        The Dirichlet draws per test document of the log-perplexity.
    max_time : float, optional
        Stops the fit earlier on the sampler's clock (seconds).
    budget_clock : {"wall", "cpu"}, default "wall"
        The clock of ``max_time``: "wall", or "cpu" (the process CPU time, which
        does not shrink the work when other processes share the machine; with ``n_jobs=1`` it is the
        wall time of an idle machine).
    normalize : bool, default False
        l2-normalise the rows of every X given to ``fit``, ``transform``, ``score`` and
        ``log_perplexity`` instead of refusing rows whose norm is not 1; zero rows are
        refused either way.

    Attributes
    ----------
    components_ : ndarray of shape (K, V)
        The last topics (VI / StoVI: the point estimate).
    samples_ : ndarray of shape (M, K, V)
        The kept topic samples.
    history_ : list of dict
        Checkpoint records (``trace_``: a DataFrame).
    n_iter_ : int
        Iterations run.
    seed_ : int
        The integer seed of the fit (from ``random_state``).
    n_threads_ : int
        Numba threads in effect.
    m_, alpha_, eps_, friction_ : ndarray, ndarray, float, float
        The resolved mean direction, Dirichlet parameter, step size and friction.
    """

    def __init__(self, n_components=10, method="sggmc", *, kappa=3e3, sigma=1e3, kappa0=1e3, alpha=10.0,
                 batch_size=50, n_theta_samples=5, max_iter=100, n_jobs=None, random_state=0, verbose=0,
                 mean_direction=None, gamma=None, rho=0.1, eps=None, friction=None, n_inner=1,
                 grad_noise_var=0.0, theta_steps=3, theta_leapfrog=5, theta_step_size=None, theta_floor=None,
                 theta_target_accept=0.7, beta_leapfrog=10, beta_step_size=None, vi_local_steps=20, vi_step=0.1, stovi_tau0=10.0,
                 stovi_kappa=0.7, burn_in=None, max_samples=50, thin=1, samples_dtype="float32", evaluate_every=0,
                 n_prior_draws=200, max_time=None, budget_clock="wall", normalize=False):
        self.n_components = n_components
        self.method = method
        self.kappa = kappa
        self.sigma = sigma
        self.kappa0 = kappa0
        self.alpha = alpha
        self.batch_size = batch_size
        self.n_theta_samples = n_theta_samples
        self.max_iter = max_iter
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.mean_direction = mean_direction
        self.gamma = gamma
        self.rho = rho
        self.eps = eps
        self.friction = friction
        self.n_inner = n_inner
        self.grad_noise_var = grad_noise_var
        self.theta_steps = theta_steps
        self.theta_leapfrog = theta_leapfrog
        self.theta_step_size = theta_step_size
        self.theta_floor = theta_floor
        self.theta_target_accept = theta_target_accept
        self.beta_leapfrog = beta_leapfrog
        self.beta_step_size = beta_step_size
        self.vi_local_steps = vi_local_steps
        self.vi_step = vi_step
        self.stovi_tau0 = stovi_tau0
        self.stovi_kappa = stovi_kappa
        self.burn_in = burn_in
        self.max_samples = max_samples
        self.thin = thin
        self.samples_dtype = samples_dtype
        self.evaluate_every = evaluate_every
        self.n_prior_draws = n_prior_draws
        self.max_time = max_time
        self.budget_clock = budget_clock
        self.normalize = normalize

    # ------------------------------------------------------------------ validation
    def _validate(self, n_docs, n_words=None):
        """All settings -> a dict of resolved values; raises ValueError naming the problem (nothing is
        written to the estimator before this returns). With ``n_words`` (V) the SGGMC / gSGNHT step is checked
        against the library's bounds (:mod:`scalable_bayes.samplers.geodesic`, "Checks"): eps C (= rho) and the
        angle eps sqrt(V - 1) of one step on S^{V-1}."""
        K = self.n_components
        if isinstance(K, (bool, np.bool_)) or not isinstance(K, (int, np.integer)) or K < 2:
            raise ValueError(f"n_components (K, the number of topics) must be an integer >= 2, got {K!r}")
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        for name in ("kappa", "sigma", "kappa0"):
            _positive(name + " (concentration)", getattr(self, name))
        alpha = np.asarray(self.alpha, dtype=np.float64)
        if alpha.ndim > 1 or (alpha.ndim == 1 and alpha.shape[0] != K):
            raise ValueError(f"alpha must be a scalar or a vector of length K = {K}, got shape {alpha.shape}")
        _positive("alpha (Dirichlet parameter)", alpha)
        alpha = np.broadcast_to(alpha, (K,)).astype(np.float64)
        _count("batch_size", self.batch_size, 1, allow_none=True)
        _count("n_theta_samples", self.n_theta_samples, 1)
        _count("max_iter", self.max_iter, 0)
        _check_n_jobs(self.n_jobs)
        _count("n_inner", self.n_inner, 1)
        _count("theta_steps", self.theta_steps, 1)
        _count("theta_leapfrog", self.theta_leapfrog, 1)
        _count("beta_leapfrog", self.beta_leapfrog, 1)
        _count("vi_local_steps", self.vi_local_steps, 0)
        _count("max_samples", self.max_samples, 1)
        _count("thin", self.thin, 1)
        _count("evaluate_every", self.evaluate_every, 0)
        _count("n_prior_draws", self.n_prior_draws, 1)
        _count("burn_in", self.burn_in, 0, allow_none=True)
        if str(self.samples_dtype) not in ("float32", "float64"):
            raise ValueError(f"samples_dtype must be 'float32' or 'float64', got {self.samples_dtype!r}")
        if self.max_time is not None:
            _positive("max_time", self.max_time)
        if self.budget_clock not in ("wall", "cpu"):
            raise ValueError(f"budget_clock must be 'wall' or 'cpu' (the clock of max_time), got {self.budget_clock!r}")
        if self.theta_target_accept is not None and not (0.0 < float(self.theta_target_accept) < 1.0):
            raise ValueError(f"theta_target_accept must be in (0, 1) or None (fixed theta step), got "
                             f"{self.theta_target_accept!r}")
        D = int(n_docs)
        if self.eps is not None:
            _positive("eps (step size)", self.eps)
            eps = float(self.eps)
        else:
            gam = 0.5 / float(self.kappa) if self.gamma is None else self.gamma
            _positive("gamma (learning rate)", gam)
            eps = math.sqrt(float(gam) / D)
        if self.friction is not None:
            _positive("friction (C)", self.friction)
            C = float(self.friction)
        else:
            _positive("rho (momentum coefficient)", self.rho)
            C = float(self.rho) / eps
        vn = float(self.grad_noise_var)
        if not np.isfinite(vn) or vn < 0:
            raise ValueError(f"grad_noise_var (V(x)) must be finite and >= 0, got {self.grad_noise_var!r}")
        if 2.0 * C - eps * vn < 0:
            raise ValueError(f"the noise variance (2C - eps V) eps of SGGMC Alg. 1 is negative: C = {C:.4g}, "
                             f"eps = {eps:.4g}, V = {vn:.4g}; lower the step size or raise the friction")
        if self.method in ("sggmc", "gsgnht"):
            self._check_sg_step(eps, C, D, n_words)
        kappa = float(self.kappa)
        th_eps = (0.5 / math.sqrt(kappa + 2.0 * alpha.sum()) if self.theta_step_size is None
                  else float(self.theta_step_size))
        _positive("theta_step_size", th_eps)
        be_eps = 0.5 / math.sqrt(kappa * D) if self.beta_step_size is None else float(self.beta_step_size)
        _positive("beta_step_size", be_eps)
        floor = 0.01 / K if self.theta_floor is None else float(self.theta_floor)
        if not 0.0 < floor < 1.0 / K:
            raise ValueError(f"theta_floor must lie in (0, 1/K), got {floor!r}")
        _positive("vi_step", self.vi_step)
        _positive("stovi_tau0", self.stovi_tau0)
        if not (0.5 < float(self.stovi_kappa) <= 1.0):
            raise ValueError(f"stovi_kappa must lie in (0.5, 1] (Robbins-Monro), got {self.stovi_kappa!r}")
        S = D if self.batch_size is None or self.batch_size >= D or self.method in ("gmc_apprmh", "gmc_bgibbs",
                                                                                     "vi") else int(self.batch_size)
        return dict(K=K, alpha=alpha, eps=eps, C=C, vn=vn, th_eps=th_eps, be_eps=be_eps, floor=floor, S=S,
                    samples_dtype=np.dtype(str(self.samples_dtype)),
                    seed=resolve_random_state(self.random_state))

    def _check_sg_step(self, eps, C, D, V):
        """ValueError if the SGGMC / gSGNHT topic chain's step runs to nonsense, named in the estimator's settings
        (gamma and rho, or eps and friction): eps C above :func:`~scalable_bayes.samplers.geodesic.max_eps_c`
        (SGGMC: sampled temperature below 1/2, frozen for eps C >~ 50; gSGNHT: above 2), or a step that turns a
        topic by eps sqrt(V - 1) > pi radians at the velocity's equilibrium length (measured on a synthetic corpus,
        K = 4, V = 120, D = 200: gamma from 1e2 to 1e8 ran to the end with consecutive topic samples at cosines
        -0.7..0.5, i.e. unrelated, and gSGNHT's thermostat at 5e9, frozen)."""
        thermo = self.method == "gsgnht"
        step = (f"eps = {eps:.4g} (given)" if self.eps is not None
                else f"eps = sqrt(gamma / D) = sqrt({self._gamma_used():.4g} / {D}) = {eps:.4g}")
        fric = f"C = {C:.4g} (friction, given)" if self.friction is not None else f"C = rho / eps = {C:.4g} (rho = {self.rho!r})"
        lim = max_eps_c(thermo)
        if eps * C > lim:
            raise ValueError(
                f"SAM {self.method}: {step} and {fric} give eps C = {eps * C:.4g} > {lim:.4g}: the topic chain samples "
                f"at temperature {sampled_temperature(eps * C, thermo):.3g} instead of 1"
                + ("" if thermo else " and freezes for eps C >~ 50") + "; lower rho = eps C (App. E: 0.01-0.1)"
                + (" or the friction" if self.friction is not None else ""))
        if V is not None and V > 1 and eps > max_step_on_sphere(V):
            top = max_step_on_sphere(V)
            fix = (f"lower gamma to at most D pi^2 / (V - 1) = {D * top * top:.4g} (default 0.5 / kappa = "
                   f"{0.5 / float(self.kappa):.3g})" if self.eps is None else f"lower eps below {top:.4g}")
            raise ValueError(
                f"SAM {self.method}: {step} turns each topic by eps sqrt(V - 1) = {eps * math.sqrt(V - 1):.4g} > pi "
                f"radians per step at the velocity's equilibrium length on S^{V - 1} (V = {V} words): successive topic "
                f"samples are unrelated and the chain samples nothing; {fix}")

    def _gamma_used(self):
        return 0.5 / float(self.kappa) if self.gamma is None else float(self.gamma)

    # ------------------------------------------------------------------ fit
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def fit(self, X, y=None, *, X_test=None):
        """Fit the topics.

        Parameters
        ----------
        X : sparse matrix or array of shape (D, V)
            Documents as l2-normalised rows (e.g. tf-idf; scipy CSR or dense).
        y : ignored
            Present for the scikit-learn API (a ``Pipeline`` passes it); never used as data.
        X_test : sparse matrix or array of shape (D_test, V), optional
            Test documents scored (log-perplexity) at the checkpoints of ``trace_``.

        Returns
        -------
        self
        """
        X_in = X
        # scikit-learn's input checks (its messages); n_features_in_ is set below, once every setting is valid
        X = check_unit_rows(_normalized(self, check_array(X, accept_sparse="csr", dtype=np.float64,
                                                                    ensure_all_finite=False)))
        D, V = X.shape
        if V < 2:
            raise ValueError(f"X has n_features = {V} (words); SAM's documents are points of S^(V-1), which needs "
                             "V >= 2 columns")
        if X_test is not None:
            X_test = check_unit_rows(_normalized(self, X_test), V, what="X_test")
        cfg = self._validate(D, V)
        if self.mean_direction is not None:
            m0 = np.asarray(self.mean_direction, dtype=np.float64).ravel()
            if m0.shape != (V,) or not np.all(np.isfinite(m0)) or abs(np.linalg.norm(m0) - 1.0) > UNIT_TOL:
                raise ValueError(f"mean_direction (m) must be a unit vector of length V = {V}")
        else:
            m0 = np.asarray(X.mean(axis=0)).ravel()
            nm = np.linalg.norm(m0)
            if not nm > 0:
                raise ValueError("the training documents average to the zero vector; pass mean_direction (m)")
            m0 = m0 / nm
        K = cfg["K"]
        validate_data(self, X_in, skip_check_array=True)  # n_features_in_ (and feature names)
        _warm_up(self.method, self.n_jobs)
        self.seed_ = cfg["seed"]
        self.m_ = m0
        self.alpha_ = cfg["alpha"]
        self.eps_, self.friction_ = cfg["eps"], cfg["C"]
        self._cfg = cfg
        self._X = X
        self._csr = (X.indptr.astype(np.int64, copy=False), X.indices.astype(np.int64, copy=False), X.data)
        self._log_cv_kappa = float(vmf_log_normalizer(float(self.kappa), d=V))
        self._samples = None  # buffer of the kept topic samples (_record_sample)
        self._n_kept = 0
        self._n_seen = 0
        self._keep_every = int(self.thin)
        rows = []
        burn = self.max_iter // 2 if self.burn_in is None else int(self.burn_in)
        # with a time budget and no burn_in: samples are kept from half the budget on (else max_iter would decide,
        # and a budget that ends first would leave only the current topics to score)
        burn_time = 0.5 * float(self.max_time) if (self.burn_in is None and self.max_time is not None) else None
        every = int(self.evaluate_every or 0)
        # BLAS on one thread: its only work here is small (K x K) solves, and OpenBLAS's idle workers spin on
        # the core that Numba's second thread needs (measured: 2-thread SGGMC iteration 57-65 ms with the
        # default BLAS threads, 24 ms with one; benchmarks/README_sggmc.md)
        with numba_threads(self.n_jobs) as nt, blas_thread_limit(1):
            self.n_threads_ = nt
            t0, c0 = time.perf_counter(), time.process_time()
            self._init_state(X)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            rows.append(self._checkpoint(0, wall, cpu, X_test))
            it = 0
            for it in range(1, self.max_iter + 1):
                t0, c0 = time.perf_counter(), time.process_time()
                self._iterate(it)
                wall += time.perf_counter() - t0
                cpu += time.process_time() - c0
                clock = cpu if self.budget_clock == "cpu" else wall
                if self.method not in ("vi", "stovi") and (it > burn if burn_time is None else clock >= burn_time):
                    self._record_sample()
                stop = self.max_time is not None and clock >= self.max_time
                rec = None
                if (every and it % every == 0) or it == self.max_iter or stop:
                    rec = self._checkpoint(it, wall, cpu, X_test)
                    rows.append(rec)
                if self.verbose or rec is not None:  # one line per iteration at INFO when verbose
                    lp = "" if rec is None else f", log-perplexity {rec['log_perplexity']:.4f}"
                    logger.log(logging.INFO if self.verbose else logging.DEBUG,
                               "SAM %s iteration %d of max_iter %d, %.2fs%s", self.method, it, self.max_iter, wall, lp)
                if stop:
                    break
            self.n_iter_ = it
        self.history_ = rows
        self.components_ = self._beta.reshape(K, V).copy()
        self.samples_ = (self._samples[: self._n_kept] if self._n_kept
                         else self.components_[None].astype(self._cfg["samples_dtype"]))
        for name in ("_X", "_csr", "_B", "_thetas", "_score", "_norm", "_theta_state", "_v",
                     "_beta_t", "_grad", "_samples", "_gam"):
            self.__dict__.pop(name, None)
        return self

    # ------------------------------------------------------------------ state
    def _init_state(self, X):
        cfg = self._cfg
        K = cfg["K"]
        D, V = X.shape
        r = rng_from_seed(self.seed_, 3)
        pick = r.choice(D, size=K, replace=D < K)
        beta = np.asarray(X[pick].todense()) + self.m_[None, :]
        beta /= np.linalg.norm(beta, axis=1, keepdims=True)
        self._beta = beta.ravel().copy()
        self._batch_rng = rng_from_seed(self.seed_, 1)
        self._key = make_key(self.seed_, 2)
        self._theta_seed = int(make_key(self.seed_, 4)[0] >> np.uint64(1))
        self._v = np.zeros(K * V)
        self._grad = np.zeros(K * V)
        self._G = np.zeros((K, K))
        self.__dict__.pop("_beta_t", None)  # the topics by word of an earlier fit (another K) are not reused
        meth = self.method
        if meth in ("sggmc", "gsgnht"):
            # the library's SGGMC / gSGNHT step kernel in its rotated form (samplers.geodesic): the state
            # it moves is the point where Alg. 1's O step acts, so the chain starts half a flow into Alg. 1
            thermo = meth == "gsgnht"
            self._sg_hyper = np.array([cfg["C"], cfg["vn"], 1.0, 1.0 if thermo else 0.0, float(V)])
            self._xi = np.array([cfg["C"], 0.0])  # friction or thermostat xi; clipped-direction count
            fill_normal(self._key, self._v)
            project_tangent(self._beta, self._v, V)
            if thermo:
                self._xi[0] += (_sq(self._v) / (K * (V - 1.0)) - 1.0) * cfg["eps"] / 2.0
            geodesic_flow(self._beta, self._v, cfg["eps"] / 2.0, V)
        S = cfg["S"]
        N = 1 if meth == "gmc_bgibbs" else int(self.n_theta_samples)
        if meth not in ("vi", "stovi"):
            self._B = np.zeros((S, K))
            self._thetas = np.zeros((S, N, K))
            self._score = np.zeros((S, N))
            self._norm = np.zeros((S, N))
            self._acc = np.zeros(S, np.int64)
            self._c = M.lift_exponents(cfg["alpha"], K)
            self._theta_state = np.zeros((D, K)) if meth == "gmc_bgibbs" else np.zeros((1, K))
        else:
            self._gam = None
            self._vi_eta = float(self.vi_step)
        self.accept_rate_ = np.nan
        self.theta_accept_rate_ = np.nan
        self._n_beta_acc = 0
        self._n_beta_prop = 0

    def _batch(self):
        D = self._X.shape[0]
        S = self._cfg["S"]
        if S >= D:
            return np.arange(D, dtype=np.int64)
        return np.sort(self._batch_rng.choice(D, size=S, replace=False)).astype(np.int64)

    def _summaries(self, beta, docs, B):
        K, V = self._cfg["K"], self.n_features_in_
        bt = self._beta_t = M.transpose_topics(beta, K, V, self.__dict__.get("_beta_t"))  # one buffer per fit
        M.gram(beta, K, V, self._G, bt)
        ip, ix, dt = self._csr
        M.doc_projections(beta, K, V, ip, ix, dt, docs, B, bt)

    def _draw_thetas(self, it, docs, warm, n_samples, n_steps):
        cfg = self._cfg
        K = cfg["K"]
        S = docs.shape[0]
        Ginv = np.linalg.pinv(self._G, rcond=1e-10)
        M.sample_theta(self._theta_seed, it, docs, self._B[:S], self._G, Ginv, self._c, float(self.kappa), K,
                       n_samples, n_steps, cfg["th_eps"], int(self.theta_leapfrog), cfg["floor"], warm,
                       self._theta_state, self._thetas[:S], self._score[:S], self._norm[:S], self._acc[:S])
        self.theta_accept_rate_ = rate = float(self._acc[:S].sum()) / (S * n_samples * n_steps)
        if self.theta_target_accept is not None:
            cfg["th_eps"] *= math.exp(min(max(rate - float(self.theta_target_accept), -math.log(2)), math.log(2)))
        self.theta_step_size_ = cfg["th_eps"]

    def _prior_grad(self, beta, grad):
        """grad_{beta_k} log c_V(||mbar||) = -sigma A_V(||mbar||) mbar / ||mbar|| added to every block; returns
        ||mbar|| (for :meth:`_log_cv_mbar` at the same topics)."""
        K, V = self._cfg["K"], self.n_features_in_
        mb, r = M.prior_mean_vector(beta, K, V, self.m_, float(self.kappa0), float(self.sigma))
        a = float(bessel_ratio(r, d=V))
        M.subtract_mean_direction(grad, mb, float(self.sigma) * a / r, K, V)
        return r

    def _log_cv_mbar(self, beta, r=None):
        """log c_V(||mbar||) at the topics ``beta``; ``r`` = ||mbar|| if the caller has it (:meth:`_prior_grad`)."""
        K, V = self._cfg["K"], self.n_features_in_
        if r is None:
            _, r = M.prior_mean_vector(beta, K, V, self.m_, float(self.kappa0), float(self.sigma))
        return float(vmf_log_normalizer(r, d=V))

    def _potential_grad(self, beta, docs, scale, want_u, summaries_current=False):
        """U^ (App. B eq. 1 with the stored theta samples; exact U(beta|theta,v) for one sample) and the
        gradient of eq. 10 with document scale ``scale`` (kappa D / S), into self._grad. With
        ``summaries_current`` the caller guarantees that G, B and the samples' scores were computed at ``beta``
        (the theta draws just made them there), and they are not recomputed."""
        K, V = self._cfg["K"], self.n_features_in_
        S = docs.shape[0]
        if not summaries_current:
            self._summaries(beta, docs, self._B[:S])
            M.stored_scores(self._thetas[:S], self._B[:S], self._G, K, self._score[:S], self._norm[:S])
        ip, ix, dt = self._csr
        M.grad_documents(beta, K, V, ip, ix, dt, docs, self._thetas[:S], self._score[:S], self._norm[:S],
                         scale, self._grad)
        r = self._prior_grad(beta, self._grad)
        if not want_u:
            return np.nan
        return self._log_cv_mbar(beta, r) - float(self.kappa) * float(self._score[:S].mean(axis=1).sum())

    # ------------------------------------------------------------------ one iteration
    def _iterate(self, it):
        meth = self.method
        if meth in ("sggmc", "gsgnht"):
            self._sg_step(it)
        elif meth == "gmc_apprmh":
            docs = self._batch()
            self._summaries(self._beta, docs, self._B)
            self._draw_thetas(it, docs, 0, int(self.n_theta_samples), int(self.theta_steps))
            self._gmc_beta(docs)
        elif meth == "gmc_bgibbs":
            docs = self._batch()
            self._summaries(self._beta, docs, self._B)
            self._draw_thetas(it, docs, 2 if it == 1 else 1, 1, 1)
            self._gmc_beta(docs)
        elif meth == "vi":
            _vi.vi_step(self, it, full=True)
        else:
            _vi.vi_step(self, it, full=False)

    def _sg_step(self, it):
        """One outer iteration of SGGMC Alg. 3 with Alg. 1 (sggmc) or Alg. 2 (gsgnht): theta samples for
        the minibatch, then ``n_inner`` steps of the library's step kernel
        (:func:`scalable_bayes.samplers.geodesic.sg_geodesic_step`, B O B and a geodesic flow of eps) with
        the eq. 10 gradient at the current topics."""
        cfg = self._cfg
        D = self._X.shape[0]
        docs = self._batch()
        S = docs.shape[0]
        self._summaries(self._beta, docs, self._B[:S])
        self._draw_thetas(it, docs, 0, int(self.n_theta_samples), int(self.theta_steps))
        scale = float(self.kappa) * D / S
        x = self._beta
        for _l in range(int(self.n_inner)):
            # the first gradient is at the topics the theta draws saw: their G, B and scores are current
            self._potential_grad(x, docs, scale, False, summaries_current=_l == 0)
            sg_geodesic_step(x, self._v, self._xi, self._grad, self._key, cfg["eps"], self._sg_hyper)
        if not np.all(np.isfinite(x)):
            xi_eps = float(self._xi[0]) * cfg["eps"]
            if self.method == "gsgnht" and not abs(xi_eps) <= XI_EPS_MAX:  # stopped by the step kernel
                raise FloatingPointError(
                    f"SAM gsgnht: the thermostat xi reached {self._xi[0]:.4g} at iteration {it}, a per-step friction "
                    f"xi eps = {xi_eps:.4g} beyond +-{XI_EPS_MAX:.1f} (the velocity scaled by less than 2^-53 or more "
                    f"than 2^53 in one step: the chain freezes or explodes; a healthy thermostat settles near "
                    f"asinh(eps C) = {math.asinh(cfg['eps'] * cfg['C']):.3g}); the thermostat overshoots at eps = "
                    f"{cfg['eps']:.4g}: lower gamma (eps = sqrt(gamma / D))")
            raise FloatingPointError(f"SAM {self.method}: topics became non-finite at iteration {it}; lower gamma "
                                     "(eps) or raise rho")

    def _gmc_beta(self, docs):
        """One GMC transition (Byrne & Girolami 2013) of the topics on the product of K spheres, with
        Metropolis-Hastings on U^ (gmc_apprmh: App. B eq. 1) or the exact U(beta|theta,v) (gmc_bgibbs)."""
        cfg = self._cfg
        V = self.n_features_in_
        eps = cfg["be_eps"]
        kappa = float(self.kappa)
        x0 = self._beta
        x = x0.copy()
        v = self._v
        fill_normal(self._key, v)
        project_tangent(x, v, V)
        u0 = self._potential_grad(x, docs, kappa, True, summaries_current=True)  # the theta draws' topics
        h0 = u0 + 0.5 * _sq(v)
        u = u0
        for _l in range(int(self.beta_leapfrog)):
            _kick(x, v, self._grad, 0.5 * eps, V)
            geodesic_flow(x, v, eps, V)
            u = self._potential_grad(x, docs, kappa, True)
            _kick(x, v, self._grad, 0.5 * eps, V)
        h1 = u + 0.5 * _sq(v)
        self._n_beta_prop += 1
        if np.all(np.isfinite(x)) and _mh_accept(self._key, h0, h1):
            self._beta = x
            self._n_beta_acc += 1
        self.accept_rate_ = self._n_beta_acc / self._n_beta_prop

    # ------------------------------------------------------------------ samples and scores
    def _record_sample(self):
        """Keep the current topics in a buffer of max_samples rows of ``samples_dtype`` (allocated at the first
        sample). When a sample arrives at a full buffer, the max_samples + 1 samples are thinned to every
        second one (positions 1, 3, ...; the new sample is the last position), in place, and every second
        sample is recorded from then on."""
        self._n_seen += 1
        if self._n_seen % self._keep_every:
            return
        K, V = self._cfg["K"], self.n_features_in_
        M = int(self.max_samples)
        if self._samples is None:
            self._samples = np.empty((M, K, V), dtype=self._cfg["samples_dtype"])
        buf, new = self._samples, self._beta.reshape(K, V)
        if self._n_kept < M:
            buf[self._n_kept] = new
            self._n_kept += 1
            return
        kept = range(1, M + 1, 2)
        for i, j in enumerate(kept):  # j > i: forward copies never overwrite a sample still to move
            buf[i] = buf[j] if j < M else new
        self._n_kept = len(kept)
        self._keep_every *= 2

    def _current_samples(self):
        """The kept topic samples (a view of the buffer), or the current topics before the first one."""
        K, V = self._cfg["K"], self.n_features_in_
        if self._n_kept:
            return self._samples[: self._n_kept]
        return self._beta.reshape(1, K, V)

    def _checkpoint(self, it, wall, cpu, X_test):
        rec = {"method": self.method, "iteration": it, "wall_time": wall, "cpu_time": cpu,
               "log_perplexity": np.nan, "log_perplexity_se": np.nan, "n_samples": 0}
        if self.method in ("gmc_apprmh", "gmc_bgibbs"):
            rec["accept_rate"] = self.accept_rate_
        if X_test is not None:
            S = self._current_samples()
            lp, se = prior_draw_log_perplexity(S, X_test, self._cfg["alpha"], float(self.kappa), self._log_cv_kappa,
                                     int(self.n_prior_draws), self.seed_)
            rec.update(log_perplexity=lp, log_perplexity_se=se, n_samples=S.shape[0])
        return rec

    def _check_fitted(self):
        if not hasattr(self, "components_"):
            raise NotFittedError("this SphericalAdmixture is not fitted yet; call fit(X) first")

    @property
    def trace_(self):
        """``history_`` (one record per checkpoint) as a pandas DataFrame; needs pandas (the ``pipeline``
        extra), the fit itself does not."""
        self._check_fitted()
        return require("pandas", "SphericalAdmixture.trace_ (a DataFrame)").DataFrame(self.history_)

    def log_perplexity(self, X_test, n_prior_draws=None, *, return_se=False, point_estimate=False, seed=None,
                       estimator="prior", return_diagnostics=False, max_topic_samples=None):
        """Log-perplexity of ``X_test``: -(1/D) sum_d log pi(v_d | beta), averaged over the recorded topic
        samples inside the log (``point_estimate=True``: ``components_`` only). Lower is better.

        ``estimator="prior"`` (SGGMC Sec. 5.3; module docstring): ``n_prior_draws`` Dirichlet prior draws per
        document. ``estimator="importance"`` (ours, a check of the paper's estimator): ``n_prior_draws``
        draws per document and topic sample from a defensive mixture fitted to each document's theta
        posterior (:func:`scalable_bayes.evaluation.sam.importance_log_lik`); it converges where the prior draws do not (large kappa).
        ``max_topic_samples``: average over at most this many of the kept samples, evenly spaced (the first and
        the last included). With ``return_se`` also the Monte Carlo standard error (delta method); with
        ``return_diagnostics`` (importance only) a dict of the effective sample sizes as well."""
        self._check_fitted()
        X_test = check_unit_rows(_validate_fitted(self, X_test), self.n_features_in_, what="X_test")
        n = int(self.n_prior_draws if n_prior_draws is None else n_prior_draws)
        _count("n_prior_draws", n, 1)
        if estimator not in ("prior", "importance"):
            raise ValueError(f"estimator must be 'prior' (Sec. 5.3) or 'importance', got {estimator!r}")
        S = self.components_[None] if point_estimate else self.samples_
        if max_topic_samples is not None:
            _count("max_topic_samples", max_topic_samples, 1)
            if S.shape[0] > max_topic_samples:
                S = S[np.unique(np.round(np.linspace(0, S.shape[0] - 1, int(max_topic_samples))).astype(np.int64))]
        seed = self.seed_ if seed is None else resolve_seed(seed)
        log_cv = float(vmf_log_normalizer(float(self.kappa), d=self.n_features_in_))
        diag = None
        with numba_threads(self.n_jobs), blas_thread_limit(1):
            if estimator == "prior":
                lp, se = prior_draw_log_perplexity(S, X_test, self.alpha_, float(self.kappa), log_cv, n, seed)
            else:
                logp, se_d, diag = importance_log_lik(S, X_test, self.alpha_, float(self.kappa), log_cv, n, seed,
                                                      floor=self._cfg["floor"])
                lp, se = float(-logp.mean()), float(math.sqrt(np.sum(se_d ** 2)) / logp.shape[0])
        out = (lp, se) if return_se else (lp,)
        if return_diagnostics:
            out = out + (diag,)
        return out if len(out) > 1 else out[0]

    def score(self, X, y=None):
        """Minus the log-perplexity of X (:meth:`log_perplexity` with its defaults: the paper's estimator,
        averaged over the kept topic samples); higher is better."""
        return -float(self.log_perplexity(X))

    def transform(self, X, n_samples=20, seed=None):
        """Posterior-mean topic proportions E[theta_d | beta, v_d] (D x K) under ``components_``, by
        ``n_samples`` GMC draws per document (same theta chains as the samplers)."""
        self._check_fitted()
        X = check_unit_rows(_validate_fitted(self, X), self.n_features_in_)
        _count("n_samples", n_samples, 1)
        K, V = self.components_.shape
        D = X.shape[0]
        beta = self.components_.ravel().copy()
        ip, ix, dt = X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data.astype(np.float64)
        docs = np.arange(D, dtype=np.int64)
        G = np.zeros((K, K))
        B = np.zeros((D, K))
        out = np.zeros((D, n_samples, K))
        th_eps = self._cfg["th_eps"]
        with numba_threads(self.n_jobs), blas_thread_limit(1):
            bt = M.transpose_topics(beta, K, V)
            M.gram(beta, K, V, G, bt)
            M.doc_projections(beta, K, V, ip, ix, dt, docs, B, bt)
            M.sample_theta(int(make_key(self.seed_ if seed is None else resolve_seed(seed), 5)[0] >> np.uint64(1)),
                           0, docs, B, G, np.linalg.pinv(G, rcond=1e-10), M.lift_exponents(self.alpha_, K),
                           float(self.kappa), K, n_samples, int(self.theta_steps), th_eps, int(self.theta_leapfrog),
                           self._cfg["floor"], 0, np.zeros((1, K)), out, np.zeros((D, n_samples)),
                           np.zeros((D, n_samples)), np.zeros(D, np.int64))
        return out.mean(axis=1)


def _validate_fitted(est, X):
    """scikit-learn's checks of a fitted estimator's input (feature count, 2-D, finite), X as CSR or array."""
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) == 2 and shape[1] != est.n_features_in_:
        raise ValueError(f"X has {shape[1]} features, but {type(est).__name__} is expecting {est.n_features_in_} "
                         "features as input (the training vocabulary); map documents to the training vocabulary")
    return _normalized(est, validate_data(est, X, accept_sparse="csr", dtype=np.float64, reset=False,
                                          ensure_all_finite=False))


def _normalized(est, X):
    """X with l2-normalised rows when the estimator's ``normalize`` is set, else X as given."""
    if not est.normalize:
        return X
    from sklearn.preprocessing import normalize

    return normalize(X)


_WARM = set()


def _warm_up(method, n_jobs):
    """Compile (or load from Numba's cache) every kernel ``method`` calls by fitting a 2-topic model to 4
    documents of 6 words through the same code path, so that compilation stays off the sampler's clock."""
    if method in _WARM:
        return
    _WARM.add(method)
    X = sp.csr_matrix(np.eye(4, 6) * 0.6 + np.eye(4, 6, 1) * 0.8)
    SphericalAdmixture(2, method, kappa=5.0, sigma=2.0, kappa0=2.0, alpha=1.5, batch_size=2, n_theta_samples=2,
                       max_iter=2, n_jobs=n_jobs, random_state=0, burn_in=0, evaluate_every=1,
                       n_prior_draws=3).fit(X, X).transform(X, n_samples=2)
