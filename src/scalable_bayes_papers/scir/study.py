"""Fig. 3a deciding experiment: why SCIR does not end below SGRLD on our Wikipedia LDA runs.

Three parts, each composing library pieces (:class:`~scalable_bayes.models.lda_simplex.SimplexLDA`,
:func:`scalable_bayes.samplers.scir` / :func:`~scalable_bayes.samplers.sgrld` through
:func:`~scalable_bayes.samplers.run_chain`, :class:`~scalable_bayes.inference.lda.CollapsedGibbs`,
:func:`~scalable_bayes.evaluation.heldout.heldout_loglik`); no algorithm of its own.

* :func:`part_synthetic` -- implementation check: LDA data generated from known sparse topics
  (Dir(beta_true)); SCIR and SGRLD on a small h grid, collapsed Gibbs and the true topics: held-out
  perplexity and measures that do not reward smoothing (mass on words outside the true topic's support,
  L1 distance to the matched true topic).
* :func:`part_wiki` -- the paper's mechanism (Sec. 1.3): on Wikipedia, the topic-word entries with zero
  expected count over the whole training set (their exact conditional is Gamma(beta), mean beta) and the
  mass on them, for SCIR and SGRLD; both methods' topics rescored after adding a constant floor; CGS on the
  same split.
* :func:`part_vocab` -- vocabulary trend: Wikipedia restricted to its most frequent 1,000 / 3,000 words.

``python -m scalable_bayes_papers.scir.study --out results/scir/study [--parts synthetic wiki vocab]``
writes one tidy CSV per table (appending a part's rows as they finish) and logs progress.
"""

from __future__ import annotations

import argparse
import logging
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment

from scalable_bayes import samplers
from scalable_bayes.evaluation.heldout import heldout_loglik
from scalable_bayes.inference.lda import CollapsedGibbs
from scalable_bayes.models.lda_simplex import SimplexLDA

from . import data

logger = logging.getLogger(__name__)

_SAMPLER = {"SCIR": samplers.scir, "SGRLD": samplers.sgrld}
WIKI = "data/processed/wikipedia"


# ------------------------------------------------------------------ pieces
def synthetic_corpus(n_topics=20, n_words=2000, beta_true=0.02, alpha=0.1, n_train=3000, n_test=300,
                     doc_len=100, seed=0):
    """(train CSR, test CSR, true topics (K, V)) of LDA documents of ``doc_len`` tokens from topics
    ~ Dir(beta_true) and proportions ~ Dir(alpha)."""
    rng = np.random.default_rng(seed)
    g = rng.gamma(beta_true, size=(n_topics, n_words))
    g[np.arange(n_topics), rng.integers(n_words, size=n_topics)] += 1e-12  # no all-zero topic
    topics = g / g.sum(axis=1, keepdims=True)

    def docs(n):
        th = rng.dirichlet(np.full(n_topics, alpha), size=n)
        rows = [rng.multinomial(doc_len, th[d] @ topics) for d in range(n)]
        return sp.csr_matrix(np.array(rows, dtype=np.int64))

    return docs(n_train), docs(n_test), topics


def restrict_vocab(train, test, n_words: int):
    """Train / test restricted to the ``n_words`` most frequent training words; empty documents dropped."""
    keep = np.sort(np.argsort(-np.asarray(train.sum(axis=0)).ravel(), kind="stable")[:n_words])
    a, b = train[:, keep].tocsr(), test[:, keep].tocsr()
    a = a[np.asarray(a.sum(axis=1)).ravel() > 0]
    b = b[np.asarray(b.sum(axis=1)).ravel() > 0]
    return a.astype(np.int64), b.astype(np.int64)


def perplexity(topics, test, alpha, seed=0, sweeps=20) -> float:
    return math.exp(-heldout_loglik(topics, test, alpha, n_sweeps=sweeps, seed=seed))


def sg_chain(method, train, test, K, alpha, beta, h, n_iter, *, tau=10.0, kappa=0.5, batch=50, seed=0,
             score_every=100, avg_iters=100, avg_every=10, sweeps=20, burn=10):
    """One SCIR / SGRLD chain -> (trace rows, final theta, final topics, topics averaged over the samples
    every ``avg_every`` iterations in the last ``avg_iters``, the SimplexLDA)."""
    lda = SimplexLDA(train, K, alpha=alpha, beta=beta, sweeps=sweeps, burn=burn)
    recent = []

    def cb(t, state):
        if t > n_iter - avg_iters:
            recent.append(lda.topics(state.position))
        return perplexity(lda.topics(state.position), test, alpha, seed) if t % score_every == 0 else None

    t0 = time.perf_counter()
    res = samplers.run_chain(_SAMPLER[method](), lda.model(), lda.init_position(seed), seed=seed, n_steps=n_iter,
                             burnin=n_iter - 1, step_size=float(h), batch_size=batch, step_decay=(tau, kappa),
                             checkpoint_every=avg_every, callback=cb, progress=False)
    trace = [{"method": method, "h": h, "seed": seed, "iteration": int(t), "perplexity": v}
             for t, v in res.callback_values if v is not None]
    theta = np.array(res.state.position, dtype=np.float64)
    logger.info("%s h=%g seed %d: %s (%.0f s)", method, h, seed,
                " ".join(f"{r['iteration']}:{r['perplexity']:.1f}" for r in trace), time.perf_counter() - t0)
    return trace, theta, lda.topics(theta), np.mean(recent, axis=0), lda


