"""Runs of the SGNHT paper (Ding et al. 2014): config settings -> tidy tables.

Synthetic experiments (Sec. 3, Sec. 5.1, App. B, E): :func:`synthetic_runs` runs every method/setting
of one experiment for one seed and returns three tidy tables: ``summary`` (one row per method x setting:
scalar results + wall time), ``density`` (histogram vs exact density per bin) and ``traces`` (running
mean kinetic energy and thermostat at ~``n_trace`` checkpoints).

Machine-learning applications (Sec. 5.2, App. G): :func:`run_cell` runs one cell (a, eta) of a task's
grid (BNN, BPMF, semi-collapsed LDA), both methods (SGHMC, SGNHT), for one seed and returns ``summary``
(one row per method x a x eta x seed: validation and test metric of the sample-averaged predictive, mean
kinetic energy after burn-in, divergence flag, wall time, time per iteration) and ``trace`` (metric at each
evaluation checkpoint); :func:`merge_cells` concatenates a task's cells in grid order into the tables of
the whole grid, the same as :func:`run_task` (the whole grid in one call) returns.

The samplers, models and diagnostics are the library's (:mod:`scalable_bayes.samplers`,
:mod:`scalable_bayes.models`, :mod:`scalable_bayes.evaluation.mcmc`); the data choices are in
:mod:`.data`.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from scalable_bayes.evaluation import mcmc
from scalable_bayes.models import bnn as bnn_mod
from scalable_bayes.models import bpmf as bpmf_mod
from scalable_bayes.models import lda as lda_mod
from scalable_bayes.models import toy
from scalable_bayes.samplers import (
    DivergenceError,
    make_key,
    run_chain,
    sghmc,
    sghmc_reformulated,
    sgnht,
    sgnht_reformulated,
)

from . import data

logger = logging.getLogger(__name__)

SYNTHETIC_EXPERIMENTS = ("double_well", "known_variance", "normal_gamma")


def _trace_rows(res, n_trace, **labels):
    n = res.kinetic_energy.size
    m = min(n_trace, n) // 2
    steps = np.unique(np.concatenate([np.geomspace(1, n, m), np.linspace(1, n, m)]).astype(np.int64) - 1)
    ke_rm = mcmc.running_mean(res.kinetic_energy)
    xi_rm = mcmc.running_mean(res.thermostat)
    return pd.DataFrame({**{k: v for k, v in labels.items()}, "step": steps + 1, "ke_running_mean": ke_rm[steps],
                         "xi": res.thermostat[steps], "xi_running_mean": xi_rm[steps]})


def _density_rows(samples, edges, pdf, **labels):
    mids = 0.5 * (edges[1:] + edges[:-1])
    return pd.DataFrame({**labels, "bin_center": mids, "density": mcmc.histogram_density(samples, edges),
                         "true_density": pdf(mids)})


def iid_rmse_floor(dist, n_eff: float, seed, reps: int = 10) -> float:
    """Mean density RMSE (:func:`~scalable_bayes.evaluation.mcmc.density_rmse`, 100 bins over +/- 5 sd) of
    ``reps`` sets of ``round(n_eff)`` exact i.i.d. draws from the frozen scipy distribution ``dist``: the RMSE
    an exact sampler with the chain's effective sample size would have (the noise floor).
    ``seed``: an int or a sequence of ints for :func:`numpy.random.default_rng`."""
    n = int(round(float(n_eff)))
    if not n >= 2:
        raise ValueError(f"iid_rmse_floor: effective sample size must be >= 2, got {n_eff!r}")
    if reps < 1:
        raise ValueError(f"iid_rmse_floor: reps must be >= 1, got {reps!r}")
    rng = np.random.default_rng(seed)
    c, sd = dist.mean(), dist.std()
    return float(np.mean([mcmc.density_rmse(dist.rvs(size=n, random_state=rng), dist.pdf, c, sd) for _ in range(reps)]))


# ------------------------------------------------------------------ Fig. 1 / SFig. 4: double well
def run_double_well(seed: int, n_steps: int, step_size: float = 0.01, B: float = 1.0,
                    fixed_xis=(1.0, 10.0, 0.1), burnin: int = 10_000, n_bins: int = 130, n_trace: int = 2000):
    """Fixed-friction chains (xi in ``fixed_xis``, A = 0) and SGNHT (xi_0 = A = 0) on the double well.

    Gradient noise grad U~ h = grad U h + N(0, 2 B h); theta_0 = 0, p_0 ~ N(0, 1).
    """
    model = toy.double_well(B=B, h=step_size)
    edges = np.linspace(-7.0, 6.0, n_bins + 1)
    variants = [(f"xi={x:g}", sgnht(A=0.0, xi0=x, fixed_xi=True)) for x in fixed_xis]
    variants.append(("SGNHT", sgnht(A=0.0, xi0=0.0)))
    summ, dens, trac = [], [], []
    for label, alg in variants:
        res = run_chain(alg, model, [0.0], seed=seed, n_steps=n_steps, step_size=step_size, burnin=burnin)
        s = res.samples[:, 0]
        half = n_steps // 2
        summ.append({"variant": label, "seed": seed, "n_steps": n_steps, "h": step_size, "B": B,
                     "mean_ke": float(np.mean(res.kinetic_energy[burnin:])),
                     "mean_xi_second_half": float(np.mean(res.thermostat[half:])),
                     "tv": mcmc.total_variation(s, toy.double_well_density, edges),
                     "frac_right_well": float(np.mean(s > -0.3)), "wall_time_s": res.wall_time})
        dens.append(_density_rows(s, edges, toy.double_well_density, variant=label, seed=seed))
        trac.append(_trace_rows(res, n_trace, variant=label, seed=seed))
        logger.info("double well %s seed %d: KE %.3f TV %.3f", label, seed, summ[-1]["mean_ke"], summ[-1]["tv"])
    return pd.DataFrame(summ), pd.concat(dens, ignore_index=True), pd.concat(trac, ignore_index=True)


# ------------------------------------------------------------------ Fig. 2, SFig. 5, SFig. 6, STab. 1
def _iid_seed(seed, method, h, A, param):
    """Seed of the i.i.d. reference draws of one chain's marginal (:func:`iid_rmse_floor`)."""
    return [int(seed), ["SGHMC", "SGNHT"].index(method), int(round(h * 1e7)), int(round(A * 1e3)), int(param)]


