# VMF paper (Nonnenmacher & Sahani 2024): special-function figures (Figs 1, 2, 4, 5), the document
# clustering sweep (Fig. 3) and the data-set table (Tab. 1). Paper code: src/scalable_bayes_papers/vmf/
# (runs -> claims, figures, tables; README.md there gives the choices). Compute rules (*_runs) write
# tidy parquet tables under results/vmf/runs/; figure and table rules read them and write the claim.

include: "functions/vmf.smk"


rule vmf:
    input:
        vmf_targets(),


rule vmf_curve_runs:
    conda:
        CONDA_ENV
    input:
        code=code_inputs("vmf_curve_runs.py"),
    output:
        "results/vmf/runs/{fig}/curves.parquet",
    wildcard_constraints:
        fig="|".join(VMF_CURVE_FIGS),
    params:
        settings=lambda wc: VMF[wc.fig.lower()],
        psi_const=VMF["psi_const"],
    log:
        "logs/vmf/vmf_curve_runs/{fig}.log",
    benchmark:
        "benchmarks/vmf/vmf_curve_runs/{fig}.tsv"
    threads: 1
    resources:
        **cost_resources(vmf_curve_runs_cost),
    script:
        "../scripts/vmf_curve_runs.py"


rule vmf_curve_figure:
    conda:
        CONDA_ENV
    input:
        code=code_inputs("vmf_curve_figure.py"),
        table="results/vmf/runs/{fig}/curves.parquet",
    output:
        png=report("results/vmf/figures/{fig}.png", caption="../report/vmf_curves.rst", category="vmf"),
        pdf="results/vmf/figures/{fig}.pdf",
        claim="results/vmf/claims/VMF-{fig}.json",
    wildcard_constraints:
        fig="|".join(VMF_CURVE_FIGS),
    params:
        settings=lambda wc: VMF[wc.fig.lower()],
        profile=PROFILE,
    log:
        "logs/vmf/vmf_curve_figure/{fig}.log",
    threads: 1
    resources:
        **light_resources(1000, 5),
    script:
        "../scripts/vmf_curve_figure.py"


rule vmf_fig3_runs:
    conda:
        CONDA_ENV
    input:
        lambda wc: corpus_files(vmf_fig3_base(wc.dataset)[0]),
        code=code_inputs("vmf_fig3_runs.py"),
    output:
        "results/vmf/runs/Fig3/{dataset}/seed{seed}.parquet",
    wildcard_constraints:
        dataset=VMF_FIG3_DATASET_RE,
        seed=r"\d+",
    params:
        settings=vmf_fig3_settings,
        corpus_dir=lambda wc: f"data/processed/{vmf_fig3_base(wc.dataset)[0]}",
    log:
        "logs/vmf/vmf_fig3_runs/{dataset}_seed{seed}.log",
    benchmark:
        "benchmarks/vmf/vmf_fig3_runs/{dataset}_seed{seed}.tsv"
    # one thread: the parallel E-step is a small part of a fit (news20 seed 0: 45 s on one thread, 51 s on two,
    # identical results), so a second core serves another job better
    threads: 1
    resources:
        **cost_resources(vmf_fig3_runs_cost),
    script:
        "../scripts/vmf_fig3_runs.py"


rule vmf_fig3:
    conda:
        CONDA_ENV
    input:
        code=code_inputs("vmf_fig3.py"),
        runs=expand("results/vmf/runs/Fig3/{dataset}/seed{seed}.parquet", dataset=VMF_FIG3_DATASETS,
                    seed=VMF["fig3"]["seeds"]),
    output:
        png=report("results/vmf/figures/{fig}.png", caption="../report/vmf_Fig3.rst", category="vmf"),
        pdf="results/vmf/figures/{fig}.pdf",
        claim="results/vmf/claims/VMF-{fig}.json",
        table="results/vmf/tables/{fig}_nmi_true_k.csv",
    wildcard_constraints:
        fig="Fig3",
    params:
        settings=VMF["fig3"],
        profile=PROFILE,
    log:
        "logs/vmf/vmf_fig3/{fig}.log",
    threads: 1
    resources:
        **light_resources(1000, 5),
    script:
        "../scripts/vmf_fig3.py"


rule vmf_tab1:
    conda:
        CONDA_ENV
    input:
        code=code_inputs("vmf_tab1.py"),
        corpora=[f for ds in VMF["tab1"]["datasets"] for f in corpus_files(ds)],
    output:
        csv=report("results/vmf/tables/Tab1.csv", caption="../report/vmf_Tab1.rst", category="vmf"),
        md="results/vmf/tables/Tab1.md",
        claim="results/vmf/claims/VMF-Tab1.json",
    params:
        corpus_dirs=[f"data/processed/{ds}" for ds in VMF["tab1"]["datasets"]],
        settings=VMF["tab1"],
        profile=PROFILE,
    log:
        "logs/vmf/vmf_tab1.log",
    threads: 1
    resources:
        **light_resources(4000, 10),
    script:
        "../scripts/vmf_tab1.py"
