"""VMF Tab. 1: the clustering data sets as built here, beside the paper's counts."""
from pathlib import Path

from scalable_bayes.corpora import load_corpus
from scalable_bayes.inference.vmf.experiments import tab1_claim, tab1_table
from scalable_bayes.reporting import write_claim
from scalable_bayes.utils import save_table, setup_logging

setup_logging(snakemake.log[0])
corpora = {Path(d).name: load_corpus(d) for d in snakemake.params.corpus_dirs}
df = tab1_table(corpora)
save_table(df, snakemake.output.csv)
save_table(df, snakemake.output.md)
write_claim(snakemake.output.claim, id="VMF-Tab1", paper="vmf", scale=snakemake.params.scale, **tab1_claim(df))
