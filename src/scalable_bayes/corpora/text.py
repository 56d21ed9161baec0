"""Tokenising, vocabulary filters and tf-idf weightings, each exactly as a paper defines it.

Counting uses scikit-learn's ``CountVectorizer``; the weightings are small sparse-matrix formulas:

* :func:`tfidf_sggmc` (SGGMC paper, Sec. 5.3): ``tf(d,v) * log(D / (1 + df(v)))``, rows l2-normalised.
* :func:`tfidf_vmf` (vMF paper, App. A.6): ``tf(d,v) * log(N / N_v)``, rows l2-normalised.
"""

from __future__ import annotations

import logging
from importlib import resources
from typing import Iterable, Sequence

import numpy as np
import scipy.sparse as sp

logger = logging.getLogger(__name__)

#: Lower-case alphabetic runs: every non-letter is a separator (Rennie's Matlab 20NG vocabulary,
#: Hoffman's Wikipedia vocabulary).
ALPHA_TOKENS = r"[a-z]+"
#: scikit-learn's default: words of two or more word characters.
SKLEARN_TOKENS = r"(?u)\b\w\w+\b"


def smart_stopwords() -> frozenset[str]:
    """The SMART stop-word list (Salton 1971; 570 distinct words) used by the vMF paper, plus the
    fragments its contractions tokenise into."""
    text = resources.files(__package__).joinpath("smart_stoplist.txt").read_text(encoding="utf-8")
    words = {w for w in text.splitlines() if w and not w.startswith("#")}
    # The tokenisers split "don't" into "don" + "t": add such fragments so that the list removes
    # what it is meant to remove (scikit-learn warns about exactly this inconsistency otherwise).
    words |= {part for w in words if "'" in w for part in w.split("'") if part}
    return frozenset(words)


def count_matrix(
    texts: Iterable[str],
    *,
    vocabulary: Sequence[str] | None = None,
    token_pattern: str = SKLEARN_TOKENS,
    stop_words: Iterable[str] | None = None,
    min_df: int | float = 1,
    max_df: int | float = 1.0,
) -> tuple[sp.csr_matrix, list[str]]:
    """Document-term counts (CSR int32) and the vocabulary (column order).

    With ``vocabulary`` the columns are exactly that list (in that order; tokens outside it are
    dropped); otherwise the vocabulary is learnt with the document-frequency bounds, sorted.
    """
    # imported here: the workflow parses this module in every job, and scikit-learn costs ~0.9 s to import
    from sklearn.feature_extraction.text import CountVectorizer

    if vocabulary is not None:
        vocabulary = list(dict.fromkeys(vocabulary))  # unique, keep order
        cv = CountVectorizer(vocabulary=vocabulary, token_pattern=token_pattern, lowercase=True, dtype=np.int32)
        X = cv.transform(texts)
        vocab = list(vocabulary)
    else:
        cv = CountVectorizer(
            token_pattern=token_pattern,
            lowercase=True,
            stop_words=sorted(stop_words) if stop_words is not None else None,
            min_df=min_df,
            max_df=max_df,
            dtype=np.int32,
        )
        X = cv.fit_transform(texts)
        vocab = cv.get_feature_names_out().tolist()
    X = sp.csr_matrix(X, dtype=np.int32)
    X.sort_indices()
    return X, vocab


def document_frequency(X: sp.spmatrix) -> np.ndarray:
    """Number of documents in which each term occurs."""
    X = sp.csc_matrix(X)
    return np.diff(X.indptr).astype(np.int64)


def select_columns(X: sp.csr_matrix, vocab: Sequence[str], keep: np.ndarray) -> tuple[sp.csr_matrix, list[str]]:
    """Keep the columns ``keep`` (boolean mask or sorted index array)."""
    idx = np.flatnonzero(keep) if keep.dtype == bool else np.asarray(keep)
    return sp.csr_matrix(X[:, idx]), [vocab[i] for i in idx]


def df_band(X: sp.csr_matrix, low: float, high: float, max_terms: int | None = None) -> np.ndarray:
    """Indices of the terms whose document fraction lies in ``[low, high]``.

    If more than ``max_terms`` pass, the ``max_terms`` with the highest document frequency are kept
    (ties broken by column order), returned in column order.
    """
    n = X.shape[0]
    df = document_frequency(X)
    frac = df / max(n, 1)
    idx = np.flatnonzero((frac >= low) & (frac <= high))
    if max_terms is not None and idx.size > max_terms:
        order = np.lexsort((idx, -df[idx]))  # by df desc, then column
        idx = np.sort(idx[order[:max_terms]])
    return idx


def l2_normalise_rows(X: sp.csr_matrix) -> sp.csr_matrix:
    X = sp.csr_matrix(X, dtype=np.float64, copy=True)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    if np.any(norms == 0):
        bad = int(np.sum(norms == 0))
        raise ValueError(
            f"{bad} document(s) have an all-zero tf-idf row and cannot be l2-normalised; "
            "drop empty documents before weighting (build_corpus does this)"
        )
    X = sp.diags(1.0 / norms) @ X
    return sp.csr_matrix(X)


def _check_counts(X: sp.spmatrix) -> sp.csr_matrix:
    X = sp.csr_matrix(X)
    if X.nnz and (X.data < 0).any():
        raise ValueError("counts must be non-negative")
    return X


def tfidf_sggmc(counts: sp.spmatrix) -> sp.csr_matrix:
    """SGGMC paper: ``tfidf(d,v) = tf(d,v) * log(D / (1 + df(v)))``, then l2-normalised per document.

    ``D`` is the number of documents of ``counts``; ``tf`` the raw count (normalising tf by document
    length would cancel in the l2 normalisation).
    """
    X = _check_counts(counts).astype(np.float64)
    D = X.shape[0]
    idf = np.log(D / (1.0 + document_frequency(X)))
    return l2_normalise_rows(X @ sp.diags(idf))


def tfidf_vmf(counts: sp.spmatrix) -> sp.csr_matrix:
    """vMF paper (App. A.6): ``x_d = (tf_d * idf) / ||tf_d * idf||`` with ``idf_v = log(N / N_v)``.

    Terms present in every document get weight 0 (log 1); terms present in no document are an error.
    """
    X = _check_counts(counts).astype(np.float64)
    N = X.shape[0]
    df = document_frequency(X)
    if np.any(df == 0):
        raise ValueError(f"{int(np.sum(df == 0))} vocabulary term(s) occur in no document: filter the vocabulary first")
    idf = np.log(N / df)
    return l2_normalise_rows(X @ sp.diags(idf))


def drop_empty_documents(X: sp.csr_matrix) -> np.ndarray:
    """Boolean mask of documents with at least one token."""
    return np.diff(sp.csr_matrix(X).indptr) > 0
