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
    input:
        code=code_inputs("scir_simplex_tune.py"),
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
        **cost_resources(scir_simplex_tune_cost),
    conda:
        CONDA_ENV
    script:
        "../scripts/scir_simplex_tune.py"


rule scir_simplex_runs:
    """SCIR, SGRLD and the exact sampler on one target for one seed, at every minibatch proportion."""
    input:
        tuning="results/scir/runs/simplex/{target}/tuning.parquet",
        code=code_inputs("scir_simplex_runs.py"),
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
        **cost_resources(scir_simplex_runs_cost),
    conda:
        CONDA_ENV
    script:
        "../scripts/scir_simplex_runs.py"


rule scir_fig1:
    input:
        code=code_inputs("scir_simplex_figure.py"),
        samples=scir_simplex_files("samples"),
    output:
        fig=report("results/scir/figures/Fig1.png", caption="../report/scir_fig1.rst", category="scir"),
        pdf="results/scir/figures/Fig1.pdf",
        claim="results/scir/claims/SCIR-Fig1.json",
    params:
        item="Fig1",
        profile=PROFILE,
        settings=SCIR["simplex"],
    log:
        "logs/scir/scir_fig1.log",
    resources:
        **light_resources(1000, 5),
    conda:
        CONDA_ENV
    script:
        "../scripts/scir_simplex_figure.py"


rule scir_fig2:
    input:
        code=code_inputs("scir_simplex_figure.py"),
        ks=scir_simplex_files("ks"),
    output:
        fig=report("results/scir/figures/Fig2.png", caption="../report/scir_fig2.rst", category="scir"),
        pdf="results/scir/figures/Fig2.pdf",
        claim="results/scir/claims/SCIR-Fig2.json",
    params:
        item="Fig2",
        profile=PROFILE,
        settings=SCIR["simplex"],
    log:
        "logs/scir/scir_fig2.log",
    resources:
        **light_resources(1000, 5),
    conda:
        CONDA_ENV
    script:
        "../scripts/scir_simplex_figure.py"


rule scir_runs:
    """One method x seed of the LDA (Fig. 3a, SFigA) or DP-mixture (Fig. 3b, SFigB) experiment -> trace."""
    input:
        corpus=scir_run_corpus,
        code=code_inputs("scir_runs.py"),
    output:
        "results/scir/runs/{exp}/{method}/seed{seed}.parquet",
    wildcard_constraints:
        exp="lda|dp",
        method="|".join(sorted(set(SCIR_LDA_METHODS + SCIR_DP_METHODS))),
        seed=r"\d+",
    params:
        settings=scir_run_settings,
    log:
        "logs/scir/scir_runs/{exp}_{method}_seed{seed}.log",
    benchmark:
        "benchmarks/scir/scir_runs/{exp}_{method}_seed{seed}.tsv"
    threads: lambda wc: SCIR[wc.exp].get("threads", 1)
    resources:
        **cost_resources(scir_runs_cost),
    conda:
        CONDA_ENV
    script:
        "../scripts/scir_runs.py"


rule scir_trace_figure:
    """Fig3a / SFigA (LDA) and Fig3b / SFigB (DP mixture) from every method and seed, and their claims."""
    input:
        code=code_inputs("scir_trace_figure.py"),
        traces=lambda wc: scir_trace_files("lda" if wc.item in ("Fig3a", "SFigA") else "dp"),
    output:
        fig=report("results/scir/figures/{item}.png", caption="../report/scir_traces.rst", category="scir"),
        pdf="results/scir/figures/{item}.pdf",
        claim="results/scir/claims/SCIR-{item}.json",
    wildcard_constraints:
        item="Fig3a|SFigA|Fig3b|SFigB",
    params:
        profile=PROFILE,
        settings=lambda wc: SCIR["lda" if wc.item in ("Fig3a", "SFigA") else "dp"],
    log:
        "logs/scir/scir_trace_figure/{item}.log",
    resources:
        **light_resources(1000, 5),
    conda:
        CONDA_ENV
    script:
        "../scripts/scir_trace_figure.py"
