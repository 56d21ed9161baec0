"""Readers of the upstream raw formats, as extracted by :mod:`scalable_bayes.corpora.fetch`.

Each reader takes the extracted source directory and returns plain Python / pandas objects; no
vocabulary decisions are made here (see :mod:`scalable_bayes.corpora.build`).
"""

from __future__ import annotations

import gzip
import html
import logging
import re
from pathlib import Path
from typing import Iterator

import numpy as np
import pandas as pd
import scipy.sparse as sp

logger = logging.getLogger(__name__)


def _find_dir(root: Path, name: str) -> Path:
    """``root/name`` or the unique ``root/**/name`` (archives may carry a top-level folder)."""
    root = Path(root)
    if (root / name).is_dir():
        return root / name
    hits = sorted(p for p in root.rglob(name) if p.is_dir())
    if not hits:
        raise FileNotFoundError(f"no directory {name!r} under {root}: is the source extracted there? re-run its fetch rule")
    return hits[0]


def _find_file(root: Path, name: str) -> Path:
    root = Path(root)
    if (root / name).is_file():
        return root / name
    hits = sorted(p for p in root.rglob(name) if p.is_file())
    if not hits:
        raise FileNotFoundError(f"no file {name!r} under {root}: is the source extracted there? re-run its fetch rule")
    return hits[0]


def strip_newsgroup_header(text: str) -> str:
    """Drop the e-mail header block (everything up to the first blank line), as scikit-learn's
    ``fetch_20newsgroups(remove=('headers',))`` does."""
    _, sep, body = text.partition("\n\n")
    return body if sep else text


def read_20news_bydate(raw_dir: str | Path) -> pd.DataFrame:
    """All 18,846 messages of 20news-bydate: columns doc_id, group, split, text (raw, header kept).

    Files are latin-1; CRLF is normalised to LF. Order: split (train, test), group, numeric id.
    """
    rows = []
    for split, folder in (("train", "20news-bydate-train"), ("test", "20news-bydate-test")):
        base = _find_dir(Path(raw_dir), folder)
        for gdir in sorted(p for p in base.iterdir() if p.is_dir()):
            for f in sorted(gdir.iterdir(), key=lambda p: int(p.name) if p.name.isdigit() else p.name):
                text = f.read_bytes().decode("latin-1").replace("\r\n", "\n").replace("\r", "\n")
                rows.append((f"{split}/{gdir.name}/{f.name}", gdir.name, split, text))
    return pd.DataFrame(rows, columns=["doc_id", "group", "split", "text"])


def read_lines(path: str | Path, encoding: str = "utf-8") -> list[str]:
    """Non-empty lines of a vocabulary file, stripped of the line ending only."""
    text = Path(path).read_text(encoding=encoding)
    return [ln.rstrip("\r") for ln in text.split("\n") if ln.rstrip("\r") != ""]


def read_classic3(raw_dir: str | Path) -> pd.DataFrame:
    """The 3,891 per-abstract files ``classic3/<coll>.<id>``: columns doc_id, collection, text."""
    base = _find_dir(Path(raw_dir), "classic3")
    rows = []
    for f in sorted(base.iterdir()):
        if not f.is_file():
            continue
        coll = f.name.split(".")[0]
        rows.append((f.name, coll, f.read_bytes().decode("latin-1")))
    return pd.DataFrame(rows, columns=["doc_id", "collection", "text"])


_WIKI_DOC = re.compile(r'<doc id="(?P<id>[^"]*)" url="[^"]*" title="(?P<title>[^"]*)">\n?(?P<body>.*?)</doc>', re.S)


def iter_wikipedia_text(raw_dir: str | Path, max_docs: int | None = None) -> Iterator[tuple[str, str, str]]:
    """Yield (page_id, title, text) from WikiExtractor output ``text/<AA..>/wiki_NN`` in file order."""
    root = Path(raw_dir)
    files = sorted(p for p in root.rglob("wiki_*") if p.is_file())
    if not files:
        raise FileNotFoundError(f"no WikiExtractor files (text/*/wiki_*) under {root}; re-run the fetch rule for wikipedia_text")
    n = 0
    for f in files:
        content = f.read_text(encoding="utf-8", errors="replace")
        for m in _WIKI_DOC.finditer(content):
            yield m.group("id"), html.unescape(m.group("title")), m.group("body")
            n += 1
            if max_docs is not None and n >= max_docs:
                return


def read_ohsumed(raw_dir: str | Path) -> pd.DataFrame:
    """OHSUMED single-label abstracts: columns doc_id, category (C01..C23), split, text."""
    base = _find_dir(Path(raw_dir), "ohsumed_single_23")
    rows = []
    for split, folder in (("train", "training"), ("test", "test")):
        sdir = base / folder
        for cdir in sorted(p for p in sdir.iterdir() if p.is_dir()):
            for f in sorted(cdir.iterdir()):
                rows.append((f"{folder}/{cdir.name}/{f.name}", cdir.name, split, f.read_bytes().decode("latin-1")))
    return pd.DataFrame(rows, columns=["doc_id", "category", "split", "text"])


