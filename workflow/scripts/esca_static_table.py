"""Rule esca_tab1_tab2: render one static ESCA table (Tab1: models, Tab2: notation) from its spec, and its claim."""
from scalable_bayes.reporting import write_claim
from scalable_bayes.utils import save_table, setup_logging
from scalable_bayes_papers.esca import claims, tables

setup_logging(snakemake.log[0])
item = snakemake.params.item
table = tables.STATIC_TABLES[item]()
save_table(table, snakemake.output.csv)
save_table(table, snakemake.output.md)
write_claim(snakemake.output.claim, getattr(claims, f"check_{item.lower()}")(table, snakemake.params.profile))
