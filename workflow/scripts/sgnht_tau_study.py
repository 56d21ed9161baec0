"""Rule sgnht_tau_study: the tau-study table ((RMSE, tau with its 95% interval) per (N, minibatch) x method x
(h, A)) and its claim (SGNHT-Fig2d-tau-study)."""
import pandas as pd

from scalable_bayes.reporting import write_claim
from scalable_bayes.utils import save_table, setup_logging
from scalable_bayes_papers.sgnht import claims, tables

setup_logging(snakemake.log[0])  # noqa: F821
p, out = snakemake.params, snakemake.output  # noqa: F821
summary = pd.concat([pd.read_parquet(f) for f in snakemake.input.summary], ignore_index=True)  # noqa: F821
table = tables.tau_study(summary)
save_table(table, out.csv)
save_table(table, out.md)
write_claim(out.claim, claims.check_tau_study(table, p.settings, p.profile))
