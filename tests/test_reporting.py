"""scalable_bayes.reporting: a claim file says where a failing claim's deciding experiment is, and only then."""

import json

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
