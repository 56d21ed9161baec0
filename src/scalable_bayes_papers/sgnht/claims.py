"""Claims of the SGNHT paper (Ding et al. 2014), checked on the run tables.

Per item: the paper's claim in one sentence (:data:`CLAIMS`), the paper's values where it gives numbers
(:data:`STAB1_PAPER`, :data:`PAPER_STAB2`, :data:`PAPER_STAB3`) and a pure ``check_<item>(...) ->``
:class:`~scalable_bayes.reporting.Claim` (no I/O, no plotting). The thresholds that turn the paper's
words into a test are in each check's docstring and the claim's ``note``; README.md beside this file
gives the reasons. The scale string of every claim is built here from the profile and the settings.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scalable_bayes.reporting import Claim

PAPER = "sgnht"

# ------------------------------------------------------------------ the paper's items and values
CLAIMS = {
    "Fig1": "With injected gradient noise B = 1, fixed friction xi = B samples correctly with kinetic energy 0.5, "
            "xi = 10 starves the kinetic energy and sticks in one well, xi = 0.1 overheats and over-disperses, "
            "while SGNHT samples as well as xi = B with kinetic energy 0.5.",
    "SFig4": "The SGNHT thermostat xi converges quickly to the injected noise level B = 1 in the double-well run.",
    "Fig2": "SGNHT samples the mean of a Gaussian accurately for all (h, A) while SGHMC (B-hat = 0) only does for "
            "small h and large A; mean xi ~ A at h = 0.001 but >> A at h = 0.01; SGNHT has lower autocorrelation "
            "time than SGHMC at similar accuracy on the Normal-Gamma problem.",
    "SFig5": "SGHMC does not keep the kinetic energy at 0.5 unless h is small and A large; SGNHT does in every setting.",
    "SFig6": "On the Normal-Gamma posterior SGNHT gives good marginals of mu and gamma for all (h, A); SGHMC only for "
             "small h and large A.",
    "STab1": "SGNHT has lower density RMSE than SGHMC in every (h, A) column; the autocorrelation time of mu + gamma "
             "grows with A (and with smaller h).",
    "Fig3": "SGNHT is more stable than SGHMC as eta grows (SGHMC with the smaller a degrades or diverges at the "
            "largest eta) and keeps the kinetic energy near 0.5 while SGHMC's is usually higher.",
    "STab2": "At the validation-selected (a, eta), SGNHT has better test performance than SGHMC on every task.",
    "STab3": "SGNHT tolerates (is selected with) larger step sizes eta than SGHMC on the matrix-factorisation tasks.",
}

# App. E, Table 1: (RMSE, tau) per (method, h, A)
STAB1_PAPER = {("SGHMC", 0.01, 1.0): (0.629, 7.19), ("SGHMC", 0.01, 10.0): (0.286, 37.68),
               ("SGHMC", 0.001, 1.0): (0.292, 67.83), ("SGHMC", 0.001, 10.0): (0.136, 357.14),
               ("SGNHT", 0.01, 1.0): (0.175, 14.35), ("SGNHT", 0.01, 10.0): (0.026, 55.65),
               ("SGNHT", 0.001, 1.0): (0.091, 22.97), ("SGNHT", 0.001, 10.0): (0.053, 424.81)}
# App. G, Tables 2 and 3
PAPER_STAB2 = {"bnn": {"SGHMC": "2.25", "SGNHT": "2.15"}, "bpmf": {"SGHMC": "0.8582 ± 0.0004", "SGNHT": "0.8572 ± 0.0003"},
               "netflix": {"SGHMC": "0.8232 ± 0.0000", "SGNHT": "0.8224 ± 0.0002"},
               "lda": {"SGHMC": "1125.2 ± 8.9", "SGNHT": "1102.7 ± 6.7"}}
PAPER_STAB3 = {"bnn": {"SGHMC": "(0.01, 2e-7)", "SGNHT": "(0.01, 2e-7)"}, "bpmf": {"SGHMC": "(0.01, 2e-7)", "SGNHT": "(0.01, 8e-7)"},
               "netflix": {"SGHMC": "(0.01, 2e-7)", "SGNHT": "(0.01, 8e-7)"}, "lda": {"SGHMC": "(0.1, 2e-5)", "SGNHT": "(0.1, 2e-5)"}}

# Sec. 5.2: the metric and the data (as run here) of each machine-learning task
METRIC = {"bnn": "test error (%)", "bpmf": "test RMSE", "lda": "test perplexity"}
TASK_NAMES = {"bnn": "MNIST (BNN)", "bpmf": "MovieLens ml-100k (BPMF)", "lda": "KOS/OHSUMED (LDA)"}
NETFLIX_NOTE = "Netflix: not reproducible here (data set not available and not redistributable; no stand-in in the mirror)"
ML_NOTE = ("Stand-ins: MNIST train/val/test drawn from the 10,000 t10k images (training images not in the mirror); "
           "MovieLens ml-100k for ml-1m; KOS or OHSUMED abstracts for the ICML abstracts; " + NETFLIX_NOTE +
           ". Selection on a held-out validation split and sd over chain seeds (paper: 5-fold CV, sd over folds).")


# ------------------------------------------------------------------ scale strings
def synthetic_scale(item: str, settings: dict, profile: str) -> str:
    """Scale of a synthetic item: the profile, steps per chain (paper 10^6), data size and seeds."""
    dw, g = settings["double_well"], settings["gaussian"]
    seeds = len(settings["seeds"])
    if item in ("Fig1", "SFig4"):
        return f"{profile}: {dw['n_steps']:,} steps per chain (paper 10^6), {seeds} seed(s)"
    return f"{profile}: {g['n_steps']:,} steps per chain (paper 10^6), N = {g['n_data']}, minibatch {g['batch_size']}, {seeds} seed(s)"


def ml_scale(summary: pd.DataFrame, settings: dict, profile: str) -> str:
    """Scale of an ML item: iterations per task, seeds, and the factor on the paper's eta grid."""
    tasks = sorted(summary["task"].unique())
    scale = (f"{profile}: " + "; ".join(f"{t} {settings[t]['n_iter']} iterations (burn-in {settings[t]['burnin']})" for t in tasks)
             + f"; {summary['seed'].nunique()} seed(s); paper: 50k-100k iterations")
    if "eta_used" in summary.columns:
        f = (summary["eta_used"] / summary["eta"]).groupby(summary["task"]).first()
        scale += "; eta = paper's grid x " + ", ".join(f"{t} {v:.3g}" for t, v in f.items())
        scale += " (eta_scale; auto = paper's training size / ours, which keeps eta * N)"
    return scale


