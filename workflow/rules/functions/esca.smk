# Helper functions and constants of esca.smk (kept apart from the rules, as snakemake --lint asks).
import sys

# the run tables' paths (shared with tools/pool_claims.py); CGS and CVB0 sweeps are sequential
from scalable_bayes_papers.esca.layout import PARALLEL_METHODS as ESCA_PARALLEL_METHODS
from scalable_bayes_papers.esca.layout import fig2_run_paths, throughput_run_paths
from scalable_bayes_papers.esca.layout import run_path as esca_run_path

ESCA = config["esca"]
ESCA_PYTHON = sys.executable
ESCA_MPIEXEC = str(Path(sys.executable).with_name("mpiexec")) if Path(sys.executable).with_name("mpiexec").exists() else "mpiexec"
ESCA_METHODS = ["ESCA", "ESCA_plain", "CGS", "CVB0", "tomotopy"]


def esca_fig2_inputs():
    return fig2_run_paths(ESCA)


def esca_throughput_inputs():
    return throughput_run_paths(ESCA)


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
        f"--seed {SEED_OFFSET}",  # 0, as the throughput rows' seed; a replication's moves with them
    ]
    if SEED_OFFSET:  # the document subsamples' fixed seeds (esca/data.py), as in esca_lda_run_settings
        args.append(f"--seed-offset {SEED_OFFSET}")
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
    repeats = int(ESCA[wildcards.esca_exp].get("timing_repeats", 1))
    if wildcards.esca_exp == "throughput" and wildcards.esca_method in ESCA_PARALLEL_METHODS and repeats > 1:
        run["timing_repeats"] = repeats  # the timed engines only (CGS only sets the target); absent when 1
    return with_seed_offset(run)  # the document subsamples' fixed seeds (esca/data.py) move with it


def esca_corpus_dir(name):
    return f"data/processed/{name}"


def esca_train_dir(wildcards):
    return esca_corpus_dir(wildcards.esca_train)


def esca_test_dir(wildcards):
    return esca_corpus_dir(wildcards.esca_test)


def esca_lda_run_threads(wildcards):
    """Cores of one LDA run: its thread count for the parallel engines; CGS and CVB0 sweep sequentially and
    ask for one core (their held-out evaluations, run with the path's thread count, share it)."""
    return int(wildcards.esca_threads) if wildcards.esca_method in ESCA_PARALLEL_METHODS else 1


# Cost of one LDA run, predicted from its settings (the corpora are not built when the DAG is; their
# sizes: CORPUS_SIZE in functions/data.smk).
# CPU seconds per training token and iteration at K topics (benchmarks/README_lda.md, quiet machine, one
# thread: ESCA 9.0M tok/s at K = 100, 2.4-3.7M at K = 1000; tomotopy 9.1M / 0.96M; CGS 3.7-3.9M and CVB0
# 3.0M at K = 100, their sweeps O(K) per token); the parallel engines spread the same CPU time over their
# threads. CVB0 with its responsibilities in half precision (gamma_dtype "auto" above 8 GiB of float32
# responsibilities) costs 1.6-1.7x its float32 fit at K = 1000 (1.7-2.5x at K = 100; measured on the loaded VM,
# CVB0 docstring): 5.6 ns x K.
# The held-out fold-in is a dense O(K) Gibbs sweep (~1 ns x K per token). Paper scale, measured: Fig. 6's
# ESCA_plain at K = 100 from the whole Wikipedia training split (75 iterations, 10,000 Reuters test documents)
# 193 CPU s against 2.6 ns x K's 383 s predicted: its rate is 1.5 ns x K (with margin).
ESCA_SEC_PER_TOKEN = {"ESCA": lambda K: 80e-9 + 0.34e-9 * K, "tomotopy": lambda K: max(110e-9, 1.05e-9 * K),
                      "CGS": lambda K: 2.6e-9 * K, "ESCA_plain": lambda K: 1.5e-9 * K, "CVB0": lambda K: 3.3e-9 * K,
                      "CVB0_half": lambda K: 5.6e-9 * K}


def esca_cvb0_gamma_bytes(wildcards):
    """Bytes per (entry, topic) of one CVB0 run's responsibilities, as CVB0(gamma_dtype="auto") decides on the
    corpus's non-zeros and K (CVB0.resolve_gamma_dtype: float32, 4 bytes, up to 8 GiB; half precision above)."""
    from scalable_bayes.inference.lda import CVB0

    s = esca_lda_run_settings(wildcards)
    nnz = corpus_train_docs(wildcards.esca_train, s.get("max_train_docs")) * CORPUS_SIZE[wildcards.esca_train][1]
    return 2 if CVB0.resolve_gamma_dtype(nnz, s["n_topics"]) == "float16" else 4


