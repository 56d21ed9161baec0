"""A light install: ``pip install scalable_bayes`` pulls only the core (numpy, scipy, numba, scikit-learn,
threadpoolctl, tqdm); the pipeline, MPI and the peers are extras, and a module that needs one says which.

The static test reads every library module's imports; the slow test builds the wheel, installs it with
the core dependencies only (versions pinned by requirements.lock) into a clean virtual environment and
imports every core module there."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from scalable_bayes._optional import EXTRAS, require

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "src" / "scalable_bayes"

CORE = {"numpy", "scipy", "numba", "llvmlite", "sklearn", "threadpoolctl", "tqdm"}
# packages / modules that serve the pipeline and open with require(...) of their extras
GUARDED = {"corpora": {"pandas", "pyarrow"}, "plotting": {"matplotlib"}, "reporting.py": {"pandas"}}


def _module_name(path: Path) -> str:
    rel = path.relative_to(LIB.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _third_party_imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n not in {"scalable_bayes", "__future__"}}


def _allowed_extras(path: Path) -> set[str]:
    rel = path.relative_to(LIB).parts
    return GUARDED.get(rel[0], set())


def test_pyproject_core_is_what_the_library_imports():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = {d.split(">")[0].split("=")[0].split("<")[0].strip().lower() for d in meta["dependencies"]}
    assert core == {"numpy", "scipy", "numba", "scikit-learn", "threadpoolctl", "tqdm"}, core
    extras = meta["optional-dependencies"]
    assert {"pipeline", "mpi", "peers", "all"} <= set(extras)
    declared = {d.split(">")[0].split("=")[0].split("<")[0].strip().lower() for ds in extras.values() for d in ds}
    for top, (dist, extra) in EXTRAS.items():
        assert dist in declared, f"{dist} (for {top}) is not in any extra"
        assert any(d.lower().startswith(dist) for d in extras[extra]), f"{dist} is not in the [{extra}] extra"


def test_every_library_module_imports_only_the_core_or_requires_its_extra():
    """A plain ``import pandas`` outside the guarded pipeline modules would fail a core install with a bare
    ModuleNotFoundError; such modules import extras through ``_optional.require``, which names the extra."""
    bad = []
    for f in sorted(LIB.rglob("*.py")):
        for name in _third_party_imports(f) - CORE - _allowed_extras(f):
            bad.append(f"{f.relative_to(ROOT)} imports {name}: import it with _optional.require(...) "
                       "or add it to the core dependencies")
    assert not bad, "\n".join(bad)


def test_require_names_the_extra():
    with pytest.raises(ImportError, match=r"pip install 'scalable_bayes\[pipeline\]'"):
        EXTRAS["not_installed_pkg"] = ("not-installed-pkg", "pipeline")
        try:
            require("not_installed_pkg", "this feature")
        finally:
            del EXTRAS["not_installed_pkg"]
    assert require("pandas", "x").__name__ == "pandas"


CORE_MODULES_SCRIPT = r"""
import importlib, pkgutil, sys
import scalable_bayes
skip = ("scalable_bayes.corpora", "scalable_bayes.plotting", "scalable_bayes.reporting",
        "scalable_bayes.inference.lda.distributed")
done = []
for m in pkgutil.walk_packages(scalable_bayes.__path__, "scalable_bayes."):
    if m.name.startswith(skip):
        continue
    importlib.import_module(m.name)
    done.append(m.name)
for name in ("pandas", "matplotlib", "snakemake", "arviz", "yaml", "pyarrow", "mpi4py", "tomotopy"):
    assert name not in sys.modules, f"{name} was imported by a core module"
for guarded, extra in (("scalable_bayes.corpora", "pipeline"), ("scalable_bayes.plotting", "pipeline"),
                       ("scalable_bayes.reporting", "pipeline")):
    try:
        importlib.import_module(guarded)
    except ImportError as exc:
        assert f"scalable_bayes[{extra}]" in str(exc), str(exc)
    else:
        raise AssertionError(f"{guarded} imported without its extra")
import numpy as np
from scalable_bayes.distributions import VonMisesFisher
x = VonMisesFisher(np.eye(5)[0], 10.0).rvs(3, random_state=0)
assert x.shape == (3, 5)
print(len(done), "core modules imported")
"""


@pytest.mark.slow
def test_the_wheel_installs_with_the_core_only_into_a_clean_venv(tmp_path):
    """Build the wheel, install it with its declared core dependencies (pinned to requirements.lock) into a
    fresh venv, import every core module there and report the installed size."""
    py = sys.executable
    wheels, src = tmp_path / "wheels", tmp_path / "src_copy"
    # build from a copy: setuptools writes build/ and *.egg-info beside the sources it builds
    shutil.copytree(ROOT / "src", src / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    subprocess.run([py, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(src)],
                   check=True, capture_output=True, text=True)
    (wheel,) = wheels.glob("scalable_bayes-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([py, "-m", "venv", str(venv)], check=True)
    vpy = venv / "bin" / "python"
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("PYTHONPATH", None)
    res = subprocess.run([str(vpy), "-m", "pip", "install", "-q", "-c", str(ROOT / "requirements.lock"), str(wheel)],
                         capture_output=True, text=True, env=env)
    if res.returncode != 0 and ("No matching distribution" in res.stderr or "connection" in res.stderr.lower()):
        pytest.skip(f"no package index reachable for the clean install: {res.stderr[-300:]}")
    assert res.returncode == 0, res.stderr[-2000:]
    freeze = subprocess.run([str(vpy), "-m", "pip", "freeze"], capture_output=True, text=True, check=True).stdout
    installed = {line.split("==")[0].lower() for line in freeze.splitlines() if "==" in line}
    assert not installed & {"pandas", "matplotlib", "snakemake", "arviz", "pyarrow", "pyyaml", "jsonschema",
                            "mpi4py", "tomotopy"}, installed
    out = subprocess.run([str(vpy), "-c", CORE_MODULES_SCRIPT], capture_output=True, text=True, env=env,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    site = subprocess.run([str(vpy), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    size = sum(p.stat().st_size for p in Path(site).rglob("*") if p.is_file())
    print(f"clean install: {len(installed)} packages, {size / 2**20:.0f} MiB; {out.stdout.strip()}")
    assert len(installed) <= 12, sorted(installed)
