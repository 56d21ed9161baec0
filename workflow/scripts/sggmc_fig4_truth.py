"""Rule sggmc_fig4_truth: the SGGMC Fig. 4 log posterior on a grid of angles."""
from scalable_bayes.utils import save_table, setup_logging
from scalable_bayes_papers.sggmc import runs

setup_logging(snakemake.log[0])  # noqa: F821
save_table(runs.fig4_truth(snakemake.params.settings), snakemake.output[0])  # noqa: F821
