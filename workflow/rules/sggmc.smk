# SGGMC (Liu, Zhu & Song, NIPS 2016): the static items (Tab. 1, Figs. 1-2, SFig. 1 of App. D). Paper code:
# src/scalable_bayes_papers/sggmc/ (README.md there maps each item to its rule and functions).

include: "functions/sggmc.smk"


localrules:
    sggmc_static_figure,
    sggmc_tab1,


rule sggmc:
    input:
        sggmc_targets(),


# Static items (no sampling): rendered from the specs in src/scalable_bayes_papers/sggmc/static.py


rule sggmc_static_figure:
    """Fig. 1 (manifold and embedding schematic), Fig. 2 (SAM plate diagram) or SFig. 1 (App. D's data and
    posterior modes, computed from its formulas), and the claim."""
    input:
        code=paper_code("sggmc", "static", "figures", "claims"),
    output:
        fig=report("results/sggmc/figures/{sggmc_static}.png", caption="../report/sggmc_static.rst", category="sggmc"),
        claim="results/sggmc/claims/SGGMC-{sggmc_static}.json",
    wildcard_constraints:
        sggmc_static="|".join(SGGMC_STATIC_FIGURES),
    params:
        item="{sggmc_static}",
        profile=PROFILE,
    log:
        "logs/sggmc/static/{sggmc_static}.log",
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    conda:
        CONDA_ENV
    script:
        "../scripts/sggmc_static_figure.py"


rule sggmc_tab1:
    """Table 1 (Sec. 1): properties of D-MCMCs, from the spec."""
    input:
        code=paper_code("sggmc", "static", "tables", "claims"),
    output:
        csv="results/sggmc/tables/Tab1.csv",
        md="results/sggmc/tables/Tab1.md",
        claim="results/sggmc/claims/SGGMC-Tab1.json",
    params:
        profile=PROFILE,
    log:
        "logs/sggmc/static/Tab1.log",
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    conda:
        CONDA_ENV
    script:
        "../scripts/sggmc_tab1.py"
