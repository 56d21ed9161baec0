"""Special functions: log-Bessel of large order, Bessel ratios, vMF normalisers, negative entropy.

See :mod:`scalable_bayes.special.bessel` and :mod:`scalable_bayes.special.vmf`.
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
