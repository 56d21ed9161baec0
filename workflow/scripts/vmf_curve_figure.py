"""Rule vmf_curve_figure: draw one of VMF Figs 1, 2, 4, 5 from its table and write its claim."""
import pandas as pd

from scalable_bayes.reporting import write_claim
from scalable_bayes.utils import setup_logging
from scalable_bayes_papers.vmf import claims, figures

setup_logging(snakemake.log[0])
fig, p = snakemake.wildcards.fig, snakemake.params
df = pd.read_parquet(snakemake.input.table)
getattr(figures, f"plot_{fig.lower()}")(df, snakemake.output.png)
write_claim(snakemake.output.claim, getattr(claims, f"check_{fig.lower()}")(df, p.settings, p.profile))
