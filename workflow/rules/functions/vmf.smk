# Helper functions and constants of vmf.smk (kept apart from the rules, as snakemake --lint asks).
VMF = config["vmf"]
VMF_CURVE_FIGS = ["Fig1", "Fig2", "Fig4", "Fig5"]
VMF_TAB1_DATASETS = ["classic3", "classic300", "news20", "news20_small"]


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
    return {
        "k_grid": [int(k) for k in f["k_grid"][wildcards.dataset]],
        "max_iter": f["max_iter"],
        "tol": f["tol"],
        "kappa_max": f["kappa_max"],
        "kappa_method": f["kappa_method"],
        "negentropy": f["negentropy"],
        "max_docs": (f["max_docs"] or {}).get(wildcards.dataset),
        "spkmeans": f["spkmeans"],
    }
