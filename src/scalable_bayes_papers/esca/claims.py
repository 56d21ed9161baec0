"""Claims of the ESCA paper (Zaheer et al. 2016), checked on the run tables.

Each ``check_<item>`` is pure (no I/O, no plotting): run table(s) in, :class:`~scalable_bayes.reporting.Claim`
out. Each states the paper's claim in one sentence, what this run measured and the test that turns
the paper's words into a verdict (``note``); README.md beside this file gives the reasons.

Every checked claim carries :class:`~scalable_bayes.reporting.Evidence`: per comparison the margin (the
measured effect minus the paper's threshold, positive for the claim) and the run-to-run sd of that margin,
measured from the claim's own seeds (paired by seed: the sd of the per-seed margins / sqrt(n)); an item that
runs one seed is not checked in a run (tools/pool_claims.py checks it on a run and its replication pooled);
``sd_from`` says how. Each sd estimated from a finite number of values carries its degrees of freedom
(``Evidence.df``: n - 1 for n seeds, the Welch-Satterthwaite value for a combination of such
estimates), so that its band is Student's t of that df rather than 2 sds
(:func:`scalable_bayes.reporting.band_factor`: 13.97 sds at 1 df, 2.87 at 4). The verdict (holds / fails /
undecided at this scale) follows from them.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from scalable_bayes.reporting import Claim, Evidence, satterthwaite_df

from .static import FIG1_SPEC, FIG4_SPEC, PAPER_DATASETS, TAB1_SPEC
from .tables import time_to_reach

STATIC_NOTE = "Static item (no computation to check): rendered from a text spec in scalable_bayes_papers.esca.static."


def _scale(profile, extra=""):
    """Scale string of a claim: the config profile plus the departures from the paper."""
    return f"{profile}{'; ' + extra if extra else ''}"


def seed_mean_se(values) -> tuple[float, float, int]:
    """Mean of per-seed values, its standard error over seeds (sd with ddof 1 / sqrt(n); NaN below 2 seeds)
    and n. The run-to-run sd of a mean over n independent seeds."""
    v = pd.Series(values, dtype=float).dropna()
    n = len(v)
    mean = float(v.mean()) if n else float("nan")
    se = float(v.std(ddof=1) / np.sqrt(n)) if n >= 2 else float("nan")
    return mean, se, n


def _seed_evidence(name, margins, what, clock: bool = False) -> Evidence | None:
    """Evidence from per-seed margins (paired by seed): their mean, sd = sd over seeds / sqrt(n) with n - 1
    degrees of freedom; None with fewer than 2 seeds (no spread to measure)."""
    m, se, n = seed_mean_se(margins)
    if n < 2:
        return None
    return Evidence(name, m, se, f"sd of the {n} seeds' {what} / sqrt({n}), {n - 1} df", df=n - 1, clock=clock)


def _combined_df(parts) -> float | None:
    """Welch-Satterthwaite degrees of freedom of ``sqrt(sum of sd_i^2)`` from independent estimates ``parts``
    = [(sd_i, df_i), ...] (:func:`scalable_bayes.reporting.satterthwaite_df`)."""
    parts = list(parts)
    return satterthwaite_df([s for s, _ in parts], [d for _, d in parts])


def _finite_or_none(x) -> float | None:
    """``x`` as a float, None when it is missing or NaN (a degrees-of-freedom column of a table)."""
    return None if x is None or not np.isfinite(float(x)) else float(x)


def _df_txt(e: Evidence) -> str:
    """", 4 df" for an evidence whose sd states its degrees of freedom, else ""."""
    return f", {e.df:.3g} df" if e.df is not None else ""


def log_lead(t_first, t_other, last_first, last_other) -> float:
    """log(t_other / t_first): how far ahead the first engine reaches a target (positive: it is first).

    Where one engine never reached the target within its run, a bound: the other engine never reached it ->
    log(its last time / t_first) when that is positive (it had run longer without getting there), else 0 (not
    decided by this run); the first engine never reached it -> log(t_other / its last time) when that is
    negative (the other got there while it was still short), else 0. NaN when neither reached it."""
    fin_f, fin_o = np.isfinite(t_first), np.isfinite(t_other)
    if fin_f and fin_o:
        return float(np.log(max(t_other, 1e-12) / max(t_first, 1e-12)))
    if fin_f:
        return max(float(np.log(max(last_other, 1e-12) / max(t_first, 1e-12))), 0.0)
    if fin_o:
        return min(float(np.log(max(t_other, 1e-12) / max(last_first, 1e-12))), 0.0)
    return float("nan")


# ---------------------------------------------------------------------------- Fig. 2


def _reach(d, target, clock="wall_time"):
    """First ``clock`` time at which one run's held-out LL reaches ``target``, interpolated between
    evaluations (:func:`scalable_bayes_papers.esca.tables.time_to_reach`); inf if it never does."""
    return time_to_reach(d, target, clock)


def _reach_by_method(d, target, clock):
    """Per method: mean over seeds of the first ``clock`` time at which heldout_ll >= target."""
    return {m: float(np.nanmean([_reach(dm[dm["seed"] == s], target, clock) for s in dm["seed"].unique()]))
            for m, dm in d.groupby("method")}


FIG2_FIRST_GAP = 0.01  # nats/word: the target of "first" is CGS's final LL minus this


def fig2_margins(d: pd.DataFrame, clock: str, tol: float) -> dict:
    """Per seed of one corpus's Fig. 2 runs: the quality margin ESCA final - (CGS final - ``tol``) and, per other
    engine, :func:`log_lead` of ESCA to CGS's final LL - FIG2_FIRST_GAP on ``clock``. Returns
    ``{"quality": {seed: m}, "lead": {engine: {seed: m}}}``."""
    out = {"quality": {}, "lead": {}}
    for s in sorted(d["seed"].unique()):
        ds = d[d["seed"] == s]
        cur = {m: g.sort_values("iteration") for m, g in ds.groupby("method")}
        if "CGS" not in cur or "ESCA" not in cur:
            continue
        fin = {m: float(g["heldout_ll"].iloc[-1]) for m, g in cur.items()}
        out["quality"][int(s)] = fin["ESCA"] - (fin["CGS"] - tol)
        target = fin["CGS"] - FIG2_FIRST_GAP
        t = {m: _reach(g, target, clock) for m, g in cur.items()}
        last = {m: float(g[clock].iloc[-1]) for m, g in cur.items()}
        for m in sorted(set(cur) - {"ESCA"}):
            out["lead"].setdefault(m, {})[int(s)] = log_lead(t["ESCA"], t[m], last["ESCA"], last[m])
    return out


def check_fig2(df: pd.DataFrame, settings, profile) -> Claim:
    """ESCA reaches CGS's held-out LL and gets there first; ``df``: the Fig. 2 run tables, concatenated.

    Per corpus, two kinds of evidence (paired by seed): quality, ESCA's final LL - (CGS's final LL -
    ``quality_tol``); and per other engine "first", :func:`log_lead` of ESCA to CGS's final LL - 0.01 (log of
    the other's time over ESCA's). Their spread: with 2+ seeds the sd of the per-seed margins / sqrt(n), n - 1
    df. With one seed (the default config) there is no spread to measure and the claim is not checked; its
    margins are reported. A seed draws the chains; a run's ``seed_offset`` also draws the training subsample, so
    the run tables of a run and its replication pooled (``tools/pool_claims.py``) give the spread of both. (A
    spread from one seed's curves, their evaluation noise propagated into the margins, understated the
    difference between two such runs 3 to 22 fold (2026-11-27): it leaves out the subsample and the chains' other
    paths.)"""
    corpora = list(dict.fromkeys(df["train_corpus"]))
    tol = float(settings.get("quality_tol", 0.05))
    parts, details, evidence, gaps = [], {}, [], []
    for c in corpora:
        d = df[df["train_corpus"] == c]
        # each engine's own last recorded iteration (engines may run different numbers of iterations)
        last = d.sort_values("iteration").groupby(["method", "seed"]).tail(1)
        final = last.groupby("method")["heldout_ll"].mean()
        n_iters = last.groupby("method")["iteration"].max().astype(int).to_dict()
        t_total = last.groupby("method")["wall_time"].mean().to_dict()
        cgs_final = final.get("CGS", np.nan)
        target = cgs_final - FIG2_FIRST_GAP
        # the verdict's clock: CPU time when every engine ran on one thread (its work alone; the
        # wall time of a job also measures the other jobs sharing the machine), else wall time
        clock = "cpu_time" if ("cpu_time" in d and (d["threads"] == 1).all() and d["cpu_time"].notna().all()) \
            else "wall_time"
        t_reach, t_reach_wall = _reach_by_method(d, target, clock), _reach_by_method(d, target, "wall_time")
        mg = fig2_margins(d, clock, tol)
        n = len(mg["quality"])
        ev = []
        if n >= 2:
            ev.append(_seed_evidence(f"{c}: ESCA final LL above CGS's - {tol} (nats/word)", mg["quality"].values(),
                                     "paired margins ESCA final - (CGS final - tol)"))
            for m, lead in mg["lead"].items():
                e = _seed_evidence(f"{c}: ESCA first to CGS's final LL - {FIG2_FIRST_GAP}, log({m} time / ESCA time)",
                                   lead.values(), f"paired log({m} / ESCA) times to the target", clock=True)
                if e is None:
                    gaps.append(f"{c} vs {m}: the target reached by one of them on fewer than 2 seeds")
                ev.append(e)
        elif n == 1:
            s = next(iter(mg["quality"]))
            gaps.append(f"{c}: one seed, no spread to measure (not checked; margins: quality "
                        f"{mg['quality'][s]:+.4f}, " + ", ".join(f"log({m} / ESCA time) {lead[s]:+.3f}"
                                                                for m, lead in mg["lead"].items()) + ")")
        ev = [e for e in ev if e is not None]
        evidence += ev
        parts.append(f"{c}: final LL ESCA {final.get('ESCA', np.nan):.4f}, CGS {cgs_final:.4f}, "
                     f"CVB0 {final.get('CVB0', np.nan):.4f} after "
                     + ", ".join(f"{m} {n_iters[m]} it / {t_total[m]:.1f}s" for m in sorted(n_iters))
                     + f"; {clock.replace('_', ' ')} to CGS final - {FIG2_FIRST_GAP}: "
                     + ", ".join(f"{m} {t:.2f}s" for m, t in sorted(t_reach.items()))
                     + (" (wall: " + ", ".join(f"{m} {t:.2f}s" for m, t in sorted(t_reach_wall.items())) + ")"
                        if clock != "wall_time" else "")
                     + "".join(f"; {e.name.split(': ', 1)[1]}: {e.margin:+.3f} (sd {e.sd:.3f}{_df_txt(e)}, {e.verdict})"
                             for e in ev))
        details[c] = {"final_ll": final.to_dict(), "clock": clock, "time_to_target_s": t_reach,
                      "quality_margin_per_seed": mg["quality"], "log_lead_per_seed": mg["lead"],
                      "wall_time_to_target_s": t_reach_wall, "target": target,
                      "iterations": n_iters, "fit_time_s": t_total}
    K = int(df["n_topics"].iloc[0])
    return Claim(
        id="ESCA-Fig2", paper="esca",
        claim="ESCA reaches the held-out per-word log-likelihood of CGS (and CVB0) and gets there first in time.",
        measured="; ".join(parts), holds=None,
        scale=_scale(profile, f"K = {K} (paper 1000), training tokens "
                              + ", ".join(f"{c} {int(g['n_tokens'].iloc[0]):,}" for c, g in df.groupby("train_corpus"))
                              + f" (paper ~10^9), {int(df['n_test_docs'].iloc[0])} held-out docs (paper 10,000), "
                              + f"{df['seed'].nunique()} seed(s)"),
        paper_value="K = 1000 on 6.6M Wikipedia / 8.2M PubMed documents (values only plotted)",
        details=details, evidence=tuple(evidence),
        note=f"Evidence per corpus: (1) ESCA's final LL - (CGS's final LL - {tol}) nats/word; (2) per other engine, "
             f"log(its time / ESCA's time) to CGS's final LL - {FIG2_FIRST_GAP} (interpolated between evaluations; "
             "where one engine never got there, a bound: see claims.log_lead). Spread: with 2+ seeds the sd of the "
             "per-seed margins / sqrt(n) (paired by seed), n - 1 df. With one seed (the default config) the claim is "
             "not checked in a run: tools/pool_claims.py checks it on a run and its replication pooled (two seeds, "
             "two training subsamples). The noise of one seed's own curves, the spread used before, understated the "
             "difference between two such runs 3 to 22 fold. Timed by the process CPU time of the fit when every engine ran on one "
             "thread (the paper plots wall time; a job's wall time on the shared 2-core machine also measures the "
             "jobs beside it: between two quick runs the PubMed wall-time verdict flipped), else by wall time; "
             "both are in details. CGS/CVB0 sweeps are sequential, ESCA uses the rule's threads. Engines may run "
             "different numbers of iterations (config fig2.n_iter_by_method; details.iterations, details.fit_time_s): "
             "the claim is about time to quality. Gaps: " + ("; ".join(gaps) if gaps else "none") + ".",
    )


# ---------------------------------------------------------------------------- Fig. 3


def fig3_final_differences(df: pd.DataFrame) -> dict:
    """Paired final test-LL differences of Fig. 3 (nats per test point), from the run tables of
    :func:`scalable_bayes_papers.esca.runs.run_fig3_seed`:

    * ``restart_pairs``: |EM_r - EM_r'| over every seed and every pair of k-means++ restarts r < r'
      (the spread of EM restarts: how far apart two equally good EM runs end);
    * ``restart_spread``: per seed, the mean of its restart pairs (Series indexed by seed);
    * ``restarts_vs_0``: EM_r - EM_0 for r >= 1, per seed;
    * ``sem[s]`` / ``em_same_start[s]``: per seed, SEM (or EM) from the start of severity s minus EM
      from k-means++ restart 0 (the paper's EM curve; same data, the s = 0 start is EM's own).
    Series indexed by seed (sem / em_same_start / restarts_vs_0 / restart_spread) or a flat array (restart_pairs)."""
    last = df[df["iteration"] == df["iteration"].max()]
    em = last[last["method"] == "EM"].pivot_table(index="seed", columns="restart", values="test_ll")
    if 0 not in em.columns or em.shape[1] < 2:
        raise ValueError("Fig. 3 run tables need EM from k-means++ restart 0 and at least one more restart")
    pairs = [(em[a] - em[b]).abs() for a, b in itertools.combinations(sorted(em.columns), 2)]
    out = {"restart_pairs": np.concatenate([p.to_numpy() for p in pairs]), "em0": em[0],
           "restart_spread": pd.concat(pairs, axis=1).mean(axis=1),
           "restarts_vs_0": em.drop(columns=0).sub(em[0], axis=0), "sem": {}, "em_same_start": {}}
    for method, key in (("SEM", "sem"), ("EM_same_start", "em_same_start")):
        d = last[last["method"] == method]
        for s, ds in d.groupby("severity"):
            out[key][float(s)] = ds.set_index("seed")["test_ll"].sub(em[0]).dropna()
    return out


def check_fig3(df: pd.DataFrame, settings, profile) -> Claim:
    """SEM reaches EM's test LL from starts of every severity; ``df``: the Fig. 3 run tables (run_fig3_seed).

    Re-posed on an absolute, paired scale: a relative tolerance on a log-likelihood depends on the data's scale
    (x10 on the data shifts every LL by -2 log 10 and turns the same gap into a smaller relative one). Here
    "comparable" is measured against EM itself: SEM from a start of severity s is comparable when its paired
    shortfall to EM (same data, EM from k-means++ restart 0) is no larger than the difference between two
    k-means++ restarts of EM on the same data. Evidence per severity: per seed the margin (SEM - EM) + that
    seed's restart spread, averaged over seeds, with sd = the seeds' sd of the margins / sqrt(n) and n - 1 df
    (the bar's own seed-to-seed noise is in it). A severity within its band of the bar (Student's t with n - 1 df
    times the sd: 2.14 sds at 20 seeds, 13.97 at 2) is undecided (the quick run's severity 0.5: 0.0016 beyond
    the bar, s.e. 0.0068); a SEM stuck at a bad start (a shortfall of several spreads) fails.
    With one seed there is no spread to measure and the claim is not checked."""
    f = fig3_final_differences(df)
    scale = float(np.mean(f["restart_pairs"]))
    spread_s = f["restart_spread"]
    n_seeds = df["seed"].nunique()
    parts, evidence, details = [], [], {"em_restart_spread": scale,
                                        "em_restart_pair_quantiles": {q: float(np.quantile(f["restart_pairs"], q))
                                                                      for q in (0.5, 0.9)},
                                        "n_restarts": int(df.loc[df["method"] == "EM", "restart"].nunique()),
                                        "n_seeds": int(n_seeds), "severity": {}}
    parts.append(f"EM restart spread (mean |EM_r - EM_r'| over {len(f['restart_pairs'])} pairs of k-means++ "
                 f"restarts): {scale:.4f} nats/point (median {np.median(f['restart_pairs']):.4f}, 90% "
                 f"{np.quantile(f['restart_pairs'], 0.9):.4f})")
    for s, dsem in sorted(f["sem"].items()):
        margins = (dsem + spread_s.reindex(dsem.index)).dropna()
        m, se, n = seed_mean_se(margins)
        e = _seed_evidence(f"severity {s:g}: SEM - EM above minus the EM restart spread (nats/point)", margins,
                           "paired margins (SEM - EM) + restart spread")
        if e is not None:
            evidence.append(e)
        verdict = e.verdict if e is not None else "not checked"
        txt = (f"severity {s:g}: SEM - EM {float(dsem.mean()):+.4f} (mean over {len(dsem)} seeds; SEM >= EM on "
               f"{int((dsem >= 0).sum())}/{len(dsem)}); margin to minus the restart spread {m:+.4f}"
               + (f" +- {se:.4f} (s.e., {n - 1} df): {verdict}" if n >= 2 else " (one seed: no spread)"))
        det = {"sem_minus_em_mean": float(dsem.mean()), "margin": m, "margin_se": se,
               "sem_ge_em_seeds": int((dsem >= 0).sum()),
               "sem_minus_em_per_seed": {int(k): float(v) for k, v in dsem.items()}, "verdict": verdict}
        if s in f["em_same_start"]:
            dem = f["em_same_start"][s]
            both = pd.concat([dsem, dem], axis=1, keys=["sem", "em"]).dropna()
            wins = int((both["sem"] > both["em"]).sum())
            txt += f"; EM from the same start {float(dem.mean()):+.4f}, SEM above it on {wins}/{len(both)} seeds"
            det.update({"em_same_start_minus_em_mean": float(dem.mean()), "sem_above_em_same_start_seeds": wins})
        parts.append(txt)
        details["severity"][s] = det
    return Claim(
        id="ESCA-Fig3", paper="esca",
        claim="SEM is well behaved: it reaches a test log-likelihood comparable to EM's, whether it gets EM's "
              "initialisation or a deliberately bad one.",
        measured="; ".join(parts), holds=None,
        scale=_scale(profile, f"{settings['n_train']} train / {settings['n_test']} test points, "
                              f"{settings['n_iter']} iterations, {n_seeds} seeds, "
                              f"{details['n_restarts']} k-means++ restarts of EM per seed"),
        paper_value="curves only (App. A, Fig. 3); sizes as stated: 2-D, K = 30, 100,000 train / 1,000 test",
        details=details, evidence=tuple(evidence),
        note="Evidence per initialisation severity s (start means (1 - s) x k-means++ + s x a 1 x 1 box at the "
             "data mean; s = 0 is EM's own start, s = 1 the old 'bad' start): SEM's final test LL minus EM's "
             "(paired by seed: same data; EM from k-means++ restart 0) plus the EM restart spread of that seed (the "
             "mean |difference| between the final test LLs of two k-means++ restarts of EM on the same data), "
             "averaged over seeds; its sd is the seeds' sd of these margins / sqrt(n), with n - 1 df (band: Student's "
             "t of n - 1 df times the sd). Absolute nats per test "
             "point, so a rescaling of the data cannot move the verdict. "
             + ("" if n_seeds >= 2 else "One seed: no spread to measure, not checked (config fig3.seeds). ")
             + "EM from SEM's start (EM_same_start) is the paired control, not part of the verdict. Generating "
             "parameters, priors and starts are ours.",
        if_fails="The deciding experiment (scalable_bayes_papers.esca.study_fig3: 4x the iterations, missed true "
                 "clusters) and its finding are in src/scalable_bayes_papers/esca/README.md, Fig. 3.",
    )


# ---------------------------------------------------------------------------- Fig. 5


FIG5_SAME_TOL = 0.01  # nats/word (1% perplexity): the bar of "the same perplexity per iteration"


def fig5_paired_differences(d: pd.DataFrame) -> pd.DataFrame:
    """Per seed of one K of the Fig. 5 run tables: the paired sparse-minus-plain differences.

    ``ll_gap``: the mean over the recorded iterations after iteration 0 of LL(ESCA) - LL(ESCA_plain), nats per
    word (both engines of a seed start from the same counts, so iteration 0 is no evidence); ``log_speedup``:
    log(wall time of ESCA_plain / wall time of ESCA) to the last iteration. Indexed by seed."""
    per = d.pivot_table(index="iteration", columns=["method", "seed"], values="heldout_ll")
    later = per.index[per.index > per.index.min()]
    gap = (per.loc[later, "ESCA"] - per.loc[later, "ESCA_plain"]).mean()
    last = d[d["iteration"] == d["iteration"].max()].pivot_table(index="seed", columns="method", values="wall_time")
    return pd.DataFrame({"ll_gap": gap, "log_speedup": np.log(last["ESCA_plain"] / last["ESCA"])}).dropna()


def check_fig5(df: pd.DataFrame, settings, profile) -> Claim:
    """Sparse + alias ESCA tracks plain SCA per iteration and gets there sooner; ``df``: the Fig. 5 run tables.

    Per K, two pieces of evidence, each paired by seed (same data, same start) with sd = the seeds' sd of the
    paired differences / sqrt(n) and n - 1 df (band: Student's t of n - 1 df times the sd):

    * "same perplexity per iteration": FIG5_SAME_TOL - |mean over seeds of the per-seed mean gap LL(sparse) -
      LL(plain) over the iterations after 0|. The two samplers draw from the same conditional, so any gap the
      seeds resolve is a wrong sampler; FIG5_SAME_TOL (1% perplexity, a fifth of the 5% that Fig. 6 calls
      "comparable") is where "the same" ends;
    * "reaches it sooner": the mean over seeds of log(time plain / time sparse) to the last iteration (the
      paper states no factor: the threshold is 1).

    With one seed there is no spread to measure: that K is not checked."""
    Ks = sorted(df["n_topics"].unique())
    seeds = sorted(df["seed"].unique())
    parts, details, evidence = [], {}, []
    for K in Ks:
        d = df[df["n_topics"] == K]
        pdiff = fig5_paired_differences(d)
        gap, gap_se, n = seed_mean_se(pdiff["ll_gap"])
        sp_m, sp_se, _ = seed_mean_se(pdiff["log_speedup"])
        rs = np.exp(pdiff["log_speedup"])
        ev = []
        if n >= 2:
            ev = [Evidence(f"K={K}: |LL(sparse) - LL(plain)| below {FIG5_SAME_TOL} (nats/word)",
                           FIG5_SAME_TOL - abs(gap), gap_se,
                           f"sd of the {n} seeds' paired mean gaps LL(sparse) - LL(plain) / sqrt({n}), {n - 1} df",
                           df=n - 1),
                  Evidence(f"K={K}: log(plain / sparse time to the last iteration)", sp_m, sp_se,
                           f"sd of the {n} seeds' paired log speed-ups / sqrt({n}), {n - 1} df", df=n - 1,
                           clock=True)]
        evidence += ev
        last = d[d["iteration"] == d["iteration"].max()]
        t = last.groupby("method")["wall_time"].mean()
        speed = float(t["ESCA_plain"] / t["ESCA"])
        parts.append(f"K={K}: paired LL(sparse) - LL(plain), mean over iterations after 0: {gap:+.4f} nats/word "
                     + (f"+- {gap_se:.4f} (s.e. over {n} seeds, {n - 1} df; bar {FIG5_SAME_TOL}: {ev[0].verdict})" if ev
                        else "(one seed: no spread, not checked)")
                     + f", plain/sparse fit time to the last iteration {speed:.2f}x (per seed "
                     f"{rs.min():.2f}-{rs.max():.2f}x; geometric mean {np.exp(sp_m):.2f}x"
                     + (f", log {sp_m:+.3f} +- {sp_se:.3f}: {ev[1].verdict}" if ev else "") + ")")
        details[int(K)] = {"ll_gap_mean": gap, "ll_gap_se": gap_se,
                           "ll_gap_per_seed": {int(k): float(v) for k, v in pdiff["ll_gap"].items()},
                           "speedup": speed, "log_speedup_mean": sp_m, "log_speedup_se": sp_se,
                           "speedup_per_seed": {int(k): float(v) for k, v in rs.items()},
                           "n_seeds": len(seeds), "same_tol": FIG5_SAME_TOL}
    return Claim(
        id="ESCA-Fig5", paper="esca",
        claim="Sparse + alias sampling gives the same perplexity per iteration as plain SCA and reaches it sooner "
              "in wall time (App. G, Fig. 5 plots perplexity over time; the paper gives no speed-up factor).",
        measured="; ".join(parts), holds=None,
        scale=_scale(profile, f"{df['train_corpus'].iloc[0]} ({int(df['n_tokens'].iloc[0])} tokens), "
                              f"{int(df['iteration'].max())} iterations, {len(seeds)} seeds"),
        details=details, evidence=tuple(evidence),
        note="Evidence per K, paired by seed (same data, same start), sd = the seeds' sd of the paired differences "
             f"/ sqrt(n) with n - 1 df (band: Student's t of n - 1 df times the sd): (1) {FIG5_SAME_TOL} nats/word "
             "minus |the mean over seeds of the per-seed mean gap "
             "LL(sparse) - LL(plain) over the recorded iterations after 0| (both engines sample the same "
             "conditional, so a gap the seeds resolve is a wrong sampler; 1% perplexity is where 'the same' ends); "
             "(2) the mean over seeds of log(plain / sparse wall time to the last iteration: fit only, both engines "
             "on the rule's threads, same iterations, hence the same perplexity), threshold 0. The paper's Fig. 5 "
             "shows curves and no factor, so no size of the speed-up is claimed or tested (the catalogue's 'much "
             "faster' is dropped); the measured ratio is reported. With one seed: not checked (no spread).",
    )


# ---------------------------------------------------------------------------- Fig. 6


def _fig6_docs(df: pd.DataFrame, settings) -> str:
    """The training and test document counts of the Fig. 6 runs (the paper trains on the whole corpora)."""
    run = settings.get("run", {})
    cap_tr, cap_te = run.get("max_train_docs"), run.get("max_test_docs")
    tr = f"{cap_tr:,}-document training subsets" if cap_tr else "whole training splits"
    te = f"{cap_te:,} test documents" if cap_te else "every test document"
    return f"{tr} (paper: the whole corpora), {te}"


def check_fig6(df: pd.DataFrame, settings, profile) -> Claim:
    """SCA's final perplexity close to CGS's at every (K, beta); ``df``: the Fig. 6 run tables.

    Evidence per (pair, K, beta): ``rel_tol`` (5%) minus SCA's relative excess of final perplexity over CGS's,
    paired by seed (same data), averaged over seeds, sd = the seeds' sd of the per-seed excesses / sqrt(n) with
    n - 1 df (band: Student's t of n - 1 df times the sd, 13.97 sds with 2 seeds). With one seed there is no
    spread to measure: not checked."""
    pairs = list(dict.fromkeys(zip(df["train_corpus"], df["test_corpus"])))
    rel_tol = float(settings.get("rel_tol", 0.05))
    parts, evidence, details = [], [], {}
    n_seeds = df["seed"].nunique()
    for tr, te in pairs:
        d = df[(df["train_corpus"] == tr) & (df["test_corpus"] == te)]
        last_it = d["iteration"].max()
        fin = d[d["iteration"] == last_it].assign(p=lambda x: np.exp(-x["heldout_ll"]))
        sca = "ESCA_plain" if (fin["method"] == "ESCA_plain").any() else "ESCA"
        piv = fin.pivot_table(index=["n_topics", "beta", "seed"], columns="method", values="p")
        rel_seed = ((piv[sca] - piv["CGS"]) / piv["CGS"]).dropna() if "CGS" in piv else pd.Series(dtype=float)
        cells = {}
        for (K, b), r in rel_seed.groupby(level=["n_topics", "beta"]):
            m, se, n = seed_mean_se(r)
            cells[(int(K), float(b))] = (m, se)
            e = _seed_evidence(f"{tr}->{te} K={int(K)} beta={b:g}: SCA's perplexity excess over CGS below {rel_tol:.0%}",
                               rel_tol - r.to_numpy(), "paired relative excesses (SCA - CGS) / CGS")
            if e is not None:
                evidence.append(e)
        worst = max(cells.items(), key=lambda kv: kv[1][0]) if cells else None
        parts.append(f"train {tr}/test {te}: SCA vs CGS final perplexity over {len(cells)} (K, beta) settings, worst "
                     + (f"relative excess {worst[1][0]:+.3f}"
                        + (f" +- {worst[1][1]:.3f} (s.e. over {n_seeds} seeds, {n_seeds - 1} df)"
                                                                 if np.isfinite(worst[1][1]) else " (one seed)")
                        + f" at K={worst[0][0]}, beta={worst[0][1]:g}" if worst else "none"))
        details[f"{tr}->{te}"] = {f"K={k},beta={b}": v[0] for (k, b), v in cells.items()}
        details[f"{tr}->{te}"]["se"] = {f"K={k},beta={b}": v[1] for (k, b), v in cells.items()}
        # the time panel (information, not part of the verdict): CPU time (every Fig. 6 run is single-
        # threaded) for each engine to reach CGS's final perplexity + rel_tol at the base (K, beta)
        K0, b0 = int(settings["run"]["n_topics"]), float(settings["run"]["beta"])
        base = d[(d["n_topics"] == K0) & np.isclose(d["beta"], b0)]
        if len(base) and "CGS" in set(base["method"]):
            clock = "cpu_time" if "cpu_time" in base and base["cpu_time"].notna().all() else "wall_time"
            p_cgs = float(np.exp(-base[(base["method"] == "CGS") & (base["iteration"] == last_it)]["heldout_ll"]).mean())
            target = -np.log(p_cgs * (1 + rel_tol))
            t_hit = _reach_by_method(base, target, clock)
            t_end = base[base["iteration"] == last_it].groupby("method")[clock].mean().to_dict()
            parts[-1] += (f"; time panel (K = {K0}, beta = {b0:g}, not tested): {clock.replace('_', ' ')} to CGS's "
                          f"final perplexity + {rel_tol:.0%}: " + ", ".join(f"{m} {v:.1f}s" for m, v in sorted(t_hit.items()))
                          + f" (to iteration {int(last_it)}: " + ", ".join(f"{m} {v:.1f}s" for m, v in sorted(t_end.items())) + ")")
            details[f"{tr}->{te}"]["time_panel"] = {"clock": clock, "target_perplexity": p_cgs * (1 + rel_tol),
                                                   "time_to_target_s": t_hit, "time_to_last_iteration_s": t_end}
    return Claim(
        id="ESCA-Fig6", paper="esca",
        claim="SCA's perplexity per iteration is comparable to CGS and CVB0 across numbers of topics and beta "
              "(App. G, Fig. 6; its time panel runs SCA without sparsity or alias, 'hence slower': no timed claim).",
        measured="; ".join(parts), holds=None,
        scale=_scale(profile, f"{int(last_it)} iterations (paper 75), Reuters-21578 stand-in for RCV1, "
                              f"Wikipedia sample; {_fig6_docs(df, settings)}; {n_seeds} seed(s) (paper 5)"),
        details=details, evidence=tuple(evidence),
        note=f"Evidence per (train -> test, K, beta): {rel_tol:.0%} minus SCA's final perplexity's relative excess "
             "over CGS's, paired by seed (same data) and averaged over seeds; sd = the seeds' sd of the per-seed "
             "excesses / sqrt(n), with n - 1 df (band: Student's t of n - 1 df times the sd: 13.97 sds with 2 seeds, "
             "4.53 with 3; the paper reports mean +- sd over 5 seeds). "
             + ("" if n_seeds >= 2 else "One seed: no spread to measure, not checked (config fig6.seeds). ")
             + "Test documents of the other corpus are mapped into the training vocabulary (OOV tokens dropped). "
             "Wall time is not part of the claim: the paper's caption says this SCA is slower, and 'competitive in "
             "wall time' (the catalogue's words) is dropped; the time panel's numbers are reported (measured, "
             "details.time_panel).",
    )


# ---------------------------------------------------------------------------- throughput table


PEER = "tomotopy"  # the fastest peer the pipeline runs (runs.METHODS, peers.py)


def check_throughput(t: pd.DataFrame, profile, quality_tol: float = 0.05) -> Claim:
    """The paper's throughput point, tested where it can be; ``t``: the throughput table (tables.throughput).

    Paper (abstract, Sec. 4, Sec. 5): "over an order of magnitude faster than the fastest current
    approaches", from 570M tokens/s on 4 x 36 threads against 112M (F+LDA, personal communication) and
    60M (LightLDA). Not testable here (2 cores, no F+LDA or LightLDA, ~10^6 tokens instead of 1.7 x 10^11).
    Tested: at equal held-out quality (CGS's final held-out LL - ``quality_tol``), ESCA reaches the
    target before the fastest peer the pipeline runs (tomotopy) at every thread count both ran, one
    thread by CPU time, more by wall time (tables.verdict_clock). Evidence per thread count: log(tomotopy's
    time / ESCA's time) to the target (:func:`log_lead` of the geometric means), sd = sqrt(se_ESCA^2 +
    se_tomotopy^2) from the table's ``log_time_to_target_se`` (over 2+ seeds), its df the Welch-Satterthwaite
    combination of the two (``log_time_to_target_df``: seeds - 1 each). With one seed a thread count is not
    checked: timing repeats re-time one seed's fit, and another seed (or the replication's other training
    subsample) needs other iteration counts; ``tools/pool_claims.py`` checks it on a run and its replication
    pooled.
    Tokens/s of every engine are reported."""
    parts, evidence, gaps, details = [], [], [], {}
    for c, d in t.groupby("corpus", sort=False):
        mpi = d[d["method"] == "ESCA_MPI"]
        if len(mpi):
            parts.append(f"{c}: ESCA over MPI " + ", ".join(
                f"{int(r.ranks)} ranks {r.tokens_per_s / 1e6:.2f}M tok/s (held-out LL {r.heldout_ll:.4f})"
                for r in mpi.itertuples()))
        d = d[d["method"] != "ESCA_MPI"]
        target = float(d["target_ll"].dropna().iloc[0]) if d["target_ll"].notna().any() else float("nan")
        tps = ", ".join(f"{r.method} {r.tokens_per_s / 1e6:.2f}M ({int(r.threads)} thr)"
                        for r in d.sort_values(["method", "threads"]).itertuples())
        txt = f"{c}: tokens/s {tps}"
        det = {"target_ll": target, "rows": {}}
        for r in d.itertuples():
            det["rows"][f"{r.method}@{int(r.threads)}"] = {
                "tokens_per_s": float(r.tokens_per_s), "final_ll": float(r.heldout_ll), "iterations": int(r.iterations),
                "clock": r.target_clock, "time_to_target_s": float(r.time_to_target_s),
                "wall_to_target_s": float(r.wall_to_target_s), "log_time_to_target": float(r.log_time_to_target),
                "log_time_to_target_se": float(r.log_time_to_target_se), "spread_from": r.spread_from,
                "iters_to_target": float(getattr(r, "iters_to_target", np.nan)),
                "n_repeats": int(r.n_repeats)}
        if np.isfinite(target):
            txt += (f"; time to held-out LL {target:.4f} (CGS final - {quality_tol}): "
                    + ", ".join(f"{r.method} {r.time_to_target_s:.2f}s ({int(r.threads)} thr, "
                                f"{r.target_clock.replace('_time', '')}; final {r.heldout_ll:.4f} after {int(r.iterations)} it)"
                                for r in d.sort_values(["method", "threads"]).itertuples()))
            esca = d[d["method"] == "ESCA"].set_index("threads")
            peer = d[d["method"] == PEER].set_index("threads")
            for th in sorted(set(esca.index) & set(peer.index)):
                e, p = esca.loc[th], peer.loc[th]
                lead = log_lead(float(np.exp(e["log_time_to_target"])), float(np.exp(p["log_time_to_target"])),
                                float(e["clock_time_to_last_s"]), float(p["clock_time_to_last_s"]))
                ses = [float(x["log_time_to_target_se"]) for x in (e, p) if np.isfinite(x["log_time_to_target"])]
                se_dfs = [_finite_or_none(x.get("log_time_to_target_df")) for x in (e, p)
                          if np.isfinite(x["log_time_to_target"])]
                ratio = float(np.exp(lead)) if np.isfinite(lead) else float("nan")
                tok = float(e["tokens_per_s"] / p["tokens_per_s"])
                ev = None
                if not np.isfinite(lead):
                    gaps.append(f"{c} {th} thr: neither engine reached the target")
                elif not ses or not all(np.isfinite(ses)):
                    gaps.append(f"{c} {th} thr: no spread to measure (ESCA: {e['spread_from']}; {PEER}: "
                                f"{p['spread_from']}); not checked, margin {lead:+.3f}")
                else:
                    ev = Evidence(f"{c} {th} thr: log({PEER} / ESCA time to the target)", lead,
                                  float(np.sqrt(sum(s ** 2 for s in ses))),
                                  f"ESCA: {e['spread_from']}; {PEER}: {p['spread_from']} (se of each mean log time, "
                                  "combined as independent; df: their Welch-Satterthwaite combination)",
                                  df=_combined_df(zip(ses, se_dfs)), clock=True)
                    evidence.append(ev)
                # the ratio's two parts: iterations to the target (the algorithm) and time per iteration (the
                # implementation); the paper's order of magnitude at equal quality needs their product >= 10
                it_p, it_e = float(p.get("iters_to_target", np.nan)), float(e.get("iters_to_target", np.nan))
                # (a target reached at the first evaluation gives 0 iterations: no split then)
                it_ratio = it_p / it_e if np.isfinite(it_p) and np.isfinite(it_e) and it_e > 0 else float("nan")
                per_it = ratio / it_ratio if np.isfinite(it_ratio) and it_ratio > 0 else float("nan")
                parts_txt = (f"; iterations to the target ESCA {float(e['iters_to_target']):.1f}, {PEER} "
                             f"{float(p['iters_to_target']):.1f}, time per iteration {per_it:.2f}x {PEER}'s: an order "
                             f"of magnitude at equal quality needs {10 / it_ratio:.1f}x per iteration at these "
                             "iteration counts" if np.isfinite(per_it) else "")
                txt += (f"; {th} thr: {PEER} / ESCA time to target {ratio:.2f}x"
                        + (f" (log {lead:+.3f} +- {ev.sd:.3f}{_df_txt(ev)}: {ev.verdict})" if ev is not None
                           else " (no spread)")
                        + f" (tokens/s {tok:.2f}x; paper's order of magnitude: "
                        f"{'reached' if ratio >= 10 else 'not reached'} at this scale{parts_txt})")
                det[f"peer_over_esca_time_to_target_{th}thr"] = ratio
                det[f"peer_over_esca_iters_to_target_{th}thr"] = it_ratio
                det[f"esca_over_peer_speed_per_iteration_{th}thr"] = per_it
                det[f"esca_over_peer_tokens_per_s_{th}thr"] = tok
        parts.append(txt)
        details[c] = det
    return Claim(
        id="ESCA-Throughput", paper="esca",
        claim="ESCA is over an order of magnitude faster than the fastest current approaches (570M tokens/s on 4 x 36 "
              "threads vs 112M for F+LDA and 60M for LightLDA) with predictive power competitive with CGS. "
              "Tested here: at equal held-out quality ESCA reaches the target before the fastest peer the "
              "pipeline runs (tomotopy), on 1 and 2 threads.",
        measured="; ".join(parts), holds=None, evidence=tuple(evidence),
        scale=_scale(profile, "one shared 2-core machine (paper: 4 nodes x 36 threads); MPI ranks run on the same machine"),
        paper_value="570M tokens/s (4 x 36 threads, 'Large' corpus, ~171 x 10^9 tokens) vs 112M (F+LDA) and 60M "
                    "(LightLDA): 5.1x and 9.5x by the paper's own numbers",
        details=details,
        note="Evidence per thread count both ran: log(tomotopy's / ESCA's fit time to the target held-out LL (CGS's "
             f"final - {quality_tol} nats/word, interpolated between evaluations)), geometric means over seeds and "
             "timing repeats, threshold 0; one-thread fits timed by process CPU time, two-thread fits by wall time "
             "(details give both). Its sd: over 2+ seeds, seeds - 1 df for each engine, combined by "
             "Welch-Satterthwaite. With one seed (the default config) not checked in a run; tools/pool_claims.py "
             "checks it on a run and its replication pooled (two seeds, two training subsamples). Timing repeats "
             "(config throughput.timing_repeats: the same fit re-timed back to back without evaluation) only average "
             "the time per iteration: their spread, used before as the sd, understated the difference between two "
             "such runs 3-4 fold at 2 threads, since another seed needs other iteration counts to the target. Gaps: "
             + ("; ".join(gaps) if gaps else "none") + ". 'Over an order of "
             "magnitude' on 4 x 36 threads against F+LDA / LightLDA: not testable at this scale (neither peer runs "
             "here, 2 cores, ~10^6 tokens); the measured ratios are reported, and the paper's own numbers give "
             "5.1x over F+LDA. tomotopy (C++ CGS with SIMD kernels) is run by the pipeline itself, a pinned "
             "dependency, with hyper-parameter optimisation off (peers.py); benchmarks/README_lda.md has the "
             "paired speed ratios on more corpora.",
        if_fails="Where time to the target splits into iterations (the algorithm) and time per iteration (the "
                 "implementation and the machine's load), and what the repeated pairs found: the deciding experiment "
                 "(scalable_bayes_papers.esca.study_throughput) in src/scalable_bayes_papers/esca/README.md, Throughput.",
    )


# ---------------------------------------------------------------------------- TabU1, TabU2, TabU3


TABU1_ATOL = 1e-9  # an exact identity, up to the eigen-solver's rounding


def check_tabu1(t: pd.DataFrame, profile) -> Claim:
    """Synchronous SCA's stationary distribution is uniform, sequential Gibbs' is p; ``t``: tables.tabu1()."""
    dev_sync = float(np.max(np.abs(t["synchronous_sca_stationary"].to_numpy() - 0.25)))
    dev_seq = float(np.max(np.abs(t["sequential_gibbs_stationary"].to_numpy() - t["p_target"].to_numpy())))
    how = "deterministic: exact stationary laws of the 4 x 4 transition matrices (eigenvectors), no randomness"
    evidence = (Evidence(f"synchronous law uniform: {TABU1_ATOL:g} minus max |q - 1/4|", TABU1_ATOL - dev_sync, 0.0, how),
                Evidence(f"sequential Gibbs law = p: {TABU1_ATOL:g} minus max |q - p|", TABU1_ATOL - dev_seq, 0.0, how))
    return Claim(
        id="ESCA-TabU1", paper="esca",
        claim="Under synchronous SCA updates of the two-spin Ising model all four states are equally likely "
              "(q propto cosh(x1 x2)), unlike the target p propto exp(x1 x2).",
        measured=f"synchronous stationary {np.round(t['synchronous_sca_stationary'].to_numpy(), 4).tolist()}; "
                 f"sequential Gibbs stationary {np.round(t['sequential_gibbs_stationary'].to_numpy(), 4).tolist()}; "
                 f"target {np.round(t['p_target'].to_numpy(), 4).tolist()}",
        holds=None, evidence=evidence, scale=_scale(profile, "exact (4 x 4 transition matrices)"),
    )


def check_tabu2(t: pd.DataFrame, profile) -> Claim:
    """Not a claim: the stand-in corpora beside the paper's; ``t``: tables.tabu2(...)."""
    return Claim(
        id="ESCA-TabU2", paper="esca", claim="Data sets of Sec. 4 (PubMed, Wikipedia, Large).",
        measured="; ".join(f"{r.dataset}: V {r.V}, {r.docs} docs, {r.tokens} tokens"
                           for r in t.iloc[len(PAPER_DATASETS):].itertuples()),
        holds=None, scale=_scale(profile, "stand-ins from the local mirror"),
        note="Not a claim: the paper's corpora are not available here; the stand-ins are far smaller.",
    )


def check_tabu3(t: pd.DataFrame, settings, profile) -> Claim:
    """Qualitative: the top words, to be read; ``t``: tables.tabu3(...), ``settings``: the topics block."""
    run = settings["run"]
    return Claim(
        id="ESCA-TabU3", paper="esca",
        claim="ESCA finds interpretable topics (top-10 words of the first five topics on PubMed and Wikipedia).",
        measured=" | ".join(f"{r.corpus} topic {r.topic}: {r.top_words}" for r in t.itertuples()),
        holds=None, scale=_scale(profile, f"K = {run['n_topics']}, {run['n_iter']} iterations"),
        note="Qualitative: judged by reading the table (PubMed stand-in: OHSUMED abstracts).",
    )


# ---------------------------------------------------------------------------- static items (holds = None)


def check_fig1(profile) -> Claim:
    n_it, bufs = FIG1_SPEC["n_iterations"], FIG1_SPEC["buffers"]
    return Claim(id="ESCA-Fig1", paper="esca", claim="Double buffering of the sufficient statistics (Figure 1).",
                 measured=f"rendered {n_it} iterations alternating {bufs[0]} / {bufs[1]}", holds=None,
                 scale=_scale(profile, "static"),
                 note=STATIC_NOTE + " The engines implement it: ESCA reads the previous iteration's counts and writes "
                                    "the next ones (scalable_bayes.inference.lda).")


def check_fig4(profile) -> Claim:
    spec = FIG4_SPEC
    return Claim(id="ESCA-Fig4", paper="esca", claim="LDA graphical model (Figure 4, App. B).",
                 measured=f"rendered {len(spec['nodes'])} nodes, {len(spec['edges'])} edges, {len(spec['plates'])} plates",
                 holds=None, scale=_scale(profile, "static"), note=STATIC_NOTE)


def check_tab1(t: pd.DataFrame, profile) -> Claim:
    return Claim(id="ESCA-Tab1", paper="esca", claim="Examples of popular models to which ESCA is applicable (Table 1).",
                 measured=f"rendered {len(t)} x {len(TAB1_SPEC['columns'])} table from the spec",
                 holds=None, scale=_scale(profile, "static"),
                 note=STATIC_NOTE + " The Gaussian-mixture cell is exercised by ESCA-Fig3 (SEM vs EM), the LDA cell "
                                    "by ESCA-Fig2/5/6.")


def check_tab2(t: pd.DataFrame, profile) -> Claim:
    return Claim(id="ESCA-Tab2", paper="esca", claim="Notation of App. A (Table 2).",
                 measured=f"rendered {len(t)} notation rows from the spec", holds=None,
                 scale=_scale(profile, "static"), note=STATIC_NOTE)


# item -> check, for the adapters that serve several items
FIGURE_CHECKS = {"Fig2": check_fig2, "Fig3": check_fig3, "Fig5": check_fig5, "Fig6": check_fig6}
