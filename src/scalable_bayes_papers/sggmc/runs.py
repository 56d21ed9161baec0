"""Runs of the SGGMC paper (Liu, Zhu & Song, NIPS 2016): config settings of one job -> tidy tables. The
samplers (:mod:`scalable_bayes.samplers.geodesic`) and the targets on the sphere
(:mod:`scalable_bayes.models.sphere`) are the library's; this module only composes them.

The static items (Tab. 1, Figs. 1-2, SFig. 1) have no runs.
"""

from __future__ import annotations
