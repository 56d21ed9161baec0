"""Targets on the probability simplex (gamma parametrisation; :class:`~scalable_bayes.manifolds.GammaSimplex`).

:func:`dirichlet_categorical`: N categorical observations z_i in {0..d-1} with a Dir(alpha) prior, so the
posterior is Dir(alpha + n), n_j = #{i : z_i = j} (SCIR Sec. 1.2, the "running experiment" of Sec. 1.3
and the dense/sparse targets of Sec. 2.2). Its stochastic statistic for the simplex samplers is
n^_j = (N/|S|) #{i in S : z_i = j} over a minibatch S drawn without replacement by the driver.
:func:`dirichlet_marginal` gives the exact Beta marginals of the posterior (the reference of the KS
distance of SCIR Fig. 2).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..manifolds import GammaSimplex
from .base import Model

__all__ = ["dirichlet_categorical", "dirichlet_marginal", "categorical_labels"]


@njit(cache=True)
def _count_grad(x, data, idx, key, out):
    """out_j = (N/|S|) #{i in S : z_i = j}; data = (labels int64 (N,),)."""
    labels = data[0]
    out[:] = 0.0
    nb = idx.shape[0]
    scale = labels.shape[0] / nb
    for i in range(nb):
        out[labels[idx[i]]] += scale


def categorical_labels(counts) -> np.ndarray:
    """The N = sum(counts) labels z_i (int64, sorted) of a count vector; counts must be non-negative integers.

    Parameters
    ----------
    counts : array_like, shape (d,)
        Number of observations of each of the d >= 2 categories: non-negative integers, not all zero.

    Returns
    -------
    ndarray of int64, shape (sum(counts),)
        Category j repeated ``counts[j]`` times, in increasing order of j.
    """
    c = np.asarray(counts)
    if c.ndim != 1 or c.shape[0] < 2:
        raise ValueError(f"counts must be a 1-D vector of at least 2 categories, got shape {c.shape}")
    if not np.all(np.isfinite(c)) or np.any(c < 0) or np.any(np.floor(c) != c):
        raise ValueError("counts must be non-negative integers (the number of observations in each category)")
    if c.sum() < 1:
        raise ValueError("counts are all zero: there is no data to minibatch; give at least one observation")
    return np.repeat(np.arange(c.shape[0], dtype=np.int64), c.astype(np.int64))


def dirichlet_categorical(counts, alpha=0.1) -> Model:
    """Categorical data with counts ``counts`` (length d) and a Dir(``alpha``) prior, for SCIR / SGRLD.

    ``Model.n_data`` is N = sum(counts); minibatches index the observations. The model lives on
    ``GammaSimplex(1, d, alpha)`` and its kernel returns n^_j = (N/|S|) #{i in S : z_i = j} (SCIR Alg. 1),
    so the simplex samplers target the posterior Dir(alpha + counts).

    Parameters
    ----------
    counts : array_like, shape (d,)
        Number of observations in each of the d >= 2 categories (non-negative integers, not all zero).
    alpha : float or array_like of float, shape (d,), default 0.1
        Dirichlet prior: a positive scalar or d values.

    Returns
    -------
    Model
        The model of dimension d with ``n_data = sum(counts)`` and a compiled (Numba) kernel.
    """
    labels = categorical_labels(counts)
    d = len(counts)
    man = GammaSimplex(1, d, alpha)
    return Model("dirichlet-categorical", d, n_data=labels.shape[0], grad_kernel=_count_grad, data=(labels,),
                 manifold=man)


def dirichlet_marginal(counts, alpha=0.1):
    """The exact marginals of Dir(alpha + counts): a list of frozen ``scipy.stats.beta`` (one per component).

    Component j of Dir(a) has the marginal Beta(a_j, sum(a) - a_j), a = alpha + counts.

    Parameters
    ----------
    counts : array_like, shape (d,)
        Number of observations in each category.
    alpha : float or array_like of float, shape (d,), default 0.1
        Dirichlet prior, a scalar or d values.

    Returns
    -------
    list of scipy.stats.rv_frozen
        d frozen Beta distributions, in the order of the components.
    """
    a = np.broadcast_to(np.asarray(alpha, dtype=np.float64), (len(counts),)) + np.asarray(counts, dtype=np.float64)
    tot = a.sum()
    import scipy.stats as st  # here, not at import: scipy.stats costs ~0.7 s to import and few callers need it

    return [st.beta(aj, tot - aj) for aj in a]
