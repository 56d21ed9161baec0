"""SCIR claim checks fed a right and a deliberately wrong result: the wrong one must fail (verdict "fails"),
an effect within its spread of the threshold is "undecided", and the spread is the one measured between
seeds (hand-computed cases).

Fig. 1: the exact sampler of the runs (:func:`scalable_bayes_papers.scir.runs.exact_draws`) supplies both the
reference and, on a mis-scaled posterior, a sampler whose median is biased by about half a decade. Fig. 3b: traces in
the shape of the DP-mixture runs, with SGRLD's extra clusters inside or beyond the seeds' spread."""

import numpy as np
import pandas as pd
import pytest

from scalable_bayes_papers.scir import claims, data, runs

FIG1 = {"fig1_batch": 10, "n_iter": 1000, "burnin": 1000, "tune": {"seed": 99}}
SEEDS = range(5)


def _omega5(alpha, seed, n=1000):
    return runs.exact_draws(data.target_counts("sparse"), alpha, n, seed)[:, data.FIG1_COMPONENT]


def _fig1_table(scir_draws):
    """Fig. 1 samples table (target, seed, method, omega) as ``simplex_runs`` writes it. SGRLD: draws whose
    zero-count components see a 10x larger alpha (the upward bias the paper explains SGRLD's boxplot by)."""
    frames = []
    for s in SEEDS:
        for method, om in (("Exact", _omega5(0.1, s)), ("SCIR", scir_draws(s)), ("SGRLD", _omega5(1.0, 50 + s))):
            frames.append(pd.DataFrame({"target": "sparse", "seed": s, "method": method, "omega": om}))
    return pd.concat(frames, ignore_index=True)


def _old_fig1_scir_ok(t):
    """The SCIR part of the check before the seeds' spread was used: pooled medians within 1 decade."""
    med = t.groupby("method")["omega"].apply(lambda x: np.median(np.log10(x)))
    return abs(med["SCIR"] - med["Exact"]) < 1


def test_fig1_exact_draws_as_scir_pass():
    """An ideal SCIR (independent exact draws of other seeds) matches the exact sampler."""
    c = claims.check_fig1(_fig1_table(lambda s: _omega5(0.1, 100 + s)), FIG1, "test")
    assert c.verdict == "holds", c.measured
    b = c.details["scir_median_bias"]
    assert abs(b["bias"]) < b["tolerance"] and 0.1 < b["exact_median_sd_iid"] < 0.2  # 1,000 i.i.d. draws: ~0.14


def test_fig1_autocorrelated_but_unbiased_sampler_is_undecided():
    """A chain whose per-seed median wanders by SCIR's measured seed sd (~0.8 decades at the tuned step, 1,000
    autocorrelated draws) but is centred on the exact one: 5 seeds resolve its bias only to ~0.4 decades, more
    than the tolerance (~0.38), so the verdict is undecided at this scale, neither a pass nor a failure."""
    rng = np.random.default_rng(3)
    shift = dict(zip(SEEDS, rng.normal(0, 0.8, len(SEEDS)) - 0.0))
    c = claims.check_fig1(_fig1_table(lambda s: _omega5(0.1, 100 + s) * 10 ** shift[s]), FIG1, "test")
    assert c.evidence[0].sd > 0.2 and c.evidence[0].verdict == "undecided"
    assert c.evidence[1].verdict == "holds" and c.verdict == "undecided", c.measured


def test_fig1_sampler_biased_by_a_fraction_of_a_decade_fails():
    """A sampler with a mis-scaled prior term (alpha 0.12 instead of 0.1 on every component, as a wrong scaling
    of the CIR process's shape would give) mixes perfectly but moves omega_5's median up by ~0.6 decades: far
    beyond the exact sampler's spread (~0.14 decades per seed), within the old 1-decade allowance."""
    t = _fig1_table(lambda s: _omega5(0.12, 100 + s))
    assert _old_fig1_scir_ok(t), "the old check must pass this wrong variant, else the test tests nothing"
    c = claims.check_fig1(t, FIG1, "test")
    b = c.details["scir_median_bias"]
    assert c.verdict == "fails" and 0.3 < b["bias"] < 1 and b["bias"] > b["tolerance"] + 2 * b["sd"]


