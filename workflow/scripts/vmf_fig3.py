"""Rule vmf_fig3: VMF Fig. 3 (NMI against K), its NMI-at-true-K table and its claim."""
import pandas as pd

from scalable_bayes.reporting import write_claim
from scalable_bayes.utils import save_table, setup_logging
from scalable_bayes_papers.vmf import claims, figures, tables

setup_logging(snakemake.log[0])
p = snakemake.params
df = pd.concat([pd.read_parquet(f) for f in snakemake.input.runs], ignore_index=True)
figures.plot_fig3(df, snakemake.output.png, true_k=p.settings["true_k"])
save_table(tables.fig3_nmi_at_true_k(df), snakemake.output.table)
write_claim(snakemake.output.claim, claims.check_fig3(df, p.settings, p.profile))
