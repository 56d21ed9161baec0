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
"""

from __future__ import annotations

import copy
import logging
import math
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
