"""Rule sggmc_fig4: SGGMC Fig. 4 from every method and seed and the grid truth, and its claim."""
import pandas as pd

from scalable_bayes.reporting import write_claim
from scalable_bayes.utils import setup_logging
from scalable_bayes_papers.sggmc import claims, figures

setup_logging(snakemake.log[0])  # noqa: F821
p, out, inp = snakemake.params, snakemake.output, snakemake.input  # noqa: F821
t = pd.concat([pd.read_parquet(f) for f in inp.runs], ignore_index=True)
truth = pd.read_parquet(inp.truth)
figures.fig4(t, truth, p.settings, out.fig)
write_claim(out.claim, claims.check_fig4(t, truth, p.settings, p.profile))
