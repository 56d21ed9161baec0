"""Document completion: held-out likelihood of LDA topics (Wallach et al. 2009, "document completion").

The test protocol of the LDA experiments: the per-word held-out log-likelihood of the ESCA paper
(Sec. 4, "Evaluation"; App. G) and the test perplexity of the semi-collapsed LDA of the SGNHT paper
(Sec. 5.2, ICML abstracts; there the per-token predictive is averaged over samples of the topics
before the log, as in Patterson & Teh 2013). Only the topic-word matrix of a model enters, so one
protocol scores every engine and every peer library. Three pieces, each written once:

1. :func:`split_halves`: the tokens of each document, in CSR order with each (word, count) entry
   expanded, are split by position into an observed half (even positions) and a held-out half (odd
   positions).
2. :func:`gibbs_theta`: with the topics phi fixed, theta_d is estimated from the observed half by
   ``n_sweeps`` Gibbs sweeps of p(z = k) propto (alpha + n_dk^-) phi_kw, averaging
   theta_dk = (n_dk + alpha) / (|o_d| + K alpha) over the last ceil(n_sweeps / 2) sweeps. It draws
   from either generator of :mod:`scalable_bayes.rng` (a chain's xoroshiro key or a per-document
   counter-based stream).
3. :func:`token_prob`: the predictive p(w | d) = sum_k theta_dk phi_kw of a held-out token.

Two protocols are built from them. :func:`heldout_loglik` (the LDA engines and their peers): each
document draws from its own stream (seed, 0, m), documents in parallel, documents with fewer than 2
tokens skipped; the score is sum of log p(w | d) over held-out tokens / their number.
:func:`completion_probs` (SGNHT's semi-collapsed LDA): the held-out token probabilities themselves,
for a caller that averages them over samples of phi; documents in order, all from one xoroshiro key.
:func:`fold_in` runs piece 2 on all tokens of a document (``transform`` of the engines).
"""

from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp
from numba import njit, prange

from ..rng import cdf_search, draw_index, draw_uniform, stream

logger = logging.getLogger(__name__)

__all__ = ["heldout_loglik", "completion_probs", "document_completion_split", "fold_in", "check_topic_word",
           "split_halves", "tokens_from_counts", "gibbs_theta", "token_prob"]


# ---------------------------------------------------------------------------------------------
# 1. tokens and their halves
# ---------------------------------------------------------------------------------------------


def tokens_from_counts(counts):
    """CSR doc x term counts -> (doc_ptr, words) token arrays (int64; the tokens of document d are
    ``words[doc_ptr[d]:doc_ptr[d + 1]]``, each (word, count) entry expanded in CSR order).

    Parameters
    ----------
    counts : scipy.sparse matrix, shape (M, V)
        Document-term counts (non-negative integers).

    Returns
    -------
    doc_ptr : ndarray of int64, shape (M + 1,)
        Offsets of each document's tokens in ``words``.
    words : ndarray of int64, shape (n_tokens,)
        The word id of every token.
    """
    counts = counts.tocsr()
    lens = np.asarray(counts.sum(axis=1)).ravel().astype(np.int64)
    ptr = np.zeros(counts.shape[0] + 1, dtype=np.int64)
    ptr[1:] = np.cumsum(lens)
    words = np.repeat(counts.indices.astype(np.int64), counts.data.astype(np.int64))
    return ptr, words


