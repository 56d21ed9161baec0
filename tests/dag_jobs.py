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
from contextlib import contextmanager
from pathlib import Path

from snakemake.api import SnakemakeApi
from snakemake.io import is_flagged
from snakemake.settings.types import (
    ConfigSettings,
    DAGSettings,
    DeploymentSettings,
    OutputSettings,
    ResourceSettings,
    StorageSettings,
    WorkflowSettings,
)

REPO = Path(__file__).resolve().parents[1]


@contextmanager
def built_dag(workdir: Path, configfiles: list[Path], snakefile: Path = REPO / "Snakefile"):
    """The Snakemake workflow of ``snakefile`` with its DAG built for ``configfiles``, every job forced (as a
    dry run sees it); nothing runs. Yields the workflow (``.dag.jobs``, ``.globals["config"]``)."""
    with SnakemakeApi(OutputSettings(quiet={"all"})) as api:
        wf = api.workflow(resource_settings=ResourceSettings(cores=2),
                          config_settings=ConfigSettings(configfiles=configfiles),
                          storage_settings=StorageSettings(), workflow_settings=WorkflowSettings(),
                          deployment_settings=DeploymentSettings(), snakefile=snakefile, workdir=workdir)
        dag_api = wf.dag(DAGSettings(forceall=True))
        w = dag_api.workflow_api._workflow
        w._prepare_dag(forceall=True, ignore_incomplete=True, lock_warn_only=True, nolock=True)
        w._build_dag()
        yield w


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
