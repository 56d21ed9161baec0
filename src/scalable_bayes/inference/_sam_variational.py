"""Mean-field VI and stochastic VI of the spherical admixture model: the steps of
:class:`~scalable_bayes.inference.sam.SphericalAdmixture` for ``method="vi"`` and ``"stovi"``.

Our reconstruction of Reisinger et al. (2010)'s variational SAM, the VI baseline of the SGGMC paper
(Liu, Zhu & Song 2016, Sec. 5.3), and of its stochastic version after Hoffman et al. (2013); the
estimator's module docstring states the objective and the step rules. Each function takes the
estimator (its private state: ``_cfg``, ``_X``, ``_beta``, ``_gam``, ``_vi_eta``) as its first
argument; the estimator calls :func:`vi_step` once per iteration.
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln, polygamma, psi

from ..models import sam as M


def vi_local_obj(gam, B, G, alpha, kappa):
    """Per row: -KL(Dir(gamma)||Dir(alpha)) + kappa f(gamma) with f = E[theta]'b / sqrt(E||beta theta||^2)
    (Reisinger et al.'s approximation of E[v'vbar]); and its gradient w.r.t. gamma."""
    g0 = gam.sum(axis=1)
    a0 = alpha.sum()
    dg = psi(gam) - psi(g0)[:, None]
    kl = (gammaln(g0) - gammaln(gam).sum(axis=1) - gammaln(a0) + gammaln(alpha).sum()
          + ((gam - alpha[None, :]) * dg).sum(axis=1))
    dkl = (gam - alpha[None, :]) * polygamma(1, gam) - (polygamma(1, g0) * (g0 - a0))[:, None]
    Gg = gam @ G
    diag = np.diag(G)[None, :]
    den = g0 * (g0 + 1.0)
    qn = (gam * Gg).sum(axis=1) + (gam * diag).sum(axis=1)
    q = np.maximum(qn / den, M.TINY_NORM ** 2)
    lin = (gam * B).sum(axis=1) / g0
    sq = np.sqrt(q)
    f = lin / sq
    dlin = B / g0[:, None] - (lin / g0)[:, None]
    dq = (2.0 * Gg + diag) / den[:, None] - (q * (2.0 * g0 + 1.0) / den)[:, None]
    df = dlin / sq[:, None] - (lin / (2.0 * q * sq))[:, None] * dq
    return -kl + kappa * f, -dkl + kappa * df


def vi_local(est, gam, B, G, n_steps):
    """Gradient ascent on log gamma of ELBO_d = -KL(Dir(gamma_d)||Dir(alpha)) + kappa f_d(gamma_d) for
    every row, with per-row adaptive steps; returns gamma and the per-row objective."""
    alpha = est._cfg["alpha"]
    kappa = float(est.kappa)
    lam = np.log(gam)
    obj, g = vi_local_obj(np.exp(lam), B, G, alpha, kappa)
    step = np.full(gam.shape[0], 0.1)
    for _t in range(n_steps):
        trial = np.clip(lam + step[:, None] * g * np.exp(lam), -7.0, 14.0)
        o2, g2 = vi_local_obj(np.exp(trial), B, G, alpha, kappa)
        up = o2 >= obj
        lam[up] = trial[up]
        obj[up] = o2[up]
        g[up] = g2[up]
        step = np.where(up, step * 1.5, step * 0.5)
    return np.exp(lam), obj


def vi_init_gamma(est, docs, B, G):
    K = est._cfg["K"]
    alpha = est._cfg["alpha"]
    Ginv = np.linalg.pinv(G, rcond=1e-10)
    th = np.zeros(K)
    out = np.empty((docs.shape[0], K))
    for s in range(docs.shape[0]):
        M.theta_init(B[s], Ginv, K, est._cfg["floor"], th)
        out[s] = np.maximum(alpha.sum() * th, alpha / 10.0)
    return out


def vi_beta_grad(est, beta, docs, gam, B, G, scale):
    """Euclidean gradient (flat K*V) of the ELBO w.r.t. the topics: ``scale`` (kappa D / S) times the
    gradient of sum_{d in batch} v_d' rho_d, plus that of -log c_V(||mbar||) (eq. 9), +sigma A_V mbar/||mbar||."""
    K, V = est._cfg["K"], est.n_features_in_
    g0 = gam.sum(axis=1, keepdims=True)
    e = gam / g0
    lin = (e * B).sum(axis=1)
    den = g0[:, 0] * (g0[:, 0] + 1.0)
    q = (np.einsum("sk,kj,sj->s", gam, G, gam) + (gam * np.diag(G)[None, :]).sum(axis=1)) / den
    q = np.maximum(q, M.TINY_NORM ** 2)
    sq = np.sqrt(q)
    Xb = est._X[docs]
    coef = e / sq[:, None]
    grad = np.asarray(Xb.T @ coef).T
    w = lin / (q * sq) / den
    Mkj = np.einsum("s,sk,sj->kj", w, gam, gam) + np.diag((w[:, None] * gam).sum(axis=0))
    grad = scale * (np.asarray(grad) - Mkj @ beta.reshape(K, V))
    flat = -grad.ravel()  # the gradient of the negative ELBO ...
    est._prior_grad(beta, flat)  # ... plus grad log c_V(||mbar||) = -sigma A mbar/||mbar||
    return -flat


