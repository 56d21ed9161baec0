"""ESCA Fig. 3 (App. A) re-posed: EM restarts, starts of increasing severity, and the paired claim."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scalable_bayes.inference.gmm_sem import fit_em_sem, init_kmeanspp
from scalable_bayes_papers.esca import claims, figures
from scalable_bayes_papers.esca.data import make_gmm_data
from scalable_bayes_papers.esca.runs import bad_init, em_restart, run_fig3_seed, severity_starts
from scalable_bayes_papers.esca.study_fig3 import missed_clusters

KW = dict(n_components=4, n_train=3000, n_test=300)


def test_severity_starts_interpolate_between_the_old_good_and_bad_starts():
    X, _, _ = make_gmm_data(seed=2, **{k: KW[k] for k in ("n_components", "n_train", "n_test")})
    st = severity_starts(X, 4, 2, [0.0, 0.25, 1.0])
    rng = np.random.default_rng([2, 1])
    good, bad = init_kmeanspp(X, 4, rng), bad_init(X, 4, rng)  # the stream of the earlier two-scenario runs
    np.testing.assert_array_equal(st[0.0].means, good.means)
    np.testing.assert_array_equal(st[1.0].means, bad.means)
    np.testing.assert_allclose(st[0.25].means, 0.75 * good.means + 0.25 * bad.means)
    np.testing.assert_array_equal(st[0.25].covs, good.covs)
    assert np.all(np.abs(st[1.0].means - X.mean(0)) <= 0.5)
    np.testing.assert_array_equal(em_restart(X, 4, 2, 0).means, good.means)
    assert not np.array_equal(em_restart(X, 4, 2, 1).means, good.means)
    with pytest.raises(ValueError, match=r"severities must lie in \[0, 1\]"):
        severity_starts(X, 4, 2, [0.0, 1.5])


def test_run_fig3_seed_runs_restarts_sem_and_the_same_start_control():
    df = run_fig3_seed(seed=1, severities=[0.0, 0.5, 1.0], n_restarts=3, n_iter=6, **KW)
    runs = df[["method", "severity", "restart"]].drop_duplicates().fillna(-9).itertuples(index=False)
    assert sorted(map(tuple, runs)) == sorted([("EM", -9, 0), ("EM", -9, 1), ("EM", -9, 2), ("SEM", 0.0, -1),
                                               ("SEM", 0.5, -1), ("SEM", 1.0, -1), ("EM_same_start", 0.5, -1),
                                               ("EM_same_start", 1.0, -1)])
    first = df[df["iteration"] == 0]
    # SEM at severity 0 starts where EM (restart 0) starts; EM_same_start where SEM of its severity starts
    em0 = first[(first["method"] == "EM") & (first["restart"] == 0)]["test_ll"].item()
    assert first[(first["method"] == "SEM") & (first["severity"] == 0.0)]["test_ll"].item() == em0
    X, Xte, _ = make_gmm_data(seed=1, **KW)
    _, hist = fit_em_sem(X, Xte, severity_starts(X, 4, 1, [1.0])[1.0], "EM", 6, seed=123)  # EM ignores the seed
    got = df[(df["method"] == "EM_same_start") & (df["severity"] == 1.0)].sort_values("iteration")["test_ll"]
    np.testing.assert_allclose(got.to_numpy(), [h["test_ll"] for h in hist], rtol=1e-12)
    with pytest.raises(ValueError, match="n_restarts must be >= 2"):
        run_fig3_seed(seed=1, n_restarts=1, n_iter=2, **KW)


def _fig3_frame(sem_shift, restart_sd=0.01, n_seeds=20, seed=0, offset=0.0):
    """Final rows of synthetic Fig. 3 runs: EM restarts spread by ``restart_sd``; SEM at severities 0
    and 1 shifted by ``sem_shift`` = {severity: mean difference to EM restart 0}."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(n_seeds):
        base = -6.3 + 0.05 * rng.standard_normal() + offset
        em = [base + (0.0 if r == 0 else restart_sd * rng.standard_normal()) for r in range(3)]
        for r, v in enumerate(em):
            rows.append({"seed": s, "method": "EM", "severity": np.nan, "restart": r, "iteration": 10, "test_ll": v})
        for sev, d in sem_shift.items():
            rows.append({"seed": s, "method": "SEM", "severity": sev, "restart": -1, "iteration": 10,
                         "test_ll": em[0] + d + 0.002 * rng.standard_normal()})
            if sev > 0:
                rows.append({"seed": s, "method": "EM_same_start", "severity": sev, "restart": -1, "iteration": 10,
                             "test_ll": em[0] + 2 * d})
    df = pd.DataFrame(rows)
    df["true_test_ll"] = -6.25 + offset
    return df


