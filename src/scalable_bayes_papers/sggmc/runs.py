"""Runs of the SGGMC paper (Liu, Zhu & Song, NIPS 2016): config settings of one job -> tidy tables. The
samplers (:mod:`scalable_bayes.samplers.geodesic`: SGGMC Alg. 1, gSGNHT Alg. 2, GMC) and the targets on the
sphere (:mod:`scalable_bayes.models.sphere`) are the library's; this module only composes them.

* :func:`fig3_runs` -- Fig. 3 (Sec. 5.1, App. F.1): one method on the S^1 toy for one seed; the kept angles.
* :func:`fig4_runs` -- Fig. 4 (Sec. 5.2, App. F.2): GMC or SGGMC on the two-vMF mixture posterior for one
  seed; the kept (v1, v2) angles.
* :func:`fig4_truth` -- Fig. 4's "true" posterior: the unnormalised log posterior on a grid of angles.

The static items (Tab. 1, Figs. 1-2, SFig. 1) have no runs.
"""

from __future__ import annotations

import logging
import math
import time

import numpy as np
import pandas as pd

from scalable_bayes import samplers
from scalable_bayes.models import sphere as sphere_models

from . import data

logger = logging.getLogger(__name__)

FIG3_METHODS = ("GMC", "SGGMC", "gSGNHT", "SGGMC-V0", "gSGNHT-V0")
FIG4_METHODS = ("GMC", "SGGMC", "SGGMC-full")


def _start(seed: int, n_blocks: int) -> np.ndarray:
    """Initial position (not stated in the paper; ours): each block at a uniform random angle (seeded)."""
    rng = np.random.default_rng([seed, 0x5E])
    a = rng.uniform(-math.pi, math.pi, n_blocks)
    return np.column_stack([np.cos(a), np.sin(a)]).ravel()


def _angles(samples: np.ndarray) -> np.ndarray:
    """(n, 2 K) positions on K circles -> (n, K) angles in [-pi, pi)."""
    s = samples.reshape(len(samples), -1, 2)
    return data.wrap(np.arctan2(s[..., 1], s[..., 0]))


def fig3_sampler(method: str, settings: dict):
    """(sampler, model) of one Fig. 3 method. GMC: exact gradient with the MH test (L leapfrog steps);
    SGGMC / gSGNHT: gradient corrupted by N(0, V I) with V known in eq. 8; '-V0': the same with V = 0 in eq. 8."""
    eps, L = settings["step_size"], settings["n_inner"]
    mu1, mu2 = data.toy_mu_angles(settings["mu2_reading"])
    if method == "GMC":
        return samplers.gmc(L), sphere_models.toy_circle(mu1, mu2, noise_var=0.0)
    V = settings["noise_var"]
    C = settings["rho"] / eps  # App. E: C = rho / eps
    base, _, v0 = method.partition("-")
    factory = {"SGGMC": samplers.sggmc, "gSGNHT": samplers.gsgnht}[base]
    alg = factory(C, n_inner=L, noise="zero" if v0 else V, step_size=eps)
    return alg, sphere_models.toy_circle(mu1, mu2, noise_var=V)


def fig3_runs(method: str, seed: int, settings: dict) -> pd.DataFrame:
    """One chain of ``method`` on the Sec. 5.1 toy: ``burnin`` + ``n_samples`` outer iterations (each of L inner
    steps, App. F.1) from a random start; one row per kept sample (angle in [-pi, pi))."""
    if method not in FIG3_METHODS:
        raise ValueError(f"unknown Fig. 3 method {method!r}; choose one of {FIG3_METHODS}")
    alg, model = fig3_sampler(method, settings)
    n, burn = int(settings["n_samples"]), int(settings["burnin"])
    t0 = time.perf_counter()
    res = samplers.run_chain(alg, model, _start(seed, 1), seed=seed, n_steps=burn + n, burnin=burn,
                             step_size=settings["step_size"], progress=False)
    wall = time.perf_counter() - t0
    th = _angles(res.samples)[:, 0]
    acc = float(res.state.thermostat[1]) / (burn + n) if method == "GMC" else np.nan
    logger.info("Fig3 %s seed %d: %d samples in %.2f s (sampler %.2f s)", method, seed, len(th), wall, res.wall_time)
    return pd.DataFrame({"method": method, "seed": seed, "sample": np.arange(len(th)), "angle": th,
                         "wall_s": wall, "sampler_wall_s": res.wall_time, "accept_rate": acc})


