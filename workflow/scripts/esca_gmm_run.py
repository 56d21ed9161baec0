"""EM and SEM on a synthetic 2-D Gaussian mixture for one (initialisation scenario, seed) (ESCA Fig. 3)."""

from scalable_bayes.inference.gmm_sem import run_fig3_scenario
from scalable_bayes.utils import save_table, setup_logging

setup_logging(snakemake.log[0])
save_table(run_fig3_scenario(**snakemake.params.settings), snakemake.output[0])
