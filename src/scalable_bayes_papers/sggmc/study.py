"""One-off study behind Fig. 5's "Deciding experiment" (README.md beside this file): why VI / StoVI end below
SGGMC / gSGNHT in log-perplexity on 20News-different. Not part of the pipeline; nothing runs at import.

Experiments (``python -m scalable_bayes_papers.sggmc.study <experiment>``; one thread each):

* ``averaging`` -- 20News-different, the paper's hyper-parameters: VI and SGGMC for ``--seconds`` each. SGGMC's
  topics are scored as (i) the last sample (what ``runs.fig5_runs`` reported before commit 793af05: with a
  time budget the estimator's default burn-in n_iter // 2 (now max_iter // 2) = 5e8 was never reached, so no sample was recorded), (ii) the average over the samples kept after
  ``--burn-in`` iterations (inside the log, the estimator's ``log_perplexity``), (iii) the normalised mean
  of those samples as a point estimate; VI by its point estimate. Then SGGMC (minibatch and full batch) is
  started AT VI's final topics for ``--seconds / 2``: if it drifts up to its own level, the sampler's
  stationary distribution (at these settings) scores worse than VI's point, whatever the budget.
* ``tuning`` -- SGGMC on 20News-different for ``--seconds`` per setting: gamma x 0.1, 0.3, 1 (App. E's
  eps = sqrt(gamma / D)), rho 0.01 and 1, n_theta_samples 20, theta_steps 10.
* ``drift`` -- chains started at VI's topics (after ``--seconds`` of VI) for ``--seconds / 2``: full-batch SGGMC
  with finer theta chains (theta_steps 10, theta step x 0.3), minibatch SGGMC with gamma x 0.1 and with the
  finer theta chains: whether the drift away from VI's topics follows the minibatch noise or the theta chains.
* ``matched`` -- VI and SGGMC with gamma x 0.1 for ``--seconds`` each, scored with 50, 500 and 50 x M prior
  draws: the point estimate and the M-sample average compared with as many terms inside the log.
* ``converged`` -- the pipeline's Fig. 5 settings (gamma = 0.05 / kappa for the SG methods, samples kept from half
  the budget, ``--seconds`` of CPU time per run) for VI, StoVI, SGGMC, gSGNHT, SGGMC-full and GMC-bGibbs on
  ``--corpus`` (20News-different: all training documents; Wikipedia: the quick subset of 2,000), each final
  state scored by the paper's prior-draw estimate (50 and 500 draws) and by importance sampling
  (``log_perplexity(estimator="importance")``, 100 and 400 draws per document and topic sample: converged when
  the two agree within their errors), over at most ``--is-samples`` kept samples. ``--gamma-scale`` multiplies
  the SG methods' learning rate (e.g. full batch with larger steps: ``--methods SGGMC-full --gamma-scale 10``).
* ``synthetic`` -- a corpus drawn from SAM itself (``models.sam.sample_sam_corpus``) at the paper's
  concentrations: every method for ``--seconds``, scored against the true topics' log-perplexity, and the
  mean cosine of the recovered topics to the true ones after matching (Hungarian on the cosines).

Every result is one JSON line, logged at INFO (``main`` logs to stderr) and appended to ``--out`` if given.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time

import numpy as np

PAPER_20NEWS = dict(n_components=20, kappa=3e4, sigma=1e4, kappa0=1e4, alpha=10.0)
BATCH = 50

logger = logging.getLogger(__name__)


def _emit(rec: dict, out):
    line = json.dumps(rec)
    logger.info("%s", line)
    if out:
        with open(out, "a") as fh:
            fh.write(line + "\n")


def _estimator(method, seconds, batch, start=None, **kw):
    """A SphericalAdmixture with the paper's 20News hyper-parameters (overridable), one thread, a time budget;
    ``start`` (K x V unit rows): the chain starts there instead of the estimator's random start."""
    from scalable_bayes.inference.sam import SphericalAdmixture

    class _Started(SphericalAdmixture):
        def _init_state(self, X):  # the estimator's state, then the topics replaced by ``start``
            super()._init_state(X)
            if start is not None:
                self._beta[:] = np.asarray(start, dtype=np.float64).ravel()
                if hasattr(self, "_v"):  # keep the momentum tangent at the new point
                    K, V = start.shape
                    b, v = self._beta.reshape(K, V), self._v.reshape(K, V)
                    v -= (v * b).sum(axis=1, keepdims=True) * b

    params = dict(PAPER_20NEWS, method=method, batch_size=batch, max_iter=10**9, max_time=seconds, n_jobs=1,
                  random_state=0, evaluate_every=0, n_prior_draws=50)
    params.update(kw)
    return _Started(**params)


