"""Figures of the SCIR paper (Baker et al. 2018): one function per figure, tidy run tables in, a file out.

Fig. 1 (boxplots of omega_5) and Fig. 2 (KS distance against minibatch size) from the simplex tables;
Fig. 3a / SFigA (LDA perplexity) and Fig. 3b / SFigB (DP mixture log-predictive) from the traces.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from scalable_bayes.plotting.style import savefig, style

COLORS = {"SCIR": "C0", "SGRLD": "C3", "Exact": "k", "CGS": "C2", "Gibbs": "C2"}


def plot_fig1(samples: pd.DataFrame, path) -> None:
    """Fig. 1: boxplots (log scale) of omega_5 from Exact, SCIR and SGRLD on the sparse target, first seed."""
    s = samples[(samples["target"] == "sparse") & (samples["seed"] == samples["seed"].min())]
    order = ["Exact", "SCIR", "SGRLD"]
    with style():
        fig, ax = plt.subplots(figsize=(4.5, 3.6))
        vals = [np.log10(np.maximum(s.loc[s["method"] == m, "omega"].to_numpy(), 1e-300)) for m in order]
        ax.boxplot(vals, tick_labels=order)
        ax.set_ylabel(r"$\log_{10}\,\omega_5$")
        ax.set_xlabel("method")
        ax.set_title("sparse Dirichlet posterior", fontsize=9)
        savefig(fig, path)


def plot_fig2(ks: pd.DataFrame, path) -> None:
    """Fig. 2: KS distance against minibatch proportion (log x), (a) sparse, (b) dense; one line per seed."""
    with style():
        fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=False)
        for ax, target, tag in zip(axes, ["sparse", "dense"], "ab"):
            k = ks[ks["target"] == target]
            for method in ["SCIR", "SGRLD"]:
                for i, (seed, g) in enumerate(k[k["method"] == method].groupby("seed")):
                    g = g.sort_values("proportion")
                    ax.plot(g["proportion"], g["ks_mean"], "o-", ms=3, color=COLORS[method], alpha=0.7,
                            label=method if i == 0 else None)
            ex = k.loc[k["method"] == "Exact", "ks_mean"]
            if len(ex):
                ax.axhline(ex.mean(), color="k", ls="--", lw=1, label="Exact (1000 draws)")
            ax.set_xscale("log")
            ax.set_xlabel("minibatch size (proportion of N, log scale)")
            ax.set_ylabel("KS distance")
            ax.set_title(f"({tag}) {target}", fontsize=9)
            ax.legend(fontsize=7)
        savefig(fig, path)


def _lines(ax, trace, x, y, methods):
    for method in methods:
        for i, (seed, g) in enumerate(trace[trace["method"] == method].groupby("seed")):
            g = g.sort_values("iteration")
            ax.plot(g[x], g[y], "-", lw=1, color=COLORS[method], alpha=0.8, label=method if i == 0 else None)


def plot_fig3a(trace: pd.DataFrame, path) -> None:
    """Fig. 3a: held-out perplexity against documents seen, SCIR and SGRLD, one line per seed."""
    with style():
        fig, ax = plt.subplots(figsize=(5, 3.6))
        _lines(ax, trace, "docs_seen", "perplexity", ["SCIR", "SGRLD"])
        ax.set_xlabel("number of documents")
        ax.set_ylabel("held-out perplexity")
        ax.set_ylim(top=float(trace.loc[trace["iteration"] > 0, "perplexity"].quantile(0.98)) * 1.05)
        ax.legend(fontsize=8)
        savefig(fig, path)


def plot_sfiga(trace: pd.DataFrame, path) -> None:
    """SFigA: perplexity against sampler wall time, SCIR, SGRLD and collapsed Gibbs."""
    with style():
        fig, ax = plt.subplots(figsize=(5, 3.6))
        _lines(ax, trace[trace["iteration"] > 0], "wall_s", "perplexity", ["SCIR", "SGRLD", "CGS"])
        ax.set_xlabel("sampler wall time (s)")
        ax.set_ylabel("held-out perplexity")
        ax.legend(fontsize=8)
        savefig(fig, path)


def plot_fig3b(trace: pd.DataFrame, path) -> None:
    """Fig. 3b: test log-predictive per user against iteration (top) and occupied clusters (bottom), SCIR and SGRLD."""
    with style():
        fig, axes = plt.subplots(2, 1, figsize=(5, 5.4), sharex=True)
        _lines(axes[0], trace, "iteration", "log_predictive", ["SCIR", "SGRLD"])
        _lines(axes[1], trace, "iteration", "n_clusters", ["SCIR", "SGRLD"])
        axes[0].set_ylabel("test log-predictive")
        axes[1].set_ylabel("occupied clusters")
        axes[1].set_xlabel("iteration")
        axes[0].legend(fontsize=8)
        savefig(fig, path)


def plot_sfigb(trace: pd.DataFrame, path) -> None:
    """SFigB: test log-predictive against the sampler's time, SCIR, SGRLD and the exact Gibbs slice sampler.

    The clock is the sampler's process CPU time where the runs record it (one thread each: the work done,
    without the stalls of a shared machine; one SGRLD seed's 28-s wall-clock stall once squeezed every
    other curve into a fifth of the axis), else the wall time."""
    clock = "cpu_s" if "cpu_s" in trace and trace["cpu_s"].notna().all() else "wall_s"
    with style():
        fig, ax = plt.subplots(figsize=(5, 3.6))
        _lines(ax, trace, clock, "log_predictive", ["SCIR", "SGRLD", "Gibbs"])
        ax.set_xlabel("sampler CPU time (s, one thread)" if clock == "cpu_s" else "sampler wall time (s)")
        ax.set_ylabel("test log-predictive")
        ax.legend(fontsize=8)
        savefig(fig, path)
