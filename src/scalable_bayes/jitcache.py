"""Compiled code that is never stale: what the on-disk caches of Numba and of the chain runner key on.

Two caches hold machine code between processes:

* **Numba's own cache** (``@njit(cache=True)``) of the library's kernels, in ``__pycache__`` beside each
  module (or under ``NUMBA_CACHE_DIR``). Numba checks only the source of the file that defines a cached
  function; a kernel that calls a helper of another module (the RNG, a manifold map, an intrinsic) would
  keep the helper's old code after the helper is edited. :func:`install_library_locator` (run when
  :mod:`scalable_bayes` is imported, before any kernel is defined) makes the freshness stamp of every
  cached function of the library the digest of the whole library's source (:func:`library_digest`), so
  any edit of the library recompiles every cached kernel of it once.
* **The chain runner's cache** (:func:`scalable_bayes.samplers._loop.chunk_runner`): small wrapper
  modules in :func:`cache_dir` that bind a step kernel and a gradient kernel and are compiled with
  ``cache=True``. Their file name and source carry :func:`kernel_fingerprint` of the kernels -- their
  bytecode, constants, closure cells, default arguments, the values of the globals they read (Numba
  freezes global values into the machine code), recursively through every function or kernel they
  call -- and a digest of the source of the modules they import. A gradient written at a prompt
  (``__main__`` without a file), a gradient whose global is read from ``sys.argv``, or a gradient
  redefined in the same process therefore gets its own wrapper. Kernels that read an object the
  fingerprint cannot describe (anything but numbers, strings, arrays, tuples, modules, functions,
  kernels and the types and functions of installed packages) are compiled in memory, never cached.

What the fingerprint cannot see: a kernel of *yours* declared ``@njit(cache=True)`` is loaded from
Numba's own cache by Numba's rules (its file's content only); the chain runner then links that code.
Do not use ``cache=True`` on kernels that read globals set at run time or call helpers of other modules
you edit, or clear the cache after such edits.

Where the caches live and how to clear them: the chain runner's wrappers under
``$SCALABLE_BAYES_CACHE/chunk_runners`` (default ``~/.cache/scalable_bayes/chunk_runners``); Numba's
files of the library in ``src/scalable_bayes/**/__pycache__/*.nbi|*.nbc`` (or under
``$NUMBA_CACHE_DIR``). ``python -m scalable_bayes cache --clear`` deletes both (:func:`clear`); a
stale entry is never used, so clearing only frees disk space or rules out a fault.
"""

from __future__ import annotations

import argparse
import dis
import functools
import hashlib
import logging
import os
import shutil
import sys
import sysconfig
import types
from pathlib import Path

import numpy as np

logger = logging.getLogger(__name__)

_LIBRARY_ROOT = Path(__file__).resolve().parent


