"""Compute the table of one of VMF Figs 1, 2, 4, 5 (special-function curves)."""
from scalable_bayes.inference.vmf import experiments as ex
from scalable_bayes.utils import save_table, setup_logging

setup_logging(snakemake.log[0])
fig = snakemake.wildcards.fig.lower()
s = snakemake.params.settings
if fig == "fig1":
    df = ex.fig1_table(s["dims"], s["n_points"], snakemake.params.psi_const)
elif fig == "fig2":
    df = ex.fig2_table(s["dims"], s["n_points"], s["dpsi0"], snakemake.params.psi_const)
elif fig == "fig4":
    df = ex.fig4_table(s["dims"], s["r_max"], s["n_points"], s["dpsi0"])
elif fig == "fig5":
    df = ex.fig5_table(s["dims"], s["n_points"])
else:
    raise ValueError(f"unknown curve figure {fig!r}; expected fig1, fig2, fig4 or fig5")
save_table(df, snakemake.output[0])
