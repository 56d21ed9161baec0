"""Held-out scores of the spherical admixture model (SAM): the log-perplexity of test documents.

SGGMC paper (Liu, Zhu & Song 2016), Sec. 5.3: for a test document v_d,
log pi(v_d | beta) = log integral c_V(kappa) exp(kappa v_d' vbar(beta, theta)) Dir(theta; alpha) dtheta,
averaged over topic samples inside the log, and log-perplexity = -(1/D_test) sum_d log pi(v_d | {beta^(m)}).
Two estimators of the same quantity:

* :func:`prior_draw_log_perplexity`: the paper's, with Dirichlet prior draws of theta (biased by
  hundreds to thousands of nats at the paper's concentrations, where the prior rarely reaches the
  narrow theta posterior);
* :func:`importance_log_lik`: ours, importance sampling from a defensive mixture fitted to each
  document's theta posterior; it converges there.

:class:`scalable_bayes.inference.sam.SphericalAdmixture` scores its checkpoints and
``log_perplexity`` through them; the model's kernels (Gram matrix, document projections, the prior-draw
likelihood) are :mod:`scalable_bayes.models.sam`.
"""

from __future__ import annotations

import logging
import math

import numpy as np
from scipy.special import gammaln

from ..models import sam as M
from ..rng import make_key

logger = logging.getLogger(__name__)

__all__ = ["prior_draw_log_perplexity", "importance_log_lik"]


IS_T_DOF = 5.0        # degrees of freedom of the Student-t proposal
IS_T_SCALE = 1.5      # its scale matrix: IS_T_SCALE x the inverse negative Hessian at the mode
IS_PRIOR_WEIGHT = 0.1  # weight of the prior in the defensive mixture


def _alr_newton(B, G, alpha, kappa, floor, n_steps=50):
    """Mode and Hessian of L(z) = sum_k alpha_k log theta_k + kappa f(theta), theta = softmax(z, 0), per row of B,
    by damped Newton steps (ours). z are the additive log-ratios log(theta_k / theta_K), k < K; L is the log
    of the theta posterior in z (the Dirichlet's alpha_k - 1 plus the softmax Jacobian's 1), up to constants.
    f = theta'b / sqrt(theta'G theta). Returns (z (D, K-1), -Hessian (D, K-1, K-1), L at the mode)."""
    D, K = B.shape
    th0 = np.zeros(K)
    Ginv = np.linalg.pinv(G, rcond=1e-10)
    z = np.empty((D, K - 1))
    for d in range(D):
        M.theta_init(B[d], Ginv, K, floor, th0)
        t = np.maximum(th0, floor)
        z[d] = np.log(t[:-1]) - math.log(t[-1])

    def theta_of(z):
        zz = np.concatenate([z, np.zeros((z.shape[0], 1))], axis=1)
        zz -= zz.max(axis=1, keepdims=True)
        logth = zz - np.log(np.exp(zz).sum(axis=1, keepdims=True))
        return np.exp(logth), logth

    def value(z, rows):
        th, logth = theta_of(z)
        lin = (th * B[rows]).sum(axis=1)
        q = np.maximum(((th @ G) * th).sum(axis=1), M.TINY_NORM ** 2)
        return logth @ alpha + kappa * lin / np.sqrt(q)

    def grad_hess(z, rows):
        th, _ = theta_of(z)
        Br = B[rows]
        lin = (th * Br).sum(axis=1)
        Gt = th @ G
        q = np.maximum((th * Gt).sum(axis=1), M.TINY_NORM ** 2)
        sq = np.sqrt(q)
        # gradient and Hessian of f in theta
        gf = Br / sq[:, None] - (lin / (q * sq))[:, None] * Gt
        Hf = (-(Br[:, :, None] * Gt[:, None, :] + Gt[:, :, None] * Br[:, None, :]) / (q * sq)[:, None, None]
              - (lin / (q * sq))[:, None, None] * G[None] + (3.0 * lin / (q * q * sq))[:, None, None]
              * Gt[:, :, None] * Gt[:, None, :])
        g = kappa * gf
        gbar = (th * g).sum(axis=1, keepdims=True)
        u = th * (g - gbar)                      # J' g (J = d theta / d z, all K columns)
        Jm = -th[:, :, None] * th[:, None, :]
        idx = np.arange(K)
        Jm[:, idx, idx] += th                    # J = diag(theta) - theta theta'
        a0 = alpha.sum()
        grad = (alpha[None, :] - a0 * th + u)[:, :-1]
        H = Jm @ (kappa * Hf) @ Jm               # J' Hf J (J symmetric); batched matrix products
        H[:, idx, idx] += u
        H -= u[:, :, None] * th[:, None, :] + th[:, :, None] * u[:, None, :]
        H -= a0 * Jm
        return grad, H[:, :-1, :-1]

    allr = np.arange(D)
    val = value(z, allr)
    grad, H = grad_hess(z, allr)
    eye = np.eye(K - 1)
    active = allr.copy()  # rows whose Newton decrement is still above the tolerance
    for _ in range(n_steps):
        neg = -H[active]
        # where -H is not positive definite (far from the mode) add a ridge that makes it so
        lo = np.linalg.eigvalsh(neg)[:, 0]
        scale = np.abs(np.diagonal(neg, axis1=1, axis2=2)).max(axis=1) + 1.0
        ridge = np.where(lo > 1e-8 * scale, 0.0, 1e-6 * scale - lo)
        step = np.linalg.solve(neg + ridge[:, None, None] * eye[None], grad[active][..., None])[..., 0]
        decrement = (step * grad[active]).sum(axis=1)  # Newton decrement^2: the predicted gain x 2
        conv = decrement < 1e-10
        active, step = active[~conv], step[~conv]
        if not active.size:
            break
        t = np.ones(active.size)
        pending = np.ones(active.size, dtype=bool)
        for _ls in range(40):  # backtracking: accept the first step that does not lower L
            rows = active[pending]
            trial = z[rows] + t[pending, None] * step[pending]
            v2 = value(trial, rows)
            ok = v2 >= val[rows] - 1e-12 * np.abs(val[rows])
            z[rows[ok]], val[rows[ok]] = trial[ok], v2[ok]
            idx_p = np.flatnonzero(pending)
            pending[idx_p[ok]] = False
            if not pending.any():
                break
            t[pending] *= 0.5
        moved = active[~pending]
        if moved.size:
            g2, H2 = grad_hess(z[moved], moved)
            grad[moved], H[moved] = g2, H2
        active = active[~pending]  # rows where no step was accepted are at the mode to rounding
    return z, -H, val


