"""Rule vmf_tab1: VMF Tab. 1, the clustering data sets as built here beside the paper's counts, and its claim."""
from pathlib import Path

from scalable_bayes.corpora import load_corpus
from scalable_bayes.reporting import write_claim
from scalable_bayes.utils import save_table, setup_logging
from scalable_bayes_papers.vmf import claims, tables

setup_logging(snakemake.log[0])
p = snakemake.params
df = tables.tab1_table({Path(d).name: load_corpus(d) for d in p.corpus_dirs})
save_table(df, snakemake.output.csv)
save_table(df, snakemake.output.md)
write_claim(snakemake.output.claim, claims.check_tab1(df, p.settings, p.profile))
