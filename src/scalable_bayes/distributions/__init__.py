"""Probability distributions as objects (density, draws, moments, fit).

:class:`VonMisesFisher` on the unit sphere (see :mod:`scalable_bayes.distributions.vmf`).
"""

from .vmf import VonMisesFisher, sample_vmf

__all__ = ["VonMisesFisher", "sample_vmf"]
