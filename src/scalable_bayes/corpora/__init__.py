"""Corpora: readers of upstream formats, tokenising, vocabulary filters, bag of words, tf-idf, splits."""

from .._optional import require

require("pandas", "scalable_bayes.corpora (data sets, bag-of-words and tf-idf stores)")
require("pyarrow", "scalable_bayes.corpora (its stores are Parquet files)")

from .select import align_vocabulary, subsample_rows
from .store import Corpus, load_corpus, save_corpus

__all__ = ["Corpus", "load_corpus", "save_corpus", "align_vocabulary", "subsample_rows"]
