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
