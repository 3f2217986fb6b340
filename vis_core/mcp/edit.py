"""Change one ``mcpServers`` entry of an ``mcp.json`` without touching anything else in it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vis_core.mcp.config import read_json, server_key
from vis_core.system.files import atomic_write


class EditError(Exception):
    """The file cannot be changed as asked (unreadable, or the entry is missing/present)."""


def _load(path: Path) -> dict[str, Any]:
    try:
        data = read_json(path)
    except ValueError as exc:
        raise EditError(f"{path}: {exc}; fix it by hand first") from None
    data = {} if data is None else data
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise EditError(f"{path}: 'mcpServers' is not an object; fix it by hand first")
    return data


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    atomic_write(path, text.encode("utf-8"), mode=None)  # created 0600


def _find(servers: dict[str, Any], name: str) -> str | None:
    key = server_key(name)
    return next((existing for existing in servers if server_key(existing) == key), None)


def add_server(path: Path, name: str, entry: dict[str, Any]) -> None:
    data = _load(path)
    servers = data["mcpServers"]
    existing = _find(servers, name)
    if existing is not None:
        raise EditError(
            f"{path} already defines server {existing!r}; run `vis mcp remove {existing}` first"
        )
    servers[name] = entry
    _write(path, data)


def remove_server(path: Path, name: str) -> str:
    """Remove the entry; returns the name as the file spelled it."""
    data = _load(path)
    servers = data["mcpServers"]
    existing = _find(servers, name)
    if existing is None:
        raise EditError(f"{path} defines no server {name!r}")
    del servers[existing]
    _write(path, data)
    return existing


def set_field(path: Path, name: str, field: str, value: Any) -> None:
    """Set (``value`` not None) or drop one field of an existing entry, e.g. ``enabled``."""
    data = _load(path)
    servers = data["mcpServers"]
    existing = _find(servers, name)
    if existing is None or not isinstance(servers[existing], dict):
        raise EditError(f"{path} no longer defines server {name!r}")
    if value is None:
        servers[existing].pop(field, None)
    else:
        servers[existing][field] = value
    _write(path, data)
