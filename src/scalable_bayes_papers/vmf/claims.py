"""Claims of the VMF paper (Nonnenmacher & Sahani 2024), checked on the run tables.

Each ``check_<item>`` is pure (no I/O, no plotting): tables in, :class:`~scalable_bayes.reporting.Claim`
out. The thresholds that turn the paper's words into a test are stated in each claim's ``paper_value``
or ``details``; ``README.md`` beside this file gives the reasons.

Verdicts. Each comparison is an :class:`~scalable_bayes.reporting.Evidence`: its margin (signed so that a
positive margin supports the claim) and its sd between independent runs. Figs 1, 2, 4 and 5 compare analytic
approximations with an exact ODE solve or series on fixed grids of radii: no random draw enters, so their sd
is 0 (``sd_from`` "deterministic: ..."). Fig. 3 (clustering from random initialisations) takes its sd from
the seeds (leave-one-seed-out jackknife of each worst-cell statistic, ``n - 1`` degrees of freedom for ``n``
seeds); Table 1's subsampled corpora take the spread of their counts over data seeds, measured once
(:data:`TAB1_SUBSAMPLE_SD`, from 10 data seeds: :data:`TAB1_SUBSAMPLE_DF` = 9 degrees of freedom). An sd with
stated degrees of freedom widens the band a margin must clear to Student's t at the coverage of two normal sds
(:func:`scalable_bayes.reporting.band_factor`: 13.97 sds at 2 seeds' 1 df, 2.32 at 9 df).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scalable_bayes.reporting import Claim, Evidence, clearance


# The paper's settings of each item, for the scale string of its claim.
PAPER_SETTINGS = {
    "Fig1": "dims [2, 10, 100, 1000], 100 points",
    "Fig2": "dims [10, 100, 1000, 10000], 1000 points, reference ODE",
    "Fig4": "dims [2, 100], 100 points",
    "Fig5": "dims [1000, 10000, 50000], 100 points, reference ODE",
    "Fig3": "4 data sets, full K grids, 10 inits, 100 EM iterations, all documents",
    "Tab1": "all four data sets",
}

FIG3_NOTE = ("Bregman uses the closed forms psi~_1 / psi~'_2; tied M-steps maximise the tied likelihood "
             "(weighted mean resultant length) rather than averaging kappa as the authors' code does.")
# The decisive experiment behind a failure confined to the low-dimensional cases (README.md, "What VMF-Fig3 can fail on")
FIG3_LOWDIM_FINDING = (
    "Decisive experiment (python -m scalable_bayes_papers.vmf.study --dims 3 10; its measured numbers are in "
    "vmf/README.md 'What VMF-Fig3 can fail on'): the mean path with the exact Psi instead of the closed forms agrees with movMF "
    "in the low-dimensional cells, Banerjee's cruder Psi disagrees in more of them; so the low-dimensional "
    "failures are the closed forms' own error at D = 3, not EM noise. At D = 10 and on the paper's corpora "
    "(D >= 2,457) the closed forms pass every cell.")


def scale(item: str, settings: dict, profile: str) -> str:
    """Scale string of a claim: the profile plus this run's settings beside the paper's."""
    f = settings
    if item == "Fig3":
        here = (f"{len(f['datasets'])} data sets {f['datasets']}, K grids {f['k_grid']}, {len(f['seeds'])} inits, "
                f"{f['max_iter']} EM iterations, subsample {f['max_docs'] or 'none'}, low-dim {f.get('lowdim') or 'none'}, "
                f"control {f.get('control_negentropy') or 'none'} on {f.get('control_datasets') or 'all'}")
    elif item == "Tab1":
        here = f"data sets {f['datasets']}"
    else:
        here = f"dims {f['dims']}, {f['n_points']} points"
        if f.get("reference"):
            here += f", reference {f['reference']}" + (f" ({f.get('ref_dps', 50)} digits)" if f["reference"] == "mpmath" else "")
        if f.get("ode_dims") is not None:
            here += f", ODE at {f['ode_dims']}"
    return f"{profile} ({here}; paper: {PAPER_SETTINGS[item]})"


def _claim(item: str, settings: dict, profile: str, fields: dict, note: str | None = None) -> Claim:
    return Claim(id=f"VMF-{item}", paper="vmf", scale=scale(item, settings, profile), note=note or None, holds=None,
                 **fields)


def _decades(x) -> float:
    """log10 of a positive error or ratio (0 floored at 1e-300)."""
    return float(np.log10(max(float(x), 1e-300)))


#: sd_from of the curve items (Figs 1, 2, 4, 5)
DETERMINISTIC = "deterministic: analytic forms against the exact ODE / series on a fixed grid of radii, no random draw"


def _fig1_fields(df, r_lo=0.05, r_hi=0.99, tol=1e-6):
    sub = df[(df.r >= r_lo) & (df.r <= r_hi)]
    worst = sub.groupby("d")[["phi_rel_err", "dphi_rel_err"]].max()
    m = float(worst.to_numpy().max())
    return {
        "claim": "The ODE solutions agree well with the Bessel-derived negative entropy and its gradient.",
        "measured": f"max relative error over r in [{r_lo}, {r_hi}] and d in {sorted(df.d.unique().tolist())}: "
                    f"{m:.2e} (phi and phi'); per d: " + ", ".join(
                        f"d={d}: {row.phi_rel_err:.1e}/{row.dphi_rel_err:.1e}" for d, row in worst.iterrows()),
        "evidence": (Evidence("max relative error of phi and phi' below 1e-6 (decades)", _decades(tol) - _decades(m),
                              0.0, DETERMINISTIC),),
        "paper_value": "agree well (no numbers); testable: rel. error < 1e-6 for r in [0.05, 0.99]",
        "details": {"max_rel_err": m, "tol": tol},
    }


def check_fig1(df: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """VMF-Fig1: see the claim text in :func:`_fig1_fields`."""
    return _claim("Fig1", settings, profile, _fig1_fields(df), None)


def _fig2_fields(df, allowed_violations=0.01, floor=1e-12):
    """Refined beats Banerjee at (almost) every r and d; max abs error of psi~'_2 decreasing in d.

    A point counts as a violation only if the refined error is not below Banerjee's (a tie counts: "lower errors"
    is not shown by equal ones, and Banerjee's forms filed under the refined name tie everywhere) AND exceeds
    ``floor`` relative
    (below it both sit at the double-precision evaluation of the closed forms: the reference is the
    50-digit mpmath one, see ``reference.py``; with the paper's ODE reference the floor was 1e-9, the
    ODE's own accuracy). Rows ``method == "ode"`` (the paper's reference, compared to the high-precision
    one) are reported, not tested."""
    ref = df[df.method == "refined"].reset_index(drop=True)
    ban = df[df.method == "banerjee"].reset_index(drop=True)
    reference = str(df["reference"].iloc[0]) if "reference" in df else "ode"
    frac, frac0 = {}, {}
    for q in ["phi", "dphi", "breg"]:
        e1, e2 = ref[f"{q}_abs_err"], ban[f"{q}_abs_err"]
        viol = (e1 >= e2) & (e1 > floor * np.maximum(1.0, np.abs(ref[f"{q}_ref"])))
        frac[q] = float(viol.mean())
        frac0[q] = float((e1 >= e2).mean())
    max_abs = ref.groupby("d")["dphi_abs_err"].max()
    # "shrinks with d": compare over the bulk of the range (r <= 0.95, away from the 1/(1-r^2) pole)
    bulk = ref[ref.r <= 0.95].groupby("d")["dphi_abs_err"].max()
    decreasing = bool(np.all(np.diff(bulk.to_numpy()) < 0))
    fall = [_decades(a) - _decades(b) for a, b in zip(bulk.to_numpy()[:-1], bulk.to_numpy()[1:])]
    decreasing_all = bool(np.all(np.diff(max_abs.to_numpy()) < 0))
    ode = df[df.method == "ode"]
    ode_err = ode.groupby("d")["dphi_abs_err"].max() if len(ode) else pd.Series(dtype=float)
    ode_txt = ("; the paper's ODE reference's own max |err phi'| (vs the mpmath reference) by d: "
               + ", ".join(f"d={d}: {v:.2e}" for d, v in ode_err.items())) if len(ode_err) else ""
    return {
        "claim": "The refined closed forms have lower absolute and relative errors than Banerjee's approximation "
                 "for all |mu| and d, and their absolute error shrinks with d.",
        "measured": f"reference {reference}; fraction of (d, r) points where refined is not better than Banerjee "
                    f"(above {floor:g} relative): "
                    + ", ".join(f"{k}: {v:.3%}" for k, v in frac.items())
                    + " (without the floor: " + ", ".join(f"{k}: {v:.3%}" for k, v in frac0.items()) + ")"
                    + "; max |err psi~'_2| for r <= 0.95 by d: "
                    + ", ".join(f"d={d}: {v:.2e}" for d, v in bulk.items())
                    + "; over all r: " + ", ".join(f"d={d}: {v:.2e}" for d, v in max_abs.items()) + ode_txt,
        "evidence": (Evidence(f"{allowed_violations:.0%} minus the largest fraction of points where refined is not "
                              "better than Banerjee (phi, phi', Bregman)", allowed_violations - max(frac.values()), 0.0,
                              DETERMINISTIC),)
                    + ((Evidence("max |err psi~'_2| (r <= 0.95) falls with d: the smallest fall between consecutive "
                                 "d (decades)", min(fall), 0.0, DETERMINISTIC),) if fall else ()),
        "paper_value": "refined below Banerjee everywhere; abs. error of the proposed forms shrinks with d",
        "details": {"reference": reference, "floor": floor, "violation_fraction": frac,
                    "violation_fraction_no_floor": frac0, "max_abs_err_dphi_bulk": bulk.to_dict(),
                    "max_abs_err_dphi": max_abs.to_dict(), "decreasing_in_d": decreasing,
                    "decreasing_in_d_all_r": decreasing_all, "ode_max_abs_err_dphi": ode_err.to_dict()},
    }


def check_fig2(df: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """VMF-Fig2: see the claim text in :func:`_fig2_fields`."""
    return _claim("Fig2", settings, profile, _fig2_fields(df), None)


def _fig4_fields(df, shrink=0.1):
    out = {}
    for d, sub in df.groupby("d"):
        lo, hi = sorted(sub.dpsi0.unique())[0], sorted(sub.dpsi0.unique())[-1]
        a = sub[sub.dpsi0 == lo].sort_values("r")
        b = sub[sub.dpsi0 == hi].sort_values("r")
        diff = np.abs(a.dphi.to_numpy() - b.dphi.to_numpy())
        out[int(d)] = {"initial_gap": float(hi - lo), "final_gap": float(diff[-1]), "ratio": float(diff[-1] / (hi - lo)),
                       "r_max": float(a.r.max())}
    ratios = [out[d]["ratio"] for d in sorted(out)]
    stronger = [_decades(a) - _decades(b) for a, b in zip(ratios[:-1], ratios[1:])]
    return {
        "claim": "phi' converges quickly from initialisations orders of magnitude apart (attracting forward "
                 "dynamics); the effect of phi'(0) is confined to small |mu|, more so for larger d.",
        "measured": "; ".join(f"d={d}: |delta phi'| {v['initial_gap']:.1e} at r=0 -> {v['final_gap']:.1e} at "
                              f"r={v['r_max']:g} (ratio {v['ratio']:.1e})" for d, v in out.items()),
        "evidence": (Evidence(f"gap shrink beyond {1 / shrink:g}x on the worst panel: log10({shrink:g}) - log10(largest "
                              "final / initial gap) (decades)", _decades(shrink) - _decades(max(ratios)), 0.0,
                              DETERMINISTIC),)
                    + ((Evidence("shrink stronger for larger d: smallest log10(ratio_d / ratio_next d) (decades)",
                                 min(stronger), 0.0, DETERMINISTIC),) if stronger else ()),
        "paper_value": "quick convergence from initial values 1e-6 ... 1e-2 (authors' code)",
        "details": {"per_d": out, "shrink_threshold": shrink,
                    "test": "gap shrinks by more than 1/shrink on each panel and the shrink is stronger for larger d"},
    }


def check_fig4(df: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """VMF-Fig4: see the claim text in :func:`_fig4_fields`."""
    return _claim("Fig4", settings, profile, _fig4_fields(df), None)


def operation_counts(n_steps, n_terms):
    """Rough flop counts: closed form psi~'_2 ~ 20 operations; Halley-Perron: per step ~15 + 6 per CF term."""
    return {"closed_form": 20, "root_finding": n_steps * (15 + 6 * n_terms)}


