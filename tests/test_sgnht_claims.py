"""SGNHT claim checks fed a right and a deliberately wrong result: the wrong one must fail.

Fig2a and SFig6 (a mis-scaled gradient against each marginal's noise floor) are tested in tests/test_sgnht.py;
here every other check. The tables are small DataFrames in the columns the runs write (``runs.run_double_well``,
``run_known_variance``, ``run_normal_gamma``, the ML grid runner, ``tables.stab1`` / ``tau_study`` / ``stab2`` /
``stab3``), with the quick run's shapes; each wrong variant changes what one plausible mistake would."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scalable_bayes_papers.sgnht import claims, tables

SETTINGS = {"seeds": [0, 1], "double_well": {"n_steps": 200_000},
            "gaussian": {"n_steps": 200_000, "n_data": 100, "batch_size": 10}}
CELLS = [(0.001, 1.0), (0.001, 10.0), (0.01, 1.0), (0.01, 10.0)]


# ------------------------------------------------------------------ Fig. 1: fixed friction against SGNHT
def _fig1_summary(sgnht=(0.5, 0.03)):
    """Double-well summaries per variant and seed: (mean KE, TV of the histogram against the truth)."""
    v = {"xi=1": (0.50, 0.026), "xi=10": (0.052, 0.74), "xi=0.1": (4.8, 0.52), "SGNHT": sgnht}
    return pd.DataFrame([{"variant": k, "seed": s, "mean_ke": ke * (1 + 0.002 * s), "tv": tv * (1 + 0.05 * s)}
                         for k, (ke, tv) in v.items() for s in (0, 1)])


def test_fig1_sgnht_like_the_right_friction_passes():
    assert claims.check_fig1(_fig1_summary(), SETTINGS, "test").holds is True


@pytest.mark.parametrize("sgnht", [(0.052, 0.74), (1.0, 0.2), (0.5, 0.09)],
                         ids=["thermostat_never_updated_stuck_at_xi_10", "thermostat_targets_p2_not_p2_over_n",
                              "right_temperature_three_times_the_tv"])
def test_fig1_fails_a_broken_thermostat(sgnht):
    assert claims.check_fig1(_fig1_summary(sgnht), SETTINGS, "test").holds is False


# ------------------------------------------------------------------ SFig. 4: xi settles to B quickly
def _sfig4(settle_fraction=0.03, xi_limit=1.0, n=200_000):
    """SGNHT's running mean of xi per seed: starts at 10, decays to ``xi_limit`` by ``settle_fraction`` of the run."""
    steps = np.linspace(0, n, 401)[1:].astype(int)
    tr = []
    for s in (0, 1):
        rm = xi_limit + (10 - xi_limit) * np.exp(-steps / (settle_fraction * n / 5)) + 0.01 * np.sin(steps / 997 + s)
        tr.append(pd.DataFrame({"variant": "SGNHT", "seed": s, "step": steps, "xi_running_mean": rm}))
    summ = pd.DataFrame([{"variant": "SGNHT", "seed": s, "mean_xi_second_half": xi_limit + 0.005 * s, "B": 1.0,
                          "n_steps": n} for s in (0, 1)])
    return summ, pd.concat(tr, ignore_index=True)


def test_sfig4_xi_settling_early_at_b_passes():
    c = claims.check_sfig4(*_sfig4(), SETTINGS, "test")
    assert c.holds is True, c.measured


@pytest.mark.parametrize("kw", [{"settle_fraction": 0.5}, {"xi_limit": 2.0}],
                         ids=["thermostat_gain_too_small_settles_late", "gradient_noise_counted_twice_xi_at_2B"])
def test_sfig4_fails_a_slow_or_wrong_thermostat(kw):
    assert claims.check_sfig4(*_sfig4(**kw), SETTINGS, "test").holds is False


