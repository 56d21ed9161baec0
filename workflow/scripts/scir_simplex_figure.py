"""Rules scir_fig1, scir_fig2: a figure of the Dirichlet experiments from every target and seed, and its claim."""
import pandas as pd

from scalable_bayes.reporting import write_claim
from scalable_bayes.utils import setup_logging
from scalable_bayes_papers.scir import claims, figures

setup_logging(snakemake.log[0])  # noqa: F821
p, out, inp = snakemake.params, snakemake.output, snakemake.input  # noqa: F821
key = "samples" if p.item == "Fig1" else "ks"
t = pd.concat([pd.read_parquet(f) for f in inp[key]], ignore_index=True)
getattr(figures, f"plot_{p.item.lower()}")(t, out.fig)
write_claim(out.claim, getattr(claims, f"check_{p.item.lower()}")(t, p.settings, p.profile))
