"""The dataset table: every processed corpus next to the papers' counts (vMF Table 1, ESCA's data table).

A per-class random subsample (news20_small, classic300: ``CorpusSpec.subsample_pool``) has a document count
that depends on its subsample seed (the documents its vocabulary filters leave empty are dropped). With the
raw sources at hand the table measures that spread: the subsample redrawn with a few other seeds
(:func:`redraw_seeds`, :func:`~scalable_bayes.corpora.build.subsample_document_counts`), the sd of their counts
in ``documents_sd`` with ``documents_sd_df`` = redraws - 1 degrees of freedom. Every other corpus's count does
not depend on a seed: ``documents_sd`` 0.
"""

from __future__ import annotations

import os
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from .build import CORPORA, Raw, subsample_document_counts
from .store import load_corpus

# Corpora whose document counts are the paper's own data set (not a stand-in) and so should match.
COMPARABLE = {"news20", "news20_small", "classic3", "classic300", "news20_different", "kos", "msweb"}


def redraw_seeds(seed: int, n: int) -> list[int]:
    """The ``n`` other subsample seeds the table redraws a subsample with: ``seed + 1, ..., seed + n`` (they move
    with the corpus's own seed, ``data.seed``, hence with a replication's ``seed_offset``)."""
    return [int(seed) + 1 + i for i in range(int(n))]


def _count_spread(c, raw: Raw | None, redraws: int) -> dict:
    """The subsample columns of one corpus's row: its subsample seed, and the sd of its document count over
    ``redraws`` other subsample seeds with its degrees of freedom (0 and NA for a corpus without a subsample;
    NaN without raw sources or with fewer than 2 redraws; a raw source missing from ``raw`` raises)."""
    spec = CORPORA.get(c.name)
    if spec is None or spec.subsample_pool is None:
        return {"subsample_seed": None, "documents_sd": 0.0, "documents_sd_df": None, "redraw_documents": ""}
    settings = c.meta.get("settings", {})
    seed = int(settings.get("seed") or 0)
    if raw is None or redraws < 2:
        return {"subsample_seed": seed, "documents_sd": np.nan, "documents_sd_df": None, "redraw_documents": ""}
    counts = subsample_document_counts(c.name, raw, settings, redraw_seeds(seed, redraws))
    return {"subsample_seed": seed, "documents_sd": float(np.std(counts, ddof=1)), "documents_sd_df": len(counts) - 1,
            "redraw_documents": " ".join(str(n) for n in counts)}


def corpus_row(directory: str | os.PathLike, raw: Mapping[str, os.PathLike] | None = None, redraws: int = 0) -> dict:
    """One row of the dataset table: the processed corpus in ``directory`` beside its paper's counts.

    Parameters
    ----------
    directory : path
        A processed corpus (``data/processed/<name>/``).
    raw : mapping of str to path, optional
        Raw sources (or interim products) by source id, as :func:`~scalable_bayes.corpora.build.build_corpus`
        takes them; needed to measure a per-class subsample's count spread.
    redraws : int, default 0
        Other subsample seeds to redraw a per-class subsample with (at least 2 to measure a spread).

    Returns
    -------
    dict
        The row: counts, the paper's counts, ``stand_in``, and ``subsample_seed`` / ``documents_sd`` /
        ``documents_sd_df`` / ``redraw_documents`` (the counts of the redraws, space-separated).
    """
    c = load_corpus(directory)
    meta = c.meta
    paper = meta.get("paper_counts", {})
    split = c.split
    n_train, n_test = int((split == "train").sum()), int((split == "test").sum())
    paper_docs = paper.get("docs")
    if paper_docs is None and "train_docs" in paper:
        paper_docs = paper["train_docs"] + paper.get("test_docs", 0)
    n_classes = len(meta.get("label_names", [])) or None
    return {
        "corpus": c.name,
        "paper": meta.get("paper", ""),
        "description": meta.get("description", ""),
        "documents": c.counts.shape[0],
        "train": n_train,
        "test": n_test,
        "vocabulary": c.counts.shape[1],
        "tokens": int(c.counts.sum()),
        "classes": n_classes,
        "weighting": meta.get("weighting") or "counts",
        "paper_documents": paper_docs,
        "paper_vocabulary": paper.get("vocab"),
        "paper_tokens": paper.get("tokens"),
        "paper_classes": paper.get("classes"),
        "doc_ratio": (c.counts.shape[0] / paper_docs) if paper_docs else np.nan,
        "stand_in": c.name not in COMPARABLE,
        **_count_spread(c, raw, redraws),
        "notes": "; ".join(meta.get("notes", [])),
    }


def dataset_table(directories: Iterable[str | os.PathLike], raw: Mapping[str, os.PathLike] | None = None,
                  redraws: int = 0) -> pd.DataFrame:
    """The dataset table: one :func:`corpus_row` per processed corpus.

    Parameters
    ----------
    directories : iterable of path
        Processed corpora (``data/processed/<name>/``).
    raw : mapping of str to path, optional
        Raw sources (or interim products) of the per-class subsamples among them, to measure the spread of
        their document counts; without them those rows have ``documents_sd`` NaN.
    redraws : int, default 0
        Other subsample seeds per subsample (``data.subsample_redraws``); its sd has ``redraws - 1`` df.

    Returns
    -------
    pd.DataFrame
        One row per corpus (columns of :func:`corpus_row`).
    """
    rows = [corpus_row(d, raw, redraws) for d in directories]
    df = pd.DataFrame(rows)
    int_cols = ["paper_documents", "paper_vocabulary", "paper_tokens", "paper_classes", "classes", "subsample_seed",
                "documents_sd_df"]
    for col in int_cols:
        df[col] = df[col].astype("Int64")
    return df
