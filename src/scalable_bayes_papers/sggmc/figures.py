"""Figures of the SGGMC paper (Liu, Zhu & Song, NIPS 2016): run tables -> figure files, nothing else (no fit,
no verdict). Static diagrams (Fig. 1, Fig. 2) are drawn from the specs in :mod:`.static`; SFig1 from App. D's
construction (:func:`.static.appd_modes`)."""

from __future__ import annotations

import numpy as np

from scalable_bayes.plotting.style import plate_diagram, plt, savefig, style

from .data import angle_edges, toy_density
from .static import APPD_PAPER_MODES, FIG1_SPEC, FIG2_SPEC, appd_modes, unit

# ---------------------------------------------------------------------------- static diagrams


def fig1(out):
    """SGGMC-Fig1 (Sec. 3): manifold M, a local coordinate system (N, Phi) and the isometric embedding Xi."""
    spec = FIG1_SPEC
    with style():
        fig, ax = plt.subplots(figsize=(8, 2.6))
        ax.set_axis_off()
        ax.set_aspect("equal")
        for name, (x0, y0, w, h, title) in spec["panels"].items():
            if name == "coords":
                ax.add_patch(plt.Rectangle((x0, y0), w, h, fill=False, ec="k", lw=0.8))
                ax.add_patch(plt.Rectangle((x0 + 0.6, y0 + 0.5), 1.4, 1.1, fc="#56B4E9", alpha=0.3, ec="#0072B2"))
            elif name == "manifold":
                t = np.linspace(0, 2 * np.pi, 200)
                r = 1.0 + 0.12 * np.sin(3 * t) + 0.08 * np.cos(2 * t)
                ax.fill(x0 + w / 2 + r * 1.25 * np.cos(t), y0 + h / 2 + r * 0.95 * np.sin(t), fc="#E69F00", alpha=0.25,
                        ec="#D55E00")
                ax.add_patch(plt.Circle((x0 + w / 2, y0 + h / 2), 0.45, fc="#56B4E9", alpha=0.3, ec="#0072B2"))
            else:
                ax.add_patch(plt.Rectangle((x0, y0), w, h, fill=False, ec="k", lw=0.8))
                ax.add_patch(plt.Circle((x0 + w / 2, y0 + h / 2), 0.9, fill=False, ec="#D55E00", lw=1.4))
                th = np.linspace(-0.5, 0.5, 30)
                ax.plot(x0 + w / 2 + 0.9 * np.cos(th), y0 + h / 2 + 0.9 * np.sin(th), color="#0072B2", lw=3, alpha=0.6)
            ax.text(x0 + w / 2, y0 + h + 0.12, title, ha="center", va="bottom", fontsize=9)
        pts = spec["points"]
        for name, (x, y, label, (lx, ly)) in pts.items():
            ax.plot([x], [y], "o", color="k", ms=3)
            ax.text(lx, ly, label, ha="center", va="top", fontsize=9)
        for a, b, label, rad, (lx, ly) in spec["maps"]:
            xa, ya = pts[a][:2]
            xb, yb = pts[b][:2]
            ax.annotate("", xy=(xb, yb), xytext=(xa, ya),
                        arrowprops=dict(arrowstyle="-|>", lw=1, color="k", shrinkA=3, shrinkB=3,
                                        connectionstyle=f"arc3,rad={rad}"))
            ax.text(lx, ly, label, ha="center", va="center", fontsize=10)
        ax.set_xlim(-0.2, 10.0)
        ax.set_ylim(-0.6, 2.75)
        ax.set_title("SGGMC Fig. 1: manifold $\\mathcal{M}$ with local coordinates $(\\mathcal{N}, \\Phi)$ and "
                     "embedding $\\Xi$ (schematic)")
        savefig(fig, out)


def fig2(out):
    """SGGMC-Fig2 (Sec. 4): the SAM graphical model (plate diagram)."""
    spec = FIG2_SPEC
    with style():
        fig, ax = plt.subplots(figsize=(7, 2.9))
        plate_diagram(ax, spec, radius=0.36, label_offset=0.2, title="SGGMC Fig. 2: spherical admixture model (SAM)",
                      xlim=(-0.1, 8.5), ylim=(0.0, 3.2))
        savefig(fig, out)


