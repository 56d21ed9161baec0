"""Throughput, memory and time-to-quality of the LDA engines against peer libraries, in one run.

    .venv/bin/python benchmarks/bench_lda.py --peer-python /tmp/peer_venv/bin/python \
        --out results/esca/bench --topics 100 --iters 50

Every engine runs in its own subprocess (so the peak resident memory of each is its own): ESCA
(1 and 2 threads), CollapsedGibbs, CVB0 from this package; tomotopy (1 and 2 workers) and the
``lda`` package from a SEPARATE virtual environment (``--peer-python``; never installed into the
project's .venv). Each worker snapshots its topic-word counts every ``--every`` iterations with the
cumulative training wall time; this process scores every snapshot with ONE held-out protocol
(document completion, scalable_bayes.evaluation.heldout) so the libraries are comparable.
Speed is reported as ratios against tomotopy measured in the same run (the machine is shared).

Memory, two numbers per engine: ``peak_rss_mib`` is the process's peak resident set (VmHWM:
interpreter, libraries, JIT compiler, corpus, engine); ``peak_increment_mib`` is the engine's own
footprint: the peak RSS during the fit minus the RSS at its baseline (after imports, loading the
CSR corpus and, for our engines, a warm-up fit that loads the compiled kernels). The peak counter is
restarted at the baseline through /proc/self/clear_refs. For tomotopy the increment includes its
own copy of the corpus and its per-token assignments (that is how it stores a model); snapshots of
the topic-word counts go to disk row by row so that they add nothing. ``numba_floor_peak_mib`` is the
peak of a process that loads the same corpus and calls one trivial cached Numba kernel: the floor
under any Numba engine (initialising Numba's CPU target costs 50-60 MiB on the 20NG corpora), and
``peak_over_numba_floor_mib`` is how far our engines' peaks lie above it.

Corpus: ``--corpus data/processed/<name>`` (train/test split of the processed corpus) or, by
default, 20 Newsgroups bydate train/test counted from the mirror's raw text (English stop words,
min_df 5, max_df 0.5, alphabetic tokens of 2+ letters; V = 22,379, 1.61M train tokens);
``--full-vocab`` keeps every word (V = 130,107, 3.37M train tokens).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

HERE = Path(__file__).resolve()
NUMBA_ENGINES = ("ESCA", "ESCA_plain", "CGS", "CVB0")  # ours: Numba kernels, warmed up before measuring


# ---------------------------------------------------------------------------- workers (subprocess)


def _status_mib(key: str) -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _peak_rss_mib() -> float:
    return _status_mib("VmHWM")


def _reset_peak() -> tuple[float, float]:
    """Process peak so far, then restart the peak-RSS counter (Linux: "5" > /proc/self/clear_refs)
    and return (old peak, current RSS): the engine's own footprint is the later peak minus this RSS."""
    import gc

    gc.collect()
    old = _peak_rss_mib()
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return old, float("nan")
    return old, _status_mib("VmRSS")


