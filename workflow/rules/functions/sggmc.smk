# Helper functions and constants of sggmc.smk (kept apart from the rules, as snakemake --lint asks).
from scalable_bayes_papers.sggmc.config import check_config as _sggmc_check_config

SGGMC = config["sggmc"]
_sggmc_check_config(SGGMC)  # rules between keys the schema cannot state (before any job is scheduled)
SGGMC_STATIC_FIGURES = ["Fig1", "Fig2", "SFig1"]
SGGMC_FIG3_METHODS = ["GMC", "SGGMC", "gSGNHT", "SGGMC-V0", "gSGNHT-V0"]
SGGMC_FIG4_METHODS = ["GMC", "SGGMC"] + (["SGGMC-full"] if SGGMC["fig4"]["full_batch"] else [])


SGGMC_FIG5_METHODS = ["VI", "StoVI", "GMC-apprMH", "GMC-bGibbs", "SGGMC", "SGGMC-full", "gSGNHT", "gSGNHT-full"]
SGGMC_FIG5_MINIBATCH = {"StoVI", "SGGMC", "gSGNHT"}
SGGMC_FIG5_SG = {"SGGMC", "SGGMC-full", "gSGNHT", "gSGNHT-full"}
SGGMC_FIG5_CORPORA = [c for c in ("news20_different", "wiki_sggmc") if SGGMC["fig5"][c]["activate"]]


def sggmc_fig5_files():
    return expand("results/sggmc/runs/fig5/{corpus}/{method}/seed{seed}.parquet", corpus=SGGMC_FIG5_CORPORA,
                  method=SGGMC_FIG5_METHODS, seed=seed_range(SGGMC["fig5"]["n_seeds"]))


def sggmc_fig5_run_settings(wildcards):
    """Settings of ONE Fig. 5 job (corpus x method x seed): that corpus's block (no other corpus's) and the
    common clock and evaluation settings; the minibatch size only for the minibatch methods."""
    s = SGGMC["fig5"]
    out = {k: s[k] for k in ("max_time", "budget_clock", "evaluate_every", "n_prior_draws", "is_draws",
                             "is_topic_samples")}
    if s.get("max_iter"):
        out["max_iter"] = s["max_iter"]
    out.update({k: v for k, v in s[wildcards.corpus].items() if k != "activate"})
    if wildcards.method not in SGGMC_FIG5_MINIBATCH:
        out.pop("batch_size")
    if wildcards.method not in SGGMC_FIG5_SG:
        out.pop("sg_gamma_kappa")
    elif wildcards.method not in SGGMC_FIG5_MINIBATCH:  # full-batch SGGMC / gSGNHT: their own learning rate
        out["sg_gamma_kappa"] = out["sg_gamma_kappa_full"]
    out.pop("sg_gamma_kappa_full")
    return with_seed_offset(out)  # the training / test subsets' fixed seed (data.fig5_split) moves with it


def sggmc_fig5_corpus(wildcards):
    return corpus_files(wildcards.corpus)


def sggmc_run_files(fig):
    methods = SGGMC_FIG3_METHODS if fig == "fig3" else SGGMC_FIG4_METHODS
    return expand("results/sggmc/runs/{fig}/{method}/seed{seed}.parquet", fig=fig, method=methods,
                  seed=seed_range(SGGMC[fig]["n_seeds"]))


def sggmc_fig3_run_settings(wildcards):
    """Settings of ONE Fig. 3 job (method x seed): the chain and the target; SGGMC / gSGNHT also the friction
    and the gradient noise (GMC uses exact gradients). Not the number of seeds or the histogram bins."""
    keys = ["n_samples", "burnin", "n_inner", "step_size", "mu2_reading"]
    if wildcards.method != "GMC":
        keys += ["rho", "noise_var"]
    return {k: SGGMC["fig3"][k] for k in keys}


def sggmc_fig4_run_settings(wildcards):
    """Settings of ONE Fig. 4 job (method x seed): the data set, the chain and that method's own block."""
    s = SGGMC["fig4"]
    keys = ["n_data", "kappa", "data_seed", "e2", "n_samples", "burnin", "gmc" if wildcards.method == "GMC" else "sggmc"]
    out = {k: s[k] for k in keys}
    if wildcards.method == "SGGMC-full":  # full batch: the minibatch size is not this job's setting
        out["sggmc"] = {k: v for k, v in out["sggmc"].items() if k != "batch_size"}
    return out


