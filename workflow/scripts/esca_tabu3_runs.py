"""Rule esca_tabu3_runs: ESCA fitted on one corpus, the top words of every topic (ESCA TabU3)."""
from scalable_bayes.corpora import load_corpus
from scalable_bayes.utils import save_table, setup_logging
from scalable_bayes_papers.esca import runs

setup_logging(snakemake.log[0])
df = runs.run_topics(load_corpus(snakemake.params.corpus_dir), snakemake.params.settings)
save_table(df, snakemake.output[0])
