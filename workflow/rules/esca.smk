# ESCA (Zaheer et al. 2016): LDA engines ESCA / CGS / CVB0 on real corpora (Fig. 2, Fig. 5, Fig. 6,
# throughput table, topic table TabU3, dataset table TabU2), SEM vs EM on a Gaussian mixture (Fig. 3)
# and the two-spin Ising table (TabU1). Paper code: src/scalable_bayes_papers/esca/ (README.md there
# maps each item to its rule and functions). Compute rules (*_runs) write tidy tables under
# results/esca/runs/ and carry only their own job's settings; figure/table rules read them, take the
# paper's figures/tables/claims modules as inputs, and write the claims.

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
    esca_corpus="[a-z0-9_]+",


rule esca:
    input:
        esca_targets(),


rule esca_lda_runs:
    """One LDA engine on one (train, held-out) corpus pair: the runs of Fig. 2, Fig. 5, Fig. 6 and the
    throughput table (the experiment is the first path component)."""
    input:
        train=esca_train_files,
        test=esca_test_files,
        code=code_inputs("esca_lda_runs.py"),
    output:
        "results/esca/runs/{esca_exp}/{esca_train}~{esca_test}/{esca_method}~K{esca_K}~beta{esca_beta}~t{esca_threads}/seed{esca_seed}.parquet",
    params:
        settings=esca_lda_run_settings,
        train_dir=esca_train_dir,
        test_dir=esca_test_dir,
    log:
        "logs/esca/lda_runs/{esca_exp}/{esca_train}~{esca_test}/{esca_method}~K{esca_K}~beta{esca_beta}~t{esca_threads}~seed{esca_seed}.log",
    benchmark:
        "benchmarks/esca/lda_runs/{esca_exp}/{esca_train}~{esca_test}/{esca_method}~K{esca_K}~beta{esca_beta}~t{esca_threads}~seed{esca_seed}.tsv"
    threads: esca_lda_run_threads
    resources:
        **cost_resources(esca_lda_runs_cost),
    conda:
        CONDA_ENV
    script:
        "../scripts/esca_lda_runs.py"


rule esca_throughput_mpi_runs:
    """Distributed ESCA rows of the throughput table (python -m scalable_bayes_papers.esca.mpi_run):
    R ranks of one thread each. Locally `mpiexec -n R` on R of --cores; under Slurm the job asks for
    R tasks of one CPU each (sbatch --ntasks=R --cpus-per-task=1, on any nodes) and the slurm profile
    sets resources.mpi to the launcher inside the allocation (`srun --mpi=pmi2`). mpi_run checks that
    it got an MPI job of R ranks (--ranks) and fails otherwise."""
    input:
        train=esca_train_files,
        code=code_inputs("scalable_bayes_papers.esca.mpi_run"),
    output:
        "results/esca/runs/mpi/{esca_train}~R{esca_ranks}.parquet",
    wildcard_constraints:
        esca_ranks=r"\d+",
    params:
        corpus_dir=esca_train_dir,
        args=esca_throughput_mpi_args,
        python=ESCA_PYTHON,
    log:
        "logs/esca/throughput_mpi_runs/{esca_train}~R{esca_ranks}.log",
    benchmark:
        "benchmarks/esca/throughput_mpi_runs/{esca_train}~R{esca_ranks}.tsv"
    threads: esca_throughput_mpi_ranks
    resources:
        **cost_resources(esca_throughput_mpi_cost),
        tasks=esca_throughput_mpi_ranks,
        cpus_per_task=1,
        mpi=ESCA_MPIEXEC,
    conda:
        CONDA_ENV
    shell:
        "{resources.mpi} -n {resources.tasks} {params.python} -m scalable_bayes_papers.esca.mpi_run "
        "--ranks {resources.tasks} --corpus {params.corpus_dir} --out {output} {params.args} --log {log} 2>> {log}"


rule esca_fig3_runs:
    """On the synthetic Gaussian mixture of one seed: EM from k-means++ restarts, SEM and EM from starts
    of every initialisation severity."""
    input:
        code=code_inputs("esca_fig3_runs.py"),
    output:
        "results/esca/runs/fig3/seed{esca_seed}.parquet",
    params:
        settings=esca_fig3_run_settings,
    log:
        "logs/esca/fig3_runs/seed{esca_seed}.log",
    benchmark:
        "benchmarks/esca/fig3_runs/seed{esca_seed}.tsv"
    threads: 1
    resources:
        **cost_resources(esca_fig3_runs_cost),
    conda:
        CONDA_ENV
    script:
        "../scripts/esca_fig3_runs.py"


