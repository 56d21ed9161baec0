"""SG-MCMC on the probability simplex in the gamma parametrisation (SCIR paper, Baker et al. 2018).

Both samplers move theta (>= 0, blocks of the :class:`~scalable_bayes.manifolds.GammaSimplex` a model
declares), omega = theta / sum(theta) per block. The model supplies, in the gradient slot ``g`` of the
common kernel signature (:mod:`~scalable_bayes.samplers.euclidean`), the minibatch estimate
n^_j = (N/n) sum_{i in S} z_ij of the counts; binding the sampler to the model appends ``[block_size, alpha_0, ..., alpha_{dim-1}]`` (the
Dirichlet prior) to the kernel constants ``hyper``.

* :func:`scir_step` -- stochastic Cox-Ingersoll-Ross, SCIR Alg. 1 (eqs. 2.1-2.3): every theta_j takes
  one *exact* CIR transition over time h towards Gamma(a^_j, 1), a^_j = alpha_j + n^_j. No
  discretisation error, never negative.
* :func:`sgrld_step` -- stochastic gradient Riemannian Langevin dynamics in the expanded-mean
  parametrisation with the mirrored-gamma prior (Patterson & Teh 2013; SCIR Sec. 1.2), metric
  G = diag(theta)^-1:

      theta_j <- | theta_j + h (alpha_j + n^_j - theta_j - omega_j n^_b) + sqrt(2 h theta_j) xi_j |,

  n^_b the sum of n^ over theta_j's block. The drift is the Riemannian Langevin drift of the
  density prod_j theta_j^(alpha_j + n_j - 1) e^-theta_j (sum theta)^-n (likelihood through omega).
  Step convention: h is the *time* advanced per step, the same as SCIR's h (Patterson & Teh write
  theta + (eps/2) g + sqrt(eps theta) xi, i.e. eps = 2h); each method's h is tuned separately anyway.

Both kernels run the blocks in parallel (Numba ``prange``): per step they take one 64-bit draw from the
chain's key, and block b draws from the xoroshiro key of the stream (that draw, b, 0)
(:func:`scalable_bayes.rng.key_from_stream`), so a chain is the same for any thread count. Each has a
serial twin (``scir_step_serial``, ``sgrld_step_serial``) that runs the same blocks one after another and
so draws the same chain; a model with fewer than ``SERIAL_BELOW_BLOCKS`` blocks is run with it. A model
whose gradient is Python (e.g. :class:`~scalable_bayes.models.lda_simplex.SimplexLDA`) is run with a third
variant, ``scir_step_threads`` / ``sgrld_step_threads``: the same blocks on the library's thread pool
(:func:`scalable_bayes.utils.parallel_blocks`), called from Python, compiled as plain cached functions. One small
array of per-block keys is allocated per step; the loops over entries allocate nothing. They return (NaN, 0).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from numba import prange

from ..manifolds.simplex import cir_transition
from ..rng import key_from_stream, next_u64, normal_pair
from ..utils import parallel_blocks
from .base import SamplingAlgorithm


@njit(cache=True)
def _block_keys(x, hyper, key):
    """What every simplex step needs first: the block size, the number of blocks, the step's one 64-bit draw
    from the chain's key and an array for the per-block keys (module docstring)."""
    block = np.int64(hyper[0])
    nb = x.shape[0] // block
    return block, nb, next_u64(key), np.empty((nb, 2), np.uint64)


@njit(cache=True)
def _scir_block(x, g, hyper, seed, b, block, c, r, kb):
    """SCIR's CIR transitions of block ``b`` from the key of stream (seed, b, 0) (module docstring)."""
    key_from_stream(seed, b, 0, kb)
    for j in range(b * block, (b + 1) * block):
        a = hyper[1 + j] + g[j]
        if not (a > 0.0):
            x[j] = np.nan
        else:
            x[j] = cir_transition(kb, x[j], a, c, r)


