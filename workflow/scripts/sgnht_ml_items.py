"""Fig. 3, STab. 2 and STab. 3 of the SGNHT paper from the ML run tables, with their claims."""

import pandas as pd

from scalable_bayes.plotting import sgnht as plots
from scalable_bayes.samplers import sgnht_ml
from scalable_bayes.utils import save_table, setup_logging

setup_logging(snakemake.log[0])  # noqa: F821
out, params = snakemake.output, snakemake.params  # noqa: F821
summary = pd.concat([pd.read_parquet(p) for p in snakemake.input.summary], ignore_index=True)  # noqa: F821
item = params.item
if item == "Fig3":
    plots.plot_fig3(summary, out.fig, sgnht_ml.METRIC)
    sgnht_ml.write_ml_claim(item, out.claim, params.profile, params.ml, summary)
else:
    table = sgnht_ml.table2(summary) if item == "STab2" else sgnht_ml.table3(summary)
    save_table(table, out.csv)
    save_table(table, out.md)
    sgnht_ml.write_ml_claim(item, out.claim, params.profile, params.ml, summary, table)
