"""tools/compare_claims.py: the verdicts of two runs (a run and its replication) side by side.

Synthetic claim files in two run directories cover each case: the same verdict, a hard flip (holds <->
fails), a soft flip (any other change), a claim one run lacks, an evidence item whose two margins differ by
more than 2 sqrt(sd_A^2 + sd_B^2) (the runs' own sd understated) and one within it, an evidence item one run
lacks, claim files of the format before the three verdicts (no verdict, no evidence), and bad input.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from scalable_bayes.reporting import (
    ClaimRunError,
    Evidence,
    claim_files_of,
    compare_claim_runs,
    comparison_markdown,
    comparison_summary,
    verdict_change,
    write_claim,
)

REPO = Path(__file__).resolve().parents[1]
TOOL = REPO / "tools" / "compare_claims.py"
sys.path.insert(0, str(REPO / "tools"))
import compare_claims  # noqa: E402


def _claim(run: Path, cid: str, *evidence: Evidence, holds=None, paper="sgnht"):
    write_claim(run / "results" / paper / "claims" / f"{cid}.json", id=cid, paper=paper, claim="a claim",
                measured="numbers", holds=holds, scale="quick", evidence=evidence)


def _old_claim(run: Path, cid: str, holds, paper="vmf"):
    """A claim file as written before the three verdicts: no verdict, no evidence."""
    p = run / "results" / paper / "claims" / f"{cid}.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps({"id": cid, "paper": paper, "claim": "c", "measured": "m", "holds": holds,
                             "scale": "quick"}))


@pytest.fixture
def runs(tmp_path):
    a, b = tmp_path / "run_a", tmp_path / "run_b"
    # same verdict (holds, holds); evidence within the two runs' spread
    _claim(a, "SGNHT-Same", Evidence("gap (nats)", 1.0, 0.1, "seeds"))
    _claim(b, "SGNHT-Same", Evidence("gap (nats)", 1.2, 0.1, "seeds"))
    # hard flip: holds in A, fails in B; the margins differ by 2.0 against 2 sqrt(0.1^2 + 0.1^2) = 0.283
    _claim(a, "SGNHT-Hard", Evidence("ratio - 1", 1.0, 0.1, "seeds"))
    _claim(b, "SGNHT-Hard", Evidence("ratio - 1", -1.0, 0.1, "seeds"))
    # soft flip: holds in A, undecided in B (margin within 2 sd)
    _claim(a, "SGNHT-Soft", Evidence("ordering", 0.5, 0.2, "seeds"), Evidence("floor", 3.0, 0.0, "deterministic"))
    _claim(b, "SGNHT-Soft", Evidence("ordering", 0.3, 0.2, "seeds"), Evidence("floor", 3.0, 0.0, "deterministic"))
    # evidence one run lacks; same verdict
    _claim(a, "SGNHT-Part", Evidence("part 1", 1.0, 0.1, "seeds"), Evidence("part 2", 2.0, 0.1, "seeds"))
    _claim(b, "SGNHT-Part", Evidence("part 1", 1.1, 0.1, "seeds"))
    # claims one run lacks
    _claim(a, "SGNHT-OnlyA", holds=True)
    _claim(b, "SGNHT-OnlyB", holds=False)
    # old format in both (no evidence), holds in both; and a static item
    _old_claim(a, "VMF-Old", True)
    _old_claim(b, "VMF-Old", True)
    _old_claim(a, "VMF-Static", None)
    _old_claim(b, "VMF-Static", None)
    return a, b


def _row(df, cid, evidence=None):
    sub = df[df["id"] == cid]
    if evidence is not None:
        sub = sub[sub["evidence"] == evidence]
    assert len(sub) == 1, (cid, evidence, sub)
    return sub.iloc[0]


def test_verdict_change():
    assert verdict_change("holds", "holds") == ""
    assert verdict_change("holds", "fails") == verdict_change("fails", "holds") == "hard flip"
    for a, b in [("holds", "undecided"), ("fails", "undecided"), ("undecided", "not checked"),
                 ("holds", "not checked")]:
        assert verdict_change(a, b) == verdict_change(b, a) == "soft flip"
    assert verdict_change("holds", None) == "only in A" and verdict_change(None, "fails") == "only in B"


def test_each_case_is_found(runs):
    df = compare_claim_runs(*runs)
    assert _row(df, "SGNHT-Same")["change"] == ""
    hard = _row(df, "SGNHT-Hard")
    assert (hard["verdict_a"], hard["verdict_b"], hard["change"]) == ("holds", "fails", "hard flip")
    soft = df[df["id"] == "SGNHT-Soft"]
    assert set(soft["change"]) == {"soft flip"} and set(soft["verdict_b"]) == {"undecided"}
    assert _row(df, "SGNHT-OnlyA")["change"] == "only in A"
    assert _row(df, "SGNHT-OnlyB")["change"] == "only in B"
    assert _row(df, "VMF-Old")["verdict_a"] == "holds" and _row(df, "VMF-Old")["change"] == ""
    assert _row(df, "VMF-Static")["verdict_a"] == "not checked" and _row(df, "VMF-Static")["change"] == ""
    assert _row(df, "SGNHT-Part", "part 2")["evidence_change"] == "only in A"
    assert _row(df, "SGNHT-Part", "part 1")["evidence_change"] == ""
    s = comparison_summary(df)
    assert s == {"claims": 8, "same": 4, "hard_flips": 1, "soft_flips": 1, "only_a": 1, "only_b": 1,
                 "sd_understated": 1, "differs": True}


def test_margins_sds_and_the_sd_from_two_runs_by_hand(runs):
    df = compare_claim_runs(*runs)
    same = _row(df, "SGNHT-Same", "gap (nats)")
    assert (same["margin_a"], same["margin_b"], same["sd_a"], same["sd_b"]) == (1.0, 1.2, 0.1, 0.1)
    assert same["sd_two_runs"] == pytest.approx(0.2 / math.sqrt(2))
    assert not same["sd_understated"]  # |1.0 - 1.2| = 0.2 < 2 sqrt(0.02) = 0.283
    hard = _row(df, "SGNHT-Hard", "ratio - 1")
    assert hard["sd_two_runs"] == pytest.approx(2.0 / math.sqrt(2))
    assert hard["sd_understated"]  # 2.0 > 0.283
    floor = _row(df, "SGNHT-Soft", "floor")  # deterministic and equal: no spread, not flagged
    assert floor["sd_two_runs"] == 0.0 and not floor["sd_understated"]
    assert not _row(df, "SGNHT-Soft", "ordering")["sd_understated"]  # 0.2 < 2 sqrt(0.08) = 0.566
    part2 = _row(df, "SGNHT-Part", "part 2")
    assert math.isnan(part2["margin_b"]) and math.isnan(part2["sd_two_runs"]) and not part2["sd_understated"]


def test_a_deterministic_margin_that_moves_is_flagged(tmp_path):
    """sd 0 claims the comparison has no randomness: two runs that differ show that it has."""
    a, b = tmp_path / "a", tmp_path / "b"
    _claim(a, "SGNHT-Det", Evidence("identity", 1.0, 0.0, "deterministic"))
    _claim(b, "SGNHT-Det", Evidence("identity", 1.5, 0.0, "deterministic"))
    row = _row(compare_claim_runs(a, b), "SGNHT-Det", "identity")
    assert row["sd_understated"] and row["change"] == ""


def test_the_markdown_shows_every_case(runs):
    text = comparison_markdown(compare_claim_runs(*runs), "run_a", "run_b")
    assert "**hard flip** SGNHT-Hard: holds -> fails" in text
    assert "**soft flip** SGNHT-Soft: holds -> undecided" in text
    assert "**only in A** SGNHT-OnlyA: holds -> -" in text and "**only in B** SGNHT-OnlyB: - -> fails" in text
    assert "**sd understated** SGNHT-Hard / ratio - 1" in text
    assert "## sgnht" in text and "## vmf" in text
    line = next(ln for ln in text.splitlines() if ln.startswith("| SGNHT-Same"))
    assert "| holds | holds |" in line and "| 1 | 1.2 | 0.1 | 0.1 | 0.141 |" in line


def test_a_results_directory_is_a_run(runs):
    a, b = runs
    assert compare_claim_runs(a / "results", b).equals(compare_claim_runs(a, b))
    assert len(claim_files_of(a / "results")) == len(claim_files_of(a)) == 7


def test_exit_status_and_markdown_file(runs, tmp_path, capsys):
    a, b = runs
    out = tmp_path / "cmp" / "replication.md"
    assert compare_claims.main([str(a), str(b), "--markdown", str(out)]) == 1
    printed = capsys.readouterr().out
    assert out.read_text().strip() == printed.strip() and "hard flip" in printed
    assert compare_claims.main([str(a), str(a)]) == 0
    assert "7 claims: 7 with the same verdict" in capsys.readouterr().out
    assert compare_claims.main([str(b), str(b / "results")]) == 0


@pytest.mark.parametrize("case", ["missing", "empty", "bad_json", "lacks_keys", "duplicate"])
def test_bad_input_exits_2_naming_what_is_wrong(runs, tmp_path, case, capsys):
    a, _ = runs
    bad = tmp_path / "bad"
    if case == "missing":
        word = str(bad)
    elif case == "empty":
        (bad / "results" / "vmf").mkdir(parents=True)
        word = "no claim files"
    elif case == "bad_json":
        p = bad / "results" / "vmf" / "claims" / "VMF-X.json"
        p.parent.mkdir(parents=True)
        p.write_text("{not json")
        word = "VMF-X.json cannot be read"
    elif case == "lacks_keys":
        p = bad / "results" / "vmf" / "claims" / "VMF-X.json"
        p.parent.mkdir(parents=True)
        p.write_text(json.dumps({"id": "VMF-X"}))
        word = "VMF-X.json"
    else:
        _old_claim(bad, "VMF-X", True, paper="vmf")
        _old_claim(bad, "VMF-X", True, paper="esca")
        word = "more than one claim file"
    with pytest.raises(ClaimRunError, match="bad"):
        compare_claim_runs(a, bad)
    assert compare_claims.main([str(a), str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("compare_claims: error:") and word in err and str(bad) in err


def test_the_script_runs_with_its_exit_status(runs):
    a, b = runs
    proc = subprocess.run([sys.executable, str(TOOL), str(a), str(b)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "hard flip" in proc.stdout
    proc = subprocess.run([sys.executable, str(TOOL), str(a), str(a / "nope")], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2 and "nope: no such directory" in proc.stderr
