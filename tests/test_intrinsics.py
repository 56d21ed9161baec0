"""The vector loops and the fused multiply-add of :mod:`scalable_bayes.intrinsics` against slow twins that
perform the documented operations in the documented order (exact rational arithmetic for each rounding, or
NumPy in the same precision and order), bit for bit."""

from fractions import Fraction

import numpy as np
import pytest
from numba import njit

from scalable_bayes.intrinsics import (column_count_le8, count_le16, dense_prefix8, dense_row8, dot8, dot8x4, fma,
                                       matvec_lanes8x4, stack_columns8, weighted_outer_lanes8x4)


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


# ---------------------------------------------------------------------------- dense rows (LDA draws)


@njit
def _dense(ddf, cnt, off, pf, bsum, nrow, beta, prefix):
    if prefix:
        dense_prefix8(ddf, cnt, off, pf, bsum, nrow, beta)
    else:
        dense_row8(ddf, cnt, off, pf, bsum, nrow, beta)


@pytest.mark.parametrize("fdt", [np.float32, np.float64])
@pytest.mark.parametrize("cdt", [np.uint16, np.int32])
@pytest.mark.parametrize("nrow", [0, 1, 2, 13, 125])
def test_dense_row8_and_dense_prefix8_against_numpy(fdt, cdt, nrow):
    """Products ddf_k (cnt_k + beta) each rounded in the lanes' precision (no fused multiply-add), the column
    sums over the rows in order, and for dense_prefix8 every running sum (the last row equal to the column
    sums): NumPy's element-wise operations and its sequential cumulative sum in the same precision."""
    rng = np.random.default_rng(nrow)
    off = 5
    ddf = (rng.gamma(0.5, 1.0, 8 * nrow) * np.exp(rng.uniform(-8, 8, 8 * nrow))).astype(fdt)
    ddf[rng.random(8 * nrow) < 0.2] = 0  # zero weights (the padding of a row)
    cnt = rng.integers(0, 60000 if cdt == np.uint16 else 2**31 - 1, off + 8 * nrow + 3).astype(cdt)
    beta = fdt(0.1)
    prod = ddf * (cnt[off:off + 8 * nrow].astype(fdt) + beta)
    rows = prod.reshape(nrow, 8)
    run = np.cumsum(rows, axis=0, dtype=fdt)
    for prefix, want in ((False, prod), (True, run.ravel())):
        pf = np.full(8 * nrow + 8, -1.0, fdt)
        bsum = np.full(8, -1.0, fdt)
        _dense(ddf, cnt, off, pf, bsum, nrow, beta, prefix)
        np.testing.assert_array_equal(pf[:8 * nrow], want)
        assert np.all(pf[8 * nrow:] == -1.0)  # nothing written past the rows
        np.testing.assert_array_equal(bsum, run[-1] if nrow else np.zeros(8, fdt))


@njit
def _count(pf, first, n, step, x, j):
    return column_count_le8(pf, first, n, step, x, j)


@pytest.mark.parametrize("fdt", [np.float32, np.float64])
def test_column_count_le8_counts_one_column(fdt):
    """Against NumPy: the rows first, first + step, ... (n of them) of column j with entry <= x, compared in
    double precision; ties count, NaN never counts, the other columns do not matter."""
    rng = np.random.default_rng(1)
    nrow = 40
    pf = rng.uniform(0, 10, 8 * nrow).astype(fdt)
    pf[rng.random(8 * nrow) < 0.05] = np.nan
    M = pf.reshape(nrow, 8)
    checked = 0
    for first, n, step in ((0, 40, 1), (0, 13, 1), (7, 5, 8), (3, 8, 1), (5, 0, 1), (39, 1, 1)):
        for j in range(8):
            col = M[first:first + n * step:step, j].astype(np.float64)
            for x in (*rng.uniform(-1, 11, 6), *col[:3], float(np.float32(5.0)) + 1e-12):
                want = int(np.sum(col <= x))
                assert _count(pf, first, n, step, float(x), j) == want
                checked += 1
    assert checked > 300
    # a float32 entry and a float64 bound that rounds to it: compared exactly, not in single precision
    one = np.full(8, np.float32(1.0), np.float32)
    assert _count(one, 0, 1, 1, 1.0 - 1e-12, 3) == 0
    assert _count(one, 0, 1, 1, 1.0, 3) == 1


