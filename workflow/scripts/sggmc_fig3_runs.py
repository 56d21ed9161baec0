"""Rule sggmc_fig3_runs: one method x seed on the SGGMC Fig. 3 toy (S^1) -> kept angles."""
from scalable_bayes.utils import save_table, setup_logging
from scalable_bayes_papers.sggmc import runs

setup_logging(snakemake.log[0])  # noqa: F821
wc = snakemake.wildcards  # noqa: F821
save_table(runs.fig3_runs(wc.method, int(wc.sggmc_seed), snakemake.params.settings), snakemake.output[0])  # noqa: F821
