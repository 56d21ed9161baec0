# Shared helpers: config validation, target registry, path helpers.
# Rule files call these; nothing here runs a job.
import os
from pathlib import Path

from scalable_bayes.config import ConfigError, validate_config

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


def paper_code(paper, *modules):
    """Source files of a paper's modules (``"figures"``, ``"claims"``, ``"tables"``) under
    ``src/scalable_bayes_papers/<paper>/``, as inputs of its figure and table rules: editing a figure
    or a claim check re-runs those rules (and only them), so no claim goes stale; compute rules do not
    depend on them, so changing a colour re-runs no sampler."""
    root = Path(workflow.basedir) / "src" / "scalable_bayes_papers" / paper
    files = [root / f"{m}.py" for m in modules]
    missing = [str(f) for f in files if not f.exists()]
    if missing:
        raise WorkflowError(f"paper_code({paper!r}): no such module(s) {missing}")
    return [str(f) for f in files]


# Conda environment of every rule for `--use-conda` users (envs/pipeline.post-deploy.sh installs
# the scalable_bayes library into it).
CONDA_ENV = "../../envs/pipeline.yaml"