def _proposal_cholesky(neg_h):
    """Cholesky factors of the proposal precisions ``-H + 1e-10 I`` of :func:`importance_log_lik`, one per document.

    Where the Newton search of :func:`_alr_newton` stopped off a maximum (its step budget spent, or a saddle of
    the log posterior), ``-H`` is not positive definite and has no Cholesky factor. Those documents get the
    ridge the Newton steps use (their smallest eigenvalue lifted to 1e-6 times the largest diagonal entry):
    any positive definite scale gives a valid proposal, and the defensive mixture keeps the estimate unbiased
    whatever the proposal's centre and scale (only its variance depends on them). Documents whose ``-H`` is
    positive definite keep exactly the factor of ``-H + 1e-10 I``."""
    k1 = neg_h.shape[-1]
    eye = np.eye(k1)
    try:
        return np.linalg.cholesky(neg_h + 1e-10 * eye[None])
    except np.linalg.LinAlgError:
        pass
    out = np.empty_like(neg_h)
    n_ridged = 0
    for d in range(neg_h.shape[0]):
        try:
            out[d] = np.linalg.cholesky(neg_h[d] + 1e-10 * eye)
        except np.linalg.LinAlgError:
            lo = np.linalg.eigvalsh(neg_h[d])[0]
            scale = np.abs(np.diagonal(neg_h[d])).max() + 1.0
            out[d] = np.linalg.cholesky(neg_h[d] + (1e-6 * scale - min(lo, 0.0)) * eye)
            n_ridged += 1
    logger.info("importance sampling: %d of %d documents' Laplace precision was not positive definite (Newton "
                "search ended off a maximum); their proposals use the ridged precision", n_ridged, neg_h.shape[0])
    return out


