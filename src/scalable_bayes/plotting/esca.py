"""Figures and tables of the ESCA paper (Zaheer et al. 2016) from the tidy run tables.

Each figure function takes the concatenated run table, the config block, the output path and the
profile, draws the figure and returns the keyword arguments of ``reporting.write_claim``.
Each table function takes (inputs, params) of its rule and returns (table, claim kwargs).
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from .style import plt, savefig, style

logger = logging.getLogger(__name__)

COLORS = {"ESCA": "#0072B2", "ESCA_plain": "#56B4E9", "CGS": "#D55E00", "CVB0": "#009E73", "EM": "#D55E00",
          "SEM": "#0072B2", "EM_bad": "#CC79A7"}
LABELS = {"ESCA": "ESCA (sparse + alias)", "ESCA_plain": "SCA (plain)", "CGS": "CGS", "CVB0": "CVB0",
          "EM_bad": "EM from SEM's bad start"}


def _scale(profile, extra=""):
    return f"{profile}{'; ' + extra if extra else ''}"


def _mean_curve(d, x):
    g = d.groupby("iteration")
    return g[x].mean().to_numpy(), g["heldout_ll"].mean().to_numpy(), g["heldout_ll"].std().fillna(0).to_numpy()


# ---------------------------------------------------------------------------- Fig. 2


def fig2(df, settings, out, profile):
    corpora = list(dict.fromkeys(df["train_corpus"]))
    tol = float(settings.get("quality_tol", 0.05))
    with style():
        fig, axes = plt.subplots(len(corpora), 2, figsize=(8, 3 * len(corpora)), squeeze=False)
        verdicts, parts, details = [], [], {}
        for r, c in enumerate(corpora):
            d = df[df["train_corpus"] == c]
            for method, dm in d.groupby("method", sort=False):
                for j, x in enumerate(["iteration", "wall_time"]):
                    xs, ys, sd = _mean_curve(dm, x)
                    axes[r, j].plot(xs, ys, marker=".", color=COLORS.get(method), label=LABELS.get(method, method))
            # each engine's own last recorded iteration (engines may run different numbers of iterations)
            last = d.sort_values("iteration").groupby(["method", "seed"]).tail(1)
            final = last.groupby("method")["heldout_ll"].mean()
            n_iters = last.groupby("method")["iteration"].max().astype(int).to_dict()
            t_total = last.groupby("method")["wall_time"].mean().to_dict()
            cgs_final = final.get("CGS", np.nan)
            target = cgs_final - 0.01
            # the verdict's clock: CPU time when every engine ran on one thread (its work alone; the
            # wall time of a job also measures the other jobs sharing the machine), else wall time
            clock = "cpu_time" if ("cpu_time" in d and (d["threads"] == 1).all() and d["cpu_time"].notna().all()) \
                else "wall_time"
            t_reach, t_reach_wall = _reach_by_method(d, target, clock), _reach_by_method(d, target, "wall_time")
            esca_ok = final.get("ESCA", np.nan) >= cgs_final - tol
            first = t_reach.get("ESCA", np.nan) <= np.nanmin([t_reach.get(m, np.inf) for m in t_reach if m != "ESCA"] + [np.inf])
            verdicts.append(bool(esca_ok and first))
            parts.append(f"{c}: final LL ESCA {final.get('ESCA', np.nan):.4f}, CGS {cgs_final:.4f}, "
                         f"CVB0 {final.get('CVB0', np.nan):.4f} after "
                         + ", ".join(f"{m} {n_iters[m]} it / {t_total[m]:.1f}s" for m in sorted(n_iters))
                         + f"; {clock.replace('_', ' ')} to CGS final - 0.01: "
                         + ", ".join(f"{m} {t:.2f}s" for m, t in sorted(t_reach.items()))
                         + (" (wall: " + ", ".join(f"{m} {t:.2f}s" for m, t in sorted(t_reach_wall.items())) + ")"
                            if clock != "wall_time" else ""))
            details[c] = {"final_ll": final.to_dict(), "clock": clock, "time_to_target_s": t_reach,
                          "wall_time_to_target_s": t_reach_wall, "target": target,
                          "iterations": n_iters, "fit_time_s": t_total}
            axes[r, 0].set_title(f"{c}: held-out LL vs iteration")
            axes[r, 1].set_title(f"{c}: held-out LL vs wall time")
            axes[r, 0].set_xlabel("iteration")
            axes[r, 1].set_xlabel("wall time (s, evaluation excluded)")
            axes[r, 1].set_xscale("log")
            for ax in axes[r]:
                ax.set_ylabel("per-word held-out LL")
            axes[r, 0].legend()
        K = int(df["n_topics"].iloc[0])
        fig.suptitle(f"ESCA Fig. 2 (K = {K}, alpha = {df['alpha'].iloc[0]:.3g}, beta = {df['beta'].iloc[0]:g})")
        fig.tight_layout()
        savefig(fig, out)
    return dict(
        id="ESCA-Fig2", paper="esca",
        claim="ESCA reaches the held-out per-word log-likelihood of CGS (and CVB0) and gets there first in wall time.",
        measured="; ".join(parts), holds=all(verdicts),
        scale=_scale(profile, f"K = {K} (paper 1000), {int(df['n_tokens'].iloc[0])} training tokens per corpus "
                              f"(paper ~10^9), {int(df['n_test_docs'].iloc[0])} held-out docs (paper 10,000)"),
        paper_value="K = 1000 on 6.6M Wikipedia / 8.2M PubMed documents (values only plotted)",
        details=details,
        note=f"holds = final ESCA LL >= final CGS LL - {tol} nats/word and ESCA first to reach CGS's final LL - 0.01, "
             "timed by the process CPU time of the fit when every engine ran on one thread (a job's wall time on the "
             "shared 2-core machine also measures the jobs running beside it: between two quick runs the PubMed "
             "wall-time verdict flipped), else by wall time; both are in details. "
             "CGS/CVB0 sweeps are sequential, ESCA uses the rule's threads. Engines may run different numbers of "
             "iterations (config fig2.n_iter_by_method; see details.iterations and details.fit_time_s): the claim is "
             "about time to quality, so the cheaper engine may use more, shorter iterations.",
    )


def _reach(d, target, clock="wall_time"):
    hit = d[d["heldout_ll"] >= target]
    return float(hit[clock].min()) if len(hit) else np.inf


def _reach_by_method(d, target, clock):
    """Per method: mean over seeds of the first ``clock`` time at which heldout_ll >= target."""
    return {m: float(np.nanmean([_reach(dm[dm["seed"] == s], target, clock) for s in dm["seed"].unique()]))
            for m, dm in d.groupby("method")}


# ---------------------------------------------------------------------------- Fig. 3


def _rel_shortfall(fin, method):
    """Per seed, how far ``method``'s final test LL lies below EM's, relative to EM's (> 0: below)."""
    return ((fin["EM"] - fin[method]) / fin["EM"].abs()).to_dict()


