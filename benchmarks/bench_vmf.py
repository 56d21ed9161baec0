"""Benchmarks of the vMF toolkit. Ratios are measured in one run on this machine.

  .venv/bin/python benchmarks/bench_vmf.py [--corpus data/processed/news20] [--peer-python /tmp/peer_venv/bin/python]

1. closed-form kappa(r), phi(r) (the paper's psi~'_2, psi~_1) vs Newton/Halley + Perron CF (+ log-Bessel
   for phi) over 1e6 radii at d = 28,571, with the accuracy of each against the full-precision route;
2. one soft / hard EM iteration of MovMF on news20 tf-idf (k = 20), NMI after 100 iterations; the
   spherecluster 0.1.7 peer (run in a separate venv, if given) on the same matrix and initialisation
   seed policy (its own k-means++ init);
3. scipy.stats.vonmises_fisher: logpdf at d = 5,000 and its fit on real documents vs ours.
Writes benchmarks/results/vmf.md (git-ignored).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy
import scipy.sparse as sp

from scalable_bayes.corpora import load_corpus
from scalable_bayes.evaluation.clustering import nmi
from scalable_bayes.inference.vmf import MovMF
from scalable_bayes.special import (
    kappa_halley_perron,
    vmf_log_normalizer,
    vmf_log_partition_uniform,
    vmf_mean_to_kappa,
    vmf_negentropy,
)

ROOT = Path(__file__).resolve().parents[1]


def timed(f, repeat=3):
    """(median seconds, min seconds, last output) over ``repeat`` calls."""
    ts = []
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts)), min(ts), out


def bench_closed_form(n=1_000_000, d=28571, repeat=5):
    r = np.random.default_rng(0).uniform(0.01, 0.99, n)
    exact_k = np.asarray(vmf_mean_to_kappa(r[:20000], d=d, method="newton"))
    exact_phi = exact_k * r[:20000] - np.asarray(vmf_log_partition_uniform(exact_k, d=d))
    rows = []
    vmf_mean_to_kappa(r[:10], d=d, method="refined2")
    kappa_halley_perron(r[:10], d=d, n_steps=2, n_terms=20)
    vmf_negentropy(r[:10], d=d, method="refined")
    t_cf, m_cf, k_cf = timed(lambda: vmf_mean_to_kappa(r, d=d, method="refined2"), repeat)
    t_cfphi, m_cfphi, phi_cf = timed(lambda: vmf_negentropy(r, d=d, method="refined"), repeat)
    rows.append(("closed form psi~'_2 (kappa)", t_cf, m_cf, np.max(np.abs(k_cf[:20000] - exact_k) / exact_k)))
    rows.append(("closed form psi~_1 (phi)", t_cfphi, m_cfphi, np.max(np.abs(phi_cf[:20000] - exact_phi) / exact_phi)))
    # Newton route at matching accuracy: fewest CF terms whose error is not worse than the closed form's
    k_err_cf = rows[0][3]
    for terms in (5, 10, 15, 20, 30, 50):
        k_try = np.asarray(kappa_halley_perron(r[:20000], d=d, n_steps=2, n_terms=terms))
        if np.max(np.abs(k_try - exact_k) / exact_k) <= max(k_err_cf, 1e-15):
            break
    t_nr, m_nr, k_nr = timed(lambda: kappa_halley_perron(r, d=d, n_steps=2, n_terms=terms), repeat)
    rows.append((f"Halley-Perron 2 steps, {terms} CF terms (kappa)", t_nr, m_nr,
                 np.max(np.abs(k_nr[:20000] - exact_k) / exact_k)))
    t_full, m_full, k_full = timed(lambda: vmf_mean_to_kappa(r, d=d, method="newton"), max(1, repeat // 2))
    rows.append(("Halley-Perron to full precision (kappa)", t_full, m_full,
                 np.max(np.abs(k_full[:20000] - exact_k) / exact_k)))
    t_phi, m_phi, phi_nr = timed(lambda: k_nr * r - np.asarray(vmf_log_partition_uniform(k_nr, d=d)), repeat)
    rows.append((f"phi = kappa r - log-partition (given kappa; + the root above)", t_phi + t_nr, m_phi + m_nr,
                 np.max(np.abs(phi_nr[:20000] - exact_phi) / exact_phi)))
    return rows, {"kappa_speedup": t_nr / t_cf, "phi_speedup": (t_phi + t_nr) / t_cfphi, "terms": terms,
                  "kappa_speedup_vs_full": t_full / t_cf, "kappa_speedup_min": m_nr / m_cf,
                  "phi_speedup_min": (m_phi + m_nr) / m_cfphi}


PEER_SCRIPT = r"""
import sys, time, json, types, warnings
import numpy as np, scipy.sparse as sp, joblib
warnings.filterwarnings("ignore")
np.infty = np.inf  # removed in NumPy 2, used by spherecluster
# spherecluster 0.1.7 imports sklearn modules that no longer exist: shim them (no algorithmic change)
import sklearn.cluster._kmeans as km
from sklearn.utils import validation
shim = types.ModuleType("sklearn.cluster.k_means_")
shim._tolerance = km._tolerance
shim._check_sample_weight = validation._check_sample_weight
shim._labels_inertia = km._labels_inertia
def _no(*a, **k):
    raise NotImplementedError("init path not used by this benchmark")
