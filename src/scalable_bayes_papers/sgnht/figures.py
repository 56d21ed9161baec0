"""Figures of the SGNHT paper (Ding et al. 2014): one function per figure, tidy run tables in, a file out.

Fig. 1 and SFig. 4 (Sec. 3, App. B) from the double-well tables; Fig. 2, SFig. 5, SFig. 6 (Sec. 5.1,
App. E) from the known-variance and Normal-Gamma tables; Fig. 3 (Sec. 5.2) from the ML summaries.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.ticker import NullFormatter
import numpy as np
import pandas as pd

from scalable_bayes.plotting.style import legend_below, savefig, style

_FIG1_ORDER = ["xi=1", "xi=10", "xi=0.1", "SGNHT"]


def _cell_label(h, A):
    return f"h={h:g}, A={A:g}"


def plot_fig1(density: pd.DataFrame, traces: pd.DataFrame, path) -> None:
    """Fig. 1: row 1 sample density vs exp(-U), one line per seed (a chain stuck in one well is drawn as such,
    not pooled with a chain stuck in the other); row 2 running mean kinetic energy (target 0.5), one per seed."""
    with style():
        fig, axes = plt.subplots(2, 4, figsize=(12, 5))
        for j, v in enumerate(_FIG1_ORDER):
            dv = density[density["variant"] == v]
            ax = axes[0, j]
            d = dv.groupby("bin_center")["true_density"].first()
            ax.plot(d.index, d.values, "k-", lw=1.2, label="true")
            for k, (seed, ds) in enumerate(dv.groupby("seed")):
                ds = ds.sort_values("bin_center")
                ax.plot(ds["bin_center"], ds["density"], "-", color=f"C{k}", lw=0.9, alpha=0.85, label=f"seed {seed}")
            ax.set_title(("fixed " + v.replace("xi", "ξ")) if v != "SGNHT" else "SGNHT")
            ax.set_xlabel("θ")
            if j == 0:
                ax.legend(fontsize=7)
            t = traces[traces["variant"] == v]
            ax = axes[1, j]
            for k, (seed, ts) in enumerate(t.groupby("seed")):
                ax.plot(ts["step"], ts["ke_running_mean"], color=f"C{k}", alpha=0.8)
            ax.axhline(0.5, color="k", ls="--", lw=1)
            ax.set_xscale("log")
            ax.set_xlabel("iteration")
            if j == 0:
                ax.set_ylabel("mean kinetic energy")
        axes[0, 0].set_ylabel("density")
        fig.tight_layout()
        savefig(fig, path)


def plot_sfig4(summary: pd.DataFrame, traces: pd.DataFrame, path) -> None:
    """SFig. 4: thermostat xi of SGNHT in the double-well run (thin: xi; thick: its running mean; one colour
    per seed), converging to B (read from the summary); log iteration axis, band B +/- 0.1."""
    B = float(summary["B"].iloc[0])
    with style():
        fig, ax = plt.subplots(figsize=(5.5, 3.2))
        t = traces[traces["variant"] == "SGNHT"]
        groups = [(k, seed, ts.sort_values("step")) for k, (seed, ts) in enumerate(t.groupby("seed"))]
        for k, seed, ts in groups:  # every instantaneous trace first, so no running mean is hidden under one
            ax.plot(ts["step"], ts["xi"], color=f"C{k}", lw=0.4, alpha=0.3, label=f"seed {seed}: ξ")
        for k, seed, ts in groups:
            ax.plot(ts["step"], ts["xi_running_mean"], color=f"C{k}", lw=1.8, label=f"seed {seed}: running mean")
        ax.axhline(B, color="k", ls="--", lw=1, label=f"B = {B:g}")
        ax.axhspan(B - 0.1, B + 0.1, color="0.8", alpha=0.5, lw=0)
        ax.set_xscale("log")
        ax.set_xlabel("iteration")
        ax.set_ylabel("ξ")
        ax.legend(fontsize=7)
        fig.tight_layout()
        savefig(fig, path)


def _density_panel(ax, dens, method, param="mu"):
    d = dens[(dens["method"] == method) & (dens["param"] == param)]
    true = None
    for k, ((h, A), dd) in enumerate(d.groupby(["h", "A"])):
        m = dd.groupby("bin_center")[["density", "true_density"]].mean()
        ax.plot(m.index, m["density"], color=f"C{k}", label=_cell_label(h, A))
        true = m["true_density"]
    if true is not None:
        ax.plot(true.index, true.values, "k--", lw=1.2, label="true")


def plot_fig2(kv_density, kv_traces, ng_summary, path) -> None:
    """Fig. 2: mu density (SGNHT), mu density (SGHMC), running mean of xi (SGNHT), RMSE vs tau (Normal-Gamma)."""
    with style():
        fig, axes = plt.subplots(1, 4, figsize=(14, 3.4))
        _density_panel(axes[0], kv_density, "SGNHT")
        axes[0].set_title("SGNHT, known variance")
        _density_panel(axes[1], kv_density, "SGHMC")
        axes[1].set_title("SGHMC, known variance")
        for ax in axes[:2]:
            ax.set_xlabel("μ")
        axes[0].legend(fontsize=6)
        t = kv_traces[kv_traces["method"] == "SGNHT"]
        for k, ((h, A), tt) in enumerate(t.groupby(["h", "A"])):
            m = tt.groupby("step")["xi_running_mean"].mean()
            axes[2].plot(m.index, m.values, color=f"C{k}", label=_cell_label(h, A))
            axes[2].axhline(A, color=f"C{k}", ls=":", lw=0.8)
        axes[2].set_xscale("log")
        axes[2].set_yscale("log")
        axes[2].set_xlabel("iteration")
        axes[2].set_ylabel("mean ξ (dotted: A)")
        axes[2].legend(fontsize=6)
        _tau_panel(axes[3], ng_summary)
        fig.tight_layout()
        savefig(fig, path)


def _tau_panel(ax, ng_summary) -> None:
    """Fig. 2 panel 4: RMSE vs tau per (method, h, A), tau with its 95% interval (tables.tau_summary) as a
    horizontal bar; colour = (h, A) cell as in panels 1-3, marker = method (no text labels: they collided)."""
    from .tables import tau_summary

    keys = ["method", "h", "A"]
    s = ng_summary.groupby(keys).agg(rmse=("rmse", "mean")).reset_index()
    if "tau_se" in ng_summary:
        tau = ng_summary.groupby(keys)[list(ng_summary.columns)].apply(tau_summary).reset_index()
        s = s.merge(tau[keys + ["tau", "tau_ci_low", "tau_ci_high"]], on=keys)
    else:
        s = s.merge(ng_summary.groupby(keys)["tau"].mean().reset_index(), on=keys)
        s["tau_ci_low"] = s["tau_ci_high"] = s["tau"]
    from matplotlib.lines import Line2D

    cells = sorted({(h, A) for h, A in zip(s["h"], s["A"])})  # same colours as panels 1-3
    floor = 0.3 * float(s["tau"].min())  # a lower CI bound below this (or below 0) is drawn as an arrow
    for _, r in s.iterrows():
        col = f"C{cells.index((r['h'], r['A']))}"
        filled = r["method"] == "SGNHT"
        lo = max(r["tau_ci_low"], floor)
        ax.plot([lo, r["tau_ci_high"]], [r["rmse"]] * 2, color=col, lw=1.0)
        if r["tau_ci_low"] < floor:
            ax.annotate("", (lo, r["rmse"]), xytext=(lo * 1.6, r["rmse"]), arrowprops=dict(arrowstyle="->", color=col, lw=1.0))
        ax.plot(r["tau"], r["rmse"], "s" if filled else "o", ms=6, color=col, mfc=col if filled else "white", mew=1.5)
    handles = [Line2D([], [], ls="", marker="o", color="0.3", mfc="white", mew=1.5, label="SGHMC"),
               Line2D([], [], ls="", marker="s", color="0.3", label="SGNHT")]
    handles += [Line2D([], [], color=f"C{k}", lw=2, label=_cell_label(h, A)) for k, (h, A) in enumerate(cells)]
    ax.legend(handles=handles, fontsize=6, loc="upper right")
    ax.set_xscale("log")
    ax.xaxis.set_minor_formatter(NullFormatter())  # minor labels (2x10^1, 3x10^1, ...) collided
    ax.set_xlabel("autocorrelation time of μ+γ (95% CI)")
    ax.set_ylabel("RMSE of density")
    ax.margins(x=0.1, y=0.1)


def plot_sfig5(kv_traces, path) -> None:
    """SFig. 5: running mean kinetic energy, SGHMC solid, SGNHT dashed, per (h, A)."""
    with style():
        fig, ax = plt.subplots(figsize=(6, 3.6))
        for k, ((h, A), tt) in enumerate(kv_traces.groupby(["h", "A"])):
            for method, ls in [("SGHMC", "-"), ("SGNHT", "--")]:
                m = tt[tt["method"] == method].groupby("step")["ke_running_mean"].mean()
                ax.plot(m.index, m.values, ls=ls, color=f"C{k}", label=f"{method} {_cell_label(h, A)}")
        ax.axhline(0.5, color="k", lw=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("iteration")
        ax.set_ylabel("mean kinetic energy")
        ax.legend(fontsize=6, ncol=2)
        fig.tight_layout()
        savefig(fig, path)


def plot_sfig6(ng_density, path) -> None:
    """SFig. 6: marginal densities of mu and gamma (Normal-Gamma) for SGNHT and SGHMC per (h, A)."""
    with style():
        fig, axes = plt.subplots(2, 2, figsize=(9, 6))
        for i, param in enumerate(["mu", "gamma"]):
            for j, method in enumerate(["SGNHT", "SGHMC"]):
                _density_panel(axes[i, j], ng_density, method, param)
                axes[i, j].set_title(f"{method}: {'μ' if param == 'mu' else 'γ'}")
        axes[0, 0].legend(fontsize=6)
        fig.tight_layout()
        savefig(fig, path)


def plot_fig3(table: pd.DataFrame, path, metric_labels: dict | None = None) -> None:
    """Fig. 3: test metric vs step size eta, one panel per (task, a); SGHMC vs SGNHT, error bars = sd over seeds.

    The two methods are drawn a little apart along eta (1.5% of the grid's span each way) so that equal
    results stay visible as two series; one legend below the panels (inside a panel it covered the
    diverged-chain marks on the top edge).

    ``table``: the ML run summaries; ``metric_labels``: y-axis label per task (``claims.METRIC``)."""
    metric_labels = metric_labels or {}
    tasks = list(dict.fromkeys(table["task"]))
    ncol = int(table.groupby("task")["a"].nunique().max())
    legend = {}
    with style():
        fig, axes = plt.subplots(len(tasks), ncol, figsize=(4 * ncol, 3 * len(tasks)), squeeze=False)
        for i, task in enumerate(tasks):
            tt = table[table["task"] == task]
            a_task = sorted(tt["a"].unique())
            etas = np.sort(tt["eta"].unique())
            dodge = 0.015 * (etas[-1] - etas[0]) if len(etas) > 1 else 0.0
            for j in range(ncol):
                ax = axes[i, j]
                if j >= len(a_task):
                    ax.axis("off")
                    continue
                a = a_task[j]
                for (method, col), shift in zip([("SGHMC", "C2"), ("SGNHT", "C0")], (-dodge, dodge)):
                    sub = tt[(tt["a"] == a) & (tt["method"] == method)]
                    g = sub.groupby("eta")["metric"]
                    m, s = g.mean(), g.std().fillna(0.0)
                    h = ax.errorbar(m.index + shift, m.values, yerr=s.values, marker="o", color=col, label=method,
                                    capsize=2)
                    legend.setdefault(method, h)
                    # a diverged chain is off the chart (as in the paper): mark its eta on the top edge
                    div = sorted(sub.loc[sub["diverged"].astype(bool), "eta"].unique())
                    if div:
                        (hd,) = ax.plot(np.asarray(div) + shift, [1.0] * len(div), "x", color=col, ms=9, mew=2,
                                        clip_on=False, transform=ax.get_xaxis_transform())
                        legend.setdefault(f"{method} diverged (off the chart)", hd)
                scale = ""
                if "eta_used" in tt.columns and len(tt):
                    f = float(tt["eta_used"].iloc[0] / tt["eta"].iloc[0])
                    scale = "" if abs(f - 1.0) < 1e-12 else f" (run with η × {f:.3g})"
                ax.set_title(f"{task}, a={a:g}{scale}", fontsize=9, pad=10)
                ax.set_xlabel("η (paper's grid)")
                ax.set_ylabel(metric_labels.get(task, "metric"))
        legend_below(fig, list(legend.values()), list(legend.keys()))
        savefig(fig, path)


def draw_synthetic(item: str, t: dict, path) -> None:
    """Draw one synthetic-experiment figure (Fig1, SFig4, Fig2, SFig5, SFig6) from its run tables, keyed as
    the rule's inputs (``summary``, ``density``, ``traces``; ``kv_*`` / ``ng_*`` for the Gaussian experiments)."""
    if item == "Fig1":
        plot_fig1(t["density"], t["traces"], path)
    elif item == "SFig4":
        plot_sfig4(t["summary"], t["traces"], path)
    elif item == "Fig2":
        plot_fig2(t["kv_density"], t["kv_traces"], t["ng_summary"], path)
    elif item == "SFig5":
        plot_sfig5(t["kv_traces"], path)
    elif item == "SFig6":
        plot_sfig6(t["ng_density"], path)
    else:
        raise ValueError(f"unknown SGNHT synthetic figure {item!r}; expected Fig1, SFig4, Fig2, SFig5 or SFig6")
