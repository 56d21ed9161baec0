# Helper functions and constants of data.smk (kept apart from the rules, as snakemake --lint asks).
from scalable_bayes.corpora.build import CORPORA, INTERIM_OF
from scalable_bayes.corpora.sources import SOURCES

TFIDF_CORPORA = sorted(n for n, s in CORPORA.items() if s.has_tfidf)
COUNT_CORPORA = sorted(n for n, s in CORPORA.items() if not s.has_tfidf)


INTERIM_PATHS = {
    "news20_messages": "data/interim/news20_messages.parquet",
    "wikipedia_counts": "data/interim/wikipedia_counts/counts.npz",
}


def raw_inputs(name):
    """What corpus ``name`` is built from: raw source directories, or the interim product shared by the
    corpora of one source (20 Newsgroups messages, Wikipedia counts), which replaces the raw source."""
    out = {}
    for s in CORPORA[name].sources:
        interim = INTERIM_OF.get(s)
        if interim:
            out[interim] = INTERIM_PATHS[interim]
        else:
            out[s] = f"data/raw/{s}"
    return out


def corpus_raw_dirs(wildcards):
    """Inputs of rule build_corpus_*: :func:`raw_inputs` of its corpus."""
    return raw_inputs(wildcards.corpus)


def dataset_table_raw(wildcards):
    """Raw inputs of the table's per-class subsamples (news20_small, classic300): the dataset table redraws
    their selection with other seeds to measure the spread of their document counts (DATA-Tab's sd)."""
    out = {}
    for name in config["data"]["table"]:
        if CORPORA[name].subsample_pool is not None:
            out.update(raw_inputs(name))
    return out


def wikipedia_max_docs():
    """Articles the interim Wikipedia counts must hold: the most any configured corpus reads."""
    caps = [config["data"]["corpora"].get(c, {}).get("max_docs") for c in ("wikipedia", "wiki_sggmc")]
    return None if any(c is None for c in caps) else max(caps)


def corpus_settings(wildcards):
    settings = dict(config["data"]["corpora"].get(wildcards.corpus, {}))
    settings["seed"] = config["data"]["seed"]
    return settings


def corpus_files(name):
    """Files of processed corpus ``name`` (what a paper rule lists as input)."""
    files = [f"data/processed/{name}/{f}" for f in ("counts.npz", "vocab.txt", "docs.parquet", "meta.json")]
    if CORPORA[name].has_tfidf:
        files.append(f"data/processed/{name}/tfidf.npz")
    return files


def data_targets():
    return [
        "results/tables/datasets.csv",
        "results/tables/datasets.md",
        "results/data/claims/DATA-Tab.json",
    ]


PAPER_TARGETS["data"] = data_targets


# ---- Corpus sizes for the cost models (the corpora are not built when the DAG is) ----------------
# (documents of the whole corpus, non-zeros per document, tokens per document). Wikipedia's and KOS's
# document counts are the catalogue's (src/scalable_bayes/corpora/sources.py: the Wikipedia sample's bag of
# words, 30,729 articles, 9.81M non-zeros, 21.5M tokens -> 320 / 700 per article; its first 10,989 articles
# hold 826 tokens each, so 330 / 830 are used; KOS 3,430 / 353k / 468k); the others are upper bounds
# (OHSUMED 7,400 abstracts, Reuters 21,578 records, 20 Newsgroups 18,846 messages, 1.61M tokens in its 11,314
# training documents; 20News-different 2,773, news20_small 100 per group).
_WIKI_DOCS = SOURCES["wikipedia_bow"].expected["D"]
CORPUS_SIZE = {"wikipedia": (_WIKI_DOCS, 330, 830), "wiki_sggmc": (_WIKI_DOCS, 330, 830), "pubmed": (7400, 100, 150),
               "reuters": (21578, 80, 120), "news20_lda": (11314, 100, 150),
               "kos": (SOURCES["kos"].expected["D"], 105, 140), "news20": (18846, 100, 150),
               "news20_small": (2000, 100, 150), "news20_different": (2773, 100, 150), "classic3": (3891, 50, 60),
               "classic300": (300, 50, 60), "msweb": (37711, 3, 3)}


def corpus_train_docs(name, cap=None):
    """Documents of corpus ``name``'s training split (Wikipedia: the data block's max_docs minus test_docs),
    at most ``cap``."""
    docs = CORPUS_SIZE[name][0]
    c = config["data"]["corpora"].get(name, {})
    if name in ("wikipedia", "wiki_sggmc"):
        docs = (c.get("max_docs") or docs) - (c.get("test_docs") or 1000)
    return docs if cap is None else min(docs, int(cap))


def wikipedia_counts_cost(wildcards):
    """Reading and counting the Wikipedia text: ~2 ms of CPU and ~30 kB of memory per article (quick run,
    12,000 articles: 26 s, 645 MB; paper scale, all 30,729, two runs: 46 and 59 s, 1,114 and 1,124 MB)."""
    docs = wikipedia_max_docs() or CORPUS_SIZE["wikipedia"][0]
    return Cost(COMPILE_CPU_S + 2e-3 * docs, BASE_MEM_MB + 0.03 * docs)


def build_corpus_cost(wildcards):
    """Tokenising, counting, tf-idf and the split of one corpus: at most 10 s and 650 MB for every corpus
    of the quick run (20 Newsgroups, the largest text, 9.8 s and 554 MB); Wikipedia from its interim
    counts, ~0.3 ms and ~10 kB per article (12,000: 3.6 s, 303 MB; 30,729: 7.4 s, 406 MB)."""
    if wildcards.corpus in ("wikipedia", "wiki_sggmc"):
        docs = wikipedia_max_docs() or CORPUS_SIZE["wikipedia"][0]
        return Cost(COMPILE_CPU_S + 3e-4 * docs, BASE_MEM_MB + 0.01 * docs)
    return Cost(30, 700)