def _fig5_fields(df, factor=10.0):
    dmax = int(df.d.max())
    sub = df[df.d == dmax]
    reference = str(df["reference"].iloc[0]) if "reference" in df else "ode"
    med_cf = float(sub[sub.method == "closed_form"].abs_err.median())
    med_rf = float(sub[sub.method == "halley_2steps_20terms"].abs_err.median())
    ops = operation_counts(2, 20)
    ode = df[df.method == "ode"]
    ode_med = ode.groupby("d").abs_err.median().to_dict() if len(ode) else {}
    ode_txt = ("; the paper's ODE reference's own median |err| by d: "
               + ", ".join(f"d={d}: {v:.2e}" for d, v in ode_med.items())) if ode_med else ""
    return {
        "claim": "For large d there is little difference in absolute error between the closed form psi~'_2 and "
                 "double-precision root finding, at ~10 operations instead of several hundred.",
        "measured": f"reference {reference}; d={dmax}: median |err| closed form {med_cf:.2e} vs Halley-Perron "
                    f"(2 steps, 20 terms) {med_rf:.2e}; operations ~{ops['closed_form']} vs ~{ops['root_finding']}"
                    + ode_txt,
        "evidence": (Evidence(f"closed form's median |err| within {factor:g}x root finding's at d = {dmax}: "
                              f"log10({factor:g}) - log10(ratio) (decades)",
                              _decades(factor) - (_decades(med_cf) - _decades(med_rf)), 0.0, DETERMINISTIC),),
        "paper_value": "little difference around d = 50,000; O(10) vs several hundred operations",
        "details": {"d": dmax, "reference": reference, "median_abs_err_closed_form": med_cf,
                    "median_abs_err_root_2_20": med_rf, "operations": ops, "factor": factor,
                    "ode_median_abs_err": ode_med},
    }


