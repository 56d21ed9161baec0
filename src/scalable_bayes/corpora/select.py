"""Parts of a document-term matrix: a seeded subsample of its rows, its columns in another vocabulary."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.sparse as sp

__all__ = ["align_vocabulary", "subsample_rows"]


def align_vocabulary(X, vocab_from: Sequence[str], vocab_to: Sequence[str]) -> tuple[sp.csr_matrix, int]:
    """Re-index the columns of X (vocabulary ``vocab_from``) into ``vocab_to``; out-of-vocabulary
    words are dropped (e.g. to score documents of one corpus under a model of another).

    Parameters
    ----------
    X : array_like or scipy.sparse matrix, shape (n_docs, len(vocab_from))
        Document-term counts in the column order of ``vocab_from``.
    vocab_from : sequence of str
        The vocabulary of the columns of ``X``.
    vocab_to : sequence of str
        The target vocabulary.

    Returns
    -------
    Y : scipy.sparse.csr_matrix, shape (n_docs, len(vocab_to))
        The counts of the words of ``vocab_to``, in its column order (duplicate entries summed).
    dropped : int
        The number of tokens (sum of the dropped counts) whose word is not in ``vocab_to``.
    """
    pos = {w: i for i, w in enumerate(vocab_to)}
    mapping = np.array([pos.get(w, -1) for w in vocab_from], dtype=np.int64)
    X = sp.csr_matrix(X).tocoo()
    new_col = mapping[X.col]
    keep = new_col >= 0
    dropped = int(X.data[~keep].sum())
    Y = sp.csr_matrix((X.data[keep], (X.row[keep], new_col[keep])), shape=(X.shape[0], len(vocab_to)))
    Y.sum_duplicates()
    return Y, dropped


def subsample_rows(X, max_docs: int | None, seed: int):
    """The first ``max_docs`` rows of a seeded permutation, in their original order (all rows if
    ``max_docs`` is None or at least the number of rows).

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n_docs, n_terms)
        The matrix whose rows are sampled (anything indexable by an integer array along axis 0).
    max_docs : int or None
        Number of rows to keep; None keeps all.
    seed : int
        Seed of the ``numpy.random.default_rng`` permutation.

    Returns
    -------
    same type as X, shape (min(max_docs, n_docs), n_terms)
        The selected rows in their original order (``X`` itself when all rows are kept).
    """
    if max_docs is None or max_docs >= X.shape[0]:
        return X
    idx = np.sort(np.random.default_rng(seed).permutation(X.shape[0])[:max_docs])
    return X[idx]
