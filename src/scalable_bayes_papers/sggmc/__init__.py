"""SGGMC paper: Liu, Zhu & Song (NIPS 2016), *Stochastic Gradient Geodesic MCMC Methods*. ``runs``
computes (``data``: the synthetic data of Sec. 5.1-5.2), ``claims`` checks, ``figures`` / ``tables`` render
(``static``: the paper's specs of the static items and the App. D mode construction); ``README.md`` gives the
choices the paper leaves open."""
