"""Speed of the SCIR paper's pieces: the CIR draw, SCIR vs SGRLD per LDA iteration,
LDA documents per second on 1 and 2 threads.

All numbers are ratios against a peer measured in the same process (the machine is a shared 2-core VM
whose speed moves with the other jobs); each measurement is repeated ``--repeats`` times, interleaved
across the compared implementations, and the best (min) and median are reported. Parts (a) and (b) are
timed with the process CPU clock (``time.process_time``; what the code costs, not how long it waited for
a core on an overloaded machine), (b) also with the wall clock; (c) is wall time only (a speed-up).

(a) ``cir``: ns per exact CIR transition (``scalable_bayes.manifolds.cir_transition``) inside a Numba loop
    over an array of theta drawn from the stationary Gamma(a) law, for a in {1e-3, 0.01, 0.1, 1, 10, 100}
    and h in {0.01, 0.1, 1}, against numpy's ``Generator.noncentral_chisquare`` (the transition is
    (1 - e^-h)/2 chi'^2(2a, 2 theta e^-h / (1 - e^-h))) vectorised over the same array and called once
    per draw (scalar).
(b) ``iter``: one SCIR iteration vs one SGRLD iteration on the same Wikipedia LDA minibatch (50 documents,
    K = 50, V = 7,702, the within-document Gibbs of ``SimplexLDA`` with G = 20, B = 10) from the same
    state (a state after ``--warm`` SCIR iterations, so theta has its sparse shape): the iteration is the
    model's count estimate n^ plus the sampler's step; also the step kernels alone.
(c) ``threads``: SCIR on LDA (the same iteration) in documents per second with 1 and 2 Numba threads.
    Both step kernels run the topic blocks in parallel (per-block counter-seeded keys).
(d) ``wiki`` (settings study, not a speed test): SCIR / SGRLD chains on the Wikipedia train split through
    ``run_chain`` with the step schedule h_m = h (1 + m / tau)^-kappa, held-out perplexity by document
    completion every ``--wiki-every`` iterations on 300 test documents; configs ``METHOD:h:tau:kappa:beta[:seed[:alpha]]``, rows
    appended to ``--wiki-out`` (JSON lines).

Usage: .venv/bin/python benchmarks/bench_scir.py [--parts cir,iter,threads] [--repeats 5] [--out results/benchmarks]
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numba
import numpy as np
from numba import njit

from scalable_bayes.corpora.store import load_corpus
from scalable_bayes.manifolds import cir_constants, cir_transition
from scalable_bayes.models.lda_simplex import SimplexLDA
from scalable_bayes.rng import make_key, partial_shuffle
from scalable_bayes.samplers.simplex import scir_step, sgrld_step

WIKI = os.environ.get("SCIR_BENCH_CORPUS", os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "processed", "wikipedia"))


@njit  # not cached: Numba's cache would not notice an edit of cir_transition (another module)
def cir_loop(key, theta, a, c, r, out):
    for j in range(theta.shape[0]):
        out[j] = cir_transition(key, theta[j], a, c, r)


def _best(xs):
    return float(np.min(xs)), float(np.median(xs))


def bench_cir(repeats, n=1_000_000, n_scalar=20_000):
    rows = []
    gen = np.random.default_rng(0)
    key = make_key(0)
    for a in (1e-3, 0.01, 0.1, 1.0, 10.0, 100.0):
        theta = gen.gamma(a, 1.0, n)
        out = np.empty(n)
        for h in (0.01, 0.1, 1.0):
            c, r = cir_constants(h)
            cir_loop(key, theta[:10], a, c, r, out[:10])
            df, nonc = 2 * a, 2 * theta * r  # 2 theta e^-h / (1 - e^-h) = 2 theta / (e^h - 1)
            ts = {"numba": [], "numpy_vec": [], "numpy_scalar": []}
            for _ in range(repeats):
                t = time.process_time()
                cir_loop(key, theta, a, c, r, out)
                ts["numba"].append((time.process_time() - t) / n * 1e9)
                t = time.process_time()
                y = gen.noncentral_chisquare(df, nonc) * (c / 2)
                ts["numpy_vec"].append((time.process_time() - t) / n * 1e9)
                ncs = gen.noncentral_chisquare
                nn = nonc[:n_scalar].tolist()
                t = time.process_time()
                for v in nn:
                    ncs(df, v)
                ts["numpy_scalar"].append((time.process_time() - t) / n_scalar * 1e9)
            # sanity: the two samplers agree in mean (both exact)
            rel = abs(out.mean() - y.mean()) / max(y.mean(), 1e-300)
            row = {"a": a, "h": h}
            for k, v in ts.items():
                row[k + "_ns_min"], row[k + "_ns_med"] = _best(v)
            row["vec_over_numba"] = row["numpy_vec_ns_min"] / row["numba_ns_min"]
            row["mean_rel_diff"] = rel
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def _lda_state(K, warm, batch, seed=0):
    c = load_corpus(WIKI)
    train = np.flatnonzero(c.split == "train")
    m = SimplexLDA(c.counts[train], K, alpha=0.1, beta=0.01)
    x = m.init_position(seed)
    hyper = np.concatenate([[float(m.V)], np.full(m.dim, m.beta)])
    key = make_key(seed)
    bkey = make_key(seed, 1)
    perm = np.arange(m.D, dtype=np.int64)
    p = np.zeros(0)
    for t in range(warm):
        partial_shuffle(bkey, perm, batch)
        g = m.grad(x, perm[:batch].copy(), key)
        scir_step(x, p, p, g, key, 0.5 * (1 + t / 10) ** -0.5, hyper)
    partial_shuffle(bkey, perm, batch)
    return m, x, hyper, perm[:batch].copy()


def bench_iter(repeats, K=50, batch=50, warm=30, h=0.02):
    m, x0, hyper, docs = _lda_state(K, warm, batch)
    print(f"state after {warm} SCIR iterations; batch tokens {int(m.doc_len[docs].sum())}", flush=True)
    p = np.zeros(0)
    kern = {"SCIR": scir_step, "SGRLD": sgrld_step}
    g = m.grad(x0, docs, make_key(1))
    for f in kern.values():  # compile
        f(x0.copy(), p, p, g, make_key(2), h, hyper)
    ts = {f"{n}_{part}": [] for n in kern for part in ("iter", "step", "iter_cpu", "step_cpu")}
    ts["grad"] = []
    for _ in range(repeats):
        for name, f in kern.items():
            x = x0.copy()
            key = make_key(3)
            c0 = time.process_time()
            t = time.perf_counter()
            g = m.grad(x, docs, key)
            t1 = time.perf_counter()
            c1 = time.process_time()
            f(x, p, p, g, key, h, hyper)
            t2 = time.perf_counter()
            c2 = time.process_time()
            ts[f"{name}_iter_cpu"].append((c2 - c0) * 1e3)
            ts[f"{name}_step_cpu"].append((c2 - c1) * 1e3)
            ts[f"{name}_iter"].append((t2 - t) * 1e3)
            ts[f"{name}_step"].append((t2 - t1) * 1e3)
            ts["grad"].append((t1 - t) * 1e3)
    row = {"K": K, "V": m.V, "batch": batch, "threads": numba.get_num_threads(), "h": h}
    for k, v in ts.items():
        row[k + "_ms_min"], row[k + "_ms_med"] = _best(v)
    row["iter_ratio_min"] = row["SCIR_iter_ms_min"] / row["SGRLD_iter_ms_min"]
    row["iter_ratio_med"] = row["SCIR_iter_ms_med"] / row["SGRLD_iter_ms_med"]
    row["iter_ratio_cpu_min"] = row["SCIR_iter_cpu_ms_min"] / row["SGRLD_iter_cpu_ms_min"]
    row["step_ratio_min"] = row["SCIR_step_ms_min"] / row["SGRLD_step_ms_min"]
    row["step_ratio_cpu_min"] = row["SCIR_step_cpu_ms_min"] / row["SGRLD_step_cpu_ms_min"]
    row["scir_ns_per_entry"] = row["SCIR_step_ms_min"] * 1e6 / m.dim
    row["scir_cpu_ns_per_entry"] = row["SCIR_step_cpu_ms_min"] * 1e6 / m.dim
    print(json.dumps(row), flush=True)
    return [row]


def bench_threads(repeats, K=50, batch=50, warm=30, h=0.02, n_iter=5):
    m, x0, hyper, _ = _lda_state(K, warm, batch)
    p = np.zeros(0)
    rows = []
    res = {1: [], 2: []}
    bkey0 = make_key(7)
    for _ in range(repeats):
        for nt in res:
            numba.set_num_threads(nt)
            x = x0.copy()
            key = make_key(4)
            bkey = bkey0.copy()
            perm = np.arange(m.D, dtype=np.int64)
            ndocs = 0
            t = time.perf_counter()
            for _ in range(n_iter):
                partial_shuffle(bkey, perm, batch)
                g = m.grad(x, perm[:batch], key)
                scir_step(x, p, p, g, key, h, hyper)
                ndocs += batch
            res[nt].append(ndocs / (time.perf_counter() - t))
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    row = {"K": K, "batch": batch, "iters_per_repeat": n_iter}
    for nt, v in res.items():
        tag = f"{nt}t"
        row[f"docs_per_s_{tag}_max"] = float(np.max(v))
        row[f"docs_per_s_{tag}_med"] = float(np.median(v))
    row["speedup_best"] = row["docs_per_s_2t_max"] / row["docs_per_s_1t_max"]
    row["speedup_med"] = row["docs_per_s_2t_med"] / row["docs_per_s_1t_med"]
    print(json.dumps(row), flush=True)
    return rows + [row]


def wiki_run(method, h, tau, kappa, beta, K=50, batch=50, n_iter=200, every=20, n_test=300, seed=0, alpha=0.1,
             sweeps=20, burn=10, avg_window=0, avg_every=5):
    """One chain of SCIR or SGRLD on the Wikipedia train split through ``run_chain``; held-out perplexity
    (document completion, ``heldout_loglik`` on the first ``n_test`` test documents, the current sample's
    topics) every ``every`` iterations; with ``avg_window`` also with the topics averaged over the last
    ``avg_window`` samples taken every ``avg_every`` iterations (``perplexity_avg``). Returns a list of rows (iteration, docs seen, perplexity, sampler s)."""
    from scalable_bayes import samplers
    from scalable_bayes.evaluation.heldout import heldout_loglik

    c = load_corpus(WIKI)
    train = np.flatnonzero(c.split == "train")
    test = np.flatnonzero(c.split == "test")[:n_test]
    Xte = c.counts[test]
    m = SimplexLDA(c.counts[train], K, alpha=alpha, beta=beta, sweeps=sweeps, burn=burn)
    rows = []
    recent = []  # topics of the last ``avg_window`` samples taken every ``avg_every`` iterations

    def cb(step, state):
        pi = m.topics(state.position)
        if avg_window:
            recent.append(pi)
            del recent[:-avg_window]
        if step % every:
            return None
        ll = heldout_loglik(pi, Xte, alpha, n_sweeps=20, seed=0)
        out = {"perplexity": float(np.exp(-ll))}
        if avg_window:
            ll = heldout_loglik(np.mean(recent, axis=0), Xte, alpha, n_sweeps=20, seed=0)
            out["perplexity_avg"] = float(np.exp(-ll))
        return out

    alg = samplers.scir() if method == "SCIR" else samplers.sgrld()
    try:
        res = samplers.run_chain(alg, m.model(), m.init_position(seed), seed=seed, n_steps=n_iter, step_size=h,
                                 batch_size=batch, step_decay=(tau, kappa),
                                 checkpoint_every=avg_every if avg_window else every, callback=cb)
    except Exception as err:  # a divergence is a result of the sweep
        return [{"method": method, "h": h, "tau": tau, "kappa": kappa, "beta": beta, "error": str(err)[:120]}]
    for (step, val), wall in zip(res.callback_values, res.checkpoint_wall):
        if val is None:
            continue
        rows.append({"method": method, "h": h, "tau": tau, "kappa": kappa, "beta": beta, "K": K, "iter": step,
                     "docs": step * batch, **val, "sampler_s": float(wall),
                     "s_per_iter": float(wall) / step, "threads": numba.get_num_threads()})
    return rows


def bench_wiki(configs, out_path, n_iter=200, every=20, avg_window=0):
    for cfg in configs:
        method, h, tau, kappa, beta, *rest = cfg.split(":")
        seed = int(rest[0]) if rest else 0
        alpha = float(rest[1]) if len(rest) > 1 else 0.1
        rows = wiki_run(method, float(h), float(tau), float(kappa), float(beta), n_iter=n_iter, every=every,
                        seed=seed, avg_window=avg_window, alpha=alpha)
        for r in rows:
            r["seed"] = seed
            r["alpha"] = alpha
        with open(out_path, "a") as fh:
            for r in rows:
                fh.write(json.dumps(r) + "\n")
        last = rows[-1]
        print(json.dumps(last), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parts", default="cir,iter,threads")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=None)
    ap.add_argument("--wiki", nargs="*", default=[], help="part 'wiki': configs METHOD:h:tau:kappa:beta")
    ap.add_argument("--wiki-out", default="scir_wiki.jsonl")
    ap.add_argument("--wiki-iters", type=int, default=200)
    ap.add_argument("--wiki-every", type=int, default=20)
    ap.add_argument("--wiki-avg", type=int, default=0, help="also score topics averaged over this many samples, "
                    "one every 5 iterations")
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()}", flush=True)
    out = {}
    parts = args.parts.split(",")
    if "cir" in parts:
        out["cir"] = bench_cir(args.repeats)
    if "iter" in parts:
        out["iter"] = bench_iter(args.repeats)
    if "threads" in parts:
        out["threads"] = bench_threads(args.repeats)
    if "wiki" in parts:
        bench_wiki(args.wiki, args.wiki_out, args.wiki_iters, args.wiki_every, args.wiki_avg)
    print(f"load average at end: {os.getloadavg()}", flush=True)
    if args.out:
        import pandas as pd

        os.makedirs(args.out, exist_ok=True)
        for k, rows in out.items():
            pd.DataFrame(rows).to_csv(os.path.join(args.out, f"scir_{k}.csv"), index=False)


if __name__ == "__main__":
    main()