def cache_dir() -> Path:
    """The chain runner's cache directory: ``$SCALABLE_BAYES_CACHE/chunk_runners`` (default
    ``~/.cache/scalable_bayes/chunk_runners``)."""
    d = os.environ.get("SCALABLE_BAYES_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "scalable_bayes")
    return Path(d) / "chunk_runners"


@functools.lru_cache(maxsize=1)
def library_digest() -> str:
    """SHA-1 of the source of every module of :mod:`scalable_bayes` (paths relative to the package),
    with the Numba and llvmlite versions: the freshness stamp of the library's cached kernels."""
    import llvmlite
    import numba

    h = hashlib.sha1(f"numba {numba.__version__} llvmlite {llvmlite.__version__}".encode())
    for f in sorted(_LIBRARY_ROOT.rglob("*.py")):
        if "__pycache__" in f.parts:
            continue
        h.update(f.relative_to(_LIBRARY_ROOT).as_posix().encode() + b"\0")
        h.update(f.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def _in_library(path) -> bool:
    try:
        return Path(path).resolve().is_relative_to(_LIBRARY_ROOT)
    except (OSError, ValueError):
        return False


def _make_locator_class():
    """A Numba cache locator for the library's files: the path of the standard locator that Numba would
    pick, the stamp :func:`library_digest` (instead of the defining file's own content)."""
    from numba.core import caching

    base = caching._CacheLocator

    class LibraryCacheLocator(base):
        """Numba cache locator of :mod:`scalable_bayes`: a cached kernel of the library is fresh only
        while no module of the library changed (see :mod:`scalable_bayes.jitcache`)."""

        def __init__(self, inner):
            self._inner = inner

        def ensure_cache_path(self):
            return self._inner.ensure_cache_path()

        def get_cache_path(self):
            return self._inner.get_cache_path()

        def get_source_stamp(self):
            return ("scalable_bayes", library_digest())

        def get_disambiguator(self):
            return self._inner.get_disambiguator()

        @classmethod
        def from_function(cls, py_func, py_file):
            if not _in_library(py_file):
                return None
            for other in _standard_locators():
                inner = other.from_function(py_func, py_file)
                if inner is not None:
                    return cls(inner)
            return None

    return LibraryCacheLocator


def _impl_class():
    from numba.core import caching

    for name in ("CacheImpl", "_CacheImpl"):
        impl = getattr(caching, name, None)
        if impl is not None and isinstance(getattr(impl, "_locator_classes", None), list):
            return impl
    return None


def _standard_locators():
    impl = _impl_class()
    return [c for c in impl._locator_classes if not getattr(c, "_scalable_bayes", False)]


@functools.lru_cache(maxsize=1)
def install_library_locator() -> bool:
    """Put the library's cache locator first in Numba's list (once per process). Returns False, with a
    warning, when this Numba has no such list (the library's cached kernels then follow Numba's own
    per-file rule, which misses edits of other modules)."""
    impl = _impl_class()
    if impl is None:
        logger.warning("this Numba has no cache-locator list; cached kernels of scalable_bayes are only "
                       "re-compiled when their own file changes (clear them after edits: "
                       "python -m scalable_bayes cache --clear)")
        return False
    cls = _make_locator_class()
    cls._scalable_bayes = True
    impl._locator_classes.insert(0, cls)
    return True


def library_locator_active(dispatcher) -> bool:
    """Whether the Numba cache of ``dispatcher`` (a ``cache=True`` kernel of the library) is stamped by
    :func:`library_digest`."""
    cache = getattr(dispatcher, "_cache", None)
    impl = getattr(cache, "_impl", None)
    loc = getattr(impl, "locator", None)
    return bool(getattr(type(loc), "_scalable_bayes", False))


# --------------------------------------------------------------------------------------------------
# fingerprints of kernels


@functools.lru_cache(maxsize=1)
def _installed_dirs() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    dirs = {os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    return tuple(d.rstrip(os.sep) + os.sep for d in sorted(dirs))


def _is_installed_module(name) -> bool:
    """True for modules of the Python installation (standard library, site-packages, built-ins), whose
    code changes only with their version; False for :mod:`scalable_bayes` and the user's code."""
    if not isinstance(name, str) or not name:
        return False
    root = name.split(".")[0]
    if root == "scalable_bayes" or name == "__main__":
        return False
    if root in sys.builtin_module_names or root == "builtins":
        return True
    mod = sys.modules.get(name) or sys.modules.get(root)
    f = getattr(mod, "__file__", None)
    if not f:
        return False
    return os.path.realpath(f).startswith(_installed_dirs())


class Unfingerprintable(Exception):
    """A kernel reads an object whose value the fingerprint cannot describe."""


_MISSING = object()
_LOAD_GLOBAL = {"LOAD_GLOBAL", "LOAD_NAME"}
_LOAD_ATTR = {"LOAD_ATTR", "LOAD_METHOD"}


class _Fingerprint:
    def __init__(self):
        self.h = hashlib.sha1(sys.version.encode())
        self.seen: dict[int, int] = {}
        self.keep: list = []  # keeps ids stable while hashing

    def put(self, *parts):
        for p in parts:
            self.h.update(p if isinstance(p, bytes) else str(p).encode())
            self.h.update(b"\x1f")

    def value(self, v, where):
        t = type(v)
        if v is None or t in (bool, int, float, complex, str, bytes):
            self.put("lit", t.__name__, repr(v))
        elif isinstance(v, np.ndarray):
            self.put("nd", v.dtype.str, v.shape, np.ascontiguousarray(v).tobytes())
        elif isinstance(v, np.generic):
            self.put("np", v.dtype.str, v.tobytes())
        elif isinstance(v, (tuple, list)):
            self.put("seq", t.__name__, len(v))
            for e in v:
                self.value(e, where)
        elif isinstance(v, types.ModuleType):
            self.put("mod", v.__name__)
        elif isinstance(getattr(v, "py_func", None), types.FunctionType):  # a Numba dispatcher
            self.put("jit", repr(sorted((k, repr(o)) for k, o in getattr(v, "targetoptions", {}).items())))
            self.function(v.py_func)
        elif isinstance(v, types.FunctionType):
            self.function(v)
        elif isinstance(getattr(v, "_defn", None), types.FunctionType):  # a Numba @intrinsic
            self.put("intrinsic")
            self.function(v._defn)
        elif isinstance(v, (types.BuiltinFunctionType, np.ufunc, np.dtype)):
            self.put("builtin", getattr(v, "__module__", ""), getattr(v, "__qualname__", None) or repr(v))
        elif isinstance(v, type) and _is_installed_module(v.__module__):
            self.put("type", v.__module__, v.__qualname__)
        elif _is_installed_module(type(v).__module__) and " at 0x" not in repr(v):
            self.put("obj", type(v).__module__, type(v).__qualname__, repr(v))
        else:
            raise Unfingerprintable(f"{where} reads {type(v).__module__}.{type(v).__qualname__} object {v!r:.60}")

    def function(self, f: types.FunctionType):
        mod = getattr(f, "__module__", None)
        if _is_installed_module(mod):
            self.put("fn", mod, f.__qualname__)
            return
        if id(f) in self.seen:
            self.put("ref", self.seen[id(f)])
            return
        self.seen[id(f)] = len(self.seen)
        self.keep.append(f)
        where = f"{mod}.{f.__qualname__}"
        self.put("def", where)
        self.code(f.__code__, f.__globals__, where)
        for name, cell in zip(f.__code__.co_freevars, f.__closure__ or ()):
            try:
                content = cell.cell_contents
            except ValueError:
                self.put("cell", name, "empty")
                continue
            self.put("cell", name)
            self.value(content, where)
        self.value(f.__defaults__, where)
        self.value(tuple(sorted((f.__kwdefaults__ or {}).items())), where)

    def code(self, co: types.CodeType, globs: dict, where: str):
        self.put("code", co.co_argcount, co.co_kwonlyargcount, co.co_flags, co.co_code, co.co_names,
                 co.co_varnames, co.co_freevars, co.co_cellvars)
        for c in co.co_consts:
            if isinstance(c, types.CodeType):
                self.code(c, globs, where)
            else:
                self.value(c, where)
        builtins = globs.get("__builtins__", {})
        if isinstance(builtins, types.ModuleType):
            builtins = vars(builtins)
        cur = None
        for ins in dis.get_instructions(co):
            if ins.opname in _LOAD_GLOBAL:
                name = ins.argval
                v = globs.get(name, _MISSING)
                if v is _MISSING:
                    v = builtins.get(name, _MISSING)
                if v is _MISSING:
                    self.put("global", name, "missing")
                    cur = None
                    continue
                self.put("global", name)
                self.value(v, where)
                cur = v if isinstance(v, types.ModuleType) else None
            elif ins.opname in _LOAD_ATTR and cur is not None:
                v = getattr(cur, ins.argval, _MISSING)
                if v is _MISSING:
                    self.put("attr", ins.argval, "missing")
                    cur = None
                    continue
                self.put("attr", ins.argval)
                if not _is_installed_module(cur.__name__):
                    self.value(v, where)
                cur = v if isinstance(v, types.ModuleType) else None
            elif ins.opname != "CACHE":
                cur = None


def kernel_fingerprint(*kernels) -> str | None:
    """Digest of everything Numba compiles into ``kernels`` (dispatchers or functions), or None when a
    kernel reads an object the digest cannot describe (then its compiled code must not be cached).

    Covered, recursively through every function and kernel they call: bytecode, names, constants
    (nested code included), closure cells, default arguments, and the values of the globals they read
    (Numba freezes them into the machine code), also ``module.NAME`` of the user's modules. Functions and
    objects of installed packages (numpy, numba, the standard library) enter by name: their code changes
    only with their version. The Python version is hashed (bytecode depends on it).
    """
    fp = _Fingerprint()
    try:
        for k in kernels:
            fp.value(k, "kernel")
    except Unfingerprintable as err:
        logger.debug("not cacheable: %s", err)
        return None
    return fp.h.hexdigest()[:20]


# --------------------------------------------------------------------------------------------------


def clear() -> list[Path]:
    """Delete the chain runner's wrappers (:func:`cache_dir`) and Numba's cache files of the library;
    returns what was removed. The next run compiles afresh."""
    removed = []
    d = cache_dir()
    if d.exists():
        shutil.rmtree(d)
        removed.append(d)
    dirs = [f.parent / "__pycache__" for f in _LIBRARY_ROOT.rglob("*.py") if "__pycache__" not in f.parts]
    numba_dir = os.environ.get("NUMBA_CACHE_DIR")
    if numba_dir:  # Numba's per-directory subfolders there, for the library's directories only
        from numba.core.caching import _CacheLocator

        dirs += [Path(numba_dir) / _CacheLocator.get_suitable_cache_subpath(str(f))
                 for f in _LIBRARY_ROOT.rglob("*.py") if "__pycache__" not in f.parts]
    for d in sorted(set(dirs)):
        for pattern in ("*.nbi", "*.nbc"):
            for f in d.glob(pattern):
                f.unlink(missing_ok=True)
                removed.append(f)
    return removed


def main(argv=None) -> int:
    """``python -m scalable_bayes cache [--clear]``: report where the compiled code is cached (through
    :mod:`logging`, at INFO); ``--clear`` deletes it."""
    p = argparse.ArgumentParser(prog="python -m scalable_bayes cache",
                                description="Where the library's compiled code is cached; --clear deletes it.")
    p.add_argument("--clear", action="store_true", help="delete the cached compiled code")
    a = p.parse_args(argv)
    logger.info("chain-runner wrappers: %s", cache_dir())
    logger.info("library kernels (Numba): %s", os.environ.get("NUMBA_CACHE_DIR") or _LIBRARY_ROOT / "**/__pycache__")
    logger.info("library digest: %s", library_digest())
    if a.clear:
        logger.info("removed %d cache entries", len(clear()))
    return 0