def check_fig5(df: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """VMF-Fig5: see the claim text in :func:`_fig5_fields`."""
    return _claim("Fig5", settings, profile, _fig5_fields(df), None)


def _fig3_pair_stats(df, param):
    """Per (dataset, K, soft/hard, tied/free) cell: |NMI(param) - NMI(natural)| of the seed means, and the
    max over seeds of the label disagreement and of |exact LL difference| per document vs the natural fit."""
    cell = ["dataset", "K", "assignment", "tied"]
    m = df[df.parametrization.isin([param, "natural"])].groupby(cell + ["parametrization"])["nmi"].mean()
    m = m.unstack("parametrization")
    own = df[df.parametrization == param]
    out = pd.DataFrame({"nmi_diff": (m[param] - m["natural"]).abs(),
                        "label_disagreement": own.groupby(cell)["label_disagreement"].max(),
                        "ll_diff": own.assign(a=own.exact_ll_diff.abs()).groupby(cell)["a"].max()})
    return out


def fig3_closer_than_control(df, control):
    """Per (dataset, K, soft/hard, tied/free, seed): is the closed-form mean fit closer to movMF than the control?

    Paired by cell and seed (same data, same initialisation): ``cf`` = |exact LL difference| per document of the
    mean path with the paper's closed forms vs movMF, ``ctrl`` = the same for the mean path with the control's
    Psi (``mean_<name>`` rows), ``closer`` = cf < ctrl, or cf within 2 units in the last place of the per-document
    LL (movMF's fit reproduced up to rounding). Only the cells and seeds the control ran.

    Parameters
    ----------
    df : pd.DataFrame
        VMF-Fig3 run rows (:func:`scalable_bayes_papers.vmf.runs.run_fig3`).
    control : str
        The control's parametrization, e.g. ``"mean_banerjee"``.

    Returns
    -------
    pd.DataFrame
        Columns ``cf``, ``ctrl``, ``closer`` and ``gap`` (``ctrl`` minus ``cf``, with a ``cf`` within 2 units in
        the last place counted as 0: positive where the closed forms are closer), indexed by dataset, K,
        assignment, tied, seed.
    """
    key = ["dataset", "K", "assignment", "tied", "seed"]
    ll = df[df.parametrization.isin(["mean", control])].assign(
        a=lambda d: d.exact_ll_diff.abs(), ulp=lambda d: np.spacing(np.abs(d.exact_ll_per_doc.to_numpy(float))))
    w = ll.pivot_table(index=key, columns="parametrization", values=["a", "ulp"]).dropna()
    if not len(w):
        return pd.DataFrame(columns=["cf", "ctrl", "closer", "gap"])
    out = pd.DataFrame({"cf": w[("a", "mean")], "ctrl": w[("a", control)]})
    # a difference of at most 2 units in the last place of the per-document LL is rounding: movMF reproduced
    rounding = out["cf"] <= 2 * w[("ulp", "mean")]
    out["closer"] = (out["cf"] < out["ctrl"]) | rounding
    out["gap"] = out["ctrl"] - out["cf"].where(~rounding, 0.0)
    return out


def _jackknife_sd(seeds, stat) -> float:
    """Leave-one-seed-out jackknife sd of ``stat(kept_seeds)`` (NaN with fewer than 2 seeds)."""
    seeds = list(seeds)
    n = len(seeds)
    if n < 2:
        return float("nan")
    loo = np.array([stat([s for s in seeds if s != out]) for out in seeds], dtype=float)
    return float(np.sqrt((n - 1) / n * np.sum((loo - loo.mean()) ** 2)))


FIG3_TOLS = {"nmi_diff": ("|delta NMI| of the seed means", 0.02), "label_disagreement": ("label disagreement", 0.02),
             "ll_diff": ("|delta exact LL| per document (nats)", 0.01)}


def fig3_evidence(df, controls=()) -> tuple:
    """VMF-Fig3's comparisons on the paper's corpora (data sets without ``_svd``), each with its spread between seeds.

    One :class:`Evidence` per tolerance of :data:`FIG3_TOLS` (margin = tolerance - the worst cell) and one per
    control (margin = the smallest ``gap`` of :func:`fig3_closer_than_control` over the cells and seeds it ran);
    each sd is the leave-one-seed-out jackknife of its statistic (a maximum or minimum over cells and seeds, not
    a mean), with ``n - 1`` degrees of freedom for the ``n`` seeds it is taken over (the band: Student's t, 13.97
    sds at 2 seeds). Empty with fewer than 2 seeds (the spread is unknown).
    """
    paper = df[~df.dataset.astype(str).str.contains("_svd")]
    seeds = sorted(paper.seed.unique())
    if len(seeds) < 2:
        return ()
    n = len(seeds)
    jk = f"leave-one-seed-out jackknife over the {n} seeds, {n - 1} df"

    def worst(col):
        return lambda kept: float(_fig3_pair_stats(paper[paper.seed.isin(kept)], "mean")[col].max())

    ev = [Evidence(f"{name}: {tol:g} minus the worst cell of the paper's corpora", tol - worst(col)(seeds),
                   _jackknife_sd(seeds, worst(col)), jk, n - 1) for col, (name, tol) in FIG3_TOLS.items()]
    for c in controls:
        cl = fig3_closer_than_control(paper, c)
        if not len(cl):
            continue
        s_idx = cl.index.get_level_values("seed")
        cseeds = sorted(set(s_idx))

        def least(kept, cl=cl, s_idx=s_idx):
            return float(cl["gap"][s_idx.isin(kept)].min())

        if len(cseeds) < 2:  # a control on one seed only: its spread is unknown (not a configuration we run)
            continue
        ev.append(Evidence(f"closed forms closer to movMF than the {c.removeprefix('mean_')} control: smallest "
                           "(control - closed forms) |delta exact LL| per document (nats)", least(cseeds),
                           _jackknife_sd(cseeds, least),
                           f"leave-one-seed-out jackknife over the {len(cseeds)} seeds the control ran, "
                           f"{len(cseeds) - 1} df", len(cseeds) - 1))
    return tuple(ev)


def _fig3_fields(df, tol=0.02, dis_tol=0.02, ll_tol=0.01):
    """Bregman (closed forms) vs movMF in every cell, by three measures that each can fail (README.md):
    |delta NMI| <= tol, label disagreement after optimal matching <= dis_tol, |delta exact LL| <= ll_tol nats
    per document. The verdict is the paper's claim on the paper's corpora; low-dimensional projections (data
    sets ``*_svd<D>``, ours), where the closed forms differ from root finding, are measured the same way and
    reported beside it: they show that the measures can fail, and where. A control run of the mean path with another Psi (``mean_<name>`` rows,
    Banerjee's by default) is tested too (:func:`fig3_closer_than_control`): on the paper's corpora the closed
    forms' fit must be closer to movMF's than the control's in every cell and seed the control ran, by the exact
    log-likelihood measure (paired: same data and initialisation). At the corpora's D even Banerjee's Psi stays
    within the three tolerances, so without this part the check passes the cruder approximation as well."""
    main = _fig3_pair_stats(df, "mean")
    worst = main.groupby(level="dataset").max()
    checks = {"nmi_diff": tol, "label_disagreement": dis_tol, "ll_diff": ll_tol}
    fails = {k: int((main[k] > v).sum()) for k, v in checks.items()}
    controls = sorted(p for p in df.parametrization.unique() if str(p).startswith("mean_"))
    ctrl_txt, ctrl_details, not_closer = "", {}, {}
    for c in controls:
        st = _fig3_pair_stats(df, c).dropna()  # cells of the data sets that had the control run
        w = st.groupby(level="dataset").max()
        cf = {k: int((st[k] > v).sum()) for k, v in checks.items()}
        cl = fig3_closer_than_control(df, c)
        by_ds = cl.groupby(level="dataset").agg(n=("closer", "size"), closer=("closer", "sum"),
                                                 cf_max=("cf", "max"), ctrl_min=("ctrl", "min"))
        for ds, r in by_ds.iterrows():
            if "_svd" not in ds and r.closer < r.n:
                not_closer[ds] = not_closer.get(ds, 0) + int(r.n - r.closer)
        ctrl_details[c] = {"worst_per_dataset": w.to_dict(orient="index"), "cells_over_tolerance": cf,
                           "n_cells": int(len(st)),
                           "closed_forms_closer": {ds: {"closer": int(r.closer), "of": int(r.n),
                                                        "max_ll_diff_closed_forms": float(r.cf_max),
                                                        "min_ll_diff_control": float(r.ctrl_min)}
                                                   for ds, r in by_ds.iterrows()}}
        ctrl_txt += (f". Control {c.removeprefix('mean_')}: " + "; ".join(
            f"{ds}: {r.nmi_diff:.4f} / {r.label_disagreement:.4f} / {r.ll_diff:.2e}" for ds, r in w.iterrows())
            + f"; cells over tolerance {cf['nmi_diff']} / {cf['label_disagreement']} / {cf['ll_diff']} of {len(st)}"
            + "; closed forms closer to movMF than the control (|delta LL|, same cell and seed): " + "; ".join(
                f"{ds}: {int(r.closer)}/{int(r.n)} (closed forms <= {r.cf_max:.1e}, control >= {r.ctrl_min:.1e})"
                for ds, r in by_ds.iterrows()))
    over = main[(main.nmi_diff > tol) | (main.label_disagreement > dis_tol) | (main.ll_diff > ll_tol)]
    failing = sorted(set(over.index.get_level_values("dataset")))
    paper_sets = [ds for ds in worst.index if "_svd" not in ds]
    paper_ok = not any("_svd" not in ds for ds in failing)
    sees_psi = not not_closer
    evidence = fig3_evidence(df, controls)
    return {
        "claim": "No qualitative difference between mean-parameter (Bregman, closed forms) and natural-parameter "
                 f"(movMF) fits from the same initialisation: in every (dataset, K, soft/hard, tied/free) cell "
                 f"|NMI_Bregman - NMI_movMF| <= {tol}, at most {dis_tol:.0%} of documents clustered differently "
                 f"(after optimal label matching) and |delta log-likelihood| <= {ll_tol} nats per document, on the "
                 "paper's corpora (a low-dimensional projection where the closed forms differ from root finding is "
                 "measured beside, outside the verdict); and there the closed forms' fit is closer to movMF's than a "
                 "control run with Banerjee's cruder Psi from the same initialisation (Fig. 2's ordering, seen "
                 "through the fits).",
        "measured": "worst cell per dataset, |delta NMI| / label disagreement / |delta LL| per doc: "
                    + "; ".join(f"{ds}: {r.nmi_diff:.4f} / {r.label_disagreement:.4f} / {r.ll_diff:.2e}"
                                for ds, r in worst.iterrows())
                    + f"; cells over tolerance {fails['nmi_diff']} / {fails['label_disagreement']} / "
                      f"{fails['ll_diff']} of {len(main)}"
                    + (f" (over tolerance: {', '.join(failing)}; the paper's corpora {'all pass' if paper_ok else 'FAIL'})"
                       if failing else "") + ctrl_txt,
        "evidence": evidence,
        "paper_value": "no qualitative difference (authors' results agree to <= 0.005)",
        "details": {"worst_per_dataset": worst.to_dict(orient="index"), "cells_over_tolerance": fails,
                    "tolerances": checks, "n_cells": int(len(main)), "n_seeds": int(df.seed.nunique()),
                    "failing_datasets": failing, "paper_datasets": paper_sets, "holds_on_paper_datasets": paper_ok,
                    "closed_forms_closer_than_control": sees_psi, "not_closer_cells_on_paper_datasets": not_closer,
                    "controls": ctrl_details},
    }


def _fig3_note(fields):
    """FIG3_NOTE, plus the finding when the check fails: the decisive experiment's if only low-dimensional
    cases fail; otherwise a pointer to the failing corpora (not explained by that experiment). A failure of the
    sensitivity part (not closer to movMF than the control) opens the note; without a control it says so."""
    d = fields["details"]
    blind = d["not_closer_cells_on_paper_datasets"]
    blind_txt = ("" if not blind else
                 "Fails the sensitivity part: on " + ", ".join(f"{ds} ({n} cell-seeds)" for ds, n in blind.items())
                 + " the Bregman fit is not closer to movMF (|delta exact LL| per document, same cell and seed) than "
                 "the control run with another Psi, so the agreement cannot be credited to the closed forms. ")
    note = FIG3_NOTE
    if not d["paper_datasets"]:
        note = ("Not checked: no run on the paper's corpora (only low-dimensional projections, outside the "
                "verdict). " + note)
    elif not fields["evidence"]:
        note = ("Not checked: needs 2+ seeds (initialisations); every comparison's spread is measured between "
                "seeds. " + note)
    if not d["controls"]:
        note += (" No control run (mean_<name> rows): the sensitivity part (closed forms closer to movMF than a "
                 "cruder Psi) is not tested; the verdict rests on the tolerances alone.")
    if not d["failing_datasets"]:
        return blind_txt + note
    if d["holds_on_paper_datasets"]:
        return (f"{blind_txt}{'Holds' if not blind else 'Within tolerance'} on the paper's corpora; over tolerance only in {', '.join(d['failing_datasets'])} (ours, "
                f"outside the verdict). {FIG3_LOWDIM_FINDING} {note}")
    return (f"{blind_txt}Fails on the paper's corpora ({', '.join(ds for ds in d['failing_datasets'] if '_svd' not in ds)}): "
            f"not covered by the low-dimensional study; see vmf/README.md 'What VMF-Fig3 can fail on'. {note}")


def check_fig3(df: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """VMF-Fig3: see the claim text in :func:`_fig3_fields`."""
    fields = _fig3_fields(df)
    return _claim("Fig3", settings, profile, fields, _fig3_note(fields))


#: Table 1's subsampled corpora: sd of their document and term counts over the data seed (``data.seed``, the
#: subsample of 100 documents per class), measured once over data seeds 0-9 at the default corpus settings
#: (``python -m scalable_bayes_papers.vmf.study --tab1-spread``; README.md, "Table 1"). classic3 and news20 are
#: whole corpora: their counts do not depend on a seed.
TAB1_SUBSAMPLE_SD = {"classic300": {"n_docs": 0.0, "n_terms": 63.2},
                     "news20_small": {"n_docs": 0.95, "n_terms": 589.2}}
#: Degrees of freedom of :data:`TAB1_SUBSAMPLE_SD`: the sample sd (ddof 1) of 10 data seeds' counts, 10 - 1
TAB1_SUBSAMPLE_DF = 9


def _tab1_fields(df, rel_tol=0.1):
    """Class counts equal to the paper's (deterministic: the classes do not depend on the subsample), and the
    document and term counts within ``rel_tol`` of the paper's, each decided by the data set whose margin is
    least clear (smallest margin / band, :func:`scalable_bayes.reporting.clearance`; sd from :data:`TAB1_SUBSAMPLE_SD` with :data:`TAB1_SUBSAMPLE_DF` degrees of
    freedom, so its band is Student's t, 2.32 sds; 0 for whole corpora)."""
    ok_classes = bool((df.classes == df.paper_classes).all())
    docs_dev = (df.n_docs - df.paper_docs).abs() / df.paper_docs
    terms_dev = (df.n_terms - df.paper_terms).abs() / df.paper_terms
    evidence = [Evidence("class counts: half a class minus the largest |classes - paper's|",
                         0.5 - float((df.classes - df.paper_classes).abs().max()), 0.0,
                         "deterministic: the class labels of the corpora, the same in every subsample")]
    for col, dev, what in (("n_docs", docs_dev, "documents"), ("n_terms", terms_dev, "terms")):
        rows = []
        for ds, d, paper in zip(df.dataset, dev, df[col.replace("n_", "paper_")]):
            sd = TAB1_SUBSAMPLE_SD.get(ds, {}).get(col, 0.0) / float(paper)
            rows.append((ds, rel_tol - float(d), sd))
        ds, m, sd = min(rows, key=lambda r: clearance(r[1], r[2], TAB1_SUBSAMPLE_DF if r[2] > 0 else None))
        evidence.append(Evidence(f"{what}: {rel_tol:.0%} minus |relative deviation from the paper's| ({ds})", m, sd,
                                 f"sd of {ds}'s {what} over data seeds 0-9 (measured once, TAB1_SUBSAMPLE_SD) / the "
                                 f"paper's count, {TAB1_SUBSAMPLE_DF} df" if sd > 0
                                 else "deterministic: a whole corpus, no subsample",
                                 TAB1_SUBSAMPLE_DF if sd > 0 else None))
    return {
        "claim": "Data sets of the clustering experiment: classic3 (3 classes, 3,891 docs, 4,674 terms), classic300 "
                 "(3, 300, 2,551), news20 (20, 18,803, 28,571), news20-small (20, 2,000, 16,218).",
        "measured": "; ".join(f"{r.dataset}: {r.classes} classes, {r.n_docs} docs, {r.n_terms} terms"
                              for r in df.itertuples()),
        "evidence": tuple(evidence),
        "paper_value": "see claim",
        "details": {"max_rel_dev_docs": float(docs_dev.max()), "max_rel_dev_terms": float(terms_dev.max()),
                    "rel_tol": rel_tol, "classes_equal": ok_classes, "subsample_sd": TAB1_SUBSAMPLE_SD,
                    "subsample_sd_df": TAB1_SUBSAMPLE_DF},
    }


def check_tab1(df: pd.DataFrame, settings: dict, profile: str) -> Claim:
    """VMF-Tab1: see the claim text in :func:`_tab1_fields`."""
    return _claim("Tab1", settings, profile, _tab1_fields(df), None)
