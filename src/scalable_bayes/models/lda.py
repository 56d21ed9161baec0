"""Semi-collapsed LDA in the expanded-natural parametrisation (SGNHT Sec. 5.2 and App. H).

Topics pi_k = softmax(theta_k) over the vocabulary, theta_kw ~ N(beta, sigma^2) (beta = 0.1, sigma = 1);
document proportions integrated out with Dir(alpha), alpha = 0.1 (SGNHT Sec. 5.2). The stochastic
gradient of the log posterior (App. H) is

    d/d theta_kw = (beta - theta_kw)/sigma^2 + (D/|S|) sum_{d in S} E[n_dkw - pi_kw n_dk.]

with the expectation from within-document Gibbs sweeps p(z = k) ∝ (alpha + n_dk^-) pi_{k,w} (the
normalised pi = softmax(theta) of App. H, not exp(theta)). The Gibbs kernel is Numba, drawing from
the chain's xoroshiro key. Test perplexity by document completion
(:mod:`scalable_bayes.evaluation.heldout`): :func:`completion_probs` scores these topics.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..evaluation import heldout
from ..evaluation.heldout import split_halves, tokens_from_counts
from ..rng import uniform, uniform_int
from .base import Model

__all__ = ["SemiCollapsedLDA", "completion_probs", "expected_counts", "softmax_rows", "split_halves",
           "tokens_from_counts"]


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


def completion_probs(pi, optr, owords, hptr, hwords, alpha, sweeps, key, out):
    """Document completion with topics ``pi`` (K x W): ``out[t]`` = sum_k theta_dk pi_{k, w_t} for every
    held-out token t, theta_d from the observed half by ``sweeps`` Gibbs sweeps drawing from ``key``
    (advanced in place); token arrays from :func:`split_halves`. The caller averages ``out`` over
    samples of pi before taking logs (SGNHT Sec. 5.2). See
    :func:`scalable_bayes.evaluation.heldout.completion_probs`."""
    heldout.completion_probs(np.ascontiguousarray(pi.T), optr, owords, hptr, hwords, float(alpha), int(sweeps), key,
                             out)


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