def elbo(est, beta, docs, gam):
    K, V = est._cfg["K"], est.n_features_in_
    G = np.zeros((K, K))
    bt = M.transpose_topics(beta, K, V)
    M.gram(beta, K, V, G, bt)
    B = np.zeros((docs.shape[0], K))
    ip, ix, dt = est._csr
    M.doc_projections(beta, K, V, ip, ix, dt, docs, B, bt)
    obj, _ = vi_local_obj(gam, B, G, est._cfg["alpha"], float(est.kappa))
    return float(obj.sum()) - est._log_cv_mbar(beta)


def vi_step(est, it, full):
    cfg = est._cfg
    K, V = cfg["K"], est.n_features_in_
    D = est._X.shape[0]
    docs = est._batch() if not full else np.arange(D, dtype=np.int64)
    S = docs.shape[0]
    B = np.zeros((S, K))
    est._summaries(est._beta, docs, B)
    G = est._G.copy()
    if full:
        if est._gam is None:
            est._gam = vi_init_gamma(est, docs, B, G)
        gam, _ = vi_local(est, est._gam, B, G, int(est.vi_local_steps))
        est._gam = gam
    else:
        gam, _ = vi_local(est, vi_init_gamma(est, docs, B, G), B, G, int(est.vi_local_steps))
    g = vi_beta_grad(est, est._beta, docs, gam, B, G, float(est.kappa) * D / S)
    gk = g.reshape(K, V).copy()
    bk = est._beta.reshape(K, V)
    gk -= (gk * bk).sum(axis=1, keepdims=True) * bk
    gn = np.linalg.norm(gk, axis=1, keepdims=True)
    dirn = np.where(gn > 0, gk / np.where(gn > 0, gn, 1.0), 0.0)

    def moved(eta):
        nb = bk + eta * dirn
        return (nb / np.linalg.norm(nb, axis=1, keepdims=True)).ravel()

    if full:
        e0 = elbo(est, est._beta, docs, gam)
        eta = est._vi_eta
        for _ in range(20):
            cand = moved(eta)
            if elbo(est, cand, docs, gam) >= e0:
                est._beta = cand
                est._vi_eta = min(eta * 1.2, 1.0)
                break
            eta *= 0.5
        else:
            est._vi_eta = eta
        est.elbo_ = e0
    else:
        tau0 = float(est.stovi_tau0)
        est._beta = moved(float(est.vi_step) * ((tau0 + 1.0) / (tau0 + it)) ** float(est.stovi_kappa))
