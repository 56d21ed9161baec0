"""Rule esca_tabu2: the data sets of ESCA Sec. 4 beside this run's stand-in corpora, and its (unchecked) claim."""
from scalable_bayes.corpora import load_corpus
from scalable_bayes.reporting import write_claim
from scalable_bayes.utils import save_table, setup_logging
from scalable_bayes_papers.esca import claims, tables

setup_logging(snakemake.log[0])
table = tables.tabu2([load_corpus(d) for d in snakemake.params.corpus_dirs])
save_table(table, snakemake.output.csv)
save_table(table, snakemake.output.md)
write_claim(snakemake.output.claim, claims.check_tabu2(table, snakemake.params.profile))
