"""Semi-collapsed LDA on the gamma-parametrised simplex, the target of SCIR and SGRLD (SCIR Sec. 4.1).

Topics phi_k ~ Dir(beta) over the V words, document proportions Dir(alpha) integrated out (Patterson &
Teh 2013, the semi-collapsed scheme). Each topic is a block of
:class:`~scalable_bayes.manifolds.GammaSimplex` ``(K, V, beta)``: theta_kw >= 0, pi_k = theta_k / sum_w
theta_kw. For the simplex samplers the model returns, in the gradient slot, the minibatch estimate of the
topic-word counts (SCIR Alg. 1 with z replaced by within-document Gibbs expectations, as in Patterson &
Teh 2013; SCIR Sec. 4.1 says only that it adapted their code)

    n^_kw = (D / |S|) sum_{d in S} E[n_dkw],

the expectation from ``sweeps`` within-document Gibbs sweeps p(z = k) ∝ (alpha + n_dk^-) pi_{k, w} with
pi fixed, the first ``burn`` discarded and the indicator counts of the rest averaged; the samplers add
beta (SCIR: a^_kw = beta + n^_kw; SGRLD: its drift beta + n^_kw - theta_kw - pi_kw n^_k.).

Kernels (Numba block functions run one block per thread by :func:`scalable_bayes.utils.parallel_blocks`, not
``prange`` loops, whose compilation took several seconds more): the documents of a minibatch run in
parallel, document d drawing from the counter-based stream ``stream(seed_t, d, 0)``
(:mod:`scalable_bayes.rng`), ``seed_t`` taken once per call from the chain's key by ``next_u64``. Each
document adds its kept indicator counts into its own integer slice of a per-call buffer (one slot per
(CSR entry of the document, topic)); the slices are then summed per topic in a fixed order. All sums are
of integers, so n^ is bit-identical for any thread count and any schedule. The documents are split into one bin per thread of near-equal
token counts (longest first to the lightest bin, :func:`balanced_bins`; documents of a Wikipedia
minibatch range from a few to thousands of tokens); scratch is per bin or per call, nothing is
allocated inside the Gibbs loops. The Gibbs draw is the
inverse CDF of the running sums by binary search (the convention of
:func:`scalable_bayes.evaluation.heldout.gibbs_theta`); the initial topics are uniform.
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp
from numba import njit

from ..manifolds import GammaSimplex
from ..rng import cdf_search, draw_index, draw_uniform, next_u64, rng_from_seed, stream
from ..utils import parallel_blocks
from .base import Model

__all__ = ["SimplexLDA", "topics_transposed", "batch_topic_counts", "balanced_bins"]


def topics_transposed(theta, K, V, pi_t):
    """pi_t[w, k] = theta[k V + w] / sum_w' theta[k V + w'] (rows of theta normalised, transposed).
    Returns False if some topic's sum is not positive and finite (pi_t then holds garbage).

    Parameters
    ----------
    theta : ndarray of float64, shape (K * V,)
        Gamma-parametrised topics, flat (topic k in ``theta[k*V:(k+1)*V]``).
    K : int
        Number of topics.
    V : int
        Vocabulary size.
    pi_t : ndarray of float64, shape (V, K)
        Output: the normalised topics, transposed.

    Returns
    -------
    bool
        True when every topic's sum is positive and finite.
    """
    ok = np.ones(K, np.bool_)
    parallel_blocks(_topic_rows, K, theta, V, pi_t, ok)
    return bool(ok.all())


@njit(cache=True, nogil=True)
def _topic_rows(lo, hi, theta, V, pi_t, ok):
    """Topics ``lo .. hi - 1`` of :func:`topics_transposed`; ``ok[k]`` False where topic k has no positive
    finite mass."""
    for k in range(lo, hi):
        tot = 0.0
        for w in range(V):
            tot += theta[k * V + w]
        if not (tot > 0.0 and tot < np.inf):
            ok[k] = False
            continue
        inv = 1.0 / tot
        for w in range(V):
            pi_t[w, k] = theta[k * V + w] * inv


@njit(cache=True)
def _doc_gibbs(pi_t, tok_word, tok_entry, t0, L, base, alpha, sweeps, burn, rng, z, ndk, p, cnt):
    """Within-document Gibbs for one document (tokens t0 .. t0 + L - 1) drawing from the stream state
    ``rng``; adds 1 to ``cnt[(base + tok_entry[t]) K + z_t]`` for each token after each kept sweep.
    Scratch ``z`` (L), ``ndk`` (K), ``p`` (K)."""
    K = pi_t.shape[1]
    for k in range(K):
        ndk[k] = 0
    for t in range(L):
        rng, k = draw_index(rng, K)
        z[t] = k
        ndk[k] += 1
    for s in range(sweeps):
        keep = s >= burn
        for t in range(L):
            w = tok_word[t0 + t]
            ndk[z[t]] -= 1
            P = 0.0
            for k in range(K):
                P += (alpha + ndk[k]) * pi_t[w, k]
                p[k] = P
            if P > 0.0:
                rng, u = draw_uniform(rng)
                lo = cdf_search(p, K, u * P)
            else:  # every topic gives the word probability 0 (underflow): uniform
                rng, lo = draw_index(rng, K)
            z[t] = lo
            ndk[lo] += 1
            if keep:
                cnt[(base + tok_entry[t0 + t]) * K + lo] += 1


def batch_topic_counts(pi_t, indptr, indices, tok_ptr, tok_word, tok_entry, docs, order, bin_ptr, alpha, sweeps,
                       burn, seed, scale, out):
    """out[k V + w] = scale * sum_{d in docs} sum_{kept sweeps s} #{tokens of word w in d with z = k after s}.

    ``pi_t`` (V, K) the topics transposed; documents in CSR (``indptr``, ``indices``) and as tokens
    (``tok_ptr``, ``tok_word``, ``tok_entry``: token t of the corpus is word ``tok_word[t]``, CSR entry
    ``tok_entry[t]``); ``docs`` the minibatch. Work split: bin b (one per thread) processes the batch
    positions ``order[bin_ptr[b]:bin_ptr[b + 1]]``; any split gives the same result. Document d draws
    from ``stream(seed, d, 0)``. With ``scale = 1`` ``out`` holds the integer sums exactly.

    A Python function running Numba block kernels on the library's thread pool
    (:func:`scalable_bayes.utils.parallel_blocks`: the bins, then the topics); writes ``out`` and returns
    nothing.

    Parameters
    ----------
    pi_t : ndarray of float64, shape (V, K)
        The topics transposed (:func:`topics_transposed`).
    indptr : ndarray of int64, shape (D + 1,)
        CSR row offsets of the corpus.
    indices : ndarray of int
        CSR column (word) indices.
    tok_ptr : ndarray of int64, shape (D + 1,)
        Document offsets into the token arrays.
    tok_word : ndarray of int
        Word of every token.
    tok_entry : ndarray of int
        CSR entry of every token.
    docs : ndarray of int64, shape (S,)
        The minibatch.
    order : ndarray of int64, shape (S,)
        Batch positions grouped by bin (:func:`balanced_bins`).
    bin_ptr : ndarray of int64, shape (n_bins + 1,)
        Bin offsets into ``order``.
    alpha : float
        Dirichlet prior of the document proportions.
    sweeps : int
        Gibbs sweeps per document.
    burn : int
        Sweeps discarded.
    seed : int
        Seed of the per-document streams.
    scale : float
        Factor of the sums (e.g. D / S).
    out : ndarray of float64, shape (K * V,)
        Output.
    """
    V, K = pi_t.shape
    nb = docs.shape[0]
    eoff, toff, cnt, zbuf, nbuf, pbuf, ks = _batch_scratch(indptr, tok_ptr, docs, K, bin_ptr.shape[0] - 1)
    parallel_blocks(_gibbs_bins, bin_ptr.shape[0] - 1, pi_t, tok_ptr, tok_word, tok_entry, indptr, docs, order,
                    bin_ptr, eoff, toff, alpha, sweeps, burn, np.uint64(seed), zbuf, nbuf, pbuf, ks, cnt)
    parallel_blocks(_topic_sums, K, K, V, nb, indptr, indices, docs, eoff, cnt, float(scale), out)


def _batch_scratch(indptr, tok_ptr, docs, K, nbins):
    """Offsets of the batch's CSR entries and tokens, the count buffer ``cnt[(eoff[i] + local entry) K + k]``,
    the indicator buffer and per-bin scratch, each bin's in its own cache lines (a shared line, written for
    every token, would bounce between the cores: measured ~1.05x instead of ~1.9x on 2 threads). NumPy, not
    a compiled function: it runs once per call, and compiling it cost 0.75 s of a first call."""
    eoff = np.zeros(docs.shape[0] + 1, np.int64)
    np.cumsum(indptr[docs + 1] - indptr[docs], out=eoff[1:])
    toff = np.zeros(docs.shape[0] + 1, np.int64)
    np.cumsum(tok_ptr[docs + 1] - tok_ptr[docs], out=toff[1:])
    ks = (K + 15) // 16 * 16 + 16
    return (eoff, toff, np.zeros(eoff[-1] * K, np.int32), np.empty(toff[-1], np.int32),
            np.empty((nbins + 1) * ks, np.int32), np.empty((nbins + 1) * ks, np.float64), ks)


@njit(cache=True, nogil=True)
def _gibbs_bins(lo, hi, pi_t, tok_ptr, tok_word, tok_entry, indptr, docs, order, bin_ptr, eoff, toff, alpha, sweeps,
                burn, seed, zbuf, nbuf, pbuf, ks, cnt):
    """Bins ``lo .. hi - 1`` of :func:`batch_topic_counts`: the within-document Gibbs of their documents."""
    K = pi_t.shape[1]
    for b in range(lo, hi):
        ndk = nbuf[(b + 1) * ks:(b + 1) * ks + K]
        p = pbuf[(b + 1) * ks:(b + 1) * ks + K]
        for j in range(bin_ptr[b], bin_ptr[b + 1]):
            i = order[j]
            d = docs[i]
            _doc_gibbs(pi_t, tok_word, tok_entry, tok_ptr[d], tok_ptr[d + 1] - tok_ptr[d], eoff[i] - indptr[d], alpha,
                       sweeps, burn, stream(seed, d, 0), zbuf[toff[i]:toff[i + 1]], ndk, p, cnt)


@njit(cache=True, nogil=True)
def _topic_sums(lo, hi, K, V, nb, indptr, indices, docs, eoff, cnt, scale, out):
    """Topics ``lo .. hi - 1`` of :func:`batch_topic_counts`: the counts summed per word in a fixed order."""
    for k in range(lo, hi):
        row = k * V
        for w in range(V):
            out[row + w] = 0.0
        for i in range(nb):
            a = indptr[docs[i]]
            for e in range(eoff[i], eoff[i + 1]):
                c = cnt[e * K + k]
                if c != 0:
                    out[row + indices[a + e - eoff[i]]] += c
        if scale != 1.0:
            for w in range(V):
                out[row + w] *= scale


def balanced_bins(lengths, n_bins: int):
    """(order, bin_ptr): positions 0..len(lengths)-1 split into ``n_bins`` bins of near-equal total length
    (longest first, each to the lightest bin); bin b is ``order[bin_ptr[b]:bin_ptr[b + 1]]``.

    Parameters
    ----------
    lengths : array_like of int
        Length (work) of each position; a bin's load counts length + 1 per position.
    n_bins : int
        Number of bins (clipped to [1, len(lengths)]).

    Returns
    -------
    order : ndarray of int64, shape (len(lengths),)
        The positions, bin after bin.
    bin_ptr : ndarray of int64, shape (n_bins + 1,)
        Bin offsets into ``order``.
    """
    n_bins = max(1, min(int(n_bins), len(lengths)))
    load = [0] * n_bins
    bins = [[] for _ in range(n_bins)]
    for i in np.argsort(-np.asarray(lengths), kind="stable").tolist():
        b = load.index(min(load))
        bins[b].append(i)
        load[b] += int(lengths[i]) + 1
    order = np.array([i for bb in bins for i in bb], dtype=np.int64)
    bin_ptr = np.zeros(n_bins + 1, np.int64)
    np.cumsum([len(bb) for bb in bins], out=bin_ptr[1:])
    return order, bin_ptr


class SimplexLDA:
    """LDA with topics on the gamma-parametrised simplex for SCIR / SGRLD; minibatches are documents.

    Parameters
    ----------
    counts : array_like or scipy.sparse matrix, shape (D, V)
        Document-term counts (CSR or dense; non-negative integers), the training documents.
    n_topics : int
        K >= 2.
    alpha : float, default 0.1
        Dirichlet prior of the document proportions (> 0), used in the within-document Gibbs.
    beta : float, default 0.01
        Dirichlet prior of the topics (> 0): the manifold's prior, added by the samplers.
    sweeps : int, default 20
        Within-document Gibbs sweeps per document and call (not stated in SCIR or SGNHT; our default G = 20).
    burn : int, default 10
        The first ``burn`` of the sweeps are discarded, 0 <= burn < sweeps (our default B = 10).

    Attributes
    ----------
    K, V, D : int
        Topics, vocabulary size, training documents.
    dim : int
        K V; theta is flat, topic k = theta[k V:(k + 1) V].
    """

    def __init__(self, counts, n_topics: int, alpha: float = 0.1, beta: float = 0.01, sweeps: int = 20,
                 burn: int = 10):
        X = counts if sp.issparse(counts) else sp.csr_matrix(np.asarray(counts))
        X = sp.csr_matrix(X, dtype=np.float64)
        X.sum_duplicates()
        if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 2:
            raise ValueError(f"SimplexLDA: counts must be a (documents x words) matrix with at least 1 document and "
                             f"2 words, got shape {X.shape}")
        if X.nnz and not np.isfinite(X.data).all():
            raise ValueError("SimplexLDA: counts hold NaN or inf; pass raw token counts (non-negative integers)")
        if X.nnz and (X.data.min() < 0 or np.any(np.floor(X.data) != X.data)):
            raise ValueError("SimplexLDA: counts must be non-negative integers (raw token counts, not tf-idf); "
                             "found a negative or fractional count")
        X.eliminate_zeros()
        if X.nnz == 0:
            raise ValueError("SimplexLDA: counts are all zero; give documents with at least one token")
        if int(n_topics) != n_topics or n_topics < 2:
            raise ValueError(f"SimplexLDA: n_topics must be an integer >= 2, got {n_topics!r}")
        for name, v in (("alpha", alpha), ("beta", beta)):
            if not (np.isfinite(v) and v > 0):
                raise ValueError(f"SimplexLDA: {name} must be positive and finite (a Dirichlet prior), got {v!r}")
        if int(sweeps) != sweeps or sweeps < 1:
            raise ValueError(f"SimplexLDA: sweeps must be a positive integer, got {sweeps!r}")
        if int(burn) != burn or not 0 <= burn < sweeps:
            raise ValueError(f"SimplexLDA: need 0 <= burn < sweeps (at least one kept sweep); got burn={burn!r}, "
                             f"sweeps={sweeps!r}: lower burn or raise sweeps")
        self.D, self.V = X.shape
        self.K = int(n_topics)
        self.alpha, self.beta = float(alpha), float(beta)
        self.sweeps, self.burn = int(sweeps), int(burn)
        self.dim = self.K * self.V
        self.indptr = X.indptr.astype(np.int64)
        self.indices = X.indices.astype(np.int64)
        reps = X.data.astype(np.int64)
        self.tok_ptr = np.zeros(self.D + 1, np.int64)
        np.cumsum(np.asarray(X.sum(axis=1)).ravel().astype(np.int64), out=self.tok_ptr[1:])
        self.tok_word = np.repeat(self.indices, reps).astype(np.int32)
        self.tok_entry = np.repeat(np.arange(X.nnz, dtype=np.int64), reps).astype(np.int32)
        self.doc_len = np.diff(self.tok_ptr)
        if X.nnz >= 2**31 or self.tok_ptr[-1] >= 2**31:
            raise ValueError("SimplexLDA: more than 2^31 tokens or entries; split the corpus")
        self._pi_t = np.empty((self.V, self.K))
        self.manifold = GammaSimplex(self.K, self.V, self.beta)

    # -- the statistic -------------------------------------------------------------------------

    def topic_counts(self, theta, docs, seed: int, scale: float = 1.0) -> np.ndarray:
        """``scale`` times the sum over the kept sweeps and the documents ``docs`` of the Gibbs indicator
        counts, flat (K V,) (with ``scale = 1 / (sweeps - burn)`` the sum of E[n_dkw]); document d draws
        from ``stream(seed, d, 0)``. NaN everywhere if a topic of ``theta`` has no positive finite mass."""
        theta = np.ascontiguousarray(theta, dtype=np.float64).reshape(-1)
        if theta.shape[0] != self.dim:
            raise ValueError(f"SimplexLDA: theta has {theta.shape[0]} entries, expected K*V = {self.dim}")
        docs = np.ascontiguousarray(docs, dtype=np.int64).reshape(-1)
        if docs.size == 0 or docs.min() < 0 or docs.max() >= self.D:
            raise ValueError(f"SimplexLDA: docs must be a non-empty list of document indices in [0, {self.D}); "
                             f"the kernel does not check bounds")
        out = np.empty(self.dim)
        if not topics_transposed(theta, self.K, self.V, self._pi_t):
            out[:] = np.nan
            return out
        order, bin_ptr = balanced_bins(self.doc_len[docs], numba.get_num_threads())
        batch_topic_counts(self._pi_t, self.indptr, self.indices, self.tok_ptr, self.tok_word, self.tok_entry, docs,
                           order, bin_ptr, self.alpha, self.sweeps, self.burn, np.uint64(seed), float(scale), out)
        return out

    def grad(self, theta, batch_idx, key) -> np.ndarray:
        """n^ = (D / |S|) sum_{d in S} E[n_dkw] (flat, K V), one draw of ``next_u64(key)`` seeding the call."""
        seed = next_u64(key)
        nb = len(batch_idx)
        return self.topic_counts(theta, batch_idx, seed, self.D / (nb * (self.sweeps - self.burn)))

    def model(self) -> Model:
        return Model("lda-simplex", self.dim, n_data=self.D, grad_py=self.grad, manifold=self.manifold)

    # -- positions and topics ----------------------------------------------------------------------

    def init_position(self, seed: int) -> np.ndarray:
        """theta0 with independent Gamma(1, 1) entries (topics uniform on the simplex, Dir(1)); > 0 a.s."""
        return rng_from_seed(seed).gamma(1.0, 1.0, self.dim)

    def topics(self, theta) -> np.ndarray:
        """(K, V) topic-word probabilities pi: each topic of ``theta`` normalised to sum 1."""
        return self.manifold.to_simplex(theta)