def split_halves(ptr, words):
    """Split each document's tokens into observed (even positions) and held-out (odd positions)
    halves: returns (obs_ptr, obs_words, heldout_ptr, heldout_words), int64 token arrays.

    Parameters
    ----------
    ptr : array_like of int, shape (M + 1,)
        Document offsets into ``words`` (as from :func:`tokens_from_counts`).
    words : array_like of int, shape (n_tokens,)
        Word ids of the tokens.

    Returns
    -------
    obs_ptr : ndarray of int64, shape (M + 1,)
        Offsets of the observed halves (ceil(n_d / 2) tokens of document d).
    obs_words : ndarray of int64
        Word ids of the observed tokens.
    heldout_ptr : ndarray of int64, shape (M + 1,)
        Offsets of the held-out halves (floor(n_d / 2) tokens of document d).
    heldout_words : ndarray of int64
        Word ids of the held-out tokens.
    """
    ptr = np.asarray(ptr, dtype=np.int64)
    lens = np.diff(ptr)
    toks = np.asarray(words)[ptr[0]:ptr[-1]].astype(np.int64)
    pos = np.arange(toks.size, dtype=np.int64) - np.repeat(ptr[:-1] - ptr[0], lens)
    obs = pos % 2 == 0
    o_ptr = np.zeros(lens.size + 1, np.int64)
    h_ptr = np.zeros(lens.size + 1, np.int64)
    np.cumsum((lens + 1) // 2, out=o_ptr[1:])
    np.cumsum(lens // 2, out=h_ptr[1:])
    return o_ptr, toks[obs], h_ptr, toks[~obs]


# ---------------------------------------------------------------------------------------------
# 2. theta from the observed half, 3. predictive of a held-out token
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def gibbs_theta(words, n, phi_t, alpha, n_sweeps, rng, z, ndk, theta, p):
    """Gibbs sweeps over ``words[:n]`` with the topics fixed (``phi_t`` (V, K): phi transposed);
    theta = average of (n_dk + alpha)/(n + K alpha) over the last ceil(n_sweeps / 2) sweeps.

    ``rng`` is a xoroshiro key or a SplitMix64 stream state (:func:`scalable_bayes.rng.draw_uniform`);
    the advanced ``rng`` is returned. Scratch: ``z`` (>= n ints), ``ndk`` (K ints), ``p`` (K floats);
    output ``theta`` (K floats). Initial topics uniform; each draw by inverse CDF (binary search of
    the running sums).

    Parameters
    ----------
    words : ndarray of int, shape (>= n,)
        Word ids of the document's (observed) tokens.
    n : int
        Number of tokens to use, ``words[:n]``.
    phi_t : ndarray of float64, shape (V, K)
        The topics transposed (rows of phi normalised).
    alpha : float
        Dirichlet prior of the document-topic proportions.
    n_sweeps : int
        Gibbs sweeps; theta averages the last ceil(n_sweeps / 2).
    rng : ndarray of uint64, shape (2,), or uint64
        A xoroshiro key (advanced in place) or a SplitMix64 stream state.
    z : ndarray of int, shape (>= n,)
        Scratch: the topic of every token.
    ndk : ndarray of int, shape (K,)
        Scratch: the document's topic counts.
    theta : ndarray of float64, shape (K,)
        Output: the averaged proportions theta_d.
    p : ndarray of float64, shape (K,)
        Scratch: the running sums of the conditional.

    Returns
    -------
    key or uint64
        The advanced ``rng``.
    """
    K = phi_t.shape[1]
    for k in range(K):
        ndk[k] = 0
        theta[k] = 0.0
    for i in range(n):
        rng, k = draw_index(rng, K)
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
            rng, u = draw_uniform(rng)
            lo = cdf_search(p, K, u * P)
            z[i] = lo
            ndk[lo] += 1
        if s >= burn:
            kept += 1
            for k in range(K):
                theta[k] += (ndk[k] + alpha) / denom
    for k in range(K):
        theta[k] /= kept
    return rng


@njit(inline="always", cache=True)
def token_prob(theta, phi_t, w):
    """p(w | d) = sum_k theta_dk phi_kw.

    Parameters
    ----------
    theta : ndarray of float64, shape (K,)
        The document's topic proportions theta_d.
    phi_t : ndarray of float64, shape (V, K)
        The topics transposed.
    w : int
        The word id.

    Returns
    -------
    float
        p(w | d).
    """
    q = 0.0
    for k in range(theta.shape[0]):
        q += theta[k] * phi_t[w, k]
    return q


# ---------------------------------------------------------------------------------------------
# the protocols
# ---------------------------------------------------------------------------------------------


@njit(parallel=True, cache=True)
def _loglik_kernel(optr, owords, hptr, hwords, phi_t, alpha, n_sweeps, seed):
    """Per-document (sum of held-out log p(w), number of held-out tokens); document m draws from the
    stream (seed, 0, m); documents without a held-out token (fewer than 2 tokens) are skipped."""
    M = optr.shape[0] - 1
    K = phi_t.shape[1]
    ll = np.zeros(M, np.float64)
    nh = np.zeros(M, np.int64)
    for m in prange(M):
        if hptr[m + 1] == hptr[m]:
            continue
        n_obs = optr[m + 1] - optr[m]
        z = np.empty(n_obs, np.int32)
        ndk = np.empty(K, np.int64)
        theta = np.empty(K, np.float64)
        p = np.empty(K, np.float64)
        gibbs_theta(owords[optr[m]:optr[m + 1]], n_obs, phi_t, alpha, n_sweeps, stream(seed, 0, m), z, ndk, theta, p)
        s = 0.0
        for t in range(hptr[m], hptr[m + 1]):
            s += np.log(token_prob(theta, phi_t, hwords[t]))
        ll[m] = s
        nh[m] = hptr[m + 1] - hptr[m]
    return ll, nh


@njit(cache=True)
def completion_probs(phi_t, optr, owords, hptr, hwords, alpha, n_sweeps, key, out):
    """Document completion with the held-out token probabilities as output: for every document d (in
    order, all drawing from the one xoroshiro ``key``, advanced in place) theta_d from its observed
    half by :func:`gibbs_theta`, then ``out[t]`` = p(w_t | d) for each of its held-out tokens t.
    ``phi_t`` (V, K) the topics transposed; token arrays as from :func:`split_halves`.

    Parameters
    ----------
    phi_t : ndarray of float64, shape (V, K)
        The topics transposed (rows of phi normalised).
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
    n_sweeps : int
        Gibbs sweeps of the fold-in per document.
    key : ndarray of uint64, shape (2,)
        A xoroshiro key, advanced in place.
    out : ndarray of float64, shape (len(hwords),)
        Output: p(w_t | d) of every held-out token.
    """
    M = optr.shape[0] - 1
    K = phi_t.shape[1]
    n_max = 0
    for d in range(M):
        n_max = max(n_max, optr[d + 1] - optr[d])
    z = np.empty(n_max, np.int32)
    ndk = np.empty(K, np.int64)
    theta = np.empty(K, np.float64)
    p = np.empty(K, np.float64)
    for d in range(M):
        n_obs = optr[d + 1] - optr[d]
        key = gibbs_theta(owords[optr[d]:optr[d + 1]], n_obs, phi_t, alpha, n_sweeps, key, z, ndk, theta, p)
        for t in range(hptr[d], hptr[d + 1]):
            out[t] = token_prob(theta, phi_t, hwords[t])


@njit(parallel=True, cache=True)
def _fold_in_kernel(ptr, words, phi_t, alpha, n_sweeps, seed):
    M = ptr.shape[0] - 1
    K = phi_t.shape[1]
    out = np.empty((M, K), np.float64)
    for m in prange(M):
        n = ptr[m + 1] - ptr[m]
        if n == 0:
            for k in range(K):
                out[m, k] = 1.0 / K
            continue
        z = np.empty(n, np.int32)
        ndk = np.empty(K, np.int64)
        theta = np.empty(K, np.float64)
        p = np.empty(K, np.float64)
        gibbs_theta(words[ptr[m]:ptr[m + 1]], n, phi_t, alpha, n_sweeps, stream(seed, 1, m), z, ndk, theta, p)
        for k in range(K):
            out[m, k] = theta[k]
    return out


def check_topic_word(topic_word, n_words: int | None = None) -> np.ndarray:
    """Validate a (K, V) nonnegative topic-word matrix and return it row-normalised (float64).

    Parameters
    ----------
    topic_word : array_like of float, shape (K, V)
        Topic-word counts or probabilities: finite, >= 0, no row of zero mass.
    n_words : int, optional
        The vocabulary size V the documents have; a mismatch is a ValueError.

    Returns
    -------
    ndarray of float64, shape (K, V)
        The rows divided by their sums.
    """
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
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D document-term count matrix, got {X.ndim} dimensions")
    if X.nnz and not np.isfinite(X.data).all():
        raise ValueError("X has NaN or inf counts; pass raw token counts (non-negative integers)")
    if X.nnz and (X.data.min() < 0 or not np.all(np.equal(np.mod(X.data, 1), 0))):
        raise ValueError("X: document-term counts must be non-negative integers; pass raw token counts, not tf-idf")
    X.eliminate_zeros()
    return X


def heldout_loglik(topic_word, X, doc_topic_prior: float, *, n_sweeps: int = 20, seed: int = 0,
                   return_details: bool = False):
    """Per-word held-out log-likelihood by document completion (module docstring).

    Parameters
    ----------
    topic_word : array_like of float, shape (K, V)
        Topic-word probabilities phi (rows are normalised here; pass (W_kv + beta) counts directly).
    X : scipy.sparse matrix or array_like, shape (M, V)
        CSR document-term counts of the test documents, in the training vocabulary.
    doc_topic_prior : float
        alpha used in the fold-in of the observed half, > 0.
    n_sweeps : int, default 20
        Gibbs sweeps of the fold-in (G_t; theta averaged over the last half).
    seed : int, default 0
        Seed of the fold-in draws (one stream per document; thread-count independent).
    return_details : bool, default False
        Also return a dict of details.

    Returns
    -------
    score : float
        Sum of held-out log p(w) / number of held-out tokens (nats per word). Documents with
        fewer than 2 tokens are skipped.
    details : dict
        Only with ``return_details``: n_docs_scored, n_heldout_tokens, perplexity (exp(-score)).
    """
    if doc_topic_prior <= 0:
        raise ValueError(f"doc_topic_prior must be > 0, got {doc_topic_prior}")
    if n_sweeps < 1:
        raise ValueError(f"n_sweeps must be >= 1, got {n_sweeps}")
    X = _check_counts(X)
    phi_t = np.ascontiguousarray(check_topic_word(topic_word, X.shape[1]).T)
    optr, ow, hptr, hw = split_halves(*tokens_from_counts(X))
    ll, nh = _loglik_kernel(optr, ow, hptr, hw, phi_t, float(doc_topic_prior), int(n_sweeps), int(seed))
    n_tok = int(nh.sum())
    if n_tok == 0:
        raise ValueError("X: no test document has 2 or more tokens; nothing to score")
    score = float(ll.sum() / n_tok)
    if return_details:
        return score, {"n_docs_scored": int((nh > 0).sum()), "n_heldout_tokens": n_tok,
                       "perplexity": float(np.exp(-score))}
    return score


def fold_in(topic_word, X, doc_topic_prior: float, *, n_sweeps: int = 20, seed: int = 0) -> np.ndarray:
    """Document-topic proportions theta (M, K) of the documents X with the topics fixed (Gibbs
    fold-in on all tokens, averaged over the last half of the sweeps; document m draws from the
    stream (seed, 1, m)); empty documents get 1/K.

    Parameters
    ----------
    topic_word : array_like of float, shape (K, V)
        Topic-word counts or probabilities (rows normalised here).
    X : scipy.sparse matrix or array_like, shape (M, V)
        Document-term counts, in the vocabulary of ``topic_word``.
    doc_topic_prior : float
        alpha, > 0.
    n_sweeps : int, default 20
        Gibbs sweeps per document.
    seed : int, default 0
        Seed of the draws.

    Returns
    -------
    ndarray of float64, shape (M, K)
        theta of every document (rows sum to 1).
    """
    if doc_topic_prior <= 0:
        raise ValueError(f"doc_topic_prior must be > 0, got {doc_topic_prior}")
    X = _check_counts(X)
    phi_t = np.ascontiguousarray(check_topic_word(topic_word, X.shape[1]).T)
    ptr, words = tokens_from_counts(X)
    return _fold_in_kernel(ptr, words, phi_t, float(doc_topic_prior), int(n_sweeps), int(seed))


def document_completion_split(X):
    """The (observed, held-out) halves of every document as two CSR matrices (:func:`split_halves`),
    the split :func:`heldout_loglik` scores; documents with fewer than 2 tokens are left empty in
    both (they are not scored).

    Parameters
    ----------
    X : scipy.sparse matrix or array_like, shape (M, V)
        Document-term counts (non-negative integers).

    Returns
    -------
    observed : scipy.sparse.csr_matrix, shape (M, V)
        The counts of the observed halves.
    heldout : scipy.sparse.csr_matrix, shape (M, V)
        The counts of the held-out halves.
    """
    X = _check_counts(X)
    optr, ow, hptr, hw = split_halves(*tokens_from_counts(X))
    scored = np.diff(hptr) > 0
    rows = np.arange(X.shape[0])

    def csr(ptr, words):
        lens = np.diff(ptr)
        keep = np.repeat(scored, lens)
        r = np.repeat(rows, lens)[keep]
        return sp.csr_matrix((np.ones(r.size, np.int32), (r, words[keep])), shape=X.shape)

    return csr(optr, ow), csr(hptr, hw)
