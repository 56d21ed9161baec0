"""Rules news20_messages / wikipedia_counts: one shared parse of a raw source for several corpora."""
from pathlib import Path

from scalable_bayes.corpora import save_corpus
from scalable_bayes.corpora.build import news20_messages, wikipedia_counts
from scalable_bayes.utils import save_table, setup_logging

setup_logging(snakemake.log[0])
raw = {name: Path(path) for name, path in snakemake.input.items() if name != "code"}
if snakemake.rule == "news20_messages":
    save_table(news20_messages(raw), snakemake.output[0])
else:
    save_corpus(wikipedia_counts(raw, snakemake.params.max_docs), Path(snakemake.output.counts).parent)
