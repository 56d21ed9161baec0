"""Registry of every raw data set the pipeline uses: upstream URLs, mirror paths, digests, counts.

Each :class:`Source` describes one data set of ``../shared/data/PROVENANCE.md`` twice over:

* ``files``: the files as the local mirror holds them (``data.mirror`` in the config, or the
  environment variable ``SCALABLE_BAYES_MIRROR``). Their sha256 and byte size are known exactly,
  so a copy taken from the mirror (or served from it over HTTP) is verified strictly.
* ``upstream_files``: the files as their original publishers ship them, when that packaging differs
  from the mirror's (the mirror's tarballs were rebuilt deterministically, some sets were bundled
  into one archive, Wikipedia and OHSUMED come from GitHub repositories at fixed commits). A
  download of these is verified by its sha256 where one is known and always by the expected
  counts after extraction. Both packagings extract to the same layout under ``dest_dir``.

``expected`` holds the documented counts (documents per split, records, vocabulary lines ...) and
``count_source(source_id, root)`` measures them on an extracted directory; ``check_counts`` compares.
The download, verification and extraction logic lives in :mod:`scalable_bayes.corpora.fetch`.
"""

from __future__ import annotations

import gzip
import logging
import lzma
import re
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

logger = logging.getLogger(__name__)

MIRROR_ENV = "SCALABLE_BAYES_MIRROR"

_WIKIVISUAL_COMMIT = "1c0fac92f29f17c1603bfffbe864e0dfdff66897"
_TEXTGCN_COMMIT = "962223652e9bb164ac2d83cd09fc7b8845ce860b"
_ONLINELDA_COMMIT = "dee5dcf9492d2b2870ba5c1fc14ac41cbf83596c"
_UCI_BOW = "https://archive.ics.uci.edu/ml/machine-learning-databases/bag-of-words"
_UCI_MSWEB = "https://archive.ics.uci.edu/ml/machine-learning-databases/anonymous"
_QWONE = "http://qwone.com/~jason/20Newsgroups"
_GLASGOW = "http://ir.dcs.gla.ac.uk/resources/test_collections"


class DataError(ValueError):
    """A data set cannot be obtained or fails verification; the message names the fix."""


@dataclass(frozen=True)
class SourceFile:
    """One file of a data set.

    Parameters
    ----------
    name
        File name, unique within the source; the key of ``fetch_source(urls=...)`` overrides.
    urls
        Upstream URLs, tried in order. Empty: the file exists only in the mirror.
    mirror_path
        Path relative to the mirror root, or None when the mirror does not hold this file.
    sha256, size
        Digest and byte size of the file (the mirror's copy for ``Source.files``; the upstream
        file for ``Source.upstream_files`` when known).
    alt_sha256
        Other digests that identify a good copy (e.g. the upstream tarball sklearn pins).
    strict
        If True a download whose digest is none of ``sha256``/``alt_sha256`` is rejected. If False
        (upstream digest unknown) it is accepted with a warning and verified by the counts.
        Files taken from the mirror directory are always verified strictly.
    extract
        ``"tar"`` (plain, gzip, bzip2 or xz: detected from the bytes), ``"zip"``, ``"gz"`` (a single
        gzip-compressed file) or None (copied as it is).
    target
        For ``tar``/``zip``: directory under ``dest_dir`` to extract into (``""`` = ``dest_dir``).
        For ``gz`` and plain files: the output file path under ``dest_dir``.
    members
        For archives: ``(archive_prefix, dest_prefix)`` pairs. Only members under one of the
        prefixes are extracted, renamed to ``dest_prefix``; a prefix starting with ``*/`` matches
        any first path component (GitHub tarballs name it ``<repo>-<commit>``). Empty: all members.
    content_sha256
        For ``gz``: digest of the decompressed bytes (identical upstream even when the ``.gz``
        wrapper differs); checked strictly.
    """

    name: str
    urls: tuple[str, ...] = ()
    mirror_path: str | None = None
    sha256: str | None = None
    size: int | None = None
    alt_sha256: tuple[str, ...] = ()
    strict: bool = True
    extract: str | None = None
    target: str = ""
    members: tuple[tuple[str, str], ...] = ()
    content_sha256: str | None = None

    def __post_init__(self) -> None:
        if self.extract not in (None, "tar", "zip", "gz"):
            raise ValueError(f"SourceFile {self.name!r}: extract={self.extract!r}; use 'tar', 'zip', 'gz' or None")
        if self.extract in (None, "gz") and not self.target:
            raise ValueError(f"SourceFile {self.name!r}: a plain or .gz file needs a target file path")
        if self.members and self.extract not in ("tar", "zip"):
            raise ValueError(f"SourceFile {self.name!r}: members= only applies to tar/zip archives")

    @property
    def known_digests(self) -> tuple[str, ...]:
        return tuple(d for d in (self.sha256, *self.alt_sha256) if d)


