"""Rule esca_tabu1: the two-spin Ising table of ESCA Sec. 2.5 (exact stationary distributions) and its claim."""
from scalable_bayes.reporting import write_claim
from scalable_bayes.utils import save_table, setup_logging
from scalable_bayes_papers.esca import claims, tables

setup_logging(snakemake.log[0])
table = tables.tabu1()
save_table(table, snakemake.output.csv)
save_table(table, snakemake.output.md)
write_claim(snakemake.output.claim, claims.check_tabu1(table, snakemake.params.profile))