# ------------------------------------------------------------------ Fig. 2 b/c and SFig. 5: the known-variance grid
def _kv(sghmc_rmse=None, sghmc_ke=None, xi=None, sgnht_ke=None):
    """Known-variance summaries per (method, h, A, seed): RMSE, its noise floor, mean xi and mean KE in the quick
    run's pattern (SGHMC with B-hat = 0 overheats at h = 0.01, A = 1; SGNHT's xi ~ A at h = 0.001, ~ A + 4.5
    at h = 0.01)."""
    rmse = {"SGHMC": {(0.001, 1.0): 0.28, (0.001, 10.0): 0.13, (0.01, 1.0): 0.94, (0.01, 10.0): 0.26},
            "SGNHT": {(0.001, 1.0): 0.09, (0.001, 10.0): 0.13, (0.01, 1.0): 0.05, (0.01, 10.0): 0.07}}
    ke = {"SGHMC": {(0.001, 1.0): 0.70, (0.001, 10.0): 0.52, (0.01, 1.0): 2.76, (0.01, 10.0): 0.76},
          "SGNHT": {c: 0.5 for c in CELLS}}
    xi_ = {(0.001, 1.0): 1.4, (0.001, 10.0): 10.4, (0.01, 1.0): 5.5, (0.01, 10.0): 15.6}
    rmse["SGHMC"].update(sghmc_rmse or {})
    ke["SGHMC"].update(sghmc_ke or {})
    ke["SGNHT"].update(sgnht_ke or {})
    xi_.update(xi or {})
    rows = []
    for m in ("SGHMC", "SGNHT"):
        for h, A in CELLS:
            for s in (0, 1):
                rows.append({"method": m, "h": h, "A": A, "seed": s, "rmse": rmse[m][h, A] * (1 + 0.03 * s),
                             "rmse_iid": 0.08, "mean_ke": ke[m][h, A] * (1 + 0.002 * s),
                             "mean_xi": (xi_[h, A] if m == "SGNHT" else A) * (1 + 0.01 * s)})
    return pd.DataFrame(rows)


def _ng_for_fig2():
    """A Normal-Gamma summary that only has to be well formed here (Fig2d is tested below)."""
    return _ng({c: (0.2, 50.0, 2.0) for c in CELLS}, {c: (0.1, 20.0, 2.0) for c in CELLS})


def _panel(kv, item):
    return {c.id: c for c in claims.check_fig2(kv, _ng_for_fig2(), SETTINGS, "test")}[f"SGNHT-{item}"]


def test_fig2b_fig2c_sfig5_quick_run_pattern_passes():
    kv = _kv()
    assert _panel(kv, "Fig2b").holds is True and _panel(kv, "Fig2c").holds is True
    assert claims.check_sfig5(kv, SETTINGS, "test").holds is True


def test_fig2b_and_sfig5_fail_when_sghmc_gets_the_noise_correction():
    """SGHMC run with B-hat = B (the correction the paper's SGHMC lacks): accurate and at KE 0.5 everywhere, so
    'accurate only for small h and large A' is false."""
    kv = _kv(sghmc_rmse={(0.01, 1.0): 0.06, (0.001, 1.0): 0.09, (0.01, 10.0): 0.08},
             sghmc_ke={c: 0.5 for c in CELLS})
    assert _panel(kv, "Fig2b").holds is False
    assert claims.check_sfig5(kv, SETTINGS, "test").holds is False


def test_sfig5_fails_when_sgnht_runs_hot_without_its_thermostat():
    """SGNHT with its thermostat frozen at A (it is then SGHMC): KE 2.8 at (0.01, 1)."""
    assert claims.check_sfig5(_kv(sgnht_ke={(0.01, 1.0): 2.76}), SETTINGS, "test").holds is False


@pytest.mark.parametrize("xi", [{(0.001, 10.0): 1.5}, {(0.01, 1.0): 1.2}],
                         ids=["xi_ignores_A_at_small_h", "xi_absorbs_no_noise_at_large_h"])
def test_fig2c_fails_when_xi_does_not_track_the_injected_noise(xi):
    assert _panel(_kv(xi=xi), "Fig2c").holds is False


