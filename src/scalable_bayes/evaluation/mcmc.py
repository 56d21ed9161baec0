"""MCMC diagnostics: effective sample size (ArviZ, Geyer's initial monotone sequence), the integrated
autocorrelation time (:func:`integrated_autocorrelation_time`: Sokal's adaptive window or batch means, right
for oscillating chains too, with a standard error; ArviZ's draws / ESS stops at the first negative
autocorrelation pair and overestimates tau on an oscillating chain, so the library offers no tau built on
it), Monte Carlo standard errors, density-estimate errors (SGNHT Fig. 2 / Table 1; the paper gives no formula)
and a sample-averaged predictive scored while a chain runs (the test metrics of SGNHT Sec. 5.2, averaged over samples after burn-in).

Layout of ``draws`` (every function of a scalar observable: :func:`ess`,
:func:`integrated_autocorrelation_time`, :func:`mcse_mean`, :func:`mcse_z`):

* a 1-d array is the draws of *one chain*, in order;
* a 2-d array is read as (chain, draw) only when the caller says so with ``layout="chain,draw"`` (ArviZ's
  order). Without it a 2-d array is refused: the samples of one chain of the driver,
  ``ChainResult.samples``, are (draw, dim), the transpose of ArviZ's order, and reading them as (chain, draw)
  gives a number that looks plausible and is wrong (the ESS of 3,000 draws of a 2-d target reported as
  47,494). For coordinate ``j`` of one chain pass ``samples[:, j]``; for coordinate ``j`` of several chains
  pass ``samples[:, :, j]`` of a (chain, draw, dim) stack with ``layout="chain,draw"``.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

LAYOUTS = ("draw", "chain,draw")


def _arviz():
    from .._optional import require

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return require("arviz", "ESS, autocorrelation and InferenceData (scalable_bayes.evaluation.mcmc)")


def _as_chains(x, layout: str = "draw") -> np.ndarray:
    """``x`` as a float64 (chain, draw) array, read by ``layout`` (module docstring): ``"draw"``, a 1-d
    array of one chain's draws; ``"chain,draw"``, a 2-d (chain, draw) array (a 1-d array is one chain).
    A ValueError for any other shape, naming the fix."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 1:
        x = x[None, :]
    elif x.ndim == 2 and layout == "draw":
        raise ValueError(
            f"draws has shape {x.shape}: a 2-d array is ambiguous. A chain's samples (ChainResult.samples) are "
            f"(draw, dim), ArviZ's arrays (chain, draw). For coordinate j of one chain pass samples[:, j] (1-d); "
            f"for several chains of one scalar pass a (chain, draw) array with layout='chain,draw'.")
    elif x.ndim != 2:
        raise ValueError(f"expected draws shaped (n_draws,) or, with layout='chain,draw', (n_chains, n_draws); "
                         f"got {x.shape}. For coordinate j of a (chain, draw, dim) stack pass samples[:, :, j].")
    if x.shape[1] < 4:
        raise ValueError(f"need at least 4 draws per chain for ESS, got {x.shape[1]} (array shape {x.shape})")
    return x


def ess(draws, method: str = "mean", *, layout: str = "draw") -> float:
    """Effective sample size of a scalar observable (ArviZ ``ess``; ``method`` as in ArviZ).

    Parameters
    ----------
    draws : array
        (n_draws,): one chain; (n_chains, n_draws) with ``layout="chain,draw"`` (module docstring; a 2-d
        array without it is a ValueError, since ``ChainResult.samples`` is (draw, dim)).
    method : str
        ArviZ's ESS method ("mean", "bulk", "tail", ...).
    layout : {"draw", "chain,draw"}
        How to read ``draws``.

    Returns
    -------
    float
        The ESS of all chains together.
    """
    az = _arviz()
    return float(az.ess(_as_chains(draws, layout), method=method))


def autocorrelation(draws, max_lag: int | None = None) -> np.ndarray:
    """Normalised autocorrelation function of a single chain (ArviZ ``autocorr``)."""
    az = _arviz()
    x = np.asarray(draws, dtype=np.float64).reshape(-1)
    rho = az.autocorr(x)
    return rho if max_lag is None else rho[: max_lag + 1]


@dataclass(frozen=True)
class TauEstimate:
    """An integrated autocorrelation time with its standard error.

    ``tau`` in units of the draw spacing; ``se`` its large-sample standard error; ``ci`` the normal 95%
    interval tau +/- 1.96 se; ``method`` ``"sokal"`` or ``"batch_means"``; ``window`` the summation
    window W (Sokal) or the batch length (batch means); ``n`` the number of draws used; ``reliable`` False
    when the chain is shorter than 20 windows (Sokal) or has fewer than 20 batches or batches shorter than
    20 tau (batch means): the estimate is then dominated by its O(W / n) or O(tau / b) bias.
    """

    tau: float
    se: float
    method: str
    window: int
    n: int
    reliable: bool = True

    @property
    def ci(self) -> tuple[float, float]:
        return (self.tau - 1.96 * self.se, self.tau + 1.96 * self.se)


