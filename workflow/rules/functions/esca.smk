# Helper functions and constants of esca.smk (kept apart from the rules, as snakemake --lint asks).
import sys

ESCA = config["esca"]
ESCA_PYTHON = sys.executable
ESCA_MPIEXEC = str(Path(sys.executable).with_name("mpiexec")) if Path(sys.executable).with_name("mpiexec").exists() else "mpiexec"
ESCA_METHODS = ["ESCA", "ESCA_plain", "CGS", "CVB0", "tomotopy"]
ESCA_PARALLEL_METHODS = ("ESCA", "ESCA_plain", "tomotopy")  # CGS and CVB0 sweeps are sequential


def esca_run_path(exp, train, test, method, K, beta, threads, seed):
    return (
        f"results/esca/runs/{exp}/{train}~{test}/{method}~K{K}~beta{beta}~t{threads}/seed{seed}.parquet"
    )


def esca_fig2_inputs():
    r = ESCA["fig2"]["run"]
    return [
        esca_run_path("fig2", c, c, m, r["n_topics"], r["beta"], r["threads"], s)
        for c in ESCA["fig2"]["corpora"]
        for m in ESCA["fig2"]["methods"]
        for s in ESCA["seeds"]
    ]


def esca_throughput_inputs():
    r = ESCA["throughput"]["run"]
    return [
        esca_run_path("throughput", c, c, m, r["n_topics"], r["beta"], t, s)
        for c in ESCA["throughput"]["corpora"]
        for m in ESCA["throughput"]["methods"]
        for t in ESCA["throughput"]["threads"]
        for s in ESCA["throughput"].get("seeds", [0])
        # CGS and CVB0 sweeps are sequential: one thread count is enough
        if m in ESCA_PARALLEL_METHODS or t == ESCA["throughput"]["threads"][0]
    ]


def esca_throughput_mpi_inputs():
    return [
        f"results/esca/runs/mpi/{c}~R{r}.parquet"
        for c in ESCA["throughput"]["corpora"]
        for r in ESCA["throughput"].get("mpi_ranks", [])
    ]


def esca_throughput_mpi_args(wildcards):
    r = ESCA["throughput"]["run"]
    args = [
        f"--n-topics {r['n_topics']}",
        f"--beta {r['beta']}",
        f"--n-iter {r['n_iter']}",
        f"--evaluate-every {r['n_iter']}",
        "--threads 1",
        "--seed 0",
    ]
    if r.get("alpha") is not None:
        args.append(f"--alpha {r['alpha']}")
    if r.get("max_train_docs") is not None:
        args.append(f"--max-train-docs {r['max_train_docs']}")
    if r.get("max_test_docs") is not None:
        args.append(f"--max-test-docs {r['max_test_docs']}")
    return " ".join(args)


def esca_train_files(wildcards):
    return corpus_files(wildcards.esca_train)


def esca_test_files(wildcards):
    return corpus_files(wildcards.esca_test)


def esca_fig5_inputs():
    f = ESCA["fig5"]
    r = f["run"]
    return [
        esca_run_path("fig5", f["corpus"], f["corpus"], m, K, r["beta"], r["threads"], s)
        for m in ["ESCA", "ESCA_plain"]
        for K in f["n_topics"]
        for s in f["seeds"]
    ]


def esca_fig6_inputs():
    f = ESCA["fig6"]
    r = f["run"]
    K0, b0 = r["n_topics"], r["beta"]
    grid = {(K0, b0)} | {(K, b0) for K in f["topics_grid"]} | {(K0, b) for b in f["beta_grid"]}
    return sorted(
        {
            esca_run_path("fig6", tr, te, m, K, b, r["threads"], s)
            for tr, te in f["pairs"]
            for m in f["methods"]
            for K, b in grid
            for s in f["seeds"]
        }
    )


def esca_lda_run_settings(wildcards):
    """Settings of ONE LDA run: the experiment's run block (scalars only) with this job's method, K,
    beta, threads and seed from its output path (no seed list, no K or beta grid)."""
    run = dict(ESCA[wildcards.esca_exp]["run"])
    run.update(
        {
            "method": wildcards.esca_method,
            "n_topics": int(wildcards.esca_K),
            "beta": float(wildcards.esca_beta),
            "threads": int(wildcards.esca_threads),
            "seed": int(wildcards.esca_seed),
            "experiment": wildcards.esca_exp,
        }
    )
    by_method = ESCA[wildcards.esca_exp].get("n_iter_by_method", {})
    if wildcards.esca_method in by_method:
        run["n_iter"] = int(by_method[wildcards.esca_method])
    return run


def esca_corpus_dir(name):
    return f"data/processed/{name}"


def esca_train_dir(wildcards):
    return esca_corpus_dir(wildcards.esca_train)


def esca_test_dir(wildcards):
    return esca_corpus_dir(wildcards.esca_test)


def esca_lda_run_threads(wildcards):
    return int(wildcards.esca_threads)


# Resources of one LDA run, estimated from its settings (the corpora are not built when the DAG is).
# Documents of a corpus's whole train split and (non-zeros, tokens) per document, upper bounds. Wikipedia and KOS
# from the catalogue's counts (src/scalable_bayes/corpora/sources.py; Wikipedia: 30,729 articles, 9.81M non-zeros,
# 21.5M tokens; its quick 10,989-document split 9.08M tokens: 826 per document; KOS 3,430 / 353k / 468k); the
# others are small (OHSUMED 7,400 abstracts, Reuters 21,578 records, 20 Newsgroups 11,314 train documents, 1.61M
# tokens) and their per-document counts are generous guesses (not measured).
ESCA_CORPUS_SIZE = {"wikipedia": (None, 330, 830), "pubmed": (7400, 100, 150), "reuters": (21578, 80, 120),
                    "news20_lda": (11314, 100, 150), "kos": (3430, 105, 140)}