def _worker(args):
    """Runs in the child: fit one engine, snapshot topic-word counts, write an npz + JSON line."""
    X = sp.load_npz(args.train).tocsr()
    load_rss = _peak_rss_mib()
    K, a, b, every, n_iter, nt = args.topics, args.alpha, args.beta, args.every, args.iters, args.threads
    times, iters = [], []
    snap_dir = Path(args.snap_out + ".d")
    snap_dir.mkdir(parents=True, exist_ok=True)

    class _Snaps(list):
        """Snapshots go straight to disk (float32) so they do not inflate the measured peak memory."""

        def append(self, W, word_major=False):
            # our engines pass a view of their V x K count array (no copy); peers a K x V float32
            np.save(snap_dir / f"{len(times):04d}{'_T' if word_major else ''}.npy", W)

    snaps = _Snaps()
    n_tok = int(X.sum())
    if args.engine in NUMBA_ENGINES:
        import numba

        from scalable_bayes.inference.lda import CVB0, ESCA, CollapsedGibbs
        from scalable_bayes.inference.lda._kernels import col_sums

        cls = {"ESCA": ESCA, "ESCA_plain": ESCA, "CGS": CollapsedGibbs, "CVB0": CVB0}[args.engine]
        kw = {"sampler": "plain"} if args.engine == "ESCA_plain" else {}
        # warm-up fit on a slice, so that the compiled kernels are loaded before the baseline. ESCA's
        # kernels are compiled per compact count type, which the corpus's bounds choose (longest
        # document, word totals): the slice keeps the longest document and the warm-up estimator is
        # given the full corpus's word totals (the hook distributed ESCA uses), so the measured fit
        # calls the kernels loaded here (else it compiles its own inside the measurement: +86 MiB
        # peak on 20NG with its full vocabulary, when a word above 2^16 tokens made W int32; the
        # default ESCA now keeps uint16 there, ESCA_plain does not)
        lens = np.diff(X.indptr)
        rows = np.union1d(np.arange(min(200, X.shape[0])), [int(np.argmax(lens))])
        warm = cls(n_components=K, doc_topic_prior=a, topic_word_prior=b, max_iter=1, n_jobs=nt, random_state=0, **kw)
        if args.engine in ("ESCA", "ESCA_plain"):
            warm._word_totals = col_sums(X.indices, X.data, X.shape[1])
        warm.fit(X[rows])
        del warm
        pre_peak, base_rss = _reset_peak()  # baseline: imports, corpus, compiled kernels

        def cb(est, rec):
            if args.engine.startswith("ESCA"):
                # the count array itself (a view) plus the heavy words' rows: merging them into one
                # int32 copy would add a V x K array to the measured memory
                heavy = est._heavy
                if heavy.size:
                    np.savez(snap_dir / f"{len(times):04d}_H.npz", ids=heavy, rows=est._Wh.reshape(-1, K))
                snaps.append(est._W[est._r].reshape(-1, K), word_major=True)
            else:
                snaps.append(est._Wc.reshape(-1, K), word_major=True)
            times.append(rec["wall_time"])
            iters.append(rec["iteration"])

        est = cls(n_components=K, doc_topic_prior=a, topic_word_prior=b, max_iter=n_iter, n_jobs=nt, random_state=args.seed,
                  evaluate_every=every, callbacks=[cb], **kw).fit(X)
        state_mib = est.state_nbytes() / 2**20
        threads_used = numba.get_num_threads() if nt is None else nt
    elif args.engine == "tomotopy":
        import tomotopy as tp

        state_mib = float("nan")
        pre_peak, base_rss = _reset_peak()  # baseline: imports, corpus (its copy in tomotopy counts)
        mdl = tp.LDAModel(k=K, alpha=a, eta=b, seed=args.seed)
        for m in range(X.shape[0]):
            s, e = X.indptr[m], X.indptr[m + 1]
            toks = np.repeat(X.indices[s:e], X.data[s:e])
            if toks.size:
                mdl.add_doc([str(i) for i in toks])
        t0 = time.perf_counter()
        mdl.train(0, workers=nt)
        wall = time.perf_counter() - t0
        V = X.shape[1]
        vocab_ids = np.array([int(w) for w in mdl.used_vocabs], dtype=np.int64)

        def snap():
            # one topic row at a time straight to disk: the snapshot adds no K x V array to the
            # measured memory of tomotopy
            path = snap_dir / f"{len(times):04d}.f32"
            n_k = mdl.get_count_by_topics()
            with open(path, "wb") as fh:
                for k in range(K):
                    d = np.asarray(mdl.get_topic_word_dist(k), dtype=np.float64)  # (n_kv + eta)/(n_k + V' eta)
                    row = np.zeros(V, np.float32)
                    row[vocab_ids] = np.maximum(d * (n_k[k] + len(vocab_ids) * b) - b, 0)
                    fh.write(row.tobytes())

        snap(); times.append(wall); iters.append(0)
        for it in range(every, n_iter + 1, every):
            t0 = time.perf_counter()
            mdl.train(every, workers=nt)
            wall += time.perf_counter() - t0
            snap(); times.append(wall); iters.append(it)
        threads_used = nt
    elif args.engine == "numba_floor":
        # not an engine: the process peak of ANY Numba program here, on the same corpus load. One
        # trivial cached kernel is called: that initialises Numba's CPU target (LLVM, the NRT module,
        # numba's typing of numpy, scipy's BLAS lookup), which our engines cannot avoid either
        import numba

        @numba.njit(cache=True)
        def _trivial(x):
            s = 0
            for i in range(x.size):
                s += x[i]
            return s

        pre_peak, base_rss = _reset_peak()
        _trivial(X.data)
        state_mib, threads_used = float("nan"), 1  # no snapshots: only the peak is read
    elif args.engine == "lda":
        import lda

        state_mib = float("nan")
        pre_peak, base_rss = _reset_peak()
        # the lda package has no resumable training: one fit of n_iter iterations, final snapshot
        t0 = time.perf_counter()
        mdl = lda.LDA(n_topics=K, n_iter=n_iter, alpha=a, eta=b, random_state=args.seed, refresh=10**9)
        mdl.fit(X)
        snaps.append(mdl.nzw_); times.append(time.perf_counter() - t0); iters.append(n_iter)
        threads_used = 1
    else:
        raise SystemExit(f"unknown engine {args.engine}")
    np.savez(args.snap_out, times=np.array(times), iters=np.array(iters))
    fit_peak = _peak_rss_mib()
    print(json.dumps({"engine": args.engine, "threads": threads_used, "n_tokens": n_tok, "K": K,
                      "peak_rss_mib": max(pre_peak, fit_peak), "rss_after_load_mib": load_rss,
                      "rss_baseline_mib": base_rss, "peak_increment_mib": fit_peak - base_rss,
                      "state_mib": state_mib}))


