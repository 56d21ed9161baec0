"""The library's estimators follow scikit-learn's conventions: its estimator checks, clone, Pipeline,
GridSearchCV, pickling (without the training corpus), random_state, and the mixture / LDA APIs they mirror
(``GaussianMixture``, ``LatentDirichletAllocation``).

The reference values of the LDA engines, ``SphericalAdmixture`` and ``DPMultinomialMixture`` were recorded from
each estimator before it took scikit-learn's parameter names (``n_topics, n_iter, n_threads, seed``), so an
integer ``random_state`` is checked to give the same fit as the former integer ``seed``: the pipeline's numbers
do not move.

"The same" is to a relative 1e-9 (labels exactly), not bit for bit: floating-point results are bit-identical
only on the same CPU kernels: OpenBLAS picks its kernels by CPU (Haswell, SkylakeX, ...), Numba compiles for
the host CPU and NumPy dispatches its SIMD loops at run time, so an AVX-512 machine rounds a few sums
differently from an AVX2 one (measured: relative differences up to 1e-12 in these fits). A change of algorithm,
seeding or draw order moves them by many orders of magnitude more.
"""

from __future__ import annotations

import hashlib
import json
import pickle
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Normalizer
from sklearn.utils.estimator_checks import parametrize_with_checks

from scalable_bayes.inference import DPMultinomialMixture, SphericalAdmixture
from scalable_bayes.inference.lda import CVB0, ESCA, CollapsedGibbs
from scalable_bayes.inference.vmf import BregmanVMF, MovMF, SphericalKMeans

# ---------------------------------------------------------------------------- scikit-learn's checks

_ZERO_ROWS = ("the check's data has all-zero rows; a zero vector is no point of the sphere S^(d-1), and "
              "normalize=True cannot make it one")
_SPHERE_FAILS = {name: _ZERO_ROWS for name in ("check_estimators_dtypes", "check_estimator_sparse_tag",
                                               "check_estimator_sparse_array", "check_estimator_sparse_matrix")}
_MC_ORDER = ("transform is Monte Carlo: document m's theta chain draws from the stream (seed, m), so a row's "
             "proportions depend on its position in X (deterministic for a given X)")
_ONE_TOPIC = ("the check sets n_components=1; an admixture needs K >= 2 topics (theta on the (K-1)-simplex, sampled on "
              "its sphere lift; K = 1 would be one vMF, not an admixture), so fit refuses K = 1 naming n_components")

CHECKED = [
    ESCA(n_components=3, max_iter=3, n_jobs=1, heldout_sweeps=3),
    CollapsedGibbs(n_components=3, max_iter=3, heldout_sweeps=3),
    CVB0(n_components=3, max_iter=3, heldout_sweeps=3),
    MovMF(n_components=2, max_iter=5, normalize=True),
    BregmanVMF(n_components=2, max_iter=5, normalize=True),
    SphericalKMeans(n_components=2, max_iter=5, normalize=True),
    SphericalAdmixture(n_components=2, method="vi", max_iter=3, n_jobs=1, n_prior_draws=5, vi_local_steps=2,
                       normalize=True),
    DPMultinomialMixture("gibbs", max_iter=3, random_state=0, init_clusters=2),
]


def _expected_failures(est) -> dict:
    """The checks an estimator cannot pass, each with its reason (everything else must pass)."""
    if isinstance(est, (MovMF, BregmanVMF, SphericalKMeans)):
        return dict(_SPHERE_FAILS)
    if isinstance(est, SphericalAdmixture):
        return {**_SPHERE_FAILS, "check_methods_sample_order_invariance": _MC_ORDER,
                "check_methods_subset_invariance": _MC_ORDER,
                **{name: _ONE_TOPIC for name in ("check_dont_overwrite_parameters", "check_fit2d_1sample",
                                                 "check_fit2d_predict1d")}}
    return {}


@parametrize_with_checks(CHECKED, expected_failed_checks=_expected_failures)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# ---------------------------------------------------------------------------- values recorded before the rename

def _digest(a) -> str:
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]


FORMER = json.loads((Path(__file__).parent / "recorded_fits.json").read_text())
RTOL = 1e-9  # see the module's docstring: CPU kernels move these fits by up to 1e-12 relative


def _former(key, name, dtype=np.float64):
    return np.asarray(FORMER[key][name], dtype=dtype)


def _same_fit(got, want):
    # float32 arrays (SAM's samples_) may round a 1e-12 difference to the neighbouring float32: one ulp of slack
    rtol = max(RTOL, float(np.finfo(np.float32).eps)) if np.asarray(got).dtype == np.float32 else RTOL
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), want, rtol=rtol, atol=1e-15)


