"""On-disk layout of a processed corpus (``data/processed/<corpus>/``) and its loader.

Files in a corpus directory::

    counts.npz   document-term counts, scipy.sparse CSR (int32), documents x vocabulary
    tfidf.npz    tf-idf rows, CSR float64, l2-normalised (only for corpora whose paper uses tf-idf)
    vocab.txt    one term per line, column order of the matrices
    docs.parquet one row per document: doc_id (str), label (int, -1 if none),
                 split ("train"/"test"), n_tokens (int)
    meta.json    name, source, label_names, paper's counts, preprocessing settings, notes
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..utils import atomic_path, write_json_atomic, write_text_atomic

FILES = ("counts.npz", "tfidf.npz", "vocab.txt", "docs.parquet", "meta.json")


@dataclass
class Corpus:
    """A processed corpus.

    A dataclass: each parameter is kept as the attribute of the same name. The properties ``name``,
    ``labels``, ``label_names`` and ``split`` read ``meta`` and ``docs``.

    Parameters
    ----------
    counts : scipy.sparse.csr_matrix of int32, shape (n_docs, n_terms)
        Document-term counts.
    vocab : list of str, length n_terms
        The terms, in column order.
    docs : pandas.DataFrame, n_docs rows
        Columns doc_id (str), label (int, -1 if none), split (``"train"`` / ``"test"``), n_tokens (int).
    meta : dict, default {}
        At least ``name`` and ``label_names`` (source, the paper's counts, preprocessing settings, notes).
    tfidf : scipy.sparse.csr_matrix of float64, shape (n_docs, n_terms), optional
        l2-normalised tf-idf rows, or None.
    """

    counts: sp.csr_matrix
    vocab: list[str]
    docs: pd.DataFrame
    meta: dict[str, Any] = field(default_factory=dict)
    tfidf: sp.csr_matrix | None = None

    @property
    def name(self) -> str:
        return self.meta.get("name", "?")

    @property
    def labels(self) -> np.ndarray:
        return self.docs["label"].to_numpy()

    @property
    def label_names(self) -> list[str]:
        return list(self.meta.get("label_names", []))

    @property
    def split(self) -> np.ndarray:
        return self.docs["split"].to_numpy()

    def subset(self, split: str) -> "Corpus":
        """The documents of one split (``"train"`` or ``"test"``) as a new Corpus."""
        mask = self.split == split
        if not mask.any():
            raise ValueError(f"corpus {self.name!r} has no documents in split {split!r}")
        return Corpus(
            counts=self.counts[mask],
            vocab=self.vocab,
            docs=self.docs[mask].reset_index(drop=True),
            meta=dict(self.meta),
            tfidf=None if self.tfidf is None else self.tfidf[mask],
        )

    def validate(self) -> None:
        n, v = self.counts.shape
        if len(self.vocab) != v:
            raise ValueError(f"corpus {self.name}: {len(self.vocab)} vocabulary terms but {v} columns")
        if len(self.docs) != n:
            raise ValueError(f"corpus {self.name}: {len(self.docs)} document rows but {n} matrix rows")
        if self.tfidf is not None and self.tfidf.shape != self.counts.shape:
            raise ValueError(f"corpus {self.name}: tfidf shape {self.tfidf.shape} != counts shape {self.counts.shape}")
        if not set(np.unique(self.docs["split"])) <= {"train", "test"}:
            raise ValueError(f"corpus {self.name}: split column must hold only 'train'/'test'")


def save_corpus(corpus: Corpus, directory: str | os.PathLike) -> None:
    """Write every file of ``corpus`` atomically into ``directory``.

    The corpus is validated first; the files are those of the module docstring (``tfidf.npz`` only when
    ``corpus.tfidf`` is not None).

    Parameters
    ----------
    corpus : Corpus
        The corpus to write.
    directory : str or os.PathLike
        The corpus directory, created if missing; existing files are replaced.
    """
    corpus.validate()
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    with atomic_path(d / "counts.npz") as tmp:
        sp.save_npz(tmp, corpus.counts.astype(np.int32).tocsr(), compressed=True)
    if corpus.tfidf is not None:
        with atomic_path(d / "tfidf.npz") as tmp:
            sp.save_npz(tmp, corpus.tfidf.astype(np.float64).tocsr(), compressed=True)
    write_text_atomic(d / "vocab.txt", "\n".join(corpus.vocab) + "\n")
    with atomic_path(d / "docs.parquet") as tmp:
        corpus.docs.to_parquet(tmp, index=False)
    write_json_atomic(d / "meta.json", corpus.meta)


def load_corpus(directory: str | os.PathLike) -> Corpus:
    """Load a corpus written by :func:`save_corpus` (or the ``build_corpus`` rule).

    Parameters
    ----------
    directory : str or os.PathLike
        The corpus directory (``data/processed/<corpus>/``).

    Returns
    -------
    Corpus
        The validated corpus (``tfidf`` None when the directory has no ``tfidf.npz``).

    Raises
    ------
    FileNotFoundError
        If the directory has no ``counts.npz``.
    """
    d = Path(directory)
    if not (d / "counts.npz").exists():
        raise FileNotFoundError(
            f"no processed corpus at {d}: run `snakemake {d}/counts.npz` (rule build_corpus) first"
        )
    counts = sp.load_npz(d / "counts.npz").tocsr()
    tfidf = sp.load_npz(d / "tfidf.npz").tocsr() if (d / "tfidf.npz").exists() else None
    vocab = (d / "vocab.txt").read_text(encoding="utf-8").splitlines()
    docs = pd.read_parquet(d / "docs.parquet")
    with open(d / "meta.json", encoding="utf-8") as fh:
        meta = json.load(fh)
    c = Corpus(counts=counts, vocab=vocab, docs=docs, meta=meta, tfidf=tfidf)
    c.validate()
    return c
