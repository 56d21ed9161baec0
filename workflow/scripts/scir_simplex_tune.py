"""Rule scir_simplex_tune: step-size grid of SCIR and SGRLD on one target -> tuning table."""
from scalable_bayes.utils import save_table, setup_logging
from scalable_bayes_papers.scir import runs

setup_logging(snakemake.log[0])  # noqa: F821
save_table(runs.simplex_tuning(snakemake.wildcards.target, snakemake.params.settings), snakemake.output[0])  # noqa: F821
