"""Claims: each figure/table rule states the paper's claim, what this run measured, and whether it holds.

A claim file is JSON with keys ``id``, ``paper``, ``claim``, ``measured``, ``holds``, ``verdict``,
``scale`` and optionally ``paper_value``, ``details``, ``evidence`` and ``note``.
:func:`collect_claims` turns a set of them into ``results/claims.md``.

Verdicts with the run-to-run spread in them
-------------------------------------------
A measured effect varies between independent runs (other seeds, other subsamples). A verdict that
compares one run's effect with a threshold flips between runs when the effect sits within its own
spread of the threshold. So a checked claim carries its :class:`Evidence`: for each comparison it
makes, the *margin* (the effect minus the threshold, signed so that a positive margin supports the
claim) and the *sd* of that margin between independent runs, measured (from the claim's own seeds
where it has several, from a second seed set where it has one; ``sd_from`` says which). With
``Z_SPREAD = 2``:

* ``holds`` when every margin exceeds its band, ``Z_SPREAD * sd``,
* ``fails`` when some margin is below minus its band,
* ``undecided`` (at this scale) otherwise: the effect is within its spread of the threshold, and
  another replication could go either way.

An sd estimated from a few seeds is itself uncertain: from two seeds (one degree of freedom) it is below
a quarter of the true sd one time in five. An :class:`Evidence` whose sd was estimated from ``n``
independent values carries ``df = n - 1``, and its band is widened to Student's t quantile of the same
coverage as ``Z_SPREAD`` normal sds (95.45 %, two-sided): 13.97 sds at 1 degree of freedom, 4.53 at 2,
2.87 at 4, 2.32 at 9 (:func:`band_factor`). This is the t test of "the mean margin is zero" at that
level; with two seeds it decides only an effect that is large against the gap between the seeds.
An sd with no stated ``df`` (a deterministic comparison, a within-run noise measure with many values, a
propagated error) keeps the normal band.

A deterministic comparison (an analytic identity, a static figure) has ``sd = 0`` and says so in
``sd_from``. ``holds`` stays in every claim file (True / False / None) for readers of the old format;
``verdict`` is one of :data:`VERDICTS`.
"""

from __future__ import annotations

import json
import logging
import math
import os
from pathlib import Path
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Mapping

from ._optional import require
from .utils import dataframe_to_markdown, write_json_atomic, write_text_atomic

pd = require("pandas", "scalable_bayes.reporting (the claims table)")
logger = logging.getLogger(__name__)

CLAIM_KEYS = ("id", "paper", "claim", "measured", "holds", "scale")

#: The four verdicts of a claim file. ``undecided`` is "undecided at this scale": the effect lies
#: within ``Z_SPREAD`` run-to-run sds of its threshold.
VERDICTS = ("holds", "fails", "undecided", "not checked")

#: A margin decides a verdict when it is more than this many run-to-run sds away from zero. Two sds:
#: for a normal margin, a claim that holds in one run fails in an independent run only if the effect
#: moves by more than 4 sds.
Z_SPREAD = 2.0

#: Two-sided coverage of the band ``Z_SPREAD`` normal sds wide (0.9545 for 2 sds).
BAND_COVERAGE = math.erf(Z_SPREAD / math.sqrt(2.0))


def band_factor(df: float | None = None) -> float:
    """How many sds a margin must clear to decide a verdict.

    Parameters
    ----------
    df : float or None
        Degrees of freedom of the sd estimate (``n - 1`` for the sd of ``n`` seeds' values, the
        Welch-Satterthwaite value for a difference of two such estimates); None or infinite for an sd
        known well (a deterministic comparison, a noise measure from many values).

    Returns
    -------
    float
        ``Z_SPREAD`` for ``df`` None or infinite, else Student's t quantile with ``df`` degrees of freedom
        at the same two-sided coverage :data:`BAND_COVERAGE` (13.97 at ``df = 1``, 2.87 at ``df = 4``).

    Raises
    ------
    ValueError
        for ``df <= 0`` or NaN.
    """
    if df is None or math.isinf(df):
        return Z_SPREAD
    df = float(df)
    if not df > 0:
        raise ValueError(f"degrees of freedom must be > 0 (None for an sd known well), got {df!r}")
    from scipy.special import stdtrit

    return float(stdtrit(df, 0.5 + BAND_COVERAGE / 2.0))