def _circle_axes(ax):
    t = np.linspace(0, 2 * np.pi, 400)
    ax.plot(np.cos(t), np.sin(t), color="0.6", lw=0.8)
    ax.plot([0], [0], "k+", ms=5)
    ax.annotate("", xy=(1.35, 0), xytext=(-1.35, 0), arrowprops=dict(arrowstyle="->", lw=0.6, color="0.5"))
    ax.text(1.37, 0, "$e_1$", va="center", fontsize=8)
    ax.set_aspect("equal")
    ax.set_axis_off()
    ax.set_xlim(-1.5, 1.6)
    ax.set_ylim(-1.3, 1.3)


def _arrow(ax, ang, label, color, ls="-"):
    x = unit(ang)
    ax.annotate("", xy=x, xytext=(0, 0), arrowprops=dict(arrowstyle="-|>", lw=1.4, color=color, ls=ls))
    ax.text(*(1.18 * x), label, ha="center", va="center", fontsize=9, color=color)


def sfig1(out):
    """SGGMC-SFig1 (App. D, its Fig. 1): left, the generating v1^(g), v2^(g) and the data modes v1^(g), mu^(g);
    right, the two approximate posterior modes (v1^(1), v2^(1)) (blue) and (v1^(2), v2^(2)) (green), computed by
    :func:`.static.appd_modes`."""
    m = appd_modes()
    with style():
        fig, (a, b) = plt.subplots(1, 2, figsize=(7, 3.4))
        _circle_axes(a)
        _arrow(a, m["v1_g"], r"$v_1^{(g)}$", "#0072B2")
        _arrow(a, m["v2_g"], r"$v_2^{(g)}$", "#009E73")
        _arrow(a, m["mu_g"], r"$\mu^{(g)}$", "#D55E00", ls="--")
        a.set_title("generating values; data modes $v_1^{(g)}$, $\\mu^{(g)}$")
        _circle_axes(b)
        (v11, v21), (v12, v22) = m["mode1"], m["mode2"]
        _arrow(b, v11, r"$v_1^{(1)}$", "#0072B2")
        _arrow(b, v21, r"$v_2^{(1)}$", "#0072B2", ls="--")
        _arrow(b, v12, r"$v_1^{(2)}$", "#009E73")
        _arrow(b, v22, r"$v_2^{(2)}$", "#009E73", ls="--")
        b.set_title("approximate posterior modes")
        fig.suptitle(f"SGGMC SFig. 1 (App. D): phi = {m['phi'] / np.pi:.3g} pi; modes "
                     f"({v11 / np.pi * 24:+.2f}, {v21 / np.pi * 24:+.2f}) and ({v12 / np.pi * 24:+.2f}, "
                     f"{v22 / np.pi * 24:+.2f}) x pi/24")
        savefig(fig, out)


# ---------------------------------------------------------------------------- sampled figures

_COLORS = {"GMC": "#000000", "SGGMC": "#0072B2", "gSGNHT": "#009E73", "SGGMC-V0": "#D55E00", "gSGNHT-V0": "#CC79A7",
           "SGGMC-full": "#E69F00"}


def _hist_density(theta, edges):
    c, _ = np.histogram(theta, bins=edges)
    return c / (len(theta) * np.diff(edges))


