"""scalable_bayes_papers: the experiments of the five reproduced papers, one sub-package per paper.

The library (:mod:`scalable_bayes`) holds every reusable algorithm and knows no paper; this package
holds what only one paper needs. Each paper's folder answers "where is Fig. N computed, drawn and
checked?" on its own:

``runs``
    config dict -> tidy ``pandas.DataFrame`` (one row per method x seed x checkpoint): what the
    compute rules call. Runs compose library samplers, models and estimators; they hold no algorithm.
``claims``
    per item the paper's claim, the paper's value and a pure ``check_<item>(...) -> Claim``
    (:class:`scalable_bayes.reporting.Claim`); no I/O, no plotting.
``figures`` / ``tables``
    DataFrame -> figure file / table, nothing else.
``data`` (where the paper needs one)
    the paper's stand-in data choices (splits, subsets) built on :mod:`scalable_bayes.corpora`.
``README.md``
    what the paper leaves open, the choice made here and why, and the stand-in data.

The pipeline's rules live in ``workflow/rules/<paper>.smk``; its scripts in ``workflow/scripts/`` are
adapters of a few lines that call one function here. Nothing in :mod:`scalable_bayes` imports this
package (``tests/test_architecture.py`` checks it).
"""
