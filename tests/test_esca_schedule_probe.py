"""The schedule probe of benchmarks/esca_schedule_probe.py: a plain ESCA with document batches (the
paper's Sec. 3.3.1) and three starts. Its counts must be the counts of its assignments after every
batch, and one iteration with one batch must draw from the frozen conditional of eq. 20 (Alg. 1)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import naive_lda as naive

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import esca_schedule_probe as probe  # noqa: E402


def _counts_of(pr, X):
    """(D, W, T) recounted from the probe's assignments z."""
    D = np.zeros_like(pr.D)
    W = np.zeros_like(pr.W)
    t = 0
    for m, toks in enumerate(naive.expand(X)):
        for v in toks:
            D[m, pr.z[t]] += 1
            W[v, pr.z[t]] += 1
            t += 1
    return D, W, W.sum(axis=0)


@pytest.mark.parametrize("init", probe.INITS)
@pytest.mark.parametrize("batches", [1, 3])
def test_counts_are_the_counts_of_the_assignments(init, batches):
    X, _, _ = naive.synthetic_lda(n_docs=40, n_words=30, n_topics=3, doc_len=30, seed=2)
    pr = probe.Probe(X, 5, 0.3, 0.1, batches, init, seed=3)
    assert pr.cuts.size == batches + 1 and pr.cuts[0] == 0 and pr.cuts[-1] == 40
    pr.start()
    for t in (1, 2):
        pr.iterate(t)
        D, W, T = _counts_of(pr, X)
        np.testing.assert_array_equal(pr.D, D)
        np.testing.assert_array_equal(pr.W, W)
        np.testing.assert_array_equal(pr.T, T)
    again = probe.Probe(X, 5, 0.3, 0.1, batches, init, seed=3)
    again.start()
    again.iterate(1)
    again.iterate(2)
    np.testing.assert_array_equal(again.z, pr.z)  # the same draws for a seed


def test_one_batch_draws_from_the_frozen_conditional():
    """z-test: from ONE start state, the topic-word counts after one iteration with B = 1 have the mean
    sum_tokens p(k | D, W, T) of eq. 20 over 300 iteration seeds (|z| < 5 in every cell); a probe that read
    the counts as it changes them (B = number of documents) fails it."""
    X, _, _ = naive.synthetic_lda(n_docs=12, n_words=10, n_topics=3, doc_len=25, alpha=0.5, seed=5)
    K, a, b = 4, 0.4, 0.2

    def sample(batches, seed):
        pr = probe.Probe(X, K, a, b, batches, "uniform", seed=0)
        pr.start()
        D0, W0, T0 = pr.D.astype(float), pr.W.astype(float), pr.T.astype(float)
        pr.seed = seed
        pr.iterate(1)
        return pr.W.astype(float), (D0, W0, T0)

    def zmax(batches):
        draws = []
        for s in range(1, 301):
            W1, start = sample(batches, s)
            draws.append(W1)
        draws = np.array(draws)
        _, expected = naive.esca_expected_next(X, *start, a, b)
        se = draws.std(axis=0, ddof=1) / np.sqrt(len(draws))
        ok = se > 0
        return np.abs((draws.mean(axis=0) - expected)[ok] / se[ok]).max()

    assert zmax(1) < 5
    assert zmax(12) > 5


def test_bad_settings_are_named():
    X, _, _ = naive.synthetic_lda(n_docs=5, n_words=8, n_topics=2, doc_len=10, seed=1)
    with pytest.raises(ValueError, match="init"):
        probe.Probe(X, 3, 0.3, 0.1, 1, "gibbs", 0)
    with pytest.raises(ValueError, match="batches"):
        probe.Probe(X, 3, 0.3, 0.1, 0, "uniform", 0)