def fig3(t, settings, out):
    """SGGMC-Fig3 (Sec. 5.1): (a) 100 SGGMC samples (evenly spaced over the chain) on the circle in R^2 and the empirical distribution of all
    kept samples of its first seed (bars outward from the circle); (b) true density and 0.1-rad histograms of
    GMC, SGGMC and gSGNHT in angle space (all seeds pooled); (c) the same without the V correction."""
    edges = angle_edges(settings["bin_width"])
    mid = (edges[:-1] + edges[1:]) / 2
    th = np.linspace(-np.pi, np.pi, 1000)
    dens = toy_density(th, settings["mu2_reading"])
    seed0 = t["seed"].min()
    with style():
        fig = plt.figure(figsize=(12, 3.8), layout="constrained")
        a = fig.add_subplot(1, 3, 1)
        s = t[(t["method"] == "SGGMC") & (t["seed"] == seed0)].sort_values("sample")
        if len(s):
            h = _hist_density(s["angle"], edges)
            for m_, hh, w in zip(mid, h, np.diff(edges)):
                r = np.array([1.0, 1.0 + hh])
                a.fill([np.cos(m_ - w / 2) * r[0], np.cos(m_ - w / 2) * r[1], np.cos(m_ + w / 2) * r[1],
                        np.cos(m_ + w / 2) * r[0]],
                       [np.sin(m_ - w / 2) * r[0], np.sin(m_ - w / 2) * r[1], np.sin(m_ + w / 2) * r[1],
                        np.sin(m_ + w / 2) * r[0]], fc="#56B4E9", ec="none", alpha=0.7)
            sub = s["angle"].to_numpy()[np.linspace(0, len(s) - 1, 100).astype(int)]  # evenly spaced (ours)
            a.plot(np.cos(sub), np.sin(sub), "o", ms=3, color="#D55E00", label="100 SGGMC samples")
        a.plot(np.cos(th), np.sin(th), color="0.4", lw=0.8)
        a.plot((1 + dens) * np.cos(th), (1 + dens) * np.sin(th), color="k", lw=0.8, label="true density")
        a.set_aspect("equal")
        a.legend(loc="lower left", fontsize=7)
        a.set_title(f"(a) SGGMC in R^2 (seed {seed0}, {len(s):,} samples)")
        for k, (ax, methods) in enumerate([(fig.add_subplot(1, 3, 2), ["GMC", "SGGMC", "gSGNHT"]),
                                           (fig.add_subplot(1, 3, 3), ["GMC", "SGGMC-V0", "gSGNHT-V0"])]):
            ax.plot(th, dens, color="0.5", lw=3, alpha=0.5, label="true")
            for m_ in methods:
                d = t[t["method"] == m_]
                if len(d):
                    ax.stairs(_hist_density(d["angle"], edges), edges, color=_COLORS[m_], lw=1.2, label=m_)
            ax.set_xlabel("angle (rad)")
            ax.set_ylabel("density")
            ax.legend(fontsize=7)
            ax.set_title("(b) angle space, V = 1000 used in eq. 8" if k == 0 else "(c) without the V correction (V = 0)")
        fig.suptitle("SGGMC Fig. 3: toy on S^1, U(x) = -log(exp(5 mu1'x) + 2 exp(5 mu2'x)), gradient noise N(0, 1000 I)")
        savefig(fig, out)


def fig4(t, truth, settings, out):
    """SGGMC-Fig4 (Sec. 5.2): (a, b) true and empirical marginal posteriors of v1 and v2 (GMC, SGGMC; seeds
    pooled); (c) true joint density (grid) and (d) SGGMC's 2-D histogram, with App. D's modes marked."""
    g = settings["grid"]
    tr = truth.sort_values(["a1", "a2"])
    a1 = np.unique(tr["a1"].to_numpy())
    mass = tr["mass"].to_numpy().reshape(g, g)
    step = a1[1] - a1[0]
    w = settings["window"]
    edges = np.linspace(-w, w, settings["hist_bins"] + 1)
    big = mass > 1e-5 * mass.max()  # the axes show where the posterior lives (the grid may be wider)
    lo1, hi1 = a1[big.any(axis=1)][[0, -1]]
    lo2, hi2 = a1[big.any(axis=0)][[0, -1]]
    pad = 0.05
    with style():
        fig, axes = plt.subplots(1, 4, figsize=(14, 3.6), layout="constrained")
        for k, (ax, col) in enumerate(zip(axes[:2], ["v1", "v2"])):
            marg = mass.sum(axis=1 - k) / step
            ax.plot(a1, marg, color="0.5", lw=3, alpha=0.5, label="true")
            for m_ in ["GMC", "SGGMC", "SGGMC-full"]:
                d = t[t["method"] == m_]
                if len(d):
                    lo, hi = (lo1, hi1) if k == 0 else (lo2, hi2)
                    e = np.linspace(lo - pad, hi + pad, 41)  # finer than the 2-D cells (display only)
                    ax.stairs(_hist_density(d[col], e), e, color=_COLORS[m_], lw=1.2, label=m_)
            ax.set_xlabel(f"{col} (angle, rad)")
            ax.set_ylabel("density")
            ax.legend(fontsize=7)
            ax.set_title(f"({'ab'[k]}) pi({col} | D)")
            ax.set_xlim(*((lo1 - pad, hi1 + pad) if k == 0 else (lo2 - pad, hi2 + pad)))
        ext = [-w, w, -w, w]
        axes[2].imshow(mass.T, origin="lower", extent=ext, aspect="auto", cmap="viridis")
        axes[2].set_title("(c) true pi(v1, v2 | D) (grid)")
        d = t[t["method"] == "SGGMC"]
        hh, _, _ = np.histogram2d(d["v1"], d["v2"], bins=[edges, edges])
        axes[3].imshow(hh.T, origin="lower", extent=ext, aspect="auto", cmap="viridis")
        axes[3].set_title(f"(d) SGGMC ({len(d):,} samples)")
        for ax in axes[2:]:
            for (m1, m2), c in zip(APPD_PAPER_MODES, ["#56B4E9", "#E69F00"]):
                ax.plot([m1], [m2], "x", color=c, ms=7, mew=1.5)
            ax.set_xlabel("v1 (rad)")
            ax.set_ylabel("v2 (rad)")
            ax.set_xlim(lo1 - pad, hi1 + pad)
            ax.set_ylim(lo2 - pad, hi2 + pad)
            ax.grid(False)
        fig.suptitle("SGGMC Fig. 4: posterior of the two-vMF mixture on S^1 x S^1 (x: App. D's approximate modes)")
        savefig(fig, out)


