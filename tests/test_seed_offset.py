"""``seed_offset``: a replication moves every seed of a run, and the default (0) moves nothing.

``seed_offset: K`` (config/README.md "Replications") adds K to every seed key of the config (``seed``,
``seeds``, ``<something>_seed``), turns every count ``n_seeds`` into the seeds K .. K + n - 1 and hands K to
the jobs whose code draws from a fixed seed of its own. Checked here:

* on the config: with K = 0 nothing changes; with K = 1000 every seed key of the shipped profiles moved by
  exactly 1000 and nothing else changed, and every seed key is listed in config/README.md;
* on the DAG (built, nothing runs): ``seed_offset: 0`` gives the default DAG job for job (rule, outputs,
  inputs, params); ``seed_offset: 1000`` gives the same jobs with every seed in a path or a param moved by
  1000 and ``seed_offset`` in the params of exactly the jobs with fixed seeds of their own; the smoke profile's
  DAG builds with it, and in a run directory of its own (``--directory``) without a ``config/`` there;
* on the code the pipeline runs: no literal seed other than the ones config/README.md lists, and the fixed
  seeds of the paper code (ESCA document subsamples, SGGMC Fig. 5 subsets, SGNHT data splits) move by the
  job's seed_offset and stay put without it.
"""

from __future__ import annotations

import ast
import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from scalable_bayes_papers.config import (
    MAX_SEED,
    ConfigError,
    apply_seed_offset,
    is_seed_key,
    seed_keys,
    seed_range,
    validate_config,
    with_seed_offset,
)

REPO = Path(__file__).resolve().parents[1]
SCHEMAS = REPO / "workflow" / "schemas"
OFFSET = 1000
# The rules whose jobs get seed_offset in their params: their code draws from a fixed seed of its own
# (config/README.md "Replications"). The distributed ESCA rows get it as --seed-offset in their shell args.
FIXED_SEED_RULES = {"esca_lda_runs", "esca_tabu3_runs", "sggmc_fig5_runs", "sgnht_ml_runs"}


def _load(name: str) -> dict:
    return yaml.safe_load((REPO / "config" / name).read_text())


def _profile(*overlays: str, **top) -> dict:
    """config.yaml with the named files merged over it (Snakemake's recursive update), then ``top``, validated."""
    from snakemake.utils import update_config

    cfg = _load("config.yaml")
    for name in overlays:
        update_config(cfg, _load(name))
    cfg.update(top)
    return validate_config(cfg, SCHEMAS)


