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


# ------------------------------------------------------------------ geodesic samplers (SGGMC paper)
def sphere_flow(x, v, t, block):
    """SGGMC eq. 7 per block, then renormalise x and re-project v (NumPy, per block)."""
    x, v = x.copy(), v.copy()
    for s in range(0, len(x), block):
        xb, vb = x[s:s + block], v[s:s + block]
        a = math.sqrt(float(vb @ vb))
        if a > 0:
            xn = xb * math.cos(a * t) + vb * (math.sin(a * t) / a)
            vn = vb * math.cos(a * t) - xb * (a * math.sin(a * t))
        else:
            xn, vn = xb.copy(), vb.copy()
        xn = xn / math.sqrt(float(xn @ xn))
        vn = vn - (xn @ vn) * xn
        x[s:s + block], v[s:s + block] = xn, vn
    return x, v


def sphere_project(x, v, block):
    v = v.copy()
    for s in range(0, len(x), block):
        v[s:s + block] -= (x[s:s + block] @ v[s:s + block]) * x[s:s + block]
    return v


def sg_geodesic(x, v, xi, grads, rng, eps, C, V, thermo, block, L=1, datum_grads=None, N=None):
    """SGGMC / gSGNHT, rotated ABOBA (scalable_bayes.samplers.geodesic docstring), L inner steps.
    ``grads(x, l)`` the minibatch gradient at inner step l; ``datum_grads(x)`` (b, n) per-datum log-lik
    gradients for the Fisher V (then ``V`` is ignored). Returns x, v, xi, clipped count."""
    n = len(x)
    m = (n // block) * (block - 1)
    v = sphere_project(x, v, block)
    clipped = 0
    for ell in range(L):
        g = grads(x, ell)
        fric = xi if thermo else C
        f = math.exp(-0.5 * fric * eps)
        z = rng.normals(n)
        if datum_grads is None:
            noise = math.sqrt((2 * C - eps * V) * eps) * z
        else:
            z = sphere_project(x, z, block)
            D = datum_grads(x)
            b = D.shape[0]
            if 2 <= b < N:
                P = D - D.mean(axis=0)
                P = np.array([sphere_project(x, row, block) for row in P])
                c = eps * N * (N - b) / (b * (b - 1)) / (2 * C)
                lam, Q = np.linalg.eigh(P @ P.T)
                for k in range(b):
                    if not lam[k] > 1e-14 * max(lam.max(), 0):
                        continue
                    u = P.T @ Q[:, k] / math.sqrt(lam[k])
                    t = c * lam[k]
                    if t > 1:
                        clipped += 1
                        t = 1.0
                    z = z - (1 - math.sqrt(1 - t)) * (u @ z) * u
            noise = math.sqrt(2 * C * eps) * z
        v = f * v - eps * g + noise
        v = sphere_project(x, v, block)
        v = f * v
        if thermo:
            xi = xi + (v @ v / m - 1) * eps
        x, v = sphere_flow(x, v, eps, block)
    return x, v, xi, clipped


def gmc(x, grad, pot, rng, eps, T, block):
    """One geodesic Monte Carlo transition (Byrne & Girolami 2013) with an MH test. Returns x, v, acc prob."""
    n = len(x)
    v = sphere_project(x, rng.normals(n), block)
    x0 = x.copy()
    h0 = pot(x) + 0.5 * v @ v
    g = grad(x)
    for _ in range(T):
        v = sphere_project(x, v - 0.5 * eps * g, block)
        x, v = sphere_flow(x, v, eps, block)
        g = grad(x)
        v = sphere_project(x, v - 0.5 * eps * g, block)
    h1 = pot(x) + 0.5 * v @ v
    acc = 1.0 if h0 - h1 >= 0 else math.exp(h0 - h1)
    if not rng.uniform() < acc:
        x = x0
    return x, v, acc


def vmf_mixture_grads(v, X, idx, k1, k2, kx, e1, e2):
    """(minibatch gradient of U~, per-datum log-lik gradients (b, 2d)) of the two-vMF mixture posterior."""
    d = X.shape[1]
    v1, v2 = v[:d], v[d:]
    w = v1 + v2
    r = np.linalg.norm(w)
    mu = w / r
    rows = []
    for i in idx:
        xi_ = X[i]
        s1, s2 = kx * v1 @ xi_, kx * mu @ xi_
        a1 = 1.0 / (1.0 + math.exp(s2 - s1))
        a2 = 1.0 - a1
        t = kx * a2 * (xi_ - mu * (mu @ xi_)) / r
        rows.append(np.concatenate([kx * a1 * xi_ + t, t]))
    D = np.array(rows)
    g = -(len(X) / len(idx)) * D.sum(axis=0) - np.concatenate([k1 * np.asarray(e1), k2 * np.asarray(e2)])
    return g, D


# ------------------------------------------------------------------ simplex samplers (SCIR, SGRLD)
# The simplex kernels draw from per-block keys derived with ``key_from_stream`` and from the gamma, Poisson
# and ziggurat-normal generators of scalable_bayes.rng; the twins below make the same calls on the same keys
# (the library's draws, called from Python one at a time) and do every other operation in plain Python.


def _block_keys(key, n_blocks):
    """The per-block keys of one simplex step: one 64-bit draw of the chain's ``key``, then block b's key is
    the stream (that draw, b, 0)."""
    from scalable_bayes import rng as lib_rng

    seed = np.uint64(lib_rng.next_u64(key))
    keys = []
    for b in range(n_blocks):
        kb = np.empty(2, np.uint64)
        lib_rng.key_from_stream(seed, b, 0, kb)
        keys.append(kb)
    return keys


def cir_transition(key, theta, a, c, r):
    """One exact CIR transition (SCIR eq. 2.2) from ``theta`` towards Gamma(a, 1), c = 1 - e^-h, r = 1/(e^h - 1):
    a central gamma plus a shifted squared normal for a > 1/2, a Poisson mixture of gammas otherwise."""
    from scalable_bayes import rng as lib_rng

    if not (theta >= 0.0) or not (a > 0.0) or not (a < math.inf):
        return math.nan
    lam = theta * r
    if a > 0.5:
        if not (lam < math.inf):
            return math.nan
        z = lib_rng.ziggurat_normal(key) + math.sqrt(2.0 * lam)
        return c * lib_rng.gamma(key, a - 0.5) + 0.5 * c * z * z
    pk = lib_rng.poisson(key, lam)
    if pk < 0:
        return math.nan
    return c * lib_rng.gamma(key, a + pk)


def scir(x, g, key, h, block, alpha):
    """SCIR, Alg. 1: every theta_j takes one exact CIR transition over h towards Gamma(alpha_j + n^_j, 1)
    (``g`` = n^, the minibatch estimate of the counts); NaN where alpha_j + n^_j is not positive."""
    n = len(x)
    c, r = -math.expm1(-h), 1.0 / math.expm1(h)
    out = np.array(x, dtype=np.float64)
    for b, kb in enumerate(_block_keys(key, n // block)):
        for j in range(b * block, (b + 1) * block):
            a = alpha[j] + g[j]
            out[j] = cir_transition(kb, x[j], a, c, r) if a > 0.0 else math.nan
    return out


def sgrld(x, g, key, h, block, alpha):
    """SGRLD, expanded-mean parametrisation with mirroring (Patterson & Teh 2013; SCIR Sec. 1.2):
    theta_j <- |theta_j + h (alpha_j + n^_j - theta_j - omega_j n^_b) + sqrt(2 h theta_j) z_j| with omega and
    n^_b of theta_j's block taken before the step."""
    from scalable_bayes import rng as lib_rng

    out = np.array(x, dtype=np.float64)
    s2h = math.sqrt(2.0 * h)
    for b, kb in enumerate(_block_keys(key, len(x) // block)):
        s = b * block
        tot = 0.0
        nbk = 0.0
        for j in range(s, s + block):
            tot += x[j]
            nbk += g[j]
        inv = 1.0 / tot
        z = []
        for _ in range(0, block, 2):
            z.extend(lib_rng.normal_pair(kb))
        for j in range(s, s + block):
            t = x[j]
            out[j] = abs(t + h * (alpha[j] + g[j] - t - t * inv * nbk) + s2h * math.sqrt(t) * z[j - s])
    return out