def _counts(seed, shape):
    return sp.csr_matrix(np.random.default_rng(seed).poisson(0.8, shape))


# The fits' values before the rename, in tests/recorded_fits.json ("lda/<class>"): components_, transform(Xh) and
# the held-out log-likelihood of cls(n_topics=4, n_iter=5, seed=123, n_threads=1, evaluate_every=5).fit(X,
# X_heldout=Xh); the digests (components_, transform) are those recorded from the former code.
LDA_DIGESTS = {
    ESCA: ("175cd49e36019eec", "04a1406330d8048d"),
    CollapsedGibbs: ("8c0e491770cf40a0", "de55d8baa36d139f"),
    CVB0: ("e9462c8010b5c7cd", "dd92d69b318b6b33"),
}


@pytest.mark.parametrize("cls", [ESCA, CollapsedGibbs, CVB0])
def test_int_random_state_reproduces_the_former_seed(cls):
    """(CVB0 with the start those values were recorded with, init="soft"; its default start is now random topic
    assignments.)"""
    X, Xh = _counts(20261126, (30, 25)), _counts(7, (6, 25))
    kw = {"init": "soft"} if cls is CVB0 else {}
    m = cls(n_components=4, max_iter=5, random_state=123, n_jobs=1, evaluate_every=5, **kw).fit(X, X_heldout=Xh)
    key = f"lda/{cls.__name__}"
    _same_fit(m.components_, _former(key, "components"))
    _same_fit(m.transform(Xh), _former(key, "transform"))
    _same_fit(m.history_[-1]["heldout_ll"], _former(key, "heldout_ll"))
    assert m.seed_ == 123


@pytest.mark.parametrize("cls", [ESCA, CollapsedGibbs, CVB0])
def test_generator_random_state_draws_one_seed(cls):
    X = _counts(1, (20, 12))
    a = cls(n_components=3, max_iter=2, random_state=np.random.default_rng(5)).fit(X)
    b = cls(n_components=3, max_iter=2, random_state=np.random.default_rng(5)).fit(X)
    assert a.seed_ == b.seed_
    np.testing.assert_array_equal(a.components_, b.components_)
    again = cls(n_components=3, max_iter=2, random_state=a.seed_).fit(X)
    np.testing.assert_array_equal(a.components_, again.components_)


# ---------------------------------------------------------------------------- SAM and DP

def _unit_rows(seed, shape):
    a = np.random.default_rng(seed).poisson(0.7, shape).astype(float) + np.eye(*shape)
    return sp.csr_matrix(a / np.linalg.norm(a, axis=1, keepdims=True))


# The fits' values before the rename, in tests/recorded_fits.json: SAM's components_, samples_, transform(X_test,
# n_samples=3) and log_perplexity of each checkpoint from
# SphericalAdmixture(n_topics=3, method=..., n_iter=4, seed=123, n_threads=1, **SAM_KW).fit(X, X_test=Xt); the DP
# mixture's components_, weights_, labels_, log_predictive and alpha of each checkpoint from
# DPMultinomialMixture(method, n_iter=6, seed=123, n_threads=1, ...).fit(Y, X_test=Yt, evaluate_every=3).
# The digests are those recorded from the former code (sha256 of the arrays' bytes); the stored values hash to
# them, so they are that code's numbers exactly (they were written out on an AVX-512 machine with OpenBLAS,
# Numba and NumPy held to AVX2 kernels: OPENBLAS_CORETYPE=Haswell, NUMBA_CPU_NAME=haswell,
# NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL", under which the current code reproduces every digest).
SAM_KW = dict(kappa=40.0, sigma=10.0, kappa0=5.0, alpha=1.0, batch_size=8, n_theta_samples=2, evaluate_every=2,
              n_prior_draws=20, burn_in=1)
