"""Computations behind the VMF paper's figures and table (Nonnenmacher & Sahani 2024).

Each ``figN_table`` returns a tidy DataFrame (one row per dimension x radius [x method]) with wall
times; each ``figN_claim`` turns such a table into the claim dict (``measured``, ``holds``, details)
that the plot rule writes with :func:`scalable_bayes.reporting.write_claim`. ``run_fig3`` runs the
document-clustering sweep of one (dataset, seed): every K, the 8 mixture variants and spherical k-means.
"""

from __future__ import annotations

import logging
import time

import numpy as np
import pandas as pd

from ...evaluation.clustering import nmi
from ...special import (
    bessel_ratio,
    kappa_halley_perron,
    negentropy_offset,
    solve_negentropy_ode,
    vmf_log_partition_uniform,
    vmf_mean_to_kappa,
    vmf_negentropy,
)
from .core import fit_vmf_mixture, init_partition_means, spherical_kmeans

logger = logging.getLogger(__name__)


def author_dpsi0(d):
    """phi'(0) = epsilon_0 used by the authors: 1e-6 (d < 1000), 1e-5 (d < 50,000), 1e-4 above."""
    return 1e-6 if d < 1000 else (1e-5 if d < 50000 else 1e-4)


def _rel(err, ref):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.abs(err) / np.abs(ref)


# ----------------------------------------------------------------------------- Fig. 1
def fig1_table(dims=(2, 10, 100, 1000), n_points=100, psi_const="author"):
    """ODE solution vs Bessel-derived phi and phi' ([A34], TARGETS VMF-Fig1 procedure).

    (1) ODE from r = 0 on r0 = linspace(0, 1, n+2)[1:-1] -> kappa0 = phi'(r0); (2) r = A_d(kappa0) with
    the Perron CF (tested to 1e-12 against mpmath; the authors used mpmath); (3) ODE again at r;
    (4) kappa_ref = Halley-Perron (3 steps, 50 terms); (5) phi_ref = kappa_ref r - psi_U(kappa_ref).
    """
    rows = []
    for d in dims:
        t0 = time.perf_counter()
        off = negentropy_offset(d, psi_const)
        r0 = np.linspace(0.0, 1.0, n_points + 2)[1:-1]
        _, k0 = solve_negentropy_ode(r0, d, psi0=off, dpsi0=author_dpsi0(d))
        r = np.asarray(bessel_ratio(d, k0))
        r = r[(r > 0) & (r < 1)]
        phi_ode, dphi_ode = solve_negentropy_ode(r, d, psi0=off, dpsi0=author_dpsi0(d))
        kappa_ref = np.asarray(kappa_halley_perron(r, d, 3, 50))
        phi_ref = kappa_ref * r - np.asarray(vmf_log_partition_uniform(d, kappa_ref)) + off
        rows.append(pd.DataFrame({
            "d": d, "r": r, "phi_ode": phi_ode, "phi_ref": phi_ref, "dphi_ode": dphi_ode, "dphi_ref": kappa_ref,
            "phi_abs_err": np.abs(phi_ode - phi_ref), "phi_rel_err": _rel(phi_ode - phi_ref, phi_ref),
            "dphi_abs_err": np.abs(dphi_ode - kappa_ref), "dphi_rel_err": _rel(dphi_ode - kappa_ref, kappa_ref),
            "psi_const": psi_const, "wall_s": time.perf_counter() - t0}))
        logger.info("fig1 d=%d done in %.1f s", d, time.perf_counter() - t0)
    return pd.concat(rows, ignore_index=True)


def fig1_claim(df, r_lo=0.05, r_hi=0.99, tol=1e-6):
    sub = df[(df.r >= r_lo) & (df.r <= r_hi)]
    worst = sub.groupby("d")[["phi_rel_err", "dphi_rel_err"]].max()
    m = float(worst.to_numpy().max())
    return {
        "claim": "The ODE solutions agree well with the Bessel-derived negative entropy and its gradient.",
        "measured": f"max relative error over r in [{r_lo}, {r_hi}] and d in {sorted(df.d.unique().tolist())}: "
                    f"{m:.2e} (phi and phi'); per d: " + ", ".join(
                        f"d={d}: {row.phi_rel_err:.1e}/{row.dphi_rel_err:.1e}" for d, row in worst.iterrows()),
        "holds": bool(m < tol),
        "paper_value": "agree well (no numbers); testable: rel. error < 1e-6 for r in [0.05, 0.99]",
        "details": {"max_rel_err": m, "tol": tol},
    }


