"""Held-out per-word log-likelihood of LDA topics by document completion (TARGETS [M2]).

Wallach et al. (2009), "document completion": the tokens of each test document, in CSR order with
each (word, count) entry expanded, are split by position into an observed half (even positions) and
a held-out half (odd positions). With the topics phi fixed, theta_d is estimated from the observed
half by ``n_sweeps`` Gibbs sweeps of p(z = k) propto (alpha + n_dk^-) phi_kw, averaging
theta_dk = (n_dk + alpha) / (|o_d| + K alpha) over the last half of the sweeps; the held-out half
is scored with log sum_k theta_dk phi_kw. The score is the sum over documents divided by the number
of held-out tokens. One protocol for every engine and every peer library: only the topic-word
matrix of a model enters.
"""

from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp
from numba import njit, prange

from ..inference.lda._rng import next_uniform, stream

logger = logging.getLogger(__name__)

__all__ = ["heldout_loglik", "document_completion_split", "fold_in", "check_topic_word"]


@njit(cache=True)
def _doc_tokens(indptr, indices, cnt, m, out):
    n = 0
    for e in range(indptr[m], indptr[m + 1]):
        for _ in range(cnt[e]):
            out[n] = indices[e]
            n += 1
    return n


@njit(cache=True)
def _gibbs_theta(words, n_words_doc, phi_t, alpha, n_sweeps, st, z, ndk, theta, p):
    """Gibbs sweeps over ``words[:n]`` with phi fixed; theta = average of (n_dk + alpha)/(n + K alpha)
    over the last ceil(n_sweeps / 2) sweeps. Returns the RNG state."""
    K = phi_t.shape[1]
    n = n_words_doc
    for k in range(K):
        ndk[k] = 0
        theta[k] = 0.0
    for i in range(n):
        st, u = next_uniform(st)
        k = int(u * K)
        if k >= K:
            k = K - 1
        z[i] = k
        ndk[k] += 1
    burn = n_sweeps - (n_sweeps + 1) // 2
    kept = 0
    denom = n + K * alpha
    for s in range(n_sweeps):
        for i in range(n):
            w = words[i]
            old = z[i]
            ndk[old] -= 1
            P = 0.0
            for k in range(K):
                P += (ndk[k] + alpha) * phi_t[w, k]
                p[k] = P
            st, u = next_uniform(st)
            u *= P
            lo = 0
            hi = K - 1
            while lo < hi:
                mid = (lo + hi) >> 1
                if p[mid] <= u:
                    lo = mid + 1
                else:
                    hi = mid
            z[i] = lo
            ndk[lo] += 1
        if s >= burn:
            kept += 1
            for k in range(K):
                theta[k] += (ndk[k] + alpha) / denom
    for k in range(K):
        theta[k] /= kept
    return st


@njit(parallel=True, cache=True)
def _completion_kernel(indptr, indices, cnt, phi_t, alpha, n_sweeps, seed):
    """Per-document (sum of held-out log p(w), number of held-out tokens)."""
    M = indptr.shape[0] - 1
    K = phi_t.shape[1]
    ll = np.zeros(M, np.float64)
    nh = np.zeros(M, np.int64)
    for m in prange(M):
        n = 0
        for e in range(indptr[m], indptr[m + 1]):
            n += cnt[e]
        if n < 2:
            continue
        toks = np.empty(n, np.int32)
        _doc_tokens(indptr, indices, cnt, m, toks)
        n_obs = (n + 1) // 2
        obs = np.empty(n_obs, np.int32)
        for i in range(n_obs):
            obs[i] = toks[2 * i]
        z = np.empty(n_obs, np.int32)
        ndk = np.empty(K, np.int64)
        theta = np.empty(K, np.float64)
        p = np.empty(K, np.float64)
        st = stream(seed, 0, m)
        _gibbs_theta(obs, n_obs, phi_t, alpha, n_sweeps, st, z, ndk, theta, p)
        s = 0.0
        h = 0
        for i in range(1, n, 2):
            w = toks[i]
            q = 0.0
            for k in range(K):
                q += theta[k] * phi_t[w, k]
            s += np.log(q)
            h += 1
        ll[m] = s
        nh[m] = h
    return ll, nh


@njit(parallel=True, cache=True)
def _fold_in_kernel(indptr, indices, cnt, phi_t, alpha, n_sweeps, seed):
    M = indptr.shape[0] - 1
    K = phi_t.shape[1]
    out = np.empty((M, K), np.float64)
    for m in prange(M):
        n = 0
        for e in range(indptr[m], indptr[m + 1]):
            n += cnt[e]
        if n == 0:
            for k in range(K):
                out[m, k] = 1.0 / K
            continue
        toks = np.empty(n, np.int32)
        _doc_tokens(indptr, indices, cnt, m, toks)
        z = np.empty(n, np.int32)
        ndk = np.empty(K, np.int64)
        theta = np.empty(K, np.float64)
        p = np.empty(K, np.float64)
        _gibbs_theta(toks, n, phi_t, alpha, n_sweeps, stream(seed, 1, m), z, ndk, theta, p)
        for k in range(K):
            out[m, k] = theta[k]
    return out


