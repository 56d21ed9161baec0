"""SGNHT paper: Ding, Fang, Babbush, Chen, Skeel & Neven (2014), *Bayesian Sampling Using Stochastic
Gradient Thermostats*. ``runs`` computes, ``claims`` checks, ``figures`` / ``tables`` render, ``data``
holds the synthetic data and the stand-in splits; ``README.md`` gives the choices the paper leaves open."""
