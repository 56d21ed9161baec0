"""Config validation against the JSON schema in ``workflow/schemas`` (one file per block).

``config.schema.yaml`` holds the top-level keys and refers to one schema file per paper
(``vmf.schema.yaml`` ...) through ``$ref``. :func:`validate_config` checks a config dict, fills in
defaults and raises :class:`ConfigError` naming the offending key and the fix.
"""

from __future__ import annotations

import copy
import logging
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
            resolved = resolver.lookup(sub["$ref"])
            sub, sub_resolver = resolved.contents, resolved.resolver
        if key not in instance and "default" in sub:
            instance[key] = copy.deepcopy(sub["default"])
        if key in instance:
            _fill_defaults(instance[key], sub, sub_resolver)


def validate_config(config: dict, schema_dir: str | Path) -> dict:
    """Validate ``config`` against the schemas in ``schema_dir``; return it with defaults filled in.

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
    errors = sorted(validator.iter_errors(config), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        lines = []
        for e in errors:
            where = ".".join(str(p) for p in e.absolute_path) or "<top level>"
            lines.append(f"  - config key '{where}': {e.message}")
        raise ConfigError(
            "invalid configuration:\n"
            + "\n".join(lines)
            + "\nFix the key(s) above in your config file (see config/README.md and "
            + f"{Path(schema_dir) / 'config.schema.yaml'} for every key, its type and default)."
        )
    return config
