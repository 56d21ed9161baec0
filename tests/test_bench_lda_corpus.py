"""The LDA benchmarks' corpus cache (benchmarks/bench_lda.py): a run reads the corpus it was asked for, whatever an
earlier run with another corpus left in the same output directory."""

from __future__ import annotations

import io
import sys
import tarfile
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import bench_lda  # noqa: E402

_WORDS = ["apple", "banana", "cherry", "damson", "elder", "fig", "grape", "hazel"]


def _fake_mirror(root: Path) -> Path:
    """A mirror whose 20 Newsgroups tarball holds a few messages built from eight words (every word in 5+ of them)."""
    rng = np.random.default_rng(0)
    d = root / "20newsgroups"
    d.mkdir(parents=True)
    with tarfile.open(d / "20news-bydate.tar.gz", "w:gz") as tf:
        for split in ("train", "test"):
            for i in range(12):
                text = " ".join(rng.choice(_WORDS[:4] if i % 2 else _WORDS[4:], 30)).encode()
                info = tarfile.TarInfo(f"20news-bydate-{split}/group/{i}")
                info.size = len(text)
                tf.addfile(info, io.BytesIO(text))
    return root


def test_news20_is_rebuilt_over_another_corpus_left_in_its_cache(tmp_path):
    """Counts of another corpus under ``corpus/`` (as a processed corpus was cached there before it had a directory
    of its own) are not read as 20 Newsgroups: the corpus is built from the mirror, marked, and then reused."""
    mirror = _fake_mirror(tmp_path / "mirror")
    cache = tmp_path / "out" / "corpus"
    cache.mkdir(parents=True)
    other = sp.csr_matrix(np.ones((3, 50), np.int32))
    sp.save_npz(cache / "train.npz", other)
    sp.save_npz(cache / "test.npz", other)
    tr, te = bench_lda.build_news20(mirror, cache)
    X = sp.load_npz(tr)
    assert X.shape == (12, 8) and X.sum() == 12 * 30
    assert (cache / "SOURCE").read_text().strip() == "news20_bydate"
    stamp = tr.stat().st_mtime_ns
    assert bench_lda.build_news20(mirror, cache) == (tr, te) and tr.stat().st_mtime_ns == stamp  # reused


def test_a_processed_corpus_is_cached_apart_from_news20(tmp_path, monkeypatch):
    """``--corpus data/processed/<name>`` writes its counts to ``corpus_<name>/``, never to the 20 Newsgroups cache."""
    seen = []
    monkeypatch.setattr(bench_lda, "corpus_from_processed", lambda d, cache: seen.append(cache) or (cache, cache))
    args = SimpleNamespace(corpus="data/processed/wikipedia", full_vocab=False, mirror="unused")
    _, _, name = bench_lda.select_corpus(args, tmp_path)
    assert name == "wikipedia" and seen == [tmp_path / "corpus_wikipedia"]