def _grid_algs(A):
    return [("SGHMC", sghmc(A=A, B_hat=0.0)), ("SGNHT", sgnht(A=A))]


def run_known_variance(seed: int, data_seed: int, grid, n_steps: int, batch_size: int = 10, n_data: int = 100,
                       burnin: int = 10_000, n_trace: int = 2000):
    """SGHMC (B_hat = 0) and SGNHT on the known-variance Gaussian for each (h, A) in ``grid``; ``rmse_iid`` is the
    density RMSE of exact i.i.d. draws with the chain's effective sample size ``ess`` (draws / Sokal tau of mu;
    :func:`iid_rmse_floor`), the noise floor of ``rmse``."""
    x = data.gaussian_data(data_seed, n_data)
    model = toy.gaussian_known_variance(x)
    post = toy.gaussian_known_variance_posterior(x)
    c, sd = post.mean(), post.std()
    edges = np.linspace(c - 5 * sd, c + 5 * sd, 101)
    summ, dens, trac = [], [], []
    for h, A in grid:
        for method, alg in _grid_algs(A):
            res = run_chain(alg, model, [0.0], seed=seed, n_steps=n_steps, step_size=h, batch_size=batch_size, burnin=burnin)
            s = res.samples[:, 0]
            lab = dict(method=method, h=h, A=A, seed=seed)
            ess = s.size / max(mcmc.integrated_autocorrelation_time(s, method="sokal").tau, 1.0)
            summ.append({**lab, "n_steps": n_steps, "rmse": mcmc.density_rmse(s, post.pdf, c, sd),
                         "ess": ess, "rmse_iid": iid_rmse_floor(post, ess, _iid_seed(seed, method, h, A, 0)),
                         "mean_ke": float(np.mean(res.kinetic_energy[burnin:])),
                         "mean_xi": float(np.mean(res.thermostat[burnin:])),
                         "post_mean_err": float(s.mean() - c), "post_sd_ratio": float(s.std() / sd),
                         "wall_time_s": res.wall_time})
            dens.append(_density_rows(s, edges, post.pdf, **lab, param="mu"))
            trac.append(_trace_rows(res, n_trace, **lab))
    return pd.DataFrame(summ), pd.concat(dens, ignore_index=True), pd.concat(trac, ignore_index=True)


