"""Claims of the ESCA paper (Zaheer et al. 2016), checked on the run tables.

Each ``check_<item>`` is pure (no I/O, no plotting): run table(s) in, :class:`~scalable_bayes.reporting.Claim`
out. Each states the paper's claim in one sentence, what this run measured and the test that turns
the paper's words into a verdict (``note``); README.md beside this file gives the reasons.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from scalable_bayes.reporting import Claim

from .static import FIG1_SPEC, FIG4_SPEC, PAPER_DATASETS, TAB1_SPEC

STATIC_NOTE = "Static item (no computation to check): rendered from a text spec in scalable_bayes_papers.esca.static."


def _scale(profile, extra=""):
    """Scale string of a claim: the config profile plus the departures from the paper."""
    return f"{profile}{'; ' + extra if extra else ''}"


# ---------------------------------------------------------------------------- Fig. 2


def _reach(d, target, clock="wall_time"):
    hit = d[d["heldout_ll"] >= target]
    return float(hit[clock].min()) if len(hit) else np.inf


def _reach_by_method(d, target, clock):
    """Per method: mean over seeds of the first ``clock`` time at which heldout_ll >= target."""
    return {m: float(np.nanmean([_reach(dm[dm["seed"] == s], target, clock) for s in dm["seed"].unique()]))
            for m, dm in d.groupby("method")}


def fig2_first(d: pd.DataFrame, target: float, clock: str) -> dict:
    """Is ESCA first to ``target``? Per other engine, paired by seed (same data): d_s = log(time of the other /
    time of ESCA) to the first evaluation at or above the target (+inf where only ESCA gets there).

    With 3+ seeds ESCA is first against an engine when the mean of d_s exceeds t_{0.975, n-1} standard errors
    (:func:`paired_seed_test`; an infinite d_s counts as the largest finite one, or log 10 if none is finite):
    a lead inside the seeds' spread is no lead. With 1-2 seeds, when d_s > 0 on every seed. ESCA never
    reaching the target on a seed is never first. Returns per engine ``{"log_ratio_per_seed", "holds"}`` and
    ``holds`` (first against every engine)."""
    seeds = sorted(d["seed"].unique())
    t = {m: {s: _reach(dm[dm["seed"] == s], target, clock) for s in seeds if (dm["seed"] == s).any()}
         for m, dm in d.groupby("method")}
    esca = t.get("ESCA", {})
    out, ok = {}, []
    for m in sorted(set(t) - {"ESCA"}):
        both = [s for s in seeds if s in esca and s in t[m]]
        if not both or any(not np.isfinite(esca[s]) for s in both):
            out[m] = {"log_ratio_per_seed": {}, "holds": False}
            ok.append(False)
            continue
        lr = np.array([np.inf if not np.isfinite(t[m][s]) else np.log(max(t[m][s], 1e-12) / max(esca[s], 1e-12))
                       for s in both])
        if len(lr) >= 3:
            fin = lr[np.isfinite(lr)]
            cap = float(fin.max()) if fin.size else float(np.log(10.0))
            pt = paired_seed_test(pd.Series(np.where(np.isfinite(lr), lr, max(cap, 0.0))))
            h = bool(pt["mean"] > pt["threshold"]) if np.isfinite(pt["threshold"]) else bool(pt["mean"] > 0)
        else:
            h = bool((lr > 0).all())
        out[m] = {"log_ratio_per_seed": {int(s): float(v) for s, v in zip(both, lr)}, "holds": h}
        ok.append(h)
    return {"per_engine": out, "holds": bool(ok) and all(ok)}


def check_fig2(df: pd.DataFrame, settings, profile) -> Claim:
    """ESCA reaches CGS's held-out LL and gets there first; ``df``: the Fig. 2 run tables, concatenated.
    "First" is paired by seed against each other engine (:func:`fig2_first`: with 3+ seeds a lead beyond the
    seeds' spread, with 1-2 seeds first on every seed)."""
    corpora = list(dict.fromkeys(df["train_corpus"]))
    tol = float(settings.get("quality_tol", 0.05))
    verdicts, parts, details = [], [], {}
    for c in corpora:
        d = df[df["train_corpus"] == c]
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
        fr = fig2_first(d, target, clock)
        first = fr["holds"]
        verdicts.append(bool(esca_ok and first))
        parts.append(f"{c}: final LL ESCA {final.get('ESCA', np.nan):.4f}, CGS {cgs_final:.4f}, "
                     f"CVB0 {final.get('CVB0', np.nan):.4f} after "
                     + ", ".join(f"{m} {n_iters[m]} it / {t_total[m]:.1f}s" for m in sorted(n_iters))
                     + f"; {clock.replace('_', ' ')} to CGS final - 0.01: "
                     + ", ".join(f"{m} {t:.2f}s" for m, t in sorted(t_reach.items()))
                     + (" (wall: " + ", ".join(f"{m} {t:.2f}s" for m, t in sorted(t_reach_wall.items())) + ")"
                        if clock != "wall_time" else ""))
        details[c] = {"final_ll": final.to_dict(), "clock": clock, "time_to_target_s": t_reach,
                      "esca_first_paired": fr["per_engine"],
                      "wall_time_to_target_s": t_reach_wall, "target": target,
                      "iterations": n_iters, "fit_time_s": t_total}
    K = int(df["n_topics"].iloc[0])
    return Claim(
        id="ESCA-Fig2", paper="esca",
        claim="ESCA reaches the held-out per-word log-likelihood of CGS (and CVB0) and gets there first in time.",
        measured="; ".join(parts), holds=all(verdicts),
        scale=_scale(profile, f"K = {K} (paper 1000), training tokens "
                              + ", ".join(f"{c} {int(g['n_tokens'].iloc[0]):,}" for c, g in df.groupby("train_corpus"))
                              + f" (paper ~10^9), {int(df['n_test_docs'].iloc[0])} held-out docs (paper 10,000)"),
        paper_value="K = 1000 on 6.6M Wikipedia / 8.2M PubMed documents (values only plotted)",
        details=details,
        note=f"holds = final ESCA LL >= final CGS LL - {tol} nats/word and ESCA first to reach CGS's final LL - 0.01 "
             "against every other engine, paired by seed (log of the other's time over ESCA's per seed: with 3+ seeds "
             "its mean beyond t_{0.975, n-1} standard errors, with 1-2 seeds positive on every seed), "
             "timed by the process CPU time (the paper plots wall time; 'first in time' is tested on the clock named "
             "in details) of the fit when every engine ran on one thread (a job's wall time on the "
             "shared 2-core machine also measures the jobs running beside it: between two quick runs the PubMed "
             "wall-time verdict flipped), else by wall time; both are in details. "
             "CGS/CVB0 sweeps are sequential, ESCA uses the rule's threads. Engines may run different numbers of "
             "iterations (config fig2.n_iter_by_method; see details.iterations and details.fit_time_s): the claim is "
             "about time to quality, so the cheaper engine may use more, shorter iterations.",
    )


# ---------------------------------------------------------------------------- Fig. 3


def fig3_final_differences(df: pd.DataFrame) -> dict:
    """Paired final test-LL differences of Fig. 3 (nats per test point), from the run tables of
    :func:`scalable_bayes_papers.esca.runs.run_fig3_seed`:

    * ``restart_pairs``: |EM_r - EM_r'| over every seed and every pair of k-means++ restarts r < r'
      (the spread of EM restarts: how far apart two equally good EM runs end);
    * ``restarts_vs_0``: EM_r - EM_0 for r >= 1, per seed;
    * ``sem[s]`` / ``em_same_start[s]``: per seed, SEM (or EM) from the start of severity s minus EM
      from k-means++ restart 0 (the paper's EM curve; same data, the s = 0 start is EM's own).
    Series indexed by seed (sem / em_same_start / restarts_vs_0) or a flat array (restart_pairs)."""
    last = df[df["iteration"] == df["iteration"].max()]
    em = last[last["method"] == "EM"].pivot_table(index="seed", columns="restart", values="test_ll")
    if 0 not in em.columns or em.shape[1] < 2:
        raise ValueError("Fig. 3 run tables need EM from k-means++ restart 0 and at least one more restart")
    pairs = [(em[a] - em[b]).abs().to_numpy() for a, b in itertools.combinations(sorted(em.columns), 2)]
    out = {"restart_pairs": np.concatenate(pairs), "em0": em[0],
           "restarts_vs_0": em.drop(columns=0).sub(em[0], axis=0), "sem": {}, "em_same_start": {}}
    for method, key in (("SEM", "sem"), ("EM_same_start", "em_same_start")):
        d = last[last["method"] == method]
        for s, ds in d.groupby("severity"):
            out[key][float(s)] = ds.set_index("seed")["test_ll"].sub(em[0]).dropna()
    return out


def check_fig3(df: pd.DataFrame, settings, profile) -> Claim:
    """SEM reaches EM's test LL from starts of every severity; ``df``: the Fig. 3 run tables (run_fig3_seed).

    Re-posed on an absolute, paired scale: a relative tolerance on a log-likelihood
    depends on the data's scale (x10 on the data shifts every LL by -2 log 10 and turns the same gap
    into a smaller relative one). Here "comparable" is measured against EM itself: SEM from a start
    of severity s is comparable when its mean paired shortfall to EM (same data, EM from k-means++
    restart 0) is no larger than the mean difference between two k-means++ restarts of EM, up to what the seeds
    resolve: the severity fails when its mean shortfall lies beyond the restart spread by more than
    t_{0.975, n-1} standard errors of the per-seed differences (:func:`paired_seed_test`), i.e. when the seeds
    resolve a shortfall larger than the spread. A mean beyond the bar by less than its standard error is
    not evidence against the claim (the quick run's severity 0.5 was beyond it by 0.0016 with s.e. 0.0068);
    a SEM stuck at a bad start (a shortfall of several spreads) is resolved and fails. With 1-2 seeds the
    mean alone is compared with the bar (the spread is unknown, or so poorly known that t_{0.975, 1} = 12.7
    standard errors would excuse any shortfall)."""
    f = fig3_final_differences(df)
    scale = float(np.mean(f["restart_pairs"]))
    n_seeds = df["seed"].nunique()
    parts, ok, details = [], [], {"em_restart_spread": scale,
                                  "em_restart_pair_quantiles": {q: float(np.quantile(f["restart_pairs"], q))
                                                                for q in (0.5, 0.9)},
                                  "n_restarts": int(df.loc[df["method"] == "EM", "restart"].nunique()),
                                  "n_seeds": int(n_seeds), "severity": {}}
    parts.append(f"EM restart spread (mean |EM_r - EM_r'| over {len(f['restart_pairs'])} pairs of k-means++ "
                 f"restarts): {scale:.4f} nats/point (median {np.median(f['restart_pairs']):.4f}, 90% "
                 f"{np.quantile(f['restart_pairs'], 0.9):.4f})")
    for s, dsem in sorted(f["sem"].items()):
        pt = paired_seed_test(dsem)
        m, se = pt["mean"], pt["se"]
        # with 1-2 seeds the spread is unknown or its t quantile (12.7 at 2 seeds) would excuse any shortfall
        margin = pt["threshold"] if pt["n"] >= 3 and np.isfinite(pt["threshold"]) else 0.0
        holds = bool(m + margin >= -scale)
        ok.append(holds)
        where = ("within the restart spread" if m >= -scale else
                 f"beyond the restart spread by {-scale - m:.4f}, less than t x s.e. {margin:.4f}: not resolved"
                 if holds else f"beyond the restart spread by more than t x s.e. {margin:.4f}: resolved")
        txt = (f"severity {s:g}: SEM - EM {m:+.4f} +- {se:.4f} (mean +- s.e. over {len(dsem)} seeds; SEM >= EM on "
               f"{int((dsem >= 0).sum())}/{len(dsem)}; {where})")
        det = {"sem_minus_em_mean": m, "sem_minus_em_se": se, "t_times_se": margin,
               "sem_ge_em_seeds": int((dsem >= 0).sum()),
               "sem_minus_em_per_seed": {int(k): float(v) for k, v in dsem.items()}, "holds": holds}
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
        measured="; ".join(parts), holds=all(ok),
        scale=_scale(profile, f"{settings['n_train']} train / {settings['n_test']} test points, "
                              f"{settings['n_iter']} iterations, {n_seeds} seeds, "
                              f"{details['n_restarts']} k-means++ restarts of EM per seed"),
        paper_value="curves only (App. A, Fig. 3); sizes as stated: 2-D, K = 30, 100,000 train / 1,000 test",
        details=details,
        note="holds = at every initialisation severity s (start means (1 - s) x k-means++ + s x a 1 x 1 box at the "
             "data mean; s = 0 is EM's own start, s = 1 the old 'bad' start), SEM's final test LL minus EM's "
             "(paired by seed: same data; EM from k-means++ restart 0), averaged over seeds, is not below minus the "
             "EM restart spread (the mean |difference| between the final test LLs of two k-means++ restarts of EM "
             "on the same data) by more than t_{0.975, n-1} standard errors of the per-seed differences (a "
             "shortfall beyond the spread that the seeds resolve fails; with 1-2 seeds: the mean >= minus the "
             "spread). Absolute nats per test point, so a rescaling of the data cannot move the verdict. "
             "EM from SEM's start (EM_same_start) is the paired control, not part of the verdict. Generating "
             "parameters, priors and starts are ours. Where it does not hold: the deciding experiment "
             "(scalable_bayes_papers.esca.study_fig3: 4x the iterations, missed true clusters) and its finding "
             "are in src/scalable_bayes_papers/esca/README.md, Fig. 3.",
    )