def fig3(df, settings, out, profile):
    rel_tol = float(settings.get("rel_tol", 0.01))
    with style():
        fig, axes = plt.subplots(1, 2, figsize=(8, 3.4), sharey=True)
        parts, ok, details = [], [], {}
        for ax, (scen, title) in zip(axes, [("good", "same initialisation"), ("bad", "SEM badly initialised")]):
            d = df[df["scenario"] == scen]
            for method, dm in d.groupby("method"):
                g = dm.groupby("iteration")["test_ll"]
                m, s = g.mean(), g.std().fillna(0)
                ax.plot(m.index, m.values, color=COLORS[method], label=LABELS.get(method, method),
                        ls="--" if method == "EM_bad" else "-")
                ax.fill_between(m.index, m - s, m + s, color=COLORS[method], alpha=0.2)
            ax.axhline(d["true_test_ll"].mean(), color="k", ls=":", lw=1, label="true parameters")
            ax.set_title(title)
            ax.set_xlabel("iteration")
            last = d[d["iteration"] == d["iteration"].max()].groupby("method")["test_ll"].mean()
            gap = abs(last["SEM"] - last["EM"]) / abs(last["EM"])
            ok.append(bool(gap <= rel_tol or last["SEM"] >= last["EM"]))
            fin = d[d["iteration"] == d["iteration"].max()].pivot_table(index="seed", columns="method", values="test_ll")
            seed_gap = _rel_shortfall(fin, "SEM")
            parts.append(f"{scen} init: final test LL EM {last['EM']:.4f}, SEM {last['SEM']:.4f} (rel. gap {gap:.4f}; "
                         "per seed SEM shortfall " + ", ".join(f"{int(k)}: {v:+.4f}" for k, v in seed_gap.items()) + ")")
            details[scen] = {"EM": float(last["EM"]), "SEM": float(last["SEM"]), "rel_gap": float(gap),
                             "sem_rel_shortfall_per_seed": {int(k): float(v) for k, v in seed_gap.items()}}
            if "EM_bad" in fin:  # reference: EM from SEM's bad start (not part of the verdict)
                em_bad = _rel_shortfall(fin, "EM_bad")
                parts[-1] += (f"; reference, EM from the same bad start: {last['EM_bad']:.4f} (per seed shortfall "
                              + ", ".join(f"{int(k)}: {v:+.4f}" for k, v in em_bad.items()) + ")")
                details[scen]["EM_bad"] = float(last["EM_bad"])
                details[scen]["em_bad_rel_shortfall_per_seed"] = {int(k): float(v) for k, v in em_bad.items()}
        axes[0].set_ylabel("test log-likelihood per point")
        for ax in axes:
            ax.legend(fontsize=7)
        n_seeds = df["seed"].nunique()
        fig.suptitle(f"ESCA Fig. 3: EM vs SEM, 2-D GMM, K = {settings['n_components']}, mean +- sd over {n_seeds} seeds")
        fig.tight_layout(rect=(0, 0, 1, 0.95))
        savefig(fig, out)
    return dict(
        id="ESCA-Fig3", paper="esca",
        claim="SEM is well behaved: it reaches a test log-likelihood comparable to EM, even from a bad initialisation.",
        measured="; ".join(parts), holds=all(ok),
        scale=_scale(profile, f"{settings['n_train']} train / {settings['n_test']} test points, "
                              f"{settings['n_iter']} iterations, {n_seeds} seeds"),
        details=details,
        note=f"holds = final SEM test LL (mean over seeds) within {rel_tol:.0%} (relative) of EM's, or above it, in both "
             "scenarios. A seed whose SEM run from the bad start settles in a worse local optimum is a finding about "
             "that initialisation, not an iteration-budget artefact (see the per-seed shortfalls, and config/README.md "
             "for a run with 4x the iterations). EM run from the same "
             "bad start is shown as a reference (dashed; not in the paper, not part of the verdict). "
             "Generating parameters, priors and the bad initialisation are not stated in the paper (TARGETS proposals).",
    )


