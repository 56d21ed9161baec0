# Shared helpers: config validation, target registry, path helpers.
# Rule files call these; nothing here runs a job.
import os
from pathlib import Path

from scalable_bayes_papers.config import ConfigError, apply_seed_offset, validate_config
from scalable_bayes_papers.config import seed_range as _seed_range, with_seed_offset as _with_seed_offset
from scalable_bayes.dependencies import ImportGraph

PAPERS = ["vmf", "sgnht", "sggmc", "scir", "esca"]

try:
    # Validated (defaults filled in), then every seed key moved by seed_offset (0: unchanged).
    config = apply_seed_offset(validate_config(config, Path(workflow.basedir) / "workflow" / "schemas"))
except ConfigError as err:
    raise WorkflowError(str(err)) from None

PROFILE = config["profile"]
# A replication's shift of every seed (config key seed_offset; config/README.md "Replications"). The seed
# keys of the config are moved already; these two helpers carry it to the counts n_seeds and to the jobs
# whose code draws from a fixed seed of its own. At 0 both return what they are given.
SEED_OFFSET = config["seed_offset"]


def seed_range(n):
    """Seeds of a count ``n_seeds``: SEED_OFFSET .. SEED_OFFSET + n - 1 (0 .. n - 1 in the default run)."""
    return _seed_range(n, SEED_OFFSET)


def with_seed_offset(settings):
    """A job's settings plus ``seed_offset`` when it is not 0 (for code with a fixed seed of its own)."""
    return _with_seed_offset(settings, SEED_OFFSET)


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


# ---- What a job costs, and what it asks a cluster for -------------------------------------------
# Every compute rule has a cost model: a function of the job's wildcards (through its settings) that
# predicts the job's CPU time and peak resident memory. Its sbatch requests (mem_mb, runtime) follow
# from the prediction with the margins below, and the prediction itself travels with the job as the
# resources cost_cpu_s and cost_mem_mb, which nothing schedules on: tools/estimate.py sums them into
# the cost of a config and tools/slurm/check_requests.py compares them with the requests and the nodes.
# Calibration: the models are fitted to the benchmark files (benchmarks/<paper>/<rule>/...tsv, the
# cpu_time and max_rss columns) of measured runs; each model says which runs, and how it scales.


class Cost:
    """Predicted cost of one job: ``cpu_s`` CPU seconds (on one core of the reference machine: the
    project's 2-core x86-64 development machine, where the models were calibrated), ``mem_mb`` peak
    resident memory (MB), ``threads`` cores the job asks for and uses, ``wall_s`` its wall time on them
    (default ``cpu_s / threads``: every thread busy throughout)."""

    __slots__ = ("cpu_s", "mem_mb", "threads", "wall_s")

    def __init__(self, cpu_s, mem_mb, threads=1, wall_s=None):
        self.cpu_s, self.mem_mb, self.threads = float(cpu_s), float(mem_mb), int(threads)
        self.wall_s = self.cpu_s / max(1, self.threads) if wall_s is None else float(wall_s)

    def __repr__(self):
        return (f"Cost(cpu_s={self.cpu_s:.0f}, mem_mb={self.mem_mb:.0f}, threads={self.threads}, "
                f"wall_s={self.wall_s:.0f})")


# Python, numpy, pandas, numba and the library loaded: the resident floor of every job (measured
# 170-300 MB for the lightest jobs); the Numba compilation of a sampler's kernels on a cold cache
# takes 5-40 s of CPU (the first job of each kind in a fresh clone; later ones load it from the cache):
# 10 s is counted per job, and the 5 minutes every request adds cover a cold cache.
BASE_MEM_MB = 350
COMPILE_CPU_S = 10
# Requests from predictions. Memory: 1.3 x the prediction + 300 MB (the models are fitted to the
# largest measured peak, within ~15% of it), in steps of 100 MB. Time: 2 x the predicted wall time
# (a cluster core can be slower than the reference machine's) + 5 minutes of start-up, doubled on each
# retry (the profile retries once: a job that ran out of time on a slow or loaded node asks for more).
# The predicted wall time travels as cost_wall_s (tools/estimate.py schedules on it).
MEM_MARGIN, MEM_SLACK_MB = 1.3, 300
TIME_MARGIN, TIME_SLACK_MIN = 2.0, 5


def request_mem_mb(cost):
    return int(-(-(MEM_MARGIN * cost.mem_mb + MEM_SLACK_MB) // 100) * 100)


def request_runtime(cost, attempt=1):
    return int(TIME_SLACK_MIN + -(-TIME_MARGIN * cost.wall_s // 60)) * int(attempt)


def cost_resources(model, runtime=None):
    """Resources of a rule whose jobs cost ``model(wildcards) -> Cost``: ``mem_mb`` and ``runtime`` (the
    sbatch --mem and --time) from the prediction, and the prediction itself (``cost_cpu_s``,
    ``cost_mem_mb``, ``cost_threads``) for the estimate and the request check. Use as ``resources:
    **cost_resources(f)``; the rule's ``threads`` must be ``model(...).threads`` (check_requests.py fails
    on a job whose threads differ). ``runtime`` (minutes) replaces the request
    of a job whose wall time is not its CPU time (a download)."""
    memo = {}  # one prediction per job, shared by its six resources

    def cost(wildcards):
        key = tuple(sorted(wildcards.items()))
        if key not in memo:
            memo[key] = model(wildcards)
        return memo[key]

    return {
        "mem_mb": lambda wildcards: request_mem_mb(cost(wildcards)),
        "runtime": (lambda wildcards, attempt: request_runtime(cost(wildcards), attempt)) if runtime is None
        else runtime,
        "cost_cpu_s": lambda wildcards: int(round(cost(wildcards).cpu_s)),
        "cost_mem_mb": lambda wildcards: int(round(cost(wildcards).mem_mb)),
        "cost_threads": lambda wildcards: cost(wildcards).threads,
        "cost_wall_s": lambda wildcards: int(round(cost(wildcards).wall_s)),
    }


def fixed_cost(cpu_s, mem_mb, threads=1):
    """Model of a rule whose jobs cost the same whatever their settings (figures, tables, small data)."""
    cost = Cost(cpu_s, mem_mb, threads)
    return lambda wildcards: cost


def light_resources(mem_mb, runtime=10):
    """Resources of a figure, table or claims job: not modelled (each takes seconds, together a few per cent
    of a run); ``mem_mb`` is set by hand from the data the job reads, and the estimate counts it as 30 s of
    CPU and half its memory request."""
    return {"mem_mb": mem_mb, "runtime": runtime, "cost_cpu_s": 30, "cost_mem_mb": mem_mb // 2, "cost_threads": 1,
            "cost_wall_s": 30}