@njit(parallel=True, cache=True)
def scir_step(x, p, xi, g, key, h, hyper):
    """SCIR, Alg. 1: theta_j <- CIR transition over h with parameter a^_j = alpha_j + n^_j (``g`` = n^).

    ``hyper`` = [block_size, alpha_0 .. alpha_{n-1}]. A non-finite or negative a^ yields NaN in x (the
    driver stops with the step number). Blocks in parallel, one key per block (module docstring).
    """
    c = -math.expm1(-h)
    r = 1.0 / math.expm1(h)
    block, nb, seed, keys = _block_keys(x, hyper, key)
    for b in prange(nb):
        _scir_block(x, g, hyper, seed, b, block, c, r, keys[b])
    return np.nan, 0.0


@njit(cache=True)
def scir_step_serial(x, p, xi, g, key, h, hyper):
    """:func:`scir_step` with its blocks one after another: the same draws, so the same chain. For models
    with few blocks, where a parallel loop only costs compilation (module docstring)."""
    c = -math.expm1(-h)
    r = 1.0 / math.expm1(h)
    block, nb, seed, keys = _block_keys(x, hyper, key)
    for b in range(nb):
        _scir_block(x, g, hyper, seed, b, block, c, r, keys[b])
    return np.nan, 0.0


@njit(cache=True, nogil=True)
def _scir_blocks(lo, hi, x, g, hyper, seed, block, c, r, keys):
    """Blocks ``lo .. hi - 1`` of an SCIR step (``seed``: a one-element uint64 array holding the step's draw)."""
    for b in range(lo, hi):
        _scir_block(x, g, hyper, seed[0], b, block, c, r, keys[b])


def _step_draw(x, hyper, key):
    """:func:`_block_keys` in Python: the block size, the number of blocks, the step's one 64-bit draw in a
    one-element uint64 array (a Python int could be typed int64 or uint64 by the next call) and the array
    for the per-block keys. Not compiled: it runs once per step, and compiling it cost 0.7 s of a first call."""
    block = int(hyper[0])
    nb = x.shape[0] // block
    return block, nb, np.array([next_u64(key)], dtype=np.uint64), np.empty((nb, 2), np.uint64)


def scir_step_threads(x, p, xi, g, key, h, hyper):
    """:func:`scir_step` with its blocks on the library's thread pool (:func:`scalable_bayes.utils.parallel_blocks`,
    Numba's thread count) instead of a ``prange`` loop: the same draws, so the same chain. A Python function,
    for chains whose model gradient is Python (the driver then calls the step from Python): its block kernel
    compiles as a plain function and is cached on disk, where the ``prange`` kernel compiled for ~14 s."""
    c = -math.expm1(-h)
    r = 1.0 / math.expm1(h)
    block, nb, seed, keys = _step_draw(x, hyper, key)
    parallel_blocks(_scir_blocks, nb, x, g, hyper, seed, block, c, r, keys)
    return np.nan, 0.0


@njit(cache=True)
def _sgrld_block(x, g, hyper, seed, b, block, h, s2h, kb):
    """SGRLD's update of block ``b`` from the key of stream (seed, b, 0), omega and n^_b taken before it."""
    key_from_stream(seed, b, 0, kb)
    s = b * block
    tot = 0.0
    nbk = 0.0
    for j in range(s, s + block):
        tot += x[j]
        nbk += g[j]
    inv = 1.0 / tot
    j = s
    while j < s + block:
        z0, z1 = normal_pair(kb)
        t = x[j]
        x[j] = abs(t + h * (hyper[1 + j] + g[j] - t - t * inv * nbk) + s2h * np.sqrt(t) * z0)
        if j + 1 < s + block:
            t = x[j + 1]
            x[j + 1] = abs(t + h * (hyper[2 + j] + g[j + 1] - t - t * inv * nbk) + s2h * np.sqrt(t) * z1)
        j += 2


@njit(parallel=True, cache=True)
def sgrld_step(x, p, xi, g, key, h, hyper):
    """SGRLD, expanded-mean parametrisation with mirroring (Patterson & Teh 2013): see the module docstring.

    ``hyper`` = [block_size, alpha_0 .. alpha_{n-1}], ``g`` = n^. Each block is updated with its omega and
    n^_b taken before the step. Blocks in parallel, one key per block (module docstring).
    """
    s2h = np.sqrt(2.0 * h)
    block, nb, seed, keys = _block_keys(x, hyper, key)
    for b in prange(nb):
        _sgrld_block(x, g, hyper, seed, b, block, h, s2h, keys[b])
    return np.nan, 0.0


