"""A tiny, fast run of the SCIR Fig. 3a deciding-experiment functions (scalable_bayes_papers.scir.study)."""

import numpy as np
import pandas as pd

from scalable_bayes_papers.scir import study


def test_synthetic_part_tiny(tmp_path):
    study.part_synthetic(tmp_path, vocab_sizes=(300,), seeds=(0,), n_iter=30, grid={"SCIR": (0.2,), "SGRLD": (0.02,)},
                         cgs_iter=10)
    df = pd.read_csv(tmp_path / "synthetic.csv")
    assert set(df["method"]) == {"true", "CGS", "SCIR", "SGRLD"}
    assert np.isfinite(df["perplexity"]).all() and (df["perplexity"] > 1).all()
    true = df[df["method"] == "true"].iloc[0]
    assert true["l1"] == 0 and true["offsupport_mass"] < 1e-3


def test_pieces():
    train, test, topics = study.synthetic_corpus(n_topics=3, n_words=50, n_train=40, n_test=10, doc_len=20, seed=1)
    assert train.shape == (40, 50) and test.shape[1] == 50 and np.allclose(topics.sum(axis=1), 1)
    a, b = study.restrict_vocab(train, test, 10)
    assert a.shape[1] == b.shape[1] == 10
    s = study.smoothed(topics, 1e-3)
    assert np.allclose(s.sum(axis=1), 1) and s.min() > 0
    rec = study.topic_recovery(topics[::-1], topics)
    assert rec["l1"] < 1e-12  # matching undoes the permutation
    tr, theta, pi, avg, lda = study.sg_chain("SCIR", train, test, 3, 0.1, 0.05, 0.2, 20, batch=10, score_every=10,
                                             avg_iters=10, avg_every=5)
    assert [r["iteration"] for r in tr] == [10, 20] and pi.shape == avg.shape == (3, 50)
    fl = study.zero_count_floor(lda, theta)
    assert 0 <= fl["zero_frac"] <= 1 and fl["zero_theta_mean_over_beta"] >= 0
