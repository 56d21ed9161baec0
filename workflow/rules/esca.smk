# ESCA (Zaheer et al. 2016): LDA engines ESCA / CGS / CVB0 on real corpora (Fig. 2, Fig. 5, Fig. 6,
# throughput table, topic table TabU3, dataset table TabU2), SEM vs EM on a Gaussian mixture (Fig. 3)
# and the two-spin Ising table (TabU1). Compute rules write tidy tables under results/esca/runs/;
# plot/table rules read them and write the claims.

include: "functions/esca.smk"


wildcard_constraints:
    esca_exp="fig2|fig5|fig6|throughput",
    esca_method="|".join(ESCA_METHODS),
    esca_train="[a-z0-9_]+",
    esca_test="[a-z0-9_]+",
    esca_K=r"\d+",
    esca_beta=r"[0-9.e-]+",
    esca_threads=r"\d+",
    esca_seed=r"\d+",
    esca_scenario="good|bad",


rule esca:
    input:
        esca_targets(),


rule esca_run:
    input:
        train=esca_train_files,
        test=esca_test_files,
    output:
        "results/esca/runs/{esca_exp}/{esca_train}~{esca_test}/{esca_method}~K{esca_K}~beta{esca_beta}~t{esca_threads}/seed{esca_seed}.parquet",
    params:
        settings=esca_run_settings,
        train_dir=esca_train_dir,
        test_dir=esca_test_dir,
    log:
        "logs/esca/run/{esca_exp}/{esca_train}~{esca_test}/{esca_method}~K{esca_K}~beta{esca_beta}~t{esca_threads}~seed{esca_seed}.log",
    benchmark:
        "benchmarks/esca/run/{esca_exp}/{esca_train}~{esca_test}/{esca_method}~K{esca_K}~beta{esca_beta}~t{esca_threads}~seed{esca_seed}.tsv"
    threads: esca_run_threads
    resources:
        mem_mb=4000,
        runtime=60,
    conda:
        CONDA_ENV
    script:
        "../scripts/esca_run.py"


rule esca_mpi_run:
    """Distributed ESCA (scalable_bayes.inference.lda.distributed) under mpiexec; on a cluster the
    slurm profile maps resources.tasks to MPI tasks (set resources.mpi to "srun")."""
    input:
        train=esca_train_files,
    output:
        "results/esca/runs/mpi/{esca_train}~R{esca_ranks}.parquet",
    wildcard_constraints:
        esca_ranks=r"\d+",
    params:
        corpus_dir=esca_train_dir,
        args=esca_mpi_args,
        python=ESCA_PYTHON,
    log:
        "logs/esca/mpi_run/{esca_train}~R{esca_ranks}.log",
    benchmark:
        "benchmarks/esca/mpi_run/{esca_train}~R{esca_ranks}.tsv"
    threads: esca_mpi_ranks
    resources:
        mem_mb=4000,
        runtime=60,
        tasks=esca_mpi_ranks,
        mpi=ESCA_MPIEXEC,
    conda:
        CONDA_ENV
    shell:
        "{resources.mpi} -n {resources.tasks} {params.python} -m scalable_bayes.inference.lda.distributed "
        "--corpus {params.corpus_dir} --out {output} {params.args} --log {log} 2>> {log}"


rule esca_gmm_run:
    output:
        "results/esca/runs/fig3/{esca_scenario}/seed{esca_seed}.parquet",
    params:
        settings=esca_gmm_settings,
    log:
        "logs/esca/gmm_run/{esca_scenario}~seed{esca_seed}.log",
    benchmark:
        "benchmarks/esca/gmm_run/{esca_scenario}~seed{esca_seed}.tsv"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=30,
    conda:
        CONDA_ENV
    script:
        "../scripts/esca_gmm_run.py"


rule esca_fig2:
    input:
        plot_code=plotting_code("esca"),
        runs=esca_fig2_runs(),
    output:
        fig=report("results/esca/figures/Fig2.png", caption="../report/esca_fig2.rst", category="esca"),
        claim="results/esca/claims/ESCA-Fig2.json",
    params:
        item="Fig2",
        profile=PROFILE,
        settings=ESCA["fig2"],
    log:
        "logs/esca/plot/Fig2.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../scripts/esca_plot.py"


rule esca_fig3:
    input:
        plot_code=plotting_code("esca"),
        runs=expand("results/esca/runs/fig3/{scenario}/seed{seed}.parquet", scenario=["good", "bad"], seed=ESCA["fig3"]["seeds"]),
    output:
        fig=report("results/esca/figures/Fig3.png", caption="../report/esca_fig3.rst", category="esca"),
        claim="results/esca/claims/ESCA-Fig3.json",
    params:
        item="Fig3",
        profile=PROFILE,
        settings=ESCA["fig3"],
    log:
        "logs/esca/plot/Fig3.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../scripts/esca_plot.py"


