"""Geodesic SG-MCMC on products of spheres: SGGMC, gSGNHT (Liu, Zhu & Song 2016) and GMC (Byrne &
Girolami 2013).

All three move x (every block a unit vector, :class:`~scalable_bayes.manifolds.Sphere`) with a velocity
v in the tangent space (the ``momentum`` of the state), using the closed-form geodesic flow and the
tangent projection Lambda(x) = I - x x' of :mod:`scalable_bayes.manifolds.sphere` (SGGMC eq. 7, Sec. 3).
The model supplies the gradient of U_H(x) = -log pi_H(x) (density w.r.t. the Hausdorff measure) in the
embedded coordinates; its normal part is removed by Lambda(x).

**SGGMC** (SGGMC Alg. 1, Sec. 3.3): the "ABOBA" symmetric splitting with step eps, scalar friction C,
L inner steps on one minibatch:

    A: geodesic flow for eps/2;  B: v <- exp(-C eps/2) v;
    O: v <- v + Lambda(x) [ -eps grad U~(x) + N(0, (2C - eps V(x)) eps) ]   (SGGMC eq. 8);
    B;  A.

**gSGNHT** (SGGMC Alg. 2): the same with a thermostat xi (xi_0 = C) as the friction of B, updated
xi <- xi + (v'v/m - 1) eps/2 next to each A, m = the intrinsic dimension (n_blocks (block - 1)).

*Rotated form (our implementation choice, same trajectory).* The state a step kernel hands back is the
point where the O step acts (Alg. 1's x* after the first half flow), not the point after the second
half flow: one kernel step is ``B O B`` then a flow of the full eps (the second A of this step and the
first A of the next step merged; for gSGNHT the two half updates of xi around them merged into
xi += (v'v/m - 1) eps, exact since the flow keeps |v|). Started from the state after a half flow, the
sequence of states is exactly the sequence of Alg. 1's x* (and with L inner steps, every L-th of
them); the gradient the driver computes at the current state is then the gradient at x* that O
needs, so a single-inner-step chain costs one gradient per step. The initial position is taken as
the first x*; the initial velocity, drawn N(0, I) by ``init``, is projected at the first step
(every step projects v on entry; a no-op for a tangent v).

**Inner steps** (``n_inner`` = L > 1): the paper draws the minibatch once per outer iteration and
recomputes the gradient at each inner step (Alg. 1). One driver step is one outer iteration: the
step kernel calls the model's gradient kernel on the same minibatch for inner steps 2..L
(``SamplingAlgorithm.model_kernels``, the driver passes the model's data, the minibatch and the
kernels). A chain of T steps therefore makes T L inner steps and keeps T (thinned) samples.
Note (measured, not in the paper): the L inner steps see the *same* minibatch, so their gradient
errors are correlated, while eq. 8 and the Fisher correction below treat them as independent per
step. On the Sec. 5.2 posterior with the App. F.2 settings (L = 10, |S| = 10 of 100, C = 44.7) the
spread 1 - E[cos v1] came out 23% too large with L = 10, against 5% (within the Monte Carlo error)
with L = 1 and the same number of inner steps on fresh minibatches.

**Noise estimate V** (SGGMC eq. 8): ``noise="zero"`` (V = 0, the paper's choice for SAM, Sec. 5.3);
a number (a known isotropic variance of the gradient noise, e.g. 1000 for the S^1 toy of SGGMC
Sec. 5.1 whose gradient is corrupted by N(0, 1000 I)); ``"fisher"``: the empirical Fisher estimate of
Ahn, Korattikara & Welling (2012) the paper uses in Sec. 5.2 -- *reconstructed*: with d_i =
grad_x log p(x_i | x) for the minibatch S (|S| = b, drawn without replacement from N data),

    V(x) = N (N - b) / b * Cov^_S[d_i],   Cov^_S the sample covariance (divisor b - 1),

the unbiased estimate of the covariance of grad U~ = -(N/b) sum_S d_i under sampling without
replacement (= (N^2/b) Cov^ (N - b)/N). Only its tangent part Lambda V Lambda enters O. The per-datum
gradients come from the model's ``datum_grad_kernel(x, data, i, out) -> N`` (writes d_i, returns N);
they are recomputed at every inner step (V is V(x*)). The noise N(0, eps (2C Lambda - eps Lambda V
Lambda)) is drawn from the eigen-decomposition of the b x b Gram matrix of the projected, centred
d_i: along an eigenvector u_k with eigenvalue lam_k of eps Lambda V Lambda / (2C) the standard normal
is shrunk by sqrt(1 - lam_k). Where lam_k > 1 (2C < eps lam_max(Lambda V Lambda): the friction
cannot absorb the estimated gradient noise) that direction gets no injected noise (lam_k clipped to
1), and the step is counted in ``state.thermostat[1]`` (number of clipped directions, summed over
steps and inner steps); the chain goes on. With b = 1 or b = N the estimate is 0. The Fisher path
allocates its small b x n work arrays per inner step (the others allocate nothing).

For a known V the injected variance (2C - eps V) eps must be >= 0: the factory refuses a step size
given with it that breaks this (``step_size=``), and a run refuses a larger step size
(``SamplingAlgorithm.max_step`` = 2C / V).

**Checks** (settings that run to nonsense without a non-finite number; ours, from the sampler's own
equilibrium). Let a = eps C (the momentum coefficient rho of SGGMC App. E).

* *Friction x step (SGGMC).* With g = 0 one B O B step maps v to e^{-a} v + e^{-a/2} N(0, 2a), whose
  stationary variance is a / sinh(a) instead of 1; summing the velocities over the steps of the
  overdamped regime, the positions follow pi^(1/T) with T = (a/2) / sinh(a/2) (small eps; on vMF(kappa =
  10) on S^2 at eps = 0.02 the measured E[mu'x] was 0.919 at a = 3 against 0.930 predicted, 0.900 at
  T = 1). T = 0.9996 at the App. E values a = 0.1, 0.70 at a = 3, 1/2 at a = 4.35 (``SGGMC_MAX_EPS_C``),
  1e-20 at a = 100, where exp(-a) ~ 0 wipes the velocity every step and the chain stays at its start
  (measured: eps = 1, C = 100 on S^2). A step size above 4.35 / C is refused (``max_step``; the
  factory's ``step_size=``; :func:`sggmc_sgd` names rho).
* *Friction x step (gSGNHT).* The thermostat holds the velocity variance at 1, so it settles where
  sinh(xi eps) = a (measured xi eps 2.0915 at a = 4 against asinh(4) = 2.0947), and the positions follow
  pi^(1/T) with T = cosh(asinh(a)/2): 1.0012 at a = 0.1, 2 at a = 4 sqrt(3) = 6.93
  (``GSGNHT_MAX_EPS_C``; measured E[mu'x] 0.781 against 0.800 predicted at T = 2). A larger a is refused.
* *Angle per step.* At equilibrium a block's velocity has length ~sqrt(block - 1), so one flow of eps
  turns it by eps sqrt(block - 1) radians; above pi successive positions are unrelated (the flow wraps
  more than half a great circle) and the chain samples nothing. ``bind`` sets ``max_step`` to
  pi / sqrt(block - 1) from the model's sphere (``SamplingAlgorithm.step_bound``); e.g. eps = 10 on S^2.
* *Runaway thermostat (gSGNHT).* xi += (v'v/m - 1) eps moves the per-step friction xi eps by eps^2
  (v'v/m - 1) per step; with a large eps (measured on S^2: eps = 2, 3, 5, 10) one step overshoots to a
  negative friction, the velocity grows by e^{|xi| eps}, the next update throws xi to 1e3-1e75, and
  then exp(-xi eps) = 0 freezes the chain for good, all with finite numbers. A healthy thermostat stays
  near xi eps = asinh(a + eps^2 B/2) (B the unmodelled gradient-noise variance), so |xi eps| beyond
  ``XI_EPS_MAX`` = 53 ln 2 = 36.7 (a velocity scaled by less than 2^-53 or more than 2^53 in one step)
  needs eps^2 B ~ 1e16 and cannot occur in a healthy chain: the step kernel then makes the position NaN,
  and the driver's DivergenceError names the thermostat (``divergence_hint``).

**GMC** (Byrne & Girolami 2013, Sec. 3.2; the baseline of SGGMC Sec. 5.1-5.2): v ~ Lambda(x) N(0, I);
T leapfrog steps (half kick with the exact gradient, geodesic flow for eps, half kick), then a
Metropolis-Hastings test on H = U(x) + v'v/2 with the model's ``potential_kernel(x, data, batch_idx)``
on the full data set and a model without injected gradient noise: GMC needs exact gradients and
potentials. A run with ``batch_size`` < N is refused (``SamplingAlgorithm.full_batch``): on minibatches
the test accepts by the minibatch potential, a different target at every step (measured on the Sec.
5.2 posterior of the Fig. 4 runs, T = 20, eps = 1e-3, two chains of 15,000 samples: E[cos v1] 0.988 and
0.988 at batch size 1 against 0.995 and 0.994 on the full data). (The "GMC-apprMH" of SGGMC Sec. 5.3 is
a full-data GMC too; its approximation is in the potential, :mod:`scalable_bayes.inference.sam`.) A proposal with H = +inf is rejected; a NaN makes the
position NaN (the driver's DivergenceError names the step). ``thermostat[0]`` holds the last
acceptance probability (also the per-step ``thermostat`` diagnostic), ``thermostat[1]`` the number of
accepted proposals.

*Caching.* The kernels that receive model kernels as arguments (``sg_geodesic_inner_step``,
``sg_geodesic_fisher_step``, ``gmc_step``) are not ``cache=True``: Numba cannot cache a signature with
dispatcher arguments and would append a new, never-matched entry to its cache index in every process.
The driver's chunk loop, which binds them to the model's kernels as module globals, is cached
(:func:`scalable_bayes.samplers._loop.chunk_runner`); the Python step compiles them in memory.

Every step kernel returns the kinetic energy per intrinsic dimension v'v / 2m (target 1/2) and its
thermostat value (the friction C, xi, or GMC's acceptance probability). A non-finite gradient met
inside a step makes the position NaN, so the driver reports the step (DivergenceError); positions stay
unit vectors per block (the flow renormalises; the Python step checks each position).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..manifolds.sphere import geodesic_flow, project_tangent
from ..rng import fill_normal, fill_normal_chunked, uniform
from .base import SamplingAlgorithm

__all__ = ["sggmc", "sggmc_sgd", "gsgnht", "gmc", "sg_geodesic_step", "sg_geodesic_inner_step",
           "sg_geodesic_fisher_step", "gmc_step", "max_eps_c", "max_step_on_sphere", "sampled_temperature",
           "SGGMC_MAX_EPS_C", "GSGNHT_MAX_EPS_C", "XI_EPS_MAX"]

# hyper layout of the SG samplers: [C, V, L, thermostat flag] + the Sphere's [block_size] appended by bind
_C, _V, _L, _THERMO = 0, 1, 2, 3
# the O step draws its normals this many at a time (even: the pairs stay where drawing pair by pair puts them;
# 4 KiB of normals stay in L1 until the update reads them)
_NOISE_CHUNK = 512

#: the largest eps C for SGGMC: the sampled temperature (a/2) / sinh(a/2), a = eps C, is 1/2 there
#: (the root of u / sinh(u) = 1/2, u = a/2; module docstring, "Checks")
SGGMC_MAX_EPS_C = 4.354637969930613
#: the largest eps C for gSGNHT: the sampled temperature cosh(asinh(a)/2) is 2 there (sinh(2 acosh 2) = 4 sqrt 3)
GSGNHT_MAX_EPS_C = 4.0 * math.sqrt(3.0)
#: the largest |xi eps| of a gSGNHT thermostat: beyond it one B O B step scales the velocity by
#: exp(-xi eps) < 2^-53 (below the rounding of the fresh noise: the chain freezes) or > 2^53
XI_EPS_MAX = 53.0 * math.log(2.0)


# ---------------------------------------------------------------------------------------- helpers
@njit(cache=True)
def _poison(x):
    for j in range(x.shape[0]):
        x[j] = np.nan


@njit(cache=True)
def _finite(g):
    s = 0.0
    for j in range(g.shape[0]):
        s += g[j] * g[j]
    return s < np.inf


@njit(cache=True)
def _bob(x, v, g, key, eps, fric, sd, block):
    """B O B with isotropic noise: v <- f v - eps g + sd z, projected, then v <- f v, f = exp(-fric eps/2).
    (f v is tangent already, so projecting the sum applies Lambda(x) to -eps g + sd z only.)
    Returns v'v."""
    n = x.shape[0]
    f = np.exp(-0.5 * fric * eps)
    # the normals of a chunk first (fill_normal_chunked: the numbers of normal_pair drawn pair after pair), then
    # the update; an even chunk keeps the pairs where drawing pair by pair puts them
    z = np.empty(min(n, _NOISE_CHUNK))
    scratch = np.empty(_NOISE_CHUNK // 2)
    for c0 in range(0, n, _NOISE_CHUNK):
        m = min(_NOISE_CHUNK, n - c0)
        fill_normal_chunked(key, z[:m], scratch)
        vc = v[c0:c0 + m]  # views indexed from 0: vector code
        gc = g[c0:c0 + m]
        for k in range(m):
            vc[k] = f * vc[k] - eps * gc[k] + sd * z[k]
    project_tangent(x, v, block)
    kin = 0.0
    for j in range(n):
        v[j] *= f
        kin += v[j] * v[j]
    return kin


@njit(cache=True)
def _sg_inner(x, v, xi, g, key, eps, hyper, block, m):
    """One inner step of the rotated ABOBA (module docstring) with V known; returns v'v."""
    C = hyper[_C]
    fric = xi[0] if hyper[_THERMO] != 0.0 else C
    sd = np.sqrt((2.0 * C - eps * hyper[_V]) * eps)
    kin = _bob(x, v, g, key, eps, fric, sd, block)
    if hyper[_THERMO] != 0.0:
        xi[0] += (kin / m - 1.0) * eps
        if not (abs(xi[0] * eps) <= XI_EPS_MAX):  # runaway thermostat (module docstring): stop the chain
            _poison(v)  # the flow turns a NaN velocity into a NaN position, which the caller reports
    geodesic_flow(x, v, eps, block)
    return kin


@njit(cache=True)
def _dims(x, hyper):
    block = np.int64(hyper[hyper.shape[0] - 1])
    m = (x.shape[0] // block) * (block - 1)
    return block, m


@njit(cache=True)
def sg_geodesic_step(x, p, xi, g, key, h, hyper):
    """SGGMC / gSGNHT with one inner step and a known V (common kernel signature; module docstring).

    ``hyper`` = [C, V, L (= 1), thermostat flag, block_size]; ``p`` is the velocity v; ``xi[0]`` the
    friction (C) or the thermostat; ``g`` = grad U~ at x (the point where O acts).

    Parameters
    ----------
    x : ndarray of float64, shape (n,)
        Position (unit blocks), updated in place.
    p : ndarray of float64, shape (n,)
        Velocity v, updated in place.
    xi : ndarray of float64
        Thermostat array (friction or thermostat, counters), updated in place.
    g : ndarray of float64, shape (n,)
        grad U~ at x (the point where O acts).
    key : ndarray of uint64, shape (2,)
        A :mod:`scalable_bayes.rng` key, advanced in place.
    h : float
        The step size eps.
    hyper : ndarray of float64
        The constants, as above.

    Returns
    -------
    kinetic_energy : float
        v'v / 2m per intrinsic dimension after the step (NaN when the step failed).
    thermostat : float
        xi[0], the friction C or the thermostat xi.
    """
    block, m = _dims(x, hyper)
    project_tangent(x, p, block)
    kin = _sg_inner(x, p, xi, g, key, h, hyper, block, m)
    return 0.5 * kin / m, xi[0]


@njit  # not cache=True: takes model kernels (dispatchers) as arguments, see the module docstring
def sg_geodesic_inner_step(x, p, xi, g, key, h, hyper, data, idx, grad):
    """SGGMC / gSGNHT with L = hyper[2] inner steps on the minibatch ``idx`` and a known V: the first
    uses the driver's ``g``, the others call ``grad(x, data, idx, key, g)`` (SGGMC Alg. 1-2).

    ``hyper`` = [C, V, L, thermostat flag, block_size].

    Parameters
    ----------
    x : ndarray of float64, shape (n,)
        Position (unit blocks), updated in place.
    p : ndarray of float64, shape (n,)
        Velocity v, updated in place.
    xi : ndarray of float64
        Thermostat array (friction or thermostat, counters), updated in place.
    g : ndarray of float64, shape (n,)
        grad U~ at x (the point where O acts); overwritten by the inner steps' gradients.
    key : ndarray of uint64, shape (2,)
        A :mod:`scalable_bayes.rng` key, advanced in place.
    h : float
        The step size eps.
    hyper : ndarray of float64
        The constants, as above.
    data : tuple of ndarray
        The model's data tuple.
    idx : ndarray of int64
        The minibatch.
    grad : callable
        The model's gradient kernel ``grad(x, data, idx, key, out)``.

    Returns
    -------
    kinetic_energy : float
        v'v / 2m per intrinsic dimension after the step (NaN when the step failed).
    thermostat : float
        xi[0], the friction C or the thermostat xi.
    """
    block, m = _dims(x, hyper)
    L = np.int64(hyper[_L])
    project_tangent(x, p, block)
    kin = 0.0
    for ell in range(L):
        if ell > 0:
            grad(x, data, idx, key, g)
            if not _finite(g):
                _poison(x)
                return np.nan, xi[0]
        kin = _sg_inner(x, p, xi, g, key, h, hyper, block, m)
    return 0.5 * kin / m, xi[0]


@njit  # not cache=True: takes model kernels (dispatchers) as arguments, see the module docstring
def _fisher_noise(x, z, key, eps, C, data, idx, dgrad, block, out):
    """The O-step noise with the empirical Fisher V (module docstring) into ``out`` (tangent).
    Returns the number of clipped eigen-directions."""
    n = x.shape[0]
    # z ~ N(0, I), drawn in pairs like the isotropic path, projected
    fill_normal(key, z)
    project_tangent(x, z, block)
    s0 = np.sqrt(2.0 * C * eps)
    bsz = idx.shape[0]
    clipped = 0
    if bsz >= 2:
        P = np.empty((bsz, n))
        N = 0.0
        for k in range(bsz):
            N = dgrad(x, data, idx[k], P[k])
        if bsz < N:
            for j in range(n):  # centre
                mu = 0.0
                for k in range(bsz):
                    mu += P[k, j]
                mu /= bsz
                for k in range(bsz):
                    P[k, j] -= mu
            for k in range(bsz):
                project_tangent(x, P[k], block)
            sV = N * (N - bsz) / (bsz * (bsz - 1.0))
            c = eps * sV / (2.0 * C)
            M = P @ P.T
            lam, Q = np.linalg.eigh(M)
            lmax = 0.0
            for k in range(bsz):
                if lam[k] > lmax:
                    lmax = lam[k]
            u = np.empty(n)
            for k in range(bsz):
                if not (lam[k] > 1e-14 * lmax):
                    continue
                inv = 1.0 / np.sqrt(lam[k])
                for j in range(n):
                    acc = 0.0
                    for r in range(bsz):
                        acc += P[r, j] * Q[r, k]
                    u[j] = acc * inv
                t = c * lam[k]
                if t > 1.0:
                    clipped += 1
                    t = 1.0
                a = 1.0 - np.sqrt(1.0 - t)
                d = 0.0
                for j in range(n):
                    d += u[j] * z[j]
                for j in range(n):
                    z[j] -= a * d * u[j]
    for j in range(n):
        out[j] = s0 * z[j]
    return clipped


@njit  # not cache=True: takes model kernels (dispatchers) as arguments, see the module docstring
def sg_geodesic_fisher_step(x, p, xi, g, key, h, hyper, data, idx, grad, dgrad):
    """SGGMC / gSGNHT with L = hyper[2] inner steps and V(x) the empirical Fisher estimate from the
    model's per-datum gradients ``dgrad`` (module docstring). ``xi[1]`` counts clipped directions.

    ``hyper`` = [C, V (unused), L, thermostat flag, block_size].

    Parameters
    ----------
    x : ndarray of float64, shape (n,)
        Position (unit blocks), updated in place.
    p : ndarray of float64, shape (n,)
        Velocity v, updated in place.
    xi : ndarray of float64
        Thermostat array (friction or thermostat, counters), updated in place.
    g : ndarray of float64, shape (n,)
        grad U~ at x (the point where O acts); overwritten by the inner steps' gradients.
    key : ndarray of uint64, shape (2,)
        A :mod:`scalable_bayes.rng` key, advanced in place.
    h : float
        The step size eps.
    hyper : ndarray of float64
        The constants, as above.
    data : tuple of ndarray
        The model's data tuple.
    idx : ndarray of int64
        The minibatch.
    grad : callable
        The model's gradient kernel ``grad(x, data, idx, key, out)``.
    dgrad : callable
        The model's per-datum gradient kernel ``dgrad(x, data, i, out) -> N``.

    Returns
    -------
    kinetic_energy : float
        v'v / 2m per intrinsic dimension after the step (NaN when the step failed).
    thermostat : float
        xi[0], the friction C or the thermostat xi.
    """
    block, m = _dims(x, hyper)
    L = np.int64(hyper[_L])
    C = hyper[_C]
    thermo = hyper[_THERMO] != 0.0
    n = x.shape[0]
    project_tangent(x, p, block)
    z = np.empty(n)
    w = np.empty(n)
    kin = 0.0
    for ell in range(L):
        if ell > 0:
            grad(x, data, idx, key, g)
            if not _finite(g):
                _poison(x)
                return np.nan, xi[0]
        fric = xi[0] if thermo else C
        xi[1] += _fisher_noise(x, z, key, h, C, data, idx, dgrad, block, w)
        if not _finite(w):
            _poison(x)
            return np.nan, xi[0]
        f = np.exp(-0.5 * fric * h)
        for j in range(n):
            p[j] = f * p[j] - h * g[j] + w[j]
        project_tangent(x, p, block)
        kin = 0.0
        for j in range(n):
            p[j] *= f
            kin += p[j] * p[j]
        if thermo:
            xi[0] += (kin / m - 1.0) * h
            if not (abs(xi[0] * h) <= XI_EPS_MAX):  # runaway thermostat, as in _sg_inner
                _poison(p)
        geodesic_flow(x, p, h, block)
    return 0.5 * kin / m, xi[0]


@njit  # not cache=True: takes model kernels (dispatchers) as arguments, see the module docstring
def gmc_step(x, p, xi, g, key, h, hyper, data, idx, grad, pot):
    """One GMC transition (Byrne & Girolami 2013; module docstring): ``hyper`` = [T, block_size];
    ``g`` = exact grad U at x; ``xi`` = [last acceptance probability, accepted count, x scratch (n)].

    Parameters
    ----------
    x : ndarray of float64, shape (n,)
        Position (unit blocks), updated in place.
    p : ndarray of float64, shape (n,)
        Velocity v, redrawn and updated in place.
    xi : ndarray of float64
        Thermostat array (friction or thermostat, counters), updated in place.
    g : ndarray of float64, shape (n,)
        grad U~ at x (the point where O acts); overwritten during the trajectory.
    key : ndarray of uint64, shape (2,)
        A :mod:`scalable_bayes.rng` key, advanced in place.
    h : float
        The step size eps.
    hyper : ndarray of float64
        The constants, as above.
    data : tuple of ndarray
        The model's data tuple.
    idx : ndarray of int64
        The minibatch.
    grad : callable
        The model's gradient kernel ``grad(x, data, idx, key, out)``.
    pot : callable
        The model's potential kernel ``pot(x, data, idx) -> float``.

    Returns
    -------
    kinetic_energy : float
        v'v / 2m per intrinsic dimension after the step (NaN when the step failed).
    thermostat : float
        The acceptance probability of the proposal.
    """
    block, m = _dims(x, hyper)
    T = np.int64(hyper[0])
    n = x.shape[0]
    fill_normal(key, p)
    project_tangent(x, p, block)
    k0 = 0.0
    for j in range(n):
        k0 += p[j] * p[j]
        xi[2 + j] = x[j]
    h0 = pot(x, data, idx) + 0.5 * k0
    for t in range(T):
        if t > 0:
            grad(x, data, idx, key, g)
        for j in range(n):
            p[j] -= 0.5 * h * g[j]
        project_tangent(x, p, block)
        geodesic_flow(x, p, h, block)
        grad(x, data, idx, key, g)
        if not _finite(g):
            _poison(x)
            return np.nan, 0.0
        for j in range(n):
            p[j] -= 0.5 * h * g[j]
        project_tangent(x, p, block)
    k1 = 0.0
    for j in range(n):
        k1 += p[j] * p[j]
    h1 = pot(x, data, idx) + 0.5 * k1
    if h1 != h1 or h0 != h0:
        _poison(x)
        return np.nan, 0.0
    dh = h0 - h1  # log acceptance ratio; -inf if the proposal's potential is +inf
    acc = 1.0 if dh >= 0.0 else np.exp(dh)
    if uniform(key) < acc:
        xi[1] += 1.0
    else:
        for j in range(n):
            x[j] = xi[2 + j]
    xi[0] = acc
    return 0.5 * k1 / m, acc


# ---------------------------------------------------------------------------------------- factories
def _positive(v, what, name):
    try:
        v = float(v)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: {what} must be a number, got {v!r}") from None
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name}: {what} must be positive and finite, got {v!r}")
    return v


def _n_inner(n_inner, name):
    if isinstance(n_inner, bool) or int(n_inner) != n_inner or n_inner < 1:
        raise ValueError(f"{name}: n_inner (L, inner steps per minibatch) must be an integer >= 1, got {n_inner!r}")
    return int(n_inner)


def _sg(name, C, n_inner, noise, thermo, step_size):
    C = _positive(C, "friction C", name)
    L = _n_inner(n_inner, name)
    fisher = isinstance(noise, str) and noise == "fisher"
    if isinstance(noise, str) and not fisher:
        if noise not in ("zero", "known"):
            raise ValueError(f"{name}: noise must be 'zero', 'fisher' or a number (a known variance V of the "
                             f"gradient noise), got {noise!r}")
        if noise == "known":
            raise ValueError(f"{name}: noise='known' needs the variance: pass noise=<V>, e.g. noise=1000.0 for "
                             f"gradient noise N(0, 1000 I)")
        V = 0.0
    elif fisher:
        V = 0.0
    else:
        try:
            V = float(noise)
        except (TypeError, ValueError):
            raise TypeError(f"{name}: noise must be 'zero', 'fisher' or a number, got {noise!r}") from None
        if not (math.isfinite(V) and V >= 0):
            raise ValueError(f"{name}: the noise variance V must be finite and >= 0, got {noise!r}")
    noise_step = 2.0 * C / V if V > 0 else math.inf
    fric_step = max_eps_c(thermo) / C
    if step_size is not None:
        eps = _positive(step_size, "step_size", name)
        if 2.0 * C - eps * V < 0:
            raise ValueError(f"{name}: 2C - eps V = 2*{C:g} - {eps:g}*{V:g} = {2 * C - eps * V:g} < 0: the injected "
                             f"noise variance (2C - eps V) eps would be negative (SGGMC eq. 8); raise C above "
                             f"{eps * V / 2:g} or lower the step size below {noise_step:g}")
        if eps > fric_step:
            raise ValueError(f"{name}: {friction_message(eps, C, thermo)}")
    if noise_step <= fric_step:
        max_step, why = noise_step, ("the injected noise variance (2C - eps V) eps would be negative (SGGMC eq. 8); "
                                     "lower step_size or raise the friction C")
    else:
        max_step, why = fric_step, friction_message(None, C, thermo)
    hyper = np.array([C, V, float(L), 1.0 if thermo else 0.0])
    label = name if L == 1 else f"{name}(L={L})"
    if fisher:
        kern, extra = sg_geodesic_fisher_step, ("grad_kernel", "datum_grad_kernel")
    elif L > 1:
        kern, extra = sg_geodesic_inner_step, ("grad_kernel",)
    else:
        kern, extra = sg_geodesic_step, ()
    return SamplingAlgorithm(label, kern, hyper, thermostat_init=C, manifold="sphere", model_kernels=extra,
                             extra_state=1, max_step=max_step, max_step_reason=why, step_bound=_angle_bound,
                             divergence_hint=_thermostat_hint if thermo else None)


def max_eps_c(thermostat: bool) -> float:
    """The largest eps C (step size times friction; rho of SGGMC App. E) at which SGGMC (``thermostat=False``)
    still samples at a temperature >= 1/2, or gSGNHT (``True``) at <= 2 (module docstring, "Checks").

    Parameters
    ----------
    thermostat : bool
        gSGNHT (True) or SGGMC (False).

    Returns
    -------
    float
        ``GSGNHT_MAX_EPS_C`` = 4 sqrt(3) or ``SGGMC_MAX_EPS_C`` = 4.3546...
    """
    return GSGNHT_MAX_EPS_C if thermostat else SGGMC_MAX_EPS_C


def max_step_on_sphere(block: int) -> float:
    """The largest step eps of an SG geodesic sampler on spheres S^{block-1}: eps sqrt(block - 1) = pi, the step
    at which a velocity at its equilibrium length sqrt(block - 1) carries a block half a great circle.

    Parameters
    ----------
    block : int
        Block size (the sphere S^{block-1} lies in R^block), >= 2.

    Returns
    -------
    float
        pi / sqrt(block - 1).
    """
    return math.pi / math.sqrt(block - 1.0)


def sampled_temperature(eps_c: float, thermostat: bool) -> float:
    """Temperature T of the law pi^(1/T) the B O B splitting samples at a = eps C for small eps (no gradient noise
    beyond the modelled V): (a/2) / sinh(a/2) for SGGMC, cosh(asinh(a)/2) for gSGNHT (module docstring).

    Parameters
    ----------
    eps_c : float
        a = eps C, step size times friction.
    thermostat : bool
        gSGNHT (True) or SGGMC (False).

    Returns
    -------
    float
        T (1 at a = 0 for SGGMC; 0 for SGGMC when a/2 >= 700).
    """
    u = 0.5 * float(eps_c)
    if thermostat:
        return math.cosh(math.asinh(2.0 * u) / 2.0)
    if u == 0.0:
        return 1.0
    return u / math.sinh(u) if u < 700.0 else 0.0


def friction_message(eps, C, thermostat) -> str:
    """Why eps C is too large and how to fix it (the step size ``eps`` may be None: the bound only)."""
    lim = max_eps_c(thermostat)
    what = ("the thermostat settles where sinh(xi eps) = eps C, and the chain samples pi^(1/T) with T = "
            "cosh(asinh(eps C)/2)" if thermostat else
            "the friction exp(-eps C) and the injected noise N(0, 2 C eps) hold the velocity at (eps C)/sinh(eps C) of "
            "its target variance, and the chain samples pi^(1/T) with T = (eps C/2)/sinh(eps C/2) (frozen at its start "
            "for eps C >~ 50)")
    bound = "T > 2" if thermostat else "T < 1/2"
    head = (f"step size x friction eps C = {eps:g} x {C:g} = {eps * C:.4g} exceeds {lim:.4g}, where {bound}"
            if eps is not None else f"eps C would exceed {lim:.4g} (C = {C:g}), where {bound}")
    return (f"{head}: {what}. Lower the step size below {lim / C:.4g} or the friction C below "
            + (f"{lim / eps:.4g}" if eps is not None else f"{lim:.4g} / eps")
            + " (in SGGMC App. E's terms, the momentum coefficient rho = eps C; typical 0.01-0.1)")


def _angle_bound(hyper) -> tuple[float, str]:
    """``step_bound`` of the SG geodesic samplers: eps sqrt(block - 1) <= pi (:func:`max_step_on_sphere`)."""
    block = int(hyper[hyper.shape[0] - 1])
    lim = max_step_on_sphere(block)
    return lim, (f"eps sqrt(block - 1) = pi on S^{block - 1}: a velocity at its equilibrium length sqrt({block - 1}) "
                 f"would move each block more than half a great circle per step, so successive positions are "
                 f"unrelated and the chain samples nothing; lower step_size below {lim:.4g}")


def _thermostat_hint(state, h):
    """``divergence_hint`` of gSGNHT: a thermostat stopped by the step kernel (|xi eps| > XI_EPS_MAX)."""
    xi = float(state.thermostat[0])
    if abs(xi * h) <= XI_EPS_MAX:
        return None
    return (f"The thermostat xi reached {xi:.4g}, a per-step friction xi eps = {xi * h:.4g} beyond +-{XI_EPS_MAX:.1f} "
            f"(one step would scale the velocity by exp(-xi eps), below 2^-53: frozen, or above 2^53: exploding). "
            f"The discretised thermostat xi += (v'v/m - 1) eps overshoots at step size {h:g} (a healthy one settles "
            f"near asinh(eps C)/eps); lower step_size")


def sggmc(C: float, n_inner: int = 1, noise="zero", step_size: float | None = None) -> SamplingAlgorithm:
    """Stochastic gradient geodesic Monte Carlo, SGGMC Alg. 1 (ABOBA, scalar friction ``C``, ``n_inner``
    = L inner steps per minibatch, gradient-noise estimate ``noise``: "zero", a known variance V, or
    "fisher"); see the module docstring. ``step_size`` (optional) is checked against 2C - eps V >= 0.
    The step size of :func:`~scalable_bayes.samplers.run_chain` is eps.

    Parameters
    ----------
    C : float
        Friction C, positive and finite.
    n_inner : int, default 1
        L, the inner steps per minibatch (one driver step is one outer iteration of L inner steps).
    noise : "zero", "fisher" or float, default "zero"
        The gradient-noise estimate V of SGGMC eq. 8: ``"zero"`` (V = 0), a known isotropic variance
        V >= 0, or ``"fisher"`` (the empirical Fisher estimate from the model's ``datum_grad_kernel``).
    step_size : float, optional
        The step size eps the chain will use, checked now against 2C - eps V >= 0 and the friction
        bound eps C <= :func:`max_eps_c`; the run checks it again in any case.

    Returns
    -------
    SamplingAlgorithm
        ``"SGGMC"`` (``"SGGMC(L=<L>)"`` for L > 1) on the sphere manifold; the step size of
        :func:`~scalable_bayes.samplers.run_chain` is eps, bounded by ``max_step`` (noise and friction)
        and, once bound to a model, by pi / sqrt(block - 1).
    """
    return _sg("SGGMC", C, n_inner, noise, False, step_size)


def gsgnht(C: float, n_inner: int = 1, noise="zero", step_size: float | None = None) -> SamplingAlgorithm:
    """Geodesic stochastic gradient Nose-Hoover thermostat, SGGMC Alg. 2: as :func:`sggmc` with the
    friction a thermostat xi (xi_0 = C) over the intrinsic dimension m; C sets the injected noise.

    Parameters
    ----------
    C : float
        Friction C, positive and finite (also the initial thermostat xi_0).
    n_inner : int, default 1
        L, the inner steps per minibatch (one driver step is one outer iteration of L inner steps).
    noise : "zero", "fisher" or float, default "zero"
        The gradient-noise estimate V of SGGMC eq. 8: ``"zero"`` (V = 0), a known isotropic variance
        V >= 0, or ``"fisher"`` (the empirical Fisher estimate from the model's ``datum_grad_kernel``).
    step_size : float, optional
        The step size eps the chain will use, checked now against 2C - eps V >= 0 and the friction
        bound eps C <= :func:`max_eps_c`; the run checks it again in any case.

    Returns
    -------
    SamplingAlgorithm
        ``"gSGNHT"`` (``"gSGNHT(L=<L>)"`` for L > 1) on the sphere manifold; the step size of
        :func:`~scalable_bayes.samplers.run_chain` is eps, bounded by ``max_step`` (noise and friction)
        and, once bound to a model, by pi / sqrt(block - 1).
    """
    return _sg("gSGNHT", C, n_inner, noise, True, step_size)


def sggmc_sgd(gamma: float, rho: float, n_data: int, n_inner: int = 1, noise="zero",
              thermostat: bool = False) -> tuple[SamplingAlgorithm, float]:
    """SGGMC (or gSGNHT with ``thermostat=True``) in the SGD parametrisation of SGGMC App. E: per-batch
    learning rate ``gamma`` and momentum coefficient ``rho`` give eps = sqrt(gamma / |D|) and C = rho / eps
    (|D| = ``n_data``). Returns ``(sampler, eps)``; pass eps as the step size.

    Parameters
    ----------
    gamma : float
        Per-batch learning rate, positive and finite.
    rho : float
        Momentum coefficient rho = eps C, positive, at most :func:`max_eps_c` ``(thermostat)``.
    n_data : int
        |D|, the data-set size, >= 1.
    n_inner : int, default 1
        L, inner steps per minibatch (as in :func:`sggmc`).
    noise : "zero", "fisher" or float, default "zero"
        The gradient-noise estimate (as in :func:`sggmc`).
    thermostat : bool, default False
        Build gSGNHT instead of SGGMC.

    Returns
    -------
    sampler : SamplingAlgorithm
        :func:`sggmc` (or :func:`gsgnht`) with C = rho / eps.
    eps : float
        The step size sqrt(gamma / n_data) to pass to the driver.
    """
    gamma = _positive(gamma, "learning rate gamma", "SGGMC")
    rho = _positive(rho, "momentum coefficient rho", "SGGMC")
    if isinstance(n_data, bool) or int(n_data) != n_data or n_data < 1:
        raise ValueError(f"SGGMC: n_data (|D|, the data set size) must be a positive integer, got {n_data!r}")
    eps = math.sqrt(gamma / int(n_data))
    C = rho / eps
    if rho > max_eps_c(thermostat):
        raise ValueError(f"{'gSGNHT' if thermostat else 'SGGMC'}: momentum coefficient rho = {rho:g} = eps C exceeds "
                         f"{max_eps_c(thermostat):.4g}: {friction_message(eps, C, thermostat)}")
    alg = (gsgnht if thermostat else sggmc)(C, n_inner=n_inner, noise=noise, step_size=eps)
    return alg, eps


def gmc(n_leapfrog: int) -> SamplingAlgorithm:
    """Geodesic Monte Carlo on the sphere with a Metropolis-Hastings test (Byrne & Girolami 2013, Sec. 3.2):
    ``n_leapfrog`` = T leapfrog steps of size eps (the step size) per proposal; needs the model's exact
    gradient and its ``potential_kernel`` (module docstring).

    Parameters
    ----------
    n_leapfrog : int
        T, the number of leapfrog steps per proposal, >= 1.

    Returns
    -------
    SamplingAlgorithm
        ``"GMC(T=<T>)"`` on the sphere manifold, full batch only (``full_batch=True``); its thermostat
        array holds the last acceptance probability, the number of accepted proposals and scratch.
    """
    if isinstance(n_leapfrog, bool) or int(n_leapfrog) != n_leapfrog or n_leapfrog < 1:
        raise ValueError(f"GMC: n_leapfrog (T) must be an integer >= 1, got {n_leapfrog!r}")
    T = int(n_leapfrog)
    return SamplingAlgorithm(f"GMC(T={T})", gmc_step, np.array([float(T)]), thermostat_init=1.0,
                             manifold="sphere", model_kernels=("grad_kernel", "potential_kernel"),
                             extra_state=1, extra_state_per_dim=1, full_batch=True)
