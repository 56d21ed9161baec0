# SCIR (Baker, Fearnhead, Fox & Nemeth 2018): the sparse and dense Dirichlet posteriors (Fig. 1, 2), LDA on
# Wikipedia (Fig. 3a, SFigA) and the DP mixture on the Microsoft web data (Fig. 3b, SFigB). Paper code:
# src/scalable_bayes_papers/scir/ (runs -> claims, figures; README.md there gives the choices). Compute rules
# write tidy tables under results/scir/runs/, one job per target/method x seed.

include: "functions/scir.smk"


rule scir:
    input:
        scir_targets(),


rule scir_simplex_tune:
    """'Optimally tuned' step sizes of SCIR and SGRLD for one target (KS distance on a step-size grid)."""
    output:
        "results/scir/runs/simplex/{target}/tuning.parquet",
    wildcard_constraints:
        target="|".join(SCIR_TARGETS),
    params:
        settings=scir_tune_settings,
    log:
        "logs/scir/scir_simplex_tune/{target}.log",
    benchmark:
        "benchmarks/scir/scir_simplex_tune/{target}.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../scripts/scir_simplex_tune.py"


rule scir_simplex_runs:
    """SCIR, SGRLD and the exact sampler on one target for one seed, at every minibatch proportion."""
    input:
        tuning="results/scir/runs/simplex/{target}/tuning.parquet",
    output:
        ks="results/scir/runs/simplex/{target}/seed{seed}/ks.parquet",
        samples="results/scir/runs/simplex/{target}/seed{seed}/samples.parquet",
    wildcard_constraints:
        target="|".join(SCIR_TARGETS),
        seed=r"\d+",
    params:
        settings=scir_simplex_settings,
    log:
        "logs/scir/scir_simplex_runs/{target}_seed{seed}.log",
    benchmark:
        "benchmarks/scir/scir_simplex_runs/{target}_seed{seed}.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../scripts/scir_simplex_runs.py"


rule scir_fig1:
    input:
        code=paper_code("scir", "figures", "claims"),
        samples=scir_simplex_files("samples"),
    output:
        fig=report("results/scir/figures/Fig1.png", caption="../report/scir_fig1.rst", category="scir"),
        claim="results/scir/claims/SCIR-Fig1.json",
    params:
        item="Fig1",
        profile=PROFILE,
        settings=SCIR["simplex"],
    log:
        "logs/scir/scir_fig1.log",
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        CONDA_ENV
    script:
        "../scripts/scir_simplex_figure.py"


rule scir_fig2:
    input:
        code=paper_code("scir", "figures", "claims"),
        ks=scir_simplex_files("ks"),
    output:
        fig=report("results/scir/figures/Fig2.png", caption="../report/scir_fig2.rst", category="scir"),
        claim="results/scir/claims/SCIR-Fig2.json",
    params:
        item="Fig2",
        profile=PROFILE,
        settings=SCIR["simplex"],
    log:
        "logs/scir/scir_fig2.log",
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        CONDA_ENV
    script:
        "../scripts/scir_simplex_figure.py"
