"""ESCA, CollapsedGibbs and CVB0 estimators: Numba kernels behind scikit-learn estimators.

All three are scikit-learn transformers shaped like ``sklearn.decomposition.LatentDirichletAllocation``:
the constructor ``(n_components, *, doc_topic_prior, topic_word_prior, max_iter, n_jobs, random_state,
verbose, ...)``, ``fit(X, y=None, *, X_heldout=None)`` on a document-term count matrix (CSR or dense,
non-negative integers), ``components_`` (K x V: W_kv + beta), ``transform`` (Gibbs fold-in with the
topics fixed), ``score`` / ``perplexity`` (approximate log-likelihood of X given its fold-in
proportions), ``score_heldout`` (the papers' held-out per-word log-likelihood by document completion),
``get_feature_names_out`` and ``history_`` (one dict per recorded iteration: iteration, cumulative fit
wall time excluding evaluation, tokens processed, held-out per-word log-likelihood by document
completion). ``get_params`` / ``set_params`` / ``clone`` come from ``sklearn.base.BaseEstimator``; a
pickled fitted model keeps the topics, not the corpus or the sampler's per-token state.

An integer ``random_state`` is the seed of the counter-based streams of the kernels (document m in
iteration t draws from the stream (seed, t, m)); a numpy ``Generator`` gives one integer seed, drawn
once per fit; None draws fresh entropy. The seed used is ``seed_``.
"""

from __future__ import annotations

import logging
from typing import Callable, Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import validate_data

from ...rng import resolve_random_state
from ...utils import compile_clock, numba_threads
from . import _kernels as kern

logger = logging.getLogger(__name__)

__all__ = ["ESCA", "CollapsedGibbs", "CVB0", "check_corpus", "CorpusArrays"]


# ----------------------------------------------------------------------------------------------
# input validation and corpus arrays
# ----------------------------------------------------------------------------------------------


class CorpusArrays:
    """CSR arrays of the non-empty training documents: int64 ``indptr`` (M + 1), int32 ``indices`` and
    ``cnt`` (views of the matrix's own arrays when they are int32 already: no copy of the corpus)."""

    def __init__(self, X: sp.csr_matrix):
        self.indptr = X.indptr.astype(np.int64)
        self.indices = np.asarray(X.indices, dtype=np.int32)
        self.cnt = np.asarray(X.data, dtype=np.int32)
        self.n_docs, self.n_words = X.shape
        self.doc_len = kern.row_sums(self.indptr, self.cnt)
        self.n_tokens = int(self.doc_len.sum())

    def chunks(self, n_chunks: int, entry_weight: float = 0.0) -> np.ndarray:
        """Document boundaries of ``n_chunks`` contiguous chunks of about equal work, a document's work taken
        as its tokens plus ``entry_weight`` times its entries (distinct words; default 0: equal token counts)."""
        w = self.doc_len
        if entry_weight:
            w = w + entry_weight * np.diff(self.indptr)
        return kern.balanced_cuts(w, max(1, min(n_chunks, self.n_docs)))


def _check_n_topics(n_components):
    # K = 1 is allowed (the unigram model: every token in the one topic), as in scikit-learn's LDA
    if isinstance(n_components, (bool, np.bool_)) or not isinstance(n_components, (int, np.integer, float, np.floating)):
        raise TypeError(f"n_components (K, the number of topics) must be a positive integer, got {n_components!r}")
    if not np.isfinite(n_components) or int(n_components) != n_components or n_components < 1:
        raise ValueError(f"n_components (K, the number of topics) must be a positive integer, got {n_components!r}")


def _check_params(n_components, doc_topic_prior, topic_word_prior, max_iter, n_jobs):
    _check_n_topics(n_components)
    if not np.isfinite(doc_topic_prior) or doc_topic_prior <= 0:
        raise ValueError(f"doc_topic_prior (alpha) must be > 0, got {doc_topic_prior!r}; the paper uses 50/K")
    if not np.isfinite(topic_word_prior) or topic_word_prior <= 0:
        raise ValueError(f"topic_word_prior (beta) must be > 0, got {topic_word_prior!r}; the paper uses 0.1")
    if isinstance(max_iter, (bool, np.bool_)) or int(max_iter) != max_iter or max_iter < 0:
        raise ValueError(f"max_iter must be a non-negative integer, got {max_iter!r}")
    if n_jobs is not None and (isinstance(n_jobs, (bool, np.bool_)) or int(n_jobs) != n_jobs or n_jobs == 0):
        raise ValueError(f"n_jobs must be None, a positive thread count or -1 (all threads), -2 (all but one), ...; "
                         f"got {n_jobs!r}")


