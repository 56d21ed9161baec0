"""Runs of the ESCA paper (Zaheer et al. 2016): settings in, tidy table out. What the compute rules call.

* :func:`run_held_out_experiment`: one LDA engine on one (training corpus, held-out corpus) for
  Fig. 2, Fig. 5, Fig. 6 and the throughput table: one row per recorded iteration with the
  cumulative fit wall time (evaluation excluded) and the held-out per-word log-likelihood.
* :func:`run_fig3_seed`: EM restarts, and SEM / EM from starts of increasing severity, on the
  synthetic Gaussian mixture of Fig. 3, one seed.
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
from .peers import TomotopyLDA

logger = logging.getLogger(__name__)

# Series of the LDA figures -> (estimator, its extra arguments)
METHODS = {
    "ESCA": (ESCA, {"sampler": "sparse_alias"}),
    "ESCA_plain": (ESCA, {"sampler": "plain"}),
    "CGS": (CollapsedGibbs, {}),
    "CVB0": (CVB0, {}),
    "tomotopy": (TomotopyLDA, {}),  # the fastest peer the pipeline runs (throughput claim; peers.py)
}
# engines whose iteration runs on several threads (CGS and CVB0 sweeps are sequential)
PARALLEL_METHODS = ("ESCA", "ESCA_plain", "tomotopy")


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
    est = make_estimator(method, n_components=int(n_topics), doc_topic_prior=alpha, topic_word_prior=float(beta),
                         max_iter=int(n_iter), n_jobs=int(n_threads), random_state=int(seed),
                         evaluate_every=int(evaluate_every), heldout_sweeps=int(heldout_sweeps))
    # warm-up on two documents: Numba compilation / cache loading must not count as fit time
    make_estimator(method, n_components=int(n_topics), doc_topic_prior=alpha, topic_word_prior=float(beta), max_iter=1,
                   n_jobs=int(n_threads), random_state=int(seed)).fit(
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
    n_iter, evaluate_every, threads, seed, max_train_docs, max_test_docs, heldout_sweeps, experiment,
    optionally ``timing_repeats`` (> 1: the fit re-timed that many times in all, :func:`_retime`; rows
    then carry ``repeat``, 0 for the fit with its held-out evaluations), and in a replication seed_offset (added
    to the document subsamples' fixed seeds)."""
    s = dict(settings)
    Xtr = training_docs(train_corpus, s.get("max_train_docs"), s.get("seed_offset", 0))
    Xte, dropped = heldout_docs(train_corpus, test_corpus, s.get("max_test_docs"), s.get("seed_offset", 0))
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
    repeats = int(s.get("timing_repeats") or 1)
    if repeats > 1:
        df = pd.concat([df.assign(repeat=0)] + [_retime(df, Xtr, s, r) for r in range(1, repeats)], ignore_index=True)
    return df


def _retime(df, Xtr, s, repeat) -> pd.DataFrame:
    """Timing repeat ``repeat`` of one run (``settings["timing_repeats"]`` > 1, the throughput claim's spread):
    the same fit (same seed, so the same draws for the engines whose draws do not depend on thread timing)
    re-timed back to back, without held-out evaluation. Its rows are the first fit's with this fit's cumulative
    wall and CPU times at the same iterations, and ``repeat`` set."""
    h, _, info = run_lda(Xtr, None, method=s["method"], n_topics=s["n_topics"], alpha=s.get("alpha"), beta=s["beta"],
                         n_iter=s["n_iter"], evaluate_every=s["evaluate_every"], n_threads=s["threads"], seed=s["seed"],
                         heldout_sweeps=s.get("heldout_sweeps", 20))
    logger.info("timing repeat %d: fit %.3fs", repeat, info["fit_time_s"])
    clocks = h[["iteration", "wall_time", "cpu_time"]]
    return df.drop(columns=["wall_time", "cpu_time"]).merge(clocks, on="iteration").assign(repeat=repeat)


# ---------------------------------------------------------------------------- TabU3