shim._init_centroids = _no
shim._validate_center_shape = lambda X, n_centers, centers: None
sys.modules["sklearn.cluster.k_means_"] = shim
import sklearn.cluster
sys.modules["sklearn.cluster._k_means"] = sklearn.cluster._k_means = types.ModuleType("sklearn.cluster._k_means")
ext = types.ModuleType("sklearn.externals.joblib"); ext.Parallel = joblib.Parallel; ext.delayed = joblib.delayed
sys.modules["sklearn.externals.joblib"] = ext
if not hasattr(validation, "FLOAT_DTYPES"):
    validation.FLOAT_DTYPES = (np.float64, np.float32, np.float16)
from spherecluster import VonMisesFisherMixture
import spherecluster.von_mises_fisher_mixture as vmm
def _inertia_from_labels(X, centers, labels):  # the original breaks on sparse rows under NumPy 2; same value
    sims = np.asarray(X.multiply(centers[labels.astype(int)]).sum(axis=1)).ravel() if sp.issparse(X) else np.einsum("ij,ij->i", X, centers[labels.astype(int)])
    return float(np.sum(1 - sims))
vmm._inertia_from_labels = _inertia_from_labels
from sklearn.metrics import normalized_mutual_info_score
X = sp.load_npz(sys.argv[1]).tocsr(); y = np.load(sys.argv[2]); n_nmi = int(sys.argv[3])
out = {}
for posterior in ["soft", "hard"]:
    for iters in [1, 3]:
        np.random.seed(0)
        m = VonMisesFisherMixture(n_clusters=20, posterior_type=posterior, n_init=1, max_iter=iters, init="random-class", random_state=0, tol=0, verbose=False)
        t = time.perf_counter(); m.fit(X); out[f"{posterior}_{iters}"] = time.perf_counter() - t
    out[f"{posterior}_per_iter"] = (out[f"{posterior}_3"] - out[f"{posterior}_1"]) / 2
    if n_nmi == 0:
        continue
    np.random.seed(0)
    m = VonMisesFisherMixture(n_clusters=20, posterior_type=posterior, n_init=1, max_iter=n_nmi, init="random-class", random_state=0, verbose=False)
    m.fit(X); out[f"{posterior}_nmi"] = float(normalized_mutual_info_score(y, m.labels_))
