"""VMF claim checks (Fig1, Fig2, Fig4, Fig5, Tab1) fed a right and a deliberately wrong result: the wrong one must
fail (verdict "fails"). Figs 1, 2, 4, 5 are deterministic (sd 0: no random draw enters); Table 1's subsampled
corpora carry the spread of their counts over data seeds. The tables are built with the library's own functions on small grids, in the shape ``vmf.runs`` writes them;
the wrong variants change one thing a mistake would (a solver at scipy's default tolerance, the cruder closed
form under the refined one's name, an ODE whose initial value does not wash out, the training split only).
VMF-Fig3 is tested in tests/test_vmf_checks.py; here only the degrees of freedom of its two-seed spread."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scalable_bayes.special.vmf import (kappa_halley_perron, solve_negentropy_ode, vmf_mean_to_kappa,
                                        vmf_negentropy)
from scalable_bayes_papers.vmf import claims, runs

S_CURVES = {"dims": [2, 10, 100], "n_points": 30}


# ------------------------------------------------------------------ Fig. 1: ODE against the Bessel-derived curves
def _fig1_table(monkeypatch=None, rtol=None):
    """runs.fig1_table on a small grid; with ``rtol`` the ODE is solved at that tolerance instead of 1e-12."""
    if rtol is not None:
        monkeypatch.setattr(runs, "solve_negentropy_ode",
                            lambda r, **kw: solve_negentropy_ode(r, **{**kw, "rtol": rtol, "atol": rtol}))
    return runs.fig1_table(dims=(2, 10, 100), n_points=30)


def test_fig1_ode_at_the_papers_tolerance_passes():
    c = claims.check_fig1(_fig1_table(), S_CURVES, "test")
    assert c.holds is True, c.measured


def test_fig1_fails_for_an_ode_solved_at_scipys_default_tolerance(monkeypatch):
    """solve_ivp's default rtol = 1e-3 (the paper asks 1e-12): relative errors ~1e-4, not 'agree well'."""
    c = claims.check_fig1(_fig1_table(monkeypatch, rtol=1e-3), S_CURVES, "test")
    assert c.holds is False and c.details["max_rel_err"] > 1e-6


# ------------------------------------------------------------------ Fig. 2: refined closed forms against Banerjee
def _fig2_table(dims=(10, 100, 1000), refined=("refined", "refined2"), n=60):
    """Refined and Banerjee closed forms against the exact negentropy (Newton + log-Bessel) in the columns of
    runs.fig2_table; ``refined`` names the (phi, phi') methods filed as "refined"."""
    r = np.linspace(0.0, 1.0, n + 20)[10:-10]
    rows = []
    for d in dims:
        phi = np.asarray(vmf_negentropy(r, d=d, method="exact"))
        dphi = np.asarray(vmf_mean_to_kappa(r, d=d, method="newton"))
        for method, (pm, gm) in (("refined", refined), ("banerjee", ("banerjee", "banerjee"))):
            ph = np.asarray(vmf_negentropy(r, d=d, method=pm))
            g = np.asarray(vmf_mean_to_kappa(r, d=d, method=gm))
            rows.append(pd.DataFrame({"d": d, "r": r, "method": method, "reference": "exact", "phi_ref": phi,
                                      "phi": ph, "dphi_ref": dphi, "dphi": g, "breg_ref": r * dphi - phi,
                                      "breg": r * g - ph, "phi_abs_err": np.abs(ph - phi),
                                      "dphi_abs_err": np.abs(g - dphi),
                                      "breg_abs_err": np.abs((r * g - ph) - (r * dphi - phi))}))
    return pd.concat(rows, ignore_index=True)


S_FIG2 = {"dims": [10, 100, 1000], "n_points": 60, "reference": "exact"}


def test_fig2_refined_closed_forms_pass():
    c = claims.check_fig2(_fig2_table(), S_FIG2, "test")
    assert c.holds is True, c.measured


def test_fig2_fails_when_the_refined_forms_are_banerjees():
    """Banerjee's approximation filed under the refined name (a method switch that falls through to the cruder
    form): equal errors everywhere are not 'lower errors'. The former test counted only points where refined
    was strictly worse, so a tie passed."""
    c = claims.check_fig2(_fig2_table(refined=("banerjee", "banerjee")), S_FIG2, "test")
    assert c.holds is False, c.measured
    assert all(v > 0.5 for v in c.details["violation_fraction"].values())  # the per-point part sees the tie


