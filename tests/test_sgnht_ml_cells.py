"""SGNHT ML runs are one job per grid cell (task, seed, a, eta) and one merge per (task, seed).

- The cells, run in any order and merged, give the tables of the whole grid in one call, bit for bit
  (wall-time columns aside): a chain's seeds depend on the job's seed only, not on the cell's place in the grid.
- Adding one eta value to ``sgnht.ml.lda`` schedules exactly the new cells (one per a and seed), the lda merges
  and the figure, tables and claims that read them, on a copy of the project whose outputs are all up to date.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import yaml

from scalable_bayes.corpora.store import Corpus, save_corpus
from scalable_bayes_papers.sgnht import runs
from project_copy import copy_project, outputs_in_place

ROOT = Path(__file__).resolve().parents[1]
WALL = ["wall_time_s", "s_per_iter"]
SETTINGS = {
    "bnn": dict(n_iter=120, burnin=60, batch_size=20, hidden=8, n_train=200, n_val=100, eta=[1e-4, 4e-4], a=[0.01, 0.1],
                eval_every=30),
    "bpmf": dict(n_iter=120, burnin=60, batch_size=100, rank=3, eta=[1e-5, 4e-5], a=[0.01, 0.1], eval_every=30,
                 eta_scale=2.0),
    "lda": dict(corpus="tiny", max_train_docs=60, max_test_docs=20, n_topics=4, n_iter=60, burnin=20, batch_size=10,
                eval_every=20, gibbs_sweeps=2, eta=[2e-5, 8e-5], a=[0.01, 0.1]),
}


def _tiny_inputs(d: Path) -> dict:
    rng = np.random.default_rng(0)
    images = (rng.random((400, 64)) * 255).astype(np.uint8)
    labels = (images[:, :32].mean(1) > images[:, 32:].mean(1)).astype(np.int64)
    np.savez(d / "mnist.npz", images=images, labels=labels)
    n = 3000
    pd.DataFrame({"user": rng.integers(0, 50, n), "item": rng.integers(0, 40, n), "rating": rng.integers(1, 6, n),
                  "timestamp": np.zeros(n, np.int64)}).to_parquet(d / "ratings.parquet")
    n_docs, n_words = 80, 60
    counts = sp.csr_matrix(rng.poisson(0.4, (n_docs, n_words)).astype(np.int32) + np.eye(n_docs, n_words, dtype=np.int32))
    docs = pd.DataFrame({"doc_id": [f"d{i}" for i in range(n_docs)], "label": np.zeros(n_docs, np.int64),
                         "split": ["train"] * 60 + ["test"] * 20, "n_tokens": np.asarray(counts.sum(1)).ravel()})
    save_corpus(Corpus(counts, [f"w{i}" for i in range(n_words)], docs, {"name": "tiny", "label_names": ["x"]}), d / "corpus")
    return {"mnist": d / "mnist.npz", "ratings": d / "ratings.parquet", "corpus_dir": d / "corpus"}


@pytest.mark.parametrize("task", ["bnn", "bpmf", "lda"])
def test_cells_in_reverse_order_merged_equal_the_whole_grid(task, tmp_path):
    inputs, s = _tiny_inputs(tmp_path), SETTINGS[task]
    summary, trace = runs.run_task(task, 1, s, inputs)
    grid = [(a, eta) for a in s["a"] for eta in s["eta"]]
    cells = {}
    for a, eta in reversed(grid):  # another order than the grid's: no chain may depend on what ran before it
        cs = runs.cell_settings(s, a, eta)
        assert cs["a"] == a and cs["eta"] == eta and {k: v for k, v in cs.items() if k not in ("a", "eta")} == \
            {k: v for k, v in s.items() if k not in ("a", "eta")}
        cell_sum, cell_trace = runs.run_cell(task, 1, cs, inputs)
        assert len(cell_sum) == 2 and set(cell_sum["method"]) == {"SGHMC", "SGNHT"}
        for kind, df in (("summary", cell_sum), ("trace", cell_trace)):  # through parquet, as the jobs do
            df.to_parquet(tmp_path / f"{kind}_{a}_{eta}.parquet", index=False)
        cells[a, eta] = [pd.read_parquet(tmp_path / f"{kind}_{a}_{eta}.parquet") for kind in ("summary", "trace")]
    merged_sum, merged_trace = runs.merge_cells([cells[c][0] for c in grid], [cells[c][1] for c in grid])
    assert len(merged_sum) == 2 * len(grid) and list(merged_trace.columns) == runs.TRACE_COLUMNS
    pd.testing.assert_frame_equal(summary.drop(columns=WALL), merged_sum.drop(columns=WALL), check_exact=True)
    pd.testing.assert_frame_equal(trace, merged_trace, check_exact=True)


def test_merge_keeps_the_trace_columns_when_no_cell_has_trace_rows():
    s = pd.DataFrame({"task": ["lda"], "method": ["SGHMC"]})
    empty = pd.DataFrame([], columns=runs.TRACE_COLUMNS)
    summary, trace = runs.merge_cells([s, s], [empty, empty])
    assert len(summary) == 2 and list(trace.columns) == runs.TRACE_COLUMNS and trace.empty


# ---- the DAG: adding an eta value on an up-to-date copy of the project -------------------------------------

BASE_ETA = [2.0e-5, 4.0e-5]
NEW_ETA = 1.0e-4


def _overlay(path: Path, eta: list[float]) -> Path:
    path.write_text(yaml.safe_dump({"sgnht": {"ml": {"activate": True, "lda": {"eta": eta}}}}))
    return path


def _snakemake(project: Path, overlay: Path, *extra: str) -> str:
    cmd = [sys.executable, "-m", "snakemake", "-s", str(project / "Snakefile"), "-d", str(project), "--configfile",
           str(project / "config" / "smoke.yaml"), str(overlay), "--cores", "1", *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=project)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    return out


def _scheduled_jobs(out: str) -> list[tuple[str, list[str]]]:
    """(rule, outputs) of every job of a dry run's job list."""
    jobs = []
    for block in re.split(r"^(?:localrule|rule) ", out, flags=re.M)[1:]:
        rule = block.split(":", 1)[0].strip()
        m = re.search(r"^\s+output: (.*)$", block, re.M)
        jobs.append((rule, [o.strip() for o in m.group(1).split(",")] if m else []))
    return jobs


