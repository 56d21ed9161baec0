"""Rule sgnht_tau_study_runs: the Normal-Gamma (h, A) grid for one (N, minibatch, seed) of the tau study
(the decisive experiment for SGNHT Fig. 2 panel 4 / STab. 1) -> summary table."""
from scalable_bayes.utils import save_table, setup_logging
from scalable_bayes_papers.sgnht import runs

setup_logging(snakemake.log[0])  # noqa: F821
wc = snakemake.wildcards  # noqa: F821
summary = runs.tau_study_runs(int(wc.seed), int(wc.n_data), int(wc.batch_size), snakemake.params.settings)  # noqa: F821
save_table(summary, snakemake.output.summary)  # noqa: F821