def test_column_count_le8_counts_nothing_outside_the_eight_columns():
    """A column index outside 0..7 counts no row (the lane counts are read at lane j: no lane out of range is read),
    while the same rows count in a column inside."""
    pf = np.zeros(8 * 4, np.float32)
    assert _count(pf, 0, 4, 1, 1.0, 7) == 4
    for j in (8, 9, 64, -1):
        assert _count(pf, 0, 4, 1, 1.0, j) == 0


@njit
def _stack(pf, bsum, nrow):
    return stack_columns8(pf, bsum, nrow)


@njit
def _count16(pf, nvec, x):
    return count_le16(pf, nvec, x)


@pytest.mark.parametrize("nrow", [0, 1, 2, 5, 13, 16])
def test_stack_columns8_adds_the_left_columns_totals(nrow):
    """Each column's running sums plus the float32 sum, left to right, of the columns before it (NumPy in float32,
    the same order); the total returned; the rows from nrow on untouched; over running sums of non-negative
    products the result does not decrease in column-major order, even with weights ten orders of magnitude apart."""
    rng = np.random.default_rng(nrow + 3)
    rows = (rng.gamma(0.3, 1.0, (nrow, 8)) * np.exp(rng.uniform(-12, 12, (nrow, 8)))).astype(np.float32)
    rows[rng.random((nrow, 8)) < 0.2] = 0
    run = np.cumsum(rows, axis=0, dtype=np.float32)
    bsum = run[-1].copy() if nrow else np.zeros(8, np.float32)
    base = np.zeros(8, np.float32)
    for j in range(7):
        base[j + 1] = np.float32(base[j] + bsum[j])
    pf = np.full(8 * nrow + 16, np.inf, np.float32)
    pf[:8 * nrow] = run.ravel()
    total = _stack(pf, bsum, nrow)
    want = (run + base).astype(np.float32)
    np.testing.assert_array_equal(pf[:8 * nrow], want.ravel())
    assert np.all(pf[8 * nrow:] == np.inf)
    assert total == np.float32(base[7] + bsum[7]) and np.float32(total) == total  # a float32 value
    if nrow:
        assert np.all(np.diff(want.T.ravel()) >= 0)
        assert want[-1, 7] == total


def test_count_le16_counts_the_entries_at_or_below_the_bound():
    """Against NumPy over the first 16 nvec entries: entries <= x (float32), ties count, NaN entries never count,
    a NaN bound counts nothing, entries past 16 nvec are not read; even and odd nvec (blocks are counted in
    pairs, an odd last block alone)."""
    rng = np.random.default_rng(5)
    pf = rng.uniform(0, 10, 16 * 8).astype(np.float32)
    pf[rng.random(pf.size) < 0.05] = np.nan
    checked = 0
    for nvec in (0, 1, 2, 3, 7, 8):
        head = pf[:16 * nvec]
        for x in (*rng.uniform(0, 11, 20).astype(np.float32), *head[:5], np.float32(0), np.float32(10.5)):
            assert _count16(pf, nvec, np.float32(x)) == int(np.sum(head <= x))
            checked += 1
    assert checked > 150
    one = np.full(16, np.float32(1.0), np.float32)
    assert _count16(one, 1, np.nextafter(np.float32(1.0), np.float32(0.0))) == 0
    assert _count16(one, 1, np.float32(1.0)) == 16
    assert _count16(one, 1, np.float32("nan")) == 0


def test_the_draws_cap_is_the_float32_just_below_the_total():
    """ESCA's dense draw caps its float32 target at total * (1 - 2^-24): for a positive normal float32 total that
    product rounds to the largest float32 below it (so the first running sum above the target has positive weight),
    at mantissas near 1 (powers of two included) and near 2."""
    rng = np.random.default_rng(2)
    f = np.float32(1.0 - 2.0**-24)
    totals = [np.float32(2.0**e) for e in range(-120, 120, 7)]
    totals += [np.nextafter(np.float32(2.0**e), np.float32(np.inf)) for e in range(-120, 120, 7)]
    totals += [np.nextafter(np.float32(2.0**e), np.float32(0)) for e in range(-120, 120, 7)]
    totals += list((10.0 ** rng.uniform(-30, 30, 2000)).astype(np.float32))
    for z in totals:
        assert np.float32(z * f) == np.nextafter(z, np.float32(0)), z


