"""Rule dataset_table: results/tables/datasets.{csv,md} and its claim."""
from pathlib import Path

from scalable_bayes.corpora.summary import dataset_table
from scalable_bayes.reporting import write_claim
from scalable_bayes.utils import save_table, setup_logging
from scalable_bayes_papers.data.claims import check_datasets

setup_logging(snakemake.log[0])
raw = {name: Path(path) for name, path in snakemake.input.items() if name not in ("meta", "code")}
df = dataset_table([Path(p).parent for p in snakemake.input.meta], raw=raw, redraws=snakemake.params.redraws)
save_table(df, snakemake.output.csv)
save_table(df, snakemake.output.md)
write_claim(snakemake.output.claim, check_datasets(df, snakemake.params.profile))
