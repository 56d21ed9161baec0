"""Where ESCA's iterations go: its start and its schedule, probed with a plain ESCA outside the library.

    .venv/bin/python benchmarks/esca_schedule_probe.py --corpus data/processed/wikipedia --batches 4 \
        --init uniform --iters 60 --out results/esca/schedule_probe

ESCA (Zaheer et al. 2016, Alg. 1) draws every token from the PREVIOUS iteration's counts. From the same
state it then needs more iterations to a held-out target than collapsed Gibbs, which reads the counts
as it changes them (on the Wikipedia sample at K = 100: 54.5 against tomotopy's 29). This script asks
what the paper's algorithm allows there, on the race's corpora and scoring (bench_lda_race.py):

- ``--init``: the random start of Alg. 1, line 1. ``uniform``: every token's topic uniform (the paper's
  eq. 19, the library's default); ``prior``: theta_m ~ Dirichlet(alpha) per document, its tokens from
  Categorical(theta_m) (``ESCA(init="prior")``); ``sequential``: every token drawn in turn from the
  conditional (D_mk + alpha)(W_kv + beta)/(T_k + V beta) given the tokens drawn before it (one
  collapsed-Gibbs-like pass: a start that already carries the data's co-occurrence).
- ``--batches B``: the incremental form of Sec. 3.3.1 ("use a subset of the data for the S and M steps,
  similar to incremental EM; in the limit in which batches comprise just a single token, the algorithm
  emulates a collapsed Gibbs sampler"). The documents are cut into B consecutive batches of about equal
  tokens; within a batch every token draws from the same frozen counts (Alg. 1's synchronous update),
  and after the batch its change of assignments is applied to the counts the next batch reads. B = 1 is
  Alg. 1 exactly.

This is NOT the library's ESCA: it keeps every token's topic (the library stores none) and draws each
(document, word) entry's tokens by a float64 inverse CDF over all K topics, O(K) per entry, with NumPy's
generator inside Numba (``np.random.seed`` per batch: the same draws for a seed, not the library's
streams). It is slow and simple on purpose: a probe of the algorithm's iteration count, not of its
speed. Scoring: :func:`scalable_bayes.evaluation.heldout.heldout_loglik` on W + beta, 20 fold-in sweeps,
the first ``--test-docs`` test documents with 2+ tokens, as in the race. Writes
``<out>/probe_<corpus>_K<K>_<init>_B<B>_s<seed>.csv`` (iteration, heldout_ll) and prints the iteration at
which ``--target`` is first reached (interpolated between evaluations as the race interpolates its times), if
given.

Findings (benchmarks/README_lda.md, "ESCA's start and schedule").
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numba as nb
import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_lda  # noqa: E402
import bench_lda_race  # noqa: E402

INITS = ("uniform", "prior", "sequential")


@nb.njit(inline="always", cache=True)
def _assign(t, k, m, v, z, D, W, T):
    """Token t (document m, word v) takes topic k, counted in D, W and T."""
    z[t] = k
    D[m, k] += 1
    W[v, k] += 1
    T[k] += 1


@nb.njit(cache=True)
def start_random(indptr, indices, cnt, K, alpha, prior, seed, z, D, W, T):
    """Uniform (``prior`` False) or prior start: z, and the counts D (M x K), W (V x K), T (K) of it."""
    np.random.seed(seed)
    theta = np.empty(K)
    t = 0
    for m in range(indptr.size - 1):
        if prior:
            for k in range(K):
                theta[k] = np.random.gamma(alpha)
            for k in range(1, K):
                theta[k] += theta[k - 1]
        for e in range(indptr[m], indptr[m + 1]):
            v = indices[e]
            for _ in range(cnt[e]):
                if prior:
                    u = np.random.random() * theta[K - 1]
                    k = 0
                    while theta[k] < u:
                        k += 1
                else:
                    k = np.random.randint(K)
                _assign(t, k, m, v, z, D, W, T)
                t += 1


@nb.njit(cache=True)
def start_sequential(indptr, indices, cnt, K, V, alpha, beta, seed, z, D, W, T):
    """Every token drawn in turn from (D_mk + alpha)(W_vk + beta)/(T_k + V beta) of the tokens before it."""
    np.random.seed(seed)
    cum = np.empty(K)
    t = 0
    for m in range(indptr.size - 1):
        for e in range(indptr[m], indptr[m + 1]):
            v = indices[e]
            for _ in range(cnt[e]):
                s = 0.0
                for k in range(K):
                    s += (D[m, k] + alpha) * (W[v, k] + beta) / (T[k] + V * beta)
                    cum[k] = s
                u = np.random.random() * s
                k = 0
                while cum[k] < u:
                    k += 1
                _assign(t, k, m, v, z, D, W, T)
                t += 1


@nb.njit(cache=True)
def sweep_batch(indptr, indices, cnt, tptr, m_lo, m_hi, K, V, alpha, beta, seed, z, znew, D, W, T):
    """Documents m_lo..m_hi - 1 draw every token from the frozen (D, W, T) (eq. 20, own topic included);
    then their documents' counts are replaced and their change of assignments applied to W and T."""
    np.random.seed(seed)
    cum = np.empty(K)
    invT = np.empty(K)
    dnew = np.zeros(K, np.int64)
    for k in range(K):
        invT[k] = 1.0 / (T[k] + V * beta)
    for m in range(m_lo, m_hi):
        t = tptr[m]
        dnew[:] = 0
        for e in range(indptr[m], indptr[m + 1]):
            v = indices[e]
            s = 0.0
            for k in range(K):
                s += (D[m, k] + alpha) * (W[v, k] + beta) * invT[k]
                cum[k] = s
            for _ in range(cnt[e]):
                u = np.random.random() * s
                k = 0
                while cum[k] < u:
                    k += 1
                znew[t] = k
                dnew[k] += 1
                t += 1
        for k in range(K):
            D[m, k] = dnew[k]
    for m in range(m_lo, m_hi):
        t = tptr[m]
        for e in range(indptr[m], indptr[m + 1]):
            v = indices[e]
            for _ in range(cnt[e]):
                W[v, z[t]] -= 1
                T[z[t]] -= 1
                W[v, znew[t]] += 1
                T[znew[t]] += 1
                z[t] = znew[t]
                t += 1


