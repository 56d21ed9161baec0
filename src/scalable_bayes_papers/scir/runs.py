"""Runs of the SCIR paper: config settings of one job -> tidy tables. Samplers, models and estimators are
the library's (:mod:`scalable_bayes.samplers.simplex`, :mod:`scalable_bayes.models.simplex`,
:mod:`scalable_bayes.models.lda_simplex`, :mod:`scalable_bayes.inference.dpmixture`); this module only
composes them.

* :func:`simplex_tuning` -- "optimally tuned" step sizes (Sec. 2.2): each method's h on a grid, scored by
  the KS distance [see :func:`ks_distances`] at one minibatch proportion, on a seed of its own.
* :func:`simplex_runs` -- Figs. 1 and 2: SCIR, SGRLD and the exact sampler on one target for one seed,
  at every minibatch proportion; KS distances and the Fig. 1 component's samples.
* :func:`lda_runs` -- Fig. 3a and SFigA: one method (SCIR, SGRLD or collapsed Gibbs) on the Wikipedia
  documents for one seed; held-out perplexity by document completion every few iterations.
* :func:`dp_runs` -- Fig. 3b and SFigB: one method (SCIR, SGRLD or the exact Gibbs slice sampler) for the
  DP mixture of multinomials on the Microsoft web data for one seed; test log-predictive and clusters.
"""

from __future__ import annotations

import logging
import math
import time

import numpy as np
import pandas as pd

from scalable_bayes import models, samplers
from scalable_bayes.evaluation.heldout import heldout_loglik
from scalable_bayes.inference.dpmixture import DPMultinomialMixture
from scalable_bayes.inference.lda import CollapsedGibbs
from scalable_bayes.manifolds import dirichlet
from scalable_bayes.models.lda_simplex import SimplexLDA
from scalable_bayes.rng import make_key
from scalable_bayes.utils import numba_threads

from . import data

logger = logging.getLogger(__name__)

SIMPLEX_METHODS = ("SCIR", "SGRLD")
_SAMPLER = {"SCIR": samplers.scir, "SGRLD": samplers.sgrld}


def ks_distances(omega: np.ndarray, counts, alpha) -> np.ndarray:
    """Kolmogorov-Smirnov distance of each component's draws to its exact marginal (SCIR Fig. 2; the
    supplement with the paper's definition is not available): d_j = sup_x |F^_j(x) - F_j(x)|, F_j the
    Beta(alpha_j + n_j, sum(alpha + n) - alpha_j - n_j) CDF of the Dirichlet posterior."""
    marg = models.dirichlet_marginal(counts, alpha)
    import scipy.stats as st  # here, not at import (~0.7 s): only the simplex runs use it

    return np.array([st.kstest(omega[:, j], marg[j].cdf).statistic for j in range(omega.shape[1])])


def _chain(method, counts, alpha, h, batch, seed, chain, n_iter, burnin):
    m = models.dirichlet_categorical(counts, alpha)
    t0 = time.perf_counter()
    res = samplers.run_chain(_SAMPLER[method](), m, np.ones(len(counts)), seed=seed, chain=chain,
                             n_steps=burnin + n_iter, burnin=burnin, step_size=h, batch_size=batch, progress=False)
    wall = time.perf_counter() - t0
    return res.samples, wall  # omega: the driver returns the normalised gammas (GammaSimplex.sample_points)


def exact_draws(counts, alpha, n: int, seed: int) -> np.ndarray:
    """``n`` exact Dirichlet(alpha + counts) draws (the "Exact" sampler of Figs. 1-2)."""
    post = np.asarray(counts, dtype=np.float64) + alpha
    key = make_key(seed, 0xE)
    out = np.empty((n, len(post)))
    for i in range(n):
        dirichlet(key, post, out[i])
    return out


def simplex_tuning(target: str, settings: dict) -> pd.DataFrame:
    """KS distance (mean over components) of each method at each grid step size, at the tuning proportion.

    settings: the ``scir.simplex`` block (alpha, n_iter, burnin, tune: {step_sizes, seed, proportion}).
    """
    counts = data.target_counts(target)
    tune = settings["tune"]
    b = data.batch_size(tune["proportion"], int(counts.sum()))
    rows = []
    for method in SIMPLEX_METHODS:
        for i, h in enumerate(tune["step_sizes"]):
            om, wall = _chain(method, counts, settings["alpha"], float(h), b, int(tune["seed"]), i,
                              settings["n_iter"], settings["burnin"])
            ks = ks_distances(om, counts, settings["alpha"])
            rows.append({"target": target, "method": method, "step_size": float(h), "batch_size": b,
                         "ks_mean": float(ks.mean()), "ks_max": float(ks.max()), "wall_s": wall})
            logger.info("tuning %s %s h=%g: KS %.4f", target, method, h, ks.mean())
    return pd.DataFrame(rows)


