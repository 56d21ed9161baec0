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
