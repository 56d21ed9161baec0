"""Runs of the SCIR paper: config settings of one job -> tidy tables. Samplers, models and estimators are
the library's (:mod:`scalable_bayes.samplers.simplex`, :mod:`scalable_bayes.models.simplex`,
:mod:`scalable_bayes.models.lda_simplex`, :mod:`scalable_bayes.inference.dpmixture`); this module only
composes them.

* :func:`simplex_tuning` -- "optimally tuned" step sizes (Sec. 2.2): each method's h on a grid, scored by
  the KS distance [see :func:`ks_distances`] at one minibatch proportion, on a seed of its own.
* :func:`simplex_runs` -- Figs. 1 and 2: SCIR, SGRLD and the exact sampler on one target for one seed,
  at every minibatch proportion; KS distances and the Fig. 1 component's samples.
"""

from __future__ import annotations

import logging
import time

import numpy as np
import pandas as pd
import scipy.stats as st

from scalable_bayes import models, samplers
from scalable_bayes.manifolds import dirichlet
from scalable_bayes.rng import make_key

from . import data

logger = logging.getLogger(__name__)

SIMPLEX_METHODS = ("SCIR", "SGRLD")
_SAMPLER = {"SCIR": samplers.scir, "SGRLD": samplers.sgrld}


def ks_distances(omega: np.ndarray, counts, alpha) -> np.ndarray:
    """Kolmogorov-Smirnov distance of each component's draws to its exact marginal (SCIR Fig. 2; the
    supplement with the paper's definition is not available): d_j = sup_x |F^_j(x) - F_j(x)|, F_j the
    Beta(alpha_j + n_j, sum(alpha + n) - alpha_j - n_j) CDF of the Dirichlet posterior."""
    marg = models.dirichlet_marginal(counts, alpha)
    return np.array([st.kstest(omega[:, j], marg[j].cdf).statistic for j in range(omega.shape[1])])


def _chain(method, counts, alpha, h, batch, seed, chain, n_iter, burnin):
    m = models.dirichlet_categorical(counts, alpha)
    t0 = time.perf_counter()
    res = samplers.run_chain(_SAMPLER[method](), m, np.ones(len(counts)), seed=seed, chain=chain,
                             n_steps=burnin + n_iter, burnin=burnin, step_size=h, batch_size=batch, progress=False)
    wall = time.perf_counter() - t0
    th = res.samples
    return th / th.sum(axis=1, keepdims=True), wall


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
