"""The paper profile is the papers' settings: no quick value reaches a paper-profile job unnoticed.

Snakemake merges ``--configfile=config/paper.yaml`` over the default ``config/config.yaml`` key by key
(dicts merge recursively), so a key that ``paper.yaml`` does not name keeps its QUICK value. Here the
merged, schema-validated paper config is built as the Snakefile builds it, and every leaf it inherits
unchanged from ``config.yaml`` is found. An inherited leaf that is a scale knob (a cap on documents, a
number of iterations, seeds, samples, draws, a grid, ...) or whose quick value differs from the schema's
default must be either declared in ``paper.yaml`` (the paper's value, or the same value with a comment
why it stays) or listed in ``INHERITED_ON_PURPOSE`` below with the reason.

Each paper README's "Paper profile" table (``| `config key` | `value` | ... |``) names the settings that
are the paper's; they must be what the paper profile gives, and (checked on the DAG) what the jobs get.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from scalable_bayes_papers.config import ConfigError, validate_config

REPO = Path(__file__).resolve().parents[1]
SCHEMAS = REPO / "workflow" / "schemas"
PAPERS = ("vmf", "sgnht", "sggmc", "scir", "esca")
MISSING = object()

# A key (any segment of its path) that sets how much work a job does or on how much data.
SCALE_KNOB = re.compile(
    r"^(max_|min_|n_)|(^|_)(seeds|burnin|burn|iter|docs|users|samples|steps|draws|sweeps|grid|dims|points"
    r"|restarts|time|every|proportions|severities|sizes|per_class|datasets|corpora|pairs|methods|tasks)$"
)

# Inherited from the quick config on purpose: path -> why the quick value is also the paper profile's.
INHERITED_ON_PURPOSE = {
    "scir.lda.step.SCIR.h": "tuned step schedule (ours; the paper's is not stated): benchmarks/README_scir.md (d)",
    "scir.lda.step.SCIR.tau": "as scir.lda.step.SCIR.h",
    "scir.lda.step.SCIR.kappa": "as scir.lda.step.SCIR.h",
    "scir.lda.step.SGRLD.h": "as scir.lda.step.SCIR.h",
    "scir.lda.step.SGRLD.tau": "as scir.lda.step.SCIR.h",
    "scir.lda.step.SGRLD.kappa": "as scir.lda.step.SCIR.h",
    "scir.lda.heldout_sweeps": "document-completion sweeps per held-out document (ours, the schema's default): "
                               "a property of the score, not of the scale",
    "scir.lda.sweeps": "within-document Gibbs sweeps per iteration (ours, the schema's default): part of the sampler",
    "scir.lda.burn": "as scir.lda.sweeps",
    "scir.dp.max_clusters": "a hard cap that is an error when exceeded, not a subsample (the schema's default)",
    "scir.simplex.tune.step_sizes": "the tuning grid of the simplex samplers (the schema's default, seconds of work)",
    "vmf.fig4.n_points": "the paper's setting (schema default): Fig. 4's curve resolution",
    "vmf.fig4.dims": "the paper's setting (schema default)",
}


def _load(name: str) -> dict:
    return yaml.safe_load((REPO / "config" / name).read_text())


def paper_profile(quick: dict | None = None, paper: dict | None = None) -> dict:
    """The paper profile as the Snakefile builds it: config.yaml, then paper.yaml merged over it by
    Snakemake's own recursive update, then validated (defaults filled in) by common.smk's validate_config."""
    from snakemake.utils import update_config

    merged = copy.deepcopy(quick if quick is not None else _load("config.yaml"))
    update_config(merged, paper if paper is not None else _load("paper.yaml"))
    return validate_config(merged, SCHEMAS)


def _leaves(d: dict, prefix: tuple = ()):
    for k, v in d.items():
        if isinstance(v, dict) and v:
            yield from _leaves(v, prefix + (k,))
        else:
            yield prefix + (k,), v


def _get(d, path):
    for k in path:
        if not isinstance(d, dict) or k not in d:
            return MISSING
        d = d[k]
    return d


def _schema_default(cfg: dict, path: tuple):
    """The value the schema fills in when ``path`` is absent (MISSING: no default)."""
    c = copy.deepcopy(cfg)
    del _get(c, path[:-1])[path[-1]]
    try:
        return _get(validate_config(c, SCHEMAS), path)
    except ConfigError:
        return MISSING


def inherited_quick_values(quick: dict | None = None, paper: dict | None = None) -> dict[str, tuple]:
    """path -> (value, why it needs a decision) of every leaf the paper profile takes unchanged from the
    quick config that is a scale knob or differs from the schema's default."""
    quick = quick if quick is not None else _load("config.yaml")
    paper = paper if paper is not None else _load("paper.yaml")
    merged = paper_profile(quick, paper)
    out = {}
    for path, value in _leaves(merged):
        if path[0] not in PAPERS + ("data",) or _get(paper, path) is not MISSING or _get(quick, path) is MISSING:
            continue
        knob = any(SCALE_KNOB.search(str(k)) for k in path)
        default = _schema_default(merged, path)
        if knob or default is MISSING or default != value:
            why = "a scale knob" if knob else ("no schema default" if default is MISSING
                                               else f"schema default {default!r}")
            out[".".join(map(str, path))] = (value, why)
    return out


