"""ESCA throughput claim (Sec. 4): time to a target held-out LL against the peer library, and the peer's adapter."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from scalable_bayes_papers.esca import claims, tables
from scalable_bayes_papers.esca.peers import TomotopyLDA
from scalable_bayes_papers.esca.runs import run_lda


def test_time_to_reach_interpolates_between_evaluations():
    c = pd.DataFrame({"iteration": [0, 5, 10, 15], "heldout_ll": [-9.0, -8.0, -7.5, -7.4],
                      "cpu_time": [0.0, 1.0, 2.0, 3.0]})
    assert tables.time_to_reach(c, -7.75, "cpu_time") == pytest.approx(1.5)
    assert tables.time_to_reach(c, -9.5, "cpu_time") == 0.0
    assert tables.time_to_reach(c, -7.0, "cpu_time") == np.inf
    assert tables.verdict_clock(1) == "cpu_time" and tables.verdict_clock(2) == "wall_time"


def _runs(esca_speed=2.0, esca_lag=2.0, seeds=3):
    """Throughput runs on a toy corpus: every engine's LL climbs as -7 - 2 exp(-it / tau); ESCA needs
    ``esca_lag`` times the iterations of a Gibbs sampler (tau) and its iterations are ``esca_speed``
    times cheaper than tomotopy's, CGS's 4 times dearer. ESCA and tomotopy run ``seeds`` seeds (seed r's
    clock 1 + 0.02 r times the first's)."""
    rows = []
    for method, thr, tau, sec_per_it, n_it in [("ESCA", 1, 5 * esca_lag, 0.1 / esca_speed, 60),
                                               ("ESCA", 2, 5 * esca_lag, 0.06 / esca_speed, 60),
                                               ("tomotopy", 1, 5, 0.1, 30), ("tomotopy", 2, 5, 0.06, 30),
                                               ("CGS", 1, 5, 0.4, 30)]:
        for rep in range(1 if method == "CGS" else seeds):
            f = 1 + 0.02 * rep
            for it in range(0, n_it + 1, 5):
                ll = -7.0 - 2.0 * np.exp(-it / tau)
                rows.append({"train_corpus": "toy", "method": method, "threads": thr, "seed": rep, "n_topics": 10,
                             "alpha": 0.5, "beta": 0.1, "iteration": it, "n_tokens": 1000, "repeat": 0,
                             "wall_time": f * sec_per_it * it, "cpu_time": f * sec_per_it * it * thr,
                             "tokens_per_s": 1000 / sec_per_it, "heldout_ll": ll, "state_bytes": 2**20,
                             "peak_rss_mib": 100.0})
    return pd.DataFrame(rows)


def test_throughput_claim_is_time_to_target_against_the_peer():
    mpi = pd.DataFrame({"iteration": [0, 2], "train_corpus": "toy", "threads": 1, "ranks": 2, "n_topics": 10,
                        "n_tokens": 1000, "wall_time": [0.0, 0.3], "tokens_per_s": 4e6, "heldout_ll": [-9.0, -8.5]})
    t = tables.throughput(_runs(esca_speed=3.0, esca_lag=2.0), [mpi], quality_tol=0.05)
    assert len(t) == 6 and t.loc[t["method"] == "ESCA_MPI", "ranks"].item() == 2
    cgs_final = -7.0 - 2.0 * np.exp(-30 / 5)
    assert t["target_ll"].dropna().unique() == pytest.approx([cgs_final - 0.05])
    # LL = -7 - 2 exp(-it / tau) reaches the target at it* = tau ln(2 / (0.05 + 2 e^-6)); interpolation is linear
    esca1 = t[(t["method"] == "ESCA") & (t["threads"] == 1)]
    assert esca1["target_clock"].item() == "cpu_time" and np.isfinite(esca1["time_to_target_s"].item())
    assert t[(t["method"] == "ESCA") & (t["threads"] == 2)]["target_clock"].item() == "wall_time"
    claim = claims.check_throughput(t, "test", quality_tol=0.05)
    # 3x cheaper iterations, twice as many needed: ESCA first by about 1.5x at both thread counts
    assert claim.verdict == "holds" and t["n_seeds"].dropna().max() == 3
    r1 = claim.details["toy"]["peer_over_esca_time_to_target_1thr"]
    assert 1.3 < r1 < 1.7 and "order of magnitude: not reached" in claim.measured
    assert "2 ranks 4.00M tok/s (held-out LL -8.5000)" in claim.measured
    # the ratio's parts: ESCA needs twice the iterations (tau 10 against 5; interpolation between
    # evaluations every 5 iterations moves the crossing a little) and each costs a third of tomotopy's
    for th in (1, 2):
        it_ratio = claim.details["toy"][f"peer_over_esca_iters_to_target_{th}thr"]
        per_it = claim.details["toy"][f"esca_over_peer_speed_per_iteration_{th}thr"]
        assert 0.45 < it_ratio < 0.55 and per_it == pytest.approx(3.0, rel=0.05)
    assert "an order of magnitude at equal quality needs" in claim.measured
    # a target met at the first evaluation (0 iterations): the claim reports no split, and does not fail
    t0 = t.copy()
    t0.loc[t0["method"] == "ESCA", "iters_to_target"] = 0.0
    c0 = claims.check_throughput(t0, "test", quality_tol=0.05)
    assert np.isnan(c0.details["toy"]["peer_over_esca_iters_to_target_1thr"])
    assert "an order of magnitude at equal quality needs" not in c0.measured
    assert "not testable" in claim.note and "5.1x" in claim.paper_value
    # 1.5x cheaper iterations but twice as many: the peer reaches the target first
    slow = claims.check_throughput(tables.throughput(_runs(esca_speed=1.5, esca_lag=2.0)), "test")
    assert slow.verdict == "fails" and slow.details["toy"]["peer_over_esca_time_to_target_2thr"] < 1


def _lda_corpus(seed=0, M=150, V=60, K=3, n=60):
    rng = np.random.default_rng(seed)
    phi = rng.dirichlet(np.full(V, 0.1), size=K)
    rows = []
    for _ in range(M):
        theta = rng.dirichlet(np.full(K, 0.3))
        rows.append(rng.multinomial(n, theta @ phi))
    C = np.array(rows)
    C[:, V - 1] = 0  # a word no document uses: tomotopy never sees it
    return sp.csr_matrix(C)


def test_tomotopy_adapter_counts_priors_and_history():
    X = _lda_corpus()
    Xte = _lda_corpus(seed=1, M=40)
    est = TomotopyLDA(n_components=3, doc_topic_prior=0.5, topic_word_prior=0.1, max_iter=20, n_jobs=1, random_state=0,
                      evaluate_every=5).fit(X, X_heldout=Xte)
    W = est.components_
    assert W.shape == (3, X.shape[1])
    # the topic-word counts mapped back to the corpus's columns: every token counted once, the unused word 0
    np.testing.assert_allclose((W - 0.1).sum(), X.sum(), rtol=1e-4)
    np.testing.assert_allclose(W[:, -1], 0.1)
    np.testing.assert_allclose((W - 0.1).sum(axis=0), np.asarray(X.sum(axis=0)).ravel(), atol=0.02)
    h = pd.DataFrame(est.history_)
    assert h["iteration"].tolist() == [0, 5, 10, 15, 20] and h["wall_time"].is_monotonic_increasing
    assert h["heldout_ll"].iloc[-1] > h["heldout_ll"].iloc[0] + 0.1
    assert est._mdl.optim_interval == 0  # the same fixed symmetric priors as the other engines
    again = TomotopyLDA(n_components=3, doc_topic_prior=0.5, max_iter=20, n_jobs=1, random_state=0).fit(X)
    np.testing.assert_array_equal(again.components_, est.components_)  # one worker: deterministic for its seed


def test_tomotopy_runs_like_the_other_engines_and_rejects_bad_input():
    X = _lda_corpus(M=60)
    df, est, info = run_lda(X, X[:20], method="tomotopy", n_topics=3, alpha=None, beta=0.1, n_iter=4,
                            evaluate_every=2, n_threads=1, seed=0)
    assert df["method"].eq("tomotopy").all() and df["alpha"].iloc[0] == pytest.approx(50 / 3)
    assert info["tokens_per_s"] > 0 and info["n_tokens"] == X.sum()
    with pytest.raises(ValueError, match="n_jobs must be a positive integer"):
        TomotopyLDA(n_jobs=None)
    with pytest.raises(ValueError, match="map it to the training vocabulary"):
        TomotopyLDA(n_components=3, max_iter=1).fit(X, X_heldout=X[:, :10])
    with pytest.raises(ValueError, match="non-negative integer counts"):
        TomotopyLDA(n_components=3, max_iter=1).fit(sp.csr_matrix(np.array([[1.5, 2.0]])))


def test_study_throughput_summary_pairs_runs_of_one_seed_and_repeat():
    from scalable_bayes_papers.esca.study_throughput import summarise

    rows = []
    for seed in (0, 1):
        for rep in (0, 1):
            for m, iters, cpi in [("ESCA", 25.0, 0.06), ("tomotopy", 15.0, 0.12)]:
                k = 1 + 0.1 * seed  # seed 1: both engines 10% slower per iteration
                rows.append({"seed": seed, "method": m, "threads": 1, "repeat": rep, "iters_to_target": iters,
                             "cpu_per_iter_s": cpi * k, "wall_per_iter_s": 2 * cpi * k,
                             "cpu_to_target_s": iters * cpi * k, "wall_to_target_s": 2 * iters * cpi * k})
    rows.append({"seed": 0, "method": "CGS", "threads": 1, "repeat": 0, "iters_to_target": 15.0})
    s = summarise(pd.DataFrame(rows)).iloc[0]
    assert s["pairs"] == 4 and s["iters_to_target_ratio_median"] == pytest.approx(0.6)
    assert s["cpu_per_iter_s_ratio_median"] == pytest.approx(2.0)
    # time to the target = iterations x time per iteration: 0.6 x 2.0 = 1.2, in every pair
    assert s["cpu_to_target_s_ratio_min"] == pytest.approx(1.2) and s["wall_to_target_s_ratio_max"] == pytest.approx(1.2)


def test_timing_repeats_retime_the_same_fit_and_keep_its_curve():
    """``timing_repeats`` = 3 (config throughput.timing_repeats): the run table holds the first fit (repeat 0, with
    its held-out LL) and two re-timed fits at the same iterations with the first fit's LL and their own clocks;
    the throughput table averages them but, with one seed, gives no spread (the repeats share the seed's
    iterations to the target)."""
    from scalable_bayes.corpora import Corpus
    from scalable_bayes_papers.esca.runs import run_held_out_experiment

    X = _lda_corpus(M=80)
    docs = pd.DataFrame({"doc_id": [str(i) for i in range(80)], "label": -1, "split": ["train"] * 60 + ["test"] * 20,
                         "n_tokens": np.asarray(X.sum(1)).ravel()})
    c = Corpus(counts=X, vocab=[f"w{i}" for i in range(X.shape[1])], docs=docs, meta={"name": "toy"})
    s = {"method": "ESCA", "n_topics": 3, "alpha": 0.5, "beta": 0.1, "n_iter": 6, "evaluate_every": 2, "threads": 1,
         "seed": 0, "max_train_docs": None, "max_test_docs": None, "heldout_sweeps": 4, "timing_repeats": 3}
    df = run_held_out_experiment(c, c, s)
    assert sorted(df["repeat"].unique()) == [0, 1, 2]
    per = df.pivot_table(index="iteration", columns="repeat", values="heldout_ll")
    assert list(per.index) == [0, 2, 4, 6] and np.allclose(per.sub(per[0], axis=0), 0.0)
    assert (df.groupby("repeat")["cpu_time"].max() > 0).all()
    assert "repeat" not in run_held_out_experiment(c, c, {**s, "timing_repeats": 1})
    cgs = run_held_out_experiment(c, c, {**s, "method": "CGS", "n_iter": 1, "evaluate_every": 1, "timing_repeats": 1})
    t = tables.throughput(pd.concat([df, cgs], ignore_index=True))
    esca = t[t["method"] == "ESCA"].iloc[0]
    assert esca["n_repeats"] == 3 and esca["spread_from"] == "one seed (3 timing repeat(s): time per iteration only)"
    assert np.isnan(esca["log_time_to_target_se"])
