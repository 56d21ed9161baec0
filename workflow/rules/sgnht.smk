# SGNHT (Ding et al. 2014): synthetic experiments (Fig. 1, 2, SFig. 4-6, STab. 1) and the
# machine-learning applications (Fig. 3, STab. 2-3). Compute rules write tidy tables under
# results/sgnht/runs/; plot/table rules read them and write the claims.

include: "functions/sgnht.smk"


rule sgnht:
    input:
        sgnht_targets(),


rule sgnht_run_synthetic:
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
        "logs/sgnht/run_synthetic/{experiment}_seed{seed}.log",
    benchmark:
        "benchmarks/sgnht/run_synthetic/{experiment}_seed{seed}.tsv"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=60,
    conda:
        CONDA_ENV
    script:
        "../scripts/sgnht_run_synthetic.py"


rule sgnht_fig1:
    input:
        plot_code=plotting_code("sgnht"),
        summary=sgnht_run_files("double_well"),
        density=sgnht_run_files("double_well", "density"),
        traces=sgnht_run_files("double_well", "traces"),
    output:
        fig=report("results/sgnht/figures/Fig1.png", caption="../report/sgnht_fig1.rst", category="sgnht"),
        claim="results/sgnht/claims/SGNHT-Fig1.json",
    params:
        item="Fig1",
        profile=PROFILE,
        settings=SGNHT,
    log:
        "logs/sgnht/fig1/fig1.log",
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../scripts/sgnht_synthetic_items.py"


rule sgnht_sfig4:
    input:
        plot_code=plotting_code("sgnht"),
        summary=sgnht_run_files("double_well"),
        traces=sgnht_run_files("double_well", "traces"),
    output:
        fig=report("results/sgnht/figures/SFig4.png", caption="../report/sgnht_sfig4.rst", category="sgnht"),
        claim="results/sgnht/claims/SGNHT-SFig4.json",
    params:
        item="SFig4",
        profile=PROFILE,
        settings=SGNHT,
    log:
        "logs/sgnht/sfig4/sfig4.log",
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../scripts/sgnht_synthetic_items.py"


rule sgnht_fig2:
    input:
        plot_code=plotting_code("sgnht"),
        kv_summary=sgnht_run_files("known_variance"),
        kv_density=sgnht_run_files("known_variance", "density"),
        kv_traces=sgnht_run_files("known_variance", "traces"),
        ng_summary=sgnht_run_files("normal_gamma"),
    output:
        fig=report("results/sgnht/figures/Fig2.png", caption="../report/sgnht_fig2.rst", category="sgnht"),
        claim="results/sgnht/claims/SGNHT-Fig2.json",
    params:
        item="Fig2",
        profile=PROFILE,
        settings=SGNHT,
    log:
        "logs/sgnht/fig2/fig2.log",
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../scripts/sgnht_synthetic_items.py"


rule sgnht_sfig5:
    input:
        plot_code=plotting_code("sgnht"),
        kv_summary=sgnht_run_files("known_variance"),
        kv_traces=sgnht_run_files("known_variance", "traces"),
    output:
        fig=report("results/sgnht/figures/SFig5.png", caption="../report/sgnht_sfig5.rst", category="sgnht"),
        claim="results/sgnht/claims/SGNHT-SFig5.json",
    params:
        item="SFig5",
        profile=PROFILE,
        settings=SGNHT,
    log:
        "logs/sgnht/sfig5/sfig5.log",
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../scripts/sgnht_synthetic_items.py"


rule sgnht_sfig6:
    input:
        plot_code=plotting_code("sgnht"),
        ng_summary=sgnht_run_files("normal_gamma"),
        ng_density=sgnht_run_files("normal_gamma", "density"),
    output:
        fig=report("results/sgnht/figures/SFig6.png", caption="../report/sgnht_sfig6.rst", category="sgnht"),
        claim="results/sgnht/claims/SGNHT-SFig6.json",
    params:
        item="SFig6",
        profile=PROFILE,
        settings=SGNHT,
    log:
        "logs/sgnht/sfig6/sfig6.log",
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../scripts/sgnht_synthetic_items.py"


rule sgnht_stab1:
    input:
        plot_code=plotting_code("sgnht"),
        ng_summary=sgnht_run_files("normal_gamma"),
    output:
        csv=report("results/sgnht/tables/STab1.csv", caption="../report/sgnht_stab1.rst", category="sgnht"),
        md="results/sgnht/tables/STab1.md",
        claim="results/sgnht/claims/SGNHT-STab1.json",
    params:
        item="STab1",
        profile=PROFILE,
        settings=SGNHT,
    log:
        "logs/sgnht/stab1/stab1.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../scripts/sgnht_synthetic_items.py"


rule sgnht_run_ml:
    input:
        unpack(sgnht_ml_inputs),
    output:
        summary="results/sgnht/runs/ml/{task}/seed{seed}/summary.parquet",
        trace="results/sgnht/runs/ml/{task}/seed{seed}/trace.parquet",
    wildcard_constraints:
        task="bnn|bpmf|lda",
        seed=r"\d+",
    params:
        ml=SGNHT["ml"],
    log:
        "logs/sgnht/run_ml/{task}_seed{seed}.log",
    benchmark:
        "benchmarks/sgnht/run_ml/{task}_seed{seed}.tsv"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=240,
    conda:
        CONDA_ENV
    script:
        "../scripts/sgnht_run_ml.py"


rule sgnht_fig3:
    input:
        plot_code=plotting_code("sgnht"),
        summary=sgnht_ml_runs(),
    output:
        fig=report("results/sgnht/figures/Fig3.png", caption="../report/sgnht_fig3.rst", category="sgnht"),
        claim="results/sgnht/claims/SGNHT-Fig3.json",
    params:
        item="Fig3",
        profile=PROFILE,
        ml=SGNHT["ml"],
    log:
        "logs/sgnht/fig3/fig3.log",
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../scripts/sgnht_ml_items.py"


rule sgnht_stab2:
    input:
        plot_code=plotting_code("sgnht"),
        summary=sgnht_ml_runs(),
    output:
        csv=report("results/sgnht/tables/STab2.csv", caption="../report/sgnht_stab2.rst", category="sgnht"),
        md="results/sgnht/tables/STab2.md",
        claim="results/sgnht/claims/SGNHT-STab2.json",
    params:
        item="STab2",
        profile=PROFILE,
        ml=SGNHT["ml"],
    log:
        "logs/sgnht/stab2/stab2.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../scripts/sgnht_ml_items.py"


rule sgnht_stab3:
    input:
        plot_code=plotting_code("sgnht"),
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
        "logs/sgnht/stab3/stab3.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../scripts/sgnht_ml_items.py"
