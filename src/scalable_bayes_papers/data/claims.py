"""Claim of the dataset table (``results/tables/datasets.{csv,md}``): the corpora that are a paper's own
data set (vMF Table 1; SGGMC's 20News-different; UCI KOS and msweb) have that paper's document count.
Stand-ins (Wikipedia sample, OHSUMED for PubMed, Reuters-21578 for RCV1) are listed, not compared.

The run-to-run sd of a count: 0 for a corpus whose documents do not depend on a seed (a whole corpus; KOS's
random split moves documents between train and test only). The per-class random subsamples (news20_small,
classic300: 100 documents per class drawn with ``data.seed``) lose the documents their own vocabulary filters
leave empty, so their count depends on the seed; the table measures its sd over ``data.subsample_redraws``
other subsample seeds (:func:`scalable_bayes.corpora.summary.redraw_seeds`: the selection redrawn and the
filters re-applied), with redraws - 1 degrees of freedom.
"""

from __future__ import annotations

import pandas as pd

from scalable_bayes.reporting import Claim, Evidence

CLAIM = ("The processed corpora that are the papers' own data sets have the papers' document counts "
         "(vMF Table 1; SGGMC 20News-different; UCI KOS/msweb), within 1%.")
NOTE = ("Stand-ins (Wikipedia sample, OHSUMED for PubMed, Reuters-21578 for RCV1) are listed but not compared. One "
        "comparison per corpus, 1% minus its relative deviation from the paper's count. Its sd: 0 where the "
        "documents do not depend on a seed (a whole corpus; a random train/test split moves documents between the "
        "splits only); for a per-class random subsample (news20_small, classic300), whose count depends on "
        "data.seed (the documents its vocabulary filters leave empty are dropped), the sd of the count over "
        "data.subsample_redraws other subsample seeds (data.seed + 1, ...; the selection redrawn and the filters "
        "re-applied, no features built) / the paper's count, with redraws - 1 df (band: Student's t of that df).")
SD_FROM = ("deterministic: the processed corpus's document count does not depend on a seed (no subsample; a random "
           "split moves documents between train and test only)")


def _subsample_sd_from(seed: int, df: int, counts: str) -> str:
    """``sd_from`` of a per-class subsample's count."""
    n = df + 1
    return (f"sd of the document count over {n} other subsample seeds ({seed + 1}-{seed + n}: the per-class "
            f"selection redrawn, the vocabulary filters re-applied; counts {counts}) / the paper's count, {df} df")


def check_datasets(df: pd.DataFrame, profile: str, tolerance: float = 0.01) -> Claim:
    """DATA-Tab: every non-stand-in corpus with a paper document count lies within ``tolerance`` (relative).

    One :class:`~scalable_bayes.reporting.Evidence` per corpus: margin ``tolerance`` - |documents - paper| /
    paper. Its sd: 0 for a corpus without a subsample (the same count in every run: holds inside the
    tolerance, fails outside, undecided only exactly on it); for a per-class random subsample (``subsample_seed``
    set) the table's ``documents_sd`` / paper with ``documents_sd_df`` degrees of freedom (the count's sd over
    other subsample seeds, :func:`scalable_bayes.corpora.summary.dataset_table`). A subsample without a
    measured spread is not compared (listed in the note).

    Parameters
    ----------
    df : pd.DataFrame
        The dataset table: columns ``corpus``, ``stand_in``, ``documents``, ``paper_documents``,
        ``subsample_seed``, ``documents_sd``, ``documents_sd_df`` and ``redraw_documents``.
    profile : str
        The config profile (the claim's scale).
    tolerance : float, default 0.01
        The relative deviation allowed.

    Returns
    -------
    Claim
        DATA-Tab.
    """
    sub = df[~df["stand_in"] & df["paper_documents"].notna()]
    parts, evidence, gaps = [], [], []
    for r in sub.itertuples():
        rel = abs(r.documents - r.paper_documents) / r.paper_documents
        name = f"{r.corpus}: document count within {100 * tolerance:g}% of the paper's (relative deviation)"
        txt = f"{r.corpus} {r.documents:,} vs {int(r.paper_documents):,} ({100 * rel:.2f}%)"
        if pd.isna(r.subsample_seed):
            evidence.append(Evidence(name, tolerance - rel, 0.0, SD_FROM))
        elif pd.notna(r.documents_sd) and pd.notna(r.documents_sd_df):
            k = int(r.documents_sd_df)
            evidence.append(Evidence(name, tolerance - rel, float(r.documents_sd) / float(r.paper_documents),
                                     _subsample_sd_from(int(r.subsample_seed), k, r.redraw_documents), df=k))
            txt += f", sd {float(r.documents_sd):.2f} documents over {k + 1} other subsample seeds"
        else:
            gaps.append(f"{r.corpus}: a per-class subsample (seed {int(r.subsample_seed)}) without a measured count "
                        "spread, not compared")
            txt += " (not compared: no measured spread)"
        parts.append(txt)
    measured = "; ".join(parts) if parts else "no corpus with a paper document count in this profile's table"
    return Claim(id="DATA-Tab", paper="data", claim=CLAIM, measured=measured, holds=None, scale=profile,
                 note=NOTE + (" Gaps: " + "; ".join(gaps) + "." if gaps else ""), evidence=tuple(evidence))
