"""Experiment helpers of the ESCA paper's figures (called by the thin workflow scripts).

Runs return tidy tables: one row per (method, seed, recorded iteration) with the cumulative fit
wall time (evaluation excluded, TARGETS [M9]) and the held-out per-word log-likelihood ([M2]).
"""

from __future__ import annotations

import logging
import resource
import time

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ._estimators import CVB0, ESCA, CollapsedGibbs

logger = logging.getLogger(__name__)

METHODS = {
    "ESCA": (ESCA, {"sampler": "sparse_alias"}),
    "ESCA_plain": (ESCA, {"sampler": "plain"}),
    "CGS": (CollapsedGibbs, {}),
    "CVB0": (CVB0, {}),
}


def make_estimator(method, **kw):
    if method not in METHODS:
        raise ValueError(f"unknown LDA method {method!r}; choose one of {sorted(METHODS)}")
    cls, extra = METHODS[method]
    return cls(**kw, **extra)


def align_vocabulary(X, vocab_from, vocab_to) -> tuple[sp.csr_matrix, int]:
    """Re-index the columns of X (vocabulary ``vocab_from``) into ``vocab_to``; out-of-vocabulary
    words are dropped (ESCA App. G cross-corpus evaluation). Returns (X', number of dropped tokens)."""
    pos = {w: i for i, w in enumerate(vocab_to)}
    mapping = np.array([pos.get(w, -1) for w in vocab_from], dtype=np.int64)
    X = sp.csr_matrix(X).tocoo()
    new_col = mapping[X.col]
    keep = new_col >= 0
    dropped = int(X.data[~keep].sum())
    Y = sp.csr_matrix((X.data[keep], (X.row[keep], new_col[keep])), shape=(X.shape[0], len(vocab_to)))
    Y.sum_duplicates()
    return Y, dropped


def subsample_rows(X, max_docs, seed):
    """The first ``max_docs`` rows of a seeded permutation (all rows if max_docs is None)."""
    if max_docs is None or max_docs >= X.shape[0]:
        return X
    idx = np.sort(np.random.default_rng(seed).permutation(X.shape[0])[:max_docs])
    return X[idx]


def run_lda(X_train, X_test, *, method, n_topics, alpha, beta, n_iter, evaluate_every, n_threads, seed,
            heldout_sweeps=20):
    """Fit one engine and return (history DataFrame, fitted estimator, info dict)."""
    alpha = 50.0 / n_topics if alpha is None else float(alpha)
    est = make_estimator(method, n_topics=int(n_topics), doc_topic_prior=alpha, topic_word_prior=float(beta),
                         n_iter=int(n_iter), n_threads=int(n_threads), seed=int(seed),
                         evaluate_every=int(evaluate_every), heldout_sweeps=int(heldout_sweeps))
    # warm-up on two documents: Numba compilation / cache loading must not count as fit time ([M9])
    make_estimator(method, n_topics=int(n_topics), doc_topic_prior=alpha, topic_word_prior=float(beta), n_iter=1,
                   n_threads=int(n_threads), seed=int(seed)).fit(
        sp.csr_matrix(X_train)[np.flatnonzero(sp.csr_matrix(X_train).getnnz(axis=1))[:2]])
    t0 = time.perf_counter()
    est.fit(X_train, X_heldout=X_test)
    total = time.perf_counter() - t0
    df = pd.DataFrame(est.history_)
    df["seed"] = int(seed)
    df["n_topics"] = int(n_topics)
    df["alpha"] = alpha
    df["beta"] = float(beta)
    df["threads"] = int(n_threads)
    df["method"] = method
    df["perplexity"] = np.exp(-df["heldout_ll"]) if "heldout_ll" in df else np.nan
    fit_time = float(est.fit_time_)
    info = {
        "method": method, "n_tokens": int(est.n_tokens_), "n_docs": int(X_train.shape[0]),
        "n_empty_docs": int(est.n_empty_docs_), "n_words": int(X_train.shape[1]), "fit_time_s": fit_time,
        "tokens_per_s": float(est.n_tokens_ * n_iter / max(fit_time, 1e-12)) if n_iter else float("nan"),
        "state_bytes": int(est.state_nbytes()),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "total_time_s": total,
    }
    df["tokens_per_s"] = info["tokens_per_s"]
    df["state_bytes"] = info["state_bytes"]
    return df, est, info


def time_to_reach(df, target):
    """First wall time at which heldout_ll >= target (NaN if never)."""
    hit = df[df["heldout_ll"] >= target]
    return float(hit["wall_time"].min()) if len(hit) else float("nan")