# ---------------------------------------------------------------------------- Fig. 5


def fig5(df, settings, out, profile):
    Ks = sorted(df["n_topics"].unique())
    with style():
        fig, axes = plt.subplots(1, len(Ks) + 1, figsize=(4 * (len(Ks) + 1), 3), squeeze=False)
        axes = axes[0]
        parts, details, ok = [], {}, []
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
            piv = d.groupby(["method", "iteration"])["heldout_ll"].mean().unstack(0)
            diff = float((piv["ESCA"] - piv["ESCA_plain"]).abs().iloc[1:].max())
            t = d[d["iteration"] == d["iteration"].max()].groupby("method")["wall_time"].mean()
            speed = float(t["ESCA_plain"] / t["ESCA"])
            ok.append(bool(diff <= 0.03 and speed > 1.0))
            parts.append(f"K={K}: max |LL(sparse) - LL(plain)| over iterations {diff:.4f} nats/word, "
                         f"plain/sparse fit time {speed:.2f}x")
            details[int(K)] = {"max_abs_ll_diff": diff, "speedup": speed}
        axes[-1].set_title("perplexity vs iteration")
        axes[-1].set_xlabel("iteration")
        axes[-1].legend(fontsize=6)
        fig.suptitle(f"ESCA Fig. 5: plain SCA vs sparse + alias ESCA on {df['train_corpus'].iloc[0]}")
        savefig(fig, out)
    return dict(
        id="ESCA-Fig5", paper="esca",
        claim="Sparse + alias sampling gives the same perplexity per iteration as plain SCA and is much faster in time.",
        measured="; ".join(parts), holds=all(ok),
        scale=_scale(profile, f"{df['train_corpus'].iloc[0]} ({int(df['n_tokens'].iloc[0])} tokens), "
                              f"{int(df['iteration'].max())} iterations"),
        details=details,
        note="holds = per-iteration held-out LL within 0.03 nats/word (after iteration 0) and sparse faster at every K.",
    )


# ---------------------------------------------------------------------------- Fig. 6


