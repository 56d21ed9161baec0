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
    "Fig2a": "Fig. 2 panel 1: SGNHT samples the mean of a Gaussian (known variance) accurately for every (h, A).",
    "Fig2b": "Fig. 2 panel 2: SGHMC (B-hat = 0) samples it accurately only for small h and large A.",
    "Fig2c": "Fig. 2 panel 3: SGNHT's mean xi is close to A at h = 0.001 but much larger than A at h = 0.01.",
    "Fig2d": "Fig. 2 panel 4: on the Normal-Gamma problem SGNHT has significantly lower autocorrelation time of "
             "mu + gamma than SGHMC at similar accuracy.",
    "SFig5": "SGHMC does not keep the kinetic energy at 0.5 unless h is small and A large; SGNHT does in every setting.",
    "SFig6": "On the Normal-Gamma posterior SGNHT gives good marginals of mu and gamma for all (h, A); SGHMC only for "
             "small h and large A.",
    "STab1": "SGNHT has lower density RMSE than SGHMC in every (h, A) column; the autocorrelation time of mu + gamma "
             "grows with A (and with smaller h).",
    "Fig3-bnn": "Fig. 3 row 1 (MNIST, BNN): with the smaller a SGHMC gets worse (or diverges) as eta grows; SGNHT is more stable.",
    "Fig3-bpmf": "Fig. 3 row 2 (MovieLens, BPMF): with the smaller a SGHMC gets worse (or diverges) as eta grows; SGNHT is more stable.",
    "Fig3-netflix": "Fig. 3 row 3 (Netflix, BPMF): with the smaller a SGHMC gets worse (or diverges) as eta grows; SGNHT is more stable.",
    "Fig3-lda": "Fig. 3 row 4 (ICML abstracts, LDA): with the smaller a SGHMC gets worse (or diverges) as eta grows; SGNHT is more stable.",
    "Fig3-KE": "Sec. 5.2.1: throughout the experiments SGNHT's kinetic energy stays around 0.5 while SGHMC's is usually higher.",
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
FIG3_TASKS = ("bnn", "bpmf", "netflix", "lda")  # the rows of Fig. 3
TAU_NOTE = ("tau = integrated autocorrelation time of mu + gamma, the full autocorrelation sum with Sokal's window "
            "(evaluation.mcmc.integrated_autocorrelation_time; until the claims review ArviZ's draws/ESS, whose Geyer truncation "
            "counts only the first positive lobe of the oscillating low-friction chains and overestimated tau up to 3x). "
            "Decisive experiment (10^6 steps x 5 seeds, N in {100, 1000} x minibatch in {10, 50}): "
            "src/scalable_bayes_papers/sgnht/README.md, 'Decisive experiment: the autocorrelation time'. Its finding at "
            "the paper's N = 100, minibatch 10: 7 of Table 1's 8 taus reproduce within 20%, not SGNHT's 22.97 at (h = 0.001, "
            "A = 1) (74.7 [64.9, 84.5], equal to SGHMC's); SGNHT's tau is never significantly below SGHMC's at equal (h, A), "
            "and the panel-4 test passes in 1 of 4 SGHMC cells (3 of 4 with minibatch 50).")
GAMMA_NOTE = ("Gamma marginal at (h = 0.01, A = 1) (decisive experiment in README.md, 'Decisive "
              "experiment: the gamma marginal', 10^6 steps x 5 seeds): too narrow (sd 0.76x the posterior's, mu's 1.17x "
              "too wide) because Algorithm 1's scalar thermostat fixes only the mean temperature p'p/n = 1 while App. E's "
              "gradient noise is larger on mu than on gamma: xi = 4.25 = A + the mean noise, leaving mu at <p^2> = 1.40 and "
              "gamma at 0.60 (noise-model prediction 1.43 / 0.57). Not the implementation (n = 2 and the noise model give "
              "the predicted xi) nor the discretisation of the dynamics (exact gradient at h = 0.01: sd ratios 1.00, RMSE "
              "at the i.i.d. floor); it shrinks linearly with h (gamma sd ratio 0.83 / 0.88 / 0.94 at h = 0.005 / 0.0025 "
              "/ 0.001) and the matrix thermostat of Sec. 4 (eqs. 10-11) removes it (0.99). The paper's 0.175 cannot be "
              "compared digit for digit (no RMSE formula).")
