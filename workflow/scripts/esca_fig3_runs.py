"""Rule esca_fig3_runs: EM and SEM on the synthetic 2-D Gaussian mixture for one (initialisation
scenario, seed) (ESCA Fig. 3)."""
from scalable_bayes.utils import save_table, setup_logging
from scalable_bayes_papers.esca import runs

setup_logging(snakemake.log[0])
save_table(runs.run_fig3_scenario(**snakemake.params.settings), snakemake.output[0])
