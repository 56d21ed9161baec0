"""Rule sggmc_fig5_runs: one SAM method x corpus x seed for SGGMC Fig. 5 -> log-perplexity trace."""
import os

from scalable_bayes.corpora.store import load_corpus
from scalable_bayes.utils import save_table, setup_logging
from scalable_bayes_papers.sggmc import runs

setup_logging(snakemake.log[0])  # noqa: F821
wc = snakemake.wildcards  # noqa: F821
corpus = load_corpus(os.path.dirname(snakemake.input.corpus[0]))  # noqa: F821
t = runs.fig5_runs(wc.corpus, wc.method, int(wc.sggmc_seed), snakemake.params.settings, corpus)  # noqa: F821
save_table(t, snakemake.output[0])  # noqa: F821