def cgs_topics(train, K, alpha, beta, n_iter, seed=0):
    est = CollapsedGibbs(n_components=K, doc_topic_prior=alpha, topic_word_prior=beta, max_iter=n_iter, n_jobs=1,
                         random_state=seed)
    est.fit(train)
    return est.components_


def topic_recovery(topics, true_topics, thresh=1e-6) -> dict:
    """Match estimated to true topics (Hungarian on L1) -> mean L1 distance, mean mass on words whose true
    probability is below ``thresh`` (off-support), mean Hellinger distance."""
    cost = np.abs(topics[:, None, :] - true_topics[None, :, :]).sum(axis=2)
    r, c = linear_sum_assignment(cost)
    off = true_topics[c] < thresh
    hel = np.sqrt(0.5 * ((np.sqrt(topics[r]) - np.sqrt(true_topics[c])) ** 2).sum(axis=1))
    return {"l1": float(cost[r, c].mean()), "offsupport_mass": float((topics[r] * off).sum(axis=1).mean()),
            "hellinger": float(hel.mean())}


def zero_count_floor(lda: SimplexLDA, theta, seed=0) -> dict:
    """Entries (k, w) with no token of any training document assigned to them in any kept sweep of the
    within-document Gibbs at theta (``lda.sweeps - lda.burn`` sweeps). Returns the fraction of such entries,
    the mean theta on them / beta, and the mean per-topic probability mass pi puts on them. With ONE kept
    sweep their exact conditional would be Gamma(beta) (ratio 1); with several the selection of small
    theta is stronger, so the ratio is below 1 even for an exact sampler: compare methods, not with 1."""
    n = lda.topic_counts(theta, np.arange(lda.D), seed, 1.0 / (lda.sweeps - lda.burn)).reshape(lda.K, -1)
    th = np.asarray(theta).reshape(lda.K, -1)
    z = n == 0
    pi = th / th.sum(axis=1, keepdims=True)
    return {"zero_frac": float(z.mean()), "zero_theta_mean_over_beta": float(th[z].mean() / lda.beta),
            "zero_mass": float((pi * z).sum(axis=1).mean()),
            "median_pi_times_V": float(np.median(pi) * pi.shape[1])}


def smoothed(topics, eps):
    """topics + eps (per entry, renormalised): an additive floor."""
    t = topics + eps
    return t / t.sum(axis=1, keepdims=True)


def _append(df: pd.DataFrame, path: Path):
    df.to_csv(path, mode="a", header=not path.exists(), index=False)


# ------------------------------------------------------------------ parts
def part_synthetic(out: Path, vocab_sizes=(2000, 8000), seeds=(0, 1, 2), n_iter=1200, K=20, beta_true=0.02,
                   alpha=0.1, grid=None, cgs_iter=300, score_every=300, seeds_by_vocab=None):
    """Known sparse topics: per vocabulary size and seed, the true topics, CGS and each (method, h) of
    ``grid`` (last sample and topics averaged over the last 100 iterations): perplexity, topic recovery
    and the zero-count floor; the SG chains' traces go to synthetic_trace.csv."""
    grid = grid or {"SCIR": (0.1, 0.2, 0.5), "SGRLD": (0.02, 0.05, 0.1, 0.2)}
    for V in vocab_sizes:
        for seed in (seeds_by_vocab or {}).get(V, seeds):
            train, test, true = synthetic_corpus(K, V, beta_true, alpha, seed=seed)
            rows = [{"V": V, "seed": seed, "method": "true", "h": np.nan,
                     "perplexity": perplexity(true + 1e-300, test, alpha), **topic_recovery(true, true)}]
            cg = cgs_topics(train, K, alpha, beta_true, cgs_iter, seed)
            rows.append({"V": V, "seed": seed, "method": "CGS", "h": np.nan, "perplexity": perplexity(cg, test, alpha),
                         **topic_recovery(cg / cg.sum(1, keepdims=True), true)})
            traces = []
            for m, hs in grid.items():
                for h in hs:
                    tr, theta, pi, avg, lda = sg_chain(m, train, test, K, alpha, beta_true, h, n_iter, seed=seed,
                                                       score_every=score_every)
                    traces += [{"V": V, **r} for r in tr]
                    fl = zero_count_floor(lda, theta, seed)
                    for kind, t in (("last", pi), ("avg", avg)):
                        rows.append({"V": V, "seed": seed, "method": m, "h": h, "topics": kind,
                                     "perplexity": perplexity(t, test, alpha), **topic_recovery(t, true), **fl})
            df = pd.DataFrame(rows)
            logger.info("synthetic V=%d seed %d:\n%s", V, seed, df.to_string())
            _append(df, out / "synthetic.csv")
            _append(pd.DataFrame(traces), out / "synthetic_trace.csv")


