"""Config validation against the JSON schema in ``workflow/schemas`` (one file per block).

``config.schema.yaml`` holds the top-level keys and refers to one schema file per paper
(``vmf.schema.yaml`` ...) through ``$ref``. :func:`validate_config` checks a config dict, fills in
defaults and raises :class:`ConfigError` naming the offending key and the fix.

Two rules hold for every key beyond what its schema states (JSON schema cannot express them):

* every number is finite: YAML's ``.nan`` and ``.inf`` satisfy ``type: number`` and every bound
  (``nan > 0`` is false, so ``exclusiveMinimum`` never fires), so :func:`non_finite_keys` walks the
  validated config and each NaN or infinity is reported with its key path;
* a schema node that refers to a shared definition (``$ref``) may carry its own ``default`` beside the
  reference; that default wins over the definition's.

Rules that tie several keys together (a grid that must be a multiple of a bin count) are a paper's
business: its rule file checks them when the config is read and reports them through
:func:`config_error`, in the same format.

A replication of a whole run (its own seeds, the same code and settings) is the same config with
``seed_offset: K``: :func:`apply_seed_offset` moves every seed key of the validated config by K (a key
named ``seed``, ``seeds`` or ``<something>_seed``, anywhere in the config), :func:`seed_range` turns a
count ``n_seeds`` into the seeds K .. K + n - 1, and :func:`with_seed_offset` hands K to the jobs whose
code draws from a fixed seed of its own (a document subsample, a data split). With K = 0 all three
return what they were given, so no job of the default run changes. ``config/README.md`` ("Replications")
lists every seed of the pipeline and whether it moves.
"""

from __future__ import annotations

import copy
import logging
import math
import re
from pathlib import Path
from typing import Any

import yaml

logger = logging.getLogger(__name__)


class ConfigError(ValueError):
    """A config value is unknown, missing or of the wrong type."""


def _load_yaml(path: Path) -> Any:
    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def load_schema_registry(schema_dir: str | Path):
    """Return (root_schema, registry) with every ``*.schema.yaml`` in ``schema_dir`` registered by file name."""
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    schema_dir = Path(schema_dir)
    resources = []
    for p in sorted(schema_dir.glob("*.schema.yaml")):
        resources.append((p.name, Resource.from_contents(_load_yaml(p), default_specification=DRAFT202012)))
    registry = Registry().with_resources(resources)
    root = _load_yaml(schema_dir / "config.schema.yaml")
    return root, registry


def _fill_defaults(instance: Any, schema: dict, resolver) -> None:
    """Insert ``default`` values of (possibly $ref'd) object schemas into ``instance`` in place."""
    if "$ref" in schema:
        resolved = resolver.lookup(schema["$ref"])
        schema, resolver = resolved.contents, resolved.resolver
    if not isinstance(instance, dict) or schema.get("type") != "object":
        return
    for key, sub in schema.get("properties", {}).items():
        sub_resolver = resolver
        if "$ref" in sub:
            own = sub  # a default beside the $ref is this key's own and wins over the shared definition's
            resolved = resolver.lookup(sub["$ref"])
            sub, sub_resolver = resolved.contents, resolved.resolver
            if "default" in own:
                sub = {**sub, "default": own["default"]}
        if key not in instance and "default" in sub:
            instance[key] = copy.deepcopy(sub["default"])
        if key in instance:
            _fill_defaults(instance[key], sub, sub_resolver)


def non_finite_keys(config: Any, path: str = "") -> list[tuple[str, float]]:
    """(key path, value) of every NaN or infinite float in ``config`` (nested dicts and lists).

    A list element is named by its index: ``scir.simplex.proportions.2``.
    """
    found: list[tuple[str, float]] = []
    if isinstance(config, dict):
        for k, v in config.items():
            found += non_finite_keys(v, f"{path}.{k}" if path else str(k))
    elif isinstance(config, (list, tuple)):
        for i, v in enumerate(config):
            found += non_finite_keys(v, f"{path}.{i}" if path else str(i))
    elif isinstance(config, float) and not math.isfinite(config):
        found.append((path or "<top level>", config))
    return found


def config_error(problems: list[tuple[str, str]], schema_dir: str | Path | None = None) -> ConfigError:
    """A :class:`ConfigError` listing ``(key path, what is wrong)`` pairs, one line each, and the fix.

    Parameters
    ----------
    problems
        ``[("sggmc.fig4.grid", "401 is not a multiple of hist_bins (50)"), ...]``.
    schema_dir
        Directory of the schemas, named in the message (where each key's type and default are).
    """
    lines = [f"  - config key '{where}': {what}" for where, what in problems]
    schemas = f"{Path(schema_dir) / 'config.schema.yaml'}" if schema_dir is not None else "workflow/schemas/"
    return ConfigError(
        "invalid configuration:\n"
        + "\n".join(lines)
        + "\nFix the key(s) above in your config file (see config/README.md and "
        + f"{schemas} for every key, its type and default)."
    )