# seconds per training token and iteration at K topics, one thread (benchmarks/README_lda.md, quiet machine:
# ESCA 9.0M tok/s at K = 100, 2.4-3.7M at K = 1000; tomotopy 9.1M / 0.96M; CGS 3.7-3.9M and CVB0 3.0M at
# K = 100, their sweeps O(K) per token); the held-out fold-in is a dense O(K) Gibbs sweep (~1 ns x K per token)
ESCA_SEC_PER_TOKEN = {"ESCA": lambda K: 80e-9 + 0.34e-9 * K, "tomotopy": lambda K: max(110e-9, 1.05e-9 * K),
                      "CGS": lambda K: 2.6e-9 * K, "ESCA_plain": lambda K: 2.6e-9 * K, "CVB0": lambda K: 3.3e-9 * K}


def _esca_train_docs(corpus, cap):
    docs = ESCA_CORPUS_SIZE[corpus][0]
    if docs is None:  # Wikipedia: the data block decides how many articles and how many are held out
        c = config["data"]["corpora"].get(corpus, {})
        docs = (c.get("max_docs") or 30729) - (c.get("test_docs") or 1000)
    return docs if cap is None else min(docs, int(cap))


def esca_lda_run_mem_mb(wildcards):
    """CVB0 keeps one float32 gamma per (document, word) entry and topic (nnz x K x 4 bytes) plus the
    document-topic counts; the sampling engines' state is a few hundred MB at most (4,000 MB, measured)."""
    s = esca_lda_run_settings(wildcards)
    if wildcards.esca_method != "CVB0":
        return 4000
    docs = _esca_train_docs(wildcards.esca_train, s.get("max_train_docs"))
    K = s["n_topics"]
    return max(4000, 1500 + int(1.25 * docs * K * (ESCA_CORPUS_SIZE[wildcards.esca_train][1] * 4 + 8) / 1e6))


def esca_lda_run_runtime(wildcards):
    """Minutes: 10 + 1.5 x (training sweeps + held-out evaluations) at the per-token costs above."""
    s = esca_lda_run_settings(wildcards)
    K, n_iter = s["n_topics"], s["n_iter"]
    train = _esca_train_docs(wildcards.esca_train, s.get("max_train_docs")) * ESCA_CORPUS_SIZE[wildcards.esca_train][2]
    test_docs = s.get("max_test_docs") or _esca_train_docs(wildcards.esca_test, None)
    test = test_docs * ESCA_CORPUS_SIZE[wildcards.esca_test][2]
    n_eval = n_iter // max(1, s.get("evaluate_every") or n_iter) + 1
    sec = train * n_iter * ESCA_SEC_PER_TOKEN[wildcards.esca_method](K) \
        + n_eval * s.get("heldout_sweeps", 20) * test * 1e-9 * K
    return 10 + int(1.5 * sec / 60)


def esca_throughput_mpi_ranks(wildcards):
    return int(wildcards.esca_ranks)


def esca_fig3_run_settings(wildcards):
    """Settings of ONE Fig. 3 job: the mixture sizes, iterations, severities and EM restarts, and its
    seed (not the list of seeds: adding a seed schedules only the new job)."""
    f = ESCA["fig3"]
    return {
        "seed": int(wildcards.esca_seed),
        **{k: f[k] for k in ("n_components", "n_train", "n_test", "n_iter", "severities", "n_restarts")},
    }


def esca_heldout_corpora():
    """Corpora of Fig. 2 and of the Fig. 6 pairs (described in TabU2)."""
    return sorted(set(ESCA["fig2"]["corpora"]) | {p for pr in ESCA["fig6"]["pairs"] for p in pr})


def esca_tabu2_inputs(wildcards):
    return [f for c in esca_heldout_corpora() for f in corpus_files(c)]


def esca_tabu3_inputs():
    return [f"results/esca/runs/tabu3/{c}.parquet" for c in ESCA["topics"]["corpora"]]


def esca_corpus_files(wildcards):
    return corpus_files(wildcards.esca_corpus)


def esca_corpus_dir_of(wildcards):
    return esca_corpus_dir(wildcards.esca_corpus)


def esca_tabu3_run_settings(wildcards):
    """Settings of ONE TabU3 fit (any corpus): the run settings it uses and the number of words kept
    per topic (not the list of corpora, nor the number of topics shown: the table picks those)."""
    t = ESCA["topics"]
    return {**{k: t["run"].get(k) for k in ("n_topics", "alpha", "beta", "n_iter", "threads")}, "n_words": t["n_words"]}


def esca_targets():
    out = []
    for fig in ["Fig1", "Fig2", "Fig3", "Fig4", "Fig5", "Fig6"]:
        out += [f"results/esca/figures/{fig}.png", f"results/esca/claims/ESCA-{fig}.json"]
    for tab in ["Tab1", "Tab2", "Throughput", "TabU1", "TabU2", "TabU3"]:
        out += [
            f"results/esca/tables/{tab}.csv",
            f"results/esca/tables/{tab}.md",
            f"results/esca/claims/ESCA-{tab}.json",
        ]
    return out


PAPER_TARGETS["esca"] = esca_targets