def clearance(margin: float, sd: float, df: float | None = None) -> float:
    """How far a margin clears its band: ``margin / (band_factor(df) * sd)``.

    Above 1 the comparison holds, below -1 it fails, in between it is undecided. Used to pick the comparison
    that decides a claim made of several ("at every size", "in every cell": the least clear one).

    Parameters
    ----------
    margin : float
        The measured effect minus the threshold (positive supports the claim).
    sd : float
        Its run-to-run sd.
    df : float or None, default None
        Degrees of freedom of ``sd`` (:func:`band_factor`).

    Returns
    -------
    float
        The ratio; for ``sd = 0`` (a deterministic comparison) +-inf by the margin's sign, and 0 for a zero
        margin.
    """
    if sd > 0:
        return margin / (band_factor(df) * sd)
    return 0.0 if margin == 0 else math.copysign(math.inf, margin)


def welch_df(sd_a: float, df_a: float | None, sd_b: float, df_b: float | None) -> float | None:
    """Welch-Satterthwaite degrees of freedom of ``sqrt(sd_a**2 + sd_b**2)``, the sd of a difference of two
    independent estimates.

    Parameters
    ----------
    sd_a, sd_b : float
        The two estimates' sds.
    df_a, df_b : float or None
        Their degrees of freedom; None (or infinite) for an sd known well, which adds no term.

    Returns
    -------
    float or None
        ``(sd_a**2 + sd_b**2)**2 / (sd_a**4 / df_a + sd_b**4 / df_b)``; None (known well) when neither
        states its ``df`` or both sds are 0.
    """
    return satterthwaite_df((sd_a, sd_b), (df_a, df_b))


def satterthwaite_df(sds: Iterable[float], dfs: Iterable[float | None]) -> float | None:
    """Welch-Satterthwaite degrees of freedom of ``sqrt(sum of sd_i**2)``, the sd of a sum or difference of
    independent estimates.

    Parameters
    ----------
    sds : iterable of float
        The estimates' sds.
    dfs : iterable of float or None
        Their degrees of freedom, in the same order; None (or infinite) for an sd known well, which adds no
        term.

    Returns
    -------
    float or None
        ``(sum v_i)**2 / sum(v_i**2 / df_i)`` with ``v_i = sd_i**2`` over the terms with a finite ``df_i``;
        None (known well) when no term states its ``df`` or every sd is 0.
    """
    terms = [(float(s) * float(s), d) for s, d in zip(sds, dfs)]
    total = sum(v for v, _ in terms)
    den = sum(v * v / d for v, d in terms if d is not None and not math.isinf(d) and v > 0)
    return total * total / den if total > 0 and den > 0 else None

_HOLDS_OF = {"holds": True, "fails": False, "undecided": None, "not checked": None}