# ---------------------------------------------------------------------------- driver


def news20_name(full_vocab: bool) -> str:
    """The name of the 20 Newsgroups corpus :func:`build_news20` builds (reports, and its cache's marker)."""
    return "news20_bydate_full_vocab" if full_vocab else "news20_bydate"


def build_news20(mirror: Path, cache: Path, full_vocab: bool = False):
    """20 Newsgroups bydate train/test counts from the mirror's raw text. Default vocabulary: English
    stop words out, min_df 5, max_df 0.5, alphabetic tokens of 2+ letters (V = 22,379, 1.61M train
    tokens). ``full_vocab``: scikit-learn's CountVectorizer defaults, every word kept, stop words included
    (V = 130,107, 3.37M train tokens; three words occur more than 2^16 times)."""
    from sklearn.feature_extraction.text import CountVectorizer
    import tarfile

    cache.mkdir(parents=True, exist_ok=True)
    tr, te = cache / "train.npz", cache / "test.npz"
    # the cache is reused only when it says it holds this corpus: an --out directory may hold another corpus's
    # counts under the same file names (a processed corpus was written to ``corpus/`` before it had a directory
    # of its own, and was then read as 20 Newsgroups)
    source = cache / "SOURCE"
    name = news20_name(full_vocab)
    if tr.exists() and te.exists() and source.exists() and source.read_text().strip() == name:
        return tr, te
    source.unlink(missing_ok=True)
    docs = {"train": [], "test": []}
    with tarfile.open(mirror / "20newsgroups" / "20news-bydate.tar.gz") as tf:
        members = sorted((m for m in tf.getmembers() if m.isfile()), key=lambda m: m.name)
        for m in members:
            split = "train" if "20news-bydate-train/" in m.name else "test"
            docs[split].append(tf.extractfile(m).read().decode("latin-1"))
    if full_vocab:
        cv = CountVectorizer()
    else:
        cv = CountVectorizer(stop_words="english", min_df=5, max_df=0.5, token_pattern=r"(?u)\b[a-zA-Z][a-zA-Z]+\b")
    sp.save_npz(tr, sp.csr_matrix(cv.fit_transform(docs["train"]).astype(np.int32)))
    sp.save_npz(te, sp.csr_matrix(cv.transform(docs["test"]).astype(np.int32)))
    source.write_text(name + "\n")
    return tr, te


