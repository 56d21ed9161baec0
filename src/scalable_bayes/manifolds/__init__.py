"""Manifolds the samplers move on: R^n (the default) and the probability simplex in the gamma
parametrisation (:mod:`.simplex`). A model declares its manifold (``Model.manifold``); a sampler
states the manifold it samples on and reads the manifold's constants, so the driver never branches
on geometry."""

from .simplex import EUCLIDEAN, Euclidean, GammaSimplex, cir_constants, cir_transition, dirichlet, normalise_blocks

__all__ = ["EUCLIDEAN", "Euclidean", "GammaSimplex", "cir_constants", "cir_transition", "dirichlet",
           "normalise_blocks"]
