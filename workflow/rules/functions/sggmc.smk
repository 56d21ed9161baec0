# Helper functions and constants of sggmc.smk (kept apart from the rules, as snakemake --lint asks).
SGGMC = config["sggmc"]
SGGMC_STATIC_FIGURES = ["Fig1", "Fig2", "SFig1"]


def sggmc_targets():
    out = []
    for fig in SGGMC_STATIC_FIGURES:
        out += [f"results/sggmc/figures/{fig}.png", f"results/sggmc/claims/SGGMC-{fig}.json"]
    out += ["results/sggmc/tables/Tab1.md", "results/sggmc/claims/SGGMC-Tab1.json"]
    return out


PAPER_TARGETS["sggmc"] = sggmc_targets
