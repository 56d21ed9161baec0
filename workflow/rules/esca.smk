# ESCA (Zaheer et al. 2016): LDA engines ESCA / CGS / CVB0 on real corpora (Fig. 2, Fig. 5, Fig. 6,
# throughput table, topic table TabU3, dataset table TabU2), SEM vs EM on a Gaussian mixture (Fig. 3)
# and the two-spin Ising table (TabU1). Compute rules write tidy tables under results/esca/runs/;
# plot/table rules read them and write the claims.

import sys

ESCA = config["esca"]
ESCA_PYTHON = sys.executable
ESCA_MPIEXEC = str(Path(sys.executable).with_name("mpiexec")) if Path(sys.executable).with_name("mpiexec").exists() else "mpiexec"
ESCA_METHODS = ["ESCA", "ESCA_plain", "CGS", "CVB0"]


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


def esca_run_path(exp, train, test, method, K, beta, threads, seed):
    return (
        f"results/esca/runs/{exp}/{train}~{test}/{method}~K{K}~beta{beta}~t{threads}/seed{seed}.parquet"
    )


def esca_fig2_runs():
    r = ESCA["fig2"]["run"]
    return [
        esca_run_path("fig2", c, c, m, r["n_topics"], r["beta"], r["threads"], s)
        for c in ESCA["fig2"]["corpora"]
        for m in ESCA["fig2"]["methods"]
        for s in ESCA["seeds"]
    ]


def esca_throughput_runs():
    r = ESCA["throughput"]["run"]
    return [
        esca_run_path("throughput", c, c, m, r["n_topics"], r["beta"], t, 0)
        for c in ESCA["throughput"]["corpora"]
        for m in ESCA["throughput"]["methods"]
        for t in ESCA["throughput"]["threads"]
        # CGS and CVB0 sweeps are sequential: one thread count is enough
        if m.startswith("ESCA") or t == ESCA["throughput"]["threads"][0]
    ]


def esca_mpi_runs():
    return [
        f"results/esca/runs/mpi/{c}~R{r}.parquet"
        for c in ESCA["throughput"]["corpora"]
        for r in ESCA["throughput"].get("mpi_ranks", [])
    ]


def esca_mpi_args(wildcards):
    r = ESCA["throughput"]["run"]
    args = [
        f"--n-topics {r['n_topics']}",
        f"--beta {r['beta']}",
        f"--n-iter {r['n_iter']}",
        f"--evaluate-every {r['n_iter']}",
        "--threads 1",
        "--seed 0",
    ]
    if r.get("alpha") is not None:
        args.append(f"--alpha {r['alpha']}")
    if r.get("max_train_docs") is not None:
        args.append(f"--max-train-docs {r['max_train_docs']}")
    if r.get("max_test_docs") is not None:
        args.append(f"--max-test-docs {r['max_test_docs']}")
    return " ".join(args)


def esca_train_files(wildcards):
    return corpus_files(wildcards.esca_train)


def esca_test_files(wildcards):
    return corpus_files(wildcards.esca_test)


def esca_fig5_runs():
    f = ESCA["fig5"]
    r = f["run"]
    return [
        esca_run_path("fig5", f["corpus"], f["corpus"], m, K, r["beta"], r["threads"], s)
        for m in ["ESCA", "ESCA_plain"]
        for K in f["n_topics"]
        for s in ESCA["seeds"]
    ]


def esca_fig6_runs():
    f = ESCA["fig6"]
    r = f["run"]
    K0, b0 = r["n_topics"], r["beta"]
    grid = {(K0, b0)} | {(K, b0) for K in f["topics_grid"]} | {(K0, b) for b in f["beta_grid"]}
    return sorted(
        {
            esca_run_path("fig6", tr, te, m, K, b, r["threads"], s)
            for tr, te in f["pairs"]
            for m in f["methods"]
            for K, b in grid
            for s in f["seeds"]
        }
    )


def esca_run_settings(wildcards):
    run = dict(ESCA[wildcards.esca_exp]["run"])
    run.update(
        {
            "method": wildcards.esca_method,
            "n_topics": int(wildcards.esca_K),
            "beta": float(wildcards.esca_beta),
            "threads": int(wildcards.esca_threads),
            "seed": int(wildcards.esca_seed),
            "experiment": wildcards.esca_exp,
        }
    )
    by_method = ESCA[wildcards.esca_exp].get("n_iter_by_method", {})
    if wildcards.esca_method in by_method:
        run["n_iter"] = int(by_method[wildcards.esca_method])
    if wildcards.esca_exp == "throughput":
        run["evaluate_every"] = run["n_iter"]  # time the fit without intermediate evaluation
    return run


def esca_corpus_dir(name):
    return f"data/processed/{name}"


def esca_train_dir(wildcards):
    return esca_corpus_dir(wildcards.esca_train)


def esca_test_dir(wildcards):
    return esca_corpus_dir(wildcards.esca_test)


def esca_run_threads(wildcards):
    return int(wildcards.esca_threads)


def esca_mpi_ranks(wildcards):
    return int(wildcards.esca_ranks)


def esca_gmm_settings(wildcards):
    return dict(ESCA["fig3"], scenario=wildcards.esca_scenario, seed=int(wildcards.esca_seed))


def esca_heldout_corpora():
    """Corpora of Fig. 2 and of the Fig. 6 pairs (described in TabU2)."""
    return sorted(set(ESCA["fig2"]["corpora"]) | {p for pr in ESCA["fig6"]["pairs"] for p in pr})


def esca_tabu2_inputs(wildcards):
    return [f for c in esca_heldout_corpora() for f in corpus_files(c)]


def esca_tabu3_inputs(wildcards):
    return [f for c in ESCA["topics"]["corpora"] for f in corpus_files(c)]


def esca_targets():
    out = []
    for fig in ["Fig1", "Fig2", "Fig3", "Fig4", "Fig5", "Fig6"]:
        out += [f"results/esca/figures/{fig}.png", f"results/esca/claims/ESCA-{fig}.json"]
    for tab in ["Tab1", "Tab2", "Throughput", "TabU1", "TabU2", "TabU3"]:
        out += [
            f"results/esca/tables/{tab}.csv",
            f"results/esca/tables/{tab}.md",
            f"results/esca/claims/ESCA-{tab}.json",
        ]
    return out


PAPER_TARGETS["esca"] = esca_targets


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
    script:
        "../scripts/esca_gmm_run.py"


rule esca_fig2:
    input:
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
    script:
        "../scripts/esca_plot.py"


rule esca_fig3:
    input:
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
    script:
        "../scripts/esca_plot.py"


rule esca_fig5:
    input:
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
    script:
        "../scripts/esca_plot.py"


rule esca_fig6:
    input:
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
    script:
        "../scripts/esca_plot.py"


rule esca_throughput_table:
    input:
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
    script:
        "../scripts/esca_tables.py"


rule esca_tabu1:
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
    script:
        "../scripts/esca_tables.py"


rule esca_tabu2:
    input:
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
    script:
        "../scripts/esca_tables.py"


rule esca_tabu3:
    input:
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
    script:
        "../scripts/esca_tables.py"


# Static items (TARGETS 2.5: no computation; rendered from the specs in scalable_bayes.plotting.esca)


rule esca_static_fig1:
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
    script:
        "../scripts/esca_static.py"


rule esca_static_fig4:
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
    script:
        "../scripts/esca_static.py"


rule esca_static_table:
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
    script:
        "../scripts/esca_static.py"