def run_topics(corpus, settings) -> pd.DataFrame:
    """TabU3: ESCA (sparse + alias, seed 0; a replication's ``settings["seed_offset"]`` added) on the whole
    train split of ``corpus``; the top ``settings["n_words"]`` words of every topic, one row per topic (corpus,
    topic, top_words). ``settings``: n_topics, alpha (None = 50 / K), beta, n_iter, threads, n_words."""
    s = settings
    tr = corpus.subset("train").counts
    _, est, _ = run_lda(tr, None, method="ESCA", n_topics=s["n_topics"], alpha=s.get("alpha"), beta=s["beta"],
                        n_iter=s["n_iter"], evaluate_every=0, n_threads=s["threads"], seed=0 + s.get("seed_offset", 0))
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


def severity_starts(X, n_components, seed, severities, subsample=5000) -> dict:
    """Fig. 3's initialisations of increasing severity s in [0, 1] for data seed ``seed``:
    means = (1 - s) * (k-means++ means) + s * (bad box means), data covariance, uniform weights.
    s = 0 is the k-means++ start EM gets (restart 0), s = 1 the bad box start of :func:`bad_init`
    (every mean within 0.5 of the data mean); both are drawn from the stream ``[seed, 1]`` as in
    the earlier two-scenario runs, so s = 0 / s = 1 are exactly the old 'good' / 'bad' starts.
    Returns {s: GMMParams}."""
    sev = [float(s) for s in severities]
    bad = [s for s in sev if not 0.0 <= s <= 1.0]
    if bad:
        raise ValueError(f"initialisation severities must lie in [0, 1] (0 = k-means++, 1 = the bad box), got {bad}")
    rng = np.random.default_rng([seed, 1])
    good = init_kmeanspp(X, n_components, rng, subsample)
    box = bad_init(X, n_components, rng, subsample)
    return {s: init_from_means(X, (1.0 - s) * good.means + s * box.means) if 0.0 < s < 1.0
            else (good if s == 0.0 else box) for s in sev}


def em_restart(X, n_components, seed, restart, subsample=5000) -> GMMParams:
    """k-means++ start number ``restart`` of data seed ``seed``: restart 0 is the start EM gets in
    Fig. 3 (= severity 0), restart r >= 1 an independent k-means++ draw (stream ``[seed, 2, r]``)."""
    if restart == 0:
        return init_kmeanspp(X, n_components, np.random.default_rng([seed, 1]), subsample)
    return init_kmeanspp(X, n_components, np.random.default_rng([seed, 2, int(restart)]), subsample)


def run_fig3_seed(*, seed, severities=(0.0, 0.5, 1.0), n_restarts=3, n_components=30, n_train=100_000,
                  n_test=1_000, n_iter=100):
    """ESCA Fig. 3 (App. A), one data seed, re-posed on a paired, absolute scale (README.md beside
    this file): on the mixture drawn from ``seed``

    * EM from ``n_restarts`` k-means++ starts (method ``EM``, ``restart`` 0..R-1; restart 0 is the
      start of the paper's EM curve): their spread is the scale of "comparable";
    * SEM from the start of every severity s (method ``SEM``; s = 0 is EM's own start, the paper's
      scenario 1; s > 0 is SEM "deliberately provided a bad initialization", scenario 2);
    * EM from the same start as SEM for every s > 0 (method ``EM_same_start``; not in the paper,
      the paired control: what that start costs EM itself).

    SEM's draws use ``seed`` at every severity (common random numbers). Tidy table: seed, method,
    severity (NaN for the restarts), restart (-1 for runs from a severity start), iteration, test_ll,
    train_ll, true_test_ll."""
    if int(n_restarts) < 2:
        raise ValueError(f"n_restarts must be >= 2 (the claim's scale is the spread between EM restarts), got {n_restarts}")
    X, Xte, true = make_gmm_data(n_components, n_train, n_test, seed=seed)
    starts = severity_starts(X, n_components, seed, severities)
    runs = [("EM", np.nan, r, starts[0.0] if (r == 0 and 0.0 in starts) else em_restart(X, n_components, seed, r))
            for r in range(int(n_restarts))]
    for s, init in starts.items():
        runs.append(("SEM", s, -1, init))
        if s > 0:
            runs.append(("EM_same_start", s, -1, init))
    rows = []
    for method, s, r, init in runs:
        _, hist = fit_em_sem(X, Xte, init, "SEM" if method == "SEM" else "EM", n_iter, seed)
        rows += [{"seed": seed, "method": method, "severity": s, "restart": r, **h} for h in hist]
    df = pd.DataFrame(rows)
    df["true_test_ll"] = gmm_loglik(Xte, true)
    return df
