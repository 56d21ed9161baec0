"""Figures, tables and claims of the SGNHT synthetic experiments (Fig. 1, 2, SFig. 4-6, STab. 1)."""

import pandas as pd

from scalable_bayes.plotting import sgnht as plots
from scalable_bayes.samplers import experiments as ex
from scalable_bayes.samplers.experiments import write_synthetic_claim
from scalable_bayes.utils import save_table, setup_logging

setup_logging(snakemake.log[0])  # noqa: F821
inp, out, params = snakemake.input, snakemake.output, snakemake.params  # noqa: F821


def load(name):
    return pd.concat([pd.read_parquet(p) for p in inp[name]], ignore_index=True)


item = params.item
if item == "Fig1":
    plots.plot_fig1(load("density"), load("traces"), out.fig)
    write_synthetic_claim(item, out.claim, params.profile, params.settings, summary=load("summary"))
elif item == "SFig4":
    summary = load("summary")
    plots.plot_sfig4(load("traces"), out.fig, B=float(summary["B"].iloc[0]))
    write_synthetic_claim(item, out.claim, params.profile, params.settings, summary=summary)
elif item == "Fig2":
    plots.plot_fig2(load("kv_density"), load("kv_traces"), load("ng_summary"), out.fig)
    write_synthetic_claim(item, out.claim, params.profile, params.settings, kv=load("kv_summary"), ng=load("ng_summary"))
elif item == "SFig5":
    plots.plot_sfig5(load("kv_traces"), out.fig)
    write_synthetic_claim(item, out.claim, params.profile, params.settings, kv=load("kv_summary"))
elif item == "SFig6":
    plots.plot_sfig6(load("ng_density"), out.fig)
    write_synthetic_claim(item, out.claim, params.profile, params.settings, ng=load("ng_summary"))
elif item == "STab1":
    t = ex.table1(load("ng_summary"))
    save_table(t, out.csv)
    save_table(t, out.md)
    write_synthetic_claim(item, out.claim, params.profile, params.settings, table=t)
else:
    raise ValueError(f"unknown SGNHT item {item!r}")