SETTINGS = {"n_train": 100, "n_test": 10, "n_iter": 10, "n_components": 4}


def test_fig3_claim_measures_sem_against_the_spread_of_em_restarts():
    ok = claims.check_fig3(_fig3_frame({0.0: 0.0, 1.0: -0.002}), SETTINGS, "test")
    assert ok.verdict == "holds", ok.measured
    spread = ok.details["em_restart_spread"]
    # the restart spread is the mean |EM_r - EM_r'|: for restart sd 0.01 about 0.01 (pairs with r = 0: 0.8 sd,
    # pairs of two perturbed restarts: 1.13 sd)
    assert 0.005 < spread < 0.015
    bad = claims.check_fig3(_fig3_frame({0.0: 0.0, 1.0: -0.05}), SETTINGS, "test")
    assert bad.verdict == "fails" and bad.details["severity"][1.0]["verdict"] == "fails"
    assert bad.details["severity"][0.0]["verdict"] == "holds"
    assert bad.details["severity"][1.0]["sem_above_em_same_start_seeds"] == 20
    assert "margin to minus the restart spread" in bad.measured and "EM from the same start -0.1" in bad.measured


def test_fig3_verdict_does_not_move_with_the_scale_of_the_data():
    """Rescaling the data by c shifts every log-likelihood by -d log c: the paired, absolute verdict and
    numbers stay; a relative tolerance (the earlier claim) would not."""
    a = _fig3_frame({0.0: 0.0, 1.0: -0.012})
    b = _fig3_frame({0.0: 0.0, 1.0: -0.012}, offset=-2 * np.log(10.0))
    ca, cb = claims.check_fig3(a, SETTINGS, "test"), claims.check_fig3(b, SETTINGS, "test")
    assert ca.verdict == cb.verdict
    assert [e.margin for e in ca.evidence] == pytest.approx([e.margin for e in cb.evidence], abs=1e-12)
    assert ca.details["em_restart_spread"] == pytest.approx(cb.details["em_restart_spread"], abs=1e-12)
    assert ca.details["severity"][1.0]["sem_minus_em_mean"] == pytest.approx(
        cb.details["severity"][1.0]["sem_minus_em_mean"], abs=1e-12)


def test_fig3_figure_draws_from_real_runs(tmp_path):
    df = pd.concat([run_fig3_seed(seed=s, severities=[0.0, 1.0], n_restarts=2, n_iter=4, **KW) for s in (0, 1)])
    claim = claims.check_fig3(df, {**KW, "n_iter": 4}, "test")
    assert set(claim.details["severity"]) == {0.0, 1.0} and claim.details["n_restarts"] == 2
    figures.fig3(df, {**KW, "n_iter": 4}, tmp_path / "Fig3.png")
    assert (tmp_path / "Fig3.png").stat().st_size > 1000


def test_missed_clusters_counts_true_clusters_without_a_fitted_component():
    X, _, true = make_gmm_data(n_components=4, n_train=200, n_test=10, seed=0)
    assert missed_clusters(true, true) == 0
    merged = true._replace(means=np.repeat(true.means[:1], 4, axis=0))  # every fitted mean on cluster 0
    far = np.linalg.norm(true.means - true.means[0], axis=1) > 3 * np.sqrt(np.diagonal(true.covs, axis1=1, axis2=2).max(1))
    assert missed_clusters(merged, true) == int(far.sum()) > 0


def test_study_fig3_summary_pairs_each_budget_with_em_of_that_budget():
    from scalable_bayes_papers.esca.study_fig3 import summarise

    rows = []
    for n, shift in ((100, 0.0), (400, 1.0)):  # every LL of the 400-iteration runs one nat higher
        for seed in range(3):
            rows.append({"seed": seed, "n_iter": n, "method": "EM", "severity": 0.0, "test_ll": -6.0 + shift, "missed": 0})
            rows.append({"seed": seed, "n_iter": n, "method": "SEM", "severity": 1.0,
                         "test_ll": -6.0 + shift - 0.01 * seed, "missed": seed})
    s = summarise(pd.DataFrame(rows)).set_index("n_iter")
    assert s.loc[100, "minus_em_mean"] == pytest.approx(-0.01) == s.loc[400, "minus_em_mean"]
    assert s.loc[400, "missed_mean"] == 1.0 and s.loc[100, "corr_diff_missed"] == pytest.approx(-1.0)
