"""Figures of the VMF paper (Nonnenmacher & Sahani 2024): one function per figure, tidy tables in, a file out."""

from __future__ import annotations

import numpy as np
import matplotlib.pyplot as plt

from scalable_bayes.plotting.style import legend_below, savefig, style

__all__ = ["plot_fig1", "plot_fig2", "plot_fig3", "plot_fig4", "plot_fig5"]

_DS_TITLES = {"classic3": "classic3", "classic300": "classic300", "news20": "news20", "news20_small": "news20-small"}


def _colors(keys):
    cyc = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    return {k: cyc[i % len(cyc)] for i, k in enumerate(keys)}


def plot_fig1(df, path):
    """2 x 3: Psi (ODE dashed vs Bessel solid), abs and rel error; same for |grad Psi|."""
    with style():
        fig, ax = plt.subplots(2, 3, figsize=(10, 5.5))
        col = _colors(sorted(df.d.unique()))
        for d, sub in df.groupby("d"):
            c = col[d]
            ax[0, 0].semilogy(sub.r, sub.phi_ref, color=c, label=f"D={d}")
            ax[0, 0].semilogy(sub.r, sub.phi_ode, "--", color="k", lw=0.8)
            ax[0, 1].semilogy(sub.r, sub.phi_abs_err.clip(1e-17), color=c)
            ax[0, 2].semilogy(sub.r, sub.phi_rel_err.clip(1e-17), color=c)
            ax[1, 0].semilogy(sub.r, sub.dphi_ode, color=c, label=f"D={d}")
            ax[1, 0].semilogy(sub.r, sub.dphi_ref, "--", color="k", lw=0.8)
            ax[1, 1].semilogy(sub.r, sub.dphi_abs_err.clip(1e-17), color=c)
            ax[1, 2].semilogy(sub.r, sub.dphi_rel_err.clip(1e-17), color=c)
        conv = df.psi_const.iloc[0]
        ax[0, 0].set_title(f"Psi(mu) ({conv} constant):\nBessel (colour), ODE (black dashed)")
        ax[0, 1].set_title("abs. error of Psi")
        ax[0, 2].set_title("rel. error of Psi")
        ax[1, 0].set_title("|grad Psi(mu)|:\nODE (colour), root finding (black dashed)")
        ax[1, 1].set_title("abs. error of |grad Psi|")
        ax[1, 2].set_title("rel. error of |grad Psi|")
        for a in ax[1]:
            a.set_xlabel("|mu|")
        _figure_legend(fig, ax[0, 0])
        savefig(fig, path)


def _figure_legend(fig, ax, extra=()):
    """One legend below the panels: the colours of ``ax``, then the ``extra`` handles."""
    handles, labels = ax.get_legend_handles_labels()
    legend_below(fig, handles + list(extra), labels + [h.get_label() for h in extra])


def plot_fig2(df, path):
    """3 x 3: rows Psi, |grad Psi|, D_Psi(0||mu); columns value (reference), abs. error, rel. error.
    Refined closed forms solid, Banerjee dashed, the paper's ODE (when the reference is mpmath) dotted."""
    with style():
        fig, ax = plt.subplots(3, 3, figsize=(10, 8))
        col = _colors(sorted(df.d.unique()))
        reference = str(df["reference"].iloc[0]) if "reference" in df else "ode"
        for (d, method), sub in df.groupby(["d", "method"]):
            ls = {"refined": "-", "banerjee": "--", "ode": ":"}[method]
            c = col[d]
            for i, q in enumerate(["phi", "dphi", "breg"]):
                if method == "refined":
                    ax[i, 0].semilogy(sub.r, sub[f"{q}_ref"].abs(), color=c, label=f"D={d}")
                ax[i, 1].semilogy(sub.r, sub[f"{q}_abs_err"].clip(1e-17), ls, color=c)
                ax[i, 2].semilogy(sub.r, sub[f"{q}_rel_err"].clip(1e-17), ls, color=c)
        names = [f"Psi(mu) ({reference})", f"|grad Psi(mu)| ({reference})", f"D_Psi(0 || mu) ({reference})"]
        for i, n in enumerate(names):
            ax[i, 0].set_title(n)
            ax[i, 1].set_title("abs. error")
            ax[i, 2].set_title("rel. error")
        for a in ax[2]:
            a.set_xlabel("|mu|")
        styles = [("-", "refined closed form"), ("--", "Banerjee et al.")]
        if reference != "ode":
            styles.append((":", "the paper's ODE"))
        _figure_legend(fig, ax[0, 0], [plt.Line2D([], [], color="k", ls=ls, label=lab) for ls, lab in styles])
        savefig(fig, path)