def test_stacked_columns_and_one_count_draw_the_column_then_row_topic():
    """The one-pass draw (stack the column sums, count the entries <= the float32 target u Z) finds the same
    column-major position as choosing the column by its cumulative total (double) and then counting the rows of
    that column below what is left of the same target, wherever the target is not within a float32 rounding of a
    boundary (checked at 2,000 targets, none of which falls there)."""
    rng = np.random.default_rng(11)
    nrow = 13
    rows = (rng.gamma(0.5, 1.0, (nrow, 8)) * np.exp(rng.uniform(-3, 3, (nrow, 8)))).astype(np.float32)
    run = np.cumsum(rows, axis=0, dtype=np.float32)
    bsum = run[-1].copy()
    pf = np.full(8 * nrow + 64, np.inf, np.float32)
    pf[:8 * nrow] = run.ravel()
    Z = _stack(pf, bsum, nrow)
    colcum = np.cumsum(bsum.astype(np.float64))
    for u in rng.random(2000):
        x = np.float32(u) * Z
        n = _count16(pf, (nrow + 1) // 2, x)
        x = float(x)
        j = int(np.sum(colcum[:7] <= x))
        r = int(np.sum(run[:, j].astype(np.float64) <= x - (colcum[j] - bsum[j])))
        assert n == j * nrow + r


@njit
def _matvec(a, b, out, i0, nrows, s0, j0, n, add):
    matvec_lanes8x4(a, b, out, i0, nrows, s0, j0, n, add)


def _matvec_twin(a, b, out, i0, nrows, s0, j0, n, add):
    """The scalar loop matvec_lanes8x4 documents, in Python floats (every product and sum rounded)."""
    res = out.copy()
    for r in range(nrows):
        for q in range(8):
            acc = float(out[i0 + r, s0 + q]) if add else 0.0
            for j in range(j0, j0 + n):
                acc += float(a[j, i0 + r]) * float(b[j, s0 + q])
            res[i0 + r, s0 + q] = acc
    return res


@pytest.mark.parametrize("nrows", [1, 2, 3, 4])
@pytest.mark.parametrize("add", [False, True])
def test_matvec_lanes8x4_follows_its_documented_order(nrows, add):
    """Bit for bit the scalar loop (sums in the order of j, from 0 or from the entry), only the named block
    written; the values span many magnitudes so that another order or a fused multiply-add would differ."""
    rng = np.random.default_rng(nrows + 10 * add)
    n_rows, n_cols, K = 37, 24, 11
    a = rng.standard_normal((n_rows, K)) * 10.0 ** rng.integers(-8, 8, (n_rows, K))
    b = rng.standard_normal((n_rows, n_cols)) * 10.0 ** rng.integers(-8, 8, (n_rows, n_cols))
    for i0, s0, j0, n in [(0, 0, 0, n_rows), (K - nrows, 16, 5, 20), (3, 8, 36, 1), (2, 0, 4, 0)]:
        out = rng.standard_normal((K + 2, n_cols))
        want = _matvec_twin(a, b, out, i0, nrows, s0, j0, n, add)
        _matvec(a, b, out, i0, nrows, s0, j0, n, add)
        np.testing.assert_array_equal(out, want)
    # the order matters on these numbers: the sum backwards differs somewhere
    out0 = np.zeros((K + 2, n_cols))
    fwd = _matvec_twin(a, b, out0, 0, nrows, 0, 0, n_rows, False)
    back = out0.copy()
    for r in range(nrows):
        for q in range(8):
            acc = 0.0
            for j in reversed(range(n_rows)):
                acc += float(a[j, r]) * float(b[j, q])
            back[r, q] = acc
    assert not np.array_equal(fwd, back)


@njit
def _wouter(a, f, d, out, i0, nrows, s0, n):
    weighted_outer_lanes8x4(a, f, d, out, i0, nrows, s0, n)


@pytest.mark.parametrize("nrows", [1, 3, 4])
def test_weighted_outer_lanes8x4_follows_its_documented_order(nrows):
    """Bit for bit the scalar loop acc += a[t, i] * a[t, s] * f[t] / d[t] from 0, only the named block written."""
    rng = np.random.default_rng(nrows)
    T, K = 29, 16
    a = rng.standard_normal((T, K)) * 10.0 ** rng.integers(-6, 6, (T, K))
    f = rng.standard_normal(T)
    d = rng.random(T) ** 2 + 1e-3
    for i0, s0, n in [(0, 0, T), (K - nrows, 8, 17), (5, 8, 1)]:
        out = rng.standard_normal((K, K))
        want = out.copy()
        for r in range(nrows):
            for q in range(8):
                acc = 0.0
                for t in range(n):
                    acc += float(a[t, i0 + r]) * float(a[t, s0 + q]) * float(f[t]) / float(d[t])
                want[i0 + r, s0 + q] = acc
        _wouter(a, f, d, out, i0, nrows, s0, n)
        np.testing.assert_array_equal(out, want)
