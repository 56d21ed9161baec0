"""The pipeline's DAG for a config, built through Snakemake's API without running anything.

Shared by the tools (`tools/estimate.py`, `tools/slurm/check_requests.py`) and the tests that read the DAG
(`tests/dag_jobs.py`): ``with built_dag(workdir, configfiles) as w: w.dag.jobs``. Snakemake keeps global
state, so build one DAG per process.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@contextmanager
def built_dag(workdir: Path, configfiles: list[Path], snakefile: Path = REPO / "Snakefile", *, cores: int = 2,
              default_resources=None, overwrite_resources=None, forceall: bool = True):
    """The Snakemake workflow of ``snakefile`` with its DAG built for ``configfiles``: every job forced (as
    ``snakemake -n --forceall`` sees it) or, with ``forceall=False``, only the jobs a run in ``workdir``
    would still do. Nothing runs. Yields the workflow (``.dag.jobs``, ``.globals["config"]``)."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import (
        ConfigSettings,
        DAGSettings,
        DeploymentSettings,
        OutputSettings,
        ResourceSettings,
        StorageSettings,
        WorkflowSettings,
    )

    resources = ResourceSettings(cores=cores, nodes=cores, default_resources=default_resources,
                                 overwrite_resources=overwrite_resources or {})
    with SnakemakeApi(OutputSettings(quiet={"all"})) as api:
        wf = api.workflow(resource_settings=resources, config_settings=ConfigSettings(configfiles=configfiles),
                          storage_settings=StorageSettings(), workflow_settings=WorkflowSettings(),
                          deployment_settings=DeploymentSettings(), snakefile=snakefile, workdir=workdir)
        dag_api = wf.dag(DAGSettings(forceall=forceall))
        w = dag_api.workflow_api._workflow
        w._prepare_dag(forceall=forceall, ignore_incomplete=True, lock_warn_only=True, nolock=True)
        w._build_dag()
        yield w
