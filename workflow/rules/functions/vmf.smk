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