@dataclass(frozen=True)
class Source:
    """One data set: its mirror files, its upstream files and its expected counts.

    ``postprocess(root)`` runs after the upstream files are extracted (only in upstream mode) to
    derive files the mirror archive already contains, so that both modes give one layout.
    ``counter(root) -> dict`` measures the counts compared with ``expected``.
    """

    id: str
    description: str
    files: tuple[SourceFile, ...]
    expected: Mapping[str, int]
    counter: Callable[[Path], dict[str, int]]
    upstream_files: tuple[SourceFile, ...] | None = None
    postprocess: Callable[[Path], None] | None = None
    layout: str = ""
    notes: str = ""

    def __post_init__(self) -> None:
        for group in (self.files, self.upstream_files or ()):
            if not isinstance(group, tuple) or not all(isinstance(f, SourceFile) for f in group):
                raise TypeError(f"Source {self.id!r}: files/upstream_files must be tuples of SourceFile")
        names = [f.name for f in self.files]
        if len(set(names)) != len(names):
            raise ValueError(f"Source {self.id!r}: duplicate file names {names}")

    @property
    def upstream(self) -> tuple[SourceFile, ...]:
        """The files a download from the publishers fetches (``files`` when the packaging is the same)."""
        return self.files if self.upstream_files is None else self.upstream_files


# --------------------------------------------------------------------------------------------
# counting helpers (read the extracted layout; each is cheap except the Wikipedia text scan)
# --------------------------------------------------------------------------------------------

def _count_lines(path: Path) -> int:
    n = 0
    last = b"\n"
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            n += chunk.count(b"\n")
            last = chunk[-1:]
    return n + (0 if last == b"\n" else 1)  # a last line without newline still counts


def _unique_nonempty_lines(path: Path, encoding: str = "utf-8") -> tuple[int, int]:
    lines = [ln for ln in path.read_text(encoding=encoding, errors="replace").splitlines() if ln.strip()]
    return len(lines), len(set(lines))


def _files_in(path: Path) -> list[Path]:
    return [p for p in path.iterdir() if p.is_file()] if path.is_dir() else []


def _need(root: Path, rel: str) -> Path:
    p = root / rel
    if not p.exists():
        raise DataError(f"expected {rel!r} under {root} after extraction, but it is missing")
    return p


NEWS20_GROUPS = (
    "alt.atheism", "comp.graphics", "comp.os.ms-windows.misc", "comp.sys.ibm.pc.hardware",
    "comp.sys.mac.hardware", "comp.windows.x", "misc.forsale", "rec.autos", "rec.motorcycles",
    "rec.sport.baseball", "rec.sport.hockey", "sci.crypt", "sci.electronics", "sci.med",
    "sci.space", "soc.religion.christian", "talk.politics.guns", "talk.politics.mideast",
    "talk.politics.misc", "talk.religion.misc",
)
_NEWS20_TRAIN = (480, 584, 591, 590, 578, 593, 585, 594, 598, 597, 600, 595, 591, 594, 593, 599, 546, 564, 465, 377)
_NEWS20_TEST = (319, 389, 394, 392, 385, 395, 390, 396, 398, 397, 399, 396, 393, 396, 394, 398, 364, 376, 310, 251)
NEWS20_DIFFERENT = ("rec.sport.baseball", "sci.space", "alt.atheism")


