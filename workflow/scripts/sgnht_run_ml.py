"""Run one SGNHT machine-learning task (bnn | bpmf | lda) over its (method x a x eta) grid for one seed."""

import os

from scalable_bayes.samplers import sgnht_ml
from scalable_bayes.utils import save_table, setup_logging

setup_logging(snakemake.log[0])  # noqa: F821
task, seed = snakemake.wildcards.task, int(snakemake.wildcards.seed)  # noqa: F821
inp = snakemake.input  # noqa: F821
inputs = {}
if task == "bnn":
    inputs["mnist"] = inp.mnist
elif task == "bpmf":
    inputs["ratings"] = inp.ratings
else:
    inputs["corpus_dir"] = os.path.dirname(inp.corpus[0])
summary, trace = sgnht_ml.run_task(task, seed, snakemake.params.ml, inputs)  # noqa: F821
save_table(summary, snakemake.output.summary)  # noqa: F821
save_table(trace, snakemake.output.trace)  # noqa: F821
