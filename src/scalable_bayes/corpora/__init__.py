"""Corpora: readers of upstream formats, tokenising, vocabulary filters, bag of words, tf-idf, splits."""

from .select import align_vocabulary, subsample_rows
from .store import Corpus, load_corpus, save_corpus

__all__ = ["Corpus", "load_corpus", "save_corpus", "align_vocabulary", "subsample_rows"]
