"""MCMC diagnostics: effective sample size and integrated autocorrelation time (ArviZ),
Monte Carlo standard errors, density-estimate errors (SGNHT Fig. 2 / Table 1; the paper gives no formula) and a sample-averaged
predictive scored while a chain runs ([M8]).
"""

from __future__ import annotations

import warnings

import numpy as np


def _arviz():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        import arviz as az
    return az


def _as_chains(x) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 1:
        x = x[None, :]
    if x.ndim != 2:
        raise ValueError(f"expected draws shaped (n_draws,) or (n_chains, n_draws), got {x.shape}")
    if x.shape[1] < 4:
        raise ValueError(f"need at least 4 draws per chain for ESS, got {x.shape[1]}")
    return x


def ess(draws, method: str = "mean") -> float:
    """Effective sample size of a scalar observable (ArviZ ``ess``; ``method`` as in ArviZ).

    ``draws``: (n_draws,) or (n_chains, n_draws).
    """
    az = _arviz()
    return float(az.ess(_as_chains(draws), method=method))


def autocorrelation_time(draws, method: str = "mean") -> float:
    """Integrated autocorrelation time tau = (total draws) / ESS, in units of the draw spacing.

    ArviZ's ESS uses Geyer's initial-monotone-sequence truncation of the autocorrelation sum
    (instead of Sokal's adaptive window; both estimate tau = 1 + 2 sum rho_k).
    """
    x = _as_chains(draws)
    return float(x.size / ess(x, method=method))


def autocorrelation(draws, max_lag: int | None = None) -> np.ndarray:
    """Normalised autocorrelation function of a single chain (ArviZ ``autocorr``)."""
    az = _arviz()
    x = np.asarray(draws, dtype=np.float64).reshape(-1)
    rho = az.autocorr(x)
    return rho if max_lag is None else rho[: max_lag + 1]


def mcse_mean(draws) -> float:
    """Monte Carlo standard error of the mean: sd / sqrt(ESS) over all chains."""
    x = _as_chains(draws)
    return float(x.std(ddof=1) / np.sqrt(ess(x)))


def mcse_z(draws, true_value: float, func=None) -> float:
    """z = (mean of f(draws) - true value) / MCSE, with f the identity by default."""
    x = _as_chains(draws)
    if func is not None:
        x = func(x)
    return float((x.mean() - true_value) / mcse_mean(x))


def histogram_density(samples, edges) -> np.ndarray:
    """Normalised histogram (density) of ``samples`` on bins ``edges``; mass outside the bins counts
    against the estimate (it is normalised by the total number of samples, not the number inside)."""
    s = np.asarray(samples, dtype=np.float64).reshape(-1)
    counts, _ = np.histogram(s, bins=edges)
    return counts / (s.size * np.diff(edges))


def density_rmse(samples, pdf, center: float, scale: float, n_bins: int = 100, width: float = 5.0) -> float:
    """RMSE between the sample histogram and the exact density at bin centres ([M5], reconstructed).

    100 bins over center +/- width * scale (default +/- 5 posterior sd).
    """
    edges = np.linspace(center - width * scale, center + width * scale, n_bins + 1)
    mids = 0.5 * (edges[1:] + edges[:-1])
    est = histogram_density(samples, edges)
    return float(np.sqrt(np.mean((est - pdf(mids)) ** 2)))


def total_variation(samples, pdf, edges) -> float:
    """Total-variation distance between the binned sample distribution and the binned exact density
    (exact bin masses by the midpoint rule): 0.5 sum_b |p_hat_b - p_b|."""
    s = np.asarray(samples, dtype=np.float64).reshape(-1)
    counts, _ = np.histogram(s, bins=edges)
    p_hat = counts / s.size
    mids = 0.5 * (edges[1:] + edges[:-1])
    p = pdf(mids) * np.diff(edges)
    p = p / p.sum()
    return float(0.5 * np.abs(p_hat - p).sum())


def running_mean(x) -> np.ndarray:
    """Running mean over iterations (e.g. of the kinetic energy, [M6])."""
    x = np.asarray(x, dtype=np.float64)
    return np.cumsum(x) / np.arange(1, x.size + 1)


class PredictiveAverage:
    """Sample-averaged posterior predictive, scored at checkpoints ([M8]): a ``run_chain`` callback.

    At each checkpoint after ``burnin`` steps, ``predict(position)`` gives one predictive array per
    evaluation set (e.g. validation and test); their running sums over the checkpoints seen so far are
    divided by the count and passed to ``score(*averages)``, which returns one number per set.
    ``rows`` collects ``(step, *scores)``; the call returns the last score (the driver records it).
    """

    def __init__(self, burnin: int, predict, score):
        self.burnin, self.predict, self.score = burnin, predict, score
        self.sums = None
        self.n = 0
        self.rows = []

    def __call__(self, step, state):
        if step <= self.burnin:
            return None
        preds = self.predict(state.position)
        self.sums = list(preds) if self.sums is None else [s + p for s, p in zip(self.sums, preds)]
        self.n += 1
        scores = self.score(*[s / self.n for s in self.sums])
        self.rows.append((step, *scores))
        return scores[-1]
