"""Rule scir_runs: one method x seed of the SCIR LDA or DP-mixture experiment -> trace table."""
import os

from scalable_bayes.corpora.store import load_corpus
from scalable_bayes.utils import save_table, setup_logging
from scalable_bayes_papers.scir import runs

setup_logging(snakemake.log[0])  # noqa: F821
wc = snakemake.wildcards  # noqa: F821
corpus = load_corpus(os.path.dirname(snakemake.input.corpus[0]))  # noqa: F821
run = runs.lda_runs if wc.exp == "lda" else runs.dp_runs
save_table(run(wc.method, int(wc.seed), snakemake.params.settings, corpus), snakemake.output[0])  # noqa: F821