def plot_fig3(df, path, true_k=None):
    """NMI vs K, mean over initialisations; soft/hard x natural/mean; tied dashed, free solid."""
    true_k = true_k or {}
    colors = {("soft", "mean"): "#CC79A7", ("soft", "natural"): "#000000", ("hard", "mean"): "#E69F00",
              ("hard", "natural"): "#009E73"}
    datasets = [d for d in ["classic3", "news20", "classic300", "news20_small"] if d in set(df.dataset)]
    datasets += [d for d in sorted(df.dataset.unique()) if d not in datasets]
    with style():
        n = len(datasets)
        ncol = 2 if n > 1 else 1
        nrow = int(np.ceil(n / ncol))
        fig, axes = plt.subplots(nrow, ncol, figsize=(5 * ncol, 3.6 * nrow), squeeze=False)
        mix = df[df.parametrization.isin(["mean", "natural"])]  # not spkmeans nor the control runs
        for ax, ds in zip(axes.ravel(), datasets):  # paper layout: classic3 | news20 over classic300 | news20-small
            sub = mix[mix.dataset == ds]
            g = sub.groupby(["assignment", "parametrization", "tied", "K"])["nmi"].mean()
            for (a, p, t), s in g.groupby(level=[0, 1, 2]):
                ks = s.index.get_level_values("K")
                name = {"mean": "Bregman (mean)", "natural": "movMF (natural)"}[p]
                # Bregman drawn thick and translucent under the thin movMF line: both stay visible when equal
                thick = p == "mean"
                ax.plot(ks, s.to_numpy(), "--" if t else "-", color=colors[(a, p)], marker="o",
                        ms=5 if thick else 2.5, lw=3.5 if thick else 1.2, alpha=0.55 if thick else 1.0,
                        zorder=1 if thick else 2, label=f"{a} {name}, {'tied' if t else 'free'}")
            tk = true_k.get(ds, true_k.get(ds.partition("_svd")[0]))  # a projection keeps its corpus's classes
            if tk is not None:
                ax.axvline(tk, color="0.6", lw=1)
            ax.set_title(f"{_DS_TITLES.get(ds, ds)} ({sub.seed.nunique()} inits)")
            ax.set_xlabel("number of clusters K")
            ax.set_ylabel("NMI")
        for ax in axes.ravel()[len(datasets):]:
            ax.axis("off")
        axes.ravel()[0].legend(fontsize=6, ncol=1)
        fig.tight_layout()
        savefig(fig, path)


def plot_fig4(df, path):
    """2 x k: top |grad Psi| for two phi'(0); bottom abs. difference of phi' (solid) and phi (dotted)."""
    dims = sorted(df.d.unique())
    with style():
        fig, ax = plt.subplots(2, len(dims), figsize=(4.5 * len(dims), 5.5), squeeze=False)
        for j, d in enumerate(dims):
            sub = df[df.d == d]
            e = sorted(sub.dpsi0.unique())
            for e0 in e:
                s = sub[sub.dpsi0 == e0].sort_values("r")
                ax[0, j].plot(s.r, s.dphi, label=f"phi'(0) = {e0:g}")
            a = sub[sub.dpsi0 == e[0]].sort_values("r")
            b = sub[sub.dpsi0 == e[-1]].sort_values("r")
            ax[1, j].semilogy(a.r, np.abs(a.dphi.to_numpy() - b.dphi.to_numpy()).clip(1e-17), label="|delta phi'|")
            ax[1, j].semilogy(a.r, np.abs(a.phi.to_numpy() - b.phi.to_numpy()).clip(1e-17), ":", label="|delta phi|")
            ax[0, j].set_title(f"D = {d}: |grad Psi(mu)|")
            ax[1, j].set_xlabel("|mu|")
            ax[0, j].legend()
            ax[1, j].legend()
        fig.tight_layout()
        savefig(fig, path)


def plot_fig5(df, path):
    """Left: closed form (solid) vs Halley-Perron 2 steps/20 terms (dotted) and the paper's ODE (dash-dot,
    when the reference is mpmath); right: 2/15 (dashed), 3/50 (dotted)."""
    with style():
        fig, ax = plt.subplots(1, 2, figsize=(10, 3.8))
        col = _colors(sorted(df.d.unique()))
        styles = {"closed_form": (0, "-"), "halley_2steps_20terms": (0, ":"), "halley_2steps_15terms": (1, "--"),
                  "halley_3steps_50terms": (1, ":"), "ode": (0, "-.")}
        reference = str(df["reference"].iloc[0]) if "reference" in df else "ode"
        for (d, m), sub in df.groupby(["d", "method"]):
            i, ls = styles[m]
            ax[i].semilogy(sub.r, sub.abs_err.clip(10**-13.5), ls, color=col[d], label=f"D={d} {m}")
        for a in ax:
            a.set_ylim(10**-13.5, 1e-5 if df.abs_err.max() < 1e-5 else None)
            a.set_xlabel("|mu|")
            a.set_ylabel(f"abs. error of |grad Psi| vs {reference}")
            a.legend(fontsize=6)
        ax[0].set_title("closed form (solid), root finding 2 steps/20 terms (dotted), ODE (dash-dot)", fontsize=8)
        ax[1].set_title("root finding: 2 steps/15 terms (dashed), 3 steps/50 terms (dotted)")
        fig.tight_layout()
        savefig(fig, path)