@dataclass(frozen=True)
class Evidence:
    """One comparison a claim makes, with its run-to-run spread.

    Parameters
    ----------
    name : str
        What is compared, in words with the unit, e.g. ``"SGGMC below VI (nats)"``.
    margin : float
        The measured effect minus the threshold, signed so that a positive margin supports the claim.
    sd : float
        Standard deviation of ``margin`` between independent runs of the same configuration with other
        seeds, measured (never assumed); 0 for a deterministic comparison.
    sd_from : str
        How ``sd`` was measured, e.g. ``"sd of the 5 seeds' gaps / sqrt(5)"``, ``"two seed sets"``,
        ``"deterministic"``.
    df : float or None, default None
        Degrees of freedom of ``sd``: ``n - 1`` when it is the sd of ``n`` independent per-seed values
        (divided by ``sqrt(n)`` for a mean); None when it is known well (deterministic, or measured from
        many values). Widens the band to Student's t (:func:`band_factor`).
    clock : bool, default False
        True when the margin is measured on a clock (a time to a target, a speed-up): it follows the
        machine's load, so two runs of the same code and seeds may give different margins.
    """

    name: str
    margin: float
    sd: float
    sd_from: str
    df: float | None = None
    clock: bool = False

    def __post_init__(self):
        if self.df is not None:
            df = float(self.df)
            if not df > 0:
                raise ValueError(f"Evidence {self.name!r}: df must be > 0 (n - 1 for n seeds; None for an sd "
                                 f"known well), got {self.df!r}")
            object.__setattr__(self, "df", None if math.isinf(df) else df)
        m, sd = float(self.margin), float(self.sd)
        if math.isnan(m):
            raise ValueError(f"Evidence {self.name!r}: margin is NaN; a comparison that cannot be made is no evidence "
                             "(leave it out and say why in the claim's note)")
        if not (sd >= 0.0) or math.isinf(sd):
            raise ValueError(f"Evidence {self.name!r}: sd must be finite and >= 0, got {self.sd!r}")
        object.__setattr__(self, "margin", m)
        object.__setattr__(self, "sd", sd)

    @property
    def verdict(self) -> str:
        """``holds`` / ``fails`` / ``undecided`` for this comparison alone (see the module docstring)."""
        band = self.band
        if self.margin > band:
            return "holds"
        if self.margin < -band:
            return "fails"
        return "undecided"

    @property
    def band(self) -> float:
        """How far from zero the margin must be to decide: :func:`band_factor` of ``df`` times ``sd``."""
        return band_factor(self.df) * self.sd if self.sd > 0 else 0.0

    @property
    def clearance(self) -> float:
        """``margin / band`` (:func:`clearance`): above 1 it holds, below -1 it fails."""
        return clearance(self.margin, self.sd, self.df)

    def as_dict(self) -> dict:
        return {"name": self.name, "margin": self.margin, "sd": self.sd, "sd_from": self.sd_from,
                "df": self.df, "band": self.band, "clock": self.clock, "verdict": self.verdict}


def combine_verdicts(verdicts: Iterable[str]) -> str:
    """The verdict of a claim made of several comparisons: ``fails`` if one fails, ``holds`` if all hold,
    ``undecided`` otherwise (``not checked`` for none)."""
    vs = list(verdicts)
    bad = [v for v in vs if v not in VERDICTS[:3]]
    if bad:
        raise ValueError(f"unknown verdicts {bad}; expected one of {VERDICTS[:3]}")
    if not vs:
        return "not checked"
    if "fails" in vs:
        return "fails"
    if all(v == "holds" for v in vs):
        return "holds"
    return "undecided"


