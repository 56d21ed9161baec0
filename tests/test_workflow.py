"""Structure of the Snakemake rules: which code each job takes as inputs.

* every rule that runs project code (a script in ``workflow/scripts`` or ``python -m <module>``) takes
  ``code_inputs(<that script or module>)``: the source files of every ``scalable_bayes`` /
  ``scalable_bayes_papers`` module it imports, transitively; so a job re-runs when the code it runs
  changes, and only then. The one exception is the raw-data fetch (its output is checksum-verified);
* figure and table rules therefore take the ``figures`` / ``claims`` / ``tables`` modules they import
  (editing a figure or a claim check re-runs those rules; no claim goes stale) and the library modules
  behind them (``reporting.py``, the plot style);
* compute rules (outputs under ``results/<paper>/runs/`` or ``data/``) take none of the ``figures`` /
  ``claims`` / ``tables`` modules: changing a colour or a threshold re-runs no sampler.

The rule files are read as text, and the DAG of the default config is built once (nothing runs) to check
the files each job takes. ``tests/test_code_reruns.py`` checks the same end to end with dry runs.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from scalable_bayes.dependencies import ImportGraph

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PAPER_IMPORT = re.compile(r"from scalable_bayes_papers\.(\w+)(?:\.(\w+))? import ([\w, ]+)")
PRESENTATION = {"figures", "claims", "tables"}
NO_CODE_INPUTS = {"fetch_source"}  # checksum-verified raw data: see the comment in workflow/rules/data.smk


def _rule_blocks(path: Path):
    text = path.read_text()
    starts = [m.start() for m in re.finditer(r"^rule (\w+):", text, re.M)] + [len(text)]
    for a, b in zip(starts, starts[1:]):
        block = text[a:b]
        yield re.match(r"rule (\w+):", block).group(1), block


def _paper_modules(script: Path) -> set[tuple[str, str]]:
    """(paper, module) pairs among figures / claims / tables that a script imports."""
    out = set()
    for paper, sub, names in PAPER_IMPORT.findall(script.read_text()):
        mods = [sub] if sub else [n.strip() for n in names.split(",")]
        out |= {(paper, m) for m in mods if m in PRESENTATION}
    return out


def _code_rules():
    """(rule file, rule, block, what it runs: a script file name or a module name) of every rule that
    runs project code."""
    for smk in sorted((ROOT / "workflow" / "rules").glob("*.smk")):
        for name, block in _rule_blocks(smk):
            m = re.search(r'script:\s*\n\s*"\.\./scripts/([\w.]+)"', block)
            if m:
                yield smk, name, block, m.group(1)
                continue
            m = re.search(r"-m (scalable_bayes(?:_papers)?(?:\.\w+)*)", block)
            if m:
                yield smk, name, block, m.group(1)


def _is_compute(outputs) -> bool:
    return any(o.startswith("data/") or "/runs/" in o for o in outputs)


def _presentation_inputs(inputs) -> list[str]:
    """The ``figures`` / ``claims`` / ``tables`` modules of any paper among a job's inputs."""
    out = []
    for f in inputs:
        p = Path(f)
        if p.suffix == ".py" and p.stem in PRESENTATION and p.parent.parent.name == "scalable_bayes_papers":
            out.append(f"{p.parent.name}/{p.name}")
    return out


def _src(rel: str) -> str:
    return str(SRC / rel)


@pytest.fixture(scope="module")
def dag(tmp_path_factory) -> list[dict]:
    """Every job of the default config's DAG: rule, outputs, inputs (nothing runs)."""
    wd = tmp_path_factory.mktemp("dag")
    (wd / "config").symlink_to(ROOT / "config")
    proc = subprocess.run([sys.executable, str(ROOT / "tests" / "dag_jobs.py"), str(wd),
                           str(ROOT / "config" / "config.yaml")], capture_output=True, text=True, timeout=600,
                          cwd=ROOT)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    rows = [json.loads(ln) for ln in proc.stdout.splitlines() if ln.startswith("{")]
    assert len(rows) > 100, proc.stderr[-2000:]
    return rows


def test_every_rule_that_runs_project_code_takes_that_code_as_inputs():
    checked, missing = 0, []
    for smk, name, block, target in _code_rules():
        if name in NO_CODE_INPUTS:
            assert "code=code_inputs(" not in block and "code_inputs()" in block, \
                f"{smk.name}:{name}: takes no code inputs, and its comment says why"
            continue
        checked += 1
        if f'code=code_inputs("{target}")' not in block:
            missing.append(f"{smk.name}:{name} runs {target}")
    assert checked > 40, checked
    assert not missing, "rules without code=code_inputs(<what they run>) as an input:\n" + "\n".join(missing)