# ----------------------------------------------------------------------------- Fig. 2
def fig2_table(dims=(10, 100, 1000, 10000), n_points=1000, dpsi0=1e-5, psi_const="author"):
    """Closed forms (refined psi~_1 / psi~'_2, Banerjee) vs the ODE reference on r = linspace(0,1,n+20)[10:-10]."""
    rows = []
    r = np.linspace(0.0, 1.0, n_points + 20)[10:-10]
    for d in dims:
        t0 = time.perf_counter()
        off = negentropy_offset(d, psi_const)
        phi, dphi = solve_negentropy_ode(r, d, psi0=0.0, dpsi0=dpsi0)
        t_ode = time.perf_counter() - t0
        breg_ref = r * dphi - phi  # D_Psi(0 || mu) = r phi'(r) - phi(r) + phi(0)
        for method, pm, gm in [("refined", "refined", "refined2"), ("banerjee", "banerjee", "banerjee")]:
            t1 = time.perf_counter()
            ph = np.asarray(vmf_negentropy(r, d, pm))
            g = np.asarray(vmf_mean_to_kappa(r, d, gm))
            t_cf = time.perf_counter() - t1
            breg = r * g - ph
            rows.append(pd.DataFrame({
                "d": d, "r": r, "method": method,
                "phi_ref": phi + off, "phi": ph + off, "dphi_ref": dphi, "dphi": g,
                "breg_ref": breg_ref, "breg": breg,
                "phi_abs_err": np.abs(ph - phi), "phi_rel_err": _rel(ph - phi, phi + off),
                "dphi_abs_err": np.abs(g - dphi), "dphi_rel_err": _rel(g - dphi, dphi),
                "breg_abs_err": np.abs(breg - breg_ref), "breg_rel_err": _rel(breg - breg_ref, breg_ref),
                "ode_wall_s": t_ode, "closed_form_wall_s": t_cf, "psi_const": psi_const}))
        logger.info("fig2 d=%d: ODE %.1f s", d, t_ode)
    return pd.concat(rows, ignore_index=True)


def fig2_claim(df, allowed_violations=0.01, floor=1e-9):
    """Refined beats Banerjee at (almost) every r and d; max abs error of psi~'_2 decreasing in d.

    A point counts as a violation only if the refined error exceeds Banerjee's AND exceeds ``floor``
    (both are then at the ODE reference's own accuracy)."""
    ref = df[df.method == "refined"].reset_index(drop=True)
    ban = df[df.method == "banerjee"].reset_index(drop=True)
    frac = {}
    for q in ["phi", "dphi", "breg"]:
        e1, e2 = ref[f"{q}_abs_err"], ban[f"{q}_abs_err"]
        viol = (e1 > e2) & (e1 > floor * np.maximum(1.0, np.abs(ref[f"{q}_ref"])))
        frac[q] = float(viol.mean())
    max_abs = ref.groupby("d")["dphi_abs_err"].max()
    # "shrinks with d": compare over the bulk of the range (r <= 0.95, away from the 1/(1-r^2) pole)
    bulk = ref[ref.r <= 0.95].groupby("d")["dphi_abs_err"].max()
    decreasing = bool(np.all(np.diff(bulk.to_numpy()) < 0))
    beats = all(v <= allowed_violations for v in frac.values())
    return {
        "claim": "The refined closed forms have lower absolute and relative errors than Banerjee's approximation "
                 "for all |mu| and d, and their absolute error shrinks with d.",
        "measured": "fraction of (d, r) points where refined is worse than Banerjee: "
                    + ", ".join(f"{k}: {v:.3%}" for k, v in frac.items())
                    + "; max |err psi~'_2| for r <= 0.95 by d: "
                    + ", ".join(f"d={d}: {v:.2e}" for d, v in bulk.items())
                    + "; over all r: " + ", ".join(f"d={d}: {v:.2e}" for d, v in max_abs.items()),
        "holds": bool(beats and decreasing),
        "paper_value": "refined below Banerjee everywhere; abs. error of the proposed forms shrinks with d",
        "details": {"violation_fraction": frac, "max_abs_err_dphi_bulk": bulk.to_dict(),
                    "max_abs_err_dphi": max_abs.to_dict(), "decreasing_in_d": decreasing},
    }


