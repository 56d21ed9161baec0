"""scalable_bayes: samplers, estimators and evaluation for five scalable Bayesian inference papers.

The library knows nothing about Snakemake; ``workflow/scripts`` are thin adapters around it.
"""

import logging

__version__ = "0.1.0"

logging.getLogger(__name__).addHandler(logging.NullHandler())