SAM_DIGESTS = {  # components_, samples_, transform
    "sggmc": ("a6d17714ebd92ac0", "c29bdd8f47da79df", "17429cc29b9fe02b"),
    "gsgnht": ("acd11ed9e1b9d33a", "a764eb66b9841c77", "7b9feca3a10d50ab"),
    "gmc_apprmh": ("2095a2d74ce529ba", "1a0ef322ea2a438f", "b2d88416a0779d54"),
    "gmc_bgibbs": ("434ae7e818c9d7a9", "c69b0275301ba3b4", "1b5e6db7d46dc3d4"),
    "vi": ("77da9d3cdfdf5614", "e13a8ab5d75b079e", "df1d2bcac9ec45fc"),
    "stovi": ("c36fbf47a07195b0", "df203422f2a52acd", "edb3d1ee0ec0cc65"),
}
DP_DIGESTS = {  # components_, weights_, labels_
    "gibbs": ("2ad6bcdf51667030", "d00ff8cce71faa5c", "86d9d219d42d553b"),
    "scir": ("4dfbb518561eb8c8", "be5b77891eb6008d", "8a95dfe36d710661"),
    "sgrld": ("71d14a8671d42c21", "691bdcd687da39fb", "0accd82cae8212ab"),
}
@pytest.mark.parametrize(("key", "names", "digests"),
                         [(f"sam/{m}", ("components", "samples", "transform"), d) for m, d in SAM_DIGESTS.items()]
                         + [(f"dp/{m}", ("components", "weights", "labels"), d) for m, d in DP_DIGESTS.items()]
                         + [(f"lda/{c.__name__}", ("components", "transform"), d) for c, d in LDA_DIGESTS.items()])
def test_the_stored_former_values_are_the_former_codes_exactly(key, names, digests):
    dtypes = {"labels": np.int64, "samples": np.float32}  # SAM keeps its samples in float32 by default
    for name, digest in zip(names, digests):
        assert _digest(_former(key, name, dtypes.get(name, np.float64))) == digest, name


@pytest.mark.parametrize("method", list(SAM_DIGESTS))
def test_sam_int_random_state_reproduces_the_former_seed(method):
    X, Xt = _unit_rows(20261127, (24, 15)), _unit_rows(11, (5, 15))
    m = SphericalAdmixture(n_components=3, method=method, max_iter=4, random_state=123, n_jobs=1,
                           **SAM_KW).fit(X, X_test=Xt)
    key = f"sam/{method}"
    _same_fit(m.components_, _former(key, "components"))
    _same_fit(m.samples_, _former(key, "samples"))
    _same_fit(m.transform(Xt, n_samples=3), _former(key, "transform"))
    _same_fit([r["log_perplexity"] for r in m.history_], _former(key, "log_perplexity"))
    assert m.seed_ == 123 and m.n_iter_ == 4


@pytest.mark.parametrize("method", list(DP_DIGESTS))
def test_dp_int_random_state_reproduces_the_former_seed(method):
    Y, Yt = _counts(20261127, (60, 12)), _counts(5, (10, 12))
    m = DPMultinomialMixture(method, step_size=None if method == "gibbs" else 0.5, batch_size=20, init_clusters=3,
                             max_iter=6, random_state=123, n_jobs=1).fit(Y, X_test=Yt, evaluate_every=3)
    key = f"dp/{method}"
    _same_fit(m.components_, _former(key, "components"))
    _same_fit(m.weights_, _former(key, "weights"))
    np.testing.assert_array_equal(m.labels_, _former(key, "labels", np.int64))
    _same_fit([r["log_predictive"] for r in m.history_], _former(key, "log_predictive"))
    _same_fit([r["alpha"] for r in m.history_], _former(key, "alpha"))
    assert m.seed_ == 123 and m.n_iter_ == 6


def test_sam_and_dp_take_a_generator_random_state_and_n_jobs_minus_one():
    X = _unit_rows(3, (12, 8))
    sam = [SphericalAdmixture(2, "vi", max_iter=2, n_prior_draws=5, n_jobs=-1,
                              random_state=np.random.default_rng(5)).fit(X) for _ in range(2)]
    assert sam[0].seed_ == sam[1].seed_
    np.testing.assert_array_equal(sam[0].components_, sam[1].components_)
    again = SphericalAdmixture(2, "vi", max_iter=2, n_prior_draws=5, n_jobs=1, random_state=sam[0].seed_).fit(X)
    np.testing.assert_array_equal(again.components_, sam[0].components_)
    Y = _counts(4, (30, 6))
    dp = [DPMultinomialMixture("gibbs", max_iter=3, init_clusters=2, n_jobs=-1,
                               random_state=np.random.default_rng(5)).fit(Y) for _ in range(2)]
    assert dp[0].seed_ == dp[1].seed_
    np.testing.assert_array_equal(dp[0].components_, dp[1].components_)
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="n_jobs"):
            SphericalAdmixture(2, "vi", max_iter=1, n_jobs=bad).fit(X)
        with pytest.raises(ValueError, match="n_jobs"):
            DPMultinomialMixture("gibbs", max_iter=1, n_jobs=bad).fit(Y)


