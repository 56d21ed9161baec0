"""Rule fetch_source: mirror or upstream -> verified, extracted data/raw/<source>/."""
import os

from scalable_bayes.corpora.fetch import fetch_source
from scalable_bayes.utils import setup_logging

setup_logging(snakemake.log[0])
data = snakemake.config["data"]
fetch_source(
    snakemake.wildcards.source,
    snakemake.output[0],
    mirror=os.environ.get("SCALABLE_BAYES_MIRROR") or data["mirror"],
    urls=data["urls"],
    retries=data["retries"],
    timeout=data["timeout_s"],
)