def _verdict_of(holds, evidence, where: str) -> tuple[str, bool | None]:
    """(verdict, holds) of a claim: from its evidence, or from ``holds`` when it has none; a ``holds`` that
    contradicts the evidence is an error in the check."""
    if not evidence:
        holds = None if holds is None else bool(holds)
        return {True: "holds", False: "fails", None: "not checked"}[holds], holds
    v = combine_verdicts(e.verdict for e in evidence)
    if holds is not None and _HOLDS_OF[v] is not bool(holds):
        raise ValueError(f"{where}: holds={holds!r} contradicts its evidence (verdict {v!r}: "
                         + "; ".join(f"{e.name}: margin {e.margin:.4g}, sd {e.sd:.3g}" for e in evidence)
                         + "); pass holds=None and let the evidence decide")
    return v, _HOLDS_OF[v]


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
        With ``evidence``, pass None: the evidence decides (True for ``holds``, False for ``fails``,
        None for ``undecided``), and a ``holds`` that contradicts it is a ValueError.
    scale : the config profile (``smoke``, ``quick``, ``paper``) plus every departure from the paper.
    paper_value, details, note : optional; ``details`` is JSON-serialisable.
    if_fails : optional; where a failing claim's deciding experiment and its finding are written. Joined to
        ``note`` when the claim fails or is undecided (the claim file then says where to look), dropped
        otherwise.
    evidence : the comparisons the verdict rests on, each with its margin and run-to-run sd
        (:class:`Evidence`); empty for a claim checked without a spread (static items).
    verdict : derived, one of :data:`VERDICTS`.
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
    evidence: tuple = ()
    verdict: str = field(default="", init=False)

    def __post_init__(self):
        ev = tuple(self.evidence or ())
        for e in ev:
            if not isinstance(e, Evidence):
                raise TypeError(f"{self.id}: evidence items must be scalable_bayes.reporting.Evidence, got {type(e)}")
        v, holds = _verdict_of(self.holds, ev, self.id)
        object.__setattr__(self, "evidence", ev)
        object.__setattr__(self, "verdict", v)
        object.__setattr__(self, "holds", holds)

    def as_dict(self) -> dict:
        """The claim file's fields (:func:`write_claim`): ``if_fails`` joined to the note when the claim fails
        or is undecided."""
        d = asdict(self)
        extra = d.pop("if_fails")
        d.pop("verdict")
        d["evidence"] = [e.as_dict() for e in self.evidence]
        if extra and self.verdict in ("fails", "undecided"):
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
    evidence: Iterable[Mapping[str, Any] | Evidence] | None = None,
) -> dict:
    """Write one claim file atomically and return its content.

    Call it with a :class:`Claim` (``write_claim(path, claim)``) or with its fields as keywords.

    Parameters
    ----------
    id : ``"<PAPER>-<item>"`` with the paper's own item name, e.g. ``"VMF-Fig2"``.
    paper : paper key (``vmf``, ``sgnht``, ``sggmc``, ``scir``, ``esca``, ``data``).
    claim : the paper's claim in one sentence.
    measured : what this run measured, in words with the numbers.
    holds : True/False, or None when the claim cannot be checked at this scale (say why in ``note``);
        None when ``evidence`` decides.
    scale : ``"smoke"``, ``"quick"`` or ``"paper"``, plus any scaling-down in words.
    evidence : :class:`Evidence` items (or their ``as_dict()``); the verdict follows from them.
    """
    if claim_obj is not None:
        return write_claim(path, **claim_obj.as_dict())
    missing = [k for k, v in dict(id=id, paper=paper, claim=claim, measured=measured, scale=scale).items() if v is None]
    if missing:
        raise TypeError(f"write_claim: missing claim fields {missing}")
    ev = tuple(e if isinstance(e, Evidence) else Evidence(e["name"], e["margin"], e["sd"], e["sd_from"], e.get("df"),
                                                              bool(e.get("clock", False)))
               for e in (evidence or ()))
    verdict, holds = _verdict_of(holds, ev, str(id))
    content = {
        "id": id,
        "paper": paper,
        "claim": claim,
        "measured": measured,
        "holds": holds,
        "verdict": verdict,
        "scale": scale,
    }
    if ev:
        content["evidence"] = [e.as_dict() for e in ev]
    if paper_value is not None:
        content["paper_value"] = paper_value
    if details:
        content["details"] = dict(details)
    if note:
        content["note"] = note
    write_json_atomic(path, content)
    logger.info("claim %s: %s (%s)", id, verdict, measured)
    return content


def read_claims(paths: Iterable[str | os.PathLike]) -> pd.DataFrame:
    rows = []
    for p in paths:
        with open(p, encoding="utf-8") as fh:
            c = json.load(fh)
        missing = [k for k in CLAIM_KEYS if k not in c]
        if missing:
            raise ValueError(f"claim file {p} lacks keys {missing}; write it with scalable_bayes.reporting.write_claim")
        if "verdict" not in c:  # claim files written before verdicts had three values
            c["verdict"] = {True: "holds", False: "fails", None: "not checked"}[c["holds"]]
        if c["verdict"] not in VERDICTS:
            raise ValueError(f"claim file {p}: verdict {c['verdict']!r} is not one of {VERDICTS}")
        rows.append(c)
    df = pd.DataFrame(rows, columns=list(CLAIM_KEYS) + ["verdict", "paper_value", "note", "evidence"])
    return df.sort_values(["paper", "id"], kind="stable").reset_index(drop=True)