def top_words(components, vocab, n_topics_show=5, n_words=10):
    """Top ``n_words`` words of the first ``n_topics_show`` topics, as a DataFrame (topic, words)."""
    rows = []
    for k in range(min(n_topics_show, components.shape[0])):
        order = np.argsort(-components[k], kind="stable")[:n_words]
        rows.append({"topic": k, "top_words": ", ".join(vocab[i] for i in order)})
    return pd.DataFrame(rows)


def ising_two_spin_table():
    """ESCA-TabU1: stationary distributions of sequential vs synchronous (SCA) Gibbs on
    p(x1, x2) propto exp(x1 x2), x in {-1, 1}^2 (paper Sec. 2.5, eq. 10), computed from the exact
    4 x 4 transition matrices."""
    states = [(-1, -1), (-1, 1), (1, -1), (1, 1)]

    def cond(xi_new, x_other):  # p(x_i = xi_new | x_other)
        return np.exp(xi_new * x_other) / (np.exp(x_other) + np.exp(-x_other))

    n = len(states)
    P_sync = np.zeros((n, n))
    P_seq = np.zeros((n, n))
    for i, (a, b) in enumerate(states):
        for j, (c, d) in enumerate(states):
            P_sync[i, j] = cond(c, b) * cond(d, a)  # both updated from the old state
            P_seq[i, j] = cond(c, b) * cond(d, c)  # x1 first, then x2 given the new x1

    def stationary(P):
        w, v = np.linalg.eig(P.T)
        s = np.real(v[:, np.argmin(np.abs(w - 1))])
        return s / s.sum()

    p = np.array([np.exp(a * b) for a, b in states])
    q = np.array([np.cosh(a * b) for a, b in states])
    return pd.DataFrame({
        "state": [f"({a}, {b})" for a, b in states],
        "p_target": p / p.sum(),
        "q_sca_formula": q / q.sum(),
        "sequential_gibbs_stationary": stationary(P_seq),
        "synchronous_sca_stationary": stationary(P_sync),
    })


def heldout_split(train_corpus, test_corpus, max_test_docs, seed):
    """Held-out documents: the test split of ``test_corpus`` in the vocabulary of ``train_corpus``
    (identity when both are the same corpus; App. G cross-corpus otherwise), seeded subsample."""
    Xte = test_corpus.subset("test").counts
    dropped = 0
    if list(test_corpus.vocab) != list(train_corpus.vocab):
        Xte, dropped = align_vocabulary(Xte, test_corpus.vocab, train_corpus.vocab)
    lens = np.asarray(Xte.sum(axis=1)).ravel()
    Xte = Xte[np.flatnonzero(lens >= 2)]
    return subsample_rows(Xte, max_test_docs, seed), dropped


def run_held_out_experiment(train_corpus, test_corpus, settings) -> pd.DataFrame:
    """One run of Fig. 2 / 5 / 6 / throughput: ``settings`` holds method, n_topics, alpha, beta,
    n_iter, evaluate_every, threads, seed, max_train_docs, max_test_docs, heldout_sweeps, experiment."""
    s = dict(settings)
    Xtr = subsample_rows(train_corpus.subset("train").counts, s.get("max_train_docs"), 12345)
    Xte, dropped = heldout_split(train_corpus, test_corpus, s.get("max_test_docs"), 54321)
    logger.info("%s on %s (%d docs, V=%d) -> held-out %s (%d docs, %d OOV tokens dropped)", s["method"],
                train_corpus.name, Xtr.shape[0], Xtr.shape[1], test_corpus.name, Xte.shape[0], dropped)
    df, est, info = run_lda(Xtr, Xte, method=s["method"], n_topics=s["n_topics"], alpha=s.get("alpha"),
                            beta=s["beta"], n_iter=s["n_iter"], evaluate_every=s["evaluate_every"],
                            n_threads=s["threads"], seed=s["seed"], heldout_sweeps=s.get("heldout_sweeps", 20))
    logger.info("run info: %s", info)
    df["train_corpus"] = train_corpus.name
    df["test_corpus"] = test_corpus.name
    df["experiment"] = s.get("experiment", "")
    df["n_tokens"] = info["n_tokens"]
    df["n_train_docs"] = info["n_docs"]
    df["n_test_docs"] = int(Xte.shape[0])
    df["peak_rss_mib"] = info["peak_rss_mib"]
    return df
