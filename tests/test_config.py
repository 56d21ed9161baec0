"""Config validation: every shipped profile validates; a bad key or type stops naming the key."""

import subprocess
import sys

import pytest
import yaml

from scalable_bayes.config import ConfigError, validate_config


@pytest.mark.parametrize("name", ["config.yaml", "smoke.yaml", "paper.yaml"])
def test_shipped_profiles_validate(repo, name):
    cfg = yaml.safe_load((repo / "config" / name).read_text())
    out = validate_config(cfg, repo / "workflow" / "schemas")
    assert out["profile"] in {"smoke", "quick", "paper"}
    assert out["data"]["retries"] >= 0
    for paper in ("vmf", "sgnht", "sggmc", "scir", "esca"):
        assert isinstance(out[paper]["activate"], bool)


def test_defaults_are_filled_in(repo):
    out = validate_config({"profile": "quick", "data": {"mirror": None}}, repo / "workflow" / "schemas")
    assert out["data"]["retries"] == 3 and out["data"]["seed"] == 0 and out["data"]["urls"] == {}
    assert out["vmf"] == {"activate": False} or "activate" in out["vmf"]


@pytest.mark.parametrize(
    "bad, key, words",
    [
        ({"data": {"mirror": None, "retries": "three"}}, "data.retries", "not of type 'integer'"),
        ({"data": {"mirror": None, "bogus_key": 1}}, "data", "bogus_key"),
        ({"data": {"mirror": None}, "profile": "huge"}, "profile", "is not one of"),
        ({"data": {"mirror": None, "corpora": {"kos": {"test_docs": 0}}}}, "data.corpora.kos.test_docs", "minimum"),
        ({"data": {"mirror": None, "corpora": {"nope": {}}}}, "data.corpora", "nope"),
        ({"data": {"mirror": None}, "vmf": {"activate": "yes"}}, "vmf.activate", "not of type 'boolean'"),
    ],
)
def test_bad_values_name_the_key(repo, bad, key, words):
    cfg = {"profile": "quick", **bad}
    with pytest.raises(ConfigError) as info:
        validate_config(cfg, repo / "workflow" / "schemas")
    msg = str(info.value)
    assert f"config key '{key}'" in msg
    assert words in msg or "less than the minimum" in msg
    assert "config/README.md" in msg


def test_snakemake_refuses_bad_config_before_any_job(repo, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("data:\n  retries: lots\n")
    (tmp_path / "config").symlink_to(repo / "config")
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-s", str(repo / "Snakefile"), "-d", str(tmp_path),
         "--configfile", str(bad), "-n", "--cores", "1"],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "config key 'data.retries'" in out and "not of type 'integer'" in out
    assert not (tmp_path / "data").exists() and not (tmp_path / "results").exists()


# Lists that may legitimately be empty or repeat a value (anything else: non-empty and unique).
MAY_BE_EMPTY = {("esca.schema.yaml", "throughput.mpi_ranks")}  # [] = no distributed run
MAY_REPEAT = {("vmf.schema.yaml", "fig4.r_max"),  # one radius per dimension, zipped with fig4.dims
              ("esca.schema.yaml", "fig6.pairs.[]")}  # a (train, test) pair may name one corpus twice


def _arrays(node, path=""):
    """(key path, schema) of every array in a schema (``.[]`` for an array's items)."""
    if isinstance(node, dict):
        if node.get("type") == "array":
            yield path.strip("."), node
        for k, v in node.items():
            if k in ("properties", "$defs", "additionalProperties"):
                for kk, vv in (v.items() if isinstance(v, dict) and k != "additionalProperties" else [("*", v)]):
                    yield from _arrays(vv, f"{path}.{kk}")
            elif k == "items":
                yield from _arrays(v, f"{path}.[]")


def test_every_list_in_the_schemas_is_non_empty_and_unique(repo):
    seen, bad = 0, []
    for f in sorted((repo / "workflow" / "schemas").glob("*.schema.yaml")):
        for path, node in _arrays(yaml.safe_load(f.read_text())):
            seen += 1
            if node.get("minItems", 0) < 1 and (f.name, path) not in MAY_BE_EMPTY:
                bad.append(f"{f.name}:{path} lacks minItems >= 1")
            if node.get("uniqueItems") is not True and (f.name, path) not in MAY_REPEAT:
                bad.append(f"{f.name}:{path} lacks uniqueItems: true")
    assert seen > 30, seen
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("block, key, value, words", [
    ("vmf", "fig3", {"seeds": [0, 0]}, "non-unique"),
    ("esca", "fig3", {"seeds": []}, "should be non-empty"),
    ("esca", "fig6", {"seeds": []}, "should be non-empty"),
    ("sgnht", "ml", {"seeds": []}, "should be non-empty"),
    ("sgnht", "ml", {"seeds": [1, 1]}, "non-unique"),
])
def test_duplicate_or_empty_sweep_lists_are_refused(repo, block, key, value, words):
    cfg = yaml.safe_load((repo / "config" / "smoke.yaml").read_text())
    cfg.setdefault(block, {}).setdefault(key, {}).update(value)
    with pytest.raises(ConfigError) as info:
        validate_config(cfg, repo / "workflow" / "schemas")
    msg = str(info.value)
    assert f"config key '{block}.{key}.seeds'" in msg and words in msg, msg
