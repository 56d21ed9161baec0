"""tools/pool_claims.py: one-seed claims of two runs re-checked on their pooled run tables."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pandas as pd

from scalable_bayes_papers.esca import claims

from test_esca_claims import _fig6_frame

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("pool_claims", REPO / "tools" / "pool_claims.py")
pool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pool)


def _fig6_run(run: Path, frame: pd.DataFrame, seed: int, verdict: str | None = None) -> None:
    """A run directory holding one seed's Fig. 6 run table (in one run file) and, optionally, its claim file."""
    d = run / "results" / "esca" / "runs" / "fig6" / "a~b" / "all"
    d.mkdir(parents=True)
    frame[frame["seed"] == seed].to_parquet(d / f"seed{seed}.parquet")
    # a run file of a seed the config does not name (a leftover of another config) must be left out
    frame[frame["seed"] == seed].assign(seed=seed + 7).to_parquet(d / f"seed{seed + 7}.parquet")
    if verdict:
        c = run / "results" / "esca" / "claims"
        c.mkdir(parents=True)
        (c / "ESCA-Fig6.json").write_text(json.dumps({"verdict": verdict}))


def _configs(tmp_path):
    off = tmp_path / "ml_off.yaml"
    off.write_text("sgnht: {ml: {activate: false}}\n")
    return [off], [off, REPO / "config" / "replication.yaml"]


def test_pooled_fig6_is_the_check_on_both_runs_seeds(tmp_path):
    """Run A has seed 0, run B seed 1000 (the replication's offset): the pooled claim is check_fig6 on the
    two seeds' rows, and each run alone is 'not checked'."""
    frame = pd.concat([_fig6_frame(0.10, seeds=(0,)), _fig6_frame(0.10, seeds=(1000,), seed_sd=0.002)],
                      ignore_index=True)
    _fig6_run(tmp_path / "a", frame, 0, "not checked")
    _fig6_run(tmp_path / "b", frame, 1000)
    cfg_a, cfg_b = (pool.load_config(c) for c in _configs(tmp_path))
    assert cfg_b["esca"]["fig6"]["seeds"] == [1000]
    rows = pool.pooled_claims(tmp_path / "a", tmp_path / "b", cfg_a, cfg_b)
    assert [r["id"] for r in rows] == ["ESCA-Fig6"]
    r = rows[0]
    assert (r["verdict_a"], r["verdict_b"]) == ("not checked", "missing")
    direct = claims.check_fig6(frame, {**cfg_a["esca"]["fig6"], "seeds": [0, 1000]}, "quick")
    assert r["pooled"].verdict == direct.verdict == "fails"  # 10% above CGS in both seeds: beyond the 5% tolerance
    assert [e.margin for e in r["pooled"].evidence] == [e.margin for e in direct.evidence]
    assert all(e.df == 1 for e in r["pooled"].evidence)  # two seeds: one degree of freedom


def test_missing_run_tables_exit_2_with_the_path(tmp_path, capsys):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    cfg_a, cfg_b = _configs(tmp_path)
    rc = pool.main([str(tmp_path / "a"), str(tmp_path / "b"), "--configfile-a", *map(str, cfg_a),
                    "--configfile-b", *map(str, cfg_b)])
    assert rc == 2
    assert "no ESCA Fig. 6 run tables of seeds [0]" in capsys.readouterr().err
