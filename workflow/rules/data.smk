# Data: fetch (local mirror first, then the upstream URL) -> data/raw/<source>/,
# raw -> data/processed/<corpus>/ (bag of words, tf-idf, splits), and the dataset table.

include: "functions/data.smk"


wildcard_constraints:
    source="|".join(sorted(SOURCES)),


rule fetch_source:
    conda:
        CONDA_ENV
    output:
        directory("data/raw/{source}"),
    # Where the files come from (mirror, URLs, retries) is read from the config inside the script,
    # not passed as params: a verified source does not depend on how it was obtained, so changing
    # those settings must not re-run the fetch. For the same reason, and unlike every other rule, it
    # takes no code_inputs(): the fetch code only obtains the files and checks them against the sha256
    # sums and counts pinned in corpora/sources.py, so an edit to it cannot change a verified source
    # (a broken one fails that check), and re-downloading every data set after each edit of
    # corpora/fetch.py would cost much and change nothing (force one with `--forcerun fetch_source`).
    log:
        "logs/data/fetch_source/{source}.log",
    benchmark:
        "benchmarks/data/fetch_source/{source}.tsv"
    threads: 1
    resources:
        **cost_resources(fixed_cost(20, 300), runtime=60),
    message:
        "fetching and verifying raw data set {wildcards.source}"
    script:
        "../scripts/fetch_source.py"


rule news20_messages:
    conda:
        CONDA_ENV
    input:
        **{"20news_bydate": "data/raw/20news_bydate"},
        code=code_inputs("build_interim.py"),
    output:
        "data/interim/news20_messages.parquet",
    log:
        "logs/data/news20_messages.log",
    benchmark:
        "benchmarks/data/news20_messages.tsv"
    resources:
        **cost_resources(fixed_cost(10, 450)),
    script:
        "../scripts/build_interim.py"


rule wikipedia_counts:
    conda:
        CONDA_ENV
    input:
        wikipedia_text="data/raw/wikipedia_text",
        wikipedia_vocab="data/raw/wikipedia_vocab",
        code=code_inputs("build_interim.py"),
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
        **cost_resources(wikipedia_counts_cost),
    script:
        "../scripts/build_interim.py"


rule build_corpus_tfidf:
    conda:
        CONDA_ENV
    input:
        unpack(corpus_raw_dirs),
        code=code_inputs("build_corpus.py"),
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
        **cost_resources(build_corpus_cost),
    message:
        "building corpus {wildcards.corpus} (bag of words + tf-idf)"
    script:
        "../scripts/build_corpus.py"


rule build_corpus_counts:
    conda:
        CONDA_ENV
    input:
        unpack(corpus_raw_dirs),
        code=code_inputs("build_corpus.py"),
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
        **cost_resources(build_corpus_cost),
    message:
        "building corpus {wildcards.corpus} (bag of words)"
    script:
        "../scripts/build_corpus.py"


rule build_movielens:
    conda:
        CONDA_ENV
    input:
        movielens_100k="data/raw/movielens_100k",
        code=code_inputs("build_nontext.py"),
    output:
        "data/processed/movielens/ratings.parquet",
    log:
        "logs/data/build_movielens.log",
    resources:
        **cost_resources(fixed_cost(10, 400)),
    script:
        "../scripts/build_nontext.py"


rule build_mnist:
    conda:
        CONDA_ENV
    input:
        mnist="data/raw/mnist",
        code=code_inputs("build_nontext.py"),
    output:
        "data/processed/mnist/mnist.npz",
    log:
        "logs/data/build_mnist.log",
    resources:
        **cost_resources(fixed_cost(10, 500)),
    script:
        "../scripts/build_nontext.py"


rule dataset_table:
    conda:
        CONDA_ENV
    input:
        unpack(dataset_table_raw),
        meta=expand("data/processed/{corpus}/meta.json", corpus=config["data"]["table"]),
        code=code_inputs("dataset_table.py"),
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
        redraws=config["data"]["subsample_redraws"],
    log:
        "logs/data/dataset_table.log",
    resources:
        **light_resources(4000, 10),
    script:
        "../scripts/dataset_table.py"
