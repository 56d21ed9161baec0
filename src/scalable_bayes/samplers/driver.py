"""The one chain driver: burn-in, thinning, per-step diagnostics, wall-time checkpoints, progress.

Models with a Numba gradient run in *compiled chunks* (``samplers/_loop.py``: a jitted loop over many steps
that receives the sampler's step kernel and the model's gradient kernel, cached on disk per kernel pair); the
driver returns to Python between chunks for progress, checkpoints, callbacks and divergence reports.
Models with a NumPy gradient run in a Python loop around the same step kernel. Two random streams per
chain: the sampler's noise ``make_key(seed, chain)`` (initial momentum, step-kernel draws, injected
gradient noise) and the minibatch stream ``batch_key(seed, chain)``; the batch of step t + 1 is drawn
before the gradient of step t, so a gradient kernel can prefetch its rows (``model.next_batch``, see
models/logistic.py). Both paths consume both streams in the same order, so they give identical chains.

Several chains: :func:`run_chains` runs chain c = 0 .. n_chains - 1 as ``run_chain(..., chain=c)`` (so chain 0
is the single chain of the same seed) and returns a :class:`MultiChainResult` (samples (chain, draw, dim),
``to_inference_data()`` for ArviZ). The compiled chunk loops are ``nogil``, so chains of a model that declares
``thread_safe`` run at once in a thread pool; the others run one after another.
"""

from __future__ import annotations

import logging
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from ..manifolds.euclidean import manifold_of
from ..rng import make_key, partial_shuffle, resolve_seed
from ..utils import atomic_path, blas_thread_limit, compile_clock
from ._loop import _python_chunk, _uses_parallel, chunk_runner
from .base import DivergenceError, SamplingAlgorithm, SGState

logger = logging.getLogger(__name__)


BATCH_STREAM = 0x6D62  # stream key of the minibatch draws: make_key(seed, chain, BATCH_STREAM)


def batch_key(seed, chain=0) -> np.ndarray:
    """The key of the minibatch stream of chain ``chain`` of ``seed`` (separate from the sampler's
    noise stream ``make_key(seed, chain)``, so batches can be drawn one step ahead)."""
    return make_key(seed, chain, BATCH_STREAM)

_PERM_DTYPE = np.int32  # minibatch permutation: half the footprint of int64 (fewer cache misses per shuffle)