def part_wiki(out: Path, n_iter=800, K=50, alpha=0.1, beta=0.01, h=None, n_test=300, cgs_iter=150,
              eps=(1e-7, 1e-6, 1e-5, 3e-5, 1e-4), seed=0, with_cgs=True):
    from scalable_bayes.corpora.store import load_corpus
    train, test = data.split_corpus(load_corpus(WIKI), None, n_test)
    h = h or {"SCIR": 0.1, "SGRLD": 0.01}
    rows, traces = [], []
    for m, hm in h.items():
        tr, theta, pi, avg, lda = sg_chain(m, train, test, K, alpha, beta, hm, n_iter, seed=seed)
        traces += tr
        fl = zero_count_floor(lda, theta, seed)
        logger.info("%s floor: %s", m, fl)
        for e in (0.0,) + tuple(eps):
            for kind, t in (("last", pi), ("avg", avg)):
                rows.append({"method": m, "h": hm, "topics": kind, "eps": e,
                             "perplexity": perplexity(smoothed(t, e), test, alpha), **fl})
        _append(pd.DataFrame([r for r in rows if r["method"] == m]), out / "wiki.csv")
        logger.info("%s smoothing:\n%s", m, pd.DataFrame([r for r in rows if r["method"] == m]).to_string())
    _append(pd.DataFrame(traces), out / "wiki_trace.csv")
    if with_cgs:
        t0 = time.perf_counter()
        cg = cgs_topics(train, K, alpha, beta, cgs_iter, seed)
        pi = cg / cg.sum(axis=1, keepdims=True)
        z = (cg - beta) < 0.5
        r = {"method": "CGS", "h": np.nan, "topics": "last", "eps": 0.0, "perplexity": perplexity(cg, test, alpha),
             "zero_frac": float(z.mean()), "zero_theta_mean_over_beta": 1.0,
             "zero_mass": float((pi * z).sum(axis=1).mean()), "median_pi_times_V": float(np.median(pi) * pi.shape[1])}
        logger.info("CGS %d sweeps: %s (%.0f s)", cgs_iter, r, time.perf_counter() - t0)
        _append(pd.DataFrame([r]), out / "wiki.csv")


def part_vocab(out: Path, vocab_sizes=(1000, 3000), n_iter=400, K=50, alpha=0.1, beta=0.01, n_test=300, seed=0,
               grid=None):
    from scalable_bayes.corpora.store import load_corpus
    tr_all, te_all = data.split_corpus(load_corpus(WIKI), None, n_test)
    grid = grid or {"SCIR": (0.1,), "SGRLD": (0.01,)}  # each method's best h on the full vocabulary
    for V in vocab_sizes:
        train, test = restrict_vocab(tr_all, te_all, V)
        rows = []
        for m, hs in grid.items():
            for h in hs:
                tr, _, pi, avg, _ = sg_chain(m, train, test, K, alpha, beta, h, n_iter, seed=seed)
                rows += [{"V": V, **r, "topics": "last"} for r in tr]
                rows.append({"V": V, "method": m, "h": h, "seed": seed, "iteration": n_iter, "topics": "avg",
                             "perplexity": perplexity(avg, test, alpha)})
        df = pd.DataFrame(rows)
        logger.info("vocab V=%d:\n%s", V, df.to_string())
        _append(df, out / "vocab.csv")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="results/scir/study")
    ap.add_argument("--parts", nargs="*", default=["synthetic", "wiki", "vocab"])
    ap.add_argument("--wiki-iters", type=int, default=800)
    ap.add_argument("--vocab-iters", type=int, default=400)
    ap.add_argument("--cgs-iter", type=int, default=150)
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    logging.getLogger("scalable_bayes").setLevel(logging.WARNING)  # the driver's per-checkpoint lines
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if "synthetic" in args.parts:
        part_synthetic(out, seeds_by_vocab={8000: (0, 1)})
    if "wiki" in args.parts:
        part_wiki(out, n_iter=args.wiki_iters, cgs_iter=args.cgs_iter)
    if "vocab" in args.parts:
        part_vocab(out, n_iter=args.vocab_iters)


if __name__ == "__main__":
    main()
