"""Data of the SCIR paper as used here.

* :data:`POSTERIORS` -- the two synthetic Dirichlet posteriors of SCIR Sec. 1.3 and 2.2: d = 10, N = 1,000
  categorical observations, prior alpha = 0.1 in every component. *sparse* (the "running experiment",
  Sec. 1.3): counts (800, 100, 100, 0, ..., 0); *dense* (Sec. 2.2, "allocates 1000 datapoints equally to
  each component"): 100 in each component. Reconstructed choice (ours): Sec. 2.2 does not restate d and
  alpha for the dense data, so both are taken from Sec. 1.3.
* :func:`split_corpus` -- train documents/users and held-out documents/users of a processed corpus
  (Wikipedia for Sec. 4.1, the anonymous Microsoft web data for Sec. 4.2), first ``max_*`` of each split.
"""

from __future__ import annotations

import numpy as np

#: component whose boxplot SCIR Fig. 1 shows ("the fifth component of omega"), 0-based
FIG1_COMPONENT = 4

POSTERIORS = {
    "sparse": np.array([800, 100, 100, 0, 0, 0, 0, 0, 0, 0]),
    "dense": np.full(10, 100),
}


def target_counts(name: str) -> np.ndarray:
    """The counts of the synthetic posterior ``name`` (``sparse`` or ``dense``, :data:`POSTERIORS`)."""
    if name not in POSTERIORS:
        raise ValueError(f"unknown SCIR target {name!r}; choose one of {sorted(POSTERIORS)}")
    return POSTERIORS[name].copy()


def batch_size(proportion: float, n: int) -> int:
    """Minibatch size for a proportion of the N observations (at least 1)."""
    if not 0 < proportion <= 1:
        raise ValueError(f"minibatch proportion must be in (0, 1], got {proportion!r}")
    return max(1, int(round(proportion * n)))


def split_corpus(corpus, max_train: int | None, max_test: int | None):
    """(train, test) CSR count matrices: the first ``max_train`` rows of the corpus' train split and the
    first ``max_test`` of its test split (None: all), rows without any count dropped."""
    counts = corpus.counts.tocsr()
    tr = np.flatnonzero(corpus.split == "train")[:max_train]
    te = np.flatnonzero(corpus.split == "test")[:max_test]
    a, b = counts[tr], counts[te]
    a = a[np.asarray(a.sum(axis=1)).ravel() > 0]
    b = b[np.asarray(b.sum(axis=1)).ravel() > 0]
    if a.shape[0] == 0 or b.shape[0] == 0:
        raise ValueError(f"corpus {corpus.name!r}: the train or test split is empty after the caps "
                         f"(max_train={max_train}, max_test={max_test})")
    return a.astype(np.int64), b.astype(np.int64)