def _scores(est, X_test, label, extra=None, draws=50):
    """Log-perplexity (and its MC standard error) of the last sample, the sample average and the normalised
    sample mean as a point estimate."""
    import copy

    rec = dict(label=label, iterations=int(est.n_iter_), wall=round(float(est.trace_["wall_time"].iloc[-1]), 1),
               n_samples=int(est.samples_.shape[0]))
    lp, se = est.log_perplexity(X_test, draws, return_se=True, point_estimate=True)
    rec.update(last=round(lp, 1), last_se=round(se, 1))
    if est.samples_.shape[0] > 1:
        lp, se = est.log_perplexity(X_test, draws, return_se=True)
        rec.update(sample_avg=round(lp, 1), sample_avg_se=round(se, 1))
        mean = est.samples_.mean(axis=0)
        e2 = copy.copy(est)
        e2.components_ = mean / np.linalg.norm(mean, axis=1, keepdims=True)
        lp, se = e2.log_perplexity(X_test, draws, return_se=True, point_estimate=True)
        rec.update(mean_point=round(lp, 1), mean_point_se=round(se, 1))
    if hasattr(est, "accept_rate_") and np.isfinite(getattr(est, "theta_accept_rate_", np.nan)):
        rec["theta_accept"] = round(float(est.theta_accept_rate_), 3)
    rec.update(extra or {})
    return rec