def importance_log_lik(samples, X_test, alpha, kappa, log_cv, n_draws, seed, *, floor, chunk=64):
    """Held-out log-likelihood of each SAM test document by importance sampling.

    log pi(v_d | {beta^(m)}) = log (1/M) sum_m integral c_V(kappa) exp(kappa v_d'vbar(beta^(m), theta))
    Dir(theta; alpha) dtheta per row of ``X_test`` by importance sampling (ours; the quantity of SGGMC Sec. 5.3,
    a different estimator).

    Why: at the paper's concentrations (kappa = 2e4-3e4) the posterior of theta_d is far narrower than the
    prior, so Sec. 5.3's prior draws almost never land where the likelihood is: the estimate of log pi is
    biased by hundreds to thousands of nats and changes with the number of draws (sggmc README). Here, for each topic
    sample and document, the posterior is located in additive log-ratio coordinates z = log(theta_k /
    theta_K) by Newton's method (:func:`_alr_newton`; the mean-field Dirichlet of VI is no substitute: on a
    K = 2 test its concentration was 50x the posterior's), and the ``n_draws`` draws come from the defensive
    mixture (Hesterberg 1995) q = 0.9 t_5(z*, 1.5 H^-1) + 0.1 pi(z), with pi the Dirichlet prior mapped to z:
    the Student-t's tails cover a posterior wider than its Laplace approximation, and the prior component
    bounds every weight by 10 x the prior-draw weight, so the estimate is unbiased for pi(v_d | beta) whatever
    the mode's quality; only its variance depends on it. Weights w = c_V(kappa) exp(kappa f) pi(z) / q(z),
    f = theta'b / sqrt(theta'G theta), b = beta v_d, G = beta beta'.

    Draws come from ``numpy.random.default_rng([seed, 7, m, chunk index])``: deterministic for a seed.

    Parameters
    ----------
    samples : ndarray of shape (M, K, V)
        Topic samples beta^(m), unit rows.
    X_test : scipy.sparse.csr_matrix of shape (D, V)
        Test documents, unit rows.
    alpha : ndarray of shape (K,)
        Dirichlet prior of the topic proportions.
    kappa : float
        Concentration of the documents around vbar (eq. 9).
    log_cv : float
        log c_V(kappa), the vMF normaliser in dimension V.
    n_draws : int
        Importance draws per document and topic sample.
    seed : int
        Seed of the draws.
    floor : float
        Floor of the initial theta (App. F.3's initialisation) that starts the Newton search for the mode.
    chunk : int, default 64
        Documents per batch of draws (memory: chunk x n_draws x K floats).

    Returns
    -------
    logp : ndarray of shape (D,)
        log pi(v_d | {beta^(m)}) per document, in nats.
    se : ndarray of shape (D,)
        Delta-method standard error of each log (the per-sample estimates are independent).
    diagnostics : dict
        ``ess`` (D, M), the effective sample size (sum w)^2 / sum w^2 per document and topic sample,
        and ``n_draws``.
    """
    samples = np.asarray(samples)
    Msz, K, V = samples.shape
    D = X_test.shape[0]
    ip, ix, dt = X_test.indptr.astype(np.int64), X_test.indices.astype(np.int64), X_test.data.astype(np.float64)
    alpha = np.asarray(alpha, dtype=np.float64)
    lnorm_alpha = gammaln(alpha.sum()) - gammaln(alpha).sum()
    nu, k1 = IS_T_DOF, K - 1
    lt_const = gammaln((nu + k1) / 2.0) - gammaln(nu / 2.0) - 0.5 * k1 * math.log(nu * math.pi)
    log_pm = np.empty((D, Msz))   # log p^_m(v_d)
    var_pm = np.empty((D, Msz))   # Var(p^_m) / p^_m^2 (delta method)
    ess = np.empty((D, Msz))
    docs_all = np.arange(D, dtype=np.int64)
    for m in range(Msz):
        b = np.ascontiguousarray(samples[m], dtype=np.float64).ravel()
        G = np.zeros((K, K))
        B = np.zeros((D, K))
        bt = M.transpose_topics(b, K, V)
        M.gram(b, K, V, G, bt)
        M.doc_projections(b, K, V, ip, ix, dt, docs_all, B, bt)
        zstar, negH, _ = _alr_newton(B, G, alpha, kappa, floor)
        for c, lo in enumerate(range(0, D, chunk)):
            hi = min(D, lo + chunk)
            n = hi - lo
            rng = np.random.default_rng([int(seed), 7, m, c])
            # proposal scale: L L' = IS_T_SCALE (-H)^-1, by the Cholesky factor of -H
            Lh = _proposal_cholesky(negH[lo:hi])
            Linv = np.linalg.inv(Lh)  # (L^-T eps)_k = sum_l eps_l (L^-1)_lk: one batched product per document
            logdet_scale = k1 * math.log(IS_T_SCALE) - 2.0 * np.log(np.diagonal(Lh, axis1=1, axis2=2)).sum(axis=1)
            from_prior = rng.random((n, n_draws)) < IS_PRIOR_WEIGHT
            eps = rng.standard_normal((n, n_draws, k1))
            chi = rng.chisquare(nu, (n, n_draws))
            # t draw: z* + sqrt(scale) L^-T eps / sqrt(chi / nu)
            y = eps @ Linv
            zt = zstar[lo:hi, None, :] + math.sqrt(IS_T_SCALE) * y / np.sqrt(chi / nu)[..., None]
            gp = np.maximum(rng.standard_gamma(np.broadcast_to(alpha, (n, n_draws, K))), np.finfo(float).tiny)
            zp = np.log(gp[..., :-1]) - np.log(gp[..., -1:])
            z = np.where(from_prior[..., None], zp, zt)
            zz = np.concatenate([z, np.zeros((n, n_draws, 1))], axis=2)
            mxz = zz.max(axis=2, keepdims=True)
            logth = zz - mxz - np.log(np.exp(zz - mxz).sum(axis=2, keepdims=True))
            th = np.exp(logth)
            lin = np.einsum("dnk,dk->dn", th, B[lo:hi])
            quad = ((th @ G) * th).sum(axis=2)
            f = lin / np.sqrt(np.maximum(quad, M.TINY_NORM ** 2))
            log_prior_z = lnorm_alpha + np.einsum("dnk,k->dn", logth, alpha)
            dz = z - zstar[lo:hi, None, :]
            r = dz @ Lh                                       # L' dz: (dz' (-H) dz) = |L' dz|^2
            maha = (r * r).sum(axis=2) / IS_T_SCALE
            log_t = lt_const - 0.5 * logdet_scale[:, None] - 0.5 * (nu + k1) * np.log1p(maha / nu)
            log_q = np.logaddexp(math.log1p(-IS_PRIOR_WEIGHT) + log_t, math.log(IS_PRIOR_WEIGHT) + log_prior_z)
            lw = log_cv + kappa * f + log_prior_z - log_q
            top = lw.max(axis=1, keepdims=True)
            w = np.exp(lw - top)
            s1, s2 = w.sum(axis=1), (w * w).sum(axis=1)
            mean = s1 / n_draws
            log_pm[lo:hi, m] = top[:, 0] + np.log(mean)
            var = np.maximum(s2 / n_draws - mean * mean, 0.0) * n_draws / max(n_draws - 1, 1)
            var_pm[lo:hi, m] = var / n_draws / (mean * mean)
            ess[lo:hi, m] = s1 * s1 / s2
    top = log_pm.max(axis=1, keepdims=True)
    r = np.exp(log_pm - top)                 # p^_m / max_m p^_m
    logp = top[:, 0] + np.log(r.mean(axis=1))
    se = np.sqrt((r * r * var_pm).sum(axis=1)) / r.sum(axis=1)
    return logp, se, {"ess": ess, "n_draws": int(n_draws)}


