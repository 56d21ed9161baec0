"""One figure style for every paper: Agg backend, readable sizes, colour-blind-safe cycle."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from ..utils import chmod_as_created  # noqa: E402

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


def legend_below(fig, handles, labels) -> None:
    """Lay out ``fig`` and put one legend for all its panels in a row below them (inside a panel a legend
    covers curves or marks on the panel's edge)."""
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False)


_METADATA = {"png": {"Software": None}, "pdf": {"CreationDate": None, "Creator": None, "Producer": None}}


def savefig(fig, path: str | os.PathLike, also_pdf: bool = True) -> None:
    """Save ``fig`` to ``path`` (.png) and, if asked, the .pdf beside it, as one atomic pair; close it.

    Both files are first written to temporary files beside their targets and renamed onto them only
    when both were written, so a failure (in either ``savefig``, a full disk, an interrupt) leaves neither
    new file: each target keeps what it held before (usually nothing). Should the second rename fail,
    the first target is removed as well, so no PNG stands without its PDF. No timestamps or software
    versions are written, so the same figure gives the same bytes.
    """
    path = Path(path)
    targets = [path]
    if also_pdf and path.suffix == ".png":
        targets.append(path.with_suffix(".pdf"))
    try:
        with contextlib.ExitStack() as stack:
            tmps = [stack.enter_context(_pending(t)) for t in targets]
            for target, tmp in zip(targets, tmps):
                fmt = target.suffix.lstrip(".")
                fig.savefig(tmp, format=fmt, metadata=_METADATA.get(fmt, {}))
            done = []
            try:
                for target, tmp in zip(targets, tmps):
                    chmod_as_created(tmp)
                    os.replace(tmp, target)
                    done.append(target)
            except BaseException:
                for target in done:  # leave neither file of the pair
                    with contextlib.suppress(FileNotFoundError):
                        target.unlink()
                raise
    finally:
        plt.close(fig)


@contextlib.contextmanager
def _pending(target: Path):
    """A temporary path beside ``target`` (same suffix, so matplotlib needs no format guess); removed on exit
    unless it was renamed onto ``target``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=f".part{target.suffix}", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp_path.unlink()


def plate_diagram(ax, spec, radius, label_offset, title, xlim, ylim):
    """Draw a graphical model on ``ax`` from ``spec``: ``nodes`` {name: (x, y, label, observed)} (observed
    None: a hyper-parameter, drawn as a dot with its label above at ``label_offset``; True: a shaded
    circle; False: an open circle of ``radius``), ``edges`` [(from, to)] as arrows between the node rims,
    ``plates`` [(label, x0, y0, x1, y1)] as rectangles labelled in their lower right corner."""
    ax.set_axis_off()
    ax.set_aspect("equal")
    nodes = spec["nodes"]
    for x, y, label, observed in nodes.values():
        if observed is None:
            ax.plot([x], [y], "o", color="k", ms=4)
            ax.text(x, y + label_offset, label, ha="center", va="bottom", fontsize=11)
        else:
            ax.add_patch(plt.Circle((x, y), radius, fc="#BBBBBB" if observed else "white", ec="k", lw=1))
            ax.text(x, y, label, ha="center", va="center", fontsize=10)
    for a, b in spec["edges"]:
        xa, ya, _, oa = nodes[a]
        xb, yb, _, ob = nodes[b]
        dx, dy = xb - xa, yb - ya
        norm = (dx * dx + dy * dy) ** 0.5
        ux, uy = dx / norm, dy / norm
        ra = radius if oa is not None else 0.06
        rb = radius if ob is not None else 0.06
        ax.annotate("", xy=(xb - rb * ux, yb - rb * uy), xytext=(xa + ra * ux, ya + ra * uy),
                    arrowprops=dict(arrowstyle="-|>", lw=1, color="k"))
    for label, x0, y0, x1, y1 in spec["plates"]:
        ax.add_patch(plt.Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, ec="k", lw=0.8))
        ax.text(x1 - 0.08, y0 + 0.06, label, ha="right", va="bottom", fontsize=9)
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_title(title)
