"""Rules sgnht_stab2, sgnht_stab3: SGNHT STab. 2 (test metric at the validation-selected (a, eta)) or
STab. 3 (the selected (a, eta)) from the ML runs, and its claim."""
import pandas as pd

from scalable_bayes.reporting import write_claim
from scalable_bayes.utils import save_table, setup_logging
from scalable_bayes_papers.sgnht import claims, tables

setup_logging(snakemake.log[0])  # noqa: F821
p, out = snakemake.params, snakemake.output  # noqa: F821
summary = pd.concat([pd.read_parquet(f) for f in snakemake.input.summary], ignore_index=True)  # noqa: F821
make_table, check = {"STab2": (tables.stab2, claims.check_stab2), "STab3": (tables.stab3, claims.check_stab3)}[p.item]
table = make_table(summary)
save_table(table, out.csv)
save_table(table, out.md)
if p.item == "STab2":  # with the traces: convergence of the selected cells
    trace = pd.concat([pd.read_parquet(f) for f in snakemake.input.trace], ignore_index=True)  # noqa: F821
    write_claim(out.claim, check(table, summary, p.ml, p.profile, trace))
else:
    write_claim(out.claim, check(table, summary, p.ml, p.profile))
