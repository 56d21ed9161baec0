"""Distributed ESCA over MPI (mpi4py): documents sharded across ranks, counts combined by Allreduce.

Each rank owns a contiguous, token-balanced block of documents and keeps only their document-topic
counts; the topic-word counts W and topic totals T are global. One iteration: every rank builds the
draw tables from the global read buffer, sweeps its own documents (Numba threads within the rank)
writing a partial W and T, and ``Allreduce(SUM)`` turns the partials into the global write buffer.
Document m draws from the stream (seed, iteration, m) with its GLOBAL index m, so the fit is
identical, count for count, to the single-process :class:`ESCA` with the same seed, whatever the
number of ranks and threads.

    mpiexec -n 2 python -m scalable_bayes_papers.esca.mpi_run --help   # the ESCA paper's command line

Every rank receives the whole training matrix (each rank reads the corpus file); only the sampler
state and the work are sharded.
"""

from __future__ import annotations

import logging

import numpy as np

from ..._optional import require

from . import _kernels as kern
from ._estimators import ESCA, CorpusArrays

logger = logging.getLogger(__name__)

__all__ = ["DistributedESCA", "shard_bounds"]


def shard_bounds(doc_len: np.ndarray, n_shards: int) -> np.ndarray:
    """Boundaries (n_shards + 1) of contiguous document blocks with about equal token counts.

    Parameters
    ----------
    doc_len : ndarray of int, shape (M,)
        Tokens per document.
    n_shards : int
        Number of blocks (MPI ranks).

    Returns
    -------
    ndarray of int64, shape (n_shards + 1,)
        Non-decreasing document indices from 0 to M; shard r holds documents
        ``bounds[r]:bounds[r + 1]``.
    """
    cum = np.cumsum(doc_len)
    targets = cum[-1] * np.arange(1, n_shards) / n_shards
    cuts = np.searchsorted(cum, targets, side="left") + 1
    return np.maximum.accumulate(np.concatenate([[0], cuts, [doc_len.size]]).astype(np.int64))


class _Shard(CorpusArrays):
    def __init__(self, C: CorpusArrays, lo: int, hi: int):
        a, b = C.indptr[lo], C.indptr[hi]
        self.indptr = C.indptr[lo:hi + 1] - a
        self.indices = C.indices[a:b]
        self.cnt = C.cnt[a:b]
        self.n_docs, self.n_words = hi - lo, C.n_words
        self.doc_len = C.doc_len[lo:hi]
        self.n_tokens = int(self.cnt.sum(dtype=np.int64))


class DistributedESCA(ESCA):
    """:class:`ESCA` sharded over the ranks of an MPI communicator ``comm`` (keyword-only; default
    ``MPI.COMM_WORLD``). Same parameters, attributes and results as ESCA; ``doc_topic_counts_``
    holds this rank's documents only (``shard_`` = (first, last + 1) document of the rank).

    Parameters
    ----------
    n_components, doc_topic_prior, topic_word_prior, max_iter, n_jobs, random_state, verbose
        As in :class:`ESCA` (a ``random_state`` that is None or a Generator is resolved on rank 0 and
        broadcast, so every rank uses the same seed).
    comm : mpi4py.MPI.Comm, optional
        The communicator; default ``MPI.COMM_WORLD`` (needs mpi4py).
    sampler, decomposition, dense_min_topics, init, evaluate_every, heldout_sweeps, callbacks
        As in :class:`ESCA`.
    """

    _name = "ESCA_MPI"
    # the Allreduce adds the other ranks' counts behind the sweep's back: the tables scan all counts
    _track_touched = False

    def __init__(self, n_components=100, *, doc_topic_prior=None, topic_word_prior=0.1, max_iter=100, n_jobs=None,
                 random_state=0, verbose=0, comm=None, sampler="sparse_alias", decomposition="word",
                 dense_min_topics=None, init="uniform", evaluate_every=0, heldout_sweeps=20, callbacks=()):
        super().__init__(n_components, doc_topic_prior=doc_topic_prior, topic_word_prior=topic_word_prior,
                         max_iter=max_iter, n_jobs=n_jobs, random_state=random_state, verbose=verbose,
                         sampler=sampler, decomposition=decomposition, dense_min_topics=dense_min_topics,
                         init=init, evaluate_every=evaluate_every, heldout_sweeps=heldout_sweeps, callbacks=callbacks)
        self.comm = comm

    def _comm(self):
        if self.comm is None:
            MPI = require("mpi4py.MPI", "distributed ESCA (scalable_bayes.inference.lda.distributed)")
            return MPI.COMM_WORLD
        return self.comm

    def _validate(self):
        super()._validate()
        # random_state=None (or a Generator) gives a different seed on each rank: every rank must use rank 0's
        self.seed_ = int(self._comm().bcast(self.seed_, root=0))

    def _allreduce(self, a):
        MPI = require("mpi4py.MPI", "distributed ESCA (scalable_bayes.inference.lda.distributed)")
        self._comm().Allreduce(MPI.IN_PLACE, a, op=MPI.SUM)

    def _stop_agreed(self, stop):
        """Stop when any rank's callbacks ask (every rank records the same iterations, so all meet here)."""
        MPI = require("mpi4py.MPI", "distributed ESCA (scalable_bayes.inference.lda.distributed)")
        return bool(self._comm().allreduce(int(bool(stop)), op=MPI.MAX))

    def _warm_up(self):
        """Compile (or load) the kernels on rank 0 alone before the others load them from Numba's
        on-disk cache: ranks compiling one signature at once can leave a cache entry that crashes
        on load."""
        import scipy.sparse as sp

        comm = self._comm()
        if comm.rank == 0:
            tiny = sp.csr_matrix(np.array([[1, 2, 0], [0, 1, 3]], dtype=np.int32))
            est = ESCA(n_components=2, max_iter=1, n_jobs=self.n_threads_, random_state=0, sampler=self.sampler,
                       decomposition=self.decomposition, dense_min_topics=self.dense_min_topics)
            est._doc_offset = 1
            est.fit(tiny)
        comm.Barrier()

    def _init_state(self, C: CorpusArrays):
        comm = self._comm()
        if comm.size > 1:
            self._warm_up()
        bounds = shard_bounds(C.doc_len, comm.size)
        lo, hi = int(bounds[comm.rank]), int(bounds[comm.rank + 1])
        self.shard_ = (lo, hi)
        self.n_ranks_ = comm.size
        self._doc_offset = lo
        self._table_tokens = C.n_tokens  # the draw tables are built from the global W
        # global word totals: they bound the global W_kv and choose the heavy words, alike on every rank
        self._word_totals = kern.col_sums(C.indices, C.cnt, C.n_words)
        self._Cloc = _Shard(C, lo, hi)
        super()._init_state(self._Cloc)
        self._reduce_counts(self._W[0])

    def _reduce_counts(self, W):
        """Sum the ranks' topic-word counts (and the heavy words' rows) and topic totals in place."""
        self._allreduce(W)
        if self._Wh.size:
            self._allreduce(self._Wh)
        self._allreduce(self._T)

    def _iterate(self, C: CorpusArrays, it: int):
        super()._iterate(self._Cloc, it)
        self._reduce_counts(self._W[self._r])
