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
from . import _checks
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
def _expected_counts_t(pit, ptr, words, docs, alpha, sweeps, burn, key, ekw, ek):
    """Kernel of :func:`expected_counts` on the transposed topics ``pit`` (W x K, C order), so that the K
    probabilities of a token's word are one contiguous row (the K x W layout reads K cache lines per token).
    The categorical draw compares one uniform against the running sum of the unnormalised probabilities,
    summed in topic order (the same arithmetic and random-number use as the reference twin in the tests)."""
    W, K = pit.shape
    cum = np.empty(K)
    ndk = np.empty(K)
    n_keep = sweeps - burn
    inc = 1.0 / n_keep
    max_len = 0
    for di in range(docs.shape[0]):
        d = docs[di]
        if ptr[d + 1] - ptr[d] > max_len:
            max_len = ptr[d + 1] - ptr[d]
    z = np.empty(max_len, dtype=np.int64)
    for di in range(docs.shape[0]):
        d = docs[di]
        a, b = ptr[d], ptr[d + 1]
        L = b - a
        if L == 0:
            continue
        ndk[:] = 0.0
        for t in range(L):
            z[t] = uniform_int(key, K)
            ndk[z[t]] += 1.0
        for s in range(sweeps):
            keep = s >= burn
            for t in range(L):
                w = words[a + t]
                ndk[z[t]] -= 1.0
                tot = 0.0
                for k in range(K):
                    tot += (alpha + ndk[k]) * pit[w, k]
                    cum[k] = tot
                u = uniform(key) * tot
                k_new = K - 1
                for k in range(K):
                    if u < cum[k]:
                        k_new = k
                        break
                z[t] = k_new
                ndk[k_new] += 1.0
                if keep:
                    ekw[k_new, w] += inc
            if keep:
                for k in range(K):
                    ek[k] += ndk[k] / n_keep


def expected_counts(pi, ptr, words, docs, alpha, sweeps, burn, key, ekw, ek):
    """Within-document Gibbs for the documents ``docs``; adds E[n_dkw] into ekw (K x W) and E[n_dk.] into ek.

    ``sweeps`` Gibbs sweeps per document, the first ``burn`` discarded, the rest averaged; p(z = k) ∝
    (alpha + n_dk^-) pi_kw (SGNHT App. H). ``pi`` is K x W; the kernel runs on its transpose.

    Parameters
    ----------
    pi : array_like of float, shape (K, W)
        The topics (rows on the simplex).
    ptr : ndarray of int64, shape (D + 1,)
        Document offsets into ``words`` (:func:`tokens_from_counts`).
    words : ndarray of int64
        Word ids of the tokens.
    docs : array_like of int, shape (S,)
        The documents of the minibatch.
    alpha : float
        Dirichlet prior of the document proportions.
    sweeps : int
        Gibbs sweeps per document.
    burn : int
        Sweeps discarded, 0 <= burn < sweeps.
    key : ndarray of uint64, shape (2,)
        A :mod:`scalable_bayes.rng` key, advanced in place.
    ekw : ndarray of float64, shape (K, W)
        Accumulator of E[n_dkw] (added to, not reset).
    ek : ndarray of float64, shape (K,)
        Accumulator of E[n_dk.] (added to, not reset).
    """
    _expected_counts_t(np.ascontiguousarray(np.asarray(pi, dtype=np.float64).T), ptr, words,
                       np.ascontiguousarray(docs, np.int64), float(alpha), int(sweeps), int(burn), key, ekw, ek)


@njit(cache=True)
def _assemble_grad(th, pi, ekw, ek, beta, sigma2, c, g):
    """g = -((beta - theta) / sigma^2 + c (E[n_kw] - pi_kw E[n_k.])), all K x W, in one pass."""
    K, W = th.shape
    for k in range(K):
        ekk = ek[k]
        for w in range(W):
            g[k, w] = -((beta - th[k, w]) / sigma2 + c * (ekw[k, w] - pi[k, w] * ekk))