def test_no_quick_value_reaches_the_paper_profile_unstated():
    found = inherited_quick_values()
    unstated = {k: v for k, v in found.items() if k not in INHERITED_ON_PURPOSE}
    assert not unstated, (
        "the paper profile inherits these QUICK values from config/config.yaml (Snakemake merges "
        "config/paper.yaml over it key by key). Set the paper's value in config/paper.yaml, or the same value "
        "with a comment why it stays, or list the key in INHERITED_ON_PURPOSE (tests/test_paper_profile.py) "
        "with the reason:\n" + "\n".join(f"  {k}: {v!r} ({why})" for k, (v, why) in sorted(unstated.items())))
    stale = sorted(set(INHERITED_ON_PURPOSE) - set(found))
    assert not stale, f"INHERITED_ON_PURPOSE names keys the paper profile no longer inherits: {stale}"


def test_the_finder_sees_through_nested_blocks():
    """A key only the quick config has, deep in a block that paper.yaml also sets, is found (a cap in
    esca.throughput.run once reached the paper profile that way), and so is a quick-only map entry."""
    quick, paper = _load("config.yaml"), _load("paper.yaml")
    quick["esca"]["throughput"]["run"]["max_train_docs"] = 1234
    paper["esca"]["throughput"]["run"].pop("max_train_docs", None)
    quick["esca"]["fig2"]["n_iter_by_method"]["CVB0"] = 7
    found = inherited_quick_values(quick, paper)
    assert found["esca.throughput.run.max_train_docs"][0] == 1234
    assert found["esca.fig2.n_iter_by_method.CVB0"][0] == 7


README_ROW = re.compile(r"^\|\s*`([a-z0-9_.A-Z]+)`\s*\|\s*`([^`]*)`\s*\|")


def readme_paper_settings(paper: str) -> dict[str, object]:
    """``config key -> value`` of the table under "## Paper profile" in the paper's README."""
    text = (REPO / "src" / "scalable_bayes_papers" / paper / "README.md").read_text()
    m = re.search(r"^## Paper profile\b.*?(?=^## |\Z)", text, re.S | re.M)
    assert m, f"src/scalable_bayes_papers/{paper}/README.md has no '## Paper profile' section"
    rows = {}
    for line in m.group(0).splitlines():
        r = README_ROW.match(line)
        if r:
            rows[r.group(1)] = yaml.safe_load(r.group(2))
    assert rows, f"the '## Paper profile' section of {paper}'s README has no `key` | `value` rows"
    return rows


@pytest.mark.parametrize("paper", PAPERS)
def test_readme_paper_settings_are_the_paper_profile(paper):
    cfg = paper_profile()
    wrong = []
    for key, value in readme_paper_settings(paper).items():
        got = _get(cfg, tuple(key.split(".")))
        if got is MISSING:
            wrong.append(f"{key}: not a key of the paper profile")
        elif got != value:
            wrong.append(f"{key}: the README says {value!r}, the paper profile gives {got!r}")
    assert not wrong, f"src/scalable_bayes_papers/{paper}/README.md, '## Paper profile':\n" + "\n".join(wrong)


@pytest.fixture(scope="module")
def paper_dag(tmp_path_factory):
    """(config the rules read, jobs) of the paper profile's DAG (nothing runs; ~10 s)."""
    workdir = tmp_path_factory.mktemp("paper_dag")
    (workdir / "config").symlink_to(REPO / "config")
    proc = subprocess.run([sys.executable, str(REPO / "tests" / "dag_config.py"), str(workdir),
                           str(REPO / "config" / "paper.yaml")],
                          capture_output=True, text=True, timeout=600, cwd=REPO / "tests")
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    rows = [json.loads(ln) for ln in proc.stdout.splitlines() if ln.startswith("{")]
    return rows[0]["config"], rows[1:]


def test_the_rules_read_this_paper_profile(paper_dag):
    """What this file checks is what the Snakefile validated and its rules read."""
    cfg, _ = paper_dag
    assert json.loads(json.dumps(paper_profile())) == cfg


def test_paper_jobs_get_every_document(paper_dag):
    """The caps that once reached paper jobs: Fig. 5 of SGGMC and the ESCA throughput runs take every
    document of their splits, and ESCA's Fig. 2 series runs its declared iterations."""
    cfg, jobs = paper_dag
    fig5 = [j for j in jobs if j["rule"] == "sggmc_fig5_runs"]
    assert len(fig5) == 16
    for j in fig5:
        s = j["params"]["settings"]
        assert s["max_train_docs"] is None and s["max_test_docs"] is None, (j["output"], s)
    tp = [j for j in jobs if j["rule"] == "esca_lda_runs" and j["output"][0].startswith("results/esca/runs/throughput/")]
    assert tp
    for j in tp:
        assert j["params"]["settings"]["max_train_docs"] is None, (j["output"], j["params"]["settings"])
    esca_fig2 = [j for j in jobs if j["rule"] == "esca_lda_runs" and "/fig2/" in j["output"][0]
                 and "/ESCA~" in j["output"][0]]
    assert esca_fig2
    for j in esca_fig2:
        assert j["params"]["settings"]["n_iter"] == cfg["esca"]["fig2"]["n_iter_by_method"]["ESCA"]