@dataclass
class ChainResult:
    """Output of :func:`run_chain`.

    ``samples`` (n_kept, n): the points of the target after burn-in, every ``thin``-th step
    (``sample_steps`` gives their 0-based step indices): the positions themselves, except on a model
    whose manifold maps the sampler's coordinates to points (``sample_points``): on the gamma-parametrised
    simplex (SCIR, SGRLD) each block of a row is normalised, omega = theta / sum(theta), so every block
    sums to 1 (SCIR Sec. 1.2); ``gamma_samples`` then holds the sampler's gamma variables theta of the same
    steps (None for other models). ``kinetic_energy``, ``thermostat``, ``grad_norm``: one value per step
    (the Info of every step); ``checkpoint_step``/``checkpoint_wall``: cumulative sampler wall time
    (seconds, callbacks excluded) at each checkpoint. ``state`` is the sampler's final state (on the
    simplex: gamma variables), from which a chain continues.

    A dataclass: each parameter is kept as the attribute of the same name; ``wall_time`` is the last
    checkpoint's wall time (seconds).

    Parameters
    ----------
    sampler : str
        The sampler's name.
    model : str
        The model's name.
    seed : int
        The seed of the chain (the one drawn when ``run_chain`` was given ``seed=None``).
    chain : int
        The chain index: the streams are ``make_key(seed, chain)`` and ``batch_key(seed, chain)``.
    step_size : float
        h (eta for reformulated samplers), the initial one under a ``step_decay`` schedule.
    batch_size : int
        The minibatch size n (N for the full batch; 0 for a model without data).
    samples : ndarray of float64, shape (n_kept, dim)
        The kept points, as above.
    sample_steps : ndarray of int64, shape (n_kept,)
        0-based step index of each kept point: burnin + thin * k.
    kinetic_energy : ndarray of float64, shape (n_steps,)
        Kinetic energy per dimension of every step (NaN for SGLD; NaN after a divergence).
    thermostat : ndarray of float64, shape (n_steps,)
        The thermostat value of every step (see :class:`SGInfo`).
    grad_norm : ndarray of float64, shape (n_steps,)
        Norm of the stochastic gradient of every step.
    checkpoint_step : ndarray of int64, shape (n_checkpoints,)
        Number of steps done at each checkpoint.
    checkpoint_wall : ndarray of float64, shape (n_checkpoints,)
        Cumulative sampler wall time at each checkpoint, in seconds (callbacks excluded).
    state : SGState
        The final state.
    callback_values : list of tuple, default []
        ``(step, value)`` of every call of ``run_chain``'s ``callback``.
    gamma_samples : ndarray of float64, shape (n_kept, dim), optional
        On the gamma-parametrised simplex, the gamma variables of the kept steps; None otherwise.
    compile_time : float, default 0.0
        Seconds the chain spent compiling its loop and kernels or loading them from the cache (not in
        ``checkpoint_wall`` or ``wall_time``; non-zero on a first call).
    """

    sampler: str
    model: str
    seed: int
    chain: int
    step_size: float
    batch_size: int
    samples: np.ndarray
    sample_steps: np.ndarray
    kinetic_energy: np.ndarray
    thermostat: np.ndarray
    grad_norm: np.ndarray
    checkpoint_step: np.ndarray
    checkpoint_wall: np.ndarray
    state: SGState
    callback_values: list = field(default_factory=list)
    gamma_samples: np.ndarray | None = None
    compile_time: float = 0.0

    @property
    def wall_time(self) -> float:
        """Seconds of sampling (callbacks and compilation excluded)."""
        return float(self.checkpoint_wall[-1]) if self.checkpoint_wall.size else 0.0

    def to_inference_data(self, var_name: str = "theta"):
        """This chain as an ArviZ ``InferenceData`` with one chain
        (:func:`scalable_bayes.evaluation.mcmc.to_inference_data`)."""
        from ..evaluation.mcmc import to_inference_data

        return to_inference_data(self, var_name=var_name)

    def save_npz(self, path) -> None:
        """Write the chain (samples, per-step info, checkpoints) atomically as .npz."""
        _save_npz(path, self.samples, self.sample_steps, self.kinetic_energy, self.thermostat,
                  self.grad_norm, self.checkpoint_step, self.checkpoint_wall, self.sampler, self.model,
                  self.seed, self.step_size, self.gamma_samples)


def _save_npz(path, samples, steps, ke, th, gn, ck_s, ck_w, sampler, model, seed, h, gamma=None):
    path = Path(path)
    extra = {} if gamma is None else {"gamma_samples": gamma}
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, samples=samples, sample_steps=steps, kinetic_energy=ke, thermostat=th,
                     grad_norm=gn, checkpoint_step=ck_s, checkpoint_wall=ck_w,
                     sampler=np.array(sampler), model=np.array(model), seed=np.array(seed),
                     step_size=np.array(h), **extra)


def _points(model, kept):
    """(samples, gamma_samples) of the kept positions: the manifold's points of them and the positions, when
    the model's manifold defines ``sample_points`` (the gamma simplex); else (kept, None)."""
    to_points = getattr(manifold_of(model), "sample_points", None)
    if to_points is None:
        return kept, None
    return to_points(kept), kept


def _progress(total, desc, enabled):
    if enabled is None:
        enabled = sys.stderr.isatty() and not os.environ.get("CI")
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover
        return None
    return tqdm(total=total, desc=desc, leave=False)


