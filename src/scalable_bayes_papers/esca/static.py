"""What the ESCA paper states and this pipeline renders as is: the specs of the static items (Fig. 1,
Fig. 4, Table 1, Table 2; no computation) and the data set table of Sec. 4 (TabU2's paper rows)."""

from __future__ import annotations

# Table 1 of the paper (Sec. 1): mixture component (rows) x emission (columns); "" = empty cell.
TAB1_SPEC = {
    "columns": ["Bernoulli", "Multinomial", "Gaussian", "Poisson"],
    "rows": {
        "Categorical": ["Latent Class Model [9]", "Unigram Document Clustering", "Mixture of Gaussians [22]", ""],
        "Dirichlet Mixture": ["Grade of Membership Model [36]", "Latent Dirichlet Allocation [2]", "Gaussian-LDA [6]",
                              "GaP Model [3]"],
    },
}

# Table 2 of the paper (App. A): notation of (stochastic) EM.
TAB2_SPEC = [
    ("x", "Observed data"),
    ("z", "Unobserved data"),
    ("(x, z)", "Complete data"),
    ("f_{x;eta}(x; eta)", "marginal observed data density"),
    ("f_{z;eta}(z; eta)", "marginal unobserved data density"),
    ("f_{x,z;eta}(x, z; eta)", "complete data density/likelihood"),
    ("f_{z|x;eta}(z | x; eta)", "conditional unobserved-data (missing-data) density"),
]

# Figure 1 (Sec. 2.3): iteration t reads T^(t mod 2) and writes T^((t+1) mod 2).
FIG1_SPEC = {"n_iterations": 4, "buffers": ["T(0)", "T(1)"]}

# Figure 4 (App. B): LDA plate diagram. Nodes (name -> (x, y, label, observed)), edges, plates
# (label, x0, y0, x1, y1).
FIG4_SPEC = {
    "nodes": {
        "alpha": (0.5, 2.0, r"$\alpha$", None),
        "theta": (2.0, 2.0, r"$\theta_m$", False),
        "z": (3.5, 2.0, r"$z_{mn}$", False),
        "w": (5.0, 2.0, r"$w_{mn}$", True),
        "phi": (5.0, 0.45, r"$\phi_k$", False),
        "beta": (6.9, 0.45, r"$\beta$", None),
    },
    "edges": [("alpha", "theta"), ("theta", "z"), ("z", "w"), ("phi", "w"), ("beta", "phi")],
    "plates": [(r"$N_m$", 2.9, 1.35, 5.75, 2.65), (r"$M$", 1.35, 1.1, 6.05, 2.95), (r"$K$", 4.3, -0.2, 5.75, 1.0)],
}

# The data sets of Sec. 4 (the paper's table), the first rows of TabU2.
PAPER_DATASETS = [
    {"dataset": "PubMed (paper)", "V": 141043, "docs": 8200000, "tokens": 737869085},
    {"dataset": "Wikipedia (paper)", "V": 210233, "docs": 6631176, "tokens": 1133050514},
    {"dataset": "Large (paper, proprietary)", "V": 140000, "docs": 3_000_000_000, "tokens": 171_000_000_000},
]