rule esca_tabu3_runs:
    """ESCA on the whole train split of one corpus: the top words of every topic (TabU3)."""
    input:
        corpus=esca_corpus_files,
        code=code_inputs("esca_tabu3_runs.py"),
    output:
        "results/esca/runs/tabu3/{esca_corpus}.parquet",
    params:
        settings=esca_tabu3_run_settings,
        corpus_dir=esca_corpus_dir_of,
    log:
        "logs/esca/tabu3_runs/{esca_corpus}.log",
    benchmark:
        "benchmarks/esca/tabu3_runs/{esca_corpus}.tsv"
    threads: ESCA["topics"]["run"]["threads"]
    resources:
        **cost_resources(esca_tabu3_runs_cost),
    conda:
        CONDA_ENV
    script:
        "../scripts/esca_tabu3_runs.py"


rule esca_fig2:
    """Held-out LL vs iterations and wall time, ESCA vs CGS vs CVB0 (Sec. 4)."""
    input:
        code=code_inputs("esca_figure.py"),
        runs=esca_fig2_inputs(),
    output:
        fig=report("results/esca/figures/Fig2.png", caption="../report/esca_fig2.rst", category="esca"),
        pdf="results/esca/figures/Fig2.pdf",
        claim="results/esca/claims/ESCA-Fig2.json",
    params:
        item="Fig2",
        profile=PROFILE,
        settings=ESCA["fig2"],
    log:
        "logs/esca/figure/Fig2.log",
    threads: 1
    resources:
        **light_resources(1000, 10),
    conda:
        CONDA_ENV
    script:
        "../scripts/esca_figure.py"


rule esca_fig3:
    """SEM vs EM on a 2-D Gaussian mixture, against the spread of EM restarts, over initialisation severities (App. A)."""
    input:
        code=code_inputs("esca_figure.py"),
        runs=expand("results/esca/runs/fig3/seed{seed}.parquet", seed=ESCA["fig3"]["seeds"]),
    output:
        fig=report("results/esca/figures/Fig3.png", caption="../report/esca_fig3.rst", category="esca"),
        pdf="results/esca/figures/Fig3.pdf",
        claim="results/esca/claims/ESCA-Fig3.json",
    params:
        item="Fig3",
        profile=PROFILE,
        settings=ESCA["fig3"],
    log:
        "logs/esca/figure/Fig3.log",
    threads: 1
    resources:
        **light_resources(1000, 10),
    conda:
        CONDA_ENV
    script:
        "../scripts/esca_figure.py"


rule esca_fig5:
    """Plain SCA vs sparse + alias ESCA: perplexity vs time and iterations (App. G)."""
    input:
        code=code_inputs("esca_figure.py"),
        runs=esca_fig5_inputs(),
    output:
        fig=report("results/esca/figures/Fig5.png", caption="../report/esca_fig5.rst", category="esca"),
        pdf="results/esca/figures/Fig5.pdf",
        claim="results/esca/claims/ESCA-Fig5.json",
    params:
        item="Fig5",
        profile=PROFILE,
        settings=ESCA["fig5"],
    log:
        "logs/esca/figure/Fig5.log",
    threads: 1
    resources:
        **light_resources(1000, 10),
    conda:
        CONDA_ENV
    script:
        "../scripts/esca_figure.py"


rule esca_fig6:
    """Cross-corpus perplexity vs iterations, time, K and beta (App. G)."""
    input:
        code=code_inputs("esca_figure.py"),
        runs=esca_fig6_inputs(),
    output:
        fig=report("results/esca/figures/Fig6.png", caption="../report/esca_fig6.rst", category="esca"),
        pdf="results/esca/figures/Fig6.pdf",
        claim="results/esca/claims/ESCA-Fig6.json",
    params:
        item="Fig6",
        profile=PROFILE,
        settings=ESCA["fig6"],
    log:
        "logs/esca/figure/Fig6.log",
    threads: 1
    resources:
        **light_resources(1000, 10),
    conda:
        CONDA_ENV
    script:
        "../scripts/esca_figure.py"