def run_normal_gamma(seed: int, data_seed: int, grid, n_steps: int, batch_size: int = 10, n_data: int = 100,
                     burnin: int = 10_000, n_trace: int = 2000):
    """SGHMC (B_hat = 0) and SGNHT on the Normal-Gamma posterior (mu, gamma) for each (h, A) in ``grid``.

    RMSE = mean of the two marginal density RMSEs (100 bins over +/- 5 sd; the paper gives no formula);
    tau = integrated autocorrelation time of mu + gamma in iterations: the full autocorrelation sum with
    Sokal's window (``tau``, ``tau_se``, ``tau_window``; :func:`scalable_bayes.evaluation.mcmc.integrated_autocorrelation_time`),
    batch means as a cross-check (``tau_bm``, ``tau_bm_se``) and, for comparison only, ArviZ's draws / ESS
    (``tau_geyer``), which stops at the first negative autocorrelation pair and overestimates tau for the
    underdamped (oscillating) chains at small A. Noise floor: ``rmse_iid`` is the RMSE of
    exact i.i.d. draws with the chain's effective sample size (per marginal, ``ess_mu`` / ``ess_gamma`` = draws /
    Sokal tau of that marginal; :func:`iid_rmse_floor`), averaged like ``rmse``.
    """
    x = data.gaussian_data(data_seed, n_data)
    model = toy.normal_gamma(x)
    post = toy.normal_gamma_posterior(x)
    summ, dens, trac = [], [], []
    for h, A in grid:
        for method, alg in _grid_algs(A):
            lab = dict(method=method, h=h, A=A, seed=seed)
            try:
                res = run_chain(alg, model, [0.0, 1.0], seed=seed, n_steps=n_steps, step_size=h, batch_size=batch_size,
                                burnin=burnin)
            except DivergenceError as err:  # e.g. SGHMC (B-hat = 0) at h = 0.01, A = 1 with N = 1000: recorded, not fatal
                logger.warning("%s", err)
                summ.append({**lab, "n_steps": n_steps, "n_data": n_data, "batch_size": batch_size, "diverged": True,
                             "rmse": np.nan, "tau": np.nan, "tau_se": np.nan, "tau_reliable": False})
                continue
            rm, floor, ess = {}, {}, {}
            for j, par in enumerate(["mu", "gamma"]):
                dist = post[par]
                c, sd = dist.mean(), dist.std()
                rm[par] = mcmc.density_rmse(res.samples[:, j], dist.pdf, c, sd)
                ess[par] = res.samples.shape[0] / max(mcmc.integrated_autocorrelation_time(res.samples[:, j]).tau, 1.0)
                floor[par] = iid_rmse_floor(dist, ess[par], _iid_seed(seed, method, h, A, j))
                edges = np.linspace(c - 5 * sd, c + 5 * sd, 101)
                dens.append(_density_rows(res.samples[:, j], edges, dist.pdf, **lab, param=par))
            obs = res.samples[:, 0] + res.samples[:, 1]
            sk = mcmc.integrated_autocorrelation_time(obs, method="sokal")
            bm = mcmc.integrated_autocorrelation_time(obs, method="batch_means")
            summ.append({**lab, "n_steps": n_steps, "n_data": n_data, "batch_size": batch_size, "diverged": False,
                         "rmse": 0.5 * (rm["mu"] + rm["gamma"]), "rmse_mu": rm["mu"],
                         "rmse_gamma": rm["gamma"], "rmse_iid": 0.5 * (floor["mu"] + floor["gamma"]),
                         "rmse_mu_iid": floor["mu"], "rmse_gamma_iid": floor["gamma"], "ess_mu": ess["mu"],
                         "ess_gamma": ess["gamma"], "tau": sk.tau, "tau_se": sk.se, "tau_window": sk.window,
                         "tau_reliable": sk.reliable,
                         "tau_bm": bm.tau, "tau_bm_se": bm.se, "tau_geyer": obs.size / mcmc.ess(obs),
                         "mean_ke": float(np.mean(res.kinetic_energy[burnin:])),
                         "mean_xi": float(np.mean(res.thermostat[burnin:])), "wall_time_s": res.wall_time})
            trac.append(_trace_rows(res, n_trace, **lab))
    return pd.DataFrame(summ), pd.concat(dens, ignore_index=True), pd.concat(trac, ignore_index=True)


