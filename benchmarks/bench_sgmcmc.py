"""Step time of SGLD, SGHMC and SGNHT on Bayesian logistic regression (N = 100,000, d = 50, minibatch 100).

All timings in ONE run, as ratios against peers measured in the same process:
  * ``driver``: scalable_bayes.samplers.run_chain (compiled chunks, per-step Info recorded, thinning,
    checkpoints, divergence checks, progress logging) -- the library path.
  * ``driver-prevgrad``: the same driver with the previous gradient kernel (commit ad6c2ea: a
    prefetch pass over this step's rows, a partial lookahead, one libm exp per row), kept as an
    in-run reference for the change.
  * ``naive-numba``: a straightforward Numba loop (float64 data, numba's global np.random, fancy
    indexing with temporaries), the baseline of this comparison.
  * ``blackjax`` (optional, ``--peer-python /tmp/peer_venv/bin/python``): blackjax 1.7.1 SGLD with the
    whole chain compiled by ``jax.lax.scan``, run in a separate venv (never installed into .venv).
    (blackjax's SGHMC is not timed: it refreshes the momentum at every step, see BLACKJAX_SRC.)

What the library path does per step (see models/logistic.py and samplers/_loop.py, the driver's chunk
loop): the minibatch (partial Fisher-Yates on an int32 permutation, its own xoroshiro stream) is drawn one
step ahead; the gradient computes all minibatch dot products (float64 accumulation, four rows at a time in one
fixed-order 8-lane vector loop, no fastmath flags, so the compiled chain loop is cached; x_i and
y_i packed in one float32 row of d + 1 values), then the sigmoid residuals in branch-free vectorised
loops (its own exp, within 1 ulp of libm), then the accumulation; during the dot and accumulate
phases it prefetches (into L2) every cache line of the NEXT step's rows (three lines per row in one
phase, the rest in the other), so this step's rows are already cached when it starts; the
accumulation takes eight rows per pass over the gradient.
Profile (CPU time, loaded machine, paired runs): a whole driver step with cache-resident rows
(N = 4000) ~3.6 us, random rows of N = 100,000 ~2.7 us more; inside the step, 100 libm exp calls
cost ~0.75 us (now ~0.2 us), the 50 polar normals ~0.5 us, the partial shuffle ~0.3 us, the
driver's Info/divergence bookkeeping a few tenths.

Two clocks per run: ``us_per_step`` is wall time (what the project's 10 us/step target is about) and ``cpu_us_per_step``
is the process CPU time (``time.process_time``), which excludes the time the process waits for a core
on a shared, overloaded machine (the wall time then mostly measures the load, not the code). Repeats
are interleaved across implementations (repeat r of every implementation runs before repeat r + 1),
so slow phases of the machine hit all of them alike; the summary gives median and min over repeats.

Usage: .venv/bin/python benchmarks/bench_sgmcmc.py [--steps 200000] [--repeats 5] [--out results/benchmarks]
Pin to one core (the target's setting): taskset -c 1 .venv/bin/python benchmarks/bench_sgmcmc.py
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from numba import njit  # noqa: E402

from scalable_bayes import models, samplers  # noqa: E402
from scalable_bayes.models.base import Model  # noqa: E402
from scalable_bayes.intrinsics import prefetch  # noqa: E402
from scalable_bayes.utils import save_table  # noqa: E402

N, D, B = 100_000, 50, 100


@njit(cache=True)
def naive_chain(X, y, theta, n_steps, h, A, method, seed):
    """Naive peer: float64 data, np.random global RNG, X[idx] fancy indexing (allocates each step)."""
    np.random.seed(seed)
    n, d = X.shape
    p = np.random.standard_normal(d)
    xi = A
    ke = np.empty(n_steps)
    for t in range(n_steps):
        idx = np.random.randint(0, n, B)
        Xb = X[idx]
        s = 1.0 / (1.0 + np.exp(-(Xb @ theta)))
        g = theta - (n / B) * (Xb.T @ (y[idx] - s))
        z = np.random.standard_normal(d)
        if method == 0:  # SGLD
            theta = theta - h * g + np.sqrt(2 * h) * z
            ke[t] = 0.0
        elif method == 1:  # SGHMC
            p = p - A * p * h - g * h + np.sqrt(2 * A * h) * z
            theta = theta + p * h
            ke[t] = 0.5 * (p @ p) / d
        else:  # SGNHT
            p = p - xi * p * h - g * h + np.sqrt(2 * A * h) * z
            theta = theta + p * h
            xi = xi + ((p @ p) / d - 1.0) * h
            ke[t] = 0.5 * (p @ p) / d
    return theta, ke


@njit(cache=True, fastmath={"reassoc", "contract", "nsz"})
def prev_grad(x, data, idx, key, out):
    """The previous library gradient (commit ad6c2ea): a prefetch pass over every line of this
    step's rows, lookahead prefetch of three lines of the next step's rows, one libm exp per row."""
    X, prior_prec, z, nxt = data[0], data[2][0], data[3], data[4]
    N = X.shape[0]
    d = X.shape[1] - 1  # the last column holds y_i (one fewer cache line per row than a separate y)
    b = idx.shape[0]
    if b > z.shape[0]:
        raise ValueError("logistic_regression: minibatch larger than the scratch buffer; build the model with max_batch >= batch_size")
    rb = X.shape[1] * X.itemsize
    for k in range(b):
        off = idx[k] * rb
        o = 0
        while o < rb:
            prefetch(X, off + o)
            o += 64
        prefetch(X, off + rb - 1)
    k = 0
    while k + 4 <= b:
        for q in range(k, k + 4):  # lookahead: start loading the next step's rows
            off = nxt[q] * rb
            prefetch(X, off)
            prefetch(X, off + 64)
            prefetch(X, off + 128)
            prefetch(X, off + rb - 1)
        w0 = X[idx[k]]
        w1 = X[idx[k + 1]]
        w2 = X[idx[k + 2]]
        w3 = X[idx[k + 3]]
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        a3 = 0.0
        for j in range(d):
            xj = x[j]
            a0 += w0[j] * xj
            a1 += w1[j] * xj
            a2 += w2[j] * xj
            a3 += w3[j] * xj
        z[k] = a0
        z[k + 1] = a1
        z[k + 2] = a2
        z[k + 3] = a3
        k += 4
    while k < b:
        w = X[idx[k]]
        a0 = 0.0
        for j in range(d):
            a0 += w[j] * x[j]
        z[k] = a0
        k += 1
    c = N / b
    for k in range(b):
        z[k] = c * (X[idx[k], d] - 1.0 / (1.0 + np.exp(-z[k])))
    for j in range(d):
        out[j] = prior_prec * x[j]
    k = 0
    while k + 4 <= b:
        r0 = z[k]
        r1 = z[k + 1]
        r2 = z[k + 2]
        r3 = z[k + 3]
        w0 = X[idx[k]]
        w1 = X[idx[k + 1]]
        w2 = X[idx[k + 2]]
        w3 = X[idx[k + 3]]
        for j in range(d):
            out[j] -= (r0 * w0[j] + r1 * w1[j]) + (r2 * w2[j] + r3 * w3[j])
        k += 4
    while k < b:
        r0 = z[k]
        w = X[idx[k]]
        for j in range(d):
            out[j] -= r0 * w[j]
        k += 1


BLACKJAX_SRC = textwrap.dedent('''
    import json, sys, time
    import numpy as np, jax, jax.numpy as jnp, blackjax
    N, D, B, steps, h, reps = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
    rng = np.random.default_rng(0)
    X = jnp.asarray(rng.standard_normal((N, D)) / np.sqrt(D), dtype=jnp.float32)
    y = jnp.asarray(rng.random(N) < 0.5, dtype=jnp.float32)
    def logprior(th): return -0.5 * jnp.sum(th ** 2)
    def loglik(th, batch):
        xb, yb = batch
        z = xb @ th
        return jnp.sum(yb * z - jnp.logaddexp(0.0, z))
    grad_fn = blackjax.sgmcmc.grad_estimator(logprior, loglik, N)
    out = {}
    # Only SGLD: blackjax's sghmc resamples the momentum at every step() call, so with one integration
    # step the minibatch gradient only touches the discarded momentum and XLA removes it as dead code
    # (measured here: 4-7 us/step "SGHMC" vs 50 us for the gradient alone).
    for name, alg in [("SGLD", blackjax.sgld(grad_fn))]:
        def one(carry, key):
            th = carry
            k1, k2 = jax.random.split(key)
            idx = jax.random.randint(k1, (B,), 0, N)
            th = alg.step(k2, th, (X[idx], y[idx]), h)
            return th, jnp.sum(th ** 2)
        run = jax.jit(lambda th, keys: jax.lax.scan(one, th, keys))
        keys = jax.random.split(jax.random.PRNGKey(0), steps)
        th0 = jnp.zeros(D, dtype=jnp.float32)
        jax.block_until_ready(run(th0, keys[:10]))
        jax.block_until_ready(run(th0, keys))
        out[name] = []
        for _ in range(reps):
            t = time.perf_counter(); c = time.process_time(); jax.block_until_ready(run(th0, keys))
            out[name].append(((time.perf_counter() - t) / steps, (time.process_time() - c) / steps))
    print(json.dumps(out))
''')


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=200_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default="results/benchmarks")
    ap.add_argument("--peer-python", default=None, help="python of a separate venv with blackjax installed")
    args = ap.parse_args(argv)

    X, y, _ = models.synthetic_logistic_data(N, D, 0)
    model = models.logistic_regression(X, y, prior_var=1.0, max_batch=B)
    old_nb = np.zeros(B, dtype=np.int64)
    old = Model("logistic_regression_prevgrad", D, N, prev_grad,
                (model.data[0], model.data[1], model.data[2], np.zeros(B), old_nb))
    old.next_batch = old_nb
    h = 1e-5
    rows = []
    algs = {"SGLD": samplers.sgld(), "SGHMC": samplers.sghmc(A=1.0), "SGNHT": samplers.sgnht(A=1.0)}
    code = {"SGLD": 0, "SGHMC": 1, "SGNHT": 2}

    def timed(fn):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        return time.perf_counter() - t, time.process_time() - c, out

    for name, alg in algs.items():  # compile (or load from cache) everything first
        samplers.run_chain(alg, model, np.zeros(D), seed=0, n_steps=1000, step_size=h, batch_size=B)
        samplers.run_chain(alg, old, np.zeros(D), seed=0, n_steps=1000, step_size=h, batch_size=B)
        naive_chain(X, y, np.zeros(D), 10, h, 1.0, code[name], 0)
    for r in range(args.repeats):
        for name, alg in algs.items():
            for impl, mdl in [("driver", model), ("driver-prevgrad", old)]:
                wall, cpu, res = timed(lambda: samplers.run_chain(
                    alg, mdl, np.zeros(D), seed=r, n_steps=args.steps, step_size=h, batch_size=B,
                    thin=10, checkpoint_every=args.steps // 20, progress=False))
                rows.append({"sampler": name, "impl": impl, "repeat": r, "us_per_step": 1e6 * wall / args.steps,
                             "cpu_us_per_step": 1e6 * cpu / args.steps,
                             "us_per_step_sampler_only": 1e6 * res.wall_time / args.steps})
            wall, cpu, _ = timed(lambda: naive_chain(X, y, np.zeros(D), args.steps, h, 1.0, code[name], r))
            rows.append({"sampler": name, "impl": "naive-numba", "repeat": r, "us_per_step": 1e6 * wall / args.steps,
                         "cpu_us_per_step": 1e6 * cpu / args.steps, "us_per_step_sampler_only": 1e6 * wall / args.steps})
    if args.peer_python:
        try:
            outp = subprocess.run([args.peer_python, "-c", BLACKJAX_SRC, str(N), str(D), str(B), str(args.steps), str(h), str(args.repeats)],
                                  capture_output=True, text=True, check=True, timeout=1800).stdout
            for name, secs in json.loads(outp.strip().splitlines()[-1]).items():
                for r, (sec, cpu) in enumerate(secs):
                    rows.append({"sampler": name, "impl": "blackjax-scan", "repeat": r, "us_per_step": 1e6 * sec,
                                 "cpu_us_per_step": 1e6 * cpu, "us_per_step_sampler_only": 1e6 * sec})
        except (subprocess.SubprocessError, OSError, ValueError) as err:
            print(f"blackjax peer failed: {err}", file=sys.stderr)
    df = pd.DataFrame(rows)
    summ = df.groupby(["sampler", "impl"]).agg(
        wall_median=("us_per_step", "median"), wall_min=("us_per_step", "min"), wall_max=("us_per_step", "max"),
        cpu_median=("cpu_us_per_step", "median"), cpu_min=("cpu_us_per_step", "min")).reset_index()
    base = summ[summ["impl"] == "naive-numba"].set_index("sampler")
    summ["wall_speedup_vs_naive"] = [base.loc[s, "wall_median"] / m for s, m in zip(summ["sampler"], summ["wall_median"])]
    summ["cpu_speedup_vs_naive"] = [base.loc[s, "cpu_median"] / m for s, m in zip(summ["sampler"], summ["cpu_median"])]
    summ["target_10us_met_wall"] = summ["wall_median"] <= 10.0
    summ["target_10us_met_cpu"] = summ["cpu_median"] <= 10.0
    summ["load_avg_1min"] = os.getloadavg()[0]
    os.makedirs(args.out, exist_ok=True)
    save_table(df, os.path.join(args.out, "bench_sgmcmc_raw.csv"))
    save_table(summ, os.path.join(args.out, "bench_sgmcmc.csv"))
    save_table(summ, os.path.join(args.out, "bench_sgmcmc.md"))
    with pd.option_context("display.width", 200, "display.precision", 2):
        print(summ.to_string(index=False))


if __name__ == "__main__":
    main()