NETFLIX_NOTE = "Netflix: not reproducible here (data set not available and not redistributable; no stand-in in the mirror)"
STAB2_NOTE = ("tested, per task: SGNHT's mean test metric at its validation-selected (a, eta) against SGHMC's at its "
              "own, in units of the pooled seed-to-seed sd (the two selected cells' pooled sd; where that is 0, as for "
              "a quantised test error over 2 seeds, the sd pooled over the task's whole grid): better by more than 1 "
              "sd holds, worse by more than 1 sd fails, a difference within 1 sd is not resolved (None: the paper's "
              "'better' is not shown, nor contradicted; until the claims review such a task counted as holding, so "
              "an SGNHT identical to SGHMC passed). The claim holds when every task holds, fails when one fails. "
              "Convergence "
              ": BNN and LDA iterations and the traces of the single-sample test metric and the "
              "thermostat in src/scalable_bayes_papers/sgnht/README.md, 'Convergence of the ML runs'. Why SGNHT is "
              "worse on the BNN, decided there ('The deciding experiment', python -m "
              "scalable_bayes_papers.sgnht.bnn_gap; its numbers are in the README): not the run length and not the "
              "thermostat's dynamics (SGNHT with its thermostat frozen at its mean is as bad), but its interplay with "
              "the BNN's Gibbs-resampled layer precisions (Chen et al.'s model, as the paper specifies): SGNHT "
              "removes the excess heat of the gradient noise that keeps SGHMC's first layer warm, the first layer's "
              "weights shrink and its prior precision follows them up, and the error drifts upward; with the layer "
              "precisions held fixed the two samplers agree. On LDA the thermostat settles near a (SGHMC's kinetic "
              "energy is close to 0.5: little noise to absorb), so the two methods coincide.")
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
    return Claim(id=f"SGNHT-{item}", paper=PAPER, claim=CLAIMS[item], measured=measured,
                 holds=None if r["holds"] is None else bool(r["holds"]),
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


QUICK_FRACTION = 0.1  # "quickly": xi's running mean settled within 0.1 of B by 10% of the run


def xi_settle_step(traces: pd.DataFrame, B: float, tol: float = 0.1) -> int:
    """First recorded step after which the running mean of xi stays within ``tol`` of ``B`` (one chain's trace)."""
    t = traces.sort_values("step")
    off = np.abs(t["xi_running_mean"].to_numpy() - B) >= tol
    steps = t["step"].to_numpy()
    if off[-1]:
        return int(steps[-1]) + 1  # never settled
    last_off = np.flatnonzero(off)
    return int(steps[last_off[-1] + 1]) if last_off.size else int(steps[0])


def _sfig4(summary: pd.DataFrame, traces: pd.DataFrame) -> dict:
    """"Converges quickly": in every seed the running mean of SGNHT's xi stays within 0.1 of B from at most
    10% of the run on, and the mean over the second half is within 0.1 of B (mean over seeds). The
    instantaneous xi fluctuates by about +/- 1 around B in this 1-D problem (d xi = (p^2 - 1) h), so only a
    time average can be within 0.1."""
    xi = float(summary.loc[summary["variant"] == "SGNHT", "mean_xi_second_half"].mean())
    B = float(summary["B"].iloc[0])
    n = int(summary["n_steps"].iloc[0])
    settle = {int(seed): xi_settle_step(t, B) for seed, t in traces[traces["variant"] == "SGNHT"].groupby("seed")}
    quick = all(v <= QUICK_FRACTION * n for v in settle.values())
    return {"holds": bool(abs(xi - B) < 0.1 and quick), "mean_xi_second_half": xi, "B": B,
            "settle_step_per_seed": settle, "settle_fraction_max": round(max(settle.values()) / n, 4),
            "quick_fraction_limit": QUICK_FRACTION}


def check_sfig4(summary: pd.DataFrame, traces: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """SGNHT-SFig4 from the double-well summaries and traces; see :func:`_sfig4`."""
    r = _sfig4(summary, traces)
    measured = (f"running mean of xi within 0.1 of B = {r['B']:g} from step {r['settle_step_per_seed']} on "
                f"(at most {100 * r['settle_fraction_max']:.1f}% of the run); mean xi over the 2nd half = "
                f"{r['mean_xi_second_half']:.3f}")
    note = (f"'quickly' tested as: the running mean of xi stays within 0.1 of B from at most {100 * QUICK_FRACTION:g}% of "
            "the run on, in every seed (the instantaneous xi fluctuates by about +/- 1 in this 1-D problem)")
    return _synthetic_claim("SFig4", r, measured, settings, profile, note=note)


# ------------------------------------------------------------------ Fig. 2, SFig. 5, SFig. 6, STab. 1 (Sec. 5.1, App. E)
def _cells(summary, col):
    return summary.groupby(["method", "h", "A"])[col].mean()


def tau_interval(g: pd.DataFrame) -> tuple[float, float]:
    """95% interval of the mean tau over the seeds of one cell (as :func:`tables.tau_summary`): with >= 3 seeds the
    t-interval over seeds, with fewer mean +/- 1.96 x the pooled within-chain se (sqrt(mean tau_se^2 / k))."""
    from scipy import stats

    tau = g["tau"].to_numpy(dtype=float)
    k = len(tau)
    m = float(tau.mean())
    if k >= 3:
        half = float(stats.t.ppf(0.975, k - 1) * tau.std(ddof=1) / np.sqrt(k))
    else:
        half = 1.96 * float(np.sqrt(np.mean(g["tau_se"].to_numpy(dtype=float) ** 2) / k))
    return m - half, m + half


def lower_tau_at_similar_accuracy(sghmc: dict, sgnht: dict) -> dict:
    """Fig. 2 panel 4, "SGNHT has significantly lower autocorrelation time than SGHMC at similar accuracy".

    ``sghmc`` and ``sgnht`` map a cell label to (RMSE, tau) or (RMSE, tau, tau_low, tau_high), the last two a
    95% interval of tau. For each SGHMC cell, take the cheapest SGNHT cell that is at least as accurate (RMSE <=)
    and ask whether its tau is lower: with intervals, "significantly lower" (the paper's word) means the SGNHT
    cell's interval lies wholly below the SGHMC cell's (a mean inside the other's interval, as 50 against
    SGHMC's 70 [-39, 180], is no evidence); without, the means are compared. The claim holds when it is
    lower in more than half of the SGHMC cells. The paper's own Table 1 passes this test (3 of 4 cells: SGHMC's
    cheapest cell, RMSE 0.63, is less accurate than every SGNHT cell yet faster). It fails a stricter reading
    (every SGHMC point dominated, or SGNHT's tau lower at equal (h, A)), which is why those are not used.
    """
    def _iv(v):  # (rmse, tau, low, high); without an interval, the mean is both ends
        return (v[0], v[1], v[2], v[3]) if len(v) == 4 else (v[0], v[1], v[1], v[1])

    per_cell = {}
    for c, v in sghmc.items():
        r, tau, lo, _ = _iv(v)
        cand = [_iv(w) for w in sgnht.values() if w[0] <= r]
        best = min(cand, key=lambda w: w[1]) if cand else None
        lower = best is not None and bool(best[1] < tau) and bool(best[3] < lo if len(v) == 4 else True)
        per_cell[str(c)] = {"sghmc": (round(float(r), 4), round(float(tau), 2)),
                            "cheapest_as_accurate_sgnht_tau": None if best is None else round(float(best[1]), 2),
                            "sgnht_lower": bool(lower)}
        if len(v) == 4:
            per_cell[str(c)]["sghmc_tau_95"] = (round(float(lo), 2), round(float(v[3]), 2))
            per_cell[str(c)]["sgnht_tau_95"] = None if best is None else (round(float(best[2]), 2), round(float(best[3]), 2))
    n = sum(v["sgnht_lower"] for v in per_cell.values())
    return {"holds": bool(n > len(per_cell) / 2), "n_lower": int(n), "per_cell": per_cell}


# A marginal is "good" when its density RMSE is within FLOOR_FACTOR x its own noise floor (``rmse*_iid``: the
# RMSE of exact i.i.d. draws with the chain's effective sample size, runs.iid_rmse_floor). Measured: correct
# samplers sit at 0.6-1.45x their floor (SGNHT on the 1-D Gaussian, per seed, 2 x 10^5 steps; exact-gradient
# chains in the gamma study, 10^6 steps: 0.6-1.1x); the floor itself is a 10-replicate mean; samplers without
# their correction land far above it (SGHMC with B-hat = 0 at h = 0.01, A = 1: 8-30x). Comparing against
# another method's cell instead let a 2x worse SGNHT pass.
FLOOR_FACTOR = 2.0


def floor_ratios(summary: pd.DataFrame, method: str, pairs) -> dict:
    """``{cell label: {marginal: RMSE / floor}}`` of ``method`` (means over seeds of the RMSE and of the floor);
    ``pairs``: (RMSE column, floor column, marginal name). A diverged chain (NaN RMSE) counts as infinitely far."""
    sub = summary[summary["method"] == method]
    out = {}
    for (h, A), g in sub.groupby(["h", "A"]):
        cell = {}
        for col, fcol, name in pairs:
            if fcol not in g:
                raise KeyError(f"summary has no noise-floor column {fcol!r}: re-run the synthetic runs (runs.py records it)")
            r, f = float(g[col].mean()), float(g[fcol].mean())
            cell[name] = round(r / f, 3) if np.isfinite(r) and f > 0 else float("inf")
        out[_label(h, A)] = cell
    return out


def _all_within_floor(ratios: dict) -> bool:
    return all(v <= FLOOR_FACTOR for cell in ratios.values() for v in cell.values())


def _label(h, A) -> str:
    return f"h={h:g} A={A:g}"


def _fig2(kv: pd.DataFrame, ng: pd.DataFrame) -> dict:
    """One verdict per panel of Fig. 2 (keys ``Fig2a`` .. ``Fig2d``), each with its checks and numbers.

    a: SGNHT's RMSE in every (h, A) cell <= 2x SGHMC's best cell (+ 5% of the largest RMSE).
    b: SGHMC's RMSE at (large h, small A) > 2x SGNHT's there, and SGHMC's best cell is (small h, large A).
    c: |mean xi - A| < 0.6 max(A, 1) at the small h; mean xi > 2 A + 1 at (large h, small A).
    d: :func:`lower_tau_at_similar_accuracy` on the Normal-Gamma (RMSE, tau) cells (means over seeds)."""
    r = _cells(kv, "rmse")
    hs, As = sorted(kv["h"].unique()), sorted(kv["A"].unique())
    hmin, hmax, Amin, Amax = hs[0], hs[-1], As[0], As[-1]
    cells = [(h, A) for h in hs for A in As]
    good = r["SGHMC", hmin, Amax]
    rmse = {f"{m} {_label(h, A)}": round(float(v), 4) for (m, h, A), v in r.items()}
    floor = ({f"{m} {_label(h, A)}": round(float(v), 4) for (m, h, A), v in _cells(kv, "rmse_iid").items()}
             if "rmse_iid" in kv else None)
    kv_pairs = [("rmse", "rmse_iid", "mu")]
    a_ratio = floor_ratios(kv, "SGNHT", kv_pairs)
    a = {"sgnht_within_its_floor_all_cells": _all_within_floor(a_ratio)}
    b = {"sghmc_bad_at_large_h_small_A": bool(r["SGHMC", hmax, Amin] > 2.0 * r["SGNHT", hmax, Amin]),
         "sghmc_best_at_small_h_large_A": bool(good == min(r["SGHMC", h, A] for h, A in cells))}
    xi = _cells(kv[kv["method"] == "SGNHT"], "mean_xi")
    c = {"xi_close_to_A_small_h": bool(all(abs(xi["SGNHT", hmin, A] - A) < 0.6 * max(A, 1.0) for A in As)),
         "xi_much_larger_than_A_large_h": bool(xi["SGNHT", hmax, Amin] > 2.0 * Amin + 1.0)}
    rn, tn = _cells(ng, "rmse"), _cells(ng, "tau")
    se = ng.groupby(["method", "h", "A"])["tau_se"].apply(lambda v: float(np.sqrt(np.mean(v ** 2) / len(v)))) \
        if "tau_se" in ng else None
    iv = ng.groupby(["method", "h", "A"]).apply(tau_interval) if "tau_se" in ng else None

    def _pt(m, c_):
        return (rn[m, *c_], tn[m, *c_]) + ((iv[m, *c_][0], iv[m, *c_][1]) if iv is not None else ())

    frontier = lower_tau_at_similar_accuracy({_label(*c_): _pt("SGHMC", c_) for c_ in cells},
                                             {_label(*c_): _pt("SGNHT", c_) for c_ in cells})
    d = {"sgnht_lower_tau_at_similar_accuracy": frontier["holds"]}
    return {
        "Fig2a": {"holds": all(a.values()), "checks": a, "rmse_known_variance": rmse, "rmse_iid_floor": floor,
                  "sgnht_rmse_over_floor": a_ratio, "floor_factor": FLOOR_FACTOR},
        "Fig2b": {"holds": all(b.values()), "checks": b, "rmse_known_variance": rmse, "rmse_iid_floor": floor},
        "Fig2c": {"holds": all(c.values()), "checks": c,
                  "mean_xi": {_label(h, A): round(float(v), 3) for (_, h, A), v in xi.items()}},
        "Fig2d": {"holds": frontier["holds"], "checks": d, "per_sghmc_cell": frontier["per_cell"],
                  "n_cells_sgnht_lower_tau_equal_hA": int(sum(tn["SGNHT", h, A] < tn["SGHMC", h, A] for h, A in cells)),
                  "tau_se_pooled": None if se is None else {f"{m} {_label(h, A)}": round(v, 2) for (m, h, A), v in se.items()}},
    }


def check_fig2(kv_summary: pd.DataFrame, ng_summary: pd.DataFrame, settings: dict, profile: str) -> list[Claim]:
    """SGNHT-Fig2a .. Fig2d (one claim per panel) from the known-variance and Normal-Gamma summaries."""
    r = _fig2(kv_summary, ng_summary)
    rm = r["Fig2a"]["rmse_known_variance"]
    d = r["Fig2d"]
    tau_cells = "; ".join(f"{k}: SGHMC (RMSE, tau) {v['sghmc']}"
                          + (f" [95% {v['sghmc_tau_95']}]" if "sghmc_tau_95" in v else "")
                          + f", cheapest as-accurate SGNHT tau {v['cheapest_as_accurate_sgnht_tau']}"
                          + (f" [95% {v['sgnht_tau_95']}]" if v.get("sgnht_tau_95") else "")
                          for k, v in d["per_sghmc_cell"].items())
    fl = r["Fig2a"]["rmse_iid_floor"]
    rm_s = f"known-variance density RMSE {rm}" + (f"; RMSE of exact i.i.d. draws with each chain's ESS (noise floor) {fl}"
                                                  if fl else "")
    measured = {
        "Fig2a": rm_s,
        "Fig2b": rm_s,
        "Fig2c": f"SGNHT mean xi after burn-in {r['Fig2c']['mean_xi']}",
        "Fig2d": f"{tau_cells}; SGNHT lower in {sum(v['sgnht_lower'] for v in d['per_sghmc_cell'].values())} of 4 "
                 f"(pooled within-chain se of tau: {d['tau_se_pooled']})",
    }
    notes = {
        "Fig2a": f"tested: SGNHT's density RMSE in every (h, A) cell (mean over seeds) <= {FLOOR_FACTOR:g}x its own noise "
                 "floor, the RMSE of exact i.i.d. draws with the chain's effective sample size (correct samplers sit at "
                 "0.6-1.45x it); density RMSE reconstructed (the paper gives no formula; see README.md)",
        "Fig2b": "tested: SGHMC's RMSE at (large h, small A) > 2x SGNHT's there, and SGHMC's best cell is (small h, large A)",
        "Fig2c": "tested: |mean xi - A| < 0.6 max(A, 1) at the small h; mean xi > 2A + 1 at (large h, small A)",
        "Fig2d": "tested: for more than half of the SGHMC (RMSE, tau) cells of the Normal-Gamma grid, the cheapest SGNHT "
                 "cell at least as accurate has a significantly lower tau: its 95% interval wholly below the SGHMC "
                 "cell's (t over seeds with 3+ seeds, else 1.96 pooled within-chain se; RMSE means over seeds; the "
                 "paper's own Table 1, which has no intervals, passes the comparison of means in 3 of 4 cells). "
                 + TAU_NOTE + " " + GAMMA_NOTE,
    }
    return [_synthetic_claim(k, r[k], measured[k], settings, profile, note=notes[k]) for k in ("Fig2a", "Fig2b", "Fig2c", "Fig2d")]


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
    """SFig6: every marginal (mu and gamma) of SGNHT within FLOOR_FACTOR x its own noise floor in every (h, A) cell;
    SGHMC's within it at (small h, large A) and not at (large h, small A); SGHMC's best cell is (small h, large A)."""
    r = _cells(ng, "rmse")
    hs, As = sorted(ng["h"].unique()), sorted(ng["A"].unique())
    pairs = [("rmse_mu", "rmse_mu_iid", "mu"), ("rmse_gamma", "rmse_gamma_iid", "gamma")]
    sgnht, sghmc = floor_ratios(ng, "SGNHT", pairs), floor_ratios(ng, "SGHMC", pairs)
    good_cell, bad_cell = _label(hs[0], As[-1]), _label(hs[-1], As[0])
    checks = {
        "sgnht_every_marginal_within_its_floor_all_cells": _all_within_floor(sgnht),
        "sghmc_within_its_floor_at_small_h_large_A": _all_within_floor({good_cell: sghmc[good_cell]}),
        "sghmc_beyond_its_floor_at_large_h_small_A": not _all_within_floor({bad_cell: sghmc[bad_cell]}),
        "sghmc_best_at_small_h_large_A": r["SGHMC", hs[0], As[-1]] == min(r["SGHMC", h, A] for h in hs for A in As),
    }
    out = {"holds": all(checks.values()), "checks": {k: bool(v) for k, v in checks.items()},
           "rmse": {f"{m} h={h} A={A}": round(float(v), 4) for (m, h, A), v in r.items()},
           "rmse_over_floor": {"SGNHT": sgnht, "SGHMC": sghmc}, "floor_factor": FLOOR_FACTOR,
           "worst_sgnht": max(((c, k, v) for c, cell in sgnht.items() for k, v in cell.items()), key=lambda t: t[2])}
    for col in ("rmse_iid", "rmse_gamma", "rmse_gamma_iid"):
        if col in ng:
            out[col] = {f"{m} h={h} A={A}": round(float(v), 4) for (m, h, A), v in _cells(ng, col).items()}
    return out


def check_sfig6(ng_summary: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """SGNHT-SFig6 from the Normal-Gamma summaries (test in the note)."""
    r = _sfig6(ng_summary)
    measured = f"mean marginal density RMSE: {r['rmse']}"
    if "rmse_iid" in r:
        measured += (f"; RMSE of exact i.i.d. draws with each chain's ESS (noise floor): {r['rmse_iid']}; gamma marginal "
                     f"alone: {r['rmse_gamma']} (floor {r['rmse_gamma_iid']})")
    w = r["worst_sgnht"]
    measured += f"; SGNHT's worst marginal: {w[1]} at {w[0]}, {w[2]:g}x its floor"
    note = (f"tested: each marginal's density RMSE (mean over seeds) within {FLOOR_FACTOR:g}x its own noise floor (the RMSE "
            "of exact i.i.d. draws with that marginal's effective sample size; correct samplers sit at 0.6-1.45x it): "
            "SGNHT's in every (h, A) cell, SGHMC's at (small h, large A) and not at (large h, small A); SGHMC's best "
            "cell is (small h, large A). " + GAMMA_NOTE)
    return _synthetic_claim("SFig6", r, measured, settings, profile, note=note)


def _rmse_cell(r: pd.DataFrame, h, A):
    """STab1's RMSE comparison in one (h, A) cell, each method against its own noise floor (``rmse_iid``, the RMSE
    of exact i.i.d. draws with the chain's ESS): True (SGNHT lower, resolved) when SGNHT is within FLOOR_FACTOR x
    its floor and SGHMC beyond its own, or when both are beyond and SGHMC's RMSE exceeds SGNHT's by more than
    the larger floor (the RMSE noise alone gives); None (a tie at the noise floor, not judged) when both are
    within their floors: their difference is noise, whichever sign it has; False otherwise. Without floors:
    the plain comparison SGNHT < SGHMC."""
    a, b = r.loc[("SGNHT", h, A)], r.loc[("SGHMC", h, A)]
    if "rmse_iid" not in r:
        return bool(a["rmse"] < b["rmse"])
    ra, rb = float(a["rmse"]), float(b["rmse"])
    rb = np.inf if not np.isfinite(rb) else rb  # a diverged SGHMC cell is infinitely inaccurate
    ok_a = np.isfinite(ra) and ra <= FLOOR_FACTOR * float(a["rmse_iid"])
    ok_b = rb <= FLOOR_FACTOR * float(b["rmse_iid"])
    if ok_a and ok_b:
        return None
    if ok_a:
        return True
    if ok_b:
        return False
    return bool(rb - ra > max(float(a["rmse_iid"]), float(b["rmse_iid"])))


def _stab1(t: pd.DataFrame) -> dict:
    """SGNHT's RMSE below SGHMC's in every (h, A) column where the two can be told apart (:func:`_rmse_cell`: each
    against its own noise floor; a cell where both sit within their floors is a tie at the noise floor and not
    judged, and at least one cell must be judged); tau increasing with A for each method and h, significantly
    (the 95% intervals disjoint) when the table has intervals, else by the means over seeds."""
    cells = sorted({(h, A) for h, A in zip(t["h"], t["A"])})
    r = t.set_index(["method", "h", "A"])
    lower = {_label(h, A): _rmse_cell(r, h, A) for h, A in cells}
    judged = [v for v in lower.values() if v is not None]
    hs = sorted({h for h, _ in cells})
    As = sorted({A for _, A in cells})
    pairs = {f"{m} h={h:g}": [((m, h, As[i]), (m, h, As[i + 1])) for i in range(len(As) - 1)]
             for m in ["SGHMC", "SGNHT"] for h in hs}
    tau_order = {k: bool(all(r.loc[a, "tau"] < r.loc[b, "tau"] for a, b in v)) for k, v in pairs.items()}
    signif = {k: bool(all(r.loc[a, "tau_ci_high"] < r.loc[b, "tau_ci_low"] for a, b in v)) for k, v in pairs.items()} \
        if "tau_ci_high" in t else {}
    tau_ok = all((signif or tau_order).values())
    rmse_ok = all(judged) if judged else None
    holds = False if (rmse_ok is False or not tau_ok) else (None if rmse_ok is None else True)
    return {"holds": holds, "sgnht_lower_rmse": lower, "rmse_cells_judged": len(judged),
            "tau_increases_with_A": tau_order, "tau_increase_significant": signif,
            "tau_judged_by": "disjoint 95% intervals" if signif else "means over seeds"}


def check_stab1(table: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """SGNHT-STab1 from :func:`scalable_bayes_papers.sgnht.tables.stab1`: SGNHT's RMSE below SGHMC's in
    every (h, A) cell the noise floors let us judge, and tau increasing with A for each method and h (see
    :func:`_stab1`)."""
    r = _stab1(table)
    has_ci = "tau_ci_low" in table
    cells = {}
    for _, x in table.iterrows():
        tau = f"{x['tau']:.1f}" + (f" [{x['tau_ci_low']:.1f}, {x['tau_ci_high']:.1f}]" if has_ci else "")
        old = f", ArviZ/Geyer {x['tau_geyer']:.1f}" if "tau_geyer" in table else ""
        floor = f" [iid floor {x['rmse_iid']:.3f}]" if "rmse_iid" in table else ""
        cells[f"{x['method']} {_label(x['h'], x['A'])}"] = f"({x['rmse']:.3f}{floor}, {tau}{old})"
    measured = (f"(RMSE, tau [95% CI]): {cells}; SGNHT lower RMSE (None: both within {FLOOR_FACTOR:g}x their noise "
                f"floors, a tie not judged): {r['sgnht_lower_rmse']}; tau increases with A: "
                f"{r['tau_increases_with_A']} (95% intervals disjoint: {r['tau_increase_significant']})")
    paper_value = "; ".join(f"{m} h={h:g} A={A:g}: {v}" for (m, h, A), v in STAB1_PAPER.items())
    note = ("tested: in each (h, A) cell, each method's RMSE against its own noise floor ('iid floor' = the RMSE of "
            f"exact i.i.d. draws with the chain's effective sample size; within {FLOOR_FACTOR:g}x it = at the floor): "
            "SGNHT lower when it is at its floor and SGHMC is not, or when both are beyond and SGHMC's RMSE is higher "
            "by more than the larger floor; a cell where both are at their floors is a tie, not judged (their "
            "difference is noise); SGNHT beyond its floor where SGHMC is at its own fails. tau increasing with A: "
            "the 95% intervals disjoint (means over seeds without intervals). RMSE binning is reconstructed (the "
            "paper gives no formula): compare the pattern, not the digits. " + TAU_NOTE + " " + GAMMA_NOTE)
    return _synthetic_claim("STab1", r, measured, settings, profile, paper_value=paper_value, note=note)


def check_tau_study(table: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """SGNHT-Fig2d-tau-study: the decisive experiment for Fig. 2 panel 4 (:func:`tables.tau_study`):
    the panel-4 test (:func:`lower_tau_at_similar_accuracy`, with the table's 95% intervals of tau: significantly
    lower) and STab1's tau ordering in each (N, minibatch)
    setting; holds when the panel-4 test holds in every setting. ``settings`` is the ``tau_study`` block."""
    per, ok = {}, []
    for (n, b), t in table.groupby(["n_data", "batch_size"]):
        # a cell whose chains all diverged is infinitely inaccurate and slow (it can be beaten, never beats)
        r = t.set_index(["method", "h", "A"]).fillna({"rmse": np.inf, "tau": np.inf, "tau_ci_low": np.inf,
                                                      "tau_ci_high": np.inf})
        cells = sorted({(h, A) for h, A in zip(t["h"], t["A"])})
        cols = ["rmse", "tau", "tau_ci_low", "tau_ci_high"] if "tau_ci_low" in r else ["rmse", "tau"]
        fr = lower_tau_at_similar_accuracy({_label(*c): tuple(r.loc[("SGHMC", *c), cols]) for c in cells},
                                           {_label(*c): tuple(r.loc[("SGNHT", *c), cols]) for c in cells})
        lower_equal = {_label(*c): ("lower" if r.loc[("SGNHT", *c), "tau_ci_high"] < r.loc[("SGHMC", *c), "tau_ci_low"] else
                                    "higher" if r.loc[("SGNHT", *c), "tau_ci_low"] > r.loc[("SGHMC", *c), "tau_ci_high"] else
                                    "overlap") for c in cells}
        div = {f"{m} {_label(h, A)}": int(v) for (m, h, A), v in r["n_diverged"].items() if v} if "n_diverged" in r else {}
        per[f"N={int(n)} minibatch={int(b)}"] = {"panel4_holds": fr["holds"], "n_sghmc_cells_beaten": fr["n_lower"],
                                                 "diverged_chains": div,
                                                 "sgnht_tau_vs_sghmc_equal_hA_95ci": lower_equal,
                                                 "per_sghmc_cell": fr["per_cell"]}
        ok.append(fr["holds"])
    measured = "; ".join(f"{k}: panel-4 test {'holds' if v['panel4_holds'] else 'fails'} ({v['n_sghmc_cells_beaten']} of 4 "
                         f"SGHMC cells beaten), SGNHT tau at equal (h, A) {v['sgnht_tau_vs_sghmc_equal_hA_95ci']}"
                         + (f", diverged chains {v['diverged_chains']}" if v["diverged_chains"] else "")
                         for k, v in per.items())
    scale = (f"{profile}: {settings['n_steps']:,} steps per chain (paper 10^6), {len(settings['seeds'])} seeds, "
             f"N in {list(settings['n_data'])} x minibatch in {list(settings['batch_sizes'])}")
    return Claim(id="SGNHT-Fig2d-tau-study", paper=PAPER, claim=CLAIMS["Fig2d"], measured=measured, holds=bool(all(ok)),
                 scale=scale, details=per, note="the decisive experiment (table: results/sgnht/tables/TauStudy.md). " + TAU_NOTE)


# ------------------------------------------------------------------ Fig. 3, STab. 2, STab. 3 (Sec. 5.2, App. G)
def _fig3(summary) -> dict:
    """One verdict per row of Fig. 3 (task) and one for the kinetic-energy sentence.

    Per task, at the smaller a: SGHMC's degradation = its metric at the largest eta minus at the smallest
    (infinite if it diverges), SGNHT's likewise; pooled sd = mean over cells of the sd over seeds. The row is
    testable only where SGHMC degrades by more than 1 pooled sd (the paper: it does in all four data sets);
    it holds when SGNHT degrades less than SGHMC by more than 1 pooled sd ("more stable": an SGNHT that
    degrades as much as SGHMC, as one with its thermostat frozen at a, which is SGHMC, does, fails; an SGNHT
    that does not degrade passes wherever the row is testable). Netflix is not run (no data).
    KE: SGNHT's mean KE within 0.1 of 0.5 in >= 90% of runs and SGHMC's above SGNHT's in most (task, a, eta)
    cells, over every task run."""
    out = {}
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
        testable = deg["SGHMC"] > sd
        stable = deg["SGNHT"] < deg["SGHMC"] - sd
        out[task] = {"holds": bool(stable) if testable else None, "a": float(a0), "eta_range": [float(e_lo), float(e_hi)],
                     "degradation_small_a": {k: (None if not np.isfinite(v) else round(v, 4)) for k, v in deg.items()},
                     "sghmc_diverged_at_largest_eta": bool(not np.isfinite(deg["SGHMC"])),
                     "pooled_sd": round(sd, 4), "sghmc_degrades": bool(testable),
                     "sghmc_max_mean_ke_small_a": round(float(tt.loc[tt["method"] == "SGHMC", "mean_ke"].max()), 4)}
    sg = summary[summary["method"] == "SGNHT"]
    frac_half = float(np.mean(np.abs(sg["mean_ke"] - 0.5) < 0.1)) if len(sg) else np.nan
    ke = summary.groupby(["task", "a", "eta", "method"])["mean_ke"].mean().unstack("method")
    frac_higher = float(np.mean(ke["SGHMC"] > ke["SGNHT"])) if len(ke) else np.nan
    per_task = {task: {"sgnht_within_0.1": round(float(np.mean(np.abs(g.loc[g["method"] == "SGNHT", "mean_ke"] - 0.5) < 0.1)), 3),
                       "sghmc_above_sgnht": round(float(np.mean(ke.loc[task, "SGHMC"] > ke.loc[task, "SGNHT"])), 3)}
                for task, g in summary.groupby("task")}
    out["KE"] = {"holds": bool(frac_half >= 0.9 and frac_higher > 0.5), "sgnht_ke_within_0.1_of_half_fraction": round(frac_half, 3),
                 "sghmc_ke_above_sgnht_fraction": round(frac_higher, 3), "per_task": per_task}
    return out


FIG3_BNN_NOTE = ("Where it does not hold: the deciding experiment (scalable_bayes_papers.sgnht.bnn_gap at a = 0.001: "
                 "SGNHT and SGHMC with the layer prior precisions Gibbs-resampled or held fixed, the thermostat frozen "
                 "or matched) and its finding are in src/scalable_bayes_papers/sgnht/README.md, 'Convergence of the "
                 "ML runs', 'At the small a'.")


def check_fig3(summary: pd.DataFrame, settings: dict, profile: str) -> list[Claim]:
    """SGNHT-Fig3-<task> (one claim per row of Fig. 3: bnn, bpmf, netflix, lda; a task not run is not checked)
    and SGNHT-Fig3-KE, from the ML run summaries; ``settings`` is the ``sgnht.ml`` block. See :func:`_fig3`."""
    r = _fig3(summary)
    out = []
    for task in FIG3_TASKS:
        cid = f"Fig3-{task}"
        if task not in r:
            reason = NETFLIX_NOTE if task == "netflix" else f"{task} is not among sgnht.ml.tasks in this config"
            out.append(Claim(id=f"SGNHT-{cid}", paper=PAPER, claim=CLAIMS[cid], measured="not run", holds=None,
                             scale=ml_scale(summary, settings, profile), note="not testable here: " + reason))
            continue
        x = r[task]
        deg = x["degradation_small_a"]
        measured = (f"a = {x['a']:g}, eta {x['eta_range'][0]:g} -> {x['eta_range'][1]:g} (paper's units): {METRIC[task]} change "
                    f"SGHMC {'diverged' if deg['SGHMC'] is None else deg['SGHMC']}, SGNHT "
                    f"{'diverged' if deg['SGNHT'] is None else deg['SGNHT']} (pooled sd over seeds {x['pooled_sd']})")
        note = ("tested: where SGHMC gets worse by more than 1 pooled sd (or diverges) at the largest eta, SGNHT gets worse by "
                "less than SGHMC - 1 pooled sd (more stable beyond the seeds' spread; degrading as much as SGHMC fails). ")
        if x["holds"] is None:
            note += (f"Not testable at this scale: SGHMC does not get worse over the eta grid here (its mean kinetic "
                     f"energy at a = {x['a']:g} is at most {x['sghmc_max_mean_ke_small_a']:.3f}: the gradient noise is too small "
                     "for it to overheat" + ("; SGNHT's thermostat settles at ~1.02 a, so the two methods coincide; README "
                                             "'Convergence of the ML runs'" if task == "lda" else "") + "). ")
        out.append(Claim(id=f"SGNHT-{cid}", paper=PAPER, claim=CLAIMS[cid], measured=measured, holds=x["holds"],
                         scale=ml_scale(summary, settings, profile), details={k: v for k, v in x.items() if k != "holds"},
                         note=note + ML_NOTE, if_fails=FIG3_BNN_NOTE if task == "bnn" else None))
    k = r["KE"]
    measured = (f"SGNHT mean KE within 0.1 of 0.5 in {k['sgnht_ke_within_0.1_of_half_fraction']:.0%} of runs; SGHMC's above "
                f"SGNHT's in {k['sghmc_ke_above_sgnht_fraction']:.0%} of (task, a, eta) cells; per task {k['per_task']}")
    out.append(_ml_claim("Fig3-KE", k, measured, summary, settings, profile))
    return out


def pooled_seed_sd(summary: pd.DataFrame, task: str, cells=None) -> float:
    """Seed-to-seed sd of ``task``'s test metric pooled over cells: the square root of the mean over cells
    (non-diverged, >= 2 seeds) of the variance over seeds. ``cells``: (method, a, eta) tuples to pool (default:
    the task's whole grid). NaN when no such cell has 2 seeds."""
    t = summary[(summary["task"] == task) & ~summary["diverged"].astype(bool)]
    v = t.groupby(["method", "a", "eta"])["metric"].var(ddof=1).dropna()
    if cells is not None:
        v = v[[c in set(cells) for c in v.index]]
    return float(np.sqrt(v.mean())) if len(v) else np.nan


def stab2_tolerance(summary: pd.DataFrame, t2: pd.DataFrame, task: str) -> tuple[float, str]:
    """STab2's tolerance for ``task``: the pooled seed-to-seed sd of the two selected cells (SGHMC's and SGNHT's;
    the two-sample pooled sd), or, when that is 0 (both cells gave the same metric in every seed: the BNN's
    "7.25 +- 0", a quantised test error over 2 seeds), the sd pooled over the task's whole grid. Returns
    (sd, which); sd is 0 or NaN only if no cell of the grid shows any seed-to-seed variation."""
    sel = t2[t2["task"] == task]
    cells = [(m, float(a), float(e)) for m, a, e in zip(sel["method"], sel["a"], sel["eta"])]
    sd = pooled_seed_sd(summary, task, cells)
    if np.isfinite(sd) and sd > 0:
        return sd, "selected cells"
    return pooled_seed_sd(summary, task), "whole grid (the selected cells' sd is 0)"


def paired_difference(summary: pd.DataFrame, t2: pd.DataFrame, task: str) -> dict:
    """Per seed, SGNHT's test metric at its selected (a, eta) minus SGHMC's at its own (the seeds pair the two
    methods' chains): mean, sd over seeds and the per-seed values."""
    sel = t2[t2["task"] == task].set_index("method")
    per = {}
    for m in ("SGHMC", "SGNHT"):
        s = summary[(summary["task"] == task) & (summary["method"] == m) & (summary["a"] == sel.loc[m, "a"])
                    & (summary["eta"] == sel.loc[m, "eta"])]
        per[m] = s.set_index("seed")["metric"]
    d = (per["SGNHT"] - per["SGHMC"]).dropna()
    return {"mean": float(d.mean()) if len(d) else np.nan, "sd": float(d.std(ddof=1)) if len(d) > 1 else np.nan,
            "per_seed": {int(k): round(float(v), 4) for k, v in d.items()}}


def convergence(trace: pd.DataFrame, t2: pd.DataFrame, tol: dict) -> dict:
    """Has the selected cell's error curve flattened, and has the thermostat moved?

    Per task and method, at its selected (a, eta) (``t2``), means over seeds of: ``late_change`` = the running
    averaged test metric at the last checkpoint minus at the checkpoint nearest 80% of the run (flat when
    |late_change| <= the task's pooled seed sd ``tol[task]``); ``single_sample_late`` = the single-sample test
    metric averaged over the last 20% of the run; ``alpha_over_a`` = the thermostat at the end / a (SGHMC: 1)."""
    out = {}
    for task, t in t2[t2["task"] != "netflix"].groupby("task"):
        for _, row in t.iterrows():
            tr = trace[(trace["task"] == task) & (trace["method"] == row["method"]) & (trace["a"] == row["a"])
                       & (trace["eta"] == row["eta"])]
            if tr.empty:
                continue
            last, changes, singles, alphas = tr["step"].max(), [], [], []
            for _, g in tr.groupby("seed"):
                g = g.sort_values("step")
                avg = g.dropna(subset=["metric"])
                if len(avg) >= 2:
                    i80 = int(np.argmin(np.abs(avg["step"].to_numpy() - 0.8 * last)))
                    changes.append(float(avg["metric"].iloc[-1] - avg["metric"].iloc[i80]))
                singles.append(float(g.loc[g["step"] > 0.8 * last, "metric_sample"].mean()))
                alphas.append(float(g["alpha"].iloc[-1] / row["a"]))
            ch = float(np.mean(changes)) if changes else np.nan
            tl = tol.get(task)
            out[f"{task} {row['method']}"] = {
                "late_change": round(ch, 4), "flat": bool(tl is not None and np.isfinite(ch) and abs(ch) <= tl),
                "single_sample_late": round(float(np.mean(singles)), 4), "alpha_over_a": round(float(np.mean(alphas)), 4)}
    return out


def _stab2(t2, summary=None) -> dict:
    """Per task: SGNHT's mean test metric at its selected (a, eta) against SGHMC's, with the pooled sd
    (:func:`stab2_tolerance`: the two selected cells' pooled seed-to-seed sd, the whole grid's where that is 0) as
    the unit: True when SGNHT is lower (better) by more than 1 sd, False when higher by more than 1 sd, None when
    the difference is within 1 sd (not resolved: an SGNHT identical to SGHMC, or better by noise, is not "better";
    worse by noise is not a contradiction). A task whose pooled sd is 0 or NaN (no seed-to-seed variation
    measured anywhere) is not judged (None). The claim: False if a task fails, True if every task holds, else
    None. ``t2`` (:func:`tables.stab2`) carries ``a``/``eta`` of the selected cells."""
    res, strict, sds, paired, which = {}, {}, {}, {}, {}
    for task, t in t2[t2["task"] != "netflix"].groupby("task"):
        r = t.set_index("method")
        if summary is not None:
            tol, which[task] = stab2_tolerance(summary, t2, task)
        else:
            tol, which[task] = float(np.nan_to_num(r.loc["SGHMC", "test_sd"])), "SGHMC's selected cell"
        sds[task] = None if not np.isfinite(tol) else round(tol, 4)
        diff = float(r.loc["SGNHT", "test_mean"] - r.loc["SGHMC", "test_mean"])
        res[task] = (True if diff < -tol else False if diff > tol else None) if (np.isfinite(tol) and tol > 0) else None
        strict[task] = bool(r.loc["SGNHT", "test_mean"] < r.loc["SGHMC", "test_mean"])
        if summary is not None and "a" in t2:
            paired[task] = paired_difference(summary, t2, task)
    judged = [v for v in res.values() if v is not None]
    holds = (all(judged) if len(judged) == len(res) else (False if not all(judged) else None)) if res else None
    return {"holds": holds, "sgnht_better_beyond_1_pooled_sd": res, "pooled_sd": sds, "pooled_over": which,
            "sgnht_strictly_better": strict, "paired_difference_sgnht_minus_sghmc": paired}


def check_stab2(table: pd.DataFrame, summary: pd.DataFrame, settings: dict, profile: str,
                trace: pd.DataFrame | None = None) -> Claim:
    """SGNHT-STab2 from :func:`scalable_bayes_papers.sgnht.tables.stab2`: per task, SGNHT's test metric at
    its selected (a, eta) below SGHMC's by more than 1 pooled seed-to-seed sd (:func:`pooled_seed_sd`; within 1
    sd: not resolved); see :func:`_stab2`.
    With the ML traces, ``details["convergence"]`` reports :func:`convergence` of the selected cells."""
    r = _stab2(table, summary)
    if trace is not None and "metric_sample" in trace:
        r["convergence"] = convergence(trace, table, r["pooled_sd"])
    measured = "; ".join(f"{a} {b}: {c:.4g} ± {d:.2g}" for a, b, c, d in
                         zip(table["task"], table["method"], table["test_mean"], table["test_sd"]) if a != "netflix")
    measured += (f"; pooled seed-to-seed sd (tolerance) {r['pooled_sd']}; paired SGNHT - SGHMC per seed "
                 + str({k: v["per_seed"] for k, v in r["paired_difference_sgnht_minus_sghmc"].items()})
                 + f"; SGNHT strictly better: {r['sgnht_strictly_better']}")
    if "convergence" in r:
        measured += ("; selected cells, averaged metric change over the last 20% of the run (flat if within 1 pooled sd) "
                     "and thermostat alpha/a at the end: " + str({k: (v["late_change"], v["flat"], v["alpha_over_a"])
                                                                  for k, v in r["convergence"].items()}))
    paper_value = "; ".join(f"{t} {m}: {v}" for t, d in PAPER_STAB2.items() for m, v in d.items())
    return Claim(id="SGNHT-STab2", paper=PAPER, claim=CLAIMS["STab2"], measured=measured, holds=r["holds"],
                 scale=ml_scale(summary, settings, profile), paper_value=paper_value,
                 details={k: v for k, v in r.items() if k != "holds"}, note=STAB2_NOTE + " " + ML_NOTE)


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


def check_synthetic(item: str, t: dict, settings: dict, profile: str) -> list[Claim]:
    """The claims of one synthetic-experiment figure from its run tables (keyed as in :func:`figures.draw_synthetic`):
    a list (Fig. 2 has one claim per panel)."""
    if item == "Fig1":
        return [check_fig1(t["summary"], settings, profile)]
    if item == "SFig4":
        return [check_sfig4(t["summary"], t["traces"], settings, profile)]
    if item == "Fig2":
        return check_fig2(t["kv_summary"], t["ng_summary"], settings, profile)
    if item == "SFig5":
        return [check_sfig5(t["kv_summary"], settings, profile)]
    if item == "SFig6":
        return [check_sfig6(t["ng_summary"], settings, profile)]
    raise ValueError(f"unknown SGNHT synthetic figure {item!r}; expected Fig1, SFig4, Fig2, SFig5 or SFig6")


SYNTHETIC_CLAIM_IDS = {"Fig1": ["Fig1"], "SFig4": ["SFig4"], "Fig2": ["Fig2a", "Fig2b", "Fig2c", "Fig2d"],
                       "SFig5": ["SFig5"], "SFig6": ["SFig6"]}
FIG3_CLAIM_IDS = [f"Fig3-{t}" for t in FIG3_TASKS] + ["Fig3-KE"]
