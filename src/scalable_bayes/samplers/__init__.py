"""SG-MCMC samplers behind one interface (:mod:`~scalable_bayes.samplers.base`) and one driver
(:mod:`~scalable_bayes.samplers.driver`).

>>> from scalable_bayes import samplers, models
>>> alg = samplers.sgnht(A=1.0)
>>> res = samplers.run_chain(alg, models.gaussian_known_variance(x), [0.0], seed=0,
...                          n_steps=10_000, step_size=0.01, batch_size=10)
>>> many = samplers.run_chains(alg, models.gaussian_known_variance(x), [0.0], seed=0, n_chains=4,
...                            n_steps=10_000, step_size=0.01, batch_size=10)   # chain 0 == res
>>> az.summary(many.to_inference_data())                                       # r_hat, ess_bulk, ess_tail
"""

from .base import (
    SAMPLERS,
    DivergenceError,
    SamplingAlgorithm,
    SGInfo,
    SGState,
    make_sampler,
    sghmc,
    sghmc_reformulated,
    sgld,
    sgnht,
    sgnht_matrix,
    sgnht_reformulated,
)
from .driver import ChainResult, MultiChainResult, run_chain, run_chains
from .simplex import scir, sgrld
from .geodesic import gmc, gsgnht, sggmc, sggmc_sgd
from ..rng import make_key

__all__ = [
    "SAMPLERS", "DivergenceError", "SamplingAlgorithm", "SGInfo", "SGState", "ChainResult", "MultiChainResult",
    "make_sampler", "make_key", "run_chain", "run_chains", "sgld", "sghmc", "sgnht", "sghmc_reformulated",
    "sgnht_reformulated", "sgnht_matrix", "scir", "sgrld", "sggmc", "sggmc_sgd", "gsgnht", "gmc",
]
