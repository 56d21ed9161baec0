"""Rule sggmc_static_figure: draw one static SGGMC figure (Fig1, Fig2, SFig1) and its claim."""
from scalable_bayes.reporting import write_claim
from scalable_bayes.utils import setup_logging
from scalable_bayes_papers.sggmc import claims, figures

setup_logging(snakemake.log[0])  # noqa: F821
item = snakemake.params.item  # noqa: F821
figures.STATIC_FIGURES[item](snakemake.output.fig)  # noqa: F821
write_claim(snakemake.output.claim, getattr(claims, f"check_{item.lower()}")(snakemake.params.profile))  # noqa: F821
