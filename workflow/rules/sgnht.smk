# SGNHT (Ding et al. 2014): synthetic experiments (Fig. 1, 2, SFig. 4-6, STab. 1) and the
# machine-learning applications (Fig. 3, STab. 2-3). Paper code: src/scalable_bayes_papers/sgnht/
# (runs -> claims, figures, tables; data for the stand-in splits; README.md there gives the choices).
# Compute rules write tidy tables under results/sgnht/runs/: sgnht_synthetic_runs one job per experiment x
# seed, sgnht_ml_runs one job per task x seed x (a, eta) cell, merged per task x seed by sgnht_ml_merge;
# figure and table rules read them and write the claims.

include: "functions/sgnht.smk"


rule sgnht:
    input:
        sgnht_targets(),


rule sgnht_synthetic_runs:
    input:
        code=code_inputs("sgnht_synthetic_runs.py"),
    output:
        summary="results/sgnht/runs/{experiment}/seed{seed}/summary.parquet",
        density="results/sgnht/runs/{experiment}/seed{seed}/density.parquet",
        traces="results/sgnht/runs/{experiment}/seed{seed}/traces.parquet",
    wildcard_constraints:
        experiment="|".join(SGNHT_SYNTH),
        seed=r"\d+",
    params:
        settings=sgnht_synthetic_settings,
    log:
        "logs/sgnht/sgnht_synthetic_runs/{experiment}_seed{seed}.log",
    benchmark:
        "benchmarks/sgnht/sgnht_synthetic_runs/{experiment}_seed{seed}.tsv"
    threads: 1
    resources:
        **cost_resources(sgnht_synthetic_runs_cost),
    conda:
        CONDA_ENV
    script:
        "../scripts/sgnht_synthetic_runs.py"


rule sgnht_fig1:
    input:
        code=code_inputs("sgnht_synthetic_figure.py"),
        summary=sgnht_run_files("double_well"),
        density=sgnht_run_files("double_well", "density"),
        traces=sgnht_run_files("double_well", "traces"),
    output:
        fig=report("results/sgnht/figures/Fig1.png", caption="../report/sgnht_fig1.rst", category="sgnht"),
        pdf="results/sgnht/figures/Fig1.pdf",
        claims=sgnht_claim_files("Fig1"),
    params:
        item="Fig1",
        profile=PROFILE,
        settings=sgnht_figure_settings(),
    log:
        "logs/sgnht/sgnht_fig1.log",
    resources:
        **light_resources(2000, 10),
    conda:
        CONDA_ENV
    script:
        "../scripts/sgnht_synthetic_figure.py"


rule sgnht_sfig4:
    input:
        code=code_inputs("sgnht_synthetic_figure.py"),
        summary=sgnht_run_files("double_well"),
        traces=sgnht_run_files("double_well", "traces"),
    output:
        fig=report("results/sgnht/figures/SFig4.png", caption="../report/sgnht_sfig4.rst", category="sgnht"),
        pdf="results/sgnht/figures/SFig4.pdf",
        claims=sgnht_claim_files("SFig4"),
    params:
        item="SFig4",
        profile=PROFILE,
        settings=sgnht_figure_settings(),
    log:
        "logs/sgnht/sgnht_sfig4.log",
    resources:
        **light_resources(2000, 10),
    conda:
        CONDA_ENV
    script:
        "../scripts/sgnht_synthetic_figure.py"


rule sgnht_fig2:
    input:
        code=code_inputs("sgnht_synthetic_figure.py"),
        kv_summary=sgnht_run_files("known_variance"),
        kv_density=sgnht_run_files("known_variance", "density"),
        kv_traces=sgnht_run_files("known_variance", "traces"),
        ng_summary=sgnht_run_files("normal_gamma"),
    output:
        fig=report("results/sgnht/figures/Fig2.png", caption="../report/sgnht_fig2.rst", category="sgnht"),
        pdf="results/sgnht/figures/Fig2.pdf",
        claims=sgnht_claim_files("Fig2"),
    params:
        item="Fig2",
        profile=PROFILE,
        settings=sgnht_figure_settings(),
    log:
        "logs/sgnht/sgnht_fig2.log",
    resources:
        **light_resources(2000, 10),
    conda:
        CONDA_ENV
    script:
        "../scripts/sgnht_synthetic_figure.py"


