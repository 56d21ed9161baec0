# Helper functions and constants of sgnht.smk (kept apart from the rules, as snakemake --lint asks).
SGNHT = config["sgnht"]
SGNHT_SYNTH = ["double_well", "known_variance", "normal_gamma"]
SGNHT_ML_TASKS = ["bnn", "bpmf", "lda"]


def sgnht_run_files(experiment, kind="summary"):
    return expand(
        "results/sgnht/runs/{experiment}/seed{seed}/{kind}.parquet",
        experiment=experiment,
        seed=SGNHT["seeds"],
        kind=kind,
    )


def sgnht_synthetic_settings(wildcards):
    """Settings of ONE synthetic job (experiment x seed): that experiment's own block only (the seed
    is a wildcard; no seed list), so a new seed or a change to another experiment re-runs nothing here.
    The (h, A) grid of the Gaussian experiments runs inside the job and is its own setting."""
    if wildcards.experiment == "double_well":
        return {"double_well": SGNHT["double_well"]}
    return {"gaussian": SGNHT["gaussian"], "data_seed": SGNHT["data_seed"]}


def sgnht_figure_settings():
    """Settings of the synthetic figure/table rules (for their claims' scale): every synthetic block."""
    return {k: SGNHT[k] for k in ("seeds", "data_seed", "double_well", "gaussian")}


def sgnht_targets():
    out = []
    for fig in ["Fig1", "SFig4", "Fig2", "SFig5", "SFig6"]:
        out += [f"results/sgnht/figures/{fig}.png", f"results/sgnht/claims/SGNHT-{fig}.json"]
    out += ["results/sgnht/tables/STab1.csv", "results/sgnht/tables/STab1.md", "results/sgnht/claims/SGNHT-STab1.json"]
    if SGNHT["ml"]["activate"]:
        out += ["results/sgnht/figures/Fig3.png", "results/sgnht/claims/SGNHT-Fig3.json"]
        for tab in ["STab2", "STab3"]:
            out += [f"results/sgnht/tables/{tab}.csv", f"results/sgnht/tables/{tab}.md", f"results/sgnht/claims/SGNHT-{tab}.json"]
    return out


PAPER_TARGETS["sgnht"] = sgnht_targets


def sgnht_ml_runs(kind="summary"):
    return expand(
        "results/sgnht/runs/ml/{task}/seed{seed}/{kind}.parquet",
        task=SGNHT["ml"]["tasks"],
        seed=SGNHT["ml"]["seeds"],
        kind=kind,
    )


def sgnht_ml_settings(wildcards):
    """Settings of ONE ML job (task x seed): that task's own block ``sgnht.ml.<task>`` (its (a, eta) grid
    runs inside the job); not the ``ml`` block, whose seed list would re-run every job when a seed is added."""
    return SGNHT["ml"][wildcards.task]


def sgnht_ml_inputs(wildcards):
    if wildcards.task == "bnn":
        return {"mnist": "data/processed/mnist/mnist.npz"}
    if wildcards.task == "bpmf":
        return {"ratings": "data/processed/movielens/ratings.parquet"}
    return {"corpus": corpus_files(SGNHT["ml"]["lda"]["corpus"])}