def prior_draw_log_perplexity(samples, X_test, alpha, kappa, log_cv, n_draws, seed):
    """Log-perplexity of ``X_test`` by the SGGMC paper's estimator (Sec. 5.3): Dirichlet prior draws of theta.

    log pi(v_d | {beta^(m)}) ~= log (1/M) sum_m (1/N) sum_n c_V(kappa) exp(kappa v_d' vbar(beta^(m), theta^(n))),
    theta^(n) ~ Dir(alpha), and log-perplexity = -(1/D) sum_d log pi(v_d | {beta^(m)}) (lower is better).
    At the paper's concentrations the prior draws rarely reach the narrow theta posterior, so this estimate
    is biased upwards by hundreds to thousands of nats (:func:`importance_log_lik` converges there).

    Parameters
    ----------
    samples : ndarray of shape (M, K, V)
        Topic samples beta^(m), each row a unit vector (float32 or float64).
    X_test : scipy.sparse.csr_matrix of shape (D, V)
        Test documents, unit rows (tf-idf directions v_d).
    alpha : ndarray of shape (K,)
        Dirichlet prior of the topic proportions.
    kappa : float
        Concentration of the documents around vbar (eq. 9).
    log_cv : float
        log c_V(kappa), the vMF normaliser in dimension V.
    n_draws : int
        Prior draws N per document.
    seed : int
        Seed of the draws (a document's draws depend on the seed and its row only).

    Returns
    -------
    log_perplexity : float
        -(1/D) sum_d log pi(v_d | {beta^(m)}), in nats per document.
    se : float
        Its Monte Carlo standard error (delta method per document, independent across documents).
    """
    Msz, K, V = samples.shape
    D = X_test.shape[0]
    ip, ix, dt = X_test.indptr.astype(np.int64), X_test.indices.astype(np.int64), X_test.data.astype(np.float64)
    docs = np.arange(D, dtype=np.int64)
    Bm = np.zeros((Msz, D, K))
    Gm = np.zeros((Msz, K, K))
    for m in range(Msz):
        b = np.ascontiguousarray(samples[m], dtype=np.float64).ravel()  # float32 samples: widened one at a time
        bt = M.transpose_topics(b, K, V)
        M.gram(b, K, V, Gm[m], bt)
        M.doc_projections(b, K, V, ip, ix, dt, docs, Bm[m], bt)
    lw = np.zeros((D, n_draws))
    lm = np.zeros((D, Msz + K))
    keys = np.zeros((D, 2), np.uint64)
    logp = np.zeros(D)
    se = np.zeros(D)
    M.log_lik_prior_draws(Bm, Gm, np.asarray(alpha, dtype=np.float64), kappa, log_cv, n_draws,
                          int(make_key(seed, 6)[0] >> np.uint64(1)), docs, lw, lm, keys, logp, se)
    return float(-logp.mean()), float(math.sqrt(np.sum(se ** 2)) / D)
