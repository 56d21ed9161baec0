"""ESCA Fig. 5 / Fig. 6 claims: the words they test (issue 17, item 4)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from scalable_bayes_papers.esca import claims


def _fig6_frame(sca_excess=0.0, sca_slowdown=3.0):
    rows = []
    for K, b in [(100, 0.1), (20, 0.1), (100, 0.5)]:
        for method, slow, excess in [("CGS", 1.0, 0.0), ("ESCA_plain", sca_slowdown, sca_excess), ("CVB0", 1.2, 0.0)]:
            for it in range(0, 31, 5):
                ll = -7.0 - 1.5 * np.exp(-it / 6) - np.log1p(excess)
                rows.append({"train_corpus": "a", "test_corpus": "b", "method": method, "n_topics": K, "beta": b,
                             "seed": 0, "iteration": it, "heldout_ll": ll, "cpu_time": 0.1 * slow * it,
                             "wall_time": 0.12 * slow * it})
    return pd.DataFrame(rows)


FIG6 = {"rel_tol": 0.05, "run": {"n_topics": 100, "beta": 0.1}}


def test_fig6_claim_is_perplexity_only_and_reports_the_time_panel():
    slow = claims.check_fig6(_fig6_frame(0.0, sca_slowdown=3.0), FIG6, "test")
    assert slow.holds is True  # 3x slower SCA: the claim makes no timed statement (the paper's caption: "slower")
    assert "wall time" not in slow.claim.split("(")[0] and "hence slower" in slow.claim
    tp = slow.details["a->b"]["time_panel"]
    assert tp["clock"] == "cpu_time" and tp["time_to_target_s"]["ESCA_plain"] > 2.5 * tp["time_to_target_s"]["CGS"]
    assert "time panel (K = 100, beta = 0.1, not tested)" in slow.measured
    assert claims.check_fig6(_fig6_frame(0.08), FIG6, "test").holds is False  # 8% above CGS's perplexity


def test_fig5_claim_states_no_speed_factor_and_reports_per_seed_ratios():
    rows = []
    for method, sec in [("ESCA", 0.1), ("ESCA_plain", 0.25)]:
        for s in (0, 1, 2):
            for it in range(0, 16, 3):
                rows.append({"method": method, "seed": s, "iteration": it, "n_topics": 100, "train_corpus": "r",
                             "n_tokens": 1000, "heldout_ll": -8.0 + 0.01 * it + 0.001 * s,
                             "wall_time": sec * it * (1 + 0.1 * s)})
    c = claims.check_fig5(pd.DataFrame(rows), {}, "test")
    assert c.holds is True and "much" not in c.claim and "no speed-up factor" in c.claim
    assert c.details[100]["speedup"] == 2.5 and "per seed 2.50-2.50x" in c.measured
    rows = [dict(r, wall_time=r["wall_time"] * (3 if r["method"] == "ESCA" else 1)) for r in rows]
    assert claims.check_fig5(pd.DataFrame(rows), {}, "test").holds is False  # sparse slower: fails
