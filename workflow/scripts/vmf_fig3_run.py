"""VMF Fig. 3: all K and mixture variants of one (data set, seed) on the processed tf-idf corpus."""
from scalable_bayes.corpora import load_corpus
from scalable_bayes.inference.vmf.experiments import run_fig3
from scalable_bayes.utils import save_table, setup_logging

setup_logging(snakemake.log[0])
s = snakemake.params.settings
corpus = load_corpus(snakemake.params.corpus_dir)
if corpus.tfidf is None:
    raise ValueError(f"corpus {snakemake.params.corpus_dir} has no tfidf.npz; rebuild it with the build_corpus rule")
df = run_fig3(corpus.tfidf, corpus.labels, snakemake.wildcards.dataset, s["k_grid"], int(snakemake.wildcards.seed),
              max_iter=s["max_iter"], tol=s["tol"], kappa_max=s["kappa_max"], kappa_method=s["kappa_method"],
              negentropy=s["negentropy"], max_docs=s["max_docs"], spkmeans=s["spkmeans"])
save_table(df, snakemake.output[0])