# ------------------------------------------------------------------ Fig. 2d: tau at similar accuracy
def _ng(sghmc, sgnht, seeds=(0, 1)):
    """Normal-Gamma summaries per (method, h, A, seed): cell -> (RMSE, tau, within-chain se of tau)."""
    rows = []
    for m, cells in (("SGHMC", sghmc), ("SGNHT", sgnht)):
        for (h, A), (r, tau, se) in cells.items():
            for s in seeds:
                rows.append({"method": m, "h": h, "A": A, "seed": s, "rmse": r, "rmse_iid": 0.1, "rmse_mu": r,
                             "rmse_gamma": r, "rmse_mu_iid": 0.1, "rmse_gamma_iid": 0.1, "mean_xi": A,
                             "tau": tau * (1 + 0.02 * (s - 0.5)), "tau_se": se})
    return pd.DataFrame(rows)


# the paper's Table 1 as (RMSE, tau) per (h, A)
PAPER_SGHMC = {(0.01, 1.0): (0.629, 7.19), (0.01, 10.0): (0.286, 37.68), (0.001, 1.0): (0.292, 67.83),
               (0.001, 10.0): (0.136, 357.14)}
PAPER_SGNHT = {(0.01, 1.0): (0.175, 14.35), (0.01, 10.0): (0.026, 55.65), (0.001, 1.0): (0.091, 22.97),
               (0.001, 10.0): (0.053, 424.81)}


def _fig2d(ng):
    return {c.id: c for c in claims.check_fig2(_kv(), ng, SETTINGS, "test")}["SGNHT-Fig2d"]


def test_fig2d_papers_table_with_tight_intervals_passes():
    ng = _ng({c: (*v, 0.02 * v[1]) for c, v in PAPER_SGHMC.items()}, {c: (*v, 0.02 * v[1]) for c, v in PAPER_SGNHT.items()})
    c = _fig2d(ng)
    assert c.holds is True, c.measured


def test_fig2d_fails_when_the_lower_taus_lie_inside_sghmcs_intervals():
    """The paper's means, but SGHMC's tau known only to +-80% (within-chain se 0.8 tau, 2 seeds: the quick run's
    [-39, 180] at (0.001, 1)): a lower mean inside the interval is not 'significantly lower'. The former
    comparison of means passed it in 3 of 4 cells."""
    ng = _ng({c: (*v, 0.4 * v[1]) for c, v in PAPER_SGHMC.items()}, {c: (*v, 0.4 * v[1]) for c, v in PAPER_SGNHT.items()})
    old = claims.lower_tau_at_similar_accuracy({str(k): v for k, v in PAPER_SGHMC.items()},
                                               {str(k): v for k, v in PAPER_SGNHT.items()})
    assert old["holds"], "the comparison of means must pass this variant, else the test tests nothing"
    c = _fig2d(ng)
    assert c.holds is False, c.measured


def test_fig2d_fails_when_sgnht_mixes_five_times_as_slowly():
    """SGNHT's tau 5x the paper's in every cell (a thermostat whose friction overshoots and damps the momentum):
    the frontier reading survives 2x (SGNHT's accurate cheap cells still undercut SGHMC's), not 5x."""
    ng = _ng({c: (*v, 0.02 * v[1]) for c, v in PAPER_SGHMC.items()},
             {c: (v[0], 5 * v[1], 0.1 * v[1]) for c, v in PAPER_SGNHT.items()})
    assert _fig2d(ng).holds is False


