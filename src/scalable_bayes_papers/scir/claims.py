"""Claims of the SCIR paper (Baker et al. 2018), checked on the run tables.

Per item: the paper's claim in one sentence (:data:`CLAIMS`) and a pure ``check_<item>(...) ->``
:class:`~scalable_bayes.reporting.Claim` (no I/O, no plotting). The thresholds that turn the paper's words
into a test are in each check's docstring and the claim's ``note``; README.md beside this file gives the
reasons.

Verdicts. Every checked claim carries :class:`~scalable_bayes.reporting.Evidence`, one per comparison it
makes: the margin (effect minus threshold, positive supports the claim) and its sd between independent
runs, measured from the item's seeds (every seed ran every method, so comparisons are paired by seed):
a mean of per-seed differences has sd = the differences' sd / sqrt(n) (:func:`paired_gap`); a statistic
that is not a mean (a ratio of means, a difference of sds, a minimum over methods) has the leave-one-seed-out
jackknife sd (:func:`jackknife_sd`). Either sd is estimated from the ``n`` seeds and carries ``n - 1`` degrees of
freedom (the jackknife's too), so a margin must clear Student's t band at the coverage of two normal sds
(:func:`scalable_bayes.reporting.band_factor`: 2.87 sds with 5 seeds, 13.97 with 2) rather than 2 sds. With one
seed the spread is unknown and the claim is not checked.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scalable_bayes.reporting import Claim, Evidence, clearance

from . import data

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

#: what a claim checked on one seed says instead of a verdict
ONE_SEED = "Not checked: needs 2+ seeds (the run-to-run spread of every comparison is measured between seeds)."
#: how a margin is weighed against its sd, for the claims' notes
BAND = ("against its band between runs: Student's t at the coverage of 2 normal sds times the sd measured from the "
        "n seeds (n - 1 df; 2.87 sds at 5 seeds)")


def _decades(x) -> float:
    return float(np.median(np.log10(np.maximum(np.asarray(x, dtype=float), 1e-300))))


# ------------------------------------------------------------------ the spread between seeds
def paired_gap(hi: pd.Series, lo: pd.Series) -> dict:
    """Mean over seeds of ``hi - lo``, paired by seed, and its sd between independent runs.

    Parameters
    ----------
    hi, lo : pd.Series
        One value per seed (index: seed) of the two compared quantities.

    Returns
    -------
    dict
        ``mean`` (mean of the per-seed differences over the seeds both have), ``sd`` (their sd, ddof 1, /
        sqrt(n); NaN with fewer than 2 seeds), ``n`` and ``per_seed`` (the differences).
    """
    d = (hi.astype(float) - lo.astype(float)).dropna()
    n = len(d)
    return {"mean": float(d.mean()) if n else float("nan"),
            "sd": float(d.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan"), "n": n, "per_seed": d}


def jackknife_sd(seeds, stat) -> float:
    """Leave-one-seed-out jackknife sd of a statistic of several seeds.

    Parameters
    ----------
    seeds : sequence
        The seeds the statistic uses.
    stat : callable
        ``stat(kept_seeds) -> float``: the statistic computed on a subset of the seeds.

    Returns
    -------
    float
        sqrt((n - 1) / n * sum_i (stat(seeds without i) - mean)^2); NaN with fewer than 2 seeds. For a mean
        over seeds it equals the seeds' sd / sqrt(n).
    """
    seeds = list(seeds)
    n = len(seeds)
    if n < 2:
        return float("nan")
    loo = np.array([stat([s for s in seeds if s != out]) for out in seeds], dtype=float)
    return float(np.sqrt((n - 1) / n * np.sum((loo - loo.mean()) ** 2)))


def _least_clear(rows: list) -> dict:
    """Of several (margin, sd, df, ...) dicts, the one with the smallest margin / band
    (:func:`scalable_bayes.reporting.clearance`): the comparison that decides "at every size" (it fails if any
    fails, holds only if all hold)."""
    return min(rows, key=lambda r: clearance(r["margin"], r["sd"], r.get("df")))


# ------------------------------------------------------------------ Fig. 1: boxplots of omega_5 (Sec. 1.3, 2.2)
def fig1_scale(settings: dict, profile: str, n_seeds: int) -> str:
    return (f"{profile}: the paper's setting (d = 10, N = 1,000, alpha = 0.1, minibatch {settings['fig1_batch']}, "
            f"{settings['n_iter']} iterations after {settings['burnin']} burn-in); step sizes tuned on a grid "
            f"(seed {settings['tune']['seed']}); {n_seeds} seed(s)")


#: SGRLD "rarely" proposes small values: below the exact median in fewer than this fraction of its draws
FIG1_RARE = 0.05
#: two-sided normal quantile of the tolerance of Fig. 1's "matches" (two exact runs' medians differ by less
#: than FIG1_Z x sqrt(2) x the exact median's sd in 95% of pairs)
FIG1_Z = 1.96


def exact_median_sd(alpha: float, n: int, target: str = "sparse", component: int = data.FIG1_COMPONENT) -> float:
    """Sd of the median of ``n`` i.i.d. exact draws of log10 omega_component (decades), to first order.

    omega_j of Dirichlet(alpha + counts) is Beta(a_j, A - a_j); the sample median of n draws of Y = log10 omega_j
    has sd 1 / (2 f_Y(m) sqrt(n)) (m the median, f_Y(y) = f_omega(10^y) 10^y ln 10). Deterministic: the exact
    sampler's own run-to-run spread of Fig. 1's statistic (~0.137 decades for the sparse omega_5 at n = 1,000;
    the 5 plotted seeds' medians scatter by 0.12).
    """
    from scipy.stats import beta

    post = data.target_counts(target).astype(float) + alpha
    a, b = post[component], post.sum() - post[component]
    m = beta.median(a, b)
    f = beta.pdf(m, a, b) * m * np.log(10)
    return float(0.5 / (f * np.sqrt(n)))


def check_fig1(samples: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """Two comparisons, each against its spread between seeds.

    (a) "SCIR's samples match the exact sampler's": the bias of SCIR's median log10 omega_5 (mean over seeds of
    SCIR's per-seed median minus the exact sampler's of the same seed) within the exact sampler's own spread:
    |bias| below FIG1_Z x sqrt(2) x sd_exact, the distance two exact runs' medians stay within in 95% of pairs
    (sd_exact from :func:`exact_median_sd`, deterministic). Margin = that tolerance - |bias| (decades); sd =
    the per-seed differences' sd / sqrt(n), n - 1 df. A sampler biased by a fraction of a decade fails; SCIR's 1,000
    autocorrelated draws move its median by most of a decade from seed to seed, so with 5 seeds its bias is
    resolved only to ~0.4 decades and the part is usually undecided: more seeds, not a looser bound, decide it.
    (b) "SGRLD rarely proposes small values": the fraction of SGRLD's draws below the exact sampler's median of
    the same seed (half of the exact draws lie there), mean over seeds, below 5%. Margin = 0.05 - fraction;
    sd = the per-seed fractions' sd / sqrt(n), n - 1 df."""
    s = samples[samples["target"] == "sparse"]
    med = s.groupby(["seed", "method"])["omega"].apply(_decades).unstack()
    pooled = s.groupby("method")["omega"].apply(_decades)
    ex_med = s[s["method"] == "Exact"].groupby("seed")["omega"].median()
    sg = s[s["method"] == "SGRLD"]
    frac = sg.groupby("seed").apply(lambda g: float(np.mean(g["omega"].to_numpy() < ex_med[g.name])),
                                    include_groups=False)
    n_draws = int(s[s["method"] == "Exact"].groupby("seed").size().min())
    sd_ex = exact_median_sd(settings.get("alpha", 0.1), n_draws)
    tol = FIG1_Z * np.sqrt(2) * sd_ex
    bias = paired_gap(med["SCIR"], med["Exact"])
    rare = paired_gap(pd.Series(FIG1_RARE, index=frac.index), frac)
    gap_sgrld = pooled["SGRLD"] - pooled["Exact"]
    n = bias["n"]
    evidence = ()
    if n > 1:
        evidence = (
            Evidence("SCIR median log10 omega_5: exact sampler's tolerance minus |bias| (decades)",
                     tol - abs(bias["mean"]), bias["sd"],
                     f"sd of the {n} seeds' (SCIR - exact) medians / sqrt({n}), {n - 1} df; tolerance "
                     f"{FIG1_Z} x sqrt(2) x {sd_ex:.3f} (the exact median's sd, deterministic)", n - 1),
            Evidence("SGRLD draws below the exact median: 5% minus the fraction", rare["mean"], rare["sd"],
                     f"sd of the {rare['n']} seeds' fractions / sqrt({rare['n']}), {rare['n'] - 1} df",
                     rare["n"] - 1),
        )
    measured = (f"median log10 omega_5 over {len(med)} seeds' draws: exact {pooled['Exact']:.2f}, SCIR {pooled['SCIR']:.2f}, "
                f"SGRLD {pooled['SGRLD']:.2f}; SCIR - exact, mean of per-seed differences, {bias['mean']:+.2f} decades "
                f"(sd between runs {bias['sd']:.2f}; seed sd of the medians SCIR "
                f"{med['SCIR'].std(ddof=1) if n > 1 else float('nan'):.2f}, exact "
                f"{med['Exact'].std(ddof=1) if n > 1 else float('nan'):.2f} against {sd_ex:.2f} for i.i.d. draws) "
                f"against the tolerance {tol:.2f}; SGRLD draws below the exact median: {100 * frac.mean():.1f}% "
                f"(exact: 50%); SGRLD's median {gap_sgrld:.2f} decades above the exact one")
    note = ("Tests (README.md): (a) |mean over seeds of SCIR's median log10 omega_5 - the exact sampler's| below "
            f"{FIG1_Z} x sqrt(2) x the exact median's own sd (two exact runs differ by less in 95% of pairs); "
            "(b) < 5% of SGRLD's draws below the exact median. SCIR's chain is autocorrelated (omega_5 "
            "decorrelates over ~1/h steps): its median varies several times more between seeds than the exact "
            "sampler's, which sets the bias 5 seeds can resolve. The stricter reading 'SGRLD's median >= 2 decades "
            "above' depends on SGRLD's step size: its gap shrinks as h does, and the KS-tuned h (1e-4) is the "
            "smallest useful one on the grid." + ("" if n > 1 else " " + ONE_SEED))
    return Claim(id="SCIR-Fig1", paper=PAPER, claim=CLAIMS["Fig1"], measured=measured, holds=None,
                 scale=fig1_scale(settings, profile, len(med)), paper_value="boxplot (log scale): SCIR ~ Exact, SGRLD "
                 "orders of magnitude above", evidence=evidence,
                 details={"median_log10_pooled": {k: round(float(v), 3) for k, v in pooled.items()},
                          "median_log10_per_seed": {str(k): v for k, v in med.round(3).to_dict(orient="index").items()},
                          "scir_median_bias": {"bias": bias["mean"], "sd": bias["sd"], "tolerance": tol,
                                               "exact_median_sd_iid": sd_ex},
                          "sgrld_fraction_below_exact_median": {str(k): round(float(v), 4) for k, v in frac.items()},
                          "sgrld_median_gap_decades": round(float(gap_sgrld), 3)},
                 note=note, if_fails="Where (a) is undecided: 5 SCIR chains of 1,000 autocorrelated draws resolve the bias "
                 "only to ~0.4 decades (sd between runs), about the tolerance; over 30 seeds at the tuned h SCIR puts "
                 "49.1% +- 1.1% of its draws below the exact median (no bias): README.md, 'Turning the words into "
                 "tests', Fig1.")