# ----------------------------------------------------------------------------- Fig. 4
def fig4_table(dims=(2, 100), r_max=(0.1, 0.001), n_points=100, dpsi0=(1e-6, 1e-2)):
    """ODE solutions from different phi'(0) (App. A.3)."""
    rows = []
    for d, rm in zip(dims, r_max):
        r = np.linspace(0.0, rm, n_points + 1)[1:]
        for e0 in dpsi0:
            t0 = time.perf_counter()
            phi, dphi = solve_negentropy_ode(r, d, dpsi0=e0)
            rows.append(pd.DataFrame({"d": d, "r": r, "dpsi0": e0, "phi": phi, "dphi": dphi,
                                      "wall_s": time.perf_counter() - t0}))
    return pd.concat(rows, ignore_index=True)


def fig4_claim(df, shrink=0.1):
    out = {}
    for d, sub in df.groupby("d"):
        lo, hi = sorted(sub.dpsi0.unique())[0], sorted(sub.dpsi0.unique())[-1]
        a = sub[sub.dpsi0 == lo].sort_values("r")
        b = sub[sub.dpsi0 == hi].sort_values("r")
        diff = np.abs(a.dphi.to_numpy() - b.dphi.to_numpy())
        out[int(d)] = {"initial_gap": float(hi - lo), "final_gap": float(diff[-1]), "ratio": float(diff[-1] / (hi - lo)),
                       "r_max": float(a.r.max())}
    ratios = [out[d]["ratio"] for d in sorted(out)]
    holds = all(v < shrink for v in ratios) and all(np.diff(ratios) < 0)
    return {
        "claim": "phi' converges quickly from initialisations orders of magnitude apart (attracting forward "
                 "dynamics); the effect of phi'(0) is confined to small |mu|, more so for larger d.",
        "measured": "; ".join(f"d={d}: |delta phi'| {v['initial_gap']:.1e} at r=0 -> {v['final_gap']:.1e} at "
                              f"r={v['r_max']:g} (ratio {v['ratio']:.1e})" for d, v in out.items()),
        "holds": bool(holds),
        "paper_value": "quick convergence from initial values 1e-6 ... 1e-2 (authors' code)",
        "details": {"per_d": out, "shrink_threshold": shrink,
                    "test": "gap shrinks by more than 1/shrink on each panel and the shrink is stronger for larger d"},
    }


# ----------------------------------------------------------------------------- Fig. 5
ROOT_SETTINGS = ((2, 20), (2, 15), (3, 50))


def fig5_table(dims=(1000, 10000, 20000), n_points=100):
    """Closed form psi~'_2 vs truncated Halley-Perron root finding, abs. error vs the ODE (App. A.5)."""
    rows = []
    r = np.linspace(0.0, 1.0, n_points + 2)[1:-1]
    for d in dims:
        t0 = time.perf_counter()
        _, dphi = solve_negentropy_ode(r, d, dpsi0=author_dpsi0(d))
        t_ode = time.perf_counter() - t0
        t1 = time.perf_counter()
        cf = np.asarray(vmf_mean_to_kappa(r, d, "refined2"))
        rows.append(pd.DataFrame({"d": d, "r": r, "method": "closed_form", "n_steps": 0, "n_terms": 0,
                                  "kappa": cf, "kappa_ode": dphi, "abs_err": np.abs(cf - dphi),
                                  "wall_s": time.perf_counter() - t1, "ode_wall_s": t_ode}))
        for steps, terms in ROOT_SETTINGS:
            t1 = time.perf_counter()
            k = np.asarray(kappa_halley_perron(r, d, steps, terms))
            rows.append(pd.DataFrame({"d": d, "r": r, "method": f"halley_{steps}steps_{terms}terms",
                                      "n_steps": steps, "n_terms": terms, "kappa": k, "kappa_ode": dphi,
                                      "abs_err": np.abs(k - dphi), "wall_s": time.perf_counter() - t1,
                                      "ode_wall_s": t_ode}))
        logger.info("fig5 d=%d: ODE %.1f s", d, t_ode)
    return pd.concat(rows, ignore_index=True)


def operation_counts(n_steps, n_terms):
    """Rough flop counts: closed form psi~'_2 ~ 20 operations; Halley-Perron: per step ~15 + 6 per CF term."""
    return {"closed_form": 20, "root_finding": n_steps * (15 + 6 * n_terms)}


