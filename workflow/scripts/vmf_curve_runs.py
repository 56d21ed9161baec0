"""Rule vmf_curve_runs: the table of one of VMF Figs 1, 2, 4, 5 (special-function curves)."""
from scalable_bayes.utils import save_table, setup_logging
from scalable_bayes_papers.vmf import runs

setup_logging(snakemake.log[0])
df = runs.curves(snakemake.wildcards.fig, snakemake.params.settings, snakemake.params.psi_const)
save_table(df, snakemake.output[0])
