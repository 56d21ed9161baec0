"""Claim of the dataset table (``results/tables/datasets.{csv,md}``): the corpora that are a paper's own
data set (vMF Table 1; SGGMC's 20News-different; UCI KOS and msweb) have that paper's document count.
Stand-ins (Wikipedia sample, OHSUMED for PubMed, Reuters-21578 for RCV1) are listed, not compared."""

from __future__ import annotations

import pandas as pd

from scalable_bayes.reporting import Claim

CLAIM = ("The processed corpora that are the papers' own data sets have the papers' document counts "
         "(vMF Table 1; SGGMC 20News-different; UCI KOS/msweb), within 1%.")
NOTE = "Stand-ins (Wikipedia sample, OHSUMED for PubMed, Reuters-21578 for RCV1) are listed but not compared."


def check_datasets(df: pd.DataFrame, profile: str, tolerance: float = 0.01) -> Claim:
    """DATA-Tab: every non-stand-in corpus with a paper document count lies within ``tolerance`` (relative)."""
    sub = df[~df["stand_in"] & df["paper_documents"].notna()]
    parts, ok = [], True
    for r in sub.itertuples():
        rel = abs(r.documents - r.paper_documents) / r.paper_documents
        ok &= bool(rel <= tolerance)
        parts.append(f"{r.corpus} {r.documents:,} vs {int(r.paper_documents):,} ({100 * rel:.2f}%)")
    if sub.empty:
        holds, measured = None, "no corpus with a paper document count in this profile's table"
    else:
        holds, measured = ok, "; ".join(parts)
    return Claim(id="DATA-Tab", paper="data", claim=CLAIM, measured=measured, holds=holds, scale=profile, note=NOTE)
