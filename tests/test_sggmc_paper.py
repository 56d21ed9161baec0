"""SGGMC paper folder (scalable_bayes_papers.sggmc): the static items render, their claims are what the spec
says, and the App. D check can fail."""

from __future__ import annotations

import math

import pytest

from scalable_bayes_papers.sggmc import claims, figures, static, tables


@pytest.mark.parametrize("item", sorted(figures.STATIC_FIGURES))
def test_static_figures_render(tmp_path, item):
    out = tmp_path / f"{item}.png"
    figures.STATIC_FIGURES[item](out)
    assert out.stat().st_size > 5000 and out.with_suffix(".pdf").exists()
    c = getattr(claims, f"check_{item.lower()}")("smoke")
    assert c.id == f"SGGMC-{item}" and c.paper == "sggmc"


def test_tab1_is_the_spec():
    t = tables.tab1()
    assert t.shape == (8, 5)
    ours = t[t["methods"].str.contains("proposed")].iloc[0]
    assert list(ours[1:]) == ["✓", "✓", "✓", "2nd"]
    c = claims.check_tab1(t, "smoke")
    assert c.holds is None and "proposed row" in c.measured


def test_appd_modes_are_the_papers():
    m = static.appd_modes()
    assert m["mu_g"] == pytest.approx(math.pi / 24)
    assert m["mode2"] == pytest.approx((math.pi / 24, -math.pi / 8))
    assert claims.check_sfig1("smoke").holds is True


def test_sfig1_claim_can_fail():
    bad = static.appd_modes(-math.pi / 24, math.pi / 6)  # other generating values: other modes
    assert claims.check_sfig1("smoke", bad).holds is False
