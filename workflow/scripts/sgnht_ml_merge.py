"""Rule sgnht_ml_merge: the cells of one SGNHT ML task x seed, in grid order -> its summary and trace tables."""
import pandas as pd

from scalable_bayes.utils import save_table, setup_logging
from scalable_bayes_papers.sgnht import runs

setup_logging(snakemake.log[0])  # noqa: F821
inp, out = snakemake.input, snakemake.output  # noqa: F821
summary, trace = runs.merge_cells([pd.read_parquet(f) for f in inp.summary], [pd.read_parquet(f) for f in inp.trace])
save_table(summary, out.summary)
save_table(trace, out.trace)
