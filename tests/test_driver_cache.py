"""The compiled chunk loop's on-disk cache notices an edit of any module the kernels call."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

from scalable_bayes.samplers import _loop

HELPER = "from numba import njit\n\n\n@njit\ndef scale(x):\n    return {factor} * x\n"
MODEL = (
    "from numba import njit\n\nfrom .helpers import scale\n\n\n@njit\ndef grad(x, data, idx, key, out):\n"
    "    for i in range(x.shape[0]):\n        out[i] = scale(x[i])\n"
)


@pytest.fixture
def user_package(tmp_path, monkeypatch):
    """A package outside the library: a gradient in ``model`` calls a helper of ``helpers``."""
    pkg = tmp_path / "sb_cache_probe"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text(HELPER.format(factor="2.0"))
    (pkg / "model.py").write_text(MODEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("sb_cache_probe.model")
    yield pkg
    for name in [n for n in sys.modules if n == "sb_cache_probe" or n.startswith("sb_cache_probe.")]:
        del sys.modules[name]


def test_wrapper_changes_when_a_helper_module_of_the_gradient_is_edited(user_package):
    args = ("scalable_bayes.samplers.euclidean", "sgld_step", "sb_cache_probe.model", "grad")
    before = _loop._wrapper_source(*args)
    assert _loop._wrapper_source(*args) == before  # deterministic
    (user_package / "helpers.py").write_text(HELPER.format(factor="3.0"))
    assert _loop._wrapper_source(*args) != before, "an edited callee in another module must give a new wrapper"


def test_digest_covers_the_library_modules_the_kernels_call():
    import scalable_bayes.models.logistic  # noqa: F401  (the gradient's module must be loaded)

    lib = Path(_loop.__file__).resolve().parents[1]
    files = {f.resolve().relative_to(lib).as_posix()
             for f in _loop._dependency_files("scalable_bayes.samplers.euclidean", "scalable_bayes.models.logistic")
             if f.resolve().is_relative_to(lib)}
    # the kernels' modules, what they import (RNG, intrinsics, the Model type) and the packages above them
    assert {"samplers/euclidean.py", "models/logistic.py", "rng.py", "intrinsics.py", "models/base.py",
            "__init__.py", "models/__init__.py", "samplers/__init__.py"} <= files, files
    # installed third-party packages are not followed
    assert all("site-packages" not in str(f) for f in _loop._dependency_files("scalable_bayes.models.logistic"))


# ---- the cache key covers what Numba freezes into the loop: bytecode, closures, global values ----------

GRAD_PROBE = """\
import os, sys
import numpy as np
from numba import njit
from scalable_bayes.models.base import Model
from scalable_bayes.samplers import run_chain, sgld

MU = float({mu_source})


@njit
def grad(x, data, idx, key, out):
    for i in range(x.shape[0]):
        out[i] = x[i] - MU


def mean():
    r = run_chain(sgld(), Model("toy", dim=2, grad_kernel=grad, data=()), np.zeros(2), seed=0, n_steps=4000,
                  step_size=0.05, burnin=1000)
    return float(r.samples.mean())