def test_sam_and_dp_verbose_log_one_line_per_iteration(caplog):
    import logging

    X, Y = _unit_rows(3, (12, 8)), sp.csr_matrix(np.random.default_rng(4).poisson(0.8, (30, 6)) + 1)
    with caplog.at_level(logging.INFO, logger="scalable_bayes.inference"):
        SphericalAdmixture(2, "vi", max_iter=3, n_prior_draws=5, n_jobs=1).fit(X)
        DPMultinomialMixture("gibbs", max_iter=3, init_clusters=2, random_state=0).fit(Y)
        quiet = len(caplog.records)
        SphericalAdmixture(2, "vi", max_iter=3, n_prior_draws=5, n_jobs=1, verbose=1).fit(X)
        DPMultinomialMixture("gibbs", max_iter=3, init_clusters=2, random_state=0, verbose=1).fit(Y)
    lines = [r.getMessage() for r in caplog.records[quiet:]]
    assert quiet == 0
    assert [m.split(",")[0] for m in lines] == [f"SAM vi iteration {i} of max_iter 3" for i in (1, 2, 3)] + \
        [f"DP gibbs iteration {i} of max_iter 3" for i in (1, 2, 3)]


def test_lda_score_and_perplexity_agree():
    X = _counts(3, (25, 15))
    m = ESCA(n_components=3, max_iter=4, n_jobs=1).fit(X)
    s = m.score(X)
    assert np.isfinite(s) and s < 0
    assert m.perplexity(X) == pytest.approx(np.exp(-s / X.sum()))
    assert list(m.get_feature_names_out()) == ["esca0", "esca1", "esca2"]
    with pytest.raises(ValueError, match="training vocabulary"):
        m.transform(_counts(3, (4, 16)))


def test_pickled_esca_holds_its_topics_not_its_corpus():
    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.poisson(3.0, (3000, 40)))  # 120k entries, ~360k tokens
    m = ESCA(n_components=4, max_iter=2, n_jobs=1).fit(X)
    theta = m.transform(X[:5])
    blob = pickle.dumps(m)
    corpus_bytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    assert len(blob) < 4 * m.components_.nbytes + 20_000, len(blob)
    assert len(blob) < corpus_bytes / 20
    back = pickle.loads(blob)
    np.testing.assert_array_equal(back.components_, m.components_)
    np.testing.assert_array_equal(back.transform(X[:5]), theta)
    assert back.score(X[:5]) == m.score(X[:5])
    # the live object still has its sampler state
    assert m.doc_topic_counts_.shape == (3000, 4)


def test_pickled_cgs_and_cvb0_leave_per_token_state_behind():
    X = sp.csr_matrix(np.random.default_rng(1).poisson(3.0, (2000, 30)))
    for cls in (CollapsedGibbs, CVB0):
        m = cls(n_components=3, max_iter=1).fit(X)
        blob = pickle.dumps(m)
        assert len(blob) < 30_000, (cls.__name__, len(blob))
        np.testing.assert_array_equal(pickle.loads(blob).components_, m.components_)


# ---------------------------------------------------------------------------- clone, Pipeline, GridSearchCV

DOCS = [
    "the cat sat on the mat with the cat", "dogs and cats are pets", "the stock market fell today",
    "investors sold stock and bonds", "a cat chased the dog", "markets rallied as bonds fell",
    "my dog likes the mat", "the bank raised rates for investors",
] * 3


def test_lda_in_a_pipeline_and_grid_search():
    pipe = make_pipeline(CountVectorizer(), ESCA(n_components=2, max_iter=5, n_jobs=1))
    theta = pipe.fit_transform(DOCS)
    assert theta.shape == (len(DOCS), 2)
    np.testing.assert_allclose(theta.sum(axis=1), 1.0)
    assert list(pipe.get_feature_names_out()) == ["esca0", "esca1"]
    X = CountVectorizer().fit_transform(DOCS)
    gs = GridSearchCV(CollapsedGibbs(max_iter=3), {"n_components": [2, 3]}, cv=2).fit(X)
    assert gs.best_params_["n_components"] in (2, 3)
    assert isinstance(gs.best_estimator_, CollapsedGibbs)


def test_clone_keeps_the_parameters_and_drops_the_fit():
    for est in CHECKED:
        c = clone(est)
        assert c.get_params() == est.get_params()
    m = ESCA(n_components=2, max_iter=2).fit(_counts(0, (10, 8)))
    c = clone(m).set_params(max_iter=4)
    assert c.max_iter == 4 and not hasattr(c, "n_iter_")
    assert "n_topics" not in c.get_params() and "seed" not in c.get_params()
    for est in CHECKED:  # every estimator: scikit-learn's names, none of the former ones
        params = set(est.get_params())
        assert not {"n_topics", "n_iter", "n_threads", "seed"} & params, type(est).__name__
        assert {"max_iter", "random_state"} <= params, type(est).__name__
        if not isinstance(est, (MovMF, BregmanVMF, SphericalKMeans)):
            assert {"n_jobs", "verbose"} <= params, type(est).__name__


