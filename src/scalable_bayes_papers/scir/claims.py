"""Claims of the SCIR paper (Baker et al. 2018), checked on the run tables.

Per item: the paper's claim in one sentence (:data:`CLAIMS`) and a pure ``check_<item>(...) ->``
:class:`~scalable_bayes.reporting.Claim` (no I/O, no plotting). The thresholds that turn the paper's words
into a test are in each check's docstring and the claim's ``note``; README.md beside this file gives the
reasons.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scalable_bayes.reporting import Claim

PAPER = "scir"

CLAIMS = {
    "Fig1": "On the sparse Dirichlet posterior (Sec. 1.3) SGRLD rarely proposes small values of the zero-count "
            "component omega_5, while SCIR's samples match the exact sampler's.",
    "Fig2": "(a) On the sparse target SCIR has a much lower KS distance to the posterior than SGRLD at every minibatch "
            "size and approaches the exact sampler as the minibatch grows; (b) on the dense target the two are similar.",
    "Fig3a": "LDA on Wikipedia: SCIR and SGRLD converge alike at first, then SCIR keeps descending where SGRLD levels "
             "off: SCIR's final held-out perplexity is lower.",
    "SFigA": "LDA: both SG samplers are quite competitive with the (non-scalable) collapsed Gibbs sampler.",
    "Fig3b": "DP mixture on the Microsoft web data: SCIR converges to a better test log-predictive than SGRLD, with "
             "lower variance over seeds; SGRLD proposes many more clusters than needed.",
    "SFigB": "DP mixture: the exact Gibbs slice sampler is clearly better than both SG methods, which get stuck; SCIR "
             "still beats SGRLD.",
}


def _decades(x) -> float:
    return float(np.median(np.log10(np.maximum(np.asarray(x, dtype=float), 1e-300))))


# ------------------------------------------------------------------ Fig. 1: boxplots of omega_5 (Sec. 1.3, 2.2)
def fig1_scale(settings: dict, profile: str, n_seeds: int) -> str:
    return (f"{profile}: the paper's setting (d = 10, N = 1,000, alpha = 0.1, minibatch {settings['fig1_batch']}, "
            f"{settings['n_iter']} iterations after {settings['burnin']} burn-in); step sizes tuned on a grid "
            f"(seed {settings['tune']['seed']}); {n_seeds} seed(s)")


FIG1_LEVEL = 0.05  # two-sided level of the test of SCIR's median against the exact sampler's


def median_bias_test(med: pd.DataFrame, method: str = "SCIR", reference: str = "Exact",
                     level: float = FIG1_LEVEL) -> dict:
    """Bias of ``method``'s median log10 omega_5 against the exact sampler's, in the seeds' own spread.

    Welch's two-sample test on the per-seed medians: each seed's median is one replicate of the estimate, so
    the spread over seeds measures each sampler's own error of it (1,000 i.i.d. draws for the exact sampler;
    1,000 autocorrelated draws for an SG chain, whose median varies more between seeds).

    Parameters
    ----------
    med : pd.DataFrame
        Median log10 omega_5 per seed (rows) and method (columns).
    method, reference : str
        The tested sampler and the exact one.
    level : float
        Two-sided level: the bias is resolved when it exceeds ``t_{1 - level/2, df} x se`` (Welch-Satterthwaite df).

    Returns
    -------
    dict
        ``bias`` (mean over seeds of method's median minus reference's, decades), ``sd_method``, ``sd_exact`` (their
        sd over seeds), ``se`` (sqrt(sd_method^2 / n_method + sd_exact^2 / n_exact)), ``df``, ``crit``,
        ``threshold`` (= crit x se) and ``holds`` (|bias| <= threshold; None with fewer than 2 seeds).
    """
    from scipy.stats import t as student_t

    x, y = med[method].dropna(), med[reference].dropna()
    nx, ny = len(x), len(y)
    bias = float(x.mean() - y.mean())
    if nx < 2 or ny < 2:
        return {"bias": bias, "sd_method": float("nan"), "sd_exact": float("nan"), "se": float("nan"),
                "df": float("nan"), "crit": float("nan"), "threshold": float("nan"), "holds": None}
    vx, vy = float(x.var(ddof=1)) / nx, float(y.var(ddof=1)) / ny
    se = float(np.sqrt(vx + vy))
    df = (vx + vy) ** 2 / (vx ** 2 / (nx - 1) + vy ** 2 / (ny - 1)) if se > 0 else float(nx + ny - 2)
    crit = float(student_t.ppf(1 - level / 2, df))
    return {"bias": bias, "sd_method": float(np.sqrt(vx * nx)), "sd_exact": float(np.sqrt(vy * ny)), "se": se,
            "df": float(df), "crit": crit, "threshold": crit * se, "holds": bool(abs(bias) <= crit * se)}


def check_fig1(samples: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """SCIR's median log10 omega_5 matches the exact sampler's within the seeds' spread ("SCIR matches Exact";
    :func:`median_bias_test`: the mean over seeds of the per-seed median, SCIR minus exact, within
    t_{0.975, Welch df} standard errors built from both samplers' own seed-to-seed spread), and fewer than 5% of
    SGRLD's draws below the exact sampler's median ("SGRLD rarely proposes small values"; half of the exact
    draws lie there). A precise sampler biased by a fraction of a decade fails; one seed's median of 1,000
    autocorrelated SCIR draws moves by most of a decade from seed to seed at the tuned step size, so the
    resolution of the first part is set by SCIR's own spread and the number of seeds."""
    s = samples[samples["target"] == "sparse"]
    med = s.groupby(["seed", "method"])["omega"].apply(_decades).unstack()
    pooled = s.groupby("method")["omega"].apply(_decades)
    ex_med = float(np.median(s.loc[s["method"] == "Exact", "omega"]))
    frac = float(np.mean(s.loc[s["method"] == "SGRLD", "omega"].to_numpy() < ex_med))
    gap_sgrld = pooled["SGRLD"] - pooled["Exact"]
    bt = median_bias_test(med)
    sgrld_rare = bool(frac < 0.05)
    holds = None if bt["holds"] is None else bool(bt["holds"] and sgrld_rare)
    where = {None: "spread unknown with one seed", True: "within the seeds' spread",
             False: "beyond the seeds' spread"}[bt["holds"]]
    measured = (f"median log10 omega_5 over {len(med)} seeds' draws: exact {pooled['Exact']:.2f}, SCIR {pooled['SCIR']:.2f}, "
                f"SGRLD {pooled['SGRLD']:.2f}; SCIR - exact, mean of per-seed medians, {bt['bias']:+.2f} decades "
                f"(seed sd SCIR {bt['sd_method']:.2f}, exact {bt['sd_exact']:.2f}; bound t x s.e. {bt['threshold']:.2f}: "
                f"{where}); SGRLD draws below the exact median: "
                f"{100 * frac:.1f}% (exact: 50%); SGRLD's median {gap_sgrld:.2f} decades above the exact one")
    note = ("Test, on the per-seed medians of log10 omega_5: |mean over seeds of SCIR's median - the exact sampler's| "
            "<= t_{0.975, df} x sqrt(sd_SCIR^2 / n + sd_exact^2 / n) (Welch; the sd are each sampler's own "
            "seed-to-seed spread of its median), and < 5% of SGRLD's draws (all seeds) below the exact median. "
            "Needs 2+ seeds. SCIR's chain is autocorrelated (omega_5 decorrelates over ~1/h steps): its median "
            "varies several times more between seeds than the exact sampler's, which sets the bias this run can "
            "resolve. The stricter reading 'SGRLD's median >= 2 decades above' depends on SGRLD's step size: its "
            "gap shrinks as h does, and the KS-tuned h (1e-4) is the smallest useful one on the grid.")
    return Claim(id="SCIR-Fig1", paper=PAPER, claim=CLAIMS["Fig1"], measured=measured, holds=holds,
                 scale=fig1_scale(settings, profile, len(med)), paper_value="boxplot (log scale): SCIR ~ Exact, SGRLD "
                 "orders of magnitude above",
                 details={"median_log10_pooled": {k: round(float(v), 3) for k, v in pooled.items()},
                          "median_log10_per_seed": {str(k): v for k, v in med.round(3).to_dict(orient="index").items()},
                          "scir_median_bias": {k: (round(v, 4) if isinstance(v, float) else v) for k, v in bt.items()},
                          "sgrld_fraction_below_exact_median": round(frac, 4),
                          "sgrld_median_gap_decades": round(float(gap_sgrld), 3)},
                 note=note)


