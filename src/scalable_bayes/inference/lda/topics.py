"""Reading a fitted topic model: the top words of its topics."""

from __future__ import annotations

import numpy as np

from ..._optional import require

__all__ = ["top_words"]


def top_words(components, vocab, n_topics_show=5, n_words=10):
    """Top ``n_words`` words of the first ``n_topics_show`` topics of ``components`` (K x V topic-word
    weights, e.g. an estimator's ``components_``), as a DataFrame (topic, top_words); ties keep
    vocabulary order. Needs pandas (the ``pipeline`` extra).

    Parameters
    ----------
    components : ndarray, shape (K, V)
        Topic-word weights.
    vocab : sequence of str, length V
        The words, in column order.
    n_topics_show : int, default 5
        Number of topics listed (the first ones).
    n_words : int, default 10
        Words per topic.

    Returns
    -------
    pandas.DataFrame
        One row per topic: ``topic`` (int) and ``top_words`` (the words joined by ", ", by decreasing
        weight).
    """
    pd = require("pandas", "top_words (it returns a DataFrame)")
    rows = []
    for k in range(min(n_topics_show, components.shape[0])):
        order = np.argsort(-components[k], kind="stable")[:n_words]
        rows.append({"topic": k, "top_words": ", ".join(vocab[i] for i in order)})
    return pd.DataFrame(rows)
