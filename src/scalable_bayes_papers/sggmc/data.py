"""The synthetic targets of the SGGMC paper (Liu, Zhu & Song, NIPS 2016) as used here, in angle coordinates
(radians from +x) on the circle S^1. The models, their densities and the Sec. 5.2 data draw are the library's
(:mod:`scalable_bayes.models.sphere`); this module holds the paper's readings and the binning.

* Sec. 5.1 / App. F.1 (Fig. 3): the toy U(x) = -log(exp{5 mu1'x} + 2 exp{5 mu2'x}), "mu1 = -mu2 = pi/3 (angle
  from +x direction)": mu1 at pi/3 and mu2 at -pi/3 (``mu2_reading="angle"``, ours) or mu2 = -mu1 as vectors,
  at 4 pi/3 (``"vector"``). :func:`toy_density`, :func:`toy_bin_masses` (the exact masses of the 0.1-rad bins).
* Sec. 5.2 / App. D / App. F.2 (Fig. 4): the posterior of the two-vMF mixture, likelihood 1/2 vMF(x | v1, kx)
  + 1/2 vMF(x | mu, kx) with mu = (v1 + v2) / |v1 + v2| (App. D; the main text's formula lost mu), prior means
  e1 and e2 = e1 (ours: App. D's "symmetric with respect to e1, so they share equal preference from the prior"
  needs both priors centred at e1; ``e2="orthogonal"`` takes (0, 1)); the 100 points are drawn exactly from
  the likelihood (ours; the paper ran GMC without burn-in on it).
"""

from __future__ import annotations

import math

import numpy as np

from scalable_bayes.models.sphere import toy_circle_density


def toy_mu_angles(mu2_reading: str = "angle") -> tuple[float, float]:
    """(mu1, mu2) of Sec. 5.1 in radians: mu1 = pi/3; mu2 = -pi/3 (``angle``) or mu1 + pi (``vector``)."""
    if mu2_reading not in ("angle", "vector"):
        raise ValueError(f"mu2_reading must be 'angle' or 'vector', got {mu2_reading!r}")
    return math.pi / 3, (-math.pi / 3 if mu2_reading == "angle" else math.pi / 3 + math.pi)


def toy_density(theta, mu2_reading: str = "angle") -> np.ndarray:
    """Normalised density of the Sec. 5.1 target w.r.t. arc length at angles ``theta`` (weights 1 : 2,
    concentration 5)."""
    m1, m2 = toy_mu_angles(mu2_reading)
    return toy_circle_density(theta, m1, m2)


def angle_edges(width: float) -> np.ndarray:
    """Bin edges of width ``width`` from -pi; the last bin ends at pi (shorter when 2 pi / width is not whole)."""
    return np.append(np.arange(-math.pi, math.pi, width), math.pi)


def toy_bin_masses(edges, mu2_reading: str = "angle", per_bin: int = 200) -> np.ndarray:
    """Exact probability of each angle bin (Gauss-Legendre, ``per_bin`` nodes per bin; sums to 1 within 1e-12)."""
    nodes, weights = np.polynomial.legendre.leggauss(per_bin)
    a, b = np.asarray(edges[:-1]), np.asarray(edges[1:])
    half, mid = (b - a) / 2, (b + a) / 2
    th = mid[:, None] + half[:, None] * nodes[None, :]
    return (toy_density(th, mu2_reading) * weights[None, :]).sum(axis=1) * half


def wrap(theta):
    """Angles to [-pi, pi)."""
    return (np.asarray(theta) + math.pi) % (2 * math.pi) - math.pi


def fig5_split(corpus, settings: dict):
    """(train, test) tf-idf rows of a processed corpus for Fig. 5 (Sec. 5.3): ``max_train_docs`` of its training
    split and ``max_test_docs`` of its test split (null: all), each a seeded random subset (seed 0, ours: the
    corpora are stored in class order; a replication's ``settings["seed_offset"]``, when given, is added to it),
    rows in their stored order."""
    out = []
    seed = 0 + int(settings.get("seed_offset", 0))
    for split, cap in (("train", settings.get("max_train_docs")), ("test", settings.get("max_test_docs"))):
        X = corpus.subset(split).tfidf
        if cap is not None and cap < X.shape[0]:
            keep = np.sort(np.random.default_rng([seed, 0xF5, int(split == "test")]).choice(X.shape[0], cap,
                                                                                              replace=False))
            X = X[keep]
        out.append(X)
    return out[0], out[1]
