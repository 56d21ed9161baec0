"""ESCA paper: Zaheer, Wick, Tristan, Smola & Steele (AISTATS 2016), *Exponential Stochastic Cellular
Automata for Massively Parallel Inference*. ``runs`` computes (``data``: the stand-in data, ``mpi_run``:
the distributed runs' command line), ``claims`` checks, ``figures`` / ``tables`` render (``static``: the
paper's specs of the static items); ``README.md`` gives the choices the paper leaves open."""
