"""Print every job of the pipeline's DAG for a config as JSON lines: rule, outputs (and which
are directories), inputs, params (repr).

Run as a script (a fresh process per DAG: Snakemake keeps global state):
    python tests/dag_jobs.py [--snakefile SNAKEFILE] WORKDIR CONFIGFILE [CONFIGFILE ...]
Nothing runs: the DAG is built with every job forced, exactly as a dry run would see it. The Snakefile is
this checkout's unless ``--snakefile`` names another (e.g. of a copy of the project).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from snakemake.io import is_flagged

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
from pipeline_dag import built_dag  # noqa: E402  (tools/pipeline_dag.py: one copy of the Snakemake API set-up)


def jobs(workdir: Path, configfiles: list[Path], snakefile: Path = REPO / "Snakefile") -> list[dict]:
    with built_dag(workdir, configfiles, snakefile) as w:
        return [{"rule": j.rule.name, "output": sorted(str(o) for o in j.output),
                 "directories": sorted(str(o) for o in j.output if is_flagged(o, "directory")),
                 "input": sorted(str(i) for i in j.input),
                 "params": repr(sorted(dict(j.params.items()).items()))} for j in w.dag.jobs]


if __name__ == "__main__":
    args = sys.argv[1:]
    snakefile = REPO / "Snakefile"
    if args[:1] == ["--snakefile"]:
        snakefile, args = Path(args[1]).resolve(), args[2:]
    for row in jobs(Path(args[0]), [Path(p) for p in args[1:]], snakefile):
        print(json.dumps(row))
