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
