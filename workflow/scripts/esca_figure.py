"""Rules esca_fig2, esca_fig3, esca_fig5, esca_fig6: draw one ESCA figure from its run tables and write its claim."""
import pandas as pd

from scalable_bayes.reporting import write_claim
from scalable_bayes.utils import setup_logging
from scalable_bayes_papers.esca import claims, figures

setup_logging(snakemake.log[0])
item, p = snakemake.params.item, snakemake.params
df = pd.concat([pd.read_parquet(f) for f in snakemake.input.runs], ignore_index=True)
figures.FIGURES[item](df, p.settings, snakemake.output.fig)
write_claim(snakemake.output.claim, claims.FIGURE_CHECKS[item](df, p.settings, p.profile))
