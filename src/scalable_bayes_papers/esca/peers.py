"""A peer LDA library behind the engines' interface, for the throughput claim of ESCA Sec. 4.

The paper compares ESCA with "the fastest current approaches" (Sec. 4: F+LDA at 112M and LightLDA at
60M tokens/s, against ESCA's 570M on 4 x 36 threads). Neither runs here; the fastest peer the
pipeline can run is tomotopy (a C++ collapsed Gibbs sampler for LDA with SIMD kernels and its own
thread pool; about 2x slower than ESCA per token in benchmarks/README_lda.md). :class:`TomotopyLDA`
wraps it so that ``runs.run_lda`` fits and scores it exactly like ESCA / CGS / CVB0: the same CSR
corpus, priors and seed, the fit timed apart from the evaluation (wall and process CPU time), and
the held-out score computed by :func:`scalable_bayes.evaluation.heldout.heldout_loglik` from its
topic-word counts (W_kv + beta), so every engine is scored by one protocol.

Choices (ours): tomotopy's hyper-parameter optimisation is switched off (``optim_interval=0``) so
that it samples the same model (symmetric alpha, beta) as the other engines; term weighting ONE
(plain counts); documents are added as sequences of word-id strings (tomotopy builds its own
vocabulary from the words it sees; the counts are mapped back to the corpus's V columns).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from scalable_bayes.evaluation import heldout as _ho


class TomotopyLDA:
    """tomotopy's ``LDAModel`` with the engines' constructor, ``fit(X, X_heldout=...)``, ``history_``,
    ``fit_time_``, ``components_`` (K x V, W_kv + beta) and ``state_nbytes()``.

    ``n_jobs`` is tomotopy's ``workers``; ``evaluate_every`` > 0 scores the held-out documents every
    so many iterations (and at the last), outside the timed fit."""

    _name = "tomotopy"

    def __init__(self, n_components=100, *, doc_topic_prior=None, topic_word_prior=0.1, max_iter=100, n_jobs=1,
                 random_state=0, evaluate_every=0, heldout_sweeps=20):
        if int(n_components) < 2:
            raise ValueError(f"n_components must be >= 2, got {n_components}")
        if int(max_iter) < 0:
            raise ValueError(f"max_iter must be >= 0, got {max_iter}")
        if topic_word_prior <= 0:
            raise ValueError(f"topic_word_prior (beta) must be > 0, got {topic_word_prior}")
        if n_jobs is None or int(n_jobs) < 1:
            raise ValueError(f"n_jobs must be a positive integer for tomotopy (its workers), got {n_jobs}")
        if isinstance(random_state, (bool, np.bool_)) or not isinstance(random_state, (int, np.integer)):
            raise ValueError(f"random_state must be an integer seed for tomotopy, got {random_state!r}")
        self.n_components, self.doc_topic_prior, self.topic_word_prior = int(n_components), doc_topic_prior, float(topic_word_prior)
        self.max_iter, self.n_jobs, self.random_state = int(max_iter), int(n_jobs), int(random_state)
        self.evaluate_every, self.heldout_sweeps = int(evaluate_every or 0), int(heldout_sweeps)

    @property
    def _alpha(self) -> float:
        return 50.0 / self.n_components if self.doc_topic_prior is None else float(self.doc_topic_prior)

    def _topic_counts(self) -> np.ndarray:
        """(K, V) W_kv + beta from tomotopy's phi = (n_kv + beta) / (n_k + V' beta) over its V' words."""
        K, b = self.n_components, self.topic_word_prior
        n_k = np.asarray(self._mdl.get_count_by_topics(), dtype=np.float64)
        Vp = len(self._vocab_ids)
        W = np.full((K, self.n_features_in_), b)
        for k in range(K):
            phi = np.asarray(self._mdl.get_topic_word_dist(k), dtype=np.float64)
            W[k, self._vocab_ids] = np.maximum(phi * (n_k[k] + Vp * b) - b, 0.0) + b
        return W

    def _record(self, it, wall, cpu, X_heldout):
        rec = {"method": self._name, "iteration": it, "wall_time": wall, "cpu_time": cpu,
               "tokens": self.n_tokens_ * it}
        if X_heldout is not None:
            rec["heldout_ll"] = _ho.heldout_loglik(self._topic_counts(), X_heldout, self._alpha,
                                                   n_sweeps=self.heldout_sweeps, seed=self.random_state)
        self.history_.append(rec)

    def fit(self, X, y=None, *, X_heldout=None):
        import tomotopy as tp

        X = sp.csr_matrix(X)
        if X.data.size and (X.data.min() < 0 or not np.all(np.equal(np.mod(X.data, 1), 0))):
            raise ValueError("X must hold non-negative integer counts")
        V = X.shape[1]
        if X_heldout is not None and sp.csr_matrix(X_heldout).shape[1] != V:
            raise ValueError(f"X_heldout has {X_heldout.shape[1]} columns, X has {V}: map it to the training vocabulary")
        self.n_features_in_ = V
        mdl = tp.LDAModel(tw=tp.TermWeight.ONE, k=self.n_components, alpha=self._alpha, eta=self.topic_word_prior,
                          seed=self.random_state)
        lens = np.diff(X.indptr)
        self.n_empty_docs_ = int((np.asarray(X.sum(axis=1)).ravel() == 0).sum())
        for m in range(X.shape[0]):
            s, e = X.indptr[m], X.indptr[m + 1]
            if lens[m]:
                toks = np.repeat(X.indices[s:e], X.data[s:e].astype(np.int64))
                if toks.size:
                    mdl.add_doc([str(i) for i in toks])
        mdl.optim_interval = 0  # the same model as the other engines: fixed symmetric alpha, beta
        self._mdl = mdl
        self.n_tokens_ = int(X.sum())
        self.history_ = []
        every = self.evaluate_every
        t0, c0 = time.perf_counter(), time.process_time()
        mdl.train(0, workers=self.n_jobs)  # initial assignments
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        self._vocab_ids = np.array([int(w) for w in mdl.used_vocabs], dtype=np.int64)
        if every:
            self._record(0, wall, cpu, X_heldout)
        it = 0
        while it < self.max_iter:
            step = min(every, self.max_iter - it) if every else self.max_iter - it
            t0, c0 = time.perf_counter(), time.process_time()
            mdl.train(step, workers=self.n_jobs)
            wall += time.perf_counter() - t0
            cpu += time.process_time() - c0
            it += step
            if every:
                self._record(it, wall, cpu, X_heldout)
        self.fit_time_ = wall
        self.n_iter_ = self.max_iter
        self.n_threads_ = self.n_jobs
        return self

    @property
    def components_(self) -> np.ndarray:
        if not hasattr(self, "_mdl"):
            raise ValueError("this TomotopyLDA is not fitted yet; call fit(X) first")
        return self._topic_counts()

    def state_nbytes(self) -> int:
        """Not measurable from outside tomotopy (its C++ state): -1."""
        return -1