# ------------------------------------------------------------------ STab1: RMSE per cell against the floors, tau order
def _stab1(rmse=None, tau=None, ci=0.15):
    """tables.stab1's columns: per (method, h, A) RMSE, its i.i.d. floor, tau and a 95% interval (+-ci x tau)."""
    base = {("SGHMC", 0.001, 1.0): (0.202, 0.076, 70.0), ("SGHMC", 0.001, 10.0): (0.111, 0.321, 371.0),
            ("SGHMC", 0.01, 1.0): (0.738, 0.051, 12.0), ("SGHMC", 0.01, 10.0): (0.179, 0.096, 36.8),
            ("SGNHT", 0.001, 1.0): (0.135, 0.109, 57.0), ("SGNHT", 0.001, 10.0): (0.109, 0.328, 376.0),
            ("SGNHT", 0.01, 1.0): (0.281, 0.063, 13.8), ("SGNHT", 0.01, 10.0): (0.103, 0.119, 50.1)}
    for k, v in (rmse or {}).items():
        base[k] = (v[0], v[1], base[k][2])
    for k, v in (tau or {}).items():
        base[k] = (base[k][0], base[k][1], v)
    return pd.DataFrame([{"method": m, "h": h, "A": A, "rmse": r, "rmse_iid": f, "tau": t, "tau_ci_low": t * (1 - ci),
                          "tau_ci_high": t * (1 + ci)} for (m, h, A), (r, f, t) in base.items()])


def test_stab1_quick_run_pattern_passes_with_ties_at_the_floor_unjudged():
    c = claims.check_stab1(_stab1(), SETTINGS, "test")
    assert c.holds is True, c.measured
    assert c.details["sgnht_lower_rmse"]["h=0.001 A=10"] is None  # 0.109 vs 0.111, floors 0.33: a tie


def test_stab1_a_tie_at_the_floor_with_sgnht_above_is_not_a_failure():
    """The former check failed a correct SGNHT whose RMSE sat 0.002 above SGHMC's, both at a third of their floor."""
    c = claims.check_stab1(_stab1(rmse={("SGNHT", 0.001, 10.0): (0.113, 0.328)}), SETTINGS, "test")
    assert c.holds is True


def test_stab1_fails_sgnht_beyond_its_floor_where_sghmc_is_at_its_own():
    """A mis-scaled gradient narrows SGNHT's posterior and shrinks its floor: RMSE 0.17 is 3.4x its floor 0.05
    while SGHMC's 0.179 is 1.9x its own. The raw values still put SGNHT lower, which the former check took."""
    t = _stab1(rmse={("SGNHT", 0.01, 10.0): (0.17, 0.05)})
    assert (t.set_index(["method", "h", "A"]).loc[("SGNHT", 0.01, 10.0), "rmse"]
            < t.set_index(["method", "h", "A"]).loc[("SGHMC", 0.01, 10.0), "rmse"])
    c = claims.check_stab1(t, SETTINGS, "test")
    assert c.holds is False and c.details["sgnht_lower_rmse"]["h=0.01 A=10"] is False


def test_stab1_fails_when_tau_does_not_grow_with_a_beyond_its_intervals():
    """tau at A = 10 above A = 1 by less than the intervals (e.g. tau of mu alone, which A barely moves): the
    means are ordered, the intervals overlap."""
    t = _stab1(tau={("SGNHT", 0.01, 10.0): 15.0})
    c = claims.check_stab1(t, SETTINGS, "test")
    assert c.details["tau_increases_with_A"]["SGNHT h=0.01"] is True and c.holds is False


# ------------------------------------------------------------------ the tau study (Fig2d at 10^6 steps)
def _tau_study(ci):
    rows = []
    for b in (10, 50):
        for (m, cells) in (("SGHMC", PAPER_SGHMC), ("SGNHT", PAPER_SGNHT)):
            for (h, A), (r, t) in cells.items():
                rows.append({"n_data": 100, "batch_size": b, "method": m, "h": h, "A": A, "rmse": r, "tau": t,
                             "tau_ci_low": t * (1 - ci), "tau_ci_high": t * (1 + ci), "n_diverged": 0})
    return pd.DataFrame(rows)


TAU = {"n_steps": 10**6, "seeds": [0, 1, 2, 3, 4], "n_data": [100], "batch_sizes": [10, 50]}


def test_tau_study_significantly_lower_passes_and_overlapping_fails():
    assert claims.check_tau_study(_tau_study(0.05), TAU, "test").holds is True
    assert claims.check_tau_study(_tau_study(0.8), TAU, "test").holds is False


