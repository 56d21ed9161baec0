"""The deciding experiment: why SGNHT's BNN test error is above SGHMC's in the quick STab2.

The quick STab2 (Sec. 5.2, App. G; README "Convergence of the ML runs") has SGNHT 1.2 points worse than SGHMC
on the BNN in both seeds, with SGNHT's error growing with eta at a = 0.01 while SGHMC's falls, and the layer
temperatures (``bnn_temperature``) about equal for the two. Three candidate causes are separated here by
arms that change one thing each, at the same (a, eta, seed), data, model, minibatches and iterations:

* ``SGHMC``: Chen et al.'s Alg. 2, friction a, injected noise 2 a eta (the STab2 run).
* ``SGNHT``: App. F Algorithm 2, thermostat alpha (the STab2 run); alpha_bar = its mean after burn-in.
* ``frozen``: SGHMC with friction alpha_bar and noise estimate b_hat = alpha_bar - a, i.e. friction
  alpha_bar and injected noise 2 a eta: SGNHT with its thermostat frozen at its own average. Same friction
  and same injected noise as SGNHT; no thermostat dynamics.
* ``SGHMC-alpha``: SGHMC with friction alpha_bar and injected noise 2 alpha_bar eta (b_hat = 0): SGNHT's
  friction without its cooling (separates "more friction" from "less injected noise per unit friction").
* ``SGHMC-fixed`` / ``SGNHT-fixed``: both samplers with the prior precisions held at the SGHMC chain's last
  Gibbs draw (:class:`scalable_bayes.models.bnn.BNN` ``prior_precision``): the hierarchical prior's feedback
  removed.

Read-out per arm: the sample-averaged test error at the end (the STab2 metric), the single-sample test error
over the first and last 20% of the post-burn-in checkpoints (is the chain drifting?), mean kinetic energy,
mean alpha, per-layer temperature T_g = mean u_i^2 / eta after burn-in (1 = target), and per-layer rms weight.

Command (quick profile's data and model; a = 0.01; eta in the paper's units, scaled by ``eta_scale: auto``):
``python -m scalable_bayes_papers.sgnht.bnn_gap --seeds 0 1 --etas 2e-7 8e-7`` (writes ``BnnGap.{csv,md}``).
"""

from __future__ import annotations

import argparse
import logging

import numpy as np

from scalable_bayes.models import bnn as bnn_mod
from scalable_bayes.samplers import run_chain, sghmc_reformulated, sgnht_reformulated

from . import data
from .bnn_temperature import GROUPS, LayerTemperature, run_study
from .runs import TracedPredictiveAverage, eta_scale

logger = logging.getLogger(__name__)


class _LayerTrace(TracedPredictiveAverage):
    """The STab2 callback plus the per-group temperature after burn-in (``bnn_temperature.LayerTemperature``)."""

    def __init__(self, burnin, predict, score, eta, bounds):
        super().__init__(burnin, predict, score, eta)
        self.temperature = LayerTemperature(burnin, eta, bounds)

    def __call__(self, step, state):
        self.temperature(step, state)
        return super().__call__(step, state)


