"""Claim of the dataset table (``results/tables/datasets.{csv,md}``): the corpora that are a paper's own
data set (vMF Table 1; SGGMC's 20News-different; UCI KOS and msweb) have that paper's document count.
Stand-ins (Wikipedia sample, OHSUMED for PubMed, Reuters-21578 for RCV1) are listed, not compared."""

from __future__ import annotations

import pandas as pd

from scalable_bayes.reporting import Claim, Evidence

CLAIM = ("The processed corpora that are the papers' own data sets have the papers' document counts "
         "(vMF Table 1; SGGMC 20News-different; UCI KOS/msweb), within 1%.")
NOTE = ("Stand-ins (Wikipedia sample, OHSUMED for PubMed, Reuters-21578 for RCV1) are listed but not compared. One "
        "comparison per corpus, 1% minus its relative deviation from the paper's count; deterministic (sd 0): the "
        "build of a corpus has no seed, so another run gives the same counts.")
SD_FROM = "deterministic: the processed corpus's document count (the build has no randomness)"


def check_datasets(df: pd.DataFrame, profile: str, tolerance: float = 0.01) -> Claim:
    """DATA-Tab: every non-stand-in corpus with a paper document count lies within ``tolerance`` (relative).
    One :class:`~scalable_bayes.reporting.Evidence` per corpus: margin ``tolerance`` - |documents - paper| /
    paper, sd 0 (a count, the same in every run): holds when inside the tolerance, fails when outside, undecided
    only exactly on it."""
    sub = df[~df["stand_in"] & df["paper_documents"].notna()]
    parts, evidence = [], []
    for r in sub.itertuples():
        rel = abs(r.documents - r.paper_documents) / r.paper_documents
        evidence.append(Evidence(f"{r.corpus}: document count within {100 * tolerance:g}% of the paper's "
                                 "(relative deviation)", tolerance - rel, 0.0, SD_FROM))
        parts.append(f"{r.corpus} {r.documents:,} vs {int(r.paper_documents):,} ({100 * rel:.2f}%)")
    measured = "; ".join(parts) if parts else "no corpus with a paper document count in this profile's table"
    return Claim(id="DATA-Tab", paper="data", claim=CLAIM, measured=measured, holds=None, scale=profile, note=NOTE,
                 evidence=tuple(evidence))