print("MEAN", mean())
"""


def _run_probe(tmp_path, mu, *, stdin, env):
    import os
    import subprocess

    env = dict(os.environ, **env)
    if stdin:
        src = GRAD_PROBE.format(mu_source='os.environ["PROBE_MU"]')
        proc = subprocess.run([sys.executable, "-"], input=src, env=dict(env, PROBE_MU=str(mu)),
                              capture_output=True, text=True, timeout=600)
    else:
        script = tmp_path / "probe.py"
        script.write_text(GRAD_PROBE.format(mu_source="sys.argv[1]"))
        proc = subprocess.run([sys.executable, str(script), str(mu)], env=env, capture_output=True, text=True,
                              timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return float(proc.stdout.split("MEAN")[-1])


@pytest.mark.parametrize("stdin", [True, False], ids=["from-standard-input", "global-from-argv"])
def test_a_gradient_whose_global_changed_between_processes_is_not_answered_by_the_old_loop(tmp_path, stdin):
    """A gradient read from standard input (``__main__`` has no file, as in a notebook) or from a script
    whose global ``MU`` comes from ``sys.argv``: the source digest is the same in both processes, but the
    value Numba freezes into the loop is not, so the second process must sample around its own mean."""
    env = {"SCALABLE_BAYES_CACHE": str(tmp_path / "sb")}
    first = _run_probe(tmp_path, 0.0, stdin=stdin, env=env)
    second = _run_probe(tmp_path, 5.0, stdin=stdin, env=env)
    assert abs(first) < 0.5, first
    assert abs(second - 5.0) < 0.5, f"MU = 5 sampled around {second}: a stale compiled loop was reused"
    again = _run_probe(tmp_path, 5.0, stdin=stdin, env=env)
    assert again == second  # the same code and value: the cached loop, the same chain
    wrappers = sorted((tmp_path / "sb" / "chunk_runners").glob("sb_chunk_*.py"))
    assert len(wrappers) == 2, wrappers  # one per gradient value, reused for the repeat


def test_a_gradient_redefined_in_the_same_process_gets_its_own_loop(tmp_path, monkeypatch):
    from numba import njit

    from scalable_bayes.models.base import Model
    from scalable_bayes.samplers import run_chain, sgld

    monkeypatch.setenv("SCALABLE_BAYES_CACHE", str(tmp_path / "sb"))
    mod = type(sys)("sb_redefine_probe")  # a module without a file, like __main__ at a prompt
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    means = []
    for mu in (0.0, 5.0):
        mod.MU = mu
        exec("def grad(x, data, idx, key, out):\n    for i in range(x.shape[0]):\n        out[i] = x[i] - MU\n",
             mod.__dict__)
        mod.grad = njit(mod.grad)
        r = run_chain(sgld(), Model("toy", dim=2, grad_kernel=mod.grad, data=()), np.zeros(2), seed=0,
                      n_steps=4000, step_size=0.05, burnin=1000)
        means.append(float(r.samples.mean()))
    assert abs(means[0]) < 0.5 and abs(means[1] - 5.0) < 0.5, means


def test_fingerprint_follows_bytecode_closures_globals_and_callees():
    from numba import njit

    from scalable_bayes.jitcache import kernel_fingerprint

    def make(c, scale):
        @njit
        def helper(v):
            return scale * v

        @njit
        def grad(x, data, idx, key, out):
            for i in range(x.shape[0]):
                out[i] = helper(x[i]) - c

        return grad

    base = kernel_fingerprint(make(1.0, 2.0))
    assert base is not None and kernel_fingerprint(make(1.0, 2.0)) == base  # the same code and values
    assert kernel_fingerprint(make(1.5, 2.0)) != base  # a closure value
    assert kernel_fingerprint(make(1.0, 3.0)) != base  # a callee's closure value
    assert kernel_fingerprint(make(1.0, np.float64(2.0))) != base  # its type: another compiled loop
    arr = np.arange(3.0)

    @njit
    def reads_array(x, data, idx, key, out):
        out[0] = arr[0]

    first = kernel_fingerprint(reads_array)
    arr[0] = 7.0  # a global array is frozen into the machine code: its contents are part of the key
    assert kernel_fingerprint(reads_array) != first

    class Opaque:
        pass

    obj = Opaque()

    @njit
    def reads_opaque(x, data, idx, key, out):
        out[0] = obj.value

    assert kernel_fingerprint(reads_opaque) is None  # cannot be described: compiled in memory, never cached


def test_every_library_kernel_has_a_fingerprint():
    """All of the library's kernels stay cacheable (a None here would silently compile in memory)."""
    import importlib
    import pkgutil

    import scalable_bayes
    from scalable_bayes.jitcache import kernel_fingerprint

    missing, n = [], 0
    for info in pkgutil.walk_packages(scalable_bayes.__path__, "scalable_bayes."):
        if info.name.endswith("distributed"):  # needs mpi4py at import
            continue
        mod = importlib.import_module(info.name)
        for name, v in vars(mod).items():
            if hasattr(v, "py_func") and getattr(v, "__module__", None) == info.name:
                n += 1
                if kernel_fingerprint(v) is None:
                    missing.append(f"{info.name}.{name}")
    assert n > 100, n
    assert not missing, missing