rule esca_throughput:
    """Tokens/s of each engine at each thread count, and of ESCA over MPI (Sec. 4 throughput claim)."""
    input:
        code=code_inputs("esca_throughput.py"),
        runs=esca_throughput_inputs(),
        mpi=esca_throughput_mpi_inputs(),
    output:
        csv="results/esca/tables/Throughput.csv",
        md="results/esca/tables/Throughput.md",
        claim="results/esca/claims/ESCA-Throughput.json",
    params:
        profile=PROFILE,
        quality_tol=ESCA["throughput"].get("quality_tol", 0.05),
    log:
        "logs/esca/table/Throughput.log",
    threads: 1
    resources:
        **light_resources(1000, 10),
    conda:
        CONDA_ENV
    script:
        "../scripts/esca_throughput.py"


rule esca_tabu1:
    """Two-spin Ising model under synchronous vs sequential Gibbs (Sec. 2.5): exact, no run."""
    input:
        code=code_inputs("esca_tabu1.py"),
    output:
        csv="results/esca/tables/TabU1.csv",
        md="results/esca/tables/TabU1.md",
        claim="results/esca/claims/ESCA-TabU1.json",
    params:
        profile=PROFILE,
    log:
        "logs/esca/table/TabU1.log",
    threads: 1
    resources:
        **light_resources(500, 5),
    conda:
        CONDA_ENV
    script:
        "../scripts/esca_tabu1.py"


rule esca_tabu2:
    """The paper's data sets (Sec. 4) beside the stand-in corpora of this run."""
    input:
        code=code_inputs("esca_tabu2.py"),
        corpora=esca_tabu2_inputs,
    output:
        csv="results/esca/tables/TabU2.csv",
        md="results/esca/tables/TabU2.md",
        claim="results/esca/claims/ESCA-TabU2.json",
    params:
        profile=PROFILE,
        corpus_dirs=[esca_corpus_dir(c) for c in esca_heldout_corpora()],
    log:
        "logs/esca/table/TabU2.log",
    threads: 1
    resources:
        **light_resources(2000, 5),
    conda:
        CONDA_ENV
    script:
        "../scripts/esca_tabu2.py"


rule esca_tabu3:
    """Top words of the first ESCA topics per corpus (App. G), from the esca_tabu3_runs tables."""
    input:
        code=code_inputs("esca_tabu3.py"),
        runs=esca_tabu3_inputs(),
    output:
        csv="results/esca/tables/TabU3.csv",
        md="results/esca/tables/TabU3.md",
        claim="results/esca/claims/ESCA-TabU3.json",
    params:
        profile=PROFILE,
        settings=ESCA["topics"],
    log:
        "logs/esca/table/TabU3.log",
    threads: 1
    resources:
        **light_resources(1000, 5),
    conda:
        CONDA_ENV
    script:
        "../scripts/esca_tabu3.py"


# Static items (no computation): rendered from the specs in src/scalable_bayes_papers/esca/static.py


rule esca_fig1:
    """Double buffering of the sufficient statistics (Sec. 2.3), a diagram."""
    input:
        code=code_inputs("esca_static_figure.py"),
    output:
        fig=report("results/esca/figures/Fig1.png", caption="../report/esca_fig1.rst", category="esca"),
        pdf="results/esca/figures/Fig1.pdf",
        claim="results/esca/claims/ESCA-Fig1.json",
    params:
        item="Fig1",
        profile=PROFILE,
    log:
        "logs/esca/static/Fig1.log",
    threads: 1
    resources:
        **light_resources(500, 5),
    conda:
        CONDA_ENV
    script:
        "../scripts/esca_static_figure.py"


rule esca_fig4:
    """LDA plate diagram (App. B)."""
    input:
        code=code_inputs("esca_static_figure.py"),
    output:
        fig=report("results/esca/figures/Fig4.png", caption="../report/esca_fig4.rst", category="esca"),
        pdf="results/esca/figures/Fig4.pdf",
        claim="results/esca/claims/ESCA-Fig4.json",
    params:
        item="Fig4",
        profile=PROFILE,
    log:
        "logs/esca/static/Fig4.log",
    threads: 1
    resources:
        **light_resources(500, 5),
    conda:
        CONDA_ENV
    script:
        "../scripts/esca_static_figure.py"


rule esca_tab1_tab2:
    """Table 1 (models ESCA applies to) or Table 2 (notation of App. A), from the spec."""
    input:
        code=code_inputs("esca_static_table.py"),
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
        **light_resources(500, 5),
    conda:
        CONDA_ENV
    script:
        "../scripts/esca_static_table.py"
