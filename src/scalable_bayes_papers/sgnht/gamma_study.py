"""Why SGNHT's gamma marginal is too narrow on the Normal-Gamma problem at (h = 0.01, A = 1).

SGNHT App. E (Table 1) reports SGNHT's density RMSE 0.175 at (h = 0.01, A = 1); here the gamma marginal at
that cell has an RMSE of ~0.3 and a sample sd ~25% below the posterior's, while mu's is ~18% too wide.
Candidate causes, each isolated by one chain configuration of :data:`CASES` (same data, equal simulated
time T = n_steps x h, so equal effective sample sizes):

* the implementation -- the thermostat's dimension count (Algorithm 1, Sec. 3: xi <- xi + (p'p / n - 1) h
  with n = 2 here) or the stochastic-gradient noise model (App. E: minibatch of Ñ = 10 of N = 100, the
  gradient of eq. (2)): ``exact`` runs the same SGNHT with the full-data gradient (no gradient noise);
  a wrong dimension count would move both marginals' temperature the same way, which the per-coordinate
  temperatures <p_i^2> show;
* the step size (discretisation bias): ``h`` in {0.01, 0.005, 0.0025, 0.001} at equal A = 1, with
  minibatch noise and with the exact gradient;
* the method: Algorithm 1's scalar thermostat controls only the mean kinetic energy p'p / n, so with
  non-isotropic gradient noise (the mu and gamma gradients of App. E have different noise variances) one
  coordinate runs hot and the other cold. Sec. 4, eqs. (10)-(11), gives the general thermostat for this
  case, a matrix Xi with dXi = (p p' - I) dt / mu: ``matrix`` runs it (mu = 1) at (0.01, 1), minibatch 10.

Per chain: RMSE of each marginal (:func:`scalable_bayes.evaluation.mcmc.density_rmse`, as in STab1), the
RMSE of exact i.i.d. draws with the chain's effective sample size (the noise floor), the sample-sd /
posterior-sd ratio and mean error of each marginal, the per-coordinate temperature <p_i^2> (momenta from
consecutive positions, p_{t+1} = (theta_{t+1} - theta_t) / h, Algorithm 1), and the mean thermostat.

Command (writes ``GammaStudy.csv`` and ``GammaStudy.md``)::

    python -m scalable_bayes_papers.sgnht.gamma_study --out results/sgnht/tables/GammaStudy

The finding is in README.md beside this file ("Decisive experiment: the gamma marginal").
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from scalable_bayes.evaluation import mcmc
from scalable_bayes.models import toy
from scalable_bayes.samplers import run_chain, sgnht, sgnht_matrix

from . import data
from .runs import iid_rmse_floor

logger = logging.getLogger(__name__)

# (label, thermostat, h, batch size or None = full data); A = 1 throughout (the cell in question)
CASES = (
    ("minibatch h=0.01", "scalar", 0.01, 10),
    ("minibatch h=0.005", "scalar", 0.005, 10),
    ("minibatch h=0.0025", "scalar", 0.0025, 10),
    ("minibatch h=0.001", "scalar", 0.001, 10),
    ("exact h=0.01", "scalar", 0.01, None),
    ("exact h=0.001", "scalar", 0.001, None),
    ("matrix thermostat h=0.01", "matrix", 0.01, 10),
)


def momentum_temperature(samples: np.ndarray, h: float) -> np.ndarray:
    """Per-coordinate temperature <p_i^2> of a chain kept at every step (thin = 1): Algorithm 1 moves
    theta_{t+1} = theta_t + p_{t+1} h, so p_{t+1} = (theta_{t+1} - theta_t) / h. 1 is the target (K = p'p/2
    with unit mass, Sec. 2); a coordinate above 1 is sampled too wide, below 1 too narrow."""
    s = np.asarray(samples, dtype=np.float64)
    if s.ndim != 2 or s.shape[0] < 2:
        raise ValueError(f"momentum_temperature: need an (n_steps >= 2, dim) array of consecutive positions, got {s.shape}")
    if not h > 0:
        raise ValueError(f"momentum_temperature: step size must be > 0, got {h!r}")
    return np.mean((np.diff(s, axis=0) / h) ** 2, axis=0)


def predicted_temperatures(x, h: float, batch_size, A: float = 1.0, n_post: int = 4000, seed: int = 0) -> dict:
    """The temperatures Algorithm 1 should reach under App. E's noise model, for the scalar thermostat.

    A minibatch gradient of Ñ of the N points (drawn without replacement) has, per coordinate i, a noise
    variance V_i (App. E: mu's gradient c gamma sum x_j, gamma's c/2 sum (x_j - mu)^2, c = N / Ñ; V_i averaged
    over the posterior). In the Euler step p <- p - grad U~ h the noise adds variance V_i h^2 per step, i.e. an
    extra diffusion B_i = h V_i / 2 beside the injected A (Sec. 2, eq. (3)). With friction xi, coordinate i
    then settles at temperature <p_i^2> = (A + B_i) / xi, and the scalar thermostat (mean <p_i^2> = 1, eq. (6))
    sets xi = A + mean_i B_i. Returns B_mu, B_gamma, xi and both temperatures (all 1 / A for the exact gradient)."""
    x = np.asarray(x, dtype=np.float64)
    N = x.size
    if batch_size is None or int(batch_size) >= N:
        return {"B_mu": 0.0, "B_gamma": 0.0, "pred_xi": A, "pred_temperature_mu": 1.0, "pred_temperature_gamma": 1.0}
    n = int(batch_size)
    c = N / n
    fpc = (N - n) / (N - 1)  # sampling without replacement
    post = toy.normal_gamma_posterior(x)
    rng = np.random.default_rng(seed)
    gam = post["gamma"].rvs(size=n_post, random_state=rng)
    mu = post["mu_N"] + rng.standard_normal(n_post) / np.sqrt(post["kappa_N"] * gam)
    v_mu = float(np.mean(c * c * gam * gam * n * np.var(x) * fpc))
    v_gam = float(np.mean([c * c / 4.0 * n * np.var((x - m) ** 2) * fpc for m in mu]))
    b_mu, b_gam = h * v_mu / 2.0, h * v_gam / 2.0
    xi = A + 0.5 * (b_mu + b_gam)
    return {"B_mu": b_mu, "B_gamma": b_gam, "pred_xi": xi, "pred_temperature_mu": (A + b_mu) / xi,
            "pred_temperature_gamma": (A + b_gam) / xi}


def run_case(label: str, thermostat: str, h: float, batch_size, seed: int, x, sim_time: float, burnin_time: float,
             A: float = 1.0) -> dict:
    """One SGNHT chain of the study on the Normal-Gamma posterior of data ``x``: ``sim_time / h`` steps after
    ``burnin_time / h`` burn-in steps; returns the row of the study table."""
    model = toy.normal_gamma(x)
    post = toy.normal_gamma_posterior(x)
    alg = sgnht(A=A) if thermostat == "scalar" else sgnht_matrix(A=A, mu=1.0)
    burnin = int(round(burnin_time / h))
    n_steps = burnin + int(round(sim_time / h))
    b = x.size if batch_size is None else int(batch_size)
    t0 = time.perf_counter()
    res = run_chain(alg, model, [0.0, 1.0], seed=seed, n_steps=n_steps, step_size=h, batch_size=b, burnin=burnin)
    row = {"case": label, "thermostat": thermostat, "h": h, "A": A, "batch_size": b, "seed": seed,
           "n_steps": n_steps, "mean_xi": float(np.mean(res.thermostat[burnin:]))}
    temp = momentum_temperature(res.samples, h)
    for j, par in enumerate(["mu", "gamma"]):
        dist = post[par]
        s = res.samples[:, j]
        tau = mcmc.integrated_autocorrelation_time(s, method="sokal").tau
        ess = s.size / max(tau, 1.0)
        row.update({f"rmse_{par}": mcmc.density_rmse(s, dist.pdf, dist.mean(), dist.std()),
                    f"rmse_{par}_iid": iid_rmse_floor(dist, ess, [seed, j, 17]),
                    f"sd_ratio_{par}": float(s.std() / dist.std()),
                    f"mean_err_{par}": float(s.mean() - dist.mean()), f"ess_{par}": ess,
                    f"temperature_{par}": float(temp[j])})
    row["wall_time_s"] = time.perf_counter() - t0
    logger.info("%s seed %d: gamma RMSE %.3f (iid %.3f), sd ratio mu %.3f gamma %.3f, <p^2> %.3f / %.3f, xi %.3f",
                label, seed, row["rmse_gamma"], row["rmse_gamma_iid"], row["sd_ratio_mu"], row["sd_ratio_gamma"],
                row["temperature_mu"], row["temperature_gamma"], row["mean_xi"])
    return row


def gamma_study(seeds=(0, 1, 2, 3, 4), sim_time: float = 10_000.0, burnin_time: float = 100.0, data_seed: int = 0,
                n_data: int = 100, cases=CASES) -> pd.DataFrame:
    """Every case of ``cases`` for every seed (one row per chain); default T = 10^4 time units (10^6 steps at
    h = 0.01, the paper's chain length) after 100 time units (10^4 steps at h = 0.01) of burn-in."""
    x = data.gaussian_data(data_seed, n_data)
    return pd.DataFrame([run_case(label, th, h, b, seed, x, sim_time, burnin_time)
                         for label, th, h, b in cases for seed in seeds])


COLS = ["rmse_mu", "rmse_mu_iid", "rmse_gamma", "rmse_gamma_iid", "sd_ratio_mu", "sd_ratio_gamma", "mean_err_gamma",
        "temperature_mu", "temperature_gamma", "mean_xi"]


def summarise(rows: pd.DataFrame, x=None) -> pd.DataFrame:
    """Mean over seeds per case and a 95% t-half-width (``<col>_ci``) of each column of :data:`COLS`; with the
    data ``x``, the scalar-thermostat cases also get :func:`predicted_temperatures`."""
    out = []
    for case, g in rows.groupby("case", sort=False):
        k = len(g)
        r = {"case": case, "h": g["h"].iloc[0], "batch_size": int(g["batch_size"].iloc[0]), "n_seeds": k}
        if x is not None and g["thermostat"].iloc[0] == "scalar":
            r.update(predicted_temperatures(x, float(r["h"]), r["batch_size"], float(g["A"].iloc[0])))
        for c in COLS:
            v = g[c].to_numpy(dtype=float)
            r[c] = float(v.mean())
            r[c + "_ci"] = float(stats.t.ppf(0.975, k - 1) * v.std(ddof=1) / np.sqrt(k)) if k > 1 else np.nan
        out.append(r)
    return pd.DataFrame(out)


def to_markdown(table: pd.DataFrame) -> str:
    head = ["case", "batch", "RMSE mu (iid floor)", "RMSE gamma (iid floor)", "sd ratio mu", "sd ratio gamma",
            "<p_mu^2> (predicted)", "<p_gamma^2> (predicted)", "mean xi (predicted)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for _, r in table.iterrows():
        def f(c, d=3):
            return f"{r[c]:.{d}f} ± {r[c + '_ci']:.{d}f}"

        def p(c):
            return f" ({r[c]:.2f})" if c in r and pd.notna(r[c]) else ""
        lines.append("| " + " | ".join([r["case"], str(r["batch_size"]), f"{f('rmse_mu')} ({r['rmse_mu_iid']:.3f})",
                                        f"{f('rmse_gamma')} ({r['rmse_gamma_iid']:.3f})", f("sd_ratio_mu"),
                                        f("sd_ratio_gamma"), f("temperature_mu") + p("pred_temperature_mu"),
                                        f("temperature_gamma") + p("pred_temperature_gamma"),
                                        f("mean_xi", 2) + p("pred_xi")]) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="results/sgnht/tables/GammaStudy", help="output prefix (.csv, .md, _runs.csv)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--sim-time", type=float, default=10_000.0, help="simulated time per chain (steps x h)")
    ap.add_argument("--data-seed", type=int, default=0)
    ap.add_argument("--from-runs", action="store_true", help="re-summarise <out>_runs.csv instead of running the chains")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    out = Path(args.out)
    rows = (pd.read_csv(f"{out}_runs.csv") if args.from_runs
            else gamma_study(tuple(args.seeds), args.sim_time, data_seed=args.data_seed))
    table = summarise(rows, data.gaussian_data(args.data_seed, 100))
    out.parent.mkdir(parents=True, exist_ok=True)
    rows.to_csv(f"{out}_runs.csv", index=False)
    table.to_csv(f"{out}.csv", index=False)
    Path(f"{out}.md").write_text(to_markdown(table))
    logger.info("written %s.md:\n%s", out, to_markdown(table))


if __name__ == "__main__":
    main()
