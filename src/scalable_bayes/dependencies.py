"""Which source files a piece of Python code runs, read statically (nothing is imported).

:func:`source_closure` follows the import statements of a script or module, transitively, through the
packages it is told to follow, and returns their source files: what a job that runs the script depends on.
The pipeline gives these files to every job as inputs, so that a job re-runs when the code it runs changes
(``workflow/rules/common.smk``). The SG-MCMC chunk loop's digest (:mod:`scalable_bayes.samplers._loop`) does the
same for imported modules, dynamically; this one needs no import, so building a workflow's DAG stays cheap.

What counts as a module's dependency:

* every module named by an ``import`` or ``from ... import`` statement that begins a line anywhere in
  the file (inside functions too, and under ``if``/``try``: the walk cannot know which branch runs, so it
  takes both; an import after ``;`` or ``:`` on one line is not seen);
  for ``from m import x`` both ``m`` and, if it is a submodule, ``m.x``; relative imports resolved;
* every parent package of such a module (importing ``a.b.c`` runs ``a/__init__.py`` and ``a/b/__init__.py``);
* the data files that sit in a followed package's directory next to its ``__init__.py`` (e.g. a stop list
  read with :mod:`importlib.resources`), since the code may read them; Markdown files are documentation and
  are left out.

Modules outside the followed packages (the standard library, numpy, ...) are not followed; imports by a
computed name (``importlib.import_module(name)``) are not seen.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path
from typing import Iterable, Sequence

__all__ = ["ImportGraph", "file_imports", "imported_names", "module_file", "source_closure"]

_DOC_SUFFIXES = {".md", ".rst"}


def imported_names(tree: ast.AST, package: str = "") -> set[str]:
    """Absolute names of every module an ``ast`` tree imports, at any depth.

    Parameters
    ----------
    tree : ast.AST
        The parsed source.
    package : str
        The package the source belongs to (``"a.b"`` for ``a/b/c.py`` and for ``a/b/__init__.py``), used
        to resolve relative imports; ``""`` for a script, whose relative imports are skipped.

    Returns
    -------
    set of str
        For ``import m``: ``m``; for ``from m import x``: ``m`` and ``m.x`` (``x`` may be a submodule).
    """
    parts = package.split(".") if package else []
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if node.level > len(parts):
                    continue
                base = parts[: len(parts) - node.level + 1]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            if prefix:
                out.add(prefix)
                out.update(f"{prefix}.{a.name}" for a in node.names if a.name != "*")
    return out


def module_file(name: str, search_path: Sequence[Path]) -> Path | None:
    """Source file of module ``name`` in the first directory of ``search_path`` that has it.

    Parameters
    ----------
    name : str
        Dotted module name, e.g. ``"scalable_bayes.samplers.geodesic"``.
    search_path : sequence of Path
        Directories to look in (like ``sys.path``; e.g. the project's ``src``).

    Returns
    -------
    Path or None
        ``<dir>/a/b.py`` or ``<dir>/a/b/__init__.py``; None if neither exists (a function or class
        imported by name, or a module not under ``search_path``).
    """
    rel = Path(*name.split("."))
    for d in search_path:
        for cand in (Path(d) / rel.with_suffix(".py"), Path(d) / rel / "__init__.py"):
            if cand.is_file():
                return cand
    return None


# a line that begins an import statement (at any indentation: imports inside functions count)
_IMPORT_LINE = re.compile(rb"^[ \t]*(?:import[ \t]+|from[ \t]+[\w.]+[ \t]+import\b|from[ \t]+\.+[ \t]*import\b)", re.M)


def _import_statements(text: bytes) -> bytes:
    """The import statements of a source, one per line (continuation lines joined), for a cheap parse.

    Parsing only these lines takes a twentieth of the time of parsing the whole file (what matters
    when a DAG of a hundred modules is built); a line inside a string that looks like an import is
    taken too (harmless: one dependency too many)."""
    out = []
    for m in _IMPORT_LINE.finditer(text):
        i = m.start()
        j = text.find(b"\n", i)
        j = len(text) if j < 0 else j
        if b"(" in text[i:j] and b")" not in text[i:j]:
            k = text.find(b")", j)
            j = len(text) if k < 0 else k + 1
        while text[i:j].rstrip().endswith(b"\\") and j < len(text):
            k = text.find(b"\n", j + 1)
            j = len(text) if k < 0 else k
        out.append(text[i:j].strip())
    return b"\n".join(out)


def file_imports(path: str | os.PathLike, package: str = "") -> set[str]:
    """:func:`imported_names` of the source file at ``path``.

    Its import statements are parsed alone (:func:`_import_statements`), or, should they not parse so
    (an unusual layout), the whole file.

    Parameters
    ----------
    path : path-like
        A Python source file.
    package : str
        The package it belongs to, ``""`` for a script (see :func:`imported_names`).

    Returns
    -------
    set of str
    """
    text = Path(path).read_bytes()
    try:
        tree = ast.parse(_import_statements(text), filename=str(path))
    except SyntaxError:
        tree = ast.parse(text, filename=str(path))
    return imported_names(tree, package)


def _package_data(directory: Path) -> list[Path]:
    """Non-Python, non-documentation files directly in a package's directory."""
    return sorted(Path(e.path) for e in os.scandir(directory)
                  if e.is_file() and not e.name.endswith((".py", ".pyc"))
                  and Path(e.name).suffix not in _DOC_SUFFIXES and not e.name.startswith("."))


def _parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


class ImportGraph:
    """The static import graph of some packages' sources, read once per module and kept.

    Each module's file is read once for the lifetime of the graph (an edit made later is not seen:
    make a new graph); so one graph answers many :meth:`closure` queries cheaply, e.g. one per job of
    a workflow while its DAG is built.

    Parameters
    ----------
    search_path : sequence of path-like
        Where the followed packages' sources live (e.g. ``[<project>/src]``).
    packages : iterable of str
        Top-level packages to follow (e.g. ``["scalable_bayes", "scalable_bayes_papers"]``); imports of
        any other module are ignored.
    """

    def __init__(self, search_path: Sequence[str | os.PathLike], packages: Iterable[str]):
        self.search_path = [Path(p) for p in search_path]
        self.packages = frozenset(packages)
        self._edges: dict[str, tuple[Path | None, tuple[str, ...], tuple[Path, ...]]] = {}

    def followed(self, name: str) -> bool:
        """Whether module ``name`` belongs to a followed package."""
        return name.split(".", 1)[0] in self.packages

    def _node(self, name: str):
        """(file, followed modules it makes run, data files) of module ``name``; file None if no source."""
        node = self._edges.get(name)
        if node is None:
            path = module_file(name, self.search_path)
            if path is None:
                node = (None, (), ())
            else:
                is_package = path.name == "__init__.py"
                package = name if is_package else name.rpartition(".")[0]
                deps = _parents(name) + sorted(n for n in file_imports(path, package) if self.followed(n))
                node = (path, tuple(deps), tuple(_package_data(path.parent)) if is_package else ())
            self._edges[name] = node
        return node

    def closure(self, scripts: Iterable[str | os.PathLike] = (), modules: Iterable[str] = ()) -> list[Path]:
        """Source files of every followed module that ``scripts`` and ``modules`` import, transitively.

        Parameters
        ----------
        scripts : iterable of path-like
            Python files run as scripts (their own files are not in the result; their relative
            imports are skipped).
        modules : iterable of str
            Dotted names of modules whose own source (and parent packages) belong to the result too.

        Returns
        -------
        list of Path
            Sorted source files (``.py``, including the ``__init__.py`` of every package on the way)
            and the data files of the packages visited (see the module docstring).
        """
        todo = [m for m in modules if self.followed(m)]
        for script in scripts:
            todo.extend(n for n in file_imports(script) if self.followed(n))
        seen: set[str] = set()
        files: set[Path] = set()
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            path, deps, data = self._node(name)
            if path is not None:
                files.add(path)
                files.update(data)
                todo.extend(deps)
        return sorted(files)


def source_closure(
    scripts: Iterable[str | os.PathLike] = (),
    modules: Iterable[str] = (),
    *,
    search_path: Sequence[str | os.PathLike],
    packages: Iterable[str],
) -> list[Path]:
    """Source files of every followed module that ``scripts`` and ``modules`` import, transitively
    (one query of a fresh :class:`ImportGraph`; see there for the parameters).

    Examples
    --------
    >>> src = Path(__file__).resolve().parents[1]
    >>> files = source_closure(modules=["scalable_bayes.rng"], search_path=[src], packages=["scalable_bayes"])
    >>> sorted(f.relative_to(src).as_posix() for f in files)
    ['scalable_bayes/__init__.py', 'scalable_bayes/jitcache.py', 'scalable_bayes/rng.py']
    """
    return ImportGraph(search_path, packages).closure(scripts, modules)
