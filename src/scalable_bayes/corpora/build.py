"""Build every processed corpus from the extracted raw sources, exactly as each paper defines it.

``CORPORA`` maps a corpus name to its :class:`CorpusSpec`: which raw sources it reads, the builder,
whether it carries tf-idf, and the paper's counts (for the dataset table). :func:`build_corpus` runs a
builder and returns a :class:`~scalable_bayes.corpora.store.Corpus`; ``workflow/scripts/build_corpus.py``
writes it with :func:`~scalable_bayes.corpora.store.save_corpus`.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd
import scipy.sparse as sp

from . import readers
from .verify import verify_extracted
from .store import Corpus
from .text import (
    ALPHA_TOKENS,
    SKLEARN_TOKENS,
    count_matrix,
    df_band,
    drop_empty_documents,
    select_columns,
    smart_stopwords,
    tfidf_sggmc,
    tfidf_vmf,
)

logger = logging.getLogger(__name__)

Raw = Mapping[str, Path]


#: what a processed corpus is for (``CorpusSpec.kind``): ``tfidf`` -- l2-normalised tf-idf documents (vMF
#: clustering, spherical admixtures); ``tokens`` -- token counts with a train/test split (topic models);
#: ``binary`` -- a binary users x attributes matrix with a train/test split (mixtures of multinomials)
CORPUS_KINDS = ("tfidf", "tokens", "binary")


@dataclass(frozen=True)
class CorpusSpec:
    """One processed corpus of the catalogue :data:`CORPORA`.

    Parameters
    ----------
    name
        The corpus name (``data/processed/<name>/``; the config's corpus keys).
    sources
        Raw sources (:data:`scalable_bayes.corpora.sources.SOURCES` ids) it is built from.
    builder
        ``builder(raw, settings) -> Corpus``.
    description, paper, paper_counts
        For the dataset table: what it is, the paper that uses it and that paper's counts.
    kind
        One of :data:`CORPUS_KINDS`; the config schemas accept a corpus for a model by its kind
        (``tests/test_config.py`` checks that their lists equal the catalogue's).
    has_tfidf
        Whether ``tfidf.npz`` is written beside the counts.
    subsample_pool
        For a per-class random subsample (its documents, hence its document count, depend on the seed):
        ``subsample_pool(raw) -> (documents, label names)``, the documents it draws from (columns ``text``,
        ``label``, ``doc_id``, ``split``); None for a corpus whose documents do not depend on a seed.
        :func:`subsample_document_counts` redraws the subsample from it.
    """

    name: str
    sources: tuple[str, ...]
    builder: Callable[[Raw, Mapping[str, Any]], Corpus]
    description: str
    paper: str
    paper_counts: Mapping[str, Any] = field(default_factory=dict)
    kind: str = "tfidf"
    has_tfidf: bool = False
    subsample_pool: Callable[[Raw], tuple[pd.DataFrame, list[str]]] | None = None

    def __post_init__(self):
        if self.kind not in CORPUS_KINDS:
            raise ValueError(f"corpus {self.name!r}: kind {self.kind!r} is none of {CORPUS_KINDS}")


# ----------------------------------------------------------------------------------------------
# helpers


def _finish(
    name: str,
    counts: sp.csr_matrix,
    vocab: list[str],
    doc_ids,
    labels,
    label_names: list[str],
    split,
    *,
    source: str,
    settings: Mapping[str, Any],
    notes: list[str],
    tfidf: Callable[[sp.csr_matrix], sp.csr_matrix] | None = None,
) -> Corpus:
    """Drop documents left empty by the vocabulary filters, weight, and package as a Corpus."""
    counts = sp.csr_matrix(counts, dtype=np.int32)
    keep = drop_empty_documents(counts)
    n_empty = int((~keep).sum())
    if n_empty:
        notes.append(f"{n_empty} document(s) with no token left after vocabulary filtering were dropped")
        logger.info("%s: dropping %d empty documents", name, n_empty)
    counts = counts[keep]
    docs = pd.DataFrame(
        {
            "doc_id": np.asarray(doc_ids, dtype=object)[keep].astype(str),
            "label": np.asarray(labels, dtype=np.int64)[keep],
            "split": np.asarray(split, dtype=object)[keep].astype(str),
            "n_tokens": np.asarray(counts.sum(axis=1)).ravel().astype(np.int64),
        }
    )
    meta = {
        "name": name,
        "source": source,
        "label_names": list(label_names),
        "settings": dict(settings),
        "notes": notes,
        "weighting": None,
    }
    c = Corpus(counts=counts, vocab=list(vocab), docs=docs, meta=meta)
    if tfidf is not None:
        c.tfidf = tfidf(counts)
        meta["weighting"] = tfidf.__name__
    c.validate()
    logger.info(
        "%s: %d documents (%d train / %d test), %d terms, %d tokens",
        name, counts.shape[0], int((docs["split"] == "train").sum()), int((docs["split"] == "test").sum()),
        counts.shape[1], int(counts.sum()),
    )
    return c


def _verify_raw(raw: Raw, sources) -> None:
    """Refuse to read a raw source whose files changed after :func:`~scalable_bayes.corpora.fetch.fetch_source`
    verified them (:func:`~scalable_bayes.corpora.verify.verify_extracted`; raises ``DataError`` naming the
    file and the fix)."""
    for s in sources:
        if s in raw:
            verify_extracted(s, raw[s])


def _opt(settings: Mapping[str, Any], key: str, default: Any) -> Any:
    """``settings[key]``, or ``default`` when the key is absent or null (config: "the paper's default")."""
    value = settings.get(key)
    return default if value is None else value


def _random_split(n: int, n_test: int, seed: int) -> np.ndarray:
    if not 0 < n_test < n:
        raise ValueError(f"test_docs={n_test} must be between 1 and the number of documents minus one ({n - 1})")
    rng = np.random.default_rng(seed)
    split = np.full(n, "train", dtype=object)
    split[rng.choice(n, size=n_test, replace=False)] = "test"
    return split


def _sample_per_class(labels: np.ndarray, per_class: int, seed: int) -> np.ndarray:
    """Sorted indices of ``per_class`` documents drawn without replacement from every class."""
    rng = np.random.default_rng(seed)
    picks = []
    for c in np.unique(labels):
        idx = np.flatnonzero(labels == c)
        if idx.size < per_class:
            raise ValueError(f"class {c} has only {idx.size} documents, fewer than per_class={per_class}")
        picks.append(rng.choice(idx, size=per_class, replace=False))
    return np.sort(np.concatenate(picks))


def news20_messages(raw: Raw) -> pd.DataFrame:
    """All 20news-bydate messages with the header removed: doc_id, group, split, body.

    The pipeline writes this once (``data/interim/news20_messages.parquet``) for the four corpora built
    from 20 Newsgroups; :func:`build_corpus` reads it when ``raw`` names it, else the raw directory.
    """
    _verify_raw(raw, ["20news_bydate"])
    df = readers.read_20news_bydate(raw["20news_bydate"])
    df["body"] = df["text"].map(readers.strip_newsgroup_header)
    return df.drop(columns=["text"])


def _news20_bodies(raw: Raw) -> tuple[pd.DataFrame, list[str]]:
    if "news20_messages" in raw:
        df = pd.read_parquet(raw["news20_messages"])
    else:
        df = news20_messages(raw)
    groups = sorted(df["group"].unique())
    df["label"] = df["group"].map({g: i for i, g in enumerate(groups)})
    return df, groups


# ----------------------------------------------------------------------------------------------
# vMF paper corpora (App. A.6): SMART stop words, min_df, max_df = 15%, log-idf, l2


def build_news20(raw: Raw, settings: Mapping[str, Any]) -> Corpus:
    """news20: 20 Newsgroups with headers and duplicate messages removed (paper: 18,803 documents,
    28,571 terms), min_df = 6 documents, max_df = 15%, SMART stop words."""
    df, groups = _news20_bodies(raw)
    notes = []
    norm = df["body"].str.split().str.join(" ")
    dup = norm.duplicated(keep="first").to_numpy()
    notes.append(f"{int(dup.sum())} duplicate message bodies (after header removal, whitespace-normalised) removed")
    df = df[~dup].reset_index(drop=True)
    X, vocab = count_matrix(df["body"], token_pattern=SKLEARN_TOKENS, stop_words=smart_stopwords(),
                            min_df=_opt(settings, "min_df", 6), max_df=0.15)
    return _finish("news20", X, vocab, df["doc_id"], df["label"], groups, df["split"], source="20news_bydate",
                   settings={"min_df": _opt(settings, "min_df", 6), "max_df": 0.15, "stop_words": "SMART",
                             "token_pattern": SKLEARN_TOKENS, "dedup": True, "headers": "removed"},
                   notes=notes, tfidf=tfidf_vmf)


#: the vMF paper's per-class subsamples (news20-small, classic300): documents per class and min_df by default
SUBSAMPLE_PER_CLASS, SUBSAMPLE_MIN_DF = 100, 2
#: the vMF paper's max_df (App. A.6): terms in more than 15% of the documents are dropped
VMF_MAX_DF = 0.15


def _vmf_counts(texts, min_df: int) -> tuple[sp.csr_matrix, list[str]]:
    """Counts over the vMF paper's vocabulary filters (App. A.6): SMART stop words, ``min_df``, max_df = 15%."""
    return count_matrix(texts, token_pattern=SKLEARN_TOKENS, stop_words=smart_stopwords(), min_df=min_df,
                        max_df=VMF_MAX_DF)


def _news20_small_pool(raw: Raw) -> tuple[pd.DataFrame, list[str]]:
    """The messages news20-small draws from: duplicate bodies (header removed, whitespace-normalised) and bodies
    shorter than 20 characters dropped; columns ``text`` (the body), ``label``, ``doc_id``, ``split``."""
    df, groups = _news20_bodies(raw)
    norm = df["body"].str.split().str.join(" ")
    df = df[~norm.duplicated(keep="first").to_numpy()].reset_index(drop=True)
    df = df[df["body"].str.strip().str.len() >= 20].reset_index(drop=True)
    return df.rename(columns={"body": "text"}), groups


def build_news20_small(raw: Raw, settings: Mapping[str, Any]) -> Corpus:
    """news20-small: messages shorter than 20 characters dropped, then 100 random messages per class
    (paper: 2,000 documents, 16,218 terms), min_df = 2, max_df = 15%."""
    df, groups = _news20_small_pool(raw)
    per_class, seed = _opt(settings, "per_class", SUBSAMPLE_PER_CLASS), _opt(settings, "seed", 0)
    idx = _sample_per_class(df["label"].to_numpy(), per_class, seed)
    df = df.iloc[idx].reset_index(drop=True)
    min_df = _opt(settings, "min_df", SUBSAMPLE_MIN_DF)
    X, vocab = _vmf_counts(df["text"], min_df)
    return _finish("news20_small", X, vocab, df["doc_id"], df["label"], groups, df["split"], source="20news_bydate",
                   settings={"min_df": min_df, "max_df": VMF_MAX_DF, "per_class": per_class,
                             "seed": seed, "min_chars": 20, "stop_words": "SMART"},
                   notes=[], tfidf=tfidf_vmf)


def _classic_pool(raw: Raw) -> tuple[pd.DataFrame, list[str]]:
    """The classic3 abstracts (CISI, CRAN, MED): columns ``text``, ``label``, ``doc_id``, ``split`` (all train)."""
    df = readers.read_classic3(raw["classic3"])
    colls = ["cisi", "cran", "med"]
    df["label"] = df["collection"].map({c: i for i, c in enumerate(colls)}).to_numpy()
    df["split"] = "train"
    return df, colls


def _classic(raw: Raw, name: str, per_class: int | None, min_df: int, seed: int) -> Corpus:
    df, colls = _classic_pool(raw)
    if per_class is not None:
        df = df.iloc[_sample_per_class(df["label"].to_numpy(), per_class, seed)].reset_index(drop=True)
    X, vocab = _vmf_counts(df["text"], min_df)
    return _finish(name, X, vocab, df["doc_id"], df["label"].to_numpy(), colls, df["split"].to_numpy(),
                   source="classic3",
                   settings={"min_df": min_df, "max_df": VMF_MAX_DF, "per_class": per_class, "seed": seed,
                             "stop_words": "SMART"},
                   notes=[], tfidf=tfidf_vmf)


def build_classic3(raw: Raw, settings: Mapping[str, Any]) -> Corpus:
    """classic3: CRAN 1,398 + CISI 1,460 + MED 1,033 abstracts (paper: 3,891 docs, 4,674 terms), min_df = 7."""
    return _classic(raw, "classic3", None, _opt(settings, "min_df", 7), _opt(settings, "seed", 0))


def build_classic300(raw: Raw, settings: Mapping[str, Any]) -> Corpus:
    """classic300: 100 random abstracts per collection (paper: 300 docs, 2,551 terms), min_df = 2."""
    return _classic(raw, "classic300", _opt(settings, "per_class", SUBSAMPLE_PER_CLASS),
                    _opt(settings, "min_df", SUBSAMPLE_MIN_DF), _opt(settings, "seed", 0))


# ----------------------------------------------------------------------------------------------
# SGGMC paper corpora: tfidf(d,v) = tf * log(D / (1 + df)), l2


def build_news20_different(raw: Raw, settings: Mapping[str, Any]) -> Corpus:
    """20News-different: rec.sport.baseball, sci.space, alt.atheism; counts from the raw text over
    Rennie's Matlab vocabulary (61,188 words), shrunk to 5,000 terms with document frequency in
    [0.36%, 11.77%] (paper: 1,666 train / 1,107 test documents)."""
    df, _ = _news20_bodies(raw)
    groups = ["rec.sport.baseball", "sci.space", "alt.atheism"]
    df = df[df["group"].isin(groups)].reset_index(drop=True)
    labels = df["group"].map({g: i for i, g in enumerate(groups)}).to_numpy()
    matlab_vocab = readers.read_lines(readers._find_file(raw["20news_matlab_vocab"], "vocabulary.txt"))
    X, vocab = count_matrix(df["body"], vocabulary=matlab_vocab, token_pattern=ALPHA_TOKENS)
    keep = df_band(X, 0.0036, 0.1177, max_terms=_opt(settings, "n_terms", 5000))
    X, vocab = select_columns(X, vocab, keep)
    notes = [
        "Rennie's Matlab count files are not available: tokens are counted from the raw bydate text "
        "(header removed, lower-case alphabetic runs) over his 61,188-word vocabulary",
        f"{len(vocab)} terms pass the document-frequency band [0.36%, 11.77%]",
    ]
    return _finish("news20_different", X, vocab, df["doc_id"], labels, groups, df["split"], source="20news_bydate",
                   settings={"df_band": [0.0036, 0.1177], "n_terms": _opt(settings, "n_terms", 5000),
                             "token_pattern": ALPHA_TOKENS, "vocabulary": "20news-bydate-matlab (61,188)"},
                   notes=notes, tfidf=tfidf_sggmc)


def wikipedia_counts(raw: Raw, max_docs: int | None) -> Corpus:
    """Token counts of the first ``max_docs`` Wikipedia articles over Hoffman's 7,702-word vocabulary
    (lower-case alphabetic runs), in archive order; no document is dropped.

    The pipeline writes this once (``data/interim/wikipedia_counts/``) for both Wikipedia corpora.
    """
    _verify_raw(raw, ["wikipedia_text", "wikipedia_vocab"])
    vocab = readers.read_lines(readers._find_file(raw["wikipedia_vocab"], "dictnostops.txt"))
    ids, texts = [], []
    for page_id, title, body in readers.iter_wikipedia_text(raw["wikipedia_text"], max_docs=max_docs):
        ids.append(page_id)
        texts.append(body)
    X, vocab = count_matrix(texts, vocabulary=vocab, token_pattern=ALPHA_TOKENS)
    docs = pd.DataFrame({"doc_id": ids, "label": -1, "split": "train",
                         "n_tokens": np.asarray(X.sum(axis=1)).ravel().astype(np.int64)})
    return Corpus(counts=X, vocab=vocab, docs=docs,
                  meta={"name": "wikipedia_counts", "max_docs": max_docs, "label_names": []})


def _wiki_counts(raw: Raw, max_docs: int | None) -> tuple[sp.csr_matrix, list[str], list[str]]:
    if "wikipedia_counts" in raw:
        from .store import load_corpus

        path = Path(raw["wikipedia_counts"])
        c = load_corpus(path.parent if path.is_file() else path)
        have = c.meta.get("max_docs")
        if have is not None and (max_docs is None or max_docs > have):
            raise ValueError(
                f"interim Wikipedia counts hold {have} articles but {max_docs or 'all'} are asked for; "
                "rebuild data/interim/wikipedia_counts (snakemake re-runs it when the config changes)"
            )
        n = c.counts.shape[0] if max_docs is None else min(max_docs, c.counts.shape[0])
        return sp.csr_matrix(c.counts[:n]), c.vocab, c.docs["doc_id"].tolist()[:n]
    c = wikipedia_counts(raw, max_docs)
    return c.counts, c.vocab, c.docs["doc_id"].tolist()


def build_wiki_sggmc(raw: Raw, settings: Mapping[str, Any]) -> Corpus:
    """SGGMC's Wikipedia subset: Hoffman's 7,702-word vocabulary shrunk to 3,000 terms with document
    frequency in [0.44%, 5.99%], documents with more than 20 words, random train/test split
    (paper: 150K train / 1K test from 6.6M articles; here the 2015 enwiki sample, capped by max_docs)."""
    max_docs, n_test, seed = _opt(settings, "max_docs", None), _opt(settings, "test_docs", 1000), _opt(settings, "seed", 0)
    X, vocab, ids = _wiki_counts(raw, max_docs)
    keep = df_band(X, 0.0044, 0.0599, max_terms=_opt(settings, "n_terms", 3000))
    X, vocab = select_columns(X, vocab, keep)
    long_enough = np.asarray(X.sum(axis=1)).ravel() > 20
    notes = [f"{int((~long_enough).sum())} documents with at most 20 words (over the 3,000 terms) removed",
             "stand-in: the first articles of a 2015 enwiki dump (page-id order), not the paper's 6.6M-article set"]
    X, ids = X[long_enough], [i for i, k in zip(ids, long_enough) if k]
    split = _random_split(X.shape[0], n_test, seed)
    return _finish("wiki_sggmc", X, vocab, ids, np.full(X.shape[0], -1), [], split, source="wikipedia_text",
                   settings={"df_band": [0.0044, 0.0599], "n_terms": _opt(settings, "n_terms", 3000), "min_words": 21,
                             "max_docs": max_docs, "test_docs": n_test, "seed": seed},
                   notes=notes, tfidf=tfidf_sggmc)


# ----------------------------------------------------------------------------------------------
# LDA corpora (ESCA, SCIR, SGNHT): token counts with a train/test split


def build_wikipedia(raw: Raw, settings: Mapping[str, Any]) -> Corpus:
    """Wikipedia for LDA: token counts over Hoffman's 7,702-word vocabulary (stop words already
    excluded), random held-out split (paper ESCA: 6.6M docs, V = 210,233; here the enwiki sample)."""
    max_docs, n_test, seed = _opt(settings, "max_docs", None), _opt(settings, "test_docs", 1000), _opt(settings, "seed", 0)
    X, vocab, ids = _wiki_counts(raw, max_docs)
    nonempty = drop_empty_documents(X)
    X, ids = X[nonempty], [i for i, k in zip(ids, nonempty) if k]
    notes = [f"{int((~nonempty).sum())} articles with no vocabulary word dropped",
             "stand-in: the first articles of a 2015 enwiki dump (page-id order) over Hoffman's vocabulary"]
    split = _random_split(X.shape[0], n_test, seed)
    return _finish("wikipedia", X, vocab, ids, np.full(X.shape[0], -1), [], split, source="wikipedia_text",
                   settings={"max_docs": max_docs, "test_docs": n_test, "seed": seed, "token_pattern": ALPHA_TOKENS,
                             "vocabulary": "dictnostops.txt (7,702)"},
                   notes=notes)


PUBMED_TOKENS = r"[a-z0-9]+(?:[-'][a-z0-9]+)*"


def build_pubmed(raw: Raw, settings: Mapping[str, Any]) -> Corpus:
    """PubMed stand-in for LDA: OHSUMED MEDLINE abstracts counted over the UCI PubMed vocabulary
    (141,043 words), keeping the terms that occur in the training split; OHSUMED's own train/test split."""
    df = readers.read_ohsumed(raw["ohsumed"])
    vocab_all = readers.read_lines(readers._find_file(raw["pubmed_vocab"], "vocab.pubmed.txt"))
    X, vocab = count_matrix(df["text"], vocabulary=vocab_all, token_pattern=PUBMED_TOKENS)
    train = (df["split"] == "train").to_numpy()
    used = np.asarray(X[train].sum(axis=0)).ravel() > 0
    X, vocab = select_columns(X, vocab, used)
    cats = sorted(df["category"].unique())
    labels = df["category"].map({c: i for i, c in enumerate(cats)}).to_numpy()
    notes = [f"{len(vocab)} of the 141,043 UCI PubMed terms occur in the OHSUMED training abstracts and are kept",
             "stand-in: 7,400 OHSUMED (MEDLINE 1991) abstracts instead of the 8.2M UCI PubMed documents"]
    return _finish("pubmed", X, vocab, df["doc_id"], labels, cats, df["split"], source="ohsumed",
                   settings={"vocabulary": "vocab.pubmed.txt", "token_pattern": PUBMED_TOKENS}, notes=notes)


def build_news20_lda(raw: Raw, settings: Mapping[str, Any]) -> Corpus:
    """20 Newsgroups for LDA: bydate train/test, headers removed, SMART stop words, vocabulary learnt
    on the training split with min_df = 5 documents and max_df = 50%."""
    df, groups = _news20_bodies(raw)
    train = (df["split"] == "train").to_numpy()
    min_df = _opt(settings, "min_df", 5)
    _, vocab = count_matrix(df.loc[train, "body"], token_pattern=SKLEARN_TOKENS, stop_words=smart_stopwords(),
                            min_df=min_df, max_df=0.5)
    X, vocab = count_matrix(df["body"], vocabulary=vocab, token_pattern=SKLEARN_TOKENS)
    return _finish("news20_lda", X, vocab, df["doc_id"], df["label"], groups, df["split"], source="20news_bydate",
                   settings={"min_df": min_df, "max_df": 0.5, "stop_words": "SMART", "vocab_from": "train"},
                   notes=[])


def build_reuters(raw: Raw, settings: Mapping[str, Any]) -> Corpus:
    """Reuters-21578 for LDA (stand-in for RCV1): LEWISSPLIT train/test (NOT-USED dropped), title +
    body, SMART stop words, vocabulary from the training split (min_df = 5, max_df = 50%)."""
    df = readers.read_reuters21578(raw["reuters21578"])
    df = df[df["lewissplit"].isin(["TRAIN", "TEST"])].reset_index(drop=True)
    split = df["lewissplit"].str.lower().to_numpy()
    train = split == "train"
    min_df = _opt(settings, "min_df", 5)
    _, vocab = count_matrix(df.loc[train, "text"], token_pattern=SKLEARN_TOKENS, stop_words=smart_stopwords(),
                            min_df=min_df, max_df=0.5)
    X, vocab = count_matrix(df["text"], vocabulary=vocab, token_pattern=SKLEARN_TOKENS)
    return _finish("reuters", X, vocab, df["doc_id"], np.full(len(df), -1), [], split, source="reuters21578",
                   settings={"min_df": min_df, "max_df": 0.5, "stop_words": "SMART", "vocab_from": "train"},
                   notes=["stand-in for Reuters RCV1 (ESCA App. G): Reuters-21578 Distribution 1.0"])


def build_kos(raw: Raw, settings: Mapping[str, Any]) -> Corpus:
    """UCI KOS blog entries (3,430 documents, 6,906 words), random held-out split."""
    root = Path(raw["kos"])
    X, vocab = readers.read_uci_docword(readers._find_file(root, "docword.kos.txt.gz"), readers._find_file(root, "vocab.kos.txt"))
    n_test, seed = _opt(settings, "test_docs", 343), _opt(settings, "seed", 0)
    split = _random_split(X.shape[0], n_test, seed)
    return _finish("kos", X, vocab, [str(i + 1) for i in range(X.shape[0])], np.full(X.shape[0], -1), [], split,
                   source="kos", settings={"test_docs": n_test, "seed": seed}, notes=[])


def build_msweb(raw: Raw, settings: Mapping[str, Any]) -> Corpus:
    """Anonymous Microsoft Web Data: binary user x page-attribute matrix (294 attributes), UCI's
    32,711 training and 5,000 test users."""
    X, split, titles = readers.read_msweb(raw["msweb"])
    return _finish("msweb", X, titles, [str(i) for i in range(X.shape[0])], np.full(X.shape[0], -1), [], split,
                   source="msweb", settings={}, notes=[])


# ----------------------------------------------------------------------------------------------

CORPORA: dict[str, CorpusSpec] = {
    s.name: s
    for s in [
        CorpusSpec("news20", ("20news_bydate",), build_news20, "20 Newsgroups, headers and duplicates removed", "vmf",
                   {"classes": 20, "docs": 18803, "vocab": 28571}, has_tfidf=True),
        CorpusSpec("news20_small", ("20news_bydate",), build_news20_small, "100 messages per newsgroup", "vmf",
                   {"classes": 20, "docs": 2000, "vocab": 16218}, has_tfidf=True, subsample_pool=_news20_small_pool),
        CorpusSpec("classic3", ("classic3",), build_classic3, "CRAN + CISI + MED abstracts", "vmf",
                   {"classes": 3, "docs": 3891, "vocab": 4674}, has_tfidf=True),
        CorpusSpec("classic300", ("classic3",), build_classic300, "100 abstracts per classic3 collection", "vmf",
                   {"classes": 3, "docs": 300, "vocab": 2551}, has_tfidf=True, subsample_pool=_classic_pool),
        CorpusSpec("news20_different", ("20news_bydate", "20news_matlab_vocab"), build_news20_different,
                   "baseball + space + atheism (20News-different)", "sggmc",
                   {"classes": 3, "train_docs": 1666, "test_docs": 1107, "vocab": 5000}, has_tfidf=True),
        CorpusSpec("wiki_sggmc", ("wikipedia_text", "wikipedia_vocab"), build_wiki_sggmc,
                   "Wikipedia, 3,000 mid-frequency terms", "sggmc",
                   {"train_docs": 150000, "test_docs": 1000, "vocab": 3000}, has_tfidf=True),
        CorpusSpec("wikipedia", ("wikipedia_text", "wikipedia_vocab"), build_wikipedia,
                   "Wikipedia over Hoffman's 7,702 words", "esca",
                   {"docs": 6631176, "vocab": 210233, "tokens": 1133050514}, kind="tokens"),
        CorpusSpec("pubmed", ("ohsumed", "pubmed_vocab"), build_pubmed, "OHSUMED MEDLINE abstracts (PubMed stand-in)",
                   "esca", {"docs": 8200000, "vocab": 141043, "tokens": 737869085}, kind="tokens"),
        CorpusSpec("news20_lda", ("20news_bydate",), build_news20_lda, "20 Newsgroups bydate, LDA counts", "esca", {},
                   kind="tokens"),
        CorpusSpec("reuters", ("reuters21578",), build_reuters, "Reuters-21578 (RCV1 stand-in)", "esca", {}, kind="tokens"),
        CorpusSpec("kos", ("kos",), build_kos, "UCI KOS blog entries", "sgnht",
                   {"docs": 3430, "vocab": 6906, "tokens": 467714}, kind="tokens"),
        CorpusSpec("msweb", ("msweb",), build_msweb, "Anonymous Microsoft Web Data", "scir",
                   {"train_docs": 32711, "test_docs": 5000, "vocab": 294}, kind="binary"),
    ]
}


def corpora_of_kind(*kinds: str) -> list[str]:
    """Names of the catalogue's corpora of the given kinds (:data:`CORPUS_KINDS`), in catalogue order."""
    unknown = set(kinds) - set(CORPUS_KINDS)
    if unknown:
        raise ValueError(f"unknown corpus kind(s) {sorted(unknown)}; kinds: {CORPUS_KINDS}")
    return [n for n, s in CORPORA.items() if s.kind in kinds]


#: raw source -> the interim product that replaces it when given (see news20_messages, wikipedia_counts)
INTERIM_OF = {"20news_bydate": "news20_messages", "wikipedia_text": "wikipedia_counts"}


def build_corpus(name: str, raw: Raw, settings: Mapping[str, Any] | None = None) -> Corpus:
    """Build corpus ``name`` from the extracted sources ``raw`` (source id -> directory).

    Every raw source it reads is first checked against what the fetch step verified (the size and
    sha256 of each file, :func:`~scalable_bayes.corpora.verify.verify_extracted`): a file truncated or
    edited since then raises ``DataError`` naming it, instead of a smaller corpus built without a word.
    (Sources with an interim product, 20 Newsgroups and the Wikipedia text, are checked by
    :func:`news20_messages` / :func:`wikipedia_counts`, which read them.)
    """
    if name not in CORPORA:
        raise ValueError(f"unknown corpus {name!r}; known corpora: {', '.join(sorted(CORPORA))}")
    spec = CORPORA[name]
    missing = [s for s in spec.sources if s not in raw and INTERIM_OF.get(s) not in raw]
    if missing:
        raise ValueError(f"corpus {name!r} needs raw sources {missing}; fetch them first (rule fetch_source)")
    _verify_raw(raw, [s for s in spec.sources if s not in INTERIM_OF])
    t0 = time.perf_counter()
    corpus = spec.builder({k: Path(v) for k, v in raw.items()}, dict(settings or {}))
    corpus.meta["paper"] = spec.paper
    corpus.meta["paper_counts"] = dict(spec.paper_counts)
    corpus.meta["description"] = spec.description
    corpus.meta["build_seconds"] = round(time.perf_counter() - t0, 3)
    return corpus


def subsample_document_counts(name: str, raw: Raw, settings: Mapping[str, Any], seeds) -> list[int]:
    """Document counts of a per-class subsample corpus as its build would give them with other subsample seeds.

    The count of a per-class subsample is ``per_class`` x classes minus the documents its own vocabulary
    filters leave empty (:func:`_finish` drops them), so it depends on the seed. For each seed this redraws the
    selection with the builder's own function (:func:`_sample_per_class`) from the corpus's pool
    (``CorpusSpec.subsample_pool``), builds its counts with the builder's vocabulary filters
    (:func:`_vmf_counts`) and counts the documents :func:`drop_empty_documents` keeps; no tf-idf, split or
    store is built.

    Parameters
    ----------
    name : str
        A corpus of :data:`CORPORA` with a ``subsample_pool`` (news20_small, classic300).
    raw : mapping of str to path
        Its raw sources (or their interim products), as :func:`build_corpus` takes them.
    settings : mapping
        The corpus settings it was built with (``meta["settings"]`` of the processed corpus): ``per_class``
        and ``min_df`` (None or absent: the builder's defaults); its ``seed`` is ignored.
    seeds : iterable of int
        The subsample seeds to redraw with.

    Returns
    -------
    list of int
        The document count for each seed, in order.

    Raises
    ------
    ValueError
        for a corpus that is not a per-class subsample or a missing raw source.
    """
    spec = CORPORA.get(name)
    if spec is None or spec.subsample_pool is None:
        raise ValueError(f"corpus {name!r} is not a per-class subsample; those are "
                         f"{sorted(n for n, s in CORPORA.items() if s.subsample_pool is not None)}")
    missing = [s for s in spec.sources if s not in raw and INTERIM_OF.get(s) not in raw]
    if missing:
        raise ValueError(f"corpus {name!r} needs raw sources {missing} to redraw its subsample")
    _verify_raw(raw, [s for s in spec.sources if s not in INTERIM_OF])
    pool, _ = spec.subsample_pool({k: Path(v) for k, v in raw.items()})
    labels, texts = pool["label"].to_numpy(), pool["text"].to_numpy()
    per_class, min_df = _opt(settings, "per_class", SUBSAMPLE_PER_CLASS), _opt(settings, "min_df", SUBSAMPLE_MIN_DF)
    out = []
    for seed in seeds:
        X, _ = _vmf_counts(texts[_sample_per_class(labels, per_class, int(seed))], min_df)
        out.append(int(drop_empty_documents(sp.csr_matrix(X)).sum()))
    return out


# ----------------------------------------------------------------------------------------------
# non-text data sets


def build_movielens(raw: Raw) -> pd.DataFrame:
    """ml-100k ratings (stand-in for MovieLens-1M): user, item (0-based), rating, timestamp."""
    _verify_raw(raw, ["movielens_100k"])
    return readers.read_movielens_100k(raw["movielens_100k"])


def build_mnist(raw: Raw) -> dict[str, np.ndarray]:
    """MNIST arrays from the mirror: the 10,000 t10k images (flattened uint8) and labels, and the
    60,000 training labels (the training images are not available)."""
    _verify_raw(raw, ["mnist"])
    root = Path(raw["mnist"])

    def idx(name: str) -> np.ndarray:
        # the fetch step stores the IDX files decompressed; a plain copy of the mirror keeps the .gz
        for candidate in (name, name + ".gz"):
            hits = sorted(root.rglob(candidate))
            if hits:
                return readers.read_idx(hits[0])
        raise FileNotFoundError(f"no {name}[.gz] under {root}; re-run the fetch rule for mnist")

    images = idx("t10k-images-idx3-ubyte")
    labels = idx("t10k-labels-idx1-ubyte")
    train_labels = idx("train-labels-idx1-ubyte")
    if images.shape[0] != labels.shape[0]:
        raise ValueError(f"MNIST: {images.shape[0]} images but {labels.shape[0]} labels")
    return {"images": images.reshape(images.shape[0], -1), "labels": labels.astype(np.int64),
            "train_labels": train_labels.astype(np.int64)}
