"""The first call of every public entry point, cold and warm: what a user waits for before a result.

* **cold**: a fresh process with empty compile caches (``NUMBA_CACHE_DIR`` and ``SCALABLE_BAYES_CACHE`` point
  to a new directory): the first call compiles every kernel it needs.
* **warm**: a second fresh process on the caches the cold one filled: the first call loads machine code.
* **again**: the same call repeated in the warm process (no compilation, no loading).

Imports are measured apart: ``import scalable_bayes`` and the entry point's own imports and set-up (every line of
its code but the last; scikit-learn's import, ~1.5 s, is among them for the estimators). Each entry point runs a
small problem, so the times are compile and load overheads, not computation. Run ``python benchmarks/bench_first_calls.py [--only NAME ...]``; it prints
a Markdown table (the docs' first-call table is this output; wall times) and, on stderr, each cold call's process
CPU time too (the compilation's own cost, which a loaded machine does not inflate).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

SETUP = {
    "lda": """
        import numpy as np, scipy.sparse as sp
        rng = np.random.default_rng(0)
        X = sp.csr_matrix(rng.poisson(0.3, size=(200, 300)))
    """,
    "sphere": """
        import numpy as np
        rng = np.random.default_rng(0)
        X = rng.standard_normal((300, 20)); X /= np.linalg.norm(X, axis=1, keepdims=True)
    """,
    "gauss": """
        import numpy as np
        from scalable_bayes import models, samplers
        x = np.random.default_rng(0).normal(1.0, 1.0, size=1000)
        model = models.gaussian_known_variance(x)
    """,
}

# name -> (setup key, the call)
ENTRY_POINTS = {
    "ESCA.fit": ("lda", "from scalable_bayes.inference.lda import ESCA\nESCA(n_components=10, max_iter=5).fit(X)"),
    "CollapsedGibbs.fit": ("lda", "from scalable_bayes.inference.lda import CollapsedGibbs\n"
                                  "CollapsedGibbs(n_components=10, max_iter=5).fit(X)"),
    "CVB0.fit": ("lda", "from scalable_bayes.inference.lda import CVB0\nCVB0(n_components=10, max_iter=5).fit(X)"),
    "MovMF.fit": ("sphere", "from scalable_bayes.inference.vmf import MovMF\nMovMF(n_components=3).fit(X)"),
    "BregmanVMF.fit": ("sphere", "from scalable_bayes.inference.vmf import BregmanVMF\n"
                                 "BregmanVMF(n_components=3).fit(X)"),
    "run_chain(sgld)": ("gauss", "samplers.run_chain(samplers.sgld(), model, [0.0], seed=0, n_steps=1000, "
                                 "step_size=1e-4, batch_size=10, progress=False)"),
    "run_chain(sgnht)": ("gauss", "samplers.run_chain(samplers.sgnht(), model, [0.0], seed=0, n_steps=1000, "
                                  "step_size=1e-4, batch_size=10, progress=False)"),
    "run_chain(scir)": ("gauss", "from scalable_bayes.models import dirichlet_categorical\n"
                                 "m = dirichlet_categorical([5, 0, 3], 0.5)\n"
                                 "samplers.run_chain(samplers.scir(), m, np.ones(3), seed=0, n_steps=1000, "
                                 "step_size=0.1, batch_size=5, progress=False)"),
    "run_chain(logistic)": ("gauss", "X, y, _ = models.synthetic_logistic_data(200, 5, seed=0)\n"
                                     "m = models.logistic_regression(X, y)\n"
                                     "samplers.run_chain(samplers.sgnht(), m, np.zeros(5), seed=0, n_steps=1000, "
                                     "step_size=1e-3, batch_size=20, progress=False)"),
    "run_chain(scir, SimplexLDA)": ("lda", "from scalable_bayes import samplers\n"
                                           "from scalable_bayes.models.lda_simplex import SimplexLDA\n"
                                           "lda = SimplexLDA(X, 20)\n"
                                           "samplers.run_chain(samplers.scir(), lda.model(), lda.init_position(0), "
                                           "seed=0, n_steps=20, step_size=0.1, batch_size=10, progress=False)"),
    "run_chain(sggmc, vmf)": ("gauss", "m = models.vmf(np.eye(5)[0], 10.0)\n"
                                       "samplers.run_chain(samplers.sggmc(C=1.0), m, np.eye(5)[1], seed=0, n_steps=1000, "
                                       "step_size=0.01, progress=False)"),
    "SphericalAdmixture.fit": ("sphere", "from scalable_bayes.inference.sam import SphericalAdmixture\n"
                                         "SphericalAdmixture(n_components=3, max_iter=5, batch_size=50, "
                                         "random_state=0).fit(X)"),
    "VonMisesFisher.rvs": ("sphere", "from scalable_bayes.distributions import VonMisesFisher\n"
                                     "VonMisesFisher(np.eye(20)[0], 50.0).rvs(100, random_state=0)"),
    "vmf_mean_to_kappa": ("sphere", "from scalable_bayes.special import vmf_mean_to_kappa\n"
                                    "vmf_mean_to_kappa(np.linspace(0, 0.99, 50), d=20)"),
}

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import scalable_bayes
t_import = time.perf_counter() - t0
{setup}
t1 = time.perf_counter()
{prepare}
t_prepare = time.perf_counter() - t1
t1, c1 = time.perf_counter(), time.process_time()
{call}
t_first, c_first = time.perf_counter() - t1, time.process_time() - c1
t2 = time.perf_counter()
{call}
t_again = time.perf_counter() - t2
print(json.dumps({{"import": t_import, "prepare": t_prepare, "first": t_first, "first_cpu": c_first, "again": t_again}}))
"""


def measure(name: str, cache: Path) -> dict:
    setup_key, lines = ENTRY_POINTS[name]
    *prepare, call = lines.split("\n")  # the entry point's imports (scikit-learn's ~1.5 s among them) apart
    code = CHILD.format(setup=textwrap.dedent(SETUP[setup_key]), prepare="\n".join(prepare) or "pass", call=call)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache / "numba"), "SCALABLE_BAYES_CACHE": str(cache / "sb")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"{name} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=None, help="entry points to measure (default: all)")
    a = ap.parse_args(argv)
    names = a.only or list(ENTRY_POINTS)
    rows = []
    for name in names:
        with tempfile.TemporaryDirectory() as tmp:
            cold = measure(name, Path(tmp))
            warm = measure(name, Path(tmp))
        rows.append((name, cold["import"] + cold["prepare"], cold["first"], warm["import"] + warm["prepare"],
                     warm["first"], warm["again"]))
        print(f"{name}: cold {cold['first']:.2f} s (CPU {cold['first_cpu']:.2f} s), warm {warm['first']:.2f} s, "
              f"again {warm['again']:.3f} s", file=sys.stderr, flush=True)
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")
    print("| entry point | imports, cold (s) | first call, cold (s) | imports, warm (s) | first call, warm (s) | "
          "second call (s) |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| `{r[0]}` | {r[1]:.2f} | {r[2]:.2f} | {r[3]:.2f} | {r[4]:.2f} | {r[5]:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