# ------------------------------------------------------------------ Fig. 2: KS distance vs minibatch size (Sec. 2.2)
def _ks_by_size(ks: pd.DataFrame, target: str) -> pd.DataFrame:
    k = ks[(ks["target"] == target) & ks["method"].isin(["SCIR", "SGRLD"])]
    return k.groupby(["proportion", "method"])["ks_mean"].mean().unstack()


def _ks_per_seed(ks: pd.DataFrame, target: str, method: str) -> pd.DataFrame:
    """KS distance per seed (rows) and minibatch proportion (columns)."""
    k = ks[(ks["target"] == target) & (ks["method"] == method)]
    return k.pivot_table(index="seed", columns="proportion", values="ks_mean")


#: Fig. 2 (a) "much lower": SGRLD / SCIR at least this at the larger minibatches; (b) "similar": within this factor
FIG2_MUCH_LOWER = 2.0
FIG2_SIMILAR = 2.0
FIG2_LARGE = 0.05  # the minibatch proportions at which the ratio test applies (>=)


def fig2_comparisons(ks: pd.DataFrame) -> dict:
    """Fig. 2's four comparisons, each as margin and sd between runs (from the seeds; see the module docstring).

    Returns
    -------
    dict
        name -> {"margin", "sd", "df", "at", "sd_from"} for ``lower`` (sparse: mean over seeds of SGRLD - SCIR at
        the size where it is least clear), ``ratio`` (sparse: SGRLD / SCIR of the seed means minus 2, sizes
        >= 0.05; absent without such sizes), ``drop`` (SCIR's sparse KS at the smallest size minus at the
        largest, paired by seed) and ``dense`` (2 minus max(SGRLD / SCIR, SCIR / SGRLD) of the seed means).
        Empty with fewer than 2 seeds. Every sd is estimated from the ``n`` seeds: ``df`` = n - 1 (the jackknife's
        too).
    """
    sc, sg = _ks_per_seed(ks, "sparse", "SCIR"), _ks_per_seed(ks, "sparse", "SGRLD")
    dsc, dsg = _ks_per_seed(ks, "dense", "SCIR"), _ks_per_seed(ks, "dense", "SGRLD")
    seeds = sorted(set(sc.index) & set(sg.index) & set(dsc.index) & set(dsg.index))
    n = len(seeds)
    if n < 2:
        return {}
    jk = f"leave-one-seed-out jackknife over the {n} seeds, {n - 1} df"
    df = n - 1
    out = {}
    rows = []
    for p in sc.columns:
        g = paired_gap(sg.loc[seeds, p], sc.loc[seeds, p])
        rows.append({"margin": g["mean"], "sd": g["sd"], "df": g["n"] - 1, "at": float(p),
                     "sd_from": f"sd of the {n} seeds' (SGRLD - SCIR) / sqrt({n}), {n - 1} df"})
    out["lower"] = _least_clear(rows)

    def ratio(a, b, p, sym=False):
        def stat(kept):
            r = a.loc[kept, p].mean() / b.loc[kept, p].mean()
            return max(r, 1 / r) if sym else r
        return stat

    big = [p for p in sc.columns if p >= FIG2_LARGE]
    if big:
        out["ratio"] = _least_clear([{"margin": ratio(sg, sc, p)(seeds) - FIG2_MUCH_LOWER,
                                      "sd": jackknife_sd(seeds, ratio(sg, sc, p)), "df": df, "at": float(p),
                                      "sd_from": jk}
                                     for p in big])
    lo, hi = sc.columns.min(), sc.columns.max()
    d = paired_gap(sc.loc[seeds, lo], sc.loc[seeds, hi])
    out["drop"] = {"margin": d["mean"], "sd": d["sd"], "df": d["n"] - 1, "at": (float(lo), float(hi)),
                   "sd_from": f"sd of the {n} seeds' drops / sqrt({n}), {n - 1} df"}
    out["dense"] = _least_clear([{"margin": FIG2_SIMILAR - ratio(dsg, dsc, p, True)(seeds),
                                  "sd": jackknife_sd(seeds, ratio(dsg, dsc, p, True)), "df": df, "at": float(p),
                                  "sd_from": jk}
                                 for p in dsc.columns])
    return out


