"""The compiled chunk loop's on-disk cache notices an edit of any module the kernels call."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from scalable_bayes.samplers import driver

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
    args = ("scalable_bayes.samplers.kernels", "sgld_step", "sb_cache_probe.model", "grad")
    before = driver._wrapper_source(*args)
    assert driver._wrapper_source(*args) == before  # deterministic
    (user_package / "helpers.py").write_text(HELPER.format(factor="3.0"))
    assert driver._wrapper_source(*args) != before, "an edited callee in another module must give a new wrapper"


def test_digest_covers_the_library_modules_the_kernels_call():
    import scalable_bayes.models.logistic  # noqa: F401  (the gradient's module must be loaded)

    lib = Path(driver.__file__).resolve().parents[1]
    files = {f.resolve().relative_to(lib).as_posix()
             for f in driver._dependency_files("scalable_bayes.samplers.kernels", "scalable_bayes.models.logistic")
             if f.resolve().is_relative_to(lib)}
    # the kernels' modules, what they import (RNG, intrinsics, the Model type) and the packages above them
    assert {"samplers/kernels.py", "models/logistic.py", "rng.py", "intrinsics.py", "models/base.py",
            "__init__.py", "models/__init__.py", "samplers/__init__.py"} <= files, files
    # installed third-party packages are not followed
    assert all("site-packages" not in str(f) for f in driver._dependency_files("scalable_bayes.models.logistic"))