def collect_claims(paths: Iterable[str | os.PathLike], out_md: str | os.PathLike, profile: str) -> pd.DataFrame:
    """Write ``results/claims.md``: one table per paper plus a summary line."""
    df = read_claims(paths)
    lines = [
        "# Claims checked by this run",
        "",
        f"Config profile: `{profile}`. Generated by the `claims` rule from `results/*/claims/*.json`;",
        "do not edit by hand. The verdict compares the measured value with the paper's claim at this scale:",
        f"a claim holds when each of its margins clears its threshold by more than {Z_SPREAD:g} run-to-run sds,",
        "fails when one misses by more, and is undecided at this scale otherwise (margins and bands in the",
        "verdict column; how each sd was measured in the claim file's `evidence`). An sd estimated from n seeds",
        f"widens its band to Student's t with n - 1 degrees of freedom at the same coverage ({BAND_COVERAGE:.2%}):",
        f"{band_factor(1):.2f} sds with two seeds, {band_factor(4):.2f} with five.",
        "",
    ]
    counts = {v: int((df["verdict"] == v).sum()) for v in VERDICTS}
    lines.append(f"Summary: {len(df)} claims, {counts['holds']} hold, {counts['fails']} do not hold, "
                 f"{counts['undecided']} undecided at this scale, {counts['not checked']} not checked.")
    lines.append("")
    for paper, sub in df.groupby("paper", sort=True):
        lines.append(f"## {paper}")
        lines.append("")
        table = pd.DataFrame(
            {
                "id": sub["id"],
                "claim": sub["claim"],
                "measured": sub["measured"],
                "paper": sub["paper_value"].astype(object).fillna(""),
                "verdict": [_verdict_cell(v, ev) for v, ev in zip(sub["verdict"], sub["evidence"])],
                "scale": sub["scale"],
                "note": sub["note"].astype(object).fillna(""),
            }
        )
        lines.append(dataframe_to_markdown(table))
    write_text_atomic(out_md, "\n".join(lines))
    return df


def _verdict_cell(verdict: str, evidence) -> str:
    """The claims table's verdict: the word, plus each non-deterministic margin as ``m ± band`` (2 sd, or
    Student's t band for an sd from a few seeds)."""
    word = {"holds": "holds", "fails": "**does not hold**", "undecided": "*undecided at this scale*",
            "not checked": "not checked"}[verdict]
    if not isinstance(evidence, list):
        return word
    parts = [f"{e['name']}: {e['margin']:.3g} ± {band_factor(e.get('df')) * e['sd']:.2g}"
             + (f" (t, {e['df']:.3g} df)" if e.get("df") is not None else "") for e in evidence if e["sd"] > 0]
    return word + (" (" + "; ".join(parts) + ")" if parts else "")


# ---- Two runs side by side: do the verdicts replicate? ---------------------------------------------------

#: A change between these two verdicts is a hard flip; any other change of verdict is a soft flip.
HARD_FLIP = frozenset({"holds", "fails"})


class ClaimRunError(ValueError):
    """A run to compare is missing, holds no claim files, or holds a claim file that cannot be read."""


def claim_files_of(run: str | os.PathLike) -> list[Path]:
    """The claim files of a run: ``RUN/results/*/claims/*.json``, or ``RUN/*/claims/*.json`` when ``RUN`` is
    a ``results`` directory itself.

    Raises
    ------
    ClaimRunError
        naming the directory that is missing or the pattern that matched no file.
    """
    run = Path(run)
    if not run.is_dir():
        raise ClaimRunError(f"{run}: no such directory (give a run directory holding results/<paper>/claims/*.json, "
                            "or its results directory)")
    results = run / "results" if (run / "results").is_dir() else run
    files = sorted(results.glob("*/claims/*.json"))
    if not files:
        raise ClaimRunError(f"{run}: no claim files ({results}/*/claims/*.json matched nothing; a finished run "
                            "writes results/<paper>/claims/<id>.json)")
    return files


def _run_claims(run) -> dict[str, dict]:
    files = claim_files_of(run)
    frames = []
    for f in files:
        try:
            frames.append(read_claims([f]))
        except (OSError, ValueError, KeyError) as err:  # json.JSONDecodeError is a ValueError
            raise ClaimRunError(f"{run}: claim file {f} cannot be read: {err}") from None
    df = pd.concat(frames, ignore_index=True)
    dup = sorted(df["id"][df["id"].duplicated()])
    if dup:
        raise ClaimRunError(f"{run}: claim ids {dup} appear in more than one claim file")
    out = {}
    for row in df.to_dict("records"):
        ev = row.get("evidence")
        row["evidence"] = {e["name"]: e for e in ev} if isinstance(ev, list) else {}
        out[row["id"]] = row
    return out


