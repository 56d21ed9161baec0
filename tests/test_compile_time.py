"""Compilation is reported apart from the sampling and fitting clocks (``ChainResult.compile_time``,
``compile_time_`` of the LDA estimators): a first call's compile time is not charged to the method."""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
from numba import njit

from scalable_bayes import samplers
from scalable_bayes.inference.lda import CollapsedGibbs
from scalable_bayes.models import Model
from scalable_bayes.utils import compile_clock


def test_compile_clock_counts_a_compilation():
    @njit
    def twice(v):
        return 2.0 * v

    with compile_clock() as clock:
        t = time.perf_counter()
        twice(1.0)
        elapsed = time.perf_counter() - t
        compiled = clock.seconds
        twice(2.0)
        again = clock.seconds
    assert 0.0 < compiled <= elapsed
    assert again == compiled
    assert clock.cpu_seconds > 0.0


def test_chain_wall_time_excludes_a_compilation_in_the_gradient():
    state = {}

    def grad(x, idx, key):
        if "f" not in state:  # the first gradient call compiles a kernel: a user's model on a first call
            @njit
            def f(v):
                return v + 1.0

            f(1.0)
            state["f"] = f
        return x

    model = Model("compiling-gaussian", 2, grad_py=grad)
    t = time.perf_counter()
    r = samplers.run_chain(samplers.sgld(), model, np.zeros(2), seed=0, n_steps=50, step_size=1e-2, progress=False)
    total = time.perf_counter() - t
    assert r.compile_time > 0.0
    assert r.wall_time + r.compile_time <= total
    r2 = samplers.run_chain(samplers.sgld(), model, np.zeros(2), seed=0, n_steps=50, step_size=1e-2, progress=False)
    assert r2.compile_time == 0.0
    np.testing.assert_array_equal(r.samples, r2.samples)


def test_lda_fit_time_excludes_compilation():
    """An iteration that compiles (a kernel new to the process, as on a first call) is not charged to
    ``fit_time_``: whatever the process had compiled before, this compilation happens inside the fit."""
    X = sp.csr_matrix(np.random.default_rng(0).poisson(0.3, size=(60, 40)))
    est = CollapsedGibbs(n_components=3, max_iter=3, random_state=0)
    iterate = est._iterate

    def compiling_iterate(C, it):
        if it == 1:
            @njit
            def f(v):
                return v - 1.0

            f(1.0)
        return iterate(C, it)

    est._iterate = compiling_iterate
    t = time.perf_counter()
    est.fit(X)
    total = time.perf_counter() - t
    assert est.compile_time_ > 0.0 and est.fit_time_ >= 0.0
    assert est.fit_time_ + est.compile_time_ <= total
    again = CollapsedGibbs(n_components=3, max_iter=3, random_state=0).fit(X)
    assert again.compile_time_ == 0.0 and again.fit_time_ > 0.0
    np.testing.assert_array_equal(again.components_, est.components_)
