"""Rule sggmc_fig4_runs: GMC or SGGMC x seed on the SGGMC Fig. 4 posterior (S^1 x S^1) -> kept (v1, v2)."""
from scalable_bayes.utils import save_table, setup_logging
from scalable_bayes_papers.sggmc import runs

setup_logging(snakemake.log[0])  # noqa: F821
wc = snakemake.wildcards  # noqa: F821
save_table(runs.fig4_runs(wc.method, int(wc.sggmc_seed), snakemake.params.settings), snakemake.output[0])  # noqa: F821
