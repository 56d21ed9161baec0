"""The compiled chunk loop the driver (:mod:`~scalable_bayes.samplers.driver`) runs a chain in, and its
on-disk compile cache.

Private: the driver is its one caller. :func:`_run_chunk` is a jitted loop over many steps that receives the
sampler's step kernel and the model's gradient kernel as first-class functions; it returns to the driver
between chunks for progress, checkpoints, callbacks and divergence reports. :func:`_python_chunk` is its
twin for models with a NumPy gradient (a Python loop around the same step kernel, the same streams in the
same order, so both give identical chains).

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
from pathlib import Path

import numpy as np
from numba import njit

from ..dependencies import file_imports
from ..jitcache import cache_dir, kernel_fingerprint
from ..rng import partial_shuffle
from ..utils import atomic_path

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


_WRAPPER_HEAD = """# generated by scalable_bayes.samplers._loop.chunk_runner from _run_chunk; safe to delete
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
