"""LDA engines: ESCA (Zaheer et al. 2016), collapsed Gibbs sampling and CVB0, in Numba.

>>> from scalable_bayes.inference.lda import ESCA, CollapsedGibbs, CVB0
"""

from ._estimators import CVB0, ESCA, CollapsedGibbs, check_corpus
from .topics import top_words

__all__ = ["ESCA", "CollapsedGibbs", "CVB0", "check_corpus", "top_words"]