def fig4_data(settings: dict) -> np.ndarray:
    """The Sec. 5.2 data set as (n, 2) unit vectors (library draw, seed ``data_seed``)."""
    return sphere_models.vmf_mixture_data(settings["n_data"], kappa_x=settings["kappa"], seed=settings["data_seed"])


def fig4_model(settings: dict):
    k = settings["kappa"]
    e2 = None if settings["e2"] == "e1" else (0.0, 1.0)
    return sphere_models.vmf_mixture(fig4_data(settings), kappa1=k, kappa2=k, kappa_x=k, e2=e2)


def fig4_runs(method: str, seed: int, settings: dict) -> pd.DataFrame:
    """One chain of GMC (L leapfrog steps of eps, MH test, full data) or SGGMC (App. E's gamma, rho -> eps =
    sqrt(gamma / D), C = rho / eps; L inner steps per minibatch; empirical-Fisher V) on the Sec. 5.2
    posterior; one row per kept sample (v1, v2 angles). ``SGGMC-full`` (a diagnostic of ours): SGGMC with the
    same eps, C and L on the full data set (exact gradient, V = 0), to tell the integrator's bias from the
    minibatch noise's."""
    if method not in FIG4_METHODS:
        raise ValueError(f"unknown Fig. 4 method {method!r}; choose one of {FIG4_METHODS}")
    model = fig4_model(settings)
    if method == "GMC":
        g = settings["gmc"]
        alg, eps, batch = samplers.gmc(g["n_inner"]), g["step_size"], None
    else:
        s = settings["sggmc"]
        alg, eps = samplers.sggmc_sgd(s["gamma"], s["rho"], settings["n_data"], n_inner=s["n_inner"],
                                      noise="fisher" if method == "SGGMC" else "zero")
        batch = s["batch_size"] if method == "SGGMC" else None
    n, burn = int(settings["n_samples"]), int(settings["burnin"])
    t0 = time.perf_counter()
    res = samplers.run_chain(alg, model, _start(seed, 2), seed=seed, n_steps=burn + n, burnin=burn, step_size=eps,
                             batch_size=batch, progress=False)
    wall = time.perf_counter() - t0
    a = _angles(res.samples)
    extra = float(res.state.thermostat[1])
    logger.info("Fig4 %s seed %d: %d samples in %.2f s; thermostat[1] %g", method, seed, len(a), wall, extra)
    return pd.DataFrame({"method": method, "seed": seed, "sample": np.arange(len(a)), "v1": a[:, 0], "v2": a[:, 1],
                         "wall_s": wall, "sampler_wall_s": res.wall_time, "step_size": eps,
                         "accept_rate": extra / (burn + n) if method == "GMC" else np.nan,
                         "clipped_noise_directions": extra if method != "GMC" else np.nan})


def fig4_truth(settings: dict) -> pd.DataFrame:
    """The 'true' posterior of Fig. 4 (App. F.2): the unnormalised log posterior at the centres of a ``grid`` x
    ``grid`` lattice of angles over [-window, window)^2, normalised to cell masses; ``mass_outside``: the mass
    outside that window on a full-circle lattice of the same size (ours: the window keeps the grid finer than
    the posterior's spread)."""
    g, w = int(settings["grid"]), float(settings["window"])
    k = settings["kappa"]
    e2 = 0.0 if settings["e2"] == "e1" else math.pi / 2
    x = fig4_data(settings)
    a = -w + (np.arange(g) + 0.5) * (2 * w / g)
    A1, A2 = np.meshgrid(a, a, indexing="ij")
    lp = sphere_models.vmf_mixture_log_posterior(A1, A2, x, k, k, k, e2_angle=e2)
    full = -math.pi + (np.arange(g) + 0.5) * (2 * math.pi / g)
    F1, F2 = np.meshgrid(full, full, indexing="ij")
    lf = sphere_models.vmf_mixture_log_posterior(F1, F2, x, k, k, k, e2_angle=e2)
    pf = np.exp(lf - lf.max())
    outside = float(pf[(np.abs(F1) >= w) | (np.abs(F2) >= w)].sum() / pf.sum())
    p = np.exp(lp - lp.max())
    return pd.DataFrame({"a1": A1.ravel(), "a2": A2.ravel(), "log_post": lp.ravel(), "mass": (p / p.sum()).ravel(),
                         "mass_outside": outside})


