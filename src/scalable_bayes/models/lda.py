"""Semi-collapsed LDA in the expanded-natural parametrisation (SGNHT App. H; TARGETS [A20], [A21], [A29]).

Topics pi_k = softmax(theta_k) over the vocabulary, theta_kw ~ N(beta, sigma^2) (beta = 0.1, sigma = 1);
document proportions integrated out with Dir(alpha), alpha = 0.1. The stochastic gradient of the log
posterior is

    d/d theta_kw = (beta - theta_kw)/sigma^2 + (D/|S|) sum_{d in S} E[n_dkw - pi_kw n_dk.]

with the expectation from within-document Gibbs sweeps p(z = k) ∝ (alpha + n_dk^-) pi_{k,w} (the
normalised pi, not exp(theta): TARGETS pitfall). Gibbs and perplexity kernels are Numba, drawing from
the chain's xoroshiro key.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..samplers.rng import uniform, uniform_int
from .base import Model


def tokens_from_counts(counts):
    """CSR doc x term counts -> (doc_ptr, words) token arrays (tokens of a document contiguous)."""
    counts = counts.tocsr()
    lens = np.asarray(counts.sum(axis=1)).ravel().astype(np.int64)
    ptr = np.zeros(counts.shape[0] + 1, dtype=np.int64)
    ptr[1:] = np.cumsum(lens)
    words = np.repeat(counts.indices.astype(np.int64), counts.data.astype(np.int64))
    return ptr, words


@njit(cache=True)
def softmax_rows(theta, out):
    K, W = theta.shape
    for k in range(K):
        m = theta[k, 0]
        for w in range(W):
            if theta[k, w] > m:
                m = theta[k, w]
        s = 0.0
        for w in range(W):
            e = np.exp(theta[k, w] - m)
            out[k, w] = e
            s += e
        for w in range(W):
            out[k, w] /= s


@njit(cache=True)
def _sample_k(probs, K, key):
    tot = 0.0
    for k in range(K):
        tot += probs[k]
    u = uniform(key) * tot
    acc = 0.0
    for k in range(K):
        acc += probs[k]
        if u < acc:
            return k
    return K - 1


@njit(cache=True)
def expected_counts(pi, ptr, words, docs, alpha, sweeps, burn, key, ekw, ek):
    """Within-document Gibbs for the documents ``docs``; adds E[n_dkw] into ekw (K x W) and E[n_dk.] into ek.

    ``sweeps`` Gibbs sweeps per document, the first ``burn`` discarded, the rest averaged.
    """
    K = pi.shape[0]
    probs = np.empty(K)
    ndk = np.empty(K)
    n_keep = sweeps - burn
    for di in range(docs.shape[0]):
        d = docs[di]
        a, b = ptr[d], ptr[d + 1]
        L = b - a
        if L == 0:
            continue
        z = np.empty(L, dtype=np.int64)
        ndk[:] = 0.0
        for t in range(L):
            z[t] = uniform_int(key, K)
            ndk[z[t]] += 1.0
        for s in range(sweeps):
            for t in range(L):
                w = words[a + t]
                ndk[z[t]] -= 1.0
                for k in range(K):
                    probs[k] = (alpha + ndk[k]) * pi[k, w]
                k_new = _sample_k(probs, K, key)
                z[t] = k_new
                ndk[k_new] += 1.0
                if s >= burn:
                    ekw[k_new, w] += 1.0 / n_keep
            if s >= burn:
                for k in range(K):
                    ek[k] += ndk[k] / n_keep


@njit(cache=True)
def completion_probs(pi, optr, owords, hptr, hwords, alpha, sweeps, key, out):
    """Document completion ([M2]): theta_d from the observed half by Gibbs (average of the last half of
    the sweeps), then out[t] = sum_k theta_dk pi_{k, w_t} for every held-out token t."""
    K = pi.shape[0]
    probs = np.empty(K)
    ndk = np.empty(K)
    th = np.empty(K)
    burn = sweeps // 2
    for d in range(optr.shape[0] - 1):
        a, b = optr[d], optr[d + 1]
        L = b - a
        z = np.empty(L, dtype=np.int64)
        ndk[:] = 0.0
        th[:] = 0.0
        for t in range(L):
            z[t] = uniform_int(key, K)
            ndk[z[t]] += 1.0
        for s in range(sweeps):
            for t in range(L):
                w = owords[a + t]
                ndk[z[t]] -= 1.0
                for k in range(K):
                    probs[k] = (alpha + ndk[k]) * pi[k, w]
                k_new = _sample_k(probs, K, key)
                z[t] = k_new
                ndk[k_new] += 1.0
            if s >= burn:
                for k in range(K):
                    th[k] += (ndk[k] + alpha) / (L + K * alpha)
        for k in range(K):
            th[k] /= sweeps - burn
        for t in range(hptr[d], hptr[d + 1]):
            w = hwords[t]
            p = 0.0
            for k in range(K):
                p += th[k] * pi[k, w]
            out[t] = p


def split_halves(ptr, words):
    """Split each document's tokens into observed (even positions) and held-out (odd positions) halves."""
    o_ptr, h_ptr, o_w, h_w = [0], [0], [], []
    for d in range(len(ptr) - 1):
        toks = words[ptr[d]:ptr[d + 1]]
        o_w.append(toks[0::2])
        h_w.append(toks[1::2])
        o_ptr.append(o_ptr[-1] + len(toks[0::2]))
        h_ptr.append(h_ptr[-1] + len(toks[1::2]))
    cat = lambda xs: np.concatenate(xs).astype(np.int64) if xs else np.zeros(0, np.int64)  # noqa: E731
    return np.array(o_ptr, np.int64), cat(o_w), np.array(h_ptr, np.int64), cat(h_w)


