"""Distributed ESCA rows of the throughput table: fit
:class:`scalable_bayes.inference.lda.distributed.DistributedESCA` on a processed corpus under MPI;
rank 0 writes the trace (parquet).

    mpiexec -n 2 python -m scalable_bayes_papers.esca.mpi_run --ranks 2 --help
    srun --mpi=pmi2 -n 2 python -m scalable_bayes_papers.esca.mpi_run --ranks 2 ...   # inside a Slurm job

``--ranks R`` is the number of ranks the run was asked for: every process checks that it belongs to one
MPI job of exactly R ranks before it reads anything, and stops with an error otherwise. A launcher that
does not speak the MPI library's process-management interface (e.g. ``srun`` without ``--mpi=pmi2``
for the MPICH that the lock installs) starts R independent one-rank runs; without this check they
would each write a "distributed" result that was not distributed.

Every rank reads the corpus file and takes the same training subsample and held-out documents as the
single-process runs (:mod:`scalable_bayes_papers.esca.data`); only the sampler state and the work
are sharded.
"""

from __future__ import annotations

import argparse
import logging

logger = logging.getLogger(__name__)


class RankMismatchError(RuntimeError):
    """The MPI job has not the number of ranks the run was asked for."""


def check_world_size(size: int, ranks: int) -> None:
    """Raise :class:`RankMismatchError` unless the MPI world has exactly ``ranks`` processes."""
    if size != ranks:
        raise RankMismatchError(
            f"asked for {ranks} MPI ranks, but this process is in an MPI job of {size}: the launcher did not "
            f"start one MPI job of {ranks} ranks. Under Slurm launch with the PMI the MPI library speaks "
            f"(`srun --mpi=pmi2 -n {ranks} ...` for MPICH; `srun --mpi=list` shows what the site offers) or "
            f"with the MPI library's own `mpiexec -n {ranks}` inside the allocation; locally use the mpiexec "
            f"beside the Python that has mpi4py.")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def main(argv=None):
    """Command line: fit DistributedESCA on a processed corpus, rank 0 writes the trace (parquet)."""
    p = argparse.ArgumentParser(description="Distributed ESCA (run under mpiexec -n R or srun --mpi=pmi2 -n R).")
    p.add_argument("--ranks", required=True, type=_positive_int,
                   help="MPI ranks the run was launched with; any other world size is an error")
    p.add_argument("--corpus", required=True, help="processed corpus directory (train/test split)")
    p.add_argument("--out", required=True, help="parquet trace written by rank 0")
    p.add_argument("--n-topics", type=int, default=100)
    p.add_argument("--alpha", type=float, default=None)
    p.add_argument("--beta", type=float, default=0.1)
    p.add_argument("--n-iter", type=int, default=20)
    p.add_argument("--evaluate-every", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--seed-offset", type=int, default=0,
                   help="a replication's seed_offset, added to the document subsamples' fixed seeds")
    p.add_argument("--max-train-docs", type=int, default=None)
    p.add_argument("--max-test-docs", type=int, default=500)
    p.add_argument("--log", default=None)
    args = p.parse_args(argv)
    import pandas as pd

    from scalable_bayes.corpora import load_corpus
    from scalable_bayes.inference.lda.distributed import DistributedESCA
    from scalable_bayes.utils import save_table, setup_logging

    from .data import heldout_docs, training_docs

    if args.log:
        setup_logging(args.log)
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    try:
        check_world_size(comm.size, args.ranks)
    except RankMismatchError as e:
        logger.error("%s", e)
        raise SystemExit(f"mpi_run: error: {e}") from None
    c = load_corpus(args.corpus)
    Xtr = training_docs(c, args.max_train_docs, args.seed_offset)
    Xte, _ = heldout_docs(c, c, args.max_test_docs, args.seed_offset)
    est = DistributedESCA(n_components=args.n_topics, doc_topic_prior=args.alpha, topic_word_prior=args.beta,
                          max_iter=args.n_iter, n_jobs=args.threads, random_state=args.seed, comm=comm,
                          evaluate_every=args.evaluate_every).fit(Xtr, X_heldout=Xte)
    fit_times = comm.gather(est.fit_time_, root=0)
    if comm.rank == 0:
        df = pd.DataFrame(est.history_)
        df["method"] = "ESCA_MPI"
        df["ranks"] = comm.size
        df["threads"] = args.threads
        df["n_tokens"] = est.n_tokens_
        df["n_topics"] = args.n_topics
        df["tokens_per_s"] = est.n_tokens_ * args.n_iter / max(fit_times)
        df["train_corpus"] = c.name
        save_table(df, args.out)
        logger.info("ESCA over %d ranks: %.3g tokens/s, final held-out LL %s", comm.size, df["tokens_per_s"].iloc[0],
                    df["heldout_ll"].iloc[-1] if "heldout_ll" in df else None)


if __name__ == "__main__":
    main()