def verdict_change(a: str | None, b: str | None) -> str:
    """``""`` when two runs agree, ``"hard flip"`` between holds and fails, ``"soft flip"`` for any other change
    of verdict, ``"only in A"`` / ``"only in B"`` when one run lacks the claim (``None``)."""
    if a is None or b is None:
        return "only in B" if a is None else "only in A"
    if a == b:
        return ""
    return "hard flip" if {a, b} == HARD_FLIP else "soft flip"


def compare_claim_runs(run_a: str | os.PathLike, run_b: str | os.PathLike) -> pd.DataFrame:
    """The claims of two runs side by side (two replications of one config: ``seed_offset``).

    One row per claim and evidence item (a claim without evidence: one row, ``evidence`` empty): ``id``,
    ``paper``, ``verdict_a``, ``verdict_b``, ``change`` (:func:`verdict_change`), ``evidence`` (its name),
    ``margin_a``, ``margin_b``, ``sd_a``, ``sd_b`` (the sd each run measured for the margin), ``sd_two_runs``
    (the sd estimated from the two margins alone, ``|margin_a - margin_b| / sqrt(2)``: one degree of freedom,
    so only a gross mismatch with ``sd_a``, ``sd_b`` means something), ``sd_understated`` (the two margins
    differ by more than the band of ``sqrt(sd_a**2 + sd_b**2)``, ``Z_SPREAD`` times it or Student's t
    quantile of the same coverage at the Welch-Satterthwaite degrees of freedom (:func:`welch_df`) when
    the sds were estimated from a few seeds: the runs' own sds do not cover the difference between them) and ``evidence_change`` (``only in A`` / ``only in B`` for an item one run
    lacks). Claim files written before the three verdicts have no evidence; their verdict is read from
    ``holds`` (:func:`read_claims`).

    Parameters
    ----------
    run_a, run_b : path
        Run directories holding ``results/<paper>/claims/<id>.json``, or those ``results`` directories
        (:func:`claim_files_of`).

    Returns
    -------
    pandas.DataFrame
        The rows above, by paper and claim id; :func:`comparison_summary` counts them and
        :func:`comparison_markdown` renders them.

    Raises
    ------
    ClaimRunError
        when a run is missing, has no claim files, or one cannot be read.
    """
    a, b = _run_claims(run_a), _run_claims(run_b)
    rows = []
    for cid in sorted(set(a) | set(b), key=lambda i: ((a.get(i) or b.get(i))["paper"], i)):
        ca, cb = a.get(cid), b.get(cid)
        base = {"id": cid, "paper": (ca or cb)["paper"], "verdict_a": ca["verdict"] if ca else None,
                "verdict_b": cb["verdict"] if cb else None}
        base["change"] = verdict_change(base["verdict_a"], base["verdict_b"])
        ea, eb = (ca or {}).get("evidence", {}), (cb or {}).get("evidence", {})
        names = list(ea) + [n for n in eb if n not in ea]
        if not names:
            rows.append({**base, "evidence": "", "margin_a": math.nan, "margin_b": math.nan, "sd_a": math.nan,
                         "sd_b": math.nan, "sd_two_runs": math.nan, "sd_understated": False, "evidence_change": ""})
        for name in names:
            xa, xb = ea.get(name), eb.get(name)
            ma, mb = (float(x["margin"]) if x else math.nan for x in (xa, xb))
            sa, sb = (float(x["sd"]) if x else math.nan for x in (xa, xb))
            diff = abs(ma - mb)
            # a relative 1e-9 keeps the rounding of two deterministic margins from reading as a spread
            band = (band_factor(welch_df(sa, xa.get("df"), sb, xb.get("df"))) * math.hypot(sa, sb)
                    if xa and xb else math.nan)
            under = bool(xa and xb and diff > band + 1e-9 * max(1.0, abs(ma), abs(mb)))
            rows.append({**base, "evidence": name, "margin_a": ma, "margin_b": mb, "sd_a": sa, "sd_b": sb,
                         "sd_two_runs": diff / math.sqrt(2.0) if xa and xb else math.nan, "sd_understated": under,
                         "evidence_change": "" if xa and xb else ("only in A" if xa else "only in B")})
    return pd.DataFrame(rows, columns=["id", "paper", "verdict_a", "verdict_b", "change", "evidence", "margin_a",
                                       "margin_b", "sd_a", "sd_b", "sd_two_runs", "sd_understated",
                                       "evidence_change"])


