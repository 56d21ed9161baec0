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
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment
from scipy.sparse.linalg import svds
from scipy.special import logsumexp

from scalable_bayes.evaluation.clustering import nmi
from scalable_bayes.inference.vmf import fit_vmf_mixture, init_partition_means, spherical_kmeans
from scalable_bayes.special import (
    bessel_ratio,
    kappa_halley_perron,
    negentropy_offset,
    solve_negentropy_ode,
    vmf_log_normalizer,
    vmf_log_partition_uniform,
    vmf_mean_to_kappa,
    vmf_negentropy,
)
from scalable_bayes.rng import rng_from_seed

from .reference import reference_curves

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
        _, k0 = solve_negentropy_ode(r0, d=d, psi0=off, dpsi0=author_dpsi0(d))
        r = np.asarray(bessel_ratio(k0, d=d))
        r = r[(r > 0) & (r < 1)]
        phi_ode, dphi_ode = solve_negentropy_ode(r, d=d, psi0=off, dpsi0=author_dpsi0(d))
        kappa_ref = np.asarray(kappa_halley_perron(r, d=d, n_steps=3, n_terms=50))
        phi_ref = kappa_ref * r - np.asarray(vmf_log_partition_uniform(kappa_ref, d=d)) + off
        rows.append(pd.DataFrame({
            "d": d, "r": r, "phi_ode": phi_ode, "phi_ref": phi_ref, "dphi_ode": dphi_ode, "dphi_ref": kappa_ref,
            "phi_abs_err": np.abs(phi_ode - phi_ref), "phi_rel_err": _rel(phi_ode - phi_ref, phi_ref),
            "dphi_abs_err": np.abs(dphi_ode - kappa_ref), "dphi_rel_err": _rel(dphi_ode - kappa_ref, kappa_ref),
            "psi_const": psi_const, "wall_s": time.perf_counter() - t0}))
        logger.info("fig1 d=%d done in %.1f s", d, time.perf_counter() - t0)
    return pd.concat(rows, ignore_index=True)


def _reference(r, d, reference, dpsi0, ref_dps):
    """(phi, phi') of the reference of Figs 2 and 5 (uniform convention, phi(0) = 0) and its wall time.

    ``"mpmath"``: :func:`reference.reference_curves` at ``ref_dps`` digits; ``"ode"``: the paper's
    reference, the ODE (Sec. 2.2-2.3) from phi'(0) = ``dpsi0``."""
    t0 = time.perf_counter()
    if reference == "mpmath":
        phi, dphi = reference_curves(r, d, ref_dps)
    elif reference == "ode":
        phi, dphi = solve_negentropy_ode(r, d=d, psi0=0.0, dpsi0=dpsi0)
    else:
        raise ValueError(f"reference = {reference!r}; use 'mpmath' (high precision) or 'ode' (the paper's)")
    return phi, dphi, time.perf_counter() - t0


def fig2_table(dims=(10, 100, 1000, 10000), n_points=1000, dpsi0=1e-5, psi_const="author", reference="mpmath",
               ref_dps=50):
    """Closed forms (refined psi~_1 / psi~'_2, Banerjee) and the paper's ODE (phi'(0) = dpsi0) vs the reference
    on r = linspace(0,1,n+20)[10:-10] (Sec. 3, Fig. 2). With ``reference="mpmath"`` the ODE is one more
    compared method (rows ``method == "ode"``): at D >= 10^4 its own error exceeds the closed forms'."""
    rows = []
    r = np.linspace(0.0, 1.0, n_points + 20)[10:-10]
    for d in dims:
        off = negentropy_offset(d, psi_const)
        t0 = time.perf_counter()
        phi_o, dphi_o = solve_negentropy_ode(r, d=d, psi0=0.0, dpsi0=dpsi0)
        t_ode = time.perf_counter() - t0
        if reference == "ode":
            phi, dphi, t_ref = phi_o, dphi_o, t_ode
        else:
            phi, dphi, t_ref = _reference(r, d, reference, dpsi0, ref_dps)
        breg_ref = r * dphi - phi  # D_Psi(0 || mu) = r phi'(r) - phi(r) + phi(0)
        methods = [("refined", "refined", "refined2"), ("banerjee", "banerjee", "banerjee")]
        if reference != "ode":
            methods.append(("ode", None, None))
        for method, pm, gm in methods:
            t1 = time.perf_counter()
            if method == "ode":
                ph, g, t_cf = phi_o, dphi_o, t_ode
            else:
                ph = np.asarray(vmf_negentropy(r, d=d, method=pm))
                g = np.asarray(vmf_mean_to_kappa(r, d=d, method=gm))
                t_cf = time.perf_counter() - t1
            breg = r * g - ph
            rows.append(pd.DataFrame({
                "d": d, "r": r, "method": method, "reference": reference,
                "phi_ref": phi + off, "phi": ph + off, "dphi_ref": dphi, "dphi": g,
                "breg_ref": breg_ref, "breg": breg,
                "phi_abs_err": np.abs(ph - phi), "phi_rel_err": _rel(ph - phi, phi + off),
                "dphi_abs_err": np.abs(g - dphi), "dphi_rel_err": _rel(g - dphi, dphi),
                "breg_abs_err": np.abs(breg - breg_ref), "breg_rel_err": _rel(breg - breg_ref, breg_ref),
                "ode_wall_s": t_ode, "ref_wall_s": t_ref, "method_wall_s": t_cf, "psi_const": psi_const}))
        logger.info("fig2 d=%d: ODE %.1f s, reference (%s) %.1f s", d, t_ode, reference, t_ref)
    return pd.concat(rows, ignore_index=True)


