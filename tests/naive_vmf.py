"""Slow, obviously-correct references for the vMF code (mpmath at 50 digits, dense Python loops)."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np

mp.mp.dps = 50


def log_besseli_mp(nu, x):
    """log I_nu(x) with mpmath; raises mpmath.libmp.NoConvergence where mpmath cannot converge."""
    return float(mp.log(mp.besseli(mp.mpf(nu), mp.mpf(x), maxterms=10**4)))


def ratio_mp(d, kappa):
    return float(mp.besseli(mp.mpf(d) / 2, kappa, maxterms=10**4) / mp.besseli(mp.mpf(d) / 2 - 1, kappa, maxterms=10**4))


def kappa_mp(r, d):
    """Root of A_d(kappa) = r by mpmath's secant/Newton from Banerjee's start."""
    f = lambda k: mp.besseli(mp.mpf(d) / 2, k) / mp.besseli(mp.mpf(d) / 2 - 1, k) - r  # noqa: E731
    k0 = r * (d - r * r) / (1 - r * r)
    return float(mp.findroot(f, mp.mpf(k0)))


def log_partition_uniform_mp(d, kappa):
    nu = mp.mpf(d) / 2 - 1
    k = mp.mpf(kappa)
    return float(mp.loggamma(mp.mpf(d) / 2) + mp.log(mp.besseli(nu, k)) - nu * mp.log(k / 2))


def negentropy_mp(r, d):
    k = mp.mpf(kappa_mp(r, d))
    # refine kappa in mpmath precision
    nu = mp.mpf(d) / 2 - 1
    k = mp.findroot(lambda kk: mp.besseli(nu + 1, kk) / mp.besseli(nu, kk) - r, k)
    return float(k * r - (mp.loggamma(mp.mpf(d) / 2) + mp.log(mp.besseli(nu, k)) - nu * mp.log(k / 2)))


def movmf_log_prob_naive(X, eta, log_w, log_norm):
    """log p_ik = log w_k + log C_d(kappa_k) + x_i . eta_k, by explicit loops over a dense X."""
    X = np.asarray(X.todense()) if hasattr(X, "todense") else np.asarray(X)
    n, d = X.shape
    K = eta.shape[0]
    out = np.empty((n, K))
    for i in range(n):
        for k in range(K):
            s = 0.0
            for j in range(d):
                s += X[i, j] * eta[k, j]
            out[i, k] = log_w[k] + log_norm[k] + s
    return out


def logsumexp_rows_naive(L):
    out = []
    for row in L:
        m = max(row)
        out.append(m + math.log(sum(math.exp(v - m) for v in row)))
    return np.array(out)