def tuned_step_sizes(tuning: pd.DataFrame) -> dict:
    """method -> the grid step size with the smallest mean KS distance."""
    best = tuning.loc[tuning.groupby("method")["ks_mean"].idxmin()]
    return dict(zip(best["method"], best["step_size"].astype(float)))


def simplex_runs(target: str, seed: int, settings: dict, tuning: pd.DataFrame):
    """Figs. 1-2 for one target and seed -> (ks table, samples table).

    ks: one row per method (SCIR, SGRLD, Exact) x minibatch proportion with the mean and max KS distance
    over components and the Fig. 1 component's; samples: the Fig. 1 component's draws of every method at
    the Fig. 1 minibatch size (``fig1_batch``).
    """
    counts = data.target_counts(target)
    n = int(counts.sum())
    alpha = settings["alpha"]
    h = tuned_step_sizes(tuning)
    comp = data.FIG1_COMPONENT
    rows, samples = [], []
    ex = exact_draws(counts, alpha, settings["n_iter"], seed)
    ks = ks_distances(ex, counts, alpha)
    rows.append({"target": target, "seed": seed, "method": "Exact", "proportion": np.nan, "batch_size": n,
                 "step_size": np.nan, "ks_mean": ks.mean(), "ks_max": ks.max(), "ks_fig1": ks[comp], "wall_s": 0.0})
    samples.append(pd.DataFrame({"target": target, "seed": seed, "method": "Exact", "omega": ex[:, comp]}))
    props = list(settings["proportions"])
    sizes = [data.batch_size(p, n) for p in props]
    fig1_b = int(settings["fig1_batch"])
    for method in SIMPLEX_METHODS:
        for i, (p, b) in enumerate(zip(props, sizes)):
            om, wall = _chain(method, counts, alpha, h[method], b, seed, i, settings["n_iter"], settings["burnin"])
            ks = ks_distances(om, counts, alpha)
            rows.append({"target": target, "seed": seed, "method": method, "proportion": float(p), "batch_size": b,
                         "step_size": h[method], "ks_mean": ks.mean(), "ks_max": ks.max(), "ks_fig1": ks[comp],
                         "wall_s": wall})
        om, _ = _chain(method, counts, alpha, h[method], fig1_b, seed, len(props), settings["n_iter"],
                       settings["burnin"])
        samples.append(pd.DataFrame({"target": target, "seed": seed, "method": method, "omega": om[:, comp]}))
        logger.info("%s seed %d %s (h=%g): KS %s", target, seed, method, h[method],
                    np.round([r["ks_mean"] for r in rows if r["method"] == method], 3))
    return pd.DataFrame(rows), pd.concat(samples, ignore_index=True)


# ------------------------------------------------------------------ Fig. 3a / SFigA: LDA (Sec. 4.1)
LDA_METHODS = ("SCIR", "SGRLD", "CGS")