def tau_study_runs(seed: int, n_data: int, batch_size: int, settings: dict) -> pd.DataFrame:
    """One job of rule ``sgnht_tau_study_runs`` (the decisive experiment for Fig. 2 panel 4 / STab1):
    the Normal-Gamma (h, A) grid for one chain seed at data size ``n_data`` and minibatch ``batch_size``;
    ``settings`` is the ``sgnht.tau_study`` block (n_steps, burnin, step_sizes, frictions) plus ``data_seed``.
    Returns the summary table of :func:`run_normal_gamma` (RMSE and the three tau estimates)."""
    grid = [(float(h), float(A)) for h in settings["step_sizes"] for A in settings["frictions"]]
    return run_normal_gamma(seed, settings["data_seed"], grid, settings["n_steps"], batch_size, n_data,
                            settings["burnin"], n_trace=4)[0]


def synthetic_runs(experiment: str, seed: int, settings: dict):
    """One job of rule ``sgnht_synthetic_runs``: (summary, density, traces) of ``experiment`` for one seed.

    ``settings``: ``{"double_well": {...}}`` for the double well; ``{"gaussian": {...}, "data_seed": int}``
    for ``known_variance`` and ``normal_gamma`` (whose (h, A) grid runs inside the job).
    """
    if experiment == "double_well":
        dw = settings["double_well"]
        return run_double_well(seed, dw["n_steps"], dw["step_size"], dw["B"], tuple(dw["fixed_xi"]), dw["burnin"])
    if experiment not in SYNTHETIC_EXPERIMENTS:
        raise ValueError(f"unknown SGNHT synthetic experiment {experiment!r}; choose one of {SYNTHETIC_EXPERIMENTS}")
    g = settings["gaussian"]
    grid = [(float(h), float(A)) for h in g["step_sizes"] for A in g["frictions"]]
    run = run_known_variance if experiment == "known_variance" else run_normal_gamma
    return run(seed, settings["data_seed"], grid, g["n_steps"], g["batch_size"], g["n_data"], g["burnin"])


# ------------------------------------------------------------------ Fig. 3, STab. 2, STab. 3: ML applications
# Training-set size of the paper's data set per task, in the unit the log-posterior gradient scales with.
# The stochastic gradient of the log posterior is (N / n) * sum over the minibatch, so the update
# u <- (1 - a) u - eta * grad keeps the paper's per-step drift and gradient noise when eta * N is kept:
# ``eta_scale: auto`` multiplies the paper's eta grid by N_paper / N_ours (README.md, "step sizes").


def eta_scale(task: str, settings: dict, n_train: int) -> float:
    """Factor applied to the configured eta grid: a number, or ``"auto"`` = N_paper / N_train."""
    v = settings.get("eta_scale", 1.0)
    if v == "auto":
        return data.PAPER_TRAIN_SIZE[task][0] / float(n_train)
    v = float(v)
    if not v > 0:
        raise ValueError(f"sgnht.ml.{task}.eta_scale must be > 0 or 'auto', got {v!r}")
    return v


def _algorithms(a):
    return [("SGHMC", sghmc_reformulated(a=a)), ("SGNHT", sgnht_reformulated(a=a))]


