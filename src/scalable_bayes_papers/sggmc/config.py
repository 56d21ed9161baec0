"""Rules between keys of the ``sggmc`` config block that its JSON schema cannot state.

``workflow/rules/functions/sggmc.smk`` calls :func:`check_config` when the config is read, so a bad
combination stops before any job is scheduled (and not in the figure rule after every run). Kept apart from
``runs`` so that reading the config does not import the samplers.
"""

from __future__ import annotations

from scalable_bayes_papers.config import config_error


def check_config(block: dict) -> None:
    """Check the ``sggmc`` config block (schema-validated, defaults filled) for what its schema cannot say.

    ``fig4.grid`` must be a multiple of ``fig4.hist_bins``: the claim sums the grid's cells into the
    histogram's (:func:`scalable_bayes_papers.sggmc.claims.truth_bin_masses`), which otherwise fails only
    after every Fig. 4 run.

    Raises
    ------
    scalable_bayes_papers.config.ConfigError
        naming the key and the values that would fit.
    """
    problems = []
    f4 = block.get("fig4", {})
    g, h = f4.get("grid"), f4.get("hist_bins")
    if isinstance(g, int) and isinstance(h, int) and h > 0 and g % h:
        lo, hi = (g // h) * h, (g // h + 1) * h
        near = " or ".join(str(v) for v in (lo, hi) if v >= 10)
        problems.append(("sggmc.fig4.grid", f"{g} is not a multiple of sggmc.fig4.hist_bins ({h}); the grid's cells "
                                            f"are summed into the histogram's, so set grid to a multiple of it "
                                            f"(e.g. {near}) or change hist_bins"))
    if problems:
        raise config_error(problems)