# ---------------------------------------------------------------------------- Fig. 5


FIG5_BAR = 0.03  # nats/word: the one-seed bar (used when a single seed ran)
FIG5_LEVEL = 0.05  # two-sided level of the paired t-tests over seeds (critical value t_{1 - level/2, n - 1})


def _max_gap(a: pd.Series, b: pd.Series) -> float:
    """Largest |a - b| over the recorded iterations after iteration 0 (both start from the same counts)."""
    return float((a - b).abs().iloc[1:].max())


def paired_seed_test(d: pd.Series, level: float = FIG5_LEVEL) -> dict:
    """Mean of per-seed paired differences ``d`` against its standard error over seeds.

    Parameters
    ----------
    d : pd.Series
        One paired difference per seed (same seed, same data, same start for both methods).
    level : float
        Two-sided level: the critical value is the Student-t quantile ``t_{1 - level/2, n - 1}``.

    Returns
    -------
    dict
        ``mean``, ``sd`` (over seeds, ddof 1), ``se`` (= sd / sqrt(n)), ``crit`` (the t quantile),
        ``threshold`` (= crit x se: a mean beyond it is a difference the seeds resolve), ``z`` (mean / se,
        +-inf when se = 0 and mean != 0) and ``n``. With fewer than 2 seeds sd, se, crit, threshold and z
        are NaN.
    """
    from scipy.stats import t as student_t

    d = pd.Series(d, dtype=float).dropna()
    n = len(d)
    mean = float(d.mean()) if n else float("nan")
    if n < 2:
        return {"mean": mean, "sd": float("nan"), "se": float("nan"), "crit": float("nan"),
                "threshold": float("nan"), "z": float("nan"), "n": n}
    sd = float(d.std(ddof=1))
    se = sd / np.sqrt(n)
    crit = float(student_t.ppf(1 - level / 2, n - 1))
    z = mean / se if se > 0 else (0.0 if mean == 0 else float(np.copysign(np.inf, mean)))
    return {"mean": mean, "sd": sd, "se": se, "crit": crit, "threshold": crit * se, "z": float(z), "n": n}


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

    Both parts are paired by seed (same data, same start) and measured against the seeds' own spread
    (:func:`paired_seed_test`, two-sided level FIG5_LEVEL):

    * "same perplexity per iteration": per seed, the mean over iterations (after 0) of LL(sparse) - LL(plain);
      their mean over seeds must lie within t_{0.975, n-1} standard errors of zero. A sampler that shifts the
      held-out LL by more than the seeds resolve (a wrong sampling distribution) fails; so does any shift when
      the paired differences do not vary at all. With one seed the spread is unknown and the old bar applies:
      the largest |gap| over iterations <= FIG5_BAR.
    * "reaches it sooner": per seed, log(time plain / time sparse) to the last iteration; the mean must exceed
      t_{0.975, n-1} standard errors above zero (3+ seeds); with 1-2 seeds every seed's sparse must be faster.
      A speed-up within the seed noise, or of the wrong sign, fails.
    """
    Ks = sorted(df["n_topics"].unique())
    seeds = sorted(df["seed"].unique())
    parts, details, ok = [], {}, []
    for K in Ks:
        d = df[df["n_topics"] == K]
        pdiff = fig5_paired_differences(d)
        gap_t, speed_t = paired_seed_test(pdiff["ll_gap"]), paired_seed_test(pdiff["log_speedup"])
        piv = d.groupby(["method", "iteration"])["heldout_ll"].mean().unstack(0)
        max_gap = _max_gap(piv["ESCA"], piv["ESCA_plain"])
        if gap_t["n"] >= 2:
            same = bool(abs(gap_t["mean"]) <= gap_t["threshold"])
            same_txt = (f"paired LL(sparse) - LL(plain), mean over iterations after 0: {gap_t['mean']:+.4f} nats/word "
                        f"(mean of {gap_t['n']} seeds; seed sd {gap_t['sd']:.4f}, bound t x s.e. "
                        f"{gap_t['threshold']:.4f}: {'within' if same else 'beyond'} the seed noise)")
        else:
            same = bool(max_gap <= FIG5_BAR)
            same_txt = f"max |LL(sparse) - LL(plain)| over iterations {max_gap:.4f} nats/word (one seed; bar {FIG5_BAR})"
        rs = np.exp(pdiff["log_speedup"])
        if speed_t["n"] >= 3:
            faster = bool(speed_t["mean"] > speed_t["threshold"])
        else:
            faster = bool(len(rs) > 0 and (rs > 1.0).all())
        last = d[d["iteration"] == d["iteration"].max()]
        t = last.groupby("method")["wall_time"].mean()
        speed = float(t["ESCA_plain"] / t["ESCA"])
        ok.append(same and faster)
        parts.append(f"K={K}: {same_txt}, plain/sparse fit time to the last iteration {speed:.2f}x (per seed "
                     f"{rs.min():.2f}-{rs.max():.2f}x; geometric mean {np.exp(speed_t['mean']):.2f}x"
                     + (f", {'beyond' if faster else 'within'} the seed noise" if speed_t["n"] >= 3 else "") + ")")
        details[int(K)] = {"ll_gap_mean": gap_t["mean"], "ll_gap_seed_sd": gap_t["sd"], "ll_gap_se": gap_t["se"],
                           "ll_gap_threshold": gap_t["threshold"], "t_crit": gap_t["crit"],
                           "ll_gap_per_seed": {int(k): float(v) for k, v in pdiff["ll_gap"].items()},
                           "max_abs_ll_diff_of_mean_curves": max_gap, "same_perplexity": same,
                           "speedup": speed, "log_speedup_mean": speed_t["mean"], "log_speedup_se": speed_t["se"],
                           "log_speedup_threshold": speed_t["threshold"], "faster": faster,
                           "speedup_per_seed": {int(k): float(v) for k, v in rs.items()},
                           "n_seeds": len(seeds), "level": FIG5_LEVEL}
    return Claim(
        id="ESCA-Fig5", paper="esca",
        claim="Sparse + alias sampling gives the same perplexity per iteration as plain SCA and reaches it sooner "
              "in wall time (App. G, Fig. 5 plots perplexity over time; the paper gives no speed-up factor).",
        measured="; ".join(parts), holds=all(ok),
        scale=_scale(profile, f"{df['train_corpus'].iloc[0]} ({int(df['n_tokens'].iloc[0])} tokens), "
                              f"{int(df['iteration'].max())} iterations, {len(seeds)} seeds"),
        details=details,
        note="holds = at every K, paired by seed (same data, same start): (1) the mean over seeds of the per-seed "
             "mean gap LL(sparse) - LL(plain) over the recorded iterations after 0 lies within t_{0.975, n-1} "
             "standard errors (seed sd / sqrt(n)) of zero (with one seed: max |gap| <= "
             f"{FIG5_BAR} nats/word), and (2) the mean over seeds of log(plain / sparse wall time to the last "
             "iteration: fit only, both engines on the rule's threads, same iterations, hence the same perplexity) "
             "exceeds t_{0.975, n-1} standard errors (with 1-2 seeds: sparse faster on every seed). The paper's "
             "Fig. 5 shows curves and no factor, so no size of the speed-up is claimed or tested (the catalogue's "
             "'much faster' is dropped); the measured ratio is reported.",
    )


# ---------------------------------------------------------------------------- Fig. 6


def check_fig6(df: pd.DataFrame, settings, profile) -> Claim:
    """SCA's final perplexity close to CGS's at every (K, beta); ``df``: the Fig. 6 run tables."""
    pairs = list(dict.fromkeys(zip(df["train_corpus"], df["test_corpus"])))
    rel_tol = float(settings.get("rel_tol", 0.05))
    parts, ok, details = [], [], {}
    for tr, te in pairs:
        d = df[(df["train_corpus"] == tr) & (df["test_corpus"] == te)]
        last_it = d["iteration"].max()
        fin = d[d["iteration"] == last_it].assign(p=lambda x: np.exp(-x["heldout_ll"]))
        # SCA's final perplexity within rel_tol of CGS's at every (K, beta)
        piv = fin.groupby(["n_topics", "beta", "method"])["p"].mean().unstack("method")
        sca = "ESCA_plain" if "ESCA_plain" in piv else "ESCA"
        rel = ((piv[sca] - piv["CGS"]) / piv["CGS"]) if "CGS" in piv else pd.Series(dtype=float)
        worst = float(rel.max()) if len(rel) else np.nan
        ok.append(bool(worst <= rel_tol))
        parts.append(f"train {tr}/test {te}: SCA vs CGS final perplexity, worst relative excess {worst:+.3f} "
                     f"over {len(rel)} (K, beta) settings")
        details[f"{tr}->{te}"] = {f"K={k},beta={b}": v for (k, b), v in rel.items()}
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
        measured="; ".join(parts), holds=all(ok),
        scale=_scale(profile, f"{int(last_it)} iterations (paper 75), Reuters-21578 stand-in for RCV1, "
                              f"Wikipedia sample; {df['seed'].nunique()} seeds"),
        details=details,
        note=f"holds = SCA's final perplexity at most {rel_tol:.0%} above CGS's at every (K, beta) of the grid. "
             "Test documents of the other corpus are mapped into the training vocabulary (OOV tokens dropped). "
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
    thread by CPU time, more by wall time (tables.verdict_clock). Tokens/s of every engine are reported."""
    parts, ok, details = [], [], {}
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
                "wall_to_target_s": float(r.wall_to_target_s)}
        if np.isfinite(target):
            txt += (f"; time to held-out LL {target:.4f} (CGS final - {quality_tol}): "
                    + ", ".join(f"{r.method} {r.time_to_target_s:.2f}s ({int(r.threads)} thr, "
                                f"{r.target_clock.replace('_time', '')}; final {r.heldout_ll:.4f} after {int(r.iterations)} it)"
                                for r in d.sort_values(["method", "threads"]).itertuples()))
            esca = d[d["method"] == "ESCA"].set_index("threads")
            peer = d[d["method"] == PEER].set_index("threads")
            for th in sorted(set(esca.index) & set(peer.index)):
                te, tp = float(esca.loc[th, "time_to_target_s"]), float(peer.loc[th, "time_to_target_s"])
                ratio = tp / te if te > 0 else float("nan")
                ok.append(bool(np.isfinite(te) and te < tp))
                tok = float(esca.loc[th, "tokens_per_s"] / peer.loc[th, "tokens_per_s"])
                txt += (f"; {th} thr: {PEER} / ESCA time to target {ratio:.2f}x (tokens/s {tok:.2f}x; "
                        f"paper's order of magnitude: {'reached' if ratio >= 10 else 'not reached'} at this scale)")
                det[f"peer_over_esca_time_to_target_{th}thr"] = ratio
                det[f"esca_over_peer_tokens_per_s_{th}thr"] = tok
        parts.append(txt)
        details[c] = det
    return Claim(
        id="ESCA-Throughput", paper="esca",
        claim="ESCA is over an order of magnitude faster than the fastest current approaches (570M tokens/s on 4 x 36 "
              "threads vs 112M for F+LDA and 60M for LightLDA) with predictive power competitive with CGS. "
              "Tested here: at equal held-out quality ESCA reaches the target before the fastest peer the "
              "pipeline runs (tomotopy), on 1 and 2 threads.",
        measured="; ".join(parts), holds=all(ok) if ok else None,
        scale=_scale(profile, "one shared 2-core machine (paper: 4 nodes x 36 threads); MPI ranks run on the same machine"),
        paper_value="570M tokens/s (4 x 36 threads, 'Large' corpus, ~171 x 10^9 tokens) vs 112M (F+LDA) and 60M "
                    "(LightLDA): 5.1x and 9.5x by the paper's own numbers",
        details=details,
        note="holds = at every thread count both ran, ESCA's mean fit time to the target held-out LL (CGS's final "
             f"- {quality_tol} nats/word, interpolated between evaluations) is below tomotopy's; one-thread fits are "
             "timed by process CPU time, two-thread fits by wall time (details give both). 'Over an order of "
             "magnitude' on 4 x 36 threads against F+LDA / LightLDA: not testable at this scale (neither peer runs "
             "here, 2 cores, ~10^6 tokens); the measured ratios are reported, and the paper's own numbers give "
             "5.1x over F+LDA. tomotopy (C++ CGS with SIMD kernels) is run by the pipeline itself, a pinned "
             "dependency, with hyper-parameter optimisation off (peers.py); benchmarks/README_lda.md has the "
             "paired speed ratios on more corpora. Where time to the target splits into iterations (the "
             "algorithm) and time per iteration (the implementation and the machine's load), and what the "
             "repeated pairs found: the deciding experiment (scalable_bayes_papers.esca.study_throughput) in "
             "src/scalable_bayes_papers/esca/README.md, Throughput.",
    )


# ---------------------------------------------------------------------------- TabU1, TabU2, TabU3


def check_tabu1(t: pd.DataFrame, profile) -> Claim:
    """Synchronous SCA's stationary distribution is uniform, sequential Gibbs' is p; ``t``: tables.tabu1()."""
    uniform = np.allclose(t["synchronous_sca_stationary"], 0.25, atol=1e-9)
    seq_ok = np.allclose(t["sequential_gibbs_stationary"], t["p_target"], atol=1e-9)
    return Claim(
        id="ESCA-TabU1", paper="esca",
        claim="Under synchronous SCA updates of the two-spin Ising model all four states are equally likely "
              "(q propto cosh(x1 x2)), unlike the target p propto exp(x1 x2).",
        measured=f"synchronous stationary {np.round(t['synchronous_sca_stationary'].to_numpy(), 4).tolist()}; "
                 f"sequential Gibbs stationary {np.round(t['sequential_gibbs_stationary'].to_numpy(), 4).tolist()}; "
                 f"target {np.round(t['p_target'].to_numpy(), 4).tolist()}",
        holds=bool(uniform and seq_ok), scale=_scale(profile, "exact (4 x 4 transition matrices)"),
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