rule esca_fig5:
    input:
        plot_code=plotting_code("esca"),
        runs=esca_fig5_runs(),
    output:
        fig=report("results/esca/figures/Fig5.png", caption="../report/esca_fig5.rst", category="esca"),
        claim="results/esca/claims/ESCA-Fig5.json",
    params:
        item="Fig5",
        profile=PROFILE,
        settings=ESCA["fig5"],
    log:
        "logs/esca/plot/Fig5.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../scripts/esca_plot.py"


rule esca_fig6:
    input:
        plot_code=plotting_code("esca"),
        runs=esca_fig6_runs(),
    output:
        fig=report("results/esca/figures/Fig6.png", caption="../report/esca_fig6.rst", category="esca"),
        claim="results/esca/claims/ESCA-Fig6.json",
    params:
        item="Fig6",
        profile=PROFILE,
        settings=ESCA["fig6"],
    log:
        "logs/esca/plot/Fig6.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../scripts/esca_plot.py"


rule esca_throughput_table:
    input:
        plot_code=plotting_code("esca"),
        runs=esca_throughput_runs(),
        mpi=esca_mpi_runs(),
    output:
        csv="results/esca/tables/Throughput.csv",
        md="results/esca/tables/Throughput.md",
        claim="results/esca/claims/ESCA-Throughput.json",
    params:
        item="Throughput",
        profile=PROFILE,
        settings=ESCA["throughput"],
    log:
        "logs/esca/table/Throughput.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../scripts/esca_tables.py"


rule esca_tabu1:
    input:
        plot_code=plotting_code("esca"),
    output:
        csv="results/esca/tables/TabU1.csv",
        md="results/esca/tables/TabU1.md",
        claim="results/esca/claims/ESCA-TabU1.json",
    params:
        item="TabU1",
        profile=PROFILE,
    log:
        "logs/esca/table/TabU1.log",
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    conda:
        CONDA_ENV
    script:
        "../scripts/esca_tables.py"


rule esca_tabu2:
    input:
        plot_code=plotting_code("esca"),
        corpora=esca_tabu2_inputs,
    output:
        csv="results/esca/tables/TabU2.csv",
        md="results/esca/tables/TabU2.md",
        claim="results/esca/claims/ESCA-TabU2.json",
    params:
        item="TabU2",
        profile=PROFILE,
        corpus_dirs=[esca_corpus_dir(c) for c in esca_heldout_corpora()],
    log:
        "logs/esca/table/TabU2.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    conda:
        CONDA_ENV
    script:
        "../scripts/esca_tables.py"


rule esca_tabu3:
    input:
        plot_code=plotting_code("esca"),
        corpora=esca_tabu3_inputs,
    output:
        csv="results/esca/tables/TabU3.csv",
        md="results/esca/tables/TabU3.md",
        claim="results/esca/claims/ESCA-TabU3.json",
    params:
        item="TabU3",
        profile=PROFILE,
        settings=ESCA["topics"],
        corpus_dirs=[esca_corpus_dir(c) for c in ESCA["topics"]["corpora"]],
    log:
        "logs/esca/table/TabU3.log",
    benchmark:
        "benchmarks/esca/table/TabU3.tsv"
    threads: 2
    resources:
        mem_mb=4000,
        runtime=30,
    conda:
        CONDA_ENV
    script:
        "../scripts/esca_tables.py"


# Static items (TARGETS 2.5: no computation; rendered from the specs in scalable_bayes.plotting.esca)


rule esca_static_fig1:
    input:
        plot_code=plotting_code("esca"),
    output:
        fig=report("results/esca/figures/Fig1.png", caption="../report/esca_fig1.rst", category="esca"),
        claim="results/esca/claims/ESCA-Fig1.json",
    params:
        item="Fig1",
        profile=PROFILE,
    log:
        "logs/esca/static/Fig1.log",
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    conda:
        CONDA_ENV
    script:
        "../scripts/esca_static.py"


rule esca_static_fig4:
    input:
        plot_code=plotting_code("esca"),
    output:
        fig=report("results/esca/figures/Fig4.png", caption="../report/esca_fig4.rst", category="esca"),
        claim="results/esca/claims/ESCA-Fig4.json",
    params:
        item="Fig4",
        profile=PROFILE,
    log:
        "logs/esca/static/Fig4.log",
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    conda:
        CONDA_ENV
    script:
        "../scripts/esca_static.py"


rule esca_static_table:
    input:
        plot_code=plotting_code("esca"),
    output:
        csv="results/esca/tables/{esca_static_tab}.csv",
        md="results/esca/tables/{esca_static_tab}.md",
        claim="results/esca/claims/ESCA-{esca_static_tab}.json",
    wildcard_constraints:
        esca_static_tab="Tab1|Tab2",
    params:
        item="{esca_static_tab}",
        profile=PROFILE,
    log:
        "logs/esca/static/{esca_static_tab}.log",
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    conda:
        CONDA_ENV
    script:
        "../scripts/esca_static.py"