# ------------------------------------------------------------------ Fig. 3, STab2, STab3: the ML grid
ML = {"tasks": ["bnn", "bpmf", "lda"], "seeds": [0, 1], "bnn": {"n_iter": 100, "burnin": 20, "eta": [2e-7, 4e-7, 8e-7]},
      "bpmf": {"n_iter": 100, "burnin": 20, "eta": [2e-7, 4e-7, 8e-7]}, "lda": {"n_iter": 100, "burnin": 20, "eta": [2e-5, 4e-5, 8e-5]}}
ETAS = {"bnn": [2e-7, 4e-7, 8e-7], "bpmf": [2e-7, 4e-7, 8e-7], "lda": [2e-5, 4e-5, 8e-5]}
LEVEL = {"bnn": 6.0, "bpmf": 0.905, "lda": 2380.0}
SD = {"bnn": 0.4, "bpmf": 0.0006, "lda": 40.0}


def _ml(sghmc_worse=None, sgnht_worse=None, sgnht_ke=0.5, sgnht_offset=None, val_best=None):
    """ML run summaries (task, seed, method, a, eta, metric, val_metric, diverged, mean_ke): per task the metric
    (lower is better) rises with eta by ``*_worse[task]`` per grid step at the smaller a; seeds scatter by SD."""
    rng = np.random.default_rng(9)
    sghmc_worse = {"bnn": 3.0, "bpmf": 0.01, "lda": 300.0, **(sghmc_worse or {})}
    sgnht_worse = {"bnn": 0.0, "bpmf": 0.0, "lda": 0.0, **(sgnht_worse or {})}
    rows = []
    for task, etas in ETAS.items():
        for m in ("SGHMC", "SGNHT"):
            for a in (0.001, 0.01):
                for i, eta in enumerate(etas):
                    for s in (0, 1):
                        worse = (sghmc_worse if m == "SGHMC" else sgnht_worse)[task] * i if a == 0.001 else 0.0
                        off = (sgnht_offset or {}).get(task, 0.0) if m == "SGNHT" else 0.0
                        v = LEVEL[task] + worse + off + rng.normal(0, SD[task])
                        best = (val_best or {}).get((task, m))
                        val = v + (0.0 if best is None else (-10 * SD[task] if (a, eta) == best else 0.0))
                        rows.append({"task": task, "seed": s, "method": m, "a": a, "eta": eta, "metric": v,
                                     "val_metric": val, "diverged": False,
                                     "mean_ke": sgnht_ke if m == "SGNHT" else 0.9 + 0.1 * i})
    return pd.DataFrame(rows)


def _fig3(summary):
    return {c.id: c for c in claims.check_fig3(summary, ML, "test")}


def test_fig3_sgnht_stable_where_sghmc_degrades_passes():
    c = _fig3(_ml())
    assert all(c[f"SGNHT-Fig3-{t}"].holds is True for t in ("bnn", "bpmf", "lda")), [c[k].measured for k in c]
    assert c["SGNHT-Fig3-KE"].holds is True and c["SGNHT-Fig3-netflix"].holds is None


@pytest.mark.parametrize("task", ["bnn", "bpmf", "lda"])
def test_fig3_fails_when_sgnht_degrades_like_sghmc(task):
    """SGNHT with its thermostat frozen (it is SGHMC then): it degrades with eta as SGHMC does, plus noise."""
    worse = {"bnn": 3.0, "bpmf": 0.01, "lda": 300.0}[task]
    c = _fig3(_ml(sgnht_worse={task: 1.5 * worse}))
    assert c[f"SGNHT-Fig3-{task}"].holds is False


@pytest.mark.parametrize("task", ["bnn", "bpmf", "lda"])
def test_fig3_fails_when_sgnht_is_sghmc_with_its_thermostat_frozen(task):
    """SGNHT degrading exactly as SGHMC does (its thermostat frozen at a makes it SGHMC, the same chain on the same
    seed): not 'more stable'.
    The former test (SGNHT no worse than SGHMC + 1 pooled sd) passed it."""
    s = _ml()
    sghmc = s[(s.task == task) & (s.method == "SGHMC")].set_index(["a", "eta", "seed"])["metric"]
    sg = (s.task == task) & (s.method == "SGNHT")
    # same seeds, same random stream, friction fixed at a: the very chain SGHMC ran
    s.loc[sg, "metric"] = sghmc.loc[list(zip(s.loc[sg, "a"], s.loc[sg, "eta"], s.loc[sg, "seed"]))].to_numpy()
    c = _fig3(s)
    d = c[f"SGNHT-Fig3-{task}"].details
    assert d["degradation_small_a"]["SGNHT"] <= d["degradation_small_a"]["SGHMC"] + d["pooled_sd"]  # old test held
    assert c[f"SGNHT-Fig3-{task}"].holds is False


