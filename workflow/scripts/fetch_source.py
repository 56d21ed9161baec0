"""Rule fetch_source: mirror or upstream -> verified, extracted data/raw/<source>/."""
from scalable_bayes.corpora.fetch import fetch_source
from scalable_bayes.utils import setup_logging

setup_logging(snakemake.log[0])
fetch_source(
    snakemake.wildcards.source,
    snakemake.output[0],
    mirror=snakemake.params.mirror,
    urls=snakemake.params.urls,
    retries=snakemake.params.retries,
    timeout=snakemake.params.timeout,
)
