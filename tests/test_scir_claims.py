"""SCIR claim checks fed a right and a deliberately wrong result: the wrong one must fail.

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
    assert c.holds is True, c.measured
    b = c.details["scir_median_bias"]
    assert abs(b["bias"]) <= b["threshold"] and 0.05 < b["sd_exact"] < 0.3  # 1,000 i.i.d. draws: ~0.14 decades


def test_fig1_autocorrelated_but_unbiased_sampler_passes():
    """A chain whose per-seed median wanders by SCIR's measured seed sd (~0.8 decades at the tuned step, 1,000
    autocorrelated draws) but is centred on the exact one: its own spread widens the bound, so it passes."""
    rng = np.random.default_rng(3)
    shift = dict(zip(SEEDS, rng.normal(0, 0.8, len(SEEDS)) - 0.0))
    c = claims.check_fig1(_fig1_table(lambda s: _omega5(0.1, 100 + s) * 10 ** shift[s]), FIG1, "test")
    assert c.details["scir_median_bias"]["sd_method"] > 0.4
    assert c.holds is True, c.measured


def test_fig1_sampler_biased_by_a_fraction_of_a_decade_fails():
    """A sampler with a mis-scaled prior term (alpha 0.12 instead of 0.1 on every component, as a wrong scaling
    of the CIR process's shape would give) mixes perfectly but moves omega_5's median up by ~0.6 decades: far
    beyond the exact sampler's spread (~0.14 decades per seed), within the old 1-decade allowance."""
    t = _fig1_table(lambda s: _omega5(0.12, 100 + s))
    assert _old_fig1_scir_ok(t), "the old check must pass this wrong variant, else the test tests nothing"
    c = claims.check_fig1(t, FIG1, "test")
    b = c.details["scir_median_bias"]
    assert c.holds is False and 0.3 < b["bias"] < 1 and b["bias"] > b["threshold"]
    assert "beyond the seeds' spread" in c.measured


def test_median_bias_test_needs_two_seeds():
    med = pd.DataFrame({"SCIR": [-6.0], "Exact": [-6.2]})
    assert claims.median_bias_test(med)["holds"] is None


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
    assert c.holds is True, c.measured
    g = c.details["cluster_gap"]
    assert g["sgrld_minus_scir"] > g["threshold"] > 0


@pytest.mark.parametrize("sgrld", [[24, 30, 18, 27, 22], [18, 21, 17, 22, 20]])
def test_fig3b_cluster_gap_within_the_seed_spread_or_reversed_fails(sgrld):
    """SGRLD with as many clusters as SCIR up to the seeds' spread (mean +1.6, pooled sd 4.6), or fewer: no
    'many more clusters than needed'. The old part (SGRLD's mean above SCIR's) passed the first."""
    scir = [20, 26, 17, 28, 21]
    c = claims.check_fig3b(_fig3b_trace(scir, sgrld), FIG3B, "test")
    assert c.holds is False and c.details["sgrld_more_clusters"] is False
    assert c.details["scir_better"] and c.details["scir_smaller_sd"]  # only the cluster part fails
    if np.mean(sgrld) > np.mean(scir):
        assert "pooled sd over seeds" in c.measured  # the old check held here: mean SGRLD > mean SCIR


def test_fig3b_one_seed_leaves_the_cluster_part_unchecked():
    c = claims.check_fig3b(_fig3b_trace([20], [40]), FIG3B, "test")
    assert c.details["sgrld_more_clusters"] is None and c.holds is True


def test_fig1_one_seed_is_not_checked():
    t = _fig1_table(lambda s: _omega5(0.1, 100 + s))
    c = claims.check_fig1(t[t.seed == 0], FIG1, "test")
    assert c.holds is None and "spread unknown with one seed" in c.measured and "Needs 2+ seeds" in c.note


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
    assert c.holds is True, c.measured
    assert c.details["scir_ks_drop"]["mean"] > c.details["scir_ks_drop"]["threshold"] > 0


def test_fig2_fails_when_sgrld_matches_scir_on_the_sparse_target():
    """An SGRLD that samples the sparse target as well as SCIR (what a wrongly-tuned comparison, or SGRLD with
    SCIR's exact transition by mistake, would plot): no 'much lower KS' for SCIR."""
    scir = lambda p: 0.18 * (p / 0.001) ** -0.12  # noqa: E731
    c = claims.check_fig2(_fig2_table(sgrld_sparse=lambda p: scir(p) * 1.05), FIG2, "test")
    assert c.holds is False
    assert c.details["verdicts"]["sparse_ratio_ge_2_at_ge_0.05"] is False


def test_fig2_fails_when_scir_does_not_approach_the_exact_sampler():
    """A SCIR whose KS does not move with the minibatch (flat at 0.12; the minibatch estimate not rescaled by N/n
    would leave it there): its seed means at the two ends differ by noise only. The former test (last mean below
    the first) passed whenever noise put the last below the first, as it does here."""
    t = _fig2_table(scir_sparse=lambda p: 0.12)
    sp = t[(t.target == "sparse") & (t.method == "SCIR")].groupby("proportion")["ks_mean"].mean()
    if not sp.iloc[-1] < sp.iloc[0]:  # make the old test pass: the wrong variant it let through
        t.loc[(t.target == "sparse") & (t.method == "SCIR") & (t.proportion == PROPS[-1]), "ks_mean"] -= 0.005 + (
            sp.iloc[-1] - sp.iloc[0])
        sp = t[(t.target == "sparse") & (t.method == "SCIR")].groupby("proportion")["ks_mean"].mean()
    assert sp.iloc[-1] < sp.iloc[0]
    c = claims.check_fig2(t, FIG2, "test")
    assert c.holds is False and c.details["verdicts"]["sparse_scir_improves_with_size"] is False


def test_fig2_fails_when_the_dense_target_separates_the_methods():
    c = claims.check_fig2(_fig2_table(sgrld_dense_factor=3.0), FIG2, "test")
    assert c.holds is False and c.details["verdicts"]["dense_within_2x"] is False


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
    assert claims.check_fig3a(_lda_trace({"SCIR": 2300, "SGRLD": 2400}), LDA, "test").holds is True


@pytest.mark.parametrize("scir", [2400, 2395, 2450])
def test_fig3a_fails_when_scir_ends_level_with_or_above_sgrld(scir):
    """SCIR ending where SGRLD does (up to the seeds' spread) or above it: not 'SCIR keeps descending'."""
    c = claims.check_fig3a(_lda_trace({"SCIR": scir, "SGRLD": 2400}), LDA, "test")
    assert c.holds is False, c.measured


def test_fig3a_one_seed_is_not_checked():
    assert claims.check_fig3a(_lda_trace({"SCIR": 2300, "SGRLD": 2400}, seeds=[0]), LDA, "test").holds is None


def test_sfiga_sg_methods_near_cgs_pass():
    assert claims.check_sfiga(_lda_trace({"SCIR": 2450, "SGRLD": 2400, "CGS": 2300}), LDA, "test").holds is True


def test_sfiga_fails_when_the_sg_methods_are_far_worse_than_cgs():
    """Both SG samplers 30% above collapsed Gibbs (e.g. a perplexity scored on a mis-scaled n^_kw): not 'quite
    competitive'."""
    c = claims.check_sfiga(_lda_trace({"SCIR": 3100, "SGRLD": 3000, "CGS": 2300}), LDA, "test")
    assert c.holds is False and c.details["gap"] > 0.1


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


def test_sfigb_fails_when_sgrld_gets_stuck_where_scir_does():
    """SGRLD stuck at SCIR's level (both SG methods equally stuck; the paper says SCIR still beats SGRLD): the
    means are ordered by noise alone. The former test (means ordered) passed this when noise put SCIR above."""
    t = _dp_trace({"Gibbs": -8.79, "SCIR": -8.83, "SGRLD": -8.83}, {"Gibbs": 0.007, "SCIR": 0.01, "SGRLD": 0.01})
    f = claims._final(t, "log_predictive").groupby(level="method").mean()
    t.loc[t.method == "SGRLD", "log_predictive"] += f["SCIR"] - f["SGRLD"] - 0.002  # SCIR ahead by 0.002
    f = claims._final(t, "log_predictive").groupby(level="method").mean()
    assert f["Gibbs"] > f["SCIR"] > f["SGRLD"], "the old ordering test must pass this variant"
    c = claims.check_sfigb(t, DP, "test")
    assert c.holds is False and c.details["gaps"]["SCIR - SGRLD"]["holds"] is False


def test_sfigb_fails_when_the_exact_sampler_is_no_better_than_scir():
    c = claims.check_sfigb(_dp_trace({"Gibbs": -8.83, "SCIR": -8.83, "SGRLD": -9.0}, SD), DP, "test")
    assert c.holds is False and c.details["gaps"]["Gibbs - SCIR"]["holds"] is False


def test_sfigb_one_seed_is_not_checked():
    c = claims.check_sfigb(_dp_trace({"Gibbs": -8.79, "SCIR": -8.83, "SGRLD": -9.0}, SD, seeds=[0]), DP, "test")
    assert c.holds is None
