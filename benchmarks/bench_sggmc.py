"""Speed and memory of the geodesic samplers and of the SAM estimator.

Parts (``--parts``, default all):

* ``step``: one SGGMC step and one gSGNHT step on S^49 (``models.sphere.vmf``: vMF(mu, kappa = 20) on
  S^49 in R^50, analytic gradient -kappa mu) through the library driver ``samplers.run_chain`` (compiled
  chunks, per-step Info, thinning 10, checkpoints, divergence checks; progress logging off), time per
  step over ``--steps`` steps. Peer (optional): geoopt's Riemannian samplers ``geoopt.samplers.RSGLD`` and
  ``geoopt.samplers.SGRHMC`` on ``geoopt.Sphere`` (projection retraction) and ``geoopt.SphereExact``
  (exponential map) with the same target and dimension, PyTorch float64, one torch thread, run in a
  SEPARATE venv (``--peer-python``, default /work/bench_venv/bin/python if it exists) as a long-lived
  subprocess that this script drives, so repeats interleave with ours. geoopt 0.5.1 refuses both spheres
  in its samplers ("manifolds that do not implement reversible retraction"); the peer sets
  ``manifold.reversible = True`` on the instance, the only way to run them on a sphere. SGRHMC redraws
  its momentum at each ``step()`` call and then makes ``n_steps + 1`` gradient evaluations and updates;
  it is run with n_steps = 10 and its time is reported per gradient evaluation (per inner update), which
  is what one of our steps is. Without the peer python (or without geoopt in it) the peer is skipped
  with a message.
* ``theta``: SAM's theta sampler (``models.sam.sample_theta``: GMC on the sphere lift, one document per
  prange task), K = 50, 1,000 documents x 5 samples x 3 GMC transitions (5 leapfrog steps each), with 1
  and 2 Numba threads interleaved; throughput = documents x GMC transitions per second (wall clock).
* ``iter``: one SGGMC (and gSGNHT) outer iteration of ``inference.SphericalAdmixture`` (K = 50, V = 3,000,
  batch 100, the estimator's defaults otherwise), 1 and 2 threads, from the fit's own per-iteration
  clock (``trace_`` with ``evaluate_every=1``: the sampler's wall and process CPU time, no evaluation),
  plus a breakdown of one iteration into its kernels (timed here by calling the same library kernels
  with the same shapes, one thread, CPU clock).
* ``memory``: the peak memory of one SGGMC fit (K = 50, batch 100, ``--mem-iter`` iterations) in a fresh
  subprocess: (a) peak RSS above the RSS just before ``fit`` (VmHWM reset through
  /proc/self/clear_refs, after a warm-up fit on 200 documents so compilation is not counted) and (b) the
  tracemalloc peak during ``fit`` (numpy and Python allocations; Numba's own allocations are not
  traced) in a second subprocess; both against the CSR input size (data + indices + indptr bytes).

Corpus (``--corpus auto``): data/processed/wiki_sggmc's tf-idf if it exists; else the same recipe applied
to data/interim/wikipedia_counts (df band [0.44%, 5.99%], 3,000 terms, > 20 words, ``tfidf_sggmc``; all
documents, no split); else (or ``--corpus synthetic``) a synthetic SAM corpus of ``--synthetic-docs``
documents, V = 3,000, from ``models.sam.sample_sam_corpus`` (dense rows: every vMF draw has V non-zeros).

Clocks: single-threaded parts report the process CPU clock (``time.process_time``) next to the wall
clock (on this shared 2-core machine the wall clock also measures the queue for a core); the thread
speed-ups use the wall clock. Every measurement records the 1-minute load average at its start and end.
Repeats are interleaved across implementations / thread counts; summaries give median and min.

Usage:
    .venv/bin/python benchmarks/bench_sggmc.py [--parts step,theta,iter,memory] [--repeats 5]
        [--steps 200000] [--peer-python /work/bench_venv/bin/python] [--out results/benchmarks]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "2")

import numba  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import scipy.sparse as sp  # noqa: E402

from scalable_bayes import samplers  # noqa: E402
from scalable_bayes.inference.sam import SphericalAdmixture  # noqa: E402
from scalable_bayes.manifolds.sphere import geodesic_flow, project_tangent  # noqa: E402
from scalable_bayes.models import sam as M  # noqa: E402
from scalable_bayes.models.sphere import vmf  # noqa: E402
from scalable_bayes.rng import fill_normal, make_key  # noqa: E402
from scalable_bayes.special import bessel_ratio  # noqa: E402
from scalable_bayes.utils import save_table  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
D_SPHERE, KAPPA_VMF = 50, 20.0
H_STEP, FRICTION = 0.05, 1.0           # our SGGMC / gSGNHT on the vMF
PEER_EPS, PEER_LEAP, PEER_ALPHA = 0.01, 10, 0.1  # geoopt RSGLD / SGRHMC settings
K_SAM, V_SAM, BATCH_SAM = 50, 3000, 100
DEFAULT_PEER = "/work/bench_venv/bin/python"


def load1():
    return os.getloadavg()[0]


# ------------------------------------------------------------------------------------------ peer
PEER_SRC = textwrap.dedent('''
    import json, math, sys, time
    try:
        import torch, geoopt
    except Exception as err:  # noqa: BLE001
        print(json.dumps({"error": f"{type(err).__name__}: {err}"}), flush=True)
        sys.exit(0)
    torch.set_num_threads(1)
    d, kappa, eps, leap, alpha = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
    mu = torch.zeros(d, dtype=torch.float64); mu[0] = 1.0
    print(json.dumps({"ready": True, "torch": torch.__version__, "geoopt": geoopt.__version__}), flush=True)

    def make(impl, seed):
        torch.manual_seed(seed)
        man = geoopt.SphereExact() if impl.endswith("SphereExact") else geoopt.Sphere()
        man.reversible = True  # geoopt's samplers refuse the sphere otherwise (see the bench docstring)
        p = geoopt.ManifoldParameter(man.projx(torch.randn(d, dtype=torch.float64)), manifold=man)
        if "RSGLD" in impl:
            s, per = geoopt.samplers.RSGLD([p], epsilon=eps), 1
        else:
            s, per = geoopt.samplers.SGRHMC([p], epsilon=eps, n_steps=leap, alpha=alpha), leap + 1
        s.burnin = False
        return p, s, per

    for line in sys.stdin:
        req = json.loads(line)
        impl, n_grad, seed = req["impl"], int(req["n_grad"]), int(req["seed"])
        p, s, per = make(impl, seed)
        closure = lambda: kappa * (mu @ p)  # log density of vMF(mu, kappa) up to a constant
        calls = max(1, n_grad // per)
        thin = max(1, 10 // per)
        keep = torch.empty((calls // thin + 1, d), dtype=torch.float64)
        for _ in range(max(1, 200 // per)):  # warm-up (allocator, autograd graph)
            s.step(closure)
        k = 0
        t0, c0 = time.perf_counter(), time.process_time()
        for i in range(calls):
            s.step(closure)
            if i % thin == 0:
                with torch.no_grad():
                    keep[k].copy_(p)
                k += 1
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        cos = keep[k // 2:k] @ mu
        print(json.dumps({"impl": impl, "n_grad": calls * per, "wall": wall, "cpu": cpu,
                          "mean_cos": float(cos.mean())}), flush=True)
''')

PEER_IMPLS = ("geoopt-RSGLD-Sphere", "geoopt-SGRHMC-Sphere", "geoopt-RSGLD-SphereExact", "geoopt-SGRHMC-SphereExact")


class Peer:
    """The geoopt peer as a long-lived subprocess in its own venv (one JSON request / reply per line)."""

    def __init__(self, python):
        self.proc = subprocess.Popen([python, "-c", PEER_SRC, str(D_SPHERE), str(KAPPA_VMF), str(PEER_EPS),
                                      str(PEER_LEAP), str(PEER_ALPHA)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        hello = json.loads(self.proc.stdout.readline())
        if "error" in hello:
            self.close()
            raise RuntimeError(hello["error"])
        self.versions = hello

    def run(self, impl, n_grad, seed):
        self.proc.stdin.write(json.dumps({"impl": impl, "n_grad": n_grad, "seed": seed}) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        except Exception:  # noqa: BLE001
            self.proc.kill()


def part_step(args, rows_out):
    mu = np.zeros(D_SPHERE)
    mu[0] = 1.0
    model = vmf(mu, KAPPA_VMF)
    exact = float(bessel_ratio(KAPPA_VMF, d=D_SPHERE))
    x0 = model.manifold.random_point(0)
    algs = {"SGGMC": samplers.sggmc(C=FRICTION), "gSGNHT": samplers.gsgnht(C=FRICTION)}
    for alg in algs.values():  # compile / load the chunk loop off the clock
        samplers.run_chain(alg, model, x0, seed=0, n_steps=2000, step_size=H_STEP, progress=False)
    peer = None
    py = args.peer_python
    if py is None and os.path.exists(DEFAULT_PEER):
        py = DEFAULT_PEER
    if py is None or py.lower() == "none":
        why = "--peer-python none" if py else f"no --peer-python given and {DEFAULT_PEER} does not exist"
        print(f"peer skipped ({why}): geoopt not timed, no ratios", file=sys.stderr)
    else:
        try:
            peer = Peer(py)
            print(f"peer: {py}, torch {peer.versions['torch']}, geoopt {peer.versions['geoopt']}", file=sys.stderr)
        except (OSError, RuntimeError, ValueError) as err:
            print(f"peer skipped: {py} cannot run geoopt ({err})", file=sys.stderr)
    rows = []
    try:
        for r in range(args.repeats):
            for name, alg in algs.items():
                l0 = load1()
                t, c = time.perf_counter(), time.process_time()
                res = samplers.run_chain(alg, model, x0, seed=r + 1, n_steps=args.steps, step_size=H_STEP, thin=10,
                                         progress=False)
                wall, cpu = time.perf_counter() - t, time.process_time() - c
                cos = res.samples[res.samples.shape[0] // 2:] @ mu
                rows.append({"impl": f"scalable_bayes-{name}", "repeat": r, "n_grad": args.steps,
                             "us_per_step": 1e6 * wall / args.steps, "cpu_us_per_step": 1e6 * cpu / args.steps,
                             "mean_cos": float(cos.mean()), "exact_mean_cos": exact, "load_start": l0,
                             "load_end": load1()})
            if peer is not None:
                for impl in PEER_IMPLS:
                    l0 = load1()
                    out = peer.run(impl, args.peer_steps, r + 1)
                    rows.append({"impl": impl, "repeat": r, "n_grad": out["n_grad"],
                                 "us_per_step": 1e6 * out["wall"] / out["n_grad"],
                                 "cpu_us_per_step": 1e6 * out["cpu"] / out["n_grad"], "mean_cos": out["mean_cos"],
                                 "exact_mean_cos": exact, "load_start": l0, "load_end": load1()})
            print(f"step repeat {r} done, load {load1():.2f}", file=sys.stderr)
    finally:
        if peer is not None:
            peer.close()
    df = pd.DataFrame(rows)
    summ = df.groupby("impl", sort=False).agg(
        wall_median=("us_per_step", "median"), wall_min=("us_per_step", "min"),
        cpu_median=("cpu_us_per_step", "median"), cpu_min=("cpu_us_per_step", "min"),
        mean_cos=("mean_cos", "mean"), exact_mean_cos=("exact_mean_cos", "first"),
        load_min=("load_start", "min"), load_max=("load_end", "max")).reset_index()
    ours = summ[summ["impl"].str.startswith("scalable_bayes")]
    peers = summ[summ["impl"].str.startswith("geoopt")]
    summ["target_10us_cpu"] = np.where(summ["impl"].str.startswith("scalable_bayes"), summ["cpu_median"] <= 10.0, np.nan)
    summ["target_10us_wall"] = np.where(summ["impl"].str.startswith("scalable_bayes"), summ["wall_median"] <= 10.0, np.nan)
    ratios = []
    for _, o in ours.iterrows():
        for _, p in peers.iterrows():
            ratios.append({"ours": o["impl"], "peer": p["impl"], "cpu_ratio_median": p["cpu_median"] / o["cpu_median"],
                           "cpu_ratio_min": p["cpu_min"] / o["cpu_min"], "wall_ratio_median": p["wall_median"] / o["wall_median"],
                           "wall_ratio_min": p["wall_min"] / o["wall_min"]})
    rt = pd.DataFrame(ratios)
    if len(rt):
        rt["target_20x_cpu"] = rt["cpu_ratio_median"] >= 20.0
    rows_out["step_raw"], rows_out["step"], rows_out["step_ratio"] = df, summ, rt


# ------------------------------------------------------------------------------------------ SAM corpus
def load_corpus(kind, n_synth, seed=0):
    """(X as CSR of unit rows, description)."""
    proc = os.path.join(ROOT, "data", "processed", "wiki_sggmc")
    interim = os.path.join(ROOT, "data", "interim", "wikipedia_counts", "counts.npz")
    if kind in ("auto", "wiki") and os.path.isdir(proc):
        from scalable_bayes.corpora.store import load_corpus as _load

        c = _load(proc)
        train = (c.docs["split"] == "train").to_numpy() if "split" in c.docs else np.ones(c.tfidf.shape[0], bool)
        X = c.tfidf[np.flatnonzero(train)]
        return sp.csr_matrix(X), f"data/processed/wiki_sggmc tf-idf, train split ({X.shape[0]} x {X.shape[1]})"
    if kind in ("auto", "wiki") and os.path.exists(interim):
        from scalable_bayes.corpora.text import df_band, tfidf_sggmc

        C = sp.load_npz(interim).tocsr()
        keep = df_band(C, 0.0044, 0.0599, max_terms=V_SAM)
        C = sp.csr_matrix(C[:, keep])
        C = C[np.asarray(C.sum(axis=1)).ravel() > 20]
        X = tfidf_sggmc(C)
        return X, (f"wiki_sggmc recipe on data/interim/wikipedia_counts (first 12,000 articles): {X.shape[0]} x "
                   f"{X.shape[1]}, {X.nnz / X.shape[0]:.0f} non-zeros per document")
    if kind == "wiki":
        raise SystemExit("--corpus wiki: neither data/processed/wiki_sggmc nor data/interim/wikipedia_counts exists")
    X, _, _, _ = M.sample_sam_corpus(n_synth, K_SAM, V_SAM, kappa=3e3, sigma=1e3, kappa0=1e3, alpha=10.0, seed=seed)
    X = sp.csr_matrix(X)
    return X, f"synthetic SAM corpus (models.sam.sample_sam_corpus): {X.shape[0]} x {X.shape[1]}, dense rows"


def initial_topics(X, K, seed=0):
    """Topics as the estimator starts them: K random documents, each mixed with the corpus mean direction."""
    m = np.asarray(X.mean(axis=0)).ravel()
    m /= np.linalg.norm(m)
    pick = np.random.default_rng(seed).choice(X.shape[0], size=K, replace=False)
    beta = np.asarray(X[pick].todense()) + m[None, :]
    beta /= np.linalg.norm(beta, axis=1, keepdims=True)
    return beta.ravel().copy(), m


class ThetaProblem:
    """Everything ``models.sam.sample_theta`` needs for a batch of documents, as the estimator builds it."""

    def __init__(self, X, K, docs, n_samples=5, n_steps=3, n_leap=5, kappa=3e3, alpha=10.0):
        V = X.shape[1]
        self.beta, self.m = initial_topics(X, K)
        self.ip, self.ix, self.dt = X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data.astype(np.float64)
        self.docs = np.asarray(docs, dtype=np.int64)
        S = self.docs.shape[0]
        self.K, self.V, self.S = K, V, S
        self.G = np.zeros((K, K))
        self.B = np.zeros((S, K))
        M.gram(self.beta, K, V, self.G)
        M.doc_projections(self.beta, K, V, self.ip, self.ix, self.dt, self.docs, self.B)
        self.Ginv = np.linalg.pinv(self.G, rcond=1e-10)
        a = np.full(K, alpha)
        self.c = M.lift_exponents(a, K)
        self.kappa = kappa
        self.eps = 0.5 / np.sqrt(kappa + 2.0 * a.sum())
        self.n_samples, self.n_steps, self.n_leap = n_samples, n_steps, n_leap
        self.floor = 0.01 / K
        self.out = np.zeros((S, n_samples, K))
        self.score = np.zeros((S, n_samples))
        self.norm = np.zeros((S, n_samples))
        self.acc = np.zeros(S, np.int64)
        self.state = np.zeros((1, K))

    def draw(self, it):
        M.sample_theta(12345, it, self.docs, self.B, self.G, self.Ginv, self.c, self.kappa, self.K, self.n_samples,
                       self.n_steps, self.eps, self.n_leap, self.floor, 0, self.state, self.out, self.score,
                       self.norm, self.acc)

    @property
    def transitions(self):
        return self.S * self.n_samples * self.n_steps


def part_theta(args, X, rows_out):
    rng = np.random.default_rng(1)
    S = min(args.theta_docs, X.shape[0])
    prob = ThetaProblem(X, K_SAM, np.sort(rng.choice(X.shape[0], size=S, replace=False)))
    for nt in (1, 2):
        numba.set_num_threads(nt)
        prob.draw(0)  # compile / warm
    rows = []
    for r in range(args.theta_repeats):
        for nt in ((1, 2) if r % 2 == 0 else (2, 1)):
            numba.set_num_threads(nt)
            l0 = load1()
            t, c = time.perf_counter(), time.process_time()
            for j in range(args.theta_calls):
                prob.draw(1 + r * args.theta_calls + j)
            wall, cpu = time.perf_counter() - t, time.process_time() - c
            n = prob.transitions * args.theta_calls
            rows.append({"threads": nt, "repeat": r, "doc_transitions": n, "wall_s": wall, "cpu_s": cpu,
                         "doc_transitions_per_s": n / wall, "per_cpu_s": n / cpu,
                         "cores_used": cpu / wall, "accept_rate": float(prob.acc.sum()) / prob.transitions,
                         "load_start": l0, "load_end": load1()})
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    df = pd.DataFrame(rows)
    summ = df.groupby("threads").agg(tput_median=("doc_transitions_per_s", "median"),
                                     tput_max=("doc_transitions_per_s", "max"),
                                     cpu_tput_median=("per_cpu_s", "median"),
                                     cores_used_median=("cores_used", "median"),
                                     accept_rate=("accept_rate", "mean"),
                                     load_min=("load_start", "min"), load_max=("load_end", "max")).reset_index()
    # per-repeat paired speed-up (the two thread counts ran back to back)
    piv = df.pivot(index="repeat", columns="threads", values="doc_transitions_per_s")
    cores = df.pivot(index="repeat", columns="threads", values="cores_used")
    sp_pair = piv[2] / piv[1]
    quiet = (cores[1] >= 0.9) & (cores[2] >= 1.8)  # pairs in which the 2-thread run actually got two cores
    summ["speedup_median_paired"] = [np.nan, float(sp_pair.median())]
    summ["speedup_max_paired"] = [np.nan, float(sp_pair.max())]
    summ["n_pairs"] = [np.nan, int(len(sp_pair))]
    summ["n_quiet_pairs"] = [np.nan, int(quiet.sum())]
    summ["speedup_median_quiet_pairs"] = [np.nan, float(sp_pair[quiet].median()) if quiet.any() else np.nan]
    eff = summ.set_index("threads")["cpu_tput_median"]
    summ["cpu_efficiency_2_vs_1"] = [np.nan, float(eff[2] / eff[1])]
    summ["target_1p7x"] = [np.nan, bool(sp_pair[quiet].median() >= 1.7) if quiet.any() else "not measurable (no quiet pair)"]
    rows_out["theta_raw"], rows_out["theta"] = df, summ


# ------------------------------------------------------------------------------------------ SGGMC iteration
def _blas(limit):
    """``threadpool_limits(1, "blas")`` for limit 1, a no-op context for "default" (OpenBLAS's own count)."""
    import contextlib

    from threadpoolctl import threadpool_limits

    return threadpool_limits(1, "blas") if limit == 1 else contextlib.nullcontext()


def part_iter(args, X, rows_out):
    rows = []
    kw = dict(n_components=K_SAM, batch_size=BATCH_SAM, max_iter=args.iters, evaluate_every=1, max_samples=5)
    configs = [(m, nt, bl) for m in ("sggmc", "gsgnht") for nt in (1, 2) for bl in ("default", 1)]
    for meth, nt, bl in configs:
        with _blas(bl):
            SphericalAdmixture(method=meth, n_jobs=nt, random_state=0, **{**kw, "max_iter": 2}).fit(X)  # warm
    for r in range(args.repeats):
        for meth, nt, bl in (configs if r % 2 == 0 else configs[::-1]):
            l0 = load1()
            with _blas(bl):
                est = SphericalAdmixture(method=meth, n_jobs=nt, random_state=r, **kw).fit(X)
            tr = est.trace_.sort_values("iteration")
            w = np.diff(tr["wall_time"].to_numpy())
            c = np.diff(tr["cpu_time"].to_numpy())
            rows.append({"method": meth, "threads": nt, "blas_threads": str(bl), "repeat": r, "iters": len(w),
                         "ms_per_iter_wall": 1e3 * float(np.median(w)), "ms_per_iter_cpu": 1e3 * float(np.median(c)),
                         "ms_per_iter_wall_mean": 1e3 * float(np.mean(w)),
                         "theta_accept_rate": est.theta_accept_rate_, "load_start": l0, "load_end": load1()})
        print(f"iter repeat {r} done, load {load1():.2f}", file=sys.stderr)
    df = pd.DataFrame(rows)
    summ = df.groupby(["method", "threads", "blas_threads"]).agg(
        wall_ms_median=("ms_per_iter_wall", "median"), wall_ms_min=("ms_per_iter_wall", "min"),
        cpu_ms_median=("ms_per_iter_cpu", "median"), cpu_ms_min=("ms_per_iter_cpu", "min"),
        theta_accept=("theta_accept_rate", "mean"),
        load_min=("load_start", "min"), load_max=("load_end", "max")).reset_index()
    rows_out["iter_raw"], rows_out["iter"] = df, summ
    rows_out["iter_parts"] = pd.concat([iteration_breakdown(X, args, bl) for bl in ("default", 1)], ignore_index=True)


def iteration_breakdown(X, args, blas):
    """One SGGMC outer iteration split into the library kernels it calls (inference/sam.py ``_sg_step``:
    summaries, pinv, theta draws, then the ABOBA step with the gradient of eq. 10 at the same topics), one
    Numba thread, CPU and wall clock, called in the iteration's order (the parts alternate as in a fit: the cost
    of a BLAS call depends on what ran before it), median over ``--breakdown-reps`` rounds; ``blas`` = OpenBLAS
    threads ("default" or 1)."""
    numba.set_num_threads(1)
    rng = np.random.default_rng(2)
    docs = np.sort(rng.choice(X.shape[0], size=BATCH_SAM, replace=False)).astype(np.int64)
    prob = ThetaProblem(X, K_SAM, docs)
    K, V = K_SAM, X.shape[1]
    beta, G, B = prob.beta, prob.G, prob.B
    grad = np.zeros(K * V)
    v = np.zeros(K * V)
    noise = np.zeros(K * V)
    key = make_key(0, 2)
    fill_normal(key, v)
    project_tangent(beta, v, V)
    sigma, kappa0 = 1e3, 1e3

    def prior():
        mb, r = M.prior_mean_vector(beta, K, V, prob.m, kappa0, sigma)
        a = float(bessel_ratio(r, d=V))
        grad.reshape(K, V)[:] -= (sigma * a / r) * mb[None, :]

    def ostep():
        fill_normal(key, noise)
        noise[:] = -1e-4 * grad + 1e-3 * noise
        project_tangent(beta, noise, V)
        v[:] += noise

    scale = 3e3 * X.shape[0] / BATCH_SAM
    parts = {
        "gram G = beta beta'": lambda: M.gram(beta, K, V, G),
        "doc_projections B (batch)": lambda: M.doc_projections(beta, K, V, prob.ip, prob.ix, prob.dt, docs, B),
        "pinv(G)": lambda: np.linalg.pinv(G, rcond=1e-10),
        "sample_theta (batch, 5 x 3 GMC)": lambda: prob.draw(7),
        "stored_scores": lambda: M.stored_scores(prob.out, B, G, K, prob.score, prob.norm),
        "grad_documents": lambda: M.grad_documents(beta, K, V, prob.ip, prob.ix, prob.dt, docs, prob.out, prob.score,
                                                   prob.norm, scale, grad),
        "prior gradient (bessel_ratio)": prior,
        "2 x geodesic_flow (eps/2)": lambda: (geodesic_flow(beta, v, 1e-6, V), geodesic_flow(beta, v, 1e-6, V)),
        "O step (fill_normal + project)": ostep,
    }
    ts = {name: [] for name in parts}
    l0 = load1()
    with _blas(blas):
        for f in parts.values():
            f()
        for _ in range(args.breakdown_reps):
            for name, f in parts.items():
                c, w = time.process_time(), time.perf_counter()
                f()
                ts[name].append((time.process_time() - c, time.perf_counter() - w))
    l1 = load1()
    rows = []
    for name, v in ts.items():
        a = np.array(v)
        rows.append({"blas_threads": str(blas), "part": name, "cpu_ms_median": 1e3 * float(np.median(a[:, 0])),
                     "cpu_ms_min": 1e3 * float(np.min(a[:, 0])), "wall_ms_median": 1e3 * float(np.median(a[:, 1])),
                     "load_start": l0, "load_end": l1})
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    df = pd.DataFrame(rows)
    # an iteration with one inner step computes the summaries once (the gradient reuses the theta draws' G, B and
    # scores) and calls stored_scores only from the second inner step on: it is timed but not in the sum
    counted = ~df["part"].eq("stored_scores")
    total = df.loc[counted, "cpu_ms_median"].sum()
    df["share_of_sum"] = np.where(counted, df["cpu_ms_median"] / total, np.nan)
    return df


# ------------------------------------------------------------------------------------------ memory
MEM_CHILD = textwrap.dedent('''
    import gc, json, os, sys, time, tracemalloc
    import numpy as np, scipy.sparse as sp
    from scalable_bayes.inference.sam import SphericalAdmixture
    path, n_iter, mode, threads, max_samples = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    def status(key):
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    X = sp.load_npz(path).tocsr()
    in_bytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    kw = dict(n_components=50, method="sggmc", batch_size=100, n_jobs=threads, random_state=0)
    SphericalAdmixture(max_iter=2, **kw).fit(X[:200])  # compile / load every kernel off the measurement
    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # reset VmHWM to the current RSS
        hwm_reset = True
    except OSError:
        hwm_reset = False
    rss0, hwm0 = status("VmRSS"), status("VmHWM")
    if mode == "tracemalloc":
        tracemalloc.start()
    t = time.perf_counter()
    est = SphericalAdmixture(max_iter=n_iter, max_samples=max_samples, **kw).fit(X)
    wall = time.perf_counter() - t
    out = {"mode": mode, "input_bytes": in_bytes, "nnz": int(X.nnz), "shape": list(X.shape),
           "indices_dtype": str(X.indices.dtype), "rss_before": rss0, "hwm_before": hwm0, "hwm_reset": hwm_reset,
           "hwm_after": status("VmHWM"), "fit_wall_s": wall,
           "samples_bytes": int(est.samples_.nbytes), "n_samples": int(est.samples_.shape[0])}
    if mode == "tracemalloc":
        cur, peak = tracemalloc.get_traced_memory()
        out.update(traced_peak=peak, traced_retained=cur)
        tracemalloc.stop()
    print(json.dumps(out))
''')


def part_memory(args, X, rows_out):
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "X.npz")
        sp.save_npz(path, X, compressed=False)
        for (n_iter, max_samples), mode in [(n, m) for n in args.mem_iters for m in ("rss", "tracemalloc")]:
            l0 = load1()
            p = subprocess.run([sys.executable, "-c", MEM_CHILD, path, str(n_iter), mode, "1", str(max_samples)],
                               capture_output=True, text=True, timeout=3600)
            if p.returncode != 0:
                print(f"memory child ({mode}) failed:\n{p.stderr[-3000:]}", file=sys.stderr)
                continue
            out = json.loads(p.stdout.strip().splitlines()[-1])
            rec = {"mode": mode, "n_iter": n_iter, "max_samples": max_samples, **{k: v for k, v in out.items() if k != "shape"},
                   "docs": out["shape"][0], "words": out["shape"][1], "load_start": l0, "load_end": load1()}
            if mode == "rss":
                rec["peak_bytes"] = out["hwm_after"] - out["rss_before"]
            else:
                rec["peak_bytes"] = out["traced_peak"]
            rec["peak_over_input"] = rec["peak_bytes"] / out["input_bytes"]
            rec["target_below_4x"] = rec["peak_over_input"] < 4.0
            rows.append(rec)
    rows_out["memory"] = pd.DataFrame(rows)


