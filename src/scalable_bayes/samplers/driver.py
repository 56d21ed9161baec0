"""The one chain driver: burn-in, thinning, per-step diagnostics, wall-time checkpoints, progress.

Models with a Numba gradient run in *compiled chunks*: :func:`_run_chunk` is a jitted loop over
many steps that receives the sampler's step kernel and the model's gradient kernel as
first-class functions; the driver returns to Python between chunks for progress, checkpoints,
callbacks and divergence reports. Models with a NumPy gradient run in a Python loop around the
same step kernel. Both paths consume the same random stream in the same order, so they give
identical chains.

Note: ``_run_chunk`` is jitted without ``cache=True``: Numba cannot cache functions that take
dispatchers as arguments (it re-compiles once per process and sampler/model pair, ~1 s); the
step and gradient kernels themselves are cached.
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
from numba import njit

from ..utils import atomic_path
from .base import DivergenceError, SamplingAlgorithm, SGState, _check_step
from .rng import make_key, partial_shuffle

logger = logging.getLogger(__name__)


@njit
def _run_chunk(kern, grad, x, p, xi, g, key, h, hyper, data, perm, batch_size, reflect,
               t0, n_steps, burnin, thin, samples, n_rec, ke, th, gn):
    """Run steps t0 .. t0+n_steps-1 in place. Returns (steps done, status, n_rec).

    status 0 = ok, 1 = non-finite gradient, 2 = non-finite position.
    """
    n = x.shape[0]
    use_perm = perm.shape[0] > batch_size
    nref = reflect.shape[0]
    for s in range(n_steps):
        t = t0 + s
        if use_perm:
            partial_shuffle(key, perm, batch_size)
        grad(x, data, perm[:batch_size], key, g)
        gg = 0.0
        for i in range(n):
            gg += g[i] * g[i]
        if not np.isfinite(gg):
            return s, 1, n_rec
        k, z = kern(x, p, xi, g, key, h, hyper)
        if nref:
            for i in range(n):
                if reflect[i] != 0 and x[i] < 0.0:
                    x[i] = -x[i]
                    if p.shape[0]:
                        p[i] = -p[i]
        bad = False
        for i in range(n):
            if not np.isfinite(x[i]):
                bad = True
        if bad:
            return s, 2, n_rec
        ke[t] = k
        th[t] = z
        gn[t] = np.sqrt(gg)
        if t >= burnin and (t - burnin) % thin == 0:
            for i in range(n):
                samples[n_rec, i] = x[i]
            n_rec += 1
    return n_steps, 0, n_rec


@dataclass
class ChainResult:
    """Output of :func:`run_chain`.

    ``samples`` (n_kept, n): positions after burn-in, every ``thin``-th step (``sample_steps``
    gives their 0-based step indices); ``kinetic_energy``, ``thermostat``, ``grad_norm``: one
    value per step (the Info of every step); ``checkpoint_step``/``checkpoint_wall``: cumulative
    sampler wall time (seconds, callbacks excluded) at each checkpoint.
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

    @property
    def wall_time(self) -> float:
        return float(self.checkpoint_wall[-1]) if self.checkpoint_wall.size else 0.0

    def save_npz(self, path) -> None:
        """Write the chain (samples, per-step info, checkpoints) atomically as .npz."""
        _save_npz(path, self.samples, self.sample_steps, self.kinetic_energy, self.thermostat,
                  self.grad_norm, self.checkpoint_step, self.checkpoint_wall, self.sampler, self.model,
                  self.seed, self.step_size)