def run_arms(images, labels, a: float, eta: float, seed: int, n_iter: int = 12_500, burnin: int = 2_500,
             n_train: int = 6000, n_val: int = 2000, hidden: int = 100, batch_size: int = 20, every: int = 250,
             arms=("SGHMC", "SGNHT", "frozen", "SGHMC-alpha", "SGHMC-fixed", "SGNHT-fixed")) -> list[dict]:
    """One row per arm (module docstring) at (a, eta in the paper's units, chain seed)."""
    (Xtr, ytr), (Xva, yva), (Xte, yte) = data.split_mnist(images, labels, n_train, n_val, seed=0)
    h = eta * eta_scale("bnn", {"eta_scale": "auto"}, len(ytr))

    def score(pv, pt):
        return 100.0 * np.mean(pv.argmax(1) != yva), 100.0 * np.mean(pt.argmax(1) != yte)

    ctx = {}

    def one(name, alg, prior_precision=None):
        m = bnn_mod.BNN(Xtr, ytr, hidden=hidden, seed=seed, prior_precision=prior_precision)
        cb = _LayerTrace(burnin, lambda th: (m.predict_proba(th, Xva), m.predict_proba(th, Xte)), score, h, m.bounds)
        res = run_chain(alg, m.model(), m.init_position(seed), seed=seed, n_steps=n_iter, step_size=h,
                        batch_size=batch_size, burnin=n_iter - 1, thin=1, checkpoint_every=every, callback=cb)
        single = np.array([r[2] for r in cb.single if r[0] > burnin])
        k = max(1, len(single) // 5)
        theta = res.samples[-1] if len(res.samples) else None
        row = {"arm": name, "a": a, "eta": eta, "seed": seed, "n_iter": n_iter,
               "test_avg": cb.rows[-1][2], "single_first20": float(single[:k].mean()),
               "single_last20": float(single[-k:].mean()),
               "mean_ke": float(np.mean(res.kinetic_energy[burnin:])),
               "alpha_mean_over_a": float(np.mean(res.thermostat[burnin:]) / a)}
        row.update(cb.temperature.row())
        if theta is not None:
            row.update({f"rms_{g}": float(np.sqrt(np.mean(theta[m.bounds[i]:m.bounds[i + 1]] ** 2)))
                        for i, g in enumerate(GROUPS)})
        row.update({f"lambda_{g}": float(m.lam[i]) for i, g in enumerate(GROUPS)})
        logger.info("%s a=%g eta=%g seed %d: test %.2f (single %.1f -> %.1f), KE %.3f, alpha/a %.3f", name, a, eta,
                    seed, row["test_avg"], row["single_first20"], row["single_last20"], row["mean_ke"],
                    row["alpha_mean_over_a"])
        ctx[name] = (res, m)
        return row

    rows = [one("SGHMC", sghmc_reformulated(a=a)), one("SGNHT", sgnht_reformulated(a=a))]
    alpha_bar = float(np.mean(ctx["SGNHT"][0].thermostat[burnin:]))
    if "frozen" in arms:
        if alpha_bar >= a:
            rows.append(one("frozen", sghmc_reformulated(a=alpha_bar, b_hat=alpha_bar - a)))
        else:
            logger.warning("alpha_bar %.4g < a %.4g: no frozen arm (it would need a negative noise estimate)", alpha_bar, a)
    if "SGHMC-alpha" in arms:
        rows.append(one("SGHMC-alpha", sghmc_reformulated(a=alpha_bar)))
    lam = ctx["SGHMC"][1].lam.copy()
    if "SGHMC-fixed" in arms:
        rows.append(one("SGHMC-fixed", sghmc_reformulated(a=a), prior_precision=lam))
    if "SGNHT-fixed" in arms:
        rows.append(one("SGNHT-fixed", sgnht_reformulated(a=a), prior_precision=lam))
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mnist", default="data/processed/mnist/mnist.npz")
    ap.add_argument("--out", default="results/sgnht/tables/BnnGap")
    ap.add_argument("--a", type=float, default=0.01)
    ap.add_argument("--etas", type=float, nargs="+", default=[2e-7, 8e-7], help="eta in the paper's units")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--n-iter", type=int, default=12_500)
    args = ap.parse_args(argv)
    jobs = [lambda im, lb, seed=seed, eta=eta: run_arms(im, lb, args.a, eta, seed, n_iter=args.n_iter,
                                                       burnin=args.n_iter // 5)
            for seed in args.seeds for eta in args.etas]
    run_study(args, jobs, ["arm", "eta", "seed", "test_avg", "single_first20", "single_last20", "mean_ke",
                           "alpha_mean_over_a"] + [f"T_{g}" for g in GROUPS] + [f"rms_{g}" for g in GROUPS])


if __name__ == "__main__":
    main()