def _pairs(a, b, path=""):
    """(key path, value in a, value in b) of every leaf of two configs of the same shape (seed keys as leaves)."""
    assert type(a) is type(b), f"{path}: {a!r} vs {b!r}"
    if isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for k in a:
            where = f"{path}.{k}" if path else k
            if is_seed_key(k):
                yield where, a[k], b[k]
            else:
                yield from _pairs(a[k], b[k], where)
    elif isinstance(a, list) and a and isinstance(a[0], (dict, list)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            yield from _pairs(x, y, f"{path}.{i}")
    else:
        yield path, a, b


# ---- the config ----------------------------------------------------------------------------------------

def test_seed_keys_are_the_seeds_not_the_counts_nor_the_offset():
    for k in ("seed", "seeds", "data_seed", "split_seed", "bootstrap_seeds"):
        assert is_seed_key(k), k
    for k in ("n_seeds", "seed_offset", "reseed", "seeded", "n_restarts", "seedling"):
        assert not is_seed_key(k), k


def test_seed_offset_defaults_to_0_and_0_returns_the_config_as_it_is():
    cfg = _profile()
    assert cfg["seed_offset"] == 0
    assert apply_seed_offset(cfg) is cfg
    assert apply_seed_offset(copy.deepcopy(cfg)) == _profile(seed_offset=0)


@pytest.mark.parametrize("overlays", [(), ("smoke.yaml",), ("paper.yaml",), ("replication.yaml",)],
                         ids=["quick", "smoke", "paper", "replication"])
def test_every_seed_key_moves_by_the_offset_and_nothing_else_changes(overlays):
    base = _profile(*overlays, seed_offset=0)
    moved = apply_seed_offset(_profile(*overlays, seed_offset=OFFSET))
    assert moved["seed_offset"] == OFFSET
    moved_keys = []
    for where, a, b in _pairs({**base, "seed_offset": OFFSET}, moved):
        leaf = where.rsplit(".", 1)[-1]
        if is_seed_key(leaf):
            moved_keys.append(where)
            if isinstance(a, list):
                assert b == [s + OFFSET for s in a], where
            else:
                assert b == a + OFFSET, where
        else:
            assert a == b, f"{where} changed: {a!r} -> {b!r}"
    assert set(moved_keys) == {w for w, _ in seed_keys(base)}
    assert len(moved_keys) >= 14, moved_keys  # data.seed and the seed keys of the five paper blocks


def test_the_replication_config_is_the_default_with_an_offset():
    rep = _load("replication.yaml")
    assert rep == {"seed_offset": OFFSET}, "replication.yaml merges over config.yaml; it sets the offset only"
    assert _profile("replication.yaml") == _profile(seed_offset=OFFSET)


def test_every_seed_key_and_count_is_listed_in_the_config_readme():
    """config/README.md "Replications" lists every seed of the pipeline with the decision: a new seed key in a
    shipped profile fails here until it is listed (moved or not, and why)."""
    text = (REPO / "config" / "README.md").read_text().split("## Replications", 1)[1]
    listed = set(re.findall(r"`([\w.]+)`", text))
    keys = set()
    for overlays in [(), ("smoke.yaml",), ("paper.yaml",)]:
        keys |= {w for w, _ in seed_keys(_profile(*overlays))}

    def counts(node, path=""):
        for k, v in node.items():
            where = f"{path}.{k}" if path else k
            if k == "n_seeds":
                yield where
            elif isinstance(v, dict):
                yield from counts(v, where)

    keys |= set(counts(_profile("paper.yaml")))
    missing = sorted(k for k in keys if k not in listed)
    assert not missing, f"seed keys not listed in config/README.md 'Replications': {missing}"


def test_a_seed_moved_past_the_largest_is_refused_naming_the_key():
    cfg = _profile(seed_offset=MAX_SEED - 5)
    with pytest.raises(ConfigError) as info:
        apply_seed_offset(cfg)
    msg = str(info.value)
    assert "config key 'esca.fig3.seeds.19'" in msg and "seed_offset" in msg and "largest seed" in msg
    assert "config key 'data.seed'" not in msg  # 0 + MAX_SEED - 5 is still a seed


def test_a_negative_offset_is_refused_by_the_schema():
    with pytest.raises(ConfigError, match="config key 'seed_offset'"):
        _profile(seed_offset=-1)


def test_seed_range_and_with_seed_offset():
    assert list(seed_range(3)) == [0, 1, 2]
    assert list(seed_range(3, OFFSET)) == [1000, 1001, 1002]
    s = {"a": 1}
    assert with_seed_offset(s, 0) is s
    assert with_seed_offset(s, 7) == {"a": 1, "seed_offset": 7} and s == {"a": 1}


# ---- the DAG -------------------------------------------------------------------------------------------

def _dag(tmp_path: Path, name: str, *configs: str, link_config: bool = True, **top) -> tuple[dict, list[dict]]:
    """(config, jobs) of the DAG for config.yaml + ``configs`` + ``top`` (tests/dag_config.py, a fresh process)."""
    wd = tmp_path / name
    wd.mkdir()
    if link_config:
        (wd / "config").symlink_to(REPO / "config")
    files = [REPO / "config" / "config.yaml", *(REPO / "config" / c for c in configs)]
    if top:
        extra = tmp_path / f"{name}.yaml"
        extra.write_text(yaml.safe_dump(top))
        files.append(extra)
    proc = subprocess.run([sys.executable, str(REPO / "tests" / "dag_config.py"), str(wd), *map(str, files)],
                          capture_output=True, text=True, cwd=REPO, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    return rows[0]["config"], rows[1:]


def _seeds_in(text: str) -> list[int]:
    return [int(s) for s in re.findall(r"seed(\d+)", text)]


def _unshift_path(p: str, offset: int) -> str:
    return re.sub(r"seed(\d+)", lambda m: f"seed{int(m.group(1)) - offset}", p)


def _unshift(value, offset: int, key: str | None = None):
    """A replication job's params as the default run's: seed values minus ``offset``, no seed_offset key,
    the distributed ESCA rows' ``--seed K --seed-offset K`` back to ``--seed 0``."""
    if isinstance(value, dict):
        return {k: _unshift(v, offset, k) for k, v in value.items() if k != "seed_offset"}
    if key is not None and is_seed_key(key):
        return [v - offset for v in value] if isinstance(value, list) else value - offset
    if isinstance(value, list):
        return [_unshift(v, offset) for v in value]
    if isinstance(value, str) and "--seed" in value:
        value = re.sub(rf" --seed-offset {offset}\b", "", value)
        return re.sub(r"--seed (\d+)", lambda m: f"--seed {int(m.group(1)) - offset}", value)
    return value


def _key(job: dict, offset: int = 0):
    return job["rule"], tuple(_unshift_path(o, offset) for o in job["output"])


@pytest.fixture(scope="module")
def default_dag(tmp_path_factory):
    return _dag(tmp_path_factory.mktemp("dag"), "default")


@pytest.mark.slow
def test_offset_0_leaves_every_job_of_the_default_dag_as_it_is(default_dag, tmp_path):
    _, jobs = default_dag
    _, zero = _dag(tmp_path, "zero", seed_offset=0)
    assert len(jobs) > 100
    assert zero == jobs  # rule, outputs (wildcards) and params of every job, in the same order


@pytest.mark.slow
def test_offset_1000_moves_every_seed_of_the_default_dag_and_nothing_else(default_dag, tmp_path):
    _, jobs = default_dag
    cfg, rep = _dag(tmp_path, "replication", "replication.yaml")
    assert cfg["seed_offset"] == OFFSET
    assert len(rep) == len(jobs)
    by_key = {_key(j): j for j in jobs}
    got_offset = set()
    seeds_seen = 0
    for j in rep:
        seeds = _seeds_in(" ".join(j["output"]))
        assert all(s >= OFFSET for s in seeds), (j["rule"], j["output"])
        seeds_seen += len(seeds)
        base = by_key.get(_key(j, OFFSET))
        assert base is not None, f"{j['rule']} {j['output']}: no such job in the default DAG"
        if "seed_offset" in j["params"].get("settings", {}):
            assert j["params"]["settings"]["seed_offset"] == OFFSET
            got_offset.add(j["rule"])
        if "--seed-offset" in str(j["params"].get("args", "")):
            got_offset.add(j["rule"])
        assert _unshift(j["params"], OFFSET) == base["params"], j["rule"]
    assert seeds_seen > 100
    assert got_offset == FIXED_SEED_RULES | {"esca_throughput_mpi_runs"}


def test_a_smoke_replication_builds_in_a_directory_of_its_own(tmp_path):
    """The smoke profile with the offset (config/smoke.yaml + config/replication.yaml), in a run directory that
    has no config/ of its own (--directory: the Snakefile's default config is found beside it)."""
    _, base = _dag(tmp_path, "smoke", "smoke.yaml")
    cfg, rep = _dag(tmp_path, "smoke_rep", "smoke.yaml", "replication.yaml", link_config=False)
    assert cfg["profile"] == "smoke" and cfg["seed_offset"] == OFFSET and cfg["data"]["seed"] == OFFSET
    assert sorted(_key(j, OFFSET) for j in rep) == sorted(_key(j) for j in base)
    assert min(s for j in rep for s in _seeds_in(" ".join(j["output"]))) == OFFSET


# ---- literal seeds in the code the pipeline runs -------------------------------------------------------

# (file under src/, source text) -> why it is a literal and what happens to it in a replication
LITERAL_SEEDS = {
    ("scalable_bayes_papers/esca/data.py", "TRAIN_SUBSAMPLE_SEED = 12345"):
        "moved: training_docs adds the job's seed_offset",
    ("scalable_bayes_papers/esca/data.py", "HELDOUT_SUBSAMPLE_SEED = 54321"):
        "moved: heldout_docs adds the job's seed_offset",
    ("scalable_bayes_papers/esca/figures.py", "np.random.default_rng(0)"):
        "not moved: Fig. 3's plotting jitter, no number depends on it",
    ("scalable_bayes_papers/esca/tables.py", "runs.assign(seed=0)"):
        "not a random stream: the label of run tables without a seed column",
}
_RNG_CALLS = {"default_rng", "RandomState", "rng_from_seed", "make_key", "SeedSequence", "seed"}


def _literal(node) -> bool:
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
        return _literal(node.elts[0])
    return isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool)


def literal_seeds(files) -> list[tuple[str, str]]:
    """(file, source) of every literal seed in ``files``: a generator seeded with a number, a ``seed=`` /
    ``random_state=`` / ``*_seed=`` keyword given a number, a name with SEED in it assigned a number."""
    out = []
    for f in files:
        src = Path(f).read_text()
        rel = Path(f).relative_to(REPO / "src").as_posix()
        for node in ast.walk(ast.parse(src)):
            hit = False
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
                hit = (name in _RNG_CALLS and bool(node.args) and _literal(node.args[0])) or any(
                    kw.arg and (kw.arg in ("seed", "random_state") or kw.arg.endswith("_seed")) and _literal(kw.value)
                    for kw in node.keywords)
            elif isinstance(node, ast.Assign):
                hit = _literal(node.value) and any(isinstance(t, ast.Name) and "SEED" in t.id.upper()
                                                   for t in node.targets)
            if hit:
                out.append((rel, ast.get_source_segment(src, node)))
    return out


def test_every_literal_seed_in_the_pipelines_paper_code_is_listed():
    """The paper code that the pipeline runs (the import closure of every workflow script and of the module
    the distributed ESCA rule runs) has no literal seed besides the listed ones: a seed belongs in the config
    (a key that seed_offset moves), or, fixed by the paper code, gets the job's seed_offset added."""
    from scalable_bayes.dependencies import ImportGraph

    graph = ImportGraph([REPO / "src"], ["scalable_bayes", "scalable_bayes_papers"])
    files = [f for f in graph.closure(scripts=sorted((REPO / "workflow" / "scripts").glob("*.py")),
                                      modules=["scalable_bayes_papers.esca.mpi_run"])
             if "scalable_bayes_papers" in Path(f).parts]
    assert len(files) > 20
    found = literal_seeds(files)
    unlisted = [hit for hit in found if hit not in LITERAL_SEEDS]
    assert not unlisted, ("literal seeds in the pipeline's paper code; take them from the config (a seed key) or add "
                          f"seed_offset, and list them in config/README.md 'Replications': {unlisted}")
    assert set(found) == set(LITERAL_SEEDS), f"listed but gone: {set(LITERAL_SEEDS) - set(found)}"


def test_no_literal_seed_in_the_rules_or_workflow_scripts():
    pattern = re.compile(r"""(["']\w*seeds?["']\s*[,:]\s*\[?\s*\d)|(--seed\s+\d)|(\b\w*seeds?\s*=\s*\[?\s*\d)"""
                         r"""|((default_rng|RandomState|make_key|rng_from_seed|SeedSequence)\(\s*\[?\s*\d)""")
    files = [REPO / "Snakefile", *sorted((REPO / "workflow").rglob("*.smk")),
             *sorted((REPO / "workflow" / "scripts").glob("*.py"))]
    hits = [f"{f.relative_to(REPO)}:{i}: {line.strip()}" for f in files
            for i, line in enumerate(f.read_text().splitlines(), 1) if pattern.search(line.split("#", 1)[0])]
    assert not hits, "\n".join(hits)


# ---- the paper code adds a job's seed_offset to its fixed seeds ------------------------------------------

class _Corpus:
    """A processed corpus as the paper code reads it: ``subset(split)`` with ``counts`` / ``tfidf`` rows that
    carry their own index, and a vocabulary."""

    def __init__(self, n=200):
        import numpy as np
        import scipy.sparse as sp

        self.vocab = ["w0", "w1", "w2"]
        rows = np.column_stack([np.arange(n) + 2, np.ones(n), np.ones(n)])  # row i: first count i + 2 (>= 2 tokens)
        self._m = sp.csr_matrix(rows)

    def subset(self, split):
        return type("Part", (), {"counts": self._m, "tfidf": self._m})()


def _ids(X):
    return sorted(int(v) - 2 for v in X[:, 0].toarray().ravel())


def test_esca_document_subsamples_move_with_the_offset_and_not_at_0():
    from scalable_bayes.corpora import subsample_rows
    from scalable_bayes_papers.esca import data

    c = _Corpus()
    assert _ids(data.training_docs(c, 20)) == _ids(subsample_rows(c._m, 20, data.TRAIN_SUBSAMPLE_SEED))
    assert _ids(data.training_docs(c, 20, 0)) == _ids(data.training_docs(c, 20))
    assert _ids(data.training_docs(c, 20, OFFSET)) == _ids(subsample_rows(c._m, 20, data.TRAIN_SUBSAMPLE_SEED + OFFSET))
    assert _ids(data.training_docs(c, 20, OFFSET)) != _ids(data.training_docs(c, 20))
    held = data.heldout_docs(c, c, 20)[0]
    assert _ids(held) == _ids(subsample_rows(c._m, 20, data.HELDOUT_SUBSAMPLE_SEED))
    assert _ids(data.heldout_docs(c, c, 20, OFFSET)[0]) == _ids(subsample_rows(c._m, 20, data.HELDOUT_SUBSAMPLE_SEED
                                                                                + OFFSET))


def test_sggmc_fig5_subsets_move_with_the_offset_and_not_at_0():
    from scalable_bayes_papers.sggmc import data

    c, caps = _Corpus(), {"max_train_docs": 30, "max_test_docs": 20}
    base = [_ids(x) for x in data.fig5_split(c, caps)]
    assert [_ids(x) for x in data.fig5_split(c, {**caps, "seed_offset": 0})] == base
    moved = [_ids(x) for x in data.fig5_split(c, {**caps, "seed_offset": OFFSET})]
    assert moved[0] != base[0] and moved[1] != base[1] and [len(m) for m in moved] == [30, 20]


@pytest.mark.parametrize("task, split", [("bnn", "split_mnist"), ("bpmf", "split_ratings")])
def test_sgnht_data_splits_move_with_the_offset_and_not_at_0(task, split, monkeypatch, tmp_path):
    import numpy as np
    import pandas as pd

    from scalable_bayes_papers.sgnht import runs

    seen = []

    class Stop(Exception):
        pass

    def record(*args, seed):
        seen.append(seed)
        raise Stop

    monkeypatch.setattr(runs.data, split, record)
    np.savez(tmp_path / "mnist.npz", images=np.zeros((10, 2, 2)), labels=np.zeros(10))
    pd.DataFrame({"user": [0], "item": [0], "rating": [1.0]}).to_parquet(tmp_path / "ratings.parquet")
    inputs = {"mnist": tmp_path / "mnist.npz", "ratings": tmp_path / "ratings.parquet"}
    s = {"n_train": 4, "n_val": 2, "hidden": 3, "rank": 2}
    for settings in (s, {**s, "seed_offset": OFFSET}):
        with pytest.raises(Stop):
            runs._prepare(task, settings, inputs, seed=7)
    assert seen == [0, OFFSET]  # the split's own seed (not the chain's), moved by the offset only
