"""Special functions: log-Bessel of large order, Bessel ratios, vMF normalisers, negative entropy.

See :mod:`scalable_bayes.special.bessel` and :mod:`scalable_bayes.special.vmf`.

The dimension is keyword-only in every function of a concentration or a mean norm
(``bessel_ratio(kappa, d=10)``, ``vmf_mean_to_kappa(r, d=10)``): the literature writes both
(d, kappa) and (r, d), and a swapped positional call would return a plausible wrong number. The Numba
kernels ``bessel_ratio_perron(d, kappa, ...)`` and ``bessel_ratio_perron_fixed(d, kappa, n_terms)`` are
building blocks for compiled code and stay positional.
"""

from .bessel import bessel_ratio, bessel_ratio_perron, bessel_ratio_perron_fixed, log_besseli
from .vmf import (
    KAPPA_METHODS,
    NEGENTROPY_METHODS,
    author_psi0,
    kappa_halley_perron,
    log_sphere_area,
    negentropy_offset,
    solve_negentropy_ode,
    vmf_log_normalizer,
    vmf_log_partition_uniform,
    vmf_mean_to_kappa,
    vmf_negentropy,
    vmf_negentropy_grad,
    vmf_negentropy_hess,
    vmf_variance_function,
)

__all__ = [
    "log_besseli",
    "bessel_ratio",
    "bessel_ratio_perron",
    "bessel_ratio_perron_fixed",
    "vmf_log_normalizer",
    "vmf_log_partition_uniform",
    "vmf_mean_to_kappa",
    "vmf_negentropy",
    "vmf_negentropy_grad",
    "vmf_negentropy_hess",
    "vmf_variance_function",
    "solve_negentropy_ode",
    "kappa_halley_perron",
    "log_sphere_area",
    "author_psi0",
    "negentropy_offset",
    "KAPPA_METHODS",
    "NEGENTROPY_METHODS",
]
