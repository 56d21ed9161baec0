"""Tables of the SGGMC paper (Liu, Zhu & Song, NIPS 2016): Table 1 rendered from its spec in :mod:`.static`."""

from __future__ import annotations

import pandas as pd

from .static import TAB1_SPEC


def tab1() -> pd.DataFrame:
    """SGGMC-Tab1 (Sec. 1): a summary of some D-MCMCs; the footnotes are in ``TAB1_SPEC['notes']``."""
    return pd.DataFrame(TAB1_SPEC["rows"], columns=TAB1_SPEC["columns"])


STATIC_TABLES = {"Tab1": tab1}
