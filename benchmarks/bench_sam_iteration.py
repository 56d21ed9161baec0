"""CPU and wall milliseconds per SGGMC / gSGNHT iteration of ``SphericalAdmixture`` at a checkout of the project.

    .venv/bin/python benchmarks/bench_sam_iteration.py [--root CHECKOUT] [--threads 1] [--iters 40]

K = 50, batch 100, 5 kept samples, the estimator's defaults otherwise, on the ``wiki_sggmc`` corpus as
``bench_sggmc.load_corpus`` finds it (the pipeline's processed train split; ``data/`` of the checkout). One
warm-up fit compiles the kernels; then one fit per method, whose per-iteration times are the differences of
its own trace clocks (evaluation excluded), median over the iterations. BLAS threads are left as the library
sets them. ``--root`` imports the library and this benchmark's corpus loader from another checkout (e.g. a
``git worktree`` of an older commit), so two commits can be compared by interleaved runs of this script.
Prints one JSON line (with the load average at the start).
"""

from __future__ import annotations

import argparse
import json
import os
import sys


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--threads", type=int, default=1, help="Numba threads of the fits (n_jobs)")
    ap.add_argument("--iters", type=int, default=40)
    a = ap.parse_args(argv)
    root = os.path.abspath(a.root)
    sys.path[:0] = [os.path.join(root, "src"), os.path.join(root, "benchmarks")]
    os.chdir(root)
    import numpy as np

    import bench_sggmc
    from scalable_bayes.inference.sam import SphericalAdmixture

    X, _ = bench_sggmc.load_corpus("wiki", 0)
    load = os.getloadavg()[0]
    kw = dict(n_components=50, batch_size=100, evaluate_every=1, max_samples=5, n_jobs=a.threads)
    for m in ("sggmc", "gsgnht"):
        SphericalAdmixture(method=m, random_state=0, **{**kw, "max_iter": 2}).fit(X)
    out = {"root": root, "threads": a.threads, "load_start": load}
    for m in ("sggmc", "gsgnht"):
        tr = SphericalAdmixture(method=m, random_state=1, max_iter=a.iters, **kw).fit(X).trace_.sort_values("iteration")
        out[m] = {"cpu_ms": 1e3 * float(np.median(np.diff(tr["cpu_time"].to_numpy()))),
                  "wall_ms": 1e3 * float(np.median(np.diff(tr["wall_time"].to_numpy())))}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
