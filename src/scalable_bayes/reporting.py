"""Claims: each figure/table rule states the paper's claim, what this run measured, and whether it holds.

A claim file is JSON with keys ``id``, ``paper``, ``claim``, ``measured``, ``holds``, ``scale`` and
optionally ``paper_value``, ``details`` and ``note``. :func:`collect_claims` turns a set of them into
``results/claims.md``.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Mapping

from ._optional import require
from .utils import dataframe_to_markdown, write_json_atomic, write_text_atomic

pd = require("pandas", "scalable_bayes.reporting (the claims table)")
logger = logging.getLogger(__name__)

CLAIM_KEYS = ("id", "paper", "claim", "measured", "holds", "scale")


@dataclass(frozen=True)
class Claim:
    """A paper's claim, checked: what a paper's ``claims.check_<item>`` returns.

    Attributes
    ----------
    id : item id, ``"<PAPER>-<item>"``, e.g. ``"VMF-Fig2"``.
    paper : paper key (``vmf``, ``sgnht``, ``sggmc``, ``scir``, ``esca``, ``data``).
    claim : the paper's claim in one sentence.
    measured : what this run measured, in words with the numbers.
    holds : True/False, or None when the claim cannot be checked at this scale (``note`` says why).
    scale : the config profile (``smoke``, ``quick``, ``paper``) plus every departure from the paper.
    paper_value, details, note : optional; ``details`` is JSON-serialisable.
    if_fails : optional; where a failing claim's deciding experiment and its finding are written. Joined to
        ``note`` when ``holds`` is False (the claim file then says where to look), dropped otherwise.
    """

    id: str
    paper: str
    claim: str
    measured: str
    holds: bool | None
    scale: str
    paper_value: str | None = None
    details: Mapping[str, Any] | None = field(default=None)
    note: str | None = None
    if_fails: str | None = None

    def as_dict(self) -> dict:
        """The claim file's fields (:func:`write_claim`): ``if_fails`` joined to the note when the claim fails."""
        d = asdict(self)
        extra = d.pop("if_fails")
        if extra and self.holds is False:
            d["note"] = f"{d['note']} {extra}" if d["note"] else extra
        return d


def write_claim(
    path: str | os.PathLike,
    claim_obj: Claim | None = None,
    /,
    *,
    id: str | None = None,
    paper: str | None = None,
    claim: str | None = None,
    measured: str | None = None,
    holds: bool | None = None,
    scale: str | None = None,
    paper_value: str | None = None,
    details: Mapping[str, Any] | None = None,
    note: str | None = None,
) -> dict:
    """Write one claim file atomically and return its content.

    Call it with a :class:`Claim` (``write_claim(path, claim)``) or with its fields as keywords.

    Parameters
    ----------
    id : ``"<PAPER>-<item>"`` with the paper's own item name, e.g. ``"VMF-Fig2"``.
    paper : paper key (``vmf``, ``sgnht``, ``sggmc``, ``scir``, ``esca``, ``data``).
    claim : the paper's claim in one sentence.
    measured : what this run measured, in words with the numbers.
    holds : True/False, or None when the claim cannot be checked at this scale (say why in ``note``).
    scale : ``"smoke"``, ``"quick"`` or ``"paper"``, plus any scaling-down in words.
    """
    if claim_obj is not None:
        return write_claim(path, **claim_obj.as_dict())
    missing = [k for k, v in dict(id=id, paper=paper, claim=claim, measured=measured, scale=scale).items() if v is None]
    if missing:
        raise TypeError(f"write_claim: missing claim fields {missing}")
    if holds is not None and not isinstance(holds, bool):
        holds = bool(holds)
    content = {
        "id": id,
        "paper": paper,
        "claim": claim,
        "measured": measured,
        "holds": holds,
        "scale": scale,
    }
    if paper_value is not None:
        content["paper_value"] = paper_value
    if details:
        content["details"] = dict(details)
    if note:
        content["note"] = note
    write_json_atomic(path, content)
    logger.info("claim %s: holds=%s (%s)", id, holds, measured)
    return content


def read_claims(paths: Iterable[str | os.PathLike]) -> pd.DataFrame:
    rows = []
    for p in paths:
        with open(p, encoding="utf-8") as fh:
            c = json.load(fh)
        missing = [k for k in CLAIM_KEYS if k not in c]
        if missing:
            raise ValueError(f"claim file {p} lacks keys {missing}; write it with scalable_bayes.reporting.write_claim")
        rows.append(c)
    df = pd.DataFrame(rows, columns=list(CLAIM_KEYS) + ["paper_value", "note"])
    return df.sort_values(["paper", "id"], kind="stable").reset_index(drop=True)


def collect_claims(paths: Iterable[str | os.PathLike], out_md: str | os.PathLike, profile: str) -> pd.DataFrame:
    """Write ``results/claims.md``: one table per paper plus a summary line."""
    df = read_claims(paths)
    verdict = {True: "holds", False: "**does not hold**", None: "not checked"}
    lines = [
        "# Claims checked by this run",
        "",
        f"Config profile: `{profile}`. Generated by the `claims` rule from `results/*/claims/*.json`;",
        "do not edit by hand. `holds` compares the measured value with the paper's claim at this scale.",
        "",
    ]
    n_hold = int((df["holds"] == True).sum())  # noqa: E712
    n_fail = int((df["holds"] == False).sum())  # noqa: E712
    n_na = len(df) - n_hold - n_fail
    lines.append(f"Summary: {len(df)} claims, {n_hold} hold, {n_fail} do not hold, {n_na} not checked.")
    lines.append("")
    for paper, sub in df.groupby("paper", sort=True):
        lines.append(f"## {paper}")
        lines.append("")
        table = pd.DataFrame(
            {
                "id": sub["id"],
                "claim": sub["claim"],
                "measured": sub["measured"],
                "paper": sub["paper_value"].fillna(""),
                "verdict": [verdict[h if h in (True, False) else None] for h in sub["holds"]],
                "scale": sub["scale"],
                "note": sub["note"].fillna(""),
            }
        )
        lines.append(dataframe_to_markdown(table))
    write_text_atomic(out_md, "\n".join(lines))
    return df
