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


def scir_targets():
    out = []
    for fig in ["Fig1", "Fig2"]:
        out += [f"results/scir/figures/{fig}.png", f"results/scir/claims/SCIR-{fig}.json"]
    return out


PAPER_TARGETS["scir"] = scir_targets
