# Helper functions and constants of data.smk (kept apart from the rules, as snakemake --lint asks).
from scalable_bayes.corpora.build import CORPORA, INTERIM_OF
from scalable_bayes.corpora.sources import SOURCES

TFIDF_CORPORA = sorted(n for n, s in CORPORA.items() if s.has_tfidf)
COUNT_CORPORA = sorted(n for n, s in CORPORA.items() if not s.has_tfidf)


INTERIM_PATHS = {
    "news20_messages": "data/interim/news20_messages.parquet",
    "wikipedia_counts": "data/interim/wikipedia_counts/counts.npz",
}


def corpus_raw_dirs(wildcards):
    """What a corpus is built from: raw source directories, or the interim product shared by the
    corpora of one source (20 Newsgroups messages, Wikipedia counts), which replaces the raw source."""
    out = {}
    for s in CORPORA[wildcards.corpus].sources:
        interim = INTERIM_OF.get(s)
        if interim:
            out[interim] = INTERIM_PATHS[interim]
        else:
            out[s] = f"data/raw/{s}"
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
