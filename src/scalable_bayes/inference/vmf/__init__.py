"""vMF mixtures: MovMF (natural parameters, EM), BregmanVMF (mean parameters, Bregman clustering),
spherical k-means. See :mod:`.core` for the functional core."""

from .core import fit_vmf_mixture, init_partition_means, spherical_kmeans, validate_unit_rows
from .estimators import BregmanVMF, MovMF, SphericalKMeans

__all__ = ["MovMF", "BregmanVMF", "SphericalKMeans", "fit_vmf_mixture", "init_partition_means",
           "spherical_kmeans", "validate_unit_rows"]
