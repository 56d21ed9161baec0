"""The dataset table: every processed corpus next to the papers' counts (vMF Table 1, ESCA's data table)."""

from __future__ import annotations

import os
from typing import Iterable

import numpy as np
import pandas as pd

from .store import load_corpus

# Corpora whose document counts are the paper's own data set (not a stand-in) and so should match.
COMPARABLE = {"news20", "news20_small", "classic3", "classic300", "news20_different", "kos", "msweb"}


def corpus_row(directory: str | os.PathLike) -> dict:
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
        "notes": "; ".join(meta.get("notes", [])),
    }


def dataset_table(directories: Iterable[str | os.PathLike]) -> pd.DataFrame:
    rows = [corpus_row(d) for d in directories]
    df = pd.DataFrame(rows)
    int_cols = ["paper_documents", "paper_vocabulary", "paper_tokens", "paper_classes", "classes"]
    for col in int_cols:
        df[col] = df[col].astype("Int64")
    return df
