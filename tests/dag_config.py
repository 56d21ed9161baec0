"""Print what the pipeline's jobs receive for a config, as JSON lines (nothing runs):

    python tests/dag_config.py WORKDIR CONFIGFILE [CONFIGFILE ...]

The first line is ``{"config": ...}``: the merged, schema-validated config that the rules read (the
``config`` of the Snakefile's namespace after ``workflow/rules/common.smk`` validated it). Every further
line is one job of the DAG (every job forced, as a dry run would see it): ``{"rule", "output", "params"}``
with the params as JSON (a value JSON cannot hold becomes its repr). A fresh process per config, because
Snakemake keeps global state.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from dag_jobs import built_dag


def dump(workdir: Path, configfiles: list[Path]):
    with built_dag(workdir, configfiles) as w:
        yield {"config": w.globals["config"]}
        for j in w.dag.jobs:
            yield {"rule": j.rule.name, "output": sorted(str(o) for o in j.output),
                   "params": dict(j.params.items())}


if __name__ == "__main__":
    for row in dump(Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]]):
        print(json.dumps(row, default=repr))
