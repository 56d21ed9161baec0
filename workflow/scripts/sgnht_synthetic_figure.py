"""Rules sgnht_fig1, sgnht_sfig4, sgnht_fig2, sgnht_sfig5, sgnht_sfig6: one figure of the SGNHT synthetic
experiments from the run tables of every seed, and its claims (Fig. 2: one per panel)."""
from pathlib import Path

import pandas as pd

from scalable_bayes.reporting import write_claim
from scalable_bayes.utils import setup_logging
from scalable_bayes_papers.sgnht import claims, figures

setup_logging(snakemake.log[0])  # noqa: F821
p, out, inp = snakemake.params, snakemake.output, snakemake.input  # noqa: F821
t = {k: pd.concat([pd.read_parquet(f) for f in v], ignore_index=True) for k, v in inp.items() if k != "code"}
figures.draw_synthetic(p.item, t, out.fig)
paths = {Path(f).stem: f for f in out.claims}
for c in claims.check_synthetic(p.item, t, p.settings, p.profile):
    write_claim(paths[c.id], c)