def fig5_claim(df, factor=10.0):
    dmax = int(df.d.max())
    sub = df[df.d == dmax]
    med_cf = float(sub[sub.method == "closed_form"].abs_err.median())
    med_rf = float(sub[sub.method == "halley_2steps_20terms"].abs_err.median())
    ops = operation_counts(2, 20)
    return {
        "claim": "For large d there is little difference in absolute error between the closed form psi~'_2 and "
                 "double-precision root finding, at ~10 operations instead of several hundred.",
        "measured": f"d={dmax}: median |err| closed form {med_cf:.2e} vs Halley-Perron (2 steps, 20 terms) "
                    f"{med_rf:.2e}; operations ~{ops['closed_form']} vs ~{ops['root_finding']}",
        "holds": bool(med_cf <= factor * med_rf),
        "paper_value": "little difference around d = 50,000; O(10) vs several hundred operations",
        "details": {"d": dmax, "median_abs_err_closed_form": med_cf, "median_abs_err_root_2_20": med_rf,
                    "operations": ops, "factor": factor},
    }


# ----------------------------------------------------------------------------- Fig. 3
VARIANTS = [(p, a, t) for a in ("soft", "hard") for p in ("mean", "natural") for t in (False, True)]


def subsample_stratified(labels, max_docs, rng):
    """Indices of at most ``max_docs`` documents, same class proportions (sorted); all if max_docs is None."""
    n = len(labels)
    if max_docs is None or max_docs >= n:
        return np.arange(n)
    idx = []
    classes, counts = np.unique(labels, return_counts=True)
    take = np.maximum(1, np.floor(counts * max_docs / n).astype(int))
    for c, m in zip(classes, take):
        members = np.flatnonzero(labels == c)
        idx.append(rng.choice(members, size=min(m, members.size), replace=False))
    return np.sort(np.concatenate(idx))


def run_fig3(X, labels, dataset, k_grid, seed, *, max_iter=100, tol=0.0, kappa_max=1e4,
             kappa_method="halley_perron", negentropy="refined", max_docs=None, spkmeans=True):
    """One (dataset, seed) of VMF-Fig3: for each K the 8 variants (soft/hard x natural/mean x free/tied)
    from one shared initialisation per K, plus spherical k-means. Returns tidy rows with NMI and timings."""
    from ...utils import rng_from_seed

    labels = np.asarray(labels)
    sel = subsample_stratified(labels, max_docs, rng_from_seed(seed, 0))
    X = X[sel]
    y = labels[sel]
    rows = []
    for K in k_grid:
        if K > X.shape[0]:
            raise ValueError(f"K = {K} exceeds the {X.shape[0]} documents of {dataset}; lower the K grid or max_docs")
        mu0 = init_partition_means(X, K, rng_from_seed(seed, 1, K))
        norms = np.linalg.norm(mu0, axis=1)
        mu0_uniform = mu0 * (norms.mean() / norms)[:, None]
        for param, assign, tied in VARIANTS:
            t0 = time.perf_counter()
            res = fit_vmf_mixture(X, K, parametrization=param, assignment=assign, tied=tied, max_iter=max_iter,
                                  tol=tol, kappa_max=kappa_max, kappa_method=kappa_method, negentropy=negentropy,
                                  init_mu=mu0_uniform if (assign == "hard" or tied) else mu0)
            rows.append({"dataset": dataset, "K": K, "seed": seed, "method": f"{assign}_{param}_{'tied' if tied else 'free'}",
                         "assignment": assign, "parametrization": param, "tied": tied,
                         "nmi": nmi(y, res.labels), "log_likelihood": res.log_likelihood[-1], "n_iter": res.n_iter,
                         "wall_s": time.perf_counter() - t0, "sec_per_iter": float(np.mean(res.iter_times)),
                         "n_docs": X.shape[0], "n_terms": X.shape[1]})
        if spkmeans:
            t0 = time.perf_counter()
            lab, _, it = spherical_kmeans(X, K, max_iter=max_iter, init_mu=mu0)
            rows.append({"dataset": dataset, "K": K, "seed": seed, "method": "spkmeans", "assignment": "hard",
                         "parametrization": "none", "tied": False, "nmi": nmi(y, lab), "log_likelihood": np.nan,
                         "n_iter": it, "wall_s": time.perf_counter() - t0, "sec_per_iter": np.nan,
                         "n_docs": X.shape[0], "n_terms": X.shape[1]})
        logger.info("fig3 %s seed %d K=%d done", dataset, seed, K)
    return pd.DataFrame(rows)


