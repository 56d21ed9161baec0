"""Figures of the ESCA paper (Zaheer et al. 2016): run tables in, figure file (.png + .pdf) out.

Each ``figN(df, settings, out)`` draws from the concatenated run tables of its item; the static
diagrams (Fig. 1, Fig. 4) are drawn from the specs in :mod:`.static`. No claim logic, no fitting.
"""

from __future__ import annotations

import numpy as np

from scalable_bayes.plotting.style import plate_diagram, plt, savefig, style

from .static import FIG1_SPEC, FIG4_SPEC

COLORS = {"ESCA": "#0072B2", "ESCA_plain": "#56B4E9", "CGS": "#D55E00", "CVB0": "#009E73", "EM": "#D55E00",
          "SEM": "#0072B2"}
LABELS = {"ESCA": "ESCA (sparse + alias)", "ESCA_plain": "SCA (plain)", "CGS": "CGS", "CVB0": "CVB0"}


def _mean_curve(d, x):
    g = d.groupby("iteration")
    return g[x].mean().to_numpy(), g["heldout_ll"].mean().to_numpy(), g["heldout_ll"].std().fillna(0).to_numpy()


def _clock_label(df, settings):
    """The time axis of a convergence figure: the sampler's wall-clock time (``time.perf_counter`` around the
    iterations; held-out evaluation excluded) on the run's thread count, on a machine that may be shared."""
    threads = df["threads"].iloc[0] if "threads" in df else (settings.get("run") or {}).get("threads")
    on = f", {int(threads)} thread{'s' if int(threads) != 1 else ''}" if threads is not None else ""
    return f"sampler wall time (s{on}; evaluation excluded)"


def fig2(df, settings, out):
    """Held-out LL vs iteration and vs wall time, one row of panels per corpus."""
    corpora = list(dict.fromkeys(df["train_corpus"]))
    with style():
        fig, axes = plt.subplots(len(corpora), 2, figsize=(8, 3 * len(corpora)), squeeze=False, layout="constrained")
        for r, c in enumerate(corpora):
            d = df[df["train_corpus"] == c]
            for method, dm in d.groupby("method", sort=False):
                for j, x in enumerate(["iteration", "wall_time"]):
                    xs, ys, sd = _mean_curve(dm, x)
                    axes[r, j].plot(xs, ys, marker=".", color=COLORS.get(method), label=LABELS.get(method, method))
            axes[r, 0].set_title(f"{c}: held-out LL vs iteration")
            axes[r, 1].set_title(f"{c}: held-out LL vs wall time")
            axes[r, 0].set_xlabel("iteration")
            axes[r, 1].set_xlabel(_clock_label(d, settings))
            axes[r, 1].set_xscale("log")
            for ax in axes[r]:
                ax.set_ylabel("per-word held-out LL")
            axes[r, 0].legend()
        K = int(df["n_topics"].iloc[0])
        fig.suptitle(f"ESCA Fig. 2 (K = {K}, alpha = {df['alpha'].iloc[0]:.3g}, beta = {df['beta'].iloc[0]:g})")
        savefig(fig, out)


