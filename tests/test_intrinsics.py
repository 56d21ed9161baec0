"""The vector dot products and the fused multiply-add of :mod:`scalable_bayes.intrinsics` against slow
twins that perform the documented operations in the documented order (exact rational arithmetic for
each rounding), bit for bit."""

from fractions import Fraction

import numpy as np
import pytest
from numba import njit

from scalable_bayes.intrinsics import dot8, dot8x4, fma


def fma_twin(a, b, c):
    """a * b + c rounded once (Fraction holds the exact value; float() rounds to nearest even)."""
    return float(Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c)))


def dot8_twin(w, i, x, n):
    """Lane sums by fused multiply-adds, halving combination, then the tail by fused multiply-adds."""
    row = w[i].astype(np.float64)
    s = [0.0] * 8
    for r in range(n // 8):
        for lane in range(8):
            s[lane] = fma_twin(row[8 * r + lane], x[8 * r + lane], s[lane])
    t = ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]))
    for j in range(8 * (n // 8), n):
        t = fma_twin(row[j], x[j], t)
    return t


@njit
def _fma(a, b, c):
    return fma(a, b, c)


@njit
def _dot8(w, i, x, n):
    return dot8(w, i, x, n)


@njit
def _dot8x4(w, i0, i1, i2, i3, x, n):
    return dot8x4(w, i0, i1, i2, i3, x, n)


def test_fma_rounds_once():
    rng = np.random.default_rng(0)
    a, b, c = rng.standard_normal((3, 500)) * np.exp(rng.uniform(-20, 20, (3, 500)))
    got = np.array([_fma(*t) for t in zip(a, b, c)])
    ref = np.array([fma_twin(*t) for t in zip(a, b, c)])
    np.testing.assert_array_equal(got, ref)
    # a case where one rounding and two differ: (1 + 2^-30)^2 - 1 - 2^-29 = 2^-60 exactly
    e = 1.0 + 2.0**-30
    assert _fma(e, e, -(1.0 + 2.0**-29)) == 2.0**-60
    assert e * e - (1.0 + 2.0**-29) == 0.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dot8_and_dot8x4_follow_their_documented_order(dtype):
    rng = np.random.default_rng(1)
    for n in list(range(0, 34)) + [50, 51, 100, 257]:
        w = (rng.standard_normal((7, n + 2)) * 10.0 ** rng.uniform(-3, 3, (7, n + 2))).astype(dtype)
        x = rng.standard_normal(n + 3)
        for i in range(7):
            assert _dot8(w, i, x, n) == dot8_twin(w, i, x, n), (n, i)
        rows = rng.permutation(7)[:4]
        got = _dot8x4(w, *rows, x, n)
        assert got == tuple(dot8_twin(w, r, x, n) for r in rows), n
        # the same rows twice give the same values (no lane of one row leaks into another)
        assert _dot8x4(w, rows[0], rows[0], rows[1], rows[0], x, n) == (got[0], got[0], got[1], got[0])


def test_dot8_is_a_dot_product():
    rng = np.random.default_rng(2)
    w = rng.standard_normal((3, 1000)).astype(np.float32)
    x = rng.standard_normal(1000)
    ref = w.astype(np.float64) @ x
    for i in range(3):
        assert abs(_dot8(w, i, x, 1000) - ref[i]) <= 1e-12 * np.abs(w[i] * x).sum()


def test_dot8_rejects_arrays_it_cannot_read_contiguously():
    from numba.core.errors import TypingError

    w = np.ones((4, 16))
    with pytest.raises(TypingError):
        _dot8(w[:, ::2], 0, np.ones(8), 8)
    with pytest.raises(TypingError):
        _dot8(w, 0, np.ones(32)[::2], 8)