def test_fig1_sd_is_the_seeds_paired_spread():
    """Hand-computed: SCIR's per-seed medians exactly d_s decades above the exact sampler's (the same draws
    scaled by 10^d_s): margin = tolerance - |mean d|, sd = sd(d) / sqrt(5)."""
    d = np.array([0.1, -0.2, 0.3, 0.0, 0.05])
    c = claims.check_fig1(_fig1_table(lambda s: _omega5(0.1, s) * 10 ** d[s]), FIG1, "test")
    e = c.evidence[0]
    tol = 1.96 * np.sqrt(2) * claims.exact_median_sd(0.1, 1000)
    assert e.margin == pytest.approx(tol - abs(d.mean()), abs=1e-9)
    assert e.sd == pytest.approx(d.std(ddof=1) / np.sqrt(5), abs=1e-9)


def test_exact_median_sd_is_the_exact_samplers_spread():
    """The deterministic sd of an exact run's median agrees with 20 exact runs' scatter (within its sampling error)."""
    med = [np.median(np.log10(_omega5(0.1, 200 + s))) for s in range(20)]
    assert np.std(med, ddof=1) == pytest.approx(claims.exact_median_sd(0.1, 1000), rel=0.4)


def test_fig1_sgrld_fraction_is_per_seed():
    """SGRLD's fraction below the exact median, per seed against that seed's exact median; the sd is the
    fractions' sd / sqrt(n)."""
    t = _fig1_table(lambda s: _omega5(0.1, 100 + s))
    c = claims.check_fig1(t, FIG1, "test")
    fr = []
    for s in SEEDS:
        ex = np.median(t[(t.seed == s) & (t.method == "Exact")].omega)
        fr.append(np.mean(t[(t.seed == s) & (t.method == "SGRLD")].omega < ex))
    e = c.evidence[1]
    assert e.margin == pytest.approx(0.05 - np.mean(fr)) and e.sd == pytest.approx(np.std(fr, ddof=1) / np.sqrt(5))


def test_paired_gap_and_jackknife():
    """The two spreads of the module by hand: paired differences' sd / sqrt(n); the jackknife of a mean is the
    same, of a ratio of means the leave-one-out formula."""
    a, b = pd.Series([3.0, 5.0, 4.0]), pd.Series([1.0, 2.0, 4.0])
    g = claims.paired_gap(a, b)
    assert g["mean"] == pytest.approx(5 / 3) and g["sd"] == pytest.approx(np.std([2, 3, 0], ddof=1) / np.sqrt(3))
    assert claims.jackknife_sd([0, 1, 2], lambda k: float((a - b)[k].mean())) == pytest.approx(g["sd"])
    loo = np.array([9 / 6, 7 / 5, 8 / 3])  # a / b of the means without seed 0, 1, 2
    assert claims.jackknife_sd([0, 1, 2], lambda k: float(a[k].mean() / b[k].mean())) == pytest.approx(
        np.sqrt(2 / 3 * np.sum((loo - loo.mean()) ** 2)))
    assert np.isnan(claims.jackknife_sd([0], lambda k: 1.0)) and np.isnan(claims.paired_gap(a[:1], b[:1])["sd"])


# ------------------------------------------------------------------ Fig. 3b: the cluster part
def _fig3b_trace(scir_clusters, sgrld_clusters):
    """DP-mixture traces (method, seed, iteration, log_predictive, n_clusters) as ``dp_runs`` writes them; SCIR's
    log-predictive above SGRLD's and steadier, so only the cluster part decides."""
    rows = []
    for method, ncs, lp0, sd in (("SCIR", scir_clusters, -5.0, 0.01), ("SGRLD", sgrld_clusters, -5.3, 0.05)):
        for s, nc in enumerate(ncs):
            for it in range(0, 101, 20):
                rows.append({"method": method, "seed": s, "iteration": it, "n_clusters": nc,
                             "log_predictive": lp0 + sd * np.sin(s + 1.0), "n_train_users": 1000,
                             "n_test_users": 100})
    return pd.DataFrame(rows)


FIG3B = {"batch_size": 100, "n_iter": 100}


def test_fig3b_many_more_clusters_pass():
    c = claims.check_fig3b(_fig3b_trace([20, 22, 19, 23, 21], [40, 44, 38, 47, 42]), FIG3B, "test")
    assert c.verdict == "holds", c.measured
    g = c.details["cluster_gap"]
    assert g["sgrld_minus_scir"] == pytest.approx(21.2)
    assert g["sd"] == pytest.approx(np.std([20, 22, 19, 24, 21], ddof=1) / np.sqrt(5))  # paired by seed, by hand


