"""Geodesic samplers of the SGGMC paper (Liu, Zhu & Song 2016) on products of spheres.

Each test can fail for a wrong kernel: the geodesic flow keeps norms and tangency over 10^6 steps and
matches the closed-form great circle; kernels agree with slow NumPy twins; statistical tests compare
chains with known vMF moments (MCSE z-tests) and densities.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit

from scalable_bayes.manifolds import Sphere, geodesic_flow, project_tangent


# ------------------------------------------------------------------ manifold kernels
@njit(cache=True)
def _flow_many(x, v, t, block, n):
    for _ in range(n):
        geodesic_flow(x, v, t, block)


def _unit_and_tangent_error(x, v, block):
    xb = x.reshape(-1, block)
    vb = v.reshape(-1, block)
    return np.max(np.abs(np.sqrt(np.sum(xb**2, axis=1)) - 1.0)), np.max(np.abs(np.sum(xb * vb, axis=1)))


def test_geodesic_flow_keeps_norm_and_tangency_over_a_million_steps():
    sph = Sphere(3, 5)
    x = sph.random_point(1)
    v = sph.project(x, np.random.default_rng(2).normal(size=sph.dim) * 3.0)
    speed0 = np.sqrt(np.sum(v.reshape(3, 5) ** 2, axis=1))
    _flow_many(x, v, 0.37, 5, 1_000_000)
    ue, te = _unit_and_tangent_error(x, v, 5)
    assert ue < 1e-12 and te < 1e-12
    # the speed is conserved by the flow up to accumulated rounding of the re-projection
    assert np.allclose(np.sqrt(np.sum(v.reshape(3, 5) ** 2, axis=1)), speed0, rtol=1e-6)


def test_geodesic_flow_is_the_great_circle():
    # on S^1 a flow for time t with speed a turns the angle by a t
    x = np.array([1.0, 0.0])
    v = np.array([0.0, 2.0])
    geodesic_flow(x, v, 0.3, 2)
    assert np.allclose(x, [math.cos(0.6), math.sin(0.6)], atol=1e-15)
    assert np.allclose(v, [-2 * math.sin(0.6), 2 * math.cos(0.6)], atol=1e-14)
    # zero velocity: nothing moves; flow for t then -t returns
    x = Sphere(2, 4).random_point(3)
    v = np.zeros(8)
    x0 = x.copy()
    geodesic_flow(x, v, 1.0, 4)
    assert np.allclose(x, x0, rtol=0, atol=1e-15)
    v = Sphere(2, 4).project(x, np.arange(8.0))
    v0 = v.copy()
    geodesic_flow(x, v, 0.8, 4)
    geodesic_flow(x, v, -0.8, 4)
    assert np.allclose(x, x0, atol=1e-13) and np.allclose(v, v0, atol=1e-12)


def test_project_tangent_and_sphere_checks():
    sph = Sphere(2, 3)
    x = sph.random_point(0)
    v = np.ones(6)
    project_tangent(x, v, 3)
    assert np.max(np.abs(np.sum(x.reshape(2, 3) * v.reshape(2, 3), axis=1))) < 1e-15
    assert sph.intrinsic_dim == 4 and sph.dim == 6 and np.array_equal(sph.constants(), [3.0])
    sph.check_position(x)
    bad = x.copy()
    bad[3:] *= 1.001
    with pytest.raises(ValueError, match="block 1"):
        sph.check_position(bad, "test")
    with pytest.raises(ValueError, match="length"):
        sph.check_position(x[:5])
    with pytest.raises(ValueError, match="block_size"):
        Sphere(2, 1)
    with pytest.raises(ValueError, match="n_blocks"):
        Sphere(0, 3)