rule sgnht_sfig5:
    input:
        code=code_inputs("sgnht_synthetic_figure.py"),
        kv_summary=sgnht_run_files("known_variance"),
        kv_traces=sgnht_run_files("known_variance", "traces"),
    output:
        fig=report("results/sgnht/figures/SFig5.png", caption="../report/sgnht_sfig5.rst", category="sgnht"),
        pdf="results/sgnht/figures/SFig5.pdf",
        claims=sgnht_claim_files("SFig5"),
    params:
        item="SFig5",
        profile=PROFILE,
        settings=sgnht_figure_settings(),
    log:
        "logs/sgnht/sgnht_sfig5.log",
    resources:
        **light_resources(2000, 10),
    conda:
        CONDA_ENV
    script:
        "../scripts/sgnht_synthetic_figure.py"


rule sgnht_sfig6:
    input:
        code=code_inputs("sgnht_synthetic_figure.py"),
        ng_summary=sgnht_run_files("normal_gamma"),
        ng_density=sgnht_run_files("normal_gamma", "density"),
    output:
        fig=report("results/sgnht/figures/SFig6.png", caption="../report/sgnht_sfig6.rst", category="sgnht"),
        pdf="results/sgnht/figures/SFig6.pdf",
        claims=sgnht_claim_files("SFig6"),
    params:
        item="SFig6",
        profile=PROFILE,
        settings=sgnht_figure_settings(),
    log:
        "logs/sgnht/sgnht_sfig6.log",
    resources:
        **light_resources(2000, 10),
    conda:
        CONDA_ENV
    script:
        "../scripts/sgnht_synthetic_figure.py"


rule sgnht_stab1:
    input:
        code=code_inputs("sgnht_stab1.py"),
        ng_summary=sgnht_run_files("normal_gamma"),
    output:
        csv=report("results/sgnht/tables/STab1.csv", caption="../report/sgnht_stab1.rst", category="sgnht"),
        md="results/sgnht/tables/STab1.md",
        claim="results/sgnht/claims/SGNHT-STab1.json",
    params:
        item="STab1",
        profile=PROFILE,
        settings=sgnht_figure_settings(),
    log:
        "logs/sgnht/sgnht_stab1.log",
    resources:
        **light_resources(1000, 10),
    conda:
        CONDA_ENV
    script:
        "../scripts/sgnht_stab1.py"


# The decisive experiment for Fig. 2 panel 4 / STab. 1: the Normal-Gamma grid at the paper's 10^6 steps,
# 5 seeds, N x minibatch (block sgnht.tau_study; on in the paper profile; any profile builds it on request:
# snakemake --cores 1 results/sgnht/tables/TauStudy.md). One job per (N, minibatch, seed).
rule sgnht_tau_study_runs:
    input:
        code=code_inputs("sgnht_tau_study_runs.py"),
    output:
        summary="results/sgnht/runs/tau_study/N{n_data}_b{batch_size}/seed{seed}/summary.parquet",
    wildcard_constraints:
        n_data=r"\d+",
        batch_size=r"\d+",
        seed=r"\d+",
    params:
        settings=sgnht_tau_study_settings(),
    log:
        "logs/sgnht/sgnht_tau_study_runs/N{n_data}_b{batch_size}_seed{seed}.log",
    benchmark:
        "benchmarks/sgnht/sgnht_tau_study_runs/N{n_data}_b{batch_size}_seed{seed}.tsv"
    threads: 1
    resources:
        **cost_resources(sgnht_tau_study_runs_cost),
    conda:
        CONDA_ENV
    script:
        "../scripts/sgnht_tau_study_runs.py"


rule sgnht_tau_study:
    input:
        code=code_inputs("sgnht_tau_study.py"),
        summary=sgnht_tau_study_files(),
    output:
        csv="results/sgnht/tables/TauStudy.csv",
        md="results/sgnht/tables/TauStudy.md",
        claim="results/sgnht/claims/SGNHT-Fig2d-tau-study.json",
    params:
        profile=PROFILE,
        settings=SGNHT["tau_study"],
    log:
        "logs/sgnht/sgnht_tau_study.log",
    resources:
        **light_resources(1000, 10),
    conda:
        CONDA_ENV
    script:
        "../scripts/sgnht_tau_study.py"