def test_vmf_in_a_pipeline_and_grid_search():
    X = TfidfVectorizer().fit_transform(DOCS)
    labels = make_pipeline(Normalizer(), MovMF(n_components=2, random_state=0, max_iter=20)).fit_predict(X)
    assert labels.shape == (len(DOCS),)
    gs = GridSearchCV(BregmanVMF(max_iter=10, random_state=0), {"n_components": [2, 3]}, cv=2).fit(X)
    assert gs.best_params_["n_components"] in (2, 3)
    pickle.loads(pickle.dumps(gs.best_estimator_)).predict(X)


def test_a_pipelines_y_is_never_held_out_data():
    """fit(X, y) (what a Pipeline or GridSearchCV calls) ignores y; held-out data is a keyword."""
    X = TfidfVectorizer().fit_transform(DOCS)
    y = np.arange(len(DOCS))
    sam = make_pipeline(SphericalAdmixture(n_components=2, method="vi", max_iter=2, n_prior_draws=5, n_jobs=1))
    sam.fit(X, y)
    assert sam[-1].trace_["log_perplexity"].isna().all()
    counts = CountVectorizer().fit_transform(DOCS)
    dp = DPMultinomialMixture("gibbs", max_iter=2, random_state=0, init_clusters=2).fit(counts, y)
    assert dp.trace_["log_predictive"].isna().all()
    scored = DPMultinomialMixture("gibbs", max_iter=2, random_state=0, init_clusters=2).fit(counts, X_test=counts)
    assert scored.trace_["log_predictive"].notna().all()


# ---------------------------------------------------------------------------- vMF mixtures as GaussianMixture


def _sphere_data(n=300, d=5, seed=0):
    from scalable_bayes.models.sam import sample_vmf

    rng = np.random.default_rng(seed)
    mus = np.eye(d)[:2]
    X = np.vstack([sample_vmf(mus[0], 40.0, n // 2, rng), sample_vmf(mus[1], 40.0, n - n // 2, rng)])
    return X


@pytest.mark.parametrize("cls", [MovMF, BregmanVMF])
def test_vmf_bic_aic_count_the_free_parameters(cls):
    X = _sphere_data()
    n, d = X.shape
    for tied, p in ((False, 2 * (d - 1) + 2 + 1), (True, 2 * (d - 1) + 1 + 1)):
        m = cls(n_components=2, tied=tied, random_state=0, max_iter=30).fit(X)
        ll = m.score(X) * n
        assert m.bic(X) == pytest.approx(-2 * ll + p * np.log(n))
        assert m.aic(X) == pytest.approx(-2 * ll + 2 * p)


@pytest.mark.parametrize("cls", [MovMF, BregmanVMF])
def test_vmf_sample_fit_predict_n_init_and_tol(cls):
    X = _sphere_data()
    m = cls(n_components=2, random_state=0, max_iter=200, tol=1e-8).fit(X)
    assert m.converged_ and m.n_iter_ < 200
    np.testing.assert_array_equal(cls(n_components=2, random_state=0, max_iter=200, tol=1e-8).fit_predict(X),
                                  m.predict(X))
    S, lab = m.sample(500)
    assert S.shape == (500, X.shape[1]) and lab.shape == (500,)
    np.testing.assert_allclose(np.linalg.norm(S, axis=1), 1.0)
    # the sampled points come from the fitted components: they are predicted as their own component
    assert np.mean(m.predict(S) == lab) > 0.95
    S2, lab2 = m.sample(500)
    np.testing.assert_array_equal(S, S2)  # an int random_state: the same draws, as in GaussianMixture
    # n_init: the best start by log-likelihood, never worse than the first start alone
    one = cls(n_components=3, random_state=1, max_iter=5).fit(X)
    best = cls(n_components=3, random_state=1, max_iter=5, n_init=4).fit(X)
    assert best.score(X) >= one.score(X) - 1e-12
    with pytest.raises(ValueError, match="n_init"):
        cls(n_init=0).fit(X)


def test_vmf_n_init_one_is_the_former_fit():
    from scalable_bayes.inference.vmf import fit_vmf_mixture

    X = _sphere_data()
    res = fit_vmf_mixture(X, 2, max_iter=7, rng=3)
    m = MovMF(n_components=2, max_iter=7, random_state=3).fit(X)
    np.testing.assert_array_equal(m.mean_directions_, res.directions)
    np.testing.assert_array_equal(m.log_likelihood_, res.log_likelihood)
