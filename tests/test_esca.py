"""ESCA paper pieces: SEM vs EM (Fig. 3), the two-spin Ising table (TabU1), cross-corpus vocabulary
alignment (Fig. 6), document-completion split, experiment runner."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import naive_lda as naive
from scalable_bayes.evaluation.heldout import document_completion_split, heldout_loglik
from scalable_bayes.corpora import align_vocabulary
from scalable_bayes.inference.gmm_sem import fit_em_sem, gmm_loglik
from scalable_bayes.inference.lda import top_words
from scalable_bayes_papers.esca.data import make_gmm_data
from scalable_bayes_papers.esca.runs import init_params, run_fig3_seed, run_lda
from scalable_bayes_papers.esca.tables import tabu1


def test_em_train_likelihood_never_decreases():
    X, Xte, _ = make_gmm_data(n_components=4, n_train=3000, n_test=300, seed=1)
    init = init_params(X, 4, "good", np.random.default_rng(0))
    # MAP-EM with these weak priors: the penalised objective is monotone; the plain likelihood
    # may dip by the (tiny) prior terms only
    _, hist = fit_em_sem(X, Xte, init, "EM", 15, 0)
    tr = [h["train_ll"] for h in hist if "train_ll" in h]
    assert all(b >= a - 1e-6 for a, b in zip(tr, tr[1:])), tr


def test_sem_close_to_em_and_truth():
    """On an easy 5-cluster mixture SEM from EM's own start (severity 0) ends within 0.05 nats/point of EM
    and of the true parameters; from the bad box (severity 1) it climbs from its start to within 0.3 of
    the truth (a bad start may end in a worse local optimum: that is the claim's question, not this test's)."""
    df = run_fig3_seed(seed=3, severities=[0.0, 1.0], n_restarts=2, n_components=5, n_train=5000, n_test=1000,
                       n_iter=40)
    last = df[df["iteration"] == 40]
    em = last[(last["method"] == "EM") & (last["restart"] == 0)]["test_ll"].item()
    truth = df["true_test_ll"].iloc[0]
    for s in (0.0, 1.0):
        sem = last[(last["method"] == "SEM") & (last["severity"] == s)]["test_ll"].item()
        start = df[(df["iteration"] == 0) & (df["method"] == "SEM") & (df["severity"] == s)]["test_ll"].item()
        tol = 0.05 if s == 0.0 else 0.3
        assert abs(sem - em) < tol and sem > truth - tol and sem > start + 0.1, (s, sem, em, truth, start)


def test_gmm_loglik_matches_scipy():
    from scipy.stats import multivariate_normal

    X, _, p = make_gmm_data(n_components=3, n_train=50, n_test=10, seed=2)
    dens = sum(w * multivariate_normal(m, c).pdf(X) for w, m, c in zip(*p))
    assert gmm_loglik(X, p) == pytest.approx(np.log(dens).mean(), rel=1e-10)


def test_bad_scenario_rejected():
    X, _, _ = make_gmm_data(n_components=3, n_train=100, n_test=10)
    with pytest.raises(ValueError, match="scenario"):
        init_params(X, 3, "worst", np.random.default_rng(0))
    with pytest.raises(ValueError, match="method"):
        fit_em_sem(X, X, init_params(X, 3, "good", np.random.default_rng(0)), "VB", 1, 0)


def test_ising_table_sca_uniform_sequential_exact():
    t = tabu1()
    np.testing.assert_allclose(t["synchronous_sca_stationary"], 0.25, atol=1e-12)
    np.testing.assert_allclose(t["q_sca_formula"], 0.25, atol=1e-12)
    np.testing.assert_allclose(t["sequential_gibbs_stationary"], t["p_target"], atol=1e-12)
    assert t["p_target"].iloc[0] == pytest.approx(np.e / (2 * np.e + 2 / np.e))


def test_align_vocabulary_drops_oov_and_reorders():
    X = sp.csr_matrix(np.array([[1, 2, 3], [0, 4, 0]], dtype=np.int32))
    Y, dropped = align_vocabulary(X, ["a", "b", "c"], ["c", "x", "a"])
    np.testing.assert_array_equal(Y.toarray(), [[3, 0, 1], [0, 0, 0]])
    assert dropped == 6


def test_document_completion_split_halves():
    X, _, _ = naive.synthetic_lda(n_docs=20, n_words=15, n_topics=2, doc_len=9, seed=0)
    o, h = document_completion_split(X)
    np.testing.assert_array_equal((o + h).toarray(), X.toarray())
    np.testing.assert_array_equal(np.asarray(o.sum(1)).ravel(), 5)
    np.testing.assert_array_equal(np.asarray(h.sum(1)).ravel(), 4)


def test_heldout_scores_true_topics_above_wrong_ones():
    X, phi, _ = naive.synthetic_lda(n_docs=100, n_words=100, n_topics=4, doc_len=60, alpha=0.1, seed=4)
    good = heldout_loglik(phi + 1e-12, X, 0.1)
    shuffled = heldout_loglik(np.random.default_rng(0).permuted(phi, axis=1) + 1e-12, X, 0.1)
    assert good > shuffled + 0.3
    assert heldout_loglik(phi, X, 0.1, seed=3) == heldout_loglik(phi, X, 0.1, seed=3)
    with pytest.raises(ValueError, match="vocabulary"):
        heldout_loglik(phi[:, :50], X, 0.1)
    with pytest.raises(ValueError, match="zero mass"):
        heldout_loglik(np.zeros_like(phi), X, 0.1)


def test_run_lda_history_and_top_words():
    X, _, _ = naive.synthetic_lda(n_docs=120, n_words=40, n_topics=3, doc_len=30, seed=5)
    df, est, info = run_lda(X[:100], X[100:], method="ESCA", n_topics=3, alpha=None, beta=0.1, n_iter=4,
                            evaluate_every=2, n_threads=1, seed=0)
    assert list(df["iteration"]) == [0, 2, 4]
    assert df["alpha"].iloc[0] == pytest.approx(50 / 3)
    assert info["n_tokens"] == int(X[:100].sum())
    tw = top_words(est.components_, [f"w{i}" for i in range(40)], 2, 5)
    assert len(tw) == 2 and tw["top_words"].str.count(",").tolist() == [4, 4]
    with pytest.raises(ValueError, match="unknown LDA method"):
        run_lda(X, X, method="LightLDA", n_topics=3, alpha=None, beta=0.1, n_iter=1, evaluate_every=1, n_threads=1,
                seed=0)


def test_m_step_second_moments_match_einsum():
    from scalable_bayes.inference.gmm_sem import _m_step

    rng = np.random.default_rng(5)
    X = rng.standard_normal((500, 3)) * 4
    R = rng.dirichlet(np.ones(4), size=500)
    prev = init_params(X, 4, "good", rng)
    mu0, Psi0 = X.mean(0), 0.01 * np.eye(3)
    p = _m_step(X, R, prev, 1.0, 0.01, mu0, Psi0, 0.0)
    nk = R.sum(0)
    for k in range(4):
        mu = (0.01 * mu0 + R[:, k] @ X) / (0.01 + nk[k])
        sxx = np.einsum("n,ni,nj->ij", R[:, k], X, X)
        S = (Psi0 + 0.01 * np.outer(mu0, mu0) + sxx - (0.01 + nk[k]) * np.outer(mu, mu)) / (3 + 2 + nk[k])
        np.testing.assert_allclose(p.means[k], mu, rtol=1e-12)
        np.testing.assert_allclose(p.covs[k], S, rtol=1e-10, atol=1e-12)


def test_static_items_render(tmp_path):
    from scalable_bayes_papers.esca import claims, figures, tables

    for item, fn in figures.STATIC_FIGURES.items():
        fn(tmp_path / f"{item}.png")
        claim = getattr(claims, f"check_{item.lower()}")("smoke")
        assert (tmp_path / f"{item}.png").stat().st_size > 1000 and (tmp_path / f"{item}.pdf").exists()
        assert claim.holds is None and "static" in claim.note.lower() and claim.id == f"ESCA-{item}"
    t1 = tables.STATIC_TABLES["Tab1"]()
    c1 = claims.check_tab1(t1, "smoke")
    assert t1.shape == (2, 5) and "Latent Dirichlet Allocation [2]" in t1.values and c1.holds is None
    t2 = tables.STATIC_TABLES["Tab2"]()
    c2 = claims.check_tab2(t2, "smoke")
    assert len(t2) == 7 and list(t2.columns) == ["symbol", "meaning"] and c2.holds is None


def test_hard_statistics_equal_one_hot_soft_statistics():
    from scalable_bayes.inference.gmm_sem import _stats_hard, _stats_soft

    rng = np.random.default_rng(6)
    X = rng.standard_normal((400, 2)) * 3
    z = rng.integers(0, 5, size=400)
    z[z == 3] = 2  # an empty component
    R = np.zeros((400, 5))
    R[np.arange(400), z] = 1.0
    for a, b in zip(_stats_hard(X, z, 5), _stats_soft(X, R)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-9)


def _fig2_frame(threads):
    """Two engines on one corpus, two seeds (a claim with one seed is not checked), the same smooth held-out LL
    curve (evaluated every 3 of 30 iterations): CGS reaches the target first in wall time (ESCA's wall time
    1.5x CGS's), ESCA first in CPU time (half CGS's)."""
    rows = []
    for method, wall, cpu in [("CGS", 0.1, 0.1), ("ESCA", 0.15, 0.05)]:
        for seed in (0, 1):
            for it in range(0, 31, 3):
                rows.append({"train_corpus": "toy", "method": method, "seed": seed, "iteration": it,
                             "wall_time": wall * it, "cpu_time": cpu * it, "heldout_ll": -7.5 - 1.5 * np.exp(-it / 3),
                             "threads": threads, "n_topics": 4, "alpha": 0.5, "beta": 0.1, "n_tokens": 100,
                             "n_test_docs": 10})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("threads,verdict", [(1, "holds"), (2, "fails")])
def test_fig2_verdict_clock_is_cpu_time_for_single_threaded_runs(tmp_path, threads, verdict):
    from scalable_bayes_papers.esca import claims, figures

    df = _fig2_frame(threads)
    claim = claims.check_fig2(df, {}, "test")
    assert claim.verdict == verdict, claim.measured
    assert claim.details["toy"]["clock"] == ("cpu_time" if threads == 1 else "wall_time")
    figures.fig2(df, {}, tmp_path / "Fig2.png")
    assert (tmp_path / "Fig2.png").stat().st_size > 1000


def test_kmeanspp_init_is_the_good_scenario_and_bad_init_keeps_the_stream():
    """The library's k-means++ init is Fig. 3's 'good' start; the 'bad' one draws from the same stream position."""
    from scalable_bayes.inference.gmm_sem import init_from_means, init_kmeanspp

    X, _, _ = make_gmm_data(4, 2000, 10, seed=3)
    a, b = init_kmeanspp(X, 4, np.random.default_rng(7)), init_params(X, 4, "good", np.random.default_rng(7))
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    rng = np.random.default_rng(7)
    rng.choice(X.shape[0], size=2000, replace=False)
    want = init_from_means(X, X.mean(0) + rng.uniform(-0.5, 0.5, size=(4, 2)))
    for u, v in zip(init_params(X, 4, "bad", np.random.default_rng(7)), want):
        np.testing.assert_array_equal(u, v)
    assert np.allclose(want.weights, 0.25) and np.allclose(want.covs[0], np.cov(X.T) + 1e-6 * np.eye(2))


def test_subsample_rows_is_seeded_and_keeps_order():
    from scalable_bayes.corpora import subsample_rows

    X = sp.csr_matrix(np.arange(20).reshape(10, 2))
    assert subsample_rows(X, None, 0) is X and subsample_rows(X, 10, 0) is X
    Y = subsample_rows(X, 4, 1)
    rows = Y.toarray()[:, 0] // 2
    assert len(rows) == 4 and list(rows) == sorted(rows)
    np.testing.assert_array_equal(Y.toarray(), subsample_rows(X, 4, 1).toarray())


def test_tabu3_runs_keep_every_topic_and_the_table_shows_the_first(tmp_path):
    from scalable_bayes.corpora import Corpus
    from scalable_bayes_papers.esca import claims, runs, tables

    X, _, _ = naive.synthetic_lda(n_docs=60, n_words=30, n_topics=3, doc_len=20, seed=1)
    docs = pd.DataFrame({"doc_id": [str(i) for i in range(60)], "label": -1, "split": ["train"] * 50 + ["test"] * 10,
                         "n_tokens": np.asarray(X.sum(1)).ravel()})
    c = Corpus(counts=sp.csr_matrix(X), vocab=[f"w{i}" for i in range(30)], docs=docs, meta={"name": "toy"})
    s = {"n_topics": 4, "alpha": None, "beta": 0.1, "n_iter": 3, "threads": 1, "n_words": 5}
    df = runs.run_topics(c, s)
    assert list(df.columns) == ["corpus", "topic", "top_words"] and list(df["topic"]) == [0, 1, 2, 3]
    _, est, _ = runs.run_lda(c.subset("train").counts, None, method="ESCA", n_topics=4, alpha=None, beta=0.1,
                             n_iter=3, evaluate_every=0, n_threads=1, seed=0)
    t = tables.tabu3([df], n_show=2)
    assert t["top_words"].tolist() == top_words(est.components_, c.vocab, 2, 5)["top_words"].tolist()
    claim = claims.check_tabu3(t, {"run": {"n_topics": 4, "n_iter": 3}}, "test")
    assert claim.holds is None and "toy topic 1:" in claim.measured


def test_a_fit_that_compiles_the_kernels_equals_one_that_loads_them(tmp_path):
    """Same seed, same numbers, whether this process compiled ESCA's kernels or loaded them from Numba's
    on-disk cache. (With fastmath reassociation the word sweep drew differently on the compiling run:
    the first job of a fresh clone gave other numbers than a rerun.)"""
    import subprocess
    import sys

    script = tmp_path / "fit.py"
    script.write_text(
        "import hashlib\n"
        "import numpy as np, scipy.sparse as sp\n"
        "from scalable_bayes.inference.lda import ESCA\n"
        "rng = np.random.default_rng(0)\n"
        "phi = rng.dirichlet(np.full(3000, 0.05), size=20)\n"
        "theta = rng.dirichlet(np.full(20, 0.3), size=2000)\n"
        "X = sp.csr_matrix(rng.poisson(60 * theta @ phi).astype(np.int32))\n"
        "est = ESCA(n_components=100, max_iter=10, random_state=0, n_jobs=1).fit(X)\n"
        "print(hashlib.sha256(est.components_.tobytes()).hexdigest())\n")
    env = dict(__import__("os").environ, NUMBA_CACHE_DIR=str(tmp_path / "numba_cache"))
    runs = [subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600)
            for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr[-3000:]
    compiled, cached = (r.stdout.strip() for r in runs)
    assert any((tmp_path / "numba_cache").rglob("*.nbi")), "the first run wrote no cache: the test tests nothing"
    assert compiled == cached


def _fig5_table(shift, seeds=(0, 1, 2), K=100):
    rng = np.random.default_rng(1)
    rows = []
    for s in seeds:
        for m in ("ESCA", "ESCA_plain"):
            noise = rng.normal(0, 0.01, size=6)
            for it in range(6):
                ll = -8.0 + 0.1 * it + noise[it] + (shift if (m == "ESCA" and it) else 0.0)
                rows.append({"method": m, "seed": s, "n_topics": K, "iteration": 3 * it, "heldout_ll": ll,
                             "wall_time": (1.0 if m == "ESCA" else 2.0) * (it + 1), "train_corpus": "toy",
                             "n_tokens": 1000})
    return pd.DataFrame(rows)


def test_fig5_claim_compares_the_paired_gap_with_the_seed_noise():
    from scalable_bayes_papers.esca.claims import check_fig5

    same = check_fig5(_fig5_table(0.0), {}, "test")
    assert same.verdict != "fails" and "s.e. over 3 seeds" in same.measured, same.measured
    biased = check_fig5(_fig5_table(0.1), {}, "test")  # sparse 0.1 nats above plain at every iteration
    assert biased.verdict == "fails"
    one_seed = check_fig5(_fig5_table(0.02, seeds=(0,)), {}, "test")  # one seed: no spread to judge a gap by
    assert one_seed.verdict == "not checked" and "one seed" in one_seed.measured
