"""One interface for every SG-MCMC sampler (after blackjax).

A sampler is a :class:`SamplingAlgorithm`: ``init(position, rng, step_size=None) -> SGState`` and
``build_kernel(model) -> step`` with ``step(rng, state, minibatch, step_size) -> (SGState, SGInfo)``.
Behind both sits one Numba *step kernel* with the common signature documented in
:mod:`~scalable_bayes.samplers.euclidean`; the compiled chunk loop (``samplers/_loop.py``) calls the
same kernel inside a jitted loop, so the Python step and the compiled chain draw exactly the same numbers.

State layout (shared by the Euclidean, sphere and simplex samplers):

* ``position``   float64 (n,)  -- theta (on the sphere: a unit vector; on the simplex: the
  expanded/gamma variables).
* ``momentum``   float64 (n,)  -- p (u = p h in the reformulated samplers; tangent to the sphere
  for geodesic samplers; length 0 for first-order samplers on which it is unused).
* ``thermostat`` float64 (m,)  -- xi (m = 1), Xi plus scratch (m = n^2 + n), or length 1 holding
  the friction for fixed-friction samplers.

Manifold hooks: a model may declare ``reflect`` (per-coordinate mirror boundary at 0, used for
positive parameters such as a precision; the mirrored-gamma SGRLD uses the same hook), and a
sampler carries its geometry inside its step kernel (geodesic flow and tangent projection are
kernels of :mod:`scalable_bayes.manifolds`), so the driver never needs to know the manifold.

This module is the interface only and imports no sampler: the samplers live in
:mod:`~scalable_bayes.samplers.euclidean`, :mod:`~scalable_bayes.samplers.geodesic` and
:mod:`~scalable_bayes.samplers.simplex`, the chain driver in :mod:`~scalable_bayes.samplers.driver`, and the
registry of samplers by name (``SAMPLERS``, ``make_sampler``) in the package :mod:`scalable_bayes.samplers`,
which imports them all.
"""

from __future__ import annotations

import math
from typing import Callable, NamedTuple

import numpy as np

from ..manifolds.euclidean import manifold_of
from ..rng import as_key, fill_normal


class SGState(NamedTuple):
    """Sampler state; all arrays float64 and owned by the state.

    A NamedTuple; the layout of its fields is that of the module docstring.

    Parameters
    ----------
    position : ndarray of float64, shape (n,)
        theta (on the sphere: unit vectors per block; on the simplex: the gamma variables).
    momentum : ndarray of float64, shape (n,) or (0,)
        p (u = p h in the reformulated samplers; tangent to the sphere for the geodesic samplers; length
        0 for first-order samplers).
    thermostat : ndarray of float64, shape (m,)
        xi (m = 1), Xi plus scratch (m = n^2 + n), or the fixed friction, followed by the sampler's
        extra state (counters, scratch), if any.
    """

    position: np.ndarray
    momentum: np.ndarray
    thermostat: np.ndarray


class SGInfo(NamedTuple):
    """Per-step diagnostics: kinetic energy per dimension p'p/2n (target 0.5; NaN for SGLD),
    thermostat value (xi, alpha, mean diag of Xi, or the fixed friction), gradient norm.

    A NamedTuple.

    Parameters
    ----------
    kinetic_energy : float
        Kinetic energy per dimension p'p / (2 n) (target 0.5; NaN for SGLD).
    thermostat : float
        The thermostat value after the step (xi, alpha, mean diagonal of Xi, or the fixed friction).
    grad_norm : float
        Euclidean norm of the stochastic gradient used in the step.
    """

    kinetic_energy: float
    thermostat: float
    grad_norm: float


class DivergenceError(RuntimeError):
    """A chain produced a non-finite gradient or position.

    Parameters
    ----------
    message : str
        What diverged and the likely cause (e.g. "step size too large").
    step : int, optional
        The step at which the chain diverged, kept as the attribute ``step``.
    partial_path : str or os.PathLike, optional
        Where the driver saved the samples drawn before the divergence, kept as ``partial_path``.
    """

    def __init__(self, message, step=None, partial_path=None):
        super().__init__(message)
        self.step = step
        self.partial_path = partial_path