def _centred_autocovariance(x: np.ndarray) -> np.ndarray:
    """Autocovariances c_k = (1/n) sum_t (x_t - xbar)(x_t+k - xbar), k = 0..n-1, of each row (FFT),
    averaged over rows."""
    n = x.shape[1]
    y = x - x.mean(axis=1, keepdims=True)
    m = 1 << (2 * n - 1).bit_length()
    f = np.fft.rfft(y, n=m, axis=1)
    c = np.fft.irfft(f * np.conj(f), n=m, axis=1)[:, :n] / n
    return c.mean(axis=0)


def integrated_autocorrelation_time(draws, method: str = "sokal", c: float = 5.0, *,
                                    layout: str = "draw") -> TauEstimate:
    """Integrated autocorrelation time tau = sum over all lags k of rho_k = 1 + 2 sum_{k>=1} rho_k, with a
    standard error; right for oscillating (underdamped) chains, whose rho_k changes sign.

    ``method="sokal"`` (Sokal 1997, "Monte Carlo methods in statistical mechanics", Sec. 3; the paper, SGNHT
    App. E Table 1, reports tau without a formula, so this estimator is our choice): the full sum tau(W) = 1 + 2 sum_{k=1}^W rho_k with Sokal's automatic
    window, the smallest W >= c * tau_abs(W), where tau_abs(W) = 1 + 2 sum_{k=1}^W |rho_k| (for a chain
    with rho_k >= 0 this is Sokal's own rule W >= c tau(W); with oscillating or negative rho_k, tau(W)
    itself can be small or negative long before the autocorrelation has died out, so the window is set by
    the decay of |rho_k|). Standard error (Madras & Sokal 1988; Priestley's variance of a lag-window
    spectral estimate at frequency 0): se = tau * sqrt(2 (2W + 1) / n), with tau in it replaced by
    max(tau, batch-means tau) (the variance scales with the true tau^2; a chance-low estimate would
    understate its own se). The estimate is reliable when W << n (the windowed sum of sample
    autocorrelations is biased by about -(2W + 1) tau / n through the mean subtraction): run the chain for
    well over 100 windows.

    ``method="batch_means"``: batches of length b = floor(sqrt(n)) (per chain), tau = b * var(batch means)
    / var(draws); se = tau * sqrt(2 / (a - 1)) with a the number of batches. Its bias is O(1 / b) and it
    needs no window, so it is the independent cross-check.

    ``draws``: (n_draws,), or (n_chains, n_draws) with ``layout="chain,draw"`` (as in :func:`ess`); chains
    are centred on their own means and their autocovariances averaged; n = total draws.
    """
    x = _as_chains(draws, layout)
    n_chains, n1 = x.shape
    n = x.size
    if method == "sokal":
        cov = _centred_autocovariance(x)
        if not cov[0] > 0:
            raise ValueError("draws have zero variance; tau is undefined")
        rho = cov / cov[0]
        tau_cum = 1.0 + 2.0 * np.cumsum(rho[1:])
        abs_cum = 1.0 + 2.0 * np.cumsum(np.abs(rho[1:]))
        w = np.arange(1, n1)
        ok = np.flatnonzero(w >= c * abs_cum)
        W = int(w[ok[0]]) if ok.size else n1 - 1
        tau = float(tau_cum[W - 1])
        # the variance is proportional to the true tau^2; a low estimate plugged into its own se understates
        # it (chains only a few dozen windows long), so the scale is max(|tau|, the batch-means tau)
        scale = max(abs(tau), integrated_autocorrelation_time(x, "batch_means", layout="chain,draw").tau) if n1 >= 8 else abs(tau)
        se = scale * math.sqrt(2.0 * (2 * W + 1) / n)
        return TauEstimate(tau=tau, se=float(se), method="sokal", window=W, n=n, reliable=bool(ok.size and 20 * W <= n1))
    if method == "batch_means":
        b = max(int(math.isqrt(n1)), 1)
        a_per = n1 // b
        if a_per < 2:
            raise ValueError(f"need at least 2 batches per chain, got {n1} draws")
        y = x[:, : a_per * b] - x[:, : a_per * b].mean(axis=1, keepdims=True)
        means = y.reshape(n_chains, a_per, b).mean(axis=2).reshape(-1)
        a = means.size
        var = float(np.mean(y**2))
        if not var > 0:
            raise ValueError("draws have zero variance; tau is undefined")
        tau = b * float(np.sum(means**2) / (a - n_chains)) / var
        se = tau * math.sqrt(2.0 / (a - n_chains))
        return TauEstimate(tau=tau, se=float(se), method="batch_means", window=b, n=int(a_per * b * n_chains),
                           reliable=bool(a_per >= 20 and b >= 20 * tau))
    raise ValueError(f"unknown method {method!r}; choose 'sokal' or 'batch_means'")


