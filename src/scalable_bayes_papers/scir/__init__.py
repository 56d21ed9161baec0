"""SCIR paper: Baker, Fearnhead, Fox & Nemeth (2018), *Large-Scale Stochastic Sampling from the Probability
Simplex* (NeurIPS). ``runs`` computes, ``claims`` checks, ``figures`` renders, ``data`` holds the synthetic
targets and the data splits; ``README.md`` gives the choices the paper leaves open."""