# ------------------------------------------------------------------------------------------ main
def _autogroup():
    """The scheduler group of this process: with autogroups on, CFS splits the cores evenly between groups
    (sessions), so a busy group of other users caps this process near one core whatever its thread count."""
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as f:
            on = f.read().strip() == "1"
        with open("/proc/self/autogroup") as f:
            return f"sched_autogroup {'on' if on else 'off'} ({f.read().strip()})"
    except OSError:
        return "sched_autogroup unknown"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parts", default="step,theta,iter,memory")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--steps", type=int, default=200_000, help="steps per chain of our samplers")
    ap.add_argument("--peer-steps", type=int, default=22_000, help="gradient evaluations per geoopt run")
    ap.add_argument("--peer-python", default=None,
                    help=f"python of a separate venv with torch + geoopt (default {DEFAULT_PEER} if it exists; 'none' skips)")
    ap.add_argument("--corpus", choices=("auto", "wiki", "synthetic"), default="auto")
    ap.add_argument("--synthetic-docs", type=int, default=2000)
    ap.add_argument("--theta-docs", type=int, default=1000)
    ap.add_argument("--theta-calls", type=int, default=2)
    ap.add_argument("--theta-repeats", type=int, default=15)
    ap.add_argument("--iters", type=int, default=30, help="iterations per SAM fit in part iter")
    ap.add_argument("--breakdown-reps", type=int, default=30)
    ap.add_argument("--mem-iters", type=lambda t: [tuple(int(u) for u in (v + ":50").split(":")[:2]) for v in t.split(",")],
                    default=[(20, 50), (100, 50), (100, 1)],
                    help="fits measured, N_ITER[:MAX_SAMPLES] comma-separated (default 20,100,100:1; the estimator's "
                         "defaults are max_iter 100, max_samples 50)")
    ap.add_argument("--out", default="results/benchmarks")
    args = ap.parse_args(argv)
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    res = {}
    print(f"start {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC, load {os.getloadavg()}, "
          f"NUMBA_NUM_THREADS={numba.config.NUMBA_NUM_THREADS}, {_autogroup()}", file=sys.stderr)
    if "step" in parts:
        part_step(args, res)
    X = None
    if any(p in parts for p in ("theta", "iter", "memory")):
        X, desc = load_corpus(args.corpus, args.synthetic_docs)
        X = sp.csr_matrix(X)
        X.sort_indices()
        print(f"SAM corpus: {desc}; CSR bytes {X.data.nbytes + X.indices.nbytes + X.indptr.nbytes:,}", file=sys.stderr)
        res["corpus"] = pd.DataFrame([{"corpus": desc, "docs": X.shape[0], "words": X.shape[1], "nnz": X.nnz,
                                       "csr_bytes": X.data.nbytes + X.indices.nbytes + X.indptr.nbytes}])
    if "theta" in parts:
        part_theta(args, X, res)
        print(f"threading layer: {numba.threading_layer()}", file=sys.stderr)
    if "iter" in parts:
        part_iter(args, X, res)
    if "memory" in parts:
        part_memory(args, X, res)
    os.makedirs(args.out, exist_ok=True)
    with pd.option_context("display.width", 250, "display.max_columns", 30, "display.precision", 3):
        for name, df in res.items():
            save_table(df, os.path.join(args.out, f"bench_sggmc_{name}.csv"))
            if not name.endswith("_raw"):
                print(f"\n== {name}\n{df.to_string(index=False)}")
    print(f"\nend {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC, load {os.getloadavg()}", file=sys.stderr)


if __name__ == "__main__":
    main()