def fig4_table(dims=(2, 100), r_max=(0.1, 0.001), n_points=100, dpsi0=(1e-6, 1e-2)):
    """ODE solutions from different phi'(0) (App. A.3)."""
    rows = []
    for d, rm in zip(dims, r_max):
        r = np.linspace(0.0, rm, n_points + 1)[1:]
        for e0 in dpsi0:
            t0 = time.perf_counter()
            phi, dphi = solve_negentropy_ode(r, d=d, dpsi0=e0)
            rows.append(pd.DataFrame({"d": d, "r": r, "dpsi0": e0, "phi": phi, "dphi": dphi,
                                      "wall_s": time.perf_counter() - t0}))
    return pd.concat(rows, ignore_index=True)


# Halley-Perron root-finding settings (steps, continued-fraction terms) compared in Fig. 5 (App. A.5)
ROOT_SETTINGS = ((2, 20), (2, 15), (3, 50))


def fig5_table(dims=(1000, 10000, 50000), n_points=100, reference="mpmath", ref_dps=50, ode_dims=None):
    """Closed form psi~'_2 vs truncated Halley-Perron root finding, abs. error of phi' vs the reference (App. A.5).

    ``reference="mpmath"`` (default): the high-precision kappa = A_d^{-1}(r); the paper's ODE (phi'(0) by
    :func:`author_dpsi0`) is then also compared (rows ``method == "ode"``) at the dimensions in
    ``ode_dims`` (default: all; the D = 50,000 solve takes minutes). ``reference="ode"``: the paper's setting."""
    rows = []
    r = np.linspace(0.0, 1.0, n_points + 2)[1:-1]
    ode_dims = list(dims) if ode_dims is None else [int(x) for x in ode_dims]
    if reference == "ode" and set(dims) - set(ode_dims):
        raise ValueError(f"reference 'ode' needs the ODE at every dimension; ode_dims {ode_dims} lacks some of {list(dims)}")
    for d in dims:
        kref = None
        if reference != "ode":
            _, kref, t_ref = _reference(r, d, reference, None, ref_dps)
        per_method = []
        if d in ode_dims:
            t1 = time.perf_counter()
            _, dphi_o = solve_negentropy_ode(r, d=d, dpsi0=author_dpsi0(d))
            t_ode = time.perf_counter() - t1
            if reference == "ode":
                kref, t_ref = dphi_o, t_ode
            else:
                per_method.append(("ode", 0, 0, dphi_o, t_ode))
        t1 = time.perf_counter()
        cf = np.asarray(vmf_mean_to_kappa(r, d=d, method="refined2"))
        per_method.insert(0, ("closed_form", 0, 0, cf, time.perf_counter() - t1))
        for steps, terms in ROOT_SETTINGS:
            t1 = time.perf_counter()
            k = np.asarray(kappa_halley_perron(r, d=d, n_steps=steps, n_terms=terms))
            per_method.append((f"halley_{steps}steps_{terms}terms", steps, terms, k, time.perf_counter() - t1))
        for method, steps, terms, k, wall in per_method:
            rows.append(pd.DataFrame({"d": d, "r": r, "method": method, "n_steps": steps, "n_terms": terms,
                                      "kappa": k, "kappa_ref": kref, "abs_err": np.abs(k - kref),
                                      "reference": reference, "wall_s": wall, "ref_wall_s": t_ref}))
        logger.info("fig5 d=%d: reference (%s) %.1f s", d, reference, t_ref)
    return pd.concat(rows, ignore_index=True)


