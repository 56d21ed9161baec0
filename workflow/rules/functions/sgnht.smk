# Helper functions and constants of sgnht.smk (kept apart from the rules, as snakemake --lint asks).
SGNHT = config["sgnht"]
SGNHT_SYNTH = ["double_well", "known_variance", "normal_gamma"]


def sgnht_run_files(experiment, kind="summary"):
    return expand(
        "results/sgnht/runs/{experiment}/seed{seed}/{kind}.parquet",
        experiment=experiment,
        seed=SGNHT["seeds"],
        kind=kind,
    )


def sgnht_synthetic_settings(wildcards):
    return {
        "experiment": wildcards.experiment,
        "seed": int(wildcards.seed),
        "data_seed": SGNHT["data_seed"],
        "double_well": SGNHT["double_well"],
        "gaussian": SGNHT["gaussian"],
    }


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


def sgnht_ml_inputs(wildcards):
    if wildcards.task == "bnn":
        return {"mnist": "data/processed/mnist/mnist.npz"}
    if wildcards.task == "bpmf":
        return {"ratings": "data/processed/movielens/ratings.parquet"}
    return {"corpus": corpus_files(SGNHT["ml"]["lda"]["corpus"])}