def fig6(df, settings, out, profile):
    run = settings["run"]
    K0, b0 = int(run["n_topics"]), float(run["beta"])
    pairs = list(dict.fromkeys(zip(df["train_corpus"], df["test_corpus"])))
    rel_tol = float(settings.get("rel_tol", 0.05))
    with style():
        fig, axes = plt.subplots(len(pairs), 4, figsize=(14, 3.6 * len(pairs)), squeeze=False)
        parts, ok, details = [], [], {}
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
            for j, (t, xl) in enumerate([("vs iterations", "iteration"), ("vs wall time", "wall time (s)"),
                                         ("vs number of topics", "K"), ("vs beta", "beta")]):
                axes[r, j].set_title(f"train {tr} / test {te}: {t}", fontsize=8)
                axes[r, j].set_xlabel(xl)
                axes[r, j].set_ylabel("held-out perplexity")
            axes[r, 0].legend()
            # claim: SCA's final perplexity within rel_tol of CGS's at every (K, beta)
            piv = fin.groupby(["n_topics", "beta", "method"])["p"].mean().unstack("method")
            sca = "ESCA_plain" if "ESCA_plain" in piv else "ESCA"
            rel = ((piv[sca] - piv["CGS"]) / piv["CGS"]) if "CGS" in piv else pd.Series(dtype=float)
            worst = float(rel.max()) if len(rel) else np.nan
            ok.append(bool(worst <= rel_tol))
            parts.append(f"train {tr}/test {te}: SCA vs CGS final perplexity, worst relative excess {worst:+.3f} "
                         f"over {len(rel)} (K, beta) settings")
            details[f"{tr}->{te}"] = {f"K={k},beta={b}": v for (k, b), v in rel.items()}
        fig.suptitle("ESCA Fig. 6: perplexity on cross-corpus held-out documents (mean +- sd over seeds)")
        fig.tight_layout()
        savefig(fig, out)
    return dict(
        id="ESCA-Fig6", paper="esca",
        claim="SCA's perplexity per iteration is comparable to CGS and CVB0 across numbers of topics and beta, "
              "and competitive in wall time even without the sparse/alias tricks.",
        measured="; ".join(parts), holds=all(ok),
        scale=_scale(profile, f"{int(last_it)} iterations (paper 75), Reuters-21578 stand-in for RCV1, "
                              f"Wikipedia sample; {df['seed'].nunique()} seeds"),
        details=details,
        note=f"holds = SCA's final perplexity at most {rel_tol:.0%} above CGS's at every (K, beta) of the grid. "
             "Test documents of the other corpus are mapped into the training vocabulary (OOV tokens dropped).",
    )


FIGURES = {"Fig2": fig2, "Fig3": fig3, "Fig5": fig5, "Fig6": fig6}


# ---------------------------------------------------------------------------- tables