_FIG5_STYLE = {"VI": ("#000000", "--"), "StoVI": ("#777777", "--"), "GMC-apprMH": ("#CC79A7", "-."),
               "GMC-bGibbs": ("#E69F00", "-."), "SGGMC": ("#0072B2", "-"), "SGGMC-full": ("#56B4E9", ":"),
               "gSGNHT": ("#009E73", "-"), "gSGNHT-full": ("#8FD694", ":")}


def fig5(t, settings, out):
    """SGGMC-Fig5 (Sec. 5.3), one row per corpus.

    Main panel (left, when the runs have it): the estimate the verdict uses, the importance-sampling
    log-perplexity of each method's state at the end of its budget (ours; it converges at the paper's
    concentrations), each seed's value as a small mark and the mean over seeds with 2 Monte Carlo standard
    errors. Beside it (right): the paper's estimate along the sampler's clock (``budget_clock``: CPU or wall
    time), Dirichlet prior draws of Sec. 5.3, which is biased upwards by hundreds to thousands of nats at
    these concentrations (mean over seeds at each checkpoint)."""
    corpora = sorted(t["corpus"].unique())
    clock = "cpu_time" if settings.get("budget_clock", "cpu") == "cpu" else "wall_time"
    has_is = "log_perplexity_is" in t.columns and t["log_perplexity_is"].notna().any()
    ncol = 2 if has_is else 1
    with style():
        fig, axes = plt.subplots(len(corpora), ncol, figsize=(5.5 * ncol + 0.5, 3.9 * len(corpora)),
                                 layout="constrained", squeeze=False,
                                 gridspec_kw={"width_ratios": [1, 1.1]} if has_is else None)
        for i, c in enumerate(corpora):
            d = t[t["corpus"] == c]
            if has_is:
                ax = axes[i, 0]
                fin = d.dropna(subset=["log_perplexity_is"])
                e = (fin.groupby("method")[["log_perplexity_is", "log_perplexity_is_se"]].mean()
                     .sort_values("log_perplexity_is"))
                for k, (m_, r) in enumerate(e.iterrows()):
                    col = _FIG5_STYLE.get(m_, ("k", "-"))[0]
                    seeds = fin.loc[fin["method"] == m_, "log_perplexity_is"].to_numpy()
                    ax.plot(seeds, np.full(seeds.shape, k), "|", color=col, ms=9, alpha=0.7)
                    ax.errorbar(r["log_perplexity_is"], k, xerr=2 * r["log_perplexity_is_se"], fmt="o", color=col)
                ax.set_yticks(range(len(e)), e.index, fontsize=8)
                ax.invert_yaxis()
                ax.set_xlabel("log-perplexity at the end of the budget\n(importance sampling; lower is better)")
                n_seeds = fin["seed"].nunique() if "seed" in fin else 1
                ax.set_title(f"{c}: the verdict's estimate (ours; {n_seeds} seed{'s' if n_seeds > 1 else ''}, "
                             "| = one seed)", fontsize=9)
            ax = axes[i, ncol - 1]
            for m_, (col, ls) in _FIG5_STYLE.items():
                dm = d[d["method"] == m_]
                if not len(dm):
                    continue
                g = dm.groupby("iteration")[[clock, "log_perplexity"]].mean().reset_index()
                g = g[g[clock] > 0]
                ax.plot(g[clock], g["log_perplexity"], ls, color=col, marker=".", ms=3, label=m_)
            ax.set_xscale("log")
            ax.set_xlabel(("CPU" if clock == "cpu_time" else "wall") + " time of the sampler (s)")
            ax.set_ylabel("log-perplexity (prior draws)")
            ax.set_title(f"{c}: the paper's estimate (Sec. 5.3; biased here)" if has_is else c, fontsize=9)
            ax.legend(fontsize=7)
        fig.suptitle("SGGMC Fig. 5: SAM, test log-perplexity")
        savefig(fig, out)


STATIC_FIGURES = {"Fig1": fig1, "Fig2": fig2, "SFig1": sfig1}
