"""scalable_bayes.inference"""
from .dpmixture import DPMultinomialMixture  # noqa: F401  (DP mixture of multinomials, SCIR paper Sec. 4.2)
from .sam import SphericalAdmixture  # noqa: F401  (spherical admixture model, SGGMC paper Sec. 4)
