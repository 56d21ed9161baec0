"""Rule sggmc_tab1: render SGGMC Table 1 (properties of D-MCMCs) from its spec, and its claim."""
from scalable_bayes.reporting import write_claim
from scalable_bayes.utils import save_table, setup_logging
from scalable_bayes_papers.sggmc import claims, tables

setup_logging(snakemake.log[0])  # noqa: F821
out = snakemake.output  # noqa: F821
table = tables.tab1()
save_table(table, out.csv)
save_table(table, out.md)
write_claim(out.claim, claims.check_tab1(table, snakemake.params.profile))  # noqa: F821
