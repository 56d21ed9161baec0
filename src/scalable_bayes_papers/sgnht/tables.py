"""Tables of the SGNHT paper (Ding et al. 2014): run tables in, table out, the paper's values beside.

* :func:`stab1` -- App. E, Table 1: (density RMSE, autocorrelation time) per method x (h, A).
* :func:`tau_study` -- the same over (N, minibatch) at the paper's 10^6 steps (the decisive experiment).
* :func:`stab2` -- App. G, Table 2: test metric at the validation-selected (a, eta) per task and method.
* :func:`stab3` -- App. G, Table 3: the selected (a, eta) per task and method.

Netflix has a row in STab2/STab3 with the paper's value and no measurement (not available here).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from .claims import METRIC, PAPER_STAB2, PAPER_STAB3, STAB1_PAPER, TASK_NAMES


def tau_summary(g: pd.DataFrame) -> pd.Series:
    """tau over the seeds of one cell: mean, between-seed sd, pooled within-chain se, a 95% interval, and the
    cross-check estimates. With >= 3 seeds the interval is the t-interval over seeds (mean +/- t sd / sqrt(k));
    with fewer it is mean +/- 1.96 x the pooled within-chain se (sqrt(mean se^2 / k)), which is all 1-2 seeds
    can say. ``tau_geyer`` is ArviZ's draws / ESS (the estimate used before the claims review), for comparison."""
    div = g["diverged"].fillna(False).astype(bool) if "diverged" in g else pd.Series(False, index=g.index)
    n_div = int(div.sum())
    g = g[~div]  # a diverged chain has no tau
    k = int(g["seed"].nunique())
    tau = g["tau"].to_numpy(dtype=float)
    m = float(tau.mean()) if k else np.nan
    sd = float(tau.std(ddof=1)) if k > 1 else np.nan
    se_within = float(np.sqrt(np.mean(g["tau_se"].to_numpy(dtype=float) ** 2) / k)) if k else np.nan
    half = float(stats.t.ppf(0.975, k - 1) * sd / np.sqrt(k)) if k >= 3 else 1.96 * se_within
    out = {"tau": m, "tau_sd": sd, "tau_se_within": se_within, "tau_ci_low": m - half, "tau_ci_high": m + half,
           "tau_ci": "t over seeds" if k >= 3 else "within-chain se", "n_seeds": k, "n_diverged": n_div}
    if "tau_reliable" in g:
        out["tau_reliable"] = bool(g["tau_reliable"].all())  # every chain >= 20 Sokal windows long
    for col in ("tau_bm", "tau_geyer"):
        if col in g:
            out[col] = float(g[col].mean())
    return pd.Series(out)


def _tau_table(ng_summary: pd.DataFrame, keys) -> pd.DataFrame:
    # rmse over the chains that did not diverge (NaN if every chain of the cell diverged; n_diverged says so)
    agg = dict(rmse=("rmse", "mean"), rmse_sd=("rmse", "std"))
    if "rmse_iid" in ng_summary:  # noise floor: RMSE of exact i.i.d. draws with the chain's ESS
        agg.update(rmse_iid=("rmse_iid", "mean"), rmse_mu=("rmse_mu", "mean"), rmse_mu_iid=("rmse_mu_iid", "mean"),
                   rmse_gamma=("rmse_gamma", "mean"), rmse_gamma_iid=("rmse_gamma_iid", "mean"))
    rm = ng_summary.groupby(keys).agg(**agg).reset_index()
    tau = ng_summary.groupby(keys)[list(ng_summary.columns)].apply(tau_summary).reset_index()
    return rm.merge(tau, on=keys)


def stab1(ng_summary: pd.DataFrame) -> pd.DataFrame:
    """STab1: (RMSE, tau) per method x (h, A), over seeds (tau with its 95% interval, :func:`tau_summary`),
    paper values beside."""
    t = _tau_table(ng_summary, ["method", "h", "A"])
    t["paper_rmse"] = [STAB1_PAPER.get((m, h, A), (np.nan, np.nan))[0] for m, h, A in zip(t["method"], t["h"], t["A"])]
    t["paper_tau"] = [STAB1_PAPER.get((m, h, A), (np.nan, np.nan))[1] for m, h, A in zip(t["method"], t["h"], t["A"])]
    return t


def tau_study(summary: pd.DataFrame) -> pd.DataFrame:
    """The decisive experiment for STab1: its's (RMSE, tau) per (N, minibatch) x method x (h, A)."""
    return _tau_table(summary, ["n_data", "batch_size", "method", "h", "A"])


def select_by_validation(summary: pd.DataFrame) -> pd.DataFrame:
    """Per task x method, the (a, eta) with the lowest mean validation metric (diverged cells excluded)."""
    g = summary.groupby(["task", "method", "a", "eta"]).agg(val=("val_metric", "mean"), test=("metric", "mean"),
                                                           test_sd=("metric", "std"), n=("seed", "nunique"),
                                                           diverged=("diverged", "any")).reset_index()
    if "eta_used" in summary.columns:
        used = summary.groupby(["task", "method", "a", "eta"])["eta_used"].first().reset_index()
        g = g.merge(used, on=["task", "method", "a", "eta"], how="left")
    else:
        g["eta_used"] = g["eta"]
    g = g[~g["diverged"] & g["val"].notna()]
    idx = g.groupby(["task", "method"])["val"].idxmin()
    return g.loc[idx].reset_index(drop=True)


def stab2(summary: pd.DataFrame) -> pd.DataFrame:
    """STab2: test metric (mean, sd over seeds) at the validation-selected cell; Netflix row unmeasured."""
    sel = select_by_validation(summary)
    rows = []
    for _, r in sel.iterrows():
        rows.append({"task": r["task"], "data": TASK_NAMES.get(r["task"], r["task"]), "method": r["method"],
                     "a": r["a"], "eta": r["eta"],
                     "metric": METRIC[r["task"]], "test_mean": r["test"], "test_sd": r["test_sd"], "n_seeds": r["n"],
                     "paper": PAPER_STAB2.get(r["task"], {}).get(r["method"], "")})
    for m in ["SGHMC", "SGNHT"]:
        rows.append({"task": "netflix", "data": "Netflix (BPMF)", "method": m, "a": np.nan, "eta": np.nan,
                     "metric": "test RMSE", "test_mean": np.nan,
                     "test_sd": np.nan, "n_seeds": 0, "paper": PAPER_STAB2["netflix"][m]})
    return pd.DataFrame(rows)


def stab3(summary: pd.DataFrame) -> pd.DataFrame:
    """STab3: the validation-selected (a, eta) in the paper's units and the step size run (``eta_used``)."""
    sel = select_by_validation(summary)
    rows = [{"task": r["task"], "data": TASK_NAMES.get(r["task"], r["task"]), "method": r["method"], "a": r["a"],
             "eta": r["eta"], "eta_used": r["eta_used"], "paper": PAPER_STAB3.get(r["task"], {}).get(r["method"], "")}
            for _, r in sel.iterrows()]
    for m in ["SGHMC", "SGNHT"]:
        rows.append({"task": "netflix", "data": "Netflix (BPMF)", "method": m, "a": np.nan, "eta": np.nan,
                     "eta_used": np.nan, "paper": PAPER_STAB3["netflix"][m]})
    return pd.DataFrame(rows)
