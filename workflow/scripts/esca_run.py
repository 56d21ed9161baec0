"""Fit one LDA engine (ESCA / ESCA_plain / CGS / CVB0) and write its held-out trace (tidy parquet)."""

from scalable_bayes.corpora import load_corpus
from scalable_bayes.inference.lda.experiments import run_held_out_experiment
from scalable_bayes.utils import save_table, setup_logging

setup_logging(snakemake.log[0])
df = run_held_out_experiment(load_corpus(snakemake.params.train_dir), load_corpus(snakemake.params.test_dir),
                             snakemake.params.settings)
save_table(df, snakemake.output[0])
