"""What the SGGMC paper (Liu, Zhu & Song, NIPS 2016) states and this pipeline renders as is: the specs of the
static items (Table 1, Fig. 1, Fig. 2; no computation) and the construction of App. D (SFig1: the data modes
and the two approximate posterior modes of the Sec. 5.2 experiment, computed from its formulas)."""

from __future__ import annotations

import math

import numpy as np

# Table 1 (Sec. 1): a summary of some D-MCMCs, verbatim. Marks: "✓" yes, "×" no ("sampling on manifold not
# supported" in the no-global-coordinates column), "–" not applicable (Euclidean samplers).
TAB1_SPEC = {
    "columns": ["methods", "stochastic gradient", "no inner iteration", "no global coordinates",
                "order of integrator"],
    "rows": [
        ["GMC [7]", "×", "✓", "✓", "2nd"],
        ["RMLD [13]", "×", "✓", "×", "1st"],
        ["RMHMC [13]", "×", "×", "×", "2nd †"],
        ["CHMC [6]", "×", "×", "✓", "2nd †"],
        ["SGLD [28]", "✓", "✓", "–", "1st"],
        ["SGHMC [9] / SGNHT [10]", "✓", "✓", "–", "1st ‡"],
        ["SGRLD [22] / SGRHMC [19]", "✓", "✓", "×", "1st"],
        ["SGGMC / gSGNHT (proposed)", "✓", "✓", "✓", "2nd"],
    ],
    "notes": [
        "×: sampling on manifold not supported (no-global-coordinates column); –: not applicable.",
        "†: the integrators are not in the SSI scheme (it is unclear whether the claimed '2nd-order' is "
        "equivalent to ours).",
        "‡: 2nd-order integrators for SGHMC and mSGNHT are developed by [8] and [18], respectively.",
    ],
}

# Figure 1 (Sec. 3): a manifold M with a local coordinate system (N, Phi) and an isometric embedding Xi.
# Panels (name -> (x0, y0, width, height, title)), points (name -> (x, y, label)) and the maps between them
# (from, to, label, rad of the arc).
FIG1_SPEC = {
    "panels": {
        "coords": (0.0, 0.0, 2.6, 2.2, r"coordinate space $\mathbb{R}^m$"),
        "manifold": (3.4, 0.0, 2.8, 2.2, r"manifold $\mathcal{M}$"),
        "embedded": (7.0, 0.0, 2.8, 2.2, r"embedded space $\mathbb{R}^n$"),
    },
    "points": {  # name -> (x, y, label, label position (centre, top)): labels clear of the arrows
        "q": (1.3, 1.1, r"$q$", (1.3, 0.95)),
        "m": (4.8, 1.1, r"$\mathcal{N}$", (4.8, 0.95)),
        "x": (9.26, 1.37, r"$x = \xi(q)$", (8.25, 1.3)),
    },
    "maps": [  # (from, to, label, arc curvature, label position)
        ("m", "q", r"$\Phi$", 0.4, (3.05, 1.95)),
        ("m", "x", r"$\Xi$", -0.4, (6.2, 2.42)),
        ("q", "x", r"$\xi = \Xi \circ \Phi^{-1}$", 0.22, (5.3, -0.25)),
    ],
}

# Figure 2 (Sec. 4): the spherical admixture model (SAM) of Reisinger et al. Nodes (name -> (x, y, label,
# observed; None = fixed hyper-parameter)), edges, plates (label, x0, y0, x1, y1).
FIG2_SPEC = {
    "nodes": {
        "m": (0.4, 2.6, r"$m$", None),
        "kappa0": (0.4, 1.6, r"$\kappa_0$", None),
        "mu": (1.9, 2.1, r"$\mu$", False),
        "sigma": (1.9, 0.7, r"$\sigma$", None),
        "beta": (3.5, 2.1, r"$\beta_k$", False),
        "alpha": (3.75, 0.9, r"$\alpha$", None),
        "theta": (5.0, 0.9, r"$\theta_d$", False),
        "v": (6.5, 2.1, r"$v_d$", True),
        "kappa": (8.0, 2.1, r"$\kappa$", None),
    },
    "edges": [("m", "mu"), ("kappa0", "mu"), ("mu", "beta"), ("sigma", "beta"), ("beta", "v"),
              ("alpha", "theta"), ("theta", "v"), ("kappa", "v")],
    "plates": [(r"$K$", 2.9, 1.45, 4.1, 2.75), (r"$D$", 4.35, 0.3, 7.2, 2.75)],
}

# Sec. 5.2 / App. D: the data-generating values (angles from +x) and the modes the paper expects.
SEC52_V1, SEC52_V2 = -math.pi / 24, math.pi / 8
APPD_PAPER_MODES = ((-math.pi / 24, math.pi / 8), (math.pi / 24, -math.pi / 8))


def unit(angle: float) -> np.ndarray:
    return np.array([math.cos(angle), math.sin(angle)])


def angle(x) -> float:
    return float(math.atan2(x[1], x[0]))


def appd_modes(v1: float = SEC52_V1, v2: float = SEC52_V2) -> dict:
    """App. D's construction for the two-vMF mixture of Sec. 5.2 (angles in radians).

    The likelihood's data modes are v1 and mu = (v1 + v2) / |v1 + v2|. Matching them to the generated data's
    modes (v1^(g), mu^(g)) in either order gives the two approximate posterior modes:
    (1) v1 = v1^(g), mu = mu^(g): (v1^(1), v2^(1)) = (v1^(g), v2^(g));
    (2) v1 = mu^(g), mu = v1^(g): v1^(2) = mu^(g), and v2^(2) is the reflection of mu^(g) about v1^(g)
        (the unique v2 whose bisector with mu^(g) is v1^(g)): v2^(2) = 2 (v1^(g)^T mu^(g)) v1^(g) - mu^(g).
    """
    a, b = unit(v1), unit(v2)
    mu = (a + b) / np.linalg.norm(a + b)
    v2_2 = 2 * float(a @ mu) * a - mu
    return {"v1_g": v1, "v2_g": v2, "mu_g": angle(mu), "phi": abs(v2 - v1),
            "mode1": (v1, v2), "mode2": (angle(mu), angle(v2_2))}
