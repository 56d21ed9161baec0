"""Data of the SGNHT paper (Ding et al. 2014) as used here: the synthetic data of Sec. 5.1 and the
stand-ins for the data sets of Sec. 5.2 that are not available (README.md beside this file gives why).

* :func:`gaussian_data` -- x_i ~ N(0, 1), i = 1..N (Sec. 5.1; the paper states no seed).
* :func:`split_mnist` -- MNIST: the mirror holds only the 10,000 t10k images, split here into
  train/validation/test (paper: 50,000 / 10,000 / 10,000).
* :func:`split_ratings` -- MovieLens ml-100k standing in for ml-1m: 80/20 train/test as in the paper,
  and a validation share of the training part (paper: 5-fold cross-validation on the 80%).
* :func:`split_lda_corpus` -- KOS (or OHSUMED) documents standing in for the 765 ICML abstracts: the
  first ``max_train_docs`` of the processed corpus' train split, and its first ``max_test_docs`` test
  documents halved into validation and test.

Every split is a fixed function of its seed (0 in the pipeline), the same for every chain.
"""

from __future__ import annotations

import numpy as np


#: The paper's training-set sizes of the ML tasks (Sec. 5.2), in the unit the runs count: the eta grid is
#: rescaled by N_paper / N_here (``eta_scale: auto``) and the claims' scale strings compare the sizes. ICML
#: abstracts: 765 documents, ~2K words, ~44K tokens, 80% for training.
PAPER_TRAIN_SIZE = {
    "bnn": (50_000, "training images (MNIST 50k/10k/10k)"),
    "bpmf": (800_167, "training ratings (80% of ml-1m's 1,000,209)"),
    "lda": (35_200, "training tokens (80% of the ICML abstracts' ~44K)"),
}


def gaussian_data(data_seed: int, n: int = 100):
    """x_i ~ N(0, 1), i = 1..n (the paper's synthetic data; the seed is ours)."""
    return np.random.default_rng(data_seed).standard_normal(n)


def split_mnist(images, labels, n_train: int, n_val: int, seed: int = 0):
    """Split the 10,000 MNIST test images (the mirror lacks the training images) into train/val/test.

    Pixels scaled to [0, 1]; the split is a seeded permutation, fixed across chains.
    """
    X = np.asarray(images, dtype=np.float64).reshape(len(images), -1) / 255.0
    y = np.asarray(labels, dtype=np.int64)
    if n_train + n_val >= len(y):
        raise ValueError(f"split_mnist: n_train + n_val = {n_train + n_val} leaves no test images out of {len(y)}")
    perm = np.random.default_rng(seed).permutation(len(y))
    tr, va, te = perm[:n_train], perm[n_train:n_train + n_val], perm[n_train + n_val:]
    return (X[tr], y[tr]), (X[va], y[va]), (X[te], y[te])


def split_ratings(df, test_frac: float = 0.2, val_frac: float = 0.1, seed: int = 0):
    """80/20 train/test split of a ratings table, and a validation share of the training part."""
    n = len(df)
    perm = np.random.default_rng(seed).permutation(n)
    n_test = int(round(test_frac * n))
    test, train = perm[:n_test], perm[n_test:]
    n_val = int(round(val_frac * len(train)))
    return df.iloc[train[n_val:]], df.iloc[train[:n_val]], df.iloc[test]


def split_lda_corpus(corpus, max_train_docs: int, max_test_docs: int):
    """(train, validation, test) count matrices (CSR, documents x words) of a processed corpus.

    Train: the first ``max_train_docs`` documents of the corpus' train split; the first
    ``max_test_docs`` documents of its test split are halved into validation and test.
    """
    split = corpus.split
    tr_idx = np.flatnonzero(split == "train")[:max_train_docs]
    te_idx = np.flatnonzero(split == "test")[:max_test_docs]
    counts = corpus.counts.tocsr()
    half = len(te_idx) // 2
    return counts[tr_idx], counts[te_idx[:half]], counts[te_idx[half:]]