def _prepare(task, s, inputs, seed):
    """Build (make_model(seed), predict, score, n_train) for a task; n_train in data.PAPER_TRAIN_SIZE's unit.

    The MNIST and ratings splits take seed 0 for every chain (plus ``s["seed_offset"]`` in a replication)."""
    split_seed = 0 + int(s.get("seed_offset", 0))
    if task == "bnn":
        d = np.load(inputs["mnist"])
        (Xtr, ytr), (Xva, yva), (Xte, yte) = data.split_mnist(d["images"], d["labels"], s["n_train"], s["n_val"],
                                                               seed=split_seed)

        def make(chain_seed):
            return bnn_mod.BNN(Xtr, ytr, hidden=s["hidden"], seed=chain_seed)

        def predict(m):
            return lambda th: (m.predict_proba(th, Xva), m.predict_proba(th, Xte))

        def score(pv, pt):
            return 100.0 * np.mean(pv.argmax(1) != yva), 100.0 * np.mean(pt.argmax(1) != yte)

        return make, predict, score, len(ytr)
    if task == "bpmf":
        df = pd.read_parquet(inputs["ratings"])
        tr, va, te = data.split_ratings(df, seed=split_seed)
        nu, ni = int(df["user"].max()) + 1, int(df["item"].max()) + 1

        def make(chain_seed):
            return bpmf_mod.BPMF(tr["user"].values, tr["item"].values, tr["rating"].values, nu, ni, rank=s["rank"],
                                 seed=chain_seed)

        def predict(m):
            return lambda th: (m.predict(th, va["user"].values, va["item"].values),
                               m.predict(th, te["user"].values, te["item"].values))

        def score(pv, pt):
            return (float(np.sqrt(np.mean((pv - va["rating"].values) ** 2))),
                    float(np.sqrt(np.mean((pt - te["rating"].values) ** 2))))

        return make, predict, score, len(tr)
    if task == "lda":
        from scalable_bayes.corpora import load_corpus

        train, val, test = data.split_lda_corpus(load_corpus(inputs["corpus_dir"]), s["max_train_docs"],
                                                 s["max_test_docs"])
        sets = []
        for part in (val, test):
            ptr, words = lda_mod.tokens_from_counts(part)
            sets.append(lda_mod.split_halves(ptr, words))

        def make(chain_seed):
            return lda_mod.SemiCollapsedLDA(train, n_topics=s["n_topics"], sweeps=s["gibbs_sweeps"])

        def predict(m):
            key = make_key(10_000 + seed)

            def f(th):
                pi = m.topics(th)
                outs = []
                for optr, ow, hptr, hw in sets:
                    out = np.empty(hw.shape[0])
                    lda_mod.completion_probs(pi, optr, ow, hptr, hw, m.alpha, 20, key, out)
                    outs.append(out)
                return outs[0], outs[1]

            return f

        def score(pv, pt):
            return float(np.exp(-np.mean(np.log(pv)))), float(np.exp(-np.mean(np.log(pt))))

        return make, predict, score, int(train.sum())
    raise ValueError(f"unknown SGNHT ML task {task!r}; choose bnn, bpmf or lda")


def run_task(task: str, seed: int, settings: dict, inputs: dict, blas_threads: int = 1):
    """The whole (method x a x eta) grid of ``task`` for chain seed ``seed``: every cell of
    :func:`run_cell`, a-major and eta-minor as in the settings' lists, concatenated by :func:`merge_cells`.

    ``settings`` is the task's own block (``sgnht.ml.<task>``: iterations, burn-in, minibatch, the a and
    eta grids, eta_scale, model sizes); ``inputs`` maps ``mnist`` / ``ratings`` / ``corpus_dir`` to the
    processed data. Returns (summary, trace). The pipeline runs the cells as jobs of their own (rule
    ``sgnht_ml_runs``) and merges them (rule ``sgnht_ml_merge``); a cell's chains do not depend on the
    cell's place in the grid, so both give the same tables.
    """
    _check_task(task)
    cells = [run_cell(task, seed, cell_settings(settings, a, eta), inputs, blas_threads)
             for a in settings["a"] for eta in settings["eta"]]
    return merge_cells([c[0] for c in cells], [c[1] for c in cells])


def _check_task(task):
    if task not in data.PAPER_TRAIN_SIZE:
        raise ValueError(f"unknown SGNHT ML task {task!r}; choose bnn, bpmf or lda")


def cell_settings(settings: dict, a: float, eta: float) -> dict:
    """Settings of one grid cell: the task block without its a and eta lists, plus the cell's a and eta."""
    return {**{k: v for k, v in settings.items() if k not in ("a", "eta")}, "a": float(a), "eta": float(eta)}


def run_cell(task: str, seed: int, settings: dict, inputs: dict, blas_threads: int = 1):
    """One job of rule ``sgnht_ml_runs``: the cell (``settings["a"]``, ``settings["eta"]``, scalars) of
    ``task``'s grid, SGHMC and SGNHT, for chain seed ``seed``.

    ``settings`` is :func:`cell_settings` of the task's block; ``inputs`` as in :func:`run_task`. Every chain
    starts from ``seed`` alone (model, initial position, sampler key), not from the cell's place in the grid.
    Returns (summary, trace) of the cell. BLAS is limited to ``blas_threads`` (small matrix products are
    20-70x slower with threaded OpenBLAS on a busy 2-core machine).
    """
    from threadpoolctl import threadpool_limits

    _check_task(task)
    with threadpool_limits(limits=blas_threads, user_api="blas"):
        return _run_cell(task, seed, settings, inputs)


def merge_cells(summaries, traces):
    """Rule ``sgnht_ml_merge``: the cells' (summary, trace) tables, in the order given (the grid's, a-major),
    concatenated into the tables of the whole grid. Cells without trace rows add none."""
    summary = pd.concat(list(summaries), ignore_index=True)
    traces = [t for t in traces if len(t)]
    trace = pd.concat(traces, ignore_index=True) if traces else pd.DataFrame([], columns=TRACE_COLUMNS)
    return summary, trace[TRACE_COLUMNS]