def mcse_mean(draws, *, layout: str = "draw") -> float:
    """Monte Carlo standard error of the mean: sd / sqrt(ESS) over all chains (``draws``, ``layout`` as in
    :func:`ess`)."""
    x = _as_chains(draws, layout)
    return float(x.std(ddof=1) / np.sqrt(ess(x, layout="chain,draw")))


def mcse_z(draws, true_value: float, func=None, *, layout: str = "draw") -> float:
    """z = (mean of f(draws) - true value) / MCSE, with f the identity by default (``draws``, ``layout`` as
    in :func:`ess`; ``func`` is applied to the (chain, draw) array)."""
    x = _as_chains(draws, layout)
    if func is not None:
        x = func(x)
    return float((x.mean() - true_value) / mcse_mean(x, layout="chain,draw"))


def to_inference_data(result, var_name: str = "theta"):
    """Chains of the SG-MCMC driver as an ArviZ ``InferenceData``.

    Parameters
    ----------
    result : ChainResult, MultiChainResult or a list of ChainResult
        One chain (``run_chain``) or several (``run_chains``); any object with ``samples`` (n_draws, dim),
        ``sample_steps`` and the per-step ``kinetic_energy``, ``thermostat`` and ``grad_norm`` per chain.
        Every chain must hold the same number of draws of the same dimension.
    var_name : str
        Name of the posterior variable.

    Returns
    -------
    arviz.InferenceData
        ``posterior[var_name]`` with dims (chain, draw, ``<var_name>_dim_0``): the chains' ``samples`` (on the
        simplex the normalised points, not the gamma variables). ``sample_stats`` at the kept steps:
        ``kinetic_energy`` (p'p / 2n, target 1/2; omitted for samplers without momentum), ``thermostat`` (xi,
        or the fixed friction), ``grad_norm`` and ``diverging``. The driver stops a chain at its first
        non-finite gradient or position (``DivergenceError``), so a returned chain has no divergent draw:
        ``diverging`` is all False, present for ArviZ's plots. ``az.summary`` of it gives r_hat, ess_bulk
        and ess_tail per coordinate.
    """
    az = _arviz()
    chains = list(getattr(result, "chains", None) or ([result] if hasattr(result, "samples") else result))
    if not chains:
        raise ValueError("to_inference_data: no chains given")
    shapes = {np.shape(r.samples) for r in chains}
    if len(shapes) != 1 or len(next(iter(shapes))) != 2:
        raise ValueError(f"to_inference_data: every chain needs samples of one shape (n_draws, dim); got "
                         f"{sorted(shapes)} (chains of different lengths: rerun with equal n_steps, burnin, thin)")
    steps = [np.asarray(r.sample_steps, dtype=np.int64) for r in chains]
    post = {var_name: np.stack([np.asarray(r.samples, dtype=np.float64) for r in chains])}
    stats = {}
    for key in ("kinetic_energy", "thermostat", "grad_norm"):
        vals = np.stack([np.asarray(getattr(r, key), dtype=np.float64)[s] for r, s in zip(chains, steps)])
        if np.isfinite(vals).any():
            stats[key] = vals
    stats["diverging"] = np.zeros(post[var_name].shape[:2], dtype=bool)
    r0 = chains[0]
    attrs = {k: getattr(r0, k) for k in ("sampler", "model", "seed", "step_size", "batch_size") if hasattr(r0, k)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        idata = az.from_dict(posterior=post, sample_stats=stats, attrs=attrs)
    return idata


def histogram_density(samples, edges) -> np.ndarray:
    """Normalised histogram (density) of ``samples`` on bins ``edges``; mass outside the bins counts
    against the estimate (it is normalised by the total number of samples, not the number inside)."""
    s = np.asarray(samples, dtype=np.float64).reshape(-1)
    counts, _ = np.histogram(s, bins=edges)
    return counts / (s.size * np.diff(edges))


def density_rmse(samples, pdf, center: float, scale: float, n_bins: int = 100, width: float = 5.0) -> float:
    """RMSE between the sample histogram and the exact density at bin centres (SGNHT Fig. 2 /
    Table 1 report an RMSE of the density estimate without a formula: this binning is our reconstruction).

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
    """Running mean over iterations (e.g. of the kinetic energy, SGNHT Fig. 1 and Fig. 3)."""
    x = np.asarray(x, dtype=np.float64)
    return np.cumsum(x) / np.arange(1, x.size + 1)


class PredictiveAverage:
    """Sample-averaged posterior predictive, scored at checkpoints (SGNHT Sec. 5.2: predictions
    averaged over the samples after burn-in): a ``run_chain`` callback.

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
