"""Rules esca_fig1, esca_fig4: draw one static ESCA diagram from its spec, and its (unchecked) claim."""
from scalable_bayes.reporting import write_claim
from scalable_bayes.utils import setup_logging
from scalable_bayes_papers.esca import claims, figures

setup_logging(snakemake.log[0])
item = snakemake.params.item
figures.STATIC_FIGURES[item](snakemake.output.fig)
write_claim(snakemake.output.claim, getattr(claims, f"check_{item.lower()}")(snakemake.params.profile))
