"""Slow, obviously correct references for the SAM kernels of ``scalable_bayes.models.sam`` (pure Python loops).

Each twin does the plain computation the kernel's docstring describes, summing in the order the docstring
names, so that the kernel's reorganised loops (triangle-and-mirror Gram matrix, G theta by rows, word blocks,
U carried between GMC transitions) can be checked for the *same numbers*, bit for bit. The theta sampler's twin
calls the library's random streams and sphere kernels (``normal``, ``uniform``, ``key_from_stream``,
``project_tangent``, ``geodesic_flow``, ``theta_init``, ``vbar_score``) on the same keys, and computes U and its
gradient afresh at every point of every trajectory.
"""

from __future__ import annotations

import math

import numpy as np

from scalable_bayes.manifolds.sphere import geodesic_flow, project_tangent
from scalable_bayes.models import sam as M
from scalable_bayes.rng import key_from_stream, normal, uniform


def gram(beta, K, V):
    """G[k, j] = sum_i beta_ki beta_ji, i = 0..V-1 in order, every entry computed on its own."""
    G = np.zeros((K, K))
    for k in range(K):
        for j in range(K):
            s = 0.0
            for i in range(V):
                s += float(beta[k * V + i]) * float(beta[j * V + i])
            G[k, j] = s
    return G


def grad_documents(beta, K, V, indptr, indices, data, docs, thetas, score, norm, scale):
    """The document term of eq. 10, topic by topic: zero, the sparse part document by document, then the dense
    part sum_j M_kj beta_j with M_kj summed over (s, n) in order."""
    S, N = thetas.shape[0], thetas.shape[1]
    grad = np.zeros(K * V)
    for k in range(K):
        base = k * V
        for s in range(S):
            d = docs[s]
            cf = 0.0
            for n in range(N):
                if norm[s, n] >= M.TINY_NORM:
                    cf += thetas[s, n, k] / norm[s, n]
            cf *= -scale * (1.0 / N)
            for p in range(indptr[d], indptr[d + 1]):
                grad[base + indices[p]] += cf * data[p]
        for j in range(K):
            m = 0.0
            for s in range(S):
                for n in range(N):
                    nr = norm[s, n]
                    if nr >= M.TINY_NORM:
                        m += thetas[s, n, k] * thetas[s, n, j] * score[s, n] / (nr * nr)
            m *= scale * (1.0 / N)
            for i in range(V):
                grad[base + i] += m * beta[j * V + i]
    return grad


def lift_potential(y, c, b, G, kappa, K):
    """(U(y), grad U(y)) of the sphere lift, G theta as one dot product per row; (+-inf, None) where a y_i with
    c_i != 0 is 0."""
    u = 0.0
    theta = [float(y[i]) * float(y[i]) for i in range(K)]
    for i in range(K):
        if c[i] != 0.0:
            if y[i] == 0.0:
                return (math.inf if c[i] > 0.0 else -math.inf), None
            u -= c[i] * math.log(abs(y[i]))
    q = 0.0
    lin = 0.0
    gth = [0.0] * K
    for i in range(K):
        lin += theta[i] * b[i]
        gi = 0.0
        for j in range(K):
            gi += G[i, j] * theta[j]
        gth[i] = gi
        q += theta[i] * gi
    nrm = math.sqrt(q) if q > 0.0 else 0.0
    grad = np.zeros(K)
    if nrm < M.TINY_NORM or kappa == 0.0:
        for i in range(K):
            grad[i] = -c[i] / y[i] if c[i] != 0.0 else 0.0
        return u, grad
    f = lin / nrm
    u -= kappa * f
    inv = 1.0 / nrm
    inv3 = lin * inv * inv * inv
    for i in range(K):
        g = -2.0 * kappa * y[i] * (b[i] * inv - inv3 * gth[i])
        if c[i] != 0.0:
            g -= c[i] / y[i]
        grad[i] = g
    return u, grad


def _gmc_transition(y, c, b, G, kappa, K, eps, n_leap, key):
    vp = np.array([normal(key) for _ in range(K)])
    yp = y.copy()
    project_tangent(yp, vp, K)
    u0, grad = lift_potential(yp, c, b, G, kappa, K)
    if not np.isfinite(u0):
        return 0
    h0 = u0
    for i in range(K):
        h0 += 0.5 * vp[i] * vp[i]
    u = u0
    for _ in range(n_leap):
        for i in range(K):
            vp[i] -= 0.5 * eps * grad[i]
        project_tangent(yp, vp, K)
        geodesic_flow(yp, vp, eps, K)
        u, g = lift_potential(yp, c, b, G, kappa, K)
        if not np.isfinite(u):
            return 0
        grad = g
        for i in range(K):
            vp[i] -= 0.5 * eps * grad[i]
        project_tangent(yp, vp, K)
    h1 = u
    for i in range(K):
        h1 += 0.5 * vp[i] * vp[i]
    if not np.isfinite(h1):
        return 0
    if h1 <= h0 or uniform(key) < math.exp(h0 - h1):
        y[:] = yp
        return 1
    return 0


def sample_theta(seed, it, docs, B, G, Ginv, c, kappa, K, n_samples, n_steps, eps, n_leap, floor):
    """(out, score, norm, acc) of :func:`scalable_bayes.models.sam.sample_theta` started at App. F.3's
    initialisation (``warm`` = 0), one document after the other."""
    S = docs.shape[0]
    out = np.zeros((S, n_samples, K))
    score = np.zeros((S, n_samples))
    norm = np.zeros((S, n_samples))
    acc = np.zeros(S, np.int64)
    for s in range(S):
        key = np.zeros(2, np.uint64)
        key_from_stream(seed, it, docs[s], key)
        th = np.zeros(K)
        M.theta_init(B[s], Ginv, K, floor, th)
        y = np.sqrt(th)
        for n in range(n_samples):
            for _ in range(n_steps):
                acc[s] += _gmc_transition(y, c, B[s], G, kappa, K, eps, n_leap, key)
            tot = 0.0
            for i in range(K):
                out[s, n, i] = y[i] * y[i]
                tot += out[s, n, i]
            for i in range(K):
                out[s, n, i] /= tot
            score[s, n], norm[s, n] = M.vbar_score(out[s, n], B[s], G, K)
    return out, score, norm, acc
