"""Slow, obviously correct references for the SG-MCMC Numba kernels (pure Python)."""

from __future__ import annotations

import math

import numpy as np

M64 = (1 << 64) - 1


class NaiveRNG:
    """xoroshiro128+ on Python ints, Marsaglia polar normals (same algorithm as scalable_bayes.rng)."""

    def __init__(self, key):
        self.s0, self.s1 = int(key[0]), int(key[1])

    def u64(self):
        s0, s1 = self.s0, self.s1
        r = (s0 + s1) & M64
        s1 ^= s0
        rotl = lambda v, k: ((v << k) | (v >> (64 - k))) & M64  # noqa: E731
        self.s0 = rotl(s0, 24) ^ s1 ^ ((s1 << 16) & M64)
        self.s1 = rotl(s1, 37)
        return r

    def uniform(self):
        return (self.u64() >> 11) * 2.0**-53

    def uniform_int(self, n):
        return min(int(self.uniform() * n), n - 1)

    def normal_pair(self):
        while True:
            u = 2.0 * self.uniform() - 1.0
            v = 2.0 * self.uniform() - 1.0
            s = u * u + v * v
            if 0.0 < s < 1.0:
                f = math.sqrt(-2.0 * math.log(s) / s)
                return u * f, v * f

    def normals(self, n):
        out = []
        while len(out) < n:
            a, b = self.normal_pair()
            out.append(a)
            if len(out) < n:
                out.append(b)
        return np.array(out)


def sgld(x, g, rng, h):
    z = rng.normals(len(x))
    return x - h * g + math.sqrt(2 * h) * z


def sghmc(x, p, g, rng, h, A, bhat):
    z = rng.normals(len(x))
    p = p - A * p * h - g * h + math.sqrt(2 * (A - bhat) * h) * z
    return x + p * h, p


def sgnht(x, p, xi, g, rng, h, A, fixed=False):
    z = rng.normals(len(x))
    p = p - xi * p * h - g * h + math.sqrt(2 * A * h) * z
    x = x + p * h
    if not fixed:
        xi = xi + (p @ p / len(x) - 1.0) * h
    return x, p, xi


def sghmc_reform(x, u, g, rng, eta, a, bhat):
    z = rng.normals(len(x))
    u = u - a * u - eta * g + math.sqrt(2 * (a - bhat) * eta) * z
    return x + u, u


def sgnht_reform(x, u, alpha, g, rng, eta, a):
    z = rng.normals(len(x))
    u = u - alpha * u - eta * g + math.sqrt(2 * a * eta) * z
    return x + u, u, alpha + (u @ u / len(x) - eta)


def sgnht_matrix(x, p, Xi, g, rng, h, A, mu):
    z = rng.normals(len(x))
    p = p - (Xi @ p) * h - g * h + math.sqrt(2 * A * h) * z
    Xi = Xi + (np.outer(p, p) - np.eye(len(x))) * h / mu
    return x + p * h, p, Xi


def logreg_grad(theta, X, y, idx, prior_var):
    X = X.astype(np.float64)
    N = X.shape[0]
    Xb, yb = X[idx], y[idx]
    s = 1.0 / (1.0 + np.exp(-Xb @ theta))
    return theta / prior_var - (N / len(idx)) * Xb.T @ (yb - s)


def normal_gamma_grad(mu, gam, xs, idx):
    N = len(xs)
    xb = xs[idx]
    c = N / len(idx)
    gmu = (N + 1) * mu * gam - c * gam * xb.sum()
    ggam = -(N + 1) / (2 * gam) + 1 + 0.5 * mu**2 + 0.5 * c * ((xb - mu) ** 2).sum()
    return np.array([gmu, ggam])


def double_well_grad(theta):
    U = lambda t: (t + 4) * (t + 1) * (t - 1) * (t - 3) / 14 + 0.5  # noqa: E731
    eps = 1e-5
    return (U(theta + eps) - U(theta - eps)) / (2 * eps)


def lda_expected_counts(pi, ptr, words, docs, alpha, sweeps, burn, rng):
    """Within-document Gibbs, pure Python, same random-number consumption as models.lda.expected_counts."""
    K, W = pi.shape
    ekw = np.zeros((K, W))
    ek = np.zeros(K)
    keep = sweeps - burn
    for d in docs:
        toks = list(words[ptr[d]:ptr[d + 1]])
        if not toks:
            continue
        z = [rng.uniform_int(K) for _ in toks]
        ndk = np.zeros(K)
        for k in z:
            ndk[k] += 1
        for s in range(sweeps):
            for t, w in enumerate(toks):
                ndk[z[t]] -= 1
                probs = [(alpha + ndk[k]) * pi[k, w] for k in range(K)]
                u = rng.uniform() * sum(probs)
                acc, knew = 0.0, K - 1
                for k in range(K):
                    acc += probs[k]
                    if u < acc:
                        knew = k
                        break
                z[t] = knew
                ndk[knew] += 1
                if s >= burn:
                    ekw[knew, w] += 1.0 / keep
            if s >= burn:
                ek += ndk / keep
    return ekw, ek


def numerical_grad(f, x, eps=1e-6, coords=None):
    coords = range(len(x)) if coords is None else coords
    g = {}
    for i in coords:
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (f(xp) - f(xm)) / (2 * eps)
    return g


def lda_completion_probs(pi, optr, owords, hptr, hwords, alpha, sweeps, rng):
    """Document completion, pure Python, same random-number consumption as evaluation.heldout.completion_probs."""
    K = pi.shape[0]
    out = []
    burn = sweeps // 2
    for d in range(len(optr) - 1):
        toks = list(owords[optr[d]:optr[d + 1]])
        L = len(toks)
        z = [rng.uniform_int(K) for _ in toks]
        ndk = np.zeros(K)
        for k in z:
            ndk[k] += 1
        th = np.zeros(K)
        for s in range(sweeps):
            for t, w in enumerate(toks):
                ndk[z[t]] -= 1
                probs = [(alpha + ndk[k]) * pi[k, w] for k in range(K)]
                u = rng.uniform() * sum(probs)
                acc, knew = 0.0, K - 1
                for k in range(K):
                    acc += probs[k]
                    if u < acc:
                        knew = k
                        break
                z[t] = knew
                ndk[knew] += 1
            if s >= burn:
                th += (ndk + alpha) / (L + K * alpha)
        th /= sweeps - burn
        for w in hwords[hptr[d]:hptr[d + 1]]:
            out.append(float(th @ pi[:, w]))
    return np.array(out)
