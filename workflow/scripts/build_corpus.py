"""Rules build_corpus_*: extracted raw sources -> data/processed/<corpus>/."""
from pathlib import Path

from scalable_bayes.corpora import save_corpus
from scalable_bayes.corpora.build import build_corpus
from scalable_bayes.utils import setup_logging

setup_logging(snakemake.log[0])
raw = {name: Path(path) for name, path in snakemake.input.items() if name != "code"}
corpus = build_corpus(snakemake.wildcards.corpus, raw, snakemake.params.settings)
save_corpus(corpus, Path(snakemake.output.counts).parent)
