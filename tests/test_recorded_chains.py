"""Fixed-seed chains of SGNHT, SCIR and SGGMC equal the values recorded before the sampler package was
reorganised (interface, Euclidean samplers, chunk loop in their own modules): a refactor of the package must
leave every chain of a seed as it was.

The values were recorded with the code of the commit before the reorganisation, as ``float.hex`` strings (exact),
on an AVX2 machine. They are compared to a relative 1e-9, not bit for bit: the same code on another CPU rounds
a few operations differently (Numba compiles for the host CPU, NumPy dispatches its SIMD loops at run time,
OpenBLAS picks its kernels by CPU); on an AVX-512 machine the final SGNHT and SGGMC positions differ from the
recorded ones in the last bit. A change of the algorithm, of the seeding or of the draw order moves a chain by
many orders of magnitude more than that.
They cover a compiled Euclidean chain with minibatches (SGNHT, logistic regression), a block-parallel simplex
chain (SCIR, Dirichlet-categorical) and a geodesic chain whose step kernel calls the model's kernels (SGGMC with
two inner steps and the Fisher noise estimate, vMF mixture).
"""

from __future__ import annotations

import numpy as np
import pytest

from scalable_bayes import models, samplers


def chains():
    """The three chains, by name: 300 steps each, every 50th position kept."""
    X, y, _ = models.synthetic_logistic_data(200, 4, seed=0)
    out = {}
    r = samplers.run_chain(samplers.sgnht(A=1.0), models.logistic_regression(X, y), np.zeros(4), seed=11,
                           n_steps=300, step_size=1e-3, batch_size=20, thin=50)
    out["sgnht"] = r
    m = models.dirichlet_categorical(np.array([800, 100, 100, 0, 0, 0, 0, 0, 0, 0]), 0.1)
    out["scir"] = samplers.run_chain(samplers.scir(), m, np.ones(10), seed=12, n_steps=300, step_size=0.1,
                                     batch_size=50, thin=50)
    Xm = models.vmf_mixture_data(60, seed=2)
    out["sggmc"] = samplers.run_chain(samplers.sggmc(20.0, n_inner=2, noise="fisher"), models.vmf_mixture(Xm),
                                      np.array([1.0, 0.0, 0.0, 1.0]), seed=13, n_steps=300, step_size=1e-3,
                                      batch_size=10, thin=50)
    return out


