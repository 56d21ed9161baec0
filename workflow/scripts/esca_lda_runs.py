"""Rule esca_lda_runs: fit one LDA engine (ESCA / ESCA_plain / CGS / CVB0) for Fig. 2, 5, 6 or the
throughput table and write its held-out trace (tidy parquet)."""
from scalable_bayes.corpora import load_corpus
from scalable_bayes.utils import save_table, setup_logging
from scalable_bayes_papers.esca import runs

setup_logging(snakemake.log[0])
p = snakemake.params
df = runs.run_held_out_experiment(load_corpus(p.train_dir), load_corpus(p.test_dir), p.settings)
save_table(df, snakemake.output[0])
