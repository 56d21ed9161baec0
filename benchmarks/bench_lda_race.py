"""Time to quality: which LDA engine reaches a good model first (ESCA, CGS, CVB0 against tomotopy).

    .venv/bin/python benchmarks/bench_lda_race.py --out results/esca/race --topics 100 1000 --threads 1 2
    .venv/bin/python benchmarks/bench_lda_race.py --corpus data/processed/wikipedia --out results/esca/race_wiki

Tokens per second compare equal numbers of iterations, not equal quality: an engine that needs more
iterations to a given held-out likelihood can be faster per token and still slower to a good model.
This race measures the time to a common quality target.

Protocol, per cell (corpus, K, threads) and repeat r (all engines use seed r; the repeats are paired):

- tomotopy (its ``LDAModel``, hyper-parameter optimisation off; through
  ``scalable_bayes_papers.esca.peers.TomotopyLDA``) runs ``--target-iter`` iterations (150) in every
  repeat first; the cell's TARGET is its median held-out LL after them minus ``--tolerance``
  (0.03 nats/word; one seed's value moves by about 0.02 between seeds, too much for a per-repeat target);
  ``--reuse-reference DIR`` reuses the reference runs an earlier race with the same settings stored in
  its ``--out`` directory DIR (their times were measured at the loads they record);
- ESCA (the paper's uniform start, eq. 19), ESCA_prior (``ESCA(init="prior")``: the start drawn
  from LDA's prior), CollapsedGibbs (with ``n_partitions`` = the thread count: the sequential sweep
  on one thread, the partitioned sweep on P x P blocks on P threads) and CVB0 of this package then
  run, in an order rotated with r, until their held-out LL reaches the target (or ``--max-iter``);
- every engine is scored every ``--every`` iterations by ONE protocol (document completion,
  :func:`scalable_bayes.evaluation.heldout.heldout_loglik`, 20 fold-in sweeps, the first
  ``--test-docs`` test documents with 2+ tokens), outside its timed fit;
- the time to the target is interpolated linearly between the two evaluations around the crossing,
  on the process CPU time for one thread (the fit's own work, whatever else the machine runs) and on
  the wall time for two (its CPU time adds up the threads); initialisation is included, compilation
  and loading compiled kernels are not (the estimators' clocks leave them out, ``compile_time_``).

Reported (``race.md``): per cell and engine the median (min-max) over repeats of the time to the
target, the iterations to it and the time per iteration; the paired ratio tomotopy time / engine time
(> 1: faster than tomotopy); tomotopy's held-out LL at the moment the engine reached the target
(quality at equal time: how far tomotopy had got in the same time); the 1-minute load average before
and after each fit. Priors: alpha = 50/K (the paper's; 0.5 at K = 100), beta = 0.1. Raw curves:
``curves.csv``; one row per fit: ``race_runs.csv``.

Corpus options as in bench_lda.py (default: 20 Newsgroups bydate from the mirror, filtered
vocabulary; ``--corpus data/processed/<name>`` for a processed corpus's train/test split).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_lda  # noqa: E402

ENGINES = ("ESCA", "ESCA_prior", "CGS", "CVB0")  # raced against tomotopy; ESCA_prior: ESCA(init="prior")


def time_to_target(curve, target: float, clock: str) -> tuple[float, float]:
    """(time, iterations) at which ``curve`` (records with ``iteration``, ``heldout_ll`` and the clock)
    first reaches ``target``, both interpolated between evaluations by the throughput claim's own
    :func:`scalable_bayes_papers.esca.tables.time_to_reach`; (inf, inf) if never reached."""
    import pandas as pd

    from scalable_bayes_papers.esca.tables import time_to_reach

    c = pd.DataFrame(curve)
    c["_it"] = c["iteration"].astype(float)
    return time_to_reach(c, target, clock), time_to_reach(c, target, "_it")


def ll_at(curve, when: float, clock: str) -> float:
    """Held-out LL of ``curve`` at time ``when`` (linear between evaluations); nan outside the curve."""
    t = np.array([r[clock] for r in curve], float)
    ll = np.array([r["heldout_ll"] for r in curve], float)
    if not len(t) or when < t[0] or when > t[-1]:
        return float("nan")
    return float(np.interp(when, t, ll))


def make_engine(name, K, threads, seed, alpha, beta, max_iter, every, sweeps, callbacks=()):
    from scalable_bayes.inference.lda import CVB0, ESCA, CollapsedGibbs

    kw = dict(n_components=K, doc_topic_prior=alpha, topic_word_prior=beta, max_iter=max_iter, n_jobs=threads,
              random_state=seed, evaluate_every=every, heldout_sweeps=sweeps)
    if name == "tomotopy":
        from scalable_bayes_papers.esca.peers import TomotopyLDA

        return TomotopyLDA(**kw)
    if name == "ESCA_prior":
        kw["init"] = "prior"
    if name == "CGS":
        kw["n_partitions"] = threads  # the sequential sweep on one thread, P x P blocks on P threads
    cls = {"ESCA": ESCA, "ESCA_prior": ESCA, "CGS": CollapsedGibbs, "CVB0": CVB0}[name]
    return cls(**kw, callbacks=list(callbacks))


def run_fit(name, X, Xte, K, threads, seed, args, max_iter, target=None):
    """One timed fit; returns its history (list of records) and the load averages around it."""
    # our engines stop once their held-out LL reaches the target (a callback that returns True)
    callbacks = [] if target is None else [lambda est, rec: rec.get("heldout_ll", -np.inf) >= target]
    est = make_engine(name, K, threads, seed, args.alpha, args.beta, max_iter, args.every, args.sweeps, callbacks)
    load0 = os.getloadavg()[0]
    est.fit(X, X_heldout=Xte)
    return [dict(r) for r in est.history_], load0, os.getloadavg()[0]


def reference_settings(cname, X, Xte, K, nt, args) -> dict:
    """What a cell's tomotopy reference runs depend on (a stored reference is reused only when all agree)."""
    import tomotopy

    return {"corpus": cname, "documents": int(X.shape[0]), "tokens": int(X.sum()), "test_documents": int(Xte.shape[0]),
            "K": K, "threads": nt, "repeats": args.repeats, "target_iter": args.target_iter, "every": args.every,
            "sweeps": args.sweeps, "alpha": args.alpha, "beta": args.beta, "tomotopy": tomotopy.__version__}