def fig3_claim(df, tol=0.02):
    mix = df[df.method != "spkmeans"]
    m = mix.groupby(["dataset", "K", "assignment", "tied", "parametrization"])["nmi"].mean().unstack("parametrization")
    diff = (m["mean"] - m["natural"]).abs()
    worst = diff.groupby(level="dataset").max()
    return {
        "claim": "No qualitative difference between mean-parameter (Bregman) and natural-parameter (movMF) fits: "
                 f"|NMI_Bregman - NMI_movMF| <= {tol} in every (dataset, K, soft/hard, tied/free) cell.",
        "measured": "max |delta NMI| per dataset: " + ", ".join(f"{ds}: {v:.4f}" for ds, v in worst.items())
                    + f"; over {len(diff)} cells, mean {diff.mean():.4f}",
        "holds": bool(diff.max() <= tol),
        "paper_value": "no qualitative difference (authors' results agree to <= 0.005)",
        "details": {"max_abs_diff_per_dataset": worst.to_dict(), "n_cells": int(len(diff)),
                    "n_seeds": int(df.seed.nunique())},
    }


PAPER_NMI = {  # authors' results (TARGETS.md VMF-Fig3), mean over 10 inits at the true K
    ("classic3", 3): {"soft_free": 0.758, "soft_tied": 0.914, "hard_free": 0.718, "hard_tied": 0.909, "spkmeans": 0.908},
    ("classic300", 3): {"soft_free": 0.545, "soft_tied": 0.609, "hard_free": 0.470, "hard_tied": 0.487, "spkmeans": 0.492},
    ("news20", 20): {"soft_free": 0.442, "soft_tied": 0.545, "hard_free": 0.445, "hard_tied": 0.544, "spkmeans": 0.543},
    ("news20_small", 20): {"soft_free": 0.278, "soft_tied": 0.264, "hard_free": 0.269, "hard_tied": 0.241, "spkmeans": 0.242},
}


def fig3_nmi_at_true_k(df):
    """Mean NMI at the true K per dataset and variant family, beside the authors' values."""
    rows = []
    for (ds, k), paper in PAPER_NMI.items():
        sub = df[(df.dataset == ds) & (df.K == k)]
        if sub.empty:
            continue
        for fam, pv in paper.items():
            if fam == "spkmeans":
                s = sub[sub.method == "spkmeans"]
            else:
                a, t = fam.split("_")
                s = sub[sub.method.str.startswith(a) & sub.method.str.endswith(t)]
            rows.append({"dataset": ds, "K": k, "variant": fam, "nmi_mean": float(s.nmi.mean()),
                         "nmi_sd": float(s.nmi.std(ddof=1)) if len(s) > 1 else np.nan, "n_runs": len(s),
                         "paper_nmi": pv})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- Tab. 1
def tab1_table(corpora):
    """corpora: dict name -> Corpus. Rows: data set, classes, N, D as built here, beside the paper's counts."""
    rows = []
    for name, c in corpora.items():
        pc = c.meta.get("paper_counts", {})
        X = c.tfidf if c.tfidf is not None else c.counts
        rows.append({"dataset": name, "classes": int(len(np.unique(c.labels[c.labels >= 0]))),
                     "n_docs": int(X.shape[0]), "n_terms": int(X.shape[1]), "nnz": int(X.nnz),
                     "paper_classes": pc.get("classes"), "paper_docs": pc.get("docs"), "paper_terms": pc.get("vocab")})
    return pd.DataFrame(rows)


def tab1_claim(df, rel_tol=0.1):
    ok_classes = bool((df.classes == df.paper_classes).all())
    docs_dev = (df.n_docs - df.paper_docs).abs() / df.paper_docs
    terms_dev = (df.n_terms - df.paper_terms).abs() / df.paper_terms
    return {
        "claim": "Data sets of the clustering experiment: classic3 (3 classes, 3,891 docs, 4,674 terms), classic300 "
                 "(3, 300, 2,551), news20 (20, 18,803, 28,571), news20-small (20, 2,000, 16,218).",
        "measured": "; ".join(f"{r.dataset}: {r.classes} classes, {r.n_docs} docs, {r.n_terms} terms"
                              for r in df.itertuples()),
        "holds": bool(ok_classes and docs_dev.max() <= rel_tol and terms_dev.max() <= rel_tol),
        "paper_value": "see claim",
        "details": {"max_rel_dev_docs": float(docs_dev.max()), "max_rel_dev_terms": float(terms_dev.max()),
                    "rel_tol": rel_tol},
    }
