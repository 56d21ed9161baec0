"""A copy of the project whose outputs for a config all exist, for DAG tests that edit or extend it.

``outputs_in_place(copy_project(dest), configfiles)`` copies what the pipeline reads (Snakefile, rules,
sources, configs) into ``dest`` and creates every output of the DAG there as an empty file (or directory),
read from ``tests/dag_jobs.py`` in a fresh process; the caller then marks them current
(``snakemake --touch``) and makes its change. Nothing runs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COPY = ("Snakefile", "workflow", "src", "config", "envs")


def copy_project(dest: Path) -> Path:
    """``dest`` holding a copy of the files the pipeline reads (no caches, no build metadata)."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in COPY:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(src, dest / name)
    return dest


def outputs_in_place(proj: Path, configfiles: list[Path]) -> list[dict]:
    """Create every output of the DAG of ``proj`` for ``configfiles`` (every job forced) and return its jobs
    (``tests/dag_jobs.py`` rows: rule, output, directories, input, params)."""
    proc = subprocess.run([sys.executable, str(ROOT / "tests" / "dag_jobs.py"), "--snakefile", str(proj / "Snakefile"),
                           str(proj), *map(str, configfiles)], capture_output=True, text=True, timeout=600, cwd=proj)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    rows = [json.loads(ln) for ln in proc.stdout.splitlines() if ln.startswith("{")]
    for row in rows:
        for out in row["output"]:
            p = proj / out
            if out in row["directories"]:
                p.mkdir(parents=True, exist_ok=True)
            else:
                p.parent.mkdir(parents=True, exist_ok=True)
                p.touch()
    return rows