RECORDED = {'scir': {'kinetic_energy_sum': '0x0.0p+0',
          'momentum': [],
          'position': ['0x1.a89ded7eb7f28p+9', '0x1.51e57380c66c7p+6', '0x1.93bcd83d32b98p+6',
                       '0x1.bb10b43722c34p-39', '0x1.3516f318312b9p-9', '0x1.8f310a73c33f8p-36',
                       '0x1.1aea450b2a8cfp-50', '0x1.0eac5bcfe350ap-7', '0x1.de57861b5ea81p-13',
                       '0x1.b86074a692fb6p-27'],
          'samples': [['0x1.7e3e42c7f51e4p-1', '0x1.702e9ab20c4ecp-4', '0x1.7dcf610f620cdp-4', '0x1.8f0c90e0aa62dp-8',
                       '0x1.4b8cb26f8eee7p-7', '0x1.2a1d28533cc14p-6', '0x1.6cd76b8b0a18ep-8', '0x1.61b55870c64b1p-7',
                       '0x1.6587e266483e6p-9', '0x1.13d78ed085469p-6'],
                      ['0x1.ac42702226c21p-1', '0x1.36df0a9cb969bp-4', '0x1.61b6a70cacdadp-4',
                       '0x1.0586917942d2fp-14', '0x1.255e8d9e1f7dbp-11', '0x1.5d182d3d2df69p-11',
                       '0x1.d61ff3ebf9d97p-33', '0x1.0e171c96faec2p-41', '0x1.6b31fa4cb83b4p-24',
                       '0x1.0676975aa211fp-16'],
                      ['0x1.9e064e725a4cfp-1', '0x1.9201845cb2f13p-4', '0x1.75ade480cbe20p-4',
                       '0x1.5c6d70e1abfe9p-11', '0x1.0ad6d636d754ap-12', '0x1.31229eb97f258p-37',
                       '0x1.bfb42da4ec8eap-12', '0x1.402f6ada5ef52p-14', '0x1.2558e27b0e307p-11',
                       '0x1.394c834b44549p-33'],
                      ['0x1.908b56ac3eacap-1', '0x1.9640fc0322b3bp-4', '0x1.e560c119178ddp-4',
                       '0x1.283f188061b23p-61', '0x1.5c61e6cc84515p-22', '0x1.66d18a8d996c1p-30',
                       '0x1.1724d8765bd8ap-42', '0x1.ff08e5f642b9fp-21', '0x1.ceabc4536171bp-23',
                       '0x1.fcb5b261258abp-20'],
                      ['0x1.9cdad078dc20ep-1', '0x1.c0c2cce61af25p-4', '0x1.57c9eea3dfa16p-4',
                       '0x1.34d0f9f934531p-23', '0x1.7f50edfba7b52p-14', '0x1.dba5d67833b50p-17',
                       '0x1.69a3656c88e06p-15', '0x1.63c811763d142p-21', '0x1.a930a6764c128p-56',
                       '0x1.2d0e1744fb4d8p-27'],
                      ['0x1.940d9e5ce72a1p-1', '0x1.f95e8652a6074p-4', '0x1.62a8863d62a4ap-4',
                       '0x1.5f97be0de7725p-22', '0x1.8d5483d5d46ccp-11', '0x1.96c52f81b0860p-45',
                       '0x1.a57a5f48cbd13p-37', '0x1.b8c4c76d53b39p-73', '0x1.c3fe685bbcdf4p-14',
                       '0x1.c2fe009ebc683p-39']],
          'thermostat': ['0x0.0p+0'],
          'thermostat_sum': '0x0.0p+0'},
 'sggmc': {'kinetic_energy_sum': '0x1.2510e9d14af92p+9',
           'momentum': ['0x1.66efeff34b99bp-5', '0x1.29d5a7c6b3a66p-2', '0x1.065768e74204fp-3',
                        '-0x1.ffe75be515f80p-1'],
           'position': ['0x1.fa4995b0cb85ep-1', '-0x1.3113e88a7b3efp-3', '0x1.fbd94d0b3df47p-1',
                        '0x1.04436c7b3ab33p-3'],
           'samples': [['0x1.ffffe337e6b78p-1', '-0x1.5759b6e9b1cebp-10', '0x1.79fec390b053cp-9',
                        '0x1.ffff7477d69a9p-1'],
                       ['0x1.faef14b21775bp-1', '-0x1.1f63785c527a4p-3', '0x1.087b788ef1451p-2',
                        '0x1.eea09e1a2cbfap-1'],
                       ['0x1.fbcb784a70513p-1', '-0x1.05f1d331a349ap-3', '0x1.0658d9241fbb1p-1',
                        '0x1.b7adf06829d66p-1'],
                       ['0x1.f8da1bc79c489p-1', '-0x1.550576129766ap-3', '0x1.9937c04d53bb5p-1',
                        '0x1.33b57f0c6ef69p-1'],
                       ['0x1.fbd99a4451b5ep-1', '-0x1.043a015c3cadfp-3', '0x1.ce804fd28eecdp-1',
                        '0x1.b741ba712e7f5p-2'],
                       ['0x1.fcb5ba5bda1bbp-1', '-0x1.cf9aac465af29p-4', '0x1.e6092ae1eb793p-1',
                        '0x1.41f394fdcc8a1p-2']],
           'thermostat': ['0x1.4000000000000p+4', '0x0.0p+0'],
           'thermostat_sum': '0x1.7700000000000p+12'},
 'sgnht': {'kinetic_energy_sum': '0x1.e949a3fea6822p+7',
           'momentum': ['-0x1.dc6e4b0c6ec40p+0', '0x1.85e59f92f21bap+0', '-0x1.b3290dbfd61dbp-2',
                        '0x1.bcb09b91b0858p-1'],
           'position': ['-0x1.583a2008ab3c9p-1', '0x1.87215b9a7ce25p-3', '-0x1.583109709289dp-5',
                        '0x1.9d45a7ff7a5eap-3'],
           'samples': [['-0x1.a37e66d64d2dfp-10', '-0x1.0637a496288c1p-10', '0x1.573db97c000bcp-12',
                        '0x1.28fbfc56c8abep-11'],
                       ['-0x1.a9ca020ee4169p-4', '-0x1.c0843d223365ap-6', '0x1.e048179ca057cp-7',
                        '0x1.9cb8529f1f5e1p-6'],
                       ['-0x1.b488574d07e06p-3', '-0x1.0eb5bf92a920ap-6', '0x1.a57c31c6136adp-7',
                        '0x1.936e9c5b69487p-5'],
                       ['-0x1.4a5063b780907p-2', '0x1.a1e91a667c338p-7', '0x1.a94f8450aecaap-8',
                        '0x1.59b75b2fc1c84p-4'],
                       ['-0x1.bc07a12d61efdp-2', '0x1.ffbe0c8b19e4cp-5', '-0x1.ad6a86eec97edp-7',
                        '0x1.082da44a0f7dep-3'],
                       ['-0x1.1e1159887f651p-1', '0x1.0365c0d3974c7p-3', '-0x1.8c6388f4af135p-6',
                        '0x1.527b4eef74c18p-3']],
           'thermostat': ['0x1.307527ef453fap+0'],
           'thermostat_sum': '0x1.401e03b08a90cp+8'}}


def _equal(got, recorded_hex):
    """``got`` equals the recorded values to a relative 1e-9 (exact zeros stay exact zeros)."""
    want = np.array([float.fromhex(h) for h in np.ravel(recorded_hex)]) if np.size(recorded_hex) else np.zeros(0)
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64).reshape(-1), want, rtol=1e-9, atol=0.0)


@pytest.fixture(scope="module")
def ran():
    return chains()


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_chain_equals_the_recorded_values(ran, name):
    r, want = ran[name], RECORDED[name]
    _equal(r.samples, want["samples"])
    _equal(r.state.position, want["position"])
    _equal(r.state.momentum, want["momentum"])
    _equal(r.state.thermostat, want["thermostat"])
    _equal(np.nansum(r.kinetic_energy), want["kinetic_energy_sum"])
    _equal(np.nansum(r.thermostat), want["thermostat_sum"])