def curves(fig: str, settings: dict, psi_const: str = "author") -> pd.DataFrame:
    """The table of one curve figure (``Fig1``, ``Fig2``, ``Fig4``, ``Fig5``) from its config block."""
    s = settings
    if fig == "Fig1":
        return fig1_table(s["dims"], s["n_points"], psi_const)
    if fig == "Fig2":
        return fig2_table(s["dims"], s["n_points"], s["dpsi0"], psi_const, s["reference"], s["ref_dps"])
    if fig == "Fig4":
        return fig4_table(s["dims"], s["r_max"], s["n_points"], s["dpsi0"])
    if fig == "Fig5":
        return fig5_table(s["dims"], s["n_points"], s["reference"], s["ref_dps"], s.get("ode_dims"))
    raise ValueError(f"unknown curve figure {fig!r}; expected one of {CURVE_FIGURES}")


# Fig. 3: (mean | natural parametrisation) x (soft | hard assignment) x (tied | free concentration)
VARIANTS = [(p, a, t) for a in ("soft", "hard") for p in ("mean", "natural") for t in (False, True)]


def match_disagreement(a, b, n_clusters):
    """Fraction of items whose cluster differs between labelings ``a`` and ``b`` after the optimal one-to-one
    matching of b's clusters to a's (Hungarian algorithm on the K x K contingency table; labels in 0..K-1)."""
    a = np.asarray(a)
    b = np.asarray(b)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError(f"labelings of shapes {a.shape} and {b.shape}: need two 1-d arrays of equal, non-zero length")
    C = np.zeros((n_clusters, n_clusters))
    np.add.at(C, (a, b), 1.0)
    i, j = linear_sum_assignment(C, maximize=True)
    return float(1.0 - C[i, j].sum() / a.size)


def exact_mixture_ll(X, res):
    """Mean log-likelihood per row of a fitted mixture read as a vMF mixture with exact normalisers
    (Hausdorff measure): weights w_k, directions m_k, concentrations kappa_k. A natural-parameter fit's kappa_k
    is its own; a mean-parameter fit's is grad Psi(mu_k), the slope its E-step uses (Sec. 3.1), so both fits
    are scored by the same exact likelihood whatever Psi approximation drove the mean path."""
    d = X.shape[1]
    kappa = np.atleast_1d(np.asarray(res.concentrations, dtype=np.float64))
    with np.errstate(divide="ignore"):
        a = np.log(res.weights) + np.asarray(vmf_log_normalizer(kappa, d=d))
    L = np.asarray(X @ res.directions.T) * kappa[None, :] + a[None, :]
    return float(np.mean(logsumexp(L, axis=1)))