def averaging(seconds, burn_in, out):
    X, Xt, _, _ = load_corpus_split("news20_different")
    t0 = time.time()
    vi = _estimator("vi", seconds, None).fit(X, X_test=Xt)
    _emit(_scores(vi, Xt, "VI"), out)
    sg = _estimator("sggmc", seconds, BATCH, burn_in=burn_in).fit(X, X_test=Xt)
    _emit(_scores(sg, Xt, "SGGMC"), out)
    # the prior-draw estimator of log pi(v_d | beta) is biased low and its bias shrinks with the number of terms
    # (draws x topic samples): score VI and SGGMC's last sample with more draws, and VI with as many terms as
    # SGGMC's sample average has (50 x M)
    M = int(sg.samples_.shape[0])
    for n in (500, 50 * M):
        _emit({"label": f"VI, {n} prior draws", "last": round(vi.log_perplexity(Xt, n, point_estimate=True), 1)}, out)
        _emit({"label": f"SGGMC last sample, {n} prior draws",
               "last": round(sg.log_perplexity(Xt, n, point_estimate=True), 1)}, out)
    _emit({"label": "SGGMC sample average, 500 prior draws", "sample_avg": round(sg.log_perplexity(Xt, 500), 1),
           "n_samples": M}, out)
    for meth, batch, lab in (("sggmc", BATCH, "SGGMC from VI's topics"), ("sggmc", None, "SGGMC-full from VI's topics"),
                             ("stovi", BATCH, "StoVI from VI's topics")):
        e = _estimator(meth, seconds / 2, batch, start=vi.components_, burn_in=0 if batch is None else burn_in // 2)
        e.fit(X, X_test=Xt)
        _emit(_scores(e, Xt, lab), out)
    _emit({"label": "averaging done", "elapsed": round(time.time() - t0)}, out)


def tuning(seconds, burn_in, out):
    X, Xt, _, _ = load_corpus_split("news20_different")
    kappa = PAPER_20NEWS["kappa"]
    grid = [("gamma x1 (default 0.5/kappa)", {}), ("gamma x0.3", dict(gamma=0.15 / kappa)),
            ("gamma x0.1", dict(gamma=0.05 / kappa)), ("rho 0.01", dict(rho=0.01)), ("rho 1", dict(rho=1.0)),
            ("n_theta_samples 20", dict(n_theta_samples=20)), ("theta_steps 10", dict(theta_steps=10)),
            ("theta_steps 10, theta_step_size x0.3",
             dict(theta_steps=10, theta_step_size=0.15 / (kappa + 2 * 20 * PAPER_20NEWS["alpha"]) ** 0.5))]
    for lab, kw in grid:
        e = _estimator("sggmc", seconds, BATCH, burn_in=burn_in, **kw).fit(X, X_test=Xt)
        _emit(_scores(e, Xt, "SGGMC " + lab, {"eps": e.eps_, "C": e.friction_}), out)


def matched(seconds, burn_in, out):
    """VI and SGGMC with gamma x 0.1 (the best of ``tuning``) for ``seconds`` each, scored with 50, 500 and 50 x M
    prior draws (M: SGGMC's kept samples), so that VI's point estimate and SGGMC's sample average can be compared
    with the same number of terms inside the log."""
    X, Xt, _, _ = load_corpus_split("news20_different")
    vi = _estimator("vi", seconds, None).fit(X, X_test=Xt)
    sg = _estimator("sggmc", seconds, BATCH, burn_in=burn_in, gamma=0.05 / PAPER_20NEWS["kappa"]).fit(X, X_test=Xt)
    _emit(_scores(vi, Xt, "VI"), out)
    _emit(_scores(sg, Xt, "SGGMC gamma x0.1"), out)
    M = int(sg.samples_.shape[0])
    for n in (500, 50 * M):
        _emit({"label": f"{n} prior draws", "VI": round(vi.log_perplexity(Xt, n, point_estimate=True), 1),
               "SGGMC last": round(sg.log_perplexity(Xt, n, point_estimate=True), 1)}, out)
    _emit({"label": "SGGMC gamma x0.1 sample average, 500 prior draws", "n_samples": M,
           "sample_avg": round(sg.log_perplexity(Xt, 500), 1)}, out)


def drift(seconds, burn_in, out):
    """Chains started at VI's topics (after ``seconds`` of VI): does the drift away from them depend on the
    minibatch noise (full batch, gamma x 0.1) or on the theta chains (more, smaller theta steps)?"""
    X, Xt, _, _ = load_corpus_split("news20_different")
    kappa = PAPER_20NEWS["kappa"]
    vi = _estimator("vi", seconds, None).fit(X, X_test=Xt)
    _emit(_scores(vi, Xt, "VI (start)"), out)
    fine = dict(theta_steps=10, theta_step_size=0.15 / (kappa + 2 * 20 * PAPER_20NEWS["alpha"]) ** 0.5)
    for lab, batch, kw in (("SGGMC-full from VI, finer theta chains", None, fine),
                           ("SGGMC from VI, gamma x0.1", BATCH, dict(gamma=0.05 / kappa)),
                           ("SGGMC from VI, finer theta chains", BATCH, fine)):
        e = _estimator("sggmc", seconds / 2, batch, start=vi.components_, burn_in=0 if batch is None else burn_in // 2,
                       **kw).fit(X, X_test=Xt)
        _emit(_scores(e, Xt, lab), out)


def match_cosine(est_topics, true_topics):
    """Mean cosine of estimated to true topics after the best one-to-one matching (Hungarian)."""
    from scipy.optimize import linear_sum_assignment

    c = est_topics @ true_topics.T
    r, k = linear_sum_assignment(-c)
    return float(c[r, k].mean())


def synthetic(seconds, burn_in, out, n_words=1000, seed=0):
    from scalable_bayes.models.sam import sample_sam_corpus

    hp = PAPER_20NEWS
    t0 = time.time()
    X, beta, theta, m = sample_sam_corpus(1666 + 300, hp["n_components"], n_words, kappa=hp["kappa"], sigma=hp["sigma"],
                                          kappa0=hp["kappa0"], alpha=hp["alpha"], seed=seed)
    X, Xt = X[:1666], X[1666:]
    _emit({"label": "synthetic corpus", "V": n_words, "D": 1666, "D_test": 300, "seconds_to_draw": round(time.time() - t0),
           "mean_cos_between_true_topics": round(float(((beta @ beta.T).sum() - 20) / 380), 4)}, out)
    truth = None
    for meth, batch, lab in (("vi", None, "VI"), ("stovi", BATCH, "StoVI"), ("sggmc", BATCH, "SGGMC"),
                             ("gsgnht", BATCH, "gSGNHT"), ("sggmc", None, "SGGMC-full"),
                             ("gmc_bgibbs", None, "GMC-bGibbs")):
        e = _estimator(meth, seconds, batch, burn_in=burn_in if batch else burn_in // 20).fit(X, X_test=Xt)
        if truth is None:  # the true topics scored by the same estimator code (a fitted estimator with them)
            import copy

            tr = copy.copy(e)
            tr.components_ = beta.copy()
            lp, se = tr.log_perplexity(Xt, 50, return_se=True, point_estimate=True)
            truth = lp
            _emit({"label": "TRUE topics", "last": round(lp, 1), "last_se": round(se, 1)}, out)
        rec = _scores(e, Xt, lab, {"cos_to_truth_last": round(match_cosine(e.components_, beta), 4)})
        if e.samples_.shape[0] > 1:
            mean = e.samples_.mean(axis=0)
            rec["cos_to_truth_mean"] = round(match_cosine(mean / np.linalg.norm(mean, axis=1, keepdims=True), beta), 4)
        _emit(rec, out)
    # the chain started AT the truth: does the sampler stay there?
    for meth, batch, lab in (("sggmc", BATCH, "SGGMC from the true topics"), ("vi", None, "VI from the true topics")):
        e = _estimator(meth, seconds / 2, batch, start=beta, burn_in=burn_in // 2).fit(X, X_test=Xt)
        _emit(_scores(e, Xt, lab, {"cos_to_truth_last": round(match_cosine(e.components_, beta), 4)}), out)


def load_corpus_split(name: str):
    """(train, test, paper hyper-parameters, minibatch) of a Fig. 5 corpus as the quick profile uses it."""
    from scalable_bayes.corpora.store import load_corpus

    from . import data

    if name == "news20_different":
        settings, params, batch = {"max_test_docs": 200}, PAPER_20NEWS, BATCH
    elif name == "wiki_sggmc":
        settings = {"max_train_docs": 2000, "max_test_docs": 200}
        params, batch = dict(n_components=50, kappa=2e4, sigma=6e3, kappa0=6e3, alpha=10.0), 100
    else:
        raise ValueError(f"unknown corpus {name!r}: news20_different or wiki_sggmc")
    X, Xt = data.fig5_split(load_corpus(f"data/processed/{name}"), settings)
    return X, Xt, params, batch


CONVERGED_METHODS = {"VI": ("vi", False), "StoVI": ("stovi", True), "SGGMC": ("sggmc", True),
                     "gSGNHT": ("gsgnht", True), "SGGMC-full": ("sggmc", False), "GMC-bGibbs": ("gmc_bgibbs", False)}


def converged(seconds, corpus, is_samples, out, methods=None, gamma_scale=1.0):
    X, Xt, params, batch = load_corpus_split(corpus)
    for label in methods or CONVERGED_METHODS:
        meth, minibatch = CONVERGED_METHODS[label]
        kw = dict(params, budget_clock="cpu")
        if meth in ("sggmc", "gsgnht"):
            kw["gamma"] = gamma_scale * 0.05 / params["kappa"]
        est = _estimator(meth, seconds, batch if minibatch else None, **kw).fit(X)
        point = meth in ("vi", "stovi")
        rec = dict(corpus=corpus, label=label, seconds_cpu=seconds, gamma_scale=gamma_scale, iterations=int(est.n_iter_),
                   n_samples=0 if point else int(est.samples_.shape[0]))
        for n in (50, 500):
            lp, se = est.log_perplexity(Xt, n, return_se=True, point_estimate=point, max_topic_samples=is_samples)
            rec[f"prior_{n}"], rec[f"prior_{n}_se"] = round(lp, 1), round(se, 2)
        for n in (100, 400):
            t0 = time.process_time()
            lp, se, diag = est.log_perplexity(Xt, n, return_se=True, point_estimate=point, estimator="importance",
                                              return_diagnostics=True, max_topic_samples=is_samples)
            rec[f"is_{n}"], rec[f"is_{n}_se"] = round(lp, 1), round(se, 2)
            rec[f"is_{n}_ess_median"] = round(float(np.median(diag["ess"]) / n), 3)
            rec[f"is_{n}_cpu_s"] = round(time.process_time() - t0, 1)
        _emit(rec, out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("experiment", choices=["averaging", "tuning", "drift", "matched", "synthetic", "converged"])
    p.add_argument("--corpus", default="news20_different", help="converged: news20_different or wiki_sggmc")
    p.add_argument("--is-samples", type=int, default=10, help="converged: kept samples the estimates average over")
    p.add_argument("--gamma-scale", type=float, default=1.0,
                   help="converged: SGGMC / gSGNHT learning rate x this (the pipeline's gamma = 0.05 / kappa)")
    p.add_argument("--methods", default=None, help="converged: comma-separated subset of " + ",".join(CONVERGED_METHODS))
    p.add_argument("--seconds", type=float, default=60.0, help="estimator clock per run")
    p.add_argument("--burn-in", type=int, default=2000, help="iterations before SGGMC samples are kept (minibatch)")
    p.add_argument("--n-words", type=int, default=1000, help="synthetic vocabulary size")
    p.add_argument("--out", default=None, help="append the JSON lines to this file")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if a.experiment == "averaging":
        averaging(a.seconds, a.burn_in, a.out)
    elif a.experiment == "tuning":
        tuning(a.seconds, a.burn_in, a.out)
    elif a.experiment == "matched":
        matched(a.seconds, a.burn_in, a.out)
    elif a.experiment == "drift":
        drift(a.seconds, a.burn_in, a.out)
    elif a.experiment == "converged":
        converged(a.seconds, a.corpus, a.is_samples, a.out, a.methods.split(",") if a.methods else None,
                  a.gamma_scale)
    else:
        synthetic(a.seconds, a.burn_in, a.out, n_words=a.n_words)
    return 0


if __name__ == "__main__":
    sys.exit(main())
