"""The one chain driver: burn-in, thinning, per-step diagnostics, wall-time checkpoints, progress.

Models with a Numba gradient run in *compiled chunks*: :func:`_run_chunk` is a jitted loop over
many steps that receives the sampler's step kernel and the model's gradient kernel as
first-class functions; the driver returns to Python between chunks for progress, checkpoints,
callbacks and divergence reports. Models with a NumPy gradient run in a Python loop around the
same step kernel. Two random streams per chain: the sampler's noise ``make_key(seed, chain)``
(initial momentum, step-kernel draws, injected gradient noise) and the minibatch stream
``batch_key(seed, chain)``; the batch of step t + 1 is drawn before the gradient of step t, so a
gradient kernel can prefetch its rows (``model.next_batch``, see models/logistic.py). Both paths
consume both streams in the same order, so they give identical chains.

Several chains: :func:`run_chains` runs chain c = 0 .. n_chains - 1 as ``run_chain(..., chain=c)`` (so chain 0
is the single chain of the same seed) and returns a :class:`MultiChainResult` (samples (chain, draw, dim),
``to_inference_data()`` for ArviZ). The compiled chunk loops are ``nogil``, so chains of a model that declares
``thread_safe`` run at once in a thread pool; the others run one after another.

Caching: Numba cannot cache a function whose *arguments* are dispatchers, so ``_run_chunk``
itself is not cached. For kernels importable by module and name, :func:`chunk_runner` writes a
tiny wrapper module (one per sampler/model kernel pair) into a cache directory that binds the two
kernels as globals and calls ``_run_chunk``; that wrapper is ``@njit(cache=True, nogil=True)``, so each
Snakemake job reuses the compiled chunk loop instead of compiling it again. Kernels that are not
importable (closures) fall back to the uncached ``_run_chunk``. The wrapper's source carries a
digest of every module the kernels may call (:func:`_dependency_digest`; Numba's cache does not
notice edited callees) and the kernels' fingerprint (:func:`scalable_bayes.jitcache.kernel_fingerprint`:
bytecode, closure cells, the global values Numba freezes into the code, recursively through callees),
so a gradient typed at a prompt, one whose global is set at run time, or one redefined in the same
process never reuses another's loop; kernels the fingerprint cannot describe are not cached. Pairs with a
fastmath kernel are never cached: Numba's cached object code for them was measured to differ in
the last bit from the in-memory compilation, which would make a seed's first run differ from
later ones. Pairs with a parallel (prange) kernel are never cached either: loading such a cached
loop crashed the process.

Samplers that call model kernels themselves (``SamplingAlgorithm.model_kernels``, e.g. the inner
steps and the Metropolis-Hastings test of the geodesic samplers) get the same loop with the step
call extended by ``data, cur`` and those kernels (:func:`_chunk_source`); in the cached wrapper they
are module globals like the step and gradient kernels. The step kernel itself then takes
dispatchers as arguments, so its own ``cache=True`` never hits (Numba cannot cache such a
signature; it recompiles silently, in memory) -- the wrapper that inlines it is cached. Kernels
that are not importable (closures) fall back to an uncached loop compiled from the same source.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import inspect
import logging
import math
import os
import sys
import sysconfig
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
from numba import njit

from ..dependencies import file_imports
from ..jitcache import cache_dir, kernel_fingerprint
from ..rng import make_key, partial_shuffle, resolve_seed
from ..utils import atomic_path
from .base import DivergenceError, SamplingAlgorithm, SGState, _check_step

logger = logging.getLogger(__name__)


@njit(nogil=True)  # not cached: its arguments are dispatchers (see the module docstring; the wrappers are)
def _run_chunk(kern, grad, x, p, xi, g, key, h, hyper, sched, data, perm, batch_size, reflect,
               t0, n_steps, burnin, thin, samples, n_rec, ke, th, gn, bkey, cur, nxt, n_total):
    """Run steps t0 .. t0+n_steps-1 in place. Returns (steps done, status, n_rec).

    status 0 = ok, 1 = non-finite gradient, 2 = non-finite position.
    ``sched`` = [tau, kappa]: the step size of step t is h (1 + t/tau)^-kappa (kappa = 0: constant h).
    Minibatches come from their own stream ``bkey`` one step ahead: on entry ``nxt`` holds the
    batch of step t0; each step moves it to ``cur`` and draws the batch of step t + 1 into ``nxt``
    before the gradient runs, so a gradient kernel that shares ``nxt`` (``model.next_batch``) can
    prefetch the next step's rows while it computes this step's.
    """
    n = x.shape[0]
    use_perm = perm.shape[0] > batch_size
    nref = reflect.shape[0]
    for s in range(n_steps):
        t = t0 + s
        if use_perm:
            for i in range(batch_size):
                cur[i] = nxt[i]
            if t + 1 < n_total:
                partial_shuffle(bkey, perm, batch_size)
                for i in range(batch_size):
                    nxt[i] = perm[i]
        grad(x, data, cur, key, g)
        gg = 0.0
        for i in range(n):
            gg += g[i] * g[i]
        if not np.isfinite(gg):
            return s, 1, n_rec
        ht = h
        if sched[1] != 0.0:
            ht = h * (1.0 + t / sched[0]) ** (-sched[1])
        k, z = kern(x, p, xi, g, key, ht, hyper)
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


BATCH_STREAM = 0x6D62  # stream key of the minibatch draws: make_key(seed, chain, BATCH_STREAM)


def batch_key(seed, chain=0) -> np.ndarray:
    """The key of the minibatch stream of chain ``chain`` of ``seed`` (separate from the sampler's
    noise stream ``make_key(seed, chain)``, so batches can be drawn one step ahead)."""
    return make_key(seed, chain, BATCH_STREAM)


_WRAPPER_HEAD = """# generated by scalable_bayes.samplers.driver.chunk_runner from _run_chunk; safe to delete
import numpy as np
from numba import njit
from scalable_bayes.rng import partial_shuffle
from {kmod} import {kname} as _kern
from {gmod} import {gname} as _grad