def reference_runs(out: Path, cname, X, Xte, K, nt, args):
    """tomotopy's ``--target-iter`` iterations in every repeat (the cell's target and its paired times), or,
    with ``--reuse-reference DIR``, those an earlier race with the same settings stored in
    ``DIR/reference_<corpus>_K<K>_t<threads>.json`` (their times were measured at the loads they record).
    Every race stores its references in ``out``. At K = 1000 on the Wikipedia sample the reference alone
    costs about 45 CPU minutes; racing a changed engine against the same reference adds work instead of
    redoing it."""
    name = f"reference_{cname}_K{K}_t{nt}.json"
    want = reference_settings(cname, X, Xte, K, nt, args)
    if args.reuse_reference is not None:
        src = Path(args.reuse_reference) / name
        stored = json.loads(src.read_text()) if src.exists() else None
        if stored is not None and stored["settings"] == want:
            print(f"[race] {cname} K={K} t{nt}: tomotopy's reference runs from {src}", flush=True)
            tomo = [tuple(run) for run in stored["runs"]]
            if src.resolve() != (out / name).resolve():
                out.mkdir(parents=True, exist_ok=True)
                (out / name).write_text(src.read_text())
            return tomo
        print(f"[race] no reference with these settings in {src}; running it", flush=True)
    tomo = [run_fit("tomotopy", X, Xte, K, nt, r, args, args.target_iter) for r in range(args.repeats)]
    path = out / name
    out.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"settings": want, "runs": [list(run) for run in tomo]}))
    tmp.replace(path)
    return tomo


def summarise(runs):
    import pandas as pd

    df = pd.DataFrame(runs)
    tomo = df[df.engine == "tomotopy"].set_index(["corpus", "K", "threads", "repeat"])["time_to_target_s"]
    df["ratio_vs_tomotopy"] = [tomo.get((r.corpus, r.K, r.threads, r.repeat), np.nan) / r.time_to_target_s
                               for r in df.itertuples()]
    g = df.groupby(["corpus", "K", "threads", "engine"], sort=False)
    summ = g.agg(repeats=("repeat", "size"), clock=("clock", "first"),
                 time_to_target_median=("time_to_target_s", "median"), time_to_target_min=("time_to_target_s", "min"),
                 time_to_target_max=("time_to_target_s", "max"),
                 iters_to_target_median=("iters_to_target", "median"),
                 time_per_iter_median=("time_per_iter_s", "median"),
                 ratio_vs_tomotopy_median=("ratio_vs_tomotopy", "median"),
                 ratio_vs_tomotopy_min=("ratio_vs_tomotopy", "min"), ratio_vs_tomotopy_max=("ratio_vs_tomotopy", "max"),
                 tomotopy_ll_at_engine_time_median=("tomotopy_ll_at_engine_time", "median"),
                 target_median=("target", "median"),
                 load_min=("load_before", "min"), load_max=("load_after", "max")).reset_index()
    return df, summ


def add_scoring_args(p: argparse.ArgumentParser, every: int = 2):
    """The held-out protocol's options (shared with esca_schedule_probe.py): --every, --sweeps, --test-docs,
    --alpha, --beta."""
    p.add_argument("--every", type=int, default=every, help="evaluate every so many iterations")
    p.add_argument("--sweeps", type=int, default=20, help="fold-in sweeps of the held-out score")
    p.add_argument("--test-docs", type=int, default=1000)
    p.add_argument("--alpha", type=float, default=None, help="doc-topic prior (default 50/K, the paper's)")
    p.add_argument("--beta", type=float, default=0.1)


