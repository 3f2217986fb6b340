"""Declared ``env`` names: the project's ``environment:`` block, ``.env.local``, ``.env``, then
the environment that started Vis."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

PROJECT_FILE = "vis.yml"
DOTENV_FILES = (".env", ".env.local")  # later files win
_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}


class ProjectEnvironmentError(ValueError):
    """The project's ``vis.yml`` ``environment:`` block cannot be read."""


def _unquote(raw: str) -> str:
    """A value: quoted (up to its closing quote, then an optional comment) or bare."""
    if raw[:1] == "'":
        close = raw.find("'", 1)
        if close > 0:
            return raw[1:close]
    if raw[:1] == '"':
        match = re.match(r'"((?:[^"\\]|\\.)*)"', raw)
        if match:
            return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), "\\" + m.group(1)),
                          match.group(1))
    comment = re.search(r"\s#", raw)
    return (raw[: comment.start()] if comment else raw).strip()


def read_dotenv(path: Path) -> dict[str, str]:
    """``NAME=value`` lines of a ``.env`` file (``export``, quotes and ``#`` comments allowed)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    values: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _LINE.match(line)
        if match is None:
            log.warning("%s:%d is not NAME=value; the line is skipped", path, number)
            continue
        values[match.group(1)] = _unquote(match.group(2))
    return values


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def read_environment_block(project_root: Path) -> dict[str, str]:
    """The ``environment:`` mapping of ``project_root/vis.yml`` (empty when absent)."""
    path = Path(project_root) / PROJECT_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    import yaml

    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ProjectEnvironmentError(f"{path} is not valid YAML: {exc}") from None
    block = data.get("environment") if isinstance(data, dict) else None
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
            values[name] = _text(value)
    return values


def project_environment(project_root: Path) -> dict[str, str]:
    """What the project defines: ``.env``, then ``.env.local``, then ``vis.yml`` (later wins)."""
    root = Path(project_root)
    values: dict[str, str] = {}
    for name in DOTENV_FILES:
        values.update(read_dotenv(root / name))
    try:
        values.update(read_environment_block(root))
    except ProjectEnvironmentError as exc:
        log.error("%s; its environment block is ignored", exc)
    return values


def extension_environment(
    project_root: Path | None, *, trusted: bool, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The values declared ``env`` names resolve to, for the loader's ``environment=``.

    A name resolves through the project's ``environment:`` block, then ``.env.local``, then
    ``.env``, then ``base`` (the environment that started Vis). Project files count only in a
    trusted project, so an untrusted checkout cannot redirect an extension's settings.
    """
    values = dict(os.environ if base is None else base)
    if project_root is not None and trusted:
        values.update(project_environment(project_root))
    return values


def resolve_names(names: tuple[str, ...], environment: Mapping[str, str]) -> dict[str, str]:
    """The declared ``names`` that resolve; undeclared and unresolved names are absent."""
    return {name: environment[name] for name in names if name in environment}
