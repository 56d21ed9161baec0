"""Clustering quality: normalised mutual information (VMF Fig. 3)."""

from __future__ import annotations

import numpy as np
from sklearn.metrics import normalized_mutual_info_score

__all__ = ["nmi"]


def nmi(labels_true, labels_pred, average_method="arithmetic"):
    """NMI between true classes and predicted clusters (sklearn, arithmetic normalisation by default).

    The VMF paper (Sec. 3.1) does not state its normaliser; arithmetic is sklearn's default and is used here.

    Parameters
    ----------
    labels_true : array_like, shape (n,)
        The true classes.
    labels_pred : array_like, shape (n,)
        The predicted clusters.
    average_method : {"arithmetic", "geometric", "min", "max"}, default "arithmetic"
        The normaliser of ``sklearn.metrics.normalized_mutual_info_score``.

    Returns
    -------
    float
        The NMI, in [0, 1].
    """
    labels_true = np.asarray(labels_true)
    labels_pred = np.asarray(labels_pred)
    if labels_true.shape != labels_pred.shape or labels_true.ndim != 1:
        raise ValueError(f"labels_true {labels_true.shape} and labels_pred {labels_pred.shape} must be 1-d and "
                         "of equal length")
    return float(normalized_mutual_info_score(labels_true, labels_pred, average_method=average_method))