_REUTERS = re.compile(r"<REUTERS(?P<attrs>[^>]*)>(?P<body>.*?)</REUTERS>", re.S)
_ATTR = re.compile(r'(\w+)="([^"]*)"')
_TAG = {t: re.compile(rf"<{t}>(.*?)</{t}>", re.S) for t in ("TITLE", "BODY", "TOPICS")}
_D = re.compile(r"<D>(.*?)</D>", re.S)


def read_reuters21578(raw_dir: str | Path) -> pd.DataFrame:
    """Reuters-21578 records: columns doc_id (NEWID), lewissplit, topics, text (TITLE + BODY, unescaped)."""
    root = Path(raw_dir)
    files = sorted(root.rglob("reut2-*.sgm"))
    if not files:
        raise FileNotFoundError(f"no reut2-*.sgm under {root}; re-run the fetch rule for reuters21578")
    rows = []
    for f in files:
        content = f.read_bytes().decode("latin-1")
        for m in _REUTERS.finditer(content):
            attrs = dict(_ATTR.findall(m.group("attrs")))
            body = m.group("body")
            parts = []
            for t in ("TITLE", "BODY"):
                mm = _TAG[t].search(body)
                if mm:
                    parts.append(html.unescape(mm.group(1)))
            tm = _TAG["TOPICS"].search(body)
            topics = ";".join(_D.findall(tm.group(1))) if tm else ""
            rows.append((attrs.get("NEWID", ""), attrs.get("LEWISSPLIT", ""), topics, "\n".join(parts)))
    return pd.DataFrame(rows, columns=["doc_id", "lewissplit", "topics", "text"])


def read_uci_docword(docword: str | Path, vocab: str | Path) -> tuple[sp.csr_matrix, list[str]]:
    """UCI bag-of-words (``D``, ``W``, ``NNZ`` header, then ``docID wordID count``, 1-based)."""
    opener = gzip.open if str(docword).endswith(".gz") else open
    with opener(docword, "rt", encoding="utf-8") as fh:
        D = int(fh.readline())
        W = int(fh.readline())
        NNZ = int(fh.readline())
        data = np.loadtxt(fh, dtype=np.int64, ndmin=2)
    if data.shape[0] != NNZ:
        raise ValueError(f"{docword}: header says NNZ={NNZ} but {data.shape[0]} entries were read (truncated file?)")
    X = sp.csr_matrix((data[:, 2].astype(np.int32), (data[:, 0] - 1, data[:, 1] - 1)), shape=(D, W))
    words = read_lines(vocab)
    if len(words) != W:
        raise ValueError(f"{vocab}: {len(words)} words but the docword header says W={W}")
    X.sort_indices()
    return X, words


def read_msweb(raw_dir: str | Path) -> tuple[sp.csr_matrix, np.ndarray, list[str]]:
    """Anonymous Microsoft Web Data: binary user x page-attribute matrix over the 294 attributes.

    Returns (X, split, attribute titles) with rows train cases first, then test cases.
    """
    root = Path(raw_dir)
    attrs: dict[int, str] = {}
    cases: list[tuple[str, list[int]]] = []
    for split, name in (("train", "anonymous-msweb.data"), ("test", "anonymous-msweb.test")):
        path = _find_file(root, name)
        current: list[int] | None = None
        for line in path.read_text(encoding="latin-1").splitlines():
            if not line:
                continue
            fields = line.split(",")
            if fields[0] == "A":
                attrs[int(fields[1])] = fields[3].strip('"')
            elif fields[0] == "C":
                current = []
                cases.append((split, current))
            elif fields[0] == "V":
                if current is None:
                    raise ValueError(f"{path}: vote line before any case line")
                current.append(int(fields[1]))
    ids = sorted(attrs)
    col = {a: j for j, a in enumerate(ids)}
    indptr = [0]
    indices: list[int] = []
    for _, votes in cases:
        cols = sorted({col[v] for v in votes})
        indices.extend(cols)
        indptr.append(len(indices))
    X = sp.csr_matrix((np.ones(len(indices), dtype=np.int32), np.array(indices, dtype=np.int64), np.array(indptr)), shape=(len(cases), len(ids)))
    split = np.array([s for s, _ in cases])
    return X, split, [attrs[a] for a in ids]


def read_movielens_100k(raw_dir: str | Path) -> pd.DataFrame:
    """ml-100k ``u.data``: columns user, item (0-based), rating, timestamp."""
    path = _find_file(Path(raw_dir), "u.data")
    df = pd.read_csv(path, sep="\t", names=["user", "item", "rating", "timestamp"], dtype=np.int64)
    df["user"] -= 1
    df["item"] -= 1
    return df


def read_idx(path: str | Path) -> np.ndarray:
    """An IDX (MNIST) file, gzip-compressed or not."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as fh:
        raw = fh.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise ValueError(f"{path}: not an IDX file (bad magic)")
    dtype = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}[raw[2]]
    ndim = raw[3]
    shape = tuple(int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    arr = np.frombuffer(raw, dtype=dtype, offset=4 + 4 * ndim)
    if arr.size != int(np.prod(shape)):
        raise ValueError(f"{path}: header promises {shape} but holds {arr.size} values (truncated?)")
    return arr.reshape(shape)
