# VMF paper (Nonnenmacher & Sahani 2024): special-function figures (Figs 1, 2, 4, 5), the document
# clustering sweep (Fig. 3) and the data-set table (Tab. 1). Compute rules write tidy parquet tables
# under results/vmf/runs/; plot rules read them and write the figure + claim.

include: "functions/vmf.smk"


rule vmf:
    input:
        vmf_targets(),


rule vmf_curves:
    conda:
        CONDA_ENV
    output:
        "results/vmf/runs/{fig}/curves.parquet",
    wildcard_constraints:
        fig="|".join(VMF_CURVE_FIGS),
    params:
        settings=lambda wc: VMF[wc.fig.lower()],
        psi_const=VMF["psi_const"],
    log:
        "logs/vmf/vmf_curves/{fig}.log",
    benchmark:
        "benchmarks/vmf/vmf_curves/{fig}.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    script:
        "../scripts/vmf_curves.py"


rule vmf_plot_curves:
    conda:
        CONDA_ENV
    input:
        plot_code=plotting_code("vmf"),
        table="results/vmf/runs/{fig}/curves.parquet",
    output:
        png=report("results/vmf/figures/{fig}.png", caption="../report/vmf_curves.rst", category="vmf"),
        pdf="results/vmf/figures/{fig}.pdf",
        claim="results/vmf/claims/VMF-{fig}.json",
    wildcard_constraints:
        fig="|".join(VMF_CURVE_FIGS),
    params:
        scale=lambda wc: vmf_scale(wc.fig),
        note="",
        true_k=None,
    log:
        "logs/vmf/vmf_plot_curves/{fig}.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/vmf_plot.py"


rule vmf_fig3_run:
    conda:
        CONDA_ENV
    input:
        lambda wc: corpus_files(wc.dataset),
    output:
        "results/vmf/runs/Fig3/{dataset}/seed{seed}.parquet",
    wildcard_constraints:
        dataset="|".join(VMF_TAB1_DATASETS),
        seed=r"\d+",
    params:
        settings=vmf_fig3_settings,
        corpus_dir=lambda wc: f"data/processed/{wc.dataset}",
    log:
        "logs/vmf/vmf_fig3_run/{dataset}_seed{seed}.log",
    benchmark:
        "benchmarks/vmf/vmf_fig3_run/{dataset}_seed{seed}.tsv"
    threads: 2
    resources:
        mem_mb=6000,
        runtime=120,
    script:
        "../scripts/vmf_fig3_run.py"


rule vmf_plot_fig3:
    conda:
        CONDA_ENV
    input:
        plot_code=plotting_code("vmf"),
        runs=expand("results/vmf/runs/Fig3/{dataset}/seed{seed}.parquet", dataset=VMF["fig3"]["datasets"],
                    seed=VMF["fig3"]["seeds"]),
    output:
        png=report("results/vmf/figures/{fig}.png", caption="../report/vmf_Fig3.rst", category="vmf"),
        pdf="results/vmf/figures/{fig}.pdf",
        claim="results/vmf/claims/VMF-{fig}.json",
        table="results/vmf/tables/{fig}_nmi_true_k.csv",
    wildcard_constraints:
        fig="Fig3",
    params:
        scale=vmf_scale("Fig3"),
        note="Bregman uses the closed forms psi~_1 / psi~'_2; tied M-steps maximise the tied likelihood "
        "(weighted mean resultant length) rather than averaging kappa as the authors' code does.",
        true_k=VMF["fig3"]["true_k"],
    log:
        "logs/vmf/vmf_plot_fig3/{fig}.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/vmf_plot.py"


rule vmf_tab1:
    conda:
        CONDA_ENV
    input:
        [f for ds in VMF["tab1"]["datasets"] for f in corpus_files(ds)],
    output:
        csv=report("results/vmf/tables/Tab1.csv", caption="../report/vmf_Tab1.rst", category="vmf"),
        md="results/vmf/tables/Tab1.md",
        claim="results/vmf/claims/VMF-Tab1.json",
    params:
        corpus_dirs=[f"data/processed/{ds}" for ds in VMF["tab1"]["datasets"]],
        scale=vmf_scale("Tab1"),
    log:
        "logs/vmf/vmf_tab1.log",
    threads: 1
    resources:
        mem_mb=4000,
        runtime=10,
    script:
        "../scripts/vmf_tab1.py"
