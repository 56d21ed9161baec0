# SGGMC (Liu, Zhu & Song, NIPS 2016): the static items (Tab. 1, Figs. 1-2, SFig. 1 of App. D), the toy on the
# circle (Fig. 3) and the two-vMF mixture posterior (Fig. 4). Paper code: src/scalable_bayes_papers/sggmc/
# (README.md there maps each item to its rule and functions). Compute rules (*_runs, *_truth) write tidy
# tables under results/sggmc/runs/, one job per method x seed, and carry only their own job's settings.

include: "functions/sggmc.smk"


localrules:
    sggmc_static_figure,
    sggmc_tab1,


wildcard_constraints:
    sggmc_seed=r"\d+",


rule sggmc:
    input:
        sggmc_targets(),


rule sggmc_fig3_runs:
    """One method on the S^1 toy (Sec. 5.1, App. F.1) for one seed -> kept angles."""
    input:
        code=code_inputs("sggmc_fig3_runs.py"),
    output:
        "results/sggmc/runs/fig3/{method}/seed{sggmc_seed}.parquet",
    wildcard_constraints:
        method="|".join(SGGMC_FIG3_METHODS),
    params:
        settings=sggmc_fig3_run_settings,
    log:
        "logs/sggmc/fig3_runs/{method}~seed{sggmc_seed}.log",
    benchmark:
        "benchmarks/sggmc/fig3_runs/{method}~seed{sggmc_seed}.tsv"
    threads: 1
    resources:
        **cost_resources(sggmc_fig3_runs_cost),
    conda:
        CONDA_ENV
    script:
        "../scripts/sggmc_fig3_runs.py"


rule sggmc_fig4_runs:
    """GMC or SGGMC on the two-vMF mixture posterior (Sec. 5.2, App. F.2) for one seed -> kept (v1, v2)."""
    input:
        code=code_inputs("sggmc_fig4_runs.py"),
    output:
        "results/sggmc/runs/fig4/{method}/seed{sggmc_seed}.parquet",
    wildcard_constraints:
        method="|".join(SGGMC_FIG4_METHODS),
    params:
        settings=sggmc_fig4_run_settings,
    log:
        "logs/sggmc/fig4_runs/{method}~seed{sggmc_seed}.log",
    benchmark:
        "benchmarks/sggmc/fig4_runs/{method}~seed{sggmc_seed}.tsv"
    threads: 1
    resources:
        **cost_resources(sggmc_fig4_runs_cost),
    conda:
        CONDA_ENV
    script:
        "../scripts/sggmc_fig4_runs.py"


rule sggmc_fig4_truth:
    """The 'true' Fig. 4 posterior: the log posterior on a grid of angles (App. F.2)."""
    input:
        code=code_inputs("sggmc_fig4_truth.py"),
    output:
        "results/sggmc/runs/fig4/truth.parquet",
    params:
        settings=sggmc_fig4_truth_settings,
    log:
        "logs/sggmc/fig4_truth.log",
    threads: 1
    resources:
        **cost_resources(fixed_cost(30, 500)),
    conda:
        CONDA_ENV
    script:
        "../scripts/sggmc_fig4_truth.py"


rule sggmc_fig3:
    """Fig. 3: samples on the circle and histograms against the true density, and the claim (TV vs MCSE)."""
    input:
        code=code_inputs("sggmc_fig3.py"),
        runs=sggmc_run_files("fig3"),
    output:
        fig=report("results/sggmc/figures/Fig3.png", caption="../report/sggmc_fig3.rst", category="sggmc"),
        pdf="results/sggmc/figures/Fig3.pdf",
        claim="results/sggmc/claims/SGGMC-Fig3.json",
    params:
        profile=PROFILE,
        settings=SGGMC["fig3"],
    log:
        "logs/sggmc/figure/Fig3.log",
    threads: 1
    resources:
        **light_resources(1000, 5),
    conda:
        CONDA_ENV
    script:
        "../scripts/sggmc_fig3.py"