def test_fig3b_cluster_gap_within_the_seed_spread_is_undecided():
    """SGRLD with as many clusters as SCIR up to the seeds' spread (per-seed gaps +4, +4, +1, -1, +1: mean +1.8,
    sd between runs 0.97, 4 df): within its band of 0 (Student's t, 2.87 sds), undecided at this scale. The old part (SGRLD's mean above SCIR's)
    passed it."""
    c = claims.check_fig3b(_fig3b_trace([20, 26, 17, 28, 21], [24, 30, 18, 27, 22]), FIG3B, "test")
    ev = {e.name: e for e in c.evidence}
    assert ev["final occupied clusters SGRLD - SCIR"].verdict == "undecided" and c.verdict == "undecided"
    assert all(e.verdict == "holds" for n, e in ev.items() if "clusters" not in n)  # only the cluster part


def test_fig3b_fewer_sgrld_clusters_fail():
    """SGRLD with fewer clusters than SCIR in every seed (gaps -3, -5, -3, -6, -3: mean -4.0, sd between runs
    0.63, 4 df): the reverse of 'many more clusters', beyond its band (Student's t at 4 df: 2.87 sds = 1.8). The
    former fixture (gaps -2, -5, 0, -6, -1: mean -2.8, sd 1.16) is 2.4 sds below 0: beyond 2 sds, but within the
    t band of an sd from 5 seeds, so undecided; a reversed SGRLD that decides must be reversed in every seed."""
    c = claims.check_fig3b(_fig3b_trace([20, 26, 17, 28, 21], [17, 21, 14, 22, 18]), FIG3B, "test")
    assert c.verdict == "fails" and c.details["cluster_gap"]["sgrld_minus_scir"] == pytest.approx(-4.0)
    e = {e.name: e for e in c.evidence}["final occupied clusters SGRLD - SCIR"]
    assert e.df == 4 and e.verdict == "fails"


def test_fig3b_one_seed_is_not_checked():
    c = claims.check_fig3b(_fig3b_trace([20], [40]), FIG3B, "test")
    assert c.verdict == "not checked" and not c.evidence and "needs 2+ seeds" in c.note


def test_fig1_one_seed_is_not_checked():
    t = _fig1_table(lambda s: _omega5(0.1, 100 + s))
    c = claims.check_fig1(t[t.seed == 0], FIG1, "test")
    assert c.verdict == "not checked" and "needs 2+ seeds" in c.note


# ------------------------------------------------------------------ Fig. 2: KS distance against minibatch size
FIG2 = {"n_iter": 1000, "burnin": 1000, "proportions": [0.001, 0.01, 0.05, 0.1, 0.5], "tune": {"proportion": 0.01}}
PROPS = FIG2["proportions"]


def _fig2_table(scir_sparse=lambda p: 0.18 * (p / 0.001) ** -0.12, sgrld_sparse=lambda p: 0.44,
                dense=lambda p: 0.2 + 0.05 * np.log10(1 / p), sgrld_dense_factor=1.2, seeds=range(5), sd=0.02):
    """KS rows (target, seed, method, proportion, ks_mean) as ``simplex_runs`` writes them, with the seed-to-seed
    scatter of the quick run (sd ~0.02 per cell); the shapes follow the quick run's curves."""
    rng = np.random.default_rng(11)
    rows = []
    for s in seeds:
        for target in ("sparse", "dense"):
            rows.append({"target": target, "seed": s, "method": "Exact", "proportion": np.nan,
                         "ks_mean": 0.026 + rng.normal(0, 0.002)})
            for p in PROPS:
                if target == "sparse":
                    vals = {"SCIR": scir_sparse(p), "SGRLD": sgrld_sparse(p)}
                else:
                    vals = {"SCIR": dense(p), "SGRLD": sgrld_dense_factor * dense(p)}
                for m, v in vals.items():
                    rows.append({"target": target, "seed": s, "method": m, "proportion": p,
                                 "ks_mean": max(v + rng.normal(0, sd), 0.01)})
    return pd.DataFrame(rows)


def test_fig2_scir_far_below_sgrld_and_improving_passes():
    c = claims.check_fig2(_fig2_table(), FIG2, "test")
    assert c.verdict == "holds", c.measured
    assert len(c.evidence) == 4 and c.details["comparisons"]["drop"]["margin"] > 2 * c.details["comparisons"]["drop"]["sd"]


