"""Random numbers of the library: one seeding, two Numba generators for two needs, numpy Generators.

**Seeding.** :func:`seed_sequence` turns an integer seed plus optional stream indices (chain number,
document block, ...) into a ``numpy.random.SeedSequence``; :func:`make_key` and :func:`rng_from_seed`
both start from it, so ``(seed, *keys)`` names one stream whichever generator draws from it.

**Stateful keys (xoroshiro128+, Blackman & Vigna 2016), for sequential consumers such as an SG-MCMC
chain.** A *key* is a ``uint64[2]`` array holding the generator state; every drawing kernel takes
the key and advances it in place, so a chain's randomness is fully determined by the key it starts
from, independent of Numba's global generator. Uniform doubles from the top 53 bits; normals by the
Marsaglia polar method (exact, no tables). :func:`make_key`, :func:`as_key`, :func:`uniform`,
:func:`uniform_int`, :func:`normal_pair`, :func:`normal`, :func:`fill_normal`,
:func:`fill_normal_chunked`, :func:`partial_shuffle`; the pieces of a polar draw for loops that draw many
(:func:`xoroshiro_next` on a state in registers, :func:`polar_try`, :func:`polar_ok`, :func:`polar_scale`).
Non-uniform variates from a key: :func:`ziggurat_normal`, :func:`ziggurat_exponential`, :func:`gamma`
(Marsaglia & Tsang 2000 above shape 1, the boost from 0.05 to 1, Ahrens & Dieter's GS below),
:func:`log_gamma` (exact in logs for tiny shapes), :func:`poisson`
(inversion below mean 10, Hoermann's 1993 PTRS above), :func:`beta`.

**Counter-based streams (SplitMix64, Steele, Lea & Flood 2014), for parallel kernels.** The initial
state of the stream of (seed, a, b), e.g. (seed, iteration, document), is computed from the three
numbers alone (:func:`stream`), with no state carried from one document to the next; the numbers a
document sees therefore do not depend on which thread processes it or on the thread count (the LDA
engines and document completion). The state is a ``uint64`` scalar: :func:`next_uniform` returns
the advanced state with the draw. :func:`mix64`, :func:`stream`, :func:`next_uniform`;
:func:`key_from_stream` seeds a xoroshiro key from a stream (per-block keys of a parallel kernel).

**Either generator.** :func:`draw_uniform` ``(rng) -> (rng, u)`` accepts a key (advanced in place and
returned as is) or a stream state (the advanced state returned), so a kernel that only needs
uniforms is written once for both (:mod:`scalable_bayes.evaluation.heldout`); :func:`draw_index`
``(rng, n) -> (rng, k)`` a uniform index in [0, n) from it; :func:`cdf_search` the index a uniform
falls on in running sums (an inverse-CDF draw from a discrete distribution).

This module is a leaf: it imports numpy and Numba only.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types
from numba.extending import overload

#: 2^64 / golden ratio (odd): SplitMix64's increment; also the non-zero word that replaces an
#: all-zero xoroshiro state (a fixed point of that generator)
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
#: 2^-53: a uint64 shifted right by 11 bits times this is a double uniform on [0, 1)
INV_2_53 = 1.0 / 9007199254740992.0

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)


# ---------------------------------------------------------------------------------------------
# seeding
# ---------------------------------------------------------------------------------------------


MAX_SEED = 2**63 - 1  # kernels take the seed as a signed 64-bit integer


def resolve_seed(seed, name: str = "seed") -> int:
    """A validated integer seed; ``None`` draws fresh entropy from the OS (as scikit-learn's
    ``random_state=None``). Callers record the returned value (e.g. as ``seed_``) so that a fit
    or a chain can be repeated exactly."""
    if seed is None:
        return int(np.random.SeedSequence().entropy % (MAX_SEED + 1))
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        if isinstance(seed, (float, np.floating)) and float(seed).is_integer():
            seed = int(seed)
        else:
            raise TypeError(f"{name} must be a non-negative integer or None, got {seed!r} "
                            f"({type(seed).__name__})")
    if not 0 <= int(seed) <= MAX_SEED:
        raise ValueError(f"{name} must be a non-negative integer below 2**63 or None, got {seed!r}")
    return int(seed)


def resolve_random_state(random_state, name: str = "random_state") -> int:
    """The integer seed of a scikit-learn style ``random_state``: None (fresh OS entropy), a
    non-negative integer (returned as is by :func:`resolve_seed`, so an estimator given an int is
    bit-identical to one given the same ``seed``) or a ``numpy.random.Generator`` /
    ``RandomState``, from which one integer in [0, 2^63 - 1] is drawn (advancing it, as scikit-learn
    estimators do). Callers record the result (e.g. as ``seed_``) so that a fit can be repeated."""
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, MAX_SEED, endpoint=True))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, MAX_SEED, dtype=np.int64))
    try:
        return resolve_seed(random_state, name)
    except TypeError:
        raise TypeError(f"{name} must be None, a non-negative integer or a numpy Generator, got "
                        f"{random_state!r} ({type(random_state).__name__})") from None


def seed_sequence(seed, *keys) -> np.random.SeedSequence:
    """The ``SeedSequence`` of stream ``keys`` of ``seed`` (an int or a SeedSequence): the keys are
    appended to the spawn key, so ``seed_sequence(s, c)`` is child ``c`` of ``seed_sequence(s)``."""
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(resolve_seed(seed))
    if keys:
        ss = np.random.SeedSequence(entropy=ss.entropy, spawn_key=tuple(ss.spawn_key) + tuple(int(k) for k in keys))
    return ss


def rng_from_seed(seed: int | np.random.SeedSequence | np.random.Generator, *keys: int) -> np.random.Generator:
    """A ``numpy.random.Generator`` from an integer seed, optionally spawned along ``keys``.

    ``rng_from_seed(seed, chain)`` gives independent, reproducible streams per chain. A Generator is
    returned as is (it cannot be keyed).
    """
    if isinstance(seed, np.random.Generator):
        if keys:
            raise ValueError("rng_from_seed: cannot derive keyed streams from an existing Generator")
        return seed
    return np.random.default_rng(seed_sequence(seed, *keys))


# ---------------------------------------------------------------------------------------------
# stateful keys: xoroshiro128+
# ---------------------------------------------------------------------------------------------


def make_key(seed, *keys) -> np.ndarray:
    """A fresh ``uint64[2]`` generator state from an int seed (or SeedSequence / Generator) and stream keys.

    The two words come from :func:`seed_sequence` ``(seed, *keys)``, so ``make_key(seed, c)`` is the
    key of stream ``c`` of ``seed``; an all-zero state (a fixed point of xoroshiro128+) is replaced.

    Parameters
    ----------
    seed : int, None, numpy.random.SeedSequence or numpy.random.Generator
        A non-negative integer seed below 2^63 (None draws fresh OS entropy), a SeedSequence, or a
        Generator, from which two words are drawn (advancing it; ``keys`` are then ignored).
    *keys : int
        Stream indices (chain number, block, ...) appended to the seed's spawn key.

    Returns
    -------
    ndarray of uint64, shape (2,)
        The xoroshiro128+ state, advanced in place by the drawing kernels of this module.
    """
    if isinstance(seed, np.random.Generator):
        words = seed.integers(0, 2**63, size=2, dtype=np.uint64)
    else:
        words = seed_sequence(seed, *keys).generate_state(2, dtype=np.uint64)
    words = np.asarray(words, dtype=np.uint64).copy()
    if words[0] == 0 and words[1] == 0:  # the all-zero state is a fixed point of xoroshiro
        words[0] = GOLDEN
    return words


def as_key(rng) -> np.ndarray:
    """Accept a key (``uint64[2]``), an int seed or a numpy Generator; return a key array."""
    if isinstance(rng, np.ndarray) and rng.dtype == np.uint64 and rng.shape == (2,):
        return rng
    if isinstance(rng, (int, np.integer, np.random.Generator, np.random.SeedSequence)):
        return make_key(rng)
    raise ValueError(
        f"rng must be a uint64[2] key from scalable_bayes.rng.make_key, an int seed or a "
        f"numpy Generator; got {type(rng).__name__}"
    )


@njit(cache=True, inline="always")
def xoroshiro_next(s0, s1):
    """One step of xoroshiro128+ on a state held in two words (registers): ``(bits, s0', s1')``.

    :func:`next_u64` is this step on a key in memory; a loop that draws many numbers from one key keeps the
    state here and stores it back once, so that the chain of state updates does not pass through memory."""
    result = s0 + s1
    s1 ^= s0
    n0 = ((s0 << np.uint64(24)) | (s0 >> np.uint64(40))) ^ s1 ^ (s1 << np.uint64(16))
    n1 = (s1 << np.uint64(37)) | (s1 >> np.uint64(27))
    return result, n0, n1


@njit(cache=True, inline="always")
def next_u64(key):
    """The next 64 random bits of the key (advanced in place)."""
    result, key[0], key[1] = xoroshiro_next(key[0], key[1])
    return result


@njit(cache=True, inline="always")
def uniform(key):
    """U[0, 1) double with 53 random bits."""
    return np.float64(next_u64(key) >> _S11) * INV_2_53


@njit(cache=True)
def uniform_int(key, n):
    """Uniform integer in [0, n) (n >= 1)."""
    _, j = draw_index(key, n)
    return j


@njit(cache=True, inline="always")
def polar_try(s0, s1):
    """One try of the Marsaglia polar method from the state (s0, s1): ``(u, v, q, s0', s1')`` with u, v uniform on
    [-1, 1) (the generator's next two uniforms, as :func:`uniform` makes them) and q = u^2 + v^2. The try is
    accepted when :func:`polar_ok` (0 < q < 1); then u * f and v * f with f = :func:`polar_scale` (q) are two
    independent N(0, 1) draws, the pair :func:`normal_pair` returns."""
    a, s0, s1 = xoroshiro_next(s0, s1)
    b, s0, s1 = xoroshiro_next(s0, s1)
    u = 2.0 * (np.float64(a >> _S11) * INV_2_53) - 1.0
    v = 2.0 * (np.float64(b >> _S11) * INV_2_53) - 1.0
    return u, v, u * u + v * v, s0, s1


@njit(cache=True, inline="always")
def polar_ok(q):
    """1 if a polar try with q = u^2 + v^2 is accepted (0 < q < 1), else 0: an integer, so that a loop of tries
    can advance its output position by it instead of branching."""
    return np.int64(q > 0.0) & np.int64(q < 1.0)


@njit(cache=True, inline="always")
def polar_scale(q):
    """sqrt(-2 log q / q): the factor that turns an accepted polar try (u, v) into two N(0, 1) draws."""
    return np.sqrt(-2.0 * np.log(q) / q)


@njit(cache=True)
def normal_pair(key):
    """Two independent N(0, 1) draws (Marsaglia polar method)."""
    s0 = key[0]
    s1 = key[1]
    while True:
        u, v, q, s0, s1 = polar_try(s0, s1)
        if polar_ok(q) == 1:
            key[0] = s0
            key[1] = s1
            f = polar_scale(q)
            return u * f, v * f


@njit(cache=True)
def normal(key):
    """One N(0, 1) draw (the second of the pair is discarded)."""
    a, _ = normal_pair(key)
    return a


@njit(cache=True)
def fill_normal(key, out):
    """Fill ``out`` (1-D float64) with independent N(0, 1) draws, two per polar step (an odd last entry takes
    the first of a pair): the numbers of :func:`normal_pair` called pair after pair. Runs
    :func:`fill_normal_chunked` with a scratch of 256 pairs."""
    fill_normal_chunked(key, out, np.empty(min(256, (out.shape[0] + 1) // 2 + 1)))


@njit(cache=True)
def fill_normal_chunked(key, out, scratch):
    """:func:`fill_normal` with a caller's scratch (1-D float64, length >= 1): the same numbers whatever its
    length, which sets how many pairs are drawn at a time.

    Chunk by chunk, the accepted tries (u, v) are written to ``out`` and their q to ``scratch`` (a rejected try
    is overwritten by the next: no branch per try), then the chunk's scales are computed in one loop and
    multiplied in: the calls of ``log``, the divisions and the square roots of a chunk overlap instead of
    waiting on the generator and on a mispredicted branch, and the generator state stays in registers."""
    n = out.shape[0]
    c = scratch.shape[0]
    if c < 1 and n > 1:
        raise ValueError("fill_normal_chunked: the scratch must have at least one entry")
    s0 = key[0]
    s1 = key[1]
    i = 0
    while i + 1 < n:
        m = min(c, (n - i) // 2)
        j = 0
        while j < m:
            u, v, q, s0, s1 = polar_try(s0, s1)
            out[i + 2 * j] = u
            out[i + 2 * j + 1] = v
            scratch[j] = q
            j += polar_ok(q)
        for j in range(m):
            scratch[j] = polar_scale(scratch[j])
        for j in range(m):
            f = scratch[j]
            out[i + 2 * j] *= f
            out[i + 2 * j + 1] *= f
        i += 2 * m
    key[0] = s0
    key[1] = s1
    if i < n:
        a, _ = normal_pair(key)
        out[i] = a


@njit(cache=True)
def partial_shuffle(key, perm, k):
    """Move a uniformly random k-subset of ``perm`` into ``perm[:k]`` (partial Fisher-Yates).

    ``perm`` is a persistent permutation of 0..N-1; after the call ``perm[:k]`` is a minibatch
    drawn without replacement. Costs O(k), allocation-free.
    """
    n = perm.shape[0]
    for i in range(k):
        j = i + uniform_int(key, n - i)
        t = perm[i]
        perm[i] = perm[j]
        perm[j] = t


# ---------------------------------------------------------------------------------------------
# counter-based streams: SplitMix64
# ---------------------------------------------------------------------------------------------


@njit(inline="always", cache=True)
def mix64(z):
    """SplitMix64 finaliser (a bijection of uint64 with good avalanche)."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(inline="always", cache=True)
def stream(seed, a, b):
    """Initial state of the stream keyed by (seed, a, b); all three non-negative integers."""
    s = mix64(np.uint64(seed) + GOLDEN)
    s = mix64(s ^ (np.uint64(a) * _M1 + GOLDEN))
    s = mix64(s ^ (np.uint64(b) * _M2 + GOLDEN))
    return s


@njit(inline="always", cache=True)
def key_from_stream(seed, a, b, out):
    """Fill ``out`` (uint64[2]) with a xoroshiro state derived from the stream (seed, a, b): a key for
    a parallel worker (e.g. one block of a parameter vector) that depends on (seed, a, b) only."""
    s0 = stream(seed, a, b)
    out[0] = mix64(s0)
    out[1] = mix64(s0 + GOLDEN) | np.uint64(1)  # never the all-zero state


@njit(inline="always", cache=True)
def next_uniform(state):
    """Advance ``state``; return (new_state, u) with u uniform on [0, 1) (53 bits)."""
    state = state + GOLDEN
    z = mix64(state)
    return state, float(z >> _S11) * INV_2_53


# ---------------------------------------------------------------------------------------------
# either generator
# ---------------------------------------------------------------------------------------------


def draw_uniform(rng):
    """``(rng, u)``: u uniform on [0, 1) from a xoroshiro key (``uint64[2]``, advanced in place and
    returned as is: :func:`uniform`) or a SplitMix64 stream state (``uint64``; the advanced state is
    returned: :func:`next_uniform`). Compiled code only."""
    raise TypeError("draw_uniform is callable from Numba-compiled code only")


@overload(draw_uniform, inline="always")
def _draw_uniform(rng):
    if isinstance(rng, types.Array) and rng.ndim == 1 and rng.dtype == types.uint64:
        def impl(rng):
            return rng, uniform(rng)

        return impl
    if rng == types.uint64:
        def impl(rng):
            return next_uniform(rng)

        return impl
    return None


@njit(inline="always", cache=True)
def cdf_search(cum, n, u):
    """First j in [0, n) with ``cum[j] > u`` (binary search of nondecreasing running sums; n - 1 if
    none)."""
    lo = 0
    hi = n - 1
    while lo < hi:
        mid = (lo + hi) >> 1
        if cum[mid] <= u:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(inline="always", cache=True)
def cdf_count(cum, n, u):
    """:func:`cdf_search` by counting instead of bisecting: the number of ``cum[:n]`` at or below ``u``, at most
    n - 1. The same index for nondecreasing running sums, without a branch on the data (vector code); O(n)
    against O(log n), which pays where the bisection's branches are mispredicted (ESCA's start from the prior,
    K = 100: 0.41 -> 0.19 s on the Wikipedia sample)."""
    k = 0
    for q in range(n):
        k += cum[q] <= u
    if k > n - 1:
        k = n - 1
    return k


@njit(inline="always", cache=True)
def draw_index(rng, n):
    """``(rng, k)``: k uniform on {0, ..., n - 1} (n >= 1) as int(u n) of one :func:`draw_uniform`
    draw, clamped at n - 1 against round-off; either generator."""
    rng, u = draw_uniform(rng)
    k = np.int64(u * n)
    if k >= n:
        k = n - 1
    return rng, k


# ---------------------------------------------------------------------------------------------
# non-uniform variates from a key
# ---------------------------------------------------------------------------------------------


def _ziggurat_tables():
    """Tables of the 256-layer ziggurat for N(0, 1) (Marsaglia & Tsang 2000, "The ziggurat method for
    generating random variables"; the 52-bit layout of numpy's generator): right edges x_i (``wi`` = x_i /
    2^52), densities f(x_i) (``fi``), inner-rectangle thresholds (``ki`` = x_(i-1) / x_i 2^52); layer 0 is
    the base strip with the tail beyond r."""
    r, v, m = 3.6541528853610088, 0.00492867323399, 2.0**52
    ki = np.zeros(256, np.uint64)
    wi = np.zeros(256)
    fi = np.zeros(256)
    dn = tn = r
    q = v / math.exp(-0.5 * dn * dn)
    ki[0] = np.uint64(int(dn / q * m))
    wi[0], wi[255] = q / m, dn / m
    fi[0], fi[255] = 1.0, math.exp(-0.5 * dn * dn)
    for i in range(254, 0, -1):
        dn = math.sqrt(-2.0 * math.log(v / dn + math.exp(-0.5 * dn * dn)))
        ki[i + 1] = np.uint64(int(dn / tn * m))
        tn = dn
        fi[i] = math.exp(-0.5 * dn * dn)
        wi[i] = dn / m
    return ki, wi, fi, r


_ZKI, _ZWI, _ZFI, _ZR = _ziggurat_tables()
_M52 = np.uint64((1 << 52) - 1)


def _ziggurat_exp_tables():
    """Tables of the 256-layer ziggurat for Exp(1) (Marsaglia & Tsang 2000), for 53-bit abscissae: right
    edges (``we`` = x_i / 2^53), densities e^-x_i (``fe``), inner-rectangle thresholds (``ke``); layer 0
    is the base strip with the tail beyond r."""
    r, v, m = 7.69711747013104972, 3.949659822581572e-3, 2.0**53
    ke = np.zeros(256, np.uint64)
    we = np.zeros(256)
    fe = np.zeros(256)
    de = te = r
    q = v / math.exp(-de)
    ke[0] = np.uint64(int(de / q * m))
    we[0], we[255] = q / m, de / m
    fe[0], fe[255] = 1.0, math.exp(-de)
    for i in range(254, 0, -1):
        de = -math.log(v / de + math.exp(-de))
        ke[i + 1] = np.uint64(int(de / te * m))
        te = de
        fe[i] = math.exp(-de)
        we[i] = de / m
    return ke, we, fe, r


_EKE, _EWE, _EFE, _ER = _ziggurat_exp_tables()
_M53 = np.uint64((1 << 53) - 1)

# Every variate the CIR transition draws is inline="always": a call of a compiled function that takes the
# key array changes the array's reference count atomically on entry and exit, which cost more than the
# variate itself (a Marsaglia-Tsang gamma: 47 ns called, ~8 ns inlined, on this project's machines).


@njit(cache=True, inline="always")
def ziggurat_normal(key):
    """One N(0, 1) draw by the ziggurat (tables :func:`_ziggurat_tables`): one 64-bit draw in ~99% of the
    calls. Layer from the top 8 bits, sign from bit 55, the 52-bit abscissa from bits 3..54 (the low bits
    of xoroshiro128+ are its weakest and are not used); Marsaglia's exact tail beyond r."""
    while True:
        u = next_u64(key)
        i = np.int64(u >> np.uint64(56))
        neg = (u >> np.uint64(55)) & np.uint64(1)
        rabbit = (u >> np.uint64(3)) & _M52
        x = np.float64(rabbit) * _ZWI[i]
        if rabbit < _ZKI[i]:
            return -x if neg else x
        if i == 0:  # tail x > r
            while True:
                xx = -np.log1p(-uniform(key)) / _ZR
                yy = -np.log1p(-uniform(key))
                if yy + yy > xx * xx:
                    return -(_ZR + xx) if neg else _ZR + xx
        if (_ZFI[i - 1] - _ZFI[i]) * uniform(key) + _ZFI[i] < np.exp(-0.5 * x * x):
            return -x if neg else x


@njit(cache=True, inline="always")
def ziggurat_exponential(key):
    """One Exp(1) draw by the ziggurat (tables :func:`_ziggurat_exp_tables`): one 64-bit draw in ~99% of
    the calls. Layer from the top 8 bits, the 53-bit abscissa from bits 3..55; beyond r the tail is
    r + Exp(1) (memoryless), drawn by inversion."""
    while True:
        u = next_u64(key)
        i = np.int64(u >> np.uint64(56))
        rabbit = (u >> np.uint64(3)) & _M53
        x = np.float64(rabbit) * _EWE[i]
        if rabbit < _EKE[i]:
            return x
        if i == 0:
            return _ER - np.log1p(-uniform(key))
        if (_EFE[i - 1] - _EFE[i]) * uniform(key) + _EFE[i] < np.exp(-x):
            return x


@njit(cache=True, inline="always")
def _mt_gamma(key, a):
    """Gamma(a, 1) for a >= 1: Marsaglia & Tsang (2000, "A simple method for generating gamma variables")
    with the ziggurat normal."""
    d = a - 1.0 / 3.0
    c = 1.0 / np.sqrt(9.0 * d)
    while True:
        x = ziggurat_normal(key)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = uniform(key)
        x2 = x * x
        if u < 1.0 - 0.0331 * x2 * x2 or np.log(u) < 0.5 * x2 + d * (1.0 - v + np.log(v)):
            return d * v


#: below this shape Gamma(a) is drawn by GS (:func:`_gamma_gs`), from it to 1 by the boost
GS_BELOW = 0.05


@njit(cache=True, inline="always")
def _gamma_gs(key, a):
    """One Gamma(a, 1) draw for 0 < a < 1: Ahrens & Dieter's (1974) GS rejection (proposal a x^(a-1) on
    [0, 1] and e^(1-x) on (1, inf), acceptance >= 0.72, tending to 1 as a -> 0), written with exponential
    variates: p = b U <= 1 iff E1 >= log b, then x = p^(1/a) = exp((log b - E1) / a), accepted iff E2 >= x;
    otherwise x = -log((b - p) / a), accepted iff E2 >= (1 - a) log x. One exp per try in the first branch
    (none below the underflow threshold: x rounds to 0.0, its correct double value, skipping libm's slow
    underflow path), so draws below the smallest positive double are 0.0 (for a = 1e-3 about half)."""
    lb = np.log(1.0 + a * 0.36787944117144233)  # log b, b = 1 + a / e
    while True:
        e1 = ziggurat_exponential(key)
        if e1 >= lb:
            y = (lb - e1) / a
            x = np.exp(y) if y > -745.2 else 0.0
            if x <= 0.0:
                return x
            threshold = x
        else:
            # (b - p) / a with p = b e^-E1: -b expm1(-E1) / a > 0 for E1 > 0
            w = -np.exp(lb) * np.expm1(-e1) / a
            if not (w > 0.0):
                continue
            x = -np.log(w)
            threshold = (1.0 - a) * np.log(x)
        if ziggurat_exponential(key) >= threshold:  # E2: one draw site for both branches (inlined code)
            return x


@njit(cache=True, inline="always")
def _gamma_below_one(key, a):
    """One Gamma(a, 1) draw for 0 < a < 1: GS (:func:`_gamma_gs`) below ``GS_BELOW``, otherwise the boost
    Gamma(a + 1) U^(1/a) = Gamma(a + 1) exp(-E / a) (Marsaglia & Tsang's gamma at a + 1 and an exponential
    from the ziggurat: ~17 ns at any shape, where GS's acceptance falls towards 0.72 and costs up to
    ~50 ns near a = 1)."""
    if a < GS_BELOW:
        return _gamma_gs(key, a)
    return _mt_gamma(key, a + 1.0) * np.exp(-ziggurat_exponential(key) / a)


@njit(cache=True, inline="always")
def gamma(key, a):
    """One Gamma(a, 1) draw, a > 0 (NaN for a <= 0 or non-finite a: callers check): Marsaglia & Tsang for
    a >= 1 (:func:`_mt_gamma`), the boost or GS below 1 (:func:`_gamma_below_one`; draws below the
    smallest positive double round to 0.0, their correct double value: for a = 1e-3 about half of them).

    Written with one Marsaglia-Tsang site for a >= 1 and the boost (the same draws as calling
    :func:`_gamma_below_one`): every site of an inlined variate is compiled again, at seconds each."""
    if not (a > 0.0) or not (a < np.inf):
        return np.nan
    if a < GS_BELOW:
        return _gamma_gs(key, a)
    g = _mt_gamma(key, a + 1.0 if a < 1.0 else a)
    if a < 1.0:
        g *= np.exp(-ziggurat_exponential(key) / a)
    return g


@njit(cache=True)
def log_gamma(key, a):
    """log of one Gamma(a, 1) draw, a > 0 (NaN for a <= 0 or non-finite a): for a < 1 by the boost
    log Gamma(a + 1) + log(U) / a, which stays finite for any a > 0 (for a = 1e-3 about half the draws
    lie below 1e-308, where the draw itself rounds to 0)."""
    if not (a > 0.0) or not (a < np.inf):
        return np.nan
    if a >= 1.0:
        return np.log(_mt_gamma(key, a))
    lg = np.log(_mt_gamma(key, a + 1.0))
    u = uniform(key)
    while u == 0.0:
        u = uniform(key)
    return lg + np.log(u) / a


_INV_K = np.array([0.0] + [1.0 / k for k in range(1, 64)])  # 1/k for the Poisson inversion


@njit(cache=True, inline="always")
def poisson(key, lam):
    """One Poisson(lam) draw, lam >= 0 (returns -1 for a negative, non-finite or over-large lam, > 2^60).

    lam < 10: sequential inversion, returning 0 at once when u <= 1 - lam (<= e^-lam, so the inversion
    would return 0 too; no exp for the tiny means that dominate sparse models, and lam = 0 always ends
    there since u < 1), with 1/k from a table in its loop; otherwise PTRS, the transformed rejection with
    squeeze of Hoermann (1993, "The transformed rejection method for generating Poisson random
    variables"), taking log(lam) and lgamma only when its squeeze fails.
    """
    if not (lam >= 0.0) or not (lam <= 1.152921504606847e18):
        return np.int64(-1)
    if lam < 10.0:
        u = uniform(key)
        if u <= 1.0 - lam:
            return np.int64(0)
        p = np.exp(-lam)
        k = 0
        while u > p:
            u -= p
            k += 1
            p *= lam * (_INV_K[k] if k < 64 else 1.0 / k)
            if p <= 0.0:  # round-off tail: restart is exact (rejects a set of measure ~1e-300)
                u = uniform(key)
                p = np.exp(-lam)
                k = 0
        return np.int64(k)
    slam = np.sqrt(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    vr = 0.9277 - 3.6224 / (b - 2.0)
    while True:
        u = uniform(key) - 0.5
        v = uniform(key)
        us = 0.5 - abs(u)
        k = np.floor((2.0 * a / us + b) * u + lam + 0.43)
        if us >= 0.07 and v <= vr:
            return np.int64(k)
        if k < 0.0 or (us < 0.013 and v > us):
            continue
        inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
        if np.log(v) + np.log(inv_alpha) - np.log(a / (us * us) + b) <= -lam + k * np.log(lam) - math.lgamma(k + 1.0):
            return np.int64(k)


@njit(cache=True)
def beta(key, a, b):
    """One Beta(a, b) draw as G_a / (G_a + G_b) = 1 / (1 + exp(log G_b - log G_a)), in logs so that it
    stays exact for tiny shapes (where both gammas would round to 0). NaN for non-positive shapes."""
    la = log_gamma(key, a)
    lb = log_gamma(key, b)
    return 1.0 / (1.0 + np.exp(lb - la))
