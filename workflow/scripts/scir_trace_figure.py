"""Rule scir_trace_figure: Fig3a / SFigA / Fig3b / SFigB of the SCIR paper from the run traces, and the claim."""
import pandas as pd

from scalable_bayes.reporting import write_claim
from scalable_bayes.utils import setup_logging
from scalable_bayes_papers.scir import claims, figures

setup_logging(snakemake.log[0])  # noqa: F821
p, out, item = snakemake.params, snakemake.output, snakemake.wildcards.item  # noqa: F821
t = pd.concat([pd.read_parquet(f) for f in snakemake.input.traces], ignore_index=True)  # noqa: F821
getattr(figures, f"plot_{item.lower()}")(t, out.fig)
write_claim(out.claim, getattr(claims, f"check_{item.lower()}")(t, p.settings, p.profile))
