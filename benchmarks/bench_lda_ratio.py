"""Repeated, interleaved speed ratios of ESCA against tomotopy (tokens per second, same run).

    .venv/bin/python benchmarks/bench_lda_ratio.py --peer-python /tmp/peer_venv/bin/python \
        [--corpus data/processed/wikipedia | --full-vocab] [--topics 100] [--threads 1 2] [--repeats 5] [--iters 50]

One run of ``bench_lda.py`` times each engine once; on this shared 2-core VM one timing moves by
+-20% (2-thread timings more: the second vCPU is not always ours). This script repeats the pair
(ESCA, tomotopy) ``--repeats`` times at each thread count, alternating the order, each fit in its own
process (``bench_lda.run_worker``: same corpus, priors, seed and iteration count as bench_lda.py),
and reports per-engine median/min/max tokens/s and the median of the paired ratios
ESCA/tomotopy (pair r = the two fits of repeat r, run back to back). Speed only: held-out quality
and memory are bench_lda.py's job.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_lda  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    bench_lda.add_corpus_args(p)
    p.add_argument("--peer-python", default="/tmp/peer_venv/bin/python")
    p.add_argument("--topics", type=int, nargs="+", default=[100])
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--alpha", type=float, default=0.5)
    p.add_argument("--beta", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="results/esca/bench_ratio")
    args = p.parse_args(argv)

    import pandas as pd

    from scalable_bayes.utils import save_table

    out = Path(args.out)
    train, _, cname = bench_lda.select_corpus(args, out)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        ours = [f"ESCA:{t}" for t in args.threads]
        bench_lda._warm_kernel_cache(argparse.Namespace(topics=args.topics, engines=ours, big_k_engines=ours,
                                                        alpha=args.alpha, beta=args.beta, seed=args.seed), train, tmp)
        for K in args.topics:
            for nt in args.threads:
                for r in range(args.repeats):
                    order = ["ESCA", "tomotopy"] if r % 2 == 0 else ["tomotopy", "ESCA"]
                    for engine in order:
                        python = args.peer_python if engine == "tomotopy" else sys.executable
                        d = Path(tmp) / f"{engine}_{K}_{nt}_{r}"
                        d.mkdir()
                        res = bench_lda.run_worker(python, engine, nt, train, K, args.iters, args.iters, args.alpha,
                                                   args.beta, args.seed, d)
                        if res is None:
                            raise SystemExit(f"{engine} failed")
                        info, _snaps, times, iters = res
                        t = float(times[-1] - (times[0] if iters[0] == 0 else 0.0))
                        n_it = int(iters[-1] - (iters[0] if iters[0] == 0 else 0))
                        tps = info["n_tokens"] * n_it / t
                        rows.append({"corpus": cname, "K": K, "threads": nt, "repeat": r, "engine": engine,
                                     "tokens_per_s": tps, "loadavg_1min": os.getloadavg()[0]})
                        print(f"[ratio] {cname} K={K} t{nt} rep {r} {engine}: {tps / 1e6:.2f}M tok/s", flush=True)
    df = pd.DataFrame(rows)
    piv = df.pivot_table(index=["corpus", "K", "threads", "repeat"], columns="engine", values="tokens_per_s")
    piv["ratio"] = piv["ESCA"] / piv["tomotopy"]
    summ = piv.groupby(["corpus", "K", "threads"]).agg(
        esca_median=("ESCA", "median"), esca_min=("ESCA", "min"), esca_max=("ESCA", "max"),
        tomotopy_median=("tomotopy", "median"), tomotopy_min=("tomotopy", "min"), tomotopy_max=("tomotopy", "max"),
        ratio_median=("ratio", "median"), ratio_min=("ratio", "min"), ratio_max=("ratio", "max"),
        repeats=("ratio", "size")).reset_index()
    for c in [c for c in summ.columns if c.startswith(("esca_", "tomotopy_"))]:
        summ[c] = summ[c] / 1e6  # M tokens/s
    save_table(df, out / "ratio_runs.csv")
    save_table(summ, out / "ratio.csv")
    save_table(summ, out / "ratio.md")
    print(summ.round(3).to_string(index=False))
    print(f"median paired ratio ESCA/tomotopy: {np.round(summ['ratio_median'].to_numpy(), 3)}")


if __name__ == "__main__":
    main()
