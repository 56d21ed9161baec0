"""Property tests of the public API (hypothesis): for generated inputs (shapes, dtypes, sparse formats,
NaN/inf, empty, extreme values, bad hyperparameters) every public estimator, sampler factory and special
function either returns a finite result of the right shape, or raises ValueError/TypeError whose message
names the offending argument. Never an error from inside Numba, a hang or a silent NaN.

Examples are few and small (compiled kernels are cached after the first call) so that the file runs in
well under a minute; hypothesis's database is off so that a run is reproducible.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from scalable_bayes.inference.lda import CVB0, ESCA, CollapsedGibbs
from scalable_bayes.inference.vmf import BregmanVMF, MovMF, SphericalKMeans
from scalable_bayes.models import gaussian_known_variance
from scalable_bayes.evaluation.heldout import heldout_loglik
from scalable_bayes.samplers import (
    DivergenceError,
    run_chain,
    sghmc,
    sghmc_reformulated,
    sgld,
    sgnht,
    sgnht_matrix,
    sgnht_reformulated,
)
from scalable_bayes.special import bessel_ratio, vmf_log_normalizer, vmf_mean_to_kappa

SETTINGS = settings(max_examples=25, deadline=None, database=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

BAD_NUMBERS = st.sampled_from([0.0, -1.0, float("nan"), float("inf"), -float("inf")])


def _names_argument(exc: Exception, names) -> bool:
    msg = str(exc)
    return any(n in msg for n in names)


def _matrix(values, fmt):
    a = np.asarray(values)
    if fmt == "dense":
        return a
    if a.ndim != 2:
        return a
    return {"csr": sp.csr_matrix, "csc": sp.csc_matrix, "coo": sp.coo_matrix}[fmt](a)


count_matrices = st.tuples(
    st.integers(0, 6), st.integers(0, 6), st.sampled_from(["int", "float", "negative", "nan", "inf", "frac"]),
    st.sampled_from(["dense", "csr", "csc", "coo"]), st.integers(0, 2**16),
).map(lambda t: _count_matrix(*t))


def _count_matrix(m, v, kind, fmt, seed):
    rng = np.random.default_rng(seed)
    a = rng.poisson(1.5, size=(m, v)).astype(np.float64 if kind != "int" else np.int64)
    if a.size:
        i, j = rng.integers(m), rng.integers(v)
        a[i, j] = {"int": a[i, j], "float": a[i, j], "negative": -1.0, "nan": np.nan, "inf": np.inf,
                   "frac": 0.5}[kind]
    return _matrix(a, fmt), kind


@pytest.mark.parametrize("cls", [ESCA, CollapsedGibbs, CVB0])
@SETTINGS
@given(data=count_matrices, n_topics=st.sampled_from([-1, 0, 1, 2, 3, 2.5, "3"]),
       alpha=st.one_of(st.none(), BAD_NUMBERS, st.just(0.1)), beta=st.one_of(BAD_NUMBERS, st.just(0.1)),
       seed=st.sampled_from([0, 7, -1, None]))
def test_lda_estimators_fit_or_name_the_problem(cls, data, n_topics, alpha, beta, seed):
    X, kind = data
    est = cls(n_components=n_topics, doc_topic_prior=alpha, topic_word_prior=beta, max_iter=2, random_state=seed)
    try:
        est.fit(X)
    except (ValueError, TypeError) as exc:
        assert _names_argument(exc, ["n_components", "doc_topic_prior", "topic_word_prior", "random_state", "X ", "X:",
                                     "0 sample(s)", "0 feature(s)"]), exc
        return
    V = np.asarray(X.shape)[1]
    c = est.components_
    assert c.shape == (int(n_topics), V) and np.isfinite(c).all()
    assert kind in ("int", "float")  # a NaN, inf, negative or fractional count must have been refused


@SETTINGS
@given(data=count_matrices, k=st.integers(1, 4), alpha=st.one_of(BAD_NUMBERS, st.just(0.5)),
       topics=st.sampled_from(["ok", "nan", "negative", "wrong_v"]))
def test_heldout_score_or_name_the_problem(data, k, alpha, topics):
    X, kind = data
    V = np.asarray(X.shape)[1]
    phi = np.random.default_rng(0).random((k, max(V, 1) + (1 if topics == "wrong_v" else 0))) + 0.1
    if topics == "nan":
        phi[0, 0] = np.nan
    elif topics == "negative":
        phi[0, 0] = -1.0
    try:
        ll = heldout_loglik(phi, X, alpha, n_sweeps=3, seed=0)
    except (ValueError, TypeError) as exc:
        assert _names_argument(exc, ["topic_word", "X ", "X:", "doc_topic_prior", "alpha", "n_words", "column"]), exc
        return
    assert np.isfinite(ll) or np.isnan(ll) and _too_short(X)
    assert kind in ("int", "float") and topics == "ok"


def _too_short(X) -> bool:
    """No document has two tokens to split into halves: the score is undefined (NaN by contract)."""
    a = X.toarray() if sp.issparse(X) else np.asarray(X)
    return a.size == 0 or (a.sum(axis=1) < 2).all()


unit_rows = st.tuples(st.integers(0, 8), st.integers(0, 5), st.sampled_from(["unit", "zero", "nan", "scaled"]),
                      st.sampled_from(["dense", "csr"]), st.integers(0, 2**16)).map(lambda t: _unit_rows(*t))


def _unit_rows(n, d, kind, fmt, seed):
    rng = np.random.default_rng(seed)
    X = np.abs(rng.normal(size=(n, d)))
    with np.errstate(invalid="ignore", divide="ignore"):
        X /= np.linalg.norm(X, axis=1, keepdims=True)
    if n and d:
        X[0] = {"unit": X[0], "zero": 0.0, "nan": np.nan, "scaled": 2 * X[0]}[kind]
    return _matrix(X, fmt), kind


@pytest.mark.parametrize("cls", [MovMF, BregmanVMF, SphericalKMeans])
@SETTINGS
@given(data=unit_rows, k=st.sampled_from([-1, 0, 1, 2, 3, 50]))
def test_vmf_estimators_fit_or_name_the_problem(cls, data, k):
    X, kind = data
    kwargs = {"max_iter": 3} if cls is SphericalKMeans else {"max_iter": 3, "tol": 0.0}
    try:
        est = cls(n_components=k, **kwargs).fit(X)
    except (ValueError, TypeError) as exc:
        assert _names_argument(exc, ["n_components", "X ", "X:", "0 sample(s)", "0 feature(s)"]), exc
        return
    n = X.shape[0]
    labels = est.predict(X)
    assert labels.shape == (n,) and ((labels >= 0) & (labels < k)).all()
    assert kind == "unit"


@SETTINGS
@given(alg=st.sampled_from([sgld, sghmc, sgnht, sghmc_reformulated, sgnht_reformulated, sgnht_matrix]),
       step=st.one_of(BAD_NUMBERS, st.sampled_from([1e-3, 1e-2])),
       n_steps=st.sampled_from([-1, 0, 1, 50]), batch=st.sampled_from([0, 1, 10, 100, 101, None]),
       position=st.sampled_from([[0.0], [np.nan], [0.0, 0.0], [], [1e308]]), seed=st.sampled_from([0, -3, None]))
def test_samplers_run_or_name_the_problem(alg, step, n_steps, batch, position, seed):
    model = gaussian_known_variance(np.random.default_rng(0).normal(size=100))
    try:
        res = run_chain(alg(), model, position, seed=seed, n_steps=n_steps, step_size=step, batch_size=batch)
    except DivergenceError:
        return  # a clear error naming the step; allowed for a huge start or step
    except (ValueError, TypeError) as exc:
        assert _names_argument(exc, ["step_size", "n_steps", "batch", "minibatch", "position", "seed", "dim"]), exc
        return
    assert res.samples.shape == (n_steps, 1) and np.isfinite(res.samples).all()


@SETTINGS
@given(d=st.integers(2, 5000), kappa=st.one_of(st.floats(0, 1e8), st.sampled_from([0.0, 1e-300, np.inf])))
def test_bessel_ratio_and_normaliser_limits(d, kappa):
    r = float(bessel_ratio(kappa, d=d))
    assert 0.0 <= r <= 1.0
    if kappa < 1e-8:
        assert r == pytest.approx(kappa / d, rel=1e-6, abs=1e-300)
    if kappa == np.inf:
        assert r == 1.0 and vmf_log_normalizer(kappa, d=d) == -np.inf
    else:
        assert np.isfinite(vmf_log_normalizer(kappa, d=d))


@SETTINGS
@given(d=st.integers(2, 5000), r=st.one_of(st.floats(0, 1, exclude_max=True), st.sampled_from([0.0, 1e-12, 1 - 1e-12])),
       method=st.sampled_from(["refined2", "banerjee", "newton"]))
@example(d=2, r=1.1240166421044908e-259, method="newton")  # Halley's d^2/kappa^2 overflowed here
def test_mean_to_kappa_limits(d, r, method):
    k = float(vmf_mean_to_kappa(r, d=d, method=method))
    assert np.isfinite(k) and k >= 0
    if r < 1e-9:
        assert k == pytest.approx(d * r, rel=1e-3, abs=1e-12)  # A_d(kappa) ~ kappa / d near 0
    if r > 1 - 1e-7:
        assert k == pytest.approx((d - 1) / (2 * (1 - r)), rel=1e-2)  # A_d(kappa) ~ 1 - (d - 1) / (2 kappa)


@pytest.mark.parametrize("fn, arg, d", [(bessel_ratio, -1.0, 3), (bessel_ratio, np.nan, 3), (bessel_ratio, 1.0, 0),
                                       (vmf_log_normalizer, -1.0, 3), (vmf_mean_to_kappa, 1.5, 3),
                                       (vmf_mean_to_kappa, -0.1, 3)])
def test_special_functions_refuse_bad_arguments(fn, arg, d):
    with pytest.raises((ValueError, TypeError)) as info:
        fn(arg, d=d)
    assert _names_argument(info.value, ["kappa", "d ", "d=", "r ", "r=", "|mu|", "mean", "dimension"]), info.value
