"""One-off deciding experiment for the ESCA throughput claim (Sec. 4): where the time to equal quality goes.

    .venv/bin/python -m scalable_bayes_papers.esca.study_throughput --out results/esca/study_throughput.csv \
        [--seeds 0 1 2] [--threads 1 2] [--repeats 2]

The claim ESCA-Throughput compares ESCA's fit time to a target held-out LL (CGS's final - 0.05) with
tomotopy's. That time is (iterations to the target) x (time per iteration), and the two factors have
different causes: the iterations are a property of the algorithm and the seed (deterministic: ESCA's
draws do not depend on the thread count; tomotopy's on one worker neither), the time per iteration a
property of the implementation and of the machine's load. This study runs, on the throughput job's
settings (config `throughput`), per seed: CGS (the target), then ESCA and tomotopy at each thread count
``--repeats`` times in alternating order (each pair back to back), and records iterations to the
target (interpolated), CPU and wall time per iteration, and the time to the target on both clocks.
Results: README.md beside this file (Throughput).
"""

from __future__ import annotations

import argparse
import logging

import numpy as np
import pandas as pd

from scalable_bayes.corpora import load_corpus

from .runs import run_held_out_experiment
from .tables import time_to_reach

logger = logging.getLogger(__name__)

RUN = {"n_topics": 100, "alpha": 0.5, "beta": 0.1, "evaluate_every": 5, "max_train_docs": 1500, "max_test_docs": 150}
ITERS = {"CGS": 30, "tomotopy": 30, "ESCA": 60}


def _row(df, target, **kw):
    last = df[df["iteration"] == df["iteration"].max()].iloc[0]
    d = df.assign(it=df["iteration"].astype(float))
    return {**kw, "iters_to_target": time_to_reach(d.assign(c=d["it"]), target, "c"),
            "cpu_to_target_s": time_to_reach(d, target, "cpu_time"),
            "wall_to_target_s": time_to_reach(d, target, "wall_time"),
            "cpu_per_iter_s": last["cpu_time"] / last["iteration"], "wall_per_iter_s": last["wall_time"] / last["iteration"],
            "final_ll": last["heldout_ll"], "target_ll": target}


def study(corpus_dir, seeds, threads, repeats, quality_tol=0.05) -> pd.DataFrame:
    c = load_corpus(corpus_dir)
    rows = []
    for seed in seeds:
        cgs = run_held_out_experiment(c, c, {**RUN, "method": "CGS", "n_iter": ITERS["CGS"], "threads": 1, "seed": seed})
        target = float(cgs["heldout_ll"].iloc[-1]) - quality_tol
        rows.append(_row(cgs, target, seed=seed, method="CGS", threads=1, repeat=0))
        for th in threads:
            for r in range(repeats):
                order = ["ESCA", "tomotopy"] if (r + seed) % 2 == 0 else ["tomotopy", "ESCA"]
                for m in order:
                    df = run_held_out_experiment(c, c, {**RUN, "method": m, "n_iter": ITERS[m], "threads": th, "seed": seed})
                    rows.append(_row(df, target, seed=seed, method=m, threads=th, repeat=r))
                    logger.info("%s", rows[-1])
    return pd.DataFrame(rows)


def summarise(df: pd.DataFrame) -> pd.DataFrame:
    """Per thread count: medians over (seed, repeat) of iterations to the target, time per iteration
    and time to the target of ESCA and tomotopy, and the paired ratios tomotopy / ESCA."""
    out = []
    for th, g in df[df["method"] != "CGS"].groupby("threads"):
        p = g.pivot_table(index=["seed", "repeat"], columns="method",
                          values=["iters_to_target", "cpu_per_iter_s", "wall_per_iter_s", "cpu_to_target_s",
                                  "wall_to_target_s"])
        row = {"threads": th, "pairs": len(p)}
        for v in ["iters_to_target", "cpu_per_iter_s", "wall_per_iter_s", "cpu_to_target_s", "wall_to_target_s"]:
            row[f"{v}_ESCA"] = float(p[(v, "ESCA")].median())
            row[f"{v}_tomotopy"] = float(p[(v, "tomotopy")].median())
            ratio = p[(v, "tomotopy")] / p[(v, "ESCA")]
            row[f"{v}_ratio_median"] = float(ratio.median())
            row[f"{v}_ratio_min"], row[f"{v}_ratio_max"] = float(ratio.min()), float(ratio.max())
        out.append(row)
    return pd.DataFrame(out)


def main(argv=None):
    """Command line; ``--summarise`` only summarises the table already at ``--out``."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--corpus", default="data/processed/wikipedia")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--summarise", action="store_true")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    df = pd.read_csv(a.out) if a.summarise else study(a.corpus, a.seeds, a.threads, a.repeats)
    if not a.summarise:
        df.to_csv(a.out, index=False)
    s = summarise(df)
    s.to_csv(a.out.replace(".csv", "_summary.csv"), index=False)
    with pd.option_context("display.width", 250):
        logger.info("summary (also in %s):\n%s", a.out.replace(".csv", "_summary.csv"), s.T.round(3).to_string())


if __name__ == "__main__":
    main()