def count_20news_bydate(root: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    for split in ("train", "test"):
        base = _need(root, f"20news-bydate-{split}")
        groups = sorted(p for p in base.iterdir() if p.is_dir())
        out[f"{split}_groups"] = len(groups)
        total = 0
        for g in groups:
            n = len(_files_in(g))
            out[f"{split}/{g.name}"] = n
            total += n
        out[f"{split}_docs"] = total
        out[f"{split}_different_docs"] = sum(out.get(f"{split}/{g}", 0) for g in NEWS20_DIFFERENT)
    return out


def _expected_20news() -> dict[str, int]:
    exp: dict[str, int] = {"train_docs": 11314, "test_docs": 7532, "train_groups": 20, "test_groups": 20,
                           "train_different_docs": 1670, "test_different_docs": 1110}
    for g, a, b in zip(NEWS20_GROUPS, _NEWS20_TRAIN, _NEWS20_TEST):
        exp[f"train/{g}"] = a
        exp[f"test/{g}"] = b
    return exp


def _vocab_counter(rel: str, encoding: str = "utf-8") -> Callable[[Path], dict[str, int]]:
    def count(root: Path) -> dict[str, int]:
        n, u = _unique_nonempty_lines(_need(root, rel), encoding)
        return {"words": n, "unique_words": u}
    return count


_SMART_RECORD = re.compile(rb"^\.I\s+\d+", re.MULTILINE)


def _smart_all_file(coll_dir: Path) -> Path | None:
    """The ``*.all*`` document file of a SMART collection directory (any case, any depth)."""
    if not coll_dir.is_dir():
        return None
    hits = sorted(p for p in coll_dir.rglob("*") if p.is_file() and ".all" in p.name.lower())
    return hits[0] if hits else None


def count_classic3(root: Path) -> dict[str, int]:
    docs = _need(root, "classic3")
    names = [p.name for p in _files_in(docs)]
    out = {"docs": len(names)}
    for coll in ("cran", "cisi", "med"):
        out[f"{coll}_docs"] = sum(1 for n in names if n.startswith(coll + "."))
        f = _smart_all_file(root / "smart_collections" / coll)
        out[f"{coll}_records"] = len(_SMART_RECORD.findall(f.read_bytes())) if f else 0
    return out


def _parse_smart(text: str) -> list[dict]:
    """Records of a SMART collection file: ``.I id`` then fields ``.T``, ``.A``, ``.W`` ..."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    records: list[dict] = []
    cur: dict | None = None
    fld: str | None = None
    for line in text.split("\n"):
        m = re.match(r"^\.I\s+(\d+)\s*$", line)
        if m:
            cur = {"id": int(m.group(1))}
            records.append(cur)
            fld = None
            continue
        m = re.match(r"^\.([A-Z])\s*$", line)
        if m and cur is not None:
            fld = m.group(1)
            cur.setdefault(fld, [])
            continue
        if cur is not None and fld is not None:
            cur[fld].append(line)
    return records


def classic3_documents(smart_text: str) -> list[tuple[int, str]]:
    """One ``(id, text)`` per non-empty ``.W`` record, by the rules in PROVENANCE.md section 2.

    Text = the ``.W`` abstract (stripped, line breaks kept), preceded by the ``.T`` title on its own
    line unless the abstract already starts with the title (whitespace-insensitive, as in CRAN),
    plus a final newline. Records with an empty ``.W`` are dropped (CRAN 471 and 995).
    """
    out = []
    for rec in _parse_smart(smart_text):
        title = "\n".join(rec.get("T", [])).strip()
        body = "\n".join(rec.get("W", [])).strip()
        if not body:
            continue
        if title and not " ".join(body.split()).startswith(" ".join(title.split())):
            body = title + "\n" + body
        out.append((rec["id"], body + "\n"))
    return out


def derive_classic3(root: Path) -> None:
    """Write ``classic3/<coll>.<6-digit id>`` from ``smart_collections/<coll>/*.all*`` (upstream mode).

    Reproduces the mirror archive's per-abstract layout byte for byte from the mirror's own SMART
    files (tested); upstream copies of the collections may differ in whitespace.
    """
    out_dir = root / "classic3"
    out_dir.mkdir(parents=True, exist_ok=True)
    for coll in ("cran", "cisi", "med"):
        f = _smart_all_file(root / "smart_collections" / coll)
        if f is None:
            raise DataError(f"classic3: no '*.all*' document file under smart_collections/{coll} "
                            "after extracting the upstream SMART collection")
        for doc_id, text in classic3_documents(f.read_text(encoding="latin-1")):
            (out_dir / f"{coll}.{doc_id:06d}").write_bytes(text.encode("latin-1"))


_WIKI_FOLDERS = ("AA", "AB", "AC", "AD")


def count_wikipedia_text(root: Path) -> dict[str, int]:
    out: dict[str, int] = {"files": 0, "articles": 0}
    for folder in _WIKI_FOLDERS:
        d = _need(root, f"text/{folder}")
        files = _files_in(d)
        n = 0
        for f in files:
            with open(f, "rb") as fh:
                n += sum(1 for line in fh if line.startswith(b"<doc "))
        out[f"{folder}_files"] = len(files)
        out[f"{folder}_articles"] = n
        out["files"] += len(files)
        out["articles"] += n
    return out


def count_wikipedia_bow(root: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    with lzma.open(_need(root, "docword.wiki30k.txt.xz"), "rb") as fh:
        out["D"], out["W"], out["NNZ"] = (int(fh.readline()) for _ in range(3))
        n = 0
        while chunk := fh.read(1 << 22):
            n += chunk.count(b"\n")
        out["triples"] = n
    rows = _need(root, "docs.wiki30k.tsv").read_text(encoding="utf-8").splitlines()[1:]
    out["docs_rows"] = len(rows)
    out["tokens"] = sum(int(r.rsplit("\t", 1)[1]) for r in rows)
    return out


def count_ohsumed(root: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    for split, key in (("training", "train"), ("test", "test")):
        base = _need(root, f"ohsumed_single_23/{split}")
        classes = [p for p in base.iterdir() if p.is_dir()]
        out[f"{key}_classes"] = len(classes)
        out[f"{key}_docs"] = sum(len(_files_in(c)) for c in classes)
    return out


def count_kos(root: Path) -> dict[str, int]:
    with gzip.open(_need(root, "docword.kos.txt.gz"), "rb") as fh:
        d, w, nnz = (int(fh.readline()) for _ in range(3))
        lines = tokens = 0
        for line in fh:
            if line.strip():
                lines += 1
                tokens += int(line.split()[2])
    return {"D": d, "W": w, "NNZ": nnz, "triples": lines, "tokens": tokens,
            "vocab_words": _unique_nonempty_lines(_need(root, "vocab.kos.txt"))[0]}


def count_msweb(root: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    for ext, key in (("data", "train"), ("test", "test")):
        counts = {b"A": 0, b"C": 0, b"V": 0}
        with open(_need(root, f"anonymous-msweb.{ext}"), "rb") as fh:
            for line in fh:
                tag = line[:1]
                if tag in counts and line[1:2] == b",":
                    counts[tag] += 1
        out[f"{key}_attributes"], out[f"{key}_cases"], out[f"{key}_votes"] = counts[b"A"], counts[b"C"], counts[b"V"]
    _need(root, "anonymous-msweb.info")
    return out


def count_movielens_100k(root: Path) -> dict[str, int]:
    users, items, n = set(), set(), 0
    with open(_need(root, "ml-100k/u.data"), "rb") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 3:
                n += 1
                users.add(parts[0])
                items.add(parts[1])
    return {"ratings": n, "users": len(users), "items": len(items)}


def _idx_header(path: Path) -> tuple[int, tuple[int, ...], int]:
    data = path.read_bytes()
    magic = struct.unpack(">I", data[:4])[0]
    ndim = magic & 0xFF
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    payload = len(data) - 4 - 4 * ndim
    return magic, dims, payload


def count_mnist(root: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    for fname, key in (("t10k-images-idx3-ubyte", "test_images"), ("t10k-labels-idx1-ubyte", "test_labels"),
                       ("train-labels-idx1-ubyte", "train_labels")):
        magic, dims, payload = _idx_header(_need(root, fname))
        expected_payload = 1
        for d in dims:
            expected_payload *= d
        out[key] = dims[0] if payload == expected_payload else -1  # -1: header and payload disagree
        if key == "test_images":
            out["image_rows"], out["image_cols"] = (dims[1], dims[2]) if len(dims) == 3 else (-1, -1)
    return out


def count_reuters21578(root: Path) -> dict[str, int]:
    base = _need(root, "reuters21578")
    sgm = sorted(base.glob("reut2-*.sgm"))
    out = {"sgm_files": len(sgm), "records": 0, "lewis_train": 0, "lewis_test": 0, "lewis_not_used": 0}
    for f in sgm:
        data = f.read_bytes()
        out["records"] += data.count(b"<REUTERS ")
        out["lewis_train"] += data.count(b'LEWISSPLIT="TRAIN"')
        out["lewis_test"] += data.count(b'LEWISSPLIT="TEST"')
        out["lewis_not_used"] += data.count(b'LEWISSPLIT="NOT-USED"')
    return out


# --------------------------------------------------------------------------------------------
# the registry
# --------------------------------------------------------------------------------------------

def _wiki_archive(folder: str, sha: str, size: int) -> SourceFile:
    name = f"enwiki_wikiextractor_text_{folder}.tar.xz"
    return SourceFile(name=name, mirror_path=f"wikipedia/{name}", sha256=sha, size=size, extract="tar")


_SOURCES: tuple[Source, ...] = (
    Source(
        id="20news_bydate",
        description="20 Newsgroups, Jason Rennie's 'bydate' raw text (train/test split by date)",
        files=(SourceFile(
            name="20news-bydate.tar.gz",
            urls=(f"{_QWONE}/20news-bydate.tar.gz", "https://ndownloader.figshare.com/files/5975967"),
            mirror_path="20newsgroups/20news-bydate.tar.gz",
            sha256="aa4436fca2d8908e28b3c3309fbdaaf0996bbc088da31c097f6c0c59dc41b677", size=14_386_386,
            # Rennie's original tarball as pinned by scikit-learn (the mirror's is a deterministic rebuild)
            alt_sha256=("8f1b2514ca22a5ade8fbb9cfa5727df95fa587f4c87b786e15c759fa66d95610",),
            extract="tar"),),
        expected=_expected_20news(), counter=count_20news_bydate,
        layout="20news-bydate-train/<group>/<id>, 20news-bydate-test/<group>/<id> (20 groups)",
        notes="18,846 documents; the vMF paper's dedup to 18,803 and the Matlab version's 11,269/7,505 are "
              "not applied here."),
    Source(
        id="20news_matlab_vocab",
        description="20 Newsgroups Matlab/Octave version: vocabulary.txt (61,188 words; count files not available)",
        files=(SourceFile(
            name="vocabulary.txt", urls=(f"{_QWONE}/vocabulary.txt",),
            mirror_path="20newsgroups/20news-bydate-matlab/vocabulary.txt",
            sha256="3c0f0d64a814ba8836334a0f23925cef751fb3636baea55772f1f8ede4b791bc", size=494_093,
            target="vocabulary.txt"),),
        expected={"words": 61188, "unique_words": 61188}, counter=_vocab_counter("vocabulary.txt"),
        layout="vocabulary.txt (one word per line; word id = line number, 1-based)"),
    Source(
        id="classic3",
        description="classic3 = SMART CRAN 1,398 + CISI 1,460 + MED 1,033 abstracts",
        files=(SourceFile(
            name="classic3.tar.gz", mirror_path="classic3/classic3.tar.gz",
            sha256="75e216661f172a40b090944c08498f6a4c067908b3201e981d48877d2739bda8", size=3_010_669,
            extract="tar"),),
        upstream_files=(
            SourceFile(name="cran.tar.gz", urls=(f"{_GLASGOW}/cran/cran.tar.gz",), strict=False,
                       extract="tar", target="smart_collections/cran"),
            SourceFile(name="cisi.tar.gz", urls=(f"{_GLASGOW}/cisi/cisi.tar.gz",), strict=False,
                       extract="tar", target="smart_collections/cisi"),
            SourceFile(name="med.tar.gz", urls=(f"{_GLASGOW}/medl/med.tar.gz",), strict=False,
                       extract="tar", target="smart_collections/med"),
        ),
        postprocess=derive_classic3,
        expected={"docs": 3891, "cran_docs": 1398, "cisi_docs": 1460, "med_docs": 1033,
                  "cran_records": 1400, "cisi_records": 1460, "med_records": 1033},
        counter=count_classic3,
        layout="classic3/<cran|cisi|med>.<6-digit SMART id> (one abstract per file, class = prefix); "
               "smart_collections/{cran/cran.all.1400, cisi/CISI.ALL (+QRY/REL/BLN), med/med.all}",
        notes="Upstream mode downloads the Glasgow SMART collections and derives classic3/ with the same "
              "rules as the mirror (upstream file names/whitespace may differ; counts are checked)."),
    Source(
        id="wikipedia_text",
        description="English Wikipedia sample: WikiExtractor text of the first 30,729 articles of a ~2015 dump "
                    "(stand-in for the papers' Wikipedia corpora)",
        files=(
            _wiki_archive("AA", "2a509965e9e68cca3e0a342a7a87004c61d3f684a84700f7647d3f699c5d9313", 26_487_368),
            _wiki_archive("AB", "4fb3e71d43234e3f7c6e64e7797e4873a507b9495b6cba1cec780852b289d5cd", 26_399_312),
            _wiki_archive("AC", "5213acf930429f28fd60d9f77246c025b2caa3be64e41de656dac3754264c567", 26_386_808),
            _wiki_archive("AD", "3824a6699b944865b11ea1ce7a46f0cc0aa333ab0bd5f9c3507f7ccd4b56502c", 26_560_860),
        ),
        upstream_files=(SourceFile(
            name=f"wikiVisual-{_WIKIVISUAL_COMMIT}.tar.gz",
            urls=(f"https://codeload.github.com/jason-feng/wikiVisual/tar.gz/{_WIKIVISUAL_COMMIT}",
                  f"https://github.com/jason-feng/wikiVisual/archive/{_WIKIVISUAL_COMMIT}.tar.gz"),
            strict=False, extract="tar",
            members=tuple((f"*/text/{f}/", f"text/{f}/") for f in _WIKI_FOLDERS)),),
        expected={"files": 400, "articles": 30729,
                  "AA_files": 100, "AB_files": 100, "AC_files": 100, "AD_files": 100,
                  "AA_articles": 6514, "AB_articles": 6466, "AC_articles": 9178, "AD_articles": 8571},
        counter=count_wikipedia_text,
        layout="text/<AA|AB|AC|AD>/wiki_NN (WikiExtractor '<doc id=.. url=.. title=..>' blocks, UTF-8)",
        notes="Upstream mode takes text/AA..AD from the GitHub tarball of jason-feng/wikiVisual at the pinned "
              "commit, giving the same layout as the mirror's four archives."),
    Source(
        id="wikipedia_vocab",
        description="Hoffman's online-LDA vocabulary dictnostops.txt (7,702 words)",
        files=(SourceFile(
            name="dictnostops.txt",
            urls=(f"https://raw.githubusercontent.com/blei-lab/onlineldavb/{_ONLINELDA_COMMIT}/dictnostops.txt",),
            mirror_path="wikipedia/dictnostops.txt",
            sha256="1c586145a2c993e578b3ee3b4b7de0dbe647f35f54a310b29994d7be9000b655", size=58_692,
            target="dictnostops.txt"),),
        expected={"words": 7702, "unique_words": 7702}, counter=_vocab_counter("dictnostops.txt"),
        layout="dictnostops.txt (one word per line)"),
    Source(
        id="wikipedia_bow",
        description="Bag of words of the 30,729-article Wikipedia sample over dictnostops.txt "
                    "(derived by the mirror's curator; cross-check only)",
        files=(
            SourceFile(name="docword.wiki30k.txt.xz", mirror_path="wikipedia/docword.wiki30k.txt.xz",
                       sha256="d43701de0fb1f81b0433c5a06fa039e8dfecfdd2a2feb7271e8e9fe35a7bae8f",
                       size=15_132_764, target="docword.wiki30k.txt.xz"),
            SourceFile(name="docs.wiki30k.tsv", mirror_path="wikipedia/docs.wiki30k.tsv",
                       sha256="49a8512beaed7aa002f89fd3e259ce75127364b2313c2b4e29d57f5c902e63d5",
                       size=1_283_175, target="docs.wiki30k.tsv"),
        ),
        expected={"D": 30729, "W": 7702, "NNZ": 9805094, "triples": 9805094, "docs_rows": 30729,
                  "tokens": 21522941},
        counter=count_wikipedia_bow,
        layout="docword.wiki30k.txt.xz (UCI format: D, W, NNZ, then 'doc word count', 1-based; read with lzma), "
               "docs.wiki30k.tsv (doc_index, wikipedia_page_id, title, source_file, n_vocab_tokens)",
        notes="Mirror only (no upstream: it was derived for the mirror); the pipeline derives its own."),
    Source(
        id="pubmed_vocab",
        description="UCI bag-of-words PubMed vocabulary vocab.pubmed.txt (141,043 words; docword not available)",
        files=(SourceFile(
            name="vocab.pubmed.txt", urls=(f"{_UCI_BOW}/vocab.pubmed.txt",),
            mirror_path="pubmed/vocab.pubmed.txt",
            sha256="ca84c971366b1599227d645b4e8128b20826f45ed1af388372252668e1462f13", size=1_460_677,
            target="vocab.pubmed.txt"),),
        expected={"words": 141043, "unique_words": 141043}, counter=_vocab_counter("vocab.pubmed.txt"),
        layout="vocab.pubmed.txt (UTF-8, one word per line, no trailing newline)"),
    Source(
        id="ohsumed",
        description="OHSUMED MEDLINE abstracts (1991), single-label 23-category subset (PubMed stand-in)",
        files=(SourceFile(
            name="ohsumed_single_23.tar.gz", mirror_path="pubmed/ohsumed_single_23.tar.gz",
            sha256="74465bee5f1f838ff4e67e486aed38068814b3bda54651f3cd490690cec9be4e", size=3_402_299,
            extract="tar"),),
        upstream_files=(SourceFile(
            name=f"text_gcn-{_TEXTGCN_COMMIT}.tar.gz",
            urls=(f"https://codeload.github.com/yao8839836/text_gcn/tar.gz/{_TEXTGCN_COMMIT}",
                  f"https://github.com/yao8839836/text_gcn/archive/{_TEXTGCN_COMMIT}.tar.gz"),
            strict=False, extract="tar",
            members=(("*/data/ohsumed_single_23/", "ohsumed_single_23/"),)),),
        expected={"train_docs": 3357, "test_docs": 4043, "train_classes": 23, "test_classes": 23},
        counter=count_ohsumed,
        layout="ohsumed_single_23/{training,test}/C01..C23/<7-digit id> (title on the first line)"),
    Source(
        id="kos",
        description="UCI bag of words, KOS blog entries (D=3,430, W=6,906)",
        files=(SourceFile(
            name="uci-bow-kos.tar", mirror_path="uci_bow/uci-bow-kos.tar",
            sha256="c932c72bc718e0350c49263603853215b788379906383dfdfc674f194cb91d03", size=1_116_160,
            extract="tar"),),
        upstream_files=(
            SourceFile(name="docword.kos.txt.gz", urls=(f"{_UCI_BOW}/docword.kos.txt.gz",), strict=False,
                       sha256="6439c39f2fccb4876563e4b4c9628974d8ccbeada43d661292a5024911389e30",
                       size=1_053_803, target="docword.kos.txt.gz"),
            SourceFile(name="vocab.kos.txt", urls=(f"{_UCI_BOW}/vocab.kos.txt",), strict=False,
                       sha256="623b7b969793b32c4ea7d1ae8cd2e9ed99038bf51628f33f52349f9485aeab8e",
                       size=55_467, target="vocab.kos.txt"),
        ),
        expected={"D": 3430, "W": 6906, "NNZ": 353160, "triples": 353160, "tokens": 467714, "vocab_words": 6906},
        counter=count_kos,
        layout="docword.kos.txt.gz (UCI format, gzip; read with gzip.open), vocab.kos.txt"),
    Source(
        id="msweb",
        description="UCI Anonymous Microsoft Web Data (msweb): 32,711 training / 5,000 test users",
        files=(SourceFile(
            name="anonymous-msweb.tar.gz", mirror_path="msweb/anonymous-msweb.tar.gz",
            sha256="2250005156e7e6843a81227f827289a5a75e3438e56fe1745c1066a4bc0cb967", size=342_788,
            extract="tar"),),
        upstream_files=tuple(
            SourceFile(name=f"anonymous-msweb.{ext}", urls=(f"{_UCI_MSWEB}/anonymous-msweb.{ext}",), strict=False,
                       sha256=sha, size=size, target=f"anonymous-msweb.{ext}")
            for ext, sha, size in (
                ("data", "2a1300e9e0962dd6eb4d5982ab06cf04461f942f3faed82451661740a13dcd72", 1_554_764),
                ("test", "a1dc9f9d73c7957bb14048b4040d5cd4f8f0abbcd0dbc6195ab781e45894b75b", 249_047),
                ("info", "ae3647e0c58230496dec119e3a81b23d06f0e2806582d8ae5092129d5d9d773d", 3_695),
            )),
        expected={"train_attributes": 294, "train_cases": 32711, "train_votes": 98654,
                  "test_attributes": 294, "test_cases": 5000, "test_votes": 15191},
        counter=count_msweb,
        layout="anonymous-msweb.data (train), anonymous-msweb.test, anonymous-msweb.info "
               "(CRLF lines 'A,id,..', 'C,\"case\",id', 'V,attr,1')"),
    Source(
        id="movielens_100k",
        description="MovieLens 100K ratings (stand-in for the SGNHT paper's ml-1m)",
        files=(SourceFile(
            name="ml-100k.tar.gz", mirror_path="movielens/ml-100k.tar.gz",
            sha256="eb85704284bc9a1788e53ff8acd5d01b015ecd894dd1f68859b1b1ccba28dd36", size=4_927_377,
            extract="tar"),),
        upstream_files=(SourceFile(
            name="ml-100k.zip", urls=("https://files.grouplens.org/datasets/movielens/ml-100k.zip",),
            strict=False, extract="zip"),),
        expected={"ratings": 100000, "users": 943, "items": 1682},
        counter=count_movielens_100k,
        layout="ml-100k/{u.data (user item rating timestamp, TAB, 1-based ids), u.item, u.user, u1..u5/ua/ub "
               ".base/.test, README, ...}",
        notes="The upstream zip also holds allbut.pl and mku.sh, which the mirror left out."),
    Source(
        id="mnist",
        description="MNIST test images and labels plus training labels (training images not available)",
        files=tuple(
            SourceFile(name=f"{stem}.gz",
                       urls=(f"https://ossci-datasets.s3.amazonaws.com/mnist/{stem}.gz",
                             f"http://yann.lecun.com/exdb/mnist/{stem}.gz"),
                       mirror_path=f"mnist/{stem}.gz", sha256=sha, size=size, strict=False,
                       extract="gz", target=stem, content_sha256=content)
            for stem, sha, size, content in (
                ("t10k-images-idx3-ubyte", "167310007f03058885c7e95e6c0b19c20de5c7fd3031f4cbdadc9014a523d80b",
                 1_648_877, "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7"),
                ("t10k-labels-idx1-ubyte", "fc607395669ec21321ea83e4b82c0544b7e8e63ff5b34337c06bc0a17cc0da3c",
                 4_542, "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2"),
                ("train-labels-idx1-ubyte", "ec02e7948609e5754d47881c09b8afdd8dfa60600b9e5388c8c54a67069ec772",
                 28_881, "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5"),
            )),
        expected={"test_images": 10000, "test_labels": 10000, "train_labels": 60000,
                  "image_rows": 28, "image_cols": 28},
        counter=count_mnist,
        layout="t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte, train-labels-idx1-ubyte (decompressed IDX files)",
        notes="The .gz wrappers were re-gzipped, so the decompressed bytes are verified (sha256; their MD5s "
              "match the canonical MNIST files)."),
    Source(
        id="reuters21578",
        description="Reuters-21578, Distribution 1.0 (SGML; LEWISSPLIT train/test)",
        files=(SourceFile(
            name="reuters21578.tar.gz", mirror_path="reuters21578/reuters21578.tar.gz",
            sha256="5bb0e7caaa00d99fb7abd0d2c7d5644beaa4c58f4aa96b141e91ce827b5c4e9b", size=8_093_014,
            extract="tar"),),
        upstream_files=(SourceFile(
            name="reuters21578_upstream.tar.gz",
            urls=("http://www.daviddlewis.com/resources/testcollections/reuters21578/reuters21578.tar.gz",
                  "https://kdd.ics.uci.edu/databases/reuters21578/reuters21578.tar.gz"),
            strict=False, extract="tar", target="reuters21578"),),
        expected={"sgm_files": 22, "records": 21578, "lewis_train": 14668, "lewis_test": 6188,
                  "lewis_not_used": 722},
        counter=count_reuters21578,
        layout="reuters21578/{reut2-000..021.sgm, README.txt, lewis.dtd, all-*-strings.lc.txt, ...}",
        notes="The upstream tarball has no top-level folder; it is extracted into reuters21578/ so both modes "
              "match."),
)

