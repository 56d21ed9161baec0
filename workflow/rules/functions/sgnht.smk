# Helper functions and constants of sgnht.smk (kept apart from the rules, as snakemake --lint asks).
from scalable_bayes_papers.sgnht.claims import FIG3_CLAIM_IDS, SYNTHETIC_CLAIM_IDS

SGNHT = config["sgnht"]
SGNHT_SYNTH = ["double_well", "known_variance", "normal_gamma"]
SGNHT_ML_TASKS = ["bnn", "bpmf", "lda"]


def sgnht_run_files(experiment, kind="summary"):
    return expand(
        "results/sgnht/runs/{experiment}/seed{seed}/{kind}.parquet",
        experiment=experiment,
        seed=SGNHT["seeds"],
        kind=kind,
    )


def sgnht_synthetic_settings(wildcards):
    """Settings of ONE synthetic job (experiment x seed): that experiment's own block only (the seed
    is a wildcard; no seed list), so a new seed or a change to another experiment re-runs nothing here.
    The (h, A) grid of the Gaussian experiments runs inside the job and is its own setting."""
    if wildcards.experiment == "double_well":
        return {"double_well": SGNHT["double_well"]}
    return {"gaussian": SGNHT["gaussian"], "data_seed": SGNHT["data_seed"]}


def sgnht_figure_settings():
    """Settings of the synthetic figure/table rules (for their claims' scale): every synthetic block."""
    return {k: SGNHT[k] for k in ("seeds", "data_seed", "double_well", "gaussian")}


def sgnht_claim_files(item):
    """Claim files of one figure rule: one per claim id (Fig. 2: one per panel; Fig. 3: one per row and KE)."""
    ids = FIG3_CLAIM_IDS if item == "Fig3" else SYNTHETIC_CLAIM_IDS[item]
    return [f"results/sgnht/claims/SGNHT-{i}.json" for i in ids]


def sgnht_tau_study_settings():
    """Settings of ONE tau-study job: the block without its sweep lists (seeds, n_data, batch_sizes are
    wildcards), plus data_seed."""
    ts = SGNHT["tau_study"]
    return {**{k: ts[k] for k in ("n_steps", "burnin", "step_sizes", "frictions")}, "data_seed": SGNHT["data_seed"]}


def sgnht_tau_study_files():
    ts = SGNHT["tau_study"]
    return expand(
        "results/sgnht/runs/tau_study/N{n_data}_b{batch_size}/seed{seed}/summary.parquet",
        n_data=ts["n_data"],
        batch_size=ts["batch_sizes"],
        seed=ts["seeds"],
    )


def sgnht_targets():
    out = []
    for fig in ["Fig1", "SFig4", "Fig2", "SFig5", "SFig6"]:
        out += [f"results/sgnht/figures/{fig}.png"] + sgnht_claim_files(fig)
    out += ["results/sgnht/tables/STab1.csv", "results/sgnht/tables/STab1.md", "results/sgnht/claims/SGNHT-STab1.json"]
    if SGNHT["tau_study"]["activate"]:
        out += ["results/sgnht/tables/TauStudy.csv", "results/sgnht/tables/TauStudy.md",
                "results/sgnht/claims/SGNHT-Fig2d-tau-study.json"]
    if SGNHT["ml"]["activate"]:
        out += ["results/sgnht/figures/Fig3.png"] + sgnht_claim_files("Fig3")
        for tab in ["STab2", "STab3"]:
            out += [f"results/sgnht/tables/{tab}.csv", f"results/sgnht/tables/{tab}.md", f"results/sgnht/claims/SGNHT-{tab}.json"]
    return out


PAPER_TARGETS["sgnht"] = sgnht_targets


def sgnht_ml_runs(kind="summary"):
    return expand(
        "results/sgnht/runs/ml/{task}/seed{seed}/{kind}.parquet",
        task=SGNHT["ml"]["tasks"],
        seed=SGNHT["ml"]["seeds"],
        kind=kind,
    )


# a and eta of a grid cell in its paths: str(float(v)), Python's shortest repr, which float() reads back
# exactly (as the ESCA rules' beta); float() first, so 1 and 1.0 in the config name the same cell.
SGNHT_FLOAT = r"[0-9.e+-]+"


def sgnht_ml_cells(task):
    """The (a, eta) cells of a task's grid as path strings, a-major (the order of the merged tables)."""
    s = SGNHT["ml"][task]
    return [(str(float(a)), str(float(eta))) for a in s["a"] for eta in s["eta"]]