"""


@functools.lru_cache(maxsize=1)
def _installed_dirs() -> tuple[str, ...]:
    """Directories of the Python installation (standard library, site-packages)."""
    paths = sysconfig.get_paths()
    dirs = {os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    return tuple(d.rstrip(os.sep) + os.sep for d in sorted(dirs))


def _followed_source(name: str):
    """Source file of the imported module ``name`` if the digest follows it, else None: every
    module of ``scalable_bayes`` and every module outside the Python installation (the user's
    code); not the standard library or installed third-party packages."""
    mod = sys.modules.get(name)
    f = getattr(mod, "__file__", None)
    if not f or not f.endswith(".py"):
        return None
    if name == "scalable_bayes" or name.startswith("scalable_bayes."):
        return Path(f)
    return None if os.path.realpath(f).startswith(_installed_dirs()) else Path(f)


def _imported_names(path: Path, mod) -> set[str]:
    """Absolute names of every module the source at ``path`` imports, at any depth of the file
    (:func:`scalable_bayes.dependencies.file_imports`, relative imports resolved against ``mod``'s package)."""
    try:
        return file_imports(path, getattr(mod, "__package__", None) or "")
    except (OSError, SyntaxError, ValueError):
        return set()


def _dependency_files(*modules) -> list[Path]:
    """Source files of the modules ``modules`` and of every module they import, transitively, as
    far as :func:`_followed_source` follows (parent packages included: importing a module runs them);
    plus :mod:`scalable_bayes.rng`, which the wrapper itself imports."""
    todo = list(modules) + ["scalable_bayes.rng"]
    seen: set[str] = set()
    files: set[Path] = set()
    while todo:
        name = todo.pop()
        if not name or name in seen:
            continue
        seen.add(name)
        path = _followed_source(name)
        if path is None:
            continue
        files.add(path)
        todo.append(name.rpartition(".")[0])
        todo.extend(_imported_names(path, sys.modules[name]))
    return sorted(files)


def _dependency_digest(*modules) -> str:
    """Digest of the source of every module a compiled chunk loop may call, plus the Numba and
    llvmlite versions: the kernels' modules ``modules`` and, transitively, every module they import
    (:func:`_dependency_files`).

    Numba's on-disk cache only checks the timestamp of the file that defines a cached function,
    not of the functions it calls, so a wrapper compiled against an older gradient or step kernel,
    or against an older helper they call (a manifold map, the RNG, an intrinsic, a helper module of
    the user's model), would otherwise be reused after that code changed (stale machine code, wrong
    results or out-of-bounds writes). The digest goes into the wrapper's source, so any change to a
    dependency yields a new wrapper file and a fresh compilation.

    Which files: the import statements of the kernels' modules are read (``ast``) and followed,
    module by module, through every module of ``scalable_bayes`` and every module that lies
    outside the Python installation (the user's own packages and scripts), whatever package they
    belong to; the standard library and installed third-party packages are not followed (their
    code changes with their version; Numba's is hashed). Following imports rather than hashing
    the whole library keeps an edit of an unrelated module (a corpus reader, a plot) from
    recompiling every chunk loop, and reaches the user's helper modules, which a fixed list of
    files cannot. Over-inclusion is harmless (imports inside functions are followed too).
    """
    import llvmlite
    import numba

    h = hashlib.sha1(f"{numba.__version__} {llvmlite.__version__}".encode())
    for f in _dependency_files(*modules):
        try:
            data = f.read_bytes()
        except OSError:
            continue
        h.update(str(f).encode())
        h.update(data)
    return h.hexdigest()[:16]


_STEP_CALL = "kern(x, p, xi, g, key, ht, hyper)"


def _chunk_source(n_extra: int) -> str:
    """Source of ``_run_chunk`` (without decorator); with ``n_extra`` > 0 its step call passes the
    model's data, the minibatch and the extra model kernels ``f0 .. f{n_extra-1}`` (first-class
    arguments after ``grad``), for samplers with ``model_kernels``."""
    body = inspect.getsource(_run_chunk)
    body = body[body.index("def _run_chunk("):]  # drop the (uncached) decorator line
    if n_extra:
        fs = ", ".join(f"f{i}" for i in range(n_extra))
        body = body.replace("def _run_chunk(kern, grad, ", f"def _run_chunk(kern, grad, {fs}, ")
        body = body.replace(_STEP_CALL, f"kern(x, p, xi, g, key, ht, hyper, data, cur, {fs})")
    return body


@functools.lru_cache(maxsize=None)
def _run_chunk_extra(n_extra: int):
    """The uncached chunk loop for a step kernel that calls ``n_extra`` model kernels (closures)."""
    ns = {"np": np, "partial_shuffle": partial_shuffle}
    exec(compile(_chunk_source(n_extra), f"<scalable_bayes chunk loop, {n_extra} model kernels>", "exec"), ns)
    return njit(nogil=True)(ns["_run_chunk"])


def _wrapper_source(kmod, kname, gmod, gname, extras=(), fingerprint="") -> str:
    """Source of ``_run_chunk`` with the kernels bound as module globals (so Numba can cache it);
    ``extras``: (module, name) of the model kernels a step kernel with ``model_kernels`` calls;
    ``fingerprint``: :func:`~scalable_bayes.jitcache.kernel_fingerprint` of the kernels, written into
    the source (with the digest of the modules they import) so that other kernel code gets another file."""
    body = _chunk_source(len(extras))
    fs = "".join(f"f{i}, " for i in range(len(extras)))
    body = "@njit(cache=True, nogil=True)\n" + body.replace(f"def _run_chunk(kern, grad, {fs}", "def run(")
    for i, (_, n) in enumerate(extras):
        # passed as values: referenced as module attributes (``from m import k as _f0`` passed as an
        # argument made Numba refuse to cache the loop: "uses dynamic globals"; Numba 0.68)
        body = body.replace(f", f{i}", f", _fm{i}.{n}")
    body = body.replace("kern(x, p, xi, g, key, ht, hyper", "_kern(x, p, xi, g, key, ht, hyper")
    body = body.replace("grad(x, data, cur, key, g)", "_grad(x, data, cur, key, g)")
    head = _WRAPPER_HEAD.format(kmod=kmod, kname=kname, gmod=gmod, gname=gname)
    head += "".join(f"import {m} as _fm{i}\n" for i, (m, _) in enumerate(extras))
    digest = _dependency_digest(kmod, gmod, *(m for m, _ in extras))
    return head.replace("\nimport numpy", f"\n# dependencies: {digest}\n# kernels: {fingerprint}\nimport numpy", 1) + "\n" + body


_RUNNERS: dict = {}
_PERM_DTYPE = np.int32  # minibatch permutation: half the footprint of int64 (fewer cache misses per shuffle)


def _cache_dir() -> Path:
    return cache_dir()


def _importable(fn):
    py = getattr(fn, "py_func", None)
    if py is None or "<locals>" in py.__qualname__:
        return None
    mod = sys.modules.get(py.__module__)
    if mod is None or getattr(mod, py.__name__, None) is not fn:
        return None
    return py.__module__, py.__name__


def _uses_fastmath(fn) -> bool:
    fm = getattr(fn, "targetoptions", {}).get("fastmath", False)
    return bool(fm)


def _uses_parallel(fn) -> bool:
    return bool(getattr(fn, "targetoptions", {}).get("parallel", False))


def chunk_runner(kern, grad, extras=()):
    """The compiled chunk loop for a (step kernel, gradient kernel) pair, cached on disk when possible.
    ``extras``: the model kernels a step kernel with ``model_kernels`` calls (passed after ``data, cur``)."""
    extras = tuple(extras)
    k = (kern, grad) + extras
    if k in _RUNNERS:
        return _RUNNERS[k]
    a, b = _importable(kern), _importable(grad)
    ext = [_importable(f) for f in extras]
    if any(e is None for e in ext):
        a = None
    if any(_uses_fastmath(f) or _uses_parallel(f) for f in extras):
        a = None
    if _uses_fastmath(kern) or _uses_fastmath(grad):
        # Numba's cached object code of a loop that inlines a fastmath kernel is not always the
        # code the same source compiles to in memory (measured: the first, compiling run and the
        # later, cache-loading runs of one seed differed in the last bit, and chains diverge from
        # there). Such pairs are compiled in memory in every process, which is reproducible.
        a = b = None
    if _uses_parallel(kern) or _uses_parallel(grad):
        # A cached loop that calls a parallel (prange) kernel crashed when a later process loaded it
        # from Numba's cache (SIGSEGV at the first call; Numba 0.6x, the simplex samplers' block-parallel
        # steps); the first, compiling process ran fine. Such pairs are compiled in memory.
        a = b = None
    fingerprint = None
    if a is not None and b is not None:
        # everything Numba freezes into the loop (bytecode, closures, global values, callees); None:
        # a kernel reads something the fingerprint cannot describe, so the loop is compiled in memory
        fingerprint = kernel_fingerprint(kern, grad, *extras)
        if fingerprint is None:
            logger.info("chunk loop of %s / %s compiled in memory: a kernel reads a value the cache key cannot "
                        "describe", a[1], b[1])
    runner = None
    if fingerprint is not None:
        src = _wrapper_source(a[0], a[1], b[0], b[1], tuple(ext), fingerprint)
        tag = hashlib.sha1(src.encode()).hexdigest()[:12]
        name = f"sb_chunk_{a[1]}_{b[1]}_{tag}".replace(".", "_")
        try:
            d = _cache_dir()
            d.mkdir(parents=True, exist_ok=True)
            path = d / f"{name}.py"
            if not path.exists() or path.read_text() != src:
                with atomic_path(path) as tmp:
                    tmp.write_text(src)
            # importable by name: Numba's cache re-imports the defining module when it loads
            if str(d) not in sys.path:
                sys.path.append(str(d))
            importlib.invalidate_caches()
            runner = importlib.import_module(name).run
        except OSError as err:  # read-only home etc.: compile in memory instead
            logger.warning("cannot write the chunk-runner cache (%s); compiling without cache", err)
    if runner is None and extras:
        def runner(*args, _k=kern, _g=grad, _e=extras, _loop=_run_chunk_extra(len(extras))):
            return _loop(_k, _g, *_e, *args)
    elif runner is None:
        def runner(*args, _k=kern, _g=grad):
            return _run_chunk(_k, _g, *args)
    elif "_kern(" not in src or "_grad(" not in src:  # pragma: no cover - guards edits of _run_chunk
        raise RuntimeError("chunk_runner: _run_chunk no longer matches the wrapper template")
    _RUNNERS[k] = runner
    return runner


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

    @property
    def wall_time(self) -> float:
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
    to_points = getattr(getattr(model, "manifold", None), "sample_points", None)
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
) -> ChainResult:
    """Run one chain of ``algorithm`` on ``model`` from ``position``.

    Parameters
    ----------
    seed, chain : the sampler's noise stream is ``make_key(seed, chain)`` and the minibatch stream
        ``batch_key(seed, chain)``; same seed and chain give byte-identical output. ``seed=None``
        draws fresh entropy; the result's ``seed`` records it, so the chain can be repeated.
    n_steps : total number of steps T (including burn-in).
    step_size : h (eta for reformulated samplers).
    batch_size : minibatch size n (<= N); default N (full batch). Ignored for models with no data.
    burnin, thin : positions are kept for steps t >= burnin with (t - burnin) % thin == 0.
    checkpoint_every : steps between returns to Python (wall time, progress, callback); default
        ~n_steps/20 (at least 1000 steps per compiled chunk).
    callback : ``callback(step, state) -> value`` called at each checkpoint (its time is not
        counted in the wall time); values are returned in ``callback_values`` as (step, value).
    partial_path : where the samples drawn so far are written (.npz) if the chain diverges.
    step_decay : ``(tau, kappa)``: step t uses h_t = step_size (1 + t/tau)^-kappa (the decreasing
        schedule of Patterson & Teh 2013 and SCIR Sec. 4.1); default a constant step size.
    check_gradient : before the first step, compare the model's full-batch gradient with central finite
        differences of its potential at the initial position and one point near it
        (:meth:`scalable_bayes.models.Model.check_gradient`; a ValueError naming the coordinate with the
        largest discrepancy). Models without a potential, with injected gradient noise or off R^n are not
        checked. The check draws nothing from the chain's streams; ``False`` skips it.
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
    if getattr(model, "manifold", None) is not None:
        model.manifold.check_position(state.position, name)
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
        t_start = time.perf_counter()
        if model.compiled:
            done, status, n_rec = runner(x, p, xi, g, key, h, hyper, sched, model.data, perm, b, reflect, t, m, burnin,
                                         thin, samples, n_rec, ke, th, gn, bkey, cur, nxt, n_steps)
        else:
            done, status, n_rec = _python_chunk(kern, model, x, p, xi, key, h, hyper, sched, perm, b, reflect,
                                                t, m, burnin, thin, samples, n_rec, ke, th, gn, bkey, cur, nxt, n_steps)
        wall += time.perf_counter() - t_start
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
    )


@dataclass
class MultiChainResult:
    """Output of :func:`run_chains`: ``chains[c]`` is the :class:`ChainResult` of chain ``c``.

    The stacked views put the chain first, as ArviZ does: ``samples`` (n_chains, n_draws, dim),
    ``gamma_samples`` likewise or None, ``kinetic_energy`` / ``thermostat`` / ``grad_norm`` (n_chains,
    n_steps). ``threads``: how many chains ran at once (1: one after another); ``wall_time``: seconds for the
    whole call.
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
    ``result.threads`` says which happened.

    Parameters
    ----------
    position : (dim,) start of every chain, or (n_chains, dim), one start per chain (dispersed starts make
        R-hat meaningful).
    n_chains : number of chains, >= 1.
    n_threads : chains run at once (default: the number of CPUs this process may use, at most
        ``n_chains``); 1 runs them one after another.
    seed, n_steps, step_size, batch_size, burnin, thin, checkpoint_every, step_decay, check_gradient : as
        in :func:`run_chain` (the gradient is checked at every chain's start, once, before any chain runs).
        ``seed=None`` draws one fresh seed for all chains, recorded in each chain's ``seed``.

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
    kw = dict(seed=seed, n_steps=n_steps, step_size=step_size, batch_size=batch_size, burnin=burnin, thin=thin,
              checkpoint_every=checkpoint_every, step_decay=step_decay, check_gradient=False, progress=False)

    def one(c):
        try:
            return run_chain(algorithm, model, starts[c], chain=c, **kw)
        except DivergenceError as err:
            raise DivergenceError(f"chain {c}: {err}", step=err.step, partial_path=err.partial_path) from err

    t0 = time.perf_counter()
    if n_threads == 1:
        chains = [one(c) for c in range(n_chains)]
    else:
        from concurrent.futures import ThreadPoolExecutor

        # compile (or load) the chunk loop once, in this thread, before the chains share it
        chunk_runner(algorithm.kernel, model.grad_kernel, tuple(getattr(model, k) for k in algorithm.model_kernels))
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


def _python_chunk(kern, model, x, p, xi, key, h, hyper, sched, perm, b, reflect, t0, m, burnin, thin,
                  samples, n_rec, ke, th, gn, bkey, cur, nxt, n_total):
    """Python-loop twin of :func:`_run_chunk` for models with a NumPy gradient (same streams, same order)."""
    use_perm = perm.shape[0] > b
    nref = reflect.shape[0]
    for s in range(m):
        t = t0 + s
        if use_perm:
            cur[:] = nxt
            if t + 1 < n_total:
                partial_shuffle(bkey, perm, b)
                nxt[:] = perm[:b]
        g = model.gradient(x, cur, key)
        gg = float(np.dot(g, g))
        if not math.isfinite(gg):
            return s, 1, n_rec
        ht = h
        if sched[1] != 0.0:
            ht = h * (1.0 + t / sched[0]) ** (-sched[1])
        k, z = kern(x, p, xi, g, key, ht, hyper)
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
