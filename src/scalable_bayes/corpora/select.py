"""Parts of a document-term matrix: a seeded subsample of its rows, its columns in another vocabulary."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.sparse as sp

__all__ = ["align_vocabulary", "subsample_rows"]


def align_vocabulary(X, vocab_from: Sequence[str], vocab_to: Sequence[str]) -> tuple[sp.csr_matrix, int]:
    """Re-index the columns of X (vocabulary ``vocab_from``) into ``vocab_to``; out-of-vocabulary
    words are dropped (e.g. to score documents of one corpus under a model of another).
    Returns (X', number of dropped tokens)."""
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
    ``max_docs`` is None or at least the number of rows)."""
    if max_docs is None or max_docs >= X.shape[0]:
        return X
    idx = np.sort(np.random.default_rng(seed).permutation(X.shape[0])[:max_docs])
    return X[idx]