def _synthetic_claim(item, r, measured, settings, profile, paper_value=None, note=None) -> Claim:
    return Claim(id=f"SGNHT-{item}", paper=PAPER, claim=CLAIMS[item], measured=measured, holds=bool(r["holds"]),
                 scale=synthetic_scale(item, settings, profile), paper_value=paper_value,
                 details={k: v for k, v in r.items() if k != "holds"}, note=note)


def _ml_claim(item, r, measured, summary, settings, profile, paper_value=None) -> Claim:
    return Claim(id=f"SGNHT-{item}", paper=PAPER, claim=CLAIMS[item], measured=measured, holds=r.get("holds"),
                 scale=ml_scale(summary, settings, profile), paper_value=paper_value,
                 details={k: v for k, v in r.items() if k != "holds"}, note=ML_NOTE)


# ------------------------------------------------------------------ Fig. 1 / SFig. 4: double well (Sec. 3, App. B)
def _fig1(summary: pd.DataFrame) -> dict:
    """|KE - 0.5| < 0.05 for xi = 1 and SGNHT; TV(SGNHT) <= TV(xi=1) + 0.02;
    TV(xi=10), TV(xi=0.1) >= 2 TV(xi=1). Means over seeds."""
    m = summary.groupby("variant")[["mean_ke", "tv"]].mean()
    ke, tv = m["mean_ke"], m["tv"]
    checks = {
        "ke_xi1_ok": abs(ke["xi=1"] - 0.5) < 0.05,
        "ke_sgnht_ok": abs(ke["SGNHT"] - 0.5) < 0.05,
        "tv_sgnht_close_to_xi1": tv["SGNHT"] <= tv["xi=1"] + 0.02,
        "tv_xi10_worse": tv["xi=10"] >= 2 * tv["xi=1"],
        "tv_xi0.1_worse": tv["xi=0.1"] >= 2 * tv["xi=1"],
    }
    return {"holds": all(checks.values()), "checks": {k: bool(v) for k, v in checks.items()},
            "mean_ke": ke.round(4).to_dict(), "tv": tv.round(4).to_dict()}