def throughput_table(inputs, params):
    df = pd.concat([pd.read_parquet(p) for p in inputs["runs"]], ignore_index=True)
    last = df.sort_values("iteration").groupby(["train_corpus", "method", "threads"]).tail(1)
    t = last[["train_corpus", "method", "threads", "n_topics", "alpha", "beta", "iteration", "n_tokens",
              "wall_time", "tokens_per_s", "heldout_ll", "state_bytes", "peak_rss_mib"]].rename(
        columns={"train_corpus": "corpus", "iteration": "iterations", "wall_time": "fit_time_s",
                 "state_bytes": "sampler_state_bytes"}).reset_index(drop=True)
    t["ranks"] = 1
    for p in inputs.get("mpi", []):
        m = pd.read_parquet(p).sort_values("iteration").tail(1)
        t = pd.concat([t, pd.DataFrame({
            "corpus": m["train_corpus"].to_numpy(), "method": ["ESCA_MPI"], "threads": m["threads"].to_numpy(),
            "ranks": m["ranks"].to_numpy(), "n_topics": m["n_topics"].to_numpy(), "iterations": m["iteration"].to_numpy(),
            "n_tokens": m["n_tokens"].to_numpy(), "fit_time_s": m["wall_time"].to_numpy(),
            "tokens_per_s": m["tokens_per_s"].to_numpy(),
            "heldout_ll": m["heldout_ll"].to_numpy() if "heldout_ll" in m else [np.nan]})], ignore_index=True)
    t["tokens_per_s_M"] = t["tokens_per_s"] / 1e6
    parts, ok = [], []
    for c, d in t.groupby("corpus"):
        best_esca = d[d["method"] == "ESCA"]["tokens_per_s"].max()
        others = d[d["method"].isin(["CGS", "CVB0"])].set_index("method")["tokens_per_s"]
        ok.append(bool(len(others) and best_esca > others.max()))
        e1 = d[(d["method"] == "ESCA") & (d["threads"] == d["threads"].min())]["tokens_per_s"]
        e2 = d[(d["method"] == "ESCA") & (d["threads"] == d["threads"].max())]["tokens_per_s"]
        mpi = d[d["method"] == "ESCA_MPI"]
        if len(mpi):
            parts.append(f"{c}: ESCA over MPI " + ", ".join(
                f"{int(r.ranks)} ranks {r.tokens_per_s / 1e6:.2f}M tok/s (held-out LL {r.heldout_ll:.4f})"
                for r in mpi.itertuples()))
        parts.append(f"{c}: ESCA {e1.iloc[0] / 1e6:.2f}M tok/s ({d['threads'].min()} thr), "
                     f"{e2.iloc[0] / 1e6:.2f}M ({d['threads'].max()} thr); "
                     + ", ".join(f"{m} {v / 1e6:.2f}M" for m, v in others.items())
                     + f"; ESCA state {d[d['method'] == 'ESCA']['sampler_state_bytes'].iloc[0] / 2**20:.1f} MiB vs "
                       f"CGS {d[d['method'] == 'CGS']['sampler_state_bytes'].iloc[0] / 2**20:.1f} MiB"
                     if "CGS" in set(d["method"]) else "")
    claim = dict(
        id="ESCA-Throughput", paper="esca",
        claim="ESCA processes more tokens per second than the CGS and CVB0 baselines "
              "(paper: 570M tokens/s on 4 nodes vs 112M for F+LDA and 60M for LightLDA).",
        measured="; ".join(parts), holds=all(ok) if ok else None,
        scale=_scale(params["profile"], "one shared 2-core machine; MPI ranks run on the same machine"),
        paper_value="570M tokens/s (4 x 36 threads, 'Large' corpus)",
        note="Absolute tokens/s depend on the load of the shared machine; compare rows of one run. CGS/CVB0 sweeps "
             "are sequential. Peer libraries (tomotopy, lda) are measured by benchmarks/bench_lda.py.",
    )
    return t, claim


def tabu1_table(inputs, params):
    from ..inference.lda.experiments import ising_two_spin_table

    t = ising_two_spin_table()
    uniform = np.allclose(t["synchronous_sca_stationary"], 0.25, atol=1e-9)
    seq_ok = np.allclose(t["sequential_gibbs_stationary"], t["p_target"], atol=1e-9)
    claim = dict(
        id="ESCA-TabU1", paper="esca",
        claim="Under synchronous SCA updates of the two-spin Ising model all four states are equally likely "
              "(q propto cosh(x1 x2)), unlike the target p propto exp(x1 x2).",
        measured=f"synchronous stationary {np.round(t['synchronous_sca_stationary'].to_numpy(), 4).tolist()}; "
                 f"sequential Gibbs stationary {np.round(t['sequential_gibbs_stationary'].to_numpy(), 4).tolist()}; "
                 f"target {np.round(t['p_target'].to_numpy(), 4).tolist()}",
        holds=bool(uniform and seq_ok), scale=_scale(params["profile"], "exact (4 x 4 transition matrices)"),
    )
    return t, claim


def tabu2_table(inputs, params):
    from ..corpora import load_corpus

    rows = [{"dataset": "PubMed (paper)", "V": 141043, "docs": 8200000, "tokens": 737869085},
            {"dataset": "Wikipedia (paper)", "V": 210233, "docs": 6631176, "tokens": 1133050514},
            {"dataset": "Large (paper, proprietary)", "V": 140000, "docs": 3_000_000_000, "tokens": 171_000_000_000}]
    for d in params["corpus_dirs"]:
        c = load_corpus(d)
        n_tr = int((c.split == "train").sum())
        rows.append({"dataset": f"{c.name} (this run; train {n_tr} / test {c.counts.shape[0] - n_tr})",
                     "V": int(c.counts.shape[1]), "docs": int(c.counts.shape[0]), "tokens": int(c.counts.sum())})
    t = pd.DataFrame(rows)
    claim = dict(
        id="ESCA-TabU2", paper="esca", claim="Data sets of Sec. 4 (PubMed, Wikipedia, Large).",
        measured="; ".join(f"{r.dataset}: V {r.V}, {r.docs} docs, {r.tokens} tokens" for r in t.iloc[3:].itertuples()),
        holds=None, scale=_scale(params["profile"], "stand-ins from the local mirror"),
        note="Not a claim: the paper's corpora are not available here; the stand-ins are far smaller.",
    )
    return t, claim