def esca_lda_run_mem_mb(wildcards):
    """Peak memory (MB) of one LDA run. CVB0 keeps one gamma per (document, word) entry and topic (nnz x K x
    4 bytes in float32, 2 in half precision: esca_cvb0_gamma_bytes) and dense float64 document-topic counts
    (docs x K x 8), with CORPUS_SIZE's upper bounds; measured peak RSS of CVB0 on Fig. 2's paper-scale Wikipedia training split (20,443 documents,
    6.61M entries; one sweep and a 2,000-document held-out evaluation): 3,108 MiB at K = 200, 6,983 MiB at
    K = 500, i.e. 525 MiB + 12.9 MiB x K (the state's 12.8 MiB x K plus the evaluation's copies of the
    topic-word counts), 13.1 GiB (14,090 MB) extrapolated to K = 1000, where this model predicts 14,497 MB.
    The sampling engines keep their token arrays (~30 bytes per token) and counts (~8 bytes per (document or
    word) and topic): at most 670 MB in the quick run."""
    s = esca_lda_run_settings(wildcards)
    nnz_doc, tok_doc = CORPUS_SIZE[wildcards.esca_train][1:]
    docs = corpus_train_docs(wildcards.esca_train, s.get("max_train_docs"))
    K = s["n_topics"]
    if wildcards.esca_method == "CVB0":
        return BASE_MEM_MB + 300 + docs * K * (nnz_doc * esca_cvb0_gamma_bytes(wildcards) + 8) / 1e6
    return BASE_MEM_MB + 300 + 30e-6 * docs * tok_doc + 8e-6 * K * (docs + 10000)


def esca_lda_runs_cost(wildcards):
    """CPU: training sweeps (times the timing repeats of a throughput job) + held-out evaluations at the
    per-token costs above (+ compilation); threads: the job's for ESCA and tomotopy, one for the sequential
    CGS and CVB0 sweeps."""
    s = esca_lda_run_settings(wildcards)
    K, n_iter = s["n_topics"], s["n_iter"]
    train = corpus_train_docs(wildcards.esca_train, s.get("max_train_docs")) * CORPUS_SIZE[wildcards.esca_train][2]
    test_docs = s.get("max_test_docs") or corpus_train_docs(wildcards.esca_test)
    test = test_docs * CORPUS_SIZE[wildcards.esca_test][2]
    n_eval = n_iter // max(1, s.get("evaluate_every") or n_iter) + 1
    method = wildcards.esca_method
    if method == "CVB0" and esca_cvb0_gamma_bytes(wildcards) == 2:
        method = "CVB0_half"
    sec = train * n_iter * ESCA_SEC_PER_TOKEN[method](K) * s.get("timing_repeats", 1) \
        + n_eval * s.get("heldout_sweeps", 20) * test * 1e-9 * K
    return Cost(COMPILE_CPU_S + sec, esca_lda_run_mem_mb(wildcards), esca_lda_run_threads(wildcards))


def esca_throughput_mpi_cost(wildcards):
    """R ranks of one thread, each sweeping 1/R of the throughput run's corpus with ESCA (the rate above) and
    holding a copy of the topic-word counts; the per-job memory is R x one rank's."""
    r = ESCA["throughput"]["run"]
    R = int(wildcards.esca_ranks)
    train = corpus_train_docs(wildcards.esca_train, r.get("max_train_docs")) * CORPUS_SIZE[wildcards.esca_train][2]
    sec = train * r["n_iter"] * ESCA_SEC_PER_TOKEN["ESCA"](r["n_topics"])
    return Cost(R * COMPILE_CPU_S + 1.5 * sec, R * (BASE_MEM_MB + 250), R)


def esca_fig3_runs_cost(wildcards):
    """EM and SEM on the Gaussian mixture: ~4e-8 s per (point, component, iteration) over every severity
    and restart (quick run: 10,000 points, 30 components, 100 iterations, 3 severities, 3 restarts: 11 s),
    ~1 kB per training point."""
    f = ESCA["fig3"]
    work = f["n_train"] * f["n_components"] * f["n_iter"] * (len(f["severities"]) + 1) * f["n_restarts"]
    return Cost(10 + 4e-8 * work, BASE_MEM_MB + 1e-3 * f["n_train"])


def esca_tabu3_runs_cost(wildcards):
    """ESCA on the whole training split of one corpus (TabU3), at the per-token rate above."""
    r = ESCA["topics"]["run"]
    docs = corpus_train_docs(wildcards.esca_corpus)
    tok = docs * CORPUS_SIZE[wildcards.esca_corpus][2]
    K = r["n_topics"]
    return Cost(COMPILE_CPU_S + tok * r["n_iter"] * ESCA_SEC_PER_TOKEN["ESCA"](K),
                BASE_MEM_MB + 300 + 30e-6 * tok + 8e-6 * K * (docs + 10000), r.get("threads") or 1)


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
    return with_seed_offset({**{k: t["run"].get(k) for k in ("n_topics", "alpha", "beta", "n_iter", "threads")},
                             "n_words": t["n_words"]})  # the fit's seed (0) moves with it


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