class SamplingAlgorithm(NamedTuple):
    """A configured sampler: its name, Numba step kernel and constants.

    A NamedTuple, built by the sampler factories (:func:`~scalable_bayes.samplers.sgnht`, ...) rather than
    by hand. The fields from ``model_kernels`` on are hooks for samplers that need more of the model than
    one gradient per step (the geodesic samplers of :mod:`~scalable_bayes.samplers.geodesic`: several inner
    steps on one minibatch, a Metropolis-Hastings test, a noise estimate from per-datum gradients).

    Parameters
    ----------
    name : str
        The sampler's name (as in the registry ``SAMPLERS``).
    kernel : callable
        The Numba step kernel, ``ke, th = kernel(x, p, xi, g, key, h, hyper)`` (the common signature of
        :mod:`~scalable_bayes.samplers.euclidean`), or its extended form with ``model_kernels``.
    hyper : ndarray of float64
        The kernel's constants (friction, noise estimate, ...); :meth:`bind` appends the manifold's.
    momentum : bool, default True
        Whether it carries a momentum.
    reformulated : bool, default False
        Step size is eta (= h^2) and the momentum is u = p h.
    thermostat_kind : {"scalar", "matrix"}, default "scalar"
        A scalar thermostat (length 1) or the matrix thermostat of SGNHT (n^2 + n entries).
    thermostat_init : float, default 0.0
        Initial thermostat value (xi_0; for the matrix thermostat, the diagonal of Xi_0).
    manifold : str, default "euclidean"
        Name of the manifold it samples on (``"euclidean"``, ``"sphere"``, ``"gamma-simplex"``); :meth:`bind`
        refuses a model on another.
    model_kernels : tuple of str, default ()
        Names of Numba kernels of the model the step kernel calls itself, e.g.
        ``("grad_kernel",)`` or ``("grad_kernel", "potential_kernel")``. When non-empty the kernel's
        signature is the common one followed by the model's data, the minibatch and those kernels,
        ``ke, th = kern(x, p, xi, g, key, h, hyper, data, batch_idx, *kernels)``; the compiled driver
        binds them at compile time (:func:`~scalable_bayes.samplers._loop.chunk_runner`), so neither it nor the step
        branches on the sampler. Only models with a Numba gradient (``model.compiled``) qualify.
    extra_state : int, default 0
        With ``extra_state_per_dim``: the thermostat array gets ``extra_state +
        extra_state_per_dim * n`` more entries after the scalar thermostat (counters, scratch), so the
        kernel needs no allocation and the counters travel with the state.
    extra_state_per_dim : int, default 0
        See ``extra_state``.
    max_step : float, default inf
        The largest step size the sampler's constants allow (e.g. the injected noise
        variance (2C - h V) h must not be negative); a larger one is a ValueError before the first step,
        whose message gives ``max_step_reason``.
    max_step_reason : str
        Why the bound ``max_step`` exists and how to move it.
    step_bound : callable, optional
        ``step_bound(hyper) -> (largest step, reason)`` from the constants *with* the
        model's manifold constants appended, for bounds that depend on the model (e.g. a geodesic
        sampler's step is bounded by the sphere's block size); :meth:`bind` folds it into ``max_step``.
    full_batch : bool, default False
        The sampler is only correct on the full data set (an exact Metropolis-Hastings
        test); a run with ``batch_size`` < N is a ValueError (:meth:`check_batch_size`).
    divergence_hint : callable, optional
        ``divergence_hint(state, step_size) -> str | None``, the sampler's own
        explanation of a chain that stopped with a non-finite position (e.g. a runaway thermostat that the
        step kernel stopped by making the position NaN); the driver's DivergenceError reports it instead of
        its generic "step size too large".
    kernel_for : callable, optional
        ``kernel_for(hyper, compiled) -> kernel``, the variant of the step kernel that :meth:`bind` uses for
        the model's constants and for a model whose gradient is a Numba kernel (``compiled=True``: the step
        is inlined into the compiled chain loop) or Python (the step is called from Python). The simplex
        samplers take a serial twin of their block-parallel step for models with few blocks (the same
        draws, compiled far faster and cacheable on disk) and a thread-pool twin for Python gradients.
    """

    name: str
    kernel: Callable
    hyper: np.ndarray
    momentum: bool = True
    reformulated: bool = False
    thermostat_kind: str = "scalar"  # "scalar" or "matrix"
    thermostat_init: float = 0.0
    manifold: str = "euclidean"
    model_kernels: tuple = ()
    extra_state: int = 0
    extra_state_per_dim: int = 0
    max_step: float = math.inf
    max_step_reason: str = ("the injected noise variance would be negative; lower step_size or raise the "
                            "friction")
    step_bound: Callable | None = None
    full_batch: bool = False
    divergence_hint: Callable | None = None
    kernel_for: Callable | None = None

    # ---------------------------------------------------------------- interface
    def bind(self, model) -> "SamplingAlgorithm":
        """This sampler with the constants of ``model``'s manifold appended to its kernel constants
        (none for R^n; block size and Dirichlet prior for the gamma-parametrised simplex), or a
        ValueError if the sampler does not move on that manifold. Every chain calls this, so the
        driver runs any (sampler, model) pair without branching on geometry."""
        man = manifold_of(model)
        man_name = man.name
        if man_name != self.manifold:
            raise ValueError(
                f"{self.name} samples on the {self.manifold} manifold, but model {getattr(model, 'name', model)!r} "
                f"lives on {man_name}; choose a sampler for that manifold"
                + (" (scir or sgrld)" if man_name == "gamma-simplex" else ""))
        for k in self.model_kernels:
            if not getattr(model, "compiled", False):
                raise ValueError(f"{self.name} calls the model's Numba kernels itself, but model "
                                 f"{getattr(model, 'name', model)!r} has only a NumPy gradient; give it a grad_kernel")
            if not callable(getattr(model, k, None)):
                raise ValueError(f"{self.name} needs the model's {k!r} (a Numba kernel), which model "
                                 f"{getattr(model, 'name', model)!r} does not provide; use a model that offers it "
                                 f"(e.g. those of scalable_bayes.models.sphere) or another sampler / noise setting")
        extra = man.constants()
        bound = self if extra.shape[0] == 0 else self._replace(hyper=np.concatenate([self.hyper, extra]))
        if self.kernel_for is not None:  # a variant of the kernel suited to the bound constants
            bound = bound._replace(kernel=self.kernel_for(bound.hyper, bool(getattr(model, "compiled", False))))
        if self.step_bound is not None:
            limit, why = self.step_bound(bound.hyper)
            if limit < bound.max_step:
                bound = bound._replace(max_step=float(limit), max_step_reason=why)
        return bound

    def init(self, position, rng, step_size=None) -> SGState:
        """Initial state at ``position``: p ~ N(0, I) (u ~ N(0, eta I) if reformulated), xi = xi_0."""
        x = np.array(position, dtype=np.float64, copy=True).reshape(-1)
        if not np.all(np.isfinite(x)):
            raise ValueError(f"{self.name}: initial position has non-finite entries; pass a finite theta0")
        n = x.shape[0]
        if n == 0:
            raise ValueError(f"{self.name}: initial position is empty; pass theta0 with one entry per parameter")
        key = as_key(rng)
        if self.momentum:
            p = np.empty(n)
            fill_normal(key, p)
            if self.reformulated:
                if step_size is None:
                    raise ValueError(f"{self.name}: init needs step_size (eta) to draw u ~ N(0, eta I)")
                p *= math.sqrt(_check_step(step_size, self.name))
        else:
            p = np.zeros(0)
        if self.thermostat_kind == "matrix":
            xi = np.zeros(n * n + n)
            xi[: n * n].reshape(n, n)[np.diag_indices(n)] = self.thermostat_init
        else:
            xi = np.array([self.thermostat_init], dtype=np.float64)
        if self.extra_state or self.extra_state_per_dim:
            xi = np.concatenate([xi, np.zeros(self.extra_state + self.extra_state_per_dim * n)])
        return SGState(x, p, xi)

    def check_step_size(self, h) -> float:
        """``h`` as a float, or a ValueError if it is not positive or exceeds ``max_step``."""
        h = _check_step(h, self.name)
        if h > self.max_step:
            raise ValueError(f"{self.name}: step_size {h:g} exceeds the largest step {self.max_step:g} its constants "
                             f"allow: {self.max_step_reason}")
        return h

    def check_batch_size(self, batch_size, n_data, model_name="model") -> None:
        """A ValueError if the sampler needs the full data set (``full_batch``) and ``batch_size`` < ``n_data``."""
        if self.full_batch and int(batch_size) < int(n_data):
            raise ValueError(
                f"{self.name}: minibatch of {int(batch_size)} < N = {int(n_data)} data on model {model_name!r}; this sampler "
                f"uses exact gradients and an exact Metropolis-Hastings test, so on minibatches it samples the wrong "
                f"law (its test accepts by the minibatch potential, a different target at every step, and no "
                f"correction makes up for it). Use the full data set (batch_size=None) or a stochastic-gradient sampler "
                f"(sggmc / gsgnht)")

    def build_kernel(self, model):
        """Return ``step(rng, state, minibatch, step_size) -> (SGState, SGInfo)`` for ``model``.

        ``minibatch`` is an int64 index array into the model's data (ignored by models without
        data, e.g. targets with injected gradient noise). ``rng`` is a key from
        :func:`scalable_bayes.rng.make_key` (advanced in place) or an int seed.
        """
        bound = self.bind(model)
        kern = bound.kernel
        hyper = bound.hyper
        name = self.name
        manifold = manifold_of(model)

        extras = tuple(getattr(model, k) for k in self.model_kernels)

        def step(rng, state: SGState, minibatch, step_size):
            h = bound.check_step_size(step_size)
            key = as_key(rng)
            x = state.position.copy()
            p = state.momentum.copy()
            xi = state.thermostat.copy()
            idx = np.ascontiguousarray(minibatch if minibatch is not None else np.zeros(0, np.int64), dtype=np.int64)
            if model.n_data > 0:
                bound.check_batch_size(idx.shape[0], model.n_data, model.name)
            g = model.gradient(x, idx, key)
            with np.errstate(over="ignore", invalid="ignore"):
                gn = float(np.sqrt(np.dot(g, g)))
            if not np.isfinite(gn):
                raise DivergenceError(
                    f"{name}: non-finite gradient of model {model.name!r}; likely cause: step size {h:g} too large "
                    f"(the chain left the region where the potential is finite). Reduce step_size."
                )
            manifold.check_position(x, name)
            if extras:
                ke, th = kern(x, p, xi, g, key, h, hyper, model.data, idx, *extras)
            else:
                ke, th = kern(x, p, xi, g, key, h, hyper)
            if model.reflect is not None:
                _reflect(x, p, model.reflect)
            if not np.all(np.isfinite(x)):
                hint = bound.divergence_hint(SGState(x, p, xi), h) if bound.divergence_hint is not None else None
                raise DivergenceError(
                    f"{name}: non-finite position for model {model.name!r}; "
                    + (hint if hint else f"likely cause: step size {h:g} too large. Reduce step_size.")
                )
            return SGState(x, p, xi), SGInfo(float(ke), float(th), gn)

        return step


def _reflect(x, p, mask):
    neg = (mask != 0) & (x < 0)
    if np.any(neg):
        x[neg] = -x[neg]
        if p.shape[0]:
            p[neg] = -p[neg]


def _check_step(step_size, name):
    try:
        h = float(step_size)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: step_size must be a positive finite number, got {step_size!r}") from None
    if not (np.isfinite(h) and h > 0):
        raise ValueError(f"{name}: step_size must be a positive finite number, got {step_size!r}")
    return h
