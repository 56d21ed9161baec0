"""Runs of the VMF paper (Nonnenmacher & Sahani 2024): config settings -> tidy tables.

The curve figures (Figs 1, 2, 4, 5; Sec. 3 and App. A.3, A.5) compare the negative-entropy ODE
(Sec. 2.2-2.3) with Bessel-derived references and the closed forms (Sec. 2.5, App. A.4); Fig. 3
(Sec. 3.1) is the document-clustering sweep of one (data set, seed): every K, the 8 mixture variants
(soft/hard x natural/mean x free/tied) and spherical k-means. Every table carries its wall times.
The algorithms are the library's (:mod:`scalable_bayes.special`, :mod:`scalable_bayes.inference.vmf`).
"""

from __future__ import annotations

import logging
import time

import numpy as np
import pandas as pd

from scalable_bayes.evaluation.clustering import nmi
from scalable_bayes.inference.vmf import fit_vmf_mixture, init_partition_means, spherical_kmeans
from scalable_bayes.special import (
    bessel_ratio,
    kappa_halley_perron,
    negentropy_offset,
    solve_negentropy_ode,
    vmf_log_partition_uniform,
    vmf_mean_to_kappa,
    vmf_negentropy,
)
from scalable_bayes.rng import rng_from_seed

logger = logging.getLogger(__name__)

CURVE_FIGURES = ("Fig1", "Fig2", "Fig4", "Fig5")

def author_dpsi0(d):
    """phi'(0) = epsilon_0 used by the authors: 1e-6 (d < 1000), 1e-5 (d < 50,000), 1e-4 above."""
    return 1e-6 if d < 1000 else (1e-5 if d < 50000 else 1e-4)


def _rel(err, ref):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.abs(err) / np.abs(ref)


def fig1_table(dims=(2, 10, 100, 1000), n_points=100, psi_const="author"):
    """ODE solution vs Bessel-derived phi and phi' (Sec. 3, first paragraph; the ODE of Sec. 2.2-2.3).

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


# Halley-Perron root-finding settings (steps, continued-fraction terms) compared in Fig. 5 (App. A.5)
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


def curves(fig: str, settings: dict, psi_const: str = "author") -> pd.DataFrame:
    """The table of one curve figure (``Fig1``, ``Fig2``, ``Fig4``, ``Fig5``) from its config block."""
    s = settings
    if fig == "Fig1":
        return fig1_table(s["dims"], s["n_points"], psi_const)
    if fig == "Fig2":
        return fig2_table(s["dims"], s["n_points"], s["dpsi0"], psi_const)
    if fig == "Fig4":
        return fig4_table(s["dims"], s["r_max"], s["n_points"], s["dpsi0"])
    if fig == "Fig5":
        return fig5_table(s["dims"], s["n_points"])
    raise ValueError(f"unknown curve figure {fig!r}; expected one of {CURVE_FIGURES}")


# Fig. 3: (mean | natural parametrisation) x (soft | hard assignment) x (tied | free concentration)
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


def fig3_runs(corpus, dataset: str, seed: int, settings: dict) -> pd.DataFrame:
    """:func:`run_fig3` on a processed corpus (its tf-idf rows and labels) with one job's settings."""
    if corpus.tfidf is None:
        raise ValueError(f"corpus {dataset} has no tfidf.npz; rebuild it with the build_corpus rule")
    s = settings
    return run_fig3(corpus.tfidf, corpus.labels, dataset, s["k_grid"], seed, max_iter=s["max_iter"], tol=s["tol"],
                    kappa_max=s["kappa_max"], kappa_method=s["kappa_method"], negentropy=s["negentropy"],
                    max_docs=s["max_docs"], spkmeans=s["spkmeans"])
