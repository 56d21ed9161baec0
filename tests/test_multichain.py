"""Several chains in one call (samplers.run_chains) and their ArviZ form (to_inference_data): R-hat, bulk and
tail ESS from az.summary on SGNHT chains of a 2-d Gaussian, the posterior mean within MCSE of the truth;
chain 0 is the single chain of the same seed; threads change nothing."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from scalable_bayes import models, samplers
from scalable_bayes.evaluation import mcmc

MEAN = np.array([1.0, -2.0])
COV = np.array([[1.0, 0.6], [0.6, 2.0]])
STARTS = np.array([[-3.0, -6.0], [5.0, 2.0], [-3.0, 2.0], [5.0, -6.0]])  # dispersed: R-hat can see a stuck chain
KW = dict(seed=11, n_steps=40_000, step_size=0.05, burnin=2_000, thin=2)


def _az():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        import arviz as az
    return az


@pytest.fixture(scope="module")
def four_chains():
    return samplers.run_chains(samplers.sgnht(A=1.0), models.gaussian(MEAN, COV), STARTS, n_chains=4, n_threads=2, **KW)


def test_four_sgnht_chains_converge_by_arviz_and_hit_the_mean(four_chains):
    az = _az()
    res = four_chains
    assert res.samples.shape == (4, 19_000, 2)
    idata = res.to_inference_data()
    assert dict(idata.posterior.sizes) == {"chain": 4, "draw": 19_000, "theta_dim_0": 2}
    summ = az.summary(idata)
    assert {"r_hat", "ess_bulk", "ess_tail"} <= set(summ.columns)
    assert (summ["r_hat"] < 1.05).all(), summ
    assert (summ["ess_bulk"] > 1000).all() and (summ["ess_tail"] > 500).all(), summ
    for j in range(2):
        z = mcmc.mcse_z(res.samples[:, :, j], MEAN[j], layout="chain,draw")
        assert abs(z) < 4, (j, z)
        # ArviZ's own MCSE agrees on the tolerance
        assert abs(summ["mean"].iloc[j] - MEAN[j]) < 4 * summ["mcse_mean"].iloc[j] + 0.01, summ
    st = idata.sample_stats
    assert {"kinetic_energy", "thermostat", "grad_norm", "diverging"} <= set(st.data_vars)
    assert st["diverging"].dtype == bool and not st["diverging"].any()
    assert st["kinetic_energy"].dims == ("chain", "draw")
    assert abs(float(st["kinetic_energy"].mean()) - 0.5) < 0.05  # SGNHT's thermostat holds p'p/2n at 1/2
    np.testing.assert_array_equal(st["thermostat"].values[2], res[2].thermostat[res.sample_steps])


def test_chain_zero_is_the_single_chain_and_threads_change_nothing(four_chains):
    model = models.gaussian(MEAN, COV)
    single = samplers.run_chain(samplers.sgnht(A=1.0), model, STARTS[0], **KW)
    np.testing.assert_array_equal(four_chains[0].samples, single.samples)
    assert four_chains.threads == 2  # a compiled, thread-safe model with a nogil loop runs in threads
    seq = samplers.run_chains(samplers.sgnht(A=1.0), model, STARTS, n_chains=4, n_threads=1, **KW)
    assert seq.threads == 1
    np.testing.assert_array_equal(seq.samples, four_chains.samples)
    np.testing.assert_array_equal(seq.thermostat, four_chains.thermostat)
    for c in (1, 3):  # chain c is run_chain(chain=c)
        one = samplers.run_chain(samplers.sgnht(A=1.0), model, STARTS[c], chain=c, **KW)
        np.testing.assert_array_equal(one.samples, four_chains[c].samples)
    assert not np.array_equal(four_chains[1].samples, four_chains[2].samples)


def test_one_chain_and_lists_convert_and_layouts_are_checked():
    model = models.gaussian(MEAN, COV)
    r = samplers.run_chain(samplers.sgld(), model, [0.0, 0.0], seed=1, n_steps=500, step_size=0.05)
    idata = r.to_inference_data(var_name="mu")
    assert dict(idata.posterior.sizes) == {"chain": 1, "draw": 500, "mu_dim_0": 2}
    assert "kinetic_energy" not in idata.sample_stats  # SGLD has no momentum
    two = mcmc.to_inference_data([r, r])
    assert two.posterior.sizes["chain"] == 2
    short = samplers.run_chain(samplers.sgld(), model, [0.0, 0.0], seed=1, n_steps=400, step_size=0.05)
    with pytest.raises(ValueError, match="same shape|one shape"):
        mcmc.to_inference_data([r, short])
    with pytest.raises(ValueError, match=r"\(n_chains=3, dim\)"):
        samplers.run_chains(samplers.sgld(), model, np.zeros((2, 2)), n_chains=3, seed=0, n_steps=10, step_size=0.1)
    with pytest.raises(ValueError, match="n_chains must be a positive integer"):
        samplers.run_chains(samplers.sgld(), model, np.zeros(2), n_chains=0, seed=0, n_steps=10, step_size=0.1)


def test_simplex_chains_run_one_after_another_and_give_simplex_points():
    m = models.dirichlet_categorical([30, 10, 5, 0], 0.5)
    res = samplers.run_chains(samplers.scir(), m, np.ones(4), n_chains=2, n_threads=2, seed=4, n_steps=300,
                              step_size=0.3, batch_size=10)
    assert res.threads == 1  # prange kernels: the chains do not share the cores with them
    np.testing.assert_allclose(res.samples.sum(axis=2), 1.0, rtol=1e-12)
    assert res.gamma_samples.shape == res.samples.shape
    idata = res.to_inference_data()
    assert idata.posterior["theta"].shape == (2, 300, 4)


def test_a_model_that_is_not_thread_safe_runs_its_chains_in_turn():
    X, y, _ = models.synthetic_logistic_data(200, 3, seed=0)
    m = models.logistic_regression(X, y)
    res = samplers.run_chains(samplers.sgld(), m, np.zeros(m.dim), n_chains=2, n_threads=2, seed=0, n_steps=50,
                              step_size=1e-3, batch_size=20)
    assert res.threads == 1 and res.samples.shape == (2, 50, m.dim)
