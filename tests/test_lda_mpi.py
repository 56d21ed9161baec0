"""Distributed ESCA over MPI: `mpiexec -n 2` gives exactly the single-process result (same seed)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve()


def _mpiexec():
    exe = Path(sys.executable).with_name("mpiexec")
    return str(exe) if exe.exists() else shutil.which("mpiexec")


@pytest.mark.slow
def test_mpiexec_two_ranks_equals_single_process():
    pytest.importorskip("mpi4py")
    mpiexec = _mpiexec()
    if mpiexec is None:
        pytest.skip("no mpiexec (pip install mpich)")
    env = dict(os.environ, NUMBA_NUM_THREADS="2")
    out = subprocess.run([mpiexec, "-n", "2", sys.executable, str(HERE), str(HERE.parent)], capture_output=True,
                         text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "MPI-OK sparse_alias ranks=2" in out.stdout, out.stdout + out.stderr[-2000:]
    assert "MPI-OK plain ranks=2" in out.stdout
    assert "MPI-OK heavy ranks=2" in out.stdout
    assert "MPI-OK stop ranks=2" in out.stdout


def test_shard_bounds_balanced():
    from scalable_bayes.inference.lda.distributed import shard_bounds

    b = shard_bounds(np.array([5, 5, 5, 5, 100, 5]), 2)
    assert b[0] == 0 and b[-1] == 6 and 0 < b[1] < 6
    assert list(shard_bounds(np.ones(10, int), 1)) == [0, 10]


def _mpi_main(tests_dir):
    sys.path.insert(0, tests_dir)
    import naive_lda as naive
    from mpi4py import MPI

    from scalable_bayes.inference.lda import ESCA
    from scalable_bayes.inference.lda.distributed import DistributedESCA

    X, _, _ = naive.synthetic_lda(n_docs=300, n_words=120, n_topics=5, doc_len=40, seed=7)
    Xtr, Xte = X[:250], X[250:]
    comm = MPI.COMM_WORLD
    # "heavy": the words of 100+ tokens keep int32 rows of their own (as words of 2^16+ tokens do),
    # chosen from the global totals and summed across the ranks like the other counts
    for label, sampler, heavy_min in (("sparse_alias", "sparse_alias", None), ("plain", "plain", None),
                                      ("heavy", "sparse_alias", 100)):
        d = DistributedESCA(n_components=6, max_iter=6, random_state=3, n_jobs=1, comm=comm, sampler=sampler, evaluate_every=3)
        s = ESCA(n_components=6, max_iter=6, random_state=3, n_jobs=2, sampler=sampler, evaluate_every=3)
        if heavy_min is not None:
            d._heavy_min_total = s._heavy_min_total = heavy_min
        d.fit(Xtr, X_heldout=Xte)
        if heavy_min is not None:
            assert 0 < d._heavy.size < Xtr.shape[1], d._heavy.size
        if comm.rank == 0:
            s.fit(Xtr, X_heldout=Xte)
            np.testing.assert_array_equal(d._heavy, s._heavy)
            np.testing.assert_array_equal(d.components_, s.components_)
            assert [h["heldout_ll"] for h in d.history_] == [h["heldout_ll"] for h in s.history_]
            assert d.shard_[0] == 0 and d.shard_[1] < Xtr.shape[0]
            print(f"MPI-OK {label} ranks={comm.size} ll={d.history_[-1]['heldout_ll']:.6f}", flush=True)
    # a callback on the last rank alone asks to stop after iteration 2: every rank stops there together (a rank
    # that went on would wait for the others in its next Allreduce), with the single process's 2-iteration state
    last = comm.size - 1
    d = DistributedESCA(n_components=6, max_iter=6, random_state=3, n_jobs=1, comm=comm, evaluate_every=1,
                        callbacks=[lambda est, rec: comm.rank == last and rec["iteration"] >= 2])
    d.fit(Xtr, X_heldout=Xte)
    assert d.n_iter_ == 2 and [h["iteration"] for h in d.history_] == [0, 1, 2], (comm.rank, d.n_iter_)
    if comm.rank == 0:
        s = ESCA(n_components=6, max_iter=2, random_state=3, n_jobs=2).fit(Xtr)
        np.testing.assert_array_equal(d.components_, s.components_)
        print(f"MPI-OK stop ranks={comm.size}", flush=True)


if __name__ == "__main__":
    _mpi_main(sys.argv[1])
