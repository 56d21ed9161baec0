"""Rule sgnht_stab1: SGNHT STab. 1 ((RMSE, tau) on the Normal-Gamma grid, paper values beside) and its claim."""
import pandas as pd

from scalable_bayes.reporting import write_claim
from scalable_bayes.utils import save_table, setup_logging
from scalable_bayes_papers.sgnht import claims, tables

setup_logging(snakemake.log[0])  # noqa: F821
p, out = snakemake.params, snakemake.output  # noqa: F821
ng = pd.concat([pd.read_parquet(f) for f in snakemake.input.ng_summary], ignore_index=True)  # noqa: F821
table = tables.stab1(ng)
save_table(table, out.csv)
save_table(table, out.md)
write_claim(out.claim, claims.check_stab1(table, ng, p.settings, p.profile))
