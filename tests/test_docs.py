"""The docs site builds with warnings as errors, documents every public name of the library, and its
examples run (each page's ``python`` code blocks, in order, in one namespace per page)."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PUBLIC_PACKAGES = ("special", "distributions", "manifolds", "models", "samplers", "inference", "evaluation",
                   "corpora")


@pytest.fixture(scope="module")
def built_site(tmp_path_factory):
    out = tmp_path_factory.mktemp("docs_html")
    res = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-q", "-b", "html",
                          str(DOCS), str(out)], capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 0, "the docs build has warnings or errors:\n" + res.stderr[-6000:]
    return out


@pytest.mark.slow
def test_the_site_builds_without_warnings(built_site):
    assert (built_site / "index.html").exists() and (built_site / "api.html").exists()
    for paper in ("sggmc", "sgnht", "scir", "vmf", "esca"):
        assert (built_site / "papers" / f"{paper}.html").exists(), paper


@pytest.mark.slow
def test_every_public_name_has_an_api_page(built_site):
    html = "\n".join(p.read_text(encoding="utf-8") for p in (built_site / "_api").glob("*.html"))
    missing = []
    for pkg in PUBLIC_PACKAGES:
        mod = importlib.import_module(f"scalable_bayes.{pkg}")
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if not (callable(obj) or isinstance(obj, type)):
                continue
            if f'id="{getattr(obj, "__module__", "")}.{name}"' not in html:  # its own entry, not a mention
                missing.append(f"scalable_bayes.{pkg}.{name}")
    assert not missing, "public names without an API entry: " + ", ".join(missing)


# numpydoc's validation codes that make an API entry unreadable: a parameter without an entry (PR01), an entry
# for a parameter that does not exist (PR02), an entry without a description (PR07), no Returns section
# (RT01), a Returns entry without a description (RT03)
NUMPYDOC_CODES = ("PR01", "PR02", "PR07", "RT01", "RT03")


def _public_callables():
    """(dotted name, object) of every function and class in the ``__all__`` of a public package or of one of
    its public submodules (the pages of the API reference), each object once."""
    import pkgutil

    seen = set()
    for pkg in PUBLIC_PACKAGES:
        top = importlib.import_module(f"scalable_bayes.{pkg}")
        modules = [top] + [importlib.import_module(m.name) for m in pkgutil.walk_packages(top.__path__, top.__name__ + ".")
                           if not any(part.startswith("_") for part in m.name.split("."))]
        for mod in modules:
            for name in getattr(mod, "__all__", []):
                obj = getattr(mod, name)
                if (callable(obj) or isinstance(obj, type)) and id(obj) not in seen:
                    seen.add(id(obj))
                    yield f"{mod.__name__}.{name}", obj


def test_every_public_name_has_numpydoc_parameters_and_returns():
    """Every public function and class of the library (the ``__all__`` of its public packages and their public
    submodules) documents each of its parameters (with a description, and none that does not exist) and what
    it returns, in numpydoc sections; a class its constructor's."""
    from numpydoc.validate import validate

    checked, offenders = 0, []
    for public, obj in _public_callables():
        path = f"{obj.__module__}.{obj.__qualname__}"  # where numpydoc imports it from (its defining module)
        errors = [f"{code} {msg}" for code, msg in validate(path)["errors"] if code in NUMPYDOC_CODES]
        checked += 1
        if errors:
            offenders.append(f"{public} ({path}): " + "; ".join(errors))
    assert checked > 100, f"only {checked} public names found: the check would pass vacuously"
    assert not offenders, (f"{len(offenders)} public names with incomplete numpydoc sections "
                           f"({', '.join(NUMPYDOC_CODES)}):\n" + "\n".join(offenders))


LIBRARY = ROOT / "src" / "scalable_bayes"
DOCTEST_MODULES = sorted(
    ".".join(p.relative_to(LIBRARY.parent).with_suffix("").parts).removesuffix(".__init__")
    for p in LIBRARY.rglob("*.py") if ">>> " in p.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", DOCTEST_MODULES)
def test_the_examples_in_docstrings_run(name):
    """Every ``>>>`` example of the library's docstrings runs and prints what it shows."""
    import doctest

    mod = importlib.import_module(name)
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert res.attempted > 0 and res.failed == 0, f"{name}: {res.failed} of {res.attempted} examples fail"


def _code_blocks(page: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)


EXAMPLE_PAGES = sorted(p for p in DOCS.glob("*.md") if _code_blocks(p))


@pytest.mark.parametrize("page", EXAMPLE_PAGES, ids=[p.stem for p in EXAMPLE_PAGES])
def test_the_examples_of_a_page_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": f"docs_{page.stem}"}
    for i, block in enumerate(_code_blocks(page)):
        try:
            exec(compile(block, f"{page.name}[block {i}]", "exec"), namespace)
        except Exception as exc:  # pragma: no cover - the message is the point
            raise AssertionError(f"{page.name}, code block {i} fails: {exc!r}\n{block}") from exc


def _race_rows(text: str, header: str):
    """The rows of the markdown table under the line starting with ``header``: per row, the first two ratios
    ("3.04x") of each of its last two columns (the two machines; uniform / prior start)."""
    lines = text[text.index(header):].splitlines()
    rows = []
    for line in lines[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows.append([re.findall(r"\d+\.\d+x", c)[:2] for c in cells[-2:]])
    return rows


def test_the_engine_pages_race_table_is_the_benchmarks_record():
    # docs/lda-engines.md repeats the latest column of each machine from benchmarks/README_lda.md's summary, the
    # record kept beside the races' commands: a race re-run updates one, and this keeps the other from drifting
    page = _race_rows((DOCS / "lda-engines.md").read_text(encoding="utf-8"), "| corpus, K, threads |")
    record = _race_rows((ROOT / "benchmarks" / "README_lda.md").read_text(encoding="utf-8"), "| cell | first race")
    assert len(page) == 8 and page == record, (page, record)
