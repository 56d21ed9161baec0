"""tools/pool_claims.py: one-seed claims of two runs re-checked on their pooled run tables."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pandas as pd

from scalable_bayes_papers.esca import claims, layout

from test_esca_claims import _fig2_runs, _fig6_frame
from test_esca_throughput import _runs as _throughput_runs

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


def _lda_runs(run: Path, cfg: dict, fig2: pd.DataFrame, throughput: pd.DataFrame, seed: int) -> None:
    """The Fig. 2 and throughput run files of ``run`` for its config's corpora, engines, thread counts and one
    ``seed``, from toy frames of one corpus (relabelled per corpus), at the paths rule esca_lda_runs writes."""
    esca = cfg["esca"]
    f = esca["fig2"]
    for c in f["corpora"]:
        for m in f["methods"]:
            p = run / layout.run_path("fig2", c, c, m, f["run"]["n_topics"], f["run"]["beta"], f["run"]["threads"], seed)
            p.parent.mkdir(parents=True, exist_ok=True)
            fig2[(fig2["method"] == m)].assign(train_corpus=c, seed=seed).to_parquet(p)
    t = esca["throughput"]
    for c in t["corpora"]:
        for m in t["methods"]:
            for th in t["threads"]:
                rows = throughput[(throughput["method"] == m) & (throughput["threads"] == th)]
                if rows.empty:
                    continue
                p = run / layout.run_path("throughput", c, c, m, t["run"]["n_topics"], t["run"]["beta"], th, seed)
                p.parent.mkdir(parents=True, exist_ok=True)
                rows.assign(train_corpus=c, seed=seed).to_parquet(p)


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
    fig2, thr = _fig2_runs(seeds=(0,)), _throughput_runs(seeds=1)
    _lda_runs(tmp_path / "a", cfg_a, fig2, thr, 0)
    _lda_runs(tmp_path / "b", cfg_b, fig2, thr, 1000)
    rows = pool.pooled_claims(tmp_path / "a", tmp_path / "b", cfg_a, cfg_b)
    assert [r["id"] for r in rows] == ["ESCA-Fig2", "ESCA-Throughput", "ESCA-Fig6"]
    r = rows[2]
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
    err = capsys.readouterr().err
    assert "run table(s) missing" in err and "esca/runs/fig2/wikipedia~wikipedia/ESCA~K100" in err


def test_pooled_fig2_and_throughput_are_the_checks_on_both_runs_seeds(tmp_path):
    """ESCA Fig. 2 and the throughput claim with one seed per run are not checked in either run; pooled they
    are check_fig2 / check_throughput on the two seeds' run tables (two seeds: 1 df each)."""
    from scalable_bayes_papers.esca import tables

    frame = pd.concat([_fig6_frame(0.0, seeds=(0,)), _fig6_frame(0.0, seeds=(1000,))], ignore_index=True)
    _fig6_run(tmp_path / "a", frame, 0)
    _fig6_run(tmp_path / "b", frame, 1000)
    cfg_a, cfg_b = (pool.load_config(c) for c in _configs(tmp_path))
    fig2_a, fig2_b = _fig2_runs(seeds=(0,)), _fig2_runs(seeds=(0,), esca_final_gap=0.004)
    thr_a, thr_b = _throughput_runs(seeds=1), _throughput_runs(esca_speed=2.4, seeds=1)
    _lda_runs(tmp_path / "a", cfg_a, fig2_a, thr_a, 0)
    _lda_runs(tmp_path / "b", cfg_b, fig2_b, thr_b, 1000)
    rows = {r["id"]: r["pooled"] for r in pool.pooled_claims(tmp_path / "a", tmp_path / "b", cfg_a, cfg_b)}
    fig2 = pool.esca_fig2_table(tmp_path / "a", cfg_a["esca"])
    assert claims.check_fig2(fig2, cfg_a["esca"]["fig2"], "quick").verdict == "not checked"
    both = pd.concat([fig2, pool.esca_fig2_table(tmp_path / "b", cfg_b["esca"])], ignore_index=True)
    direct = claims.check_fig2(both, cfg_a["esca"]["fig2"], "quick")
    assert rows["ESCA-Fig2"].verdict == direct.verdict != "not checked"
    assert [e.margin for e in rows["ESCA-Fig2"].evidence] == [e.margin for e in direct.evidence]
    assert all(e.df == 1 for e in direct.evidence) and sorted(both["seed"].unique()) == [0, 1000]
    runs = pd.concat([pool.esca_throughput_runs(tmp_path / r, c["esca"]) for r, c in (("a", cfg_a), ("b", cfg_b))],
                     ignore_index=True)
    t = claims.check_throughput(tables.throughput(runs), "quick")
    assert rows["ESCA-Throughput"].verdict == t.verdict != "not checked"
    assert [e.margin for e in rows["ESCA-Throughput"].evidence] == [e.margin for e in t.evidence]
