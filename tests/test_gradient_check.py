"""The gradient check before sampling (Model.check_gradient, run_chain(check_gradient=True)): a gradient that
disagrees with finite differences of the model's potential stops the chain before its first step, naming the
coordinate; a right one passes, costs a handful of potential evaluations and leaves the chain unchanged."""

from __future__ import annotations

import numpy as np
import pytest

from scalable_bayes import models, samplers
from scalable_bayes.models import Model

MEAN = np.array([1.0, -2.0])
COV = np.array([[2.0, 0.6], [0.6, 1.0]])
PREC = np.linalg.inv(COV)


class Counted:
    """A callable that counts its calls."""

    def __init__(self, fn):
        self.fn, self.calls = fn, 0

    def __call__(self, *args):
        self.calls += 1
        return self.fn(*args)


def _gaussian_model(sign: float, mean=MEAN, prec=PREC):
    pot = Counted(lambda x: 0.5 * float((x - mean) @ prec @ (x - mean)))
    grad = Counted(lambda x, idx, key: sign * prec @ (x - mean))
    return Model("user-gaussian", mean.size, grad_py=grad, potential=pot), pot, grad


def _run(model, x0, **kw):
    return samplers.run_chain(samplers.sgnht(A=1.0), model, x0, seed=0, n_steps=200, step_size=0.01, **kw)


def test_a_sign_flipped_gradient_fails_before_the_first_step():
    m, pot, grad = _gaussian_model(-1.0)
    with pytest.raises(ValueError, match=r"coordinate \d.*check_gradient=False") as err:
        _run(m, np.zeros(2))
    assert "finite differences" in str(err.value) and "user-gaussian" in str(err.value)
    assert grad.calls <= 2  # the check's own evaluations: no step ran
    assert pot.calls <= 8  # central differences on 2 coordinates at 2 points
    # at the mode the gradient vanishes; the nearby point still exposes the flipped sign
    with pytest.raises(ValueError, match="near the initial position"):
        _run(_gaussian_model(-1.0)[0], MEAN.copy())
    with pytest.raises(ValueError, match="chain 0"):  # several chains: checked once per start, before any runs
        samplers.run_chains(samplers.sgnht(A=1.0), _gaussian_model(-1.0)[0], np.zeros(2), n_chains=2, seed=0,
                            n_steps=10, step_size=0.01)
    # without the check the chain runs (and runs away from the target: the silent wrong answer it prevents)
    res = samplers.run_chain(samplers.sgnht(A=1.0), _gaussian_model(-1.0)[0], np.zeros(2), seed=0, n_steps=2000,
                             step_size=0.01, check_gradient=False)
    assert np.abs(res.samples[-1]).max() > 10


def test_a_wrong_scale_and_a_wrong_potential_fail_too():
    m, _, _ = _gaussian_model(0.5)  # half the gradient
    with pytest.raises(ValueError, match="disagrees"):
        m.check_gradient(np.zeros(2))
    lib = models.gaussian(MEAN, COV)  # the library's compiled gradient against a potential of the wrong sign
    bad = Model("log-p-as-potential", 2, grad_kernel=lib.grad_kernel, data=lib.data,
                potential=lambda x: -lib.potential(x))
    with pytest.raises(ValueError, match="U = -log p"):
        _run(bad, np.zeros(2))


def test_right_gradients_pass_cheaply_and_leave_the_chain_unchanged():
    m, pot, grad = _gaussian_model(1.0)
    assert m.check_gradient(np.zeros(2)) == 4  # 2 coordinates x 2 points
    assert pot.calls == 8 and grad.calls == 2
    x = np.random.default_rng(0).standard_normal(100)
    for model, x0 in [(models.gaussian(MEAN, COV), np.zeros(2)), (models.gaussian_known_variance(x), [0.0]),
                      (models.normal_gamma(x), [0.0, 1.0])]:
        assert model.check_gradient(np.asarray(x0, dtype=float)) > 0, model.name
        a = _run(model, x0, batch_size=10 if model.n_data else None)
        b = _run(model, x0, batch_size=10 if model.n_data else None, check_gradient=False)
        np.testing.assert_array_equal(a.samples, b.samples)
    # not checked: injected gradient noise, no potential, another manifold
    assert models.gaussian(MEAN, COV, grad_noise_sd=1.0).check_gradient(np.zeros(2)) == 0
    assert Model("no-potential", 2, grad_py=lambda x, i, k: x).check_gradient(np.zeros(2)) == 0
    assert models.dirichlet_categorical([5, 3, 2]).check_gradient(np.ones(3)) == 0


def test_many_coordinates_cost_a_bounded_number_of_evaluations():
    d = 200
    mean = np.linspace(-1, 1, d)
    prec = np.diag(np.linspace(0.5, 2.0, d))
    m, pot, _ = _gaussian_model(1.0, mean, prec)
    assert m.check_gradient(np.zeros(d)) == 16
    assert pot.calls == 32
    flipped, _, _ = _gaussian_model(-1.0, mean, prec)
    with pytest.raises(ValueError, match="coordinate"):
        flipped.check_gradient(np.zeros(d))


def test_the_potential_must_be_callable():
    with pytest.raises(TypeError, match="potential must be callable"):
        Model("m", 2, grad_py=lambda x, i, k: x, potential=3.0)
    with pytest.raises(ValueError, match="without a potential"):
        Model("m", 2, grad_py=lambda x, i, k: x).potential(np.zeros(2))


def _blas_threads():
    from threadpoolctl import threadpool_info

    return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}


@pytest.mark.parametrize("blas_threads, expected", [(1, {1}), (None, None)])
def test_chains_run_with_the_blas_limit_and_restore_it(blas_threads, expected):
    """A chain's gradient calls see one BLAS thread (OpenBLAS's idle workers would spin between the step's small
    calls); None leaves the setting alone; the setting is restored afterwards, also for run_chains."""
    from threadpoolctl import threadpool_limits

    if not _blas_threads():
        pytest.skip("no BLAS library loaded that threadpoolctl sees")
    seen = []

    def grad(x, idx, k):
        seen.append(frozenset(_blas_threads()))
        return x

    model = Model("user-gaussian", 2, grad_py=grad, potential=lambda x: 0.5 * float(x @ x))
    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        samplers.run_chain(samplers.sgld(), model, np.zeros(2), seed=0, n_steps=20, step_size=1e-2, progress=False,
                           check_gradient=False, blas_threads=blas_threads)
        assert _blas_threads() == before
        assert set(seen) == {frozenset(expected if expected is not None else before)}, seen
        if blas_threads == 1:
            seen.clear()
            samplers.run_chains(samplers.sgld(), model, np.zeros(2), seed=0, n_chains=2, n_steps=10, step_size=1e-2,
                                check_gradient=False)
            assert set(seen) == {frozenset({1})} and _blas_threads() == before, seen
