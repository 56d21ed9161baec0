"""Rule vmf_fig3_runs: VMF Fig. 3, all K and mixture variants of one (data set, seed) on its tf-idf corpus."""
from scalable_bayes.corpora import load_corpus
from scalable_bayes.utils import numba_threads, save_table, setup_logging
from scalable_bayes_papers.vmf import runs

setup_logging(snakemake.log[0])
corpus = load_corpus(snakemake.params.corpus_dir)
with numba_threads(snakemake.threads):  # the job's cores, not every core of the node (Numba's default)
    df = runs.fig3_runs(corpus, snakemake.wildcards.dataset, int(snakemake.wildcards.seed), snakemake.params.settings)
save_table(df, snakemake.output[0])
