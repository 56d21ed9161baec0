"""Manifolds the samplers move on: R^n (the default, :mod:`~scalable_bayes.manifolds.euclidean`), the
probability simplex in the gamma parametrisation (:mod:`~scalable_bayes.manifolds.simplex`) and products of
unit spheres (:mod:`~scalable_bayes.manifolds.sphere`). A model declares its manifold (``Model.manifold``);
a sampler states the manifold it samples on and reads the manifold's constants, so the driver never branches
on geometry."""

from .euclidean import EUCLIDEAN, Euclidean, manifold_of
from .simplex import GammaSimplex, cir_constants, cir_transition, dirichlet, normalise_blocks
from .sphere import Sphere, geodesic_flow, normalise_sphere_blocks, project_tangent

__all__ = ["EUCLIDEAN", "Euclidean", "GammaSimplex", "Sphere", "cir_constants", "cir_transition", "dirichlet",
           "geodesic_flow", "manifold_of", "normalise_blocks", "normalise_sphere_blocks", "project_tangent"]
