"""Rule esca_throughput: the ESCA throughput table (tokens/s of each engine, and of ESCA over MPI) and its claim."""
import pandas as pd

from scalable_bayes.reporting import write_claim
from scalable_bayes.utils import save_table, setup_logging
from scalable_bayes_papers.esca import claims, tables

setup_logging(snakemake.log[0])
df = pd.concat([pd.read_parquet(f) for f in snakemake.input.runs], ignore_index=True)
tol = snakemake.params.quality_tol
table = tables.throughput(df, [pd.read_parquet(f) for f in snakemake.input.mpi], quality_tol=tol)
save_table(table, snakemake.output.csv)
save_table(table, snakemake.output.md)
write_claim(snakemake.output.claim, claims.check_throughput(table, snakemake.params.profile, quality_tol=tol))
