"""``parallel_blocks``: the block-parallel loop of the compiled kernels (blocks that split the range, one per
thread, side by side, the first in the calling thread; errors raised after every block has ended)."""

from __future__ import annotations

import threading
import time

import numba
import numpy as np
import pytest
from numba import njit

from scalable_bayes.utils import numba_threads, parallel_blocks


@njit(nogil=True, cache=True)
def _mark(lo, hi, out, tag):
    for i in range(lo, hi):
        out[i] += tag + lo  # each index written once, with its block's first index


@pytest.mark.parametrize("n", [0, 1, 2, 7, 1000])
@pytest.mark.parametrize("threads", [1, 2])
def test_blocks_split_the_range_once_each(n, threads):
    out = np.zeros(n, np.int64)
    with numba_threads(threads) as nt:
        parallel_blocks(_mark, n, out, 1)
    t = min(nt, n)
    expect = np.zeros(n, np.int64)
    for i in range(t):
        lo, hi = n * i // t, n * (i + 1) // t
        expect[lo:hi] = 1 + lo
    np.testing.assert_array_equal(out, expect)


def test_blocks_run_side_by_side_the_first_in_the_calling_thread():
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs two Numba threads")
    seen = []
    barrier = threading.Barrier(2, timeout=10)  # deadlocks (then times out) unless both blocks run at once

    def block(lo, hi):
        seen.append((lo, hi, threading.current_thread() is threading.main_thread()))
        barrier.wait()

    with numba_threads(2):
        parallel_blocks(block, 10)
    assert sorted(seen) == [(0, 5, True), (5, 10, False)]


def test_an_error_is_raised_after_every_block_ended():
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs two Numba threads")
    done = []

    def block(lo, hi):
        if lo == 0:
            raise ValueError("bad block")
        time.sleep(0.3)
        done.append(lo)

    with numba_threads(2), pytest.raises(ValueError, match="bad block"):
        parallel_blocks(block, 4)
    assert done == [2]  # the other block had finished when the error reached the caller
