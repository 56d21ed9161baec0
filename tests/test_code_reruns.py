"""A job re-runs when the code it runs changes, and only those jobs: dry runs on a copy of the project.

The project (Snakefile, rules, scripts, ``src``) is copied to a scratch directory; every output of the smoke
config's DAG is created empty and ``snakemake --touch`` puts their times in order, so a dry run has nothing to
do. Then one source file at a time gets a comment appended (a comment-only edit counts, by design), and a dry
run with ``--rerun-triggers mtime`` (file times only, as after a code edit) must schedule the jobs whose code
imports that file, transitively, and no other; the file is then restored with its old time. Nothing runs.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from project_copy import copy_project, outputs_in_place

ROOT = Path(__file__).resolve().parents[1]
SGGMC_COMPUTE = {"sggmc_fig3_runs", "sggmc_fig4_runs", "sggmc_fig4_truth", "sggmc_fig5_runs"}
DATA = {"fetch_source", "news20_messages", "wikipedia_counts", "build_corpus_tfidf", "build_corpus_counts",
        "build_mnist", "build_movielens"}

pytestmark = pytest.mark.pipeline


def _snakemake(project: Path, *extra: str) -> str:
    cmd = [sys.executable, "-m", "snakemake", "-s", str(project / "Snakefile"), "-d", str(project),
           "--configfile", str(project / "config" / "smoke.yaml"), "--cores", "1", "--rerun-triggers", "mtime",
           *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=project)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    return out


def _scheduled(project: Path) -> set[str]:
    """Rules of the jobs a dry run would run (its job-stats table); empty if nothing is to be done."""
    out = _snakemake(project, "-n", "--quiet", "rules")
    if "Nothing to be done" in out:
        return set()
    table = out.split("Job stats:", 1)[1].split("total", 1)[0]
    rules = set(re.findall(r"^(\w+)\s+\d+\s*$", table, re.M))
    assert rules, out[-3000:]
    return rules


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A copy of the project whose smoke-config outputs all exist and are up to date."""
    proj = copy_project(tmp_path_factory.mktemp("project"))
    rows = outputs_in_place(proj, [proj / "config" / "smoke.yaml"])
    assert len(rows) > 50, [r["rule"] for r in rows]
    _snakemake(proj, "--touch", "--quiet", "all")  # outputs' times in the DAG's order
    assert _scheduled(proj) == set(), "the copy is not up to date before any edit"
    return proj


def _after_edit(project: Path, rel: str) -> set[str]:
    """Rules a dry run schedules after a comment is appended to ``src/<rel>``; the file is restored."""
    path = project / "src" / rel
    text, st = path.read_bytes(), path.stat()
    try:
        path.write_bytes(text + b"\n# an edit of a comment only\n")
        return _scheduled(project)
    finally:
        path.write_bytes(text)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_a_library_edit_reruns_the_jobs_that_import_it(project):
    rules = _after_edit(project, "scalable_bayes/samplers/geodesic.py")
    assert SGGMC_COMPUTE <= rules, rules
    assert {"sggmc_fig3", "sggmc_fig4", "sggmc_fig5", "claims"} <= rules, rules  # their results changed
    # code that does not import the samplers: the corpora, the static items, the data table
    untouched = DATA | {"sggmc_static_figure", "sggmc_tab1", "esca_fig1", "esca_tabu1", "dataset_table"}
    assert not rules & untouched, rules & untouched


def test_a_paper_runs_edit_reruns_that_paper_only(project):
    rules = _after_edit(project, "scalable_bayes_papers/sggmc/runs.py")
    assert SGGMC_COMPUTE <= rules, rules
    others = {r for r in rules if not r.startswith("sggmc_")} - {"claims", "all"}
    assert not others, others
    assert not rules & {"sggmc_static_figure", "sggmc_tab1"}, rules


def test_a_figure_edit_reruns_no_compute_job(project):
    rules = _after_edit(project, "scalable_bayes_papers/sggmc/figures.py")
    assert {"sggmc_fig3", "sggmc_fig4", "sggmc_fig5", "sggmc_static_figure"} <= rules, rules
    assert not {r for r in rules if r.endswith(("_runs", "_truth", "_tune"))} | (rules & DATA), rules


def test_an_edit_of_the_claims_library_reruns_every_claim_and_no_compute_job(project):
    rules = _after_edit(project, "scalable_bayes/reporting.py")
    assert {"claims", "dataset_table", "vmf_fig3", "sgnht_fig1", "esca_fig1", "scir_fig1", "sggmc_tab1"} <= rules
    assert not {r for r in rules if r.endswith(("_runs", "_truth", "_tune"))} | (rules & DATA), rules


def test_an_edit_of_the_corpus_code_rebuilds_the_corpora_but_never_refetches(project):
    rules = _after_edit(project, "scalable_bayes/corpora/text.py")
    assert {"build_corpus_tfidf", "news20_messages"} <= rules, rules
    assert "fetch_source" not in rules
    assert _after_edit(project, "scalable_bayes/corpora/fetch.py") == set()