class SemiCollapsedLDA:
    """Target for SGHMC/SGNHT on theta in R^{K x W}; minibatches are documents."""

    def __init__(self, counts, n_topics: int = 30, alpha: float = 0.1, beta: float = 0.1, sigma: float = 1.0,
                 sweeps: int = 10, burn: int | None = None):
        self.ptr, self.words = tokens_from_counts(counts)
        self.D, self.W = counts.shape
        self.K = int(n_topics)
        self.alpha, self.beta, self.sigma = float(alpha), float(beta), float(sigma)
        self.sweeps = int(sweeps)
        self.burn = self.sweeps // 2 if burn is None else int(burn)
        if not 0 <= self.burn < self.sweeps:
            raise ValueError(f"LDA: need 0 <= burn < sweeps, got burn={self.burn}, sweeps={self.sweeps}")
        self.dim = self.K * self.W
        self._pi = np.empty((self.K, self.W))

    def init_position(self, seed: int):
        return np.random.default_rng(seed).normal(self.beta, 0.1, self.dim)

    def topics(self, theta):
        pi = np.empty((self.K, self.W))
        softmax_rows(theta.reshape(self.K, self.W), pi)
        return pi

    def grad(self, theta, idx, key):
        """grad U~ = -(d/d theta) log posterior (minus the expression in the module docstring)."""
        th = theta.reshape(self.K, self.W)
        softmax_rows(th, self._pi)
        ekw = np.zeros((self.K, self.W))
        ek = np.zeros(self.K)
        expected_counts(self._pi, self.ptr, self.words, np.ascontiguousarray(idx, np.int64), self.alpha,
                        self.sweeps, self.burn, key, ekw, ek)
        c = self.D / len(idx)
        g = -((self.beta - th) / self.sigma**2 + c * (ekw - self._pi * ek[:, None]))
        return g.ravel()

    def model(self) -> Model:
        return Model("lda", self.dim, self.D, grad_py=self.grad)


def perplexity_from_probs(prob_sum, n_samples):
    """exp(- mean log p-bar) with p-bar the per-token predictive averaged over samples."""
    return float(np.exp(-np.mean(np.log(prob_sum / n_samples))))
