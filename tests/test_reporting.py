"""scalable_bayes.reporting: a claim file says where a failing claim's deciding experiment is, and only then."""

import json
import math

from scalable_bayes.reporting import Claim, read_claims, write_claim


def _claim(holds, note="n."):
    return Claim(id="X-Fig1", paper="x", claim="c", measured="m", holds=holds, scale="smoke", note=note,
                 if_fails="See the study.")


def test_if_fails_joins_the_note_only_when_the_claim_fails(tmp_path):
    assert _claim(False).as_dict()["note"] == "n. See the study."
    assert _claim(False, note=None).as_dict()["note"] == "See the study."
    assert _claim(True).as_dict()["note"] == "n." and _claim(None).as_dict()["note"] == "n."
    for holds in (True, False, None):
        write_claim(tmp_path / f"{holds}.json", _claim(holds))
        c = json.loads((tmp_path / f"{holds}.json").read_text())
        assert "if_fails" not in c and c["note"].endswith("See the study.") == (holds is False)
    assert len(read_claims(sorted(tmp_path.glob("*.json")))) == 3


# ---------------------------------------------------------------- verdicts with the run-to-run spread

import pytest  # noqa: E402

from scalable_bayes.reporting import Evidence, Z_SPREAD, collect_claims, combine_verdicts  # noqa: E402


@pytest.mark.parametrize("margin, sd, verdict", [
    (0.5, 0.1, "holds"), (-0.5, 0.1, "fails"), (0.15, 0.1, "undecided"), (-0.15, 0.1, "undecided"),
    (1e-12, 0.0, "holds"), (-1e-12, 0.0, "fails"),
])
def test_evidence_verdict_is_the_margin_against_two_run_to_run_sds(margin, sd, verdict):
    assert Z_SPREAD == 2.0
    assert Evidence("gap (nats)", margin, sd, "seeds").verdict == verdict


def test_a_claim_holds_only_if_every_comparison_holds_and_fails_if_one_fails():
    assert combine_verdicts(["holds", "holds"]) == "holds"
    assert combine_verdicts(["holds", "undecided"]) == "undecided"
    assert combine_verdicts(["undecided", "fails", "holds"]) == "fails"
    assert combine_verdicts([]) == "not checked"
    with pytest.raises(ValueError, match="unknown verdicts"):
        combine_verdicts(["maybe"])


def _ev_claim(*margins, holds=None):
    return Claim(id="X-Fig2", paper="x", claim="c", measured="m", holds=holds, scale="quick",
                 evidence=tuple(Evidence(f"e{i}", m, 0.1, "two seed sets") for i, m in enumerate(margins)),
                 if_fails="See the study.")


def test_evidence_decides_the_claim_and_a_contradicting_holds_is_an_error(tmp_path):
    assert (_ev_claim(1.0).verdict, _ev_claim(1.0).holds) == ("holds", True)
    assert (_ev_claim(1.0, -1.0).verdict, _ev_claim(1.0, -1.0).holds) == ("fails", False)
    assert (_ev_claim(1.0, 0.1).verdict, _ev_claim(1.0, 0.1).holds) == ("undecided", None)
    assert _ev_claim(1.0, holds=True).verdict == "holds"
    with pytest.raises(ValueError, match="contradicts its evidence"):
        _ev_claim(0.1, holds=True)
    with pytest.raises(ValueError, match="margin is NaN"):
        Evidence("x", float("nan"), 0.1, "seeds")
    with pytest.raises(ValueError, match="sd must be finite"):
        Evidence("x", 1.0, -0.1, "seeds")
    # an undecided claim says where its deciding experiment is, as a failing one does
    assert _ev_claim(0.1).as_dict()["note"] == "See the study."
    # the claim file and the claims table carry the verdict and the margins
    for i, ms in enumerate([(1.0,), (1.0, -1.0), (0.1,)]):
        c = write_claim(tmp_path / f"c{i}.json", _ev_claim(*ms))
        assert c["verdict"] == ["holds", "fails", "undecided"][i]
        assert [e["margin"] for e in c["evidence"]] == list(ms)
    write_claim(tmp_path / "old.json", id="X-Tab1", paper="x", claim="c", measured="m", holds=None, scale="quick")
    df = collect_claims(sorted(tmp_path.glob("*.json")), tmp_path / "claims.md", "quick")
    md = (tmp_path / "claims.md").read_text()
    assert "4 claims, 1 hold, 1 do not hold, 1 undecided at this scale, 1 not checked" in md
    assert "*undecided at this scale* (e0: 0.1 ± 0.2)" in md
    assert sorted(df["verdict"]) == ["fails", "holds", "not checked", "undecided"]


