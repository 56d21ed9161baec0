"""Write one ESCA table (Throughput, TabU1, TabU2, TabU3) as csv + md, and its claim."""

from scalable_bayes.plotting import esca as plots
from scalable_bayes.reporting import write_claim
from scalable_bayes.utils import save_table, setup_logging

setup_logging(snakemake.log[0])
inputs = {k: list(v) for k, v in snakemake.input.items() if k != "plot_code"}  # plot_code: a rerun trigger only
params = {k: v for k, v in snakemake.params.items()}
table, claim = plots.TABLES[snakemake.params.item](inputs, params)
save_table(table, snakemake.output.csv)
save_table(table, snakemake.output.md)
write_claim(snakemake.output.claim, **claim)