def test_fig2_fails_when_sgrld_matches_scir_on_the_sparse_target():
    """An SGRLD that samples the sparse target as well as SCIR (what a wrongly-tuned comparison, or SGRLD with
    SCIR's exact transition by mistake, would plot): no 'much lower KS' for SCIR."""
    scir = lambda p: 0.18 * (p / 0.001) ** -0.12  # noqa: E731
    c = claims.check_fig2(_fig2_table(sgrld_sparse=lambda p: scir(p) * 1.05), FIG2, "test")
    assert c.verdict == "fails"
    assert c.details["comparisons"]["ratio"]["margin"] < -2 * c.details["comparisons"]["ratio"]["sd"]


def _scir_sparse_ks(t):
    return t[(t.target == "sparse") & (t.method == "SCIR")].groupby("proportion")["ks_mean"].mean()


def test_fig2_flat_scir_is_undecided():
    """A SCIR whose KS does not move with the minibatch (flat at 0.12; the minibatch estimate not rescaled by N/n
    would leave it there), its last mean below its first by noise: the former test (last mean below the first)
    passed it. Its drop is 0 up to noise, i.e. exactly at the claim's threshold, so no test that weighs the drop
    against its spread can call it failing: it is undecided (the next test makes the variant clearly wrong)."""
    t = _fig2_table(scir_sparse=lambda p: 0.12)
    sp = _scir_sparse_ks(t)
    if not sp.iloc[-1] < sp.iloc[0]:  # make the old test pass: the wrong variant it let through
        t.loc[(t.target == "sparse") & (t.method == "SCIR") & (t.proportion == PROPS[-1]), "ks_mean"] -= 0.005 + (
            sp.iloc[-1] - sp.iloc[0])
    assert _scir_sparse_ks(t).iloc[-1] < _scir_sparse_ks(t).iloc[0]
    c = claims.check_fig2(t, FIG2, "test")
    drop = [e for e in c.evidence if "smallest minibatch" in e.name][0]
    assert drop.verdict == "undecided" and c.verdict == "undecided", c.measured


def test_fig2_fails_when_scir_moves_away_from_the_exact_sampler():
    """A SCIR whose KS grows with the minibatch (0.12 -> 0.2; e.g. the step size scaled by the minibatch size, so
    larger minibatches take cruder steps): it does not approach the exact sampler, beyond its spread."""
    c = claims.check_fig2(_fig2_table(scir_sparse=lambda p: 0.12 + 0.08 * np.log10(p / 0.001) / np.log10(500)),
                          FIG2, "test")
    drop = c.details["comparisons"]["drop"]
    assert c.verdict == "fails" and drop["margin"] < -2 * drop["sd"], c.measured


def test_fig2_fails_when_the_dense_target_separates_the_methods():
    c = claims.check_fig2(_fig2_table(sgrld_dense_factor=3.0), FIG2, "test")
    assert c.verdict == "fails" and c.details["comparisons"]["dense"]["margin"] < 0


def test_fig2_dense_ratio_near_2_is_undecided():
    """SGRLD's dense KS 2x SCIR's up to the seeds' scatter: at the threshold of 'similar', undecided."""
    c = claims.check_fig2(_fig2_table(sgrld_dense_factor=2.0, sd=0.03), FIG2, "test")
    assert c.details["comparisons"]["dense"]["sd"] > 0 and c.verdict == "undecided", c.measured


def test_fig2_one_seed_is_not_checked():
    c = claims.check_fig2(_fig2_table(seeds=[0]), FIG2, "test")
    assert c.verdict == "not checked" and "needs 2+ seeds" in c.note


# ------------------------------------------------------------------ Fig. 3a / SFigA: LDA perplexity traces
LDA = {"n_topics": 50, "batch_size": 50, "n_iter": 200, "cgs_iter": 20}


def _lda_trace(final, sd=15.0, seeds=range(5)):
    """Perplexity traces (method, seed, iteration, perplexity, sizes) as ``lda_runs`` writes them: each method
    descends to ``final[method]`` with a per-seed level of sd ``sd`` (the quick run's seeds differ by ~10-20)."""
    rng = np.random.default_rng(7)
    rows = []
    for m, f in final.items():
        for s in seeds:
            lvl = f + rng.normal(0, sd)
            for it in range(0, 201, 20):
                rows.append({"method": m, "seed": s, "iteration": it, "perplexity": lvl + 3000 * np.exp(-it / 30),
                             "n_train_docs": 10000, "n_test_docs": 1000, "n_words": 7702})
    return pd.DataFrame(rows)


