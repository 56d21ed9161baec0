"""Small shared utilities: atomic file output, tables, logging set-up, available memory, thread counts and
the block-parallel loop of the compiled kernels."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import numpy as np

logger = logging.getLogger(__name__)


def current_umask() -> int:
    """The process's file-mode creation mask (read without changing it where /proc allows)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0)  # elsewhere: set and restore at once
    os.umask(mask)
    return mask


def chmod_as_created(path: str | os.PathLike) -> None:
    """Give ``path`` the mode a plain ``open()`` / ``mkdir()`` would have given it under the umask.

    ``tempfile.mkstemp`` / ``mkdtemp`` create 0600 / 0700 whatever the umask; files renamed into place
    from them would stay private to their owner, which on a cluster's shared project directory keeps
    colleagues from reading corpora and results.
    """
    base = 0o777 if Path(path).is_dir() else 0o666
    os.chmod(path, base & ~current_umask())


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` only on success.

    Nothing half-written is ever left at ``path``: if the body raises, the temporary file is
    removed and ``path`` keeps whatever it held before (usually nothing). The file gets the
    permissions the umask gives (not ``mkstemp``'s 0600).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    suffix = suffix if suffix is not None else "".join(path.suffixes)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=f".part{suffix}", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        if tmp_path.exists():
            chmod_as_created(tmp_path)
        os.replace(tmp_path, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp_path.unlink()
        raise


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json_atomic(path: str | os.PathLike, obj: Any) -> None:
    write_text_atomic(path, json.dumps(obj, indent=2, sort_keys=True, default=_json_default) + "\n")


def _json_default(o: Any) -> Any:
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.bool_):
        return bool(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"cannot serialise {type(o).__name__} to JSON")


def save_table(df, path: str | os.PathLike) -> None:
    """Write a pandas DataFrame atomically; format from the extension (.csv, .parquet, .md)."""
    path = Path(path)
    ext = path.suffix
    with atomic_path(path) as tmp:
        if ext == ".csv":
            df.to_csv(tmp, index=False, float_format="%.10g", lineterminator="\n")
        elif ext == ".parquet":
            df.to_parquet(tmp, index=False)
        elif ext == ".md":
            tmp.write_text(dataframe_to_markdown(df), encoding="utf-8")
        else:
            raise ValueError(f"save_table: unsupported extension {ext!r} for {path}; use .csv, .parquet or .md")


def dataframe_to_markdown(df, floatfmt: str = ".4g") -> str:
    """Render a DataFrame as a GitHub markdown table without the optional 'tabulate' dependency."""
    def fmt(v: Any) -> str:
        if v is None or v is pd.NA:
            return ""
        if isinstance(v, (float, np.floating)):
            if np.isnan(v):
                return ""
            return format(float(v), floatfmt)
        return str(v).replace("|", "\\|").replace("\n", " ")

    from ._optional import require

    pd = require("pandas", "dataframe_to_markdown")
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(fmt(v) for v in row) + " |")
    return "\n".join(lines) + "\n"


def setup_logging(log_path: str | os.PathLike | None = None, level: int = logging.INFO) -> None:
    """Route the library's logging (and warnings) to ``log_path`` (a rule's log) and stderr."""
    handlers: list[logging.Handler] = [logging.StreamHandler()]
    if log_path is not None:
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_path, mode="w", encoding="utf-8"))
    logging.basicConfig(
        level=level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=handlers,
        force=True,
    )
    logging.captureWarnings(True)


@contextlib.contextmanager
def numba_threads(n: int | None):
    """Run the enclosed kernels with ``n`` Numba threads (None: leave the current setting); yields the
    number in effect (``n`` capped at ``NUMBA_NUM_THREADS``). A negative ``n`` counts as scikit-learn's
    ``n_jobs``: -1 all of ``NUMBA_NUM_THREADS``, -2 all but one, ... (at least one)."""
    import numba

    if n is None:
        yield numba.get_num_threads()
        return
    old = numba.get_num_threads()
    n = int(n)
    if n < 0:
        n = max(1, numba.config.NUMBA_NUM_THREADS + 1 + n)
    n = min(n, numba.config.NUMBA_NUM_THREADS)
    numba.set_num_threads(n)
    try:
        yield n
    finally:
        numba.set_num_threads(old)


#: Numba's parallel pipeline with every parallel transformation off, for ``@njit(parallel=NO_PARFORS)``: the
#: function stays sequential (no parfor, no thread launch), but compiled through that pipeline the branchy
#: inner loops of the LDA kernels run faster than through the plain one (ESCA's word sweep on 20 Newsgroups at
#: K = 100, one thread: 106-110 against 134-158 ms, as fast as its former ``prange`` kernel). Why is not
#: isolated: not the noalias flag or the error model that pipeline gives a parfor's body, not its phi
#: simplification, each tried alone. It compiles in 4.7 s where the ``prange`` kernel took 7.9 s.
NO_PARFORS = {"prange": False, "numpy": False, "stencil": False, "setitem": False, "reduction": False,
              "comprehension": False, "fusion": False, "inplace_binop": False}


def quiet_no_parfors_warning() -> None:
    """Silence the warning Numba gives at the compilation of every ``parallel=NO_PARFORS`` function (that no
    parallel transformation was possible: true, and intended), for the library's own functions only (the
    message names the function's file); a user's ``parallel=True`` function still gets it. Called by the
    modules that compile with :data:`NO_PARFORS`."""
    import warnings

    from numba.core.errors import NumbaPerformanceWarning

    warnings.filterwarnings("ignore", category=NumbaPerformanceWarning,
                            message=r"(?s)\s*The keyword argument 'parallel=True' was specified but no transformation"
                                    r".*scalable_bayes[/\\]")


_POOL = None
_POOL_LOCK = threading.Lock()


def _reset_pool_after_fork():
    global _POOL
    _POOL = None  # the parent's worker threads do not exist in a forked child


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_pool_after_fork)


def _thread_pool():
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            import numba
            from concurrent.futures import ThreadPoolExecutor

            _POOL = ThreadPoolExecutor(max_workers=max(1, numba.config.NUMBA_NUM_THREADS - 1),
                                       thread_name_prefix="scalable_bayes")
        return _POOL


def parallel_blocks(kernel, n: int, *args) -> None:
    """Call ``kernel(lo, hi, *args)`` on contiguous blocks [lo, hi) that split ``range(n)``, one block per
    thread, side by side: the calling thread runs the first block, a shared pool the others.

    The thread count is Numba's (``numba.get_num_threads()``, so :func:`numba_threads` sets it), capped at
    ``n``; block i is ``[n i // t, n (i + 1) // t)``. ``kernel`` is a Numba function compiled with
    ``nogil=True`` that loops over its block; a kernel whose results must not depend on the thread count
    must not depend on the block bounds either (the LDA kernels key every document's draws by the document).

    This replaces ``prange`` kernels where compilation is what a user waits for: a ``prange`` kernel compiles
    two to three times as long as the same loop in a plain function (Numba's parfor passes and its gufunc
    wrapper: 7.9 s against 2.8 s for ESCA's word sweep, 2.4 s against 0.8 s for its tables). Exceptions of
    any block are raised here, after every block has ended (no block is left writing into the caller's
    arrays).
    """
    import numba

    n = int(n)
    nt = min(numba.get_num_threads(), n)
    if nt <= 1:
        if n > 0:
            kernel(0, n, *args)
        return
    bounds = [n * i // nt for i in range(nt + 1)]
    futures = [_thread_pool().submit(kernel, bounds[i], bounds[i + 1], *args) for i in range(1, nt)]
    error = None
    try:
        kernel(bounds[0], bounds[1], *args)
    except BaseException as exc:  # wait for the other blocks before raising
        error = exc
    for f in futures:
        try:
            f.result()
        except BaseException as exc:
            error = error or exc
    if error is not None:
        raise error


@contextlib.contextmanager
def blas_thread_limit(n: int | None = 1):
    """Run the enclosed code with at most ``n`` BLAS threads (threadpoolctl; None: leave the setting alone).

    The library's iterative methods make many small BLAS and LAPACK calls (K x K solves, minibatch products):
    with more threads OpenBLAS's idle workers spin between the calls and take the cores that Numba's threads,
    parallel chains or other processes need (a 2-thread SAM iteration measured 57-65 ms with OpenBLAS's
    default threads, 24 ms with one). The limit is process-wide: set it around a whole fit or a whole set of
    chains, not inside threads that run side by side.
    """
    if n is None:
        yield
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=int(n), user_api="blas"):
        yield


class CompileClock:
    """Seconds spent compiling Numba code or loading it from the cache while active (Numba's
    ``numba:compiler_lock`` events, outermost only): ``seconds`` (wall clock) and ``cpu_seconds`` (process
    CPU time), readable at any time. Use :func:`compile_clock`.

    Events of every thread count: a thread that waits for another one's compilation waits on the same lock.
    """

    def __init__(self):
        from numba.core import event

        class _Listener(event.Listener):
            def __init__(self, clock):
                self.clock = clock

            def on_start(self, ev):
                c = self.clock
                if c._depth == 0:
                    c._t0, c._c0 = time.perf_counter(), time.process_time()
                c._depth += 1

            def on_end(self, ev):
                c = self.clock
                c._depth -= 1
                if c._depth == 0:
                    c._wall += time.perf_counter() - c._t0
                    c._cpu += time.process_time() - c._c0

        self._depth = 0
        self._wall = self._cpu = self._t0 = self._c0 = 0.0
        self.listener = _Listener(self)

    @property
    def seconds(self) -> float:
        if self._depth:  # inside a compilation now
            return self._wall + time.perf_counter() - self._t0
        return self._wall

    @property
    def cpu_seconds(self) -> float:
        if self._depth:
            return self._cpu + time.process_time() - self._c0
        return self._cpu

    def timed(self, fn, *args):
        """``(fn(*args), wall, cpu, compile)``: the call's wall-clock and process CPU seconds with its
        compilation (or loading of compiled code) taken out, and the wall seconds that took."""
        k0, kc0, t0, c0 = self.seconds, self.cpu_seconds, time.perf_counter(), time.process_time()
        out = fn(*args)
        dk = self.seconds - k0
        return out, time.perf_counter() - t0 - dk, time.process_time() - c0 - (self.cpu_seconds - kc0), dk


@contextlib.contextmanager
def compile_clock():
    """A :class:`CompileClock` running while the block runs: estimators and the chain driver subtract its
    seconds from their wall times (``fit_time_``, ``ChainResult.wall_time``) and report them apart
    (``compile_time_``, ``ChainResult.compile_time``)."""
    from numba.core import event

    clock = CompileClock()
    with event.install_listener("numba:compiler_lock", clock.listener):
        yield clock


def available_memory_bytes() -> int | None:
    """Bytes this process can still allocate without swapping, as far as the system says: Linux's
    ``MemAvailable`` (free memory plus reclaimable caches), lowered to what is left under the
    process's cgroup (v2 ``memory.max - memory.current``, v1 ``memory.limit_in_bytes -
    memory.usage_in_bytes``; a Slurm job's allocation) when that is smaller. None where neither can
    be read (not Linux)."""
    avail = None
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError):
        pass
    own = ""  # the process's cgroup v2 path ("0::/path" in /proc/self/cgroup)
    try:
        own = next((ln.split("::", 1)[1].strip() for ln in Path("/proc/self/cgroup").read_text().splitlines()
                    if ln.startswith("0::")), "")
    except OSError:
        pass
    root = Path("/sys/fs/cgroup")
    v2 = [root / own.lstrip("/"), root] if own.strip("/") else [root]
    pairs = [(d / "memory.max", d / "memory.current") for d in v2]
    pairs.append((root / "memory/memory.limit_in_bytes", root / "memory/memory.usage_in_bytes"))
    for limit_file, usage_file in pairs:
        try:
            limit = limit_file.read_text().strip()
            usage = int(usage_file.read_text().strip())
        except (OSError, ValueError):
            continue
        if limit.isdigit() and int(limit) < 2**60:  # "max" or a huge number: no limit
            left = max(0, int(limit) - usage)
            avail = left if avail is None else min(avail, left)
        break
    return avail
