"""Optional dependencies: what ``pip install scalable_bayes`` leaves out, and the error that says how to add it.

The library's core needs numpy, scipy, numba, scikit-learn, threadpoolctl and tqdm (``pyproject.toml``,
``[project] dependencies``). Modules that serve the pipeline (data sets, claims, plots) or talk to MPI
import their extra packages through :func:`require`, so that importing them without the extra fails at
once with the command that installs it.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["EXTRAS", "require"]

# import name -> (distribution name, the extra of scalable_bayes that installs it)
EXTRAS = {
    "pandas": ("pandas", "pipeline"),
    "pyarrow": ("pyarrow", "pipeline"),
    "matplotlib": ("matplotlib", "pipeline"),
    "yaml": ("pyyaml", "pipeline"),
    "jsonschema": ("jsonschema", "pipeline"),
    "arviz": ("arviz", "pipeline"),
    "mpi4py": ("mpi4py", "mpi"),
    "tomotopy": ("tomotopy", "peers"),
}


def require(module: str, feature: str) -> ModuleType:
    """Import ``module`` or fail with the pip command that installs it.

    Parameters
    ----------
    module : str
        Import name, e.g. ``"pandas"`` or ``"matplotlib.pyplot"``; its top-level package must be in
        :data:`EXTRAS`.
    feature : str
        What needs it, in words (``"scalable_bayes.corpora"``), for the message.

    Returns
    -------
    module
        The imported module.

    Raises
    ------
    ImportError
        Naming the missing package and ``pip install 'scalable_bayes[<extra>]'``.
    """
    top = module.split(".")[0]
    dist, extra = EXTRAS[top]
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{feature} needs {dist}, which a plain `pip install scalable_bayes` does not install; "
            f"install it with: pip install 'scalable_bayes[{extra}]' (or pip install {dist})") from exc