def check_corpus(X, n_words: int | None = None, *, what: str = "X") -> sp.csr_matrix:
    """Validate a document-term count matrix and return it as canonical CSR (int32 counts).

    Raises ``ValueError`` for negative, non-finite or non-integer counts, a count above 2^31 - 1, a
    wrong number of columns (out-of-vocabulary ids) or an input that is not 2-D.

    Parameters
    ----------
    X : scipy.sparse matrix or array_like, shape (M, V)
        Document-term counts.
    n_words : int, optional
        The vocabulary size V the model was fitted on; X must have that many columns.
    what : str, default "X"
        The name of the argument in error messages.

    Returns
    -------
    scipy.sparse.csr_matrix of int32, shape (M, V)
        Duplicates summed, explicit zeros removed, column indices sorted.
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X)
    else:
        a = np.asarray(X)
        if a.ndim != 2:
            raise ValueError(f"{what} must be a 2-D document-term count matrix, got shape {a.shape}")
        X = sp.csr_matrix(a)
    if not X.has_canonical_format or (X.nnz and not X.data.all()):
        X = X.copy()  # summing duplicates, sorting and dropping zeros work in place: not on the caller's matrix
    X.sum_duplicates()
    if X.nnz:
        d = X.data
        if d.dtype.kind not in "iub":  # float counts: finite and integral (integer dtypes need no such pass)
            if not np.all(np.isfinite(d)):
                raise ValueError(f"{what} has negative or non-finite counts; pass raw token counts")
            if not np.all(np.equal(np.mod(d, 1), 0)):
                raise ValueError(f"{what} has non-integer counts (tf-idf?); LDA engines need raw token counts")
        if d.min() < 0:
            raise ValueError(f"Negative values in data: {what} has negative counts; pass raw token counts")
        if d.max() > np.iinfo(np.int32).max:
            raise ValueError(f"{what} has a count above 2^31-1")
    X.eliminate_zeros()
    if n_words is not None and X.shape[1] != n_words:
        raise ValueError(
            f"{what} has {X.shape[1]} columns but the model was fitted on {n_words} words; "
            "map documents to the training vocabulary (drop out-of-vocabulary ids) before calling"
        )
    X = sp.csr_matrix((X.data.astype(np.int32, copy=False), X.indices.astype(np.int32, copy=False), X.indptr),
                      shape=X.shape)
    X.sort_indices()
    return X


def _drop_empty(X: sp.csr_matrix, name: str) -> tuple[sp.csr_matrix, np.ndarray]:
    # row sums without scipy's X.sum(axis=1), which upcasts a copy of the int32 counts to int64
    lens = kern.row_sums(X.indptr.astype(np.int64), np.asarray(X.data, dtype=np.int32))
    keep = np.flatnonzero(lens > 0)
    n_empty = X.shape[0] - keep.size
    if n_empty:
        logger.info("%s: skipped %d empty documents of %d", name, n_empty, X.shape[0])
    if keep.size == 0:
        raise ValueError("X: every document is empty (or X has no rows); nothing to fit")
    return (X[keep] if n_empty else X), keep


# ----------------------------------------------------------------------------------------------
# base class
# ----------------------------------------------------------------------------------------------


class _LDABase(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Shared scikit-learn interface of the LDA engines (parameters in each engine's docstring)."""

    _name = "lda"

    def __init__(self, n_components=100, *, doc_topic_prior=None, topic_word_prior=0.1, max_iter=100, n_jobs=None,
                 random_state=0, verbose=0, evaluate_every=0, heldout_sweeps=20, callbacks: Sequence[Callable] = ()):
        self.n_components = n_components
        self.doc_topic_prior = doc_topic_prior
        self.topic_word_prior = topic_word_prior
        self.max_iter = max_iter
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.evaluate_every = evaluate_every
        self.heldout_sweeps = heldout_sweeps
        self.callbacks = callbacks

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = True
        # X must be token counts: non-negative integers. scikit-learn's only tag for integer input is
        # "categorical" (its checks then pass non-negative integers), which is what count data needs
        tags.input_tags.categorical = True
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags

    # --- helpers
    @property
    def _alpha(self) -> float:
        return 50.0 / self.n_components if self.doc_topic_prior is None else float(self.doc_topic_prior)

    @property
    def _threads(self):
        """``n_jobs`` as a Numba thread count: None (leave the setting as is), a positive count, or -1
        (all of ``NUMBA_NUM_THREADS``), -2 (all but one), ... as in scikit-learn."""
        return _resolve_n_jobs(self.n_jobs)

    def _validate(self):
        _check_n_topics(self.n_components)  # before alpha = 50 / K
        _check_params(self.n_components, self._alpha, self.topic_word_prior, self.max_iter, self.n_jobs)
        # None: fresh entropy, recorded so the fit can be repeated; an int is used as is
        self.seed_ = resolve_random_state(self.random_state)

    def __sklearn_is_fitted__(self):
        return hasattr(self, "n_iter_")

    def _check_fitted(self):
        if not hasattr(self, "n_iter_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit(X) first")

    def _record(self, it, wall, n_tokens, X_heldout, cpu=float("nan")):
        rec = {"method": self._name, "iteration": it, "wall_time": wall, "cpu_time": cpu, "tokens": n_tokens * it}
        if X_heldout is not None:
            from ...evaluation import heldout as _ho

            rec["heldout_ll"] = _ho.heldout_loglik(self._topic_counts(), X_heldout, self._alpha,
                                                   n_sweeps=self.heldout_sweeps, seed=self.seed_)
        self.history_.append(rec)
        stop = False
        for cb in self.callbacks:  # every callback sees every record, also after one has asked to stop
            if cb(self, rec):
                stop = True
        return rec, self._stop_agreed(stop)

    def _stop_agreed(self, stop: bool) -> bool:
        """Whether the fit stops after this record, given this process's callbacks' answer (the MPI
        estimator stops when any rank's callbacks ask, so that every rank leaves the loop together)."""
        return bool(stop)

    def _fit_loop(self, X, X_heldout):
        self._validate()
        X = check_corpus(validate_data(self, X, accept_sparse="csr", dtype="numeric"))
        V = X.shape[1]
        if X_heldout is not None:
            X_heldout = check_corpus(X_heldout, V, what="X_heldout")
        Xf, self.doc_index_ = _drop_empty(X, self._name)
        self.n_empty_docs_ = X.shape[0] - Xf.shape[0]
        C = CorpusArrays(Xf)
        self.n_tokens_ = C.n_tokens
        self.history_ = []
        self._cache = {}
        every = int(self.evaluate_every or 0)
        with numba_threads(self._threads) as nt, compile_clock() as clock:
            self.n_threads_ = nt
            # wall time and process CPU time of the fit, evaluation and compilation (or loading compiled
            # kernels, on a first call) excluded; the CPU time of a single-threaded fit is its work alone,
            # whatever else the machine is running
            _, wall, cpu, comp = clock.timed(self._init_state, C)
            stop = False
            if every:
                _, stop = self._record(0, wall, C.n_tokens, X_heldout, cpu)
            it = 0
            while not stop and it < self.max_iter:
                it += 1
                _, dw, dc, dk = clock.timed(self._iterate, C, it)
                wall += dw
                cpu += dc
                comp += dk
                rec = None
                if every and (it % every == 0 or it == self.max_iter):
                    rec, stop = self._record(it, wall, C.n_tokens, X_heldout, cpu)
                if self.verbose or rec is not None:  # one line per iteration at INFO when verbose
                    ll = ("" if rec is None or "heldout_ll" not in rec
                          else f", held-out ll/word: {rec['heldout_ll']:.4f}")
                    logger.log(logging.INFO if self.verbose else logging.DEBUG,
                               "%s iteration %d of max_iter %d, %.2fs%s", self._name, it, self.max_iter, wall, ll)
            self.fit_time_ = wall
            self.compile_time_ = comp
        self.n_iter_ = it  # max_iter, or fewer when a callback stopped the fit
        # components_ is cached in this dict on first access (a new dict: the counts have changed)
        self._cache = {}
        return self

    @property
    def components_(self) -> np.ndarray:
        """(K, V) W_kv + beta of the last iteration (float64). Materialised on first access after a fit
        (so that fitting does not hold a dense K x V float copy of the counts), then cached."""
        self._check_fitted()
        c = self._cache.get("components")
        if c is None:
            c = self._cache["components"] = self._topic_counts()
        return c

    @property
    def _n_features_out(self):
        """Number of transformed output features: one per topic (``get_feature_names_out``)."""
        return int(self.n_components)

    def fit(self, X, y=None, *, X_heldout=None):
        """Fit the topics on a document-term count matrix.

        Parameters
        ----------
        X : sparse matrix or array of shape (n_documents, n_words)
            Non-negative integer token counts (CSR preferred; dense arrays are converted). Empty
            documents are skipped (``doc_index_`` lists the rows used).
        y : ignored
            Present for the scikit-learn API (a ``Pipeline`` passes it); never used as data.
        X_heldout : sparse matrix of shape (n_test_documents, n_words), optional
            Test documents (same vocabulary) scored by document completion every ``evaluate_every``
            iterations into ``history_``.

        Returns
        -------
        self
        """
        return self._fit_loop(X, X_heldout)

    @property
    def topic_word_(self) -> np.ndarray:
        """phi_kv = (W_kv + beta) / (T_k + V beta) (posterior-mean form; ESCA eq. 20's smoothing)."""
        c = self.components_
        return c / c.sum(axis=1, keepdims=True)

    def _check_X(self, X, what="X"):
        self._check_fitted()
        shape = getattr(X, "shape", None)
        if shape is not None and len(shape) == 2 and shape[1] != self.n_features_in_:
            raise ValueError(f"{what} has {shape[1]} features, but {type(self).__name__} is expecting "
                             f"{self.n_features_in_} features as input (the training vocabulary); map documents to "
                             "the training vocabulary (drop out-of-vocabulary ids) before calling")
        return check_corpus(validate_data(self, X, accept_sparse="csr", dtype="numeric", reset=False),
                            self.n_features_in_, what=what)

    def transform(self, X, *, n_sweeps=None):
        """Document-topic proportions theta (M, K) by Gibbs fold-in with the topics fixed.

        Document m draws from the stream (``seed_``, 1, m), so the result is deterministic for a fitted
        model; ``n_sweeps`` (default ``heldout_sweeps``) Gibbs sweeps per document, theta the posterior
        mean of the last one. Empty documents get 1/K.
        """
        from ...evaluation import heldout as _ho

        X = self._check_X(X)
        with numba_threads(self._threads):
            return _ho.fold_in(self.components_, X, self._alpha, n_sweeps=n_sweeps or self.heldout_sweeps,
                               seed=self.seed_)

    def score(self, X, y=None, *, n_sweeps=None) -> float:
        """Approximate log-likelihood of X (total over its tokens); higher is better.

        sum_m sum_v x_mv log sum_k theta_mk phi_kv, with phi = ``topic_word_`` and theta_m the document's
        proportions by :meth:`transform` (Gibbs fold-in on the same words, so the value is optimistic, as
        scikit-learn's variational bound is an approximation). It is the quantity behind
        :meth:`perplexity`; the paper's held-out measure (document completion, where theta is
        estimated from one half of each document and the other half scored) is :meth:`score_heldout`.
        """
        X = self._check_X(X)
        from ...evaluation import heldout as _ho

        with numba_threads(self._threads):
            theta = _ho.fold_in(self.components_, X, self._alpha, n_sweeps=n_sweeps or self.heldout_sweeps,
                                seed=self.seed_)
        return _loglik_given_theta(X, theta, self.topic_word_)

    def perplexity(self, X, *, n_sweeps=None) -> float:
        """exp(-score(X) / number of tokens of X), the perplexity of :meth:`score`'s approximate
        log-likelihood (as ``LatentDirichletAllocation.perplexity``); lower is better."""
        X = self._check_X(X)
        n = int(X.sum())
        if n == 0:
            raise ValueError("X has no tokens; the perplexity needs at least one")
        return float(np.exp(-self.score(X, n_sweeps=n_sweeps) / n))

    def score_heldout(self, X, *, n_sweeps=None) -> float:
        """Per-word held-out log-likelihood of X by document completion (Wallach et al. 2009)."""
        from ...evaluation import heldout as _ho

        X = self._check_X(X)
        with numba_threads(self._threads):
            return _ho.heldout_loglik(self.components_, X, self._alpha, n_sweeps=n_sweeps or self.heldout_sweeps,
                                      seed=self.seed_)

    def __getstate__(self):
        """Pickle the fitted topics, not the sampler: ``components_`` is materialised and the training
        corpus, per-token / per-entry state (assignments, responsibilities, document-topic counts) and
        work buffers are left out (and ``doc_index_``, one entry per training document), so a pickled
        model is of the order of its K x V topics. What
        ``transform``, ``score``, ``perplexity`` and ``score_heldout`` need is kept; the sampler's
        state (``topic_counts_``, ``doc_topic_counts_``, ``topic_assignments_``,
        ``responsibilities()``) exists only on the fitted object itself."""
        state = self.__dict__.copy()
        if hasattr(self, "n_iter_"):
            state["_cache"] = {"components": self.components_}
            state.pop("doc_index_", None)  # one entry per training document
            for k, v in self.__dict__.items():
                if k.startswith("_") and isinstance(v, (np.ndarray, list, tuple,
                                                                                   CorpusArrays)):
                    del state[k]
            state["_sampler_state_dropped"] = True
        return state


