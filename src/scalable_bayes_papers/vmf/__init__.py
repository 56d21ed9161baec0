"""VMF paper: Nonnenmacher & Sahani (2024), *A solution for the mean parametrization of the von
Mises-Fisher distribution*. ``runs`` computes, ``claims`` checks, ``figures`` / ``tables`` render;
``README.md`` gives the choices the paper leaves open."""
