"""The ESCA paper's stand-in data: the synthetic Gaussian mixture of Fig. 3 and the document sets of
the LDA runs (training subsample, held-out documents, cross-corpus vocabulary mapping).

README.md beside this file gives the reasons for each choice.
"""

from __future__ import annotations

import numpy as np

from scalable_bayes.corpora import align_vocabulary, subsample_rows
from scalable_bayes.inference.gmm_sem import GMMParams

# Seeds of the document subsamples: fixed, so that every engine and every seed of a figure sees the
# same training and held-out documents. A replication (config seed_offset) adds its offset to both.
TRAIN_SUBSAMPLE_SEED = 12345
HELDOUT_SUBSAMPLE_SEED = 54321


def make_gmm_data(n_components=30, n_train=100_000, n_test=1_000, dim=2, seed=0):
    """Fig. 3's synthetic mixture (App. A states K = 30, 2-D, 100,000 train / 1,000 test points, not the
    generating parameters): means U([-20, 20]^d), Sigma_k = diag(U(0.5, 2)^2), weights Dir(5 * 1).
    Returns (X_train, X_test, true GMMParams)."""
    rng = np.random.default_rng(seed)
    K = n_components
    means = rng.uniform(-20, 20, size=(K, dim))
    sd = rng.uniform(0.5, 2.0, size=(K, dim))
    covs = np.stack([np.diag(s**2) for s in sd])
    w = rng.dirichlet(np.full(K, 5.0))
    true = GMMParams(w, means, covs)

    def draw(n):
        z = rng.choice(K, size=n, p=w)
        return means[z] + rng.standard_normal((n, dim)) * sd[z]

    return draw(n_train), draw(n_test), true


def training_docs(corpus, max_docs, seed_offset=0):
    """The training documents of a run: the train split of ``corpus``, subsampled to ``max_docs``
    (None = all) with the fixed seed :data:`TRAIN_SUBSAMPLE_SEED` (+ ``seed_offset`` in a replication)."""
    return subsample_rows(corpus.subset("train").counts, max_docs, TRAIN_SUBSAMPLE_SEED + int(seed_offset))


def heldout_split(train_corpus, test_corpus, max_test_docs, seed):
    """Held-out documents: the test split of ``test_corpus`` in the vocabulary of ``train_corpus``
    (identity when both are the same corpus; App. G cross-corpus otherwise: out-of-vocabulary tokens
    dropped), documents of at least 2 tokens, seeded subsample. Returns (X_test, dropped tokens)."""
    Xte = test_corpus.subset("test").counts
    dropped = 0
    if list(test_corpus.vocab) != list(train_corpus.vocab):
        Xte, dropped = align_vocabulary(Xte, test_corpus.vocab, train_corpus.vocab)
    lens = np.asarray(Xte.sum(axis=1)).ravel()
    Xte = Xte[np.flatnonzero(lens >= 2)]
    return subsample_rows(Xte, max_test_docs, seed), dropped


def heldout_docs(train_corpus, test_corpus, max_docs, seed_offset=0):
    """The held-out documents of a run: :func:`heldout_split` with the fixed seed
    :data:`HELDOUT_SUBSAMPLE_SEED` (+ ``seed_offset`` in a replication)."""
    return heldout_split(train_corpus, test_corpus, max_docs, HELDOUT_SUBSAMPLE_SEED + int(seed_offset))