def sggmc_fig4_truth_settings(wildcards):
    """Settings of the Fig. 4 truth job: the data set and the grid."""
    return {k: SGGMC["fig4"][k] for k in ("n_data", "kappa", "data_seed", "e2", "grid", "window")}


def sggmc_targets():
    out = []
    for fig in SGGMC_STATIC_FIGURES:
        out += [f"results/sggmc/figures/{fig}.png", f"results/sggmc/claims/SGGMC-{fig}.json"]
    out += ["results/sggmc/tables/Tab1.md", "results/sggmc/claims/SGGMC-Tab1.json"]
    for fig in ("fig3", "fig4", "fig5"):
        if SGGMC[fig]["activate"] and (fig != "fig5" or SGGMC_FIG5_CORPORA):
            item = fig.capitalize()
            out += [f"results/sggmc/figures/{item}.png", f"results/sggmc/claims/SGGMC-{item}.json"]
    return out


PAPER_TARGETS["sggmc"] = sggmc_targets


# ---- Cost models (calibrated on the quick run's benchmark files; paper scale: docs/paper-scale.md) ----
def sggmc_fig3_runs_cost(wildcards):
    """(n_samples + burnin) x n_inner steps on S^2 (quick run, the paper's setting: 2-6 s, 325 MB)."""
    s = SGGMC["fig3"]
    return Cost(COMPILE_CPU_S + 1e-5 * (s["n_samples"] + s["burnin"]) * s["n_inner"], 400)


def sggmc_fig4_runs_cost(wildcards):
    """(n_samples + burnin) x n_inner steps, each a gradient over n_data points (GMC, SGGMC-full) or a
    minibatch (SGGMC): ~2.5e-7 s per point and step (quick run, the paper's setting: GMC 7.5-19 s)."""
    s = SGGMC["fig4"]
    own = s["gmc"] if wildcards.method == "GMC" else s["sggmc"]
    n = s["sggmc"]["batch_size"] if wildcards.method == "SGGMC" else s["n_data"]
    return Cost(COMPILE_CPU_S + 5 + 2.5e-7 * (s["n_samples"] + s["burnin"]) * own["n_inner"] * n, 400)


# CPU seconds of the importance-sampling check per (draw, topic sample, test document), calibrated on the
# paper-scale run of 2026-11-27 (docs/paper-scale.md, 400 draws x 20 topic samples): the costliest series
# spent ~650 s on 20 Newsgroups-different's 1,107 test messages (7.3e-5; V = 4,656, K = 20) and at most
# ~60 s on 1,000 Wikipedia articles (7.5e-6; K = 50). The earlier single coefficient (7.5e-5 for Wikipedia,
# from a quick run whose 15 s were mostly compilation, scaled down by document length for 20 Newsgroups)
# over-predicted Wikipedia 2x and under-predicted 20 Newsgroups-different 1.6x. A margin of ~15% and ~35%.
SGGMC_FIG5_IS_CPU = {"news20_different": 8.5e-5, "wiki_sggmc": 1.0e-5}


def sggmc_fig5_runs_cost(wildcards):
    """A series runs for max_time seconds of process CPU time (its evaluations included), then the
    importance-sampling check of its last samples (a full-batch method overshoots the budget by up to one
    sweep, ~10 ms per training document; quick run: gSGNHT-full on Wikipedia 72 s), costing
    SGGMC_FIG5_IS_CPU[corpus] per (draw, topic sample, test document).
    Memory: ~0.1 MB per training document (quick: 533 MB at 2,000 Wikipedia articles)."""
    s = sggmc_fig5_run_settings(wildcards)
    test = s.get("max_test_docs") or (1107 if wildcards.corpus == "news20_different" else 1000)
    train = corpus_train_docs(wildcards.corpus, s.get("max_train_docs")) if wildcards.corpus == "wiki_sggmc" else 1666
    per_doc = SGGMC_FIG5_IS_CPU[wildcards.corpus]
    overshoot = 0.01 * train if wildcards.method not in SGGMC_FIG5_MINIBATCH else 0.0  # the last full-batch step
    cpu = COMPILE_CPU_S + 1.15 * s["max_time"] + overshoot + per_doc * s["is_draws"] * s["is_topic_samples"] * test
    return Cost(cpu, BASE_MEM_MB + 100 + 0.1 * train)