print(json.dumps(out))
"""


def bench_em(corpus_dir, peer_python=None, n_iter_nmi=100, peer_nmi_iter=100, n_fits=3):
    c = load_corpus(corpus_dir)
    X, y = c.tfidf, c.labels
    rows = []
    info = {"n_docs": X.shape[0], "n_terms": X.shape[1], "nnz": int(X.nnz)}
    MovMF(20, max_iter=2, random_state=0).fit(X)  # compile / load numba caches
    for assign in ("soft", "hard"):
        # n_fits fits of 10 iterations each (the first iteration of each dropped): median and min
        its = np.concatenate([MovMF(20, assignment=assign, max_iter=10, random_state=0).fit(X).iter_times_[1:]
                              for _ in range(n_fits)])
        per_iter, per_iter_min = float(np.median(its)), float(np.min(its))
        full = MovMF(20, assignment=assign, max_iter=n_iter_nmi, random_state=0).fit(X)
        rows.append((f"MovMF {assign} (ours)", per_iter, per_iter_min, nmi(y, full.labels_)))
        info[f"ours_{assign}_per_iter"] = per_iter
        info[f"ours_{assign}_n_timed"] = int(its.size)
    if peer_python and Path(peer_python).exists():
        with tempfile.TemporaryDirectory() as td:
            xp, yp, sp_ = Path(td) / "X.npz", Path(td) / "y.npy", Path(td) / "peer.py"
            sp.save_npz(xp, X)
            np.save(yp, y)
            sp_.write_text(PEER_SCRIPT)
            res = subprocess.run([peer_python, str(sp_), str(xp), str(yp), str(peer_nmi_iter)], capture_output=True, text=True, timeout=3000)
            if res.returncode == 0:
                peer = json.loads(res.stdout.strip().splitlines()[-1])
                for assign in ("soft", "hard"):
                    nm = peer.get(f"{assign}_nmi", float("nan"))
                    rows.append((f"spherecluster 0.1.7 {assign} (one timing: (3 it - 1 it)/2)", peer[f"{assign}_per_iter"],
                                 peer[f"{assign}_per_iter"], nm))
                    info[f"peer_{assign}_per_iter"] = peer[f"{assign}_per_iter"]
            else:
                info["peer_error"] = res.stderr[-2000:]
    return rows, info


def bench_scipy(corpus_dir):
    """scipy.stats.vonmises_fisher at d = 5,000: logpdf overflow and fit on real documents."""
    from scipy.stats import vonmises_fisher

    rows = []
    d = 5000
    mu = np.zeros(d)
    mu[0] = 1.0
    x = mu.copy()
    for kappa in (10.0, 100.0, 1000.0, 5000.0):
        with np.errstate(all="ignore"):
            try:
                sp_val = float(vonmises_fisher(mu, kappa).logpdf(x))
            except Exception as e:  # noqa: BLE001
                sp_val = f"error: {type(e).__name__}"
        ours = float(vmf_log_normalizer(kappa, d=d) + kappa)
        rows.append((f"logpdf(mu) d={d} kappa={kappa:g}", sp_val, ours))
    c = load_corpus(corpus_dir)
    X = c.tfidf
    df = np.asarray((X > 0).sum(axis=0)).ravel()
    top = np.argsort(-df, kind="stable")[:d]
    Xs = X[:, top]
    keep = np.asarray(Xs.multiply(Xs).sum(axis=1)).ravel() > 0
    Xd = Xs[keep].toarray()
    Xd /= np.linalg.norm(Xd, axis=1)[:, None]
    Xd = Xd[:2000]
    with np.errstate(all="ignore"):
        try:
            _, k_scipy = vonmises_fisher.fit(Xd)
        except Exception as e:  # noqa: BLE001
            k_scipy = f"error: {type(e).__name__}"
    rbar = float(np.linalg.norm(Xd.mean(axis=0)))
    k_ours = float(vmf_mean_to_kappa(rbar, d=d, method="newton"))
    rows.append((f"fit kappa on {Xd.shape[0]} docs, d={d} (rbar={rbar:.4f})", k_scipy, k_ours))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=str(ROOT / "data/processed/news20"))
    ap.add_argument("--peer-python", default="/tmp/peer_venv/bin/python")
    ap.add_argument("--out", default=str(ROOT / "benchmarks/results/vmf.md"))
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5, help="timing repeats of the closed-form routes")
    ap.add_argument("--peer-nmi-iter", type=int, default=100,
                    help="EM iterations of the peer's NMI run (0: time the peer only; its 100-iteration soft run takes ~1 h here)")
    ap.add_argument("--parts", default="closed_form,em,scipy", help="comma-separated subset of closed_form,em,scipy")
    args = ap.parse_args(argv)
    lines = ["# vMF benchmarks", "", f"python {sys.version.split()[0]}, numpy {np.__version__}, scipy {scipy.__version__}, "
             f"cores {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}", ""]
    parts = set(args.parts.split(","))
    if "closed_form" in parts:
        rows, s = bench_closed_form(args.n, repeat=args.repeat)
        lines += [f"## Closed form vs root finding, {args.n:,} radii, d = 28,571 ({args.repeat} repeats)", "",
              "| route | median seconds | min seconds | max rel. error vs full precision |", "|---|---|---|---|"]
        lines += [f"| {a} | {b:.4f} | {m:.4f} | {c:.2e} |" for a, b, m, c in rows]
        lines += ["", f"kappa: closed form {s['kappa_speedup']:.1f}x faster (medians; {s['kappa_speedup_min']:.1f}x on mins) "
              f"than Halley-Perron with {s['terms']} terms ({s['kappa_speedup_vs_full']:.1f}x vs full precision); "
              f"phi: {s['phi_speedup']:.1f}x (medians; {s['phi_speedup_min']:.1f}x on mins)", ""]
        print("\n".join(lines))
    if Path(args.corpus).exists() and "em" in parts:
        rows, info = bench_em(args.corpus, args.peer_python, peer_nmi_iter=args.peer_nmi_iter)
        lines += [f"## EM iteration on {Path(args.corpus).name}: {info['n_docs']} docs x {info['n_terms']} terms, "
                  f"nnz {info['nnz']}, k = 20 (ours: {info['ours_soft_n_timed']} timed iterations each; "
                  f"load average {os.getloadavg()[0]:.1f})", "",
                  "| method | median s / iteration | min s / iteration | NMI after 100 iterations |", "|---|---|---|---|"]
        lines += [f"| {a} | {b:.4f} | {m:.4f} | {c:.4f} |" for a, b, m, c in rows]
        for assign in ("soft", "hard"):
            if f"peer_{assign}_per_iter" in info:
                lines.append(f"\n{assign}: ours {info[f'peer_{assign}_per_iter'] / info[f'ours_{assign}_per_iter']:.1f}x faster than spherecluster")
        if "peer_error" in info:
            lines += ["", "spherecluster peer failed:", "```", info["peer_error"], "```"]
        lines.append("")
    if Path(args.corpus).exists() and "scipy" in parts:
        rows = bench_scipy(args.corpus)
        lines += ["## scipy.stats.vonmises_fisher vs ours", "", "| quantity | scipy | ours |", "|---|---|---|"]
        lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    text = "\n".join(lines) + "\n"
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
