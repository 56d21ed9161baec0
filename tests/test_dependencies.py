"""scalable_bayes.dependencies: the static closure of a script's imports (what a pipeline job depends on)."""

from __future__ import annotations

import ast
from pathlib import Path

from scalable_bayes.dependencies import ImportGraph, file_imports, imported_names, source_closure

SRC = Path(__file__).resolve().parents[1] / "src"


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def test_closure_follows_relative_nested_and_parent_imports(tmp_path):
    _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a/__init__.py": "from .b import f  # the package's __init__ runs on any import of pkg.a.x\n",
        "pkg/a/b.py": "import numpy as np\n\ndef f():\n    from ..c import g\n    return g()\n",
        "pkg/a/words.txt": "data read by the package\n",
        "pkg/a/README.md": "documentation\n",
        "pkg/a/unused.py": "",
        "pkg/c.py": "from pkg.d import (\n    h,\n    k,\n)\nfrom . import e\n",
        "pkg/d.py": "x = 1; import pkg.hidden\n",
        "pkg/e.py": "import pkg.f as alias, \\\n    pkg.g\n",
        "pkg/f.py": "", "pkg/g.py": "", "pkg/hidden.py": "",
        "other/__init__.py": "",
        "run.py": "import os\nimport other\nfrom pkg.a import b\n",
    })
    files = source_closure([tmp_path / "run.py"], search_path=[tmp_path], packages=["pkg"])
    got = {f.relative_to(tmp_path).as_posix() for f in files}
    assert got == {"pkg/__init__.py", "pkg/a/__init__.py", "pkg/a/b.py", "pkg/a/words.txt", "pkg/c.py",
                   "pkg/d.py", "pkg/e.py", "pkg/f.py", "pkg/g.py"}
    # not followed: other packages, unimported modules, documentation, and an import after ';' (documented)
    with_other = source_closure([tmp_path / "run.py"], search_path=[tmp_path], packages=["pkg", "other"])
    assert set(with_other) - set(files) == {tmp_path / "other" / "__init__.py"}


def test_import_lines_alone_parse_like_the_whole_file(tmp_path):
    """The cheap parse (import statements only) gives what parsing the whole file gives, for every module
    of the project; a layout it cannot read falls back to the whole file."""
    for f in sorted(SRC.rglob("*.py")):
        package = ".".join(f.relative_to(SRC).with_suffix("").parts[:-1])
        full = imported_names(ast.parse(f.read_bytes()), package)
        assert full <= file_imports(f, package), f
    odd = tmp_path / "odd.py"
    odd.write_text('"""\nimport the data: a docstring line that is no statement\n"""\nimport pkg.x\n')
    assert file_imports(odd) == {"pkg.x"}


def test_one_graph_answers_many_queries_and_reads_each_module_once():
    g = ImportGraph([SRC], ["scalable_bayes", "scalable_bayes_papers"])
    geodesic = g.closure(modules=["scalable_bayes.samplers.geodesic"])
    names = {f.relative_to(SRC).as_posix() for f in geodesic}
    assert {"scalable_bayes/__init__.py", "scalable_bayes/samplers/__init__.py", "scalable_bayes/samplers/geodesic.py",
            "scalable_bayes/manifolds/sphere.py", "scalable_bayes/rng.py"} <= names
    assert not any(n.startswith("scalable_bayes_papers") for n in names)
    assert g.closure(modules=["scalable_bayes.samplers.geodesic"]) == geodesic
    assert g.closure(modules=["no_such_package.x"]) == []


def test_static_closure_covers_what_the_chain_runner_digest_follows():
    """The driver's digest follows imports of the loaded modules; the static closure of the same module
    holds at least its library files."""
    import scalable_bayes.samplers.geodesic  # noqa: F401
    from scalable_bayes.samplers import _loop

    dynamic = {Path(f).resolve() for f in _loop._dependency_files("scalable_bayes.samplers.geodesic")
               if Path(f).resolve().is_relative_to(SRC)}
    static = {f.resolve() for f in ImportGraph([SRC], ["scalable_bayes"]).closure(
        modules=["scalable_bayes.samplers.geodesic", "scalable_bayes.rng"])}
    assert dynamic and dynamic <= static, dynamic - static
