# Helper functions and constants of scir.smk (kept apart from the rules, as snakemake --lint asks).
SCIR = config["scir"]
SCIR_TARGETS = ["sparse", "dense"]


def scir_simplex_files(kind):
    return expand(
        "results/scir/runs/simplex/{target}/seed{seed}/{kind}.parquet",
        target=SCIR_TARGETS,
        seed=SCIR["seeds"],
        kind=kind,
    )


def scir_tune_settings(wildcards):
    """Settings of ONE tuning job (per target): the chain length, prior and grid; not the seeds or the
    minibatch proportions of the plotted runs."""
    s = SCIR["simplex"]
    return {k: s[k] for k in ("alpha", "n_iter", "burnin", "tune")}


def scir_simplex_settings(wildcards):
    """Settings of ONE simplex job (target x seed): the whole proportion grid of Fig. 2 (seconds of work),
    the prior and the chain length; the seed is a wildcard."""
    s = SCIR["simplex"]
    return {k: s[k] for k in ("alpha", "n_iter", "burnin", "fig1_batch", "proportions")}


SCIR_LDA_METHODS = ["SCIR", "SGRLD", "CGS"]
SCIR_DP_METHODS = ["SCIR", "SGRLD", "Gibbs"]


def scir_trace_files(exp):
    methods = SCIR_LDA_METHODS if exp == "lda" else SCIR_DP_METHODS
    return expand("results/scir/runs/{exp}/{method}/seed{seed}.parquet", exp=exp, method=methods, seed=SCIR["seeds"])


def scir_run_settings(wildcards):
    """Settings of ONE LDA or DP job (method x seed): the experiment's block without the other methods' step
    sizes, so tuning one method's step re-runs only that method's jobs."""
    s = {k: v for k, v in SCIR[wildcards.exp].items() if k not in ("activate", "corpus")}
    step = s.pop("step")
    exact = wildcards.method in ("CGS", "Gibbs")
    own = ("cgs_", "gibbs_")  # keys of the exact baselines only
    s = {k: v for k, v in s.items() if exact or not k.startswith(own)}
    if exact:
        for k in ("n_iter", "evaluate_every" if wildcards.exp == "lda" else "", "batch_size", "sweeps", "burn"):
            s.pop(k, None)
    else:
        s["step"] = {wildcards.method: step[wildcards.method]}
    return s


def scir_run_corpus(wildcards):
    return corpus_files(SCIR[wildcards.exp]["corpus"])


def scir_targets():
    out = []
    figs = ["Fig1", "Fig2"]
    if SCIR["lda"]["activate"]:
        figs += ["Fig3a", "SFigA"]
    if SCIR["dp"]["activate"]:
        figs += ["Fig3b", "SFigB"]
    for fig in figs:
        out += [f"results/scir/figures/{fig}.png", f"results/scir/claims/SCIR-{fig}.json"]
    return out


PAPER_TARGETS["scir"] = scir_targets


# ---- Cost models (calibrated on the quick run's benchmark files; paper scale: docs/paper-scale.md) ----
def scir_simplex_tune_cost(wildcards):
    """The step-size grid of one simplex target: 9 step sizes x 2 samplers x n_iter + burnin iterations of
    a 1,000-observation target (quick run, the paper's setting: 102-108 s, 730-924 MB; paper-scale run 119-129 s)."""
    s = SCIR["simplex"]
    scale = (s["n_iter"] + s["burnin"]) / 2000 * len(s["tune"]["step_sizes"]) / 9
    return Cost(COMPILE_CPU_S + 120 * scale, 950)


def scir_simplex_runs_cost(wildcards):
    """Fig. 1 and the proportion grid of Fig. 2 for one seed (quick run, the paper's setting: 8-38 s, 340 MB)."""
    s = SCIR["simplex"]
    scale = (s["n_iter"] + s["burnin"]) / 2000 * (len(s["proportions"]) + 1) / 10
    return Cost(COMPILE_CPU_S + 10 * scale, 400)


def scir_runs_cost(wildcards):
    """LDA at K = 50 (scaled linearly in K). SCIR, SGRLD: n_iter minibatches of batch_size documents with
    `sweeps` local Gibbs sweeps each, ~1.4e-7 CPU s per token visit, and the held-out evaluations
    (heldout_sweeps sweeps of the test documents), ~6e-8 CPU s per token visit, on 2 threads (fitted to the
    quick run, SGRLD 34 s, and the paper-scale run, SCIR/SGRLD 239-252 s). The exact collapsed Gibbs
    reference: cgs_iter sequential sweeps of the training split and its evaluations, ~1.2e-7 CPU s per token
    visit (paper-scale run: 218-235 s), the evaluations on the job's threads. Memory: the training split's
    token arrays, ~25 kB per document (quick: 611 MB for 10,989 documents; paper scale: 580-790 MB for
    20,729). DP mixture (msweb, the paper's sizes in both profiles): 5-10 s, 420 MB."""
    s = SCIR[wildcards.exp]
    if wildcards.exp == "dp":
        return Cost(COMPILE_CPU_S + 15 * s["n_iter"] / 1000, 450)
    tok = CORPUS_SIZE[s["corpus"]][2]
    docs = corpus_train_docs(s["corpus"], s.get("max_train_docs"))
    test = (s.get("max_test_docs") or 1000) * tok * s.get("heldout_sweeps", 20)
    K = s["n_topics"] / 50
    mem = BASE_MEM_MB + 0.025 * docs
    threads = s.get("threads", 1)
    if wildcards.method == "CGS":  # sequential sweeps; the held-out evaluations use the job's threads
        n_eval = s["cgs_iter"] // s["cgs_evaluate_every"] + 1
        sweeps, evals = 1.2e-7 * K * s["cgs_iter"] * docs * tok, 1.2e-7 * K * n_eval * test
        return Cost(COMPILE_CPU_S + sweeps + evals, mem, threads, COMPILE_CPU_S + sweeps + evals / threads)
    n_eval = s["n_iter"] // s["evaluate_every"] + 1
    work = 1.4e-7 * s["n_iter"] * s["batch_size"] * s["sweeps"] * tok + 6e-8 * n_eval * test
    return Cost(COMPILE_CPU_S + K * work, mem, threads)