def _loglik_given_theta(X: sp.csr_matrix, theta: np.ndarray, phi: np.ndarray, block: int = 1 << 22) -> float:
    """sum over the entries of X of x_mv log sum_k theta_mk phi_kv (entries in blocks of about
    ``block`` / K, so that no nnz x K array is formed)."""
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    cols, cnt = X.indices, X.data.astype(np.float64)
    K = theta.shape[1]
    step = max(1, block // max(K, 1))
    total = 0.0
    for s in range(0, cols.size, step):
        p = np.einsum("ik,ik->i", theta[rows[s:s + step]], phi.T[cols[s:s + step]])
        total += float(cnt[s:s + step] @ np.log(p))
    return total


def _resolve_n_jobs(n_jobs):
    """None, or the Numba threads for ``n_jobs`` (-1: all, -2: all but one, ...)."""
    if n_jobs is None:
        return None
    import numba

    n = int(n_jobs)
    return n if n > 0 else max(1, numba.config.NUMBA_NUM_THREADS + 1 + n)


# ----------------------------------------------------------------------------------------------
# ESCA
# ----------------------------------------------------------------------------------------------


_DECOMPOSITION = {"auto": 0, "doc": 1, "word": 2}


def _resize(capacity: int, need: int) -> bool:
    """Re-allocate a read buffer of ``capacity`` elements for ``need``: when too small, or when more
    than a quarter of it would go unused."""
    return need > capacity or (capacity > 64 and need < 0.75 * capacity)


def _padded(need: int, unit: int = 1) -> int:
    """Capacity for ``need`` elements: 10% slack (rounded to whole ``unit``s), at least one unit."""
    return max(unit, -(-int(need * 1.1) // unit) * unit)


def _default_dense_min(K, Kp, count_bytes, topic_bytes):
    """ESCA's default ``dense_min_topics``: max(8, K // 10) nonzero topics, or the smallest count at which a
    dense row (``Kp`` counts of ``count_bytes``) takes no more memory than the sparse row it replaces (a
    topic id of ``topic_bytes`` and a float64 coefficient per topic) where that is smaller."""
    memory = -(-Kp * count_bytes // (topic_bytes + 8))
    return min(memory, max(8, K // 10))


class ESCA(_LDABase):
    """Exponential stochastic cellular automaton for LDA (Zaheer et al. 2016, Alg. 1, eqs. 20/23).

    Parameters
    ----------
    n_components : int, default 100
        K, the number of topics (1: the unigram model).
    doc_topic_prior : float or None
        alpha (None: 50 / K as in the paper).
    topic_word_prior : float, default 0.1
        beta (0.1 in the paper).
    max_iter : int, default 100
        Number of synchronous iterations T.
    n_jobs : int or None
        Numba threads (documents are processed in parallel; -1 all, -2 all but one; None leaves the
        current setting); results do not depend on it.
    random_state : None, int or numpy Generator, default 0
        Seed: document m in iteration t draws from the stream (seed, t, m); the seed used is ``seed_``.
    verbose : int, default 0
        Log one line per iteration at INFO level when > 0 (logger ``scalable_bayes.inference.lda._estimators``;
        ``logging.basicConfig(level=logging.INFO)`` shows it).
    sampler : {"sparse_alias", "plain"}, default "sparse_alias"
        ``"sparse_alias"``: sparse document term + Vose alias tables for the dense
        term; ``"plain"``: dense O(K) inverse-CDF over all topics (the paper's "vanilla" SCA).
    decomposition : {"word", "doc", "auto"}, default "word"
        How ``sparse_alias`` splits the frozen conditional, per (document, word) entry:
        ``"doc"`` the paper's eq. 23 (document term over the document's topics + per-word alias table
        of the dense term), ``"word"`` (default, the fastest in our measurements) word bucket
        (D_mk + alpha) W_kv/(T_k + V beta) over the word's nonzero topics (rows sorted by decreasing
        W_kv/(T_k + V beta), so the linear search stops early) + document bucket
        D_mk beta/(T_k + V beta) (once per document) + smoothing bucket alpha beta/(T_k + V beta) (one
        alias table of K), ``"auto"`` whichever loop is shorter for the entry (eq. 23 or word). Same
        distribution in every case, in double precision, except the dense rows below.
    dense_min_topics : int, optional
        ``"word"`` decomposition only. A word whose counts have at least this many
        nonzero topics is read from a DENSE row of its K counts, and its entries draw from the whole
        conditional (D_mk + alpha)(W_kv + beta)/(T_k + V beta) computed in single precision, eight
        topics per vector instruction (measured at K = 100: 1.9x faster per token on the Wikipedia
        sample, where words have most topics; 1.25x on 20 Newsgroups). None (default): max(8, K // 10),
        or fewer where a dense row takes no more memory than the sparse row it replaces (one topic id + one
        float64 per nonzero topic; 6 of K = 20), e.g. 10 of K = 100, 100 of K = 1000 (measured, one
        thread: at K = 100 an iteration 7-9% cheaper on 20 Newsgroups than with the former default, the
        memory rule's 24; at K = 1000 as fast as that rule's 200, and faster than 50 or 25); 0: every
        word dense; K + 1: none.
    init : {"uniform", "prior"}, default "uniform"
        The random start of Alg. 1 (line 1: "randomly initialize each cell"). ``"uniform"``: every
        token's topic uniform on the K topics, independently (the paper's eq. 19). ``"prior"``: the
        start is drawn from LDA's own prior, theta_m ~ Dirichlet(alpha) per document and every token of
        document m from Categorical(theta_m), so each document starts on a few topics. The iterations
        are the same (Alg. 1, sampling from the previous iteration's counts); what changes is how long
        the synchronous updates take to break the symmetry of the start: from a uniform start every
        count is near its mean and the first iterations draw almost uniformly again, where collapsed
        Gibbs breaks the symmetry within its first sequential sweep. Iterations to a held-out
        log-likelihood target, medians of three seeds (benchmarks/README_lda.md, time to quality):
        ``"prior"`` / ``"uniform"`` on 20 Newsgroups at K = 100, alpha = 0.5: 40 / 62 in one race, 49 / 48
        in a later one (the seeds' spread is wide); on the Wikipedia sample at K = 100: 44 / 54; at
        K = 1000, alpha = 0.05 (long documents, each started on a handful of topics): 115 / 55. The
        uniform start stays the default.
    evaluate_every : int, default 0
        Record ``history_`` every ``evaluate_every`` iterations (0: never), scoring ``X_heldout`` of
        ``fit`` by document completion.
    heldout_sweeps : int, default 20
        Gibbs sweeps of the document completion of each held-out evaluation.
    callbacks : sequence of callable, default ()
        Each callback is called as ``cb(estimator, record)`` with every ``history_`` record. A callback
        that returns a true value stops the fit after that record (the state is the iteration's: a
        topic model that is fitted, with ``n_iter_`` iterations), e.g. to stop once the held-out
        log-likelihood reaches a target: ``lambda est, rec: rec["heldout_ll"] >= -7.9``.

    Attributes
    ----------
    components_ : ndarray of float64, shape (K, V)
        W_kv + beta.
    n_iter_ : int
        Iterations run: ``max_iter``, or fewer when a callback stopped the fit.
    doc_topic_counts_ : scipy.sparse.csr_matrix, shape (M, K)
        D_mk of the last iteration.
    topic_counts_ : ndarray, shape (K,)
        T_k.
    history_ : list of dict
        Per-iteration records.
    fit_time_ : float
        Seconds of the fit, held-out evaluation and compilation excluded.
    compile_time_ : float
        Seconds the fit spent compiling its Numba kernels or loading them from the cache (the first fit in a
        process; zero once they are loaded).

    Notes
    -----
    Memory (default ``decomposition="word"``): the corpus, ONE buffer of the sparse document-topic
    counts (each document reads its own counts whole before overwriting them), ONE dense V x K
    topic-word count array (the write buffer) plus the read buffer: dense count rows for the words
    with many topics, the compact sparse rows of the word bucket (nonzero topics and coefficients)
    for the others, at most 3 times the all-sparse rows with the default ``dense_min_topics``; in
    compact types chosen from bounds (uint8 topic ids for K <= 256, int16 document counts when
    documents have < 2^15 tokens, uint16 topic-word counts; the heavy words that occur 2^16 times or
    more, a few stop words in a raw corpus, keep their counts in int32 rows of their own and always
    read them dense); no per-token assignment is stored. On several threads every thread but the first
    counts into a V x K write buffer of its own where these take at most 2 MiB in all (added to the shared
    one after each sweep: no cache line written by two threads). On one thread, where V x K exceeds twice the
    tokens, the sweep also marks the counts it writes in a V x K bitmap (K/8 bytes a word), so that the
    next iteration's read buffer is built from nnz(W) counts instead of a scan of all V x K. The
    ``doc``/``auto`` decompositions and ``plain`` read a dense copy of W (two V x K arrays), uint16 when
    every word occurs fewer than 2^16 times, else int32.
    """

    _name = "ESCA"
    _doc_offset = 0  # global index of local document 0 (set by the MPI-sharded subclass)
    # bitmap of the counts each single-threaded sweep writes (off where counts are also written
    # elsewhere). Not with several threads: measured on 20NG at K = 100 (6 paired runs), an atomic OR
    # of each first count cost ~7% more than the (parallel) scan it saves
    _track_touched = True
    # ... and only where the V x K scan it saves is long against the sweep: the bitmap costs a read-modify-write
    # per token, the scan a read per count. One thread, CPU per iteration, paired: V K / tokens 0.08 (Wikipedia
    # sample, K = 100) 8% less time without the bitmap, 1.4 (20 Newsgroups, K = 100) 3-4% less, 14 (20 Newsgroups,
    # K = 1000) 6-15% MORE; 0.85 (Wikipedia, K = 1000) within the noise. Kept where V K > 2 x tokens
    _track_cells_per_token = 2.0
    # on several threads, chunks 1.. count into write buffers of their own (plain increments, no cache line
    # shared with another thread's writes; added to the shared buffer after the sweep) where these take at most
    # this many bytes. Two threads, wall time an iteration, alternated 7 / 4 / 3 times: the Wikipedia sample
    # at K = 100 (1.5 MB) 0.112-0.129 s against 0.119-0.196 with atomic adds into the shared buffer (every
    # pair faster); 20 Newsgroups at K = 100 (4.5 MB) 0.033 against 0.032; the Wikipedia sample at K = 1000
    # (15 MB) 0.70-0.75 against 0.50-0.55 (twice the written footprint against the caches)
    _own_buffer_bytes = 2 * 2**20
    # a word with at least this many tokens is "heavy": its counts can exceed uint16, so they live in
    # int32 rows of their own (word decomposition; lowered by the tests to exercise that path)
    _heavy_min_total = 2**16
    # the work of a (document, word) entry in tokens, for cutting the documents into the chunks of several threads:
    # ESCA computes one distribution per entry (a K-row of products and running sums for a dense word) and then
    # draws the entry's tokens from it. With chunks of equal tokens the chunk with more entries was the slower
    # one (20 Newsgroups, K = 100, two chunks run one after the other on one thread: 11% more entries in the
    # second, its sweep 7%, 25% and 8% longer in three runs; with this weight 1%, 1% and -1%; at K = 1000 11-15%
    # longer, with this weight -2% and 7%). The weight solves 55,400 more entries x w = 7% x (805,600 tokens +
    # w x 482,400 entries), the first chunk's, for a 7% longer second chunk: w = 2.6, taken as 2.5. The cut
    # changes no draw (they are keyed by document)
    _entry_weight = 2.5

    def __init__(self, n_components=100, *, doc_topic_prior=None, topic_word_prior=0.1, max_iter=100, n_jobs=None,
                 random_state=0, verbose=0, sampler="sparse_alias", decomposition="word", dense_min_topics=None,
                 init="uniform", evaluate_every=0, heldout_sweeps=20, callbacks=()):
        super().__init__(n_components, doc_topic_prior=doc_topic_prior, topic_word_prior=topic_word_prior,
                         max_iter=max_iter, n_jobs=n_jobs, random_state=random_state, verbose=verbose,
                         evaluate_every=evaluate_every, heldout_sweeps=heldout_sweeps, callbacks=callbacks)
        self.init = init
        self.sampler = sampler
        self.decomposition = decomposition
        self.dense_min_topics = dense_min_topics

    def _init_state(self, C: CorpusArrays):
        if self.sampler not in ("sparse_alias", "plain"):
            raise ValueError(f"sampler must be 'sparse_alias' or 'plain', got {self.sampler!r}")
        if self.init not in ("uniform", "prior"):
            raise ValueError(f"init must be 'uniform' (the paper's eq. 19) or 'prior' (topics from LDA's prior), "
                             f"got {self.init!r}")
        if self.decomposition not in _DECOMPOSITION:
            raise ValueError(f"decomposition must be one of {sorted(_DECOMPOSITION)}, got {self.decomposition!r}")
        K, V = int(self.n_components), C.n_words
        if K * V >= 2**62:
            raise ValueError("n_components x n_words of X is too large for int32 indexing; reduce n_components or the vocabulary")
        self._chunks = C.chunks(self.n_threads_, self._entry_weight)  # chunks of about equal work
        n_chunks = self._chunks.size - 1
        self._use_atomic = n_chunks > 1
        # compact types, chosen from bounds that no count can exceed:
        # topic ids < K; D_mk <= document length; W_kv <= the word's total count in the (global) corpus
        tdt = np.uint8 if K <= 256 else (np.int16 if K <= np.iinfo(np.int16).max else np.int32)
        max_len = int(C.doc_len.max()) if C.n_docs else 0
        cdt = np.int16 if max_len <= np.iinfo(np.int16).max else np.int32
        ndt = np.int16 if K <= np.iinfo(np.int16).max else np.int32
        # word totals bound W_kv; a shard (distributed ESCA) is given the global totals
        wtot = getattr(self, "_word_totals", None)
        if wtot is None:
            wtot = kern.col_sums(C.indices, C.cnt, V)
        self._word_mode = self.sampler == "sparse_alias" and self.decomposition == "word"
        if self._word_mode:
            # uint16 counts for every word but the heavy ones (2^16 or more tokens: a few stop words
            # in a raw corpus, more at paper scale), whose counts live in int32 rows of their own
            if not 2 <= self._heavy_min_total <= 2**16:
                raise ValueError("_heavy_min_total must lie in [2, 2^16]")
            heavy = np.flatnonzero(wtot >= self._heavy_min_total)
            wdt = np.uint16
        else:
            heavy = np.empty(0, np.int64)
            wmax = int(wtot.max()) if wtot.size else 0
            wdt = np.uint16 if wmax <= np.iinfo(np.uint16).max else np.int32
        self._heavy = heavy
        self._hslot = np.full(V, -1, np.int32)
        self._hslot[heavy] = np.arange(heavy.size, dtype=np.int32)
        self._Kp = (K + 7) // 8 * 8
        self._Wh = np.zeros(heavy.size * K, np.int32)  # write rows of the heavy words
        self._Whn = np.zeros(heavy.size * self._Kp, np.int32)  # their dense read rows
        cap = np.minimum(C.doc_len, K)
        self._dptr = np.zeros(C.n_docs + 1, np.int64)
        np.cumsum(cap, out=self._dptr[1:])
        ncap = int(self._dptr[-1])
        # ONE buffer of the sparse document-topic counts: document m's counts are read only by
        # document m, so each sweep reads them whole and overwrites them in place afterwards
        self._D = (np.zeros(ncap, tdt), np.zeros(ncap, cdt), np.zeros(C.n_docs, ndt))
        # word decomposition: ONE dense V x K count array (written by the sweep) plus the compact
        # sparse read buffer (wptr, wtop, wcoef) rebuilt from it at the start of each iteration;
        # the other samplers read a dense copy: two dense buffers, read r and write 1 - r
        self._W = [np.zeros(V * K, wdt)] if self._word_mode else [np.zeros(V * K, wdt), np.zeros(V * K, wdt)]
        # word decomposition on several chunks: chunks 1.. count into write buffers of their own (merged after the
        # sweep) where those take at most _own_buffer_bytes
        own = (self._word_mode and n_chunks > 1
               and V * K * (n_chunks - 1) * np.dtype(wdt).itemsize <= self._own_buffer_bytes)
        self._Wx = np.zeros((n_chunks - 1, V * K) if own else (0, 1), wdt)
        self._Tpriv = np.zeros((n_chunks, K), np.int64)
        self._T = np.zeros(K, np.int64)
        self._invT = np.empty(K, np.float64)
        self._s_prob = np.empty(K, np.float64)
        self._s_alias = np.empty(K, np.int32)
        self._s_work = np.empty(K, np.int32)
        self._wptr = np.zeros(V + 1, np.int64)
        self._wmass = np.zeros(V, np.float64)
        # bitmap of the nonzero counts the word sweep writes (bit k of word v's row), so that the
        # next tables visit nnz(W) counts instead of all V x K; invalid after the initialisation and
        # wherever counts are written behind the sweep's back (distributed ESCA's Allreduce)
        self._kw = (K + 63) // 64
        self._track = (self._word_mode and self._track_touched and not self._use_atomic
                       and V * K > self._track_cells_per_token * C.n_tokens)
        self._bits = np.zeros(V * self._kw if self._track else 1, np.uint64)
        self._dslot = self._Wdn = None  # dense read rows: word decomposition only
        if self._word_mode:
            # dense read rows (counts, K padded to a multiple of 8) for the words with at least
            # dense_min topics (default: _default_dense_min)
            dmin = self.dense_min_topics
            if dmin is None:
                dmin = _default_dense_min(K, self._Kp, np.dtype(wdt).itemsize, np.dtype(tdt).itemsize)
            if int(dmin) != dmin or dmin < 0:
                raise ValueError(f"dense_min_topics must be None or an integer >= 0, got {dmin!r}")
            self._dense_min = int(dmin)
            self._dslot = np.empty(V, np.int32)
            # read buffers allocated at the size the layout needs, re-allocated when it changes
            # by more than a quarter (the dense part is largest in the first iterations)
            self._Wdn = np.empty(0, wdt)
            self._wtop = np.empty(0, tdt)
            self._wcoef = np.empty(0, np.float64)
            self._wprob = self._walias = self._wwork = None
        else:
            # nnz(W) <= min(tokens, V K); a shard (distributed ESCA) sees the global W: global tokens
            wcap = int(min(getattr(self, "_table_tokens", C.n_tokens), V * K))
            self._wtop = np.empty(wcap, np.int32)
            self._wcoef = np.empty(wcap, np.float64)
            acap = wcap if self.decomposition != "word" else 1
            self._wprob = np.empty(acap, np.float64)
            self._walias = np.empty(acap, np.int32)
            self._wwork = np.empty(acap, np.int32)
        d = self._D
        kern.esca_init(C.indptr, C.indices, C.cnt, self._chunks, K, self.seed_, self._dptr, d[0], d[1], d[2],
                       self._W[0], self._Tpriv, self._hslot, self._Wh, self._doc_offset,
                       self._alpha if self.init == "prior" else 0.0, self._use_atomic)
        kern.reduce_rows(self._Tpriv, self._T)
        self._r = 0
        self._C = C

    def _iterate(self, C: CorpusArrays, it: int):
        K, V = int(self.n_components), C.n_words
        a, b = self._alpha, float(self.topic_word_prior)
        D = self._D
        if self._word_mode:
            Wd = self._W[0]
            bits, kw = self._bits, self._kw
            # the bitmap holds the counts of the previous sweep (not those of the initialisation)
            use_bits = self._track and it > 1
            Kp = self._Kp
            nnz, nd = kern.esca_word_nnz(Wd, K, V, self._wptr, bits, kw, use_bits, self._dslot, self._dense_min,
                                         self._hslot)
            if _resize(self._wtop.size, nnz):
                self._wtop = self._wcoef = None
                self._wtop = np.empty(_padded(nnz), self._D[0].dtype)
                self._wcoef = np.empty(_padded(nnz), np.float64)
            if _resize(self._Wdn.size, nd * Kp):
                dt = self._Wdn.dtype
                self._Wdn = None
                self._Wdn = np.empty(_padded(nd * Kp, Kp), dt)
            S = kern.esca_word_tables(Wd, self._T, K, V, a, b, self._invT, self._s_prob, self._s_alias,
                                      self._s_work, self._wptr, self._wtop, self._wcoef, bits, kw, use_bits,
                                      self._dslot, self._Wdn, Kp, self._Wh, self._Whn)
            kern.esca_word_sweep(C.indptr, C.indices, C.cnt, self._chunks, K, a, b, self.seed_, it,
                                 self._dptr, D[0], D[1], D[2], Wd, self._Tpriv, self._invT, self._s_prob,
                                 self._s_alias, S, self._wptr, self._wtop, self._wcoef, self._use_atomic,
                                 bits, kw, self._track, self._dslot, self._Wdn, Kp, self._Wh, self._Whn,
                                 self._doc_offset, self._Wx)
            kern.merge_write_buffers(Wd, self._Wx)
            kern.reduce_rows(self._Tpriv, self._T)
            return
        r, w = self._r, 1 - self._r
        Wr, Ww = self._W[r], self._W[w]
        kern.fill_zero(Ww)
        if self.sampler == "sparse_alias":
            S = kern.esca_tables(Wr, self._T, K, V, a, b, self._invT, self._s_prob, self._s_alias, self._s_work,
                                 self._wptr, self._wtop, self._wprob, self._walias, self._wwork, self._wmass,
                                 self._wcoef, self.decomposition != "word")
            kern.esca_sweep(C.indptr, C.indices, C.cnt, self._chunks, K, a, b, self.seed_, it,
                            self._dptr, D[0], D[1], D[2], D[0], D[1], D[2], Wr, Ww, self._Tpriv, self._invT,
                            self._s_prob, self._s_alias, S, self._wptr, self._wtop, self._wprob, self._walias,
                            self._wmass, self._wcoef, self._use_atomic, _DECOMPOSITION[self.decomposition],
                            self._doc_offset)
        else:
            self._invT[:] = 1.0 / (self._T + V * b)
            kern.sca_plain_sweep(C.indptr, C.indices, C.cnt, self._chunks, K, a, b, self.seed_, it,
                                 self._dptr, D[0], D[1], D[2], D[0], D[1], D[2], Wr, Ww, self._Tpriv,
                                 self._invT, self._use_atomic, self._doc_offset)
        kern.reduce_rows(self._Tpriv, self._T)
        self._r = w

    def _topic_counts(self) -> np.ndarray:
        K = int(self.n_components)
        out = self._W[self._r].reshape(-1, K).T.astype(np.float64)
        if self._heavy.size:
            out[:, self._heavy] = self._Wh.reshape(-1, K).T
        return out + float(self.topic_word_prior)

    @property
    def topic_counts_(self) -> np.ndarray:
        return self._T.copy()

    @property
    def doc_topic_counts_(self) -> sp.csr_matrix:
        """D_mk of the last iteration as CSR (rows = non-empty training documents)."""
        top, cnt, nnz = self._D
        rows, cols, vals = [], [], []
        for m in range(nnz.size):
            s = self._dptr[m]
            rows.append(np.full(nnz[m], m))
            cols.append(top[s:s + nnz[m]])
            vals.append(cnt[s:s + nnz[m]].astype(np.int64))
        return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols).astype(np.int64))),
                             shape=(nnz.size, int(self.n_components)))

    def state_nbytes(self) -> int:
        """Bytes of the sampler state (document-topic counts, topic-word counts, T, draw tables and
        word-bucket read buffer); excludes the corpus."""
        arrs = list(self._D) + self._W + [self._Wh, self._Whn, self._hslot, self._bits, self._Tpriv, self._T,
                                          self._invT, self._s_prob, self._s_alias, self._s_work, self._wptr,
                                          self._wtop, self._wprob, self._walias, self._wwork, self._wmass,
                                          self._wcoef, self._dptr, self._dslot, self._Wdn, self._Wx]
        return int(sum(a.nbytes for a in arrs if a is not None))


# ----------------------------------------------------------------------------------------------
# CGS
# ----------------------------------------------------------------------------------------------


class CollapsedGibbs(_LDABase):
    """Collapsed Gibbs sampler for LDA (Griffiths & Steyvers 2004; ESCA eq. 13, whose printed bracket is
    misplaced; the standard form): p(z = k | rest) propto (D_mk + alpha)(W_kv + beta)/(T_k + V beta), counts
    excluding the token. Dense O(K) draw per token: the K products in 8-lane vector code from per-document
    factors (D_mk + alpha) / (T_k + V beta) kept up to date (no division per topic), the inverse CDF by eight
    column sums and one column walk.

    Parameters
    ----------
    n_components, doc_topic_prior, topic_word_prior, max_iter, n_jobs, random_state, verbose
        As in :class:`ESCA`. With ``n_partitions`` = 1 the sweep is sequential and ``n_jobs`` serves the
        held-out evaluation only.
    n_partitions : int, default 1
        1: the sequential sweep, token after token (exact collapsed Gibbs). P >= 2: the documents are cut
        into P contiguous ranges and the vocabulary into P ranges of word ids, both of about equal token
        counts, and each sweep runs P rounds of P blocks (document range i, word range (i + s) mod P in
        round s) that share no document and no word, side by side on ``n_jobs`` threads. Within a block
        every token is drawn as in the sequential sweep, from the current document and word counts; only
        the topic totals T_k are those of the round's start plus the block's own moves (the other blocks'
        moves of the round arrive at its end): the partition scheme of parallel collapsed Gibbs for LDA
        (Yan, Xu & Qi 2009), also tomotopy's on several workers. The draws depend on P, never on
        ``n_jobs``: a fit with a given P is the same on any number of threads. P = 2 fits two threads;
        a larger P balances the blocks better at P rounds (and P thread hand-offs) a sweep.
    evaluate_every, heldout_sweeps, callbacks
        As in :class:`ESCA`.

    Attributes
    ----------
    components_ : ndarray of float64, shape (K, V)
        W_kv + beta.
    n_iter_ : int
        Iterations run: ``max_iter``, or fewer when a callback stopped the fit.
    history_ : list of dict
        Per-iteration records.
    fit_time_ : float
        Seconds of the fit, held-out evaluation and compilation excluded.
    compile_time_ : float
        Seconds the fit spent compiling its Numba kernels or loading them from the cache (the first fit in a
        process; zero once they are loaded).
    topic_assignments_ : ndarray of int16 or int32, shape (n_tokens,)
        The topic z of every token.
    """

    _name = "CGS"

    def __init__(self, n_components=100, *, doc_topic_prior=None, topic_word_prior=0.1, max_iter=100, n_jobs=None,
                 random_state=0, verbose=0, n_partitions=1, evaluate_every=0, heldout_sweeps=20, callbacks=()):
        super().__init__(n_components, doc_topic_prior=doc_topic_prior, topic_word_prior=topic_word_prior,
                         max_iter=max_iter, n_jobs=n_jobs, random_state=random_state, verbose=verbose,
                         evaluate_every=evaluate_every, heldout_sweeps=heldout_sweeps, callbacks=callbacks)
        self.n_partitions = n_partitions

    def _init_state(self, C: CorpusArrays):
        P = self.n_partitions
        if isinstance(P, (bool, np.bool_)) or not isinstance(P, (int, np.integer)) or P < 1:
            raise ValueError(f"n_partitions must be an integer >= 1 (1: the sequential sweep), got {P!r}")
        P = int(P)
        K, V = int(self.n_components), C.n_words
        # P word ranges of about equal token counts; where each document's entries of each start
        self._gptr = np.empty((C.n_docs, P + 1), np.int64)
        self._toff = np.empty((C.n_docs, P), np.int64)
        wcuts = kern.balanced_cuts(kern.col_sums(C.indices, C.cnt, V), P)
        if not kern.cgs_partition_layout(C.indptr, C.indices, C.cnt, wcuts, self._gptr, self._toff):
            raise RuntimeError("the corpus rows are not sorted by word id (check_corpus sorts them)")
        self._doc_cuts = kern.balanced_cuts(C.doc_len, P)  # exactly P ranges (C.chunks caps them at M)
        self._Tloc = np.zeros((P, K), np.int64)
        zdt = np.int16 if K <= np.iinfo(np.int16).max else np.int32
        self._z = np.empty(C.n_tokens, zdt)
        self._Dd = np.zeros((C.n_docs, K), np.int32)
        self._Wc = np.zeros(V * K, np.int32)
        self._Tc = np.zeros(K, np.int64)
        kern.cgs_init(C.indptr, C.indices, C.cnt, K, self.seed_, self._z, self._Dd, self._Wc, self._Tc)

    def _iterate(self, C: CorpusArrays, it: int):
        kern.cgs_sweep(C.indptr, C.indices, C.cnt, int(self.n_components), self._alpha, float(self.topic_word_prior),
                       C.n_words, self.seed_, it, self._z, self._Dd, self._Wc, self._Tc, self._doc_cuts, self._gptr,
                       self._toff, self._Tloc)

    def _topic_counts(self) -> np.ndarray:
        return self._Wc.reshape(-1, int(self.n_components)).T.astype(np.float64) + float(self.topic_word_prior)

    @property
    def topic_assignments_(self):
        return self._z

    def state_nbytes(self) -> int:
        return int(sum(a.nbytes for a in (self._z, self._Dd, self._Wc, self._Tc, self._gptr, self._toff, self._Tloc)))


# ----------------------------------------------------------------------------------------------
# CVB0
# ----------------------------------------------------------------------------------------------


class CVB0(_LDABase):
    """CVB0 (Asuncion et al. 2009; ESCA eq. 14): deterministic zero-order collapsed variational
    updates gamma_mnk propto (D_mk + alpha)(W_kv + beta)/(T_k + V beta) with expected counts
    excluding the token; one responsibility row gamma per (document, word) entry, shared by its
    tokens; sequential sweep (n_jobs is used by the held-out evaluation only).

    Parameters
    ----------
    n_components, doc_topic_prior, topic_word_prior, max_iter, n_jobs, random_state, verbose
        As in :class:`ESCA`.
    gamma_dtype : {"auto", "float32", "float16"}, default "auto"
        Storage of gamma: ``"auto"`` (default: float32 while its float32 responsibilities
        take at most ``AUTO_FLOAT32_BYTES`` = 8 GiB, half precision above), ``"float32"`` (4 bytes
        per (entry, topic)) or ``"float16"`` (IEEE half precision, 2 bytes). The choice depends on
        the corpus and K only, never on the machine, so a fit is the same everywhere; the storage used
        is ``gamma_dtype_`` after ``fit``. The update itself is computed in float64 either way; only
        the stored responsibilities are rounded, and D, W, T receive exactly the stored (rounded)
        values, so they always equal the sums of c x gamma over the stored rows and a token's old
        contribution is removed exactly.
    init : {"assignments", "soft"}, default "assignments"
        The start. ``"assignments"``: every (document, word) entry draws one topic uniformly and its
        row is one-hot on it (its tokens, which share the row, start together). ``"soft"``: random
        responsibilities near 1/K (gamma propto u + 0.001, u uniform; the default before 0.2). From the
        soft start the deterministic updates break the symmetry between
        topics only slowly as K grows: on 20 Newsgroups at K = 1000 (alpha = 0.05, beta = 0.1) its held-out
        log-likelihood was -8.11 after 320 sweeps, where the assignments start reached -7.97 after 8 and
        -7.90 after 40 (benchmarks/README_lda.md).
    evaluate_every, heldout_sweeps, callbacks
        As in :class:`ESCA`.

    Attributes
    ----------
    components_ : ndarray of float64, shape (K, V)
        Expected W_kv + beta.
    n_iter_ : int
        Sweeps run: ``max_iter``, or fewer when a callback stopped the fit.
    gamma_dtype_ : str
        The storage used (``"float32"`` or ``"float16"``).
    history_ : list of dict
        Per-iteration records.
    fit_time_ : float
        Seconds of the fit, held-out evaluation and compilation excluded.
    compile_time_ : float
        Seconds the fit spent compiling its Numba kernels or loading them from the cache (the first fit in a
        process; zero once they are loaded).

    Notes
    -----
    ``responsibilities()`` returns a float64 copy of gamma, for small fits.

    Why half precision for large fits: gamma is the whole memory of CVB0, nnz x K values: at K = 1000 on the
    Wikipedia stand-in's paper-scale training split (20,443 documents, 6.61M entries) 24.6 GiB in
    float32, 12.3 GiB in half; measured peak RSS 525 MiB + 12.9 MiB x K (K = 200 and 500, extrapolated:
    13.1 GiB at K = 1000). Half precision keeps 11 significant bits (relative rounding error at most
    2^-11) for responsibilities >= 2^-14, rounds smaller ones to multiples of 2^-24 and those below
    2^-25 to zero; such responsibilities carry a negligible share of the expected counts. Measured on
    real documents (Wikipedia stand-in, same process, same data, 30 sweeps, held-out per-word
    log-likelihood by document completion; benchmarks/README_lda.md): K = 100 on 2,000 documents,
    4 seeds, half - float32 = -0.0003 +- 0.0005 (mean +- sd of the paired differences), seed-to-seed
    sd 0.0034; K = 1000 on 500 documents, 3 seeds, +0.0019 +- 0.0018, seed-to-seed sd 0.0072: the
    same quality within the seed-to-seed spread. The price is time (hence float32 while it fits in
    8 GiB, which keeps every fit of the quick profile and the timings it compares in float32): a fit
    costs 1.6-1.7x the float32
    one at K = 1000, 1.7-2.5x at K = 100 (CPU time, same runs, on a loaded 2-core VM; the conversions
    are integer bit operations, no hardware half conversion). The other design considered, exact float32 rows kept on disk and
    processed by document block, would keep float32's speed per (entry, topic) but read and write
    nnz x K x 8 bytes of disk per sweep (53 GB at K = 1000); it was not needed. Numba has no float16
    on the CPU, so gamma is a uint16 array of binary16 bit patterns converted by the kernels
    (``_kernels/half.py``, checked against numpy's float16 on every pattern).

    Memory: gamma (nnz x K x 2 or 4 bytes), D (M x K float64), W (V x K float64), T. ``fit``
    refuses, before allocating, a state larger than the memory available to the process (Linux
    MemAvailable, or what its cgroup allows), naming the fixes.
    """

    _name = "CVB0"
    _GAMMA_DTYPES = {"float16": np.uint16, "float32": np.float32}  # float16: binary16 bit patterns
    AUTO_FLOAT32_BYTES = 8 * 2**30  # "auto": float32 responsibilities up to this size, half precision above

    def __init__(self, n_components=100, *, doc_topic_prior=None, topic_word_prior=0.1, max_iter=100, n_jobs=None,
                 random_state=0, verbose=0, gamma_dtype="auto", init="assignments", evaluate_every=0, heldout_sweeps=20,
                 callbacks=()):
        super().__init__(n_components, doc_topic_prior=doc_topic_prior, topic_word_prior=topic_word_prior,
                         max_iter=max_iter, n_jobs=n_jobs, random_state=random_state, verbose=verbose,
                         evaluate_every=evaluate_every, heldout_sweeps=heldout_sweeps, callbacks=callbacks)
        self.gamma_dtype = gamma_dtype
        self.init = init

    @staticmethod
    def resolve_gamma_dtype(nnz: int, n_components: int, gamma_dtype="auto") -> str:
        """The storage ``gamma_dtype`` stands for on a corpus of ``nnz`` (document, word) entries at K =
        ``n_components``: ``"auto"`` is ``"float32"`` while nnz x K x 4 bytes <= AUTO_FLOAT32_BYTES, else
        ``"float16"``."""
        if gamma_dtype == "auto":
            return "float32" if int(nnz) * int(n_components) * 4 <= CVB0.AUTO_FLOAT32_BYTES else "float16"
        if gamma_dtype not in CVB0._GAMMA_DTYPES:
            raise ValueError(f"gamma_dtype must be 'auto' or one of {sorted(CVB0._GAMMA_DTYPES)}, got {gamma_dtype!r}")
        return gamma_dtype

    @staticmethod
    def predict_state_nbytes(nnz: int, n_docs: int, n_words: int, n_components: int, gamma_dtype="auto") -> int:
        """Bytes of CVB0's state for a corpus of ``nnz`` (document, word) entries: gamma plus the
        float64 counts D (n_docs x K), W (n_words x K) and T (K)."""
        gamma_dtype = CVB0.resolve_gamma_dtype(nnz, n_components, gamma_dtype)
        item = np.dtype(CVB0._GAMMA_DTYPES[gamma_dtype]).itemsize
        return int(nnz) * int(n_components) * item + 8 * (int(n_docs) + int(n_words) + 1) * int(n_components)

    def _init_state(self, C: CorpusArrays):
        from ...utils import available_memory_bytes

        if self.init not in ("assignments", "soft"):
            raise ValueError(f"init must be 'assignments' (one random topic per (document, word) entry) or "
                             f"'soft' (random responsibilities near 1/K), got {self.init!r}")
        K, V = int(self.n_components), C.n_words
        dtype = self.gamma_dtype_ = self.resolve_gamma_dtype(C.indices.size, K, self.gamma_dtype)
        need = self.predict_state_nbytes(C.indices.size, C.n_docs, V, K, dtype)
        avail = available_memory_bytes()
        if avail is not None and need > avail:
            hint = "" if dtype == "float16" else "use gamma_dtype='float16' (half the memory), "
            raise ValueError(
                f"CVB0 at K = {K} on {C.indices.size:,} (document, word) entries needs {need / 2**30:.1f} GiB "
                f"(responsibilities gamma: nnz x K x {np.dtype(self._GAMMA_DTYPES[dtype]).itemsize} "
                f"bytes, plus the counts) but only {avail / 2**30:.1f} GiB are available; {hint}reduce K or the "
                "number of training documents, or run on a machine (or job allocation) with more memory")
        self._gamma = np.empty((C.indices.size, K), self._GAMMA_DTYPES[dtype])
        self._Dd = np.zeros((C.n_docs, K), np.float64)
        self._Wc = np.zeros(V * K, np.float64)
        self._Tc = np.zeros(K, np.float64)
        start = kern.cvb0_init_assignments if self.init == "assignments" else kern.cvb0_init
        start(C.indptr, C.indices, C.cnt, K, self.seed_, self._gamma, self._Dd, self._Wc, self._Tc)

    def _iterate(self, C: CorpusArrays, it: int):
        kern.cvb0_sweep(C.indptr, C.indices, C.cnt, int(self.n_components), self._alpha, float(self.topic_word_prior),
                        C.n_words, self._gamma, self._Dd, self._Wc, self._Tc)

    def _topic_counts(self) -> np.ndarray:
        W = np.maximum(self._Wc.reshape(-1, int(self.n_components)).T, 0.0)
        return W + float(self.topic_word_prior)

    def responsibilities(self) -> np.ndarray:
        """(nnz, K) float64 values of the stored gamma, entries in CSR order of the non-empty
        training documents (a copy: 8 bytes per (entry, topic); for small fits and tests)."""
        self._check_fitted()
        out = np.empty(self._gamma.shape, np.float64)
        kern.cvb0_gamma(self._gamma, out)
        return out

    def state_nbytes(self) -> int:
        """Bytes of the fitted state: gamma (nnz x K x 2 bytes in half precision, 4 in float32) and the
        float64 counts D, W, T."""
        return int(self._gamma.nbytes + self._Dd.nbytes + self._Wc.nbytes + self._Tc.nbytes)