def test_fig3a_scir_lower_beyond_the_seed_spread_passes():
    assert claims.check_fig3a(_lda_trace({"SCIR": 2300, "SGRLD": 2400}), LDA, "test").verdict == "holds"


def test_fig3a_fails_when_scir_ends_above_sgrld():
    """SCIR ending 50 above SGRLD (seed sd 15): not 'SCIR keeps descending', beyond the spread; and the deciding
    experiment is named in the note."""
    c = claims.check_fig3a(_lda_trace({"SCIR": 2450, "SGRLD": 2400}), LDA, "test")
    assert c.verdict == "fails", c.measured
    assert "Deciding experiment" in c.as_dict()["note"]


@pytest.mark.parametrize("scir", [2400, 2395])
def test_fig3a_scir_level_with_sgrld_is_undecided(scir):
    """SCIR ending where SGRLD does, up to the seeds' spread: the former test failed it (diff below one pooled
    sd), but an effect within its spread of the threshold is undecided at this scale."""
    c = claims.check_fig3a(_lda_trace({"SCIR": scir, "SGRLD": 2400}), LDA, "test")
    assert c.verdict == "undecided", c.measured
    assert "Deciding experiment" in c.as_dict()["note"]  # if_fails shown when undecided too


def test_fig3a_sd_is_the_paired_seeds_spread():
    """Hand-computed: per-seed final perplexities (last 3 evaluations equal) SCIR 10, 12, 14 and SGRLD 13, 13, 20:
    gaps 3, 1, 6, margin 10 / 3, sd sd(3, 1, 6) / sqrt(3) = 1.453 from 3 seeds, 2 df. The margin is 2.3 sds: beyond
    2 sds, but the band of an sd from 3 seeds is Student's t, 4.53 sds = 6.58, so the verdict is undecided."""
    rows = [{"method": m, "seed": s, "iteration": it, "perplexity": v, "n_train_docs": 1, "n_test_docs": 1,
             "n_words": 1} for m, vals in (("SCIR", (10, 12, 14)), ("SGRLD", (13, 13, 20)))
            for s, v in enumerate(vals) for it in range(4)]
    e = claims.check_fig3a(pd.DataFrame(rows), LDA, "test").evidence[0]
    assert e.margin == pytest.approx(10 / 3) and e.sd == pytest.approx(np.std([3, 1, 6], ddof=1) / np.sqrt(3))
    assert e.df == 2 and e.band == pytest.approx(4.53 * e.sd, rel=1e-3) and e.verdict == "undecided"
    assert e.sd_from == "sd of the 3 seeds' (SGRLD - SCIR) / sqrt(3), 2 df"


def test_fig3a_one_seed_is_not_checked():
    c = claims.check_fig3a(_lda_trace({"SCIR": 2300, "SGRLD": 2400}, seeds=[0]), LDA, "test")
    assert c.verdict == "not checked"


def test_sfiga_sg_methods_near_cgs_pass():
    c = claims.check_sfiga(_lda_trace({"SCIR": 2450, "SGRLD": 2400, "CGS": 2300}), LDA, "test")
    assert c.verdict == "holds"


def test_sfiga_fails_when_the_sg_methods_are_far_worse_than_cgs():
    """Both SG samplers 30% above collapsed Gibbs (e.g. a perplexity scored on a mis-scaled n^_kw): not 'quite
    competitive'."""
    c = claims.check_sfiga(_lda_trace({"SCIR": 3100, "SGRLD": 3000, "CGS": 2300}), LDA, "test")
    assert c.verdict == "fails" and c.details["gap"] > 0.1


def test_sfiga_ten_percent_above_cgs_is_undecided():
    """The better SG method 10% above CGS up to the seeds' spread: at the threshold, undecided."""
    c = claims.check_sfiga(_lda_trace({"SCIR": 2600, "SGRLD": 2530, "CGS": 2300}, sd=40.0), LDA, "test")
    assert c.verdict == "undecided", c.measured