rule sggmc_fig4:
    """Fig. 4: marginal and joint posteriors against the grid truth, and the claim (mode weights, TV vs MCSE)."""
    input:
        code=code_inputs("sggmc_fig4.py"),
        runs=sggmc_run_files("fig4"),
        truth="results/sggmc/runs/fig4/truth.parquet",
    output:
        fig=report("results/sggmc/figures/Fig4.png", caption="../report/sggmc_fig4.rst", category="sggmc"),
        pdf="results/sggmc/figures/Fig4.pdf",
        claim="results/sggmc/claims/SGGMC-Fig4.json",
    params:
        profile=PROFILE,
        settings=SGGMC["fig4"],
    log:
        "logs/sggmc/figure/Fig4.log",
    threads: 1
    resources:
        **light_resources(2000, 5),
    conda:
        CONDA_ENV
    script:
        "../scripts/sggmc_fig4.py"


rule sggmc_fig5_runs:
    """One Fig. 5 series: SAM fitted by one method on one corpus for one seed, for a fixed time budget -> trace
    of test log-perplexity against wall time (Sec. 5.3, App. F.3)."""
    input:
        corpus=sggmc_fig5_corpus,
        code=code_inputs("sggmc_fig5_runs.py"),
    output:
        "results/sggmc/runs/fig5/{corpus}/{method}/seed{sggmc_seed}.parquet",
    wildcard_constraints:
        corpus="news20_different|wiki_sggmc",
        method="|".join(SGGMC_FIG5_METHODS),
    params:
        settings=sggmc_fig5_run_settings,
    log:
        "logs/sggmc/fig5_runs/{corpus}~{method}~seed{sggmc_seed}.log",
    benchmark:
        "benchmarks/sggmc/fig5_runs/{corpus}~{method}~seed{sggmc_seed}.tsv"
    threads: 1
    resources:
        **cost_resources(sggmc_fig5_runs_cost),
    conda:
        CONDA_ENV
    script:
        "../scripts/sggmc_fig5_runs.py"


rule sggmc_fig5:
    """Fig. 5: log-perplexity vs wall time of every method per corpus, and the claim (final ordering)."""
    input:
        code=code_inputs("sggmc_fig5.py"),
        runs=sggmc_fig5_files(),
    output:
        fig=report("results/sggmc/figures/Fig5.png", caption="../report/sggmc_fig5.rst", category="sggmc"),
        pdf="results/sggmc/figures/Fig5.pdf",
        claim="results/sggmc/claims/SGGMC-Fig5.json",
    params:
        profile=PROFILE,
        settings=SGGMC["fig5"],
    log:
        "logs/sggmc/figure/Fig5.log",
    threads: 1
    resources:
        **light_resources(1000, 5),
    conda:
        CONDA_ENV
    script:
        "../scripts/sggmc_fig5.py"


# Static items (no sampling): rendered from the specs in src/scalable_bayes_papers/sggmc/static.py


rule sggmc_static_figure:
    """Fig. 1 (manifold and embedding schematic), Fig. 2 (SAM plate diagram) or SFig. 1 (App. D's data and
    posterior modes, computed from its formulas), and the claim."""
    input:
        code=code_inputs("sggmc_static_figure.py"),
    output:
        fig=report("results/sggmc/figures/{sggmc_static}.png", caption="../report/sggmc_static.rst", category="sggmc"),
        pdf="results/sggmc/figures/{sggmc_static}.pdf",
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
        **light_resources(500, 5),
    conda:
        CONDA_ENV
    script:
        "../scripts/sggmc_static_figure.py"


rule sggmc_tab1:
    """Table 1 (Sec. 1): properties of D-MCMCs, from the spec."""
    input:
        code=code_inputs("sggmc_tab1.py"),
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
        **light_resources(500, 5),
    conda:
        CONDA_ENV
    script:
        "../scripts/sggmc_tab1.py"
