"""scalable_bayes.inference"""
from .dpmixture import DPMultinomialMixture  # noqa: F401  (DP mixture of multinomials, SCIR paper Sec. 4.2)
