"""One-off study for VMF-Fig3: is the Bregman-vs-movMF disagreement in low dimension caused by the
closed forms' error? The mean path is run with the paper's closed forms (psi~_1, psi~'_2) and, as controls,
with the exact Psi (root finding + log-Bessel: the same model as movMF, so any disagreement left is EM
path noise from the two root finders) and with Banerjee's approximation (larger error). Prints one JSON
line per (data set, Psi) with the worst cell and the number of cells over the VMF-Fig3 tolerances.

    .venv/bin/python -m scalable_bayes_papers.vmf.study --corpus data/processed/classic3 --dims 3 10 \
        --seeds 0 1 --max-iter 30

Results and the reading of them: README.md beside this file ("What VMF-Fig3 can fail on").

With ``--tab1-spread RAW_DIR`` it instead builds Table 1's subsampled corpora (classic300, news20-small) for
data seeds 0-9 from the raw data in ``RAW_DIR`` and prints each one's document and term counts with their sd
over the seeds: the spread :data:`claims.TAB1_SUBSAMPLE_SD` records (README.md, "Table 1").
"""

from __future__ import annotations

import argparse
import json
import logging

import numpy as np
import pandas as pd

from scalable_bayes.corpora import load_corpus

from . import claims, runs

logger = logging.getLogger(__name__)


def lowdim_study(X, y, name, k_grid, seeds, max_iter, controls=("exact", "banerjee")):
    """Table of run_fig3 rows (refined mean path + one control run per Psi in ``controls``) over seeds."""
    frames = []
    for i, c in enumerate(controls):
        for seed in seeds:
            df = runs.run_fig3(X, y, name, k_grid, seed, max_iter=max_iter, spkmeans=False, control_negentropy=c)
            if i > 0:  # the refined and natural fits are the same in every control run: keep them once per seed
                df = df[df.parametrization == f"mean_{c}"]
            frames.append(df)
    return pd.concat(frames, ignore_index=True)


def summarise(df, tol=0.02, dis_tol=0.02, ll_tol=0.01):
    """Per Psi: worst cell and cells over tolerance, as in :func:`claims.check_fig3`."""
    out = []
    checks = {"nmi_diff": tol, "label_disagreement": dis_tol, "ll_diff": ll_tol}
    for p in sorted(x for x in df.parametrization.unique() if str(x).startswith("mean")):
        st = claims._fig3_pair_stats(df, p)
        out.append({"dataset": str(df.dataset.iloc[0]), "psi": p, "n_cells": int(len(st)),
                    "worst": {k: float(st[k].max()) for k in checks},
                    "median": {k: float(st[k].median()) for k in checks},
                    "cells_over_tolerance": {k: int((st[k] > v).sum()) for k, v in checks.items()}})
    return out


def tab1_subsample_spread(raw_dir, seeds=range(10)):
    """Document and term counts of classic300 and news20-small built with each data seed (default settings).

    Parameters
    ----------
    raw_dir : path
        Folder holding the verified raw sources ``classic3`` and ``20news_bydate`` (``data/raw``).
    seeds : iterable of int
        Data seeds (the corpora's ``seed`` setting: which 100 documents per class are drawn).

    Returns
    -------
    pd.DataFrame
        One row per (data set, seed): ``n_docs``, ``n_terms``.
    """
    from pathlib import Path

    from scalable_bayes.corpora import build

    raw = {k: Path(raw_dir) / k for k in ("classic3", "20news_bydate")}
    rows = []
    for name, fn in (("classic300", build.build_classic300), ("news20_small", build.build_news20_small)):
        for seed in seeds:
            X = fn(raw, {"seed": int(seed)}).counts
            rows.append({"dataset": name, "seed": int(seed), "n_docs": int(X.shape[0]), "n_terms": int(X.shape[1])})
    return pd.DataFrame(rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="data/processed/classic3")
    ap.add_argument("--dims", type=int, nargs="+", default=[3])
    ap.add_argument("--k-grid", type=int, nargs="+", default=list(range(2, 12)))
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--max-iter", type=int, default=30)
    ap.add_argument("--tab1-spread", metavar="RAW_DIR", default=None,
                    help="print Table 1's subsample counts over data seeds 0-9 instead (RAW_DIR: data/raw)")
    a = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if a.tab1_spread:
        t = tab1_subsample_spread(a.tab1_spread)
        logger.info("%s", t.to_string(index=False))
        logger.info("%s", t.groupby("dataset")[["n_docs", "n_terms"]].agg(["mean", "std"]).to_string())
        return
    for name in ("scalable_bayes", "scalable_bayes_papers"):  # the runs' own progress stays quiet, as before
        logging.getLogger(name).setLevel(logging.WARNING)
    logger.setLevel(logging.INFO)
    corpus = load_corpus(a.corpus)
    for dim in a.dims:
        Z, keep = runs.lowdim_projection(corpus.tfidf, dim)
        df = lowdim_study(Z, np.asarray(corpus.labels)[keep], f"{corpus.meta.get('name', 'corpus')}_svd{dim}",
                          a.k_grid, a.seeds, a.max_iter)
        for row in summarise(df):
            logger.info("%s", json.dumps(row))


if __name__ == "__main__":
    main()