def comparison_summary(df: pd.DataFrame) -> dict:
    """Counts of a :func:`compare_claim_runs` table: ``claims``, ``same``, ``hard_flips``, ``soft_flips``,
    ``only_a``, ``only_b`` (claims), ``sd_understated`` (evidence items), and ``differs``: whether any
    verdict differs (a flip, or a claim one run lacks)."""
    per = df.drop_duplicates("id")
    n = {c: int((per["change"] == c).sum()) for c in ("", "hard flip", "soft flip", "only in A", "only in B")}
    out = {"claims": len(per), "same": n[""], "hard_flips": n["hard flip"], "soft_flips": n["soft flip"],
           "only_a": n["only in A"], "only_b": n["only in B"], "sd_understated": int(df["sd_understated"].sum())}
    out["differs"] = len(per) > n[""]
    return out


def comparison_markdown(df: pd.DataFrame, label_a: str = "A", label_b: str = "B") -> str:
    """A :func:`compare_claim_runs` table as markdown: a summary, then one table per paper (a claim's verdicts
    on its first row, one row per evidence item: both margins, both runs' sds and the sd from the two margins)."""
    s = comparison_summary(df)
    lines = ["# Verdicts of two runs", "", f"A: `{label_a}`", f"B: `{label_b}`", "",
             f"{s['claims']} claims: {s['same']} with the same verdict, {s['hard_flips']} hard flips (holds <-> fails), "
             f"{s['soft_flips']} soft flips (any other change), {s['only_a']} only in A, {s['only_b']} only in B; "
             f"{s['sd_understated']} evidence items whose two margins differ by more than the band of sqrt(sd_A^2 + "
             f"sd_B^2) ({Z_SPREAD:g} sds, or Student's t at the same coverage for sds from a few seeds: the runs' "
             "own sds understated).", ""]
    def word(v):  # a verdict, or "-" where the run lacks the claim (None, read back as NaN)
        return v if isinstance(v, str) else "-"

    per = df.drop_duplicates("id")
    bullets = [f"- **{r.change}** {r.id}: {word(r.verdict_a)} -> {word(r.verdict_b)}"
               for r in per[per["change"] != ""].itertuples()]
    bullets += [f"- **sd understated** {r.id} / {r.evidence}: margins {r.margin_a:.4g} and {r.margin_b:.4g}, "
                f"sds {r.sd_a:.3g} and {r.sd_b:.3g}, sd from the two runs {r.sd_two_runs:.3g}"
                for r in df[df["sd_understated"]].itertuples()]
    lines += bullets + ([""] if bullets else [])

    def num(x, fmt):
        return "" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)

    for paper, sub in df.groupby("paper", sort=True):
        lines += [f"## {paper}", ""]
        seen, table = set(), []
        for r in sub.itertuples():
            first = r.id not in seen
            seen.add(r.id)
            flag = "; ".join(f for f in (r.evidence_change, "sd understated" if r.sd_understated else "") if f)
            table.append({"claim": r.id if first else "", "A": word(r.verdict_a) if first else "",
                          "B": word(r.verdict_b) if first else "", "change": r.change if first else "",
                          "evidence": r.evidence, "margin A": num(r.margin_a, ".4g"), "margin B": num(r.margin_b, ".4g"),
                          "sd A": num(r.sd_a, ".3g"), "sd B": num(r.sd_b, ".3g"),
                          "sd from A, B": num(r.sd_two_runs, ".3g"), "evidence flag": flag})
        lines += [dataframe_to_markdown(pd.DataFrame(table)), ""]
    return "\n".join(lines)
