"""Numba kernels of the LDA engines, one module per engine: :mod:`.esca_word` (ESCA, word
decomposition, the default), :mod:`.esca` (ESCA on two dense buffers: the paper's eq. 23 and plain
SCA), :mod:`.cgs` (collapsed Gibbs), :mod:`.cvb0` (its binary16 storage in :mod:`.half`); the pieces
they share in :mod:`.common`.

Pure functions: arrays and scalars in, arrays out (or arrays filled in place where the caller owns
the buffers). No I/O, no globals. Randomness: one counter-based stream per (seed, iteration,
document) (:func:`scalable_bayes.rng.stream`), so results do not depend on the thread count.
"""

from .cgs import balanced_cuts, cgs_init, cgs_partition_layout, cgs_sweep
from .common import build_alias, col_sums, draw_alias, fill_zero, reduce_rows, row_sums
from .cvb0 import cvb0_gamma, cvb0_init, cvb0_init_assignments, cvb0_sweep
from .esca import esca_init, esca_sweep, esca_tables, sca_plain_sweep
from .esca_word import esca_word_nnz, esca_word_sweep, esca_word_tables, merge_write_buffers
from .half import half_bits, half_value

__all__ = [
    "build_alias", "draw_alias", "row_sums", "col_sums", "fill_zero", "reduce_rows",
    "esca_init", "esca_tables", "esca_sweep", "sca_plain_sweep",
    "esca_word_nnz", "esca_word_tables", "esca_word_sweep", "merge_write_buffers",
    "cgs_init", "cgs_sweep", "cgs_partition_layout", "balanced_cuts",
    "cvb0_init", "cvb0_init_assignments", "cvb0_sweep", "cvb0_gamma", "half_bits", "half_value",
]
