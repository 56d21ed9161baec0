"""What was verified, checked again: the ``.verified.json`` marker of an extracted data set and
:func:`verify_extracted`, which every build calls before it reads raw files.

Kept apart from :mod:`scalable_bayes.corpora.fetch` (download, extraction) so that a corpus build, which
runs this module's code, does not depend on the fetch code: editing the download logic re-runs no build.
The marker is written by :func:`scalable_bayes.corpora.fetch.fetch_source`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Mapping

from .sources import DataError, check_counts, get_source

logger = logging.getLogger(__name__)

MARKER = ".verified.json"
#: 2: the marker records ``extracted``, ``{relative path: "<size> <sha256>"}`` of every extracted file (one
#: line each in the JSON); version 1 did not
MARKER_VERSION = 2
_CHUNK = 1 << 20

__all__ = ["MARKER", "MARKER_VERSION", "read_marker", "sha256_file", "verify_extracted"]


def sha256_file(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def read_marker(dest_dir: str | os.PathLike) -> dict | None:
    """The ``.verified.json`` of an extracted source, or None when absent or unreadable.

    Parameters
    ----------
    dest_dir : str or os.PathLike
        The directory of the extracted source.

    Returns
    -------
    dict or None
        The parsed marker.
    """
    p = Path(dest_dir) / MARKER
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _extracted_records(root: Path) -> dict[str, str]:
    """``{relative path: "<size> <sha256>"}`` of every regular file under ``root`` (the marker excluded)."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.is_symlink() and p != root / MARKER:
            out[p.relative_to(root).as_posix()] = f"{p.stat().st_size} {sha256_file(p)}"
    return out


def _changed_files(root: Path, records: Mapping[str, str], *, hashes: bool = True) -> list[str]:
    """One line per recorded file under ``root`` that is missing or differs from its record: the sizes of
    all files first (cheap), then, when every size matches and ``hashes``, the sha256 of each."""
    records = {rel: (int(rec.split()[0]), rec.split()[1]) for rel, rec in records.items()}
    problems = []
    for rel, (size, _) in records.items():
        p = root / rel
        try:
            now = p.stat().st_size
        except OSError:
            problems.append(f"{p}: missing (verified: {size:,} bytes)")
            continue
        if now != size:
            problems.append(f"{p}: {now:,} bytes, verified {size:,} (truncated or replaced)")
    if problems or not hashes:
        return problems
    for rel, (size, digest) in records.items():
        if sha256_file(root / rel) != digest:
            problems.append(f"{root / rel}: sha256 differs from the verified one (same size, {size:,} bytes: "
                            "edited or corrupted)")
    return problems


def verify_extracted(source_id: str, dest_dir: str | os.PathLike, *, hashes: bool = True) -> None:
    """Check that the extracted files of ``source_id`` at ``dest_dir`` are those that
    :func:`~scalable_bayes.corpora.fetch.fetch_source` verified.

    Called before anything is built from them, so that a file truncated, edited or deleted after
    verification stops the build instead of being parsed into a different data set. The marker
    (``.verified.json``) records every extracted file's size and sha256; all sizes are compared first,
    then (``hashes=True``) the digests. Files that were added since (e.g. Snakemake's
    ``.snakemake_timestamp``) are ignored.

    A marker written before the sizes and digests were recorded (marker version 1) holds only the
    expected counts: those are measured again (:func:`~scalable_bayes.corpora.sources.check_counts`, the
    verification that version made), and a warning says how to record the digests.

    Parameters
    ----------
    source_id
        A key of :data:`scalable_bayes.corpora.sources.SOURCES`.
    dest_dir
        The directory :func:`~scalable_bayes.corpora.fetch.fetch_source` extracted it into
        (``data/raw/<source_id>`` in the pipeline).
    hashes
        Also compare the sha256 of every file (when all sizes match).

    Raises
    ------
    DataError
        naming each changed or missing file (or the missing marker) and the fix: delete ``dest_dir`` and
        fetch the data set again (``./reproduce data`` in the pipeline).
    """
    src = get_source(source_id)
    dest = Path(dest_dir)
    fix = (f"fix: delete {dest} and fetch the data set again (`./reproduce data` in the pipeline, or "
           f"fetch_source({src.id!r}, ...)): it is then copied and verified afresh")
    m = read_marker(dest)
    if m is None:
        raise DataError(f"data set '{src.id}': {dest} has no readable {MARKER}, so its files were never verified "
                        f"(not made by the fetch step, or the marker was removed); {fix}")
    if m.get("source_id") != src.id:
        raise DataError(f"data set '{src.id}': {dest / MARKER} belongs to data set {m.get('source_id')!r}; {fix}")
    records = m.get("extracted")
    if records is None:  # marker of version 1: counts only
        try:
            check_counts(src.id, dest)
        except DataError as exc:
            raise DataError(f"{exc}; the files at {dest} changed since they were verified; {fix}") from None
        logger.warning("%s: %s was verified by an older version that recorded no file sizes or digests; its "
                       "counts were measured again and match. To record them (a faster, stricter check), delete %s "
                       "and run `./reproduce data` again", src.id, dest, dest)
        return
    changed = _changed_files(dest, records, hashes=hashes)
    if changed:
        shown = "\n  ".join(changed[:10]) + (f"\n  (and {len(changed) - 10} more)" if len(changed) > 10 else "")
        raise DataError(f"data set '{src.id}': {len(changed)} file(s) at {dest} changed after they were verified "
                        f"(a build would read a different data set):\n  {shown}\n{fix}")
