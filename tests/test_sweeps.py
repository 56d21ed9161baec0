"""Sweeps add work, never redo it: adding a value to any sweep list of the config schedules only the
new runs (and the figures, tables and claims that aggregate them); no existing compute job changes.

The DAG of the default config is built twice (nothing runs): as configured, and with one more value in
every sweep list. A compute job (an output under ``results/<paper>/runs/`` or ``data/``) present in both
must have identical params, else Snakemake would re-run it ("Params have changed"); every extended list
must create at least one new compute job.

Every list in a paper's config block is classified here: a sweep (one job per value) or a setting of one
job (the whole list is that job's own work). A new list in the config fails the test until it is classified.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]

# config key -> value to add. Each value becomes a job of its own.
SWEEPS = {
    "sgnht.seeds": 7,
    "sgnht.ml.seeds": 7,
    "esca.seeds": 7,
    "esca.fig2.corpora": "reuters",
    "esca.throughput.threads": 3,
    "esca.fig3.seeds": 20,
    "esca.fig5.n_topics": 30,
    "esca.fig5.seeds": 7,
    "esca.fig6.topics_grid": 30,
    "esca.fig6.beta_grid": 0.05,
    "esca.fig6.seeds": 7,
    "esca.topics.corpora": "reuters",
    "vmf.fig3.seeds": 7,
    "vmf.fig3.lowdim.classic3": 7,
    "scir.seeds": 7,
}
# config key -> why the whole list is one job's own setting (adding a value re-runs that job, by design)
ONE_JOB = {
    "sgnht.double_well.fixed_xi": "Fig. 1 / SFig. 4 draw every fixed-xi chain of a seed in one run table",
    "sgnht.gaussian.step_sizes": "one synthetic run per (experiment, seed) covers the (h, A) grid of Fig. 2 / STab. 1",
    "sgnht.gaussian.frictions": "as step_sizes",
    "sgnht.ml.tasks": "a choice of tasks (bnn, bpmf, lda), not a grid: each task is its own job already",
    "esca.fig2.methods": "a choice among the engines; each engine is its own job already",
    "esca.throughput.corpora": "each corpus is its own job already (choice list)",
    "esca.throughput.methods": "a choice among the engines; each engine is its own job already",
    "esca.fig6.pairs": "a choice of (train, test) corpus pairs; each pair is its own job already",
    "esca.fig6.methods": "a choice among the engines; each engine is its own job already",
    "esca.fig3.severities": "one Fig. 3 job per seed fits SEM (and EM) from every severity's start on that seed's data",
    "vmf.fig1.dims": "one curve table per figure (a few seconds of special functions)",
    "vmf.fig2.dims": "as fig1.dims",
    "vmf.fig4.dims": "as fig1.dims (zipped with r_max)",
    "vmf.fig4.r_max": "zipped with fig4.dims",
    "vmf.fig4.dpsi0": "one curve table per figure",
    "vmf.fig5.dims": "as fig1.dims",
    "vmf.fig5.ode_dims": "the dimensions of fig5.dims at which the one Fig. 5 table also solves the ODE",
    "vmf.fig3.control_datasets": "switches the control run on in those data sets' own jobs (re-runs them, by design)",
    "vmf.fig3.datasets": "each data set is its own job already (choice list)",
    "vmf.fig3.k_grid": "one job per (data set, seed) fits every K from one subsample of the corpus",
    "vmf.tab1.datasets": "one table of all data sets",
    "scir.simplex.proportions": "one simplex job per (target, seed) runs the whole minibatch grid of Fig. 2 (seconds)",
    "scir.simplex.tune.step_sizes": "one tuning job per target scores the whole step-size grid",
}
PAPERS = ("sgnht", "esca", "vmf", "sggmc", "scir")


def _lists(d: dict, prefix: str = ""):
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            if key.endswith("k_grid"):
                yield key
                continue
            yield from _lists(v, key + ".")
        elif isinstance(v, list):
            yield key


def _config(name: str) -> dict:
    return yaml.safe_load((REPO / "config" / name).read_text())


def _dag(workdir: Path, *configs: Path) -> dict[tuple, dict]:
    proc = subprocess.run([sys.executable, str(REPO / "tests" / "dag_jobs.py"), str(workdir), *map(str, configs)],
                          capture_output=True, text=True, timeout=600, cwd=REPO)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    rows = [json.loads(ln) for ln in proc.stdout.splitlines() if ln.startswith("{")]
    assert rows, proc.stderr[-2000:]
    return {tuple(r["output"]): r for r in rows}


def _is_compute(outputs) -> bool:
    return any(o.startswith("data/") or "/runs/" in o for o in outputs)


def test_every_list_of_the_config_is_classified():
    cfg = _config("config.yaml")
    keys = {k for p in PAPERS if p in cfg for k in _lists(cfg[p], p + ".")}
    unclassified = keys - SWEEPS.keys() - ONE_JOB.keys()
    assert not unclassified, f"classify these config lists in tests/test_sweeps.py (SWEEPS or ONE_JOB): {unclassified}"
    assert not (SWEEPS.keys() & ONE_JOB.keys())


@pytest.mark.slow
def test_adding_a_value_to_any_sweep_schedules_only_new_runs(tmp_path):
    cfg = _config("config.yaml")
    extended = copy.deepcopy(cfg)
    for key, value in SWEEPS.items():
        node = extended
        *path, last = key.split(".")
        for p in path:
            node = node[p]
        assert value not in node[last], key
        node[last] = list(node[last]) + [value]
    (tmp_path / "config").symlink_to(REPO / "config")
    base_file, ext_file = tmp_path / "base.yaml", tmp_path / "extended.yaml"
    base_file.write_text(yaml.safe_dump(cfg))
    ext_file.write_text(yaml.safe_dump(extended))
    base, ext = _dag(tmp_path, base_file), _dag(tmp_path, ext_file)

    redone = [f"{r['rule']}: {list(out)[:2]}" for out, r in base.items()
              if _is_compute(out) and out in ext and ext[out]["params"] != r["params"]]
    assert not redone, "adding sweep values changes the params of existing compute jobs (they would re-run):\n" \
        + "\n".join(redone[:20])
    vanished = [out for out in base if _is_compute(out) and out not in ext]
    assert not vanished, vanished[:10]
    new = {out: r for out, r in ext.items() if out not in base and _is_compute(out)}
    for key, value in SWEEPS.items():
        token = {"seeds": f"seed{value}", "threads": f"t{value}", "n_topics": f"K{value}",
                 "topics_grid": f"K{value}", "beta_grid": f"beta{value}"}.get(key.split(".")[-1], str(value))
        paper = key.split(".")[0]
        hits = [out for out in new if any(o.startswith(f"results/{paper}/") and token in o for o in out)]
        assert hits, f"{key}: adding {value!r} created no new compute job (expected an output with {token!r})"