def test_figure_and_table_rules_take_the_paper_modules_they_import(dag):
    scripts = {name: target for _, name, _, target in _code_rules() if target.endswith(".py")}
    checked, missing = 0, []
    for job in dag:
        script = scripts.get(job["rule"])
        if script is None:
            continue
        for paper, module in _paper_modules(ROOT / "workflow" / "scripts" / script):
            checked += 1
            if _src(f"scalable_bayes_papers/{paper}/{module}.py") not in job["input"]:
                missing.append(f"{job['rule']} uses {paper}.{module}")
        if "write_claim" in (ROOT / "workflow" / "scripts" / script).read_text():
            checked += 1
            if _src("scalable_bayes/reporting.py") not in job["input"]:
                missing.append(f"{job['rule']} writes a claim with scalable_bayes.reporting")
    assert checked > 50, checked
    assert not missing, "jobs that do not take the code they run:\n" + "\n".join(sorted(set(missing)))


def test_compute_rules_do_not_depend_on_figures_or_claims(dag):
    compute = [job for job in dag if _is_compute(job["output"])]
    assert len(compute) > 50, len(compute)
    bad = sorted({f"{job['rule']}: {_presentation_inputs(job['input'])}" for job in compute
                  if _presentation_inputs(job["input"])})
    assert not bad, "compute rules must not take figures/claims/tables code as input:\n" + "\n".join(bad)


def test_the_compute_check_sees_a_runs_script_that_imports_figures(tmp_path):
    """The check above fails for a compute job whose script imports a figures module (directly or
    through its runs module): that module is then among the job's inputs."""
    script = tmp_path / "probe_runs.py"
    script.write_text("from scalable_bayes_papers.sggmc import runs\n"
                      "def f():\n    from scalable_bayes_papers.sggmc.figures import plot_fig3\n")
    files = ImportGraph([SRC], ["scalable_bayes", "scalable_bayes_papers"]).closure([script])
    assert _presentation_inputs(map(str, files)) == ["sggmc/figures.py"]
    assert _presentation_inputs([_src("scalable_bayes_papers/sggmc/runs.py")]) == []


def test_sggmc_compute_jobs_take_the_geodesic_samplers_and_their_runs_module(dag):
    jobs = [job for job in dag if job["rule"].startswith("sggmc_") and _is_compute(job["output"])]
    assert {job["rule"] for job in jobs} == {"sggmc_fig3_runs", "sggmc_fig4_runs", "sggmc_fig4_truth",
                                             "sggmc_fig5_runs"}
    for job in jobs:
        code = set(job["input"])
        assert _src("scalable_bayes/samplers/geodesic.py") in code, job["rule"]
        assert _src("scalable_bayes_papers/sggmc/runs.py") in code, job["rule"]
        # importing a module runs its packages' __init__: they count
        assert _src("scalable_bayes/samplers/__init__.py") in code, job["rule"]
        assert _src("scalable_bayes_papers/__init__.py") in code, job["rule"]
        others = [f for f in code if "/scalable_bayes_papers/" in f and "/scalable_bayes_papers/sggmc/" not in f
                  and not f.endswith("scalable_bayes_papers/__init__.py")]
        assert not others, (job["rule"], others)
        assert not _presentation_inputs(code), job["rule"]


def test_data_rules_take_the_corpus_code_and_the_fetch_takes_none(dag):
    fetch = [job for job in dag if job["rule"] == "fetch_source"]
    builds = [job for job in dag if job["rule"].startswith("build_corpus_")]
    assert fetch and builds
    assert all(not any(f.startswith(str(SRC)) for f in job["input"]) for job in fetch)
    for job in builds:
        assert _src("scalable_bayes/corpora/text.py") in job["input"], job["output"]
        assert _src("scalable_bayes/corpora/smart_stoplist.txt") in job["input"], job["output"]  # package data
        assert _src("scalable_bayes/corpora/fetch.py") not in job["input"], job["output"]


def test_no_rule_uses_the_old_code_helpers():
    for smk in sorted((ROOT / "workflow" / "rules").glob("*.smk")):
        text = smk.read_text()
        assert "plotting_code(" not in text, smk.name
        assert "paper_code(" not in text, smk.name


def test_every_figure_rule_declares_its_pdf():
    """``savefig`` writes the PDF beside every PNG; a rule that declared only the PNG left the PDF behind when
    the job failed after the figure was written (Snakemake removes declared outputs only)."""
    missing = []
    for smk in sorted((ROOT / "workflow" / "rules").glob("*.smk")):
        for name, block in _rule_blocks(smk):
            out = block.split("output:", 1)[1] if "output:" in block else ""
            out = re.split(r"^\s{4}\w+:\s*$", out, maxsplit=1, flags=re.M)[0]  # up to the next directive
            for png in re.findall(r'"(results/[^"]+)\.png"', out):
                if f'"{png}.pdf"' not in out:
                    missing.append(f"{smk.name}: rule {name} declares {png}.png but not {png}.pdf")
    assert not missing, "\n".join(missing)
