"""Every real source, fetched from the mirror, has exactly the counts documented in PROVENANCE.md.

The numbers below are typed in from ``../shared/data/PROVENANCE.md`` independently of the registry
in ``scalable_bayes.corpora.sources`` (so a typo there fails here), and are measured on the extracted
files by small readers written in this file where that is cheap.
"""

from __future__ import annotations

import gzip
import os
import re
from pathlib import Path

import numpy as np
import pytest

from scalable_bayes.corpora.fetch import fetch_source, read_marker, verify_mirror
from scalable_bayes.corpora.sources import MIRROR_ENV, SOURCES, classic3_documents

REPO = Path(__file__).resolve().parents[1]

PROVENANCE = {
    "20news_bydate": {"train_docs": 11314, "test_docs": 7532, "train_groups": 20, "test_groups": 20,
                      "train_different_docs": 1670, "test_different_docs": 1110,
                      "train/alt.atheism": 480, "train/talk.religion.misc": 377,
                      "test/alt.atheism": 319, "test/talk.religion.misc": 251},
    "20news_matlab_vocab": {"words": 61188, "unique_words": 61188},
    "classic3": {"docs": 3891, "cran_docs": 1398, "cisi_docs": 1460, "med_docs": 1033},
    "wikipedia_text": {"articles": 30729, "files": 400, "AA_articles": 6514, "AB_articles": 6466,
                       "AC_articles": 9178, "AD_articles": 8571},
    "wikipedia_vocab": {"words": 7702, "unique_words": 7702},
    "wikipedia_bow": {"D": 30729, "W": 7702, "NNZ": 9805094, "tokens": 21522941},
    "pubmed_vocab": {"words": 141043, "unique_words": 141043},
    "ohsumed": {"train_docs": 3357, "test_docs": 4043, "train_classes": 23, "test_classes": 23},
    "kos": {"D": 3430, "W": 6906, "NNZ": 353160, "tokens": 467714},
    "msweb": {"train_cases": 32711, "test_cases": 5000, "train_attributes": 294, "test_attributes": 294,
              "train_votes": 98654, "test_votes": 15191},
    "movielens_100k": {"ratings": 100000, "users": 943, "items": 1682},
    "mnist": {"test_images": 10000, "test_labels": 10000, "train_labels": 60000},
    "reuters21578": {"records": 21578, "lewis_train": 14668, "lewis_test": 6188, "lewis_not_used": 722},
}
SLOW = {"wikipedia_text", "wikipedia_bow", "20news_bydate"}


@pytest.fixture(scope="module")
def mirror() -> Path:
    root = Path(os.environ.get(MIRROR_ENV) or REPO.parent / "shared" / "data")
    if not (root / "PROVENANCE.md").is_file():
        pytest.skip(f"data mirror not found at {root} (set {MIRROR_ENV} to the directory holding PROVENANCE.md)")
    return root


@pytest.fixture(scope="module")
def fetched(mirror, tmp_path_factory):
    """``fetched(source_id)`` -> extracted directory; each source is fetched once per module."""
    root = tmp_path_factory.mktemp("raw")
    cache: dict[str, Path] = {}

    def get(source_id: str) -> Path:
        if source_id not in cache:
            cache[source_id] = fetch_source(source_id, root / source_id, mirror=mirror)
        return cache[source_id]

    return get


def _params():
    return [pytest.param(s, marks=pytest.mark.slow) if s in SLOW else s for s in PROVENANCE]


def test_every_source_is_checked():
    assert set(PROVENANCE) == set(SOURCES)


@pytest.mark.parametrize("source_id", _params())
def test_documented_counts(fetched, source_id):
    marker = read_marker(fetched(source_id))
    assert marker["mode"] == "mirror"
    for key, value in PROVENANCE[source_id].items():
        assert marker["counts"][key] == value, f"{source_id}: {key}"
        assert SOURCES[source_id].expected[key] == value, f"registry typo in {source_id}: {key}"


# independent re-counts with readers written here ------------------------------------------------

