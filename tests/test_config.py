"""Config validation: every shipped profile validates; a bad key or type stops naming the key."""

import re
import subprocess
import sys

import pytest
import yaml

from scalable_bayes_papers.config import ConfigError, validate_config


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


# ------------------------------------------------------------------ numbers that cannot be NaN, bounded seeds, corpora


@pytest.mark.parametrize("block, value, key", [
    ({"sggmc": {"fig4": {"kappa": float("nan")}}}, "nan", "sggmc.fig4.kappa"),
    ({"sggmc": {"fig3": {"step_size": float("inf")}}}, "inf", "sggmc.fig3.step_size"),
    ({"data": {"mirror": None, "timeout_s": float("inf")}}, "inf", "data.timeout_s"),
    ({"scir": {"simplex": {"proportions": [0.01, float("nan")]}}}, "nan", "scir.simplex.proportions.1"),
    ({"scir": {"lda": {"step": {"SCIR": {"h": 0.1, "tau": float("inf"), "kappa": 0.5}}}}}, "inf",
     "scir.lda.step.SCIR.tau"),
    ({"vmf": {"fig2": {"dpsi0": float("-inf")}}}, "-inf", "vmf.fig2.dpsi0"),
])
def test_non_finite_numbers_are_refused_naming_the_key(repo, block, value, key):
    cfg = {"profile": "quick", "data": {"mirror": None}, **block}
    with pytest.raises(ConfigError) as info:
        validate_config(cfg, repo / "workflow" / "schemas")
    msg = str(info.value)
    assert f"config key '{key}': {value} is not a finite number" in msg, msg
    assert ".nan and .inf are not valid" in msg and "config/README.md" in msg


def test_yaml_nan_and_inf_are_refused(repo):
    cfg = yaml.safe_load("profile: quick\ndata: {mirror: null}\nsggmc: {fig4: {kappa: .nan}, fig3: {step_size: .inf}}\n")
    with pytest.raises(ConfigError) as info:
        validate_config(cfg, repo / "workflow" / "schemas")
    assert "'sggmc.fig3.step_size': inf" in str(info.value) and "'sggmc.fig4.kappa': nan" in str(info.value)