def check_fig1(summary: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """SGNHT-Fig1 from the double-well summaries (all seeds); see :func:`_fig1` for the test."""
    r = _fig1(summary)
    measured = (f"mean KE: {r['mean_ke']}; TV(hist, truth): {r['tv']}")
    return _synthetic_claim("Fig1", r, measured, settings, profile)


def _sfig4(summary: pd.DataFrame) -> dict:
    """|mean xi over the second half of the SGNHT chain - B| < 0.1 (mean over seeds)."""
    xi = float(summary.loc[summary["variant"] == "SGNHT", "mean_xi_second_half"].mean())
    B = float(summary["B"].iloc[0])
    return {"holds": abs(xi - B) < 0.1, "mean_xi_second_half": xi, "B": B}


def check_sfig4(summary: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """SGNHT-SFig4 from the double-well summaries; see :func:`_sfig4`."""
    r = _sfig4(summary)
    measured = f"mean xi over the 2nd half of the SGNHT chain = {r['mean_xi_second_half']:.3f} (B = {r['B']:g})"
    return _synthetic_claim("SFig4", r, measured, settings, profile)


# ------------------------------------------------------------------ Fig. 2, SFig. 5, SFig. 6, STab. 1 (Sec. 5.1, App. E)
def _cells(summary, col):
    return summary.groupby(["method", "h", "A"])[col].mean()


def lower_tau_at_similar_accuracy(sghmc: dict, sgnht: dict) -> dict:
    """Fig. 2 panel 4, "SGNHT has significantly lower autocorrelation time than SGHMC at similar accuracy".

    ``sghmc`` and ``sgnht`` map a cell label to (RMSE, tau). For each SGHMC cell, take the cheapest SGNHT
    cell that is at least as accurate (RMSE <=) and ask whether its tau is lower. The claim holds when it is
    in more than half of the SGHMC cells. The paper's own Table 1 passes this test (3 of 4 cells: SGHMC's
    cheapest cell, RMSE 0.63, is less accurate than every SGNHT cell yet faster). It fails a stricter reading
    (every SGHMC point dominated, or SGNHT's tau lower at equal (h, A)), which is why those are not used.
    """
    per_cell = {}
    for c, (r, tau) in sghmc.items():
        cand = [t for (r2, t) in sgnht.values() if r2 <= r]
        best = min(cand) if cand else np.inf
        per_cell[str(c)] = {"sghmc": (round(float(r), 4), round(float(tau), 2)),
                            "cheapest_as_accurate_sgnht_tau": None if not np.isfinite(best) else round(float(best), 2),
                            "sgnht_lower": bool(best < tau)}
    n = sum(v["sgnht_lower"] for v in per_cell.values())
    return {"holds": bool(n > len(per_cell) / 2), "n_lower": int(n), "per_cell": per_cell}


def _fig2(kv: pd.DataFrame, ng: pd.DataFrame) -> dict:
    """SGNHT accurate in every (h, A) cell; SGHMC only at small h and large A; mean xi ~ A at h = 0.001,
    >> A at h = 0.01; panel 4: SGNHT's tau below SGHMC's at similar accuracy (in most cells)."""
    r = _cells(kv, "rmse")
    hs, As = sorted(kv["h"].unique()), sorted(kv["A"].unique())
    hmin, hmax, Amin, Amax = hs[0], hs[-1], As[0], As[-1]
    good = r["SGHMC", hmin, Amax]
    sgnht_max = max(r["SGNHT", h, A] for h in hs for A in As)
    xi = _cells(kv[kv["method"] == "SGNHT"], "mean_xi")
    rn, tn = _cells(ng, "rmse"), _cells(ng, "tau")
    cells = [(h, A) for h in hs for A in As]
    faster = sum(tn["SGNHT", h, A] < tn["SGHMC", h, A] for h, A in cells)
    frontier = lower_tau_at_similar_accuracy({c: (rn["SGHMC", *c], tn["SGHMC", *c]) for c in cells},
                                             {c: (rn["SGNHT", *c], tn["SGNHT", *c]) for c in cells})
    checks = {
        "sgnht_accurate_all_cells": sgnht_max <= 2.0 * good + 0.05 * float(kv["rmse"].max()),
        "sghmc_bad_at_large_h_small_A": r["SGHMC", hmax, Amin] > 2.0 * r["SGNHT", hmax, Amin],
        "xi_close_to_A_small_h": all(abs(xi["SGNHT", hmin, A] - A) < 0.6 * max(A, 1.0) for A in As),
        "xi_much_larger_than_A_large_h": xi["SGNHT", hmax, Amin] > 2.0 * Amin + 1.0,
        "sgnht_lower_tau_at_similar_accuracy": frontier["holds"],
    }
    return {"holds": all(checks.values()), "checks": {k: bool(v) for k, v in checks.items()},
            "panel4_per_sghmc_cell": frontier["per_cell"],
            "rmse_known_variance": {f"{m} h={h} A={A}": round(float(v), 4) for (m, h, A), v in r.items()},
            "mean_xi": {f"h={h} A={A}": round(float(v), 3) for (_, h, A), v in xi.items()},
            "n_cells_sgnht_lower_tau": int(faster)}


def check_fig2(kv_summary: pd.DataFrame, ng_summary: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """SGNHT-Fig2 from the known-variance and Normal-Gamma summaries; see :func:`_fig2`."""
    r = _fig2(kv_summary, ng_summary)
    measured = (f"known-variance density RMSE {r['rmse_known_variance']}; SGNHT mean xi {r['mean_xi']}; "
                f"SGNHT tau below SGHMC tau at equal (h, A) in {r['n_cells_sgnht_lower_tau']} of 4 Normal-Gamma cells; "
                f"cheapest as-accurate SGNHT cell faster than the SGHMC cell in "
                f"{sum(v['sgnht_lower'] for v in r['panel4_per_sghmc_cell'].values())} of 4")
    note = ("tested: SGNHT RMSE in every cell <= 2x SGHMC's best cell; SGHMC RMSE at (large h, small A) > 2x SGNHT's; "
            "|mean xi - A| < 0.6 max(A,1) at the small h and mean xi > 2A + 1 at the large h; panel 4: for more than half "
            "of the SGHMC (RMSE, tau) cells of the Normal-Gamma grid, the cheapest SGNHT cell that is at least as "
            "accurate has a lower tau (the paper's own Table 1 passes this in 3 of 4 cells). Density RMSE and tau are "
            "reconstructed (the paper gives no formula; src/scalable_bayes_papers/sgnht/README.md gives ours); tau = draws/ESS (ArviZ).")
    return _synthetic_claim("Fig2", r, measured, settings, profile, note=note)


def _sfig5(kv: pd.DataFrame) -> dict:
    ke = _cells(kv, "mean_ke")
    hs, As = sorted(kv["h"].unique()), sorted(kv["A"].unique())
    checks = {
        "sgnht_ke_half_all_cells": all(abs(ke["SGNHT", h, A] - 0.5) < 0.05 for h in hs for A in As),
        "sghmc_ke_wrong_large_h_small_A": abs(ke["SGHMC", hs[-1], As[0]] - 0.5) > 0.25,
        "sghmc_ke_ok_small_h_large_A": abs(ke["SGHMC", hs[0], As[-1]] - 0.5) < 0.05,
    }
    return {"holds": all(checks.values()), "checks": {k: bool(v) for k, v in checks.items()},
            "mean_ke": {f"{m} h={h} A={A}": round(float(v), 4) for (m, h, A), v in ke.items()}}


def check_sfig5(kv_summary: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """SGNHT-SFig5 from the known-variance summaries (test in the note)."""
    r = _sfig5(kv_summary)
    measured = f"mean KE after burn-in: {r['mean_ke']}"
    note = "tested: SGNHT |KE - 0.5| < 0.05 in every cell; SGHMC |KE - 0.5| > 0.25 at (large h, small A) and < 0.05 at (small h, large A)"
    return _synthetic_claim("SFig5", r, measured, settings, profile, note=note)


def _sfig6(ng: pd.DataFrame) -> dict:
    r = _cells(ng, "rmse")
    hs, As = sorted(ng["h"].unique()), sorted(ng["A"].unique())
    sgnht_max = max(r["SGNHT", h, A] for h in hs for A in As)
    checks = {
        "sgnht_good_all_cells": sgnht_max < r["SGHMC", hs[-1], As[0]],
        "sghmc_best_at_small_h_large_A": r["SGHMC", hs[0], As[-1]] == min(r["SGHMC", h, A] for h in hs for A in As),
    }
    return {"holds": all(checks.values()), "checks": {k: bool(v) for k, v in checks.items()},
            "rmse": {f"{m} h={h} A={A}": round(float(v), 4) for (m, h, A), v in r.items()}}


def check_sfig6(ng_summary: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """SGNHT-SFig6 from the Normal-Gamma summaries (test in the note)."""
    r = _sfig6(ng_summary)
    measured = f"mean marginal density RMSE: {r['rmse']}"
    note = "tested: max SGNHT RMSE < SGHMC RMSE at (large h, small A); SGHMC's best cell is (small h, large A)"
    return _synthetic_claim("SFig6", r, measured, settings, profile, note=note)


def _stab1(t: pd.DataFrame) -> dict:
    cells = sorted({(h, A) for h, A in zip(t["h"], t["A"])})
    r = t.set_index(["method", "h", "A"])
    lower = {f"h={h} A={A}": bool(r.loc[("SGNHT", h, A), "rmse"] < r.loc[("SGHMC", h, A), "rmse"]) for h, A in cells}
    hs = sorted({h for h, _ in cells})
    As = sorted({A for _, A in cells})
    tau_order = {f"{m} h={h}": bool(all(r.loc[(m, h, As[i]), "tau"] < r.loc[(m, h, As[i + 1]), "tau"] for i in range(len(As) - 1)))
                 for m in ["SGHMC", "SGNHT"] for h in hs}
    return {"holds": all(lower.values()) and all(tau_order.values()), "sgnht_lower_rmse": lower,
            "tau_increases_with_A": tau_order}


def check_stab1(table: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """SGNHT-STab1 from :func:`scalable_bayes_papers.sgnht.tables.stab1`: SGNHT's RMSE below SGHMC's in
    every (h, A) cell and tau increasing with A for each method and h."""
    r = _stab1(table)
    cells = {f"{m} h={h:g} A={A:g}": (round(float(a), 3), round(float(b), 1))
             for m, h, A, a, b in zip(table["method"], table["h"], table["A"], table["rmse"], table["tau"])}
    measured = f"(RMSE, tau): {cells}; SGNHT lower RMSE: {r['sgnht_lower_rmse']}; tau increases with A: {r['tau_increases_with_A']}"
    paper_value = "; ".join(f"{m} h={h:g} A={A:g}: {v}" for (m, h, A), v in STAB1_PAPER.items())
    note = ("RMSE binning and the autocorrelation estimator are reconstructed (the paper gives no formula; tau = draws/ESS from ArviZ): "
            "compare the pattern, not the digits")
    return _synthetic_claim("STab1", r, measured, settings, profile, paper_value=paper_value, note=note)


# ------------------------------------------------------------------ Fig. 3, STab. 2, STab. 3 (Sec. 5.2, App. G)
def _fig3(summary) -> dict:
    """At the smaller a: SGNHT's metric degrades from the smallest to the largest eta no more than SGHMC's
    (tolerance: 1 pooled sd), SGHMC's degradation counted as infinite if it diverges; SGNHT's mean KE within
    0.1 of 0.5 in >= 90% of runs; SGHMC's mean KE above SGNHT's in most (task, a, eta) cells."""
    out, stab = {}, []
    for task, t in summary.groupby("task"):
        a0 = t["a"].min()
        tt = t[t["a"] == a0]
        e_lo, e_hi = tt["eta"].min(), tt["eta"].max()
        deg = {}
        for m in ["SGHMC", "SGNHT"]:
            lo = tt[(tt["method"] == m) & (tt["eta"] == e_lo)]
            hi = tt[(tt["method"] == m) & (tt["eta"] == e_hi)]
            deg[m] = np.inf if hi["diverged"].any() else float(hi["metric"].mean() - lo["metric"].mean())
        sd = float(np.nanmean(t.groupby(["method", "a", "eta"])["metric"].std().values)) if t["seed"].nunique() > 1 else 0.0
        sd = sd if np.isfinite(sd) else 0.0
        # the stability claim is only testable where SGHMC actually degrades (or diverges) over the eta grid
        testable = deg["SGHMC"] > sd
        stable = deg["SGNHT"] <= deg["SGHMC"] + sd
        out[task] = {"degradation_small_a": {k: (None if not np.isfinite(v) else round(v, 4)) for k, v in deg.items()},
                     "pooled_sd": round(sd, 4), "sghmc_degrades": bool(testable),
                     "sgnht_more_stable": bool(stable) if testable else None}
        if testable:
            stab.append(bool(stable))
    sg = summary[summary["method"] == "SGNHT"]
    frac_half = float(np.mean(np.abs(sg["mean_ke"] - 0.5) < 0.1)) if len(sg) else np.nan
    ke = summary.groupby(["task", "a", "eta", "method"])["mean_ke"].mean().unstack("method")
    frac_higher = float(np.mean(ke["SGHMC"] > ke["SGNHT"])) if len(ke) else np.nan
    out["sgnht_ke_within_0.1_of_half_fraction"] = round(frac_half, 3)
    out["sghmc_ke_above_sgnht_fraction"] = round(frac_higher, 3)
    ke_ok = frac_half >= 0.9 and frac_higher > 0.5
    out["kinetic_energy_part_holds"] = bool(ke_ok)
    # None: the stability half could not be tested (no task where SGHMC degrades within the eta grid)
    out["holds"] = (bool(ke_ok) and all(stab)) if stab else None
    return out


def check_fig3(summary: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """SGNHT-Fig3 from the ML run summaries (every task and seed); ``settings`` is the ``sgnht.ml`` block.
    See :func:`_fig3` for the test."""
    r = _fig3(summary)
    measured = "; ".join(f"{k}: {v}" for k, v in r.items() if k != "holds")
    return _ml_claim("Fig3", r, measured, summary, settings, profile)


def _stab2(t2) -> dict:
    res, strict = {}, {}
    for task, t in t2[t2["task"] != "netflix"].groupby("task"):
        r = t.set_index("method")
        tol = float(np.nan_to_num(r.loc["SGHMC", "test_sd"]))
        res[task] = bool(r.loc["SGNHT", "test_mean"] <= r.loc["SGHMC", "test_mean"] + tol)
        strict[task] = bool(r.loc["SGNHT", "test_mean"] < r.loc["SGHMC", "test_mean"])
    return {"holds": all(res.values()) if res else None, "sgnht_not_worse_within_1sd": res, "sgnht_strictly_better": strict}


def check_stab2(table: pd.DataFrame, summary: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """SGNHT-STab2 from :func:`scalable_bayes_papers.sgnht.tables.stab2`: per task, SGNHT's test metric at
    its selected (a, eta) not above SGHMC's + 1 sd of SGHMC's over seeds."""
    r = _stab2(table)
    measured = "; ".join(f"{a} {b}: {c:.4g} ± {d:.2g}" for a, b, c, d in
                         zip(table["task"], table["method"], table["test_mean"], table["test_sd"]) if a != "netflix")
    measured += f"; SGNHT strictly better: {r['sgnht_strictly_better']} (verdict uses a 1-sd tolerance)"
    paper_value = "; ".join(f"{t} {m}: {v}" for t, d in PAPER_STAB2.items() for m, v in d.items())
    return _ml_claim("STab2", r, measured, summary, settings, profile, paper_value)


def _stab3(t3, eta_max=None) -> dict:
    r = t3[t3["task"] == "bpmf"].set_index("method")
    if len(r) < 2:
        return {"holds": None, "reason": "bpmf not run"}
    e = {"SGHMC": float(r.loc["SGHMC", "eta"]), "SGNHT": float(r.loc["SGNHT", "eta"])}
    if e["SGHMC"] == e["SGNHT"] == float(eta_max):
        # both pick the largest eta of the grid: the grid never reaches a step size where SGHMC fails
        return {"holds": None, "bpmf_eta": e, "reason": "both methods select the largest eta of the grid"}
    return {"holds": bool(e["SGNHT"] >= e["SGHMC"]) and e["SGNHT"] != e["SGHMC"], "bpmf_eta": e}


def check_stab3(table: pd.DataFrame, summary: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """SGNHT-STab3 from :func:`scalable_bayes_papers.sgnht.tables.stab3`: on BPMF SGNHT is selected with a
    strictly larger eta than SGHMC; not checked when BPMF did not run or both select the grid's largest eta."""
    r = _stab3(table, eta_max=max(settings["bpmf"]["eta"]) if "bpmf" in settings else None)
    measured = "; ".join(f"{a} {b}: (a={c:g}, eta={d:g})" for a, b, c, d in
                         zip(table["task"], table["method"], table["a"], table["eta"]) if a != "netflix")
    paper_value = "; ".join(f"{t} {m}: {v}" for t, d in PAPER_STAB3.items() for m, v in d.items())
    return _ml_claim("STab3", r, measured, summary, settings, profile, paper_value)


def check_synthetic(item: str, t: dict, settings: dict, profile: str) -> Claim:
    """The claim of one synthetic-experiment figure from its run tables (keyed as in :func:`figures.draw_synthetic`)."""
    if item == "Fig1":
        return check_fig1(t["summary"], settings, profile)
    if item == "SFig4":
        return check_sfig4(t["summary"], settings, profile)
    if item == "Fig2":
        return check_fig2(t["kv_summary"], t["ng_summary"], settings, profile)
    if item == "SFig5":
        return check_sfig5(t["kv_summary"], settings, profile)
    if item == "SFig6":
        return check_sfig6(t["ng_summary"], settings, profile)
    raise ValueError(f"unknown SGNHT synthetic figure {item!r}; expected Fig1, SFig4, Fig2, SFig5 or SFig6")