FIG2_NAMES = {
    "lower": "sparse: SGRLD - SCIR KS at the least clear size",
    "ratio": f"sparse: SGRLD / SCIR KS minus {FIG2_MUCH_LOWER:g} at the least clear size >= {FIG2_LARGE:g}",
    "drop": "sparse: SCIR's KS at the smallest minibatch minus at the largest",
    "dense": f"dense: {FIG2_SIMILAR:g} minus the larger of SGRLD / SCIR and SCIR / SGRLD KS at the least clear size",
}


def check_fig2(ks: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """Four comparisons, each against its spread between seeds (:func:`fig2_comparisons`): (a) sparse, means over
    seeds: SCIR's KS below SGRLD's at every size (paired by seed); SGRLD / SCIR >= 2 at sizes >= 0.05 ("much
    lower": the README's reading, a fixed threshold); SCIR's KS falls from the smallest size to the largest
    ("approaches the exact sampler"; a SCIR whose KS does not move with the minibatch has a drop within its
    spread of 0, undecided, or below it); (b) dense: the two within a factor 2 of each other at every size
    ("similar"). "At every size" is decided by the size whose margin is least clear (smallest margin / band). Each
    sd comes from the seeds, with n - 1 degrees of freedom."""
    sp, de = _ks_by_size(ks, "sparse"), _ks_by_size(ks, "dense")
    ex = ks[ks["method"] == "Exact"].groupby("target")["ks_mean"].mean()
    ratio = sp["SGRLD"] / sp["SCIR"]
    dense_ratio = np.maximum(de["SGRLD"] / de["SCIR"], de["SCIR"] / de["SGRLD"])
    cmp = fig2_comparisons(ks)
    evidence = tuple(Evidence(f"{FIG2_NAMES[k]} ({c['at']})", c["margin"], c["sd"], c["sd_from"], c["df"])
                     for k, c in cmp.items())
    n_seeds = ks["seed"].nunique()
    drop = cmp.get("drop", {"margin": float(sp["SCIR"].iloc[0] - sp["SCIR"].iloc[-1]), "sd": float("nan")})
    measured = (f"sparse: KS SCIR {sp['SCIR'].iloc[0]:.3f} -> {sp['SCIR'].iloc[-1]:.3f} (sizes {sp.index[0]:g} -> "
                f"{sp.index[-1]:g}; per-seed drop {drop['margin']:+.3f}, sd between runs {drop['sd']:.3f}), "
                f"SGRLD {sp['SGRLD'].min():.3f}-{sp['SGRLD'].max():.3f}, SGRLD/SCIR "
                f"{ratio.min():.1f}-{ratio.max():.1f}x (exact sampler {ex.get('sparse', np.nan):.3f}); dense: "
                f"SCIR {de['SCIR'].min():.3f}-{de['SCIR'].max():.3f}, SGRLD {de['SGRLD'].min():.3f}-"
                f"{de['SGRLD'].max():.3f}, largest ratio {dense_ratio.max():.2f}x")
    scale = (f"{profile}: the paper's setting (d = 10, N = 1,000, {settings['n_iter']} iterations after "
             f"{settings['burnin']} burn-in, minibatch proportions {min(settings['proportions']):g}-"
             f"{max(settings['proportions']):g}); one step size per method and target tuned at proportion "
             f"{settings['tune']['proportion']:g} (the paper's tuning is in its supplement); {n_seeds} seed(s)")
    return Claim(id="SCIR-Fig2", paper=PAPER, claim=CLAIMS["Fig2"], measured=measured, holds=None, scale=scale,
                 paper_value="curves only (no numbers in the text)", evidence=evidence,
                 details={"sparse": {str(p): r for p, r in sp.round(4).to_dict(orient="index").items()},
                          "dense": {str(p): r for p, r in de.round(4).to_dict(orient="index").items()},
                          "exact": ex.round(4).to_dict(),
                          "comparisons": {k: {kk: (list(vv) if isinstance(vv, tuple) else vv) for kk, vv in c.items()}
                                          for k, c in cmp.items()}},
                 note="KS distance: mean over the 10 components of sup |F^ - F| against the exact Beta marginal "
                      "(the paper's definition is in its supplement, not available). Thresholds: SCIR below SGRLD "
                      f"(0), SGRLD / SCIR >= {FIG2_MUCH_LOWER:g} at sizes >= {FIG2_LARGE:g}, SCIR's drop from the "
                      f"smallest to the largest size > 0, dense ratio <= {FIG2_SIMILAR:g}; each margin {BAND}." + ("" if cmp else " " + ONE_SEED),
                 if_fails="The quick and paper-scale runs leave the dense part undecided (largest ratio 1.75x at "
                          "proportion 0.1, jackknife sd 0.23, against 2): README.md, 'Turning the words into tests', Fig2.")


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


def _sd_txt(x: pd.Series) -> str:
    return f"{x.std(ddof=1):.1f}" if len(x) > 1 else "nan"


FIG3A_FINDING = (
    "Deciding experiment (python -m scalable_bayes_papers.scir.study; README.md of the paper folder, 'Fig. 3a: why "
    "SCIR does not end below SGRLD here', which records its numbers): the paper's mechanism reproduces (SGRLD "
    "inflates small topic-word entries, SCIR does not), its consequence does not: tuned SGRLD ends below SCIR at the "
    "paper's length of 800 iterations on Wikipedia and on synthetic data from known sparse topics, and the gap grows "
    "with the vocabulary. So neither our data nor our code explains the failure; the paper's claim or its unreported "
    "setup (supplement) does.")


def check_fig3a(trace: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """Final perplexity (mean of the last 3 evaluations per seed): SGRLD's minus SCIR's, mean over seeds of the
    per-seed differences, above 0 ("SCIR's final perplexity lower"); sd = the differences' sd / sqrt(n), n - 1
    degrees of freedom."""
    f = _final(trace[trace["method"].isin(["SCIR", "SGRLD"])], "perplexity")
    sc_, sg = f.loc["SCIR"], f.loc["SGRLD"]
    g = paired_gap(sg, sc_)
    evidence = (Evidence("final perplexity SGRLD - SCIR", g["mean"], g["sd"],
                         f"sd of the {g['n']} seeds' (SGRLD - SCIR) / sqrt({g['n']}), {g['n'] - 1} df", g["n"] - 1),
                ) if g["n"] > 1 else ()
    measured = (f"final perplexity SCIR {sc_.mean():.1f} (sd over seeds {_sd_txt(sc_)}), SGRLD {sg.mean():.1f} "
                f"(sd {_sd_txt(sg)}); SGRLD - SCIR = {g['mean']:+.1f}, sd between runs {g['sd']:.1f} (per seed "
                + ", ".join(f"{v:+.0f}" for v in g["per_seed"]) + ")")
    note = ("Test: mean over seeds of the per-seed final perplexity (last 3 evaluations) SGRLD - SCIR > 0, "
            f"{BAND}." + ("" if g["n"] > 1 else " " + ONE_SEED))
    return Claim(id="SCIR-Fig3a", paper=PAPER, claim=CLAIMS["Fig3a"], measured=measured, holds=None,
                 scale=lda_scale(trace, settings, profile), paper_value="curves only (no numbers in the text)",
                 details={"final_perplexity": {f"{m}/{s}": round(float(v), 2) for (m, s), v in f.items()}},
                 note=note, if_fails=FIG3A_FINDING, evidence=evidence)


#: SFigA "quite competitive": the better SG method's final perplexity at most this fraction above CGS's
SFIGA_WITHIN = 0.10


def sfiga_gap(per: pd.Series, seeds) -> float:
    """The better SG method's mean final perplexity over ``seeds`` relative to CGS's, minus 1."""
    m = per[per.index.get_level_values("seed").isin(list(seeds))].groupby(level="method").mean()
    return float(m.drop("CGS").min() / m["CGS"] - 1)


def check_sfiga(trace: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """"Quite competitive" with collapsed Gibbs: the better SG method's final perplexity (mean over seeds) within
    10% of CGS's final perplexity (CGS run for ``cgs_iter`` full sweeps; the README's reading, a fixed
    threshold). Margin = 0.10 - gap; sd: leave-one-seed-out jackknife of the gap (a ratio with a minimum over
    methods, not a mean), n - 1 degrees of freedom for n seeds."""
    per = _final(trace, "perplexity")
    f = per.groupby(level="method").mean()
    if "CGS" not in f.index:
        return Claim(id="SCIR-SFigA", paper=PAPER, claim=CLAIMS["SFigA"], measured="no CGS run", holds=None,
                     scale=lda_scale(trace, settings, profile), note="Not checked: CGS not among the runs.")
    seeds = sorted(set.intersection(*(set(per.loc[m].index) for m in f.index)))
    gap = sfiga_gap(per, seeds)
    sd = jackknife_sd(seeds, lambda kept: sfiga_gap(per, kept))
    evidence = (Evidence(f"{100 * SFIGA_WITHIN:g}% minus the better SG method's final perplexity above CGS's",
                         SFIGA_WITHIN - gap, sd,
                         f"leave-one-seed-out jackknife over the {len(seeds)} seeds, {len(seeds) - 1} df",
                         len(seeds) - 1),
                ) if len(seeds) > 1 else ()
    measured = (", ".join(f"{m} {v:.1f}" for m, v in f.items()) + f"; best SG method {100 * gap:+.1f}% vs CGS "
                f"(sd between runs {100 * sd:.1f} points)")
    return Claim(id="SCIR-SFigA", paper=PAPER, claim=CLAIMS["SFigA"], measured=measured, holds=None,
                 scale=lda_scale(trace, settings, profile) + f"; CGS {settings['cgs_iter']} sweeps of the training documents",
                 paper_value="supplement (not available)", evidence=evidence,
                 details={"final_perplexity": {m: round(float(v), 2) for m, v in f.items()}, "gap": round(gap, 4),
                          "gap_sd": sd},
                 note="Test: the better SG method's final perplexity at most 10% above CGS's (our reading of 'quite "
                      f"competitive'; the supplement's figure is not available), {BAND}."
                      + ("" if len(seeds) > 1 else " " + ONE_SEED))


# ------------------------------------------------------------------ Fig. 3b / SFigB: DP mixture (Sec. 4.2)
def dp_scale(trace: pd.DataFrame, settings: dict, profile: str) -> str:
    r = trace.iloc[0]
    return (f"{profile}: {int(r['n_train_users']):,} training / {int(r['n_test_users']):,} test users of the UCI "
            f"anonymous Microsoft web data (paper: ~30,000 users), minibatch {settings['batch_size']} users (paper 1,000), "
            f"{settings['n_iter']} iterations (paper 1,000), {trace['seed'].nunique()} seed(s); base Dir(a), the alpha "
            f"prior and the step sizes are ours (paper: in its supplement)")


def fig3b_cluster_gap(nc: pd.Series) -> dict:
    """SGRLD's final number of occupied clusters minus SCIR's, paired by seed (:func:`paired_gap`).

    Parameters
    ----------
    nc : pd.Series
        Final occupied clusters indexed by (method, seed), as :func:`_final` returns them.

    Returns
    -------
    dict
        ``diff`` (mean over seeds of SGRLD - SCIR), ``sd`` (sd between runs: the per-seed differences' sd /
        sqrt(n); NaN with one seed), ``n`` and ``paired`` (the per-seed differences). "Many more clusters than
        needed" is read as a difference in the paper's direction beyond its spread (margin = diff).
    """
    g = paired_gap(nc.loc["SGRLD"], nc.loc["SCIR"])
    return {"diff": g["mean"], "sd": g["sd"], "n": g["n"], "paired": g["per_seed"]}


def check_fig3b(trace: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """Three comparisons on the final values (mean of the last 3 evaluations per seed; clusters: the last one),
    each against its spread between seeds: test log-predictive SCIR - SGRLD > 0 (higher is better; paired by
    seed); SGRLD's sd over seeds - SCIR's > 0 ("lower variance over seeds"; jackknife sd); occupied clusters
    SGRLD - SCIR > 0 (:func:`fig3b_cluster_gap`; "many more clusters than needed": a difference in the paper's
    direction that the seeds resolve). Every sd comes from the n seeds: n - 1 degrees of freedom."""
    t = trace[trace["method"].isin(["SCIR", "SGRLD"])]
    lp = _final(t, "log_predictive")
    nc = _final(t, "n_clusters", 1)
    sc_, sg = lp.loc["SCIR"], lp.loc["SGRLD"]
    better = paired_gap(sc_, sg)
    cl = fig3b_cluster_gap(nc)
    seeds = sorted(set(sc_.index) & set(sg.index))
    n = len(seeds)

    def sd_gap(kept):
        return float(sg.loc[kept].std(ddof=1) - sc_.loc[kept].std(ddof=1)) if len(kept) > 1 else float("nan")

    evidence = ()
    steadier = {"margin": float("nan"), "sd": float("nan")}
    if n > 2:  # the jackknife of an sd needs 2 seeds in every leave-one-out subset
        steadier = {"margin": sd_gap(seeds), "sd": jackknife_sd(seeds, sd_gap)}
    if n > 1:
        evidence = (Evidence("final test log-predictive per user SCIR - SGRLD", better["mean"], better["sd"],
                             f"sd of the {better['n']} seeds' (SCIR - SGRLD) / sqrt({better['n']}), "
                             f"{better['n'] - 1} df", better["n"] - 1),)
        if n > 2:
            evidence += (Evidence("sd over seeds of the final log-predictive SGRLD - SCIR", steadier["margin"],
                                  steadier["sd"], f"leave-one-seed-out jackknife over the {n} seeds, {n - 1} df",
                                  n - 1),)
        evidence += (Evidence("final occupied clusters SGRLD - SCIR", cl["diff"], cl["sd"],
                              f"sd of the {cl['n']} seeds' (SGRLD - SCIR) / sqrt({cl['n']}), {cl['n'] - 1} df",
                              cl["n"] - 1),)
    measured = (f"final test log-predictive per user SCIR {sc_.mean():.4f} (sd over seeds "
                f"{sc_.std(ddof=1) if n > 1 else float('nan'):.4f}), SGRLD {sg.mean():.4f} (sd "
                f"{sg.std(ddof=1) if n > 1 else float('nan'):.4f}): SCIR - SGRLD {better['mean']:+.4f} (sd between runs "
                f"{better['sd']:.4f}); sd SGRLD - SCIR {steadier['margin']:+.4f} (jackknife sd {steadier['sd']:.4f}); "
                f"occupied clusters SCIR {nc.loc['SCIR'].mean():.1f}, SGRLD {nc.loc['SGRLD'].mean():.1f}: SGRLD - SCIR = "
                f"{cl['diff']:+.1f}, sd between runs {cl['sd']:.1f} (per seed {', '.join(f'{v:+.0f}' for v in cl['paired'])})")
    return Claim(id="SCIR-Fig3b", paper=PAPER, claim=CLAIMS["Fig3b"], measured=measured, holds=None,
                 scale=dp_scale(trace, settings, profile), paper_value="curves only (no numbers in the text)",
                 evidence=evidence,
                 details={"log_predictive_gap": {"scir_minus_sgrld": better["mean"], "sd": better["sd"]},
                          "sd_gap": steadier,
                          "cluster_gap": {"sgrld_minus_scir": cl["diff"], "sd": cl["sd"],
                                          "per_seed": {int(k): float(v) for k, v in cl["paired"].items()}},
                          "final_log_predictive": {f"{m}/{s}": round(float(v), 5) for (m, s), v in lp.items()},
                          "final_clusters": {f"{m}/{s}": int(v) for (m, s), v in nc.items()}},
                 note=f"Test: three comparisons, each {BAND}: mean final "
                      "log-predictive SCIR - SGRLD > 0, sd over seeds SGRLD - SCIR > 0 (needs 3+ seeds: its "
                      "jackknife leaves one out), mean final occupied clusters SGRLD - SCIR > 0. The paper's 'lower "
                      "log predictive test score' is read as a loss; here the log-predictive itself is plotted "
                      "(higher is better)." + ("" if n > 1 else " " + ONE_SEED),
                 if_fails="On the quick and paper-scale runs the variance part is the undecided one: 5 seeds do not "
                          "pin down a ratio of sds (README.md, Fig. 3b tests).")


def check_sfigb(trace: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """Final test log-predictive (mean of the last 3 evaluations per seed): Gibbs - SCIR and SCIR - SGRLD, means over
    seeds of the per-seed differences, each above 0 ("clearly better", "still beats") against its band between
    runs (Student's t at the coverage of 2 normal sds times the differences' sd / sqrt(n), n - 1 degrees of
    freedom): an ordering of the means within the seeds' spread, as an SGRLD stuck
    exactly where SCIR is would give, is undecided, not a pass. Needs 2+ seeds (not checked otherwise)."""
    per = _final(trace, "log_predictive")
    f = per.groupby(level="method").mean()
    need = {"Gibbs", "SCIR", "SGRLD"}
    if not need <= set(f.index):
        return Claim(id="SCIR-SFigB", paper=PAPER, claim=CLAIMS["SFigB"], measured=f"methods run: {sorted(f.index)}",
                     holds=None, scale=dp_scale(trace, settings, profile), note="Not checked: a method is missing.")
    sd = per.groupby(level="method").std(ddof=1)
    gaps = {f"{hi} - {lo}": paired_gap(per.loc[hi], per.loc[lo]) for hi, lo in (("Gibbs", "SCIR"), ("SCIR", "SGRLD"))}
    evidence = tuple(Evidence(f"final test log-predictive per user {k}", g["mean"], g["sd"],
                              f"sd of the {g['n']} seeds' differences / sqrt({g['n']}), {g['n'] - 1} df", g["n"] - 1)
                     for k, g in gaps.items() if g["n"] > 1)
    measured = (", ".join(f"{m} {v:.4f}" for m, v in f.sort_values(ascending=False).items()) + "; "
                + ", ".join(f"{k} = {g['mean']:+.4f} (sd between runs {g['sd']:.4f})" for k, g in gaps.items()))
    return Claim(id="SCIR-SFigB", paper=PAPER, claim=CLAIMS["SFigB"], measured=measured, holds=None,
                 scale=dp_scale(trace, settings, profile) + f"; exact Gibbs {settings['gibbs_iter']} sweeps of all users",
                 paper_value="supplement (not available)", evidence=evidence,
                 details={"final_log_predictive": {m: round(float(v), 5) for m, v in f.items()},
                          "sd_over_seeds": {m: round(float(v), 5) for m, v in sd.items()},
                          "gaps": {k: {"mean": g["mean"], "sd": g["sd"], "n": g["n"]} for k, g in gaps.items()}},
                 note="Test: mean over seeds of the per-seed differences of the final test log-predictive (last 3 "
                      f"evaluations), Gibbs - SCIR and SCIR - SGRLD, each > 0 {BAND}."
                      + ("" if evidence else " " + ONE_SEED))
