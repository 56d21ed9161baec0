# Shared helpers: config validation, target registry, path helpers.
# Rule files call these; nothing here runs a job.
import os
from pathlib import Path

from scalable_bayes.config import ConfigError, validate_config
from scalable_bayes.dependencies import ImportGraph

PAPERS = ["vmf", "sgnht", "sggmc", "scir", "esca"]

try:
    config = validate_config(config, Path(workflow.basedir) / "workflow" / "schemas")
except ConfigError as err:
    raise WorkflowError(str(err)) from None

PROFILE = config["profile"]

# paper -> function returning the list of its figure/table/claim files for the active config
PAPER_TARGETS = {}


def is_active(paper):
    return bool(config.get(paper, {}).get("activate", False))


def paper_targets(paper):
    if not is_active(paper) or paper not in PAPER_TARGETS:
        return []
    return list(PAPER_TARGETS[paper]())


def claim_targets():
    """Every claim file the active config produces (data claims + each active paper's)."""
    out = list(PAPER_TARGETS["data"]()) if "data" in PAPER_TARGETS else []
    for paper in PAPERS:
        out += paper_targets(paper)
    return sorted({p for p in out if Path(p).parent.name == "claims" and p.endswith(".json")})


def all_targets():
    out = list(PAPER_TARGETS["data"]()) if "data" in PAPER_TARGETS else []
    for paper in PAPERS:
        out += paper_targets(paper)
    out += ["results/claims.md"]
    return out


# The project's own code, read once per workflow parse (each module's imports are read once).
_SRC = Path(workflow.basedir) / "src"
_IMPORT_GRAPH = ImportGraph([_SRC], ["scalable_bayes", "scalable_bayes_papers"])
_CODE_INPUTS = {}


def code_inputs(script):
    """Source files under ``src/`` of every module a job's code imports, transitively, as the inputs
    of the rule that runs it: a job re-runs when the code it runs changes, and an edit re-runs only the
    jobs whose code imports the edited file.

    Followed are the modules of ``scalable_bayes`` and ``scalable_bayes_papers``, read statically
    (:class:`scalable_bayes.dependencies.ImportGraph`: imports inside functions count, and every parent
    package's ``__init__.py``, as importing a module runs it); any edit of those files counts, a comment
    too. A workflow script itself is not listed: Snakemake's code trigger follows it. A compute rule runs
    a script that imports no ``figures`` / ``claims`` / ``tables`` module, so its inputs hold none of
    them and changing a colour re-runs no sampler (``tests/test_workflow.py``). Computed once per script
    or module (the DAG of a few hundred jobs reads each module once).

    Parameters
    ----------
    script : str
        File name of a script in ``workflow/scripts/`` (``"sggmc_fig3_runs.py"``), or the dotted name of
        a module a shell rule runs with ``python -m`` (``"scalable_bayes_papers.esca.mpi_run"``; its own
        file is listed too).

    Returns
    -------
    list of str
        Absolute paths, sorted.
    """
    files = _CODE_INPUTS.get(script)
    if files is None:
        if script.endswith(".py"):
            path = Path(workflow.basedir) / "workflow" / "scripts" / script
            if not path.is_file():
                raise WorkflowError(f"code_inputs({script!r}): no such script {path}")
            found = _IMPORT_GRAPH.closure(scripts=[path])
        else:
            found = _IMPORT_GRAPH.closure(modules=[script])
            if not found:
                raise WorkflowError(f"code_inputs({script!r}): no such module under {_SRC}")
        files = _CODE_INPUTS[script] = [str(f) for f in found]
    return files


# Conda environment of every rule for `--use-conda` users (envs/pipeline.post-deploy.sh installs
# the scalable_bayes library into it).
CONDA_ENV = "../../envs/pipeline.yaml"
