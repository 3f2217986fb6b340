"""Extension environment: the project's ``environment:`` block, ``.env``, ``.env.local``, then
the environment that started Vis (the first that defines a name wins)."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vis_core.extension.declarations import ExtensionEnvironment
from vis_core.paths import ControlSnapshot, take_snapshot

log = logging.getLogger(__name__)

PROJECT_FILE = "vis.yml"
DOTENV_FILES = (".env", ".env.local")  # in lookup order: the first that defines a name wins


class ProjectEnvironmentError(ValueError):
    """The project's ``vis.yml`` ``environment:`` block cannot be read."""


def read_dotenv(data: bytes | None) -> dict[str, str]:
    """``NAME=value`` lines of a ``.env`` file's bytes (None: absent), read by python-dotenv
    (``export``, quotes and ``#`` comments allowed; a line it cannot read is logged and
    skipped). ``${NAME}`` is kept as written: a project value never pulls in the environment
    that started Vis."""
    if data is None:
        return {}
    import io

    from dotenv import dotenv_values

    text = data.decode("utf-8", "replace")
    values = dotenv_values(stream=io.StringIO(text), interpolate=False)
    return {name: value for name, value in values.items() if value is not None}


def value_text(value: Any) -> str:
    """A plain value as text: a bool as YAML and TOML write it (``true``), else ``str``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def read_environment_block(project_root: Path, data: bytes | None) -> dict[str, str]:
    """The ``environment:`` mapping of ``project_root/vis.yml`` from its bytes (None: absent,
    the mapping is empty)."""
    path = Path(project_root) / PROJECT_FILE
    if data is None:
        return {}
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProjectEnvironmentError(f"{path} is not UTF-8 text ({exc})") from None
    import yaml

    from vis_core.small_files import load_yaml

    try:
        parsed = load_yaml(text) or {}
    except RecursionError:
        raise ProjectEnvironmentError(f"{path} nests too deeply for Vis to read") from None
    except yaml.YAMLError as exc:
        raise ProjectEnvironmentError(f"{path} is not valid YAML: {exc}") from None
    block = parsed.get("environment") if isinstance(parsed, dict) else None
    if block is None:
        return {}
    if not isinstance(block, dict):
        raise ProjectEnvironmentError(
            f"{path}: 'environment:' must map names to values, such as 'ACME_URL: https://…'"
        )
    values: dict[str, str] = {}
    for name, value in block.items():
        if not isinstance(name, str) or isinstance(value, dict | list):
            raise ProjectEnvironmentError(
                f"{path}: environment entry {name!r} must be a NAME: value pair with a plain value"
            )
        if value is not None:
            values[name] = value_text(value)
    return values


def project_environment(
    project_root: Path, snapshot: ControlSnapshot | None = None
) -> dict[str, str]:
    """What the project defines: its ``environment:`` block, then ``.env``, then ``.env.local``,
    as ``snapshot`` read them (the control files read once and checked against the trust list;
    read now without one).

    The first source that defines a name wins, as the Extension API lists them.
    """
    root = Path(project_root)
    snapshot = snapshot or take_snapshot(root, hashed=False)
    sources: list[dict[str, str]] = []
    try:
        sources.append(read_environment_block(root, _bytes(snapshot, PROJECT_FILE)))
    except ProjectEnvironmentError as exc:
        log.error("%s; its environment block is ignored", exc)
    sources.extend(read_dotenv(_bytes(snapshot, name)) for name in DOTENV_FILES)
    values: dict[str, str] = {}
    for source in sources:
        for name, value in source.items():
            values.setdefault(name, value)
    return values


def _bytes(snapshot: ControlSnapshot, relative: str) -> bytes | None:
    try:
        return snapshot.read(relative)
    except OSError as exc:
        log.error("%s; it is ignored", exc)
        return None


def extension_environment(
    project_root: Path | None,
    *,
    trusted: bool,
    base: Mapping[str, str] | None = None,
    snapshot: ControlSnapshot | None = None,
) -> ExtensionEnvironment:
    """The values ``env`` names resolve to, for the loader's ``environment=``.

    A name resolves through the project's ``environment:`` block, then ``.env``, then
    ``.env.local``, then ``base`` (the environment that started Vis). Project files count only
    in a trusted project, so an untrusted checkout cannot redirect an extension's settings.
    """
    values = ExtensionEnvironment(os.environ if base is None else base)
    if project_root is not None and trusted:
        defined = project_environment(project_root, snapshot)
        values.update(defined)
        values.project_names = frozenset(defined)
    return values


def resolve_names(names: tuple[str, ...], environment: Mapping[str, str]) -> dict[str, str]:
    """The declared ``names`` that resolve; undeclared and unresolved names are absent."""
    return {name: environment[name] for name in names if name in environment}