def tabu3_table(inputs, params):
    from ..corpora import load_corpus
    from ..inference.lda.experiments import run_lda, top_words

    s = params["settings"]
    run = s["run"]
    out = []
    for d in params["corpus_dirs"]:
        c = load_corpus(d)
        tr = c.subset("train").counts
        _, est, _ = run_lda(tr, None, method="ESCA", n_topics=run["n_topics"], alpha=run.get("alpha"), beta=run["beta"],
                            n_iter=run["n_iter"], evaluate_every=0, n_threads=run["threads"], seed=0)
        tw = top_words(est.components_, c.vocab, s["n_show"], s["n_words"])
        tw.insert(0, "corpus", c.name)
        out.append(tw)
    t = pd.concat(out, ignore_index=True)
    claim = dict(
        id="ESCA-TabU3", paper="esca",
        claim="ESCA finds interpretable topics (top-10 words of the first five topics on PubMed and Wikipedia).",
        measured=" | ".join(f"{r.corpus} topic {r.topic}: {r.top_words}" for r in t.itertuples()),
        holds=None, scale=_scale(params["profile"], f"K = {run['n_topics']}, {run['n_iter']} iterations"),
        note="Qualitative: judged by reading the table (PubMed stand-in: OHSUMED abstracts).",
    )
    return t, claim


TABLES = {"Throughput": throughput_table, "TabU1": tabu1_table, "TabU2": tabu2_table, "TabU3": tabu3_table}


# ---------------------------------------------------------------------------- static items
# ESCA-Fig1, ESCA-Fig4, ESCA-Tab1 and ESCA-Tab2 hold no computation: they are rendered from the small
# specs below (TARGETS 2.5 "Render from spec"). Their claims have holds = None.

STATIC_NOTE = "Static item (no computation to check): rendered from a text spec in scalable_bayes.plotting.esca."

# Table 1 of the paper: mixture component (rows) x emission (columns); "" = empty cell.
TAB1_SPEC = {
    "columns": ["Bernoulli", "Multinomial", "Gaussian", "Poisson"],
    "rows": {
        "Categorical": ["Latent Class Model [9]", "Unigram Document Clustering", "Mixture of Gaussians [22]", ""],
        "Dirichlet Mixture": ["Grade of Membership Model [36]", "Latent Dirichlet Allocation [2]", "Gaussian-LDA [6]",
                              "GaP Model [3]"],
    },
}

# Table 2 of the paper (App. A): notation of (stochastic) EM.
TAB2_SPEC = [
    ("x", "Observed data"),
    ("z", "Unobserved data"),
    ("(x, z)", "Complete data"),
    ("f_{x;eta}(x; eta)", "marginal observed data density"),
    ("f_{z;eta}(z; eta)", "marginal unobserved data density"),
    ("f_{x,z;eta}(x, z; eta)", "complete data density/likelihood"),
    ("f_{z|x;eta}(z | x; eta)", "conditional unobserved-data (missing-data) density"),
]

# Figure 1 (Sec. 2.3): iteration t reads T^(t mod 2) and writes T^((t+1) mod 2).
FIG1_SPEC = {"n_iterations": 4, "buffers": ["T(0)", "T(1)"]}

# Figure 4 (App. B): LDA plate diagram. Nodes (name -> (x, y, label, observed)), edges, plates
# (label, x0, y0, x1, y1).
FIG4_SPEC = {
    "nodes": {
        "alpha": (0.5, 2.0, r"$\alpha$", None),
        "theta": (2.0, 2.0, r"$\theta_m$", False),
        "z": (3.5, 2.0, r"$z_{mn}$", False),
        "w": (5.0, 2.0, r"$w_{mn}$", True),
        "phi": (5.0, 0.45, r"$\phi_k$", False),
        "beta": (6.9, 0.45, r"$\beta$", None),
    },
    "edges": [("alpha", "theta"), ("theta", "z"), ("z", "w"), ("phi", "w"), ("beta", "phi")],
    "plates": [(r"$N_m$", 2.9, 1.35, 5.75, 2.65), (r"$M$", 1.35, 1.1, 6.05, 2.95), (r"$K$", 4.3, -0.2, 5.75, 1.0)],
}