def _save_npz(path, samples, steps, ke, th, gn, ck_s, ck_w, sampler, model, seed, h):
    path = Path(path)
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, samples=samples, sample_steps=steps, kinetic_energy=ke, thermostat=th,
                     grad_norm=gn, checkpoint_step=ck_s, checkpoint_wall=ck_w,
                     sampler=np.array(sampler), model=np.array(model), seed=np.array(seed),
                     step_size=np.array(h))


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
    seed: int,
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
) -> ChainResult:
    """Run one chain of ``algorithm`` on ``model`` from ``position``.

    Parameters
    ----------
    seed, chain : the random stream is ``make_key(seed, chain)``; same seed and chain give
        byte-identical output.
    n_steps : total number of steps T (including burn-in).
    step_size : h (eta for reformulated samplers).
    batch_size : minibatch size n (<= N); default N (full batch). Ignored for models with no data.
    burnin, thin : positions are kept for steps t >= burnin with (t - burnin) % thin == 0.
    checkpoint_every : steps between returns to Python (wall time, progress, callback); default
        ~n_steps/20 (at least 1000 steps per compiled chunk).
    callback : ``callback(step, state) -> value`` called at each checkpoint (its time is not
        counted in the wall time); values are returned in ``callback_values`` as (step, value).
    partial_path : where the samples drawn so far are written (.npz) if the chain diverges.
    """
    name = algorithm.name
    h = _check_step(step_size, name)
    n_steps = int(n_steps)
    if n_steps < 1:
        raise ValueError(f"{name}: n_steps must be >= 1, got {n_steps}")
    burnin = int(burnin)
    if not 0 <= burnin < n_steps:
        raise ValueError(f"{name}: burnin must be in [0, n_steps={n_steps}), got {burnin}")
    thin = int(thin)
    if thin < 1:
        raise ValueError(f"{name}: thin must be >= 1, got {thin}")
    N = model.n_data
    if N > 0:
        b = N if batch_size is None else int(batch_size)
        if not 1 <= b <= N:
            raise ValueError(f"{name}: minibatch size {b} must be in [1, N={N}] for model {model.name!r}; lower batch_size")
        perm = np.arange(N, dtype=np.int64)
    else:
        b = 0
        perm = np.zeros(0, dtype=np.int64)
    if checkpoint_every is None:
        checkpoint_every = max(1000 if model.compiled else 100, -(-n_steps // 20))
    checkpoint_every = max(1, int(checkpoint_every))

    key = make_key(seed, chain)
    state = algorithm.init(position, key, step_size=h)
    if state.position.shape[0] != model.dim:
        raise ValueError(f"{name}: position has length {state.position.shape[0]} but model {model.name!r} has dim {model.dim}")
    x, p, xi = state.position, state.momentum, state.thermostat
    g = np.zeros(model.dim)
    n_keep = -(-(n_steps - burnin) // thin)
    samples = np.empty((n_keep, model.dim))
    ke = np.full(n_steps, np.nan)
    th = np.full(n_steps, np.nan)
    gn = np.full(n_steps, np.nan)
    reflect = model.reflect if model.reflect is not None else np.zeros(0, dtype=np.int8)
    kern, hyper = algorithm.kernel, algorithm.hyper
    ck_s, ck_w, cb_vals = [], [], []
    n_rec = 0
    wall = 0.0
    bar = _progress(n_steps, f"{name}/{model.name}", progress)
    log_every = max(1, n_steps // 10)
    next_log = log_every
    t = 0
    while t < n_steps:
        m = min(checkpoint_every, n_steps - t)
        t_start = time.perf_counter()
        if model.compiled:
            done, status, n_rec = _run_chunk(kern, model.grad_kernel, x, p, xi, g, key, h, hyper, model.data,
                                             perm, b, reflect, t, m, burnin, thin, samples, n_rec, ke, th, gn)
        else:
            done, status, n_rec = _python_chunk(kern, model, x, p, xi, key, h, hyper, perm, b, reflect,
                                                t, m, burnin, thin, samples, n_rec, ke, th, gn)
        wall += time.perf_counter() - t_start
        if status != 0:
            step = t + done
            cause = "gradient" if status == 1 else "position"
            saved = ""
            if partial_path is not None:
                _save_npz(partial_path, samples[:n_rec], burnin + thin * np.arange(n_rec), ke[:step], th[:step],
                          gn[:step], np.array(ck_s, dtype=np.int64), np.array(ck_w), name, model.name, seed, h)
                saved = f" The {n_rec} samples drawn so far are saved in {partial_path}."
            if bar is not None:
                bar.close()
            raise DivergenceError(
                f"{name} diverged at step {step} on model {model.name!r}: non-finite {cause}. Likely cause: step size "
                f"{h:g} too large (or friction too small) for this target; reduce step_size.{saved}",
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
    return ChainResult(
        sampler=name, model=model.name, seed=int(seed), chain=int(chain), step_size=h, batch_size=b,
        samples=samples[:n_rec], sample_steps=burnin + thin * np.arange(n_rec, dtype=np.int64),
        kinetic_energy=ke, thermostat=th, grad_norm=gn,
        checkpoint_step=np.array(ck_s, dtype=np.int64), checkpoint_wall=np.array(ck_w),
        state=SGState(x, p, xi), callback_values=cb_vals,
    )


def _python_chunk(kern, model, x, p, xi, key, h, hyper, perm, b, reflect, t0, m, burnin, thin,
                  samples, n_rec, ke, th, gn):
    """Python-loop twin of :func:`_run_chunk` for models with a NumPy gradient."""
    use_perm = perm.shape[0] > b
    nref = reflect.shape[0]
    for s in range(m):
        t = t0 + s
        if use_perm:
            partial_shuffle(key, perm, b)
        g = model.gradient(x, perm[:b], key)
        gg = float(np.dot(g, g))
        if not math.isfinite(gg):
            return s, 1, n_rec
        k, z = kern(x, p, xi, g, key, h, hyper)
        if nref:
            neg = (reflect != 0) & (x < 0)
            if neg.any():
                x[neg] = -x[neg]
                if p.shape[0]:
                    p[neg] = -p[neg]
        if not np.all(np.isfinite(x)):
            return s, 2, n_rec
        ke[t] = k
        th[t] = z
        gn[t] = math.sqrt(gg)
        if t >= burnin and (t - burnin) % thin == 0:
            samples[n_rec] = x
            n_rec += 1
    return m, 0, n_rec
