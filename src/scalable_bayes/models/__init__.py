"""Targets for the SG-MCMC samplers (gradient of the stochastic potential U~)."""

from .base import Model
from .sphere import (
    SphereModel,
    toy_circle,
    toy_circle_density,
    vmf,
    vmf_mixture,
    vmf_mixture_data,
    vmf_mixture_log_posterior,
    vmf_product,
)
from .simplex import categorical_labels, dirichlet_categorical, dirichlet_marginal
from .logistic import logistic_regression, synthetic_logistic_data
from .toy import (
    double_well,
    double_well_density,
    double_well_potential,
    gaussian,
    gaussian_known_variance,
    gaussian_known_variance_posterior,
    normal_gamma,
    normal_gamma_posterior,
)

__all__ = [
    "Model", "double_well", "double_well_density", "double_well_potential", "gaussian",
    "gaussian_known_variance", "gaussian_known_variance_posterior", "normal_gamma",
    "normal_gamma_posterior", "logistic_regression", "synthetic_logistic_data", "categorical_labels",
    "dirichlet_categorical", "dirichlet_marginal", "SphereModel", "vmf", "vmf_product", "toy_circle",
    "toy_circle_density", "vmf_mixture", "vmf_mixture_data", "vmf_mixture_log_posterior",
]
