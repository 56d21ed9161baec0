"""Rule sggmc_fig3: SGGMC Fig. 3 from every method and seed, and its claim."""
import pandas as pd

from scalable_bayes.reporting import write_claim
from scalable_bayes.utils import setup_logging
from scalable_bayes_papers.sggmc import claims, figures

setup_logging(snakemake.log[0])  # noqa: F821
p, out = snakemake.params, snakemake.output  # noqa: F821
t = pd.concat([pd.read_parquet(f) for f in snakemake.input.runs], ignore_index=True)  # noqa: F821
figures.fig3(t, p.settings, out.fig)
write_claim(out.claim, claims.check_fig3(t, p.settings, p.profile))