@njit(cache=True)
def sgrld_step_serial(x, p, xi, g, key, h, hyper):
    """:func:`sgrld_step` with its blocks one after another (the same chain; see :func:`scir_step_serial`)."""
    s2h = np.sqrt(2.0 * h)
    block, nb, seed, keys = _block_keys(x, hyper, key)
    for b in range(nb):
        _sgrld_block(x, g, hyper, seed, b, block, h, s2h, keys[b])
    return np.nan, 0.0


@njit(cache=True, nogil=True)
def _sgrld_blocks(lo, hi, x, g, hyper, seed, block, h, s2h, keys):
    """Blocks ``lo .. hi - 1`` of an SGRLD step (``seed`` as in :func:`_scir_blocks`)."""
    for b in range(lo, hi):
        _sgrld_block(x, g, hyper, seed[0], b, block, h, s2h, keys[b])


def sgrld_step_threads(x, p, xi, g, key, h, hyper):
    """:func:`sgrld_step` with its blocks on the library's thread pool (see :func:`scir_step_threads`)."""
    s2h = np.sqrt(2.0 * h)
    block, nb, seed, keys = _step_draw(x, hyper, key)
    parallel_blocks(_sgrld_blocks, nb, x, g, hyper, seed, block, h, s2h, keys)
    return np.nan, 0.0


# Below this many blocks a chain runs the serial twin of a step: the parallel loop gains nothing there, and
# Numba's parallel compilation costs minutes in every process (a loop calling a prange kernel cannot be
# cached on disk; samplers/_loop.py), where the serial chain is compiled once and loaded afterwards.
SERIAL_BELOW_BLOCKS = 16


def _kernel_for(parallel, serial, threads):
    def choose(hyper, compiled=True):
        n_blocks = (hyper.shape[0] - 1) // max(int(hyper[0]), 1)
        if n_blocks < SERIAL_BELOW_BLOCKS:
            return serial
        # a compiled chain loop inlines its step: the prange kernel; a Python-gradient chain calls the step
        # from Python: the thread-pool variant (cached block kernel)
        return parallel if compiled else threads
    return choose


def scir() -> SamplingAlgorithm:
    """Stochastic Cox-Ingersoll-Ross sampler (SCIR Alg. 1) for models on the gamma-parametrised simplex.

    Each theta_j takes the exact CIR transition over the step h with parameter a^_j = alpha_j + n^_j
    (SCIR eqs. 2.1-2.3; :func:`scir_step`).

    Returns
    -------
    SamplingAlgorithm
        ``"SCIR"`` on the ``"gamma-simplex"`` manifold, without momentum; the step size is h; bound to
        a model with fewer than ``SERIAL_BELOW_BLOCKS`` blocks it runs the serial twin of its kernel, to
        a model with more blocks and a Python gradient the thread-pool twin (:func:`scir_step_threads`).
    """
    return SamplingAlgorithm("SCIR", scir_step, np.zeros(0), momentum=False, manifold="gamma-simplex",
                             kernel_for=_kernel_for(scir_step, scir_step_serial, scir_step_threads))


def sgrld() -> SamplingAlgorithm:
    """Stochastic gradient Riemannian Langevin dynamics (Patterson & Teh 2013), expanded-mean
    parametrisation with the mirrored gamma, for models on the gamma-parametrised simplex.

    Returns
    -------
    SamplingAlgorithm
        ``"SGRLD"`` on the ``"gamma-simplex"`` manifold, without momentum (kernel :func:`sgrld_step`); the
        step size is h; bound to a model with fewer than ``SERIAL_BELOW_BLOCKS`` blocks it runs the serial
        twin of its kernel, to a model with more blocks and a Python gradient the thread-pool twin
        (:func:`sgrld_step_threads`).
    """
    return SamplingAlgorithm("SGRLD", sgrld_step, np.zeros(0), momentum=False, manifold="gamma-simplex",
                             kernel_for=_kernel_for(sgrld_step, sgrld_step_serial, sgrld_step_threads))