def check_topic_word(topic_word, n_words: int | None = None) -> np.ndarray:
    """Validate a (K, V) nonnegative topic-word matrix and return it row-normalised (float64)."""
    phi = np.asarray(topic_word, dtype=np.float64)
    if phi.ndim != 2 or phi.shape[0] < 1:
        raise ValueError(f"topic_word must be a 2-D (n_topics, n_words) array, got shape {phi.shape}")
    if not np.all(np.isfinite(phi)) or (phi < 0).any():
        raise ValueError("topic_word has negative or non-finite entries; pass topic-word counts or probabilities")
    rs = phi.sum(axis=1, keepdims=True)
    if (rs <= 0).any():
        raise ValueError("a topic of topic_word has zero mass; add the smoothing beta before scoring")
    if n_words is not None and phi.shape[1] != n_words:
        raise ValueError(
            f"topic_word has {phi.shape[1]} words but the documents have {n_words} columns; "
            "score documents in the training vocabulary (drop out-of-vocabulary columns)"
        )
    return phi / rs


def _check_counts(X) -> sp.csr_matrix:
    if not sp.issparse(X):
        X = sp.csr_matrix(np.asarray(X))
    X = sp.csr_matrix(X)
    X.sum_duplicates()
    if X.nnz and (X.data.min() < 0 or not np.all(np.equal(np.mod(X.data, 1), 0))):
        raise ValueError("document-term counts must be non-negative integers; pass raw token counts, not tf-idf")
    X.eliminate_zeros()
    return X


def heldout_loglik(topic_word, X, doc_topic_prior: float, *, n_sweeps: int = 20, seed: int = 0,
                   return_details: bool = False):
    """Per-word held-out log-likelihood by document completion ([M2]).

    Parameters
    ----------
    topic_word : (K, V) array, topic-word probabilities phi (rows are normalised here; pass
        (W_kv + beta) counts directly).
    X : (M, V) CSR document-term counts of the test documents, in the training vocabulary.
    doc_topic_prior : alpha used in the fold-in of the observed half.
    n_sweeps : Gibbs sweeps of the fold-in (G_t, default 20; theta averaged over the last half).
    seed : seed of the fold-in draws (one stream per document; thread-count independent).

    Returns
    -------
    float : sum of held-out log p(w) / number of held-out tokens (nats per word). Documents with
    fewer than 2 tokens are skipped. With ``return_details`` also a dict (n_docs_scored,
    n_heldout_tokens, perplexity).
    """
    if doc_topic_prior <= 0:
        raise ValueError(f"doc_topic_prior must be > 0, got {doc_topic_prior}")
    if n_sweeps < 1:
        raise ValueError(f"n_sweeps must be >= 1, got {n_sweeps}")
    X = _check_counts(X)
    phi = check_topic_word(topic_word, X.shape[1])
    phi_t = np.ascontiguousarray(phi.T)
    ll, nh = _completion_kernel(
        X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data.astype(np.int32),
        phi_t, float(doc_topic_prior), int(n_sweeps), int(seed),
    )
    n_tok = int(nh.sum())
    if n_tok == 0:
        raise ValueError("no test document has 2 or more tokens; nothing to score")
    score = float(ll.sum() / n_tok)
    if return_details:
        return score, {"n_docs_scored": int((nh > 0).sum()), "n_heldout_tokens": n_tok,
                       "perplexity": float(np.exp(-score))}
    return score


def fold_in(topic_word, X, doc_topic_prior: float, *, n_sweeps: int = 20, seed: int = 0) -> np.ndarray:
    """Document-topic proportions theta (M, K) of the documents X with the topics fixed (Gibbs
    fold-in on all tokens, averaged over the last half of the sweeps); empty documents get 1/K."""
    if doc_topic_prior <= 0:
        raise ValueError(f"doc_topic_prior must be > 0, got {doc_topic_prior}")
    X = _check_counts(X)
    phi_t = np.ascontiguousarray(check_topic_word(topic_word, X.shape[1]).T)
    return _fold_in_kernel(X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data.astype(np.int32),
                           phi_t, float(doc_topic_prior), int(n_sweeps), int(seed))


def document_completion_split(X):
    """The (observed, held-out) halves of every document as two CSR matrices (even / odd token
    positions of the expanded CSR order), the split :func:`heldout_loglik` uses internally."""
    X = _check_counts(X)
    rows_o, cols_o, rows_h, cols_h = [], [], [], []
    for m in range(X.shape[0]):
        s, e = X.indptr[m], X.indptr[m + 1]
        toks = np.repeat(X.indices[s:e], X.data[s:e].astype(np.int64))
        if toks.size < 2:
            continue
        rows_o.append(np.full((toks.size + 1) // 2, m))
        cols_o.append(toks[0::2])
        rows_h.append(np.full(toks.size // 2, m))
        cols_h.append(toks[1::2])
    def mk(r, c):
        r = np.concatenate(r) if r else np.zeros(0, np.int64)
        c = np.concatenate(c) if c else np.zeros(0, np.int64)
        return sp.csr_matrix((np.ones(r.size, np.int32), (r, c)), shape=X.shape)
    return mk(rows_o, cols_o), mk(rows_h, cols_h)
