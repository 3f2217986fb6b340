"""``vis.mcp_server(name, config)``: an MCP server an extension adds for the session."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_NAME = re.compile(r"^[A-Za-z0-9_-]+$")


@dataclass(frozen=True)
class McpServer:
    """An ``mcpServers`` entry declared by an extension; a file entry of the same name wins."""

    name: str
    config: Mapping[str, Any] = field(compare=False)


def mcp_server(name: str, config: Mapping[str, Any]) -> McpServer:
    """Add an MCP server: called in an entry file, for the extension it registers (also
    when the result is not put in ``Extension(mcp_servers=[...])``); called while Vis runs
    your code, to the running sessions at once. ``config`` has the shape of an
    ``mcpServers`` entry: ``command``/``args``/``env``/``cwd`` or ``url``/``headers``, and
    ``timeout``, ``enabled``, ``exposure``, ``toolExposure``, ``description``."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(
            f"vis.mcp_server name {name!r} may contain only letters, digits, '_' and '-'"
        )
    if not isinstance(config, Mapping) or not ("command" in config or "url" in config):
        raise ValueError(
            f"vis.mcp_server({name!r}, config): config must be an mcpServers entry with a "
            "'command' (stdio) or a 'url' (streamable HTTP)"
        )
    declared = McpServer(name, dict(config))
    _register_now(declared)
    return declared


def _register_now(declared: McpServer) -> None:
    from vis_core.extension.acting import current_extension
    from vis_core.extension.context import current_call
    from vis_core.extension.declarations import loading_registration
    from vis_core.extension.runtime import current_runtime

    registration = loading_registration()
    if registration is not None:  # in an entry file: the extension it registers declares it
        registration.mcp_servers.append(declared)
        return
    call = current_call()
    if call is None:
        return  # outside Vis (a test imports the entry file): the caller keeps it
    current_runtime().register_mcp_server(current_extension() or call.owner, declared)
