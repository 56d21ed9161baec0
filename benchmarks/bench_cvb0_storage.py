"""CVB0's gamma storage (half precision vs float32) on the Wikipedia stand-in's train split.

    # quality and CPU time, both storages in one process on the same documents, seeds interleaved:
    .venv/bin/python benchmarks/bench_cvb0_storage.py quality data/processed/wikipedia \
        --topics 100 --train-docs 2000 --test-docs 500 --iters 30 --seeds 0 1 2 3
    # peak memory of one fit on the whole training split (Fig. 2's, paper profile):
    /usr/bin/time -v .venv/bin/python benchmarks/bench_cvb0_storage.py peak data/processed/wikipedia \
        --topics 500 --iters 1 --test-docs 2000        # "Maximum resident set size"

Documents: the ESCA runs' own choices (``scalable_bayes_papers.esca.data``: training subsample and
held-out documents with their fixed seeds). Results: benchmarks/README_lda.md.
"""

from __future__ import annotations

import argparse
import json

import pandas as pd

from scalable_bayes.corpora.store import load_corpus
from scalable_bayes.inference.lda import CVB0
from scalable_bayes_papers.esca.data import heldout_docs, training_docs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["quality", "peak"])
    ap.add_argument("corpus")
    ap.add_argument("--topics", type=int, default=100)
    ap.add_argument("--train-docs", type=int, default=None, help="training subsample (default: whole split)")
    ap.add_argument("--test-docs", type=int, default=500)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--gamma-dtype", default="float16", help="peak mode: the storage to measure")
    a = ap.parse_args()
    c = load_corpus(a.corpus)
    Xtr = training_docs(c, a.train_docs)
    Xte, _ = heldout_docs(c, c, a.test_docs)
    print(f"train {Xtr.shape} nnz {Xtr.nnz} tokens {int(Xtr.sum())}; test {Xte.shape}", flush=True)
    K = a.topics
    if a.mode == "peak":
        pred = CVB0.predict_state_nbytes(Xtr.nnz, Xtr.shape[0], Xtr.shape[1], K, a.gamma_dtype)
        print(f"predicted state {pred / 2**30:.3f} GiB", flush=True)
        m = CVB0(n_components=K, max_iter=a.iters, random_state=a.seeds[0], gamma_dtype=a.gamma_dtype, evaluate_every=a.iters,
                 n_jobs=1).fit(Xtr, X_heldout=Xte)
        print(f"state {m.state_nbytes() / 2**30:.3f} GiB; history {m.history_}", flush=True)
        return
    for dt in ("float16", "float32"):  # compile / load the kernels outside the measurement
        CVB0(n_components=K, max_iter=1, gamma_dtype=dt).fit(Xtr[:20])
    rows = []
    for seed in a.seeds:
        for dt in ("float16", "float32"):  # interleaved: both storages see the same machine load
            m = CVB0(n_components=K, max_iter=a.iters, random_state=seed, gamma_dtype=dt, evaluate_every=a.iters,
                     n_jobs=1).fit(Xtr, X_heldout=Xte)
            h = m.history_[-1]
            rows.append(dict(seed=seed, dtype=dt, ll=h["heldout_ll"], cpu=h["cpu_time"], wall=h["wall_time"]))
            print(json.dumps(rows[-1]), flush=True)
    df = pd.DataFrame(rows)
    ll = df.pivot(index="seed", columns="dtype", values="ll")
    cpu = df.pivot(index="seed", columns="dtype", values="cpu")
    print(ll)
    d = ll.float16 - ll.float32
    print(f"held-out LL half - float32: mean {d.mean():.5f} sd {d.std():.5f}; seed-to-seed sd float32 "
          f"{ll.float32.std():.5f}, half {ll.float16.std():.5f}")
    print("CPU time half / float32 per seed:", (cpu.float16 / cpu.float32).round(2).tolist())


if __name__ == "__main__":
    main()