def test_claim_files_without_a_verdict_key_are_read_as_two_valued(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps(dict(id="X-Fig1", paper="x", claim="c", measured="m", holds=False,
                                                     scale="quick")))
    assert read_claims([tmp_path / "a.json"])["verdict"].tolist() == ["fails"]


@pytest.mark.parametrize("df", [1, 2, 4, 9, 50])
def test_band_factor_is_students_t_at_the_coverage_of_two_normal_sds(df):
    from scipy import stats

    from scalable_bayes.reporting import BAND_COVERAGE, band_factor

    assert BAND_COVERAGE == pytest.approx(stats.norm.cdf(2) - stats.norm.cdf(-2), rel=1e-12)
    assert band_factor(df) == pytest.approx(stats.t.ppf(0.5 + BAND_COVERAGE / 2, df), rel=1e-9)
    assert band_factor(df) > Z_SPREAD
    assert band_factor(None) == band_factor(float("inf")) == Z_SPREAD


def test_an_sd_from_two_seeds_needs_a_t_band_and_the_claim_file_keeps_its_df(tmp_path):
    # a margin of 5 sds decides with a well-known sd, not with an sd estimated from two seeds (t, 1 df: 13.97)
    assert Evidence("gap", 0.5, 0.1, "many values").verdict == "holds"
    two = Evidence("gap", 0.5, 0.1, "sd of 2 seeds / sqrt(2)", df=1)
    assert two.verdict == "undecided" and two.band == pytest.approx(1.3968, rel=1e-4)
    assert Evidence("gap", -1.5, 0.1, "sd of 2 seeds / sqrt(2)", df=1).verdict == "fails"
    assert Evidence("gap", 0.3, 0.1, "sd of 5 seeds / sqrt(5)", df=4).verdict == "holds"  # 3 > 2.87
    assert Evidence("gap", 0.28, 0.1, "sd of 5 seeds / sqrt(5)", df=4).verdict == "undecided"
    p = tmp_path / "X.json"
    write_claim(p, id="X", paper="x", claim="c", measured="m", holds=None, scale="s", evidence=[two])
    c = json.loads(p.read_text())
    assert c["verdict"] == "undecided" and c["evidence"][0]["df"] == 1 and c["evidence"][0]["band"] > 1.39
    assert c["evidence"][0]["clock"] is False
    for bad in (0, -1, float("nan")):
        with pytest.raises(ValueError, match="df must be > 0"):
            Evidence("gap", 0.5, 0.1, "x", df=bad)


def test_welch_degrees_of_freedom_of_a_difference():
    from scalable_bayes.reporting import welch_df

    assert welch_df(0.1, 1, 0.1, 1) == pytest.approx(2.0)
    assert welch_df(0.3, 4, 0.0, None) == pytest.approx(4.0)
    assert welch_df(0.1, None, 0.2, None) is None
    assert welch_df(0.0, 3, 0.0, 3) is None


def test_clearance_is_the_margin_over_its_band():
    from scalable_bayes.reporting import band_factor, clearance

    assert clearance(0.3, 0.1) == pytest.approx(1.5)
    assert clearance(0.3, 0.1, 4) == pytest.approx(3.0 / band_factor(4))
    assert clearance(-0.2, 0.0) == -math.inf and clearance(0.2, 0.0) == math.inf and clearance(0.0, 0.0) == 0.0
    e = Evidence("gap", 0.5, 0.1, "sd of 2 seeds / sqrt(2)", df=1)
    assert e.clearance == pytest.approx(e.margin / e.band) and -1 < e.clearance < 1 and e.verdict == "undecided"
