"""Rule esca_fig3_runs: EM restarts, and SEM / EM from starts of every initialisation severity, on the
synthetic 2-D Gaussian mixture of one seed (ESCA Fig. 3)."""
from scalable_bayes.utils import save_table, setup_logging
from scalable_bayes_papers.esca import runs

setup_logging(snakemake.log[0])
save_table(runs.run_fig3_seed(**snakemake.params.settings), snakemake.output[0])