def test_mnist_label_histograms(fetched):
    d = fetched("mnist")
    test = np.frombuffer((d / "t10k-labels-idx1-ubyte").read_bytes()[8:], dtype=np.uint8)
    train = np.frombuffer((d / "train-labels-idx1-ubyte").read_bytes()[8:], dtype=np.uint8)
    assert np.bincount(test).tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
    assert np.bincount(train).tolist() == [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
    images = (d / "t10k-images-idx3-ubyte").read_bytes()
    assert int.from_bytes(images[:4], "big") == 0x803 and len(images) == 16 + 10000 * 28 * 28


def test_movielens_ratings(fetched):
    a = np.loadtxt(fetched("movielens_100k") / "ml-100k" / "u.data", dtype=np.int64)
    assert a.shape == (100000, 4)
    assert len(np.unique(a[:, 0])) == 943 and len(np.unique(a[:, 1])) == 1682
    assert set(np.unique(a[:, 2])) == {1, 2, 3, 4, 5}


def test_kos_docword(fetched):
    d = fetched("kos")
    with gzip.open(d / "docword.kos.txt.gz", "rt") as fh:
        header = [int(fh.readline()) for _ in range(3)]
        triples = np.loadtxt(fh, dtype=np.int64)
    assert header == [3430, 6906, 353160] and triples.shape == (353160, 3)
    assert triples[:, 0].max() == 3430 and triples[:, 1].max() <= 6906 and triples[:, 2].sum() == 467714
    assert len((d / "vocab.kos.txt").read_text().split()) == 6906


def test_msweb_cases(fetched):
    d = fetched("msweb")
    train = (d / "anonymous-msweb.data").read_text(encoding="latin-1").splitlines()
    test = (d / "anonymous-msweb.test").read_text(encoding="latin-1").splitlines()
    assert sum(ln.startswith("C,") for ln in train) == 32711
    assert sum(ln.startswith("C,") for ln in test) == 5000


def test_reuters_records(fetched):
    base = fetched("reuters21578") / "reuters21578"
    text = b"".join(p.read_bytes() for p in sorted(base.glob("reut2-*.sgm")))
    assert len(re.findall(rb"<REUTERS [^>]*>", text)) == 21578
    assert len(re.findall(rb"</REUTERS>", text)) == 21578


def test_ohsumed_files(fetched):
    base = fetched("ohsumed") / "ohsumed_single_23"
    assert sum(1 for p in (base / "training").rglob("*") if p.is_file()) == 3357
    assert sum(1 for p in (base / "test").rglob("*") if p.is_file()) == 4043


def test_classic3_derivation_matches_mirror_files(fetched):
    """The rules used in upstream mode reproduce the mirror's per-abstract files byte for byte."""
    d = fetched("classic3")
    smart = d / "smart_collections"
    for coll, rel in (("cran", "cran/cran.all.1400"), ("cisi", "cisi/CISI.ALL"), ("med", "med/med.all")):
        docs = classic3_documents((smart / rel).read_text(encoding="latin-1"))
        files = sorted((d / "classic3").glob(f"{coll}.*"))
        assert [f"{coll}.{i:06d}" for i, _ in docs] == [p.name for p in files]
        assert all(p.read_bytes() == text.encode("latin-1") for (_, text), p in zip(docs, files))


@pytest.mark.slow
def test_20news_files(fetched):
    d = fetched("20news_bydate")
    assert sum(1 for p in (d / "20news-bydate-train").rglob("*") if p.is_file()) == 11314
    assert sum(1 for p in (d / "20news-bydate-test").rglob("*") if p.is_file()) == 7532


@pytest.mark.slow
def test_wikipedia_articles(fetched):
    d = fetched("wikipedia_text") / "text"
    n_open = n_close = 0
    for p in sorted(d.glob("A?/wiki_*")):
        data = p.read_bytes()
        n_open += len(re.findall(rb"^<doc id=\"\d+\"", data, flags=re.M))
        n_close += data.count(b"</doc>")
    assert n_open == n_close == 30729


def test_mirror_checksums(mirror):
    df = verify_mirror(mirror)
    assert (df["status"] == "ok").all(), df[df["status"] != "ok"].to_string()