def lowdim_projection(X, dim):
    """Rows of X projected on its top ``dim`` right singular vectors and renormalised: the low-dimensional
    case of VMF-Fig3 (ours, not the paper's), where the closed forms differ from root finding.

    ARPACK (``svds``) from a fixed start vector, so the projection is deterministic. Returns (Z, keep):
    Z dense (n_kept, dim) unit rows, keep the boolean mask of rows with a non-zero projection."""
    if not (isinstance(dim, (int, np.integer)) and 2 <= dim < min(X.shape)):
        raise ValueError(f"dim = {dim!r}: need an integer 2 <= dim < min(X.shape) = {min(X.shape)}")
    v0 = np.full(min(X.shape), 1.0 / np.sqrt(min(X.shape)))
    _, _, vt = svds(sp.csr_matrix(X, dtype=np.float64), k=int(dim), v0=v0)
    Z = np.asarray(X @ vt.T)
    norms = np.linalg.norm(Z, axis=1)
    keep = norms > 1e-12
    return Z[keep] / norms[keep, None], keep


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
             kappa_method="halley_perron", negentropy="refined", max_docs=None, spkmeans=True,
             control_negentropy=None):
    """One (dataset, seed) of VMF-Fig3: for each K the 8 variants (soft/hard x natural/mean x free/tied)
    from one shared initialisation per K, plus spherical k-means. Returns tidy rows with NMI and timings.

    Each mean-parameter fit is compared with the natural-parameter fit of the same (K, soft/hard, tied/free)
    and initialisation: ``label_disagreement`` (:func:`match_disagreement`) and ``exact_ll_diff`` (its
    :func:`exact_mixture_ll` minus the natural fit's, nats per document). ``control_negentropy`` (e.g.
    ``"banerjee"``) adds a control run of the mean path with that Psi approximation (parametrization
    ``"mean_<name>"``), compared in the same way: the control shows whether the comparison can see an
    approximation of Psi at all."""
    labels = np.asarray(labels)
    sel = subsample_stratified(labels, max_docs, rng_from_seed(seed, 0))
    X = X[sel]
    y = labels[sel]
    variants = [(p, a, t, negentropy if p == "mean" else "none") for p, a, t in VARIANTS]
    if control_negentropy:
        if control_negentropy == negentropy:
            raise ValueError(f"control_negentropy = {control_negentropy!r} is the mean path's own negentropy; "
                             "pick another (e.g. 'banerjee') or none")
        variants += [(f"mean_{control_negentropy}", a, t, control_negentropy)
                     for a in ("soft", "hard") for t in (False, True)]
    rows = []
    for K in k_grid:
        if K > X.shape[0]:
            raise ValueError(f"K = {K} exceeds the {X.shape[0]} documents of {dataset}; lower the K grid or max_docs")
        mu0 = init_partition_means(X, K, rng_from_seed(seed, 1, K))
        norms = np.linalg.norm(mu0, axis=1)
        mu0_uniform = mu0 * (norms.mean() / norms)[:, None]
        fits = {}
        for param, assign, tied, neg in variants:
            t0 = time.perf_counter()
            res = fit_vmf_mixture(X, K, parametrization="natural" if param == "natural" else "mean",
                                  assignment=assign, tied=tied, max_iter=max_iter, tol=tol, kappa_max=kappa_max,
                                  kappa_method=kappa_method, negentropy=neg if neg != "none" else negentropy,
                                  init_mu=mu0_uniform if (assign == "hard" or tied) else mu0)
            wall = time.perf_counter() - t0
            fits[(param, assign, tied)] = res
            rows.append({"dataset": dataset, "K": K, "seed": seed, "method": f"{assign}_{param}_{'tied' if tied else 'free'}",
                         "assignment": assign, "parametrization": param, "tied": tied, "negentropy": neg,
                         "nmi": nmi(y, res.labels), "log_likelihood": res.log_likelihood[-1],
                         "exact_ll_per_doc": exact_mixture_ll(X, res), "n_iter": res.n_iter,
                         "wall_s": wall, "sec_per_iter": float(np.mean(res.iter_times)),
                         "n_docs": X.shape[0], "n_terms": X.shape[1]})
        for row in rows[-len(variants):]:
            nat = fits[("natural", row["assignment"], row["tied"])]
            if row["parametrization"] == "natural":
                row["label_disagreement"] = np.nan
                row["exact_ll_diff"] = np.nan
                continue
            own = fits[(row["parametrization"], row["assignment"], row["tied"])]
            row["label_disagreement"] = match_disagreement(nat.labels, own.labels, K)
            row["exact_ll_diff"] = row["exact_ll_per_doc"] - exact_mixture_ll(X, nat)
        if spkmeans:
            t0 = time.perf_counter()
            lab, _, it = spherical_kmeans(X, K, max_iter=max_iter, init_mu=mu0)
            rows.append({"dataset": dataset, "K": K, "seed": seed, "method": "spkmeans", "assignment": "hard",
                         "parametrization": "none", "tied": False, "negentropy": "none", "nmi": nmi(y, lab),
                         "log_likelihood": np.nan, "exact_ll_per_doc": np.nan, "n_iter": it,
                         "wall_s": time.perf_counter() - t0, "sec_per_iter": np.nan,
                         "n_docs": X.shape[0], "n_terms": X.shape[1], "label_disagreement": np.nan,
                         "exact_ll_diff": np.nan})
        logger.info("fig3 %s seed %d K=%d done", dataset, seed, K)
    return pd.DataFrame(rows)


def fig3_runs(corpus, dataset: str, seed: int, settings: dict) -> pd.DataFrame:
    """:func:`run_fig3` on a processed corpus (its tf-idf rows and labels) with one job's settings.

    ``settings["lowdim"]`` (an integer D or None): cluster the rows projected on their top D right singular
    vectors instead (:func:`lowdim_projection`); the data set is then named ``<dataset>_svd<D>``."""
    if corpus.tfidf is None:
        raise ValueError(f"corpus {dataset} has no tfidf.npz; rebuild it with the build_corpus rule")
    s = settings
    X, y = corpus.tfidf, np.asarray(corpus.labels)
    if s.get("lowdim"):
        X, keep = lowdim_projection(X, int(s["lowdim"]))
        y = y[keep]
        if (~keep).any():
            logger.info("%s: %d documents with a zero projection dropped", dataset, int((~keep).sum()))
    return run_fig3(X, y, dataset, s["k_grid"], seed, max_iter=s["max_iter"], tol=s["tol"],
                    kappa_max=s["kappa_max"], kappa_method=s["kappa_method"], negentropy=s["negentropy"],
                    max_docs=s["max_docs"], spkmeans=s["spkmeans"], control_negentropy=s.get("control_negentropy"))