def completion_probs(pi, optr, owords, hptr, hwords, alpha, sweeps, key, out):
    """Document completion with topics ``pi`` (K x W): ``out[t]`` = sum_k theta_dk pi_{k, w_t} for every
    held-out token t, theta_d from the observed half by ``sweeps`` Gibbs sweeps drawing from ``key``
    (advanced in place); token arrays from :func:`split_halves`. The caller averages ``out`` over
    samples of pi before taking logs (SGNHT Sec. 5.2). See
    :func:`scalable_bayes.evaluation.heldout.completion_probs`.

    Parameters
    ----------
    pi : ndarray of float64, shape (K, W)
        The topics (rows on the simplex).
    optr : ndarray of int64, shape (M + 1,)
        Offsets of the observed halves.
    owords : ndarray of int64
        Word ids of the observed tokens.
    hptr : ndarray of int64, shape (M + 1,)
        Offsets of the held-out halves.
    hwords : ndarray of int64
        Word ids of the held-out tokens.
    alpha : float
        Dirichlet prior of the fold-in.
    sweeps : int
        Gibbs sweeps per document.
    key : ndarray of uint64, shape (2,)
        A :mod:`scalable_bayes.rng` key, advanced in place.
    out : ndarray of float64, shape (len(hwords),)
        Output: p(w_t | d) of every held-out token.
    """
    heldout.completion_probs(np.ascontiguousarray(pi.T), optr, owords, hptr, hwords, float(alpha), int(sweeps), key,
                             out)


class SemiCollapsedLDA:
    """Target for SGHMC/SGNHT on theta in R^{K x W}; minibatches are documents.

    The model of the module docstring (SGNHT Sec. 5.2, App. H); :meth:`model` wraps it as a
    :class:`~scalable_bayes.models.Model` with a NumPy gradient.

    Parameters
    ----------
    counts : array_like or scipy.sparse matrix, shape (D, W)
        Document-term counts of the training documents (non-negative integers; tf-idf is refused).
    n_topics : int, default 30
        K.
    alpha : float, default 0.1
        Dirichlet prior of the document proportions.
    beta : float, default 0.1
        Prior mean of theta_kw.
    sigma : float, default 1.0
        Prior standard deviation of theta_kw.
    sweeps : int, default 10
        Within-document Gibbs sweeps per document and gradient.
    burn : int, optional
        The first ``burn`` sweeps are discarded (0 <= burn < sweeps); default sweeps // 2.
    """

    def __init__(self, counts, n_topics: int = 30, alpha: float = 0.1, beta: float = 0.1, sigma: float = 1.0,
                 sweeps: int = 10, burn: int | None = None):
        # token counts: tf-idf weights were truncated to whole tokens (mostly 0) without a word
        counts = _checks.count_matrix(counts, "SemiCollapsedLDA")
        self.ptr, self.words = tokens_from_counts(counts)
        self.D, self.W = counts.shape
        self.K = int(n_topics)
        self.alpha, self.beta, self.sigma = float(alpha), float(beta), float(sigma)
        self.sweeps = int(sweeps)
        self.burn = self.sweeps // 2 if burn is None else int(burn)
        if not 0 <= self.burn < self.sweeps:
            raise ValueError(f"LDA: need 0 <= burn < sweeps, got burn={self.burn}, sweeps={self.sweeps}")
        self.dim = self.K * self.W
        # work buffers of grad (one model = one chain; reused so the gradient allocates only its result)
        self._pi = np.empty((self.K, self.W))
        self._pit = np.empty((self.W, self.K))
        self._ekw = np.empty((self.K, self.W))
        self._ek = np.empty(self.K)

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
        np.copyto(self._pit, self._pi.T)
        self._ekw.fill(0.0)
        self._ek.fill(0.0)
        _expected_counts_t(self._pit, self.ptr, self.words, np.ascontiguousarray(idx, np.int64), self.alpha,
                           self.sweeps, self.burn, key, self._ekw, self._ek)
        g = np.empty((self.K, self.W))
        _assemble_grad(th, self._pi, self._ekw, self._ek, self.beta, self.sigma**2, self.D / len(idx), g)
        return g.ravel()

    def model(self) -> Model:
        return Model("lda", self.dim, self.D, grad_py=self.grad)
