"""Two builds of ESCA's word sweep timed iteration by iteration in ONE fit: is a kernel change faster?

    .venv/bin/python benchmarks/bench_esca_alternate.py --rev HEAD~1 [--corpus data/processed/wikipedia]
        [--topics 100] [--threads 1] [--iters 30] [--rounds 2]

On a shared VM two processes timed one after the other differ by 10-15%, so a change of a few per cent cannot be
seen that way. This script copies the package ``scalable_bayes`` as it was at git revision ``--rev`` into a
temporary directory under another name and runs one ESCA fit whose iterations alternate between the two builds'
sweep (``esca_word_sweep``): iteration t runs build A (``--rev``) when t is even and build B (the working tree)
when odd, then a second fit swaps the two. Everything else of the iteration (tables, merges) is the working tree's.
Reported per fit: the mean time of an iteration of each build (CPU time of the thread on one thread, wall time on
several), after the first ``--skip`` iterations, and B / A; then B / A over all fits. Both builds must draw the
same (a change of speed only: the fits' digests are printed, and the script stops with an error when they differ
between fits), and their sweeps must take the same arguments. On the machine of benchmarks/README_lda.md the ratio over both fits of a build against
itself was 1.009 and 0.989, single fits 0.96-1.03.

Corpus options as in bench_lda.py (default: 20 Newsgroups bydate from the mirror, filtered vocabulary).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import subprocess
import sys
import tarfile
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_lda  # noqa: E402

OTHER = "scalable_bayes_rev"  # the package name the other revision is imported under


def export_revision(rev: str, dest: Path) -> None:
    """``src/scalable_bayes`` at git revision ``rev`` as the package ``OTHER`` in ``dest``."""
    archive = dest / "rev.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", "-o", str(archive), rev, "src/scalable_bayes"],
                   check=True)
    with tarfile.open(archive) as tf:
        tf.extractall(dest, filter="data")
    (dest / "src" / "scalable_bayes").rename(dest / OTHER)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    bench_lda.add_corpus_args(p)
    p.add_argument("--rev", required=True, help="git revision of build A (build B is the working tree)")
    p.add_argument("--topics", type=int, default=100)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--skip", type=int, default=4, help="first iterations left out of the means")
    p.add_argument("--rounds", type=int, default=2, help="pairs of fits (each pair swaps the builds' iterations)")
    p.add_argument("--out", default="results/esca/bench_alternate", help="where the corpus is cached")
    args = p.parse_args(argv)
    if args.iters < args.skip + 4:
        p.error("--iters must exceed --skip by at least 4")
    train, _, name = bench_lda.select_corpus(args, Path(args.out))
    X = sp.load_npz(train).tocsr()

    from scalable_bayes.inference.lda import _estimators as E

    with tempfile.TemporaryDirectory() as tmp:
        export_revision(args.rev, Path(tmp))
        # the copy's parallel=NO_PARFORS kernels: the note the library silences for its own files
        from numba.core.errors import NumbaPerformanceWarning

        warnings.filterwarnings("ignore", category=NumbaPerformanceWarning, message=rf"(?s).*{OTHER}[/\\]")
        sys.path.insert(0, tmp)
        builds = {"A": importlib.import_module(f"{OTHER}.inference.lda._kernels.esca_word").esca_word_sweep,
                  "B": importlib.import_module("scalable_bayes.inference.lda._kernels.esca_word").esca_word_sweep}
        clock = time.thread_time if args.threads == 1 else time.perf_counter
        times: list[float] = []
        state = {"swap": 0}
        iterate = E.ESCA._iterate

        def alternating(self, C, it):
            E.kern.esca_word_sweep = builds["A" if (it + state["swap"]) % 2 == 0 else "B"]
            t = clock()
            iterate(self, C, it)
            times.append(clock() - t)

        E.ESCA._iterate = alternating
        try:
            for swap in (0, 1):  # compile or load both builds' kernels outside the timed fits
                state["swap"] = swap
                E.ESCA(args.topics, max_iter=2, n_jobs=args.threads, random_state=0).fit(X)
            total = {"A": 0.0, "B": 0.0}
            digests = set()
            print(f"[alternate] {name}: K = {args.topics}, {args.threads} thread(s), A = {args.rev}, B = working tree")
            for _ in range(args.rounds):
                for swap in (0, 1):
                    state["swap"] = swap
                    times.clear()
                    m = E.ESCA(args.topics, max_iter=args.iters, n_jobs=args.threads, random_state=0).fit(X)
                    t = np.array(times[args.skip:])
                    on_a = (np.arange(args.skip + 1, args.iters + 1) + swap) % 2 == 0
                    a, b = t[on_a].mean(), t[~on_a].mean()
                    total["A"] += a
                    total["B"] += b
                    digest = hashlib.sha256(m.components_.tobytes()).hexdigest()[:12]
                    digests.add(digest)
                    print(f"  fit (swap {swap}): A {a * 1e3:.1f} ms, B {b * 1e3:.1f} ms an iteration, B / A "
                          f"{b / a:.3f}; fit {digest}", flush=True)
                    if len(digests) > 1:
                        # the two builds draw differently: the fits differ, and so does the work timed in each
                        sys.exit(f"[alternate] the fits differ between the builds' assignments ({sorted(digests)}): "
                                 f"build A ({args.rev}) and the working tree do not draw the same; this script "
                                 "compares builds that change speed only")
            print(f"[alternate] B / A over all fits: {total['B'] / total['A']:.3f}")
        finally:
            E.ESCA._iterate = iterate
            E.kern.esca_word_sweep = builds["B"]


if __name__ == "__main__":
    main()