def test_fig3_ke_fails_when_sgnht_runs_hot():
    """A thermostat that targets the wrong temperature: SGNHT's kinetic energy at 0.7 in every run."""
    assert _fig3(_ml(sgnht_ke=0.7))["SGNHT-Fig3-KE"].holds is False


PICKS = {("bnn", "SGHMC"): (0.01, 4e-7), ("bnn", "SGNHT"): (0.01, 2e-7), ("bpmf", "SGHMC"): (0.01, 2e-7),
         ("bpmf", "SGNHT"): (0.01, 8e-7), ("lda", "SGHMC"): (0.01, 8e-5), ("lda", "SGNHT"): (0.01, 8e-5)}


def test_stab2_sgnht_better_beyond_the_seed_spread_passes():
    s = _ml(val_best=PICKS, sgnht_offset={"bnn": -3 * SD["bnn"], "bpmf": -3 * SD["bpmf"], "lda": -3 * SD["lda"]})
    assert claims.check_stab2(tables.stab2(s), s, ML, "test").holds is True


def test_stab2_sgnht_identical_to_sghmc_is_not_better():
    """SGNHT with its thermostat frozen at a is SGHMC: the same chain on the same seed, the same test metric. The
    former test (SGNHT not above SGHMC + 1 sd) let it hold; now no task is resolved."""
    s = _ml(val_best={**PICKS, ("bpmf", "SGNHT"): (0.01, 2e-7)})
    sghmc = s[s.method == "SGHMC"].set_index(["task", "a", "eta", "seed"])["metric"]
    sg = s.method == "SGNHT"
    s.loc[sg, "metric"] = sghmc.loc[list(zip(s.loc[sg, "task"], s.loc[sg, "a"], s.loc[sg, "eta"],
                                             s.loc[sg, "seed"]))].to_numpy()
    s.loc[sg, "val_metric"] = s[s.method == "SGHMC"]["val_metric"].to_numpy()
    c = claims.check_stab2(tables.stab2(s), s, ML, "test")
    assert c.holds is None and set(c.details["sgnht_better_beyond_1_pooled_sd"].values()) == {None}


@pytest.mark.parametrize("task", ["bnn", "bpmf", "lda"])
def test_stab2_fails_when_sgnht_is_worse_by_several_seed_sds(task):
    """SGNHT 3 pooled sd worse at its selected cell (e.g. a wrong sign in the thermostat's friction term,
    which it survives at small eta)."""
    s = _ml(val_best=PICKS, sgnht_offset={task: 3 * SD[task]})
    c = claims.check_stab2(tables.stab2(s), s, ML, "test")
    assert c.holds is False and c.details["sgnht_better_beyond_1_pooled_sd"][task] is False


def test_stab3_larger_eta_for_sgnht_on_bpmf_passes_and_smaller_or_equal_fails():
    s = _ml(val_best=PICKS)
    assert claims.check_stab3(tables.stab3(s), s, ML, "test").holds is True
    smaller = _ml(val_best={**PICKS, ("bpmf", "SGNHT"): (0.01, 2e-7), ("bpmf", "SGHMC"): (0.01, 4e-7)})
    assert claims.check_stab3(tables.stab3(smaller), smaller, ML, "test").holds is False
    equal = _ml(val_best={**PICKS, ("bpmf", "SGNHT"): (0.01, 2e-7)})
    assert claims.check_stab3(tables.stab3(equal), equal, ML, "test").holds is False
