"""Follow-up to the BNN-gap study: the temperature of each BNN layer under SGHMC and SGNHT (Sec. 5.2, App. F).

The quick STab2 run found SGNHT's BNN test error getting worse as eta grows at a = 0.01 (and its single-sample
error climbing to chance at a = 0.001) while SGHMC's does not. Algorithm 2's thermostat (App. F) is scalar:
alpha <- alpha + (u'u / n - eta) sets only the mean kinetic energy over all n = 79,510 parameters, which
the first layer (78,400 weights) dominates. If the gradient noise differs between layers (the gamma study in
README.md shows the mechanism in 2-D), the small layers can run hot or cold while the mean is 0.5.

This module measures it: per parameter group g (W1, b1, W2, b2 of :class:`scalable_bayes.models.bnn.BNN`),
the temperature T_g = mean over the group and over the checkpoints after burn-in of u_i^2 / eta (1 at the
target: u = p h, eta = h^2, <p_i^2> = 1), for SGHMC and SGNHT at the given (a, eta) cells, with the quick
profile's data and model.

Command: ``python -m scalable_bayes_papers.sgnht.bnn_temperature`` (writes ``BnnTemperature.{csv,md}``).
"""

from __future__ import annotations

import argparse
import logging

import numpy as np
import pandas as pd

from scalable_bayes.models import bnn as bnn_mod
from scalable_bayes.samplers import run_chain, sghmc_reformulated, sgnht_reformulated
from scalable_bayes.utils import dataframe_to_markdown, save_table

from . import data
from .runs import eta_scale

logger = logging.getLogger(__name__)

GROUPS = ("W1", "b1", "W2", "b2")


def layer_temperatures(images, labels, a: float, eta: float, seed: int = 0, n_iter: int = 12_500, burnin: int = 2_500,
                       n_train: int = 6000, n_val: int = 2000, hidden: int = 100, batch_size: int = 20,
                       every: int = 50) -> list[dict]:
    """SGHMC and SGNHT (App. F, Algorithm 2) on the quick BNN at (a, eta in the paper's units, scaled by
    ``eta_scale: auto``); one row per method with T_g of each group, the mean KE and the final alpha."""
    (Xtr, ytr), _, _ = data.split_mnist(images, labels, n_train, n_val, seed=0)
    scale = eta_scale("bnn", {"eta_scale": "auto"}, len(ytr))
    h = eta * scale
    rows = []
    for method, alg in (("SGHMC", sghmc_reformulated(a=a)), ("SGNHT", sgnht_reformulated(a=a))):
        m = bnn_mod.BNN(Xtr, ytr, hidden=hidden, seed=seed)
        cb = LayerTemperature(burnin, h, m.bounds)
        res = run_chain(alg, m.model(), m.init_position(seed), seed=seed, n_steps=n_iter, step_size=h,
                        batch_size=batch_size, burnin=n_iter - 1, checkpoint_every=every, callback=cb)
        row = {"method": method, "a": a, "eta": eta, "seed": seed, "n_iter": n_iter,
               "mean_ke": float(np.mean(res.kinetic_energy[burnin:])), "alpha_end_over_a": float(res.thermostat[-1] / a)}
        row.update(cb.row())
        row.update({f"size_{g}": int(m.bounds[i + 1] - m.bounds[i]) for i, g in enumerate(GROUPS)})
        rows.append(row)
        logger.info("%s a=%g eta=%g: T %s, KE %.3f, alpha/a %.2f", method, a, eta,
                    {g: round(row[f"T_{g}"], 3) for g in GROUPS}, row["mean_ke"], row["alpha_end_over_a"])
    return rows


class LayerTemperature:
    """Chain callback: per parameter group g of the BNN (``bounds``), T_g = mean over the group and over the
    checkpoints after ``burnin`` of u_i^2 / eta (1 at the target: u = p h, eta = h^2, <p_i^2> = 1)."""

    def __init__(self, burnin: int, eta: float, bounds):
        self.burnin, self.eta, self.bounds = burnin, float(eta), bounds
        self.sums = np.zeros(len(GROUPS))
        self.count = 0

    def __call__(self, step, state):
        if step > self.burnin:
            u2 = state.momentum ** 2 / self.eta
            for g in range(len(GROUPS)):
                self.sums[g] += float(np.mean(u2[self.bounds[g]:self.bounds[g + 1]]))
            self.count += 1
        return None

    def row(self) -> dict:
        return {f"T_{g}": self.sums[i] / max(self.count, 1) for i, g in enumerate(GROUPS)}


def run_study(args, jobs, cols: list[str]) -> None:
    """The one-off BNN studies' command line: MNIST from ``args.mnist``, BLAS on one thread, the rows of every
    ``job(images, labels)`` written atomically to ``args.out``.csv (every field) and ``args.out``.md (``cols``)."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    d = np.load(args.mnist)
    from threadpoolctl import threadpool_limits

    rows = []
    with threadpool_limits(limits=1, user_api="blas"):
        for job in jobs:
            rows += job(d["images"], d["labels"])
    t = pd.DataFrame(rows)
    save_table(t, f"{args.out}.csv")
    save_table(t[cols], f"{args.out}.md")
    logger.info("written %s.{csv,md}:\n%s", args.out, dataframe_to_markdown(t[cols]))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mnist", default="data/processed/mnist/mnist.npz")
    ap.add_argument("--out", default="results/sgnht/tables/BnnTemperature")
    ap.add_argument("--cells", default="0.01:8e-7,0.001:8e-7", help="a:eta pairs (eta in the paper's units)")
    ap.add_argument("--n-iter", type=int, default=12_500)
    args = ap.parse_args(argv)
    cells = [tuple(float(v) for v in cell.split(":")) for cell in args.cells.split(",")]
    jobs = [lambda im, lb, a=a, eta=eta: layer_temperatures(im, lb, a, eta, n_iter=args.n_iter, burnin=args.n_iter // 5)
            for a, eta in cells]
    run_study(args, jobs, ["method", "a", "eta", "mean_ke", "alpha_end_over_a"] + [f"T_{g}" for g in GROUPS])


if __name__ == "__main__":
    main()