def fig3(df, settings, out):
    """Left: test LL per iteration (mean over seeds) of EM from its k-means++ start, SEM from starts of
    every severity and EM from the same (bad) starts (dashed). Right: the claim's paired scale, per
    seed the final test LL minus EM's (restart 0): other k-means++ restarts of EM, SEM and EM from each
    severity's start, with the band +- the mean |difference| between two EM restarts."""
    from .claims import fig3_final_differences

    sevs = sorted(df.loc[df["method"] == "SEM", "severity"].unique())
    cmap = plt.get_cmap("viridis")
    shade = {s: cmap(0.85 * i / max(len(sevs) - 1, 1)) for i, s in enumerate(sevs)}
    f = fig3_final_differences(df)
    band = float(np.mean(f["restart_pairs"]))
    with style():
        fig, (ax, bx) = plt.subplots(1, 2, figsize=(9, 3.6), layout="constrained", width_ratios=[1, 1.2])
        em0 = df[(df["method"] == "EM") & (df["restart"] == 0)].groupby("iteration")["test_ll"].mean()
        ax.plot(em0.index, em0.values, color=COLORS["EM"], lw=2, label="EM (k-means++)")
        for s in sevs:
            for method, ls in (("SEM", "-"), ("EM_same_start", "--")):
                d = df[(df["method"] == method) & (df["severity"] == s)]
                if len(d):
                    m = d.groupby("iteration")["test_ll"].mean()
                    ax.plot(m.index, m.values, color=shade[s], ls=ls,
                            label=f"{'SEM' if method == 'SEM' else 'EM, same start'}, severity {s:g}")
        ax.axhline(df["true_test_ll"].mean(), color="k", ls=":", lw=1, label="true parameters")
        lo = min(em0.min(), df.loc[df["iteration"] >= 5, "test_ll"].min())
        ax.set_ylim(lo - 0.05, df["true_test_ll"].mean() + 0.1)
        ax.set_xlabel("iteration")
        ax.set_ylabel("test log-likelihood per point (mean over seeds)")
        ax.legend(fontsize=6)
        rows = [("EM restarts", f["restarts_vs_0"].to_numpy().ravel(), COLORS["EM"])]
        for s in sevs:
            rows.append((f"SEM, sev. {s:g}", f["sem"][s].to_numpy(), shade[s]))
            if s in f["em_same_start"]:
                rows.append((f"EM same start, sev. {s:g}", f["em_same_start"][s].to_numpy(), shade[s]))
        rng = np.random.default_rng(0)
        for i, (lab, v, c) in enumerate(rows):
            bx.scatter(v, i + rng.uniform(-0.15, 0.15, v.size), s=10, color=c, alpha=0.7,
                       marker="o" if lab.startswith(("SEM", "EM restarts")) else "x")
            bx.plot([v.mean()] * 2, [i - 0.3, i + 0.3], color="k", lw=1.5)
        bx.axvspan(-band, band, color="0.85", zorder=0, label=f"+- EM restart spread ({band:.3f})")
        bx.axvline(0, color="k", lw=0.8)
        bx.set_yticks(range(len(rows)), [r[0] for r in rows], fontsize=7)
        bx.set_xscale("symlog", linthresh=max(band, 1e-3))
        bx.set_xlabel("final test LL minus EM's (same seed), nats/point")
        bx.legend(fontsize=7, loc="lower left")
        n_seeds = df["seed"].nunique()
        fig.suptitle(f"ESCA Fig. 3: EM vs SEM, 2-D GMM, K = {settings['n_components']}, "
                     f"{settings['n_train']:,} points, {n_seeds} seeds (bars: means)")
        savefig(fig, out)


def fig5(df, settings, out):
    """Perplexity vs wall time per K, and vs iteration for every K, plain SCA and sparse + alias ESCA."""
    Ks = sorted(df["n_topics"].unique())
    with style():
        fig, axes = plt.subplots(1, len(Ks) + 1, figsize=(4 * (len(Ks) + 1), 3), squeeze=False, layout="constrained")
        axes = axes[0]
        for i, K in enumerate(Ks):
            d = df[df["n_topics"] == K]
            for method, dm in d.groupby("method"):
                g = dm.groupby("iteration")
                axes[i].plot(g["wall_time"].mean(), np.exp(-g["heldout_ll"].mean()), marker=".",
                             color=COLORS[method], label=f"{LABELS[method]}")
                axes[-1].plot(g["heldout_ll"].mean().index, np.exp(-g["heldout_ll"].mean()),
                              color=COLORS[method], ls="-" if K == Ks[0] else "--", label=f"{LABELS[method]}, K={K}")
            axes[i].set_title(f"K = {K}: perplexity vs wall time")
            axes[i].set_xlabel("wall time (s)")
            axes[i].set_ylabel("held-out perplexity")
            axes[i].legend()
        axes[-1].set_title("perplexity vs iteration")
        axes[-1].set_xlabel("iteration")
        axes[-1].legend(fontsize=6)
        fig.suptitle(f"ESCA Fig. 5: plain SCA vs sparse + alias ESCA on {df['train_corpus'].iloc[0]}")
        savefig(fig, out)


