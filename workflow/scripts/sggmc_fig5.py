"""Rule sggmc_fig5: SGGMC Fig. 5 from every corpus, method and seed, and its claim."""
import pandas as pd

from scalable_bayes.reporting import write_claim
from scalable_bayes.utils import setup_logging
from scalable_bayes_papers.sggmc import claims, figures

setup_logging(snakemake.log[0])  # noqa: F821
p, out = snakemake.params, snakemake.output  # noqa: F821
t = pd.concat([pd.read_parquet(f) for f in snakemake.input.runs], ignore_index=True)  # noqa: F821
figures.fig5(t, p.settings, out.fig)
write_claim(out.claim, claims.check_fig5(t, p.settings, p.profile))