# ------------------------------------------------------------------ Fig. 2: KS distance vs minibatch size (Sec. 2.2)
def _ks_by_size(ks: pd.DataFrame, target: str) -> pd.DataFrame:
    k = ks[(ks["target"] == target) & ks["method"].isin(["SCIR", "SGRLD"])]
    return k.groupby(["proportion", "method"])["ks_mean"].mean().unstack()


FIG2_LEVEL = 0.05  # two-sided level of the test of SCIR's KS drop over minibatch sizes


def ks_decrease_test(ks: pd.DataFrame, level: float = FIG2_LEVEL) -> dict:
    """SCIR's KS distance on the sparse target at the smallest minibatch size minus at the largest, per seed.

    Each seed ran every size, so the drop is paired by seed; it is resolved when its mean over seeds exceeds
    ``t_{1 - level/2, n-1} x sd / sqrt(n)`` (sd over seeds of the per-seed drop). With one seed the spread is
    unknown and the drop only has to be positive.

    Returns
    -------
    dict
        ``mean``, ``sd``, ``se``, ``crit``, ``threshold`` (= crit x se; 0 with one seed), ``n`` and ``holds``
        (mean > threshold).
    """
    from scipy.stats import t as student_t

    k = ks[(ks["target"] == "sparse") & (ks["method"] == "SCIR")]
    per = k.pivot_table(index="seed", columns="proportion", values="ks_mean")
    d = (per[per.columns.min()] - per[per.columns.max()]).dropna()
    n = len(d)
    mean = float(d.mean()) if n else float("nan")
    if n < 2:
        return {"mean": mean, "sd": float("nan"), "se": float("nan"), "crit": float("nan"), "threshold": 0.0,
                "n": n, "holds": bool(mean > 0)}
    sd = float(d.std(ddof=1))
    se = sd / np.sqrt(n)
    crit = float(student_t.ppf(1 - level / 2, n - 1))
    return {"mean": mean, "sd": sd, "se": se, "crit": crit, "threshold": crit * se, "n": n,
            "holds": bool(mean > crit * se)}