def lda_runs(method: str, seed: int, settings: dict, corpus) -> pd.DataFrame:
    """One LDA run -> trace (iteration, documents seen, sampler wall time, held-out perplexity).

    settings: the ``scir.lda`` block: max_train_docs, max_test_docs, n_topics, alpha, beta, batch_size,
    n_iter, evaluate_every, sweeps, burn, heldout_sweeps, threads, step: {SCIR: {h, tau, kappa}, SGRLD: {...}},
    cgs_iter, cgs_evaluate_every (the keys of the other methods may be absent). Perplexity = exp(-held-out per-word log-likelihood) by document completion
    (:func:`scalable_bayes.evaluation.heldout.heldout_loglik`, the same protocol for every method), scored on
    the current sample's topics (CGS: its current counts).
    """
    if method not in LDA_METHODS:
        raise ValueError(f"unknown LDA method {method!r}; choose one of {LDA_METHODS}")
    train, test = data.split_corpus(corpus, settings["max_train_docs"], settings["max_test_docs"])
    K, alpha, beta = int(settings["n_topics"]), float(settings["alpha"]), float(settings["beta"])
    hs = int(settings["heldout_sweeps"])
    rows = []
    if method == "CGS":
        est = CollapsedGibbs(n_components=K, doc_topic_prior=alpha, topic_word_prior=beta,
                             max_iter=int(settings["cgs_iter"]), n_jobs=int(settings.get("threads", 1)), random_state=seed,
                             evaluate_every=int(settings["cgs_evaluate_every"]),
                             heldout_sweeps=hs)
        est.fit(train, X_heldout=test)
        for r in est.history_:
            rows.append({"iteration": r["iteration"], "docs_seen": r["iteration"] * train.shape[0],
                         "wall_s": r["wall_time"], "heldout_ll": r["heldout_ll"]})
    else:
        lda = SimplexLDA(train, K, alpha=alpha, beta=beta, sweeps=int(settings["sweeps"]), burn=int(settings["burn"]))
        st_ = settings["step"][method]
        theta0 = lda.init_position(seed)
        n_iter, every, b = int(settings["n_iter"]), int(settings["evaluate_every"]), int(settings["batch_size"])

        def score(theta):
            return heldout_loglik(lda.topics(theta), test, alpha, n_sweeps=hs, seed=seed)

        rows.append({"iteration": 0, "docs_seen": 0, "wall_s": 0.0, "heldout_ll": score(theta0)})
        with numba_threads(int(settings.get("threads", 1))):
            res = samplers.run_chain(_SAMPLER[method](), lda.model(), theta0, seed=seed, n_steps=n_iter,
                                     burnin=n_iter - 1, step_size=float(st_["h"]), batch_size=b,
                                     step_decay=(float(st_["tau"]), float(st_["kappa"])), checkpoint_every=every,
                                     callback=lambda t, state: score(state.position), progress=False)
        for (t, ll), wall in zip(res.callback_values, res.checkpoint_wall):
            rows.append({"iteration": int(t), "docs_seen": int(t) * b, "wall_s": float(wall), "heldout_ll": ll})
            if t % (10 * every) == 0 or t == n_iter:
                logger.info("LDA %s seed %d: iteration %d, perplexity %.1f", method, seed, t, math.exp(-ll))
    df = pd.DataFrame(rows)
    df.insert(0, "seed", seed)
    df.insert(0, "method", method)
    df["perplexity"] = np.exp(-df["heldout_ll"])
    df["n_train_docs"], df["n_test_docs"], df["n_words"] = train.shape[0], test.shape[0], train.shape[1]
    return df


# ------------------------------------------------------------------ Fig. 3b / SFigB: DP mixture (Sec. 4.2)
DP_METHODS = ("SCIR", "SGRLD", "Gibbs")


def dp_runs(method: str, seed: int, settings: dict, corpus) -> pd.DataFrame:
    """One DP-mixture run -> trace (iteration, sampler wall time, test log-predictive, occupied clusters, alpha).

    settings: the ``scir.dp`` block: max_train_users, max_test_users, base_concentration, alpha, alpha_prior,
    evaluate_every, max_clusters, init_clusters; for the SG methods batch_size, n_iter and step: {method: h};
    for Gibbs gibbs_iter (sweeps of all users).
    """
    if method not in DP_METHODS:
        raise ValueError(f"unknown DP-mixture method {method!r}; choose one of {DP_METHODS}")
    train, test = data.split_corpus(corpus, settings["max_train_users"], settings["max_test_users"])
    sg = method != "Gibbs"
    kw = dict(batch_size=int(settings["batch_size"]), step_size=float(settings["step"][method]),
              max_iter=int(settings["n_iter"])) if sg else dict(max_iter=int(settings["gibbs_iter"]))
    est = DPMultinomialMixture(
        method=method.lower(), base_concentration=float(settings["base_concentration"]), alpha=float(settings["alpha"]),
        alpha_prior=(float(settings["alpha_prior"]["shape"]), float(settings["alpha_prior"]["rate"])), max_clusters=int(settings["max_clusters"]),
        init_clusters=int(settings["init_clusters"]), random_state=seed, n_jobs=1, **kw)
    est.fit(train, X_test=test, evaluate_every=int(settings["evaluate_every"]))
    df = pd.DataFrame(est.trace_).rename(columns={"time": "wall_s", "cpu_time": "cpu_s"})
    df.insert(0, "seed", seed)
    df.insert(0, "method", method)
    df["n_train_users"], df["n_test_users"] = train.shape[0], test.shape[0]
    logger.info("DP %s seed %d: final log-predictive %.4f, %d clusters", method, seed, df["log_predictive"].iloc[-1],
                df["n_clusters"].iloc[-1])
    return df
