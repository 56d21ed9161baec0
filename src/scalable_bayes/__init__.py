"""scalable_bayes: samplers, estimators and evaluation for five scalable Bayesian inference papers.

The library knows nothing about Snakemake; ``workflow/scripts`` are thin adapters around it.
"""

import logging

from .jitcache import install_library_locator

# before any kernel of the library is defined: cached kernels are stamped with the library's digest
install_library_locator()

__version__ = "0.2.0.dev0"

logging.getLogger(__name__).addHandler(logging.NullHandler())