class Probe:
    """A plain ESCA on a CSR count matrix: ``start()`` then ``iterate(t)``; ``W``, ``T``, ``D``, ``z`` public."""

    def __init__(self, X: sp.csr_matrix, K: int, alpha: float, beta: float, batches: int, init: str, seed: int):
        if init not in INITS:
            raise ValueError(f"init must be one of {INITS}, got {init!r}")
        if batches < 1:
            raise ValueError(f"batches must be >= 1, got {batches}")
        X = sp.csr_matrix(X)
        self.indptr = X.indptr.astype(np.int64)
        self.indices = X.indices.astype(np.int64)
        self.cnt = X.data.astype(np.int64)
        lens = np.asarray(X.sum(axis=1)).ravel().astype(np.int64)
        self.tptr = np.zeros(X.shape[0] + 1, np.int64)
        np.cumsum(lens, out=self.tptr[1:])
        n = int(self.tptr[-1])
        self.K, self.V, self.alpha, self.beta, self.init, self.seed = K, X.shape[1], alpha, beta, init, seed
        self.z = np.zeros(n, np.int32)
        self.znew = np.zeros(n, np.int32)
        self.D = np.zeros((X.shape[0], K), np.int64)
        self.W = np.zeros((self.V, K), np.int64)
        self.T = np.zeros(K, np.int64)
        # batches of about equal tokens (consecutive documents)
        cuts = np.searchsorted(self.tptr, np.linspace(0, n, batches + 1), side="left").astype(np.int64)
        cuts[0], cuts[-1] = 0, X.shape[0]
        self.cuts = cuts

    def start(self):
        a = (self.indptr, self.indices, self.cnt)
        if self.init == "sequential":
            start_sequential(*a, self.K, self.V, self.alpha, self.beta, self.seed, self.z, self.D, self.W, self.T)
        else:
            start_random(*a, self.K, self.alpha, self.init == "prior", self.seed, self.z, self.D, self.W, self.T)

    def iterate(self, t: int):
        for b in range(self.cuts.size - 1):
            # NumPy's legacy seed is 32 bits: the key is reduced explicitly (it is below 2^32 for seeds 0-4)
            key = ((self.seed * 1_000_003 + t) * 1_009 + b) % 2**32
            sweep_batch(self.indptr, self.indices, self.cnt, self.tptr, self.cuts[b], self.cuts[b + 1], self.K,
                        self.V, self.alpha, self.beta, key, self.z, self.znew,
                        self.D, self.W, self.T)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    bench_lda.add_corpus_args(p)
    p.add_argument("--topics", type=int, default=100)
    p.add_argument("--batches", type=int, default=1, help="document batches per iteration (1: Alg. 1)")
    p.add_argument("--init", choices=INITS, default="uniform")
    p.add_argument("--iters", type=int, default=60)
    p.add_argument("--seed", type=int, default=0)
    bench_lda_race.add_scoring_args(p, every=4)
    p.add_argument("--target", type=float, default=None, help="held-out LL whose first crossing is reported")
    p.add_argument("--out", default="results/esca/schedule_probe")
    args = p.parse_args(argv)
    if args.topics < 1 or args.iters < 1 or args.every < 1:
        raise SystemExit("--topics, --iters and --every must be positive")

    from scalable_bayes.evaluation.heldout import heldout_loglik

    out = Path(args.out)
    X, Xte, cname = bench_lda_race.load_split(args, out)
    X = X[np.flatnonzero(np.asarray(X.sum(axis=1)).ravel() > 0)]  # the race's estimators skip empty documents
    K = args.topics
    alpha = 50.0 / K if args.alpha is None else args.alpha

    def score(pr):
        return float(heldout_loglik((pr.W.T + args.beta).astype(np.float64), Xte, alpha, n_sweeps=args.sweeps,
                                    seed=args.seed))

    pr = Probe(X, K, alpha, args.beta, args.batches, args.init, args.seed)
    pr.start()
    rows = [(0, score(pr))]
    print(f"[probe] {cname} K={K} init={args.init} B={args.batches} seed={args.seed}: start {rows[0][1]:.4f}",
          flush=True)
    for t in range(1, args.iters + 1):
        pr.iterate(t)
        if t % args.every == 0 or t == args.iters:
            rows.append((t, score(pr)))
            print(f"[probe] iteration {t}: {rows[-1][1]:.4f}", flush=True)
    import pandas as pd

    from scalable_bayes_papers.esca.tables import time_to_reach

    out.mkdir(parents=True, exist_ok=True)
    path = out / f"probe_{cname}_K{K}_{args.init}_B{args.batches}_s{args.seed}.csv"
    curve = pd.DataFrame(rows, columns=["iteration", "heldout_ll"])
    curve.to_csv(path, index=False)
    if args.target is not None:
        # the race's interpolation, on the iteration axis
        it = time_to_reach(curve.assign(it=curve["iteration"].astype(float)), args.target, "it")
        print(f"[probe] target {args.target}: " + ("not reached" if np.isinf(it) else f"reached at iteration {it:.1f}"))
    print(f"[probe] wrote {path}")


if __name__ == "__main__":
    main()
