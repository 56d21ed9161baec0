"""Slow, obviously correct references for the LDA kernels (stumpy-style naive twins).

They use the same counter-based random stream as the kernels (called from Python), so the exact
samplers (CGS, plain SCA, document completion) can be compared draw for draw.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from scalable_bayes.rng import next_uniform as _next_uniform
from scalable_bayes.rng import stream as _stream


def stream(seed, a, b):
    return np.uint64(_stream(seed, a, b))


def next_uniform(st):
    s, u = _next_uniform(np.uint64(st))
    return np.uint64(s), u


def synthetic_lda(n_docs=300, n_words=200, n_topics=5, doc_len=60, alpha=0.2, beta=0.05, seed=0):
    """A small LDA corpus: (counts CSR, true topic-word phi (K, V), true theta (M, K))."""
    rng = np.random.default_rng(seed)
    phi = rng.dirichlet(np.full(n_words, beta), size=n_topics)
    theta = rng.dirichlet(np.full(n_topics, alpha), size=n_docs)
    rows = []
    for m in range(n_docs):
        p = theta[m] @ phi
        rows.append(rng.multinomial(doc_len, p / p.sum()))
    return sp.csr_matrix(np.array(rows, dtype=np.int32)), phi, theta


def expand(X):
    X = sp.csr_matrix(X)
    docs = []
    for m in range(X.shape[0]):
        s, e = X.indptr[m], X.indptr[m + 1]
        docs.append(np.repeat(X.indices[s:e], X.data[s:e]))
    return docs


def inverse_cdf(cum, u):
    """Index of the first cum entry > u (same convention as the kernels' binary search)."""
    return min(int(np.searchsorted(cum, u, side="right")), len(cum) - 1)


def alias_probabilities(prob, alias):
    """The distribution an alias table (prob, alias) represents."""
    n = len(prob)
    p = np.zeros(n)
    for i in range(n):
        p[i] += prob[i] / n
        p[alias[i]] += (1 - prob[i]) / n
    return p


def cgs_draw(p, K, u):
    """The sweep's inverse CDF in column order (topic k = 8 r + j is row r of column j): the column by the
    column sums (each summed down its column, in order), then down the column; ``u`` uniform on [0, 1)."""
    col = [0.0] * 8
    for k in range(K):
        col[k % 8] += p[k]
    Z = 0.0
    for j in range(8):
        Z += col[j]
    u *= Z
    acc, j = 0.0, 0
    while j < min(7, K - 1) and acc + col[j] <= u:
        acc += col[j]
        j += 1
    k = j
    while k + 8 < K and acc + p[k] <= u:
        acc += p[k]
        k += 8
    return k


def cgs(X, K, alpha, beta, n_iter, seed, doc_cuts=None, word_cuts=None):
    """Collapsed Gibbs with the kernels' stream and draw convention; returns W (V, K), z. The conditional is
    computed as the kernel does, (D_mk + alpha) * (1 / (T_k + V beta)) * (W_kv + beta), each operation rounded
    in that order, and drawn by :func:`cgs_draw`.

    Sequential by default. With ``doc_cuts`` / ``word_cuts`` (P + 1 boundaries each, P >= 1) the partitioned
    sweep: P rounds; in round s, for i = 0 .. P - 1 in turn, the tokens of documents ``doc_cuts[i]`` to
    ``doc_cuts[i + 1] - 1`` whose word lies in ``word_cuts[g] ..`` with g = (i + s) mod P, document by document,
    drawn from the stream (seed, t P + g, m), with the topic totals of the round's start plus that block's
    own moves; after the round every block's moves are added to the totals."""
    X = sp.csr_matrix(X)
    V = X.shape[1]
    docs = expand(X)
    D = np.zeros((len(docs), K), np.int64)
    W = np.zeros((V, K), np.int64)
    T = np.zeros(K, np.int64)
    z = []
    for m, toks in enumerate(docs):
        st = stream(seed, 0, m)
        zm = []
        for v in toks:
            st, u = next_uniform(st)
            k = min(int(u * K), K - 1)
            zm.append(k)
            D[m, k] += 1
            W[v, k] += 1
            T[k] += 1
        z.append(zm)

    def block(m, positions, st, Tb):
        for i in positions:
            v = docs[m][i]
            old = z[m][i]
            D[m, old] -= 1
            W[v, old] -= 1
            Tb[old] -= 1
            p = ((D[m] + alpha) * (1.0 / (Tb + V * beta))) * (W[v] + beta)
            st, u = next_uniform(st)
            k = cgs_draw(p, K, u)
            z[m][i] = k
            D[m, k] += 1
            W[v, k] += 1
            Tb[k] += 1

    for it in range(1, n_iter + 1):
        if doc_cuts is None:
            for m in range(len(docs)):
                block(m, range(len(docs[m])), stream(seed, it, m), T)
            continue
        P = len(doc_cuts) - 1
        for s in range(P):
            moves = np.zeros(K, np.int64)
            for i in range(P):
                g = (i + s) % P
                Tb = T.copy()
                for m in range(doc_cuts[i], doc_cuts[i + 1]):
                    pos = [j for j, v in enumerate(docs[m]) if word_cuts[g] <= v < word_cuts[g + 1]]
                    if pos:
                        block(m, pos, stream(seed, it * P + g, m), Tb)
                moves += Tb - T
            T += moves
    return W, np.concatenate([np.asarray(a, dtype=np.int64) for a in z])


def esca_conditional(D, W, T, alpha, beta):
    """The frozen ESCA conditional for every (doc m, word v): p[m, v] propto
    (D_mk + alpha)(W_vk + beta)/(T_k + V beta), normalised over k. D (M, K), W (V, K)."""
    V = W.shape[0]
    p = (D[:, None, :] + alpha) * (W[None, :, :] + beta) / (T + V * beta)
    return p / p.sum(axis=2, keepdims=True)


def esca_expected_next(X, D, W, T, alpha, beta):
    """Expected (D', W') after one ESCA iteration from (D, W, T): sums of the conditional."""
    X = sp.csr_matrix(X).tocoo()
    p = esca_conditional(D, W, T, alpha, beta)
    D2 = np.zeros_like(D, dtype=float)
    W2 = np.zeros_like(W, dtype=float)
    for m, v, c in zip(X.row, X.col, X.data):
        D2[m] += c * p[m, v]
        W2[v] += c * p[m, v]
    return D2, W2


def cvb0_sweep(X, gamma, D, W, T, alpha, beta, storage=np.float64):
    """One sequential CVB0 sweep (entries in CSR order, token excluded, entry tokens share gamma).
    gamma (float64) holds values of ``storage``: each new row is rounded to it (numpy's cast, round to
    nearest even) and the counts receive exactly the rounded values."""
    X = sp.csr_matrix(X)
    V = X.shape[1]
    e = 0
    for m in range(X.shape[0]):
        for j in range(X.indptr[m], X.indptr[m + 1]):
            v, c = X.indices[j], X.data[j]
            g = gamma[e].astype(np.float64)
            x = np.maximum((D[m] - g + alpha) * (W[v] - g + beta) / (T - g + V * beta), 0)
            gn = (x / x.sum()).astype(storage).astype(np.float64)
            d = c * (gn - gamma[e])
            gamma[e] = gn
            D[m] += d
            W[v] += d
            T += d
            e += 1


def heldout_loglik(phi, X, alpha, n_sweeps, seed):
    """Document completion exactly as in scalable_bayes.evaluation.heldout, in plain Python."""
    phi = phi / phi.sum(axis=1, keepdims=True)
    K = phi.shape[0]
    tot, nh = 0.0, 0
    for m, toks in enumerate(expand(X)):
        n = toks.size
        if n < 2:
            continue
        obs = toks[0::2]
        st = stream(seed, 0, m)
        z = np.zeros(obs.size, np.int64)
        ndk = np.zeros(K)
        for i in range(obs.size):
            st, u = next_uniform(st)
            z[i] = min(int(u * K), K - 1)
            ndk[z[i]] += 1
        burn = n_sweeps - (n_sweeps + 1) // 2
        theta = np.zeros(K)
        kept = 0
        for s in range(n_sweeps):
            for i, w in enumerate(obs):
                ndk[z[i]] -= 1
                p = (ndk + alpha) * phi[:, w]
                st, u = next_uniform(st)
                c = np.cumsum(p)
                z[i] = inverse_cdf(c, u * c[-1])
                ndk[z[i]] += 1
            if s >= burn:
                kept += 1
                theta += (ndk + alpha) / (obs.size + K * alpha)
        theta /= kept
        for w in toks[1::2]:
            tot += np.log(theta @ phi[:, w])
            nh += 1
    return tot / nh


def simplex_lda_topic_counts(theta, X, K, docs, alpha, sweeps, burn, seed):
    """Twin of ``scalable_bayes.models.lda_simplex.batch_topic_counts`` (separate from the engines'
    twins above): the (K, V) integer sums over the documents ``docs`` and the kept sweeps of the
    within-document Gibbs indicator counts, p(z = k) ∝ (alpha + n_dk^-) pi_kw with pi = theta's rows
    normalised (sequential sums, as the kernel); document d draws from stream(seed, d, 0); initial
    topics uniform; a word no topic can emit (all products 0) draws its topic uniformly."""
    X = sp.csr_matrix(X)
    V = X.shape[1]
    th = np.asarray(theta, dtype=np.float64).reshape(K, V)
    pi = np.empty((K, V))
    for k in range(K):
        tot = 0.0
        for w in range(V):
            tot += float(th[k, w])
        inv = 1.0 / tot
        for w in range(V):
            pi[k, w] = th[k, w] * inv
    docs_tok = expand(X)
    out = np.zeros((K, V), np.int64)
    for d in docs:
        toks = docs_tok[int(d)]
        st = stream(seed, int(d), 0)
        z = []
        ndk = [0] * K
        for _ in toks:
            st, u = next_uniform(st)
            k = min(int(u * K), K - 1)
            z.append(k)
            ndk[k] += 1
        for s in range(sweeps):
            for t, w in enumerate(toks):
                ndk[z[t]] -= 1
                cum = []
                P = 0.0
                for k in range(K):
                    P += (alpha + ndk[k]) * pi[k, w]
                    cum.append(P)
                st, u = next_uniform(st)
                if P > 0.0:
                    k = inverse_cdf(np.array(cum), u * P)
                else:
                    k = min(int(u * K), K - 1)
                z[t] = k
                ndk[k] += 1
                if s >= burn:
                    out[k, w] += 1
    return out
