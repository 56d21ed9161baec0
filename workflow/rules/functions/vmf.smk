# Helper functions and constants of vmf.smk (kept apart from the rules, as snakemake --lint asks).
VMF = config["vmf"]
VMF_CURVE_FIGS = ["Fig1", "Fig2", "Fig4", "Fig5"]
VMF_TAB1_DATASETS = ["classic3", "classic300", "news20", "news20_small"]
# Fig. 3's low-dimensional cases: <corpus>_svd<D>, the corpus projected on its top D singular vectors
VMF_FIG3_LOWDIM = [f"{ds}_svd{int(dim)}" for ds, dims in (VMF["fig3"]["lowdim"] or {}).items() for dim in dims]
VMF_FIG3_DATASETS = list(VMF["fig3"]["datasets"]) + VMF_FIG3_LOWDIM
VMF_FIG3_DATASET_RE = "(" + "|".join(VMF_TAB1_DATASETS) + r")(_svd\d+)?"


def vmf_fig3_base(name):
    """(corpus, D or None) of a Fig. 3 data set name: ``classic3`` -> (classic3, None), ``classic3_svd3`` -> (classic3, 3)."""
    base, _, dim = name.partition("_svd")
    return base, (int(dim) if dim else None)


def vmf_targets():
    out = []
    for fig in VMF_CURVE_FIGS + ["Fig3"]:
        out += [f"results/vmf/figures/{fig}.png", f"results/vmf/figures/{fig}.pdf", f"results/vmf/claims/VMF-{fig}.json"]
    out += ["results/vmf/tables/Fig3_nmi_true_k.csv"]
    out += ["results/vmf/tables/Tab1.csv", "results/vmf/tables/Tab1.md", "results/vmf/claims/VMF-Tab1.json"]
    return out


PAPER_TARGETS["vmf"] = vmf_targets


def vmf_fig3_settings(wildcards):
    f = VMF["fig3"]
    base, dim = vmf_fig3_base(wildcards.dataset)
    if base not in f["k_grid"]:
        raise ValueError(f"vmf.fig3.k_grid has no entry for {base} (needed by {wildcards.dataset}); add one")
    return {
        "k_grid": [int(k) for k in f["k_grid"][base]],
        "max_iter": f["max_iter"],
        "tol": f["tol"],
        "kappa_max": f["kappa_max"],
        "kappa_method": f["kappa_method"],
        "negentropy": f["negentropy"],
        "max_docs": (f["max_docs"] or {}).get(base),
        "spkmeans": f["spkmeans"],
        "lowdim": dim,
        "control_negentropy": f["control_negentropy"] if (f["control_datasets"] is None
                                                           or wildcards.dataset in f["control_datasets"]) else None,
    }


# ---- Cost models (calibrated on the quick run's benchmark files; paper scale: docs/paper-scale.md) ----
# CPU seconds of each curve job at the quick profile's settings (the paper's, but for Fig. 5's ODE dims)
VMF_CURVE_CPU_S = {"Fig1": 25, "Fig2": 80, "Fig4": 5, "Fig5": 50}


def vmf_curve_runs_cost(wildcards):
    """Curves of Figs. 1, 2, 4, 5 (quick run: 3-77 s, 315 MB); Fig. 5's ODE at D = 50,000 (ode_dims null)
    adds ~200 s (the vMF README's paper-profile Fig. 5: 234 s on a loaded machine)."""
    cpu = VMF_CURVE_CPU_S[wildcards.fig]
    if wildcards.fig == "Fig5" and (VMF["fig5"].get("ode_dims") is None or 50000 in VMF["fig5"]["ode_dims"]):
        cpu += 200
    return Cost(COMPILE_CPU_S + cpu, 450)


VMF_FIG3_SEC = 2e-8  # CPU s per (non-zero, cluster, iteration), EM run to max_iter: quick seed 0, classic3 7e-9 (15 s),
# news20 1.6e-8 (80 s), news20_small 1.5e-8 (36 s)
# (documents, tf-idf non-zeros per document) of the Fig. 3 corpora; an _svd<D> case is dense with D columns
VMF_FIG3_SIZE = {"classic3": (3891, 50), "classic300": (300, 50), "news20": (18846, 90), "news20_small": (2000, 90)}


def vmf_fig3_runs_cost(wildcards):
    """movMF EM and the Bregman clusterings over the k grid for one seed: ~VMF_FIG3_SEC s per (non-zero,
    cluster, iteration), every method and the control included (quick run: see the constant)."""
    s = vmf_fig3_settings(wildcards)
    base, dim = vmf_fig3_base(wildcards.dataset)
    docs, nnz = VMF_FIG3_SIZE[base]
    if s.get("max_docs"):
        docs = min(docs, s["max_docs"])
    width = dim if dim else nnz
    work = docs * width * sum(s["k_grid"]) * s["max_iter"] * (2 if s["control_negentropy"] else 1)
    return Cost(COMPILE_CPU_S + VMF_FIG3_SEC * work, BASE_MEM_MB + 200 + 2e-4 * docs * width)  # one thread, as the rule
