"""Obtain a raw data set: from a local mirror or by download, verified, extracted atomically.

    fetch_source("20news_bydate", "data/raw/20news_bydate", mirror="../shared/data")

1. If ``dest_dir/.verified.json`` records a verified copy of the same source (same expected counts)
   and the files it lists are there, nothing is done.
2. Files are taken from ``mirror`` (a directory laid out like ``../shared/data``) when it holds all
   of them; they must match the sha256 and size in :mod:`.sources` exactly. Otherwise they are
   downloaded with retries and exponential back-off: the mirror's packaging when ``urls`` overrides
   name its files (e.g. a loopback server in the tests, or an HTTP copy of the mirror), else the
   publishers' files (``Source.upstream``), each from its URLs in order.
3. Downloads stream to a temporary file while their sha256 is computed; the digest is compared
   with the known ones (strictly where the registry says so, else the counts decide).
4. Archives are extracted member by member (no links, no devices, no paths outside the target:
   path traversal raises) into a temporary directory beside ``dest_dir``; the expected counts are
   checked; a ``.verified.json`` marker is written (with the size and sha256 of every extracted file);
   the directory is renamed into place.
5. Whatever reads the extracted files later calls :func:`verify_extracted` first: a file changed,
   truncated or deleted since it was verified raises :class:`DataError` naming it and the fix, instead
   of being parsed into a smaller data set without a word.

Every failure raises :class:`DataError` naming the data set, the URL(s), the mirror path tried
and the fix; the temporary directory is removed, so nothing half-extracted is left behind.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import http.client
import json
import logging
import os
import shutil
import socket
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path, PurePosixPath
from typing import Mapping

from ..utils import chmod_as_created
from .sources import MIRROR_ENV, SOURCES, DataError, Source, SourceFile, check_counts, get_source
from .verify import (MARKER, MARKER_VERSION, _changed_files, _extracted_records, read_marker, sha256_file,
                     verify_extracted)

logger = logging.getLogger(__name__)

_CHUNK = 1 << 20
_USER_AGENT = "scalable_bayes-fetch/0.1 (+urllib)"

__all__ = ["DataError", "MARKER", "fetch_source", "verify_mirror", "verify_extracted", "resolve_mirror",
           "read_marker", "sha256_file", "download"]


# --------------------------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------------------------

def resolve_mirror(configured: str | os.PathLike | None = None) -> Path | None:
    """The mirror directory: the config value if set, else ``$SCALABLE_BAYES_MIRROR``, else None.

    Parameters
    ----------
    configured : str or os.PathLike, optional
        The configured mirror (``data.mirror``); None or "" falls back to the environment.

    Returns
    -------
    pathlib.Path or None
        The mirror directory (``~`` expanded), or None when neither is set.
    """
    value = configured if configured not in (None, "") else os.environ.get(MIRROR_ENV, "")
    return Path(value).expanduser() if value else None


def _interactive() -> bool:
    return sys.stderr.isatty() and os.environ.get("CI", "").lower() not in ("1", "true")


def _fix_hint(src: Source, f: SourceFile | None, mirror: Path | None) -> str:
    if f is not None and f.mirror_path:
        where = (f"or place the file at {mirror / f.mirror_path}" if mirror is not None
                 else f"(the mirror must hold '{f.mirror_path}')")
    else:
        where = "or check that the download URL is reachable from this machine"
    return (f"fix: set `data.mirror` in the config or the environment variable {MIRROR_ENV} to a directory "
            f"laid out like ../shared/data {where}; with internet access the upstream URL is used otherwise")


def _error(src: Source, problem: str, *, f: SourceFile | None = None, urls: tuple[str, ...] = (),
           mirror: Path | None = None) -> DataError:
    if f is not None and f.mirror_path:
        tried = str(mirror / f.mirror_path) if mirror is not None else f"none (no mirror configured; would be '<mirror>/{f.mirror_path}')"
    else:
        tried = str(mirror) if mirror is not None else "none (no mirror configured)"
    if not urls and f is not None:
        urls = f.urls
    lines = [f"data set '{src.id}' ({src.description}): {problem}",
             f"  URL: {', '.join(urls) if urls else 'none (this file exists only in the mirror)'}",
             f"  mirror path tried: {tried}",
             f"  {_fix_hint(src, f, mirror)}"]
    return DataError("\n".join(lines))


# --------------------------------------------------------------------------------------------
# marker
# --------------------------------------------------------------------------------------------

def _marker_valid(src: Source, dest: Path) -> bool:
    m = read_marker(dest)
    if not m or m.get("source_id") != src.id or m.get("version") != MARKER_VERSION:
        return False
    if m.get("expected") != dict(src.expected):
        return False
    if not all((dest / e).exists() for e in m.get("entries", [])):
        return False
    changed = _changed_files(dest, m.get("extracted", {}))
    if changed:
        logger.warning("%s: %d file(s) at %s changed since they were verified (%s); fetching the data set again",
                       src.id, len(changed), dest, changed[0])
        return False
    return True


# --------------------------------------------------------------------------------------------
# download
# --------------------------------------------------------------------------------------------

class _Retryable(Exception):
    pass


def download(url: str, dest: Path, *, timeout: float = 60, retries: int = 3, backoff: float = 1.0,
             expected_size: int | None = None, desc: str = "") -> tuple[str, int]:
    """Stream ``url`` to ``dest`` (overwritten); return ``(sha256, size)``.

    Tries ``1 + retries`` times, sleeping ``backoff * 2**k`` seconds between attempts. Connection
    errors, time-outs, HTTP 5xx/408/429 and short reads are retried; other HTTP errors are not.
    Raises OSError (``urllib.error.URLError`` or ``_Retryable``) when every attempt failed.

    Parameters
    ----------
    url : str
        The URL.
    dest : pathlib.Path
        The file written.
    timeout : float, default 60
        Socket time-out, in seconds.
    retries : int, default 3
        Extra attempts.
    backoff : float, default 1.0
        First delay between attempts, in seconds (doubling each retry).
    expected_size : int, optional
        Size in bytes shown by the progress report when the server sends no Content-Length.
    desc : str, default ""
        Label of the progress report (default the file name).

    Returns
    -------
    sha256 : str
        Hex digest of the downloaded bytes.
    size : int
        Number of bytes.
    """
    last: Exception | None = None
    for attempt in range(retries + 1):
        if attempt:
            delay = backoff * 2 ** (attempt - 1)
            logger.warning("retrying %s in %.2f s (attempt %d of %d): %s", url, delay, attempt + 1, retries + 1, last)
            time.sleep(delay)
        try:
            return _download_once(url, dest, timeout=timeout, expected_size=expected_size, desc=desc)
        except urllib.error.HTTPError as exc:
            last = exc
            if not (exc.code >= 500 or exc.code in (408, 429)):
                raise
        except (urllib.error.URLError, socket.timeout, TimeoutError, ConnectionError,
                http.client.HTTPException, _Retryable) as exc:
            last = exc
    assert last is not None
    if isinstance(last, OSError):
        raise last
    raise OSError(str(last))


def _download_once(url: str, dest: Path, *, timeout: float, expected_size: int | None, desc: str) -> tuple[str, int]:
    req = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
    h = hashlib.sha256()
    n = 0
    with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 (http/https/file from the registry)
        length = resp.headers.get("Content-Length")
        total = int(length) if length and length.isdigit() else expected_size
        logger.info("downloading %s (%s bytes) -> %s", url, f"{total:,}" if total else "unknown", dest)
        bar = None
        if _interactive():
            from tqdm.auto import tqdm
            bar = tqdm(total=total, unit="B", unit_scale=True, desc=desc or dest.name, leave=False)
        next_log = 0.25
        try:
            with open(dest, "wb") as out:
                while chunk := resp.read(_CHUNK):
                    out.write(chunk)
                    h.update(chunk)
                    n += len(chunk)
                    if bar is not None:
                        bar.update(len(chunk))
                    elif total and n / total >= next_log:
                        logger.info("  %s: %d%% (%s bytes)", desc or dest.name, int(100 * n / total), f"{n:,}")
                        next_log += 0.25
        finally:
            if bar is not None:
                bar.close()
    if length and length.isdigit() and n != int(length):
        raise _Retryable(f"short read: got {n:,} of {int(length):,} bytes")
    return h.hexdigest(), n


# --------------------------------------------------------------------------------------------
# extraction
# --------------------------------------------------------------------------------------------

def _safe_relpath(name: str) -> PurePosixPath | None:
    """Normalised relative member path, or None for the archive root; raises on traversal."""
    name = name.replace("\\", "/")
    p = PurePosixPath(name)
    if p.is_absolute() or name.startswith("/") or (p.parts and ":" in p.parts[0]):
        raise _Unsafe(f"absolute member path {name!r}")
    parts = [x for x in p.parts if x not in ("", ".")]
    if any(x == ".." for x in parts):
        raise _Unsafe(f"member path {name!r} leaves the extraction directory")
    return PurePosixPath(*parts) if parts else None


class _Unsafe(Exception):
    pass


def _remap(rel: PurePosixPath, members: tuple[tuple[str, str], ...]) -> PurePosixPath | None:
    """Apply the ``(archive_prefix, dest_prefix)`` remaps; None = skip this member."""
    if not members:
        return rel
    s = rel.as_posix()
    for prefix, dst in members:
        pre, cand = prefix.rstrip("/"), s
        if pre.startswith("*/"):
            _, sep, rest = s.partition("/")
            if not sep:
                continue
            cand, pre = rest, pre[2:]
        if cand == pre:
            return _safe_relpath(dst)
        if cand.startswith(pre + "/"):
            return _safe_relpath(dst.rstrip("/") + "/" + cand[len(pre) + 1:])
    return None


def _place(root: Path, target: str, rel: PurePosixPath) -> Path:
    base = (root / target).resolve() if target else root.resolve()
    out = (base / rel).resolve()
    if base != out and base not in out.parents:
        raise _Unsafe(f"member {rel.as_posix()!r} resolves outside the extraction directory")
    return out


def _extract_tar(path: Path, root: Path, f: SourceFile) -> int:
    n = 0
    with tarfile.open(path, mode="r:*") as tf:
        for m in tf:
            rel = _safe_relpath(m.name)
            if rel is None:
                continue
            rel = _remap(rel, f.members)
            if rel is None:
                continue
            out = _place(root, f.target, rel)
            if m.isdir():
                out.mkdir(parents=True, exist_ok=True)
            elif m.isfile():
                out.parent.mkdir(parents=True, exist_ok=True)
                src = tf.extractfile(m)
                assert src is not None
                with src, open(out, "wb") as dst:
                    shutil.copyfileobj(src, dst, _CHUNK)
                n += 1
            else:
                logger.warning("%s: skipping member %s (not a regular file or directory)", path.name, m.name)
    return n


def _extract_zip(path: Path, root: Path, f: SourceFile) -> int:
    n = 0
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            rel = _safe_relpath(info.filename)
            if rel is None:
                continue
            rel = _remap(rel, f.members)
            if rel is None:
                continue
            out = _place(root, f.target, rel)
            if info.is_dir():
                out.mkdir(parents=True, exist_ok=True)
                continue
            out.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, open(out, "wb") as dst:
                shutil.copyfileobj(src, dst, _CHUNK)
            n += 1
    return n


def _gunzip(path: Path, out: Path) -> str:
    h = hashlib.sha256()
    out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "rb") as src, open(out, "wb") as dst:
        while chunk := src.read(_CHUNK):
            dst.write(chunk)
            h.update(chunk)
    return h.hexdigest()


_CORRUPT = (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError, ValueError, __import__("zlib").error,
            __import__("lzma").LZMAError)


def _install_file(src: Source, f: SourceFile, local: Path, root: Path, *, move: bool, origin: str,
                  mirror: Path | None) -> dict:
    """Extract or copy one verified file into ``root``; return what the marker records about it."""
    info: dict = {"name": f.name}
    try:
        if f.extract == "tar":
            info["members_extracted"] = _extract_tar(local, root, f)
        elif f.extract == "zip":
            info["members_extracted"] = _extract_zip(local, root, f)
        elif f.extract == "gz":
            out = _place(root, "", _safe_relpath(f.target) or PurePosixPath(f.name))
            digest = _gunzip(local, out)
            info["content_sha256"] = digest
            if f.content_sha256 and digest != f.content_sha256:
                raise _error(src, f"checksum mismatch of the decompressed '{f.target}' from {origin}: sha256 "
                                  f"{digest}, expected {f.content_sha256} (corrupt or different file)",
                             f=f, mirror=mirror)
        else:
            out = _place(root, "", _safe_relpath(f.target) or PurePosixPath(f.name))
            out.parent.mkdir(parents=True, exist_ok=True)
            if move:
                os.replace(local, out)
            else:
                shutil.copyfile(local, out)
    except DataError:
        raise
    except _Unsafe as exc:
        raise _error(src, f"unsafe archive '{f.name}' from {origin}: {exc} (path traversal refused; "
                          "the archive is corrupt or malicious)", f=f, mirror=mirror) from None
    except _CORRUPT as exc:
        raise _error(src, f"corrupt or truncated archive '{f.name}' from {origin}: {type(exc).__name__}: {exc}",
                     f=f, mirror=mirror) from None
    return info


# --------------------------------------------------------------------------------------------
# the entry point
# --------------------------------------------------------------------------------------------

def _plan(src: Source, mirror: Path | None, urls: Mapping[str, str]) -> tuple[str, tuple[SourceFile, ...]]:
    """``("mirror"|"mirror-url"|"upstream", files)``."""
    if mirror is not None:
        if not mirror.is_dir():
            logger.warning("mirror directory %s does not exist; trying the download URLs", mirror)
        elif all(f.mirror_path and (mirror / f.mirror_path).is_file() for f in src.files):
            return "mirror", src.files
        else:
            missing = [f.mirror_path or f.name for f in src.files
                       if not (f.mirror_path and (mirror / f.mirror_path).is_file())]
            logger.warning("mirror %s lacks %s for %s; trying the download URLs", mirror, ", ".join(missing), src.id)
    if any(f.name in urls for f in src.files):
        return "mirror-url", src.files
    return "upstream", src.upstream


def fetch_source(source_id: str, dest_dir: str | os.PathLike, *, mirror: str | os.PathLike | None = None,
                 urls: Mapping[str, str] | None = None, retries: int = 3, timeout: float = 60,
                 backoff: float = 1.0) -> Path:
    """Obtain, verify and extract data set ``source_id`` into ``dest_dir``; return ``dest_dir``.

    Parameters
    ----------
    source_id : str
        A key of :data:`scalable_bayes.corpora.sources.SOURCES`.
    dest_dir : str or os.PathLike
        Directory that will hold the extracted layout (``Source.layout``) plus ``.verified.json``.
        It is replaced atomically; a temporary sibling ``.<name>.tmp-*`` is used while working.
    mirror : str or os.PathLike, optional
        Directory laid out like ``../shared/data``; used when it holds every file of the source.
        Not read from the environment here: pass ``resolve_mirror(config_value)`` for that.
    urls : mapping of str to str, optional
        ``{file name: URL}`` overrides of the registry's URLs (file names as in ``SourceFile.name``).
        Naming a file of ``Source.files`` downloads the mirror's packaging from that URL. Names of
        other sources' files are ignored (one config dict serves all); unknown names raise.
    retries, timeout, backoff : int, float, float, defaults 3, 60, 1.0
        Extra attempts per URL, socket time-out in seconds, first back-off delay in seconds
        (doubling each retry).

    Returns
    -------
    pathlib.Path
        ``dest_dir``.

    Raises
    ------
    DataError
        When the data cannot be obtained or fails a check; the message names the data set, the URL,
        the mirror path tried and the fix. Nothing is left at ``dest_dir`` or beside it.
    """
    src = get_source(source_id)
    dest = Path(dest_dir)
    mirror_p = Path(mirror).expanduser() if mirror not in (None, "") else None
    urls = dict(urls or {})
    all_names = {f.name for s in SOURCES.values() for f in (*s.files, *s.upstream)}
    unknown = set(urls) - all_names
    if unknown:
        raise DataError(f"data set '{src.id}': urls= names files no data set has: {sorted(unknown)}; file names "
                        f"of '{src.id}': {sorted({f.name for f in (*src.files, *src.upstream)})}")
    own = {f.name for f in (*src.files, *src.upstream)}
    urls = {k: v for k, v in urls.items() if k in own}  # one config dict serves every source
    if _marker_valid(src, dest):
        logger.info("%s: verified copy already at %s; nothing to do", src.id, dest)
        return dest

    mode, files = _plan(src, mirror_p, urls)
    logger.info("%s: fetching %d file(s) (%s)", src.id, len(files), mode)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.tmp-", dir=dest.parent))
    try:
        records = []
        for f in files:
            records.append(_obtain_and_install(src, f, mode, tmp, mirror_p, urls, retries=retries,
                                               timeout=timeout, backoff=backoff))
        shutil.rmtree(tmp / ".download", ignore_errors=True)
        if mode == "upstream" and src.postprocess is not None:
            logger.info("%s: deriving the mirror layout from the upstream files", src.id)
            src.postprocess(tmp)
        try:
            counts = check_counts(src.id, tmp)
        except DataError as exc:
            raise _error(src, str(exc).split(": ", 1)[-1] + " (the archive is incomplete or a different version)",
                         f=files[0] if len(files) == 1 else None,
                         urls=tuple(r.get("url", "") for r in records if r.get("url")), mirror=mirror_p) from None
        logger.info("%s: counts verified: %s", src.id,
                    ", ".join(f"{k}={v:,}" for k, v in counts.items() if "/" not in k))
        entries = sorted(p.name for p in tmp.iterdir())
        marker = {"version": MARKER_VERSION, "source_id": src.id, "description": src.description, "mode": mode,
                  "files": records, "expected": dict(src.expected), "counts": counts, "entries": entries,
                  "layout": src.layout}
        marker["extracted"] = _extracted_records(tmp)  # what was verified: the size and sha256 of every file
        (tmp / MARKER).write_text(json.dumps(marker, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        chmod_as_created(tmp)  # mkdtemp makes it 0700; the umask decides, as for any directory
        _replace_dir(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    logger.info("%s: ready at %s", src.id, dest)
    return dest


def _replace_dir(tmp: Path, dest: Path) -> None:
    old = None
    if dest.exists() or dest.is_symlink():
        old = Path(tempfile.mkdtemp(prefix=f".{dest.name}.old-", dir=dest.parent))
        os.replace(dest, old / "x")
    os.replace(tmp, dest)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _obtain_and_install(src: Source, f: SourceFile, mode: str, tmp: Path, mirror: Path | None,
                        urls: Mapping[str, str], *, retries: int, timeout: float, backoff: float) -> dict:
    if mode == "mirror":
        assert mirror is not None and f.mirror_path
        path = mirror / f.mirror_path
        size = path.stat().st_size
        if f.size is not None and size != f.size:
            raise _error(src, f"size mismatch of mirror file {path}: {size:,} bytes, expected {f.size:,} "
                              "(truncated or a different version)", f=f, mirror=mirror)
        digest = sha256_file(path)
        if f.sha256 and digest != f.sha256:
            raise _error(src, f"checksum mismatch of mirror file {path}: sha256 {digest}, expected {f.sha256} "
                              "(corrupt or a different version)", f=f, mirror=mirror)
        logger.info("%s: using mirror file %s (sha256 verified)", src.id, path)
        info = _install_file(src, f, path, tmp, move=False, origin=str(path), mirror=mirror)
        info.update(origin=str(path), sha256=digest, size=size)
        return info

    candidates = (urls[f.name],) if f.name in urls else f.urls
    if not candidates:
        problem = ("not in the mirror and there is no upstream download for it"
                   if mirror is not None else "no mirror configured and there is no upstream download for it")
        raise _error(src, f"file '{f.name}' is {problem}", f=f, mirror=mirror)
    dl_dir = tmp / ".download"
    dl_dir.mkdir(exist_ok=True)
    local = dl_dir / f.name
    failures = []
    for url in candidates:
        try:
            digest, size = download(url, local, timeout=timeout, retries=retries, backoff=backoff,
                                    expected_size=f.size, desc=f"{src.id}:{f.name}")
        except (OSError, ValueError) as exc:
            failures.append(f"{url}: {type(exc).__name__}: {exc}")
            continue
        break
    else:
        what = "no mirror configured" if mirror is None else f"mirror {mirror} does not hold it"
        raise _error(src, f"download of '{f.name}' failed after {retries + 1} attempt(s) per URL ({what}); "
                          + "; ".join(failures), f=f, urls=candidates, mirror=mirror)
    if digest in f.known_digests:
        logger.info("%s: %s sha256 verified", src.id, f.name)
    elif f.strict and f.known_digests:
        raise _error(src, f"checksum mismatch of '{f.name}' downloaded from {url}: sha256 {digest} "
                          f"({size:,} bytes), expected {' or '.join(f.known_digests)}"
                          + (f" ({f.size:,} bytes)" if f.size else "")
                          + " (truncated, corrupt or a different version)", f=f, urls=(url,), mirror=mirror)
    else:
        logger.warning("%s: %s from %s has sha256 %s, which is not a known digest; verifying it by the "
                       "expected counts instead", src.id, f.name, url, digest)
    info = _install_file(src, f, local, tmp, move=True, origin=url, mirror=mirror)
    with contextlib.suppress(FileNotFoundError):
        local.unlink()
    info.update(url=url, sha256=digest, size=size, digest_known=digest in f.known_digests)
    return info


def verify_mirror(mirror: str | os.PathLike | None = None, *, checksums: bool = True):
    """One row per file of every source: whether ``mirror`` holds it with the right size and sha256.

    Columns: ``source``, ``file``, ``mirror_path``, ``status`` (``ok``, ``missing``, ``size mismatch``,
    ``checksum mismatch``, ``not in mirror`` for files the mirror never holds, ``present`` when
    ``checksums=False``), ``size``, ``expected_size``, ``sha256``. Does not extract anything.

    Parameters
    ----------
    mirror : str or os.PathLike, optional
        The mirror; None falls back to ``$SCALABLE_BAYES_MIRROR`` (:func:`resolve_mirror`).
    checksums : bool, default True
        Compute the sha256 of every file present (False: sizes only).

    Returns
    -------
    pandas.DataFrame
        One row per file, the columns above.
    """
    import pandas as pd

    root = resolve_mirror(mirror)
    rows = []
    for src in SOURCES.values():
        for f in src.files:
            row = {"source": src.id, "file": f.name, "mirror_path": f.mirror_path, "status": "",
                   "size": None, "expected_size": f.size, "sha256": None}
            path = root / f.mirror_path if (root is not None and f.mirror_path) else None
            if f.mirror_path is None:
                row["status"] = "not in mirror"
            elif path is None or not path.is_file():
                row["status"] = "missing"
            else:
                row["size"] = path.stat().st_size
                if f.size is not None and row["size"] != f.size:
                    row["status"] = "size mismatch"
                elif not checksums:
                    row["status"] = "present"
                else:
                    row["sha256"] = sha256_file(path)
                    row["status"] = "ok" if (not f.sha256 or row["sha256"] == f.sha256) else "checksum mismatch"
            rows.append(row)
    return pd.DataFrame(rows, columns=["source", "file", "mirror_path", "status", "size", "expected_size", "sha256"])
