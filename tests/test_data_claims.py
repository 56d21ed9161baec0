"""DATA-Tab (the dataset table's claim) fed a right and a deliberately wrong table: the wrong one must fail."""

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
    assert check_datasets(_table(), "test").holds is True


@pytest.mark.parametrize("wrong", [{"news20": 11314}, {"msweb": 32711}, {"kos": 3300}, {"classic3": 3800}],
                         ids=["news20_train_split_only", "msweb_training_users_only", "kos_short_documents_dropped",
                              "classic3_two_percent_lost"])
def test_datasets_fail_when_a_papers_own_corpus_is_built_wrongly(wrong):
    c = check_datasets(_table(**wrong), "test")
    assert c.holds is False, c.measured


def test_stand_ins_are_listed_not_compared_and_an_empty_table_is_not_checked():
    assert check_datasets(_table(wikipedia=10), "test").holds is True
    t = _table()
    assert check_datasets(t[t.stand_in], "test").holds is None