def tab1_table(inputs, params):
    t = pd.DataFrame(
        [{"mixture component / emission": r, **dict(zip(TAB1_SPEC["columns"], cells))}
         for r, cells in TAB1_SPEC["rows"].items()])
    claim = dict(id="ESCA-Tab1", paper="esca", claim="Examples of popular models to which ESCA is applicable (Table 1).",
                 measured=f"rendered {len(t)} x {len(TAB1_SPEC['columns'])} table from the spec",
                 holds=None, scale=_scale(params["profile"], "static"),
                 note=STATIC_NOTE + " The Gaussian-mixture cell is exercised by ESCA-Fig3 (SEM vs EM), the LDA cell "
                                    "by ESCA-Fig2/5/6.")
    return t, claim


def tab2_table(inputs, params):
    t = pd.DataFrame(TAB2_SPEC, columns=["symbol", "meaning"])
    claim = dict(id="ESCA-Tab2", paper="esca", claim="Notation of App. A (Table 2).",
                 measured=f"rendered {len(t)} notation rows from the spec", holds=None,
                 scale=_scale(params["profile"], "static"), note=STATIC_NOTE)
    return t, claim


def fig1_static(out, profile):
    """ESCA-Fig1: double buffering, iteration t reads T^(t mod 2) and writes T^((t+1) mod 2)."""
    n_it = FIG1_SPEC["n_iterations"]
    bufs = FIG1_SPEC["buffers"]
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
    return dict(id="ESCA-Fig1", paper="esca", claim="Double buffering of the sufficient statistics (Figure 1).",
                measured=f"rendered {n_it} iterations alternating {bufs[0]} / {bufs[1]}", holds=None,
                scale=_scale(profile, "static"),
                note=STATIC_NOTE + " The engines implement it: ESCA reads the previous iteration's counts and writes "
                                   "the next ones (scalable_bayes.inference.lda).")


def fig4_static(out, profile):
    """ESCA-Fig4: LDA graphical model (plate diagram) of App. B."""
    spec = FIG4_SPEC
    with style():
        fig, ax = plt.subplots(figsize=(6, 2.8))
        ax.set_axis_off()
        ax.set_aspect("equal")
        r = 0.38
        for name, (x, y, label, observed) in spec["nodes"].items():
            if observed is None:  # hyperparameter: a small dot
                ax.plot([x], [y], "o", color="k", ms=4)
                ax.text(x, y + 0.22, label, ha="center", va="bottom", fontsize=11)
            else:
                ax.add_patch(plt.Circle((x, y), r, fc="#BBBBBB" if observed else "white", ec="k", lw=1))
                ax.text(x, y, label, ha="center", va="center", fontsize=10)
        for a, b in spec["edges"]:
            xa, ya, _, oa = spec["nodes"][a]
            xb, yb, _, ob = spec["nodes"][b]
            v = np.array([xb - xa, yb - ya])
            u = v / np.linalg.norm(v)
            start = np.array([xa, ya]) + (r if oa is not None else 0.06) * u
            end = np.array([xb, yb]) - (r if ob is not None else 0.06) * u
            ax.annotate("", xy=end, xytext=start, arrowprops=dict(arrowstyle="-|>", lw=1, color="k"))
        for label, x0, y0, x1, y1 in spec["plates"]:
            ax.add_patch(plt.Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, ec="k", lw=0.8))
            ax.text(x1 - 0.08, y0 + 0.06, label, ha="right", va="bottom", fontsize=9)
        ax.set_xlim(0, 7.4)
        ax.set_ylim(-0.4, 3.2)
        ax.set_title("ESCA Fig. 4: LDA graphical model")
        savefig(fig, out)
    return dict(id="ESCA-Fig4", paper="esca", claim="LDA graphical model (Figure 4, App. B).",
                measured=f"rendered {len(spec['nodes'])} nodes, {len(spec['edges'])} edges, {len(spec['plates'])} plates",
                holds=None, scale=_scale(profile, "static"), note=STATIC_NOTE)


STATIC_FIGURES = {"Fig1": fig1_static, "Fig4": fig4_static}
TABLES.update({"Tab1": tab1_table, "Tab2": tab2_table})
