"""Rule esca_tabu3: the top words of the first ESCA topics per corpus (ESCA App. G), and its (unchecked) claim."""
import pandas as pd

from scalable_bayes.reporting import write_claim
from scalable_bayes.utils import save_table, setup_logging
from scalable_bayes_papers.esca import claims, tables

setup_logging(snakemake.log[0])
p = snakemake.params
table = tables.tabu3([pd.read_parquet(f) for f in snakemake.input.runs], p.settings["n_show"])
save_table(table, snakemake.output.csv)
save_table(table, snakemake.output.md)
write_claim(snakemake.output.claim, claims.check_tabu3(table, p.settings, p.profile))