def check_fig2(ks: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """(a) sparse, means over seeds: KS_SCIR < KS_SGRLD at every size, KS_SGRLD / KS_SCIR >= 2 at sizes >= 0.05,
    and SCIR's KS falls from the smallest size to the largest by more than the seeds resolve ("approaches the
    exact sampler": :func:`ks_decrease_test`, the per-seed drop against t_{0.975, n-1} standard errors; a SCIR
    whose KS does not move with the minibatch, whose last mean lands below its first by noise, fails);
    (b) dense: the two within a factor 2 of each other at every size ("similar")."""
    sp, de = _ks_by_size(ks, "sparse"), _ks_by_size(ks, "dense")
    ex = ks[ks["method"] == "Exact"].groupby("target")["ks_mean"].mean()
    ratio = sp["SGRLD"] / sp["SCIR"]
    big = ratio[ratio.index >= 0.05]
    a_lower = bool((sp["SCIR"] < sp["SGRLD"]).all())
    a_ratio = bool((big >= 2).all()) if len(big) else None
    conv = ks_decrease_test(ks)
    a_conv = conv["holds"]
    dense_ratio = np.maximum(de["SGRLD"] / de["SCIR"], de["SCIR"] / de["SGRLD"])
    b_similar = bool((dense_ratio <= 2).all())
    parts = [a_lower, a_conv, b_similar] + ([a_ratio] if a_ratio is not None else [])
    holds = all(parts)
    n_seeds = ks["seed"].nunique()
    measured = (f"sparse: KS SCIR {sp['SCIR'].iloc[0]:.3f} -> {sp['SCIR'].iloc[-1]:.3f} (sizes {sp.index[0]:g} -> "
                f"{sp.index[-1]:g}; per-seed drop {conv['mean']:+.3f}, bound t x s.e. {conv['threshold']:.3f}), "
                f"SGRLD {sp['SGRLD'].min():.3f}-{sp['SGRLD'].max():.3f}, SGRLD/SCIR "
                f"{ratio.min():.1f}-{ratio.max():.1f}x (exact sampler {ex.get('sparse', np.nan):.3f}); dense: "
                f"SCIR {de['SCIR'].min():.3f}-{de['SCIR'].max():.3f}, SGRLD {de['SGRLD'].min():.3f}-"
                f"{de['SGRLD'].max():.3f}, largest ratio {dense_ratio.max():.2f}x")
    scale = (f"{profile}: the paper's setting (d = 10, N = 1,000, {settings['n_iter']} iterations after "
             f"{settings['burnin']} burn-in, minibatch proportions {min(settings['proportions']):g}-"
             f"{max(settings['proportions']):g}); one step size per method and target tuned at proportion "
             f"{settings['tune']['proportion']:g} (the paper's tuning is in its supplement); {n_seeds} seed(s)")
    return Claim(id="SCIR-Fig2", paper=PAPER, claim=CLAIMS["Fig2"], measured=measured, holds=holds, scale=scale,
                 paper_value="curves only (no numbers in the text)",
                 details={"sparse": {str(p): r for p, r in sp.round(4).to_dict(orient="index").items()},
                          "dense": {str(p): r for p, r in de.round(4).to_dict(orient="index").items()},
                          "exact": ex.round(4).to_dict(),
                          "scir_ks_drop": {k: (round(v, 5) if isinstance(v, float) else v) for k, v in conv.items()},
                          "verdicts": {"sparse_scir_lower_everywhere": a_lower, "sparse_ratio_ge_2_at_ge_0.05": a_ratio,
                                       "sparse_scir_improves_with_size": a_conv, "dense_within_2x": b_similar}},
                 note="KS distance: mean over the 10 components of sup |F^ - F| against the exact Beta marginal "
                      "(the paper's definition is in its supplement, not available). 'Approaches the exact sampler': "
                      "SCIR's sparse KS at the smallest size minus at the largest, paired by seed, above t_{0.975, n-1} "
                      "standard errors of the per-seed drops (with one seed: positive).")


# ------------------------------------------------------------------ Fig. 3a / SFigA: LDA (Sec. 4.1)
def _final(trace: pd.DataFrame, col: str, n_last: int = 3) -> pd.Series:
    """Per (method, seed): the mean of ``col`` over the last ``n_last`` evaluations."""
    return trace.sort_values("iteration").groupby(["method", "seed"])[col].apply(lambda s: s.iloc[-n_last:].mean())


def lda_scale(trace: pd.DataFrame, settings: dict, profile: str) -> str:
    r = trace.iloc[0]
    return (f"{profile}: {int(r['n_train_docs']):,} training / {int(r['n_test_docs']):,} held-out Wikipedia documents "
            f"(paper: a stream of scraped articles, 1,000 held out), {int(r['n_words']):,}-word vocabulary (paper ~8,000), "
            f"K = {settings['n_topics']}, minibatch {settings['batch_size']}, {settings['n_iter']} iterations "
            f"(paper 800), {trace['seed'].nunique()} seed(s); K, alpha, beta and the step schedules are ours "
            f"(paper: in its supplement)")


def check_fig3a(trace: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """Final perplexity (mean of the last 3 evaluations per seed): SCIR's mean over seeds below SGRLD's by more than
    the pooled sd over seeds ("SCIR's final perplexity lower, beyond the seed spread")."""
    f = _final(trace[trace["method"].isin(["SCIR", "SGRLD"])], "perplexity")
    sc_, sg = f.loc["SCIR"], f.loc["SGRLD"]
    pooled = float(np.sqrt((sc_.var(ddof=1) + sg.var(ddof=1)) / 2)) if len(sc_) > 1 and len(sg) > 1 else float("nan")
    diff = float(sg.mean() - sc_.mean())
    holds = bool(diff > pooled) if np.isfinite(pooled) else None
    measured = (f"final perplexity SCIR {sc_.mean():.1f} (sd {sc_.std(ddof=1) if len(sc_) > 1 else float('nan'):.1f}), "
                f"SGRLD {sg.mean():.1f} (sd {sg.std(ddof=1) if len(sg) > 1 else float('nan'):.1f}); SGRLD - SCIR = "
                f"{diff:.1f}, pooled sd {pooled:.1f}")
    note = ("Test: mean over seeds of the final perplexity (last 3 evaluations), SGRLD - SCIR > pooled sd over seeds."
            + ("" if holds is not None else " Not checked: needs at least 2 seeds.")
            + " Deciding experiment (python -m scalable_bayes_papers.scir.study; README.md of the paper folder, "
              "'Fig. 3a: why SCIR does not end below SGRLD here', which records its numbers): the paper's mechanism "
              "reproduces (SGRLD inflates small topic-word entries, SCIR does not), its consequence does not: tuned "
              "SGRLD ends below SCIR at the paper's length of 800 iterations on Wikipedia and on synthetic data from "
              "known sparse topics, and the gap grows with the vocabulary. So neither our data nor our code explains "
              "the failure; the paper's claim or its unreported setup (supplement) does.")
    return Claim(id="SCIR-Fig3a", paper=PAPER, claim=CLAIMS["Fig3a"], measured=measured, holds=holds,
                 scale=lda_scale(trace, settings, profile), paper_value="curves only (no numbers in the text)",
                 details={"final_perplexity": {f"{m}/{s}": round(float(v), 2) for (m, s), v in f.items()}}, note=note)


def check_sfiga(trace: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """"Quite competitive" with collapsed Gibbs: the better SG method's final perplexity (mean over seeds) within
    10% of CGS's final perplexity (CGS run for ``cgs_iter`` full sweeps)."""
    f = _final(trace, "perplexity").groupby(level="method").mean()
    if "CGS" not in f.index:
        return Claim(id="SCIR-SFigA", paper=PAPER, claim=CLAIMS["SFigA"], measured="no CGS run", holds=None,
                     scale=lda_scale(trace, settings, profile), note="Not checked: CGS not among the runs.")
    best_sg = f.drop("CGS").min()
    gap = float(best_sg / f["CGS"] - 1)
    measured = ", ".join(f"{m} {v:.1f}" for m, v in f.items()) + f"; best SG method {100 * gap:+.1f}% vs CGS"
    return Claim(id="SCIR-SFigA", paper=PAPER, claim=CLAIMS["SFigA"], measured=measured, holds=bool(gap <= 0.10),
                 scale=lda_scale(trace, settings, profile) + f"; CGS {settings['cgs_iter']} sweeps of the training documents",
                 paper_value="supplement (not available)",
                 details={"final_perplexity": {m: round(float(v), 2) for m, v in f.items()}, "gap": round(gap, 4)},
                 note="Test: the better SG method's final perplexity at most 10% above CGS's (our reading of 'quite "
                      "competitive'; the supplement's figure is not available).")


# ------------------------------------------------------------------ Fig. 3b / SFigB: DP mixture (Sec. 4.2)
def dp_scale(trace: pd.DataFrame, settings: dict, profile: str) -> str:
    r = trace.iloc[0]
    return (f"{profile}: {int(r['n_train_users']):,} training / {int(r['n_test_users']):,} test users of the UCI "
            f"anonymous Microsoft web data (paper: ~30,000 users), minibatch {settings['batch_size']} users (paper 1,000), "
            f"{settings['n_iter']} iterations (paper 1,000), {trace['seed'].nunique()} seed(s); base Dir(a), the alpha "
            f"prior and the step sizes are ours (paper: in its supplement)")


def fig3b_cluster_gap(nc: pd.Series) -> dict:
    """SGRLD's final number of occupied clusters minus SCIR's, against the seeds' spread.

    Parameters
    ----------
    nc : pd.Series
        Final occupied clusters indexed by (method, seed), as :func:`_final` returns them.

    Returns
    -------
    dict
        ``diff`` (mean over seeds of SGRLD minus mean of SCIR), ``pooled_sd`` (sqrt of the mean of the two
        methods' variances over seeds, ddof 1; NaN with fewer than 2 seeds of either), ``paired`` (the
        per-seed SGRLD - SCIR of the seeds both ran) and ``holds``: diff > pooled_sd ("many more clusters":
        SGRLD above SCIR by more than the seeds' spread), None when the spread is unknown.
    """
    sc_, sg = nc.loc["SCIR"].astype(float), nc.loc["SGRLD"].astype(float)
    n = min(len(sc_), len(sg))
    pooled = float(np.sqrt((sc_.var(ddof=1) + sg.var(ddof=1)) / 2)) if n > 1 else float("nan")
    diff = float(sg.mean() - sc_.mean())
    paired = (sg - sc_).dropna()
    return {"diff": diff, "pooled_sd": pooled, "paired": paired,
            "holds": bool(diff > pooled) if np.isfinite(pooled) else None}


def check_fig3b(trace: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """Final test log-predictive (mean of the last 3 evaluations per seed, higher is better): SCIR's mean over seeds
    above SGRLD's; SCIR's sd over seeds below SGRLD's; SGRLD's final number of occupied clusters (mean over seeds)
    above SCIR's by more than the pooled sd over seeds (:func:`fig3b_cluster_gap`; "many more clusters than
    needed": a difference the seeds resolve, in the paper's direction, as Fig. 3a's perplexity test)."""
    t = trace[trace["method"].isin(["SCIR", "SGRLD"])]
    lp = _final(t, "log_predictive")
    nc = _final(t, "n_clusters", 1)
    sc_, sg = lp.loc["SCIR"], lp.loc["SGRLD"]
    better = bool(sc_.mean() > sg.mean())
    n_seeds = min(len(sc_), len(sg))
    steadier = bool(sc_.std(ddof=1) < sg.std(ddof=1)) if n_seeds > 1 else None
    cl = fig3b_cluster_gap(nc)
    more_clusters = cl["holds"]
    parts = [better] + [p for p in (steadier, more_clusters) if p is not None]
    measured = (f"final test log-predictive per user SCIR {sc_.mean():.4f} (sd {sc_.std(ddof=1) if n_seeds > 1 else float('nan'):.4f}), "
                f"SGRLD {sg.mean():.4f} (sd {sg.std(ddof=1) if n_seeds > 1 else float('nan'):.4f}); occupied clusters SCIR "
                f"{nc.loc['SCIR'].mean():.1f}, SGRLD {nc.loc['SGRLD'].mean():.1f}: SGRLD - SCIR = {cl['diff']:+.1f}, "
                f"pooled sd over seeds {cl['pooled_sd']:.1f} (per seed {', '.join(f'{v:+.0f}' for v in cl['paired'])})")
    return Claim(id="SCIR-Fig3b", paper=PAPER, claim=CLAIMS["Fig3b"], measured=measured, holds=all(parts),
                 scale=dp_scale(trace, settings, profile), paper_value="curves only (no numbers in the text)",
                 details={"scir_better": better, "scir_smaller_sd": steadier, "sgrld_more_clusters": more_clusters,
                          "cluster_gap": {"sgrld_minus_scir": cl["diff"], "pooled_sd": cl["pooled_sd"],
                                          "threshold": cl["pooled_sd"],
                                          "per_seed": {int(k): float(v) for k, v in cl["paired"].items()}},
                          "final_log_predictive": {f"{m}/{s}": round(float(v), 5) for (m, s), v in lp.items()},
                          "final_clusters": {f"{m}/{s}": int(v) for (m, s), v in nc.items()}},
                 note="Test: three parts, all must hold: mean final log-predictive SCIR > SGRLD, sd over seeds SCIR < "
                      "SGRLD (needs 2+ seeds), and mean final occupied clusters SGRLD - SCIR > the pooled sd over seeds "
                      "of the two methods' cluster counts (needs 2+ seeds: a difference within the seeds' spread, or "
                      "of the wrong sign, fails). The paper's 'lower log predictive test score' is read as a loss; "
                      "here the log-predictive itself is plotted (higher is better).")


def check_sfigb(trace: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """Final test log-predictive (mean of the last 3 evaluations per seed): Gibbs's mean over seeds above SCIR's and
    SCIR's above SGRLD's, each by more than the two methods' pooled sd over seeds (as Fig. 3a: "clearly better" and
    "still beats" read as differences the seeds resolve; an ordering of the means within the seeds' spread, as
    an SGRLD stuck exactly where SCIR is would give, fails). Needs 2+ seeds of each method (None otherwise)."""
    per = _final(trace, "log_predictive")
    f = per.groupby(level="method").mean()
    need = {"Gibbs", "SCIR", "SGRLD"}
    if not need <= set(f.index):
        return Claim(id="SCIR-SFigB", paper=PAPER, claim=CLAIMS["SFigB"], measured=f"methods run: {sorted(f.index)}",
                     holds=None, scale=dp_scale(trace, settings, profile), note="Not checked: a method is missing.")
    sd = per.groupby(level="method").std(ddof=1)
    gaps = {}
    for hi, lo in (("Gibbs", "SCIR"), ("SCIR", "SGRLD")):
        pooled = float(np.sqrt((sd[hi] ** 2 + sd[lo] ** 2) / 2))
        diff = float(f[hi] - f[lo])
        gaps[f"{hi} - {lo}"] = {"diff": diff, "pooled_sd": pooled,
                                "holds": bool(diff > pooled) if np.isfinite(pooled) else None}
    verdicts = [g["holds"] for g in gaps.values()]
    holds = None if any(v is None for v in verdicts) else all(verdicts)
    measured = (", ".join(f"{m} {v:.4f}" for m, v in f.sort_values(ascending=False).items()) + "; "
                + ", ".join(f"{k} = {g['diff']:+.4f} (pooled sd over seeds {g['pooled_sd']:.4f})" for k, g in gaps.items()))
    return Claim(id="SCIR-SFigB", paper=PAPER, claim=CLAIMS["SFigB"], measured=measured, holds=holds,
                 scale=dp_scale(trace, settings, profile) + f"; exact Gibbs {settings['gibbs_iter']} sweeps of all users",
                 paper_value="supplement (not available)",
                 details={"final_log_predictive": {m: round(float(v), 5) for m, v in f.items()},
                          "sd_over_seeds": {m: round(float(v), 5) for m, v in sd.items()},
                          "gaps": {k: {kk: (round(vv, 5) if isinstance(vv, float) else vv) for kk, vv in g.items()}
                                   for k, g in gaps.items()}},
                 note="Test: mean over seeds of the final test log-predictive (last 3 evaluations), Gibbs - SCIR and "
                      "SCIR - SGRLD each > the pooled sd over seeds of the two methods' final values (needs 2+ seeds: "
                      "with one the spread is unknown and the claim is not checked).")