def validate_config(config: dict, schema_dir: str | Path) -> dict:
    """Validate ``config`` against the schemas in ``schema_dir``; return it with defaults filled in.

    Besides the schema, every number must be finite (:func:`non_finite_keys`): a NaN or infinity in a
    step size or a concentration would otherwise run and write NaN results without an error.

    Raises
    ------
    ConfigError
        naming every offending key path (``vmf.n_inits``), what was wrong and where the key is documented.
    """
    from jsonschema import Draft202012Validator

    root, registry = load_schema_registry(schema_dir)
    config = copy.deepcopy(config) if config is not None else {}
    _fill_defaults(config, root, registry.resolver(base_uri="config.schema.yaml"))
    validator = Draft202012Validator(root, registry=registry)
    problems = [(".".join(str(p) for p in e.absolute_path) or "<top level>", e.message)
                for e in validator.iter_errors(config)]
    problems += [(where, f"{value!r} is not a finite number; give a finite value (YAML's .nan and .inf are "
                         "not valid settings)") for where, value in non_finite_keys(config)]
    if problems:
        raise config_error(sorted(problems, key=lambda p: p[0].split(".")), schema_dir)
    return config


# ---- Replications: every seed of a run moved by seed_offset ---------------------------------------

#: Config key of the shift (top level; integer >= 0, default 0).
SEED_OFFSET_KEY = "seed_offset"
#: Largest seed a generator takes (``scalable_bayes.rng.MAX_SEED``, the schema's ``$defs.seed.maximum``).
MAX_SEED = 2**63 - 1
_SEED_KEY = re.compile(r"(?:\w+_)?seeds?")


def is_seed_key(name: str) -> bool:
    """Is the config key ``name`` a seed or a list of seeds (``seed``, ``seeds``, ``data_seed``, ...)?

    Not the counts ``n_seeds`` (seeds 0 .. n - 1: :func:`seed_range`) and not ``seed_offset`` itself.
    """
    return bool(_SEED_KEY.fullmatch(str(name))) and not str(name).startswith("n_")


def seed_keys(config: Any, path: str = "") -> list[tuple[str, Any]]:
    """(key path, value) of every seed key in ``config`` (:func:`is_seed_key`), nested dicts included.

    A seed key's value is an int, a list of ints, or null (left as it is)."""
    found: list[tuple[str, Any]] = []
    if isinstance(config, dict):
        for k, v in config.items():
            where = f"{path}.{k}" if path else str(k)
            if is_seed_key(k):
                found.append((where, v))
            else:
                found += seed_keys(v, where)
    return found


def _shift(value: Any, offset: int, where: str, problems: list[tuple[str, str]]) -> Any:
    if isinstance(value, list):
        return [_shift(v, offset, f"{where}.{i}", problems) for i, v in enumerate(value)]
    if isinstance(value, bool) or not isinstance(value, int):
        return value  # null (the key's own default applies) or a type the schema has already refused
    if value + offset > MAX_SEED:
        problems.append((where, f"{value} + {SEED_OFFSET_KEY} {offset} = {value + offset} exceeds the largest seed "
                                f"2**63 - 1; choose a smaller {SEED_OFFSET_KEY}"))
    return value + offset


def apply_seed_offset(config: dict) -> dict:
    """The validated ``config`` with every seed key moved by its ``seed_offset`` (a replication of the run).

    Every key :func:`is_seed_key` names, at any depth, gets ``seed_offset`` added to its value (each element
    of a list); the counts ``n_seeds`` stay counts (the rules draw their seeds from :func:`seed_range`).
    With ``seed_offset`` 0 or absent ``config`` is returned as it is, so the default run's jobs do not change.

    Parameters
    ----------
    config : dict
        A config validated by :func:`validate_config` (defaults filled in, so a seed key the schema fills in
        moves as well).

    Returns
    -------
    dict
        ``config`` itself at offset 0, else a deep copy with the seeds moved.

    Raises
    ------
    ConfigError
        naming each seed that the offset would move past 2**63 - 1.
    """
    offset = int(config.get(SEED_OFFSET_KEY, 0) or 0)
    if offset == 0:
        return config
    if offset < 0:
        raise config_error([(SEED_OFFSET_KEY, f"{offset} is less than 0")])
    config = copy.deepcopy(config)
    problems: list[tuple[str, str]] = []

    def walk(node, path):
        if isinstance(node, dict):
            for k, v in node.items():
                where = f"{path}.{k}" if path else str(k)
                if is_seed_key(k):
                    node[k] = _shift(v, offset, where, problems)
                else:
                    walk(v, where)

    walk(config, "")
    if problems:
        raise config_error(problems)
    return config


def seed_range(n: int, offset: int = 0) -> range:
    """The seeds of a count ``n_seeds`` in a run with ``seed_offset`` ``offset``: offset .. offset + n - 1."""
    return range(int(offset), int(offset) + int(n))


def with_seed_offset(settings: dict, offset: int = 0) -> dict:
    """A job's ``settings`` plus ``{"seed_offset": offset}`` when ``offset`` is not 0; ``settings`` itself at 0.

    For the jobs whose code draws from a fixed seed of its own (the ESCA document subsamples, the SGNHT data
    splits, ...): the code adds ``settings.get("seed_offset", 0)`` to that seed. At 0 the key is left out, so
    the default run's job params stay as they were.
    """
    return {**settings, SEED_OFFSET_KEY: int(offset)} if offset else settings