# ---- Numba's own cache of the library's kernels follows edits of any library module -------------------

PROBE_A = "from numba import njit\n\nfrom ._probe_b import helper\n\n\n@njit(cache=True)\ndef f(x):\n    return helper(x)\n"
PROBE_B = "from numba import njit\n\n\n@njit\ndef helper(x):\n    return {k} * x\n"


def _library_copy_with_probes(tmp_path):
    """A copy of the library under ``tmp_path/src`` with the probe modules (``_probe_b``'s factor 2.0) and the
    environment that imports it (Numba's default cache place: beside the copy)."""
    import os
    import shutil

    lib = Path(_loop.__file__).resolve().parents[1]
    copy = tmp_path / "src" / "scalable_bayes"
    shutil.copytree(lib, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "_probe_a.py").write_text(PROBE_A)
    (copy / "_probe_b.py").write_text(PROBE_B.format(k="2.0"))
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["PYTHONPATH"] = str(tmp_path / "src")
    return copy, env


def test_a_cached_library_kernel_recompiles_when_a_module_it_calls_is_edited(tmp_path):
    """Numba's cache checks only the defining file; the library's locator stamps every cached kernel with
    the digest of the whole library, so editing the helper module (not the kernel's) recompiles."""
    import subprocess

    copy, env = _library_copy_with_probes(tmp_path)
    code = ("import scalable_bayes, scalable_bayes._probe_a as a; assert scalable_bayes.__file__.startswith(%r); "
            "print(a.f(1.0), sum(a.f.stats.cache_hits.values()))" % str(copy))

    def run():
        p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr[-3000:]
        value, hits = p.stdout.split()
        return float(value), int(hits)

    assert run()[0] == 2.0
    v, hits = run()
    assert v == 2.0 and hits == 1, hits  # the second process loads the kernel from the cache
    (copy / "_probe_b.py").write_text(PROBE_B.format(k="3.0"))
    assert run()[0] == 3.0, "a stale cached kernel: the edit of the module it calls was not seen"


def test_a_library_edited_after_import_does_not_stamp_the_old_code_as_new(tmp_path):
    """A process that imported the library, whose source is then edited before the process compiles a
    cached kernel, compiles the code it imported; that code must be stamped with the digest of the source it
    was imported from, not of the edited files, or every later process would load the old machine code as
    fresh. (The digest is taken once per process, when the first cached kernel is defined: at import.)"""
    import subprocess

    copy, env = _library_copy_with_probes(tmp_path)
    edit_then_call = (
        "import pathlib, scalable_bayes, scalable_bayes._probe_a as a; "
        f"pathlib.Path({str(copy / '_probe_b.py')!r}).write_text({PROBE_B.format(k='3.0')!r}); "
        "print(a.f(1.0))"
    )
    call = "import scalable_bayes._probe_a as a; print(a.f(1.0))"

    def run(code):
        p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr[-3000:]
        return float(p.stdout.split()[-1])

    assert run(edit_then_call) == 2.0  # the code the process imported
    assert run(call) == 3.0, "a later process loaded the old code stamped with the edited source's digest"


def test_the_library_kernels_use_the_library_locator():
    from scalable_bayes import rng
    from scalable_bayes.jitcache import library_locator_active
    from scalable_bayes.samplers import euclidean

    assert library_locator_active(euclidean.sgld_step) and library_locator_active(rng.uniform)


def test_clear_removes_the_chain_runner_wrappers(tmp_path, monkeypatch):
    from scalable_bayes import jitcache

    monkeypatch.setenv("SCALABLE_BAYES_CACHE", str(tmp_path))
    d = jitcache.cache_dir()
    d.mkdir(parents=True)
    (d / "sb_chunk_x.py").write_text("")
    monkeypatch.setattr(jitcache, "_LIBRARY_ROOT", tmp_path / "nolib")  # keep the real library's files
    assert d in jitcache.clear() and not d.exists()