def add_corpus_args(p: argparse.ArgumentParser):
    """The corpus options shared with bench_lda_ratio.py: --corpus, --full-vocab, --mirror."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("--corpus", help="processed corpus directory (default: 20 Newsgroups from the mirror)")
    g.add_argument("--full-vocab", action="store_true",
                   help="20 Newsgroups with every word kept (CountVectorizer defaults), not the filtered vocabulary")
    p.add_argument("--mirror", default=os.environ.get("SCALABLE_BAYES_MIRROR", "../shared/data"))


def select_corpus(args, out: Path) -> tuple[Path, Path, str]:
    """(train npz, test npz, corpus name) for the options of :func:`add_corpus_args`, cached under
    ``out``."""
    if args.corpus:
        train, test = corpus_from_processed(Path(args.corpus), out / f"corpus_{Path(args.corpus).name}")
        return train, test, Path(args.corpus).name
    if args.full_vocab:
        train, test = build_news20(Path(args.mirror), out / "corpus_full_vocab", full_vocab=True)
    else:
        train, test = build_news20(Path(args.mirror), out / "corpus")
    return train, test, news20_name(args.full_vocab)


def corpus_from_processed(d: Path, cache: Path):
    from scalable_bayes.corpora import load_corpus

    c = load_corpus(d)
    cache.mkdir(parents=True, exist_ok=True)
    tr, te = cache / "train.npz", cache / "test.npz"
    sp.save_npz(tr, c.subset("train").counts.astype(np.int32))
    sp.save_npz(te, c.subset("test").counts.astype(np.int32))
    return tr, te


def run_worker(python, engine, threads, train, K, iters, every, alpha, beta, seed, tmp):
    snap = Path(tmp) / f"{engine}_t{threads}_K{K}.npz"
    cmd = [python, str(HERE), "--worker", "--engine", engine, "--threads", str(threads), "--train", str(train),
           "--topics", str(K), "--iters", str(iters), "--every", str(every), "--alpha", str(alpha),
           "--beta", str(beta), "--seed", str(seed), "--snap-out", str(snap)]
    env = dict(os.environ)
    env["NUMBA_NUM_THREADS"] = str(max(2, threads))
    env["OMP_NUM_THREADS"] = str(threads)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        print(f"[bench] {engine} t{threads} failed:\n{out.stderr[-2000:]}", file=sys.stderr)
        return None
    info = json.loads(out.stdout.strip().splitlines()[-1])
    info["process_wall_s"] = time.perf_counter() - t0
    z = np.load(snap)
    V = sp.load_npz(train).shape[1]

    def _load(f):
        if f.suffix == ".f32":
            return np.fromfile(f, np.float32).reshape(K, V).astype(np.float64)
        W = (np.load(f).T if f.stem.endswith("_T") else np.load(f)).astype(np.float64)
        h = f.with_name(f.stem.removesuffix("_T") + "_H.npz")  # ESCA's heavy words' rows, if any
        if h.exists():
            z = np.load(h)
            W[:, z["ids"]] = z["rows"].T
        return W

    snaps = (_load(f) for f in sorted(Path(str(snap) + ".d").iterdir()) if f.suffix in (".npy", ".f32"))
    return info, snaps, z["times"], z["iters"]


def _warm_kernel_cache(args, train, tmp):
    """Run each of our engines once on a small slice in its own process before any measurement, so
    that the measured processes load their kernels from Numba's on-disk cache instead of compiling
    them (a compile inflates the process peak RSS by ~80 MiB of LLVM memory and is not part of a
    fit); the Numba floor's trivial kernel too. The peers need no warm-up."""
    ours = sorted({(K, spec) for K in args.topics for spec in (args.engines if K <= 100 else args.big_k_engines)
                   if spec.split(":")[0] in NUMBA_ENGINES})
    if not ours:
        return
    ours.append((args.topics[0], "numba_floor:1"))
    wdir = Path(tmp) / "warm"  # its own directory: the snapshots of the measured runs stay clean
    wdir.mkdir()
    for K, spec in ours:  # per K too: the compact count types (and so the compiled kernels) depend on K
        engine, threads = spec.split(":")
        t0 = time.perf_counter()
        d = wdir / f"{K}_{engine}_{threads}"
        d.mkdir()
        # the worker's own warm-up compiles the kernels for the full corpus's types; zero iterations
        run_worker(sys.executable, engine, int(threads), train, K, 0, 1, args.alpha, args.beta, args.seed, d)
        print(f"[bench] warm-up {spec} K={K}: {time.perf_counter() - t0:.1f} s", flush=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--engine")
    p.add_argument("--train")
    p.add_argument("--snap-out")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--topics", type=int, nargs="+", default=[100])
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--every", type=int, default=10)
    p.add_argument("--alpha", type=float, default=0.5, help="doc-topic prior (0.5 = 50/K at K = 100, the paper's)")
    p.add_argument("--beta", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=0)
    add_corpus_args(p)
    p.add_argument("--peer-python", default="/tmp/peer_venv/bin/python")
    p.add_argument("--engines", nargs="+",
                   default=["ESCA:1", "ESCA:2", "tomotopy:1", "tomotopy:2", "CGS:1", "lda:1", "CVB0:1"])
    p.add_argument("--big-k-engines", nargs="+", default=["ESCA:1", "ESCA:2", "tomotopy:1", "tomotopy:2"],
                   help="engines run for K > 100 (the dense O(K) baselines are too slow there)")
    p.add_argument("--test-docs", type=int, default=1000)
    p.add_argument("--out", default="results/esca/bench")
    args = p.parse_args(argv)
    if args.worker:
        args.topics = args.topics[0]
        return _worker(args)

    import pandas as pd

    from scalable_bayes.evaluation.heldout import heldout_loglik
    from scalable_bayes.utils import save_table

    out = Path(args.out)
    train, test, cname = select_corpus(args, out)
    Xte = sp.load_npz(test).tocsr()
    Xte = Xte[np.flatnonzero(np.asarray(Xte.sum(1)).ravel() >= 2)[: args.test_docs]]
    rows, curves = [], []
    numba_floor = np.nan
    with tempfile.TemporaryDirectory() as tmp:
        _warm_kernel_cache(args, train, tmp)
        for K in args.topics:
            engines = args.engines if K <= 100 else args.big_k_engines
            for spec in engines:
                engine, threads = spec.split(":")
                threads = int(threads)
                python = args.peer_python if engine in ("tomotopy", "lda") else sys.executable
                load0 = os.getloadavg()[0]
                res = run_worker(python, engine, threads, train, K, args.iters, args.every, args.alpha, args.beta,
                                 args.seed, tmp)
                if res is None:
                    continue
                info, snaps, times, iters = res
                lls = [heldout_loglik(s + args.beta, Xte, args.alpha, seed=0) for s in snaps]
                for it, t, ll in zip(iters, times, lls):
                    curves.append({"corpus": cname, "K": K, "engine": engine, "threads": threads, "iteration": int(it),
                                   "wall_time": float(t), "heldout_ll": float(ll)})
                train_time = float(times[-1] - (times[0] if iters[0] == 0 else 0.0))
                n_it = int(iters[-1] - (iters[0] if iters[0] == 0 else 0))
                row = {"corpus": cname, "K": K, "engine": engine, "threads": threads, "iterations": n_it,
                       "train_time_s": train_time, "tokens_per_s": info["n_tokens"] * n_it / train_time,
                       "final_heldout_ll": float(lls[-1]), "peak_rss_mib": info["peak_rss_mib"],
                       "rss_after_load_mib": info["rss_after_load_mib"], "rss_baseline_mib": info["rss_baseline_mib"],
                       "peak_increment_mib": info["peak_increment_mib"], "sampler_state_mib": info["state_mib"],
                       "loadavg_1min_before": load0, "loadavg_1min_after": os.getloadavg()[0]}
                rows.append(row)
                print(f"[bench] {cname} K={K} {engine} t{threads}: {row['tokens_per_s'] / 1e6:.2f}M tok/s, "
                      f"LL {row['final_heldout_ll']:.4f}, peak {row['peak_rss_mib']:.0f} MiB "
                      f"(+{row['peak_increment_mib']:.1f} MiB over the baseline)", flush=True)
        if any(spec.split(":")[0] in NUMBA_ENGINES for spec in args.engines):
            # the floor of any Numba process (its trivial kernel is in the cache since the warm-up)
            floor = run_worker(sys.executable, "numba_floor", 1, train, args.topics[0], 0, 1, args.alpha, args.beta,
                               args.seed, tmp)
            if floor is not None:
                numba_floor = floor[0]["peak_rss_mib"]
                print(f"[bench] numba floor (python + numpy/scipy + this corpus + numba with one trivial cached "
                      f"kernel called): peak {numba_floor:.0f} MiB", flush=True)
    df = pd.DataFrame(rows)
    df["numba_floor_peak_mib"] = numba_floor
    df["peak_over_numba_floor_mib"] = np.where(df.engine.isin(NUMBA_ENGINES),
                                               df.peak_rss_mib - numba_floor, np.nan)
    tomo = df[df.engine == "tomotopy"].set_index(["K", "threads"])["tokens_per_s"]
    df["ratio_vs_tomotopy_same_threads"] = [
        r.tokens_per_s / tomo.get((r.K, r.threads), np.nan) for r in df.itertuples()]
    # held-out at equal wall time: tomotopy's score (same K and threads) interpolated at this engine's
    # final training time, from tomotopy's curve (nan when the time lies beyond tomotopy's run)
    cdf = pd.DataFrame(curves)
    eq = []
    for r in df.itertuples():
        c = cdf[(cdf.engine == "tomotopy") & (cdf.K == r.K) & (cdf.threads == r.threads)].sort_values("wall_time")
        t_end = float(cdf[(cdf.engine == r.engine) & (cdf.K == r.K) & (cdf.threads == r.threads)].wall_time.max())
        ok = len(c) and c.wall_time.min() <= t_end <= c.wall_time.max()
        eq.append(float(np.interp(t_end, c.wall_time, c.heldout_ll)) if ok else np.nan)
    df["tomotopy_heldout_at_same_wall_time"] = eq
    df["heldout_minus_tomotopy_at_same_wall_time"] = df["final_heldout_ll"] - df["tomotopy_heldout_at_same_wall_time"]
    ldap = df[df.engine == "lda"].set_index("K")["tokens_per_s"]
    df["ratio_vs_lda"] = [r.tokens_per_s / ldap.get(r.K, np.nan) for r in df.itertuples()]
    save_table(df, out / "throughput.csv")
    save_table(df, out / "throughput.md")
    save_table(pd.DataFrame(curves), out / "curves.csv")
    print(df.to_string())


if __name__ == "__main__":
    main()
