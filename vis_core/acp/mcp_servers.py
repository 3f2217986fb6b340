"""The MCP servers an editor passes with ``session/new``, ``load`` and ``resume``, as Vis's own."""

from __future__ import annotations

import re
from typing import Any

from vis_core.frontend import ConfigProblem, ServerConfig, Transport, parse_entry
from vis_core.frontend import McpSource as Source

ORIGIN = "the editor (ACP)"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def server_name(name: str) -> str:
    """An editor's display name (``GitHub Tools``) as a server name (``GitHub_Tools``)."""
    return _UNSAFE.sub("_", name).strip("_") or "editor"


def client_servers(declared: list[Any] | None) -> tuple[list[ServerConfig], list[ConfigProblem]]:
    """Each entry as a server (stdio, http or sse), or the problem that skips it: its values
    are used as the editor gave them (never expanded)."""
    servers: list[ServerConfig] = []
    problems: list[ConfigProblem] = []
    for entry in declared or ():
        raw_name = str(getattr(entry, "name", "") or "")
        name = server_name(raw_name)
        kind = getattr(entry, "type", None) or "stdio"
        try:
            servers.append(_server(name, kind, entry))
        except ValueError as exc:
            problems.append(ConfigProblem(ORIGIN, raw_name or name, str(exc)))
    return servers, problems


def _server(name: str, kind: str, entry: Any) -> ServerConfig:
    if kind == "stdio":
        raw: dict[str, Any] = {
            "command": entry.command,
            "args": list(entry.args),
            "env": {v.name: v.value for v in entry.env},
        }
    elif kind in ("http", "sse"):
        raw = {"url": entry.url, "headers": {h.name: h.value for h in entry.headers}}
    else:
        raise ValueError(f"Vis cannot reach {kind!r} MCP servers; it takes stdio, http and sse")
    server = parse_entry(name, raw, source=Source.CLIENT, origin=ORIGIN)
    if kind == "sse":
        from dataclasses import replace

        server = replace(server, transport=Transport.SSE)
    return server
