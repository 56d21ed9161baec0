"""Draw one ESCA figure from the run tables and write its claim."""

import pandas as pd

from scalable_bayes.plotting import esca as plots
from scalable_bayes.reporting import write_claim
from scalable_bayes.utils import setup_logging

setup_logging(snakemake.log[0])
df = pd.concat([pd.read_parquet(p) for p in snakemake.input.runs], ignore_index=True)
claim = plots.FIGURES[snakemake.params.item](df, snakemake.params.settings, snakemake.output.fig,
                                            profile=snakemake.params.profile)
write_claim(snakemake.output.claim, **claim)