def _seed_keys(node, path=""):
    """(key path, schema node) of every property named seed, seeds or *_seed in a schema (not the counts
    ``n_seeds``: seeds 0 .. n_seeds - 1)."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "properties":
                for kk, vv in v.items():
                    if re.fullmatch(r"(\w+_)?seeds?", kk) and not kk.startswith("n_"):
                        yield f"{path}.{kk}".strip("."), vv
                    yield from _seed_keys(vv, f"{path}.{kk}")
            elif k == "$defs":
                for kk, vv in v.items():
                    yield from _seed_keys(vv, f"{path}.$defs.{kk}")
            elif k in ("items", "additionalProperties"):
                yield from _seed_keys(v, f"{path}.[]")


def test_every_seed_key_uses_the_shared_bounded_definition(repo):
    from scalable_bayes.rng import MAX_SEED

    root = yaml.safe_load((repo / "workflow" / "schemas" / "config.schema.yaml").read_text())
    assert root["$defs"]["seed"] == {**root["$defs"]["seed"], "type": "integer", "minimum": 0, "maximum": MAX_SEED}
    ref = "config.schema.yaml#/$defs/seed"
    seen, bad = 0, []
    for f in sorted((repo / "workflow" / "schemas").glob("*.schema.yaml")):
        for path, node in _seed_keys(yaml.safe_load(f.read_text())):
            seen += 1
            target = node.get("items", {}) if node.get("type") == "array" else node
            if target.get("$ref") != ref:
                bad.append(f"{f.name}:{path} does not refer to {ref}")
    assert seen >= 14, seen  # every seed key of the five blocks and data (fails if the walk misses them)
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("block, key", [
    ({"data": {"mirror": None, "seed": 2**63}}, "data.seed"),
    ({"data": {"mirror": None}, "scir": {"seeds": [0, 2**64]}}, "scir.seeds.1"),
    ({"data": {"mirror": None}, "sggmc": {"fig4": {"data_seed": 2**63}}}, "sggmc.fig4.data_seed"),
    ({"data": {"mirror": None}, "scir": {"simplex": {"tune": {"seed": -1}}}}, "scir.simplex.tune.seed"),
])
def test_seeds_at_or_above_2_63_are_refused(repo, block, key):
    with pytest.raises(ConfigError) as info:
        validate_config({"profile": "quick", **block}, repo / "workflow" / "schemas")
    assert f"config key '{key}'" in str(info.value)


def test_the_largest_seed_is_accepted(repo):
    out = validate_config({"profile": "quick", "data": {"mirror": None, "seed": 2**63 - 1}}, repo / "workflow" / "schemas")
    assert out["data"]["seed"] == 2**63 - 1


def test_corpus_lists_in_the_schemas_are_the_catalogues(repo):
    from scalable_bayes.corpora.build import CORPORA, corpora_of_kind

    data = yaml.safe_load((repo / "workflow" / "schemas" / "data.schema.yaml").read_text())
    assert data["$defs"]["corpus"]["enum"] == list(CORPORA)
    assert data["$defs"]["token_corpus"]["enum"] == corpora_of_kind("tokens")
    assert data["$defs"]["count_corpus"]["enum"] == corpora_of_kind("tokens", "binary")
    assert list(data["properties"]["corpora"]["properties"]) == list(CORPORA)
    assert data["properties"]["table"]["items"] == {"$ref": "#/$defs/corpus"}
    assert data["properties"]["table"]["default"] == list(CORPORA)
    esca = yaml.safe_load((repo / "workflow" / "schemas" / "esca.schema.yaml").read_text())
    assert esca["$defs"]["corpus"]["$ref"] == "data.schema.yaml#/$defs/token_corpus"
    scir = yaml.safe_load((repo / "workflow" / "schemas" / "scir.schema.yaml").read_text())["properties"]
    assert scir["lda"]["properties"]["corpus"]["$ref"] == "data.schema.yaml#/$defs/token_corpus"
    assert scir["dp"]["properties"]["corpus"]["$ref"] == "data.schema.yaml#/$defs/count_corpus"
    # corpus lists of one paper (a subset it supports) name only catalogue corpora of the right kind
    vmf = yaml.safe_load((repo / "workflow" / "schemas" / "vmf.schema.yaml").read_text())["properties"]
    for key in ("fig3", "tab1"):
        names = vmf[key]["properties"]["datasets" if "datasets" in vmf[key]["properties"] else "corpora"]["items"]["enum"]
        assert set(names) <= set(corpora_of_kind("tfidf")), (key, names)
    sgnht = yaml.safe_load((repo / "workflow" / "schemas" / "sgnht.schema.yaml").read_text())["properties"]
    assert set(sgnht["ml"]["properties"]["lda"]["properties"]["corpus"]["enum"]) <= set(corpora_of_kind("tokens"))


@pytest.mark.parametrize("key", ["lda", "dp"])
def test_a_misspelt_scir_corpus_is_refused(repo, key):
    cfg = {"profile": "quick", "data": {"mirror": None}, "scir": {key: {"corpus": "wikipdia"}}}
    with pytest.raises(ConfigError) as info:
        validate_config(cfg, repo / "workflow" / "schemas")
    msg = str(info.value)
    assert f"config key 'scir.{key}.corpus': 'wikipdia' is not one of" in msg and "'wikipedia'" in msg, msg


def test_a_default_beside_a_shared_definition_is_filled_in(repo):
    out = validate_config({"profile": "quick", "data": {"mirror": None}, "scir": {}, "esca": {}},
                          repo / "workflow" / "schemas")
    assert out["scir"]["lda"]["corpus"] == "wikipedia" and out["scir"]["dp"]["corpus"] == "msweb"
    assert out["scir"]["simplex"]["tune"]["seed"] == 99
    assert out["esca"]["fig5"]["corpus"] == "reuters" and out["esca"]["fig5"]["run"]["n_iter"] >= 1


def test_sggmc_fig4_grid_must_be_a_multiple_of_hist_bins(repo):
    from scalable_bayes_papers.sggmc.config import check_config

    out = validate_config({"profile": "quick", "data": {"mirror": None}, "sggmc": {"fig4": {"grid": 401}}},
                          repo / "workflow" / "schemas")
    with pytest.raises(ConfigError) as info:
        check_config(out["sggmc"])
    msg = str(info.value)
    assert "config key 'sggmc.fig4.grid': 401 is not a multiple of sggmc.fig4.hist_bins (50)" in msg
    assert "400 or 450" in msg and "config/README.md" in msg
    check_config(validate_config({"profile": "quick", "data": {"mirror": None}}, repo / "workflow" / "schemas")["sggmc"])


def test_snakemake_refuses_a_bad_grid_before_any_job(repo, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("sggmc:\n  activate: true\n  fig4: {grid: 401}\n")
    (tmp_path / "config").symlink_to(repo / "config")
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-s", str(repo / "Snakefile"), "-d", str(tmp_path),
         "--configfile", str(bad), "-n", "--cores", "1"],
        capture_output=True, text=True, timeout=300,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    assert "config key 'sggmc.fig4.grid'" in out and "not a multiple of" in out, out[-3000:]
    assert not (tmp_path / "results").exists()
