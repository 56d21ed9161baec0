"""Bayesian probabilistic matrix factorisation (Salakhutdinov & Mnih 2008) for SG-MCMC (SGNHT Sec. 5.2;
the settings the paper leaves unstated are chosen below and in scalable_bayes_papers/sgnht/README.md).

r_ij ~ N(mu + a_i + b_j + u_i'v_j, 1/tau); u_i ~ N(0, diag(lambda_U)^-1), v_j ~ N(0, diag(lambda_V)^-1),
a_i ~ N(0, 1/lambda_a), b_j ~ N(0, 1/lambda_b); every lambda ~ Gamma(1, 1), resampled by Gibbs every
``gibbs_every`` gradient evaluations; tau fixed (not stated in the paper: default 2, reconstructed);
mu = mean training rating. Prediction clipped to [1, 5].
"""

from __future__ import annotations

import numpy as np

from . import _checks
from .base import Model


class BPMF:
    def __init__(self, users, items, ratings, n_users: int, n_items: int, rank: int = 10, tau: float = 2.0,
                 gibbs_every: int = 100, seed: int = 0):
        if int(n_users) != n_users or n_users < 1 or int(n_items) != n_items or n_items < 1:
            raise ValueError(f"BPMF: n_users and n_items must be positive integers, got {n_users!r}, {n_items!r}")
        if int(rank) != rank or rank < 1:
            raise ValueError(f"BPMF: rank must be a positive integer, got {rank!r}")
        # 0-based indices: a negative one would wrap around to the last user / item without a word
        self.u = _checks.indices(users, int(n_users), "BPMF", "users")
        self.i = _checks.indices(items, int(n_items), "BPMF", "items")
        self.r = _checks.finite(ratings, "BPMF", "ratings")
        if not (self.u.shape == self.i.shape == self.r.shape) or self.u.ndim != 1:
            raise ValueError("BPMF: users, items and ratings must be 1-D and have the same length, got shapes "
                             f"{self.u.shape}, {self.i.shape}, {self.r.shape}")
        if self.r.size == 0:
            raise ValueError("BPMF: no ratings; give at least one (user, item, rating) triple")
        if not np.isfinite(tau) or tau <= 0:
            raise ValueError(f"BPMF: tau must be finite and > 0, got {tau}")
        self.nu, self.ni, self.D, self.tau = int(n_users), int(n_items), int(rank), float(tau)
        self.mu = float(self.r.mean())
        sizes = [self.nu * self.D, self.ni * self.D, self.nu, self.ni]
        self.bounds = np.cumsum([0] + sizes)
        self.dim = int(self.bounds[-1])
        self.lam_U = np.ones(self.D)
        self.lam_V = np.ones(self.D)
        self.lam_a = 1.0
        self.lam_b = 1.0
        self.gibbs_every = int(gibbs_every)
        self._calls = 0
        self._rng = np.random.default_rng(seed)

    def unpack(self, theta):
        b = self.bounds
        return (theta[b[0]:b[1]].reshape(self.nu, self.D), theta[b[1]:b[2]].reshape(self.ni, self.D),
                theta[b[2]:b[3]], theta[b[3]:b[4]])

    def init_position(self, seed: int, scale: float = 0.1):
        th = np.zeros(self.dim)
        th[: self.bounds[2]] = np.random.default_rng(seed).normal(0.0, scale, self.bounds[2])
        return th

    def predict(self, theta, users, items):
        U, V, a, b = self.unpack(theta)
        return np.clip(self.mu + a[users] + b[items] + np.einsum("ij,ij->i", U[users], V[items]), 1.0, 5.0)

    def _gibbs(self, theta):
        U, V, a, b = self.unpack(theta)
        g = self._rng.gamma
        self.lam_U = g(1.0 + 0.5 * self.nu, 1.0 / (1.0 + 0.5 * (U**2).sum(axis=0)))
        self.lam_V = g(1.0 + 0.5 * self.ni, 1.0 / (1.0 + 0.5 * (V**2).sum(axis=0)))
        self.lam_a = g(1.0 + 0.5 * self.nu, 1.0 / (1.0 + 0.5 * float(a @ a)))
        self.lam_b = g(1.0 + 0.5 * self.ni, 1.0 / (1.0 + 0.5 * float(b @ b)))

    def grad(self, theta, idx, key):
        if self._calls % self.gibbs_every == 0:
            self._gibbs(theta)
        self._calls += 1
        U, V, a, b = self.unpack(theta)
        uu, ii, rr = self.u[idx], self.i[idx], self.r[idx]
        e = rr - (self.mu + a[uu] + b[ii] + np.einsum("ij,ij->i", U[uu], V[ii]))
        c = -self.tau * self.r.shape[0] / len(idx) * e
        gU = U * self.lam_U
        gV = V * self.lam_V
        ga = self.lam_a * a
        gb = self.lam_b * b
        np.add.at(gU, uu, c[:, None] * V[ii])
        np.add.at(gV, ii, c[:, None] * U[uu])
        np.add.at(ga, uu, c)
        np.add.at(gb, ii, c)
        return np.concatenate([gU.ravel(), gV.ravel(), ga, gb])

    def model(self) -> Model:
        return Model("bpmf", self.dim, self.r.shape[0], grad_py=self.grad)
