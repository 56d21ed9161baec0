"""BNN epoch time, BPMF and LDA iteration time of reformulated SGHMC / SGNHT.

BNN: 784-100-10 on n_train MNIST images (the mirror's t10k file), minibatch 20; one epoch = n_train/20 steps.
BPMF: rank 10 on ml-100k (80% train), minibatch 400 ratings.
LDA: semi-collapsed, K = 30, on the SGNHT quick profile's KOS stand-in (1,000 training documents of the
processed corpus ``--kos-dir``, built by the pipeline; skipped when absent), minibatch 100 documents,
10 within-document Gibbs sweeps per gradient.
BLAS is limited to one thread (as in the pipeline). Each timing is the median of --repeats runs.

Usage: .venv/bin/python benchmarks/bench_sgmcmc_models.py [--mirror ../shared/data] [--out results/benchmarks]
"""

from __future__ import annotations

import argparse
import os
import tarfile
import tempfile
import time

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from scalable_bayes import samplers
from scalable_bayes.corpora import readers
from scalable_bayes.corpora import load_corpus
from scalable_bayes.models import bnn, bpmf, lda
from scalable_bayes.utils import save_table
from scalable_bayes_papers.sgnht.data import split_lda_corpus, split_mnist, split_ratings  # the SGNHT paper's stand-in splits


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirror", default=os.environ.get("SCALABLE_BAYES_MIRROR", "../shared/data"))
    ap.add_argument("--out", default="results/benchmarks")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n-train", type=int, default=6000)
    ap.add_argument("--bpmf-iters", type=int, default=1000)
    ap.add_argument("--lda-iters", type=int, default=200)
    ap.add_argument("--kos-dir", default="data/processed/kos")
    args = ap.parse_args(argv)
    rows = []
    im = readers.read_idx(os.path.join(args.mirror, "mnist", "t10k-images-idx3-ubyte.gz"))
    lb = readers.read_idx(os.path.join(args.mirror, "mnist", "t10k-labels-idx1-ubyte.gz"))
    (Xtr, ytr), _, _ = split_mnist(im, lb, args.n_train, 1000)
    ratings = None
    tgz = os.path.join(args.mirror, "movielens", "ml-100k.tar.gz")
    if os.path.exists(tgz):
        with tempfile.TemporaryDirectory() as tmp:
            with tarfile.open(tgz) as tf:
                tf.extractall(tmp, filter="data")
            ratings = readers.read_movielens_100k(tmp)
    if ratings is not None:
        tr, _, _ = split_ratings(ratings)
        nu, ni = int(ratings["user"].max()) + 1, int(ratings["item"].max()) + 1
    lda_train = None
    if os.path.isdir(args.kos_dir):
        lda_train = split_lda_corpus(load_corpus(args.kos_dir), 1000, 200)[0]
    def timed(name, alg, label, unit, make, steps, step_size, batch_size, per):
        """Time ``repeats`` chains of ``steps`` steps of sampler ``alg`` on ``make(repeat)``; record per ``per`` steps."""
        for r in range(args.repeats):
            m = make(r)
            t = time.perf_counter()
            res = samplers.run_chain(alg, m.model(), m.init_position(r), seed=r, n_steps=steps, step_size=step_size,
                                     batch_size=batch_size, burnin=steps - 1, progress=False)
            el = time.perf_counter() - t
            rows.append({"model": label, "sampler": name, "unit": unit, "repeat": r, "seconds": el * per / steps,
                         "sampler_seconds": res.wall_time * per / steps, "steps": steps})

    with threadpool_limits(1, "blas"):
        for name, alg in [("SGHMC", samplers.sghmc_reformulated(a=0.01)), ("SGNHT", samplers.sgnht_reformulated(a=0.01))]:
            steps = args.n_train // 20
            timed(name, alg, "BNN", "epoch", lambda r: bnn.BNN(Xtr, ytr, hidden=100, seed=r), steps, 2e-7, 20, steps)
            if ratings is not None:
                timed(name, alg, "BPMF", "iteration",
                      lambda r: bpmf.BPMF(tr["user"].values, tr["item"].values, tr["rating"].values, nu, ni, rank=10,
                                          seed=r), args.bpmf_iters, 2e-7, 400, 1)
            if lda_train is not None:
                timed(name, alg, "LDA", "iteration", lambda r: lda.SemiCollapsedLDA(lda_train, n_topics=30, sweeps=10),
                      args.lda_iters, 2e-5, 100, 1)
    df = pd.DataFrame(rows)
    summ = df.groupby(["model", "sampler", "unit"])["seconds"].median().reset_index(name="median_seconds")
    os.makedirs(args.out, exist_ok=True)
    save_table(df, os.path.join(args.out, "bench_sgmcmc_models_raw.csv"))
    save_table(summ, os.path.join(args.out, "bench_sgmcmc_models.md"))
    save_table(summ, os.path.join(args.out, "bench_sgmcmc_models.csv"))
    print(summ.to_string(index=False))


if __name__ == "__main__":
    main()
