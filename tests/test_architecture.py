"""The layout stays what ARCHITECTURE.md says (read from the source, nothing is imported or run):

* the library (``src/scalable_bayes``) imports no paper code and no Snakemake;
* the leaves (``rng``, ``intrinsics``) import nothing of the library; models and evaluation import
  neither the samplers nor a private module of ``inference``;
* each paper folder has its runs, claims and figures/tables modules and a README; a ``claims`` module
  neither plots nor writes files;
* the workflow's scripts are adapters: no function definitions, a few lines each.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "src" / "scalable_bayes"
PAPERS = ROOT / "src" / "scalable_bayes_papers"
SCRIPTS = ROOT / "workflow" / "scripts"
MAX_SCRIPT_LINES = 25  # code lines (no blank lines, comments or docstring) of a workflow script


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT / "src").with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path, text: str | None = None) -> set[str]:
    """Absolute names of every module ``path`` imports (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8") if text is None else text)
    mod = _module_name(path)
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            out.add(prefix)
            out |= {f"{prefix}.{a.name}" for a in node.names}
    return out


def _py_files(root: Path):
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def test_library_imports_no_paper_code_and_no_snakemake():
    bad = []
    files = _py_files(LIB)
    assert len(files) > 30, files
    for f in files:
        for name in _imports(f):
            if name.split(".")[0] in {"scalable_bayes_papers", "snakemake"}:
                bad.append(f"{f.relative_to(ROOT)} imports {name}")
    assert not bad, "the library must not import paper code or Snakemake:\n" + "\n".join(bad)


def test_the_import_walk_sees_relative_and_absolute_imports():
    """The walk above resolves both kinds of import (so the layering tests can fail)."""
    assert "scalable_bayes_papers.vmf.claims" in _imports(
        LIB / "special" / "probe.py", "from scalable_bayes_papers.vmf import claims\n")
    assert "scalable_bayes.samplers.rng" in _imports(LIB / "models" / "probe.py", "from ..samplers import rng\n")
    assert "scalable_bayes.inference.lda._rng" in _imports(LIB / "evaluation" / "probe.py",
                                                           "from ..inference.lda._rng import stream\n")


@pytest.mark.parametrize("leaf", ["rng", "intrinsics", "jitcache"])
def test_leaves_import_nothing_of_the_library(leaf):
    f = LIB / f"{leaf}.py"
    assert f.exists(), f"one home for the low-level {leaf} module: src/scalable_bayes/{leaf}.py"
    lib = {n for n in _imports(f) if n.startswith("scalable_bayes")}
    assert not lib, f"{leaf}.py must be a leaf; it imports {sorted(lib)}"


@pytest.mark.parametrize("layer", ["models", "evaluation", "special", "corpora", "manifolds", "distributions"])
def test_lower_layers_import_no_sampler_and_no_private_inference_module(layer):
    bad = []
    for f in _py_files(LIB / layer):
        for name in _imports(f):
            parts = name.split(".")
            if name.startswith("scalable_bayes.samplers"):
                bad.append(f"{f.relative_to(ROOT)} imports {name}")
            elif name.startswith("scalable_bayes.inference") and any(p.startswith("_") and p != "__init__"
                                                                      for p in parts[2:]):
                bad.append(f"{f.relative_to(ROOT)} imports {name}")
    assert not bad, "\n".join(bad)


SAMPLER_MODULES = ("euclidean", "geodesic", "simplex")


def test_the_sampler_interface_imports_no_sampler():
    """``samplers/base.py`` is the interface only: it imports (at any depth, lazily too) no sampler module, not
    the driver or its chunk loop and not the package that holds the registry; the samplers import it, not the
    other way round."""
    iface = LIB / "samplers" / "base.py"
    others = tuple(f"scalable_bayes.samplers.{m}" for m in SAMPLER_MODULES + ("driver", "_loop"))
    bad = {n for n in _imports(iface) if n == "scalable_bayes.samplers" or n.startswith(others)}
    assert not bad, f"the sampler interface imports {sorted(bad)}"
    for m in SAMPLER_MODULES:
        assert "scalable_bayes.samplers.base" in _imports(LIB / "samplers" / f"{m}.py"), m


def test_the_sampler_registry_lists_every_sampler_module():
    """The registry (``SAMPLERS`` in ``scalable_bayes.samplers``) imports each sampler module explicitly."""
    pkg = _imports(LIB / "samplers" / "__init__.py")
    assert all(f"scalable_bayes.samplers.{m}" in pkg for m in SAMPLER_MODULES)
    modules = {p.stem for p in (LIB / "samplers").glob("*.py")}
    assert modules == {"__init__", "base", "driver", "_loop", *SAMPLER_MODULES}, \
        "a new module in samplers/: a sampler module goes into SAMPLER_MODULES and the registry"


def _paper_dirs():
    return sorted(p for p in PAPERS.iterdir() if p.is_dir() and (p / "__init__.py").exists())


def test_every_paper_folder_has_runs_claims_figures_and_a_readme():
    papers = {p.name for p in _paper_dirs()}
    assert {"vmf", "sgnht", "esca"} <= papers, papers
    for p in _paper_dirs():
        if p.name == "data":
            continue
        have = {f.name for f in p.iterdir()}
        missing = {"runs.py", "claims.py", "README.md"} - have
        assert not missing, f"{p.relative_to(ROOT)} lacks {sorted(missing)}"
        assert have & {"figures.py", "tables.py"}, f"{p.relative_to(ROOT)} has neither figures.py nor tables.py"


WRITES = {"savefig", "to_parquet", "to_csv", "write_text", "write_bytes", "write_claim", "save_table", "open",
          "write_json_atomic", "write_text_atomic"}


@pytest.mark.parametrize("paper", [p.name for p in _paper_dirs()])
def test_claims_modules_are_pure(paper):
    f = PAPERS / paper / "claims.py"
    if not f.exists():
        pytest.skip(f"{paper} has no claims module")
    names = _imports(f)
    assert not {n for n in names if n.split(".")[0] == "matplotlib" or ".plotting" in n or n.endswith("figures")}, names
    calls = {n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", None)
             for n in ast.walk(ast.parse(f.read_text())) if isinstance(n, ast.Call)}
    assert not calls & WRITES, f"{f.relative_to(ROOT)} calls {sorted(calls & WRITES)}: a claim check does no I/O"


def _code_lines(path: Path) -> int:
    tree = ast.parse(path.read_text())
    doc = ast.get_docstring(tree)
    lines = [ln for ln in path.read_text().splitlines() if ln.strip() and not ln.strip().startswith("#")]
    return len(lines) - (len(doc.splitlines()) if doc else 0)


def test_workflow_scripts_are_adapters():
    scripts = sorted(SCRIPTS.glob("*.py"))
    assert len(scripts) > 10
    bad = []
    for s in scripts:
        tree = ast.parse(s.read_text())
        defs = [n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
        n = _code_lines(s)
        if defs or n > MAX_SCRIPT_LINES:
            bad.append(f"{s.name}: {n} code lines, definitions {defs}")
    assert not bad, ("workflow scripts read inputs, call one library or paper function and write outputs; "
                     "move logic into src/:\n" + "\n".join(bad))
