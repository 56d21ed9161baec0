"""SG-MCMC samplers behind one interface and one driver, laid out as in blackjax.

* :mod:`~scalable_bayes.samplers.base` -- the interface: :class:`SGState`, :class:`SGInfo`,
  :class:`SamplingAlgorithm` (``init`` / ``build_kernel`` / ``step``), :class:`DivergenceError`. Imports no
  sampler.
* :mod:`~scalable_bayes.samplers.euclidean` -- SGLD, SGHMC, SGNHT (Alg. 1, Alg. 2, matrix thermostat) and
  their step kernels.
* :mod:`~scalable_bayes.samplers.geodesic` -- SGGMC, gSGNHT, GMC on products of spheres.
* :mod:`~scalable_bayes.samplers.simplex` -- SCIR and SGRLD on the gamma-parametrised simplex.
* :mod:`~scalable_bayes.samplers.driver` -- :func:`run_chain`, :func:`run_chains`, :class:`ChainResult`,
  :class:`MultiChainResult`; its compiled chunk loop and that loop's on-disk cache are private
  (``samplers/_loop.py``).
* this package -- the registry of samplers by name (``SAMPLERS``, :func:`make_sampler`).

>>> import numpy as np
>>> from scalable_bayes import samplers, models
>>> x = np.random.default_rng(0).normal(1.0, 1.0, size=100)
>>> model = models.gaussian_known_variance(x)
>>> alg = samplers.sgnht(A=1.0)
>>> res = samplers.run_chain(alg, model, [0.0], seed=0, n_steps=10_000, step_size=0.01, batch_size=10,
...                          progress=False)
>>> res.samples.shape
(10000, 1)
>>> many = samplers.run_chains(alg, model, [0.0], seed=0, n_chains=4, n_steps=10_000, step_size=0.01,
...                            batch_size=10)
>>> many.samples.shape, bool((many.samples[0] == res.samples).all())   # chain 0 is the single chain
((4, 10000, 1), True)
>>> import arviz as az
>>> "r_hat" in az.summary(many.to_inference_data()).columns
True
"""

from ..rng import make_key
from .base import DivergenceError, SamplingAlgorithm, SGInfo, SGState
from .driver import ChainResult, MultiChainResult, run_chain, run_chains
from .euclidean import sghmc, sghmc_reformulated, sgld, sgnht, sgnht_matrix, sgnht_reformulated
from .geodesic import gmc, gsgnht, sggmc, sggmc_sgd
from .simplex import scir, sgrld

SAMPLERS = {
    "sgld": sgld,
    "sghmc": sghmc,
    "sgnht": sgnht,
    "sghmc_reformulated": sghmc_reformulated,
    "sgnht_reformulated": sgnht_reformulated,
    "sgnht_matrix": sgnht_matrix,
    "scir": scir,
    "sgrld": sgrld,
    "sggmc": sggmc,
    "gsgnht": gsgnht,
    "gmc": gmc,
}


def make_sampler(name: str, **params) -> SamplingAlgorithm:
    """Build a sampler by its registry name.

    Parameters
    ----------
    name : str
        A key of ``SAMPLERS``.
    **params
        The sampler factory's arguments.

    Returns
    -------
    SamplingAlgorithm
        The configured sampler.

    Raises
    ------
    ValueError
        ``name`` is not in the registry.
    """
    if name not in SAMPLERS:
        raise ValueError(f"unknown sampler {name!r}; choose one of {sorted(SAMPLERS)}")
    return SAMPLERS[name](**params)


__all__ = [
    "SAMPLERS", "DivergenceError", "SamplingAlgorithm", "SGInfo", "SGState", "ChainResult", "MultiChainResult",
    "make_sampler", "make_key", "run_chain", "run_chains", "sgld", "sghmc", "sgnht", "sghmc_reformulated",
    "sgnht_reformulated", "sgnht_matrix", "scir", "sgrld", "sggmc", "sggmc_sgd", "gsgnht", "gmc",
]
