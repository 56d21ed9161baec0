"""vMF mixtures: kernels vs naive loops, EM monotonicity, natural == mean parametrisation, bad input."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import logsumexp

from scalable_bayes.evaluation.clustering import nmi
from scalable_bayes.inference.vmf import BregmanVMF, MovMF, SphericalKMeans, init_partition_means
from scalable_bayes.inference.vmf.kernels import class_sums_csc, class_sums_csc_serial, estep_csr, estep_csr_serial
from scalable_bayes.special import vmf_log_partition_uniform

from naive_vmf import logsumexp_rows_naive, movmf_log_prob_naive


def _mixture_data(n=300, d=50, K=3, spread=0.6, seed=0, sparse=True):
    """Unit rows around K random directions (noisy, non-negative like tf-idf), CSR."""
    rng = np.random.default_rng(seed)
    centers = np.abs(rng.normal(size=(K, d))) * (rng.random((K, d)) < 0.3)
    y = rng.integers(0, K, size=n)
    X = centers[y] + spread * np.abs(rng.normal(size=(n, d))) * (rng.random((n, d)) < 0.2)
    X[X.sum(axis=1) == 0, 0] = 1.0
    X /= np.linalg.norm(X, axis=1)[:, None]
    return (sp.csr_matrix(X) if sparse else X), y


def test_estep_kernel_vs_naive():
    X, _ = _mixture_data(n=40, d=12, K=4)
    rng = np.random.default_rng(1)
    M = rng.normal(size=(4, 12))
    M /= np.linalg.norm(M, axis=1)[:, None]
    kappa = np.array([1.0, 5.0, 20.0, 0.5])
    logw = np.log(np.array([0.1, 0.2, 0.3, 0.4]))
    lognorm = np.array([-3.0, -2.0, -1.0, 0.5])
    a = logw + lognorm
    ref = movmf_log_prob_naive(X, M * kappa[:, None], logw, lognorm)
    R, ll = estep_csr(X.indptr, X.indices, X.data, np.ascontiguousarray(M.T), a, kappa, True)
    assert np.allclose(ll, logsumexp_rows_naive(ref), rtol=1e-13)
    assert np.allclose(R, np.exp(ref - logsumexp(ref, axis=1)[:, None]), rtol=1e-12, atol=1e-15)
    Rh, llh = estep_csr(X.indptr, X.indices, X.data, np.ascontiguousarray(M.T), a, kappa, False)
    assert np.array_equal(Rh.argmax(axis=1), ref.argmax(axis=1)) and np.all(Rh.sum(axis=1) == 1)
    assert np.allclose(llh, ref.max(axis=1), rtol=1e-13)
    # -inf weight (dead component) never gets mass and gives no NaN
    a2 = a.copy()
    a2[0] = -np.inf
    R2, ll2 = estep_csr(X.indptr, X.indices, X.data, np.ascontiguousarray(M.T), a2, kappa, True)
    assert np.all(R2[:, 0] == 0) and np.all(np.isfinite(ll2))


def test_estep_chunks_and_responsibility_floor_vs_naive():
    """Rows across several ROW_CHUNK tasks, and a kappa large enough that some responsibilities underflow:
    the kernel flushes those below RESP_FLOOR to exactly 0 (no subnormals reach the class sums) and
    matches the naive softmax everywhere else; log-likelihoods equal the naive logsumexp."""
    from scalable_bayes.inference.vmf.kernels import RESP_FLOOR, ROW_CHUNK

    n = 2 * ROW_CHUNK + 37
    X, _ = _mixture_data(n=n, d=30, K=5, seed=4)
    M = np.random.default_rng(5).normal(size=(5, 30))
    M /= np.linalg.norm(M, axis=1)[:, None]
    kappa = np.array([400.0, 900.0, 1500.0, 2500.0, 3000.0])
    logw = np.log(np.full(5, 0.2))
    lognorm = np.zeros(5)
    ref = movmf_log_prob_naive(X, M * kappa[:, None], logw, lognorm)
    Rref = np.exp(ref - logsumexp(ref, axis=1)[:, None])
    R, ll = estep_csr(X.indptr, X.indices, X.data, np.ascontiguousarray(M.T), logw + lognorm, kappa, True)
    assert np.allclose(ll, logsumexp_rows_naive(ref), rtol=1e-13)
    tiny = Rref < RESP_FLOOR
    assert tiny.any() and (~tiny & (Rref < 1e-100)).any()  # the test exercises both sides of the floor
    assert np.all(R[tiny] == 0) and np.all(R[~tiny] >= RESP_FLOOR)
    assert np.allclose(R[~tiny], Rref[~tiny], rtol=1e-9, atol=0)
    R2, ll2 = estep_csr_serial(X.indptr, X.indices, X.data, np.ascontiguousarray(M.T), logw + lognorm, kappa, True)
    assert np.array_equal(R, R2) and np.array_equal(ll, ll2)


def test_class_sums_kernel_vs_dense():
    X, _ = _mixture_data(n=50, d=15)
    R = np.random.default_rng(2).random((50, 3))
    XT = X.T.tocsr()
    St = class_sums_csc(XT.indptr, XT.indices, XT.data, R)
    assert np.allclose(St.T, R.T @ X.toarray(), rtol=1e-13)
    assert np.array_equal(St, class_sums_csc_serial(XT.indptr, XT.indices, XT.data, R))


def test_class_sums_by_label_identical_to_dense_one_hot():
    from scalable_bayes.inference.vmf.kernels import class_sums_labels_csc, class_sums_labels_csc_serial

    X, _ = _mixture_data(n=80, d=25)
    labels = np.random.default_rng(6).integers(0, 4, size=80)
    labels[:4] = [0, 1, 2, 3]
    R = np.zeros((80, 5))  # component 4 empty
    R[np.arange(80), labels] = 1.0
    XT = X.T.tocsr()
    dense = class_sums_csc(XT.indptr, XT.indices, XT.data, R)
    by_label = class_sums_labels_csc(XT.indptr, XT.indices, XT.data, labels, 5)
    assert np.array_equal(by_label, dense) and np.all(by_label[:, 4] == 0)
    assert np.array_equal(by_label, class_sums_labels_csc_serial(XT.indptr, XT.indices, XT.data, labels, 5))
    assert np.allclose(by_label.T, R.T @ X.toarray(), rtol=1e-13)


def test_serial_and_parallel_estep_identical():
    X, _ = _mixture_data(n=60, d=20, K=3)
    M = np.random.default_rng(3).normal(size=(20, 3))
    a, b = np.array([0.1, -0.2, 0.3]), np.array([2.0, 3.0, 4.0])
    for soft in (True, False):
        R1, l1 = estep_csr(X.indptr, X.indices, X.data, M, a, b, soft)
        R2, l2 = estep_csr_serial(X.indptr, X.indices, X.data, M, a, b, soft)
        assert np.array_equal(R1, R2) and np.array_equal(l1, l2)


def test_uniform_log_partition_monte_carlo():
    """psi_U(kappa) = log E_{Uniform(S^{d-1})} exp(kappa x_1): Monte Carlo z-test, several seeds."""
    for d, kappa in [(3, 2.0), (10, 3.0)]:
        for seed in range(3):
            rng = np.random.default_rng(seed)
            z = rng.normal(size=(200000, d))
            x1 = z[:, 0] / np.linalg.norm(z, axis=1)
            f = np.exp(kappa * x1)
            m, se = f.mean(), f.std(ddof=1) / np.sqrt(f.size)
            assert abs(m - np.exp(vmf_log_partition_uniform(kappa, d=d))) < 4.5 * se


@pytest.mark.parametrize("tied", [False, True])
@pytest.mark.parametrize("est", ["movmf", "bregman_exact", "bregman_refined"])
def test_soft_em_log_likelihood_never_decreases(tied, est):
    X, _ = _mixture_data(n=400, d=60, K=4, seed=3)
    if est == "movmf":
        m = MovMF(4, tied=tied, max_iter=40, random_state=0)
    else:
        m = BregmanVMF(4, tied=tied, max_iter=40, random_state=0, negentropy=est.split("_")[1])
    m.fit(X)
    ll = m.log_likelihood_
    tol = 1e-9 if est != "bregman_refined" else 1e-6  # closed forms: Psi is an approximation
    assert np.all(np.diff(ll) >= -tol * np.abs(ll[1:])), np.diff(ll).min()
    assert ll[-1] > ll[0]


@pytest.mark.parametrize("assignment", ["soft", "hard"])
@pytest.mark.parametrize("tied", [False, True])
def test_natural_and_mean_parametrisations_agree(assignment, tied):
    X, y = _mixture_data(n=300, d=40, K=3, seed=4)
    nat = MovMF(3, assignment=assignment, tied=tied, max_iter=30, random_state=7).fit(X)
    exact = BregmanVMF(3, assignment=assignment, tied=tied, max_iter=30, random_state=7, negentropy="exact").fit(X)
    refined = BregmanVMF(3, assignment=assignment, tied=tied, max_iter=30, random_state=7).fit(X)
    assert np.array_equal(nat.labels_, exact.labels_)
    assert np.allclose(nat.log_likelihood_, exact.log_likelihood_, rtol=1e-9)
    assert np.allclose(nat.concentrations_, exact.concentrations_, rtol=1e-8)
    assert abs(nmi(y, nat.labels_) - nmi(y, refined.labels_)) <= 0.02
    assert np.allclose(nat.log_likelihood_[-1], refined.log_likelihood_[-1], rtol=1e-3)


def test_quality_floor_and_api():
    X, y = _mixture_data(n=600, d=80, K=3, seed=5, spread=0.4)
    for est in [MovMF(3, max_iter=50, random_state=0), BregmanVMF(3, max_iter=50, random_state=0),
                MovMF(3, assignment="hard", random_state=0), SphericalKMeans(3, random_state=0)]:
        est.fit(X)
        assert nmi(y, est.labels_) > 0.9, type(est).__name__
    m = MovMF(3, max_iter=50, random_state=0).fit(X.toarray())  # dense input gives the same fit
    m2 = MovMF(3, max_iter=50, random_state=0).fit(X)
    assert np.allclose(m.log_likelihood_, m2.log_likelihood_, rtol=1e-12)
    P = m.predict_proba(X)
    assert np.allclose(P.sum(axis=1), 1) and np.array_equal(P.argmax(axis=1), m.predict(X))
    assert np.isfinite(m.score(X))
    assert m.score(X) == pytest.approx(m.log_likelihood_[-1] / X.shape[0], rel=1e-3)
    assert np.allclose(np.linalg.norm(m.mean_directions_, axis=1), 1)


def test_same_seed_same_numbers_and_shared_init():
    X, _ = _mixture_data(n=200, d=30, seed=6)
    a = MovMF(3, random_state=11, max_iter=10).fit(X)
    b = MovMF(3, random_state=11, max_iter=10).fit(X)
    assert np.array_equal(a.log_likelihood_, b.log_likelihood_)
    mu1 = init_partition_means(X, 3, np.random.default_rng(5))
    mu2 = init_partition_means(X, 3, np.random.default_rng(5))
    assert np.array_equal(mu1, mu2)
    nat = MovMF(3, init_mu=mu1, max_iter=1).fit(X)
    mean = BregmanVMF(3, init_mu=mu1, max_iter=1, negentropy="exact").fit(X)
    assert nat.log_likelihood_[0] == pytest.approx(mean.log_likelihood_[0], rel=1e-10)


def test_kappa_max_caps_concentration():
    X, _ = _mixture_data(n=200, d=30, seed=8, spread=0.01)
    m = MovMF(3, kappa_max=50.0, max_iter=20, random_state=0).fit(X)
    assert np.all(m.concentrations_ <= 50.0 + 1e-9)
    b = BregmanVMF(3, kappa_max=50.0, max_iter=20, random_state=0, negentropy="exact").fit(X)
    assert np.allclose(np.sort(b.concentrations_), np.sort(m.concentrations_), rtol=1e-6)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda X: X * 2.0, "norm"),
        (lambda X: np.vstack([X, np.zeros((1, X.shape[1]))]), "zero"),
        (lambda X: np.where(np.arange(X.size).reshape(X.shape) == 5, np.nan, X), "NaN"),
        (lambda X: X[:2], "larger than the number of samples"),
        (lambda X: X[:, :1] / np.abs(X[:, :1]).clip(1e-300), "d = 1"),
    ],
)
def test_bad_input(make, match):
    X, _ = _mixture_data(n=30, d=10, seed=9)
    Xb = make(X.toarray())
    for est in (MovMF(3), BregmanVMF(3)):
        with pytest.raises(ValueError, match=match):
            est.fit(Xb)


def test_bad_arguments():
    X, _ = _mixture_data(n=30, d=10, seed=9)
    with pytest.raises(ValueError, match="assignment"):
        MovMF(3, assignment="fuzzy").fit(X)
    with pytest.raises(ValueError, match="negentropy"):
        BregmanVMF(3, negentropy="taylor").fit(X)
    with pytest.raises(ValueError, match="not fitted"):
        MovMF(3).predict(X)
    with pytest.raises(ValueError, match="n_components"):
        MovMF(0).fit(X)


@pytest.mark.parametrize("tol, exc", [(float("nan"), ValueError), (-1e-3, ValueError), (float("inf"), ValueError),
                                      ("0", TypeError), (None, TypeError)])
def test_bad_tol_is_refused(tol, exc):
    from scalable_bayes.inference.vmf import fit_vmf_mixture
    X = np.eye(4)[[0, 1, 2, 3, 0, 1]] * 1.0
    with pytest.raises(exc, match="tol"):
        fit_vmf_mixture(X, 2, tol=tol, max_iter=3)
