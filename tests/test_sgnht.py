"""SGNHT paper experiments through the library at tiny scale: tables, claims, plots, ML grid runner."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from scalable_bayes.plotting import sgnht as plots
from scalable_bayes.samplers import experiments as ex
from scalable_bayes.samplers import sgnht_ml

SETTINGS = {"seeds": [0], "double_well": {"n_steps": 200_000}, "gaussian": {"n_steps": 30_000, "n_data": 100, "batch_size": 10}}


def test_double_well_fig1_claims_hold_and_plot(tmp_path):
    summ, dens, tr = ex.run_double_well(0, 1_000_000, burnin=10_000)  # paper scale: ~1 s
    r = ex.check_fig1(summ)
    assert r["holds"], r
    assert ex.check_sfig4(summ)["holds"]
    assert set(summ["variant"]) == {"xi=1", "xi=10", "xi=0.1", "SGNHT"}
    c = ex.write_synthetic_claim("Fig1", tmp_path / "c.json", "smoke", SETTINGS, summary=summ)
    assert c["holds"] is True and json.loads((tmp_path / "c.json").read_text())["id"] == "SGNHT-Fig1"
    plots.plot_fig1(dens, tr, tmp_path / "fig1.png")
    assert (tmp_path / "fig1.png").stat().st_size > 10_000 and (tmp_path / "fig1.pdf").exists()


def test_gaussian_grid_tables_and_kinetic_energy_claims(tmp_path):
    grid = [(0.01, 1.0), (0.01, 10.0), (0.001, 1.0), (0.001, 10.0)]
    kv, kvd, kvt = ex.run_known_variance(0, 0, grid, 30_000, burnin=2000)
    ng, ngd, _ = ex.run_normal_gamma(0, 0, grid, 30_000, burnin=2000)
    ke = kv.set_index(["method", "h", "A"])["mean_ke"]
    assert abs(ke["SGNHT", 0.01, 1.0] - 0.5) < 0.05 and abs(ke["SGNHT", 0.001, 10.0] - 0.5) < 0.05
    assert ke["SGHMC", 0.01, 1.0] > 1.0  # SGHMC with B-hat = 0 overheats at large h, small A
    t = ex.table1(ng)
    assert len(t) == 8 and {"rmse", "tau", "paper_rmse", "paper_tau"} <= set(t.columns)
    assert (t["tau"] > 1).all() and np.isfinite(t["rmse"]).all()
    assert ex.check_sfig5(kv)["holds"]
    plots.plot_fig2(kvd, kvt, ng, tmp_path / "fig2.png")
    plots.plot_sfig5(kvt, tmp_path / "sfig5.png")
    plots.plot_sfig6(ngd, tmp_path / "sfig6.png")
    for item, kw in [("Fig2", dict(kv=kv, ng=ng)), ("SFig5", dict(kv=kv)), ("SFig6", dict(ng=ng)), ("STab1", dict(table=t))]:
        c = ex.write_synthetic_claim(item, tmp_path / f"{item}.json", "smoke", SETTINGS, **kw)
        assert c["holds"] in (True, False)


def test_synthetic_runs_are_reproducible():
    a = ex.run_known_variance(3, 0, [(0.01, 1.0)], 5000, burnin=100)[0]
    b = ex.run_known_variance(3, 0, [(0.01, 1.0)], 5000, burnin=100)[0]
    pd.testing.assert_frame_equal(a.drop(columns="wall_time_s"), b.drop(columns="wall_time_s"))


def test_ml_grid_runner_tables_and_claims(tmp_path):
    rng = np.random.default_rng(0)
    # tiny stand-ins written in the pipeline formats
    images = (rng.random((400, 64)) * 255).astype(np.uint8)
    labels = (images[:, :32].mean(1) > images[:, 32:].mean(1)).astype(np.int64)
    np.savez(tmp_path / "mnist.npz", images=images, labels=labels)
    n = 3000
    pd.DataFrame({"user": rng.integers(0, 50, n), "item": rng.integers(0, 40, n), "rating": rng.integers(1, 6, n),
                  "timestamp": np.zeros(n, np.int64)}).to_parquet(tmp_path / "ratings.parquet")
    ml = {"bnn": dict(n_iter=200, burnin=100, batch_size=20, hidden=8, n_train=200, n_val=100, eta=[1e-4, 4e-4],
                      a=[0.01, 0.1], eval_every=50),
          "bpmf": dict(n_iter=200, burnin=100, batch_size=100, rank=3, eta=[1e-5, 4e-5], a=[0.01, 0.1], eval_every=50,
                       eta_scale=2.0)}
    inputs = {"mnist": tmp_path / "mnist.npz", "ratings": tmp_path / "ratings.parquet"}
    frames = []
    for task in ["bnn", "bpmf"]:
        for seed in [0, 1]:
            s, tr = sgnht_ml.run_task(task, seed, ml, inputs)
            assert len(s) == 8 and set(s["method"]) == {"SGHMC", "SGNHT"}
            assert (tr["step"] > 100).all()
            assert np.allclose(s["eta_used"], s["eta"] * (2.0 if task == "bpmf" else 1.0))
            frames.append(s)
    summary = pd.concat(frames, ignore_index=True)
    assert summary.loc[summary["task"] == "bnn", "metric"].between(0, 100).all()
    assert summary.loc[summary["task"] == "bpmf", "metric"].between(0, 4).all()
    t2, t3 = sgnht_ml.table2(summary), sgnht_ml.table3(summary)
    assert set(t2["task"]) == {"bnn", "bpmf", "netflix"} and t2.loc[t2["task"] == "netflix", "test_mean"].isna().all()
    assert len(t3) == 6
    assert np.allclose(t3.dropna(subset=["eta"]).eval("eta_used / eta"), [1, 1, 2, 2])
    for item, table in [("Fig3", None), ("STab2", t2), ("STab3", t3)]:
        c = sgnht_ml.write_ml_claim(item, tmp_path / f"{item}.json", "smoke", ml, summary, table)
        assert "Netflix" in c["note"]
    plots.plot_fig3(summary, tmp_path / "fig3.png", sgnht_ml.METRIC)
    assert (tmp_path / "fig3.png").exists()


def test_ml_runner_rejects_unknown_task():
    with pytest.raises(ValueError, match="unknown SGNHT ML task"):
        sgnht_ml.run_task("svm", 0, {"svm": {}}, {})


def test_eta_scale_keeps_eta_times_training_size():
    assert sgnht_ml.eta_scale("bpmf", {"eta_scale": "auto"}, 72_000) == pytest.approx(800_167 / 72_000)
    assert sgnht_ml.eta_scale("bnn", {"eta_scale": "auto"}, 50_000) == 1.0
    assert sgnht_ml.eta_scale("lda", {"eta_scale": 3.0}, 10) == 3.0
    assert sgnht_ml.eta_scale("lda", {}, 10) == 1.0
    with pytest.raises(ValueError, match="eta_scale"):
        sgnht_ml.eta_scale("bnn", {"eta_scale": -1.0}, 10)


def test_fig2_panel4_check_passes_on_the_papers_own_table_and_fails_when_sgnht_is_slower():
    # SGNHT paper, Table 1: (RMSE, tau) per (h, A) cell
    sghmc = {"h=0.01 A=1": (0.629, 7.19), "h=0.01 A=10": (0.286, 37.68), "h=0.001 A=1": (0.292, 67.83),
             "h=0.001 A=10": (0.136, 357.14)}
    sgnht = {"h=0.01 A=1": (0.175, 14.35), "h=0.01 A=10": (0.026, 55.65), "h=0.001 A=1": (0.091, 22.97),
             "h=0.001 A=10": (0.053, 424.81)}
    r = ex.lower_tau_at_similar_accuracy(sghmc, sgnht)
    assert r["holds"] and r["n_lower"] == 3
    assert not r["per_cell"]["h=0.01 A=1"]["sgnht_lower"]
    slow = {k: (rm, 10 * tau) for k, (rm, tau) in sgnht.items()}
    r = ex.lower_tau_at_similar_accuracy(sghmc, slow)
    assert not r["holds"] and r["n_lower"] == 1
    # an SGHMC cell more accurate than every SGNHT cell cannot be beaten
    r = ex.lower_tau_at_similar_accuracy({"c": (0.01, 1000.0)}, sgnht)
    assert not r["holds"] and r["per_cell"]["c"]["cheapest_as_accurate_sgnht_tau"] is None
