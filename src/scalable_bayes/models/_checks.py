"""Checks of the data a model is built from: the values a likelihood is defined for, refused otherwise.

A model fed data outside its likelihood's domain (labels in {-1, 1} for a Bernoulli likelihood, fractional
or negative counts for a multinomial, a NaN feature) still yields a gradient, and a sampler then returns a
confident, wrong posterior. Each check raises ``ValueError`` naming the model, what was found and the fix.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def finite(values, who: str, what: str) -> np.ndarray:
    """``values`` as a float64 array, or ``ValueError`` if any entry is NaN or infinite."""
    a = np.asarray(values, dtype=np.float64)
    if not np.isfinite(a).all():
        bad = np.flatnonzero(~np.isfinite(a.ravel()))
        raise ValueError(f"{who}: {what} holds {bad.size} NaN or infinite value(s) (first at flat index {bad[0]}); "
                         "remove or impute them")
    return a


def binary_labels(y, who: str) -> np.ndarray:
    """Labels in {0, 1} (bool accepted) as float64; ``ValueError`` naming the values found otherwise.

    {-1, 1} labels are refused, not mapped: a silent mapping would hide which convention the caller's
    other code uses. The message gives the mapping.
    """
    a = np.asarray(y)
    if a.dtype == bool:
        return a.astype(np.float64)
    if a.dtype.kind not in "iuf":
        raise ValueError(f"{who}: labels y must be numbers in {{0, 1}} (or bool), got dtype {a.dtype}")
    a = a.astype(np.float64)
    bad = ~np.isin(a, (0.0, 1.0))
    if bad.any():
        found = np.unique(a[bad])
        shown = ", ".join(f"{v:g}" for v in found[:5]) + (", ..." if found.size > 5 else "")
        hint = (" Labels in {-1, 1}: pass (y + 1) / 2." if np.isin(a, (-1.0, 1.0)).all()
                else " Map them to 0 (failure) and 1 (success) first.")
        raise ValueError(f"{who}: labels y must be 0 or 1 (the Bernoulli likelihood's outcomes); found {shown} "
                         f"in {int(bad.sum())} of {a.size} rows.{hint}")
    return a


def integer_labels(y, n_classes: int, who: str) -> np.ndarray:
    """Class labels, integers in [0, n_classes), as int64; fractional or out-of-range values are refused."""
    a = np.asarray(y)
    if a.dtype == bool or a.dtype.kind not in "iuf":
        raise ValueError(f"{who}: labels y must be integers in [0, {n_classes}), got dtype {a.dtype}")
    if a.dtype.kind == "f":
        if not np.isfinite(a).all() or np.any(np.floor(a) != a):
            raise ValueError(f"{who}: labels y must be whole numbers in [0, {n_classes}); found NaN, infinite or "
                             "fractional values (class probabilities or one-hot rows are not labels)")
    if a.size and (a.min() < 0 or a.max() >= n_classes):
        raise ValueError(f"{who}: labels must lie in [0, {n_classes}), got range [{a.min():g}, {a.max():g}]")
    return a.astype(np.int64)


def indices(values, n: int, who: str, what: str) -> np.ndarray:
    """Indices into ``n`` items (users, items): whole numbers in [0, n), as int64.

    A negative index would silently wrap around to the last items, a fractional one be truncated.
    """
    a = np.asarray(values)
    if a.dtype == bool or a.dtype.kind not in "iuf":
        raise ValueError(f"{who}: {what} must be integer indices in [0, {n}), got dtype {a.dtype}")
    if a.dtype.kind == "f" and (not np.isfinite(a).all() or np.any(np.floor(a) != a)):
        raise ValueError(f"{who}: {what} must be whole numbers (0-based indices); found NaN or fractional values")
    if a.size and (a.min() < 0 or a.max() >= n):
        raise ValueError(f"{who}: {what} must lie in [0, {n}) (0-based), got range [{a.min():g}, {a.max():g}]; "
                         f"re-index them from 0 or raise the count ({n})")
    return a.astype(np.int64)


def count_matrix(counts, who: str) -> sp.csr_matrix:
    """A documents x words matrix of non-negative integer counts as CSR; tf-idf weights and the like are refused."""
    X = counts if sp.issparse(counts) else sp.csr_matrix(np.asarray(counts))
    X = sp.csr_matrix(X)
    if X.ndim != 2:
        raise ValueError(f"{who}: counts must be a (documents x words) matrix, got shape {X.shape}")
    d = X.data
    if d.dtype == bool or d.dtype.kind not in "iuf":
        raise ValueError(f"{who}: counts must be numbers (token counts), got dtype {d.dtype}")
    if d.dtype.kind == "f" and d.size and not np.isfinite(d).all():
        raise ValueError(f"{who}: counts hold NaN or inf; pass raw token counts (non-negative integers)")
    if d.size and (d.min() < 0 or (d.dtype.kind == "f" and np.any(np.floor(d) != d))):
        raise ValueError(f"{who}: counts must be non-negative integers (raw token counts, not tf-idf); found a "
                         "negative or fractional count")
    return X
