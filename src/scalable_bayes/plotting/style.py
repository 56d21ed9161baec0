"""One figure style for every paper: Agg backend, readable sizes, colour-blind-safe cycle."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from ..utils import atomic_path  # noqa: E402

STYLE = {
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "savefig.bbox": "tight",
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 1.4,
    "axes.prop_cycle": matplotlib.cycler(
        color=["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]
    ),
    # deterministic output: no timestamps in PDFs/PNGs
    "pdf.compression": 6,
    "svg.hashsalt": "scalable_bayes",
}


@contextlib.contextmanager
def style():
    with plt.rc_context(STYLE):
        yield


def savefig(fig, path: str | os.PathLike, also_pdf: bool = True) -> None:
    """Save ``fig`` atomically to ``path`` (.png) and, if asked, the .pdf beside it; close it."""
    path = Path(path)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=path.suffix.lstrip("."), metadata={"Software": None} if path.suffix == ".png" else {"CreationDate": None, "Creator": None, "Producer": None})
    if also_pdf and path.suffix == ".png":
        pdf = path.with_suffix(".pdf")
        with atomic_path(pdf) as tmp:
            fig.savefig(tmp, format="pdf", metadata={"CreationDate": None, "Creator": None, "Producer": None})
    plt.close(fig)
