"""Rules build_movielens / build_mnist: the non-text data sets as one file each."""
from pathlib import Path

import numpy as np

from scalable_bayes.corpora.build import build_mnist, build_movielens
from scalable_bayes.utils import atomic_path, save_table, setup_logging

setup_logging(snakemake.log[0])
raw = {name: Path(path) for name, path in snakemake.input.items() if name != "code"}
out = Path(snakemake.output[0])
if "movielens_100k" in raw:
    save_table(build_movielens(raw), out)
else:
    arrays = build_mnist(raw)
    with atomic_path(out) as tmp:
        with open(tmp, "wb") as fh:
            np.savez_compressed(fh, **arrays)