@pytest.mark.pipeline
def test_adding_an_eta_value_schedules_only_the_new_cells_and_what_reads_them(tmp_path):
    proj = copy_project(tmp_path / "project")
    base = _overlay(tmp_path / "base.yaml", BASE_ETA)
    rows = outputs_in_place(proj, [proj / "config" / "smoke.yaml", base])
    cells = [r for r in rows if r["rule"] == "sgnht_ml_runs"]
    seeds = sorted({re.search(r"/seed(\d+)/", r["output"][0]).group(1) for r in cells})
    a_values = sorted({re.search(r"/a([^~]+)~", r["output"][0]).group(1) for r in cells if "/lda/" in r["output"][0]})
    assert cells and seeds and a_values, [r["rule"] for r in rows][:50]
    _snakemake(proj, base, "--touch", "--quiet", "all")
    assert "Nothing to be done" in _snakemake(proj, base, "-n"), "the copy is not up to date before the sweep"

    jobs = _scheduled_jobs(_snakemake(proj, _overlay(tmp_path / "extended.yaml", BASE_ETA + [NEW_ETA]), "-n"))
    by_rule: dict[str, list[list[str]]] = {}
    for rule, outs in jobs:
        by_rule.setdefault(rule, []).append(outs)
    new_cells = {f"results/sgnht/runs/ml/lda/seed{s}/cells/a{a}~eta{NEW_ETA}/summary.parquet"
                 for s in seeds for a in a_values}
    assert {o for outs in by_rule.pop("sgnht_ml_runs", []) for o in outs if o.endswith("summary.parquet")} == new_cells
    merges = {o for outs in by_rule.pop("sgnht_ml_merge", []) for o in outs if o.endswith("summary.parquet")}
    assert merges == {f"results/sgnht/runs/ml/lda/seed{s}/summary.parquet" for s in seeds}
    assert set(by_rule) <= {"sgnht_fig3", "sgnht_stab2", "sgnht_stab3", "claims", "all"}, by_rule
    assert {"sgnht_fig3", "sgnht_stab2", "sgnht_stab3", "claims"} <= set(by_rule), by_rule