SOURCES: dict[str, Source] = {s.id: s for s in _SOURCES}


def get_source(source_id: str) -> Source:
    try:
        return SOURCES[source_id]
    except KeyError:
        raise DataError(f"unknown data set {source_id!r}; known ids: {', '.join(sorted(SOURCES))}") from None


def count_source(source_id: str, root: str | Path) -> dict[str, int]:
    """Measure the counts of an extracted source directory (keys as in ``SOURCES[id].expected``)."""
    return get_source(source_id).counter(Path(root))


def count_mismatches(source_id: str, measured: Mapping[str, int]) -> dict[str, tuple[int, int | None]]:
    """``{key: (expected, measured)}`` for every expected count that differs (empty when all match)."""
    src = get_source(source_id)
    return {k: (v, measured.get(k)) for k, v in src.expected.items() if measured.get(k) != v}


def check_counts(source_id: str, root: str | Path) -> dict[str, int]:
    """Measure the counts and raise :class:`DataError` listing every one that differs from PROVENANCE.md."""
    try:
        measured = count_source(source_id, root)
    except DataError as exc:
        raise DataError(f"data set {source_id!r}: count check failed: {exc}") from None
    bad = count_mismatches(source_id, measured)
    if bad:
        shown = "; ".join(f"{k}: expected {e:,}, found {m if m is None else format(m, ',')}"
                          for k, (e, m) in list(bad.items())[:8])
        more = f" (and {len(bad) - 8} more)" if len(bad) > 8 else ""
        raise DataError(f"data set {source_id!r}: count mismatch after extraction: {shown}{more}")
    return measured