class TracedPredictiveAverage(mcmc.PredictiveAverage):
    """:class:`~scalable_bayes.evaluation.mcmc.PredictiveAverage` that also logs, at every checkpoint from the
    first on (burn-in included), the test metric of the current sample alone and the thermostat (alpha of
    Algorithm 2, App. F; SGHMC's is the constant a) and kinetic energy u'u / (2 n eta): the traces that show
    whether the error curve has flattened and the thermostat moved, to see whether the error curve has flattened and the thermostat moved. ``single`` collects
    ``(step, single-sample validation metric, single-sample test metric, alpha, kinetic energy)``."""

    def __init__(self, burnin: int, predict, score, eta: float):
        super().__init__(burnin, predict, score)
        self.eta = float(eta)
        self.single = []

    def __call__(self, step, state):
        preds = self.predict(state.position)
        u = state.momentum
        self.single.append((step, *self.score(*preds), float(state.thermostat[0]), float(u @ u) / (2.0 * u.size * self.eta)))
        if step <= self.burnin:
            return None
        self.sums = list(preds) if self.sums is None else [s + p for s, p in zip(self.sums, preds)]
        self.n += 1
        scores = self.score(*[s / self.n for s in self.sums])
        self.rows.append((step, *scores))
        return scores[-1]


def _run_cell(task, seed, s, inputs):
    make, predict, score, n_train = _prepare(task, s, inputs, seed)
    scale = eta_scale(task, s, n_train)
    logger.info("%s: %d %s; eta (paper units) x %.4g", task, n_train, data.PAPER_TRAIN_SIZE[task][1].split(" (")[0], scale)
    summ, trace = [], []
    a, eta = float(s["a"]), float(s["eta"])
    for method, alg in _algorithms(a):
        m = make(seed)
        cb = TracedPredictiveAverage(s["burnin"], predict(m), score, float(eta) * scale)
        theta0 = m.init_position(seed)
        diverged = False
        ke_mean, wall = np.nan, np.nan
        try:
            res = run_chain(alg, m.model(), theta0, seed=seed, n_steps=s["n_iter"], step_size=float(eta) * scale,
                            batch_size=s["batch_size"], burnin=s["n_iter"] - 1, thin=1,
                            checkpoint_every=s["eval_every"], callback=cb)
            ke_mean = float(np.mean(res.kinetic_energy[s["burnin"]:]))
            wall = res.wall_time
        except DivergenceError as err:
            logger.warning("%s", err)
            diverged = True
        ok = not diverged and cb.n > 0 and np.isfinite(cb.rows[-1][2])
        val = cb.rows[-1][1] if ok else np.nan
        test = cb.rows[-1][2] if ok else np.nan
        summ.append({"task": task, "method": method, "a": float(a), "eta": float(eta), "seed": seed,
                     "eta_used": float(eta) * scale, "n_train": n_train,
                     "val_metric": val, "metric": test, "mean_ke": ke_mean, "diverged": diverged or not ok,
                     "n_iter": s["n_iter"], "wall_time_s": wall,
                     "s_per_iter": wall / s["n_iter"] if np.isfinite(wall) else np.nan})
        avg = {row[0]: row[1:] for row in cb.rows}
        for step, v1, t1, alpha, ke in cb.single:
            v, t = avg.get(step, (np.nan, np.nan))
            trace.append({"task": task, "method": method, "a": float(a), "eta": float(eta), "seed": seed,
                          "step": step, "val_metric": v, "metric": t, "val_metric_sample": v1,
                          "metric_sample": t1, "alpha": alpha, "ke": ke})
        logger.info("%s %s a=%g eta=%g seed %d: test %s, KE %.3f, diverged %s", task, method, a, eta, seed,
                    test, ke_mean, diverged)
    return pd.DataFrame(summ), pd.DataFrame(trace, columns=TRACE_COLUMNS)


# trace.parquet of an ML cell (and of the merged grid): val_metric / metric = the running sample-averaged predictive's (NaN during
# burn-in), *_sample = the current sample's alone, alpha = the thermostat, ke = the kinetic energy.
TRACE_COLUMNS = ["task", "method", "a", "eta", "seed", "step", "val_metric", "metric", "val_metric_sample",
                 "metric_sample", "alpha", "ke"]