# ------------------------------------------------------------------ Fig. 5: SAM (Sec. 5.3, App. F.3)
#: series of Fig. 5 -> (SphericalAdmixture method, minibatch?)
FIG5_METHODS = {
    "VI": ("vi", False), "StoVI": ("stovi", True), "GMC-apprMH": ("gmc_apprmh", False),
    "GMC-bGibbs": ("gmc_bgibbs", False), "SGGMC": ("sggmc", True), "SGGMC-full": ("sggmc", False),
    "gSGNHT": ("gsgnht", True), "gSGNHT-full": ("gsgnht", False),
}


def fig5_runs(corpus_name: str, method: str, seed: int, settings: dict, corpus) -> pd.DataFrame:
    """One Fig. 5 series: SAM fitted by ``method`` on the training tf-idf rows of ``corpus`` for ``max_time``
    seconds of the estimator's clock (or ``max_iter`` iterations, if set) -> its trace (iteration, wall and CPU time, test log-perplexity with
    its standard error). The paper's hyper-parameters (App. F.3: K, kappa, sigma, kappa0, alpha, minibatch)
    come from ``settings``; the sampler settings the paper leaves open are the estimator's defaults
    (:class:`scalable_bayes.inference.sam.SphericalAdmixture`). Full-batch methods are evaluated every
    ``evaluate_every`` iterations, minibatch ones every ``evaluate_every`` x ceil(D / S) (the same number of
    document visits; ours)."""
    from scalable_bayes.inference.sam import SphericalAdmixture

    if method not in FIG5_METHODS:
        raise ValueError(f"unknown Fig. 5 method {method!r}; choose one of {sorted(FIG5_METHODS)}")
    est_method, minibatch = FIG5_METHODS[method]
    # an iteration budget (max_iter) makes the run deterministic for its seed (the smoke config); the paper's
    # x-axis is wall time, so the shipped profiles give a time budget, whose iteration count follows the machine
    max_iter = settings.get("max_iter")
    X, X_test = data.fig5_split(corpus, settings)
    D = X.shape[0]
    S = int(settings["batch_size"]) if minibatch else None
    every = int(settings["evaluate_every"]) * (math.ceil(D / S) if minibatch else 1)
    est = SphericalAdmixture(n_components=settings["n_topics"], method=est_method, kappa=settings["kappa"],
                             sigma=settings["sigma"], kappa0=settings["kappa0"], alpha=settings["alpha"],
                             batch_size=S, max_iter=max_iter or 10**9,
                             max_time=None if max_iter else settings["max_time"],
                             budget_clock=settings.get("budget_clock", "cpu"), evaluate_every=every,
                             n_jobs=1, random_state=seed, n_prior_draws=settings["n_prior_draws"],
                             gamma=(settings["sg_gamma_kappa"] / settings["kappa"] if "sg_gamma_kappa" in settings
                                    else None))
    t0 = time.perf_counter()
    est.fit(X, X_test=X_test)
    tr = est.trace_.copy()
    # the converged check of the final state (off the clock): importance sampling instead of prior draws
    # (library: SphericalAdmixture.log_perplexity(estimator="importance")), over at most is_topic_samples of
    # the kept samples; VI / StoVI: their point estimate, as in the trace
    for col in ("log_perplexity_is", "log_perplexity_is_se", "is_ess_fraction", "is_topic_samples"):
        tr[col] = float("nan")
    n_is = int(settings.get("is_draws") or 0)
    if n_is:
        lp, se, diag = est.log_perplexity(X_test, n_is, return_se=True, estimator="importance",
                                          return_diagnostics=True,
                                          max_topic_samples=int(settings.get("is_topic_samples") or 10))
        last = tr.index[-1]
        tr.loc[last, ["log_perplexity_is", "log_perplexity_is_se"]] = lp, se
        tr.loc[last, "is_ess_fraction"] = float(np.median(diag["ess"]) / n_is)
        tr.loc[last, "is_topic_samples"] = diag["ess"].shape[1]
    logger.info("Fig5 %s %s seed %d: %d iterations, final log-perplexity %.2f (%.1f s in all)", corpus_name, method,
                seed, est.n_iter_, tr["log_perplexity"].iloc[-1], time.perf_counter() - t0)
    tr = tr.rename(columns={"method": "estimator_method"})
    tr.insert(0, "method", method)
    tr.insert(0, "corpus", corpus_name)
    tr.insert(2, "seed", seed)
    tr["n_train_docs"], tr["n_test_docs"], tr["n_words"] = D, X_test.shape[0], X.shape[1]
    return tr
