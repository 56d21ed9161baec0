"""Draw one VMF figure from its table and write its claim."""
import pandas as pd

from scalable_bayes.inference.vmf import experiments as ex
from scalable_bayes.plotting import vmf as plots
from scalable_bayes.reporting import write_claim
from scalable_bayes.utils import save_table, setup_logging

setup_logging(snakemake.log[0])
fig = snakemake.wildcards.fig.lower()
p = snakemake.params
if fig == "fig3":
    df = pd.concat([pd.read_parquet(f) for f in snakemake.input.runs], ignore_index=True)
    plots.plot_fig3(df, snakemake.output.png, true_k=p.true_k)
    save_table(ex.fig3_nmi_at_true_k(df), snakemake.output.table)
    claim = ex.fig3_claim(df)
else:
    df = pd.read_parquet(snakemake.input.table)
    getattr(plots, f"plot_{fig}")(df, snakemake.output.png)
    claim = getattr(ex, f"{fig}_claim")(df)
write_claim(snakemake.output.claim, id=f"VMF-{snakemake.wildcards.fig}", paper="vmf", scale=p.scale,
            note=p.note or None, **claim)