def test_fig2_fails_when_the_gradient_error_does_not_shrink_with_d():
    """The refined gradient error growing slowly with d (its d = 10 level times (d / 10)^0.1, what an error term
    that scales with d gives): better than Banerjee at small d, but not 'shrinks with d'. Held exactly at its
    d = 10 level instead, the fall is exactly 0, the threshold itself: with sd 0 that comparison is undecided
    (a tie no real run produces), so the wrong variant here grows."""
    t = _fig2_table()
    ref = t.method == "refined"
    base = t[ref & (t.d == 10)]["dphi_abs_err"].to_numpy()
    for d in (100, 1000):
        t.loc[ref & (t.d == d), "dphi_abs_err"] = base * (d / 10) ** 0.1
    c = claims.check_fig2(t, S_FIG2, "test")
    fall = [e for e in c.evidence if "falls with d" in e.name][0]
    assert c.verdict == "fails" and c.details["decreasing_in_d"] is False and fall.verdict == "fails"
    for d in (100, 1000):  # the tie
        t.loc[ref & (t.d == d), "dphi_abs_err"] = base
    fall = [e for e in claims.check_fig2(t, S_FIG2, "test").evidence if "falls with d" in e.name][0]
    assert fall.margin == 0 and fall.verdict == "undecided"


def test_curve_items_are_deterministic():
    """No random draw enters Figs 1, 2, 4, 5: every evidence has sd 0 and says so."""
    for c in (claims.check_fig2(_fig2_table(), S_FIG2, "test"), claims.check_fig4(runs.fig4_table(), S_FIG4, "test"),
              claims.check_fig5(_fig5_table(n=10), S_FIG5, "test")):
        assert c.evidence and all(e.sd == 0 and e.sd_from.startswith("deterministic") for e in c.evidence)


# ------------------------------------------------------------------ Fig. 4: forgetting phi'(0)
S_FIG4 = {"dims": [2, 100], "n_points": 100}


def test_fig4_ode_forgets_its_initial_value_passes():
    c = claims.check_fig4(runs.fig4_table(), S_FIG4, "test")
    assert c.holds is True, c.measured


def test_fig4_fails_when_the_initial_gap_persists():
    """Dynamics that do not attract (e.g. the ODE integrated with the sign of its denominator flipped, where
    nearby solutions run parallel): the two phi' curves keep half their initial gap."""
    t = runs.fig4_table()
    lo, hi = sorted(t.dpsi0.unique())
    for d in t.d.unique():
        a = t[(t.d == d) & (t.dpsi0 == lo)].sort_values("r")
        idx = t[(t.d == d) & (t.dpsi0 == hi)].sort_values("r").index
        t.loc[idx, "dphi"] = a.dphi.to_numpy() + 0.5 * (hi - lo)
    c = claims.check_fig4(t, S_FIG4, "test")
    assert c.holds is False


def test_fig4_fails_when_the_larger_dimension_forgets_less():
    """'More so for larger d' reversed: the d = 100 panel shrinks the gap less than the d = 2 panel."""
    t = runs.fig4_table()
    lo, hi = sorted(t.dpsi0.unique())
    a = t[(t.d == 100) & (t.dpsi0 == lo)].sort_values("r")
    idx = t[(t.d == 100) & (t.dpsi0 == hi)].sort_values("r").index
    t.loc[idx, "dphi"] = a.dphi.to_numpy() + 0.09 * (hi - lo)  # shrink 0.09 < 0.1, but weaker than d = 2's
    c = claims.check_fig4(t, S_FIG4, "test")
    assert c.holds is False


# ------------------------------------------------------------------ Fig. 5: closed form against root finding
def _fig5_table(closed_form="refined2", d=50000, n=40):
    """Closed form and 2-step Halley-Perron (20 terms) against the 30-digit mpmath kappa (runs.fig5_table's
    reference; the library's Newton solve is Halley-Perron itself, so it cannot referee it)."""
    from scalable_bayes_papers.vmf.reference import reference_curves

    r = np.linspace(0.0, 1.0, n + 2)[1:-1]
    kref = np.asarray(reference_curves(r, d, 30)[1], dtype=float)
    rows = []
    for method, k in (("closed_form", np.asarray(vmf_mean_to_kappa(r, d=d, method=closed_form))),
                      ("halley_2steps_20terms", np.asarray(kappa_halley_perron(r, d=d, n_steps=2, n_terms=20)))):
        rows.append(pd.DataFrame({"d": d, "r": r, "method": method, "kappa": k, "kappa_ref": kref,
                                  "abs_err": np.abs(k - kref), "reference": "mpmath"}))
    return pd.concat(rows, ignore_index=True)


S_FIG5 = {"dims": [50000], "n_points": 40, "reference": "mpmath", "ref_dps": 30}


def test_fig5_closed_form_psi2_passes():
    c = claims.check_fig5(_fig5_table(), S_FIG5, "test")
    assert c.holds is True, c.measured


@pytest.mark.parametrize("cruder", ["refined1", "banerjee"])
def test_fig5_fails_for_the_cruder_closed_form(cruder):
    """psi~'_1 or Banerjee's form in place of psi~'_2: far more than 10x root finding's error at d = 50,000."""
    c = claims.check_fig5(_fig5_table(closed_form=cruder), S_FIG5, "test")
    assert c.holds is False, c.measured


