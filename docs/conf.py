"""Sphinx configuration of the scalable_bayes docs site (built in the tests with warnings as errors).

Build: ``python -m sphinx -W -b html docs docs/_build/html`` (``tests/test_docs.py``).
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import scalable_bayes  # noqa: E402

# autosummary writes a stub per module into _api and never removes one: start from none, so a module that
# was moved or deleted leaves no stale page behind
shutil.rmtree(Path(__file__).resolve().parent / "_api", ignore_errors=True)

project = "scalable_bayes"
author = "the scalable_bayes authors"
copyright = "2026, the scalable_bayes authors"
release = version = scalable_bayes.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "README.md"]
templates_path = ["_templates"]
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": True, "inherited-members": False, "show-inheritance": True}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
myst_heading_anchors = 3
html_theme = "alabaster"
html_title = f"scalable_bayes {release}"
nitpicky = False
suppress_warnings = ["myst.header"]


def _paper_pages(app):
    """One page per paper, generated from its claims module: the items, their claims and the folder."""
    import paper_pages

    paper_pages.write(Path(app.srcdir) / "papers")


# The library's docstrings are written in plain mathematical notation: |x| is a norm, components_ a
# fitted attribute. reStructuredText would read the first as a substitution and the second as a link
# target, so outside inline literals and roles both are escaped before rendering.
_LITERAL = re.compile(r"(``.+?``|:[\w:+-]+:`[^`]+`|`[^`]+`_?)")
_TRAILING_UNDERSCORE = re.compile(r"(?<=\w)_(?=[\s.,;:)\]]|$)")


def _escape(text: str) -> str:
    parts = _LITERAL.split(text)
    for i in range(0, len(parts), 2):  # even entries are outside literals and roles
        parts[i] = _TRAILING_UNDERSCORE.sub(r"\\_", parts[i].replace("|", r"\|"))
    return "".join(parts)


def _plain_notation(app, what, name, obj, options, lines):
    lines[:] = [_escape(line) for line in lines]


def _skip_sklearn_machinery(app, what, name, obj, skip, options):
    """scikit-learn adds ``set_<method>_request`` methods and inherited helpers to every estimator; they are
    documented by scikit-learn, and their docstrings refer to its own glossary."""
    if re.fullmatch(r"set_\w+_request", name) or str(getattr(obj, "__module__", "")).startswith("sklearn."):
        return True
    return None


def setup(app):
    app.connect("builder-inited", _paper_pages)
    app.connect("autodoc-skip-member", _skip_sklearn_machinery)
    app.connect("autodoc-process-docstring", _plain_notation, priority=600)