def fig6(df, settings, out):
    """Per (train, test) pair: perplexity vs iterations and wall time (base K, beta), and at the last
    iteration vs K and vs beta (mean +- sd over seeds)."""
    run = settings["run"]
    K0, b0 = int(run["n_topics"]), float(run["beta"])
    pairs = list(dict.fromkeys(zip(df["train_corpus"], df["test_corpus"])))
    with style():
        fig, axes = plt.subplots(len(pairs), 4, figsize=(14, 3.6 * len(pairs)), squeeze=False, layout="constrained")
        for r, (tr, te) in enumerate(pairs):
            d = df[(df["train_corpus"] == tr) & (df["test_corpus"] == te)]
            base = d[(d["n_topics"] == K0) & np.isclose(d["beta"], b0)]
            for method, dm in base.groupby("method"):
                g = dm.groupby("iteration")
                pm = np.exp(-dm.groupby("iteration")["heldout_ll"].mean())
                ps = dm.assign(p=np.exp(-dm["heldout_ll"])).groupby("iteration")["p"].std().fillna(0)
                axes[r, 0].errorbar(pm.index, pm.values, yerr=ps.values, color=COLORS[method], label=LABELS[method])
                axes[r, 1].plot(g["wall_time"].mean(), pm.values, color=COLORS[method], label=LABELS[method])
            last_it = d["iteration"].max()
            fin = d[d["iteration"] == last_it].assign(p=lambda x: np.exp(-x["heldout_ll"]))
            for j, (var, fixed, fval) in enumerate([("n_topics", "beta", b0), ("beta", "n_topics", K0)]):
                sel = fin[np.isclose(fin[fixed], fval)]
                for method, dm in sel.groupby("method"):
                    g = dm.groupby(var)["p"]
                    axes[r, 2 + j].errorbar(g.mean().index, g.mean().values, yerr=g.std().fillna(0).values, marker="o",
                                            color=COLORS[method], label=LABELS[method])
            axes[r, 3].set_xscale("log")
            for j, (t, xl) in enumerate([("vs iterations", "iteration"), ("vs wall time", _clock_label(d, settings)),
                                         ("vs number of topics", "K"), ("vs beta", "beta")]):
                axes[r, j].set_title(f"train {tr} / test {te}: {t}", fontsize=8)
                axes[r, j].set_xlabel(xl)
                axes[r, j].set_ylabel("held-out perplexity")
            axes[r, 0].legend()
        fig.suptitle("ESCA Fig. 6: perplexity on cross-corpus held-out documents (mean +- sd over seeds)")
        savefig(fig, out)


FIGURES = {"Fig2": fig2, "Fig3": fig3, "Fig5": fig5, "Fig6": fig6}


# ---------------------------------------------------------------------------- static diagrams


def fig1(out):
    """ESCA-Fig1: double buffering, iteration t reads T^(t mod 2) and writes T^((t+1) mod 2)."""
    n_it = FIG1_SPEC["n_iterations"]
    with style():
        fig, ax = plt.subplots(figsize=(1.6 * n_it + 1.5, 2.6))
        ax.set_axis_off()
        ys = {0: 1.6, 1: 0.2}
        for b, y in ys.items():
            ax.text(-0.2, y + 0.2, f"$T^{{({b})}}$", ha="right", va="center", fontsize=11)
        for t in range(n_it):
            x = 1.6 * t
            for b, y in ys.items():
                role = "read" if b == t % 2 else "write"
                ax.add_patch(plt.Rectangle((x, y), 1.2, 0.4, fc="#56B4E9" if role == "read" else "#E69F00",
                                           ec="k", lw=0.8))
                ax.text(x + 0.6, y + 0.2, role, ha="center", va="center", fontsize=8)
            r, w = ys[t % 2], ys[(t + 1) % 2]
            ax.annotate("", xy=(x + 0.6, w + (0.4 if w < r else 0.0)), xytext=(x + 0.6, r + (0.0 if w < r else 0.4)),
                        arrowprops=dict(arrowstyle="->", lw=1.2))
            ax.text(x + 0.6, 2.3, f"iteration {t}", ha="center", fontsize=8)
            ax.text(x + 0.75, 1.1, r"$\Phi$", fontsize=9)
        ax.set_xlim(-0.9, 1.6 * n_it)
        ax.set_ylim(0, 2.5)
        ax.set_title("ESCA Fig. 1: efficient (re)use of buffers (read one copy of the statistics, write the other)")
        savefig(fig, out)


def fig4(out):
    """ESCA-Fig4: LDA graphical model (plate diagram) of App. B."""
    spec = FIG4_SPEC
    with style():
        fig, ax = plt.subplots(figsize=(6, 2.8))
        plate_diagram(ax, spec, radius=0.38, label_offset=0.22, title="ESCA Fig. 4: LDA graphical model",
                      xlim=(0, 7.4), ylim=(-0.4, 3.2))
        savefig(fig, out)


STATIC_FIGURES = {"Fig1": fig1, "Fig4": fig4}
