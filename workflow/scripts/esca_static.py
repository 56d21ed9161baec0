"""Render one static ESCA item (Fig1, Fig4: diagrams; Tab1, Tab2: tables) from its spec, and its claim."""

from scalable_bayes.plotting import esca as plots
from scalable_bayes.reporting import write_claim
from scalable_bayes.utils import save_table, setup_logging

setup_logging(snakemake.log[0])
item = snakemake.params.item
if item in plots.STATIC_FIGURES:
    claim = plots.STATIC_FIGURES[item](snakemake.output.fig, profile=snakemake.params.profile)
else:
    table, claim = plots.TABLES[item]({}, {"profile": snakemake.params.profile})
    save_table(table, snakemake.output.csv)
    save_table(table, snakemake.output.md)
write_claim(snakemake.output.claim, **claim)
