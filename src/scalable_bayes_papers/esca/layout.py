"""Where the ESCA pipeline keeps its LDA run tables: one path scheme for the workflow's rules
(``workflow/rules/functions/esca.smk``) and for the tools that read a finished run (``tools/pool_claims.py``).

Every LDA run is one file ``results/esca/runs/<exp>/<train>~<test>/<method>~K<K>~beta<beta>~t<threads>/seed<seed>.parquet``
(relative to the run directory); ``esca`` below is the validated ``esca`` block of a run's config, its seeds
already moved by the run's ``seed_offset``."""

from __future__ import annotations

#: engines that use the run's threads; CGS and CVB0 sweep sequentially, so one thread count is enough for them
PARALLEL_METHODS = ("ESCA", "ESCA_plain", "tomotopy")


def run_path(exp, train, test, method, K, beta, threads, seed) -> str:
    """The run table of one LDA run (rule ``esca_lda_runs``)."""
    return f"results/esca/runs/{exp}/{train}~{test}/{method}~K{K}~beta{beta}~t{threads}/seed{seed}.parquet"


def fig2_run_paths(esca: dict) -> list[str]:
    """The run tables of Fig. 2: its corpora x engines x ``esca.seeds``."""
    r = esca["fig2"]["run"]
    return [run_path("fig2", c, c, m, r["n_topics"], r["beta"], r["threads"], s)
            for c in esca["fig2"]["corpora"] for m in esca["fig2"]["methods"] for s in esca["seeds"]]


def throughput_run_paths(esca: dict) -> list[str]:
    """The run tables of the throughput table: corpora x engines x thread counts x seeds, the sequential
    engines at the first thread count only."""
    t = esca["throughput"]
    r = t["run"]
    return [run_path("throughput", c, c, m, r["n_topics"], r["beta"], th, s)
            for c in t["corpora"] for m in t["methods"] for th in t["threads"] for s in t["seeds"]
            if m in PARALLEL_METHODS or th == t["threads"][0]]