def load_split(args, out: Path):
    """(training counts, test counts, corpus name) for the corpus options, cached under ``out``: the test
    documents are the first ``--test-docs`` with 2+ tokens (document completion scores one half of each)."""
    train, test, cname = bench_lda.select_corpus(args, out)
    X = sp.load_npz(train).tocsr()
    Xte = sp.load_npz(test).tocsr()
    Xte = Xte[np.flatnonzero(np.asarray(Xte.sum(1)).ravel() >= 2)[: args.test_docs]]
    return X, Xte, cname


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    bench_lda.add_corpus_args(p)
    p.add_argument("--topics", type=int, nargs="+", default=[100, 1000])
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--engines", nargs="+", default=list(ENGINES), choices=ENGINES)
    p.add_argument("--target-iter", type=int, default=150, help="tomotopy's iterations that define the target")
    p.add_argument("--tolerance", type=float, default=0.03, help="target = tomotopy's LL - this (nats/word)")
    p.add_argument("--max-iter", type=int, default=400, help="iterations after which an engine gives up")
    add_scoring_args(p)
    p.add_argument("--out", default="results/esca/race")
    p.add_argument("--reuse-reference", metavar="DIR", default=None,
                   help="reuse tomotopy's reference runs an earlier race with the same settings stored in DIR "
                        "(its --out)")
    args = p.parse_args(argv)
    if args.every < 1 or args.target_iter < 1 or args.repeats < 1:
        raise SystemExit("--every, --target-iter and --repeats must be positive")

    import pandas as pd

    from scalable_bayes.utils import save_table

    out = Path(args.out)
    X, Xte, cname = load_split(args, out)
    print(f"[race] {cname}: {X.shape[0]} documents, V = {X.shape[1]}, {int(X.sum())} tokens; "
          f"{Xte.shape[0]} test documents", flush=True)
    runs, curves = [], []
    for K in args.topics:
        for nt in args.threads:
            clock = "cpu_time" if nt == 1 else "wall_time"
            # the cell's target: tomotopy's median held-out LL after target_iter iterations over the
            # repeats, minus the tolerance (one repeat's own value moves by ~0.02 nats/word between seeds)
            tomo = reference_runs(out, cname, X, Xte, K, nt, args)
            target = float(np.median([h[-1]["heldout_ll"] for h, _, _ in tomo])) - args.tolerance
            finals = ", ".join(f"{h[-1]['heldout_ll']:.4f}" for h, _, _ in tomo)
            print(f"[race] {cname} K={K} t{nt}: target {target:.4f} (tomotopy after {args.target_iter} iterations: "
                  f"{finals})", flush=True)
            for r in range(args.repeats):
                hist = tomo[r][0]
                fits = {"tomotopy": tomo[r]}
                order = args.engines[r % len(args.engines):] + args.engines[: r % len(args.engines)]
                for name in order:
                    fits[name] = run_fit(name, X, Xte, K, nt, r, args, args.max_iter, target)
                for name, (h, l0, l1) in fits.items():
                    t, n_it = time_to_target(h, target, clock)
                    last = h[-1]
                    runs.append({"corpus": cname, "K": K, "threads": nt, "repeat": r, "engine": name,
                                 "clock": clock, "target": target, "time_to_target_s": t, "iters_to_target": n_it,
                                 "time_per_iter_s": (last[clock] - h[0][clock]) / max(last["iteration"], 1),
                                 "iterations_run": last["iteration"], "last_ll": last["heldout_ll"],
                                 "tomotopy_ll_at_engine_time": ll_at(hist, t, clock), "load_before": l0,
                                 "load_after": l1})
                    for rec in h:
                        curves.append({"corpus": cname, "K": K, "threads": nt, "repeat": r, "engine": name,
                                       "iteration": rec["iteration"], "cpu_time": rec["cpu_time"],
                                       "wall_time": rec["wall_time"], "heldout_ll": rec["heldout_ll"]})
                    print(f"[race] {cname} K={K} t{nt} rep {r} {name}: reached at {t:.2f} s ({clock}), "
                          f"iteration {n_it:.1f}; load {l0:.1f}-{l1:.1f}", flush=True)
                df, summ = summarise(runs)  # rewritten after every repeat: a stopped run keeps what it measured
                save_table(df, out / "race_runs.csv")
                save_table(pd.DataFrame(curves), out / "curves.csv")
                save_table(summ, out / "race.csv")
                save_table(summ, out / "race.md")
    print(summ.round(4).to_string(index=False))


if __name__ == "__main__":
    main()
