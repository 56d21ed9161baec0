"""Tokenising, vocabulary filters and the two tf-idf weightings against hand-computed values."""

import numpy as np
import pytest
import scipy.sparse as sp

from scalable_bayes.corpora.text import (
    ALPHA_TOKENS,
    count_matrix,
    df_band,
    document_frequency,
    smart_stopwords,
    tfidf_sggmc,
    tfidf_vmf,
)


def test_smart_stopwords_contents():
    sw = smart_stopwords()
    assert {"the", "a", "about", "zero", "yourselves", "uucp"} <= sw
    assert "space" not in sw and "atheism" not in sw
    # contractions' fragments are included so the tokeniser's output is filtered consistently
    assert "don" in sw and "ve" in sw
    assert len([w for w in sw if "'" not in w]) >= 540


def test_count_matrix_alpha_tokens_fixed_vocabulary():
    texts = ["Alt.Atheism FAQ: atheist-resources, v1.0 atheism!", "space SPACE space2 sp4ce"]
    X, vocab = count_matrix(texts, vocabulary=["atheism", "space", "ce", "faq", "atheism"], token_pattern=ALPHA_TOKENS)
    assert vocab == ["atheism", "space", "ce", "faq"]  # duplicates dropped, order kept
    np.testing.assert_array_equal(X.toarray(), [[2, 0, 0, 1], [0, 3, 1, 0]])
    assert X.dtype == np.int32


def test_count_matrix_learnt_vocabulary_with_df_bounds_and_stop_words():
    texts = ["the cat sat", "the cat ran", "a dog ran", "the bird flew"]
    X, vocab = count_matrix(texts, stop_words=smart_stopwords(), min_df=2, max_df=0.5)
    # "the" is a stop word; cat and ran occur in 2 of 4 documents (<= 50%); the rest once
    assert vocab == ["cat", "ran"]
    np.testing.assert_array_equal(X.toarray(), [[1, 0], [1, 1], [0, 1], [0, 0]])


def test_df_band_keeps_most_frequent_within_band():
    X = sp.csr_matrix(np.array([[1, 1, 1, 0], [1, 1, 0, 0], [1, 0, 0, 1], [1, 0, 0, 0]]))
    np.testing.assert_array_equal(document_frequency(X), [4, 2, 1, 1])
    np.testing.assert_array_equal(df_band(X, 0.25, 0.5), [1, 2, 3])
    np.testing.assert_array_equal(df_band(X, 0.25, 0.5, max_terms=2), [1, 2])  # df 2 first, then column order


def test_tfidf_sggmc_hand_computed():
    counts = sp.csr_matrix(np.array([[2, 0, 1], [0, 1, 0], [1, 0, 0], [0, 1, 0], [0, 0, 4], [0, 3, 0]]))
    # D = 6; df = [2, 3, 2]; idf = log(6 / (1 + df)) = [log 2, log 1.5, log 2]
    idf = np.log(np.array([2.0, 1.5, 2.0]))
    raw = counts.toarray() * idf
    expected = raw / np.linalg.norm(raw, axis=1, keepdims=True)
    np.testing.assert_allclose(tfidf_sggmc(counts).toarray(), expected, rtol=1e-14)
    # document 0 is [log 2 * 2, 0, log 2] / norm = [2, 0, 1] / sqrt(5)
    np.testing.assert_allclose(tfidf_sggmc(counts)[0].toarray().ravel(), np.array([2, 0, 1]) / np.sqrt(5), rtol=1e-14)


def test_tfidf_sggmc_zero_row_is_an_error():
    # D = 4, df = [2, 1, 3]: idf of the last term is log(4 / 4) = 0, so document 2 weighs to zero
    counts = sp.csr_matrix(np.array([[2, 0, 1], [0, 1, 1], [0, 0, 3], [1, 0, 0]]))
    with pytest.raises(ValueError, match="all-zero"):
        tfidf_sggmc(counts)


def test_tfidf_vmf_hand_computed():
    counts = sp.csr_matrix(np.array([[2, 0, 1], [0, 1, 1], [1, 0, 3], [1, 0, 0]]))
    # N = 4, df = [3, 1, 3], idf = log(N / df) = [log 4/3, log 4, log 4/3]
    idf = np.log(4 / np.array([3.0, 1.0, 3.0]))
    expected = counts.toarray() * idf
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    got = tfidf_vmf(counts)
    np.testing.assert_allclose(got.toarray(), expected, rtol=1e-14)
    np.testing.assert_allclose(np.sqrt(got.multiply(got).sum(axis=1)).A.ravel(), 1.0, rtol=1e-14)
    assert got.dtype == np.float64 and sp.isspmatrix_csr(got)


def test_tfidf_rejects_bad_counts():
    with pytest.raises(ValueError, match="non-negative"):
        tfidf_vmf(sp.csr_matrix(np.array([[1, -1]])))
    with pytest.raises(ValueError, match="occur in no document"):
        tfidf_vmf(sp.csr_matrix(np.array([[1, 0], [2, 0]])))
