# Data: fetch (local mirror first, then the upstream URL) -> data/raw/<source>/,
# raw -> data/processed/<corpus>/ (bag of words, tf-idf, splits), and the dataset table.
from scalable_bayes.corpora.build import CORPORA, INTERIM_OF
from scalable_bayes.corpora.sources import SOURCES

TFIDF_CORPORA = sorted(n for n, s in CORPORA.items() if s.has_tfidf)
COUNT_CORPORA = sorted(n for n, s in CORPORA.items() if not s.has_tfidf)


wildcard_constraints:
    source="|".join(sorted(SOURCES)),


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


rule fetch_source:
    conda:
        CONDA_ENV
    output:
        directory("data/raw/{source}"),
    # Where the files come from (mirror, URLs, retries) is read from the config inside the script,
    # not passed as params: a verified source does not depend on how it was obtained, so changing
    # those settings must not re-run the fetch.
    log:
        "logs/data/fetch_source/{source}.log",
    benchmark:
        "benchmarks/data/fetch_source/{source}.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    message:
        "fetching and verifying raw data set {wildcards.source}"
    script:
        "../scripts/fetch_source.py"


rule news20_messages:
    conda:
        CONDA_ENV
    input:
        **{"20news_bydate": "data/raw/20news_bydate"},
    output:
        "data/interim/news20_messages.parquet",
    log:
        "logs/data/news20_messages.log",
    benchmark:
        "benchmarks/data/news20_messages.tsv"
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/build_interim.py"


rule wikipedia_counts:
    conda:
        CONDA_ENV
    input:
        wikipedia_text="data/raw/wikipedia_text",
        wikipedia_vocab="data/raw/wikipedia_vocab",
    output:
        counts="data/interim/wikipedia_counts/counts.npz",
        vocab="data/interim/wikipedia_counts/vocab.txt",
        docs="data/interim/wikipedia_counts/docs.parquet",
        meta="data/interim/wikipedia_counts/meta.json",
    params:
        max_docs=wikipedia_max_docs(),
    log:
        "logs/data/wikipedia_counts.log",
    benchmark:
        "benchmarks/data/wikipedia_counts.tsv"
    resources:
        mem_mb=6000,
        runtime=30,
    script:
        "../scripts/build_interim.py"


rule build_corpus_tfidf:
    conda:
        CONDA_ENV
    input:
        unpack(corpus_raw_dirs),
    output:
        counts="data/processed/{corpus}/counts.npz",
        tfidf="data/processed/{corpus}/tfidf.npz",
        vocab="data/processed/{corpus}/vocab.txt",
        docs="data/processed/{corpus}/docs.parquet",
        meta="data/processed/{corpus}/meta.json",
    wildcard_constraints:
        corpus="|".join(TFIDF_CORPORA),
    params:
        settings=corpus_settings,
    log:
        "logs/data/build_corpus/{corpus}.log",
    benchmark:
        "benchmarks/data/build_corpus/{corpus}.tsv"
    threads: 1
    resources:
        mem_mb=6000,
        runtime=30,
    message:
        "building corpus {wildcards.corpus} (bag of words + tf-idf)"
    script:
        "../scripts/build_corpus.py"


rule build_corpus_counts:
    conda:
        CONDA_ENV
    input:
        unpack(corpus_raw_dirs),
    output:
        counts="data/processed/{corpus}/counts.npz",
        vocab="data/processed/{corpus}/vocab.txt",
        docs="data/processed/{corpus}/docs.parquet",
        meta="data/processed/{corpus}/meta.json",
    wildcard_constraints:
        corpus="|".join(COUNT_CORPORA),
    params:
        settings=corpus_settings,
    log:
        "logs/data/build_corpus/{corpus}.log",
    benchmark:
        "benchmarks/data/build_corpus/{corpus}.tsv"
    threads: 1
    resources:
        mem_mb=6000,
        runtime=30,
    message:
        "building corpus {wildcards.corpus} (bag of words)"
    script:
        "../scripts/build_corpus.py"


rule build_movielens:
    conda:
        CONDA_ENV
    input:
        movielens_100k="data/raw/movielens_100k",
    output:
        "data/processed/movielens/ratings.parquet",
    log:
        "logs/data/build_movielens.log",
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/build_nontext.py"


rule build_mnist:
    conda:
        CONDA_ENV
    input:
        mnist="data/raw/mnist",
    output:
        "data/processed/mnist/mnist.npz",
    log:
        "logs/data/build_mnist.log",
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/build_nontext.py"


rule dataset_table:
    conda:
        CONDA_ENV
    input:
        meta=expand("data/processed/{corpus}/meta.json", corpus=config["data"]["table"]),
    output:
        csv=report(
            "results/tables/datasets.csv",
            caption="../report/datasets.rst",
            category="data",
        ),
        md="results/tables/datasets.md",
        claim="results/data/claims/DATA-Tab.json",
    params:
        profile=PROFILE,
    log:
        "logs/data/dataset_table.log",
    resources:
        mem_mb=4000,
        runtime=10,
    script:
        "../scripts/dataset_table.py"


def data_targets():
    return [
        "results/tables/datasets.csv",
        "results/tables/datasets.md",
        "results/data/claims/DATA-Tab.json",
    ]


PAPER_TARGETS["data"] = data_targets