def sgnht_ml_cell_files(kind):
    """Input function of sgnht_ml_merge: the ``kind`` table of every cell of the job's task and seed."""

    def files(wildcards):
        return [f"results/sgnht/runs/ml/{wildcards.task}/seed{wildcards.seed}/cells/a{a}~eta{eta}/{kind}.parquet"
                for a, eta in sgnht_ml_cells(wildcards.task)]

    return files


def sgnht_ml_cell_settings(wildcards):
    """Settings of ONE ML cell job (task x seed x a x eta): the task's own block ``sgnht.ml.<task>`` without
    its a and eta lists, plus the cell's a and eta (from the path, exact); not the ``ml`` block, whose seed
    list would re-run every job when a seed is added. A new a or eta value adds cells and re-runs no cell.
    In a replication also seed_offset (the MNIST and ratings splits' fixed seed moves with it)."""
    s = SGNHT["ml"][wildcards.task]
    return with_seed_offset({**{k: v for k, v in s.items() if k not in ("a", "eta")}, "a": float(wildcards.a),
                             "eta": float(wildcards.eta)})


def sgnht_ml_inputs(wildcards):
    if wildcards.task == "bnn":
        return {"mnist": "data/processed/mnist/mnist.npz"}
    if wildcards.task == "bpmf":
        return {"ratings": "data/processed/movielens/ratings.parquet"}
    return {"corpus": corpus_files(SGNHT["ml"]["lda"]["corpus"])}


# ---- Cost models (calibrated on the quick run's benchmark files; paper scale: docs/paper-scale.md) ----
def sgnht_synthetic_runs_cost(wildcards):
    """Double well: one SGNHT and len(fixed_xi) fixed-friction chains of n_steps (quick run, the paper's
    10^6 steps: 3.5-4.7 s); Gaussian experiments: SGHMC and SGNHT over the (h, A) grid, ~3e-6 s per
    step (quick run, 2 x 10^5 steps x 8 chains: 5-6.5 s)."""
    if wildcards.experiment == "double_well":
        d = SGNHT["double_well"]
        return Cost(COMPILE_CPU_S + 1e-6 * d["n_steps"] * (len(d["fixed_xi"]) + 1), 400)
    g = SGNHT["gaussian"]
    return Cost(COMPILE_CPU_S + 3e-6 * g["n_steps"] * 2 * len(g["step_sizes"]) * len(g["frictions"]), 400)


def sgnht_tau_study_runs_cost(wildcards):
    """SGHMC and SGNHT over the (h, A) grid on the Normal-Gamma posterior of N points with minibatch b:
    ~3e-6 s per step at b = 10 (as the synthetic runs), growing with b."""
    ts = SGNHT["tau_study"]
    b = int(wildcards.batch_size)
    per_step = 3e-6 * (1 + b / 50)
    return Cost(COMPILE_CPU_S + per_step * ts["n_steps"] * 2 * len(ts["step_sizes"]) * len(ts["frictions"]), 450)


# CPU seconds per iteration of one chain, evaluations included (quick run, 16 chains per job: BNN 482 s for
# 15,000 iterations, BPMF 242 s for 20,000, LDA 210 s for 800 on KOS at K = 30, minibatch 100)
SGNHT_ML_SEC_PER_ITER = {"bnn": 2.0e-3, "bpmf": 7.6e-4, "lda": 1.64e-2}


def sgnht_ml_chain_cpu_s(task, settings):
    """Predicted CPU seconds of one chain (one method at one (a, eta) cell) of an ML task."""
    return SGNHT_ML_SEC_PER_ITER[task] * settings["n_iter"]


def sgnht_ml_runs_cost(wildcards):
    """One (a, eta) cell of the task's grid: its SGHMC and SGNHT chains, one after the other (a whole grid of
    16 chains in one job measured 350 MB; a cell holds the same data). Paper profile: LDA ~27 min of CPU
    (the whole-grid job took ~3.2 h), BNN ~3.5 min, BPMF ~2.7 min."""
    s = SGNHT["ml"][wildcards.task]
    return Cost(COMPILE_CPU_S + 2 * sgnht_ml_chain_cpu_s(wildcards.task, s), 450)


# Merge of a task x seed's cells: reads and concatenates a few small parquet tables (seconds) with the
# library imported (the resident floor).
sgnht_ml_merge_cost = fixed_cost(15, BASE_MEM_MB)
