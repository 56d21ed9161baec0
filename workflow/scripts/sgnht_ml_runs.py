"""Rule sgnht_ml_runs: one cell (a, eta) of an SGNHT machine-learning task's grid (bnn | bpmf | lda), both
methods, for one seed -> the cell's summary and trace tables."""
import os

from scalable_bayes.utils import save_table, setup_logging
from scalable_bayes_papers.sgnht import runs

setup_logging(snakemake.log[0])  # noqa: F821
wc, inp, out = snakemake.wildcards, snakemake.input, snakemake.output  # noqa: F821
inputs = {k: v for k, v in inp.items() if k not in ("corpus", "code")}
if "corpus" in inp.keys():
    inputs["corpus_dir"] = os.path.dirname(inp.corpus[0])
summary, trace = runs.run_cell(wc.task, int(wc.seed), snakemake.params.settings, inputs)  # noqa: F821
save_table(summary, out.summary)
save_table(trace, out.trace)