# ------------------------------------------------------------------ Tab. 1: the data sets
def _tab1(**override):
    rows = {"classic3": (3, 3891, 4675, 3, 3891, 4674), "classic300": (3, 300, 2457, 3, 300, 2551),
            "news20": (20, 18739, 28521, 20, 18803, 28571), "news20_small": (20, 1998, 17260, 20, 2000, 16218)}
    rows.update(override)
    return pd.DataFrame([{"dataset": k, "classes": v[0], "n_docs": v[1], "n_terms": v[2], "paper_classes": v[3],
                          "paper_docs": v[4], "paper_terms": v[5]} for k, v in rows.items()])


S_TAB1 = {"datasets": ["classic3", "classic300", "news20", "news20_small"]}


def test_tab1_corpora_as_built_are_undecided_on_news20_small_terms():
    """As built (data seed 0): every count within 10% of the paper's, but news20-small's vocabulary (17,260 vs
    16,218: 6.4% off) depends on its random 100-per-class subsample, whose term count moves by 589 (3.6% of the
    paper's) between data seeds (sd of 10 data seeds: 9 df, a band of Student's t, 2.32 sds): within its band of
    the 10% bound, so undecided; the rest holds."""
    c = claims.check_tab1(_tab1(), S_TAB1, "test")
    ev = {e.name.split(":")[0]: e for e in c.evidence}
    assert ev["class counts"].verdict == "holds" and ev["documents"].verdict == "holds"
    assert ev["terms"].verdict == "undecided" and "news20_small" in ev["terms"].name and c.verdict == "undecided"
    assert ev["terms"].margin == pytest.approx(0.1 - 1042 / 16218)
    assert ev["terms"].sd == pytest.approx(claims.TAB1_SUBSAMPLE_SD["news20_small"]["n_terms"] / 16218)
    assert ev["terms"].df == claims.TAB1_SUBSAMPLE_DF == 9 and ev["class counts"].df is None


def test_tab1_whole_corpora_close_to_the_paper_hold():
    """classic3 and news20 alone (whole corpora, no subsample: sd 0) within 10%: holds."""
    t = _tab1()
    c = claims.check_tab1(t[t.dataset.isin(["classic3", "news20"])].reset_index(drop=True), S_TAB1, "test")
    assert c.verdict == "holds" and all(e.sd == 0 and e.df is None for e in c.evidence)


@pytest.mark.parametrize("wrong", [{"news20": (20, 11314, 28521, 20, 18803, 28571)},
                                   {"news20": (20, 18739, 61188, 20, 18803, 28571)},
                                   {"classic3": (4, 7095, 4675, 3, 3891, 4674)}],
                         ids=["train_split_only", "no_document_frequency_pruning", "cisi_kept_as_a_fourth_class"])
def test_tab1_fails_for_a_wrongly_built_corpus(wrong):
    assert claims.check_tab1(_tab1(**wrong), S_TAB1, "test").verdict == "fails"


# ------------------------------------------------------------------ Fig. 3: an sd from two seeds has one df
def test_fig3_two_seed_margin_of_5_sds_is_undecided_by_hand():
    """One cell, two seeds (initialisations): the closed forms' fit disagrees with movMF's on x = 0.02 / 3.5 of the
    documents in seed 0 and on none in seed 1. The worst cell, x, is 0.02 - x = 0.0143 below the 0.02 tolerance;
    the leave-one-seed-out jackknife of that maximum gives sd = x / 2 = 0.0029, so the margin is 5 sds, with 1
    df (2 seeds). The normal band (2 sds) would pass it; Student's t band at 1 df, 13.97 sds = 0.040, leaves it
    undecided. The NMI and log-likelihood parts, equal in both seeds (sd 0), hold."""
    x = 0.02 / 3.5
    rows = [{"dataset": "toy", "K": 2, "assignment": "soft", "tied": False, "seed": s, "parametrization": p,
             "nmi": 0.8, "label_disagreement": (x if s == 0 else 0.0) if p == "mean" else np.nan,
             "exact_ll_diff": 0.0 if p == "mean" else np.nan}
            for s in (0, 1) for p in ("mean", "natural")]
    ev = {e.name.split(":")[0]: e for e in claims.fig3_evidence(pd.DataFrame(rows))}
    e = ev["label disagreement"]
    assert e.margin == pytest.approx(0.02 - x) and e.sd == pytest.approx(x / 2) and e.margin == pytest.approx(5 * e.sd)
    assert e.df == 1 and e.band == pytest.approx(13.97 * x / 2, rel=1e-3) and e.verdict == "undecided"
    assert e.sd_from == "leave-one-seed-out jackknife over the 2 seeds, 1 df"
    assert claims.Evidence(e.name, e.margin, e.sd, e.sd_from).verdict == "holds"  # the normal band, df unstated
    assert ev["|delta NMI| of the seed means"].verdict == "holds" and ev["|delta exact LL| per document (nats)"].verdict == "holds"