def test_sfiga_sd_is_the_jackknife_over_seeds():
    t = _lda_trace({"SCIR": 2450, "SGRLD": 2400, "CGS": 2300})
    c = claims.check_sfiga(t, LDA, "test")
    per = claims._final(t, "perplexity")
    loo = []
    for out in range(5):
        m = per[per.index.get_level_values("seed") != out].groupby(level="method").mean()
        loo.append(min(m["SCIR"], m["SGRLD"]) / m["CGS"] - 1)
    loo = np.array(loo)
    assert c.evidence[0].sd == pytest.approx(np.sqrt(4 / 5 * np.sum((loo - loo.mean()) ** 2)))


# ------------------------------------------------------------------ SFigB: Gibbs > SCIR > SGRLD
DP = {"batch_size": 100, "n_iter": 100, "gibbs_iter": 150}


def _dp_trace(final, sd, seeds=range(5)):
    """DP-mixture traces; per method the final log-predictive ``final[m]`` with seed sd ``sd[m]`` (quick run:
    Gibbs -8.793 sd 0.007, SCIR -8.834 sd 0.005, SGRLD -8.998 sd 0.014)."""
    rng = np.random.default_rng(4)
    rows = []
    for m, f in final.items():
        for s in seeds:
            lvl = f + rng.normal(0, sd[m])
            for it in range(0, 101, 20):
                rows.append({"method": m, "seed": s, "iteration": it, "log_predictive": lvl - 0.6 * np.exp(-it / 10),
                             "n_clusters": 30, "n_train_users": 1000, "n_test_users": 100})
    return pd.DataFrame(rows)


SD = {"Gibbs": 0.007, "SCIR": 0.005, "SGRLD": 0.014}


def test_sfigb_gibbs_above_scir_above_sgrld_passes():
    c = claims.check_sfigb(_dp_trace({"Gibbs": -8.79, "SCIR": -8.83, "SGRLD": -9.0}, SD), DP, "test")
    assert c.holds is True, c.measured


def test_sfigb_sgrld_stuck_where_scir_is_undecided():
    """SGRLD stuck at SCIR's level (both SG methods equally stuck; the paper says SCIR still beats SGRLD): the
    means are ordered by noise alone. The former test (means ordered) passed this when noise put SCIR above.
    A gap of 0 up to noise sits at the claim's threshold: undecided, not failing (the next test fails a
    clearly wrong order)."""
    t = _dp_trace({"Gibbs": -8.79, "SCIR": -8.83, "SGRLD": -8.83}, {"Gibbs": 0.007, "SCIR": 0.01, "SGRLD": 0.01})
    f = claims._final(t, "log_predictive").groupby(level="method").mean()
    t.loc[t.method == "SGRLD", "log_predictive"] += f["SCIR"] - f["SGRLD"] - 0.002  # SCIR ahead by 0.002
    f = claims._final(t, "log_predictive").groupby(level="method").mean()
    assert f["Gibbs"] > f["SCIR"] > f["SGRLD"], "the old ordering test must pass this variant"
    c = claims.check_sfigb(t, DP, "test")
    assert c.verdict == "undecided" and c.evidence[1].verdict == "undecided"


def test_sfigb_fails_when_sgrld_beats_scir():
    """SGRLD 0.05 above SCIR (seed sds 0.005-0.014): the reverse of 'SCIR still beats SGRLD'."""
    c = claims.check_sfigb(_dp_trace({"Gibbs": -8.79, "SCIR": -8.88, "SGRLD": -8.83}, SD), DP, "test")
    assert c.verdict == "fails" and c.evidence[1].verdict == "fails"


def test_sfigb_exact_sampler_level_with_scir_is_undecided_and_below_it_fails():
    """Gibbs where SCIR is: undecided; Gibbs 0.04 below SCIR (an exact sampler scored on the wrong test set, say):
    fails."""
    c = claims.check_sfigb(_dp_trace({"Gibbs": -8.83, "SCIR": -8.83, "SGRLD": -9.0}, SD), DP, "test")
    assert c.evidence[0].verdict == "undecided" and c.verdict == "undecided", c.measured
    c = claims.check_sfigb(_dp_trace({"Gibbs": -8.87, "SCIR": -8.83, "SGRLD": -9.0}, SD), DP, "test")
    assert c.verdict == "fails" and c.evidence[0].margin < 0


def test_sfigb_one_seed_is_not_checked():
    c = claims.check_sfigb(_dp_trace({"Gibbs": -8.79, "SCIR": -8.83, "SGRLD": -9.0}, SD, seeds=[0]), DP, "test")
    assert c.verdict == "not checked" and c.holds is None