def run_chain(
    algorithm: SamplingAlgorithm,
    model,
    position,
    *,
    seed: int | None,
    n_steps: int,
    step_size: float,
    batch_size: int | None = None,
    burnin: int = 0,
    thin: int = 1,
    chain: int = 0,
    checkpoint_every: int | None = None,
    callback: Callable | None = None,
    partial_path=None,
    progress: bool | None = None,
    step_decay: tuple[float, float] | None = None,
    check_gradient: bool = True,
    blas_threads: int | None = 1,
) -> ChainResult:
    """Run one chain of ``algorithm`` on ``model`` from ``position``.

    Parameters
    ----------
    algorithm : SamplingAlgorithm
        The sampler (from a factory such as :func:`~scalable_bayes.samplers.sgnht` or ``make_sampler``); it
        is bound to the model's manifold (:meth:`SamplingAlgorithm.bind`).
    model : Model
        The target (:mod:`scalable_bayes.models`).
    position : array_like of float, shape (dim,)
        The initial position theta_0, finite, on the model's manifold.
    seed : int or None, keyword-only
        With ``chain``: the sampler's noise stream is ``make_key(seed, chain)`` and the minibatch stream
        ``batch_key(seed, chain)``; same seed and chain give byte-identical output. ``seed=None``
        draws fresh entropy; the result's ``seed`` records it, so the chain can be repeated.
    n_steps : int, keyword-only
        Total number of steps T (including burn-in), >= 1.
    step_size : float, keyword-only
        h (eta for reformulated samplers), positive and at most the sampler's ``max_step``.
    batch_size : int, optional
        Minibatch size n (1 <= n <= N); default N (full batch). Ignored for models with no data.
    burnin : int, default 0
        Number of initial steps whose positions are not kept (0 <= burnin < n_steps).
    thin : int, default 1
        Thinning, >= 1: positions are kept for steps t >= burnin with (t - burnin) % thin == 0.
    chain : int, default 0
        The chain index (see ``seed``).
    checkpoint_every : int, optional
        Steps between returns to Python (wall time, progress, callback); default
        ceil(n_steps/20), at least 1000 steps for a compiled model (100 for a NumPy gradient).
    callback : callable, optional
        ``callback(step, state) -> value`` called at each checkpoint (its time is not
        counted in the wall time); values are returned in ``callback_values`` as (step, value).
    partial_path : str or os.PathLike, optional
        Where the samples drawn so far are written (.npz) if the chain diverges.
    progress : bool, optional
        Show a tqdm progress bar; default: when stderr is a terminal and ``CI`` is not set.
    step_decay : tuple of float, optional
        ``(tau, kappa)``: step t uses h_t = step_size (1 + t/tau)^-kappa (the decreasing
        schedule of Patterson & Teh 2013 and SCIR Sec. 4.1); default a constant step size.
    check_gradient : bool, default True
        Before the first step, compare the model's full-batch gradient with central finite
        differences of its potential at the initial position and one point near it
        (:meth:`scalable_bayes.models.Model.check_gradient`; a ValueError naming the coordinate with the
        largest discrepancy). Models without a potential, with injected gradient noise or off R^n are not
        checked. The check draws nothing from the chain's streams; ``False`` skips it.
    blas_threads : int or None, default 1
        BLAS threads while the chain runs (threadpoolctl; None leaves the setting alone). A step makes small
        BLAS calls (a model's minibatch products, the empirical Fisher noise of the geodesic samplers): with
        more threads, OpenBLAS's workers spin between calls on the cores the chain and other processes need
        (measured: small products 20-70x slower on a busy 2-core machine).

    Returns
    -------
    ChainResult
        The kept samples, the per-step diagnostics, the checkpoints' wall times and the final state.

    Raises
    ------
    DivergenceError
        If a gradient or a position becomes non-finite (its ``step`` says where; the samples so far
        are written to ``partial_path`` when given).
    """
    name = algorithm.name
    seed = resolve_seed(seed)  # None: fresh entropy, recorded in the result's ``seed``
    h = algorithm.check_step_size(step_size)
    n_steps = int(n_steps)
    if n_steps < 1:
        raise ValueError(f"{name}: n_steps must be >= 1, got {n_steps}")
    burnin = int(burnin)
    if not 0 <= burnin < n_steps:
        raise ValueError(f"{name}: burnin must be in [0, n_steps={n_steps}), got {burnin}")
    thin = int(thin)
    if thin < 1:
        raise ValueError(f"{name}: thin must be >= 1, got {thin}")
    sched = _check_decay(step_decay, name)
    algorithm = algorithm.bind(model)  # the model's manifold constants; a ValueError for a wrong manifold
    h = algorithm.check_step_size(h)  # bounds that need the manifold's constants (SamplingAlgorithm.step_bound)
    N = model.n_data
    if N > 0:
        b = N if batch_size is None else int(batch_size)
        if not 1 <= b <= N:
            raise ValueError(f"{name}: minibatch size {b} must be in [1, N={N}] for model {model.name!r}; lower batch_size")
        algorithm.check_batch_size(b, N, model.name)  # samplers that are exact only on the full data set
        perm = np.arange(N, dtype=_PERM_DTYPE if N < 2**31 else np.int64)
    else:
        b = 0
        perm = np.zeros(0, dtype=np.int64)
    # minibatch buffers: ``nxt`` is the model's lookahead buffer when it has one (the gradient
    # kernel prefetches the rows of the next batch from it), else a private array
    nb = getattr(model, "next_batch", None)
    if isinstance(nb, np.ndarray) and nb.dtype == np.int64 and nb.ndim == 1 and nb.shape[0] >= b:
        nxt = nb[:b]
    else:
        nxt = np.zeros(b, dtype=np.int64)
    cur = perm[:b].astype(np.int64)
    bkey = batch_key(seed, chain)
    if N > 0:
        if b < N:
            partial_shuffle(bkey, perm, b)
        nxt[:] = perm[:b]
    if checkpoint_every is None:
        checkpoint_every = max(1000 if model.compiled else 100, -(-n_steps // 20))
    checkpoint_every = max(1, int(checkpoint_every))

    key = make_key(seed, chain)
    state = algorithm.init(position, key, step_size=h)
    if state.position.shape[0] != model.dim:
        raise ValueError(f"{name}: position has length {state.position.shape[0]} but model {model.name!r} has dim {model.dim}")
    _check_model_arrays(model)
    manifold_of(model).check_position(state.position, name)
    if check_gradient and callable(getattr(model, "check_gradient", None)):
        model.check_gradient(state.position, who=name)
    x, p, xi = state.position, state.momentum, state.thermostat
    g = np.zeros(model.dim)
    n_keep = -(-(n_steps - burnin) // thin)
    samples = np.empty((n_keep, model.dim))
    ke = np.full(n_steps, np.nan)
    th = np.full(n_steps, np.nan)
    gn = np.full(n_steps, np.nan)
    reflect = model.reflect if model.reflect is not None else np.zeros(0, dtype=np.int8)
    kern, hyper = algorithm.kernel, algorithm.hyper
    extras = tuple(getattr(model, k) for k in algorithm.model_kernels)  # bind() checked they exist
    # compilation (or loading compiled code) is not sampling time
    with blas_thread_limit(blas_threads), compile_clock() as clock:
        return _sample(algorithm, model, seed, chain, h, sched, key, bkey, b, perm, cur, nxt, x, p, xi, g, burnin,
                       thin, n_steps, samples, ke, th, gn, reflect, kern, hyper, extras, checkpoint_every, callback,
                       partial_path, progress, name, clock)


def _sample(algorithm, model, seed, chain, h, sched, key, bkey, b, perm, cur, nxt, x, p, xi, g, burnin, thin,
            n_steps, samples, ke, th, gn, reflect, kern, hyper, extras, checkpoint_every, callback, partial_path,
            progress, name, clock):
    """The chunk loop of :func:`run_chain` (its checked inputs); ``clock`` a running :class:`CompileClock`."""
    k_start = clock.seconds
    runner = chunk_runner(kern, model.grad_kernel, extras) if model.compiled else None
    ck_s, ck_w, cb_vals = [], [], []
    n_rec = 0
    wall = 0.0
    bar = _progress(n_steps, f"{name}/{model.name}", progress)
    log_every = max(1, n_steps // 10)
    next_log = log_every
    t = 0
    while t < n_steps:
        m = min(checkpoint_every, n_steps - t)
        t_start, k0 = time.perf_counter(), clock.seconds
        if model.compiled:
            done, status, n_rec = runner(x, p, xi, g, key, h, hyper, sched, model.data, perm, b, reflect, t, m, burnin,
                                         thin, samples, n_rec, ke, th, gn, bkey, cur, nxt, n_steps)
        else:
            done, status, n_rec = _python_chunk(kern, model, x, p, xi, key, h, hyper, sched, perm, b, reflect,
                                                t, m, burnin, thin, samples, n_rec, ke, th, gn, bkey, cur, nxt, n_steps)
        wall += time.perf_counter() - t_start - (clock.seconds - k0)
        if status != 0:
            step = t + done
            cause = "gradient" if status == 1 else "position"
            if step == 0 and status == 1:
                if bar is not None:
                    bar.close()
                raise DivergenceError(
                    f"{name}: the gradient of model {model.name!r} is not finite at the initial position (step 0); "
                    f"no step size causes this: check the model's gradient and the initial position.",
                    step=0, partial_path=None,
                )
            saved = ""
            if partial_path is not None:
                pts, gam = _points(model, samples[:n_rec])
                _save_npz(partial_path, pts, burnin + thin * np.arange(n_rec), ke[:step], th[:step], gn[:step],
                          np.array(ck_s, dtype=np.int64), np.array(ck_w), name, model.name, seed, h, gam)
                saved = f" The {n_rec} samples drawn so far are saved in {partial_path}."
            if bar is not None:
                bar.close()
            hint = algorithm.divergence_hint(SGState(x, p, xi), h) if algorithm.divergence_hint is not None else None
            raise DivergenceError(
                f"{name} diverged at step {step} on model {model.name!r}: non-finite {cause}. "
                + (hint if hint else f"Likely cause: step size {h:g} too large (or friction too small) for this "
                                     f"target; reduce step_size.") + saved,
                step=step, partial_path=partial_path,
            )
        t += m
        ck_s.append(t)
        ck_w.append(wall)
        if bar is not None:
            bar.update(m)
        elif t >= next_log:
            logger.info("%s on %s: step %d/%d, %.2f s, mean KE %.3f", name, model.name, t, n_steps, wall,
                        float(np.nanmean(ke[max(0, t - m):t])) if algorithm.momentum else float("nan"))
            next_log += log_every
        if callback is not None:
            cb_vals.append((t, callback(t, SGState(x, p, xi))))
    if bar is not None:
        bar.close()
    points, gamma = _points(model, samples[:n_rec])
    return ChainResult(
        sampler=name, model=model.name, seed=int(seed), chain=int(chain), step_size=h, batch_size=b,
        samples=points, sample_steps=burnin + thin * np.arange(n_rec, dtype=np.int64),
        kinetic_energy=ke, thermostat=th, grad_norm=gn,
        checkpoint_step=np.array(ck_s, dtype=np.int64), checkpoint_wall=np.array(ck_w),
        state=SGState(x, p, xi), callback_values=cb_vals, gamma_samples=gamma,
        compile_time=clock.seconds - k_start,
    )


@dataclass
class MultiChainResult:
    """Output of :func:`run_chains`: ``chains[c]`` is the :class:`ChainResult` of chain ``c``.

    The stacked views put the chain first, as ArviZ does: ``samples`` (n_chains, n_draws, dim),
    ``gamma_samples`` likewise or None, ``kinetic_energy`` / ``thermostat`` / ``grad_norm`` (n_chains,
    n_steps). ``threads``: how many chains ran at once (1: one after another); ``wall_time``: seconds for the
    whole call.

    A dataclass; also a sequence of its chains (``len``, indexing, iteration).

    Parameters
    ----------
    chains : list of ChainResult
        One result per chain, in chain order.
    threads : int, default 1
        How many chains ran at once.
    wall_time : float, default 0.0
        Wall time of the whole call, in seconds.
    """

    chains: list
    threads: int = 1
    wall_time: float = 0.0

    def __len__(self) -> int:
        return len(self.chains)

    def __getitem__(self, c) -> ChainResult:
        return self.chains[c]

    def __iter__(self):
        return iter(self.chains)

    @property
    def n_chains(self) -> int:
        return len(self.chains)

    @property
    def samples(self) -> np.ndarray:
        return np.stack([r.samples for r in self.chains])

    @property
    def gamma_samples(self) -> np.ndarray | None:
        if self.chains[0].gamma_samples is None:
            return None
        return np.stack([r.gamma_samples for r in self.chains])

    @property
    def sample_steps(self) -> np.ndarray:
        return self.chains[0].sample_steps

    @property
    def kinetic_energy(self) -> np.ndarray:
        return np.stack([r.kinetic_energy for r in self.chains])

    @property
    def thermostat(self) -> np.ndarray:
        return np.stack([r.thermostat for r in self.chains])

    @property
    def grad_norm(self) -> np.ndarray:
        return np.stack([r.grad_norm for r in self.chains])

    @property
    def seed(self) -> int:
        return self.chains[0].seed

    def to_inference_data(self, var_name: str = "theta"):
        """The chains as an ArviZ ``InferenceData`` (:func:`scalable_bayes.evaluation.mcmc.to_inference_data`):
        ``az.summary(result.to_inference_data())`` gives r_hat, ess_bulk and ess_tail per coordinate."""
        from ..evaluation.mcmc import to_inference_data

        return to_inference_data(self, var_name=var_name)


def _threadable(algorithm: SamplingAlgorithm, model) -> tuple[bool, str]:
    """Whether chains of ``algorithm`` on ``model`` may run at once in threads, and if not, why."""
    if not model.compiled:
        return False, "the model's gradient is NumPy code (grad_py), which holds the GIL"
    if not getattr(model, "thread_safe", False):
        return False, (f"model {model.name!r} does not declare thread_safe=True (its gradient kernel may write "
                       "scratch arrays of its data, shared by every chain)")
    kernels = [algorithm.kernel, model.grad_kernel] + [getattr(model, k) for k in algorithm.model_kernels]
    if any(_uses_parallel(f) for f in kernels):
        return False, "a kernel is already parallel over blocks (prange); its threads would compete with the chains'"
    return True, ""


def run_chains(
    algorithm: SamplingAlgorithm,
    model,
    position,
    *,
    seed: int | None,
    n_chains: int = 4,
    n_steps: int,
    step_size: float,
    batch_size: int | None = None,
    burnin: int = 0,
    thin: int = 1,
    checkpoint_every: int | None = None,
    step_decay: tuple[float, float] | None = None,
    check_gradient: bool = True,
    n_threads: int | None = None,
) -> MultiChainResult:
    """Run ``n_chains`` independent chains of ``algorithm`` on ``model``, in threads where that is safe.

    Chain ``c`` is ``run_chain(..., seed=seed, chain=c)``: its sampler noise comes from the stream
    ``make_key(seed, c)`` and its minibatches from ``batch_key(seed, c)`` (:mod:`scalable_bayes.rng`'s seed
    spawning, one independent stream per (seed, chain)), so chain 0 is bit for bit the single chain
    ``run_chain`` gives for the same seed, and every chain is the same whether the chains run in threads or
    one after another.

    Parallelism: the compiled chunk loop is ``nogil``, so chains of a compiled model run at once in a
    thread pool when the model declares ``thread_safe=True`` (its gradient kernel writes nothing but its
    output: the toy and Gaussian targets do; a model with scratch arrays in its data, such as the logistic
    regression, does not) and no kernel is itself parallel (the simplex samplers' ``prange`` blocks). Other
    pairs, and models with a NumPy gradient (which holds the GIL), run their chains one after another;
    ``result.threads`` says which happened. BLAS runs on one thread while the chains run (as
    ``run_chain``'s default ``blas_threads=1``; the limit is process-wide, so it is set once around all chains).

    Parameters
    ----------
    algorithm : SamplingAlgorithm
        The sampler, as in :func:`run_chain`.
    model : Model
        The target, as in :func:`run_chain`.
    position : array_like of float, shape (dim,) or (n_chains, dim)
        The start of every chain, or one start per chain (dispersed starts make R-hat meaningful).
    seed : int or None, keyword-only
        As in :func:`run_chain`; ``seed=None`` draws one fresh seed for all chains, recorded in each
        chain's ``seed``.
    n_chains : int, default 4
        Number of chains, >= 1.
    n_steps, step_size, batch_size, burnin, thin, checkpoint_every, step_decay, check_gradient
        As in :func:`run_chain` (the gradient is checked at every chain's start, once, before any chain runs).
    n_threads : int, optional
        Chains run at once (default: the number of CPUs this process may use, at most
        ``n_chains``); 1 runs them one after another.

    Returns
    -------
    MultiChainResult
        ``samples`` (n_chains, n_draws, dim); ``to_inference_data()`` for ArviZ.

    Raises
    ------
    DivergenceError
        The first (by chain index) chain that diverged, its message prefixed with the chain index.
    """
    name = algorithm.name
    if isinstance(n_chains, bool) or int(n_chains) != n_chains or int(n_chains) < 1:
        raise ValueError(f"{name}: n_chains must be a positive integer, got {n_chains!r}")
    n_chains = int(n_chains)
    seed = resolve_seed(seed)
    pos = np.asarray(position, dtype=np.float64)
    if pos.ndim == 1:
        starts = [pos] * n_chains
    elif pos.ndim == 2 and pos.shape[0] == n_chains:
        starts = list(pos)
    else:
        raise ValueError(f"{name}: position must be (dim,) for every chain or (n_chains={n_chains}, dim), one start "
                         f"per chain; got shape {pos.shape}")
    if check_gradient and callable(getattr(model, "check_gradient", None)):
        for c, x0 in enumerate(starts):
            if c == 0 or not np.array_equal(x0, starts[c - 1]):
                model.check_gradient(x0, who=f"{name} chain {c}")
    if n_threads is None:
        try:
            n_cpu = len(os.sched_getaffinity(0))
        except AttributeError:  # pragma: no cover - not on Linux
            n_cpu = os.cpu_count() or 1
        n_threads = min(n_chains, n_cpu)
    if isinstance(n_threads, bool) or int(n_threads) != n_threads or int(n_threads) < 1:
        raise ValueError(f"{name}: n_threads must be a positive integer, got {n_threads!r}")
    n_threads = min(int(n_threads), n_chains)
    ok, why = _threadable(algorithm, model)
    if n_threads > 1 and not ok:
        logger.info("%s on %s: %d chains run one after another: %s", name, model.name, n_chains, why)
        n_threads = 1
    # BLAS limited once around all chains (the limit is process-wide): blas_threads=None in each chain
    kw = dict(seed=seed, n_steps=n_steps, step_size=step_size, batch_size=batch_size, burnin=burnin, thin=thin,
              checkpoint_every=checkpoint_every, step_decay=step_decay, check_gradient=False, progress=False,
              blas_threads=None)

    def one(c):
        try:
            return run_chain(algorithm, model, starts[c], chain=c, **kw)
        except DivergenceError as err:
            raise DivergenceError(f"chain {c}: {err}", step=err.step, partial_path=err.partial_path) from err

    t0 = time.perf_counter()
    with blas_thread_limit(1):
        if n_threads == 1:
            chains = [one(c) for c in range(n_chains)]
        else:
            from concurrent.futures import ThreadPoolExecutor

            # compile (or load) the chunk loop once, in this thread, before the chains share it
            chunk_runner(algorithm.kernel, model.grad_kernel,
                         tuple(getattr(model, k) for k in algorithm.model_kernels))
            with ThreadPoolExecutor(max_workers=n_threads, thread_name_prefix="sb-chain") as pool:
                futures = [pool.submit(one, c) for c in range(n_chains)]
                chains = [f.result() for f in futures]
    return MultiChainResult(chains=chains, threads=n_threads, wall_time=time.perf_counter() - t0)


def _check_decay(step_decay, name) -> np.ndarray:
    """[tau, kappa] of a decreasing step-size schedule (``None``: [1, 0], a constant step size)."""
    if step_decay is None:
        return np.array([1.0, 0.0])
    try:
        tau, kappa = (float(v) for v in step_decay)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: step_decay must be a pair (tau, kappa), got {step_decay!r}") from None
    if not (math.isfinite(tau) and tau > 0 and math.isfinite(kappa) and kappa >= 0):
        raise ValueError(f"{name}: step_decay (tau, kappa) needs tau > 0 and kappa >= 0, got {step_decay!r}")
    return np.array([tau, kappa])


def _check_model_arrays(model) -> None:
    """Check, once per chain, every array a compiled gradient kernel reads (Numba checks no bounds):
    the data tuple's arrays must be numeric, C-contiguous and finite where they are floats; the
    reflection mask must have length ``dim``."""
    for i, arr in enumerate(model.data):
        if not isinstance(arr, np.ndarray):
            continue
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"model {model.name!r}: data[{i}] has dtype {arr.dtype}; gradient kernels take numeric arrays")
        if not arr.flags.c_contiguous:
            raise ValueError(f"model {model.name!r}: data[{i}] is not C-contiguous; pass np.ascontiguousarray(...)")
        if arr.dtype.kind == "f" and arr.size and not np.isfinite(arr).all():
            raise ValueError(f"model {model.name!r}: data[{i}] holds NaN or inf; clean the data before sampling")
    if model.reflect is not None and model.reflect.shape != (model.dim,):
        raise ValueError(f"model {model.name!r}: reflect mask has shape {model.reflect.shape}, expected ({model.dim},)")
