"""Rule sgnht_synthetic_runs: one SGNHT synthetic experiment (double_well | known_variance | normal_gamma)
for one seed -> summary, density and traces tables."""
from scalable_bayes.utils import save_table, setup_logging
from scalable_bayes_papers.sgnht import runs

setup_logging(snakemake.log[0])  # noqa: F821
wc, out = snakemake.wildcards, snakemake.output  # noqa: F821
tables = runs.synthetic_runs(wc.experiment, int(wc.seed), snakemake.params.settings)  # noqa: F821
for df, path in zip(tables, [out.summary, out.density, out.traces]):
    save_table(df, path)
