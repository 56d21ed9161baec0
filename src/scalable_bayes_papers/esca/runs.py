"""Runs of the ESCA paper (Zaheer et al. 2016): settings in, tidy table out. What the compute rules call.

* :func:`run_held_out_experiment`: one LDA engine on one (training corpus, held-out corpus) for
  Fig. 2, Fig. 5, Fig. 6 and the throughput table: one row per recorded iteration with the
  cumulative fit wall time (evaluation excluded) and the held-out per-word log-likelihood.
* :func:`run_fig3_scenario`: EM and SEM on the synthetic Gaussian mixture of Fig. 3, one
  (initialisation scenario, seed).
* :func:`run_topics`: ESCA fitted on one corpus, the top words of its topics (TabU3).

The engines (ESCA, CGS, CVB0), EM/SEM and the held-out score live in :mod:`scalable_bayes`; this
module only composes them with the paper's settings (README.md beside this file).
"""

from __future__ import annotations

import logging
import resource
import time

import numpy as np
import pandas as pd
import scipy.sparse as sp

from scalable_bayes.inference.gmm_sem import GMMParams, fit_em_sem, gmm_loglik, init_from_means, init_kmeanspp
from scalable_bayes.inference.lda import CVB0, ESCA, CollapsedGibbs, top_words

from .data import heldout_docs, make_gmm_data, training_docs

logger = logging.getLogger(__name__)

# Series of the LDA figures -> (estimator, its extra arguments)
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


# ---------------------------------------------------------------------------- LDA runs (Fig. 2, 5, 6, throughput)


def run_lda(X_train, X_test, *, method, n_topics, alpha, beta, n_iter, evaluate_every, n_threads, seed,
            heldout_sweeps=20):
    """Fit one engine and return (history DataFrame, fitted estimator, info dict); ``alpha`` None = 50 / K."""
    alpha = 50.0 / n_topics if alpha is None else float(alpha)
    est = make_estimator(method, n_topics=int(n_topics), doc_topic_prior=alpha, topic_word_prior=float(beta),
                         n_iter=int(n_iter), n_threads=int(n_threads), seed=int(seed),
                         evaluate_every=int(evaluate_every), heldout_sweeps=int(heldout_sweeps))
    # warm-up on two documents: Numba compilation / cache loading must not count as fit time
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


def run_held_out_experiment(train_corpus, test_corpus, settings) -> pd.DataFrame:
    """One run of Fig. 2 / 5 / 6 / throughput: ``settings`` holds method, n_topics, alpha, beta,
    n_iter, evaluate_every, threads, seed, max_train_docs, max_test_docs, heldout_sweeps, experiment."""
    s = dict(settings)
    Xtr = training_docs(train_corpus, s.get("max_train_docs"))
    Xte, dropped = heldout_docs(train_corpus, test_corpus, s.get("max_test_docs"))
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


# ---------------------------------------------------------------------------- TabU3


def run_topics(corpus, settings) -> pd.DataFrame:
    """TabU3: ESCA (sparse + alias, seed 0) on the whole train split of ``corpus``; the top
    ``settings["n_words"]`` words of every topic, one row per topic (corpus, topic, top_words).
    ``settings``: n_topics, alpha (None = 50 / K), beta, n_iter, threads, n_words."""
    s = settings
    tr = corpus.subset("train").counts
    _, est, _ = run_lda(tr, None, method="ESCA", n_topics=s["n_topics"], alpha=s.get("alpha"), beta=s["beta"],
                        n_iter=s["n_iter"], evaluate_every=0, n_threads=s["threads"], seed=0)
    tw = top_words(est.components_, corpus.vocab, est.components_.shape[0], s["n_words"])
    tw.insert(0, "corpus", corpus.name)
    return tw


# ---------------------------------------------------------------------------- Fig. 3 (App. A): EM vs SEM


def bad_init(X, n_components, rng, subsample=5000) -> GMMParams:
    """Fig. 3's deliberately bad initialisation: every mean in a 1 x 1 box around the data mean;
    data covariance, uniform weights. It first draws (and discards) the row subsample of the
    k-means++ initialisation, so that its means come from the same position of ``rng``'s stream as
    in every earlier run of this pipeline."""
    rng.choice(X.shape[0], size=min(subsample, X.shape[0]), replace=False)
    means = X.mean(0) + rng.uniform(-0.5, 0.5, size=(n_components, X.shape[1]))
    return init_from_means(X, means)


def init_params(X, n_components, scenario, rng, subsample=5000) -> GMMParams:
    """Initialisation of Fig. 3 by scenario: 'good' = k-means++ on a subsample
    (:func:`scalable_bayes.inference.gmm_sem.init_kmeanspp`), 'bad' = :func:`bad_init`."""
    if scenario == "good":
        return init_kmeanspp(X, n_components, rng, subsample)
    if scenario == "bad":
        return bad_init(X, n_components, rng, subsample)
    raise ValueError(f"init scenario must be 'good' or 'bad', got {scenario!r}")


def run_fig3_scenario(*, scenario, seed, n_components=30, n_train=100_000, n_test=1_000, n_iter=50):
    """ESCA Fig. 3, one (scenario, seed): data from ``seed``; 'good': EM and SEM share one k-means++
    initialisation; 'bad': EM gets the k-means++ one, SEM the bad box initialisation, and as a
    reference (not in the paper) EM is also run from SEM's bad start (method ``EM_bad``): it shows
    what the bad start costs EM, so that SEM's shortfall can be read against it. Tidy table."""
    X, Xte, true = make_gmm_data(n_components, n_train, n_test, seed=seed)
    rng = np.random.default_rng([seed, 1])
    good = init_params(X, n_components, "good", rng)
    sem_init = good if scenario == "good" else init_params(X, n_components, "bad", rng)
    runs = {"EM": ("EM", good), "SEM": ("SEM", sem_init)}  # series label -> (algorithm, initialisation)
    if scenario == "bad":
        runs["EM_bad"] = ("EM", sem_init)
    rows = []
    for method, (algorithm, init) in runs.items():
        _, hist = fit_em_sem(X, Xte, init, algorithm, n_iter, seed)
        for h in hist:
            rows.append({"scenario": scenario, "seed": seed, "method": method, **h})
    df = pd.DataFrame(rows)
    df["true_test_ll"] = gmm_loglik(Xte, true)
    return df
