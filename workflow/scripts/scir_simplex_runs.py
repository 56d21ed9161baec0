"""Rule scir_simplex_runs: SCIR, SGRLD and the exact sampler on one target for one seed -> KS and samples tables."""
import pandas as pd

from scalable_bayes.utils import save_table, setup_logging
from scalable_bayes_papers.scir import runs

setup_logging(snakemake.log[0])  # noqa: F821
wc, out = snakemake.wildcards, snakemake.output  # noqa: F821
tuning = pd.read_parquet(snakemake.input.tuning)  # noqa: F821
ks, samples = runs.simplex_runs(wc.target, int(wc.seed), snakemake.params.settings, tuning)  # noqa: F821
save_table(ks, out.ks)
save_table(samples, out.samples)
