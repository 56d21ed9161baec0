"""DATA-Tab (the dataset table's claim) fed a right and a deliberately wrong table: the wrong one must fail.
Every comparison is deterministic (a document count), so its sd is 0 and only a count exactly on the 1% edge is
undecided."""

from __future__ import annotations

import pandas as pd
import pytest

from scalable_bayes_papers.data.claims import check_datasets


def _table(**docs):
    """The dataset table's columns the check reads (corpus, stand_in, documents, paper_documents): the papers' own
    corpora at counts as the build gives them, and stand-ins without a paper count."""
    rows = [("news20", False, 18739, 18803), ("news20_small", False, 1998, 2000), ("classic3", False, 3891, 3891),
            ("kos", False, 3430, 3430), ("msweb", False, 37711, 37711),
            ("wikipedia", True, 11989, None), ("reuters", True, 20121, None)]
    return pd.DataFrame([{"corpus": c, "stand_in": s, "documents": docs.get(c, n), "paper_documents": p}
                         for c, s, n, p in rows])


def test_datasets_as_built_pass():
    c = check_datasets(_table(), "test")
    assert c.verdict == "holds" and c.holds is True
    assert len(c.evidence) == 5 and all(e.sd == 0 and e.sd_from.startswith("deterministic") for e in c.evidence)


def test_the_margin_is_the_tolerance_minus_the_relative_deviation():
    """news20: |18739 - 18803| / 18803 = 64 / 18803 = 0.3404%, so the margin is 0.01 - 0.003404 = 0.006596."""
    e = {e.name.split(":")[0]: e for e in check_datasets(_table(), "test").evidence}
    assert e["news20"].margin == pytest.approx(0.01 - 64 / 18803, abs=1e-12)
    assert e["classic3"].margin == pytest.approx(0.01)


@pytest.mark.parametrize("wrong", [{"news20": 11314}, {"msweb": 32711}, {"kos": 3300}, {"classic3": 3800}],
                         ids=["news20_train_split_only", "msweb_training_users_only", "kos_short_documents_dropped",
                              "classic3_two_percent_lost"])
def test_datasets_fail_when_a_papers_own_corpus_is_built_wrongly(wrong):
    c = check_datasets(_table(**wrong), "test")
    assert c.verdict == "fails" and c.holds is False, c.measured


def test_a_count_exactly_on_the_tolerance_is_undecided():
    """A built count exactly 1% off the paper's: 3030 documents against a paper count of 3000, 30 / 3000 = 0.01,
    so the margin is 0 and a deterministic comparison (sd 0) cannot decide it."""
    t = _table()
    t.loc[t.corpus == "kos", ["documents", "paper_documents"]] = [3030, 3000]
    c = check_datasets(t, "test")
    kos = [e for e in c.evidence if e.name.startswith("kos")][0]
    assert kos.margin == 0.0 and kos.verdict == "undecided" and c.verdict == "undecided"


def test_stand_ins_are_listed_not_compared_and_an_empty_table_is_not_checked():
    assert check_datasets(_table(wikipedia=10), "test").holds is True
    t = _table()
    c = check_datasets(t[t.stand_in], "test")
    assert c.holds is None and c.verdict == "not checked"
