"""R^n, the manifold of every model that declares none.

A sampler reads the manifold of the model it runs on through :func:`manifold_of`, so a model without a
``manifold`` attribute (a duck-typed target) is on :data:`EUCLIDEAN` and neither the interface nor the driver
special-cases "no manifold".
"""

from __future__ import annotations

import numpy as np

__all__ = ["EUCLIDEAN", "Euclidean", "manifold_of"]


class Euclidean:
    """R^n: adds no constants to a sampler's kernel and accepts every finite position."""

    name = "euclidean"

    def constants(self) -> np.ndarray:
        """The constants a sampler appends to its kernel's: none.

        Returns
        -------
        numpy.ndarray
            An empty float64 array.
        """
        return np.zeros(0)

    def check_position(self, theta, who: str = "sampler") -> None:
        """Accept any position (the sampler's ``init`` already refuses non-finite entries).

        Parameters
        ----------
        theta : array_like
            The position.
        who : str
            The caller's name, for messages.
        """
        return None

    def __repr__(self) -> str:
        return "Euclidean()"


EUCLIDEAN = Euclidean()


def manifold_of(model):
    """The manifold ``model`` declares, R^n when it declares none.

    Parameters
    ----------
    model : object
        A target of the samplers, usually a :class:`scalable_bayes.models.Model`.

    Returns
    -------
    object
        ``model.manifold`` if set, else :data:`EUCLIDEAN`.
    """
    man = getattr(model, "manifold", None)
    return EUCLIDEAN if man is None else man
