"""Rule sgnht_fig3: SGNHT Fig. 3 (test metric vs eta per task and a) from the ML runs, and its claims
(one per row of the figure, SGNHT-Fig3-<task>, and SGNHT-Fig3-KE)."""
from pathlib import Path

import pandas as pd

from scalable_bayes.reporting import write_claim
from scalable_bayes.utils import setup_logging
from scalable_bayes_papers.sgnht import claims, figures

setup_logging(snakemake.log[0])  # noqa: F821
p, out = snakemake.params, snakemake.output  # noqa: F821
summary = pd.concat([pd.read_parquet(f) for f in snakemake.input.summary], ignore_index=True)  # noqa: F821
figures.plot_fig3(summary, out.fig, claims.METRIC)
paths = {Path(f).stem: f for f in out.claims}
for c in claims.check_fig3(summary, p.ml, p.profile):
    write_claim(paths[c.id], c)