# One job per grid cell (task, seed, a, eta), both methods of the cell (SGHMC, SGNHT) in it: they share the
# data preparation and give one benchmark per cell; the critical path is one cell's two chains (~25 min for
# LDA at the paper's 50,000 iterations, against ~3.2 h for the 16 chains of the whole grid in one job;
# requests from sgnht_ml_runs_cost: 2 chains x n_iter x the task's CPU seconds per iteration).
# a and eta in paths: Python's str of the float (round-trips exactly; as the ESCA rules' beta).
rule sgnht_ml_runs:
    input:
        unpack(sgnht_ml_inputs),
        code=code_inputs("sgnht_ml_runs.py"),
    output:
        summary="results/sgnht/runs/ml/{task}/seed{seed}/cells/a{a}~eta{eta}/summary.parquet",
        trace="results/sgnht/runs/ml/{task}/seed{seed}/cells/a{a}~eta{eta}/trace.parquet",
    wildcard_constraints:
        task="|".join(SGNHT_ML_TASKS),
        seed=r"\d+",
        a=SGNHT_FLOAT,
        eta=SGNHT_FLOAT,
    params:
        settings=sgnht_ml_cell_settings,
    log:
        "logs/sgnht/sgnht_ml_runs/{task}_seed{seed}_a{a}~eta{eta}.log",
    benchmark:
        "benchmarks/sgnht/sgnht_ml_runs/{task}_seed{seed}_a{a}~eta{eta}.tsv"
    threads: 1
    resources:
        **cost_resources(sgnht_ml_runs_cost),
    conda:
        CONDA_ENV
    script:
        "../scripts/sgnht_ml_runs.py"


# The cells of one (task, seed), concatenated in grid order (a-major): the tables sgnht_fig3, sgnht_stab2 and
# sgnht_stab3 read. No params: the grid is its inputs, so a new cell re-runs only this merge.
rule sgnht_ml_merge:
    input:
        code=code_inputs("sgnht_ml_merge.py"),
        summary=sgnht_ml_cell_files("summary"),
        trace=sgnht_ml_cell_files("trace"),
    output:
        summary="results/sgnht/runs/ml/{task}/seed{seed}/summary.parquet",
        trace="results/sgnht/runs/ml/{task}/seed{seed}/trace.parquet",
    wildcard_constraints:
        task="|".join(SGNHT_ML_TASKS),
        seed=r"\d+",
    log:
        "logs/sgnht/sgnht_ml_merge/{task}_seed{seed}.log",
    threads: 1
    resources:
        **cost_resources(sgnht_ml_merge_cost),
    conda:
        CONDA_ENV
    script:
        "../scripts/sgnht_ml_merge.py"


rule sgnht_fig3:
    input:
        code=code_inputs("sgnht_fig3.py"),
        summary=sgnht_ml_runs(),
    output:
        fig=report("results/sgnht/figures/Fig3.png", caption="../report/sgnht_fig3.rst", category="sgnht"),
        pdf="results/sgnht/figures/Fig3.pdf",
        claims=sgnht_claim_files("Fig3"),
    params:
        item="Fig3",
        profile=PROFILE,
        ml=SGNHT["ml"],
    log:
        "logs/sgnht/sgnht_fig3.log",
    resources:
        **light_resources(2000, 10),
    conda:
        CONDA_ENV
    script:
        "../scripts/sgnht_fig3.py"


rule sgnht_stab2:
    input:
        code=code_inputs("sgnht_ml_table.py"),
        summary=sgnht_ml_runs(),
        trace=sgnht_ml_runs("trace"),
    output:
        csv=report("results/sgnht/tables/STab2.csv", caption="../report/sgnht_stab2.rst", category="sgnht"),
        md="results/sgnht/tables/STab2.md",
        claim="results/sgnht/claims/SGNHT-STab2.json",
    params:
        item="STab2",
        profile=PROFILE,
        ml=SGNHT["ml"],
    log:
        "logs/sgnht/sgnht_stab2.log",
    resources:
        **light_resources(1000, 10),
    conda:
        CONDA_ENV
    script:
        "../scripts/sgnht_ml_table.py"


rule sgnht_stab3:
    input:
        code=code_inputs("sgnht_ml_table.py"),
        summary=sgnht_ml_runs(),
    output:
        csv=report("results/sgnht/tables/STab3.csv", caption="../report/sgnht_stab3.rst", category="sgnht"),
        md="results/sgnht/tables/STab3.md",
        claim="results/sgnht/claims/SGNHT-STab3.json",
    params:
        item="STab3",
        profile=PROFILE,
        ml=SGNHT["ml"],
    log:
        "logs/sgnht/sgnht_stab3.log",
    resources:
        **light_resources(1000, 10),
    conda:
        CONDA_ENV
    script:
        "../scripts/sgnht_ml_table.py"
